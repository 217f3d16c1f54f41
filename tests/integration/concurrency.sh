#!/bin/sh
# The run pool under load: 20 sim tenants created at once with tofu.workers=2 all converge,
# no tenant ever has two runs at once and the pool never runs more than two (checked from
# the Runs' startedAt/finishedAt, which carry milliseconds).
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
N=20
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  workers: 2
  debounce: 200ms
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=load-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with two workers"
else
	not_ok "the daemon starts with two workers" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"load-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }

for i in $(seq 1 $N); do
	api -X POST "$API/tenants" -d '{"metadata":{"name":"t'"$i"'"},"spec":{"clusterProvider":"sim"}}' >/dev/null
	api -X POST "$API/tenants/t$i/nodegroups" -d '{"metadata":{"name":"w"},"spec":{"role":"worker","count":2,"providerClass":"sim"}}' >/dev/null
done
ready() { api "$API/tenants" | grep -o '"type":"Reconciled","status":"True"' | wc -l | tr -d ' '; }
for _ in $(seq 1 1200); do
	[ "$(ready)" -ge $N ] && break
	sleep 0.1
done
expect_eq "all $N tenants converge" "$N" "$(ready)"
expect_eq "with $((N * 2)) Machines" "$((N * 2))" "$(api "$API/machines" | grep -o '"kind":"Machine"' | wc -l | tr -d ' ')"
# Every run as "tenant start end" with start/end the sqlite julianday in ms.
sqlite3 "$WORK/data/rezus.db" "SELECT tenant,
	CAST(julianday(json_extract(doc, '\$.status.startedAt')) * 86400000 AS INTEGER),
	CAST(julianday(json_extract(doc, '\$.status.finishedAt')) * 86400000 AS INTEGER)
	FROM objects WHERE kind = 'Run'" | tr '|' ' ' >"$WORK/runs"
expect_eq "$N or more runs were recorded" "1" "$(awk 'END { print (NR >= '"$N"') }' "$WORK/runs")"
expect_match "their times carry milliseconds" '"startedAt":"[0-9T:-]*\.[0-9]{3}Z"' "$(api "$API/tenants/t1/runs")"
expect_eq "every run has a start and an end" "0" "$(awk 'NF != 3 || $2 == "" || $3 == ""' "$WORK/runs" | wc -l | tr -d ' ')"
expect_eq "no tenant ever ran two runs at once" "" "$(awk '
	{ t[NR] = $1; s[NR] = $2; e[NR] = $3 }
	END { for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++)
		if (t[i] == t[j] && s[i] < e[j] && s[j] < e[i]) print t[i] }' "$WORK/runs")"
# The most runs going at any start of a run: exactly the pool's two.
expect_eq "the pool ran two at once, never more" "2" "$(awk '
	{ s[NR] = $2; e[NR] = $3 }
	END { m = 0; for (i = 1; i <= NR; i++) { n = 0; for (j = 1; j <= NR; j++) if (s[j] <= s[i] && s[i] < e[j]) n++; if (n > m) m = n }; print m }' "$WORK/runs")"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
