/*
 * core/api/backups.h - the Backup resource (SPEC §4, §8; docs/backups.md): POST
 * /api/v1/backups writes one and answers 201 with it once it is written; GET lists them or
 * reads one (its manifest); DELETE removes one; all admin, all audited. backup.interval
 * writes one on a schedule when backup.dir is set; backup.keep are kept, newest first.
 * The objects are the files in the backup directory (backup.dir, or data_dir/backups for
 * backups on demand when it is empty), not rows of the store.
 *
 * The snapshot, its compression and the sealing of the state key run on the worker pool
 * (core/store/backup.c, on connections of their own); the loop only answers. One backup at
 * a time: another POST meanwhile is 409.
 */
#ifndef RZ_BACKUPS_H
#define RZ_BACKUPS_H

#include <stdint.h>

#include "core/auth/access.h"
#include "core/base/errors.h"
#include "core/base/workers.h"
#include "core/http/http.h"

struct event_base;

typedef struct rz_backups_opts {
	const char *db_path;         /* the live database */
	const char *key_path;        /* the state key */
	const char *data_dir;        /* for data_dir/backups */
	const char *dir;             /* backup.dir; "" or NULL: none scheduled */
	int64_t interval_ms;         /* backup.interval */
	int keep;                    /* backup.keep */
	const char *passphrase_file; /* backup.passphrase_file; "" or NULL: no state key */
	/* backup.target: each backup written is also handed to offload (on the worker
	 * thread, after it is written; blocking), which seals it and stores it off the host;
	 * NULL: none. A failure is logged: the backup itself stands. */
	int (*offload)(void *arg, const char *path, const char *name, int keep, rz_err_t *err);
	void *offload_arg;
} rz_backups_opts_t;

typedef struct rz_backups rz_backups_t;

/* Everything borrowed, and must outlive the result; the option strings are copied. Checks
 * that the passphrase file reads (REZUS_ECONFIG otherwise), removes what a crash left
 * in the directory, and arms the schedule when backup.dir is set. Caller owns *out;
 * rz_backups_free() after the worker pool is freed (a job's done() uses it). */
int rz_backups_new(rz_backups_t **out, struct event_base *base, rz_workers_t *workers,
                   rz_access_t *access, const rz_backups_opts_t *o, rz_err_t *err);

/* Register the routes on http. */
int rz_backups_routes(rz_backups_t *b, rz_http_t *http, rz_err_t *err);

/* The directory backups go to. Borrowed. */
const char *rz_backups_dir(const rz_backups_t *b);

void rz_backups_free(rz_backups_t *b);

#endif /* RZ_BACKUPS_H */
