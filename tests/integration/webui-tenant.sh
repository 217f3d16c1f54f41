#!/bin/sh
# A tenant's remaining tabs in a real browser (Debian's chromium driven by playwright-core from
# build/node, tests/web/webui-tenant.mjs) against the daemon with the sim plugin and a real
# terraform: a config patch with a YAML error shows the error at its line, fixed it is saved
# and the effective patch per role shows it; an upgrade's dry run shows what changes per
# machine, the upgrade's progress arrives without a reload, another is canceled; an admin
# rolls the TF state back through a confirmation naming the version (view and edit users are
# offered no rollback and refused it); the kubeconfig downloads as a file, its token in no
# page and not in the daemon's log; the tenant is deleted through a confirmation naming its
# node groups and machines. The effective patch lists in order the patches Talos applies, with
# the node groups a patch is limited to; a patch is deleted through a confirmation naming the
# machines that lose it (a view user has no control, its forged post is refused). Every tab
# behind a Home Assistant style ingress proxy keeps its URLs under the prefix, allows framing,
# and a dry run and a patch's save work through it. axe-core on every new page; screenshots
# at 1280 and 360 pixels under $top_builddir/webui-screenshots.
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
observe:
  interval: 300ms
  fast_interval: 150ms
upgrade:
  machine_timeout: 5s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 500}
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
	WEBUI_CHROMIUM="$CHROMIUM" timeout 85 node "$top_srcdir/tests/web/webui-tenant.mjs" >"$WORK/node.out" 2>"$WORK/node.err"
rc=$?
secret=
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	"# "*) echo "$line" ;;
	"SECRET "*) secret=${line#SECRET } ;;
	esac
done <"$WORK/node.out"
expect_eq "the browser script ends well" "0" "$rc"
[ "$rc" -eq 0 ] || { echo "# stderr:"; sed 's/^/#   /' "$WORK/node.err" | tail -n 30; }
echo "# browser run: $(($(date +%s) - start)) s; screenshots: $(find "$SHOTS" -name '*.png' | wc -l) in $SHOTS"
expect_eq "no page sent a CSP-violating resource to the log" "0" "$(grep -c 'Content Security Policy' "$WORK/node.err" || true)"
if [ -n "$secret" ]; then
	expect_eq "the downloaded kubeconfig's token is not in the daemon's log" "0" "$(grep -c -F "$secret" "$WORK/daemon.log" || true)"
else
	not_ok "the downloaded kubeconfig's token is not in the daemon's log" "no token was downloaded"
fi
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly with live streams open" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
