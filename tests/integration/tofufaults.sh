#!/bin/sh
# A tofu that misbehaves, and a database that refuses writes during a run. The tofu here is
# a stand-in (a shell script, not tofu): init, plan and show answer as far as the engine
# reads them, and the first apply of a tenant misbehaves as $WORK/mode.<tenant> says:
#   orphan    leaves `sleep 613 &` holding its stdout and hangs (timeout, then cancel)
#   nosigint  ignores SIGINT and hangs
#   segv      dies of SIGSEGV half-way
#   garbage   prints non-JSON lines, broken JSON, invalid UTF-8 and binary, then fails
#   flood     prints a gigabyte of lines; endless: one line without end until the timeout
#   diags     prints 5,000 diagnostics and fails
#   wait      waits for $WORK/go.<tenant>, then fails (the database is locked meanwhile)
# Every run must end in a clear Failed/Canceled state saying why, nothing the stand-in
# started may survive, the daemon's memory and the run log stay bounded, and a Run whose
# final status or whose creation met a locked database still gets there.
. "${top_srcdir:-.}/tests/integration/lib.sh"

command -v sqlite3 >/dev/null || { echo "1..0 # SKIP the sqlite3 shell is not installed"; exit 0; }
# the flood: 256M (64M under AddressSanitizer); the long form: TOFUFAULTS_FLOOD=3G
FLOOD=${TOFUFAULTS_FLOOD:-256M}
mkdir -p "$WORK/bin"
cat >"$WORK/bin/tofu-standin" <<SH
#!/bin/sh
# tofu stand-in for tofufaults.sh (not tofu)
ulimit -c 0
t=\$(basename "\$PWD")
case \$1 in
init) echo "Initializing the backend (stand-in)"; exit 0 ;;
plan)
	for a in "\$@"; do case \$a in -out=*) : >"\${a#-out=}" ;; esac; done
	if [ "\$(cat "$WORK/mode.\$t" 2>/dev/null)" = diags ]; then
		rm -f "$WORK/mode.\$t"
		i=0
		while [ \$i -lt 5000 ]; do
			echo '{"@level":"error","@message":"Error: bad '\$i'","type":"diagnostic","diagnostic":{"severity":"error","summary":"bad '\$i'","detail":"the stand-in says so"}}'
			i=\$((i + 1))
		done
		exit 1
	fi
	echo '{"@level":"info","@message":"Plan: 1 to add, 0 to change, 0 to destroy.","type":"change_summary"}'
	exit 0 ;;
show)
	echo '{"format_version":"1.2","resource_changes":[{"address":"terraform_data.x","type":"terraform_data","name":"x","change":{"actions":["create"]}}]}'
	exit 0 ;;
apply) ;;
*) exit 0 ;;
esac
mode=\$(cat "$WORK/mode.\$t" 2>/dev/null)
rm -f "$WORK/mode.\$t"
echo \$\$ >>"$WORK/pids"
echo '{"@level":"info","@message":"terraform_data.x: Creating...","type":"apply_start"}'
touch "$WORK/applying.\$t"
case \$mode in
orphan) sleep 613 & echo \$! >>"$WORK/pids"; while :; do sleep 1; done ;;
nosigint) trap '' INT; while :; do sleep 1; done ;;
segv) echo "half-way through the apply"; kill -SEGV \$\$ ;;
garbage)
	printf 'not json at all\n{"@level":"error","@message": broken\n\377\376 invalid utf-8 \300\200 here\n'
	printf 'binary \001\002\000\033[31m nul and escape\r\n'
	head -c 4096 /dev/urandom
	printf '\nthe last words of the garbage\n'
	exit 1 ;;
flood) yes 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx flood' | head -c "\$(cat "$WORK/flood.size")"
	echo; echo "the end of the flood"; exit 1 ;;
endless) yes | tr -d '\n' ;;
wait) while [ ! -e "$WORK/go.\$t" ]; do sleep 0.05; done; exit 1 ;;
esac
echo '{"@level":"info","@message":"Apply complete! Resources: 1 added, 0 changed, 0 destroyed.","type":"change_summary"}'
exit 0
SH
chmod +x "$WORK/bin/tofu-standin"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $WORK/bin/tofu-standin
  debounce: 1s
  timeout: 3s
  kill_grace: 1s
  resync: 1h
  max_run_log: 8MiB
  workers: 6 # the tenants the start runs again never hold the case below up
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=tofufaults-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"tofufaults-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -m 30 -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# first_run T: the name of tenant T's first Run (waits for it, up to S seconds, default 5)
first_run() {
	for _ in $(seq 1 $((${2:-5} * 10))); do
		r=$(api "$API/tenants/$1/runs" | grep -o '"name":"run-[0-9a-f]*"' | head -n 1 | cut -d'"' -f4)
		[ -n "$r" ] && { echo "$r"; return 0; }
		sleep 0.1
	done
	return 1
}
# wait_end T RUN SECONDS: until the run is no longer Running (or Queued); prints its phase
wait_end() {
	for _ in $(seq 1 $(($3 * 10))); do
		ph=$(api "$API/tenants/$1/runs/$2" | sed -n 's/.*"status":{.*"phase":"\([A-Za-z]*\)".*/\1/p')
		case $ph in Running | Queued | "") ;; *) echo "$ph"; return 0 ;; esac
		sleep 0.1
	done
	echo "${ph:-none}"
}
# survivors: processes the stand-in started that are still alive (zombies are not)
survivors() {
	for p in $(cat "$WORK/pids" 2>/dev/null); do
		st=$(sed -n 's/.*) \([A-Z]\) .*/\1/p' "/proc/$p/stat" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && printf '%s ' "$p"
	done
	pgrep -f 'sleep 613' | tr '\n' ' '
}
kill_survivors() { for p in $(survivors); do kill -KILL "$p" 2>/dev/null; done; }
# tenant T MODE: a tenant whose first apply misbehaves as MODE
tenant() {
	echo "$2" >"$WORK/mode.$1"
	api -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"clusterProvider\":\"sim\"}}" >/dev/null
}
wait_applying() {
	for _ in $(seq 1 100); do [ -e "$WORK/applying.$1" ] && return 0; sleep 0.1; done
	return 1
}
# The daemon's peak memory bound: 200 MB; under AddressSanitizer (whose quarantine keeps
# up to 256 MB of freed memory) 700 MB, and a smaller flood (it is ten times slower).
MEM_MAX=204800
if grep -q libasan "/proc/$DAEMON_PID/maps" 2>/dev/null; then
	MEM_MAX=716800
	FLOOD=${TOFUFAULTS_FLOOD:-64M}
fi
echo "$FLOOD" >"$WORK/flood.size"
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON_PID/status"; }
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON_PID/status"; }
logsize() { stat -c %s "$WORK/data/work/$1/$2.log" 2>/dev/null || echo 0; }

# --- a background child holding the pipes: the timeout still ends the run
tenant orphan orphan
run=$(first_run orphan)
wait_applying orphan
t0=$(now)
ph=$(wait_end orphan "$run" 20)
echo "# timeout with a background child holding stdout: the run ended after $(since "$t0") s (tofu.timeout 3s, kill_grace 1s)"
expect_eq "a timed-out apply whose child holds its pipes fails" "Failed" "$ph"
expect_match "saying it timed out" '"message":"tofu apply timed out after 3s \(tofu.timeout\)"' \
	"$(api "$API/tenants/orphan/runs/$run")"
expect_eq "nothing the stand-in started survives the timeout" "" "$(survivors)"
kill_survivors

# --- the same, canceled
echo orphan >"$WORK/mode.orphan"
: >"$WORK/pids"
rm -f "$WORK/applying.orphan"
run=$(api -X POST "$API/tenants/orphan/runs" -d '{"spec":{"operation":"apply"}}' | sed -n 's/.*"name":"\(run-[0-9a-f]*\)".*/\1/p')
wait_applying orphan
sleep 0.3 # the background sleep ignores SIGINT from now on
t0=$(now)
api -o /dev/null -X POST "$API/tenants/orphan/runs/$run/cancel"
ph=$(wait_end orphan "$run" 20)
echo "# cancel with a background child holding stdout took $(since "$t0") s"
expect_eq "a canceled apply whose child holds its pipes ends Canceled" "Canceled" "$ph"
expect_eq "nothing the stand-in started survives the cancel" "" "$(survivors)"
kill_survivors

# --- SIGINT ignored: SIGKILL after the grace
: >"$WORK/pids"
tenant nosigint nosigint
run=$(first_run nosigint)
wait_applying nosigint
t0=$(now)
ph=$(wait_end nosigint "$run" 20)
echo "# a tofu ignoring SIGINT was killed $(since "$t0") s into its apply"
expect_eq "a tofu that ignores SIGINT is killed: the run fails" "Failed" "$ph"
expect_match "saying it timed out" '"message":"tofu apply timed out' "$(api "$API/tenants/nosigint/runs/$run")"
expect_eq "nothing of it survives" "" "$(survivors)"
kill_survivors

# --- an endless line without a newline, until the timeout
tenant endless endless
run=$(first_run endless)
ph=$(wait_end endless "$run" 30)
echo "# an endless line for tofu.timeout: run log $(logsize endless "$run") bytes; VmHWM $(hwm) kB"
expect_eq "an endless line ends with the timeout" "Failed" "$ph"
check "its log stays under tofu.max_run_log" test "$(logsize endless "$run")" -le $((8 * 1048576 + 4096))
check "the daemon's peak memory stays under $((MEM_MAX / 1024)) MB ($(hwm) kB)" test "$(hwm)" -lt $MEM_MAX
expect_eq "nothing of the endless line survives" "" "$(survivors)"
kill_survivors


# --- the rest with a tofu.timeout a gigabyte fits in; the restart finds no run left going
kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
sed -i -e 's/^  timeout: 3s$/  timeout: 60s/' -e 's/^  debounce: 1s$/  debounce: 2s/' "$WORK/rezus.conf"
DLOG="$WORK/daemon2.log"
if REZUSCLOUD_ADMIN_PASSWORD=tofufaults-test-pw start_daemon "$DLOG" -c "$WORK/rezus.conf"; then
	ok "the daemon starts again"
else
	not_ok "the daemon starts again" "$(cat "$WORK/daemon2.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"tofufaults-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
expect_eq "no run was left to interrupt" "0" "$(grep -c 'run interrupted by a daemon stop' "$WORK/daemon2.log")"

# --- a crash half-way
: >"$WORK/pids"
tenant segv segv
run=$(first_run segv)
ph=$(wait_end segv "$run" 20)
r=$(api "$API/tenants/segv/runs/$run")
expect_eq "a tofu that crashes fails the run" "Failed" "$ph"
expect_match "the message names the signal" '"message":"tofu apply was killed by signal 11 \(SIGSEGV\)' "$r"
expect_match "its last words are the diagnostic" '"detail":"[^"]*half-way through the apply' "$r"

# --- garbage
tenant garbage garbage
run=$(first_run garbage)
ph=$(wait_end garbage "$run" 20)
r=$(api "$API/tenants/garbage/runs/$run")
expect_eq "a tofu that prints garbage fails the run" "Failed" "$ph"
printf '%s' "$r" >"$WORK/garbage.json"
check "its last words are the diagnostic" grep -q '"summary":"tofu apply failed","detail":"\([^"\\]\|\\.\)*the last words of the garbage' "$WORK/garbage.json"
expect_eq "the log is served" "200" "$(api -o /dev/null -w '%{http_code}' "$API/tenants/garbage/runs/$run/log")"
expect_match "with the garbage's lines in it" 'not json at all' "$(api "$API/tenants/garbage/runs/$run/log?format=json" | tr -d '\000')"
expect_eq "the daemon still answers" "200" "$(api -o /dev/null -w '%{http_code}' "$API/tenants/garbage")"

# --- diagnostics without end
tenant diags diags
run=$(first_run diags)
ph=$(wait_end diags "$run" 30)
r=$(api "$API/tenants/diags/runs/$run")
n=$(printf '%s' "$r" | grep -o '"summary":"' | wc -l | tr -d ' ')
echo "# 5000 diagnostics printed: $n kept in the Run"
expect_eq "a plan with 5000 diagnostics fails" "Failed" "$ph"
check "at most 101 diagnostics are kept ($n)" test "$n" -le 101
printf '%s' "$r" >"$WORK/diags.json"
check "the rest are counted" grep -q '"summary":"4900 more diagnostics were not kept' "$WORK/diags.json"

# --- a gigabyte of output, then an endless line
before=$(hwm)
tenant flood flood
run=$(first_run flood)
wait_applying flood
t0=$(now)
ph=$(wait_end flood "$run" 60)
echo "# $FLOOD of output took $(since "$t0") s; run log $(logsize flood "$run") bytes; daemon VmHWM $before -> $(hwm) kB, VmRSS $(rss) kB"
expect_eq "a tofu printing $FLOOD ends as it says" "Failed" "$ph"
check "the run log stays under tofu.max_run_log (8 MiB + 4 KiB): $(logsize flood "$run") bytes" \
	test "$(logsize flood "$run")" -le $((8 * 1048576 + 4096))
expect_match "it says what it dropped" '^… [0-9]+ bytes of output dropped …$' "$(grep -a 'bytes of output dropped' "$WORK/data/work/flood/$run.log")"
expect_eq "the log keeps its end" "the end of the flood" "$(tail -n 1 "$WORK/data/work/flood/$run.log")"
check "the daemon's peak memory stays under $((MEM_MAX / 1024)) MB ($(hwm) kB)" test "$(hwm)" -lt $MEM_MAX
api -o "$WORK/flood.log" "$API/tenants/flood/runs/$run/log"
echo "# the flood's log served: $(stat -c %s "$WORK/flood.log") bytes; VmHWM $(hwm) kB"
check "serving it keeps the daemon's peak memory under $((MEM_MAX / 1024)) MB ($(hwm) kB)" test "$(hwm)" -lt $MEM_MAX

# --- the final status write meets a locked database
# hold_lock SECONDS: an exclusive transaction on rezus.db from another process, so that the
# daemon's writes fail (SQLITE_BUSY after its 5 s busy timeout); LOCKER is its pid
# lock_ready: a sqlite3 shell on rezus.db, started and waiting; lock_now: it takes an
# exclusive transaction at once, so that the daemon's writes fail (SQLITE_BUSY after its
# 5 s busy timeout), until unlock_when PATTERN finds PATTERN in the daemon's log (or 20 s
# passed); LOCKER is its pid
lock_ready() {
	rm -f "$WORK/locked" "$WORK/lockgo" "$WORK/unlock"
	{
		while [ ! -e "$WORK/lockgo" ]; do sleep 0.02; done
		echo '.timeout 5000'; echo 'BEGIN EXCLUSIVE;'; echo ".print locked"
		for _ in $(seq 1 800); do [ -e "$WORK/unlock" ] && break; sleep 0.05; done
		echo 'COMMIT;'
	} | sqlite3 "${LOCKDB:-$WORK/data/rezus.db}" >"$WORK/locked" 2>&1 &
	LOCKER=$!
}
lock_now() {
	touch "$WORK/lockgo"
	for _ in $(seq 1 300); do grep -q locked "$WORK/locked" 2>/dev/null && break; sleep 0.02; done
	grep -q locked "$WORK/locked" && ! grep -qi error "$WORK/locked"
}
unlock_when() {
	for _ in $(seq 1 800); do grep -q "$1" "$DLOG" && break; sleep 0.05; done
	touch "$WORK/unlock"
	wait "$LOCKER"
	grep -q "$1" "$DLOG"
}
tenant lockfinal wait
run=$(first_run lockfinal)
wait_applying lockfinal
lock_ready
check "another process holds the database's write lock" lock_now
touch "$WORK/go.lockfinal"
check "the daemon says it will write the final status again" \
	unlock_when "final status not written: retrying\" tenant=lockfinal run=$run"
t0=$(now)
ph=$(wait_end lockfinal "$run" 20)
echo "# after the lock: the Run was $ph $(since "$t0") s later"
expect_eq "a Run whose final status write failed still ends Failed" "Failed" "$ph"

# --- the Run's creation meets a locked database. A fresh daemon on a data dir of its own:
# the retries of the tenants above (their statuses written again, their failed runs run
# again at start) must not meet this lock before the run it is about.
kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
DLOG="$WORK/daemon3.log"
# tofu.debounce 15 s: the lock below must be taken before the run is made; on a loaded
# machine taking it (and the shell's polling for it) took longer than the 2 s used above.
sed -e "s|^  data_dir: .*|  data_dir: $WORK/data3|" -e 's/^  debounce: 2s$/  debounce: 15s/' \
	"$WORK/rezus.conf" >"$WORK/rezus3.conf"
LOCKDB="$WORK/data3/rezus.db"
if REZUSCLOUD_ADMIN_PASSWORD=tofufaults-test-pw start_daemon "$DLOG" -c "$WORK/rezus3.conf"; then
	ok "the daemon starts for the creation case"
else
	not_ok "the daemon starts for the creation case" "$(cat "$DLOG")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"tofufaults-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
lock_ready
api -X POST "$API/tenants" -d '{"metadata":{"name":"lockcreate"},"spec":{"clusterProvider":"sim"}}' >/dev/null
check "another process holds the write lock before the run is created" lock_now
if unlock_when "tenant 'lockcreate': no run"; then
	ok "the daemon says it could not create the run"
else
	not_ok "the daemon says it could not create the run" \
		"$(grep -e lockcreate -e 'level=warning' "$DLOG" | tail -n 12; sed 's/^/sqlite3: /' "$WORK/locked")"
fi
t0=$(now)
run=$(first_run lockcreate 25)
ph=$(wait_end lockcreate "$run" 20)
echo "# a Run whose creation failed: created and $ph $(since "$t0") s after the lock"
expect_eq "the run is created later and succeeds" "Succeeded" "$ph"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
kill_survivors
done_testing
