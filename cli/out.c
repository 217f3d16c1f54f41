/* cli/out.c - output: kubectl-like tables, JSON, YAML (libyaml emitter), names. */
#include <config.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yaml.h>

#include "cli/rezusctl.h"
#include "core/model/columns.h"

int rzc_print_rc;

/* ------------------------------------------------------------------ values */

static const char *str_at(const json_t *v, const char *path)
{
	char buf[256], *save = NULL;
	const json_t *x = v;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p != NULL && x != NULL;
	     p = strtok_r(NULL, ".", &save)) {
		x = json_object_get(x, p);
	}
	return json_string_value(x);
}

const char *rzc_age(const char *t, char *buf, size_t size)
{
	return rz_columns_age(t, time(NULL), buf, size);
}

/* ------------------------------------------------------------------ tables */

static const char *singular_of(const char *kind)
{
	const rzc_kind_t *k = rzc_kind_of(kind);

	return k != NULL ? k->singular : NULL;
}

static char *cell(const json_t *o, const char *path)
{
	char buf[RZ_CELL_MAX];

	return strdup(rz_columns_cell(o, path, time(NULL), singular_of, buf, sizeof(buf)));
}

static void table_to(FILE *f, const char *indent, const char *const *heads, size_t ncols,
                     char *const *cells, size_t nrows, bool headers)
{
	size_t width[RZ_COLUMNS_MAX] = { 0 };

	ncols = ncols > RZ_COLUMNS_MAX ? RZ_COLUMNS_MAX : ncols;
	for (size_t j = 0; j < ncols; j++) {
		width[j] = strlen(heads[j]);
		for (size_t i = 0; i < nrows; i++) {
			const char *v = cells[i * ncols + j];
			width[j] = v != NULL && strlen(v) > width[j] ? strlen(v) : width[j];
		}
	}
	for (size_t i = headers ? 0 : 1; i <= nrows; i++) {
		const char *const *row =
		    i == 0 ? heads : (const char *const *)cells + (i - 1) * ncols;
		size_t last = 0; /* the line ends at the row's last cell that holds something */

		for (size_t j = 0; j < ncols; j++) {
			last = row[j] != NULL && row[j][0] != '\0' ? j : last;
		}
		fputs(indent, f);
		for (size_t j = 0; j < last; j++) {
			fprintf(f, "%-*s   ", (int)width[j], row[j] ? row[j] : "");
		}
		fprintf(f, "%s\n", ncols > 0 && row[last] ? row[last] : "");
	}
}

void rzc_table(const char *indent, const char *const *heads, size_t ncols, char *const *cells,
               size_t nrows, bool headers)
{
	table_to(stdout, indent, heads, ncols, cells, nrows, headers);
}

void rzc_rows_init(rzc_rows_t *t, const char *const *heads, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->heads = heads;
	t->ncols = ncols > RZ_COLUMNS_MAX ? RZ_COLUMNS_MAX : ncols;
}

void rzc_rows_add(rzc_rows_t *t, ...)
{
	char **grown = realloc(t->cells, (t->nrows + 1) * t->ncols * sizeof(*grown));
	va_list ap;

	if (grown == NULL) {
		return; /* out of memory: the row is left out */
	}
	t->cells = grown;
	va_start(ap, t);
	for (size_t j = 0; j < t->ncols; j++) {
		const char *v = va_arg(ap, const char *);
		t->cells[t->nrows * t->ncols + j] = strdup(v != NULL ? v : "");
	}
	va_end(ap);
	t->nrows++;
}

void rzc_rows_print(const rzc_rows_t *t, const char *indent)
{
	table_to(stdout, indent, t->heads, t->ncols, t->cells, t->nrows, true);
}

void rzc_rows_fprint(FILE *f, const rzc_rows_t *t, const char *indent)
{
	table_to(f, indent, t->heads, t->ncols, t->cells, t->nrows, true);
}

void rzc_rows_free(rzc_rows_t *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++) {
		free(t->cells[i]);
	}
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

static void print_table(rzc_t *c, const char *kind, json_t *items, bool headers)
{
	const rz_column_t *t = rz_columns_of(kind);
	bool wide = c->output != NULL && strcmp(c->output, "wide") == 0;
	bool show_tenant = c->all_tenants || c->tenant == NULL;
	size_t nrows = json_array_size(items), ncols = 0;
	const rz_column_t *cols[RZ_COLUMNS_MAX];
	const char *heads[RZ_COLUMNS_MAX];
	char **cells;

	for (size_t j = 0; j < RZ_COLUMNS_MAX && t[j].header != NULL; j++) {
		if ((t[j].wide && !wide) || (strcmp(t[j].header, "TENANT") == 0 && !show_tenant)) {
			continue;
		}
		cols[ncols++] = &t[j];
	}
	if (nrows == 0) {
		if (headers) {
			fprintf(stderr, "No resources found.\n");
		}
		return;
	}
	cells = calloc(nrows * ncols + 1, sizeof(*cells));
	if (cells == NULL) {
		return;
	}
	for (size_t j = 0; j < ncols; j++) {
		heads[j] = cols[j]->header;
	}
	for (size_t i = 0; i < nrows; i++) {
		for (size_t j = 0; j < ncols; j++) {
			cells[i * ncols + j] = cell(json_array_get(items, i), cols[j]->path);
		}
	}
	rzc_table("", heads, ncols, cells, nrows, headers);
	for (size_t i = 0; i < nrows * ncols; i++) {
		free(cells[i]);
	}
	free(cells);
}

/* ------------------------------------------------------------------ YAML */

/* Would this string read back as something else than a string in plain style? */
static bool needs_quotes(const char *s)
{
	static const char *const words[] = { "",     "~",    "null",  "Null",  "NULL",  "true",
		                             "True", "TRUE", "false", "False", "FALSE", "yes",
		                             "no",   "on",   "off",   "y",     "n" };
	const char *p = s + (*s == '-' || *s == '+');

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcasecmp(s, words[i]) == 0) {
			return true;
		}
	}
	if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
		return true; /* numbers, and things that start like them (dates, versions) */
	}
	return false;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
	return yaml_emitter_emit(e, ev) ? 0 : -1;
}

static int emit_scalar(yaml_emitter_t *e, const char *s, yaml_scalar_style_t style, bool plain)
{
	yaml_event_t ev;

	/* quoted is always implicit: a string the emitter must quote (a ": " in it, a leading
	 * "*") is still a string, and a tag (! 'text') says nothing a reader needs */
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), plain, 1,
	                             style);
	return emit(e, &ev);
}

static int emit_value(yaml_emitter_t *e, const json_t *v)
{
	yaml_event_t ev;
	char buf[64];

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *x;
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
		if (emit(e, &ev) < 0) {
			return -1;
		}
		json_object_foreach((json_t *)v, key, x)
		{
			if (emit_scalar(e, key,
			                needs_quotes(key) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
			                                  : YAML_ANY_SCALAR_STYLE,
			                !needs_quotes(key)) < 0 ||
			    emit_value(e, x) < 0) {
				return -1;
			}
		}
		yaml_mapping_end_event_initialize(&ev);
		return emit(e, &ev);
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *x;
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
		if (emit(e, &ev) < 0) {
			return -1;
		}
		json_array_foreach(v, i, x)
		{
			if (emit_value(e, x) < 0) {
				return -1;
			}
		}
		yaml_sequence_end_event_initialize(&ev);
		return emit(e, &ev);
	}
	case JSON_STRING: {
		const char *s = json_string_value(v);
		if (strchr(s, '\n') != NULL) {
			return emit_scalar(e, s, YAML_LITERAL_SCALAR_STYLE, false);
		}
		return emit_scalar(
		    e, s, needs_quotes(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE,
		    !needs_quotes(s));
	}
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		return emit_scalar(e, buf, YAML_PLAIN_SCALAR_STYLE, true);
	case JSON_REAL:
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		if (strpbrk(buf, ".eE") == NULL) {
			strcat(buf, ".0"); /* 2.0 stays a real: "2" reads back as an integer */
		}
		return emit_scalar(e, buf, YAML_PLAIN_SCALAR_STYLE, true);
	case JSON_TRUE:
		return emit_scalar(e, "true", YAML_PLAIN_SCALAR_STYLE, true);
	case JSON_FALSE:
		return emit_scalar(e, "false", YAML_PLAIN_SCALAR_STYLE, true);
	default:
		return emit_scalar(e, "null", YAML_PLAIN_SCALAR_STYLE, true);
	}
}

static int write_file(void *data, unsigned char *buffer, size_t size)
{
	return fwrite(buffer, 1, size, data) == size;
}

int rzc_yaml_write(FILE *f, const json_t *v)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	int rc = -1;

	if (!yaml_emitter_initialize(&e)) {
		return -1;
	}
	yaml_emitter_set_output(&e, write_file, f);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (emit(&e, &ev) == 0) {
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		if (emit(&e, &ev) == 0 && emit_value(&e, v) == 0) {
			yaml_document_end_event_initialize(&ev, 1);
			if (emit(&e, &ev) == 0) {
				yaml_stream_end_event_initialize(&ev);
				rc = emit(&e, &ev);
			}
		}
	}
	yaml_emitter_delete(&e);
	return rc;
}

/* ------------------------------------------------------------------ printing */

static const char *kind_plural(const json_t *o, const rzc_kind_t *k)
{
	const rzc_kind_t *of = rzc_kind_of(str_at(o, "kind"));

	return of ? of->singular : k ? k->singular : "object";
}

void rzc_sort(json_t *items, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(items);
	json_t **v = n > 0 ? calloc(n, sizeof(*v)) : NULL;

	if (v == NULL) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = json_incref(json_array_get(items, i));
	}
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(items);
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(items, v[i]);
	}
	free(v);
}

static int newest_first(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *cx = str_at(x, "metadata.creationTimestamp");
	const char *cy = str_at(y, "metadata.creationTimestamp");
	const char *sx = str_at(x, "status.startedAt"), *sy = str_at(y, "status.startedAt");
	const char *nx = str_at(x, "metadata.name"), *ny = str_at(y, "metadata.name");
	int cmp = strcmp(cy ? cy : "", cx ? cx : "");

	if (cmp == 0 && (sx == NULL) != (sy == NULL)) {
		cmp = sx == NULL ? -1 : 1;
	} else if (cmp == 0 && sx != NULL) {
		cmp = strcmp(sy, sx);
	}
	return cmp != 0 ? cmp : strcmp(nx ? nx : "", ny ? ny : "");
}

void rzc_sort_runs(json_t *items)
{
	rzc_sort(items, newest_first);
}

/* ------------------------------------------------------------------ jsonpath */

/* kubectl's JSONPath, the part people type: {.a.b}, {$.a}, {.items[*].x}, {.items[0]},
 * {.items[-1]}, slices {.items[1:3]} {.items[::2]}, filters {.c[?(@.type=="Ready")]}
 * (== and != on strings, numbers and booleans; {.c[?(@.x)]}: x exists), {.a['b']},
 * {range EXPR}...{end}, {"literal"}, text with \n and \t between. Anything else (recursive
 * descent, unions, other operators) is a usage error naming the expression. */
#define JP_MAX_DEPTH 8 /* nested ranges */

/* The expression being read, for messages. */
struct jp {
	const char *expr;
	size_t len;
};

static int jp_usage(const struct jp *j, const char *why)
{
	return rzc_usage("jsonpath: {%.*s}: %s", (int)j->len, j->expr, why);
}

static int jp_error(const struct jp *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int jp_error(const struct jp *j, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return rzc_fail("jsonpath: {%.*s}: %s", (int)j->len, j->expr, buf);
}

static int jp_eval(const struct jp *j, const json_t *root, const char *path, size_t len,
                   json_t *out);

/* The ']' closing the '[' at p[i] (quotes and nested brackets skipped); 0 when none. */
static size_t jp_close(const char *p, size_t i, size_t len)
{
	char quote = 0;
	int depth = 0;

	for (; i < len; i++) {
		if (quote != 0) {
			quote = p[i] == quote ? 0 : quote;
		} else if (p[i] == '\'' || p[i] == '"') {
			quote = p[i];
		} else if (p[i] == '[') {
			depth++;
		} else if (p[i] == ']' && --depth == 0) {
			return i;
		}
	}
	return 0;
}

/* s[0..len) without the blanks around it. */
static void jp_trim(const char **s, size_t *len)
{
	while (*len > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++, (*len)--;
	}
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t')) {
		(*len)--;
	}
}

/* An integer of a slice, s[0..len) ("" when not given: *known false). -1 when not one. */
static int jp_int(const char *s, size_t len, long *v, bool *known)
{
	char buf[32], *end;

	jp_trim(&s, &len);
	*known = len > 0;
	if (len == 0) {
		return 0;
	}
	if (len >= sizeof(buf)) {
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	*v = strtol(buf, &end, 10);
	return *end == '\0' && (isdigit((unsigned char)buf[0]) || buf[0] == '-') ? 0 : -1;
}

/* [i], [start:end], [start:end:step] of each array of cur into next, as kubectl slices
 * (an index out of range is an error, as is a step below 1). */
static int jp_slice(const struct jp *j, const char *sel, size_t slen, json_t *cur, json_t *next)
{
	long p[3] = { 0, 0, 1 };
	bool known[3] = { false, false, false }, index = memchr(sel, ':', slen) == NULL;
	size_t from = 0, n;
	json_t *v;

	for (int k = 0; k < 3; k++) {
		const char *colon = k < 2 ? memchr(sel + from, ':', slen - from) : NULL;
		size_t end = colon ? (size_t)(colon - sel) : slen;
		if (from > slen || jp_int(sel + from, end - from, &p[k], &known[k]) != 0) {
			return jp_usage(
			    j, "an index or slice is [N], [START:END] or [START:END:STEP]");
		}
		from = end + 1;
		if (colon == NULL) {
			break;
		}
	}
	if (index && !known[0]) {
		return jp_usage(j, "an empty []");
	}
	if (known[2] && p[2] <= 0) {
		return jp_usage(j, "a slice's step must be above 0");
	}
	json_array_foreach(cur, n, v)
	{
		long size = (long)json_array_size(v), start = known[0] ? p[0] : 0, end;
		if (json_is_null(v)) {
			continue;
		}
		if (!json_is_array(v)) {
			return jp_error(j, "an index or slice of something that is not a list");
		}
		start = start < 0 ? start + size : start;
		end = index ? start + 1 : known[1] ? p[1] : size;
		end = end < 0 ? end + size : end;
		if (start == end) {
			continue;
		}
		if (start < 0 || start >= size) {
			return jp_error(j, "index %ld out of bounds (length %ld)", start, size);
		}
		if (end > size || end < 0) {
			return jp_error(j, "index %ld out of bounds (length %ld)", end - 1, size);
		}
		if (start > end) {
			return jp_error(j, "slice start %ld is after its end %ld", start, end);
		}
		for (long i = start; i < end; i += p[2]) {
			json_array_append(next, json_array_get(v, (size_t)i));
		}
	}
	return RZC_OK;
}

/* A filter's right-hand side: a quoted string, a number, true or false (a new reference in
 * *lit), or a path from @ (*lit NULL). -1 when none of those. */
static int jp_operand(const char *s, size_t len, json_t **lit)
{
	char buf[256], *end;

	*lit = NULL;
	if (len >= sizeof(buf) || len == 0) {
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (len >= 2 && (buf[0] == '"' || buf[0] == '\'') && buf[len - 1] == buf[0]) {
		buf[len - 1] = '\0';
		*lit = json_string(buf + 1);
	} else if (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0) {
		*lit = json_boolean(buf[0] == 't');
	} else if (buf[0] == '@') {
		return 0;
	} else if (strpbrk(buf, ".eE") != NULL) {
		double d = strtod(buf, &end);
		*lit = *end == '\0' ? json_real(d) : NULL;
	} else {
		long long i = strtoll(buf, &end, 10);
		*lit = *end == '\0' ? json_integer(i) : NULL;
	}
	return *lit != NULL ? 0 : -1;
}

/* 1 when a == b, 0 when not, -1 when they cannot be compared (kubectl refuses too). */
static int jp_equal(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) {
		return json_number_value(a) == json_number_value(b);
	}
	if (json_is_string(a) && json_is_string(b)) {
		return strcmp(json_string_value(a), json_string_value(b)) == 0;
	}
	if (json_is_boolean(a) && json_is_boolean(b)) {
		return json_typeof(a) == json_typeof(b);
	}
	return -1;
}

/* One element against a filter: *keep set. left/right: paths from @ (right NULL with lit
 * a literal, or both NULL: exists); op "==" or "!=". */
static int jp_test(const struct jp *j, const json_t *e, const char *left, size_t llen,
                   const char *op, const char *right, size_t rlen, const json_t *lit, bool *keep)
{
	json_t *ls = json_array(), *rs = json_array();
	int rc = jp_eval(j, e, left, llen, ls), eq;

	*keep = false;
	if (rc == RZC_OK && op == NULL) {
		*keep = json_array_size(ls) > 0;
	} else if (rc == RZC_OK && right != NULL) {
		rc = jp_eval(j, e, right, rlen, rs);
	} else if (rc == RZC_OK) {
		json_array_append(rs, (json_t *)lit);
	}
	if (rc == RZC_OK && op != NULL && json_array_size(ls) > 0 && json_array_size(rs) > 0) {
		if (json_array_size(ls) > 1 || json_array_size(rs) > 1) {
			rc = jp_error(j, "a filter compares one value at a time");
		} else if ((eq = jp_equal(json_array_get(ls, 0), json_array_get(rs, 0))) < 0) {
			rc =
			    jp_error(j, "a filter compares a string with a string, a number with a "
			                "number");
		} else {
			*keep = (eq == 1) == (op[0] == '=');
		}
	}
	json_decref(ls);
	json_decref(rs);
	return rc;
}

/* [?(@.path OP VALUE)] or [?(@.path)] over the elements of each list of cur, into next. */
static int jp_filter(const struct jp *j, const char *sel, size_t slen, json_t *cur, json_t *next)
{
	const char *body = sel + 2, *op = NULL, *left, *right = NULL;
	size_t blen = slen - 3, llen, rlen = 0, n, i;
	char quote = 0;
	json_t *lit = NULL, *v, *e;
	int rc = RZC_OK;

	for (size_t k = 0; k < blen && op == NULL; k++) {
		if (quote != 0) {
			quote = body[k] == quote ? 0 : quote;
		} else if (body[k] == '\'' || body[k] == '"') {
			quote = body[k];
		} else if (strchr("=!<>~&|", body[k]) != NULL) {
			op = body + k;
		}
	}
	if (op != NULL &&
	    !((op[0] == '=' || op[0] == '!') && op + 1 < body + blen && op[1] == '=')) {
		return jp_usage(j, "a filter compares with == or != (or tests that a path exists)");
	}
	left = body;
	llen = op ? (size_t)(op - body) : blen;
	jp_trim(&left, &llen);
	if (op != NULL) {
		right = op + 2;
		rlen = (size_t)(body + blen - right);
		jp_trim(&right, &rlen);
		if (jp_operand(right, rlen, &lit) != 0) {
			return jp_usage(j, "a filter compares with a \"string\", a number, true, "
			                   "false or a path from @");
		}
		right = lit != NULL ? NULL : right;
	}
	if (llen == 0 || left[0] != '@') {
		json_decref(lit);
		return jp_usage(j, "a filter's path starts with @ ([?(@.type==\"Ready\")])");
	}
	json_array_foreach(cur, n, v)
	{
		if (!json_is_array(v)) {
			rc = jp_error(j, "a filter of something that is not a list");
			break;
		}
		json_array_foreach(v, i, e)
		{
			bool keep;
			rc = jp_test(j, e, left, llen, op, right, rlen, lit, &keep);
			if (rc != RZC_OK) {
				break;
			}
			if (keep) {
				json_array_append(next, e);
			}
		}
		if (rc != RZC_OK) {
			break;
		}
	}
	json_decref(lit);
	return rc;
}

/* One [...] of each of cur into next: *, 'key', an index, a slice or a filter. */
static int jp_bracket(const struct jp *j, const char *sel, size_t slen, json_t *cur, json_t *next)
{
	size_t n;
	json_t *v;

	jp_trim(&sel, &slen);
	if (slen == 1 && sel[0] == '*') {
		json_array_foreach(cur, n, v)
		{
			const char *k;
			json_t *x;
			if (json_is_array(v)) {
				json_array_extend(next, v);
			}
			json_object_foreach(v, k, x)
			{
				json_array_append(next, x);
			}
		}
		return RZC_OK;
	}
	if (slen >= 3 && sel[0] == '?' && sel[1] == '(' && sel[slen - 1] == ')') {
		return jp_filter(j, sel, slen, cur, next);
	}
	if (slen >= 2 && (sel[0] == '\'' || sel[0] == '"') && sel[slen - 1] == sel[0]) {
		char key[256];
		if (memchr(sel + 1, sel[0], slen - 2) != NULL) {
			return jp_usage(j, "unions of keys (['a','b']) are not supported");
		}
		snprintf(key, sizeof(key), "%.*s", (int)(slen - 2), sel + 1);
		json_array_foreach(cur, n, v)
		{
			if (json_object_get(v, key) != NULL) {
				json_array_append(next, json_object_get(v, key));
			}
		}
		return RZC_OK;
	}
	if (memchr(sel, ',', slen) != NULL) {
		return jp_usage(j, "unions ([0,1]) are not supported");
	}
	return jp_slice(j, sel, slen, cur, next);
}

/* The values path[0..len) selects from root, appended to out (borrowed references):
 * RZC_OK, or after a message RZC_USAGE (not an expression this reads) or RZC_ERR (one the
 * data cannot answer: an index out of range, a filter of something not a list). */
static int jp_eval(const struct jp *j, const json_t *root, const char *path, size_t len,
                   json_t *out)
{
	json_t *cur = json_array(), *next;
	size_t i = 0;
	int rc = RZC_OK;

	jp_trim(&path, &len);
	json_array_append(cur, (json_t *)root);
	if (i < len && (path[i] == '@' || path[i] == '$')) {
		i++;
	}
	while (i < len && rc == RZC_OK) {
		size_t n;
		json_t *v;
		next = json_array();
		if (path[i] == '.' && i + 1 < len && path[i + 1] == '.') {
			rc = jp_usage(j, "recursive descent (..) is not supported");
		} else if (path[i] == '.' && i + 1 < len && path[i + 1] != '[') {
			char key[256];
			size_t start = ++i;
			while (i < len && path[i] != '.' && path[i] != '[') {
				i++;
			}
			snprintf(key, sizeof(key), "%.*s", (int)(i - start), path + start);
			json_array_foreach(cur, n, v)
			{
				if (json_object_get(v, key) != NULL) {
					json_array_append(next, json_object_get(v, key));
				}
			}
		} else if (path[i] == '.') {
			i++;
			json_decref(next);
			continue;
		} else if (path[i] == '[') {
			size_t close = jp_close(path, i, len);
			if (close == 0) {
				rc = jp_usage(j, "a [ without its ]");
			} else {
				rc = jp_bracket(j, path + i + 1, close - i - 1, cur, next);
				i = close + 1;
			}
		} else {
			rc = jp_usage(
			    j, "expected .field, [N], [START:END], [*], ['key'] or [?(...)]");
		}
		json_decref(cur);
		cur = next;
	}
	if (rc == RZC_OK) {
		json_array_extend(out, cur);
	}
	json_decref(cur);
	return rc;
}

/* A value as kubectl prints it: strings bare, the rest as JSON (keys sorted, as Go's). */
static void jp_print(FILE *f, const json_t *v)
{
	if (json_is_string(v)) {
		fputs(json_string_value(v), f);
	} else {
		char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
		fputs(j ? j : "", f);
		free(j);
	}
}

/* Text between expressions, with \n, \t and \\ read as kubectl does. */
static void jp_text(FILE *f, const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (t[i] == '\\' && i + 1 < len) {
			i++;
			fputc(t[i] == 'n' ? '\n' : t[i] == 't' ? '\t' : t[i], f);
		} else {
			fputc(t[i], f);
		}
	}
}

/* Run template t[0..len) against data; *end is set past a closing {end}. */
static int jp_run(FILE *f, const json_t *data, const char *t, size_t len, size_t *end, int depth)
{
	size_t i = 0;

	while (i < len) {
		const char *open = memchr(t + i, '{', len - i), *close;
		size_t elen;
		const char *e;
		if (open == NULL) {
			jp_text(f, t + i, len - i);
			break;
		}
		jp_text(f, t + i, (size_t)(open - t) - i);
		close = memchr(open, '}', len - (size_t)(open - t));
		if (close == NULL) {
			return rzc_usage("jsonpath: an unclosed {");
		}
		e = open + 1;
		elen = (size_t)(close - e);
		while (elen > 0 && e[0] == ' ') {
			e++, elen--;
		}
		i = (size_t)(close - t) + 1;
		if (elen == 3 && strncmp(e, "end", 3) == 0) {
			if (end == NULL) {
				return rzc_usage("jsonpath: {end} without {range}");
			}
			*end = i;
			return RZC_OK;
		}
		if (elen > 6 && strncmp(e, "range ", 6) == 0) {
			json_t *vals = json_array(), *v;
			size_t n, body = 0;
			int rc = RZC_OK;
			if (depth >= JP_MAX_DEPTH) {
				json_decref(vals);
				return rzc_usage("jsonpath: {%.*s}: ranges nest too deep",
				                 (int)elen, e);
			}
			if ((rc = jp_eval(&(struct jp){ e, elen }, data, e + 6, elen - 6, vals)) !=
			    RZC_OK) {
				json_decref(vals);
				return rc;
			}
			/* find the body's end once, even with nothing to range over */
			FILE *null = fopen("/dev/null", "w");
			rc = null ? jp_run(null, data, t + i, len - i, &body, depth + 1) : RZC_ERR;
			if (null != NULL) {
				fclose(null);
			}
			if (rc == RZC_OK && body == 0) {
				rc = rzc_usage("jsonpath: {range} without {end}");
			}
			json_array_foreach(vals, n, v)
			{
				size_t ignored;
				if (rc == RZC_OK) {
					rc = jp_run(f, v, t + i, len - i, &ignored, depth + 1);
				}
			}
			json_decref(vals);
			if (rc != RZC_OK) {
				return rc;
			}
			i += body;
			continue;
		}
		if (elen >= 2 && (e[0] == '"' || e[0] == '\'') && e[elen - 1] == e[0]) {
			jp_text(f, e + 1, elen - 2);
			continue;
		}
		{
			json_t *vals = json_array(), *v;
			size_t n;
			int rc = jp_eval(&(struct jp){ e, elen }, data, e, elen, vals);
			if (rc != RZC_OK) {
				json_decref(vals);
				return rc;
			}
			json_array_foreach(vals, n, v)
			{
				if (n > 0) {
					fputc(' ', f);
				}
				jp_print(f, v);
			}
			json_decref(vals);
		}
	}
	return RZC_OK;
}

int rzc_jsonpath(FILE *f, const json_t *data, const char *tmpl)
{
	return jp_run(f, data, tmpl, strlen(tmpl), NULL, 0);
}

/* -o custom-columns=NAME:.path,...: a header and a JSONPath per column. */
static int custom_columns(const char *spec, json_t *items, bool headers)
{
	char *copy = strdup(spec), *save = NULL, *col;
	const char *heads[RZ_COLUMNS_MAX], *paths[RZ_COLUMNS_MAX];
	size_t ncols = 0, nrows = json_array_size(items);
	char **cells;
	int rc = RZC_OK;

	for (col = copy ? strtok_r(copy, ",", &save) : NULL; col != NULL;
	     col = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(col, ':');
		if (colon == NULL || colon == col || ncols == RZ_COLUMNS_MAX) {
			free(copy);
			return rzc_usage("custom-columns: '%s': give HEADER:.path, at most %d", col,
			                 RZ_COLUMNS_MAX);
		}
		*colon = '\0';
		heads[ncols] = col;
		paths[ncols++] = colon + 1;
	}
	if (ncols == 0 || (cells = calloc(nrows * ncols + 1, sizeof(*cells))) == NULL) {
		free(copy);
		return ncols == 0 ? rzc_usage("custom-columns: give HEADER:.path,...") : RZC_ERR;
	}
	for (size_t i = 0; i < nrows && rc == RZC_OK; i++) {
		for (size_t j = 0; j < ncols && rc == RZC_OK; j++) {
			char *buf = NULL;
			size_t blen = 0;
			FILE *m = open_memstream(&buf, &blen);
			json_t *vals = json_array(), *v;
			size_t n;
			const char *p = paths[j];
			size_t plen = strlen(p);
			if (plen >= 2 && p[0] == '{' && p[plen - 1] == '}') {
				p++, plen -= 2;
			}
			if (m == NULL) {
				rc = RZC_ERR;
			} else {
				rc = jp_eval(&(struct jp){ p, plen }, json_array_get(items, i), p,
				             plen, vals);
			}
			json_array_foreach(vals, n, v)
			{
				if (n > 0) {
					fputc(',', m);
				}
				jp_print(m, v);
			}
			if (m != NULL) {
				fclose(m);
			}
			json_decref(vals);
			if (buf != NULL && buf[0] == '\0') {
				free(buf);
				buf = strdup("<none>");
			}
			cells[i * ncols + j] = buf;
		}
	}
	if (rc == RZC_OK) {
		rzc_table("", heads, ncols, cells, nrows, headers);
	}
	for (size_t i = 0; i < nrows * ncols; i++) {
		free(cells[i]);
	}
	free(cells);
	free(copy);
	return rc;
}

void rzc_print_list(rzc_t *c, const rzc_kind_t *k, json_t *items, bool headers)
{
	const char *o = c->output ? c->output : "table";
	size_t i;
	json_t *x;

	if (strcmp(o, "json") == 0) {
		json_t *list = json_pack("{s:s, s:s, s:O}", "apiVersion", "rezuscloud.io/v1",
		                         "kind", "List", "items", items);
		json_dumpf(list, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
		json_decref(list);
	} else if (strcmp(o, "yaml") == 0) {
		json_t *list = json_pack("{s:s, s:s, s:O}", "apiVersion", "rezuscloud.io/v1",
		                         "kind", "List", "items", items);
		rzc_yaml_write(stdout, list);
		json_decref(list);
	} else if (strncmp(o, "jsonpath=", 9) == 0) {
		json_t *list = json_pack("{s:s, s:s, s:O}", "apiVersion", "rezuscloud.io/v1",
		                         "kind", "List", "items", items);
		rzc_print_rc = rzc_jsonpath(stdout, list, o + 9);
		json_decref(list);
	} else if (strncmp(o, "custom-columns=", 15) == 0) {
		rzc_print_rc = custom_columns(o + 15, items, headers);
	} else if (strcmp(o, "name") == 0) {
		json_array_foreach(items, i, x)
		{
			printf("%s/%s\n", kind_plural(x, k), str_at(x, "metadata.name"));
		}
	} else {
		print_table(c, k ? k->kind : str_at(json_array_get(items, 0), "kind"), items,
		            headers);
	}
}

void rzc_print_object(rzc_t *c, const rzc_kind_t *k, json_t *obj)
{
	const char *o = c->output ? c->output : "table";

	if (strcmp(o, "json") == 0) {
		json_dumpf(obj, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
	} else if (strcmp(o, "yaml") == 0) {
		rzc_yaml_write(stdout, obj);
	} else if (strncmp(o, "jsonpath=", 9) == 0) {
		rzc_print_rc = rzc_jsonpath(stdout, obj, o + 9);
	} else {
		json_t *one = json_pack("[O]", obj);
		rzc_print_list(c, k, one, true);
		json_decref(one);
	}
}
