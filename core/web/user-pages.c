/* core/web/user-pages.c - the WebUI's users (an admin's): the list and the create form, a
 * user's page (role, disabled, its API tokens), a new token's one showing of its secret, and
 * the confirmations of deleting a user and revoking a token. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/web/page.h"

static void get_users(rz_req_t *req, void *ctx);
static void post_users(rz_req_t *req, void *ctx);
static void get_user(rz_req_t *req, void *ctx);
static void post_role(rz_req_t *req, void *ctx);
static void post_disabled(rz_req_t *req, void *ctx);
static void get_delete_user(rz_req_t *req, void *ctx);
static void post_delete_user(rz_req_t *req, void *ctx);
static void post_tokens(rz_req_t *req, void *ctx);
static void get_token(rz_req_t *req, void *ctx);
static void get_revoke(rz_req_t *req, void *ctx);
static void post_revoke(rz_req_t *req, void *ctx);
static void get_live_users(rz_req_t *req, void *ctx);
static void get_live_tokens(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/users", get_users),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/users", get_live_users),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/users/{name}/tokens", get_live_tokens),
	RZ__WEB_ROUTE(RZ_M_POST, "/users", post_users),
	RZ__WEB_ROUTE(RZ_M_GET, "/users/{name}", get_user),
	RZ__WEB_ROUTE(RZ_M_POST, "/users/{name}/role", post_role),
	RZ__WEB_ROUTE(RZ_M_POST, "/users/{name}/disabled", post_disabled),
	RZ__WEB_ROUTE(RZ_M_GET, "/users/{name}/delete", get_delete_user),
	RZ__WEB_ROUTE(RZ_M_POST, "/users/{name}/delete", post_delete_user),
	RZ__WEB_ROUTE(RZ_M_POST, "/users/{name}/tokens", post_tokens),
	RZ__WEB_ROUTE(RZ_M_GET, "/users/{name}/tokens/{id}", get_token),
	RZ__WEB_ROUTE(RZ_M_GET, "/users/{name}/tokens/{id}/revoke", get_revoke),
	RZ__WEB_ROUTE(RZ_M_POST, "/users/{name}/tokens/{id}/revoke", post_revoke),
};

/* ------------------------------------------------------------------ users */

/* "none": what AccessBindings grant on some tenants only */
static const char *const roles[] = { "none", "view", "edit", "admin" };

/* The role choices with want selected. */
static json_t *role_options(const char *want)
{
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		json_array_append_new(out, json_pack("{s:s, s:b}", "name", roles[i], "selected",
		                                     strcmp(roles[i], want) == 0));
	}
	return out;
}

/* A user's row: its role, when it was created and last logged in (relative times), and
 * whether it may log in (a badge). */
static json_t *user_row(const json_t *u)
{
	const char *login = rz__str(u, "status.lastLogin");
	bool off = json_is_true(json_object_get(json_object_get(u, "spec"), "disabled"));

	return json_pack("{s:s, s:s, s:o, s:o, s:b, s:{s:s, s:s}}", "name",
	                 rz__str(u, "metadata.name"), "role", rz__str(u, "spec.role"), "created",
	                 rz__when(rz__str(u, "metadata.creationTimestamp")), "lastLogin",
	                 rz__when(login[0] ? login : NULL), "disabled", off, "access", "text",
	                 off ? "Disabled" : "Enabled", "tone", off ? "bad" : "ok");
}

static void users_ready(rz__page_t *pg)
{
	json_t *rows = json_array(), *it, *f;
	size_t i;

	if (rz__read_failed(pg, 0, "the users")) {
		json_decref(rows);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 0)), i, it)
	{
		json_array_append_new(rows, user_row(it));
	}
	rz__nav(pg, "navUsers", "Users");
	json_object_set_new(pg->view, "rows", rows);
	rz__live_have_rows(pg, "parts/user-rows");
	f = rz__form_view(pg);
	json_object_set_new(f, "roles", role_options(pg->form ? rz__form(pg, "role") : "view"));
	sodium_memzero((char *)rz__form(pg, "password"), strlen(rz__form(pg, "password")));
	json_object_del(json_object_get(f, "values"), "password"); /* never back on the page */
	rz__page_render(pg, "pages/users", pg->code ? pg->code : 200);
}

/* The users, live (an admin's: the API's watch refuses others). */
static void get_live_users(rz_req_t *req, void *ctx)
{
	rz__live_table(ctx, req, "/api/v1/users?watch=true", "parts/user-rows", user_row);
}

static void users_page(rz__page_t *pg)
{
	pg->ready = users_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/users");
	rz__page_release(pg);
}

static void get_users(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		users_page(pg);
	}
}

/* The forms' fields (core/web/form.c: each problem beside its field, a summary above that
 * links to it, in plain words): Create a user; a user's role and access. */
static const rz__field_t create_fields[] = {
	{ "metadata.name", "metadata_name", "Name", "u-name" },
	{ "spec.role", "spec_role", "Role", "u-role" },
	{ "spec.password", "spec_password", "Initial password", "u-password" },
};
static const rz__field_t role_fields[] = { { "spec.role", "role", "Role", "u-role" } };
static const rz__field_t access_fields[] = {
	{ "spec.disabled", "disabled", "Access", "u-disable" },
};
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static void user_created(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__form_failed(pg, code, body, create_fields, NFIELDS(create_fields))) {
		users_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/users/%s", rz__str(body, "metadata.name"));
	rz__page_redirect(pg, path, "created");
}

static void post_users(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);

	if (pg != NULL) {
		rz__page_act(pg, "POST", "/api/v1/users", "application/json",
		             json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s}}", "apiVersion",
		                       "rezuscloud.io/v1", "kind", "User", "metadata", "name",
		                       rz__form(pg, "name"), "spec", "role", rz__form(pg, "role"),
		                       "password", rz__form(pg, "password")),
		             user_created);
	}
}

/* ------------------------------------------------------------------ a user */

#define TOKENS_PART "parts/user-tokens"

/* view.tokens (and noTokens, user) of the user u and its token list, as the page and its
 * live region show them. */
static void token_rows(rz__page_t *pg, const json_t *u, json_t *list)
{
	json_t *toks = json_array(), *it;
	size_t i;

	json_array_foreach(rz__items(list), i, it)
	{
		json_t *row = rz__token_row(it);
		if (json_is_true(json_object_get(json_object_get(u, "spec"), "disabled"))) {
			/* the API refuses every token of a disabled user, however fresh */
			json_object_set_new(
			    row, "state",
			    json_pack("{s:s, s:s}", "text", "Refused", "tone", "bad"));
		}
		json_array_append_new(toks, row);
	}
	json_object_set_new(pg->view, "user", user_row(u));
	json_object_set_new(pg->view, "noTokens", json_boolean(json_array_size(toks) == 0));
	json_object_set_new(pg->view, "tokens", toks);
}

static void user_ready(rz__page_t *pg)
{
	json_t *u = rz__page_got(pg, 0), *f;
	const char *name = rz_req_param(pg->req, "name");
	char title[128];

	if (rz__read_failed(pg, 0, "user") || rz__read_failed(pg, 1, "tokens of the user")) {
		return;
	}
	token_rows(pg, u, rz__page_got(pg, 1));
	rz__live_view_have(pg, TOKENS_PART, "liveHave");
	snprintf(title, sizeof(title), "User %s", name);
	rz__nav(pg, "navUsers", title);
	json_object_set_new(pg->view, "roles", role_options(rz__str(u, "spec.role")));
	f = rz__form_view(pg);
	json_object_set_new(f, "tokenRoles",
	                    role_options(pg->form && rz__form(pg, "tokenRole")[0]
	                                     ? rz__form(pg, "tokenRole")
	                                     : rz__str(u, "spec.role")));
	json_object_set_new(f, "expiries",
	                    rz__token_expiries(pg->form && rz__form(pg, "expiresIn")[0]
	                                           ? rz__form(pg, "expiresIn")
	                                           : RZ__TOKEN_EXPIRY_DEFAULT));
	rz__page_render(pg, "pages/user", pg->code ? pg->code : 200);
}

static void tokens_read(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "name");

	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/users/%s", name);
	rz__page_fetch(pg, 1, "/api/v1/users/%s/tokens", name);
	rz__page_release(pg);
}

static void tokens_build(rz__page_t *pg)
{
	json_t *u = rz__page_got(pg, 0), *list = rz__page_got(pg, 1);

	if (u == NULL || list == NULL) {
		rz__live_view_keep(pg);
		return;
	}
	token_rows(pg, u, list);
	rz__live_view_send(pg);
}

/* A user's tokens, live: read again when the user (disabled, enabled) or its tokens (made,
 * used, revoked) change. An admin's, as the page. */
static void get_live_tokens(rz_req_t *req, void *ctx)
{
	const char *name = rz_req_param(req, "name");
	rz__page_t *pg = rz__page_new(ctx, req);
	char paths[2][200];
	rz__live_view_spec_t spec = {
		.read = tokens_read,
		.build = tokens_build,
		.tpl = TOKENS_PART,
		.event = "rows",
	};

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return; /* answered */
	}
	rz__page_free(pg);
	snprintf(paths[0], sizeof(paths[0]), "/api/v1/users?fieldSelector=metadata.name%%3D%s",
	         name);
	snprintf(paths[1], sizeof(paths[1]), "/api/v1/users/%s/tokens", name);
	spec.watches[0] = paths[0]; /* copied by rz__live_view */
	spec.watches[1] = paths[1];
	rz__live_view(ctx, req, &spec, NULL);
}

static void user_page(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "name");

	pg->ready = user_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/users/%s", name);
	rz__page_fetch(pg, 1, "/api/v1/users/%s/tokens", name);
	rz__page_release(pg);
}

/* A user's page is an admin's; anyone else asking for their own is sent to My account,
 * where they manage their own tokens and password (the API's owner routes). */
static void get_user(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg == NULL) {
		return;
	}
	if (!rz__may_all(pg, RZ_ROLE_ADMIN) &&
	    strcmp(rz_req_param(req, "name"), pg->p->user) == 0) {
		rz__page_redirect(pg, "/account", NULL);
		return;
	}
	user_page(pg);
}

/* ------------------------------------------------------------------ disabling a user */

static void disabled_changed(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	/* beside the disable control: the API's cause (the last admin) */
	if (rz__form_failed(pg, code, body, access_fields, NFIELDS(access_fields))) {
		user_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/users/%s", rz_req_param(pg->req, "name"));
	rz__page_redirect(pg, path,
	                  json_is_true(json_object_get(json_object_get(body, "spec"), "disabled"))
	                      ? "disabled"
	                      : "enabled");
}

/* POST /users/{name}/disabled with disabled=true|false: the API's User.spec.disabled. */
static void post_disabled(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	const char *want;
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	want = rz__form(pg, "disabled");
	if (strcmp(want, "true") != 0 && strcmp(want, "false") != 0) {
		rz__page_error(pg, 400, "disabled is true or false.");
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/users/%s", rz_req_param(req, "name"));
	rz__page_act(pg, "PATCH", target, "application/merge-patch+json",
	             json_pack("{s:{s:b}}", "spec", "disabled", strcmp(want, "true") == 0),
	             disabled_changed);
}

static void role_changed(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	/* beside the role form, not the token form's own role field */
	if (rz__form_failed(pg, code, body, role_fields, NFIELDS(role_fields))) {
		user_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/users/%s", rz_req_param(pg->req, "name"));
	rz__page_redirect(pg, path, "role");
}

static void post_role(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/users/%s", rz_req_param(req, "name"));
	rz__page_act(pg, "PATCH", target, "application/merge-patch+json",
	             json_pack("{s:{s:s}}", "spec", "role", rz__form(pg, "role")), role_changed);
}

/* ------------------------------------------------------------------ deleting a user */

static void delete_user_ready(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "name");
	size_t ntok = json_array_size(rz__items(rz__page_got(pg, 1)));
	char q[160], what[256], action[160], button[160], back[160];

	if (rz__read_failed(pg, 0, "user")) {
		return;
	}
	snprintf(q, sizeof(q), "Delete the user %s?", name);
	snprintf(what, sizeof(what),
	         "%s can no longer log in, and its %zu API token%s working at once.", name, ntok,
	         ntok == 1 ? " stops" : "s stop");
	snprintf(action, sizeof(action), "/users/%s/delete", name);
	snprintf(button, sizeof(button), "Delete %s and its tokens", name);
	snprintf(back, sizeof(back), "/users/%s", name);
	rz__confirm(pg, "Delete a user", q, what, action, button, back);
}

static void get_delete_user(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		pg->ready = delete_user_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/users/%s", rz_req_param(req, "name"));
		rz__page_fetch(pg, 1, "/api/v1/users/%s/tokens", rz_req_param(req, "name"));
		rz__page_release(pg);
	}
}

static void user_deleted(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		user_page(pg);
		return;
	}
	rz__page_redirect(pg, "/users", "deleted");
}

static void post_delete_user(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/users/%s", rz_req_param(req, "name"));
	rz__page_act(pg, "DELETE", target, NULL, NULL, user_deleted);
}

/* ------------------------------------------------------------------ tokens */

static void token_created(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	const char *secret = json_string_value(json_object_get(body, "secret"));
	const char *id = rz__str(body, "metadata.name");
	const char *user = rz_req_param(pg->req, "name");
	char path[200];

	(void)r;
	if (rz__token_failed(pg, code, body)) {
		user_page(pg);
		return;
	}
	if (secret != NULL && id[0] != '\0') {
		rz__token_shown_put(pg->p->jti, user, id, secret);
	}
	snprintf(path, sizeof(path), "/users/%s/tokens/%s", user, id);
	rz__page_redirect(pg, path, NULL);
}

static void post_tokens(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];
	json_t *spec;

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	if ((spec = rz__token_spec(pg)) == NULL) {
		user_page(pg);
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/users/%s/tokens", rz_req_param(req, "name"));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{}, s:o}", "apiVersion", "rezuscloud.io/v1", "kind",
	                       "APIToken", "metadata", "spec", spec),
	             token_created);
}

/* The page after a token's creation: its secret, the one time it is shown. */
static void token_ready(rz__page_t *pg)
{
	const char *user = rz_req_param(pg->req, "name"), *id = rz_req_param(pg->req, "id");
	char secret[RZ_TOKEN_SECRET_LEN + 1], title[160];

	if (rz__read_failed(pg, 0, "token")) {
		return;
	}
	rz__token_shown_take(pg->p->jti, user, id, secret);
	snprintf(title, sizeof(title), "API token %s", id);
	rz__nav(pg, "navUsers", title);
	json_object_set_new(pg->view, "user", json_pack("{s:s}", "name", user));
	json_object_set_new(pg->view, "token", rz__token_row(rz__page_got(pg, 0)));
	if (secret[0] != '\0') {
		json_object_set_new(pg->view, "secret", json_string(secret));
	}
	sodium_memzero(secret, sizeof(secret));
	rz__page_render(pg, "pages/token", 200);
}

static void get_token(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		pg->ready = token_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/users/%s/tokens/%s", rz_req_param(req, "name"),
		               rz_req_param(req, "id"));
		rz__page_release(pg);
	}
}

static void revoke_ready(rz__page_t *pg)
{
	const char *user = rz_req_param(pg->req, "name"), *id = rz_req_param(pg->req, "id");
	const char *desc = rz__str(rz__page_got(pg, 0), "spec.description");
	char q[160], what[512], action[200], button[160], back[160];

	if (rz__read_failed(pg, 0, "token")) {
		return;
	}
	snprintf(q, sizeof(q), "Revoke the API token %s of %s?", id, user);
	snprintf(what, sizeof(what),
	         "Every program that uses it%s%s%s is refused from now on; this cannot be undone.",
	         desc[0] ? " (" : "", desc, desc[0] ? ")" : "");
	snprintf(action, sizeof(action), "/users/%s/tokens/%s/revoke", user, id);
	snprintf(button, sizeof(button), "Revoke %s", id);
	snprintf(back, sizeof(back), "/users/%s", user);
	rz__confirm(pg, "Revoke a token", q, what, action, button, back);
}

static void get_revoke(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		pg->ready = revoke_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/users/%s/tokens/%s", rz_req_param(req, "name"),
		               rz_req_param(req, "id"));
		rz__page_release(pg);
	}
}

static void revoked(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		user_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/users/%s", rz_req_param(pg->req, "name"));
	rz__page_redirect(pg, path, "revoked");
}

static void post_revoke(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[200];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/users/%s/tokens/%s", rz_req_param(req, "name"),
	         rz_req_param(req, "id"));
	rz__page_act(pg, "DELETE", target, NULL, NULL, revoked);
}

/* ------------------------------------------------------------------ routes */

int rz__user_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
