/* core/api/metrics.c - request counters, a latency histogram and gauges for Prometheus. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/kinds.h"
#include "core/api/metrics.h"
#include "core/base/version.h"

static const double buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	                          0.05,   0.1,   0.25,   0.5,   1,    2.5 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

struct series {
	char *route, *method;
	int code;
	uint64_t count;
};

struct rz_metrics {
	rz_metrics_gauges_t gauges;
	struct series *series;
	size_t n, cap;
	uint64_t hist[NBUCKETS + 1]; /* last: +Inf */
	uint64_t hist_count;
	double hist_sum;
	rz_route_t route;
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
		free(m->series[i].method);
	}
	free(m->series);
	free(m);
}

static struct series *series_for(rz_metrics_t *m, const char *route, const char *method, int code)
{
	struct series *s;

	for (size_t i = 0; i < m->n; i++) {
		s = &m->series[i];
		if (s->code == code && strcmp(s->route, route) == 0 &&
		    strcmp(s->method, method) == 0) {
			return s;
		}
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		struct series *grown = realloc(m->series, cap * sizeof(*grown));
		if (grown == NULL) {
			return NULL;
		}
		m->series = grown;
		m->cap = cap;
	}
	s = &m->series[m->n];
	*s = (struct series){ strdup(route), strdup(method), code, 0 };
	if (s->route == NULL || s->method == NULL) {
		free(s->route);
		free(s->method);
		return NULL;
	}
	m->n++;
	return s;
}

void rz_metrics_observe(rz_metrics_t *m, const char *route, const char *method, int code,
                        double seconds, bool streamed)
{
	struct series *s = series_for(m, route ? route : "unmatched", method, code);
	size_t b = 0;

	if (s != NULL) {
		s->count++;
	}
	if (streamed) {
		return;
	}
	while (b < NBUCKETS && seconds > buckets[b]) {
		b++;
	}
	m->hist[b]++;
	m->hist_count++;
	m->hist_sum += seconds;
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

static void render_requests(rz_metrics_t *m, struct out *o)
{
	char r[512], me[64];
	uint64_t cum = 0;

	put(o, "# HELP rezuscloud_http_requests_total HTTP requests by route, method and code.\n"
	       "# TYPE rezuscloud_http_requests_total counter\n");
	for (size_t i = 0; i < m->n; i++) {
		struct series *s = &m->series[i];
		put(o,
		    "rezuscloud_http_requests_total{route=\"%s\",method=\"%s\",code=\"%d\"} "
		    "%" PRIu64 "\n",
		    esc(s->route, r, sizeof(r)), esc(s->method, me, sizeof(me)), s->code, s->count);
	}
	put(o, "# HELP rezuscloud_http_request_duration_seconds Time to answer a request "
	       "(streams excluded).\n"
	       "# TYPE rezuscloud_http_request_duration_seconds histogram\n");
	for (size_t b = 0; b < NBUCKETS; b++) {
		cum += m->hist[b];
		put(o, "rezuscloud_http_request_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
		    buckets[b], cum);
	}
	put(o,
	    "rezuscloud_http_request_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
	    "rezuscloud_http_request_duration_seconds_sum %.6f\n"
	    "rezuscloud_http_request_duration_seconds_count %" PRIu64 "\n",
	    m->hist_count, m->hist_sum, m->hist_count);
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
	rz_store_count_by(m->gauges.store, rz_kind_by_name("Tenant"), "$.status.phase", put_group,
	                  &t, &err);
	put(o, "# HELP rezuscloud_machines Machines by observed stage.\n"
	       "# TYPE rezuscloud_machines gauge\n");
	rz_store_count_by(m->gauges.store, rz_kind_by_name("Machine"), "$.status.stage", put_group,
	                  &mc, &err);
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

char *rz_metrics_render(rz_metrics_t *m)
{
	struct out o = { 0 };

	render_requests(m, &o);
	render_gauges(m, &o);
	render_fleet(m, &o);
	render_probes(m, &o);
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

int rz_metrics_routes(rz_metrics_t *m, rz_http_t *http, rz_err_t *err)
{
	m->route = (rz_route_t){ .methods = RZ_M_GET,
		                 .pattern = "/metrics",
		                 .fn = handle_metrics,
		                 .ctx = m,
		                 .role = RZ_ROLE_PUBLIC };
	return rz_http_add_routes(http, &m->route, 1, err);
}
