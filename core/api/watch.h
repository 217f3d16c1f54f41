/*
 * core/api/watch.h - watch streams over HTTP (SPEC §3 "Watch", PROTOCOLS.md §6).
 *
 * A hub subscribes to the bus once and fans each committed change out to the matching
 * watchers. Formats: Server-Sent Events (default; `event:`, `id:`, `data:`), NDJSON
 * (`Accept: application/x-ndjson`) and the Kubernetes JSON stream (`Accept:
 * application/json`): one {"type","object"} per line. Watchers that stop reading are cut
 * off once their backlog passes the HTTP server's limit; the loop never waits for them.
 *
 * A watch first catches up — the current objects as ADDED (without resourceVersion) and the
 * event log after that revision — in pages of at most RZ_WATCH_PAGE_BYTES (and
 * RZ_WATCH_LIST_PAGE objects or RZ_WATCH_REPLAY_PAGE events), one page per turn of the
 * loop and RZ_WATCH_TURN_MS of pages per turn for all watchers together, written only while the
 * client has less than half the backlog cap unread; a client that reads nothing for
 * RZ_WATCH_STALL_S meanwhile is cut off. An object that changes while the list is being sent
 * arrives through its events (MODIFIED, DELETED) instead.
 */
#ifndef RZ_WATCH_H
#define RZ_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store/bus.h"
#include "core/base/errors.h"
#include "core/http/http.h"
#include "core/model/kinds.h"
#include "core/model/selector.h"
#include "core/store/store.h"

struct event_base;

#define RZ_WATCH_PAGE_BYTES      (256u * 1024) /* formatted bytes per replay page, at most */
#define RZ_WATCH_LIST_PAGE       64            /* objects read per page of the initial list */
#define RZ_WATCH_REPLAY_PAGE     256           /* events read per page of the replay */
#define RZ_WATCH_TURN_MS         5             /* replay pages per turn of the loop, all watchers */
#define RZ_WATCH_STALL_S         60 /* a catching-up client reading nothing so long is cut */
#define RZ_WATCH_DEFAULT_BACKLOG (4u << 20) /* the HTTP server's default max_stream_backlog */
#define RZ_WATCH_TIMEOUT_MAX     86400      /* timeoutSeconds at most: a day */

typedef struct rz_watch_hub rz_watch_hub_t;

/* heartbeat_ms: how often idle streams get a BOOKMARK or a heartbeat (15000 in the daemon).
 * backlog: the HTTP server's max_stream_backlog (0: its default, 4 MiB); replays write while
 * less than half of it is unread, in pages of at most a quarter of it. Everything is
 * borrowed and must outlive the hub. */
int rz_watch_hub_new(rz_watch_hub_t **out, struct event_base *base, rz_store_t *store,
                     rz_bus_t *bus, int heartbeat_ms, size_t backlog, rz_err_t *err);

/* End every stream and free. Accepts NULL. */
void rz_watch_hub_free(rz_watch_hub_t *hub);

/* End every stream (shutdown), keeping the hub. */
void rz_watch_hub_close_all(rz_watch_hub_t *hub);

/* Open watch streams. */
size_t rz_watch_hub_count(const rz_watch_hub_t *hub);

/* An object as a watch of this kind sends it, when not as stored (a Table row for kubectl's
 * get -w): compact JSON text of obj (borrowed), or NULL on out of memory. Caller owns the
 * result; free(). */
typedef char *(*rz_watch_render_fn)(unsigned flags, const rz_kind_t *k, const json_t *obj);

typedef struct rz_watch_opts {
	const rz_kind_t *kind;
	const char *tenant;        /* NULL: every tenant (or a global kind) */
	rz_selector_t *labels;     /* taken over by the watch (may be NULL) */
	rz_selector_t *fields;     /* taken over by the watch (may be NULL) */
	int64_t since;             /* resume after this revision; < 0: start with the
	                              current objects as synthetic ADDED events */
	bool bookmarks;            /* allowWatchBookmarks */
	int timeout_s;             /* timeoutSeconds: the stream ends cleanly after so long;
	                              0: no limit of its own */
	rz_watch_render_fn render; /* NULL: objects as stored */
	unsigned render_flags;     /* handed to render */
	const char *api_version;   /* a BOOKMARK's, as render shows the kind (core v1 Events:
	                              "v1"); NULL: RZ_API_VERSION */
	/* NULL = all; else only the objects it keeps, asked at each event (an access rule:
	 * arg must live as long as the watch, e.g. its request) */
	bool (*keep)(void *arg, const char *tenant, const char *name);
	void *keep_arg;
	/* NULL: the stream goes on; else asked before each event, heartbeat and page it would
	 * send (before keep): 0 while it may go on, else the code (401, 403) of the ERROR event
	 * it ends with (an access rule: arg as keep's) */
	int (*valid)(void *arg);
	void *valid_arg;
} rz_watch_opts_t;

/* Answer req with a watch stream. Takes ownership of the selectors in all cases. */
void rz_watch_start(rz_watch_hub_t *hub, rz_req_t *req, rz_watch_opts_t *o);

#endif /* RZ_WATCH_H */
