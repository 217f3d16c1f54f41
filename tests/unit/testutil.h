/*
 * tests/unit/testutil.h - small helpers shared by the Check programs.
 */
#ifndef RZ_TESTUTIL_H
#define RZ_TESTUTIL_H

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/auth/auth.h"
#include "core/store/backup.h"

/* A fresh private directory under $TMPDIR (or /tmp). Caller frees; remove with rzt_rmrf. */
static inline char *rzt_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *path = NULL;
	if (base == NULL || base[0] == '\0') {
		base = "/tmp";
	}
	ck_assert_int_gt(asprintf(&path, "%s/rezus-test-XXXXXX", base), 0);
	ck_assert_ptr_nonnull(mkdtemp(path));
	return path;
}

/* Remove a tree created by a test. Ignores errors. */
static inline void rzt_rmrf(const char *path)
{
	DIR *d = opendir(path);
	if (d != NULL) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			char *child = NULL;
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
				continue;
			}
			if (asprintf(&child, "%s/%s", path, e->d_name) > 0) {
				rzt_rmrf(child);
				free(child);
			}
		}
		closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* Write text to path (created 0600, truncated). */
static inline void rzt_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Run a suite and return the process exit status. Password hashes and backup keys are
 * derived at libsodium's minimum Argon2id cost: the tests check what is hashed and sealed,
 * not the cost (64 and 256 MiB per hash made every daemon start and backup of a test take
 * tenths of a second, seconds under valgrind); the daemon keeps libsodium's limits. */
/* The longest a program may run without fork: check_upgrader under valgrind takes ~2 min. */
#define RZT_NOFORK_LIMIT_S 900

static inline int rzt_run(Suite *s)
{
	SRunner *sr;
	int failed;

	rz_auth_set_password_cost(crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_MEMLIMIT_MIN);
	rz_backup_set_kdf_cost(crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_MEMLIMIT_MIN);
	sr = srunner_create(s);
	/* Without fork (CK_FORK=no: under valgrind and the sanitizers) Check has no per-case
	 * timeout: a hang ends the whole program instead of stalling the suite. */
	if (srunner_fork_status(sr) == CK_NOFORK)
		alarm(RZT_NOFORK_LIMIT_S);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* RZ_TESTUTIL_H */
