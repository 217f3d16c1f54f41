/*
 * core/base/config.c - rezuscloud's configuration (SPEC §2): how it is read.
 *
 * The schema table (core/base/settings.c) describes every key: its type, where it lives
 * in rz_config_t, its default and its limits. Here the YAML loader, the environment, flags
 * (rz_config_set), the defaults and rz_config_validate() walk that table, and each kind of
 * value is parsed and set.
 */
/* Angle brackets: a quoted "config.h" would find core/base/config.h next to this file. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <yaml.h>

#include "core/base/config.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/yaml.h"

#define ARRAY_SIZE(a)   (sizeof(a) / sizeof((a)[0]))
#define ENV_PREFIX      "REZUSCLOUD_"
#define MAX_FILE_SIZE   (4u << 20)
#define PLUGIN_NAME_MAX 63
#define KEY_MAX         256
#define ORIGIN_MAX      256

struct plugin_list {
	rz_config_plugin_t *v;
	size_t n;
};

const char *rz__setting_string(const rz_config_t *cfg, const struct rz__setting *s)
{
	const char *const *field =
	    (const char *const *)(const void *)((const char *)cfg + s->offset);

	return *field != NULL ? *field : "";
}

/* ------------------------------------------------------------------ helpers */

static int oom(rz_err_t *err)
{
	return rz_err_set(err, -ENOMEM, "out of memory");
}

static void list_free(char **items)
{
	if (items == NULL) {
		return;
	}
	for (size_t i = 0; items[i] != NULL; i++) {
		free(items[i]);
	}
	free(items);
}

/* Append a copy of s[0..len) to a NULL-terminated list of n items. */
static int list_push(char ***items, size_t *n, const char *s, size_t len)
{
	char **grown = realloc(*items, (*n + 2) * sizeof(**items));
	char *copy;

	if (grown == NULL) {
		return -ENOMEM;
	}
	*items = grown;
	copy = strndup(s, len);
	if (copy == NULL) {
		return -ENOMEM;
	}
	grown[(*n)++] = copy;
	grown[*n] = NULL;
	return 0;
}

/* "a, b,,c" -> {"a", "b", "c", NULL}; "" -> {NULL}. */
static int list_from_text(const char *text, char ***out)
{
	char **items = calloc(1, sizeof(*items));
	size_t n = 0;

	if (items == NULL) {
		return -ENOMEM;
	}
	while (*text != '\0') {
		const char *end = strchr(text, ',');
		const char *next;

		if (end == NULL) {
			end = text + strlen(text);
		}
		next = *end == ',' ? end + 1 : end;
		while (text < end && isspace((unsigned char)*text)) {
			text++;
		}
		while (end > text && isspace((unsigned char)end[-1])) {
			end--;
		}
		if (end > text && list_push(&items, &n, text, (size_t)(end - text)) < 0) {
			list_free(items);
			return -ENOMEM;
		}
		text = next;
	}
	*out = items;
	return 0;
}

static void plugins_free(rz_config_plugin_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		json_decref(v[i].config);
		free(v[i].source);
	}
	free(v);
}

/* Takes ownership of config, also on failure. */
static int plugin_add(struct plugin_list *pl, const char *name, json_t *config, bool required,
                      const char *source)
{
	rz_config_plugin_t *grown = realloc(pl->v, (pl->n + 1) * sizeof(*pl->v));
	rz_config_plugin_t *p;

	if (grown == NULL) {
		json_decref(config);
		return -ENOMEM;
	}
	pl->v = grown;
	p = &grown[pl->n];
	p->name = strdup(name);
	p->config = config;
	p->required = required;
	p->source = strdup(source);
	pl->n++;
	if (p->name == NULL || p->source == NULL) {
		return -ENOMEM;
	}
	return 0;
}

static const rz_config_plugin_t *plugin_find(const struct plugin_list *pl, const char *name)
{
	for (size_t i = 0; i < pl->n; i++) {
		if (strcmp(pl->v[i].name, name) == 0) {
			return &pl->v[i];
		}
	}
	return NULL;
}

static int plugin_cmp(const void *a, const void *b)
{
	const rz_config_plugin_t *pa = a;
	const rz_config_plugin_t *pb = b;

	return strcmp(pa->name, pb->name);
}

/* Sort pl and make it cfg's plugin list, releasing the old one. pl is emptied. */
static void plugins_install(rz_config_t *cfg, struct plugin_list *pl)
{
	if (pl->n > 1) {
		qsort(pl->v, pl->n, sizeof(*pl->v), plugin_cmp);
	}
	plugins_free(cfg->plugins, cfg->n_plugins);
	cfg->plugins = pl->v;
	cfg->n_plugins = pl->n;
	pl->v = NULL;
	pl->n = 0;
}

static bool valid_plugin_name(const char *name, size_t len)
{
	if (len == 0 || len > PLUGIN_NAME_MAX || strlen(name) != len) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ parsers */

/* At least one decimal digit at *s; advances *s. -EINVAL without digits, -ERANGE on overflow. */
static int parse_digits(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t n = 0;
	int rc = 0;

	if (!isdigit((unsigned char)*p)) {
		return -EINVAL;
	}
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10) {
			rc = -ERANGE;
		}
		n = n * 10 + d;
	}
	*s = p;
	*out = n;
	return rc;
}

/* Decimal with an optional '-'. -EINVAL when not a number, -ERANGE when it does not fit. */
static int parse_int(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t n;
	int rc;

	if (neg) {
		s++;
	}
	rc = parse_digits(&s, &n);
	if (rc == -EINVAL || *s != '\0') {
		return -EINVAL;
	}
	if (rc < 0 || n > (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
		return -ERANGE;
	}
	*out = neg ? (int64_t)(0 - n) : (int64_t)n;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const struct {
		const char *word;
		bool value;
	} words[] = {
		{ "true", true },   { "yes", true }, { "on", true },
		{ "false", false }, { "no", false }, { "off", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		if (strcasecmp(s, words[i].word) == 0) {
			*out = words[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

struct unit {
	const char *suffix;
	uint64_t mult;
};

static const struct unit duration_units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 }, { "h", 3600 * 1000 }, { "d", 86400 * 1000 },
};

static const struct unit size_units[] = {
	{ "", 1 },
	{ "B", 1 },
	{ "K", 1ull << 10 },
	{ "KiB", 1ull << 10 },
	{ "KB", 1000ull },
	{ "M", 1ull << 20 },
	{ "MiB", 1ull << 20 },
	{ "MB", 1000ull * 1000 },
	{ "G", 1ull << 30 },
	{ "GiB", 1ull << 30 },
	{ "GB", 1000ull * 1000 * 1000 },
	{ "T", 1ull << 40 },
	{ "TiB", 1ull << 40 },
	{ "TB", 1000ull * 1000 * 1000 * 1000 },
};

/* The duration unit at *s, followed by a digit or the end; advances *s. 0 when none. */
static uint64_t duration_unit(const char **s)
{
	for (size_t i = 0; i < ARRAY_SIZE(duration_units); i++) {
		size_t len = strlen(duration_units[i].suffix);
		const char *rest = *s + len;

		if (strncmp(*s, duration_units[i].suffix, len) == 0 &&
		    (*rest == '\0' || isdigit((unsigned char)*rest))) {
			*s = rest;
			return duration_units[i].mult;
		}
	}
	return 0;
}

int rz_parse_duration(const char *s, int64_t *ms)
{
	uint64_t total = 0;

	if (s == NULL || *s == '\0') {
		return -EINVAL;
	}
	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	while (*s != '\0') {
		uint64_t n;
		uint64_t mult;

		if (parse_digits(&s, &n) < 0) {
			return -EINVAL;
		}
		mult = duration_unit(&s);
		if (mult == 0 || n > ((uint64_t)INT64_MAX - total) / mult) {
			return -EINVAL;
		}
		total += n * mult;
	}
	*ms = (int64_t)total;
	return 0;
}

int rz_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t n;

	if (s == NULL || parse_digits(&s, &n) < 0) {
		return -EINVAL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(size_units); i++) {
		if (strcmp(s, size_units[i].suffix) == 0) {
			if (n > UINT64_MAX / size_units[i].mult) {
				return -EINVAL;
			}
			*bytes = n * size_units[i].mult;
			return 0;
		}
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------ setters by kind */

static int set_string(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                      const char *origin, rz_err_t *err)
{
	char **field = FIELD(cfg, s, char *);
	char *copy;

	if (s->check != NULL) {
		int rc = s->check(s, value, origin, err);

		if (rc < 0) {
			return rc;
		}
	}
	copy = strdup(value);
	if (copy == NULL) {
		return oom(err);
	}
	free(*field);
	*field = copy;
	return 0;
}

static int set_int(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                   const char *origin, rz_err_t *err)
{
	int64_t n;
	int rc = parse_int(value, &n);

	if (rc == -EINVAL) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid value '%s': expected an integer", origin, s->key,
		                  value);
	}
	if (rc < 0 || n < s->min || n > s->max) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid value '%s': must be between %" PRId64
		                  " and %" PRId64,
		                  origin, s->key, value, s->min, s->max);
	}
	*FIELD(cfg, s, int) = (int)n;
	return 0;
}

static int set_bool(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                    const char *origin, rz_err_t *err)
{
	if (parse_bool(value, FIELD(cfg, s, bool)) < 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid boolean '%s' (use true or false)", origin,
		                  s->key, value);
	}
	return 0;
}

static int not_zero(const struct rz__setting *s, const char *value, const char *origin,
                    rz_err_t *err)
{
	return rz_err_set(err, REZUS_ECONFIG,
	                  "%s: %s: invalid value '%s': must be greater than zero", origin, s->key,
	                  value);
}

static int set_duration(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                        const char *origin, rz_err_t *err)
{
	int64_t ms;

	if (rz_parse_duration(value, &ms) < 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid duration '%s' (use e.g. 5s, 30m, 24h)", origin,
		                  s->key, value);
	}
	if (ms == 0 && (s->flags & F_NONZERO)) {
		return not_zero(s, value, origin, err);
	}
	*FIELD(cfg, s, int64_t) = ms;
	return 0;
}

static int set_size(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                    const char *origin, rz_err_t *err)
{
	uint64_t bytes;

	if (rz_parse_size(value, &bytes) < 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid size '%s' (use e.g. 512KiB, 16MiB)", origin,
		                  s->key, value);
	}
	if (bytes == 0 && (s->flags & F_NONZERO)) {
		return not_zero(s, value, origin, err);
	}
	*FIELD(cfg, s, uint64_t) = bytes;
	return 0;
}

/* Takes ownership of items. */
static void list_install(rz_config_t *cfg, const struct rz__setting *s, char **items)
{
	char ***field = FIELD(cfg, s, char **);

	list_free(*field);
	*field = items;
}

static int set_list(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                    const char *origin, rz_err_t *err)
{
	char **items;

	if (list_from_text(value, &items) < 0) {
		return oom(err);
	}
	list_install(cfg, s, items);
	return 0;
}

static const struct kind_ops {
	const char *what; /* "expected ..., got ..." */
	set_fn set;       /* NULL: not settable from text */
} kinds[] = {
	[K_SECTION] = { "a mapping", NULL },
	[K_PLUGINS] = { "a mapping", NULL },
	[K_STRING] = { "a string", set_string },
	[K_INT] = { "an integer", set_int },
	[K_BOOL] = { "a boolean", set_bool },
	[K_DURATION] = { "a duration such as 5s, 30m, 24h", set_duration },
	[K_SIZE] = { "a size such as 16MiB", set_size },
	[K_LIST] = { "a list of strings", set_list },
};

static const struct rz__setting *setting_find(const char *key)
{
	for (size_t i = 0; i < rz__settings_n; i++) {
		if (strcmp(rz__settings[i].key, key) == 0) {
			return &rz__settings[i];
		}
	}
	return NULL;
}

static int setting_apply(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                         const char *origin, rz_err_t *err)
{
	return kinds[s->kind].set(cfg, s, value, origin, err);
}

/* ------------------------------------------------------------------ YAML events */

struct loader {
	rz_yaml_t y; /* the source, its name, and where errors go */
	rz_config_t *cfg;
	bool seen[RZ__SETTINGS_MAX];
};

/* `required:` at the top of a plugin's section. */
struct required {
	bool value;
	bool seen;
};

static int line_of(const yaml_event_t *ev)
{
	return rz_yaml_line(ev);
}

static const char *got(const yaml_event_t *ev)
{
	return rz_yaml_got(ev);
}

static const char *scalar_text(const yaml_event_t *ev)
{
	return rz_yaml_text(ev);
}

static bool is_null(const yaml_event_t *ev)
{
	return rz_yaml_is_null(ev);
}

static int next_event(struct loader *l, yaml_event_t *ev)
{
	return rz_yaml_next(&l->y, ev);
}

static int bad_type(struct loader *l, int line, const char *key, const char *what,
                    const yaml_event_t *val)
{
	return rz_err_set(l->y.err, REZUS_ECONFIG, "%s:%d: %s: expected %s, got %s", l->y.name,
	                  line, key, what, got(val));
}

static int bad_key(struct loader *l, const yaml_event_t *key)
{
	return rz_err_set(l->y.err, REZUS_ECONFIG, "%s:%d: expected a string as key, got %s",
	                  l->y.name, line_of(key), got(key));
}

static int duplicate(struct loader *l, int line, const char *key)
{
	return rz_err_set(l->y.err, REZUS_ECONFIG, "%s:%d: duplicate key '%s'", l->y.name, line,
	                  key);
}

/* Join prefix and key as "prefix.key" (or "key" at the top). */
static void join_key(char *buf, size_t size, const char *prefix, const char *key)
{
	if (snprintf(buf, size, "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", key) < 0) {
		buf[0] = '\0';
	}
}

/* ------------------------------------------------------------------ plugin subtrees as JSON */

static int load_required(struct loader *l, const char *path, int line, const yaml_event_t *val,
                         struct required *req)
{
	if (val->type != YAML_SCALAR_EVENT) {
		return bad_type(l, line, path, "a boolean", val);
	}
	if (parse_bool(scalar_text(val), &req->value) < 0) {
		return rz_err_set(l->y.err, REZUS_ECONFIG,
		                  "%s:%d: %s: invalid boolean '%s' (use true or false)", l->y.name,
		                  line, path, scalar_text(val));
	}
	req->seen = true;
	return 0;
}

/* A plugin's section: its settings as JSON (core/base/yaml.c), and `required:` at its top. */
static int plugin_section(struct loader *l, const char *path, struct required *req, json_t **out)
{
	json_t *obj = json_object();
	yaml_event_t key, val;
	int rc = obj != NULL ? 0 : oom(l->y.err);

	l->y.depth++; /* the section counts as the first level of nesting */
	while (rc == 0 && (rc = next_event(l, &key)) == 0) {
		char child[KEY_MAX];
		const char *k;
		json_t *v = NULL;
		int line = line_of(&key);

		if (key.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&key);
			break;
		}
		if (key.type != YAML_SCALAR_EVENT) {
			rc = bad_key(l, &key);
			yaml_event_delete(&key);
			break;
		}
		k = scalar_text(&key);
		join_key(child, sizeof(child), path, k);
		if (json_object_get(obj, k) != NULL || (strcmp(k, "required") == 0 && req->seen)) {
			rc = duplicate(l, line, child);
		} else if ((rc = next_event(l, &val)) == 0) {
			if (strcmp(k, "required") == 0) {
				rc = load_required(l, child, line, &val, req);
			} else if ((rc = rz_yaml_node(&l->y, child, &val, &v)) == 0 &&
			           json_object_set_new(obj, k, v) < 0) {
				rc = oom(l->y.err);
			}
			yaml_event_delete(&val);
		}
		yaml_event_delete(&key);
	}
	l->y.depth--;
	if (rc == 0) {
		*out = obj;
		obj = NULL;
	}
	json_decref(obj);
	return rc;
}

/* ------------------------------------------------------------------ plugins: */

static int load_plugin(struct loader *l, struct plugin_list *pl, const yaml_event_t *key)
{
	char path[KEY_MAX];
	char source[ORIGIN_MAX];
	struct required req = { .value = true, .seen = false };
	const char *name;
	int line = line_of(key);
	json_t *config = NULL;
	yaml_event_t val;
	int rc;

	if (key->type != YAML_SCALAR_EVENT) {
		return bad_key(l, key);
	}
	name = scalar_text(key);
	if (!valid_plugin_name(name, key->data.scalar.length)) {
		return rz_err_set(l->y.err, REZUS_ECONFIG,
		                  "%s:%d: plugins: invalid plugin name '%s' (use 1 to %d of a-z, "
		                  "0-9, _ and -)",
		                  l->y.name, line, name, PLUGIN_NAME_MAX);
	}
	join_key(path, sizeof(path), "plugins", name);
	if (plugin_find(pl, name) != NULL) {
		return duplicate(l, line, path);
	}
	rc = next_event(l, &val);
	if (rc < 0) {
		return rc;
	}
	if (val.type == YAML_MAPPING_START_EVENT) {
		rc = plugin_section(l, path, &req, &config);
	} else if (is_null(&val)) {
		config = json_object();
		rc = config != NULL ? 0 : oom(l->y.err);
	} else {
		rc = bad_type(l, line, path, "a mapping", &val);
	}
	yaml_event_delete(&val);
	if (rc < 0) {
		return rc;
	}
	snprintf(source, sizeof(source), "%s:%d", l->y.name, line);
	if (plugin_add(pl, name, config, req.value, source) < 0) {
		return oom(l->y.err);
	}
	return 0;
}

static int load_plugin_map(struct loader *l, struct plugin_list *pl)
{
	yaml_event_t key;
	int rc;

	for (;;) {
		rc = next_event(l, &key);
		if (rc < 0) {
			return rc;
		}
		if (key.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&key);
			return 0;
		}
		rc = load_plugin(l, pl, &key);
		yaml_event_delete(&key);
		if (rc < 0) {
			return rc;
		}
	}
}

/* A file with plugins: replaces the whole list. */
static int load_plugins(struct loader *l, const struct rz__setting *s, int line,
                        const yaml_event_t *val)
{
	struct plugin_list pl = { NULL, 0 };

	if (val->type == YAML_MAPPING_START_EVENT) {
		int rc = load_plugin_map(l, &pl);

		if (rc < 0) {
			plugins_free(pl.v, pl.n);
			return rc;
		}
	} else if (!is_null(val)) {
		return bad_type(l, line, s->key, kinds[s->kind].what, val);
	}
	plugins_install(l->cfg, &pl);
	return 0;
}

/* ------------------------------------------------------------------ settings from YAML */

static int load_mapping(struct loader *l, const char *prefix);

static int load_text(struct loader *l, const struct rz__setting *s, int line, const char *text)
{
	char origin[ORIGIN_MAX];

	snprintf(origin, sizeof(origin), "%s:%d", l->y.name, line);
	return setting_apply(l->cfg, s, text, origin, l->y.err);
}

static int load_scalar(struct loader *l, const struct rz__setting *s, int line,
                       const yaml_event_t *val)
{
	const char *text = scalar_text(val);

	if (strlen(text) != val->data.scalar.length) {
		return rz_err_set(l->y.err, REZUS_ECONFIG,
		                  "%s:%d: %s: invalid value: contains a NUL", l->y.name, line,
		                  s->key);
	}
	return load_text(l, s, line, is_null(val) ? "" : text);
}

static int load_list(struct loader *l, const struct rz__setting *s)
{
	char **items = calloc(1, sizeof(*items));
	size_t n = 0;
	yaml_event_t ev;
	int rc = 0;

	if (items == NULL) {
		return oom(l->y.err);
	}
	for (;;) {
		rc = next_event(l, &ev);
		if (rc < 0) {
			goto out;
		}
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			rc = bad_type(l, line_of(&ev), s->key, kinds[s->kind].what, &ev);
		} else {
			const char *item = is_null(&ev) ? "" : scalar_text(&ev);

			if (list_push(&items, &n, item, strlen(item)) < 0) {
				rc = oom(l->y.err);
			}
		}
		yaml_event_delete(&ev);
		if (rc < 0) {
			goto out;
		}
	}
	list_install(l->cfg, s, items);
	items = NULL;
out:
	list_free(items);
	return rc;
}

static int load_value(struct loader *l, const struct rz__setting *s, int line,
                      const yaml_event_t *val)
{
	switch (s->kind) {
	case K_PLUGINS:
		return load_plugins(l, s, line, val);
	case K_SECTION:
		if (val->type == YAML_MAPPING_START_EVENT) {
			return load_mapping(l, s->key);
		}
		if (is_null(val)) {
			return 0;
		}
		break;
	case K_LIST:
		if (val->type == YAML_SEQUENCE_START_EVENT) {
			return load_list(l, s);
		}
		if (is_null(val)) {
			return load_text(l, s, line, "");
		}
		break;
	default:
		if (val->type == YAML_SCALAR_EVENT) {
			return load_scalar(l, s, line, val);
		}
		break;
	}
	return bad_type(l, line, s->key, kinds[s->kind].what, val);
}

static int load_entry(struct loader *l, const char *prefix, const yaml_event_t *key)
{
	char path[KEY_MAX];
	const struct rz__setting *s;
	int line = line_of(key);
	yaml_event_t val;
	int rc;

	if (key->type != YAML_SCALAR_EVENT) {
		return bad_key(l, key);
	}
	join_key(path, sizeof(path), prefix, scalar_text(key));
	s = strchr(scalar_text(key), '.') == NULL ? setting_find(path) : NULL;
	if (s == NULL) {
		return rz_err_set(l->y.err, REZUS_ECONFIG, "%s:%d: unknown key '%s'", l->y.name,
		                  line, path);
	}
	if (l->seen[s - rz__settings]) {
		return duplicate(l, line, path);
	}
	l->seen[s - rz__settings] = true;
	rc = next_event(l, &val);
	if (rc < 0) {
		return rc;
	}
	rc = load_value(l, s, line, &val);
	yaml_event_delete(&val);
	return rc;
}

static int load_mapping(struct loader *l, const char *prefix)
{
	yaml_event_t key;
	int rc;

	for (;;) {
		rc = next_event(l, &key);
		if (rc < 0) {
			return rc;
		}
		if (key.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&key);
			return 0;
		}
		rc = load_entry(l, prefix, &key);
		yaml_event_delete(&key);
		if (rc < 0) {
			return rc;
		}
	}
}

static int load_root(struct loader *l, const yaml_event_t *ev)
{
	if (ev->type == YAML_MAPPING_START_EVENT) {
		return load_mapping(l, "");
	}
	if (is_null(ev)) {
		return 0;
	}
	return rz_err_set(l->y.err, REZUS_ECONFIG,
	                  "%s:%d: expected a mapping at the top level, got %s", l->y.name,
	                  line_of(ev), got(ev));
}

static int load_stream(struct loader *l)
{
	yaml_event_t ev;
	int docs = 0;
	int rc = 0;

	while (rc == 0) {
		rc = next_event(l, &ev);
		if (rc < 0) {
			break;
		}
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && docs++ > 0) {
			rc = rz_err_set(l->y.err, REZUS_ECONFIG,
			                "%s:%d: more than one YAML document (remove the '---')",
			                l->y.name, line_of(&ev));
		} else if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		           ev.type == YAML_MAPPING_START_EVENT) {
			rc = load_root(l, &ev);
		}
		yaml_event_delete(&ev);
	}
	return rc;
}

/* ------------------------------------------------------------------ public */

int rz_config_defaults(rz_config_t *cfg)
{
	rz_err_t err;

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < rz__settings_n; i++) {
		const struct rz__setting *s = &rz__settings[i];
		int rc;

		if (kinds[s->kind].set == NULL) {
			continue;
		}
		rc = setting_apply(cfg, s, s->def, "default", &err);
		if (rc < 0) {
			rz_config_free(cfg);
			return rc;
		}
	}
	return 0;
}

int rz_config_embedded(rz_config_t *cfg)
{
	static const struct {
		const char *key;
		const char *value;
	} overrides[] = {
		{ "server.data_dir", "./rezus-data" },
		{ "plugin_dir", RZ_BUILD_PLUGIN_DIR },
	};
	struct plugin_list pl = { NULL, 0 };
	json_t *config;
	rz_err_t err;
	int rc;

	for (size_t i = 0; i < ARRAY_SIZE(overrides); i++) {
		rc = rz_config_set(cfg, overrides[i].key, overrides[i].value, "default", &err);
		if (rc < 0) {
			return rc;
		}
	}
	config = json_object();
	if (config == NULL || plugin_add(&pl, "sim", config, false, "default") < 0) {
		plugins_free(pl.v, pl.n);
		return -ENOMEM;
	}
	plugins_install(cfg, &pl);
	free(cfg->source);
	cfg->source = NULL;
	return 0;
}

static int read_file(const char *path, char **data, size_t *len, rz_err_t *err)
{
	char *buf = NULL;
	size_t n = 0;
	size_t cap = 0;
	int rc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		rc = -errno;
		return rz_err_set(err, rc, "%s: cannot read: %s", path, strerror(-rc));
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			size_t want = cap != 0 ? cap * 2 : 8192;
			char *grown = want <= MAX_FILE_SIZE ? realloc(buf, want) : NULL;

			if (grown == NULL) {
				rc = want <= MAX_FILE_SIZE ? -ENOMEM : -EFBIG;
				rz_err_set(err, rc, "%s: cannot read: %s", path, strerror(-rc));
				goto out;
			}
			buf = grown;
			cap = want;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			rc = -errno;
			rz_err_set(err, rc, "%s: cannot read: %s", path, strerror(-rc));
			goto out;
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
	}
	*data = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

int rz_config_load_file(rz_config_t *cfg, const char *path, rz_err_t *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = read_file(path, &data, &len, err);

	if (rc < 0) {
		return rc;
	}
	rc = rz_config_load_string(cfg, path, data, len, err);
	free(data);
	return rc;
}

int rz_config_load_string(rz_config_t *cfg, const char *name, const char *data, size_t len,
                          rz_err_t *err)
{
	struct loader l;
	char *source;
	int rc;

	if (name == NULL) {
		name = "(config)";
	}
	source = strdup(name);
	memset(&l, 0, sizeof(l));
	if (source == NULL ||
	    rz_yaml_init(&l.y, name, data, data != NULL ? len : 0, REZUS_ECONFIG, err) < 0) {
		free(source);
		return oom(err);
	}
	l.cfg = cfg;
	rc = load_stream(&l);
	rz_yaml_fini(&l.y);
	if (rc == 0) {
		free(cfg->source);
		cfg->source = source;
		source = NULL;
	}
	free(source);
	return rc;
}

static const char *const env_ignored[] = {
	"REZUSCLOUD_CONFIG",
	"REZUSCLOUD_ADMIN_PASSWORD",
	"REZUSCLOUD_SERVER",
	"REZUSCLOUD_TOKEN",
};

static bool env_name_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(name, want, len) == 0;
}

/* The original RezusCloud's variables, and what takes their place here (docs/migration.md). */
static const struct {
	const char *name, *instead;
} env_renamed[] = {
	{ "REZUSCLOUD_JWT_SECRET",
	  "auth.jwt_secret_file (REZUSCLOUD_AUTH_JWT_SECRET_FILE): a file holding the secret; "
	  "made when missing" },
	{ "REZUSCLOUD_STATE_PASSPHRASE",
	  "the state key is a file (data_dir/state.key, made when missing), not a passphrase; "
	  "backups seal it with backup.passphrase_file (REZUSCLOUD_BACKUP_PASSPHRASE_FILE)" },
	{ "REZUSCLOUD_MODE",
	  "there are no modes: the embedded default needs no configuration, and a remote "
	  "runner is its own command (rezuscloud runner)" },
};

/* REZUSCLOUD_ + the key upper-cased with '.' as '_'. */
static bool env_name_of(const char *name, size_t len, const char *key)
{
	size_t plen = strlen(ENV_PREFIX);
	size_t klen = strlen(key);

	if (len != plen + klen || memcmp(name, ENV_PREFIX, plen) != 0) {
		return false;
	}
	for (size_t i = 0; i < klen; i++) {
		char want = key[i] == '.' ? '_' : (char)toupper((unsigned char)key[i]);

		if (name[plen + i] != want) {
			return false;
		}
	}
	return true;
}

static const struct rz__setting *env_setting(const char *name, size_t len, bool *alias)
{
	for (size_t i = 0; i < rz__settings_n; i++) {
		const struct rz__setting *s = &rz__settings[i];

		if (kinds[s->kind].set == NULL) {
			continue;
		}
		if (s->env_alias != NULL && env_name_is(name, len, s->env_alias)) {
			*alias = true;
			return s;
		}
		if (env_name_of(name, len, s->key)) {
			*alias = false;
			return s;
		}
	}
	return NULL;
}

/* One NAME=VALUE; applies it when its kind (alias or not) matches the pass. */
static int env_apply(rz_config_t *cfg, const char *entry, bool aliases, rz_err_t *err)
{
	char origin[ORIGIN_MAX];
	const char *eq = strchr(entry, '=');
	const struct rz__setting *s;
	bool alias = false;
	int len;

	if (eq == NULL || strncmp(entry, ENV_PREFIX, strlen(ENV_PREFIX)) != 0) {
		return 0;
	}
	len = (int)(eq - entry);
	for (size_t i = 0; i < ARRAY_SIZE(env_ignored); i++) {
		if (env_name_is(entry, (size_t)len, env_ignored[i])) {
			return 0;
		}
	}
	s = env_setting(entry, (size_t)len, &alias);
	for (size_t i = 0; s == NULL && i < ARRAY_SIZE(env_renamed); i++) {
		if (env_name_is(entry, (size_t)len, env_renamed[i].name)) {
			return rz_err_set(err, REZUS_ECONFIG,
			                  "environment %s: not a setting of this RezusCloud: %s "
			                  "(docs/migration.md)",
			                  env_renamed[i].name, env_renamed[i].instead);
		}
	}
	if (s == NULL) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "environment %.*s: unknown setting (see rezus.conf(5))", len,
		                  entry);
	}
	if (alias != aliases) {
		return 0;
	}
	snprintf(origin, sizeof(origin), "environment %.*s", len, entry);
	return setting_apply(cfg, s, eq + 1, origin, err);
}

int rz_config_apply_env(rz_config_t *cfg, char *const *envp, rz_err_t *err)
{
	static const bool passes[] = { true, false };

	if (envp == NULL) {
		return 0;
	}
	for (size_t p = 0; p < ARRAY_SIZE(passes); p++) {
		for (size_t i = 0; envp[i] != NULL; i++) {
			int rc = env_apply(cfg, envp[i], passes[p], err);

			if (rc < 0) {
				return rc;
			}
		}
	}
	return 0;
}

int rz_config_set(rz_config_t *cfg, const char *key, const char *value, const char *origin,
                  rz_err_t *err)
{
	const struct rz__setting *s = key != NULL ? setting_find(key) : NULL;

	if (origin == NULL) {
		origin = "command line";
	}
	if (s == NULL || kinds[s->kind].set == NULL) {
		return rz_err_set(err, REZUS_ECONFIG, "%s: unknown key '%s'", origin,
		                  key != NULL ? key : "");
	}
	return setting_apply(cfg, s, value != NULL ? value : "", origin, err);
}

int rz_config_validate(const rz_config_t *cfg, rz_err_t *err)
{
	for (size_t i = 0; i < rz__settings_n; i++) {
		const struct rz__setting *s = &rz__settings[i];

		if ((s->flags & F_NONEMPTY) && rz__setting_string(cfg, s)[0] == '\0') {
			return rz_err_set(err, REZUS_ECONFIG, "%s: must not be empty", s->key);
		}
		if (s->verify != NULL) {
			int rc = s->verify(s, cfg, err);

			if (rc < 0) {
				return rc;
			}
		}
	}
	return 0;
}

void rz_config_free(rz_config_t *cfg)
{
	if (cfg == NULL) {
		return;
	}
	for (size_t i = 0; i < rz__settings_n; i++) {
		const struct rz__setting *s = &rz__settings[i];

		if (s->kind == K_STRING) {
			free(*FIELD(cfg, s, char *));
		} else if (s->kind == K_LIST) {
			list_free(*FIELD(cfg, s, char **));
		}
	}
	free(cfg->source);
	plugins_free(cfg->plugins, cfg->n_plugins);
	memset(cfg, 0, sizeof(*cfg));
}

static int plugin_name_cmp(const void *key, const void *elem)
{
	const rz_config_plugin_t *p = elem;

	return strcmp(key, p->name);
}

const rz_config_plugin_t *rz_config_plugin(const rz_config_t *cfg, const char *name)
{
	if (cfg->n_plugins == 0 || name == NULL) {
		return NULL;
	}
	return bsearch(name, cfg->plugins, cfg->n_plugins, sizeof(*cfg->plugins), plugin_name_cmp);
}
