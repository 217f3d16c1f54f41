/*
 * core/model/selector.c - Kubernetes label and field selectors (PROTOCOLS.md §6).
 *
 * A selector is a small array of requirements, all of which must hold. The parser walks
 * the text once, left to right, and stops at the first error; every message names the
 * selector text and the 0-based byte position where the parser gave up.
 *
 * Label selectors: keys and values are runs of [A-Za-z0-9._/-], checked afterwards with
 * rz_format_label_key/rz_format_label_value. Set values may be empty ("a in (x,)" holds
 * "x" and ""), as in Kubernetes; a set with no values at all ("()") is an error.
 * Field selectors: keys are dotted paths from the caller's list; a value is everything up
 * to the next ',' or the end, without surrounding whitespace, and may be empty.
 */
/* Angle brackets: a quoted "config.h" would find core/base/config.h next to this file. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/errors.h"
#include "core/base/text.h"
#include "core/model/fields.h"
#include "core/model/selector.h"

#define TEXT_ECHO_MAX    80  /* bytes of the selector text quoted in a message, at most */
#define TEXT_ECHO_MIN    16  /* ... and at least, however long the reason */
#define TOKEN_ECHO_MAX   64  /* bytes of a key or value quoted in a message */
#define REASON_MAX       256 /* the part of a message after the selector text */
#define LIST_MAX         128 /* bytes of the fields a field selector may name, in a message */
#define PATH_SEGMENT_MAX 256

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOT_EXISTS };

struct req {
	char *key;
	enum op op;
	char **values; /* OP_EQ/OP_NE: one; OP_IN/OP_NOTIN: one or more; else none */
	size_t nvalues;
};

struct rz_selector {
	struct req *reqs;
	size_t n, cap;
};

struct parser {
	const char *text;
	size_t pos;
	bool fields;                /* a field selector */
	const char *const *allowed; /* field selectors: the accepted paths */
	rz_selector_t *sel;
	rz_err_t *err;
};

static const char ops_hint[] = "(use =, == or !=)";

/* ---- characters and messages ---- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_token(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '/' || c == '-';
}

/* A byte that has no place anywhere in a selector outside a field value. */
static bool is_foreign(char c)
{
	return c != '\0' && !is_token(c) && !is_space(c) && strchr("=!(),", c) == NULL;
}

static void skip_space(struct parser *p)
{
	while (is_space(p->text[p->pos])) {
		p->pos++;
	}
}

static size_t token_len(const char *s)
{
	size_t n = 0;
	while (is_token(s[n])) {
		n++;
	}
	return n;
}

static int fail_at(struct parser *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(struct parser *p, size_t pos, const char *fmt, ...)
{
	char reason[REASON_MAX];
	char text[RZ_ECHO_SIZE(TEXT_ECHO_MAX)];
	char at[48];
	size_t fixed, room = TEXT_ECHO_MIN;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	rz_text_fit(reason, sizeof(reason), n);
	snprintf(at, sizeof(at), " at position %zu", pos);
	/* the reason and the position first: the selector's text gets the room left */
	fixed = strlen("invalid field selector '': ") + strlen(reason) + strlen(at) +
	        strlen(RZ_ELLIPSIS);
	if (fixed + TEXT_ECHO_MIN < sizeof(p->err->msg)) {
		room = sizeof(p->err->msg) - 1 - fixed;
	}
	rz_echo(text, sizeof(text), p->text, room);
	return rz_err_set(p->err, REZUS_EINVALID, "invalid %s selector '%s': %s%s",
	                  p->fields ? "field" : "label", text, reason, at);
}

/* The parser wanted what (e.g. "a key") at the current position and found something else. */
static int fail_expected(struct parser *p, const char *what)
{
	unsigned char c = (unsigned char)p->text[p->pos];

	if (is_foreign((char)c) && c >= 0x20 && c < 0x7f) {
		return fail_at(p, p->pos, "unexpected character '%c'", c);
	}
	if (is_foreign((char)c)) {
		return fail_at(p, p->pos, "unexpected byte 0x%02x", c);
	}
	return fail_at(p, p->pos, "expected %s", what);
}

/* 0 when s[start..start+len) passes check, else an error naming the token. */
static int check_format(struct parser *p, size_t start, size_t len, const char *kind,
                        rz_format_fn check)
{
	char msg[REASON_MAX];
	char tok[RZ_ECHO_SIZE(TOKEN_ECHO_MAX)];
	char *s = strndup(p->text + start, len);
	bool ok;

	if (s == NULL) {
		return rz_err_set(p->err, -ENOMEM, "out of memory");
	}
	msg[0] = '\0';
	ok = check(s, msg, sizeof(msg));
	free(s);
	if (ok) {
		return 0;
	}
	rz_echon(tok, sizeof(tok), p->text + start, len, TOKEN_ECHO_MAX);
	return fail_at(p, start, "invalid %s '%s': %s", kind, tok, msg);
}

/* ---- building the selector ---- */

static void req_clear(struct req *r)
{
	for (size_t i = 0; i < r->nvalues; i++) {
		free(r->values[i]);
	}
	free(r->values);
	free(r->key);
}

/* A new requirement with the key s[0..len); NULL on out of memory. */
static struct req *req_add(rz_selector_t *sel, const char *s, size_t len)
{
	struct req *r;

	if (sel->n == sel->cap) {
		size_t cap = sel->cap == 0 ? 4 : sel->cap * 2;
		struct req *v = realloc(sel->reqs, cap * sizeof(*v));
		if (v == NULL) {
			return NULL;
		}
		sel->reqs = v;
		sel->cap = cap;
	}
	r = &sel->reqs[sel->n];
	memset(r, 0, sizeof(*r));
	r->key = strndup(s, len);
	if (r->key == NULL) {
		return NULL;
	}
	sel->n++;
	return r;
}

static int value_add(struct parser *p, struct req *r, const char *s, size_t len)
{
	char **v = realloc(r->values, (r->nvalues + 1) * sizeof(*v));

	if (v == NULL) {
		return rz_err_set(p->err, -ENOMEM, "out of memory");
	}
	r->values = v;
	v[r->nvalues] = strndup(s, len);
	if (v[r->nvalues] == NULL) {
		return rz_err_set(p->err, -ENOMEM, "out of memory");
	}
	r->nvalues++;
	return 0;
}

/* ---- parsing ---- */

static int check_field(struct parser *p, size_t start, size_t len)
{
	char list[REASON_MAX * 2] = "";
	char tok[RZ_ECHO_SIZE(TOKEN_ECHO_MAX)];
	size_t used = 0, cut;

	for (size_t i = 0; p->allowed != NULL && p->allowed[i] != NULL; i++) {
		if (strlen(p->allowed[i]) == len &&
		    memcmp(p->allowed[i], p->text + start, len) == 0) {
			return 0;
		}
		if (used < sizeof(list)) {
			int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
			                 p->allowed[i]);
			used += n > 0 ? (size_t)n : 0;
		}
	}
	used = used < sizeof(list) ? used : sizeof(list) - 1;
	/* a long list ends with a whole field and ", ..." */
	cut = rz_text_cut(list, used, LIST_MAX - strlen(", " RZ_ELLIPSIS));
	if (cut < used) {
		snprintf(list + cut, sizeof(list) - cut, ", " RZ_ELLIPSIS);
	}
	rz_echon(tok, sizeof(tok), p->text + start, len, TOKEN_ECHO_MAX);
	if (used == 0) {
		return fail_at(p, start, "field '%s' is not supported", tok);
	}
	return fail_at(p, start, "field '%s' is not supported (use %s)", tok, list);
}

/* The key of a requirement; *len is 0 after an error. */
static int parse_key(struct parser *p, size_t *len)
{
	size_t start = p->pos;
	int rc;

	*len = token_len(p->text + start);
	if (*len == 0) {
		return fail_expected(p, "a key");
	}
	if (p->fields) {
		rc = check_field(p, start, *len);
	} else {
		rc = check_format(p, start, *len, "key", rz_format_label_key);
	}
	if (rc == 0) {
		p->pos += *len;
	}
	return rc;
}

/* The operator after a key; sets *op. Words must be whole tokens ("inx" is no operator). */
static int parse_op(struct parser *p, enum op *op)
{
	const char *s = p->text + p->pos;
	size_t word = token_len(s);
	bool set =
	    (word == 2 && strncmp(s, "in", 2) == 0) || (word == 5 && strncmp(s, "notin", 5) == 0);

	if (set && p->fields) {
		return fail_at(p, p->pos, "operator '%.*s' is not supported %s", (int)word, s,
		               ops_hint);
	}
	if (s[0] == '=') {
		*op = OP_EQ;
		p->pos += s[1] == '=' ? 2 : 1;
	} else if (s[0] == '!' && s[1] == '=') {
		*op = OP_NE;
		p->pos += 2;
	} else if (set) {
		*op = word == 2 ? OP_IN : OP_NOTIN;
		p->pos += word;
	} else if ((s[0] == '\0' || s[0] == ',') && !p->fields) {
		*op = OP_EXISTS;
	} else {
		return fail_expected(p, "an operator");
	}
	return 0;
}

/* One value of a label selector at the current position; it may be empty. */
static int parse_label_value(struct parser *p, struct req *r)
{
	size_t start = p->pos;
	size_t len = token_len(p->text + start);
	int rc = check_format(p, start, len, "value", rz_format_label_value);

	if (rc == 0) {
		rc = value_add(p, r, p->text + start, len);
	}
	p->pos = rc == 0 ? start + len : p->pos;
	return rc;
}

/* A field value: everything up to ',' or the end, without surrounding whitespace. */
static int parse_field_value(struct parser *p, struct req *r)
{
	const char *s = p->text + p->pos;
	size_t len = strcspn(s, ",");
	size_t trimmed = len;

	while (trimmed > 0 && is_space(s[trimmed - 1])) {
		trimmed--;
	}
	p->pos += len;
	return value_add(p, r, s, trimmed);
}

/* "(v1, v2, ...)" after 'in' or 'notin'. */
static int parse_set(struct parser *p, struct req *r)
{
	int rc;

	skip_space(p);
	if (is_foreign(p->text[p->pos])) {
		return fail_expected(p, "'('");
	}
	if (p->text[p->pos] != '(') {
		return fail_at(p, p->pos, "expected '(' after '%s'",
		               r->op == OP_IN ? "in" : "notin");
	}
	p->pos++;
	skip_space(p);
	if (p->text[p->pos] == ')') {
		return fail_at(p, p->pos, "values set can't be empty");
	}
	for (;;) {
		skip_space(p);
		rc = parse_label_value(p, r);
		if (rc != 0) {
			return rc;
		}
		skip_space(p);
		if (p->text[p->pos] == ')') {
			p->pos++;
			return 0;
		}
		if (p->text[p->pos] != ',') {
			return fail_expected(p, "',' or ')'");
		}
		p->pos++;
	}
}

/* One requirement: [!]key [op values]. */
static int parse_req(struct parser *p)
{
	bool negated = false;
	size_t keypos, keylen;
	struct req *r;
	enum op op = OP_NOT_EXISTS;
	int rc;

	skip_space(p);
	if (p->text[p->pos] == ',') {
		return fail_at(p, p->pos, "unexpected ','");
	}
	if (p->text[p->pos] == '!') {
		if (p->fields) {
			return fail_at(p, p->pos, "operator '!' is not supported %s", ops_hint);
		}
		negated = true;
		p->pos++;
		skip_space(p);
	}
	keypos = p->pos;
	rc = parse_key(p, &keylen);
	if (rc == 0 && !negated) {
		skip_space(p);
		rc = parse_op(p, &op);
	}
	if (rc != 0) {
		return rc;
	}
	r = req_add(p->sel, p->text + keypos, keylen);
	if (r == NULL) {
		return rz_err_set(p->err, -ENOMEM, "out of memory");
	}
	r->op = op;
	if (op == OP_IN || op == OP_NOTIN) {
		return parse_set(p, r);
	}
	if (op == OP_EQ || op == OP_NE) {
		skip_space(p);
		return p->fields ? parse_field_value(p, r) : parse_label_value(p, r);
	}
	return 0;
}

static int parse(const char *text, bool fields, const char *const *allowed, rz_selector_t **out,
                 rz_err_t *err)
{
	struct parser p = { .text = text != NULL ? text : "",
		            .fields = fields,
		            .allowed = allowed };
	int rc = 0;

	*out = NULL;
	p.err = err;
	p.sel = calloc(1, sizeof(*p.sel));
	if (p.sel == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	skip_space(&p);
	while (p.text[p.pos] != '\0') {
		rc = parse_req(&p);
		if (rc != 0) {
			break;
		}
		skip_space(&p);
		if (p.text[p.pos] == ',') {
			p.pos++;
			/* "a=1," is an error: the next parse_req() finds no key at the end */
			rc = p.text[p.pos] == '\0' ? fail_expected(&p, "a key") : 0;
		} else if (p.text[p.pos] != '\0') {
			rc = fail_expected(&p, "','");
		}
		if (rc != 0) {
			break;
		}
	}
	if (rc != 0) {
		rz_selector_free(p.sel);
		return rc;
	}
	*out = p.sel;
	return 0;
}

int rz_selector_parse(const char *text, rz_selector_t **out, rz_err_t *err)
{
	return parse(text, false, NULL, out, err);
}

int rz_selector_parse_fields(const char *text, const char *const *allowed, rz_selector_t **out,
                             rz_err_t *err)
{
	return parse(text, true, allowed, out, err);
}

/* ---- matching ---- */

/* value is the object's value for the key, NULL when it is not a string; present says
 * whether the key is there at all. */
static bool req_match(const struct req *r, bool present, const char *value)
{
	bool member = false;

	for (size_t i = 0; value != NULL && i < r->nvalues; i++) {
		if (strcmp(r->values[i], value) == 0) {
			member = true;
			break;
		}
	}
	switch (r->op) {
	case OP_EQ:
	case OP_IN:
		return member;
	case OP_NE:
	case OP_NOTIN:
		return !member;
	case OP_EXISTS:
		return present;
	case OP_NOT_EXISTS:
		return !present;
	}
	return false;
}

bool rz_selector_match(const rz_selector_t *sel, const json_t *labels)
{
	for (size_t i = 0; sel != NULL && i < sel->n; i++) {
		const json_t *v =
		    json_is_object(labels) ? json_object_get(labels, sel->reqs[i].key) : NULL;
		if (!req_match(&sel->reqs[i], v != NULL, json_string_value(v))) {
			return false;
		}
	}
	return true;
}

/* The string at a dotted path ("metadata.name") in object; "" when missing or not a
 * string. */
static const char *lookup_path(const json_t *object, const char *path)
{
	char segment[PATH_SEGMENT_MAX];
	const json_t *v = object;

	while (v != NULL) {
		size_t len = strcspn(path, ".");
		if (len >= sizeof(segment) || !json_is_object(v)) {
			return "";
		}
		memcpy(segment, path, len);
		segment[len] = '\0';
		v = json_object_get(v, segment);
		if (path[len] == '\0') {
			break;
		}
		path += len + 1;
	}
	return json_is_string(v) ? json_string_value(v) : "";
}

bool rz_selector_match_fields(const rz_selector_t *sel, const json_t *object)
{
	for (size_t i = 0; sel != NULL && i < sel->n; i++) {
		if (!req_match(&sel->reqs[i], true, lookup_path(object, sel->reqs[i].key))) {
			return false;
		}
	}
	return true;
}

bool rz_selector_empty(const rz_selector_t *sel)
{
	return sel == NULL || sel->n == 0;
}

void rz_selector_free(rz_selector_t *sel)
{
	if (sel == NULL) {
		return;
	}
	for (size_t i = 0; i < sel->n; i++) {
		req_clear(&sel->reqs[i]);
	}
	free(sel->reqs);
	free(sel);
}
