/*
 * core/remote/runners.h - the daemon's side of the remote runners (docs/runners.md): with
 * runners.nats_url set, a NATS connection (retried until it works; the daemon starts
 * without it), the installation's JetStream streams REZUS_<I>_JOBS and REZUS_<I>_EVENTS
 * (core/remote/nats.h) created when absent, the
 * runners' heartbeats handed to the roster of Runners (core/remote/roster.h), and the
 * executor that dispatches the engine's steps as jobs and feeds their events back. Loop
 * thread.
 */
#ifndef RZ_RUNNERS_H
#define RZ_RUNNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/config.h"
#include "core/base/errors.h"
#include "core/engine/executor.h"
#include "core/base/workers.h"
#include "core/http/http.h"
#include "core/store/store.h"

struct event_base;

#define RZ_RUNNERS_PENDING 10000 /* heartbeats waiting in the client at most */
#define RZ_RUNNERS_TICK_MS                                                                         \
	20                              /* how often waiting heartbeats and step events are        \
	                                   read (a remote step's end waits for it) */
#define RZ_RUNNERS_PER_TICK        1000 /* heartbeats read per tick at most */
#define RZ_RUNNERS_RETRY_MS        5000 /* a new connection after NATS closed one; the streams again */
#define RZ_RUNNERS_STEPS           65536 /* remote steps in progress at most (one per run) */
#define RZ_RUNNERS_EVENTS_DURABLE  "rezus-daemon" /* its consumer of REZUS_<I>_EVENTS */
#define RZ_RUNNERS_PUBLISH_WAIT_MS 2000 /* a job's store acknowledged within this, or again */
#define RZ_RUNNERS_CLAIM_TRIES     3    /* publications of a job nobody claims, at most */

typedef struct rz_runners rz_runners_t;

/* Bounds (s) of the histogram of claim waits: from a job's publication to its claim. */
#define RZ_RUNNERS_WAIT_BUCKETS 13
extern const double rz_runners_wait_buckets[RZ_RUNNERS_WAIT_BUCKETS];

typedef struct rz_runners_stats {
	bool enabled;   /* runners.nats_url is set */
	bool connected; /* to NATS now */
	bool streams;   /* both streams are known to exist */
	uint64_t ready, stopping, lost, offline;
	uint64_t heartbeats, dropped;
	uint64_t jobs, events, events_dropped; /* published; handled; refused or of no step */
	uint64_t steps;                        /* remote steps in progress */
	/* claim waits: counts per bucket (the last above every bound), how many, their sum */
	uint64_t wait_hist[RZ_RUNNERS_WAIT_BUCKETS + 1], wait_count;
	double wait_seconds;
} rz_runners_stats_t;

/* Start (or, without runners.nats_url, do nothing but answer stats). Caller owns *out. */
/* daemon_url: the daemon as runners reach it, in every job (runners.public_url, or the
 * listen address); installation: its name on NATS (core/remote/nats.h, rz_nats_names). */
int rz_runners_new(rz_runners_t **out, struct event_base *base, const rz_config_t *cfg,
                   rz_store_t *store, rz_workers_t *workers, const char *daemon_url,
                   const char *installation, rz_err_t *err);

/* GET /api/v1/runners/{name}/assignment for runner tokens: the installation's name on NATS,
 * which a runner without runner.installation asks for at start. r must outlive http. */
int rz_runners_routes(rz_runners_t *r, rz_http_t *http, rz_err_t *err);

void rz_runners_stats(const rz_runners_t *r, rz_runners_stats_t *out);

/* The executor that dispatches steps to the runners (docs/runners.md, "Dispatch"): jobs on
 * rezus.<i>.jobs.<pool>, events from rezus.<i>.events.> (a durable consumer, acked after
 * handling), cancels on rezus.<i>.runners.<name>.cancel. Valid while r is. */
const rz_executor_t *rz_runners_executor(rz_runners_t *r);

/* fn(arg) when the runners can take more steps than before (a runner became Ready). */
void rz_runners_on_capacity(rz_runners_t *r, void (*fn)(void *arg), void *arg);

/* One line for /readyz?verbose ("connected to nats://... as installation 3f9c01ab, streams
 * REZUS_3F9C01AB_JOBS and ..._EVENTS present; ..."); false when NATS is not configured. */
bool rz_runners_describe(const rz_runners_t *r, char *buf, size_t size);

/* Closes the connection. After the worker pool is freed. Accepts NULL. */
void rz_runners_free(rz_runners_t *r);

#endif /* RZ_RUNNERS_H */
