/* core/engine/tfui.c - tofu's JSON UI lines as human text. */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/engine/tfui.h"

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* What tofu puts before a message of this level or severity. */
static const char *prefix(const char *level)
{
	if (strcmp(level, "error") == 0) {
		return "Error: ";
	}
	if (strcmp(level, "warn") == 0 || strcmp(level, "warning") == 0) {
		return "Warning: ";
	}
	return "";
}

/* The code a diagnostic points at, numbered from its first line, and the values its
 * expression saw — tofu's layout, without colour. */
static void snippet(FILE *f, const json_t *s)
{
	const char *code = str(s, "code");
	json_int_t n = json_integer_value(json_object_get(s, "start_line"));
	json_t *values = json_object_get(s, "values"), *v;
	size_t i;

	for (const char *p = code; code[0] != '\0' && p != NULL; n++) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		fprintf(f, "\n%4lld: %.*s", (long long)n, len, p);
		p = nl ? nl + 1 : NULL;
	}
	if (json_array_size(values) > 0) {
		fprintf(f, "\n    ├────────────────");
	}
	json_array_foreach(values, i, v)
	{
		fprintf(f, "\n    │ %s %s", str(v, "traversal"), str(v, "statement"));
	}
}

/* A diagnostic as tofu's human output has it: "Error: summary", where, the detail. */
static void diagnostic(FILE *f, const json_t *d)
{
	const json_t *range = json_object_get(d, "range"), *snip = json_object_get(d, "snippet");
	const char *addr = str(d, "address"), *detail = str(d, "detail");
	bool where = addr[0] != '\0' || json_is_object(range);

	fprintf(f, "%s%s", prefix(str(d, "severity")), str(d, "summary"));
	if (!where && detail[0] == '\0') {
		return;
	}
	fprintf(f, "\n");
	if (addr[0] != '\0') {
		fprintf(f, "\n  with %s,", addr);
	}
	if (json_is_object(range)) {
		fprintf(f, "\n  on %s line %lld", str(range, "filename"),
		        (long long)json_integer_value(
		            json_object_get(json_object_get(range, "start"), "line")));
		if (json_is_string(json_object_get(snip, "context"))) {
			fprintf(f, ", in %s", str(snip, "context"));
		}
		fprintf(f, ":");
		if (json_is_object(snip)) {
			snippet(f, snip);
		}
	}
	if (detail[0] != '\0') {
		fprintf(f, "%s%s", where ? "\n\n" : "\n", detail);
	}
}

char *rz_tfui_human(const char *line, size_t len, size_t *out_len)
{
	json_t *j = len > 0 && line[0] == '{' ? json_loadb(line, len, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(j, "@message"));
	char *text = NULL;
	FILE *f = open_memstream(&text, out_len);

	if (f == NULL) {
		json_decref(j);
		return NULL;
	}
	if (msg == NULL) { /* not a JSON UI line: init's output, a stray stderr line */
		fwrite(line, 1, len, f);
	} else if (strcmp(str(j, "type"), "diagnostic") == 0 &&
	           json_is_object(json_object_get(j, "diagnostic"))) {
		diagnostic(f, json_object_get(j, "diagnostic"));
	} else { /* a diagnostic's @message has its prefix already; others may not */
		const char *p = prefix(str(j, "@level"));
		fprintf(f, "%s%s", strncmp(msg, p, strlen(p)) == 0 ? "" : p, msg);
	}
	json_decref(j);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
