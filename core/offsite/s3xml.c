/* core/offsite/s3xml.c - the two XML documents S3 answers with that we read: a page of
 * ListObjectsV2 and an <Error>. A small walker, not a general XML parser: elements,
 * attributes skipped, text with the five named entities and character references, CDATA,
 * comments and <?…?> skipped; no DOCTYPE (S3 sends none, and refusing it refuses entity
 * tricks). Linear in its input, nested at most DEPTH deep, every field bounded; the fuzz
 * target fuzz/s3xml.c runs both readers. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/offsite/offsite-int.h"

#define DEPTH    8
#define NAME_LEN 40

struct walker {
	const char *p, *end;
	int depth;
	char stack[DEPTH][NAME_LEN];
	int (*open)(struct walker *w);
	int (*close)(struct walker *w);
	/* raw text of the innermost element (cdata: no entities in it) */
	int (*text)(struct walker *w, const char *s, size_t n, bool cdata);
};

static const char *find(const char *p, const char *end, const char *what)
{
	size_t n = strlen(what);

	for (; p + n <= end; p++) {
		if (memcmp(p, what, n) == 0) {
			return p;
		}
	}
	return NULL;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == ':';
}

/* The name at w->p into name (its local part: "s3:Key" is "Key"); -1 when none or too long. */
static int read_name(struct walker *w, char name[NAME_LEN])
{
	const char *start = w->p, *colon;

	while (w->p < w->end && name_char(*w->p)) {
		w->p++;
	}
	if (w->p == start) {
		return -1;
	}
	for (colon = w->p; colon > start && colon[-1] != ':'; colon--) {
	}
	if (w->p - colon <= 0 || w->p - colon >= NAME_LEN) {
		return -1;
	}
	memcpy(name, colon, (size_t)(w->p - colon));
	name[w->p - colon] = '\0';
	return 0;
}

/* An element's start after its "<": the name, attributes (skipped, quotes respected), and
 * ">" or "/>". */
static int open_tag(struct walker *w)
{
	char quote = 0;
	bool empty;

	if (w->depth == DEPTH || read_name(w, w->stack[w->depth]) < 0) {
		return -1;
	}
	for (; w->p < w->end && (quote != 0 || *w->p != '>'); w->p++) {
		if (quote != 0 && *w->p == quote) {
			quote = 0;
		} else if (quote == 0 && (*w->p == '"' || *w->p == '\'')) {
			quote = *w->p;
		} else if (quote == 0 && *w->p == '<') {
			return -1;
		}
	}
	if (w->p == w->end) {
		return -1;
	}
	empty = w->p[-1] == '/';
	w->p++;
	w->depth++;
	if (w->open != NULL && w->open(w) < 0) {
		return -1;
	}
	if (empty) {
		if (w->close != NULL && w->close(w) < 0) {
			return -1;
		}
		w->depth--;
	}
	return 0;
}

static int close_tag(struct walker *w)
{
	char name[NAME_LEN];

	if (w->depth == 0 || read_name(w, name) < 0 || strcmp(name, w->stack[w->depth - 1]) != 0) {
		return -1;
	}
	while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\r' || *w->p == '\n')) {
		w->p++;
	}
	if (w->p == w->end || *w->p != '>') {
		return -1;
	}
	w->p++;
	if (w->close != NULL && w->close(w) < 0) {
		return -1;
	}
	w->depth--;
	return 0;
}

/* What follows a "<": 0, or -1 for malformed input. */
static int markup(struct walker *w)
{
	const char *e;

	if (w->end - w->p >= 2 && w->p[1] == '?') {
		e = find(w->p + 2, w->end, "?>");
		w->p = e != NULL ? e + 2 : NULL;
	} else if (w->end - w->p >= 4 && memcmp(w->p, "<!--", 4) == 0) {
		e = find(w->p + 4, w->end, "-->");
		w->p = e != NULL ? e + 3 : NULL;
	} else if (w->end - w->p >= 9 && memcmp(w->p, "<![CDATA[", 9) == 0) {
		e = find(w->p + 9, w->end, "]]>");
		if (e == NULL || w->depth == 0 ||
		    w->text(w, w->p + 9, (size_t)(e - w->p - 9), true) < 0) {
			return -1;
		}
		w->p = e + 3;
	} else if (w->end - w->p >= 2 && w->p[1] == '!') {
		return -1; /* DOCTYPE and the like */
	} else if (w->end - w->p >= 2 && w->p[1] == '/') {
		w->p += 2;
		return close_tag(w);
	} else {
		w->p++;
		return open_tag(w);
	}
	return w->p == NULL ? -1 : 0;
}

/* Walk the document: 0 when it is well formed (one root, every element closed). */
static int walk(struct walker *w, const char *xml, size_t len)
{
	bool root = false;

	w->p = xml;
	w->end = xml + len;
	w->depth = 0;
	while (w->p < w->end) {
		if (*w->p == '<') {
			int before = w->depth;
			if (markup(w) < 0) {
				return -1;
			}
			if (before == 0 && w->depth > 0) {
				if (root) {
					return -1; /* a second root */
				}
				root = true;
			}
			continue;
		}
		const char *lt = memchr(w->p, '<', (size_t)(w->end - w->p));
		size_t n = (size_t)((lt != NULL ? lt : w->end) - w->p);
		if (w->depth > 0 && w->text(w, w->p, n, false) < 0) {
			return -1;
		}
		w->p += n;
	}
	return root && w->depth == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ text */

/* code point cp as UTF-8 into out (4 bytes); its length, 0 when not a character XML
 * allows. */
static size_t utf8(unsigned long cp, char *out)
{
	if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
		return 0;
	}
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The entity at s (after "&", up to ";") decoded into out; its length, 0 when unknown. */
static size_t entity(const char *s, size_t n, char *out)
{
	static const struct {
		const char *name;
		char c;
	} named[] = {
		{ "lt", '<' }, { "gt", '>' }, { "amp", '&' }, { "quot", '"' }, { "apos", '\'' }
	};
	unsigned long cp = 0;
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (strlen(named[i].name) == n && memcmp(s, named[i].name, n) == 0) {
			out[0] = named[i].c;
			return 1;
		}
	}
	if (n < 2 || s[0] != '#') {
		return 0;
	}
	bool hex = s[1] == 'x';
	for (i = hex ? 2 : 1; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'          ? c - '0'
		        : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
		                                      : -1;
		if (d < 0 || cp > 0x10ffff) {
			return 0;
		}
		cp = cp * (hex ? 16 : 10) + (unsigned long)d;
	}
	return i > (hex ? 2u : 1u) ? utf8(cp, out) : 0;
}

/* A field being read: decoded text, at most cap - 1 bytes. */
struct field {
	char *buf;
	size_t cap, len;
	bool over; /* more than fits */
};

/* Append raw text (entities decoded unless cdata); -1 for a malformed entity. */
static int append(struct field *f, const char *s, size_t n, bool cdata)
{
	for (size_t i = 0; i < n;) {
		char one[4];
		size_t k = 1, used = 1;
		if (s[i] == '&' && !cdata) {
			const char *semi = memchr(s + i, ';', n - i < 12 ? n - i : 12);
			if (semi == NULL ||
			    (k = entity(s + i + 1, (size_t)(semi - s - i - 1), one)) == 0) {
				return -1;
			}
			used = (size_t)(semi - s - i) + 1;
		} else {
			one[0] = s[i];
		}
		if (f->len + k < f->cap) {
			memcpy(f->buf + f->len, one, k);
			f->len += k;
			f->buf[f->len] = '\0';
		} else {
			f->over = true;
		}
		i += used;
	}
	return 0;
}

static void field_reset(struct field *f)
{
	f->len = 0;
	f->over = false;
	if (f->cap > 0) {
		f->buf[0] = '\0';
	}
}

/* ------------------------------------------------------------------ ListObjectsV2 */

struct list {
	struct walker w;
	const char *strip;
	json_t *items;
	char key_b[1025], size_b[24], mod_b[40], trunc_b[8];
	struct field key, size, mod, trunc, next;
	bool bad_root;
	rz_err_t *err;
	int rc;
};

static bool at(const struct walker *w, int depth, const char *name)
{
	return w->depth == depth && strcmp(w->stack[depth - 1], name) == 0;
}

static int list_open(struct walker *w)
{
	struct list *l = (struct list *)w;

	if (w->depth == 1 && strcmp(w->stack[0], "ListBucketResult") != 0) {
		l->bad_root = true;
		return -1;
	}
	if (at(w, 2, "Contents")) {
		field_reset(&l->key);
		field_reset(&l->size);
		field_reset(&l->mod);
	}
	return 0;
}

/* A <Contents> ended: its entry, when its key is one of ours. */
static int list_entry(struct list *l)
{
	char *end, when[32];
	long long size;
	int64_t ms;

	size = strtoll(l->size.buf, &end, 10);
	ms = rz_clock_parse(l->mod.buf);
	if (l->key.len == 0 || l->key.over || strlen(l->key.buf) != l->key.len) {
		l->rc = rz_err_set(l->err, RZ_EPARSE, "s3: a listed object has no valid Key");
		return -1;
	}
	if (l->size.len == 0 || *end != '\0' || size < 0 || l->size.buf[0] == '-' || ms < 0) {
		l->rc = rz_err_set(l->err, RZ_EPARSE,
		                   "s3: listed object '%.64s' has no valid Size or LastModified",
		                   l->key.buf);
		return -1;
	}
	if (strncmp(l->key.buf, l->strip, strlen(l->strip)) != 0 ||
	    rz__offsite_check_key(l->key.buf + strlen(l->strip), false, NULL) < 0) {
		return 0; /* not one of ours */
	}
	if (json_array_size(l->items) >= RZ_TARGET_LIST_MAX) {
		l->rc = rz_err_set(l->err, REZUS_ETOOBIG,
		                   "s3: more than %d objects to list: narrow the prefix or prune",
		                   RZ_TARGET_LIST_MAX);
		return -1;
	}
	rz_clock_format(ms, when, sizeof(when));
	json_array_append_new(l->items,
	                      json_pack("{s:s,s:I,s:s}", "key", l->key.buf + strlen(l->strip),
	                                "size", (json_int_t)size, "modified", when));
	return 0;
}

static int list_close(struct walker *w)
{
	return at(w, 2, "Contents") ? list_entry((struct list *)w) : 0;
}

static int list_text(struct walker *w, const char *s, size_t n, bool cdata)
{
	struct list *l = (struct list *)w;
	struct field *f = NULL;

	if (at(w, 2, "IsTruncated")) {
		f = &l->trunc;
	} else if (at(w, 2, "NextContinuationToken")) {
		f = &l->next;
	} else if (w->depth == 3 && strcmp(w->stack[1], "Contents") == 0) {
		f = at(w, 3, "Key")            ? &l->key
		    : at(w, 3, "Size")         ? &l->size
		    : at(w, 3, "LastModified") ? &l->mod
		                               : NULL;
	}
	return f != NULL ? append(f, s, n, cdata) : 0;
}

int rz__s3_parse_list(const char *xml, size_t len, const char *strip, json_t *items,
                      bool *truncated, char *next, size_t next_size, rz_err_t *err)
{
	struct list l = { .w = { .open = list_open, .close = list_close, .text = list_text } };

	l.strip = strip;
	l.items = items;
	l.err = err;
	l.key = (struct field){ l.key_b, sizeof(l.key_b), 0, false };
	l.size = (struct field){ l.size_b, sizeof(l.size_b), 0, false };
	l.mod = (struct field){ l.mod_b, sizeof(l.mod_b), 0, false };
	l.trunc = (struct field){ l.trunc_b, sizeof(l.trunc_b), 0, false };
	l.next = (struct field){ next, next_size, 0, false };
	field_reset(&l.next);
	field_reset(&l.trunc);
	*truncated = false;
	if (walk(&l.w, xml, len) < 0) {
		return l.rc < 0
		           ? l.rc
		           : rz_err_set(err, RZ_EPARSE, "s3: the listing is %s",
		                        l.bad_root ? "not a ListBucketResult" : "malformed XML");
	}
	if (l.next.over || l.next.len >= RZ__S3_TOKEN_MAX) {
		return rz_err_set(err, RZ_EPARSE,
		                  "s3: the listing's continuation token is too long");
	}
	for (size_t i = 0; i < l.next.len; i++) {
		if (next[i] <= ' ' || next[i] > '~') { /* a NUL would end it early */
			return rz_err_set(
			    err, RZ_EPARSE,
			    "s3: the listing's continuation token is not printable ASCII");
		}
	}
	if (strcmp(l.trunc.buf, "true") != 0 && strcmp(l.trunc.buf, "false") != 0 &&
	    l.trunc.len != 0) {
		return rz_err_set(err, RZ_EPARSE, "s3: the listing's IsTruncated is not a boolean");
	}
	*truncated = strcmp(l.trunc.buf, "true") == 0;
	if (*truncated && l.next.len == 0) {
		return rz_err_set(err, RZ_EPARSE,
		                  "s3: the listing is truncated and gives no continuation token");
	}
	return 0;
}

/* ------------------------------------------------------------------ <Error> */

struct error {
	struct walker w;
	struct field code, message;
};

static int error_text(struct walker *w, const char *s, size_t n, bool cdata)
{
	struct error *e = (struct error *)w;

	if (w->depth == 2 && strcmp(w->stack[0], "Error") == 0) {
		if (strcmp(w->stack[1], "Code") == 0) {
			return append(&e->code, s, n, cdata);
		}
		if (strcmp(w->stack[1], "Message") == 0) {
			return append(&e->message, s, n, cdata);
		}
	}
	return 0;
}

static void printable(char *s)
{
	for (; *s != '\0'; s++) {
		if (*s < ' ' || *s > '~') {
			*s = '?';
		}
	}
}

void rz__s3_parse_error(const char *xml, size_t len, char *code, size_t code_size, char *message,
                        size_t message_size)
{
	struct error e = { .w = { .text = error_text } };

	e.code = (struct field){ code, code_size, 0, false };
	e.message = (struct field){ message, message_size, 0, false };
	field_reset(&e.code);
	field_reset(&e.message);
	if (walk(&e.w, xml, len) < 0) {
		field_reset(&e.code);
		field_reset(&e.message);
		return;
	}
	if (code_size > 0) {
		printable(code);
	}
	if (message_size > 0) {
		printable(message);
	}
}
