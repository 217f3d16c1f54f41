/*
 * core/auth/auth.h - authentication (SPEC §5): sessions as HS256 JWTs, API tokens, password
 * hashing, the brute-force limiter.
 *
 * Who may do what is the kind table's business (core/model/kinds.h: roles per kind and verb);
 * this module says who is asking. Secrets never leave it in clear: passwords become
 * Argon2id hashes (libsodium), API token secrets are stored as BLAKE2b hashes, the JWT
 * signing secret lives in a 0600 file.
 */
#ifndef RZ_AUTH_H
#define RZ_AUTH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sodium.h>

#include "core/base/config.h"
#include "core/store/db.h"
#include "core/base/errors.h"
#include "core/model/kinds.h"
#include "core/store/store.h"

#define RZ_JWT_ISSUER        "rezuscloud"
#define RZ_TOKEN_PREFIX      "rzt_"
#define RZ_TOKEN_SECRET_LEN  47 /* "rzt_" + 43 base64url characters (32 bytes) */
#define RZ_HASH_HEX_LEN      64
#define RZ_PASSWORD_HASH_LEN crypto_pwhash_STRBYTES

/* Who is asking, after authentication. */
typedef struct rz_principal {
	char user[64];
	int role; /* effective role: the user's current one, capped by a token's */
	int cap;  /* a token's role (what it may do at most, on tenants too); admin for
	             sessions */
	char groups[RZ_USER_GROUPS_MAX][64]; /* User.spec.groups, for AccessBindings */
	size_t ngroups;
	char token_id[64]; /* API token id; "" for sessions */
	char jti[40];      /* session id; "" for API tokens */
	int64_t exp;       /* session expiry (Unix seconds); 0 for tokens without expiry */
	bool must_change_password;
	char tenant_scope[64]; /* a run's secret: only this tenant's TF state; "" otherwise */
	bool runner_scope;     /* a runner token (APIToken spec.scope runner): only the routes
	                          of kind RunnerClaim, and those only for it */
	char runner[64];       /* a runner token's spec.runner: the only Runner it speaks for */
} rz_principal_t;

typedef struct rz_auth rz_auth_t;

/* Load the JWT secret from auth.jwt_secret_file, or from data_dir/jwt.secret (generated
 * with 64 random bytes, 0600, on first start). A secret shorter than 32 bytes is refused.
 * db, store and bus are borrowed and must outlive the module; the bus tells it when users
 * change, so that it may remember them between requests. */
int rz_auth_new(rz_auth_t **out, const rz_config_t *cfg, rz_db_t *db, rz_store_t *store,
                rz_bus_t *bus, rz_err_t *err);
void rz_auth_free(rz_auth_t *a);

/* A session for user: a JWT with iss, sub, role, iat, nbf, exp (now + session_ttl), jti,
 * and its row in the sessions table, bound to the user's uid: it is live while the row is
 * there and the name still belongs to that uid. Caller owns *token (free()). */
int rz_auth_issue(rz_auth_t *a, const char *user, int role, char **token, rz_principal_t *p,
                  rz_err_t *err);

/* Authenticate an Authorization header value ("Bearer <jwt or rzt_ token>", or HTTP
 * "Basic" whose password is an rzt_ token or a run's granted secret). Returns 0
 * with *p filled; RZ_ENOAUTH when header is NULL or empty; RZ_EAUTH (err says why, for the
 * log — never shown to the client in more detail than "invalid credentials") otherwise. The
 * role comes from the user's stored object at this moment, so demotions act at once. */
int rz_auth_authenticate(rz_auth_t *a, const char *header, rz_principal_t *p, rz_err_t *err);

/* What p may do on tenant: the higher of its role and what the AccessBindings grant it there
 * (core/auth/bindings.h), capped by its token's role; its role alone for a run's secret or a
 * runner token. */
int rz_auth_tenant_role(rz_auth_t *a, const rz_principal_t *p, const char *tenant);

/* A principal authenticated earlier (an open watch's), checked again: its session or token
 * still live and not expired, its user still there and enabled; its role, groups and cap as
 * they are now are written into *p. Cheap while nothing changed since *seen: the
 * generation of what p depends on (rz_auth_generation), updated. 0, or RZ_EAUTH with the
 * reason. */
int rz_auth_recheck(rz_auth_t *a, rz_principal_t *p, uint64_t *seen, rz_err_t *err);
/* Users and, for an API token's principal, tokens, for a session's, sessions: it grows
 * whenever a change may have ended p or changed its role or groups. */
uint64_t rz_auth_generation(const rz_auth_t *a, const rz_principal_t *p);

/* The names of the tenants (that exist now, in name order) where p may do what role allows
 * by its AccessBindings, capped by its token's role — its role on the installation aside:
 * ask this of a principal below role there. Caller owns the array (json_decref()); empty
 * for a run's secret or a runner token; NULL when the store cannot be read. */
json_t *rz_auth_tenants(rz_auth_t *a, const rz_principal_t *p, int role);

/* Let a run's secret (HTTP basic password; never on disk) reach tenant's TF state until
 * rz_auth_ungrant(run). 0, or -ENOSPC when too many runs hold grants. */
int rz_auth_grant(rz_auth_t *a, const char *tenant, const char *run, const char *secret);
/* The same, for a run on a remote runner: the secret's hash is kept in the database
 * (table run_grants), so that a restarted daemon still accepts the runner's writes. */
int rz_auth_grant_kept(rz_auth_t *a, const char *tenant, const char *run, const char *secret);
/* Whether run holds a grant (a kept one from before a restart, say). */
bool rz_auth_granted(const rz_auth_t *a, const char *run);
/* Ends every grant of run, kept ones too. */
void rz_auth_ungrant(rz_auth_t *a, const char *run);
/* Ends the grants of every run but those keep(arg, run) is true for (at start: the runs a
 * restarted daemon takes up again keep theirs). */
void rz_auth_ungrant_except(rz_auth_t *a, bool (*keep)(void *arg, const char *run), void *arg);

/* End a session (logout); runs inside the caller's transaction when there is one. exp is
 * not needed any more: a session is live only while its row exists. */
int rz_auth_revoke(rz_auth_t *a, const char *jti, int64_t exp, rz_err_t *err);

/* End every session of user but keep_jti (NULL or "": all), inside the caller's transaction:
 * a new password ends the sessions made with the old one. Deleting a user ends its sessions
 * by itself (their rows go with it). */
int rz_auth_end_sessions(rz_db_t *db, const char *user, const char *keep_jti, rz_err_t *err);

/* A key for purpose (e.g. "webui-csrf"), derived from the JWT secret: stable across
 * restarts, different per purpose, and telling nothing about the secret. */
#define RZ_DERIVED_KEY_LEN 32
void rz_auth_derive_key(const rz_auth_t *a, const char *purpose,
                        unsigned char out[RZ_DERIVED_KEY_LEN]);

/* ---- API tokens ---- */

/* A new secret: "rzt_" + base64url(32 random bytes), NUL-terminated in out. */
void rz_auth_token_secret(char out[RZ_TOKEN_SECRET_LEN + 1]);

/* The stored form of a token secret: hex BLAKE2b-256, NUL-terminated in out. */
void rz_auth_token_hash(const char *secret, char out[RZ_HASH_HEX_LEN + 1]);

/* ---- passwords: blocking, for worker threads ---- */

/* Argon2id with libsodium's interactive limits (unless lowered below). 0, or -ENOMEM. */
int rz_auth_hash_password(const char *password, char out[RZ_PASSWORD_HASH_LEN]);

/* Change the Argon2id cost of new password hashes (and so what rz_auth_needs_rehash
 * compares with). For the unit tests only, which lower it to libsodium's minimum so that
 * a daemon's users are made in microseconds, not in 64 MiB and ~0.1 s each (seconds under
 * valgrind); the daemon never calls it. Call before any hashing: not thread-safe. */
void rz_auth_set_password_cost(unsigned long long opslimit, size_t memlimit);

/* Constant-time verification. true when password matches hash. */
bool rz_auth_check_password(const char *hash, const char *password);

/* Store (insert or replace) user's password hash, inside the caller's transaction. */
int rz_auth_store_hash(rz_db_t *db, const char *user, const char *hash, rz_err_t *err);

/* True when hash was made with other parameters than the current ones. */
bool rz_auth_needs_rehash(const char *hash);

/* ---- the brute-force limiter, per (user, source address) ---- */

#define RZ_LOGIN_PAIRS     1024 /* (user, address) pairs the limiter remembers */
#define RZ_LOGIN_ADDRESSES 256  /* addresses it remembers when every pair slot is locked */
#define RZ_ADDR_KEY_LEN    64

/* How many password checks may run and wait (auth.login_checks, .._per_address,
 * auth.login_queue). Borrowed — valid with a. */
typedef struct rz_login_limits {
	int running, per_address, queue;
} rz_login_limits_t;
const rz_login_limits_t *rz_auth_login_limits(const rz_auth_t *a);

/* What an address counts as: an IPv4 address as it is, an IPv6 one as its /64 (one site
 * holds a whole /64), into out. */
void rz_auth_addr_key(const char *ip, char out[RZ_ADDR_KEY_LEN]);

/* Before checking a password: reserve the attempt, so that it counts as a failure while the
 * check runs. 0 when it may proceed (its failure is answered after *delay_ms, which grows
 * with recent failures), or -EAGAIN when it must be refused with 429 and Retry-After:
 * *retry_after seconds — the pair is locked, or the checks under way would lock it. A locked
 * pair stays locked until the lock ends: it is never evicted; when every slot holds a lock
 * the address is counted instead, and when those are all locked too, pairs the limiter does
 * not know are refused. Every 0 is followed by exactly one of the three calls below. */
int rz_auth_throttle(rz_auth_t *a, const char *user, const char *ip, int64_t *delay_ms,
                     int64_t *retry_after);
void rz_auth_login_failed(rz_auth_t *a, const char *user, const char *ip);
void rz_auth_login_succeeded(rz_auth_t *a, const char *user, const char *ip);
/* The check did not happen (the server was busy or stopping): uncount it. */
void rz_auth_login_abandoned(rz_auth_t *a, const char *user, const char *ip);

/* For /metrics: password checks that failed (rz_auth_login_failed: logins and password
 * changes), attempts rz_auth_throttle refused with 429; what the AccessBindings' decisions
 * cost: made, and answered from memory (per principal class and tenant,
 * core/auth/bindings.h), and the classes and decisions known now. */
typedef struct rz_auth_stats {
	uint64_t login_failures, throttled;
	uint64_t decisions_evaluated, decisions_remembered;
	size_t classes, decisions;
} rz_auth_stats_t;
void rz_auth_stats(const rz_auth_t *a, rz_auth_stats_t *out);

/* ---- minting ---- */

/* The ceiling of a new API token (docs/security.md, "Privileges"), checked against spec
 * (the token's, modified in place) before it is made: its role is at most the lower of the
 * owner's (owner_role) and the role maker acts with, and defaults to that; a runner token
 * (spec.scope runner) is an admin's: maker and owner admins, its role admin; a token made
 * with a token (maker->token_id set) expires no later than that one (maker->exp, when set)
 * and defaults to its expiry. Each breach is a cause in causes (FieldValueForbidden, naming
 * spec.role, spec.scope or spec.expiresAt). maker NULL: the owner's role is the ceiling. */
void rz_auth_mint_check(const rz_principal_t *maker, int owner_role, json_t *spec, json_t *causes);

/* ---- roles ---- */

/* "view", "edit", "admin" → RZ_ROLE_*; 0 for anything else. */
int rz_role_parse(const char *s);
const char *rz_role_name(int role);

#endif /* RZ_AUTH_H */
