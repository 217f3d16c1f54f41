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

#define RZ_ONE_TIME_PASSWORD_SIZE 33 /* bytes of a one-time password, its NUL included */

/* When no user exists, create 'admin': with password when given, else with a generated
 * one-time password, written to generated (size ≥ RZ_ONE_TIME_PASSWORD_SIZE; "" when none
 * was made) for the caller to show once; it must be changed at the first login. Blocking
 * (hashes a password): call at start-up, before the loop runs. */
int rz_session_bootstrap(rz_store_t *store, rz_db_t *db, const char *password, char *generated,
                         size_t size, rz_err_t *err);

/* rezuscloud admin reset-password, offline: give user a new one-time password (written to
 * password, size ≥ RZ_ONE_TIME_PASSWORD_SIZE) that must be changed at the next login, end
 * its sessions (its API tokens stay) and, when it was disabled, enable it (*enabled) — with
 * an audit row, in one transaction. A single sign-on user has no password: -EINVAL. */
int rz_session_reset_password(rz_store_t *store, rz_db_t *db, const char *user, char *password,
                              size_t size, bool *enabled, rz_err_t *err);

#endif /* RZ_SESSION_H */
