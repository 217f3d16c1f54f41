#!/bin/sh
# The TF HTTP state backend with a real terraform/tofu pointed at it (PROTOCOLS.md §1), and
# raw HTTP for every status code it answers; state encrypted at rest; history, rollback,
# force-unlock (admin, audited), and the state gone with its tenant.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  state_history: 3
  # t1's own runs would write the state this script's terraform writes (on a loaded
  # machine, between its steps): t1 is created, never run
  debounce: 1h
  resync: 0s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=state-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
BASE="http://127.0.0.1:$PORT"
API="$BASE/api/v1"
json() { curl -s -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' "$@"; }
ADMIN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"state-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
json -X POST "$API/tenants" -d '{"metadata":{"name":"t1"},"spec":{"clusterProvider":"sim"}}' >/dev/null
json -X POST "$API/users" -d '{"metadata":{"name":"ed"},"spec":{"role":"edit","password":"editor-pw-1"}}' >/dev/null
json -X POST "$API/users" -d '{"metadata":{"name":"vi"},"spec":{"role":"view","password":"viewer-pw-1"}}' >/dev/null
ADMIN_TOKEN=$(json -X POST "$API/users/admin/tokens" -d '{"spec":{}}' | sed -n 's/.*"secret":"\([^"]*\)".*/\1/p')
token_of() {
	t=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"$1\",\"password\":\"$2\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
	curl -s -X POST "$API/users/$1/tokens" -H "Authorization: Bearer $t" -H 'Content-Type: application/json' \
		-d '{"spec":{}}' | sed -n 's/.*"secret":"\([^"]*\)".*/\1/p'
}
EDIT_TOKEN=$(token_of ed editor-pw-1)
VIEW_TOKEN=$(token_of vi viewer-pw-1)
code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
U="$BASE/tfstate/t1"

expect_eq "no credentials: 401" "401" "$(code "$U")"
# challenge URL [CURL ARGS...]: the WWW-Authenticate header of the reply.
challenge() {
	url=$1; shift
	curl -s -o /dev/null -D - "$@" "$url" | tr -d '\r' | sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: //p'
}
expect_eq "the 401 on /tfstate asks for Basic credentials, as tofu speaks" 'Basic realm="rezuscloud"' "$(challenge "$U")"
expect_eq "and for wrong ones" 'Basic realm="rezuscloud"' "$(challenge "$U" -u x:rzt_wrong)"
expect_eq "the rest of the API keeps Bearer" 'Bearer realm="rezuscloud"' "$(challenge "$API/tenants")"
expect_eq "a view token: 403" "403" "$(code -u "x:$VIEW_TOKEN" "$U")"
expect_eq "no state yet: 404" "404" "$(code -u "x:$EDIT_TOKEN" "$U")"
expect_eq "an unknown tenant: 404" "404" "$(code -u "x:$EDIT_TOKEN" "$BASE/tfstate/nope")"

# --- a real terraform/tofu ------------------------------------------------------------------
if [ -z "$TF" ]; then
	echo "# neither tofu nor terraform is installed: the client checks are skipped"
else
	mkdir -p "$WORK/tf"
	cat >"$WORK/tf/main.tf.json" <<TFJ
{"terraform": {"backend": {"http": {"address": "$U", "lock_address": "$U", "unlock_address": "$U",
   "username": "rezus"}}},
 "resource": {"terraform_data": {"box": {"input": {"marker": "plaintext-marker-8c1f"}}}}}
TFJ
	export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 TF_INPUT=0 TF_CLI_CONFIG_FILE=/dev/null
	export TF_HTTP_PASSWORD="$EDIT_TOKEN"
	check "$(basename "$TF") init against /tfstate" "$TF" -chdir="$WORK/tf" init -input=false -no-color
	check "$(basename "$TF") apply stores its state there" "$TF" -chdir="$WORK/tf" apply -auto-approve -no-color
	expect_match "state pull reads it back" '"marker"' "$("$TF" -chdir="$WORK/tf" state pull 2>/dev/null)"
	expect_eq "the lock is released after the apply" "200" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d '{"ID":"probe"}' "$U")"
	code -u "x:$EDIT_TOKEN" -X UNLOCK -d '{"ID":"probe"}' "$U" >/dev/null
	check "a second apply with a change" sh -c "sed -i 's/8c1f/9d2e/' '$WORK/tf/main.tf.json' && '$TF' -chdir='$WORK/tf' apply -auto-approve -no-color"
	expect_match "the history lists versions with serial and lineage" '"kind":"StateVersionList".*"serial":[0-9]+.*"lineage":"[0-9a-f-]+"' \
		"$(json "$API/tenants/t1/state")"
	expect_match "and how many resources each holds" '"current":true,"serial":[0-9]+,"resources":1\}' \
		"$(json "$API/tenants/t1/state")"
	expect_eq "the state is encrypted at rest (marker not in the database)" "" \
		"$(cat "$WORK/data/rezus.db" "$WORK/data/rezus.db-wal" 2>/dev/null | grep -c plaintext-marker | grep -v '^0$')"
	# force-unlock: someone holds the lock; an editor may not break it, an admin may
	code -u "x:$EDIT_TOKEN" -X LOCK -d '{"ID":"stuck-lock","Who":"someone@host"}' "$U" >/dev/null
	TF_HTTP_PASSWORD="$EDIT_TOKEN" "$TF" -chdir="$WORK/tf" force-unlock -force stuck-lock >"$WORK/fu1.out" 2>&1
	expect_eq "force-unlock with an edit token is refused" "1" "$?"
	TF_HTTP_PASSWORD="$ADMIN_TOKEN" "$TF" -chdir="$WORK/tf" force-unlock -force stuck-lock >"$WORK/fu2.out" 2>&1
	expect_eq "force-unlock with an admin token works" "0" "$?"
	expect_match "and is audited" '"verb":"force-unlock"' "$(json "$API/audit?verb=force-unlock")"
	# DELETE (tofu never sends it) is an admin's, and keeps the history: an empty version.
	before=$(json "$API/tenants/t1/state")
	kept=$(printf '%s' "$before" | grep -o '"version":[0-9]*' | sed 's/.*://' | tr '\n' ' ')
	newest=$(printf '%s' "$before" | grep -o '"version":[0-9]*' | sed -n '1s/.*://p')
	: "${newest:=0}"
	serial=$("$TF" -chdir="$WORK/tf" state pull 2>/dev/null | sed -n 's/^ *"serial": *\([0-9]*\).*/\1/p')
	: "${serial:=0}"
	lineage=$("$TF" -chdir="$WORK/tf" state pull 2>/dev/null | sed -n 's/^ *"lineage": *"\([^"]*\)".*/\1/p')
	expect_eq "DELETE with an edit token: 403" "403" "$(code -u "x:$EDIT_TOKEN" -X DELETE "$U")"
	expect_eq "DELETE with a view token: 403" "403" "$(code -u "x:$VIEW_TOKEN" -X DELETE "$U")"
	expect_eq "DELETE with an admin token: 200" "200" "$(code -u "x:$ADMIN_TOKEN" -X DELETE "$U")"
	expect_eq "the state is then empty: terraform sees no resources" "" "$("$TF" -chdir="$WORK/tf" state list 2>&1)"
	pulled=$("$TF" -chdir="$WORK/tf" state pull 2>/dev/null | tr -d ' \n')
	expect_match "a new serial, the same lineage" "\"serial\":$((serial + 1)),\"lineage\":\"$lineage\"" "$pulled"
	after=$(json "$API/tenants/t1/state")
	expect_eq "the history keeps every old version, and an empty one on top" \
		"$((newest + 1)) $kept" "$(printf '%s' "$after" | grep -o '"version":[0-9]*' | sed 's/.*://' | tr '\n' ' ')"
	expect_match "which holds no resources" '"items":\[\{"version":'"$((newest + 1))"',[^}]*"resources":0' "$after"
	expect_match "the old one still holds its resource" '\{"version":'"$newest"',[^}]*"resources":1' "$after"
	expect_eq "an admin DELETE again, of an empty state, adds nothing" \
		"200 $((newest + 1))" "$(code -u "x:$ADMIN_TOKEN" -X DELETE "$U") $(json "$API/tenants/t1/state" | grep -o '"version":[0-9]*' | sed -n '1s/.*://p')"
	expect_eq "the DELETEs are audited, the refused ones too" "403 403 200 200" \
		"$(sqlite3 "$WORK/data/rezus.db" "SELECT group_concat(code, ' ') FROM (SELECT code FROM audit WHERE verb = 'delete-state' AND tenant = 't1' ORDER BY id)")"
	expect_eq "a rollback to the version before the DELETE" "200" \
		"$(code -H "Authorization: Bearer $ADMIN_TOKEN" -X POST -d "{\"version\":$newest}" "$API/tenants/t1/state/rollback")"
	expect_eq "brings the resource back" "terraform_data.box" "$("$TF" -chdir="$WORK/tf" state list 2>&1)"
	check "and terraform plans nothing" "$TF" -chdir="$WORK/tf" plan -detailed-exitcode -no-color -input=false
fi

# --- raw HTTP: every answer ---------------------------------------------------------------------
STATE='{"version":4,"serial":7,"lineage":"raw-lineage","outputs":{},"resources":[]}'
MD5=$(printf '%s' "$STATE" | openssl md5 -binary 2>/dev/null | base64 || true)
A0=$(sqlite3 "$WORK/data/rezus.db" "SELECT coalesce(max(id), 0) FROM audit")
expect_eq "LOCK: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d '{"ID":"a","Operation":"OperationTypeApply"}' "$U")"
expect_eq "LOCK again by the holder: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d '{"ID":"a"}' "$U")"
expect_eq "LOCK by another: 423" "423" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d '{"ID":"b"}' "$U")"
expect_match "with the holder's lock info" '"ID":"a".*"Operation":"OperationTypeApply"' "$(cat "$WORK/body")"
expect_eq "POST without the lock's ID: 409" "409" "$(code -u "x:$EDIT_TOKEN" -X POST -H 'Content-Type: application/json' -d "$STATE" "$U?ID=b")"
expect_eq "POST with it: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X POST -H 'Content-Type: application/json' -d "$STATE" "$U?ID=a")"
expect_eq "the same POST again (a retry): 200" "200" "$(code -u "x:$EDIT_TOKEN" -X POST -H 'Content-Type: application/json' -d "$STATE" "$U?ID=a")"
if [ -n "$MD5" ]; then
	expect_eq "a matching Content-MD5: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X POST -H "Content-MD5: $MD5" -d "$STATE" "$U?ID=a")"
fi
expect_eq "a wrong Content-MD5: 400" "400" "$(code -u "x:$EDIT_TOKEN" -X POST -H 'Content-MD5: AAAAAAAAAAAAAAAAAAAAAA==' -d "$STATE" "$U?ID=a")"
expect_eq "a body that is not JSON: 400" "400" "$(code -u "x:$EDIT_TOKEN" -X POST -d 'nope' "$U?ID=a")"
expect_eq "GET: 200" "200" "$(code -u "x:$EDIT_TOKEN" "$U")"
expect_eq "and it is what was written" "$STATE" "$(cat "$WORK/body")"
expect_eq "UNLOCK with another ID: 409" "409" "$(code -u "x:$EDIT_TOKEN" -X UNLOCK -d '{"ID":"b"}' "$U")"
expect_eq "UNLOCK by the holder: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X UNLOCK -d '{"ID":"a"}' "$U")"
expect_eq "UNLOCK when free: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X UNLOCK -d '{"ID":"a"}' "$U")"
# Every mutating verb leaves an audit row, LOCK and UNLOCK with lock info too (the refused
# and conflicting ones with their codes).
expect_eq "LOCK and UNLOCK with lock info are audited, with their codes" \
	"lock:200 lock:200 lock:423 unlock:409 unlock:200 unlock:200" \
	"$(sqlite3 "$WORK/data/rezus.db" "SELECT group_concat(verb || ':' || code, ' ') FROM (SELECT verb, code FROM audit WHERE verb IN ('lock', 'unlock') AND tenant = 't1' AND id > $A0 ORDER BY id)")"
# A lock ID is up to 256 bytes (tofu's are UUIDs); the whole ID is the lock's: a retry and the
# UNLOCK of a long one work, a longer one is refused, not cut.
ID256=$(printf '%0256d' 7)
expect_eq "LOCK with a 256-byte ID: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d "{\"ID\":\"$ID256\"}" "$U")"
expect_eq "and again (a retry): 200" "200" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d "{\"ID\":\"$ID256\"}" "$U")"
expect_eq "an ID that only starts the same: 423" "423" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d "{\"ID\":\"${ID256%?}\"}" "$U")"
expect_eq "UNLOCK with it: 200" "200" "$(code -u "x:$EDIT_TOKEN" -X UNLOCK -d "{\"ID\":\"$ID256\"}" "$U")"
expect_eq "LOCK with a 257-byte ID: 400" "400" "$(code -u "x:$EDIT_TOKEN" -X LOCK -d "{\"ID\":\"${ID256}8\"}" "$U")"
expect_match "naming the limit" 'ID.*256' "$(cat "$WORK/body")"
# While someone holds the lock, nobody replaces the state under them: their next write would
# silently undo it.
code -u "x:$EDIT_TOKEN" -X LOCK -d '{"ID":"held","Who":"ops@box"}' "$U" >/dev/null
expect_eq "a rollback while the state is locked: 409" "409" \
	"$(code -H "Authorization: Bearer $ADMIN_TOKEN" -X POST -d '{"version":1}' "$API/tenants/t1/state/rollback")"
expect_match "saying who holds it" '"message":"the state of tenant \\"t1\\" is locked by ops@box \(lock held\)' "$(cat "$WORK/body")"
expect_eq "an admin's DELETE while it is locked: 409" "409" "$(code -u "x:$ADMIN_TOKEN" -X DELETE "$U")"
expect_match "with the holder's lock info, as tofu reads it" '"ID":"held"' "$(cat "$WORK/body")"
code -u "x:$EDIT_TOKEN" -X UNLOCK -d '{"ID":"held"}' "$U" >/dev/null
expect_eq "only tofu.state_history versions are kept" "3" \
	"$(json "$API/tenants/t1/state" | grep -o '"version":' | wc -l | tr -d ' ')"
first=$(json "$API/tenants/t1/state" | sed 's/.*"version":\([0-9]*\),.*/\1/')
expect_eq "rollback needs admin" "403" "$(code -H "Authorization: Bearer $EDIT_TOKEN" -X POST -d "{\"version\":$first}" "$API/tenants/t1/state/rollback")"
expect_eq "an admin rolls back" "200" "$(code -H "Authorization: Bearer $ADMIN_TOKEN" -X POST -d "{\"version\":$first}" "$API/tenants/t1/state/rollback")"
expect_eq "DELETE by an editor: 403" "403" "$(code -u "x:$EDIT_TOKEN" -X DELETE "$U")"
expect_eq "DELETE by an admin: 200" "200" "$(code -u "x:$ADMIN_TOKEN" -X DELETE "$U")"
expect_match "then the state is empty, not gone" '"resources": *\[\]' "$(curl -s -u "x:$EDIT_TOKEN" "$U")"

# --- the state goes with its tenant ------------------------------------------------------------
code -u "x:$EDIT_TOKEN" -X POST -d "$STATE" "$U" >/dev/null
json -X DELETE "$API/tenants/t1" >/dev/null
curl -s -X PATCH "$API/tenants/t1" -H "Authorization: Bearer $ADMIN" \
	-H 'Content-Type: application/merge-patch+json' -d '{"metadata":{"finalizers":null}}' >/dev/null
expect_eq "the tenant is gone" "404" "$(code -H "Authorization: Bearer $ADMIN" "$API/tenants/t1")"
expect_eq "and its state rows with it" "0" \
	"$(sqlite3 "$WORK/data/rezus.db" 'SELECT count(*) FROM tfstate_versions' 2>/dev/null || echo 0)"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 2
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
