#!/bin/sh
# The daemon's own metrics: after a run, login failures (up to the limiter's 429) and a watch,
# /metrics passes `promtool check metrics` (the Prometheus text format and its naming lint)
# and its key series say what happened: the run counted by operation and outcome with its
# steps' durations, the failures and the 429 counted, the watch seen open, requests by route
# pattern (never the raw path), the store's files and event log, process_* from /proc;
# every histogram's buckets are cumulative and end with +Inf equal to _count.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 100ms
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=metrics-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
BASE="http://127.0.0.1:$PORT"
API="$BASE/api/v1"
scrape() { curl -s "$BASE/metrics"; }
# metric NAME{LABELS} [TEXT]: the value of one series ("" when absent).
metric() {
	printf '%s\n' "${2:-$(scrape)}" | awk -v s="$1" 'index($0, s " ") == 1 { print $2 }'
}
# ge A B: "yes" when the number A >= B (floats allowed), else what they were.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && a + 0 >= b + 0) print "yes"; else print "no: " a " < " b }'; }
login() {
	curl -s -o /dev/null -w '%{http_code}' -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"$1\",\"password\":\"$2\"}"
}

before=$(scrape)
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"metrics-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }

# A login failure, counted.
expect_eq "a wrong password is refused" "401" "$(login admin wrong-password)"
expect_eq "the login failure is counted" \
	"$(($(metric rezuscloud_auth_login_failures_total "$before") + 1))" \
	"$(metric rezuscloud_auth_login_failures_total)"
# Failures up to the limiter's lock: the next attempt gets 429 (the pair mallory/127.0.0.1).
for _ in 1 2 3 4 5 6; do login mallory nope >/dev/null; done
expect_eq "after six failures the limiter answers 429" "429" "$(login mallory nope)"
m=$(scrape)
expect_eq "the 429 is counted by the limiter" "1" \
	"$(metric 'rezuscloud_auth_login_throttled_total{reason="failures"}' "$m")"
expect_eq "and by route and code" "1" \
	"$(metric 'rezuscloud_http_requests_total{route="/api/v1/auth/login",method="POST",code="429"}' "$m")"

# A watch: seen open while it streams.
curl -sN -H "Authorization: Bearer $TOKEN" "$API/tenants?watch=true" >"$WORK/watch" 2>/dev/null &
WATCH=$!
for _ in $(seq 1 50); do
	[ "$(metric rezuscloud_watches_open)" = "1" ] && break
	sleep 0.1
done
expect_eq "the open watch is counted" "1" "$(metric rezuscloud_watches_open)"

# A run: a tenant with one sim node group is applied.
api -X POST "$API/tenants" -d '{"metadata":{"name":"mt"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/mt/nodegroups" \
	-d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
ran='rezuscloud_runs_total{operation="apply",outcome="Succeeded"}'
for _ in $(seq 1 400); do
	[ "$(metric "$ran")" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
m=$(scrape)
expect_eq "the run is counted by operation and outcome" "yes" "$(ge "$(metric "$ran" "$m")" 1)"
expect_eq "its failed count stays 0" "0" \
	"$(metric 'rezuscloud_runs_total{operation="apply",outcome="Failed"}' "$m")"
for step in init plan show apply; do
	expect_eq "the $step step's duration is observed" "yes" \
		"$(ge "$(metric "rezuscloud_run_step_duration_seconds_count{step=\"$step\"}" "$m")" 1)"
done
expect_eq "the run pool has its tofu.workers slots" "4" "$(metric rezuscloud_run_pool_size "$m")"
expect_eq "the worker pool has its threads" "2" "$(metric rezuscloud_worker_pool_size "$m")"
expect_match "tenants by phase" 'rezuscloud_tenants\{phase="[A-Za-z]+"\} 1' "$m"
expect_match "machines by stage" 'rezuscloud_machines\{stage="[A-Za-z]*"\} 1' "$m"

kill "$WATCH" 2>/dev/null
wait "$WATCH" 2>/dev/null
for _ in $(seq 1 50); do
	[ "$(metric rezuscloud_watches_open)" = "0" ] && break
	sleep 0.1
done

# A path no route matches, with a name in it that must not become a label.
curl -s -o /dev/null "$BASE/no-such-place-4711"
m=$(scrape)
printf '%s\n' "$m" >"$WORK/metrics.txt"
expect_eq "the closed watch is gone" "0" "$(metric rezuscloud_watches_open "$m")"
expect_eq "the watch is counted by its route pattern once it ended" "yes" \
	"$(ge "$(metric 'rezuscloud_http_requests_total{route="/api/v1/tenants",method="GET",code="200"}' "$m")" 1)"
expect_match "latency by route pattern" \
	'^rezuscloud_http_request_duration_seconds_bucket\{route="/api/v1/tenants/\{tenant\}/nodegroups",le="\+Inf"\} 1$' "$m"
expect_match "an unmatched path is counted as unmatched" \
	'rezuscloud_http_requests_total\{route="unmatched",method="GET",code="404"\} 1' "$m"
expect_eq "no raw path or tenant name is a label value" "" \
	"$(printf '%s\n' "$m" | grep -E 'no-such-place|route="[^"]*/mt[/"]')"

# The store.
expect_eq "the database has a size" "yes" "$(ge "$(metric rezuscloud_store_database_bytes "$m")" 4096)"
expect_match "and its WAL a series" '^rezuscloud_store_wal_bytes [0-9]+$' "$m"
expect_eq "the event log ends at the store's revision" "$(metric rezuscloud_store_revision "$m")" \
	"$(metric rezuscloud_store_event_log_newest_revision "$m")"
expect_eq "and begins at or before it" "yes" \
	"$(ge "$(metric rezuscloud_store_event_log_newest_revision "$m")" "$(metric rezuscloud_store_event_log_oldest_revision "$m")")"
expect_eq "the event log holds bytes" "yes" "$(ge "$(metric rezuscloud_store_event_log_bytes "$m")" 1)"
expect_match "checkpoints are counted" '^[0-9]+$' "$(metric rezuscloud_store_checkpoint_duration_seconds_count "$m")"
expect_eq "no group-commit syncs with the default durability" "0" "$(metric rezuscloud_store_wal_syncs_total "$m")"

# process_* from /proc, as the client libraries name them.
expect_eq "process_open_fds > 0" "yes" "$(ge "$(metric process_open_fds "$m")" 1)"
expect_eq "process_max_fds is the soft limit" "$(sh -c 'ulimit -n')" "$(metric process_max_fds "$m")"
expect_eq "process_resident_memory_bytes is at least 1 MB" "yes" \
	"$(ge "$(metric process_resident_memory_bytes "$m")" 1048576)"
expect_eq "process_virtual_memory_bytes >= the resident size" "yes" \
	"$(ge "$(metric process_virtual_memory_bytes "$m")" "$(metric process_resident_memory_bytes "$m")")"
expect_eq "process_cpu_seconds_total is counted" "yes" "$(ge "$(metric process_cpu_seconds_total "$m")" 0.01)"
now=$(date +%s)
start=$(metric process_start_time_seconds "$m")
expect_eq "process_start_time_seconds is when the daemon started" "yes" \
	"$(awk -v s="$start" -v n="$now" 'BEGIN { print (s > n - 120 && s <= n + 1) ? "yes" : "no: " s " vs now " n }')"

# Every histogram: per series, buckets in order are cumulative and end with le="+Inf", whose
# count equals _count.
hist=$(printf '%s\n' "$m" | awk '
	/^# TYPE .* histogram$/ { h[$3] = 1; nh++ }
	/^[a-z_]+_bucket\{/ {
		name = $1; sub(/_bucket\{.*/, "", name)
		key = $1; sub(/,?le="[^"]*"\}$/, "}", key); sub(/\{\}$/, "", key)
		le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
		if (key in last && $2 + 0 < last[key]) { print "not cumulative: " $1; bad++ }
		if (key in inf) { print "bucket after +Inf: " $1; bad++ }
		last[key] = $2 + 0
		if (le == "+Inf") { inf[key] = $2 }
		series[key] = name
	}
	/^[a-z_]+_count[ {]/ { k = $1; sub(/_count/, "", k); cnt[k] = $2 }
	END {
		for (k in series) {
			n++
			kk = k; sub(/_bucket/, "", kk)
			if (!(k in inf)) { print "no +Inf: " k; bad++ }
			else if (!(kk in cnt) || cnt[kk] != inf[k]) { print "+Inf != _count: " k; bad++ }
		}
		if (nh < 2 || n < 5) { print "too few histograms: " nh " families, " n " series"; bad++ }
		print (bad ? "bad" : "ok") " " n
	}')
expect_match "histogram buckets are cumulative and end with +Inf = _count" '^ok [0-9]+$' "$(printf '%s\n' "$hist" | tail -n 1)"
[ "$(printf '%s\n' "$hist" | tail -n 1 | cut -c1-2)" = "ok" ] || printf '# %s\n' "$hist"

# The format itself, and Prometheus' naming lint.
if command -v promtool >/dev/null 2>&1; then
	if promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1; then
		ok "promtool check metrics accepts /metrics"
	else
		not_ok "promtool check metrics accepts /metrics" "$(cat "$WORK/promtool.out")"
	fi
	echo "# promtool: $(promtool --version 2>&1 | head -n 1); $(grep -c '^[a-z]' "$WORK/metrics.txt") series"
else
	not_ok "promtool check metrics accepts /metrics" \
		"promtool is not installed: tools/install-deps installs it (Debian package prometheus)"
fi

# Churn: tenants made and deleted leave nothing in the engine (its record of each is
# dropped); before, every name ever seen stayed.
expect_eq "the engine keeps one tenant record" "1" "$(metric rezuscloud_engine_tenants)"
for i in 1 2 3 4 5; do
	api -X POST "$API/tenants" -d '{"metadata":{"name":"churn'"$i"'"},"spec":{"clusterProvider":"sim"}}' >/dev/null
done
for i in 1 2 3 4 5; do
	api -X DELETE "$API/tenants/churn$i" >/dev/null
done
for _ in $(seq 1 300); do
	[ "$(api -o /dev/null -w '%{http_code}' "$API/tenants/churn5")" = 404 ] &&
		[ "$(metric rezuscloud_engine_tenants)" = 1 ] && break
	sleep 0.1
done
expect_eq "five tenants made and deleted are gone" "404" "$(api -o /dev/null -w '%{http_code}' "$API/tenants/churn5")"
expect_eq "and so are their records in the engine" "1" "$(metric rezuscloud_engine_tenants)"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
