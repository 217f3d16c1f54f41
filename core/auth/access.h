/*
 * core/auth/access.h - who may call which route (SPEC §5): the HTTP guard that authenticates
 * every request and applies the role each route declares (from the kind table for resource
 * routes), and the audit rows for what it sees.
 */
#ifndef RZ_ACCESS_H
#define RZ_ACCESS_H

#include <stdbool.h>

#include "core/auth/audit.h"
#include "core/auth/auth.h"
#include "core/http/http.h"
#include "core/store/store.h"

typedef struct rz_access rz_access_t;

/* cfg (borrowed, must outlive the module): server.trusted_proxies, whose X-Forwarded-For is
 * believed, and audit.refused_full / audit.refused_interval, how refused requests are
 * sampled (see rz_audit_refused()). */
int rz_access_new(rz_access_t **out, rz_auth_t *auth, rz_db_t *db, const rz_config_t *cfg,
                  rz_err_t *err);
void rz_access_free(rz_access_t *a);

/* The guard for rz_http_set_guard(). */
bool rz_access_guard(void *ctx, rz_req_t *req, const rz_route_t *route);

/* Whether the guard let req through by AccessBindings: a list across tenants for a
 * principal with no role on the installation (to show only the tenants, and their objects,
 * its bindings grant), or a request on one tenant a binding grants; the handler then lists
 * and watches with rz_access_keep. */
bool rz_access_filtered(const rz_req_t *req);

/* Mark req filtered, from a handler of a route any signed-in user reaches that shows every
 * tenant's data to those with a role on the installation (the summary's counts): it then
 * counts with rz_access_keep. */
void rz_access_filter(rz_req_t *req);

/* For a per_tenant route (rz_route_t) the guard let through by AccessBindings: the names
 * of the tenants whose data it may show (borrowed — valid with req; never empty). NULL when
 * it shows everything (the principal's role on the installation reaches the route's). */
const json_t *rz_access_tenants(const rz_req_t *req);

/* A list's keep predicate for a filtered request (arg: the rz_req_t): whether the object of
 * key (tenant, name) — a Tenant when tenant is "" — is of a tenant the principal may see,
 * asked now (a binding deleted hides it at once, from an open watch too). */
bool rz_access_keep(void *arg, const char *tenant, const char *name);

/* For an open watch of req (rz_watch_opts_t's valid): 0 while its principal may go on
 * watching; 401 once its session or token ended or its user went; 403 once it may no
 * longer call the route (a demotion). A changed principal is decided again: it may become
 * filtered (rz_access_keep), or no longer be. Cheap while no user, token or session
 * changed. */
int rz_access_recheck(void *req);

/* Who is asking; NULL for anonymous requests. Borrowed — valid with req. */
const rz_principal_t *rz_access_principal(const rz_req_t *req);

/* Set who is asking (after a login on a public route), for the audit row. */
void rz_access_set_principal(rz_req_t *req, const rz_principal_t *p);

/* The WebUI's session cookie: the session token the API's login issues. */
#define RZ_SESSION_COOKIE "rezus_session"
#define RZ_COOKIE_MAX     2048 /* a cookie value longer than this is not read */

/* The value of cookie name in a Cookie header (may be NULL) into out: false when absent,
 * empty or not shorter than size. */
bool rz_cookie_get(const char *header, const char *name, char *out, size_t size);

/* True when req's peer is one of server.trusted_proxies (whose X-Forwarded-For and
 * X-Ingress-Path are believed). */
bool rz_access_trusted_peer(const rz_access_t *a, const rz_req_t *req);

/* The client's address: the first X-Forwarded-For hop when the peer is a trusted proxy,
 * else the peer. Borrowed — valid with req. */
const char *rz_access_source_ip(const rz_access_t *a, const rz_req_t *req);

/* Write the audit row a finished request needs and has not had: mutating requests, audited
 * routes, and every 401/403. Call from the HTTP observer. */
void rz_access_observe(rz_access_t *a, rz_req_t *req, int code);

/* An audit row for req as a store write hook, so it commits with the change. code is the
 * reply's code; for a delete, pass 0: 200 when the object went, 202 when it stays. The
 * caller owns storage (usually on its stack) and marks req audited after the write. */
typedef struct rz_access_hook {
	rz_write_hook_t hook;
	rz_access_t *a;
	rz_req_t *req;
	int code;
	const char *name;
} rz_access_hook_t;

const rz_write_hook_t *rz_access_hook(rz_access_t *a, rz_req_t *req, int code, const char *name,
                                      const rz_write_hook_t *next, rz_access_hook_t *storage);

/* What req's audit row says besides its path (an approval's reason); copied, at most
 * about 1 KiB. */
void rz_access_set_detail(rz_req_t *req, const char *detail);

/* Write an audit row for req now (login failures and other rows outside a store write);
 * user, error and verb (each may be NULL) override what the request says. A refusal (401,
 * 403, 429) is sampled: written in full or counted for its address. */
int rz_access_audit(rz_access_t *a, rz_req_t *req, int code, const char *user, const char *error,
                    const char *verb, rz_err_t *err);

#endif /* RZ_ACCESS_H */
