/* tests/unit/check_remote.c - the remote runners' pieces that need no NATS server: the
 * heartbeat's checks (subject, size, JSON, name, labels, bounds), runner.labels, the
 * secret files' checks, the runners.* / runner.* settings, pools, the merge of a tenant's
 * runnerSelector with its node groups', and the job and event messages. */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base/config.h"
#include "core/model/kinds.h"
#include "core/remote/dispatch.h"
#include "core/remote/heartbeat.h"
#include "core/remote/nats.h"
#include "tests/unit/testutil.h"

#define SUBJ "rezus.a1b2c3d4.runners.eu-1.heartbeat"
#define GOOD                                                                                       \
	"{\"name\":\"eu-1\",\"labels\":{\"region\":\"eu-frankfurt\"},\"version\":\"0.9.0\","       \
	"\"concurrency\":2,\"running\":[\"run-abc12\"],\"startedAt\":\"2026-12-01T20:00:00."       \
	"000Z\"}"

static json_t *parse(const char *subject, const char *text, char *why)
{
	return rz_heartbeat_parse(subject, text, strlen(text), why, 256);
}

START_TEST(test_good_heartbeat)
{
	char why[256] = "";
	json_t *hb = parse(SUBJ, GOOD, why);

	ck_assert_msg(hb != NULL, "%s", why);
	ck_assert_str_eq(json_string_value(json_object_get(hb, "name")), "eu-1");
	ck_assert_int_eq(json_integer_value(json_object_get(hb, "concurrency")), 2);
	ck_assert(json_is_false(json_object_get(hb, "stopping")));
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(hb, "labels"), "region")),
	    "eu-frankfurt");
	json_decref(hb);
}
END_TEST

START_TEST(test_unknown_members_are_not_kept)
{
	char why[256] = "";
	json_t *hb =
	    parse(SUBJ,
	          "{\"name\":\"eu-1\",\"labels\":{},\"version\":\"1\",\"concurrency\":1,"
	          "\"running\":[],\"startedAt\":\"2026-12-01T20:00:00Z\",\"stopping\":true,"
	          "\"password\":\"x\"}",
	          why);

	ck_assert_msg(hb != NULL, "%s", why);
	ck_assert_ptr_null(json_object_get(hb, "password"));
	ck_assert(json_is_true(json_object_get(hb, "stopping")));
	json_decref(hb);
}
END_TEST

struct bad {
	const char *subject, *text, *why;
};

static const struct bad bad[] = {
	{ "rezus.a1b2c3d4.runners.eu-2.heartbeat", GOOD, "name: not 'eu-2'" },
	{ "rezus.a1b2c3d4.runners.heartbeat", GOOD, "names no runner" },
	{ "rezus.a1b2c3d4.runners.EU.heartbeat", GOOD, "names no runner" },
	{ "rezus.a1b2c3d4.jobs.eu-1.heartbeat", GOOD, "names no runner" },
	{ "rezus.runners.eu-1.heartbeat", GOOD, "names no runner" },
	{ "rezus..runners.eu-1.heartbeat", GOOD, "names no runner" },
	{ SUBJ, "not json", "not a JSON object" },
	{ SUBJ, "[1,2]", "not a JSON object" },
	{ SUBJ, "{\"name\":\"eu-1\",\"name\":\"eu-1\"}", "not a JSON object" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{\"bad key!\":\"x\"},\"version\":\"1\",\"concurrency\":1,"
	  "\"running\":[],\"startedAt\":\"2026-12-01T20:00:00Z\"}",
	  "labels: key 'bad key!'" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{\"a\":\"not a value\"},\"version\":\"1\","
	  "\"concurrency\":1,\"running\":[],\"startedAt\":\"2026-12-01T20:00:00Z\"}",
	  "labels.a" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{},\"version\":\"1\",\"concurrency\":0,"
	  "\"running\":[],\"startedAt\":\"2026-12-01T20:00:00Z\"}",
	  "concurrency" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{},\"version\":\"1\",\"concurrency\":65,"
	  "\"running\":[],\"startedAt\":\"2026-12-01T20:00:00Z\"}",
	  "concurrency" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{},\"version\":\"1\",\"concurrency\":1,"
	  "\"running\":[\"Not A Name\"],\"startedAt\":\"2026-12-01T20:00:00Z\"}",
	  "running[0]" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{},\"version\":\"1\",\"concurrency\":1,"
	  "\"running\":[],\"startedAt\":\"yesterday\"}",
	  "startedAt" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{},\"version\":1,\"concurrency\":1,"
	  "\"running\":[],\"startedAt\":\"2026-12-01T20:00:00Z\"}",
	  "version" },
	{ SUBJ,
	  "{\"name\":\"eu-1\",\"labels\":{},\"version\":\"1\",\"concurrency\":1,"
	  "\"running\":[],\"startedAt\":\"2026-12-01T20:00:00Z\",\"stopping\":\"yes\"}",
	  "stopping" },
};

START_TEST(test_bad_heartbeats_are_refused)
{
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *hb;
		why[0] = '\0';
		hb = parse(bad[i].subject, bad[i].text, why);
		ck_assert_msg(hb == NULL, "case %zu accepted", i);
		ck_assert_msg(strstr(why, bad[i].why) != NULL, "case %zu: '%s' lacks '%s'", i, why,
		              bad[i].why);
	}
}
END_TEST

START_TEST(test_size_and_count_bounds)
{
	char why[256] = "", *big = malloc(RZ_HEARTBEAT_MAX + 64), *p;
	json_t *running = json_array(), *o;
	char *text;

	ck_assert_ptr_nonnull(big);
	memset(big, ' ', RZ_HEARTBEAT_MAX + 1);
	memcpy(big, GOOD, strlen(GOOD));
	ck_assert_ptr_null(rz_heartbeat_parse(SUBJ, big, RZ_HEARTBEAT_MAX + 1, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "more than"));
	/* exactly at the bound: taken (trailing spaces are JSON whitespace) */
	p = big;
	json_decref(rz_heartbeat_parse(SUBJ, p, RZ_HEARTBEAT_MAX, why, sizeof(why)));
	free(big);

	for (int i = 0; i <= RZ_HEARTBEAT_RUNNING; i++) {
		char name[32];
		snprintf(name, sizeof(name), "run-%d", i);
		json_array_append_new(running, json_string(name));
	}
	o = json_pack("{s:s, s:{}, s:s, s:i, s:o, s:s}", "name", "eu-1", "labels", "version", "1",
	              "concurrency", 1, "running", running, "startedAt", "2026-12-01T20:00:00Z");
	text = json_dumps(o, JSON_COMPACT);
	ck_assert_ptr_null(parse(SUBJ, text, why));
	ck_assert_ptr_nonnull(strstr(why, "running"));
	free(text);
	json_decref(o);
}
END_TEST

START_TEST(test_runner_labels)
{
	char why[256] = "";
	char *good[] = { "region=eu-frankfurt", "rezuscloud.io/cloud=oci", "empty=", NULL };
	char *twice[] = { "a=1", "a=2", NULL };
	char *noeq[] = { "region", NULL };
	char *badval[] = { "a=not valid", NULL };
	json_t *o = rz_heartbeat_labels(good, why, sizeof(why));

	ck_assert_msg(o != NULL, "%s", why);
	ck_assert_int_eq(json_object_size(o), 3);
	ck_assert_str_eq(json_string_value(json_object_get(o, "rezuscloud.io/cloud")), "oci");
	json_decref(o);
	o = rz_heartbeat_labels(NULL, why, sizeof(why));
	ck_assert_int_eq(json_object_size(o), 0);
	json_decref(o);
	ck_assert_ptr_null(rz_heartbeat_labels(twice, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "twice"));
	ck_assert_ptr_null(rz_heartbeat_labels(noeq, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "key=value"));
	ck_assert_ptr_null(rz_heartbeat_labels(badval, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "value 'not valid'"));
}
END_TEST

START_TEST(test_secret_files)
{
	char *dir = rzt_tmpdir(), path[512], buf[RZ_NATS_SECRET_MAX + 2];
	rz_err_t err = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/pw", dir);
	f = fopen(path, "w");
	fputs("s3cret-pw\nsecond line\n", f);
	fclose(f);
	chmod(path, 0644);
	ck_assert_int_eq(
	    rz_nats_read_secret("runner.nats_password_file", path, buf, sizeof(buf), &err),
	    REZUS_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "mode 0644"));
	ck_assert_ptr_null(strstr(err.msg, "s3cret"));
	chmod(path, 0600);
	ck_assert_int_eq(
	    rz_nats_read_secret("runner.nats_password_file", path, buf, sizeof(buf), &err), 0);
	ck_assert_str_eq(buf, "s3cret-pw");
	f = fopen(path, "w");
	fputs("\n", f);
	fclose(f);
	ck_assert_int_eq(rz_nats_read_secret("k", path, buf, sizeof(buf), &err), REZUS_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
	snprintf(path, sizeof(path), "%s/absent", dir);
	ck_assert_int_lt(rz_nats_read_secret("k", path, buf, sizeof(buf), &err), 0);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

/* Load text into a fresh configuration and validate it; the code, err filled. */
static int load(const char *text, rz_config_t *cfg, rz_err_t *err)
{
	int rc;

	ck_assert_int_eq(rz_config_defaults(cfg), 0);
	rc = rz_config_load_string(cfg, "test.conf", text, strlen(text), err);
	if (rc == 0) {
		rc = rz_config_validate(cfg, err);
	}
	return rc;
}

START_TEST(test_settings)
{
	rz_config_t cfg = { 0 };
	rz_err_t err = { 0 };

	ck_assert_int_eq(load("", &cfg, &err), 0);
	ck_assert_str_eq(cfg.runners_nats_url, "");
	ck_assert_int_eq(cfg.runners_heartbeat_timeout_ms, 30000);
	ck_assert_int_eq(cfg.runner_concurrency, 1);
	ck_assert_int_eq(cfg.runner_heartbeat_ms, 5000);
	ck_assert_int_eq(cfg.runner_pool_idle_ms, 3600 * 1000);
	ck_assert_str_eq(cfg.runner_name, "");
	rz_config_free(&cfg);

	ck_assert_int_eq(load("runner:\n  name: eu-1\n  labels: [region=eu]\n  concurrency: 8\n"
	                      "  nats_url: nats://127.0.0.1:4222\n  nats_token_file: /t\n",
	                      &cfg, &err),
	                 0);
	ck_assert_int_eq(cfg.runner_concurrency, 8);
	ck_assert_str_eq(cfg.runner_labels[0], "region=eu");
	rz_config_free(&cfg);

	ck_assert_int_eq(
	    load("runners:\n  installation: home-1\nrunner:\n  installation: home-1\n", &cfg, &err),
	    0);
	ck_assert_str_eq(cfg.runners_installation, "home-1");
	ck_assert_str_eq(cfg.runner_installation, "home-1");
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runners:\n  installation: Home.1\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "runners.installation"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runner:\n  installation: a>\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "runner.installation"));
	rz_config_free(&cfg);

	ck_assert_int_ne(load("runner:\n  concurrency: 65\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "runner.concurrency"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runner:\n  name: Not_A_Label\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "DNS label"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runners:\n  heartbeat_timeout: 500ms\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "runners.heartbeat_timeout"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runners:\n  heartbeat_timeout: 2h\n", &cfg, &err), 0);
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runner:\n  pool_idle: 8d\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "runner.pool_idle"));
	rz_config_free(&cfg);
	ck_assert_int_eq(load("runner:\n  pool_idle: 7d\n", &cfg, &err), 0);
	ck_assert_int_eq(cfg.runner_pool_idle_ms, 7LL * 86400 * 1000);
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runners:\n  nats_url: http://x:1\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "nats://"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runners:\n  nats_url: nats://d:secret@x:1\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "no credentials in the URL"));
	ck_assert_ptr_null(strstr(err.msg, "secret"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runners:\n  nats_url: nats://x:1\n  nats_user: d\n", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "go together"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runners:\n  nats_user: d\n  nats_password_file: /p\n", &cfg, &err),
	                 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "no URL"));
	rz_config_free(&cfg);
	ck_assert_int_ne(load("runner:\n  nats_url: nats://x:1\n  nats_user: d\n"
	                      "  nats_password_file: /p\n  nats_token_file: /t\n",
	                      &cfg, &err),
	                 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "not both"));
	rz_config_free(&cfg);
}
END_TEST

static json_t *sel(const char *text)
{
	return json_loads(text, 0, NULL);
}

START_TEST(test_pool_escaping)
{
	char buf[RZ_DISPATCH_POOL_MAX], why[256] = "";
	json_t *s;

	ck_assert(rz_dispatch_pool(NULL, buf, sizeof(buf), why, sizeof(why)));
	ck_assert_str_eq(buf, "default");
	s = sel("{}");
	ck_assert(rz_dispatch_pool(s, buf, sizeof(buf), why, sizeof(why)));
	ck_assert_str_eq(buf, "default");
	json_decref(s);
	s = sel("{\"region\":\"eu-frankfurt\"}");
	ck_assert_msg(rz_dispatch_pool(s, buf, sizeof(buf), why, sizeof(why)), "%s", why);
	ck_assert_str_eq(buf, "region_eu-frankfurt");
	json_decref(s);
	/* sorted by key, whatever the order given; '.', '/', '_' escaped */
	s = sel("{\"tier\":\"gold\",\"a.b/c\":\"x_y\"}");
	ck_assert_msg(rz_dispatch_pool(s, buf, sizeof(buf), why, sizeof(why)), "%s", why);
	ck_assert_str_eq(buf, "a%2Eb%2Fc_x%5Fy+tier_gold");
	json_decref(s);
	/* an empty value is a value */
	s = sel("{\"gpu\":\"\"}");
	ck_assert(rz_dispatch_pool(s, buf, sizeof(buf), why, sizeof(why)));
	ck_assert_str_eq(buf, "gpu_");
	json_decref(s);
	/* no pool token holds a character a NATS subject token may not */
	s = sel("{\"example.com/zone\":\"a.b\",\"k_1\":\"v-2\"}");
	ck_assert(rz_dispatch_pool(s, buf, sizeof(buf), why, sizeof(why)));
	ck_assert_ptr_null(strpbrk(buf, ". *>\t"));
	json_decref(s);
	/* too small a buffer */
	s = sel("{\"region\":\"eu-frankfurt\"}");
	ck_assert(!rz_dispatch_pool(s, buf, 8, why, sizeof(why)));
	json_decref(s);
}
END_TEST

START_TEST(test_bad_selectors)
{
	char buf[RZ_DISPATCH_POOL_MAX], why[256];
	const char *nope[] = { "[]", "{\"a\":1}", "{\"-bad\":\"x\"}", "{\"a\":\"has space\"}",
		               "{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\",\"d\":\"4\"}" };

	for (size_t i = 0; i < sizeof(nope) / sizeof(nope[0]); i++) {
		json_t *s = sel(nope[i]);
		why[0] = '\0';
		ck_assert_msg(!rz_dispatch_selector_check(s, why, sizeof(why)), "%s", nope[i]);
		ck_assert_msg(why[0] != '\0', "%s", nope[i]);
		ck_assert(!rz_dispatch_pool(s, buf, sizeof(buf), why, sizeof(why)));
		json_decref(s);
	}
}
END_TEST

/* Whether the array a holds the string v. */
static bool holds(const json_t *a, const char *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(a, i, x)
	{
		if (strcmp(json_string_value(x), v) == 0) {
			return true;
		}
	}
	return false;
}

/* An installation's names: every subject and stream carries it; bad names refused. */
START_TEST(test_installation_names)
{
	static const char *const nope[] = {
		"", "A1", "a.b", "a*", "a>", "a b", "123456789012345678901234567890123"
	};
	rz_nats_names_t n;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_nats_names("runners.installation", "3f9c01ab", &n, &err), 0);
	ck_assert_str_eq(n.jobs_stream, "REZUS_3F9C01AB_JOBS");
	ck_assert_str_eq(n.events_stream, "REZUS_3F9C01AB_EVENTS");
	ck_assert_str_eq(n.jobs, "rezus.3f9c01ab.jobs.");
	ck_assert_str_eq(n.events, "rezus.3f9c01ab.events.");
	ck_assert_str_eq(n.runners, "rezus.3f9c01ab.runners.");
	ck_assert_int_eq(rz_nats_names("k", "12345678901234567890123456789012", &n, &err), 0);
	for (size_t i = 0; i < sizeof(nope) / sizeof(nope[0]); i++) {
		err = (rz_err_t){ 0 };
		ck_assert_int_eq(rz_nats_names("runners.installation", nope[i], &n, &err),
		                 REZUS_EINVALID);
		ck_assert_msg(strstr(err.msg, "runners.installation") != NULL, "%s", err.msg);
	}
	ck_assert_int_eq(rz_nats_names("k", NULL, &n, &err), REZUS_EINVALID);
	/* what follows the installation, whatever it is */
	ck_assert_str_eq(rz_nats_subject_rest("rezus.x.events.run-1", "events"), "run-1");
	ck_assert_str_eq(rz_nats_subject_rest("rezus.home-1.runners.a.cancel", "runners"),
	                 "a.cancel");
	ck_assert(rz_nats_subject_rest("rezus.events.run-1", "events") == NULL);
	ck_assert(rz_nats_subject_rest("rezus.x.events.", "events") == NULL);
	ck_assert(rz_nats_subject_rest("rezus.x.eventsX.run-1", "events") == NULL);
	ck_assert(rz_nats_subject_rest("rezus..events.run-1", "events") == NULL);
	ck_assert(rz_nats_subject_rest("other.x.events.run-1", "events") == NULL);
	ck_assert(rz_nats_subject_rest(NULL, "events") == NULL);
}
END_TEST

START_TEST(test_runner_permissions)
{
	char why[256] = "";
	json_t *labels = sel("{\"region\":\"eu.1\",\"zone\":\"z1\"}"), *p, *pub, *sub;
	rz_nats_names_t n;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_nats_names("k", "home-1", &n, &err), 0);
	p = rz_dispatch_permissions(&n, "eu-1", labels, why, sizeof(why));
	ck_assert_msg(p != NULL, "%s", why);
	pub = json_object_get(json_object_get(p, "publish"), "allow");
	sub = json_object_get(json_object_get(p, "subscribe"), "allow");
	/* its heartbeat and events, then four subjects per pool (default, region, zone, both) */
	ck_assert_int_eq(json_array_size(pub), 2 + 4 * 4);
	ck_assert(holds(pub, "rezus.home-1.runners.eu-1.heartbeat"));
	ck_assert(holds(pub, "rezus.home-1.events.*"));
	ck_assert(holds(pub, "$JS.API.CONSUMER.MSG.NEXT.REZUS_HOME-1_JOBS.pool-default"));
	ck_assert(
	    holds(pub, "$JS.API.CONSUMER.DURABLE.CREATE.REZUS_HOME-1_JOBS.pool-region_eu~2E1"));
	ck_assert(holds(pub, "$JS.API.CONSUMER.INFO.REZUS_HOME-1_JOBS.pool-region_eu~2E1=zone_z1"));
	ck_assert(holds(pub, "$JS.ACK.REZUS_HOME-1_JOBS.pool-zone_z1.>"));
	/* nothing wider: no other runner, no stream API, no wildcard over JetStream */
	ck_assert(!holds(pub, "$JS.API.>"));
	ck_assert(!holds(pub, "rezus.runners.*.heartbeat"));
	ck_assert_int_eq(json_array_size(sub), 2);
	ck_assert(holds(sub, "_RZ_INBOX.runner.eu-1.>"));
	ck_assert(holds(sub, "rezus.home-1.runners.eu-1.cancel"));
	json_decref(p);
	json_decref(labels);
	/* seven labels: 64 pools; eight: refused as the runner itself refuses them */
	labels = sel("{\"a\":\"1\",\"b\":\"1\",\"c\":\"1\",\"d\":\"1\",\"e\":\"1\",\"f\":\"1\","
	             "\"g\":\"1\"}");
	p = rz_dispatch_permissions(&n, "r", labels, why, sizeof(why));
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(p, "publish"), "allow")),
	                 2 + 64 * 4);
	json_decref(p);
	json_object_set_new(labels, "h", json_string("1"));
	ck_assert(rz_dispatch_permissions(&n, "r", labels, why, sizeof(why)) == NULL);
	json_decref(labels);
}
END_TEST

/* A Runner serves by the labels it says that it is granted, not by what it says alone. */
START_TEST(test_runner_serves_granted_labels)
{
	json_t *o =
	    sel("{\"spec\":{\"labels\":{\"region\":\"a\",\"tier\":\"gold\"}},"
	        "\"status\":{\"labels\":{\"region\":\"b\",\"tier\":\"gold\",\"gpu\":\"h100\"}}}");
	json_t *s = rz_kind_runner_serves(o), *want = sel("{\"tier\":\"gold\"}");

	ck_assert_msg(json_equal(s, want), "serves %s", json_dumps(s, JSON_COMPACT));
	json_decref(s);
	json_decref(o);
	/* no grant (no spec.labels): nothing; nothing said: nothing */
	o = sel("{\"status\":{\"labels\":{\"region\":\"a\"}}}");
	s = rz_kind_runner_serves(o);
	ck_assert_int_eq(json_object_size(s), 0);
	json_decref(s);
	json_decref(o);
	o = sel("{\"spec\":{\"labels\":{\"region\":\"a\"}}}");
	s = rz_kind_runner_serves(o);
	ck_assert_int_eq(json_object_size(s), 0);
	json_decref(s);
	json_decref(o);
	json_decref(want);
}
END_TEST

START_TEST(test_runner_pools)
{
	char why[256] = "", buf[RZ_DISPATCH_POOL_MAX];
	json_t *labels = sel("{\"region\":\"a\",\"zone\":\"z1\"}"), *pools, *s;
	bool found = false;
	size_t i;
	json_t *p;

	pools = rz_dispatch_pools(labels, why, sizeof(why));
	ck_assert_msg(pools != NULL, "%s", why);
	ck_assert_int_eq(json_array_size(pools), 4); /* default, region, zone, both */
	ck_assert_str_eq(json_string_value(json_array_get(pools, 0)), "default");
	/* the pool of a selector a runner matches is among the runner's */
	s = sel("{\"zone\":\"z1\",\"region\":\"a\"}");
	ck_assert(rz_dispatch_matches(labels, s));
	ck_assert(rz_dispatch_pool(s, buf, sizeof(buf), why, sizeof(why)));
	json_array_foreach(pools, i, p)
	{
		found = found || strcmp(json_string_value(p), buf) == 0;
	}
	ck_assert_msg(found, "%s not served", buf);
	json_decref(s);
	s = sel("{\"region\":\"b\"}");
	ck_assert(!rz_dispatch_matches(labels, s));
	json_decref(s);
	json_decref(pools);
	json_decref(labels);
	/* no labels: only default */
	pools = rz_dispatch_pools(NULL, why, sizeof(why));
	ck_assert_int_eq(json_array_size(pools), 1);
	json_decref(pools);
	/* 8 labels: 93 pools, more than a runner serves */
	labels = sel("{\"a\":\"1\",\"b\":\"1\",\"c\":\"1\",\"d\":\"1\",\"e\":\"1\",\"f\":\"1\","
	             "\"g\":\"1\",\"h\":\"1\"}");
	ck_assert_ptr_null(rz_dispatch_pools(labels, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "93 pools"));
	json_decref(labels);
}
END_TEST

START_TEST(test_selector_merge)
{
	char buf[RZ_DISPATCH_POOL_MAX], why[256] = "";
	json_t *tenant, *groups, *merged = NULL, *labels;
	rz_err_t err = { 0 };

	/* nobody selects: {}, the default pool */
	tenant = sel("{\"metadata\":{\"name\":\"acme\"},\"spec\":{}}");
	groups = sel("[{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"role\":\"controlplane\"}}]");
	ck_assert_int_eq(rz_kind_runner_selector(tenant, groups, &merged, &err), 0);
	ck_assert_int_eq(json_object_size(merged), 0);
	ck_assert(rz_dispatch_pool(merged, buf, sizeof(buf), why, sizeof(why)));
	ck_assert_str_eq(buf, "default");
	json_decref(merged);
	json_decref(groups);
	json_decref(tenant);
	ck_assert_int_eq(rz_kind_runner_selector(NULL, NULL, &merged, &err), 0);
	ck_assert_int_eq(json_object_size(merged), 0);
	json_decref(merged);

	/* the tenant's and every node group's pairs; a key given twice with one value is one */
	tenant = sel("{\"spec\":{\"runnerSelector\":{\"region\":\"eu\"}}}");
	groups = sel("[{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"runnerSelector\":"
	             "{\"zone\":\"b\"}}},"
	             "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"runnerSelector\":"
	             "{\"region\":\"eu\",\"net\":\"fast\"}}},"
	             "{\"metadata\":{\"name\":\"w\"},\"spec\":{}}]");
	ck_assert_msg(rz_kind_runner_selector(tenant, groups, &merged, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(json_object_size(merged), 3);
	ck_assert_str_eq(json_string_value(json_object_get(merged, "region")), "eu");
	ck_assert_str_eq(json_string_value(json_object_get(merged, "zone")), "b");
	ck_assert_str_eq(json_string_value(json_object_get(merged, "net")), "fast");
	ck_assert(rz_dispatch_pool(merged, buf, sizeof(buf), why, sizeof(why)));
	ck_assert_str_eq(buf, "net_fast+region_eu+zone_b");
	/* a runner must match all of them: the tenant's label alone is not enough */
	labels = sel("{\"region\":\"eu\",\"zone\":\"b\",\"net\":\"fast\",\"os\":\"linux\"}");
	ck_assert(rz_dispatch_matches(labels, merged));
	json_decref(labels);
	labels = sel("{\"region\":\"eu\",\"zone\":\"a\",\"net\":\"fast\"}");
	ck_assert(!rz_dispatch_matches(labels, merged));
	json_decref(labels);
	json_decref(merged);
	json_decref(groups);

	/* the tenant against a node group: both named, and the key */
	groups = sel("[{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"runnerSelector\":"
	             "{\"region\":\"us\"}}}]");
	labels = sel("{}");
	merged = labels; /* set to NULL on failure */
	ck_assert_int_eq(rz_kind_runner_selector(tenant, groups, &merged, &err), REZUS_EINVALID);
	ck_assert_ptr_null(merged);
	json_decref(labels);
	ck_assert_msg(strstr(err.msg, "the tenant and node group 'cp' conflict on runnerSelector "
	                              "key 'region' ('eu' against 'us')") != NULL,
	              "%s", err.msg);
	json_decref(groups);
	json_decref(tenant);

	/* two node groups against each other */
	tenant = sel("{\"spec\":{}}");
	groups = sel("[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"runnerSelector\":"
	             "{\"zone\":\"a\"}}},"
	             "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"runnerSelector\":"
	             "{\"zone\":\"b\"}}}]");
	ck_assert_int_eq(rz_kind_runner_selector(tenant, groups, &merged, &err), REZUS_EINVALID);
	ck_assert_msg(strstr(err.msg, "node group 'a' and node group 'b' conflict on "
	                              "runnerSelector key 'zone'") != NULL,
	              "%s", err.msg);
	json_decref(groups);

	/* more than 3 labels together, though each selector has fewer */
	groups = sel("[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"runnerSelector\":"
	             "{\"k1\":\"v\",\"k2\":\"v\"}}},"
	             "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"runnerSelector\":"
	             "{\"k3\":\"v\",\"k4\":\"v\"}}}]");
	ck_assert_int_eq(rz_kind_runner_selector(tenant, groups, &merged, &err), REZUS_EINVALID);
	ck_assert_ptr_null(merged);
	ck_assert_msg(strstr(err.msg, "make 4 labels together: at most 3") != NULL, "%s", err.msg);
	json_decref(groups);
	json_decref(tenant);
}
END_TEST

START_TEST(test_job_messages)
{
	rz_dispatch_job_t job = { "run-abc12", "acme", "plan", 1, "https://10.0.0.1:8443" }, got;
	char why[256] = "", *s;
	const char *nope[] = {
		"not json",
		"[]",
		"{\"run\":\"Run_X\",\"tenant\":\"a\",\"step\":\"plan\",\"attempt\":1,\"daemon\":"
		"\"https://h\"}",
		"{\"run\":\"r\",\"tenant\":\"a\",\"step\":\"destroy\",\"attempt\":1,\"daemon\":"
		"\"https://h\"}",
		"{\"run\":\"r\",\"tenant\":\"a\",\"step\":\"plan\",\"attempt\":0,\"daemon\":"
		"\"https://h\"}",
		"{\"run\":\"r\",\"tenant\":\"a\",\"step\":\"plan\",\"attempt\":1,\"daemon\":\"file:"
		"///etc\"}",
		"{\"run\":\"r\",\"tenant\":\"a\",\"step\":\"plan\",\"attempt\":1}",
		"{\"run\":\"r\",\"run\":\"s\",\"tenant\":\"a\",\"step\":\"plan\",\"attempt\":1,"
		"\"daemon\":\"https://h\"}",
	};

	s = rz_dispatch_job_build(&job);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(strstr(s, "secret"));
	ck_assert_msg(rz_dispatch_job_parse(s, strlen(s), &got, why, sizeof(why)), "%s", why);
	ck_assert_str_eq(got.run, "run-abc12");
	ck_assert_str_eq(got.tenant, "acme");
	ck_assert_str_eq(got.step, "plan");
	ck_assert_int_eq(got.attempt, 1);
	ck_assert_str_eq(got.daemon, "https://10.0.0.1:8443");
	free(s);
	for (size_t i = 0; i < sizeof(nope) / sizeof(nope[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(
		    !rz_dispatch_job_parse(nope[i], strlen(nope[i]), &got, why, sizeof(why)), "%s",
		    nope[i]);
		ck_assert_msg(why[0] != '\0', "%s", nope[i]);
	}
	snprintf(job.step, sizeof(job.step), "nope");
	ck_assert_ptr_null(rz_dispatch_job_build(&job));
	{
		char big[RZ_DISPATCH_JOB_MAX + 2];
		memset(big, ' ', sizeof(big));
		ck_assert(!rz_dispatch_job_parse(big, sizeof(big), &got, why, sizeof(why)));
		ck_assert_ptr_nonnull(strstr(why, "larger"));
	}
}
END_TEST

/* An event's MAC: the same under the same key, subject and message; any other key, subject,
 * byte, a missing or malformed MAC, refused. */
START_TEST(test_event_mac)
{
	unsigned char key[RZ_DISPATCH_KEY_LEN], other[RZ_DISPATCH_KEY_LEN];
	const char *subject = "rezus.a1b2c3d4.events.run-abc12";
	const char *msg =
	    "{\"run\":\"run-abc12\",\"step\":\"apply\",\"seq\":8,\"exit\":{\"status\":0}}";
	char mac[RZ_DISPATCH_MAC_HEX], tampered[RZ_DISPATCH_MAC_HEX];

	memset(key, 7, sizeof(key));
	memset(other, 7, sizeof(other));
	other[31] ^= 1;
	rz_dispatch_event_mac(key, subject, msg, strlen(msg), mac);
	ck_assert_uint_eq(strlen(mac), 64);
	ck_assert(rz_dispatch_event_mac_ok(key, subject, msg, strlen(msg), mac));
	ck_assert(!rz_dispatch_event_mac_ok(other, subject, msg, strlen(msg), mac));
	ck_assert(!rz_dispatch_event_mac_ok(key, "rezus.a1b2c3d4.events.run-abc13", msg,
	                                    strlen(msg), mac));
	ck_assert(!rz_dispatch_event_mac_ok(key, subject, msg, strlen(msg) - 1, mac));
	ck_assert(!rz_dispatch_event_mac_ok(key, subject, msg, strlen(msg), NULL));
	ck_assert(!rz_dispatch_event_mac_ok(key, subject, msg, strlen(msg), ""));
	ck_assert(!rz_dispatch_event_mac_ok(key, subject, msg, strlen(msg), "zz"));
	snprintf(tampered, sizeof(tampered), "%s", mac);
	tampered[0] = tampered[0] == '0' ? '1' : '0';
	ck_assert(!rz_dispatch_event_mac_ok(key, subject, msg, strlen(msg), tampered));
	tampered[63] = '\0'; /* one hex digit short */
	ck_assert(!rz_dispatch_event_mac_ok(key, subject, msg, strlen(msg), tampered));
}
END_TEST

START_TEST(test_event_messages)
{
	rz_dispatch_event_t ev;
	char why[256] = "", *s;
	const char *subj = "rezus.a1b2c3d4.events.run-abc12";
	char *big;

	s = rz_dispatch_event_line("run-abc12", "apply", 3, "hello \"x\"", 9, true);
	ck_assert_msg(rz_dispatch_event_parse(subj, s, strlen(s), &ev, why, sizeof(why)), "%s",
	              why);
	ck_assert(!ev.is_exit);
	ck_assert_int_eq(ev.seq, 3);
	ck_assert_int_eq(ev.line_len, 9);
	ck_assert(memcmp(ev.line, "hello \"x\"", 9) == 0);
	ck_assert(ev.is_stderr);
	ck_assert_str_eq(ev.step, "apply");
	rz_dispatch_event_clear(&ev);
	/* the same event on another run's subject is refused */
	ck_assert(!rz_dispatch_event_parse("rezus.a1b2c3d4.events.run-other", s, strlen(s), &ev,
	                                   why, sizeof(why)));
	free(s);
	s = rz_dispatch_event_exit("run-abc12", "plan", 9, 2, false, true);
	ck_assert_msg(rz_dispatch_event_parse(subj, s, strlen(s), &ev, why, sizeof(why)), "%s",
	              why);
	ck_assert(ev.is_exit);
	ck_assert_int_eq(ev.status, 2);
	ck_assert(!ev.timed_out);
	ck_assert(ev.canceled);
	rz_dispatch_event_clear(&ev);
	free(s);
	/* invalid UTF-8 still travels, as '?' */
	s = rz_dispatch_event_line("run-abc12", "plan", 1,
	                           "a\xff"
	                           "b",
	                           3, false);
	ck_assert_ptr_nonnull(s);
	ck_assert(rz_dispatch_event_parse(subj, s, strlen(s), &ev, why, sizeof(why)));
	ck_assert_str_eq(ev.line, "a?b");
	rz_dispatch_event_clear(&ev);
	free(s);
	/* a line longer than the bound is cut there */
	big = malloc(RZ_DISPATCH_LINE_MAX * 2);
	memset(big, 'x', RZ_DISPATCH_LINE_MAX * 2);
	s = rz_dispatch_event_line("run-abc12", "plan", 1, big, RZ_DISPATCH_LINE_MAX * 2, false);
	ck_assert(rz_dispatch_event_parse(subj, s, strlen(s), &ev, why, sizeof(why)));
	ck_assert_int_eq(ev.line_len, RZ_DISPATCH_LINE_MAX);
	rz_dispatch_event_clear(&ev);
	free(s);
	free(big);
	{
		const char *nope[] = {
			"{}",
			"{\"run\":\"run-abc12\",\"step\":\"plan\",\"seq\":0,\"line\":\"x\"}",
			"{\"run\":\"run-abc12\",\"step\":\"plan\",\"seq\":1}",
			"{\"run\":\"run-abc12\",\"step\":\"plan\",\"seq\":1,\"line\":\"x\","
			"\"exit\":{}}",
			"{\"run\":\"run-abc12\",\"step\":\"plan\",\"seq\":1,\"exit\":{\"status\":"
			"300,"
			"\"timed_out\":false,\"canceled\":false}}",
			"{\"run\":\"run-abc12\",\"step\":\"plan\",\"seq\":1,\"exit\":{\"status\":0}"
			"}",
			"{\"run\":\"run-abc12\",\"step\":\"x\",\"seq\":1,\"line\":\"x\"}",
			"{\"run\":\"run-abc12\",\"step\":\"plan\",\"seq\":1,\"line\":5}",
		};
		for (size_t i = 0; i < sizeof(nope) / sizeof(nope[0]); i++) {
			why[0] = '\0';
			ck_assert_msg(!rz_dispatch_event_parse(subj, nope[i], strlen(nope[i]), &ev,
			                                       why, sizeof(why)),
			              "%s", nope[i]);
			ck_assert_msg(why[0] != '\0', "%s", nope[i]);
		}
		ck_assert(!rz_dispatch_event_parse("rezus.a1b2c3d4.jobs.default", "{}", 2, &ev, why,
		                                   sizeof(why)));
		ck_assert(!rz_dispatch_event_parse("rezus.events.run-abc12", "{}", 2, &ev, why,
		                                   sizeof(why)));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("remote");
	TCase *tc = tcase_create("remote");

	tcase_add_test(tc, test_good_heartbeat);
	tcase_add_test(tc, test_unknown_members_are_not_kept);
	tcase_add_test(tc, test_bad_heartbeats_are_refused);
	tcase_add_test(tc, test_size_and_count_bounds);
	tcase_add_test(tc, test_runner_labels);
	tcase_add_test(tc, test_secret_files);
	tcase_add_test(tc, test_settings);
	tcase_add_test(tc, test_pool_escaping);
	tcase_add_test(tc, test_bad_selectors);
	tcase_add_test(tc, test_runner_pools);
	tcase_add_test(tc, test_installation_names);
	tcase_add_test(tc, test_runner_permissions);
	tcase_add_test(tc, test_runner_serves_granted_labels);
	tcase_add_test(tc, test_selector_merge);
	tcase_add_test(tc, test_job_messages);
	tcase_add_test(tc, test_event_messages);
	tcase_add_test(tc, test_event_mac);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
