/*
 * core/base/text.h - text for messages: where a value, or a message too long for its
 * buffer, is cut (at a word or value boundary, never inside a word or a character, with
 * "..." after it), and how a value from a request is quoted in one.
 */
#ifndef RZ_TEXT_H
#define RZ_TEXT_H

#include <stddef.h>

#define RZ_ELLIPSIS "..."

/* How many bytes of s[0..len) (borrowed) to keep so that at most max remain: len when it
 * fits; else the end of the last whole value (before a space, ',', ';', '&' or '|', without
 * the separators before it) when that keeps at least half of max; else the end of the last
 * whole word (letters, digits, '_' and non-ASCII characters) keeping that much; else the
 * last such boundary however early; else the last whole UTF-8 character (one word longer
 * than max). */
size_t rz_text_cut(const char *s, size_t len, size_t max);

/* s (borrowed, may be NULL: "") quoted for a message into buf (size bytes, at least 4): at
 * most max bytes of it (and of size - 4), cut by rz_text_cut and followed by RZ_ELLIPSIS
 * when cut. Control characters and bytes of no valid UTF-8 character become '?', so the
 * result is valid UTF-8 whatever the input. Returns buf. */
const char *rz_echo(char *buf, size_t size, const char *s, size_t max);

/* The same for s[0..len) (borrowed), which need not end with a NUL. */
const char *rz_echon(char *buf, size_t size, const char *s, size_t len, size_t max);

/* Room for rz_echo of at most max bytes. */
#define RZ_ECHO_SIZE(max) ((max) + sizeof(RZ_ELLIPSIS))

/* rz_echo of s cut to max (a constant) into a compound literal, for a "%s" argument: the text
 * lives until the end of the enclosing block. */
#define RZ_ECHO(s, max) rz_echo((char[RZ_ECHO_SIZE(max)]){ 0 }, RZ_ECHO_SIZE(max), (s), (max))

/* After vsnprintf(buf, size, ...) returned n: when the text did not fit (n >= size), cut
 * what buf holds by rz_text_cut to leave room for RZ_ELLIPSIS, and append it. buf is left
 * alone otherwise (n < 0 too). size at least 4. */
void rz_text_fit(char *buf, size_t size, int n);

#endif /* RZ_TEXT_H */
