/* tests/unit/check_managed.c - field managers: metadata.managedFields, Update and Apply. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/model/fieldset.h"
#include "core/model/managed.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static json_t *parse_json(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);

	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, jerr.text);
	return v;
}

/* m encoded, compact with sorted keys; caller frees. */
static char *encoded(const rz_managed_t *m)
{
	json_t *list = NULL;
	rz_err_t err = { 0 };
	char *s;

	ck_assert_int_eq(rz_managed_encode(m, &list, &err), 0);
	s = json_dumps(list, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(list);
	return s;
}

/* "manager/Operation[/status]@time=paths;..." in the encoded order: what a test compares. */
static const char *summary(const rz_managed_t *m)
{
	static char buf[4096];
	json_t *list = NULL;
	rz_err_t err = { 0 };
	size_t n = 0, i, j;
	json_t *e, *p;

	ck_assert_int_eq(rz_managed_encode(m, &list, &err), 0);
	buf[0] = '\0';
	json_array_foreach(list, i, e)
	{
		json_t *set = NULL, *paths;
		ck_assert_int_eq(rz_fieldset_parse(json_object_get(e, "fieldsV1"), &set, &err), 0);
		paths = rz_fieldset_paths(set);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s/%s%s@%s=", i ? ";" : "",
		                      json_string_value(json_object_get(e, "manager")),
		                      json_string_value(json_object_get(e, "operation")),
		                      json_object_get(e, "subresource") ? "/status" : "",
		                      json_string_value(json_object_get(e, "time")));
		json_array_foreach(paths, j, p)
		{
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", j ? "," : "",
			                      json_string_value(p));
		}
		json_decref(paths);
		json_decref(set);
	}
	json_decref(list);
	return buf;
}

static void update(rz_managed_t *m, const char *manager, const char *now, const char *old,
                   const char *new)
{
	json_t *o = old ? parse_json(old) : NULL, *n = parse_json(new);
	rz_err_t err = { 0 };

	ck_assert_int_eq(
	    rz_managed_update(m, &(rz_managed_who_t){ manager, false, now }, o, n, &err), 0);
	json_decref(o);
	json_decref(n);
}

/* Apply config over live; returns the code, *result as compact sorted JSON (caller frees)
 * and the causes' "field|message;..." into causes_text when given. */
static int apply(rz_managed_t *m, const char *manager, const char *now, bool force,
                 const char *live, const char *config, char **result, char *causes_text,
                 size_t size)
{
	json_t *l = parse_json(live), *c = parse_json(config), *out = NULL, *causes = json_array();
	rz_err_t err = { 0 };
	int rc = rz_managed_apply(m, &(rz_managed_who_t){ manager, false, now }, force, l, c, &out,
	                          causes, &err);
	size_t i, n = 0;
	json_t *x;

	ck_assert((rc == 0) == (out != NULL));
	if (result != NULL) {
		*result = out ? json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	}
	if (causes_text != NULL) {
		causes_text[0] = '\0';
		json_array_foreach(causes, i, x)
		{
			ck_assert_str_eq(json_string_value(json_object_get(x, "reason")),
			                 "FieldManagerConflict");
			n += (size_t)snprintf(causes_text + n, size - n, "%s%s|%s", i ? ";" : "",
			                      json_string_value(json_object_get(x, "field")),
			                      json_string_value(json_object_get(x, "message")));
		}
	}
	json_decref(out);
	json_decref(causes);
	json_decref(l);
	json_decref(c);
	return rc;
}

#define T1 "2026-01-01T00:00:01Z"
#define T2 "2026-01-01T00:00:02Z"
#define T3 "2026-01-01T00:00:03Z"
#define T4 "2026-01-01T00:00:04Z"

/* ------------------------------------------------------------------ decode, encode */

START_TEST(test_round_trip_sorted)
{
	static const char in[] =
	    "[{\"manager\":\"b\",\"operation\":\"Update\",\"apiVersion\":\"rezuscloud.io/v1\","
	    "\"time\":\"" T2
	    "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:a\":{}}}},"
	    "{\"manager\":\"s\",\"operation\":\"Update\",\"apiVersion\":\"rezuscloud.io/v1\","
	    "\"time\":\"" T1
	    "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:p\":{}}},"
	    "\"subresource\":\"status\"},"
	    "{\"manager\":\"a\",\"operation\":\"Update\",\"apiVersion\":\"rezuscloud.io/v1\","
	    "\"time\":\"" T1
	    "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:c\":{}}}},"
	    "{\"manager\":\"k\",\"operation\":\"Apply\",\"apiVersion\":\"rezuscloud.io/v1\","
	    "\"time\":\"" T3 "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{"
	    "\"f:labels\":{\".\":{},\"f:x\":{}}}}}]";
	json_t *list = parse_json(in);
	rz_managed_t m;
	rz_err_t err = { 0 };
	char *out;

	ck_assert_int_eq(rz_managed_decode(&m, list, &err), 0);
	ck_assert_int_eq(m.n, 4);
	ck_assert_str_eq(summary(&m), "k/Apply@" T3 "=.metadata.labels,.metadata.labels.x;"
	                              "a/Update@" T1 "=.spec.c;s/Update/status@" T1 "=.status.p;"
	                              "b/Update@" T2 "=.spec.a");
	out = encoded(&m);
	ck_assert_ptr_nonnull(strstr(out, "{\"apiVersion\":\"rezuscloud.io/v1\",\"fieldsType\":"
	                                  "\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:p\":{}}},"
	                                  "\"manager\":\"s\",\"operation\":\"Update\","
	                                  "\"subresource\":\"status\",\"time\":\"" T1 "\"}"));
	free(out);
	rz_managed_fini(&m);
	ck_assert_int_eq(m.n, 0);
	ck_assert_int_eq(rz_managed_decode(&m, NULL, &err), 0);
	ck_assert_int_eq(m.n, 0);
	json_decref(list);
}
END_TEST

static const struct {
	const char *entry, *err;
} bad_entries[] = {
	{ "{\"operation\":\"Update\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{}}", "manager" },
	{ "{\"manager\":\"a\",\"operation\":\"Patch\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{}}",
	  "operation: must be Apply or Update" },
	{ "{\"manager\":\"a\",\"operation\":\"Apply\",\"fieldsType\":\"FieldsV2\",\"fieldsV1\":{}}",
	  "fieldsType: must be FieldsV1" },
	{ "{\"manager\":\"a\",\"operation\":\"Apply\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{},"
	  "\"subresource\":\"scale\"}",
	  "unknown subresource 'scale'" },
	{ "{\"manager\":\"a\",\"operation\":\"Apply\",\"fieldsType\":\"FieldsV1\","
	  "\"fieldsV1\":{\"f:spec\":{\"k:{}\":{}}}}",
	  "unsupported key 'k:{}'" },
	{ "{\"manager\":\"a\",\"operation\":\"Apply\",\"fieldsType\":\"FieldsV1\"}",
	  "expected an object" },
	{ "3", "manager" },
};

START_TEST(test_decode_refused)
{
	rz_managed_t m;
	rz_err_t err = { 0 };
	json_t *list, *dup;

	for (size_t i = 0; i < ARRAY_SIZE(bad_entries); i++) {
		list = json_pack("[o]", parse_json(bad_entries[i].entry));
		ck_assert_int_eq(rz_managed_decode(&m, list, &err), RZ_EPARSE);
		ck_assert_msg(strstr(err.msg, bad_entries[i].err) != NULL, "%s: %s",
		              bad_entries[i].entry, err.msg);
		ck_assert_int_eq(m.n, 0);
		json_decref(list);
	}
	dup = parse_json("{\"manager\":\"a\",\"operation\":\"Update\",\"fieldsType\":\"FieldsV1\","
	                 "\"fieldsV1\":{}}");
	list = json_pack("[O,O]", dup, dup);
	ck_assert_int_eq(rz_managed_decode(&m, list, &err), RZ_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "a second entry of 'a'"));
	json_decref(list);
	list = json_array();
	for (int i = 0; i <= RZ_MANAGED_MAX_ENTRIES; i++) {
		json_array_append(list, dup);
	}
	ck_assert_int_eq(rz_managed_decode(&m, list, &err), RZ_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "more than 26 entries"));
	json_decref(list);
	ck_assert_int_eq(rz_managed_decode(&m, dup, &err), RZ_EPARSE); /* not a list */
	json_decref(dup);
}
END_TEST

/* ------------------------------------------------------------------ update */

START_TEST(test_update)
{
	rz_managed_t m;

	rz_managed_init(&m);
	update(&m, "create", T1, NULL,
	       "{\"metadata\":{\"labels\":{\"x\":\"1\"}},\"spec\":{\"a\":1,"
	       "\"b\":2}}");
	ck_assert_str_eq(summary(&m), "create/Update@" T1 "=.metadata.labels.x,.spec.a,.spec.b");
	/* a change takes the field from its owner */
	update(&m, "scaler", T2, "{\"spec\":{\"a\":1,\"b\":2}}", "{\"spec\":{\"a\":5,\"b\":2}}");
	ck_assert_str_eq(summary(&m), "create/Update@" T1 "=.metadata.labels.x,.spec.b;"
	                              "scaler/Update@" T2 "=.spec.a");
	/* a removal takes it from everyone; the remover, changing nothing, owns nothing */
	update(&m, "cleaner", T3,
	       "{\"metadata\":{\"labels\":{\"x\":\"1\"}},\"spec\":{\"a\":5,\"b\":2}}",
	       "{\"spec\":{\"a\":5}}");
	ck_assert_str_eq(summary(&m), "scaler/Update@" T2 "=.spec.a");
	/* a write that changes nothing leaves the entry and its time */
	update(&m, "scaler", T4, "{\"spec\":{\"a\":5}}", "{\"spec\":{\"a\":5}}");
	ck_assert_str_eq(summary(&m), "scaler/Update@" T2 "=.spec.a");
	rz_managed_fini(&m);
}
END_TEST

START_TEST(test_updaters_capped)
{
	rz_managed_t m;
	char old[512] = "{}", new[512], name[16], when[32];

	rz_managed_init(&m);
	for (int i = 0; i < RZ_MANAGED_MAX_UPDATERS + 2; i++) {
		json_t *o = parse_json(old);
		snprintf(name, sizeof(name), "m%02d", i);
		snprintf(when, sizeof(when), "2026-01-01T00:00:%02dZ", i);
		json_object_set_new(o, name, json_integer(i));
		json_dumpb(o, new, sizeof(new), JSON_COMPACT);
		new[json_dumpb(o, NULL, 0, JSON_COMPACT)] = '\0';
		update(&m, name, when, old, new);
		strcpy(old, new);
		json_decref(o);
	}
	ck_assert_int_eq(m.n, RZ_MANAGED_MAX_UPDATERS);
	/* the three oldest went into one, with the time of the last of them */
	ck_assert_ptr_nonnull(strstr(summary(&m),
	                             "ancient-changes/Update@2026-01-01T00:00:02Z=.m00,.m01,.m02;"
	                             "m03/Update@2026-01-01T00:00:03Z=.m03"));
	rz_managed_fini(&m);
}
END_TEST

/* ------------------------------------------------------------------ apply */

START_TEST(test_apply_creates_and_noop)
{
	rz_managed_t m;
	char *r = NULL;
	static const char cfg[] =
	    "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{\"count\":2}}";

	rz_managed_init(&m);
	ck_assert_int_eq(apply(&m, "k", T1, false, "{}", cfg, &r, NULL, 0), 0);
	ck_assert_str_eq(r, "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{\"count\":2}}");
	ck_assert_str_eq(summary(&m), "k/Apply@" T1 "=.metadata.labels.a,.spec.count");
	free(r);
	/* again: the same result, the entry as it was */
	ck_assert_int_eq(apply(&m, "k", T2, false, cfg, cfg, &r, NULL, 0), 0);
	ck_assert_str_eq(r, "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{\"count\":2}}");
	ck_assert_str_eq(summary(&m), "k/Apply@" T1 "=.metadata.labels.a,.spec.count");
	free(r);
	rz_managed_fini(&m);
}
END_TEST

START_TEST(test_apply_conflicts)
{
	static const char live[] = "{\"spec\":{\"count\":5,\"role\":\"w\"}}";
	rz_managed_t m;
	char *r = NULL, causes[512];

	rz_managed_init(&m);
	update(&m, "creator", T1, NULL, "{\"spec\":{\"count\":2,\"role\":\"w\"}}");
	update(&m, "scaler", T2, "{\"spec\":{\"count\":2,\"role\":\"w\"}}", live);
	/* another value for a field another manager owns: refused, nothing changes */
	ck_assert_int_eq(apply(&m, "k", T3, false, live, "{\"spec\":{\"count\":3,\"role\":\"x\"}}",
	                       &r, causes, sizeof(causes)),
	                 RZ_ECONFLICT);
	ck_assert_ptr_null(r);
	ck_assert_str_eq(causes, ".spec.role|conflict with \"creator\" using rezuscloud.io/v1;"
	                         ".spec.count|conflict with \"scaler\" using rezuscloud.io/v1");
	ck_assert_str_eq(summary(&m),
	                 "creator/Update@" T1 "=.spec.role;scaler/Update@" T2 "=.spec.count");
	/* the same values: shared, no conflict */
	ck_assert_int_eq(apply(&m, "k", T3, false, live, live, &r, causes, sizeof(causes)), 0);
	ck_assert_str_eq(causes, "");
	ck_assert_str_eq(r, "{\"spec\":{\"count\":5,\"role\":\"w\"}}");
	ck_assert_str_eq(summary(&m), "k/Apply@" T3 "=.spec.count,.spec.role;creator/Update@" T1
	                              "=.spec.role;scaler/Update@" T2 "=.spec.count");
	free(r);
	/* forced: the fields leave their owners; an owner left with none goes */
	ck_assert_int_eq(apply(&m, "k", T4, true, live, "{\"spec\":{\"count\":3,\"role\":\"w\"}}",
	                       &r, causes, sizeof(causes)),
	                 0);
	ck_assert_str_eq(causes, ".spec.count|conflict with \"scaler\" using rezuscloud.io/v1");
	ck_assert_str_eq(r, "{\"spec\":{\"count\":3,\"role\":\"w\"}}");
	ck_assert_str_eq(summary(&m),
	                 "k/Apply@" T4 "=.spec.count,.spec.role;creator/Update@" T1 "=.spec.role");
	free(r);
	/* another applier conflicts by its bare name */
	ck_assert_int_eq(apply(&m, "j", T4, false, "{\"spec\":{\"count\":3,\"role\":\"w\"}}",
	                       "{\"spec\":{\"count\":4}}", NULL, causes, sizeof(causes)),
	                 RZ_ECONFLICT);
	ck_assert_str_eq(causes, ".spec.count|conflict with \"k\"");
	rz_managed_fini(&m);
}
END_TEST

START_TEST(test_apply_removes_what_it_dropped)
{
	rz_managed_t m;
	char *r = NULL;

	rz_managed_init(&m);
	ck_assert_int_eq(apply(&m, "k", T1, false, "{}",
	                       "{\"metadata\":{\"labels\":{\"x\":\"1\"}},\"spec\":{\"a\":1,\"b\":2,"
	                       "\"c\":{\"d\":1}}}",
	                       NULL, NULL, 0),
	                 0);
	update(&m, "u", T2, "{\"spec\":{\"a\":1,\"b\":2}}", "{\"spec\":{\"a\":1,\"b\":2,\"e\":5}}");
	ck_assert_int_eq(apply(&m, "j", T2, false,
	                       "{\"metadata\":{\"labels\":{\"x\":\"1\"}},\"spec\":{\"a\":1,\"b\":2,"
	                       "\"c\":{\"d\":1},\"e\":5}}",
	                       "{\"spec\":{\"b\":2}}", NULL, NULL, 0),
	                 0);
	/* k stops applying b (j still does), c and the labels (nobody else does): those go, the
	 * objects they emptied with them; e, which k never applied, stays */
	ck_assert_int_eq(apply(&m, "k", T3, false,
	                       "{\"metadata\":{\"labels\":{\"x\":\"1\"}},\"spec\":{\"a\":1,\"b\":2,"
	                       "\"c\":{\"d\":1},\"e\":5}}",
	                       "{\"spec\":{\"a\":1}}", &r, NULL, 0),
	                 0);
	ck_assert_str_eq(r, "{\"spec\":{\"a\":1,\"b\":2,\"e\":5}}");
	ck_assert_str_eq(summary(&m),
	                 "j/Apply@" T2 "=.spec.b;k/Apply@" T3 "=.spec.a;u/Update@" T2 "=.spec.e");
	free(r);
	/* a null counts as absent (and so does an object of nulls): a goes too, and k owns
	 * nothing */
	ck_assert_int_eq(apply(&m, "k", T4, false, "{\"spec\":{\"a\":1,\"b\":2,\"e\":5}}",
	                       "{\"spec\":{\"a\":null}}", &r, NULL, 0),
	                 0);
	ck_assert_str_eq(r, "{\"spec\":{\"b\":2,\"e\":5}}");
	ck_assert_ptr_null(strstr(summary(&m), "k/Apply"));
	free(r);
	rz_managed_fini(&m);
}
END_TEST

START_TEST(test_apply_status_is_apart)
{
	rz_managed_t m;
	json_t *live = parse_json("{\"status\":{\"phase\":\"A\"}}");
	json_t *cfg = parse_json("{\"status\":{\"phase\":\"B\"}}"), *out = NULL;
	json_t *causes = json_array();
	rz_err_t err = { 0 };

	rz_managed_init(&m);
	ck_assert_int_eq(rz_managed_apply(&m, &(rz_managed_who_t){ "k", true, T1 }, false, live,
	                                  cfg, &out, causes, &err),
	                 0);
	update(&m, "k", T2, NULL, "{\"spec\":{\"a\":1}}");
	ck_assert_str_eq(summary(&m),
	                 "k/Apply/status@" T1 "=.status.phase;k/Update@" T2 "=.spec.a");
	json_decref(out);
	json_decref(live);
	json_decref(cfg);
	json_decref(causes);
	rz_managed_fini(&m);
}
END_TEST

START_TEST(test_appliers_capped)
{
	rz_managed_t m;
	char name[16], cfg[64];
	rz_err_t err = { 0 };
	json_t *empty = json_object(), *c, *out = NULL, *causes = json_array();

	rz_managed_init(&m);
	for (int i = 0; i < RZ_MANAGED_MAX_APPLIERS; i++) {
		snprintf(name, sizeof(name), "a%d", i);
		snprintf(cfg, sizeof(cfg), "{\"f%d\":1}", i);
		ck_assert_int_eq(apply(&m, name, T1, false, "{}", cfg, NULL, NULL, 0), 0);
	}
	c = parse_json("{\"z\":1}");
	ck_assert_int_eq(rz_managed_apply(&m, &(rz_managed_who_t){ "one-more", false, T2 }, false,
	                                  empty, c, &out, causes, &err),
	                 -E2BIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "at most 16 managers may apply"));
	ck_assert_ptr_null(out);
	/* one of them may apply again */
	ck_assert_int_eq(apply(&m, "a3", T2, false, "{}", "{\"f3\":2}", NULL, NULL, 0), 0);
	json_decref(c);
	json_decref(empty);
	json_decref(causes);
	rz_managed_fini(&m);
}
END_TEST

START_TEST(test_encode_bounded)
{
	rz_managed_t m;
	json_t *big = json_object(), *list = NULL;
	rz_err_t err = { 0 };
	char key[64];

	rz_managed_init(&m);
	for (int i = 0; i < 8000; i++) {
		snprintf(key, sizeof(key), "a-rather-long-field-name-to-fill-the-set-%05d", i);
		json_object_set_new(big, key, json_true());
	}
	ck_assert_int_eq(
	    rz_managed_update(&m, &(rz_managed_who_t){ "u", false, T1 }, NULL, big, &err), 0);
	ck_assert_int_eq(rz_managed_encode(&m, &list, &err), -E2BIG);
	ck_assert_ptr_null(list);
	ck_assert_ptr_nonnull(strstr(err.msg, "at most 262144"));
	json_decref(big);
	rz_managed_fini(&m);
}
END_TEST

/* ------------------------------------------------------------------ messages */

START_TEST(test_conflict_message)
{
	json_t *one =
	    parse_json("[{\"field\":\".spec.count\",\"reason\":\"FieldManagerConflict\","
	               "\"message\":\"conflict with \\\"s\\\" using rezuscloud.io/v1\"}]");
	json_t *more =
	    parse_json("[{\"field\":\".spec.a\",\"message\":\"conflict with \\\"a\\\"\"},"
	               "{\"field\":\".spec.b\",\"message\":\"conflict with \\\"a\\\"\"},"
	               "{\"field\":\".spec.c\",\"message\":\"conflict with \\\"b\\\" using "
	               "rezuscloud.io/v1\"}]");
	char buf[512], small[40];

	rz_managed_conflict_message(one, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Apply failed with 1 conflict: conflict with \"s\" using "
	                      "rezuscloud.io/v1: .spec.count");
	rz_managed_conflict_message(more, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Apply failed with 3 conflicts: conflicts with \"a\":\n- .spec.a\n- "
	                      ".spec.b\nconflicts with \"b\" using rezuscloud.io/v1:\n- .spec.c");
	rz_managed_conflict_message(more, small, sizeof(small));
	ck_assert_str_eq(small, "Apply failed with 3 conflicts: confl...");
	json_decref(one);
	json_decref(more);
}
END_TEST

/* ------------------------------------------------------------------ views */

START_TEST(test_views)
{
	const rz_kind_t *user = rz_kind_by_name("User");
	json_t *obj = parse_json(
	    "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"User\",\"metadata\":{\"name\":\"u\","
	    "\"uid\":\"1\",\"resourceVersion\":\"5\",\"generation\":1,\"labels\":{\"a\":\"1\"},"
	    "\"managedFields\":[],\"annotations\":null},\"spec\":{\"role\":\"view\","
	    "\"password\":\"hunter2\"},\"status\":{\"x\":1}}");
	json_t *view = rz_managed_view(obj, user, false), *st = rz_managed_view(obj, user, true);
	json_t *want = parse_json("{\"metadata\":{\"labels\":{\"a\":\"1\"},\"annotations\":null},"
	                          "\"spec\":{\"role\":\"view\"}}");
	json_t *nv = parse_json("{\"spec\":{\"role\":\"edit\"},\"extra\":1}");
	json_t *after = parse_json(
	    "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"User\",\"metadata\":{\"name\":\"u\","
	    "\"uid\":\"1\",\"resourceVersion\":\"5\",\"generation\":1,\"managedFields\":[]},"
	    "\"spec\":{\"role\":\"edit\"},\"status\":{\"x\":1},\"extra\":1}");

	ck_assert_ptr_nonnull(user);
	ck_assert_msg(json_equal(view, want), "%s", json_dumps(view, JSON_COMPACT));
	ck_assert_int_eq(json_object_size(st), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(st, "status"), "x")),
	                 1);
	ck_assert_int_eq(rz_managed_unview(obj, nv, user, false), 0);
	ck_assert_msg(json_equal(obj, after), "%s", json_dumps(obj, JSON_COMPACT));
	json_decref(st);
	st = parse_json("{\"status\":{\"y\":2}}");
	ck_assert_int_eq(rz_managed_unview(obj, st, user, true), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(obj, "status"), "y")),
	                 2);
	ck_assert_ptr_null(json_object_get(json_object_get(obj, "status"), "x"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(obj, "spec"), "role")),
	                 "edit");
	json_decref(obj);
	json_decref(view);
	json_decref(st);
	json_decref(want);
	json_decref(nv);
	json_decref(after);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("managed");
	TCase *tc = tcase_create("managed");

	tcase_add_test(tc, test_round_trip_sorted);
	tcase_add_test(tc, test_decode_refused);
	tcase_add_test(tc, test_update);
	tcase_add_test(tc, test_updaters_capped);
	tcase_add_test(tc, test_apply_creates_and_noop);
	tcase_add_test(tc, test_apply_conflicts);
	tcase_add_test(tc, test_apply_removes_what_it_dropped);
	tcase_add_test(tc, test_apply_status_is_apart);
	tcase_add_test(tc, test_appliers_capped);
	tcase_add_test(tc, test_encode_bounded);
	tcase_add_test(tc, test_conflict_message);
	tcase_add_test(tc, test_views);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
