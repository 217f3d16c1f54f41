/*
 * core/tfstate/tfstate-int.h - what the files of the state backend share (private to
 * core/tfstate/tfstate.c and core/tfstate/outputs.c): the backend's structure, sealing with
 * the state key, and the replies both give.
 */
#ifndef RZ_TFSTATE_INT_H
#define RZ_TFSTATE_INT_H

#include <stddef.h>

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
/* GET /api/v1/tenants/{t}/kubeconfig and /talosconfig (ctx: the backend). */
void rz__tfstate_h_kubeconfig(rz_req_t *req, void *ctx);
void rz__tfstate_h_talosconfig(rz_req_t *req, void *ctx);

#endif /* RZ_TFSTATE_INT_H */
