/*
 * core/base/errors.h - error codes and the error buffer used throughout the core.
 *
 * Fallible functions return 0 or a negative code: a negated errno value, a REZUS_E*
 * code from the SDK, or one of the RZ_E* codes below (core only, below -10100).
 * One strerror table (rz_strerror) covers all three.
 */
#ifndef RZ_ERRORS_H
#define RZ_ERRORS_H

#include <rezus/errors.h>

enum {
	RZ_EDB = -10101,          /* the database reported an error */
	RZ_ESCHEMA = -10102,      /* the database schema is newer than this binary */
	RZ_ELOCKED = -10103,      /* another instance holds the data directory */
	RZ_EPARSE = -10104,       /* input could not be parsed */
	RZ_ENOTFOUND = -10105,    /* the named thing does not exist */
	RZ_ECONFLICT = -10106,    /* a precondition (resourceVersion) did not hold */
	RZ_EGONE = -10107,        /* the requested history is no longer kept */
	RZ_ETERMINATING = -10108, /* the owner is being deleted */
	RZ_ENOAUTH = -10109,      /* no credentials were given */
	RZ_EAUTH = -10110,        /* credentials were given and are not valid */
	RZ_ECORRUPT = -10111      /* a file is damaged or truncated */
};

typedef rezus_err_t rz_err_t;

/* Fill err (may be NULL) with code and a printf-style message; returns code. */
int rz_err_set(rz_err_t *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Clear err (may be NULL) to code 0 and an empty message. */
void rz_err_clear(rz_err_t *err);

/* Text for a code (errno or project). Borrowed — a static string, never NULL. */
const char *rz_strerror(int code);

#endif /* RZ_ERRORS_H */
