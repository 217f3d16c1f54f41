/*
 * core/base/workers.h - a small thread pool for work that blocks or burns CPU (password
 * hashing, backups, encrypting large blobs), so the event loop never does.
 *
 * work() runs on a pool thread and must touch only its own arg. done() runs afterwards
 * on the loop thread, where it may use every loop-owned structure (the store, requests).
 */
#ifndef RZ_WORKERS_H
#define RZ_WORKERS_H

#include <stddef.h>

#include "core/base/errors.h"

struct event_base;

typedef struct rz_workers rz_workers_t;

typedef void (*rz_work_fn)(void *arg);
/* canceled is 1 when the pool was freed before work() ran; work() was then skipped. */
typedef void (*rz_done_fn)(void *arg, int canceled);

/* Start nthreads (1..64) threads posting completions to base. Caller owns *out;
 * release with rz_workers_free(). */
int rz_workers_new(rz_workers_t **out, struct event_base *base, int nthreads, rz_err_t *err);

/* Queue a job; arg is borrowed by both callbacks until done() returns. 0 or -ENOMEM,
 * -ESHUTDOWN once rz_workers_free() has begun. Call from the loop thread. */
int rz_workers_submit(rz_workers_t *w, rz_work_fn work, rz_done_fn done, void *arg);

/* Jobs submitted whose done() has not yet run. */
size_t rz_workers_pending(const rz_workers_t *w);

/* For /metrics: the pool's threads, how many run a job now, jobs waiting for a thread. */
typedef struct rz_workers_stats {
	size_t threads, busy, queued;
} rz_workers_stats_t;
void rz_workers_stats(rz_workers_t *w, rz_workers_stats_t *out);

/* Cancel queued jobs (their done() runs with canceled=1), wait for running ones, run their
 * done(), join the threads, free. Call from the loop thread. Accepts NULL. */
void rz_workers_free(rz_workers_t *w);

#endif /* RZ_WORKERS_H */
