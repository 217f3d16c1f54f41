#!/bin/sh
# `rezusctl login --oidc` against a real OpenID provider: the certified oidc-provider package
# from npm (tests/stand-ins/oidc-provider.mjs) on loopback, and Debian's chromium as the person
# at the browser (tests/web/oidc-cli.mjs). The loopback redirect: rezusctl prints the
# authorization URL, refuses a callback of another state and keeps waiting, the browser signs
# in as alice, and the stored token is alice's; a sign-in canceled at the provider ends in a
# clear error. The device grant: rezusctl prints the verification URI and a code, the browser
# enters it and signs in as bob; without a browser rezusctl takes the device grant itself, and
# a sign-in aborted at the provider is access_denied. A server without single sign-on, an
# unknown flag combination and a timeout are clear errors. Neither rezusctl's output nor the
# daemon's log nor the audit log holds an ID token, a code or the token it stored.
. "${top_srcdir:-.}/tests/integration/lib.sh"

browser_prereqs
if [ ! -d "$NODE_DIR/oidc-provider" ]; then
	if [ -f "${NODE_TREE:-$top_srcdir/build/node}/.installed" ]; then
		not_ok "oidc-provider is installed in build/node (tools/install-deps)"
		done_testing
		exit 1
	fi
	echo "1..0 # SKIP needs oidc-provider in build/node (tools/install-deps)"
	exit 0
fi
unset DISPLAY WAYLAND_DISPLAY # no browser for rezusctl to open: the tests play the person
RZ="$top_builddir/rezusctl"
OIDC_PORT=$(free_port)
ADMIN_PW=oidc-cli-admin-pw-1

# wait_line FILE REGEX: print FILE's first line matching REGEX, waiting up to 15 s for it.
wait_line() {
	for _ in $(seq 1 300); do
		if grep -Eq -- "$2" "$1" 2>/dev/null; then
			grep -E -m 1 -- "$2" "$1"
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# browser MODE URL LOGIN [CODE]: tests/web/oidc-cli.mjs; its output in $WORK/browser.out.
browser() {
	env NODE_PATH="$NODE_DIR" CHROMIUM="$CHROMIUM" MODE="$1" URL="$2" LOGIN="$3" CODE="${4:-}" \
		timeout 120 node "$top_srcdir/tests/web/oidc-cli.mjs" >"$WORK/browser.out" 2>&1
	b_rc=$?
	cat "$WORK/browser.out" >>"$WORK/browser.log"
	sed -n 's/^AUTHCODE //p' "$WORK/browser.out" >>"$WORK/authcodes"
	return "$b_rc"
}

# login NAME ARGS...: rezusctl login --oidc in the background with its own config file
# ($WORK/NAME.conf), stdout in $WORK/NAME.out, stderr in $WORK/NAME.err; LOGIN_PID.
login() {
	name=$1
	shift
	"$RZ" --config "$WORK/$name.conf" login "http://127.0.0.1:$PORT" --oidc "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	LOGIN_PID=$!
}

# --- a server without single sign-on
mkdir -p "$WORK/plain"
cat >"$WORK/plain.yaml" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/plain
plugin_dir: $top_builddir/plugins
CONF
if start_daemon "$WORK/plain.log" -c "$WORK/plain.yaml"; then
	"$RZ" --config "$WORK/none.conf" login "http://127.0.0.1:$PORT" --oidc >"$WORK/none.out" 2>"$WORK/none.err"
	expect_eq "login --oidc at a server without single sign-on fails" "1" "$?"
	expect_match "saying the server offers none" "^error: the server at http://127.0.0.1:$PORT offers no single sign-on: single sign-on is not configured" \
		"$(cat "$WORK/none.err")"
	stop_proc "$DAEMON_PID" "the daemon without single sign-on"
else
	not_ok "a daemon without single sign-on starts" "$(cat "$WORK/plain.log")"
fi
"$RZ" --config "$WORK/none.conf" login http://127.0.0.1:9 --device >/dev/null 2>"$WORK/usage.err"
expect_eq "--device without --oidc is a usage error" "2" "$?"

# --- the provider and the daemon
env NODE_PATH="$NODE_DIR" OIDC_PORT="$OIDC_PORT" OIDC_WEB_REDIRECT="http://127.0.0.1:9/login/oidc/callback" \
	OIDC_CLI_REDIRECT="http://127.0.0.1:9/cb" node "$top_srcdir/tests/stand-ins/oidc-provider.mjs" \
	>"$WORK/provider.log" 2>&1 &
PROVIDER_PID=$!
if wait_line "$WORK/provider.log" '^listening' >/dev/null; then
	ok "the provider listens on 127.0.0.1:$OIDC_PORT"
else
	not_ok "the provider listens on 127.0.0.1:$OIDC_PORT" "$(cat "$WORK/provider.log")"
	done_testing
	exit 1
fi
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
auth:
  oidc:
    issuer: http://127.0.0.1:$OIDC_PORT
    client_id: rezus-web
    cli_client_id: rezusctl
    scopes: openid profile groups
    roles: [platform-admins=admin]
plugin_dir: $top_builddir/plugins
CONF
REZUSCLOUD_ADMIN_PASSWORD=$ADMIN_PW
export REZUSCLOUD_ADMIN_PASSWORD
if start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with auth.oidc set"
else
	not_ok "the daemon starts with auth.oidc set" "$(cat "$WORK/daemon.log")"
	done_testing
	exit 1
fi
unset REZUSCLOUD_ADMIN_PASSWORD

# --- the loopback redirect: alice
login alice --no-browser
URL=$(wait_line "$WORK/alice.err" '^Open this URL to sign in: ' | sed 's/^Open this URL to sign in: //')
expect_match "rezusctl prints the provider's authorization URL with PKCE (S256), state and nonce" \
	"^http://127.0.0.1:$OIDC_PORT/auth\?response_type=code&client_id=rezusctl&redirect_uri=http%3A%2F%2F127.0.0.1%3A[0-9]+%2Fcallback&scope=openid%20profile%20groups&state=[A-Za-z0-9_-]{43}&nonce=[A-Za-z0-9_-]{43}&code_challenge=[A-Za-z0-9_-]{43}&code_challenge_method=S256$" "$URL"
CB=$(printf '%s\n' "$URL" | sed -n 's/.*redirect_uri=http%3A%2F%2F127.0.0.1%3A\([0-9]*\)%2Fcallback.*/\1/p')
expect_eq "a callback of another state is refused (400)" "400" \
	"$(curl -s -o "$WORK/wrong.html" -w '%{http_code}' "http://127.0.0.1:$CB/callback?state=not-this-one&code=stolen")"
expect_match "its page says why" "not begun by this rezusctl" "$(cat "$WORK/wrong.html")"
expect_eq "another path is not found (404)" "404" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$CB/favicon.ico")"
sleep 0.2
if kill -0 "$LOGIN_PID" 2>/dev/null; then ok "rezusctl keeps waiting after them"; else not_ok "rezusctl keeps waiting after them" "$(cat "$WORK/alice.err")"; fi
expect_match "and warns on stderr" "refused a callback whose state is not this sign-in's" "$(cat "$WORK/alice.err")"
if browser signin "$URL" alice; then ok "chromium signs in at the provider as alice"; else not_ok "chromium signs in at the provider as alice" "$(cat "$WORK/browser.out")"; fi
expect_match "and lands on rezusctl's page" "^PAGE Signed in. You can close this tab" "$(cat "$WORK/browser.out")"
wait_exit "$LOGIN_PID" 30
expect_eq "rezusctl login --oidc exits 0" "0" "$EXIT_STATUS"
expect_eq "saying who is logged in" "Logged in to http://127.0.0.1:$PORT as alice (context default)" "$(cat "$WORK/alice.out")"
ALICE_TOKEN=$(sed -n 's/^ *token: *//p' "$WORK/alice.conf" | tr -d "\"'")
expect_match "the context holds an API token" "^rzt_" "$ALICE_TOKEN"
expect_match "whose whoami is alice" '"user":"alice"' \
	"$(curl -s -H "Authorization: Bearer $ALICE_TOKEN" "http://127.0.0.1:$PORT/api/v1/auth/whoami")"
check "rezusctl get tenants works with it (alice is an admin by her group)" "$RZ" --config "$WORK/alice.conf" get tenants
expect_match "config get-contexts names alice" "^\* +default +http://127.0.0.1:$PORT +alice" \
	"$("$RZ" --config "$WORK/alice.conf" config get-contexts)"

# --- the loopback redirect, canceled at the provider
login cancel --no-browser
URL=$(wait_line "$WORK/cancel.err" '^Open this URL to sign in: ' | sed 's/^Open this URL to sign in: //')
browser cancel "$URL" nobody
expect_match "a sign-in canceled at the provider lands on rezusctl's page saying so" "^PAGE The provider refused the sign-in: access_denied" "$(cat "$WORK/browser.out")"
wait_exit "$LOGIN_PID" 30
expect_eq "rezusctl exits 1" "1" "$EXIT_STATUS"
expect_match "with one clear line" "^error: the provider refused the sign-in: access_denied" "$(tail -n 1 "$WORK/cancel.err")"
expect_eq "and stores nothing" "0" "$(grep -c 'token' "$WORK/cancel.conf" 2>/dev/null || echo 0)"

# --- the loopback redirect, nobody comes
"$RZ" --config "$WORK/late.conf" login "http://127.0.0.1:$PORT" --oidc --no-browser --timeout 1s >/dev/null 2>"$WORK/late.err"
expect_eq "a sign-in that does not come within --timeout fails" "1" "$?"
expect_match "saying so" "^error: no sign-in within the time allowed" "$(tail -n 1 "$WORK/late.err")"

# --- the device grant: bob
login bob --device
LINE=$(wait_line "$WORK/bob.err" '^To sign in, open ')
VURI=$(printf '%s\n' "$LINE" | sed -n 's/^To sign in, open \([^ ]*\) and enter the code .*/\1/p')
UCODE=$(printf '%s\n' "$LINE" | sed -n 's/.* and enter the code \(.*\)$/\1/p')
expect_match "--device prints the verification URI and the user code" "^http://127.0.0.1:$OIDC_PORT/device [A-Z]{4}-[A-Z]{4}$" "$VURI $UCODE"
if browser device "$VURI" bob "$UCODE"; then ok "chromium enters the code and signs in as bob"; else not_ok "chromium enters the code and signs in as bob" "$(cat "$WORK/browser.out")"; fi
wait_exit "$LOGIN_PID" 60
expect_eq "rezusctl login --oidc --device exits 0" "0" "$EXIT_STATUS"
expect_match "as bob" "as bob \(context default\)$" "$(cat "$WORK/bob.out")"
BOB_TOKEN=$(sed -n 's/^ *token: *//p' "$WORK/bob.conf" | tr -d "\"'")
expect_match "whose token's whoami is bob" '"user":"bob"' \
	"$(curl -s -H "Authorization: Bearer $BOB_TOKEN" "http://127.0.0.1:$PORT/api/v1/auth/whoami")"
check "rezusctl token list works with it" "$RZ" --config "$WORK/bob.conf" token list

# --- no browser here: the device grant by itself, aborted at the provider
login auto
LINE=$(wait_line "$WORK/auto.err" '^To sign in, open ')
expect_match "without a browser (no DISPLAY) rezusctl takes the device grant" "^No browser here: signing in with a code instead" "$(head -n 1 "$WORK/auto.err")"
VURI=$(printf '%s\n' "$LINE" | sed -n 's/^To sign in, open \([^ ]*\) and enter the code .*/\1/p')
UCODE=$(printf '%s\n' "$LINE" | sed -n 's/.* and enter the code \(.*\)$/\1/p')
browser device-abort "$VURI" nobody "$UCODE"
wait_exit "$LOGIN_PID" 60
expect_eq "a device sign-in aborted at the provider: rezusctl exits 1" "1" "$EXIT_STATUS"
expect_eq "saying access_denied" "error: the sign-in was refused at the provider (access_denied)" "$(tail -n 1 "$WORK/auto.err")"

# --- no secret in the output or the logs
TOKEN=$(curl -s -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$ADMIN_PW\"}" "http://127.0.0.1:$PORT/api/v1/auth/login" |
	sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/audit?limit=500" >"$WORK/audit.json"
expect_match "the audit log holds alice's and bob's single sign-on" \
	'"user":"alice"[^}]*"verb":"login-oidc".*"user":"bob"[^}]*"verb":"login-oidc"|"user":"bob"[^}]*"verb":"login-oidc".*"user":"alice"[^}]*"verb":"login-oidc"' \
	"$(tr '\n' ' ' <"$WORK/audit.json")"
OUTS="$WORK/alice.out $WORK/alice.err $WORK/cancel.out $WORK/cancel.err $WORK/bob.out $WORK/bob.err $WORK/auto.out $WORK/auto.err"
expect_eq "rezusctl's output shows no sanitizer report" "0" "$(cat $OUTS "$WORK/none.err" "$WORK/late.err" | grep -c 'runtime error:\|Sanitizer' || true)"
expect_eq "rezusctl printed no JWT" "0" "$(cat $OUTS | grep -c 'eyJ' || true)"
expect_eq "nor the tokens it stored" "0" "$(cat $OUTS | grep -cF -e "$ALICE_TOKEN" -e "$BOB_TOKEN" || true)"
expect_eq "the browser saw one authorization code" "1" "$(wc -l <"$WORK/authcodes" | tr -d ' ')"
expect_eq "which rezusctl did not print" "0" "$(cat $OUTS | grep -cF -f "$WORK/authcodes" || true)"
expect_eq "no audit row holds a JWT, a code or a stored token" "0" \
	"$(grep -cF -e 'eyJ' -e "$ALICE_TOKEN" -e "$BOB_TOKEN" -f "$WORK/authcodes" "$WORK/audit.json" || true)"
expect_eq "nor does the daemon's log" "0" \
	"$(grep -cF -e 'eyJ' -e "$ALICE_TOKEN" -e "$BOB_TOKEN" -f "$WORK/authcodes" "$WORK/daemon.log" || true)"

stop_proc "$PROVIDER_PID" "the provider"
stop_proc "$DAEMON_PID" "the daemon"
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
