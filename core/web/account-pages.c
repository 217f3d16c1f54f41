/* core/web/account-pages.c - My account, every signed-in user's own page: who one is (role,
 * groups, single sign-on), one's API tokens (made and revoked through the API's owner routes,
 * whose ceiling the API enforces), and the password form for a local user. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/web/page.h"

static void get_account(rz_req_t *req, void *ctx);
static void post_account_tokens(rz_req_t *req, void *ctx);
static void get_live_tokens(rz_req_t *req, void *ctx);
static void post_account_revoke(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/account", get_account),
	RZ__WEB_ROUTE(RZ_M_POST, "/account/tokens", post_account_tokens),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/account/tokens", get_live_tokens),
	RZ__WEB_ROUTE(RZ_M_POST, "/account/tokens/{id}/revoke", post_account_revoke),
};

/* The token roles offered: "" makes the API choose (the highest one may mint). */
static const char *const token_roles[] = { "", "view", "edit", "admin" };

static json_t *token_role_options(const char *want)
{
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(token_roles) / sizeof(token_roles[0]); i++) {
		json_array_append_new(
		    out, json_pack("{s:s, s:s, s:b}", "value", token_roles[i], "label",
		                   token_roles[i][0] ? token_roles[i] : "as far as I may (default)",
		                   "selected", strcmp(token_roles[i], want) == 0));
	}
	return out;
}

/* Who one is, from whoami (slot 0): {name, role, groups, noGroups, sso}. */
static json_t *account_view(const json_t *who)
{
	json_t *groups = json_object_get(who, "groups");

	return json_pack("{s:s, s:s, s:b, s:o, s:b, s:b}", "name", rz__str(who, "user"), "role",
	                 rz__str(who, "role"), "noRole", strcmp(rz__str(who, "role"), "none") == 0,
	                 "groups", groups ? json_incref(groups) : json_array(), "noGroups",
	                 json_array_size(groups) == 0, "sso",
	                 json_is_true(json_object_get(who, "singleSignOn")));
}

#define TOKENS_PART "parts/account-tokens"

/* view.tokens and noTokens from the list, as the page and its live region show them. */
static void token_rows(rz__page_t *pg, json_t *list)
{
	json_t *toks = json_array(), *it;
	size_t i;

	json_array_foreach(rz__items(list), i, it)
	{
		json_array_append_new(toks, rz__token_row(it));
	}
	json_object_set_new(pg->view, "noTokens", json_boolean(json_array_size(toks) == 0));
	json_object_set_new(pg->view, "tokens", toks);
}

static void account_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *f;
	const char *fresh = rz_req_query(pg->req, "new");
	char secret[RZ_TOKEN_SECRET_LEN + 1];

	if (rz__page_got(pg, 0) == NULL) {
		rz__page_error(pg, 502, "Who you are cannot be read.");
		return;
	}
	token_rows(pg, rz__page_got(pg, 1));
	rz__live_view_have(pg, TOKENS_PART, "liveHave");
	rz__page_read_error(pg, 1, "your API tokens");
	json_object_set_new(v, "title", json_string("My account"));
	json_object_set_new(v, "navAccount", json_true());
	json_object_set_new(v, "account", account_view(rz__page_got(pg, 0)));
	if (fresh != NULL && pg->form == NULL) {
		rz__token_shown_take(pg->p->jti, pg->p->user, fresh, secret);
		if (secret[0] != '\0') {
			json_object_set_new(v, "secret",
			                    json_pack("{s:s, s:s}", "id", fresh, "value", secret));
		}
		sodium_memzero(secret, sizeof(secret));
	}
	if ((f = json_object_get(v, "form")) == NULL) {
		f = json_object();
		json_object_set_new(v, "form", f);
	}
	json_object_set_new(f, "values", pg->form ? json_incref(pg->form) : json_object());
	json_object_set_new(f, "tokenRoles", token_role_options(rz__form(pg, "tokenRole")));
	json_object_set_new(f, "expiries",
	                    rz__token_expiries(rz__form(pg, "expiresIn")[0]
	                                           ? rz__form(pg, "expiresIn")
	                                           : RZ__TOKEN_EXPIRY_DEFAULT));
	rz__page_render(pg, "pages/account", pg->code ? pg->code : 200);
}

static void account_page(rz__page_t *pg)
{
	pg->ready = account_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/auth/whoami");
	rz__page_fetch(pg, 1, "/api/v1/users/%s/tokens", pg->p->user);
	rz__page_release(pg);
}

static void tokens_read(rz__page_t *pg)
{
	rz__page_hold(pg);
	rz__page_fetch(pg, 1, "/api/v1/users/%s/tokens", pg->p->user);
	rz__page_release(pg);
}

static void tokens_build(rz__page_t *pg)
{
	json_t *list = rz__page_got(pg, 1);

	if (list == NULL) {
		rz__live_view_keep(pg);
		return;
	}
	token_rows(pg, list);
	rz__live_view_send(pg);
}

/* One's own tokens, live: made, used or revoked elsewhere (rezusctl, another browser). */
static void get_live_tokens(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);
	char path[200];
	rz__live_view_spec_t spec = {
		.read = tokens_read,
		.build = tokens_build,
		.tpl = TOKENS_PART,
		.event = "rows",
	};

	if (pg == NULL) {
		return;
	}
	if (pg->p == NULL) {
		rz__page_free(pg);
		rz__live_view(ctx, req, &spec, NULL); /* answers 204: the page logs in */
		return;
	}
	snprintf(path, sizeof(path), "/api/v1/users/%s/tokens", pg->p->user);
	rz__page_free(pg);
	spec.watches[0] = path; /* copied by rz__live_view */
	rz__live_view(ctx, req, &spec, NULL);
}

static void get_account(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg)) {
		account_page(pg);
	}
}

/* ------------------------------------------------------------------ tokens */

static void token_made(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	const char *secret = json_string_value(json_object_get(body, "secret"));
	const char *id = rz__str(body, "metadata.name");
	char path[160];

	(void)r;
	if (rz__token_failed(pg, code, body)) {
		account_page(pg); /* the API's cause (a role above the ceiling) beside its field */
		return;
	}
	if (secret != NULL && id[0] != '\0') {
		rz__token_shown_put(pg->p->jti, pg->p->user, id, secret);
	}
	snprintf(path, sizeof(path), "/account?new=%s", id);
	rz__page_redirect(pg, path, NULL);
}

static void post_account_tokens(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];
	json_t *spec;

	if (pg == NULL) {
		return;
	}
	if ((spec = rz__token_spec(pg)) == NULL) {
		account_page(pg);
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/users/%s/tokens", pg->p->user);
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{}, s:o}", "apiVersion", "rezuscloud.io/v1", "kind",
	                       "APIToken", "metadata", "spec", spec),
	             token_made);
}

static void token_revoked(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		json_decref(pg->form); /* the create form keeps nothing of this one */
		pg->form = NULL;
		account_page(pg);
		return;
	}
	rz__page_redirect(pg, "/account", "revoked");
}

static void post_account_revoke(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[200];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/users/%s/tokens/%s", pg->p->user,
	         rz_req_param(req, "id"));
	rz__page_act(pg, "DELETE", target, NULL, NULL, token_revoked);
}

int rz__account_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
