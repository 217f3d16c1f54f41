/* core/api/metrics.c - request counters and latency histograms, and the gauges of the
 * modules that own them, for Prometheus. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/model/kinds.h"
#include "core/api/metrics.h"
#include "core/base/clock.h"
#include "core/base/version.h"

static const double buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	                          0.05,   0.1,   0.25,   0.5,   1,    2.5 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

/* The methods the router knows; any other counts as "other" (bounded label values). */
static const char *const methods[] = { "GET",    "HEAD",    "POST", "PUT",    "PATCH",
	                               "DELETE", "OPTIONS", "LOCK", "UNLOCK", "other" };
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

struct series {
	char *route;
	const char *method; /* one of methods[] */
	int code;
	uint64_t count;
};

/* One route pattern's latency histogram. */
struct hist {
	char *route;
	uint64_t b[NBUCKETS + 1]; /* not cumulative; last: +Inf */
	uint64_t count;
	double sum;
};

struct rz_metrics {
	rz_metrics_gauges_t gauges;
	const rz_kind_t *tenants, *machines; /* the fleet's kinds, looked up once */
	struct series *series;
	size_t n, cap;
	struct hist *hists;
	size_t nh, caph;
	uint64_t unrecorded; /* requests beyond RZ_METRICS_SERIES_MAX or out of memory */
};

int rz_metrics_new(rz_metrics_t **out, const rz_metrics_gauges_t *gauges, rz_err_t *err)
{
	rz_metrics_t *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (m == NULL) {
		return rz_err_set(err, -ENOMEM, "metrics: out of memory");
	}
	if (gauges != NULL) {
		m->gauges = *gauges;
	}
	m->tenants = rz_kind_by_name("Tenant");
	m->machines = rz_kind_by_name("Machine");
	*out = m;
	return 0;
}

void rz_metrics_free(rz_metrics_t *m)
{
	if (m == NULL) {
		return;
	}
	for (size_t i = 0; i < m->n; i++) {
		free(m->series[i].route);
	}
	for (size_t i = 0; i < m->nh; i++) {
		free(m->hists[i].route);
	}
	free(m->series);
	free(m->hists);
	free(m);
}

/* Room for one more element of size in *arr (capacity *cap, *n used, at most max). */
static bool grow(void **arr, size_t *cap, size_t n, size_t size, size_t max)
{
	size_t c;
	void *p;

	if (n < *cap) {
		return true;
	}
	if (n >= max) {
		return false;
	}
	c = *cap ? *cap * 2 : 32;
	c = c > max ? max : c;
	if ((p = realloc(*arr, c * size)) == NULL) {
		return false;
	}
	*arr = p;
	*cap = c;
	return true;
}

static const char *method_of(const char *method)
{
	for (size_t i = 0; i + 1 < NMETHODS; i++) {
		if (method != NULL && strcmp(method, methods[i]) == 0) {
			return methods[i];
		}
	}
	return methods[NMETHODS - 1];
}

static struct series *series_for(rz_metrics_t *m, const char *route, const char *method, int code)
{
	struct series *s;

	for (size_t i = 0; i < m->n; i++) {
		s = &m->series[i];
		if (s->code == code && s->method == method && strcmp(s->route, route) == 0) {
			return s;
		}
	}
	if (!grow((void **)&m->series, &m->cap, m->n, sizeof(*s), RZ_METRICS_SERIES_MAX)) {
		return NULL;
	}
	s = &m->series[m->n];
	*s = (struct series){ strdup(route), method, code, 0 };
	if (s->route == NULL) {
		return NULL;
	}
	m->n++;
	return s;
}

static struct hist *hist_for(rz_metrics_t *m, const char *route)
{
	struct hist *h;

	for (size_t i = 0; i < m->nh; i++) {
		if (strcmp(m->hists[i].route, route) == 0) {
			return &m->hists[i];
		}
	}
	if (!grow((void **)&m->hists, &m->caph, m->nh, sizeof(*h), RZ_METRICS_ROUTES_MAX)) {
		return NULL;
	}
	h = &m->hists[m->nh];
	*h = (struct hist){ .route = strdup(route) };
	if (h->route == NULL) {
		return NULL;
	}
	m->nh++;
	return h;
}

void rz_metrics_observe(rz_metrics_t *m, const char *route, const char *method, int code,
                        double seconds, bool streamed)
{
	const char *r = route ? route : "unmatched";
	struct series *s = series_for(m, r, method_of(method), code);
	struct hist *h;
	size_t b = 0;

	if (s == NULL) {
		m->unrecorded++;
		return;
	}
	s->count++;
	if (streamed || (h = hist_for(m, r)) == NULL) {
		return;
	}
	while (b < NBUCKETS && seconds > buckets[b]) {
		b++;
	}
	h->b[b]++;
	h->count++;
	h->sum += seconds;
}

/* ------------------------------------------------------------------ rendering */

struct out {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (int attempt = 0; attempt < 2 && !o->oom; attempt++) {
		va_start(ap, fmt);
		n = vsnprintf(o->p ? o->p + o->len : NULL, o->p ? o->cap - o->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
		} else if (o->p != NULL && (size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		} else {
			size_t cap = o->cap ? o->cap : 4096;
			char *p;
			while (cap < o->len + (size_t)n + 1) {
				cap *= 2;
			}
			p = realloc(o->p, cap);
			if (p == NULL) {
				o->oom = true;
				return;
			}
			o->p = p;
			o->cap = cap;
		}
	}
}

/* A label value with \, " and newline escaped, into buf. */
static const char *esc(const char *v, char *buf, size_t size)
{
	size_t n = 0;

	for (; *v != '\0' && n + 3 < size; v++) {
		if (*v == '\\' || *v == '"') {
			buf[n++] = '\\';
			buf[n++] = *v;
		} else if (*v == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *v;
		}
	}
	buf[n] = '\0';
	return buf;
}

/* The # HELP and # TYPE lines of a metric family. */
static void family(struct out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram's series: labels is "" or `name="value",` (escaped, comma last); counts
 * holds n + 1 non-cumulative counts (the last above every bound). */
static void put_hist(struct out *o, const char *name, const char *labels, const double *bounds,
                     size_t n, const uint64_t *counts, uint64_t count, double sum)
{
	uint64_t cum = 0;
	size_t len = strlen(labels);
	/* labels without its trailing comma, for _sum and _count */
	int bare = len > 0 ? (int)len - 1 : 0;

	for (size_t b = 0; b < n; b++) {
		cum += counts[b];
		put(o, "%s_bucket{%sle=\"%g\"} %" PRIu64 "\n", name, labels, bounds[b], cum);
	}
	cum += counts[n];
	put(o, "%s_bucket{%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, cum);
	put(o, "%s_sum%s%.*s%s %.6f\n", name, bare ? "{" : "", bare, labels, bare ? "}" : "", sum);
	put(o, "%s_count%s%.*s%s %" PRIu64 "\n", name, bare ? "{" : "", bare, labels,
	    bare ? "}" : "", count);
}

static void render_requests(rz_metrics_t *m, struct out *o)
{
	char r[512], labels[600];

	family(o, "rezuscloud_http_requests_total", "counter",
	       "HTTP requests by route pattern, method and code.");
	for (size_t i = 0; i < m->n; i++) {
		struct series *s = &m->series[i];
		put(o,
		    "rezuscloud_http_requests_total{route=\"%s\",method=\"%s\",code=\"%d\"} "
		    "%" PRIu64 "\n",
		    esc(s->route, r, sizeof(r)), s->method, s->code, s->count);
	}
	family(o, "rezuscloud_http_requests_unrecorded_total", "counter",
	       "HTTP requests counted in no series (series limit reached, or out of memory).");
	put(o, "rezuscloud_http_requests_unrecorded_total %" PRIu64 "\n", m->unrecorded);
	family(o, "rezuscloud_http_request_duration_seconds", "histogram",
	       "Time to answer a request, by route pattern (streams excluded).");
	for (size_t i = 0; i < m->nh; i++) {
		struct hist *h = &m->hists[i];
		snprintf(labels, sizeof(labels), "route=\"%s\",", esc(h->route, r, sizeof(r)));
		put_hist(o, "rezuscloud_http_request_duration_seconds", labels, buckets, NBUCKETS,
		         h->b, h->count, h->sum);
	}
}

struct grouped {
	struct out *o;
	const char *metric, *label;
};

static void put_group(void *arg, const char *value, int64_t n)
{
	struct grouped *g = arg;
	char v[256];

	put(g->o, "%s{%s=\"%s\"} %" PRId64 "\n", g->metric, g->label,
	    esc(value ? value : "", v, sizeof(v)), n);
}

/* Tenants by phase, Machines by stage ("" when not known yet). */
static void render_fleet(rz_metrics_t *m, struct out *o)
{
	struct grouped t = { o, "rezuscloud_tenants", "phase" };
	struct grouped mc = { o, "rezuscloud_machines", "stage" };
	rz_err_t err = { 0 };

	if (m->gauges.store == NULL) {
		return;
	}
	put(o, "# HELP rezuscloud_tenants Tenants by phase.\n# TYPE rezuscloud_tenants gauge\n");
	rz_store_count_by(m->gauges.store, m->tenants, "$.status.phase", put_group, &t, &err);
	put(o, "# HELP rezuscloud_machines Machines by observed stage.\n"
	       "# TYPE rezuscloud_machines gauge\n");
	rz_store_count_by(m->gauges.store, m->machines, "$.status.stage", put_group, &mc, &err);
}

/* Each tenant's newest succeeded etcd snapshot: when it finished and its size. */
static void render_etcd(rz_metrics_t *m, struct out *o)
{
	json_t *all, *b, *newest = json_object();
	const char *tenant;
	size_t i;

	if (m->gauges.store == NULL || newest == NULL) {
		json_decref(newest);
		return;
	}
	all = rz_store_list_all(m->gauges.store, "EtcdBackup", NULL);
	json_array_foreach(all, i, b)
	{
		const json_t *st = json_object_get(b, "status");
		const char *t =
		    json_string_value(json_object_get(json_object_get(b, "metadata"), "tenant"));
		const char *f = json_string_value(json_object_get(st, "finishedAt"));
		json_t *have;
		if (t == NULL || f == NULL ||
		    strcmp(json_string_value(json_object_get(st, "phase")) ?: "", "Succeeded") !=
		        0) {
			continue;
		}
		have = json_object_get(newest, t);
		if (have == NULL ||
		    strcmp(f, json_string_value(json_object_get(json_object_get(have, "status"),
		                                                "finishedAt"))) > 0) {
			json_object_set(newest, t, b);
		}
	}
	family(o, "rezuscloud_etcd_backup_last_success_timestamp_seconds", "gauge",
	       "When each tenant's newest succeeded etcd snapshot was stored (Unix seconds).");
	json_object_foreach(newest, tenant, b)
	{
		char v[256];
		int64_t ms = rz_clock_parse(
		    json_string_value(json_object_get(json_object_get(b, "status"), "finishedAt")));
		put(o,
		    "rezuscloud_etcd_backup_last_success_timestamp_seconds{tenant=\"%s\"} %.3f\n",
		    esc(tenant, v, sizeof(v)), (double)ms / 1000.0);
	}
	family(o, "rezuscloud_etcd_backup_last_size_bytes", "gauge",
	       "The size of each tenant's newest succeeded etcd snapshot, before encryption.");
	json_object_foreach(newest, tenant, b)
	{
		char v[256];
		put(o,
		    "rezuscloud_etcd_backup_last_size_bytes{tenant=\"%s\"} %" JSON_INTEGER_FORMAT
		    "\n",
		    esc(tenant, v, sizeof(v)),
		    json_integer_value(json_object_get(json_object_get(b, "status"), "size")));
	}
	json_decref(all);
	json_decref(newest);
}

static void render_probes(rz_metrics_t *m, struct out *o)
{
	static const char *const outcomes[4] = { "ok", "failed", "timeout", "error" };
	rz_metrics_probes_t p = { { 0 }, { 0 }, 0, 0, 0, 0 };

	if (m->gauges.probes == NULL) {
		return;
	}
	m->gauges.probes(m->gauges.ctx, &p);
	put(o, "# HELP rezuscloud_probes_total Observation probes by outcome.\n"
	       "# TYPE rezuscloud_probes_total counter\n");
	for (size_t i = 0; i < 4; i++) {
		put(o, "rezuscloud_probes_total{outcome=\"%s\"} %" PRIu64 "\n", outcomes[i],
		    p.count[i]);
	}
	put(o, "# HELP rezuscloud_probe_seconds_total Time spent in observation probes, by "
	       "outcome.\n# TYPE rezuscloud_probe_seconds_total counter\n");
	for (size_t i = 0; i < 4; i++) {
		put(o, "rezuscloud_probe_seconds_total{outcome=\"%s\"} %.6f\n", outcomes[i],
		    p.seconds[i]);
	}
	put(o,
	    "# HELP rezuscloud_probes_running Observation probes running now.\n"
	    "# TYPE rezuscloud_probes_running gauge\nrezuscloud_probes_running %" PRIu64 "\n"
	    "# HELP rezuscloud_probes_queued Observation probes waiting for a slot.\n"
	    "# TYPE rezuscloud_probes_queued gauge\nrezuscloud_probes_queued %" PRIu64 "\n"
	    "# HELP rezuscloud_observations_total Tenant observations completed.\n"
	    "# TYPE rezuscloud_observations_total counter\n"
	    "rezuscloud_observations_total %" PRIu64 "\n"
	    "# HELP rezuscloud_observation_writes_total Status writes observations caused.\n"
	    "# TYPE rezuscloud_observation_writes_total counter\n"
	    "rezuscloud_observation_writes_total %" PRIu64 "\n",
	    p.running, p.queued, p.observations, p.writes);
}

static void render_gauges(rz_metrics_t *m, struct out *o)
{
	const rz_metrics_gauges_t *g = &m->gauges;

	if (g->watches != NULL) {
		put(o,
		    "# HELP rezuscloud_watches_open Open watch streams.\n"
		    "# TYPE rezuscloud_watches_open gauge\nrezuscloud_watches_open %zu\n",
		    g->watches(g->ctx));
	}
	if (g->objects != NULL) {
		put(o,
		    "# HELP rezuscloud_store_objects Objects in the store.\n"
		    "# TYPE rezuscloud_store_objects gauge\nrezuscloud_store_objects %" PRId64 "\n",
		    g->objects(g->ctx));
	}
	if (g->revision != NULL) {
		put(o,
		    "# HELP rezuscloud_store_revision The store's newest revision.\n"
		    "# TYPE rezuscloud_store_revision gauge\nrezuscloud_store_revision %" PRId64
		    "\n",
		    g->revision(g->ctx));
	}
	put(o,
	    "# HELP rezuscloud_build_info The running build.\n"
	    "# TYPE rezuscloud_build_info gauge\n"
	    "rezuscloud_build_info{version=\"%s\",commit=\"%s\",abi=\"%s\"} 1\n",
	    rz_version(), rz_version_commit(), rz_version_abi());
}

static void render_runs(rz_metrics_t *m, struct out *o)
{
	rz_metrics_runs_t r = { 0 };
	char labels[64];

	if (m->gauges.runs == NULL) {
		return;
	}
	m->gauges.runs(m->gauges.ctx, &r);
	family(o, "rezuscloud_runs_total", "counter",
	       "Runs finished, by operation and final phase (outcome).");
	for (size_t i = 0; i < RZ_METRICS_RUN_OPS; i++) {
		for (size_t j = 0; j < RZ_METRICS_RUN_PHASES; j++) {
			put(o,
			    "rezuscloud_runs_total{operation=\"%s\",outcome=\"%s\"} %" PRIu64 "\n",
			    r.ops[i], r.phases[j], r.runs[i][j]);
		}
	}
	family(o, "rezuscloud_run_step_duration_seconds", "histogram",
	       "Time a tofu command of a run took, by step.");
	for (size_t i = 0; i < RZ_METRICS_RUN_STEPS; i++) {
		snprintf(labels, sizeof(labels), "step=\"%s\",", r.steps[i]);
		put_hist(o, "rezuscloud_run_step_duration_seconds", labels, r.bounds,
		         RZ_METRICS_RUN_BUCKETS, r.step_hist[i], r.step_count[i],
		         r.step_seconds[i]);
	}
	family(o, "rezuscloud_runs_queued", "gauge", "Tenants whose run waits for a pool slot.");
	put(o, "rezuscloud_runs_queued %" PRIu64 "\n", r.queued);
	family(o, "rezuscloud_run_pool_busy", "gauge", "Run pool slots taken (runs in progress).");
	put(o, "rezuscloud_run_pool_busy %" PRIu64 "\n", r.running);
	family(o, "rezuscloud_run_pool_size", "gauge", "Run pool slots (tofu.workers).");
	put(o, "rezuscloud_run_pool_size %" PRIu64 "\n", r.workers);
	family(o, "rezuscloud_tofu_processes", "gauge", "tofu processes running now.");
	put(o, "rezuscloud_tofu_processes %" PRIu64 "\n", r.processes);
	family(o, "rezuscloud_engine_tenants", "gauge",
	       "Tenants the run engine keeps a record of (a deleted tenant's is dropped).");
	put(o, "rezuscloud_engine_tenants %" PRIu64 "\n", r.tenants);
}

static void render_workers(rz_metrics_t *m, struct out *o)
{
	rz_workers_stats_t w;

	if (m->gauges.workers == NULL) {
		return;
	}
	rz_workers_stats(m->gauges.workers, &w);
	family(o, "rezuscloud_worker_pool_busy", "gauge",
	       "Worker pool threads running a job (password hashing, backups).");
	put(o, "rezuscloud_worker_pool_busy %zu\n", w.busy);
	family(o, "rezuscloud_worker_pool_size", "gauge", "Worker pool threads.");
	put(o, "rezuscloud_worker_pool_size %zu\n", w.threads);
	family(o, "rezuscloud_worker_pool_queued", "gauge", "Jobs waiting for a worker thread.");
	put(o, "rezuscloud_worker_pool_queued %zu\n", w.queued);
}

static void render_auth(rz_metrics_t *m, struct out *o)
{
	rz_auth_stats_t a = { 0 };

	if (m->gauges.auth == NULL) {
		return;
	}
	rz_auth_stats(m->gauges.auth, &a);
	family(o, "rezuscloud_auth_login_failures_total", "counter",
	       "Password checks that failed (logins and password changes).");
	put(o, "rezuscloud_auth_login_failures_total %" PRIu64 "\n", a.login_failures);
	family(o, "rezuscloud_auth_login_throttled_total", "counter",
	       "Logins refused with 429: after too many failures, or too many checks at once.");
	put(o, "rezuscloud_auth_login_throttled_total{reason=\"failures\"} %" PRIu64 "\n",
	    a.throttled);
	put(o, "rezuscloud_auth_login_throttled_total{reason=\"busy\"} %" PRIu64 "\n",
	    rz_session_busy_refusals(m->gauges.session));
	family(o, "rezuscloud_access_decisions_total", "counter",
	       "What AccessBindings grant a principal class on a tenant: decided after a change "
	       "(evaluated), or answered from memory (remembered).");
	put(o, "rezuscloud_access_decisions_total{how=\"evaluated\"} %" PRIu64 "\n",
	    a.decisions_evaluated);
	put(o, "rezuscloud_access_decisions_total{how=\"remembered\"} %" PRIu64 "\n",
	    a.decisions_remembered);
	family(o, "rezuscloud_access_principal_classes", "gauge",
	       "Principals named by the same AccessBindings, as classes known now.");
	put(o, "rezuscloud_access_principal_classes %zu\n", a.classes);
}

/* The size of path in bytes; 0 when it does not exist. */
static uint64_t file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void render_store(rz_metrics_t *m, struct out *o)
{
	const rz_metrics_gauges_t *g = &m->gauges;
	char wal[4096];

	if (g->db_path != NULL) {
		snprintf(wal, sizeof(wal), "%s-wal", g->db_path);
		family(o, "rezuscloud_store_database_bytes", "gauge", "Size of the database file.");
		put(o, "rezuscloud_store_database_bytes %" PRIu64 "\n", file_bytes(g->db_path));
		family(o, "rezuscloud_store_wal_bytes", "gauge",
		       "Size of the database's write-ahead log file.");
		put(o, "rezuscloud_store_wal_bytes %" PRIu64 "\n", file_bytes(wal));
	}
	if (g->store != NULL) {
		family(o, "rezuscloud_store_event_log_oldest_revision", "gauge",
		       "The oldest revision in the event log (newest + 1 when it is empty): "
		       "a watch resumes from this one less or later.");
		put(o, "rezuscloud_store_event_log_oldest_revision %" PRId64 "\n",
		    rz_store_oldest(g->store));
		family(o, "rezuscloud_store_event_log_newest_revision", "gauge",
		       "The newest revision in the event log (the store's revision).");
		put(o, "rezuscloud_store_event_log_newest_revision %" PRId64 "\n",
		    rz_store_revision(g->store));
		family(o, "rezuscloud_store_event_log_bytes", "gauge",
		       "Bytes of the documents the event log holds.");
		put(o, "rezuscloud_store_event_log_bytes %" PRIu64 "\n",
		    rz_store_log_bytes(g->store));
	}
	if (g->checkpoints != NULL) {
		rz_metrics_checkpoints_t c = { 0 };
		g->checkpoints(g->ctx, &c);
		family(o, "rezuscloud_store_checkpoint_duration_seconds", "summary",
		       "WAL checkpoints and the time they took.");
		put(o,
		    "rezuscloud_store_checkpoint_duration_seconds_sum %.6f\n"
		    "rezuscloud_store_checkpoint_duration_seconds_count %" PRIu64 "\n",
		    c.seconds, c.count);
		family(o, "rezuscloud_store_checkpoint_restarts_total", "counter",
		       "WAL checkpoints that held writes to bring the WAL back under its bound.");
		put(o, "rezuscloud_store_checkpoint_restarts_total %" PRIu64 "\n", c.restarts);
		family(o, "rezuscloud_store_wal_syncs_total", "counter",
		       "WAL syncs of the group commit (store.durability: full).");
		put(o, "rezuscloud_store_wal_syncs_total %" PRIu64 "\n", c.syncs);
		family(o, "rezuscloud_store_synced_commits_total", "counter",
		       "Commits those syncs made durable.");
		put(o, "rezuscloud_store_synced_commits_total %" PRIu64 "\n", c.synced_commits);
	}
}

/* ------------------------------------------------------------------ process_* */

/* The whole of a small /proc file into buf; its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (f == NULL) {
		return -1;
	}
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* Seconds since the epoch at boot (/proc/stat btime); 0 when unknown. */
static uint64_t boot_time(void)
{
	char buf[16384];
	const char *p;

	if (read_small("/proc/stat", buf, sizeof(buf)) < 0 ||
	    (p = strstr(buf, "\nbtime ")) == NULL) {
		return 0;
	}
	return strtoull(p + 7, NULL, 10);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL) {
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n - 1; /* the directory's own */
}

/* The standard names of the Prometheus client libraries, from /proc/self/stat (fields 14,
 * 15: utime, stime in ticks; 22: start time in ticks after boot; 23: vsize in bytes; 24:
 * rss in pages). */
static void render_process(struct out *o)
{
	char buf[2048];
	const char *p;
	unsigned long long utime, stime, start, vsize, rss;
	double tck = (double)sysconf(_SC_CLK_TCK);
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	int fds;

	if (read_small("/proc/self/stat", buf, sizeof(buf)) > 0 &&
	    (p = strrchr(buf, ')')) != NULL && tck > 0 && page > 0 &&
	    sscanf(p + 2,
	           "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d "
	           "%*d %llu %llu %llu",
	           &utime, &stime, &start, &vsize, &rss) == 5) {
		family(o, "process_cpu_seconds_total", "counter",
		       "Total user and system CPU time spent in seconds.");
		put(o, "process_cpu_seconds_total %.2f\n", (double)(utime + stime) / tck);
		family(o, "process_start_time_seconds", "gauge",
		       "Start time of the process since unix epoch in seconds.");
		put(o, "process_start_time_seconds %.2f\n",
		    (double)boot_time() + (double)start / tck);
		family(o, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
		put(o, "process_virtual_memory_bytes %llu\n", vsize);
		family(o, "process_resident_memory_bytes", "gauge",
		       "Resident memory size in bytes.");
		put(o, "process_resident_memory_bytes %llu\n", rss * (unsigned long long)page);
	}
	if ((fds = open_fds()) >= 0) {
		family(o, "process_open_fds", "gauge", "Number of open file descriptors.");
		put(o, "process_open_fds %d\n", fds);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		family(o, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
		put(o, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
	}
}

static void render_runners(rz_metrics_t *m, struct out *o)
{
	rz_metrics_runners_t r = { 0 };

	if (m->gauges.runners == NULL) {
		return;
	}
	m->gauges.runners(m->gauges.ctx, &r);
	put(o,
	    "# HELP rezuscloud_runners Remote runners by phase.\n"
	    "# TYPE rezuscloud_runners gauge\n"
	    "rezuscloud_runners{phase=\"Ready\"} %" PRIu64 "\n"
	    "rezuscloud_runners{phase=\"Stopping\"} %" PRIu64 "\n"
	    "rezuscloud_runners{phase=\"Lost\"} %" PRIu64 "\n"
	    "rezuscloud_runners{phase=\"Offline\"} %" PRIu64 "\n"
	    "# HELP rezuscloud_runner_heartbeats_total Runner heartbeats taken.\n"
	    "# TYPE rezuscloud_runner_heartbeats_total counter\n"
	    "rezuscloud_runner_heartbeats_total %" PRIu64 "\n"
	    "# HELP rezuscloud_runner_heartbeats_dropped_total Runner heartbeats dropped as "
	    "invalid (not JSON, too big, another runner's name, bad labels) or beyond the "
	    "runners kept.\n"
	    "# TYPE rezuscloud_runner_heartbeats_dropped_total counter\n"
	    "rezuscloud_runner_heartbeats_dropped_total %" PRIu64 "\n"
	    "# HELP rezuscloud_nats_connected 1 while the daemon is connected to NATS.\n"
	    "# TYPE rezuscloud_nats_connected gauge\nrezuscloud_nats_connected %d\n",
	    r.ready, r.stopping, r.lost, r.offline, r.heartbeats, r.dropped, r.connected ? 1 : 0);
	put(o,
	    "# HELP rezuscloud_runner_jobs_total Step jobs published to the remote runners.\n"
	    "# TYPE rezuscloud_runner_jobs_total counter\n"
	    "rezuscloud_runner_jobs_total %" PRIu64 "\n"
	    "# HELP rezuscloud_runner_events_total Remote steps' events (lines, ends) handled.\n"
	    "# TYPE rezuscloud_runner_events_total counter\n"
	    "rezuscloud_runner_events_total %" PRIu64 "\n"
	    "# HELP rezuscloud_runner_events_dropped_total Remote steps' events dropped: "
	    "invalid, of no step in progress, or seen already.\n"
	    "# TYPE rezuscloud_runner_events_dropped_total counter\n"
	    "rezuscloud_runner_events_dropped_total %" PRIu64 "\n"
	    "# HELP rezuscloud_runner_steps Remote steps in progress (a job out).\n"
	    "# TYPE rezuscloud_runner_steps gauge\n"
	    "rezuscloud_runner_steps %" PRIu64 "\n",
	    r.jobs, r.events, r.events_dropped, r.steps);
	if (r.wait_bounds != NULL) {
		family(o, "rezuscloud_runner_claim_wait_seconds", "histogram",
		       "Time from a step's job publication to a runner's claim of it.");
		put_hist(o, "rezuscloud_runner_claim_wait_seconds", "", r.wait_bounds,
		         r.wait_buckets, r.wait_hist, r.wait_count, r.wait_seconds);
	}
}

char *rz_metrics_render(rz_metrics_t *m)
{
	struct out o = { 0 };

	render_requests(m, &o);
	render_gauges(m, &o);
	render_fleet(m, &o);
	render_etcd(m, &o);
	render_probes(m, &o);
	render_runners(m, &o);
	render_runs(m, &o);
	render_workers(m, &o);
	render_auth(m, &o);
	render_store(m, &o);
	render_process(&o);
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	return o.p;
}

static void handle_metrics(rz_req_t *req, void *ctx)
{
	char *text = rz_metrics_render(ctx);

	if (text == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
		return;
	}
	rz_reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
	free(text);
}

/* For the OpenAPI document (core/api/openapi.c). */
static const rz_route_doc_t metrics_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getMetrics",
	  .summary = "the Prometheus metrics (docs/metrics.md)",
	  .response = "{\"type\":\"string\"}",
	  .response_type = "text/plain" },
	{ 0 },
};

static const rz_route_t metrics_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/metrics",
	  .fn = handle_metrics,
	  .role = RZ_ROLE_PUBLIC,
	  .doc = metrics_doc },
};

int rz_metrics_routes(rz_metrics_t *m, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(metrics_routes), m, err);
}
