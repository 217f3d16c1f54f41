/*
 * core/model/fields.c - declarative field schemas: strict validation with Kubernetes-style
 * causes, defaulting, and the OpenAPI schema of the same fields (the format checks are
 * core/model/formats.c).
 *
 * Validation walks the schema and the object together. Causes come in a fixed order: the
 * schema's fields in declaration order (nested objects in place), then the object's unknown
 * members sorted by name. Each path gets at most one cause. The count returned is the number
 * of problems found, so a cause that could not be appended (out of memory) still fails the
 * validation.
 */
/* Angle brackets: a quoted "config.h" would find core/base/config.h next to this file. */
#include <config.h>

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"

/* Room for any message a format check writes. */
#define MSG_MAX 256

/* ---- causes ---- */

static void vcause(json_t *causes, const char *field, const char *reason, const char *fmt,
                   va_list ap) __attribute__((format(printf, 4, 0)));

static void vcause(json_t *causes, const char *field, const char *reason, const char *fmt,
                   va_list ap)
{
	char *text = NULL;
	json_t *c;

	if (causes == NULL) {
		return;
	}
	if (vasprintf(&text, fmt, ap) < 0) {
		return;
	}
	c = json_pack("{s:s, s:s, s:s}", "field", field != NULL ? field : "", "reason", reason,
	              "message", text);
	free(text);
	if (c != NULL) {
		json_array_append_new(causes, c);
	}
}

void rz_fields_cause(json_t *causes, const char *field, const char *reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcause(causes, field, reason, fmt, ap);
	va_end(ap);
}

/* ---- validation ---- */

typedef struct vctx {
	json_t *causes; /* borrowed; may be NULL */
	bool defaults;
	int count; /* problems found */
} vctx_t;

static void check_object(vctx_t *c, json_t *obj, const rz_field_t *fields, const char *path);

static void problem(vctx_t *c, const char *path, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void problem(vctx_t *c, const char *path, const char *reason, const char *fmt, ...)
{
	va_list ap;

	c->count++;
	va_start(ap, fmt);
	vcause(c->causes, path, reason, fmt, ap);
	va_end(ap);
}

/* A member's, item's or entry's path below path: prefix, then name, then suffix. It is
 * built in buf (PATH_LOCAL bytes, the caller's) when it fits, else on the heap in *heap
 * (the caller frees it; NULL otherwise); NULL, counted as a problem so that validation
 * fails, on out of memory. No printf and no allocation in the common case: a validation
 * builds the path of every member it visits, and most are never shown. */
#define PATH_LOCAL 192

static const char *join_path(vctx_t *c, char *buf, char **heap, const char *path,
                             const char *prefix, const char *name, const char *suffix)
{
	size_t lp = strlen(path), lx = strlen(prefix), ln = strlen(name), ls = strlen(suffix);
	size_t n = lp + lx + ln + ls;
	char *out = buf;

	*heap = NULL;
	if (n >= PATH_LOCAL) {
		out = *heap = malloc(n + 1);
		if (out == NULL) {
			c->count++;
			return NULL;
		}
	}
	memcpy(out, path, lp);
	memcpy(out + lp, prefix, lx);
	memcpy(out + lp + lx, name, ln);
	memcpy(out + lp + lx + ln, suffix, ls);
	out[n] = '\0';
	return out;
}

static const char *member_path(vctx_t *c, char *buf, char **heap, const char *path,
                               const char *name)
{
	return join_path(c, buf, heap, path, path[0] == '\0' ? "" : ".", name, "");
}

static const char *expected_name(rz_ftype_t type)
{
	switch (type) {
	case RZ_F_STRING:
		return "a string";
	case RZ_F_INT:
		return "an integer";
	case RZ_F_BOOL:
		return "a boolean";
	case RZ_F_OBJECT:
	case RZ_F_ANY:
		return "an object";
	case RZ_F_ARRAY:
		return "an array";
	case RZ_F_MAP:
		return "an object of strings";
	case RZ_F_TIME:
		return "an RFC 3339 time";
	}
	return "a value";
}

static const char *got_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

static bool type_ok(rz_ftype_t type, const json_t *v)
{
	switch (type) {
	case RZ_F_STRING:
	case RZ_F_TIME:
		return json_is_string(v);
	case RZ_F_INT:
		return json_is_integer(v);
	case RZ_F_BOOL:
		return json_is_boolean(v);
	case RZ_F_OBJECT:
	case RZ_F_MAP:
	case RZ_F_ANY:
		return json_is_object(v);
	case RZ_F_ARRAY:
		return json_is_array(v);
	}
	return false;
}

static bool absent(const json_t *v)
{
	return v == NULL || json_is_null(v);
}

static bool two_digits(const char *s, int *out)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9') {
		return false;
	}
	*out = (s[0] - '0') * 10 + (s[1] - '0');
	return true;
}

static bool valid_date(const char *s)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int hi, lo, year, month, day;

	if (!two_digits(s, &hi) || !two_digits(s + 2, &lo) || s[4] != '-' ||
	    !two_digits(s + 5, &month) || s[7] != '-' || !two_digits(s + 8, &day)) {
		return false;
	}
	year = hi * 100 + lo;
	if (month < 1 || month > 12 || day < 1 || day > mdays[month - 1]) {
		return false;
	}
	if (month == 2 && day == 29) {
		return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	}
	return true;
}

/* RFC 3339: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM). */
static bool valid_time(const char *s)
{
	int hour, min, sec;
	const char *p;

	if (!valid_date(s) || s[10] != 'T' || !two_digits(s + 11, &hour) || s[13] != ':' ||
	    !two_digits(s + 14, &min) || s[16] != ':' || !two_digits(s + 17, &sec)) {
		return false;
	}
	if (hour > 23 || min > 59 || sec > 59) {
		return false;
	}
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9') {
			return false;
		}
		while (*p >= '0' && *p <= '9') {
			p++;
		}
	}
	if (*p == 'Z') {
		return p[1] == '\0';
	}
	if (*p != '+' && *p != '-') {
		return false;
	}
	return two_digits(p + 1, &hour) && p[3] == ':' && two_digits(p + 4, &min) && p[6] == '\0' &&
	       hour <= 23 && min <= 59;
}

static void enum_problem(vctx_t *c, const char *const *enums, const char *path)
{
	size_t len = 1, used = 0, i;
	char *buf;

	for (i = 0; enums[i] != NULL; i++) {
		len += strlen(enums[i]) + 4;
	}
	buf = malloc(len);
	if (buf == NULL) {
		c->count++;
		return;
	}
	buf[0] = '\0';
	for (i = 0; enums[i] != NULL; i++) {
		used += (size_t)snprintf(buf + used, len - used, "%s\"%s\"", i > 0 ? ", " : "",
		                         enums[i]);
	}
	problem(c, path, RZ_CAUSE_NOT_SUPPORTED, "supported values: %s", buf);
	free(buf);
}

static bool in_enum(const char *const *enums, const char *s)
{
	size_t i;

	for (i = 0; enums[i] != NULL; i++) {
		if (strcmp(enums[i], s) == 0) {
			return true;
		}
	}
	return false;
}

/* Run a format check; false (with a cause added) when it fails. */
static bool check_format(vctx_t *c, rz_format_fn fn, const char *s, const char *path)
{
	char msg[MSG_MAX] = "";

	if (fn == NULL || fn(s, msg, sizeof(msg))) {
		return true;
	}
	problem(c, path, RZ_CAUSE_INVALID, "%s", msg[0] != '\0' ? msg : "invalid value");
	return false;
}

/* item: an ARRAY item, where max_len counts the array's items, not the string's bytes. */
static void check_string(vctx_t *c, const rz_field_t *f, json_t *v, const char *path, bool item)
{
	const char *s = json_string_value(v);

	if (f->enums != NULL && !in_enum(f->enums, s)) {
		enum_problem(c, f->enums, path);
		return;
	}
	if (!item && f->max_len > 0 && json_string_length(v) > f->max_len) {
		problem(c, path, RZ_CAUSE_TOO_LONG, "must be at most %zu characters", f->max_len);
		return;
	}
	check_format(c, f->format, s, path);
}

static void check_int(vctx_t *c, const rz_field_t *f, json_t *v, const char *path)
{
	json_int_t x = json_integer_value(v);

	if (f->ranged && (x < f->min || x > f->max)) {
		problem(c, path, RZ_CAUSE_INVALID, "must be between %" PRId64 " and %" PRId64,
		        f->min, f->max);
	}
}

static void check_unique(vctx_t *c, json_t *seen, json_t *item, const char *path)
{
	const char *s = json_string_value(item);

	if (json_object_get(seen, s) != NULL) {
		problem(c, path, RZ_CAUSE_DUPLICATE, "duplicate value \"%s\"", s);
	} else if (json_object_set_new(seen, s, json_true()) != 0) {
		c->count++;
	}
}

static void check_value(vctx_t *c, const rz_field_t *f, rz_ftype_t type, json_t *v,
                        const char *path, bool item);

/* Too many items: one cause at the array, the items are not inspected. */
static void check_array(vctx_t *c, const rz_field_t *f, json_t *v, const char *path)
{
	json_t *seen = NULL, *item;
	size_t i;

	if (f->max_len > 0 && json_array_size(v) > f->max_len) {
		problem(c, path, RZ_CAUSE_TOO_MANY, "must have at most %zu items", f->max_len);
		return;
	}
	if (f->unique) {
		seen = json_object();
		if (seen == NULL) {
			c->count++;
			return;
		}
	}
	json_array_foreach(v, i, item)
	{
		char buf[PATH_LOCAL], index[24], *heap;
		const char *p;
		int before = c->count;

		snprintf(index, sizeof(index), "%zu", i);
		p = join_path(c, buf, &heap, path, "[", index, "]");
		if (p == NULL) {
			break;
		}
		check_value(c, f, f->items, item, p, true);
		if (seen != NULL && c->count == before && json_is_string(item)) {
			check_unique(c, seen, item, p);
		}
		free(heap);
	}
	json_decref(seen);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool declared(const rz_field_t *fields, const char *name)
{
	const rz_field_t *f;

	for (f = fields; f != NULL && f->name != NULL; f++) {
		if (strcmp(f->name, name) == 0) {
			return true;
		}
	}
	return false;
}

/* obj's keys that fields does not declare (all keys when fields is NULL), sorted. Caller
 * frees the array (the strings are borrowed from obj); NULL, counted, on out of memory. */
static const char **sorted_keys(vctx_t *c, json_t *obj, const rz_field_t *fields, size_t *n)
{
	const char **keys = malloc((json_object_size(obj) + 1) * sizeof(*keys));
	const char *key;
	json_t *v;

	*n = 0;
	if (keys == NULL) {
		c->count++;
		return NULL;
	}
	json_object_foreach(obj, key, v)
	{
		if (!declared(fields, key)) {
			keys[(*n)++] = key;
		}
	}
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

static void check_entry(vctx_t *c, const rz_field_t *f, const char *key, json_t *v,
                        const char *path)
{
	if (!check_format(c, f->key_format, key, path)) {
		return;
	}
	if (!json_is_string(v)) {
		problem(c, path, RZ_CAUSE_INVALID, "expected a string, got %s", got_name(v));
		return;
	}
	check_format(c, f->format, json_string_value(v), path);
}

/* Entries in key order. Too many entries: one cause at the map, entries not inspected. */
static void check_map(vctx_t *c, const rz_field_t *f, json_t *v, const char *path, bool item)
{
	const char **keys;
	size_t n, i;

	if (!item && f->max_len > 0 && json_object_size(v) > f->max_len) {
		problem(c, path, RZ_CAUSE_TOO_MANY, "must have at most %zu entries", f->max_len);
		return;
	}
	if (!item && f->max_bytes > 0) {
		const char *key;
		json_t *e;
		size_t total = 0;
		json_object_foreach(v, key, e)
		{
			total += strlen(key) + (json_is_string(e) ? json_string_length(e) : 0);
		}
		if (total > f->max_bytes) {
			problem(c, path, RZ_CAUSE_TOO_LONG,
			        "must have at most %zu bytes (keys and values together)",
			        f->max_bytes);
			return;
		}
	}
	keys = sorted_keys(c, v, NULL, &n);
	for (i = 0; i < n; i++) {
		char buf[PATH_LOCAL], *heap;
		const char *p = join_path(c, buf, &heap, path, "[", keys[i], "]");

		if (p == NULL) {
			break;
		}
		check_entry(c, f, keys[i], json_object_get(v, keys[i]), p);
		free(heap);
	}
	free(keys);
}

/* One value of type type, constrained by f. A wrong JSON type is one cause, no more. */
static void check_value(vctx_t *c, const rz_field_t *f, rz_ftype_t type, json_t *v,
                        const char *path, bool item)
{
	if (!type_ok(type, v)) {
		problem(c, path, RZ_CAUSE_INVALID, "expected %s, got %s", expected_name(type),
		        got_name(v));
		return;
	}
	switch (type) {
	case RZ_F_STRING:
		check_string(c, f, v, path, item);
		break;
	case RZ_F_INT:
		check_int(c, f, v, path);
		break;
	case RZ_F_OBJECT:
		check_object(c, v, f->fields, path);
		break;
	case RZ_F_ARRAY:
		/* Arrays of arrays cannot be described; an inner array is not inspected. */
		if (!item) {
			check_array(c, f, v, path);
		}
		break;
	case RZ_F_MAP:
		check_map(c, f, v, path, item);
		break;
	case RZ_F_TIME:
		if (!valid_time(json_string_value(v))) {
			problem(c, path, RZ_CAUSE_INVALID,
			        "must be an RFC 3339 time such as 2026-11-30T04:31:11Z");
		}
		break;
	case RZ_F_BOOL:
	case RZ_F_ANY:
		break;
	}
}

/* The parsed default of f; a def that is not JSON is a bug in the schema table. */
static json_t *load_default(const rz_field_t *f)
{
	json_error_t error;
	json_t *v = json_loads(f->def, JSON_DECODE_ANY, &error);

	assert(v != NULL && "rz_field_t.def must be JSON text");
	return v;
}

static void check_member(vctx_t *c, json_t *obj, const rz_field_t *f, const char *path)
{
	json_t *v = json_object_get(obj, f->name);
	char buf[PATH_LOCAL], *heap;
	const char *p = member_path(c, buf, &heap, path, f->name);

	if (p == NULL) {
		return;
	}
	if (absent(v) && f->def != NULL && c->defaults) {
		if (json_object_set_new(obj, f->name, load_default(f)) != 0) {
			c->count++;
		}
		v = json_object_get(obj, f->name);
	}
	if (!absent(v)) {
		check_value(c, f, f->type, v, p, false);
	} else if (f->required) {
		problem(c, p, RZ_CAUSE_REQUIRED, "required");
	}
	free(heap);
}

static void check_object(vctx_t *c, json_t *obj, const rz_field_t *fields, const char *path)
{
	const rz_field_t *f;
	const char **unknown;
	size_t n, i;

	for (f = fields; f != NULL && f->name != NULL; f++) {
		check_member(c, obj, f, path);
	}
	unknown = sorted_keys(c, obj, fields, &n);
	for (i = 0; i < n; i++) {
		char buf[PATH_LOCAL], *heap;
		const char *p = member_path(c, buf, &heap, path, unknown[i]);

		if (p == NULL) {
			break;
		}
		problem(c, p, RZ_CAUSE_INVALID, "unknown field");
		free(heap);
	}
	free(unknown);
}

int rz_fields_validate(json_t *obj, const rz_field_t *fields, const char *path, bool apply_defaults,
                       json_t *causes)
{
	vctx_t c = { .causes = causes, .defaults = apply_defaults, .count = 0 };

	if (path == NULL) {
		path = "";
	}
	if (obj == NULL || !json_is_object(obj)) {
		problem(&c, path, RZ_CAUSE_INVALID, "expected an object, got %s",
		        obj != NULL ? got_name(obj) : "null");
		return c.count;
	}
	check_object(&c, obj, fields, path);
	return c.count;
}

/* ---- unknown members ---- */

#define DROP_PATH_MAX 512 /* a longer path is reported cut */

static void drop_in(json_t *obj, const rz_field_t *fields, const char *path, json_t *dropped,
                    size_t *n);

/* Into v, a member of type f declares: its object, or its array's objects. */
static void drop_below(json_t *v, const rz_field_t *f, const char *path, json_t *dropped, size_t *n)
{
	char p[DROP_PATH_MAX];
	size_t i;
	json_t *item;

	if (f->type == RZ_F_OBJECT && json_is_object(v)) {
		drop_in(v, f->fields, path, dropped, n);
	} else if (f->type == RZ_F_ARRAY && f->items == RZ_F_OBJECT && json_is_array(v)) {
		json_array_foreach(v, i, item)
		{
			snprintf(p, sizeof(p), "%s[%zu]", path, i);
			if (json_is_object(item)) {
				drop_in(item, f->fields, p, dropped, n);
			}
		}
	}
}

static void drop_in(json_t *obj, const rz_field_t *fields, const char *path, json_t *dropped,
                    size_t *n)
{
	const char *key;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(obj, tmp, key, v)
	{
		char p[DROP_PATH_MAX];
		const rz_field_t *f = fields;

		while (f != NULL && f->name != NULL && strcmp(f->name, key) != 0) {
			f++;
		}
		snprintf(p, sizeof(p), "%s%s%s", path, *path != '\0' ? "." : "", key);
		if (f == NULL || f->name == NULL) {
			if (dropped != NULL) {
				json_array_append_new(dropped, json_string(p));
			}
			json_object_del(obj, key);
			(*n)++;
		} else {
			drop_below(v, f, p, dropped, n);
		}
	}
}

size_t rz_fields_drop_unknown(json_t *obj, const rz_field_t *fields, const char *path,
                              json_t *dropped)
{
	size_t n = 0;

	if (json_is_object(obj)) {
		drop_in(obj, fields, path != NULL ? path : "", dropped, &n);
	}
	return n;
}

size_t rz_fields_drop_unknown_member(json_t *v, const rz_field_t *f, const char *path,
                                     json_t *dropped)
{
	size_t n = 0;

	drop_below(v, f, path, dropped, &n);
	return n;
}

/* ---- OpenAPI ---- */

/* Set key to v (stolen, may be NULL); -1 when anything is missing. */
static int put(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v) == 0 ? 0 : -1;
}

static json_t *finish(json_t *o, int rc)
{
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *enum_array(const char *const *enums)
{
	json_t *a = json_array();
	int rc = a != NULL ? 0 : -1;
	size_t i;

	for (i = 0; enums[i] != NULL; i++) {
		rc |= json_array_append_new(a, json_string(enums[i]));
	}
	return finish(a, rc);
}

static json_t *string_schema(const rz_field_t *f, bool item)
{
	json_t *o = json_pack("{s:s}", "type", "string");
	int rc = 0;

	if (f->enums != NULL) {
		rc |= put(o, "enum", enum_array(f->enums));
	}
	if (f->format_name != NULL) {
		rc |= put(o, "format", json_string(f->format_name));
	}
	if (!item && f->max_len > 0) {
		rc |= put(o, "maxLength", json_integer((json_int_t)f->max_len));
	}
	return finish(o, rc);
}

static json_t *int_schema(const rz_field_t *f)
{
	json_t *o = json_pack("{s:s, s:s}", "type", "integer", "format", "int64");
	int rc = 0;

	if (f->ranged) {
		rc |= put(o, "minimum", json_integer(f->min));
		rc |= put(o, "maximum", json_integer(f->max));
	}
	return finish(o, rc);
}

static json_t *type_schema(const rz_field_t *f, rz_ftype_t type, bool item);

static json_t *array_schema(const rz_field_t *f)
{
	json_t *o = json_pack("{s:s}", "type", "array");
	int rc = put(o, "items", type_schema(f, f->items, true));

	if (f->max_len > 0) {
		rc |= put(o, "maxItems", json_integer((json_int_t)f->max_len));
	}
	if (f->unique) {
		rc |= put(o, "uniqueItems", json_true());
	}
	return finish(o, rc);
}

/* The value format (the checks .format applies) goes on additionalProperties. */
static json_t *map_schema(const rz_field_t *f, bool item)
{
	json_t *o =
	    json_pack("{s:s, s:{s:s}}", "type", "object", "additionalProperties", "type", "string");
	int rc = 0;

	if (f->format_name != NULL) {
		rc |= put(json_object_get(o, "additionalProperties"), "format",
		          json_string(f->format_name));
	}
	if (!item && f->max_len > 0) {
		rc |= put(o, "maxProperties", json_integer((json_int_t)f->max_len));
	}
	return finish(o, rc);
}

static json_t *type_schema(const rz_field_t *f, rz_ftype_t type, bool item)
{
	switch (type) {
	case RZ_F_STRING:
		return string_schema(f, item);
	case RZ_F_INT:
		return int_schema(f);
	case RZ_F_BOOL:
		return json_pack("{s:s}", "type", "boolean");
	case RZ_F_OBJECT:
		return rz_fields_openapi(f->fields);
	case RZ_F_ARRAY:
		return item ? json_pack("{s:s}", "type", "array") : array_schema(f);
	case RZ_F_MAP:
		return map_schema(f, item);
	case RZ_F_ANY: /* open: generated clients must accept any member (providerConfig) */
		return json_pack("{s:s, s:b, s:b}", "type", "object", "additionalProperties", 1,
		                 "x-kubernetes-preserve-unknown-fields", 1);
	case RZ_F_TIME:
		return json_pack("{s:s, s:s}", "type", "string", "format", "date-time");
	}
	return NULL;
}

static json_t *field_schema(const rz_field_t *f)
{
	json_t *o = type_schema(f, f->type, false);
	int rc = o != NULL ? 0 : -1;

	if (f->doc != NULL) {
		rc |= put(o, "description", json_string(f->doc));
	}
	if (f->def != NULL) {
		rc |= put(o, "default", load_default(f));
	}
	return finish(o, rc);
}

json_t *rz_fields_openapi(const rz_field_t *fields)
{
	json_t *o = json_object(), *props = json_object(), *req = json_array();
	const rz_field_t *f;
	int rc = 0;

	for (f = fields; f != NULL && f->name != NULL; f++) {
		rc |= put(props, f->name, field_schema(f));
		if (f->required) {
			rc |= json_array_append_new(req, json_string(f->name));
		}
	}
	rc |= put(o, "type", json_string("object"));
	rc |= put(o, "properties", props);
	if (json_array_size(req) > 0) {
		rc |= put(o, "required", req);
	} else {
		json_decref(req);
		rc |= req == NULL ? -1 : 0;
	}
	rc |= put(o, "additionalProperties", json_false());
	return finish(o, rc);
}
