#!/bin/sh
# The WebUI's daemon-wide pages in a real browser (Debian's chromium driven by playwright-core
# from build/node, tests/web/webui-admin.mjs) against the daemon with the sim plugin: the
# providers page lists sim; a user and an API token are created through the forms, the
# token's secret shown once (not in the URL, gone on reload, Cache-Control: no-store) and
# nowhere in the daemon's log or database; the new user logs in and the audit log filtered by
# that user shows the login; a backup is created and its manifest downloaded; revoking and
# deleting go through confirmations; a view user finds none of the admin controls and forged
# POSTs are refused (403); a user is disabled and enabled (the last admin's refusal beside the
# control); a token's expiry is a lifetime or a date (bad ones refused beside the field); every
# page behind a Home Assistant style ingress proxy keeps its URLs under the prefix, allows
# framing, and a token and a backup are made through it; axe-core finds no WCAG A/AA
# violation on any new page. Every page is saved as a screenshot at 1280 and 360 pixels under
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
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
start_webui_daemon

run_browser webui-admin.mjs 80 WEBUI_SECRET_FILE="$WORK/secret"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
# The token's secret: shown once on its page, and nowhere else.
SECRET=$(cat "$WORK/secret" 2>/dev/null || true)
expect_match "the browser saw a token's secret" '^rzt_' "$SECRET"
if [ -n "$SECRET" ]; then
	found=""
	for f in "$WORK/daemon.log" "$WORK/daemon.log.stdout" "$WORK/node.out" "$WORK"/data/rezus.db*; do
		[ -f "$f" ] && grep -qaF -- "$SECRET" "$f" && found="$found $f"
	done
	expect_eq "the secret is in no log, no audit row and nowhere in the database" "" "$found"
fi
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
