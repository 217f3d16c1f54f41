/*
 * core/store/restore.h - reading a backup back (core/store/backup.h has the file's layout)
 * and restoring it: the head alone (cheap: for lists), every byte with its checksum and the
 * database unpacked, the state key unsealed with the passphrase, what a restore would
 * change against a data dir's database, and the restore of a database and a state key.
 *
 * Every function blocks on files and touches only its arguments and the files it names.
 * None takes the daemon's rz_db_t: a restore is an offline step (core/offline.c), run while
 * no daemon holds the data dir.
 */
#ifndef RZ_RESTORE_H
#define RZ_RESTORE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/store/backup.h"

/* A backup's manifest from its first lines and its end marker, without reading the
 * payload: the file's shape, not its checksum. *manifest: caller owns. *size (may be NULL):
 * the file's size. RZ_ECORRUPT for a file that is not whole, RZ_EPARSE for one that is no
 * backup or of a newer format. */
int rz_restore_inspect(const char *path, json_t **manifest, int64_t *size, rz_err_t *err);

/* What reading a whole backup gave. */
typedef struct rz_restore_contents {
	json_t *manifest;                      /* caller owns; json_decref() */
	bool key_included;                     /* the file holds the state key, sealed */
	bool key_unsealed;                     /* ... and the passphrase unsealed it into key */
	unsigned char key[RZ_BACKUP_KEY_SIZE]; /* the caller wipes it (sodium_memzero) */
} rz_restore_contents_t;

/* rz_restore_read's flags: accept a file whose checksum is not keyed (format 1) although
 * a passphrase is given. */
#define RZ_RESTORE_UNKEYED 1u

/* Read every byte of the backup at path: the header, the end marker, the key line's
 * derivation parameters, the checksum, the gzip stream to its end and the database's size,
 * then the schema against this binary's (RZ_ECORRUPT for a damaged or truncated file,
 * RZ_ESCHEMA for a newer schema, RZ_EPARSE for a file that is not a backup or of a newer
 * format). The checksum of a file made with a passphrase (format 2) is keyed with it: such
 * a file needs passphrase (RZ_EAUTH without it, or with a wrong one); with passphrase given,
 * a file whose checksum is not keyed (format 1) is refused (RZ_EAUTH: anyone could have
 * written it) unless flags has RZ_RESTORE_UNKEYED. db_out (may be NULL): the database is
 * written there (created 0600; removed again on any error). passphrase (may be NULL) also
 * unseals the state key when the file holds it. out is zeroed first; on error
 * out->manifest is NULL. */
int rz_restore_read(const char *path, const char *db_out, const char *passphrase, unsigned flags,
                    rz_restore_contents_t *out, rz_err_t *err);

/* What restoring the database at backup_db over the one at current_db (may not exist)
 * changes: {"objects": {Kind: {"added","removed","changed","unchanged"}}, "stateVersions":
 * {"current","backup","added","removed","changed","unchanged"}, "users": {"current",
 * "backup","added": [names],"removed": [names]}, "revision": {"current","backup"}}.
 * "added" is what the restore brings, "removed" what it takes away. *report: caller owns. */
int rz_restore_diff(const char *current_db, const char *backup_db, json_t **report, rz_err_t *err);

/* Check the unpacked database at path: SQLite's quick_check, and a schema this binary
 * knows (RZ_ESCHEMA otherwise). */
int rz_restore_check_db(const char *path, rz_err_t *err);

/* Replace the database at target (which may not exist) with the one at from, through
 * SQLite's backup API (one transaction: a crash leaves the old or the new). When target
 * exists and keep is not NULL, the database as it was is first copied to keep (0600). */
int rz_restore_db(const char *from, const char *target, const char *keep, rz_err_t *err);

/* Write key to path atomically (temporary, fsync, rename, fsync of the directory), 0600. */
int rz_restore_save_key(const char *path, const unsigned char key[RZ_BACKUP_KEY_SIZE],
                        rz_err_t *err);

#endif /* RZ_RESTORE_H */
