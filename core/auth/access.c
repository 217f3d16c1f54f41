/* core/auth/access.c - authentication and role checks on every route, and their audit rows. */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth/access.h"
#include "core/model/kinds.h"
#include "core/base/log.h"

struct rz_access {
	rz_auth_t *auth;
	rz_db_t *db;
	char **trusted;
	rz_audit_sampler_t *refused;
};

/* Per-request state kept with the request. */
struct reqinfo {
	bool authenticated;
	rz_auth_t *auth;  /* for filtered lists: what the principal may see */
	bool filtered;    /* a list across tenants, of the tenants the principal may see */
	json_t *tenants;  /* a per_tenant route's tenants (rz_access_tenants); NULL: every one */
	uint64_t seen;    /* rz_auth_generation when the principal was last checked */
	rz_principal_t p; /* from here on not zeroed: read once authenticated */
	char source_ip[INET6_ADDRSTRLEN];
	char detail[1100];
};

int rz_access_new(rz_access_t **out, rz_auth_t *auth, rz_db_t *db, const rz_config_t *cfg,
                  rz_err_t *err)
{
	rz_access_t *a = calloc(1, sizeof(*a));
	int rc;

	*out = NULL;
	if (a == NULL) {
		return rz_err_set(err, -ENOMEM, "access: out of memory");
	}
	a->auth = auth;
	a->db = db;
	a->trusted = cfg->trusted_proxies;
	rc = rz_audit_sampler_new(&a->refused, cfg->audit_refused_full,
	                          cfg->audit_refused_interval_ms, err);
	if (rc != 0) {
		free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void rz_access_free(rz_access_t *a)
{
	if (a != NULL) {
		rz_audit_sampler_free(a->refused, a->db);
		free(a);
	}
}

static void info_free(void *arg)
{
	struct reqinfo *i = arg;

	json_decref(i->tenants);
	free(i);
}

static struct reqinfo *info(rz_req_t *req)
{
	struct reqinfo *i = rz_req_data(req);

	if (i == NULL) {
		/* not calloc: the principal alone is over a kilobyte, and the guard fills it */
		i = malloc(sizeof(*i));
		if (i != NULL) {
			memset(i, 0, offsetof(struct reqinfo, p));
			i->p.user[0] = '\0';
			i->source_ip[0] = '\0';
			i->detail[0] = '\0';
			rz_req_set_data(req, i, info_free);
		}
	}
	return i;
}

const rz_principal_t *rz_access_principal(const rz_req_t *req)
{
	const struct reqinfo *i = rz_req_data(req);

	return i != NULL && i->authenticated ? &i->p : NULL;
}

void rz_access_set_principal(rz_req_t *req, const rz_principal_t *p)
{
	struct reqinfo *i = info(req);

	if (i != NULL) {
		i->p = *p;
		i->authenticated = true;
	}
}

/* ------------------------------------------------------------------ source address */

static bool trusted(const rz_access_t *a, const char *peer)
{
	for (char **t = a->trusted; t != NULL && *t != NULL; t++) {
		if (strcmp(*t, peer) == 0) {
			return true;
		}
	}
	return false;
}

bool rz_access_trusted_peer(const rz_access_t *a, const rz_req_t *req)
{
	return trusted(a, rz_req_peer(req));
}

const char *rz_access_source_ip(const rz_access_t *a, const rz_req_t *req)
{
	struct reqinfo *i = info((rz_req_t *)req);
	const char *xff = rz_req_header(req, "X-Forwarded-For");
	unsigned char buf[sizeof(struct in6_addr)];
	char hop[INET6_ADDRSTRLEN];
	size_t len;

	if (i == NULL) {
		return rz_req_peer(req);
	}
	if (i->source_ip[0] != '\0') {
		return i->source_ip;
	}
	snprintf(i->source_ip, sizeof(i->source_ip), "%s", rz_req_peer(req));
	if (xff == NULL || !trusted(a, rz_req_peer(req))) {
		return i->source_ip;
	}
	while (*xff == ' ') {
		xff++;
	}
	len = strcspn(xff, ", ");
	if (len == 0 || len >= sizeof(hop)) {
		return i->source_ip;
	}
	memcpy(hop, xff, len);
	hop[len] = '\0';
	if (inet_pton(AF_INET, hop, buf) == 1 || inet_pton(AF_INET6, hop, buf) == 1) {
		snprintf(i->source_ip, sizeof(i->source_ip), "%s", hop);
	}
	return i->source_ip;
}

/* ------------------------------------------------------------------ audit rows */

static const char *method_verb(const char *method)
{
	static const struct {
		const char *method, *verb;
	} map[] = { { "POST", "create" },   { "PUT", "update" },   { "PATCH", "patch" },
		    { "DELETE", "delete" }, { "GET", "get" },      { "HEAD", "get" },
		    { "LOCK", "lock" },     { "UNLOCK", "unlock" } };

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(map[i].method, method) == 0) {
			return map[i].verb;
		}
	}
	return method;
}

static void fill_entry(rz_access_t *a, rz_req_t *req, int code, rz_audit_entry_t *e)
{
	const rz_principal_t *p = rz_access_principal(req);
	const rz_route_t *r = rz_req_route(req);

	memset(e, 0, sizeof(*e));
	e->user = p ? p->user : "";
	e->role = p ? rz_role_name(p->role) : "anonymous";
	e->source_ip = rz_access_source_ip(a, req);
	e->request_id = rz_req_id(req);
	e->method = rz_req_method(req);
	e->path = rz_req_path(req);
	e->verb = r && r->verb ? r->verb : method_verb(rz_req_method(req));
	e->kind = r && r->kind ? r->kind : "";
	e->tenant = rz_req_param(req, "tenant");
	e->name = rz_req_param(req, "name");
	e->code = code;
	e->error = code >= 400 ? rz_req_error(req) : "";
	e->detail = rz_req_data(req) ? ((const struct reqinfo *)rz_req_data(req))->detail : "";
}

void rz_access_set_detail(rz_req_t *req, const char *detail)
{
	struct reqinfo *i = info(req);

	if (i != NULL) {
		snprintf(i->detail, sizeof(i->detail), "%s", detail ? detail : "");
	}
}

int rz_access_audit(rz_access_t *a, rz_req_t *req, int code, const char *user, const char *error,
                    const char *verb, rz_err_t *err)
{
	rz_audit_entry_t e;

	fill_entry(a, req, code, &e);
	if (user != NULL) {
		e.user = user;
	}
	if (error != NULL) {
		e.error = error;
	}
	if (verb != NULL) {
		e.verb = verb;
	}
	if (code == 401 || code == 403 || code == 429) { /* refused: sampled per address */
		return rz_audit_refused(a->refused, a->db, &e, err);
	}
	return rz_audit_insert(a->db, &e, err);
}

void rz_access_observe(rz_access_t *a, rz_req_t *req, int code)
{
	static const char *const mutating[] = {
		"POST", "PUT", "PATCH", "DELETE", "LOCK", "UNLOCK"
	};
	const rz_route_t *r = rz_req_route(req);
	bool want = code == 401 || code == 403 || (r != NULL && r->audit);
	rz_err_t err = { 0 };

	rz_audit_sampler_flush(a->refused, a->db, false); /* counts of ended intervals */
	for (size_t i = 0; i < sizeof(mutating) / sizeof(mutating[0]); i++) {
		want = want || strcmp(rz_req_method(req), mutating[i]) == 0;
	}
	if (!want || rz_req_audited(req)) {
		return;
	}
	if (rz_access_audit(a, req, code, NULL, NULL, NULL, &err) != 0) {
		rz_log_err("audit", "cannot record %s %s: %s", rz_req_method(req), rz_req_path(req),
		           err.msg);
	}
}

static int hook_fn(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone, void *arg,
                   rz_err_t *err)
{
	rz_access_hook_t *h = arg;
	const char *field = rz_kind_owner_field(k);
	const json_t *meta = json_object_get(obj, "metadata");
	rz_audit_entry_t e;

	fill_entry(h->a, h->req, h->code ? h->code : (gone ? 200 : 202), &e);
	e.kind = k->kind;
	e.name = h->name ? h->name : json_string_value(json_object_get(meta, "name"));
	e.tenant = field && strcmp(field, "tenant") == 0
	               ? json_string_value(json_object_get(meta, "tenant"))
	               : "";
	return rz_audit_insert(db, &e, err);
}

const rz_write_hook_t *rz_access_hook(rz_access_t *a, rz_req_t *req, int code, const char *name,
                                      const rz_write_hook_t *next, rz_access_hook_t *storage)
{
	if (a == NULL) {
		return next;
	}
	*storage = (rz_access_hook_t){ { hook_fn, storage, next }, a, req, code, name };
	return &storage->hook;
}

/* ------------------------------------------------------------------ the guard */

/* 401, with the challenge the route's clients understand: Basic for the state backend
 * (RFC 7617 has no error parameter), else Bearer (RFC 6750). */
static void unauthorized(rz_req_t *req, const rz_route_t *route, int rc, const rz_err_t *err)
{
	const char *challenge = "Bearer realm=\"rezuscloud\"";

	if (rc == RZ_EAUTH && rz_req_log_sample(req)) { /* sampled per address: a flood */
		rz_logkv(RZ_LOG_INFO, "auth", "credentials refused", "reason", err->msg, "peer",
		         rz_req_peer(req), "request_id", rz_req_id(req), NULL);
	}
	if (rc == RZ_EAUTH) {
		challenge = "Bearer realm=\"rezuscloud\", error=\"invalid_token\"";
	}
	if (route->basic_auth) {
		challenge = "Basic realm=\"rezuscloud\"";
	}
	rz_req_add_header(req, "WWW-Authenticate", challenge);
	rz_reply_error(req, 401, NULL, "Unauthorized");
}

static void forbidden(rz_req_t *req, const rz_route_t *route, const rz_principal_t *p,
                      const char *why)
{
	const rz_kind_t *k = route->kind ? rz_kind_by_name(route->kind) : NULL;
	const char *what = k ? k->plural : rz_req_path(req);
	const char *name = rz_req_param(req, "name");
	char msg[512];
	json_t *st;

	if (why != NULL) {
		snprintf(msg, sizeof(msg), "%s", why);
	} else {
		snprintf(msg, sizeof(msg), "user \"%s\" with role %s cannot %s %s%s%s%s", p->user,
		         rz_role_name(p->role),
		         route->verb ? route->verb : method_verb(rz_req_method(req)), what,
		         name ? " \"" : "", name ? name : "", name ? "\"" : "");
	}
	st = rz_status_new(403, "Forbidden", msg);
	rz_status_set_target(st, k ? k->plural : NULL, name);
	rz_reply_status(req, st);
}

/* Routes a user who must change the password may still call. */
static bool allowed_before_password_change(const rz_route_t *route)
{
	static const char *const verbs[] = { "whoami", "logout", "change-password" };

	for (size_t i = 0; route->verb != NULL && i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(route->verb, verbs[i]) == 0) {
			return true;
		}
	}
	return false;
}

/* The owner of a user-scoped object (their own API tokens) may act on it. */
static bool owner_may(const rz_route_t *route, rz_req_t *req, const rz_principal_t *p)
{
	const rz_kind_t *k = route->kind ? rz_kind_by_name(route->kind) : NULL;
	const char *owner = rz_req_param(req, "user");

	return k != NULL && k->owner_may && owner != NULL && strcmp(owner, p->user) == 0;
}

bool rz_cookie_get(const char *header, const char *name, char *out, size_t size)
{
	size_t nlen = strlen(name);

	for (const char *p = header; p != NULL && *p != '\0';) {
		size_t len;
		while (*p == ' ' || *p == '\t') {
			p++;
		}
		len = strcspn(p, ";");
		if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
			size_t vlen = len - nlen - 1;
			if (vlen == 0 || vlen >= size) {
				return false;
			}
			memcpy(out, p + nlen + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
		p = p[len] == ';' ? p + len + 1 : NULL;
	}
	return false;
}

/* The credentials of req: its Authorization header, or on the WebUI's routes the session
 * cookie as a bearer token (into buf). NULL when there are none. */
static const char *credentials(const rz_req_t *req, const rz_route_t *route, char *buf, size_t size)
{
	const char *h = rz_req_header(req, "Authorization");
	char tok[RZ_COOKIE_MAX];

	if (h != NULL || !route->cookie ||
	    !rz_cookie_get(rz_req_header(req, "Cookie"), RZ_SESSION_COOKIE, tok, sizeof(tok))) {
		return h;
	}
	snprintf(buf, size, "Bearer %s", tok);
	sodium_memzero(tok, sizeof(tok));
	return buf;
}

/* Whether a route lists (or watches) objects of every tenant: Tenants, or a tenant-scoped
 * kind at /api/v1/<plural>. */
static bool lists_tenants(const rz_route_t *route)
{
	const rz_kind_t *k = route->kind != NULL ? rz_kind_by_name(route->kind) : NULL;

	return k != NULL && route->verb != NULL && strcmp(route->verb, "list") == 0 &&
	       rz_kind_tenanted(k);
}

/* The tenant a route acts on, when it names one: its {tenant} (the tenant's objects, state,
 * runs, credentials), or a Tenant's own {name}. AccessBindings grant roles there. */
static const char *route_tenant(const rz_req_t *req, const rz_route_t *route)
{
	const char *t = rz_req_param(req, "tenant");

	if (t == NULL && route->kind != NULL && strcmp(route->kind, "Tenant") == 0) {
		t = rz_req_param(req, "name");
	}
	return t != NULL && t[0] != '\0' ? t : NULL;
}

enum verdict { REFUSED, ALLOWED, FILTERED };

/* Whether the authenticated principal of req (i) may call route: by its role, as the owner,
 * or by its AccessBindings (FILTERED: then only what they grant is shown). *why: the
 * reason of a refusal that says more than the role (NULL: the role falls short). */
static enum verdict decide(rz_req_t *req, const rz_route_t *route, struct reqinfo *i,
                           const char **why)
{
	const char *tenant;

	*why = NULL;
	if (i->p.tenant_scope[0] != '\0' &&
	    (route->kind == NULL || strcmp(route->kind, "TFState") != 0 ||
	     rz_req_param(req, "tenant") == NULL ||
	     strcmp(rz_req_param(req, "tenant"), i->p.tenant_scope) != 0)) {
		*why = "a run's credentials reach only its own tenant's state";
		return REFUSED;
	}
	/* a runner token claims runs and reports their files, and does nothing else; those
	 * routes take nothing else */
	if (i->p.runner_scope != (route->kind != NULL && strcmp(route->kind, "RunnerClaim") == 0)) {
		*why = i->p.runner_scope ? "a runner token only claims runs"
		                         : "only a runner token (APIToken spec.scope: runner) "
		                           "claims runs";
		return REFUSED;
	}
	if (i->p.runner_scope && (rz_req_param(req, "name") == NULL ||
	                          strcmp(rz_req_param(req, "name"), i->p.runner) != 0)) {
		/* a token made before spec.runner existed names no runner: it claims nothing */
		*why = "a runner token claims only under the name of its spec.runner";
		return REFUSED;
	}
	if (i->p.must_change_password && !allowed_before_password_change(route)) {
		*why = "the password must be changed first: POST /api/v1/auth/password";
		return REFUSED;
	}
	if (i->p.role >= route->role || owner_may(route, req, &i->p)) {
		return ALLOWED;
	}
	tenant = route_tenant(req, route);
	if (tenant != NULL && route->role >= RZ_ROLE_VIEW &&
	    rz_auth_tenant_role(i->auth, &i->p, tenant) >= route->role) {
		return FILTERED; /* by a binding: a watch it starts asks again at each event */
	}
	if (tenant == NULL && route->role == RZ_ROLE_VIEW && i->p.role == RZ_ROLE_NONE &&
	    lists_tenants(route)) {
		/* a list (or watch) across tenants: of those it may see (rz_access_keep) */
		return FILTERED;
	}
	json_decref(i->tenants); /* from an earlier decision */
	i->tenants = NULL;
	if (tenant == NULL && route->per_tenant &&
	    (i->tenants = rz_auth_tenants(i->auth, &i->p, route->role)) != NULL &&
	    json_array_size(i->tenants) > 0) {
		/* the data of the tenants where its bindings grant the route's role */
		return FILTERED;
	}
	json_decref(i->tenants);
	i->tenants = NULL;
	return REFUSED;
}

bool rz_access_guard(void *ctx, rz_req_t *req, const rz_route_t *route)
{
	rz_access_t *a = ctx;
	struct reqinfo *i = info(req);
	const char *why;
	rz_err_t err = { 0 };
	char cookie[RZ_COOKIE_MAX + 8];
	const char *cred;
	enum verdict v;
	int rc;

	if (route->role == RZ_ROLE_UNSET || i == NULL) {
		rz_log_err("access", "route %s declares no role: refused", route->pattern);
		forbidden(req, route, NULL, "this route is not open to anyone");
		return false;
	}
	cred = credentials(req, route, cookie, sizeof(cookie));
	rc = rz_auth_authenticate(a->auth, cred, &i->p, &err);
	if (cred == cookie) {
		sodium_memzero(cookie, strlen(cookie)); /* the only secret it ever held */
	}
	i->authenticated = rc == 0;
	i->auth = a->auth;
	i->seen = rz_auth_generation(a->auth, &i->p);
	if (route->role == RZ_ROLE_PUBLIC) {
		return true;
	}
	if (rc != 0) {
		unauthorized(req, route, rc, &err);
		return false;
	}
	v = decide(req, route, i, &why);
	if (v == REFUSED) {
		forbidden(req, route, &i->p, why);
		return false;
	}
	i->filtered = v == FILTERED;
	return true;
}

int rz_access_recheck(void *arg)
{
	rz_req_t *req = arg;
	struct reqinfo *i = rz_req_data(req);
	const rz_route_t *route = rz_req_route(req);
	uint64_t before;
	rz_err_t err = { 0 };
	const char *why;
	enum verdict v;

	if (i == NULL || !i->authenticated || i->auth == NULL || route == NULL ||
	    route->role == RZ_ROLE_PUBLIC) {
		return 0;
	}
	before = i->seen;
	if (rz_auth_recheck(i->auth, &i->p, &i->seen, &err) != 0) {
		return 401;
	}
	if (i->seen == before) {
		return 0;
	}
	/* the principal changed (a role, its groups): what it may see is decided again */
	v = decide(req, route, i, &why);
	i->filtered = v == FILTERED;
	return v == REFUSED ? 403 : 0;
}

void rz_access_filter(rz_req_t *req)
{
	struct reqinfo *i = rz_req_data(req);

	if (i != NULL && i->authenticated && i->auth != NULL) {
		i->filtered = true;
	}
}

bool rz_access_filtered(const rz_req_t *req)
{
	const struct reqinfo *i = rz_req_data(req);

	return i != NULL && i->filtered;
}

const json_t *rz_access_tenants(const rz_req_t *req)
{
	const struct reqinfo *i = rz_req_data(req);

	return i != NULL && i->filtered ? i->tenants : NULL;
}

bool rz_access_keep(void *arg, const char *tenant, const char *name)
{
	struct reqinfo *i = rz_req_data(arg);

	if (i == NULL || !i->filtered) {
		return i != NULL;
	}
	/* a Tenant is its own tenant; a tenant's object is its tenant's */
	return rz_auth_tenant_role(i->auth, &i->p,
	                           tenant != NULL && tenant[0] != '\0' ? tenant : name) >=
	       RZ_ROLE_VIEW;
}
