/*
 * fuzz/jsonpatch.c - JSON patch (RFC 6902), as PATCH with application/json-patch+json.
 *
 * Input: the target document, "\n---8<---\n", the patch (both JSON; a missing target is {}).
 * Invariants: the inputs are not modified; a result comes with 0 and only with 0; an error
 * says which operation (its index) or that the patch is not an array; a failure from an
 * operation that cannot apply comes with one cause; a patch that only tests leaves the
 * document as it was; the result tests equal to itself.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "core/model/jsonpatch.h"

/* Whether every operation of patch is a test (an empty patch too). */
static bool only_tests(const json_t *patch)
{
	size_t i;
	json_t *op;

	json_array_foreach(patch, i, op)
	{
		const char *name = json_string_value(json_object_get(op, "op"));
		if (name == NULL || strcmp(name, "test") != 0) {
			return false;
		}
	}
	return true;
}

/* The result, tested at the root against a copy of itself, passes. */
static void tests_equal_to_itself(const json_t *out)
{
	json_t *patch = json_pack("[{s:s, s:s, s:O}]", "op", "test", "path", "", "value", out);
	json_t *again = NULL;

	FZ_ASSERT(patch != NULL, "no memory for the test patch");
	FZ_ASSERT(rz_json_patch(out, patch, &again, NULL, NULL) == 0 && json_equal(again, out),
	          "the result does not test equal to itself");
	json_decref(again);
	json_decref(patch);
}

static void check(const json_t *target, const json_t *patch)
{
	json_t *before_t = json_deep_copy(target), *before_p = json_deep_copy(patch);
	json_t *causes = json_array(), *out = NULL;
	rz_err_t err = { 0 };
	int rc = rz_json_patch(target, patch, &out, causes, &err);

	FZ_ASSERT(json_equal(target, before_t) && json_equal(patch, before_p), "inputs modified");
	FZ_ASSERT((rc == 0) == (out != NULL), "rc %d with%s a result", rc, out ? "" : "out");
	FZ_ASSERT(rc == 0 || rc == RZ_EPARSE || rc == -E2BIG || rc == -EINVAL || rc == -ENOMEM,
	          "unexpected rc %d", rc);
	FZ_ASSERT(rc == 0 || strstr(err.msg, "operation") != NULL ||
	              strstr(err.msg, "array") != NULL || strstr(err.msg, "memory") != NULL,
	          "the error names no operation: %s", err.msg);
	FZ_ASSERT(json_array_size(causes) == (rc == -EINVAL ? 1u : 0u), "%zu causes for rc %d",
	          json_array_size(causes), rc);
	if (rc == 0) {
		FZ_ASSERT(!only_tests(patch) || json_equal(out, target),
		          "a patch of tests changed the document");
		tests_equal_to_itself(out);
	}
	json_decref(out);
	json_decref(causes);
	json_decref(before_t);
	json_decref(before_p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a, *b;
	json_t *target, *patch;

	fz_split(data, size, &a, &b);
	target = a[0] ? json_loads(a, JSON_DECODE_ANY, NULL) : json_object();
	patch = json_loads(b, JSON_DECODE_ANY, NULL);
	free(a);
	free(b);
	if (target != NULL && patch != NULL) {
		check(target, patch);
	}
	json_decref(target);
	json_decref(patch);
	return 0;
}
