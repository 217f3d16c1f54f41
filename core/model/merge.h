/*
 * core/model/merge.h - JSON Merge Patch (RFC 7386).
 */
#ifndef RZ_MERGE_H
#define RZ_MERGE_H

#include <jansson.h>

/* Apply patch to target and return the result. When patch is an object: if target is not
 * an object it is replaced by {}; each member of patch whose value is null removes that
 * key from the result, every other member is merged recursively. When patch is not an
 * object the result is a copy of patch. target and patch are borrowed and not modified.
 * Caller owns the result (json_decref); NULL on out of memory. */
json_t *rz_merge_patch(const json_t *target, const json_t *patch);

#endif /* RZ_MERGE_H */
