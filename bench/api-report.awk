# bench/api-report.awk - the report of bench/api from its JSON lines (build/bench/api-last.jsonl).
#
# Each input line is one api-load result with "run" and "round" added. Over the rounds it
# prints, per run, the median throughput and its range, the median p50 and p99, the worst
# max, and the summed errors and statuses; then each API run's throughput as a ratio to the
# static baseline at the same connection count, taken round by round (the baseline and the
# API run of one round ran a few seconds apart) and summarised by the median; then the
# SPEC §13 targets, judged on the medians, and a warning when other work on the machine
# disturbed the runs. When the TLS runs are there (static-tls-*, api-tls-*, *-new-c1), each
# TLS figure is set beside its plain one with the ratio TLS / plain, and the daemon's beside
# nginx's over TLS. -v pin=0 says the processes were not pinned. Plain POSIX awk (mawk).

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

# median of a[1..n] (sorted in place).
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
		return 0
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# med(KEY, RUN): the median over the rounds of RUN's KEY; lo/hi get the range.
function med(key, r, a, i, n)
{
	n = 0
	lo = ""
	hi = ""
	for (i = 1; i <= rounds; i++) {
		if ((r, i, key) in val) {
			a[++n] = val[r, i, key]
			lo = (lo == "" || a[n] < lo) ? a[n] : lo
			hi = (hi == "" || a[n] > hi) ? a[n] : hi
		}
	}
	return median(a, n)
}

function statuses(r, i, s, c)
{
	s = ""
	for (c = 100; c < 600; c++) {
		if ((r, c) in st) {
			s = s (s == "" ? "" : ",") c ":" st[r, c]
		}
	}
	return s
}

# the largest value over the rounds of RUN's KEY
function most(key, r, i, m)
{
	m = 0
	for (i = 1; i <= rounds; i++) {
		if ((r, i, key) in val && val[r, i, key] > m) {
			m = val[r, i, key]
		}
	}
	return m
}

function row(r, m, range, i, errs)
{
	if (!(r in seen)) {
		printf "%-23s (not run)\n", r
		return
	}
	m = med("rps", r)
	range = sprintf("%.0f-%.0f", lo, hi)
	errs = 0
	for (i = 1; i <= rounds; i++) {
		errs += ((r, i, "errors") in val) ? val[r, i, "errors"] : 0
	}
	printf "%-23s %5d %8.0f %13s %7.3f %7.3f %7.3f %6d %5.0f %5.0f %6.1f  %s\n", r, conns[r], m,
	       range, med("p50_ms", r), med("p99_ms", r), most("max_ms", r), errs,
	       med("server_cpu_pct", r), med("cpu_pct", r), most("waited_pct", r), statuses(r)
}

function ratio(what, r, b, a, i, n, x)
{
	n = 0
	for (i = 1; i <= rounds; i++) {
		if (val[b, i, "rps"] > 0 && ((r, i, "rps") in val)) {
			a[++n] = val[r, i, "rps"] / val[b, i, "rps"]
		}
	}
	x = median(a, n)
	printf "  %-40s %6.3f   (rounds: %.3f-%.3f)\n", what, x, a[1], a[n]
	ratios[r] = x
}

# rr(RUN, BASE): the median over the rounds of RUN's req/s / BASE's, "" when none ran.
function rr(r, b, a, i, n)
{
	n = 0
	for (i = 1; i <= rounds; i++) {
		if (val[b, i, "rps"] > 0 && ((r, i, "rps") in val)) {
			a[++n] = val[r, i, "rps"] / val[b, i, "rps"]
		}
	}
	return n == 0 ? "" : median(a, n)
}

function fmt(x, f) { return x == "" ? "-" : sprintf(f, x) }

# tlsrow(WHAT, PLAIN, TLS, NGINX-PLAIN, NGINX-TLS): a TLS run beside its plain one.
function tlsrow(what, p, t, np, nt)
{
	printf "%-28s %8s %8s %9s %9s %9s %10s %10s\n", what,
	       p in seen ? sprintf("%.0f", med("rps", p)) : "-",
	       t in seen ? sprintf("%.0f", med("rps", t)) : "-", fmt(rr(t, p), "%.3f"),
	       p in seen ? sprintf("%.3f", med("p99_ms", p)) : "-",
	       t in seen ? sprintf("%.3f", med("p99_ms", t)) : "-",
	       np == "" ? "" : fmt(rr(p, np), "%.3f"), nt == "" ? "" : fmt(rr(t, nt), "%.3f")
}

# target(WHAT, RUN, KEY, OP, LIMIT, BASELINE)
function target(what, r, key, op, lim, b, v, ok, worst, i)
{
	v = med(key, r)
	ok = (op == ">=") ? (v >= lim) : (v <= lim)
	worst = (op == ">=") ? lo : hi
	printf "  %-42s %9.1f %s %-6s %-4s  worst round %.1f", what, v, op, lim,
	       ok ? "pass" : "MISS", worst
	if (b != "" && med("rps", b) > 0) {
		printf "; limit = %.3f x %s", lim / med("rps", b), b
	}
	printf "\n"
}

{
	delete f
	parse($0, f)
	r = f["run"]
	i = f["round"] + 0
	seen[r] = 1
	rounds = i > rounds ? i : rounds
	conns[r] = f["connections"]
	for (k in f) {
		if (k ~ /^[1-5][0-9][0-9]$/) {
			st[r, k] += f[k]
		} else if (f[k] ~ /^[0-9.]+$/) {
			val[r, i, k] = f[k] + 0
		}
	}
}

END {
	printf "%-23s %5s %8s %13s %7s %7s %7s %6s %5s %5s %6s  %s\n", "run", "conns", "req/s",
	       "range", "p50 ms", "p99 ms", "max ms", "errors", "srv%", "cli%", "wait%", "statuses"
	row("static-get-c1")
	row("static-get-c50")
	row("api-get-c1")
	row("api-get-c50")
	row("api-token-get-c50")
	row("api-bound-get-c50")
	row("api-bound-token-get-c50")
	row("api-patch-c1")
	row("api-patch-c50")
	row("api-put-c1")
	tls = "api-tls-get-c1" in seen
	if (tls) {
		row("static-tls-get-c1")
		row("static-tls-get-c50")
		row("api-tls-get-c1")
		row("api-tls-get-c50")
		row("api-tls-patch-c1")
		row("api-tls-patch-c50")
		row("static-new-c1")
		row("static-tls-new-c1")
		row("api-new-c1")
		row("api-tls-new-c1")
	}
	printf "\nstatic-get: GET /tenant.json from nginx; api-get: GET /api/v1/tenants/bench;\n"
	printf "api-patch: merge patch of a label; api-put: PUT of the object with its resourceVersion.\n"
	if (tls) {
		printf "*-tls-*: the same over TLS (the TLS daemon, nginx's ssl port); *-new-*: a new\n"
		printf "connection for every request (with TLS a full handshake), the latency counting it.\n"
	}
	printf "req/s, p50, p99, srv%%, cli%%: medians over %d rounds; range: of req/s; max ms: worst\n",
	       rounds
	printf "round; srv%%/cli%%: CPU of the server's loop thread / of the load generator, in %% of\n"
	printf "one core; wait%%: worst round's time the two spent runnable but waiting for a CPU, in\n"
	printf "%% of the run: other work on the machine, near 0 when it is quiet (unpinned, it also\n"
	printf "counts the two waiting for each other on one CPU).\n"
	printf "\nthroughput / static baseline at the same connection count, per round\n"
	ratio("API GET / static GET, 1 conn", "api-get-c1", "static-get-c1")
	ratio("API GET / static GET, 50 conns", "api-get-c50", "static-get-c50")
	ratio("API GET, API token / static, 50", "api-token-get-c50", "static-get-c50")
	ratio("API GET, bound session / static, 50", "api-bound-get-c50", "static-get-c50")
	ratio("API GET, bound token / static, 50", "api-bound-token-get-c50", "static-get-c50")
	ratio("API PATCH / static GET, 1 conn", "api-patch-c1", "static-get-c1")
	ratio("API PATCH / static GET, 50 conns", "api-patch-c50", "static-get-c50")
	ratio("API PUT / static GET, 1 conn", "api-put-c1", "static-get-c1")
	if (tls) {
		printf "\nTLS beside plain HTTP (req/s and p99: medians; ratios: per round, median)\n"
		printf "%-28s %8s %8s %9s %9s %9s %10s %10s\n", "", "plain/s", "TLS/s", "TLS/plain",
		       "p99 plain", "p99 TLS", "/nginx pl", "/nginx TLS"
		tlsrow("daemon GET, 1 conn", "api-get-c1", "api-tls-get-c1", "static-get-c1",
		       "static-tls-get-c1")
		tlsrow("nginx GET, 1 conn", "static-get-c1", "static-tls-get-c1", "", "")
		tlsrow("daemon GET, 50 conns", "api-get-c50", "api-tls-get-c50", "static-get-c50",
		       "static-tls-get-c50")
		tlsrow("nginx GET, 50 conns", "static-get-c50", "static-tls-get-c50", "", "")
		tlsrow("daemon PATCH, 1 conn", "api-patch-c1", "api-tls-patch-c1", "static-get-c1",
		       "static-tls-get-c1")
		tlsrow("daemon PATCH, 50 conns", "api-patch-c50", "api-tls-patch-c50", "static-get-c50",
		       "static-tls-get-c50")
		tlsrow("daemon GET, new conn each", "api-new-c1", "api-tls-new-c1", "static-new-c1",
		       "static-tls-new-c1")
		tlsrow("nginx GET, new conn each", "static-new-c1", "static-tls-new-c1", "", "")
		printf "/nginx pl, /nginx TLS: the daemon's req/s over nginx's GET at the same connection\n"
		printf "count (new conn each: nginx's new conn each), in plain HTTP and over TLS.\n"
		printf "GET, new conn each: the request's latency holds the TCP connect and, over TLS, a\n"
		printf "full handshake (ECDHE and the server's ECDSA signature; the client checks the chain).\n"
	}
	printf "\nSPEC §13 targets (on the medians)\n"
	target("GET/s on one object, 50 conns", "api-get-c50", "rps", ">=", 20000, "static-get-c50")
	target("PUT/s on one object (PUT with rv), 1 conn", "api-put-c1", "rps", ">=", 2000,
	       "static-get-c1")
	target("writes/s on one object (PATCH), 50 conns", "api-patch-c50", "rps", ">=", 2000,
	       "static-get-c50")
	target("write p99 ms at 50 clients (PATCH)", "api-patch-c50", "p99_ms", "<=", 10, "")
	busy = 0
	for (r in seen) {
		busy = most("waited_pct", r) > busy ? most("waited_pct", r) : busy
	}
	if (busy > 10 && pin == "0") {
		printf "\nwait%% up to %.0f: unpinned, client and server also wait for each other; when\n", busy
		printf "figures matter, run pinned (BENCH_PIN=1) on a quiet machine.\n"
	} else if (busy > 10) {
		printf "\nWARNING: other work on the machine disturbed these runs (wait%% up to %.0f):\n", busy
		printf "rerun on a quiet machine before using the figures.\n"
	}
}
