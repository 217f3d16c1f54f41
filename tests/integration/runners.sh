#!/bin/sh
# Remote runners, first layer (docs/runners.md): nats-server with JetStream and two users
# (daemon, runner) restricted as docs/security.md says, on loopback; the daemon keeps a
# Runner per runner from their heartbeats: Ready with their labels, granted (spec.labels)
# from its first heartbeat, Lost after kill -9, Stopping then Offline after SIGTERM; a
# heartbeat saying other labels than the granted ones routes nothing by them
# (status.refusedLabels) until an admin grants them; wrong credentials are refused; a NATS
# restart is survived; forged heartbeats are dropped and counted; the two streams exist.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! grep -q 'define HAVE_LIBNATS 1' "$top_builddir/config.h" 2>/dev/null; then
	# Built --with-nats=no: both modes refuse NATS, and say why.
	"$REZUSCLOUD" runner >"$WORK/out" 2>&1
	expect_eq "without libnats, rezuscloud runner exits 1" "1" "$?"
	expect_match "saying it was built without NATS" 'built without NATS' "$(cat "$WORK/out")"
	printf 'runners:\n  nats_url: nats://127.0.0.1:4222\n' >"$WORK/nn.conf"
	"$REZUSCLOUD" -c "$WORK/nn.conf" --check-config >"$WORK/out" 2>&1
	expect_eq "and the daemon refuses runners.nats_url" "2" "$?"
	expect_match "naming the key" 'runners.nats_url: this rezuscloud was built without NATS' "$(cat "$WORK/out")"
	done_testing
	exit $?
fi
CTL="$top_builddir/rezusctl"
export HOME="$WORK/home"
mkdir -p "$HOME"
unset REZUSCLOUD_SERVER REZUSCLOUD_TOKEN KUBECONFIG

nats_prepare 1
umask 077
printf 'not-the-password\n' >"$WORK/wrong.pw"
R1=""
R2=""
stop_all() {
	for p in $R1 $R2 $NATS_PID; do kill -KILL "$p" 2>/dev/null; done
	cleanup
}
trap stop_all EXIT
if start_nats; then ok "nats-server starts with JetStream on 127.0.0.1:$NPORT"; else not_ok "nats-server starts" "$(cat "$WORK/nats.log")"; fi

cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
runners:
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: daemon
  nats_password_file: $WORK/daemon.pw
  heartbeat_timeout: 2s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
REZUSCLOUD_ADMIN_PASSWORD=runners-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"runners-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" "$@"; }
metric() { curl -s "http://127.0.0.1:$PORT/metrics" | sed -n "s/^$1 //p"; }
phase() { api "$API/runners/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status",{}).get("phase",""))' 2>/dev/null; }
# wait_phase NAME PHASE SECONDS: sets WAITED (tenths of a second) or "timeout"
wait_phase() {
	WAITED=timeout
	for i in $(seq 1 $(($3 * 10))); do
		if [ "$(phase "$1")" = "$2" ]; then WAITED=$i; return 0; fi
		sleep 0.1
	done
	return 1
}

# The installation's name on NATS, derived from the data dir (runners.installation empty),
# which heartbeat-only runners (no runner.daemon_url to ask) are given.
for _ in $(seq 1 100); do
	INST=$(curl -s "http://127.0.0.1:$PORT/readyz?verbose" | sed -n 's/.* as installation \([a-z0-9-]*\),.*/\1/p')
	[ -n "$INST" ] && break
	sleep 0.1
done
expect_match "the daemon's installation is derived from its data dir (8 hex digits)" '^[0-9a-f]{8}$' "$INST"
IUP=$(echo "$INST" | tr a-z A-Z)

runner_conf() { # NAME LABELS PASSWORD_FILE
	cat >"$WORK/$1.conf" <<CONF
runner:
  name: $1
  installation: $INST
  labels: [$2]
  heartbeat: 1s
  concurrency: 2
  work_dir: $WORK/$1-work
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: runner
  nats_password_file: $3
CONF
}
runner_conf r1 "region=eu-frankfurt, tier=gold" "$WORK/runner.pw"
runner_conf r2 "region=us-ashburn" "$WORK/runner.pw"
runner_conf bad "region=nowhere" "$WORK/wrong.pw"
check "rezuscloud runner --check-config accepts the runner's file" "$REZUSCLOUD" runner -c "$WORK/r1.conf" --check-config
grep -v '^  installation:' "$WORK/r1.conf" >"$WORK/noinst.conf"
"$REZUSCLOUD" runner -c "$WORK/noinst.conf" --check-config >"$WORK/out" 2>&1
expect_eq "without runner.daemon_url, runner.installation is required (exit 2)" "2" "$?"
expect_match "naming the key" 'runner.installation: required without runner.daemon_url' "$(cat "$WORK/out")"
"$REZUSCLOUD" runner -c "$WORK/r1.conf" >"$WORK/r1.log" 2>&1 &
R1=$!
"$REZUSCLOUD" runner -c "$WORK/r2.conf" >"$WORK/r2.log" 2>&1 &
R2=$!

wait_phase r1 Ready 10
expect_eq "runner r1 becomes a Ready Runner" "Ready" "$(phase r1)"
wait_phase r2 Ready 10
expect_eq "runner r2 becomes a Ready Runner" "Ready" "$(phase r2)"
expect_eq "with its labels" '{"region": "eu-frankfurt", "tier": "gold"}' \
	"$(api "$API/runners/r1" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["status"]["labels"], sort_keys=True))')"
expect_eq "and its concurrency" "2" \
	"$(api "$API/runners/r2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["concurrency"])')"
echo "runners-test-pw" | "$CTL" login "http://127.0.0.1:$PORT" --username admin --password-stdin >/dev/null 2>&1
"$CTL" get runners >"$WORK/get.out" 2>&1
expect_match "rezusctl get runners shows the table" '^NAME +PHASE +LABELS +CONCURRENCY +RUNNING +LAST HEARTBEAT' "$(head -n 1 "$WORK/get.out")"
expect_match "with r1's row" '^r1 +Ready +region=eu-frankfurt,tier=gold +2 +0 ' "$(grep '^r1 ' "$WORK/get.out")"
expect_match "and r2's" '^r2 +Ready +region=us-ashburn +2 +0 ' "$(grep '^r2 ' "$WORK/get.out")"
spec() { api "$API/runners/$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d["spec"].get("labels"), sort_keys=True), json.dumps(d["status"].get("refusedLabels"), sort_keys=True))'; }
expect_eq "its first heartbeat's labels are granted (spec.labels), none refused" \
	'{"region": "eu-frankfurt", "tier": "gold"} {}' "$(spec r1)"
code=$(api -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' "$API/runners/r1/status" -d '{}')
expect_eq "a Runner's status is the daemon's (no status route for users: 405)" "405" "$code"

jsz=$(curl -s "http://127.0.0.1:$MPORT/jsz?streams=true&config=true")
expect_match "the stream REZUS_${IUP}_JOBS exists (work queue)" "\"name\": ?\"REZUS_${IUP}_JOBS\"" "$jsz"
expect_match "the stream REZUS_${IUP}_EVENTS exists" "\"name\": ?\"REZUS_${IUP}_EVENTS\"" "$jsz"
expect_match "the job stream has work-queue retention" '"retention": ?"workqueue"' "$jsz"
expect_match "the job stream takes the installation's subjects" "\"rezus.$INST.jobs.(>|\\\\u003e)\"" "$jsz"
expect_eq "/metrics: the daemon is connected to NATS" "1" "$(metric rezuscloud_nats_connected)"
expect_eq "/metrics: two runners Ready" "2" "$(metric 'rezuscloud_runners{phase="Ready"}')"
expect_match "/readyz?verbose names the NATS state" '\[\+\]nats: connected to nats://127.0.0.1' "$(curl -s "http://127.0.0.1:$PORT/readyz?verbose")"

# kill -9: no goodbye; Lost within heartbeat_timeout (2 s) plus a heartbeat and a sweep.
kill -KILL "$R1"
wait "$R1" 2>/dev/null
R1=""
if wait_phase r1 Lost 6; then ok "kill -9 of r1: its Runner is Lost ($WAITED tenths of a second)"; else not_ok "kill -9 of r1: its Runner is Lost" "phase $(phase r1)"; fi
expect_match "the daemon logs a warning naming it" 'level=warning.*runner r1 lost' "$(cat "$WORK/daemon.log")"
expect_eq "/metrics: one runner Lost" "1" "$(metric 'rezuscloud_runners{phase="Lost"}')"

# Labels are granted, not said: a heartbeat of r1 (any runner user may publish one; with
# the per-runner users of docs/runners.md, r1's own) saying region=us-ashburn, r2's region.
hb_r1() { # LABELS-JSON: one heartbeat of r1 as the runner user
	python3 - "$NPORT" "$1" "$INST" <<'PY'
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
f.readline()  # INFO
hb = json.dumps({"name": "r1", "labels": json.loads(sys.argv[2]), "version": "x", "concurrency": 1,
                 "running": [], "startedAt": "2026-12-01T00:00:00Z"}).encode()
s.sendall(b'CONNECT {"user":"runner","pass":"runner-nats-pw-1","verbose":false,"pedantic":false}\r\n')
s.sendall(b"PUB rezus.%s.runners.r1.heartbeat %d\r\n%s\r\nPING\r\n" % (sys.argv[3].encode(), len(hb), hb))
print(f.readline().decode().strip())
PY
}
hb_r1 '{"region":"us-ashburn","tier":"gold"}' >/dev/null
wait_phase r1 Ready 3
expect_eq "r1 saying region=us-ashburn: its grant is unchanged, the label refused" \
	'{"region": "eu-frankfurt", "tier": "gold"} {"region": "us-ashburn"}' "$(spec r1)"
expect_match "rezusctl get runners shows the labels it said" '^r1 +Ready +region=us-ashburn,tier=gold ' "$("$CTL" get runners 2>&1 | grep '^r1 ')"
out=$(api -X PATCH -H 'Content-Type: application/merge-patch+json' "$API/runners/r1" -d '{"spec":{"labels":{"region":"us-ashburn","tier":"gold"}}}')
expect_match "an admin grants it (PATCH spec.labels)" '"region":"us-ashburn"' "$out"
hb_r1 '{"region":"us-ashburn","tier":"gold"}' >/dev/null
sleep 0.5
expect_eq "then nothing is refused" '{"region": "us-ashburn", "tier": "gold"} {}' "$(spec r1)"
out=$(api -X PATCH -H 'Content-Type: application/merge-patch+json' "$API/runners/r1" -d '{"spec":{"labels":{"bad key!":"x"}}}')
expect_match "a bad label in spec.labels is refused, naming the field" '"code":422.*spec.labels' "$out"

# A forged heartbeat on r2's subject naming another runner, and malformed ones: dropped.
before=$(metric rezuscloud_runner_heartbeats_dropped_total)
python3 - "$NPORT" "$INST" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
f.readline()  # INFO
def pub(subj, data):
    subj = subj.replace("rezus.", "rezus.%s." % sys.argv[2], 1)
    s.sendall(b"PUB %s %d\r\n%s\r\n" % (subj.encode(), len(data), data))
s.sendall(b'CONNECT {"user":"runner","pass":"runner-nats-pw-1","verbose":false,"pedantic":false}\r\n')
pub("rezus.runners.r2.heartbeat", b'{"name":"r9","labels":{},"version":"x","concurrency":1,"running":[],"startedAt":"2026-12-01T00:00:00Z"}')
pub("rezus.runners.r2.heartbeat", b'not json at all')
pub("rezus.runners.r2.heartbeat", b'{"name":"r2","labels":{"bad key!":"x"},"version":"x","concurrency":1,"running":[],"startedAt":"2026-12-01T00:00:00Z"}')
pub("rezus.runners.r2.heartbeat", b'{"pad":"' + b"x" * 20000 + b'"}')
s.sendall(b"PING\r\n")
while True:
    line = f.readline()
    if not line or line.startswith(b"PONG") or line.startswith(b"-ERR"):
        print(line.decode().strip())
        break
PY
sleep 1
after=$(metric rezuscloud_runner_heartbeats_dropped_total)
expect_eq "four forged or malformed heartbeats are dropped and counted" "4" "$((after - before))"
expect_eq "no Runner is made for the forged name" "404" "$(api -o /dev/null -w '%{http_code}' "$API/runners/r9")"
expect_eq "and r2 stays Ready" "Ready" "$(phase r2)"

# A wrong password: the runner exits non-zero and says NATS refused it.
"$REZUSCLOUD" runner -c "$WORK/bad.conf" >"$WORK/bad.log" 2>&1 &
BAD=$!
wait_exit "$BAD" 10
expect_eq "a runner with a wrong password exits 1" "1" "$EXIT_STATUS"
expect_match "naming the refusal" 'refused runner .bad.*(Authorization|auth)' "$(cat "$WORK/bad.log")"
expect_eq "the password is in no log" "0" "$(cat "$WORK/bad.log" "$WORK/r2.log" "$WORK/daemon.log" | grep -c -e not-the-password -e runner-nats-pw-1 -e daemon-nats-pw-1)"

# NATS restarted: both reconnect and r2 is Ready again with a newer heartbeat.
kill -TERM "$NATS_PID"
wait "$NATS_PID" 2>/dev/null
sleep 1
if start_nats; then ok "nats-server restarts"; else not_ok "nats-server restarts" "$(tail -n 5 "$WORK/nats.log")"; fi
t0=$(date -u +%Y-%m-%dT%H:%M:%S)
ok_back=no
for _ in $(seq 1 100); do
	last=$(api "$API/runners/r2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["lastHeartbeat"][:19])' 2>/dev/null)
	if [ "$(phase r2)" = Ready ] && [ "$(metric rezuscloud_nats_connected)" = 1 ] && [ "$last" \> "$t0" ]; then ok_back=yes; break; fi
	sleep 0.1
done
expect_eq "after the restart r2's heartbeats reach the daemon again (Ready, newer lastHeartbeat)" "yes" "$ok_back"

# SIGTERM: a goodbye heartbeat (Stopping), then the Runner is Offline after the timeout
# (it stays, with its grant: an admin deletes it).
kill -TERM "$R2"
wait_exit "$R2" 10
R2=""
expect_eq "SIGTERM stops r2 with status 0" "0" "$EXIT_STATUS"
if wait_phase r2 Stopping 3; then ok "its Runner is Stopping"; else not_ok "its Runner is Stopping" "phase $(phase r2)"; fi
if wait_phase r2 Offline 6; then ok "and Offline once runners.heartbeat_timeout passed"; else not_ok "and Offline once runners.heartbeat_timeout passed" "phase $(phase r2)"; fi
expect_eq "keeping its grant" '{"region": "us-ashburn"} {}' "$(spec r2)"
expect_eq "/metrics: one runner Offline" "1" "$(metric 'rezuscloud_runners{phase="Offline"}')"
code=$(api -o /dev/null -w '%{http_code}' -X DELETE "$API/runners/r2")
expect_eq "an admin deletes an Offline Runner" "200" "$code"
expect_eq "it is gone" "404" "$(api -o /dev/null -w '%{http_code}' "$API/runners/r2")"
heartbeats=$(metric rezuscloud_runner_heartbeats_total)
echo "# heartbeats taken by the daemon: $heartbeats"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"

# The daemon with a wrong NATS password still starts (it once exited: "cannot subscribe to
# the heartbeats: Connection Closed"), says so and keeps trying.
sed "s|$WORK/daemon.pw|$WORK/wrong.pw|" "$WORK/rezus.conf" >"$WORK/wrong.conf"
if start_daemon "$WORK/daemon2.log" -c "$WORK/wrong.conf"; then
	ok "with a wrong NATS password the daemon still starts"
else
	not_ok "with a wrong NATS password the daemon still starts" "$(grep -v subsys=http "$WORK/daemon2.log" | tail -n 5)"
fi
sleep 1
expect_match "/readyz?verbose says NATS is not connected" '\[\+\]nats: not connected' "$(curl -s "http://127.0.0.1:$PORT/readyz?verbose")"
for _ in $(seq 1 50); do curl -s "http://127.0.0.1:$PORT/readyz?verbose" | grep -q ' as installation' && break; sleep 0.1; done
expect_match "the installation is the same at the next start (the data dir's)" " as installation $INST," "$(curl -s "http://127.0.0.1:$PORT/readyz?verbose")"
expect_eq "/metrics: rezuscloud_nats_connected 0" "0" "$(metric rezuscloud_nats_connected)"
expect_match "the log says NATS closed the connection" 'closed the connection.*credentials' "$(cat "$WORK/daemon2.log")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
done_testing
