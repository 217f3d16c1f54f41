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

NODE_DIR="${NODE_TREE:-$top_srcdir/build/node}/node_modules"
[ -d "$NODE_DIR/playwright-core" ] || NODE_DIR="$top_builddir/../node/node_modules"
CHROMIUM=/usr/bin/chromium
TF=$(command -v tofu || command -v terraform || true)
if ! command -v node >/dev/null 2>&1 || [ ! -x "$CHROMIUM" ] || [ -z "$TF" ] ||
	[ ! -d "$NODE_DIR/playwright-core" ] || [ ! -d "$NODE_DIR/axe-core" ]; then
	if [ -f "${NODE_TREE:-$top_srcdir/build/node}/.installed" ]; then # tools/install-deps ran: a failure
		not_ok "node, $CHROMIUM, terraform, playwright-core and axe-core are installed"
		done_testing
		exit 1
	fi
	echo "1..0 # SKIP needs node, $CHROMIUM, terraform and playwright-core + axe-core in build/node (tools/install-deps)"
	exit 0
fi
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
if start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
	done_testing
	exit 1
fi
OTP=$(sed -n "s/.*one-time password \([^ ]*\) .*/\1/p" "$WORK/daemon.log" | head -n 1)
expect_match "the first start logs a one-time admin password" '^[A-Za-z0-9_-]{16,}$' "$OTP"

SHOTS="$top_builddir/webui-screenshots"
mkdir -p "$SHOTS"
start=$(date +%s)
NODE_PATH="$NODE_DIR" WEBUI_URL="http://127.0.0.1:$PORT" WEBUI_OTP="$OTP" WEBUI_SHOTS="$SHOTS" \
	WEBUI_SECRET_FILE="$WORK/secret" WEBUI_CHROMIUM="$CHROMIUM" \
	timeout 80 node "$top_srcdir/tests/web/webui-admin.mjs" >"$WORK/node.out" 2>"$WORK/node.err"
rc=$?
# The script speaks "ok - ..." / "not ok - ..." / "# ..." lines; turn them into this TAP.
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	"# "*) echo "$line" ;;
	esac
done <"$WORK/node.out"
expect_eq "the browser script ends well" "0" "$rc"
[ "$rc" -eq 0 ] || { echo "# stderr:"; sed 's/^/#   /' "$WORK/node.err" | tail -n 30; }
echo "# browser run: $(($(date +%s) - start)) s; screenshots: $(find "$SHOTS" -name 'admin-*.png' | wc -l) admin-*.png in $SHOTS"
expect_eq "no page sent a CSP-violating resource to the log" "0" "$(grep -c 'Content Security Policy' "$WORK/node.err" || true)"
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
