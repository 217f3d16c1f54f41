/*
 * core/model/fieldset.c - sets of field paths in Kubernetes' FieldsV1 form (fieldset.h).
 *
 * A node is a JSON object: "f:<name>" keys are its children, "." marks it a member. The
 * internal form always marks members, so a leaf is {".": {}} where FieldsV1 writes {}; the
 * set operations then need no case for leaves, and drop every node they leave empty. The
 * depth of a node is that of its path (.spec is 1): a value at RZ_FIELDSET_MAX_DEPTH is a
 * leaf whatever it holds, here and in the comparison alike.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/text.h"
#include "core/model/fieldset.h"

#define MEMBER   "."
#define ECHO_MAX 64 /* bytes of a key quoted in a message */

/* ------------------------------------------------------------------ nodes */

static bool is_member(const json_t *node)
{
	return json_object_get(node, MEMBER) != NULL;
}

static bool has_children(const json_t *node)
{
	return json_object_size(node) > (is_member(node) ? 1u : 0u);
}

static int mark(json_t *node)
{
	return is_member(node) ? 0 : json_object_set_new(node, MEMBER, json_object());
}

/* Whether v is walked into rather than a leaf, at depth. */
static bool inner(const json_t *v, int depth)
{
	return json_is_object(v) && json_object_size(v) > 0 && depth < RZ_FIELDSET_MAX_DEPTH;
}

/* The child of node for the member name, made when absent; NULL on out of memory. */
static json_t *child(json_t *node, const char *name)
{
	size_t n = strlen(name);
	char small[128], *key = n + 3 <= sizeof(small) ? small : malloc(n + 3);
	json_t *c;

	if (key == NULL) {
		return NULL;
	}
	memcpy(key, "f:", 2);
	memcpy(key + 2, name, n + 1);
	c = json_object_get(node, key);
	if (c == NULL && json_object_set_new(node, key, json_object()) == 0) {
		c = json_object_get(node, key);
	}
	if (key != small) {
		free(key);
	}
	return c;
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of obj, sorted ("." first), borrowed from it; caller frees the array. NULL on
 * out of memory. */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
	const char **keys = malloc((json_object_size(obj) + 1) * sizeof(*keys));
	const char *k;
	json_t *v;

	*n = 0;
	if (keys == NULL) {
		return NULL;
	}
	json_object_foreach((json_t *)obj, k, v)
	{
		keys[(*n)++] = k;
	}
	qsort(keys, *n, sizeof(*keys), key_cmp);
	return keys;
}

/* ------------------------------------------------------------------ from values */

/* Add the leaves of v, the value of member name of node's object, at depth. */
static int add_leaves(json_t *node, const char *name, const json_t *v, int depth)
{
	json_t *c = child(node, name);
	const char *k;
	json_t *x;

	if (c == NULL) {
		return -ENOMEM;
	}
	if (!inner(v, depth)) {
		return mark(c) == 0 ? 0 : -ENOMEM;
	}
	json_object_foreach((json_t *)v, k, x)
	{
		if (add_leaves(c, k, x, depth + 1) != 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* Add everything under member name of node's object (v its value), and the member itself
 * when self. */
static int add_all(json_t *node, const char *name, const json_t *v, int depth, bool self)
{
	json_t *c;
	const char *k;
	json_t *x;

	if (!self && !inner(v, depth)) {
		return 0; /* nothing under it */
	}
	c = child(node, name);
	if (c == NULL || (self && mark(c) != 0)) {
		return -ENOMEM;
	}
	if (inner(v, depth)) {
		json_object_foreach((json_t *)v, k, x)
		{
			if (add_all(c, k, x, depth + 1, true) != 0) {
				return -ENOMEM;
			}
		}
	}
	return 0;
}

json_t *rz_fieldset_of(const json_t *obj)
{
	json_t *set = json_object();
	const char *k;
	json_t *v;

	if (set == NULL || !json_is_object(obj)) {
		return set;
	}
	json_object_foreach((json_t *)obj, k, v)
	{
		if (add_leaves(set, k, v, 1) != 0) {
			json_decref(set);
			return NULL;
		}
	}
	return set;
}

/* ------------------------------------------------------------------ FieldsV1 */

struct parse {
	size_t nodes;
	rz_err_t *err;
};

/* in at depth (the root is 0) into *out. */
static int parse_node(const json_t *in, int depth, struct parse *p, json_t **out)
{
	json_t *node;
	const char *k;
	json_t *v;

	*out = NULL;
	if (!json_is_object(in)) {
		return rz_err_set(p->err, RZ_EPARSE, "fieldsV1: expected an object at depth %d",
		                  depth);
	}
	if (++p->nodes > RZ_FIELDSET_MAX_NODES) {
		return rz_err_set(p->err, RZ_EPARSE, "fieldsV1: more than %d nodes",
		                  RZ_FIELDSET_MAX_NODES);
	}
	node = json_object();
	if (node == NULL || (depth > 0 && json_object_size(in) == 0 && mark(node) != 0)) {
		json_decref(node);
		return rz_err_set(p->err, -ENOMEM, "out of memory");
	}
	json_object_foreach((json_t *)in, k, v)
	{
		json_t *c = NULL;
		int rc = 0;
		if (strcmp(k, MEMBER) == 0) {
			rc = depth == 0 || !json_is_object(v) || json_object_size(v) != 0
			         ? rz_err_set(p->err, RZ_EPARSE,
			                      "fieldsV1: \".\" must be {} and below the top")
			     : mark(node) == 0 ? 0
			                       : rz_err_set(p->err, -ENOMEM, "out of memory");
		} else if (strncmp(k, "f:", 2) != 0) {
			rc = rz_err_set(p->err, RZ_EPARSE,
			                "fieldsV1: unsupported key '%s' (lists are atomic: only "
			                "\".\" and \"f:\" keys)",
			                RZ_ECHO(k, ECHO_MAX));
		} else if (depth + 1 > RZ_FIELDSET_MAX_DEPTH) {
			rc = rz_err_set(p->err, RZ_EPARSE, "fieldsV1: deeper than %d levels",
			                RZ_FIELDSET_MAX_DEPTH);
		} else if ((rc = parse_node(v, depth + 1, p, &c)) == 0 &&
		           json_object_set_new(node, k, c) != 0) {
			rc = rz_err_set(p->err, -ENOMEM, "out of memory");
		}
		if (rc != 0) {
			json_decref(node);
			return rc;
		}
	}
	*out = node;
	return 0;
}

int rz_fieldset_parse(const json_t *fields_v1, json_t **out, rz_err_t *err)
{
	struct parse p = { 0, err };

	return parse_node(fields_v1, 0, &p, out);
}

json_t *rz_fieldset_encode(const json_t *set)
{
	json_t *out = json_object();
	size_t n = 0;
	const char **keys = sorted_keys(set, &n);

	if (out == NULL || keys == NULL) {
		json_decref(out);
		free(keys);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_object_get(set, keys[i]);
		json_t *enc = NULL;
		if (strcmp(keys[i], MEMBER) == 0) {
			if (!has_children(set)) {
				continue; /* a leaf: {} says it */
			}
			enc = json_object();
		} else {
			enc = rz_fieldset_encode(v);
		}
		if (enc == NULL || json_object_set_new(out, keys[i], enc) != 0) {
			json_decref(out);
			out = NULL;
			break;
		}
	}
	free(keys);
	return out;
}

/* ------------------------------------------------------------------ operations */

static int union_into(json_t *dst, const json_t *src)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)src, k, v)
	{
		json_t *d = json_object_get(dst, k);
		if (strcmp(k, MEMBER) == 0) {
			if (mark(dst) != 0) {
				return -ENOMEM;
			}
			continue;
		}
		if (d == NULL) {
			if (json_object_set_new(dst, k, json_deep_copy(v)) != 0) {
				return -ENOMEM;
			}
		} else if (union_into(d, v) != 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

json_t *rz_fieldset_union(const json_t *a, const json_t *b)
{
	json_t *r = json_deep_copy(a);

	if (r == NULL || union_into(r, b) != 0) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/* a − b (keep = false) or a ∩ b (keep = true); b may be NULL (the empty set). */
static json_t *filter(const json_t *a, const json_t *b, bool keep)
{
	json_t *r = json_object();
	const char *k;
	json_t *v;

	if (r == NULL) {
		return NULL;
	}
	json_object_foreach((json_t *)a, k, v)
	{
		const json_t *bv = b ? json_object_get(b, k) : NULL;
		json_t *sub;
		if (strcmp(k, MEMBER) == 0) {
			if ((bv != NULL) != keep) {
				continue;
			}
			sub = json_object();
		} else if (bv == NULL) {
			if (keep) {
				continue;
			}
			sub = json_deep_copy(v);
		} else {
			sub = filter(v, bv, keep);
			if (sub != NULL && json_object_size(sub) == 0) {
				json_decref(sub);
				continue;
			}
		}
		if (sub == NULL || json_object_set_new(r, k, sub) != 0) {
			json_decref(r);
			return NULL; /* out of memory */
		}
	}
	return r;
}

json_t *rz_fieldset_difference(const json_t *a, const json_t *b)
{
	return filter(a, b, false);
}

json_t *rz_fieldset_intersection(const json_t *a, const json_t *b)
{
	return filter(a, b, true);
}

bool rz_fieldset_empty(const json_t *set)
{
	return json_object_size(set) == 0;
}

/* ------------------------------------------------------------------ comparison */

/* Attach sub (taken) as node's child key when it holds anything. */
static int attach(json_t *node, const char *name, json_t *sub)
{
	json_t *c;

	if (sub == NULL) {
		return -ENOMEM;
	}
	if (json_object_size(sub) == 0) {
		json_decref(sub);
		return 0;
	}
	c = child(node, name);
	if (c == NULL || json_object_update(c, sub) != 0) {
		json_decref(sub);
		return -ENOMEM;
	}
	json_decref(sub);
	return 0;
}

/* Compare the members of o and n (objects at depth - 1) into changed and removed. */
static int compare(const json_t *o, const json_t *n, int depth, json_t *changed, json_t *removed)
{
	const char *k;
	json_t *ov, *nv;
	int rc = 0;

	json_object_foreach((json_t *)o, k, ov)
	{
		nv = json_object_get(n, k);
		if (nv == NULL) {
			rc = add_all(removed, k, ov, depth, true);
		} else if (inner(ov, depth) && inner(nv, depth)) {
			json_t *c = json_object(), *r = json_object();
			rc = c == NULL || r == NULL ? -ENOMEM : compare(ov, nv, depth + 1, c, r);
			if (rc != 0) {
				json_decref(c);
				json_decref(r);
			} else if ((rc = attach(changed, k, c)) != 0) {
				json_decref(r);
			} else {
				rc = attach(removed, k, r);
			}
		} else if (!json_equal(ov, nv)) {
			rc = add_all(removed, k, ov, depth, false);
			rc = rc != 0 ? rc : add_leaves(changed, k, nv, depth);
		}
		if (rc != 0) {
			return rc;
		}
	}
	json_object_foreach((json_t *)n, k, nv)
	{
		if (json_object_get(o, k) == NULL &&
		    (rc = add_leaves(changed, k, nv, depth)) != 0) {
			return rc;
		}
	}
	return 0;
}

int rz_fieldset_compare(const json_t *old, const json_t *new, json_t **changed, json_t **removed)
{
	json_t *empty = json_object();
	int rc;

	*changed = json_object();
	*removed = json_object();
	rc = empty == NULL || *changed == NULL || *removed == NULL
	         ? -ENOMEM
	         : compare(json_is_object(old) ? old : empty, json_is_object(new) ? new : empty, 1,
	                   *changed, *removed);
	json_decref(empty);
	if (rc != 0) {
		json_decref(*changed);
		json_decref(*removed);
		*changed = *removed = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------------ paths and pruning */

static int paths(const json_t *node, const char *prefix, json_t *out)
{
	size_t n = 0;
	const char **keys = sorted_keys(node, &n);
	int rc = keys == NULL ? -ENOMEM : 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (strcmp(keys[i], MEMBER) == 0) {
			rc = json_array_append_new(out, json_string(prefix)) == 0 ? 0 : -ENOMEM;
			continue;
		}
		json_t *p = json_sprintf("%s.%s", prefix, keys[i] + 2);
		rc = p == NULL ? -ENOMEM
		               : paths(json_object_get(node, keys[i]), json_string_value(p), out);
		json_decref(p);
	}
	free(keys);
	return rc;
}

json_t *rz_fieldset_paths(const json_t *set)
{
	json_t *out = json_array();

	if (out != NULL && paths(set, "", out) != 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

void rz_fieldset_prune(json_t *obj, const json_t *gone, const json_t *keep)
{
	const char *k;
	json_t *g;

	json_object_foreach((json_t *)gone, k, g)
	{
		const char *name = k + 2;
		const json_t *kp = keep ? json_object_get(keep, k) : NULL;
		json_t *v;
		if (strcmp(k, MEMBER) == 0 || (v = json_object_get(obj, name)) == NULL) {
			continue;
		}
		if (is_member(g) && !has_children(kp)) {
			json_object_del(obj, name);
		} else if (json_is_object(v) && json_object_size(v) > 0) {
			rz_fieldset_prune(v, g, kp);
			if (json_object_size(v) == 0 && !is_member(kp)) {
				json_object_del(obj, name);
			}
		}
	}
}
