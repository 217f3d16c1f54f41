/*
 * core/api/metrics.h - Prometheus metrics (text exposition format 0.0.4) at /metrics.
 */
#ifndef RZ_METRICS_H
#define RZ_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/errors.h"
#include "core/http/http.h"
#include "core/store/store.h"

typedef struct rz_metrics rz_metrics_t;

/* The observer's probes, by outcome: ok, failed, timeout, error. */
typedef struct rz_metrics_probes {
	uint64_t count[4];
	double seconds[4];
	uint64_t running, queued, observations, writes;
} rz_metrics_probes_t;

/* Gauges read when /metrics is scraped. */
typedef struct rz_metrics_gauges {
	size_t (*watches)(void *ctx);                        /* open watch streams */
	int64_t (*objects)(void *ctx);                       /* objects in the store */
	int64_t (*revision)(void *ctx);                      /* the store's revision */
	void (*probes)(void *ctx, rz_metrics_probes_t *out); /* NULL: no observer */
	rz_store_t *store; /* tenants by phase, machines by stage; NULL: none */
	void *ctx;
} rz_metrics_gauges_t;

/* Caller owns *out; rz_metrics_free(). gauges is copied. */
int rz_metrics_new(rz_metrics_t **out, const rz_metrics_gauges_t *gauges, rz_err_t *err);
void rz_metrics_free(rz_metrics_t *m);

/* Count one finished request. route is the matched route pattern (NULL = none matched);
 * streamed replies are counted but kept out of the latency histogram. */
void rz_metrics_observe(rz_metrics_t *m, const char *route, const char *method, int code,
                        double seconds, bool streamed);

/* Register GET /metrics on http; m must outlive the server. */
int rz_metrics_routes(rz_metrics_t *m, rz_http_t *http, rz_err_t *err);

/* The exposition text (caller frees). */
char *rz_metrics_render(rz_metrics_t *m);

#endif /* RZ_METRICS_H */
