#!/bin/sh
# bench/build.sh - build what the benchmarks run, out of tree in build/bench:
#   build/bench/rezuscloud  the daemon, an ordinary optimised build (configure's defaults)
#   build/bench/api-load    the HTTP(S) load generator (bench/api-load.c), built with gcc directly
#                           and linked with OpenSSL (-lssl -lcrypto)
#   build/bench/observe-seed  seeds a data dir with applied sim tenants (bench/observe-seed.c),
#                           linked with the daemon's core library through the build's libtool
# The benchmarks are not part of `make check`; nothing here touches the Makefiles.
# BENCH_BUILD=0 keeps an existing build/bench/rezuscloud as it is (to measure the same binary
# again, or while the tree does not build).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/build/bench"

if [ ! -x "$top/configure" ]; then
	echo "bench/build.sh: $top/configure is missing; run 'autoreconf -fi' in $top first" >&2
	exit 1
fi
mkdir -p "$out"
cd "$out"
if [ "${BENCH_BUILD:-1}" = 0 ] && [ -x rezuscloud ]; then
	echo "bench/build.sh: BENCH_BUILD=0: keeping build/bench/rezuscloud as it is" >&2
else
	[ -f Makefile ] || ../../configure -q >/dev/null
	make -s -j"$(nproc 2>/dev/null || echo 2)" rezuscloud >/dev/null
fi
[ -f core/librezus-core.la ] || make -s core/librezus-core.la >/dev/null

# api-load speaks HTTPS with -s: OpenSSL's libraries (libssl-dev, as for the daemon)
${CC:-gcc} -std=c11 -O2 -g -Wall -Wextra -Werror -o api-load.tmp "$top/bench/api-load.c" \
	-lssl -lcrypto
mv api-load.tmp api-load

# The seed program uses the core's headers and objects, so it is compiled with the tree's
# warnings and linked against core/librezus-core.la (libtool adds its libraries).
warn=$(sed -n 's/^WARN_CFLAGS = //p' Makefile)
# shellcheck disable=SC2086
${CC:-gcc} -std=gnu11 -O2 -g $warn -Werror -DHAVE_CONFIG_H -I"$top" -I"$top/sdk/include" -I. \
	-c -o observe-seed.o "$top/bench/observe-seed.c"
./libtool --quiet --mode=link ${CC:-gcc} -O2 -g -pthread -o observe-seed.tmp observe-seed.o \
	core/librezus-core.la
mv observe-seed.tmp observe-seed
