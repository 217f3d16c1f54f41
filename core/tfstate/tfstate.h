/*
 * core/tfstate/tfstate.h - the TF HTTP state backend (SPEC §7.1, PROTOCOLS.md §1) at
 * /tfstate/{tenant}: GET, POST (?ID= checked against the lock), DELETE (an admin's, audited:
 * the state is emptied as a new version — no resources, the next serial, the same lineage —
 * so the history keeps what was there), LOCK (200 / 423 with the holder), UNLOCK (200 / 409
 * with the holder; an empty body is an admin's force-unlock, audited). Every stored version
 * is kept up to tofu.state_history, encrypted at rest with XChaCha20-Poly1305 (key file
 * data_dir/state.key, 0600). GET /api/v1/tenants/{t}/state lists the versions (serial,
 * lineage, time, who wrote it, size, how many resource instances when the state says);
 * POST /api/v1/tenants/{t}/state/rollback {"version": N} (admin, audited) makes an old one
 * current again, as a new version. Both are refused (409, naming the holder) while the
 * state is locked: the holder's next write would undo them. A rollback or a DELETE gives
 * the tenant an Event
 * (StateRolledBack, StateDeleted), makes the kept outputs follow the new state and tells the
 * listener (rz_tfstate_on_replaced), so the Machines follow it too. GET
 * /api/v1/tenants/{t}/kubeconfig and /talosconfig (edit, audited) serve the sensitive outputs the
 * last apply left, kept encrypted the same way.
 */
#ifndef RZ_TFSTATE_H
#define RZ_TFSTATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/auth/access.h"
#include "core/store/db.h"
#include "core/base/errors.h"
#include "core/http/http.h"
#include "core/store/store.h"

typedef struct rz_tfstate rz_tfstate_t;

/* key_path: the state key (created with 32 random bytes, 0600, when missing). history:
 * versions kept per tenant (≥ 1). Everything borrowed. */
int rz_tfstate_new(rz_tfstate_t **out, rz_db_t *db, rz_store_t *store, rz_access_t *access,
                   const char *key_path, int history, rz_err_t *err);
void rz_tfstate_free(rz_tfstate_t *ts);

/* Told when a tenant's current state is replaced outside a run (a rollback, an admin's
 * DELETE), so its Machines and status follow at once. state: the new current state
 * (borrowed — valid until the call returns). */
typedef void (*rz_tfstate_replaced_fn)(void *arg, const char *tenant, const json_t *state);

/* Set the one listener (fn NULL: none); arg is borrowed and must outlive ts, or be unset
 * first. Accepts a NULL ts. */
void rz_tfstate_on_replaced(rz_tfstate_t *ts, rz_tfstate_replaced_fn fn, void *arg);

/* Register the routes. */
int rz_tfstate_routes(rz_tfstate_t *ts, rz_http_t *http, rz_err_t *err);

/* The current state of tenant, decrypted (caller owns); RZ_ENOTFOUND when none. */
int rz_tfstate_get(rz_tfstate_t *ts, const char *tenant, json_t **state, rz_err_t *err);

/* Keep state's sensitive outputs (kubeconfig, talosconfig, ...) for the credentials
 * endpoints, encrypted like the state; they replace the ones kept before, so a destroyed
 * state leaves none. run: the run that produced state. */
int rz_tfstate_keep_outputs(rz_tfstate_t *ts, const char *tenant, const char *run,
                            const json_t *state, rz_err_t *err);

/* A kept output, decrypted: *value (NUL-terminated, the caller wipes and frees it) and *len;
 * RZ_ENOTFOUND when there is none. */
int rz_tfstate_output(rz_tfstate_t *ts, const char *tenant, const char *name, char **value,
                      size_t *len, rz_err_t *err);

/* At start, before any run: drop the locks runs held when the daemon stopped (no run is
 * alive to release them), but those of the runs keep(arg, run) is true for (remote runs
 * taken up again; keep NULL: none). Returns how many, or < 0 with err filled. */
int rz_tfstate_release_run_locks(rz_tfstate_t *ts, bool (*keep)(void *arg, const char *run),
                                 void *arg, rz_err_t *err);

/* Drop the lock one run holds, if it holds one (its runner was lost): 1 when one was, 0
 * when none, or an error. */
int rz_tfstate_release_run_lock(rz_tfstate_t *ts, const char *run, rz_err_t *err);

#endif /* RZ_TFSTATE_H */
