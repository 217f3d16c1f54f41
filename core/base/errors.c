/* core/base/errors.c - the one table of error texts. */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/errors.h"
#include "core/base/text.h"

static const struct {
	int code;
	const char *text;
} codes[] = {
	{ REZUS_EINTERNAL, "internal error" },
	{ REZUS_EINVALID, "invalid input" },
	{ REZUS_ECONFIG, "invalid configuration" },
	{ REZUS_ETOOBIG, "size limit exceeded" },
	{ REZUS_EABI, "ABI mismatch" },
	{ REZUS_ERENDER, "render failed" },
	{ RZ_EDB, "database error" },
	{ RZ_ESCHEMA, "database schema is newer than this binary" },
	{ RZ_ELOCKED, "data directory is locked by another instance" },
	{ RZ_EPARSE, "parse error" },
	{ RZ_ENOTFOUND, "not found" },
	{ RZ_ECONFLICT, "conflict" },
	{ RZ_EGONE, "history no longer kept" },
	{ RZ_ETERMINATING, "owner is being deleted" },
	{ RZ_ENOAUTH, "no credentials" },
	{ RZ_EAUTH, "invalid credentials" },
	{ RZ_ECORRUPT, "damaged or truncated file" },
};

const char *rz_strerror(int code)
{
	if (code == 0) {
		return "success";
	}
	if (code < 0 && code > -10000) {
		return strerror(-code);
	}
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		if (codes[i].code == code) {
			return codes[i].text;
		}
	}
	return "unknown error";
}

int rz_err_set(rz_err_t *err, int code, const char *fmt, ...)
{
	if (err != NULL) {
		va_list ap;
		int n;
		err->code = code;
		va_start(ap, fmt);
		n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		rz_text_fit(err->msg, sizeof(err->msg), n); /* too long: cut at a word, "..." */
	}
	return code;
}

void rz_err_clear(rz_err_t *err)
{
	if (err != NULL) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
