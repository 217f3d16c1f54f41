/*
 * tests/unit/check_upgrader.c - UpgradeRuns of a talos tenant, through the talos plugin's
 * commands, against the talosctl/kubectl stand-ins of tests/stand-ins. The world is
 * check_observer's: a store holding the tenant of tests/plugins/observe/talos/context.json
 * (its Machines, node groups, sealed credentials), the talos plugin, a copy of
 * tests/plugins/observe/standin/ whose after/ trees play what upgrade, rollback and
 * upgrade-k8s change, a real observer and an upgrader (no engine). The control plane's
 * Machine has no spec.role (its node group says controlplane) and is named z-cp-0, so name
 * order would put it last: control planes first must come from the role.
 */
#include <config.h>

#include <dirent.h>
#include <stdarg.h>
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
#include "core/http/http.h"
#include "core/observe/observe.h"
#include "core/plugin/plugins.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"
#include "core/upgrade/compat.h"
#include "core/upgrade/upgrade.h"
#include "tests/unit/httpclient.h"
#include "tests/unit/testutil.h"

#define TENANT    "tenant-a"
#define CP        "z-cp-0"
#define TALOS_WAS "1.12.1"
#define TALOS_TO  "1.13.0"
#define K8S_WAS   "1.35.0"
#define K8S_TO    "1.35.2"
#define IMAGE     "--image ghcr.io/siderolabs/installer:v" TALOS_TO " --wait --timeout 60s"

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
static rz_upgrader_t *upg;
static rz_http_t *http;
static uint64_t watch;
static bool watching;
static char order_error[1024]; /* a machine that started before the one ahead passed its gate */

/* ------------------------------------------------------------------ reading objects */

static const char *src(void)
{
	const char *s = getenv("top_srcdir");
	return s ? s : "..";
}

/* The member at a dotted path ("status.machines.1.phase"), or NULL. */
static const json_t *at(const json_t *o, const char *path)
{
	char key[128];

	while (o != NULL && *path != '\0') {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = json_is_array(o) ? json_array_get(o, strtoul(key, NULL, 10))
		                     : json_object_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

static const char *sat(const json_t *o, const char *path)
{
	return json_string_value(at(o, path)) ?: "";
}

static json_t *get(const char *kind, const char *tenant, const char *name)
{
	json_t *o = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_get(st, rz_kind_by_name(kind), tenant, name, &o, &err) == 0,
	              "get %s %s: %s", kind, name, err.msg);
	return o;
}

static void create(const char *kind, json_t *obj)
{
	json_t *out = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_create(st, rz_kind_by_name(kind), obj, NULL, &out, &err) == 0,
	              "create %s: %s", kind, err.msg);
	json_decref(out);
}

/* The Events of the UpgradeRun name with reason (type too), or NULL (caller owns). */
static json_t *event_of(const char *name, const char *type, const char *reason)
{
	json_t *all = rz_store_list_all(st, "Event", TENANT), *e, *found = NULL;
	size_t i;

	json_array_foreach(all, i, e)
	{
		if (strcmp(sat(e, "involvedObject.kind"), "UpgradeRun") == 0 &&
		    strcmp(sat(e, "involvedObject.name"), name) == 0 &&
		    strcmp(sat(e, "reason"), reason) == 0 && strcmp(sat(e, "type"), type) == 0) {
			found = json_incref(e);
		}
	}
	json_decref(all);
	return found;
}

/* ------------------------------------------------------------------ the stand-ins' log */

/* calls.log, one string per call (caller owns). */
static json_t *calls(void)
{
	char path[1100], line[4096];
	json_t *out = json_array();
	FILE *f;

	snprintf(path, sizeof(path), "%s/calls.log", standin);
	if ((f = fopen(path, "r")) == NULL) {
		return out;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		json_array_append_new(out, json_string(line));
	}
	fclose(f);
	return out;
}

/* The index of the first call from from on containing every needle (NULL-terminated), or
 * -1. */
static int find_call(const json_t *log, size_t from, ...)
{
	for (size_t i = from; i < json_array_size(log); i++) {
		const char *line = json_string_value(json_array_get(log, i)), *needle;
		bool all = true;
		va_list ap;
		va_start(ap, from);
		while (all && (needle = va_arg(ap, const char *)) != NULL) {
			all = strstr(line, needle) != NULL;
		}
		va_end(ap);
		if (all) {
			return (int)i;
		}
	}
	return -1;
}

static size_t count_calls(const json_t *log, const char *needle)
{
	size_t n = 0;

	for (size_t i = 0; i < json_array_size(log); i++) {
		n += strstr(json_string_value(json_array_get(log, i)), needle) != NULL;
	}
	return n;
}

static void every_call_had_credentials(const json_t *log)
{
	for (size_t i = 0; i < json_array_size(log); i++) {
		const char *line = json_string_value(json_array_get(log, i));
		ck_assert_msg(strstr(line, " credentials=yes ") != NULL, "without credentials: %s",
		              line);
	}
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

/* ------------------------------------------------------------------ the stand-ins' data */

static void standin_file(const char *rel, const char *text)
{
	char path[2048];

	snprintf(path, sizeof(path), "%s/%s", standin, rel);
	rzt_write_file(path, text);
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

/* What command does to node addr (the recorded tree, even when a test removed the copy's),
 * now, as the stand-in does after the call. */
static void apply_after(const char *addr, const char *command)
{
	sh("cp -R '%s/tests/plugins/observe/standin/after/%s/%s/.' '%s/'", src(), addr, command,
	   standin);
}

/* The node addr's command changes nothing: an upgrade that never takes. */
static void no_after(const char *addr, const char *command)
{
	sh("rm -rf '%s/after/%s/%s'", standin, addr, command);
}

/* ------------------------------------------------------------------ the world */

/* A wrapper named after the tool that hands the stand-in its data directory: the observer
 * gives its commands a clean environment, so the variable cannot come from ours. */
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
	char path[1024];
	json_error_t je;
	json_t *ctx, *v, *state;
	rz_err_t err = { 0 };
	size_t i;

	snprintf(path, sizeof(path), "%s/tests/plugins/observe/talos/context.json", src());
	ck_assert_msg((ctx = json_load_file(path, 0, &je)) != NULL, "%s: %s", path, je.text);
	create("Tenant", json_object_get(ctx, "tenant"));
	/* as after its first successful apply: the versions the cluster runs */
	rz_report_status(st, "Tenant", NULL, TENANT,
	                 json_pack("{s:s, s:{s:s, s:s, s:s}, s:s, s:s}", "lastApplied",
	                           "2026-12-01T00:00:00.000Z", "lastRun", "id", "run-1",
	                           "operation", "apply", "phase", "Succeeded", "talosVersion",
	                           TALOS_WAS, "kubernetesVersion", K8S_WAS));
	json_array_foreach(json_object_get(ctx, "nodeGroups"), i, v)
	{
		create("NodeGroup", v);
	}
	json_array_foreach(json_object_get(ctx, "machines"), i, v)
	{
		if (strcmp(sat(v, "metadata.name"), "cp-0") == 0) {
			json_object_set_new(json_object_get(v, "metadata"), "name",
			                    json_string(CP));
		}
		create("Machine", v);
	}
	state = json_pack("{s:i, s:i, s:{s:{s:s, s:b}, s:{s:s, s:b}}, s:[]}", "version", 4,
	                  "serial", 1, "outputs", "talosconfig", "value",
	                  "context: tenant-a\ncontexts: {}\n", "sensitive", 1, "kubeconfig",
	                  "value", "apiVersion: v1\nkind: Config\n", "sensitive", 1, "resources");
	ck_assert_msg(rz_tfstate_keep_outputs(ts, TENANT, "run-1", state, &err) == 0, "keep: %s",
	              err.msg);
	json_decref(state);
	json_decref(ctx);
}

/* Every change of a talos UpgradeRun: a machine that has started (not Pending) has every
 * machine before it Succeeded, and the observer saw each of those at the target. */
static void on_change(const rz_event_t *ev, void *arg)
{
	const json_t *ms = at(ev->object, "status.machines"), *m;
	const char *target = sat(ev->object, "spec.targetVersion");
	size_t i;

	(void)arg;
	if (!watching || order_error[0] != '\0' || strcmp(ev->kind->kind, "UpgradeRun") != 0 ||
	    ev->type == RZ_EV_DELETED || strcmp(sat(ev->object, "spec.component"), "talos") != 0) {
		return;
	}
	json_array_foreach(ms, i, m)
	{
		if (strcmp(sat(m, "phase"), "Pending") == 0) {
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			const json_t *before = json_array_get(ms, j);
			json_t *mo = get("Machine", TENANT, sat(before, "name"));
			const char *seen = sat(mo, "status.talosVersion");
			if (strcmp(sat(before, "phase"), "Succeeded") != 0 ||
			    !rz_version_same(seen, target)) {
				snprintf(order_error, sizeof(order_error),
				         "%s is %s while %s is %s, observed at Talos %s",
				         sat(m, "name"), sat(m, "phase"), sat(before, "name"),
				         sat(before, "phase"), seen);
			}
			json_decref(mo);
		}
	}
}

static void setup(void)
{
	const char *top = getenv("top_builddir");
	char path[2048];
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_CRIT);
	dir = rzt_tmpdir();
	snprintf(standin, sizeof(standin), "%s/standin", dir);
	sh("cp -R '%s/tests/plugins/observe/standin' '%s' && chmod -R u+w '%s'", src(), standin,
	   standin);
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
	order_error[0] = '\0';
	watching = false;
	ck_assert_uint_gt(watch = rz_bus_subscribe(bus, on_change, NULL), 0);
}

static void teardown(void)
{
	rz_upgrader_free(upg);
	upg = NULL;
	rz_http_free(http);
	http = NULL;
	rz_observer_free(obs);
	obs = NULL;
	rz_bus_unsubscribe(bus, watch);
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

static void start_observer(int64_t interval_ms)
{
	rz_observer_opts_t o = { .interval_ms = interval_ms,
		                 .fast_interval_ms = interval_ms,
		                 .workers = 2,
		                 .talosctl = talosctl,
		                 .kubectl = kubectl,
		                 .tmpdir = tmpdir };
	rz_err_t err = { 0 };

	ck_assert_msg(rz_observer_new(&obs, base, st, bus, plugins, ts, &o, &err) == 0, "%s",
	              err.msg);
}

/* The health gate of a test whose machines pass it: they pass as soon as they are healthy,
 * and a starved machine (memcheck on a loaded machine) must not make them time out. */
#define SUCCESS_GATE_MS 20000

static void start_upgrader(int64_t machine_timeout_ms)
{
	rz_upgrader_opts_t o = { .machine_timeout_ms = machine_timeout_ms, .poll_ms = 100 };
	rz_err_t err = { 0 };

	watching = true;
	ck_assert_msg(rz_upgrader_new(&upg, base, st, bus, plugins, NULL, obs, &o, &err) == 0, "%s",
	              err.msg);
}

/* Run the loop for ms. */
static void spin(int64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* Whether every Machine is observed Running, ready, at Talos talos (NULL: any). */
static bool observed_at(const char *talos)
{
	json_t *all = rz_store_list_all(st, "Machine", TENANT), *m;
	bool ok = json_array_size(all) == 3;
	size_t i;

	json_array_foreach(all, i, m)
	{
		ok = ok && strcmp(sat(m, "status.stage"), "Running") == 0 &&
		     json_is_true(at(m, "status.ready")) &&
		     (talos == NULL || rz_version_same(sat(m, "status.talosVersion"), talos));
	}
	json_decref(all);
	return ok;
}

/* Run the loop until the observer has seen every machine Running and ready, the control
 * plane healthy. */
static void observed(void)
{
	int64_t until = rz_clock_now_ms() + 20000;
	json_t *t = NULL;
	bool ok = false;

	rz_observer_kick(obs, TENANT);
	while (!ok && rz_clock_now_ms() < until) {
		spin(50);
		t = get("Tenant", NULL, TENANT);
		ok = observed_at(NULL) && json_is_true(at(t, "status.controlPlane.healthy"));
		json_decref(t);
	}
	ck_assert_msg(ok, "the tenant was not observed healthy within 20 s");
}

/* An UpgradeRun as the API would store it (status Pending, from the kind). */
static void create_upgrade(const char *name, const char *component, const char *target)
{
	json_t *u = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:b, s:s}}", "apiVersion",
	                      "rezuscloud.io/v1", "kind", "UpgradeRun", "metadata", "name", name,
	                      "tenant", TENANT, "spec", "component", component, "targetVersion",
	                      target, "dryRun", 0, "trigger", "manual");

	create("UpgradeRun", u);
	json_decref(u);
}

static bool terminal(const char *phase)
{
	return strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0 ||
	       strcmp(phase, "Canceled") == 0 || strcmp(phase, "RolledBack") == 0;
}

/* Run the loop until UpgradeRun name ends (30 s at most); the UpgradeRun (caller owns). */
static json_t *finished(const char *name)
{
	int64_t until = rz_clock_now_ms() + 30000;
	json_t *u = NULL;

	for (;;) {
		json_decref(u);
		u = get("UpgradeRun", TENANT, name);
		if (terminal(sat(u, "status.phase")) || rz_clock_now_ms() > until) {
			break;
		}
		spin(50);
	}
	ck_assert_msg(terminal(sat(u, "status.phase")), "%s still %s after 30 s: %s", name,
	              sat(u, "status.phase"), json_dumps(at(u, "status"), JSON_INDENT(1)));
	ck_assert_uint_eq(rz_upgrader_active(upg), 0);
	return u;
}

/* Run the loop until some call contains needle (10 s at most). */
static void until_called(const char *needle)
{
	int64_t until = rz_clock_now_ms() + 10000;
	json_t *log = NULL;
	bool found = false;

	while (!found && rz_clock_now_ms() < until) {
		spin(20);
		log = calls();
		found = count_calls(log, needle) > 0;
		json_decref(log);
	}
	ck_assert_msg(found, "no call with '%s' within 10 s", needle);
}

/* Once no probe runs or waits: no credentials file may be left behind. */
static void no_credentials_left(void)
{
	int64_t until = rz_clock_now_ms() + 10000;
	rz_observer_stats_t s;

	do {
		spin(10);
		rz_observer_stats(obs, &s);
	} while ((s.running > 0 || s.queued > 0) && rz_clock_now_ms() < until);
	ck_assert_uint_eq(s.running + s.queued, 0);
	ck_assert_uint_eq(entries(tmpdir), 0);
}

static void machine_phases(const json_t *u, const char *p0, const char *p1, const char *p2)
{
	const json_t *ms = at(u, "status.machines");

	ck_assert_uint_eq(json_array_size(ms), 3);
	ck_assert_str_eq(sat(ms, "0.name"), CP);
	ck_assert_str_eq(sat(ms, "1.name"), "w-0");
	ck_assert_str_eq(sat(ms, "2.name"), "w-1");
	ck_assert_str_eq(sat(ms, "0.phase"), p0);
	ck_assert_str_eq(sat(ms, "1.phase"), p1);
	ck_assert_str_eq(sat(ms, "2.phase"), p2);
}

static void tenant_versions(const char *talos, const char *kubernetes)
{
	json_t *t = get("Tenant", NULL, TENANT);

	ck_assert_str_eq(sat(t, "spec.talosVersion"), talos);
	ck_assert_str_eq(sat(t, "status.talosVersion"), talos);
	ck_assert_str_eq(sat(t, "spec.kubernetesVersion"), kubernetes);
	ck_assert_str_eq(sat(t, "status.kubernetesVersion"), kubernetes);
	json_decref(t);
}

/* ------------------------------------------------------------------ talos, rolling */

START_TEST(test_rolling_upgrade)
{
	json_t *u, *log, *e;
	int c, w0, w1;

	start_observer(200);
	observed();
	create_upgrade("up-roll", "talos", TALOS_TO);
	start_upgrader(SUCCESS_GATE_MS);
	u = finished("up-roll");
	ck_assert_msg(strcmp(sat(u, "status.phase"), "Succeeded") == 0, "%s: %s",
	              sat(u, "status.phase"), sat(u, "status.message"));
	machine_phases(u, "Succeeded", "Succeeded", "Succeeded");
	ck_assert_str_eq(sat(u, "status.fromVersion"), TALOS_WAS);
	/* each machine from and to in the one form of fromVersion and targetVersion, though
	 * the machines report Talos' "v" + TALOS_WAS */
	ck_assert_str_eq(sat(at(u, "status.machines"), "1.from"), TALOS_WAS);
	ck_assert_str_eq(sat(at(u, "status.machines"), "1.to"), TALOS_TO);
	ck_assert_str_eq(order_error, "");

	/* control plane first, then the workers, one at a time, each once */
	log = calls();
	every_call_had_credentials(log);
	c = find_call(log, 0, "talosctl credentials=yes upgrade --nodes 10.20.0.10 " IMAGE, NULL);
	w0 = find_call(log, 0, "talosctl credentials=yes upgrade --nodes 10.20.0.11 " IMAGE, NULL);
	w1 = find_call(log, 0, "talosctl credentials=yes upgrade --nodes 10.20.0.12 " IMAGE, NULL);
	ck_assert_int_ge(c, 0);
	ck_assert_int_gt(w0, c);
	ck_assert_int_gt(w1, w0);
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes "), 3);
	ck_assert_uint_eq(count_calls(log, " rollback "), 0);
	ck_assert_uint_eq(count_calls(log, " upgrade-k8s "), 0);
	/* between two machines, an observation asked the one before for its version */
	ck_assert_int_lt(find_call(log, (size_t)c + 1, "--nodes 10.20.0.10 ", " version", NULL),
	                 w0);
	ck_assert_int_lt(find_call(log, (size_t)w0 + 1, "--nodes 10.20.0.11 ", " version", NULL),
	                 w1);
	json_decref(log);

	ck_assert(observed_at(TALOS_TO));
	tenant_versions(TALOS_TO, K8S_WAS);
	ck_assert_ptr_nonnull(e = event_of("up-roll", "Normal", "UpgradeSucceeded"));
	json_decref(e);
	ck_assert_ptr_nonnull(e = event_of("up-roll", "Normal", "MachineUpgraded"));
	ck_assert_int_eq(json_integer_value(json_object_get(e, "count")), 3);
	json_decref(e);
	json_decref(u);
	no_credentials_left();
}
END_TEST

/* A node group's Image Factory schematic picks the installer of its machines; a metal
 * machine's own entry wins over its group's. */
START_TEST(test_schematic)
{
	static const char group[] =
	    "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
	static const char own[] =
	    "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515";
	json_t *ng = get("NodeGroup", TENANT, "workers"), *out = NULL, *u, *log;
	rz_err_t err = { 0 };
	bool gone = false;

	json_object_set_new(json_object_get(at(ng, "spec"), "providerConfig"), "schematic",
	                    json_string(group));
	json_object_set_new((json_t *)at(ng, "spec.providerConfig.machines.1"), "schematic",
	                    json_string(own));
	ck_assert_msg(rz_store_update(st, rz_kind_by_name("NodeGroup"), TENANT, "workers", ng, 0,
	                              RZ_UPDATE_SPEC, NULL, &out, &gone, &err) == 0,
	              "%s", err.msg);
	json_decref(out);
	json_decref(ng);
	start_observer(200);
	observed();
	create_upgrade("up-schematic", "talos", TALOS_TO);
	start_upgrader(SUCCESS_GATE_MS);
	u = finished("up-schematic");
	ck_assert_str_eq(sat(u, "status.phase"), "Succeeded");
	log = calls();
	ck_assert_int_ge(find_call(log, 0,
	                           "upgrade --nodes 10.20.0.10 --image "
	                           "ghcr.io/siderolabs/installer:v" TALOS_TO " ",
	                           NULL),
	                 0);
	ck_assert_int_ge(
	    find_call(log, 0, "upgrade --nodes 10.20.0.11 --image factory.talos.dev/installer/",
	              group, ":v" TALOS_TO " --wait", NULL),
	    0);
	ck_assert_int_ge(
	    find_call(log, 0, "upgrade --nodes 10.20.0.12 --image factory.talos.dev/installer/",
	              own, ":v" TALOS_TO " --wait", NULL),
	    0);
	ck_assert_uint_eq(count_calls(log, "ghcr.io/siderolabs/installer"), 1);
	json_decref(log);
	json_decref(u);
}
END_TEST

/* ------------------------------------------------------------------ talos, failing */

START_TEST(test_upgrade_fails)
{
	static const char why[] =
	    "rpc error: code = Unknown desc = error validating installer image "
	    "\"ghcr.io/siderolabs/installer:v1.13.0\": failed to resolve reference: not found";
	char text[1024];
	json_t *u, *log, *e;
	int w0, rb;

	snprintf(text, sizeof(text),
	         "watching nodes: [10.20.0.11]\n    * 10.20.0.11: waiting for actor ID\n"
	         "    * 10.20.0.11: %s\n",
	         why);
	standin_file("talosctl/10.20.0.11/upgrade.err", text);
	standin_file("talosctl/10.20.0.11/upgrade.exit", "1\n");
	start_observer(200);
	observed();
	create_upgrade("up-fail", "talos", TALOS_TO);
	start_upgrader(3000);
	u = finished("up-fail");
	ck_assert_str_eq(sat(u, "status.phase"), "RolledBack");
	machine_phases(u, "Succeeded", "RolledBack", "Pending");
	ck_assert_msg(strstr(sat(u, "status.machines.1.error"), why) != NULL, "error: %s",
	              sat(u, "status.machines.1.error"));
	ck_assert_msg(strstr(sat(u, "status.machines.1.error"), "talosctl upgrade failed") != NULL,
	              "error: %s", sat(u, "status.machines.1.error"));
	ck_assert_msg(strstr(sat(u, "status.message"), why) != NULL &&
	                  strstr(sat(u, "status.message"), "rolled back") != NULL,
	              "message: %s", sat(u, "status.message"));
	ck_assert_str_eq(order_error, "");

	log = calls();
	every_call_had_credentials(log);
	w0 = find_call(log, 0, " upgrade --nodes 10.20.0.11 ", NULL);
	rb = find_call(log, 0, "talosctl credentials=yes rollback --nodes 10.20.0.11", NULL);
	ck_assert_int_ge(w0, 0);
	ck_assert_int_gt(rb, w0);
	ck_assert_uint_eq(count_calls(log, " rollback "), 1);
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes 10.20.0.12 "), 0);
	json_decref(log);

	ck_assert_ptr_nonnull(e = event_of("up-fail", "Warning", "UpgradeRolledBack"));
	ck_assert_msg(strstr(sat(e, "message"), why) != NULL, "%s", sat(e, "message"));
	json_decref(e);
	ck_assert_ptr_nonnull(e = event_of("up-fail", "Warning", "MachineUpgradeFailed"));
	json_decref(e);
	tenant_versions(TALOS_WAS, K8S_WAS); /* the upgrade did not happen */
	json_decref(u);
	no_credentials_left();
}
END_TEST

/* The upgrade exits 0 but the machine keeps reporting the old version. */
START_TEST(test_gate_timeout)
{
	json_t *u, *log;
	int64_t began;

	no_after("10.20.0.10", "upgrade");
	start_observer(200);
	observed();
	create_upgrade("up-gate", "talos", TALOS_TO);
	began = rz_clock_now_ms();
	start_upgrader(3000);
	u = finished("up-gate");
	ck_assert_int_ge(rz_clock_now_ms() - began, 3000); /* it waited machine_timeout */
	ck_assert_str_eq(sat(u, "status.phase"), "RolledBack");
	machine_phases(u, "RolledBack", "Pending", "Pending");
	ck_assert_msg(strstr(sat(u, "status.machines.0.error"), "health gate") != NULL &&
	                  strstr(sat(u, "status.machines.0.error"), "Talos v1.12.1") != NULL,
	              "error: %s", sat(u, "status.machines.0.error"));
	log = calls();
	ck_assert_int_gt(find_call(log, 0, "rollback --nodes 10.20.0.10", NULL),
	                 find_call(log, 0, " upgrade --nodes 10.20.0.10 ", NULL));
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes "), 1);
	json_decref(log);
	tenant_versions(TALOS_WAS, K8S_WAS);
	json_decref(u);
}
END_TEST

/* A control plane at the new version whose etcd is not healthy does not pass its gate:
 * the fixture's control plane has its role from its node group only. */
START_TEST(test_gate_etcd)
{
	char rel[256];
	json_t *u;

	snprintf(rel, sizeof(rel), "after/10.20.0.10/upgrade/talosctl/10.20.0.10/etcd-members.out");
	sh("cp '%s/tests/plugins/observe/talos/etcd-members-learner.txt' '%s/%s'", src(), standin,
	   rel);
	start_observer(200);
	observed();
	create_upgrade("up-etcd", "talos", TALOS_TO);
	start_upgrader(3000);
	u = finished("up-etcd");
	ck_assert_str_eq(sat(u, "status.phase"), "RolledBack");
	machine_phases(u, "RolledBack", "Pending", "Pending");
	ck_assert_msg(strstr(sat(u, "status.machines.0.error"), "etcd") != NULL, "error: %s",
	              sat(u, "status.machines.0.error"));
	json_decref(u);
}
END_TEST

/* A kick that finds an observation in progress (one that asked the node before its
 * upgrade ended) is another observation right after, not lost until the next interval. */
START_TEST(test_kick_during_observation)
{
	json_t *u;

	standin_file("kubectl/get-nodes.sleep", "1\n");             /* observations take 1 s */
	standin_file("talosctl/10.20.0.10/upgrade.sleep", "0.5\n"); /* ends during one */
	start_observer(60000);
	observed();
	create_upgrade("up-kick", "talos", TALOS_TO);
	start_upgrader(6000);
	rz_observer_kick(obs, TENANT);
	u = finished("up-kick");
	ck_assert_msg(strcmp(sat(u, "status.phase"), "Succeeded") == 0, "%s: %s",
	              sat(u, "status.phase"), sat(u, "status.message"));
	json_decref(u);
}
END_TEST

/* ------------------------------------------------------------------ cancel */

START_TEST(test_cancel)
{
	char req[512];
	rzt_response_t r;
	json_t *u, *log;
	rz_err_t err = { 0 };

	no_after("10.20.0.10", "upgrade"); /* the control plane's upgrade takes when we say */
	start_observer(200);
	observed();
	create_upgrade("up-cancel", "talos", TALOS_TO);
	start_upgrader(10000);
	ck_assert_int_eq(rz_http_new(&http, base, NULL, &err), 0);
	ck_assert_int_eq(rz_upgrader_routes(upg, http, &err), 0);
	ck_assert_int_eq(rz_http_listen(http, "127.0.0.1:0", &err), 0);
	until_called(" upgrade --nodes 10.20.0.10 ");

	snprintf(req, sizeof(req),
	         "POST /api/v1/tenants/" TENANT "/upgrades/up-cancel/cancel HTTP/1.1\r\n"
	         "Host: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	rzt_request(base, rz_http_port(http), req, &r);
	ck_assert_int_eq(r.code, 200);
	ck_assert_msg(strstr(r.body, "stops before its next machine") != NULL, "%s", r.body);
	rzt_response_free(&r);
	u = get("UpgradeRun", TENANT, "up-cancel");
	ck_assert(json_is_true(at(u, "status.cancelRequested")));
	ck_assert_str_eq(sat(u, "status.phase"), "Upgrading");
	json_decref(u);

	apply_after("10.20.0.10", "upgrade"); /* the machine it is on still finishes */
	u = finished("up-cancel");
	ck_assert_str_eq(sat(u, "status.phase"), "Canceled");
	machine_phases(u, "Succeeded", "Pending", "Pending");
	log = calls();
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes "), 1);
	ck_assert_uint_eq(count_calls(log, " rollback "), 0);
	json_decref(log);
	json_decref(u);

	rzt_request(base, rz_http_port(http), req, &r);
	ck_assert_int_eq(r.code, 409); /* it already ended */
	rzt_response_free(&r);
}
END_TEST

/* An upgrade canceled while it waits (behind an older one, its plan not made yet) ends
 * Canceled, and the older one goes on. */
START_TEST(test_cancel_waiting)
{
	char req[512];
	rzt_response_t r;
	json_t *u;
	rz_err_t err = { 0 };

	no_after("10.20.0.10", "upgrade");
	start_observer(200);
	observed();
	create_upgrade("up-first", "talos", TALOS_TO);
	start_upgrader(10000);
	ck_assert_int_eq(rz_http_new(&http, base, NULL, &err), 0);
	ck_assert_int_eq(rz_upgrader_routes(upg, http, &err), 0);
	ck_assert_int_eq(rz_http_listen(http, "127.0.0.1:0", &err), 0);
	until_called(" upgrade --nodes 10.20.0.10 ");
	create_upgrade("up-waiting", "kubernetes", K8S_TO);
	spin(300);
	u = get("UpgradeRun", TENANT, "up-waiting");
	ck_assert_msg(!terminal(sat(u, "status.phase")) && at(u, "status.machines") == NULL, "%s",
	              json_dumps(u, JSON_COMPACT));
	json_decref(u);

	snprintf(req, sizeof(req),
	         "POST /api/v1/tenants/" TENANT "/upgrades/up-waiting/cancel HTTP/1.1\r\n"
	         "Host: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	rzt_request(base, rz_http_port(http), req, &r);
	ck_assert_int_eq(r.code, 200);
	ck_assert_msg(strstr(r.body, "upgrade canceled") != NULL, "%s", r.body);
	rzt_response_free(&r);
	u = get("UpgradeRun", TENANT, "up-waiting");
	ck_assert_msg(strcmp(sat(u, "status.phase"), "Canceled") == 0, "status %s",
	              json_dumps(at(u, "status"), JSON_COMPACT));
	ck_assert_str_eq(sat(u, "status.message"), "canceled before it started");
	json_decref(u);

	apply_after("10.20.0.10", "upgrade");
	u = finished("up-first");
	ck_assert_str_eq(sat(u, "status.phase"), "Succeeded");
	json_decref(u);
}
END_TEST

/* ------------------------------------------------------------------ restart */

/* An UpgradeRun as the last daemon left it: Upgrading, the control plane done, w-0 at
 * phase (its step in progress), the cancel asked or not. */
static void left_upgrading(const char *name, const char *phase, bool cancel)
{
	json_t *plan =
	    json_pack("[{s:s, s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s, s:s},"
	              " {s:s, s:s, s:s, s:s, s:s, s:s}]",
	              "name", CP, "role", "controlplane", "address", "10.20.0.10", "from",
	              "v" TALOS_WAS, "to", TALOS_TO, "phase", "Succeeded", "name", "w-0", "role",
	              "worker", "address", "10.20.0.11", "from", "v" TALOS_WAS, "to", TALOS_TO,
	              "phase", phase, "name", "w-1", "role", "worker", "address", "10.20.0.12",
	              "from", "v" TALOS_WAS, "to", TALOS_TO, "phase", "Pending");

	create_upgrade(name, "talos", TALOS_TO);
	rz_report_status(st, "UpgradeRun", TENANT, name,
	                 json_pack("{s:s, s:s, s:s, s:o, s:s, s:b}", "phase", "Upgrading",
	                           "fromVersion", TALOS_WAS, "startedAt",
	                           "2026-12-01T10:00:00.000Z", "machines", plan, "current", "w-0",
	                           "cancelRequested", cancel));
}

START_TEST(test_resume)
{
	json_t *u, *log, *e;

	apply_after("10.20.0.10", "upgrade"); /* done before the restart */
	start_observer(200);
	observed();
	left_upgrading("up-resume", "Upgrading", false);
	start_upgrader(SUCCESS_GATE_MS);
	u = finished("up-resume");
	ck_assert_str_eq(sat(u, "status.phase"), "Succeeded");
	machine_phases(u, "Succeeded", "Succeeded", "Succeeded");
	ck_assert_str_eq(order_error, "");
	log = calls();
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes 10.20.0.10 "), 0);
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes 10.20.0.11 "), 1);
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes 10.20.0.12 "), 1);
	json_decref(log);
	ck_assert_ptr_nonnull(e = event_of("up-resume", "Normal", "UpgradeResumed"));
	ck_assert_msg(strstr(sat(e, "message"), "w-0") != NULL, "%s", sat(e, "message"));
	json_decref(e);
	tenant_versions(TALOS_TO, K8S_WAS);
	json_decref(u);
}
END_TEST

/* w-0 was Verifying and made it while the daemon was away: not upgraded again. */
START_TEST(test_resume_made_it)
{
	json_t *u, *log;

	apply_after("10.20.0.10", "upgrade");
	apply_after("10.20.0.11", "upgrade");
	start_observer(200);
	observed();
	left_upgrading("up-made-it", "Verifying", false);
	start_upgrader(SUCCESS_GATE_MS);
	u = finished("up-made-it");
	ck_assert_str_eq(sat(u, "status.phase"), "Succeeded");
	machine_phases(u, "Succeeded", "Succeeded", "Succeeded");
	log = calls();
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes "), 1);
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes 10.20.0.12 "), 1);
	json_decref(log);
	json_decref(u);
}
END_TEST

/* A cancel asked before the restart: the machine it was on finishes, the next waits. */
START_TEST(test_cancel_across_restart)
{
	json_t *u, *log;

	apply_after("10.20.0.10", "upgrade");
	start_observer(200);
	observed();
	left_upgrading("up-cancel-restart", "Upgrading", true);
	start_upgrader(3000);
	u = finished("up-cancel-restart");
	ck_assert_str_eq(sat(u, "status.phase"), "Canceled");
	machine_phases(u, "Succeeded", "Succeeded", "Pending");
	ck_assert_str_eq(order_error, "");
	log = calls();
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes 10.20.0.11 "), 1);
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes "), 1);
	json_decref(log);
	tenant_versions(TALOS_WAS, K8S_WAS);
	json_decref(u);
}
END_TEST

/* ------------------------------------------------------------------ kubernetes */

START_TEST(test_kubernetes)
{
	json_t *u, *log, *m;

	start_observer(200);
	observed();
	create_upgrade("up-k8s", "kubernetes", K8S_TO);
	start_upgrader(3000);
	u = finished("up-k8s");
	ck_assert_msg(strcmp(sat(u, "status.phase"), "Succeeded") == 0, "%s: %s",
	              sat(u, "status.phase"), sat(u, "status.message"));
	machine_phases(u, "Succeeded", "Succeeded", "Succeeded");
	log = calls();
	every_call_had_credentials(log);
	ck_assert_uint_eq(count_calls(log, " upgrade-k8s "), 1);
	ck_assert_int_ge(
	    find_call(log, 0,
	              "talosctl credentials=yes upgrade-k8s --nodes 10.20.0.10 --to " K8S_TO, NULL),
	    0);
	ck_assert_uint_eq(count_calls(log, " upgrade --nodes "), 0);
	ck_assert_uint_eq(count_calls(log, " rollback "), 0);
	json_decref(log);
	m = get("Machine", TENANT, "w-1");
	ck_assert_str_eq(sat(m, "status.kubernetesVersion"), "v" K8S_TO);
	json_decref(m);
	tenant_versions(TALOS_WAS, K8S_TO);
	json_decref(u);
	no_credentials_left();
}
END_TEST

/* Two kubelets stay at the old version: the gate waits for every node, then fails (no
 * rollback for Kubernetes); the machine that made it is Succeeded, the others Failed. */
START_TEST(test_kubernetes_gate)
{
	json_t *u, *log;

	sh("sed -i '0,/\"kubeletVersion\": \"v1.35.2\"/! s/\"kubeletVersion\": \"v1.35.2\"/"
	   "\"kubeletVersion\": \"v1.35.0\"/' "
	   "'%s/after/10.20.0.10/upgrade-k8s/kubectl/get-nodes.out'",
	   standin);
	start_observer(200);
	observed();
	create_upgrade("up-k8s-gate", "kubernetes", K8S_TO);
	start_upgrader(3000);
	u = finished("up-k8s-gate");
	ck_assert_str_eq(sat(u, "status.phase"), "Failed");
	ck_assert_msg(strstr(sat(u, "status.message"), "health gate") != NULL &&
	                  strstr(sat(u, "status.message"), "reports Kubernetes v1.35.0") != NULL,
	              "message: %s", sat(u, "status.message"));
	machine_phases(u, "Succeeded", "Failed", "Failed");
	ck_assert_msg(strstr(sat(u, "status.machines.1.error"), "health gate") != NULL, "%s",
	              sat(u, "status.machines.1.error"));
	log = calls();
	ck_assert_uint_eq(count_calls(log, " upgrade-k8s "), 1);
	ck_assert_uint_eq(count_calls(log, " rollback "), 0);
	json_decref(log);
	tenant_versions(TALOS_WAS, K8S_WAS);
	json_decref(u);
}
END_TEST

/* ------------------------------------------------------------------ prechecks */

/* The causes rz_upgrader_admit gives an UpgradeRun of component to target (caller owns). */
static json_t *admit_upgrade(const char *component, const char *target, bool dry)
{
	json_t *u = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:b, s:s}}", "apiVersion",
	                      "rezuscloud.io/v1", "kind", "UpgradeRun", "metadata", "name",
	                      "up-admit", "tenant", TENANT, "spec", "component", component,
	                      "targetVersion", target, "dryRun", dry, "trigger", "manual");
	json_t *causes = json_array();

	rz_upgrader_admit(upg, rz_kind_by_name("UpgradeRun"), u, NULL, causes);
	json_decref(u);
	return causes;
}

/* The message of the cause naming precheck check, or NULL. */
static const char *cause_of(const json_t *causes, const char *check)
{
	char want[64];
	const json_t *c;
	size_t i;

	snprintf(want, sizeof(want), "precheck %s: ", check);
	json_array_foreach(causes, i, c)
	{
		if (strncmp(sat(c, "message"), want, strlen(want)) == 0) {
			return sat(c, "message");
		}
	}
	return NULL;
}

START_TEST(test_admit)
{
	json_t *c;

	start_observer(200);
	start_upgrader(3000);
	/* nothing observed yet: the machines are not known to be ready */
	c = admit_upgrade("talos", TALOS_TO, false);
	ck_assert_ptr_nonnull(cause_of(c, "MachinesReady"));
	json_decref(c);
	observed();

	c = admit_upgrade("talos", TALOS_TO, false);
	ck_assert_msg(json_array_size(c) == 0, "%s", json_dumps(c, 0));
	json_decref(c);

	c = admit_upgrade("talos", "1.11.5", false);
	ck_assert_msg(cause_of(c, "NoDowngrade") != NULL, "%s", json_dumps(c, 0));
	ck_assert_str_eq(sat(c, "0.field"), "spec.targetVersion");
	ck_assert_str_eq(sat(c, "0.reason"), "FieldValueInvalid");
	ck_assert_ptr_null(cause_of(c, "OneMinorAtATime"));
	json_decref(c);

	c = admit_upgrade("talos", TALOS_WAS, false);
	ck_assert_msg(cause_of(c, "NoDowngrade") != NULL, "%s", json_dumps(c, 0));
	json_decref(c);

	c = admit_upgrade("kubernetes", "1.37.0", false);
	ck_assert_msg(cause_of(c, "OneMinorAtATime") != NULL, "%s", json_dumps(c, 0));
	ck_assert_ptr_null(cause_of(c, "NoDowngrade"));
	json_decref(c);

	/* one minor on, but Talos 1.12 does not run Kubernetes 1.36 */
	c = admit_upgrade("kubernetes", "1.36.0", false);
	ck_assert_msg(json_array_size(c) == 1 && cause_of(c, "Compatible") != NULL, "%s",
	              json_dumps(c, 0));
	ck_assert_msg(strstr(cause_of(c, "Compatible"), "1.30 to 1.35") != NULL, "%s",
	              cause_of(c, "Compatible"));
	json_decref(c);

	c = admit_upgrade("kubernetes", K8S_TO, false);
	ck_assert_msg(json_array_size(c) == 0, "%s", json_dumps(c, 0));
	json_decref(c);

	/* a dry run is not refused: it reports */
	c = admit_upgrade("talos", "1.11.5", true);
	ck_assert_uint_eq(json_array_size(c), 0);
	json_decref(c);
}
END_TEST

/* A Tenant update moving a version of a cluster with machines is checked the same way. */
START_TEST(test_admit_tenant)
{
	json_t *old, *now, *causes = json_array();

	start_observer(200);
	start_upgrader(3000);
	old = get("Tenant", NULL, TENANT);
	now = json_deep_copy(old);
	json_object_set_new(json_object_get(now, "spec"), "talosVersion", json_string("1.14.0"));
	rz_upgrader_admit(upg, rz_kind_by_name("Tenant"), now, old, causes);
	ck_assert_msg(json_array_size(causes) == 1 && cause_of(causes, "OneMinorAtATime") != NULL,
	              "%s", json_dumps(causes, 0));
	ck_assert_str_eq(sat(causes, "0.field"), "spec.talosVersion");
	json_array_clear(causes);
	json_object_set_new(json_object_get(now, "spec"), "talosVersion", json_string(TALOS_TO));
	rz_upgrader_admit(upg, rz_kind_by_name("Tenant"), now, old, causes);
	ck_assert_msg(json_array_size(causes) == 0, "%s", json_dumps(causes, 0));
	json_decref(causes);
	json_decref(now);
	json_decref(old);
}
END_TEST

/* ------------------------------------------------------------------ versions */

START_TEST(test_version_parse)
{
	rz_version_t v, w;

	ck_assert(rz_version_parse("v1.12.0", &v));
	ck_assert_int_eq(v.major, 1);
	ck_assert_int_eq(v.minor, 12);
	ck_assert_int_eq(v.patch, 0);
	ck_assert(rz_version_parse("1.12.0-beta.1", &w));
	ck_assert_int_eq(w.minor, 12);
	ck_assert_int_eq(w.patch, 0);
	ck_assert(rz_version_parse("1.35.2+k3s1", &w));
	ck_assert_int_eq(w.patch, 2);
	ck_assert(!rz_version_parse("garbage", &v));
	ck_assert(!rz_version_parse("", &v));
	ck_assert(!rz_version_parse(NULL, &v));
	ck_assert(!rz_version_parse("1.12", &v));
	ck_assert(!rz_version_parse("1.12.x", &v));
	ck_assert(!rz_version_parse("1.12.0junk", &v));
	ck_assert(!rz_version_parse("vv1.12.0", &v));
	ck_assert(!rz_version_parse("-1.12.0", &v));
	ck_assert(!rz_version_parse("1.99999999999.0", &v));
	ck_assert_str_eq(rz_version_bare("v1.12.0"), "1.12.0");
	ck_assert_str_eq(rz_version_bare("1.12.0"), "1.12.0");
	ck_assert_str_eq(rz_version_bare("v1.35.0-beta.1"), "1.35.0-beta.1");
	ck_assert_str_eq(rz_version_bare("vnext"), "vnext"); /* no version: as it is */
	ck_assert_ptr_null(rz_version_bare(NULL));
}
END_TEST

START_TEST(test_version_cmp)
{
	rz_version_t a, b;

	ck_assert(rz_version_parse("1.12.1", &a) && rz_version_parse("v1.12.1", &b));
	ck_assert_int_eq(rz_version_cmp(&a, &b), 0);
	ck_assert(rz_version_parse("1.13.0", &b));
	ck_assert_int_lt(rz_version_cmp(&a, &b), 0);
	ck_assert_int_gt(rz_version_cmp(&b, &a), 0);
	ck_assert(rz_version_parse("1.12.10", &b));
	ck_assert_int_lt(rz_version_cmp(&a, &b), 0); /* numbers, not text */
	ck_assert(rz_version_parse("2.0.0", &b));
	ck_assert_int_lt(rz_version_cmp(&a, &b), 0);
	ck_assert(rz_version_same("v1.12.1", "1.12.1"));
	ck_assert(rz_version_same("1.12.0-beta.1", "1.12.0"));
	ck_assert(!rz_version_same("1.12.1", "1.12.2"));
	ck_assert(!rz_version_same("garbage", "garbage"));
	ck_assert(!rz_version_same(NULL, "1.12.1"));
}
END_TEST

START_TEST(test_compat_table)
{
	char why[256];
	int lo = 0, hi = 0;

	ck_assert(rz_compat_kubernetes(1, 12, &lo, &hi));
	ck_assert_int_eq(lo, 30);
	ck_assert_int_eq(hi, 35);
	ck_assert(!rz_compat_kubernetes(1, 99, &lo, &hi));
	ck_assert(!rz_compat_kubernetes(2, 12, &lo, &hi));

	ck_assert(rz_compat_check("1.12.1", "1.30.0", why, sizeof(why)));
	ck_assert(rz_compat_check("v1.12.1", "v1.35.9", why, sizeof(why)));
	ck_assert(!rz_compat_check("1.12.1", "1.29.4", why, sizeof(why)));
	ck_assert(!rz_compat_check("1.12.1", "1.36.0", why, sizeof(why)));
	ck_assert_str_eq(why, "Talos 1.12 runs Kubernetes 1.30 to 1.35, not 1.36");
	ck_assert(rz_compat_check("1.11.3", "1.34.0", why, sizeof(why)));
	ck_assert(!rz_compat_check("1.11.3", "1.35.0", why, sizeof(why)));
	ck_assert_str_eq(why, "Talos 1.11 runs Kubernetes 1.29 to 1.34, not 1.35");
	ck_assert(!rz_compat_check("1.99.0", "1.35.0", why, sizeof(why)));
	ck_assert_msg(strstr(why, "not in the compatibility table") != NULL, "%s", why);
	ck_assert(!rz_compat_check("1.12.1", "2.30.0", why, sizeof(why)));
	ck_assert(!rz_compat_check("garbage", "1.35.0", why, sizeof(why)));
	ck_assert_msg(strstr(why, "not a version") != NULL, "%s", why);
	ck_assert(!rz_compat_check("1.12.1", NULL, why, sizeof(why)));
}
END_TEST

START_TEST(test_compat_move)
{
	char why[256];

	ck_assert_ptr_null(rz_compat_move("talos", "1.12.1", "1.12.2", why, sizeof(why)));
	ck_assert_ptr_null(rz_compat_move("talos", "v1.12.1", "1.13.0", why, sizeof(why)));
	ck_assert_ptr_null(rz_compat_move("kubernetes", "1.35.0", "1.36.3", why, sizeof(why)));
	ck_assert_str_eq(rz_compat_move("talos", "1.12.1", "1.12.0", why, sizeof(why)),
	                 "NoDowngrade");
	ck_assert_str_eq(why,
	                 "Talos 1.12.0 is older than the 1.12.1 the cluster runs: no downgrade");
	ck_assert_str_eq(rz_compat_move("talos", "1.12.1", "v1.12.1", why, sizeof(why)),
	                 "NoDowngrade");
	ck_assert_str_eq(why, "the cluster already runs Talos 1.12.1");
	ck_assert_str_eq(rz_compat_move("kubernetes", "1.35.0", "1.37.0", why, sizeof(why)),
	                 "OneMinorAtATime");
	ck_assert_str_eq(
	    why,
	    "Kubernetes 1.37.0 is more than one minor version after 1.35.0: upgrade to 1.36 first");
	ck_assert_str_eq(rz_compat_move("talos", "1.12.1", "2.0.0", why, sizeof(why)),
	                 "OneMinorAtATime");
	ck_assert_str_eq(rz_compat_move("talos", "1.12.1", "garbage", why, sizeof(why)),
	                 "NoDowngrade");
	ck_assert_msg(strstr(why, "not a version") != NULL, "%s", why);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("upgrader");
	TCase *tc = tcase_create("talos");
	TCase *tv = tcase_create("versions");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_rolling_upgrade);
	tcase_add_test(tc, test_schematic);
	tcase_add_test(tc, test_upgrade_fails);
	tcase_add_test(tc, test_gate_timeout);
	tcase_add_test(tc, test_gate_etcd);
	tcase_add_test(tc, test_kick_during_observation);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_cancel_waiting);
	tcase_add_test(tc, test_resume);
	tcase_add_test(tc, test_resume_made_it);
	tcase_add_test(tc, test_cancel_across_restart);
	tcase_add_test(tc, test_kubernetes);
	tcase_add_test(tc, test_kubernetes_gate);
	tcase_add_test(tc, test_admit);
	tcase_add_test(tc, test_admit_tenant);
	suite_add_tcase(s, tc);
	tcase_add_test(tv, test_version_parse);
	tcase_add_test(tv, test_version_cmp);
	tcase_add_test(tv, test_compat_table);
	tcase_add_test(tv, test_compat_move);
	suite_add_tcase(s, tv);
	return rzt_run(s);
}
