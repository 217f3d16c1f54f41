/* tests/unit/check_merge.c - JSON Merge Patch (RFC 7386). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/model/merge.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct merge_case {
	const char *target; /* NULL: a NULL pointer */
	const char *patch;
	const char *result;
};

/* RFC 7386 Appendix A, in order. */
static const struct merge_case rfc_cases[] = {
	{ "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
	{ "{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}" },
	{ "{\"a\":\"b\"}", "{\"a\":null}", "{}" },
	{ "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}" },
	{ "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
	{ "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}" },
	{ "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}" },
	{ "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}" },
	{ "[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]" },
	{ "{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]" },
	{ "{\"a\":\"foo\"}", "null", "null" },
	{ "{\"a\":\"foo\"}", "\"bar\"", "\"bar\"" },
	{ "{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}" },
	{ "[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}" },
	{ "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}" },
};

/* Beyond the RFC: deletion deep down, arrays, type changes, a NULL target. */
static const struct merge_case more_cases[] = {
	/* null deletes at any depth and leaves the siblings */
	{ "{\"a\":{\"b\":{\"c\":1,\"d\":2}},\"e\":1}", "{\"a\":{\"b\":{\"c\":null}}}",
	  "{\"a\":{\"b\":{\"d\":2}},\"e\":1}" },
	{ "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":null}}", "{\"a\":{}}" },
	{ "{\"a\":1}", "{\"x\":null}", "{\"a\":1}" },
	{ "{\"a\":{\"b\":1}}", "{\"a\":null}", "{}" },
	/* arrays are replaced wholesale, never merged, and nulls inside them stay */
	{ "{\"a\":[1,2,3]}", "{\"a\":[4]}", "{\"a\":[4]}" },
	{ "{\"a\":[{\"b\":1,\"c\":2}]}", "{\"a\":[{\"b\":3}]}", "{\"a\":[{\"b\":3}]}" },
	{ "{\"a\":[1]}", "{\"a\":[]}", "{\"a\":[]}" },
	{ "{}", "{\"a\":[null,{\"b\":null}]}", "{\"a\":[null,{\"b\":null}]}" },
	/* a patch that is not an object replaces the target or the member */
	{ "{\"a\":{\"b\":1}}", "{\"a\":5}", "{\"a\":5}" },
	{ "{\"a\":{\"b\":1}}", "{\"a\":\"x\"}", "{\"a\":\"x\"}" },
	{ "{\"a\":1}", "5", "5" },
	{ "{\"a\":1}", "[]", "[]" },
	{ "{\"a\":1}", "true", "true" },
	/* an object patch over a non-object target starts from {} */
	{ "\"x\"", "{\"a\":1}", "{\"a\":1}" },
	{ "null", "{\"a\":1,\"b\":null}", "{\"a\":1}" },
	{ "{\"a\":5}", "{\"a\":{\"b\":1,\"c\":null}}", "{\"a\":{\"b\":1}}" },
	{ "{\"a\":[1]}", "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1}}" },
	{ NULL, "{\"a\":{\"b\":null,\"c\":2}}", "{\"a\":{\"c\":2}}" },
	/* an empty patch copies the target */
	{ "{\"a\":{\"b\":[1,{\"c\":2}]}}", "{}", "{\"a\":{\"b\":[1,{\"c\":2}]}}" },
};

static json_t *load(const char *text)
{
	json_error_t error;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &error);

	ck_assert_msg(v != NULL, "bad test JSON '%s': %s", text, error.text);
	return v;
}

static char *dump(const json_t *v)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* Merge c->patch into c->target; check the result and that both inputs are unchanged. */
static void check_case(const struct merge_case *c)
{
	json_t *target = c->target != NULL ? load(c->target) : NULL;
	json_t *patch = load(c->patch);
	json_t *want = load(c->result);
	char *target_before = target != NULL ? dump(target) : NULL;
	char *patch_before = dump(patch);
	json_t *got = rz_merge_patch(target, patch);
	char *got_text;

	ck_assert_ptr_nonnull(got);
	got_text = dump(got);
	ck_assert_msg(json_equal(got, want), "%s + %s: got %s, want %s",
	              c->target != NULL ? c->target : "NULL", c->patch, got_text, c->result);
	if (target != NULL) {
		char *after = dump(target);
		ck_assert_str_eq(after, target_before);
		free(after);
		ck_assert_ptr_ne(got, target);
	}
	{
		char *after = dump(patch);
		ck_assert_str_eq(after, patch_before);
		free(after);
	}
	if (!json_is_null(got) && !json_is_boolean(got)) {
		/* null, true and false are jansson singletons; everything else is fresh */
		ck_assert_ptr_ne(got, patch);
	}
	free(got_text);
	free(target_before);
	free(patch_before);
	json_decref(got);
	json_decref(want);
	json_decref(patch);
	json_decref(target);
}

START_TEST(test_rfc7386_appendix_a)
{
	check_case(&rfc_cases[_i]);
}
END_TEST

START_TEST(test_more_cases)
{
	check_case(&more_cases[_i]);
}
END_TEST

/* The result shares nothing with the inputs: changing it leaves them alone. */
START_TEST(test_result_is_independent)
{
	json_t *target = load("{\"a\":{\"b\":[1]},\"keep\":{\"x\":1}}");
	json_t *patch = load("{\"a\":{\"c\":{\"d\":1}},\"new\":{\"y\":[2]}}");
	json_t *got = rz_merge_patch(target, patch);
	char *text;

	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(got, "keep"), "x")), 1);
	ck_assert_int_eq(json_object_set_new(json_object_get(got, "keep"), "x", json_integer(9)),
	                 0);
	ck_assert_int_eq(
	    json_array_append_new(json_object_get(json_object_get(got, "a"), "b"), json_integer(7)),
	    0);
	ck_assert_int_eq(json_object_set_new(json_object_get(json_object_get(got, "a"), "c"), "d",
	                                     json_integer(9)),
	                 0);
	ck_assert_int_eq(json_array_append_new(json_object_get(json_object_get(got, "new"), "y"),
	                                       json_integer(7)),
	                 0);
	text = dump(target);
	ck_assert_str_eq(text, "{\"a\":{\"b\":[1]},\"keep\":{\"x\":1}}");
	free(text);
	text = dump(patch);
	ck_assert_str_eq(text, "{\"a\":{\"c\":{\"d\":1}},\"new\":{\"y\":[2]}}");
	free(text);
	json_decref(got);
	json_decref(patch);
	json_decref(target);
}
END_TEST

/* Members keep the target's order; new members follow in the patch's order. */
START_TEST(test_member_order)
{
	json_t *target = load("{\"z\":1,\"b\":2,\"m\":3}");
	json_t *patch = load("{\"y\":5,\"b\":4,\"m\":null,\"a\":6}");
	json_t *got = rz_merge_patch(target, patch);
	char *text;

	ck_assert_ptr_nonnull(got);
	text = json_dumps(got, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "{\"z\":1,\"b\":4,\"y\":5,\"a\":6}");
	free(text);
	json_decref(got);
	json_decref(patch);
	json_decref(target);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tcase_create("merge");

	tcase_add_loop_test(tc, test_rfc7386_appendix_a, 0, (int)ARRAY_SIZE(rfc_cases));
	tcase_add_loop_test(tc, test_more_cases, 0, (int)ARRAY_SIZE(more_cases));
	tcase_add_test(tc, test_result_is_independent);
	tcase_add_test(tc, test_member_order);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
