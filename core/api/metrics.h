/*
 * core/api/metrics.h - Prometheus metrics (text exposition format 0.0.4) at /metrics.
 *
 * The request counters and latency histograms are kept here (fed by the HTTP observer);
 * everything else is read from the module that owns it when /metrics is scraped. The names
 * follow Prometheus' conventions (base units, _total for counters, _seconds, _bytes);
 * docs/metrics.md lists them.
 */
#ifndef RZ_METRICS_H
#define RZ_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/auth/auth.h"
#include "core/auth/session.h"
#include "core/base/errors.h"
#include "core/base/workers.h"
#include "core/http/http.h"
#include "core/store/store.h"

typedef struct rz_metrics rz_metrics_t;

/* Request series kept: (route pattern, method, code) triples, and route patterns with a
 * latency histogram. Methods the router does not know count as "other". A request beyond
 * them is counted in no series (rezuscloud_http_requests_unrecorded_total says how many). */
#define RZ_METRICS_SERIES_MAX 4096
#define RZ_METRICS_ROUTES_MAX 512

/* The observer's probes, by outcome: ok, failed, timeout, error. */
typedef struct rz_metrics_probes {
	uint64_t count[4];
	double seconds[4];
	uint64_t running, queued, observations, writes;
} rz_metrics_probes_t;

/* The engine's runs (core/engine/engine.h rz_engine_stats, copied by the daemon: the API
 * does not include the engine). Label values and bucket bounds are borrowed, static. */
#define RZ_METRICS_RUN_OPS     3  /* plan, apply, destroy */
#define RZ_METRICS_RUN_PHASES  4  /* Succeeded, Failed, Canceled, Interrupted */
#define RZ_METRICS_RUN_STEPS   4  /* init, plan, show, apply */
#define RZ_METRICS_RUN_BUCKETS 12 /* upper bounds of a step's duration */
typedef struct rz_metrics_runs {
	const char *const *ops, *const *phases, *const *steps;
	const double *bounds; /* seconds */
	uint64_t runs[RZ_METRICS_RUN_OPS][RZ_METRICS_RUN_PHASES];
	uint64_t step_hist[RZ_METRICS_RUN_STEPS][RZ_METRICS_RUN_BUCKETS + 1]; /* not cumulative */
	uint64_t step_count[RZ_METRICS_RUN_STEPS];
	double step_seconds[RZ_METRICS_RUN_STEPS];
	uint64_t queued, running, workers, processes;
	uint64_t tenants; /* the engine's tenant records */
} rz_metrics_runs_t;

/* WAL checkpoints (how many ran, how long they took in all, how many were RESTARTs) and the
 * group commit's WAL syncs (how many, and the commits they made durable). */
typedef struct rz_metrics_checkpoints {
	uint64_t count;
	double seconds;
	uint64_t restarts;
	uint64_t syncs, synced_commits;
} rz_metrics_checkpoints_t;

/* The remote runners (core/remote/runners.h, copied by the daemon). */
#define RZ_METRICS_WAIT_BUCKETS 13 /* RZ_RUNNERS_WAIT_BUCKETS */
typedef struct rz_metrics_runners {
	uint64_t ready, stopping, lost, offline; /* Runners by phase */
	uint64_t heartbeats, dropped;            /* heartbeats taken, and dropped as invalid */
	bool connected;                          /* to NATS now */
	uint64_t jobs, events, events_dropped;   /* jobs published; events handled, dropped */
	uint64_t steps;                          /* remote steps in progress */
	const double *wait_bounds;               /* claim waits' bucket bounds (s), or NULL */
	size_t wait_buckets;                     /* how many */
	uint64_t wait_hist[RZ_METRICS_WAIT_BUCKETS + 1], wait_count; /* (the last: above all) */
	double wait_seconds;
} rz_metrics_runners_t;

/* What /metrics reads when scraped. Every member may be NULL: its series are left out. */
typedef struct rz_metrics_gauges {
	size_t (*watches)(void *ctx);                        /* open watch streams */
	int64_t (*objects)(void *ctx);                       /* objects in the store */
	int64_t (*revision)(void *ctx);                      /* the store's revision */
	void (*probes)(void *ctx, rz_metrics_probes_t *out); /* the observer */
	void (*runs)(void *ctx, rz_metrics_runs_t *out);     /* the engine */
	/* The store's WAL checkpoints and syncs (its checkpoint and sync threads). */
	void (*checkpoints)(void *ctx, rz_metrics_checkpoints_t *out);
	void (*runners)(void *ctx, rz_metrics_runners_t *out); /* the remote runners */
	rz_store_t *store;     /* tenants by phase, machines by stage, the event log */
	rz_auth_t *auth;       /* login failures, the limiter's 429s */
	rz_session_t *session; /* 429s of the password-check gate */
	rz_workers_t *workers; /* the worker pool */
	const char *db_path;   /* the database file (its -wal beside it) */
	void *ctx;
} rz_metrics_gauges_t;

/* Caller owns *out; rz_metrics_free(). gauges is copied; what it points to is borrowed and
 * must outlive m. */
int rz_metrics_new(rz_metrics_t **out, const rz_metrics_gauges_t *gauges, rz_err_t *err);
void rz_metrics_free(rz_metrics_t *m);

/* Count one finished request. route is the matched route pattern (NULL = none matched);
 * streamed replies are counted but kept out of the latency histogram. */
void rz_metrics_observe(rz_metrics_t *m, const char *route, const char *method, int code,
                        double seconds, bool streamed);

/* Register GET /metrics on http; m must outlive the server. */
int rz_metrics_routes(rz_metrics_t *m, rz_http_t *http, rz_err_t *err);

/* The exposition text. Caller owns the result; release with free(). NULL when out of
 * memory. */
char *rz_metrics_render(rz_metrics_t *m);

#endif /* RZ_METRICS_H */
