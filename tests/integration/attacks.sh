#!/bin/sh
# What an attacker tries over HTTP, and the hardening around it (docs/security.md,
# "Privileges", "The WebUI", "Hardening"): a viewer minting a runner token to reach every
# tenant's state, a view-capped token minting an uncapped one, a token outliving the one
# that made it; every reply with a body says nosniff, every TLS reply carries
# Strict-Transport-Security; a WebUI form posted from another site is refused whatever its
# CSRF token; a flood of requests from one address, or of bad credentials, leaves a bounded
# log. One daemon, over TLS (self-signed), with the sim plugin.
. "${top_srcdir:-.}/tests/integration/lib.sh"

PW=attacks-admin-pw
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  tls:
    self_signed: true
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
log:
  access_per_address: 50
CONF
if REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts over TLS"
else
	not_ok "the daemon starts over TLS" "$(cat "$WORK/daemon.log")"
	done_testing
	exit 1
fi
URL="https://127.0.0.1:$PORT"
API="$URL/api/v1"
c() { curl -sk "$@"; }
login() {
	c -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"$1\",\"password\":\"$2\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
# as TOKEN METHOD PATH [BODY]: the answer's body in $WORK/body, its code printed
as() {
	tok=$1 m=$2 p=$3
	shift 3
	c -o "$WORK/body" -w '%{http_code}' -X "$m" -H "Authorization: Bearer $tok" \
		-H 'Content-Type: application/json' "$@" "$API$p"
}
secret() { sed -n 's/.*"secret":"\(rzt_[^"]*\)".*/\1/p' "$WORK/body"; }

ADMIN=$(login admin "$PW")
expect_match "the admin logs in" '^ey' "$ADMIN"
as "$ADMIN" POST /users -d '{"metadata":{"name":"viewer"},"spec":{"role":"view","password":"viewer-password-1"}}' >/dev/null
as "$ADMIN" POST /tenants -d '{"metadata":{"name":"victim"},"spec":{"clusterProvider":"sim"}}' >/dev/null
VIEWER=$(login viewer viewer-password-1)
expect_match "a viewer logs in" '^ey' "$VIEWER"

# --- no way up from a view credential ---------------------------------------------------------
expect_eq "a viewer cannot mint a runner token for itself (which would claim runs)" "422" \
	"$(as "$VIEWER" POST /users/viewer/tokens -d '{"spec":{"scope":"runner","runner":"a"}}')"
expect_match "naming spec.scope" '"field":"spec.scope"' "$(cat "$WORK/body")"
expect_eq "nor reach a claim route" "403" \
	"$(as "$VIEWER" POST /runners/a/claims -d '{"run":"run-00000000","step":"init"}')"
as "$VIEWER" POST /users/viewer/tokens -d '{"spec":{}}' >/dev/null
VTOKEN=$(secret)
expect_eq "nor read any tenant's state with a token of its own, as tofu would" "403" \
	"$(c -o /dev/null -w '%{http_code}' -u "x:$VTOKEN" "$URL/tfstate/victim")"
as "$ADMIN" POST /users/admin/tokens -d '{"spec":{"role":"view"}}' >/dev/null
CAPPED=$(secret)
expect_match "an admin makes a token capped at view" '^rzt_' "$CAPPED"
expect_eq "with it, a token asked for with no role is made" "201" \
	"$(as "$CAPPED" POST /users/admin/tokens -d '{"spec":{}}')"
expect_match "capped at view too" '"role":"view"' "$(cat "$WORK/body")"
MADE=$(secret)
expect_eq "and that one cannot list users" "403" "$(as "$MADE" GET /users)"
expect_eq "an admin token asked for with it is refused" "422" \
	"$(as "$CAPPED" POST /users/admin/tokens -d '{"spec":{"role":"admin"}}')"
expect_eq "so is a runner token" "422" \
	"$(as "$CAPPED" POST /users/admin/tokens -d '{"spec":{"scope":"runner","runner":"a"}}')"
as "$ADMIN" POST /users/admin/tokens -d '{"spec":{"expiresAt":"2099-01-01T00:00:00Z"}}' >/dev/null
EXPIRING=$(secret)
expect_eq "a token that expires cannot make one that outlives it" "422" \
	"$(as "$EXPIRING" POST /users/admin/tokens -d '{"spec":{"expiresAt":"2100-01-01T00:00:00Z"}}')"
expect_eq "one made with it expires with it" "201" "$(as "$EXPIRING" POST /users/admin/tokens -d '{"spec":{}}')"
expect_match "(its expiresAt)" '"expiresAt":"2099-01-01T00:00:00' "$(cat "$WORK/body")"

# --- headers ----------------------------------------------------------------------------------
c -D "$WORK/h404" -o /dev/null -H "Authorization: Bearer $ADMIN" "$API/tenants/nope"
expect_match "a JSON error reply says nosniff" '^X-Content-Type-Options: nosniff' "$(tr -d '\r' <"$WORK/h404")"
expect_match "and, over TLS, Strict-Transport-Security" '^Strict-Transport-Security: max-age=31536000' \
	"$(tr -d '\r' <"$WORK/h404")"
c -D "$WORK/hlogin" -o /dev/null "$URL/login"
expect_eq "a page says nosniff once" "1" "$(grep -ci '^X-Content-Type-Options: nosniff' "$WORK/hlogin")"

# --- a form posted from another site ------------------------------------------------------------
c -c "$WORK/jar" -o "$WORK/login.html" "$URL/login"
CSRF=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' "$WORK/login.html" | head -n 1)
expect_match "the login page has a CSRF token" '^[A-Za-z0-9_-]+$' "$CSRF"
post_login() {
	c -b "$WORK/jar" -o /dev/null -w '%{http_code}' "$@" \
		--data-urlencode "csrf=$CSRF" --data-urlencode "username=admin" \
		--data-urlencode "password=$PW" "$URL/login"
}
expect_eq "a valid token posted from another Origin is refused" "403" \
	"$(post_login -H 'Origin: https://evil.example')"
expect_eq "so is one a browser says is cross-site" "403" "$(post_login -H 'Sec-Fetch-Site: cross-site')"
expect_eq "the same post from the server's own origin goes through" "303" \
	"$(post_login -H "Origin: https://127.0.0.1:$PORT")"
expect_eq "and as a same-origin browser says" "303" "$(post_login -H 'Sec-Fetch-Site: same-origin')"

# --- a flood of requests leaves a bounded log ---------------------------------------------------
before=$(grep -c 'msg=request ' "$WORK/daemon.log")
for _ in $(seq 1 600); do echo "url = \"$URL/login\""; echo 'output = "/dev/null"'; done >"$WORK/flood.cfg"
c -K "$WORK/flood.cfg"
for _ in $(seq 1 50); do grep -q 'requests not logged one by one' "$WORK/daemon.log" && break; sleep 0.1; done
after=$(grep -c 'msg=request ' "$WORK/daemon.log")
echo "# 600 requests from one address: $((after - before)) request lines; $(grep 'requests not logged' "$WORK/daemon.log" | tail -n 1)"
if [ "$((after - before))" -le 50 ]; then
	ok "600 requests from one address log at most log.access_per_address (50) lines"
else
	not_ok "600 requests from one address log at most 50 lines" "$((after - before)) lines"
fi
expect_match "and one line counts the rest" 'msg="requests not logged one by one" peer=127.0.0.1 more=[0-9]+' \
	"$(grep 'requests not logged' "$WORK/daemon.log" | tail -n 1)"
# the refusal of bad credentials is one more line per request: sampled the same way
for _ in $(seq 1 300); do
	echo "url = \"$API/tenants\""
	echo 'header = "Authorization: Bearer rzt_not-a-token-at-all-not-a-token-at-all-xx"'
	echo 'output = "/dev/null"'
done >"$WORK/badtok.cfg"
c -K "$WORK/badtok.cfg"
refused=$(grep -c 'msg="credentials refused"' "$WORK/daemon.log")
echo "# 300 requests with a bad token: $refused \"credentials refused\" lines"
if [ "$refused" -le 50 ]; then
	ok "300 requests with a bad token log at most 50 refusals"
else
	not_ok "300 requests with a bad token log at most 50 refusals" "$refused lines"
fi

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
