/* core/store/events.c - Events: recorded with deduplication, pruned by age and count. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "core/base/log.h"
#include "core/store/events.h"

#define MESSAGE_MAX    1024 /* bytes; Kubernetes' recorder cuts there too */
#define EVENT_NAME_MAX 80   /* a DNS label (63), '.', 8 hex digits */
#define ATTEMPTS       4    /* names tried when a hash collides */
#define PAGE           500  /* Events read at a time while pruning */

/* ------------------------------------------------------------------ names and times */

/* "<name>.<8 hex>": BLAKE2b of (kind, name, reason, type, attempt), cut to 32 bits. */
static void event_name(const char *kind, const char *name, const char *reason, const char *type,
                       unsigned char attempt, char out[EVENT_NAME_MAX])
{
	const char *parts[] = { kind, name, reason, type };
	crypto_generichash_state h;
	unsigned char d[crypto_generichash_BYTES_MIN];

	crypto_generichash_init(&h, NULL, 0, sizeof(d));
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		crypto_generichash_update(&h, (const unsigned char *)parts[i],
		                          strlen(parts[i]) + 1);
	}
	crypto_generichash_update(&h, &attempt, 1);
	crypto_generichash_final(&h, d, sizeof(d));
	snprintf(out, EVENT_NAME_MAX, "%s.%02x%02x%02x%02x", name, d[0], d[1], d[2], d[3]);
}

/* ------------------------------------------------------------------ recording */

struct rec {
	rz_store_t *st;
	const rz_kind_t *k;
	const char *tenant, *kind, *name, *type, *reason, *component;
	json_t *message; /* cut to MESSAGE_MAX */
	char now[40];
	rz_err_t err;
};

/* The message as a JSON string of at most MESSAGE_MAX bytes, cut at a character. */
static json_t *message_of(const char *s)
{
	size_t len = strlen(s);

	if (len > MESSAGE_MAX) {
		len = MESSAGE_MAX;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80) {
			len--; /* s[len] continues a character: cut before that character */
		}
	}
	return json_stringn(s, len);
}

/* The involved object's uid, when the store holds the object. */
static void set_uid(struct rec *r, json_t *involved)
{
	const rz_kind_t *ik = rz_kind_by_name(r->kind);
	json_t *obj = NULL;
	rz_err_t err = { 0 };
	const char *uid;

	if (ik != NULL && rz_store_get(r->st, ik, r->tenant, r->name, &obj, &err) == 0) {
		uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
		if (uid != NULL) {
			json_object_set_new(involved, "uid", json_string(uid));
		}
	}
	json_decref(obj);
}

/* The Event's members for this record, over ev (a new object, or the stored one); the
 * involved object's uid when uid is set. */
static void fill(struct rec *r, json_t *ev, bool repeat, bool uid)
{
	json_t *involved = json_pack("{s:s, s:s}", "kind", r->kind, "name", r->name);
	json_int_t count = json_integer_value(json_object_get(ev, "count"));
	const rz_kind_t *ik = rz_kind_by_name(r->kind);

	if (ik != NULL && ik->scope == RZ_SCOPE_TENANT) { /* as Kubernetes clients look it up */
		json_object_set_new(involved, "namespace", json_string(r->tenant));
	}
	if (uid) {
		set_uid(r, involved);
	}
	json_object_set_new(involved, "apiVersion", json_string(RZ_API_VERSION));
	json_object_set_new(ev, "involvedObject", involved);
	json_object_set_new(ev, "reason", json_string(r->reason));
	json_object_set(ev, "message", r->message);
	json_object_set_new(ev, "type", json_string(r->type));
	json_object_set_new(ev, "count", json_integer(repeat && count > 0 ? count + 1 : 1));
	if (!repeat || json_object_get(ev, "firstTimestamp") == NULL) {
		json_object_set_new(ev, "firstTimestamp", json_string(r->now));
	}
	json_object_set_new(ev, "lastTimestamp", json_string(r->now));
	json_object_set_new(ev, "source", json_pack("{s:s}", "component", r->component));
}

/* Is ev the Event of this (kind, name, reason, type)? */
static bool same_key(const struct rec *r, const json_t *ev)
{
	const json_t *inv = json_object_get(ev, "involvedObject");
	const char *k = json_string_value(json_object_get(inv, "kind"));
	const char *n = json_string_value(json_object_get(inv, "name"));
	const char *why = json_string_value(json_object_get(ev, "reason"));
	const char *t = json_string_value(json_object_get(ev, "type"));

	return k && n && why && t && strcmp(k, r->kind) == 0 && strcmp(n, r->name) == 0 &&
	       strcmp(why, r->reason) == 0 && strcmp(t, r->type) == 0;
}

/* Arguments the schema refuses, checked on the Event they would make. */
static int check_args(struct rec *r)
{
	json_t *probe = json_object(), *causes = json_array();
	int rc = 0;

	if (probe == NULL || causes == NULL) {
		rc = rz_err_set(&r->err, -ENOMEM, "out of memory");
	} else if (r->message == NULL) {
		rc = rz_err_set(&r->err, REZUS_EINVALID, "message: not UTF-8");
	} else {
		fill(r, probe, false, false);
		if (rz_kind_validate_top(r->k, probe, causes) > 0) {
			json_t *c = json_array_get(causes, 0);
			rc = rz_err_set(&r->err, REZUS_EINVALID, "%s: %s",
			                json_string_value(json_object_get(c, "field")),
			                json_string_value(json_object_get(c, "message")));
		}
	}
	json_decref(probe);
	json_decref(causes);
	return rc;
}

/* 1 when the tenant exists (being deleted too: its teardown has events of its own), 0 when
 * it is gone. */
static int tenant_open(struct rec *r)
{
	json_t *t = NULL;
	int rc = rz_store_get(r->st, rz_kind_by_name("Tenant"), NULL, r->tenant, &t, &r->err);

	if (rc == 0) {
		rc = 1;
	} else if (rc == RZ_ENOTFOUND) {
		rc = 0;
	}
	json_decref(t);
	return rc;
}

/* Create the Event named evname, or count the stored one up. 1 when evname belongs to
 * another key (a hash collision), else 0 or a negative code. */
static int write_event(struct rec *r, const char *evname)
{
	json_t *cur = NULL, *out = NULL, *ev;
	int rc = rz_store_get(r->st, r->k, r->tenant, evname, &cur, &r->err);

	if (rc == 0 && !same_key(r, cur)) {
		json_decref(cur);
		return 1;
	}
	if (rc == 0) {
		fill(r, cur, true, true);
		rc = rz_store_update(r->st, r->k, r->tenant, evname, cur, rz_object_rv(cur),
		                     RZ_UPDATE_STATUS, NULL, &out, NULL, &r->err);
	} else if (rc == RZ_ENOTFOUND) {
		ev = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", RZ_API_VERSION, "kind",
		               "Event", "metadata", "name", evname, "tenant", r->tenant);
		fill(r, ev, false, true);
		rc = rz_store_create(r->st, r->k, ev, NULL, &out, &r->err);
		json_decref(ev);
		if (rc == RZ_ENOTFOUND || rc == RZ_ETERMINATING) {
			rc = 0; /* the tenant left meanwhile */
		}
	}
	json_decref(out);
	json_decref(cur);
	return rc;
}

int rz_events_record(rz_store_t *st, const char *tenant, const char *kind, const char *name,
                     const char *type, const char *reason, const char *message,
                     const char *component)
{
	struct rec r = { .st = st,
		         .k = rz_kind_by_name("Event"),
		         .tenant = tenant,
		         .kind = kind,
		         .name = name,
		         .type = type,
		         .reason = reason,
		         .component = component };
	char evname[EVENT_NAME_MAX];
	int rc;

	if (st == NULL || r.k == NULL || !tenant || !kind || !name || !type || !reason ||
	    !component) {
		rz_log_warn("events", "recording an event failed: an argument is missing");
		return REZUS_EINVALID;
	}
	r.message = message_of(message ? message : "");
	rz_clock_format(rz_clock_now_ms(), r.now, sizeof(r.now));
	rc = check_args(&r);
	if (rc == 0) {
		rc = tenant_open(&r);
	}
	if (rc == 1) { /* 1 again below: the name belongs to another event, try the next */
		for (unsigned char i = 0; rc == 1 && i < ATTEMPTS; i++) {
			event_name(kind, name, reason, type, i, evname);
			rc = write_event(&r, evname);
		}
		if (rc == 1) {
			rc =
			    rz_err_set(&r.err, -EEXIST, "%d names taken by other events", ATTEMPTS);
		}
	}
	if (rc < 0) {
		rz_log_warn("events", "recording %s '%s' for %s %s/%s failed: %s", type, reason,
		            kind, tenant, name, r.err.msg[0] ? r.err.msg : rz_strerror(rc));
	}
	json_decref(r.message);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ pruning */

struct ref {
	char *tenant, *name;
	int64_t last_ms, rv;
};

struct refs {
	struct ref *v;
	size_t n, cap;
};

static void refs_free(struct refs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].tenant);
		free(r->v[i].name);
	}
	free(r->v);
}

static int refs_add(struct refs *r, const json_t *ev)
{
	const json_t *meta = json_object_get(ev, "metadata");
	const char *t = json_string_value(json_object_get(meta, "tenant"));
	const char *n = json_string_value(json_object_get(meta, "name"));
	struct ref *x;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct ref *v = realloc(r->v, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		r->v = v;
		r->cap = cap;
	}
	x = &r->v[r->n];
	x->tenant = strdup(t ? t : "");
	x->name = strdup(n ? n : "");
	if (x->tenant == NULL || x->name == NULL) {
		free(x->tenant);
		free(x->name);
		return -ENOMEM;
	}
	x->last_ms = rz_clock_parse(json_string_value(json_object_get(ev, "lastTimestamp")));
	x->rv = rz_object_rv(ev);
	r->n++;
	return 0;
}

/* Every Event's key and age, a page at a time. */
static int collect(rz_store_t *st, const rz_kind_t *k, struct refs *r, rz_err_t *err)
{
	rz_list_opts_t o = { .limit = PAGE };
	bool more = true;
	int rc = 0;

	while (rc == 0 && more) {
		json_t *items = NULL, *ev;
		size_t i;
		rc = rz_store_list(st, k, &o, &items, &more, err);
		json_array_foreach(items, i, ev)
		{
			if (rc == 0 && (rc = refs_add(r, ev)) < 0) {
				rz_err_set(err, rc, "out of memory");
			}
		}
		json_decref(items);
		if (r->n > 0) { /* the strings stay put while r grows: only the array moves */
			o.after_tenant = r->v[r->n - 1].tenant;
			o.after_name = r->v[r->n - 1].name;
		}
	}
	return rc;
}

/* By tenant, newest first. */
static int by_tenant_newest(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = strcmp(x->tenant, y->tenant);

	if (c != 0) {
		return c;
	}
	if (x->last_ms != y->last_ms) {
		return x->last_ms > y->last_ms ? -1 : 1;
	}
	return x->rv > y->rv ? -1 : x->rv < y->rv;
}

/* Delete the Events the rules doom, r sorted by tenant, newest first. Returns how many
 * went; *failed counts those that could not, the first one's reason in why. */
static int drop_doomed(rz_store_t *st, const struct refs *r, int64_t cut, int max_per_tenant,
                       int *failed, char *why, size_t size)
{
	const rz_kind_t *k = rz_kind_by_name("Event");
	size_t in_tenant = 0;
	int deleted = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct ref *x = &r->v[i];
		json_t *out = NULL;
		rz_err_t err = { 0 };
		bool gone = false;
		in_tenant = i > 0 && strcmp(x->tenant, r->v[i - 1].tenant) == 0 ? in_tenant + 1 : 0;
		if (x->last_ms >= cut &&
		    (max_per_tenant <= 0 || in_tenant < (size_t)max_per_tenant)) {
			continue;
		}
		if (rz_store_delete(st, k, x->tenant, x->name, x->rv, NULL, &out, &gone, &err) ==
		    0) {
			deleted++;
		} else if ((*failed)++ == 0) {
			snprintf(why, size, "%s/%s: %s", x->tenant, x->name, err.msg);
		}
		json_decref(out);
	}
	return deleted;
}

int rz_events_prune(rz_store_t *st, int64_t retention_ms, int max_per_tenant, int64_t now_ms)
{
	struct refs r = { 0 };
	rz_err_t err = { 0 };
	int64_t cut = retention_ms > 0 ? now_ms - retention_ms : INT64_MIN;
	int deleted = 0, failed = 0, rc = collect(st, rz_kind_by_name("Event"), &r, &err);
	char why[512] = "";

	if (rc == 0 && r.n > 0) {
		qsort(r.v, r.n, sizeof(*r.v), by_tenant_newest);
		deleted = drop_doomed(st, &r, cut, max_per_tenant, &failed, why, sizeof(why));
	}
	if (rc != 0) {
		rz_log_warn("events", "pruning failed: %s", err.msg);
	} else if (failed > 0) {
		rz_log_warn("events", "pruning %d of %zu events: %d could not be deleted, first %s",
		            deleted + failed, r.n, failed, why);
	} else if (deleted > 0) {
		rz_log_info("events", "pruned %d of %zu events", deleted, r.n);
	}
	refs_free(&r);
	return rc != 0 ? rc : deleted;
}
