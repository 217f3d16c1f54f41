/*
 * core/model/managed.c - field managers: metadata.managedFields decoded and encoded, Update
 * and Apply as Kubernetes' structured-merge-diff does them (managed.h), over the sets of
 * core/model/fieldset.c.
 *
 * An entry is one manager, operation and subresource (the API version is left out: there is
 * one). An Update takes what it changes from everyone: it cannot conflict. An Apply computes
 * its result first (merge, then prune what its manager dropped), compares it with the live
 * view, and only then asks who owned what it changes: the same comparison finds conflicts
 * and what to take, so a value equal to the live one changes nothing and conflicts with
 * nobody, the shared ownership Kubernetes has.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/text.h"
#include "core/model/fieldset.h"
#include "core/model/managed.h"

#define ECHO_MAX 64 /* bytes of a value quoted in a message */

static const char *const operations[] = { "Apply", "Update", NULL };
static const char *const fields_types[] = { "FieldsV1", NULL };
static const char *const subresources[] = { "", "status", NULL };

const rz_field_t rz_managed_entry_fields[] = {
	{ .name = "manager",
	  .type = RZ_F_STRING,
	  .max_len = RZ_FIELD_MANAGER_MAX,
	  .doc = "The fieldManager of the writes, else the client's User-Agent up to its first "
	         "'/'; at most 128 bytes." },
	{ .name = "operation",
	  .type = RZ_F_STRING,
	  .enums = operations,
	  .doc = "Apply (a server-side apply) or Update (any other write)." },
	{ .name = "apiVersion",
	  .type = RZ_F_STRING,
	  .max_len = 64,
	  .doc = "The API version the fields are of: rezuscloud.io/v1." },
	{ .name = "time",
	  .type = RZ_F_TIME,
	  .doc = "When the manager last changed the object (RFC 3339, UTC)." },
	{ .name = "fieldsType",
	  .type = RZ_F_STRING,
	  .enums = fields_types,
	  .doc = "How fieldsV1 is written: FieldsV1." },
	{ .name = "fieldsV1",
	  .type = RZ_F_ANY,
	  .doc = "The fields the manager owns, as Kubernetes writes them: {\"f:spec\": "
	         "{\"f:count\": {}}} owns spec.count; a list is one field." },
	{ .name = "subresource",
	  .type = RZ_F_STRING,
	  .enums = subresources,
	  .doc = "status for the writes of the status subresource; absent otherwise." },
	{ .name = NULL },
};

/* The metadata the server keeps: never in a view. */
static const char *const server_meta[] = { "name",
	                                   "generateName",
	                                   "namespace",
	                                   "tenant",
	                                   "user",
	                                   "uid",
	                                   "resourceVersion",
	                                   "generation",
	                                   "selfLink",
	                                   "creationTimestamp",
	                                   "deletionTimestamp",
	                                   "deletionGracePeriodSeconds",
	                                   "managedFields" };

/* ------------------------------------------------------------------ entries */

void rz_managed_init(rz_managed_t *m)
{
	memset(m, 0, sizeof(*m));
}

void rz_managed_fini(rz_managed_t *m)
{
	for (size_t i = 0; i < m->n; i++) {
		json_decref(m->e[i].set);
	}
	rz_managed_init(m);
}

static int find(const rz_managed_t *m, const char *manager, rz_managed_op_t op, bool status)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->e[i].op == op && m->e[i].status == status &&
		    strcmp(m->e[i].manager, manager) == 0) {
			return (int)i;
		}
	}
	return -1;
}

static void drop(rz_managed_t *m, size_t i)
{
	json_decref(m->e[i].set);
	memmove(&m->e[i], &m->e[i + 1], (m->n - i - 1) * sizeof(m->e[0]));
	m->n--;
}

/* Add an entry holding set (taken); its index, or -1 when m is full (set released). */
static int add(rz_managed_t *m, const char *manager, rz_managed_op_t op, bool status,
               const char *time, json_t *set)
{
	rz_managed_entry_t *e = &m->e[m->n];

	if (m->n >= sizeof(m->e) / sizeof(m->e[0])) {
		json_decref(set);
		return -1;
	}
	memset(e, 0, sizeof(*e));
	snprintf(e->manager, sizeof(e->manager), "%s", manager);
	snprintf(e->time, sizeof(e->time), "%s", time ? time : "");
	e->op = op;
	e->status = status;
	e->set = set;
	return (int)m->n++;
}

/* Replace entry i's set by set (taken); -ENOMEM when set is NULL. */
static int reset(rz_managed_t *m, size_t i, json_t *set)
{
	if (set == NULL) {
		return -ENOMEM;
	}
	json_decref(m->e[i].set);
	m->e[i].set = set;
	return 0;
}

static void drop_empty(rz_managed_t *m)
{
	for (size_t i = m->n; i-- > 0;) {
		if (rz_fieldset_empty(m->e[i].set)) {
			drop(m, i);
		}
	}
}

static size_t count(const rz_managed_t *m, rz_managed_op_t op)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		n += m->e[i].op == op;
	}
	return n;
}

/* The oldest Update entry but the ancient one (by time, then manager), or -1. */
static int oldest_updater(const rz_managed_t *m, int bucket)
{
	int best = -1;

	for (size_t i = 0; i < m->n; i++) {
		const rz_managed_entry_t *e = &m->e[i];
		int c;
		if (e->op != RZ_MANAGED_UPDATE || (int)i == bucket) {
			continue;
		}
		c = best < 0 ? -1 : strcmp(e->time, m->e[best].time);
		if (c < 0 || (c == 0 && strcmp(e->manager, m->e[best].manager) < 0)) {
			best = (int)i;
		}
	}
	return best;
}

/* Beyond RZ_MANAGED_MAX_UPDATERS Update entries, the oldest become RZ_MANAGED_ANCIENT, as
 * kube-apiserver caps them: the bucket takes their fields and the time of the last one. */
static int cap_updaters(rz_managed_t *m)
{
	while (count(m, RZ_MANAGED_UPDATE) > RZ_MANAGED_MAX_UPDATERS) {
		int b = find(m, RZ_MANAGED_ANCIENT, RZ_MANAGED_UPDATE, false);
		int o = oldest_updater(m, b);
		if (b < 0) { /* the oldest becomes the bucket */
			snprintf(m->e[o].manager, sizeof(m->e[o].manager), "%s",
			         RZ_MANAGED_ANCIENT);
			m->e[o].status = false;
			continue;
		}
		if (reset(m, (size_t)b, rz_fieldset_union(m->e[b].set, m->e[o].set)) != 0) {
			return -ENOMEM;
		}
		memcpy(m->e[b].time, m->e[o].time, sizeof(m->e[b].time));
		drop(m, (size_t)o);
	}
	return 0;
}

/* ------------------------------------------------------------------ decode, encode */

static const char *str_member(const json_t *e, const char *key)
{
	return json_string_value(json_object_get(e, key));
}

static int decode_entry(rz_managed_t *m, size_t i, const json_t *in, rz_err_t *err)
{
	const char *manager = str_member(in, "manager");
	const char *op = str_member(in, "operation");
	const char *ft = str_member(in, "fieldsType");
	const char *sub = str_member(in, "subresource");
	const char *time = str_member(in, "time");
	bool apply = op != NULL && strcmp(op, "Apply") == 0;
	json_t *set = NULL;
	int rc;

	if (manager == NULL || strlen(manager) > RZ_FIELD_MANAGER_MAX) {
		return rz_err_set(err, RZ_EPARSE, "managedFields[%zu].manager: missing or too long",
		                  i);
	}
	if (op == NULL || (!apply && strcmp(op, "Update") != 0)) {
		return rz_err_set(err, RZ_EPARSE,
		                  "managedFields[%zu].operation: must be Apply or Update", i);
	}
	if (ft == NULL || strcmp(ft, "FieldsV1") != 0) {
		return rz_err_set(err, RZ_EPARSE, "managedFields[%zu].fieldsType: must be FieldsV1",
		                  i);
	}
	if (sub != NULL && *sub != '\0' && strcmp(sub, "status") != 0) {
		return rz_err_set(err, RZ_EPARSE,
		                  "managedFields[%zu].subresource: unknown subresource '%s'", i,
		                  RZ_ECHO(sub, ECHO_MAX));
	}
	if (find(m, manager, apply ? RZ_MANAGED_APPLY : RZ_MANAGED_UPDATE,
	         sub != NULL && *sub != '\0') >= 0) {
		return rz_err_set(err, RZ_EPARSE, "managedFields[%zu]: a second entry of '%s'", i,
		                  manager);
	}
	rc = rz_fieldset_parse(json_object_get(in, "fieldsV1"), &set, err);
	if (rc != 0) {
		return rc;
	}
	if (add(m, manager, apply ? RZ_MANAGED_APPLY : RZ_MANAGED_UPDATE,
	        sub != NULL && *sub != '\0',
	        time != NULL && strlen(time) < RZ_MANAGED_TIME_MAX ? time : "", set) < 0) {
		return rz_err_set(err, RZ_EPARSE, "managedFields: more than %d entries",
		                  RZ_MANAGED_MAX_ENTRIES);
	}
	return 0;
}

int rz_managed_decode(rz_managed_t *m, const json_t *fields, rz_err_t *err)
{
	size_t i;
	json_t *e;
	int rc = 0;

	rz_managed_init(m);
	if (fields == NULL || json_is_null(fields)) {
		return 0;
	}
	if (!json_is_array(fields)) {
		return rz_err_set(err, RZ_EPARSE, "managedFields: expected a list");
	}
	if (json_array_size(fields) > RZ_MANAGED_MAX_ENTRIES) {
		return rz_err_set(err, RZ_EPARSE, "managedFields: more than %d entries",
		                  RZ_MANAGED_MAX_ENTRIES);
	}
	json_array_foreach(fields, i, e)
	{
		if (rc == 0) {
			rc = decode_entry(m, i, e, err);
		}
	}
	if (rc != 0) {
		rz_managed_fini(m);
	}
	return rc;
}

static int entry_cmp(const void *a, const void *b)
{
	const rz_managed_entry_t *p = *(const rz_managed_entry_t *const *)a;
	const rz_managed_entry_t *q = *(const rz_managed_entry_t *const *)b;
	int c;

	if (p->op != q->op) {
		return p->op == RZ_MANAGED_APPLY ? -1 : 1;
	}
	if ((c = strcmp(p->time, q->time)) != 0 || (c = strcmp(p->manager, q->manager)) != 0) {
		return c;
	}
	return (int)p->status - (int)q->status;
}

static json_t *encode_entry(const rz_managed_entry_t *e)
{
	json_t *out = json_object();
	json_t *fields = rz_fieldset_encode(e->set);
	int rc = out == NULL || fields == NULL;

	rc = rc || json_object_set_new(out, "manager", json_string(e->manager)) != 0;
	rc = rc ||
	     json_object_set_new(out, "operation",
	                         json_string(e->op == RZ_MANAGED_APPLY ? "Apply" : "Update")) != 0;
	rc = rc || json_object_set_new(out, "apiVersion", json_string(RZ_API_VERSION)) != 0;
	rc = rc ||
	     (e->time[0] != '\0' && json_object_set_new(out, "time", json_string(e->time)) != 0);
	rc = rc || json_object_set_new(out, "fieldsType", json_string("FieldsV1")) != 0;
	rc = rc || json_object_set(out, "fieldsV1", fields) != 0;
	rc = rc ||
	     (e->status && json_object_set_new(out, "subresource", json_string("status")) != 0);
	json_decref(fields);
	if (rc) {
		json_decref(out);
		return NULL;
	}
	return out;
}

int rz_managed_encode(const rz_managed_t *m, json_t **out, rz_err_t *err)
{
	const rz_managed_entry_t *order[sizeof(m->e) / sizeof(m->e[0])];
	json_t *list = json_array();
	size_t bytes;

	*out = NULL;
	for (size_t i = 0; i < m->n; i++) {
		order[i] = &m->e[i];
	}
	qsort(order, m->n, sizeof(order[0]), entry_cmp);
	for (size_t i = 0; list != NULL && i < m->n; i++) {
		if (json_array_append_new(list, encode_entry(order[i])) != 0) {
			json_decref(list);
			list = NULL;
		}
	}
	if (list == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	bytes = json_dumpb(list, NULL, 0, JSON_COMPACT);
	if (bytes > RZ_MANAGED_MAX_BYTES) {
		json_decref(list);
		return rz_err_set(err, -E2BIG, "would be %zu bytes (at most %u)", bytes,
		                  RZ_MANAGED_MAX_BYTES);
	}
	*out = list;
	return 0;
}

/* ------------------------------------------------------------------ views */

static bool in_list(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(key, list[i]) == 0) {
			return true;
		}
	}
	return false;
}

/* Whether a top-level member of k's objects is the server's, never in a spec write's view. */
static bool server_top(const rz_kind_t *k, const char *key)
{
	static const char *const top[] = { "apiVersion", "kind", "status", "metadata" };

	if (in_list(key, top, sizeof(top) / sizeof(top[0]))) {
		return true;
	}
	for (const rz_field_t *f = k->top; f != NULL && f->name != NULL; f++) {
		if (strcmp(key, f->name) == 0) {
			return true;
		}
	}
	return false;
}

static bool server_key(const char *key)
{
	return in_list(key, server_meta, sizeof(server_meta) / sizeof(server_meta[0]));
}

/* Remove null members from v's objects, down to RZ_FIELDSET_MAX_DEPTH, and the objects
 * that held only nulls: a null is as good as absent. */
static void strip_nulls(json_t *v, int depth)
{
	const char *k;
	json_t *x;
	void *tmp;

	if (!json_is_object(v) || depth >= RZ_FIELDSET_MAX_DEPTH) {
		return;
	}
	json_object_foreach_safe(v, tmp, k, x)
	{
		bool full = json_object_size(x) > 0;
		if (!json_is_null(x)) {
			strip_nulls(x, depth + 1);
		}
		if (json_is_null(x) || (full && json_object_size(x) == 0)) {
			json_object_del(v, k);
		}
	}
}

/* The members of obj's metadata that its writers set, into view (a copy of each). */
static int view_meta(json_t *view, const json_t *meta)
{
	json_t *out;
	const char *k;
	json_t *v;

	if (!json_is_object(meta)) {
		return meta == NULL ||
		               json_object_set_new(view, "metadata", json_deep_copy(meta)) == 0
		           ? 0
		           : -ENOMEM;
	}
	out = json_object();
	json_object_foreach((json_t *)meta, k, v)
	{
		if (out != NULL && !server_key(k) &&
		    json_object_set_new(out, k, json_deep_copy(v)) != 0) {
			json_decref(out);
			out = NULL;
		}
	}
	if (out == NULL) {
		return -ENOMEM;
	}
	if (json_object_size(out) == 0) {
		json_decref(out);
		return 0;
	}
	return json_object_set_new(view, "metadata", out) == 0 ? 0 : -ENOMEM;
}

json_t *rz_managed_view(const json_t *obj, const rz_kind_t *k, bool status)
{
	json_t *view = json_object();
	const char *key;
	json_t *v;
	int rc = view == NULL ? -ENOMEM : 0;

	if (rc == 0 && status) {
		v = json_object_get(obj, "status");
		rc = v == NULL || json_object_set_new(view, "status", json_deep_copy(v)) == 0
		         ? 0
		         : -ENOMEM;
	} else if (rc == 0) {
		json_object_foreach((json_t *)obj, key, v)
		{
			if (rc == 0 && strcmp(key, "metadata") == 0) {
				rc = view_meta(view, v);
			} else if (rc == 0 && !server_top(k, key)) {
				rc = json_object_set_new(view, key, json_deep_copy(v)) == 0
				         ? 0
				         : -ENOMEM;
			}
		}
		if (rc == 0 && k->secret_field != NULL) {
			json_object_del(json_object_get(view, "spec"), k->secret_field);
		}
	}
	if (rc != 0) {
		json_decref(view);
		return NULL;
	}
	return view;
}

int rz_managed_unview(json_t *obj, const json_t *view, const rz_kind_t *k, bool status)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *key;
	json_t *v;
	void *tmp;

	if (status) {
		v = json_object_get(view, "status");
		json_object_del(obj, "status");
		return v == NULL || json_object_set_new(obj, "status", json_deep_copy(v)) == 0
		           ? 0
		           : -ENOMEM;
	}
	json_object_foreach_safe(obj, tmp, key, v)
	{
		if (!server_top(k, key)) {
			json_object_del(obj, key);
		}
	}
	if (!json_is_object(meta)) {
		meta = json_object();
		if (json_object_set_new(obj, "metadata", meta) != 0) {
			return -ENOMEM;
		}
	}
	json_object_foreach_safe(meta, tmp, key, v)
	{
		if (!server_key(key)) {
			json_object_del(meta, key);
		}
	}
	json_object_foreach((json_t *)view, key, v)
	{
		json_t *copy = json_deep_copy(v);
		int rc = copy == NULL ? -1
		         : strcmp(key, "metadata") == 0 && json_is_object(v)
		             ? json_object_update(meta, copy)
		             : json_object_set(obj, key, copy);
		json_decref(copy);
		if (rc != 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ update */

/* Take the fields of take and of gone from every entry but keep (an index, or -1). */
static int take_from_others(rz_managed_t *m, int keep, const json_t *take, const json_t *gone)
{
	for (size_t i = 0; i < m->n; i++) {
		json_t *a;
		if ((int)i == keep) {
			continue;
		}
		a = rz_fieldset_difference(m->e[i].set, take);
		if (reset(m, i, a) != 0 || reset(m, i, rz_fieldset_difference(a, gone)) != 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

int rz_managed_update(rz_managed_t *m, const rz_managed_who_t *who, const json_t *old,
                      const json_t *new, rz_err_t *err)
{
	json_t *changed = NULL, *removed = NULL;
	int me = find(m, who->manager, RZ_MANAGED_UPDATE, who->status);
	int rc = rz_fieldset_compare(old, new, &changed, &removed);

	rc = rc != 0 ? rc : take_from_others(m, me, changed, removed);
	if (rc == 0 && me >= 0) {
		json_t *kept = rz_fieldset_difference(m->e[me].set, removed);
		rc = reset(m, (size_t)me, kept ? rz_fieldset_union(kept, changed) : NULL);
		json_decref(kept);
		if (rc == 0 && !rz_fieldset_empty(changed)) {
			snprintf(m->e[me].time, sizeof(m->e[me].time), "%s", who->now);
		}
	} else if (rc == 0 && !rz_fieldset_empty(changed)) {
		json_t *set = json_deep_copy(changed);
		rc = set == NULL ? -ENOMEM : 0;
		if (rc == 0 &&
		    add(m, who->manager, RZ_MANAGED_UPDATE, who->status, who->now, set) < 0) {
			rc = -ENOMEM; /* cannot happen: the cap leaves room for one */
		}
	}
	drop_empty(m);
	rc = rc != 0 ? rc : cap_updaters(m);
	json_decref(changed);
	json_decref(removed);
	return rc != 0 ? rz_err_set(err, rc, "out of memory") : 0;
}

/* ------------------------------------------------------------------ apply */

/* live with cfg merged in, at depth: objects member by member, anything else replaced. */
static json_t *merge(const json_t *live, const json_t *cfg, int depth)
{
	json_t *r;
	const char *k;
	json_t *v;

	if (!json_is_object(live) || !json_is_object(cfg) || depth >= RZ_FIELDSET_MAX_DEPTH) {
		return json_deep_copy(cfg);
	}
	r = json_deep_copy(live);
	json_object_foreach((json_t *)cfg, k, v)
	{
		if (r != NULL &&
		    json_object_set_new(r, k, merge(json_object_get(live, k), v, depth + 1)) != 0) {
			json_decref(r);
			r = NULL;
		}
	}
	return r;
}

/* How Kubernetes names a manager in a conflict: "\"m\"", with " with subresource \"status\""
 * and, for an Update, " using rezuscloud.io/v1". */
static void label(const rz_managed_entry_t *e, char *buf, size_t size)
{
	snprintf(buf, size, "\"%s\"%s%s%s", e->manager,
	         e->status ? " with subresource \"status\"" : "",
	         e->op == RZ_MANAGED_UPDATE ? " using " : "",
	         e->op == RZ_MANAGED_UPDATE ? RZ_API_VERSION : "");
}

struct named {
	char label[RZ_FIELD_MANAGER_MAX + 64];
	const rz_managed_entry_t *e;
};

static int named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->label, ((const struct named *)b)->label);
}

/* A cause for each field of changed that an entry but me owns, sorted by manager. Returns
 * how many, or -ENOMEM. */
static int find_conflicts(const rz_managed_t *m, int me, const json_t *changed, json_t *causes)
{
	struct named order[RZ_MANAGED_MAX_ENTRIES + 1];
	size_t n = 0, i;
	int found = 0;
	json_t *p;

	for (i = 0; i < m->n; i++) {
		if ((int)i != me) {
			label(&m->e[i], order[n].label, sizeof(order[n].label));
			order[n++].e = &m->e[i];
		}
	}
	qsort(order, n, sizeof(order[0]), named_cmp);
	for (size_t j = 0; j < n; j++) {
		json_t *both = rz_fieldset_intersection(order[j].e->set, changed);
		json_t *paths = both ? rz_fieldset_paths(both) : NULL;
		json_decref(both);
		if (paths == NULL) {
			return -ENOMEM;
		}
		json_array_foreach(paths, i, p)
		{
			json_t *c = json_pack("{s:O, s:s, s:s+}", "field", p, "reason",
			                      "FieldManagerConflict", "message", "conflict with ",
			                      order[j].label);
			if (c == NULL || json_array_append_new(causes, c) != 0) {
				json_decref(paths);
				return -ENOMEM;
			}
			found++;
		}
		json_decref(paths);
	}
	return found;
}

/* Apply's result: live and config merged, less what who's entry (me) no longer applies and
 * nobody else owns; newset is config's fields. NULL on out of memory. */
static json_t *applied(const rz_managed_t *m, int me, const json_t *live, const json_t *config,
                       const json_t *newset)
{
	json_t *merged = merge(live, config, 0);
	json_t *keep = json_deep_copy(newset), *gone = NULL;

	for (size_t i = 0; keep != NULL && i < m->n; i++) {
		if ((int)i != me) {
			json_t *u = rz_fieldset_union(keep, m->e[i].set);
			json_decref(keep);
			keep = u;
		}
	}
	if (merged != NULL && keep != NULL && me >= 0) {
		gone = rz_fieldset_difference(m->e[me].set, keep);
		if (gone == NULL) {
			json_decref(merged);
			merged = NULL;
		} else {
			rz_fieldset_prune(merged, gone, keep);
		}
	}
	if (keep == NULL) {
		json_decref(merged);
		merged = NULL;
	}
	json_decref(keep);
	json_decref(gone);
	return merged;
}

/* Make who's Apply entry (me, or -1: a new one) hold newset (taken); touched: the view
 * changed. */
static int own(rz_managed_t *m, int me, const rz_managed_who_t *who, json_t *newset, bool touched)
{
	if (me < 0) {
		return add(m, who->manager, RZ_MANAGED_APPLY, who->status, who->now, newset) < 0
		           ? -ENOMEM
		           : 0;
	}
	if (touched || !json_equal(m->e[me].set, newset)) {
		snprintf(m->e[me].time, sizeof(m->e[me].time), "%s", who->now);
	}
	return reset(m, (size_t)me, newset);
}

int rz_managed_apply(rz_managed_t *m, const rz_managed_who_t *who, bool force, const json_t *live,
                     const json_t *config, json_t **result, json_t *conflicts, rz_err_t *err)
{
	int me = find(m, who->manager, RZ_MANAGED_APPLY, who->status);
	json_t *cfg = json_deep_copy(config), *newset = NULL, *merged = NULL;
	json_t *changed = NULL, *removed = NULL;
	int rc = cfg == NULL ? -ENOMEM : 0, n;

	*result = NULL;
	if (me < 0 && count(m, RZ_MANAGED_APPLY) >= RZ_MANAGED_MAX_APPLIERS) {
		json_decref(cfg);
		return rz_err_set(err, -E2BIG, "at most %d managers may apply to one object",
		                  RZ_MANAGED_MAX_APPLIERS);
	}
	if (rc == 0) {
		strip_nulls(cfg, 0);
		newset = rz_fieldset_of(cfg);
		merged = newset ? applied(m, me, live, cfg, newset) : NULL;
		rc = merged == NULL ? -ENOMEM
		                    : rz_fieldset_compare(live, merged, &changed, &removed);
	}
	n = rc == 0 ? find_conflicts(m, me, changed, conflicts) : 0;
	if (rc == 0 && n < 0) {
		rc = -ENOMEM;
	} else if (rc == 0 && n > 0 && !force) {
		rc = rz_err_set(err, RZ_ECONFLICT, "%d conflict%s", n, n == 1 ? "" : "s");
	} else if (rc == 0) {
		rc = take_from_others(m, me, changed, removed);
		rc = rc != 0 ? rc
		             : own(m, me, who, newset,
		                   !rz_fieldset_empty(changed) || !rz_fieldset_empty(removed));
		newset = NULL; /* taken */
		drop_empty(m);
	}
	if (rc == 0) {
		*result = merged;
		merged = NULL;
	} else if (rc == -ENOMEM) {
		rz_err_set(err, rc, "out of memory");
	}
	json_decref(cfg);
	json_decref(newset);
	json_decref(merged);
	json_decref(changed);
	json_decref(removed);
	return rc;
}

/* ------------------------------------------------------------------ messages */

static void put(char *buf, size_t size, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= size) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, size - *off, fmt, ap);
	va_end(ap);
	*off += n < 0 ? 0 : (size_t)n;
	if (*off >= size && size > 4) {
		memcpy(buf + size - 4, "...", 4); /* cut: say so */
	}
}

void rz_managed_conflict_message(const json_t *causes, char *buf, size_t size)
{
	size_t n = json_array_size(causes), off = 0, i;
	const char *group = NULL;
	json_t *c;

	if (size == 0) {
		return;
	}
	buf[0] = '\0';
	if (n == 1) {
		put(buf, size, &off, "Apply failed with 1 conflict: %s: %s",
		    json_string_value(json_object_get(json_array_get(causes, 0), "message")),
		    json_string_value(json_object_get(json_array_get(causes, 0), "field")));
		return;
	}
	put(buf, size, &off, "Apply failed with %zu conflicts: ", n);
	json_array_foreach(causes, i, c)
	{
		const char *msg = json_string_value(json_object_get(c, "message"));
		const char *who = msg && strncmp(msg, "conflict with ", 14) == 0 ? msg + 14 : "";
		if (group == NULL || strcmp(group, who) != 0) {
			put(buf, size, &off, "%sconflicts with %s:", group ? "\n" : "", who);
			group = who;
		}
		put(buf, size, &off, "\n- %s", json_string_value(json_object_get(c, "field")));
	}
}
