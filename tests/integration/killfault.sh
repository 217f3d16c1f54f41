#!/bin/sh
# kill -9 at random points. REZUS_KILL_POINTS times (default 50; `make check-faults-long`
# runs 500) the daemon is started, four clients write to it at once — ConfigPatches
# created, patched and deleted, a NodeGroup scaled (each scale starts a terraform run of a
# sim tenant), a Tenant's labels patched — and after a random 0.1-0.9 s (one time in five 1.5-4 s) it is killed with
# SIGKILL, mid-request and mid-run (every write changes its object, so each gets a new
# revision). Every client records what it was acknowledged (2xx) and
# the one request it had in flight. Then the daemon runs on until the tenants converge, and
# the invariants are checked: every acknowledged write is there (an object's content is
# its last acknowledged write's, or the in-flight one's); resourceVersions strictly
# increase within a client and across restarts; every acknowledged write has its event
# (type and revision) and its audit row; TF state versions have a strictly increasing
# serial and one lineage per tenant and the served state is the newest, whole; no state
# lock or run is left behind; every tenant converges (Reconciled, Ready). Scale-downs are
# applied without waiting for approval (tofu.destroy_approval: false): nobody approves here.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
KILLS=${REZUS_KILL_POINTS:-50}
CLIENTS=4
TENANTS="t1 t2 t3"
PW=killfault-test-pw
DB="$WORK/data/rezus.db"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  event_window: 10000000
tofu:
  binary: $TF
  workers: 2
  debounce: 100ms
  destroy_approval: false
  resync: 0s
observe:
  interval: 500ms
  fast_interval: 200ms
  stable_interval: 500ms
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 100}
CONF
started=0
fails=0
up() { # up LOG: start the daemon and set API, BASE; counts starts and failures to start
	if REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$1" -c "$WORK/rezus.conf"; then
		started=$((started + 1))
	else
		fails=$((fails + 1))
		echo "# the daemon did not start: $(tail -n 3 "$1")"
	fi
	BASE="http://127.0.0.1:$PORT"
	API="$BASE/api/v1"
}
# req METHOD PATH BODY [CONTENT-TYPE]: the HTTP code, the body in $out
req() {
	out=$(curl -s -m 20 -w '\n%{http_code}' -X "$1" -H "Authorization: Bearer $TOKEN" \
		-H "Content-Type: ${4:-application/json}" "$API/$2" ${3:+-d "$3"})
	code=$(printf '%s' "$out" | tail -n 1)
}
rv_of() { printf '%s' "$out" | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p' | head -n 1; }
q() { sqlite3 "$WORK/check.db" "$1"; }

# --- the tenants, and an API token the clients share (logins cost an Argon2 hash) --------------
up "$WORK/d0.log"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$PW\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
req POST users/admin/tokens '{"spec":{}}'
TOKEN=$(printf '%s' "$out" | sed -n 's/.*"secret":"\(rzt_[^"]*\)".*/\1/p')
for t in $TENANTS; do
	req POST tenants "{\"metadata\":{\"name\":\"$t\"},\"spec\":{\"clusterProvider\":\"sim\"}}"
	req POST "tenants/$t/nodegroups" '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
	req POST "tenants/$t/nodegroups" '{"metadata":{"name":"w"},"spec":{"role":"worker","count":1,"providerClass":"sim"}}'
done
expect_match "the setup is acknowledged" '^20[01]$' "$code"

# client C K: writes until a request fails (the daemon is gone). Acknowledged writes go to
# $WORK/acked.C as "cycle client op kind tenant name value rv", the one in flight (whose
# outcome is unknown) to $WORK/pending.K.C.
client() {
	c=$1 k=$2 j=0 t=t$(($1 % 3 + 1))
	while :; do
		j=$((j + 1))
		n="c$k-$c-$j"
		set -- "create ConfigPatch $t $n 0" "patch ConfigPatch $t $n 1"
		[ $((j % 2)) = 0 ] && set -- "$@" "delete ConfigPatch $t $n -"
		[ "$c" = 0 ] && set -- "$@" "patch NodeGroup $t w $(((k + j) % 3 + 1))"
		[ "$c" = 1 ] && set -- "$@" "patch Tenant $t $t v$k-$j"
		for op in "$@"; do
			set -- $op
			echo "$k $c $op" >"$WORK/pending.$k.$c"
			case "$1 $2" in
			"create ConfigPatch") req POST "tenants/$3/configpatches" "{\"metadata\":{\"name\":\"$4\"},\"spec\":{\"patch\":\"v: $5\"}}" ;;
			"patch ConfigPatch") req PATCH "tenants/$3/configpatches/$4" "{\"spec\":{\"patch\":\"v: $5\"}}" application/merge-patch+json ;;
			"delete ConfigPatch") req DELETE "tenants/$3/configpatches/$4" ;;
			"patch NodeGroup") req PATCH "tenants/$3/nodegroups/$4" "{\"metadata\":{\"annotations\":{\"k\":\"$k-$j\"}},\"spec\":{\"count\":$5}}" application/merge-patch+json ;;
			"patch Tenant") req PATCH "tenants/$3" "{\"metadata\":{\"labels\":{\"k\":\"$5\"}}}" application/merge-patch+json ;;
			esac
			case "$code" in
			2??) echo "$k $c $op $(rv_of)" >>"$WORK/acked.$c" ;;
			*) return 0 ;;
			esac
		done
	done
}

# --- the kills --------------------------------------------------------------------------------
t0=$(date +%s)
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
seed=$$
for k in $(seq 1 "$KILLS"); do
	up "$WORK/d$k.log"
	pids=""
	for c in $(seq 0 $((CLIENTS - 1))); do
		client "$c" "$k" &
		pids="$pids $!"
	done
	# mostly within a second (mid-request, mid-init); one in five later, mid-apply
	sleep "$(awk -v s=$((seed + k)) 'BEGIN { srand(s); r = rand(); printf "%.2f", r < 0.8 ? 0.1 + rand() * 0.8 : 1.5 + rand() * 2.5 }')"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	for p in $pids; do wait "$p"; done
	rm -f "$WORK/d$k.log" "$WORK/d$k.log.stdout"
done
t1=$(date +%s)
cat "$WORK"/acked.* >"$WORK/acked"
ACKED=$(wc -l <"$WORK/acked" | tr -d ' ')
expect_eq "the daemon started after every one of $KILLS kill -9" "$((KILLS + 1)) 0" "$started $fails"
echo "# $KILLS kill points in $((t1 - t0)) s, $ACKED writes acknowledged"
expect_eq "the clients were acknowledged writes ($ACKED)" "1" "$([ "$ACKED" -ge "$KILLS" ] && echo 1)"

# --- converge ---------------------------------------------------------------------------------
up "$WORK/final.log"
converged() {
	req GET tenants
	[ "$(printf '%s' "$out" | grep -o '"phase":"Ready"' | wc -l)" -eq 3 ] &&
		[ "$(printf '%s' "$out" | grep -o '"type":"Reconciled","status":"True"' | wc -l)" -eq 3 ] &&
		req GET runs && ! printf '%s' "$out" | grep -q '"phase":"\(Running\|Queued\|Pending\)"'
}
# Converged for 3 s in a row: just after the restart the tenants still show the status
# they had before the last kill, until the engine runs again what that kill interrupted.
stable=0
for _ in $(seq 1 1500); do
	if converged; then
		stable=$((stable + 1))
		[ "$stable" -ge 30 ] && break
	else
		stable=0
	fi
	sleep 0.1
done
t2=$(date +%s)
echo "# converged in $((t2 - t1)) s"
req GET tenants
expect_eq "every tenant converges: Ready and Reconciled" "3 3" \
	"$(printf '%s' "$out" | grep -o '"phase":"Ready"' | wc -l | tr -d ' ') $(printf '%s' "$out" | grep -o '"type":"Reconciled","status":"True"' | wc -l | tr -d ' ')"
if ! converged; then
	for t in $TENANTS; do
		echo "# $t: $(curl -s -H "Authorization: Bearer $TOKEN" "$API/tenants/$t" | grep -o '"phase":"[A-Za-z]*"' | head -n 1) $(curl -s -H "Authorization: Bearer $TOKEN" "$API/tenants/$t" | sed -n 's/.*"status":\(.*\)}$/\1/p' | head -c 1500)"
		echo "# runs: $(curl -s -H "Authorization: Bearer $TOKEN" "$API/tenants/$t/runs" | grep -o '"phase":"[A-Za-z]*"[^}]*"message":"[^"]*"' | tail -n 3 | tr '\n' ' ')"
	done
	grep -E 'level=(warning|err)' "$WORK/final.log" | tail -n 15 | sed 's/^/# /'
fi
# What is not converged, from the store: node groups whose Machines differ from their
# count, Machines not ready, and what the tenant recorded as applied.
sqlite3 "$DB" "SELECT 'NodeGroup ' || tenant || '/' || name || ': generation ' || json_extract(doc, '\$.metadata.generation') || ', count ' || json_extract(doc, '\$.spec.count') || ', machines ' || coalesce(json_extract(doc, '\$.status.total'), '?') || ', ready ' || coalesce(json_extract(doc, '\$.status.ready'), '?') FROM objects WHERE kind = 'NodeGroup' AND (json_extract(doc, '\$.spec.count') != coalesce(json_extract(doc, '\$.status.total'), -1) OR json_extract(doc, '\$.spec.count') != coalesce(json_extract(doc, '\$.status.ready'), -1));
	SELECT 'Machine ' || tenant || '/' || name || ' of ' || coalesce(json_extract(doc, '\$.spec.nodeGroup'), '?') || ': created ' || json_extract(doc, '\$.metadata.creationTimestamp') || ', stage ' || coalesce(json_extract(doc, '\$.status.stage'), 'none') || ', ready ' || coalesce(json_extract(doc, '\$.status.ready'), 'none') || ', last seen ' || coalesce(json_extract(doc, '\$.status.lastSeen'), 'never') FROM objects WHERE kind = 'Machine' AND coalesce(json_extract(doc, '\$.status.ready'), 0) != 1;
	SELECT 'Tenant ' || name || ': phase ' || json_extract(doc, '\$.status.phase') || ', appliedInputs ' || coalesce(json_extract(doc, '\$.status.appliedInputs'), 'none') || ', last run ' || coalesce(json_extract(doc, '\$.status.lastRun.id'), '') || ' ' || coalesce(json_extract(doc, '\$.status.lastRun.phase'), '') FROM objects WHERE kind = 'Tenant' AND json_extract(doc, '\$.status.phase') != 'Ready'" 2>&1 |
	sed 's/^/# not converged: /'
# Per tenant, Machines per node group equal the group's count (a change whose run was lost
# shows here even when the phase would not).
expect_eq "every node group has as many Machines as its count" "" \
	"$(sqlite3 "$DB" "SELECT g.tenant || '/' || g.name || ' count ' || json_extract(g.doc, '\$.spec.count') || ' machines ' || (SELECT count(*) FROM objects m WHERE m.kind = 'Machine' AND m.tenant = g.tenant AND json_extract(m.doc, '\$.spec.nodeGroup') = g.name) FROM objects g WHERE g.kind = 'NodeGroup' AND json_extract(g.doc, '\$.spec.count') != (SELECT count(*) FROM objects m WHERE m.kind = 'Machine' AND m.tenant = g.tenant AND json_extract(m.doc, '\$.spec.nodeGroup') = g.name)")"
for t in $TENANTS; do
	gens=$(curl -s -H "Authorization: Bearer $TOKEN" "$API/tenants/$t" | sed -n 's/.*"generation":\([0-9]*\).*"observedGeneration":\([0-9]*\).*/\1 \2/p')
	expect_match "$t: its last generation was reconciled" '^([0-9]+) \1$' "$gens"
done
curl -s -u "x:$TOKEN" "$BASE/tfstate/t1" >"$WORK/state.t1"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
cp "$DB" "$WORK/check.db"

# --- invariants -------------------------------------------------------------------------------
# acked rows as a table: cycle client op kind tenant name value rv
tr ' ' ',' <"$WORK/acked" >"$WORK/acked.csv"
cat "$WORK"/pending.* 2>/dev/null | tr ' ' ',' >"$WORK/pending.csv"
q "CREATE TABLE acked (seq INTEGER PRIMARY KEY, cycle INT, client INT, op TEXT, kind TEXT, tenant TEXT, name TEXT, value TEXT, rv INT);
   CREATE TABLE pending (cycle INT, client INT, op TEXT, kind TEXT, tenant TEXT, name TEXT, value TEXT)"
sqlite3 "$WORK/check.db" ".mode csv" ".import $WORK/pending.csv pending" \
	"CREATE TEMP TABLE a0 (cycle INT, client INT, op TEXT, kind TEXT, tenant TEXT, name TEXT, value TEXT, rv INT)" \
	".import $WORK/acked.csv a0" \
	"INSERT INTO acked (cycle, client, op, kind, tenant, name, value, rv) SELECT cycle, client, op, kind, CASE kind WHEN 'Tenant' THEN '' ELSE tenant END, name, value, rv FROM a0" \
	"UPDATE pending SET tenant = '' WHERE kind = 'Tenant'"
expect_eq "every acknowledged write is recorded with its resourceVersion" "$ACKED 0" \
	"$(q "SELECT count(*), count(*) FILTER (WHERE rv IS NULL OR rv = '') FROM acked" | tr '|' ' ')"
expect_eq "resourceVersions are unique" "0" "$(q "SELECT count(*) - count(DISTINCT rv) FROM acked")"
expect_eq "and strictly increase in each client's order, across restarts" "0" \
	"$(q "SELECT count(*) FROM acked a JOIN acked b ON a.client = b.client AND b.seq = (SELECT min(seq) FROM acked WHERE client = a.client AND seq > a.seq) WHERE b.rv <= a.rv")"
expect_eq "every write acknowledged after a restart is newer than every one before it" "0" \
	"$(q "SELECT count(*) FROM (SELECT cycle, min(rv) lo, max(rv) hi FROM acked GROUP BY cycle) x JOIN (SELECT cycle, min(rv) lo FROM acked GROUP BY cycle) y ON y.cycle > x.cycle WHERE y.lo <= x.hi")"
# The last acknowledged write of each object, and whether an in-flight write may have
# changed it since.
q "CREATE TABLE last AS SELECT a.* FROM acked a WHERE a.seq = (SELECT max(seq) FROM acked b WHERE b.kind = a.kind AND b.tenant = a.tenant AND b.name = a.name);
   CREATE TABLE now AS SELECT kind, tenant, name, rv,
       CAST(CASE kind WHEN 'ConfigPatch' THEN substr(json_extract(doc, '\$.spec.patch'), 4)
                 WHEN 'NodeGroup' THEN json_extract(doc, '\$.spec.count')
                 WHEN 'Tenant' THEN json_extract(doc, '\$.metadata.labels.k') END AS TEXT) AS value
       FROM objects WHERE kind IN ('ConfigPatch', 'NodeGroup', 'Tenant')"
lost=$(q "SELECT l.kind || '/' || l.tenant || '/' || l.name || ' ' || l.op || ' ' || l.value || ' rv ' || l.rv || ' now ' || coalesce(n.value, 'absent')
	FROM last l LEFT JOIN now n USING (kind, tenant, name)
	WHERE NOT (CASE WHEN l.op = 'delete' THEN n.name IS NULL ELSE n.name IS NOT NULL AND n.value = l.value AND n.rv >= l.rv END)
	  AND NOT EXISTS (SELECT 1 FROM pending p WHERE p.kind = l.kind AND p.tenant = l.tenant AND p.name = l.name AND p.cycle >= l.cycle
	                  AND (p.op = 'delete' AND n.name IS NULL OR p.value = n.value))")
expect_eq "every acknowledged write is there: each object holds its last acknowledged write (or the one in flight)" "" "$lost"
expect_eq "and nothing never acknowledged appeared, but for writes in flight" "" \
	"$(q "SELECT kind || '/' || name FROM now n WHERE kind = 'ConfigPatch' AND NOT EXISTS (SELECT 1 FROM last l WHERE l.kind = n.kind AND l.name = n.name) AND NOT EXISTS (SELECT 1 FROM pending p WHERE p.kind = n.kind AND p.name = n.name)")"
expect_eq "every acknowledged write has its event in the log, of its type" "" \
	"$(q "SELECT a.op || ' ' || a.kind || '/' || a.name || ' rv ' || a.rv FROM acked a LEFT JOIN events e ON e.rv = a.rv
	WHERE e.rv IS NULL OR e.kind != a.kind OR e.name != a.name OR e.type != CASE a.op WHEN 'create' THEN 'ADDED' WHEN 'delete' THEN 'DELETED' ELSE 'MODIFIED' END LIMIT 5")"
expect_eq "the event log has no gap up to the last revision" "0" \
	"$(q "SELECT (SELECT rv FROM revision) - (SELECT count(*) FROM events) - (SELECT min(rv) FROM events) + 1")"
expect_eq "every acknowledged write has its audit row" "" \
	"$(q "SELECT a.op || ' ' || a.kind || '/' || a.name || ': ' || a.n || ' acknowledged, ' || coalesce(u.n, 0) || ' audited' FROM
	(SELECT op, kind, tenant, name, count(*) n FROM acked GROUP BY 1, 2, 3, 4) a LEFT JOIN
	(SELECT verb, kind, tenant, name, count(*) n FROM audit WHERE code BETWEEN 200 AND 299 GROUP BY 1, 2, 3, 4) u
	ON u.verb = a.op AND u.kind = a.kind AND u.tenant = a.tenant AND u.name = a.name WHERE coalesce(u.n, 0) < a.n LIMIT 5")"
VERSIONS=$(q "SELECT count(*) FROM tfstate_versions")
expect_eq "TF state versions ($VERSIONS): the serial strictly increases, one lineage a tenant" "0 3" \
	"$(q "SELECT (SELECT count(*) FROM tfstate_versions a JOIN tfstate_versions b ON a.tenant = b.tenant AND b.version = a.version + 1 WHERE b.serial <= a.serial),
	(SELECT count(DISTINCT tenant || lineage) FROM tfstate_versions)" | tr '|' ' ')"
expect_eq "versions are numbered without gaps" "0" \
	"$(q "SELECT count(*) FROM (SELECT tenant, max(version) - min(version) + 1 - count(*) d FROM tfstate_versions GROUP BY tenant) WHERE d != 0")"
expect_eq "the state served is the newest version, whole (its MD5)" \
	"$(q "SELECT md5 FROM tfstate_versions WHERE tenant = 't1' ORDER BY version DESC LIMIT 1")" \
	"$(openssl dgst -md5 -binary <"$WORK/state.t1" | base64)"
expect_eq "and parses, with that serial" "$(q "SELECT max(serial) FROM tfstate_versions WHERE tenant = 't1'")" \
	"$(sqlite3 :memory: "SELECT json_extract(readfile('$WORK/state.t1'), '\$.serial')")"
expect_eq "no state lock is left" "0" "$(q "SELECT count(*) FROM tfstate_locks")"
expect_eq "no run is left Running or Queued" "0" \
	"$(q "SELECT count(*) FROM objects WHERE kind = 'Run' AND json_extract(doc, '\$.status.phase') IN ('Running', 'Queued', 'Pending')")"
echo "# $(q "SELECT count(*) FROM objects WHERE kind = 'Run' AND json_extract(doc, '\$.status.phase') = 'Interrupted'") runs interrupted, $(q "SELECT count(*) FROM objects WHERE kind = 'Run' AND json_extract(doc, '\$.status.phase') = 'Succeeded'") succeeded, $VERSIONS state versions"
[ -n "${KILLFAULT_KEEP:-}" ] && cp -r "$WORK" "$KILLFAULT_KEEP"
done_testing
