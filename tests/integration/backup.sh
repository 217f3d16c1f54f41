#!/bin/sh
# Backups and restore with the real daemon, terraform/tofu and the sim plugin: a backup taken
# while 50 clients write holds exactly the writes acknowledged up to its revision; restored
# into a fresh data dir the daemon serves the same objects, state versions (through
# /tfstate, the state key unsealed with the passphrase) and logins; a damaged or truncated
# backup, a wrong passphrase and a data dir a daemon holds are refused; a dry run changes
# nothing; a backup without the passphrase restores everything and says the state key is
# needed; the schedule keeps backup.keep.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
CLIENTS=50
WRITES=60
PW=backup-test-pw
printf 'a passphrase for the test\n' >"$WORK/pass"
printf 'not the passphrase\n' >"$WORK/wrong"

# conf FILE DATA_DIR DEBOUNCE [EXTRA backup: LINES]
conf() {
	cat >"$1" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $2
tofu:
  binary: $TF
  debounce: $3
  resync: 0s
observe:
  interval: 1h
  fast_interval: 1h
backup:
$4
  keep: 50
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
}
stop() { kill -TERM "$DAEMON_PID"; wait_exit "$DAEMON_PID" 15; }
login() { # login USER PASSWORD: the token, or nothing
	curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"$1\",\"password\":\"$2\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
up() { # up LOG CONF: start, set API, BASE and TOKEN
	if REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$1" -c "$2"; then ok "the daemon starts ($(basename "$1"))"; else not_ok "the daemon starts ($(basename "$1"))" "$(tail -n 5 "$1")"; fi
	BASE="http://127.0.0.1:$PORT"
	API="$BASE/api/v1"
	TOKEN=$(login admin "$PW")
}
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$@"; }
names() { api "$API/$1" | grep -o '"name":"[a-z0-9-]*","tenant"' | sed 's/"name":"\([^"]*\)".*/\1/' | sort | tr '\n' ' '; }
state() { curl -s -u "x:$STOKEN" "$BASE/tfstate/s"; } # an API token: they survive a restore
state_md5() { state | md5sum | cut -d' ' -f1; }
versions() { api "$API/tenants/s/state" | grep -o '"version":[0-9]*,"lineage":"[^"]*","time":"[^"]*"' | tr '\n' ' '; }

# --- a tenant with real state, a user ---------------------------------------------------------
conf "$WORK/a.conf" "$WORK/data" 100ms "  passphrase_file: $WORK/pass"
up "$WORK/a.log" "$WORK/a.conf"
STOKEN=$(api -X POST "$API/users/admin/tokens" -d '{"spec":{}}' | sed -n 's/.*"secret":"\(rzt_[^"]*\)".*/\1/p')
api -X POST "$API/users" -d '{"metadata":{"name":"alice"},"spec":{"role":"edit","password":"alice-password-1"}}' >/dev/null
api -X POST "$API/tenants" -d '{"metadata":{"name":"s"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/s/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":2,"providerClass":"sim"}}' >/dev/null
for _ in $(seq 1 600); do
	[ "$(code "$API/tenants/s/kubeconfig")" = 200 ] && [ -n "$(names tenants/s/machines)" ] && break
	sleep 0.1
done
expect_eq "the sim tenant is applied: state, outputs, machines" "200" "$(code "$API/tenants/s/kubeconfig")"
MACHINES=$(names tenants/s/machines)
VERSIONS=$(versions)
MD5=$(state_md5)
KUBECONFIG_MD5=$(api "$API/tenants/s/kubeconfig" | md5sum | cut -d' ' -f1)
expect_match "it has state versions" '"version":1' "$VERSIONS"
expect_match "and /tfstate serves the state" '"lineage"' "$(state)"
stop

# --- a backup while 50 clients write -------------------------------------------------------------
# debounce 1h: the writes below start no run, so the state stays as it is.
conf "$WORK/b.conf" "$WORK/data" 1h "  passphrase_file: $WORK/pass"
up "$WORK/b.log" "$WORK/b.conf"
api -X POST "$API/tenants" -d '{"metadata":{"name":"load"},"spec":{"clusterProvider":"sim"}}' >/dev/null
mkdir "$WORK/acks"
WRITERS=""
# Each client one curl, its writes one after another on one connection (30 a second, so
# that they last about two seconds and the backup falls among them), each answer kept in
# acks/c<client>-<write> (a process per write cost more CPU than the daemon's work).
for i in $(seq 1 $CLIENTS); do
	for j in $(seq 1 $WRITES); do
		[ "$j" -gt 1 ] && echo next
		printf 'url = "%s"\nheader = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\n' \
			"$API/tenants/load/configpatches" "$TOKEN"
		printf 'data = "{\\"metadata\\":{\\"name\\":\\"c%s-%s\\"},\\"spec\\":{\\"patch\\":\\"a: %s\\"}}"\n' "$i" "$j" "$j"
		printf 'output = "%s/acks/c%s-%s"\n' "$WORK" "$i" "$j"
	done >"$WORK/client$i.cfg"
	curl -s --rate 30/s -K "$WORK/client$i.cfg" &
	WRITERS="$WRITERS $!"
done
sleep 0.5
BACKUP_JSON=$(api -X POST "$API/backups")
BACKUP=$(printf '%s' "$BACKUP_JSON" | sed -n 's/.*"metadata":{"name":"\([^"]*\)".*/\1/p')
REV=$(printf '%s' "$BACKUP_JSON" | sed -n 's/.*"revision":\([0-9]*\).*/\1/p')
for w in $WRITERS; do wait "$w"; done # not the daemon's
FILE="$WORK/data/backups/$BACKUP.rzbackup"
# "c<client>-<write> <rv>" for every write acknowledged with its resourceVersion
awk 'match($0, /"resourceVersion":"[0-9]+"/) {
	n = FILENAME; sub(/.*\//, "", n)
	print n, substr($0, RSTART + 19, RLENGTH - 20)
}' "$WORK/acks"/* | sort >"$WORK/acked"
awk -v rev="$REV" '$2 <= rev { print $1 }' "$WORK/acked" | sort >"$WORK/before"
awk -v rev="$REV" '$2 > rev { print $1 }' "$WORK/acked" | sort >"$WORK/after"
expect_match "POST /api/v1/backups answers 201 with the Backup" '"kind":"Backup".*"phase":"Completed"' "$BACKUP_JSON"
expect_eq "every write was acknowledged" "$((CLIENTS * WRITES))" "$(wc -l <"$WORK/acked" | tr -d ' ')"
expect_eq "the backup ran while the clients wrote: writes on both sides of its revision" "yes" \
	"$([ -s "$WORK/before" ] && [ -s "$WORK/after" ] && echo yes || echo "no: $(wc -l <"$WORK/before") before, $(wc -l <"$WORK/after") after revision $REV")"
expect_eq "the file is 0600" "600" "$(stat -c %a "$FILE")"
expect_match "it holds the state key, sealed" '"stateKey":\{"included":true' "$BACKUP_JSON"
expect_eq "the passphrase is not in the file" "0" "$(grep -c 'a passphrase for the test' "$FILE")"
expect_match "GET lists it" "\"name\":\"$BACKUP\"" "$(api "$API/backups")"
expect_match "GET of it is its manifest" "\"revision\":$REV" "$(api "$API/backups/$BACKUP")"
expect_match "every call is audited" '"method":"POST","path":"/api/v1/backups","verb":"create","kind":"Backup"' "$(api "$API/audit?kind=Backup")"
expect_eq "a viewer may not list backups" "403" "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(login alice alice-password-1)" "$API/backups")"
RUNNING_PID=$DAEMON_PID

# --- refusals ---------------------------------------------------------------------------------
out=$("$REZUSCLOUD" restore "$FILE" --data-dir "$WORK/data" --passphrase-file "$WORK/pass" 2>&1)
expect_eq "restore is refused while the daemon holds the data dir" "1" "$?"
expect_match "saying so on one line" "^rezuscloud restore: data dir '.*' is in use by another rezuscloud \\(pid $RUNNING_PID\\)" "$out"
expect_eq "and the daemon still serves what it had" "$((CLIENTS * WRITES))" "$(names tenants/load/configpatches | wc -w | tr -d ' ')"
check "backup verify says the backup is intact" "$REZUSCLOUD" backup verify "$FILE" --passphrase-file "$WORK/pass"
out=$("$REZUSCLOUD" backup verify "$FILE" 2>&1)
expect_match "without the passphrase it cannot check the keyed checksum, and says so" \
	'^1 rezuscloud backup verify: .*: its checksum is keyed with the backup passphrase' "$? $out"
cp "$FILE" "$WORK/bad.rzbackup"
size=$(stat -c %s "$FILE")
printf 'X' | dd of="$WORK/bad.rzbackup" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
out=$("$REZUSCLOUD" backup verify "$WORK/bad.rzbackup" --passphrase-file "$WORK/pass" 2>&1)
expect_eq "verify refuses a changed byte" "1 1" "$? $(printf '%s\n' "$out" | wc -l | tr -d ' ')"
expect_match "naming the checksum" 'checksum mismatch: the file is damaged' "$out"
head -c $((size - 1000)) "$FILE" >"$WORK/short.rzbackup"
out=$("$REZUSCLOUD" backup verify "$WORK/short.rzbackup" --passphrase-file "$WORK/pass" 2>&1)
expect_match "verify refuses a truncated file" '^1 rezuscloud backup verify: .*: truncated' "$? $out"
for f in bad short; do
	out=$("$REZUSCLOUD" restore "$WORK/$f.rzbackup" --data-dir "$WORK/refused" 2>&1)
	expect_eq "restore refuses the $f file and writes no database" "1 no" "$? $([ -e "$WORK/refused/rezus.db" ] && echo yes || echo no)"
done
out=$("$REZUSCLOUD" restore "$FILE" --data-dir "$WORK/refused" --passphrase-file "$WORK/wrong" 2>&1)
expect_match "restore refuses a wrong passphrase" '^1 rezuscloud restore: .*: the passphrase does not unseal the state key' "$? $out"
expect_eq "before writing anything" "no" "$([ -e "$WORK/refused/rezus.db" ] && echo yes || echo no)"
stop

# --- a dry run changes nothing -------------------------------------------------------------------
snap() { (cd "$WORK/data" && find . -maxdepth 1 -type f ! -name '*.lock' | sort | xargs md5sum); }
before=$(snap)
out=$("$REZUSCLOUD" restore "$FILE" --dry-run --data-dir "$WORK/data" --passphrase-file "$WORK/pass" 2>&1)
expect_eq "a dry run succeeds" "0" "$?"
expect_eq "and changes nothing in the data dir" "$before" "$(snap)"
expect_match "it counts the config patches the restore would take away" \
	"ConfigPatch +0 +$(wc -l <"$WORK/after" | tr -d ' ') +0 +$(wc -l <"$WORK/before" | tr -d ' ')" "$out"
expect_match "and the users by count" 'users: 2 in the backup, 2 now' "$out"
expect_match "and the state key" 'state key: .*data/state.key is the key' "$out"

# --- restored into a fresh data dir --------------------------------------------------------------
out=$("$REZUSCLOUD" restore "$FILE" --data-dir "$WORK/fresh" --passphrase-file "$WORK/pass" 2>&1)
expect_eq "restore into a fresh data dir succeeds" "0" "$?"
expect_match "restoring the state key from the backup" 'state key: restored from the backup' "$out"
expect_eq "the restored key is the original" "$(md5sum <"$WORK/data/state.key")" "$(md5sum <"$WORK/fresh/state.key")"
conf "$WORK/c.conf" "$WORK/fresh" 1h ""
up "$WORK/c.log" "$WORK/c.conf"
names tenants/load/configpatches | tr ' ' '\n' | sed '/^$/d' | sort >"$WORK/restored"
expect_eq "every write acknowledged up to the revision is there, and none after" "" \
	"$(diff "$WORK/before" "$WORK/restored" | head -n 5)"
expect_eq "the same machines" "$MACHINES" "$(names tenants/s/machines)"
expect_eq "the same state versions" "$VERSIONS" "$(versions)"
expect_eq "the state reads through /tfstate, the same" "$MD5" "$(state_md5)"
expect_eq "and the kubeconfig" "$KUBECONFIG_MD5" "$(api "$API/tenants/s/kubeconfig" | md5sum | cut -d' ' -f1)"
expect_match "a user made before the backup logs in" '^ey' "$(login alice alice-password-1)"
expect_match "the backups list of the new data dir starts empty" '"items":\[\]' "$(api "$API/backups")"
stop

# --- a backup without the passphrase -------------------------------------------------------------
conf "$WORK/d.conf" "$WORK/data" 1h ""
up "$WORK/d.log" "$WORK/d.conf"
PLAIN=$(api -X POST "$API/backups" | sed -n 's/.*"metadata":{"name":"\([^"]*\)".*/\1/p')
expect_match "a backup without passphrase_file leaves the key out" '"stateKey":\{[^}]*"included":false' "$(api "$API/backups/$PLAIN")"
expect_match "naming it by fingerprint" '"stateKey":\{[^}]*"fingerprint":"[0-9a-f]{32}"' "$(api "$API/backups/$PLAIN")"
stop
out=$("$REZUSCLOUD" restore "$WORK/data/backups/$PLAIN.rzbackup" --data-dir "$WORK/plain" 2>&1)
expect_eq "it restores" "0" "$?"
expect_match "and says the state key is needed" 'state key: NEEDED: .* copy that key to .*/plain/state.key' "$out"
conf "$WORK/e.conf" "$WORK/plain" 1h ""
up "$WORK/e.log" "$WORK/e.conf"
expect_eq "the daemon serves everything" "$((CLIENTS * WRITES))" "$(names tenants/load/configpatches | wc -w | tr -d ' ')"
expect_eq "but the states do not read without the key" "500" "$(curl -s -o /dev/null -w '%{http_code}' -u "x:$STOKEN" "$BASE/tfstate/s")"
stop
cp "$WORK/data/state.key" "$WORK/plain/state.key"
up "$WORK/f.log" "$WORK/e.conf"
expect_eq "with the key copied they do" "$MD5" "$(state_md5)"
stop

# --- crafted files: verify refuses what restore refuses -----------------------------------------
# Each crafted by tests/integration/backup-craft.py with a checksum anyone can recompute;
# backup verify makes every check restore makes before it would write.
CRAFT="$top_srcdir/tests/integration/backup-craft.py"
for mode in newer-schema zeros kdf-limits; do
	python3 "$CRAFT" "$mode" "$WORK/data/backups/$PLAIN.rzbackup" "$WORK/$mode.rzbackup"
	v=$("$REZUSCLOUD" backup verify "$WORK/$mode.rzbackup" 2>&1)
	vrc=$?
	r=$("$REZUSCLOUD" restore "$WORK/$mode.rzbackup" --dry-run --data-dir "$WORK/plain" 2>&1)
	rrc=$?
	expect_eq "a $mode file: verify and restore both refuse it" "1 1" "$vrc $rrc"
	echo "# $mode: verify: $v"
	echo "# $mode: restore: $(printf '%s' "$r" | tail -n 1)"
done
expect_match "the newer schema inside is named" 'newer than this rezuscloud' \
	"$("$REZUSCLOUD" backup verify "$WORK/newer-schema.rzbackup" 2>&1)"
expect_match "the derivation's limits are named" 'key derivation' \
	"$("$REZUSCLOUD" backup verify "$WORK/kdf-limits.rzbackup" 2>&1)"
# Made with a passphrase, the checksum is keyed: a changed database under a recomputed
# checksum fails; the same file passed off as format 1 (unkeyed) is refused where the
# passphrase is configured, unless --unkeyed says to take it.
python3 "$CRAFT" payload "$FILE" "$WORK/forged.rzbackup"
out=$("$REZUSCLOUD" backup verify "$WORK/forged.rzbackup" --passphrase-file "$WORK/pass" 2>&1)
expect_match "a keyed file with a changed database and an unkeyed checksum is refused" \
	'^1 .*checksum mismatch' "$? $out"
python3 "$CRAFT" downgrade "$FILE" "$WORK/downgraded.rzbackup"
out=$("$REZUSCLOUD" backup verify "$WORK/downgraded.rzbackup" --passphrase-file "$WORK/pass" 2>&1)
expect_match "a keyed file passed off as unkeyed is refused with the passphrase" \
	'^1 .*its checksum is not keyed with the passphrase' "$? $out"
out=$("$REZUSCLOUD" restore "$WORK/downgraded.rzbackup" --dry-run --data-dir "$WORK/plain" --passphrase-file "$WORK/pass" 2>&1)
expect_match "restore too" '^1 .*its checksum is not keyed with the passphrase' "$? $out"
expect_eq "--unkeyed takes it (its database is the real one)" "0" \
	"$("$REZUSCLOUD" backup verify "$WORK/downgraded.rzbackup" --passphrase-file "$WORK/pass" --unkeyed >/dev/null 2>&1; echo $?)"

# --- the schedule keeps backup.keep --------------------------------------------------------------
conf "$WORK/g.conf" "$WORK/data" 1h "  dir: $WORK/scheduled
  interval: 1s"
sed -i 's/^  keep: 50$/  keep: 2/' "$WORK/g.conf"
up "$WORK/g.log" "$WORK/g.conf"
for _ in $(seq 1 100); do
	[ "$(grep -c 'msg="backup written"' "$WORK/g.log")" -ge 4 ] && break
	sleep 0.1
done
stop
written=$(grep -c 'msg="backup written"' "$WORK/g.log")
newest=$(sed -n 's/.*msg="backup written" name=\([^ ]*\) trigger=schedule.*/\1/p' "$WORK/g.log" | tail -n 2 | sort | tr '\n' ' ')
expect_eq "the schedule wrote a backup a second" "yes" "$([ "$written" -ge 4 ] && echo yes || echo "no: $written")"
expect_eq "and kept the newest two" "$newest" "$(ls "$WORK/scheduled" | sed 's/\.rzbackup$//' | sort | tr '\n' ' ')"

done_testing
