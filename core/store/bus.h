/*
 * core/store/bus.h - change notifications inside the daemon (SPEC §9).
 *
 * The store publishes one event per committed change, after the commit, on the loop
 * thread; watches, the run engine and the WebUI subscribe. This is the in-process
 * implementation of the bus interface.
 */
#ifndef RZ_BUS_H
#define RZ_BUS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/model/kinds.h"

typedef enum rz_event_type {
	RZ_EV_ADDED = 1,
	RZ_EV_MODIFIED,
	RZ_EV_DELETED,
} rz_event_type_t;

typedef struct rz_event {
	int64_t rv; /* the revision this change got */
	rz_event_type_t type;
	const rz_kind_t *kind;
	const char *tenant; /* "" for global kinds */
	const char *name;
	bool spec_changed;         /* created, deleted, spec (generation) or deletion changed;
	                              false for status, label, annotation, finalizer writes */
	const json_t *object;      /* the object after the change (before, for DELETED) */
	const char *json;          /* object serialized compactly */
	const json_t *prev_labels; /* MODIFIED that changed the labels: the labels before
	                              ({} when there were none); NULL otherwise */
} rz_event_t;

/* All pointers in ev are borrowed — valid during the call only. */
typedef void (*rz_bus_fn)(const rz_event_t *ev, void *arg);

typedef struct rz_bus rz_bus_t;

/* Caller owns *out; rz_bus_free(). 0 or -ENOMEM. */
int rz_bus_new(rz_bus_t **out);

/* Subscribe; the returned id (> 0) unsubscribes. 0 on out of memory. */
uint64_t rz_bus_subscribe(rz_bus_t *bus, rz_bus_fn fn, void *arg);

/* Subscribe ahead of every subscriber rz_bus_subscribe added (after earlier ones of its
 * own): for what the others read while they handle the same event (who may see it). Not
 * from inside a callback: 0 then, as on out of memory. */
uint64_t rz_bus_subscribe_first(rz_bus_t *bus, rz_bus_fn fn, void *arg);

/* Remove a subscription; safe from inside a callback (also for other subscriptions). */
void rz_bus_unsubscribe(rz_bus_t *bus, uint64_t id);

/* Deliver ev to every subscriber, in subscription order. */
void rz_bus_publish(rz_bus_t *bus, const rz_event_t *ev);

/* Number of subscribers. */
size_t rz_bus_subscribers(const rz_bus_t *bus);

/* Accepts NULL. */
void rz_bus_free(rz_bus_t *bus);

/* "ADDED", "MODIFIED", "DELETED". */
const char *rz_event_type_name(rz_event_type_t type);

#endif /* RZ_BUS_H */
