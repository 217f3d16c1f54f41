#!/bin/sh
# Hostile clients against the HTTP server (SPEC §13, rezus.conf(5) "HTTP bounds"): thousands
# of idle connections, the connection caps (in all and per source address), slowloris heads
# and bodies, oversized headers and bodies before and after login. Through all of it the
# daemon's memory stays bounded and a normal client keeps being answered (its latency is
# reported, not asserted). The hostile side is tests/integration/rzabuse, one process.
. "${top_srcdir:-.}/tests/integration/lib.sh"

ABUSE="$top_builddir/tests/integration/rzabuse"
API_PW=abuse-test-pw
if ! ulimit -n 12000 2>/dev/null; then
	echo "1..0 # SKIP cannot raise the descriptor limit to 12000 (hard limit $(ulimit -Hn))"
	exit 0
fi
# In the sanitizer build, freed bodies sit in ASan's quarantine (256 MB by default) and
# would count as resident; other builds ignore the variable.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
export ASAN_OPTIONS

cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  max_connections: 5500
  max_connections_per_address: 1000
  header_timeout: 2s
  body_timeout: 3s
  max_body_buffer: 64MiB
  max_body_buffer_per_address: 48MiB
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=$API_PW start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with 12000 descriptors"
else
	not_ok "the daemon starts with 12000 descriptors" "$(cat "$WORK/daemon.log")"
	done_testing
	exit 1
fi
URL="http://127.0.0.1:$PORT"
TOKEN=$(curl -s -X POST "$URL/api/v1/auth/login" -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$API_PW\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
expect_match "an admin logs in" '^[A-Za-z0-9_.-]+$' "$TOKEN"
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$DAEMON_PID/status"; }
RSS0=$(rss)
echo "# daemon RSS at rest: $RSS0 kB"

# The normal client: /healthz every 0.2 s on a fresh connection, until told to stop.
pinger() {
	while [ ! -e "$WORK/stop-ping" ]; do
		curl -s -o /dev/null -m 10 -w '%{http_code} %{time_total}\n' "$URL/healthz" \
			>>"$WORK/pings" 2>/dev/null || echo "000 10" >>"$WORK/pings"
		sleep 0.2
	done
}
pinger &
PINGER=$!

# field NAME LINE: the value of NAME=... in an rzabuse result line.
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# 1. 5,000 connections that send nothing (from ten loopback addresses) are all held.
out=$("$ABUSE" -p "$PORT" -n 5000 -a 10 -b 2 -m idle -d 4)
echo "# idle: $out"
expect_eq "5,000 idle connections are accepted and held" "opened=5000 open=5000" \
	"opened=$(field opened "$out") open=$(field open "$out")"

# 2. Per source address: 1,100 from one address, the cap is 1,000: 100 get 503 and go.
out=$("$ABUSE" -p "$PORT" -n 1100 -b 30 -m idle -d 3)
echo "# per address: $out"
expect_eq "over max_connections_per_address, new connections get 503 and are closed" \
	"open=1000 codes=503:100" "open=$(field open "$out") codes=$(field codes "$out")"

# 3. Slowloris: a head sent one byte every 300 ms is cut off at the header timeout (2 s)
#    although bytes keep coming; the client would go on for 8 s.
out=$("$ABUSE" -p "$PORT" -n 200 -a 2 -b 50 -m slowhead -i 300 -d 8)
echo "# slow heads: $out"
life=$(field maxlife_ms "$out")
expect_eq "slowloris heads are all closed, with 408" "closed=200 codes=408:200" \
	"closed=$(field closed "$out") codes=$(field codes "$out")"
if [ "${life:-99999}" -lt 6000 ]; then
	ok "a slowloris head lives at most about server.header_timeout (longest ${life} ms)"
else
	not_ok "a slowloris head lives at most about server.header_timeout" "longest ${life} ms"
fi

# 4. A body sent one byte every 300 ms is cut off at the body timeout (3 s, absolute).
out=$("$ABUSE" -p "$PORT" -n 50 -b 52 -m slowbody -s 1000 -i 300 -d 10 -u /api/v1/auth/login)
echo "# slow bodies: $out"
life=$(field maxlife_ms "$out")
expect_eq "trickled bodies are all closed, with 408" "closed=50 codes=408:50" \
	"closed=$(field closed "$out") codes=$(field codes "$out")"
if [ "${life:-99999}" -lt 8000 ]; then
	ok "a trickled body lives at most about server.body_timeout (longest ${life} ms)"
else
	not_ok "a trickled body lives at most about server.body_timeout" "longest ${life} ms"
fi

# 5. Before login, 100 connections each sending a 16 MiB body: each is refused with 401
#    right after its headers; none is buffered.
RSS0=$(rss) # after the connections above are gone
out=$("$ABUSE" -p "$PORT" -n 100 -a 4 -b 60 -m body -s 16777216 -P "$DAEMON_PID" -d 30)
echo "# bodies before login: $out"
peak=$(field rss_max_kb "$out")
expect_eq "16 MiB bodies without credentials get 401" "answered=100 codes=401:100" \
	"answered=$(field answered "$out") codes=$(field codes "$out")"
echo "# RSS during 100 x 16 MiB unauthenticated bodies: peak $peak kB (at rest $RSS0 kB)"
if [ $((peak - RSS0)) -lt 65536 ]; then
	ok "and the daemon's RSS grows by less than 64 MiB ($((peak - RSS0)) kB)"
else
	not_ok "and the daemon's RSS grows by less than 64 MiB" "grew $((peak - RSS0)) kB"
fi

# 6. After login, 20 connections sending 16 MiB bodies at once: no more than
#    max_body_buffer_per_address (48 MiB) is buffered; the rest get 503.
RSS0=$(rss)
out=$("$ABUSE" -p "$PORT" -n 20 -m body -s 16777216 -t "$TOKEN" -P "$DAEMON_PID" -d 40)
echo "# bodies after login: $out"
peak=$(field rss_max_kb "$out")
codes=$(field codes "$out")
expect_eq "all 20 authenticated bodies are answered" "20" "$(field answered "$out")"
# (a resource write's body is at most 3 MiB: the handler answers 413 once it has it)
expect_match "some are read and handled (413: over a resource body), the others get 503" \
	'^(400|413):[1-3],503:(1[7-9])$' "$codes"
echo "# RSS during 20 x 16 MiB authenticated bodies: peak $peak kB (at rest $RSS0 kB)"
if [ $((peak - RSS0)) -lt 262144 ]; then
	ok "and the daemon's RSS grows by less than 256 MiB ($((peak - RSS0)) kB)"
else
	not_ok "and the daemon's RSS grows by less than 256 MiB" "grew $((peak - RSS0)) kB"
fi

# 7. Oversized headers, before and after login: 431, and nothing kept.
out=$("$ABUSE" -p "$PORT" -n 50 -b 70 -m header -s 100000 -P "$DAEMON_PID" -d 10)
echo "# big headers before login: $out"
expect_eq "a 100 kB header gets 431" "answered=50 codes=431:50" \
	"answered=$(field answered "$out") codes=$(field codes "$out")"
out=$("$ABUSE" -p "$PORT" -n 50 -b 71 -m header -s 100000 -t "$TOKEN" -P "$DAEMON_PID" -d 10)
echo "# big headers after login: $out"
expect_eq "with credentials too" "answered=50 codes=431:50" \
	"answered=$(field answered "$out") codes=$(field codes "$out")"

# The normal client was answered all along.
touch "$WORK/stop-ping"
wait "$PINGER"
n=$(wc -l <"$WORK/pings")
bad=$(awk '$1 != 200' "$WORK/pings" | wc -l)
echo "# normal client: $n requests, latency p50 $(awk '{print $2 * 1000}' "$WORK/pings" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}') ms, max $(awk '{print $2 * 1000}' "$WORK/pings" | sort -n | tail -n 1) ms"
expect_eq "a normal client was answered 200 throughout ($n requests)" "0" "$bad"

# 8. In all: with 5,000 held, 1,000 more from another address: 500 fit under
#    max_connections (5,500), 500 get 503; the held ones are untouched.
"$ABUSE" -p "$PORT" -n 5000 -a 10 -b 2 -m idle -d 6 >"$WORK/held" &
HELD=$!
sleep 2
out=$("$ABUSE" -p "$PORT" -n 1000 -b 40 -m idle -d 2)
echo "# over the total: $out"
expect_eq "over max_connections, new connections get 503 and are closed" \
	"open=500 codes=503:500" "open=$(field open "$out") codes=$(field codes "$out")"
wait "$HELD"
expect_eq "the connections held meanwhile stay open" "open=5000" "open=$(field open "$(cat "$WORK/held")")"
code=
for _ in $(seq 1 50); do
	code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")
	[ "$code" = 200 ] && break
	sleep 0.1
done
expect_eq "once they are gone, it serves again" "200" "$code"
lines=$(grep -c 'connection refused' "$WORK/daemon.log")
if [ "$lines" -le 6 ]; then
	ok "refusals are logged at most once per interval ($lines lines)"
else
	not_ok "refusals are logged at most once per interval" "$lines lines"
fi

# 9. Pipelining without reading (server.max_unsent): one connection sends GET /login 200
#    times per write for 25 s and reads no answer, another /metrics; the replies wait in
#    no more than the bound, reading stops, and memory stays flat (unbounded before: 1.5 GB
#    in 22 s). The daemon answers others meanwhile and after.
base_rss=$(rss)
"$ABUSE" -p "$PORT" -n 1 -b 60 -m pipeline -u /login -d 25 -P "$DAEMON_PID" >"$WORK/pipe1" &
P1=$!
out=$("$ABUSE" -p "$PORT" -n 1 -b 61 -m pipeline -u /metrics -d 25 -P "$DAEMON_PID")
wait "$P1"
echo "# pipelined /login: $(cat "$WORK/pipe1"); /metrics: $out; RSS before $base_rss kB"
peak=$(field rss_max_kb "$out")
peak1=$(field rss_max_kb "$(cat "$WORK/pipe1")")
[ "${peak1:-0}" -gt "${peak:-0}" ] && peak=$peak1
if [ -n "$peak" ] && [ "$((peak - base_rss))" -lt 49152 ]; then
	ok "two connections pipelining for 25 s without reading: RSS grew $((peak - base_rss)) kB (< 48 MiB)"
else
	not_ok "two connections pipelining for 25 s without reading keep RSS bounded" \
		"before $base_rss kB, peak ${peak:-?} kB"
fi
expect_eq "it answers others meanwhile and after" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' -m 10 "$URL/healthz")"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
