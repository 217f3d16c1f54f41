#!/bin/sh
# The TF engine end to end with the real terraform/tofu and the sim plugin: spec changes
# become runs, runs apply through the daemon's own state backend, Machines follow the
# state; a failing machine fails the run with its diagnostic until it is fixed; a manual
# plan changes nothing; deleting the tenant destroys everything, then the tenant.
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
  debounce: 300ms
  workers: 1
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $WORK/plugins
plugins:
  sim: {}
  hollow: {}
  randomv1: {}
CONF
mkdir -p "$WORK/plugins"
ln -s "$top_builddir/plugins/.libs/sim.so" "$WORK/plugins/sim.so"
ln -s "$top_builddir/tests/fixtures/plugins/.libs/hollow.so" "$WORK/plugins/hollow.so"
ln -s "$top_builddir/tests/fixtures/plugins/.libs/randomv1.so" "$WORK/plugins/randomv1.so"
if REZUSCLOUD_ADMIN_PASSWORD=engine-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with tofu.binary=$(basename "$TF")"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"engine-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
patch() { curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$@"; }
machines() { api "$API/tenants/acme/machines" | grep -o '"name":"[a-z0-9-]*","tenant"' | sed 's/"name":"\([^"]*\)".*/\1/' | tr '\n' ' '; }
# wait_run N: until the tenant has N runs and the newest finished; prints its phase.
last_phase() { api "$API/tenants/acme" | sed -n 's/.*"lastRun":{[^}]*"phase":"\([A-Za-z]*\)".*/\1/p'; }
wait_runs() {
	for _ in $(seq 1 300); do
		n=$(api "$API/tenants/acme/runs" | grep -o '"kind":"Run"' | wc -l)
		done_runs=$(api "$API/tenants/acme/runs" | grep -o '"phase":"\(Succeeded\|Failed\)"' | wc -l)
		[ "$n" -ge "$1" ] && [ "$done_runs" -ge "$1" ] && break
		sleep 0.1
	done
	last_phase
}

# three changes within tofu.debounce (300 ms): one curl, one connection, so that a loaded
# machine does not stretch them apart
api -o /dev/null -X POST "$API/tenants" -d '{"metadata":{"name":"acme"},"spec":{"clusterProvider":"sim"}}' \
	--next -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' \
	--next -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"workers"},"spec":{"role":"worker","count":2,"providerClass":"sim"}}'
expect_eq "the first run succeeds" "Succeeded" "$(wait_runs 1)"
expect_eq "the three changes made one run (debounce)" "1" "$(api "$API/tenants/acme/runs" | grep -o '"kind":"Run"' | wc -l | tr -d ' ')"
expect_eq "three Machines follow the state" "cp-0 workers-0 workers-1 " "$(machines)"
expect_match "the run counted its changes" '"changes":\{"add":4,"change":0,"destroy":0\}' "$(api "$API/tenants/acme/runs")"
expect_match "applied, the tenant is Provisioning: no machine is observed ready yet" \
	'"status":\{"phase":"Provisioning".*"machines":\{"desired":3,"total":3,"ready":0\}.*"type":"Reconciled","status":"True"' \
	"$(api "$API/tenants/acme")"

expect_match "MachinesReady counts what observation reported (nothing yet)" \
	'"type":"MachinesReady","status":"False","reason":"NotAllReady","message":"0 of 3 machines ready"' "$(api "$API/tenants/acme")"
expect_match "node groups get their counts and a Ready condition" \
	'"status":\{"desired":2,"total":2,"ready":0,"observedGeneration":1,"conditions":\[\{"type":"Ready","status":"False","reason":"NotAllReady","message":"0 of 2 machines ready \(2 exist\)"' \
	"$(api "$API/tenants/acme/nodegroups/workers")"
expect_eq "a machine's observed readiness (a status write)" "200" "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH \
	-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' \
	"$API/tenants/acme/machines/cp-0/status" -d '{"status":{"ready":true}}')"
for _ in $(seq 1 50); do
	case "$(api "$API/tenants/acme")" in *'"message":"1 of 3 machines ready"'*) break ;; esac
	sleep 0.1
done
expect_match "observation recounts the tenant at once, with no run" \
	'"machines":\{"desired":3,"total":3,"ready":1\}.*"message":"1 of 3 machines ready"' "$(api "$API/tenants/acme")"
expect_match "and its node group" '"status":\{"desired":1,"total":1,"ready":1,' "$(api "$API/tenants/acme/nodegroups/cp")"
expect_match "which is Ready" '"type":"Ready","status":"True","reason":"AllReady"' "$(api "$API/tenants/acme/nodegroups/cp")"
expect_match "the tenant is not: its Ready follows its phase" \
	'"type":"Ready","status":"False","reason":"Provisioning","message":"1 of 3 machines ready"' "$(api "$API/tenants/acme")"
expect_eq "a status write starts no run" "1" "$(api "$API/tenants/acme/runs" | grep -o '"kind":"Run"' | wc -l | tr -d ' ')"

# The credentials endpoints serve the sensitive outputs the apply left, kept encrypted.
code=$(curl -s -o "$WORK/kubeconfig" -D "$WORK/kc.headers" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants/acme/kubeconfig")
expect_eq "GET kubeconfig after the first apply is 200" "200" "$code"
expect_match "as a YAML download" 'Content-Type: application/yaml.*Content-Disposition: attachment; filename="acme-kubeconfig.yaml"' \
	"$(tr -d '\r' <"$WORK/kc.headers" | tr '\n' ' ')"
if command -v kubectl >/dev/null; then
	expect_eq "which kubectl loads" "admin@acme https://10.99.24.10:6443" \
		"$(kubectl config view --kubeconfig "$WORK/kubeconfig" -o jsonpath='{.current-context} {.clusters[0].cluster.server}' 2>&1)"
fi
KTOKEN=$(sed -n 's/^ *token: *//p' "$WORK/kubeconfig")
expect_match "with the cluster's secret interpolated" '^[0-9a-f-]{36}$' "$KTOKEN"
expect_eq "the secret is nowhere in the database in clear" "0" \
	"$(cat "$WORK/data/rezus.db"* | grep -c -a "$KTOKEN")"
expect_eq "nor anywhere else in the data dir: work dirs, plans, run logs" "" \
	"$(grep -r -l -a -F "$KTOKEN" "$WORK/data" | grep -v '/rezus\.db' | sed "s|$WORK/||")"
expect_match "talosconfig too" '^context: acme' "$(curl -s -H "Authorization: Bearer $TOKEN" "$API/tenants/acme/talosconfig")"
api -X POST "$API/users" -d '{"metadata":{"name":"vi"},"spec":{"role":"view","password":"viewer-pw-1"}}' >/dev/null
VTOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"vi","password":"viewer-pw-1"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
expect_eq "a view user may not download credentials (403)" "403" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $VTOKEN" "$API/tenants/acme/kubeconfig")"
expect_eq "every download is audited, refused ones too" "200 200 403" \
	"$(sqlite3 "$WORK/data/rezus.db" "SELECT group_concat(code, ' ') FROM audit WHERE verb = 'download-credentials' AND tenant = 'acme'")"
expect_eq "an unknown tenant's kubeconfig is 404" "404" \
	"$(api -o /dev/null -w '%{http_code}' "$API/tenants/nobody/kubeconfig")"

FIRST=$(grep 'msg="run finished" tenant=acme' "$WORK/daemon.log" | sed -n '1s/.* run=\(run-[0-9a-z]*\).*/\1/p')
expect_match "the tenant's first run says it was its creation" '"trigger":"create"' "$(api "$API/tenants/acme/runs/$FIRST")"
expect_match "the run's log is its tofu output" '"type":"apply_complete"' "$(api "$API/tenants/acme/runs/$FIRST/log?format=json")"
out=$(curl -s -N -H "Authorization: Bearer $TOKEN" "$API/tenants/acme/runs/$FIRST/log?follow=true&format=json")
expect_match "follow=true on a finished run: its lines as events" '^data: .*"type":"apply_complete"' "$out"
expect_eq "then an end event with its phase" "event: end|data: Succeeded|" "$(printf '%s\n' "$out" | tail -n 2 | tr '\n' '|')"
expect_eq "the plan's JSON (sensitive values in clear) stays out of the log" "" \
	"$(api "$API/tenants/acme/runs/$FIRST/log?format=json" | grep -o '"format_version"' | head -n 1)"
expect_eq "the log of an unknown run is 404" "404" "$(api -o /dev/null -w '%{http_code}' "$API/tenants/acme/runs/run-00000000/log")"

patch -X PATCH "$API/tenants/acme/nodegroups/workers" -d '{"spec":{"count":4}}'
expect_eq "scaling to 4 workers runs again" "Succeeded" "$(wait_runs 2)"
expect_eq "five Machines" "cp-0 workers-0 workers-1 workers-2 workers-3 " "$(machines)"
expect_match "is counted by the next run, and survives it" '"machines":\{"desired":5,"total":5,"ready":1\}.*"message":"1 of 5 machines ready"' "$(api "$API/tenants/acme")"

api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"flaky"},"spec":{"role":"worker","count":1,"providerClass":"sim","providerConfig":{"failOn":0}}}' >/dev/null
expect_eq "a failOn machine fails the run" "Failed" "$(wait_runs 3)"
expect_match "with the diagnostic" 'machine flaky-0 fails, as providerConfig.failOn asks' "$(api "$API/tenants/acme/runs")"
expect_match "the tenant shows the failure" '"phase":"Failed".*"type":"Reconciled","status":"False"' "$(api "$API/tenants/acme")"
patch "$API/tenants/acme/nodegroups/flaky" -d '{"spec":{"providerConfig":{"failOn":null}}}'
expect_eq "fixed, the next run succeeds" "Succeeded" "$(wait_runs 4)"
expect_match "and the machine appears" 'flaky-0' "$(machines)"

api -X POST "$API/tenants/acme/runs" -d '{"spec":{"operation":"plan"}}' >/dev/null
expect_eq "a manual plan run succeeds" "Succeeded" "$(wait_runs 5)"
expect_eq "and changes nothing" "cp-0 flaky-0 workers-0 workers-1 workers-2 workers-3 " "$(machines)"

# tofu.destroy_approval (on by default): a plan that destroys waits for an edit-role user.
# awaiting N: the name of the Nth run that stopped to await approval.
awaiting() {
	for _ in $(seq 1 300); do
		r=$(grep 'run awaits approval' "$WORK/daemon.log" | sed -n "$1s/.* run=\(run-[0-9a-z]*\).*/\1/p")
		[ -n "$r" ] && break
		sleep 0.1
	done
	echo "$r"
}
run_phase() { api "$API/tenants/acme/runs/$1" | sed -n 's/.*"phase":"\([A-Za-z]*\)".*/\1/p'; }
wait_phase() {
	for _ in $(seq 1 300); do
		[ "$(run_phase "$1")" = "$2" ] && break
		sleep 0.1
	done
	run_phase "$1"
}
patch "$API/tenants/acme/nodegroups/flaky" -d '{"spec":{"count":0}}'
RUN=$(awaiting 1)
expect_match "scaling flaky to 0 plans a destroy that awaits approval" '^run-' "$RUN"
expect_match "the waiting run shows what it would destroy" '"changes":\{"add":0,"change":0,"destroy":1\}' "$(api "$API/tenants/acme/runs/$RUN")"
expect_match "resource by resource, naming the Machine it is" \
	'"plan":\{"resources":\[\{"address":"terraform_data.flaky\[0\]","action":"delete",[^}]*"machine":"flaky-0"\}\]\}' \
	"$(api "$API/tenants/acme/runs/$RUN")"
expect_match "the machine is still there" 'flaky-0' "$(machines)"
expect_eq "the waiting run's plan (the state in clear) is its own file, 0600" "600" \
	"$(stat -c %a "$WORK/data/work/acme/$RUN.plan" 2>&1)"
expect_match "the tenant is not Reconciled while the run waits, and says why" \
	'"type":"Reconciled","status":"False","reason":"AwaitingApproval","message":"run '"$RUN"' waits for approval: its plan destroys 1 resource"' \
	"$(api "$API/tenants/acme")"
expect_match "a Warning Event says it too" '"reason":"RunAwaitingApproval","message":"run '"$RUN"' waits for approval[^"]*","type":"Warning"' \
	"$(api "$API/tenants/acme/events")"
api -X POST "$API/tenants" -d '{"metadata":{"name":"other"},"spec":{"clusterProvider":"sim"}}' >/dev/null
for _ in $(seq 1 300); do
	grep -q 'msg="run finished" tenant=other' "$WORK/daemon.log" && break
	sleep 0.1
done
expect_match "with one worker, another tenant runs while the approval waits" \
	'msg="run finished" tenant=other run=run-[0-9a-f]* operation=apply phase=Succeeded' "$(cat "$WORK/daemon.log")"
expect_eq "approving an unknown run is 404" "404" "$(api -o /dev/null -w '%{http_code}' -X POST "$API/tenants/acme/runs/run-00000000/approve")"
expect_eq "cancel stops it" "200" "$(api -o /dev/null -w '%{http_code}' -X POST "$API/tenants/acme/runs/$RUN/cancel")"
expect_eq "the run is Canceled" "Canceled" "$(wait_phase "$RUN" Canceled)"
expect_match "Reconciled then says the run was canceled" '"type":"Reconciled","status":"False","reason":"RunCanceled"' \
	"$(api "$API/tenants/acme")"
expect_match "and destroyed nothing" 'flaky-0' "$(machines)"
expect_eq "a finished run cannot be approved (409)" "409" "$(api -o /dev/null -w '%{http_code}' -X POST "$API/tenants/acme/runs/$RUN/approve")"
api -X POST "$API/tenants/acme/runs" -d '{"spec":{"operation":"apply"}}' >/dev/null
RUN2=$(awaiting 2)
# A speculative plan never touches the apply that waits: it queues behind it.
PLAN=$(api -X POST "$API/tenants/acme/runs" -d '{"spec":{"operation":"plan"}}' | sed -n 's/.*"name":"\(run-[0-9a-z]*\)".*/\1/p')
sleep 1
expect_eq "a manual plan leaves the waiting apply alone" "AwaitingApproval" "$(run_phase "$RUN2")"
expect_eq "and waits its turn" "Queued" "$(run_phase "$PLAN")"
expect_match "a manual apply plans the destroy again and waits" '^run-' "$RUN2"
expect_eq "an approval's body is only a reason (422 otherwise)" "422" \
	"$(api -o /dev/null -w '%{http_code}' -X POST "$API/tenants/acme/runs/$RUN2/approve" -d '{"reason":7}')"
expect_eq "approve lets it apply" "200" "$(api -o /dev/null -w '%{http_code}' -X POST "$API/tenants/acme/runs/$RUN2/approve" -d '{"reason":"flaky is retired"}')"
expect_match "the run records who approved it and why" '"approvedBy":"admin","approvalReason":"flaky is retired"' \
	"$(api "$API/tenants/acme/runs/$RUN2")"
expect_eq "and so does the audit row" "admin|200|reason: flaky is retired" \
	"$(sqlite3 "$WORK/data/rezus.db" "SELECT user, code, detail FROM audit WHERE verb = 'approve' AND name = '$RUN2' AND code = 200")"
expect_eq "the approved run succeeds" "Succeeded" "$(wait_phase "$RUN2" Succeeded)"
expect_eq "then the plan runs" "Succeeded" "$(wait_phase "$PLAN" Succeeded)"
expect_eq "no plan outlives its run" "" "$(find "$WORK/data/work" -name '*.plan')"
expect_eq "what tofu writes is the daemon's alone (no file readable by others)" "" \
	"$(find "$WORK/data/work/acme" -perm /o+r -type f | head -n 3)"
expect_eq "and the machine is gone" "cp-0 workers-0 workers-1 workers-2 workers-3 " "$(machines)"
expect_match "approve and cancel are audited" 'approve.*cancel|cancel.*approve' "$(sqlite3 "$WORK/data/rezus.db" 'SELECT group_concat(verb) FROM audit')"

patch "$API/tenants/acme/nodegroups/workers" -d '{"spec":{"count":3}}'
RUN3=$(awaiting 3)
expect_match "scaling workers down awaits approval too" '^run-' "$RUN3"
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $TOKEN" "$API/tenants/acme"
for _ in $(seq 1 300); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants/acme")" = 404 ] && break
	sleep 0.1
done
expect_eq "deleting the tenant destroys it, then it is gone" "404" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants/acme")"
expect_match "deleting the tenant superseded the waiting run" "run=$RUN3 operation=apply phase=Canceled error=\"superseded by a newer change\"" "$(cat "$WORK/daemon.log")"
expect_eq "with its machines" "" "$(api "$API/machines" | grep -o '"kind":"Machine"')"
expect_eq "and its state" "0" "$(sqlite3 "$WORK/data/rezus.db" "SELECT count(*) FROM tfstate_versions WHERE tenant = 'acme'")"
expect_eq "and its kept credentials" "0" "$(sqlite3 "$WORK/data/rezus.db" "SELECT count(*) FROM tenant_outputs WHERE tenant = 'acme'")"
expect_eq "and its working directory and run logs" "no" "$([ -e "$WORK/data/work/acme" ] && echo yes || echo no)"
expect_eq "after the deletion too, its secret is nowhere in the data dir" "" "$(grep -r -l -a -F "$KTOKEN" "$WORK/data")"
expect_match "the destroy run was logged" 'operation=destroy phase=Succeeded' "$(cat "$WORK/daemon.log")"

# A render with no resources for a tenant whose state holds some is refused, not planned away.
api -X POST "$API/tenants" -d '{"metadata":{"name":"hollow"},"spec":{"clusterProvider":"hollow"}}' >/dev/null
for _ in $(seq 1 300); do
	grep -q 'msg="run finished" tenant=hollow' "$WORK/daemon.log" && break
	sleep 0.1
done
expect_match "a tenant that renders nothing and holds nothing applies" \
	'msg="run finished" tenant=hollow run=run-[0-9a-f]* operation=apply phase=Succeeded' "$(cat "$WORK/daemon.log")"
expect_match "a tenant with no kubeconfig output yet gets 409, saying why" \
	'"message":"tenant \\"hollow\\" has no kubeconfig yet: it is written by the first successful apply","reason":"Conflict","code":409' \
	"$(api -w '%{http_code}' "$API/tenants/hollow/kubeconfig")"
SU="http://127.0.0.1:$PORT/tfstate/hollow"
LINEAGE=$(curl -s -H "Authorization: Bearer $TOKEN" "$SU" | sed -n 's/.*"lineage": *"\([^"]*\)".*/\1/p')
[ -n "$LINEAGE" ] || LINEAGE=5f0c1a52-0000-4000-8000-000000000001
expect_eq "state with a resource is written for it" "200" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "Authorization: Bearer $TOKEN" -X POST "$SU" -d '{"version":4,"terraform_version":"1.11.4","serial":90,"lineage":"'"$LINEAGE"'","outputs":{},"resources":[{"mode":"managed","type":"terraform_data","name":"keep","provider":"provider[\"terraform.io/builtin/terraform\"]","instances":[{"schema_version":0,"attributes":{"id":"keep"}}]}],"check_results":null}')"
HR=$(api -X POST "$API/tenants/hollow/runs" -d '{"spec":{"operation":"apply"}}' | sed -n 's/.*"name":"\(run-[0-9a-z]*\)".*/\1/p')
for _ in $(seq 1 300); do
	case "$(api "$API/tenants/hollow/runs/$HR")" in *'"phase":"Failed"'*) break ;; esac
	sleep 0.1
done
expect_match "an empty render over a non-empty state fails the run, saying why" \
	'"phase":"Failed".*"message":"the render has no resources but the tenant.s state holds 1: refusing' \
	"$(api "$API/tenants/hollow/runs/$HR")"
for _ in $(seq 1 200); do
	[ "$(grep -c 'msg="run finished" tenant=hollow' "$WORK/daemon.log")" -ge 3 ] && break
	sleep 0.1
done
expect_match "a failed run is retried with backoff" 'msg="run failed: retrying" tenant=hollow in=10s' "$(cat "$WORK/daemon.log")"
expect_eq "the retry runs by itself (and fails again, still guarded)" "2" \
	"$(grep -c 'msg="run finished" tenant=hollow run=run-[0-9a-z]* operation=apply phase=Failed' "$WORK/daemon.log")"
expect_match "the next wait doubles" 'msg="run failed: retrying" tenant=hollow in=20s' "$(cat "$WORK/daemon.log")"
expect_match "and the state keeps its resource" '"name": *"keep"' "$(curl -s -H "Authorization: Bearer $TOKEN" "$SU")"

# A step that fails without a JSON diagnostic (init has none: it prints text) still leaves
# one: its last error lines. randomv1 needs a provider that cannot be downloaded here.
api -X POST "$API/tenants" -d '{"metadata":{"name":"noinit"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/noinit/nodegroups" -d '{"metadata":{"name":"r"},"spec":{"role":"worker","count":1,"providerClass":"randomv1"}}' >/dev/null
for _ in $(seq 1 300); do
	grep -q 'msg="run finished" tenant=noinit' "$WORK/daemon.log" && break
	sleep 0.1
done
out=$(api "$API/tenants/noinit/runs")
expect_match "an init failure says so" '"message":"tofu init failed \(see the run.s diagnostics and log\)"' "$out"
expect_match "and its diagnostics hold init's own error" \
	'"diagnostics":\[\{"severity":"error","summary":"tofu init failed","detail":"[^}]*Error: [^}]*provider' "$out"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
