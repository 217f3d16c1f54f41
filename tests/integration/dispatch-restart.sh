#!/bin/sh
# Remote runners' failure semantics (docs/runners.md, "Failures"): nats-server with JetStream
# on loopback, the daemon with the sim plugin and the real terraform, runner a (a tofu
# stand-in that can hold a step until told to go on).
# - the daemon stopped, then killed (-9), while runner a holds a plan: the runner's lines while it
#   is down are consumed after the restart, its state access with the run's first secret is
#   still accepted, show and apply follow, the run Succeeds with one "Apply complete!";
# - kill -9 of the daemon and of the runner: after the restart the run ends Interrupted
#   (runner lost), its secret refused, a Warning Event RunnerLost names runner and run;
# - nats-server stopped while an apply is held, the apply finishing while NATS is down, then
#   NATS back (same store): the run Succeeds, one apply, nothing left Running;
# - a run no Ready runner serves: stored Queued without a slot, its condition Scheduled False
#   (NoRunner), naming the pool;
#   a runner with another runner's token is refused (403) and claims nothing; with its own
#   token it claims the step: Scheduled True (Claimed), naming it.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! grep -q 'define HAVE_LIBNATS 1' "$top_builddir/config.h" 2>/dev/null; then
	echo "1..0 # SKIP built without libnats"
	exit 0
fi
TF=$(command -v terraform || command -v tofu || true)
if [ -z "$TF" ]; then
	echo "not ok 1 - terraform is installed (tools/install-deps)"
	echo "1..1"
	exit 1
fi
export HOME="$WORK/home"
mkdir -p "$HOME"
nats_prepare 3
DPORT=$(free_port) # fixed: the runners reach the restarted daemon at the same address
umask 077
RA=""
RC=""
stop_all() {
	for p in $RA $RC $NATS_PID; do kill -KILL "$p" 2>/dev/null; done
	cleanup
}
trap stop_all EXIT
start_nats || not_ok "nats-server starts" "$(cat "$WORK/nats.log")"

cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:$DPORT
  data_dir: $WORK/data
tofu:
  binary: $TF
  workers: 1
  debounce: 1s
  destroy_approval: false
  resync: 0s
runners:
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: daemon
  nats_password_file: $WORK/daemon.pw
  heartbeat_timeout: 3s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
PW=restart-test-pw
REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts" "$(tail -n 5 "$WORK/daemon.log")"
BASE="http://127.0.0.1:$DPORT"
API="$BASE/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$PW\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
patch() { curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' -X PATCH "$API/$1" -d "$2"; }
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }
kill_daemon() {
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
}
start_again() { # the same configuration and data
	start_daemon "$WORK/daemon.log.$1" -c "$WORK/rezus.conf" ||
		not_ok "the daemon starts again" "$(tail -n 5 "$WORK/daemon.log.$1")"
}
for n in a c; do
	api -X POST "$API/users/admin/tokens" -d "{\"spec\":{\"scope\":\"runner\",\"runner\":\"$n\"}}" | js 'd["secret"]' >"$WORK/runner-$n.token"
done

# The stand-in: terraform, but with WORK/hold-STEP present the step says so (WORK/held),
# keeps the run's secret (WORK/secret), notes once that the daemon is down (a line the
# runner publishes meanwhile), and waits for WORK/go; WORK/applied counts the applies done.
cat >"$WORK/tofu" <<SH
#!/bin/sh
if [ -f "$WORK/hold-\$1" ]; then
	rm -f "$WORK/hold-\$1"
	printf '%s\n' "\$TF_HTTP_PASSWORD" >"$WORK/secret"
	echo \$\$ >"$WORK/standin.pid"
	echo "stand-in holds \$1"
	touch "$WORK/held"
	down=""
	for _ in \$(seq 1 1200); do
		[ -f "$WORK/go" ] && break
		if [ -z "\$down" ] && ! curl -s -m 1 -o /dev/null "$BASE/healthz"; then
			down=1
			echo "stand-in: the daemon is down"
			touch "$WORK/saw-down"
		fi
		sleep 0.1
	done
	rm -f "$WORK/go"
	echo "stand-in goes on with \$1"
fi
"$TF" "\$@"
rc=\$?
[ "\$1" = apply ] && [ \$rc -eq 0 ] && echo x >>"$WORK/applied"
[ "\$1" = apply ] && touch "$WORK/apply-done"
exit \$rc
SH
chmod 755 "$WORK/tofu"
runner_conf() { # NAME LABEL TOKENFILE [HEARTBEAT]
	cat >"$WORK/$1.conf" <<CONF
tofu:
  binary: $WORK/tofu
runner:
  name: $1
  labels: [$2]
  heartbeat: ${4:-1s}
  concurrency: 1
  work_dir: $WORK/$1-work
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: runner
  nats_password_file: $WORK/runner.pw
  daemon_url: $BASE
  token_file: $3
CONF
}
runner_conf a region=a "$WORK/runner-a.token"
start_runner_a() {
	"$REZUSCLOUD" runner -c "$WORK/a.conf" >>"$WORK/a.log" 2>&1 &
	RA=$!
}
start_runner_a
phase() { api "$API/runners/$1" | js 'd.get("status",{}).get("phase","")'; }
for _ in $(seq 1 100); do [ "$(phase a)" = Ready ] && break; sleep 0.1; done
expect_eq "runner a is Ready" "Ready" "$(phase a)"

tenant() { # NAME [SELECTOR JSON]
	api -o /dev/null -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"clusterProvider\":\"sim\"${2:+,\"runnerSelector\":$2}}}"
	api -o /dev/null -X POST "$API/tenants/$1/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
}
wait_file() { for _ in $(seq 1 "${2:-600}"); do [ -f "$1" ] && return 0; sleep 0.1; done; return 1; }
the_run() { api "$API/tenants/$1/runs" | js '[i for i in d["items"] if i["status"].get("phase")=="Running"][0]["metadata"]["name"]'; }
runphase() { api "$API/tenants/$1/runs/$2" | js 'd["status"].get("phase","")'; }
wait_phase() { # TENANT RUN PHASE: until the run has PHASE, or another one it keeps
	for _ in $(seq 1 900); do
		case "$(runphase "$1" "$2")" in
		"$3") return 0 ;;
		Succeeded | Failed | Interrupted | Canceled) return 1 ;;
		esac
		sleep 0.1
	done
	return 1
}
runlog() { api "$API/tenants/$1/runs/$2/log"; }
cond() { # TENANT RUN: the Scheduled condition as "status reason message"
	api "$API/tenants/$1/runs/$2" | js '" ".join([[c["status"], c.get("reason",""), c.get("message","")] for c in d["status"].get("conditions",[]) if c["type"]=="Scheduled"][0])'
}
events() { # TENANT REASON: the messages of its Events of that reason
	api "$API/tenants/$1/events" | js '"\n".join(i.get("message","") for i in d["items"] if i.get("reason")=="'"$2"'")'
}

# 1. kill -9 of the daemon while runner a holds t1's plan.
touch "$WORK/hold-plan"
tenant t1
wait_file "$WORK/held"
R1=$(the_run t1)
# stopped first, then killed: the line the runner publishes meanwhile reaches the stopped
# daemon's socket and dies with it, delivered to it but never acknowledged
kill -STOP "$DAEMON_PID"
wait_file "$WORK/saw-down" 100
check "the runner's stand-in noted the daemon down (a line published meanwhile)" test -f "$WORK/saw-down"
sleep 1
kill_daemon
start_again 1
code=$(curl -s -o /dev/null -w '%{http_code}' -u "rezus:$(cat "$WORK/secret")" "$BASE/tfstate/t1")
expect_match "the restarted daemon accepts the run's secret for its state" '^(200|204|404)$' "$code"
expect_eq "the run is still Running after the restart" "Running" "$(runphase t1 "$R1")"
touch "$WORK/go"
wait_phase t1 "$R1" Succeeded
expect_eq "taken up again, run $R1 Succeeds" "Succeeded" "$(runphase t1 "$R1")"
log=$(runlog t1 "$R1")
expect_match "its log has the line the runner published while the daemon was down" 'stand-in: the daemon is down' "$log"
expect_match "and what followed" 'stand-in goes on with plan' "$log"
expect_eq "one apply: \"Apply complete!\" once in its log" "1" "$(printf '%s\n' "$log" | grep -c 'Apply complete!')"
expect_eq "one apply done by the runner" "1" "$(wc -l <"$WORK/applied" | tr -d ' ')"
expect_eq "its plan's changes are recorded" "yes" "$(api "$API/tenants/t1/runs/$R1" | js '"yes" if d["status"]["changes"]["add"] >= 1 else "no"')"
expect_eq "t1 has its machine" "1" "$(api "$API/tenants/t1/machines" | js 'len(d["items"])')"
expect_match "an Event says the run was taken up again" "$R1.*taken up again" "$(events t1 RunTakenUp)"
expect_match "Scheduled: True, claimed by runner a" '^True Claimed claimed by runner a$' "$(cond t1 "$R1")"
expect_eq "no grant and no lock of it left" "0 0" "$(sqlite3 "file:$WORK/data/rezus.db?mode=ro" "SELECT (SELECT count(*) FROM run_grants WHERE run = '$R1') || ' ' || (SELECT count(*) FROM tfstate_locks WHERE holder = 'run/$R1')")"

# 2. kill -9 of the daemon and of the runner: the run ends Interrupted once the runner stays
# silent for runners.heartbeat_timeout after the restart.
rm -f "$WORK/held" "$WORK/saw-down"
touch "$WORK/hold-plan"
patch tenants/t1/nodegroups/cp '{"spec":{"count":2}}'
wait_file "$WORK/held"
R2=$(the_run t1)
kill -KILL "$RA"
wait "$RA" 2>/dev/null
RA=""
kill -KILL "$(cat "$WORK/standin.pid")" 2>/dev/null
kill_daemon
start_again 2
wait_phase t1 "$R2" Interrupted
expect_eq "runner gone after the restart: run $R2 is Interrupted" "Interrupted" "$(runphase t1 "$R2")"
expect_match "saying the runner was lost" "runner a was lost" "$(api "$API/tenants/t1/runs/$R2" | js 'd["status"].get("message","")')"
code=$(curl -s -o /dev/null -w '%{http_code}' -u "rezus:$(cat "$WORK/secret")" "$BASE/tfstate/t1")
expect_eq "its secret is refused (401)" "401" "$code"
expect_match "a Warning Event RunnerLost names the runner and the run" "run $R2 .*runner a was lost" "$(events t1 RunnerLost)"
expect_eq "no grant of it left" "0" "$(sqlite3 "file:$WORK/data/rezus.db?mode=ro" "SELECT count(*) FROM run_grants WHERE run = '$R2'")"
start_runner_a
for _ in $(seq 1 100); do [ "$(phase a)" = Ready ] && break; sleep 0.1; done
for _ in $(seq 1 900); do
	[ "$(api "$API/tenants/t1/machines" | js 'len(d["items"])')" = 2 ] && [ -z "$(the_run t1)" ] && break
	sleep 0.1
done
expect_eq "the tenant runs again: both machines" "2" "$(api "$API/tenants/t1/machines" | js 'len(d["items"])')"

# 3. NATS stopped while an apply is held; the apply finishes while NATS is down.
rm -f "$WORK/held" "$WORK/applied" "$WORK/apply-done"
touch "$WORK/hold-apply"
patch tenants/t1/nodegroups/cp '{"spec":{"count":3}}'
wait_file "$WORK/held"
R3=$(the_run t1)
kill -TERM "$NATS_PID"
wait "$NATS_PID" 2>/dev/null
NATS_PID=""
touch "$WORK/go"
wait_file "$WORK/apply-done"
check "the apply finished while NATS was down" test -f "$WORK/apply-done"
start_nats
wait_phase t1 "$R3" Succeeded
expect_eq "NATS back: run $R3 Succeeds" "Succeeded" "$(runphase t1 "$R3")"
expect_eq "one apply done by the runner" "1" "$(wc -l <"$WORK/applied" | tr -d ' ')"
expect_eq "\"Apply complete!\" once in its log" "1" "$(runlog t1 "$R3" | grep -c 'Apply complete!')"
expect_eq "t1 has three machines" "3" "$(api "$API/tenants/t1/machines" | js 'len(d["items"])')"
expect_eq "no run of t1 is left Running" "0" "$(api "$API/tenants/t1/runs" | js 'sum(1 for i in d["items"] if i["status"].get("phase") in ("Running","Queued"))')"
expect_eq "runner a stayed Ready (not Lost while NATS was down)" "Ready" "$(phase a)"

# 4. A run no Ready runner serves, then a runner with another runner's token, then its own.
tenant t4 '{"region":"c"}'
R4=""
# (stored Queued, holding no slot, until a runner with region=c is Ready)
for _ in $(seq 1 300); do
	R4=$(api "$API/tenants/t4/runs" | js '[i for i in d["items"] if i["status"].get("phase") in ("Queued","Running")][0]["metadata"]["name"]')
	[ -n "$R4" ] && [ -n "$(cond t4 "$R4")" ] && break
	sleep 0.1
done
expect_eq "no Ready runner serves region=c: Scheduled False, saying why" \
	"False NoRunner no Ready runner serves pool region_c (runnerSelector region=c)" "$(cond t4 "$R4")"
expect_match "rezusctl describe run shows it" 'Scheduled.*False.*NoRunner' \
	"$("$top_builddir/rezusctl" --server "$BASE" --token "$TOKEN" -t t4 describe run "$R4" 2>&1)"
runner_conf c region=c "$WORK/runner-a.token"
"$REZUSCLOUD" runner -c "$WORK/c.conf" >"$WORK/c.log" 2>&1 &
RC=$!
wait_exit "$RC" 10
expect_eq "runner c with runner a's token, asking the daemon for its installation, is refused and exits 1" \
	"1 1" "$EXIT_STATUS $(grep -c 'runners/c/assignment answered 403: a runner token claims only under the name of its spec.runner' "$WORK/c.log")"
# told the installation, it gets to the claim, and is refused there
inst=$(curl -s "$BASE/readyz?verbose" | sed -n 's/.* as installation \([a-z0-9-]*\),.*/\1/p')
printf '  installation: %s\n' "$inst" >>"$WORK/c.conf"
"$REZUSCLOUD" runner -c "$WORK/c.conf" >>"$WORK/c.log" 2>&1 &
RC=$!
for _ in $(seq 1 300); do grep -q "HTTP 403 (refused)" "$WORK/c.log" && break; sleep 0.1; done
expect_match "runner c with runner a's token is refused by the daemon (403)" "claim of run $R4 .*HTTP 403 \\(refused\\)" "$(cat "$WORK/c.log")"
expect_eq "and claimed nothing" "False" "$(cond t4 "$R4" | cut -d' ' -f1)"
stop_proc "$RC" "runner c (with runner a's token)"
# The job has waited longer than runners.heartbeat_timeout (3 s) when runner c claims it,
# and c's heartbeat (every 2 s) lists the run only after the daemon's once-a-second sweep
# has looked at it: the timeout counts from the claim, not from the job's publication.
sleep 3.5
rm -f "$WORK/held"
touch "$WORK/hold-init"
runner_conf c region=c "$WORK/runner-c.token" 2s
"$REZUSCLOUD" runner -c "$WORK/c.conf" >>"$WORK/c.log" 2>&1 &
RC=$!
wait_file "$WORK/held"
sleep 2.5
touch "$WORK/go"
wait_phase t4 "$R4" Succeeded
expect_eq "with its own token runner c runs it, though its job waited past the heartbeat timeout" "Succeeded" "$(runphase t4 "$R4")"
expect_eq "Scheduled: True, claimed by runner c" "True Claimed claimed by runner c" "$(cond t4 "$R4")"

expect_eq "no password or token in the logs" "0" \
	"$(cat "$WORK"/daemon.log* "$WORK/a.log" "$WORK/c.log" | grep -c -e runner-nats-pw-3 -e daemon-nats-pw-3 -e "$(cat "$WORK/runner-a.token")" -e "$(cat "$WORK/runner-c.token")")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
