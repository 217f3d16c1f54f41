/* core/auth/sso.c - single sign-on's API routes: ID tokens for sessions, users from claims. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "core/auth/sso.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/text.h"
#include "core/model/fields.h"

/* An ID token used already, until it expires. */
struct replay {
	unsigned char hash[16];
	int64_t exp; /* 0 = free */
};

struct rz_sso {
	rz_oidc_t *oidc;
	rz_auth_t *auth;
	rz_access_t *access;
	rz_store_t *store;
	const rz_config_t *cfg;
	struct replay replays[RZ_SSO_REPLAYS];
};

/* ------------------------------------------------------------------ claims */

static bool label(const char *s)
{
	char msg[128];

	return s != NULL && rz_format_dns1123_label(s, msg, sizeof(msg));
}

/* The role cfg's auth.oidc.roles gives group: RZ_ROLE_* or 0 when it names none. */
static int mapped_role(const rz_config_t *cfg, const char *group)
{
	int best = 0;

	for (char **r = cfg->oidc_roles; r != NULL && *r != NULL; r++) {
		const char *eq = strrchr(*r, '=');
		if (eq != NULL && (size_t)(eq - *r) == strlen(group) &&
		    strncmp(*r, group, strlen(group)) == 0 && rz_role_parse(eq + 1) > best) {
			best = rz_role_parse(eq + 1);
		}
	}
	return best;
}

int rz_sso_identity(const rz_config_t *cfg, const json_t *claims, rz_sso_identity_t *out,
                    rz_err_t *err)
{
	const char *name = json_string_value(json_object_get(claims, cfg->oidc_username_claim));
	const char *sub = json_string_value(json_object_get(claims, "sub"));
	const json_t *groups = cfg->oidc_groups_claim[0] != '\0'
	                           ? json_object_get(claims, cfg->oidc_groups_claim)
	                           : NULL;
	const char *prefix = cfg->oidc_groups_prefix ? cfg->oidc_groups_prefix : "";

	memset(out, 0, sizeof(*out));
	out->role = RZ_ROLE_NONE;
	out->mapped = cfg->oidc_roles != NULL && cfg->oidc_roles[0] != NULL;
	if (name == NULL) {
		return rz_err_set(err, RZ_EAUTH, "the ID token has no claim '%s' to name the user",
		                  RZ_ECHO(cfg->oidc_username_claim, 64));
	}
	if (!label(name)) {
		return rz_err_set(err, RZ_EAUTH,
		                  "the user's name '%s' (claim %s) is not a DNS label "
		                  "(lower-case letters, digits and '-', at most 63)",
		                  RZ_ECHO(name, 64), RZ_ECHO(cfg->oidc_username_claim, 64));
	}
	snprintf(out->user, sizeof(out->user), "%s", name);
	snprintf(out->subject, sizeof(out->subject), "%s", sub ? sub : "");
	for (size_t i = 0; i < json_array_size(groups); i++) {
		const char *g = json_string_value(json_array_get(groups, i));
		char full[128];
		int role = g != NULL ? mapped_role(cfg, g) : 0;
		if (role > out->role) {
			out->role = role;
		}
		if (g == NULL || snprintf(full, sizeof(full), "%s%s", prefix, g) >= 64 ||
		    !label(full) || out->ngroups >= RZ_USER_GROUPS_MAX) {
			out->dropped++;
			continue;
		}
		memcpy(out->groups[out->ngroups++], full, strlen(full) + 1); /* < 64, checked */
	}
	return 0;
}

/* ------------------------------------------------------------------ replays */

/* Whether token was used already (1); if not, it is remembered until exp (0), or -1 when
 * every slot holds a token still valid: evicting one would let it be used again. */
static int replayed(rz_sso_t *s, const char *token, int64_t exp)
{
	unsigned char h[16];
	int64_t now = (int64_t)time(NULL);
	struct replay *slot = NULL;

	crypto_generichash(h, sizeof(h), (const unsigned char *)token, strlen(token), NULL, 0);
	for (size_t i = 0; i < RZ_SSO_REPLAYS; i++) {
		struct replay *r = &s->replays[i];
		if (r->exp != 0 && r->exp + RZ_OIDC_SKEW_S >= now &&
		    sodium_memcmp(r->hash, h, sizeof(h)) == 0) {
			return 1;
		}
		if (slot == NULL && (r->exp == 0 || r->exp + RZ_OIDC_SKEW_S < now)) {
			slot = r; /* a free or expired one */
		}
	}
	if (slot == NULL) {
		return -1;
	}
	memcpy(slot->hash, h, sizeof(h));
	slot->exp = exp;
	return 0;
}

/* ------------------------------------------------------------------ the user */

/* A login under way: the request and what its token said. */
struct login {
	rz_sso_t *s;
	rz_req_t *req;
	char *token;
};

static void login_free(struct login *l)
{
	if (l->token != NULL) {
		sodium_memzero(l->token, strlen(l->token));
		free(l->token);
	}
	free(l);
}

static void refuse(struct login *l, int code, const char *user, const char *why)
{
	rz_access_audit(l->s->access, l->req, code, user, why, NULL, NULL);
	rz_req_set_audited(l->req);
	if (rz_req_log_sample(l->req)) {
		rz_logkv(RZ_LOG_INFO, "auth", "single sign-on refused", "user", user ? user : "",
		         "reason", why, NULL);
	}
	if (code == 401) {
		rz_req_add_header(l->req, "WWW-Authenticate", "Bearer realm=\"rezuscloud\"");
	}
	rz_reply_error(l->req, code, NULL, "%s", why);
}

static json_t *groups_json(const rz_sso_identity_t *id)
{
	json_t *a = json_array();

	for (size_t i = 0; i < id->ngroups; i++) {
		json_array_append_new(a, json_string(id->groups[i]));
	}
	return a;
}

static bool same(const json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* Make the user, or bring its groups (and mapped role) up to date: 0 with *u the stored
 * user (caller owns), or an HTTP code with why set (the login is refused). */
static int provision(struct login *l, const rz_sso_identity_t *id, json_t **u, char *why,
                     size_t size)
{
	const rz_kind_t *k = rz_kind_by_name("User");
	const char *iss = rz_oidc_issuer(l->s->oidc);
	rz_err_t err = { 0 };
	json_t *spec, *ident, *obj = NULL;
	int rc = rz_store_get(l->s->store, k, NULL, id->user, u, &err);

	if (rc == RZ_ENOTFOUND) {
		obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:o, s:{s:s, s:s}}}", "apiVersion",
		                RZ_API_VERSION, "kind", "User", "metadata", "name", id->user,
		                "spec", "role", rz_role_name(id->role), "groups", groups_json(id),
		                "identity", "issuer", iss, "subject", id->subject);
		rc = rz_store_create(l->s->store, k, obj, NULL, u, &err);
		json_decref(obj);
		if (rc == 0) {
			rz_logkv(RZ_LOG_NOTICE, "auth", "single sign-on made a user", "user",
			         id->user, "role", rz_role_name(id->role), NULL);
			return 0;
		}
	}
	if (rc != 0) {
		rz_log_err("auth", "single sign-on of '%s' failed: %s", id->user, err.msg);
		snprintf(why, size, "internal error; see the server log");
		return 500;
	}
	spec = json_object_get(*u, "spec");
	ident = json_object_get(spec, "identity");
	if (ident == NULL) {
		snprintf(why, size,
		         "a local user '%s' exists: single sign-on does not take it over (an admin "
		         "may delete or rename it)",
		         id->user);
		return 403;
	}
	if (!same(json_object_get(ident, "issuer"), iss) ||
	    !same(json_object_get(ident, "subject"), id->subject)) {
		snprintf(
		    why, size,
		    "the user '%s' belongs to another identity of the provider: single sign-on "
		    "does not take it over",
		    id->user);
		return 403;
	}
	if (json_is_true(json_object_get(spec, "disabled"))) {
		snprintf(why, size, "the user '%s' is disabled", id->user);
		return 403;
	}
	obj = json_deep_copy(*u);
	spec = json_object_get(obj, "spec");
	json_object_set_new(spec, "groups", groups_json(id));
	if (id->mapped) {
		json_object_set_new(spec, "role", json_string(rz_role_name(id->role)));
	}
	if (!json_equal(obj, *u)) {
		json_decref(*u);
		*u = NULL;
		rc = rz_store_update(l->s->store, k, NULL, id->user, obj, 0, RZ_UPDATE_SPEC, NULL,
		                     u, NULL, &err);
	}
	json_decref(obj);
	if (rc != 0) {
		rz_log_err("auth", "single sign-on of '%s' failed: %s", id->user, err.msg);
		snprintf(why, size, "internal error; see the server log");
		return 500;
	}
	return 0;
}

/* lastLogin, with the login's audit row, in one transaction. */
static int stamp(struct login *l, const char *user, json_t *u, rz_err_t *err)
{
	const rz_kind_t *k = rz_kind_by_name("User");
	json_t *status = json_object_get(u, "status"), *out = NULL;
	rz_access_hook_t audit;
	char now[32];
	int rc;

	if (!json_is_object(status)) {
		status = json_object();
		json_object_set_new(u, "status", status);
	}
	rz_time_now(now, sizeof(now));
	json_object_set_new(status, "lastLogin", json_string(now));
	rc = rz_store_update(l->s->store, k, NULL, user, u, 0, RZ_UPDATE_STATUS,
	                     rz_access_hook(l->s->access, l->req, 200, user, NULL, &audit), &out,
	                     NULL, err);
	if (rc == 0) {
		rz_req_set_audited(l->req);
	}
	json_decref(out);
	return rc;
}

static void grant(struct login *l, const rz_sso_identity_t *id, json_t *u)
{
	rz_principal_t p;
	rz_err_t err = { 0 };
	char *token = NULL, exp[32];
	int role =
	    rz_role_parse(json_string_value(json_object_get(json_object_get(u, "spec"), "role")));
	time_t t;
	struct tm tm;

	if (rz_auth_issue(l->s->auth, id->user, role, &token, &p, &err) != 0 ||
	    (rz_access_set_principal(l->req, &p), stamp(l, id->user, u, &err)) != 0) {
		rz_log_err("auth", "single sign-on of '%s' failed: %s", id->user, err.msg);
		rz_reply_error(l->req, 500, NULL, "internal error; see the server log");
	} else {
		rz_logkv(RZ_LOG_INFO, "auth", "login", "user", id->user, "by", "single sign-on",
		         "source", rz_access_source_ip(l->s->access, l->req), NULL);
		t = (time_t)p.exp;
		gmtime_r(&t, &tm);
		strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		rz_reply_json(l->req, 200,
		              json_pack("{s:s, s:s, s:{s:s, s:s, s:b, s:o}}", "token", token,
		                        "expiresAt", exp, "user", "name", id->user, "role",
		                        rz_role_name(role), "mustChangePassword", 0, "groups",
		                        groups_json(id)));
	}
	if (token != NULL) {
		sodium_memzero(token, strlen(token));
		free(token);
	}
}

static void checked(void *arg, const rz_oidc_result_t *r)
{
	struct login *l = arg;
	rz_sso_identity_t id;
	rz_err_t err = { 0 };
	json_t *u = NULL;
	char why[256];
	int code, seen;

	if (r->rc != 0) {
		refuse(l, r->rc == RZ_EAUTH ? 401 : 503, NULL, r->err.msg);
	} else if (rz_sso_identity(l->s->cfg, r->claims, &id, &err) != 0) {
		refuse(l, 401, NULL, err.msg);
	} else if ((seen = replayed(
	                l->s, l->token,
	                (int64_t)json_number_value(json_object_get(r->claims, "exp")))) != 0) {
		refuse(l, seen > 0 ? 401 : 503, id.user,
		       seen > 0 ? "this ID token was used already: sign in again"
		                : "too many sign-ins at once; try again in a minute");
	} else if ((code = provision(l, &id, &u, why, sizeof(why))) != 0) {
		refuse(l, code, id.user, why);
	} else {
		if (id.dropped > 0) {
			rz_log_info("auth",
			            "single sign-on of '%s': %zu groups left out (not a DNS label "
			            "with the prefix, or beyond %d)",
			            id.user, id.dropped, RZ_USER_GROUPS_MAX);
		}
		grant(l, &id, u);
	}
	json_decref(u);
	login_free(l);
}

/* ------------------------------------------------------------------ routes */

static bool configured(rz_sso_t *s, rz_req_t *req)
{
	if (s->oidc == NULL) {
		rz_reply_error(req, 404, NULL,
		               "single sign-on is not configured (auth.oidc.issuer is empty)");
		return false;
	}
	return true;
}

static void handle_info(rz_req_t *req, void *ctx)
{
	rz_sso_t *s = ctx;

	if (configured(s, req)) {
		rz_reply_json(req, 200,
		              json_pack("{s:s, s:s, s:s}", "issuer", rz_oidc_issuer(s->oidc),
		                        "clientID", rz_oidc_cli_client_id(s->oidc), "scopes",
		                        rz_oidc_scopes(s->oidc)));
	}
}

static void handle_token(rz_req_t *req, void *ctx)
{
	rz_sso_t *s = ctx;
	const char *ctype = rz_req_header(req, "Content-Type");
	size_t len;
	const char *body = rz_req_body(req, &len);
	json_t *j = NULL;
	const char *token, *nonce;
	struct login *l = NULL;

	if (!configured(s, req)) {
		return;
	}
	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0) {
		rz_reply_error(req, 415, NULL, "%s takes application/json", rz_req_path(req));
		return;
	}
	j = json_loadb(body, len, 0, NULL);
	token = json_string_value(json_object_get(j, "idToken"));
	nonce = json_string_value(json_object_get(j, "nonce"));
	if (token == NULL || (json_object_get(j, "nonce") != NULL && nonce == NULL)) {
		rz_reply_error(req, 400, NULL, "idToken (a string) is required; nonce is a string");
	} else if ((l = calloc(1, sizeof(*l))) == NULL || (l->token = strdup(token)) == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
		free(l);
	} else {
		l->s = s;
		l->req = req;
		if (rz_oidc_check(s->oidc, token, nonce, checked, l) != 0) {
			rz_reply_error(req, 500, NULL, "out of memory");
			login_free(l);
		}
	}
	json_decref(j);
}

/* For the OpenAPI document (core/api/openapi.c). */
static const int token_errors[] = { 400, 401, 403, 404, 415, 0 };
static const int info_errors[] = { 404, 0 };
static const rz_route_doc_t info_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "oidcInfo",
	  .summary = "single sign-on: the OpenID provider and the client id a command-line "
	             "client signs in with",
	  .response = "{\"type\":\"object\",\"required\":[\"issuer\",\"clientID\",\"scopes\"],"
	              "\"properties\":{\"issuer\":{\"type\":\"string\",\"description\":\"The "
	              "OpenID provider's issuer URL\"},\"clientID\":{\"type\":\"string\","
	              "\"description\":\"The client ID the daemon is registered with at the "
	              "provider\"},\"scopes\":{\"type\":\"string\",\"description\":\"The scopes to "
	              "ask for, space-separated\"}}}",
	  .errors = info_errors },
	{ 0 },
};
static const rz_route_doc_t token_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "loginOIDC",
	  .summary = "log in with an ID token of the OpenID provider: a session token; the user "
	             "is made at its first login",
	  .request = "{\"type\":\"object\",\"required\":[\"idToken\"],"
	             "\"properties\":{\"idToken\":{\"type\":\"string\",\"maxLength\":16384,"
	             "\"description\":\"The ID token the provider issued (a JWT), at most 16384 "
	             "bytes\"},\"nonce\":{\"type\":\"string\",\"description\":\"The nonce the "
	             "client sent in its authorization request, which the ID token must carry\"}}}",
	  .response = "{\"type\":\"object\",\"required\":[\"token\",\"expiresAt\",\"user\"],"
	              "\"properties\":{\"token\":{\"type\":\"string\",\"description\":\"The "
	              "session token: send it as Authorization: Bearer <token> until expiresAt\"},"
	              "\"expiresAt\":{\"type\":\"string\",\"format\":\"date-time\","
	              "\"description\":\"When the session expires (RFC 3339, UTC)\"},"
	              "\"user\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
	              "\"description\":\"The user's name (made at the first login)\"},"
	              "\"role\":{\"type\":\"string\",\"description\":\"The user's role on the "
	              "installation: none, view, edit or admin\"},"
	              "\"mustChangePassword\":{\"type\":\"boolean\",\"description\":\"Always "
	              "false: a user of single sign-on has no password\"},"
	              "\"groups\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	              "\"description\":\"The groups the provider's groups claim gave\"}},"
	              "\"description\":\"Who signed in\"}}}",
	  .errors = token_errors },
	{ 0 },
};

static const rz_route_t sso_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/auth/oidc",
	  .fn = handle_info,
	  .role = RZ_ROLE_PUBLIC,
	  .verb = "oidc-info",
	  .doc = info_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/auth/oidc/token",
	  .fn = handle_token,
	  .role = RZ_ROLE_PUBLIC,
	  .verb = "login-oidc",
	  .doc = token_doc },
};

int rz_sso_routes(rz_sso_t *s, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(sso_routes), s, err);
}

int rz_sso_new(rz_sso_t **out, rz_oidc_t *oidc, rz_auth_t *auth, rz_access_t *access,
               rz_store_t *store, const rz_config_t *cfg, rz_err_t *err)
{
	rz_sso_t *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s == NULL) {
		return rz_err_set(err, -ENOMEM, "sso: out of memory");
	}
	s->oidc = oidc;
	s->auth = auth;
	s->access = access;
	s->store = store;
	s->cfg = cfg;
	*out = s;
	return 0;
}

void rz_sso_free(rz_sso_t *s)
{
	free(s);
}
