/*
 * core/remote/roster.h - the Runners the daemon knows (docs/runners.md, "The Runner kind",
 * "Labels"): one per runner, from its heartbeats and its Runner object. Ready while
 * heartbeats come, Stopping after a goodbye, Offline once runners.heartbeat_timeout passed
 * after it, Lost when none came for runners.heartbeat_timeout. What it says (its heartbeat)
 * and what it is granted (its Runner's spec.labels; the labels of its first heartbeat when
 * unset) make what it serves. Its Runner's status is written when what it shows changes, and
 * for lastHeartbeat at most every third of the timeout, never per heartbeat. No NATS here:
 * core/remote/runners.c hands it the heartbeats. Loop thread.
 */
#ifndef RZ_ROSTER_H
#define RZ_ROSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/config.h"
#include "core/store/store.h"

#define RZ_ROSTER_MAX 1024 /* Runners kept; heartbeats of more are dropped */

typedef enum rz_runner_phase {
	RZ_RUNNER_READY,
	RZ_RUNNER_STOPPING,
	RZ_RUNNER_LOST,
	RZ_RUNNER_OFFLINE,
} rz_runner_phase_t;

typedef struct rz_roster_runner {
	char name[64];
	json_t *hb;         /* the last heartbeat, checked */
	int64_t seen_ms;    /* when it came (the daemon's clock) */
	int64_t written_ms; /* when lastHeartbeat was last written */
	rz_runner_phase_t phase;
	bool in_store;
	json_t *granted; /* its Runner's spec.labels */
	json_t *serving; /* the labels of its heartbeat that are granted: what it serves by */
	bool pin;        /* granted came from a heartbeat (trust on first use): to write */
} rz_roster_runner_t;

typedef struct rz_roster {
	rz_store_t *store;
	const rz_config_t *cfg;
	rz_roster_runner_t *v; /* RZ_ROSTER_MAX */
	size_t n;
	uint64_t heartbeats, dropped; /* taken; dropped as invalid or beyond RZ_ROSTER_MAX */
} rz_roster_t;

/* An empty roster writing Runners into store. -ENOMEM. */
int rz_roster_init(rz_roster_t *ro, rz_store_t *store, const rz_config_t *cfg);
void rz_roster_free(rz_roster_t *ro);

/* The Runners a previous daemon left: known again, as seen now (a runner that is alive
 * heartbeats within the timeout; one that is not becomes Lost after it). */
void rz_roster_load(rz_roster_t *ro, int64_t now);

/* One heartbeat that came on subject: checked (rz_heartbeat_parse), its runner's grant read
 * again from its Runner, the Runner written when it shows something new. The runner, or
 * NULL when the heartbeat was dropped (logged and counted). */
rz_roster_runner_t *rz_roster_heartbeat(rz_roster_t *ro, const char *subject, const char *data,
                                        size_t len, int64_t now);

/* The runner of that name, or NULL. */
rz_roster_runner_t *rz_roster_find(rz_roster_t *ro, const char *name);

/* Whether x is Ready and serves every label of selector (NULL: any). */
bool rz_roster_serves(const rz_roster_runner_t *x, const json_t *selector);

/* Whether a Ready runner serves selector. */
bool rz_roster_served(const rz_roster_t *ro, const json_t *selector);

/* The slots (runner.concurrency) of the Ready runners that serve selector. */
size_t rz_roster_capacity(const rz_roster_t *ro, const json_t *selector);

/* Every runner taken as seen now at the latest (NATS was away: no heartbeat could come). */
void rz_roster_seen_all(rz_roster_t *ro, int64_t now);

/* The runners whose heartbeats stopped for runners.heartbeat_timeout: Offline (after a
 * goodbye) or Lost (logged as a warning), their Runners written, and gone(arg, name) for
 * each (the steps it held are lost). */
void rz_roster_sweep(rz_roster_t *ro, int64_t now, void (*gone)(void *arg, const char *name),
                     void *arg);

/* Runners by phase. */
void rz_roster_count(const rz_roster_t *ro, uint64_t counts[RZ_RUNNER_OFFLINE + 1]);

#endif /* RZ_ROSTER_H */
