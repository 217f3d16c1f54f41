/* tests/unit/check_observe.c - the observation contract on the host's side (probes and
 * facts a plugin returns), and the clock it stamps observations with. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "core/base/clock.h"
#include "core/plugin/probe.h"
#include "tests/unit/testutil.h"

static int check_text(const char *text, char *msg, size_t size, json_t **out)
{
	json_t *probes = json_loads(text, JSON_ALLOW_NUL, NULL);
	rz_err_t err = { 0 };
	int rc;

	ck_assert_ptr_nonnull(probes);
	rc = rz_probe_check(probes, &err);
	snprintf(msg, size, "%s", err.msg);
	if (out != NULL) {
		*out = probes;
	} else {
		json_decref(probes);
	}
	return rc;
}

START_TEST(test_probe_defaults)
{
	char msg[512];
	json_t *p = NULL;

	ck_assert_int_eq(
	    check_text("[{\"id\":\"a\",\"tool\":\"talosctl\"},{\"id\":\"b\",\"tool\":null,"
	               "\"machine\":\"cp-0\",\"data\":{\"x\":1}}]",
	               msg, sizeof(msg), &p),
	    0);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(p, 0), "timeout")),
	                 RZ_PROBE_TIMEOUT_DEF);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(p, 0), "credentials")),
	                 "none");
	ck_assert(json_is_array(json_object_get(json_array_get(p, 1), "args")));
	json_decref(p);
	ck_assert_int_eq(check_text("[]", msg, sizeof(msg), NULL), 0);
}
END_TEST

static const struct {
	const char *probes, *error;
} bad_probes[] = {
	{ "{}", "probes must be a list of at most 4096" },
	{ "[1]", "probe 0: must be an object" },
	{ "[{\"tool\":\"talosctl\"}]", "probe 0: id must be 1 to 63 of [A-Za-z0-9._:/-]" },
	{ "[{\"id\":\"a b\"}]", "probe 0 ('a b'): id must be 1 to 63 of [A-Za-z0-9._:/-]" },
	{ "[{\"id\":\"a\"},{\"id\":\"a\"}]", "probe 1 ('a'): id is not unique" },
	{ "[{\"id\":\"a\",\"tool\":\"sh\"}]",
	  "probe 0 ('a'): tool must be \"talosctl\", \"kubectl\" or null" },
	{ "[{\"id\":\"a\",\"tool\":\"kubectl\",\"args\":\"get nodes\"}]",
	  "probe 0 ('a'): args must be a list of at most 64 strings" },
	{ "[{\"id\":\"a\",\"args\":[1]}]",
	  "probe 0 ('a'): args must be strings (no NUL, at most 4096 bytes)" },
	{ "[{\"id\":\"a\",\"args\":[\"x\\u0000y\"]}]",
	  "probe 0 ('a'): args must be strings (no NUL, at most 4096 bytes)" },
	{ "[{\"id\":\"a\",\"timeout\":50}]",
	  "probe 0 ('a'): timeout must be milliseconds from 100 to 120000" },
	{ "[{\"id\":\"a\",\"timeout\":\"10s\"}]",
	  "probe 0 ('a'): timeout must be milliseconds from 100 to 120000" },
	{ "[{\"id\":\"a\",\"credentials\":\"/etc/shadow\"}]",
	  "probe 0 ('a'): credentials must be \"talosconfig\", \"kubeconfig\" or \"none\"" },
	{ "[{\"id\":\"a\",\"env\":{}}]", "probe 0: unknown member 'env'" },
	{ "[{\"id\":\"a\",\"machine\":7}]", "probe 0 ('a'): machine must be a Machine's name" },
};

START_TEST(test_probe_refusals)
{
	char msg[512];

	ck_assert_int_eq(check_text(bad_probes[_i].probes, msg, sizeof(msg), NULL), REZUS_EINVALID);
	ck_assert_str_eq(msg, bad_probes[_i].error);
}
END_TEST

START_TEST(test_probe_limits)
{
	json_t *probes = json_array(), *args = json_array();
	rz_err_t err = { 0 };
	char id[16];

	for (int i = 0; i < 65; i++) {
		json_array_append_new(args, json_string("x"));
	}
	json_array_append_new(probes, json_pack("{s:s, s:o}", "id", "a", "args", args));
	ck_assert_int_eq(rz_probe_check(probes, &err), REZUS_EINVALID);
	json_array_clear(probes);
	for (int i = 0; i <= RZ_PROBE_MAX; i++) {
		snprintf(id, sizeof(id), "p%d", i);
		json_array_append_new(probes, json_pack("{s:s}", "id", id));
	}
	ck_assert_int_eq(rz_probe_check(probes, &err), REZUS_EINVALID);
	json_decref(probes);
}
END_TEST

static const struct {
	const char *facts, *error; /* error NULL: accepted */
} facts_cases[] = {
	{ "{}", NULL },
	{ "{\"machines\":{\"cp-0\":{\"stage\":\"Running\",\"ready\":true,\"talosVersion\":"
	  "\"v1.12.1\",\"nodeReady\":true,\"error\":\"\"}},\"tenant\":{\"controlPlaneHealthy\":"
	  "true,\"etcdMembers\":3,\"nodes\":3,\"nodesReady\":3,\"error\":\"\"}}",
	  NULL },
	{ "[]", "facts must be an object" },
	{ "{\"cluster\":{}}", "facts: unknown member 'cluster' (machines, tenant)" },
	{ "{\"machines\":[]}", "facts: machines must be an object" },
	{ "{\"machines\":{\"a\":{\"stage\":\"Exploded\"}}}",
	  "facts: machines.a.stage: 'Exploded' is not a stage" },
	{ "{\"machines\":{\"a\":{\"ready\":\"yes\"}}}", "facts: machines.a.ready: wrong type" },
	{ "{\"machines\":{\"a\":{\"cpu\":3}}}", "facts: machines.a: unknown member 'cpu'" },
	{ "{\"tenant\":{\"etcdMembers\":-1}}", "facts: tenant.etcdMembers: wrong type" },
	{ "{\"tenant\":[]}", "facts: tenant must be an object" },
};

START_TEST(test_facts)
{
	json_t *f = json_loads(facts_cases[_i].facts, 0, NULL);
	rz_err_t err = { 0 };
	int rc = rz_probe_check_facts(f, &err);

	if (facts_cases[_i].error == NULL) {
		ck_assert_msg(rc == 0, "%s: %s", facts_cases[_i].facts, err.msg);
	} else {
		ck_assert_int_eq(rc, REZUS_EINVALID);
		ck_assert_str_eq(err.msg, facts_cases[_i].error);
	}
	json_decref(f);
}
END_TEST

START_TEST(test_merge)
{
	json_t *into = json_object();
	json_t *a =
	    json_loads("{\"machines\":{\"m\":{\"stage\":\"Running\",\"ready\":true}}}", 0, NULL);
	json_t *b =
	    json_loads("{\"machines\":{\"m\":{\"nodeReady\":false},\"n\":{\"ready\":false}},"
	               "\"tenant\":{\"nodes\":2}}",
	               0, NULL);
	char *text;

	rz_probe_merge(into, a);
	rz_probe_merge(into, b);
	text = json_dumps(into, JSON_SORT_KEYS | JSON_COMPACT);
	ck_assert_str_eq(text, "{\"machines\":{\"m\":{\"nodeReady\":false,\"ready\":true,\"stage\":"
	                       "\"Running\"},\"n\":{\"ready\":false}},\"tenant\":{\"nodes\":2}}");
	free(text);
	json_decref(a);
	json_decref(b);
	json_decref(into);
}
END_TEST

START_TEST(test_clock)
{
	char buf[32];

	ck_assert_int_eq(rz_clock_parse("1970-01-01T00:00:01Z"), 1000);
	ck_assert_int_eq(rz_clock_parse("2026-12-01T07:00:00.5Z"), 1796108400500);
	ck_assert_int_eq(rz_clock_parse("2026-12-01T07:00:00.123456Z"), 1796108400123);
	ck_assert_int_eq(rz_clock_parse("2026-12-01T07:00:00+01:00"), -1);
	ck_assert_int_eq(rz_clock_parse("2026-13-01T07:00:00Z"), -1);
	ck_assert_int_eq(rz_clock_parse("yesterday"), -1);
	ck_assert_int_eq(rz_clock_parse(NULL), -1);
	rz_clock_format(1796108400123, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2026-12-01T07:00:00.123Z");
	ck_assert_int_eq(rz_clock_parse(buf), 1796108400123);
	ck_assert_int_gt(rz_clock_now_ms(), 1796108400000 - 86400000LL * 400);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("observe");
	TCase *tc = tcase_create("contract");

	tcase_add_test(tc, test_probe_defaults);
	tcase_add_loop_test(tc, test_probe_refusals, 0,
	                    (int)(sizeof(bad_probes) / sizeof(bad_probes[0])));
	tcase_add_test(tc, test_probe_limits);
	tcase_add_loop_test(tc, test_facts, 0, (int)(sizeof(facts_cases) / sizeof(facts_cases[0])));
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_clock);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
