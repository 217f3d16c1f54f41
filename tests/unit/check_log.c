/* tests/unit/check_log.c - the logging sink: format, levels, quoting, redaction, reopen. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base/log.h"
#include "tests/unit/testutil.h"

static char *dir;
static char path[512];

static void setup(void)
{
	rz_err_t err = { 0 };

	dir = rzt_tmpdir();
	snprintf(path, sizeof(path), "%s/rezus.log", dir);
	ck_assert_int_eq(rz_log_open(path, &err), 0);
	rz_log_set_level(RZ_LOG_INFO);
}

static void teardown(void)
{
	rz_log_close();
	rzt_rmrf(dir);
	free(dir);
}

/* The whole log file; caller frees. */
static char *slurp(const char *p)
{
	FILE *f = fopen(p, "r");
	char *buf = calloc(1, 65536);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge((int)fread(buf, 1, 65535, f), 0);
	fclose(f);
	return buf;
}

START_TEST(test_line_format)
{
	char *text;

	rz_log(RZ_LOG_WARNING, "db", "applied migration %d (%s)", 3, "meta table");
	text = slurp(path);
	ck_assert_int_eq(strncmp(text, "ts=", 3), 0);
	/* ts=YYYY-MM-DDTHH:MM:SS.mmmZ */
	ck_assert_int_eq(text[13], 'T');
	ck_assert_int_eq(text[26], 'Z');
	ck_assert_str_eq(text + 27,
	                 " level=warning subsys=db msg=\"applied migration 3 (meta table)\"\n");
	free(text);
}
END_TEST

START_TEST(test_levels_filter)
{
	char *text;
	int level = -1;

	rz_log(RZ_LOG_DEBUG, "x", "hidden");
	rz_log_set_level(RZ_LOG_DEBUG);
	rz_log(RZ_LOG_DEBUG, "x", "shown");
	text = slurp(path);
	ck_assert_ptr_null(strstr(text, "hidden"));
	ck_assert_ptr_nonnull(strstr(text, "level=debug subsys=x msg=shown\n"));
	free(text);
	ck_assert_int_eq(rz_log_level_parse("WARN", &level), 0);
	ck_assert_int_eq(level, RZ_LOG_WARNING);
	ck_assert_int_eq(rz_log_level_parse("error", &level), 0);
	ck_assert_int_eq(level, RZ_LOG_ERR);
	ck_assert_int_eq(rz_log_level_parse("emerg", &level), 0);
	ck_assert_int_eq(level, RZ_LOG_EMERG);
	ck_assert_int_eq(rz_log_level_parse("loud", &level), -EINVAL);
	ck_assert_str_eq(rz_log_level_name(RZ_LOG_NOTICE), "notice");
	ck_assert(!rz_log_enabled(RZ_LOG_DEBUG + 1));
}
END_TEST

START_TEST(test_quoting)
{
	char buf[128];

	ck_assert_int_eq(rz_log_quote(buf, sizeof(buf), "plain"), 5);
	ck_assert_str_eq(buf, "plain");
	rz_log_quote(buf, sizeof(buf), "");
	ck_assert_str_eq(buf, "\"\"");
	rz_log_quote(buf, sizeof(buf), "a b=\"c\"\\\n\x01");
	ck_assert_str_eq(buf, "\"a b=\\\"c\\\"\\\\\\n\\x01\"");
	/* truncation keeps a terminated string and reports the full length */
	ck_assert_int_eq(rz_log_quote(buf, 4, "abcdef"), 6);
	ck_assert_str_eq(buf, "abc");
}
END_TEST

START_TEST(test_kv_and_redaction)
{
	char *text;

	rz_logkv(RZ_LOG_INFO, "auth", "login", "user", "admin", "password", "hunter2",
	         "Authorization", "Bearer abc", "api_token", "rzt_x", "note", NULL, NULL);
	text = slurp(path);
	ck_assert_ptr_nonnull(strstr(text,
	                             "msg=login user=admin password=[redacted] "
	                             "Authorization=[redacted] api_token=[redacted] note=\"\"\n"));
	ck_assert_ptr_null(strstr(text, "hunter2"));
	ck_assert_ptr_null(strstr(text, "rzt_x"));
	free(text);
	ck_assert(rz_log_is_secret_key("JWT_SECRET"));
	ck_assert(rz_log_is_secret_key("tofu_http_password"));
	ck_assert(!rz_log_is_secret_key("user"));
	ck_assert_str_eq(rz_log_redact("cookie", "s=1"), RZ_LOG_REDACTED);
	ck_assert_str_eq(rz_log_redact("path", "/x"), "/x");
}
END_TEST

START_TEST(test_long_message_is_one_line)
{
	char big[20000];
	char *text;

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rz_log(RZ_LOG_INFO, "x", "%s", big);
	rz_log(RZ_LOG_INFO, "x", "after");
	text = slurp(path);
	ck_assert_ptr_nonnull(strstr(text, "\nts="));
	ck_assert_ptr_nonnull(strstr(text, "msg=after\n"));
	ck_assert_int_eq(text[strlen(text) - 1], '\n');
	free(text);
}
END_TEST

START_TEST(test_reopen_after_rotation)
{
	char rotated[600];
	char *text;

	rz_log(RZ_LOG_INFO, "x", "before");
	snprintf(rotated, sizeof(rotated), "%s.1", path);
	ck_assert_int_eq(rename(path, rotated), 0);
	ck_assert_int_eq(rz_log_reopen(), 0);
	rz_log(RZ_LOG_INFO, "x", "after");
	text = slurp(path);
	ck_assert_ptr_nonnull(strstr(text, "msg=after"));
	ck_assert_ptr_null(strstr(text, "msg=before"));
	free(text);
	text = slurp(rotated);
	ck_assert_ptr_nonnull(strstr(text, "msg=before"));
	free(text);
}
END_TEST

START_TEST(test_open_failure)
{
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_log_open("/nonexistent-dir/x.log", &err), -ENOENT);
	ck_assert_str_eq(err.msg,
	                 "log: open '/nonexistent-dir/x.log' failed: No such file or directory");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_line_format);
	tcase_add_test(tc, test_levels_filter);
	tcase_add_test(tc, test_quoting);
	tcase_add_test(tc, test_kv_and_redaction);
	tcase_add_test(tc, test_long_message_is_one_line);
	tcase_add_test(tc, test_reopen_after_rotation);
	tcase_add_test(tc, test_open_failure);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
