/* core/web/admin-pages.c - the WebUI's daemon-wide pages: providers, users and their API
 * tokens, the audit log, backups. Every read and write goes through the API's own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "core/base/clock.h"
#include "core/model/fields.h"
#include "core/web/page.h"

#define AUDIT_PAGE 50 /* audit rows a page shows, unless ?limit= (1 to AUDIT_MAX) says */
#define AUDIT_MAX  500
#define SHOWN_MAX  16  /* new tokens' secrets waiting for their one showing */
#define SHOWN_AGE  300 /* seconds a secret waits for it */
#define QUERY_MAX  900 /* the audit filters as a query string, at most */
#define STR_(x)    #x
#define STR(x)     STR_(x)

json_t *rz__token_spec(rz__page_t *pg)
{
	json_t *spec = json_object();

	if (rz__form(pg, "tokenRole")[0] != '\0') {
		json_object_set_new(spec, "role", json_string(rz__form(pg, "tokenRole")));
	}
	if (rz__form(pg, "description")[0] != '\0') {
		json_object_set_new(spec, "description", json_string(rz__form(pg, "description")));
	}
	if (!rz__token_expiry(pg, spec)) {
		json_decref(spec);
		return NULL;
	}
	return spec;
}

/* The routes of the daemon-wide pages (registered by rz_ui_routes with the UI as ctx). */
static void get_providers(rz_req_t *req, void *ctx);
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
static void get_audit(rz_req_t *req, void *ctx);
static void get_backups(rz_req_t *req, void *ctx);
static void post_backups(rz_req_t *req, void *ctx);
static void get_manifest(rz_req_t *req, void *ctx);
static void get_delete_backup(rz_req_t *req, void *ctx);
static void post_delete_backup(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/providers", get_providers),
	RZ__WEB_ROUTE(RZ_M_GET, "/users", get_users),
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
	RZ__WEB_ROUTE(RZ_M_GET, "/audit", get_audit),
	RZ__WEB_ROUTE(RZ_M_GET, "/backups", get_backups),
	RZ__WEB_ROUTE(RZ_M_POST, "/backups", post_backups),
	RZ__WEB_ROUTE(RZ_M_GET, "/backups/{name}/manifest", get_manifest),
	RZ__WEB_ROUTE(RZ_M_GET, "/backups/{name}/delete", get_delete_backup),
	RZ__WEB_ROUTE(RZ_M_POST, "/backups/{name}/delete", post_delete_backup),
};

/* ------------------------------------------------------------------ a secret shown once */

/* A new token's secret, kept in memory from its creation until the session that created it
 * reads it once (the page after the redirect), or SHOWN_AGE seconds. Never in a URL. */
static struct shown {
	char jti[40];
	char user[64];
	char id[64];
	char secret[RZ_TOKEN_SECRET_LEN + 1];
	time_t at;
} shown[SHOWN_MAX];

static void shown_clear(struct shown *s)
{
	sodium_memzero(s, sizeof(*s));
}

static void shown_expire(void)
{
	time_t now = time(NULL);

	for (size_t i = 0; i < SHOWN_MAX; i++) {
		if (shown[i].jti[0] != '\0' && now - shown[i].at > SHOWN_AGE) {
			shown_clear(&shown[i]);
		}
	}
}

void rz__token_shown_put(const char *jti, const char *user, const char *id, const char *secret)
{
	struct shown *s = &shown[0];

	shown_expire();
	for (size_t i = 0; i < SHOWN_MAX; i++) {
		if (shown[i].jti[0] == '\0' || shown[i].at < s->at) {
			s = &shown[i];
			if (s->jti[0] == '\0') {
				break;
			}
		}
	}
	shown_clear(s); /* full: the oldest one is never shown */
	snprintf(s->jti, sizeof(s->jti), "%s", jti);
	snprintf(s->user, sizeof(s->user), "%s", user);
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->secret, sizeof(s->secret), "%s", secret);
	s->at = time(NULL);
}

/* Take the secret (copied into out, "" when none): it is forgotten as it is read. */
void rz__token_shown_take(const char *jti, const char *user, const char *id,
                          char out[RZ_TOKEN_SECRET_LEN + 1])
{
	out[0] = '\0';
	shown_expire();
	for (size_t i = 0; i < SHOWN_MAX; i++) {
		if (shown[i].jti[0] != '\0' && strcmp(shown[i].jti, jti) == 0 &&
		    strcmp(shown[i].user, user) == 0 && strcmp(shown[i].id, id) == 0) {
			memcpy(out, shown[i].secret, sizeof(shown[i].secret));
			shown_clear(&shown[i]);
		}
	}
}

void rz__admin_forget(void)
{
	for (size_t i = 0; i < SHOWN_MAX; i++) {
		shown_clear(&shown[i]);
	}
}

/* ------------------------------------------------------------------ helpers */

/* A page of a logged-in user, or NULL (answered). */
static rz__page_t *get_page(rz_ui_t *ui, rz_req_t *req)
{
	rz__page_t *pg = rz__page_new(ui, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return NULL;
	}
	return pg;
}

/* A failed read: the page says why (403: the role may not). True when it answered. */
static bool read_failed(rz__page_t *pg, int i, const char *what)
{
	char msg[200];
	int code = rz__page_code(pg, i);

	if (rz__page_got(pg, i) != NULL) {
		return false;
	}
	if (code == 403) {
		snprintf(msg, sizeof(msg), "Your role (%s) may not read %s: it is for admins.",
		         rz_role_name(pg->p->role), what);
	} else if (code == 404) {
		snprintf(msg, sizeof(msg), "There is no such %s.", what);
	} else {
		snprintf(msg, sizeof(msg), "Cannot read %s (HTTP %d).", what, code);
	}
	rz__page_error(pg, code == 403 || code == 404 ? code : 502, msg);
	return true;
}

static void nav(rz__page_t *pg, const char *flag, const char *title)
{
	json_object_set_new(pg->view, flag, json_true());
	json_object_set_new(pg->view, "title", json_string(title));
}

static json_t *form_view(rz__page_t *pg)
{
	json_t *f = json_object_get(pg->view, "form");

	if (f == NULL) {
		f = json_object();
		json_object_set_new(pg->view, "form", f);
	}
	if (json_object_get(f, "values") == NULL) {
		json_object_set_new(f, "values", pg->form ? json_incref(pg->form) : json_object());
	}
	return f;
}

/* Append name=value to a query string, percent-encoded; false when it does not fit. */
static bool query_add(char *q, size_t size, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(q);

	if (value == NULL || value[0] == '\0') {
		return true;
	}
	n += (size_t)snprintf(q + n, n < size ? size - n : 0, "%s%s=", n ? "&" : "", name);
	for (const unsigned char *s = (const unsigned char *)value; *s != '\0' && n + 4 < size;
	     s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-_.~", *s) != NULL) {
			q[n++] = (char)*s;
		} else {
			q[n++] = '%';
			q[n++] = hex[*s >> 4];
			q[n++] = hex[*s & 15];
		}
		q[n] = '\0';
	}
	return n + 4 < size;
}

/* ------------------------------------------------------------------ providers */

static void providers_ready(rz__page_t *pg)
{
	json_t *rows = json_array(), *it;
	size_t i;

	if (read_failed(pg, 0, "the providers")) {
		json_decref(rows);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 0)), i, it)
	{
		const json_t *spec = json_object_get(it, "spec");
		char kinds[64] = "";
		size_t j;
		json_t *k;
		json_array_foreach(json_object_get(spec, "kinds"), j, k)
		{
			size_t n = strlen(kinds);
			snprintf(kinds + n, sizeof(kinds) - n, "%s%s", n ? ", " : "",
			         json_string_value(k) ? json_string_value(k) : "");
		}
		json_array_append_new(
		    rows,
		    json_pack(
		        "{s:s, s:s, s:s, s:s, s:s, s:b, s:s}", "name", rz__str(it, "metadata.name"),
		        "version", rz__str(it, "spec.version"), "abi",
		        rz__str(it, "spec.abiVersion"), "kinds", kinds, "description",
		        rz__str(it, "spec.description"), "loaded",
		        json_is_true(json_object_get(json_object_get(it, "status"), "loaded")),
		        "error", rz__str(it, "status.error")));
	}
	nav(pg, "navProviders", "Providers");
	json_object_set_new(pg->view, "empty", json_boolean(json_array_size(rows) == 0));
	json_object_set_new(pg->view, "providers", rows);
	rz__page_render(pg, "pages/providers", 200);
}

static void get_providers(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req);

	if (pg != NULL) {
		pg->ready = providers_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/providers");
		rz__page_release(pg);
	}
}

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

static json_t *user_row(const json_t *u)
{
	const char *login = rz__str(u, "status.lastLogin");

	return json_pack("{s:s, s:s, s:s, s:s, s:b}", "name", rz__str(u, "metadata.name"), "role",
	                 rz__str(u, "spec.role"), "created",
	                 rz__str(u, "metadata.creationTimestamp"), "lastLogin",
	                 login[0] ? login : "never", "disabled",
	                 json_is_true(json_object_get(json_object_get(u, "spec"), "disabled")));
}

static void users_ready(rz__page_t *pg)
{
	json_t *rows = json_array(), *it, *f;
	size_t i;

	if (read_failed(pg, 0, "the users")) {
		json_decref(rows);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 0)), i, it)
	{
		json_array_append_new(rows, user_row(it));
	}
	nav(pg, "navUsers", "Users");
	json_object_set_new(pg->view, "users", rows);
	f = form_view(pg);
	json_object_set_new(f, "roles", role_options(pg->form ? rz__form(pg, "role") : "view"));
	sodium_memzero((char *)rz__form(pg, "password"), strlen(rz__form(pg, "password")));
	json_object_del(json_object_get(f, "values"), "password"); /* never back on the page */
	rz__page_render(pg, "pages/users", pg->code ? pg->code : 200);
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
	rz__page_t *pg = get_page(ctx, req);

	if (pg != NULL) {
		users_page(pg);
	}
}

static void user_created(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
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

/* ------------------------------------------------------------------ a user and its tokens */

/* The form's expiry refused here: its cause beside the field, as the API's would be. */
static bool expiry_refused(rz__page_t *pg, const char *why)
{
	json_t *f = form_view(pg);

	json_object_set_new(f, "errors", json_pack("{s:s}", "spec_expiresAt", why));
	rz__page_toast(pg, false, "The token's expiry is not valid.");
	pg->code = 422;
	return false;
}

/* A token's lifetimes offered: the form's value, its label, seconds (0: never). */
static const struct expiry {
	const char *value, *label;
	long long seconds;
} expiries[] = {
	{ "1h", "1 hour", 3600LL },         { "1d", "1 day", 86400LL },
	{ "7d", "7 days", 7 * 86400LL },    { "30d", "30 days", 30 * 86400LL },
	{ "90d", "90 days", 90 * 86400LL }, { "never", "never", 0 },
};

json_t *rz__token_expiries(const char *want)
{
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(expiries) / sizeof(expiries[0]); i++) {
		json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "value", expiries[i].value,
		                                     "label", expiries[i].label, "selected",
		                                     strcmp(expiries[i].value, want) == 0));
	}
	return out;
}

/* A token's expiry from the form into spec.expiresAt (RFC 3339): a date (expiresOn,
 * YYYY-MM-DD, at 00:00 UTC) or else a lifetime from now (expiresIn). False when the form's
 * value is refused here (its cause set beside the field, 422); a date the API finds invalid
 * is refused by the API with its own cause. */
bool rz__token_expiry(rz__page_t *pg, json_t *spec)
{
	const char *on = rz__form(pg, "expiresOn"), *in = rz__form(pg, "expiresIn");
	char at[64];
	int64_t t;

	if (on[0] != '\0') {
		if (strlen(on) != 10) {
			return expiry_refused(pg, "must be a date such as 2027-01-31");
		}
		snprintf(at, sizeof(at), "%sT00:00:00Z", on);
		t = rz_time_parse(at);
		if (t >= 0 && t <= rz_clock_now_ms() / 1000) {
			return expiry_refused(pg,
			                      "is not in the future: the token would never work");
		}
		json_object_set_new(spec, "expiresAt", json_string(at)); /* the API checks it */
		return true;
	}
	for (size_t i = 0; i < sizeof(expiries) / sizeof(expiries[0]); i++) {
		if (strcmp(in[0] ? in : RZ__TOKEN_EXPIRY_DEFAULT, expiries[i].value) == 0) {
			if (expiries[i].seconds > 0) {
				rz_clock_format((rz_clock_now_ms() / 1000 + expiries[i].seconds) *
				                    1000,
				                at, sizeof(at));
				json_object_set_new(spec, "expiresAt", json_string(at));
			}
			return true;
		}
	}
	return expiry_refused(pg, "must be one of 1h, 1d, 7d, 30d, 90d, never");
}

json_t *rz__token_row(const json_t *t)
{
	const char *exp = rz__str(t, "spec.expiresAt"), *used = rz__str(t, "status.lastUsed");

	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", rz__str(t, "metadata.name"),
	                 "role", rz__str(t, "spec.role"), "description",
	                 rz__str(t, "spec.description"), "created",
	                 rz__str(t, "metadata.creationTimestamp"), "expires",
	                 exp[0] ? exp : "never", "lastUsed", used[0] ? used : "never");
}

static void user_ready(rz__page_t *pg)
{
	json_t *u = rz__page_got(pg, 0), *toks = json_array(), *it, *f;
	const char *name = rz_req_param(pg->req, "name");
	char title[128];
	size_t i;

	if (read_failed(pg, 0, "user") || read_failed(pg, 1, "tokens of the user")) {
		json_decref(toks);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, it)
	{
		json_array_append_new(toks, rz__token_row(it));
	}
	snprintf(title, sizeof(title), "User %s", name);
	nav(pg, "navUsers", title);
	json_object_set_new(pg->view, "user", user_row(u));
	json_object_set_new(pg->view, "roles", role_options(rz__str(u, "spec.role")));
	json_object_set_new(pg->view, "noTokens", json_boolean(json_array_size(toks) == 0));
	json_object_set_new(pg->view, "tokens", toks);
	f = form_view(pg);
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

static void user_page(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "name");

	pg->ready = user_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/users/%s", name);
	rz__page_fetch(pg, 1, "/api/v1/users/%s/tokens", name);
	rz__page_release(pg);
}

static void get_user(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req);

	if (pg != NULL) {
		user_page(pg);
	}
}

/* ------------------------------------------------------------------ disabling a user */

static void disabled_changed(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		/* beside the disable control: the API's cause (the last admin), else its message */
		json_t *errors = json_object_get(json_object_get(pg->view, "form"), "errors");
		const json_t *why = json_object_get(errors, "spec_disabled");
		json_object_set_new(
		    pg->view, "disabledError",
		    json_string(why ? json_string_value(why) : rz__str(body, "message")));
		json_object_del(errors, "spec_disabled");
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
	if (rz__page_failed(pg, code, body, NULL)) {
		/* beside the role form, not the token form's own role field */
		json_t *errors = json_object_get(json_object_get(pg->view, "form"), "errors");
		json_object_set(pg->view, "roleError", json_object_get(errors, "spec_role"));
		json_object_del(errors, "spec_role");
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

/* ------------------------------------------------------------------ confirmations */

/* The confirmation page: what is destroyed, the form that does it, where to go back. */
static void confirm(rz__page_t *pg, const char *title, const char *question, const char *what,
                    const char *action, const char *button, const char *back)
{
	nav(pg, strncmp(action, "/backups", 8) == 0 ? "navBackups" : "navUsers", title);
	json_object_set_new(pg->view, "confirm",
	                    json_pack("{s:s, s:s, s:s, s:s, s:s}", "question", question, "what",
	                              what, "action", action, "button", button, "back", back));
	rz__page_render(pg, "pages/confirm", pg->code ? pg->code : 200);
}

static void delete_user_ready(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "name");
	size_t ntok = json_array_size(rz__items(rz__page_got(pg, 1)));
	char q[160], what[256], action[160], button[160], back[160];

	if (read_failed(pg, 0, "user")) {
		return;
	}
	snprintf(q, sizeof(q), "Delete the user %s?", name);
	snprintf(what, sizeof(what),
	         "%s can no longer log in, and its %zu API token%s working at once.", name, ntok,
	         ntok == 1 ? " stops" : "s stop");
	snprintf(action, sizeof(action), "/users/%s/delete", name);
	snprintf(button, sizeof(button), "Delete %s and its tokens", name);
	snprintf(back, sizeof(back), "/users/%s", name);
	confirm(pg, "Delete a user", q, what, action, button, back);
}

static void get_delete_user(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req);

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
	if (rz__page_failed(pg, code, body, NULL)) {
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

	if (read_failed(pg, 0, "token")) {
		return;
	}
	rz__token_shown_take(pg->p->jti, user, id, secret);
	snprintf(title, sizeof(title), "API token %s", id);
	nav(pg, "navUsers", title);
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
	rz__page_t *pg = get_page(ctx, req);

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

	if (read_failed(pg, 0, "token")) {
		return;
	}
	snprintf(q, sizeof(q), "Revoke the API token %s of %s?", id, user);
	snprintf(what, sizeof(what),
	         "Every program that uses it%s%s%s is refused from now on; this cannot be undone.",
	         desc[0] ? " (" : "", desc, desc[0] ? ")" : "");
	snprintf(action, sizeof(action), "/users/%s/tokens/%s/revoke", user, id);
	snprintf(button, sizeof(button), "Revoke %s", id);
	snprintf(back, sizeof(back), "/users/%s", user);
	confirm(pg, "Revoke a token", q, what, action, button, back);
}

static void get_revoke(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req);

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

/* ------------------------------------------------------------------ audit */

static const char *const audit_filters[] = { "user",    "verb",  "kind",  "tenant",
	                                     "outcome", "since", "until", "limit" };

/* A time of the filter form: RFC 3339 as given, or a browser's "YYYY-MM-DDTHH:MM[:SS]"
 * (taken as UTC) completed to one. */
static const char *filter_time(const char *v, char *buf, size_t size)
{
	size_t n = v ? strlen(v) : 0;

	if (n == 16 && v[10] == 'T') {
		snprintf(buf, size, "%s:00Z", v);
		return buf;
	}
	if (n == 19 && v[10] == 'T') {
		snprintf(buf, size, "%sZ", v);
		return buf;
	}
	return v;
}

/* The API's query for the page's filters (and continue when cont). */
static bool audit_query(rz__page_t *pg, char *q, size_t size, bool cont)
{
	bool fits = true;

	q[0] = '\0';
	for (size_t i = 0; i < sizeof(audit_filters) / sizeof(audit_filters[0]); i++) {
		char t[40];
		const char *v = rz_req_query(pg->req, audit_filters[i]);
		if (i == 5 || i == 6) {
			v = filter_time(v, t, sizeof(t));
		}
		fits = fits && query_add(q, size, audit_filters[i], v);
	}
	if (cont) {
		fits = fits && query_add(q, size, "continue", rz_req_query(pg->req, "continue"));
	}
	return fits;
}

static void audit_ready(rz__page_t *pg)
{
	json_t *list = rz__page_got(pg, 0), *rows = json_array(), *it, *values = json_object();
	const char *next = rz__str(list, "metadata.continue");
	char q[QUERY_MAX + 16], more[QUERY_MAX + 300];
	bool filtered = false;
	size_t i;

	for (i = 0; i < sizeof(audit_filters) / sizeof(audit_filters[0]); i++) {
		const char *v = rz_req_query(pg->req, audit_filters[i]);
		filtered = filtered || (i < 7 && v != NULL && v[0] != '\0');
		json_object_set_new(values, audit_filters[i], json_string(v ? v : ""));
		if (i == 4) {
			json_object_set_new(values, "outcomeSuccess",
			                    json_boolean(v && strcmp(v, "success") == 0));
			json_object_set_new(values, "outcomeFailure",
			                    json_boolean(v && strcmp(v, "failure") == 0));
		}
	}
	json_object_set_new(pg->view, "form", json_pack("{s:o}", "values", values));
	nav(pg, "navAudit", "Audit log");
	if (list == NULL && rz__page_code(pg, 0) == 400) {
		json_object_set_new(json_object_get(pg->view, "form"), "errors",
		                    json_pack("{s:s}", "filters",
		                              "A filter is not valid: times are RFC 3339 (such as "
		                              "2026-12-01T19:00:00Z) and the outcome is success or "
		                              "failure."));
		rz__page_toast(pg, false, "A filter is not valid.");
		pg->code = 422;
	} else if (read_failed(pg, 0, "the audit log")) {
		json_decref(rows);
		return;
	}
	json_array_foreach(rz__items(list), i, it)
	{
		json_int_t code = json_integer_value(json_object_get(it, "code"));
		const char *err = rz__str(it, "error");
		json_array_append_new(
		    rows,
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:s}", "time",
		              rz__str(it, "time"), "user", rz__str(it, "user"), "role",
		              rz__str(it, "role"), "sourceIP", rz__str(it, "sourceIP"), "verb",
		              rz__str(it, "verb"), "kind", rz__str(it, "kind"), "tenant",
		              rz__str(it, "tenant"), "name", rz__str(it, "name"), "code", code,
		              "failed", code >= 400, "error", err));
	}
	json_object_set_new(pg->view, "empty", json_boolean(json_array_size(rows) == 0));
	json_object_set_new(pg->view, "rows", rows);
	json_object_set_new(pg->view, "filtered", json_boolean(filtered));
	if (next[0] != '\0' && audit_query(pg, q, QUERY_MAX, false) &&
	    query_add(q, QUERY_MAX + 16, "continue", next)) {
		snprintf(more, sizeof(more), "/audit?%s", q);
		json_object_set_new(pg->view, "next", json_string(more));
	}
	if (rz_req_query(pg->req, "continue") != NULL && audit_query(pg, q, QUERY_MAX, false)) {
		snprintf(more, sizeof(more), "/audit%s%s", q[0] ? "?" : "", q);
		json_object_set_new(pg->view, "first", json_string(more));
	}
	rz__page_render(pg, "pages/audit", pg->code ? pg->code : 200);
}

static void get_audit(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req); /* NULL: answered, and req is gone */
	const char *limit;
	char q[QUERY_MAX], *end = NULL;
	long n;

	if (pg == NULL) {
		return;
	}
	limit = rz_req_query(req, "limit");
	n = limit ? strtol(limit, &end, 10) : AUDIT_PAGE;
	if (limit != NULL && (end == limit || *end != '\0' || n < 1 || n > AUDIT_MAX)) {
		rz__page_error(pg, 400, "limit is a number of rows from 1 to 500.");
		return;
	}
	/* empty filter fields come as "": they filter nothing */
	if (!audit_query(pg, q, sizeof(q), true)) {
		rz__page_error(pg, 400, "The filters are too long.");
		return;
	}
	pg->ready = audit_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/audit%s%s%s", q[0] ? "?" : "", q,
	               limit ? "" : (q[0] ? "&limit=" STR(AUDIT_PAGE) : "?limit=" STR(AUDIT_PAGE)));
	rz__page_release(pg);
}

/* ------------------------------------------------------------------ backups */

static void backups_ready(rz__page_t *pg)
{
	json_t *rows = json_array(), *it;
	size_t i;

	if (read_failed(pg, 0, "the backups")) {
		json_decref(rows);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 0)), i, it)
	{
		const char *phase = rz__str(it, "status.phase");
		json_array_append_new(
		    rows,
		    json_pack(
		        "{s:s, s:s, s:s, s:s, s:I, s:s, s:b}", "name", rz__str(it, "metadata.name"),
		        "created", rz__str(it, "metadata.creationTimestamp"), "trigger",
		        rz__str(it, "spec.trigger"), "phase", phase, "size",
		        json_integer_value(json_object_get(json_object_get(it, "status"), "size")),
		        "message", rz__str(it, "status.message"), "completed",
		        strcmp(phase, "Completed") == 0));
	}
	nav(pg, "navBackups", "Backups");
	json_object_set_new(pg->view, "empty", json_boolean(json_array_size(rows) == 0));
	json_object_set_new(pg->view, "backups", rows);
	form_view(pg);
	rz__page_render(pg, "pages/backups", pg->code ? pg->code : 200);
}

static void backups_page(rz__page_t *pg)
{
	pg->ready = backups_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/backups");
	rz__page_release(pg);
}

static void get_backups(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req);

	if (pg != NULL) {
		backups_page(pg);
	}
}

static void backup_started(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		backups_page(pg);
		return;
	}
	rz__page_redirect(pg, "/backups", "backup");
}

static void post_backups(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	json_t *body;

	if (pg == NULL) {
		return;
	}
	body = json_pack("{s:s, s:s, s:{}, s:{s:s}}", "apiVersion", "rezuscloud.io/v1", "kind",
	                 "Backup", "metadata", "spec", "trigger", "manual");
	if (rz__form(pg, "name")[0] != '\0') {
		json_object_set_new(json_object_get(body, "metadata"), "name",
		                    json_string(rz__form(pg, "name")));
	}
	rz__page_act(pg, "POST", "/api/v1/backups", "application/json", body, backup_started);
}

/* The manifest as a file download: the API's Backup object. */
static void manifest_ready(rz__page_t *pg)
{
	json_t *b = rz__page_got(pg, 0);
	char disp[200], *text;

	if (read_failed(pg, 0, "backup")) {
		return;
	}
	text = json_dumps(b, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (text == NULL) {
		rz__page_error(pg, 500, "out of memory");
		return;
	}
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s.manifest.json\"",
	         rz_req_param(pg->req, "name"));
	rz_req_add_header(pg->req, "Content-Disposition", disp);
	rz_req_add_header(pg->req, "Cache-Control", "no-store");
	rz_req_add_header(pg->req, "Content-Security-Policy", "default-src 'none'");
	rz_reply(pg->req, 200, "application/json", text, strlen(text));
	free(text);
	rz__page_free(pg);
}

static void get_manifest(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req);

	if (pg != NULL) {
		pg->ready = manifest_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/backups/%s", rz_req_param(req, "name"));
		rz__page_release(pg);
	}
}

static void delete_backup_ready(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "name");
	char q[160], what[300], action[160], button[160];

	if (read_failed(pg, 0, "backup")) {
		return;
	}
	snprintf(q, sizeof(q), "Delete the backup %s?", name);
	snprintf(what, sizeof(what),
	         "Its file %s is removed from the backup folder: the management plane can no "
	         "longer be restored to it.",
	         rz__str(rz__page_got(pg, 0), "status.file"));
	snprintf(action, sizeof(action), "/backups/%s/delete", name);
	snprintf(button, sizeof(button), "Delete %s", name);
	confirm(pg, "Delete a backup", q, what, action, button, "/backups");
}

static void get_delete_backup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = get_page(ctx, req);

	if (pg != NULL) {
		pg->ready = delete_backup_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/backups/%s", rz_req_param(req, "name"));
		rz__page_release(pg);
	}
}

static void backup_deleted(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		backups_page(pg);
		return;
	}
	rz__page_redirect(pg, "/backups", "deleted");
}

static void post_delete_backup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/backups/%s", rz_req_param(req, "name"));
	rz__page_act(pg, "DELETE", target, NULL, NULL, backup_deleted);
}

/* ------------------------------------------------------------------ routes */

int rz__admin_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
