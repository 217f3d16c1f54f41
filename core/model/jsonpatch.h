/*
 * core/model/jsonpatch.h - JSON Patch (RFC 6902) with JSON Pointers (RFC 6901).
 */
#ifndef RZ_JSONPATCH_H
#define RZ_JSONPATCH_H

#include <jansson.h>

#include "core/base/errors.h"

#define RZ_JSONPATCH_MAX_OPS     10000  /* operations in one patch, as kube-apiserver */
#define RZ_JSONPATCH_MAX_DEPTH   128    /* reference tokens in one pointer */
#define RZ_JSONPATCH_MAX_POINTER 4096   /* bytes in one pointer */
#define RZ_JSONPATCH_MAX_COPIED  100000 /* values "copy" operations may duplicate, in all */
#define RZ_JSONPATCH_MAX_NESTING 2048   /* levels of the result, as the JSON parser's */

/* Apply patch (an array of operations: add, remove, replace, move, copy, test) to target
 * and set *out to the result; the operations apply in order and all or none take effect.
 * target and patch are borrowed and not modified; on success the caller owns *out
 * (json_decref), on failure *out is NULL.
 * Returns 0; RZ_EPARSE when the patch is malformed (not an array, an operation not an
 * object, an unknown op, a member missing or of the wrong type, a bad pointer, a move into
 * its own child); -E2BIG for more than RZ_JSONPATCH_MAX_OPS operations; -EINVAL when an
 * operation cannot apply (a location missing, an index out of range, a failed test, a
 * result too large or too deep); -ENOMEM. err (may be NULL) names the operation by its index,
 * op and path. On -EINVAL, a cause {field: the operation's path, reason, message} is appended
 * to causes (borrowed; may be NULL), a Kubernetes Status cause. */
int rz_json_patch(const json_t *target, const json_t *patch, json_t **out, json_t *causes,
                  rz_err_t *err);

#endif /* RZ_JSONPATCH_H */
