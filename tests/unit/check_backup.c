/*
 * tests/unit/check_backup.c - the backup file (core/store/backup.c, core/store/restore.c):
 * a round trip through the file, with and without the sealed state key; a changed byte
 * anywhere, a truncated file, a wrong passphrase and a newer schema refused; the list, the
 * retention and what a restore would change. Each test works in a fresh private directory
 * on a database with the product's schema and a few rows.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "core/base/errors.h"
#include "core/base/log.h"
#include "core/store/backup.h"
#include "core/store/db.h"
#include "core/store/restore.h"
#include "tests/unit/testutil.h"

static char *dir, *db_path, *key_path, *pass_path, *out_dir, *logpath;
static unsigned char key[RZ_BACKUP_KEY_SIZE];

static void exec_ok(rz_db_t *db, const char *sql)
{
	rz_err_t err = { 0 };

	ck_assert_msg(rz_db_exec(db, sql, &err) == 0, "%s: %s", sql, err.msg);
}

/* A tenant with two state versions, a node group, a user: revision 4. */
static void seed(rz_db_t *db)
{
	exec_ok(db, "INSERT INTO objects VALUES ('Tenant', '', 't1', 'u1', 1, '{}')");
	exec_ok(db, "INSERT INTO objects VALUES ('NodeGroup', 't1', 'cp', 'u2', 2, '{}')");
	exec_ok(db, "INSERT INTO objects VALUES ('User', '', 'alice', 'u3', 3, '{}')");
	exec_ok(db, "INSERT INTO credentials (user, hash) VALUES ('alice', 'h')");
	exec_ok(db, "INSERT INTO tfstate_versions (tenant, version, md5, time, run, size, blob)"
	            " VALUES ('t1', 1, 'm1', 't', 'r', 1, x'00')");
	exec_ok(db, "INSERT INTO tfstate_versions (tenant, version, md5, time, run, size, blob)"
	            " VALUES ('t1', 2, 'm2', 't', 'r', 1, x'01')");
	exec_ok(db, "INSERT INTO tenant_outputs (tenant, name, time, run, blob)"
	            " VALUES ('t1', 'kubeconfig', 't', 'r', x'02')");
	exec_ok(db, "UPDATE revision SET rv = 4");
}

static void setup(void)
{
	rz_db_t *db = NULL;
	rz_err_t err = { 0 };

	dir = rzt_tmpdir();
	ck_assert_int_gt(asprintf(&db_path, "%s/rezus.db", dir), 0);
	ck_assert_int_gt(asprintf(&key_path, "%s/state.key", dir), 0);
	ck_assert_int_gt(asprintf(&pass_path, "%s/pass", dir), 0);
	ck_assert_int_gt(asprintf(&out_dir, "%s/backups", dir), 0);
	ck_assert_int_gt(asprintf(&logpath, "%s/log", dir), 0);
	ck_assert_int_eq(rz_log_open(logpath, NULL), 0);
	ck_assert_int_eq(sodium_init() >= 0, 1);
	ck_assert_msg(rz_db_open(&db, db_path, &err) == 0, "%s", err.msg);
	seed(db);
	rz_db_close(db);
	randombytes_buf(key, sizeof(key));
	ck_assert_int_eq(rz_restore_save_key(key_path, key, &err), 0);
	rzt_write_file(pass_path, "correct horse battery staple\n");
}

static void teardown(void)
{
	rz_log_close();
	rzt_rmrf(dir);
	free(dir);
	free(db_path);
	free(key_path);
	free(pass_path);
	free(out_dir);
	free(logpath);
}

/* Create backup name (with the passphrase when pass) and return its path (caller frees). */
static char *make(const char *name, bool pass, json_t **manifest)
{
	rz_backup_opts_t o = {
		db_path, key_path, out_dir, name, "manual", pass ? pass_path : NULL
	};
	rz_err_t err = { 0 };
	json_t *m = NULL;
	char *path = NULL;

	ck_assert_msg(rz_backup_create(&o, &m, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(asprintf(&path, "%s/%s" RZ_BACKUP_SUFFIX, out_dir, name), 0);
	if (manifest != NULL) {
		*manifest = m;
	} else {
		json_decref(m);
	}
	return path;
}

static int64_t jint(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_integer_value(b ? json_object_get(v, b) : v);
}

static long file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (long)st.st_size;
}

static void flip_byte(const char *path, long at)
{
	FILE *f = fopen(path, "r+b");
	int c;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, at, SEEK_SET), 0);
	c = fgetc(f);
	ck_assert_int_eq(fseek(f, at, SEEK_SET), 0);
	fputc(c ^ 0x20, f);
	fclose(f);
}

START_TEST(test_round_trip)
{
	json_t *m = NULL;
	char *path = make("backup-a", true, &m), *copy = NULL, fp[33];
	rz_restore_contents_t c;
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;
	struct stat st;
	json_t *report = NULL;
	size_t known = 0;

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(jint(m, "revision", NULL), 4);
	ck_assert_int_eq(jint(m, "objects", "Tenant"), 1);
	ck_assert_int_eq(jint(m, "objects", "NodeGroup"), 1);
	ck_assert_int_eq(jint(m, "objects", "User"), 1);
	ck_assert_int_eq(jint(m, "users", NULL), 1);
	ck_assert_int_eq(jint(m, "stateVersions", NULL), 2);
	ck_assert_int_eq(jint(m, "sealedOutputs", NULL), 1);
	rz_db_migrations(&known);
	ck_assert_int_eq(jint(m, "schemaVersion", NULL), (int64_t)known);
	ck_assert_int_eq(jint(m, "format", NULL), RZ_BACKUP_FORMAT);
	ck_assert_int_eq(json_is_true(json_object_get(json_object_get(m, "stateKey"), "included")),
	                 1);
	rz_backup_key_fingerprint(key, fp);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(m, "stateKey"), "fingerprint")), fp);

	ck_assert_int_gt(asprintf(&copy, "%s/restored.db", dir), 0);
	ck_assert_msg(rz_restore_read(path, copy, "correct horse battery staple", 0, &c, &err) == 0,
	              "%s", err.msg);
	ck_assert_int_eq(c.key_included, 1);
	ck_assert_int_eq(c.key_unsealed, 1);
	ck_assert_int_eq(memcmp(c.key, key, sizeof(key)), 0);
	ck_assert_int_eq(json_equal(c.manifest, m), 1);
	ck_assert_int_eq(stat(copy, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(rz_restore_check_db(copy, &err), 0);
	/* the unpacked database is the same: nothing to change against the original */
	ck_assert_int_eq(rz_restore_diff(db_path, copy, &report, &err), 0);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "Tenant", "unchanged"), 1);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "Tenant", "changed"), 0);
	ck_assert_int_eq(jint(report, "stateVersions", "unchanged"), 2);
	ck_assert_int_eq(jint(report, "revision", "backup"), 4);
	ck_assert_int_eq(rz_db_open_readonly(&db, copy, &err), 0);
	ck_assert_int_eq(rz_db_schema_version(db), jint(m, "schemaVersion", NULL));
	rz_db_close(db);

	json_decref(report);
	json_decref(c.manifest);
	json_decref(m);
	free(copy);
	free(path);
}
END_TEST

START_TEST(test_without_passphrase)
{
	json_t *m = NULL;
	char *path = make("backup-b", false, &m);
	rz_restore_contents_t c;
	rz_err_t err = { 0 };
	FILE *f;
	char line[256];
	bool found = false;

	ck_assert_int_eq(json_is_false(json_object_get(json_object_get(m, "stateKey"), "included")),
	                 1);
	/* made without a passphrase: its checksum is not keyed, read with one only when asked */
	ck_assert_int_eq(rz_restore_read(path, NULL, "correct horse battery staple",
	                                 RZ_RESTORE_UNKEYED, &c, &err),
	                 0);
	ck_assert_int_eq(c.key_included, 0);
	ck_assert_int_eq(c.key_unsealed, 0);
	/* the key is nowhere in the file */
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	while (fread(line, 1, sizeof(line), f) > 0) {
		found = found || memmem(line, sizeof(line), key, 8) != NULL;
	}
	fclose(f);
	ck_assert_int_eq(found, 0);
	json_decref(c.manifest);
	json_decref(m);
	free(path);
}
END_TEST

/* A changed byte anywhere: the magic, the manifest, the key line, the payload, the end. */
START_TEST(test_corrupted_byte_refused)
{
	char *path = make("backup-c", true, NULL), *copy = NULL, *save = NULL;
	long size = file_size(path);
	long at[] = { 3, 40, size / 2, size - 200, size - 10 };
	rz_restore_contents_t c;
	rz_err_t err = { 0 };
	int rc;

	ck_assert_int_gt(asprintf(&copy, "%s/restored.db", dir), 0);
	ck_assert_int_gt(asprintf(&save, "%s.orig", path), 0);
	ck_assert_int_eq(rename(path, save), 0);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		FILE *in = fopen(save, "rb"), *out = fopen(path, "wb");
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
			fwrite(buf, 1, n, out);
		}
		fclose(in);
		fclose(out);
		flip_byte(path, at[i]);
		rz_err_clear(&err);
		rc = rz_restore_read(path, copy, "correct horse battery staple", 0, &c, &err);
		ck_assert_msg(rc == RZ_ECORRUPT || rc == RZ_EPARSE, "byte %ld: %d %s", at[i], rc,
		              err.msg);
		ck_assert_ptr_null(c.manifest);
		ck_assert_int_eq(access(copy, F_OK), -1); /* no database left behind */
	}
	/* in the payload it is the checksum that says so */
	flip_byte(path, size - 10);
	flip_byte(path, size / 2);
	ck_assert_int_eq(rz_restore_read(path, NULL, "correct horse battery staple", 0, &c, &err),
	                 RZ_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(err.msg, "checksum mismatch"));
	free(save);
	free(copy);
	free(path);
}
END_TEST

START_TEST(test_truncated_refused)
{
	char *path = make("backup-d", false, NULL);
	long size = file_size(path);
	long cut[] = { size - 1, size - 92, size / 2, 60, 5, 0 };
	rz_restore_contents_t c;
	rz_err_t err = { 0 };
	json_t *m = NULL;

	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		ck_assert_int_eq(truncate(path, cut[i]), 0);
		rz_err_clear(&err);
		ck_assert_msg(rz_restore_read(path, NULL, NULL, 0, &c, &err) == RZ_ECORRUPT ||
		                  (cut[i] == 0 && err.code == RZ_EPARSE),
		              "cut at %ld: %s", cut[i], err.msg);
		ck_assert_int_ne(rz_restore_inspect(path, &m, NULL, &err), 0);
		ck_assert_ptr_null(m);
	}
	free(path);
}
END_TEST

START_TEST(test_wrong_passphrase_refused)
{
	char *path = make("backup-e", true, NULL);
	rz_restore_contents_t c;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_restore_read(path, NULL, "not the passphrase", 0, &c, &err), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(err.msg, "wrong passphrase"));
	ck_assert_int_eq(c.key_unsealed, 0);
	ck_assert_ptr_null(c.manifest);
	/* without one the keyed checksum cannot be checked: refused, saying so */
	ck_assert_int_eq(rz_restore_read(path, NULL, NULL, 0, &c, &err), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(err.msg, "keyed with the backup passphrase"));
	ck_assert_ptr_null(c.manifest);
	free(path);
}
END_TEST

/* What someone without the passphrase can do to a file: rewrite its end marker with the
 * checksum of what it now holds, unkeyed. */
static void reseal_unkeyed(const char *path)
{
	long size = file_size(path);
	unsigned char *buf = malloc((size_t)size), h[32];
	char hexsum[65];
	FILE *f = fopen(path, "r+b");

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
	crypto_generichash(h, sizeof(h), buf, (size_t)size - 92, NULL, 0);
	sodium_bin2hex(hexsum, sizeof(hexsum), h, sizeof(h));
	ck_assert_int_eq(fseek(f, size - 65, SEEK_SET), 0);
	ck_assert_int_eq(fwrite(hexsum, 1, 64, f), 64);
	fclose(f);
	free(buf);
}

/* A backup made with a passphrase has a checksum keyed with it (format 2): without the
 * passphrase nobody writes one that passes, and a file whose checksum is not keyed is
 * refused where a passphrase is given, unless asked for (RZ_RESTORE_UNKEYED). */
START_TEST(test_keyed_checksum)
{
	json_t *m = NULL;
	char *keyed = make("backup-k", true, &m), *plain = make("backup-l", false, NULL);
	const char *pass = "correct horse battery staple";
	rz_restore_contents_t c;
	rz_err_t err = { 0 };

	ck_assert_int_eq(jint(m, "format", NULL), RZ_BACKUP_FORMAT);
	json_decref(m);
	ck_assert_int_eq(rz_restore_read(keyed, NULL, pass, 0, &c, &err), 0);
	ck_assert_int_eq(c.key_unsealed, 1);
	ck_assert_int_eq(jint(c.manifest, "format", NULL), 2);
	json_decref(c.manifest);
	/* the unkeyed one: read without a passphrase; with one, only when asked for */
	ck_assert_int_eq(rz_restore_read(plain, NULL, NULL, 0, &c, &err), 0);
	ck_assert_int_eq(jint(c.manifest, "format", NULL), RZ_BACKUP_UNKEYED);
	json_decref(c.manifest);
	ck_assert_int_eq(rz_restore_read(plain, NULL, pass, 0, &c, &err), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(err.msg, "not keyed"));
	ck_assert_int_eq(rz_restore_read(plain, NULL, pass, RZ_RESTORE_UNKEYED, &c, &err), 0);
	json_decref(c.manifest);
	/* a changed payload under a recomputed, unkeyed checksum does not pass */
	flip_byte(keyed, file_size(keyed) / 2);
	reseal_unkeyed(keyed);
	rz_err_clear(&err);
	ck_assert_int_eq(rz_restore_read(keyed, NULL, pass, 0, &c, &err), RZ_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(err.msg, "checksum mismatch"));
	/* ... while the same forgery of an unkeyed file does: why it is refused with a passphrase
	 */
	ck_assert_int_eq(rz_restore_read(plain, NULL, NULL, 0, &c, &err), 0);
	json_decref(c.manifest);
	free(keyed);
	free(plain);
}
END_TEST

START_TEST(test_newer_schema_refused)
{
	size_t n = 0;
	const rz_migration_t *product = rz_db_migrations(&n);
	rz_migration_t *more = calloc(n + 1, sizeof(*more));
	rz_restore_contents_t c;
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;
	char *path;

	memcpy(more, product, n * sizeof(*more));
	more[n] = (rz_migration_t){ .version = (int)n + 1,
		                    .name = "from the future",
		                    .sql = "CREATE TABLE future (x);" };
	ck_assert_int_eq(rz_db_open_with(&db, db_path, more, n + 1, -1, &err), 0);
	rz_db_close(db);
	path = make("backup-f", false, NULL);
	ck_assert_int_eq(rz_restore_read(path, NULL, NULL, 0, &c, &err), RZ_ESCHEMA);
	ck_assert_ptr_nonnull(strstr(err.msg, "newer than this rezuscloud supports"));
	ck_assert_ptr_null(c.manifest);
	free(path);
	free(more);
}
END_TEST

START_TEST(test_not_a_backup)
{
	rz_restore_contents_t c;
	rz_err_t err = { 0 };
	char *path = NULL;

	ck_assert_int_gt(asprintf(&path, "%s/x.rzbackup", dir), 0);
	rzt_write_file(path, "hello\n");
	ck_assert_int_eq(rz_restore_read(path, NULL, NULL, 0, &c, &err), RZ_EPARSE);
	rzt_write_file(path, "RZBACKUP 3\n{}\n");
	ck_assert_int_eq(rz_restore_read(path, NULL, NULL, 0, &c, &err), RZ_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "newer"));
	ck_assert_int_eq(rz_restore_read("/nonexistent/x", NULL, NULL, 0, &c, &err), RZ_ENOTFOUND);
	free(path);
}
END_TEST

START_TEST(test_list_prune_remove)
{
	static const char *const names[] = { "backup-1", "backup-2", "backup-3", "backup-4" };
	rz_err_t err = { 0 };
	json_t *list = NULL;
	char *junk = NULL;

	for (size_t i = 0; i < 4; i++) {
		free(make(names[i], false, NULL));
	}
	ck_assert_int_gt(asprintf(&junk, "%s/junk" RZ_BACKUP_SUFFIX, out_dir), 0);
	rzt_write_file(junk, "not a backup\n");
	ck_assert_int_eq(rz_backup_list(out_dir, 100, &list, &err), 0);
	ck_assert_int_eq(json_array_size(list), 5);
	/* newest first (same second: by name), the unreadable one last */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "name")),
	                 "backup-4");
	ck_assert_ptr_nonnull(json_object_get(json_array_get(list, 4), "error"));
	json_decref(list);
	ck_assert_int_eq(rz_backup_prune(out_dir, 2, &err), 2);
	ck_assert_int_eq(rz_backup_list(out_dir, 100, &list, &err), 0);
	ck_assert_int_eq(json_array_size(list), 3); /* two kept, the junk left alone */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 1), "name")),
	                 "backup-3");
	json_decref(list);
	ck_assert_int_eq(rz_backup_remove(out_dir, "backup-3", &err), 0);
	ck_assert_int_eq(rz_backup_remove(out_dir, "backup-3", &err), RZ_ENOTFOUND);
	ck_assert_int_eq(rz_backup_remove(out_dir, "../rezus", &err), REZUS_EINVALID);
	ck_assert_int_eq(rz_backup_list("/nonexistent/dir", 10, &list, &err), 0);
	ck_assert_int_eq(json_array_size(list), 0);
	json_decref(list);
	free(junk);
}
END_TEST

START_TEST(test_diff)
{
	char *path = make("backup-g", false, NULL), *copy = NULL;
	rz_restore_contents_t c;
	rz_err_t err = { 0 };
	json_t *report = NULL, *users;
	rz_db_t *db = NULL;

	ck_assert_int_gt(asprintf(&copy, "%s/restored.db", dir), 0);
	ck_assert_int_eq(rz_restore_read(path, copy, NULL, 0, &c, &err), 0);
	json_decref(c.manifest);
	/* after the backup: a tenant more, a user less, a node group changed, a version more */
	ck_assert_int_eq(rz_db_open(&db, db_path, &err), 0);
	exec_ok(db, "INSERT INTO objects VALUES ('Tenant', '', 't2', 'u9', 5, '{}')");
	exec_ok(db, "DELETE FROM objects WHERE kind = 'User'");
	exec_ok(db, "UPDATE objects SET rv = 6 WHERE name = 'cp'");
	exec_ok(db, "INSERT INTO tfstate_versions (tenant, version, md5, time, run, size, blob)"
	            " VALUES ('t1', 3, 'm3', 't', 'r', 1, x'00')");
	exec_ok(db, "UPDATE revision SET rv = 7");
	rz_db_close(db);
	ck_assert_int_eq(rz_restore_diff(db_path, copy, &report, &err), 0);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "Tenant", "removed"), 1);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "Tenant", "unchanged"), 1);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "User", "added"), 1);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "NodeGroup", "changed"), 1);
	ck_assert_int_eq(jint(report, "stateVersions", "removed"), 1);
	ck_assert_int_eq(jint(report, "stateVersions", "current"), 3);
	ck_assert_int_eq(jint(report, "stateVersions", "backup"), 2);
	users = json_object_get(report, "users");
	ck_assert_int_eq(jint(users, "current", NULL), 0);
	ck_assert_int_eq(jint(users, "backup", NULL), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(users, "added"), 0)),
	                 "alice");
	ck_assert_int_eq(jint(report, "revision", "current"), 7);
	json_decref(report);
	/* restore it: the database is the backup's again */
	ck_assert_int_eq(rz_restore_db(copy, db_path, NULL, &err), 0);
	ck_assert_int_eq(rz_restore_diff(db_path, copy, &report, &err), 0);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "Tenant", "removed"), 0);
	ck_assert_int_eq(jint(report, "revision", "current"), 4);
	json_decref(report);
	/* and into a data dir that has none */
	ck_assert_int_eq(rz_restore_diff(NULL, copy, &report, &err), 0);
	ck_assert_int_eq(jint(json_object_get(report, "objects"), "Tenant", "added"), 1);
	json_decref(report);
	free(copy);
	free(path);
}
END_TEST

START_TEST(test_passphrase_file)
{
	char buf[1100];
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_backup_passphrase(pass_path, buf, sizeof(buf), &err), 0);
	ck_assert_str_eq(buf, "correct horse battery staple");
	rzt_write_file(pass_path, "short\n");
	ck_assert_int_eq(rz_backup_passphrase(pass_path, buf, sizeof(buf), &err), REZUS_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "at least 8"));
	ck_assert_ptr_null(strstr(err.msg, "short"));
	ck_assert_int_lt(rz_backup_passphrase("/nonexistent", buf, sizeof(buf), &err), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("backup");
	TCase *t = tcase_create("file");

	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_round_trip);
	tcase_add_test(t, test_keyed_checksum);
	tcase_add_test(t, test_without_passphrase);
	tcase_add_test(t, test_corrupted_byte_refused);
	tcase_add_test(t, test_truncated_refused);
	tcase_add_test(t, test_wrong_passphrase_refused);
	tcase_add_test(t, test_newer_schema_refused);
	tcase_add_test(t, test_not_a_backup);
	tcase_add_test(t, test_list_prune_remove);
	tcase_add_test(t, test_diff);
	tcase_add_test(t, test_passphrase_file);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return rzt_run(suite());
}
