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
# framing, and a token and a backup are made through it; a backup is deleted through its
# confirmation (gone from the list, the API and the disk); a plugin that cannot load (listed
# with required: false) is named on the providers page with its error while the daemon stays
# ready; axe-core finds no WCAG A/AA violation on any new page nor on the error states (a
# 404, the 422s of the user and token forms). Every page is saved as a screenshot at 1280 and
# 360 pixels under $top_builddir/webui-screenshots (and the installation's pages at 375 too).
# The installation's pages: a browser's /nope is the site's 404 page while API clients keep
# the Status byte for byte; a favicon; Runners (empty state, a Runner appearing live); the
# dashboard's counts as links, phases as badges, counts and warnings live and newest first;
# the Events page sorted, filtered by query parameters, live; a new token's Copy button by
# keyboard; alice's /users/alice is her account, where she makes and revokes her own token
# and changes her password. With curl: over plain HTTP the login seed
# and session cookies are HttpOnly and SameSite but not Secure; X-Ingress-Path is believed
# only from a server.trusted_proxies peer and only when well formed, otherwise the page is
# served unprefixed and refuses framing.
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
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
  ghost: { required: false }
CONF
start_webui_daemon
URL="http://127.0.0.1:$PORT"
expect_eq "a plugin that cannot load but is not required leaves the daemon ready (/readyz 200)" "200" \
	"$(curl -s -o "$WORK/readyz" -w '%{http_code}' "$URL/readyz?verbose")"
expect_match "... /readyz names sim as loaded" 'plugins ok: sim' "$(cat "$WORK/readyz")"

# --- the cookies over plain HTTP: HttpOnly and SameSite, not Secure ---------------------------
# cookie_flags HEADERS NAME: the attributes of the Set-Cookie of NAME, one line
cookie_flags() { tr -d '\r' <"$1" | sed -n "s/^[Ss]et-[Cc]ookie: $2=[^;]*;//p" | head -n 1; }
curl -s -D "$WORK/login.h" -o "$WORK/login.html" "$URL/login"
seed=$(tr -d '\r' <"$WORK/login.h" | sed -n 's/^[Ss]et-[Cc]ookie: rezus_login=\([^;]*\);.*/\1/p')
csrf=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' "$WORK/login.html" | head -n 1)
flags=$(cookie_flags "$WORK/login.h" rezus_login)
expect_match "plain HTTP: the login seed cookie is HttpOnly and SameSite=Strict" 'HttpOnly.*SameSite=Strict' "$flags"
expect_eq "plain HTTP: ... and not Secure" "" "$(printf '%s' "$flags" | grep -o Secure)"
curl -s -D "$WORK/post.h" -o /dev/null -b "rezus_login=$seed" --data-urlencode "csrf=$csrf" \
	--data-urlencode username=admin --data-urlencode "password=$OTP" "$URL/login"
expect_match "plain HTTP: a login through the form is answered with a redirect" '^HTTP/1\.1 303' "$(head -n 1 "$WORK/post.h")"
flags=$(cookie_flags "$WORK/post.h" rezus_session)
expect_match "plain HTTP: the session cookie is HttpOnly and SameSite=Lax" 'HttpOnly.*SameSite=Lax' "$flags"
expect_eq "plain HTTP: ... and not Secure" "" "$(printf '%s' "$flags" | grep -o Secure)"
# A trusted proxy that terminated TLS says so (X-Forwarded-Proto: https): the browser's
# connection is TLS, so the cookies are Secure; the same header from another peer is not believed.
curl -s -D "$WORK/fwd.h" -o /dev/null -H 'X-Forwarded-Proto: https' "$URL/login"
expect_match "behind a trusted TLS-terminating proxy (X-Forwarded-Proto: https) the cookie is Secure" \
	'HttpOnly.*SameSite=Strict.*Secure' "$(cookie_flags "$WORK/fwd.h" rezus_login)"
if curl -s -D "$WORK/fwd2.h" -o /dev/null -H 'X-Forwarded-Proto: https' --interface 127.0.0.2 "$URL/login"; then
	expect_eq "... but not on the word of a peer not in server.trusted_proxies" "" \
		"$(cookie_flags "$WORK/fwd2.h" rezus_login | grep -o Secure)"
else
	not_ok "curl can connect from 127.0.0.2"
fi

# --- X-Ingress-Path: only from a trusted proxy, only when well formed -------------------------
PREFIX=/api/hassio_ingress/Ad9-z
# probe NAME VALUE [curl options]: /login with X-Ingress-Path: VALUE into $WORK/NAME.{h,html}
probe() {
	name=$1 value=$2
	shift 2
	rm -f "$WORK/$name.h" "$WORK/$name.html"
	curl -s -D "$WORK/$name.h" -o "$WORK/$name.html" -H "X-Ingress-Path: $value" "$@" "$URL/login"
}
# page_urls NAME: the page's href, src and action values, one a line
page_urls() { grep -o '\(href\|src\|action\)="[^"#][^"]*"' "$WORK/$1.html" | sed 's/^[a-z]*="//; s/"$//'; }
# unprefixed NAME: nothing when the page's URLs are those of the page asked for without the
# header, its cookie at Path=/, and framing refused by both headers; else what differs
unprefixed() {
	h=$(tr -d '\r' <"$WORK/$1.h")
	[ "$(page_urls "$1")" = "$(page_urls plain)" ] || echo "URLs: $(page_urls "$1" | tr '\n' ' ')"
	printf '%s\n' "$h" | grep -q "^[Cc]ontent-[Ss]ecurity-[Pp]olicy: .*frame-ancestors 'none'" || echo "no frame-ancestors 'none'"
	printf '%s\n' "$h" | grep -qi '^x-frame-options: DENY$' || echo "no X-Frame-Options: DENY"
	printf '%s\n' "$h" | grep -qi '^set-cookie: rezus_login=[^;]*; Path=/;' || echo "cookie not at Path=/"
}
curl -s -D "$WORK/plain.h" -o "$WORK/plain.html" "$URL/login"
expect_match "without X-Ingress-Path the login page's URLs are at the root" '^/static/' "$(page_urls plain | tr '\n' ' ')"
probe trusted "$PREFIX"
expect_eq "a trusted proxy's X-Ingress-Path prefixes every URL of the page" "$(page_urls plain | sed "s|^|$PREFIX|")" \
	"$(page_urls trusted)"
expect_eq "... and allows framing" "" "$(tr -d '\r' <"$WORK/trusted.h" | grep -i "frame-ancestors\|^x-frame-options")"
if probe untrusted "$PREFIX" --interface 127.0.0.2; then
	expect_eq "X-Ingress-Path from a peer not in server.trusted_proxies (127.0.0.2) is ignored: no prefix, framing refused" "" \
		"$(unprefixed untrusted)"
else
	not_ok "curl can connect from 127.0.0.2"
fi
bad=""
while IFS= read -r value; do
	probe malformed "$value"
	code=$(sed -n '1s/^HTTP\/1\.1 \([0-9]*\).*/\1/p' "$WORK/malformed.h")
	why=$(unprefixed malformed)
	[ "$code" = 200 ] || why="HTTP $code $why"
	[ -z "$why" ] || bad="$bad
[$value]: $why"
done <<VALUES
$PREFIX/
api/hassio_ingress/x
/api//x
/api/../x
/api/./x
/api/x y
/api/"onload="x
/api/%2e%2e/x
/
/$(printf 'a%.0s' $(seq 1 300))
VALUES
expect_eq "a malformed X-Ingress-Path from a trusted proxy is ignored: the page served unprefixed, framing refused" "" "$bad"

# --- a path no route has: the API's Status, byte for byte, unless a browser asks for a page ------
NOTFOUND='{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404}'
expect_eq "an API client's 404 for /nope is the Status, byte for byte (no Accept)" "404 application/json $NOTFOUND" \
	"$(curl -s -o "$WORK/nf" -w '%{http_code} %{content_type}' "$URL/nope") $(cat "$WORK/nf")"
expect_eq "... and with Accept: application/json" "404 application/json $NOTFOUND" \
	"$(curl -s -o "$WORK/nf" -w '%{http_code} %{content_type}' -H 'Accept: application/json' "$URL/nope") $(cat "$WORK/nf")"
expect_eq "... and under /api even for a browser's Accept: text/html" "404 application/json $NOTFOUND" \
	"$(curl -s -o "$WORK/nf" -w '%{http_code} %{content_type}' -H 'Accept: text/html,*/*' "$URL/api/v1/nope") $(cat "$WORK/nf")"
expect_eq "a browser's page load of /nope (Accept: text/html) gets an HTML 404 page" "404 text/html; charset=utf-8" \
	"$(curl -s -o "$WORK/nf" -w '%{http_code} %{content_type}' -H 'Accept: text/html,application/xhtml+xml' "$URL/nope")"
expect_match "... that links home" 'href="/" id="error-home"' "$(cat "$WORK/nf")"
expect_eq "a POST to /nope is the API's 404 Status whatever it accepts" "404 application/json" \
	"$(curl -s -o /dev/null -w '%{http_code} %{content_type}' -X POST -H 'Accept: text/html' "$URL/nope")"

run_browser webui-admin.mjs 300 WEBUI_SECRET_FILE="$WORK/secret" WEBUI_BACKUP_DIR="$WORK/data/backups"
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
