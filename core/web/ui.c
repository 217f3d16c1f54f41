/* core/web/ui.c - the WebUI's module: sessions in cookies, CSRF, ingress prefixes, the page
 * machinery (reads and actions through the API's routes, rendering), login and password. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "core/base/log.h"
#include "core/http/status.h"
#include "core/model/fields.h"
#include "core/web/page.h"
#include "core/web/static.h"
#include "core/web/ui.h"

#define LOGIN_SEED_BYTES 16
#define LOGIN_SEED_AGE   3600 /* seconds a login form stays usable */
#define MAX_TARGET       1024 /* an API path the UI builds, at most */

/* The routes of login, logout and the password change; the pages' are in their modules. */
static void get_login(rz_req_t *req, void *ctx);
static void post_login(rz_req_t *req, void *ctx);
static void post_logout(rz_req_t *req, void *ctx);
static void get_password(rz_req_t *req, void *ctx);
static void post_password(rz_req_t *req, void *ctx);
static void get_not_found(rz_req_t *req, void *ctx);
static const rz_route_t not_found = RZ__WEB_ROUTE(RZ_M_GET | RZ_M_HEAD, "/*", get_not_found);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/login", get_login),
	RZ__WEB_ROUTE(RZ_M_POST, "/login", post_login),
	RZ__WEB_ROUTE(RZ_M_POST, "/logout", post_logout),
	RZ__WEB_ROUTE(RZ_M_GET, "/password", get_password),
	RZ__WEB_ROUTE(RZ_M_POST, "/password", post_password),
};

/* ------------------------------------------------------------------ CSRF, cookies, prefix */

void rz_ui_csrf(const unsigned char key[RZ_DERIVED_KEY_LEN], const char *jti,
                char out[RZ_CSRF_LEN + 1])
{
	unsigned char mac[RZ_CSRF_LEN / 2];

	crypto_generichash(mac, sizeof(mac), (const unsigned char *)jti, strlen(jti), key,
	                   RZ_DERIVED_KEY_LEN);
	sodium_bin2hex(out, RZ_CSRF_LEN + 1, mac, sizeof(mac));
}

bool rz_ui_csrf_ok(const unsigned char key[RZ_DERIVED_KEY_LEN], const char *jti, const char *given)
{
	char want[RZ_CSRF_LEN + 1];
	bool ok;

	if (given == NULL || jti == NULL || jti[0] == '\0' || strlen(given) != RZ_CSRF_LEN) {
		return false;
	}
	rz_ui_csrf(key, jti, want);
	ok = sodium_memcmp(want, given, RZ_CSRF_LEN) == 0;
	sodium_memzero(want, sizeof(want));
	return ok;
}

int rz_ui_cookie(char *buf, size_t size, const char *name, const char *value, const char *path,
                 int64_t max_age, bool secure, bool strict)
{
	int n = snprintf(buf, size, "%s=%s; Path=%s; Max-Age=%lld; HttpOnly; SameSite=%s%s", name,
	                 value, path != NULL && path[0] != '\0' ? path : "/",
	                 (long long)(max_age > 0 ? max_age : 0), strict ? "Strict" : "Lax",
	                 secure ? "; Secure" : "");

	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

bool rz_ui_ingress_prefix(const char *header, char out[RZ_UI_PREFIX_MAX])
{
	static const char ok[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~/";
	size_t len = header ? strlen(header) : 0;

	out[0] = '\0';
	if (len < 2 || len >= RZ_UI_PREFIX_MAX || header[0] != '/' || header[len - 1] == '/' ||
	    strspn(header, ok) != len || strstr(header, "//") != NULL) {
		return false;
	}
	for (const char *s = header; s != NULL; s = strchr(s + 1, '/')) {
		size_t seg = strcspn(s + 1, "/");
		if ((seg == 1 && s[1] == '.') || (seg == 2 && strncmp(s + 1, "..", 2) == 0)) {
			return false;
		}
	}
	memcpy(out, header, len + 1);
	return true;
}

int rz_ui_url(char *buf, size_t size, const char *prefix, const char *path)
{
	int n = snprintf(buf, size, "%s%s", prefix ? prefix : "", path);

	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* Decode one name or value of a form; NULL when malformed. */
static char *form_decode(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t n = 0;

	for (size_t i = 0; out != NULL && i < len; i++) {
		if (s[i] == '+') {
			out[n++] = ' ';
		} else if (s[i] != '%') {
			out[n++] = s[i];
		} else if (i + 2 < len && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0 &&
		           (hexval(s[i + 1]) | hexval(s[i + 2])) != 0) {
			out[n++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			free(out);
			return NULL;
		}
	}
	if (out != NULL) {
		out[n] = '\0';
		if (!rz_utf8_valid(out, n)) {
			free(out);
			return NULL;
		}
	}
	return out;
}

json_t *rz_ui_form(const char *body, size_t len)
{
	json_t *form = json_object();
	size_t fields = 0;

	for (size_t at = 0; form != NULL && at < len;) {
		const char *p = body + at;
		const char *amp = memchr(p, '&', len - at);
		size_t plen = amp ? (size_t)(amp - p) : len - at;
		const char *eq = memchr(p, '=', plen);
		size_t klen = eq ? (size_t)(eq - p) : plen;
		char *k = form_decode(p, klen);
		char *v = eq ? form_decode(eq + 1, plen - klen - 1) : strdup("");
		if (k == NULL || v == NULL || ++fields > RZ_UI_FORM_MAX ||
		    (k[0] != '\0' && json_object_set_new(form, k, json_string(v)) != 0)) {
			json_decref(form);
			form = NULL;
		}
		free(k);
		free(v);
		at += plen + 1;
	}
	return form;
}

/* ------------------------------------------------------------------ pages */

static bool trusted_ingress(rz_ui_t *ui, rz_req_t *req, char out[RZ_UI_PREFIX_MAX])
{
	const char *h = rz_req_header(req, "X-Ingress-Path");

	out[0] = '\0';
	return h != NULL && rz_access_trusted_peer(ui->access, req) && rz_ui_ingress_prefix(h, out);
}

/* What p may do on req's page: on a page of one tenant its role there, as the API's guard
 * decides it (AccessBindings included), else its role on the installation. */
static int page_role(rz_ui_t *ui, rz_req_t *req, const rz_principal_t *p)
{
	const char *tenant = rz_req_param(req, "tenant");

	if (p == NULL) {
		return RZ_ROLE_NONE;
	}
	return tenant != NULL && tenant[0] != '\0' ? rz_auth_tenant_role(ui->auth, p, tenant)
	                                           : p->role;
}

rz__page_t *rz__page_new(rz_ui_t *ui, rz_req_t *req)
{
	rz__page_t *pg = calloc(1, sizeof(*pg));
	char tok[RZ_COOKIE_MAX];

	if (pg == NULL || (pg->view = json_object()) == NULL) {
		free(pg);
		rz_reply_error(req, 500, NULL, "out of memory");
		return NULL;
	}
	pg->ui = ui;
	pg->req = req;
	pg->p = rz_access_principal(req);
	pg->ingress = trusted_ingress(ui, req, pg->base);
	if (pg->p != NULL && pg->p->jti[0] != '\0' &&
	    rz_cookie_get(rz_req_header(req, "Cookie"), RZ_SESSION_COOKIE, tok, sizeof(tok))) {
		snprintf(pg->authz, sizeof(pg->authz), "Bearer %s", tok);
		rz_ui_csrf(ui->csrf_key, pg->p->jti, pg->csrf);
	} else {
		pg->p = NULL; /* an API token is not a session of the UI */
	}
	sodium_memzero(tok, sizeof(tok));
	pg->role = page_role(ui, req, pg->p);
	return pg;
}

void rz__page_free(rz__page_t *pg)
{
	if (pg == NULL) {
		return;
	}
	for (int i = 0; i < RZ__PAGE_FETCHES; i++) {
		json_decref(pg->got[i].body);
	}
	json_decref(pg->view);
	json_decref(pg->form);
	sodium_memzero(pg->authz, sizeof(pg->authz));
	free(pg);
}

bool rz__may(const rz__page_t *pg, int role)
{
	return pg->p != NULL && pg->role >= role;
}

bool rz__may_all(const rz__page_t *pg, int role)
{
	return pg->p != NULL && pg->p->role >= role;
}

const char *rz__form(const rz__page_t *pg, const char *name)
{
	const char *v = json_string_value(json_object_get(pg->form, name));

	return v ? v : "";
}

const char *rz__str(const json_t *obj, const char *path)
{
	char part[64];

	while (obj != NULL && path != NULL) {
		size_t len = strcspn(path, ".");
		if (len >= sizeof(part)) {
			return "";
		}
		memcpy(part, path, len);
		part[len] = '\0';
		obj = json_object_get(obj, part);
		path = path[len] == '.' ? path + len + 1 : NULL;
	}
	return json_is_string(obj) ? json_string_value(obj) : "";
}

json_t *rz__items(json_t *list)
{
	return json_object_get(list, "items");
}

bool rz__page_need_login(rz__page_t *pg)
{
	if (pg->p == NULL) {
		rz__page_redirect(pg, "/login", NULL);
		return false;
	}
	if (pg->p->must_change_password && strcmp(rz_req_path(pg->req), "/password") != 0) {
		rz__page_redirect(pg, "/password", NULL);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------ reads and actions */

static void fetch_done(void *arg, const rz_inject_reply_t *r)
{
	struct slot *s = arg;
	rz__page_t *pg = s->pg;

	s->code = r->code;
	if (r->code >= 200 && r->code < 300 && !r->truncated) {
		s->body = json_loadb(r->body, r->len, 0, NULL);
	}
	rz__page_release(pg);
}

void rz__page_hold(rz__page_t *pg)
{
	pg->pending++;
}

void rz__page_release(rz__page_t *pg)
{
	if (--pg->pending == 0 && pg->ready != NULL) {
		pg->ready(pg);
	}
}

void rz__page_fetch(rz__page_t *pg, int i, const char *fmt, ...)
{
	char target[MAX_TARGET];
	rz_err_t err = { 0 };
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(target, sizeof(target), fmt, ap);
	va_end(ap);
	if (i < 0 || i >= RZ__PAGE_FETCHES || n < 0 || (size_t)n >= sizeof(target)) {
		return;
	}
	json_decref(pg->got[i].body); /* a page read again after a failed action */
	pg->got[i] = (struct slot){ pg, i, NULL, 0 };
	pg->pending++;
	rz_inject_t in = { .method = "GET",
		           .target = target,
		           .authorization = pg->authz[0] ? pg->authz : NULL,
		           .done = fetch_done,
		           .arg = &pg->got[i] };
	if (rz_http_inject(pg->ui->http, pg->req, &in, NULL, &err) != 0) {
		rz_log_err("webui", "cannot read '%s': %s", target, err.msg);
		pg->got[i].code = 500;
		pg->pending--;
	}
}

json_t *rz__page_got(const rz__page_t *pg, int i)
{
	return i >= 0 && i < RZ__PAGE_FETCHES ? pg->got[i].body : NULL;
}

int rz__page_code(const rz__page_t *pg, int i)
{
	return i >= 0 && i < RZ__PAGE_FETCHES ? pg->got[i].code : 0;
}

static void act_done(void *arg, const rz_inject_reply_t *r)
{
	rz__page_t *pg = arg;
	json_t *body = r->truncated ? NULL : json_loadb(r->body, r->len, 0, NULL);

	pg->act(pg, r->code, body, r);
	json_decref(body);
}

void rz__page_act(rz__page_t *pg, const char *method, const char *target, const char *ctype,
                  json_t *body, rz__act_fn act)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	rz_err_t err = { 0 };
	rz_inject_t in = { .method = method,
		           .target = target,
		           .authorization = pg->authz[0] ? pg->authz : NULL,
		           .content_type = text ? ctype : NULL,
		           .body = text,
		           .len = text ? strlen(text) : 0,
		           .done = act_done,
		           .arg = pg };
	int rc;

	json_decref(body);
	if (body != NULL && text == NULL) {
		rz__page_error(pg, 500, "out of memory");
		return;
	}
	pg->act = act;
	rz_req_set_audited(pg->req); /* the API's request writes the row */
	rc = rz_http_inject(pg->ui->http, pg->req, &in, NULL, &err);
	if (text != NULL) {
		sodium_memzero(text, strlen(text)); /* may hold passwords */
		free(text);
	}
	if (rc != 0) {
		rz_log_err("webui", "cannot %s '%s': %s", method, target, err.msg);
		rz__page_error(pg, rc == -ESHUTDOWN ? 503 : 500, err.msg);
	}
}

/* ------------------------------------------------------------------ answers */

static json_t *assets(const rz__page_t *pg)
{
	static const struct {
		const char *key, *logical;
	} names[] = {
		{ "css", "app.css" },
		{ "htmx", "htmx.min.js" },
		{ "sse", "htmx-ext-sse.min.js" },
		{ "csrf", "csrf.js" },
		{ "time", "time.js" },
		{ "alpine", "alpine.min.js" },
		{ "icon", "favicon.svg" },
		{ "copy", "copy.js" },
		{ "live", "live.js" },
	};
	json_t *o = json_object();
	char url[RZ_UI_PREFIX_MAX + 128];

	for (size_t i = 0; o != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
		const rz_asset_t *a = rz_asset_by_name(names[i].logical);
		if (a != NULL && rz_ui_url(url, sizeof(url), pg->base, a->path) == 0) {
			json_object_set_new(o, names[i].key, json_string(url));
		}
	}
	return o;
}

void rz__page_me(rz__page_t *pg)
{
	json_t *v = pg->view;

	if (pg->p != NULL) {
		json_object_set_new(v, "csrf", json_string(pg->csrf));
		/* canEdit, canAdmin: on this page (a tenant's: there); hasRole, isAdmin: on
		 * the installation (the daemon-wide pages) */
		json_object_set_new(
		    v, "me",
		    json_pack("{s:s, s:s, s:b, s:b, s:b, s:b}", "name", pg->p->user,
		              /* role none: what it may do is per tenant */
		              "role",
		              pg->p->role < RZ_ROLE_VIEW ? "roles per tenant"
		                                         : rz_role_name(pg->p->role),
		              "canEdit", rz__may(pg, RZ_ROLE_EDIT), "canAdmin",
		              rz__may(pg, RZ_ROLE_ADMIN), "hasRole", rz__may_all(pg, RZ_ROLE_VIEW),
		              "isAdmin", rz__may_all(pg, RZ_ROLE_ADMIN)));
	}
}

static void common(rz__page_t *pg)
{
	json_t *v = pg->view;

	json_object_set_new(v, "base", json_string(pg->base));
	json_object_set_new(v, "assets", assets(pg));
	rz__page_me(pg);
	if (json_object_get(v, "toast") == NULL) {
		static const struct {
			const char *key, *message;
		} toasts[] = {
			{ "password", "Password changed." },
			{ "created", "Created." },
			{ "scaled", "Node group scaled: a run applies the change." },
			{ "scaleddown-approve",
			  "Node group scaled down: its run waits for someone to approve its plan "
			  "before it destroys machines (see the last run above)." },
			{ "scaleddown",
			  "Node group scaled down: a run destroys the machines that go." },
			{ "deleted", "Deleted." },
			{ "ngdeleted-empty", "Node group deleted: it had no machines." },
			{ "ngdeleted-approve",
			  "Node group deleted: its run waits for someone to approve its plan "
			  "before "
			  "it destroys its machines (see the last run above)." },
			{ "ngdeleted", "Node group deleted: a run destroys its machines." },
			{ "planstarted", "Plan run started: it shows what an apply would change." },
			{ "applystarted", "Apply run started." },
			{ "approved", "Run approved: its phase and log below follow its apply." },
			{ "canceled", "Run canceled." },
			{ "loggedout", "Logged out." },
			{ "saved", "Saved." },
			{ "rolledback",
			  "State rolled back: the next run plans from that version." },
			{ "tenantdeleted",
			  "Tenant deletion started: a run destroys its machines." },
			{ "tenantdeleted-empty",
			  "Tenant deletion started: it has no machines to destroy." },
			{ "role", "Role changed." },
			{ "revoked", "Token revoked." },
			{ "backup", "Backup started: it is listed as Completed once written." },
			{ "patchdeleted",
			  "Config patch deleted: the next run applies the change." },
			{ "disabled", "User disabled: it can no longer log in." },
			{ "enabled", "User enabled: it can log in again." },
			{ "bound", "Access binding created." },
			{ "snapshot",
			  "Snapshot asked for: its row below shows Succeeded once it is stored." },
			{ "restore", "Restore started: its steps show below as they run." },
			{ "restore-dry",
			  "Dry run started: its steps below check the snapshot; nothing is "
			  "restored." },
		};
		const char *t = rz_req_query(pg->req, "toast");
		for (size_t i = 0; t != NULL && i < sizeof(toasts) / sizeof(toasts[0]); i++) {
			if (strcmp(t, toasts[i].key) == 0) {
				rz__page_toast(pg, true, toasts[i].message);
			}
		}
	}
}

static void security_headers(rz__page_t *pg)
{
	rz_req_add_header(pg->req, "Content-Security-Policy", rz_web_csp(pg->ingress));
	rz_req_add_header(pg->req, "Referrer-Policy", "same-origin");
	rz_req_add_header(pg->req, "Cache-Control", "no-store");
	if (!pg->ingress) {
		rz_req_add_header(pg->req, "X-Frame-Options", "DENY");
	}
}

void rz__page_render(rz__page_t *pg, const char *tpl, int code)
{
	char *html = NULL;
	size_t len = 0;
	rz_err_t err = { 0 };

	common(pg);
	if (rz_tpl_render(pg->ui->tpl, tpl, pg->view, &html, &len, &err) != 0) {
		rz_log_err("webui", "cannot render '%s': %s", tpl, err.msg);
		rz_reply_error(pg->req, 500, NULL,
		               "the page cannot be rendered; see the server log");
		rz__page_free(pg);
		return;
	}
	security_headers(pg);
	rz_reply(pg->req, code, "text/html; charset=utf-8", html, len);
	free(html);
	rz__page_free(pg);
}

void rz__page_redirect(rz__page_t *pg, const char *path, const char *toast)
{
	char url[RZ_UI_PREFIX_MAX + MAX_TARGET];

	if (rz_ui_url(url, sizeof(url), pg->base, path) != 0) {
		snprintf(url, sizeof(url), "%s/", pg->base);
	}
	if (toast != NULL && strlen(url) + strlen(toast) + 8 < sizeof(url)) {
		strcat(url, strchr(url, '?') ? "&toast=" : "?toast=");
		strcat(url, toast);
	}
	security_headers(pg);
	rz_req_add_header(pg->req, "Location", url);
	if (rz_req_header(pg->req, "HX-Request") != NULL) {
		rz_req_add_header(pg->req, "HX-Redirect", url);
	}
	rz_reply(pg->req, 303, NULL, NULL, 0);
	rz__page_free(pg);
}

void rz__page_toast(rz__page_t *pg, bool ok, const char *message)
{
	json_object_set_new(pg->view, "toast",
	                    json_pack("{s:s, s:s, s:b}", "kind", ok ? "ok" : "error", "message",
	                              message, "ok", ok));
}

/* The error page's second way on: the list of what the page's path names ("/users/nobody":
 * All users), the tenants otherwise. */
static json_t *error_back(const rz__page_t *pg)
{
	static const struct {
		const char *prefix, *href, *label;
	} lists[] = {
		{ "/users", "/users", "All users" },
		{ "/backups", "/backups", "Backups" },
		{ "/bindings", "/bindings", "Access bindings" },
		{ "/runners", "/runners", "Runners" },
		{ "/providers", "/providers", "Providers" },
		{ "/events", "/events", "Events" },
		{ "/audit", "/audit", "Audit log" },
	};
	const char *path = rz_req_path(pg->req);

	for (size_t i = 0; path != NULL && i < sizeof(lists) / sizeof(lists[0]); i++) {
		size_t n = strlen(lists[i].prefix);
		if (strncmp(path, lists[i].prefix, n) == 0 && (path[n] == '\0' || path[n] == '/')) {
			return json_pack("{s:s, s:s}", "href", lists[i].href, "label",
			                 lists[i].label);
		}
	}
	return json_pack("{s:s, s:s}", "href", "/tenants", "label", "Tenants");
}

void rz__page_error(rz__page_t *pg, int code, const char *message)
{
	json_object_set_new(pg->view, "back", error_back(pg));
	json_object_set_new(pg->view, "title",
	                    json_string(code == 404   ? "Not found"
	                                : code == 403 ? "Not allowed"
	                                              : "Something went wrong"));
	json_object_set_new(
	    pg->view, "error",
	    json_pack("{s:i, s:s, s:b}", "code", code, "message", message, "server", code >= 500));
	rz__page_render(pg, "pages/error", code);
}

void rz__page_causes(rz__page_t *pg, const json_t *status, const char *prefix)
{
	json_t *form = json_object_get(pg->view, "form");
	json_t *errors = json_object();
	const json_t *causes = json_object_get(json_object_get(status, "details"), "causes");
	const char *msg = json_string_value(json_object_get(status, "message"));
	size_t i, plen = prefix ? strlen(prefix) : 0;
	json_t *c;

	if (form == NULL) {
		form = json_object();
		json_object_set_new(pg->view, "form", form);
	}
	json_array_foreach(causes, i, c)
	{
		const char *field = json_string_value(json_object_get(c, "field"));
		const char *cmsg = json_string_value(json_object_get(c, "message"));
		char key[128];
		if (field == NULL || cmsg == NULL) {
			continue;
		}
		if (plen > 0 && strncmp(field, prefix, plen) == 0) {
			field += plen;
		}
		snprintf(key, sizeof(key), "%s", field);
		for (char *s = key; *s != '\0'; s++) {
			*s = *s == '.' ? '_' : *s;
		}
		if (json_object_get(errors, key) == NULL) {
			json_object_set_new(errors, key, json_string(cmsg));
		}
	}
	json_object_set_new(form, "errors", errors);
	rz__page_toast(pg, false, msg ? msg : "the request failed");
}

bool rz__page_failed(rz__page_t *pg, int code, const json_t *body, const char *prefix)
{
	if (code >= 200 && code < 300) {
		return false;
	}
	pg->code = code == 400 ? 422 : code >= 400 ? code : 502;
	rz__page_causes(pg, body, prefix);
	return true;
}

void rz__page_read_error(rz__page_t *pg, int i, const char *what)
{
	char msg[256];

	if (rz__page_got(pg, i) == NULL && json_object_get(pg->view, "toast") == NULL) {
		snprintf(msg, sizeof(msg), "Cannot read %s (HTTP %d).", what, rz__page_code(pg, i));
		rz__page_toast(pg, false, msg);
	}
}

void rz__page_tenant_error(rz__page_t *pg, int code)
{
	if (code == 403) {
		rz__page_error(pg, 403,
		               "You have no access to this tenant: an administrator can grant it "
		               "on the Access page.");
	} else {
		rz__page_error(pg, code == 404 ? 404 : 502,
		               code == 404 ? "There is no such tenant."
		                           : "The tenant cannot be read.");
	}
}

bool rz__page_names_ok(rz__page_t *pg)
{
	static const char *const params[] = { "tenant", "name", "id" };
	char msg[128];

	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const char *v = rz_req_param(pg->req, params[i]);
		if (v != NULL && !rz_format_dns1123_label(v, msg, sizeof(msg))) {
			rz__page_error(pg, 404, "There is no such object.");
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ CSRF on every action */

/* The CSRF token of a request: the X-CSRF-Token header (HTMX) or the form's csrf field. */
static const char *given_csrf(rz__page_t *pg)
{
	const char *h = rz_req_header(pg->req, "X-CSRF-Token");

	return h != NULL ? h : json_string_value(json_object_get(pg->form, "csrf"));
}

static bool secure_cookie(const rz__page_t *pg);

/* A form posted from another site is refused whatever token it carries: the browser's
 * Sec-Fetch-Site when it sends one (same-origin, or none: typed by the user), else its
 * Origin against this server's own (the Host, or a trusted proxy's X-Forwarded-Host, with
 * the scheme the request came in by). A client that sends neither is not a browser
 * posting for another site: its CSRF token decides. */
static bool same_origin(const rz__page_t *pg)
{
	const char *site = rz_req_header(pg->req, "Sec-Fetch-Site");
	const char *origin = rz_req_header(pg->req, "Origin");
	const char *host = NULL;
	char own[320];

	if (site != NULL) {
		return strcmp(site, "same-origin") == 0 || strcmp(site, "none") == 0;
	}
	if (origin == NULL) {
		return true;
	}
	if (rz_access_trusted_peer(pg->ui->access, pg->req)) {
		host = rz_req_header(pg->req, "X-Forwarded-Host");
	}
	if (host == NULL) {
		host = rz_req_header(pg->req, "Host");
	}
	if (host == NULL ||
	    snprintf(own, sizeof(own), "%s://%s", secure_cookie(pg) ? "https" : "http", host) >=
	        (int)sizeof(own)) {
		return false;
	}
	return strcasecmp(origin, own) == 0;
}

/* The page of a posted form, after its origin and CSRF checks: NULL when refused (403) or
 * answered. */
static rz__page_t *post_page(rz_ui_t *ui, rz_req_t *req, bool need_session)
{
	rz__page_t *pg = rz__page_new(ui, req);
	const char *ctype = rz_req_header(req, "Content-Type");
	size_t len;
	const char *body = rz_req_body(req, &len);

	if (pg == NULL) {
		return NULL;
	}
	if (ctype == NULL || strncasecmp(ctype, "application/x-www-form-urlencoded", 33) != 0 ||
	    (pg->form = rz_ui_form(body, len)) == NULL) {
		rz__page_error(pg, 400, "a form post must be application/x-www-form-urlencoded");
		return NULL;
	}
	if (!same_origin(pg)) {
		rz__page_error(pg, 403,
		               "a form posted from another site (Origin or Sec-Fetch-Site) is "
		               "refused: post it from this server's own pages");
		return NULL;
	}
	if (need_session && pg->p == NULL) {
		rz__page_redirect(pg, "/login", NULL);
		return NULL;
	}
	if (need_session && !rz_ui_csrf_ok(ui->csrf_key, pg->p->jti, given_csrf(pg))) {
		rz__page_error(pg, 403,
		               "the form's CSRF token is missing or wrong: reload the page and "
		               "try again");
		return NULL;
	}
	return pg;
}

rz__page_t *rz__post_page(rz_ui_t *ui, rz_req_t *req)
{
	rz__page_t *pg = post_page(ui, req, true);

	if (pg != NULL && pg->p->must_change_password) {
		rz__page_redirect(pg, "/password", NULL);
		return NULL;
	}
	return pg;
}

/* ------------------------------------------------------------------ login and logout */

/* Secure when the browser's connection is TLS: ours, or a trusted proxy's that says it
 * terminated TLS (X-Forwarded-Proto: https), as a TLS-terminating proxy in front does. */
static bool secure_cookie(const rz__page_t *pg)
{
	const char *proto;

	if (rz_req_tls(pg->req))
		return true;
	proto = rz_req_header(pg->req, "X-Forwarded-Proto");
	return proto != NULL && strcasecmp(proto, "https") == 0 &&
	       rz_access_trusted_peer(pg->ui->access, pg->req);
}

static const char *cookie_path(const rz__page_t *pg)
{
	return pg->base[0] ? pg->base : "/";
}

bool rz__page_secure(const rz__page_t *pg)
{
	return secure_cookie(pg);
}

const char *rz__page_cookie_path(const rz__page_t *pg)
{
	return cookie_path(pg);
}

/* The login form: its CSRF seed in a cookie (a login needs one too, or a site could log
 * a browser in as someone else). */
static void login_form(rz__page_t *pg, int code, const char *error)
{
	unsigned char raw[LOGIN_SEED_BYTES];
	char seed[LOGIN_SEED_BYTES * 2 + 1], cookie[256], token[RZ_CSRF_LEN + 1];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(seed, sizeof(seed), raw, sizeof(raw));
	rz_ui_csrf(pg->ui->csrf_key, seed, token);
	if (rz_ui_cookie(cookie, sizeof(cookie), RZ_LOGIN_COOKIE, seed, cookie_path(pg),
	                 LOGIN_SEED_AGE, secure_cookie(pg), true) == 0) {
		rz_req_add_header(pg->req, "Set-Cookie", cookie);
	}
	json_object_set_new(pg->view, "title", json_string("Log in"));
	json_object_set_new(pg->view, "loginCsrf", json_string(token));
	if (pg->form != NULL) {
		json_object_set_new(pg->view, "username", json_string(rz__form(pg, "username")));
	}
	if (error != NULL) {
		json_object_set_new(pg->view, "loginError", json_string(error));
	}
	rz__sso_login_view(pg);
	rz__page_render(pg, "pages/login", code);
}

static void get_login(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL) {
		return;
	}
	if (pg->p != NULL) {
		rz__page_redirect(pg, "/", NULL);
		return;
	}
	login_form(pg, 200, NULL);
}

static void login_replied(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	const char *token = json_string_value(json_object_get(body, "token"));
	char cookie[RZ_COOKIE_MAX + 256], clear[256];
	int64_t age = 3600;
	bool must =
	    json_is_true(json_object_get(json_object_get(body, "user"), "mustChangePassword"));

	if (code != 200 || token == NULL || strlen(token) >= RZ_COOKIE_MAX) {
		const char *msg = code == 429 ? json_string_value(json_object_get(body, "message"))
		                              : "The username or password is not correct.";
		login_form(pg,
		           code == 429   ? 429
		           : code >= 500 ? code
		                         : 401,
		           msg ? msg : "Too many failed logins: try again later.");
		return;
	}
	{
		struct tm tm = { 0 };
		const char *exp = json_string_value(json_object_get(body, "expiresAt"));
		if (exp != NULL && strptime(exp, "%Y-%m-%dT%H:%M:%SZ", &tm) != NULL) {
			age = (int64_t)timegm(&tm) - (int64_t)time(NULL);
		}
	}
	if (rz_ui_cookie(cookie, sizeof(cookie), RZ_SESSION_COOKIE, token, cookie_path(pg), age,
	                 secure_cookie(pg), false) != 0) {
		rz__page_error(pg, 500, "the session does not fit in a cookie");
		return;
	}
	rz_req_add_header(pg->req, "Set-Cookie", cookie);
	sodium_memzero(cookie, sizeof(cookie));
	if (rz_ui_cookie(clear, sizeof(clear), RZ_LOGIN_COOKIE, "", cookie_path(pg), 0,
	                 secure_cookie(pg), true) == 0) {
		rz_req_add_header(pg->req, "Set-Cookie", clear);
	}
	(void)r;
	rz__page_redirect(pg, must ? "/password" : "/", NULL);
}

static void post_login(rz_req_t *req, void *ctx)
{
	rz_ui_t *ui = ctx;
	rz__page_t *pg = post_page(ui, req, false);
	char seed[64];

	if (pg == NULL) {
		return;
	}
	if (!rz_cookie_get(rz_req_header(req, "Cookie"), RZ_LOGIN_COOKIE, seed, sizeof(seed)) ||
	    !rz_ui_csrf_ok(ui->csrf_key, seed, rz__form(pg, "csrf"))) {
		rz__page_error(pg, 403,
		               "the login form's CSRF token is missing or wrong: reload the page "
		               "and try again");
		return;
	}
	rz__page_act(pg, "POST", "/api/v1/auth/login", "application/json",
	             json_pack("{s:s, s:s}", "username", rz__form(pg, "username"), "password",
	                       rz__form(pg, "password")),
	             login_replied);
}

static void logout_replied(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char clear[256];

	(void)code;
	(void)body;
	(void)r;
	if (rz_ui_cookie(clear, sizeof(clear), RZ_SESSION_COOKIE, "", cookie_path(pg), 0,
	                 secure_cookie(pg), false) == 0) {
		rz_req_add_header(pg->req, "Set-Cookie", clear);
	}
	pg->p = NULL;
	rz__page_redirect(pg, "/login", "loggedout");
}

static void post_logout(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = post_page(ctx, req, true);

	if (pg != NULL) {
		rz__page_act(pg, "POST", "/api/v1/auth/logout", NULL, NULL, logout_replied);
	}
}

/* ------------------------------------------------------------------ password */

static void password_form(rz__page_t *pg, int code)
{
	json_object_set_new(pg->view, "title", json_string("Change the password"));
	json_object_set_new(pg->view, "mustChange", json_boolean(pg->p->must_change_password));
	rz__page_render(pg, "pages/password", code);
}

static void get_password(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg)) {
		password_form(pg, 200);
	}
}

/* The password form's fields (core/web/form.c): each problem beside its field, once. */
static const rz__field_t password_fields[] = {
	{ "currentPassword", "currentPassword", "Current password", "currentPassword" },
	{ "newPassword", "newPassword", "New password", "newPassword" },
};

static void password_replied(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (code == 200) {
		rz__page_redirect(pg, "/", "password");
		return;
	}
	if (code == 403 && strstr(rz__str(body, "message"), "single sign-on") == NULL) {
		rz__form_problem_at(pg, "currentPassword", "currentPassword", "Current password",
		                    "This is not your current password.");
	} else if (code == 422 && json_array_size(json_object_get(json_object_get(body, "details"),
	                                                          "causes")) == 0) {
		/* the API's "currentPassword and newPassword (8 to 1024 characters) are required"
		 */
		rz__form_problem_at(pg, "newPassword", "newPassword", "New password",
		                    "Must be 8 to 1024 characters long.");
	} else {
		rz__form_failed(pg, code == 403 ? 400 : code, body, password_fields,
		                sizeof(password_fields) / sizeof(password_fields[0]));
	}
	password_form(pg, code == 403 || code == 422 ? 422 : code >= 400 ? code : 502);
}

static void post_password(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = post_page(ctx, req, true);

	if (pg == NULL) {
		return;
	}
	if (strcmp(rz__form(pg, "newPassword"), rz__form(pg, "confirmPassword")) != 0) {
		rz__form_problem_at(pg, "confirmPassword", "confirmPassword",
		                    "The new password again",
		                    "It differs from the new password: type the same one twice.");
		password_form(pg, 422);
		return;
	}
	rz__page_act(pg, "POST", "/api/v1/auth/password", "application/json",
	             json_pack("{s:s, s:s}", "currentPassword", rz__form(pg, "currentPassword"),
	                       "newPassword", rz__form(pg, "newPassword")),
	             password_replied);
}

/* ------------------------------------------------------------------ not found */

/* A browser's page load of a path no route has (GET, Accept naming text/html, outside the
 * API's paths) gets the site's 404 page; everything else keeps the API's 404 Status. */
static bool wants_page(const rz_req_t *req)
{
	static const char *const api[] = { "/api", "/apis", "/openapi", "/tfstate", "/static" };
	const char *accept = rz_req_header(req, "Accept");
	const char *path = rz_req_path(req);

	if ((rz_req_method_bit(req) & (RZ_M_GET | RZ_M_HEAD)) == 0 || accept == NULL ||
	    strstr(accept, "text/html") == NULL || path == NULL) {
		return false;
	}
	for (size_t i = 0; i < sizeof(api) / sizeof(api[0]); i++) {
		size_t n = strlen(api[i]);
		if (strncmp(path, api[i], n) == 0 && (path[n] == '\0' || path[n] == '/')) {
			return false;
		}
	}
	return true;
}

static void get_not_found(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL) {
		json_object_set_new(pg->view, "notFound", json_true());
		rz__page_error(pg, 404,
		               "There is no page at this address: it may have moved, or the link "
		               "that led here is wrong.");
	}
}

/* ------------------------------------------------------------------ module */

int rz_ui_new(rz_ui_t **out, rz_http_t *http, rz_auth_t *auth, rz_access_t *access,
              struct event_base *base, const char *dir, rz_err_t *err)
{
	rz_ui_t *ui = calloc(1, sizeof(*ui));
	int rc;

	*out = NULL;
	if (ui == NULL) {
		free(ui);
		return rz_err_set(err, -ENOMEM, "webui: out of memory");
	}
	ui->http = http;
	ui->auth = auth;
	ui->access = access;
	ui->base = base;
	rz_auth_derive_key(auth, "webui-csrf", ui->csrf_key);
	rc = rz_tpl_set_load(&ui->tpl, dir != NULL && dir[0] != '\0' ? dir : NULL, err);
	if (rc != 0) {
		rz_ui_free(ui);
		return rc;
	}
	*out = ui;
	return 0;
}

int rz_ui_routes(rz_ui_t *ui, rz_err_t *err)
{
	int rc = rz_http_add_table(ui->http, RZ_ROUTES(routes), ui, err);

	rz_http_set_fallback(ui->http, wants_page, &not_found, ui);

	rc = rc == 0 ? rz__pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__dashboard_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__event_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__runner_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__admin_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__user_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__audit_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__account_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__binding_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__live_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__tenant_pages_routes(ui, ui->http, err) : rc;
	rc = rc == 0 ? rz__etcd_pages_routes(ui, ui->http, err) : rc;
	return rc == 0 ? rz__sso_pages_routes(ui, ui->http, err) : rc;
}

void rz_ui_set_oidc(rz_ui_t *ui, rz_oidc_t *oidc)
{
	ui->oidc = oidc;
}

void rz_ui_set_destroy_approval(rz_ui_t *ui, bool on)
{
	ui->destroy_approval = on;
}

void rz_ui_close_all(rz_ui_t *ui)
{
	if (ui != NULL) {
		rz__live_close_all(ui);
	}
}

void rz_ui_free(rz_ui_t *ui)
{
	if (ui == NULL) {
		return;
	}
	rz__live_close_all(ui);
	rz__admin_forget();
	rz_tpl_set_free(ui->tpl);
	sodium_memzero(ui->csrf_key, sizeof(ui->csrf_key));
	free(ui);
}
