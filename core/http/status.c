/* core/http/status.c - Kubernetes Status objects. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/http/status.h"

static const struct {
	int code;
	const char *reason;
} reasons[] = {
	{ 400, "BadRequest" },
	{ 401, "Unauthorized" },
	{ 403, "Forbidden" },
	{ 404, "NotFound" },
	{ 405, "MethodNotAllowed" },
	{ 406, "NotAcceptable" },
	{ 409, "Conflict" },
	{ 410, "Gone" },
	{ 413, "RequestEntityTooLarge" },
	{ 415, "UnsupportedMediaType" },
	{ 422, "Invalid" },
	{ 429, "TooManyRequests" },
	{ 500, "InternalError" },
	{ 503, "ServiceUnavailable" },
	{ 504, "Timeout" },
	{ 507, "InsufficientStorage" },
};

const char *rz_status_reason(int code)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (reasons[i].code == code) {
			return reasons[i].reason;
		}
	}
	if (code >= 500) {
		return "InternalError";
	}
	return code >= 400 ? "BadRequest" : "";
}

json_t *rz_status_new(int code, const char *reason, const char *message)
{
	bool ok = code >= 200 && code < 300;

	return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
	                 "v1", "metadata", "status", ok ? "Success" : "Failure", "message",
	                 message ? message : "", "reason", reason ? reason : rz_status_reason(code),
	                 "code", code);
}

static json_t *status_details(json_t *status)
{
	json_t *d = json_object_get(status, "details");

	if (d == NULL) {
		d = json_object();
		if (json_object_set_new(status, "details", d) < 0) {
			return NULL;
		}
	}
	return d;
}

void rz_status_set_target(json_t *status, const char *kind, const char *name)
{
	json_t *d = status_details(status);

	if (d == NULL) {
		return;
	}
	if (name != NULL) {
		json_object_set_new(d, "name", json_string(name));
	}
	if (kind != NULL) {
		json_object_set_new(d, "kind", json_string(kind));
	}
}

void rz_status_add_cause(json_t *status, const char *field, const char *reason, const char *message)
{
	json_t *d = status_details(status);
	json_t *causes;

	if (d == NULL) {
		return;
	}
	causes = json_object_get(d, "causes");
	if (causes == NULL) {
		causes = json_array();
		json_object_set_new(d, "causes", causes);
	}
	json_array_append_new(causes,
	                      json_pack("{s:s, s:s, s:s}", "field", field ? field : "", "reason",
	                                reason ? reason : "", "message", message ? message : ""));
}

json_t *rz_status_storage(int rc)
{
	switch (rc) {
	case -ENOSPC:
		return rz_status_new(507, NULL,
		                     "the data dir is full (No space left on device): the change "
		                     "was not stored; free space and retry");
	case -EROFS:
		return rz_status_new(
		    503, NULL,
		    "the data dir is read-only (Read-only file system): the change "
		    "was not stored");
	case -EIO:
		return rz_status_new(503, NULL,
		                     "the data dir cannot be written (Input/output error): the "
		                     "change was not stored");
	default:
		return NULL;
	}
}
