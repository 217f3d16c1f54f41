/* tests/unit/check_fields.c - field schemas: validation, defaults, OpenAPI, formats. */
#include <config.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/yaml.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"
#include "core/model/states.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- a NodeGroup-like schema ---- */

static const char *const roles[] = { "controlplane", "worker", NULL };
static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
static const char *const stacks[] = { "ipv4", "dual", NULL };
static const char *const zones[] = { "a", "b", "c", NULL };

static const rz_field_t taint_fields[] = {
	{ .name = "key", .type = RZ_F_STRING, .required = true, .format = rz_format_label_key },
	{ .name = "value", .type = RZ_F_STRING, .format = rz_format_label_value },
	{ .name = "effect", .type = RZ_F_STRING, .enums = effects, .def = "\"NoSchedule\"" },
	{ .name = NULL },
};

static const rz_field_t network_fields[] = {
	{ .name = "mtu", .type = RZ_F_INT, .ranged = true, .min = 576, .max = 9000, .def = "1500" },
	{ .name = "stack",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = stacks,
	  .def = "\"ipv4\"" },
	{ .name = NULL },
};

static const rz_field_t spec_fields[] = {
	{ .name = "role", .type = RZ_F_STRING, .required = true, .enums = roles },
	{ .name = "count", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000, .def = "1" },
	{ .name = "providerClass", .type = RZ_F_STRING, .required = true, .max_len = 63 },
	{ .name = "talosVersion", .type = RZ_F_STRING, .format = rz_format_version },
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = 4 },
	{ .name = "taints",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = taint_fields,
	  .max_len = 3 },
	{ .name = "podSubnets",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_cidr,
	  .unique = true,
	  .max_len = 4 },
	{ .name = "zones", .type = RZ_F_ARRAY, .items = RZ_F_STRING, .enums = zones },
	{ .name = "ports",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_INT,
	  .ranged = true,
	  .min = 1,
	  .max = 65535 },
	{ .name = "enabled", .type = RZ_F_BOOL, .def = "true" },
	{ .name = "network", .type = RZ_F_OBJECT, .fields = network_fields },
	{ .name = "config", .type = RZ_F_ANY },
	{ .name = "startedAt", .type = RZ_F_TIME },
	{ .name = NULL },
};

/* ---- helpers ---- */

/* JSON written with ' for " (the tables stay readable), loaded. */
static json_t *sq_load(const char *text)
{
	char *copy = strdup(text);
	json_error_t error;
	json_t *v;
	char *p;

	ck_assert_ptr_nonnull(copy);
	for (p = copy; *p != '\0'; p++) {
		if (*p == '\'') {
			*p = '"';
		}
	}
	v = json_loads(copy, JSON_DECODE_ANY, &error);
	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, error.text);
	free(copy);
	return v;
}

/* Compact JSON with sorted keys. Caller frees. */
static char *dump(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* got and want serialise alike (compact, sorted keys). */
static void assert_same(const json_t *got, const json_t *want)
{
	char *g = dump(got);
	char *w = dump(want);

	ck_assert_str_eq(g, w);
	free(g);
	free(w);
}

/* expected is real JSON (not the ' form). */
static void assert_json_eq(const json_t *v, const char *expected)
{
	json_error_t error;
	json_t *e = json_loads(expected, JSON_DECODE_ANY, &error);

	ck_assert_msg(e != NULL, "bad expected JSON %s: %s", expected, error.text);
	assert_same(v, e);
	json_decref(e);
}

/* An expected cause. Lists end with an entry whose field is NULL. */
struct cause {
	const char *field;
	const char *reason;
	const char *message;
};

#define MAX_CAUSES 7

/* causes (as serialised) equals want, in order. */
static void assert_causes(const json_t *causes, const struct cause *want)
{
	json_t *e = json_array();
	size_t i;

	for (i = 0; want[i].field != NULL; i++) {
		json_t *c = json_pack("{s:s, s:s, s:s}", "field", want[i].field, "reason",
		                      want[i].reason, "message", want[i].message);

		ck_assert_int_eq(json_array_append_new(e, c), 0);
	}
	assert_same(causes, e);
	json_decref(e);
}

#define INVALID   RZ_CAUSE_INVALID
#define REQUIRED  RZ_CAUSE_REQUIRED
#define UNSUPP    RZ_CAUSE_NOT_SUPPORTED
#define TOO_LONG  RZ_CAUSE_TOO_LONG
#define TOO_MANY  RZ_CAUSE_TOO_MANY
#define DUPLICATE RZ_CAUSE_DUPLICATE

#define MIN "'role':'worker','providerClass':'sim'"

#define ROLES_MSG   "supported values: \"controlplane\", \"worker\""
#define EFFECTS_MSG "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
#define ZONES_MSG   "supported values: \"a\", \"b\", \"c\""
#define KEY_NAME_MSG                                                                               \
	"name part must consist of alphanumeric characters, '-', '_' or '.', and must start "      \
	"and end with an alphanumeric character"
#define VALUE_MSG                                                                                  \
	"must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start "    \
	"and end with an alphanumeric character"
#define SLASH_MSG                                                                                  \
	"must be a name with an optional DNS subdomain prefix and '/' (e.g. "                      \
	"'example.com/MyName')"
#define TIME_MSG  "must be an RFC 3339 time such as 2026-11-30T04:31:11Z"
#define HOST8_MSG "host bits must be zero (did you mean 10.0.0.0/8?)"

/* ---- rz_fields_validate: the table ---- */

struct vcase {
	const char *in;  /* the spec, ' for " */
	bool defaults;   /* apply_defaults */
	const char *out; /* the spec afterwards, ' for "; NULL: unchanged */
	struct cause causes[MAX_CAUSES];
};

static const struct vcase vcases[] = {
	/* 0: everything set and valid */
	{ "{'role':'controlplane','count':3,'providerClass':'oci:VM.Standard.A1.Flex',"
	  "'talosVersion':'1.12.0','labels':{'example.com/role':'db','tier':''},"
	  "'taints':[{'key':'dedicated','value':'db','effect':'NoExecute'}],"
	  "'podSubnets':['10.244.0.0/16','fd00:10:244::/56'],'zones':['a','c'],'ports':[1,65535],"
	  "'enabled':false,'network':{'mtu':9000,'stack':'dual'},'config':{'shape':{'ocpus':2}},"
	  "'startedAt':'2026-11-30T04:31:11Z'}",
	  true,
	  NULL,
	  { { 0 } } },
	/* 1-2: defaults applied, and not applied without apply_defaults */
	{ "{" MIN "}", true, "{" MIN ",'count':1,'enabled':true}", { { 0 } } },
	{ "{" MIN "}", false, NULL, { { 0 } } },
	/* 3: null counts as absent: defaulted, or left alone without a default */
	{ "{" MIN ",'count':null,'enabled':null,'talosVersion':null}",
	  true,
	  "{" MIN ",'count':1,'enabled':true,'talosVersion':null}",
	  { { 0 } } },
	/* 4-6: required; a null required member; defaults still applied */
	{ "{'role':null,'providerClass':'sim'}",
	  false,
	  NULL,
	  { { "spec.role", REQUIRED, "required" } } },
	{ "{}",
	  true,
	  "{'count':1,'enabled':true}",
	  { { "spec.role", REQUIRED, "required" },
	    { "spec.providerClass", REQUIRED, "required" } } },
	{ "{" MIN ",'count':0}", false, NULL, { { 0 } } },
	/* 7-8: a default satisfies required only when it is applied */
	{ "{" MIN ",'network':{}}",
	  true,
	  "{" MIN ",'count':1,'enabled':true,'network':{'mtu':1500,'stack':'ipv4'}}",
	  { { 0 } } },
	{ "{" MIN ",'network':{}}",
	  false,
	  NULL,
	  { { "spec.network.stack", REQUIRED, "required" } } },
	/* 9-22: wrong types: one cause each, not inspected further */
	{ "{'role':5,'providerClass':'sim'}",
	  false,
	  NULL,
	  { { "spec.role", INVALID, "expected a string, got a number" } } },
	{ "{" MIN ",'count':'3'}",
	  false,
	  NULL,
	  { { "spec.count", INVALID, "expected an integer, got a string" } } },
	{ "{" MIN ",'count':1.5}",
	  false,
	  NULL,
	  { { "spec.count", INVALID, "expected an integer, got a number" } } },
	{ "{" MIN ",'count':1.0}",
	  false,
	  NULL,
	  { { "spec.count", INVALID, "expected an integer, got a number" } } },
	{ "{" MIN ",'enabled':'yes'}",
	  false,
	  NULL,
	  { { "spec.enabled", INVALID, "expected a boolean, got a string" } } },
	{ "{" MIN ",'labels':['x',1]}",
	  false,
	  NULL,
	  { { "spec.labels", INVALID, "expected an object of strings, got an array" } } },
	{ "{" MIN ",'taints':{'key':'x'}}",
	  false,
	  NULL,
	  { { "spec.taints", INVALID, "expected an array, got an object" } } },
	{ "{" MIN ",'network':true}",
	  false,
	  NULL,
	  { { "spec.network", INVALID, "expected an object, got a boolean" } } },
	{ "{" MIN ",'config':'x'}",
	  false,
	  NULL,
	  { { "spec.config", INVALID, "expected an object, got a string" } } },
	{ "{" MIN ",'config':[]}",
	  false,
	  NULL,
	  { { "spec.config", INVALID, "expected an object, got an array" } } },
	{ "{" MIN ",'startedAt':5}",
	  false,
	  NULL,
	  { { "spec.startedAt", INVALID, "expected an RFC 3339 time, got a number" } } },
	{ "{" MIN ",'startedAt':false}",
	  false,
	  NULL,
	  { { "spec.startedAt", INVALID, "expected an RFC 3339 time, got a boolean" } } },
	{ "{" MIN ",'taints':['x',{'key':'k'}]}",
	  false,
	  NULL,
	  { { "spec.taints[0]", INVALID, "expected an object, got a string" } } },
	{ "{" MIN ",'podSubnets':['10.0.0.0/8',null],'ports':[1,'2',3.5,{}]}",
	  false,
	  NULL,
	  { { "spec.podSubnets[1]", INVALID, "expected a string, got null" },
	    { "spec.ports[1]", INVALID, "expected an integer, got a string" },
	    { "spec.ports[2]", INVALID, "expected an integer, got a number" },
	    { "spec.ports[3]", INVALID, "expected an integer, got an object" } } },
	{ "{" MIN ",'labels':{'b':{},'a':5,'c':'ok'},'taints':[{'key':'k','value':7}]}",
	  false,
	  NULL,
	  { { "spec.labels[a]", INVALID, "expected a string, got a number" },
	    { "spec.labels[b]", INVALID, "expected a string, got an object" },
	    { "spec.taints[0].value", INVALID, "expected a string, got a number" } } },
	/* 23-25: enums, also in array items and nested objects */
	{ "{'role':'master','providerClass':'sim'}",
	  false,
	  NULL,
	  { { "spec.role", UNSUPP, ROLES_MSG } } },
	{ "{" MIN ",'taints':[{'key':'k'},{'key':'k','effect':'Bad'}]}",
	  false,
	  NULL,
	  { { "spec.taints[1].effect", UNSUPP, EFFECTS_MSG } } },
	{ "{" MIN ",'zones':['a','x','b','A']}",
	  false,
	  NULL,
	  { { "spec.zones[1]", UNSUPP, ZONES_MSG }, { "spec.zones[3]", UNSUPP, ZONES_MSG } } },
	/* 26-30: ranges, including array items and nested objects */
	{ "{" MIN ",'count':-1}",
	  false,
	  NULL,
	  { { "spec.count", INVALID, "must be between 0 and 1000" } } },
	{ "{" MIN ",'count':1001}",
	  false,
	  NULL,
	  { { "spec.count", INVALID, "must be between 0 and 1000" } } },
	{ "{" MIN ",'count':1000}", false, NULL, { { 0 } } },
	{ "{" MIN ",'ports':[0,65536,80]}",
	  false,
	  NULL,
	  { { "spec.ports[0]", INVALID, "must be between 1 and 65535" },
	    { "spec.ports[1]", INVALID, "must be between 1 and 65535" } } },
	{ "{" MIN ",'network':{'mtu':100,'stack':'ipv4'}}",
	  false,
	  NULL,
	  { { "spec.network.mtu", INVALID, "must be between 576 and 9000" } } },
	/* 31-32: string length in bytes */
	{ "{'role':'worker','providerClass':'"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'}",
	  false,
	  NULL,
	  { { "spec.providerClass", TOO_LONG, "must be at most 63 characters" } } },
	{ "{'role':'worker','providerClass':'"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'}",
	  false,
	  NULL,
	  { { 0 } } },
	/* 33-35: too many items / entries: one cause, the items are not inspected */
	{ "{" MIN ",'taints':['x','x','x','x']}",
	  false,
	  NULL,
	  { { "spec.taints", TOO_MANY, "must have at most 3 items" } } },
	{ "{" MIN ",'labels':{'a':'1','b':'2','c':'3','d':'4','-':5}}",
	  false,
	  NULL,
	  { { "spec.labels", TOO_MANY, "must have at most 4 entries" } } },
	{ "{" MIN ",'labels':{'a':'1','b':'2','c':'3','d':'4'},"
	  "'taints':[{'key':'a'},{'key':'b'},{'key':'c'}]}",
	  false,
	  NULL,
	  { { 0 } } },
	/* 36-37: duplicates; an item with another problem is not also a duplicate */
	{ "{" MIN ",'podSubnets':['10.0.0.0/8','10.1.0.0/16','10.0.0.0/8','10.0.0.0/8']}",
	  false,
	  NULL,
	  { { "spec.podSubnets[2]", DUPLICATE, "duplicate value \"10.0.0.0/8\"" },
	    { "spec.podSubnets[3]", DUPLICATE, "duplicate value \"10.0.0.0/8\"" } } },
	{ "{" MIN ",'podSubnets':['10.0.0.1/8','10.0.0.1/8']}",
	  false,
	  NULL,
	  { { "spec.podSubnets[0]", INVALID, HOST8_MSG },
	    { "spec.podSubnets[1]", INVALID, HOST8_MSG } } },
	/* 38-39: formats of strings, map keys and map values */
	{ "{" MIN ",'talosVersion':'v1.12.0'}",
	  false,
	  NULL,
	  { { "spec.talosVersion", INVALID, "must be a version such as 1.35.0" } } },
	{ "{" MIN ",'labels':{'ok':'-bad-','-bad':'x','example.com/x/y':'v'}}",
	  false,
	  NULL,
	  { { "spec.labels[-bad]", INVALID, KEY_NAME_MSG },
	    { "spec.labels[example.com/x/y]", INVALID, SLASH_MSG },
	    { "spec.labels[ok]", INVALID, VALUE_MSG } } },
	/* 40: unknown members, nested ones in place, then this object's sorted by name */
	{ "{" MIN ",'zeta':1,'alpha':{},'taints':[{'key':'k','bogus':1,'Bogus':2}],"
	  "'network':{'x':1,'stack':'ipv4'},'config':{'anything':[1,{'x':null}]}}",
	  false,
	  NULL,
	  { { "spec.taints[0].Bogus", INVALID, "unknown field" },
	    { "spec.taints[0].bogus", INVALID, "unknown field" },
	    { "spec.network.x", INVALID, "unknown field" },
	    { "spec.alpha", INVALID, "unknown field" },
	    { "spec.zeta", INVALID, "unknown field" } } },
	/* 41: several problems: declaration order, not the object's member order */
	{ "{'zeta':1,'startedAt':'yesterday','count':'x','role':'boss','providerClass':7,"
	  "'alpha':null}",
	  false,
	  NULL,
	  { { "spec.role", UNSUPP, ROLES_MSG },
	    { "spec.count", INVALID, "expected an integer, got a string" },
	    { "spec.providerClass", INVALID, "expected a string, got a number" },
	    { "spec.startedAt", INVALID, TIME_MSG },
	    { "spec.alpha", INVALID, "unknown field" },
	    { "spec.zeta", INVALID, "unknown field" } } },
	/* 42-43: defaults inside array items (absent or null), not without apply_defaults */
	{ "{" MIN
	  ",'taints':[{'key':'a'},{'key':'b','effect':null},{'key':'c','effect':'NoExecute'}]}",
	  true,
	  "{" MIN ",'count':1,'enabled':true,'taints':[{'key':'a','effect':'NoSchedule'},"
	  "{'key':'b','effect':'NoSchedule'},{'key':'c','effect':'NoExecute'}]}",
	  { { 0 } } },
	{ "{" MIN ",'taints':[{'key':'a'}]}", false, NULL, { { 0 } } },
	/* 44: required inside array items */
	{ "{" MIN ",'taints':[{'key':'a'},{'value':'v'}]}",
	  true,
	  "{" MIN ",'count':1,'enabled':true,'taints':[{'key':'a','effect':'NoSchedule'},"
	  "{'value':'v','effect':'NoSchedule'}]}",
	  { { "spec.taints[1].key", REQUIRED, "required" } } },
	/* 45: a time */
	{ "{" MIN ",'startedAt':'2026-11-30 04:31:11Z'}",
	  false,
	  NULL,
	  { { "spec.startedAt", INVALID, TIME_MSG } } },
};

START_TEST(test_validate_table)
{
	const struct vcase *c = &vcases[_i];
	json_t *obj = sq_load(c->in);
	json_t *before = json_deep_copy(obj);
	json_t *causes = json_array();
	int n;

	n = rz_fields_validate(obj, spec_fields, "spec", c->defaults, causes);
	assert_causes(causes, c->causes);
	ck_assert_int_eq(n, (int)json_array_size(causes));
	if (c->out != NULL) {
		json_t *out = sq_load(c->out);

		assert_same(obj, out);
		json_decref(out);
	} else {
		ck_assert_msg(json_equal(obj, before), "case %d: object was modified", _i);
	}
	json_decref(before);
	json_decref(causes);
	json_decref(obj);
}
END_TEST

/* ---- rz_fields_validate: the rest ---- */

START_TEST(test_validate_not_object)
{
	json_t *causes = json_array();
	json_t *arr = json_array();
	json_t *null = json_null();

	ck_assert_int_eq(rz_fields_validate(arr, spec_fields, "spec", true, causes), 1);
	ck_assert_int_eq(rz_fields_validate(NULL, spec_fields, "spec", true, causes), 1);
	ck_assert_int_eq(rz_fields_validate(null, spec_fields, "spec", true, causes), 1);
	assert_causes(
	    causes, (const struct cause[]){ { "spec", INVALID, "expected an object, got an array" },
	                                    { "spec", INVALID, "expected an object, got null" },
	                                    { "spec", INVALID, "expected an object, got null" },
	                                    { 0 } });
	ck_assert_uint_eq(json_array_size(arr), 0);
	json_decref(arr);
	json_decref(null);
	json_decref(causes);
}
END_TEST

START_TEST(test_validate_empty_path)
{
	static const struct cause want[] = {
		{ "role", REQUIRED, "required" },
		{ "count", INVALID, "expected an integer, got a string" },
		{ "providerClass", REQUIRED, "required" },
		{ "taints[0].key", REQUIRED, "required" },
		{ "x", INVALID, "unknown field" },
		{ 0 },
	};
	const char *paths[] = { "", NULL };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		json_t *causes = json_array();
		json_t *obj = sq_load("{'count':'x','taints':[{}],'x':1}");

		ck_assert_int_eq(rz_fields_validate(obj, spec_fields, paths[i], false, causes), 5);
		assert_causes(causes, want);
		json_decref(obj);
		json_decref(causes);
	}
}
END_TEST

START_TEST(test_validate_appends_and_counts)
{
	json_t *causes = json_array();
	json_t *obj = sq_load("{'role':'boss','providerClass':'sim'}");

	rz_fields_cause(causes, "metadata.name", RZ_CAUSE_FORBIDDEN, "cannot change %s (%d)",
	                "name", 7);
	/* The count is of this call's causes, appended after the ones already there. */
	ck_assert_int_eq(rz_fields_validate(obj, spec_fields, "spec", false, causes), 1);
	assert_causes(causes, (const struct cause[]){
	                          { "metadata.name", RZ_CAUSE_FORBIDDEN, "cannot change name (7)" },
	                          { "spec.role", UNSUPP, ROLES_MSG },
	                          { 0 } });
	/* Without a causes array only the count. */
	ck_assert_int_eq(rz_fields_validate(obj, spec_fields, "spec", false, NULL), 1);
	rz_fields_cause(NULL, "x", RZ_CAUSE_INVALID, "ignored");
	json_decref(obj);
	json_decref(causes);
}
END_TEST

/* Paths longer than the validator's stack buffer are whole in the causes (built on the
 * heap), at the member, under an array item and under a map entry. */
START_TEST(test_validate_long_paths)
{
	char key[301], base[260], want[700];
	json_t *causes = json_array();
	json_t *obj = sq_load("{'role':'worker','providerClass':'sim','count':1,'taints':[{}]}");
	json_t *c;

	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	memset(base, 'b', sizeof(base) - 1);
	base[sizeof(base) - 1] = '\0';
	json_object_set_new(obj, key, json_integer(1));
	json_object_set_new(obj, "labels", json_pack("{s:s}", key, "v"));
	ck_assert_int_eq(rz_fields_validate(obj, spec_fields, base, false, causes), 3);
	ck_assert_int_eq(json_array_size(causes), 3);
	snprintf(want, sizeof(want), "%s.labels[%s]", base, key);
	c = json_array_get(causes, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "field")), want);
	snprintf(want, sizeof(want), "%s.taints[0].key", base);
	c = json_array_get(causes, 1);
	ck_assert_str_eq(json_string_value(json_object_get(c, "field")), want);
	snprintf(want, sizeof(want), "%s.%s", base, key);
	c = json_array_get(causes, 2);
	ck_assert_str_eq(json_string_value(json_object_get(c, "field")), want);
	ck_assert_str_eq(json_string_value(json_object_get(c, "message")), "unknown field");
	json_decref(obj);
	json_decref(causes);
}
END_TEST

/* An object whose schema has no members: everything is unknown. */
START_TEST(test_validate_no_fields)
{
	static const rz_field_t none[] = { { .name = NULL } };
	static const rz_field_t loose[] = {
		{ .name = "meta", .type = RZ_F_OBJECT, .fields = NULL },
		{ .name = NULL },
	};
	json_t *causes = json_array();
	json_t *obj = sq_load("{'b':1,'a':2}");
	json_t *obj2 = sq_load("{'meta':{'z':1}}");

	ck_assert_int_eq(rz_fields_validate(obj, none, "status", false, causes), 2);
	ck_assert_int_eq(rz_fields_validate(obj2, loose, "status", false, causes), 1);
	assert_causes(causes, (const struct cause[]){ { "status.a", INVALID, "unknown field" },
	                                              { "status.b", INVALID, "unknown field" },
	                                              { "status.meta.z", INVALID, "unknown field" },
	                                              { 0 } });
	json_decref(obj);
	json_decref(obj2);
	json_decref(causes);
}
END_TEST

/* fieldValidation Ignore and Warn: what the schema does not declare goes, at every depth it
 * describes; maps and ANY are left alone; what remains validates. */
START_TEST(test_drop_unknown)
{
	json_t *obj = sq_load("{'role':'worker','providerClass':'sim','bogus':1,"
	                      "'taints':[{'key':'a','x':1},{'key':'b'},{'key':'c','y':{},'z':2}],"
	                      "'network':{'stack':'ipv4','mtux':1},'labels':{'q':'r'},"
	                      "'config':{'anything':1}}");
	json_t *dropped = json_array(), *causes = json_array(), *want;

	ck_assert_uint_eq(rz_fields_drop_unknown(obj, spec_fields, "spec", dropped), 5);
	want = sq_load("['spec.bogus','spec.taints[0].x','spec.taints[2].y','spec.taints[2].z',"
	               "'spec.network.mtux']");
	assert_same(dropped, want);
	json_decref(want);
	want = sq_load("{'role':'worker','providerClass':'sim',"
	               "'taints':[{'key':'a'},{'key':'b'},{'key':'c'}],"
	               "'network':{'stack':'ipv4'},'labels':{'q':'r'},'config':{'anything':1}}");
	assert_same(obj, want);
	json_decref(want);
	ck_assert_int_eq(rz_fields_validate(obj, spec_fields, "spec", false, causes), 0);
	/* nothing to drop, no list to fill: still a count */
	ck_assert_uint_eq(rz_fields_drop_unknown(obj, spec_fields, "spec", NULL), 0);
	json_decref(obj);
	json_decref(dropped);
	json_decref(causes);
}
END_TEST

/* ---- RFC 3339 times ---- */

static const struct {
	const char *in;
	bool ok;
} times[] = {
	{ "2026-11-30T04:31:11Z", true },
	{ "2026-11-30T04:31:11.123456789Z", true },
	{ "2026-11-30T04:31:11+01:00", true },
	{ "2026-11-30T04:31:11.5-08:30", true },
	{ "2024-02-29T00:00:00Z", true },
	{ "2000-02-29T23:59:59Z", true },
	{ "0000-01-01T00:00:00+23:59", true },
	{ "", false },
	{ "2026-11-30", false },
	{ "2026-11-30T04:31:11", false },
	{ "2026-11-30 04:31:11Z", false },
	{ "2026-11-30t04:31:11z", false },
	{ "2026-13-01T00:00:00Z", false },
	{ "2026-00-01T00:00:00Z", false },
	{ "2026-11-00T00:00:00Z", false },
	{ "2026-02-29T00:00:00Z", false },
	{ "1900-02-29T00:00:00Z", false },
	{ "2026-04-31T00:00:00Z", false },
	{ "2026-11-30T24:00:00Z", false },
	{ "2026-11-30T04:60:00Z", false },
	{ "2026-11-30T04:31:60Z", false },
	{ "2026-11-30T04:31:11.Z", false },
	{ "2026-11-30T04:31:11+0100", false },
	{ "2026-11-30T04:31:11+01:00:00", false },
	{ "2026-11-30T04:31:11+24:00", false },
	{ "2026-11-30T04:31:11+01:60", false },
	{ "2026-11-30T04:31:11Zjunk", false },
	{ "26-11-30T04:31:11Z", false },
	{ "2026-1-30T04:31:11Z", false },
	{ "２026-11-30T04:31:11Z", false },
};

START_TEST(test_times)
{
	static const rz_field_t f[] = { { .name = "t", .type = RZ_F_TIME }, { .name = NULL } };
	json_t *obj = json_pack("{s:s}", "t", times[_i].in);
	json_t *causes = json_array();
	int n = rz_fields_validate(obj, f, "status", false, causes);

	if (times[_i].ok) {
		ck_assert_msg(n == 0, "%s should be a valid time", times[_i].in);
		assert_json_eq(causes, "[]");
	} else {
		ck_assert_msg(n == 1, "%s should not be a valid time", times[_i].in);
		assert_causes(causes,
		              (const struct cause[]){ { "status.t", INVALID, TIME_MSG }, { 0 } });
	}
	json_decref(causes);
	json_decref(obj);
}
END_TEST

/* ---- rz_fields_openapi ---- */

static const rz_field_t api_item_fields[] = {
	{ .name = "key", .type = RZ_F_STRING, .required = true },
	{ .name = NULL },
};

static const rz_field_t api_fields[] = {
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .doc = "Node role.",
	  .required = true,
	  .enums = roles },
	{ .name = "name", .type = RZ_F_STRING, .format_name = "dns1123-label", .max_len = 63 },
	{ .name = "count",
	  .type = RZ_F_INT,
	  .doc = "Machines.",
	  .ranged = true,
	  .min = 0,
	  .max = 1000,
	  .def = "1" },
	{ .name = "size", .type = RZ_F_INT },
	{ .name = "enabled", .type = RZ_F_BOOL, .def = "true" },
	{ .name = "subnets",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format_name = "cidr",
	  .max_len = 4,
	  .unique = true,
	  .def = "[\"10.244.0.0/16\"]" },
	{ .name = "zones", .type = RZ_F_ARRAY, .items = RZ_F_STRING, .enums = zones },
	{ .name = "taints", .type = RZ_F_ARRAY, .items = RZ_F_OBJECT, .fields = api_item_fields },
	{ .name = "labels", .type = RZ_F_MAP, .max_len = 8 },
	{ .name = "annotations", .type = RZ_F_MAP, .format_name = "byte" },
	{ .name = "config", .type = RZ_F_ANY, .doc = "Provider config." },
	{ .name = "at", .type = RZ_F_TIME },
	{ .name = "meta", .type = RZ_F_OBJECT, .fields = NULL, .required = true },
	{ .name = NULL },
};

START_TEST(test_openapi)
{
	json_t *s = rz_fields_openapi(api_fields);

	ck_assert_ptr_nonnull(s);
	assert_json_eq(
	    s,
	    "{\"type\":\"object\",\"additionalProperties\":false,"
	    "\"required\":[\"role\",\"meta\"],\"properties\":{"
	    "\"role\":{\"type\":\"string\",\"description\":\"Node role.\","
	    "\"enum\":[\"controlplane\",\"worker\"]},"
	    "\"name\":{\"type\":\"string\",\"format\":\"dns1123-label\",\"maxLength\":63},"
	    "\"count\":{\"type\":\"integer\",\"format\":\"int64\",\"minimum\":0,\"maximum\":1000,"
	    "\"description\":\"Machines.\",\"default\":1},"
	    "\"size\":{\"type\":\"integer\",\"format\":\"int64\"},"
	    "\"enabled\":{\"type\":\"boolean\",\"default\":true},"
	    "\"subnets\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"format\":\"cidr\"},"
	    "\"maxItems\":4,\"uniqueItems\":true,\"default\":[\"10.244.0.0/16\"]},"
	    "\"zones\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
	    "\"enum\":[\"a\",\"b\",\"c\"]}},"
	    "\"taints\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	    "\"key\":{\"type\":\"string\"}},\"required\":[\"key\"],"
	    "\"additionalProperties\":false}},"
	    "\"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	    "\"maxProperties\":8},"
	    "\"annotations\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\","
	    "\"format\":\"byte\"}},"
	    "\"config\":{\"type\":\"object\",\"additionalProperties\":true,"
	    "\"x-kubernetes-preserve-unknown-fields\":true,"
	    "\"description\":\"Provider config.\"},"
	    "\"at\":{\"type\":\"string\",\"format\":\"date-time\"},"
	    "\"meta\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}}}");
	json_decref(s);
}
END_TEST

START_TEST(test_openapi_empty)
{
	static const rz_field_t none[] = { { .name = NULL } };
	json_t *s = rz_fields_openapi(none);
	json_t *t = rz_fields_openapi(NULL);
	char *text = json_dumps(s, JSON_COMPACT);

	/* Keys in insertion order: type, properties, additionalProperties. */
	ck_assert_str_eq(text,
	                 "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}");
	assert_json_eq(t, text);
	free(text);
	json_decref(s);
	json_decref(t);
}
END_TEST

/* The full spec schema: nested defaults and the required list. */
START_TEST(test_openapi_spec)
{
	json_t *s = rz_fields_openapi(spec_fields);
	json_t *net;

	ck_assert_ptr_nonnull(s);
	assert_json_eq(json_object_get(s, "required"), "[\"role\",\"providerClass\"]");
	net = json_object_get(json_object_get(s, "properties"), "network");
	assert_json_eq(net, "{\"type\":\"object\",\"required\":[\"stack\"],"
	                    "\"additionalProperties\":false,\"properties\":{"
	                    "\"mtu\":{\"type\":\"integer\",\"format\":\"int64\",\"minimum\":576,"
	                    "\"maximum\":9000,\"default\":1500},"
	                    "\"stack\":{\"type\":\"string\",\"enum\":[\"ipv4\",\"dual\"],"
	                    "\"default\":\"ipv4\"}}}");
	json_decref(s);
}
END_TEST

/* ---- formats ---- */

#define LABEL_MSG                                                                                  \
	"must consist of lower case alphanumeric characters or '-', and must start and end "       \
	"with an alphanumeric character (e.g. 'my-name' or '123-abc')"
#define SUBDOMAIN_MSG                                                                              \
	"must consist of lower case alphanumeric characters, '-' or '.', and must start and "      \
	"end with an alphanumeric character (e.g. 'example.com')"
#define PREFIX_MSG  "prefix part must be a lowercase RFC 1123 subdomain"
#define CIDR_MSG    "must be a CIDR such as 10.244.0.0/16"
#define VERSION_MSG "must be a version such as 1.35.0"
#define URL_MSG     "must be a URL such as https://10.0.0.10:6443"
#define URL_SPACE   "must not contain spaces or control characters"
#define URL_USER    "must not contain a user name or password"
#define URL_PORT    "port must be between 1 and 65535"

struct fcase {
	rz_format_fn fn;
	const char *in;
	const char *msg; /* NULL: valid */
};

static const struct fcase fcases[] = {
	/* DNS-1123 labels */
	{ rz_format_dns1123_label, "a", NULL },
	{ rz_format_dns1123_label, "my-name", NULL },
	{ rz_format_dns1123_label, "123-abc", NULL },
	{ rz_format_dns1123_label, "0", NULL },
	{ rz_format_dns1123_label, "a--b", NULL },
	{ rz_format_dns1123_label, "", "must not be empty" },
	{ rz_format_dns1123_label, "My-Name", LABEL_MSG },
	{ rz_format_dns1123_label, "-a", LABEL_MSG },
	{ rz_format_dns1123_label, "a-", LABEL_MSG },
	{ rz_format_dns1123_label, "a.b", LABEL_MSG },
	{ rz_format_dns1123_label, "a_b", LABEL_MSG },
	{ rz_format_dns1123_label, "a b", LABEL_MSG },
	{ rz_format_dns1123_label, "\xc3\xa4", LABEL_MSG },
	/* DNS-1123 subdomains */
	{ rz_format_dns1123_subdomain, "example.com", NULL },
	{ rz_format_dns1123_subdomain, "a", NULL },
	{ rz_format_dns1123_subdomain, "a-b.c-d.0", NULL },
	{ rz_format_dns1123_subdomain, "", "must not be empty" },
	{ rz_format_dns1123_subdomain, "Example.com", SUBDOMAIN_MSG },
	{ rz_format_dns1123_subdomain, ".a", SUBDOMAIN_MSG },
	{ rz_format_dns1123_subdomain, "a.", SUBDOMAIN_MSG },
	{ rz_format_dns1123_subdomain, "a..b", SUBDOMAIN_MSG },
	{ rz_format_dns1123_subdomain, "-a.b", SUBDOMAIN_MSG },
	{ rz_format_dns1123_subdomain, "a-.b", SUBDOMAIN_MSG },
	{ rz_format_dns1123_subdomain, "a.-b", SUBDOMAIN_MSG },
	{ rz_format_dns1123_subdomain, "a_b.c", SUBDOMAIN_MSG },
	/* label keys */
	{ rz_format_label_key, "tier", NULL },
	{ rz_format_label_key, "a", NULL },
	{ rz_format_label_key, "A_b.C-d", NULL },
	{ rz_format_label_key, "example.com/role", NULL },
	{ rz_format_label_key, "x/Y", NULL },
	{ rz_format_label_key, "node-role.kubernetes.io/control-plane", NULL },
	{ rz_format_label_key, "", "name part must be non-empty" },
	{ rz_format_label_key, "a/", "name part must be non-empty" },
	{ rz_format_label_key, "/a", "prefix part must be non-empty" },
	{ rz_format_label_key, "a/b/c", SLASH_MSG },
	{ rz_format_label_key, "Example.com/a", PREFIX_MSG },
	{ rz_format_label_key, "exa_mple.com/a", PREFIX_MSG },
	{ rz_format_label_key, "example.com./a", PREFIX_MSG },
	{ rz_format_label_key, "-a", KEY_NAME_MSG },
	{ rz_format_label_key, "a-", KEY_NAME_MSG },
	{ rz_format_label_key, "_a", KEY_NAME_MSG },
	{ rz_format_label_key, "a b", KEY_NAME_MSG },
	{ rz_format_label_key, "example.com/a:b", KEY_NAME_MSG },
	/* label values */
	{ rz_format_label_value, "", NULL },
	{ rz_format_label_value, "v", NULL },
	{ rz_format_label_value, "MyValue", NULL },
	{ rz_format_label_value, "my_value", NULL },
	{ rz_format_label_value, "1.2.3", NULL },
	{ rz_format_label_value, "-v", VALUE_MSG },
	{ rz_format_label_value, "v.", VALUE_MSG },
	{ rz_format_label_value, "a b", VALUE_MSG },
	{ rz_format_label_value, "a/b", VALUE_MSG },
	/* qualified names (finalizers) */
	{ rz_format_qualified_name, "rezuscloud.io/teardown", NULL },
	{ rz_format_qualified_name, "teardown", NULL },
	{ rz_format_qualified_name, "rezuscloud.io/", "name part must be non-empty" },
	{ rz_format_qualified_name, "RezusCloud.io/teardown", PREFIX_MSG },
	/* CIDRs */
	{ rz_format_cidr, "10.244.0.0/16", NULL },
	{ rz_format_cidr, "0.0.0.0/0", NULL },
	{ rz_format_cidr, "10.0.0.0/8", NULL },
	{ rz_format_cidr, "10.128.0.0/9", NULL },
	{ rz_format_cidr, "192.168.1.1/32", NULL },
	{ rz_format_cidr, "255.255.255.255/32", NULL },
	{ rz_format_cidr, "fd00:10:244::/56", NULL },
	{ rz_format_cidr, "::/0", NULL },
	{ rz_format_cidr, "2001:db8::1/128", NULL },
	{ rz_format_cidr, "::ffff:10.0.0.0/104", NULL },
	{ rz_format_cidr, "10.0.0.1/8", "host bits must be zero (did you mean 10.0.0.0/8?)" },
	{ rz_format_cidr, "10.192.0.0/9", "host bits must be zero (did you mean 10.128.0.0/9?)" },
	{ rz_format_cidr, "1.2.3.4/0", "host bits must be zero (did you mean 0.0.0.0/0?)" },
	{ rz_format_cidr, "fd00::1/64", "host bits must be zero (did you mean fd00::/64?)" },
	{ rz_format_cidr, "fd00:10:244:1::/56",
	  "host bits must be zero (did you mean fd00:10:244::/56?)" },
	{ rz_format_cidr, "10.0.0.0/33", "prefix length must be between 0 and 32" },
	{ rz_format_cidr, "fd00::/129", "prefix length must be between 0 and 128" },
	{ rz_format_cidr, "10.0.0.0", CIDR_MSG },
	{ rz_format_cidr, "010.0.0.0/8", CIDR_MSG },
	{ rz_format_cidr, "10.0.0/8", CIDR_MSG },
	{ rz_format_cidr, "1.2.3.4.5/32", CIDR_MSG },
	{ rz_format_cidr, "256.0.0.0/8", CIDR_MSG },
	{ rz_format_cidr, "10.0.0.0/08", CIDR_MSG },
	{ rz_format_cidr, "10.0.0.0/", CIDR_MSG },
	{ rz_format_cidr, "10.0.0.0/-1", CIDR_MSG },
	{ rz_format_cidr, "10.0.0.0/1000", CIDR_MSG },
	{ rz_format_cidr, "10.0.0.0/8/8", CIDR_MSG },
	{ rz_format_cidr, "/8", CIDR_MSG },
	{ rz_format_cidr, "garbage", CIDR_MSG },
	{ rz_format_cidr, "", CIDR_MSG },
	{ rz_format_cidr, " 10.0.0.0/8", CIDR_MSG },
	{ rz_format_cidr, "10.0.0.0/8 ", CIDR_MSG },
	{ rz_format_cidr, "fd00::g/64", CIDR_MSG },
	{ rz_format_cidr, "fd00::1%eth0/64", CIDR_MSG },
	{ rz_format_cidr, "1111:2222:3333:4444:5555:6666:7777:8888:9999/64", CIDR_MSG },
	/* versions */
	{ rz_format_version, "1.35.0", NULL },
	{ rz_format_version, "0.0.0", NULL },
	{ rz_format_version, "10.20.30", NULL },
	{ rz_format_version, "999999999.0.1", NULL },
	{ rz_format_version, "v1.35.0", VERSION_MSG },
	{ rz_format_version, "1.35", VERSION_MSG },
	{ rz_format_version, "1.35.0.1", VERSION_MSG },
	{ rz_format_version, "01.35.0", VERSION_MSG },
	{ rz_format_version, "1.035.0", VERSION_MSG },
	{ rz_format_version, "1.35.00", VERSION_MSG },
	{ rz_format_version, "1.35.0-rc.1", VERSION_MSG },
	{ rz_format_version, "1.35.0+build", VERSION_MSG },
	{ rz_format_version, "1000000000.0.0", VERSION_MSG },
	{ rz_format_version, "", VERSION_MSG },
	{ rz_format_version, "1..0", VERSION_MSG },
	{ rz_format_version, "a.b.c", VERSION_MSG },
	{ rz_format_version, " 1.2.3", VERSION_MSG },
	{ rz_format_version, "1.2.3 ", VERSION_MSG },
	/* URLs */
	{ rz_format_url, "https://10.0.0.10:6443", NULL },
	{ rz_format_url, "http://example.com", NULL },
	{ rz_format_url, "https://example.com/", NULL },
	{ rz_format_url, "https://api.example.com:443/path/to?x=1#f", NULL },
	{ rz_format_url, "https://[fd00::1]:6443", NULL },
	{ rz_format_url, "https://[::1]/healthz", NULL },
	{ rz_format_url, "http://localhost:8080", NULL },
	{ rz_format_url, "https://My-Host.Example.COM", NULL },
	{ rz_format_url, "https://h:1", NULL },
	{ rz_format_url, "https://h:65535", NULL },
	{ rz_format_url, "https://h:0443", NULL },
	{ rz_format_url, "ftp://example.com", URL_MSG },
	{ rz_format_url, "HTTPS://example.com", URL_MSG },
	{ rz_format_url, "example.com:6443", URL_MSG },
	{ rz_format_url, "https://", URL_MSG },
	{ rz_format_url, "https://:6443", URL_MSG },
	{ rz_format_url, "https:///path", URL_MSG },
	{ rz_format_url, "https://-host", URL_MSG },
	{ rz_format_url, "https://host_name", URL_MSG },
	{ rz_format_url, "https://a.b.", URL_MSG },
	{ rz_format_url, "https://host?x=1", URL_MSG },
	{ rz_format_url, "https://256.1.1.1", URL_MSG },
	{ rz_format_url, "https://10.0.0", URL_MSG },
	{ rz_format_url, "https://[fd00::1", URL_MSG },
	{ rz_format_url, "https://[zz::1]", URL_MSG },
	{ rz_format_url, "https://[fd00::1]x", URL_MSG },
	{ rz_format_url, "https://fd00::1:6443", URL_MSG },
	{ rz_format_url, "https://host:", URL_MSG },
	{ rz_format_url, "https://host:abc", URL_MSG },
	{ rz_format_url, "https://h\xc3\xa9.com", URL_MSG },
	{ rz_format_url, "https://host:0", URL_PORT },
	{ rz_format_url, "https://host:00000", URL_PORT },
	{ rz_format_url, "https://host:65536", URL_PORT },
	{ rz_format_url, "https://host:123456", URL_PORT },
	{ rz_format_url, "https://user:pw@host", URL_USER },
	{ rz_format_url, "https://user@host/x", URL_USER },
	{ rz_format_url, "https://exa mple.com", URL_SPACE },
	{ rz_format_url, "https://host/a b", URL_SPACE },
	{ rz_format_url, "https://host\t", URL_SPACE },
	{ rz_format_url, "https://host/\x7f", URL_SPACE },
	/* YAML */
	{ rz_format_yaml, "", NULL },
	{ rz_format_yaml, "a: 1\n", NULL },
	{ rz_format_yaml, "# only a comment\n", NULL },
	{ rz_format_yaml, "---\na: 1\n---\nb: [1, 2]\n", NULL },
	{ rz_format_yaml, "machine:\n  install:\n    disk: /dev/sda\n", NULL },
	{ rz_format_yaml, "a: b: c\n",
	  "not valid YAML: mapping values are not allowed in this context at line 1, column 5" },
	{ rz_format_yaml, "a: [1, 2\n",
	  "not valid YAML: did not find expected ',' or ']' at line 2, column 1" },
	{ rz_format_yaml, "a: 1\nb:\n  - x\n c: d\n",
	  "not valid YAML: did not find expected key at line 4, column 2" },
	{ rz_format_yaml, "a: 1\nb: \xff\n",
	  "not valid YAML: invalid leading UTF-8 octet at line 2, column 4" },
};

START_TEST(test_formats)
{
	const struct fcase *c = &fcases[_i];
	char msg[256];
	bool ok;

	strcpy(msg, "untouched");
	ok = c->fn(c->in, msg, sizeof(msg));
	if (c->msg == NULL) {
		ck_assert_msg(ok, "'%s' should be valid, got: %s", c->in, msg);
		ck_assert_str_eq(msg, "untouched");
	} else {
		ck_assert_msg(!ok, "'%s' should be invalid", c->in);
		ck_assert_str_eq(msg, c->msg);
	}
	/* A NULL or empty buffer is allowed. */
	ck_assert(c->fn(c->in, NULL, 0) == ok);
	ck_assert(c->fn(c->in, msg, 0) == ok);
}
END_TEST

/* s filled with n copies of ch, NUL-terminated. */
static char *repeat(char *s, char ch, size_t n)
{
	memset(s, ch, n);
	s[n] = '\0';
	return s;
}

START_TEST(test_format_lengths)
{
	char s[600], msg[128];

	ck_assert(rz_format_dns1123_label(repeat(s, 'a', 63), msg, sizeof(msg)));
	ck_assert(!rz_format_dns1123_label(repeat(s, 'a', 64), msg, sizeof(msg)));
	ck_assert_str_eq(msg, "must be no more than 63 characters");

	ck_assert(rz_format_label_value(repeat(s, 'A', 63), msg, sizeof(msg)));
	ck_assert(!rz_format_label_value(repeat(s, 'A', 64), msg, sizeof(msg)));
	ck_assert_str_eq(msg, "must be no more than 63 characters");

	ck_assert(rz_format_label_key(repeat(s, 'K', 63), msg, sizeof(msg)));
	ck_assert(!rz_format_label_key(repeat(s, 'K', 64), msg, sizeof(msg)));
	ck_assert_str_eq(msg, "name part must be 63 characters or less");

	/* Subdomain labels are not limited to 63 (as in Kubernetes); the name is to 253. */
	ck_assert(rz_format_dns1123_subdomain(repeat(s, 'a', 253), msg, sizeof(msg)));
	ck_assert(!rz_format_dns1123_subdomain(repeat(s, 'a', 254), msg, sizeof(msg)));
	ck_assert_str_eq(msg, "must be no more than 253 characters");

	repeat(s, 'p', 253);
	strcpy(s + 253, "/name");
	ck_assert(rz_format_label_key(s, msg, sizeof(msg)));
	ck_assert(rz_format_qualified_name(s, msg, sizeof(msg)));
	repeat(s, 'p', 254);
	strcpy(s + 254, "/name");
	ck_assert(!rz_format_label_key(s, msg, sizeof(msg)));
	ck_assert_str_eq(msg, "prefix part must be no more than 253 characters");

	/* URL host labels are DNS labels: at most 63 bytes. */
	strcpy(s, "https://");
	repeat(s + 8, 'h', 63);
	ck_assert(rz_format_url(s, msg, sizeof(msg)));
	repeat(s + 8, 'h', 64);
	ck_assert(!rz_format_url(s, msg, sizeof(msg)));
	ck_assert_str_eq(msg, URL_MSG);
}
END_TEST

START_TEST(test_format_truncates)
{
	char msg[12];

	ck_assert(!rz_format_cidr("garbage", msg, sizeof(msg)));
	ck_assert_str_eq(msg, "must be a C");
	ck_assert(!rz_format_yaml("a: b: c", msg, 1));
	ck_assert_str_eq(msg, "");
}
END_TEST

/* Nesting past RZ_YAML_MAX_DEPTH is refused, the deepest allowed is fine: libyaml's time
 * grows with the square of the depth, and 200 KB of "[" once held the loop for 38 s. */
START_TEST(test_format_yaml_depth)
{
	size_t n = 100000;
	char *s = malloc(2 * n + 1), msg[128];

	ck_assert_ptr_nonnull(s);
	memset(s, '[', n);
	memset(s + n, ']', n);
	s[2 * n] = '\0';
	ck_assert(!rz_format_yaml(s, msg, sizeof(msg)));
	ck_assert_str_eq(msg, "not valid YAML here: nested deeper than 64 levels at line 1");
	memset(s, 'a', 2 * n);
	for (size_t i = 0; i < RZ_YAML_MAX_DEPTH; i++) {
		s[i] = '[';
		s[RZ_YAML_MAX_DEPTH + i] = ']';
	}
	s[2 * RZ_YAML_MAX_DEPTH] = '\0';
	ck_assert_msg(rz_format_yaml(s, msg, sizeof(msg)), "%s", msg);
	free(s);
}
END_TEST

/* A format function's message becomes the cause; an empty one gets a fallback. */
static bool reject_silently(const char *s, char *msg, size_t size)
{
	(void)s;
	(void)msg;
	(void)size;
	return false;
}

START_TEST(test_custom_format)
{
	static const rz_field_t f[] = {
		{ .name = "a", .type = RZ_F_STRING, .format = reject_silently },
		{ .name = "b", .type = RZ_F_MAP, .key_format = rz_format_dns1123_label },
		{ .name = NULL },
	};
	json_t *obj = sq_load("{'a':'x','b':{'Key':1,'ok':'any value at all'}}");
	json_t *causes = json_array();

	ck_assert_int_eq(rz_fields_validate(obj, f, "spec", true, causes), 2);
	assert_causes(causes, (const struct cause[]){ { "spec.a", INVALID, "invalid value" },
	                                              { "spec.b[Key]", INVALID, LABEL_MSG },
	                                              { 0 } });
	json_decref(causes);
	json_decref(obj);
}
END_TEST

/* ---- the states of core/model/states.h ---- */

/* The field named name in a NULL-ended list, or NULL. */
static const rz_field_t *field_named(const rz_field_t *f, const char *name)
{
	for (; f != NULL && f->name != NULL; f++) {
		if (strcmp(f->name, name) == 0) {
			return f;
		}
	}
	return NULL;
}

/* Each state's names round-trip through its enum, in the tables' order; what is no name of it
 * is -1; and the kinds' schemas list exactly the tables' names. */
START_TEST(test_states)
{
	static const struct {
		const char *const *names;
		int count;
		const char *first, *last;
	} t[] = {
		{ rz_run_op_names, RZ_OP_COUNT, "plan", "destroy" },
		{ rz_run_trigger_names, RZ_TRIG_COUNT, "create", "upgrade" },
		{ rz_run_phase_names, RZ_RUN_COUNT, "Queued", "Interrupted" },
		{ rz_upgrade_phase_names, RZ_UPG_COUNT, "Pending", "RolledBack" },
		{ rz_upgrade_step_names, RZ_UPSTEP_COUNT, "Pending", "Skipped" },
		{ rz_machine_stage_names, RZ_STAGE_COUNT, "Provisioning", "Unknown" },
	};
	const rz_kind_t *run = rz_kind_by_name("Run");
	const rz_kind_t *up = rz_kind_by_name("UpgradeRun");
	const rz_kind_t *machine = rz_kind_by_name("Machine");

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		ck_assert_str_eq(t[i].names[0], t[i].first);
		ck_assert_str_eq(t[i].names[t[i].count - 1], t[i].last);
		ck_assert_ptr_null(t[i].names[t[i].count]);
		for (int v = 0; v < t[i].count; v++) {
			ck_assert_int_eq(rz_state_of(t[i].names, t[i].names[v]), v);
		}
		ck_assert_int_eq(rz_state_of(t[i].names, "succeeded"), -1);
		ck_assert_int_eq(rz_state_of(t[i].names, NULL), -1);
	}
	ck_assert_int_eq(rz_run_phase_of("AwaitingApproval"), RZ_RUN_AWAITING_APPROVAL);
	ck_assert_str_eq(rz_run_phase_name(RZ_RUN_SUCCEEDED), "Succeeded");
	ck_assert_str_eq(rz_run_phase_name(RZ_RUN_COUNT), "");
	ck_assert_str_eq(rz_upgrade_phase_name(RZ_UPG_ROLLED_BACK), "RolledBack");
	ck_assert_str_eq(rz_machine_stage_name(RZ_STAGE_SHUTTING_DOWN), "ShuttingDown");
	ck_assert(!rz_upgrade_phase_over(rz_upgrade_phase_of("Prechecking")));
	ck_assert(rz_upgrade_phase_over(rz_upgrade_phase_of("Canceled")));
	ck_assert(!rz_upgrade_phase_over(rz_upgrade_phase_of("Done")));

	ck_assert_ptr_nonnull(run);
	ck_assert_ptr_eq(field_named(run->spec, "operation")->enums, rz_run_op_names);
	ck_assert_ptr_eq(field_named(run->spec, "trigger")->enums, rz_run_trigger_names);
	ck_assert_ptr_eq(field_named(run->status, "phase")->enums, rz_run_phase_names);
	ck_assert_ptr_nonnull(up);
	ck_assert_ptr_eq(field_named(up->status, "phase")->enums, rz_upgrade_phase_names);
	ck_assert_ptr_nonnull(machine);
	ck_assert_ptr_eq(field_named(machine->status, "stage")->enums, rz_machine_stage_names);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fields");
	TCase *tv = tcase_create("validate");
	TCase *to = tcase_create("openapi");
	TCase *tf = tcase_create("formats");

	tcase_add_loop_test(tv, test_validate_table, 0, (int)ARRAY_SIZE(vcases));
	tcase_add_test(tv, test_validate_not_object);
	tcase_add_test(tv, test_validate_empty_path);
	tcase_add_test(tv, test_validate_appends_and_counts);
	tcase_add_test(tv, test_validate_no_fields);
	tcase_add_test(tv, test_drop_unknown);
	tcase_add_test(tv, test_validate_long_paths);
	tcase_add_loop_test(tv, test_times, 0, (int)ARRAY_SIZE(times));
	tcase_add_test(tv, test_custom_format);
	tcase_add_test(tv, test_states);
	suite_add_tcase(s, tv);

	tcase_add_test(to, test_openapi);
	tcase_add_test(to, test_openapi_empty);
	tcase_add_test(to, test_openapi_spec);
	suite_add_tcase(s, to);

	tcase_add_loop_test(tf, test_formats, 0, (int)ARRAY_SIZE(fcases));
	tcase_add_test(tf, test_format_lengths);
	tcase_add_test(tf, test_format_truncates);
	tcase_add_test(tf, test_format_yaml_depth);
	suite_add_tcase(s, tf);
	return rzt_run(s);
}
