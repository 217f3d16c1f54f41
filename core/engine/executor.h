/*
 * core/engine/executor.h - where a run's steps run, as the engine sees it: an interface the
 * engine calls instead of starting tofu itself when remote runners are on (docs/runners.md,
 * "Dispatch"). The engine keeps the scheduling (debounce, one run per tenant, fairness,
 * approval, backoff); the executor only runs steps, with the same callbacks as rz_proc
 * (core/base/proc.h). core/remote implements it; the daemon wires the two, which never
 * include each other.
 */
#ifndef RZ_EXECUTOR_H
#define RZ_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"

#define RZ_EXEC_KEY_LEN 32 /* bytes of a claim's event key */

typedef struct rz_exec_step {
	const char *run, *tenant, *step; /* step: init, plan, show or apply */
	const json_t
	    *selector; /* the runnerSelectors of the tenant and its node groups, merged; or NULL */
	int attempt;   /* 1, then more for a job published again */
	/* As rz_proc's: a line of output; once, the step's end. */
	void (*on_line)(void *arg, const char *line, size_t len, bool is_stderr);
	void (*on_exit)(void *arg, int status, bool timed_out, bool canceled);
	/* Once, when the runner holding the step is lost: the run is Interrupted. */
	void (*on_lost)(void *arg, const char *runner);
	void *arg;
	/* Once per step, when its job waits and no runner can take it: no Ready runner serves
	 * its pool, or NATS is not connected (why says which, for the Run's condition). */
	void (*on_waiting)(void *arg, const char *why);
	/* attach with a runner: the event key of its claim (32 bytes), which its events are
	 * authenticated with; NULL otherwise (start: the key comes with claimed). */
	const unsigned char *event_key;
} rz_exec_step_t;

typedef struct rz_executor {
	void *ctx;
	/* Whether steps go to remote runners (runners.nats_url is set). */
	bool (*remote)(void *ctx);
	/* How many steps the Ready runners serving selector (every label of it; NULL: every
	 * Ready runner) take at once now: their concurrency summed; 0 when none is Ready or
	 * none has the labels (runs of that pool wait, Queued, and hold no slot). */
	size_t (*capacity)(void *ctx, const json_t *selector);
	/* Why a run selecting selector cannot be served now (no Ready runner has its labels, or
	 * NATS is not connected: the pool named, as in on_waiting), into why; false when it
	 * can. */
	bool (*unserved)(void *ctx, const json_t *selector, char *why, size_t size);
	/* Publish the step's job; the callbacks follow. Everything in s is copied but arg. */
	int (*start)(void *ctx, const rz_exec_step_t *s, rz_err_t *err);
	/* A restarted daemon takes up a step a previous one dispatched: held by runner (it
	 * claimed it; lost when no heartbeat of it comes within runners.heartbeat_timeout), or,
	 * with runner NULL, its job published again (the first claim wins, a second gets 409).
	 * The callbacks follow as after start. */
	int (*attach)(void *ctx, const rz_exec_step_t *s, const char *runner, rz_err_t *err);
	/* A runner claimed the run's step (the daemon answered it 200), given event_key (32
	 * bytes): only events authenticated with it are the step's. */
	void (*claimed)(void *ctx, const char *run, const char *runner,
	                const unsigned char *event_key);
	/* Ask the runner holding the run's step to kill its tofu (on_exit follows). */
	void (*cancel)(void *ctx, const char *run);
	/* The run ended: no callback for it any more; events of it are dropped. */
	void (*forget)(void *ctx, const char *run);
} rz_executor_t;

#endif /* RZ_EXECUTOR_H */
