/*
 * core/auth/session.h - the /api/v1/auth endpoints (login, logout, whoami, password change)
 * and the first start's admin user (SPEC §5).
 */
#ifndef RZ_SESSION_H
#define RZ_SESSION_H

#include <stdint.h>

#include "core/auth/access.h"
#include "core/auth/auth.h"
#include "core/http/http.h"
#include "core/store/store.h"
#include "core/base/workers.h"

struct event_base;

typedef struct rz_session rz_session_t;

/* Everything borrowed; must outlive the module. */
int rz_session_new(rz_session_t **out, rz_auth_t *auth, rz_access_t *access, rz_store_t *store,
                   rz_db_t *db, rz_workers_t *workers, struct event_base *base, rz_err_t *err);
void rz_session_free(rz_session_t *s);

/* For /metrics: password checks refused with 429 because too many ran or waited at once. */
uint64_t rz_session_busy_refusals(const rz_session_t *s);

/* POST /api/v1/auth/login (public), POST …/logout, GET …/whoami, POST …/password. */
int rz_session_routes(rz_session_t *s, rz_http_t *http, rz_err_t *err);

/* When no user exists, create 'admin': with password when given, else with a generated
 * one-time password that is logged once and must be changed at first login. Blocking
 * (hashes a password): call at start-up, before the loop runs. */
int rz_session_bootstrap(rz_store_t *store, rz_db_t *db, const char *password, rz_err_t *err);

#endif /* RZ_SESSION_H */
