#!/bin/sh
# Crash safety of the TF engine: the daemon is killed with SIGKILL while a run's apply is
# under way; the next start marks the run Interrupted, releases the state lock runs held,
# runs the tenant again and it converges; nothing committed before the kill is lost. Then
# tofu.resync keeps running it: a plan that finds nothing applies nothing, and drift an
# operator makes is found (condition Drifted) and corrected. A stop (SIGINT) mid-apply
# interrupts the run and the next start runs the tenant again.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
# A stand-in for tofu that hangs in `apply` while $WORK/hang exists (recording its pid,
# printing one line when $WORK/release appears), and is the real binary otherwise.
cat >"$WORK/tofu-standin" <<SH
#!/bin/sh
if [ "\$1" = apply ] && [ -e "$WORK/hang" ]; then
	echo \$\$ >"$WORK/standin.pid"
	while [ ! -e "$WORK/release" ]; do sleep 0.1; done
	echo '{"@message":"stand-in: released","type":"log"}'
	exec sleep 600
fi
exec "$TF" "\$@"
SH
chmod +x "$WORK/tofu-standin"
touch "$WORK/hang"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $WORK/tofu-standin
  debounce: 200ms
  resync: 3s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
login() {
	API="http://127.0.0.1:$PORT/api/v1"
	TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d '{"username":"admin","password":"crash-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
}
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
q() { sqlite3 "$WORK/data/rezus.db" "$1"; }

REZUSCLOUD_ADMIN_PASSWORD=crash-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
login
api -X POST "$API/tenants" -d '{"metadata":{"name":"acme"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"workers"},"spec":{"role":"worker","count":3,"providerClass":"sim"}}' >/dev/null
for _ in $(seq 1 300); do
	[ -s "$WORK/standin.pid" ] && break
	sleep 0.1
done
expect_match "the run reaches its apply" '^[0-9]+$' "$(cat "$WORK/standin.pid" 2>/dev/null)"
RUN=$(q "SELECT name FROM objects WHERE kind = 'Run' LIMIT 1")
expect_match "and it is Running" '"phase":"Running"' "$(api "$API/tenants/acme/runs/$RUN")"
curl -s -N -H "Authorization: Bearer $TOKEN" "$API/tenants/acme/runs/$RUN/log?follow=true&format=json" >"$WORK/follow.out" &
FOLLOW=$!
sleep 0.5
touch "$WORK/release"
for _ in $(seq 1 100); do
	grep -q 'stand-in: released' "$WORK/follow.out" && break
	sleep 0.1
done
expect_match "a followed log streams what the run has written so far" '^data: .*"type":"planned_change"' "$(cat "$WORK/follow.out")"
expect_match "and new lines as they come" 'data: \{"@message":"stand-in: released","type":"log"\}' "$(cat "$WORK/follow.out")"
QUEUED=$(api -X POST "$API/tenants/acme/runs" -d '{"spec":{"operation":"plan"}}' | sed -n 's/.*"name":"\(run-[0-9a-z]*\)".*/\1/p')
expect_match "a manual run waits behind the running one" '"phase":"Queued"' "$(api "$API/tenants/acme/runs/$QUEUED")"
OBJECTS=$(q "SELECT count(*) FROM objects")
EVENTS=$(q "SELECT max(rv) FROM events")
AUDIT=$(q "SELECT count(*) FROM audit")

kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
for _ in $(seq 1 50); do
	kill -0 "$(cat "$WORK/standin.pid")" 2>/dev/null || break
	sleep 0.1
done
expect_eq "the daemon's death interrupts its tofu (no orphan keeps running)" "gone" \
	"$(kill -0 "$(cat "$WORK/standin.pid")" 2>/dev/null && echo running || echo gone)"
kill -KILL "$(cat "$WORK/standin.pid")" 2>/dev/null
wait "$FOLLOW" 2>/dev/null
rm -f "$WORK/hang"
# What the apply would have held when the process died: a lock taken by the run.
q "INSERT INTO tfstate_locks (tenant, id, info, holder) VALUES ('acme', 'dead-lock', '{\"ID\":\"dead-lock\"}', 'run/$RUN')"

REZUSCLOUD_ADMIN_PASSWORD=crash-test-pw start_daemon "$WORK/daemon2.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts again" "$(cat "$WORK/daemon2.log")"
login
expect_match "the killed run is Interrupted" '"phase":"Interrupted".*"message":"the daemon stopped before the run finished"' "$(api "$API/tenants/acme/runs/$RUN")"
# The run log as the kill left it: every line a follower was sent is on disk, whole.
api "$API/tenants/acme/runs/$RUN/log?format=json" >"$WORK/log-after"
expect_match "its log keeps the last line it was sent before the kill" \
	'^\{"@message":"stand-in: released","type":"log"\}$' "$(cat "$WORK/log-after")"
expect_eq "and no line of tofu's JSON in it is cut" "0" \
	"$(python3 -c 'import json,sys
bad = 0
for l in open(sys.argv[1]):
    if l.startswith("{"):
        try:
            json.loads(l)
        except ValueError:
            bad += 1
print(bad)' "$WORK/log-after")"
expect_match "the queued one too, saying it never started" '"phase":"Interrupted".*"message":"the daemon stopped before the run started"' "$(api "$API/tenants/acme/runs/$QUEUED")"
expect_match "the lock the run held is released, and logged" \
	'msg="released a lock an interrupted run held" tenant=acme holder=run/'"$RUN" "$(cat "$WORK/daemon2.log")"
for _ in $(seq 1 300); do
	case "$(api "$API/tenants/acme")" in *'"type":"Reconciled","status":"True"'*) break ;; esac
	sleep 0.1
done
expect_match "the tenant runs again and converges" '"machines":\{"desired":3,"total":3.*"type":"Reconciled","status":"True"' "$(api "$API/tenants/acme")"
expect_eq "three Machines" "3" "$(api "$API/tenants/acme/machines" | grep -o '"kind":"Machine"' | wc -l | tr -d ' ')"
versions=$(q "SELECT count(*) FROM tfstate_versions WHERE tenant = 'acme'")
before=$(grep -c 'msg="run finished" tenant=acme' "$WORK/daemon2.log")
resyncs() { echo $(($(grep -c 'msg="run finished" tenant=acme' "$WORK/daemon2.log") - before)); }
for _ in $(seq 1 150); do
	[ "$(resyncs)" -ge 2 ] && break
	sleep 0.1
done
expect_eq "tofu.resync runs the converged tenant again" "1" "$([ "$(resyncs)" -ge 2 ] && echo 1)"
expect_match "and it stays reconciled" '"type":"Reconciled","status":"True","reason":"InSync"' "$(api "$API/tenants/acme")"
expect_match "a resync whose plan finds nothing says so (Drifted False, InSync)" \
	'"type":"Drifted","status":"False","reason":"InSync"' "$(api "$API/tenants/acme")"
expect_eq "and stores no Run for it" "0" "$(api "$API/tenants/acme/runs" | grep -c '"trigger":"resync"')"
expect_eq "and runs no tofu apply: the state has no new version" "$versions" \
	"$(q "SELECT count(*) FROM tfstate_versions WHERE tenant = 'acme'")"

# Drift: an operator removes a resource from the state with their own terraform; the next
# resync's plan finds it, the tenant says Drifted, the apply puts it back.
SECRET=$(api -X POST "$API/users/admin/tokens" -d '{"spec":{}}' | sed -n 's/.*"secret":"\([^"]*\)".*/\1/p')
mkdir -p "$WORK/op"
cp "$WORK/data/work/acme/"*.tf.json "$WORK/data/work/acme/terraform.tfvars.json" "$WORK/op/"
for _ in $(seq 1 50); do # a resync may hold the state lock for a moment
	(cd "$WORK/op" && TF_HTTP_PASSWORD="$SECRET" "$TF" init -input=false -reconfigure >/dev/null 2>&1 &&
		TF_HTTP_PASSWORD="$SECRET" "$TF" state rm terraform_data.cluster_secrets >"$WORK/staterm.out" 2>&1) && break
	sleep 0.2
done
expect_match "the operator's terraform removes a resource from the tenant's state" 'Successfully removed 1 resource' "$(cat "$WORK/staterm.out")"
for _ in $(seq 1 200); do
	case "$(api "$API/tenants/acme")" in *'"type":"Drifted","status":"False","reason":"Corrected"'*) break ;; esac
	sleep 0.1
done
expect_match "the next resync finds the drift and applies" 'msg="drift detected: applying" tenant=acme' "$(cat "$WORK/daemon2.log")"
expect_match "then the tenant says it was corrected" \
	'"type":"Drifted","status":"False","reason":"Corrected","message":"run run-[0-9a-z]* applied what the resync plan found"' "$(api "$API/tenants/acme")"
expect_match "and the state holds the resource again" 'cluster_secrets' "$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/tfstate/acme")"
expect_eq "the dead run's lock is not back" "0" "$(q "SELECT count(*) FROM tfstate_locks WHERE holder = 'run/$RUN'")"
expect_eq "no committed object was lost" "1" "$(q "SELECT count(*) >= $OBJECTS FROM objects")"
expect_eq "no event was lost" "1" "$(q "SELECT max(rv) >= $EVENTS FROM events")"
expect_eq "no audit row was lost" "1" "$(q "SELECT count(*) >= $AUDIT FROM audit")"

# A change acknowledged but killed before its run was created (within tofu.debounce) is run
# at the next start; the tenant's own generation did not move, only the node group's.
# tofu.resync is off so that only the start can find it.
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
sed -i -e 's/^  debounce: 200ms$/  debounce: 60s/' -e 's/^  resync: 3s$/  resync: 0s/' "$WORK/rezus.conf"
REZUSCLOUD_ADMIN_PASSWORD=crash-test-pw start_daemon "$WORK/daemon3.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts with a long debounce" "$(cat "$WORK/daemon3.log")"
login
expect_match "a node group scaled to 4 is acknowledged" '"count":4' \
	"$(curl -s -H "Authorization: Bearer $TOKEN" -X PATCH -H 'Content-Type: application/merge-patch+json' \
		-d '{"spec":{"count":4}}' "$API/tenants/acme/nodegroups/workers")"
RUNS=$(q "SELECT count(*) FROM objects WHERE kind = 'Run'")
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
sed -i 's/^  debounce: 60s$/  debounce: 200ms/' "$WORK/rezus.conf"
REZUSCLOUD_ADMIN_PASSWORD=crash-test-pw start_daemon "$WORK/daemon4.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts again" "$(cat "$WORK/daemon4.log")"
login
for _ in $(seq 1 300); do
	[ "$(api "$API/tenants/acme/machines" | grep -o '"kind":"Machine"' | wc -l | tr -d ' ')" = 4 ] && break
	sleep 0.1
done
expect_eq "the start runs the change the kill left unapplied: four Machines" "4" \
	"$(api "$API/tenants/acme/machines" | grep -o '"kind":"Machine"' | wc -l | tr -d ' ')"
expect_eq "through a new run" "1" "$(q "SELECT count(*) > $RUNS FROM objects WHERE kind = 'Run'")"

# A stop (SIGINT, as Ctrl-C) while a first apply is under way: the run ends Interrupted,
# and the next start runs the tenant again until it is Ready (rezuscloud(8), SIGNALS).
rm -f "$WORK/standin.pid" "$WORK/release"
touch "$WORK/hang"
api -X POST "$API/tenants" -d '{"metadata":{"name":"beta"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/beta/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
for _ in $(seq 1 300); do
	[ -s "$WORK/standin.pid" ] && break
	sleep 0.1
done
BRUN=$(q "SELECT name FROM objects WHERE kind = 'Run' AND json_extract(doc, '\$.metadata.tenant') = 'beta' LIMIT 1")
expect_match "beta's first run reaches its apply and is Running" '"phase":"Running"' "$(api "$API/tenants/beta/runs/$BRUN")"
kill -INT "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
expect_eq "SIGINT stops the daemon cleanly mid-apply" "0" "$EXIT_STATUS"
rm -f "$WORK/hang"
REZUSCLOUD_ADMIN_PASSWORD=crash-test-pw start_daemon "$WORK/daemon5.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts after SIGINT" "$(cat "$WORK/daemon5.log")"
login
expect_match "the run the stop cut is Interrupted" '"phase":"Interrupted".*"message":"the daemon stopped"' "$(api "$API/tenants/beta/runs/$BRUN")"
for _ in $(seq 1 300); do
	api "$API/tenants/beta" | grep -q '"phase":"Ready"' && break
	sleep 0.1
done
expect_match "the next start runs beta again: Ready, Reconciled" '"type":"Reconciled","status":"True".*"phase":"Ready"|"phase":"Ready".*"type":"Reconciled","status":"True"' "$(api "$API/tenants/beta")"
expect_eq "through a new run that succeeded" "1" \
	"$(q "SELECT count(*) FROM objects WHERE kind = 'Run' AND json_extract(doc, '\$.metadata.tenant') = 'beta' AND json_extract(doc, '\$.status.phase') = 'Succeeded'")"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
