#!/bin/sh
# A state rollback (and an admin's DELETE of the state) with the real terraform/tofu and the
# sim plugin: the Machines follow the restored state at once, with no run, the tenant's
# counts and kept credentials follow it too, and the tenant gets an Event saying so.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
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
CONF
mkdir -p "$WORK/plugins"
ln -s "$top_builddir/plugins/.libs/sim.so" "$WORK/plugins/sim.so"
if REZUSCLOUD_ADMIN_PASSWORD=rollback-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
BASE="http://127.0.0.1:$PORT"
API="$BASE/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"rollback-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
ADMIN_TOKEN=$(curl -s -X POST "$API/users/admin/tokens" -H "Authorization: Bearer $TOKEN" \
	-H 'Content-Type: application/json' -d '{"spec":{}}' | sed -n 's/.*"secret":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
code() { api -o /dev/null -w '%{http_code}' "$@"; }
machines() { api "$API/tenants/acme/machines" | grep -o '"name":"[a-z0-9-]*","tenant"' | sed 's/"name":"\([^"]*\)".*/\1/' | tr '\n' ' '; }
runs() { api "$API/tenants/acme/runs" | grep -o '"kind":"Run"' | wc -l | tr -d ' '; }
current() { api "$API/tenants/acme/state" | grep -o '"version":[0-9]*' | sed -n '1s/.*://p'; }
# finished N: until N runs of acme have finished.
finished() {
	for _ in $(seq 1 300); do
		[ "$(grep -c 'msg="run finished" tenant=acme' "$WORK/daemon.log")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

api -X POST "$API/tenants" -d '{"metadata":{"name":"acme"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"workers"},"spec":{"role":"worker","count":2,"providerClass":"sim"}}' >/dev/null
finished 1
expect_eq "an apply makes three Machines" "cp-0 workers-0 workers-1 " "$(machines)"
THREE=$(current)
expect_match "from a state version" '^[0-9]+$' "$THREE"

curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' \
	"$API/tenants/acme/nodegroups/workers" -d '{"spec":{"count":0}}'
for _ in $(seq 1 300); do
	RUN=$(grep 'run awaits approval' "$WORK/daemon.log" | sed -n '1s/.* run=\(run-[0-9a-z]*\).*/\1/p')
	[ -n "$RUN" ] && break
	sleep 0.1
done
expect_eq "scaling to one machine awaits approval, then applies" "200" "$(code -X POST "$API/tenants/acme/runs/$RUN/approve")"
finished 2
expect_eq "one Machine is left" "cp-0 " "$(machines)"
expect_match "the tenant counts one" '"machines":\{"desired":1,"total":1,' "$(api "$API/tenants/acme")"
RUNS=$(runs)

expect_eq "an admin rolls the state back to the three-machine version" "200" \
	"$(code -X POST -d "{\"version\":$THREE}" "$API/tenants/acme/state/rollback")"
expect_eq "the three Machines are back at once" "cp-0 workers-0 workers-1 " "$(machines)"
expect_eq "with no run" "$RUNS" "$(runs)"
expect_match "the tenant counts them" '"machines":\{"desired":1,"total":3,' "$(api "$API/tenants/acme")"
expect_match "a StateRolledBack Event names the version" \
	'"reason":"StateRolledBack","message":"[^"]*version '"$THREE"'[^0-9][^"]*","type":"Normal"' \
	"$(api "$API/tenants/acme/events")"
expect_eq "the kept kubeconfig follows the restored state" "200" "$(code "$API/tenants/acme/kubeconfig")"

# An admin's DELETE empties the state: the Machines and the credentials go with it.
ROLLED=$(current)
expect_eq "an admin's DELETE of the state" "200" "$(curl -s -o /dev/null -w '%{http_code}' -u "x:$ADMIN_TOKEN" -X DELETE "$BASE/tfstate/acme")"
expect_eq "leaves no Machines" "" "$(machines)"
expect_match "the tenant counts none" '"machines":\{"desired":1,"total":0,' "$(api "$API/tenants/acme")"
expect_eq "and no kubeconfig" "409" "$(code "$API/tenants/acme/kubeconfig")"
expect_match "a StateDeleted Event says how to undo it" \
	'"reason":"StateDeleted","message":"[^"]*roll back to version '"$ROLLED"'[^0-9][^"]*","type":"Warning"' \
	"$(api "$API/tenants/acme/events")"
expect_eq "a rollback undoes it" "200" "$(code -X POST -d "{\"version\":$ROLLED}" "$API/tenants/acme/state/rollback")"
expect_eq "the Machines are back" "cp-0 workers-0 workers-1 " "$(machines)"
expect_eq "still with no run" "$RUNS" "$(runs)"
expect_eq "and the kubeconfig with them" "200" "$(code "$API/tenants/acme/kubeconfig")"
expect_match "the Event counted the second rollback" '"reason":"StateRolledBack",[^{]*"count":2' "$(api "$API/tenants/acme/events")"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
