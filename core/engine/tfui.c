/* core/engine/tfui.c - tofu's JSON UI lines as human text, resource ids redacted. */
#include <config.h>

#include <errno.h>
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

/* The length of the valid UTF-8 sequence at p (of n bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t need = p[0] < 0x80                    ? 1
	              : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
	              : p[0] >= 0xe0 && p[0] <= 0xef ? 3
	              : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
	                                             : 0;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */

	if (need == 0 || need > n) {
		return 0;
	}
	if (p[0] == 0xe0) {
		lo = 0xa0; /* overlong */
	} else if (p[0] == 0xed) {
		hi = 0x9f; /* surrogates */
	} else if (p[0] == 0xf0) {
		lo = 0x90;
	} else if (p[0] == 0xf4) {
		hi = 0x8f; /* beyond U+10FFFF */
	}
	for (size_t i = 1; i < need; i++) {
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf)) {
			return 0;
		}
	}
	return need;
}

size_t rz_tfui_text(char *out, size_t size, const char *in, size_t len)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0, i = 0;

	while (i < len && o + 1 < size) {
		size_t n = utf8_len(p + i, len - i);
		if (n == 0) {
			out[o++] = '?';
			i++;
		} else if (n == 1) {
			out[o++] = (p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f ? ' ' : (char)p[i];
			i++;
		} else if (o + n < size) {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		} else {
			break; /* no room for the whole character */
		}
	}
	if (size > 0) {
		out[o] = '\0';
	}
	return o;
}

char *rz_tfui_human(const char *line, size_t len, size_t *out_len)
{
	json_t *j = rz_tfui_is_json(line, len) ? json_loadb(line, len, 0, NULL) : NULL;
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

/* ------------------------------------------------------------------ redaction */

#define REDACTED "(redacted)"
#define ID_MAX   512 /* longer words are not ids */

struct rz_tfui {
	json_t *ids; /* the learned ids, as the keys of an object: a hash set */
};

/* Where tofu prints an id: the marker, and what ends the id after it. */
static const struct {
	const char *marker;
	const char *stops;
} places[] = {
	{ "[id=", "],\"" },          /* "Creation complete after 0s [id=…]" */
	{ "\"id_value\":\"", "\"" }, /* a JSON UI hook */
};

rz_tfui_t *rz_tfui_new(void)
{
	rz_tfui_t *u = calloc(1, sizeof(*u));

	if (u != NULL && (u->ids = json_object()) == NULL) {
		free(u);
		u = NULL;
	}
	return u;
}

void rz_tfui_free(rz_tfui_t *u)
{
	if (u != NULL) {
		json_decref(u->ids);
		free(u);
	}
}

/* The length of the id at p (a JSON escape counts whole), up to one of stops. */
static size_t id_len(const char *p, const char *end, const char *stops)
{
	const char *q = p;

	while (q < end && *q != '\0' && strchr(stops, *q) == NULL) {
		q += *q == '\\' && q + 1 < end ? 2 : 1;
	}
	return (size_t)(q - p);
}

static bool known(const rz_tfui_t *u, const char *id, size_t n)
{
	char key[ID_MAX + 1];

	if (u == NULL || n < RZ_TFUI_MIN_ID || n > ID_MAX) {
		return false;
	}
	memcpy(key, id, n);
	key[n] = '\0';
	return json_object_get(u->ids, key) != NULL;
}

static int remember(rz_tfui_t *u, const char *id, size_t n)
{
	char key[ID_MAX + 1];

	if (n < RZ_TFUI_MIN_ID || n > ID_MAX || memchr(id, '\0', n) != NULL) {
		return 0; /* short ones are redacted only where tofu prints them as ids */
	}
	memcpy(key, id, n);
	key[n] = '\0';
	if (json_object_size(u->ids) >= RZ_TFUI_MAX_IDS && json_object_get(u->ids, key) == NULL) {
		return -E2BIG;
	}
	return json_object_set_new_nocheck(u->ids, key, json_true()) == 0 ? 0 : -ENOMEM;
}

int rz_tfui_learn(rz_tfui_t *u, const char *line, size_t len)
{
	const char *end = line + len, *p = line;
	json_t *j, *v;
	int rc = 0;

	while ((p = memmem(p, (size_t)(end - p), "[id=", 4)) != NULL) {
		size_t n = id_len(p + 4, end, places[0].stops);
		rc = remember(u, p + 4, n) ?: rc;
		p += 4 + n;
	}
	if (rz_tfui_is_json(line, len) && (j = json_loadb(line, len, 0, NULL)) != NULL) {
		v = json_object_get(json_object_get(j, "hook"), "id_value");
		if (json_is_string(v)) {
			rc = remember(u, json_string_value(v), json_string_length(v)) ?: rc;
		}
		json_decref(j);
	}
	return rc;
}

/* text to f, whatever follows a marker of places[] replaced. */
static void mask_places(FILE *f, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *hit = NULL, *h;
		size_t which = 0, n;
		for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
			h = memmem(p, (size_t)(end - p), places[i].marker,
			           strlen(places[i].marker));
			if (h != NULL && (hit == NULL || h < hit)) {
				hit = h;
				which = i;
			}
		}
		if (hit == NULL) {
			fwrite(p, 1, (size_t)(end - p), f);
			return;
		}
		hit += strlen(places[which].marker);
		fwrite(p, 1, (size_t)(hit - p), f);
		n = id_len(hit, end, places[which].stops);
		if (n > 0) {
			fputs(REDACTED, f);
		}
		p = hit + n;
	}
}

/* A word to f, redacted when it is a learned id (a full stop or colon after it stays); else
 * when split, each of its pieces between '/', '=' and ':' the same way. */
static void mask_word(FILE *f, const rz_tfui_t *u, const char *w, size_t n, bool split)
{
	size_t core = n, from = 0;

	while (core > 0 && (w[core - 1] == '.' || w[core - 1] == ':')) {
		core--;
	}
	if (known(u, w, core)) {
		fputs(REDACTED, f);
		fwrite(w + core, 1, n - core, f);
		return;
	}
	if (!split) {
		fwrite(w, 1, n, f);
		return;
	}
	for (size_t i = 0; i <= n; i++) {
		if (i == n || w[i] == '/' || w[i] == '=' || w[i] == ':') {
			mask_word(f, u, w + from, i - from, false);
			if (i < n) {
				fputc(w[i], f);
			}
			from = i + 1;
		}
	}
}

static bool delimiter(char c)
{
	return c == '\0' || strchr(" \t\n\r\"'`,;[](){}<>\\", c) != NULL;
}

char *rz_tfui_redact(const rz_tfui_t *u, const char *text, size_t len, size_t *out_len)
{
	char *placed = NULL, *out = NULL;
	size_t plen = 0;
	FILE *f = open_memstream(&placed, &plen);

	if (f == NULL) {
		return NULL;
	}
	mask_places(f, text, len);
	if (fclose(f) != 0) {
		free(placed);
		return NULL;
	}
	if (u == NULL || json_object_size(u->ids) == 0) {
		*out_len = plen;
		return placed;
	}
	if ((f = open_memstream(&out, out_len)) == NULL) {
		free(placed);
		return NULL;
	}
	for (size_t i = 0, j; i < plen; i = j) {
		for (j = i; j < plen && !delimiter(placed[j]); j++) {
		}
		if (j == i) {
			fputc(placed[j++], f);
		} else {
			mask_word(f, u, placed + i, j - i, true);
		}
	}
	free(placed);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}
