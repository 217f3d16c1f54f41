#!/bin/sh
# tests/integration/tplc.sh - the build's template compiler (tools/tplc): a malformed
# template fails it with file:line:col and writes nothing; an unlisted one fails it; good
# ones become the C table the daemon links.
. "$top_srcdir/tests/integration/lib.sh"

TPLC="$top_builddir/tools/tplc"
mkdir -p "$WORK/src/web/templates/pages"
cd "$WORK/src" || exit 1

printf '<main>\n  <p>{{#items}}{{name}}\n</main>\n' >web/templates/pages/bad.html
printf '<b>{{x}}</b>\n' >web/templates/good.html
"$TPLC" -o "$WORK/out.c" -C "$WORK/src" -d web/templates web/templates/good.html \
	web/templates/pages/bad.html >"$WORK/err" 2>&1
expect_eq "a malformed template: exit status 1" "1" "$?"
expect_eq "with its file:line:col" \
	"$WORK/src/web/templates/pages/bad.html:2:6: unclosed section 'items'" "$(cat "$WORK/err")"
expect_eq "and no output" "no" "$(test -e "$WORK/out.c" && echo yes || echo no)"

printf '<script>var a = "{{x}}";</script>\n' >web/templates/pages/bad.html
"$TPLC" -o "$WORK/out.c" -C "$WORK/src" -d web/templates web/templates/good.html \
	web/templates/pages/bad.html >"$WORK/err" 2>&1
expect_eq "a tag inside <script>: exit status 1" "1" "$?"
expect_match "named at its place" "pages/bad.html:1:18: a template tag cannot stand inside 'script'" \
	"$(cat "$WORK/err")"

printf '<a href="{{u}}">{{> good}}</a>\n' >web/templates/pages/bad.html
"$TPLC" -o "$WORK/out.c" -C "$WORK/src" -d web/templates web/templates/good.html >"$WORK/err" 2>&1
expect_eq "an unlisted template: exit status 1" "1" "$?"
expect_match "named" "web/templates/pages/bad.html: not listed in web/local.mk" "$(cat "$WORK/err")"

"$TPLC" -o "$WORK/out.c" -C "$WORK/src" -d web/templates web/templates/good.html \
	web/templates/pages/bad.html >"$WORK/err" 2>&1
expect_eq "good templates: exit status 0" "0" "$?"
expect_match "the table holds them by name" '\{ "pages/bad", "web/templates/pages/bad.html", t1' \
	"$(cat "$WORK/out.c")"
expect_match "and the count" "rz__tpl_embedded_n = 2;" "$(cat "$WORK/out.c")"
if command -v cc >/dev/null 2>&1; then
	check "the table compiles" cc -fsyntax-only -Wall -Werror -I"$top_builddir" \
		-I"$top_srcdir" -I"$top_srcdir/sdk/include" $(pkg-config --cflags jansson) "$WORK/out.c"
fi

"$TPLC" -o "$WORK/out.c" -C "$WORK/src" -d web/templates good.html >"$WORK/err" 2>&1
expect_eq "a file outside the folder: exit status 1" "1" "$?"
"$TPLC" -o "$WORK/out.c" >"$WORK/err" 2>&1
expect_eq "bad usage: exit status 2" "2" "$?"
done_testing
