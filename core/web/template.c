/*
 * core/web/template.c - the mustache subset of template.h: each template compiled once into
 * a list of instructions (text, value, section, partial), the HTML context of every tag
 * decided by a small HTML scanner at compile time, rendered from jansson values.
 */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/web/template.h"

#define SET_MAGIC 0x7a74706cu /* "ztpl" */
#define DIR_DEPTH 8           /* folders under web.dir */
#define STACK_MAX (RZ_TPL_MAX_NESTING * (RZ_TPL_MAX_PARTIAL_DEPTH + 1) + 1)

enum op { OP_TEXT, OP_VAR, OP_SECTION, OP_INVERTED, OP_PARTIAL };

/* How a value is written: for HTML text and attributes; a URL that may begin with the
 * value (scheme checked); a URL already begun (normalised); after its ? or # (every
 * reserved character encoded); raw. */
enum esc { ESC_HTML, ESC_URL_START, ESC_URL, ESC_URL_PART, ESC_RAW };

struct ins {
	uint8_t op, esc;
	uint32_t end;     /* SECTION, INVERTED: the index after the body */
	uint32_t partial; /* PARTIAL: the template's index, once linked */
	size_t len;       /* TEXT: bytes */
	size_t at;        /* offset of the tag in the source, for errors */
	const char *text; /* TEXT: in src; otherwise the tag's name, NUL-terminated in src */
};

struct tpl {
	char *name;
	char *file;
	char *src; /* the source's copy: TEXT points into it, names are cut out of it */
	size_t src_len;
	struct ins *ins;
	size_t n, cap;
};

struct rz_tpl_set {
	uint32_t magic;
	struct tpl *t; /* sorted by name */
	size_t n;
};

/* ------------------------------------------------------------------ errors */

static void line_col(const char *s, size_t at, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < at; i++) {
		if (s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int fail_at(rz_err_t *err, const struct tpl *t, size_t at, const char *msg, const char *arg)
{
	unsigned line, col;

	line_col(t->src, at, &line, &col);
	return rz_err_set(err, RZ_EPARSE, "%s:%u:%u: %s%s%s%s", t->file, line, col, msg,
	                  arg != NULL ? " '" : "", arg != NULL ? arg : "", arg != NULL ? "'" : "");
}

/* ------------------------------------------------------------------ the HTML scanner */

enum hs {
	HS_TEXT,
	HS_TAG_OPEN, /* after < */
	HS_END_OPEN, /* after </ */
	HS_TAG_NAME,
	HS_IN_TAG, /* between attributes */
	HS_ATTR_NAME,
	HS_AFTER_ATTR_NAME,
	HS_BEFORE_VALUE,
	HS_VALUE_DQ,
	HS_VALUE_SQ,
	HS_VALUE_UQ,
	HS_COMMENT, /* <!-- ... --> */
	HS_DECL,    /* <!DOCTYPE ...>, <?...>, </ bogus> */
	HS_RAWTEXT  /* the content of <script> or <style> */
};

enum attr_kind { A_PLAIN, A_URL, A_SCRIPT };

/* Where the scanner is; a section must close where it opened. */
struct where {
	enum hs hs;
	size_t tag_at, attr_at; /* the tag's < and the attribute's first byte, when inside */
};

struct compile {
	struct tpl *t;
	const char *s;
	size_t len, pos, text_start;
	struct where w;
	bool end_tag;
	char tag[16];  /* the tag's name, lower case, cut to fit */
	char attr[24]; /* the attribute's name, lower case, cut to fit */
	size_t tag_len, attr_len;
	enum attr_kind kind;
	bool url_fixed; /* the attribute's literal text so far fixes the URL's scheme */
	bool url_query; /* ... and has reached its query or fragment */
	struct open {
		size_t ins;
		const char *name;
		struct where w;
		bool url_fixed, url_query;
	} open[RZ_TPL_MAX_NESTING];
	int depth;
	rz_err_t *err;
};

static const char *const url_attrs[] = { "href",      "src",         "action", "formaction",
	                                 "hx-get",    "hx-post",     "hx-put", "hx-patch",
	                                 "hx-delete", "sse-connect", "poster", "cite",
	                                 "data",      "xlink:href" };

static enum attr_kind attr_kind(const char *a)
{
	if (strncmp(a, "on", 2) == 0 || strcmp(a, "style") == 0 || strcmp(a, "srcdoc") == 0 ||
	    strncmp(a, "hx-on", 5) == 0 || strcmp(a, "hx-vals") == 0 ||
	    strcmp(a, "hx-headers") == 0 || strncmp(a, "x-", 2) == 0 || a[0] == '@' ||
	    a[0] == ':') {
		return A_SCRIPT;
	}
	for (size_t i = 0; i < sizeof(url_attrs) / sizeof(url_attrs[0]); i++) {
		if (strcmp(a, url_attrs[i]) == 0) {
			return A_URL;
		}
	}
	return A_PLAIN;
}

static void name_add(char *buf, size_t size, size_t *len, char c)
{
	if (*len + 1 < size) {
		buf[*len] = (char)tolower((unsigned char)c);
		buf[*len + 1] = '\0';
	}
	(*len)++;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static void enter_text(struct compile *c)
{
	c->w.hs = HS_TEXT;
	c->w.tag_at = 0;
	c->w.attr_at = 0;
}

static void tag_end(struct compile *c)
{
	bool raw = !c->end_tag && c->tag_len < sizeof(c->tag) &&
	           (strcmp(c->tag, "script") == 0 || strcmp(c->tag, "style") == 0);
	size_t at = c->w.tag_at;

	enter_text(c);
	if (raw) {
		c->w.hs = HS_RAWTEXT; /* remembers where the element began, for errors */
		c->w.tag_at = at;
	}
}

static void attr_start(struct compile *c, char ch)
{
	c->w.hs = HS_ATTR_NAME;
	c->w.attr_at = c->pos;
	c->attr_len = 0;
	c->attr[0] = '\0';
	name_add(c->attr, sizeof(c->attr), &c->attr_len, ch);
}

static void value_start(struct compile *c, enum hs hs)
{
	c->w.hs = hs;
	c->kind = attr_kind(c->attr); /* a name cut to fit keeps the prefixes it is judged by */
	c->url_fixed = false;
	c->url_query = false;
}

static void leave_attr(struct compile *c)
{
	c->w.hs = HS_IN_TAG;
	c->w.attr_at = 0;
}

/* A literal byte inside a quoted attribute value: what it tells about a URL. */
static void value_byte(struct compile *c, char ch)
{
	if (ch == ':' || ch == '/' || ch == '?' || ch == '#') {
		c->url_fixed = true;
	}
	if (ch == '?' || ch == '#') {
		c->url_query = true;
	}
}

/* <script>'s content ends at </script (any case) followed by a space, / or >. */
static bool rawtext_ends(const struct compile *c)
{
	const char *p = c->s + c->pos;
	size_t left = c->len - c->pos;
	size_t n = strlen(c->tag);

	return left > n + 2 && p[0] == '<' && p[1] == '/' && strncasecmp(p + 2, c->tag, n) == 0 &&
	       (is_space(p[n + 2]) || p[n + 2] == '/' || p[n + 2] == '>');
}

static void scan_tag_open(struct compile *c, char ch)
{
	const char *p = c->s + c->pos;

	if (isalpha((unsigned char)ch)) {
		c->w.hs = HS_TAG_NAME;
		c->end_tag = false;
		c->tag_len = 0;
		c->tag[0] = '\0';
		name_add(c->tag, sizeof(c->tag), &c->tag_len, ch);
	} else if (ch == '/') {
		c->w.hs = HS_END_OPEN;
	} else if (ch == '!' && c->len - c->pos >= 3 && p[1] == '-' && p[2] == '-') {
		c->w.hs = HS_COMMENT;
		c->pos += 2;
	} else if (ch == '!' || ch == '?') {
		c->w.hs = HS_DECL;
	} else {
		enter_text(c);
		if (ch == '<') {
			c->w.hs = HS_TAG_OPEN;
			c->w.tag_at = c->pos;
		}
	}
}

static void scan_in_tag(struct compile *c, char ch)
{
	switch (c->w.hs) {
	case HS_TAG_NAME:
		if (is_space(ch) || ch == '/') {
			c->w.hs = HS_IN_TAG;
		} else if (ch == '>') {
			tag_end(c);
		} else {
			name_add(c->tag, sizeof(c->tag), &c->tag_len, ch);
		}
		break;
	case HS_IN_TAG:
		if (ch == '>') {
			tag_end(c);
		} else if (!is_space(ch) && ch != '/') {
			attr_start(c, ch);
		}
		break;
	case HS_ATTR_NAME:
		if (is_space(ch)) {
			c->w.hs = HS_AFTER_ATTR_NAME;
		} else if (ch == '=') {
			c->w.hs = HS_BEFORE_VALUE;
		} else if (ch == '>') {
			tag_end(c);
		} else if (ch == '/') {
			leave_attr(c);
		} else {
			name_add(c->attr, sizeof(c->attr), &c->attr_len, ch);
		}
		break;
	case HS_AFTER_ATTR_NAME:
		if (ch == '=') {
			c->w.hs = HS_BEFORE_VALUE;
		} else if (ch == '>') {
			tag_end(c);
		} else if (ch == '/') {
			leave_attr(c);
		} else if (!is_space(ch)) {
			attr_start(c, ch);
		}
		break;
	case HS_BEFORE_VALUE:
		if (ch == '"') {
			value_start(c, HS_VALUE_DQ);
		} else if (ch == '\'') {
			value_start(c, HS_VALUE_SQ);
		} else if (ch == '>') {
			tag_end(c);
		} else if (!is_space(ch)) {
			value_start(c, HS_VALUE_UQ);
		}
		break;
	case HS_VALUE_DQ:
	case HS_VALUE_SQ:
		if (ch == (c->w.hs == HS_VALUE_DQ ? '"' : '\'')) {
			leave_attr(c);
		} else {
			value_byte(c, ch);
		}
		break;
	case HS_VALUE_UQ:
		if (is_space(ch)) {
			leave_attr(c);
		} else if (ch == '>') {
			tag_end(c);
		}
		break;
	default:
		break;
	}
}

/* One literal byte of the template, at c->pos (which it may move past what it consumed). */
static void scan(struct compile *c)
{
	char ch = c->s[c->pos];

	switch (c->w.hs) {
	case HS_TEXT:
		if (ch == '<') {
			c->w.hs = HS_TAG_OPEN;
			c->w.tag_at = c->pos;
		}
		break;
	case HS_TAG_OPEN:
		scan_tag_open(c, ch);
		break;
	case HS_END_OPEN:
		if (isalpha((unsigned char)ch)) {
			c->w.hs = HS_TAG_NAME;
			c->end_tag = true;
			c->tag_len = 0;
			c->tag[0] = '\0';
			name_add(c->tag, sizeof(c->tag), &c->tag_len, ch);
		} else {
			if (ch == '>') {
				enter_text(c);
			} else {
				c->w.hs = HS_DECL;
			}
		}
		break;
	case HS_COMMENT:
		if (c->len - c->pos >= 3 && memcmp(c->s + c->pos, "-->", 3) == 0) {
			enter_text(c);
			c->pos += 2;
		}
		break;
	case HS_DECL:
		if (ch == '>') {
			enter_text(c);
		}
		break;
	case HS_RAWTEXT:
		if (rawtext_ends(c)) {
			c->w.hs = HS_TAG_NAME;
			c->w.tag_at = c->pos;
			c->end_tag = true;
			c->pos += 1 + strlen(c->tag);
		}
		break;
	default:
		scan_in_tag(c, ch);
		break;
	}
}

/* ------------------------------------------------------------------ tags */

enum tag { T_VAR, T_RAW, T_SECTION, T_INVERTED, T_CLOSE, T_PARTIAL, T_COMMENT };

static int push_ins(struct compile *c, struct ins in)
{
	struct tpl *t = c->t;

	if (t->n == t->cap) {
		size_t cap = t->cap == 0 ? 32 : t->cap * 2;
		struct ins *ins = realloc(t->ins, cap * sizeof(*ins));
		if (ins == NULL) {
			return rz_err_set(c->err, -ENOMEM, "%s: out of memory", t->file);
		}
		t->ins = ins;
		t->cap = cap;
	}
	t->ins[t->n++] = in;
	return 0;
}

static int flush_text(struct compile *c, size_t upto)
{
	struct ins in = { .op = OP_TEXT };

	if (upto <= c->text_start) {
		return 0;
	}
	in.text = c->s + c->text_start;
	in.len = upto - c->text_start;
	in.at = c->text_start;
	return push_ins(c, in);
}

/* Whether the tag may stand where the scanner is, and how a value there is escaped. */
static int tag_context(struct compile *c, enum tag tag, size_t at, uint8_t *esc)
{
	bool structural = tag == T_SECTION || tag == T_INVERTED || tag == T_CLOSE;
	const char *why = NULL;

	*esc = ESC_HTML;
	switch (c->w.hs) {
	case HS_TEXT:
		*esc = tag == T_RAW ? ESC_RAW : ESC_HTML;
		return 0;
	case HS_TAG_OPEN:
	case HS_END_OPEN:
	case HS_TAG_NAME:
		why = "a template tag cannot stand in a tag name";
		break;
	case HS_ATTR_NAME:
	case HS_AFTER_ATTR_NAME:
		if (structural || tag == T_COMMENT) {
			leave_attr(c);
			return 0;
		}
		why = "a template tag cannot stand in an attribute name";
		break;
	case HS_IN_TAG:
		if (structural || tag == T_COMMENT) {
			return 0;
		}
		why = "a value cannot stand between attributes: put it in a quoted attribute "
		      "value";
		break;
	case HS_BEFORE_VALUE:
	case HS_VALUE_UQ:
		why = "a template tag in an unquoted attribute value: quote the value";
		break;
	case HS_VALUE_DQ:
	case HS_VALUE_SQ:
		if (structural || tag == T_COMMENT) {
			return 0;
		}
		if (tag == T_RAW || tag == T_PARTIAL) {
			why = tag == T_RAW ? "a raw value cannot stand in an attribute"
			                   : "a partial cannot stand in an attribute";
		} else if (c->kind == A_SCRIPT) {
			return fail_at(c->err, c->t, at,
			               "a value cannot stand in a script or style attribute (pass "
			               "it in a data-* attribute):",
			               c->attr);
		} else if (c->kind == A_URL) {
			*esc =
			    !c->url_fixed ? ESC_URL_START : (c->url_query ? ESC_URL_PART : ESC_URL);
			return 0;
		} else {
			return 0;
		}
		break;
	case HS_COMMENT:
		if (tag == T_COMMENT) {
			return 0;
		}
		why = "a template tag cannot stand in an HTML comment";
		break;
	case HS_DECL:
		why = "a template tag cannot stand in <!...> or <?...>";
		break;
	case HS_RAWTEXT:
		return fail_at(c->err, c->t, at, "a template tag cannot stand inside", c->tag);
	}
	return fail_at(c->err, c->t, at, why, NULL);
}

static bool valid_name(const char *n, enum tag tag)
{
	bool dot = true; /* the previous byte was a dot, or this is the start */

	if (strcmp(n, ".") == 0 && tag != T_PARTIAL) {
		return true;
	}
	for (const char *p = n; *p != '\0'; p++) {
		if (*p == '.') {
			if (dot) {
				return false;
			}
			dot = true;
		} else if (isalnum((unsigned char)*p) || *p == '_' || *p == '-' ||
		           (tag == T_PARTIAL && *p == '/')) {
			dot = false;
		} else {
			return false;
		}
	}
	return !dot;
}

/* The tag at c->pos ("{{"): its kind, its name (cut out of the source) and its end. */
static int read_tag(struct compile *c, enum tag *tag, char **name, size_t *next)
{
	char *s = c->t->src;
	size_t at = c->pos, p = at + 2, close_len = 2, end;
	const char *close = "}}";
	char *hit;

	*tag = T_VAR;
	if (p < c->len && s[p] == '{') {
		*tag = T_RAW;
		close = "}}}";
		close_len = 3;
		p++;
	}
	hit = memmem(s + p, c->len - p, close, close_len);
	if (hit == NULL) {
		return fail_at(c->err, c->t, at, "unterminated tag: no closing", close);
	}
	end = (size_t)(hit - s);
	*next = end + close_len;
	while (p < end && is_space(s[p])) {
		p++;
	}
	if (*tag == T_VAR && p < end) {
		static const char sigils[] = "#^/>!&=";
		static const enum tag kinds[] = { T_SECTION, T_INVERTED, T_CLOSE, T_PARTIAL,
			                          T_COMMENT, T_RAW,      T_VAR };
		const char *sg = strchr(sigils, s[p]);
		if (sg != NULL) {
			if (*sg == '=') {
				return fail_at(c->err, c->t, at,
				               "delimiter changes are not supported", NULL);
			}
			*tag = kinds[sg - sigils];
			p++;
		}
	}
	if (*tag == T_COMMENT) {
		*name = NULL;
		return 0;
	}
	while (p < end && is_space(s[p])) {
		p++;
	}
	while (end > p && is_space(s[end - 1])) {
		end--;
	}
	if (end - p > RZ_TPL_MAX_NAME) {
		return fail_at(c->err, c->t, at, "tag name longer than 128 bytes", NULL);
	}
	s[end] = '\0'; /* the tag's bytes are no template text: cut the name out in place */
	*name = s + p;
	if (!valid_name(*name, *tag)) {
		return fail_at(c->err, c->t, at,
		               p == end ? "empty tag name"
		                        : "invalid tag name (letters, digits, "
		                          "_ and -, parts joined by dots):",
		               p == end ? NULL : *name);
	}
	return 0;
}

static int open_section(struct compile *c, enum tag tag, char *name, size_t at)
{
	struct open *o;
	struct ins in = { .op = tag == T_SECTION ? OP_SECTION : OP_INVERTED, .at = at };

	if (c->depth == RZ_TPL_MAX_NESTING) {
		return fail_at(c->err, c->t, at, "sections nested deeper than 32 at", name);
	}
	o = &c->open[c->depth++];
	o->ins = c->t->n;
	o->name = name;
	o->w = c->w;
	o->url_fixed = c->url_fixed;
	o->url_query = c->url_query;
	in.text = name;
	return push_ins(c, in);
}

static int close_section(struct compile *c, const char *name, size_t at)
{
	struct open *o;
	char msg[96];
	unsigned line, col;

	if (c->depth == 0) {
		return fail_at(c->err, c->t, at, "closes no open section", name);
	}
	o = &c->open[c->depth - 1];
	line_col(c->t->src, c->t->ins[o->ins].at, &line, &col);
	if (strcmp(o->name, name) != 0) {
		snprintf(msg, sizeof(msg), "closes section '%s' (opened at %u:%u) with", o->name,
		         line, col);
		return fail_at(c->err, c->t, at, msg, name);
	}
	if (o->w.hs != c->w.hs || o->w.tag_at != c->w.tag_at || o->w.attr_at != c->w.attr_at) {
		snprintf(msg, sizeof(msg),
		         "section '%s' (opened at %u:%u) closes in another HTML context", name,
		         line, col);
		return fail_at(c->err, c->t, at, msg, NULL);
	}
	/* The body may be skipped: what follows knows only what held before it. */
	c->url_fixed = o->url_fixed;
	c->url_query = o->url_query;
	c->t->ins[o->ins].end = (uint32_t)c->t->n;
	c->depth--;
	return 0;
}

static int handle_tag(struct compile *c)
{
	enum tag tag = T_COMMENT;
	char *name = NULL;
	size_t at = c->pos, next = 0;
	uint8_t esc;
	int rc;

	if ((rc = read_tag(c, &tag, &name, &next)) < 0 ||
	    (rc = tag_context(c, tag, at, &esc)) < 0) {
		return rc;
	}
	c->pos = next;
	c->text_start = next;
	switch (tag) {
	case T_COMMENT:
		return 0;
	case T_SECTION:
	case T_INVERTED:
		return open_section(c, tag, name, at);
	case T_CLOSE:
		return close_section(c, name, at);
	case T_PARTIAL:
		return push_ins(c, (struct ins){ .op = OP_PARTIAL, .text = name, .at = at });
	default:
		return push_ins(c,
		                (struct ins){ .op = OP_VAR, .esc = esc, .text = name, .at = at });
	}
}

static int check_end(struct compile *c)
{
	if (c->depth > 0) {
		struct open *o = &c->open[c->depth - 1];
		return fail_at(c->err, c->t, c->t->ins[o->ins].at, "unclosed section", o->name);
	}
	switch (c->w.hs) {
	case HS_TEXT:
		return 0;
	case HS_COMMENT:
	case HS_DECL:
		return fail_at(c->err, c->t, c->w.tag_at, "the template ends inside <!...>", NULL);
	case HS_RAWTEXT:
		return fail_at(c->err, c->t, c->w.tag_at, "the template ends inside", c->tag);
	default:
		return fail_at(c->err, c->t, c->w.tag_at,
		               "the template ends inside a tag (unclosed < or quote)", NULL);
	}
}

static int compile_one(struct tpl *t, rz_err_t *err)
{
	struct compile c = { .t = t, .s = t->src, .len = t->src_len, .err = err };
	int rc;

	while (c.pos < c.len) {
		if (c.s[c.pos] == '{' && c.pos + 1 < c.len && c.s[c.pos + 1] == '{') {
			if ((rc = flush_text(&c, c.pos)) < 0 || (rc = handle_tag(&c)) < 0) {
				return rc;
			}
			continue;
		}
		if (c.s[c.pos] == '\0') {
			return fail_at(err, t, c.pos, "NUL byte in the template", NULL);
		}
		scan(&c);
		c.pos++;
	}
	if ((rc = flush_text(&c, c.len)) < 0) {
		return rc;
	}
	return check_end(&c);
}

/* ------------------------------------------------------------------ sets */

static void tpl_clear(struct tpl *t)
{
	free(t->name);
	free(t->file);
	free(t->src);
	free(t->ins);
}

void rz_tpl_set_free(rz_tpl_set_t *s)
{
	if (s == NULL) {
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		tpl_clear(&s->t[i]);
	}
	free(s->t);
	s->magic = 0;
	free(s);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct tpl *)a)->name, ((const struct tpl *)b)->name);
}

static const struct tpl *find(const rz_tpl_set_t *s, const char *name)
{
	struct tpl key = { .name = (char *)name };

	return bsearch(&key, s->t, s->n, sizeof(*s->t), by_name);
}

bool rz_tpl_has(const rz_tpl_set_t *s, const char *name)
{
	return s != NULL && find(s, name) != NULL;
}

/* Names unique; every partial names a template of the set. */
static int link_set(rz_tpl_set_t *s, rz_err_t *err)
{
	qsort(s->t, s->n, sizeof(*s->t), by_name);
	for (size_t i = 0; i + 1 < s->n; i++) {
		if (strcmp(s->t[i].name, s->t[i + 1].name) == 0) {
			return rz_err_set(err, RZ_EPARSE, "%s: template '%s' is also in %s",
			                  s->t[i + 1].file, s->t[i].name, s->t[i].file);
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		for (size_t j = 0; j < s->t[i].n; j++) {
			struct ins *in = &s->t[i].ins[j];
			const struct tpl *p;
			if (in->op != OP_PARTIAL) {
				continue;
			}
			if ((p = find(s, in->text)) == NULL) {
				return fail_at(err, &s->t[i], in->at, "no template for the partial",
				               in->text);
			}
			in->partial = (uint32_t)(p - s->t);
		}
	}
	return 0;
}

static int add_source(struct tpl *t, const rz_tpl_source_t *src, rz_err_t *err)
{
	if (src->len > RZ_TPL_MAX_SOURCE) {
		return rz_err_set(err, REZUS_ETOOBIG, "%s: larger than %d bytes",
		                  src->file != NULL ? src->file : src->name, RZ_TPL_MAX_SOURCE);
	}
	t->name = strdup(src->name);
	if (src->file != NULL) {
		t->file = strdup(src->file);
	} else if (asprintf(&t->file, "%s.html", src->name) < 0) {
		t->file = NULL;
	}
	t->src = malloc(src->len + 1);
	if (t->name == NULL || t->file == NULL || t->src == NULL) {
		return rz_err_set(err, -ENOMEM, "%s: out of memory", src->name);
	}
	memcpy(t->src, src->text, src->len);
	t->src[src->len] = '\0';
	t->src_len = src->len;
	if (src->name[0] == '\0' || strlen(src->name) > RZ_TPL_MAX_NAME ||
	    !valid_name(src->name, T_PARTIAL)) {
		return rz_err_set(err, RZ_EPARSE, "%s: invalid template name '%s'", t->file,
		                  src->name);
	}
	return compile_one(t, err);
}

int rz_tpl_set_compile(rz_tpl_set_t **out, const rz_tpl_source_t *src, size_t n, rz_err_t *err)
{
	rz_tpl_set_t *s;
	int rc = 0;

	*out = NULL;
	if (n > RZ_TPL_MAX_TEMPLATES) {
		return rz_err_set(err, REZUS_ETOOBIG, "more than %d templates",
		                  RZ_TPL_MAX_TEMPLATES);
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (n > 0 && (s->t = calloc(n, sizeof(*s->t))) == NULL)) {
		free(s);
		return rz_err_set(err, -ENOMEM, "templates: out of memory");
	}
	s->magic = SET_MAGIC;
	for (size_t i = 0; i < n && rc == 0; i++) {
		s->n = i + 1;
		rc = add_source(&s->t[i], &src[i], err);
	}
	if (rc == 0) {
		rc = link_set(s, err);
	}
	if (rc < 0) {
		rz_tpl_set_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* ------------------------------------------------------------------ web.dir */

struct sources {
	rz_tpl_source_t *v;
	size_t n;
};

static void sources_free(struct sources *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->v[i].name);
		free((char *)l->v[i].file);
		free((char *)l->v[i].text);
	}
	free(l->v);
}

/* Up to size bytes of fd (a file that grew past size - 1 since its stat is refused). */
static int read_all(int fd, char *buf, size_t size, size_t *got, const char *path, rz_err_t *err)
{
	*got = 0;
	while (*got < size) {
		ssize_t n = read(fd, buf + *got, size - *got);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return rz_err_set(err, -errno, "%s: %s", path, strerror(errno));
		}
		if (n == 0) {
			return 0;
		}
		*got += (size_t)n;
	}
	return rz_err_set(err, REZUS_ETOOBIG, "%s: grew while read", path);
}

static int read_source(struct sources *l, const char *path, const char *rel, rz_err_t *err)
{
	rz_tpl_source_t *v, *src;
	struct stat st;
	char *text = NULL;
	size_t got = 0;
	int fd, rc = 0;

	if (l->n == RZ_TPL_MAX_TEMPLATES) {
		return rz_err_set(err, REZUS_ETOOBIG, "%s: more than %d templates", path,
		                  RZ_TPL_MAX_TEMPLATES);
	}
	if ((v = realloc(l->v, (l->n + 1) * sizeof(*v))) == NULL) {
		return rz_err_set(err, -ENOMEM, "%s: out of memory", path);
	}
	l->v = v;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		return rz_err_set(err, -errno, "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		rc = rz_err_set(err, -errno, "%s: %s", path, strerror(errno));
	} else if (st.st_size > RZ_TPL_MAX_SOURCE) {
		rc = rz_err_set(err, REZUS_ETOOBIG, "%s: larger than %d bytes", path,
		                RZ_TPL_MAX_SOURCE);
	} else if ((text = malloc((size_t)st.st_size + 1)) == NULL) {
		rc = rz_err_set(err, -ENOMEM, "%s: out of memory", path);
	} else {
		rc = read_all(fd, text, (size_t)st.st_size + 1, &got, path, err);
	}
	close(fd);
	if (rc < 0) {
		free(text);
		return rc;
	}
	src = &l->v[l->n++];
	*src = (rz_tpl_source_t){ .name = strndup(rel, strlen(rel) - 5),
		                  .file = strdup(path),
		                  .text = text,
		                  .len = got };
	if (src->name == NULL || src->file == NULL) {
		return rz_err_set(err, -ENOMEM, "%s: out of memory", path);
	}
	return 0;
}

static int walk(struct sources *l, const char *dir, const char *rel, int depth, rz_err_t *err)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if ((d = opendir(dir)) == NULL) {
		return rz_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char *path = NULL, *name = NULL;
		struct stat st;
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.') {
			continue;
		}
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0 ||
		    asprintf(&name, "%s%s%s", rel, rel[0] != '\0' ? "/" : "", e->d_name) < 0) {
			rc = rz_err_set(err, -ENOMEM, "%s: out of memory", dir);
		} else if (stat(path, &st) < 0) {
			rc = rz_err_set(err, -errno, "%s: %s", path, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = depth < DIR_DEPTH
			         ? walk(l, path, name, depth + 1, err)
			         : rz_err_set(err, REZUS_ETOOBIG,
			                      "%s: folders nested deeper than %d", path, DIR_DEPTH);
		} else if (S_ISREG(st.st_mode) && n > 5 &&
		           strcmp(e->d_name + n - 5, ".html") == 0) {
			rc = read_source(l, path, name, err);
		}
		free(path);
		free(name);
	}
	closedir(d);
	return rc;
}

int rz_tpl_set_load(rz_tpl_set_t **out, const char *dir, rz_err_t *err)
{
	struct sources l = { 0 };
	int rc;

	*out = NULL;
	if (dir == NULL) {
#ifdef RZ_TPL_NO_EMBEDDED
		return rz_err_set(err, REZUS_EINVALID, "templates: none embedded in this program");
#else
		return rz_tpl_set_compile(out, rz__tpl_embedded, rz__tpl_embedded_n, err);
#endif
	}
	rc = walk(&l, dir, "", 0, err);
	if (rc == 0) {
		rc = rz_tpl_set_compile(out, l.v, l.n, err);
	}
	sources_free(&l);
	return rc;
}

/* ------------------------------------------------------------------ rendering */

struct render {
	const rz_tpl_set_t *set;
	const json_t *stack[STACK_MAX];
	size_t depth;
	int partials;
	char *buf;
	size_t len, cap;
	rz_err_t *err;
};

static int put(struct render *r, const char *p, size_t n)
{
	if (n > RZ_TPL_MAX_OUTPUT - r->len) {
		return rz_err_set(r->err, REZUS_ETOOBIG, "templates: the page would pass %d bytes",
		                  RZ_TPL_MAX_OUTPUT);
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap == 0 ? 4096 : r->cap;
		char *b;
		while (cap < r->len + n + 1) {
			cap *= 2;
		}
		if ((b = realloc(r->buf, cap)) == NULL) {
			return rz_err_set(r->err, -ENOMEM, "templates: out of memory");
		}
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, p, n);
	r->len += n;
	r->buf[r->len] = '\0';
	return 0;
}

/* A name from the innermost context out; the rest of a dotted name inside what it found. */
static const json_t *lookup(const struct render *r, const char *name)
{
	char seg[RZ_TPL_MAX_NAME + 1];
	const char *p = name, *dot;
	const json_t *v = NULL;

	if (strcmp(name, ".") == 0) {
		return r->stack[r->depth - 1];
	}
	for (bool first = true; p != NULL; first = false) {
		size_t n;
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		memcpy(seg, p, n);
		seg[n] = '\0';
		p = dot != NULL ? dot + 1 : NULL;
		if (first) {
			for (size_t d = r->depth; d-- > 0 && v == NULL;) {
				v = json_is_object(r->stack[d]) ? json_object_get(r->stack[d], seg)
				                                : NULL;
			}
		} else {
			v = json_is_object(v) ? json_object_get(v, seg) : NULL;
		}
		if (v == NULL) {
			return NULL;
		}
	}
	return v;
}

static bool falsy(const json_t *v)
{
	return v == NULL || json_is_false(v) || json_is_null(v) ||
	       (json_is_string(v) && json_string_length(v) == 0) ||
	       (json_is_integer(v) && json_integer_value(v) == 0) ||
	       (json_is_real(v) && json_real_value(v) == 0.0) ||
	       (json_is_array(v) && json_array_size(v) == 0);
}

static int put_html(struct render *r, const char *p, size_t n)
{
	size_t from = 0;
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *ent = NULL;
		switch (p[i]) {
		case '&':
			ent = "&amp;";
			break;
		case '<':
			ent = "&lt;";
			break;
		case '>':
			ent = "&gt;";
			break;
		case '"':
			ent = "&quot;";
			break;
		case '\'':
			ent = "&#39;";
			break;
		case '\0':
			ent = "";
			break;
		default:
			continue;
		}
		if ((rc = put(r, p + from, i - from)) == 0) {
			rc = put(r, ent, strlen(ent));
		}
		from = i + 1;
	}
	return rc == 0 ? put(r, p + from, n - from) : rc;
}

/* A URL's value: relative (no scheme before the first / ? #) or http(s). Like browsers,
 * leading spaces and controls are skipped and tabs and newlines ignored. */
static bool url_allowed(const char *p, size_t n)
{
	char scheme[8];
	size_t k = 0, i = 0;

	while (i < n && (unsigned char)p[i] <= 0x20) {
		i++;
	}
	for (; i < n; i++) {
		char ch = p[i];
		if (ch == '\t' || ch == '\n' || ch == '\r') {
			continue;
		}
		if (ch == '/' || ch == '?' || ch == '#') {
			return true;
		}
		if (ch == ':') {
			scheme[k < sizeof(scheme) ? k : sizeof(scheme) - 1] = '\0';
			return k < sizeof(scheme) && (strcasecmp(scheme, "http") == 0 ||
			                              strcasecmp(scheme, "https") == 0);
		}
		if (k < sizeof(scheme)) {
			scheme[k] = ch;
		}
		k++;
	}
	return true;
}

static int put_url(struct render *r, const char *p, size_t n, enum esc esc)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	if (esc == ESC_URL_START && !url_allowed(p, n)) {
		return put(r, "#", 1);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		unsigned char ch = (unsigned char)p[i];
		bool keep =
		    ch != '\0' && (isalnum(ch) || strchr("-._~", ch) != NULL ||
		                   (esc != ESC_URL_PART && strchr(":/?#[]@!$&'()*+,;=%", ch)));
		if (keep) {
			rc = put_html(r, p + i, 1);
		} else {
			char enc[3] = { '%', hex[ch >> 4], hex[ch & 15] };
			rc = put(r, enc, 3);
		}
	}
	return rc;
}

static int put_value(struct render *r, const json_t *v, enum esc esc)
{
	char num[64];
	const char *p = num;
	size_t n;

	if (json_is_string(v)) {
		p = json_string_value(v);
		n = json_string_length(v);
	} else if (json_is_integer(v)) {
		n = (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		                     json_integer_value(v));
	} else if (json_is_real(v)) {
		n = (size_t)snprintf(num, sizeof(num), "%.15g", json_real_value(v));
	} else if (json_is_boolean(v)) {
		p = json_is_true(v) ? "true" : "false";
		n = strlen(p);
	} else {
		return 0; /* missing, null, objects and arrays render empty */
	}
	switch (esc) {
	case ESC_RAW:
		for (size_t i = 0, from = 0; i <= n; i++) {
			if (i == n || p[i] == '\0') {
				int rc = put(r, p + from, i - from);
				if (rc < 0) {
					return rc;
				}
				from = i + 1;
			}
		}
		return 0;
	case ESC_HTML:
		return put_html(r, p, n);
	default:
		return put_url(r, p, n, esc);
	}
}

static int render_range(struct render *r, const struct tpl *t, size_t from, size_t to);

static int render_section(struct render *r, const struct tpl *t, const struct ins *in, size_t i)
{
	const json_t *v = lookup(r, in->text);
	size_t n;
	int rc = 0;

	if (falsy(v) != (in->op == OP_INVERTED)) {
		return 0;
	}
	if (in->op == OP_INVERTED || json_is_true(v)) {
		return render_range(r, t, i + 1, in->end);
	}
	if (r->depth == STACK_MAX) {
		return rz_err_set(r->err, REZUS_ERENDER, "%s: contexts nested too deep", t->file);
	}
	n = json_is_array(v) ? json_array_size(v) : 1;
	for (size_t k = 0; k < n && rc == 0; k++) {
		r->stack[r->depth++] = json_is_array(v) ? json_array_get(v, k) : v;
		rc = render_range(r, t, i + 1, in->end);
		r->depth--;
	}
	return rc;
}

static int render_range(struct render *r, const struct tpl *t, size_t from, size_t to)
{
	int rc = 0;

	for (size_t i = from; i < to && rc == 0;) {
		const struct ins *in = &t->ins[i];
		switch (in->op) {
		case OP_TEXT:
			rc = put(r, in->text, in->len);
			break;
		case OP_VAR:
			rc = put_value(r, lookup(r, in->text), in->esc);
			break;
		case OP_SECTION:
		case OP_INVERTED:
			rc = render_section(r, t, in, i);
			i = in->end;
			continue;
		case OP_PARTIAL:
			if (r->partials == RZ_TPL_MAX_PARTIAL_DEPTH) {
				return rz_err_set(r->err, REZUS_ERENDER,
				                  "%s: partials nested deeper than %d at '%s'",
				                  t->file, RZ_TPL_MAX_PARTIAL_DEPTH, in->text);
			}
			r->partials++;
			rc = render_range(r, &r->set->t[in->partial], 0, r->set->t[in->partial].n);
			r->partials--;
			break;
		}
		i++;
	}
	return rc;
}

int rz_tpl_render(const rz_tpl_set_t *s, const char *name, const json_t *view, char **out,
                  size_t *len, rz_err_t *err)
{
	struct render *r;
	const struct tpl *t;
	int rc;

	*out = NULL;
	if (s == NULL || s->magic != SET_MAGIC) {
		return rz_err_set(err, REZUS_EINVALID, "templates: not a template set");
	}
	if ((t = find(s, name)) == NULL) {
		return rz_err_set(err, RZ_ENOTFOUND, "templates: no template '%s'", name);
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		return rz_err_set(err, -ENOMEM, "templates: out of memory");
	}
	r->set = s;
	r->err = err;
	r->stack[r->depth++] = view;
	rc = render_range(r, t, 0, t->n);
	if (rc == 0 && r->buf == NULL) {
		rc = put(r, "", 0);
	}
	if (rc == 0) {
		*out = r->buf;
		if (len != NULL) {
			*len = r->len;
		}
	} else {
		free(r->buf);
	}
	free(r);
	return rc;
}
