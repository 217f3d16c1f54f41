/* tests/unit/check_projection.c - projection rules over state v4 documents. */
#include <config.h>

#include "tests/unit/testutil.h"

#include <jansson.h>

#include "core/base/errors.h"
#include "core/model/fields.h"
#include "core/plugin/projection.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ helpers */

/* A state under tests/fixtures/states; caller owns. Fixtures live in the source tree. */
static json_t *load_fixture(const char *name)
{
	const char *top = getenv("top_srcdir");
	char *path = NULL;
	json_error_t jerr;
	json_t *state;

	ck_assert_int_gt(asprintf(&path, "%s/tests/fixtures/states/%s",
	                          top != NULL && top[0] != '\0' ? top : ".", name),
	                 0);
	state = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(state != NULL, "%s: %s", path, jerr.text);
	free(path);
	return state;
}

static json_t *parse_json(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);

	ck_assert_msg(j != NULL, "bad test JSON: %s: %s", jerr.text, text);
	return j;
}

static rz_projection_t *parse_ok(const char *rules)
{
	rz_projection_t *p = NULL;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_projection_parse(rules, &p, &err), 0);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* Run rules over state (borrowed) and return the objects; caller owns. */
static json_t *project(const char *rules, const json_t *state)
{
	rz_projection_t *p = parse_ok(rules);
	rz_err_t err = { 0 };
	json_t *objects = NULL;
	int rc = rz_projection_run(p, state, NULL, &objects, &err);

	ck_assert_msg(rc == 0, "run failed: %d %s", rc, err.msg);
	ck_assert_ptr_nonnull(objects);
	rz_projection_free(p);
	return objects;
}

static json_t *project_fixture(const char *rules, const char *fixture)
{
	json_t *state = load_fixture(fixture);
	json_t *objects = project(rules, state);

	json_decref(state);
	return objects;
}

static json_t *project_text(const char *rules, const char *state_text)
{
	json_t *state = parse_json(state_text);
	json_t *objects = project(rules, state);

	json_decref(state);
	return objects;
}

/* Assert actual equals the JSON in expected (order of arrays counts), then release actual. */
static void assert_json(json_t *actual, const char *expected)
{
	json_t *want = parse_json(expected);
	char *got = json_dumps(actual, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	char *exp = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);

	ck_assert_msg(json_equal(actual, want), "\n got: %s\nwant: %s", got, exp);
	free(got);
	free(exp);
	json_decref(want);
	json_decref(actual);
}

/* The names of objects, joined by ' '. Releases objects. */
static void assert_names(json_t *objects, const char *expected)
{
	char buf[1024] = "";
	size_t i;
	json_t *obj;

	json_array_foreach(objects, i, obj)
	{
		if (i > 0) {
			strncat(buf, " ", sizeof(buf) - strlen(buf) - 1);
		}
		strncat(buf, json_string_value(json_object_get(obj, "name")),
		        sizeof(buf) - strlen(buf) - 1);
	}
	ck_assert_str_eq(buf, expected);
	json_decref(objects);
}

/* One resource of type terraform_data named name with one instance; key is JSON text or NULL,
 * attrs JSON text. Caller owns. */
static json_t *one_instance(const char *name, const char *key, const char *attrs)
{
	json_t *inst = json_pack("{s:o}", "attributes", parse_json(attrs));

	if (key != NULL) {
		json_object_set_new(inst, "index_key", parse_json(key));
	}
	return json_pack("{s:i, s:[{s:s, s:s, s:s, s:[o]}]}", "version", 4, "resources", "mode",
	                 "managed", "type", "terraform_data", "name", name, "instances", inst);
}

/* ------------------------------------------------------------------ parse errors */

struct parse_case {
	const char *rules;
	const char *msg;
};

static const struct parse_case parse_cases[] = {
	{ "{}", "rules must be a JSON array" },
	{ "[{\"type\": }]",
	  "rules are not valid JSON: unexpected token near '}' at line 1, column 11" },
	{ "[{\"type\":\"a\",\n \"type\":\"b\"}]",
	  "rules are not valid JSON: duplicate object key near '\"type\"' at line 2, column 7" },
	{ "",
	  "rules are not valid JSON: '[' or '{' expected near end of file at line 1, column 0" },
	{ "[1,", "rules are not valid JSON: ']' expected near end of file at line 1, column 3" },
	{ "[5]", "rule 0: must be an object" },
	{ "[{\"kind\":\"Machine\",\"fields\":{}}]", "rule 0: missing \"type\"" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{}},{\"type\":\"a\",\"kind\":5,\"fields\":{}}"
	  "]",
	  "rule 1: \"kind\" must be a string" },
	{ "[{\"type\":\"a\",\"fields\":{}}]", "rule 0: missing \"kind\"" },
	{ "[{\"type\":7,\"kind\":\"M\",\"fields\":{}}]", "rule 0: \"type\" must be a string" },
	{ "[{\"type\":\"\",\"kind\":\"M\",\"fields\":{}}]", "rule 0: \"type\" must not be empty" },
	{ "[{\"type\":\"a\",\"kind\":\"M\"}]", "rule 0: missing \"fields\"" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{}},{\"type\":\"a\",\"kind\":\"M\","
	  "\"fields\":{}},"
	  "{\"type\":\"a\",\"kind\":\"M\",\"fields\":{\"address\":\"public_ip\"}}]",
	  "rule 2: \"fields\" must be an object of arrays of strings" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":[\"x\"]}]",
	  "rule 0: \"fields\" must be an object of arrays of strings" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{\"address\":[\"ip\", 3]}}]",
	  "rule 0: \"fields\" must be an object of arrays of strings" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{}},{\"type\":\"a\",\"kind\":\"M\","
	  "\"fields\":{}},"
	  "{\"type\":\"a\",\"kind\":\"M\",\"fields\":{}},"
	  "{\"type\":\"a\",\"kind\":\"M\",\"fields\":{},\"when\":{\"input.role\":true}}]",
	  "rule 3: \"when\" must be an object of strings" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{},\"when\":[\"input.role\"]}]",
	  "rule 0: \"when\" must be an object of strings" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{},\"nodeGroup\":\"input.group\"}]",
	  "rule 0: \"nodeGroup\" must be an array of strings" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{},\"feilds\":{}}]",
	  "rule 0: unknown member \"feilds\"" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{\"address\":[\"network..ip\"]}}]",
	  "rule 0: \"network..ip\" is not an attribute path" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{\"address\":[\"\"]}}]",
	  "rule 0: \"\" is not an attribute path" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{},\"when\":{\".role\":\"x\"}}]",
	  "rule 0: \".role\" is not an attribute path" },
	{ "[{\"type\":\"a\",\"kind\":\"M\",\"fields\":{},\"nodeGroup\":[\"input.\"]}]",
	  "rule 0: \"input.\" is not an attribute path" },
};

START_TEST(test_parse_errors)
{
	const struct parse_case *c = &parse_cases[_i];
	rz_projection_t *p = (rz_projection_t *)&p;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_projection_parse(c->rules, &p, &err), REZUS_EINVALID);
	ck_assert_int_eq(err.code, REZUS_EINVALID);
	ck_assert_str_eq(err.msg, c->msg);
	ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_parse_null_text)
{
	rz_projection_t *p = NULL;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_projection_parse(NULL, &p, &err), REZUS_EINVALID);
	ck_assert_str_eq(
	    err.msg, "rules are not valid JSON: '[' or '{' expected near end of file at line 1, "
	             "column 0");
	ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_parse_valid)
{
	rz_projection_t *p =
	    parse_ok("[{\"type\":\"oci_core_instance\",\"kind\":\"Machine\",\"fields\":{"
	             "\"providerId\":[\"id\"],"
	             "\"address\":[\"public_ip\",\"private_ip\"],\"hostname\":[\"display_name\"],"
	             "\"shape\":[\"shape\"]}},"
	             "{\"type\":\"terraform_data\",\"kind\":\"Machine\",\"when\":{\"input.role\":"
	             "\"machine\"},"
	             "\"nodeGroup\":[\"input.nodeGroup\"],\"fields\":{\"addresses\":[],\"x\":["
	             "\"network.0.ip\"]}}]");

	rz_projection_free(p);
	rz_projection_free(NULL);
	p = parse_ok("[]");
	assert_json(project_fixture("[]", "tf-data-count.json"), "[]");
	rz_projection_free(p);
}
END_TEST

/* ------------------------------------------------------------------ real terraform_data */

static const char machine_rule[] =
    "[{\"type\":\"terraform_data\",\"kind\":\"Machine\",\"when\":{\"input.role\":\"machine\"},"
    "\"fields\":{\"address\":[\"input.address\"],\"hostname\":[\"input.hostname\"]}}]";

START_TEST(test_count_state)
{
	json_t *state = load_fixture("tf-data-count.json");
	json_t *before = json_deep_copy(state);

	assert_json(project(machine_rule, state),
	            "[{\"kind\":\"Machine\",\"name\":\"workers-0\",\"nodeGroup\":\"workers\","
	            "\"tfAddress\":\"terraform_data.workers[0]\","
	            "\"spec\":{\"address\":\"10.0.0.0\",\"hostname\":\"w-0\"}},"
	            "{\"kind\":\"Machine\",\"name\":\"workers-1\",\"nodeGroup\":\"workers\","
	            "\"tfAddress\":\"terraform_data.workers[1]\","
	            "\"spec\":{\"address\":\"10.0.0.1\",\"hostname\":\"w-1\"}},"
	            "{\"kind\":\"Machine\",\"name\":\"workers-2\",\"nodeGroup\":\"workers\","
	            "\"tfAddress\":\"terraform_data.workers[2]\","
	            "\"spec\":{\"address\":\"10.0.0.2\",\"hostname\":\"w-2\"}}]");
	ck_assert_msg(json_equal(state, before), "the state was modified");
	json_decref(before);
	json_decref(state);
}
END_TEST

START_TEST(test_when_filter)
{
	/* Without "when" every instance of the type counts, secrets included. */
	assert_json(
	    project_fixture("[{\"type\":\"terraform_data\",\"kind\":\"Machine\","
	                    "\"fields\":{\"role\":[\"input.role\"]}}]",
	                    "tf-data-count.json"),
	    "[{\"kind\":\"Machine\",\"name\":\"secrets\",\"nodeGroup\":\"secrets\","
	    "\"tfAddress\":\"terraform_data.secrets\",\"spec\":{\"role\":\"secrets\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"workers-0\",\"nodeGroup\":\"workers\","
	    "\"tfAddress\":\"terraform_data.workers[0]\",\"spec\":{\"role\":\"machine\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"workers-1\",\"nodeGroup\":\"workers\","
	    "\"tfAddress\":\"terraform_data.workers[1]\",\"spec\":{\"role\":\"machine\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"workers-2\",\"nodeGroup\":\"workers\","
	    "\"tfAddress\":\"terraform_data.workers[2]\",\"spec\":{\"role\":\"machine\"}}]");
	/* Two rules on one type: each instance goes to the rule whose "when" holds. */
	assert_json(
	    project_fixture("[{\"type\":\"terraform_data\",\"kind\":\"Secret\","
	                    "\"when\":{\"input.role\":\"secrets\",\"output.role\":\"secrets\"},"
	                    "\"fields\":{}},"
	                    "{\"type\":\"terraform_data\",\"kind\":\"Machine\","
	                    "\"when\":{\"input.hostname\":\"w-1\"},\"fields\":{}}]",
	                    "tf-data-count.json"),
	    "[{\"kind\":\"Secret\",\"name\":\"secrets\",\"nodeGroup\":\"secrets\","
	    "\"tfAddress\":\"terraform_data.secrets\",\"spec\":{}},"
	    "{\"kind\":\"Machine\",\"name\":\"workers-1\",\"nodeGroup\":\"workers\","
	    "\"tfAddress\":\"terraform_data.workers[1]\",\"spec\":{}}]");
	/* Every condition must hold; a missing attribute never matches. */
	assert_names(project_fixture("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"when\":"
	                             "{\"input.role\":\"machine\",\"input.hostname\":\"w-9\"},"
	                             "\"fields\":{}}]",
	                             "tf-data-count.json"),
	             "");
	assert_names(project_fixture("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"when\":"
	                             "{\"input.zone\":\"\"},\"fields\":{}}]",
	                             "tf-data-count.json"),
	             "");
	/* Numbers and booleans compare as their JSON text. */
	assert_names(project_fixture("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"when\":"
	                             "{\"input.spot\":\"true\"},\"fields\":{}}]",
	                             "tf-data-for-each.json"),
	             "edge-edge-a");
	assert_names(project_fixture("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"when\":"
	                             "{\"input.cpus\":\"4\"},\"fields\":{}}]",
	                             "tf-data-for-each.json"),
	             "edge-edge-b");
}
END_TEST

START_TEST(test_for_each_state)
{
	/* String keys, a node group from an attribute, first non-empty address, numbers and
	 * booleans as text, a list kept for "addresses" only. */
	assert_json(
	    project_fixture("[{\"type\":\"terraform_data\",\"kind\":\"Machine\","
	                    "\"when\":{\"input.role\":\"machine\"},"
	                    "\"nodeGroup\":[\"input.pool\",\"input.nodeGroup\"],"
	                    "\"fields\":{\"address\":[\"input.address\",\"input.fallback\"],"
	                    "\"addresses\":[\"input.addresses\"],"
	                    "\"tags\":[\"input.tags\",\"input.role\"],"
	                    "\"cpus\":[\"input.cpus\"],\"spot\":[\"output.spot\"],"
	                    "\"zone\":[\"input.zone\"]}}]",
	                    "tf-data-for-each.json"),
	    "[{\"kind\":\"Machine\",\"name\":\"edge-pool-edge-a\",\"nodeGroup\":\"edge-pool\","
	    "\"tfAddress\":\"terraform_data.edge[\\\"Edge_A\\\"]\","
	    "\"spec\":{\"address\":\"192.168.1.10\","
	    "\"addresses\":[\"192.168.1.10\",\"fd00::2\"],\"tags\":\"machine\","
	    "\"cpus\":\"2\",\"spot\":\"true\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"edge-pool-edge-b\",\"nodeGroup\":\"edge-pool\","
	    "\"tfAddress\":\"terraform_data.edge[\\\"edge.b\\\"]\","
	    "\"spec\":{\"address\":\"fd00::4\",\"addresses\":[\"\",\"fd00::4\"],"
	    "\"tags\":\"machine\",\"cpus\":\"4\",\"spot\":\"false\"}}]");
}
END_TEST

START_TEST(test_data_sources_ignored)
{
	/* tf-data-for-each.json holds data.terraform_remote_state.prev; oci-instances.json holds
	 * data.oci_core_instance.existing. */
	assert_names(project_fixture("[{\"type\":\"terraform_remote_state\",\"kind\":\"M\","
	                             "\"fields\":{\"backend\":[\"backend\"]}}]",
	                             "tf-data-for-each.json"),
	             "");
	assert_names(project_fixture("[{\"type\":\"oci_core_instance\",\"kind\":\"M\","
	                             "\"fields\":{}}]",
	                             "oci-instances.json"),
	             "bastion controlplane-0 workers-arm-0 workers-arm-1 workers-arm-2");
}
END_TEST

START_TEST(test_module_state)
{
	/* Both modules name their resource "workers": equal names sort by tfAddress. */
	assert_json(project_fixture(machine_rule, "tf-data-module.json"),
	            "[{\"kind\":\"Machine\",\"name\":\"workers-0\",\"nodeGroup\":\"workers\","
	            "\"tfAddress\":\"module.pool.terraform_data.workers[0]\","
	            "\"spec\":{\"address\":\"10.1.0.0\",\"hostname\":\"w-0\"}},"
	            "{\"kind\":\"Machine\",\"name\":\"workers-0\",\"nodeGroup\":\"workers\","
	            "\"tfAddress\":\"module.zone[\\\"eu-1\\\"].terraform_data.workers[0]\","
	            "\"spec\":{\"address\":\"10.2.0.0\",\"hostname\":\"w-0\"}},"
	            "{\"kind\":\"Machine\",\"name\":\"workers-1\",\"nodeGroup\":\"workers\","
	            "\"tfAddress\":\"module.pool.terraform_data.workers[1]\","
	            "\"spec\":{\"address\":\"10.1.0.1\",\"hostname\":\"w-1\"}}]");
}
END_TEST

/* ------------------------------------------------------------------ scope */

/* The names rules give the fixture's resources in scope (JSON text, or NULL: all). */
static void assert_scoped(const char *rules, const char *fixture, const char *scope_text,
                          const char *names)
{
	rz_projection_t *p = parse_ok(rules);
	json_t *state = load_fixture(fixture);
	json_t *scope = scope_text != NULL ? parse_json(scope_text) : NULL;
	json_t *objects = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_projection_run(p, state, scope, &objects, &err) == 0, "%s", err.msg);
	assert_names(objects, names);
	json_decref(scope);
	json_decref(state);
	rz_projection_free(p);
}

/* A rule with no "when" on a shared type, such as terraform_data, takes every instance of
 * it; in scope are only the resources its plugin rendered. */
static const char greedy_rule[] =
    "[{\"type\":\"terraform_data\",\"kind\":\"Machine\",\"fields\":{}}]";

START_TEST(test_scope)
{
	assert_scoped(greedy_rule, "tf-data-count.json", NULL,
	              "secrets workers-0 workers-1 workers-2");
	assert_scoped(greedy_rule, "tf-data-count.json", "[\"terraform_data.workers\"]",
	              "workers-0 workers-1 workers-2");
	assert_scoped(greedy_rule, "tf-data-count.json", "[\"terraform_data.secrets\"]", "secrets");
	assert_scoped(greedy_rule, "tf-data-count.json",
	              "[\"terraform_data.secrets\", \"terraform_data.workers\"]",
	              "secrets workers-0 workers-1 workers-2");
	/* an empty scope: the plugin rendered nothing, so nothing is its */
	assert_scoped(greedy_rule, "tf-data-count.json", "[]", "");
	/* whole addresses only: no prefix, no other type, no bare type */
	assert_scoped(greedy_rule, "tf-data-count.json",
	              "[\"terraform_data.worker\", \"terraform_data.workers2\", "
	              "\"terraform_data\", \"oci_core_instance.workers\", "
	              "\"terraform_data.workers.x\", 7]",
	              "");
	/* scope narrows the rules, "when" still applies within it */
	assert_scoped(machine_rule, "tf-data-count.json",
	              "[\"terraform_data.secrets\", \"terraform_data.workers\"]",
	              "workers-0 workers-1 workers-2");
}
END_TEST

START_TEST(test_scope_modules)
{
	/* Plugins render root blocks: a module's resources are in no plugin's scope. */
	assert_scoped(machine_rule, "tf-data-module.json", NULL, "workers-0 workers-0 workers-1");
	assert_scoped(machine_rule, "tf-data-module.json", "[\"terraform_data.workers\"]", "");
}
END_TEST

START_TEST(test_scope_checks_the_whole_state)
{
	/* A broken resource is an error even outside the scope: the state is read whole. */
	rz_projection_t *p = parse_ok(greedy_rule);
	json_t *state = parse_json("{\"resources\": [{\"mode\": \"managed\", \"type\": 1, "
	                           "\"name\": \"x\", \"instances\": []}]}");
	json_t *scope = parse_json("[\"terraform_data.y\"]");
	json_t *objects = NULL;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_projection_run(p, state, scope, &objects, &err), REZUS_EINVALID);
	ck_assert_str_eq(err.msg, "resource 0: \"type\" must be a string");
	ck_assert_ptr_null(objects);
	json_decref(scope);
	json_decref(state);
	rz_projection_free(p);
}
END_TEST

/* ------------------------------------------------------------------ lint */

START_TEST(test_lint)
{
	rz_projection_t *p = parse_ok(
	    "[{\"type\":\"terraform_data\",\"kind\":\"Machine\",\"fields\":{}},"
	    "{\"type\":\"terraform_data\",\"kind\":\"Machine\",\"when\":{\"input.role\":\"m\"},"
	    "\"fields\":{}},"
	    "{\"type\":\"terraform_data\",\"kind\":\"Machine\",\"when\":{},\"fields\":{}},"
	    "{\"type\":\"oci_core_instance\",\"kind\":\"Machine\",\"fields\":{}},"
	    "{\"type\":\"aws_instance\",\"kind\":\"Machine\",\"fields\":{}},"
	    "{\"type\":\"aws_instance\",\"kind\":\"Machine\",\"when\":{\"tags.x\":\"y\"},"
	    "\"fields\":{}},"
	    "{\"type\":\"random\",\"kind\":\"Machine\",\"fields\":{}}]");
	json_t *providers = parse_json("{\"oci\": {\"source\": \"oracle/oci\"}, "
	                               "\"random\": {\"source\": \"hashicorp/random\"}}");
	json_t *warnings = json_array();

	/* built in without "when" (an empty one selects nothing), and a provider not declared
	 * without "when"; a declared provider's type, or any rule with "when", is fine */
	ck_assert_uint_eq(rz_projection_lint(p, providers, warnings), 3);
	ck_assert_uint_eq(json_array_size(warnings), 3);
	ck_assert_str_eq(json_string_value(json_array_get(warnings, 0)),
	                 "rule 0 (terraform_data): no \"when\" on a built-in type: where rules "
	                 "run unscoped it takes every plugin's terraform_data; select with "
	                 "\"when\" on a value only your resources carry");
	ck_assert_str_eq(json_string_value(json_array_get(warnings, 1)),
	                 "rule 2 (terraform_data): no \"when\" on a built-in type: where rules "
	                 "run unscoped it takes every plugin's terraform_data; select with "
	                 "\"when\" on a value only your resources carry");
	ck_assert_str_eq(json_string_value(json_array_get(warnings, 2)),
	                 "rule 4 (aws_instance): no \"when\", and provider \"aws\" is not in "
	                 "your required_providers: where rules run unscoped it takes other "
	                 "plugins' aws_instance; select with \"when\" on a value only your "
	                 "resources carry");
	/* with no providers declared, every rule without "when" could take others' */
	json_array_clear(warnings);
	ck_assert_uint_eq(rz_projection_lint(p, NULL, warnings), 5);
	json_decref(warnings);
	json_decref(providers);
	rz_projection_free(p);
}
END_TEST

/* ------------------------------------------------------------------ a provider's state */

static const char oci_rule[] =
    "[{\"type\":\"oci_core_instance\",\"kind\":\"Machine\","
    "\"nodeGroup\":[\"freeform_tags.rezus-node-group\"],"
    "\"fields\":{\"providerId\":[\"id\"],\"address\":[\"public_ip\",\"private_ip\"],"
    "\"hostname\":[\"display_name\",\"create_vnic_details.0.hostname_label\"],"
    "\"shape\":[\"shape\"],\"ocpus\":[\"shape_config.0.ocpus\"],"
    "\"memory\":[\"shape_config.0.memory_in_gbs\"],\"gpu\":[\"shape_config.1.gpus\"]}}]";

START_TEST(test_oci_state)
{
	/* public_ip "" or null falls back to private_ip; display_name null falls back to the
	 * VNIC's hostname label; a real number stays 1.5; the deposed workers_arm[1] is left
	 * out; the tainted workers_arm[2] is still a machine; bastion has no tag and no key. */
	assert_json(
	    project_fixture(oci_rule, "oci-instances.json"),
	    "[{\"kind\":\"Machine\",\"name\":\"bastion\",\"nodeGroup\":\"bastion\","
	    "\"tfAddress\":\"oci_core_instance.bastion\",\"spec\":{"
	    "\"providerId\":\"ocid1.instance.oc1.eu-frankfurt-1.antheljtbastion\","
	    "\"address\":\"129.159.1.5\",\"hostname\":\"bastion\",\"shape\":\"VM.Standard.E4."
	    "Flex\","
	    "\"ocpus\":\"1\",\"memory\":\"8\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"controlplane-0\",\"nodeGroup\":\"controlplane\","
	    "\"tfAddress\":\"oci_core_instance.controlplane[0]\",\"spec\":{"
	    "\"providerId\":\"ocid1.instance.oc1.eu-frankfurt-1.antheljtacmecp0\","
	    "\"address\":\"129.159.1.10\",\"hostname\":\"acme-cp-0\","
	    "\"shape\":\"VM.Standard.A1.Flex\",\"ocpus\":\"2\",\"memory\":\"12\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"workers-arm-0\",\"nodeGroup\":\"workers-arm\","
	    "\"tfAddress\":\"oci_core_instance.workers_arm[0]\",\"spec\":{"
	    "\"providerId\":\"ocid1.instance.oc1.eu-frankfurt-1.antheljtacmeworkersarm0\","
	    "\"address\":\"10.0.2.20\",\"hostname\":\"acme-workers-arm-0\","
	    "\"shape\":\"VM.Standard.A1.Flex\",\"ocpus\":\"4\",\"memory\":\"24\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"workers-arm-1\",\"nodeGroup\":\"workers-arm\","
	    "\"tfAddress\":\"oci_core_instance.workers_arm[1]\",\"spec\":{"
	    "\"providerId\":\"ocid1.instance.oc1.eu-frankfurt-1.antheljtacmeworkersarm1\","
	    "\"address\":\"129.159.1.21\",\"hostname\":\"acme-workers-arm-1\","
	    "\"shape\":\"VM.Standard.A1.Flex\",\"ocpus\":\"1.5\",\"memory\":\"9\"}},"
	    "{\"kind\":\"Machine\",\"name\":\"workers-arm-2\",\"nodeGroup\":\"workers-arm\","
	    "\"tfAddress\":\"oci_core_instance.workers_arm[2]\",\"spec\":{"
	    "\"providerId\":\"ocid1.instance.oc1.eu-frankfurt-1.antheljtacmeworkersarm2\","
	    "\"address\":\"10.0.2.22\",\"hostname\":\"acme-workers-arm-2\","
	    "\"shape\":\"VM.Standard.A1.Flex\",\"ocpus\":\"2\",\"memory\":\"12\"}}]");
}
END_TEST

/* ------------------------------------------------------------------ attribute shapes */

static const char input_rule[] = "[{\"type\":\"terraform_data\",\"kind\":\"Machine\","
                                 "\"fields\":{\"address\":[\"input.address\"],"
                                 "\"out\":[\"output.address\"],\"whole\":[\"input\"]}}]";

START_TEST(test_dynamic_shapes)
{
	/* As Terraform writes it: {"value": ..., "type": ...}. */
	json_t *state = one_instance("w", NULL,
	                             "{\"input\":{\"value\":{\"address\":\"10.0.0.7\"},"
	                             "\"type\":[\"object\",{\"address\":\"string\"}]},"
	                             "\"output\":{\"value\":{\"address\":\"10.0.0.8\"},"
	                             "\"type\":[\"object\",{\"address\":\"string\"}]}}");

	json_t *nested =
	    one_instance("w", NULL,
	                 "{\"input\":{\"value\":{\"meta\":{\"value\":\"x\",\"type\":\"string\"}},"
	                 "\"type\":[\"object\",{\"meta\":[\"object\",{\"value\":\"string\","
	                 "\"type\":\"string\"}]}]}}");
	json_t *o;

	assert_json(project(input_rule, state),
	            "[{\"kind\":\"Machine\",\"name\":\"w\",\"nodeGroup\":\"w\","
	            "\"tfAddress\":\"terraform_data.w\","
	            "\"spec\":{\"address\":\"10.0.0.7\",\"out\":\"10.0.0.8\"}}]");
	json_decref(state);
	/* Only the attribute itself is unwrapped: inside its value, "value" and "type" are data. */
	o = project("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"fields\":{"
	            "\"t\":[\"input.meta.type\"],\"v\":[\"input.meta.value\"]}}]",
	            nested);
	assert_json(json_incref(json_object_get(json_array_get(o, 0), "spec")),
	            "{\"t\":\"string\",\"v\":\"x\"}");
	json_decref(o);
	json_decref(nested);
}
END_TEST

START_TEST(test_plain_shapes)
{
	json_t *s1 = one_instance("w", NULL,
	                          "{\"input\":{\"address\":\"10.0.0.7\"},"
	                          "\"output\":{\"address\":\"10.0.0.8\"}}");
	/* A primitive dynamic value, and a plain object whose members are called value and type
	 * without type being a cty type: it is not unwrapped. */
	json_t *s2 =
	    one_instance("w", NULL, "{\"input\":{\"value\":\"10.0.0.9\",\"type\":\"string\"}}");
	json_t *s3 =
	    one_instance("w", NULL,
	                 "{\"input\":{\"value\":\"x\",\"type\":\"worker\",\"address\":\"a\"},"
	                 "\"output\":{\"value\":{\"address\":\"b\"},\"type\":\"worker\"}}");
	json_t *o;

	o = project(input_rule, s1);
	assert_json(json_incref(json_object_get(json_array_get(o, 0), "spec")),
	            "{\"address\":\"10.0.0.7\",\"out\":\"10.0.0.8\"}");
	json_decref(o);
	o = project(input_rule, s2);
	assert_json(json_incref(json_object_get(json_array_get(o, 0), "spec")),
	            "{\"whole\":\"10.0.0.9\"}");
	json_decref(o);
	o = project(
	    "[{\"type\":\"terraform_data\",\"kind\":\"M\",\"fields\":{\"t\":[\"input.type\"],"
	    "\"v\":[\"output.value.address\"],\"a\":[\"input.address\"]}}]",
	    s3);
	assert_json(json_incref(json_object_get(json_array_get(o, 0), "spec")),
	            "{\"t\":\"worker\",\"v\":\"b\",\"a\":\"a\"}");
	json_decref(o);
	json_decref(s1);
	json_decref(s2);
	json_decref(s3);
}
END_TEST

START_TEST(test_values)
{
	json_t *state =
	    one_instance("w", NULL,
	                 "{\"n\":3,\"big\":9007199254740993,\"neg\":-2,\"r\":0.25,\"r2\":0.1,"
	                 "\"t\":true,\"f\":false,\"nul\":null,\"empty\":\"\",\"s\":\"x\","
	                 "\"obj\":{\"a\":\"b\"},\"list\":[\"10.0.0.1\",\"fd00::1\"],"
	                 "\"nolist\":[],\"mixed\":[\"10.0.0.1\",2],"
	                 "\"net\":[{\"ip\":\"10.9.9.9\"}]}");
	json_t *o = project(
	    "[{\"type\":\"terraform_data\",\"kind\":\"M\",\"fields\":{"
	    "\"n\":[\"n\"],\"big\":[\"big\"],\"neg\":[\"neg\"],\"r\":[\"r\"],\"r2\":[\"r2\"],"
	    "\"t\":[\"t\"],\"f\":[\"f\"],\"first\":[\"nul\",\"empty\",\"missing\",\"s\"],"
	    "\"none\":[\"nul\",\"empty\",\"missing\",\"obj\",\"list\"],"
	    "\"addresses\":[\"nolist\",\"mixed\",\"obj\",\"list\",\"s\"],"
	    "\"ip\":[\"net.1.ip\",\"net.x\",\"s.0\",\"net.0.ip\"],"
	    "\"deep\":[\"obj.a.b\",\"n.0\",\"list.0\"]}}]",
	    state);

	assert_json(json_incref(json_object_get(json_array_get(o, 0), "spec")),
	            "{\"n\":\"3\",\"big\":\"9007199254740993\",\"neg\":\"-2\",\"r\":\"0.25\","
	            "\"r2\":\"0.1\","
	            "\"t\":\"true\",\"f\":\"false\",\"first\":\"x\","
	            "\"addresses\":[\"10.0.0.1\",\"fd00::1\"],\"ip\":\"10.9.9.9\","
	            "\"deep\":\"10.0.0.1\"}");
	json_decref(o);
	json_decref(state);
	/* A scalar found first for "addresses" stays a string. */
	state = one_instance("w", NULL, "{\"ip\":\"10.0.0.1\",\"list\":[\"10.0.0.2\"]}");
	o = project("[{\"type\":\"terraform_data\",\"kind\":\"M\","
	            "\"fields\":{\"addresses\":[\"ip\",\"list\"]}}]",
	            state);
	assert_json(json_incref(json_object_get(json_array_get(o, 0), "spec")),
	            "{\"addresses\":\"10.0.0.1\"}");
	json_decref(o);
	json_decref(state);
}
END_TEST

/* ------------------------------------------------------------------ names and addresses */

struct name_case {
	const char *resource;
	const char *key; /* JSON text, or NULL for no index_key */
	const char *name;
	const char *address;
};

#define A60 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct name_case name_cases[] = {
	{ "pool", NULL, "pool", "terraform_data.pool" },
	{ "pool", "7", "pool-7", "terraform_data.pool[7]" },
	{ "pool", "null", "pool", "terraform_data.pool" },
	{ "pool", "\"eu-1\"", "pool-eu-1", "terraform_data.pool[\"eu-1\"]" },
	{ "Workers_ARM", "\"EU West/1\"", "workers-arm-eu-west-1",
	  "terraform_data.Workers_ARM[\"EU West/1\"]" },
	{ "w", "\"--x--\"", "w-x", "terraform_data.w[\"--x--\"]" },
	{ "x", "\"Ab.C__d\"", "x-ab-c-d", "terraform_data.x[\"Ab.C__d\"]" },
	{ "_pool_", "\"\"", "pool", "terraform_data._pool_[\"\"]" },
	{ "pool", "\"\xc3\xbcn\xc3\xaf\"", "pool-n", "terraform_data.pool[\"\xc3\xbcn\xc3\xaf\"]" },
	{ "x", "\"a\\\"b\\\\c\"", "x-a-b-c", "terraform_data.x[\"a\\\"b\\\\c\"]" },
	/* 60 + "-" + 2 = 63 */
	{ A60, "\"bcdef\"", A60 "-bc", "terraform_data." A60 "[\"bcdef\"]" },
	/* 62 characters: the '-' would be the 63rd and last, so it and the key go */
	{ A60 "aa", "\"b\"", A60 "aa", "terraform_data." A60 "aa[\"b\"]" },
	{ A60 "aaaaaaaaaa", NULL, A60 "aaa", "terraform_data." A60 "aaaaaaaaaa" },
	{ A60 "a-", "\"b\"", A60 "a-b", "terraform_data." A60 "a-[\"b\"]" },
};

START_TEST(test_names)
{
	const struct name_case *c = &name_cases[_i];
	json_t *state = one_instance(c->resource, c->key, "{}");
	json_t *o = project("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"fields\":{}}]", state);
	json_t *obj = json_array_get(o, 0);
	char msg[256] = "";

	ck_assert_int_eq(json_array_size(o), 1);
	ck_assert_str_eq(json_string_value(json_object_get(obj, "name")), c->name);
	ck_assert_str_eq(json_string_value(json_object_get(obj, "tfAddress")), c->address);
	ck_assert_msg(rz_format_dns1123_label(json_string_value(json_object_get(obj, "name")), msg,
	                                      sizeof(msg)),
	              "%s", msg);
	json_decref(o);
	json_decref(state);
}
END_TEST

START_TEST(test_node_group_names)
{
	/* From an attribute, sanitised; the name combines the raw node group and the key. */
	json_t *state = one_instance("w", "3", "{\"input\":{\"g\":\"Edge Pool\"}}");
	json_t *o = project("[{\"type\":\"terraform_data\",\"kind\":\"M\","
	                    "\"nodeGroup\":[\"input.none\",\"input.g\"],\"fields\":{}}]",
	                    state);

	assert_json(o, "[{\"kind\":\"M\",\"name\":\"edge-pool-3\",\"nodeGroup\":\"edge-pool\","
	               "\"tfAddress\":\"terraform_data.w[3]\",\"spec\":{}}]");
	json_decref(state);
	/* A number names a node group too; paths that all miss give the resource name. */
	state = one_instance("w", "3", "{\"input\":{\"g\":42}}");
	assert_names(project("[{\"type\":\"terraform_data\",\"kind\":\"M\","
	                     "\"nodeGroup\":[\"input.g\"],\"fields\":{}}]",
	                     state),
	             "42-3");
	assert_names(project("[{\"type\":\"terraform_data\",\"kind\":\"M\","
	                     "\"nodeGroup\":[\"input.none\"],\"fields\":{}}]",
	                     state),
	             "w-3");
	json_decref(state);
}
END_TEST

START_TEST(test_sorted)
{
	/* State order is not name order; "w-10" sorts before "w-2" (text, not numbers). */
	assert_names(
	    project_text("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"fields\":{}},"
	                 "{\"type\":\"null_resource\",\"kind\":\"M\",\"fields\":{}}]",
	                 "{\"version\":4,\"resources\":["
	                 "{\"mode\":\"managed\",\"type\":\"terraform_data\",\"name\":\"w\","
	                 "\"instances\":[{\"index_key\":9,\"attributes\":{}},"
	                 "{\"index_key\":10,\"attributes\":{}},"
	                 "{\"index_key\":2,\"attributes\":{}}]},"
	                 "{\"mode\":\"managed\",\"type\":\"null_resource\",\"name\":\"b\","
	                 "\"instances\":[{\"attributes\":{}}]},"
	                 "{\"mode\":\"managed\",\"type\":\"terraform_data\",\"name\":\"a\","
	                 "\"instances\":[{\"index_key\":\"z\",\"attributes\":{}},"
	                 "{\"index_key\":\"c\",\"attributes\":{}}]}]}"),
	    "a-c a-z b w-10 w-2 w-9");
	/* Equal names: by tfAddress, whatever the state order. */
	assert_json(project_text("[{\"type\":\"terraform_data\",\"kind\":\"M\",\"fields\":{}}]",
	                         "{\"version\":4,\"resources\":["
	                         "{\"module\":\"module.b\",\"mode\":\"managed\","
	                         "\"type\":\"terraform_data\",\"name\":\"w\","
	                         "\"instances\":[{\"attributes\":{}}]},"
	                         "{\"mode\":\"managed\",\"type\":\"terraform_data\",\"name\":\"w\","
	                         "\"instances\":[{\"attributes\":{}}]},"
	                         "{\"module\":\"module.a\",\"mode\":\"managed\","
	                         "\"type\":\"terraform_data\",\"name\":\"w\","
	                         "\"instances\":[{\"attributes\":{}}]}]}"),
	            "[{\"kind\":\"M\",\"name\":\"w\",\"nodeGroup\":\"w\","
	            "\"tfAddress\":\"module.a.terraform_data.w\",\"spec\":{}},"
	            "{\"kind\":\"M\",\"name\":\"w\",\"nodeGroup\":\"w\","
	            "\"tfAddress\":\"module.b.terraform_data.w\",\"spec\":{}},"
	            "{\"kind\":\"M\",\"name\":\"w\",\"nodeGroup\":\"w\","
	            "\"tfAddress\":\"terraform_data.w\",\"spec\":{}}]");
}
END_TEST

/* ------------------------------------------------------------------ states */

START_TEST(test_empty_state)
{
	assert_json(project_text(machine_rule, "{\"version\":4,\"resources\":[]}"), "[]");
	/* No rule for the type: nothing, and its instances are not inspected. */
	assert_json(project_text(machine_rule,
	                         "{\"version\":4,\"resources\":[{\"mode\":\"managed\","
	                         "\"type\":\"null_resource\",\"name\":\"n\","
	                         "\"instances\":[5,{\"index_key\":[],\"attributes\":null}]}]}"),
	            "[]");
	/* A data source is not inspected either. */
	assert_json(project_text(machine_rule,
	                         "{\"version\":4,\"resources\":[{\"mode\":\"data\","
	                         "\"type\":\"terraform_data\",\"name\":\"n\",\"instances\":[5]}]}"),
	            "[]");
}
END_TEST

struct state_case {
	const char *state;
	const char *msg;
};

#define RES_OK "{\"mode\":\"managed\",\"type\":\"terraform_data\",\"name\":\"ok\",\"instances\":[]}"

static const struct state_case state_cases[] = {
	{ "[]", "state is not a JSON object" },
	{ "\"state\"", "state is not a JSON object" },
	{ "{\"version\":4}", "state has no \"resources\" array" },
	{ "{\"version\":4,\"resources\":{}}", "state has no \"resources\" array" },
	{ "{\"resources\":[" RES_OK "," RES_OK "," RES_OK ",{\"mode\":\"managed\",\"type\":\"t\","
	  "\"name\":\"n\",\"instances\":{}}]}",
	  "resource 3: \"instances\" must be an array" },
	{ "{\"resources\":[{\"mode\":\"managed\",\"type\":\"t\",\"name\":\"n\"}]}",
	  "resource 0: \"instances\" must be an array" },
	{ "{\"resources\":[5]}", "resource 0: must be an object" },
	{ "{\"resources\":[{\"type\":\"t\",\"name\":\"n\",\"instances\":[]}]}",
	  "resource 0: \"mode\" must be a string" },
	{ "{\"resources\":[" RES_OK
	  ",{\"mode\":\"managed\",\"type\":1,\"name\":\"n\",\"instances\":[]}]}",
	  "resource 1: \"type\" must be a string" },
	{ "{\"resources\":[{\"mode\":\"managed\",\"type\":\"t\",\"instances\":[]}]}",
	  "resource 0: \"name\" must be a string" },
	{ "{\"resources\":[{\"module\":[],\"mode\":\"managed\",\"type\":\"t\",\"name\":\"n\","
	  "\"instances\":[]}]}",
	  "resource 0: \"module\" must be a string" },
	{ "{\"resources\":[" RES_OK ",{\"mode\":\"managed\",\"type\":\"terraform_data\","
	  "\"name\":\"n\",\"instances\":[{\"attributes\":{}},{\"index_key\":1}]}]}",
	  "resource 1, instance 1: \"attributes\" must be an object" },
	{ "{\"resources\":[{\"mode\":\"managed\",\"type\":\"terraform_data\",\"name\":\"n\","
	  "\"instances\":[{\"index_key\":1.5,\"attributes\":{}}]}]}",
	  "resource 0, instance 0: \"index_key\" must be an integer or a string" },
	{ "{\"resources\":[{\"mode\":\"managed\",\"type\":\"terraform_data\",\"name\":\"n\","
	  "\"instances\":[\"x\"]}]}",
	  "resource 0, instance 0: must be an object" },
	{ "{\"resources\":[{\"mode\":\"managed\",\"type\":\"terraform_data\",\"name\":\"n\","
	  "\"instances\":[{\"attributes\":{\"input\":{\"address\":\"a\",\"g\":\"___\"}}}]}]}",
	  "resource 0, instance 0: node group \"___\" gives no name" },
};

START_TEST(test_bad_states)
{
	const struct state_case *c = &state_cases[_i];
	rz_projection_t *p = parse_ok("[{\"type\":\"terraform_data\",\"kind\":\"Machine\","
	                              "\"nodeGroup\":[\"input.g\"],"
	                              "\"fields\":{\"address\":[\"input.address\"]}}]");
	json_t *state = parse_json(c->state);
	json_t *objects = json_object(); /* must come back NULL */
	json_t *keep = objects;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_projection_run(p, state, NULL, &objects, &err), REZUS_EINVALID);
	ck_assert_int_eq(err.code, REZUS_EINVALID);
	ck_assert_str_eq(err.msg, c->msg);
	ck_assert_ptr_null(objects);
	json_decref(keep);
	json_decref(state);
	rz_projection_free(p);
}
END_TEST

static Suite *projection_suite(void)
{
	Suite *s = suite_create("projection");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_parse_errors, 0, (int)ARRAY_SIZE(parse_cases));
	tcase_add_test(tc, test_parse_null_text);
	tcase_add_test(tc, test_parse_valid);
	suite_add_tcase(s, tc);

	tc = tcase_create("fixtures");
	tcase_add_test(tc, test_count_state);
	tcase_add_test(tc, test_when_filter);
	tcase_add_test(tc, test_for_each_state);
	tcase_add_test(tc, test_data_sources_ignored);
	tcase_add_test(tc, test_module_state);
	tcase_add_test(tc, test_oci_state);
	suite_add_tcase(s, tc);

	tc = tcase_create("scope");
	tcase_add_test(tc, test_scope);
	tcase_add_test(tc, test_scope_modules);
	tcase_add_test(tc, test_scope_checks_the_whole_state);
	tcase_add_test(tc, test_lint);
	suite_add_tcase(s, tc);

	tc = tcase_create("values");
	tcase_add_test(tc, test_dynamic_shapes);
	tcase_add_test(tc, test_plain_shapes);
	tcase_add_test(tc, test_values);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_loop_test(tc, test_names, 0, (int)ARRAY_SIZE(name_cases));
	tcase_add_test(tc, test_node_group_names);
	tcase_add_test(tc, test_sorted);
	suite_add_tcase(s, tc);

	tc = tcase_create("states");
	tcase_add_test(tc, test_empty_state);
	tcase_add_loop_test(tc, test_bad_states, 0, (int)ARRAY_SIZE(state_cases));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return rzt_run(projection_suite());
}
