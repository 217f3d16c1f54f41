#!/bin/sh
# The SDK as a vendor uses it: stage `make install`, then build the installed example
# plugin out of tree with nothing but pkg-config rezus-plugin, and check it with the
# installed rezus-plugin-check.
. "${top_srcdir:-.}/tests/integration/lib.sh"

STAGE="$WORK/stage"
check "make install into a staging directory" make -C "$top_builddir" install DESTDIR="$STAGE"
PC=$(find "$STAGE" -name rezus-plugin.pc | head -n 1)
expect_match "rezus-plugin.pc is installed" 'lib/pkgconfig/rezus-plugin\.pc$' "$PC"
export PKG_CONFIG_PATH="$(dirname "$PC")"
PKGC="pkg-config --define-prefix"
expect_eq "it states the ABI major" "1" "$($PKGC --variable=abi_major rezus-plugin)"
expect_eq "and the minor" "1" "$($PKGC --variable=abi_minor rezus-plugin)"
expect_match "and where plugins go" '/lib/rezuscloud/plugins$' "$($PKGC --variable=plugindir rezus-plugin)"
for h in plugin.h host.h errors.h version.h; do
	expect_eq "rezus/$h is installed" "yes" "$([ -f "$($PKGC --variable=includedir rezus-plugin)/rezus/$h" ] && echo yes)"
done

EXAMPLE=$(find "$STAGE" -type d -name example | head -n 1)
cp -r "$EXAMPLE" "$WORK/example"
if make -C "$WORK/example" PKG_CONFIG="$PKGC" >"$WORK/build.log" 2>&1; then
	ok "the example builds out of tree against the staged SDK"
else
	not_ok "the example builds out of tree against the staged SDK" "$(cat "$WORK/build.log")"
fi
expect_eq "it exports only rezus_plugin_entry" "rezus_plugin_entry" \
	"$(nm -D --defined-only "$WORK/example/example.so" 2>/dev/null | awk '$2 == "T" { print $3 }')"
CHECKER=$(find "$STAGE" -type f -name rezus-plugin-check | head -n 1)
"$CHECKER" "$WORK/example/example.so" >"$WORK/check.out" 2>&1
expect_eq "the installed rezus-plugin-check loads and passes it" "0" "$?"
expect_match "as plugin example 0.1.0" '^plugin: +example 0\.1\.0 \(ABI 1\.1\)$' "$(cat "$WORK/check.out")"

done_testing
