/*
 * core/api/lists.h - list replies streamed from the store (SPEC §3, §13).
 *
 * A list goes to the socket as its rows are read: in pages of at most RZ_LIST_PAGE_BYTES,
 * chunked, each stored object copied as the store keeps it (its compact JSON text, parsed
 * only where a label or field selector must look into it, or ?pretty re-indents it), and
 * read only while the client's unread backlog is under RZ_LIST_HIGH_WATER: a client that
 * reads slowly, or not at all, holds at most the page and that backlog, however long the
 * list. Between pages the loop serves other requests; a stalled client is dropped by the
 * server's write timeout (server.idle_timeout).
 *
 * Consistency: the list's metadata.resourceVersion is the store's revision when the list
 * began, and a limited list's continue token is fixed then too (the key of its last
 * object, found before the first byte is sent). No read transaction is held across pages
 * (it would hold back WAL checkpoints for as long as a client chose not to read), so a list
 * that had to pause may show an object changed after that revision as it is when its page
 * is read, like a Kubernetes list served from a watch cache: a watch from the list's
 * resourceVersion then brings the same change again, which clients apply as an update. A
 * list that fits under the high-water mark, as most do, is read in one turn of the loop,
 * where no write can come between its rows: it is exact at its resourceVersion.
 */
#ifndef RZ_LISTS_H
#define RZ_LISTS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/base/errors.h"
#include "core/http/http.h"
#include "core/model/kinds.h"
#include "core/model/selector.h"
#include "core/store/store.h"

#define RZ_LIST_PAGE_BYTES (64u * 1024)  /* reply bytes formatted per page (one object more) */
#define RZ_LIST_HIGH_WATER (256u * 1024) /* unread bytes above which a list stops reading */
#define RZ_LIST_TURN_ROWS  1024          /* rows one turn of the loop examines, at most */

typedef struct rz_lists_opts {
	const rz_kind_t *kind;
	const char *tenant;       /* tenant-scoped kinds: NULL = every tenant */
	rz_selector_t *labels;    /* NULL = all; taken */
	rz_selector_t *fields;    /* NULL = all; taken */
	size_t limit;             /* 0 = no limit */
	const char *after_tenant; /* a continue token's key; NULL = from the start */
	const char *after_name;
	bool pretty; /* indented as rz_reply_json indents */
	/* NULL = all; else only the objects it keeps (rz_list_opts_t's keep) */
	bool (*keep)(void *arg, const char *tenant, const char *name);
	void *keep_arg;
	/* NULL = the objects as stored; else each as view shows it (obj borrowed; a new object,
	 * NULL on out of memory), the selectors having looked at it as stored, in a list of
	 * api_version (the core v1 Events of /api/v1/namespaces/{tenant}/events) */
	json_t *(*view)(const json_t *obj);
	const char *api_version; /* NULL = RZ_API_VERSION */
} rz_lists_opts_t;

/* Answer req (GET or HEAD) with the list o describes (borrowed, but for the selectors,
 * which are taken in every case). 0 once the reply has begun (it finishes by itself, on
 * later turns of the loop when long); a negative error, with err filled and nothing sent,
 * when the store could not be read: the caller replies. */
int rz_lists_send(rz_req_t *req, rz_store_t *store, rz_lists_opts_t *o, rz_err_t *err);

/* The continue token of a page whose last object has the key (owner, name) (borrowed):
 * "owner\nname", base64url. Caller owns the result; free(). NULL on out of memory. */
char *rz_lists_continue(const char *owner, const char *name);

#endif /* RZ_LISTS_H */
