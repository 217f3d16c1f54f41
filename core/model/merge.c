/*
 * core/model/merge.c - JSON Merge Patch (RFC 7386 §2).
 *
 * The result is built afresh: members of the target that the patch does not mention are
 * deep-copied, the others are merged recursively, so neither input is touched. Members
 * keep the target's order; members new to the target follow in the patch's order.
 */
/* Angle brackets: a quoted "config.h" would find core/base/config.h next to this file. */
#include <config.h>

#include <jansson.h>

#include "core/model/merge.h"

/* Add key: merge(target member, patch member) to result, or nothing when the patch member
 * is null. Returns 0 or -1 on out of memory. */
static int merge_member(json_t *result, const char *key, const json_t *target_value,
                        const json_t *patch_value)
{
	if (json_is_null(patch_value)) {
		return 0;
	}
	return json_object_set_new(result, key, rz_merge_patch(target_value, patch_value));
}

/* Both are objects (target may also be NULL). */
static json_t *merge_objects(const json_t *target, const json_t *patch)
{
	/* jansson's iterators take non-const objects; neither is modified here. */
	json_t *t = (json_t *)target;
	json_t *pt = (json_t *)patch;
	json_t *result = json_object();
	const char *key;
	json_t *value;

	if (result == NULL) {
		return NULL;
	}
	json_object_foreach(t, key, value)
	{
		const json_t *pv = json_object_get(patch, key);
		int rc = pv != NULL ? merge_member(result, key, value, pv)
		                    : json_object_set_new(result, key, json_deep_copy(value));
		if (rc != 0) {
			json_decref(result);
			return NULL;
		}
	}
	json_object_foreach(pt, key, value)
	{
		if (json_object_get(target, key) == NULL &&
		    merge_member(result, key, NULL, value) != 0) {
			json_decref(result);
			return NULL;
		}
	}
	return result;
}

json_t *rz_merge_patch(const json_t *target, const json_t *patch)
{
	if (!json_is_object(patch)) {
		return json_deep_copy(patch);
	}
	return merge_objects(json_is_object(target) ? target : NULL, patch);
}
