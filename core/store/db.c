/*
 * core/store/db.c - the SQLite store: connection, pragmas, migrations, transactions, the
 * group commit and the prepared-statement cache. With durable.c (the WAL's syncs and
 * checkpoints) and their private db-int.h, the only files that include <sqlite3.h>.
 *
 * sqlite3_exec() runs only the fixed pragmas and the migration scripts compiled into the
 * binary; everything else, and everything with parameters, is a cached prepared statement.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "core/store/db.h"
#include "core/base/errors.h"
#include "core/base/log.h"
#include "core/store/db-int.h"

/* Connection settings, applied in order; expect (when set) is what the pragma must report. */
static const struct {
	const char *sql;
	const char *expect;
} pragmas[] = {
	{ "PRAGMA busy_timeout = " BUSY_TIMEOUT, BUSY_TIMEOUT },
	{ "PRAGMA journal_mode = WAL", "wal" },
	/* FULL: a commit is on the disk before the write is acknowledged. NORMAL syncs the WAL
	 * only at checkpoints, which survives kill -9 but not a disk error or a power loss:
	 * a file system forced read-only dropped every acknowledged write since (diskfault.sh). */
	{ "PRAGMA synchronous = FULL", NULL },
	{ "PRAGMA foreign_keys = ON", NULL },
	{ "PRAGMA foreign_keys", "1" },
};

static const char sql_bootstrap[] = "CREATE TABLE IF NOT EXISTS schema_migrations ("
                                    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                                    "applied_at TEXT NOT NULL) STRICT";
static const char sql_version[] = "SELECT coalesce(max(version), 0) FROM schema_migrations";
static const char sql_record[] = "INSERT INTO schema_migrations (version, name, applied_at) "
                                 "VALUES (?1, ?2, ?3)";

/* A failure of the disk under the database, as a negated errno: -ENOSPC for a full disk
 * (or quota), -EROFS for a read-only one, -EIO for other I/O errors; 0 for anything else. */
static int storage_code_of(sqlite3 *conn, int src)
{
	int e = conn != NULL ? sqlite3_system_errno(conn) : 0;

	switch (src & 0xff) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
		if (e == ENOSPC || e == EDQUOT) {
			return -ENOSPC;
		}
		return e == EROFS ? -EROFS : -EIO;
	default:
		return 0;
	}
}

/* Our code for src on db: a storage failure is remembered (rz_db_storage_error) and returned
 * as its errno, so that callers can tell a full or read-only disk from a bug. */
static int note(rz_db_t *db, int src)
{
	int code = storage_code_of(db->conn, src);

	if (code == 0) {
		return code_of(src);
	}
	if (db->storage_code == 0) {
		rz_log_err("db", "writing '%s' failed: %s (%s)", db->path, sqlite3_errmsg(db->conn),
		           strerror(-code));
	}
	db->storage_code = code;
	snprintf(db->storage_why, sizeof(db->storage_why), "%s (%s)", sqlite3_errmsg(db->conn),
	         strerror(-code));
	return code;
}

/* A write reached the disk: whatever failed before works again. */
static void cleared(rz_db_t *db)
{
	if (db->storage_code != 0) {
		rz_log(RZ_LOG_NOTICE, "db", "writing '%s' works again", db->path);
	}
	db->storage_code = 0;
	db->storage_why[0] = '\0';
}

static int only_space(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
		s++;
	}
	return *s == '\0';
}

/* Prepare sql as a persistent statement. Returns a SQLite code; why holds the reason. */
static int prepare(rz_db_t *db, const char *sql, sqlite3_stmt **out, char *why)
{
	const char *tail = NULL;
	int src;

	*out = NULL;
	src = sqlite3_prepare_v3(db->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, out, &tail);
	if (src != SQLITE_OK) {
		snprintf(why, WHY_MAX, "%s", sqlite3_errmsg(db->conn));
		return src;
	}
	if (*out == NULL || (tail != NULL && !only_space(tail))) {
		snprintf(why, WHY_MAX, "%s",
		         *out == NULL ? "empty statement" : "more than one statement");
		sqlite3_finalize(*out);
		*out = NULL;
		return SQLITE_MISUSE;
	}
	return SQLITE_OK;
}

/* Find or prepare the cached statement for sql. Returns a SQLite code; why holds the reason. */
static int cache_get(rz_db_t *db, const char *sql, rz_stmt_t **out, char *why)
{
	rz_stmt_t *st;
	int src;

	for (st = db->cache; st != NULL; st = st->next) {
		/* one being stepped (a caller reading rows, whose callback runs the same
		 * query) is not handed out again: it gets a statement of its own, kept too */
		if (strcmp(st->sql, sql) == 0 && !sqlite3_stmt_busy(st->stmt)) {
			*out = st;
			return SQLITE_OK;
		}
	}
	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (st == NULL || (st->sql = strdup(sql)) == NULL) {
		free(st);
		snprintf(why, WHY_MAX, "out of memory");
		return SQLITE_NOMEM;
	}
	src = prepare(db, sql, &st->stmt, why);
	if (src != SQLITE_OK) {
		free(st->sql);
		free(st);
		return src;
	}
	st->db = db;
	st->next = db->cache;
	db->cache = st;
	*out = st;
	return SQLITE_OK;
}

/* Run a cached statement without parameters to completion, discarding rows. */
static int run_cached(rz_db_t *db, const char *sql, char *why)
{
	rz_stmt_t *st = NULL;
	int src = cache_get(db, sql, &st, why);

	while (src == SQLITE_OK || src == SQLITE_ROW) {
		src = sqlite3_step(st->stmt);
	}
	if (src != SQLITE_DONE && st != NULL) {
		snprintf(why, WHY_MAX, "%s", sqlite3_errmsg(db->conn));
	}
	rz_stmt_done(st);
	return src == SQLITE_DONE ? SQLITE_OK : src;
}

/* Run one pragma; val receives the first column of its first row ("" when none). */
static int pragma(rz_db_t *db, const char *sql, char *val, size_t len, rz_err_t *err)
{
	sqlite3_stmt *stmt = NULL;
	int src;

	val[0] = '\0';
	src = sqlite3_prepare_v2(db->conn, sql, -1, &stmt, NULL);
	if (src == SQLITE_OK) {
		src = sqlite3_step(stmt);
	}
	if (src == SQLITE_ROW && sqlite3_column_text(stmt, 0) != NULL) {
		snprintf(val, len, "%s", (const char *)sqlite3_column_text(stmt, 0));
	}
	if (src != SQLITE_ROW && src != SQLITE_DONE) {
		rz_err_set(err, code_of(src), "db: '%s' on '%s' failed: %s", sql, db->path,
		           sqlite3_errmsg(db->conn));
		sqlite3_finalize(stmt);
		return code_of(src);
	}
	sqlite3_finalize(stmt);
	return 0;
}

static int apply_pragmas(rz_db_t *db, rz_err_t *err)
{
	char val[32];

	for (size_t i = 0; i < sizeof(pragmas) / sizeof(pragmas[0]); i++) {
		int rc = pragma(db, pragmas[i].sql, val, sizeof(val), err);
		if (rc < 0) {
			return rc;
		}
		if (pragmas[i].expect != NULL && strcasecmp(val, pragmas[i].expect) != 0) {
			return rz_err_set(err, RZ_EDB, "db: '%s' on '%s' gave '%s', expected '%s'",
			                  pragmas[i].sql, db->path, val, pragmas[i].expect);
		}
	}
	return 0;
}

/* A programming error in a migration list is REZUS_EINTERNAL. */
static int check_migrations(const rz_migration_t *m, size_t count, rz_err_t *err)
{
	if (m == NULL && count > 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "db: migration list is NULL");
	}
	if (count > INT_MAX) {
		return rz_err_set(err, REZUS_EINTERNAL, "db: migration list is too long");
	}
	for (size_t i = 0; i < count; i++) {
		if (m[i].version != (int)i + 1) {
			return rz_err_set(
			    err, REZUS_EINTERNAL,
			    "db: migration list entry %zu has version %d, expected %zu", i,
			    m[i].version, i + 1);
		}
		if (m[i].name == NULL || m[i].sql == NULL) {
			return rz_err_set(err, REZUS_EINTERNAL,
			                  "db: migration %d has no name or no SQL", m[i].version);
		}
	}
	return 0;
}

static int read_version(rz_db_t *db, int *version, rz_err_t *err)
{
	rz_stmt_t *st = rz_db_stmt(db, sql_version, err);
	int rc;

	if (st == NULL) {
		return err != NULL ? err->code : RZ_EDB;
	}
	rc = rz_stmt_step(st, err);
	if (rc == 1) {
		*version = (int)rz_stmt_int64(st, 0);
		rc = 0;
	} else if (rc == 0) {
		rc = rz_err_set(err, RZ_EDB, "db: reading the schema version returned no row");
	}
	rz_stmt_done(st);
	return rc;
}

/* Insert m's schema_migrations row. Returns a SQLite code; why holds the reason. */
static int record(rz_db_t *db, const rz_migration_t *m, char *why)
{
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	rz_stmt_t *st = NULL;
	int src;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		snprintf(why, WHY_MAX, "cannot format the current time");
		return SQLITE_ERROR;
	}
	src = cache_get(db, sql_record, &st, why);
	if (src == SQLITE_OK) {
		src = sqlite3_bind_int(st->stmt, 1, m->version);
	}
	if (src == SQLITE_OK) {
		src = sqlite3_bind_text(st->stmt, 2, m->name, -1, SQLITE_TRANSIENT);
	}
	if (src == SQLITE_OK) {
		src = sqlite3_bind_text(st->stmt, 3, now, -1, SQLITE_TRANSIENT);
	}
	if (src == SQLITE_OK) {
		src = sqlite3_step(st->stmt);
		src = src == SQLITE_DONE ? SQLITE_OK : src;
	}
	if (src != SQLITE_OK && st != NULL) {
		snprintf(why, WHY_MAX, "%s", sqlite3_errmsg(db->conn));
	}
	rz_stmt_done(st);
	return src;
}

/* SQLITE_CONSTRAINT with why filled when PRAGMA foreign_key_check finds a row whose parent
 * is missing, else SQLITE_OK (or the error running it). */
static int foreign_keys_hold(rz_db_t *db, char *why)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db->conn, "PRAGMA foreign_key_check", -1, &st, NULL);

	if (src == SQLITE_OK) {
		src = sqlite3_step(st);
		if (src == SQLITE_ROW) {
			snprintf(why, WHY_MAX, "a row of %s lost its parent in %s",
			         (const char *)sqlite3_column_text(st, 0),
			         (const char *)sqlite3_column_text(st, 2));
			src = SQLITE_CONSTRAINT;
		} else if (src == SQLITE_DONE) {
			src = SQLITE_OK;
		}
	}
	if (src != SQLITE_OK && why[0] == '\0') {
		snprintf(why, WHY_MAX, "%s", sqlite3_errmsg(db->conn));
	}
	sqlite3_finalize(st);
	return src;
}

/* Apply one migration and its schema_migrations row in one transaction. One that rebuilds a
 * table others refer to runs with foreign keys off (dropping the old table would otherwise
 * cascade into its children), and must leave every reference whole: checked before the
 * commit (SQLite's procedure for changing a table's schema). */
static int apply_one(rz_db_t *db, const rz_migration_t *m, rz_err_t *err)
{
	char why[WHY_MAX] = "";
	char *emsg = NULL;
	int src = SQLITE_OK;

	if (m->without_foreign_keys) {
		src = sqlite3_exec(db->conn, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL);
	}
	if (src == SQLITE_OK) {
		src = run_cached(db, "BEGIN IMMEDIATE", why);
	}
	if (src == SQLITE_OK) {
		src = sqlite3_exec(db->conn, m->sql, NULL, NULL, &emsg);
		if (src != SQLITE_OK) {
			snprintf(why, WHY_MAX, "%s", emsg != NULL ? emsg : sqlite3_errstr(src));
			sqlite3_free(emsg);
		}
	}
	if (src == SQLITE_OK && m->without_foreign_keys) {
		src = foreign_keys_hold(db, why);
	}
	if (src == SQLITE_OK) {
		src = record(db, m, why);
	}
	if (src == SQLITE_OK) {
		src = run_cached(db, "COMMIT", why);
	}
	if (src != SQLITE_OK) {
		char ignored[WHY_MAX];
		if (!sqlite3_get_autocommit(db->conn)) {
			run_cached(db, "ROLLBACK", ignored);
		}
	}
	if (m->without_foreign_keys &&
	    sqlite3_exec(db->conn, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK &&
	    src == SQLITE_OK) {
		snprintf(why, WHY_MAX, "foreign keys could not be turned on again");
		src = SQLITE_ERROR;
	}
	if (src != SQLITE_OK) {
		return rz_err_set(err, code_of(src), "migration %d (%s) failed: %s", m->version,
		                  m->name, why);
	}
	rz_log_info("db", "applied migration %d (%s)", m->version, m->name);
	return 0;
}

/* Refuse a newer schema, then apply versions current+1 .. target. */
static int migrate(rz_db_t *db, int target, rz_err_t *err)
{
	char why[WHY_MAX] = "";
	int version = 0;
	int rc = run_cached(db, sql_bootstrap, why);

	if (rc != SQLITE_OK) {
		return rz_err_set(err, code_of(rc),
		                  "db: creating schema_migrations in '%s' failed: %s", db->path,
		                  why);
	}
	rc = read_version(db, &version, err);
	if (rc < 0) {
		return rc;
	}
	if (version > (int)db->count) {
		return rz_err_set(err, RZ_ESCHEMA,
		                  "database %s has schema version %d, newer than this rezuscloud "
		                  "supports (%zu); run a newer rezuscloud or restore a backup",
		                  db->path, version, db->count);
	}
	for (int v = version + 1; v <= target; v++) {
		rc = apply_one(db, &db->migrations[v - 1], err);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

/* Create the database file 0600 whatever the umask, before SQLite does (with 0644): SQLite
 * gives its -wal, -shm and -journal files the mode of the database, so they follow. An
 * existing file is left as it is; a failure here is SQLite's to report. */
static void create_private(const char *path)
{
	int fd;

	if (path[0] == '\0' || strcmp(path, ":memory:") == 0) {
		return;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		(void)fchmod(fd, 0600); /* the umask may have taken more; never less */
		close(fd);
	}
}

/* The background state of a new db: nothing started. */
static void bg_init(rz_db_t *db)
{
	db->pipe[0] = db->pipe[1] = -1;
	db->wal_fd = -1;
	pthread_mutex_init(&db->lock, NULL);
	pthread_cond_init(&db->ckpt_cond, NULL);
	pthread_cond_init(&db->sync_cond, NULL);
}

static int db_new(rz_db_t **out, const char *path, rz_err_t *err)
{
	const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	rz_db_t *db = calloc(1, sizeof(*db));
	int src;

	*out = db;
	if (db == NULL || (db->path = strdup(path)) == NULL) {
		return rz_err_set(err, -ENOMEM, "db: open '%s' failed: out of memory", path);
	}
	db->magic = DB_MAGIC;
	bg_init(db);
	create_private(path);
	src = sqlite3_open_v2(path, &db->conn, flags, NULL);
	if (src != SQLITE_OK) {
		return rz_err_set(err, code_of(src), "db: open '%s' failed: %s", path,
		                  db->conn != NULL ? sqlite3_errmsg(db->conn)
		                                   : sqlite3_errstr(src));
	}
	sqlite3_extended_result_codes(db->conn, 1);
	return 0;
}

int rz_db_open_with(rz_db_t **out, const char *path, const rz_migration_t *migrations, size_t count,
                    int max_version, rz_err_t *err)
{
	rz_db_t *db = NULL;
	int target = (max_version < 0 || (size_t)max_version > count) ? (int)count : max_version;
	int rc;

	if (out == NULL || path == NULL) {
		return rz_err_set(err, REZUS_EINVALID, "db: open: no path or no result pointer");
	}
	*out = NULL;
	rc = check_migrations(migrations, count, err);
	if (rc < 0) {
		goto out;
	}
	rc = db_new(&db, path, err);
	if (rc < 0) {
		goto out;
	}
	db->migrations = migrations;
	db->count = count;
	rc = apply_pragmas(db, err);
	if (rc < 0) {
		goto out;
	}
	rc = migrate(db, target, err);
out:
	if (rc < 0) {
		rz_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

int rz_db_open_readonly(rz_db_t **out, const char *path, rz_err_t *err)
{
	rz_db_t *db = NULL;
	char val[32];
	int src, rc;

	if (out == NULL || path == NULL) {
		return rz_err_set(err, REZUS_EINVALID, "db: open: no path or no result pointer");
	}
	*out = NULL;
	db = calloc(1, sizeof(*db));
	if (db == NULL || (db->path = strdup(path)) == NULL) {
		free(db);
		return rz_err_set(err, -ENOMEM, "db: open '%s' failed: out of memory", path);
	}
	db->magic = DB_MAGIC;
	bg_init(db);
	db->migrations = rz_db_migrations(&db->count);
	src = sqlite3_open_v2(path, &db->conn, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (src != SQLITE_OK) {
		rc = rz_err_set(err, code_of(src), "db: open '%s' failed: %s", path,
		                db->conn != NULL ? sqlite3_errmsg(db->conn) : sqlite3_errstr(src));
		rz_db_close(db);
		return rc;
	}
	sqlite3_extended_result_codes(db->conn, 1);
	rc = pragma(db, "PRAGMA busy_timeout = " BUSY_TIMEOUT, val, sizeof(val), err);
	if (rc == 0) { /* reading the first page tells a database from another file */
		rc = pragma(db, "PRAGMA schema_version", val, sizeof(val), err);
	}
	if (rc < 0) {
		rz_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

/* A connection of rz_db_copy's own; NULL with err filled. */
static sqlite3 *copy_open(const char *path, int flags, rz_err_t *err)
{
	sqlite3 *conn = NULL;
	int src = sqlite3_open_v2(path, &conn, flags | SQLITE_OPEN_NOMUTEX, NULL);

	if (src == SQLITE_OK) {
		src = sqlite3_busy_timeout(conn, 5000);
	}
	if (src != SQLITE_OK) {
		rz_err_set(err, code_of(src), "db: open '%s' failed: %s", path,
		           conn != NULL ? sqlite3_errmsg(conn) : sqlite3_errstr(src));
		sqlite3_close_v2(conn);
		return NULL;
	}
	return conn;
}

int rz_db_copy(const char *src, const char *dst, rz_err_t *err)
{
	sqlite3 *from = copy_open(src, SQLITE_OPEN_READWRITE, err), *to = NULL;
	sqlite3_backup *b = NULL;
	int rc = from == NULL ? RZ_EDB : 0, step;

	if (rc == 0 &&
	    (to = copy_open(dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err)) == NULL) {
		rc = RZ_EDB;
	}
	if (rc == 0 && (b = sqlite3_backup_init(to, "main", from, "main")) == NULL) {
		rc = rz_err_set(err, RZ_EDB, "db: copying '%s' to '%s' failed: %s", src, dst,
		                sqlite3_errmsg(to));
	}
	if (rc == 0) {
		/* One step: one read transaction on src, so the copy is one moment of it. */
		step = sqlite3_backup_step(b, -1);
		if (step != SQLITE_DONE) {
			rc = rz_err_set(err, code_of(step), "db: copying '%s' to '%s' failed: %s",
			                src, dst, sqlite3_errstr(step));
		}
	}
	if (b != NULL && sqlite3_backup_finish(b) != SQLITE_OK && rc == 0) {
		rc = rz_err_set(err, RZ_EDB, "db: copying '%s' to '%s' failed: %s", src, dst,
		                sqlite3_errmsg(to));
	}
	if (rc == 0 &&
	    sqlite3_exec(to, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = rz_err_set(err, RZ_EDB, "db: '%s': leaving WAL mode failed: %s", dst,
		                sqlite3_errmsg(to));
	}
	sqlite3_close_v2(to);
	sqlite3_close_v2(from);
	return rc;
}

int rz_db_open(rz_db_t **out, const char *path, rz_err_t *err)
{
	size_t count = 0;
	const rz_migration_t *m = rz_db_migrations(&count);

	return rz_db_open_with(out, path, m, count, -1, err);
}

void rz_db_close(rz_db_t *db)
{
	rz_stmt_t *st;

	if (db == NULL) {
		return;
	}
	if (db->magic == DB_MAGIC) {
		rz_db_stop(db);
		pthread_mutex_destroy(&db->lock);
		pthread_cond_destroy(&db->ckpt_cond);
		pthread_cond_destroy(&db->sync_cond);
	}
	while ((st = db->cache) != NULL) {
		db->cache = st->next;
		sqlite3_finalize(st->stmt);
		free(st->sql);
		free(st);
	}
	if (db->conn != NULL && sqlite3_close(db->conn) != SQLITE_OK) {
		rz_log_warn("db", "close '%s' failed: %s", db->path, sqlite3_errmsg(db->conn));
		sqlite3_close_v2(db->conn);
	}
	db->magic = 0;
	free(db->path);
	free(db);
}

int rz_db_schema_version(rz_db_t *db)
{
	int version = 0;
	int rc;

	if (!valid(db)) {
		return 0;
	}
	rc = read_version(db, &version, NULL);
	return rc < 0 ? rc : version;
}

int rz_db_ready(rz_db_t *db)
{
	int version = -1;

	return valid(db) && read_version(db, &version, NULL) == 0 && version == (int)db->count;
}

int rz_db_storage_error(rz_db_t *db, char *why, size_t len)
{
	if (why != NULL && len > 0) {
		snprintf(why, len, "%s", valid(db) ? db->storage_why : "");
	}
	return valid(db) ? db->storage_code : 0;
}

static int probe_write(rz_db_t *db, void *arg, rz_err_t *err)
{
	const char *sql = "INSERT INTO meta (key, value) VALUES ('storage_probe', ?1) "
	                  "ON CONFLICT (key) DO UPDATE SET value = excluded.value";
	rz_stmt_t *st = rz_db_stmt(db, sql, err);
	char now[32];
	int rc;

	(void)arg;
	if (st == NULL) {
		return err != NULL ? err->code : RZ_EDB;
	}
	snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
	rc = rz_stmt_bind_text(st, 1, now);
	if (rc == 0) {
		rc = rz_stmt_step(st, err);
	}
	rz_stmt_done(st);
	return rc;
}

int rz_db_probe(rz_db_t *db, rz_err_t *err)
{
	return rz_db_tx(db, probe_write, NULL, err);
}

/* Leave the innermost transaction level: COMMIT, or RELEASE of a savepoint. */
static int tx_commit(rz_db_t *db, rz_err_t *err)
{
	char why[WHY_MAX] = "";
	int src = run_cached(db, db->depth == 1 ? "COMMIT" : "RELEASE " SAVEPOINT_NAME, why);

	if (src != SQLITE_OK) {
		return rz_err_set(err, note(db, src), "db: commit failed: %s", why);
	}
	if (db->depth == 1) {
		cleared(db);
	}
	return 0;
}

/* Undo the innermost transaction level; failures are logged (fn's error is what matters). */
static void tx_rollback(rz_db_t *db)
{
	char why[WHY_MAX] = "";
	int src;

	if (db->depth == 1) {
		/* SQLite may already have rolled back on its own (e.g. after SQLITE_FULL). */
		src =
		    sqlite3_get_autocommit(db->conn) ? SQLITE_OK : run_cached(db, "ROLLBACK", why);
	} else {
		src = run_cached(db, "ROLLBACK TO " SAVEPOINT_NAME, why);
		if (src == SQLITE_OK) {
			src = run_cached(db, "RELEASE " SAVEPOINT_NAME, why);
		}
	}
	if (src != SQLITE_OK) {
		rz_log_warn("db", "rollback failed: %s", why);
	}
}

int rz_db_tx(rz_db_t *db, int (*fn)(rz_db_t *db, void *arg, rz_err_t *err), void *arg,
             rz_err_t *err)
{
	char why[WHY_MAX] = "";
	int src;
	int rc;

	if (!valid(db) || fn == NULL) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "db: transaction: no database or no function");
	}
	if (db->depth == 0) {
		rz_db_flush(db); /* the group's writes commit first: this one is on its own */
	}
	src = run_cached(db, db->depth == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT " SAVEPOINT_NAME, why);
	if (src != SQLITE_OK) {
		return rz_err_set(err, note(db, src), "db: begin failed: %s", why);
	}
	db->depth++;
	rc = fn(db, arg, err);
	if (rc == 0) {
		rc = tx_commit(db, err);
	}
	if (rc != 0) {
		tx_rollback(db);
	}
	db->depth--;
	return rc;
}

/* ------------------------------------------------------------------ group commit */

/* A failed group commit's status for its waiters (db.h: RZ_DB_UNCOMMITTED). */
static int status_of(int code)
{
	return -RZ_DB_UNCOMMITTED + (code < 0 && code > -4096 ? code : -EIO);
}

int rz_db_flush(rz_db_t *db)
{
	char why[WHY_MAX] = "";
	struct waiter *w, *next;
	size_t n;
	int status = 0;
	int src;

	if (!valid(db) || !db->group_open) {
		return 0;
	}
	n = db->group_writes;
	db->group_open = false;
	db->group_writes = 0;
	if (sqlite3_get_autocommit(db->conn)) {
		/* SQLite rolled the whole group back itself (a full disk, say) */
		status = status_of(db->storage_code != 0 ? db->storage_code : RZ_EDB);
		rz_log_err("db", "%zu grouped writes were rolled back: %s", n,
		           db->storage_why[0] != '\0' ? db->storage_why : "the transaction ended");
	} else if ((src = run_cached(db, "COMMIT", why)) != SQLITE_OK) {
		status = status_of(note(db, src));
		rz_log_err("db", "committing %zu grouped writes failed: %s", n, why);
		if (!sqlite3_get_autocommit(db->conn) &&
		    run_cached(db, "ROLLBACK", why) != SQLITE_OK) {
			rz_log_warn("db", "rollback failed: %s", why);
		}
	} else {
		cleared(db);
	}
	/* this group's waiters; a write the callbacks make opens the next group */
	w = db->gwait_head;
	db->gwait_head = db->gwait_tail = NULL;
	if (db->group_fn != NULL) {
		db->group_fn(db->group_arg, status);
	}
	for (; w != NULL; w = next) {
		next = w->next;
		if (status != 0) {
			w->fn(w->arg, status);
		} else {
			rz_db_after_durable(db, w->fn, w->arg);
		}
		free(w);
	}
	return status;
}

bool rz_db_can_group(const rz_db_t *db)
{
	return valid(db) && db->group_ev != NULL && db->depth == 0 &&
	       db->group_writes < RZ_DB_GROUP_MAX;
}

int rz_db_tx_grouped(rz_db_t *db, int (*fn)(rz_db_t *db, void *arg, rz_err_t *err), void *arg,
                     rz_err_t *err)
{
	char why[WHY_MAX] = "";
	int src;
	int rc;

	if (!rz_db_can_group(db) || fn == NULL) {
		return rz_db_tx(db, fn, arg, err);
	}
	if (!db->group_open) {
		src = run_cached(db, "BEGIN IMMEDIATE", why);
		if (src != SQLITE_OK) {
			return rz_err_set(err, note(db, src), "db: begin failed: %s", why);
		}
		db->group_open = true;
		event_active(db->group_ev, 0, 0);
	}
	/* the group is the outer level; the write a savepoint in it */
	db->depth = 1;
	src = run_cached(db, "SAVEPOINT " SAVEPOINT_NAME, why);
	if (src != SQLITE_OK) {
		db->depth = 0;
		return rz_err_set(err, note(db, src), "db: begin failed: %s", why);
	}
	db->depth = 2;
	rc = fn(db, arg, err);
	if (rc == 0) {
		rc = tx_commit(db, err);
	}
	if (rc != 0 && !sqlite3_get_autocommit(db->conn)) {
		tx_rollback(db);
	} else if (rc == 0) {
		db->group_writes++;
	}
	db->depth = 0;
	if (rc != 0 && sqlite3_get_autocommit(db->conn)) {
		/* SQLite ended the whole transaction (a full disk, say): the group's earlier writes
		 * are gone too. Tell them now, before a later write's SAVEPOINT could begin a new
		 * transaction that the flush would commit as if it were this group. */
		if (db->storage_code == 0 && rc < 0 && rc > -4096) {
			db->storage_code = rc;
		}
		rz_db_flush(db);
	}
	return rc;
}

void rz_db_set_group_fn(rz_db_t *db, void (*fn)(void *arg, int status), void *arg)
{
	if (valid(db)) {
		db->group_fn = fn;
		db->group_arg = arg;
	}
}

rz_stmt_t *rz_db_stmt(rz_db_t *db, const char *sql, rz_err_t *err)
{
	char why[WHY_MAX] = "";
	rz_stmt_t *st = NULL;
	int src;

	if (!valid(db) || sql == NULL) {
		rz_err_set(err, REZUS_EINVALID, "db: prepare failed: no database or no SQL");
		return NULL;
	}
	src = cache_get(db, sql, &st, why);
	if (src != SQLITE_OK) {
		rz_err_set(err, code_of(src), "db: prepare failed: %s", why);
		return NULL;
	}
	return st;
}

int rz_stmt_bind_text(rz_stmt_t *st, int idx, const char *s)
{
	if (st == NULL || sqlite3_bind_text(st->stmt, idx, s, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
		return RZ_EDB;
	}
	return 0;
}

int rz_stmt_bind_int64(rz_stmt_t *st, int idx, int64_t v)
{
	if (st == NULL || sqlite3_bind_int64(st->stmt, idx, v) != SQLITE_OK) {
		return RZ_EDB;
	}
	return 0;
}

int rz_stmt_bind_blob(rz_stmt_t *st, int idx, const void *p, size_t len)
{
	int src;

	if (st == NULL || (p == NULL && len > 0)) {
		return RZ_EDB;
	}
	/* SQLite binds a NULL pointer as SQL NULL; an empty blob is a zero-length zeroblob. */
	if (len == 0) {
		src = sqlite3_bind_zeroblob(st->stmt, idx, 0);
	} else {
		src = sqlite3_bind_blob64(st->stmt, idx, p, len, SQLITE_TRANSIENT);
	}
	return src == SQLITE_OK ? 0 : RZ_EDB;
}

int rz_stmt_bind_null(rz_stmt_t *st, int idx)
{
	if (st == NULL || sqlite3_bind_null(st->stmt, idx) != SQLITE_OK) {
		return RZ_EDB;
	}
	return 0;
}

int rz_stmt_step(rz_stmt_t *st, rz_err_t *err)
{
	int src;

	if (st == NULL) {
		return rz_err_set(err, RZ_EDB, "db: step failed: no statement");
	}
	src = sqlite3_step(st->stmt);
	if (src == SQLITE_ROW) {
		return 1;
	}
	if (src == SQLITE_DONE) {
		/* a write outside a transaction is its own commit */
		if (!sqlite3_stmt_readonly(st->stmt) && sqlite3_get_autocommit(st->db->conn)) {
			cleared(st->db);
		}
		return 0;
	}
	return rz_err_set(err, note(st->db, src), "db: step failed: %s",
	                  sqlite3_errmsg(st->db->conn));
}

const char *rz_stmt_text(rz_stmt_t *st, int col)
{
	return st != NULL ? (const char *)sqlite3_column_text(st->stmt, col) : NULL;
}

int64_t rz_stmt_int64(rz_stmt_t *st, int col)
{
	return st != NULL ? sqlite3_column_int64(st->stmt, col) : 0;
}

const void *rz_stmt_blob(rz_stmt_t *st, int col, size_t *len)
{
	const void *p = NULL;
	int n = 0;

	if (st != NULL) {
		p = sqlite3_column_blob(st->stmt, col);
		n = sqlite3_column_bytes(st->stmt, col);
	}
	if (len != NULL) {
		*len = (size_t)n;
	}
	return p;
}

int rz_stmt_is_null(rz_stmt_t *st, int col)
{
	return st == NULL || sqlite3_column_type(st->stmt, col) == SQLITE_NULL;
}

void rz_stmt_done(rz_stmt_t *st)
{
	if (st == NULL) {
		return;
	}
	sqlite3_reset(st->stmt);
	sqlite3_clear_bindings(st->stmt);
}

int rz_db_exec(rz_db_t *db, const char *sql, rz_err_t *err)
{
	char why[WHY_MAX] = "";
	int src;

	if (!valid(db) || sql == NULL) {
		return rz_err_set(err, REZUS_EINVALID, "db: exec failed: no database or no SQL");
	}
	src = run_cached(db, sql, why);
	if (src != SQLITE_OK) {
		return rz_err_set(err, note(db, src), "db: exec failed: %s", why);
	}
	return 0;
}

int64_t rz_db_changes(rz_db_t *db)
{
	return valid(db) ? sqlite3_changes64(db->conn) : 0;
}

int64_t rz_db_last_rowid(rz_db_t *db)
{
	return valid(db) ? sqlite3_last_insert_rowid(db->conn) : 0;
}

/* One integer from the first row of sql on db (0 when no row). */
int rz_db_query_int(rz_db_t *db, const char *sql, int64_t *out, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(db, sql, err);
	int rc;

	*out = 0;
	if (s == NULL) {
		return RZ_EDB;
	}
	rc = rz_stmt_step(s, err);
	if (rc == 1) {
		*out = rz_stmt_int64(s, 0);
		rc = 0;
	}
	rz_stmt_done(s);
	return rc;
}
