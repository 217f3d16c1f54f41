#!/bin/sh
# Remote runners, second layer (docs/runners.md, "Dispatch"): nats-server with JetStream on
# loopback, the daemon with the sim plugin and the real terraform, two runners (region=a and
# region=b). Six sim tenants, two of them with runnerSelector {region: a}: all Reconciled,
# the selected ones ran on runner a (Run.status.runner), the runs spread over both; a run's
# log reads through the API; a runner killed with -9 while it holds an apply (a tofu
# stand-in that takes the state lock and sleeps) ends the run Interrupted, the lock
# released, the run's secret refused, and the tenant runs again on the other runner with its
# state intact, and a Warning Event RunnerLost on the tenant says so; a cancel reaches a
# remote run; a wrong runner token is refused at the claim, a runner token bound to runner
# a claims nothing as runner b; a pool consumer deleted under its runner is made again by it,
# and NATS removes the consumers of pools nobody pulls from (runner.pool_idle).
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
nats_prepare 2
umask 077
RA=""
RB=""
EARLY=""
stop_all() {
	for p in $RA $RB $EARLY ${RC_PID:-} $NATS_PID; do kill -KILL "$p" 2>/dev/null; done
	cleanup
}
trap stop_all EXIT
start_nats || not_ok "nats-server starts" "$(cat "$WORK/nats.log")"

# a runner that takes jobs, started before the daemon made its streams, waits for them
cat >"$WORK/early.conf" <<CONF
tofu:
  binary: $TF
runner:
  name: early
  heartbeat: 1s
  work_dir: $WORK/early-work
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: runner
  nats_password_file: $WORK/runner.pw
  daemon_url: http://127.0.0.1:1
  installation: it-dispatch
  token_file: $WORK/early.token
CONF
echo rzt_not-used-here >"$WORK/early.token"
"$REZUSCLOUD" runner -c "$WORK/early.conf" >"$WORK/early.log" 2>&1 &
EARLY=$!
for _ in $(seq 1 100); do
	grep -q 'waiting for the daemon to create its streams' "$WORK/early.log" && break
	sleep 0.1
done
expect_match "a runner started before the daemon's streams exist waits for them" \
	'waiting for the daemon to create its streams' "$(cat "$WORK/early.log")"

# The daemon serves TLS (a self-signed certificate): the runners claim and report over
# https, checking its certificate against runner.daemon_ca_file; curl here trusts it too.
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  tls:
    self_signed: true
tofu:
  binary: $TF
  workers: 1
  debounce: 100ms
  destroy_approval: false
  resync: 0s
runners:
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: daemon
  nats_password_file: $WORK/daemon.pw
  heartbeat_timeout: 2s
  installation: it-dispatch
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
PW=dispatch-test-pw
REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts" "$(tail -n 5 "$WORK/daemon.log")"
BASE="https://127.0.0.1:$PORT"
API="$BASE/api/v1"
CA="$WORK/data/tls-cert.pem"
export CURL_CA_BUNDLE="$CA"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$PW\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
patch() { curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' -X PATCH "$API/$1" -d "$2"; }
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }

for _ in $(seq 1 50); do
	grep -q 'taking jobs from' "$WORK/early.log" && break
	sleep 0.1
done
expect_eq "and takes jobs once the daemon made them" "1 running" \
	"$(grep -c 'taking jobs from' "$WORK/early.log") $(kill -0 "$EARLY" 2>/dev/null && echo running)"
kill -TERM "$EARLY"
wait "$EARLY" 2>/dev/null

# The runner tokens: APITokens with spec.scope runner and spec.runner, one per runner.
out=$(api -X POST "$API/users/admin/tokens" -d '{"spec":{"scope":"runner","description":"runners"}}')
expect_match "a runner token without spec.runner is refused, naming the field" '"code":422.*spec\.runner' "$out"
out=$(api -X POST "$API/users/admin/tokens" -d '{"spec":{"runner":"a"}}')
expect_match "spec.runner without spec.scope runner is refused, naming the field" '"code":422.*spec\.runner' "$out"
for n in a b; do
	api -X POST "$API/users/admin/tokens" -d "{\"spec\":{\"scope\":\"runner\",\"runner\":\"$n\"}}" | js 'd["secret"]' >"$WORK/runner-$n.token"
done
RTOKEN=$(cat "$WORK/runner-a.token")
expect_match "a runner token (scope runner, runner a) is made" '^rzt_' "$RTOKEN"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $RTOKEN" -H 'Content-Type: application/json' -d '{"run":"run-x","step":"init"}' "$API/runners/b/claims")
expect_eq "runner a's token claims nothing as runner b (403)" "403" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $RTOKEN" -H 'Content-Type: application/octet-stream' -d 'x' "$API/runners/b/claims/run-x/files/plan")
expect_eq "nor reports a file as runner b (403)" "403" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $RTOKEN" "$API/tenants")
expect_eq "a runner token reads no tenant (403)" "403" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"run":"run-x","step":"init"}' "$API/runners/a/claims")
expect_eq "an admin's session claims nothing (403)" "403" "$code"

# tofu stand-ins: terraform, but with WORK/slow-NAME present an apply takes the state lock
# as terraform would (the run's secret) and sleeps, keeping the secret to try later.
for n in a b; do
	cat >"$WORK/tofu-$n" <<SH
#!/bin/sh
if [ "\$1" = apply ] && [ -f "$WORK/slow-$n" ]; then
	addr=\$(sed -n 's/.*"lock_address": *"\([^"]*\)".*/\1/p' *.tf.json | head -n 1)
	printf '%s\n' "\$TF_HTTP_PASSWORD" >"$WORK/zombie.pw"
	printf '%s\n' "\$addr" >"$WORK/zombie.addr"
	curl -s -o /dev/null --cacert "$CA" -u "rezus:\$TF_HTTP_PASSWORD" -X LOCK \
		-d '{"ID":"standin-lock","Operation":"OperationTypeApply","Who":"standin"}' "\$addr"
	echo "stand-in apply holds the lock"
	sleep 60
fi
sleep 0.2 # a step takes a moment: with one slot each, two runs at once need both runners
exec "$TF" "\$@"
SH
	chmod 755 "$WORK/tofu-$n"
	cat >"$WORK/$n.conf" <<CONF
tofu:
  binary: $WORK/tofu-$n
runner:
  name: $n
  labels: [region=$n]
  heartbeat: 1s
  pool_idle: 2s
  concurrency: 1
  work_dir: $WORK/$n-work
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: runner
  nats_password_file: $WORK/runner.pw
  daemon_url: $BASE
  daemon_ca_file: $CA
  token_file: $WORK/runner-$n.token
CONF
done
"$REZUSCLOUD" runner -c "$WORK/a.conf" >"$WORK/a.log" 2>&1 &
RA=$!
"$REZUSCLOUD" runner -c "$WORK/b.conf" >"$WORK/b.log" 2>&1 &
RB=$!
phase() { api "$API/runners/$1" | js 'd.get("status",{}).get("phase","")'; }
for _ in $(seq 1 100); do
	[ "$(phase a)" = Ready ] && [ "$(phase b)" = Ready ] && break
	sleep 0.1
done
expect_eq "both runners are Ready" "Ready Ready" "$(phase a) $(phase b)"
expect_match "runner a, without runner.installation, asked the daemon for its installation's names" \
	'pool.s. of REZUS_IT-DISPATCH_JOBS' "$(cat "$WORK/a.log")"

out=$(api -X POST "$API/tenants" -d '{"metadata":{"name":"bad"},"spec":{"clusterProvider":"sim","runnerSelector":{"a":"1","b":"2","c":"3","d":"4"}}}')
expect_match "a runnerSelector of four labels is refused, naming the field" 'spec.runnerSelector' "$out"
out=$(api -X POST "$API/tenants" -d '{"metadata":{"name":"bad"},"spec":{"clusterProvider":"sim","runnerSelector":{"bad key!":"x"}}}')
expect_match "and one with a bad label key" '"code":422' "$out"

# Six sim tenants, t1 and t2 for region a only.
t0=$(date +%s)
for t in t1 t2 t3 t4 t5 t6; do
	sel=""
	case $t in t1 | t2) sel=',"runnerSelector":{"region":"a"}' ;; esac
	api -o /dev/null -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$t\"},\"spec\":{\"clusterProvider\":\"sim\"$sel}}"
	api -o /dev/null -X POST "$API/tenants/$t/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
done
# "Reconciled" when the tenant's condition Reconciled is True (and its phase Ready), else its phase
tphase() { api "$API/tenants/$1" | js '"Reconciled" if d["status"].get("phase")=="Ready" and any(c.get("type")=="Reconciled" and c.get("status")=="True" for c in d["status"].get("conditions",[])) else d["status"].get("phase","")'; }
all_reconciled() {
	for t in "$@"; do [ "$(tphase "$t")" = Reconciled ] || return 1; done
	return 0
}
for _ in $(seq 1 600); do
	all_reconciled t1 t2 t3 t4 t5 t6 && break
	sleep 0.1
done
echo "# six tenants through the runners in $(($(date +%s) - t0)) s"
for t in t1 t2 t3 t4 t5 t6; do
	expect_eq "tenant $t is Reconciled" "Reconciled" "$(tphase "$t")"
done
runners_of() { # the runners a tenant's runs ran on: the runner of each step of each run
	api "$API/tenants/$1/runs" | js '" ".join(sorted(set(r for i in d["items"] for r in (list((i.get("status",{}).get("stepRunners") or {}).values()) or [i.get("status",{}).get("runner","-")]))))'
}
expect_eq "t1 (runnerSelector region=a) ran on runner a" "a" "$(runners_of t1)"
expect_eq "t2 (runnerSelector region=a) ran on runner a" "a" "$(runners_of t2)"
used=$(for t in t3 t4 t5 t6; do runners_of "$t"; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
echo "# the unselected tenants ran on: $used"
expect_eq "the runs spread over both runners" "a b" "$(for t in t1 t2 t3 t4 t5 t6; do runners_of "$t"; done | tr ' ' '\n' | grep -x -e a -e b | sort -u | tr '\n' ' ' | sed 's/ $//')"
RUN=$(api "$API/tenants/t3/runs" | js 'd["items"][0]["metadata"]["name"]')
log=$(api "$API/tenants/t3/runs/$RUN/log")
expect_match "a remote run's log reads through the API" 'Apply complete|No changes|apply_complete|Initializing' "$log"
expect_eq "no secret on NATS: no rzt_ secret in the JetStream store" "0" "$(grep -r -l rzt_ "$WORK/js" 2>/dev/null | wc -l | tr -d ' ')"

metric() { curl -s "$BASE/metrics" | sed -n "s/^$1 //p"; }
jobs=$(metric rezuscloud_runner_jobs_total)
echo "# jobs published: $jobs, events handled: $(metric rezuscloud_runner_events_total)"
expect_eq "/metrics: at least four jobs per tenant (init, plan, show, apply) published" "yes" "$([ "${jobs:-0}" -ge 24 ] && echo yes || echo no)"
expect_eq "/metrics: no remote step left in progress" "0" "$(metric rezuscloud_runner_steps)"

# Runs of a pool no Ready runner serves hold no slot (docs/runners.md, "Capacity, per
# pool"): three tenants selecting gpu=h100, more than both runners' slots, wait with a
# Warning Event and a Run Queued, Scheduled False naming the pool; a tenant without a
# selector created after them is Reconciled meanwhile; once their selector names labels a
# runner has, the waiting Runs are superseded and new ones run on that runner.
for t in g1 g2 g3; do
	api -o /dev/null -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$t\"},\"spec\":{\"clusterProvider\":\"sim\",\"runnerSelector\":{\"gpu\":\"h100\"}}}"
	api -o /dev/null -X POST "$API/tenants/$t/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
done
sleep 1 # past their debounce: they are queued first
api -o /dev/null -X POST "$API/tenants" -d '{"metadata":{"name":"free1"},"spec":{"clusterProvider":"sim"}}'
api -o /dev/null -X POST "$API/tenants/free1/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
for _ in $(seq 1 300); do [ "$(tphase free1)" = Reconciled ] && break; sleep 0.1; done
expect_eq "a tenant without a selector is Reconciled while three of an unserved pool wait" "Reconciled" "$(tphase free1)"
queued() { api "$API/tenants/$1/runs" | js '" ".join(i["status"].get("phase","") + ":" + ",".join(c["reason"] + " " + c.get("message","") for c in i["status"].get("conditions",[]) if c["type"]=="Scheduled") for i in d["items"])'; }
expect_eq "each of the unserved pool's tenants has one Run, Queued, Scheduled False naming the pool" \
	"Queued:NoRunner no Ready runner serves pool gpu_h100 (runnerSelector gpu=h100)" "$(queued g1)"
expect_eq "(g2, g3 the same)" "$(queued g1) $(queued g1)" "$(queued g2) $(queued g3)"
expect_match "and a Warning Event (NoRunnerForPool) on the tenant" '"reason":"NoRunnerForPool".*its run waits: no Ready runner serves pool gpu_h100' \
	"$(api "$API/tenants/g3/events")"
js_api() { # SUBJECT: a JetStream API request as the daemon's NATS user; its answer
	/usr/bin/python3 - "$NPORT" "$(cat "$WORK/daemon.pw")" "$1" <<'PY'
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
f = s.makefile("rb")
f.readline()  # INFO
s.sendall(b"CONNECT " + json.dumps({"user": "daemon", "pass": sys.argv[2], "verbose": False, "pedantic": False}).encode() + b"\r\n")
s.sendall(b"SUB _INBOX.c 1\r\nPUB " + sys.argv[3].encode() + b" _INBOX.c 2\r\n{}\r\n")
while True:
    line = f.readline()
    if not line or line.startswith(b"-ERR"):
        print(line.decode().strip())
        break
    if line.startswith(b"MSG"):
        print(f.read(int(line.split()[-1])).decode())
        break
PY
}
consumers() { # the job stream's pool consumers
	js_api '$JS.API.CONSUMER.NAMES.REZUS_IT-DISPATCH_JOBS' | js '" ".join(sorted(c for c in (d.get("consumers") or []) if c.startswith("pool-")))'
}
# A pool's consumer removed under a runner that serves it (as NATS does after
# runner.pool_idle while the runner is busy): the runner makes it again and takes the
# pool's jobs, the three below.
# (nats-server 2.9 may answer "directory not empty" while the consumer writes: asked again)
for _ in 1 2 3 4 5; do
	out=$(js_api '$JS.API.CONSUMER.DELETE.REZUS_IT-DISPATCH_JOBS.pool-region_b')
	case $out in *'"success":true'*) break ;; esac
	sleep 0.2
done
expect_match "pool-region_b's consumer deleted" '"success":true' "$out"
for t in g1 g2 g3; do
	patch "tenants/$t" '{"spec":{"runnerSelector":{"gpu":null,"region":"b"}}}'
done
for _ in $(seq 1 300); do all_reconciled g1 g2 g3 && break; sleep 0.1; done
expect_eq "once runner b's label is what they select, the waiting Run is superseded and a new one runs on b" \
	"Reconciled Reconciled Reconciled Canceled:b Canceled:b Canceled:b" \
	"$(for t in g1 g2 g3; do tphase "$t"; done | tr '\n' ' ')$(for t in g1 g2 g3; do api "$API/tenants/$t/runs" | js '":".join(sorted(i["status"].get("phase") if i["status"].get("phase")=="Canceled" else i["status"].get("runner","-") for i in d["items"]))'; done | tr '\n' ' ' | sed 's/ $//')"
expect_match "runner b says it made pool-region_b's consumer again" "pool region_b: its consumer was gone" "$(cat "$WORK/b.log")"

# A wrong runner token: refused at the claim.
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer rzt_not-a-token-at-all-not-a-token-at-all-xyz' \
	-H 'Content-Type: application/json' -d '{"run":"run-x","step":"init"}' "$API/runners/a/claims")
expect_eq "a wrong runner token is refused at the claim (401)" "401" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $RTOKEN" \
	-H 'Content-Type: application/json' -d "{\"run\":\"$RUN\",\"step\":\"init\"}" "$API/runners/a/claims")
expect_eq "a claim of a finished run: 409 (a job delivered again is dropped)" "409" "$code"

# kill -9 of the runner holding an apply.
touch "$WORK/slow-a" "$WORK/slow-b"
patch tenants/t5/nodegroups/cp '{"spec":{"count":2}}'
holder=""
for _ in $(seq 1 300); do
	[ -f "$WORK/zombie.addr" ] && holder=$(api "$API/tenants/t5/runs" | js '[i for i in d["items"] if i["status"].get("phase")=="Running"][0]["status"].get("runner","")') && [ -n "$holder" ] && break
	sleep 0.1
done
KRUN=$(api "$API/tenants/t5/runs" | js '[i for i in d["items"] if i["status"].get("phase")=="Running"][0]["metadata"]["name"]')
sleep 0.5
echo "# the apply of $KRUN is held by runner $holder"
locks=$(sqlite3 "file:$WORK/data/rezus.db?mode=ro" "SELECT count(*) FROM tfstate_locks WHERE tenant='t5'" 2>/dev/null)
expect_eq "the stand-in apply holds t5's state lock" "1" "$locks"
# A forged end of that apply, published as the runner NATS user (what any runner may do):
# no MAC under the claim's event key, so the daemon drops it; a line likewise.
nats_pub() { # SUBJECT PAYLOAD: one core NATS publish as the runner user
	/usr/bin/python3 - "$NPORT" "$(cat "$WORK/runner.pw")" "$1" "$2" <<'PY'
import json, socket, sys
port, pw, subject, payload = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4].encode()
s = socket.create_connection(("127.0.0.1", port), 5)
f = s.makefile("rb")
f.readline()  # INFO
s.sendall(b"CONNECT " + json.dumps({"user": "runner", "pass": pw, "verbose": False, "pedantic": False}).encode() + b"\r\n")
s.sendall(b"PUB %s %d\r\n%s\r\nPING\r\n" % (subject.encode(), len(payload), payload))
while True:
    line = f.readline()
    if not line or line.startswith(b"PONG") or line.startswith(b"-ERR"):
        print(line.decode().strip())
        break
PY
}
nats_pub "rezus.it-dispatch.events.$KRUN" "{\"run\":\"$KRUN\",\"step\":\"apply\",\"seq\":5000,\"line\":\"forged: Apply complete!\",\"stderr\":false}" >/dev/null
expect_eq "a runner NATS user can publish on another run's events subject" "PONG" \
	"$(nats_pub "rezus.it-dispatch.events.$KRUN" "{\"run\":\"$KRUN\",\"step\":\"apply\",\"seq\":5001,\"exit\":{\"status\":0,\"timed_out\":false,\"canceled\":false}}")"
sleep 2
expect_eq "but a forged end of runner $holder's apply does not end it (still Running)" "Running" "$(api "$API/tenants/t5/runs/$KRUN" | js 'd["status"].get("phase","")')"
expect_eq "the daemon said so once for the step, not once per forged event" "1" \
	"$(grep -c "run $KRUN: an event of its apply step with .* dropped" "$WORK/daemon.log")"
expect_match "saying why" \
	"run $KRUN: an event of its apply step with no MAC dropped: not from the runner holding its claim \\($holder\\)" "$(cat "$WORK/daemon.log")"
expect_eq "and the forged line is not in the run's log" "0" "$(api "$API/tenants/t5/runs/$KRUN/log" | grep -c 'forged: Apply complete')"
if [ "$holder" = a ]; then rm -f "$WORK/slow-b"; kill -KILL "$RA"; RA=""; other=b; else rm -f "$WORK/slow-a"; kill -KILL "$RB"; RB=""; other=a; fi
runphase() { api "$API/tenants/t5/runs/$1" | js 'd["status"].get("phase","")'; }
for _ in $(seq 1 100); do
	[ "$(runphase "$KRUN")" = Interrupted ] && break
	sleep 0.1
done
expect_eq "kill -9 of runner $holder mid-apply: the run is Interrupted" "Interrupted" "$(runphase "$KRUN")"
expect_match "saying the runner was lost" "runner $holder was lost" "$(api "$API/tenants/t5/runs/$KRUN" | js 'd["status"].get("message","")')"
lost=$(api "$API/tenants/t5/events" | js '" ".join(i["reason"] for i in d["items"] if i.get("reason")=="RunnerLost" and i.get("type")=="Warning" and "runner '"$holder"' " in i.get("message","") and "'"$KRUN"'" in i.get("message",""))')
expect_eq "a Warning Event RunnerLost on t5 names the runner and the run" "RunnerLost" "$lost"
expect_eq "its state lock is released" "0" "$(sqlite3 "file:$WORK/data/rezus.db?mode=ro" "SELECT count(*) FROM tfstate_locks WHERE tenant='t5'" 2>/dev/null)"
code=$(curl -s -o /dev/null -w '%{http_code}' -u "rezus:$(cat "$WORK/zombie.pw")" -X POST -d '{}' "$(cat "$WORK/zombie.addr")")
expect_eq "a late write with the lost run's secret is refused (401)" "401" "$code"
rm -f "$WORK/slow-a" "$WORK/slow-b"
for _ in $(seq 1 300); do
	[ "$(api "$API/tenants/t5/runs" | js 'sum(1 for i in d["items"] if i["status"].get("phase")=="Succeeded" and i["metadata"]["name"]!="'"$KRUN"'" and i["status"].get("startedAt","")>"'"$(api "$API/tenants/t5/runs/$KRUN" | js 'd["status"]["startedAt"]')"'")')" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
again=$(api "$API/tenants/t5/runs" | js '" ".join(i["status"].get("runner","") for i in d["items"] if i["status"].get("phase")=="Succeeded" and i["status"].get("startedAt","")>"'"$(api "$API/tenants/t5/runs/$KRUN" | js 'd["status"]["startedAt"]')"'")')
expect_eq "the tenant ran again, on the other runner" "$other" "$again"
RUN2=$(api "$API/tenants/t5/runs" | js '[i["metadata"]["name"] for i in d["items"] if i["status"].get("phase")=="Succeeded" and i["status"].get("startedAt","")>"'"$(api "$API/tenants/t5/runs/$KRUN" | js 'd["status"]["startedAt"]')"'"][0]')
expect_eq "its status.stepRunners names the runner of each step" \
	"init=$other plan=$other show=$other apply=$other" \
	"$(api "$API/tenants/t5/runs/$RUN2" | js '" ".join(k + "=" + v for k, v in d["status"]["stepRunners"].items())')"
expect_match "and its log says who claimed each step" \
	"runner $other claimed the init step.*runner $other claimed the apply step" \
	"$(api "$API/tenants/t5/runs/$RUN2/log" | tr '\n' ' ')"
expect_eq "the killed run's stepRunners keep the runner that was lost" "$holder" \
	"$(api "$API/tenants/t5/runs/$KRUN" | js 'd["status"]["stepRunners"]["apply"]')"
for _ in $(seq 1 300); do [ "$(tphase t5)" = Reconciled ] && break; sleep 0.1; done
expect_eq "and is Reconciled" "Reconciled" "$(tphase t5)"
machines=$(api "$API/tenants/t5/machines" | js 'len(d["items"])')
expect_eq "its state is intact: both machines of the scaled group" "2" "$machines"

# Cancel of a remote run reaches the runner.
touch "$WORK/slow-$other"
patch tenants/t6/nodegroups/cp '{"spec":{"count":2}}'
rm -f "$WORK/zombie.addr"
for _ in $(seq 1 300); do [ -f "$WORK/zombie.addr" ] && break; sleep 0.1; done
CRUN=$(api "$API/tenants/t6/runs" | js '[i for i in d["items"] if i["status"].get("phase")=="Running"][0]["metadata"]["name"]')
code=$(api -o /dev/null -w '%{http_code}' -X POST "$API/tenants/t6/runs/$CRUN/cancel")
expect_eq "cancel of remote run $CRUN: 200" "200" "$code"
for _ in $(seq 1 300); do # the runner's report of the exit, under the sanitizers and load too
	[ "$(api "$API/tenants/t6/runs/$CRUN" | js 'd["status"].get("phase","")')" = Canceled ] && break
	sleep 0.1
done
expect_eq "the run is Canceled" "Canceled" "$(api "$API/tenants/t6/runs/$CRUN" | js 'd["status"].get("phase","")')"
expect_match "the runner killed its tofu" "run $CRUN: canceled by the daemon" "$(cat "$WORK/$other.log")"
rm -f "$WORK/slow-$other"

# A Ready runner said to hold a step it does not run (its claim's answer never reached it):
# runner c's claims never reach the daemon (a dead daemon_url); a claim made for it by hand
# holds the step, c's heartbeats never list the run, and after runners.heartbeat_timeout the
# step is lost rather than waited for.
if [ "$other" = a ]; then stop_proc "$RA" "runner a"; RA=""; else stop_proc "$RB" "runner b"; RB=""; fi
api -X POST "$API/users/admin/tokens" -d '{"spec":{"scope":"runner","runner":"c"}}' | js 'd["secret"]' >"$WORK/runner-c.token"
sed -e 's/^  name: a$/  name: c/' -e "s|^  daemon_url: .*|  daemon_url: http://127.0.0.1:1|" \
	-e "s|runner-a.token|runner-c.token|" -e "s|a-work|c-work|" -e 's/region=a/region=c/' \
	-e '/^  name: c$/a\  installation: it-dispatch' "$WORK/a.conf" >"$WORK/c.conf"
"$REZUSCLOUD" runner -c "$WORK/c.conf" >"$WORK/c.log" 2>&1 &
RC_PID=$!
for _ in $(seq 1 100); do [ "$(phase c)" = Ready ] && break; sleep 0.1; done
expect_eq "runner c is Ready" "Ready" "$(phase c)"
patch tenants/t3/nodegroups/cp '{"spec":{"count":2}}'
ORUN=""
for _ in $(seq 1 100); do
	ORUN=$(api "$API/tenants/t3/runs" | js '[i["metadata"]["name"] for i in d["items"] if i["status"].get("phase") not in ("Succeeded","Failed","Interrupted","Canceled")][0]')
	[ -n "$ORUN" ] && break
	sleep 0.1
done
code=000
for _ in $(seq 1 50); do
	code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $(cat "$WORK/runner-c.token")" \
		-H 'Content-Type: application/json' -d "{\"run\":\"$ORUN\",\"step\":\"init\"}" "$API/runners/c/claims")
	[ "$code" = 200 ] && break
	sleep 0.1
done
expect_eq "t3's init claimed for runner c by hand (200)" "200" "$code"
for _ in $(seq 1 100); do
	[ "$(api "$API/tenants/t3/runs/$ORUN" | js 'd["status"].get("phase","")')" = Interrupted ] && break
	sleep 0.1
done
expect_eq "c never runs it: the run is Interrupted after runners.heartbeat_timeout" "Interrupted" \
	"$(api "$API/tenants/t3/runs/$ORUN" | js 'd["status"].get("phase","")')"
expect_match "the daemon says why" "runner c is Ready but has not listed run $ORUN" "$(cat "$WORK/daemon.log")"
expect_eq "and runner c stays Ready" "Ready" "$(phase c)"

# Pool consumers do not pile up: NATS removes one nobody pulled from for runner.pool_idle
# (2 s here, as the runners' pulls showed while a held apply kept its runner busy: the
# consumer was made again when it pulled next). Runner c, the last one, still pulls: its
# pools' consumers are there; once it is gone, nobody's are.
before=$(consumers)
expect_match "pool consumers were made (one per pool a runner served)" "pool-" "$before"
stop_proc "$RC_PID" "runner c"
left=$before
for _ in $(seq 1 60); do
	left=$(consumers)
	[ -z "$left" ] && break
	sleep 0.1
done
expect_eq "NATS removes each of them runner.pool_idle after the last pull (was: $before)" "" "$left"

expect_eq "no password or token in the logs" "0" \
	"$(cat "$WORK/daemon.log" "$WORK/a.log" "$WORK/b.log" | grep -c -e runner-nats-pw-2 -e daemon-nats-pw-2 -e "$RTOKEN" -e "$(cat "$WORK/runner-b.token")")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
