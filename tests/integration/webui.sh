#!/bin/sh
# The WebUI in a real browser (Debian's chromium driven by playwright-core from build/node,
# tests/web/webui.mjs) against the daemon with the sim plugin and a real terraform: the
# first login changes the one-time password; a tenant and a node group are created through
# the forms; the run's log and the machines reaching Running arrive live, without a reload;
# a node group is scaled up, then down through an approved destroying plan whose resource
# list the run page shows; a 422's causes show next to their fields; a view user finds no
# mutating control and a forged POST (no or a wrong CSRF token) is refused; the same flow
# behind a Home Assistant style ingress proxy (X-Ingress-Path from a trusted proxy) keeps
# every URL under the prefix; axe-core finds no WCAG A/AA violation on any page. Every page
# is saved as a screenshot at 1280 and 360 pixels under $top_builddir/webui-screenshots.
. "${top_srcdir:-.}/tests/integration/lib.sh"

browser_prereqs
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  trusted_proxies: [127.0.0.1]
tofu:
  binary: $TF
  debounce: 200ms
  workers: 2
  destroy_approval: true
observe:
  interval: 1s
  fast_interval: 1s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
start_webui_daemon

run_browser webui.mjs 85
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly with live streams open" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
