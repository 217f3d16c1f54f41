/*
 * core/store/db-int.h - what the files of the SQLite store share (private to core/store/db.c
 * and core/store/durable.c): the connection's structure, its statement cache entries, the
 * waiters for durability, and the two checks every entry point makes.
 */
#ifndef RZ_DB_INT_H
#define RZ_DB_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "core/base/errors.h"
#include "core/store/db.h"

#define DB_MAGIC       0x525a4442u /* "RZDB" */
#define BUSY_TIMEOUT   "5000"      /* ms */
#define WHY_MAX        200         /* a SQLite reason, before our prefix */
#define SAVEPOINT_NAME "rz_tx"
#define BUSY_STEP_US   100     /* the loop's busy handler retries this often ... */
#define BUSY_MAX_US    5000000 /* ... for this long in all (the busy timeout) */
#define CKPT_NICE      10      /* the checkpoint thread yields the core to the loop */

struct rz_stmt {
	struct rz_stmt *next;
	struct rz_db *db;   /* borrowed: the connection it was prepared on */
	sqlite3_stmt *stmt; /* owned; finalized by rz_db_close() */
	char *sql;          /* owned; the cache key */
};

/* A callback of rz_db_after_durable, waiting for commit number seq to be synced. */
struct waiter {
	struct waiter *next;
	uint64_t seq;
	rz_db_durable_fn fn;
	void *arg;
};

struct rz_db {
	unsigned int magic;
	sqlite3 *conn;
	char *path;
	const rz_migration_t *migrations; /* borrowed */
	size_t count;
	int depth;             /* rz_db_tx nesting; 0 outside a transaction */
	struct rz_stmt *cache; /* every statement ever prepared, newest first */
	int storage_code;      /* the last write's storage failure (-ENOSPC, -EROFS, -EIO), or 0 */
	char storage_why[WHY_MAX];

	/* rz_db_start: the checkpoint and sync threads (db.h) */
	bool ckpt_running, sync_running; /* set and cleared on the loop thread */
	struct event *wake;              /* the loop's end of pipe */
	int pipe[2];                     /* the sync thread writes a byte after each sync */
	int wal_fd;                      /* the WAL, for the sync thread's fdatasync */
	sqlite3 *ckpt_conn;              /* the checkpoint thread's connection */
	pthread_t ckpt_thread, sync_thread;
	int (*sync_fn)(int fd, void *arg);
	void *sync_arg;
	/* loop thread only */
	uint64_t commit_seq; /* commits so far (the WAL hook counts them) */
	uint64_t err_seen;   /* the last failed sync handled */
	uint64_t fail_upto;  /* commits up to this one may be lost: a sync failed after them */
	int fail_code;       /* and how */
	struct waiter *wait_head, *wait_tail;
	/* the group commit of one loop turn's grouped writes (rz_db_tx_grouped) */
	struct event *group_ev; /* commits the open group, after the turn's callbacks */
	bool group_open;        /* BEGIN IMMEDIATE done, COMMIT owed */
	size_t group_writes;    /* writes in the open group */
	struct waiter *gwait_head, *gwait_tail; /* rz_db_after_durable while it is open */
	void (*group_fn)(void *arg, int status);
	void *group_arg;
	/* under lock */
	pthread_mutex_t lock;
	pthread_cond_t ckpt_cond, sync_cond;
	bool stopping, ckpt_wanted;
	int64_t frames, ckpt_mark; /* pages in the WAL; and when the last checkpoint began */
	uint64_t want_seq;         /* the newest commit, to be synced */
	uint64_t sync_seq;         /* the newest commit a sync covered, whatever its outcome */
	uint64_t done_seq;         /* the newest commit a successful sync covered */
	uint64_t err_seq;          /* the newest commit a failed sync covered */
	int err_code;              /* its error */
	rz_db_stats_t stats;
};

/* A db this module opened and has not closed. */
static inline int valid(const rz_db_t *db)
{
	return db != NULL && db->magic == DB_MAGIC;
}

/* Our error code for a SQLite result code. */
static inline int code_of(int src)
{
	return (src & 0xff) == SQLITE_NOMEM ? -ENOMEM : RZ_EDB;
}

#endif /* RZ_DB_INT_H */
