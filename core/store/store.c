/* core/store/store.c - writing resource objects: the revision counter, the event log and its
 * delivery, grouped writes, the parsed-object cache; reads are in core/store/read.c. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "core/model/conditions.h"
#include "core/store/store.h"
#include "core/store/store-int.h"

/* ------------------------------------------------------------------ helpers */

static void new_uid(char out[37])
{
	unsigned char b[16];

	randombytes_buf(b, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
	         b[13], b[14], b[15]);
}

int64_t rz_object_rv(const json_t *obj)
{
	const char *s =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	char *end;
	long long v;

	if (s == NULL || *s == '\0') {
		return 0;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	return (*end == '\0' && errno == 0 && v > 0) ? (int64_t)v : 0;
}

static const char *meta_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* The owner (tenant or user) of a scoped object, "" for a global one. */
static const char *owner_of(const rz_kind_t *k, const json_t *obj)
{
	const char *field = rz_kind_owner_field(k);
	const char *v = field ? meta_str(obj, field) : NULL;

	return v ? v : "";
}

static void set_rv(json_t *obj, int64_t rv)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, rv);
	json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(buf));
}

static void pending_clear(rz_store_t *st)
{
	for (size_t i = 0; i < st->npend; i++) {
		json_decref(st->pend[i].obj);
		free(st->pend[i].json);
		json_decref(st->pend[i].prev_labels);
	}
	st->npend = 0;
}

/* ------------------------------------------------------------------ writes */

/* Give obj the next revision, record the event in the log and queue it for the bus.
 * prev_labels (taken; may be NULL): the labels a MODIFIED replaced. Returns the serialized
 * object (owned by the pending entry) or NULL with err set. */
static const char *emit(rz_store_t *st, rz_event_type_t type, const rz_kind_t *k, json_t *obj,
                        bool spec_changed, json_t *prev_labels, rz_err_t *err)
{
	static const char sql[] = "INSERT INTO events (rv, type, kind, tenant, name, spec_changed,"
	                          " doc, prev_labels) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
	char *prev_text = NULL;
	struct pending *p;
	rz_stmt_t *s;
	int rc;

	if (st->npend == st->cappend) {
		size_t cap = st->cappend ? st->cappend * 2 : 8;
		struct pending *np = realloc(st->pend, cap * sizeof(*np));
		if (np == NULL) {
			json_decref(prev_labels);
			rz_err_set(err, -ENOMEM, "store: out of memory");
			return NULL;
		}
		st->pend = np;
		st->cappend = cap;
	}
	set_rv(obj, ++st->tx_rv);
	p = &st->pend[st->npend];
	*p = (struct pending){ type,
		               k,
		               st->tx_rv,
		               spec_changed,
		               json_incref(obj),
		               json_dumps(obj, JSON_COMPACT),
		               prev_labels };
	st->npend++;
	if (p->json == NULL ||
	    (prev_labels != NULL && (prev_text = json_dumps(prev_labels, JSON_COMPACT)) == NULL)) {
		rz_err_set(err, -ENOMEM, "store: out of memory");
		return NULL;
	}
	s = rz_db_stmt(st->db, sql, err);
	if (s == NULL) {
		free(prev_text);
		return NULL;
	}
	rz_stmt_bind_int64(s, 1, st->tx_rv);
	rz_stmt_bind_text(s, 2, rz_event_type_name(type));
	rz_stmt_bind_text(s, 3, k->kind);
	rz_stmt_bind_text(s, 4, owner_of(k, obj));
	rz_stmt_bind_text(s, 5, meta_str(obj, "name"));
	rz_stmt_bind_int64(s, 6, spec_changed);
	rz_stmt_bind_text(s, 7, p->json);
	if (prev_text != NULL) {
		rz_stmt_bind_text(s, 8, prev_text);
	}
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	free(prev_text);
	st->tx_bytes += strlen(p->json);
	return rc < 0 ? NULL : p->json;
}

/* A created or changed object above RZ_OBJECT_MAX is refused (one being deleted is not:
 * its finalizers must always be removable). */
static int check_size(const json_t *obj, const char *json, rz_err_t *err)
{
	size_t n = strlen(json);

	if (n > RZ_OBJECT_MAX && meta_str(obj, "deletionTimestamp") == NULL) {
		return rz_err_set(err, -E2BIG,
		                  "the object is too large: %zu bytes stored (at most %u)", n,
		                  RZ_OBJECT_MAX);
	}
	return 0;
}

/* Write the object row (insert or update) with obj's revision and text. */
/* The cache key of an object into buf (at most cap bytes); 0 when it does not fit. */
static size_t cache_key(char *buf, size_t cap, const char *kind, const char *tenant,
                        const char *name)
{
	size_t a = strlen(kind) + 1, b = strlen(tenant) + 1, c = strlen(name) + 1;

	if (a + b + c > cap) {
		return 0;
	}
	memcpy(buf, kind, a);
	memcpy(buf + a, tenant, b);
	memcpy(buf + a + b, name, c);
	return a + b + c;
}

static struct cached *cache_slot(rz_store_t *st, const char *key, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h = (h ^ (unsigned char)key[i]) * 16777619u;
	}
	return &st->cache[h % CACHE_SLOTS];
}

static void cache_clear(struct cached *e)
{
	free(e->key);
	json_decref(e->obj);
	*e = (struct cached){ 0 };
}

/* Keep obj (taken) as the parsed form of the row (kind, tenant, name) at rv, len bytes. */
void rz__store_cache_put(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                         int64_t rv, size_t len, json_t *obj)
{
	char key[512];
	size_t n = cache_key(key, sizeof(key), kind, tenant, name);
	struct cached *e;

	if (n == 0 || len > CACHE_DOC_MAX || obj == NULL) {
		json_decref(obj);
		return;
	}
	e = cache_slot(st, key, n);
	if (e->key == NULL || e->key_len != n || memcmp(e->key, key, n) != 0) {
		cache_clear(e);
		e->key = malloc(n);
		if (e->key == NULL) {
			json_decref(obj);
			return;
		}
		memcpy(e->key, key, n);
		e->key_len = n;
	}
	json_decref(e->obj);
	e->obj = obj;
	e->rv = rv;
	e->len = len;
}

/* The cached parse of the row (kind, tenant, name) when it is the one at rv and len. */
json_t *rz__store_cache_get(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                            int64_t rv, size_t len)
{
	char key[512];
	size_t n = cache_key(key, sizeof(key), kind, tenant, name);
	struct cached *e;

	if (n == 0) {
		return NULL;
	}
	e = cache_slot(st, key, n);
	if (e->obj == NULL || e->rv != rv || e->len != len || e->key_len != n ||
	    memcmp(e->key, key, n) != 0) {
		return NULL;
	}
	return json_incref(e->obj);
}

static int put_row(rz_store_t *st, const rz_kind_t *k, const json_t *obj, const char *json,
                   bool insert, rz_err_t *err)
{
	static const char ins[] = "INSERT INTO objects (kind, tenant, name, uid, rv, doc)"
	                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
	static const char upd[] = "UPDATE objects SET rv = ?5, doc = ?6"
	                          " WHERE kind = ?1 AND tenant = ?2 AND name = ?3";
	rz_stmt_t *s = rz_db_stmt(st->db, insert ? ins : upd, err);
	const char *tenant = owner_of(k, obj);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, tenant ? tenant : "");
	rz_stmt_bind_text(s, 3, meta_str(obj, "name"));
	if (insert) {
		rz_stmt_bind_text(s, 4, meta_str(obj, "uid"));
	}
	rz_stmt_bind_int64(s, 5, rz_object_rv(obj));
	rz_stmt_bind_text(s, 6, json);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	if (rc >= 0 && strlen(json) <= CACHE_DOC_MAX) {
		/* a copy: the written object goes on to its writer and to the watchers */
		rz__store_cache_put(st, k->kind, tenant ? tenant : "", meta_str(obj, "name"),
		                    rz_object_rv(obj), strlen(json), json_deep_copy(obj));
	}
	return rc < 0 ? rc : 0;
}

static int drop_row(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                    rz_err_t *err)
{
	static const char sql[] =
	    "DELETE FROM objects WHERE kind = ?1 AND tenant = ?2 AND name = ?3";
	rz_stmt_t *s = rz_db_stmt(st->db, sql, err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, tenant);
	rz_stmt_bind_text(s, 3, name);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

/* Delete events with sql (?1 = upto; it returns each deleted document's size) and take
 * them off the transaction's log size: how many went (>= 0), or the error. */
static int prune(rz_store_t *st, const char *sql, int64_t upto, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(st->db, sql, err);
	int rc, n = 0;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_int64(s, 1, upto);
	while ((rc = rz_stmt_step(s, err)) == 1) {
		uint64_t len = (uint64_t)rz_stmt_int64(s, 0);
		st->tx_bytes -= len < st->tx_bytes ? len : st->tx_bytes;
		n++;
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : n;
}

/* Advance the stored revision and prune the log; the last step of every write. */
static int finish_tx(rz_store_t *st, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(st->db, "UPDATE revision SET rv = ?1 WHERE id = 1", err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_int64(s, 1, st->tx_rv);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	if (rc < 0) {
		return rc;
	}
	/* by count, a batch at a time: the log keeps the last window changes, and up to 1/64
	 * more between two prunes, so a write seldom pays for a DELETE */
	if (st->tx_rv - st->window > st->pruned + st->window / 64) {
		rc = prune(st,
		           "DELETE FROM events WHERE rv <= ?1 RETURNING length(CAST(doc AS BLOB))",
		           st->tx_rv - st->window, err);
		if (rc >= 0) {
			st->tx_pruned = st->tx_rv - st->window;
		}
	}
	/* then by size, oldest first, never this write's own events (rv > st->rv) */
	while (rc >= 0 && st->tx_bytes > st->log_max) {
		rc = prune(st,
		           "DELETE FROM events WHERE rv IN (SELECT rv FROM events WHERE rv <= ?1"
		           " ORDER BY rv LIMIT 64) RETURNING length(CAST(doc AS BLOB))",
		           st->rv, err);
		if (rc == 0) {
			break; /* only this write's events are left */
		}
	}
	return rc < 0 ? rc : 0;
}

/* Publish committed events in revision order. A subscriber that writes (a nested
 * run_write) only queues its events behind the ones being delivered; the outermost call
 * delivers everything. */
static int deliver(rz_store_t *st)
{
	if (st->nqueue + st->npend > st->capqueue) {
		size_t cap = (st->nqueue + st->npend) * 2;
		struct pending *q = realloc(st->queue, cap * sizeof(*q));
		if (q == NULL) {
			/* committed but undeliverable: watchers must resync from the log */
			pending_clear(st);
			return 0;
		}
		st->queue = q;
		st->capqueue = cap;
	}
	if (st->npend > 0) { /* a write that changed nothing has no event, and maybe no queue */
		memcpy(st->queue + st->nqueue, st->pend, st->npend * sizeof(*st->pend));
	}
	st->nqueue += st->npend;
	st->npend = 0;
	if (st->delivering) {
		return 0;
	}
	st->delivering = true;
	for (size_t i = 0; i < st->nqueue; i++) {
		struct pending p = st->queue[i]; /* the queue may move while p is delivered */
		rz_event_t ev = { p.rv,
			          p.type,
			          p.kind,
			          owner_of(p.kind, p.obj),
			          meta_str(p.obj, "name"),
			          p.spec_changed,
			          p.obj,
			          p.json,
			          p.prev_labels };
		if (ev.tenant == NULL) {
			ev.tenant = "";
		}
		rz_bus_publish(st->bus, &ev);
		json_decref(p.obj);
		free(p.json);
		json_decref(p.prev_labels);
	}
	st->nqueue = 0;
	st->delivering = false;
	return 0;
}

struct write {
	const rz_write_hook_t *hook;
	rz_write_opts_t o;
	const char *text; /* the stored text of out (create, update), borrowed from its event */
	rz_store_t *st;
	int (*op)(struct write *w, rz_err_t *err);
	const rz_kind_t *k;
	const char *tenant, *name;
	const json_t *obj;
	int64_t expect_rv;
	rz_update_mode_t mode;
	json_t *out;
	bool gone;
};

static int write_tx(rz_db_t *db, void *arg, rz_err_t *err)
{
	struct write *w = arg;
	int rc = w->op(w, err);

	for (const rz_write_hook_t *h = w->hook; rc == 0 && h != NULL; h = h->next) {
		rc = h->fn(db, w->k, w->out, w->gone, h->arg, err);
	}
	return rc != 0 ? rc : finish_tx(w->st, err);
}

/* Keep a grouped write's events until its group commits. */
static int hold(rz_store_t *st)
{
	if (st->nheld + st->npend > st->capheld) {
		size_t cap = (st->nheld + st->npend) * 2;
		struct pending *q = realloc(st->held, cap * sizeof(*q));
		if (q == NULL) {
			pending_clear(st); /* watchers must resync from the log */
			return 0;
		}
		st->held = q;
		st->capheld = cap;
	}
	if (st->npend > 0) {
		memcpy(st->held + st->nheld, st->pend, st->npend * sizeof(*st->pend));
	}
	st->nheld += st->npend;
	st->npend = 0;
	return 0;
}

static void held_clear(rz_store_t *st)
{
	for (size_t i = 0; i < st->nheld; i++) {
		json_decref(st->held[i].obj);
		free(st->held[i].json);
		json_decref(st->held[i].prev_labels);
	}
	st->nheld = 0;
}

/* The group committed (status 0: publish its events) or was lost (forget them, and the
 * revisions and log sizes it took). */
static void group_done(void *arg, int status)
{
	rz_store_t *st = arg;

	if (!st->grouping) {
		return;
	}
	st->grouping = false;
	if (status != 0) {
		held_clear(st);
		st->rv = st->tx_rv = st->g_rv;
		st->pruned = st->tx_pruned = st->g_pruned;
		st->log_bytes = st->tx_bytes = st->g_bytes;
		return;
	}
	/* the held events go out as one write's would; pend is empty between writes */
	if (st->nheld > st->cappend) {
		struct pending *q = realloc(st->pend, st->nheld * sizeof(*q));
		if (q == NULL) {
			held_clear(st);
			return;
		}
		st->pend = q;
		st->cappend = st->nheld;
	}
	memcpy(st->pend, st->held, st->nheld * sizeof(*st->held));
	st->npend = st->nheld;
	st->nheld = 0;
	deliver(st);
}

/* Run one write transaction and publish its events after the commit: at once, or after
 * the loop turn's group commit for a grouped one. */
static int run_write(struct write *w, rz_err_t *err)
{
	rz_store_t *st = w->st;
	bool grouped;
	int rc;

	w->o = st->next;
	st->next = (rz_write_opts_t){ 0 };
	grouped = w->o.group && rz_db_can_group(st->db);
	if (w->o.text != NULL) {
		*w->o.text = NULL;
	}
	if (!grouped) {
		rz_db_flush(st->db); /* the group's events come first */
	}
	st->tx_rv = st->rv;
	st->tx_bytes = st->log_bytes;
	st->tx_pruned = st->pruned;
	if (grouped && !st->grouping) {
		st->g_rv = st->rv;
		st->g_pruned = st->pruned;
		st->g_bytes = st->log_bytes;
	}
	rc = grouped ? rz_db_tx_grouped(st->db, write_tx, w, err)
	             : rz_db_tx(st->db, write_tx, w, err);
	if (rc != 0) {
		st->tx_rv = st->rv;
		st->tx_bytes = st->log_bytes;
		st->tx_pruned = st->pruned;
		pending_clear(st);
		json_decref(w->out);
		w->out = NULL;
		return rc;
	}
	st->rv = st->tx_rv;
	st->log_bytes = st->tx_bytes;
	st->pruned = st->tx_pruned;
	if (w->o.text != NULL && w->text != NULL) {
		*w->o.text = strdup(w->text); /* NULL when out of memory: the caller dumps out */
	}
	if (grouped) {
		st->grouping = true;
		return hold(st);
	}
	return deliver(st);
}

/* ------------------------------------------------------------------ write operations */

/* The owner (a tenant, a user) must exist and not be on its way out. */
static int owner_usable(rz_store_t *st, const rz_kind_t *k, const char *owner, rz_err_t *err)
{
	const rz_kind_t *ok = rz_kind_owner(k);
	json_t *o = NULL;
	int rc = rz__store_read_doc(st, ok, "", owner, &o, err);

	if (rc == 0 && meta_str(o, "deletionTimestamp") != NULL) {
		rc = rz_err_set(err, RZ_ETERMINATING,
		                "unable to create new content in %s %s because it is being deleted",
		                ok->singular, owner);
	}
	json_decref(o);
	return rc;
}

static int conflict(const rz_kind_t *k, const char *name, rz_err_t *err)
{
	return rz_err_set(err, RZ_ECONFLICT,
	                  "Operation cannot be fulfilled on %s \"%s\": the object has been "
	                  "modified; please apply your changes to the latest version and try again",
	                  k->plural, name);
}

/* Add the kind's finalizers to the object's list, keeping the user's order first. */
static void add_finalizers(const rz_kind_t *k, json_t *meta)
{
	json_t *list = json_object_get(meta, "finalizers");

	for (const char *const *f = k->finalizers; f != NULL && *f != NULL; f++) {
		bool have = false;
		size_t i;
		json_t *v;
		if (list == NULL) {
			list = json_array();
			json_object_set_new(meta, "finalizers", list);
		}
		json_array_foreach(list, i, v)
		{
			have = have ||
			       strcmp(json_string_value(v) ? json_string_value(v) : "", *f) == 0;
		}
		if (!have) {
			json_array_append_new(list, json_string(*f));
		}
	}
}

static int op_create(struct write *w, rz_err_t *err)
{
	json_t *obj = json_deep_copy(w->obj);
	json_t *meta = json_object_get(obj, "metadata");
	const char *name = meta_str(obj, "name");
	const char *field = rz_kind_owner_field(w->k);
	const char *tenant = field ? meta_str(obj, field) : NULL;
	json_t *existing = NULL;
	char uid[37], now[32];
	const char *json;
	int rc;

	w->out = obj;
	if (obj == NULL || meta == NULL || name == NULL) {
		return rz_err_set(err, REZUS_EINTERNAL, "store: create without metadata.name");
	}
	if (field != NULL) {
		rc = tenant != NULL ? owner_usable(w->st, w->k, tenant, err)
		                    : rz_err_set(err, REZUS_EINTERNAL, "store: no %s", field);
		if (rc == RZ_ETERMINATING &&
		    (strcmp(w->k->kind, "Run") == 0 || strcmp(w->k->kind, "Event") == 0)) {
			rc = 0; /* the teardown of a tenant is itself a run, and its events say how
			           it goes */
		}
		if (rc != 0) {
			return rc;
		}
	}
	for (size_t i = 0; i < 2; i++) {
		const char *other = i == 0 ? "tenant" : "user";
		if (field == NULL || strcmp(field, other) != 0) {
			json_object_del(meta, other); /* only the kind's own owner field is kept */
		}
	}
	if (w->k->scope == RZ_SCOPE_TENANT) { /* the tenant as Kubernetes clients read it */
		json_object_set_new(meta, "namespace", json_string(tenant));
	} else {
		json_object_del(meta, "namespace");
	}
	rc = rz__store_read_doc(w->st, w->k, tenant, name, &existing, err);
	json_decref(existing);
	if (rc == 0) {
		return rz_err_set(err, -EEXIST, "%s \"%s\" already exists", w->k->plural, name);
	}
	if (rc != RZ_ENOTFOUND) {
		return rc;
	}
	json_object_set_new(obj, "apiVersion", json_string(RZ_API_VERSION));
	json_object_set_new(obj, "kind", json_string(w->k->kind));
	new_uid(uid);
	rz_time_now(now, sizeof(now));
	json_object_set_new(meta, "uid", json_string(uid));
	json_object_set_new(meta, "generation", json_integer(1));
	json_object_set_new(meta, "creationTimestamp", json_string(now));
	json_object_del(meta, "deletionTimestamp");
	json_object_del(meta, "generateName");
	if (json_array_size(json_object_get(meta, "managedFields")) == 0) {
		json_object_del(meta, "managedFields"); /* [] is no managers */
	}
	add_finalizers(w->k, meta);
	json_object_del(obj, "status");
	if (w->k->initial_status != NULL) {
		json_object_set_new(obj, "status", json_loads(w->k->initial_status, 0, NULL));
	}
	rz_conditions_derive(w->k, obj, now);
	json = emit(w->st, RZ_EV_ADDED, w->k, obj, true, NULL, err);
	if (json == NULL || check_size(obj, json, err) != 0) {
		return err->code;
	}
	w->text = json;
	return put_row(w->st, w->k, obj, json, true, err);
}

/* Tenants and users own objects (their node groups, their tokens). */
static bool owns_children(const rz_kind_t *k)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);

	for (size_t i = 0; i < n; i++) {
		if (rz_kind_owner(&kinds[i]) == k) {
			return true;
		}
	}
	return false;
}

/* Remove obj; an owner (a Tenant, a User) takes the objects it owns with it. */
static int remove_object(struct write *w, json_t *obj, rz_err_t *err)
{
	static const char children[] = "SELECT kind, doc FROM objects WHERE tenant = ?1"
	                               " ORDER BY kind, name";
	json_t *list = json_array();
	const char *json;
	size_t i;
	json_t *child;
	int rc = 0;

	if (owns_children(w->k)) {
		rz_stmt_t *s = rz_db_stmt(w->st->db, children, err);
		if (s == NULL) {
			json_decref(list);
			return err->code;
		}
		rz_stmt_bind_text(s, 1, meta_str(obj, "name"));
		while ((rc = rz_stmt_step(s, err)) == 1) {
			json_t *c = load_doc(rz_stmt_text(s, 1), err);
			if (c == NULL) {
				rc = RZ_EDB; /* never leave a child behind its tenant */
				break;
			}
			const rz_kind_t *ck = rz_kind_by_name(rz_stmt_text(s, 0));
			if (ck == NULL || rz_kind_owner(ck) != w->k) {
				json_decref(c); /* same name, other owner kind: not ours */
				continue;
			}
			json_object_set_new(c, "kind", json_string(rz_stmt_text(s, 0)));
			json_array_append_new(list, c);
		}
		rz_stmt_done(s);
	}
	json_array_foreach(list, i, child)
	{
		const rz_kind_t *ck =
		    rz_kind_by_name(json_string_value(json_object_get(child, "kind")));
		if (rc < 0 || ck == NULL) {
			continue;
		}
		json = emit(w->st, RZ_EV_DELETED, ck, child, true, NULL, err);
		rc = json == NULL
		         ? err->code
		         : drop_row(w->st, ck, owner_of(ck, child), meta_str(child, "name"), err);
	}
	json_decref(list);
	if (rc < 0) {
		return rc;
	}
	json = emit(w->st, RZ_EV_DELETED, w->k, obj, true, NULL, err);
	if (json == NULL) {
		return err->code;
	}
	w->gone = true;
	return drop_row(w->st, w->k, scope_tenant(w->k, w->tenant), w->name, err);
}

static bool finalizers_empty(const json_t *obj)
{
	return json_array_size(json_object_get(json_object_get(obj, "metadata"), "finalizers")) ==
	       0;
}

/* metadata.managedFields of in_meta into meta when the write carries them (the API computes
 * them for every write of its own: [] when no manager is left); absent, they stay as were. */
static void take_managed(json_t *meta, const json_t *in_meta)
{
	json_t *m = json_object_get(in_meta, "managedFields");

	if (m == NULL) {
		return;
	}
	if (json_array_size(m) == 0) {
		json_object_del(meta, "managedFields");
	} else {
		json_object_set_new(meta, "managedFields", json_deep_copy(m));
	}
}

/* The new object for an update: spec and user metadata, or status, from w->obj; the
 * managers of either. */
static json_t *updated(struct write *w, const json_t *cur, bool *spec_changed)
{
	static const char *const user_meta[] = { "labels", "annotations", "finalizers" };
	/* Shallow: next shares with cur what the write does not replace (status, the system's
	 * metadata): cur is never modified (it may be the API's, shared with the cache), and
	 * neither are the written object's members after the write, except metadata (its own
	 * copy here: the revision goes in). */
	json_t *next = json_copy((json_t *)cur);
	json_t *meta = json_copy(json_object_get(cur, "metadata"));
	const json_t *in_meta = json_object_get(w->obj, "metadata");
	const char *part = w->mode == RZ_UPDATE_STATUS ? "status" : "spec";
	json_t *v = json_object_get(w->obj, part);

	*spec_changed = false;
	if (next == NULL || meta == NULL) {
		json_decref(next);
		json_decref(meta);
		return NULL;
	}
	if (json_object_set_new(next, "metadata", meta) != 0) { /* it took meta either way */
		json_decref(next);
		return NULL;
	}
	if (v != NULL) {
		json_object_set_new(next, part, json_deep_copy(v));
	} else {
		json_object_del(next, part);
	}
	take_managed(meta, in_meta);
	if (w->mode == RZ_UPDATE_STATUS) { /* the kind's top-level members go with status */
		for (const rz_field_t *f = w->k->top; f != NULL && f->name != NULL; f++) {
			json_t *t = json_object_get(w->obj, f->name);
			if (t != NULL) {
				json_object_set_new(next, f->name, json_deep_copy(t));
			} else {
				json_object_del(next, f->name);
			}
		}
		return next;
	}
	for (size_t i = 0; i < sizeof(user_meta) / sizeof(user_meta[0]); i++) {
		json_t *m = json_object_get(in_meta, user_meta[i]);
		if (m != NULL && !json_is_null(m)) {
			json_object_set_new(meta, user_meta[i], json_deep_copy(m));
		} else {
			json_object_del(meta, user_meta[i]);
		}
	}
	if (!json_equal(json_object_get(cur, "spec"), json_object_get(next, "spec"))) {
		json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
		json_object_set_new(meta, "generation", json_integer(gen + 1));
		*spec_changed = true;
	}
	return next;
}

/* The stored revision of an object: > 0, 0 when there is none, or the error. */
static int64_t stored_rv(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                         rz_err_t *err)
{
	static const char sql[] = "SELECT rv FROM objects"
	                          " WHERE kind = ?1 AND tenant = ?2 AND name = ?3";
	rz_stmt_t *s = rz_db_stmt(st->db, sql, err);
	int64_t rv;
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, scope_tenant(k, tenant));
	rz_stmt_bind_text(s, 3, name);
	rc = rz_stmt_step(s, err);
	rv = rc == 1 ? rz_stmt_int64(s, 0) : rc;
	rz_stmt_done(s);
	return rv;
}

/* The current object: the caller's copy while it is still the stored revision (no parse),
 * else read. */
static int read_current(struct write *w, json_t **cur, rz_err_t *err)
{
	const json_t *hint = w->o.current;

	if (hint != NULL && json_is_object(hint) && rz_object_rv(hint) > 0 &&
	    stored_rv(w->st, w->k, w->tenant, w->name, err) == rz_object_rv(hint)) {
		*cur = json_incref((json_t *)hint);
		return 0;
	}
	return rz__store_read_doc(w->st, w->k, w->tenant, w->name, cur, err);
}

static int op_update(struct write *w, rz_err_t *err)
{
	json_t *cur = NULL, *next, *prev = NULL;
	bool spec_changed;
	const char *json;
	int rc = read_current(w, &cur, err);

	if (rc != 0) {
		return rc;
	}
	if (w->expect_rv > 0 && w->expect_rv != rz_object_rv(cur)) {
		json_decref(cur);
		return conflict(w->k, w->name, err);
	}
	next = updated(w, cur, &spec_changed);
	if (next != NULL) {
		char now[32];
		json_t *ns = json_object_get(next, "status");
		const json_t *had = json_object_get(json_object_get(cur, "status"), "conditions");
		/* a writer that leaves the conditions out keeps them: derived from the stored
		 * ones, their transition times stay (not "now", which made an unchanged write a
		 * new revision whenever the clock had moved on) */
		if (json_is_object(ns) && json_object_get(ns, "conditions") == NULL &&
		    json_is_array(had)) {
			json_object_set_new(ns, "conditions", json_deep_copy(had));
		}
		rz_time_now(now, sizeof(now));
		rz_conditions_derive(w->k, next, now);
	}
	if (next == NULL || json_equal(cur, next)) {
		json_decref(next);
		/* nothing changed: no new revision; the caller's copy, not one the cache shares */
		w->out = cur == w->o.current ? json_deep_copy(cur) : json_incref(cur);
		json_decref(cur);
		return next == NULL || w->out == NULL
		           ? rz_err_set(err, -ENOMEM, "store: out of memory")
		           : 0;
	}
	{ /* labels absent and empty are the same labels */
		json_t *was = json_object_get(json_object_get(cur, "metadata"), "labels");
		json_t *now = json_object_get(json_object_get(next, "metadata"), "labels");
		bool same = was != NULL && now != NULL
		                ? json_equal(was, now)
		                : json_object_size(was) == 0 && json_object_size(now) == 0;
		if (!same) {
			prev = was ? json_incref(was) : json_object(); /* read only */
		}
	}
	json_decref(cur);
	w->out = next;
	if (meta_str(next, "deletionTimestamp") != NULL && finalizers_empty(next)) {
		json_decref(prev);
		return remove_object(w, next, err);
	}
	json = emit(w->st, RZ_EV_MODIFIED, w->k, next, spec_changed, prev, err);
	if (json == NULL || check_size(next, json, err) != 0) {
		return err->code;
	}
	w->text = json;
	return put_row(w->st, w->k, next, json, false, err);
}

static int op_delete(struct write *w, rz_err_t *err)
{
	json_t *cur = NULL;
	json_t *meta;
	char now[32];
	const char *json;
	int rc = rz__store_read_doc(w->st, w->k, w->tenant, w->name, &cur, err);

	if (rc != 0) {
		return rc;
	}
	w->out = cur;
	if (w->expect_rv > 0 && w->expect_rv != rz_object_rv(cur)) {
		return conflict(w->k, w->name, err);
	}
	if (finalizers_empty(cur)) {
		return remove_object(w, cur, err);
	}
	if (meta_str(cur, "deletionTimestamp") != NULL) {
		return 0; /* already being deleted */
	}
	meta = json_object_get(cur, "metadata");
	rz_time_now(now, sizeof(now));
	json_object_set_new(meta, "deletionTimestamp", json_string(now));
	json_object_set_new(
	    meta, "generation",
	    json_integer(json_integer_value(json_object_get(meta, "generation")) + 1));
	json = emit(w->st, RZ_EV_MODIFIED, w->k, cur, true, NULL, err);
	return json == NULL ? err->code : put_row(w->st, w->k, cur, json, false, err);
}

int rz_store_create(rz_store_t *st, const rz_kind_t *k, const json_t *obj,
                    const rz_write_hook_t *hook, json_t **out, rz_err_t *err)
{
	struct write w = { .hook = hook, .st = st, .op = op_create, .k = k, .obj = obj };
	int rc = run_write(&w, err);

	*out = w.out;
	return rc;
}

int rz_store_update(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                    const json_t *obj, int64_t expect_rv, rz_update_mode_t mode,
                    const rz_write_hook_t *hook, json_t **out, bool *gone, rz_err_t *err)
{
	struct write w = { .hook = hook,
		           .st = st,
		           .op = op_update,
		           .k = k,
		           .tenant = scope_tenant(k, tenant),
		           .name = name,
		           .obj = obj,
		           .expect_rv = expect_rv,
		           .mode = mode };
	int rc = run_write(&w, err);

	*out = w.out;
	if (gone != NULL) {
		*gone = w.gone;
	}
	return rc;
}

int rz_store_delete(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                    int64_t expect_rv, const rz_write_hook_t *hook, json_t **out, bool *gone,
                    rz_err_t *err)
{
	struct write w = { .hook = hook,
		           .st = st,
		           .op = op_delete,
		           .k = k,
		           .tenant = scope_tenant(k, tenant),
		           .name = name,
		           .expect_rv = expect_rv };
	int rc = run_write(&w, err);

	*out = w.out;
	*gone = w.gone;
	return rc;
}

/* ------------------------------------------------------------------ lifecycle */

int rz_store_new(rz_store_t **out, rz_db_t *db, rz_bus_t *bus, int64_t window, rz_err_t *err)
{
	rz_store_t *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (st == NULL) {
		return rz_err_set(err, -ENOMEM, "store: out of memory");
	}
	st->db = db;
	st->bus = bus;
	st->window = window > 0 ? window : 1;
	st->rv = rz__store_scalar(st, "SELECT rv FROM revision WHERE id = 1", -1);
	if (st->rv < 0) {
		free(st);
		return rz_err_set(err, RZ_EDB, "store: cannot read the revision counter");
	}
	st->tx_rv = st->rv;
	st->log_max = RZ_EVENT_LOG_MAX;
	rz_db_set_group_fn(db, group_done, st);
	st->log_bytes = (uint64_t)rz__store_scalar(
	    st, "SELECT coalesce(sum(length(CAST(doc AS BLOB))), 0) FROM events", 0);
	*out = st;
	return 0;
}

void rz_store_set_log_max(rz_store_t *st, uint64_t max_bytes)
{
	st->log_max = max_bytes > 0 ? max_bytes : RZ_EVENT_LOG_MAX;
}

uint64_t rz_store_log_bytes(const rz_store_t *st)
{
	return st->log_bytes;
}

void rz_store_after_durable(rz_store_t *st, void (*fn)(void *arg, int status), void *arg)
{
	rz_db_after_durable(st != NULL ? st->db : NULL, fn, arg);
}

void rz_store_next(rz_store_t *st, const rz_write_opts_t *o)
{
	if (st != NULL) {
		st->next = o != NULL ? *o : (rz_write_opts_t){ 0 };
	}
}

void rz_store_free(rz_store_t *st)
{
	if (st != NULL) {
		/* the group commits; its events have nobody left to hear them */
		rz_db_set_group_fn(st->db, NULL, NULL);
		rz_db_flush(st->db);
		held_clear(st);
		free(st->held);
		pending_clear(st);
		free(st->pend);
		for (size_t i = 0; i < st->nqueue; i++) {
			json_decref(st->queue[i].obj);
			free(st->queue[i].json);
		}
		free(st->queue);
		for (size_t i = 0; i < CACHE_SLOTS; i++) {
			cache_clear(&st->cache[i]);
		}
		free(st);
	}
}
