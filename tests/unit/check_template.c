/*
 * tests/unit/check_template.c - the WebUI's template engine (core/web/template.c):
 * escaping by context, sections, lookups, partials, the compile errors and the bounds.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "core/web/template.h"
#include "testutil.h"

static json_t *view(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);

	ck_assert_msg(v != NULL, "bad test JSON: %s", jerr.text);
	return v;
}

/* Render the template "t" (and "p", "q" as partials when given) with the view. */
static char *render3(const char *t, const char *p, const char *q, const char *json)
{
	rz_tpl_source_t src[3] = { { .name = "t", .text = t, .len = strlen(t) } };
	rz_tpl_set_t *set = NULL;
	rz_err_t err = { 0 };
	json_t *v = view(json);
	size_t n = 1, len = 0;
	char *out = NULL;

	if (p != NULL) {
		src[n++] = (rz_tpl_source_t){ .name = "p", .text = p, .len = strlen(p) };
	}
	if (q != NULL) {
		src[n++] = (rz_tpl_source_t){ .name = "q", .text = q, .len = strlen(q) };
	}
	ck_assert_msg(rz_tpl_set_compile(&set, src, n, &err) == 0, "compile: %s", err.msg);
	ck_assert_msg(rz_tpl_render(set, "t", v, &out, &len, &err) == 0, "render: %s", err.msg);
	ck_assert_uint_eq(len, strlen(out));
	rz_tpl_set_free(set);
	json_decref(v);
	return out;
}

static char *render(const char *t, const char *json)
{
	return render3(t, NULL, NULL, json);
}

#define ck_render(t, json, want)                                                                   \
	do {                                                                                       \
		char *got_ = render(t, json);                                                      \
		ck_assert_str_eq(got_, want);                                                      \
		free(got_);                                                                        \
	} while (0)

/* The compile error of a template "t", as text. */
static const char *compile_error(const char *t, rz_err_t *err)
{
	rz_tpl_source_t src = {
		.name = "t", .file = "web/templates/t.html", .text = t, .len = strlen(t)
	};
	rz_tpl_set_t *set = NULL;
	int rc = rz_tpl_set_compile(&set, &src, 1, err);

	ck_assert_msg(rc < 0, "compiled: %s", t);
	ck_assert_ptr_null(set);
	return err->msg;
}

#define ck_compile_error(t, want_code, want)                                                       \
	do {                                                                                       \
		rz_err_t err_ = { 0 };                                                             \
		const char *msg_ = compile_error(t, &err_);                                        \
		ck_assert_int_eq(err_.code, want_code);                                            \
		ck_assert_msg(strstr(msg_, want) != NULL, "'%s' lacks '%s'", msg_, want);          \
	} while (0)

START_TEST(test_text_escaped)
{
	ck_render("<p>{{v}}</p>", "{\"v\": \"<b>&\\\"'</b>\"}",
	          "<p>&lt;b&gt;&amp;&quot;&#39;&lt;/b&gt;</p>");
	ck_render("<p>{{v}}</p>", "{\"v\": \"<script>alert(1)</script>\"}",
	          "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>");
	/* Numbers, booleans; null, objects and arrays render empty. */
	ck_render("{{i}} {{r}} {{t}} {{f}} [{{n}}{{o}}{{a}}]",
	          "{\"i\": -42, \"r\": 1.5, \"t\": true, \"f\": false, \"n\": null, \"o\": {}, "
	          "\"a\": [1]}",
	          "-42 1.5 true false []");
}
END_TEST

START_TEST(test_attribute_escaped)
{
	ck_render("<input value=\"{{v}}\" title='{{v}}'>", "{\"v\": \"\\\" onmouseover='x' <&>\"}",
	          "<input value=\"&quot; onmouseover=&#39;x&#39; &lt;&amp;&gt;\" "
	          "title='&quot; onmouseover=&#39;x&#39; &lt;&amp;&gt;'>");
	ck_render("<div class=\"a {{#on}}b {{c}}{{/on}}\">", "{\"on\": true, \"c\": \"\\\"x\"}",
	          "<div class=\"a b &quot;x\">");
}
END_TEST

START_TEST(test_url_neutralised)
{
	static const char *const bad[] = { "javascript:alert(1)",
		                           "JavaScript:alert(1)",
		                           " \x01javascript:alert(1)",
		                           "java\tscript:alert(1)",
		                           "java\nscript:alert(1)",
		                           "data:text/html,<script>alert(1)</script>",
		                           "vbscript:x",
		                           "mailto:a@b" };
	char json[256], *got;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *v = json_pack("{ss}", "u", bad[i]);
		char *text = json_dumps(v, 0);
		snprintf(json, sizeof(json), "%s", text);
		free(text);
		json_decref(v);
		got =
		    render("<a href=\"{{u}}\">x</a><form action='{{u}}'></form>"
		           "<div hx-get=\"{{u}}\" sse-connect=\"{{u}}\"></div><img src=\"{{u}}\">",
		           json);
		ck_assert_str_eq(got, "<a href=\"#\">x</a><form action='#'></form>"
		                      "<div hx-get=\"#\" sse-connect=\"#\"></div><img src=\"#\">");
		free(got);
	}
	/* A literal prefix that does not fix the scheme does not help. */
	ck_render("<a href=\"java{{u}}\">", "{\"u\": \"script:alert(1)\"}", "<a href=\"java#\">");
	/* Nor does a value before it, or a section that may be skipped. */
	ck_render("<a href=\"{{e}}{{u}}\">", "{\"e\": \"\", \"u\": \"javascript:x\"}",
	          "<a href=\"#\">");
	ck_render("<a href=\"{{#s}}/x/{{/s}}{{u}}\">", "{\"u\": \"javascript:x\"}",
	          "<a href=\"#\">");
}
END_TEST

START_TEST(test_url_kept_and_encoded)
{
	ck_render("<a href=\"{{u}}\">", "{\"u\": \"https://example.org/a?b=1&c=2#d\"}",
	          "<a href=\"https://example.org/a?b=1&amp;c=2#d\">");
	ck_render("<a href=\"{{u}}\">", "{\"u\": \"HTTP://x/\"}", "<a href=\"HTTP://x/\">");
	ck_render("<a href=\"{{u}}\">", "{\"u\": \"/api/hassio_ingress/tok/tenants\"}",
	          "<a href=\"/api/hassio_ingress/tok/tenants\">");
	ck_render("<a href=\"{{u}}\">", "{\"u\": \"#top\"}", "<a href=\"#top\">");
	ck_render("<a href=\"{{u}}\">", "{\"u\": \"tenants/a b\\\"<x>'\"}",
	          "<a href=\"tenants/a%20b%22%3Cx%3E&#39;\">");
	/* After a literal scheme or path: normalised, not checked. */
	ck_render("<a href=\"/tenants/{{n}}/runs\">", "{\"n\": \"a:b c\"}",
	          "<a href=\"/tenants/a:b%20c/runs\">");
	/* After ? or #: every reserved character encoded. */
	ck_render("<a hx-get=\"/audit?user={{u}}&amp;x=1\">", "{\"u\": \"a&b=c/d?#\\u00e9\"}",
	          "<a hx-get=\"/audit?user=a%26b%3Dc%2Fd%3F%23%C3%A9&amp;x=1\">");
	/* Not a URL attribute: only escaped. */
	ck_render("<a title=\"{{u}}\">", "{\"u\": \"javascript:x\"}", "<a title=\"javascript:x\">");
}
END_TEST

START_TEST(test_raw_only_where_marked)
{
	ck_render("{{{v}}}|{{& v}}|{{v}}", "{\"v\": \"<b>x</b>\"}",
	          "<b>x</b>|<b>x</b>|&lt;b&gt;x&lt;/b&gt;");
	ck_compile_error("<a title=\"{{{v}}}\">", RZ_EPARSE, "t.html:1:11: a raw value");
	ck_compile_error("<a title=\"{{& v}}\">", RZ_EPARSE, "a raw value");
}
END_TEST

START_TEST(test_sections)
{
	/* Arrays repeat, with the item as "." and as the innermost context. */
	ck_render("{{#a}}[{{.}}]{{/a}}", "{\"a\": [1, \"x\", true]}", "[1][x][true]");
	ck_render("<ul>{{#items}}<li>{{name}}</li>{{/items}}</ul>",
	          "{\"items\": [{\"name\": \"a\"}, {\"name\": \"<b>\"}]}",
	          "<ul><li>a</li><li>&lt;b&gt;</li></ul>");
	/* Objects push themselves; true shows once; the hidden values. */
	ck_render("{{#o}}{{k}}{{/o}}", "{\"o\": {\"k\": \"v\"}}", "v");
	ck_render("{{#t}}yes{{/t}}", "{\"t\": true}", "yes");
	ck_render("{{#f}}a{{/f}}{{#n}}b{{/n}}{{#m}}c{{/m}}{{#e}}d{{/e}}{{#z}}e{{/z}}{{#s}}f{{/s}}",
	          "{\"f\": false, \"n\": null, \"e\": [], \"z\": 0, \"s\": \"\"}", "");
	/* Inverted sections: exactly when the section is hidden. */
	ck_render("{{^e}}none{{/e}}{{^a}}no{{/a}}{{^m}}missing{{/m}}", "{\"e\": [], \"a\": [1]}",
	          "nonemissing");
	/* Nested, with the same name inside. */
	ck_render("{{#a}}{{#b}}{{c}}{{/b}}{{/a}}", "{\"a\": {\"b\": [{\"c\": 1}, {\"c\": 2}]}}",
	          "12");
	/* Between attributes and inside values. */
	ck_render("<input type=\"checkbox\" {{#on}}checked{{/on}}>", "{\"on\": true}",
	          "<input type=\"checkbox\" checked>");
	ck_render("<input type=\"checkbox\" {{#on}}checked{{/on}}>", "{\"on\": false}",
	          "<input type=\"checkbox\" >");
	ck_render("<option {{#s}}selected {{/s}}value=\"{{v}}\">", "{\"s\": 1, \"v\": \"x\"}",
	          "<option selected value=\"x\">");
}
END_TEST

START_TEST(test_lookup)
{
	/* Missing keys are empty; dotted names; "." */
	ck_render("[{{nope}}][{{a.b.c}}][{{a.x.c}}][{{a.b.c.d}}]", "{\"a\": {\"b\": {\"c\": 7}}}",
	          "[][7][][]");
	/* The stack: an inner context first, then outwards. */
	ck_render("{{#items}}{{name}}@{{tenant}} {{/items}}",
	          "{\"tenant\": \"t1\", \"items\": [{\"name\": \"a\"}, {\"name\": \"b\", "
	          "\"tenant\": \"t2\"}]}",
	          "a@t1 b@t2 ");
	/* A dotted name's first part is found outwards, the rest only inside it. */
	ck_render("{{#o}}{{user.name}}|{{x.y}}{{/o}}",
	          "{\"user\": {\"name\": \"u\"}, \"x\": {\"y\": 1}, \"o\": {\"x\": {}}}", "u|");
	/* A view that is not an object. */
	ck_render("{{.}}", "\"<s>\"", "&lt;s&gt;");
}
END_TEST

START_TEST(test_partials)
{
	char *got = render3("<main>{{#users}}{{> p}}{{/users}}</main>", "<b>{{name}}</b>{{> q}}",
	                    "({{role}})",
	                    "{\"role\": \"r\", \"users\": [{\"name\": \"a\"}, "
	                    "{\"name\": \"<x>\", \"role\": \"admin\"}]}");
	ck_assert_str_eq(got, "<main><b>a</b>(r)<b>&lt;x&gt;</b>(admin)</main>");
	free(got);

	/* A recursive partial renders as deep as the data goes... */
	got = render3("{{> p}}", "<li>{{n}}<ul>{{#kids}}{{> p}}{{/kids}}</ul></li>", NULL,
	              "{\"n\": 1, \"kids\": [{\"n\": 2, \"kids\": [{\"n\": 3, \"kids\": []}]}]}");
	ck_assert_str_eq(got, "<li>1<ul><li>2<ul><li>3<ul></ul></li></ul></li></ul></li>");
	free(got);
}
END_TEST

START_TEST(test_partial_bounds)
{
	rz_tpl_source_t src[2] = { { .name = "t", .text = "{{> p}}", .len = 7 },
		                   { .name = "p", .text = "x{{> p}}", .len = 8 } };
	rz_tpl_set_t *set = NULL;
	rz_err_t err = { 0 };
	json_t *v = json_object();
	char *out = (char *)"unset";

	/* ...and no deeper than the bound. */
	ck_assert_int_eq(rz_tpl_set_compile(&set, src, 2, &err), 0);
	ck_assert_int_eq(rz_tpl_render(set, "t", v, &out, NULL, &err), REZUS_ERENDER);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(err.msg, "partials nested deeper than 16") != NULL, "%s", err.msg);
	ck_assert_int_eq(rz_tpl_render(set, "nope", v, &out, NULL, &err), RZ_ENOTFOUND);
	ck_assert(rz_tpl_has(set, "p"));
	ck_assert(!rz_tpl_has(set, "nope"));
	rz_tpl_set_free(set);

	/* A partial that names no template, a duplicate name. */
	src[1].text = "{{> nope}}";
	src[1].len = strlen(src[1].text);
	ck_assert_int_eq(rz_tpl_set_compile(&set, src, 2, &err), RZ_EPARSE);
	ck_assert_str_eq(err.msg, "p.html:1:1: no template for the partial 'nope'");
	src[1].name = "t";
	ck_assert_int_eq(rz_tpl_set_compile(&set, src, 2, &err), RZ_EPARSE);
	ck_assert_msg(strstr(err.msg, "template 't' is also in") != NULL, "%s", err.msg);
	json_decref(v);
}
END_TEST

START_TEST(test_comments)
{
	ck_render("a{{! a comment with {{braces} and <tags> }}b", "{}", "ab");
	ck_render("<!-- html {{! mustache }} -->x", "{}", "<!-- html  -->x");
	ck_render("<input {{! note }}type=\"text\">", "{}", "<input type=\"text\">");
}
END_TEST

START_TEST(test_malformed)
{
	ck_compile_error("a\n  {{#s}}x", RZ_EPARSE,
	                 "web/templates/t.html:2:3: unclosed section 's'");
	ck_compile_error("{{#a}}{{#b}}\n{{/a}}", RZ_EPARSE,
	                 "t.html:2:1: closes section 'b' (opened at 1:7) with 'a'");
	ck_compile_error("x{{/a}}", RZ_EPARSE, "t.html:1:2: closes no open section 'a'");
	ck_compile_error("ab\ncd {{name", RZ_EPARSE, "t.html:2:4: unterminated tag");
	ck_compile_error("{{{name}}", RZ_EPARSE, "t.html:1:1: unterminated tag");
	ck_compile_error("{{}}", RZ_EPARSE, "empty tag name");
	ck_compile_error("{{a b}}", RZ_EPARSE, "invalid tag name");
	ck_compile_error("{{a..b}}", RZ_EPARSE, "invalid tag name");
	ck_compile_error("{{=<% %>=}}", RZ_EPARSE, "delimiter changes");
	ck_compile_error("<script>\nvar x = {{v}};</script>", RZ_EPARSE,
	                 "t.html:2:9: a template tag cannot stand inside 'script'");
	ck_compile_error("<STYLE>{{#a}}{{/a}}</STYLE>", RZ_EPARSE, "inside 'style'");
	ck_compile_error("<a href={{u}}>", RZ_EPARSE, "t.html:1:9: a template tag in an unquoted");
	ck_compile_error("<a href=/x/{{u}}>", RZ_EPARSE, "unquoted attribute value");
	ck_compile_error("<a {{v}}>", RZ_EPARSE, "between attributes");
	ck_compile_error("<{{t}}>", RZ_EPARSE, "tag name");
	ck_compile_error("<a data-{{n}}=\"1\">", RZ_EPARSE, "attribute name");
	ck_compile_error("<a onclick=\"go('{{v}}')\">", RZ_EPARSE,
	                 "t.html:1:17: a value cannot stand in a script or style attribute (pass "
	                 "it in a data-* attribute): 'onclick'");
	ck_compile_error("<p style=\"color: {{c}}\">", RZ_EPARSE, "'style'");
	ck_compile_error("<p onaverylongeventname_thatdoesnotfit=\"{{c}}\">", RZ_EPARSE,
	                 "script or style attribute");
	ck_compile_error("<div x-data=\"{ v: '{{v}}' }\">", RZ_EPARSE, "'x-data'");
	ck_compile_error("<b @click=\"{{v}}\">", RZ_EPARSE, "'@click'");
	ck_compile_error("<b hx-vals='{\"a\": \"{{v}}\"}'>", RZ_EPARSE, "'hx-vals'");
	ck_compile_error("<!-- {{v}} -->", RZ_EPARSE, "HTML comment");
	ck_compile_error("<a title=\"{{> p}}\">", RZ_EPARSE, "a partial cannot stand");
	ck_compile_error(
	    "<a title=\"{{#s}}\">{{/s}}", RZ_EPARSE,
	    "t.html:1:19: section 's' (opened at 1:11) closes in another HTML context");
	ck_compile_error("<p>{{#s}}<b {{/s}}>", RZ_EPARSE, "another HTML context");
	ck_compile_error("<a href=\"x", RZ_EPARSE, "t.html:1:1: the template ends inside a tag");
	ck_compile_error("<script>x", RZ_EPARSE, "t.html:1:1: the template ends inside 'script'");
}
END_TEST

/* A NUL byte (given by length) and the nesting bound. */
START_TEST(test_source_bounds)
{
	rz_tpl_source_t src = { .name = "t", .text = "a\0b", .len = 3 };
	rz_tpl_set_t *set = NULL;
	rz_err_t err = { 0 };
	char deep[RZ_TPL_MAX_NESTING * 12 + 1] = "";
	char *big;

	ck_assert_int_eq(rz_tpl_set_compile(&set, &src, 1, &err), RZ_EPARSE);
	ck_assert_str_eq(err.msg, "t.html:1:2: NUL byte in the template");

	for (int i = 0; i <= RZ_TPL_MAX_NESTING; i++) {
		strcat(deep, "{{#a}}");
	}
	src.text = deep;
	src.len = strlen(deep);
	ck_assert_int_eq(rz_tpl_set_compile(&set, &src, 1, &err), RZ_EPARSE);
	ck_assert_msg(strstr(err.msg, "t.html:1:193: sections nested deeper than 32") != NULL, "%s",
	              err.msg);

	big = malloc(RZ_TPL_MAX_SOURCE + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', RZ_TPL_MAX_SOURCE + 1);
	src.text = big;
	src.len = RZ_TPL_MAX_SOURCE + 1;
	ck_assert_int_eq(rz_tpl_set_compile(&set, &src, 1, &err), REZUS_ETOOBIG);
	src.len = RZ_TPL_MAX_SOURCE;
	ck_assert_int_eq(rz_tpl_set_compile(&set, &src, 1, &err), 0);
	rz_tpl_set_free(set);
	free(big);
}
END_TEST

/* A render that would pass the output bound fails; it never returns a cut page. */
START_TEST(test_output_bound)
{
	const char *t = "{{#rows}}{{v}}{{/rows}}";
	rz_tpl_source_t src = { .name = "t", .text = t, .len = strlen(t) };
	rz_tpl_set_t *set = NULL;
	rz_err_t err = { 0 };
	json_t *v = json_object(), *rows = json_array();
	char *chunk = malloc(1024 * 1024 + 1), *out = NULL;
	size_t len = 0;

	ck_assert_ptr_nonnull(chunk);
	memset(chunk, '<', 1024 * 1024); /* 4 MiB once escaped */
	chunk[1024 * 1024] = '\0';
	for (int i = 0; i < 3; i++) {
		json_array_append_new(rows, json_pack("{ss}", "v", chunk));
	}
	json_object_set_new(v, "rows", rows);
	ck_assert_int_eq(rz_tpl_set_compile(&set, &src, 1, &err), 0);
	ck_assert_int_eq(rz_tpl_render(set, "t", v, &out, &len, &err), 0);
	ck_assert_uint_eq(len, 12u * 1024 * 1024);
	free(out);
	json_array_append_new(rows, json_pack("{ss}", "v", chunk));
	ck_assert_int_eq(rz_tpl_render(set, "t", v, &out, &len, &err), 0);
	ck_assert_uint_eq(len, RZ_TPL_MAX_OUTPUT); /* exactly the bound */
	free(out);
	json_array_append_new(rows, json_pack("{ss}", "v", "<"));
	out = (char *)"unset";
	ck_assert_int_eq(rz_tpl_render(set, "t", v, &out, &len, &err), REZUS_ETOOBIG);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(err.msg, "would pass 16777216 bytes") != NULL, "%s", err.msg);
	rz_tpl_set_free(set);
	json_decref(v);
	free(chunk);
}
END_TEST

/* The embedded table (tools/tplc's output) and the web.dir override. */
START_TEST(test_embedded_and_dir)
{
	rz_tpl_set_t *set = NULL;
	rz_err_t err = { 0 };
	json_t *v = view("{\"title\": \"<T>\", \"user\": {\"name\": \"ann\"}, \"link\": "
	                 "\"javascript:x\", \"items\": [\"a\"], \"kind\": \"k\"}");
	char *out = NULL, *dir = rzt_tmpdir(), path[512];

	ck_assert_int_eq(rz_tpl_set_load(&set, NULL, &err), 0);
	ck_assert(rz_tpl_has(set, "layout"));
	ck_assert(rz_tpl_has(set, "pages/hello"));
	ck_assert_int_eq(rz_tpl_render(set, "layout", v, &out, NULL, &err), 0);
	ck_assert_msg(strstr(out, "<title>&lt;T&gt; ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "<h1>Hello, ann</h1>") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "<a href=\"#\"><span class=\"item k\">a</span></a>") != NULL,
	              "%s", out);
	free(out);
	rz_tpl_set_free(set);

	snprintf(path, sizeof(path), "%s/pages", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/layout.html", dir);
	rzt_write_file(path, "[{{> pages/x}}]");
	snprintf(path, sizeof(path), "%s/pages/x.html", dir);
	rzt_write_file(path, "{{user.name}}");
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	rzt_write_file(path, "{{#ignored");
	ck_assert_int_eq(rz_tpl_set_load(&set, dir, &err), 0);
	ck_assert_int_eq(rz_tpl_render(set, "layout", v, &out, NULL, &err), 0);
	ck_assert_str_eq(out, "[ann]");
	free(out);
	rz_tpl_set_free(set);

	/* Errors name the file under web.dir. */
	snprintf(path, sizeof(path), "%s/pages/x.html", dir);
	rzt_write_file(path, "ok\n<p>{{#user}}");
	ck_assert_int_eq(rz_tpl_set_load(&set, dir, &err), RZ_EPARSE);
	snprintf(path, sizeof(path), "%s/pages/x.html:2:4: unclosed section 'user'", dir);
	ck_assert_str_eq(err.msg, path);
	ck_assert_ptr_null(set);
	snprintf(path, sizeof(path), "%s/nope", dir);
	ck_assert_int_eq(rz_tpl_set_load(&set, path, &err), -ENOENT);
	ck_assert_msg(strstr(err.msg, "/nope: ") != NULL, "%s", err.msg);

	rzt_rmrf(dir);
	free(dir);
	json_decref(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("template");
	TCase *tc = tcase_create("template");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_text_escaped);
	tcase_add_test(tc, test_attribute_escaped);
	tcase_add_test(tc, test_url_neutralised);
	tcase_add_test(tc, test_url_kept_and_encoded);
	tcase_add_test(tc, test_raw_only_where_marked);
	tcase_add_test(tc, test_sections);
	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_partials);
	tcase_add_test(tc, test_partial_bounds);
	tcase_add_test(tc, test_comments);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_source_bounds);
	tcase_add_test(tc, test_output_bound);
	tcase_add_test(tc, test_embedded_and_dir);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
