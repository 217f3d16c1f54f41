/*
 * core/plugin/projection.c - projection rules (SPEC §6.2, §7.4): which TF resources of a state
 * become which objects.
 *
 * The parsed rules are the checked JSON document itself. Running them reads the state without
 * changing it and builds a fresh array of objects, kept sorted by inserting each one after
 * every object that sorts before it or equal to it, so equal names keep state order.
 */
/* Angle brackets: a quoted "config.h" would find core/base/config.h next to this file. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/plugin/projection.h"

#define LABEL_MAX 63 /* DNS-1123 label */

struct rz_projection {
	json_t *rules; /* an array of rule objects, each checked by check_rule() */
};

/* An instance being projected: where it sits in the state and what it is called. */
struct instance {
	size_t res_index, inst_index;
	const char *module; /* "module.x" or NULL at the root */
	const char *type, *name;
	const json_t *key; /* index_key: NULL, an integer or a string */
	const json_t *attrs;
};

/* A DNS-1123 label built from pieces: lower case, runs of anything outside [a-z0-9] become one
 * '-', no '-' at either end, at most LABEL_MAX characters. */
struct label {
	char s[LABEL_MAX + 1];
	size_t n;
	bool dash; /* a '-' is due before the next character */
	bool full;
};

static const char *const rule_members[] = { "type", "kind", "when", "nodeGroup", "fields", NULL };

/* ------------------------------------------------------------------ parsing */

/* A dotted path with no empty segment: "input.address", "network.0.ip". */
static bool is_path(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && s[0] != '.' && s[n - 1] != '.' && strstr(s, "..") == NULL;
}

static bool is_string_array(const json_t *a)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a)) {
		return false;
	}
	json_array_foreach((json_t *)a, i, v)
	{
		if (!json_is_string(v)) {
			return false;
		}
	}
	return true;
}

/* Every string of a (an array of strings) is a path. */
static int check_paths(size_t i, const json_t *a, rz_err_t *err)
{
	size_t j;
	json_t *v;

	json_array_foreach((json_t *)a, j, v)
	{
		if (!is_path(json_string_value(v))) {
			return rz_err_set(err, REZUS_EINVALID,
			                  "rule %zu: \"%s\" is not an attribute path", i,
			                  json_string_value(v));
		}
	}
	return 0;
}

static int check_string(size_t i, const json_t *rule, const char *member, rz_err_t *err)
{
	const json_t *v = json_object_get(rule, member);

	if (v == NULL) {
		return rz_err_set(err, REZUS_EINVALID, "rule %zu: missing \"%s\"", i, member);
	}
	if (!json_is_string(v)) {
		return rz_err_set(err, REZUS_EINVALID, "rule %zu: \"%s\" must be a string", i,
		                  member);
	}
	if (json_string_length(v) == 0) {
		return rz_err_set(err, REZUS_EINVALID, "rule %zu: \"%s\" must not be empty", i,
		                  member);
	}
	return 0;
}

static int check_members(size_t i, const json_t *rule, rz_err_t *err)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)rule, key, v)
	{
		size_t m = 0;
		while (rule_members[m] != NULL && strcmp(rule_members[m], key) != 0) {
			m++;
		}
		if (rule_members[m] == NULL) {
			return rz_err_set(err, REZUS_EINVALID, "rule %zu: unknown member \"%s\"", i,
			                  key);
		}
	}
	return 0;
}

static int check_when(size_t i, const json_t *when, rz_err_t *err)
{
	const char *path;
	json_t *v;

	if (when == NULL) {
		return 0;
	}
	if (!json_is_object(when)) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "rule %zu: \"when\" must be an object of strings", i);
	}
	json_object_foreach((json_t *)when, path, v)
	{
		if (!json_is_string(v)) {
			return rz_err_set(err, REZUS_EINVALID,
			                  "rule %zu: \"when\" must be an object of strings", i);
		}
		if (!is_path(path)) {
			return rz_err_set(err, REZUS_EINVALID,
			                  "rule %zu: \"%s\" is not an attribute path", i, path);
		}
	}
	return 0;
}

static int check_fields(size_t i, const json_t *fields, rz_err_t *err)
{
	const char *field;
	json_t *paths;
	int rc;

	if (fields == NULL) {
		return rz_err_set(err, REZUS_EINVALID, "rule %zu: missing \"fields\"", i);
	}
	if (!json_is_object(fields)) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "rule %zu: \"fields\" must be an object of arrays of strings", i);
	}
	json_object_foreach((json_t *)fields, field, paths)
	{
		if (!is_string_array(paths)) {
			return rz_err_set(
			    err, REZUS_EINVALID,
			    "rule %zu: \"fields\" must be an object of arrays of strings", i);
		}
		if ((rc = check_paths(i, paths, err)) != 0) {
			return rc;
		}
	}
	return 0;
}

static int check_rule(size_t i, const json_t *rule, rz_err_t *err)
{
	const json_t *group = json_object_get(rule, "nodeGroup");
	int rc;

	if (!json_is_object(rule)) {
		return rz_err_set(err, REZUS_EINVALID, "rule %zu: must be an object", i);
	}
	if ((rc = check_members(i, rule, err)) != 0 ||
	    (rc = check_string(i, rule, "type", err)) != 0 ||
	    (rc = check_string(i, rule, "kind", err)) != 0 ||
	    (rc = check_when(i, json_object_get(rule, "when"), err)) != 0) {
		return rc;
	}
	if (group != NULL && !is_string_array(group)) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "rule %zu: \"nodeGroup\" must be an array of strings", i);
	}
	if (group != NULL && (rc = check_paths(i, group, err)) != 0) {
		return rc;
	}
	return check_fields(i, json_object_get(rule, "fields"), err);
}

int rz_projection_parse(const char *text, rz_projection_t **out, rz_err_t *err)
{
	json_error_t jerr;
	json_t *rules, *rule;
	size_t i;
	int rc;

	*out = NULL;
	rules = json_loads(text != NULL ? text : "", JSON_REJECT_DUPLICATES, &jerr);
	if (rules == NULL) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "rules are not valid JSON: %s at line %d, column %d", jerr.text,
		                  jerr.line, jerr.column);
	}
	if (!json_is_array(rules)) {
		json_decref(rules);
		return rz_err_set(err, REZUS_EINVALID, "rules must be a JSON array");
	}
	json_array_foreach(rules, i, rule)
	{
		if ((rc = check_rule(i, rule, err)) != 0) {
			json_decref(rules);
			return rc;
		}
	}
	*out = calloc(1, sizeof(**out));
	if (*out == NULL) {
		json_decref(rules);
		return rz_err_set(err, -ENOMEM, "projection: out of memory");
	}
	(*out)->rules = rules;
	return 0;
}

void rz_projection_free(rz_projection_t *p)
{
	if (p == NULL) {
		return;
	}
	json_decref(p->rules);
	free(p);
}

/* ------------------------------------------------------------------ attributes */

/* cty type names as they appear in "type" beside a dynamically typed value. */
static const char *const cty_primitives[] = { "string", "number", "bool", "dynamic", NULL };
static const char *const cty_collections[] = { "object", "list", "set", "map", "tuple", NULL };

static bool in_list(const char *const *list, const char *s)
{
	for (; s != NULL && *list != NULL; list++) {
		if (strcmp(*list, s) == 0) {
			return true;
		}
	}
	return false;
}

/* {"value": ..., "type": <cty type>}: how terraform_data (and any dynamically typed
 * attribute) is stored. A plain object that merely has such members is not one. */
static bool is_dynamic(const json_t *v)
{
	const json_t *type = json_object_get(v, "type");

	if (json_object_size(v) != 2 || json_object_get(v, "value") == NULL) {
		return false;
	}
	if (json_is_string(type)) {
		return in_list(cty_primitives, json_string_value(type));
	}
	return json_is_array(type) &&
	       in_list(cty_collections, json_string_value(json_array_get(type, 0)));
}

/* The member of obj named by the len bytes at seg, or the item it indexes in an array. */
static const json_t *step(const json_t *v, const char *seg, size_t len)
{
	const char *key;
	json_t *member;
	size_t index = 0;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, member)
		{
			if (strlen(key) == len && memcmp(key, seg, len) == 0) {
				return member;
			}
		}
		return NULL;
	}
	if (!json_is_array(v) || len > 9 || strspn(seg, "0123456789") < len) {
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		index = index * 10 + (size_t)(seg[i] - '0');
	}
	return json_array_get(v, index);
}

/* The value at a checked path under attrs, or NULL. A dynamically typed attribute counts as
 * its value, so "input.address" finds input.value.address as well as input.address. */
static const json_t *lookup(const json_t *attrs, const char *path)
{
	const json_t *v = attrs;
	bool top = true;

	while (v != NULL) {
		size_t len = strcspn(path, ".");
		v = step(v, path, len);
		if (top && is_dynamic(v)) {
			v = json_object_get(v, "value");
		}
		top = false;
		if (path[len] == '\0') {
			break;
		}
		path += len + 1;
	}
	return v;
}

/* A scalar as text: strings as they are, numbers and booleans as JSON text (formatted into
 * buf). NULL for null, missing, objects and arrays. */
static const char *scalar_text(const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v)) {
		return json_string_value(v);
	}
	if (json_is_integer(v)) {
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_real(v)) {
		snprintf(buf, size, "%.15g", json_real_value(v));
		return buf;
	}
	if (json_is_boolean(v)) {
		return json_is_true(v) ? "true" : "false";
	}
	return NULL;
}

/* The text at the first of paths (an array of paths) that is a non-empty scalar, or NULL. */
static const char *first_text(const json_t *attrs, const json_t *paths, char *buf, size_t size)
{
	size_t i;
	json_t *path;

	json_array_foreach((json_t *)paths, i, path)
	{
		const char *s = scalar_text(lookup(attrs, json_string_value(path)), buf, size);
		if (s != NULL && s[0] != '\0') {
			return s;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ objects */

static void label_add(struct label *l, const char *s)
{
	for (; *s != '\0' && !l->full; s++) {
		char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			l->dash = l->n > 0;
			continue;
		}
		if (l->dash && l->n + 2 > LABEL_MAX) {
			l->full = true;
			break;
		}
		if (l->dash) {
			l->s[l->n++] = '-';
			l->dash = false;
		}
		l->s[l->n++] = c;
		l->full = l->n == LABEL_MAX;
	}
	l->s[l->n] = '\0';
}

/* "<group>-<index_key>" or "<group>", as a label. */
static void make_name(struct label *l, const char *group, const json_t *key)
{
	char buf[32];

	label_add(l, group);
	if (key != NULL) {
		label_add(l, "-");
		label_add(l, scalar_text(key, buf, sizeof(buf)));
	}
}

/* type.name, [0] or ["key"] after it, "module.x." before it. */
static json_t *tf_address(const struct instance *in)
{
	const char *mod = in->module != NULL ? in->module : "";
	const char *dot = in->module != NULL ? "." : "";
	char *quoted;
	json_t *addr;

	if (in->key == NULL) {
		return json_sprintf("%s%s%s.%s", mod, dot, in->type, in->name);
	}
	if (json_is_integer(in->key)) {
		return json_sprintf("%s%s%s.%s[%" JSON_INTEGER_FORMAT "]", mod, dot, in->type,
		                    in->name, json_integer_value(in->key));
	}
	quoted = json_dumps(in->key, JSON_ENCODE_ANY);
	if (quoted == NULL) {
		return NULL;
	}
	addr = json_sprintf("%s%s%s.%s[%s]", mod, dot, in->type, in->name, quoted);
	free(quoted);
	return addr;
}

/* The value for a spec field from the first usable path, or NULL when there is none.
 * Returns 0 or -ENOMEM. */
static int field_value(const json_t *attrs, const char *field, const json_t *paths, json_t **out)
{
	bool arrays = strcmp(field, "addresses") == 0;
	char buf[64];
	size_t i;
	json_t *path;

	*out = NULL;
	json_array_foreach((json_t *)paths, i, path)
	{
		const json_t *v = lookup(attrs, json_string_value(path));
		const char *s = scalar_text(v, buf, sizeof(buf));
		if (s != NULL && s[0] != '\0') {
			*out = json_string(s);
			return *out != NULL ? 0 : -ENOMEM;
		}
		if (arrays && json_array_size(v) > 0 && is_string_array(v)) {
			*out = json_deep_copy(v);
			return *out != NULL ? 0 : -ENOMEM;
		}
	}
	return 0;
}

static json_t *make_spec(const json_t *rule, const json_t *attrs)
{
	json_t *spec = json_object();
	const char *field;
	json_t *paths, *value;

	json_object_foreach(json_object_get(rule, "fields"), field, paths)
	{
		if (spec == NULL || field_value(attrs, field, paths, &value) != 0) {
			json_decref(spec);
			return NULL;
		}
		if (value != NULL && json_object_set_new(spec, field, value) != 0) {
			json_decref(spec);
			return NULL;
		}
	}
	return spec;
}

static bool when_matches(const json_t *rule, const json_t *attrs)
{
	const char *path;
	json_t *want;
	char buf[64];

	json_object_foreach(json_object_get(rule, "when"), path, want)
	{
		const char *s = scalar_text(lookup(attrs, path), buf, sizeof(buf));
		if (s == NULL || strcmp(s, json_string_value(want)) != 0) {
			return false;
		}
	}
	return true;
}

static const char *str(const json_t *obj, const char *member)
{
	return json_string_value(json_object_get(obj, member));
}

/* Insert obj (taking ownership) after every object of out that sorts before or equal to it. */
static int insert_sorted(json_t *out, json_t *obj)
{
	size_t lo = 0, hi = json_array_size(out);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const json_t *m = json_array_get(out, mid);
		int c = strcmp(str(m, "name"), str(obj, "name"));
		if (c == 0) {
			c = strcmp(str(m, "tfAddress"), str(obj, "tfAddress"));
		}
		if (c <= 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return json_array_insert_new(out, lo, obj);
}

/* Add the object rule makes of in to out, unless its "when" does not hold. */
static int project_instance(const json_t *rule, const struct instance *in, json_t *out,
                            rz_err_t *err)
{
	struct label name = { .n = 0 }, group = { .n = 0 };
	const char *group_text;
	char buf[64];
	json_t *obj;

	if (!when_matches(rule, in->attrs)) {
		return 0;
	}
	group_text =
	    json_object_get(rule, "nodeGroup") != NULL
	        ? first_text(in->attrs, json_object_get(rule, "nodeGroup"), buf, sizeof(buf))
	        : NULL;
	group_text = group_text != NULL ? group_text : in->name;
	label_add(&group, group_text);
	make_name(&name, group_text, in->key);
	if (group.n == 0) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "resource %zu, instance %zu: node group \"%s\" gives no name",
		                  in->res_index, in->inst_index, group_text);
	}
	obj = json_pack("{s:s, s:s, s:s}", "kind", str(rule, "kind"), "name", name.s, "nodeGroup",
	                group.s);
	if (obj == NULL || json_object_set_new(obj, "tfAddress", tf_address(in)) != 0 ||
	    json_object_set_new(obj, "spec", make_spec(rule, in->attrs)) != 0) {
		json_decref(obj);
		return rz_err_set(err, -ENOMEM, "projection: out of memory");
	}
	if (insert_sorted(out, obj) != 0) {
		return rz_err_set(err, -ENOMEM, "projection: out of memory");
	}
	return 0;
}

/* ------------------------------------------------------------------ state */

/* Fill in's type, name and module from res. Returns 0, 1 for a resource that is not
 * managed (a data source), or an error. */
static int check_resource(const json_t *res, struct instance *in, rz_err_t *err)
{
	static const char *const members[] = { "mode", "type", "name", NULL };
	const json_t *module = json_object_get(res, "module");

	if (!json_is_object(res)) {
		return rz_err_set(err, REZUS_EINVALID, "resource %zu: must be an object",
		                  in->res_index);
	}
	for (size_t m = 0; members[m] != NULL; m++) {
		if (!json_is_string(json_object_get(res, members[m]))) {
			return rz_err_set(err, REZUS_EINVALID,
			                  "resource %zu: \"%s\" must be a string", in->res_index,
			                  members[m]);
		}
	}
	if (module != NULL && !json_is_string(module)) {
		return rz_err_set(err, REZUS_EINVALID, "resource %zu: \"module\" must be a string",
		                  in->res_index);
	}
	if (!json_is_array(json_object_get(res, "instances"))) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "resource %zu: \"instances\" must be an array", in->res_index);
	}
	in->type = str(res, "type");
	in->name = str(res, "name");
	in->module = json_string_value(module);
	return strcmp(str(res, "mode"), "managed") == 0 ? 0 : 1;
}

/* Fill in's key and attributes from inst. Returns 0, 1 for a deposed object (on its way out;
 * the current object of the same address is projected), or an error. */
static int check_instance(const json_t *inst, struct instance *in, rz_err_t *err)
{
	const json_t *key = json_object_get(inst, "index_key");

	if (!json_is_object(inst)) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "resource %zu, instance %zu: must be an object", in->res_index,
		                  in->inst_index);
	}
	if (key != NULL && !json_is_null(key) && !json_is_integer(key) && !json_is_string(key)) {
		return rz_err_set(
		    err, REZUS_EINVALID,
		    "resource %zu, instance %zu: \"index_key\" must be an integer or a "
		    "string",
		    in->res_index, in->inst_index);
	}
	in->key = json_is_null(key) ? NULL : key;
	in->attrs = json_object_get(inst, "attributes");
	if (!json_is_object(in->attrs)) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "resource %zu, instance %zu: \"attributes\" must be an object",
		                  in->res_index, in->inst_index);
	}
	return json_object_get(inst, "deposed") != NULL ? 1 : 0;
}

static bool any_rule_for(const rz_projection_t *p, const char *type)
{
	size_t r;
	json_t *rule;

	json_array_foreach(p->rules, r, rule)
	{
		if (strcmp(str(rule, "type"), type) == 0) {
			return true;
		}
	}
	return false;
}

/* Whether scope (NULL: everything) holds the resource in: "<type>.<name>", at the root. */
static bool in_scope(const json_t *scope, const struct instance *in)
{
	size_t i, tlen = strlen(in->type);
	json_t *a;

	if (scope == NULL) {
		return true;
	}
	if (in->module != NULL) {
		return false;
	}
	json_array_foreach((json_t *)scope, i, a)
	{
		const char *s = json_string_value(a);
		if (s != NULL && strncmp(s, in->type, tlen) == 0 && s[tlen] == '.' &&
		    strcmp(s + tlen + 1, in->name) == 0) {
			return true;
		}
	}
	return false;
}

static int project_resource(const rz_projection_t *p, size_t index, const json_t *res,
                            const json_t *scope, json_t *out, rz_err_t *err)
{
	struct instance in = { .res_index = index };
	json_t *inst, *rule;
	size_t r;
	int rc = check_resource(res, &in, err);

	if (rc != 0 || !any_rule_for(p, in.type) || !in_scope(scope, &in)) {
		return rc < 0 ? rc : 0;
	}
	json_array_foreach(json_object_get(res, "instances"), in.inst_index, inst)
	{
		if ((rc = check_instance(inst, &in, err)) != 0) {
			if (rc < 0) {
				return rc;
			}
			continue;
		}
		json_array_foreach(p->rules, r, rule)
		{
			if (strcmp(str(rule, "type"), in.type) == 0 &&
			    (rc = project_instance(rule, &in, out, err)) != 0) {
				return rc;
			}
		}
	}
	return 0;
}

int rz_projection_run(const rz_projection_t *p, const json_t *state, const json_t *scope,
                      json_t **objects, rz_err_t *err)
{
	const json_t *resources = json_object_get(state, "resources");
	json_t *out, *res;
	size_t i;
	int rc;

	*objects = NULL;
	if (!json_is_object(state)) {
		return rz_err_set(err, REZUS_EINVALID, "state is not a JSON object");
	}
	if (!json_is_array(resources)) {
		return rz_err_set(err, REZUS_EINVALID, "state has no \"resources\" array");
	}
	if ((out = json_array()) == NULL) {
		return rz_err_set(err, -ENOMEM, "projection: out of memory");
	}
	json_array_foreach((json_t *)resources, i, res)
	{
		if ((rc = project_resource(p, i, res, scope, out, err)) != 0) {
			json_decref(out);
			return rc;
		}
	}
	*objects = out;
	return 0;
}

/* ------------------------------------------------------------------ lint */

size_t rz_projection_lint(const rz_projection_t *p, const json_t *providers, json_t *warnings)
{
	size_t r, n = 0;
	json_t *rule;

	json_array_foreach(p->rules, r, rule)
	{
		const char *type = str(rule, "type");
		char provider[64];
		json_t *msg = NULL;

		snprintf(provider, sizeof(provider), "%.*s", (int)strcspn(type, "_"), type);
		if (json_object_size(json_object_get(rule, "when")) > 0) {
			continue;
		}
		if (strcmp(provider, "terraform") == 0) {
			msg = json_sprintf("rule %zu (%s): no \"when\" on a built-in type: where "
			                   "rules run unscoped it takes every plugin's %s; select "
			                   "with \"when\" on a value only your resources carry",
			                   r, type, type);
		} else if (json_object_get(providers, provider) == NULL) {
			msg =
			    json_sprintf("rule %zu (%s): no \"when\", and provider \"%s\" is not "
			                 "in your required_providers: where rules run unscoped it "
			                 "takes other plugins' %s; select with \"when\" on a value "
			                 "only your resources carry",
			                 r, type, provider, type);
		}
		if (msg != NULL && json_array_append_new(warnings, msg) == 0) {
			n++;
		}
	}
	return n;
}
