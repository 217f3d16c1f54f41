# bench/report.awk - the generated part of docs/benchmarks.md, from what `make bench` left in
# build/bench: all/meta (key=value lines), api-last.jsonl (bench/api), store-last.jsonl
# (bench/store), runs-last.txt (bench/runs), runners-last.txt (bench/runners), webui-last.jsonl (bench/webui). Every SPEC §13 figure next to its baseline from
# the same run and its target; a missed target says MISS; the TLS figures beside the plain
# ones (ratios of req/s taken round by round). Medians over rounds. Plain POSIX awk (mawk).

function parse(line, f, s, n, i, parts, k, v, c)
{
	s = line
	gsub(/[{}]/, ",", s)
	n = split(s, parts, ",")
	for (i = 1; i <= n; i++) {
		c = index(parts[i], ":")
		if (c == 0) {
			continue
		}
		k = substr(parts[i], 1, c - 1)
		v = substr(parts[i], c + 1)
		gsub(/"/, "", k)
		gsub(/"/, "", v)
		f[k] = v
	}
}

function median(a, n, i, j, t)
{
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--) {
			a[j + 1] = a[j]
		}
		a[j + 1] = t
	}
	if (n == 0) {
		return ""
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# med(RUN, KEY): the median over the rounds ("" when never run); lo/hi get the range.
function med(r, key, a, i, n)
{
	n = 0
	lo = ""
	hi = ""
	for (i = 1; i <= 9; i++) {
		if ((r, i, key) in val) {
			a[++n] = val[r, i, key]
			lo = (lo == "" || a[n] < lo) ? a[n] : lo
			hi = (hi == "" || a[n] > hi) ? a[n] : hi
		}
	}
	return median(a, n)
}

function has(r) { return (r, 1, "run") in val || (r in seen) }

# thousands: 12345.6 -> "12,346"
function th(x, s, neg)
{
	if (x == "") {
		return "—"
	}
	s = sprintf("%.0f", x)
	neg = s ~ /^-/
	sub(/^-/, "", s)
	while (s ~ /[0-9][0-9][0-9][0-9]/) {
		sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
		sub(/,,/, ",", s)
	}
	return (neg ? "-" : "") s
}
function ms(x) { return x == "" ? "—" : (x < 1 ? sprintf("%.3f ms", x) : (x < 10 ? sprintf("%.2f ms", x) : sprintf("%.1f ms", x))) }
# ratio(A, B): "×R", A / B ("×?" when either is missing)
function ratio(a, b) { return (a == "" || b == "" || b <= 0) ? "×?" : sprintf("×%.1f", a / b) }
function mb(kb) { return kb == "" ? "—" : sprintf("%.1f MB", kb / 1024) }

# rate(RUN): "N/s, p99 X ms" from the medians
function rate(r, x)
{
	x = med(r, "rps")
	if (x == "") {
		return "not run"
	}
	return th(x) "/s, p99 " ms(med(r, "p99_ms"))
}

# rr(RUN, BASE): "×R" with R the median over the rounds of RUN's req/s / BASE's; "×?" when
# either is missing.
function rr(r, b, a, i, n)
{
	n = 0
	for (i = 1; i <= 9; i++) {
		if (((r, i, "rps") in val) && val[b, i, "rps"] > 0) {
			a[++n] = val[r, i, "rps"] / val[b, i, "rps"]
		}
	}
	return n == 0 ? "×?" : sprintf("×%.2f", median(a, n))
}

# tls_get(WHAT, RUN, PLAIN, NGINX, NGINX-PLAIN): a GET over TLS beside plain HTTP and nginx.
function tls_get(what, t, p, nt, np)
{
	row(what, rate(t) " (" rr(t, p) " of plain " th(med(p, "rps")) "/s)",
	    "nginx over TLS " rate(nt) " (" rr(nt, np) " of plain); RezusCloud / nginx over TLS " \
	    rr(t, nt) ", in plain HTTP " rr(p, np), "—", "")
}

function verdict(ok, what)
{
	if (ok == "") {
		return "not measured"
	}
	if (ok) {
		return "pass"
	}
	misses = misses "\n- " what
	return "**MISS**"
}

function row(fig, rz, base, target, v)
{
	printf "| %s | %s | %s | %s | %s |\n", fig, rz, base, target, v
}

FILENAME ~ /meta$/ {
	c = index($0, "=")
	meta[substr($0, 1, c - 1)] = substr($0, c + 1)
	next
}
FILENAME ~ /runs-last\.txt$/ {
	delete f
	for (i = 1; i <= NF; i++) {
		c = index($i, "=")
		f[substr($i, 1, c - 1)] = substr($i, c + 1)
	}
	runs[f["tenants"], f["workers"]] = f["daemon_ms"]
	byhand[f["tenants"]] = f["baseline_ms"]
	next
}
FILENAME ~ /runners-last\.txt$/ { # one line per round: local, 1x1, 1x3, 3x1, 1x3/64
	delete f
	for (i = 1; i <= NF; i++) {
		c = index($i, "=")
		f[substr($i, 1, c - 1)] = substr($i, c + 1)
	}
	for (k in f) {
		rn[f["round"], k] = f[k]
	}
	next
}
{
	delete f
	parse($0, f)
	r = f["run"]
	i = f["round"] + 0
	seen[r] = 1
	for (k in f) {
		if (f[k] ~ /^[0-9.]+$/) {
			val[r, i, k] = f[k] + 0
		} else {
			str[r, k] = f[k]
		}
	}
}

END {
	misses = ""
	printf "| figure | RezusCloud | baseline in the same run | target | verdict |\n"
	printf "|---|---|---|---|---|\n"

	# API, against nginx (bench/api) and etcd (bench/store)
	x = med("api-get-c50", "rps")
	row("GET one object, 50 conns", rate("api-get-c50"),
	    "nginx " rate("static-get-c50") "; etcd " rate("etcd-get-c50"), "≥ 20,000/s",
	    verdict(x == "" ? "" : x >= 20000, "GET/s on one object at 50 conns"))
	row("GET one object, 1 conn", rate("api-get-c1"),
	    "nginx " rate("static-get-c1") "; etcd " rate("etcd-get-c1"), "—", "")
	x = med("api-put-c1", "rps")
	row("PUT with resourceVersion, 1 conn", rate("api-put-c1"),
	    "etcd PUT " rate("etcd-put-c1"), "≥ 2,000/s",
	    verdict(x == "" ? "" : x >= 2000, "PUT/s on one object"))
	x = med("rz-patch-c50", "p99_ms")
	xr = (lo == "" ? "" : " (rounds " ms(lo) "–" ms(hi) ")")
	e = med("etcd-put-c50", "p99_ms")
	row("write p99, 50 clients (merge PATCH), default durability",
	    ms(x) " at " th(med("rz-patch-c50", "rps")) "/s" xr,
	    "etcd PUT p99 " ms(e) " at " th(med("etcd-put-c50", "rps")) "/s", "≤ 10 ms",
	    verdict(x == "" ? "" : x <= 10, "write p99 at 50 clients, default durability: " ms(x)))
	if (has("full-patch-c50")) {
		x = med("full-patch-c50", "p99_ms")
		row("write p99, 50 clients, `store.durability: full`",
		    ms(x) " at " th(med("full-patch-c50", "rps")) "/s",
		    "etcd PUT p99 " ms(e) " at " th(med("etcd-put-c50", "rps")) "/s",
		    "not slower than etcd",
		    verdict(x <= e && med("full-patch-c50", "rps") >= med("etcd-put-c50", "rps"),
		            "durable writes slower than etcd's: p99 " ms(x) " against " ms(e)))
	} else {
		row("write p99, 50 clients, `store.durability: full`",
		    "skipped: " (("full-skipped", "why") in str ? str["full-skipped", "why"] : "not run"),
		    "etcd PUT p99 " ms(e), "not slower than etcd", "not measured")
	}
	row("write, 1 client (merge PATCH)", rate("rz-patch-c1") \
	    (has("full-patch-c1") ? "; durable " rate("full-patch-c1") : ""),
	    "etcd PUT " rate("etcd-put-c1"), "—", "")

	# TLS (bench/api): the TLS daemon and nginx's ssl port beside their plain runs
	if (has("api-tls-get-c1")) {
		tls_get("GET one object over TLS, 50 conns", "api-tls-get-c50", "api-get-c50",
		        "static-tls-get-c50", "static-get-c50")
		tls_get("GET one object over TLS, 1 conn", "api-tls-get-c1", "api-get-c1",
		        "static-tls-get-c1", "static-get-c1")
		row("write over TLS (merge PATCH), 50 conns",
		    rate("api-tls-patch-c50") " (" rr("api-tls-patch-c50", "api-patch-c50") " of plain)",
		    "the same over plain HTTP: " rate("api-patch-c50"), "—", "")
		row("write over TLS (merge PATCH), 1 conn",
		    rate("api-tls-patch-c1") " (" rr("api-tls-patch-c1", "api-patch-c1") " of plain)",
		    "the same over plain HTTP: " rate("api-patch-c1"), "—", "")
		row("GET, new TLS connection per request (full handshake), 1 conn",
		    rate("api-tls-new-c1") " (" rr("api-tls-new-c1", "api-new-c1") \
		    " of a new plain connection per request: " th(med("api-new-c1", "rps")) "/s)",
		    "nginx " rate("static-tls-new-c1") " (" rr("static-tls-new-c1", "static-new-c1") \
		    " of plain " th(med("static-new-c1", "rps")) "/s); RezusCloud / nginx " \
		    rr("api-tls-new-c1", "static-tls-new-c1"), "—", "")
	} else {
		row("over TLS (bench/api)", "not run", "—", "—", "")
	}

	# reply sizes
	n = split("1024 4096 16384 65536 262144 1048576", sz, " ")
	for (i = 1; i <= n; i++) {
		a = med("size-rz-" sz[i], "p50_ms")
		b = med("size-ngx-" sz[i], "p50_ms")
		if (a == "") {
			continue
		}
		row(sprintf("reply of %s KB on keep-alive (%s bytes), 1 conn, p50", sz[i] / 1024,
		            th(med("size-rz-" sz[i], "body_bytes"))),
		    ms(a) " (p99 " ms(med("size-rz-" sz[i], "p99_ms")) ")",
		    "nginx " ms(b) " (p99 " ms(med("size-ngx-" sz[i], "p99_ms")) ")" \
		    (b > 0 ? sprintf("; ratio %.1f", a / b) : ""), "—", "")
	}

	# list
	row(sprintf("list of 1,000 objects (%s bytes), 1 conn", th(med("list-rz", "body_bytes"))),
	    th(med("list-rz", "rps")) "/s, p50 " ms(med("list-rz", "p50_ms")),
	    sprintf("etcd range of 1,000 (%s bytes) ", th(med("list-etcd", "body_bytes"))) \
	    th(med("list-etcd", "rps")) "/s, p50 " ms(med("list-etcd", "p50_ms")), "—", "")

	# watch
	x = med("watch-rz", "max_ms")
	row(sprintf("%s watchers, change delivered to all: max (p99)", th(med("watch-rz", "watchers"))),
	    ms(x) " (p99 " ms(med("watch-rz", "p99_ms")) "; missed " med("watch-rz", "missed") ")",
	    "etcd watch: max " ms(med("watch-etcd", "max_ms")) " (p99 " \
	    ms(med("watch-etcd", "p99_ms")) ")", "≤ 100 ms",
	    verdict(x == "" ? "" : x <= 100 && med("watch-rz", "missed") == 0,
	            "watch fan-out: max " ms(x)))
	# the same under per-tenant filtering: streams of role-none principals across tenants,
	# against the admin's streams on the same list, unfiltered, on the same daemon
	if (has("watch-filtered")) {
		x = med("watch-filtered", "max_ms")
		p = med("watch-filtered", "p50_ms")
		a = med("watch-all-rz", "max_ms")
		ap = med("watch-all-rz", "p50_ms")
		o = meta["objects"] != "" ? meta["objects"] : med("meta", "objects")
		row(sprintf("%s watchers of role none on the list across tenants (%s users in %s groups, %s AccessBindings; each may see %s of the %s tenants), a change all may see: max (p50)",
		            th(med("watch-filtered", "watchers")), med("watch-filtered-meta", "users"),
		            med("watch-filtered-meta", "groups"), med("watch-filtered-meta", "bindings"),
		            med("watch-filtered-meta", "visible"), th(o)),
		    ms(x) " (p50 " ms(p) "; missed " med("watch-filtered", "missed") ")",
		    "the admin's " th(med("watch-all-rz", "watchers")) " streams on the same list, unfiltered: max " \
		    ms(a) " (p50 " ms(ap) "), filtered " ratio(x, a) " (p50 " ratio(p, ap) "); against one object's watch above " \
		    ratio(x, med("watch-rz", "max_ms")) ", etcd's " ratio(x, med("watch-etcd", "max_ms")),
		    "≤ 100 ms", verdict(x <= 100 && med("watch-filtered", "missed") == 0,
		                        "filtered watch fan-out: max " ms(x)))
		if (has("watch-filtered-part")) {
			x = med("watch-filtered-part", "max_ms")
			row(sprintf("the same streams, a change of a tenant %s of them may see: max (p50) to those; the %s others",
			            th(med("watch-filtered-part", "watchers") - med("watch-filtered-part", "excluded")),
			            th(med("watch-filtered-part", "excluded"))),
			    ms(x) " (p50 " ms(med("watch-filtered-part", "p50_ms")) "; missed " \
			    med("watch-filtered-part", "missed") "); leaked to the others: " \
			    med("watch-filtered-part", "leaked"),
			    "the admin's unfiltered max above: " ratio(x, a), "≤ 100 ms, nothing leaked",
			    verdict(x <= 100 && med("watch-filtered-part", "missed") == 0 &&
			            med("watch-filtered-part", "leaked") == 0,
			            "filtered watch, part of the streams: max " ms(x) ", leaked " \
			            med("watch-filtered-part", "leaked")))
		}
	} else if (("watch-filtered-skipped", "why") in str) {
		row("watchers of role none across tenants (per-tenant filtering)",
		    "skipped: " str["watch-filtered-skipped", "why"], "—", "≤ 100 ms", "not measured")
	}

	# memory
	x = med("rss-idle", "rss_kb")
	row("RSS, idle daemon", mb(x), "—", "≤ 15 MB",
	    verdict(x == "" ? "" : x <= 15 * 1024, "idle RSS " mb(x)))
	x = med("rss-objects-idle", "rss_kb")
	o = meta["objects"] != "" ? meta["objects"] : med("meta", "objects")
	row("RSS, " th(o) " objects, idle", mb(x), "etcd " mb(med("rss-objects-idle", "etcd_rss_kb")),
	    "≤ 60 MB", verdict(x == "" ? "" : x <= 60 * 1024, "RSS with the objects, idle: " mb(x)))
	x = med("mem-rz-lists", "peak_rss_kb")
	row("RSS, " th(o) " objects, 10 concurrent full lists and 1,000 watchers (peak)",
	    mb(x) " (" th(med("mem-rz-lists", "rps")) " lists/s of " \
	    th(med("mem-rz-lists", "body_bytes")) " bytes)",
	    "etcd, 10 full ranges and 1,000 watchers: " mb(med("mem-etcd-lists", "peak_rss_kb")),
	    "≤ 60 MB", verdict(x == "" ? "" : x <= 60 * 1024, "RSS under lists and watchers: " mb(x)))
	y = med("mem-rz-lists", "after_rss_kb")
	row("RSS 2 s after the lists", mb(y),
	    "idle with the objects " mb(med("rss-objects-idle", "rss_kb")) "; etcd " \
	    mb(med("mem-etcd-lists", "after_rss_kb")), "close to idle",
	    verdict(y == "" ? "" : y <= 1.25 * med("rss-objects-idle", "rss_kb") + 2048,
	            "RSS after the lists: " mb(y) ", idle " mb(med("rss-objects-idle", "rss_kb"))))

	# start-up
	x = med("ready-rz", "ready_ms")
	row("start-up to ready, " th(o) " objects (median of 3)", ms(x) " (" ms(lo) "–" ms(hi) ")",
	    "etcd " ms(med("ready-etcd", "ready_ms")) " (" ms(lo) "–" ms(hi) ")", "≤ 200 ms",
	    verdict(x == "" ? "" : x <= 200, "start-up to ready: " ms(x)))

	# runs
	if ((100, 1) in runs && 100 in byhand) {
		ov = runs[100, 1] / byhand[100]
		row("run pool, 100 sim tenants, 1 worker, against tofu by hand",
		    sprintf("%.1f s (×%.2f)", runs[100, 1] / 1000, ov),
		    sprintf("tofu by hand, one after the other: %.1f s", byhand[100] / 1000),
		    "< 5 % added", verdict(ov < 1.05, sprintf("run pool overhead: %+.0f %%", (ov - 1) * 100)))
	}
	if ((100, 4) in runs && 100 in byhand) {
		cpus = meta["cpus"] + 0
		ceil = cpus < 4 ? cpus : 4
		t = runs[100, 4] / byhand[100]
		row("run pool, 100 sim tenants, 4 workers",
		    sprintf("%.1f s: ×%.2f of by hand, %.0f %% of the %d-core ceiling", runs[100, 4] / 1000,
		            t, (1 / ceil) / t * 100, ceil),
		    sprintf("by hand %.1f s; %s", byhand[100] / 1000,
		            (100, 2) in runs ? sprintf("2 workers %.1f s", runs[100, 2] / 1000) : ""),
		    sprintf("≈ 1/%d (tofu is CPU-bound; %d cores)", ceil, cpus),
		    verdict(t <= 1.1 / ceil, sprintf("4 workers reach %.0f %% of the %d× ceiling", (1 / ceil) / t * 100, ceil)))
	}
	# remote runners (bench/runners): a resync pass of the same tenants, by round
	if (("1x3/64", "wait_p50_ms") in rn && rn["1x3/64", "wait_p50_ms"] != "-") {
		row(sprintf("remote runners: a step's claim wait (job published → claimed), 1 runner × 3 over 64 pools, %d runs",
		            rn["1x3/64", "runs"]),
		    sprintf("p50 %s ms, p99 %s ms", rn["1x3/64", "wait_p50_ms"], rn["1x3/64", "wait_p99_ms"]),
		    sprintf("2 pools: p50 %s ms, p99 %s ms", rn["1x3", "wait_p50_ms"], rn["1x3", "wait_p99_ms"]),
		    "p50 ≤ 30 ms whatever the pools",
		    verdict(rn["1x3/64", "wait_p50_ms"] + 0 <= 30, "p50 " rn["1x3/64", "wait_p50_ms"] " ms"))
	}
	if (("1x3", "wall_ms") in rn && ("3x1", "wall_ms") in rn && rn["1x3", "wall_ms"] > 0 && rn["3x1", "wall_ms"] > 0) {
		a = rn["1x3", "runs"] / (rn["1x3", "wall_ms"] / 1000)
		b = rn["3x1", "runs"] / (rn["3x1", "wall_ms"] / 1000)
		row(sprintf("remote runners: resync of %d sim tenants, 1 runner × 3 slots", rn["1x3", "runs"]),
		    sprintf("%.1f s, %.2f runs/s (×%.2f)", rn["1x3", "wall_ms"] / 1000, a, a / b),
		    sprintf("3 runners × 1: %.1f s, %.2f runs/s", rn["3x1", "wall_ms"] / 1000, b),
		    "within 15 % of 3 × 1", verdict(a / b >= 0.85, sprintf("×%.2f", a / b)))
	}
	if (("local", "wall_ms") in rn && ("3x1", "wall_ms") in rn && rn["local", "wall_ms"] > 0 && rn["3x1", "wall_ms"] > 0) {
		runs_l = rn["local", "runs"]
		runs_r = rn["3x1", "runs"]
		row(sprintf("remote runners: resync of %d sim tenants, 3 runners × 1 against the local pool (3 workers)", runs_r),
		    sprintf("%.1f s, %.2f runs/s (×%.2f); the daemon %.1f ms CPU/run, the runners %.0f ms, nats-server %.0f ms",
		            rn["3x1", "wall_ms"] / 1000, runs_r / (rn["3x1", "wall_ms"] / 1000),
		            (runs_r / rn["3x1", "wall_ms"]) / (runs_l / rn["local", "wall_ms"]),
		            rn["3x1", "daemon_cpu_ms"] / runs_r, rn["3x1", "runners_cpu_ms"] / runs_r,
		            rn["3x1", "nats_cpu_ms"] / runs_r),
		    sprintf("local pool %.1f s, %.2f runs/s; the daemon %.1f ms CPU/run",
		            rn["local", "wall_ms"] / 1000, runs_l / (rn["local", "wall_ms"] / 1000),
		            rn["local", "daemon_cpu_ms"] / runs_l),
		    "— (a report: what dispatch costs)", "—")
	}
	# the WebUI (bench/webui): the dashboard's render against a static asset of the daemon
	x = med("webui-dashboard", "p50_ms")
	if (x != "") {
		y = med("webui-dashboard", "p99_ms")
		row("WebUI dashboard, " th(med("webui-meta", "tenants")) " tenants, GET / (" \
		    th(med("webui-meta", "page_bytes")) " bytes), 1 conn",
		    "p50 " ms(x) ", p99 " ms(y),
		    "static app.css p50 " ms(med("webui-static", "p50_ms")) " (p99 " \
		    ms(med("webui-static", "p99_ms")) "); the API's tenant list p50 " \
		    ms(med("webui-list", "p50_ms")) " (p99 " ms(med("webui-list", "p99_ms")) ")",
		    "< 50 ms", verdict(y < 50, "WebUI dashboard render p99: " ms(y)))
	}
	if (misses != "") {
		printf "\nMissed in this run (the hand-written sections below say why, where known):%s\n", misses
	} else {
		printf "\nEvery target measured in this run was met.\n"
	}
}
