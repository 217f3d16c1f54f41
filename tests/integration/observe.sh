#!/bin/sh
# The status plane end to end, with the real terraform/tofu and the sim plugin: a tenant's
# phase, seen through a real watch, goes Pending -> Provisioning -> Ready as its machines
# come up, with no write by the test; an idle tenant causes no write over several
# intervals; a machine that goes NotReady makes the tenant Degraded; /metrics counts
# tenants by phase and machines by stage; a tenant deleted with nothing applied goes
# without a run; an unknown cluster plugin is refused.
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
observe:
  interval: 500ms
  fast_interval: 200ms
  stable_interval: 1s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 300}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=observe-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"observe-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
metric() { curl -s "http://127.0.0.1:$PORT/metrics" | sed -n "s/^$1 //p"; }

# A real watch of the tenants, started before anything exists; its events go to a file.
curl -sN -H "Authorization: Bearer $TOKEN" "$API/tenants?watch=true" >"$WORK/watch" 2>/dev/null &
WATCH=$!
sleep 0.3
# phases: the phases the watch delivered for tenant obs, consecutive repeats folded.
phases() {
	grep '^data: ' "$WORK/watch" | grep '"name":"obs"' |
		sed -n 's/.*"status":{"phase":"\([A-Za-z]*\)".*/\1/p' | uniq | tr '\n' ' '
}
wait_phase() {
	for _ in $(seq 1 300); do
		case " $(phases)" in *" $1 "*) return 0 ;; esac
		sleep 0.1
	done
	return 1
}

api -X POST "$API/tenants" -d '{"metadata":{"name":"obs"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/obs/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
api -X POST "$API/tenants/obs/nodegroups" -d '{"metadata":{"name":"workers"},"spec":{"role":"worker","count":2,"providerClass":"sim"}}' >/dev/null
wait_phase Ready
expect_eq "through the watch, the phase goes Pending, Provisioning, Ready" \
	"Pending Provisioning Ready " "$(phases)"
m=$(api "$API/tenants/obs/machines")
expect_eq "every Machine is Running and ready" "3 3" \
	"$(printf '%s' "$m" | grep -o '"stage":"Running"' | wc -l | tr -d ' ') $(printf '%s' "$m" | grep -o '"ready":true' | wc -l | tr -d ' ')"
expect_match "with the Talos version it reports and when it was seen" \
	'"talosVersion":"v1.12.0",.*"lastSeen":"20[0-9-]+T[0-9:.]+Z"' "$m"
t=$(api "$API/tenants/obs")
expect_match "the tenant's conditions say why it is Ready" \
	'"type":"MachinesReady","status":"True","reason":"AllReady","message":"3 of 3 machines ready".*"type":"ControlPlaneReady","status":"True","reason":"Healthy"' "$t"
expect_match "and its Ready condition agrees with the phase" \
	'"type":"Ready","status":"True","reason":"Ready","message":"the machines and the control plane are ready"' "$t"
expect_match "and the observed control plane" '"controlPlane":\{"healthy":true,"etcdMembers":1,"nodes":3,"nodesReady":3' "$t"
expect_eq "no error is no field (not an empty one): the Machines' lastError, the tenant's control plane and last run" \
	"0 0" "$(printf '%s' "$m" | grep -c '"lastError"') $(printf '%s' "$t" | grep -c '"error"')"
expect_match "node groups count ready machines, and are Ready" \
	'"desired":2,"total":2,"ready":2,.*"type":"Ready","status":"True","reason":"AllReady"' \
	"$(api "$API/tenants/obs/nodegroups/workers")"
expect_eq "the test wrote nothing but its three creates (audit)" "3" \
	"$(sqlite3 "$WORK/data/rezus.db" "SELECT count(*) FROM audit WHERE user = 'admin' AND verb IN ('create','update','patch','delete')")"

# Idle: observation goes on, and writes nothing.
rev=$(metric rezuscloud_store_revision)
obs=$(metric rezuscloud_observations_total)
sleep 2.2 # more than four observation intervals
expect_eq "an idle tenant causes no write over four intervals" "$rev" "$(metric rezuscloud_store_revision)"
expect_eq "while it is observed all along (its interval backing off to observe.stable_interval, 1s)" "yes" \
	"$([ "$(metric rezuscloud_observations_total)" -ge $((obs + 2)) ] && echo yes || echo "no: $obs -> $(metric rezuscloud_observations_total)")"

out=$(curl -s "http://127.0.0.1:$PORT/metrics")
expect_match "/metrics: tenants by phase" 'rezuscloud_tenants\{phase="Ready"\} 1' "$out"
expect_match "/metrics: machines by stage" 'rezuscloud_machines\{stage="Running"\} 3' "$out"
expect_match "/metrics: probes by outcome" 'rezuscloud_probes_total\{outcome="ok"\} [1-9]' "$out"
if command -v promtool >/dev/null; then
	check "promtool accepts the exposition" sh -c "printf '%s\n' \"\$1\" | promtool check metrics" _ "$out"
fi

# A machine that goes NotReady after Ready: the tenant is Degraded.
expect_eq "ask sim to take workers-1 down" "200" "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH \
	-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' \
	"$API/tenants/obs/nodegroups/workers" -d '{"spec":{"providerConfig":{"notReadyOn":1,"notReadyAfter":0}}}')"
wait_phase Degraded
expect_eq "the tenant goes Degraded" "Pending Provisioning Ready Degraded " "$(phases)"
m=$(api "$API/tenants/obs/machines/workers-1")
expect_match "the machine says why" '"status":\{"ready":false,.*"lastError":"sim: the machine went NotReady[^"]*"' "$m"
expect_match "still Running (the node is what went NotReady)" '"status":\{[^{]*"stage":"Running"' "$m"
expect_match "MachinesReady names lost machines" '"type":"MachinesReady","status":"False","reason":"MachinesLost","message":"2 of 3 machines ready"' \
	"$(api "$API/tenants/obs")"

# Events: what the engine and the observer noticed, repeats counted.
# (two runs at least: on a loaded machine the patch was once followed by two runs; the
# point is one Event counting them, not their number)
for _ in $(seq 1 100); do # the patch's own run (its plan changes nothing) ends too
	api "$API/tenants/obs/events" | grep -q '"reason":"RunSucceeded",[^{]*"count":[2-9]' && break
	sleep 0.1
done
ev=$(api "$API/tenants/obs/events")
expect_match "the observer recorded the machine going NotReady (a Warning)" \
	'"involvedObject":\{"kind":"Machine","name":"workers-1"[^}]*\},"reason":"MachineNotReady","message":"the machine is no longer ready[^"]*","type":"Warning"' "$ev"
expect_match "and the tenant going Degraded" '"kind":"Tenant","name":"obs"[^}]*\},"reason":"Degraded","message":"phase Degraded \(was Ready\)[^"]*","type":"Warning"' "$ev"
expect_eq "every machine's MachineReady, once each" "3" "$(printf '%s' "$ev" | grep -o '"reason":"MachineReady"' | wc -l | tr -d ' ')"
expect_match "the engine's runs, the repeat counted rather than duplicated" \
	'"reason":"RunSucceeded","message":"run run-[0-9a-f]+ \(apply, update\): succeeded","type":"Normal",[^{]*"count":[2-9]' "$ev"
expect_eq "a watch of the Events works for a view of the tenant" "200" \
	"$(curl -s -o /dev/null -m 1 -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants/obs/events?watch=true")"
CTL="$top_builddir/rezusctl"
out=$(REZUSCLOUD_SERVER="http://127.0.0.1:$PORT" REZUSCLOUD_TOKEN="$TOKEN" "$CTL" get events -t obs 2>&1)
expect_match "rezusctl get events lists them" 'Warning +MachineNotReady +machine/workers-1 ' "$out"
out=$(REZUSCLOUD_SERVER="http://127.0.0.1:$PORT" REZUSCLOUD_TOKEN="$TOKEN" "$CTL" describe tenant obs 2>&1)
expect_match "rezusctl describe shows the tenant's recent events" 'Events:.*Warning +Degraded ' "$(printf '%s' "$out" | tr '\n' ' ')"

# Refusals and deletion.
out=$(api -X POST "$API/tenants" -d '{"metadata":{"name":"nope"},"spec":{"clusterProvider":"nosuch"}}')
expect_match "a tenant naming no loaded cluster plugin is refused on the field" \
	'"code":422.*"field":"spec.clusterProvider".*no loaded cluster plugin' "$out"
api -X POST "$API/tenants" -d '{"metadata":{"name":"empty"},"spec":{"clusterProvider":"sim"}}' >/dev/null
expect_eq "a tenant deleted before anything was applied" "202" "$(code -X DELETE "$API/tenants/empty")"
for _ in $(seq 1 100); do
	[ "$(code "$API/tenants/empty")" = "404" ] && break
	sleep 0.1
done
expect_eq "is gone" "404" "$(code "$API/tenants/empty")"
expect_eq "without any run" "1" "$(grep -c 'msg="tenant deleted with nothing to destroy: finalized without a run" tenant=empty' "$WORK/daemon.log")"
expect_eq "nor a run of its own" "0" "$(grep -c 'msg="run finished" tenant=empty' "$WORK/daemon.log")"

api -X DELETE "$API/tenants/obs" >/dev/null
wait_phase Deleting
for _ in $(seq 1 300); do
	[ "$(code "$API/tenants/obs")" = "404" ] && break
	sleep 0.1
done
expect_eq "deleting a tenant shows Deleting until it is gone" "Pending Provisioning Ready Degraded Deleting " "$(phases)"
expect_eq "no credential file is left behind" "" "$(ls -A "$WORK/data/observe")"

# A tenant whose plugin is no longer loaded cannot be destroyed: it says so and stays.
api -X POST "$API/tenants" -d '{"metadata":{"name":"keep"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/keep/nodegroups" -d '{"metadata":{"name":"w"},"spec":{"role":"worker","count":1,"providerClass":"sim"}}' >/dev/null
for _ in $(seq 1 300); do
	case "$(api "$API/tenants/keep")" in *'"type":"Reconciled","status":"True"'*) break ;; esac
	sleep 0.1
done
kill "$WATCH" 2>/dev/null
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
sed -i 's/^  sim: {stageMs: 300}$/  {}/; s/^plugins:$/plugins:/' "$WORK/rezus.conf"
sed -i '/^plugins:$/{N;s/plugins:\n  {}/plugins: {}/}' "$WORK/rezus.conf"
if start_daemon "$WORK/daemon2.log" -c "$WORK/rezus.conf"; then
	ok "it starts again without the sim plugin"
else
	not_ok "it starts again without the sim plugin" "$(cat "$WORK/daemon2.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
expect_eq "deleting the tenant is accepted" "202" "$(code -X DELETE "$API/tenants/keep")"
for _ in $(seq 1 100); do
	case "$(api "$API/tenants/keep")" in *'cannot destroy'*) break ;; esac
	sleep 0.1
done
expect_match "its conditions say the destroy cannot run, and why" \
	'"status":\{"phase":"Deleting".*"type":"Reconciled","status":"False","reason":"RunFailed","message":"cannot destroy: plugin .sim. is not loaded' \
	"$(api "$API/tenants/keep")"
expect_match "and so does a Warning Event" '"reason":"DestroyBlocked","message":"cannot destroy: plugin .sim. is not loaded[^"]*","type":"Warning"' \
	"$(api "$API/tenants/keep/events")"
expect_eq "the tenant stays, with its state" "200" "$(code "$API/tenants/keep")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly again" "0" "$EXIT_STATUS"
done_testing
