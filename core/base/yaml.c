/* core/base/yaml.c - YAML to JSON through libyaml (see yaml.h). */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/yaml.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_DEPTH     RZ_YAML_MAX_DEPTH
#define PATH_MAX_LEN  256

static int oom(rz_err_t *err)
{
	return rz_err_set(err, -ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------ events */

int rz_yaml_line(const yaml_event_t *ev)
{
	return (int)ev->start_mark.line + 1;
}

const char *rz_yaml_got(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SEQUENCE_START_EVENT:
		return "a list";
	default:
		return "a scalar";
	}
}

const char *rz_yaml_text(const yaml_event_t *ev)
{
	return (const char *)ev->data.scalar.value;
}

bool rz_yaml_is_plain(const yaml_event_t *ev)
{
	return ev->type == YAML_SCALAR_EVENT && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       ev->data.scalar.tag == NULL;
}

static bool null_word(const char *s)
{
	static const char *const words[] = { "", "~", "null", "Null", "NULL" };

	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		if (strcmp(s, words[i]) == 0) {
			return true;
		}
	}
	return false;
}

bool rz_yaml_is_null(const yaml_event_t *ev)
{
	return rz_yaml_is_plain(ev) && null_word(rz_yaml_text(ev));
}

static void offset_to_mark(const char *data, size_t len, size_t offset, size_t *line, size_t *col)
{
	*line = 0;
	*col = 0;
	for (size_t i = 0; i < offset && i < len; i++) {
		if (data[i] == '\n') {
			(*line)++;
			*col = 0;
		} else {
			(*col)++;
		}
	}
}

static int syntax_error(rz_yaml_t *y)
{
	const yaml_parser_t *p = &y->parser;
	size_t line = p->problem_mark.line;
	size_t col = p->problem_mark.column;

	if (p->error == YAML_MEMORY_ERROR) {
		return oom(y->err);
	}
	if (p->error == YAML_READER_ERROR) {
		offset_to_mark(y->data, y->len, p->problem_offset, &line, &col);
	}
	return rz_err_set(y->err, RZ_EPARSE, "%s:%zu:%zu: YAML syntax error: %s", y->name, line + 1,
	                  col + 1, p->problem != NULL ? p->problem : "unknown problem");
}

int rz_yaml_init(rz_yaml_t *y, const char *name, const char *data, size_t len, int code,
                 rz_err_t *err)
{
	memset(y, 0, sizeof(*y));
	if (!yaml_parser_initialize(&y->parser)) {
		return oom(err);
	}
	y->name = name;
	y->data = data != NULL ? data : "";
	y->len = data != NULL ? len : 0;
	y->err = err;
	y->code = code;
	yaml_parser_set_input_string(&y->parser, (const unsigned char *)y->data, y->len);
	return 0;
}

void rz_yaml_fini(rz_yaml_t *y)
{
	yaml_parser_delete(&y->parser);
}

int rz_yaml_next(rz_yaml_t *y, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&y->parser, ev)) {
		return syntax_error(y);
	}
	if (ev->type == YAML_ALIAS_EVENT) {
		int line = rz_yaml_line(ev);

		yaml_event_delete(ev);
		return rz_err_set(y->err, y->code, "%s:%d: YAML aliases are not supported", y->name,
		                  line);
	}
	return 0;
}

/* ------------------------------------------------------------------ scalars */

/* Resolvers for plain scalars (YAML 1.2 core schema): 1 = matched, 0 = not, <0 = error. */
static int resolve_null(const char *s, json_t **out)
{
	if (!null_word(s)) {
		return 0;
	}
	*out = json_null();
	return 1;
}

static int resolve_bool(const char *s, json_t **out)
{
	static const struct {
		const char *word;
		bool value;
	} words[] = {
		{ "true", true },   { "True", true },   { "TRUE", true },
		{ "false", false }, { "False", false }, { "FALSE", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		if (strcmp(s, words[i].word) == 0) {
			*out = json_boolean(words[i].value);
			return 1;
		}
	}
	return 0;
}

static const char *skip_digits(const char *s)
{
	while (isdigit((unsigned char)*s)) {
		s++;
	}
	return s;
}

static int resolve_int(const char *s, json_t **out)
{
	const char *p = s + (*s == '-' || *s == '+');
	const char *end = skip_digits(p);
	long long n;

	if (end == p || *end != '\0') {
		return 0;
	}
	errno = 0;
	n = strtoll(s, NULL, 10);
	if (errno == ERANGE) {
		return -ERANGE;
	}
	*out = json_integer(n);
	return 1;
}

/* [-+]? ( .digits | digits ( . digits? )? ) ( [eE] [-+]? digits )? with a '.' or an exponent. */
static int resolve_real(const char *s, json_t **out)
{
	const char *p = s + (*s == '-' || *s == '+');
	const char *int_end = skip_digits(p);
	const char *q = int_end;
	double d;

	if (*q == '.') {
		q = skip_digits(q + 1);
	}
	if (q == p || (int_end == p && q == p + 1)) {
		return 0;
	}
	if (*q == 'e' || *q == 'E') {
		const char *e = q + 1 + (q[1] == '-' || q[1] == '+');

		q = skip_digits(e);
		if (q == e) {
			return 0;
		}
	}
	if (*q != '\0' || q == int_end) {
		return 0;
	}
	d = strtod(s, NULL);
	if (!isfinite(d)) {
		return -ERANGE;
	}
	*out = json_real(d);
	return 1;
}

static int (*const resolvers[])(const char *s, json_t **out) = {
	resolve_null,
	resolve_bool,
	resolve_int,
	resolve_real,
};

/* Quoted and tagged scalars are strings; plain ones go through the resolvers. */
static int json_scalar(rz_yaml_t *y, const char *path, const yaml_event_t *ev, json_t **out)
{
	const char *s = rz_yaml_text(ev);
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; rz_yaml_is_plain(ev) && rc == 0 && i < ARRAY_SIZE(resolvers); i++) {
		rc = resolvers[i](s, out);
	}
	if (rc < 0) {
		return rz_err_set(y->err, y->code,
		                  "%s:%d: %s: invalid value '%s': number out of range", y->name,
		                  rz_yaml_line(ev), path, s);
	}
	if (rc == 0) {
		*out = json_stringn(s, ev->data.scalar.length);
	}
	return *out != NULL ? 0 : oom(y->err);
}

/* ------------------------------------------------------------------ collections */

static int enter(rz_yaml_t *y, const char *path, int line)
{
	if (++y->depth > MAX_DEPTH) {
		return rz_err_set(y->err, y->code, "%s:%d: %s: nested more than %d levels deep",
		                  y->name, line, path, MAX_DEPTH);
	}
	return 0;
}

static int json_sequence(rz_yaml_t *y, const char *path, int line, json_t **out)
{
	char child[PATH_MAX_LEN];
	json_t *arr = NULL;
	yaml_event_t ev;
	int rc = enter(y, path, line);

	if (rc < 0) {
		goto out;
	}
	if ((arr = json_array()) == NULL) {
		rc = oom(y->err);
		goto out;
	}
	for (size_t i = 0;; i++) {
		json_t *v = NULL;

		if ((rc = rz_yaml_next(y, &ev)) < 0) {
			goto out;
		}
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		snprintf(child, sizeof(child), "%s[%zu]", path, i);
		rc = rz_yaml_node(y, child, &ev, &v);
		yaml_event_delete(&ev);
		if (rc == 0 && json_array_append_new(arr, v) < 0) {
			rc = oom(y->err);
		}
		if (rc < 0) {
			goto out;
		}
	}
	*out = arr;
	arr = NULL;
out:
	json_decref(arr);
	y->depth--;
	return rc;
}

/* One key: value of a mapping into obj. */
static int json_member(rz_yaml_t *y, const char *path, const yaml_event_t *key, json_t *obj)
{
	char child[PATH_MAX_LEN];
	const char *k;
	yaml_event_t val;
	json_t *v = NULL;
	int line = rz_yaml_line(key);
	int rc;

	if (key->type != YAML_SCALAR_EVENT) {
		return rz_err_set(y->err, y->code, "%s:%d: expected a string as key, got %s",
		                  y->name, line, rz_yaml_got(key));
	}
	k = rz_yaml_text(key);
	snprintf(child, sizeof(child), "%s%s%s", path, path[0] != '\0' ? "." : "", k);
	if (json_object_get(obj, k) != NULL) {
		return rz_err_set(y->err, y->code, "%s:%d: duplicate key '%s'", y->name, line,
		                  child);
	}
	if ((rc = rz_yaml_next(y, &val)) < 0) {
		return rc;
	}
	rc = rz_yaml_node(y, child, &val, &v);
	if (rc == 0 && json_object_set_new(obj, k, v) < 0) {
		rc = oom(y->err);
	}
	yaml_event_delete(&val);
	return rc;
}

static int json_mapping(rz_yaml_t *y, const char *path, int line, json_t **out)
{
	json_t *obj = NULL;
	yaml_event_t key;
	int rc = enter(y, path, line);

	if (rc < 0) {
		goto out;
	}
	if ((obj = json_object()) == NULL) {
		rc = oom(y->err);
		goto out;
	}
	for (;;) {
		if ((rc = rz_yaml_next(y, &key)) < 0) {
			goto out;
		}
		if (key.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&key);
			break;
		}
		rc = json_member(y, path, &key, obj);
		yaml_event_delete(&key);
		if (rc < 0) {
			goto out;
		}
	}
	*out = obj;
	obj = NULL;
out:
	json_decref(obj);
	y->depth--;
	return rc;
}

int rz_yaml_node(rz_yaml_t *y, const char *path, const yaml_event_t *ev, json_t **out)
{
	if (++y->nodes > RZ_YAML_MAX_NODES) {
		return rz_err_set(y->err, y->code, "%s:%d: more than %d nodes", y->name,
		                  rz_yaml_line(ev), RZ_YAML_MAX_NODES);
	}
	switch (ev->type) {
	case YAML_MAPPING_START_EVENT:
		return json_mapping(y, path, rz_yaml_line(ev), out);
	case YAML_SEQUENCE_START_EVENT:
		return json_sequence(y, path, rz_yaml_line(ev), out);
	default:
		return json_scalar(y, path, ev, out);
	}
}

/* ------------------------------------------------------------------ documents */

int rz_yaml_load_all(const char *name, const char *data, size_t len, json_t **docs, rz_err_t *err)
{
	rz_yaml_t y;
	yaml_event_t ev;
	json_t *all = json_array();
	int rc = all != NULL ? rz_yaml_init(&y, name, data, len, REZUS_EINVALID, err) : oom(err);
	bool in_doc = false, done = false;

	*docs = NULL;
	if (rc < 0) {
		json_decref(all);
		return rc;
	}
	while (rc == 0 && !done && (rc = rz_yaml_next(&y, &ev)) == 0) {
		json_t *v = NULL;

		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			in_doc = true;
			break;
		case YAML_DOCUMENT_END_EVENT:
			in_doc = false;
			break;
		case YAML_STREAM_START_EVENT:
			break;
		default:
			if (!in_doc) {
				break;
			}
			rc = rz_yaml_node(&y, "", &ev, &v);
			if (rc == 0 && !json_is_null(v) && json_array_append(all, v) < 0) {
				rc = oom(err);
			}
			json_decref(v);
			break;
		}
		yaml_event_delete(&ev);
	}
	rz_yaml_fini(&y);
	if (rc == 0) {
		*docs = all;
		all = NULL;
	}
	json_decref(all);
	return rc;
}
