/*
 * fuzz/merge.c - JSON merge patch (RFC 7386), as PATCH with application/merge-patch+json.
 *
 * Input: the target document, "\n---8<---\n", the patch (both JSON; a missing target is {}).
 * Invariants: the inputs are not modified; a non-object patch replaces the target; applying
 * the same patch twice changes nothing more (merge patch is idempotent); a result has no
 * member the patch set to null.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/model/merge.h"

/* No member of patch that is null is present in result, at any depth patch reaches. */
static void nulls_removed(const json_t *result, const json_t *patch)
{
	const char *key;
	json_t *v;

	if (!json_is_object(patch)) {
		return;
	}
	json_object_foreach((json_t *)patch, key, v)
	{
		json_t *r = json_object_get(result, key);
		if (json_is_null(v)) {
			FZ_ASSERT(r == NULL, "member '%s' set to null is still there", key);
		} else {
			nulls_removed(r, v);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a, *b;
	json_t *target, *patch, *before_t, *before_p, *once, *twice;

	fz_split(data, size, &a, &b);
	target = a[0] ? json_loads(a, JSON_DECODE_ANY, NULL) : json_object();
	patch = json_loads(b, JSON_DECODE_ANY, NULL);
	free(a);
	free(b);
	if (target == NULL || patch == NULL) {
		json_decref(target);
		json_decref(patch);
		return 0;
	}
	before_t = json_deep_copy(target);
	before_p = json_deep_copy(patch);
	once = rz_merge_patch(target, patch);
	FZ_ASSERT(once != NULL, "no result");
	FZ_ASSERT(json_equal(target, before_t) && json_equal(patch, before_p), "inputs modified");
	if (!json_is_object(patch)) {
		FZ_ASSERT(json_equal(once, patch), "a non-object patch did not replace the target");
	}
	nulls_removed(once, patch);
	twice = rz_merge_patch(once, patch);
	FZ_ASSERT(twice != NULL && json_equal(once, twice), "merge patch is not idempotent");
	json_decref(twice);
	json_decref(once);
	json_decref(before_t);
	json_decref(before_p);
	json_decref(target);
	json_decref(patch);
	return 0;
}
