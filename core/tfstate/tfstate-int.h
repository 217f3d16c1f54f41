/*
 * core/tfstate/tfstate-int.h - what the files of the state backend share (private to
 * core/tfstate/tfstate.c, history.c and outputs.c): the backend's structure, sealing with
 * the state key, and the replies both give.
 */
#ifndef RZ_TFSTATE_INT_H
#define RZ_TFSTATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#include "core/tfstate/tfstate.h"

#define NONCE crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG   crypto_aead_xchacha20poly1305_ietf_ABYTES

struct rz_tfstate {
	rz_db_t *db;
	rz_store_t *store;
	rz_access_t *access;
	int history;
	rz_tfstate_replaced_fn replaced;
	void *replaced_arg;
	unsigned char key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
};

/* Additional data binding a kept output's ciphertext to its tenant and name. */
size_t rz__tfstate_ad_output(char *ad, size_t size, const char *tenant, const char *name);
/* nonce || ciphertext || tag of plain, bound to ad; the caller frees it. */
unsigned char *rz__tfstate_seal_ad(rz_tfstate_t *ts, const char *ad, size_t adlen,
                                   const void *plain, size_t len, size_t *out_len);
/* The plain text of a sealed blob (NUL-terminated, the caller frees it); NULL when it does
 * not decrypt (another key, another ad, or damaged). */
unsigned char *rz__tfstate_open_ad(rz_tfstate_t *ts, const char *ad, size_t adlen,
                                   const unsigned char *blob, size_t len, size_t *out_len);
/* Reply 500 (or the storage Status of a full or read-only disk) for err. */
void rz__tfstate_internal(rz_req_t *req, const rz_err_t *err);
/* The tenant must exist; replies 404 and returns false when it does not. */
bool rz__tfstate_tenant_exists(rz_tfstate_t *ts, rz_req_t *req, const char *tenant);
#define RZ__TFSTATE_LOCK_ID_MAX 256 /* bytes of a lock's ID (tofu's are UUIDs) */

/* A stored version's plain text (NUL-terminated, the caller frees it); NULL when it does not
 * decrypt. */
unsigned char *rz__tfstate_open_version(rz_tfstate_t *ts, const char *tenant, int64_t version,
                                        const unsigned char *blob, size_t len, size_t *out_len);
/* The lock held on tenant: its ID (id, size bytes) and info (caller frees *info, when info is
 * not NULL); 1 held, 0 free, < 0 error. */
int rz__tfstate_lock_of(rz_tfstate_t *ts, const char *tenant, char *id, size_t size, char **info,
                        rz_err_t *err);
/* Whether someone holds tenant's lock, replying 409 when so (the holder's lock info, or with
 * as_status a Status naming them); a lock that cannot be read is a 500 (and true). */
bool rz__tfstate_locked(rz_tfstate_t *ts, rz_req_t *req, const char *tenant, bool as_status);
/* Who is asking, for the history and Events: the user, "" when anonymous. Borrowed. */
const char *rz__tfstate_who(const rz_req_t *req);
/* Store doc (body parsed) as tenant's current state on behalf of req, with an Event (type,
 * reason, message) and the listener told. */
int rz__tfstate_replace(rz_tfstate_t *ts, rz_req_t *req, const char *tenant, const void *body,
                        size_t len, const json_t *doc, const char *type, const char *reason,
                        const char *message, rz_err_t *err);
/* The versions' routes (core/tfstate/history.c): GET /api/v1/tenants/{t}/state, GET
 * …/state/{version}, POST …/state/rollback (ctx: the backend). */
void rz__tfstate_h_history(rz_req_t *req, void *ctx);
void rz__tfstate_h_version(rz_req_t *req, void *ctx);
void rz__tfstate_h_rollback(rz_req_t *req, void *ctx);
/* GET /api/v1/tenants/{t}/kubeconfig and /talosconfig (ctx: the backend). */
void rz__tfstate_h_kubeconfig(rz_req_t *req, void *ctx);
void rz__tfstate_h_talosconfig(rz_req_t *req, void *ctx);

#endif /* RZ_TFSTATE_INT_H */
