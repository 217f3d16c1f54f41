#!/bin/sh
# Rolling upgrades end to end with the real terraform/tofu and the sim plugin, which
# simulates them (machines go Upgrading, Rebooting, then Running with the new version):
# prechecks refuse a downgrade and a two-minor Kubernetes jump at create (422, the check
# named); a dry run reports the prechecks and the plan and changes nothing; an upgrade goes
# one machine at a time, control planes first, through the health gate, then moves the
# tenant's versions and a reconcile run follows; a machine that never comes back is rolled
# back (RolledBack, a Warning Event) and the upgrade stops; cancel stops between machines;
# a daemon killed with -9 mid-upgrade resumes it at the machine it was on; a change of the
# tenant's spec.talosVersion creates an UpgradeRun (trigger spec); runs wait behind an
# upgrade.
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
  interval: 300ms
  fast_interval: 150ms
  stable_interval: 300ms
upgrade:
  machine_timeout: 5s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 500}
CONF
start() {
	if REZUSCLOUD_ADMIN_PASSWORD=upgrade-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
		ok "the daemon starts${1:+ $1}"
	else
		not_ok "the daemon starts${1:+ $1}" "$(cat "$WORK/daemon.log")"
	fi
	API="http://127.0.0.1:$PORT/api/v1"
	TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d '{"username":"admin","password":"upgrade-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
}
start
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" | head -n 1; }
phase_of() { api "$API/tenants/$1/upgrades/$2" | sed -n 's/.*"status":{"phase":"\([A-Za-z]*\)".*/\1/p'; }
# wait_for SECONDS CMD...: until CMD succeeds.
wait_for() {
	n=$(($1 * 10)); shift
	for _ in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
tenant_ready() { api "$API/tenants/$1" | grep -q '"phase":"Ready"'; }
upgrade_phase() { case $(api "$API/tenants/$1/upgrades/$2") in *"\"phase\":\"$3\",\"fromVersion"* | *"\"status\":{\"phase\":\"$3\""*) return 0 ;; esac; return 1; }
ended() { case $(phase_of "$1" "$2") in Succeeded | Failed | Canceled | RolledBack) return 0 ;; esac; return 1; }
patch() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' -X PATCH "$@"; }
# runs_idle TENANT: no Run of the tenant is queued, running or awaiting approval
runs_idle() { ! api "$API/tenants/$1/runs" | grep -q '"phase":"\(Queued\|Running\|AwaitingApproval\)"'; }
make_tenant() { # NAME [WORKER_PROVIDER_CONFIG]
	api -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"clusterProvider\":\"sim\",\"talosVersion\":\"1.11.5\",\"kubernetesVersion\":\"1.34.1\"}}" >/dev/null
	api -X POST "$API/tenants/$1/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
	api -X POST "$API/tenants/$1/nodegroups" -d "{\"metadata\":{\"name\":\"workers\"},\"spec\":{\"role\":\"worker\",\"count\":2,\"providerClass\":\"sim\",\"providerConfig\":${2:-{\}}}}" >/dev/null
}

make_tenant up1
if wait_for 60 tenant_ready up1; then ok "tenant up1 is Ready"; else not_ok "tenant up1 is Ready" "$(api "$API/tenants/up1")"; fi
expect_match "its status records the versions the cluster runs" \
	'"talosVersion":"1.11.5","kubernetesVersion":"1.34.1"' "$(api "$API/tenants/up1")"

# Prechecks at create: 422 naming the check and the field.
r=$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"talos","targetVersion":"1.10.0"}}')
expect_match "a Talos downgrade is refused (422, NoDowngrade)" \
	'"code":422.*"field":"spec.targetVersion".*precheck NoDowngrade: Talos 1.10.0 is older' "$r"
r=$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"kubernetes","targetVersion":"1.20.0"}}')
expect_match "a Kubernetes downgrade from 1.34 to 1.20 is refused" 'precheck NoDowngrade' "$r"
r=$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"kubernetes","targetVersion":"1.36.0"}}')
expect_match "a two-minor Kubernetes jump is refused (OneMinorAtATime)" \
	'"code":422.*precheck OneMinorAtATime: Kubernetes 1.36.0 is more than one minor version after 1.34.1' "$r"
r=$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"kubernetes","targetVersion":"1.35.0"}}')
expect_match "a Kubernetes release the running Talos does not support is refused (Compatible)" \
	'precheck Compatible: Talos 1.11 runs Kubernetes 1.29 to 1.34, not 1.35' "$r"
expect_eq "no UpgradeRun was stored for them" "0" \
	"$(api "$API/tenants/up1/upgrades" | grep -o '"kind":"UpgradeRun"' | wc -l | tr -d ' ')"
expect_eq "an UpgradeRun created through the API cannot claim trigger spec" "422" \
	"$(code -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"talos","targetVersion":"1.12.0","trigger":"spec"}}')"

# A dry run: the prechecks and the plan, nothing changed. The machines are compared but
# for their revisions and lastSeen, which the observer refreshes every few seconds whatever
# runs (a loaded machine's dry run can span one).
machines() { wait_for 30 runs_idle up1; api "$API/tenants/up1/machines" | sed 's/"resourceVersion":"[0-9]*"//g; s/"lastSeen":"[^"]*"//g'; }
before=$(machines)
name=$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"talos","targetVersion":"1.12.0","dryRun":true}}' | field name)
wait_for 10 ended up1 "$name"
d=$(api "$API/tenants/up1/upgrades/$name")
expect_match "the dry run succeeds, saying nothing was changed" '"phase":"Succeeded".*dry run: every precheck passed; nothing was changed' "$d"
expect_match "it lists every precheck, passed" \
	'"prechecks":\[\{"name":"Supported","passed":true.*"name":"NoDowngrade","passed":true.*"name":"OneMinorAtATime","passed":true.*"name":"Compatible","passed":true.*"name":"MachinesReady","passed":true.*"name":"NothingInProgress","passed":true' "$d"
expect_match "and the plan: the control plane first, then the workers, each Pending" \
	'"machines":\[\{"name":"cp-0","role":"controlplane",[^]]*"phase":"Pending"\},\{"name":"workers-0","role":"worker",[^]]*\},\{"name":"workers-1"' "$d"
expect_match "the tenant still wants and runs Talos 1.11.5" '"talosVersion":"1.11.5".*"talosVersion":"1.11.5"' "$(api "$API/tenants/up1")"
expect_eq "no machine was touched by the dry run" "$before" "$(machines)"

# The real upgrade: one machine at a time, control planes first.
curl -sN -H "Authorization: Bearer $TOKEN" "$API/tenants/up1/machines?watch=true" >"$WORK/watch" 2>/dev/null &
WATCH=$!
name=$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"talos","targetVersion":"1.12.0"}}' | field name)
expect_match "an upgrade is created with a generated name" '^upgrade-[0-9a-f]{8}$' "$name"
expect_match "a second upgrade while it is in progress is refused (NothingInProgress)" \
	'"code":422.*precheck NothingInProgress: upgrade upgrade-' \
	"$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"kubernetes","targetVersion":"1.34.2"}}')"
run=$(api -X POST "$API/tenants/up1/runs" -d '{"spec":{"operation":"plan"}}' | field name)
if wait_for 60 ended up1 "$name"; then ok "the upgrade ends"; else not_ok "the upgrade ends" "$(api "$API/tenants/up1/upgrades/$name")"; fi
wait_for 30 sh -c "curl -s -H 'Authorization: Bearer $TOKEN' '$API/tenants/up1/runs/$run' | grep -q '\"startedAt\"'"
r_start=$(api "$API/tenants/up1/runs/$run" | field startedAt)
u_end=$(api "$API/tenants/up1/upgrades/$name" | field finishedAt)
if [ -n "$r_start" ] && [ -n "$u_end" ] && [ ! "$r_start" \< "$u_end" ]; then
	ok "a run asked for during the upgrade started only after it ($r_start >= $u_end)"
else
	not_ok "a run asked for during the upgrade started only after it" "run $r_start, upgrade ended $u_end"
fi
kill "$WATCH" 2>/dev/null
[ -n "${UPGRADE_WATCH_COPY:-}" ] && cp "$WORK/watch" "$UPGRADE_WATCH_COPY"
u=$(api "$API/tenants/up1/upgrades/$name")
expect_match "it succeeded" '"status":\{"phase":"Succeeded"' "$u"
expect_match "every machine's step Succeeded, in plan order" \
	'"name":"cp-0",[^}]*"phase":"Succeeded".*"name":"workers-0",[^}]*"phase":"Succeeded".*"name":"workers-1",[^}]*"phase":"Succeeded"' "$u"
# Order and one at a time: the watch saw each machine go Upgrading; never two at once.
order=$(grep '^data: ' "$WORK/watch" | grep '"stage":"Upgrading"' | sed -n 's/.*"name":"\([a-z0-9-]*\)".*/\1/p' | uniq | tr '\n' ' ')
expect_eq "machines went Upgrading one after the other, control plane first" "cp-0 workers-0 workers-1 " "$order"
expect_match "each went Upgrading, then Rebooting, then Running with the new version" \
	'"name":"workers-1".*"stage":"Upgrading".*"name":"workers-1".*"stage":"Rebooting".*"name":"workers-1".*"stage":"Running".*"talosVersion":"v1.12.0"' \
	"$(grep '^data: ' "$WORK/watch" | tr -d '\n')"
t=$(api "$API/tenants/up1")
expect_match "the tenant's spec wants Talos 1.12.0 now" '"spec":\{[^}]*"talosVersion":"1.12.0"' "$t"
expect_match "and its status says the cluster runs it" '"status":\{.*"talosVersion":"1.12.0"' "$t"
wait_for 20 sh -c "curl -s -H 'Authorization: Bearer $TOKEN' '$API/tenants/up1/runs' | grep -q '\"trigger\":\"\(upgrade\|update\)\"'"
expect_match "a reconcile run followed" '"trigger":"(upgrade|update)"' "$(api "$API/tenants/up1/runs")"
wait_for 30 runs_idle up1
expect_match "Events tell the story" 'UpgradeStarted.*|MachineUpgraded' "$(api "$API/tenants/up1/events")"
ev=$(api "$API/tenants/up1/events")
expect_match "machines rebooting as told are Normal Events" '"reason":"Machine(Upgrading|Rebooting)","message":"the machine is (upgrading|rebooting): not ready until it is back","type":"Normal"' "$ev"
expect_eq "a planned upgrade is no Warning: no MachineNotReady, the tenant never Degraded" "" \
	"$(printf '%s' "$ev" | grep -o '"reason":"\(MachineNotReady\|Degraded\)"' | sort -u | tr '\n' ' ')"

# Kubernetes: once, through a control plane, gated on every node reporting it. The
# reconcile run after the Talos upgrade and the machines' observation after their reboot
# may still be settling: the two prechecks that say "not yet" (MachinesReady,
# NothingInProgress) are asked again, as a user would, until they pass; any other refusal
# fails at once.
k8s_upgrade() {
	r=$(api -X POST "$API/tenants/up1/upgrades" -d '{"spec":{"component":"kubernetes","targetVersion":"1.35.0"}}')
	case $r in *'"kind":"UpgradeRun"'*) return 0 ;; *MachinesReady* | *NothingInProgress*) return 1 ;; esac
	return 0
}
wait_for 30 k8s_upgrade
name=$(echo "$r" | field name)
if [ -n "$name" ] && wait_for 40 ended up1 "$name"; then
	ok "the Kubernetes upgrade ends"
else
	not_ok "the Kubernetes upgrade ends" "created: $r; now: $(api "$API/tenants/up1/upgrades/$name")"
fi
expect_match "it succeeded" '"status":\{"phase":"Succeeded"' "$(api "$API/tenants/up1/upgrades/$name")"
expect_eq "every Machine reports the kubelet v1.35.0" "3" \
	"$(api "$API/tenants/up1/machines" | grep -o '"kubernetesVersion":"v1.35.0"' | wc -l | tr -d ' ')"

# A machine that never comes back is rolled back, and the upgrade stops there.
make_tenant up2 '{"upgradeFailsOn":0}'
wait_for 60 tenant_ready up2
name=$(api -X POST "$API/tenants/up2/upgrades" -d '{"spec":{"component":"talos","targetVersion":"1.12.0"}}' | field name)
if wait_for 60 ended up2 "$name"; then ok "the failing upgrade ends"; else not_ok "the failing upgrade ends" "$(api "$API/tenants/up2/upgrades/$name")"; fi
u=$(api "$API/tenants/up2/upgrades/$name")
expect_match "it ends RolledBack" '"status":\{"phase":"RolledBack"' "$u"
expect_match "the machine past its health gate is RolledBack, saying why" \
	'"name":"workers-0",[^}]*"phase":"RolledBack"[^}]*"error":"health gate: not healthy within 5s: machine workers-0 is Rebooting' "$u"
expect_match "the control plane before it stays upgraded; the worker after it was never touched" \
	'"name":"cp-0",[^}]*"phase":"Succeeded".*"name":"workers-1",[^}]*"phase":"Pending"' "$u"
expect_match "a Warning Event says it was rolled back" '"type":"Warning".*"reason":"UpgradeRolledBack"|"reason":"UpgradeRolledBack".*"type":"Warning"' \
	"$(api "$API/tenants/up2/events")"
expect_match "the tenant still wants Talos 1.11.5" '"spec":\{[^}]*"talosVersion":"1.11.5"' "$(api "$API/tenants/up2")"

# Cancel between machines.
make_tenant up3
wait_for 60 tenant_ready up3
name=$(api -X POST "$API/tenants/up3/upgrades" -d '{"spec":{"component":"talos","targetVersion":"1.12.0"}}' | field name)
wait_for 20 sh -c "curl -s -H 'Authorization: Bearer $TOKEN' '$API/tenants/up3/upgrades/$name' | grep -q '\"current\":\"cp-0\"'"
out=$(HOME="$WORK" REZUSCLOUD_SERVER="http://127.0.0.1:$PORT" REZUSCLOUD_TOKEN="$TOKEN" \
	"$top_builddir/rezusctl" upgrade cancel up3 "$name" 2>&1)
expect_match "rezusctl upgrade cancel is accepted while a machine upgrades" \
	"^upgrade/$name: cancel requested: the upgrade stops before its next machine" "$out"
wait_for 30 ended up3 "$name"
u=$(api "$API/tenants/up3/upgrades/$name")
expect_match "the upgrade ends Canceled after the machine it was on" \
	'"status":\{"phase":"Canceled".*"name":"cp-0",[^}]*"phase":"Succeeded".*"name":"workers-0",[^}]*"phase":"Pending"' "$u"
expect_eq "cancel of an ended upgrade is a 409" "409" "$(code -X POST "$API/tenants/up3/upgrades/$name/cancel")"

# kill -9 mid-upgrade, then resume at the machine it was on.
name=$(api -X POST "$API/tenants/up3/upgrades" -d '{"spec":{"component":"talos","targetVersion":"1.12.0"}}' | field name)
wait_for 20 sh -c "curl -s -H 'Authorization: Bearer $TOKEN' '$API/tenants/up3/upgrades/$name' | grep -q '\"current\":\"workers-0\"'"
kill -9 "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
start "again after kill -9 mid-upgrade"
if wait_for 60 ended up3 "$name"; then ok "the interrupted upgrade ends"; else not_ok "the interrupted upgrade ends" "$(api "$API/tenants/up3/upgrades/$name")"; fi
expect_match "it resumed and succeeded" '"status":\{"phase":"Succeeded"' "$(api "$API/tenants/up3/upgrades/$name")"
expect_match "an Event says where it resumed" 'resumed at machine workers-0' "$(api "$API/tenants/up3/events")"

# A change of spec.talosVersion on a tenant with machines is an upgrade (trigger spec).
wait_for 30 runs_idle up3
r=$(patch "$API/tenants/up3" -d '{"spec":{"talosVersion":"1.10.0"}}')
expect_match "a spec downgrade of a running cluster is refused" '"code":422.*"field":"spec.talosVersion".*NoDowngrade' "$r"
r=$(patch "$API/tenants/up3" -d '{"spec":{"talosVersion":"1.12.1"}}')
expect_match "a spec upgrade is accepted" '"talosVersion":"1.12.1"' "$r"
wait_for 20 sh -c "curl -s -H 'Authorization: Bearer $TOKEN' '$API/tenants/up3/upgrades' | grep -q '\"trigger\":\"spec\"'"
expect_match "it created an UpgradeRun with trigger spec" '"trigger":"spec"' "$(api "$API/tenants/up3/upgrades")"
wait_for 60 sh -c "curl -s -H 'Authorization: Bearer $TOKEN' '$API/tenants/up3' | grep -q '\"status\":{.*\"talosVersion\":\"1.12.1\"'"
expect_match "which moved the cluster to 1.12.1" '"status":\{.*"talosVersion":"1.12.1"' "$(api "$API/tenants/up3")"
expect_eq "every machine reports v1.12.1" "3" \
	"$(api "$API/tenants/up3/machines" | grep -o '"talosVersion":"v1.12.1"' | wc -l | tr -d ' ')"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
