/* tests/unit/check_selector.c - label and field selectors (PROTOCOLS.md §6). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/model/fields.h"
#include "core/model/selector.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct match_case {
	const char *selector;
	const char *json; /* labels (or, for fields, the object); NULL: a NULL pointer */
	bool match;
};

struct error_case {
	const char *selector;
	const char *msg;
};

static const struct match_case label_cases[] = {
	/* empty selectors match everything */
	{ "", "{}", true },
	{ "", NULL, true },
	{ " \t ", "{\"a\":\"1\"}", true },
	/* = and == */
	{ "a=1", "{\"a\":\"1\"}", true },
	{ "a=1", "{\"a\":\"2\"}", false },
	{ "a=1", "{\"b\":\"1\"}", false },
	{ "a=1", NULL, false },
	{ "a==1", "{\"a\":\"1\"}", true },
	{ "a==1", "{\"a\":\"10\"}", false },
	{ "a=X", "{\"a\":\"x\"}", false },
	/* != matches a different value and an absent key */
	{ "a!=1", "{\"a\":\"1\"}", false },
	{ "a!=1", "{\"a\":\"2\"}", true },
	{ "a!=1", "{\"b\":\"1\"}", true },
	{ "a!=1", NULL, true },
	/* in */
	{ "a in (1,2)", "{\"a\":\"2\"}", true },
	{ "a in (1,2)", "{\"a\":\"1\"}", true },
	{ "a in (1,2)", "{\"a\":\"3\"}", false },
	{ "a in (1,2)", "{}", false },
	{ "a in (1)", NULL, false },
	/* notin matches a non-member and an absent key */
	{ "a notin (1,2)", "{\"a\":\"2\"}", false },
	{ "a notin (1,2)", "{\"a\":\"3\"}", true },
	{ "a notin (1,2)", "{}", true },
	{ "a notin (1)", NULL, true },
	/* existence */
	{ "a", "{\"a\":\"\"}", true },
	{ "a", "{\"a\":\"x\"}", true },
	{ "a", "{\"b\":\"x\"}", false },
	{ "a", NULL, false },
	{ "!a", "{\"a\":\"1\"}", false },
	{ "!a", "{\"a\":\"\"}", false },
	{ "!a", "{\"b\":\"1\"}", true },
	{ "!a", NULL, true },
	/* several requirements must all hold */
	{ "a=1,b!=2,c in (x,y),d notin (z),e,!f",
	  "{\"a\":\"1\",\"b\":\"3\",\"c\":\"y\",\"d\":\"w\",\"e\":\"\"}", true },
	{ "a=1,b!=2,c in (x,y),d notin (z),e,!f", "{\"a\":\"1\",\"c\":\"x\",\"e\":\"\"}", true },
	{ "a=1,b!=2,c in (x,y),d notin (z),e,!f",
	  "{\"a\":\"1\",\"b\":\"2\",\"c\":\"y\",\"e\":\"\"}", false },
	{ "a=1,b!=2,c in (x,y),d notin (z),e,!f",
	  "{\"a\":\"1\",\"c\":\"y\",\"e\":\"\",\"f\":\"1\"}", false },
	{ "a=1,b!=2,c in (x,y),d notin (z),e,!f", "{\"a\":\"1\",\"c\":\"y\"}", false },
	{ "a=1,b!=2,c in (x,y),d notin (z),e,!f",
	  "{\"a\":\"1\",\"c\":\"y\",\"d\":\"z\",\"e\":\"\"}", false },
	{ "a=1,a=2", "{\"a\":\"1\"}", false },
	/* whitespace around everything */
	{ "  a  =  1  ,  b  in  ( x , y )  ,  ! c  ", "{\"a\":\"1\",\"b\":\"y\"}", true },
	{ "  a  =  1  ,  b  in  ( x , y )  ,  ! c  ", "{\"a\":\"1\",\"b\":\"y\",\"c\":\"\"}",
	  false },
	{ "a\t==\t1\n,\nb\r\n", "{\"a\":\"1\",\"b\":\"2\"}", true },
	{ "a != 1 , b notin ( 2 )", "{\"a\":\"2\",\"b\":\"3\"}", true },
	{ "a in(1)", "{\"a\":\"1\"}", true },
	{ "a notin(1)", "{\"a\":\"1\"}", false },
	/* prefixed keys */
	{ "example.com/role=db", "{\"example.com/role\":\"db\"}", true },
	{ "example.com/role=db", "{\"role\":\"db\"}", false },
	{ "example.com/role in (db,web)", "{\"example.com/role\":\"web\"}", true },
	{ "example.com/role notin (db,web)", "{\"example.com/role\":\"cache\"}", true },
	{ "!example.com/role", "{\"example.com/role\":\"db\"}", false },
	{ "app.kubernetes.io/name", "{\"app.kubernetes.io/name\":\"x\"}", true },
	/* empty values */
	{ "a=", "{\"a\":\"\"}", true },
	{ "a=", "{\"a\":\"x\"}", false },
	{ "a=", "{}", false },
	{ "a==", "{\"a\":\"\"}", true },
	{ "a!=", "{\"a\":\"\"}", false },
	{ "a!=", "{\"a\":\"x\"}", true },
	{ "a!=", "{}", true },
	{ "a= ,b", "{\"a\":\"\",\"b\":\"1\"}", true },
	{ "a in (x,)", "{\"a\":\"\"}", true },
	{ "a in (,x)", "{\"a\":\"x\"}", true },
	{ "a in (x,)", "{\"a\":\"y\"}", false },
	/* label values that are not strings: never equal, always different, still present */
	{ "a=1", "{\"a\":1}", false },
	{ "a!=1", "{\"a\":1}", true },
	{ "a in (1,true)", "{\"a\":true}", false },
	{ "a notin (1)", "{\"a\":1}", true },
	{ "a=", "{\"a\":null}", false },
	{ "a", "{\"a\":1}", true },
	{ "!a", "{\"a\":null}", false },
	/* labels that are not an object count as no labels */
	{ "a", "[\"a\"]", false },
	{ "!a", "[\"a\"]", true },
	/* operator words are only operators after a key */
	{ "in in (in)", "{\"in\":\"in\"}", true },
	{ "notin notin (notin)", "{\"notin\":\"notin\"}", false },
	{ "notin notin (notin)", "{\"notin\":\"x\"}", true },
	{ "inx=in", "{\"inx\":\"in\"}", true },
	{ "a=notin", "{\"a\":\"notin\"}", true },
};

/* Syntax errors whose message does not depend on core/model/fields.c. */
static const struct error_case label_errors[] = {
	{ "a in b", "invalid label selector 'a in b': expected '(' after 'in' at position 5" },
	{ "a notin b",
	  "invalid label selector 'a notin b': expected '(' after 'notin' at position 8" },
	{ "a in", "invalid label selector 'a in': expected '(' after 'in' at position 4" },
	{ "a in,b", "invalid label selector 'a in,b': expected '(' after 'in' at position 4" },
	{ "a in ()", "invalid label selector 'a in ()': values set can't be empty at position 6" },
	{ "a notin (  )",
	  "invalid label selector 'a notin (  )': values set can't be empty at position 11" },
	{ "a in (x", "invalid label selector 'a in (x': expected ',' or ')' at position 7" },
	{ "a in (x y)", "invalid label selector 'a in (x y)': expected ',' or ')' at position 8" },
	{ "a in (x=)", "invalid label selector 'a in (x=)': expected ',' or ')' at position 7" },
	{ "a=1,,b=2", "invalid label selector 'a=1,,b=2': unexpected ',' at position 4" },
	{ "a=1, ,b=2", "invalid label selector 'a=1, ,b=2': unexpected ',' at position 5" },
	{ ",a=1", "invalid label selector ',a=1': unexpected ',' at position 0" },
	{ ",", "invalid label selector ',': unexpected ',' at position 0" },
	{ "a=1,", "invalid label selector 'a=1,': expected a key at position 4" },
	{ "a=1 , ", "invalid label selector 'a=1 , ': expected a key at position 6" },
	{ "=1", "invalid label selector '=1': expected a key at position 0" },
	{ "!", "invalid label selector '!': expected a key at position 1" },
	{ "!!a", "invalid label selector '!!a': expected a key at position 1" },
	{ "(a)", "invalid label selector '(a)': expected a key at position 0" },
	{ "a=1 b=2", "invalid label selector 'a=1 b=2': expected ',' at position 4" },
	{ "!a=1", "invalid label selector '!a=1': expected ',' at position 2" },
	{ "a=1)", "invalid label selector 'a=1)': expected ',' at position 3" },
	{ "a=(x)", "invalid label selector 'a=(x)': expected ',' at position 2" },
	{ "a===b", "invalid label selector 'a===b': expected ',' at position 3" },
	{ "a in (x) y", "invalid label selector 'a in (x) y': expected ',' at position 9" },
	{ "a b", "invalid label selector 'a b': expected an operator at position 2" },
	{ "a inx (b)", "invalid label selector 'a inx (b)': expected an operator at position 2" },
	{ "a!b", "invalid label selector 'a!b': expected an operator at position 1" },
	{ "a ! = b", "invalid label selector 'a ! = b': expected an operator at position 2" },
	{ "a (b)", "invalid label selector 'a (b)': expected an operator at position 2" },
	{ "a=b@c", "invalid label selector 'a=b@c': unexpected character '@' at position 3" },
	{ "a@b", "invalid label selector 'a@b': unexpected character '@' at position 1" },
	{ "a=1;b=2", "invalid label selector 'a=1;b=2': unexpected character ';' at position 3" },
	{ "a in (x,@)",
	  "invalid label selector 'a in (x,@)': unexpected character '@' at position 8" },
	{ "a in @", "invalid label selector 'a in @': unexpected character '@' at position 5" },
	{ "a=\"b\"", "invalid label selector 'a=\"b\"': unexpected character '\"' at position 2" },
	{ "a=\xc3\xa9", "invalid label selector 'a=\xc3\xa9': unexpected byte 0xc3 at position 2" },
	{ "a=\xff", "invalid label selector 'a=?': unexpected byte 0xff at position 2" },
	{ "a\x01", "invalid label selector 'a?': unexpected byte 0x01 at position 1" },
};

static const char *const allowed[] = { "metadata.name", "metadata.namespace", "spec.replicas",
	                               NULL };

static const char object_json[] = "{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\","
                                  "\"labels\":{\"a\":\"1\"}},\"spec\":{\"replicas\":3},"
                                  "\"status\":{\"note\":\"a b(c)=d\"}}";

static const struct match_case field_cases[] = {
	{ "", object_json, true },
	{ "metadata.name=web", object_json, true },
	{ "metadata.name==web", object_json, true },
	{ "metadata.name=db", object_json, false },
	{ "metadata.name!=db", object_json, true },
	{ "metadata.name!=web", object_json, false },
	{ "metadata.name=web,metadata.namespace=default", object_json, true },
	{ "metadata.name=web,metadata.namespace!=default", object_json, false },
	{ "  metadata.name  =  web  ,  metadata.namespace != x ", object_json, true },
	/* a missing or non-string field reads as "" */
	{ "metadata.namespace=", "{\"metadata\":{\"name\":\"web\"}}", true },
	{ "metadata.namespace!=", "{\"metadata\":{\"name\":\"web\"}}", false },
	{ "metadata.namespace!=default", "{\"metadata\":{\"name\":\"web\"}}", true },
	{ "metadata.namespace=default", "{\"metadata\":{\"name\":\"web\"}}", false },
	{ "metadata.name=", "{\"metadata\":\"web\"}", true },
	{ "metadata.name=", NULL, true },
	{ "metadata.name!=", NULL, false },
	{ "spec.replicas=3", object_json, false },
	{ "spec.replicas=", object_json, true },
	{ "spec.replicas!=3", object_json, true },
	{ "metadata.name=", object_json, false },
	{ "metadata.name!=", object_json, true },
};

/* Field values are anything but ','; status.note is allowed only in this test. */
static const char *const allowed_note[] = { "status.note", NULL };

static const struct error_case field_errors[] = {
	{ "spec.x=1", "invalid field selector 'spec.x=1': field 'spec.x' is not supported (use "
	              "metadata.name, metadata.namespace, spec.replicas) at position 0" },
	{ "metadata.name=a, metadata.labels=b",
	  "invalid field selector 'metadata.name=a, metadata.labels=b': field 'metadata.labels' is "
	  "not supported (use metadata.name, metadata.namespace, spec.replicas) at position 17" },
	{ "metadata.name in (a)", "invalid field selector 'metadata.name in (a)': operator 'in' is "
	                          "not supported (use =, == or !=) at position 14" },
	{ "metadata.name notin (a)", "invalid field selector 'metadata.name notin (a)': operator "
	                             "'notin' is not supported (use =, == or !=) at position 14" },
	{ "!metadata.name",
	  "invalid field selector '!metadata.name': operator '!' is not supported "
	  "(use =, == or !=) at position 0" },
	{ "metadata.name", "invalid field selector 'metadata.name': expected an operator at "
	                   "position 13" },
	{ "metadata.name,metadata.namespace=a", "invalid field selector "
	                                        "'metadata.name,metadata.namespace=a': expected "
	                                        "an operator at position 13" },
	{ "metadata.name<a", "invalid field selector 'metadata.name<a': unexpected character '<' "
	                     "at position 13" },
	{ "metadata.name=a,,metadata.namespace=b", "invalid field selector "
	                                           "'metadata.name=a,,metadata.namespace=b': "
	                                           "unexpected ',' at position 16" },
	{ "metadata.name=a,", "invalid field selector 'metadata.name=a,': expected a key at "
	                      "position 16" },
	{ "=a", "invalid field selector '=a': expected a key at position 0" },
};

static json_t *load(const char *text)
{
	json_error_t error;
	json_t *v;

	if (text == NULL) {
		return NULL;
	}
	v = json_loads(text, JSON_DECODE_ANY, &error);
	ck_assert_msg(v != NULL, "bad test JSON '%s': %s", text, error.text);
	return v;
}

START_TEST(test_label_match)
{
	const struct match_case *c = &label_cases[_i];
	rz_err_t err = { 0 };
	rz_selector_t *sel = NULL;
	json_t *labels = load(c->json);

	ck_assert_msg(rz_selector_parse(c->selector, &sel, &err) == 0, "'%s': %s", c->selector,
	              err.msg);
	ck_assert_ptr_nonnull(sel);
	ck_assert_msg(rz_selector_match(sel, labels) == c->match, "'%s' on %s: want %s",
	              c->selector, c->json != NULL ? c->json : "NULL", c->match ? "true" : "false");
	rz_selector_free(sel);
	json_decref(labels);
}
END_TEST

static void check_error(const char *text, const char *const *fields, const char *want)
{
	rz_err_t err = { 0 };
	rz_selector_t *sel = (rz_selector_t *)&err; /* must be reset to NULL */
	int rc = fields != NULL ? rz_selector_parse_fields(text, fields, &sel, &err)
	                        : rz_selector_parse(text, &sel, &err);

	ck_assert_int_eq(rc, REZUS_EINVALID);
	ck_assert_int_eq(err.code, REZUS_EINVALID);
	ck_assert_ptr_null(sel);
	ck_assert_str_eq(err.msg, want);
}

START_TEST(test_label_errors)
{
	check_error(label_errors[_i].selector, NULL, label_errors[_i].msg);
}
END_TEST

/* Key and value errors quote rz_format_label_key/rz_format_label_value; the expected text is
 * built from what those functions say so the test holds whatever their wording. */
static void check_format_error(const char *text, const char *kind, const char *token, size_t pos)
{
	char reason[256];
	char want[1024];
	bool ok = strcmp(kind, "key") == 0 ? rz_format_label_key(token, reason, sizeof(reason))
	                                   : rz_format_label_value(token, reason, sizeof(reason));

	ck_assert_msg(!ok, "'%s' is a valid label %s", token, kind);
	snprintf(want, sizeof(want),
	         "invalid label selector '%s': invalid %s '%s': %s at position %zu", text, kind,
	         token, reason, pos);
	want[REZUS_ERR_MSG_MAX - 1] = '\0'; /* rz_err_t holds no more */
	check_error(text, NULL, want);
}

START_TEST(test_label_format_errors)
{
	char text[128];
	char token[65];

	check_format_error("-a=1", "key", "-a", 0);
	check_format_error("a-=1", "key", "a-", 0);
	check_format_error("b=1, ! -a", "key", "-a", 7);
	check_format_error("/a", "key", "/a", 0);
	check_format_error("a/b/c in (x)", "key", "a/b/c", 0);
	check_format_error("example.com/ in (x)", "key", "example.com/", 0);
	check_format_error("a=-1", "value", "-1", 2);
	check_format_error("a != x.", "value", "x.", 5);
	check_format_error("a in (x, _y)", "value", "_y", 9);
	check_format_error("a=b/c", "value", "b/c", 2);
	/* 64 characters: one too many for a name or a value */
	memset(token, 'n', 64);
	token[64] = '\0';
	snprintf(text, sizeof(text), "%s=1", token);
	check_format_error(text, "key", token, 0);
	snprintf(text, sizeof(text), "k=%s", token);
	check_format_error(text, "value", token, 2);
}
END_TEST

/* Long texts and tokens are cut in messages so the reason and position stay readable: at a
 * value or word boundary, with "...", never inside a word. */
START_TEST(test_long_texts_are_cut)
{
	char text[128] = "";
	char want[1024];
	char reason[256];

	for (int i = 0; i < 25; i++) {
		strcat(text, "a=1,");
	}
	ck_assert_uint_eq(strlen(text), 100);
	snprintf(want, sizeof(want),
	         "invalid label selector '%.79s...': expected a key at position 100", text);
	check_error(text, NULL, want);

	memset(text, 'x', 72);
	memcpy(text, "a=", 2);
	text[72] = '\0';
	ck_assert(!rz_format_label_value(text + 2, reason, sizeof(reason)));
	snprintf(want, sizeof(want),
	         "invalid label selector '%s': invalid value '%.64s...': %s at "
	         "position 2",
	         text, text + 2, reason);
	ck_assert_uint_lt(strlen(want), REZUS_ERR_MSG_MAX); /* all of it fits */
	check_error(text, NULL, want);
}
END_TEST

/* kubectl describe's query with a field the list lacks: the reason and the position come
 * whole, the list of fields ends with a whole one and ", ...", the selector's text is cut
 * at a value to the room left. */
START_TEST(test_unsupported_field_message)
{
	static const char *const events[] = {
		"metadata.name",
		"metadata.tenant",
		"metadata.namespace",
		"metadata.user",
		"involvedObject.kind",
		"involvedObject.name",
		"involvedObject.uid",
		"involvedObject.apiVersion",
		"reason",
		"type",
		NULL,
	};
	static const char text[] =
	    "involvedObject.name=demo,involvedObject.kind=Tenant,involvedObject.namespace=,"
	    "involvedObject.uid=44a85cab-3a4b-4306-9bf2-9097d62bf5fb";
	rz_err_t err = { 0 };
	rz_selector_t *sel = NULL;
	const char *use, *end;
	char list[256];

	ck_assert_int_eq(rz_selector_parse_fields(text, events, &sel, &err), REZUS_EINVALID);
	ck_assert_msg(strncmp(err.msg, "invalid field selector 'involvedObject.name=demo", 48) == 0,
	              "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "...': field 'involvedObject.namespace' is not "
	                                      "supported (use metadata.name, "));
	end = err.msg + strlen(err.msg) - strlen(", ...) at position 52");
	ck_assert_str_eq(end, ", ...) at position 52");
	/* every field the list names is whole */
	use = strstr(err.msg, "(use ") + 5;
	snprintf(list, sizeof(list), "%.*s", (int)(end - use), use);
	for (char *save = NULL, *f = strtok_r(list, ", ", &save); f != NULL;
	     f = strtok_r(NULL, ", ", &save)) {
		bool known = false;
		for (size_t i = 0; events[i] != NULL; i++) {
			known = known || strcmp(events[i], f) == 0;
		}
		ck_assert_msg(known, "'%s' is cut: %s", f, err.msg);
	}
}
END_TEST

START_TEST(test_key_length_limits)
{
	char text[400];
	char name63[64];
	char prefix253[254];
	rz_err_t err = { 0 };
	rz_selector_t *sel = NULL;

	memset(name63, 'n', 63);
	name63[63] = '\0';
	memset(prefix253, 'p', 253);
	for (int i = 63; i < 253; i += 64) {
		prefix253[i] = '.';
	}
	prefix253[253] = '\0';
	snprintf(text, sizeof(text), "%s/%s=%s", prefix253, name63, name63);
	ck_assert_int_eq(rz_selector_parse(text, &sel, &err), 0);
	ck_assert(!rz_selector_empty(sel));
	rz_selector_free(sel);

	snprintf(text, sizeof(text), "%sn", name63);
	ck_assert_int_ne(rz_selector_parse(text, &sel, &err), 0);
	ck_assert_ptr_null(sel);
	ck_assert_ptr_nonnull(strstr(err.msg, "invalid key '"));
	ck_assert_ptr_nonnull(strstr(err.msg, " at position 0"));
}
END_TEST

START_TEST(test_empty)
{
	rz_err_t err = { 0 };
	rz_selector_t *sel = NULL;

	ck_assert_int_eq(rz_selector_parse(NULL, &sel, &err), 0);
	ck_assert(rz_selector_empty(sel));
	ck_assert(rz_selector_match(sel, NULL));
	rz_selector_free(sel);
	ck_assert_int_eq(rz_selector_parse("  ", &sel, &err), 0);
	ck_assert(rz_selector_empty(sel));
	rz_selector_free(sel);
	ck_assert_int_eq(rz_selector_parse("a", &sel, &err), 0);
	ck_assert(!rz_selector_empty(sel));
	rz_selector_free(sel);
	ck_assert_int_eq(rz_selector_parse_fields(NULL, allowed, &sel, &err), 0);
	ck_assert(rz_selector_empty(sel));
	ck_assert(rz_selector_match_fields(sel, NULL));
	rz_selector_free(sel);
	ck_assert(rz_selector_empty(NULL));
	rz_selector_free(NULL);
}
END_TEST

/* Many requirements and values: the arrays grow. */
START_TEST(test_many_requirements)
{
	char text[2048] = "";
	rz_err_t err = { 0 };
	rz_selector_t *sel = NULL;
	json_t *labels = json_object();

	for (int i = 0; i < 40; i++) {
		char part[64], key[16], value[16];
		snprintf(part, sizeof(part), "%sk%d in (a,b,c,d,e,v%d)", i ? "," : "", i, i);
		strcat(text, part);
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(value, sizeof(value), "v%d", i);
		ck_assert_int_eq(json_object_set_new(labels, key, json_string(value)), 0);
	}
	ck_assert_msg(rz_selector_parse(text, &sel, &err) == 0, "%s", err.msg);
	ck_assert(rz_selector_match(sel, labels));
	json_object_set_new(labels, "k39", json_string("v38"));
	ck_assert(!rz_selector_match(sel, labels));
	rz_selector_free(sel);
	json_decref(labels);
}
END_TEST

START_TEST(test_field_match)
{
	const struct match_case *c = &field_cases[_i];
	rz_err_t err = { 0 };
	rz_selector_t *sel = NULL;
	json_t *object = load(c->json);

	ck_assert_msg(rz_selector_parse_fields(c->selector, allowed, &sel, &err) == 0, "'%s': %s",
	              c->selector, err.msg);
	ck_assert_msg(rz_selector_match_fields(sel, object) == c->match, "'%s' on %s: want %s",
	              c->selector, c->json != NULL ? c->json : "NULL", c->match ? "true" : "false");
	rz_selector_free(sel);
	json_decref(object);
}
END_TEST

START_TEST(test_field_errors)
{
	check_error(field_errors[_i].selector, allowed, field_errors[_i].msg);
}
END_TEST

START_TEST(test_field_values)
{
	rz_err_t err = { 0 };
	rz_selector_t *sel = NULL;
	json_t *object = load(object_json);
	const char *const none[] = { NULL };

	ck_assert_int_eq(
	    rz_selector_parse_fields("status.note=  a b(c)=d  ", allowed_note, &sel, &err), 0);
	ck_assert(rz_selector_match_fields(sel, object));
	rz_selector_free(sel);
	ck_assert_int_eq(rz_selector_parse_fields("status.note=a b(c)", allowed_note, &sel, &err),
	                 0);
	ck_assert(!rz_selector_match_fields(sel, object));
	rz_selector_free(sel);
	ck_assert_int_eq(
	    rz_selector_parse_fields("status.note!=a b(c)=d", allowed_note, &sel, &err), 0);
	ck_assert(!rz_selector_match_fields(sel, object));
	rz_selector_free(sel);
	/* a field selector is not a label selector: the same text fails as labels */
	ck_assert_int_eq(rz_selector_parse("status.note=a b(c)=d", &sel, &err), REZUS_EINVALID);
	check_error("metadata.name=a", none,
	            "invalid field selector 'metadata.name=a': field 'metadata.name' is not "
	            "supported at position 0");
	json_decref(object);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("selector");
	TCase *labels = tcase_create("labels");
	TCase *fields = tcase_create("fields");

	tcase_add_loop_test(labels, test_label_match, 0, (int)ARRAY_SIZE(label_cases));
	tcase_add_loop_test(labels, test_label_errors, 0, (int)ARRAY_SIZE(label_errors));
	tcase_add_test(labels, test_label_format_errors);
	tcase_add_test(labels, test_long_texts_are_cut);
	tcase_add_test(labels, test_unsupported_field_message);
	tcase_add_test(labels, test_key_length_limits);
	tcase_add_test(labels, test_empty);
	tcase_add_test(labels, test_many_requirements);
	suite_add_tcase(s, labels);
	tcase_add_loop_test(fields, test_field_match, 0, (int)ARRAY_SIZE(field_cases));
	tcase_add_loop_test(fields, test_field_errors, 0, (int)ARRAY_SIZE(field_errors));
	tcase_add_test(fields, test_field_values);
	suite_add_tcase(s, fields);
	return rzt_run(s);
}
