/* tests/unit/check_jsonpatch.c - JSON Patch (RFC 6902). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/model/jsonpatch.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The JSON texts use ' for " (none of them holds a '). */
struct patch_case {
	const char *target;
	const char *patch;
	const char *result; /* NULL: the patch fails with rc */
	int rc;
	const char *msg; /* a part of the error message */
};

/* RFC 6902 Appendix A, in order but A.13 (an operation with two "op" members), which the
 * JSON parser refuses. */
static const struct patch_case rfc_cases[] = {
	/* A.1 - A.16 */
	{ "{'foo':'bar'}", "[{'op':'add','path':'/baz','value':'qux'}]",
	  "{'baz':'qux','foo':'bar'}", 0, NULL },
	{ "{'foo':['bar','baz']}", "[{'op':'add','path':'/foo/1','value':'qux'}]",
	  "{'foo':['bar','qux','baz']}", 0, NULL },
	{ "{'baz':'qux','foo':'bar'}", "[{'op':'remove','path':'/baz'}]", "{'foo':'bar'}", 0,
	  NULL },
	{ "{'foo':['bar','qux','baz']}", "[{'op':'remove','path':'/foo/1'}]",
	  "{'foo':['bar','baz']}", 0, NULL },
	{ "{'baz':'qux','foo':'bar'}", "[{'op':'replace','path':'/baz','value':'boo'}]",
	  "{'baz':'boo','foo':'bar'}", 0, NULL },
	{ "{'foo':{'bar':'baz','waldo':'fred'},'qux':{'corge':'grault'}}",
	  "[{'op':'move','from':'/foo/waldo','path':'/qux/thud'}]",
	  "{'foo':{'bar':'baz'},'qux':{'corge':'grault','thud':'fred'}}", 0, NULL },
	{ "{'foo':['all','grass','cows','eat']}", "[{'op':'move','from':'/foo/1','path':'/foo/3'}]",
	  "{'foo':['all','cows','eat','grass']}", 0, NULL },
	{ "{'baz':'qux','foo':['a',2,'c']}",
	  "[{'op':'test','path':'/baz','value':'qux'},{'op':'test','path':'/foo/1','value':2}]",
	  "{'baz':'qux','foo':['a',2,'c']}", 0, NULL },
	{ "{'baz':'qux'}", "[{'op':'test','path':'/baz','value':'bar'}]", NULL, -EINVAL,
	  "test failed" },
	{ "{'foo':'bar'}", "[{'op':'add','path':'/child','value':{'grandchild':{}}}]",
	  "{'child':{'grandchild':{}},'foo':'bar'}", 0, NULL },
	{ "{'foo':'bar'}", "[{'op':'add','path':'/baz','value':'qux','xyz':123}]",
	  "{'baz':'qux','foo':'bar'}", 0, NULL },
	{ "{'foo':'bar'}", "[{'op':'add','path':'/baz/bat','value':'qux'}]", NULL, -EINVAL,
	  "parent does not exist" },
	{ "{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':10}]", "{'/':9,'~1':10}", 0,
	  NULL },
	{ "{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':'10'}]", NULL, -EINVAL,
	  "test failed" },
	{ "{'foo':['bar']}", "[{'op':'add','path':'/foo/-','value':['abc','def']}]",
	  "{'foo':['bar',['abc','def']]}", 0, NULL },
};

/* Beyond the appendix: each op's edges, escapes, the whole document, malformed patches. */
static const struct patch_case more_cases[] = {
	/* escapes: ~1 is '/', ~0 is '~', ~01 is '~1' */
	{ "{'metadata':{'labels':{}}}",
	  "[{'op':'add','path':'/metadata/labels/example.com~1team','value':'a'}]",
	  "{'metadata':{'labels':{'example.com/team':'a'}}}", 0, NULL },
	{ "{'a~b':1}", "[{'op':'replace','path':'/a~0b','value':2}]", "{'a~b':2}", 0, NULL },
	{ "{'':{'':3}}", "[{'op':'replace','path':'//','value':4}]", "{'':{'':4}}", 0, NULL },
	/* add replaces a member; arrays insert, '-' appends, size is the end */
	{ "{'a':1}", "[{'op':'add','path':'/a','value':null}]", "{'a':null}", 0, NULL },
	{ "[1,2]", "[{'op':'add','path':'/2','value':3}]", "[1,2,3]", 0, NULL },
	{ "[1,2]", "[{'op':'add','path':'/0','value':0}]", "[0,1,2]", 0, NULL },
	{ "[1,2]", "[{'op':'add','path':'/3','value':3}]", NULL, -EINVAL, "out of range" },
	{ "[1,2]", "[{'op':'add','path':'/01','value':3}]", NULL, -EINVAL, "out of range" },
	{ "[1,2]", "[{'op':'add','path':'/x','value':3}]", NULL, -EINVAL, "not a number" },
	{ "[1,2]", "[{'op':'replace','path':'/-','value':3}]", NULL, -EINVAL, "not exist" },
	/* the whole document */
	{ "{'a':1}", "[{'op':'replace','path':'','value':{'b':2}}]", "{'b':2}", 0, NULL },
	{ "{'a':1}", "[{'op':'add','path':'','value':[1]}]", "[1]", 0, NULL },
	{ "{'a':1}", "[{'op':'remove','path':''}]", NULL, -EINVAL, "whole document" },
	{ "{'a':1}", "[{'op':'test','path':'','value':{'a':1.0}}]", "{'a':1}", 0, NULL },
	/* remove and replace need the location */
	{ "{'a':1}", "[{'op':'remove','path':'/b'}]", NULL, -EINVAL, "does not exist" },
	{ "{'a':[1]}", "[{'op':'remove','path':'/a/1'}]", NULL, -EINVAL, "does not exist" },
	{ "{'a':1}", "[{'op':'replace','path':'/b','value':1}]", NULL, -EINVAL, "does not exist" },
	{ "{'a':'s'}", "[{'op':'add','path':'/a/b','value':1}]", NULL, -EINVAL, "parent" },
	/* copy deep-copies; move onto itself changes nothing */
	{ "{'a':{'b':[1]}}",
	  "[{'op':'copy','from':'/a','path':'/c'},{'op':'add','path':'/c/b/-','value':2}]",
	  "{'a':{'b':[1]},'c':{'b':[1,2]}}", 0, NULL },
	{ "{'a':1}", "[{'op':'copy','from':'/x','path':'/c'}]", NULL, -EINVAL, "from" },
	{ "{'a':{'b':1}}", "[{'op':'move','from':'/a','path':'/a'}]", "{'a':{'b':1}}", 0, NULL },
	{ "{'a':{'b':1}}", "[{'op':'move','from':'/a/b','path':'/a'}]", "{'a':1}", 0, NULL },
	{ "{'a':1}", "[{'op':'move','from':'/b','path':'/c'}]", NULL, -EINVAL, "does not exist" },
	/* test: deep equality, whatever the members' order; 1 equals 1.0 */
	{ "{'a':{'x':[1,{'y':null}],'z':true}}",
	  "[{'op':'test','path':'/a','value':{'z':true,'x':[1.0,{'y':null}]}}]",
	  "{'a':{'x':[1,{'y':null}],'z':true}}", 0, NULL },
	{ "{'a':[1,2]}", "[{'op':'test','path':'/a','value':[2,1]}]", NULL, -EINVAL, "test" },
	{ "{'a':{'x':1}}", "[{'op':'test','path':'/a','value':{'x':1,'y':2}}]", NULL, -EINVAL,
	  "test" },
	{ "{'a':null}", "[{'op':'test','path':'/b','value':null}]", NULL, -EINVAL, "not exist" },
	/* all or nothing: a late failure leaves no trace (checked by the runner's target) */
	{ "{'a':1}", "[{'op':'remove','path':'/a'},{'op':'test','path':'/a','value':1}]", NULL,
	  -EINVAL, "operation 1 (test /a)" },
	/* malformed: 400, naming the operation's index */
	{ "{}", "{'op':'add'}", NULL, RZ_EPARSE, "must be an array" },
	{ "{}", "[1]", NULL, RZ_EPARSE, "operation 0: must be a JSON object" },
	{ "{}", "[{'op':'add','path':'/a','value':1},{'op':'patch','path':'/a'}]", NULL, RZ_EPARSE,
	  "operation 1: \"op\" must be one of" },
	{ "{}", "[{'path':'/a'}]", NULL, RZ_EPARSE, "\"op\"" },
	{ "{}", "[{'op':'add','path':'/a'}]", NULL, RZ_EPARSE,
	  "operation 0 (add): \"value\" is missing" },
	{ "{}", "[{'op':'test','path':'/a'}]", NULL, RZ_EPARSE, "\"value\" is missing" },
	{ "{}", "[{'op':'remove'}]", NULL, RZ_EPARSE, "\"path\" must be a string" },
	{ "{}", "[{'op':'copy','path':'/a'}]", NULL, RZ_EPARSE, "\"from\" must be a string" },
	{ "{}", "[{'op':'remove','path':'a'}]", NULL, RZ_EPARSE, "start with '/'" },
	{ "{}", "[{'op':'remove','path':'/a~2'}]", NULL, RZ_EPARSE, "'~'" },
	{ "{}", "[{'op':'remove','path':'/a~'}]", NULL, RZ_EPARSE, "'~'" },
	{ "{'a':{}}", "[{'op':'move','from':'/a','path':'/a/b'}]", NULL, RZ_EPARSE, "own child" },
	/* a malformed operation after a failing one: the patch is refused as malformed */
	{ "{}", "[{'op':'remove','path':'/x'},{'op':'nope','path':'/a'}]", NULL, RZ_EPARSE,
	  "operation 1" },
	/* an empty patch copies the target */
	{ "{'a':[1]}", "[]", "{'a':[1]}", 0, NULL },
};

/* text with ' turned into ", parsed. */
static json_t *load(const char *text)
{
	char *q = strdup(text);
	json_error_t error;
	json_t *v;

	ck_assert_ptr_nonnull(q);
	for (char *p = q; *p != '\0'; p++) {
		*p = *p == '\'' ? '"' : *p;
	}
	v = json_loads(q, JSON_DECODE_ANY, &error);
	ck_assert_msg(v != NULL, "bad test JSON '%s': %s", q, error.text);
	free(q);
	return v;
}

static void check_case(const struct patch_case *c)
{
	json_t *target = load(c->target), *patch = load(c->patch);
	json_t *before = json_deep_copy(target), *causes = json_array(), *out = NULL;
	rz_err_t err = { 0 };
	int rc = rz_json_patch(target, patch, &out, causes, &err);

	ck_assert_msg(json_equal(target, before), "the target was modified");
	if (c->result != NULL) {
		json_t *want = load(c->result);
		ck_assert_msg(rc == 0, "patch %s failed: %s", c->patch, err.msg);
		ck_assert_msg(json_equal(out, want), "patch %s: unexpected result", c->patch);
		ck_assert_int_eq(json_array_size(causes), 0);
		json_decref(want);
	} else {
		ck_assert_int_eq(rc, c->rc);
		ck_assert_ptr_null(out);
		ck_assert_msg(strstr(err.msg, c->msg) != NULL, "message '%s' lacks '%s'", err.msg,
		              c->msg);
		ck_assert_int_eq(json_array_size(causes), rc == -EINVAL ? 1 : 0);
	}
	json_decref(out);
	json_decref(causes);
	json_decref(before);
	json_decref(patch);
	json_decref(target);
}

START_TEST(test_rfc6902_appendix_a)
{
	check_case(&rfc_cases[_i]);
}
END_TEST

START_TEST(test_more_cases)
{
	check_case(&more_cases[_i]);
}
END_TEST

/* A failed operation is a cause on its path, naming the index and the op. */
START_TEST(test_cause)
{
	json_t *target = load("{'spec':{'size':2}}");
	json_t *patch = load("[{'op':'replace','path':'/spec/size','value':3},"
	                     "{'op':'test','path':'/spec/size','value':2}]");
	json_t *causes = json_array(), *out = NULL, *c;

	ck_assert_int_eq(rz_json_patch(target, patch, &out, causes, NULL), -EINVAL);
	ck_assert_int_eq(json_array_size(causes), 1);
	c = json_array_get(causes, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "field")), "/spec/size");
	ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), "FieldValueInvalid");
	ck_assert_str_eq(json_string_value(json_object_get(c, "message")),
	                 "operation 1 (test): test failed: the value differs");
	json_decref(causes);
	json_decref(patch);
	json_decref(target);
}
END_TEST

/* The result holds nothing of the patch: changing the patch later changes nothing. */
START_TEST(test_result_is_independent)
{
	json_t *target = load("{}");
	json_t *patch = load("[{'op':'add','path':'/a','value':{'b':1}}]");
	json_t *out = NULL;

	ck_assert_int_eq(rz_json_patch(target, patch, &out, NULL, NULL), 0);
	json_object_set_new(json_object_get(json_array_get(patch, 0), "value"), "b",
	                    json_integer(2));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(out, "a"), "b")), 1);
	json_decref(out);
	json_decref(patch);
	json_decref(target);
}
END_TEST

/* At most RZ_JSONPATCH_MAX_OPS operations. */
START_TEST(test_too_many_operations)
{
	json_t *target = load("{'a':1}"), *patch = json_array(), *out = NULL;
	rz_err_t err = { 0 };

	for (int i = 0; i < RZ_JSONPATCH_MAX_OPS; i++) {
		json_array_append_new(patch, load("{'op':'test','path':'/a','value':1}"));
	}
	ck_assert_int_eq(rz_json_patch(target, patch, &out, NULL, &err), 0);
	json_decref(out);
	json_array_append_new(patch, load("{'op':'test','path':'/a','value':1}"));
	ck_assert_int_eq(rz_json_patch(target, patch, &out, NULL, &err), -E2BIG);
	ck_assert_ptr_null(out);
	ck_assert_ptr_nonnull(strstr(err.msg, "got 10001"));
	json_decref(patch);
	json_decref(target);
}
END_TEST

/* A pointer of more than RZ_JSONPATCH_MAX_DEPTH tokens is malformed. */
START_TEST(test_pointer_depth)
{
	char path[2 * RZ_JSONPATCH_MAX_DEPTH + 3];
	json_t *target = load("{}"), *patch, *out = NULL;
	rz_err_t err = { 0 };

	for (int i = 0; i < RZ_JSONPATCH_MAX_DEPTH + 1; i++) {
		memcpy(path + 2 * i, "/a", 2);
	}
	path[2 * (RZ_JSONPATCH_MAX_DEPTH + 1)] = '\0';
	patch = json_pack("[{s:s, s:s}]", "op", "remove", "path", path);
	ck_assert_int_eq(rz_json_patch(target, patch, &out, NULL, &err), RZ_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "too deep"));
	json_decref(patch);
	/* one token less is a pointer, to a location that does not exist */
	path[2 * RZ_JSONPATCH_MAX_DEPTH] = '\0';
	patch = json_pack("[{s:s, s:s}]", "op", "remove", "path", path);
	ck_assert_int_eq(rz_json_patch(target, patch, &out, NULL, &err), -EINVAL);
	json_decref(patch);
	json_decref(target);
}
END_TEST

/* Copying the document into itself doubles it: the copy budget stops it. */
START_TEST(test_copy_budget)
{
	json_t *target = load("{'a':[1,2,3,4,5,6,7,8]}"), *patch = json_array(), *out = NULL;
	rz_err_t err = { 0 };

	for (int i = 0; i < 40; i++) {
		json_array_append_new(patch, load("{'op':'copy','from':'','path':'/a/-'}"));
	}
	ck_assert_int_eq(rz_json_patch(target, patch, &out, NULL, &err), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_ptr_nonnull(strstr(err.msg, "copies too much"));
	json_decref(patch);
	json_decref(target);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jsonpatch");
	TCase *tc = tcase_create("jsonpatch");

	tcase_add_loop_test(tc, test_rfc6902_appendix_a, 0, (int)ARRAY_SIZE(rfc_cases));
	tcase_add_loop_test(tc, test_more_cases, 0, (int)ARRAY_SIZE(more_cases));
	tcase_add_test(tc, test_cause);
	tcase_add_test(tc, test_result_is_independent);
	tcase_add_test(tc, test_too_many_operations);
	tcase_add_test(tc, test_pointer_depth);
	tcase_add_test(tc, test_copy_budget);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
