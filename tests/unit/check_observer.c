/*
 * tests/unit/check_observer.c - the observer running real probes: the talos plugin, a
 * store holding a talos tenant (its Machines, node groups and sealed credentials), and the
 * talosctl/kubectl stand-ins of tests/stand-ins replaying recorded output. Stages and
 * readiness land on the right Machines; a hung probe is killed at its timeout; garbage is a
 * lastError, not a crash; every probe had its credentials file, and none is left behind.
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/config.h"
#include "core/base/log.h"
#include "core/report/report.h"
#include "core/base/proc.h"
#include "core/tfstate/tfstate.h"
#include "core/observe/observe.h"
#include "core/plugin/plugins.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"
#include "tests/unit/testutil.h"

static char *dir;
static char standin[1024], talosctl[1024], kubectl[1024], tmpdir[1024];
static rz_config_t cfg;
static rz_plugins_t *plugins;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *st;
static rz_tfstate_t *ts;
static struct event_base *base;
static rz_observer_t *obs;

static const char *src(void)
{
	const char *s = getenv("top_srcdir");
	return s ? s : "..";
}

static json_t *file_json(const char *rel)
{
	char path[1024];
	json_error_t je;
	json_t *v;

	snprintf(path, sizeof(path), "%s/tests/plugins/observe/%s", src(), rel);
	v = json_load_file(path, 0, &je);
	ck_assert_msg(v != NULL, "%s: %s", path, je.text);
	return v;
}

static void create(const char *kind, json_t *obj)
{
	json_t *out = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_create(st, rz_kind_by_name(kind), obj, NULL, &out, &err) == 0,
	              "create %s: %s", kind, err.msg);
	json_decref(out);
}

/* A wrapper named after the tool that hands the stand-in its data directory: the observer
 * gives probes a clean environment, so the variable cannot come from ours. */
static void wrapper(const char *path, const char *tool)
{
	char text[4096];

	snprintf(text, sizeof(text),
	         "#!/bin/sh\nREZUS_STANDIN_DIR='%s' exec '%s/tests/stand-ins/%s' \"$@\"\n", standin,
	         src(), tool);
	rzt_write_file(path, text);
	ck_assert_int_eq(chmod(path, 0700), 0);
}

static void seed(void)
{
	json_t *ctx = file_json("talos/context.json"), *v, *state;
	rz_err_t err = { 0 };
	size_t i;

	create("Tenant", json_object_get(ctx, "tenant"));
	/* as after its first successful apply */
	rz_report_status(st, "Tenant", NULL, "tenant-a",
	                 json_pack("{s:s, s:{s:s, s:s, s:s}}", "lastApplied",
	                           "2026-12-01T00:00:00.000Z", "lastRun", "id", "run-1",
	                           "operation", "apply", "phase", "Succeeded"));
	json_array_foreach(json_object_get(ctx, "nodeGroups"), i, v)
	{
		create("NodeGroup", v);
	}
	json_array_foreach(json_object_get(ctx, "machines"), i, v)
	{
		create("Machine", v);
	}
	state = json_pack("{s:i, s:i, s:{s:{s:s, s:b}, s:{s:s, s:b}}, s:[]}", "version", 4,
	                  "serial", 1, "outputs", "talosconfig", "value",
	                  "context: tenant-a\ncontexts: {}\n", "sensitive", 1, "kubeconfig",
	                  "value", "apiVersion: v1\nkind: Config\n", "sensitive", 1, "resources");
	ck_assert_msg(rz_tfstate_keep_outputs(ts, "tenant-a", "run-1", state, &err) == 0,
	              "keep: %s", err.msg);
	json_decref(state);
	json_decref(ctx);
}

static void setup(void)
{
	const char *top = getenv("top_builddir");
	char path[2048], cmd[4096];
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_CRIT);
	dir = rzt_tmpdir();
	snprintf(standin, sizeof(standin), "%s/standin", dir);
	snprintf(cmd, sizeof(cmd),
	         "cp -R '%s/tests/plugins/observe/standin' '%s' && chmod -R u+w '%s'", src(),
	         standin, standin);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(talosctl, sizeof(talosctl), "%s/talosctl", dir);
	snprintf(kubectl, sizeof(kubectl), "%s/kubectl", dir);
	snprintf(tmpdir, sizeof(tmpdir), "%s/observe", dir);
	wrapper(talosctl, "talosctl");
	wrapper(kubectl, "kubectl");
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	snprintf(path, sizeof(path), "%s/plugins/.libs", top ? top : ".");
	free(cfg.plugin_dir);
	cfg.plugin_dir = strdup(path);
	cfg.plugins = calloc(1, sizeof(*cfg.plugins));
	cfg.n_plugins = 1;
	cfg.plugins[0].name = strdup("talos");
	cfg.plugins[0].config = json_object();
	cfg.plugins[0].required = true;
	cfg.plugins[0].source = strdup("test");
	ck_assert_msg(rz_plugins_load(&plugins, &cfg, true, &err) == 0, "load: %s", err.msg);
	snprintf(path, sizeof(path), "%s/rezus.db", dir);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_msg(rz_db_open(&db, path, &err) == 0, "db: %s", err.msg);
	ck_assert_msg(rz_store_new(&st, db, bus, 1000, &err) == 0, "store: %s", err.msg);
	snprintf(path, sizeof(path), "%s/state.key", dir);
	ck_assert_msg(rz_tfstate_new(&ts, db, st, NULL, path, 3, &err) == 0, "tfstate: %s",
	              err.msg);
	ck_assert_ptr_nonnull(base = event_base_new());
	seed();
}

static void teardown(void)
{
	rz_observer_free(obs);
	obs = NULL;
	rz_proc_shutdown();
	event_base_free(base);
	rz_tfstate_free(ts);
	rz_store_free(st);
	rz_db_close(db);
	rz_bus_free(bus);
	rz_plugins_free(plugins);
	rz_config_free(&cfg);
	rzt_rmrf(dir);
	free(dir);
}

static void start_every(int64_t probe_timeout_ms, int64_t interval_ms, int64_t fast_ms,
                        int64_t stable_ms)
{
	rz_observer_opts_t o = { .interval_ms = interval_ms,
		                 .fast_interval_ms = fast_ms,
		                 .stable_interval_ms = stable_ms,
		                 .provision_timeout_ms = 0,
		                 .workers = 2,
		                 .probe_timeout_ms = probe_timeout_ms,
		                 .talosctl = talosctl,
		                 .kubectl = kubectl,
		                 .tmpdir = tmpdir };
	rz_err_t err = { 0 };

	ck_assert_msg(rz_observer_new(&obs, base, st, bus, plugins, ts, &o, &err) == 0, "%s",
	              err.msg);
}

static void start(int64_t probe_timeout_ms)
{
	start_every(probe_timeout_ms, 200, 200, 0);
}

/* Run the loop until n observations have completed, or 20 s. */
static void run_until(uint64_t n)
{
	struct timeval slice = { 0, 50000 };
	time_t until = time(NULL) + 20;
	rz_observer_stats_t s;

	do {
		event_base_loopexit(base, &slice);
		event_base_dispatch(base);
		rz_observer_stats(obs, &s);
	} while (s.observations < n && time(NULL) < until);
	ck_assert_msg(s.observations >= n, "only %llu observations",
	              (unsigned long long)s.observations);
}

/* Run the loop until no probe is running (the next observation may have begun; the loop
 * starts none while the test holds it), or 20 s. Under valgrind an observation takes longer
 * than the 200 ms interval. */
static void settle(void)
{
	struct timeval slice = { 0, 20000 };
	time_t until = time(NULL) + 20;
	rz_observer_stats_t s;

	rz_observer_stats(obs, &s);
	while (s.running > 0 && time(NULL) < until) {
		event_base_loopexit(base, &slice);
		event_base_dispatch(base);
		rz_observer_stats(obs, &s);
	}
	ck_assert_msg(s.running == 0, "%llu probes still running", (unsigned long long)s.running);
}

static json_t *status_of(const char *machine)
{
	json_t *m = NULL, *s;
	rz_err_t err = { 0 };

	ck_assert_int_eq(
	    rz_store_get(st, rz_kind_by_name("Machine"), "tenant-a", machine, &m, &err), 0);
	s = json_incref(json_object_get(m, "status"));
	json_decref(m);
	ck_assert_msg(s != NULL, "%s has no status", machine);
	return s;
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

static size_t entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	}
	closedir(d);
	return n;
}

/* calls.log: every call of a stand-in had its credentials file; how many calls there were. */
static size_t calls(size_t *without)
{
	char path[1100], line[2048];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/calls.log", standin);
	*without = 0;
	if ((f = fopen(path, "r")) == NULL) {
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n++;
		*without += strstr(line, " credentials=yes ") == NULL;
	}
	fclose(f);
	return n;
}

/* A settled tenant's observations that find nothing new back off, doubling up to
 * stable_interval; anything new, or a tenant not settled, brings the interval back. */
START_TEST(test_next_wait)
{
	rz_observer_opts_t o = { .interval_ms = 30000,
		                 .fast_interval_ms = 5000,
		                 .stable_interval_ms = 300000 };
	static const int64_t quiet[] = { 30000, 60000, 120000, 240000, 300000, 300000 };
	int64_t q = 0;

	ck_assert_int_eq(rz_observer_next_wait(&o, false, false, &q), 5000);
	ck_assert_int_eq(q, 0);
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		ck_assert_int_eq(rz_observer_next_wait(&o, true, false, &q), quiet[i]);
	}
	ck_assert_int_eq(rz_observer_next_wait(&o, true, true, &q), 30000); /* something new */
	ck_assert_int_eq(rz_observer_next_wait(&o, true, false, &q), 60000);
	ck_assert_int_eq(rz_observer_next_wait(&o, false, false, &q), 5000); /* not settled */
	ck_assert_int_eq(rz_observer_next_wait(&o, true, false, &q), 30000);
	o.stable_interval_ms = 0; /* no backing off */
	ck_assert_int_eq(rz_observer_next_wait(&o, true, false, &q), 30000);
	ck_assert_int_eq(rz_observer_next_wait(&o, true, false, &q), 30000);
}
END_TEST

START_TEST(test_healthy_tenant)
{
	json_t *s, *t = NULL;
	rz_err_t err = { 0 };
	size_t without, n;

	start(0);
	run_until(1);
	s = status_of("cp-0");
	ck_assert_str_eq(str(s, "stage"), "Running");
	ck_assert(json_is_true(json_object_get(s, "ready")));
	ck_assert(json_is_true(json_object_get(s, "nodeReady")));
	ck_assert_str_eq(str(s, "talosVersion"), "v1.12.1");
	ck_assert_ptr_null(json_object_get(s, "lastError")); /* absent, not "": no error */
	ck_assert_int_gt(rz_clock_parse(str(s, "lastSeen")), 0);
	json_decref(s);
	s = status_of("w-1");
	ck_assert_str_eq(str(s, "stage"), "Running");
	ck_assert(json_is_true(json_object_get(s, "ready")));
	json_decref(s);
	ck_assert_int_eq(rz_store_get(st, rz_kind_by_name("Tenant"), NULL, "tenant-a", &t, &err),
	                 0);
	s = json_object_get(json_object_get(t, "status"), "controlPlane");
	ck_assert(json_is_true(json_object_get(s, "healthy")));
	ck_assert_int_eq(json_integer_value(json_object_get(s, "etcdMembers")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "nodesReady")), 3);
	ck_assert_ptr_null(json_object_get(s, "error"));
	ck_assert_str_eq(str(json_object_get(t, "status"), "phase"), "Ready");
	json_decref(t);
	settle();
	n = calls(&without);
	ck_assert_uint_ge(n, 7); /* 3 machinestatus, 3 version, etcd, nodes */
	ck_assert_uint_eq(without, 0);
	ck_assert_uint_eq(entries(tmpdir), 0); /* no credentials file left behind */
}
END_TEST

static uint64_t observations(void)
{
	rz_observer_stats_t s;

	rz_observer_stats(obs, &s);
	return s.observations;
}

/* Run the loop for ms. */
static void run_for(int64_t ms)
{
	struct timeval slice = { 0, 20000 };
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		event_base_loopexit(base, &slice);
		event_base_dispatch(base);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* A settled tenant observed every 3 s is observed at the fast interval (100 ms) while a run
 * of it is under way, and its interval starts again from observe.interval afterwards; the
 * run's own writes do not put an observation off. Counts, not times: under valgrind an
 * observation takes longer, so only what must happen within seconds is asserted. */
START_TEST(test_run_speeds_up)
{
	json_t *run, *out = NULL;
	rz_err_t err = { 0 };
	uint64_t before;

	start_every(0, 3000, 100, 60000);
	run_until(1); /* the first, within one interval; then settled: the next in 3 s */
	settle();
	before = observations();
	run_for(600);
	ck_assert_uint_le(observations() - before, 1); /* backed off: at most one in 0.6 s */

	run = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:i}}", "metadata", "name", "run-2", "tenant",
	                "tenant-a", "spec", "operation", "apply", "trigger", "update", "generation",
	                1);
	ck_assert_msg(rz_store_create(st, rz_kind_by_name("Run"), run, NULL, &out, &err) == 0, "%s",
	              err.msg);
	json_decref(run);
	json_decref(out);
	before = observations();
	rz_report_status(st, "Run", "tenant-a", "run-2", json_pack("{s:s}", "phase", "Running"));
	for (int i = 0; i < 20; i++) { /* the run's writes, every 50 ms: the fast pace holds */
		run_for(50);
		rz_report_status(st, "Run", "tenant-a", "run-2", json_pack("{s:i}", "exitCode", i));
	}
	ck_assert_uint_ge(observations() - before, 3);

	rz_report_status(st, "Run", "tenant-a", "run-2", json_pack("{s:s}", "phase", "Succeeded"));
	settle();
	before = observations();
	run_for(1000);
	ck_assert_uint_le(observations() - before, 2); /* back to the interval: 3 s */
}
END_TEST

START_TEST(test_hung_and_garbage)
{
	char path[1200];
	rz_observer_stats_t stats;
	json_t *s;
	struct stat sb;
	time_t began;
	size_t without;

	snprintf(path, sizeof(path), "%s/talosctl/10.20.0.12/mode", standin);
	rzt_write_file(path, "hang\n");
	snprintf(path, sizeof(path), "%s/talosctl/10.20.0.11/mode", standin);
	rzt_write_file(path, "garbage\n");
	start(500); /* observe.probe_timeout cuts the plugin's 10 s */
	began = time(NULL);
	run_until(1);
	/* killed at its timeout, not waited for: under the plugin's own 10 s (a starved machine,
	 * under valgrind beside the suite, took 6 s) */
	ck_assert_int_lt(time(NULL) - began, 10);
	s = status_of("w-1");
	ck_assert_str_eq(str(s, "stage"), "Unknown");
	ck_assert(json_is_false(json_object_get(s, "ready")));
	ck_assert_msg(strstr(str(s, "lastError"), "timed out after 500 ms") != NULL, "%s",
	              str(s, "lastError"));
	json_decref(s);
	s = status_of("w-0");
	ck_assert_str_eq(str(s, "stage"), "Unknown");
	ck_assert_msg(strlen(str(s, "lastError")) > 0, "garbage gave no error");
	json_decref(s);
	s = status_of("cp-0");
	ck_assert_str_eq(str(s, "stage"), "Running"); /* the others' trouble is theirs alone */
	json_decref(s);
	settle();
	rz_observer_stats(obs, &stats);
	ck_assert_uint_ge(stats.probes[2], 1); /* timeout */
	ck_assert_uint_eq(stats.running, 0);
	calls(&without);
	ck_assert_uint_eq(without, 0);
	ck_assert_uint_eq(entries(tmpdir), 0);
	ck_assert_int_eq(stat(tmpdir, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0700);
}
END_TEST

START_TEST(test_no_credentials_yet)
{
	json_t *s, *gone = json_pack("{s:i, s:[]}", "version", 4, "resources");
	rz_err_t err = { 0 };
	size_t without;

	/* a destroyed state leaves no credentials: the probes fail before anything runs */
	ck_assert_int_eq(rz_tfstate_keep_outputs(ts, "tenant-a", "run-2", gone, &err), 0);
	json_decref(gone);
	start(0);
	run_until(1);
	s = status_of("cp-0");
	ck_assert_str_eq(str(s, "stage"), "Unknown");
	ck_assert_msg(strstr(str(s, "lastError"), "no talosconfig") != NULL, "%s",
	              str(s, "lastError"));
	json_decref(s);
	ck_assert_uint_eq(calls(&without), 0); /* nothing ran: both credentials are gone */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("observer");
	TCase *tc = tcase_create("talos");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_next_wait);
	tcase_add_test(tc, test_healthy_tenant);
	tcase_add_test(tc, test_run_speeds_up);
	tcase_add_test(tc, test_hung_and_garbage);
	tcase_add_test(tc, test_no_credentials_yet);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
