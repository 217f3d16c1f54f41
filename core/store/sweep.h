/* core/store/sweep.h - a walk over every object of a kind, one page per turn of the loop. */
#ifndef RZ_STORE_SWEEP_H
#define RZ_STORE_SWEEP_H

#include <stdbool.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/store/store.h"

/* Start-up and resync visit every tenant of a fleet. Read whole (rz_store_list_all), ten
 * thousand of them hold the loop for most of a second, before the daemon is ready or in the
 * middle of serving. A sweep reads RZ_SCAN_PAGE objects per turn of the loop instead, in
 * key order, each object as it is when its page is read, so requests are served between
 * pages. */
typedef struct rz_sweep rz_sweep_t;

/* Called with each object (borrowed, parsed from its stored text). */
typedef void (*rz_sweep_fn)(void *arg, json_t *obj);
/* Called once the last page is done (may be NULL). */
typedef void (*rz_sweep_done_fn)(void *arg);

/* A sweep over kind (by name) on base; started by rz_sweep_start. NULL when out of memory. */
rz_sweep_t *rz_sweep_new(struct event_base *base, rz_store_t *st, const char *kind, rz_sweep_fn fn,
                         rz_sweep_done_fn done, void *arg);

/* Start from the first object on the next turn of the loop. Asked while a sweep is under way,
 * it finishes that one and then starts again once, from the first object: what changed
 * behind it is seen. */
void rz_sweep_start(rz_sweep_t *s);

/* A sweep under way (or waiting for its next page). */
bool rz_sweep_busy(const rz_sweep_t *s);

/* Objects the sweeps of s have visited, since it was made. */
unsigned long long rz_sweep_visited(const rz_sweep_t *s);

/* Stops and frees (NULL is fine); nothing is called after. */
void rz_sweep_free(rz_sweep_t *s);

#endif
