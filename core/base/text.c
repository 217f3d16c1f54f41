/* core/base/text.c - text for messages: cut at a word or value boundary, values quoted. */
#include <config.h>

#include <stdbool.h>
#include <string.h>

#include "core/base/text.h"

/* Between two values of a list or two words of a sentence. */
static bool is_separator(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ';' ||
	       c == '&' || c == '|';
}

/* Part of a word: ASCII letters and digits, '_', and any byte of a non-ASCII character. */
static bool is_word(char c)
{
	unsigned char u = (unsigned char)c;

	return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
	       u == '_' || u >= 0x80;
}

/* Not a UTF-8 continuation byte: a character starts here. */
static bool char_start(char c)
{
	return ((unsigned char)c & 0xc0) != 0x80;
}

/* The end of the last value at or before max (the separators before it left out), or 0. */
static size_t value_end(const char *s, size_t max)
{
	size_t p;

	for (p = max; p > 0 && !is_separator(s[p]); p--) {
	}
	while (p > 0 && is_separator(s[p - 1])) {
		p--;
	}
	return p;
}

/* The end of the last word at or before max and after min (a word character before it,
 * none at it), or 0. */
static size_t word_end(const char *s, size_t max, size_t min)
{
	for (size_t p = max; p > 0 && p > min; p--) {
		if (is_word(s[p - 1]) && !is_word(s[p])) {
			return p;
		}
	}
	return 0;
}

size_t rz_text_cut(const char *s, size_t len, size_t max)
{
	size_t half = max / 2, p;

	if (len <= max) {
		return len; /* else s[max] exists */
	}
	/* a boundary keeping at least half, a value's before a word's; then any boundary */
	if ((p = value_end(s, max)) >= half && p > 0) {
		return p;
	}
	if ((p = word_end(s, max, half > 0 ? half - 1 : 0)) > 0) {
		return p;
	}
	if ((p = value_end(s, max)) > 0 || (p = word_end(s, max, 0)) > 0) {
		return p;
	}
	for (p = max; p > 0 && !char_start(s[p]); p--) {
	}
	return p;
}

/* The length of the valid UTF-8 character at s (at most avail bytes), or 0 for a control
 * character or a byte that starts none (RFC 3629: no overlong forms, no surrogates). */
static size_t char_len(const char *s, size_t avail)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need;

	if (u[0] < 0x20 || u[0] == 0x7f) {
		return 0;
	}
	if (u[0] < 0x80) {
		return 1;
	}
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 2;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 3;
		lo = u[0] == 0xe0 ? 0xa0 : 0x80;
		hi = u[0] == 0xed ? 0x9f : 0xbf;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 4;
		lo = u[0] == 0xf0 ? 0x90 : 0x80;
		hi = u[0] == 0xf4 ? 0x8f : 0xbf;
	} else {
		return 0;
	}
	if (need > avail || u[1] < lo || u[1] > hi) {
		return 0;
	}
	for (size_t i = 2; i < need; i++) {
		if ((u[i] & 0xc0) != 0x80) {
			return 0;
		}
	}
	return need;
}

const char *rz_echo(char *buf, size_t size, const char *s, size_t max)
{
	return rz_echon(buf, size, s != NULL ? s : "", s != NULL ? strlen(s) : 0, max);
}

const char *rz_echon(char *buf, size_t size, const char *s, size_t len, size_t max)
{
	size_t n, o = 0, i = 0;

	if (max > size - sizeof(RZ_ELLIPSIS)) {
		max = size - sizeof(RZ_ELLIPSIS);
	}
	n = rz_text_cut(s, len, max);
	while (i < n) {
		size_t k = char_len(s + i, n - i);
		if (k == 0) {
			buf[o++] = '?';
			i++;
		} else {
			memcpy(buf + o, s + i, k);
			o += k;
			i += k;
		}
	}
	if (n < len) {
		memcpy(buf + o, RZ_ELLIPSIS, sizeof(RZ_ELLIPSIS) - 1);
		o += sizeof(RZ_ELLIPSIS) - 1;
	}
	buf[o] = '\0';
	return buf;
}

void rz_text_fit(char *buf, size_t size, int n)
{
	size_t cut;

	if (n < 0 || (size_t)n < size) {
		return;
	}
	cut = rz_text_cut(buf, strlen(buf), size - sizeof(RZ_ELLIPSIS));
	memcpy(buf + cut, RZ_ELLIPSIS, sizeof(RZ_ELLIPSIS));
}
