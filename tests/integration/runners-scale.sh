#!/bin/sh
# Remote runners at scale (docs/runners.md, "Dispatch" and "Pools"): nats-server with
# JetStream on loopback, the daemon with the sim plugin, two runners (zone=a and zone=b, both
# site=lab; runner.concurrency 2 each) running the real terraform; runner a has five labels
# more, seven in all: it serves 64 pools. Fifty sim tenants: every
# one Succeeds; the runs of the tenants without a selector spread over both runners; a
# tenant's runnerSelector {zone: a} or {zone: b} keeps its runs on that runner; a node
# group's runnerSelector routes its tenant's runs (alone, or merged with the tenant's); a
# tenant whose node group's selector contradicts its own gets a Failed run naming both and
# the key, a RunnerSelectorConflict Event, and no runner runs it. Where a run ran shows in
# rezusctl get runs (RUNNER) and describe run (Runner:), in the API's Table for kubectl and
# in the WebUI's runs tab and run page. With the fifty done, a tenant of runner a alone has
# each step claimed within a second of its job's publication (the daemon's histogram
# rezuscloud_runner_claim_wait_seconds): a runner of 64 pools waits in all of them at once,
# it does not ask them one after the other.
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
umask 077
RA=""
RB=""
stop_all() {
	for p in $RA $RB $NATS_PID; do kill -KILL "$p" 2>/dev/null; done
	cleanup
}
trap stop_all EXIT
start_nats || not_ok "nats-server starts" "$(cat "$WORK/nats.log")"

# debounce 1 s: a tenant and its node group are two requests, and its first run should see both
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 1s
  destroy_approval: false
  resync: 0s
runners:
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: daemon
  nats_password_file: $WORK/daemon.pw
  heartbeat_timeout: 10s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
PW=runners-scale-test-pw
REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts" "$(tail -n 5 "$WORK/daemon.log")"
BASE="http://127.0.0.1:$PORT"
API="$BASE/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$PW\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }

RTOKENS=
for n in a b; do
	RTOKEN=$(api -X POST "$API/users/admin/tokens" -d "{\"spec\":{\"scope\":\"runner\",\"runner\":\"$n\",\"description\":\"runner $n\"}}" | sed -n 's/.*"secret":"\(rzt_[^"]*\)".*/\1/p')
	printf '%s\n' "$RTOKEN" >"$WORK/$n.token"
	RTOKENS="$RTOKENS $RTOKEN"
done
expect_match "a runner token (scope runner) is made for each runner" '^ rzt_[^ ]+ rzt_[^ ]+$' "$RTOKENS"
for n in a b; do
	more=""
	[ "$n" = a ] && more=", r1=x, r2=x, r3=x, r4=x, r5=x" # 7 labels: 64 pools
	cat >"$WORK/$n.conf" <<CONF
tofu:
  binary: $TF
runner:
  name: $n
  labels: [zone=$n, site=lab$more]
  heartbeat: 1s
  concurrency: 2
  work_dir: $WORK/$n-work
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: runner
  nats_password_file: $WORK/runner.pw
  daemon_url: $BASE
  token_file: $WORK/$n.token
CONF
done
# the runners pull from the streams the daemon creates: start them once it has
for _ in $(seq 1 100); do
	curl -s "$BASE/readyz?verbose" | grep -q 'nats:.*_EVENTS present' && break
	sleep 0.1
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

out=$(api -X POST "$API/tenants/none/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","providerClass":"sim","runnerSelector":{"a":"1","b":"2","c":"3","d":"4"}}}')
expect_match "a node group's runnerSelector of four labels is refused, naming the field" '"code":422.*spec.runnerSelector' "$out"

# s01..s05 select zone a, s06..s10 zone b; s11..s13 have a node group selecting zone b,
# s14..s15 select site=lab with a node group selecting zone a; the other 35 select nothing.
# clash selects zone a with a node group selecting zone b.
t0=$(date +%s)
TENANTS=$(seq -f 's%02g' 1 50)
for t in $TENANTS clash; do
	tsel=""
	gsel=""
	case $t in
	s0[1-5]) tsel=',"runnerSelector":{"zone":"a"}' ;;
	s0[6-9] | s10) tsel=',"runnerSelector":{"zone":"b"}' ;;
	s1[1-3]) gsel=',"runnerSelector":{"zone":"b"}' ;;
	s1[4-5]) tsel=',"runnerSelector":{"site":"lab"}' gsel=',"runnerSelector":{"zone":"a"}' ;;
	clash) tsel=',"runnerSelector":{"zone":"a"}' gsel=',"runnerSelector":{"zone":"b"}' ;;
	esac
	api -o /dev/null -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$t\"},\"spec\":{\"clusterProvider\":\"sim\"$tsel}}"
	api -o /dev/null -X POST "$API/tenants/$t/nodegroups" -d "{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"role\":\"controlplane\",\"count\":1,\"providerClass\":\"sim\"$gsel}}"
done

# How many of the fifty are Ready with Reconciled True (one list a poll).
reconciled() {
	api "$API/tenants" | js 'sum(1 for i in d["items"] if i["metadata"]["name"] != "clash" and i["status"].get("phase") == "Ready" and any(c.get("type") == "Reconciled" and c.get("status") == "True" for c in i["status"].get("conditions", [])))'
}
for _ in $(seq 1 180); do
	[ "$(reconciled)" = 50 ] && break
	sleep 1
done
echo "# fifty tenants through two runners in $(($(date +%s) - t0)) s"
expect_eq "all fifty tenants are Ready and Reconciled" "50" "$(reconciled)"

api "$API/runs" >"$WORK/runs.json"
api "$API/nodegroups" >"$WORK/nodegroups.json"
# runs.py KIND: a summary of every Run, from the lists just read
cat >"$WORK/runs.py" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["items"]
groups = {g["metadata"]["tenant"]: g["metadata"]["creationTimestamp"] for g in json.load(open(sys.argv[2]))["items"]}
what = sys.argv[3]
def of(t):
    return [r for r in runs if r["metadata"]["tenant"] == t]
def ran(t, after=False): # the runners that ran a tenant's runs (those started after its node group)
    return " ".join(sorted({r["status"].get("runner", "-") for r in of(t) if not after or r["status"].get("startedAt", "") > groups[t]}))
tenants = ["s%02d" % i for i in range(1, 51)]
if what == "succeeded": # tenants whose every run Succeeded
    print(sum(1 for t in tenants if of(t) and all(r["status"].get("phase") == "Succeeded" for r in of(t))))
elif what == "count": # runs each runner ran
    print(" ".join("%s=%d" % (n, sum(1 for r in runs if r["status"].get("runner") == n)) for n in ("a", "b")))
elif what == "free": # the runners the unselected tenants ran on
    print(" ".join(sorted({r["status"].get("runner", "-") for t in tenants[15:] for r in of(t)})))
elif what.startswith("ran:"):
    print(ran(what[4:]))
elif what.startswith("after:"):
    print(ran(what[6:], True))
PY
runs() { python3 "$WORK/runs.py" "$WORK/runs.json" "$WORK/nodegroups.json" "$1"; }
expect_eq "every run of the fifty tenants Succeeded" "50" "$(runs succeeded)"
count=$(runs count)
echo "# runs per runner: $count"
expect_match "both runners ran runs" '^a=[1-9][0-9]* b=[1-9][0-9]*$' "$count"
expect_eq "the 35 tenants without a selector ran on both runners" "a b" "$(runs free)"
sel_a=""
sel_b=""
for t in s01 s02 s03 s04 s05; do sel_a="$sel_a $(runs "ran:$t")"; done
for t in s06 s07 s08 s09 s10; do sel_b="$sel_b $(runs "ran:$t")"; done
expect_eq "the tenants selecting zone=a ran only on runner a" " a a a a a" "$sel_a"
expect_eq "the tenants selecting zone=b ran only on runner b" " b b b b b" "$sel_b"
ng_b=""
ng_a=""
for t in s11 s12 s13; do ng_b="$ng_b $(runs "after:$t")"; done
for t in s14 s15; do ng_a="$ng_a $(runs "after:$t")"; done
expect_eq "a node group selecting zone=b: its tenant's runs ran on runner b" " b b b" "$ng_b"
expect_eq "a node group's zone=a merged with its tenant's site=lab: runner a" " a a" "$ng_a"

# clash: a Failed run naming the tenant, the node group and the key; an Event; no runner.
clash_msg() {
	api "$API/tenants/clash/runs" | js '" | ".join(r["status"].get("message", "") for r in d["items"] if r["status"].get("phase") == "Failed")'
}
for _ in $(seq 1 60); do
	[ -n "$(clash_msg)" ] && break
	sleep 0.5
done
expect_match "conflicting selectors fail the run, naming both and the key" \
	"the tenant and node group 'cp' conflict on runnerSelector key 'zone' \\('a' against 'b'\\)" "$(clash_msg)"
expect_eq "no runner ran a failed run of clash" "" \
	"$(api "$API/tenants/clash/runs" | js '"".join(r["status"].get("runner", "") for r in d["items"] if r["status"].get("phase") == "Failed")')"
expect_match "the tenant gets a RunnerSelectorConflict Event" "RunnerSelectorConflict" \
	"$(api "$API/tenants/clash/events" | js '" ".join(e.get("reason", "") + ": " + e.get("message", "") for e in d["items"])')"
expect_match "its Reconciled condition says why" "conflict on runnerSelector key 'zone'" \
	"$(api "$API/tenants/clash" | js '" ".join(c.get("message", "") for c in d["status"].get("conditions", []) if c.get("type") == "Reconciled")')"

# The wait from a job's publication to its claim, with runner a (64 pools) idle: a tenant
# selecting zone=a (its pool is one of the 64) runs its steps, each claimed within a second.
# (Measured by the daemon; bench/runners reports the figures.)
claims() { # count of claims, and of those within 1 s
	curl -s "$BASE/metrics" | awk '/^rezuscloud_runner_claim_wait_seconds_count/ { c = $2 } /^rezuscloud_runner_claim_wait_seconds_bucket\{le="1"\}/ { f = $2 } END { print c + 0, f + 0 }'
}
expect_match "runner a serves 64 pools" "taking jobs from 64 pool\\(s\\)" "$(cat "$WORK/a.log")"
before=$(claims)
api -o /dev/null -X POST "$API/tenants" -d '{"metadata":{"name":"lat"},"spec":{"clusterProvider":"sim","runnerSelector":{"zone":"a","r3":"x"}}}'
api -o /dev/null -X POST "$API/tenants/lat/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
for _ in $(seq 1 120); do
	[ "$(api "$API/tenants/lat/runs" | js 'sum(1 for r in d["items"] if r["status"].get("phase") == "Succeeded")')" -ge 1 ] 2>/dev/null && break
	sleep 0.5
done
after=$(claims)
echo "# claims (all, within 1 s) before: $before, after: $after"
expect_eq "lat's run Succeeded on runner a" "a" "$(api "$API/tenants/lat/runs" | js '" ".join(r["status"].get("runner", "-") for r in d["items"] if r["status"].get("phase") == "Succeeded")')"
new=$(echo "$before $after" | awk '{ print $3 - $1, ($3 - $1) - ($4 - $2) }')
expect_match "its steps were claimed, none later than 1 s after its job went out (claims, late)" '^[2-9] 0$' "$new"

# Where a run ran, shown: rezusctl, the Table kubectl reads, the WebUI.
CTL="$top_builddir/rezusctl"
unset REZUSCLOUD_SERVER REZUSCLOUD_TOKEN KUBECONFIG
echo "$PW" | "$CTL" login "$BASE" --username admin --password-stdin >/dev/null 2>&1
RUN=$(api "$API/tenants/s06/runs" | js 'd["items"][0]["metadata"]["name"]')
out=$("$CTL" get runs "$RUN" -t s06 2>&1)
expect_match "rezusctl get runs: RUNNER names the runner" \
	"^NAME +OPERATION +TRIGGER +PHASE +CHANGES +RUNNER +AGE .*$RUN +[a-z]+ +[a-z]+ +Succeeded +[-+~0-9 ]+ b +[0-9]" "$(echo "$out" | tr '\n' ' ')"
expect_match "rezusctl describe run: its Runner line" '^Runner: +b$' "$("$CTL" describe run "$RUN" -t s06 2>&1)"
table=$(api -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$API/tenants/s06/runs" |
	js '"%s %s" % ([c["name"] for c in d["columnDefinitions"]].index("RUNNER") >= 0, d["rows"][0]["cells"][[c["name"] for c in d["columnDefinitions"]].index("RUNNER")])')
expect_eq "the runs' Table (kubectl get runs) has the RUNNER column" "True b" "$table"
page=$(curl -s -H "Cookie: rezus_session=$TOKEN" "$BASE/tenants/s06/runs")
expect_match "the WebUI's runs tab shows the runner" "Runner</th>.*/runs/$RUN\">$RUN</a>.*<td class=\"py-2 pr-4\" data-label=\"Runner\">b</td>" "$(echo "$page" | tr '\n' ' ')"
page=$(curl -s -H "Cookie: rezus_session=$TOKEN" "$BASE/tenants/s06/runs/$RUN")
expect_match "the WebUI's run page names the runner" '<dd id="run-runner">b</dd>' "$page"

expect_eq "no password or token in the logs" "0" \
	"$(cat "$WORK/daemon.log" "$WORK/a.log" "$WORK/b.log" | grep -c -e runner-nats-pw-3 -e daemon-nats-pw-3 $(for t in $RTOKENS; do printf -- '-e %s ' "$t"; done))"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
