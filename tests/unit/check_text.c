/* tests/unit/check_text.c - text for messages: cut at a value or word boundary, values
 * quoted as valid UTF-8, messages that overflow their buffer. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "core/base/errors.h"
#include "core/base/text.h"
#include "tests/unit/testutil.h"

/* What rz_echo makes of an input with a limit. */
static const struct {
	const char *in;
	size_t max;
	const char *out;
} echo_cases[] = {
	{ "short", 64, "short" },
	{ "", 8, "" },
	{ "exactly8", 8, "exactly8" },
	/* a value boundary: before the ',' (the separator goes too) */
	{ "involvedObject.name=demo,involvedObject.namespace=,involvedObject.kind=Tenant", 40,
	  "involvedObject.name=demo..." },
	{ "a=1, b=2, c=3", 11, "a=1, b=2..." },
	{ "the quick brown fox jumps", 12, "the quick..." },
	/* no separator in the second half: the end of a word */
	{ "metadata.namespace", 12, "metadata..." },
	{ "x,involvedObject.namespace=abc", 20, "x,involvedObject..." },
	/* one long word: a whole character, never half of one */
	{ "abcdefghijklmnop", 6, "abcdef..." },
	{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5, "\xc3\xa9\xc3\xa9..." },
	/* control characters and invalid UTF-8 become '?' */
	{ "a\x01"
	  "b\nc",
	  64, "a?b?c" },
	{ "\xff\xfe ok", 64, "?? ok" },
	{ "\xc3(", 64, "?(" },
	{ "\xed\xa0\x80", 64, "???" }, /* a surrogate */
	{ "\xe0\x80\xaf", 64, "???" }, /* overlong */
	{ "\xf0\x9f\x98\x80!", 64, "\xf0\x9f\x98\x80!" },
};

START_TEST(test_echo)
{
	char buf[RZ_ECHO_SIZE(64)];

	for (size_t i = 0; i < sizeof(echo_cases) / sizeof(echo_cases[0]); i++) {
		ck_assert_msg(strcmp(rz_echo(buf, sizeof(buf), echo_cases[i].in, echo_cases[i].max),
		                     echo_cases[i].out) == 0,
		              "case %zu: '%s' max %zu: got '%s', want '%s'", i, echo_cases[i].in,
		              echo_cases[i].max, buf, echo_cases[i].out);
	}
	ck_assert_str_eq(rz_echo(buf, sizeof(buf), NULL, 8), "");
}
END_TEST

/* The buffer bounds the echo, whatever max says. */
START_TEST(test_echo_bounded_by_buffer)
{
	char small[12];
	char big[200];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_str_eq(rz_echo(small, sizeof(small), big, 64), "xxxxxxxx...");
	ck_assert_str_eq(rz_echo(small, sizeof(small), "aa bb cc dd ee", 64), "aa bb cc...");
}
END_TEST

START_TEST(test_cut)
{
	ck_assert_uint_eq(rz_text_cut("abc", 3, 3), 3);
	ck_assert_uint_eq(rz_text_cut("abc", 3, 0), 0);
	ck_assert_uint_eq(rz_text_cut("ab, cd", 6, 5), 2);   /* "ab" */
	ck_assert_uint_eq(rz_text_cut(",,,,abcd", 8, 6), 6); /* no value kept: a character */
	ck_assert_uint_eq(rz_text_cut("a b", 3, 2), 1);
}
END_TEST

/* buf as vsnprintf leaves it after formatting s, then rz_text_fit. */
static const char *fit(char *buf, size_t size, const char *s)
{
	size_t len = strlen(s), n = len < size ? len : size - 1;

	memcpy(buf, s, n);
	buf[n] = '\0';
	rz_text_fit(buf, size, (int)len);
	return buf;
}

/* A message longer than its buffer ends at a word, with "...", never mid-word. */
START_TEST(test_fit)
{
	char buf[24];

	ck_assert_str_eq(fit(buf, sizeof(buf), "field 'involvedObject.namespace' is not supported"),
	                 "field...");
	ck_assert_str_eq(fit(buf, sizeof(buf), "use a, b, c, involvedObject.kind, x"),
	                 "use a, b, c...");
	ck_assert_str_eq(fit(buf, sizeof(buf), "fits as it is"), "fits as it is");
	ck_assert_str_eq(fit(buf, sizeof(buf), "exactly twenty-three ab"),
	                 "exactly twenty-three ab");
	ck_assert_str_eq(fit(buf, sizeof(buf), "exactly twenty-four abcd"),
	                 "exactly twenty-four...");
	rz_text_fit(buf, sizeof(buf), -1); /* an encoding error: left alone */
	ck_assert_str_eq(buf, "exactly twenty-four...");
}
END_TEST

/* rz_err_set cuts the same way (rz_err_t holds 255 bytes of message). */
START_TEST(test_err_set_cuts_at_a_word)
{
	rz_err_t err = { 0 };
	char words[600] = "";

	while (strlen(words) < 400) {
		strcat(words, "involvedObject.kind, ");
	}
	rz_err_set(&err, -EINVAL, "use %s", words);
	ck_assert_uint_le(strlen(err.msg), REZUS_ERR_MSG_MAX - 1);
	ck_assert_str_eq(err.msg + strlen(err.msg) - 22, "involvedObject.kind...");
	ck_assert_ptr_null(strstr(err.msg, ", ..."));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, test_echo);
	tcase_add_test(tc, test_echo_bounded_by_buffer);
	tcase_add_test(tc, test_cut);
	tcase_add_test(tc, test_fit);
	tcase_add_test(tc, test_err_set_cuts_at_a_word);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
