/*
 * core/web/template.h - the WebUI's templates: a logic-less mustache subset rendered from
 * jansson view models, escaped for the HTML context each tag stands in.
 *
 * Syntax (docs: rezus.conf(5), "Templates"):
 *   {{name}} {{a.b.c}} {{.}}   a value, escaped for its context (below)
 *   {{{name}}} {{& name}}       raw, unescaped: only in HTML text, only where so marked
 *   {{#s}}...{{/s}}             a section: false, null, missing, "", 0 and [] hide it; an
 *                               array repeats it with each item as the context ("."), an
 *                               object or another scalar pushes itself, true shows it once
 *   {{^s}}...{{/s}}             inverted: shown exactly when {{#s}} would be hidden
 *   {{> name}}                  a partial: the template of that name, in the same context
 *   {{! comment}}               nothing
 * A name is looked up from the innermost context outwards (like mustache); in a dotted name
 * the first part is found that way and the rest inside it. Missing values render empty.
 * There is no standalone-line trimming and no delimiter change.
 *
 * Contexts, decided when the template is compiled (templates are HTML we write):
 *   HTML text              & < > " ' become entities
 *   quoted attribute value the same
 *   URL attribute value    (href, src, action, formaction, hx-get, hx-post, hx-put,
 *                          hx-patch, hx-delete, sse-connect, poster, cite, data): a value
 *                          that may begin the URL must be relative or http(s) (else it
 *                          becomes "#"); then it is percent-encoded (after a literal ? or #
 *                          every reserved character too) and escaped as an attribute
 * A compile error: a tag inside <script> or <style>, an HTML comment or declaration, a tag
 * name, an attribute name or an unquoted attribute value; a value between attributes; a
 * value in a script or style attribute (on*, style, srcdoc, hx-on*, hx-vals, hx-headers,
 * x-*, @*, :*: pass data through data-* attributes instead); a raw value or a partial
 * inside a tag; a section that closes in another HTML context than it opened; a template
 * that ends inside a tag, comment or script.
 */
#ifndef RZ_TEMPLATE_H
#define RZ_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/base/errors.h"

/* The bounds (documented in rezus.conf(5), LIMITS). */
#define RZ_TPL_MAX_SOURCE        (1024 * 1024)      /* bytes of one template */
#define RZ_TPL_MAX_TEMPLATES     1024               /* templates in a set */
#define RZ_TPL_MAX_NAME          128                /* a template's name, a tag's name */
#define RZ_TPL_MAX_NESTING       32                 /* sections open at once in one template */
#define RZ_TPL_MAX_PARTIAL_DEPTH 16                 /* partials inside partials, when rendering */
#define RZ_TPL_MAX_OUTPUT        (16 * 1024 * 1024) /* bytes of one render's result */

typedef struct rz_tpl_set rz_tpl_set_t; /* named templates; partials by name */

/* One template's text, as the build embeds it or a test gives it. */
typedef struct rz_tpl_source {
	const char *name; /* "layout", "pages/dashboard": the path without .html */
	const char *file; /* where it came from, for errors; NULL: name + ".html" */
	const char *text; /* not NUL-terminated necessarily */
	size_t len;
} rz_tpl_source_t;

/* Compile every template of the embedded table (or of dir, the web.dir override, when not
 * NULL: *.html files under it, named by their path without .html, e.g. "pages/dashboard").
 * Errors (RZ_EPARSE, REZUS_ETOOBIG, -errno) name the file, line and column:
 * "DIR/pages/x.html:3:7: unclosed section 'items'". dir is borrowed.
 * On success the caller owns *out; release with rz_tpl_set_free(). */
int rz_tpl_set_load(rz_tpl_set_t **out, const char *dir, rz_err_t *err);

/* The same from n sources (borrowed — copied before the call returns). Names must be
 * unique and every partial must name one of them. */
int rz_tpl_set_compile(rz_tpl_set_t **out, const rz_tpl_source_t *src, size_t n, rz_err_t *err);

/* Accepts NULL. */
void rz_tpl_set_free(rz_tpl_set_t *s);

/* Render template name with view (borrowed) into a malloc'd NUL-terminated string; *len
 * (may be NULL) gets its length. Errors: RZ_ENOTFOUND (no such template), REZUS_ETOOBIG
 * (the result would pass RZ_TPL_MAX_OUTPUT: nothing is returned, never a truncated page),
 * REZUS_ERENDER (partials nested deeper than RZ_TPL_MAX_PARTIAL_DEPTH), -ENOMEM.
 * On success the caller owns *out; release with free(). s may be used by several threads. */
int rz_tpl_render(const rz_tpl_set_t *s, const char *name, const json_t *view, char **out,
                  size_t *len, rz_err_t *err);

/* Whether the set holds a template of that name. */
bool rz_tpl_has(const rz_tpl_set_t *s, const char *name);

/* The table tools/tplc writes into the build's core/web/templates.gen.c (every template of
 * web/templates, validated at build time), sorted by name. */
extern const rz_tpl_source_t rz__tpl_embedded[];
extern const size_t rz__tpl_embedded_n;

#endif /* RZ_TEMPLATE_H */
