/*
 * core/store/store.h - resource objects in SQLite, with a global revision counter and a
 * persisted event log (SPEC §3, §7.7).
 *
 * Every write is one transaction that updates the object, appends one event per change to
 * the log (each change gets the next revision: the object's resourceVersion and the
 * event's id), advances the revision counter and prunes the log to its window. Events are
 * published on the bus after the commit, so a watcher can never see an uncommitted change
 * nor miss a committed one, and always in revision order (a subscriber's own writes are
 * delivered after the batch it is reacting to). Loop thread only. Never call a write from
 * inside an rz_db_tx of the caller's: the store commits and publishes by itself.
 */
#ifndef RZ_STORE_H
#define RZ_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/clock.h" /* rz_time_now, rz_time_parse: callers of the store use them */
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/base/errors.h"
#include "core/model/kinds.h"
#include "core/model/selector.h"

typedef struct rz_store rz_store_t;

/* Extra work inside a write's transaction (credentials, audit rows): runs after the object
 * is written, with the stored object (its last state when gone). A non-zero return rolls
 * the whole write back. Hooks chain through next; all borrowed. */
typedef struct rz_write_hook rz_write_hook_t;
struct rz_write_hook {
	int (*fn)(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone, void *arg,
	          rz_err_t *err);
	void *arg;
	const rz_write_hook_t *next;
};

/* db and bus are borrowed and must outlive the store. window: events kept (≥ 1). */
int rz_store_new(rz_store_t **out, rz_db_t *db, rz_bus_t *bus, int64_t window, rz_err_t *err);
void rz_store_free(rz_store_t *st);

/* Bound the event log's documents to max_bytes in all (0 = RZ_EVENT_LOG_MAX): a write that
 * takes the log past it also drops its oldest events, as the window does. The events of
 * the write itself are always kept. */
#define RZ_EVENT_LOG_MAX (256ull << 20)
void rz_store_set_log_max(rz_store_t *st, uint64_t max_bytes);

/* The bytes of the event log's documents (for tests and /metrics). */
uint64_t rz_store_log_bytes(const rz_store_t *st);

/* The newest revision; the oldest revision still in the event log (revision + 1 when the
 * log is empty). A watch can resume from N when N + 1 >= oldest. */
int64_t rz_store_revision(const rz_store_t *st);
int64_t rz_store_oldest(rz_store_t *st);

/* Objects of every kind, for /metrics. */
int64_t rz_store_count(rz_store_t *st);

/* tenant is "" (or NULL) for global kinds. Caller owns *out. RZ_ENOTFOUND when absent. */
int rz_store_get(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                 json_t **out, rz_err_t *err);

typedef struct rz_list_opts {
	const char *tenant;          /* tenant-scoped kinds: NULL = every tenant */
	const rz_selector_t *labels; /* NULL = all */
	const rz_selector_t *fields; /* NULL = all */
	size_t limit;                /* 0 = no limit */
	const char *after_tenant;    /* resume after this (tenant, name) key; NULL = start */
	const char *after_name;
	/* NULL = all; else only the objects it keeps (key: tenant "" for global kinds), not
	 * counted against limit otherwise (a caller's access rule) */
	bool (*keep)(void *arg, const char *tenant, const char *name);
	void *keep_arg;
} rz_list_opts_t;

/* Objects sorted by (tenant, name). *items is a new array (caller owns); *more is set when
 * more matching objects follow the last one returned. */
int rz_store_list(rz_store_t *st, const rz_kind_t *k, const rz_list_opts_t *o, json_t **items,
                  bool *more, rz_err_t *err);

/* A stored object as a scan reads it; all borrowed — valid during the callback. doc is the
 * stored text: the store writes every object as jansson's compact serialisation
 * (json_dumps with JSON_COMPACT), so it is byte for byte what parsing it and dumping it
 * compact again gives, and a reply may copy it without a parse. */
typedef struct rz_store_row {
	const char *tenant; /* "" for global kinds */
	const char *name;
	const char *doc;
	size_t len; /* of doc */
} rz_store_row_t;

#define RZ_SCAN_PAGE 256 /* rows one rz_store_scan reads when max is 0 */

typedef struct rz_scan_opts {
	const char *tenant;       /* tenant-scoped kinds: NULL = every tenant */
	const char *after_tenant; /* start after this (tenant, name) key; NULL = at the start */
	const char *after_name;
	size_t max; /* rows read at most; 0 = RZ_SCAN_PAGE */
} rz_scan_opts_t;

/* One page of objects of kind k, in (tenant, name) order after the key, each through
 * fn(arg, row) (the scan stops when it returns non-zero; a negative value is returned as
 * the error). Returns the rows read (>= 0), or a negative error. The page is one statement,
 * reset before the return: no read transaction is left open between pages, so a list read
 * page by page does not hold back WAL checkpoints, and it sees writes made between its
 * pages (each object as it is when its page is read). */
int rz_store_scan(rz_store_t *st, const rz_kind_t *k, const rz_scan_opts_t *o,
                  int (*fn)(void *arg, const rz_store_row_t *row), void *arg, rz_err_t *err);

/* The query plan (EXPLAIN QUERY PLAN's detail lines, newline-separated, into out) of the
 * statement rz_store_scan and rz_store_list run for one tenant's objects (one_tenant) or
 * for every tenant's: for tests, which check that both search the primary key. */
int rz_store_scan_plan(rz_store_t *st, bool one_tenant, char *out, size_t size, rz_err_t *err);

/* Objects of kind k grouped by the value at the JSON path ("$.status.phase"): fn(arg,
 * value or NULL when absent, how many), in value order. */
int rz_store_count_by(rz_store_t *st, const rz_kind_t *k, const char *path,
                      void (*fn)(void *arg, const char *value, int64_t n), void *arg,
                      rz_err_t *err);
/* The same over the objects keep keeps (key: tenant "" for global kinds; a caller's access
 * rule), each given to fn as one, in key order. */
int rz_store_count_kept(rz_store_t *st, const rz_kind_t *k, const char *path,
                        bool (*keep)(void *arg, const char *tenant, const char *name),
                        void *keep_arg, void (*fn)(void *arg, const char *value, int64_t n),
                        void *arg, rz_err_t *err);

/* The newest objects of kind k whose string at the JSON path ("$.status.phase") is one of
 * values (NULL-terminated, at most RZ_NEWEST_VALUES): at most limit, the last created first,
 * each through fn(arg, row) (a non-zero return stops; a negative one is returned). The rows
 * are walked from the last inserted back (the objects table's rowid, which grows with each
 * create) until limit match, so the cost is the rows newer than the limit-th match, not the
 * kind's size (the whole table at worst: when fewer match). A row is parsed only when its
 * stored text holds "<last member of path>":<value> (the store writes compact JSON, so every
 * match does); others cost a substring search. order (a JSON path, e.g. "$.lastTimestamp";
 * NULL: creation) orders by that member instead, the latest first: every match is then read,
 * so only for kinds whose matches are bounded (Events: events.max_per_tenant). Returns the
 * rows given (>= 0), or a negative error (-EINVAL for too many values). All borrowed. */
#define RZ_NEWEST_VALUES 4
int rz_store_newest(rz_store_t *st, const rz_kind_t *k, const char *path, const char *const *values,
                    const char *order, size_t limit,
                    int (*fn)(void *arg, const rz_store_row_t *row), void *arg, rz_err_t *err);

/* rz_store_get for a reader that leaves the object as it is: *out may be shared with the
 * store's cache of parsed objects (recently written or read this way), so the caller must
 * not modify it, only json_decref it. The stored row decides: a cached parse is used only
 * while the row has its resourceVersion and size. Loop thread. */
int rz_store_get_shared(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                        json_t **out, rz_err_t *err);

/* The object's text as stored (compact JSON, exactly what json_dumps(JSON_COMPACT) makes of
 * it) into *text, *len bytes and a NUL, with room for one byte more (a reply's newline):
 * a reader that serves the object as it is needs neither a parse nor a dump. Caller frees
 * *text. RZ_ENOTFOUND when there is none. Loop thread. */
int rz_store_get_text(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                      char **text, size_t *len, rz_err_t *err);

/* Every object of kind (by name) in tenant (NULL: every tenant), as rz_store_list sorts
 * them; an empty array when the store cannot be read. Caller owns the array. */
json_t *rz_store_list_all(rz_store_t *st, const char *kind, const char *tenant);

/* Create obj (borrowed: a validated object whose metadata.name is set; for tenant-scoped
 * kinds metadata.tenant names an existing tenant). The store sets uid, resourceVersion,
 * generation 1, creationTimestamp and the kind's finalizers. *out (caller owns) is the
 * stored object. -EEXIST when the name is taken; RZ_ENOTFOUND when the tenant does not
 * exist; RZ_ETERMINATING when it is being deleted. -E2BIG when the stored object would be
 * larger than RZ_OBJECT_MAX (also for rz_store_update, unless the object is being deleted). */
int rz_store_create(rz_store_t *st, const rz_kind_t *k, const json_t *obj,
                    const rz_write_hook_t *hook, json_t **out, rz_err_t *err);

/* Either mode also takes metadata.managedFields from obj when obj has them ([]: none left);
 * without them the stored ones stay. */
typedef enum rz_update_mode {
	RZ_UPDATE_SPEC,   /* spec, labels, annotations, finalizers from obj; status kept */
	RZ_UPDATE_STATUS, /* status and the kind's top-level members (k->top) from obj;
	                     everything else kept */
} rz_update_mode_t;

/* Replace the object. expect_rv > 0 must equal the stored resourceVersion, else
 * RZ_ECONFLICT. generation is bumped when the spec changes. An object being deleted whose
 * last finalizer is removed is deleted (with its tenant's objects, for a Tenant); then
 * *gone is set and *out is the last state. */
int rz_store_update(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                    const json_t *obj, int64_t expect_rv, rz_update_mode_t mode,
                    const rz_write_hook_t *hook, json_t **out, bool *gone, rz_err_t *err);

/* Delete: an object with finalizers gets deletionTimestamp (and keeps existing: *gone is
 * false); without, it is removed — a Tenant with every object of the tenant — and *gone is
 * true. *out is the object's final or current state. */
int rz_store_delete(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                    int64_t expect_rv, const rz_write_hook_t *hook, json_t **out, bool *gone,
                    rz_err_t *err);

/* Replay events with revision > after, oldest first, through fn (stop when it returns
 * non-zero, which is then returned). RZ_EGONE when after + 1 < rz_store_oldest(); an after
 * beyond the newest revision (up to INT64_MAX) replays nothing. */
int rz_store_replay(rz_store_t *st, int64_t after, int (*fn)(const rz_event_t *ev, void *arg),
                    void *arg, rz_err_t *err);

/* fn(arg, status) once the writes made so far are durable: after the commit of the loop
 * turn's group when one is open (rz_write_opts_t.group), then with store.durability: full
 * after the WAL sync that covers them; else at once, before this returns. status is 0, or
 * a negative errno when the commit or the sync failed and the writes may be lost: a
 * write's reply must then not say it succeeded. Loop thread. See rz_db_after_durable. */
void rz_store_after_durable(rz_store_t *st, void (*fn)(void *arg, int status), void *arg);

/* How the next write (rz_store_create, _update or _delete) is made; it clears them. */
typedef struct rz_write_opts {
	/* It may share its commit with the other writes of this loop turn (rz_db_tx_grouped):
	 * it returns once written in the open group, and its events are published at the
	 * group's commit, before the rz_store_after_durable callbacks registered meanwhile,
	 * which hear whether the commit succeeded. For a writer that answers through
	 * rz_store_after_durable (the API); others' writes commit on their own. */
	bool group;
	/* _update: the object as the caller read it with rz_store_get and left unchanged
	 * (borrowed for the call; the store may keep a reference), used instead of reading it
	 * again when the stored resourceVersion is still its own. */
	json_t *current;
	/* When not NULL: *text receives the object as _create or _update stored it (compact
	 * JSON; caller frees), NULL when nothing new was stored or on failure. */
	char **text;
} rz_write_opts_t;

/* Options for the next write only. Loop thread. */
void rz_store_next(rz_store_t *st, const rz_write_opts_t *o);

/* The resourceVersion of an object as a number (0 when missing or malformed). */
int64_t rz_object_rv(const json_t *obj);

#endif /* RZ_STORE_H */
