#!/bin/sh
# The WebUI's static assets on a running daemon: /static/<name>.<hash8>.<ext> serves the
# committed web/static/ file byte for byte (hash8 = the first 8 hex digits of its SHA-256)
# with immutable cache headers, gzip when the client asks (curl --compressed gives back the
# same bytes), 304 for its ETag, 404 for unknown names and for paths with "..". The vendored
# JavaScript is the file npm installed when tools/install-deps has filled build/node.
. "${top_srcdir:-.}/tests/integration/lib.sh"

for tool in curl sha256sum cmp; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "the tools this test drives are installed" "missing: $tool"
		done_testing
		exit 1
	fi
done
S="$top_srcdir/web/static"
NM="${NODE_TREE:-$top_srcdir/build/node}/node_modules"

# --- the vendored files are what npm installed ---------------------------------------------
if [ -f "${NODE_TREE:-$top_srcdir/build/node}/.installed" ]; then
	for pair in htmx.org/dist/htmx.min.js:htmx.min.js htmx-ext-sse/dist/sse.min.js:htmx-ext-sse.min.js \
		@alpinejs/csp/dist/cdn.min.js:alpine.min.js; do
		from=${pair%%:*} to=${pair#*:}
		if [ ! -f "$NM/$from" ]; then
			not_ok "web/static/$to is npm's $from" \
				"tools/install-deps ran (build/node/.installed) but $NM/$from is missing: run tools/install-deps"
		elif cmp -s "$NM/$from" "$S/$to"; then
			ok "web/static/$to is npm's $from"
		else
			not_ok "web/static/$to is npm's $from" "they differ: run make web-assets and commit web/static"
		fi
	done
	for pkg in htmx.org htmx-ext-sse @alpinejs/csp tailwindcss; do
		v=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$NM/$pkg/package.json" 2>/dev/null | head -n 1)
		expect_match "web/static/LICENSES names $pkg $v as installed" "^$pkg $v " "$(grep "^$pkg " "$S/LICENSES")"
	done
else
	echo "# build/node has no npm packages (tools/install-deps not run): vendored files not compared"
fi

cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=webstatic-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
	done_testing
	exit 1
fi
URL="http://127.0.0.1:$PORT"

hash8() { sha256sum "$1" | cut -c1-8; }
CSS="/static/app.$(hash8 "$S/app.css").css"
HTMX="/static/htmx.min.$(hash8 "$S/htmx.min.js").js"
ALPINE="/static/alpine.min.$(hash8 "$S/alpine.min.js").js"
SSE="/static/htmx-ext-sse.min.$(hash8 "$S/htmx-ext-sse.min.js").js"
echo "# $CSS $HTMX $ALPINE $SSE"

hdr() { # header value from a dumped head
	tr -d '\r' <"$1" | sed -n "s/^$2: //Ip" | head -n 1
}
curl -s -D "$WORK/h1" -o "$WORK/app.css" "$URL$CSS"
expect_eq "GET $CSS is 200" "200" "$(sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$WORK/h1")"
check "its body is web/static/app.css byte for byte" cmp "$S/app.css" "$WORK/app.css"
expect_eq "Content-Type text/css" "text/css; charset=utf-8" "$(hdr "$WORK/h1" Content-Type)"
expect_eq "Cache-Control immutable for a year" "public, max-age=31536000, immutable" "$(hdr "$WORK/h1" Cache-Control)"
expect_eq "Vary: Accept-Encoding" "Accept-Encoding" "$(hdr "$WORK/h1" Vary)"
expect_eq "X-Content-Type-Options: nosniff" "nosniff" "$(hdr "$WORK/h1" X-Content-Type-Options)"
expect_eq "no Content-Encoding when not asked" "" "$(hdr "$WORK/h1" Content-Encoding)"
ETAG=$(hdr "$WORK/h1" ETag)
expect_match "a strong ETag" '^"[0-9a-f]{8}"$' "$ETAG"

curl -s --compressed -D "$WORK/h2" -o "$WORK/app.gz.css" "$URL$CSS"
expect_eq "curl --compressed gets gzip" "gzip" "$(hdr "$WORK/h2" Content-Encoding)"
check "which decodes to web/static/app.css byte for byte" cmp "$S/app.css" "$WORK/app.gz.css"
zlen=$(hdr "$WORK/h2" Content-Length)
ilen=$(wc -c <"$S/app.css")
echo "# app.css: $ilen bytes, $zlen gzip"
if [ "$zlen" -lt "$ilen" ]; then ok "the gzip copy is smaller ($zlen < $ilen)"; else not_ok "the gzip copy is smaller" "$zlen >= $ilen"; fi
GZTAG=$(hdr "$WORK/h2" ETag)
expect_match "with its own ETag" '^"[0-9a-f]{8}-gzip"$' "$GZTAG"

expect_eq "If-None-Match with its ETag is 304" "304" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $ETAG" "$URL$CSS")"
expect_eq "and with the gzip ETag, compressed" "304" \
	"$(curl -s --compressed -o /dev/null -w '%{http_code}' -H "If-None-Match: $GZTAG" "$URL$CSS")"
expect_eq "another ETag gets the asset" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: "00000000"' "$URL$CSS")"

for p in "$HTMX" "$ALPINE" "$SSE"; do
	name=${p#/static/}
	curl -s --compressed -D "$WORK/h3" -o "$WORK/js" "$URL$p"
	file=$(echo "$name" | sed 's/\.[0-9a-f]\{8\}\././')
	if cmp -s "$S/$file" "$WORK/js" && [ "$(hdr "$WORK/h3" Content-Type)" = "text/javascript; charset=utf-8" ]; then
		ok "$p serves web/static/$file as JavaScript"
	else
		not_ok "$p serves web/static/$file as JavaScript" "$(cat "$WORK/h3")"
	fi
	echo "# $file: $(wc -c <"$S/$file") bytes, $(hdr "$WORK/h3" Content-Length) gzip"
done

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect_eq "/static/nope.css is 404" "404" "$(code "$URL/static/nope.css")"
expect_eq "/static/app.css (no hash) is 404" "404" "$(code "$URL/static/app.css")"
expect_eq "a wrong hash is 404" "404" "$(code "$URL/static/app.00000000.css")"
expect_eq "a path with .. is 404" "404" "$(code --path-as-is "$URL/static/../static$CSS")"
expect_eq "an encoded .. is 404" "404" "$(code --path-as-is "$URL/static/..%2Fstatic%2F${CSS#/static/}")"
expect_eq "/static/../etc/passwd is 404" "404" "$(code --path-as-is "$URL/static/../etc/passwd")"
expect_eq "POST to an asset is 405" "405" "$(code -X POST "$URL$CSS")"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
