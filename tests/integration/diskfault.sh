#!/bin/sh
# The disk under the data dir fails. Full (a small tmpfs, filled): API writes answer 507
# InsufficientStorage naming the cause, reads go on, /readyz answers 503 naming it, nothing
# acknowledged is lost, and once space is freed the daemon is ready and takes writes again
# without a restart. Read-only while running (ext4 on a loop device, forced read-only by an
# error as a failing disk would): writes answer 503 naming it, /readyz 503, reads go on, the
# daemon stops on SIGTERM; after fsck and a remount everything acknowledged is there.
# Read-only at start (mount -o remount,ro; Linux refuses it while the daemon holds the
# database open for writing): the daemon exits 1 naming the cause, and starts once the
# mount is writable again. And the data dir's files are private (0600, the dir 0700),
# whatever the umask, with modes left open corrected at start.
. "${top_srcdir:-.}/tests/integration/lib.sh"

DATA="$WORK/data"
EXT="$WORK/ext"
LOOP=""
unmount_all() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -KILL "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	mountpoint -q "$DATA" 2>/dev/null && umount "$DATA"
	mountpoint -q "$EXT" 2>/dev/null && umount "$EXT"
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	cleanup
}
trap unmount_all EXIT
mkdir -p "$DATA" "$EXT"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=6m,mode=0755 tmpfs "$DATA" 2>"$WORK/mount.err"; then
	echo "1..0 # SKIP cannot mount a tmpfs: $(id -u) $(cat "$WORK/mount.err" 2>/dev/null)"
	exit 0
fi
PW=diskfault-test-pw
conf() { # conf FILE DATA_DIR
	cat >"$1" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $2
  storage_probe: 200ms
tofu:
  binary: /usr/local/bin/terraform
  debounce: 1h
  resync: 0s
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
store:
  durability: full
CONF
}
up() { # up LOG CONF
	if REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$1" -c "$2"; then ok "the daemon starts ($(basename "$1"))"; else not_ok "the daemon starts ($(basename "$1"))" "$(tail -n 5 "$1")"; fi
	BASE="http://127.0.0.1:$PORT"
	API="$BASE/api/v1"
	TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"admin\",\"password\":\"$PW\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
}
# write NAME: POST a ConfigPatch; prints the HTTP code (000: no answer in 10 s) and keeps
# the body in $WORK/last; a 201 is recorded in $WORK/acked.
write() {
	c=$(curl -s -m 10 -o "$WORK/last" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' -X POST "$API/tenants/a/configpatches" \
		-d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"patch\":\"machine: {note: '$(printf '%0200d' 0)'}\"}}")
	[ "$c" = 201 ] && echo "$1" >>"$WORK/acked"
	echo "$c"
}
readyz() { curl -s -m 10 -w ' %{http_code}' "$BASE/readyz" | tr -d '\n'; }
# wait_ready CODE: poll /readyz (up to 5 s) until it answers CODE
wait_ready() {
	for _ in $(seq 1 50); do
		case "$(readyz)" in *" $1") return 0 ;; esac
		sleep 0.1
	done
}
listed() { curl -s -m 10 -H "Authorization: Bearer $TOKEN" "$API/tenants/a/configpatches" | grep -o '"name":"w[a-z0-9-]*"' | sed 's/"name":"\(.*\)"/\1/' | sort; }
missing() { sort "$WORK/acked" | comm -23 - "$WORK/listed"; }

# --- private files --------------------------------------------------------------------------
mkdir "$DATA/backups"
echo leftover >"$DATA/backups/old.rzbackup"
chmod 0644 "$DATA/backups/old.rzbackup"
conf "$WORK/a.conf" "$DATA"
umask 022
up "$WORK/a.log" "$WORK/a.conf"
curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X POST "$API/tenants" \
	-d '{"metadata":{"name":"a"},"spec":{"clusterProvider":"sim"}}' >/dev/null
expect_eq "rezus.db, its -wal and -shm are 0600 under umask 022" "600 600 600" \
	"$(stat -c %a "$DATA/rezus.db" "$DATA/rezus.db-wal" "$DATA/rezus.db-shm" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "the data dir (a mount point of mode 755) is made 0700" "700" "$(stat -c %a "$DATA")"
expect_eq "nothing under it is open to group or others" "" "$(find "$DATA" ! -type l -perm /077)"
expect_match "a file left 0644 is corrected, and the log says so" \
	"msg=\"[0-9]+ file\\(s\\) under '$DATA' were open to group or others" "$(cat "$WORK/a.log")"
expect_eq "/readyz answers 200 while the disk takes writes" "ok 200" "$(readyz)"

# --- full -----------------------------------------------------------------------------------
: >"$WORK/acked"
for i in $(seq 1 30); do write "w$i" >/dev/null; done
expect_eq "30 writes acknowledged before the disk fills" "30" "$(wc -l <"$WORK/acked" | tr -d ' ')"
dd if=/dev/zero of="$DATA/fill" bs=64k 2>/dev/null
expect_eq "the tmpfs is full" "0" "$(df -k --output=avail "$DATA" | tail -n 1 | tr -d ' ')"
codes=""
for i in $(seq 1 40); do codes="$codes $(write "w-full-$i")"; done
expect_eq "every write on the full disk is answered 201 or 507 (no 500, no hang)" "" \
	"$(echo $codes | tr ' ' '\n' | grep -v -e '^201$' -e '^507$')"
expect_match "and the writes are refused with 507" " 507" "$codes"
write w-full-last >/dev/null
expect_match "a Kubernetes Status naming the cause" \
	'"kind":"Status".*"message":"the data dir is full \(No space left on device\): the change was not stored; free space and retry","reason":"InsufficientStorage","code":507' \
	"$(cat "$WORK/last")"
expect_match "a login on the full disk is answered 507 as writes are, not 500" '"code":507} +507$' \
	"$(curl -s -m 10 -w ' %{http_code}' -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"admin\",\"password\":\"$PW\"}" | tr -d '\n' | sed 's/}/} /g')"
wait_ready 503
expect_match "/readyz answers 503, naming the data dir and the cause" \
	"data dir '$DATA' cannot be written: No space left on device.* 503" "$(readyz)"
expect_match "/readyz?verbose answers in Kubernetes' lines, the failed check with [-]" \
	"^\\[\\+\\]database ok \\[-\\]storage failed: data dir '$DATA' cannot be written: No space left on device.* readyz check failed +503$" \
	"$(curl -s -m 10 -w ' %{http_code}' "$BASE/readyz?verbose" | tr '\n' ' ')"
expect_eq "the daemon is still there" "alive" "$(kill -0 "$DAEMON_PID" 2>/dev/null && echo alive)"
listed >"$WORK/listed"
expect_eq "reads go on, and every acknowledged write is there" "" "$(missing)"
rm -f "$DATA/fill"
wait_ready 200
expect_eq "space freed: /readyz answers 200 again, without a restart" "ok 200" "$(readyz)"
expect_eq "and writes succeed" "201" "$(write w-after)"
listed >"$WORK/listed"
expect_eq "nothing acknowledged was lost" "" "$(missing)"
expect_match "the log said when writes failed and when they worked again" \
	"msg=\"writing '$DATA/rezus.db' works again\"" "$(cat "$WORK/a.log")"
ACKED_FULL=$(wc -l <"$WORK/acked" | tr -d ' ')

# --- read-only at start ---------------------------------------------------------------------
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
mount -o remount,ro "$DATA"
expect_eq "the data dir's mount is read-only" "ro" "$(findmnt -n -o OPTIONS "$DATA" | cut -d, -f1)"
REZUSCLOUD_ADMIN_PASSWORD=$PW "$REZUSCLOUD" -c "$WORK/a.conf" >/dev/null 2>"$WORK/ro.log" &
DAEMON_PID=$!
wait_exit "$DAEMON_PID" 10
DAEMON_PID=""
expect_eq "a read-only data dir at start: the daemon exits 1" "1" "$EXIT_STATUS"
expect_match "naming the cause" "Read-only file system" "$(cat "$WORK/ro.log")"
mount -o remount,rw "$DATA"
up "$WORK/b.log" "$WORK/a.conf"
listed >"$WORK/listed"
expect_eq "writable again: it starts, with every acknowledged write ($ACKED_FULL)" "" "$(missing)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
DAEMON_PID=""

# --- read-only while running ----------------------------------------------------------------
dd if=/dev/zero of="$WORK/ext.img" bs=1M count=24 2>/dev/null
if ! LOOP=$(losetup -f --show "$WORK/ext.img" 2>"$WORK/losetup.err") || ! mkfs.ext4 -q "$LOOP" 2>>"$WORK/losetup.err" ||
	! mount -o errors=remount-ro "$LOOP" "$EXT" 2>>"$WORK/losetup.err" ||
	[ ! -w "/sys/fs/ext4/$(basename "$LOOP")/trigger_fs_error" ]; then
	ok "# SKIP no ext4 on a loop device to fail: $(head -c 200 "$WORK/losetup.err")"
	done_testing
	exit $?
fi
conf "$WORK/c.conf" "$EXT/data"
up "$WORK/c.log" "$WORK/c.conf"
curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X POST "$API/tenants" \
	-d '{"metadata":{"name":"a"},"spec":{"clusterProvider":"sim"}}' >/dev/null
: >"$WORK/acked"
for i in $(seq 1 30); do write "w$i" >/dev/null; done
mount -o remount,ro "$EXT" 2>"$WORK/remount.err"
expect_match "mount -o remount,ro is refused while the daemon writes (so a disk error forces it)" \
	"busy" "$(cat "$WORK/remount.err")"
echo 1 >"/sys/fs/ext4/$(basename "$LOOP")/trigger_fs_error"
expect_match "the file system is now read-only" "emergency_ro|(^|,)ro(,|$)" "$(findmnt -n -o OPTIONS "$EXT")"
codes=""
for i in $(seq 1 10); do codes="$codes $(write "w-ro-$i")"; done
expect_eq "every write on the read-only disk is answered 503 (no 500, no hang)" "503 503 503 503 503 503 503 503 503 503" "$(echo $codes)"
expect_match "a Kubernetes Status naming the cause" \
	'"kind":"Status".*"message":"the data dir (is read-only \(Read-only file system\)|cannot be written \(Input/output error\)): the change was not stored","reason":"ServiceUnavailable","code":503' \
	"$(cat "$WORK/last")"
wait_ready 503
# the write probe's finding, or the database's own when its failed write came first
expect_match "/readyz answers 503, naming the cause" \
	"(cannot be written: Read-only file system|database writes fail: disk I/O error \(Input/output error\)).* 503" "$(readyz)"
listed >"$WORK/listed"
expect_eq "reads go on, and every acknowledged write is there" "" "$(missing)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
expect_match "the daemon stops on SIGTERM" "^[0-9]+$" "$EXIT_STATUS"
DAEMON_PID=""
umount "$EXT"
e2fsck -fy "$LOOP" >"$WORK/fsck.out" 2>&1
mount "$LOOP" "$EXT"
up "$WORK/d.log" "$WORK/c.conf"
listed >"$WORK/listed"
expect_eq "after fsck and a remount, every acknowledged write is there" "" "$(missing)"
expect_eq "and writes succeed" "201" "$(write w-after)"
expect_eq "/readyz answers 200" "ok 200" "$(readyz)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
