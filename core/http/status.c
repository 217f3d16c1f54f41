/* core/http/status.c - Kubernetes Status objects. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

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
	{ 408, "Timeout" },
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

/* Length of the UTF-8 sequence at s[0..len), or 0 when it is not one (overlong forms,
 * surrogates and code points above U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80) {
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		n = 2;
		cp = s[0] & 0x1Fu;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		n = 3;
		cp = s[0] & 0x0Fu;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4;
		cp = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (len < n) {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			return 0;
		}
		cp = (cp << 6) | (s[i] & 0x3Fu);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
		return 0;
	}
	return n;
}

bool rz_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		uint64_t w;
		size_t n;
		/* ASCII, eight bytes at a time: most of what is checked (a token, a path) */
		while (i + 8 <= len && (memcpy(&w, p + i, 8), (w & 0x8080808080808080ULL) == 0)) {
			i += 8;
		}
		if (i == len) {
			break;
		}
		n = utf8_seq(p + i, len - i);
		if (n == 0) {
			return false;
		}
		i += n;
	}
	return true;
}

char *rz_utf8_scrub(const char *s)
{
	static const char repl[] = "\xEF\xBF\xBD"; /* U+FFFD */
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), o = 0;
	char *out = malloc(len * 3 + 1);

	if (out == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(p + i, len - i);
		if (n == 0) {
			memcpy(out + o, repl, 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return out;
}

/* A JSON string of s; invalid UTF-8 (which jansson refuses, and which a message quoting
 * what a client sent may hold) becomes U+FFFD. NULL on OOM. */
static json_t *text(const char *s)
{
	char *clean;
	json_t *j;

	if (s == NULL) {
		s = "";
	}
	if (rz_utf8_valid(s, strlen(s))) {
		return json_string(s);
	}
	clean = rz_utf8_scrub(s);
	j = clean ? json_string(clean) : NULL;
	free(clean);
	return j;
}

json_t *rz_status_new(int code, const char *reason, const char *message)
{
	bool ok = code >= 200 && code < 300;

	return json_pack("{s:s, s:s, s:{}, s:s, s:o, s:o, s:i}", "kind", "Status", "apiVersion",
	                 "v1", "metadata", "status", ok ? "Success" : "Failure", "message",
	                 text(message), "reason", text(reason ? reason : rz_status_reason(code)),
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
		json_object_set_new(d, "name", text(name));
	}
	if (kind != NULL) {
		json_object_set_new(d, "kind", text(kind));
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
	json_array_append_new(causes, json_pack("{s:o, s:o, s:o}", "field", text(field), "reason",
	                                        text(reason), "message", text(message)));
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
