/* plugins/kit/kit.c - helpers the in-tree plugins share (see kit.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit.h"

/* ------------------------------------------------------------------ building */

void kit_str(const rezus_host_t *h, rezus_json_t *obj, const char *key, const char *v)
{
	if (v != NULL) {
		h->json_set(h, obj, key, h->json_string(h, v));
	}
}

void kit_int(const rezus_host_t *h, rezus_json_t *obj, const char *key, int64_t v)
{
	h->json_set(h, obj, key, h->json_integer(h, v));
}

void kit_bool(const rezus_host_t *h, rezus_json_t *obj, const char *key, bool v)
{
	h->json_set(h, obj, key, h->json_bool(h, v));
}

rezus_json_t *kit_child(const rezus_host_t *h, rezus_json_t *obj, const char *key)
{
	const rezus_json_t *c = h->json_get(h, obj, key);

	if (c == NULL) {
		h->json_set(h, obj, key, h->json_object(h));
		c = h->json_get(h, obj, key);
	}
	return (rezus_json_t *)c;
}

void kit_resource(const rezus_host_t *h, rezus_json_t *out, const char *type, const char *name,
                  rezus_json_t *body)
{
	h->json_set(h, kit_child(h, kit_child(h, out, "resource"), type), name, body);
}

void kit_data(const rezus_host_t *h, rezus_json_t *out, const char *type, const char *name,
              rezus_json_t *body)
{
	h->json_set(h, kit_child(h, kit_child(h, out, "data"), type), name, body);
}

void kit_provider(const rezus_host_t *h, rezus_json_t *out, const char *name, const char *source,
                  const char *version)
{
	rezus_json_t *p = h->json_object(h);

	kit_str(h, p, "source", source);
	kit_str(h, p, "version", version);
	h->json_set(h, kit_child(h, out, "required_providers"), name, p);
}

rezus_json_t *kit_strings(const rezus_host_t *h, const char *const *items, size_t n)
{
	rezus_json_t *a = h->json_array(h);

	for (size_t i = 0; i < n; i++) {
		h->json_append(h, a, h->json_string(h, items[i]));
	}
	return a;
}

char *kit_quote(const rezus_host_t *h, const char *s)
{
	size_t n = 3;
	char *out, *o;

	for (const char *p = s; *p != '\0'; p++) {
		n += (unsigned char)*p < 0x20 ? 6 : (*p == '"' || *p == '\\') ? 2 : 1;
	}
	if ((out = h->alloc(h, n)) == NULL) {
		return NULL;
	}
	o = out;
	*o++ = '"';
	for (const char *p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c < 0x20) {
			o += snprintf(o, 7, "\\u%04x", c);
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

/* ------------------------------------------------------------------ reading */

const char *kit_get_str(const rezus_host_t *h, const rezus_json_t *v, const char *path,
                        const char *def)
{
	const char *s = h->json_string_value(h, h->json_path(h, v, path));

	return s != NULL ? s : def;
}

int64_t kit_get_int(const rezus_host_t *h, const rezus_json_t *v, const char *path, int64_t def)
{
	const rezus_json_t *x = h->json_path(h, v, path);

	return h->json_type(h, x) == REZUS_JSON_INTEGER ? h->json_integer_value(h, x) : def;
}

bool kit_get_bool(const rezus_host_t *h, const rezus_json_t *v, const char *path, bool def)
{
	const rezus_json_t *x = h->json_path(h, v, path);

	return h->json_type(h, x) == REZUS_JSON_BOOL ? h->json_bool_value(h, x) != 0 : def;
}

const char *kit_class(const rezus_host_t *h, const rezus_json_t *ng)
{
	const char *cls = kit_get_str(h, ng, "spec.providerClass", NULL);
	const char *colon = cls ? strchr(cls, ':') : NULL;

	return colon != NULL && colon[1] != '\0' ? colon + 1 : NULL;
}

const char *kit_import(const rezus_host_t *h, const rezus_json_t *ctx, const char *plugin,
                       const char *name)
{
	const rezus_json_t *imports = h->json_get(h, ctx, "imports");
	const char *key = h->printf(h, "%s.%s", plugin ? plugin : "", name);

	return key ? h->json_string_value(h, h->json_get(h, imports, key)) : NULL;
}

bool kit_exports_only(const rezus_host_t *h, const rezus_json_t *ctx)
{
	return kit_get_bool(h, ctx, "exportsOnly", false);
}

/* ------------------------------------------------------------------ plugin life */

int kit_plain_init(const rezus_host_t *h, const rezus_json_t *config, void **state,
                   rezus_err_t *err)
{
	kit_plain_t *p = calloc(1, sizeof(*p));

	(void)config;
	if (p == NULL) {
		return h->error(h, err, REZUS_EINTERNAL, "out of memory");
	}
	p->h = h;
	*state = p;
	return 0;
}

void kit_plain_fini(void *state)
{
	free(state);
}

int kit_no_settings(const rezus_host_t *h, const rezus_json_t *config, const char *plugin,
                    rezus_err_t *err)
{
	if (h->json_size(h, config) > 0) {
		return h->error(h, err, REZUS_ECONFIG,
		                "plugins.%s.%s: unknown key (%s has no settings)", plugin,
		                h->json_key_at(h, config, 0), plugin);
	}
	return 0;
}

/* ------------------------------------------------------------------ exports */

bool kit_is_controlplane(const rezus_host_t *h, const rezus_json_t *ng)
{
	return strcmp(kit_get_str(h, ng, "spec.role", ""), "controlplane") == 0 &&
	       kit_get_int(h, ng, "spec.count", 1) > 0;
}

void kit_controlplane_exports(const rezus_host_t *h, const rezus_json_t *ctx, rezus_json_t *out,
                              const char *(*addresses)(const rezus_host_t *h,
                                                       const rezus_json_t *ng, const char *tf),
                              const char *(*endpoint)(const rezus_host_t *h, const rezus_json_t *ng,
                                                      const char *tf))
{
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");
	rezus_json_t *exports = kit_child(h, out, "exports");
	const char *all = "", *first = NULL;
	size_t n = 0;

	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		const rezus_json_t *ng = h->json_at(h, groups, i);
		const char *tf = h->tf_name(h, kit_get_str(h, ng, "metadata.name", ""));

		if (!kit_is_controlplane(h, ng)) {
			continue;
		}
		all = h->printf(h, "%s%s%s", all, n++ ? ", " : "", addresses(h, ng, tf));
		if (first == NULL && endpoint != NULL) {
			first = endpoint(h, ng, tf);
		}
	}
	if (n > 0) {
		kit_str(h, exports, "controlplane_addresses",
		        n == 1 ? all : h->printf(h, "concat(%s)", all));
	}
	kit_str(h, exports, "controlplane_endpoint", first);
}

/* ------------------------------------------------------------------ validating */

void kit_cause(const rezus_host_t *h, rezus_json_t *causes, const char *field, const char *reason,
               const char *fmt, ...)
{
	rezus_json_t *c = h->json_object(h);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kit_str(h, c, "field", field);
	kit_str(h, c, "reason", reason);
	kit_str(h, c, "message", msg);
	h->json_append(h, causes, c);
}

void kit_known_keys(const rezus_host_t *h, const rezus_json_t *pc, const char *const *known,
                    rezus_json_t *causes)
{
	for (size_t i = 0; i < h->json_size(h, pc); i++) {
		const char *key = h->json_key_at(h, pc, i);
		size_t k = 0;
		while (known[k] != NULL && strcmp(known[k], key) != 0) {
			k++;
		}
		if (known[k] == NULL) {
			kit_cause(h, causes, key, "FieldValueNotSupported", "unknown field");
		}
	}
}

const char *kit_want_str(const rezus_host_t *h, const rezus_json_t *pc, const char *key,
                         bool required, bool (*ok)(const char *s, char *why, size_t size),
                         rezus_json_t *causes)
{
	const rezus_json_t *v = h->json_get(h, pc, key);
	const char *s = h->json_string_value(h, v);
	char why[256] = "";

	if (v == NULL) {
		if (required) {
			kit_cause(h, causes, key, "FieldValueRequired", "required");
		}
		return NULL;
	}
	if (s == NULL || s[0] == '\0') {
		kit_cause(h, causes, key, "FieldValueInvalid", "must be a non-empty string");
		return NULL;
	}
	if (ok != NULL && !ok(s, why, sizeof(why))) {
		kit_cause(h, causes, key, "FieldValueInvalid", "%s", why);
		return NULL;
	}
	return s;
}

int64_t kit_want_int(const rezus_host_t *h, const rezus_json_t *pc, const char *key, int64_t min,
                     int64_t max, int64_t def, rezus_json_t *causes)
{
	const rezus_json_t *v = h->json_get(h, pc, key);
	int64_t n;

	if (v == NULL) {
		return def;
	}
	n = h->json_integer_value(h, v);
	if (h->json_type(h, v) != REZUS_JSON_INTEGER || n < min || n > max) {
		kit_cause(h, causes, key, "FieldValueInvalid",
		          "must be an integer from %lld to %lld", (long long)min, (long long)max);
		return def;
	}
	return n;
}

bool kit_want_bool(const rezus_host_t *h, const rezus_json_t *pc, const char *key, bool def,
                   rezus_json_t *causes)
{
	const rezus_json_t *v = h->json_get(h, pc, key);

	if (v == NULL) {
		return def;
	}
	if (h->json_type(h, v) != REZUS_JSON_BOOL) {
		kit_cause(h, causes, key, "FieldValueInvalid", "must be true or false");
		return def;
	}
	return h->json_bool_value(h, v) != 0;
}

size_t kit_want_strs(const rezus_host_t *h, const rezus_json_t *pc, const char *key,
                     bool (*ok)(const char *s, char *why, size_t size), rezus_json_t *causes)
{
	const rezus_json_t *v = h->json_get(h, pc, key);
	size_t n = h->json_size(h, v), bad = 0;

	if (v == NULL) {
		return 0;
	}
	if (h->json_type(h, v) != REZUS_JSON_ARRAY) {
		kit_cause(h, causes, key, "FieldValueInvalid", "must be a list of strings");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = h->json_string_value(h, h->json_at(h, v, i));
		char why[256] = "must be a non-empty string";
		if (s == NULL || s[0] == '\0' || (ok != NULL && !ok(s, why, sizeof(why)))) {
			kit_cause(h, causes, h->printf(h, "%s[%zu]", key, i), "FieldValueInvalid",
			          "%s", why);
			bad++;
		}
	}
	return bad ? 0 : n;
}

bool kit_ipv4(const char *s, char *why, size_t size)
{
	unsigned a, b, c, d;
	char tail;

	if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a < 256 && b < 256 &&
	    c < 256 && d < 256 && isdigit((unsigned char)s[0])) {
		return true;
	}
	snprintf(why, size, "'%s' is not an IPv4 address", s);
	return false;
}

bool kit_cidr4(const char *s, char *why, size_t size)
{
	unsigned a, b, c, d, bits;
	char tail;

	if (sscanf(s, "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &bits, &tail) == 5 && a < 256 &&
	    b < 256 && c < 256 && d < 256 && bits <= 32 && isdigit((unsigned char)s[0])) {
		return true;
	}
	snprintf(why, size, "'%s' is not an IPv4 CIDR such as 10.0.0.0/24", s);
	return false;
}

bool kit_uuid(const char *s, char *why, size_t size)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	const char *p = s;

	for (size_t g = 0; g < 5; g++) {
		for (int i = 0; i < groups[g]; i++, p++) {
			if (!isxdigit((unsigned char)*p)) {
				goto bad;
			}
		}
		if (g < 4 && *p++ != '-') {
			goto bad;
		}
	}
	if (*p == '\0') {
		return true;
	}
bad:
	snprintf(why, size, "'%s' is not a UUID", s);
	return false;
}

/* ocid1.<type>.<realm>.[region][.future].<unique>: at least five dot-separated parts, the
 * type as asked, no spaces or quotes. */
bool kit_ocid(const char *s, const char *type, char *why, size_t size)
{
	size_t tl = strlen(type), dots = 0;

	for (const char *p = s; *p != '\0'; p++) {
		dots += *p == '.';
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_') {
			dots = 0;
			break;
		}
	}
	if (strncmp(s, type, tl) == 0 && dots >= 4 && s[strlen(s) - 1] != '.') {
		return true;
	}
	snprintf(why, size, "'%s' is not an OCID of the form %s<realm>.<region>.<id>", s, type);
	return false;
}
