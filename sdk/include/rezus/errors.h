/*
 * rezus/errors.h - error codes and the error buffer shared by the host and plugins.
 *
 * Fallible functions return 0 on success or a negative code: a negated errno value
 * (-ENOMEM, -EINVAL, ...) or one of the REZUS_E* codes below, all below -10000.
 * Details travel in a caller-owned rezus_err_t; no heap string crosses the plugin boundary.
 */
#ifndef REZUS_ERRORS_H
#define REZUS_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Codes shared with plugins. Values are part of the ABI: never renumber, only append. */
enum {
	REZUS_EINTERNAL = -10001, /* a bug: an invariant did not hold */
	REZUS_EINVALID = -10002,  /* input failed validation; see the message */
	REZUS_ECONFIG = -10003,   /* configuration is invalid */
	REZUS_ETOOBIG = -10004,   /* a size limit was exceeded */
	REZUS_EABI = -10005,      /* ABI mismatch between host and plugin */
	REZUS_ERENDER = -10006,   /* a render could not produce valid output */
};

#define REZUS_ERR_MSG_MAX 256

/* An error report. Caller owns the struct; callee fills code and a NUL-terminated msg. */
typedef struct rezus_err {
	int code;
	char msg[REZUS_ERR_MSG_MAX];
} rezus_err_t;

#ifdef __cplusplus
}
#endif

#endif /* REZUS_ERRORS_H */
