/*
 * core/store/store-int.h - what the files of the object store share (private to
 * core/store/store.c, the writes, and core/store/read.c, the reads): the store's structure
 * and its pending events, the parsed-object cache, and the helpers both use.
 */
#ifndef RZ_STORE_INT_H
#define RZ_STORE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/store/store.h"

/* An event recorded in the current transaction, published after the commit. */
struct pending {
	rz_event_type_t type;
	const rz_kind_t *kind;
	int64_t rv;
	bool spec_changed;
	json_t *obj;
	char *json;
	json_t *prev_labels; /* see rz_event_t */
};

/* The parsed form of objects recently written or read through rz_store_get_shared, so that
 * the API's read of the object a write changes (and of one a client GETs) needs no parse of
 * its stored text. Direct-mapped by (kind, tenant, name); an entry is used only while the
 * stored row has its resourceVersion and length, so whatever wrote the row (a rolled-back
 * group, a cascade) the stored text stays the truth. Bounded: CACHE_SLOTS objects of at most
 * CACHE_DOC_MAX bytes stored. */
#define CACHE_SLOTS   128
#define CACHE_DOC_MAX 8192

struct cached {
	char *key; /* kind NUL tenant NUL name NUL */
	size_t key_len;
	int64_t rv;
	size_t len;  /* of the stored text */
	json_t *obj; /* shared with readers, never modified */
};

struct rz_store {
	rz_db_t *db;
	rz_bus_t *bus;
	int64_t window;
	int64_t pruned;       /* the log holds no change at or below this revision */
	uint64_t log_max;     /* bytes of event documents kept at most */
	uint64_t log_bytes;   /* bytes of event documents in the log, committed */
	uint64_t tx_bytes;    /* the same inside the open transaction */
	int64_t rv;           /* committed revision */
	int64_t tx_rv;        /* revision inside the open transaction */
	int64_t tx_pruned;    /* pruned, inside it */
	struct pending *pend; /* the open transaction's events */
	size_t npend, cappend;
	struct pending *queue; /* committed events not yet delivered, in revision order */
	size_t nqueue, capqueue;
	bool delivering;
	rz_write_opts_t next; /* for the next write (rz_store_next) */
	/* grouped writes: their events wait for the group's commit */
	bool grouping;        /* a group of this store's writes is open */
	struct pending *held; /* its events, in revision order */
	size_t nheld, capheld;
	int64_t g_rv, g_pruned;           /* rv and pruned before the group */
	uint64_t g_bytes;                 /* log_bytes before it */
	struct cached cache[CACHE_SLOTS]; /* parsed objects, for rz_store_get_shared */
};

/* The tenant column of a row: "" for a global kind. */
static inline const char *scope_tenant(const rz_kind_t *k, const char *tenant)
{
	return (k->scope == RZ_SCOPE_GLOBAL || tenant == NULL) ? "" : tenant;
}

/* A stored row's text parsed (RZ_EDB when it is not JSON). Caller owns the result. */
static inline json_t *load_doc(const char *text, rz_err_t *err)
{
	json_error_t jerr;
	json_t *obj = json_loads(text, 0, &jerr);

	if (obj == NULL) {
		rz_err_set(err, RZ_EDB, "store: stored object is not JSON: %s", jerr.text);
	}
	return obj;
}

/* Keep obj (taken) as the parsed form of the row (kind, tenant, name) at rv, len bytes. */
void rz__store_cache_put(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                         int64_t rv, size_t len, json_t *obj);
/* The cached parse of the row (kind, tenant, name) when it is the one at rv and len. */
json_t *rz__store_cache_get(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                            int64_t rv, size_t len);
/* The object (kind, tenant, name) read and parsed into *out (caller owns): 0, or RZ_ENOTFOUND
 * and the database's errors. */
int rz__store_read_doc(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                       json_t **out, rz_err_t *err);
/* The one integer a query answers, or fallback when it answers none or NULL. */
int64_t rz__store_scalar(rz_store_t *st, const char *sql, int64_t fallback);

#endif /* RZ_STORE_INT_H */
