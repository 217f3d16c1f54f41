/*
 * core/store/backup.h - backups of the management plane (SPEC §8, docs/backups.md): a
 * consistent copy of the SQLite database (objects, the event log, users and their
 * credential hashes, the audit log, every TF state version and sealed output), taken with
 * SQLite's online backup API on connections of its own, gzip-compressed, with a manifest
 * and a BLAKE2b checksum, written atomically; the state key sealed with a passphrase, or
 * left out; reading one back, checking every byte, and what a restore would change.
 *
 * The file, format 1:
 *   "RZBACKUP 1\n"
 *   the manifest: one JSON object on one line, then "\n" (at most 64 KiB)
 *   the state key: one JSON object on one line, then "\n" (at most 4 KiB):
 *     {"included":false}, or {"included":true,"kdf":"argon2id13","opslimit":N,
 *     "memlimit":N,"salt":B64,"nonce":B64,"sealed":B64} (XChaCha20-Poly1305)
 *   the payload: the database file, one gzip stream (RFC 1952)
 *   "RZEND " payload bytes (20 digits) " " BLAKE2b-256 of everything before, hex "\n"
 *
 * Reading a backup back, and restoring one, is core/store/restore.h's. Every function here
 * blocks on files and touches only its arguments and the files it
 * names, so each may run on a worker thread; none takes an rz_db_t of the caller's.
 */
#ifndef RZ_BACKUP_H
#define RZ_BACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"

/* The newest format written and read: 2, a checksum keyed with the passphrase (written
 * when one is configured); 1, an unkeyed checksum (written without one; still read). */
#define RZ_BACKUP_FORMAT   2
#define RZ_BACKUP_UNKEYED  1
#define RZ_BACKUP_SUFFIX   ".rzbackup"
#define RZ_BACKUP_KEY_SIZE 32 /* the state key: core/tfstate/tfstate.c's */

/* The file's pieces, shared with core/store/restore.c. */
#define RZ__BACKUP_MAGIC_1      "RZBACKUP 1\n"
#define RZ__BACKUP_MAGIC_2      "RZBACKUP 2\n"
#define RZ__BACKUP_KEYED        "blake2b-keyed" /* the key line's "checksum", format 2 */
#define RZ__BACKUP_MAGIC_PREFIX "RZBACKUP "
#define RZ__BACKUP_END_PREFIX   "RZEND "
#define RZ__BACKUP_END_LEN      92 /* "RZEND " + 20 digits + " " + 64 hex digits + "\n" */
#define RZ__BACKUP_HASH_BYTES   32 /* BLAKE2b-256 */
#define RZ__BACKUP_CHUNK        65536

typedef struct rz_backup_opts {
	const char *db_path;         /* the live database */
	const char *key_path;        /* the state key file (data_dir/state.key) */
	const char *dir;             /* where the backup goes; created 0700 when missing */
	const char *name;            /* a DNS-1123 label: the file is <dir>/<name>.rzbackup */
	const char *trigger;         /* "manual" or "schedule", for the manifest */
	const char *passphrase_file; /* seals the state key into the file; NULL or "": left out */
} rz_backup_opts_t;

/* Write one backup (every string borrowed). The file is 0600, complete or absent: written
 * to a hidden temporary, fsynced, renamed, the directory fsynced. *manifest: caller owns;
 * json_decref(). */
int rz_backup_create(const rz_backup_opts_t *o, json_t **manifest, rz_err_t *err);

/* Change the Argon2id cost of the key a passphrase derives (libsodium's moderate limits:
 * 256 MiB, which the manifest records). For the unit tests only, which lower it to
 * libsodium's minimum (restore takes any cost from that minimum to the sensitive limits);
 * the daemon and `rezuscloud backup` never call it. Call before any backup: not
 * thread-safe. */
void rz_backup_set_kdf_cost(unsigned long long opslimit, size_t memlimit);

/* The passphrase: the first line of path, 8 to 1024 bytes. buf (size ≥ 1026) holds it
 * NUL-terminated; the caller wipes it (sodium_memzero). */
int rz_backup_passphrase(const char *path, char *buf, size_t size, rz_err_t *err);

/* The state key file at path into key: 0, RZ_ENOTFOUND when there is none, or an error. */
int rz_backup_load_key(const char *path, unsigned char key[RZ_BACKUP_KEY_SIZE], rz_err_t *err);

/* The backups in dir, newest first (by the manifest's createdAt, then name): an array of
 * {"name", "size", "manifest"} or, for a file whose head cannot be read, {"name", "size",
 * "error"}. At most max entries. A missing dir is an empty list. *list: caller owns. */
int rz_backup_list(const char *dir, size_t max, json_t **list, rz_err_t *err);

/* Delete the backup called name (a DNS-1123 label) from dir; RZ_ENOTFOUND when there is
 * none, REZUS_EINVALID for a name that is not a label. */
int rz_backup_remove(const char *dir, const char *name, rz_err_t *err);

/* Keep the newest keep backups in dir, delete the older ones; files whose head cannot be
 * read are left alone. Returns how many went, or < 0. */
int rz_backup_prune(const char *dir, int keep, rz_err_t *err);

/* Remove the temporaries a backup interrupted by a crash left in dir. */
void rz_backup_clean(const char *dir);

/* The fingerprint the manifest gives the state key: 32 hex digits of a keyed BLAKE2b of
 * it (a name to match keys by; it tells nothing of the key). out: at least 33 bytes. */
void rz_backup_key_fingerprint(const unsigned char key[RZ_BACKUP_KEY_SIZE], char *out);

/* Helpers shared with core/store/restore.c. */
int rz__backup_fsync_dir(const char *path, rz_err_t *err);       /* the directory holding path */
int rz__backup_write_all(int fd, const void *p, size_t n);       /* 0 or -errno */
bool rz__backup_valid_name(const char *name);                    /* a DNS-1123 label */
void rz__backup_key_ad(const char *name, char *ad, size_t size); /* the sealed key's AD */
/* The checksum's key of a format 2 file: a keyed BLAKE2b of a fixed context under the key
 * the passphrase derives (Argon2id, the key line's salt and limits), which also seals the
 * state key. Nobody without the passphrase can write a file that passes its checksum. */
void rz__backup_mac_key(const unsigned char kek[32], unsigned char mac[RZ__BACKUP_HASH_BYTES]);

#endif /* RZ_BACKUP_H */
