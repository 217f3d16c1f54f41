/*
 * core/engine/tfui.h - tofu's JSON UI lines (`-json`: objects with "@level", "@message",
 * "type", ...) as people read them: the message, a warning or error said so, a
 * diagnostic with its place and detail as tofu prints it in its human output; and what a
 * served log must not show its readers: the resource ids tofu prints ("Creation complete
 * after 0s [id=…]"), since a cluster's secret may be one (the sim plugin's kubeconfig
 * token is the id of terraform_data.cluster_secrets).
 */
#ifndef RZ_TFUI_H
#define RZ_TFUI_H

#include <stddef.h>

typedef struct rz_tfui rz_tfui_t;

/* Ids of at least this many bytes are redacted wherever they appear; shorter ones only
 * where tofu prints them as ids (a "1" must not blank every 1 in a log). */
#define RZ_TFUI_MIN_ID 8

/* A JSON UI line longer than this is not parsed: it is shown as the text it is (tofu's
 * longest, a diagnostic with its snippet, is a few KiB; the runner delivers at most 1 MiB
 * at a time). */
#define RZ_TFUI_JSON_MAX ((size_t)256 << 10)

/* The most resource ids one reader (or the log file) learns: a line showing a new one
 * beyond is not stored or served, as it could not be redacted where the id recurs. */
#define RZ_TFUI_MAX_IDS 20000

/* Whether line is one to parse as a JSON UI object: it starts with '{' and is at most
 * RZ_TFUI_JSON_MAX bytes. */
#define rz_tfui_is_json(line, len) ((len) > 0 && (line)[0] == '{' && (len) <= RZ_TFUI_JSON_MAX)

/* in[0..len) as text safe to show and to put in JSON: each byte of an invalid UTF-8
 * sequence becomes '?', a control character (NUL, escape, \r, ...) but \t a blank. Writes
 * at most size - 1 bytes and a NUL into out; returns the bytes written. */
size_t rz_tfui_text(char *out, size_t size, const char *in, size_t len);

/* One stored log line (without its newline) as human text: a JSON UI line's message —
 * prefixed "Warning: " or "Error: " for level warn or error, a diagnostic as severity and
 * summary, where (address, file and line, the code, the values it saw) and the detail —
 * and any other line (init's output) as it is. Several lines are joined by '\n', with no
 * newline at the end. Caller owns the result; release with free(). *out_len is its
 * length. NULL when out of memory. */
char *rz_tfui_human(const char *line, size_t len, size_t *out_len);

/* What one reader of a log has been shown: the resource ids its lines carried. Caller
 * owns the result; release with rz_tfui_free(). NULL when out of memory. */
rz_tfui_t *rz_tfui_new(void);
void rz_tfui_free(rz_tfui_t *u); /* accepts NULL */

/* Remember the resource ids a stored line shows: a JSON UI hook's id_value, and "[id=…]"
 * in any line. 0, or -ENOMEM (then some may be forgotten). */
int rz_tfui_learn(rz_tfui_t *u, const char *line, size_t len);

/* text (a stored line, or its human form) with resource ids redacted as "(redacted)": what
 * follows "[id=" and a hook's "id_value", learned or not, and anywhere in it every id of
 * at least RZ_TFUI_MIN_ID bytes that u has learned (as a word, or a piece of one between
 * '/', '=' or ':'). Caller owns the result; release with free(). *out_len is its length.
 * NULL when out of memory. */
char *rz_tfui_redact(const rz_tfui_t *u, const char *text, size_t len, size_t *out_len);

#endif /* RZ_TFUI_H */
