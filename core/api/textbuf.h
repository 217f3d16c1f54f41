/*
 * core/api/textbuf.h - a growing text buffer for the replies the API writes in pieces
 * (watch events, list pages). On allocation failure it stays as it was and marks itself.
 */
#ifndef RZ_TEXTBUF_H
#define RZ_TEXTBUF_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct rz_textbuf {
	char *p; /* NUL-terminated once anything was added */
	size_t len, cap;
	bool oom;
} rz_textbuf_t;

static inline void rz_textbuf_add(rz_textbuf_t *b, const char *s, size_t n)
{
	if (b->oom) {
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;
		while (cap < b->len + n + 1) {
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (p == NULL) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void rz_textbuf_str(rz_textbuf_t *b, const char *s)
{
	rz_textbuf_add(b, s, strlen(s));
}

#endif /* RZ_TEXTBUF_H */
