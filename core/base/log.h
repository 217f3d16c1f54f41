/*
 * core/base/log.h - the one logging sink.
 *
 * Lines are logfmt on stderr (or a file, reopened on SIGHUP):
 *   ts=2026-11-30T04:31:11.123Z level=info subsys=http msg="listening" addr=127.0.0.1:8080
 * Levels are the syslog ones. Safe to call from any thread; each line is one write(2).
 * Secrets never reach the log: key/value pairs whose key names a secret are redacted.
 */
#ifndef RZ_LOG_H
#define RZ_LOG_H

#include <stdbool.h>

#include "core/base/errors.h"

enum rz_log_level {
	RZ_LOG_EMERG = 0,
	RZ_LOG_ALERT = 1,
	RZ_LOG_CRIT = 2,
	RZ_LOG_ERR = 3,
	RZ_LOG_WARNING = 4,
	RZ_LOG_NOTICE = 5,
	RZ_LOG_INFO = 6,
	RZ_LOG_DEBUG = 7,
};

/* What rz_log_redact() puts in place of a secret. */
#define RZ_LOG_REDACTED "[redacted]"

/* Parse "debug", "info", "notice", "warning"/"warn", "err"/"error", "crit", "alert",
 * "emerg" (case-insensitive). Returns 0 and sets *level, or -EINVAL. */
int rz_log_level_parse(const char *s, int *level);

/* Name of a level, e.g. "warning". Borrowed — a static string. */
const char *rz_log_level_name(int level);

/* Messages above this level are dropped. Default RZ_LOG_INFO. */
void rz_log_set_level(int level);
int rz_log_get_level(void);
bool rz_log_enabled(int level);

/* Send lines to path (appended, created 0640), or to stderr when path is NULL or "".
 * path is copied. Returns 0 or a negative errno with err filled. */
int rz_log_open(const char *path, rz_err_t *err);

/* Reopen the current file (after rotation). No-op on stderr. Returns 0 or -errno. */
int rz_log_reopen(void);

/* Back to stderr, releasing the file. */
void rz_log_close(void);

/* One line with msg formatted printf-style. subsys is e.g. "http", "db", "config". */
void rz_log(int level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One line with a fixed msg and key/value pairs: const char *key, const char *value, ...,
 * terminated by a NULL key. A NULL value logs as the empty string. Values of secret keys
 * (see rz_log_is_secret_key) are replaced by RZ_LOG_REDACTED. */
void rz_logkv(int level, const char *subsys, const char *msg, ...) __attribute__((sentinel));

/* True when a key names a secret: password, passwd, secret, token, authorization,
 * cookie, private_key, api_key, credential (as a word in the key, case-insensitive). */
bool rz_log_is_secret_key(const char *key);

/* value, or RZ_LOG_REDACTED when key names a secret. Borrowed — value or a static string. */
const char *rz_log_redact(const char *key, const char *value);

/* Append one logfmt value to buf (quoted and escaped when needed). Returns the length the
 * full value needs, like snprintf; writes at most size-1 bytes plus NUL. For tests and for
 * callers that build lines. */
int rz_log_quote(char *buf, int size, const char *value);

#define rz_log_err(subsys, ...)   rz_log(RZ_LOG_ERR, subsys, __VA_ARGS__)
#define rz_log_warn(subsys, ...)  rz_log(RZ_LOG_WARNING, subsys, __VA_ARGS__)
#define rz_log_info(subsys, ...)  rz_log(RZ_LOG_INFO, subsys, __VA_ARGS__)
#define rz_log_debug(subsys, ...) rz_log(RZ_LOG_DEBUG, subsys, __VA_ARGS__)

#endif /* RZ_LOG_H */
