/* core/api/write.c - writes of a kind: create, replace, patch, delete, committed to the store. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/api/api-int.h"
#include "core/auth/access.h"
#include "core/auth/auth.h"
#include "core/base/clock.h"
#include "core/model/fields.h"
#include "core/model/jsonpatch.h"
#include "core/model/managed.h"
#include "core/model/merge.h"

/* A DELETE's propagationPolicy: Background and Foreground (a tenant's objects go with it
 * either way). Orphan cannot be honoured, so it is refused rather than ignored. Replies 400
 * and returns false when refused. */
static bool policy_ok(rz_req_t *req, const char *pp)
{
	if (pp == NULL || *pp == '\0' || strcmp(pp, "Background") == 0 ||
	    strcmp(pp, "Foreground") == 0) {
		return true;
	}
	if (strcmp(pp, "Orphan") == 0) {
		rz_reply_error(
		    req, 400, NULL,
		    "propagationPolicy: Unsupported value: \"Orphan\": a tenant's objects "
		    "are deleted with it; supported values: \"Background\", \"Foreground\"");
	} else {
		rz_reply_error(req, 400, NULL,
		               "propagationPolicy: Unsupported value: \"%s\": supported values: "
		               "\"Background\", \"Foreground\"",
		               ECHO(pp));
	}
	return false;
}

/* The write options Kubernetes clients send: dryRun (All: validate and answer without
 * storing), fieldManager (who the write's fields belong to, metadata.managedFields),
 * fieldValidation (rz__field_validation_ok), and for deletes propagationPolicy (policy_ok).
 * Replies 400 naming the parameter and returns false on a bad value. */
static bool write_options(rz_req_t *req, bool *dry)
{
	const char *d = rz_req_query(req, "dryRun");
	const char *fm = rz_req_query(req, "fieldManager");
	const char *pp = rz_req_query(req, "propagationPolicy");

	*dry = d != NULL && strcmp(d, "All") == 0;
	if (d != NULL && *d != '\0' && !*dry) {
		rz_reply_error(req, 400, NULL,
		               "dryRun: Unsupported value: \"%s\": supported values: \"All\"",
		               ECHO(d));
		return false;
	}
	if (fm != NULL && !rz__manager_ok(fm)) {
		rz_reply_error(req, 400, NULL,
		               "fieldManager: Invalid value: must be at most %d bytes of printable "
		               "characters",
		               RZ_FIELD_MANAGER_MAX);
		return false;
	}
	return policy_ok(req, pp) && rz__field_validation_ok(req);
}

/* ------------------------------------------------------------------ writes */

static void wr_free(struct wr *w)
{
	if (w->secret != NULL) {
		sodium_memzero(w->secret, strlen(w->secret));
		free(w->secret);
	}
	sodium_memzero(w->hash, sizeof(w->hash));
	sodium_memzero(w->token, sizeof(w->token));
	json_decref(w->obj);
	json_decref(w->cur);
	free(w->owner);
	free(w->name);
	free(w);
}

static struct wr *wr_new(struct rctx *c, rz_req_t *req, bool create, const char *owner,
                         const char *name, json_t *obj)
{
	struct wr *w = calloc(1, sizeof(*w));

	if (w == NULL || (owner && (w->owner = strdup(owner)) == NULL) ||
	    (name && (w->name = strdup(name)) == NULL)) {
		if (w != NULL) {
			wr_free(w);
		}
		json_decref(obj);
		rz_reply_error(req, 500, NULL, "out of memory");
		return NULL;
	}
	w->c = c;
	w->req = req;
	w->create = create;
	w->obj = obj;
	w->mode = RZ_UPDATE_SPEC;
	w->code = create ? 201 : 200;
	return w;
}

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/* kubectl apply keeps the manifest it applied in an annotation: a user's password would be
 * stored there in clear. Take field out of it too (a later apply then sets the password
 * again, which is what it asks for). */
static void scrub_last_applied(json_t *obj, const char *field)
{
	json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
	const char *text = json_string_value(json_object_get(ann, LAST_APPLIED));
	json_t *applied = text ? json_loads(text, 0, NULL) : NULL;
	char *clean;

	if (text != NULL && applied == NULL) {
		json_object_del(ann, LAST_APPLIED); /* not JSON: it could hold anything */
		return;
	}
	if (applied == NULL) {
		return;
	}
	json_object_del(json_object_get(applied, "spec"), field);
	clean = json_dumps(applied, JSON_COMPACT);
	if (clean != NULL) {
		json_object_set_new(ann, LAST_APPLIED, json_sprintf("%s\n", clean));
	} else {
		json_object_del(ann, LAST_APPLIED);
	}
	free(clean);
	json_decref(applied);
}

/* Take the kind's write-only field (a user's password) out of the object. */
static void take_secret(struct wr *w)
{
	const char *field = w->c->k->secret_field;
	json_t *spec = json_object_get(w->obj, "spec");
	const char *v = field ? json_string_value(json_object_get(spec, field)) : NULL;

	if (v != NULL) {
		w->secret = strdup(v);
	}
	if (field != NULL) {
		json_object_del(spec, field);
		scrub_last_applied(w->obj, field);
	}
}

/* What the reply shows of obj (takes ownership): obj, or as the route shows it (a node
 * group's Scale). NULL on out of memory. */
static json_t *shown(struct wr *w, json_t *obj)
{
	json_t *v;

	if (w->c->view == NULL || obj == NULL) {
		return obj;
	}
	v = w->c->view->of(obj);
	json_decref(obj);
	return v;
}

/* A dry run's answer: the object as it would be written, stored nowhere (no uid, no
 * resourceVersion for a create, as nothing was written to give them). */
static void dry_reply(struct wr *w)
{
	json_t *out = shown(w, w->obj);
	json_t *meta = json_object_get(out, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	char now[40], detail[400];

	/* its audit row says it stored nothing, and names the object (a create's name is
	 * not in its path) */
	snprintf(detail, sizeof(detail), "dry run (dryRun=All), nothing stored: %s %s",
	         w->c->k->singular, name != NULL ? name : "");
	rz_access_set_detail(w->req, detail);
	if (w->create) {
		rz_time_now(now, sizeof(now));
		json_object_set_new(meta, "creationTimestamp", json_string(now));
		json_object_set_new(meta, "generation", json_integer(1));
		json_object_del(meta, "generateName");
	}
	w->obj = NULL;
	if (out == NULL) {
		rz_reply_error(w->req, 500, NULL, "out of memory");
	} else {
		rz_reply_json(w->req, w->code, out);
	}
	wr_free(w);
}

/* Store the write with its audit row (and credentials) in one transaction; reply. */
static void commit(struct wr *w)
{
	rz_write_hook_t secret = { w->c->hooks->stored, w, NULL };
	const rz_write_hook_t *chain = NULL;
	rz_access_hook_t audit;
	const char *name =
	    json_string_value(json_object_get(json_object_get(w->obj, "metadata"), "name"));
	json_t *out = NULL;
	char *text = NULL;
	rz_err_t err = { 0 };
	bool gone = false;
	int rc;

	if (w->dry) {
		dry_reply(w);
		return;
	}
	if (w->hashed || w->token[0] != '\0') {
		chain = &secret; /* the kind keeps what the secret becomes */
	}
	chain = rz_access_hook(w->c->api->access, w->req, w->code, NULL, chain, &audit);
	/* the reply waits for the group's commit, and is the stored text unless a token's
	 * secret goes with it or ?pretty asks for another layout */
	rz_store_next(w->c->api->store,
	              &(rz_write_opts_t){ .group = true,
	                                  .current = w->cur,
	                                  .text = w->token[0] == '\0' &&
	                                                  rz_req_query(w->req, "pretty") == NULL
	                                              ? &text
	                                              : NULL });
	rc = w->create ? rz_store_create(w->c->api->store, w->c->k, w->obj, chain, &out, &err)
	               : rz_store_update(w->c->api->store, w->c->k, w->owner, w->name, w->obj,
	                                 w->expect_rv, w->mode, chain, &out, &gone, &err);
	if (rc != 0) {
		json_decref(out);
		rz__reply_store_error(w->req, w->c->k, name, rc, &err);
	} else {
		if (w->c->api->access != NULL) {
			rz_req_set_audited(w->req);
		}
		if (w->token[0] != '\0') {
			/* on the reply's own copy: the stored object is also the one its
			 * watchers get (a Table with includeObject shows it whole) */
			json_t *reply = json_copy(out);
			json_decref(out);
			out = reply;
			if (out == NULL ||
			    json_object_set_new(out, "secret", json_string(w->token)) != 0) {
				json_decref(out);
				rz_reply_error(w->req, 500, NULL, "out of memory");
				wr_free(w);
				return;
			}
		}
		if (w->c->view != NULL) { /* not the stored text: the route's shape of it */
			free(text);
			text = NULL;
			if ((out = shown(w, out)) == NULL) {
				rz_reply_error(w->req, 500, NULL, "out of memory");
				wr_free(w);
				return;
			}
		}
		rz__reply_durable(w->c->api, w->req, w->c->k, w->code, out, text);
		text = NULL;
	}
	free(text);
	wr_free(w);
}

static void hash_work(void *arg)
{
	struct wr *w = arg;

	w->hashed = rz_auth_hash_password(w->secret, w->hash) == 0;
	sodium_memzero(w->secret, strlen(w->secret));
}

static void hash_done(void *arg, int canceled)
{
	struct wr *w = arg;

	if (canceled || !w->hashed) {
		rz_reply_error(w->req, canceled ? 503 : 500, NULL, "%s",
		               canceled ? "shutting down" : "password hashing failed");
		wr_free(w);
		return;
	}
	commit(w);
}

/* Commit now, or after hashing the password on the worker pool. */
static void submit(struct wr *w)
{
	take_secret(w);
	if (w->secret == NULL || w->dry) {
		commit(w);
	} else if (w->c->api->workers == NULL) {
		hash_work(w); /* no pool (tools and tests): hash here */
		hash_done(w, 0);
	} else if (rz_workers_submit(w->c->api->workers, hash_work, hash_done, w) != 0) {
		rz_reply_error(w->req, 503, NULL, "the server is busy; try again");
		wr_free(w);
	}
}

/* ------------------------------------------------------------------ writes */

void rz__create(struct rctx *c, rz_req_t *req, const char *tenant, json_t *obj, bool dry,
                json_t *managed)
{
	json_t *causes = json_array();
	const char *name;
	struct wr *w;

	json_object_del(obj, "status"); /* create ignores status */
	rz__drop_top(c->k, obj);
	rz__managed_strip(obj);
	if (rz__validate_spec_write(c, req, obj, NULL, causes) == 0) {
		rz__assign_name(c->k, obj, causes);
	}
	if (json_array_size(causes) == 0 && c->hooks->create_check != NULL) {
		c->hooks->create_check(c, req, obj, tenant, causes);
	}
	if (json_array_size(causes) == 0) {
		bool ok = rz__managed_set(c, req, NULL, obj, false, managed, causes);
		managed = NULL; /* taken */
		if (!ok) {
			goto out;
		}
	}
	name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	if (json_array_size(causes) > 0) {
		rz__reply_invalid(req, c->k, name, causes);
		goto out;
	}
	w = wr_new(c, req, true, tenant, NULL, obj);
	obj = NULL;
	if (w != NULL) {
		w->dry = dry;
		if (c->hooks->mints_secret && !dry) {
			rz_auth_token_secret(w->token);
		}
		submit(w);
	}
out:
	json_decref(managed);
	json_decref(causes);
	json_decref(obj);
}

void rz__handle_create(struct rctx *c, rz_req_t *req, const char *tenant)
{
	json_t *obj = NULL;
	bool dry;

	if (!write_options(req, &dry) || (obj = rz__read_body(req)) == NULL ||
	    !rz__match_url(req, c->k, obj, tenant, NULL)) {
		json_decref(obj);
		return;
	}
	rz__create(c, req, tenant, obj, dry, NULL);
}

void rz__update(struct rctx *c, rz_req_t *req, struct rz__update *u, json_t *causes)
{
	rz_update_mode_t mode = c->form == FORM_STATUS ? RZ_UPDATE_STATUS : RZ_UPDATE_SPEC;
	json_t *obj = u->obj;
	bool reset = rz__managed_strip(obj) && mode == RZ_UPDATE_SPEC;
	struct wr *w;

	u->obj = NULL;
	if (mode == RZ_UPDATE_STATUS) {
		rz__drop_unknown(req, c->k, obj, true);
		rz_kind_validate_status_write(c->k, obj, causes);
	} else if (rz__validate_spec_write(c, req, obj, u->cur, causes) == 0 &&
	           c->hooks->update_check != NULL) {
		c->hooks->update_check(c, u->cur, obj, causes);
	}
	if (json_array_size(causes) == 0) {
		bool ok = rz__managed_set(c, req, u->cur, obj, reset, u->managed, causes);
		u->managed = NULL; /* taken */
		if (!ok) {
			json_decref(obj);
			return;
		}
	}
	json_decref(u->managed); /* left by a write found invalid */
	u->managed = NULL;
	if (json_array_size(causes) > 0) {
		rz__reply_invalid(req, c->k, u->name, causes);
		json_decref(obj);
		return;
	}
	w = wr_new(c, req, false, u->tenant, u->name, obj);
	if (w != NULL) {
		w->expect_rv = u->rv;
		w->mode = mode;
		w->dry = u->dry;
		w->cur = json_incref((json_t *)u->cur); /* the store need not read it again */
		if (mode == RZ_UPDATE_STATUS) {
			commit(w); /* status writes carry no secrets */
		} else {
			submit(w);
		}
	}
}

int64_t rz__body_rv(const json_t *obj, json_t *causes)
{
	const char *s =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	int64_t rv = 0;

	if (s != NULL && *s != '\0' && (!rz__parse_rv(s, &rv) || rv == 0)) {
		rz_fields_cause(causes, "metadata.resourceVersion", RZ_CAUSE_INVALID,
		                "must be a resourceVersion the server gave (decimal digits)");
		return 0;
	}
	return rv;
}

/* PUT of the object or of its status: resourceVersion is required. */
void rz__handle_replace(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	json_t *obj = NULL;
	json_t *causes = json_array();
	json_t *cur = NULL;
	int64_t rv;
	bool dry;

	if (!write_options(req, &dry) || (obj = rz__read_body(req)) == NULL ||
	    !rz__match_url(req, c->k, obj, tenant, name)) {
		goto out;
	}
	rv = rz__body_rv(obj, causes);
	if (rv == 0 && json_array_size(causes) == 0) {
		rz_fields_cause(causes, "metadata.resourceVersion", RZ_CAUSE_REQUIRED,
		                "must be specified for an update");
	}
	cur = rz__current(c, req, tenant, name);
	if (cur != NULL) {
		rz__update(c, req,
		           &(struct rz__update){ .tenant = tenant,
		                                 .name = name,
		                                 .obj = obj,
		                                 .cur = cur,
		                                 .rv = rv,
		                                 .dry = dry },
		           causes);
		obj = NULL;
	}
out:
	json_decref(cur);
	json_decref(causes);
	json_decref(obj);
}

/* Apply a JSON patch (borrowed) to cur (borrowed) into *next, or reply why not: 400
 * malformed, 413 too many operations, 422 an operation that cannot apply (a failed test). */
static bool json_patch(struct rctx *c, rz_req_t *req, const char *name, const json_t *cur,
                       const json_t *patch, json_t **next)
{
	json_t *causes = json_array();
	rz_err_t err = { 0 };
	int rc = rz_json_patch(cur, patch, next, causes, &err);

	if (rc == -EINVAL && json_array_size(causes) > 0) {
		rz__reply_invalid(req, c->k, name, causes);
	} else if (rc == -E2BIG) {
		rz_reply_error(req, 413, "RequestEntityTooLarge", "%s", err.msg);
	} else if (rc == -ENOMEM) {
		rz_reply_error(req, 500, NULL, "out of memory");
	} else if (rc != 0) {
		rz_reply_error(req, 400, NULL, "invalid JSON patch: %s", err.msg);
	}
	json_decref(causes);
	return rc == 0;
}

/* PATCH of the object or of its status, by merge patch or JSON patch, or a server-side
 * apply (apply.c); the result goes the way of a PUT. A resourceVersion in a merge patch, or
 * left by a JSON patch in the result, is a precondition; without one the patch applies to
 * the current version. */
void rz__handle_patch(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	json_t *patch = NULL;
	json_t *causes = json_array();
	json_t *cur = NULL, *next = NULL;
	enum rz__patch_type type;
	int64_t rv;
	bool dry, force;

	if (!write_options(req, &dry) || (type = rz__patch_type(req)) == RZ_PATCH_NONE ||
	    !rz__patch_options(c, req, type, &force) ||
	    (patch = rz__read_patch(req, type)) == NULL) {
		goto out;
	}
	if (type == RZ_PATCH_APPLY) {
		rz__handle_apply(c, req, tenant, name, patch, dry, force);
		patch = NULL;
		goto out;
	}
	cur = rz__current(c, req, tenant, name);
	if (cur == NULL) {
		goto out;
	}
	if (type == RZ_PATCH_JSON) {
		if (!json_patch(c, req, name, cur, patch, &next)) {
			goto out;
		}
		rv = json_is_object(next) ? rz__body_rv(next, causes) : 0;
	} else {
		rv = rz__body_rv(patch, causes);
		next = rz_merge_patch(cur, patch);
	}
	rv = rv ? rv : rz_object_rv(cur);
	if (next == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
	} else if (!json_is_object(next)) {
		rz_reply_error(req, 400, NULL, "the patched document must be a JSON object");
	} else if (rz__match_url(req, c->k, next, tenant, name)) {
		rz__update(c, req,
		           &(struct rz__update){ .tenant = tenant,
		                                 .name = name,
		                                 .obj = next,
		                                 .cur = cur,
		                                 .rv = rv,
		                                 .dry = dry },
		           causes);
		next = NULL;
	}
out:
	json_decref(next);
	json_decref(cur);
	json_decref(causes);
	json_decref(patch);
}

/* DELETE: 200 with the last state when the object is gone, 202 while finalizers hold it.
 * An optional body {"preconditions": {"resourceVersion": "N"}} guards against races. */
/* A DELETE's body, Kubernetes' DeleteOptions: preconditions.resourceVersion (into *rv),
 * dryRun ["All"] (sets *dry), propagationPolicy. Replies 400 and returns false when bad. */
static bool delete_options(rz_req_t *req, int64_t *rv, bool *dry)
{
	json_t *opts = rz__read_body(req), *d, *x;
	const char *pre, *pp;
	size_t i;
	bool ok = true;

	if (opts == NULL) {
		return false;
	}
	pre = json_string_value(
	    json_object_get(json_object_get(opts, "preconditions"), "resourceVersion"));
	pp = json_string_value(json_object_get(opts, "propagationPolicy"));
	d = json_object_get(opts, "dryRun");
	if (pre != NULL && !rz_parse_int(pre, 1, INT64_MAX, rv)) {
		rz_reply_error(req, 400, NULL, "invalid preconditions.resourceVersion '%s'",
		               ECHO(pre));
		ok = false;
	} else if (!policy_ok(req, pp)) {
		ok = false;
	}
	json_array_foreach(d, i, x)
	{
		if (ok &&
		    (json_string_value(x) == NULL || strcmp(json_string_value(x), "All") != 0)) {
			rz_reply_error(req, 400, NULL,
			               "dryRun: Unsupported value: supported values: \"All\"");
			ok = false;
		}
		*dry = true;
	}
	json_decref(opts);
	return ok;
}

void rz__handle_delete(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	size_t len;
	int64_t rv = 0;
	json_t *out = NULL, *cur;
	rz_access_hook_t audit;
	bool gone = false, dry;
	rz_err_t err = { 0 };
	int rc;

	if (!write_options(req, &dry)) {
		return;
	}
	rz_req_body(req, &len);
	if (len > 0 && !delete_options(req, &rv, &dry)) {
		return;
	}
	cur = rz__current(c, req, tenant, name);
	if (cur == NULL) {
		return;
	}
	if (c->hooks->delete_check != NULL && !c->hooks->delete_check(c, req, cur, name)) {
		json_decref(cur);
		return;
	}
	if (dry) {
		rz_reply_json(req, 200, cur);
		return;
	}
	json_decref(cur);
	rz_store_next(c->api->store, &(rz_write_opts_t){ .group = true });
	rc = rz_store_delete(c->api->store, c->k, tenant, name, rv,
	                     rz_access_hook(c->api->access, req, 0, NULL, NULL, &audit), &out,
	                     &gone, &err);
	if (rc != 0) {
		json_decref(out);
		rz__reply_store_error(req, c->k, name, rc, &err);
		return;
	}
	if (c->api->access != NULL) {
		rz_req_set_audited(req);
	}
	rz__reply_durable(c->api, req, c->k, gone ? 200 : 202, out, NULL);
}

/* ------------------------------------------------------------------ for other routes */

/* What the writes of .../scale (scale.c) share with these. */
bool rz__write_options(rz_req_t *req, bool *dry)
{
	return write_options(req, dry);
}

bool rz__apply_json_patch(struct rctx *c, rz_req_t *req, const char *name, const json_t *cur,
                          const json_t *patch, json_t **next)
{
	return json_patch(c, req, name, cur, patch, next);
}

void rz__update_spec(struct rctx *c, rz_req_t *req, const char *tenant, const char *name,
                     json_t *obj, const json_t *cur, int64_t rv, bool dry)
{
	json_t *causes = json_array();

	rz__update(
	    c, req,
	    &(struct rz__update){
	        .tenant = tenant, .name = name, .obj = obj, .cur = cur, .rv = rv, .dry = dry },
	    causes);
	json_decref(causes);
}
