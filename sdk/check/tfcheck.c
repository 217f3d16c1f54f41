/* sdk/check/tfcheck.c - static checks of composed TF JSON (PROTOCOLS.md §3). */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sdk/check/tfcheck.h"

static const char *const roots[] = { "terraform", "provider", "variable", "locals", "data",
	                             "resource",  "output",   "module",   "moved" };

/* Words that may start a reference without being declared anywhere. */
static const char *const builtin[] = { "count", "each",  "self",  "path",  "terraform",
	                               "true",  "false", "null",  "for",   "in",
	                               "if",    "else",  "endif", "endfor" };

static void problem(struct tfcheck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct tfcheck *c, const char *fmt, ...)
{
	va_list ap;

	if (c->n < TFCHECK_MAX) {
		va_start(ap, fmt);
		vsnprintf(c->problems[c->n], sizeof(c->problems[0]), fmt, ap);
		va_end(ap);
	}
	c->n++;
}

/* ------------------------------------------------------------------ declarations */

static void collect(struct tfcheck *c, const json_t *files)
{
	const char *file, *key, *type;
	json_t *doc, *v, *names;

	c->decl = json_pack("{s:{}, s:{}, s:{}, s:{}}", "resource", "data", "variable", "locals");
	json_object_foreach((json_t *)files, file, doc)
	{
		json_object_foreach(doc, key, v)
		{
			if (strcmp(key, "resource") == 0 || strcmp(key, "data") == 0) {
				json_object_foreach(v, type, names)
				{
					json_t *have =
					    json_object_get(json_object_get(c->decl, key), type);
					if (have == NULL) {
						have = json_object();
						json_object_set_new(json_object_get(c->decl, key),
						                    type, have);
					}
					json_object_update(have, names);
				}
			} else if (strcmp(key, "variable") == 0 || strcmp(key, "locals") == 0) {
				json_object_update(json_object_get(c->decl, key), v);
			}
		}
	}
}

/* ------------------------------------------------------------------ references */

static bool word_in(const char *w, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strlen(list[i]) == len && strncmp(list[i], w, len) == 0) {
			return true;
		}
	}
	return false;
}

/* The next identifier part after a '.', into out. */
static const char *part(const char *p, char *out, size_t size)
{
	size_t n = 0;

	while ((isalnum((unsigned char)*p) || *p == '_' || *p == '-') && n + 1 < size) {
		out[n++] = *p++;
	}
	out[n] = '\0';
	return p;
}

static void check_ref(struct tfcheck *c, const char *where, const char *p, const char **end)
{
	char a[128], b[128], d[128];
	const char *q = part(p, a, sizeof(a));
	const json_t *decl = c->decl;

	*end = q;
	if (*q == '(' || word_in(a, strlen(a), builtin, sizeof(builtin) / sizeof(builtin[0]))) {
		return; /* a function call or a built-in object */
	}
	if (*q != '.') {
		return; /* a bare word: a for-expression variable or an attribute name */
	}
	q = part(q + 1, b, sizeof(b));
	*end = q;
	if (strcmp(a, "var") == 0 || strcmp(a, "local") == 0) {
		if (json_object_get(json_object_get(decl, a[0] == 'v' ? "variable" : "locals"),
		                    b) == NULL) {
			problem(c, "%s: reference to undeclared %s.%s", where, a, b);
		}
	} else if (strcmp(a, "data") == 0) {
		q = *q == '.' ? part(q + 1, d, sizeof(d)) : q;
		*end = q;
		if (json_object_get(json_object_get(json_object_get(decl, "data"), b), d) == NULL) {
			problem(c, "%s: reference to undeclared data.%s.%s", where, b, d);
		}
	} else if (json_object_get(json_object_get(json_object_get(decl, "resource"), a), b) ==
	               NULL &&
	           strcmp(a, "module") != 0) {
		problem(c, "%s: reference to undeclared resource %s.%s", where, a, b);
	}
}

/* Check the references inside every ${...} of s; a "${" written "$${" is a literal. */
static void check_template(struct tfcheck *c, const char *where, const char *s)
{
	for (const char *p = s; *p != '\0'; p++) {
		int depth = 0;
		if (p[0] == '$' && p[1] == '$' && p[2] == '{') {
			p += 2;
			continue;
		}
		if (!(p[0] == '$' && p[1] == '{')) {
			continue;
		}
		for (p += 2; *p != '\0' && !(*p == '}' && depth == 0); p++) {
			const char *end;
			if (*p == '"') {
				for (p++; *p != '\0' && *p != '"'; p++) {
					p += *p == '\\' && p[1] != '\0';
				}
				continue;
			}
			depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
			if (isalpha((unsigned char)*p) && !isalnum((unsigned char)p[-1]) &&
			    p[-1] != '_' && p[-1] != '.') {
				check_ref(c, where, p, &end);
				p = end - 1;
			}
		}
		if (*p == '\0') {
			problem(c, "%s: unterminated ${ in \"%.60s\"", where, s);
			return;
		}
	}
}

/* ------------------------------------------------------------------ walking */

static void walk(struct tfcheck *c, const char *where, const json_t *v)
{
	char sub[512];
	const char *key;
	json_t *x;
	size_t i;

	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		check_template(c, where, s);
		if (c->hostile != NULL && strstr(s, c->hostile) != NULL) {
			const char *at = strstr(s, c->hostile);
			if (at == s || at[-1] != '$') {
				problem(c,
				        "%s: a user string reaches a template unescaped (\"%s\")",
				        where, c->hostile);
			}
		}
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x)
		{
			snprintf(sub, sizeof(sub), "%s.%s", where, key);
			walk(c, sub, x);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
			walk(c, sub, x);
		}
	}
}

/* depends_on, provider and lifecycle.ignore_changes take bare references, not templates. */
static void check_meta(struct tfcheck *c, const char *where, const json_t *block)
{
	json_t *dep = json_object_get(block, "depends_on");
	json_t *prov = json_object_get(block, "provider");
	json_t *ign = json_object_get(json_object_get(block, "lifecycle"), "ignore_changes");
	size_t i;
	json_t *x;

	json_array_foreach(dep, i, x)
	{
		if (!json_is_string(x) || strstr(json_string_value(x), "${") != NULL) {
			problem(c, "%s.depends_on[%zu]: must be a bare reference string", where, i);
		}
	}
	if (prov != NULL && (!json_is_string(prov) || strstr(json_string_value(prov), "${"))) {
		problem(c, "%s.provider: must be a bare provider reference", where);
	}
	json_array_foreach(ign, i, x)
	{
		if (!json_is_string(x) || strstr(json_string_value(x), "${") != NULL) {
			problem(c,
			        "%s.lifecycle.ignore_changes[%zu]: must be a bare attribute name",
			        where, i);
		}
	}
}

static void check_file(struct tfcheck *c, const char *file, const json_t *doc)
{
	const char *key, *type, *name;
	json_t *v, *names, *block;

	if (!json_is_object(doc)) {
		problem(c, "%s: not a JSON object", file);
		return;
	}
	json_object_foreach((json_t *)doc, key, v)
	{
		if (!word_in(key, strlen(key), roots, sizeof(roots) / sizeof(roots[0]))) {
			problem(c, "%s: unknown root key \"%s\"", file, key);
		}
		if (strcmp(key, "terraform") == 0 && strcmp(file, "versions.tf.json") != 0) {
			problem(c,
			        "%s: a terraform block outside versions.tf.json (a module may "
			        "have only one required_providers)",
			        file);
		}
		if (strcmp(key, "resource") != 0 && strcmp(key, "data") != 0) {
			continue;
		}
		json_object_foreach(v, type, names)
		{
			json_object_foreach(names, name, block)
			{
				char where[384];
				snprintf(where, sizeof(where), "%s: %s.%s.%s", file, key, type,
				         name);
				check_meta(c, where, block);
			}
		}
	}
	if (strcmp(file, "terraform.tfvars.json") != 0 && strcmp(file, "versions.tf.json") != 0) {
		walk(c, file, doc);
	}
}

int tfcheck_run(struct tfcheck *c, const json_t *files)
{
	const char *file;
	json_t *doc;

	c->n = 0;
	collect(c, files);
	json_object_foreach((json_t *)files, file, doc)
	{
		check_file(c, file, doc);
	}
	json_decref(c->decl);
	c->decl = NULL;
	return c->n;
}
