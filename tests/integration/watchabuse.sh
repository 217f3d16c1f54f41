#!/bin/sh
# Watchers that never read, over a store of large objects: a watch's replay (the initial
# list, or the events since a resourceVersion) was built whole in memory and written at
# once, past the stream backlog cap — 40 such watchers took the daemon to 795 MB and
# /healthz to 12.8 s. Replays now stream in pages and pause while the client's unread
# backlog is above half the cap: RSS stays bounded, the loop answers, and a client that
# reads still gets every object.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! command -v bash >/dev/null 2>&1; then
	echo "1..0 # SKIP bash (for /dev/tcp) is not installed"
	exit 0
fi
N=60          # objects of ~200 KiB: a replay of ~12 MB per watcher
WATCHERS=40   # half list (no resourceVersion), half replay (resourceVersion=1)
GROWTH_MAX_MB=200 # over the RSS after the writes (sanitizer builds start high)
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: /usr/local/bin/terraform
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=watch-abuse-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"watch-abuse-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }

api -X POST "$API/tenants" -d '{"metadata":{"name":"big"},"spec":{"clusterProvider":"sim"}}' >/dev/null
filler=$(head -c 150000 /dev/zero | tr '\0' 'x')
created=0
for i in $(seq 1 $N); do
	printf '{"metadata":{"name":"p%d","annotations":{"example.com/blob":"%s"}},"spec":{"patch":"a: %d\\n"}}' \
		"$i" "$filler" "$i" >"$WORK/body.json"
	code=$(api -o /dev/null -w '%{http_code}' -X POST "$API/tenants/big/configpatches" --data-binary "@$WORK/body.json")
	[ "$code" = 201 ] && created=$((created + 1))
done
expect_eq "$N objects of 150 KB are stored" "$N" "$created"
base_kb=$(rss_kb)
echo "# RSS after the writes: $((base_kb / 1024)) MB"

# Watchers that send their request and never read a byte.
bash -c '
	for i in $(seq 1 '"$WATCHERS"'); do
		exec {fd}<>/dev/tcp/127.0.0.1/'"$PORT"' || exit 1
		if [ $((i % 2)) = 0 ]; then q="watch=true"; else q="watch=true&resourceVersion=1"; fi
		printf "GET /api/v1/tenants/big/configpatches?%s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n\r\n" \
			"$q" "'"$TOKEN"'" >&$fd
	done
	sleep 12' &
HOLDER=$!

# While they hold on: the daemon's RSS, and how long /healthz takes.
peak=0 worst=0 answered=0
for _ in $(seq 1 16); do
	sleep 0.5
	kb=$(rss_kb)
	[ "${kb:-0}" -gt "$peak" ] && peak=$kb
	t=$(curl -s -o /dev/null -m 30 -w '%{http_code} %{time_total}' "http://127.0.0.1:$PORT/healthz")
	[ "${t% *}" = 200 ] && answered=$((answered + 1))
	ms=$(echo "${t#* }" | awk '{ printf "%d", $1 * 1000 }')
	[ "$ms" -gt "$worst" ] && worst=$ms
done
growth=$(((peak - base_kb) / 1024))
echo "# peak RSS with $WATCHERS non-reading watchers: $((peak / 1024)) MB (+$growth MB); slowest /healthz: $worst ms"
if [ "$growth" -lt $GROWTH_MAX_MB ]; then
	ok "RSS grows by less than $GROWTH_MAX_MB MB (+$growth MB)"
else
	not_ok "RSS grows by less than $GROWTH_MAX_MB MB" "peak $((peak / 1024)) MB, +$growth MB"
fi
expect_eq "/healthz is answered all along" "16" "$answered"

# A client that reads gets every object, and then live changes.
api -N -m 8 -H 'Accept: application/x-ndjson' "$API/tenants/big/configpatches?watch=true" >"$WORK/list.out" &
READER=$!
api -N -m 8 -H 'Accept: application/x-ndjson' "$API/tenants/big/configpatches?watch=true&resourceVersion=1" >"$WORK/replay.out" &
READER2=$!
sleep 3
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -X PATCH \
	-H 'Content-Type: application/merge-patch+json' "$API/tenants/big/configpatches/p1" \
	-d '{"metadata":{"labels":{"seen":"live"}}}')
expect_eq "a live change is made meanwhile" "200" "$code"
wait "$READER" "$READER2"
expect_eq "a reading watcher gets the initial list whole" "$N" "$(grep -c '^{"type":"ADDED"' "$WORK/list.out")"
expect_eq "and the live change after it" "1" "$(grep -c '^{"type":"MODIFIED".*"seen":"live"' "$WORK/list.out")"
expect_eq "a reading replay gets every event" "$N" "$(grep -c '^{"type":"ADDED"' "$WORK/replay.out")"
expect_eq "and the live change after it" "1" "$(grep -c '^{"type":"MODIFIED".*"seen":"live"' "$WORK/replay.out")"
wait "$HOLDER"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
