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
	WEBUI_CHROMIUM="$CHROMIUM" timeout 85 node "$top_srcdir/tests/web/webui.mjs" >"$WORK/node.out" 2>"$WORK/node.err"
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
echo "# browser run: $(($(date +%s) - start)) s; screenshots: $(find "$SHOTS" -name '*.png' | wc -l) in $SHOTS"
expect_eq "no page sent a CSP-violating resource to the log" "0" "$(grep -c 'Content Security Policy' "$WORK/node.err" || true)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly with live streams open" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
