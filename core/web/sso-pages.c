/* core/web/sso-pages.c - the WebUI's single sign-on: the login page's button, the sign-in's
 * start at the provider and its callback, which logs the browser in through the API. */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "core/auth/oidc.h"
#include "core/base/log.h"
#include "core/web/page.h"

#define CALLBACK "/login/oidc/callback"

/* The routes of single sign-on (registered by rz_ui_routes with the UI as ctx). */
static void get_begin(rz_req_t *req, void *ctx);
static void get_callback(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/login/oidc", get_begin),
	RZ__WEB_ROUTE(RZ_M_GET, CALLBACK, get_callback),
};

void rz__sso_login_view(rz__page_t *pg)
{
	if (pg->ui->oidc != NULL) {
		json_object_set_new(pg->view, "sso",
		                    json_pack("{s:s}", "name", rz_oidc_display_name(pg->ui->oidc)));
	}
}

/* Set (value, for the sign-in's time) or clear (NULL) the browser's state cookie. SameSite
 * Lax: the provider sends the browser back by a top-level GET from its own site. */
static void state_cookie(rz__page_t *pg, const char *value)
{
	char cookie[256];

	if (rz_ui_cookie(cookie, sizeof(cookie), RZ_SSO_COOKIE, value ? value : "",
	                 rz__page_cookie_path(pg), value ? RZ_OIDC_PENDING_S : 0,
	                 rz__page_secure(pg), false) == 0) {
		rz_req_add_header(pg->req, "Set-Cookie", cookie);
	}
}

/* 303 to url, a page of another site (the provider). Frees pg. */
static void redirect_away(rz__page_t *pg, const char *url)
{
	rz_req_add_header(pg->req, "Cache-Control", "no-store");
	rz_req_add_header(pg->req, "Referrer-Policy", "no-referrer");
	rz_req_add_header(pg->req, "Location", url);
	rz_reply(pg->req, 303, NULL, NULL, 0);
	rz__page_free(pg);
}

/* Where the provider sends the browser back: auth.oidc.redirect_url (or server.external_url's
 * callback), else this request's scheme and host with the ingress prefix. */
static bool callback_url(const rz__page_t *pg, char *out, size_t size)
{
	const char *set = rz_oidc_redirect_url(pg->ui->oidc);
	const char *host = NULL;

	if (set[0] != '\0') {
		return snprintf(out, size, "%s", set) < (int)size;
	}
	if (rz_access_trusted_peer(pg->ui->access, pg->req)) {
		host = rz_req_header(pg->req, "X-Forwarded-Host");
	}
	if (host == NULL) {
		host = rz_req_header(pg->req, "Host");
	}
	if (host == NULL || host[0] == '\0' || strlen(host) > 255 ||
	    strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") !=
	        strlen(host)) {
		return false;
	}
	return snprintf(out, size, "%s://%s%s%s", rz__page_secure(pg) ? "https" : "http", host,
	                pg->base, CALLBACK) < (int)size;
}

static void begun(void *arg, const rz_oidc_result_t *r)
{
	rz__page_t *pg = arg;

	if (r->rc != 0) {
		rz_log_warn("webui", "single sign-on cannot begin: %s", r->err.msg);
		rz__page_error(pg, 502,
		               "The sign-in provider cannot be reached now; try again later "
		               "or log in with a password.");
		return;
	}
	state_cookie(pg, r->state);
	redirect_away(pg, r->url);
}

static rz__page_t *sso_page(rz_ui_t *ui, rz_req_t *req)
{
	rz__page_t *pg = rz__page_new(ui, req);

	if (pg != NULL && ui->oidc == NULL) {
		rz__page_error(pg, 404, "Single sign-on is not configured.");
		return NULL;
	}
	return pg;
}

static void get_begin(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = sso_page(ctx, req);
	char url[RZ_OIDC_URL_MAX];

	if (pg == NULL) {
		return;
	}
	if (pg->p != NULL) {
		rz__page_redirect(pg, "/", NULL);
		return;
	}
	if (!callback_url(pg, url, sizeof(url))) {
		rz__page_error(pg, 400,
		               "The request names no usable host: set auth.oidc.redirect_url.");
		return;
	}
	if (rz_oidc_begin(pg->ui->oidc, url, begun, pg) != 0) {
		rz__page_error(pg, 500, "out of memory");
	}
}

/* The API's answer to the ID token: a session, as a password login's. */
static void token_replied(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	const char *token = json_string_value(json_object_get(body, "token"));
	const char *exp = json_string_value(json_object_get(body, "expiresAt"));
	const char *msg = json_string_value(json_object_get(body, "message"));
	char cookie[RZ_COOKIE_MAX + 256];
	struct tm tm = { 0 };
	int64_t age = 3600;

	(void)r;
	state_cookie(pg, NULL);
	if (code != 200 || token == NULL || strlen(token) >= RZ_COOKIE_MAX) {
		rz__page_error(pg, code >= 400 ? code : 502,
		               msg != NULL ? msg : "The sign-in was refused.");
		return;
	}
	if (exp != NULL && strptime(exp, "%Y-%m-%dT%H:%M:%SZ", &tm) != NULL) {
		age = (int64_t)timegm(&tm) - (int64_t)time(NULL);
	}
	if (rz_ui_cookie(cookie, sizeof(cookie), RZ_SESSION_COOKIE, token, rz__page_cookie_path(pg),
	                 age, rz__page_secure(pg), false) != 0) {
		rz__page_error(pg, 500, "the session does not fit in a cookie");
		return;
	}
	rz_req_add_header(pg->req, "Set-Cookie", cookie);
	sodium_memzero(cookie, sizeof(cookie));
	rz__page_redirect(pg, "/", NULL);
}

static void finished(void *arg, const rz_oidc_result_t *r)
{
	rz__page_t *pg = arg;

	if (r->rc != 0) {
		state_cookie(pg, NULL);
		rz_log_info("webui", "single sign-on failed: %s", r->err.msg);
		rz__page_error(pg, r->rc == RZ_EAUTH ? 401 : 502, r->err.msg);
		return;
	}
	rz__page_act(pg, "POST", "/api/v1/auth/oidc/token", "application/json",
	             json_pack("{s:s, s:s}", "idToken", r->id_token, "nonce", r->nonce),
	             token_replied);
}

static void get_callback(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = sso_page(ctx, req); /* NULL: answered, req is gone */
	const char *state, *error;
	char mine[RZ_OIDC_STATE_LEN + 2], msg[512];

	if (pg == NULL) {
		return;
	}
	state = rz_req_query(req, "state");
	error = rz_req_query(req, "error");
	if (error != NULL) {
		const char *desc = rz_req_query(req, "error_description");
		state_cookie(pg, NULL);
		snprintf(msg, sizeof(msg),
		         "The sign-in provider refused the sign-in: %.64s%s%.256s", error,
		         desc ? " (" : "", desc ? desc : "");
		if (desc != NULL) {
			strcat(msg, ")");
		}
		rz__page_error(pg, 401, msg);
		return;
	}
	if (state == NULL || strlen(state) != RZ_OIDC_STATE_LEN ||
	    !rz_cookie_get(rz_req_header(req, "Cookie"), RZ_SSO_COOKIE, mine, sizeof(mine)) ||
	    strlen(mine) != RZ_OIDC_STATE_LEN ||
	    sodium_memcmp(mine, state, RZ_OIDC_STATE_LEN) != 0) {
		state_cookie(pg, NULL);
		rz__page_error(pg, 403,
		               "This sign-in was not begun in this browser, or it is over: log in "
		               "again.");
		return;
	}
	rz_oidc_finish(pg->ui->oidc, state, rz_req_query(req, "code"), finished, pg);
}

int rz__sso_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
