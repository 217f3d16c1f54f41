#!/bin/sh
# The run queue with one worker: tofu.timeout ends a hung run; tenants waiting for the pool
# run in the order they asked, and a busy tenant's follow-up queues behind them; an approved
# run still waiting for its slot, and a manual Run not yet started, can be canceled; a
# newer manual Run supersedes a waiting one; a manual plan does not swallow a change that
# waits with it; a failed destroy keeps the tenant and is retried.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
# A stand-in for tofu: `apply` in the work directory of tenant T waits while $WORK/hold-T
# exists (then applies for real) and never ends while $WORK/hang-T exists; it records each
# apply it starts as a line "T" in $WORK/applies. `plan -destroy` fails while
# $WORK/fail-destroy-T exists. Otherwise it is the real binary.
cat >"$WORK/tofu-standin" <<SH
#!/bin/sh
t=\$(basename "\$PWD")
if [ "\$1" = plan ] && [ -e "$WORK/fail-destroy-\$t" ] && echo "\$*" | grep -q -- -destroy; then
	echo '{"@level":"error","@message":"Error: stand-in: the destroy fails","type":"diagnostic","diagnostic":{"severity":"error","summary":"stand-in: the destroy fails","detail":""}}'
	exit 1
fi
if [ "\$1" = apply ]; then
	echo "\$t" >>"$WORK/applies"
	[ -e "$WORK/hang-\$t" ] && exec sleep 6011 # a duration no other test uses: pgrep below looks for it
	while [ -e "$WORK/hold-\$t" ]; do sleep 0.1; done
fi
exec "$TF" "\$@"
SH
chmod +x "$WORK/tofu-standin"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $WORK/tofu-standin
  workers: 1
  debounce: 200ms
  timeout: 3s
  kill_grace: 1s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=queue-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with one worker"
else
	not_ok "the daemon starts with one worker" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"queue-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
patch() { curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$@"; }
tenant() {
	api -X POST "$API/tenants" -d '{"metadata":{"name":"'"$1"'"},"spec":{"clusterProvider":"sim"}}' >/dev/null
	api -X POST "$API/tenants/$1/nodegroups" -d '{"metadata":{"name":"w"},"spec":{"role":"worker","count":'"$2"',"providerClass":"sim"}}' >/dev/null
}
# finished T N: wait until tenant T has N finished runs.
finished() {
	for _ in $(seq 1 400); do
		[ "$(grep -c "msg=\"run finished\" tenant=$1 " "$WORK/daemon.log")" -ge "$2" ] && return
		sleep 0.1
	done
}
# applying T N: wait until the Nth apply of tenant T has started.
applying() {
	for _ in $(seq 1 400); do
		[ "$(grep -c "^$1\$" "$WORK/applies" 2>/dev/null)" -ge "$2" ] && return
		sleep 0.1
	done
}
phase() { api "$API/tenants/$1/runs/$2" | sed -n 's/.*"phase":"\([A-Za-z]*\)".*/\1/p'; }
runs() { api "$API/tenants/$1/runs" | grep -o '"kind":"Run"' | wc -l | tr -d ' '; }
machines() { api "$API/tenants/$1/machines" | grep -o '"kind":"Machine"' | wc -l | tr -d ' '; }
run_named() { sed -n 's/.*"name":"\(run-[0-9a-z]*\)".*/\1/p'; }

# tofu.timeout: an apply that never ends is stopped, and the run fails saying so.
touch "$WORK/hang-slow"
tenant slow 1
finished slow 1
expect_match "a hung apply is stopped at tofu.timeout and the run fails, saying so" \
	'msg="run finished" tenant=slow run=run-[0-9a-f]* operation=apply phase=Failed error="tofu apply timed out after 3s \(tofu.timeout\)"' \
	"$(cat "$WORK/daemon.log")"
expect_eq "its tofu process is gone" "" "$(pgrep -f "sleep 6011" || true)"
rm -f "$WORK/hang-slow"
api -X DELETE "$API/tenants/slow" >/dev/null
finished slow 2
expect_eq "deleting it still destroys it" "404" "$(code "$API/tenants/slow")"

# Fairness: while busy holds the only worker, a and b ask for runs and busy changes twice;
# a and b go first, in order, then busy's one follow-up.
tenant a 2
tenant b 2
finished a 1
finished b 1
touch "$WORK/hold-busy"
tenant busy 1
applying busy 1
tenant c 1
sleep 0.3
patch "$API/tenants/a/nodegroups/w" -d '{"spec":{"count":3}}'
patch "$API/tenants/busy/nodegroups/w" -d '{"spec":{"count":2}}'
sleep 0.3
patch "$API/tenants/busy/nodegroups/w" -d '{"spec":{"count":3}}'
sleep 0.5
rm -f "$WORK/hold-busy"
finished busy 2
finished c 1
finished a 2
expect_eq "the waiting tenants run in the order they asked, the busy one's follow-up last" \
	"busy c a busy" "$(tail -n 4 "$WORK/applies" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "two changes during busy's run made exactly one follow-up" "2" "$(runs busy)"
expect_eq "and it converged" "3" "$(machines busy)"

# An approved run waiting for the slot is canceled: it never applies.
patch "$API/tenants/a/nodegroups/w" -d '{"spec":{"count":1}}'
for _ in $(seq 1 300); do
	AW=$(grep 'run awaits approval' "$WORK/daemon.log" | sed -n '1s/.* run=\(run-[0-9a-z]*\).*/\1/p')
	[ -n "$AW" ] && break
	sleep 0.1
done
expect_match "scaling a down awaits approval" '^run-' "$AW"
touch "$WORK/hold-busy"
patch "$API/tenants/busy/nodegroups/w" -d '{"spec":{"count":4}}'
applying busy 3
expect_eq "approve while busy holds the worker" "200" "$(code -X POST "$API/tenants/a/runs/$AW/approve")"
expect_eq "the approved run queues" "Queued" "$(phase a "$AW")"
expect_eq "cancel while it waits for the slot" "200" "$(code -X POST "$API/tenants/a/runs/$AW/cancel")"
expect_eq "it is Canceled" "Canceled" "$(phase a "$AW")"

# A manual Run not started yet can be canceled; a newer one supersedes an older.
M1=$(api -X POST "$API/tenants/b/runs" -d '{"spec":{"operation":"apply"}}' | run_named)
expect_eq "a manual run waits while the worker is busy" "Queued" "$(phase b "$M1")"
expect_eq "cancel before it starts" "200" "$(code -X POST "$API/tenants/b/runs/$M1/cancel")"
expect_match "it ends Canceled, saying why" '"phase":"Canceled".*"message":"canceled before it started"' "$(api "$API/tenants/b/runs/$M1")"
M2=$(api -X POST "$API/tenants/b/runs" -d '{"spec":{"operation":"plan"}}' | run_named)
M3=$(api -X POST "$API/tenants/b/runs" -d '{"spec":{"operation":"plan"}}' | run_named)
sleep 0.3
expect_match "a newer manual run supersedes the waiting one" '"phase":"Canceled".*"message":"superseded by run '"$M3"'"' "$(api "$API/tenants/b/runs/$M2")"
patch "$API/tenants/b/nodegroups/w" -d '{"spec":{"count":3}}'
sleep 0.5
rm -f "$WORK/hold-busy"
finished busy 3
finished b 3
expect_eq "the newer manual plan ran" "Succeeded" "$(phase b "$M3")"
expect_eq "a change waiting with the plan still gets its apply" "3" "$(machines b)"
expect_eq "b ran: its first apply, the plan, the follow-up (the canceled runs never started)" \
	"b 3 Canceled Canceled" "b $(grep -c "msg=\"run finished\" tenant=b .*phase=Succeeded" "$WORK/daemon.log") $(phase b "$M1") $(phase b "$M2")"
expect_eq "a kept its machines: the canceled destroy never applied" "3" "$(machines a)"
expect_eq "canceled runs leave no tofu process behind" "" "$(pgrep -f "sleep 6011" || true)"

# Teardown: a destroy that fails keeps the tenant (finalizer), shows why, retries.
touch "$WORK/fail-destroy-c"
api -X DELETE "$API/tenants/c" >/dev/null
finished c 2
expect_match "a failed destroy keeps the tenant, showing the error" \
	'"deletionTimestamp".*"status":\{"phase":"Deleting".*"lastRun":\{[^}]*"operation":"destroy","phase":"Failed".*"type":"Reconciled","status":"False","reason":"RunFailed"' "$(api "$API/tenants/c")"
expect_match "with the diagnostic in the run" '"summary":"stand-in: the destroy fails"' "$(api "$API/tenants/c/runs")"
expect_match "and retries after a backoff" 'msg="run failed: retrying" tenant=c in=10s' "$(cat "$WORK/daemon.log")"
rm -f "$WORK/fail-destroy-c"
for _ in $(seq 1 200); do
	[ "$(code "$API/tenants/c")" = 404 ] && break
	sleep 0.1
done
expect_eq "the retry destroys it, and the tenant goes" "404" "$(code "$API/tenants/c")"

done_testing
