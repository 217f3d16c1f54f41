/* tests/unit/check_tfui.c - tofu's JSON UI lines as people read them, ids redacted. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "core/engine/tfui.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct human_case {
	const char *line;
	const char *text;
};

/* A precondition failure as terraform 1.11 reports it for the sim plugin's failOn. */
#define PRECONDITION                                                                               \
	"{\"@level\":\"error\",\"@message\":\"Error: Resource precondition failed\","              \
	"\"@module\":\"terraform.ui\",\"diagnostic\":{\"severity\":\"error\",\"summary\":"         \
	"\"Resource precondition failed\",\"detail\":\"sim: machine flaky-0 fails\","              \
	"\"address\":\"terraform_data.flaky[0]\",\"range\":{\"filename\":\"sim.tf.json\","         \
	"\"start\":{\"line\":42,\"column\":28,\"byte\":1706},\"end\":{\"line\":42}},"              \
	"\"snippet\":{\"context\":\"resource.terraform_data.flaky.lifecycle.precondition[0]"       \
	"\",\"code\":\"  \\\"condition\\\": \\\"${count.index != 0}\\\",\",\"start_line\":"        \
	"42,\"values\":[{\"traversal\":\"count.index\",\"statement\":\"is 0\"}]}},"                \
	"\"type\":\"diagnostic\"}"

static const struct human_case human_cases[] = {
	/* plain lines (init's output) and lines that are not JSON UI lines stay as they are */
	{ "Initializing the backend...", "Initializing the backend..." },
	{ "", "" },
	{ "{not json", "{not json" },
	{ "{\"type\":\"log\"}", "{\"type\":\"log\"}" },
	{ "{\"@message\":7,\"@level\":\"info\"}", "{\"@message\":7,\"@level\":\"info\"}" },
	/* a JSON UI line is its message */
	{ "{\"@level\":\"info\",\"@message\":\"Apply complete! Resources: 2 added, 0 changed, 0 "
	  "destroyed.\",\"type\":\"change_summary\"}",
	  "Apply complete! Resources: 2 added, 0 changed, 0 destroyed." },
	{ "{\"@message\":\"no level\"}", "no level" },
	/* warnings and errors say so, once */
	{ "{\"@level\":\"warn\",\"@message\":\"deprecated\",\"type\":\"log\"}",
	  "Warning: deprecated" },
	{ "{\"@level\":\"error\",\"@message\":\"it broke\",\"type\":\"log\"}", "Error: it broke" },
	{ "{\"@level\":\"error\",\"@message\":\"Error: it broke\",\"type\":\"log\"}",
	  "Error: it broke" },
	/* diagnostics as tofu prints them: summary, where, the code and its values, detail */
	{ PRECONDITION, "Error: Resource precondition failed\n"
	                "\n"
	                "  with terraform_data.flaky[0],\n"
	                "  on sim.tf.json line 42, in "
	                "resource.terraform_data.flaky.lifecycle.precondition[0]:\n"
	                "  42:   \"condition\": \"${count.index != 0}\",\n"
	                "    ├────────────────\n"
	                "    │ count.index is 0\n"
	                "\n"
	                "sim: machine flaky-0 fails" },
	{ "{\"@level\":\"warn\",\"@message\":\"Warning: Old\",\"type\":\"diagnostic\","
	  "\"diagnostic\":{\"severity\":\"warning\",\"summary\":\"Old\",\"detail\":\"Use new.\"}}",
	  "Warning: Old\n\nUse new." },
	{ "{\"@level\":\"error\",\"@message\":\"Error: Bare\",\"type\":\"diagnostic\","
	  "\"diagnostic\":{\"severity\":\"error\",\"summary\":\"Bare\",\"detail\":\"\"}}",
	  "Error: Bare" },
	{ "{\"@level\":\"error\",\"@message\":\"Error: Two\",\"type\":\"diagnostic\","
	  "\"diagnostic\":{\"severity\":\"error\",\"summary\":\"Two\",\"range\":{\"filename\":"
	  "\"a.tf\",\"start\":{\"line\":3}},\"snippet\":{\"context\":null,\"code\":\"a\\nb\","
	  "\"start_line\":3,\"values\":[]}}}",
	  "Error: Two\n\n  on a.tf line 3:\n   3: a\n   4: b" },
	/* a diagnostic line without its object: the message */
	{ "{\"@level\":\"error\",\"@message\":\"Error: Lost\",\"type\":\"diagnostic\"}",
	  "Error: Lost" },
};

START_TEST(test_human)
{
	const struct human_case *c = &human_cases[_i];
	size_t n = 0;
	char *text = rz_tfui_human(c->line, strlen(c->line), &n);

	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, c->text);
	ck_assert_uint_eq(n, strlen(c->text));
	free(text);
}
END_TEST

/* A line is what len says, not up to a NUL: the log's lines come out of one buffer. */
START_TEST(test_length_bounded)
{
	const char *buf = "{\"@message\":\"one\"}\n{\"@message\":\"two\"}";
	size_t n = 0;
	char *text = rz_tfui_human(buf, strchr(buf, '\n') - buf, &n);

	ck_assert_str_eq(text, "one");
	free(text);
	text = rz_tfui_human("plain\nnext", 5, &n);
	ck_assert_str_eq(text, "plain");
	ck_assert_uint_eq(n, 5);
	free(text);
}
END_TEST

/* ------------------------------------------------------------------ redaction */

#define SECRET "74e0ef11-1bef-14db-5304-fea6c6e99fd4"
#define APPLIED                                                                                    \
	"{\"@level\":\"info\",\"@message\":\"terraform_data.cluster_secrets: Creation complete "   \
	"after 0s [id=" SECRET "]\",\"hook\":{\"resource\":{\"addr\":"                             \
	"\"terraform_data.cluster_secrets\"},\"action\":\"create\",\"id_key\":\"id\","             \
	"\"id_value\":\"" SECRET "\",\"elapsed_seconds\":0},\"type\":\"apply_complete\"}"

static char *redact(const rz_tfui_t *u, const char *text)
{
	size_t n = 0;
	char *out = rz_tfui_redact(u, text, strlen(text), &n);

	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(n, strlen(out));
	return out;
}

#define ck_redacts(u, in, want)                                                                    \
	do {                                                                                       \
		char *got_ = redact((u), (in));                                                    \
		ck_assert_str_eq(got_, (want));                                                    \
		free(got_);                                                                        \
	} while (0)

/* Where tofu prints an id, it goes, learned or not, in the stored line and its text. */
START_TEST(test_redact_where_printed)
{
	size_t n = 0;
	char *text;

	ck_redacts(
	    NULL, APPLIED,
	    "{\"@level\":\"info\",\"@message\":\"terraform_data.cluster_secrets: Creation "
	    "complete after 0s [id=(redacted)]\",\"hook\":{\"resource\":{\"addr\":"
	    "\"terraform_data.cluster_secrets\"},\"action\":\"create\",\"id_key\":\"id\","
	    "\"id_value\":\"(redacted)\",\"elapsed_seconds\":0},\"type\":\"apply_complete\"}");
	text = rz_tfui_human(APPLIED, strlen(APPLIED), &n);
	ck_redacts(NULL, text,
	           "terraform_data.cluster_secrets: Creation complete after 0s [id=(redacted)]");
	free(text);
	/* short ids too, there; and plain text in tofu's human form */
	ck_redacts(NULL, "x: Refreshing state... [id=7]", "x: Refreshing state... [id=(redacted)]");
	ck_redacts(NULL, "{\"id_value\":\"a\\\"b\",\"k\":1}",
	           "{\"id_value\":\"(redacted)\",\"k\":1}");
	ck_redacts(NULL, "[id=]", "[id=]");
	ck_redacts(NULL, "Plan: 0 to add, 0 to change, 0 to destroy.",
	           "Plan: 0 to add, 0 to change, 0 to destroy.");
}
END_TEST

/* A learned id is redacted wherever it recurs: as a word, or a piece of one. */
START_TEST(test_redact_learned)
{
	rz_tfui_t *u = rz_tfui_new();
	const char *line;

	ck_assert_ptr_nonnull(u);
	ck_redacts(u, "token " SECRET ".", "token " SECRET "."); /* nothing learned yet */
	ck_assert_int_eq(rz_tfui_learn(u, APPLIED, strlen(APPLIED)), 0);
	ck_redacts(u, "token " SECRET ".", "token (redacted).");
	ck_redacts(u, "\"" SECRET "\" is not valid", "\"(redacted)\" is not valid");
	ck_redacts(u, "https://x/" SECRET "/y?t=" SECRET, "https://x/(redacted)/y?t=(redacted)");
	ck_redacts(u, "ids: " SECRET ":" SECRET, "ids: (redacted):(redacted)");
	ck_redacts(u, "[" SECRET ",x]", "[(redacted),x]");
	ck_redacts(u, "not-" SECRET "-quite", "not-" SECRET "-quite");
	/* learned from tofu's human form in a plain line as well */
	line = "x: Refresh complete [id=ocid1.instance.oc1..aaaa]";
	ck_assert_int_eq(rz_tfui_learn(u, line, strlen(line)), 0);
	ck_redacts(u, "instance ocid1.instance.oc1..aaaa gone", "instance (redacted) gone");
	rz_tfui_free(u);
}
END_TEST

/* Ids shorter than RZ_TFUI_MIN_ID are redacted only where tofu prints them as ids. */
START_TEST(test_redact_short_ids_stay_local)
{
	const char *line = "{\"@message\":\"n: Creation complete after 0s [id=1]\","
	                   "\"hook\":{\"id_key\":\"id\",\"id_value\":\"1\"}}";
	rz_tfui_t *u = rz_tfui_new();

	ck_assert_int_eq(rz_tfui_learn(u, line, strlen(line)), 0);
	ck_redacts(u, "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
	           "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.");
	ck_redacts(u, line,
	           "{\"@message\":\"n: Creation complete after 0s [id=(redacted)]\","
	           "\"hook\":{\"id_key\":\"id\",\"id_value\":\"(redacted)\"}}");
	rz_tfui_free(u);
	rz_tfui_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tfui");
	TCase *tc = tcase_create("human");

	tcase_add_loop_test(tc, test_human, 0, (int)ARRAY_SIZE(human_cases));
	tcase_add_test(tc, test_length_bounded);
	suite_add_tcase(s, tc);
	tc = tcase_create("redact");
	tcase_add_test(tc, test_redact_where_printed);
	tcase_add_test(tc, test_redact_learned);
	tcase_add_test(tc, test_redact_short_ids_stay_local);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
