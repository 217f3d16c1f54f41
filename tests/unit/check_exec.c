/* tests/unit/check_exec.c - finding executables on a PATH-like list. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base/exec.h"
#include "tests/unit/testutil.h"

static char *dir;
static char a[256], b[256];

static void setup(void)
{
	char p[PATH_MAX];

	dir = rzt_tmpdir();
	ck_assert_int_lt(snprintf(a, sizeof(a), "%s/a", dir), (int)sizeof(a));
	ck_assert_int_lt(snprintf(b, sizeof(b), "%s/b", dir), (int)sizeof(b));
	ck_assert_int_eq(mkdir(a, 0700), 0);
	ck_assert_int_eq(mkdir(b, 0700), 0);
	/* a/tool is not executable, a/dir is a directory, b/tool and b/dir are programs. */
	snprintf(p, sizeof(p), "%s/tool", a);
	rzt_write_file(p, "#!/bin/sh\n");
	snprintf(p, sizeof(p), "%s/dir", a);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/tool", b);
	rzt_write_file(p, "#!/bin/sh\n");
	ck_assert_int_eq(chmod(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/dir", b);
	rzt_write_file(p, "#!/bin/sh\n");
	ck_assert_int_eq(chmod(p, 0700), 0);
}

static void teardown(void)
{
	rzt_rmrf(dir);
	free(dir);
}

START_TEST(test_first_executable_regular_file_wins)
{
	char list[1024], out[PATH_MAX], want[PATH_MAX];

	snprintf(list, sizeof(list), "::%s::%s:", a, b);
	ck_assert_int_eq(rz_exec_which("tool", list, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/tool", b);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(rz_exec_which("dir", list, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/dir", b);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(rz_exec_which("missing", list, out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(rz_exec_which("tool", "", out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(rz_exec_which("sh", "/nonexistent:/bin", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/bin/sh");
}
END_TEST

START_TEST(test_slash_is_taken_as_is)
{
	char p[PATH_MAX], out[PATH_MAX];

	snprintf(p, sizeof(p), "%s/tool", b);
	ck_assert_int_eq(rz_exec_which(p, "/nonexistent", out, sizeof(out)), 0);
	ck_assert_str_eq(out, p);
	snprintf(p, sizeof(p), "%s/tool", a);
	ck_assert_int_eq(rz_exec_which(p, NULL, out, sizeof(out)), -ENOENT);
}
END_TEST

START_TEST(test_default_list)
{
	char out[PATH_MAX];

	ck_assert_int_eq(rz_exec_which("sh", NULL, out, sizeof(out)), 0);
	ck_assert(strcmp(out, "/usr/bin/sh") == 0 || strcmp(out, "/bin/sh") == 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exec");
	TCase *tc = tcase_create("exec");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_first_executable_regular_file_wins);
	tcase_add_test(tc, test_slash_is_taken_as_is);
	tcase_add_test(tc, test_default_list);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
