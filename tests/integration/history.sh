#!/bin/sh
# Bounded run history, with the real terraform/tofu and the sim plugin: resyncs whose plan
# changes nothing store no Run (the tenant's lastReconciled moves, its log is not kept);
# Runs are pruned to tofu.run_history per tenant, newest kept, with their logs, while a
# failed run younger than tofu.run_retention stays.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
RESYNCS=30
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 1s
  resync: 200ms
  run_history: 3
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=history-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"history-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
runs() { api "$API/tenants/h/runs" | grep -o '"kind":"Run"' | wc -l | tr -d ' '; }
finished() { grep -c 'msg="run finished" tenant=h ' "$WORK/daemon.log"; }
logs() { find "$WORK/data/work/h" -maxdepth 1 -name '*.log' | wc -l | tr -d ' '; }

# (the debounce of 1 s takes both writes into the first run even on a loaded machine: a node
# group arriving after the run began makes a second, stored one)
api -X POST "$API/tenants" -d '{"metadata":{"name":"h"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/h/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
for _ in $(seq 1 1800); do
	[ "$(finished)" -ge $((RESYNCS + 1)) ] && break
	sleep 0.1
done
expect_eq "the tenant's first run and $RESYNCS resyncs ran" "yes" \
	"$([ "$(finished)" -ge $((RESYNCS + 1)) ] && echo yes || echo "no: $(finished)")"
expect_eq "the resyncs that changed nothing stored no Run" "1" "$(runs)"
t=$(api "$API/tenants/h")
expect_match "the tenant says when it was last found in sync" '"lastReconciled":"20[0-9-]+T[0-9:.]+Z"' "$t"
expect_match "and Reconciled says why" '"type":"Reconciled","status":"True","reason":"InSync"' "$t"
expect_match "the drift condition still moves" '"type":"Drifted","status":"False","reason":"InSync"' "$t"

# Failing runs are kept beyond the history while young; the rest is pruned to 3. The same
# data, with resyncs off so that only the runs below happen.
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
# (counted with the daemon stopped: a resync in progress has its log open until it ends)
expect_eq "nor kept their logs" "1" "$(logs)"
sed -i 's/^  resync: 200ms$/  resync: 0s/' "$WORK/rezus.conf"
if start_daemon "$WORK/daemon2.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts again, resyncs off"
else
	not_ok "the daemon starts again, resyncs off" "$(cat "$WORK/daemon2.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
patch_ng() { curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$API/tenants/h/nodegroups/cp" -d "$1"; }
patch_ng '{"spec":{"count":2,"providerConfig":{"failOn":1}}}'
for _ in $(seq 1 300); do
	api "$API/tenants/h/runs" | grep -q '"phase":"Failed"' && break
	sleep 0.1
done
FAILED=$(api "$API/tenants/h/runs" | grep -o '"name":"run-[0-9a-z]*","tenant":"h"[^}]*},"spec":{"operation":"apply","trigger":"update"' | sed -n 's/"name":"\([^"]*\)".*/\1/p' | head -n 1)
expect_match "a change that fails is a Failed run" '^run-' "$FAILED"
patch_ng '{"spec":{"count":1,"providerConfig":null}}'
for _ in $(seq 1 600); do # the fix's own run: the tenant is reconciled again
	api "$API/tenants/h" | grep -q '"type":"Reconciled","status":"True"' && break
	sleep 0.1
done
for i in 1 2 3 4; do # four plans, one after the other
	P=$(api -X POST "$API/tenants/h/runs" -d '{"spec":{"operation":"plan"}}' | sed -n 's/.*"name":"\(run-[0-9a-f]*\)".*/\1/p')
	for _ in $(seq 1 300); do
		api "$API/tenants/h/runs/$P" | grep -q '"phase":"Succeeded"' && break
		sleep 0.1
	done
done
expect_eq "Runs are pruned to tofu.run_history, the young failure besides" "4" "$(runs)"
[ "$(runs)" = 4 ] || api "$API/tenants/h/runs" | grep -o '"name":"run-[0-9a-f]*"[^}]*}[^}]*}[^}]*}' | sed 's/^/# /' 
expect_match "the failed run is among them" "\"name\":\"$FAILED\"" "$(api "$API/tenants/h/runs")"
expect_eq "the first run, the oldest, is gone" "0" \
	"$(api "$API/tenants/h/runs" | grep -c '"trigger":"create"')"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
kept=$(sqlite3 "$WORK/data/rezus.db" "SELECT name FROM objects WHERE kind = 'Run' AND tenant = 'h' ORDER BY name" | tr '\n' ' ')
expect_eq "the logs that are left are the kept runs' own" "$kept" \
	"$(find "$WORK/data/work/h" -maxdepth 1 -name '*.log' -printf '%f\n' | sed 's/\.log$//' | sort | tr '\n' ' ')"
done_testing
