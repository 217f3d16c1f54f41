/*
 * tests/unit/check_talos_etcd.c - etcd snapshots of talos tenants (plugin ABI 1.3): the
 * commands the talos plugin gives for a snapshot and a restore (talosctl etcd snapshot and
 * bootstrap --recover-from, through the given control plane, with the tenant's
 * talosconfig and the context's timeout) and its refusals; then those commands run by the
 * host's own command runner (rz_observer_exec, which runs upgrade commands too) against the
 * talosctl stand-in of tests/stand-ins replaying tests/plugins/observe/standin/: a snapshot
 * that writes its file and prints talosctl's lines, one that fails with an rpc error and
 * leaves nothing, one the runner kills after the timeout, a recovery that sends the file
 * and one the node refuses. The world is check_upgrader's, without Machines in the store
 * (so the observer never observes on its own): the tenant of
 * tests/plugins/observe/talos/context.json and its sealed talosconfig.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/config.h"
#include "core/base/log.h"
#include "core/base/proc.h"
#include "core/model/kinds.h"
#include "core/observe/observe.h"
#include "core/plugin/plugins.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"
#include "core/tfstate/tfstate.h"
#include "tests/unit/testutil.h"

#define TENANT "tenant-a"
#define CP     "10.20.0.10"

static char *dir;
static char standin[1024], talosctl[1024], tmpdir[1024], snapdir[1024], path[1100];
static rz_config_t cfg;
static rz_plugins_t *plugins;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *st;
static rz_tfstate_t *ts;
static struct event_base *base;
static rz_observer_t *obs;
static json_t *world; /* context.json: tenant, machines, nodeGroups */

static const char *src(void)
{
	const char *s = getenv("top_srcdir");
	return s ? s : "..";
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static bool exists(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0;
}

/* A file of the stand-in's data directory, written for one test. */
static void standin_file(const char *rel, const char *text)
{
	char p[2048];

	snprintf(p, sizeof(p), "%s/%s", standin, rel);
	rzt_write_file(p, text);
}

/* ------------------------------------------------------------------ the world */

static void setup(void)
{
	const char *top = getenv("top_builddir");
	char p[2048], text[4096];
	rz_observer_opts_t o;
	json_error_t je;
	json_t *out = NULL, *state;
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_CRIT);
	dir = rzt_tmpdir();
	snprintf(standin, sizeof(standin), "%s/standin", dir);
	sh("cp -R '%s/tests/plugins/observe/standin' '%s' && chmod -R u+w '%s'", src(), standin,
	   standin);
	/* the runner gives commands a clean environment: the wrapper hands over the data */
	snprintf(talosctl, sizeof(talosctl), "%s/talosctl", dir);
	snprintf(text, sizeof(text),
	         "#!/bin/sh\nREZUS_STANDIN_DIR='%s' exec '%s/tests/stand-ins/talosctl' \"$@\"\n",
	         standin, src());
	rzt_write_file(talosctl, text);
	ck_assert_int_eq(chmod(talosctl, 0700), 0);
	snprintf(tmpdir, sizeof(tmpdir), "%s/observe", dir);
	snprintf(snapdir, sizeof(snapdir), "%s/etcd", dir); /* the host's private directory */
	ck_assert_int_eq(mkdir(snapdir, 0700), 0);
	snprintf(path, sizeof(path), "%s/snapshot.db", snapdir);

	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	snprintf(p, sizeof(p), "%s/plugins/.libs", top ? top : ".");
	free(cfg.plugin_dir);
	cfg.plugin_dir = strdup(p);
	cfg.plugins = calloc(1, sizeof(*cfg.plugins));
	cfg.n_plugins = 1;
	cfg.plugins[0] =
	    (rz_config_plugin_t){ strdup("talos"), json_object(), true, strdup("test") };
	ck_assert_msg(rz_plugins_load(&plugins, &cfg, true, &err) == 0, "load: %s", err.msg);

	snprintf(p, sizeof(p), "%s/rezus.db", dir);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_msg(rz_db_open(&db, p, &err) == 0, "db: %s", err.msg);
	ck_assert_msg(rz_store_new(&st, db, bus, 1000, &err) == 0, "store: %s", err.msg);
	snprintf(p, sizeof(p), "%s/state.key", dir);
	ck_assert_msg(rz_tfstate_new(&ts, db, st, NULL, p, 3, &err) == 0, "tfstate: %s", err.msg);
	snprintf(p, sizeof(p), "%s/tests/plugins/observe/talos/context.json", src());
	ck_assert_msg((world = json_load_file(p, 0, &je)) != NULL, "%s: %s", p, je.text);
	ck_assert_msg(rz_store_create(st, rz_kind_by_name("Tenant"),
	                              json_object_get(world, "tenant"), NULL, &out, &err) == 0,
	              "tenant: %s", err.msg);
	json_decref(out);
	state = json_pack("{s:i, s:i, s:{s:{s:s, s:b}}, s:[]}", "version", 4, "serial", 1,
	                  "outputs", "talosconfig", "value", "context: tenant-a\ncontexts: {}\n",
	                  "sensitive", 1, "resources");
	ck_assert_msg(rz_tfstate_keep_outputs(ts, TENANT, "run-1", state, &err) == 0, "keep: %s",
	              err.msg);
	json_decref(state);

	ck_assert_ptr_nonnull(base = event_base_new());
	o = (rz_observer_opts_t){ .interval_ms = 3600000,
		                  .fast_interval_ms = 3600000,
		                  .workers = 1,
		                  .talosctl = talosctl,
		                  .kubectl = "/bin/false",
		                  .tmpdir = tmpdir };
	ck_assert_msg(rz_observer_new(&obs, base, st, bus, plugins, ts, &o, &err) == 0, "%s",
	              err.msg);
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
	json_decref(world);
	rzt_rmrf(dir);
	free(dir);
}

/* ------------------------------------------------------------------ asking the plugin */

/* The Machine named name of the world (borrowed). */
static json_t *machine(const char *name)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(world, "machines"), i, m)
	{
		if (strcmp(
		        json_string_value(json_object_get(json_object_get(m, "metadata"), "name")),
		        name) == 0) {
			return m;
		}
	}
	ck_abort_msg("no machine %s", name);
	return NULL;
}

/* A ctx as the host gives it (caller owns); timeout 0 leaves it out. */
static json_t *etcd_ctx(const char *action, json_t *m, json_int_t timeout)
{
	json_t *ctx = json_pack(
	    "{s:O, s:O, s:s, s:O, s:s}", "tenant", json_object_get(world, "tenant"), "machines",
	    json_object_get(world, "machines"), "action", action, "machine", m, "path", path);

	if (timeout != 0) {
		json_object_set_new(ctx, "timeout", json_integer(timeout));
	}
	return ctx;
}

/* The plugin's commands for action through Machine m (caller owns). */
static json_t *commands(const char *action, json_t *m, json_int_t timeout)
{
	json_t *ctx = etcd_ctx(action, m, timeout), *cmds = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_plugins_etcd_commands(plugins, "talos", ctx, &cmds, &err) == 0, "%s",
	              err.msg);
	json_decref(ctx);
	return cmds;
}

START_TEST(test_commands)
{
	json_t *cmds = commands("snapshot", machine("cp-0"), 600000), *want;
	char text[4096];

	ck_assert(rz_plugins_has_etcd(plugins, "talos"));
	snprintf(text, sizeof(text),
	         "[{\"id\": \"etcd-snapshot\", \"tool\": \"talosctl\", \"credentials\": "
	         "\"talosconfig\", \"machine\": \"cp-0\", \"timeout\": 600000, \"args\": "
	         "[\"--nodes\", \"" CP "\", \"--endpoints\", \"" CP "\", \"etcd\", \"snapshot\", "
	         "\"%s\"]}]",
	         path);
	ck_assert_ptr_nonnull(want = json_loads(text, 0, NULL));
	ck_assert_msg(json_equal(cmds, want), "snapshot: %s", json_dumps(cmds, JSON_COMPACT));
	json_decref(want);
	json_decref(cmds);

	cmds = commands("restore", machine("cp-0"), 900000);
	snprintf(text, sizeof(text),
	         "[{\"id\": \"etcd-recover\", \"tool\": \"talosctl\", \"credentials\": "
	         "\"talosconfig\", \"machine\": \"cp-0\", \"timeout\": 900000, \"args\": "
	         "[\"--nodes\", \"" CP "\", \"--endpoints\", \"" CP "\", \"bootstrap\", "
	         "\"--recover-from=%s\"]}]",
	         path);
	ck_assert_ptr_nonnull(want = json_loads(text, 0, NULL));
	ck_assert_msg(json_equal(cmds, want), "restore: %s", json_dumps(cmds, JSON_COMPACT));
	json_decref(want);
	json_decref(cmds);

	/* the timeout is the context's, within what the host accepts; 5 min without one */
	cmds = commands("snapshot", machine("cp-0"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(cmds, 0), "timeout")),
	                 300000);
	json_decref(cmds);
	cmds = commands("snapshot", machine("cp-0"), 7LL * 24 * 3600 * 1000);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(cmds, 0), "timeout")),
	                 24LL * 3600 * 1000);
	json_decref(cmds);
	/* spec.addresses when spec.address is empty, as observation does */
	{
		json_t *m = json_deep_copy(machine("w-1"));
		json_object_set_new(json_object_get(m, "spec"), "address", json_string(""));
		cmds = commands("snapshot", m, 60000);
		ck_assert_str_eq(json_string_value(json_array_get(
		                     json_object_get(json_array_get(cmds, 0), "args"), 1)),
		                 "10.20.0.12");
		json_decref(cmds);
		json_decref(m);
	}
}
END_TEST

/* A machine it cannot reach is an error naming it, not a command with a bad argument. */
START_TEST(test_refusals)
{
	static const char *const bad[] = { "", "-e", "10.0.0.1,10.0.0.2", "10.0.0.1 --force" };
	rz_err_t err = { 0 };
	json_t *cmds = NULL, *ctx;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *m = json_pack("{s:{s:s}, s:{s:s, s:[s]}}", "metadata", "name", "cp-9",
		                      "spec", "address", bad[i], "addresses", bad[i]);
		ctx = etcd_ctx(i % 2 ? "restore" : "snapshot", m, 60000);
		ck_assert_int_eq(rz_plugins_etcd_commands(plugins, "talos", ctx, &cmds, &err),
		                 REZUS_EINVALID);
		ck_assert_str_eq(err.msg, i % 2 ? "plugin 'talos': etcd_commands failed: machine "
		                                  "cp-9 has no address to restore etcd through"
		                                : "plugin 'talos': etcd_commands failed: machine "
		                                  "cp-9 has no address to snapshot etcd through");
		ck_assert_ptr_null(cmds);
		json_decref(ctx);
		json_decref(m);
	}
	ctx = etcd_ctx("snapshot", json_null(), 60000);
	ck_assert_int_eq(rz_plugins_etcd_commands(plugins, "talos", ctx, &cmds, &err),
	                 REZUS_EINVALID);
	ck_assert_str_eq(err.msg, "plugin 'talos': etcd_commands failed: machine ? has no address "
	                          "to snapshot etcd through");
	json_decref(ctx);
}
END_TEST

/* ------------------------------------------------------------------ running them */

typedef struct outcome {
	bool done, timed_out;
	int status;
	char out[8192], err[8192];
	int64_t ms; /* how long it ran */
} outcome_t;

static void on_done(void *arg, int status, bool timed_out, const char *out, const char *err)
{
	outcome_t *o = arg;

	o->done = true;
	o->status = status;
	o->timed_out = timed_out;
	snprintf(o->out, sizeof(o->out), "%s", out);
	snprintf(o->err, sizeof(o->err), "%s", err);
}

static void spin(int64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* Run cmds in order, as the host does, through the host's runner, until one fails: the
 * outcome of the last one run. */
static void run(const json_t *cmds, outcome_t *o)
{
	size_t i;
	json_t *c;

	ck_assert_uint_gt(json_array_size(cmds), 0);
	json_array_foreach(cmds, i, c)
	{
		rz_observer_cmd_t *h = NULL;
		rz_err_t err = { 0 };
		int64_t start = rz_clock_now_ms();

		memset(o, 0, sizeof(*o));
		ck_assert_msg(rz_observer_exec(obs, TENANT, c, on_done, o, &h, &err) == 0, "%s",
		              err.msg);
		while (!o->done && rz_clock_now_ms() - start < 30000) {
			spin(20);
		}
		ck_assert_msg(o->done, "command %zu did not end", i);
		o->ms = rz_clock_now_ms() - start;
		if (o->status != 0) {
			return;
		}
	}
}

/* The last line of calls.log. */
static const char *last_call(void)
{
	static char line[4096];
	char p[1100];
	FILE *f;

	snprintf(p, sizeof(p), "%s/calls.log", standin);
	line[0] = '\0';
	if ((f = fopen(p, "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
		}
		fclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	return line;
}

START_TEST(test_snapshot_runs)
{
	json_t *cmds = commands("snapshot", machine("cp-0"), 60000);
	char want[2048], p[2048];
	outcome_t o;

	run(cmds, &o);
	ck_assert_msg(o.status == 0 && !o.timed_out, "exit %d: %s", o.status, o.err);
	snprintf(want, sizeof(want),
	         "etcd snapshot saved to \"%s\" (1568 bytes)\n"
	         "snapshot info: hash 8a3c1f07, revision 424, total keys 24, total size 1536\n",
	         path);
	ck_assert_str_eq(o.out, want);
	sh("cmp -s '%s' '%s/talosctl/" CP "/etcd-snapshot.db'", path, standin); /* as streamed */
	snprintf(p, sizeof(p), "%s.part", path);
	ck_assert(!exists(p));
	snprintf(want, sizeof(want),
	         "talosctl credentials=yes --nodes " CP " --endpoints " CP " etcd snapshot %s",
	         path);
	ck_assert_str_eq(last_call(), want);
	json_decref(cmds);
}
END_TEST

START_TEST(test_snapshot_fails)
{
	json_t *cmds = commands("snapshot", machine("cp-0"), 60000);
	char p[2048];
	outcome_t o;

	standin_file("talosctl/" CP "/etcd-snapshot.err",
	             "error reading file: rpc error: code = Unavailable desc = connection error: "
	             "desc = \"transport: Error while dialing: dial tcp " CP ":50000: connect: "
	             "connection refused\"\n");
	standin_file("talosctl/" CP "/etcd-snapshot.exit", "1\n");
	run(cmds, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert(!o.timed_out);
	ck_assert_str_eq(o.out, "");
	ck_assert_str_eq(o.err, "error reading file: rpc error: code = Unavailable desc = "
	                        "connection error: desc = \"transport: Error while dialing: dial "
	                        "tcp " CP ":50000: connect: connection refused\"\n");
	snprintf(p, sizeof(p), "%s.part", path);
	ck_assert(!exists(path));
	ck_assert(!exists(p));
	json_decref(cmds);
}
END_TEST

/* The runner kills a snapshot that outlives the context's timeout: no file at path, only
 * talosctl's part file in the host's directory, which the host removes. */
START_TEST(test_snapshot_times_out)
{
	json_t *cmds = commands("snapshot", machine("cp-0"), 1000);
	char p[2048];
	outcome_t o;

	standin_file("talosctl/" CP "/etcd-snapshot.sleep", "60\n");
	run(cmds, &o);
	ck_assert(o.timed_out);
	ck_assert_int_ne(o.status, 0);
	ck_assert_msg(o.ms >= 1000 && o.ms < 10000, "ran %lld ms", (long long)o.ms);
	ck_assert_str_eq(o.out, "");
	snprintf(p, sizeof(p), "%s.part", path);
	ck_assert(!exists(path));
	ck_assert(exists(p));
	json_decref(cmds);
}
END_TEST

START_TEST(test_restore_runs)
{
	json_t *cmds = commands("restore", machine("cp-0"), 60000);
	char want[2048];
	outcome_t o;

	sh("cp '%s/talosctl/" CP "/etcd-snapshot.db' '%s'", standin, path);
	run(cmds, &o);
	ck_assert_msg(o.status == 0 && !o.timed_out, "exit %d: %s", o.status, o.err);
	snprintf(want, sizeof(want),
	         "recovering from snapshot \"%s\": hash 8a3c1f07, revision 424, total keys 24, "
	         "total size 1536\n",
	         path);
	ck_assert_str_eq(o.out, want);
	sh("cmp -s '%s' '%s/recovered/" CP "'", path, standin); /* the node got the file */
	snprintf(want, sizeof(want),
	         "talosctl credentials=yes --nodes " CP " --endpoints " CP
	         " bootstrap --recover-from=%s",
	         path);
	ck_assert_str_eq(last_call(), want);
	json_decref(cmds);
}
END_TEST

/* A control plane whose etcd still has data refuses the recovery: the restore fails and the
 * node got nothing. */
START_TEST(test_restore_refused)
{
	json_t *cmds = commands("restore", machine("cp-0"), 60000);
	char p[2048];
	outcome_t o;

	sh("cp '%s/talosctl/" CP "/etcd-snapshot.db' '%s'", standin, path);
	standin_file("talosctl/" CP "/bootstrap.err",
	             "error executing bootstrap: rpc error: code = AlreadyExists desc = etcd data "
	             "directory is not empty\n");
	standin_file("talosctl/" CP "/bootstrap.exit", "1\n");
	run(cmds, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(o.err, "error executing bootstrap: rpc error: code = AlreadyExists desc = "
	                        "etcd data directory is not empty\n");
	snprintf(p, sizeof(p), "%s/recovered/" CP, standin);
	ck_assert(!exists(p));
	json_decref(cmds);
}
END_TEST

/* A tenant without a talosconfig (no successful apply): the runner refuses to start. */
START_TEST(test_no_credentials)
{
	json_t *cmds = commands("snapshot", machine("cp-0"), 60000);
	rz_observer_cmd_t *h = NULL;
	rz_err_t err = { 0 };
	outcome_t o = { 0 };

	ck_assert_int_ne(
	    rz_observer_exec(obs, "tenant-b", json_array_get(cmds, 0), on_done, &o, &h, &err), 0);
	ck_assert_str_eq(err.msg, "the tenant has no talosconfig yet (no successful apply)");
	ck_assert_ptr_null(h);
	ck_assert(!exists(path));
	json_decref(cmds);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("talos_etcd");
	TCase *tc = tcase_create("talos_etcd");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_commands);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_snapshot_runs);
	tcase_add_test(tc, test_snapshot_fails);
	tcase_add_test(tc, test_snapshot_times_out);
	tcase_add_test(tc, test_restore_runs);
	tcase_add_test(tc, test_restore_refused);
	tcase_add_test(tc, test_no_credentials);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
