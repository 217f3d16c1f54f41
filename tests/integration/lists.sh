#!/bin/sh
# Lists stream with back-pressure: a list was built whole in memory (about 9 times the
# reply) before its first byte, and a client that did not read held all of it in the
# daemon. Over a store of large objects (a list of about 9 MB), clients that send a list
# request and never read must not grow the daemon past the page and backlog bounds, a
# client that reads gets every object, and ten concurrent lists leave the daemon near
# where it was.
. "${top_srcdir:-.}/tests/integration/lib.sh"
# In the sanitizer build, freed pages sit in ASan's quarantine (256 MB by default) and
# would count as growth: keep it small, as abuse.sh does.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
export ASAN_OPTIONS

if ! command -v bash >/dev/null 2>&1; then
	echo "1..0 # SKIP bash (for /dev/tcp) is not installed"
	exit 0
fi
N=60             # objects of ~150 KB: a list of ~9 MB
STALLED=10       # clients that never read
GROWTH_MAX_MB=40 # over the RSS before them: the old code held ~9 MB each, and more
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
if REZUSCLOUD_ADMIN_PASSWORD=lists-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"lists-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }

api -X POST "$API/tenants" -d '{"metadata":{"name":"big"},"spec":{"clusterProvider":"sim"}}' >/dev/null
filler=$(head -c 150000 /dev/zero | tr '\0' 'x')
printf '{"metadata":{"generateName":"p-","annotations":{"example.com/blob":"%s"}},"spec":{"patch":"a: 1\\n"}}' \
	"$filler" >"$WORK/body.json"
: >"$WORK/urls"
for _ in $(seq 1 $N); do echo "url = \"$API/tenants/big/configpatches\"" >>"$WORK/urls"; done
created=$(api -o /dev/null -w '%{http_code}\n' --data-binary "@$WORK/body.json" -K "$WORK/urls" | grep -c '^201$')
expect_eq "$N objects of 150 KB are stored" "$N" "$created"

# A client that reads gets the whole list, chunked, as valid JSON with every object.
api -D "$WORK/list.head" -o "$WORK/list.json" "$API/tenants/big/configpatches"
expect_match "the list is streamed (chunked)" '^Transfer-Encoding: chunked' "$(tr -d '\r' <"$WORK/list.head")"
items=$(grep -o '"kind":"ConfigPatch"' "$WORK/list.json" | wc -l)
expect_eq "and holds every object" "$N" "$items"
expect_match "and ends as a list object does" '\}\]\}$' "$(tail -c 200 "$WORK/list.json")"
echo "# list: $(wc -c <"$WORK/list.json") bytes"
pretty=$(api "$API/tenants/big/configpatches?pretty=true&limit=2")
expect_match "?pretty indents it" '^    "continue": "' "$pretty"

base_kb=$(rss_kb)
echo "# RSS before the stalled clients: $((base_kb / 1024)) MB"
# Clients that send their request and never read a byte.
bash -c '
	for i in $(seq 1 '"$STALLED"'); do
		exec {fd}<>/dev/tcp/127.0.0.1/'"$PORT"' || exit 1
		printf "GET /api/v1/tenants/big/configpatches HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n\r\n" \
			"'"$TOKEN"'" >&$fd
	done
	sleep 6' &
HOLDER=$!
peak_kb=$base_kb
for _ in $(seq 1 40); do
	r=$(rss_kb)
	[ "$r" -gt "$peak_kb" ] && peak_kb=$r
	sleep 0.1
done
code=$(api -o /dev/null -w '%{http_code}' -m 5 "$API/tenants/big")
expect_eq "while they stall, the daemon answers" "200" "$code"
growth_mb=$(((peak_kb - base_kb) / 1024))
echo "# RSS with $STALLED stalled lists: peak $((peak_kb / 1024)) MB (+$growth_mb MB)"
if [ "$growth_mb" -le "$GROWTH_MAX_MB" ]; then
	ok "$STALLED clients that do not read a 9 MB list grow the daemon by at most $GROWTH_MAX_MB MB (+$growth_mb MB)"
else
	not_ok "$STALLED clients that do not read a 9 MB list grow the daemon by at most $GROWTH_MAX_MB MB" "+$growth_mb MB"
fi
wait "$HOLDER"

# Ten concurrent lists that read: all complete; the memory goes back afterwards.
pids=
for i in $(seq 1 10); do
	api -o "$WORK/c$i.json" "$API/tenants/big/configpatches" &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
complete=0
for i in $(seq 1 10); do
	[ "$(grep -o '"kind":"ConfigPatch"' "$WORK/c$i.json" | wc -l)" = "$N" ] && complete=$((complete + 1))
done
expect_eq "ten concurrent lists are complete" "10" "$complete"
sleep 1
after_kb=$(rss_kb)
echo "# RSS after: $((after_kb / 1024)) MB (before the lists: $((base_kb / 1024)) MB)"
if [ $((after_kb - base_kb)) -le $((GROWTH_MAX_MB * 1024 / 2)) ]; then
	ok "and the daemon's memory returns near where it was (+$(((after_kb - base_kb) / 1024)) MB)"
else
	not_ok "and the daemon's memory returns near where it was" "+$(((after_kb - base_kb) / 1024)) MB"
fi
done_testing
