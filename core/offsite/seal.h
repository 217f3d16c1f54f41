/*
 * core/offsite/seal.h - files sealed before they leave the host (docs/backups.md,
 * "Encryption"): libsodium's crypto_secretstream_xchacha20poly1305, chunk by chunk, so a
 * snapshot of hundreds of MB never sits in memory whole; keys kept in a file of their own,
 * rotatable.
 *
 * The key file (0600; created with one fresh key when missing): "#" comments, then one line
 * per key, oldest first: "<id> <created> <key>", the id 32 hex digits (a keyed BLAKE2b of
 * the key, which tells nothing of it), created an RFC 3339 time, the key 32 bytes in
 * base64. The last key seals; every key opens. At most RZ_SEAL_KEYS_MAX keys.
 *
 * A sealed file:
 *   "RZSEAL" | version (1 byte, 1) | flags (1 byte, 0) | key id (16 bytes)
 *     | plain text size (8 bytes, big-endian) | secretstream header (24 bytes)
 *   then the plain text in chunks of RZ_SEAL_CHUNK bytes (the last shorter, possibly
 *   empty, tagged final), each one secretstream message (RZ_SEAL_CHUNK + 17 bytes) with the
 *   first 32 bytes of the header as additional data: the header cannot be changed unseen.
 *
 * Every function blocks on files: run it on a worker thread. Keys are held in memory
 * libsodium guards (sodium_malloc) and wiped when freed; no key reaches a log, a message or
 * a file other than the key file.
 */
#ifndef RZ_SEAL_H
#define RZ_SEAL_H

#include <stdint.h>

#include "core/base/errors.h"

#define RZ_SEAL_CHUNK    65536
#define RZ_SEAL_KEYS_MAX 64
#define RZ_SEAL_ID_HEX   33 /* a key id in hex, with its NUL */

typedef struct rz_seal_keys rz_seal_keys_t;

/* The keys in the file at path (borrowed), which is created (0600, one fresh key,
 * atomically: two starting processes end up with the same key) when missing. Refused:
 * a file readable or writable by group or others, not a regular file, or damaged (a line
 * that does not parse, an id that does not match its key). *out: caller owns the result;
 * release with rz_seal_keys_free(). */
int rz_seal_keys_load(rz_seal_keys_t **out, const char *path, rz_err_t *err);

/* Release k (NULL is fine), wiping the keys. */
void rz_seal_keys_free(rz_seal_keys_t *k);

/* The id of the key that seals (the newest) as hex into id. */
void rz_seal_keys_newest_id(const rz_seal_keys_t *k, char id[RZ_SEAL_ID_HEX]);

/* Add a fresh key to the file at path (borrowed; created when missing), which then seals;
 * the older ones stay to open what they sealed. The file is rewritten atomically (a
 * temporary, fsynced, renamed, 0600) under an exclusive lock, so two rotations at once add
 * two keys and lose none. Keys already loaded do not change: load again. */
int rz_seal_keys_rotate(const char *path, rz_err_t *err);

/* Seal the file in into out (both borrowed) with the newest key of k. out is written to a
 * temporary beside it (0600), fsynced and renamed once whole. *size and sha256_hex: the
 * plain text's size and SHA-256 (64 hex digits and a NUL), for the EtcdBackup's status. */
int rz_seal_file(const rz_seal_keys_t *k, const char *in, const char *out, uint64_t *size,
                 char sha256_hex[65], rz_err_t *err);

/* Open the sealed file in into out (both borrowed) with the key its header names. out is
 * written to a temporary and renamed only once every chunk authenticated, so a refused file
 * leaves nothing at out. *size and sha256_hex as rz_seal_file's, to compare with what was
 * recorded. Errors name the fault: RZ_EPARSE, not a sealed file (foreign); RZ_ENOTFOUND,
 * sealed with a key the key file does not hold (its id given); RZ_ECORRUPT, truncated
 * (shorter than its header says) or tampered (a chunk that does not authenticate, bytes
 * after the end); REZUS_EINVALID, a newer format than this build reads. */
int rz_unseal_file(const rz_seal_keys_t *k, const char *in, const char *out, uint64_t *size,
                   char sha256_hex[65], rz_err_t *err);

#endif /* RZ_SEAL_H */
