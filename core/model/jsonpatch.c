/*
 * core/model/jsonpatch.c - JSON Patch (RFC 6902) with JSON Pointers (RFC 6901).
 *
 * Every operation is checked first (a malformed patch changes nothing, whatever its order),
 * then the operations apply in order to a deep copy of the target, so each value in the
 * working document has one parent and a failure simply drops the copy. Values the patch
 * carries are copied in; "copy" duplicates at most RZ_JSONPATCH_MAX_COPIED values in all,
 * so a short patch cannot double the document ten thousand times.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/text.h"
#include "core/model/fields.h"
#include "core/model/jsonpatch.h"

#define ECHO_MAX 128 /* bytes of a pointer quoted in a message */

/* A pointer quoted in a message, for "%s": cut at a word with "..." (rz_echo). */
#define ECHO(v) RZ_ECHO((v), ECHO_MAX)

enum op { OP_ADD, OP_REMOVE, OP_REPLACE, OP_MOVE, OP_COPY, OP_TEST };

/* The six operations and the members each takes besides "op" and "path". */
static const struct {
	const char *name;
	bool value, from;
} ops[] = {
	[OP_ADD] = { "add", true, false },         [OP_REMOVE] = { "remove", false, false },
	[OP_REPLACE] = { "replace", true, false }, [OP_MOVE] = { "move", false, true },
	[OP_COPY] = { "copy", false, true },       [OP_TEST] = { "test", true, false },
};

/* One operation, decoded; strings and value borrowed from the patch. */
struct step {
	size_t index;
	enum op op;
	const char *path, *from;
	const json_t *value;
};

/* The state of one application: the working document and what is left to copy. */
struct run {
	json_t *doc;
	size_t copy_budget;
	const struct step *s;
	json_t *causes;
	rz_err_t *err;
};

/* ------------------------------------------------------------------ pointers */

/* Whether p is "" or "/" followed by tokens whose "~" is always "~0" or "~1", at most
 * RZ_JSONPATCH_MAX_DEPTH of them. */
static bool pointer_ok(const char *p, size_t len, const char **why)
{
	size_t depth = 0;

	*why = NULL;
	if (len > RZ_JSONPATCH_MAX_POINTER) {
		*why = "is too long";
	} else if (strlen(p) != len) {
		*why = "holds a NUL character";
	} else if (*p != '\0' && *p != '/') {
		*why = "must be empty or start with '/'";
	}
	for (; *why == NULL && *p != '\0'; p++) {
		if (*p == '/' && ++depth > RZ_JSONPATCH_MAX_DEPTH) {
			*why = "is too deep";
		} else if (*p == '~' && p[1] != '0' && p[1] != '1') {
			*why = "has '~' not followed by '0' or '1'";
		}
	}
	return *why == NULL;
}

/* Copy the token *p points at (after its '/') into tok, unescaped, and move *p past it. */
static void next_token(const char **p, char *tok)
{
	const char *s = *p + 1;

	while (*s != '\0' && *s != '/') {
		if (*s == '~') {
			*tok++ = s[1] == '1' ? '/' : '~';
			s += 2;
		} else {
			*tok++ = *s++;
		}
	}
	*tok = '\0';
	*p = s;
}

/* An array index token: "0" or digits without a leading zero, below limit. -1 if not. */
static long array_index(const char *tok, size_t limit)
{
	char *end;
	long i;

	if (tok[0] < '0' || tok[0] > '9' || (tok[0] == '0' && tok[1] != '\0') || strlen(tok) > 9) {
		return -1;
	}
	i = strtol(tok, &end, 10);
	return *end == '\0' && (size_t)i < limit ? i : -1;
}

/* The child of v named by tok, or NULL. */
static json_t *child(json_t *v, const char *tok)
{
	long i;

	if (json_is_object(v)) {
		return json_object_get(v, tok);
	}
	i = json_is_array(v) ? array_index(tok, json_array_size(v)) : -1;
	return i < 0 ? NULL : json_array_get(v, (size_t)i);
}

/* Walk all of ptr (not "") but its last token, which goes into last: the container that
 * holds, or would hold, the location, or NULL when a step on the way is missing or the
 * container is a scalar. */
static json_t *parent_of(json_t *doc, const char *ptr, char *last)
{
	json_t *v = doc;

	next_token(&ptr, last);
	while (*ptr != '\0' && v != NULL) {
		v = child(v, last);
		next_token(&ptr, last);
	}
	return json_is_object(v) || json_is_array(v) ? v : NULL;
}

/* The value at ptr in doc, or NULL. */
static json_t *lookup(json_t *doc, const char *ptr)
{
	char last[RZ_JSONPATCH_MAX_POINTER + 1];
	json_t *parent;

	if (*ptr == '\0') {
		return doc;
	}
	parent = parent_of(doc, ptr, last);
	return parent != NULL ? child(parent, last) : NULL;
}

/* ------------------------------------------------------------------ failures */

/* Why step s cannot apply (borrowed): -EINVAL with err and a cause on its path. */
static int fail(struct run *r, const char *why)
{
	if (r->causes != NULL) {
		rz_fields_cause(r->causes, r->s->path, RZ_CAUSE_INVALID, "operation %zu (%s): %s",
		                r->s->index, ops[r->s->op].name, why);
	}
	return rz_err_set(r->err, -EINVAL, "operation %zu (%s %s): %s", r->s->index,
	                  ops[r->s->op].name, ECHO(r->s->path), why);
}

/* -ENOMEM with err. */
static int no_memory(struct run *r)
{
	return rz_err_set(r->err, -ENOMEM, "operation %zu (%s): out of memory", r->s->index,
	                  ops[r->s->op].name);
}

/* ------------------------------------------------------------------ operations */

/* Put v (takes ownership) at ptr: the whole document, a member, or an array slot ("-" the
 * end); replace: the location must exist and is overwritten, else an array slot is
 * inserted. */
static int put(struct run *r, const char *ptr, json_t *v, bool replace)
{
	char last[RZ_JSONPATCH_MAX_POINTER + 1];
	json_t *parent;
	long i;
	int rc;

	if (*ptr == '\0') {
		json_decref(r->doc);
		r->doc = v;
		return 0;
	}
	parent = parent_of(r->doc, ptr, last);
	if (parent == NULL || (replace && child(parent, last) == NULL)) {
		json_decref(v);
		return fail(r,
		            replace ? "the location does not exist" : "its parent does not exist");
	}
	if (json_is_object(parent)) {
		rc = json_object_set_new(parent, last, v);
	} else if (!replace && strcmp(last, "-") == 0) {
		rc = json_array_append_new(parent, v);
	} else if ((i = array_index(last, json_array_size(parent) + !replace)) < 0) {
		json_decref(v);
		return fail(r, "the array index is out of range or not a number");
	} else {
		rc = replace ? json_array_set_new(parent, (size_t)i, v)
		             : json_array_insert_new(parent, (size_t)i, v);
	}
	return rc == 0 ? 0 : no_memory(r);
}

/* Take the value at ptr out of the document; *taken (may be NULL) gets it. */
static int take(struct run *r, const char *ptr, json_t **taken)
{
	char last[RZ_JSONPATCH_MAX_POINTER + 1];
	json_t *parent, *v;

	if (*ptr == '\0') {
		return fail(r, "the whole document cannot be removed");
	}
	parent = parent_of(r->doc, ptr, last);
	v = parent != NULL ? child(parent, last) : NULL;
	if (v == NULL) {
		return fail(r, "the location does not exist");
	}
	if (taken != NULL) {
		*taken = json_incref(v);
	}
	if (json_is_object(parent)) {
		json_object_del(parent, last);
	} else {
		json_array_remove(parent, (size_t)array_index(last, json_array_size(parent)));
	}
	return 0;
}

/* How many values v holds, itself included, counting no further than limit. */
static size_t count_values(const json_t *v, size_t limit)
{
	size_t n = 1, i;
	const char *key;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x)
		{
			n += n < limit ? count_values(x, limit - n) : 0;
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			n += n < limit ? count_values(x, limit - n) : 0;
		}
	}
	return n;
}

/* Numbers are equal by value (1 == 1.0), objects whatever their members' order. */
static bool same(const json_t *a, const json_t *b)
{
	size_t i;
	const char *key;
	json_t *x;

	if (json_is_integer(a) && json_is_integer(b)) {
		return json_integer_value(a) == json_integer_value(b);
	}
	if (json_is_number(a) && json_is_number(b)) {
		return json_number_value(a) == json_number_value(b);
	}
	if (json_is_object(a) && json_is_object(b)) {
		if (json_object_size(a) != json_object_size(b)) {
			return false;
		}
		json_object_foreach((json_t *)a, key, x)
		{
			if (!same(x, json_object_get(b, key))) {
				return false;
			}
		}
		return true;
	}
	if (json_is_array(a) && json_is_array(b)) {
		if (json_array_size(a) != json_array_size(b)) {
			return false;
		}
		json_array_foreach(a, i, x)
		{
			if (!same(x, json_array_get(b, i))) {
				return false;
			}
		}
		return true;
	}
	return a != NULL && b != NULL && json_equal(a, b);
}

static int do_copy(struct run *r)
{
	json_t *v = lookup(r->doc, r->s->from);
	size_t n;

	if (v == NULL) {
		return fail(r, "the location \"from\" names does not exist");
	}
	n = count_values(v, r->copy_budget + 1);
	if (n > r->copy_budget) {
		return fail(r, "copies too much: the patch would grow the object too large");
	}
	r->copy_budget -= n;
	v = json_deep_copy(v);
	return v == NULL ? no_memory(r) : put(r, r->s->path, v, false);
}

static int do_move(struct run *r)
{
	json_t *v = NULL;
	int rc;

	if (strcmp(r->s->from, r->s->path) == 0) {
		return lookup(r->doc, r->s->from) != NULL
		           ? 0
		           : fail(r, "the location \"from\" names does not exist");
	}
	rc = take(r, r->s->from, &v);
	return rc != 0 ? rc : put(r, r->s->path, v, false);
}

static int apply_step(struct run *r)
{
	const struct step *s = r->s;
	json_t *v;

	switch (s->op) {
	case OP_ADD:
	case OP_REPLACE:
		v = json_deep_copy(s->value);
		return v == NULL ? no_memory(r) : put(r, s->path, v, s->op == OP_REPLACE);
	case OP_REMOVE:
		return take(r, s->path, NULL);
	case OP_MOVE:
		return do_move(r);
	case OP_COPY:
		return do_copy(r);
	case OP_TEST:
		v = lookup(r->doc, s->path);
		return v == NULL           ? fail(r, "the location does not exist")
		       : same(v, s->value) ? 0
		                           : fail(r, "test failed: the value differs");
	}
	return fail(r, "unknown operation");
}

/* ------------------------------------------------------------------ decoding */

/* The string member name of o, checked as a pointer; RZ_EPARSE with err when not. */
static int pointer_member(const json_t *o, const char *name, size_t index, const char **out,
                          rz_err_t *err)
{
	const json_t *m = json_object_get(o, name);
	const char *why;

	if (!json_is_string(m)) {
		return rz_err_set(err, RZ_EPARSE, "operation %zu: \"%s\" must be a string", index,
		                  name);
	}
	*out = json_string_value(m);
	if (!pointer_ok(*out, json_string_length(m), &why)) {
		return rz_err_set(err, RZ_EPARSE, "operation %zu: \"%s\" '%s' %s", index, name,
		                  ECHO(*out), why);
	}
	return 0;
}

/* Whether from is a proper prefix of path: a location moved into its own child. */
static bool proper_prefix(const char *from, const char *path)
{
	size_t n = strlen(from);

	return strncmp(from, path, n) == 0 && path[n] == '/';
}

/* Operation index of patch into s; RZ_EPARSE with err when malformed. */
static int decode(const json_t *o, size_t index, struct step *s, rz_err_t *err)
{
	const char *name = json_string_value(json_object_get(o, "op"));
	size_t k;
	int rc;

	if (!json_is_object(o)) {
		return rz_err_set(err, RZ_EPARSE, "operation %zu: must be a JSON object", index);
	}
	for (k = 0; name != NULL && k < sizeof(ops) / sizeof(ops[0]); k++) {
		if (strcmp(name, ops[k].name) == 0) {
			break;
		}
	}
	if (name == NULL || k == sizeof(ops) / sizeof(ops[0])) {
		return rz_err_set(
		    err, RZ_EPARSE,
		    "operation %zu: \"op\" must be one of add, remove, replace, move, "
		    "copy, test",
		    index);
	}
	*s =
	    (struct step){ .index = index, .op = (enum op)k, .value = json_object_get(o, "value") };
	if ((rc = pointer_member(o, "path", index, &s->path, err)) != 0 ||
	    (ops[k].from && (rc = pointer_member(o, "from", index, &s->from, err)) != 0)) {
		return rc;
	}
	if (ops[k].value && s->value == NULL) {
		return rz_err_set(err, RZ_EPARSE, "operation %zu (%s): \"value\" is missing", index,
		                  name);
	}
	if (s->op == OP_MOVE && proper_prefix(s->from, s->path)) {
		return rz_err_set(err, RZ_EPARSE,
		                  "operation %zu (move): \"from\" '%s' is a prefix of \"path\": a "
		                  "location cannot move into its own child",
		                  index, ECHO(s->from));
	}
	return 0;
}

/* Whether v nests no deeper than limit levels. */
static bool shallow(const json_t *v, size_t limit)
{
	size_t i;
	const char *key;
	json_t *x;

	if (!json_is_object(v) && !json_is_array(v)) {
		return true;
	}
	if (limit == 0) {
		return false;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x)
		{
			if (!shallow(x, limit - 1)) {
				return false;
			}
		}
		return true;
	}
	json_array_foreach(v, i, x)
	{
		if (!shallow(x, limit - 1)) {
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ the patch */

static int check_all(const json_t *patch, rz_err_t *err)
{
	struct step s;
	size_t i;
	int rc;

	if (!json_is_array(patch)) {
		return rz_err_set(err, RZ_EPARSE, "a JSON patch must be an array of operations");
	}
	if (json_array_size(patch) > RZ_JSONPATCH_MAX_OPS) {
		return rz_err_set(err, -E2BIG,
		                  "the allowed maximum operations in a JSON patch is %d, got %zu",
		                  RZ_JSONPATCH_MAX_OPS, json_array_size(patch));
	}
	for (i = 0; i < json_array_size(patch); i++) {
		if ((rc = decode(json_array_get(patch, i), i, &s, err)) != 0) {
			return rc;
		}
	}
	return 0;
}

int rz_json_patch(const json_t *target, const json_t *patch, json_t **out, json_t *causes,
                  rz_err_t *err)
{
	struct run r = { .copy_budget = RZ_JSONPATCH_MAX_COPIED, .causes = causes, .err = err };
	struct step s = { .path = "" };
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = check_all(patch, err)) != 0) {
		return rc;
	}
	if ((r.doc = json_deep_copy(target)) == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	r.s = &s;
	for (i = 0; rc == 0 && i < json_array_size(patch); i++) {
		decode(json_array_get(patch, i), i, &s, NULL);
		rc = apply_step(&r);
	}
	if (rc == 0 && !shallow(r.doc, RZ_JSONPATCH_MAX_NESTING)) {
		rc = fail(&r, "the result nests too deep");
	}
	if (rc != 0) {
		json_decref(r.doc);
		return rc;
	}
	*out = r.doc;
	return 0;
}
