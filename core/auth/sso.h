/*
 * core/auth/sso.h - single sign-on's side of the API (docs/security.md, "Single sign-on"):
 * GET /api/v1/auth/oidc (public: the provider a command-line client signs in at) and POST
 * /api/v1/auth/oidc/token (public: a session for an ID token of the provider, the one the
 * WebUI's sign-in got or one a command-line client got itself), and the users made at their
 * first login and updated at each from the token's claims.
 *
 * A user single sign-on makes carries spec.identity {issuer, subject} and no password; a
 * user of the same name without it (a local user) or with another subject is never taken
 * over: the login is refused saying so. Every login, granted or refused, writes an audit
 * row (verb login-oidc) without the token.
 */
#ifndef RZ_SSO_H
#define RZ_SSO_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/auth/access.h"
#include "core/auth/auth.h"
#include "core/auth/oidc.h"
#include "core/base/config.h"
#include "core/http/http.h"
#include "core/store/store.h"

#define RZ_SSO_REPLAYS 1024 /* ID tokens remembered as used (until they expire) */

/* Who an ID token's claims say the user is, by auth.oidc's claims and mappings. */
typedef struct rz_sso_identity {
	char user[64];                       /* the username claim: a DNS label */
	char subject[256];                   /* sub */
	char groups[RZ_USER_GROUPS_MAX][64]; /* the groups claim's, each with groups_prefix
	                                        before it; those that do not make a DNS label
	                                        are left out, and those beyond the 16th */
	size_t ngroups;
	size_t dropped; /* groups left out */
	int role;       /* the highest auth.oidc.roles gives its groups; RZ_ROLE_NONE */
	bool mapped;    /* auth.oidc.roles is set: role is the user's at each login */
} rz_sso_identity_t;

/* claims (borrowed) as an identity, by cfg's auth.oidc keys: 0, or RZ_EAUTH with err saying
 * what is wrong (no username claim, or one that is not a DNS label). Pure. */
int rz_sso_identity(const rz_config_t *cfg, const json_t *claims, rz_sso_identity_t *out,
                    rz_err_t *err);

typedef struct rz_sso rz_sso_t;

/* oidc may be NULL (no single sign-on: the routes answer 404); everything borrowed and must
 * outlive the module. Caller owns *out; rz_sso_free(). */
int rz_sso_new(rz_sso_t **out, rz_oidc_t *oidc, rz_auth_t *auth, rz_access_t *access,
               rz_store_t *store, const rz_config_t *cfg, rz_err_t *err);
void rz_sso_free(rz_sso_t *s);

/* GET /api/v1/auth/oidc and POST /api/v1/auth/oidc/token, both public. */
int rz_sso_routes(rz_sso_t *s, rz_http_t *http, rz_err_t *err);

#endif /* RZ_SSO_H */
