/* tests/unit/check_errors.c - the error table and buffer. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "core/base/errors.h"
#include "tests/unit/testutil.h"

START_TEST(test_strerror)
{
	ck_assert_str_eq(rz_strerror(0), "success");
	ck_assert_str_eq(rz_strerror(-ENOENT), strerror(ENOENT));
	ck_assert_str_eq(rz_strerror(RZ_ESCHEMA), "database schema is newer than this binary");
	ck_assert_str_eq(rz_strerror(RZ_ELOCKED), "data directory is locked by another instance");
	ck_assert_str_eq(rz_strerror(REZUS_ECONFIG), "invalid configuration");
	ck_assert_str_eq(rz_strerror(-19999), "unknown error");
}
END_TEST

START_TEST(test_err_set_and_clear)
{
	rz_err_t err = { 0 };
	char big[600];

	ck_assert_int_eq(rz_err_set(&err, RZ_EDB, "db: %s failed: %d", "step", 7), RZ_EDB);
	ck_assert_int_eq(err.code, RZ_EDB);
	ck_assert_str_eq(err.msg, "db: step failed: 7");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rz_err_set(&err, -EINVAL, "%s", big);
	ck_assert_uint_eq(strlen(err.msg), REZUS_ERR_MSG_MAX - 1);
	rz_err_clear(&err);
	ck_assert_int_eq(err.code, 0);
	ck_assert_str_eq(err.msg, "");
	ck_assert_int_eq(rz_err_set(NULL, -ENOMEM, "ignored"), -ENOMEM);
	rz_err_clear(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("errors");

	tcase_add_test(tc, test_strerror);
	tcase_add_test(tc, test_err_set_and_clear);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
