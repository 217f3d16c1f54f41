/* core/api/watch.c - watch streams: replay, synthetic ADDED, live fan-out, heartbeats; a label
 * change that moves an object into or out of a selector is seen as ADDED or DELETED. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/base/log.h"
#include "core/api/watch.h"

enum format { FMT_SSE, FMT_NDJSON, FMT_JSON };

struct watcher {
	rz_watch_hub_t *hub;
	rz_req_t *req;
	const rz_kind_t *kind;
	char *tenant;
	rz_selector_t *labels, *fields;
	enum format format;
	bool bookmarks;
	struct watcher *prev, *next;
};

struct rz_watch_hub {
	struct event_base *base;
	rz_store_t *store;
	rz_bus_t *bus;
	uint64_t sub;
	struct event *tick;
	struct watcher *list;
	size_t count;
};

/* A growing text buffer; on allocation failure it stays as it was and marks itself. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom) {
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;
		while (cap < b->len + n + 1) {
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (p == NULL) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sbuf_str(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

/* Append one event in the watcher's format. object is compact JSON text. */
static void format_event(struct sbuf *b, enum format f, const char *type, int64_t id,
                         const char *object)
{
	char head[96];

	if (f == FMT_SSE) {
		snprintf(head, sizeof(head), "event: %s\nid: %" PRId64 "\ndata: ", type, id);
		sbuf_str(b, head);
	}
	sbuf_str(b, "{\"type\":\"");
	sbuf_str(b, type);
	sbuf_str(b, "\",\"object\":");
	sbuf_str(b, object);
	sbuf_str(b, f == FMT_SSE ? "}\n\n" : "}\n");
}

static bool matches(const struct watcher *w, const rz_kind_t *kind, const char *tenant,
                    const json_t *obj)
{
	if (kind != w->kind) {
		return false;
	}
	if (w->tenant != NULL && strcmp(tenant, w->tenant) != 0) {
		return false;
	}
	if (w->labels != NULL &&
	    !rz_selector_match(w->labels,
	                       json_object_get(json_object_get(obj, "metadata"), "labels"))) {
		return false;
	}
	return w->fields == NULL || rz_selector_match_fields(w->fields, obj);
}

/* What the watcher sees of ev: its type, or, for a MODIFIED that moved the object into or
 * out of the watcher's label selector, ADDED or DELETED (as Kubernetes watches do); NULL
 * when it sees nothing. */
static const char *seen_as(const struct watcher *w, const rz_event_t *ev)
{
	bool now = matches(w, ev->kind, ev->tenant, ev->object), was;

	if (ev->type != RZ_EV_MODIFIED || w->labels == NULL || ev->prev_labels == NULL ||
	    ev->kind != w->kind || (w->tenant != NULL && strcmp(ev->tenant, w->tenant) != 0)) {
		return now ? rz_event_type_name(ev->type) : NULL;
	}
	was = rz_selector_match(w->labels, ev->prev_labels) &&
	      (w->fields == NULL || rz_selector_match_fields(w->fields, ev->object));
	if (now) {
		return was ? "MODIFIED" : "ADDED";
	}
	return was ? "DELETED" : NULL;
}

/* ------------------------------------------------------------------ watcher lifetime */

static void watcher_free(struct watcher *w)
{
	rz_selector_free(w->labels);
	rz_selector_free(w->fields);
	free(w->tenant);
	free(w);
}

/* Unlink, end the HTTP stream, free. */
static void watcher_end(struct watcher *w)
{
	rz_watch_hub_t *hub = w->hub;

	if (w->prev != NULL) {
		w->prev->next = w->next;
	} else {
		hub->list = w->next;
	}
	if (w->next != NULL) {
		w->next->prev = w->prev;
	}
	hub->count--;
	rz_req_on_close(w->req, NULL, NULL);
	rz_reply_end(w->req);
	watcher_free(w);
}

static void on_client_gone(rz_req_t *req, void *arg)
{
	watcher_end(arg);
}

/* Write text to the stream; a watcher whose client is gone or too slow is ended. */
static bool watcher_send(struct watcher *w, const char *text, size_t len)
{
	int rc = rz_reply_write(w->req, text, len);

	if (rc < 0) {
		watcher_end(w);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------ fan-out */

static void on_event(const rz_event_t *ev, void *arg)
{
	rz_watch_hub_t *hub = arg;
	struct watcher *w = hub->list;
	struct sbuf b[3][3] = { { { 0 } } }; /* per format, per type seen: formatted once */

	while (w != NULL) {
		struct watcher *next = w->next;
		const char *type = seen_as(w, ev);
		if (type != NULL) {
			int t = type[0] == 'A' ? 0 : type[0] == 'M' ? 1 : 2;
			struct sbuf *fb = &b[w->format][t];
			if (fb->len == 0) {
				format_event(fb, w->format, type, ev->rv, ev->json);
			}
			if (!fb->oom) {
				watcher_send(w, fb->p, fb->len);
			}
		}
		w = next;
	}
	for (int i = 0; i < 3; i++) {
		for (int t = 0; t < 3; t++) {
			free(b[i][t].p);
		}
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	rz_watch_hub_t *hub = arg;
	struct watcher *w = hub->list;
	int64_t rv = rz_store_revision(hub->store);

	while (w != NULL) {
		struct watcher *next = w->next;
		struct sbuf b = { 0 };
		if (w->bookmarks) {
			char obj[256];
			snprintf(obj, sizeof(obj),
			         "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
			         "{\"resourceVersion\":\"%" PRId64 "\"}}",
			         w->kind->kind, RZ_API_VERSION, rv);
			format_event(&b, w->format, "BOOKMARK", rv, obj);
		} else {
			sbuf_str(&b, w->format == FMT_SSE ? ": heartbeat\n\n" : "\n");
		}
		if (!b.oom) {
			watcher_send(w, b.p, b.len);
		}
		free(b.p);
		w = next;
	}
}

/* ------------------------------------------------------------------ start */

static enum format pick_format(const rz_req_t *req, const char **ctype)
{
	const char *accept = rz_req_header(req, "Accept");

	if (accept != NULL && strstr(accept, "application/x-ndjson") != NULL) {
		*ctype = "application/x-ndjson";
		return FMT_NDJSON;
	}
	if (accept != NULL && strstr(accept, "application/json") != NULL &&
	    strstr(accept, "text/event-stream") == NULL) {
		*ctype = "application/json";
		return FMT_JSON;
	}
	*ctype = "text/event-stream";
	return FMT_SSE;
}

struct replay {
	struct watcher *w;
	struct sbuf *b;
};

static int replay_one(const rz_event_t *ev, void *arg)
{
	struct replay *r = arg;

	const char *type = seen_as(r->w, ev);

	if (type != NULL) {
		format_event(r->b, r->w->format, type, ev->rv, ev->json);
	}
	return r->b->oom ? -ENOMEM : 0;
}

/* The current objects as ADDED events, all stamped with the list revision so that a
 * client resuming from any of them sees every later change. */
static int initial_list(rz_watch_hub_t *hub, struct watcher *w, struct sbuf *b, rz_err_t *err)
{
	rz_list_opts_t o = { .tenant = w->tenant, .labels = w->labels, .fields = w->fields };
	int64_t rv = rz_store_revision(hub->store);
	json_t *items = NULL, *obj;
	bool more;
	size_t i;
	int rc = rz_store_list(hub->store, w->kind, &o, &items, &more, err);

	json_array_foreach(items, i, obj)
	{
		char *text = json_dumps(obj, JSON_COMPACT);
		if (text == NULL) {
			b->oom = true;
			break;
		}
		format_event(b, w->format, "ADDED", rv, text);
		free(text);
	}
	json_decref(items);
	return rc;
}

static void expired(struct sbuf *b, enum format f, int64_t rv, const char *msg)
{
	json_t *st = rz_status_new(410, "Expired", msg);
	char *text = json_dumps(st, JSON_COMPACT);

	format_event(b, f, "ERROR", rv, text ? text : "{}");
	free(text);
	json_decref(st);
}

void rz_watch_start(rz_watch_hub_t *hub, rz_req_t *req, rz_watch_opts_t *o)
{
	struct watcher *w = calloc(1, sizeof(*w));
	struct sbuf b = { 0 };
	rz_err_t err = { 0 };
	const char *ctype;
	int rc;

	if (w == NULL || (o->tenant != NULL && (w->tenant = strdup(o->tenant)) == NULL)) {
		free(w);
		rz_selector_free(o->labels);
		rz_selector_free(o->fields);
		rz_reply_error(req, 500, NULL, "out of memory");
		return;
	}
	*w = (struct watcher){ hub,
		               req,
		               o->kind,
		               w->tenant,
		               o->labels,
		               o->fields,
		               pick_format(req, &ctype),
		               o->bookmarks,
		               NULL,
		               NULL };
	o->labels = o->fields = NULL;
	if (o->since > rz_store_revision(hub->store)) {
		rc = rz_err_set(&err, RZ_EGONE,
		                "too large resource version: %" PRId64 " (current %" PRId64 ")",
		                o->since, rz_store_revision(hub->store));
	} else if (o->since >= 0) {
		struct replay r = { w, &b };
		rc = rz_store_replay(hub->store, o->since, replay_one, &r, &err);
	} else {
		rc = initial_list(hub, w, &b, &err);
	}
	if (rc == RZ_EGONE) {
		expired(&b, w->format, rz_store_revision(hub->store), err.msg);
	} else if (rc != 0 || b.oom) {
		free(b.p);
		watcher_free(w);
		rz_reply_error(req, 500, NULL, "watch: %s", b.oom ? "out of memory" : err.msg);
		return;
	}
	if (rz_reply_start(req, 200, ctype) < 0 ||
	    (b.len > 0 && rz_reply_write(req, b.p, b.len) < 0)) {
		rc = RZ_EGONE; /* the client is gone: end below */
	}
	free(b.p);
	if (rc == RZ_EGONE) {
		rz_reply_end(req);
		watcher_free(w);
		return;
	}
	w->next = hub->list;
	if (hub->list != NULL) {
		hub->list->prev = w;
	}
	hub->list = w;
	hub->count++;
	rz_req_on_close(req, on_client_gone, w);
}

/* ------------------------------------------------------------------ the hub */

int rz_watch_hub_new(rz_watch_hub_t **out, struct event_base *base, rz_store_t *store,
                     rz_bus_t *bus, int heartbeat_ms, rz_err_t *err)
{
	rz_watch_hub_t *hub = calloc(1, sizeof(*hub));
	struct timeval tv = { heartbeat_ms / 1000, (heartbeat_ms % 1000) * 1000 };

	*out = NULL;
	if (hub == NULL) {
		return rz_err_set(err, -ENOMEM, "watch: out of memory");
	}
	hub->base = base;
	hub->store = store;
	hub->bus = bus;
	hub->sub = rz_bus_subscribe(bus, on_event, hub);
	hub->tick = event_new(base, -1, EV_PERSIST, on_tick, hub);
	if (hub->sub == 0 || hub->tick == NULL || event_add(hub->tick, &tv) < 0) {
		rz_watch_hub_free(hub);
		return rz_err_set(err, -ENOMEM, "watch: out of memory");
	}
	*out = hub;
	return 0;
}

void rz_watch_hub_close_all(rz_watch_hub_t *hub)
{
	while (hub->list != NULL) {
		watcher_end(hub->list);
	}
}

size_t rz_watch_hub_count(const rz_watch_hub_t *hub)
{
	return hub->count;
}

void rz_watch_hub_free(rz_watch_hub_t *hub)
{
	if (hub == NULL) {
		return;
	}
	rz_watch_hub_close_all(hub);
	if (hub->sub != 0) {
		rz_bus_unsubscribe(hub->bus, hub->sub);
	}
	if (hub->tick != NULL) {
		event_free(hub->tick);
	}
	free(hub);
}
