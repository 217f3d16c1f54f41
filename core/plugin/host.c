/* core/plugin/host.c - the services table plugins call (rezus/host.h), over jansson. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rezus/version.h>

#include "core/plugin/host.h"
#include "core/base/log.h"

#define J(v)  ((json_t *)(v))
#define CJ(v) ((const json_t *)(v))
#define RJ(v) ((rezus_json_t *)(v))

struct block {
	struct block *next;
	size_t used, size;
	max_align_t data[];
};

static rz_host_priv_t *priv(const rezus_host_t *h)
{
	return h->priv;
}

/* ------------------------------------------------------------------ arena */

void *rz_host_alloc(rz_host_priv_t *p, size_t size)
{
	struct block *b = p->arena;
	size_t need = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);

	if (!p->in_call || need == 0 || need > (64u << 20)) {
		return NULL;
	}
	if (b == NULL || b->size - b->used < need) {
		size_t cap = need > 16384 ? need : 16384;
		b = malloc(sizeof(*b) + cap);
		if (b == NULL) {
			return NULL;
		}
		b->next = p->arena;
		b->used = 0;
		b->size = cap;
		p->arena = b;
	}
	b->used += need;
	return (char *)b->data + b->used - need;
}

void rz_host_arena_reset(rz_host_priv_t *p)
{
	while (p->arena != NULL) {
		struct block *next = p->arena->next;
		free(p->arena);
		p->arena = next;
	}
}

static void *h_alloc(const rezus_host_t *h, size_t size)
{
	return rz_host_alloc(priv(h), size);
}

static char *h_strdup(const rezus_host_t *h, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *d = s ? rz_host_alloc(priv(h), n + 1) : NULL;

	if (d != NULL) {
		memcpy(d, s, n + 1);
	}
	return d;
}

static char *h_printf(const rezus_host_t *h, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *d;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (d = rz_host_alloc(priv(h), (size_t)n + 1)) == NULL) {
		return NULL;
	}
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return d;
}

/* ------------------------------------------------------------------ TF strings */

char *rz_tf_escape(const char *s, char *(*alloc)(void *ctx, size_t), void *ctx)
{
	size_t n = 0;
	char *out, *o;

	for (const char *p = s; *p != '\0'; p++) {
		n += ((p[0] == '$' || p[0] == '%') && p[1] == '{') ? 2 : 1;
	}
	out = alloc(ctx, n + 1);
	if (out == NULL) {
		return NULL;
	}
	o = out;
	for (const char *p = s; *p != '\0'; p++) {
		if ((p[0] == '$' || p[0] == '%') && p[1] == '{') {
			*o++ = p[0]; /* "${" -> "$${", "%{" -> "%%{" */
		}
		*o++ = *p;
	}
	*o = '\0';
	return out;
}

static char *arena_cb(void *ctx, size_t n)
{
	return rz_host_alloc(ctx, n);
}

static char *h_tf_escape(const rezus_host_t *h, const char *s)
{
	return s ? rz_tf_escape(s, arena_cb, priv(h)) : NULL;
}

size_t rz_tf_name(const char *s, char *out, size_t size)
{
	size_t n = s ? strlen(s) : 0, o = 0;

	if (size < 3) {
		return 0;
	}
	if (n == 0 || !isalpha((unsigned char)s[0])) {
		out[o++] = 'x';
		out[o++] = '_';
	}
	for (size_t i = 0; i < n && o + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		out[o++] = isalnum(c) ? (char)tolower(c) : '_';
	}
	out[o] = '\0';
	return o;
}

static char *h_tf_name(const rezus_host_t *h, const char *s)
{
	size_t size = (s ? strlen(s) : 0) + 3;
	char *out = rz_host_alloc(priv(h), size);

	if (out != NULL) {
		rz_tf_name(s, out, size);
	}
	return out;
}

/* ------------------------------------------------------------------ log, errors */

static void h_log(const rezus_host_t *h, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rz_log(level, "plugin", "%s: %s", priv(h)->name, msg);
}

static int h_error(const rezus_host_t *h, rezus_err_t *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* ------------------------------------------------------------------ JSON */

static rezus_json_t *h_object(const rezus_host_t *h)
{
	return RJ(json_object());
}

static rezus_json_t *h_array(const rezus_host_t *h)
{
	return RJ(json_array());
}

static rezus_json_t *h_string(const rezus_host_t *h, const char *s)
{
	return s ? RJ(json_string(s)) : NULL;
}

static rezus_json_t *h_integer(const rezus_host_t *h, int64_t v)
{
	return RJ(json_integer((json_int_t)v));
}

static rezus_json_t *h_real(const rezus_host_t *h, double v)
{
	return RJ(json_real(v));
}

static rezus_json_t *h_bool(const rezus_host_t *h, int v)
{
	return RJ(json_boolean(v));
}

static rezus_json_t *h_null(const rezus_host_t *h)
{
	return RJ(json_null());
}

static rezus_json_t *h_parse(const rezus_host_t *h, const char *text, rezus_err_t *err)
{
	json_error_t jerr;
	json_t *v = text ? json_loads(text, JSON_REJECT_DUPLICATES, &jerr) : NULL;

	if (v == NULL) {
		h_error(h, err, REZUS_EINVALID, "not valid JSON: %s at line %d, column %d",
		        text ? jerr.text : "no text", text ? jerr.line : 0, text ? jerr.column : 0);
	}
	return RJ(v);
}

static int h_set(const rezus_host_t *h, rezus_json_t *obj, const char *key, rezus_json_t *value)
{
	if (!json_is_object(J(obj)) || key == NULL || value == NULL) {
		json_decref(J(value));
		return -EINVAL;
	}
	return json_object_set_new(J(obj), key, J(value)) == 0 ? 0 : -ENOMEM;
}

static int h_append(const rezus_host_t *h, rezus_json_t *arr, rezus_json_t *value)
{
	if (!json_is_array(J(arr)) || value == NULL) {
		json_decref(J(value));
		return -EINVAL;
	}
	return json_array_append_new(J(arr), J(value)) == 0 ? 0 : -ENOMEM;
}

static void h_free(const rezus_host_t *h, rezus_json_t *v)
{
	json_decref(J(v));
}

static int h_type(const rezus_host_t *h, const rezus_json_t *v)
{
	if (v == NULL) {
		return REZUS_JSON_INVALID;
	}
	switch (json_typeof(CJ(v))) {
	case JSON_OBJECT:
		return REZUS_JSON_OBJECT;
	case JSON_ARRAY:
		return REZUS_JSON_ARRAY;
	case JSON_STRING:
		return REZUS_JSON_STRING;
	case JSON_INTEGER:
		return REZUS_JSON_INTEGER;
	case JSON_REAL:
		return REZUS_JSON_REAL;
	case JSON_TRUE:
	case JSON_FALSE:
		return REZUS_JSON_BOOL;
	case JSON_NULL:
		return REZUS_JSON_NULL;
	default:
		return REZUS_JSON_INVALID;
	}
}

static const rezus_json_t *h_get(const rezus_host_t *h, const rezus_json_t *obj, const char *key)
{
	return key ? RJ(json_object_get(CJ(obj), key)) : NULL;
}

static const rezus_json_t *h_path(const rezus_host_t *h, const rezus_json_t *v, const char *path)
{
	char buf[512], *save = NULL;
	const json_t *cur = CJ(v);

	if (path == NULL || strlen(path) >= sizeof(buf)) {
		return NULL;
	}
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = strtok_r(buf, ".", &save); s != NULL && cur != NULL;
	     s = strtok_r(NULL, ".", &save)) {
		char *end;
		unsigned long i = strtoul(s, &end, 10);
		cur = json_is_array(cur) && *end == '\0' ? json_array_get(cur, i)
		                                         : json_object_get(cur, s);
	}
	return RJ(cur);
}

static const rezus_json_t *h_at(const rezus_host_t *h, const rezus_json_t *arr, size_t i)
{
	return RJ(json_array_get(CJ(arr), i));
}

static size_t h_size(const rezus_host_t *h, const rezus_json_t *v)
{
	if (json_is_object(CJ(v))) {
		return json_object_size(CJ(v));
	}
	return json_is_array(CJ(v)) ? json_array_size(CJ(v)) : 0;
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *h_key_at(const rezus_host_t *h, const rezus_json_t *obj, size_t i)
{
	size_t n = json_is_object(CJ(obj)) ? json_object_size(CJ(obj)) : 0;
	const char **keys;
	const char *k;
	json_t *v;
	size_t j = 0;

	if (i >= n || (keys = rz_host_alloc(priv(h), n * sizeof(*keys))) == NULL) {
		return NULL;
	}
	json_object_foreach((json_t *)CJ(obj), k, v)
	{
		keys[j++] = k;
	}
	qsort(keys, n, sizeof(*keys), key_cmp);
	return keys[i];
}

static const char *h_string_value(const rezus_host_t *h, const rezus_json_t *v)
{
	return json_string_value(CJ(v));
}

static int64_t h_integer_value(const rezus_host_t *h, const rezus_json_t *v)
{
	return (int64_t)json_integer_value(CJ(v));
}

static double h_real_value(const rezus_host_t *h, const rezus_json_t *v)
{
	return json_is_number(CJ(v)) ? json_number_value(CJ(v)) : 0;
}

static int h_bool_value(const rezus_host_t *h, const rezus_json_t *v)
{
	return json_is_true(CJ(v));
}

/* ------------------------------------------------------------------ config */

static const char *h_config_string(const rezus_host_t *h, const rezus_json_t *config,
                                   const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(CJ(config), key));

	return s ? s : def;
}

static int64_t h_config_int(const rezus_host_t *h, const rezus_json_t *config, const char *key,
                            int64_t def)
{
	json_t *v = json_object_get(CJ(config), key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

static int h_config_bool(const rezus_host_t *h, const rezus_json_t *config, const char *key,
                         int def)
{
	json_t *v = json_object_get(CJ(config), key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

/* ------------------------------------------------------------------ the table */

void rz_host_init(rezus_host_t *h, rz_host_priv_t *p, const char *name)
{
	memset(h, 0, sizeof(*h));
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	*h = (rezus_host_t){
		.struct_size = sizeof(rezus_host_t),
		.abi_major = REZUS_ABI_MAJOR,
		.abi_minor = REZUS_ABI_MINOR,
		.priv = p,
		.log = h_log,
		.error = h_error,
		.json_object = h_object,
		.json_array = h_array,
		.json_string = h_string,
		.json_integer = h_integer,
		.json_real = h_real,
		.json_bool = h_bool,
		.json_null = h_null,
		.json_parse = h_parse,
		.json_set = h_set,
		.json_append = h_append,
		.json_free = h_free,
		.json_type = h_type,
		.json_get = h_get,
		.json_path = h_path,
		.json_at = h_at,
		.json_size = h_size,
		.json_key_at = h_key_at,
		.json_string_value = h_string_value,
		.json_integer_value = h_integer_value,
		.json_real_value = h_real_value,
		.json_bool_value = h_bool_value,
		.config_string = h_config_string,
		.config_int = h_config_int,
		.config_bool = h_config_bool,
		.alloc = h_alloc,
		.strdup = h_strdup,
		.printf = h_printf,
		.tf_escape = h_tf_escape,
		.tf_name = h_tf_name,
	};
}
