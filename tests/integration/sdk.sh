#!/bin/sh
# The SDK as a vendor uses it: stage `make install`, then build the installed example
# plugin out of tree with nothing but pkg-config rezus-plugin, and check it with the
# installed rezus-plugin-check; then load it in the daemon next to sim and apply a tenant of
# both with the real terraform: every Machine is projected by the plugin that rendered it.
. "${top_srcdir:-.}/tests/integration/lib.sh"

STAGE="$WORK/stage"
check "make install into a staging directory" make -C "$top_builddir" install DESTDIR="$STAGE"
PC=$(find "$STAGE" -name rezus-plugin.pc | head -n 1)
expect_match "rezus-plugin.pc is installed" 'lib/pkgconfig/rezus-plugin\.pc$' "$PC"
export PKG_CONFIG_PATH="$(dirname "$PC")"
PKGC="pkg-config --define-prefix"
expect_eq "it states the ABI major" "1" "$($PKGC --variable=abi_major rezus-plugin)"
expect_eq "and the minor" "3" "$($PKGC --variable=abi_minor rezus-plugin)"
expect_match "and where plugins go" '/lib/rezus/plugins$' "$($PKGC --variable=plugindir rezus-plugin)"
for h in plugin.h host.h errors.h version.h; do
	expect_eq "rezus/$h is installed" "yes" "$([ -f "$($PKGC --variable=includedir rezus-plugin)/rezus/$h" ] && echo yes)"
done

# Plugins are installed as the .so the daemon opens, in $(libdir)/rezus/plugins, and nothing
# of libtool's besides.
expect_eq "no libtool .la file is installed" "" "$(find "$STAGE" -name '*.la')"
expect_eq "the plugins are installed as .so in lib/rezus/plugins" "metal.so oci.so openstack.so sim.so talos.so " \
	"$(ls "$($PKGC --variable=plugindir rezus-plugin)" | tr '\n' ' ')"

EXAMPLE=$(find "$STAGE" -type d -name example | head -n 1)
cp -r "$EXAMPLE" "$WORK/example"
# Its own Makefile builds with -Wall -Wextra; a warning fails the build.
if make -C "$WORK/example" PKG_CONFIG="$PKGC" CFLAGS="-O2 -g -Werror" >"$WORK/build.log" 2>&1; then
	ok "the example builds out of tree against the staged SDK, with no warning"
else
	not_ok "the example builds out of tree against the staged SDK, with no warning" "$(cat "$WORK/build.log")"
fi
expect_eq "it exports only rezus_plugin_entry" "rezus_plugin_entry" \
	"$(nm -D --defined-only "$WORK/example/example.so" 2>/dev/null | awk '$2 == "T" { print $3 }')"
CHECKER=$(find "$STAGE" -type f -name rezus-plugin-check | head -n 1)
"$CHECKER" "$WORK/example/example.so" >"$WORK/check.out" 2>&1
expect_eq "the installed rezus-plugin-check loads and passes it" "0" "$?"
expect_match "as plugin example 0.1.0" '^plugin: +example 0\.1\.0 \(ABI 1\.3\)$' "$(cat "$WORK/check.out")"
expect_match "with no warning: its rule on terraform_data says when" '^OK: 0 checks failed, 0 warnings$' "$(cat "$WORK/check.out")"

# --- next to sim: each plugin projects only what it rendered -----------------------------------
# One tenant composed from sim (its cluster and control plane), the example (a worker group)
# and the loose fixture (a rule with no "when" on terraform_data), applied
# with the real terraform; the Machines are each plugin's own, and sim's cluster_secrets is
# nobody's Machine.
TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "# neither tofu nor terraform is installed: the checks next to sim are skipped"
	done_testing
	exit $?
fi
mkdir -p "$WORK/plugins"
ln -s "$top_builddir/plugins/.libs/sim.so" "$WORK/plugins/sim.so"
ln -s "$WORK/example/example.so" "$WORK/plugins/example.so"
ln -s "$top_builddir/tests/fixtures/plugins/.libs/loose.so" "$WORK/plugins/loose.so"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 200ms
  workers: 1
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $WORK/plugins
plugins:
  sim: {}
  example: {}
  loose: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=sdk-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with sim, the example and the loose fixture"
else
	not_ok "the daemon starts with sim, the example and the loose fixture" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
login() {
	TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d '{"username":"admin","password":"sdk-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
}
login
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
# name=provider of every Machine of the tenant, in name order
machines() {
	api "$API/tenants/acme/machines" | tr '{' '\n' |
		sed -n 's/.*"name":"\([a-z0-9-]*\)","tenant".*/\1/p; s/.*"rezuscloud.io\/provider":"\([a-z]*\)".*/\1/p' |
		paste -d= - - | tr '\n' ' '
}
# wait_runs N: until the tenant has N finished runs; prints the newest's phase
wait_runs() {
	for _ in $(seq 1 300); do
		[ "$(api "$API/tenants/acme/runs" | grep -o '"phase":"\(Succeeded\|Failed\)"' | wc -l)" -ge "$1" ] && break
		sleep 0.1
	done
	api "$API/tenants/acme" | sed -n 's/.*"lastRun":{[^}]*"phase":"\([A-Za-z]*\)".*/\1/p'
}
api -X POST "$API/tenants" -d '{"metadata":{"name":"acme"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"w"},"spec":{"role":"worker","count":2,"providerClass":"example","providerConfig":{"zone":"a"}}}' >/dev/null
api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"l"},"spec":{"role":"worker","count":1,"providerClass":"loose"}}' >/dev/null
expect_eq "the tenant of three plugins applies" "Succeeded" "$(wait_runs 1)"
expect_eq "each Machine is projected by the plugin that rendered it; cluster_secrets is none" \
	"cp-0=sim l-0=loose w-0=example w-1=example " "$(machines)"
uids() { api "$API/tenants/acme/machines" | grep -o '"uid":"[^"]*"' | tr '\n' ' '; }
BEFORE=$(uids)

# A state with no record of who rendered it: a daemon that starts again knows nothing of the
# last composition; the next run keeps the very same Machines (same uids: none recreated).
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
if REZUSCLOUD_ADMIN_PASSWORD=sdk-test-pw start_daemon "$WORK/daemon2.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts again on the same data"
else
	not_ok "the daemon starts again on the same data" "$(cat "$WORK/daemon2.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
login
api -X POST "$API/tenants/acme/runs" -d '{"spec":{"operation":"apply"}}' >/dev/null
expect_eq "a run after the restart succeeds" "Succeeded" "$(wait_runs 2)"
expect_eq "and keeps the Machines" "cp-0=sim l-0=loose w-0=example w-1=example " "$(machines)"
expect_eq "the very same objects" "$BEFORE" "$(uids)"

# The same state projected by each plugin on its own, with no scope at all (how
# rezus-plugin-check projects, and how every state was projected before scoping): sim and
# the example, whose rules say "when", give what the daemon holds; the loose rule claims
# every terraform_data, cluster_secrets included, which is why the host scopes rules.
SECRET=$(api -X POST "$API/users/admin/tokens" -d '{"spec":{}}' | sed -n 's/.*"secret":"\([^"]*\)".*/\1/p')
curl -s -u "x:$SECRET" "http://127.0.0.1:$PORT/tfstate/acme" >"$WORK/acme.tfstate"
names() { "$CHECKER" --project "$WORK/acme.tfstate" "$1" | sed -n 's/^ *"name": "\([a-z0-9-]*\)",$/\1/p' | tr '\n' ' '; }
expect_eq "sim alone projects its own machine from the state" "cp-0 " "$(names "$WORK/plugins/sim.so")"
expect_eq "the example alone, its own two: its rule says when" "w-0 w-1 " "$(names "$WORK/example/example.so")"
expect_match "a rule with no when, alone, takes everything" "cluster-secrets" "$(names "$WORK/plugins/loose.so")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
DAEMON_PID=""

done_testing
