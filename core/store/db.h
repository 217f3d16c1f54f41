/*
 * core/store/db.h - the SQLite store: connection, pragmas, migrations, transactions,
 * prepared statements. Only core/store/db.c sees sqlite3 types.
 *
 * The connection is owned by the event-loop thread; every statement is prepared (and cached
 * by its SQL text), never built by string concatenation.
 */
#ifndef RZ_DB_H
#define RZ_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/errors.h"

struct event_base;

typedef struct rz_db rz_db_t;
typedef struct rz_stmt rz_stmt_t;

/* One schema step. Applied in order inside its own transaction, recorded in
 * schema_migrations(version, name, applied_at). */
typedef struct rz_migration {
	int version;      /* 1, 2, 3, ... without gaps */
	const char *name; /* short description, e.g. "meta table" */
	const char *sql;  /* one or more statements */
	/* It rebuilds a table others refer to: run with foreign keys off, every reference
	 * checked (PRAGMA foreign_key_check) before its commit. */
	bool without_foreign_keys;
} rz_migration_t;

/* The product's migrations (core/store/schema.c). Borrowed — static. */
const rz_migration_t *rz_db_migrations(size_t *count);

/* Open (creating when absent, mode 0600 whatever the umask; its -wal and -shm files get the
 * same mode) the database at path: WAL, busy_timeout 5000 ms,
 * foreign_keys ON, then apply every pending product migration. A database whose
 * recorded version is newer than the newest known one is refused with RZ_ESCHEMA and a
 * message naming both versions. Caller owns *out; release with rz_db_close(). */
int rz_db_open(rz_db_t **out, const char *path, rz_err_t *err);

/* As rz_db_open with an explicit migration list (borrowed; must outlive the db), applying
 * versions up to max_version (all when max_version < 0). For tests and tools. */
int rz_db_open_with(rz_db_t **out, const char *path, const rz_migration_t *migrations, size_t count,
                    int max_version, rz_err_t *err);

/* Open an existing database at path read-only: no pragmas but the busy timeout, no
 * migrations (rz_db_schema_version says what it holds). For reading a backup's copy and a
 * data dir the daemon does not hold. Caller owns *out; release with rz_db_close(). */
int rz_db_open_readonly(rz_db_t **out, const char *path, rz_err_t *err);

/* Copy the whole database at src into dst (created, or replaced page by page) with
 * SQLite's online backup API, on connections of its own: the copy is src as one read
 * transaction saw it, while others go on writing to src (WAL). dst ends in rollback-journal
 * mode, one self-contained file. Touches no rz_db_t, so a worker thread may call it. */
int rz_db_copy(const char *src, const char *dst, rz_err_t *err);

/* Finalize cached statements and close. Accepts NULL. */
void rz_db_close(rz_db_t *db);

/* Highest applied migration version (0 for an empty database). */
int rz_db_schema_version(rz_db_t *db);

/* Run fn(db, arg) inside BEGIN IMMEDIATE ... COMMIT; ROLLBACK when fn returns non-zero or
 * the commit fails. Nested calls join the outer transaction (a SAVEPOINT). Returns fn's
 * result or a negative error. */
int rz_db_tx(rz_db_t *db, int (*fn)(rz_db_t *db, void *arg, rz_err_t *err), void *arg,
             rz_err_t *err);

/* A cached prepared statement for sql (compared by content). Borrowed — valid until
 * rz_stmt_done() or rz_db_close(); it is reset and unbound by rz_stmt_done(). One user at
 * a time per SQL text. NULL on error with err filled. */
rz_stmt_t *rz_db_stmt(rz_db_t *db, const char *sql, rz_err_t *err);

/* Binds: idx is 1-based. Text and blobs are copied by SQLite. 0 or RZ_EDB. */
int rz_stmt_bind_text(rz_stmt_t *st, int idx, const char *s);
int rz_stmt_bind_int64(rz_stmt_t *st, int idx, int64_t v);
int rz_stmt_bind_blob(rz_stmt_t *st, int idx, const void *p, size_t len);
int rz_stmt_bind_null(rz_stmt_t *st, int idx);

/* Step: 1 when a row is ready, 0 when done, RZ_EDB (err filled) on error. */
int rz_stmt_step(rz_stmt_t *st, rz_err_t *err);

/* Column accessors, 0-based, for the current row. Text/blob pointers are borrowed — valid
 * until the next step or rz_stmt_done(). rz_stmt_text returns NULL for SQL NULL. */
const char *rz_stmt_text(rz_stmt_t *st, int col);
int64_t rz_stmt_int64(rz_stmt_t *st, int col);
const void *rz_stmt_blob(rz_stmt_t *st, int col, size_t *len);
int rz_stmt_is_null(rz_stmt_t *st, int col);

/* Reset and clear bindings; the statement goes back to the cache. Accepts NULL. */
void rz_stmt_done(rz_stmt_t *st);

/* Run a statement that returns no rows (e.g. an INSERT) with no parameters. */
int rz_db_exec(rz_db_t *db, const char *sql, rz_err_t *err);

/* Rows changed by the last INSERT/UPDATE/DELETE; rowid of the last INSERT. */
int64_t rz_db_changes(rz_db_t *db);
int64_t rz_db_last_rowid(rz_db_t *db);

/* True when the database is open and its schema is current (for /readyz). */
int rz_db_ready(rz_db_t *db);

/* The disk under the database: 0 while writes work, else the failure of the last write
 * (-ENOSPC: the disk or quota is full; -EROFS: read-only; -EIO: another I/O error), with
 * SQLite's reason in why (may be NULL). The failure is remembered until a write commits
 * again (a request's, or rz_db_probe's). Such failures also come back from rz_db_tx,
 * rz_stmt_step and rz_db_exec as those codes instead of RZ_EDB. */
int rz_db_storage_error(rz_db_t *db, char *why, size_t len);

/* One small write transaction (the meta row 'storage_probe'), to find out whether writes
 * work again after rz_db_storage_error said they did not. 0 or the error. */
int rz_db_probe(rz_db_t *db, rz_err_t *err);

/* One integer from the first row of sql on db: 0 with *out (0 when there is no row), or
 * the error. */
int rz_db_query_int(rz_db_t *db, const char *sql, int64_t *out, rz_err_t *err);

/* ---- the daemon's database: checkpoints off the loop, and durability (store.durability) ----
 *
 * rz_db_open gives a connection for tools and tests: synchronous = FULL, SQLite's own
 * auto-checkpoint. rz_db_start turns it into the daemon's: commits no longer sync on the
 * loop thread (synchronous = NORMAL, auto-checkpoint off) and two threads take the disk
 * work. The checkpoint thread, with a connection of its own, copies the WAL into the
 * database (PASSIVE, never blocking a write) once RZ_DB_CHECKPOINT_FRAMES pages have been
 * committed since the last one; when the WAL holds more than RZ_DB_WAL_MAX_FRAMES pages it
 * also restarts it (RESTART: it waits for the write in progress and blocks writes while it
 * copies the few pages left, so the WAL cannot grow without bound). With
 * RZ_DURABILITY_FULL a sync thread fdatasync()s the WAL after commits: every commit made
 * before one sync began is durable when it returns, so the commits that arrive while a sync
 * runs share the next one (group commit). */
#define RZ_DB_CHECKPOINT_FRAMES 1000  /* pages (4 KiB): SQLite's own auto-checkpoint point */
#define RZ_DB_WAL_MAX_FRAMES    16384 /* pages: 64 MiB of WAL at most before a RESTART */

typedef enum rz_durability {
	RZ_DURABILITY_NORMAL, /* a write is acknowledged at its commit, before its fsync */
	RZ_DURABILITY_FULL,   /* a write is acknowledged once its commit is on the disk */
} rz_durability_t;

/* "normal" or "full" into *out: 0, or REZUS_EINVALID. */
int rz_durability_parse(const char *s, rz_durability_t *out);

/* Start the checkpoint thread (and, for RZ_DURABILITY_FULL, the sync thread) for db, whose
 * completions are handled on base's loop thread. Once per db; db must be on a file. */
int rz_db_start(rz_db_t *db, struct event_base *base, rz_durability_t durability, rz_err_t *err);

/* fn(arg, status) once every commit made so far is durable: status 0, or a negative errno
 * when syncing failed (the commits may be lost: the write must not be acknowledged). Runs
 * at once (before this returns) when nothing waits for a sync: always with
 * RZ_DURABILITY_NORMAL or before rz_db_start; else later, on the loop thread. Loop thread
 * only. */
typedef void (*rz_db_durable_fn)(void *arg, int status);
void rz_db_after_durable(rz_db_t *db, rz_db_durable_fn fn, void *arg);

/* Stop the threads: a last sync, the callbacks still waiting run (from here), the
 * checkpoint connection closes. Before freeing what those callbacks use (the HTTP server).
 * rz_db_close calls it too. Accepts NULL. */
void rz_db_stop(rz_db_t *db);

/* For tests, before rz_db_start: the sync thread calls fn(fd of the WAL, arg) instead of
 * fdatasync(fd); fn returns 0 or a negative errno. */
void rz_db_set_sync_fn(rz_db_t *db, int (*fn)(int fd, void *arg), void *arg);

/* ---- group commit: the writes of one loop turn share one transaction ----
 *
 * After rz_db_start, rz_db_tx_grouped runs fn as a savepoint inside the loop turn's group
 * transaction (BEGIN IMMEDIATE at the turn's first grouped write) and returns once fn's
 * work is in it, before it is committed. The group commits once the callbacks the loop had
 * ready when it opened have run (an event made active at its opening), before any other transaction
 * (rz_db_tx flushes it first: a write that is not grouped is committed on its own when rz_db_tx
 * returns), and at rz_db_stop. Its writes learn their outcome through rz_db_after_durable:
 * callbacks registered while the group is open run after its commit (and, with RZ_DURABILITY_FULL,
 * its sync), with RZ_DB_UNCOMMITTED's status when the commit failed and the group's writes were
 * lost. A reader on this connection sees a grouped write at once; other connections (the checkpoint
 * thread, backups) once it is committed. Before rz_db_start, or inside another transaction,
 * rz_db_tx_grouped is rz_db_tx. Loop thread only. */
#define RZ_DB_GROUP_MAX 256 /* writes in one group at most */

/* The status a failed group commit gives its waiters: -(RZ_DB_UNCOMMITTED) plus the code
 * the write would have failed with on its own (-ENOSPC, -EROFS, -EIO), so that a writer
 * can say "not stored" rather than "may be lost". rz_db_uncommitted gives that code, or 0
 * for any other status (0, or a failed sync's negated errno). */
#define RZ_DB_UNCOMMITTED 0x10000
static inline int rz_db_uncommitted(int status)
{
	return status <= -RZ_DB_UNCOMMITTED ? status + RZ_DB_UNCOMMITTED : 0;
}

int rz_db_tx_grouped(rz_db_t *db, int (*fn)(rz_db_t *db, void *arg, rz_err_t *err), void *arg,
                     rz_err_t *err);
/* True when rz_db_tx_grouped would group: started, no transaction of rz_db_tx open, and the
 * open group holds fewer than RZ_DB_GROUP_MAX writes (else the next write is on its own,
 * after the group's commit). */
bool rz_db_can_group(const rz_db_t *db);
/* Commit the open group now (nothing when none is open): 0, or the negated errno its
 * writes got. */
int rz_db_flush(rz_db_t *db);
/* fn(arg, status) after each group's commit, before its rz_db_after_durable callbacks:
 * status 0, or the negated errno of a failed commit (its writes are gone). One; NULL
 * removes it. */
void rz_db_set_group_fn(rz_db_t *db, void (*fn)(void *arg, int status), void *arg);

/* What the threads did, for /metrics. Any thread. */
typedef struct rz_db_stats {
	uint64_t checkpoints;      /* PASSIVE and RESTART checkpoints run */
	uint64_t restarts;         /* of those, RESTARTs (the WAL past RZ_DB_WAL_MAX_FRAMES) */
	double checkpoint_seconds; /* their total duration */
	uint64_t syncs;            /* WAL syncs of the group commit */
	uint64_t synced_commits;   /* commits those syncs made durable */
	int64_t wal_frames;        /* pages in the WAL after the last commit */
} rz_db_stats_t;
void rz_db_stats(rz_db_t *db, rz_db_stats_t *out);

#endif /* RZ_DB_H */
