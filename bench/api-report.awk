# bench/api-report.awk - the report of bench/api from its JSON lines (build/bench/api-last.jsonl).
#
# Each input line is one api-load result with "run" and "round" added. Over the rounds it
# prints, per run, the median throughput and its range, the median p50 and p99, the worst
# max, and the summed errors and statuses; then each API run's throughput as a ratio to the
# static baseline at the same connection count, taken round by round (the baseline and the
# API run of one round ran a few seconds apart) and summarised by the median; then the
# SPEC §13 targets, judged on the medians. Plain POSIX awk (Debian's mawk).

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

function row(r, what, m, i, worst, errs)
{
	if (!(r in seen)) {
		printf "%-16s %-38s (not run)\n", r, what
		return
	}
	m = med("rps", r)
	worst = 0
	errs = 0
	for (i = 1; i <= rounds; i++) {
		worst = val[r, i, "max_ms"] > worst ? val[r, i, "max_ms"] : worst
		errs += val[r, i, "errors"]
	}
	printf "%-16s %-38s %5d %9.0f %17s %8.3f %8.3f %8.3f %6d  %s\n", r, what, conns[r], m,
	       sprintf("%.0f-%.0f", lo, hi), med("p50_ms", r), med("p99_ms", r), worst, errs,
	       statuses(r)
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

# target(WHAT, RUN, KEY, OP, LIMIT, BASELINE)
function target(what, r, key, op, lim, b, v, ok, worst, i)
{
	v = med(key, r)
	ok = (op == ">=") ? (v >= lim) : (v <= lim)
	worst = (op == ">=") ? lo : hi
	printf "  %-44s %9.3f %s %-6s %-4s  worst round %.3f", what, v, op, lim,
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
	printf "%-16s %-38s %5s %9s %17s %8s %8s %8s %6s  %s\n", "run", "request", "conns",
	       "req/s", "range (rounds)", "p50 ms", "p99 ms", "max ms", "errors", "statuses"
	row("static-get-c1", "GET /tenant.json (nginx)")
	row("static-get-c50", "GET /tenant.json (nginx)")
	row("api-get-c1", "GET /api/v1/tenants/bench")
	row("api-get-c50", "GET /api/v1/tenants/bench")
	row("api-patch-c1", "PATCH .../bench (merge patch)")
	row("api-patch-c50", "PATCH .../bench (merge patch)")
	row("api-put-c1", "PUT .../bench (resourceVersion)")
	printf "\n(medians over %d rounds; p50/p99 are medians of the rounds' percentiles)\n", rounds
	printf "\nthroughput / static baseline at the same connection count, per round\n"
	ratio("API GET / static GET, 1 conn", "api-get-c1", "static-get-c1")
	ratio("API GET / static GET, 50 conns", "api-get-c50", "static-get-c50")
	ratio("API PATCH / static GET, 1 conn", "api-patch-c1", "static-get-c1")
	ratio("API PATCH / static GET, 50 conns", "api-patch-c50", "static-get-c50")
	ratio("API PUT / static GET, 1 conn", "api-put-c1", "static-get-c1")
	printf "\nSPEC §13 targets (on the medians)\n"
	target("GET/s on one object, 50 conns", "api-get-c50", "rps", ">=", 20000, "static-get-c50")
	target("PUT/s on one object (PUT with rv), 1 conn", "api-put-c1", "rps", ">=", 2000,
	       "static-get-c1")
	target("writes/s on one object (PATCH), 50 conns", "api-patch-c50", "rps", ">=", 2000,
	       "static-get-c50")
	target("write p99 ms at 50 clients (PATCH)", "api-patch-c50", "p99_ms", "<=", 10, "")
}
