#!/bin/sh
# At the descriptor limit the daemon must not spin: accept() failing with EMFILE once made
# the loop retry at once, forever (94 % of a core, 3.3 million log lines in 9 s). Started
# with a low RLIMIT_NOFILE and held at it by idle connections, the daemon pauses accepting,
# logs the condition a bounded number of times, and serves again once descriptors are free.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! command -v bash >/dev/null 2>&1; then
	echo "1..0 # SKIP bash (for /dev/tcp) is not installed"
	exit 0
fi
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
CONF
# low enough that 60 idle connections exhaust it, high enough to start
if (ulimit -n 48 && REZUSCLOUD_ADMIN_PASSWORD=fdlimit-test-pw exec "$REZUSCLOUD" -c "$WORK/rezus.conf") \
	>"$WORK/daemon.log.stdout" 2>"$WORK/daemon.log" &
then :; fi
DAEMON_PID=$!
for _ in $(seq 1 200); do
	PORT=$(sed -n 's/.* msg=ready .* port=\([0-9]*\) .*/\1/p' "$WORK/daemon.log" 2>/dev/null | head -n 1)
	[ -n "$PORT" ] && break
	sleep 0.05
done
if [ -n "$PORT" ]; then ok "the daemon starts with 48 descriptors"; else not_ok "the daemon starts with 48 descriptors" "$(cat "$WORK/daemon.log")"; fi
before=$(wc -l <"$WORK/daemon.log")

# 60 connections that send nothing, held for 4 s: the daemon runs out of descriptors.
bash -c 'for i in $(seq 1 60); do eval "exec {fd}<>/dev/tcp/127.0.0.1/'"$PORT"'" 2>/dev/null || break; done; sleep 4' &
HOLDER=$!
sleep 3
lines=$(($(wc -l <"$WORK/daemon.log") - before))
ticks=$(awk '{print $14 + $15}' "/proc/$DAEMON_PID/stat")
sleep 1
ticks2=$(awk '{print $14 + $15}' "/proc/$DAEMON_PID/stat")
wait "$HOLDER"
if [ "$lines" -le 10 ]; then
	ok "at the limit it logs a bounded number of lines ($lines in 3 s)"
else
	not_ok "at the limit it logs a bounded number of lines" "$lines lines in 3 s: $(tail -n 3 "$WORK/daemon.log")"
fi
expect_match "saying what happened" 'accept.*(descriptor|Too many open files)' "$(tail -n +"$((before + 1))" "$WORK/daemon.log")"
echo "# CPU while held at the limit: $((ticks2 - ticks)) ticks in 1 s"
if [ $((ticks2 - ticks)) -le 50 ]; then
	ok "and does not spin (CPU $((ticks2 - ticks)) of 100 ticks in 1 s)"
else
	not_ok "and does not spin" "$((ticks2 - ticks)) of 100 ticks in 1 s"
fi

# The connections are gone: a normal client is served again.
code=
for _ in $(seq 1 50); do
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")
	[ "$code" = 200 ] && break
	sleep 0.1
done
expect_eq "once descriptors are free again, it serves" "200" "$code"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
