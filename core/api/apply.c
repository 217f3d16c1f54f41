/*
 * core/api/apply.c - field managers on the API (core/model/managed.h): server-side apply,
 * PATCH with application/apply-patch+yaml, creating the object when it does not exist; and
 * every other write (create, replace, merge and JSON patch, of the object or its status)
 * recorded in metadata.managedFields as an Update by its manager.
 *
 * An apply is computed here and then written as a create or an update is (write.c): the same
 * validation, admission, dryRun, resourceVersion precondition and audit. A client writes
 * managedFields only by apply; any write may clear them with [] (or [{}]), as Kubernetes.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/api/api-int.h"
#include "core/auth/access.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/model/fields.h"
#include "core/model/managed.h"

#define MESSAGE_MAX 4096 /* bytes of a conflict's message; every field is in its causes */

/* ------------------------------------------------------------------ options */

/* 422 for PatchOptions, as kube-apiserver words it: "PatchOptions.meta.k8s.io \"\" is
 * invalid: fieldManager: Required value: is required for apply patch". */
static void options_invalid(rz_req_t *req, const char *field, const char *reason, const char *what,
                            const char *detail)
{
	char msg[256], cause[160];
	json_t *st;

	snprintf(cause, sizeof(cause), "%s: %s", what, detail);
	snprintf(msg, sizeof(msg), "PatchOptions.meta.k8s.io \"\" is invalid: %s: %s", field,
	         cause);
	st = rz_status_new(422, "Invalid", msg);
	rz_status_set_target(st, "PatchOptions", NULL);
	json_object_set_new(json_object_get(st, "details"), "group", json_string("meta.k8s.io"));
	rz_status_add_cause(st, field, reason, cause);
	rz_reply_status(req, st);
}

bool rz__patch_options(const struct rctx *c, rz_req_t *req, enum rz__patch_type type, bool *force)
{
	const char *fm = rz_req_query(req, "fieldManager");
	const char *f = rz_req_query(req, "force");
	bool apply = type == RZ_PATCH_APPLY;

	*force = false;
	if (!apply && c->form == FORM_ITEM && (c->k->verbs & RZ_VERB_PATCH) == 0) {
		rz_reply_error(req, 405, NULL,
		               "%s are not patched: a PATCH of one is a server-side apply "
		               "(Content-Type: application/apply-patch+yaml) that creates it",
		               c->k->plural);
		return false;
	}
	if (!apply && f != NULL) {
		options_invalid(req, "force", RZ_CAUSE_FORBIDDEN, "Forbidden",
		                "may not be specified for non-apply patch");
		return false;
	}
	if (apply && (fm == NULL || *fm == '\0')) {
		options_invalid(req, "fieldManager", RZ_CAUSE_REQUIRED, "Required value",
		                "is required for apply patch");
		return false;
	}
	if (f != NULL && !rz_parse_bool(f, force)) {
		rz_reply_error(req, 400, NULL,
		               "force: Invalid value: \"%s\": must be true or false", ECHO(f));
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------ managers */

/* Who a write is by: fieldManager, else as Kubernetes the User-Agent up to its first '/'
 * ("kubectl-edit/v1.32.4 (linux/amd64)" is kubectl-edit), printable ASCII only, else
 * "unknown". */
static void manager_of(rz_req_t *req, char *buf, size_t size)
{
	const char *fm = rz_req_query(req, "fieldManager");
	const char *ua = rz_req_header(req, "User-Agent");
	size_t n = 0;

	if (fm != NULL && *fm != '\0') {
		snprintf(buf, size, "%s", fm); /* write_options checked it */
		return;
	}
	for (const char *p = ua; p != NULL && *p != '\0' && *p != '/' && n + 1 < size; p++) {
		if (*p >= 0x20 && *p < 0x7f) {
			buf[n++] = *p;
		}
	}
	buf[n] = '\0';
	if (n == 0) {
		snprintf(buf, size, "unknown");
	}
}

/* cur's managers into m (initialised). Ones this server cannot read (a restored object,
 * an older daemon's) count as none, as Kubernetes resets managedFields it cannot decode. */
static void managers_of(const struct rctx *c, const json_t *cur, rz_managed_t *m)
{
	const json_t *meta = json_object_get(cur, "metadata");
	rz_err_t err = { 0 };

	if (rz_managed_decode(m, json_object_get(meta, "managedFields"), &err) != 0) {
		rz_log_warn("api", "managedFields of %s '%s' unreadable, starting afresh: %s",
		            c->k->plural, json_string_value(json_object_get(meta, "name")),
		            err.msg);
	}
}

bool rz__managed_strip(json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *mf = json_object_get(meta, "managedFields");
	bool reset = json_is_array(mf) &&
	             (json_array_size(mf) == 0 ||
	              (json_array_size(mf) == 1 && json_object_size(json_array_get(mf, 0)) == 0));

	if (json_is_object(meta)) {
		json_object_del(meta, "managedFields");
	}
	return reset;
}

/* m encoded into obj's metadata.managedFields; -E2BIG with a cause when too long. */
static int put_managers(const rz_managed_t *m, json_t *obj, json_t *causes)
{
	json_t *list = NULL;
	rz_err_t err = { 0 };
	int rc = rz_managed_encode(m, &list, &err);

	if (rc == -E2BIG) {
		rz_fields_cause(causes, "metadata.managedFields", RZ_CAUSE_TOO_LONG, "%s", err.msg);
	} else if (rc == 0 &&
	           json_object_set_new(json_object_get(obj, "metadata"), "managedFields", list)) {
		rc = -ENOMEM;
	}
	return rc;
}

int rz__managed_record(const struct rctx *c, rz_req_t *req, const json_t *cur, json_t *obj,
                       bool reset, json_t *causes)
{
	bool status = c->form == FORM_STATUS;
	char manager[RZ_FIELD_MANAGER_MAX + 1], now[RZ_MANAGED_TIME_MAX];
	json_t *old = cur ? rz_managed_view(cur, c->k, status) : NULL;
	json_t *new = rz_managed_view(obj, c->k, status);
	rz_managed_t m;
	rz_err_t err = { 0 };
	int rc = (cur != NULL && old == NULL) || new == NULL ? -ENOMEM : 0;

	rz_managed_init(&m);
	if (cur != NULL && !reset) {
		managers_of(c, cur, &m);
	}
	manager_of(req, manager, sizeof(manager));
	rz_time_now(now, sizeof(now));
	if (rc == 0) {
		rc = rz_managed_update(&m, &(rz_managed_who_t){ manager, status, now }, old, new,
		                       &err);
	}
	rc = rc != 0 ? rc : put_managers(&m, obj, causes);
	rz_managed_fini(&m);
	json_decref(old);
	json_decref(new);
	return rc;
}

bool rz__manager_ok(const char *fm)
{
	if (strlen(fm) > RZ_FIELD_MANAGER_MAX || !rz_utf8_valid(fm, strlen(fm))) {
		return false;
	}
	for (const unsigned char *p = (const unsigned char *)fm; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			return false;
		}
	}
	return true;
}

bool rz__managed_set(const struct rctx *c, rz_req_t *req, const json_t *cur, json_t *obj,
                     bool reset, json_t *managed, json_t *causes)
{
	json_t *meta = json_object_get(obj, "metadata");

	if (!json_is_object(meta)) { /* a status write's, which the store does not read */
		meta = json_object();
		json_object_set_new(obj, "metadata", meta);
	}
	if (managed != NULL) {
		if (json_object_set_new(meta, "managedFields", managed) == 0) {
			return true;
		}
	} else if (rz__managed_record(c, req, cur, obj, reset, causes) != -ENOMEM) {
		return true;
	}
	rz_reply_error(req, 500, NULL, "out of memory");
	return false;
}

/* ------------------------------------------------------------------ apply */

/* The configuration's own checks, as kube-apiserver makes them: apiVersion and kind set,
 * and this kind's; metadata.managedFields not; name and owner those of the URL (filled in
 * when absent). False after replying 400. */
static bool config_ok(const struct rctx *c, rz_req_t *req, json_t *config, const char *tenant,
                      const char *name)
{
	const char *api = json_string_value(json_object_get(config, "apiVersion"));
	const char *kind = json_string_value(json_object_get(config, "kind"));
	json_t *mf = json_object_get(json_object_get(config, "metadata"), "managedFields");

	if (api == NULL || kind == NULL) {
		rz_reply_error(req, 400, NULL,
		               "an apply configuration must set apiVersion and kind (%s, %s)",
		               RZ_API_VERSION, c->k->kind);
		return false;
	}
	if (strcmp(kind, c->k->kind) != 0 ||
	    (strcmp(api, RZ_API_VERSION) != 0 && strcmp(api, "v1") != 0)) {
		rz_reply_error(req, 400, NULL,
		               "the configuration is a %s %s: this URL takes a %s %s", ECHO(api),
		               ECHO(kind), RZ_API_VERSION, c->k->kind);
		return false;
	}
	if (mf != NULL && !json_is_null(mf) && json_array_size(mf) != 0) {
		rz_reply_error(req, 400, NULL, "metadata.managedFields must be nil");
		return false;
	}
	return rz__match_url(req, c->k, config, tenant, name);
}

/* Kubernetes' apply conflict: 409 Conflict, the message naming every manager and field,
 * a FieldManagerConflict cause for each. */
static void reply_conflict(rz_req_t *req, const json_t *causes)
{
	char msg[MESSAGE_MAX];
	json_t *st;
	size_t i;
	json_t *c;

	rz_managed_conflict_message(causes, msg, sizeof(msg));
	st = rz_status_new(409, "Conflict", msg);
	json_array_foreach(causes, i, c)
	{
		rz_status_add_cause(st, json_string_value(json_object_get(c, "field")),
		                    json_string_value(json_object_get(c, "reason")),
		                    json_string_value(json_object_get(c, "message")));
	}
	rz_reply_status(req, st);
}

/* What an apply computed, and what it writes. */
struct apply {
	struct rctx *c;
	rz_req_t *req;
	const char *tenant, *name;
	json_t *config;  /* taken */
	json_t *cur;     /* the stored object; NULL: a create */
	json_t *result;  /* the view to write */
	json_t *managed; /* metadata.managedFields to write */
	bool status, dry, force;
	int64_t rv;
};

/* Whether the apply may create what it names, as a POST to the collection could: the guard
 * lets a PATCH of a Tenant through by an AccessBinding on its name (route_tenant), which
 * grants a role on that tenant, not the creation of one. Other kinds' item and collection
 * routes are let through alike. */
static bool may_create(const struct apply *a)
{
	bool is_tenant = a->c->k->scope == RZ_SCOPE_GLOBAL && rz_kind_tenanted(a->c->k);

	return !is_tenant || !rz_access_filtered(a->req);
}

/* The stored object into a->cur, or none when the apply creates it. False after
 * replying. */
static bool load(struct apply *a)
{
	rz_err_t err = { 0 };
	int rc = rz_store_get_shared(a->c->api->store, a->c->k, a->tenant, a->name, &a->cur, &err);
	bool creates = !a->status && (a->c->k->verbs & RZ_VERB_CREATE) != 0;

	if (rc == RZ_ENOTFOUND && creates && a->rv != 0) {
		rz_reply_error(a->req, 409, "Conflict",
		               "%s \"%s\" does not exist: its resourceVersion cannot be %lld",
		               a->c->k->plural, a->name, (long long)a->rv);
		return false;
	}
	if (rc != 0 && !(rc == RZ_ENOTFOUND && creates)) {
		rz__reply_store_error(a->req, a->c->k, a->name, rc, &err);
		return false;
	}
	if (a->cur == NULL && !may_create(a)) {
		rz_reply_error(
		    a->req, 403, "Forbidden",
		    "creating %s takes the %s role on the installation: an AccessBinding "
		    "grants roles on tenants that exist",
		    a->c->k->plural, rz_role_name(a->c->k->write_role));
		return false;
	}
	return true;
}

static bool has_string(const json_t *list, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0) {
			return true;
		}
	}
	return false;
}

/* Keep in view the kind's own finalizers (the server adds them: a Tenant's teardown) that
 * the stored object has: lists are atomic here, so an apply of other finalizers, or of none
 * after some, would drop them, which Kubernetes' set of finalizers never does to ones
 * nobody applied. Only where view lists finalizers, unless always. */
static void keep_finalizers(const rz_kind_t *k, const json_t *cur, json_t *view, bool always)
{
	const json_t *have = json_object_get(json_object_get(cur, "metadata"), "finalizers");
	json_t *meta = json_object_get(view, "metadata");
	json_t *list = json_object_get(meta, "finalizers");

	for (const char *const *f = k->finalizers; f != NULL && *f != NULL; f++) {
		if (!has_string(have, *f) || has_string(list, *f)) {
			continue;
		}
		if (!json_is_array(list) && !always) {
			return;
		}
		if (!json_is_object(meta)) {
			meta = json_object();
			json_object_set_new(view, "metadata", meta);
		}
		if (!json_is_array(list)) {
			list = json_array();
			json_object_set_new(meta, "finalizers", list);
		}
		json_array_append_new(list, json_string(*f));
	}
}

/* Merge the configuration into the live object: a->result and a->managed, or the conflicts
 * replied. False after replying. */
static bool compute(struct apply *a)
{
	const rz_kind_t *k = a->c->k;
	char now[RZ_MANAGED_TIME_MAX];
	json_t *live = a->cur ? rz_managed_view(a->cur, k, a->status) : json_object();
	json_t *view = rz_managed_view(a->config, k, a->status);
	json_t *causes = json_array();
	rz_managed_t m;
	rz_err_t err = { 0 };
	int rc = live != NULL && view != NULL && causes != NULL ? 0 : -ENOMEM;

	rz_managed_init(&m);
	if (a->cur != NULL) {
		managers_of(a->c, a->cur, &m);
	}
	rz_time_now(now, sizeof(now));
	if (rc == 0) {
		rz_managed_who_t who = { rz_req_query(a->req, "fieldManager"), a->status, now };
		if (!a->status) {
			keep_finalizers(k, a->cur, view, false);
		}
		rc = rz_managed_apply(&m, &who, a->force, live, view, &a->result, causes, &err);
	}
	if (rc == 0 && !a->status) {
		keep_finalizers(k, a->cur, a->result, true); /* when the apply dropped the list */
	}
	rc = rc != 0 ? rc : rz_managed_encode(&m, &a->managed, &err);
	if (rc == RZ_ECONFLICT) {
		reply_conflict(a->req, causes);
	} else if (rc == -E2BIG) {
		json_array_clear(causes);
		rz_fields_cause(causes, "metadata.managedFields",
		                a->result == NULL ? RZ_CAUSE_TOO_MANY : RZ_CAUSE_TOO_LONG, "%s",
		                err.msg);
		rz__reply_invalid(a->req, k, a->name, causes);
	} else if (rc != 0) {
		rz_reply_error(a->req, 500, NULL, "out of memory");
	}
	rz_managed_fini(&m);
	json_decref(live);
	json_decref(view);
	json_decref(causes);
	return rc == 0;
}

/* The object to write: the stored one (the configuration, for a create) with the view
 * replaced by the result, and the write-only field (a password) the configuration gives,
 * which no view holds. NULL on out of memory. */
static json_t *next_object(const struct apply *a)
{
	const char *sf = a->status ? NULL : a->c->k->secret_field;
	json_t *secret = sf ? json_object_get(json_object_get(a->config, "spec"), sf) : NULL;
	json_t *next = json_deep_copy(a->cur ? a->cur : a->config);
	json_t *spec;

	if (next == NULL || rz_managed_unview(next, a->result, a->c->k, a->status) != 0) {
		json_decref(next);
		return NULL;
	}
	spec = json_object_get(next, "spec");
	if (secret != NULL && !json_is_null(secret) && json_is_object(spec)) {
		json_object_set(spec, sf, secret);
	}
	return next;
}

/* Whether next, with its managers, is the stored object: what an apply to a kind that is
 * never updated (a Run) may be once it exists. */
static bool unchanged(const struct apply *a, json_t *next)
{
	json_t *meta = json_object_get(next, "metadata");

	if (json_array_size(a->managed) > 0) {
		json_object_set(meta, "managedFields", a->managed);
	} else {
		json_object_del(meta, "managedFields");
	}
	return json_equal(next, a->cur);
}

/* Write the result as a create or an update: write.c validates, admits and stores it. */
static void write_applied(struct apply *a)
{
	json_t *next = next_object(a), *causes;
	const rz_kind_t *k = a->c->k;

	if (next == NULL) {
		rz_reply_error(a->req, 500, NULL, "out of memory");
	} else if (a->cur == NULL) {
		rz__create(a->c, a->req, a->tenant, next, a->dry, a->managed);
		a->managed = NULL;
	} else if (!a->status && (k->verbs & RZ_VERB_PATCH) == 0) {
		if (unchanged(a, next)) {
			rz_reply_json(a->req, 200, a->cur);
			a->cur = NULL;
		} else {
			rz_reply_error(
			    a->req, 405, NULL,
			    "%s \"%s\" exists and %s are never changed: this apply would "
			    "change it",
			    k->plural, a->name, k->plural);
		}
		json_decref(next);
	} else {
		causes = json_array();
		rz__update(a->c, a->req,
		           &(struct rz__update){ .tenant = a->tenant,
		                                 .name = a->name,
		                                 .obj = next,
		                                 .cur = a->cur,
		                                 .rv = a->rv ? a->rv : rz_object_rv(a->cur),
		                                 .dry = a->dry,
		                                 .managed = a->managed },
		           causes);
		a->managed = NULL;
		json_decref(causes);
	}
}

void rz__handle_apply(struct rctx *c, rz_req_t *req, const char *tenant, const char *name,
                      json_t *config, bool dry, bool force)
{
	struct apply a = { .c = c,
		           .req = req,
		           .tenant = tenant,
		           .name = name,
		           .config = config,
		           .status = c->form == FORM_STATUS,
		           .dry = dry,
		           .force = force };
	json_t *causes = json_array();

	if (config_ok(c, req, config, tenant, name)) {
		a.rv = rz__body_rv(config, causes);
		if (json_array_size(causes) > 0) {
			rz__reply_invalid(req, c->k, name, causes);
		} else if (load(&a) && compute(&a)) {
			write_applied(&a);
		}
	}
	json_decref(causes);
	json_decref(a.config);
	json_decref(a.cur);
	json_decref(a.result);
	json_decref(a.managed);
}
