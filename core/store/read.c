/* core/store/read.c - reading resource objects: one, a page of a list, a scan, counts, the
 * newest by a field, and the event log replayed (core/store/store.h). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store.h"
#include "core/store/store-int.h"

/* ------------------------------------------------------------------ reads */

/* The object's row (its doc) stepped to: *rc is 1 with the row, 0 with none (err says not
 * found), or an error; the statement to rz_stmt_done, or NULL when it could not be made. */
static rz_stmt_t *doc_row(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                          int *rc, rz_err_t *err)
{
	static const char sql[] = "SELECT doc FROM objects"
	                          " WHERE kind = ?1 AND tenant = ?2 AND name = ?3";
	rz_stmt_t *s = rz_db_stmt(st->db, sql, err);

	if (s == NULL) {
		*rc = err->code;
		return NULL;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, scope_tenant(k, tenant));
	rz_stmt_bind_text(s, 3, name);
	*rc = rz_stmt_step(s, err);
	if (*rc == 0) {
		*rc = rz_err_set(err, RZ_ENOTFOUND, "%s \"%s\" not found", k->plural, name);
	}
	return s;
}

int rz__store_read_doc(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                       json_t **out, rz_err_t *err)
{
	int rc;
	rz_stmt_t *s = doc_row(st, k, tenant, name, &rc, err);

	*out = NULL;
	if (rc == 1) {
		*out = load_doc(rz_stmt_text(s, 0), err);
		rc = *out ? 0 : RZ_EDB;
	}
	if (s != NULL) {
		rz_stmt_done(s);
	}
	return rc;
}

int rz_store_get(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                 json_t **out, rz_err_t *err)
{
	return rz__store_read_doc(st, k, tenant, name, out, err);
}

int rz_store_get_shared(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                        json_t **out, rz_err_t *err)
{
	static const char sql[] = "SELECT rv, doc FROM objects"
	                          " WHERE kind = ?1 AND tenant = ?2 AND name = ?3";
	rz_stmt_t *s = rz_db_stmt(st->db, sql, err);
	const char *owner = scope_tenant(k, tenant);
	int rc;

	*out = NULL;
	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, owner);
	rz_stmt_bind_text(s, 3, name);
	rc = rz_stmt_step(s, err);
	if (rc == 1) {
		int64_t rv = rz_stmt_int64(s, 0);
		const char *doc = rz_stmt_text(s, 1);
		size_t len = doc ? strlen(doc) : 0;

		*out = rz__store_cache_get(st, k->kind, owner, name, rv, len);
		if (*out == NULL && doc != NULL) {
			*out = load_doc(doc, err);
			if (*out != NULL) {
				rz__store_cache_put(st, k->kind, owner, name, rv, len,
				                    json_incref(*out));
			}
		}
		rc = *out ? 0 : RZ_EDB;
	} else if (rc == 0) {
		rc = rz_err_set(err, RZ_ENOTFOUND, "%s \"%s\" not found", k->plural, name);
	}
	rz_stmt_done(s);
	return rc;
}

int rz_store_get_text(rz_store_t *st, const rz_kind_t *k, const char *tenant, const char *name,
                      char **text, size_t *len, rz_err_t *err)
{
	int rc;
	rz_stmt_t *s = doc_row(st, k, tenant, name, &rc, err);

	*text = NULL;
	*len = 0;
	if (rc == 1) {
		const char *doc = rz_stmt_text(s, 0);
		size_t n = doc ? strlen(doc) : 0;

		if (doc == NULL || (*text = malloc(n + 2)) == NULL) {
			rc = rz_err_set(err, RZ_EDB, "%s \"%s\": cannot be read", k->plural, name);
		} else {
			memcpy(*text, doc, n + 1);
			*len = n;
			rc = 0;
		}
	}
	if (s != NULL) {
		rz_stmt_done(s);
	}
	return rc;
}

static bool list_match(const rz_list_opts_t *o, const json_t *obj)
{
	const json_t *meta = json_object_get(obj, "metadata");

	if (o->labels != NULL && !rz_selector_match(o->labels, json_object_get(meta, "labels"))) {
		return false;
	}
	return o->fields == NULL || rz_selector_match_fields(o->fields, obj);
}

/* A range of one kind in (tenant, name) order, after a key, as two statements, so that a
 * tenant's list searches (kind, tenant) in the primary key instead of every object of the
 * kind: "(?2 IS NULL OR tenant = ?2)" defeats the index, and the observer lists each
 * tenant's objects on every observation. ?5 bounds the rows (-1: no bound). */
static const char range_one[] = "SELECT tenant, name, doc FROM objects"
                                " WHERE kind = ?1 AND tenant = ?2 AND name > ?4 AND ?3 IS NOT NULL"
                                " ORDER BY name LIMIT ?5";
static const char range_all[] = "SELECT tenant, name, doc FROM objects"
                                " WHERE kind = ?1 AND ?2 IS NULL AND (tenant, name) > (?3, ?4)"
                                " ORDER BY tenant, name LIMIT ?5";

static rz_stmt_t *range_stmt(rz_store_t *st, const rz_kind_t *k, const char *tenant,
                             const char *after_tenant, const char *after_name, int64_t max,
                             rz_err_t *err)
{
	rz_stmt_t *s;

	tenant = k->scope != RZ_SCOPE_GLOBAL ? tenant : "";
	s = rz_db_stmt(st->db, tenant != NULL ? range_one : range_all, err);
	if (s == NULL) {
		return NULL;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, tenant);
	rz_stmt_bind_text(s, 3, after_tenant ? after_tenant : "");
	rz_stmt_bind_text(s, 4, after_name ? after_name : "");
	rz_stmt_bind_int64(s, 5, max);
	if (tenant != NULL && after_tenant != NULL) {
		/* in one tenant, "after (t, n)" is: every name before t, names after n at t,
		 * nothing past it */
		int c = strcmp(after_tenant, tenant);
		rz_stmt_bind_text(s, 4, c < 0 ? "" : after_name ? after_name : "");
		if (c > 0) {
			rz_stmt_bind_null(s, 3);
		}
	}
	return s;
}

int rz_store_list(rz_store_t *st, const rz_kind_t *k, const rz_list_opts_t *o, json_t **items,
                  bool *more, rz_err_t *err)
{
	rz_stmt_t *s = range_stmt(st, k, o->tenant, o->after_tenant, o->after_name, -1, err);
	int rc;

	*more = false;
	*items = json_array();
	if (s == NULL || *items == NULL) {
		json_decref(*items);
		*items = NULL;
		rz_stmt_done(s);
		return s == NULL ? err->code : rz_err_set(err, -ENOMEM, "store: out of memory");
	}
	while ((rc = rz_stmt_step(s, err)) == 1) {
		json_t *obj;
		if (o->keep != NULL && rz_stmt_text(s, 0) != NULL && rz_stmt_text(s, 1) != NULL &&
		    !o->keep(o->keep_arg, rz_stmt_text(s, 0), rz_stmt_text(s, 1))) {
			continue;
		}
		obj = load_doc(rz_stmt_text(s, 2), err);
		if (obj == NULL) {
			rc = RZ_EDB;
			break;
		}
		if (!list_match(o, obj)) {
			json_decref(obj);
			continue;
		}
		if (o->limit > 0 && json_array_size(*items) == o->limit) {
			json_decref(obj);
			*more = true;
			rc = 0;
			break;
		}
		json_array_append_new(*items, obj);
	}
	rz_stmt_done(s);
	if (rc < 0) {
		json_decref(*items);
		*items = NULL;
		return rc;
	}
	return 0;
}

/* Each row (tenant, name, doc) of s through fn until fn returns non-zero; then s is done.
 * The rows given (>= 0), or a negative error (fn's or the database's). */
static int walk_rows(rz_stmt_t *s, int (*fn)(void *arg, const rz_store_row_t *row), void *arg,
                     rz_err_t *err)
{
	int rc, n = 0;

	while ((rc = rz_stmt_step(s, err)) == 1) {
		rz_store_row_t row = { .tenant = rz_stmt_text(s, 0),
			               .name = rz_stmt_text(s, 1),
			               .doc = rz_stmt_text(s, 2) };
		if (row.tenant == NULL || row.name == NULL || row.doc == NULL) {
			rc = rz_err_set(err, -ENOMEM, "store: out of memory");
			break;
		}
		row.len = strlen(row.doc);
		n++;
		if ((rc = fn(arg, &row)) != 0) {
			break;
		}
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : n;
}

int rz_store_scan(rz_store_t *st, const rz_kind_t *k, const rz_scan_opts_t *o,
                  int (*fn)(void *arg, const rz_store_row_t *row), void *arg, rz_err_t *err)
{
	rz_stmt_t *s = range_stmt(st, k, o->tenant, o->after_tenant, o->after_name,
	                          o->max > 0 ? (int64_t)o->max : RZ_SCAN_PAGE, err);

	if (s == NULL) {
		return err->code;
	}
	return walk_rows(s, fn, arg, err);
}

int rz_store_scan_plan(rz_store_t *st, bool one_tenant, char *out, size_t size, rz_err_t *err)
{
	char sql[sizeof(range_one) + sizeof(range_all) + 32];
	rz_stmt_t *s;
	size_t n = 0;
	int rc;

	snprintf(sql, sizeof(sql), "EXPLAIN QUERY PLAN %s", one_tenant ? range_one : range_all);
	s = rz_db_stmt(st->db, sql, err);
	if (s == NULL) {
		return err->code;
	}
	out[0] = '\0';
	while ((rc = rz_stmt_step(s, err)) == 1 && n < size) {
		const char *d = rz_stmt_text(s, 3);
		n += (size_t)snprintf(out + n, size - n, "%s%s", n ? "\n" : "", d ? d : "");
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

json_t *rz_store_list_all(rz_store_t *st, const char *kind, const char *tenant)
{
	rz_list_opts_t o = { .tenant = tenant };
	json_t *items = NULL;
	bool more;
	rz_err_t err = { 0 };

	if (rz_store_list(st, rz_kind_by_name(kind), &o, &items, &more, &err) != 0) {
		return json_array();
	}
	return items;
}

int64_t rz_store_revision(const rz_store_t *st)
{
	return st->rv;
}

int64_t rz__store_scalar(rz_store_t *st, const char *sql, int64_t fallback)
{
	rz_err_t err = { 0 };
	rz_stmt_t *s = rz_db_stmt(st->db, sql, &err);
	int64_t v = fallback;

	if (s != NULL && rz_stmt_step(s, &err) == 1 && !rz_stmt_is_null(s, 0)) {
		v = rz_stmt_int64(s, 0);
	}
	rz_stmt_done(s);
	return v;
}

int64_t rz_store_oldest(rz_store_t *st)
{
	return rz__store_scalar(st, "SELECT min(rv) FROM events", st->rv + 1);
}

int64_t rz_store_count(rz_store_t *st)
{
	return rz__store_scalar(st, "SELECT count(*) FROM objects", 0);
}

int rz_store_count_by(rz_store_t *st, const rz_kind_t *k, const char *path,
                      void (*fn)(void *arg, const char *value, int64_t n), void *arg, rz_err_t *err)
{
	static const char sql[] = "SELECT json_extract(doc, ?2), count(*) FROM objects"
	                          " WHERE kind = ?1 GROUP BY 1 ORDER BY 1";
	rz_stmt_t *s = rz_db_stmt(st->db, sql, err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, path);
	while ((rc = rz_stmt_step(s, err)) == 1) {
		fn(arg, rz_stmt_text(s, 0), rz_stmt_int64(s, 1));
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

int rz_store_count_kept(rz_store_t *st, const rz_kind_t *k, const char *path,
                        bool (*keep)(void *arg, const char *tenant, const char *name),
                        void *keep_arg, void (*fn)(void *arg, const char *value, int64_t n),
                        void *arg, rz_err_t *err)
{
	static const char sql[] = "SELECT tenant, name, json_extract(doc, ?2) FROM objects"
	                          " WHERE kind = ?1 ORDER BY tenant, name";
	rz_stmt_t *s = rz_db_stmt(st->db, sql, err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, path);
	while ((rc = rz_stmt_step(s, err)) == 1) {
		const char *tenant = rz_stmt_text(s, 0), *name = rz_stmt_text(s, 1);
		if (tenant != NULL && name != NULL && keep(keep_arg, tenant, name)) {
			fn(arg, rz_stmt_text(s, 2), 1);
		}
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

/* The text a compact document holds for member "name": value (the last member of path). */
static char *member_text(const char *path, const char *value)
{
	const char *dot = strrchr(path, '.');
	json_t *v = json_string(value);
	char *enc = v != NULL ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	size_t len = enc != NULL && dot != NULL ? strlen(dot + 1) + strlen(enc) + 4 : 0;
	char *out = len > 0 ? malloc(len) : NULL;

	if (out != NULL) {
		snprintf(out, len, "\"%s\":%s", dot + 1, enc);
	}
	free(enc);
	json_decref(v);
	return out;
}

int rz_store_newest(rz_store_t *st, const rz_kind_t *k, const char *path, const char *const *values,
                    const char *order, size_t limit,
                    int (*fn)(void *arg, const rz_store_row_t *row), void *arg, rz_err_t *err)
{
	static const char by_rowid[] =
	    "SELECT tenant, name, doc FROM objects NOT INDEXED WHERE kind = ?1"
	    " AND (instr(doc, ?3) > 0 OR instr(doc, ?4) > 0 OR instr(doc, ?5) > 0"
	    " OR instr(doc, ?6) > 0) AND json_extract(doc, ?2) IN (?7, ?8, ?9, ?10)"
	    " ORDER BY rowid DESC LIMIT ?11";
	static const char by_member[] =
	    "SELECT tenant, name, doc FROM objects NOT INDEXED WHERE kind = ?1"
	    " AND (instr(doc, ?3) > 0 OR instr(doc, ?4) > 0 OR instr(doc, ?5) > 0"
	    " OR instr(doc, ?6) > 0) AND json_extract(doc, ?2) IN (?7, ?8, ?9, ?10)"
	    " ORDER BY json_extract(doc, ?12) DESC, rowid DESC LIMIT ?11";
	const char *sql = order != NULL ? by_member : by_rowid;
	char *needle[RZ_NEWEST_VALUES] = { NULL };
	rz_stmt_t *s = NULL;
	int rc = 0;
	size_t nv = 0;

	while (values[nv] != NULL && nv < RZ_NEWEST_VALUES) {
		if ((needle[nv] = member_text(path, values[nv])) == NULL) {
			rc = rz_err_set(err, -ENOMEM, "store: out of memory");
			goto out;
		}
		nv++;
	}
	if (values[nv] != NULL) {
		rc = rz_err_set(err, -EINVAL, "store: at most %d values", RZ_NEWEST_VALUES);
		goto out;
	}
	if ((s = rz_db_stmt(st->db, sql, err)) == NULL) {
		rc = err->code;
		goto out;
	}
	rz_stmt_bind_text(s, 1, k->kind);
	rz_stmt_bind_text(s, 2, path);
	for (size_t i = 0; i < nv; i++) {
		rz_stmt_bind_text(s, 3 + (int)i, needle[i]);
		rz_stmt_bind_text(s, 7 + (int)i, values[i]);
	}
	rz_stmt_bind_int64(s, 11, (int64_t)limit);
	if (order != NULL) {
		rz_stmt_bind_text(s, 12, order);
	}
	rc = walk_rows(s, fn, arg, err);
out:
	for (size_t i = 0; i < RZ_NEWEST_VALUES; i++) {
		free(needle[i]);
	}
	return rc;
}

int rz_store_replay(rz_store_t *st, int64_t after, int (*fn)(const rz_event_t *ev, void *arg),
                    void *arg, rz_err_t *err)
{
	static const char sql[] = "SELECT rv, type, kind, tenant, name, spec_changed, doc,"
	                          " prev_labels FROM events WHERE rv > ?1 ORDER BY rv";
	int64_t oldest = rz_store_oldest(st);
	rz_stmt_t *s;
	int rc = 0, stop = 0;

	if (after < oldest - 1) { /* oldest >= 1; after + 1 would overflow at INT64_MAX */
		return rz_err_set(err, RZ_EGONE,
		                  "too old resource version: %" PRId64 " (%" PRId64 ")", after,
		                  oldest - 1);
	}
	s = rz_db_stmt(st->db, sql, err);
	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_int64(s, 1, after);
	while (stop == 0 && (rc = rz_stmt_step(s, err)) == 1) {
		const char *type = rz_stmt_text(s, 1);
		json_t *obj = load_doc(rz_stmt_text(s, 6), err);
		json_t *prev =
		    rz_stmt_is_null(s, 7) ? NULL : json_loads(rz_stmt_text(s, 7), 0, NULL);
		rz_event_t ev = { rz_stmt_int64(s, 0),
			          strcmp(type, "ADDED") == 0     ? RZ_EV_ADDED
			          : strcmp(type, "DELETED") == 0 ? RZ_EV_DELETED
			                                         : RZ_EV_MODIFIED,
			          rz_kind_by_name(rz_stmt_text(s, 2)),
			          rz_stmt_text(s, 3),
			          rz_stmt_text(s, 4),
			          rz_stmt_int64(s, 5) != 0,
			          obj,
			          rz_stmt_text(s, 6),
			          prev };
		if (obj == NULL) {
			json_decref(prev);
			rc = RZ_EDB;
			break;
		}
		stop = ev.kind ? fn(&ev, arg) : 0;
		json_decref(obj);
		json_decref(prev);
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : stop;
}
