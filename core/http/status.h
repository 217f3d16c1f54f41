/*
 * core/http/status.h - Kubernetes Status objects (SPEC §3): the body of every error reply
 * and of the few success replies that carry no object.
 */
#ifndef RZ_STATUS_H
#define RZ_STATUS_H

#include <jansson.h>

/* Status with status "Failure" (or "Success" for 2xx), code, reason (NULL = the standard
 * reason for code), message. Caller owns the result; json_decref(). NULL on OOM. */
json_t *rz_status_new(int code, const char *reason, const char *message);

/* Set details.kind/details.name (either may be NULL). */
void rz_status_set_target(json_t *status, const char *kind, const char *name);

/* Append details.causes[] {field, reason, message}. */
void rz_status_add_cause(json_t *status, const char *field, const char *reason,
                         const char *message);

/* The Kubernetes reason for an HTTP code ("NotFound" for 404, ...); "InternalError" for
 * unknown 5xx, "BadRequest" for unknown 4xx. Borrowed — static. */
const char *rz_status_reason(int code);

/* The Status for a failure of the disk under the data dir, or NULL when rc is not one: 507
 * InsufficientStorage for -ENOSPC (disk or quota full), 503 ServiceUnavailable for -EROFS
 * (read-only) and -EIO; the message names the cause and says nothing was stored. Caller
 * owns the result; json_decref(). */
json_t *rz_status_storage(int rc);

#endif /* RZ_STATUS_H */
