/* core/api/kindhooks.c - the kinds' own checks on writes: the last admin, a token's ceiling. */
#include <config.h>

#include <string.h>

#include "core/api/api-int.h"
#include "core/auth/auth.h"
#include "core/model/fields.h"

/* ------------------------------------------------------------------ users and tokens */

/* Enabled admins other than except. */
static size_t other_admins(rz_api_t *api, const char *except)
{
	rz_list_opts_t o = { 0 };
	json_t *items = NULL, *u;
	bool more;
	size_t i, n = 0;
	rz_err_t err = { 0 };

	if (rz_store_list(api->store, rz_kind_by_name("User"), &o, &items, &more, &err) != 0) {
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
bool rz__last_admin_kept(struct rctx *c, const json_t *old, const json_t *next, json_t *causes)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(old, "metadata"), "name"));

	if (strcmp(c->k->kind, "User") != 0 || !active_admin(old) || active_admin(next) ||
	    other_admins(c->api, name) > 0) {
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

/* A token's ceiling (rz_auth_mint_check): its owner's role and the credential making it. */
void rz__token_role(struct rctx *c, rz_req_t *req, json_t *obj, const char *owner, json_t *causes)
{
	json_t *u = NULL;
	rz_err_t err = { 0 };
	int have;

	if (rz_store_get(c->api->store, rz_kind_by_name("User"), NULL, owner, &u, &err) != 0) {
		return; /* the store reports the missing user */
	}
	have =
	    rz_role_parse(json_string_value(json_object_get(json_object_get(u, "spec"), "role")));
	json_decref(u);
	rz_auth_mint_check(rz_access_principal(req), have, json_object_get(obj, "spec"), causes);
}
