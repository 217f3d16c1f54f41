#!/bin/sh
# The NATS configuration shipped for remote runners (examples/nats/nats-server.conf,
# docs/runners.md "NATS permissions"), loaded into a real nats-server with one user per
# runner, each with the permissions `rezuscloud runner --nats-permissions` prints: the
# example's runner eu-1 is what the command prints for its labels; the daemon and two
# runners (eu-1: region=eu-frankfurt, eu-2: region=eu-paris) run three sim tenants with the
# real terraform under them (one per region, one without a selector); then, as eu-1's NATS
# user, every attack is refused by NATS: reading another run's events (a subscription to
# rezus.main.events.> or to the daemon's inboxes, a stream message get, a consumer of the
# events stream), deleting a stream or another pool's consumer, publishing or pulling on
# eu-2's subjects or another installation's, forging a job; the streams are intact afterwards. And labels are granted, not
# said: eu-2's own user (allowed its own heartbeat) says eu-2 has region=eu-frankfurt while
# eu-1 is away: fra's next run waits for a runner granted that label (NoRunnerForPool), no
# Run starts for eu-2 to claim, and Runner eu-2 shows the label refused; eu-1 back, it runs.
# A job nobody claims (eu-1 restarted with another daemon URL drops every job, as the
# runners of a second daemon on the same NATS would) is published again after
# runners.claim_timeout, and after three tries the run fails saying why.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! grep -q 'define HAVE_LIBNATS 1' "$top_builddir/config.h" 2>/dev/null; then
	echo "1..0 # SKIP built without libnats"
	exit 0
fi
TF=$(command -v terraform || command -v tofu || true)
[ -n "$TF" ] || { not_ok "terraform is installed (tools/install-deps)"; done_testing; exit 1; }
export HOME="$WORK/home"
mkdir -p "$HOME"
nats_prepare 4 # (its nats.conf is replaced below by the shipped one)
umask 077
RA=""
RB=""
stop_all() {
	for p in $RA $RB $NATS_PID; do kill -KILL "$p" 2>/dev/null; done
	cleanup
}
trap stop_all EXIT
EXAMPLE="$top_srcdir/examples/nats/nats-server.conf"

for n in eu-1 eu-2; do
	region=frankfurt
	[ "$n" = eu-2 ] && region=paris
	printf 'runner-%s-pw\n' "$n" >"$WORK/$n.pw"
	cat >"$WORK/$n.conf" <<CONF
tofu:
  binary: $TF
runner:
  name: $n
  labels: [region=eu-$region]
  heartbeat: 1s
  work_dir: $WORK/$n-work
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: $n
  nats_password_file: $WORK/$n.pw
  token_file: $WORK/$n.token
  installation: main
CONF
	"$REZUSCLOUD" runner -c "$WORK/$n.conf" --nats-permissions >"$WORK/$n.perm.json" 2>&1
	expect_eq "rezuscloud runner --nats-permissions prints $n's permissions" "0" "$?"
done
# the example's eu-1 permissions are what the command prints for eu-1's labels
expect_eq "the shipped example holds what --nats-permissions prints for eu-1" "same" "$(
	/usr/bin/python3 - "$EXAMPLE" "$WORK/eu-1.perm.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
block = re.search(r"# BEGIN permissions of eu-1\n\s*permissions: (.*?)\n\s*# END permissions of eu-1", text, re.S)
print("same" if block and json.loads(block.group(1)) == json.load(open(sys.argv[2])) else "differs")
PY
)"
# The shipped configuration, on this port and data dir, its passwords set, eu-2 added with
# its printed permissions.
/usr/bin/python3 - "$EXAMPLE" "$WORK/eu-2.perm.json" "$NPORT" "$MPORT" "$WORK" >"$WORK/nats.conf" <<'PY'
import sys
text, perm, nport, mport, work = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3], sys.argv[4], sys.argv[5]
text = text.replace("listen: 127.0.0.1:4222", "listen: 127.0.0.1:%s\nhttp: 127.0.0.1:%s" % (nport, mport))
text = text.replace('"/var/lib/nats"', '"%s/js"' % work)
text = text.replace("CHANGE-ME-rezuscloud", "daemon-nats-pw-4").replace("CHANGE-ME-eu-1", "runner-eu-1-pw")
head, tail = text.rsplit("  ]\n}", 1)
print(head + '    { user: eu-2, password: "runner-eu-2-pw", permissions: ' + perm + "    }\n  ]\n}" + tail)
PY
# (not start_nats: the example names its own JetStream store)
"$NATS_SERVER" -c "$WORK/nats.conf" >>"$WORK/nats.log" 2>&1 &
NATS_PID=$!
for _ in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$MPORT/healthz" >/dev/null 2>&1 && break
	sleep 0.05
done
if curl -sf "http://127.0.0.1:$MPORT/healthz" >/dev/null 2>&1; then
	ok "nats-server starts on the shipped configuration"
else
	not_ok "nats-server starts on the shipped configuration" "$(cat "$WORK/nats.log")"
	done_testing
	exit 1
fi

cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 1s
  resync: 0s
runners:
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: rezuscloud
  nats_password_file: $WORK/daemon.pw
  heartbeat_timeout: 3s
  claim_timeout: 2s
  installation: main
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
PW=natsperms-test-pw
REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts" "$(tail -n 5 "$WORK/daemon.log")"
BASE="http://127.0.0.1:$PORT"
API="$BASE/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$PW\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }
for n in eu-1 eu-2; do
	api -X POST "$API/users/admin/tokens" -d "{\"spec\":{\"scope\":\"runner\",\"runner\":\"$n\"}}" |
		sed -n 's/.*"secret":"\(rzt_[^"]*\)".*/\1/p' >"$WORK/$n.token"
	printf '  daemon_url: %s\n' "$BASE" >>"$WORK/$n.conf"
done
for _ in $(seq 1 100); do
	curl -s "$BASE/readyz?verbose" | grep -q 'nats:.*REZUS_MAIN_EVENTS present' && break
	sleep 0.1
done
expect_match "the daemon made its streams as the example's rezuscloud user" 'REZUS_MAIN_EVENTS present' "$(curl -s "$BASE/readyz?verbose")"
"$REZUSCLOUD" runner -c "$WORK/eu-1.conf" >"$WORK/eu-1.log" 2>&1 &
RA=$!
"$REZUSCLOUD" runner -c "$WORK/eu-2.conf" >"$WORK/eu-2.log" 2>&1 &
RB=$!
phase() { api "$API/runners/$1" | js 'd.get("status",{}).get("phase","")'; }
for _ in $(seq 1 100); do
	[ "$(phase eu-1) $(phase eu-2)" = "Ready Ready" ] && break
	sleep 0.1
done
expect_eq "both runners are Ready" "Ready Ready" "$(phase eu-1) $(phase eu-2)"

for t in fra:frankfurt par:paris any:; do
	name=${t%%:*} region=${t#*:} sel=""
	[ -n "$region" ] && sel=",\"runnerSelector\":{\"region\":\"eu-$region\"}"
	api -o /dev/null -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$name\"},\"spec\":{\"clusterProvider\":\"sim\"$sel}}"
	api -o /dev/null -X POST "$API/tenants/$name/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
done
reconciled() {
	api "$API/tenants" | js '" ".join(sorted(i["metadata"]["name"] for i in d["items"] if any(c.get("type") == "Reconciled" and c.get("status") == "True" for c in i["status"].get("conditions", []))))'
}
for _ in $(seq 1 120); do
	[ "$(reconciled)" = "any fra par" ] && break
	sleep 0.5
done
expect_eq "the three tenants are Reconciled through runners under these permissions" "any fra par" "$(reconciled)"
ran() { api "$API/tenants/$1/runs" | js '" ".join(sorted({r["status"].get("runner", "-") for r in d["items"]}))'; }
expect_eq "fra ran on eu-1, par on eu-2" "eu-1 eu-2" "$(ran fra) $(ran par)"
expect_eq "no permission was refused to a runner or the daemon" "0" \
	"$(grep -c -e 'Violation' -e 'not permitted' -e 'Permissions' "$WORK/nats.log" "$WORK/eu-1.log" "$WORK/eu-2.log" "$WORK/daemon.log" | awk -F: '{ s += $2 } END { print s }')"

# as_user USER PW OP...: each OP (a NATS protocol line: SUB or PUB) on one connection, then a
# PING; prints "ok" for an OP the server took, or its -ERR
as_user() {
	/usr/bin/python3 - "$NPORT" "$@" <<'PY'
import json, socket, sys
port, user, pw, ops = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
for i, op in enumerate(ops):
    s = socket.create_connection(("127.0.0.1", port), 5)
    f = s.makefile("rb")
    f.readline()  # INFO
    s.sendall(b"CONNECT " + json.dumps({"user": user, "pass": pw, "verbose": False, "pedantic": False, "headers": True}).encode() + b"\r\n")
    if op.startswith("SUB "):
        s.sendall(("%s %d\r\n" % (op, i + 1)).encode())
    else: # PUB SUBJECT: an empty JSON body, answers to an inbox it may not read anyway
        s.sendall(("%s 2\r\n{}\r\n" % op).encode())
    s.sendall(b"PING\r\n")
    answer = "ok"
    while True:
        line = f.readline().decode().strip()
        if not line or line == "PONG":
            break
        if line.startswith("-ERR"):
            answer = line
    print(answer)
    s.close()
PY
}
EU1="runner-eu-1-pw"
out=$(as_user eu-1 "$EU1" "PUB rezus.main.runners.eu-1.heartbeat" "SUB rezus.main.runners.eu-1.cancel")
expect_eq "eu-1's user publishes its heartbeat and takes its cancels (the client works)" "ok ok" "$(echo $out)"
for op in "SUB rezus.main.events.>" "SUB _INBOX.>" "SUB >" "PUB \$JS.API.STREAM.MSG.GET.REZUS_MAIN_EVENTS" \
	"PUB \$JS.API.CONSUMER.DURABLE.CREATE.REZUS_MAIN_EVENTS.spy" "PUB \$JS.API.CONSUMER.CREATE.REZUS_MAIN_EVENTS" \
	"PUB \$JS.API.STREAM.DELETE.REZUS_MAIN_JOBS" "PUB \$JS.API.STREAM.DELETE.REZUS_MAIN_EVENTS" \
	"PUB \$JS.API.STREAM.PURGE.REZUS_MAIN_JOBS" "PUB \$JS.API.CONSUMER.DELETE.REZUS_MAIN_JOBS.pool-region_eu-paris" \
	"PUB \$JS.API.CONSUMER.DELETE.REZUS_MAIN_EVENTS.rezus-daemon" \
	"PUB rezus.main.runners.eu-2.heartbeat" "SUB rezus.main.runners.eu-2.cancel" "SUB _RZ_INBOX.runner.eu-2.>" \
	"PUB \$JS.API.CONSUMER.MSG.NEXT.REZUS_MAIN_JOBS.pool-region_eu-paris" \
	"PUB \$JS.ACK.REZUS_MAIN_JOBS.pool-region_eu-paris.1.1.1.1.1" "PUB rezus.main.jobs.default" \
	"PUB rezus.main.runners.eu-2.cancel" \
	"PUB rezus.other.events.run-x" "PUB \$JS.API.CONSUMER.MSG.NEXT.REZUS_OTHER_JOBS.pool-default"; do
	expect_match "as eu-1's NATS user, refused: $op" "Permissions Violation" "$(as_user eu-1 "$EU1" "$op")"
done
js_info() { # STREAM: its info as the daemon's user
	/usr/bin/python3 - "$NPORT" "$1" <<'PY'
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
f = s.makefile("rb")
f.readline()
s.sendall(b"CONNECT " + json.dumps({"user": "rezuscloud", "pass": "daemon-nats-pw-4", "verbose": False, "pedantic": False}).encode() + b"\r\n")
s.sendall(b"SUB _INBOX.i 1\r\nPUB $JS.API.STREAM.INFO." + sys.argv[2].encode() + b" _INBOX.i 0\r\n\r\n")
while True:
    line = f.readline()
    if not line or line.startswith(b"-ERR"):
        print(line.decode().strip()); break
    if line.startswith(b"MSG"):
        d = json.loads(f.read(int(line.split()[-1])))
        print(d.get("config", {}).get("name", d.get("error", {}).get("description", "?"))); break
PY
}
expect_eq "both streams are intact" "REZUS_MAIN_JOBS REZUS_MAIN_EVENTS" "$(js_info REZUS_MAIN_JOBS) $(js_info REZUS_MAIN_EVENTS)"
expect_eq "nats-server logged each refusal, naming eu-1" "20" "$(grep -c 'Violation - User "eu-1"' "$WORK/nats.log")"

# the runners still work after the attacks
out=$(curl -s -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$API/tenants/fra/nodegroups/cp" -d '{"spec":{"count":2}}')
expect_match "fra's node group is scaled to two" '"count":2' "$out"
machines() { api "$API/tenants/fra/machines" | js 'len(d["items"])'; }
for _ in $(seq 1 120); do
	[ "$(machines)" = 2 ] && break
	sleep 0.5
done
expect_eq "fra scaled to two machines through eu-1 afterwards" "2" "$(machines)"
expect_eq "its runs ran on eu-1 only" "eu-1" "$(ran fra)"
# Labels are granted, not said.
kill -TERM "$RA"
wait_exit "$RA" 10
RA=""
kill -KILL "$RB"
wait "$RB" 2>/dev/null
RB=""
/usr/bin/python3 - "$NPORT" "$WORK/stop-forger" <<'PY' &
import json, os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
s.makefile("rb").readline()  # INFO
s.sendall(b'CONNECT {"user":"eu-2","pass":"runner-eu-2-pw","verbose":false,"pedantic":false}\r\n')
hb = json.dumps({"name": "eu-2", "labels": {"region": "eu-frankfurt"}, "version": "x", "concurrency": 1,
                 "running": [], "startedAt": "2026-12-01T00:00:00Z"}).encode()
for _ in range(200):  # 60 s at most
    if os.path.exists(sys.argv[2]):
        break
    s.sendall(b"PUB rezus.main.runners.eu-2.heartbeat %d\r\n%s\r\n" % (len(hb), hb))
    time.sleep(0.3)
PY
FORGER=$!
grants() { api "$API/runners/eu-2" | js '"%s %s %s" % (d["status"].get("phase"), json.dumps(d["spec"].get("labels"), sort_keys=True), json.dumps(d["status"].get("refusedLabels"), sort_keys=True))'; }
for _ in $(seq 1 50); do
	case $(grants) in *eu-frankfurt*) break ;; esac
	sleep 0.1
done
expect_eq "eu-2 saying region=eu-frankfurt: Ready, granted eu-paris only, eu-frankfurt refused" \
	'Ready {"region": "eu-paris"} {"region": "eu-frankfurt"}' "$(grants)"
for _ in $(seq 1 60); do
	[ "$(phase eu-1)" = Offline ] && break
	sleep 0.1
done
expect_eq "eu-1 is away (Offline after its goodbye)" "Offline" "$(phase eu-1)"
nruns() { api "$API/tenants/fra/runs" | js 'len(d["items"])'; }
before=$(nruns)
curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$API/tenants/fra/nodegroups/cp" -d '{"spec":{"count":3}}'
for _ in $(seq 1 50); do
	api "$API/tenants/fra/events" | grep -q NoRunnerForPool && break
	sleep 0.1
done
expect_match "fra's run waits for a runner granted its labels (NoRunnerForPool)" "NoRunnerForPool" "$(api "$API/tenants/fra/events")"
sleep 2
expect_eq "fra's new Run stays Queued: no step of it goes out for eu-2 to claim" "$((before + 1)) Queued" \
	"$(nruns) $(api "$API/tenants/fra/runs" | js 'sorted(d["items"], key=lambda i: i["metadata"]["creationTimestamp"])[-1]["status"].get("phase")')"
touch "$WORK/stop-forger"
wait "$FORGER" 2>/dev/null
"$REZUSCLOUD" runner -c "$WORK/eu-1.conf" >>"$WORK/eu-1.log" 2>&1 &
RA=$!
for _ in $(seq 1 120); do
	[ "$(machines)" = 3 ] && break
	sleep 0.5
done
expect_eq "eu-1 back: fra's run goes to it (three machines)" "3" "$(machines)"
expect_eq "fra's runs all ran on eu-1" "eu-1" "$(ran fra)"

# A job nobody claims.
kill -TERM "$RA"
wait_exit "$RA" 10
sed "s|^  daemon_url: .*|  daemon_url: http://localhost:$PORT|" "$WORK/eu-1.conf" >"$WORK/eu-1b.conf"
"$REZUSCLOUD" runner -c "$WORK/eu-1b.conf" >"$WORK/eu-1b.log" 2>&1 &
RA=$!
for _ in $(seq 1 50); do
	[ "$(phase eu-1)" = Ready ] && break
	sleep 0.1
done
curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$API/tenants/fra/nodegroups/cp" -d '{"spec":{"count":4}}'
last_run() { api "$API/tenants/fra/runs" | js 'sorted(d["items"], key=lambda i: i["metadata"]["creationTimestamp"])[-1]'"$1"; }
for _ in $(seq 1 150); do
	[ "$(last_run '["status"].get("phase")')" = Failed ] && break
	sleep 0.2
done
expect_eq "a job dropped by every runner: the run fails after three tries" "Failed" "$(last_run '["status"].get("phase")')"
expect_match "its diagnostic says no runner claimed it" "no runner claimed the init step's job on pool region_eu-frankfurt in 3 tries" \
	"$(last_run '["status"]')"
expect_match "the runner said why it dropped them" "names daemon http://127.0.0.1:$PORT, not runner.daemon_url: dropped" "$(cat "$WORK/eu-1b.log")"
expect_eq "the daemon published it three times" "2" "$(grep -c "no runner claimed its init job in .* published again" "$WORK/daemon.log")"
expect_eq "no password or token in the logs" "0" \
	"$(cat "$WORK/daemon.log" "$WORK/eu-1.log" "$WORK/eu-1b.log" "$WORK/eu-2.log" | grep -c -e runner-eu-1-pw -e runner-eu-2-pw -e daemon-nats-pw-4 -e "$(cat "$WORK/eu-1.token")")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
