/* tests/unit/check_fieldset.c - sets of field paths in Kubernetes' FieldsV1 form. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/model/fieldset.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static json_t *parse_json(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);

	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, jerr.text);
	return v;
}

/* A set from FieldsV1 text. */
static json_t *set_of(const char *fields_v1)
{
	json_t *in = parse_json(fields_v1), *set = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_fieldset_parse(in, &set, &err) == 0, "%s: %s", fields_v1, err.msg);
	json_decref(in);
	return set;
}

/* set as FieldsV1 text, keys sorted, compact (a buffer per call). */
static char *text_of(const json_t *set)
{
	json_t *enc = rz_fieldset_encode(set);
	char *s;

	ck_assert_ptr_nonnull(enc);
	s = json_dumps(enc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(enc);
	return s;
}

static void assert_set(const json_t *set, const char *want, const char *what)
{
	char *got = text_of(set);

	ck_assert_msg(strcmp(got, want) == 0, "%s: got %s, want %s", what, got, want);
	free(got);
}

/* ------------------------------------------------------------------ of */

static const struct {
	const char *obj, *set;
} of_cases[] = {
	{ "{}", "{}" },
	{ "[1]", "{}" },
	{ "{\"spec\":{\"count\":3}}", "{\"f:spec\":{\"f:count\":{}}}" },
	/* lists are atomic, an empty object is a leaf, null too */
	{ "{\"spec\":{\"a\":[1,{\"b\":2}],\"b\":{},\"c\":null}}",
	  "{\"f:spec\":{\"f:a\":{},\"f:b\":{},\"f:c\":{}}}" },
	{ "{\"metadata\":{\"labels\":{\"app\":\"x\",\"example.com/t\":\"y\"}},\"spec\":{}}",
	  "{\"f:metadata\":{\"f:labels\":{\"f:app\":{},\"f:example.com/t\":{}}},\"f:spec\":{}}" },
};

START_TEST(test_of)
{
	for (size_t i = 0; i < ARRAY_SIZE(of_cases); i++) {
		json_t *obj = parse_json(of_cases[i].obj);
		json_t *set = rz_fieldset_of(obj);
		ck_assert_ptr_nonnull(set);
		assert_set(set, of_cases[i].set, of_cases[i].obj);
		json_decref(set);
		json_decref(obj);
	}
}
END_TEST

/* An object nested deeper than the bound is one field at the bound. */
START_TEST(test_of_deep)
{
	json_t *obj = json_pack("{s:i}", "x", 1), *set, *paths;
	char want[4 * RZ_FIELDSET_MAX_DEPTH + 1] = "";

	for (int i = 0; i < RZ_FIELDSET_MAX_DEPTH + 8; i++) {
		obj = json_pack("{s:o}", "a", obj);
	}
	set = rz_fieldset_of(obj);
	paths = rz_fieldset_paths(set);
	for (int i = 0; i < RZ_FIELDSET_MAX_DEPTH; i++) {
		strcat(want, ".a");
	}
	ck_assert_int_eq(json_array_size(paths), 1);
	ck_assert_str_eq(json_string_value(json_array_get(paths, 0)), want);
	json_decref(paths);
	json_decref(set);
	json_decref(obj);
}
END_TEST

/* ------------------------------------------------------------------ parse */

START_TEST(test_parse_round_trip)
{
	static const char *const sets[] = {
		"{}",
		"{\"f:spec\":{\"f:count\":{}}}",
		"{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},\"f:spec\":{\"f:a\":{}}}",
		"{\"f:\":{}}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		json_t *set = set_of(sets[i]);
		assert_set(set, sets[i], sets[i]);
		json_decref(set);
	}
}
END_TEST

static const struct {
	const char *in, *err;
} bad_parses[] = {
	{ "[]", "expected an object" },
	{ "{\"f:a\":1}", "expected an object at depth 1" },
	{ "{\".\":{}}", "\".\" must be {} and below the top" },
	{ "{\"f:a\":{\".\":{\"x\":1}}}", "\".\" must be {}" },
	{ "{\"f:spec\":{\"k:{\\\"name\\\":\\\"a\\\"}\":{}}}",
	  "unsupported key 'k:{\"name\":\"a\"}'" },
	{ "{\"i:0\":{}}", "unsupported key 'i:0'" },
	{ "{\"v:\\\"x\\\"\":{}}", "unsupported key" },
	{ "{\"spec\":{}}", "unsupported key 'spec'" },
};

START_TEST(test_parse_refused)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_parses); i++) {
		json_t *in = parse_json(bad_parses[i].in), *set = (json_t *)1;
		rz_err_t err = { 0 };
		ck_assert_int_eq(rz_fieldset_parse(in, &set, &err), RZ_EPARSE);
		ck_assert_ptr_null(set);
		ck_assert_msg(strstr(err.msg, bad_parses[i].err) != NULL, "%s: %s",
		              bad_parses[i].in, err.msg);
		json_decref(in);
	}
}
END_TEST

START_TEST(test_parse_bounds)
{
	json_t *deep = json_object(), *wide = json_object(), *set = NULL;
	rz_err_t err = { 0 };

	for (int i = 0; i < RZ_FIELDSET_MAX_DEPTH; i++) {
		deep = json_pack("{s:o}", "f:a", deep);
	}
	ck_assert_int_eq(rz_fieldset_parse(deep, &set, &err), 0); /* exactly the bound */
	json_decref(set);
	deep = json_pack("{s:o}", "f:a", deep);
	ck_assert_int_eq(rz_fieldset_parse(deep, &set, &err), RZ_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "deeper than 32"));
	for (int i = 0; i <= RZ_FIELDSET_MAX_NODES; i++) {
		char key[32];
		snprintf(key, sizeof(key), "f:%d", i);
		json_object_set_new(wide, key, json_object());
	}
	ck_assert_int_eq(rz_fieldset_parse(wide, &set, &err), RZ_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "more than 100000 nodes"));
	json_decref(deep);
	json_decref(wide);
}
END_TEST

/* ------------------------------------------------------------------ operations */

static const struct {
	const char *a, *b, *uni, *diff, *inter;
} op_cases[] = {
	{ "{}", "{}", "{}", "{}", "{}" },
	{ "{\"f:a\":{}}", "{}", "{\"f:a\":{}}", "{\"f:a\":{}}", "{}" },
	{ "{\"f:a\":{},\"f:b\":{}}", "{\"f:b\":{},\"f:c\":{}}",
	  "{\"f:a\":{},\"f:b\":{},\"f:c\":{}}", "{\"f:a\":{}}", "{\"f:b\":{}}" },
	/* a member with children: only the member goes, the children stay */
	{ "{\"f:l\":{\".\":{},\"f:x\":{}}}", "{\"f:l\":{}}", "{\"f:l\":{\".\":{},\"f:x\":{}}}",
	  "{\"f:l\":{\"f:x\":{}}}", "{\"f:l\":{}}" },
	/* children without the member: the member stays */
	{ "{\"f:l\":{\".\":{},\"f:x\":{}}}", "{\"f:l\":{\"f:x\":{}}}",
	  "{\"f:l\":{\".\":{},\"f:x\":{}}}", "{\"f:l\":{}}", "{\"f:l\":{\"f:x\":{}}}" },
	{ "{\"f:s\":{\"f:a\":{\"f:b\":{}}}}", "{\"f:s\":{\"f:a\":{\"f:c\":{}}}}",
	  "{\"f:s\":{\"f:a\":{\"f:b\":{},\"f:c\":{}}}}", "{\"f:s\":{\"f:a\":{\"f:b\":{}}}}", "{}" },
};

START_TEST(test_operations)
{
	for (size_t i = 0; i < ARRAY_SIZE(op_cases); i++) {
		json_t *a = set_of(op_cases[i].a), *b = set_of(op_cases[i].b);
		json_t *u = rz_fieldset_union(a, b), *d = rz_fieldset_difference(a, b);
		json_t *n = rz_fieldset_intersection(a, b);
		assert_set(u, op_cases[i].uni, "union");
		assert_set(d, op_cases[i].diff, "difference");
		assert_set(n, op_cases[i].inter, "intersection");
		ck_assert(rz_fieldset_empty(n) == (strcmp(op_cases[i].inter, "{}") == 0));
		json_decref(u);
		json_decref(d);
		json_decref(n);
		json_decref(a);
		json_decref(b);
	}
}
END_TEST

/* ------------------------------------------------------------------ compare */

static const struct {
	const char *old, *new, *changed, *removed;
} compare_cases[] = {
	{ NULL, "{\"spec\":{\"a\":1}}", "{\"f:spec\":{\"f:a\":{}}}", "{}" },
	{ "{\"spec\":{\"a\":1}}", "{\"spec\":{\"a\":1}}", "{}", "{}" },
	{ "{\"spec\":{\"a\":1,\"b\":2}}", "{\"spec\":{\"a\":3}}", "{\"f:spec\":{\"f:a\":{}}}",
	  "{\"f:spec\":{\"f:b\":{}}}" },
	/* a list changes as one field */
	{ "{\"s\":{\"l\":[1,2]}}", "{\"s\":{\"l\":[1,3]}}", "{\"f:s\":{\"f:l\":{}}}", "{}" },
	/* a removed object takes everything under it */
	{ "{\"m\":{\"labels\":{\"a\":\"1\"}},\"s\":1}", "{\"s\":1}", "{}",
	  "{\"f:m\":{\".\":{},\"f:labels\":{\".\":{},\"f:a\":{}}}}" },
	/* an object that becomes a scalar: its members are removed, it is changed */
	{ "{\"s\":{\"x\":{\"y\":1}}}", "{\"s\":{\"x\":5}}", "{\"f:s\":{\"f:x\":{}}}",
	  "{\"f:s\":{\"f:x\":{\"f:y\":{}}}}" },
	/* a scalar that becomes an object: its leaves are changed */
	{ "{\"s\":{\"x\":5}}", "{\"s\":{\"x\":{\"y\":1}}}", "{\"f:s\":{\"f:x\":{\"f:y\":{}}}}",
	  "{}" },
	/* emptied: the object is changed to {} */
	{ "{\"s\":{\"x\":{\"y\":1}}}", "{\"s\":{\"x\":{}}}", "{\"f:s\":{\"f:x\":{}}}",
	  "{\"f:s\":{\"f:x\":{\"f:y\":{}}}}" },
	{ "{\"s\":1}", "{\"s\":null}", "{\"f:s\":{}}", "{}" },
};

START_TEST(test_compare)
{
	for (size_t i = 0; i < ARRAY_SIZE(compare_cases); i++) {
		json_t *o = compare_cases[i].old ? parse_json(compare_cases[i].old) : NULL;
		json_t *n = parse_json(compare_cases[i].new), *changed = NULL, *removed = NULL;
		ck_assert_int_eq(rz_fieldset_compare(o, n, &changed, &removed), 0);
		assert_set(changed, compare_cases[i].changed, compare_cases[i].new);
		assert_set(removed, compare_cases[i].removed, compare_cases[i].new);
		json_decref(changed);
		json_decref(removed);
		json_decref(o);
		json_decref(n);
	}
}
END_TEST

START_TEST(test_paths)
{
	json_t *set = set_of("{\"f:spec\":{\"f:b\":{},\"f:a\":{}},\"f:metadata\":{\"f:labels\":{"
	                     "\".\":{},\"f:x.y/z\":{}}}}");
	json_t *paths = rz_fieldset_paths(set);
	char *text = json_dumps(paths, JSON_COMPACT);

	ck_assert_str_eq(text, "[\".metadata.labels\",\".metadata.labels.x.y/z\",\".spec.a\","
	                       "\".spec.b\"]");
	free(text);
	json_decref(paths);
	json_decref(set);
}
END_TEST

/* ------------------------------------------------------------------ prune */

static const struct {
	const char *obj, *gone, *keep, *result;
} prune_cases[] = {
	{ "{\"spec\":{\"a\":1,\"b\":2}}", "{\"f:spec\":{\"f:b\":{}}}", NULL,
	  "{\"spec\":{\"a\":1}}" },
	/* an object emptied by the pruning goes, up to the top */
	{ "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{\"x\":1}}",
	  "{\"f:metadata\":{\"f:labels\":{\"f:a\":{}}}}", NULL, "{\"spec\":{\"x\":1}}" },
	/* unless someone owns it as a member */
	{ "{\"metadata\":{\"labels\":{\"a\":\"1\"}}}",
	  "{\"f:metadata\":{\"f:labels\":{\"f:a\":{}}}}", "{\"f:metadata\":{\"f:labels\":{}}}",
	  "{\"metadata\":{\"labels\":{}}}" },
	/* a gone member keeps what others own under it */
	{ "{\"s\":{\"l\":{\"a\":1,\"b\":2}}}", "{\"f:s\":{\"f:l\":{}}}",
	  "{\"f:s\":{\"f:l\":{\"f:b\":{}}}}", "{\"s\":{\"l\":{\"a\":1,\"b\":2}}}" },
	/* fields that are not there are nothing to prune */
	{ "{\"s\":{\"a\":1}}", "{\"f:s\":{\"f:z\":{}},\"f:t\":{}}", NULL, "{\"s\":{\"a\":1}}" },
	/* an object already empty stays unless its path is gone */
	{ "{\"s\":{\"e\":{},\"a\":1}}", "{\"f:s\":{\"f:a\":{}}}", NULL, "{\"s\":{\"e\":{}}}" },
};

START_TEST(test_prune)
{
	for (size_t i = 0; i < ARRAY_SIZE(prune_cases); i++) {
		json_t *obj = parse_json(prune_cases[i].obj), *gone = set_of(prune_cases[i].gone);
		json_t *keep = prune_cases[i].keep ? set_of(prune_cases[i].keep) : NULL;
		json_t *want = parse_json(prune_cases[i].result);
		char *got;
		rz_fieldset_prune(obj, gone, keep);
		got = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
		ck_assert_msg(json_equal(obj, want), "case %zu: got %s, want %s", i, got,
		              prune_cases[i].result);
		free(got);
		json_decref(obj);
		json_decref(gone);
		json_decref(keep);
		json_decref(want);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fieldset");
	TCase *tc = tcase_create("fieldset");

	tcase_add_test(tc, test_of);
	tcase_add_test(tc, test_of_deep);
	tcase_add_test(tc, test_parse_round_trip);
	tcase_add_test(tc, test_parse_refused);
	tcase_add_test(tc, test_parse_bounds);
	tcase_add_test(tc, test_operations);
	tcase_add_test(tc, test_compare);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_prune);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
