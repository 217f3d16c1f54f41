/* core/api/watch.c - watch streams: replay, synthetic ADDED, live fan-out, heartbeats; a label
 * change that moves an object into or out of a selector is seen as ADDED or DELETED.
 *
 * A new watcher first catches up — the current objects (a watch without resourceVersion) and
 * then the event log from that revision on — in pages, one per turn of the loop, written
 * only while the client's unread backlog is below the hub's high-water mark; then it joins
 * the live fan-out. A replay is never held whole in memory, nor queued past the cap. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "core/base/log.h"
#include "core/api/textbuf.h"
#include "core/api/watch.h"

enum format { FMT_SSE, FMT_NDJSON, FMT_JSON };

/* Where a watcher is: sending the current objects, the event log, or live events. */
enum phase { PH_LIST, PH_REPLAY, PH_LIVE };

struct watcher {
	rz_watch_hub_t *hub;
	rz_req_t *req;
	const rz_kind_t *kind;
	char *tenant;
	rz_selector_t *labels, *fields;
	enum format format;
	bool bookmarks;
	rz_watch_render_fn render; /* NULL: objects as stored */
	unsigned render_flags;
	const char *api_version; /* a BOOKMARK's */
	bool (*keep)(void *arg, const char *tenant, const char *name);
	void *keep_arg;
	int (*valid)(void *arg);
	void *valid_arg;
	enum phase phase;
	int64_t cursor;                 /* every change up to this revision is sent (or will be
	                                   by the list); PH_LIST: the list's revision */
	char *after_owner, *after_name; /* PH_LIST: the key of the last object sent */
	struct event *resume;           /* the next page, on a later turn of the loop */
	struct event *deadline;         /* timeoutSeconds: ends the stream; NULL: none */
	int pause_ms;                   /* back-off while the client's backlog is high */
	size_t list_limit;              /* PH_LIST: objects to read for the next page */
	double stalled_since;           /* when the current pause began; 0: none */
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
	size_t high;         /* a replay writes a page only while the client has less unread */
	size_t page;         /* bytes formatted per page (one event more at most) */
	struct timeval turn; /* the loop's cached time when the budget below was last reset */
	double spent;        /* seconds of replay pages in this turn of the loop */
};

/* Append one event in the watcher's format. object is compact JSON text. */
static void format_event(rz_textbuf_t *b, enum format f, const char *type, int64_t id,
                         const char *object)
{
	char head[96];

	if (f == FMT_SSE) {
		snprintf(head, sizeof(head), "event: %s\nid: %" PRId64 "\ndata: ", type, id);
		rz_textbuf_str(b, head);
	}
	rz_textbuf_str(b, "{\"type\":\"");
	rz_textbuf_str(b, type);
	rz_textbuf_str(b, "\",\"object\":");
	rz_textbuf_str(b, object);
	rz_textbuf_str(b, f == FMT_SSE ? "}\n\n" : "}\n");
}

/* One event of w with obj (json its stored text), rendered when the watcher renders. */
static void watcher_event(struct watcher *w, rz_textbuf_t *b, const char *type, int64_t id,
                          const json_t *obj, const char *json)
{
	char *text;

	if (w->render == NULL) {
		format_event(b, w->format, type, id, json);
		return;
	}
	text = w->render(w->render_flags, w->kind, obj);
	if (text == NULL) {
		b->oom = true;
		return;
	}
	format_event(b, w->format, type, id, text);
	free(text);
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
	bool now, was;

	if (w->keep != NULL && ev->kind == w->kind && !w->keep(w->keep_arg, ev->tenant, ev->name)) {
		return NULL; /* nothing of a tenant it may not see, not even its leaving */
	}
	now = matches(w, ev->kind, ev->tenant, ev->object);

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
	if (w->resume != NULL) {
		event_free(w->resume);
	}
	if (w->deadline != NULL) {
		event_free(w->deadline);
	}
	free(w->after_owner);
	free(w->after_name);
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

static void expired(rz_textbuf_t *b, enum format f, int64_t rv, int code, const char *msg);

/* Whether w's principal may go on watching; when not, the stream ends with an ERROR event
 * (a Status of the code valid gave) and false: w is gone. */
static bool watcher_allowed(struct watcher *w)
{
	rz_textbuf_t b = { 0 };
	int code = w->valid != NULL ? w->valid(w->valid_arg) : 0;

	if (code == 0) {
		return true;
	}
	expired(&b, w->format, rz_store_revision(w->hub->store), code,
	        code == 401 ? "the credentials of this watch ended: sign in again"
	                    : "the principal of this watch may no longer watch this");
	if (b.oom || watcher_send(w, b.p, b.len)) {
		watcher_end(w);
	}
	free(b.p);
	return false;
}

static void on_event(const rz_event_t *ev, void *arg)
{
	rz_watch_hub_t *hub = arg;
	struct watcher *w = hub->list;
	rz_textbuf_t b[3][3] = { { { 0 } } }; /* per format, per type seen: formatted once */

	while (w != NULL) {
		struct watcher *next = w->next;
		/* a watcher still catching up reads this change from the log */
		const char *type = w->phase == PH_LIVE && ev->rv > w->cursor && watcher_allowed(w)
		                       ? seen_as(w, ev)
		                       : NULL;
		if (type != NULL && w->render != NULL) { /* its own text: no sharing */
			rz_textbuf_t own = { 0 };
			watcher_event(w, &own, type, ev->rv, ev->object, ev->json);
			if (!own.oom) {
				watcher_send(w, own.p, own.len);
			}
			free(own.p);
		} else if (type != NULL) {
			int t = type[0] == 'A' ? 0 : type[0] == 'M' ? 1 : 2;
			rz_textbuf_t *fb = &b[w->format][t];
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
		rz_textbuf_t b = { 0 };
		if (w->phase != PH_LIVE || !watcher_allowed(w)) {
			w = next; /* catching up: a BOOKMARK would claim what is not sent yet */
			continue;
		}
		if (w->bookmarks) {
			char obj[256];
			snprintf(obj, sizeof(obj),
			         "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
			         "{\"resourceVersion\":\"%" PRId64 "\"}}",
			         w->kind->kind, w->api_version, rv);
			format_event(&b, w->format, "BOOKMARK", rv, obj);
		} else {
			rz_textbuf_str(&b, w->format == FMT_SSE ? ": heartbeat\n\n" : "\n");
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

static void expired(rz_textbuf_t *b, enum format f, int64_t rv, int code, const char *msg)
{
	json_t *st = rz_status_new(code, code == 410 ? "Expired" : NULL, msg);
	char *text = json_dumps(st, JSON_COMPACT);

	format_event(b, f, "ERROR", rv, text ? text : "{}");
	free(text);
	json_decref(st);
}

/* ------------------------------------------------------------------ catching up */

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One page of the current objects, after the last key sent, as ADDED events stamped with
 * the list's revision (so that a client resuming from any of them sees every later change).
 * An object changed since that revision is left to the replay of the log that follows,
 * which brings its changes in order. */
static int list_page(struct watcher *w, rz_textbuf_t *b, rz_err_t *err)
{
	rz_list_opts_t o = { .tenant = w->tenant,
		             .labels = w->labels,
		             .fields = w->fields,
		             .limit = w->list_limit,
		             .after_tenant = w->after_owner,
		             .after_name = w->after_name,
		             .keep = w->keep,
		             .keep_arg = w->keep_arg };
	const char *field = rz_kind_owner_field(w->kind);
	json_t *items = NULL, *obj, *last = NULL;
	bool more = false;
	size_t i, sent = 0;
	int rc = rz_store_list(w->hub->store, w->kind, &o, &items, &more, err);

	if (rc != 0) {
		return rc;
	}
	json_array_foreach(items, i, obj)
	{
		char *text;
		if (b->len >= w->hub->page) {
			more = true;
			break;
		}
		last = obj;
		if (rz_object_rv(obj) > w->cursor) {
			continue;
		}
		text = w->render == NULL ? json_dumps(obj, JSON_COMPACT) : NULL;
		if (w->render == NULL && text == NULL) {
			b->oom = true;
			break;
		}
		watcher_event(w, b, "ADDED", w->cursor, obj, text);
		free(text);
		sent++;
	}
	/* read about a page's worth of objects next time: large ones are not parsed in vain */
	w->list_limit = sent == 0 ? w->list_limit : w->hub->page / (b->len / sent + 1) + 1;
	w->list_limit = w->list_limit > RZ_WATCH_LIST_PAGE ? RZ_WATCH_LIST_PAGE : w->list_limit;
	if (last != NULL) {
		const json_t *meta = json_object_get(last, "metadata");
		const char *owner = field ? json_string_value(json_object_get(meta, field)) : NULL;
		free(w->after_owner);
		free(w->after_name);
		w->after_owner = strdup(owner ? owner : "");
		w->after_name = strdup(json_string_value(json_object_get(meta, "name")));
		b->oom = b->oom || w->after_owner == NULL || w->after_name == NULL;
	}
	json_decref(items);
	if (!more) {
		w->phase = PH_REPLAY;
	}
	return b->oom ? rz_err_set(err, -ENOMEM, "out of memory") : 0;
}

struct replay {
	struct watcher *w;
	rz_textbuf_t *b;
	size_t scanned;
};

static int replay_one(const rz_event_t *ev, void *arg)
{
	struct replay *r = arg;
	const char *type = seen_as(r->w, ev);

	r->w->cursor = ev->rv;
	if (type != NULL) {
		watcher_event(r->w, r->b, type, ev->rv, ev->object, ev->json);
	}
	if (r->b->oom) {
		return -ENOMEM;
	}
	return ++r->scanned >= RZ_WATCH_REPLAY_PAGE || r->b->len >= r->w->hub->page;
}

/* One page of the event log after the cursor; at its end the watcher goes live. */
static int replay_page(struct watcher *w, rz_textbuf_t *b, rz_err_t *err)
{
	struct replay r = { w, b, 0 };
	int rc = rz_store_replay(w->hub->store, w->cursor, replay_one, &r, err);

	if (rc == -ENOMEM) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	if (rc == 0) {
		w->phase = PH_LIVE;
		w->cursor = rz_store_revision(w->hub->store);
	}
	return rc < 0 ? rc : 0;
}

static void schedule(struct watcher *w, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (evtimer_add(w->resume, &tv) < 0) {
		watcher_end(w);
	}
}

/* The client has more unread than the high-water mark: try again later, backing off; cut
 * it off when it has read nothing for RZ_WATCH_STALL_S. */
static void pause_replay(struct watcher *w)
{
	double now = mono_now();

	if (w->stalled_since == 0) {
		w->stalled_since = now;
	} else if (now - w->stalled_since > RZ_WATCH_STALL_S) {
		rz_logkv(RZ_LOG_WARNING, "watch", "replay cut off: client is not reading", "peer",
		         rz_req_peer(w->req), "request_id", rz_req_id(w->req), NULL);
		watcher_end(w);
		return;
	}
	w->pause_ms = w->pause_ms == 0 ? 10 : w->pause_ms >= 500 ? 1000 : w->pause_ms * 2;
	schedule(w, w->pause_ms);
}

/* Send the next page of a watcher that is catching up, then schedule the one after. */
static void replay_step(struct watcher *w)
{
	rz_watch_hub_t *hub = w->hub;
	rz_textbuf_t b = { 0 };
	rz_err_t err = { 0 };
	int rc;

	struct timeval turn;
	double t0;

	if (rz_reply_backlog(w->req) > hub->high) {
		pause_replay(w);
		return;
	}
	/* every watcher catching up shares RZ_WATCH_TURN_MS per turn of the loop */
	event_base_gettimeofday_cached(hub->base, &turn);
	if (turn.tv_sec != hub->turn.tv_sec || turn.tv_usec != hub->turn.tv_usec) {
		hub->turn = turn;
		hub->spent = 0;
	} else if (hub->spent * 1000 >= RZ_WATCH_TURN_MS) {
		schedule(w, 0);
		return;
	}
	if (!watcher_allowed(w)) {
		return; /* ended */
	}
	w->stalled_since = 0;
	w->pause_ms = 0;
	t0 = mono_now();
	rc = w->phase == PH_LIST ? list_page(w, &b, &err) : replay_page(w, &b, &err);
	hub->spent += mono_now() - t0;
	if (rc != 0) {
		free(b.p);
		b = (rz_textbuf_t){ 0 };
		if (rc != RZ_EGONE) {
			rz_log_err("watch", "replay of %s failed: %s", w->kind->plural, err.msg);
		}
		expired(&b, w->format, rz_store_revision(hub->store), rc == RZ_EGONE ? 410 : 500,
		        rc == RZ_EGONE ? err.msg : "internal error; see the server log");
	}
	if (b.len > 0 && !watcher_send(w, b.p, b.len)) {
		free(b.p);
		return; /* ended */
	}
	free(b.p);
	if (rc != 0) {
		watcher_end(w);
	} else if (w->phase != PH_LIVE) {
		schedule(w, 0); /* after the loop has polled: other requests go between pages */
	}
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	replay_step(arg);
}

/* timeoutSeconds have passed: the stream ends cleanly, as Kubernetes ends it (the client
 * watches again from the last resourceVersion it saw). */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	watcher_end(arg);
}

void rz_watch_start(rz_watch_hub_t *hub, rz_req_t *req, rz_watch_opts_t *o)
{
	struct watcher *w = calloc(1, sizeof(*w));
	int64_t rev = rz_store_revision(hub->store);
	const char *ctype;

	struct timeval limit = { o->timeout_s, 0 };

	if (w == NULL || (o->tenant != NULL && (w->tenant = strdup(o->tenant)) == NULL) ||
	    (w->resume = evtimer_new(hub->base, on_resume, w)) == NULL ||
	    (o->timeout_s > 0 && ((w->deadline = evtimer_new(hub->base, on_deadline, w)) == NULL ||
	                          evtimer_add(w->deadline, &limit) < 0))) {
		if (w != NULL) {
			free(w->tenant);
			if (w->resume != NULL) {
				event_free(w->resume);
			}
			if (w->deadline != NULL) {
				event_free(w->deadline);
			}
		}
		free(w);
		rz_selector_free(o->labels);
		rz_selector_free(o->fields);
		rz_reply_error(req, 500, NULL, "out of memory");
		return;
	}
	w->hub = hub;
	w->req = req;
	w->kind = o->kind;
	w->labels = o->labels;
	w->fields = o->fields;
	w->format = pick_format(req, &ctype);
	w->bookmarks = o->bookmarks;
	w->render = o->render;
	w->render_flags = o->render_flags;
	w->api_version = o->api_version != NULL ? o->api_version : RZ_API_VERSION;
	w->keep = o->keep;
	w->keep_arg = o->keep_arg;
	w->valid = o->valid;
	w->valid_arg = o->valid_arg;
	w->phase = o->since >= 0 ? PH_REPLAY : PH_LIST;
	w->list_limit = 8;
	w->cursor = o->since >= 0 ? o->since : rev;
	o->labels = o->fields = NULL;
	if (rz_reply_start(req, 200, ctype) < 0) {
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
	if (o->since > rev) {
		rz_textbuf_t b = { 0 };
		char msg[128];
		snprintf(msg, sizeof(msg),
		         "too large resource version: %" PRId64 " (current %" PRId64 ")", o->since,
		         rev);
		expired(&b, w->format, rev, 410, msg);
		if (!b.oom && watcher_send(w, b.p, b.len)) {
			watcher_end(w);
		}
		free(b.p);
		return;
	}
	replay_step(w); /* the first page now: a small replay is sent at once */
}

/* ------------------------------------------------------------------ the hub */

int rz_watch_hub_new(rz_watch_hub_t **out, struct event_base *base, rz_store_t *store,
                     rz_bus_t *bus, int heartbeat_ms, size_t backlog, rz_err_t *err)
{
	rz_watch_hub_t *hub = calloc(1, sizeof(*hub));
	struct timeval tv = { heartbeat_ms / 1000, (heartbeat_ms % 1000) * 1000 };

	*out = NULL;
	if (hub == NULL) {
		return rz_err_set(err, -ENOMEM, "watch: out of memory");
	}
	if (backlog == 0) {
		backlog = RZ_WATCH_DEFAULT_BACKLOG;
	}
	hub->high = backlog / 2;
	hub->page = backlog / 4 < RZ_WATCH_PAGE_BYTES ? backlog / 4 : RZ_WATCH_PAGE_BYTES;
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
