/*
 * core/engine/tfui.h - tofu's JSON UI lines (`-json`: objects with "@level", "@message",
 * "type", ...) as people read them: the message, a warning or error said so, a
 * diagnostic with its place and detail as tofu prints it in its human output.
 */
#ifndef RZ_TFUI_H
#define RZ_TFUI_H

#include <stddef.h>

/* One stored log line (without its newline) as human text: a JSON UI line's message —
 * prefixed "Warning: " or "Error: " for level warn or error, a diagnostic as severity and
 * summary, where (address, file and line, the code, the values it saw) and the detail —
 * and any other line (init's output) as it is. Several lines are joined by '\n', with no
 * newline at the end. Caller owns the result; release with free(). *out_len is its
 * length. NULL when out of memory. */
char *rz_tfui_human(const char *line, size_t len, size_t *out_len);

#endif /* RZ_TFUI_H */
