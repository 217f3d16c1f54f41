#!/bin/sh
# The WebUI in a real browser (Debian's chromium driven by playwright-core from build/node,
# tests/web/webui.mjs) against the daemon with the sim plugin and a real terraform: the
# first login changes the one-time password (two new passwords that differ, and one the API
# refuses, named at their fields first); the dashboard before the first tenant, a 404 page
# and a tenant the API refuses (422); the open tenants list shows a tenant made through the
# API and its phase change live; a tenant and a node group are created through the forms;
# Tab reaches every control of the node groups tab in document order, each with a focus
# ring; the run's log and the machines reaching Running arrive live, without a reload; a
# node group is scaled up, then down: its destroying plan waits for approval, and while it
# waits a view user finds no mutating control on any page (the run's included), no audit on
# the dashboard, and a forged POST (no or a wrong CSRF token) refused; the dashboard's
# panels say what the API says; the waiting run is canceled through its page; the node
# group is deleted through its confirmation, whose destroying plan is approved after its
# resource list is read, and its machines go; a 422's causes show next to their fields; the
# same flow behind a Home Assistant style ingress proxy (X-Ingress-Path from a trusted
# proxy), with its scale down approved and forged POSTs refused, keeps every URL under the
# prefix; axe-core finds no WCAG A/AA violation on any page at 1280 and at 360 pixels, where
# no page scrolls sideways. Every page is saved as a screenshot at 1280 and 360 pixels under
# $top_builddir/webui-screenshots.
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
  stable_interval: 1s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
start_webui_daemon

run_browser webui.mjs 300
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly with live streams open" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
