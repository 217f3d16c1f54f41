/* core/store/bus.c - in-process change notifications. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/bus.h"

struct sub {
	uint64_t id; /* 0 once unsubscribed during a publish */
	rz_bus_fn fn;
	void *arg;
};

struct rz_bus {
	struct sub *subs;
	size_t n, cap;
	uint64_t next_id;
	size_t first;   /* subscribers added with rz_bus_subscribe_first, at the front */
	int publishing; /* depth; removals are compacted when it drops to 0 */
};

int rz_bus_new(rz_bus_t **out)
{
	*out = calloc(1, sizeof(**out));
	return *out == NULL ? -ENOMEM : 0;
}

uint64_t rz_bus_subscribe(rz_bus_t *bus, rz_bus_fn fn, void *arg)
{
	if (bus->n == bus->cap) {
		size_t cap = bus->cap ? bus->cap * 2 : 16;
		struct sub *subs = realloc(bus->subs, cap * sizeof(*subs));
		if (subs == NULL) {
			return 0;
		}
		bus->subs = subs;
		bus->cap = cap;
	}
	bus->subs[bus->n] = (struct sub){ ++bus->next_id, fn, arg };
	bus->n++;
	return bus->next_id;
}

uint64_t rz_bus_subscribe_first(rz_bus_t *bus, rz_bus_fn fn, void *arg)
{
	uint64_t id;

	if (bus->publishing > 0 || (id = rz_bus_subscribe(bus, fn, arg)) == 0) {
		return 0;
	}
	memmove(&bus->subs[bus->first + 1], &bus->subs[bus->first],
	        (bus->n - 1 - bus->first) * sizeof(bus->subs[0]));
	bus->subs[bus->first++] = (struct sub){ id, fn, arg };
	return id;
}

static void compact(rz_bus_t *bus)
{
	size_t j = 0, first = 0;

	for (size_t i = 0; i < bus->n; i++) {
		if (bus->subs[i].id != 0) {
			first += i < bus->first;
			bus->subs[j++] = bus->subs[i];
		}
	}
	bus->n = j;
	bus->first = first;
}

void rz_bus_unsubscribe(rz_bus_t *bus, uint64_t id)
{
	for (size_t i = 0; i < bus->n; i++) {
		if (bus->subs[i].id == id) {
			bus->subs[i].id = 0;
			break;
		}
	}
	if (bus->publishing == 0) {
		compact(bus);
	}
}

void rz_bus_publish(rz_bus_t *bus, const rz_event_t *ev)
{
	size_t n = bus->n; /* subscribers added during delivery see the next event */

	bus->publishing++;
	for (size_t i = 0; i < n; i++) {
		if (bus->subs[i].id != 0) {
			bus->subs[i].fn(ev, bus->subs[i].arg);
		}
	}
	if (--bus->publishing == 0) {
		compact(bus);
	}
}

size_t rz_bus_subscribers(const rz_bus_t *bus)
{
	size_t live = 0;

	for (size_t i = 0; i < bus->n; i++) {
		live += bus->subs[i].id != 0;
	}
	return live;
}

void rz_bus_free(rz_bus_t *bus)
{
	if (bus != NULL) {
		free(bus->subs);
		free(bus);
	}
}

const char *rz_event_type_name(rz_event_type_t type)
{
	switch (type) {
	case RZ_EV_ADDED:
		return "ADDED";
	case RZ_EV_MODIFIED:
		return "MODIFIED";
	case RZ_EV_DELETED:
		return "DELETED";
	}
	return "UNKNOWN";
}
