#!/bin/sh
# Single sign-on against a real OpenID provider: the certified oidc-provider package from npm
# (tests/stand-ins/oidc-provider.mjs), started on loopback by tests/web/oidc.mjs, which drives
# Debian's chromium through the WebUI's sign-in (authorization code with PKCE, state and
# nonce): alice lands logged in and exists with her groups and mapped role, bob with role
# none, a local user of the same name is not taken over, a sign-in canceled at the provider
# and a callback this browser did not begin get clear refusals; POST /api/v1/auth/oidc/token
# takes the provider's real ID tokens and refuses forged, altered, alg-none, wrong-nonce,
# wrong-audience and replayed ones; the provider restarts with a new key and the daemon
# follows. Then: the audit log holds the logins, granted and refused, and neither it nor
# the daemon's log holds a token or the client secret.
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
OIDC_PORT=$(free_port)
CLI_PORT=$(free_port)
DPORT=$(free_port)
ADMIN_PW=oidc-admin-pw-1
SECRET=web-secret-for-tests
printf '%s\n' "$SECRET" >"$WORK/client.secret"
chmod 600 "$WORK/client.secret"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:$DPORT
  data_dir: $WORK/data
auth:
  oidc:
    issuer: http://127.0.0.1:$OIDC_PORT
    client_id: rezus-web
    client_secret_file: $WORK/client.secret
    cli_client_id: rezusctl
    scopes: openid profile groups
    display_name: Example ID
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

run_browser oidc.mjs 300 OIDC_PORT="$OIDC_PORT" CLI_PORT="$CLI_PORT" ADMIN_PW="$ADMIN_PW" \
	OIDC_STANDIN="$top_srcdir/tests/stand-ins/oidc-provider.mjs"
expect_eq "the daemon fetched the provider's keys twice: at the first use and after the rotation" "2" \
	"$(grep -c "fetched the keys of 'http://127.0.0.1:$OIDC_PORT'" "$WORK/daemon.log" || true)"

# the audit log, as the admin
TOKEN=$(curl -s -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$ADMIN_PW\"}" "http://127.0.0.1:$PORT/api/v1/auth/login" |
	sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/audit?limit=500" >"$WORK/audit.json"
expect_match "the audit log holds single sign-on's logins" '"verb":"login-oidc"' "$(cat "$WORK/audit.json")"
expect_match "a granted one as alice" '"user":"alice"[^}]*"verb":"login-oidc"|"verb":"login-oidc"[^}]*"user":"alice"' \
	"$(tr '{' '\n' <"$WORK/audit.json" | grep '"code":200' | grep login-oidc | tr '\n' ' ')"
expect_match "and refused ones, saying why" 'nonce|signature|another client' \
	"$(tr '{' '\n' <"$WORK/audit.json" | grep login-oidc | grep '"code":401' | tr '\n' ' ')"
expect_eq "no audit row holds a JWT" "0" "$(grep -c 'eyJ' "$WORK/audit.json" || true)"
expect_eq "the daemon's log holds no JWT" "0" "$(grep -c 'eyJ' "$WORK/daemon.log" || true)"
expect_eq "nor the client secret" "0" "$(grep -c "$SECRET" "$WORK/daemon.log" "$WORK/audit.json" | grep -vc ':0$' || true)"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
