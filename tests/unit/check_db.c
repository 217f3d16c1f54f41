/*
 * tests/unit/check_db.c - the SQLite store: pragmas, migrations (from empty, from every
 * earlier version, a failing step, a newer schema), transactions, the statement cache and
 * binds. Every test works on a database file in a fresh private directory.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/store/db.h"
#include "core/base/errors.h"
#include "core/base/log.h"
#include "tests/unit/testutil.h"

static char *dir;
static char *path;
static char *logpath;

static void setup(void)
{
	dir = rzt_tmpdir();
	ck_assert_int_gt(asprintf(&path, "%s/rezus.db", dir), 0);
	ck_assert_int_gt(asprintf(&logpath, "%s/rezus.log", dir), 0);
	ck_assert_int_eq(rz_log_open(logpath, NULL), 0);
}

static void teardown(void)
{
	rz_log_close();
	rzt_rmrf(dir);
	free(dir);
	free(path);
	free(logpath);
}

/* A synthetic schema: each step leaves data that the next steps must keep. */
static const rz_migration_t three[] = {
	{ .version = 1,
	  .name = "t1",
	  .sql = "CREATE TABLE t1 (id INTEGER PRIMARY KEY, v TEXT NOT NULL);\n"
	         "INSERT INTO t1 (v) VALUES ('from step 1');\n" },
	{ .version = 2,
	  .name = "t2",
	  .sql = "CREATE TABLE t2 (id INTEGER PRIMARY KEY,\n"
	         "                 t1_id INTEGER NOT NULL REFERENCES t1 (id));\n"
	         "INSERT INTO t2 (t1_id) VALUES (1);\n" },
	{ .version = 3,
	  .name = "t1.w",
	  .sql = "ALTER TABLE t1 ADD COLUMN w TEXT NOT NULL DEFAULT 'from step 3';\n" },
};

/* Step 2 creates a table and then fails: the table must not survive. */
static const rz_migration_t broken[] = {
	{ .version = 1, .name = "t1", .sql = "CREATE TABLE t1 (id INTEGER PRIMARY KEY);" },
	{ .version = 2,
	  .name = "bad",
	  .sql = "CREATE TABLE t2 (x INTEGER);\nINSERT INTO nosuch VALUES (1);" },
	{ .version = 3, .name = "t3", .sql = "CREATE TABLE t3 (x INTEGER);" },
};

static rz_db_t *open_ok(const rz_migration_t *m, size_t n, int max)
{
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;

	ck_assert_msg(rz_db_open_with(&db, path, m, n, max, &err) == 0, "open: %s", err.msg);
	ck_assert_ptr_nonnull(db);
	return db;
}

/* The single integer that sql (with an optional text parameter ?1) returns. */
static int64_t query_int(rz_db_t *db, const char *sql, const char *param)
{
	rz_err_t err = { 0 };
	rz_stmt_t *st = rz_db_stmt(db, sql, &err);
	int64_t v;

	ck_assert_msg(st != NULL, "%s: %s", sql, err.msg);
	if (param != NULL) {
		ck_assert_int_eq(rz_stmt_bind_text(st, 1, param), 0);
	}
	ck_assert_msg(rz_stmt_step(st, &err) == 1, "%s: %s", sql, err.msg);
	v = rz_stmt_int64(st, 0);
	rz_stmt_done(st);
	return v;
}

/* The single text that sql returns; caller frees. NULL for SQL NULL. */
static char *query_text(rz_db_t *db, const char *sql)
{
	rz_err_t err = { 0 };
	rz_stmt_t *st = rz_db_stmt(db, sql, &err);
	char *v;

	ck_assert_msg(st != NULL, "%s: %s", sql, err.msg);
	ck_assert_msg(rz_stmt_step(st, &err) == 1, "%s: %s", sql, err.msg);
	v = rz_stmt_text(st, 0) != NULL ? strdup(rz_stmt_text(st, 0)) : NULL;
	rz_stmt_done(st);
	return v;
}

static int has_table(rz_db_t *db, const char *name)
{
	return (int)query_int(
	    db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1", name);
}

static void exec_ok(rz_db_t *db, const char *sql)
{
	rz_err_t err = { 0 };

	ck_assert_msg(rz_db_exec(db, sql, &err) == 0, "%s: %s", sql, err.msg);
}

static char *slurp(const char *file)
{
	char *buf = calloc(1, 65536);
	FILE *f = fopen(file, "r");

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_lt(fread(buf, 1, 65535, f), 65535);
	fclose(f);
	return buf;
}

static void assert_rfc3339_utc(const char *ts)
{
	ck_assert_ptr_nonnull(ts);
	ck_assert_uint_eq(strlen(ts), 20);
	ck_assert_int_eq(ts[4], '-');
	ck_assert_int_eq(ts[10], 'T');
	ck_assert_int_eq(ts[13], ':');
	ck_assert_int_eq(ts[19], 'Z');
}

START_TEST(test_open_empty)
{
	size_t n = 0;
	const rz_migration_t *m = rz_db_migrations(&n);
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;
	char *s;

	ck_assert_uint_ge(n, 1);
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(rz_db_schema_version(db), (int)n);
	ck_assert_int_eq(rz_db_ready(db), 1);
	ck_assert_int_eq(access(path, F_OK), 0);

	s = query_text(db, "PRAGMA journal_mode");
	ck_assert_str_eq(s, "wal");
	free(s);
	ck_assert_int_eq(query_int(db, "PRAGMA foreign_keys", NULL), 1);
	ck_assert_int_eq(query_int(db, "PRAGMA busy_timeout", NULL), 5000);

	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM schema_migrations", NULL), (int64_t)n);
	for (size_t i = 0; i < n; i++) {
		rz_stmt_t *st = rz_db_stmt(
		    db, "SELECT name, applied_at FROM schema_migrations WHERE version = ?1", &err);
		ck_assert_ptr_nonnull(st);
		ck_assert_int_eq(rz_stmt_bind_int64(st, 1, m[i].version), 0);
		ck_assert_int_eq(rz_stmt_step(st, &err), 1);
		ck_assert_str_eq(rz_stmt_text(st, 0), m[i].name);
		assert_rfc3339_utc(rz_stmt_text(st, 1));
		rz_stmt_done(st);
	}
	ck_assert_str_eq(m[0].name, "meta table");
	s = query_text(db, "SELECT value FROM meta WHERE key = 'created_at'");
	assert_rfc3339_utc(s);
	free(s);
	rz_db_close(db);

	s = slurp(logpath);
	ck_assert_ptr_nonnull(strstr(s, "applied migration 1 (meta table)"));
	free(s);
}
END_TEST

START_TEST(test_reopen_is_noop)
{
	size_t n = 0;
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;
	char *s;

	rz_db_migrations(&n);
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	exec_ok(db, "UPDATE schema_migrations SET applied_at = 'marker'");
	exec_ok(db, "UPDATE meta SET value = 'kept' WHERE key = 'created_at'");
	rz_db_close(db);
	rz_log_close();
	unlink(logpath);
	ck_assert_int_eq(rz_log_open(logpath, NULL), 0);

	db = NULL;
	ck_assert_msg(rz_db_open(&db, path, &err) == 0, "reopen: %s", err.msg);
	ck_assert_int_eq(rz_db_schema_version(db), (int)n);
	ck_assert_int_eq(rz_db_ready(db), 1);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM schema_migrations", NULL), (int64_t)n);
	ck_assert_int_eq(
	    query_int(db, "SELECT count(*) FROM schema_migrations WHERE applied_at = ?1", "marker"),
	    (int64_t)n);
	s = query_text(db, "SELECT value FROM meta WHERE key = 'created_at'");
	ck_assert_str_eq(s, "kept");
	free(s);
	rz_db_close(db);

	s = slurp(logpath);
	ck_assert_ptr_null(strstr(s, "applied migration"));
	free(s);
}
END_TEST

START_TEST(test_synthetic_from_empty)
{
	rz_db_t *db = open_ok(three, 3, -1);
	char *s;

	ck_assert_int_eq(rz_db_schema_version(db), 3);
	ck_assert_int_eq(rz_db_ready(db), 1);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM schema_migrations", NULL), 3);
	ck_assert_int_eq(
	    query_int(db, "SELECT version FROM schema_migrations WHERE name = ?1", "t1.w"), 3);
	s = query_text(db, "SELECT v || '/' || w FROM t1 WHERE id = 1");
	ck_assert_str_eq(s, "from step 1/from step 3");
	free(s);
	ck_assert_int_eq(query_int(db, "SELECT t1_id FROM t2", NULL), 1);
	rz_db_close(db);
}
END_TEST

/* Loop k = 0..2: stop at version k, add user data, then upgrade with the full list. */
START_TEST(test_synthetic_from_each_version)
{
	const int k = _i;
	rz_db_t *db = open_ok(three, 3, k);
	char *s;

	ck_assert_int_eq(rz_db_schema_version(db), k);
	ck_assert_int_eq(rz_db_ready(db), 0);
	ck_assert_int_eq(has_table(db, "t1"), k >= 1);
	ck_assert_int_eq(has_table(db, "t2"), k >= 2);
	if (k >= 1) {
		exec_ok(db, "INSERT INTO t1 (id, v) VALUES (7, 'user')");
	}
	rz_db_close(db);

	db = open_ok(three, 3, -1);
	ck_assert_int_eq(rz_db_schema_version(db), 3);
	ck_assert_int_eq(rz_db_ready(db), 1);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM schema_migrations", NULL), 3);
	s = query_text(db, "SELECT v || '/' || w FROM t1 WHERE id = 1");
	ck_assert_str_eq(s, "from step 1/from step 3");
	free(s);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM t2 WHERE t1_id = 1", NULL), 1);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM t1 WHERE id = 7 AND v = ?1", "user"),
	                 k >= 1 ? 1 : 0);
	rz_db_close(db);
}
END_TEST

START_TEST(test_failing_step_rolls_back_only_itself)
{
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;

	ck_assert_int_eq(rz_db_open_with(&db, path, broken, 3, -1, &err), RZ_EDB);
	ck_assert_ptr_null(db);
	ck_assert_int_eq(err.code, RZ_EDB);
	ck_assert_str_eq(err.msg, "migration 2 (bad) failed: no such table: nosuch");

	/* Stopping at 1 opens fine: step 1 stayed applied, step 2 left nothing behind. */
	db = open_ok(broken, 3, 1);
	ck_assert_int_eq(rz_db_schema_version(db), 1);
	ck_assert_int_eq(rz_db_ready(db), 0);
	ck_assert_int_eq(has_table(db, "t1"), 1);
	ck_assert_int_eq(has_table(db, "t2"), 0);
	ck_assert_int_eq(has_table(db, "t3"), 0);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM schema_migrations", NULL), 1);
	rz_db_close(db);
}
END_TEST

START_TEST(test_failing_first_step_leaves_version_zero)
{
	static const rz_migration_t bad[] = {
		{ .version = 1, .name = "half", .sql = "CREATE TABLE half (x INTEGER); SELEC 1;" },
	};
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;

	ck_assert_int_eq(rz_db_open_with(&db, path, bad, 1, -1, &err), RZ_EDB);
	ck_assert_str_eq(err.msg, "migration 1 (half) failed: near \"SELEC\": syntax error");
	db = open_ok(bad, 1, 0);
	ck_assert_int_eq(rz_db_schema_version(db), 0);
	ck_assert_int_eq(has_table(db, "half"), 0);
	ck_assert_int_eq(has_table(db, "schema_migrations"), 1);
	rz_db_close(db);
}
END_TEST

START_TEST(test_newer_schema_refused)
{
	rz_err_t err = { 0 };
	rz_db_t *db = open_ok(three, 3, -1);
	char *want = NULL;

	rz_db_close(db);
	db = NULL;
	ck_assert_int_eq(rz_db_open_with(&db, path, three, 2, -1, &err), RZ_ESCHEMA);
	ck_assert_ptr_null(db);
	ck_assert_int_eq(err.code, RZ_ESCHEMA);
	ck_assert_int_gt(asprintf(&want,
	                          "database %s has schema version 3, newer than this rezuscloud "
	                          "supports (2); run a newer rezuscloud or restore a backup",
	                          path),
	                 0);
	ck_assert_str_eq(err.msg, want);
	free(want);

	/* The refusal changed nothing: the full list still opens at version 3. */
	db = open_ok(three, 3, -1);
	ck_assert_int_eq(rz_db_schema_version(db), 3);
	rz_db_close(db);
}
END_TEST

/* A database written by a future rezuscloud (the product list plus one step). */
START_TEST(test_newer_schema_refused_by_product)
{
	size_t n = 0;
	const rz_migration_t *m = rz_db_migrations(&n);
	rz_migration_t *future = calloc(n + 1, sizeof(*future));
	rz_err_t err = { 0 };
	rz_db_t *db;
	char *want = NULL;

	ck_assert_ptr_nonnull(future);
	memcpy(future, m, n * sizeof(*future));
	future[n] = (rz_migration_t){ .version = (int)n + 1,
		                      .name = "future",
		                      .sql = "CREATE TABLE future (x INTEGER);" };
	db = open_ok(future, n + 1, -1);
	rz_db_close(db);

	db = NULL;
	ck_assert_int_eq(rz_db_open(&db, path, &err), RZ_ESCHEMA);
	ck_assert_ptr_null(db);
	ck_assert_int_gt(asprintf(&want,
	                          "database %s has schema version %zu, newer than this rezuscloud "
	                          "supports (%zu); run a newer rezuscloud or restore a backup",
	                          path, n + 1, n),
	                 0);
	ck_assert_str_eq(err.msg, want);
	free(want);
	free(future);
}
END_TEST

/* Migration 12 rebuilds objects as a rowid table: every object and every row that refers to
 * one stays, and the references still cascade. */
START_TEST(test_objects_rebuilt_keep_their_children)
{
	rz_db_t *db = open_ok(rz_db_migrations(NULL), 11, 11);
	rz_err_t err = { 0 };

	exec_ok(db, "INSERT INTO objects (kind, tenant, name, uid, rv, doc) VALUES "
	            "('Tenant', '', 'a', 'u-a', 1, '{\"kind\":\"Tenant\"}'), "
	            "('Tenant', '', 'b', 'u-b', 2, '{\"kind\":\"Tenant\"}'), "
	            "('NodeGroup', 'a', 'w', 'u-w', 3, '{\"kind\":\"NodeGroup\"}')");
	exec_ok(db, "INSERT INTO tfstate_versions (tenant, version, md5, time, run, size, blob) "
	            "VALUES ('a', 1, 'x', 't', 'r', 1, x'00'), ('b', 1, 'x', 't', 'r', 1, x'00')");
	rz_db_close(db);
	db = NULL;
	ck_assert_msg(rz_db_open(&db, path, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(rz_db_schema_version(db), 12);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM objects", NULL), 3);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM tfstate_versions", NULL), 2);
	ck_assert_int_eq(query_int(db,
	                           "SELECT count(*) FROM sqlite_schema WHERE name = 'objects' AND "
	                           "sql LIKE '%WITHOUT ROWID%'",
	                           NULL),
	                 0);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM pragma_foreign_key_check", NULL), 0);
	ck_assert_int_eq(query_int(db, "PRAGMA foreign_keys", NULL), 1);
	/* the key is still unique, and a tenant's deletion still takes its state with it */
	ck_assert_int_ne(rz_db_exec(db,
	                            "INSERT INTO objects (kind, tenant, name, uid, rv, doc) "
	                            "VALUES ('Tenant', '', 'a', 'u-other', 4, '{}')",
	                            &err),
	                 0);
	exec_ok(db, "DELETE FROM objects WHERE kind = 'Tenant' AND name = 'a'");
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM tfstate_versions", NULL), 1);
	rz_db_close(db);
}
END_TEST

/* Loop k = 0..n-1 over the real product list: stop at k, then upgrade with rz_db_open. */
START_TEST(test_product_from_each_version)
{
	size_t n = 0;
	const rz_migration_t *m = rz_db_migrations(&n);
	rz_err_t err = { 0 };
	rz_db_t *db = open_ok(m, n, _i);

	ck_assert_int_eq(rz_db_schema_version(db), _i);
	ck_assert_int_eq(rz_db_ready(db), 0);
	rz_db_close(db);
	db = NULL;
	ck_assert_msg(rz_db_open(&db, path, &err) == 0, "upgrade from %d: %s", _i, err.msg);
	ck_assert_int_eq(rz_db_schema_version(db), (int)n);
	ck_assert_int_eq(rz_db_ready(db), 1);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM schema_migrations", NULL), (int64_t)n);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM meta WHERE key = ?1", "created_at"),
	                 1);
	rz_db_close(db);
}
END_TEST

START_TEST(test_invalid_migration_list)
{
	static const rz_migration_t gap[] = {
		{ .version = 1, .name = "a", .sql = "CREATE TABLE a (x INTEGER);" },
		{ .version = 3, .name = "c", .sql = "CREATE TABLE c (x INTEGER);" },
	};
	static const rz_migration_t noname[] = {
		{ .version = 1, .name = NULL, .sql = "CREATE TABLE a (x INTEGER);" },
	};
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;

	ck_assert_int_eq(rz_db_open_with(&db, path, gap, 2, -1, &err), REZUS_EINTERNAL);
	ck_assert_ptr_null(db);
	ck_assert_str_eq(err.msg, "db: migration list entry 1 has version 3, expected 2");
	ck_assert_int_eq(rz_db_open_with(&db, path, noname, 1, -1, &err), REZUS_EINTERNAL);
	ck_assert_str_eq(err.msg, "db: migration 1 has no name or no SQL");
	ck_assert_int_eq(rz_db_open_with(&db, path, NULL, 1, -1, &err), REZUS_EINTERNAL);
	ck_assert_ptr_null(db);
}
END_TEST

START_TEST(test_open_failure)
{
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;
	char *bad = NULL;
	char *want = NULL;

	ck_assert_int_gt(asprintf(&bad, "%s/missing/rezus.db", dir), 0);
	ck_assert_int_eq(rz_db_open(&db, bad, &err), RZ_EDB);
	ck_assert_ptr_null(db);
	ck_assert_int_gt(asprintf(&want, "db: open '%s' failed: unable to open database file", bad),
	                 0);
	ck_assert_str_eq(err.msg, want);
	free(want);
	free(bad);
}
END_TEST

static rz_db_t *open_kv(void)
{
	rz_db_t *db = open_ok(three, 0, -1);

	exec_ok(db, "CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)");
	return db;
}

static int put(rz_db_t *db, const char *k, rz_err_t *err)
{
	rz_stmt_t *st = rz_db_stmt(db, "INSERT INTO kv (k, v) VALUES (?1, 'x')", err);
	int rc;

	if (st == NULL) {
		return err->code;
	}
	rc = rz_stmt_bind_text(st, 1, k);
	if (rc == 0) {
		rc = rz_stmt_step(st, err);
	}
	rz_stmt_done(st);
	return rc;
}

static int64_t has_key(rz_db_t *db, const char *k)
{
	return query_int(db, "SELECT count(*) FROM kv WHERE k = ?1", k);
}

static int tx_put(rz_db_t *db, void *arg, rz_err_t *err)
{
	return put(db, arg, err);
}

static int tx_put_then_fail(rz_db_t *db, void *arg, rz_err_t *err)
{
	int rc = put(db, arg, err);

	ck_assert_int_eq(rc, 0);
	return rz_err_set(err, REZUS_EINVALID, "test: refused");
}

START_TEST(test_tx_commit_and_rollback)
{
	rz_db_t *db = open_kv();
	rz_db_t *other = NULL;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_db_tx(db, tx_put, "a", &err), 0);
	ck_assert_int_eq(rz_db_tx(db, tx_put_then_fail, "b", &err), REZUS_EINVALID);
	ck_assert_str_eq(err.msg, "test: refused");
	ck_assert_int_eq(has_key(db, "a"), 1);
	ck_assert_int_eq(has_key(db, "b"), 0);

	/* Committed for real: a second connection sees it. */
	other = open_ok(three, 0, -1);
	ck_assert_int_eq(has_key(other, "a"), 1);
	ck_assert_int_eq(has_key(other, "b"), 0);
	rz_db_close(other);

	/* The connection is back outside a transaction: a new one begins fine. */
	ck_assert_int_eq(rz_db_tx(db, tx_put, "c", &err), 0);
	ck_assert_int_eq(has_key(db, "c"), 1);
	rz_db_close(db);
}
END_TEST

static int tx_outer_keeps_going(rz_db_t *db, void *arg, rz_err_t *err)
{
	rz_err_t inner = { 0 };

	ck_assert_int_eq(put(db, "outer", err), 0);
	ck_assert_int_eq(rz_db_tx(db, tx_put_then_fail, "inner", &inner), REZUS_EINVALID);
	ck_assert_int_eq(has_key(db, "inner"), 0);
	ck_assert_int_eq(has_key(db, "outer"), 1);
	return rz_db_tx(db, tx_put, "inner2", err);
}

static int tx_outer_fails_after_inner(rz_db_t *db, void *arg, rz_err_t *err)
{
	ck_assert_int_eq(rz_db_tx(db, tx_put, "nested", err), 0);
	ck_assert_int_eq(has_key(db, "nested"), 1);
	return rz_err_set(err, REZUS_EINVALID, "test: outer refused");
}

START_TEST(test_tx_nested)
{
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };

	ck_assert_msg(rz_db_tx(db, tx_outer_keeps_going, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(has_key(db, "outer"), 1);
	ck_assert_int_eq(has_key(db, "inner"), 0);
	ck_assert_int_eq(has_key(db, "inner2"), 1);

	ck_assert_int_eq(rz_db_tx(db, tx_outer_fails_after_inner, NULL, &err), REZUS_EINVALID);
	ck_assert_int_eq(has_key(db, "nested"), 0);
	rz_db_close(db);
}
END_TEST

START_TEST(test_tx_commit_failure_rolls_back)
{
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };

	/* A deferred constraint is checked at COMMIT: the commit fails and nothing stays. */
	exec_ok(db, "CREATE TABLE p (id INTEGER PRIMARY KEY)");
	exec_ok(db,
	        "CREATE TABLE c (p_id INTEGER REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)");
	ck_assert_int_eq(rz_db_tx(db, tx_put, "a", &err), 0);
	exec_ok(db, "CREATE TRIGGER kv_orphan AFTER INSERT ON kv BEGIN "
	            "INSERT INTO c (p_id) VALUES (42); END");
	ck_assert_int_eq(rz_db_tx(db, tx_put, "b", &err), RZ_EDB);
	ck_assert_str_eq(err.msg, "db: commit failed: FOREIGN KEY constraint failed");
	ck_assert_int_eq(has_key(db, "a"), 1);
	ck_assert_int_eq(has_key(db, "b"), 0);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM c", NULL), 0);
	ck_assert_int_eq(rz_db_tx(NULL, tx_put, "x", &err), REZUS_EINVALID);
	rz_db_close(db);
}
END_TEST

START_TEST(test_stmt_cache)
{
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };
	char *copy = strdup("SELECT ?1 || '!'");
	rz_stmt_t *a = rz_db_stmt(db, "SELECT ?1 || '!'", &err);
	rz_stmt_t *b = rz_db_stmt(db, copy, &err);
	rz_stmt_t *other = rz_db_stmt(db, "SELECT ?1 || '?'", &err);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(a, b);
	ck_assert_ptr_nonnull(other);
	ck_assert_ptr_ne(a, other);

	ck_assert_int_eq(rz_stmt_bind_text(a, 1, "one"), 0);
	ck_assert_int_eq(rz_stmt_step(a, &err), 1);
	ck_assert_str_eq(rz_stmt_text(a, 0), "one!");
	ck_assert_int_eq(rz_stmt_step(a, &err), 0);
	rz_stmt_done(a);

	/* Reused after done; bindings were cleared, so an unbound ?1 is NULL. */
	b = rz_db_stmt(db, copy, &err);
	ck_assert_ptr_eq(a, b);
	ck_assert_int_eq(rz_stmt_step(b, &err), 1);
	ck_assert_int_eq(rz_stmt_is_null(b, 0), 1);
	ck_assert_ptr_null(rz_stmt_text(b, 0));
	rz_stmt_done(b);
	ck_assert_int_eq(rz_stmt_bind_text(b, 1, "two"), 0);
	ck_assert_int_eq(rz_stmt_step(b, &err), 1);
	ck_assert_str_eq(rz_stmt_text(b, 0), "two!");
	rz_stmt_done(b);
	free(copy);
	rz_db_close(db);
}
END_TEST

/* A query run again while its statement is being stepped (a callback of the rows it reads
 * runs the same query) gets a statement of its own: the outer walk goes on with its own
 * bindings (it used to start over with them cleared: LIMIT NULL, "datatype mismatch"). */
START_TEST(test_stmt_nested_same_sql)
{
	static const char sql[] = "SELECT k FROM kv WHERE k > ?1 ORDER BY k LIMIT ?2";
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };
	rz_stmt_t *outer, *inner;
	char seen[64] = "";

	exec_ok(db, "INSERT INTO kv (k, v) VALUES ('a', '1'), ('b', '2'), ('c', '3'), ('d', '4')");
	outer = rz_db_stmt(db, sql, &err);
	ck_assert_ptr_nonnull(outer);
	rz_stmt_bind_text(outer, 1, "");
	rz_stmt_bind_int64(outer, 2, 3);
	while (rz_stmt_step(outer, &err) == 1) {
		int n = 0;

		strcat(seen, rz_stmt_text(outer, 0));
		inner = rz_db_stmt(db, sql, &err);
		ck_assert_ptr_nonnull(inner);
		ck_assert_ptr_ne(inner, outer);
		rz_stmt_bind_text(inner, 1, "b");
		rz_stmt_bind_int64(inner, 2, 10);
		while (rz_stmt_step(inner, &err) == 1) {
			n++;
		}
		rz_stmt_done(inner);
		ck_assert_int_eq(n, 2);
	}
	ck_assert_msg(err.code == 0, "outer walk failed: %s", err.msg);
	rz_stmt_done(outer);
	ck_assert_str_eq(seen, "abc");
	/* neither is busy now: one of the two is handed out again, no third is made */
	ck_assert_ptr_eq(rz_db_stmt(db, sql, &err), inner);
	rz_db_close(db);
}
END_TEST

START_TEST(test_bind_round_trip)
{
	static const unsigned char bytes[] = { 0x00, 0x01, 0xff, 0x00, 0x7f };
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };
	rz_stmt_t *st;
	const void *p;
	size_t len = 99;

	exec_ok(db, "CREATE TABLE t (a TEXT, b INTEGER, c INTEGER, d BLOB, e ANY, f BLOB, g TEXT) "
	            "STRICT");
	st = rz_db_stmt(db, "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &err);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(rz_stmt_bind_text(st, 1, "h\xc3\xa9llo 'x'"), 0);
	ck_assert_int_eq(rz_stmt_bind_int64(st, 2, INT64_MIN), 0);
	ck_assert_int_eq(rz_stmt_bind_int64(st, 3, INT64_MAX), 0);
	ck_assert_int_eq(rz_stmt_bind_blob(st, 4, bytes, sizeof(bytes)), 0);
	ck_assert_int_eq(rz_stmt_bind_null(st, 5), 0);
	ck_assert_int_eq(rz_stmt_bind_blob(st, 6, NULL, 0), 0);
	ck_assert_int_eq(rz_stmt_bind_text(st, 7, NULL), 0);
	ck_assert_int_eq(rz_stmt_bind_text(st, 8, "no such parameter"), RZ_EDB);
	ck_assert_int_eq(rz_stmt_bind_blob(st, 4, NULL, 3), RZ_EDB);
	ck_assert_int_eq(rz_stmt_step(st, &err), 0);
	rz_stmt_done(st);
	ck_assert_int_eq(rz_db_changes(db), 1);
	ck_assert_int_eq(rz_db_last_rowid(db), 1);

	st = rz_db_stmt(db, "SELECT a, b, c, d, e, f, g, typeof(f) FROM t", &err);
	ck_assert_int_eq(rz_stmt_step(st, &err), 1);
	ck_assert_str_eq(rz_stmt_text(st, 0), "h\xc3\xa9llo 'x'");
	ck_assert_int_eq(rz_stmt_int64(st, 1), INT64_MIN);
	ck_assert_int_eq(rz_stmt_int64(st, 2), INT64_MAX);
	p = rz_stmt_blob(st, 3, &len);
	ck_assert_uint_eq(len, sizeof(bytes));
	ck_assert_mem_eq(p, bytes, sizeof(bytes));
	ck_assert_int_eq(rz_stmt_is_null(st, 3), 0);
	ck_assert_int_eq(rz_stmt_is_null(st, 4), 1);
	ck_assert_int_eq(rz_stmt_is_null(st, 5), 0);
	rz_stmt_blob(st, 5, &len);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(rz_stmt_is_null(st, 6), 1);
	ck_assert_str_eq(rz_stmt_text(st, 7), "blob");
	ck_assert_int_eq(rz_stmt_step(st, &err), 0);
	rz_stmt_done(st);
	rz_db_close(db);
}
END_TEST

START_TEST(test_exec_changes_rowid)
{
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };

	exec_ok(db, "INSERT INTO kv (k, v) VALUES ('a', '1'), ('b', '1'), ('c', '2')");
	ck_assert_int_eq(rz_db_changes(db), 3);
	ck_assert_int_eq(rz_db_last_rowid(db), 3);
	exec_ok(db, "UPDATE kv SET v = '3' WHERE v = '1'");
	ck_assert_int_eq(rz_db_changes(db), 2);
	ck_assert_int_eq(rz_db_exec(db, "INSERT INTO kv (k, v) VALUES ('a', '9')", &err), RZ_EDB);
	ck_assert_str_eq(err.msg, "db: exec failed: UNIQUE constraint failed: kv.k");
	ck_assert_int_eq(rz_db_exec(db, "DROP TABLE nosuch", &err), RZ_EDB);
	ck_assert_str_eq(err.msg, "db: exec failed: no such table: nosuch");
	rz_db_close(db);
}
END_TEST

START_TEST(test_foreign_key_rejected)
{
	rz_db_t *db = open_ok(three, 3, -1);
	rz_err_t err = { 0 };
	rz_stmt_t *st = rz_db_stmt(db, "INSERT INTO t2 (t1_id) VALUES (?1)", &err);

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(rz_stmt_bind_int64(st, 1, 999), 0);
	ck_assert_int_eq(rz_stmt_step(st, &err), RZ_EDB);
	ck_assert_int_eq(err.code, RZ_EDB);
	ck_assert_str_eq(err.msg, "db: step failed: FOREIGN KEY constraint failed");
	rz_stmt_done(st);
	ck_assert_int_eq(rz_stmt_bind_int64(st, 1, 1), 0);
	ck_assert_int_eq(rz_stmt_step(st, &err), 0);
	rz_stmt_done(st);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM t2", NULL), 2);
	rz_db_close(db);
}
END_TEST

START_TEST(test_bad_sql)
{
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };

	ck_assert_ptr_null(rz_db_stmt(db, "SELEC nope", &err));
	ck_assert_int_eq(err.code, RZ_EDB);
	ck_assert_str_eq(err.msg, "db: prepare failed: near \"SELEC\": syntax error");
	ck_assert_ptr_null(rz_db_stmt(db, "SELECT * FROM nosuch", &err));
	ck_assert_str_eq(err.msg, "db: prepare failed: no such table: nosuch");
	ck_assert_ptr_null(rz_db_stmt(db, "  ", &err));
	ck_assert_str_eq(err.msg, "db: prepare failed: empty statement");
	ck_assert_ptr_null(rz_db_stmt(db, "SELECT 1; DELETE FROM kv", &err));
	ck_assert_str_eq(err.msg, "db: prepare failed: more than one statement");
	ck_assert_ptr_null(rz_db_stmt(NULL, "SELECT 1", &err));
	ck_assert_int_eq(err.code, REZUS_EINVALID);
	/* A failed prepare is not cached: the next good one works. */
	ck_assert_ptr_nonnull(rz_db_stmt(db, "SELECT 1;  ", &err));
	rz_db_close(db);
}
END_TEST

START_TEST(test_null_handles)
{
	rz_err_t err = { 0 };

	rz_db_close(NULL);
	rz_stmt_done(NULL);
	ck_assert_int_eq(rz_db_schema_version(NULL), 0);
	ck_assert_int_eq(rz_db_ready(NULL), 0);
	ck_assert_int_eq(rz_db_changes(NULL), 0);
	ck_assert_int_eq(rz_stmt_step(NULL, &err), RZ_EDB);
	ck_assert_int_eq(rz_db_exec(NULL, "SELECT 1", &err), REZUS_EINVALID);
	ck_assert_int_eq(rz_db_open(NULL, path, &err), REZUS_EINVALID);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

static unsigned mode_of(const char *suffix)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	ck_assert_msg(stat(p, &st) == 0, "no %s", p);
	return (unsigned)(st.st_mode & 0777);
}

/* The database holds password hashes and sealed state: 0600 with a umask of 022, and so are
 * the -wal and -shm files SQLite makes beside it. */
START_TEST(test_files_private)
{
	mode_t old = umask(022);
	rz_db_t *db = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_db_open(&db, path, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rz_db_probe(db, &err), 0);
	umask(old);
	ck_assert_uint_eq(mode_of(""), 0600);
	ck_assert_uint_eq(mode_of("-wal"), 0600);
	ck_assert_uint_eq(mode_of("-shm"), 0600);
	rz_db_close(db);
}
END_TEST

/* 200 rows of 2 KB each: more than a page. */
static int tx_put_many(rz_db_t *db, void *arg, rz_err_t *err)
{
	rz_stmt_t *st;
	char k[32];
	int rc = 0;

	for (int i = 0; rc == 0 && i < 200; i++) {
		st = rz_db_stmt(db, "INSERT INTO kv (k, v) VALUES (?1, printf('%2000d', 1))", err);
		ck_assert_ptr_nonnull(st);
		snprintf(k, sizeof(k), "%s-%d", (const char *)arg, i);
		rc = rz_stmt_bind_text(st, 1, k);
		if (rc == 0) {
			rc = rz_stmt_step(st, err);
		}
		rz_stmt_done(st);
	}
	return rc;
}

/* A full disk (here: max_page_count reached) is -ENOSPC, not RZ_EDB, and is remembered
 * until a write commits again; rz_db_probe finds out when it does. */
START_TEST(test_full_is_storage_error)
{
	rz_db_t *db = NULL;
	rz_err_t err = { 0 };
	char why[256];
	int64_t pages = 0;

	ck_assert_msg(rz_db_open(&db, path, &err) == 0, "%s", err.msg);
	exec_ok(db, "CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)");
	ck_assert_int_eq(rz_db_storage_error(db, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(rz_db_query_int(db, "PRAGMA page_count", &pages, &err), 0);
	ck_assert_int_eq(rz_db_query_int(db, "PRAGMA max_page_count = 1", &pages, &err), 0);
	ck_assert_int_eq(rz_db_tx(db, tx_put_many, "a", &err), -ENOSPC);
	ck_assert_int_eq(rz_db_storage_error(db, why, sizeof(why)), -ENOSPC);
	ck_assert_msg(strstr(why, "full") != NULL, "%s", why);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM kv", NULL), 0);
	/* room again: nothing says so until a write commits, which the probe does */
	ck_assert_int_eq(rz_db_query_int(db, "PRAGMA max_page_count = 100000", &pages, &err), 0);
	ck_assert_int_eq(rz_db_storage_error(db, NULL, 0), -ENOSPC);
	ck_assert_msg(rz_db_probe(db, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rz_db_storage_error(db, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(rz_db_tx(db, tx_put_many, "b", &err), 0);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM kv", NULL), 200);
	rz_db_close(db);
}
END_TEST

/* ---- group commit: a sync the test holds back, and callbacks that record what they saw */

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;     /* syncs may return */
	int entered;  /* syncs begun */
	int finished; /* syncs returned */
	int fail;     /* the next sync fails with -EIO */
};

static struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0 };

static int held_sync(int fd, void *arg)
{
	struct gate *g = arg;
	int rc = fsync(fd) == 0 ? 0 : -errno;

	pthread_mutex_lock(&g->lock);
	g->entered++;
	pthread_cond_broadcast(&g->cond);
	while (!g->open) {
		pthread_cond_wait(&g->cond, &g->lock);
	}
	if (g->fail) {
		g->fail = 0;
		rc = -EIO;
	}
	g->finished++;
	pthread_mutex_unlock(&g->lock);
	return rc;
}

static int gate_get(int *field)
{
	int v;

	pthread_mutex_lock(&gate.lock);
	v = *field;
	pthread_mutex_unlock(&gate.lock);
	return v;
}

static void gate_set(int *field, int v)
{
	pthread_mutex_lock(&gate.lock);
	*field = v;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

#define WRITES 21

struct ack {
	int n;              /* callbacks run */
	int status[WRITES]; /* each one's status */
	int synced[WRITES]; /* syncs finished when it ran */
	int order_ok;       /* they ran in commit order */
};

static struct ack acks;
static int ack_ids[WRITES];

static void on_durable(void *arg, int status)
{
	int i = *(int *)arg;

	acks.order_ok = acks.order_ok && i == acks.n;
	acks.status[i] = status;
	acks.synced[i] = gate_get(&gate.finished);
	acks.n++;
}

/* Turn the loop until cond() or 10 s. */
static void loop_until(struct event_base *base, int (*cond)(void))
{
	for (int i = 0; i < 10000 && !cond(); i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
}

static int all_acked(void)
{
	return acks.n == WRITES;
}

static int one_entered(void)
{
	return gate_get(&gate.entered) >= 1;
}

static void insert(rz_db_t *db, int i)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "INSERT INTO t1 (v) VALUES ('write %d')", i);
	exec_ok(db, sql);
}

/* store.durability: full. No callback runs before the sync covering its commit has
 * returned, and the writes committed while one sync runs share the next one. */
START_TEST(test_group_commit_holds_replies)
{
	struct event_base *base = event_base_new();
	rz_db_t *db = open_ok(three, 3, -1);
	rz_db_stats_t stats;
	rz_err_t err = { 0 };

	memset(&acks, 0, sizeof(acks));
	acks.order_ok = 1;
	gate_set(&gate.open, 0);
	gate_set(&gate.entered, 0);
	gate_set(&gate.finished, 0);
	rz_db_set_sync_fn(db, held_sync, &gate);
	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_FULL, &err) == 0, "%s", err.msg);
	for (int i = 0; i < WRITES; i++) {
		ack_ids[i] = i;
	}
	insert(db, 0);
	rz_db_after_durable(db, on_durable, &ack_ids[0]);
	loop_until(base, one_entered); /* the first sync runs (and is held) */
	ck_assert_int_eq(gate_get(&gate.entered), 1);
	for (int i = 1; i < WRITES; i++) {
		insert(db, i);
		rz_db_after_durable(db, on_durable, &ack_ids[i]);
	}
	for (int i = 0; i < 200; i++) { /* 0.2 s of loop: nothing may be acknowledged */
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	ck_assert_int_eq(acks.n, 0);
	ck_assert_int_eq(gate_get(&gate.finished), 0);
	gate_set(&gate.open, 1);
	loop_until(base, all_acked);
	ck_assert_int_eq(acks.n, WRITES);
	ck_assert(acks.order_ok);
	/* the first write's sync, then one for the other twenty */
	ck_assert_int_eq(gate_get(&gate.entered), 2);
	ck_assert_int_ge(acks.synced[0], 1);
	for (int i = 0; i < WRITES; i++) {
		ck_assert_int_eq(acks.status[i], 0);
		ck_assert_int_ge(acks.synced[i], i == 0 ? 1 : 2);
	}
	rz_db_stats(db, &stats);
	ck_assert_uint_eq(stats.syncs, 2);
	ck_assert_uint_eq(stats.synced_commits, WRITES);
	/* nothing waits: at once */
	acks.n = 0;
	acks.order_ok = 1;
	rz_db_after_durable(db, on_durable, &ack_ids[0]);
	ck_assert_int_eq(acks.n, 1);
	rz_db_close(db);
	event_base_free(base);
}
END_TEST

/* A failed sync: the writes it covered are not acknowledged (their callbacks get the
 * error), the database reports the storage error, and writes after it are acknowledged
 * again once a sync succeeds. */
START_TEST(test_group_commit_failed_sync)
{
	struct event_base *base = event_base_new();
	rz_db_t *db = open_ok(three, 3, -1);
	rz_err_t err = { 0 };

	memset(&acks, 0, sizeof(acks));
	acks.order_ok = 1;
	gate_set(&gate.open, 1);
	gate_set(&gate.fail, 1);
	gate_set(&gate.finished, 0);
	rz_db_set_sync_fn(db, held_sync, &gate);
	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_FULL, &err) == 0, "%s", err.msg);
	for (int i = 0; i < WRITES; i++) {
		ack_ids[i] = i;
	}
	insert(db, 0);
	rz_db_after_durable(db, on_durable, &ack_ids[0]);
	for (int i = 0; i < 5000 && acks.n < 1; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	ck_assert_int_eq(acks.n, 1);
	ck_assert_int_eq(acks.status[0], -EIO);
	ck_assert_int_eq(rz_db_storage_error(db, NULL, 0), -EIO);
	insert(db, 1);
	rz_db_after_durable(db, on_durable, &ack_ids[1]);
	for (int i = 0; i < 5000 && acks.n < 2; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	ck_assert_int_eq(acks.n, 2);
	ck_assert_int_eq(acks.status[1], 0);
	rz_db_close(db);
	event_base_free(base);
}
END_TEST

/* store.durability: normal. Replies are not held; checkpoints run on the checkpoint
 * thread (the loop's connection has no auto-checkpoint); a writer that never lets a
 * checkpoint catch up still finds the WAL bounded: past RZ_DB_WAL_MAX_FRAMES it is
 * restarted. */
START_TEST(test_checkpoints_off_the_loop)
{
	struct event_base *base = event_base_new();
	rz_db_t *db = open_ok(three, 3, -1);
	rz_db_stats_t stats;
	rz_err_t err = { 0 };
	char *wal = NULL;
	struct stat sb;
	uint64_t before, restarts;
	bool owed;
	int64_t autockpt = -1;

	ck_assert_int_eq(rz_db_query_int(db, "PRAGMA wal_autocheckpoint", &autockpt, &err), 0);
	ck_assert_int_eq(autockpt, 1000); /* a tool's connection: SQLite's own */
	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_NORMAL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rz_db_query_int(db, "PRAGMA wal_autocheckpoint", &autockpt, &err), 0);
	ck_assert_int_eq(autockpt, 0);
	acks.n = 0;
	acks.order_ok = 1;
	ack_ids[0] = 0;
	exec_ok(db, "CREATE TABLE big (b BLOB)");
	rz_db_after_durable(db, on_durable, &ack_ids[0]);
	ck_assert_int_eq(acks.n, 1); /* at once */
	/* rounds of about 2,000 pages, each waiting for its checkpoint */
	for (int round = 0; round < 16; round++) { /* about 40,000 pages in all */
		rz_db_stats(db, &stats);
		before = stats.checkpoints;
		for (int i = 0; i < 1000; i++) {
			exec_ok(db, "INSERT INTO big (b) VALUES (randomblob(6000))");
		}
		/* a checkpoint, and when the round took the WAL past its bound, the RESTART that
		 * brings it back: the next round never starts while one is owed, however slowly
		 * the checkpoint thread (nice +10) gets the CPU on a loaded machine */
		rz_db_stats(db, &stats);
		restarts = stats.restarts;
		owed = stats.wal_frames > RZ_DB_WAL_MAX_FRAMES;
		/* a hang guard, not a speed test: the commit hook asks for the RESTART whenever
		 * the WAL is past its bound, and the thread gets there however loaded the machine
		 * (it once stopped here after 10 s: a WAL a checkpoint had left just under the
		 * bound and the round's last commits took over it was not checkpointed again) */
		for (int i = 0; i < 50000; i++) {
			rz_db_stats(db, &stats);
			if (stats.checkpoints > before && (!owed || stats.restarts > restarts)) {
				break;
			}
			usleep(1000);
		}
		ck_assert_uint_gt(stats.checkpoints, before);
		ck_assert_msg(!owed || stats.restarts > restarts, "no RESTART past %lld pages",
		              (long long)RZ_DB_WAL_MAX_FRAMES);
	}
	rz_db_stats(db, &stats);
	ck_assert_uint_ge(stats.checkpoints, 16);
	ck_assert_uint_eq(stats.syncs, 0);
	ck_assert_int_gt(asprintf(&wal, "%s-wal", path), 0);
	ck_assert_int_eq(stat(wal, &sb), 0);
	ck_assert_msg(sb.st_size <= (off_t)(RZ_DB_WAL_MAX_FRAMES + 6000) * (4096 + 24) + 32,
	              "WAL of %lld bytes", (long long)sb.st_size);
	printf("# %llu checkpoints, %llu restarts, WAL %lld bytes\n",
	       (unsigned long long)stats.checkpoints, (unsigned long long)stats.restarts,
	       (long long)sb.st_size);
	free(wal);
	rz_db_close(db);
	event_base_free(base);
}
END_TEST

/* ---- the loop turn's group: writes share one commit, their replies wait for it */

static int group_calls, group_status;

static void on_group_done(void *arg, int status)
{
	ck_assert_ptr_eq(arg, &group_calls);
	group_calls++;
	group_status = status;
}

/* Rows of kv another connection sees: what is committed. */
static int64_t committed_rows(void)
{
	rz_db_t *ro = NULL;
	rz_err_t err = { 0 };
	int64_t n;

	ck_assert_msg(rz_db_open_readonly(&ro, path, &err) == 0, "%s", err.msg);
	n = query_int(ro, "SELECT count(*) FROM kv", NULL);
	rz_db_close(ro);
	return n;
}

START_TEST(test_turn_group_one_commit)
{
	struct event_base *base = event_base_new();
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };
	char key[16];

	memset(&acks, 0, sizeof(acks));
	acks.order_ok = 1;
	group_calls = 0;
	/* before rz_db_start it is rz_db_tx: committed when it returns */
	ck_assert(!rz_db_can_group(db));
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "before", &err), 0);
	ck_assert_int_eq(committed_rows(), 1);
	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_NORMAL, &err) == 0, "%s", err.msg);
	rz_db_set_group_fn(db, on_group_done, &group_calls);
	ck_assert(rz_db_can_group(db));
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "g%d", i);
		ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, key, &err), 0);
		ack_ids[i] = i;
		rz_db_after_durable(db, on_durable, &ack_ids[i]);
	}
	/* a failed write in the group takes only its own work back */
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put_then_fail, "refused", &err), REZUS_EINVALID);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM kv", NULL), 4); /* this connection */
	ck_assert_int_eq(committed_rows(), 1);                               /* not yet committed */
	ck_assert_int_eq(acks.n, 0); /* so nobody has been answered */
	ck_assert_int_eq(group_calls, 0);
	event_base_loop(base, EVLOOP_NONBLOCK); /* the turn ends: one commit for the three */
	ck_assert_int_eq(group_calls, 1);
	ck_assert_int_eq(group_status, 0);
	ck_assert_int_eq(acks.n, 3);
	ck_assert(acks.order_ok);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(acks.status[i], 0);
	}
	ck_assert_int_eq(committed_rows(), 4);
	ck_assert_int_eq(has_key(db, "refused"), 0);

	/* a write that is not grouped commits the open group first, then itself */
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "g3", &err), 0);
	ack_ids[3] = 3;
	rz_db_after_durable(db, on_durable, &ack_ids[3]);
	ck_assert_int_eq(rz_db_tx(db, tx_put, "alone", &err), 0);
	ck_assert_int_eq(group_calls, 2);
	ck_assert_int_eq(acks.n, 4);
	ck_assert_int_eq(committed_rows(), 6);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(group_calls, 2); /* nothing was left open */

	/* a group is bounded: the write past RZ_DB_GROUP_MAX waits for nobody, it commits on
	 * its own after the group */
	for (int i = 0; i < RZ_DB_GROUP_MAX; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		ck_assert(rz_db_can_group(db));
		ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, key, &err), 0);
	}
	ck_assert(!rz_db_can_group(db));
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "past", &err), 0);
	ck_assert_int_eq(committed_rows(), 6 + RZ_DB_GROUP_MAX + 1);
	ck_assert_int_eq(group_calls, 3);

	/* rz_db_stop commits what is open */
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "last", &err), 0);
	rz_db_close(db);
	ck_assert_int_eq(group_calls, 4);
	db = open_ok(three, 0, -1);
	ck_assert_int_eq(has_key(db, "last"), 1);
	rz_db_close(db);
	event_base_free(base);
}
END_TEST

/* A group whose commit fails: every write in it is gone and each waiter hears it. */
START_TEST(test_turn_group_commit_fails)
{
	struct event_base *base = event_base_new();
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };

	memset(&acks, 0, sizeof(acks));
	acks.order_ok = 1;
	group_calls = 0;
	exec_ok(db, "CREATE TABLE p (id INTEGER PRIMARY KEY)");
	exec_ok(db,
	        "CREATE TABLE c (p_id INTEGER REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)");
	exec_ok(db, "CREATE TRIGGER kv_orphan AFTER INSERT ON kv WHEN NEW.k = 'poison' BEGIN "
	            "INSERT INTO c (p_id) VALUES (42); END");
	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_NORMAL, &err) == 0, "%s", err.msg);
	rz_db_set_group_fn(db, on_group_done, &group_calls);
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "a", &err), 0);
	ack_ids[0] = 0;
	rz_db_after_durable(db, on_durable, &ack_ids[0]);
	/* the deferred constraint lets the savepoint go; the COMMIT refuses */
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "poison", &err), 0);
	ack_ids[1] = 1;
	rz_db_after_durable(db, on_durable, &ack_ids[1]);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(group_calls, 1);
	ck_assert_int_eq(rz_db_uncommitted(group_status), -EIO);
	ck_assert_int_eq(acks.n, 2);
	ck_assert_int_eq(rz_db_uncommitted(acks.status[0]), -EIO);
	ck_assert_int_eq(rz_db_uncommitted(acks.status[1]), -EIO);
	ck_assert_int_eq(rz_db_uncommitted(0), 0);
	ck_assert_int_eq(rz_db_uncommitted(-EIO), 0); /* a failed sync: not this */
	ck_assert_int_eq(has_key(db, "a"), 0);
	ck_assert_int_eq(has_key(db, "poison"), 0);
	ck_assert_int_eq(committed_rows(), 0);
	/* the next group works */
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "b", &err), 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(group_calls, 2);
	ck_assert_int_eq(group_status, 0);
	ck_assert_int_eq(committed_rows(), 1);
	rz_db_close(db);
	event_base_free(base);
}
END_TEST

/* A write whose failure ends the whole transaction (RAISE(ROLLBACK) here; a full disk in the
 * field) takes the group's earlier writes with it: they are told at once, and a later write
 * starts a group of its own instead of being committed with theirs. */
START_TEST(test_turn_group_rolled_back_whole)
{
	struct event_base *base = event_base_new();
	rz_db_t *db = open_kv();
	rz_err_t err = { 0 };

	memset(&acks, 0, sizeof(acks));
	acks.order_ok = 1;
	group_calls = 0;
	exec_ok(db, "CREATE TRIGGER kv_boom BEFORE INSERT ON kv WHEN NEW.k = 'boom' BEGIN "
	            "SELECT RAISE(ROLLBACK, 'boom'); END");
	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_NORMAL, &err) == 0, "%s", err.msg);
	rz_db_set_group_fn(db, on_group_done, &group_calls);
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "a", &err), 0);
	ack_ids[0] = 0;
	rz_db_after_durable(db, on_durable, &ack_ids[0]);
	ck_assert_int_ne(rz_db_tx_grouped(db, tx_put, "boom", &err), 0);
	ck_assert_int_eq(acks.n, 1); /* told at once */
	ck_assert_int_ne(rz_db_uncommitted(acks.status[0]), 0);
	ck_assert_int_eq(group_calls, 1);
	ck_assert_int_ne(group_status, 0);
	ck_assert_int_eq(rz_db_tx_grouped(db, tx_put, "c", &err), 0);
	ack_ids[1] = 1;
	rz_db_after_durable(db, on_durable, &ack_ids[1]);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(acks.n, 2);
	ck_assert_int_eq(acks.status[1], 0);
	ck_assert_int_eq(has_key(db, "a"), 0);
	ck_assert_int_eq(has_key(db, "c"), 1);
	ck_assert_int_eq(committed_rows(), 1);
	rz_db_close(db);
	event_base_free(base);
}
END_TEST

static Suite *db_suite(void)
{
	Suite *s = suite_create("db");
	TCase *mig = tcase_create("migrations");
	TCase *api = tcase_create("api");
	size_t n = 0;

	rz_db_migrations(&n);
	tcase_add_checked_fixture(mig, setup, teardown);
	tcase_add_test(mig, test_open_empty);
	tcase_add_test(mig, test_reopen_is_noop);
	tcase_add_test(mig, test_synthetic_from_empty);
	tcase_add_loop_test(mig, test_synthetic_from_each_version, 0, 3);
	tcase_add_test(mig, test_failing_step_rolls_back_only_itself);
	tcase_add_test(mig, test_failing_first_step_leaves_version_zero);
	tcase_add_test(mig, test_newer_schema_refused);
	tcase_add_test(mig, test_newer_schema_refused_by_product);
	tcase_add_loop_test(mig, test_product_from_each_version, 0, (int)n);
	tcase_add_test(mig, test_objects_rebuilt_keep_their_children);
	tcase_add_test(mig, test_invalid_migration_list);
	tcase_add_test(mig, test_open_failure);
	suite_add_tcase(s, mig);

	tcase_add_checked_fixture(api, setup, teardown);
	tcase_add_test(api, test_tx_commit_and_rollback);
	tcase_add_test(api, test_tx_nested);
	tcase_add_test(api, test_tx_commit_failure_rolls_back);
	tcase_add_test(api, test_stmt_cache);
	tcase_add_test(api, test_stmt_nested_same_sql);
	tcase_add_test(api, test_bind_round_trip);
	tcase_add_test(api, test_exec_changes_rowid);
	tcase_add_test(api, test_foreign_key_rejected);
	tcase_add_test(api, test_bad_sql);
	tcase_add_test(api, test_null_handles);
	tcase_add_test(api, test_files_private);
	tcase_add_test(api, test_full_is_storage_error);
	tcase_add_test(api, test_group_commit_holds_replies);
	tcase_add_test(api, test_group_commit_failed_sync);
	tcase_add_test(api, test_checkpoints_off_the_loop);
	tcase_add_test(api, test_turn_group_one_commit);
	tcase_add_test(api, test_turn_group_commit_fails);
	tcase_add_test(api, test_turn_group_rolled_back_whole);
	tcase_set_timeout(api, 120);
	suite_add_tcase(s, api);
	return s;
}

int main(void)
{
	return rzt_run(db_suite());
}
