#!/bin/sh
# A login flood from one address must not delay a login from another: 200 junk logins
# once kept the two worker threads hashing and delayed a real login by 6.9 s. Password
# checks are bounded per address and in total, the rest refused with 429 and Retry-After
# before any hashing; the login from 127.0.0.2 (Linux routes all of 127/8 to lo) gets its
# turn at once. Its latency is reported, not asserted.
. "${top_srcdir:-.}/tests/integration/lib.sh"

curl --interface 127.0.0.2 -s -o /dev/null "http://127.0.0.1:1/" 2>/dev/null
if [ $? -eq 45 ]; then
	echo "1..0 # SKIP 127.0.0.2 cannot be bound"
	exit 0
fi
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
log:
  access_per_address: 0 # every failed check is logged: how the flood's hashing is counted
CONF
REZUSCLOUD_ADMIN_PASSWORD=flood-test-pw-1 start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	{ not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"; done_testing; exit 1; }
URL="http://127.0.0.1:$PORT/api/v1/auth/login"

# the same login with nothing else going on, for comparison
ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(ms)
curl -s -o /dev/null --interface 127.0.0.2 -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"flood-test-pw-1"}' "$URL"
echo "# a login from 127.0.0.2 alone: $(($(ms) - start)) ms"

# 200 logins at once from 127.0.0.1 (one curl, 200 connections), each a different name
# with a wrong password, so that the per-user limiter does not stop them: only the bound
# on password checks can
for i in $(seq 1 200); do
	cat >>"$WORK/flood.curl" <<CURL
url = "$URL"
header = "Content-Type: application/json"
data = "{\\"username\\":\\"junk$i\\",\\"password\\":\\"wrong-$i\\"}"
output = "/dev/null"
write-out = "%{http_code} %header{retry-after}\\n"
CURL
	[ "$i" -lt 200 ] && echo next >>"$WORK/flood.curl"
done
curl -s -Z --parallel-immediate --parallel-max 200 --interface 127.0.0.1 -K "$WORK/flood.curl" \
	>"$WORK/flood.out" 2>/dev/null &
FLOOD=$!
sleep 0.3
# the real login, from another address, while the flood is on
start=$(ms)
real=$(curl -s -o "$WORK/real.json" -w '%{http_code}' --interface 127.0.0.2 \
	-H 'Content-Type: application/json' -d '{"username":"admin","password":"flood-test-pw-1"}' "$URL")
took=$(($(ms) - start))
wait "$FLOOD"
echo "# the same login during the flood: $took ms"
expect_eq "the real login from another address succeeds" "200" "$real"

sed 's/ *$//' "$WORK/flood.out" >"$WORK/flood.txt" && mv "$WORK/flood.txt" "$WORK/flood.out"
n401=$(grep -c '^401' "$WORK/flood.out")
n429=$(grep -c '^429' "$WORK/flood.out")
echo "# flood of 200: $n401 answered 401 (checked), $n429 answered 429 (refused unchecked)"
expect_eq "every junk login is answered 401 or 429" "200" "$((n401 + n429))"
if [ "$n429" -gt 0 ]; then ok "logins beyond the bound are refused with 429 ($n429)"; else not_ok "logins beyond the bound are refused with 429" "$(sort "$WORK/flood.out" | uniq -c)"; fi
expect_eq "a 429 says when to come back (Retry-After: 1)" "$n429" "$(grep -c '^429 1$' "$WORK/flood.out")"
# one password check for each 401, none for the 429s: the daemon logs every failed check
hashed=$(grep -c 'msg="login refused" user=junk' "$WORK/daemon.log")
echo "# password checks for the flood: $hashed"
expect_eq "only the logins answered 401 were hashed" "$n401" "$hashed"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
