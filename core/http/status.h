/*
 * core/http/status.h - Kubernetes Status objects (SPEC §3): the body of every error reply
 * and of the few success replies that carry no object.
 */
#ifndef RZ_STATUS_H
#define RZ_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Every string given to these functions may come from a client: invalid UTF-8 in it becomes
 * U+FFFD, so a Status is always valid JSON and never echoes invalid bytes. */

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

/* True when s[0..len) is valid UTF-8 (no overlong forms, surrogates or code points above
 * U+10FFFF). */
bool rz_utf8_valid(const char *s, size_t len);

/* A copy of s with every byte that does not start a valid UTF-8 sequence replaced by
 * U+FFFD. Caller owns the result; free(). NULL on OOM. */
char *rz_utf8_scrub(const char *s);

#endif /* RZ_STATUS_H */
