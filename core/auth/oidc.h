/*
 * core/auth/oidc.h - the OpenID provider of single sign-on (auth.oidc, docs/security.md):
 * its discovery document and keys (JWKS), fetched on the worker pool and cached; ID tokens
 * verified (signature, iss, aud, azp, exp, iat, nbf, nonce); the authorization code flow
 * with PKCE (S256), state and nonce, and the code's exchange at the token endpoint.
 *
 * The discovery document and the keys are kept for RZ_OIDC_CACHE_S and fetched again when
 * next needed after it; a token signed with a key the cached set does not hold has the set
 * fetched again at once (the provider rotated its keys), at most every RZ_OIDC_REFETCH_S.
 * A fetch that fails keeps the old copies. Everything but the fetches runs on the loop
 * thread; callbacks run there too.
 */
#ifndef RZ_OIDC_H
#define RZ_OIDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/config.h"
#include "core/base/errors.h"
#include "core/base/workers.h"

#define RZ_OIDC_TOKEN_MAX   16384        /* an ID token longer than this is refused */
#define RZ_OIDC_DOC_MAX     (256 * 1024) /* a discovery document, a key set, a token reply */
#define RZ_OIDC_KEYS_MAX    32           /* keys of a key set read, at most */
#define RZ_OIDC_SKEW_S      60           /* clock skew allowed on exp, iat and nbf */
#define RZ_OIDC_IAT_MAX_S   86400        /* an ID token issued longer ago is refused */
#define RZ_OIDC_PENDING     256          /* sign-ins begun and not finished, at most */
#define RZ_OIDC_PENDING_S   600          /* how long one may take */
#define RZ_OIDC_CACHE_S     3600         /* discovery and keys are kept this long */
#define RZ_OIDC_WAITING_MAX 256          /* calls waiting for a fetch; more get -EAGAIN (503) */
#define RZ_OIDC_REFETCH_S   30           /* an unknown key refetches the set at most this often */
#define RZ_OIDC_TIMEOUT_S   15           /* one request to the provider, at most */
#define RZ_OIDC_AUDIENCES   4            /* client ids an ID token may be meant for */
#define RZ_OIDC_STATE_LEN   43           /* base64url of 32 random bytes: state, nonce, verifier */
#define RZ_OIDC_URL_MAX     2048         /* an authorization URL, at most */
#define RZ_OIDC_ISSUER_MAX  256

/* What an ID token is checked against (rz_oidc_verify). */
typedef struct rz_oidc_expect {
	const char *issuer;                           /* iss, exactly */
	const char *audiences[RZ_OIDC_AUDIENCES + 1]; /* NULL-ended: aud must hold one of them;
	                                               azp, when there, must be it */
	const char *nonce; /* the nonce the sign-in was begun with; NULL: not asked for (a
	                      token the CLI got), and the token's own is not compared */
	int64_t now;       /* Unix seconds */
} rz_oidc_expect_t;

/* Verify token (a compact JWS) with the key set jwks (an object with "keys", borrowed)
 * against x. 0 with *claims its payload (caller owns; json_decref), RZ_ENOTFOUND when no
 * key of the set has the token's kid (or, without a kid, none fits: fetch the set again),
 * RZ_EAUTH otherwise; err says why, in words that may be shown (no part of the token). Only
 * RS256 and ES256 are accepted: alg none and HS256 (a public key taken for an HMAC secret)
 * are refused. A pure function: the unit tests drive it with keys of their own. */
int rz_oidc_verify(const char *token, const json_t *jwks, const rz_oidc_expect_t *x,
                   json_t **claims, rz_err_t *err);

/* ---- the provider ---- */

typedef struct rz_oidc rz_oidc_t;

/* From cfg's auth.oidc keys: *out NULL (and 0) when auth.oidc.issuer is empty; else the
 * provider, its client secret read from auth.oidc.client_secret_file (a regular file no
 * group or other may read; its first line). Nothing is fetched yet. cfg, workers and base
 * are borrowed and must outlive it; workers must be freed before it. Caller owns *out;
 * release with rz_oidc_free(). */
int rz_oidc_new(rz_oidc_t **out, const rz_config_t *cfg, rz_workers_t *workers,
                struct event_base *base, rz_err_t *err);
void rz_oidc_free(rz_oidc_t *o);

/* The issuer (borrowed, valid with o), and the client id a command-line client signs in
 * with (auth.oidc.cli_client_id, else auth.oidc.client_id). */
const char *rz_oidc_issuer(const rz_oidc_t *o);
const char *rz_oidc_cli_client_id(const rz_oidc_t *o);
/* The scopes asked for, space-separated (borrowed). */
const char *rz_oidc_scopes(const rz_oidc_t *o);
/* What the login page's button says: auth.oidc.display_name, else "single sign-on". */
const char *rz_oidc_display_name(const rz_oidc_t *o);
/* auth.oidc.redirect_url, or "" when the WebUI derives it from the request. */
const char *rz_oidc_redirect_url(const rz_oidc_t *o);

/* The outcome of an asynchronous call; every pointer borrowed for the callback only. */
typedef struct rz_oidc_result {
	int rc; /* 0, or negative with err set (words that may be shown) */
	rz_err_t err;
	const char *url;      /* begin: where to send the browser */
	const char *state;    /* begin: the sign-in's state, for the browser's cookie */
	const char *id_token; /* finish: the ID token the token endpoint gave */
	const char *nonce;    /* finish: the nonce the sign-in was begun with */
	const json_t *claims; /* check: the verified token's claims */
} rz_oidc_result_t;
typedef void (*rz_oidc_fn)(void *arg, const rz_oidc_result_t *r);

/* Check an ID token (at most RZ_OIDC_TOKEN_MAX bytes) against the provider's keys, its
 * issuer, the client ids (the WebUI's and the CLI's) and nonce (NULL: not compared). fn
 * runs once, on the loop thread, possibly before this returns. 0, or -ENOMEM (fn not
 * called). */
int rz_oidc_check(rz_oidc_t *o, const char *token, const char *nonce, rz_oidc_fn fn, void *arg);

/* Begin a sign-in for a browser coming back at redirect_uri: a new state, nonce and PKCE
 * verifier kept here (at most RZ_OIDC_PENDING, for RZ_OIDC_PENDING_S; the oldest go first),
 * and the authorization endpoint's URL asking for a code with them. fn runs once, as above. */
int rz_oidc_begin(rz_oidc_t *o, const char *redirect_uri, rz_oidc_fn fn, void *arg);

/* Finish the sign-in of state with the code the provider gave: the state is used up (a
 * second call with it fails), the code exchanged at the token endpoint with the verifier
 * and the client's credentials (client_secret_post; none without a secret) on the worker
 * pool. fn gets the ID
 * token, still to check (rz_oidc_check) with the nonce it gets too. */
int rz_oidc_finish(rz_oidc_t *o, const char *state, const char *code, rz_oidc_fn fn, void *arg);

#endif /* RZ_OIDC_H */
