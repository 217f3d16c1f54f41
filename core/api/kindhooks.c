/* core/api/kindhooks.c - what particular kinds add to the verbs, and the kinds the API reads. */
#include <config.h>

#include <assert.h>
#include <string.h>

#include "core/api/api-int.h"
#include "core/auth/access.h"
#include "core/auth/auth.h"
#include "core/model/fields.h"
#include "core/plugin/plugins.h"

/* ------------------------------------------------------------------ users */

/* Enabled admins other than except (c: a route of the users). */
static size_t other_admins(const struct rctx *c, const char *except)
{
	rz_list_opts_t o = { 0 };
	json_t *items = NULL, *u;
	bool more;
	size_t i, n = 0;
	rz_err_t err = { 0 };

	if (rz_store_list(c->api->store, c->k, &o, &items, &more, &err) != 0) {
		return 0;
	}
	json_array_foreach(items, i, u)
	{
		json_t *spec = json_object_get(u, "spec");
		const char *name =
		    json_string_value(json_object_get(json_object_get(u, "metadata"), "name"));
		const char *role = json_string_value(json_object_get(spec, "role"));
		n += role && strcmp(role, "admin") == 0 &&
		     !json_is_true(json_object_get(spec, "disabled")) && strcmp(name, except) != 0;
	}
	json_decref(items);
	return n;
}

static bool active_admin(const json_t *u)
{
	const json_t *spec = json_object_get(u, "spec");
	const char *role = json_string_value(json_object_get(spec, "role"));

	return u != NULL && role != NULL && strcmp(role, "admin") == 0 &&
	       !json_is_true(json_object_get(spec, "disabled"));
}

/* The last admin can neither be demoted, disabled nor deleted. next is NULL for a delete. */
static bool last_admin_kept(const struct rctx *c, const json_t *old, const json_t *next,
                            json_t *causes)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(old, "metadata"), "name"));

	if (!active_admin(old) || active_admin(next) || other_admins(c, name) > 0) {
		return true;
	}
	if (causes == NULL) {
		return false;
	} else if (next != NULL &&
	           !json_is_true(json_object_get(json_object_get(next, "spec"), "disabled"))) {
		rz_fields_cause(causes, "spec.role", RZ_CAUSE_FORBIDDEN,
		                "the last admin cannot be demoted");
	} else if (next != NULL) {
		rz_fields_cause(causes, "spec.disabled", RZ_CAUSE_FORBIDDEN,
		                "the last admin cannot be disabled");
	}
	return false;
}

static void user_update_check(const struct rctx *c, const json_t *old, const json_t *next,
                              json_t *causes)
{
	last_admin_kept(c, old, next, causes);
}

static bool user_delete_check(const struct rctx *c, rz_req_t *req, const json_t *cur,
                              const char *name)
{
	if (last_admin_kept(c, cur, NULL, NULL)) {
		return true;
	}
	rz_reply_error(req, 409, "Conflict",
	               "user \"%s\" is the last admin: it can neither be deleted, disabled "
	               "nor demoted",
	               name);
	return false;
}

static int credentials_hook(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone,
                            void *arg, rz_err_t *err)
{
	struct wr *w = arg;
	const char *user =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	const rz_principal_t *p = rz_access_principal(w->req);
	int rc = rz_auth_store_hash(db, user, w->hash, err);

	/* a new password ends the user's sessions, but the one setting it */
	return rc != 0 ? rc
	               : rz_auth_end_sessions(db, user,
	                                      p && strcmp(p->user, user) == 0 ? p->jti : NULL, err);
}

/* ------------------------------------------------------------------ tokens */

/* A token's ceiling (rz_auth_mint_check): its owner's role and the credential making it. */
static void token_role(const struct rctx *c, rz_req_t *req, json_t *obj, const char *owner,
                       json_t *causes)
{
	json_t *u = NULL;
	rz_err_t err = { 0 };
	int have;

	if (rz_store_get(c->api->store, c->owner, NULL, owner, &u, &err) != 0) {
		return; /* the store reports the missing user */
	}
	have =
	    rz_role_parse(json_string_value(json_object_get(json_object_get(u, "spec"), "role")));
	json_decref(u);
	rz_auth_mint_check(rz_access_principal(req), have, json_object_get(obj, "spec"), causes);
}

static int token_hook(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone, void *arg,
                      rz_err_t *err)
{
	static const char sql[] = "INSERT INTO token_secrets (user, id, hash) VALUES (?1, ?2, ?3)";
	struct wr *w = arg;
	const json_t *meta = json_object_get(obj, "metadata");
	char hash[RZ_HASH_HEX_LEN + 1];
	rz_stmt_t *s = rz_db_stmt(db, sql, err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_auth_token_hash(w->token, hash);
	rz_stmt_bind_text(s, 1, json_string_value(json_object_get(meta, "user")));
	rz_stmt_bind_text(s, 2, json_string_value(json_object_get(meta, "name")));
	rz_stmt_bind_text(s, 3, hash);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ node groups */

static void nodegroup_plugins_check(rz_plugins_t *plugins, const json_t *obj, const json_t *old,
                                    json_t *causes)
{
	rz_plugins_validate_nodegroup(plugins, obj, causes);
}

/* kubectl scale's replicas: the desired machines; what was counted: the machines there are,
 * labelled with their node group (core/report/report.c) */
static const rz__scale_t nodegroup_scale = { .spec = "count",
	                                     .status = "total",
	                                     .label = "rezuscloud.io/nodegroup" };

/* ------------------------------------------------------------------ the table */

static const rz__kind_hooks_t kind_hooks[] = {
	{ .kind = "APIToken",
	  .create_check = token_role,
	  .mints_secret = true,
	  .stored = token_hook },
	{ .kind = "Event", .core_v1 = &rz__core_v1_events },
	{ .kind = "NodeGroup",
	  .plugins_check = nodegroup_plugins_check,
	  .scale = &nodegroup_scale },
	{ .kind = "Tenant", .plugins_check = rz_plugins_validate_tenant },
	{ .kind = "User",
	  .update_check = user_update_check,
	  .delete_check = user_delete_check,
	  .stored = credentials_hook },
};

static const rz__kind_hooks_t no_hooks = { .kind = NULL };

const rz__kind_hooks_t *rz__kind_hooks_of(const rz_kind_t *k)
{
	const rz__kind_hooks_t *h = &no_hooks;

	for (size_t i = 0; k != NULL && i < sizeof(kind_hooks) / sizeof(kind_hooks[0]); i++) {
		if (strcmp(kind_hooks[i].kind, k->kind) == 0) {
			h = &kind_hooks[i];
		}
	}
	/* a secret taken out of the object must be kept somewhere */
	assert(k == NULL || (k->secret_field == NULL && !h->mints_secret) || h->stored != NULL);
	return h;
}

bool rz__kinds_find(rz__kinds_t *out)
{
	*out = (rz__kinds_t){ .tenant = rz_kind_by_name("Tenant"),
		              .machine = rz_kind_by_name("Machine"),
		              .run = rz_kind_by_name("Run"),
		              .event = rz_kind_by_name("Event"),
		              .config_patch = rz_kind_by_name("ConfigPatch") };
	return out->tenant != NULL && out->machine != NULL && out->run != NULL &&
	       out->event != NULL && out->config_patch != NULL;
}
