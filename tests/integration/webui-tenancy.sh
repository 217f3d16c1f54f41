#!/bin/sh
# The WebUI under per-tenant access in a real browser (Debian's chromium driven by
# playwright-core from build/node, tests/web/webui-tenancy.mjs) against the daemon with the sim
# plugin: an admin binds users (role none) to tenant a1 on the Access page; the bound editor
# sees a1 only and edits it, is refused a2 and the admin pages; the bound viewer has no edit
# control and its forged post is refused; My account makes and revokes the user's own API
# token (the API's ceiling shown beside the role) and changes its password; a deleted binding
# takes the tenant away on the next page. axe-core on every new page; screenshots at 1280 and
# 360 pixels under $top_builddir/webui-screenshots.
. "${top_srcdir:-.}/tests/integration/lib.sh"

browser_prereqs
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 200ms
  workers: 2
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 500}
CONF
start_webui_daemon

run_browser webui-tenancy.mjs 300
expect_eq "no password in the daemon's log" "0" \
	"$(grep -c -e alice-password-1 -e alice-password-2 -e webui-tenancy-admin-1 "$WORK/daemon.log" || true)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
