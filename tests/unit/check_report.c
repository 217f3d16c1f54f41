/* tests/unit/check_report.c - a tenant's phase and conditions, derived from what is known. */
#include <config.h>

#include <string.h>

#include "core/base/config.h"
#include "core/base/log.h"
#include "core/report/report.h"
#include "core/model/kinds.h"
#include "core/plugin/compose.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "tests/unit/testutil.h"

#define MIN (60 * 1000)

static const struct phase_case {
	const char *what;
	rz_phase_in_t in;
	const char *phase, *machines, *machines_reason, *cp, *cp_reason;
} cases[] = {
	/* clang-format off */
/* one case a paragraph reads better than one member a line */
{ "created, nothing applied yet",
  { .has_controlplane = true, .desired = 3 },
  "Pending", "False", "NotAllReady", "Unknown", "NotObserved" },
{ "no node groups at all",
  { .applied = true, .applied_ms = 1, .now_ms = 2 },
  "Provisioning", "True", "AllReady", "False", "NoControlPlane" },
{ "workers but no control plane",
  { .applied = true, .desired = 2, .total = 2, .ready = 2, .observed = true },
  "Provisioning", "True", "AllReady", "False", "NoControlPlane" },
{ "applied, machines provisioning",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 1,
    .observed = true, .applied_ms = 10 * MIN, .now_ms = 11 * MIN,
    .provision_timeout_ms = 30 * MIN },
  "Provisioning", "False", "NotAllReady", "False", "Unhealthy" },
{ "applied, not observed yet",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3 },
  "Provisioning", "False", "NotAllReady", "Unknown", "NotObserved" },
{ "every machine ready, control plane healthy",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Provisioning" },
  "Ready", "True", "AllReady", "True", "Healthy" },
{ "all ready but the control plane is not healthy, never Ready before",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .was = "Provisioning" },
  "Provisioning", "True", "AllReady", "False", "Unhealthy" },
{ "one machine lost after Ready",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 2,
    .lost = 1, .observed = true, .cp_healthy = true, .was = "Ready" },
  "Degraded", "False", "MachinesLost", "True", "Healthy" },
{ "the control plane lost after Ready",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .was = "Ready" },
  "Degraded", "True", "AllReady", "False", "Unhealthy" },
{ "scaled up after Ready: new machines on their way",
  { .applied = true, .has_controlplane = true, .desired = 4, .total = 4, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Ready" },
  "Provisioning", "False", "NotAllReady", "True", "Healthy" },
{ "Degraded recovers",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Degraded" },
  "Ready", "True", "AllReady", "True", "Healthy" },
{ "the last run failed",
  { .applied = true, .run_failed = true, .has_controlplane = true, .desired = 3,
    .total = 3, .ready = 3, .observed = true, .cp_healthy = true, .was = "Ready" },
  "Failed", "True", "AllReady", "True", "Healthy" },
{ "the first run failed",
  { .run_failed = true, .has_controlplane = true, .desired = 1 },
  "Failed", "False", "NotAllReady", "Unknown", "NotObserved" },
{ "provisioning did not converge in time",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 1,
    .observed = true, .applied_ms = 10 * MIN, .now_ms = 41 * MIN,
    .provision_timeout_ms = 30 * MIN },
  "Failed", "False", "ProvisioningTimedOut", "False", "Unhealthy" },
{ "a run awaiting approval leaves the phase as observed",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Ready" },
  "Ready", "True", "AllReady", "True", "Healthy" },
{ "deleting wins over everything",
  { .deleting = true, .run_failed = true, .applied = true, .has_controlplane = true,
    .desired = 3, .total = 3, .ready = 3, .observed = true, .cp_healthy = true,
    .was = "Ready" },
  "Deleting", "True", "AllReady", "True", "Healthy" },
{ "a scale-down awaiting approval: more machines than wanted, all ready",
  { .applied = true, .has_controlplane = true, .desired = 2, .total = 4, .ready = 4,
    .observed = true, .cp_healthy = true, .was = "Ready" },
  "Ready", "True", "AllReady", "True", "Healthy" },
{ "more machines than wanted, one not ready",
  { .applied = true, .has_controlplane = true, .desired = 2, .total = 4, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Provisioning" },
  "Provisioning", "False", "NotAllReady", "True", "Healthy" },
{ "an upgrade reboots a machine: planned, not Degraded",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 2,
    .planned = 1, .observed = true, .cp_healthy = false, .was = "Ready" },
  "Provisioning", "False", "MachinesRestarting", "False", "Unhealthy" },
{ "an upgrade long after the apply reboots a machine: not timed out",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 2,
    .planned = 1, .observed = true, .cp_healthy = false, .was = "Ready",
    .applied_ms = 10 * MIN, .now_ms = 41 * MIN, .provision_timeout_ms = 30 * MIN },
  "Provisioning", "False", "MachinesRestarting", "False", "Unhealthy" },
{ "... and at its next derivation, from Provisioning",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 2,
    .planned = 1, .observed = true, .cp_healthy = true, .was = "Provisioning",
    .applied_ms = 10 * MIN, .now_ms = 42 * MIN, .provision_timeout_ms = 30 * MIN },
  "Provisioning", "False", "MachinesRestarting", "True", "Healthy" },
{ "machines missing from the state",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 2, .ready = 2,
    .observed = true, .cp_healthy = true, .was = "Provisioning" },
  "Provisioning", "False", "NotAllReady", "True", "Healthy" },
	/* clang-format on */
};

START_TEST(test_phase_table)
{
	const struct phase_case *c = &cases[_i];
	rz_phase_out_t out;

	rz_report_phase(&c->in, &out);
	ck_assert_msg(strcmp(out.phase, c->phase) == 0, "%s: phase %s, want %s", c->what, out.phase,
	              c->phase);
	ck_assert_msg(strcmp(out.machines_ready, c->machines) == 0 &&
	                  strcmp(out.machines_reason, c->machines_reason) == 0,
	              "%s: MachinesReady %s/%s, want %s/%s", c->what, out.machines_ready,
	              out.machines_reason, c->machines, c->machines_reason);
	ck_assert_msg(strcmp(out.cp_ready, c->cp) == 0 && strcmp(out.cp_reason, c->cp_reason) == 0,
	              "%s: ControlPlaneReady %s/%s, want %s/%s", c->what, out.cp_ready,
	              out.cp_reason, c->cp, c->cp_reason);
	/* Ready follows the phase: kubectl wait --for=condition=Ready waits for phase Ready */
	ck_assert_msg(strcmp(out.ready, strcmp(c->phase, "Ready") == 0 ? "True" : "False") == 0 &&
	                  strcmp(out.ready_reason, c->phase) == 0 && out.ready_message[0] != '\0',
	              "%s: Ready %s/%s (%s) in phase %s", c->what, out.ready, out.ready_reason,
	              out.ready_message, c->phase);
}
END_TEST

START_TEST(test_messages)
{
	rz_phase_in_t in = { .applied = true,
		             .has_controlplane = true,
		             .desired = 3,
		             .total = 3,
		             .ready = 1,
		             .observed = true,
		             .cp_error = "etcd: 1 of 3 members healthy",
		             .applied_ms = 0,
		             .now_ms = 5 };
	rz_phase_out_t out;

	rz_report_phase(&in, &out);
	ck_assert_str_eq(out.machines_message, "1 of 3 machines ready");
	ck_assert_str_eq(out.cp_message, "etcd: 1 of 3 members healthy");
	ck_assert_str_eq(out.ready_message, "1 of 3 machines ready"); /* the first to fail */
	in.ready = 3;
	rz_report_phase(&in, &out);
	ck_assert_str_eq(out.ready_message, "etcd: 1 of 3 members healthy");
	in.ready = 1;
	in.applied_ms = 1000;
	in.now_ms = 1000 + 31 * MIN;
	in.provision_timeout_ms = 30 * MIN;
	rz_report_phase(&in, &out);
	ck_assert_str_eq(out.machines_message,
	                 "1 of 3 machines ready 1860s after the apply (observe.provision_timeout)");
	/* a scale-down not made yet: never "4 of 2" */
	in.provision_timeout_ms = 0;
	in.desired = 2;
	in.total = 4;
	in.ready = 4;
	rz_report_phase(&in, &out);
	ck_assert_str_eq(out.machines_message, "4 of 4 machines ready (2 wanted: 2 to remove)");
}
END_TEST

/* ------------------------------------------------------------------ Machines */

/* The built sim and loose plugins, loaded from a directory of links to them (dir: caller
 * frees and removes it). */
static rz_plugins_t *sim_and_loose(rz_config_t *cfg, char **dir)
{
	const char *top = getenv("top_builddir") ? getenv("top_builddir") : ".";
	const char *names[] = { "sim", "loose" }, *from[] = { "plugins", "tests/fixtures/plugins" };
	char a[1024], b[1024];
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };

	*dir = rzt_tmpdir();
	ck_assert_int_eq(rz_config_defaults(cfg), 0);
	free(cfg->plugin_dir);
	cfg->plugin_dir = strdup(*dir);
	cfg->plugins = calloc(2, sizeof(*cfg->plugins));
	cfg->n_plugins = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(a, sizeof(a), "%s/%s/.libs/%s.so", top, from[i], names[i]);
		snprintf(b, sizeof(b), "%s/%s.so", *dir, names[i]);
		ck_assert_int_eq(symlink(a, b), 0);
		cfg->plugins[i] =
		    (rz_config_plugin_t){ strdup(names[i]), json_object(), true, strdup("test") };
	}
	ck_assert_msg(rz_plugins_load(&p, cfg, true, &err) == 0, "%s", err.msg);
	return p;
}

/* "name=provider ..." of the tenant's Machines in the store, in name order. */
static const char *machines_of(rz_store_t *st, const char *tenant)
{
	static char buf[512];
	json_t *all = rz_store_list_all(st, "Machine", tenant), *m;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(all, i, m)
	{
		json_t *meta = json_object_get(m, "metadata");
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s=%s", i ? " " : "",
		         json_string_value(json_object_get(meta, "name")),
		         json_string_value(json_object_get(json_object_get(meta, "labels"),
		                                           "rezuscloud.io/provider")));
	}
	json_decref(all);
	return buf;
}

START_TEST(test_machines_scoped)
{
	char *tmp = rzt_tmpdir(), *dir = NULL, path[1024];
	const char *src = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
	rz_config_t cfg = { 0 };
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_store_t *st = NULL;
	rz_plugins_t *p;
	rz_err_t err = { 0 };
	json_t *ctx, *files = NULL, *state, *out = NULL;
	size_t i;
	json_t *o;

	rz_log_set_level(RZ_LOG_CRIT);
	snprintf(path, sizeof(path), "%s/rezus.db", tmp);
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_int_eq(rz_store_new(&st, db, bus, 100, &err), 0);
	ctx = json_loads(
	    "{\"tenant\":{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\",\"metadata\":{"
	    "\"name\":\"t\"},\"spec\":{\"clusterProvider\":\"sim\"}},\"nodeGroups\":[{"
	    "\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\",\"metadata\":{\"name\":"
	    "\"cp\",\"tenant\":\"t\"},\"spec\":{\"role\":\"controlplane\",\"count\":1,"
	    "\"providerClass\":\"sim\"}},{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":"
	    "\"NodeGroup\",\"metadata\":{\"name\":\"l\",\"tenant\":\"t\"},\"spec\":{\"role\":"
	    "\"worker\",\"count\":2,\"providerClass\":\"loose\"}}],\"configPatches\":[]}",
	    0, NULL);
	ck_assert_int_eq(rz_store_create(st, rz_kind_by_name("Tenant"),
	                                 json_object_get(ctx, "tenant"), NULL, &out, &err),
	                 0);
	json_decref(out);
	json_array_foreach(json_object_get(ctx, "nodeGroups"), i, o)
	{
		out = NULL;
		ck_assert_msg(
		    rz_store_create(st, rz_kind_by_name("NodeGroup"), o, NULL, &out, &err) == 0,
		    "%s", err.msg);
		json_decref(out);
	}
	snprintf(path, sizeof(path), "%s/tests/fixtures/states/tf-data-two-plugins.json", src);
	ck_assert_ptr_nonnull(state = json_load_file(path, 0, NULL));

	/* A state with no record of who rendered it (nothing composed in this process):
	 * projected as before scoping, every plugin's rules over the whole state; no Machine
	 * is lost, and the loose rule's claims stand. */
	p = sim_and_loose(&cfg, &dir);
	rz_report_machines(st, p, "t", state);
	ck_assert_str_eq(machines_of(st, "t"),
	                 "cluster-secrets=loose cp-0=loose l-0=loose l-1=loose");

	/* Composed: each plugin's rules on what it rendered; the stray Machine goes. */
	ck_assert_msg(rz_compose(p, ctx, NULL, &files, &err) == 0, "%s", err.msg);
	json_decref(files);
	rz_report_machines(st, p, "t", state);
	ck_assert_str_eq(machines_of(st, "t"), "cp-0=sim l-0=loose l-1=loose");
	rz_report_machines(st, p, "t", state); /* idempotent */
	ck_assert_str_eq(machines_of(st, "t"), "cp-0=sim l-0=loose l-1=loose");

	json_decref(state);
	json_decref(ctx);
	rz_plugins_free(p);
	rz_config_free(&cfg);
	rz_store_free(st);
	rz_bus_free(bus);
	rz_db_close(db);
	rzt_rmrf(dir);
	rzt_rmrf(tmp);
	free(dir);
	free(tmp);
}
END_TEST

/* The digest of a tenant's inputs: a node group's or config patch's change (its generation),
 * a new one, a deleted one all show; a status write does not. A start runs again a tenant
 * whose inputs differ from what its last successful apply recorded. */
START_TEST(test_inputs_stale)
{
	char *tmp = rzt_tmpdir(), path[1024], d0[RZ_REPORT_INPUTS_LEN], d1[RZ_REPORT_INPUTS_LEN];
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_store_t *st = NULL;
	rz_err_t err = { 0 };
	json_t *obj, *out = NULL, *t = NULL, *groups, *patches;
	const rz_kind_t *tk = rz_kind_by_name("Tenant"), *nk = rz_kind_by_name("NodeGroup");
	const rz_kind_t *pk = rz_kind_by_name("ConfigPatch");
	bool gone;

	rz_log_set_level(RZ_LOG_CRIT);
	snprintf(path, sizeof(path), "%s/rezus.db", tmp);
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_int_eq(rz_store_new(&st, db, bus, 100, &err), 0);
	obj = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "t", "spec", "clusterProvider",
	                "sim");
	ck_assert_int_eq(rz_store_create(st, tk, obj, NULL, &out, &err), 0);
	json_decref(obj);
	json_decref(out);
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:i, s:s}}", "metadata", "name", "w", "tenant", "t",
	                "spec", "role", "worker", "count", 3, "providerClass", "sim");
	out = NULL;
	ck_assert_msg(rz_store_create(st, nk, obj, NULL, &out, &err) == 0, "%s", err.msg);
	json_decref(out);

#define TENANT() (json_decref(t), t = NULL, rz_store_get(st, tk, NULL, "t", &t, &err), t)
	/* nothing recorded yet (never applied): the tenant's generation tells */
	ck_assert(!rz_report_inputs_stale(st, TENANT()));

	/* an apply of count 3 succeeded and recorded what it composed */
	groups = rz_store_list_all(st, "NodeGroup", "t");
	patches = rz_store_list_all(st, "ConfigPatch", "t");
	rz_report_inputs(groups, patches, d0);
	json_decref(groups);
	json_decref(patches);
	ck_assert_uint_eq(strlen(d0), RZ_REPORT_INPUTS_LEN - 1);
	rz_report_status(st, "Tenant", NULL, "t", json_pack("{s:s}", "appliedInputs", d0));
	ck_assert(!rz_report_inputs_stale(st, TENANT()));

	/* the node group's status moves (observation): still applied */
	rz_report_status(st, "NodeGroup", "t", "w", json_pack("{s:i}", "ready", 2));
	ck_assert(!rz_report_inputs_stale(st, TENANT()));

	/* scaled to 1, and the daemon killed before the debounced run started: stale */
	json_object_set_new(json_object_get(obj, "spec"), "count", json_integer(1));
	out = NULL;
	ck_assert_msg(
	    rz_store_update(st, nk, "t", "w", obj, 0, RZ_UPDATE_SPEC, NULL, &out, &gone, &err) == 0,
	    "%s", err.msg);
	json_decref(out);
	ck_assert(rz_report_inputs_stale(st, TENANT()));
	groups = rz_store_list_all(st, "NodeGroup", "t");
	rz_report_inputs(groups, NULL, d1);
	json_decref(groups);
	ck_assert_str_ne(d0, d1);
	rz_report_status(st, "Tenant", NULL, "t", json_pack("{s:s}", "appliedInputs", d1));
	ck_assert(!rz_report_inputs_stale(st, TENANT()));

	/* a config patch created, then deleted */
	json_decref(obj);
	obj = json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", "p", "tenant", "t", "spec",
	                "patch", "v: 1");
	out = NULL;
	ck_assert_msg(rz_store_create(st, pk, obj, NULL, &out, &err) == 0, "%s", err.msg);
	json_decref(out);
	ck_assert(rz_report_inputs_stale(st, TENANT()));
	groups = rz_store_list_all(st, "NodeGroup", "t");
	patches = rz_store_list_all(st, "ConfigPatch", "t");
	rz_report_inputs(groups, patches, d0);
	json_decref(groups);
	json_decref(patches);
	rz_report_status(st, "Tenant", NULL, "t", json_pack("{s:s}", "appliedInputs", d0));
	ck_assert(!rz_report_inputs_stale(st, TENANT()));
	out = NULL;
	ck_assert_int_eq(rz_store_delete(st, pk, "t", "p", 0, NULL, &out, &gone, &err), 0);
	json_decref(out);
	ck_assert(rz_report_inputs_stale(st, TENANT()));

	/* a run interrupted empties the record: stale whatever the inputs */
	rz_report_status(st, "Tenant", NULL, "t", json_pack("{s:s}", "appliedInputs", ""));
	ck_assert(rz_report_inputs_stale(st, TENANT()));
#undef TENANT

	json_decref(t);
	json_decref(obj);
	rz_store_free(st);
	rz_bus_free(bus);
	rz_db_close(db);
	rzt_rmrf(tmp);
	free(tmp);
}
END_TEST

/* The Ready condition in obj's status: "status/reason/message", or "" if none;
 * *since: its lastTransitionTime. */
static const char *ready_of(const json_t *obj, const char **since)
{
	static char buf[256];
	const json_t *c;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "type")), "Ready") == 0) {
			snprintf(buf, sizeof(buf), "%s/%s/%s",
			         json_string_value(json_object_get(c, "status")),
			         json_string_value(json_object_get(c, "reason")),
			         json_string_value(json_object_get(c, "message")));
			*since = json_string_value(json_object_get(c, "lastTransitionTime"));
		}
	}
	return buf;
}

/* The node group's Event of reason in tenant t: "type/message (count)", or "" (the last
 * listed of two of both types). */
static const char *ng_event(rz_store_t *st, const char *ng, const char *reason)
{
	static char buf[256];
	json_t *all = rz_store_list_all(st, "Event", "t"), *e;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(all, i, e)
	{
		const json_t *inv = json_object_get(e, "involvedObject");
		if (strcmp(json_string_value(json_object_get(inv, "kind")), "NodeGroup") == 0 &&
		    strcmp(json_string_value(json_object_get(inv, "name")), ng) == 0 &&
		    strcmp(json_string_value(json_object_get(e, "reason")), reason) == 0) {
			snprintf(buf, sizeof(buf), "%s/%s (%lld)",
			         json_string_value(json_object_get(e, "type")),
			         json_string_value(json_object_get(e, "message")),
			         (long long)json_integer_value(json_object_get(e, "count")));
		}
	}
	json_decref(all);
	return buf;
}

/* The node group's Events in tenant t: "type reason message|..." */
static const char *events_of(rz_store_t *st, const char *ng)
{
	static char buf[2048];
	json_t *all = rz_store_list_all(st, "Event", "t"), *e;
	size_t i, n = 0;

	buf[0] = '\0';
	json_array_foreach(all, i, e)
	{
		const json_t *inv = json_object_get(e, "involvedObject");
		if (strcmp(json_string_value(json_object_get(inv, "name")), ng) == 0 &&
		    n < sizeof(buf)) {
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s %s %s|",
			                      json_string_value(json_object_get(e, "type")),
			                      json_string_value(json_object_get(e, "reason")),
			                      json_string_value(json_object_get(e, "message")));
		}
	}
	json_decref(all);
	return buf;
}

/* The Ready conditions of a tenant and its node groups, as the store holds them: a node
 * group's follows its machines, the tenant's its phase; lastTransitionTime moves only when
 * the status does, and an unchanged derivation writes nothing. */
START_TEST(test_ready_conditions)
{
	char *tmp = rzt_tmpdir(), path[1024], since0[40];
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_store_t *st = NULL;
	rz_err_t err = { 0 };
	json_t *obj, *out = NULL, *t = NULL, *ng = NULL, *m = NULL;
	const rz_kind_t *tk = rz_kind_by_name("Tenant"), *nk = rz_kind_by_name("NodeGroup");
	const rz_kind_t *mk = rz_kind_by_name("Machine");
	const char *since = NULL;
	int64_t rev;

	rz_log_set_level(RZ_LOG_CRIT);
	snprintf(path, sizeof(path), "%s/rezus.db", tmp);
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_int_eq(rz_store_new(&st, db, bus, 100, &err), 0);
	obj = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "t", "spec", "clusterProvider",
	                "sim");
	ck_assert_int_eq(rz_store_create(st, tk, obj, NULL, &out, &err), 0);
	json_decref(obj);
	json_decref(out);
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:i, s:s}}", "metadata", "name", "cp", "tenant",
	                "t", "spec", "role", "controlplane", "count", 1, "providerClass", "sim");
	out = NULL;
	ck_assert_msg(rz_store_create(st, nk, obj, NULL, &out, &err) == 0, "%s", err.msg);
	json_decref(obj);
	json_decref(out);

#define GET(k, tn, n, o) (json_decref(o), o = NULL, rz_store_get(st, k, tn, n, &o, &err), o)
	/* nothing applied, no machine */
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(ready_of(GET(nk, "t", "cp", ng), &since),
	                 "False/NotAllReady/0 of 1 machines ready (0 exist)");
	ck_assert_str_eq(ready_of(GET(tk, NULL, "t", t), &since),
	                 "False/Pending/no apply has succeeded yet");

	/* applied; its machine is up and observed, the control plane healthy */
	obj = json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", "cp-0", "tenant", "t",
	                "spec", "nodeGroup", "cp");
	out = NULL;
	ck_assert_msg(rz_store_create(st, rz_kind_by_name("Machine"), obj, NULL, &out, &err) == 0,
	              "%s", err.msg);
	json_decref(obj);
	json_decref(out);
	rz_report_status(st, "Machine", "t", "cp-0", json_pack("{s:b}", "ready", 1));
	rz_report_status(st, "Tenant", NULL, "t",
	                 json_pack("{s:s, s:{s:b}}", "lastApplied", "2024-01-01T00:00:00Z",
	                           "controlPlane", "healthy", 1));
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(ready_of(GET(nk, "t", "cp", ng), &since),
	                 "True/AllReady/1 of 1 machines ready (1 exist)");
	snprintf(since0, sizeof(since0), "%s", since);
	ck_assert_str_eq(ready_of(GET(tk, NULL, "t", t), &since),
	                 "True/Ready/the machines and the control plane are ready");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(t, "status"), "phase")),
	                 "Ready");

	/* derived again a second later: nothing changed, nothing written */
	sleep(1);
	rev = rz_store_revision(st);
	rz_report_counts(st, "t", 0);
	ck_assert_int_eq(rz_store_revision(st), rev);
	ready_of(GET(nk, "t", "cp", ng), &since);
	ck_assert_str_eq(since, since0);

	/* the machine lost: both False, the transition time moves */
	rz_report_status(st, "Machine", "t", "cp-0",
	                 json_pack("{s:b, s:s}", "ready", 0, "stage", "Failed"));
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(ready_of(GET(nk, "t", "cp", ng), &since),
	                 "False/NotAllReady/0 of 1 machines ready (1 exist)");
	ck_assert_str_ne(since, since0);
	ck_assert_str_eq(ready_of(GET(tk, NULL, "t", t), &since),
	                 "False/Degraded/0 of 1 machines ready");

	/* the node group's Events tell it: Ready when it became so (not at its first
	 * derivation, which changed nothing), NotReady a Warning as a machine there is not */
	ck_assert_str_eq(ng_event(st, "cp", "Ready"), "Normal/1 of 1 machines ready (1 exist) (1)");
	ck_assert_str_eq(ng_event(st, "cp", "NotReady"),
	                 "Warning/0 of 1 machines ready (1 exist) (1)");
	ck_assert_str_eq(ng_event(st, "cp", "ScaledUp"), "");

	/* scaled up (kubectl scale, a patch): said so, and not ready while a machine is to
	 * come is no Warning */
	rz_report_status(st, "Machine", "t", "cp-0", json_pack("{s:b}", "ready", 1));
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(ng_event(st, "cp", "Ready"), "Normal/1 of 1 machines ready (1 exist) (2)");
	ck_assert_ptr_nonnull(GET(nk, "t", "cp", ng));
	json_object_set_new(json_object_get(ng, "spec"), "count", json_integer(2));
	out = NULL;
	ck_assert_msg(
	    rz_store_update(st, nk, "t", "cp", ng, 0, RZ_UPDATE_SPEC, NULL, &out, NULL, &err) == 0,
	    "%s", err.msg);
	json_decref(out);
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(ng_event(st, "cp", "ScaledUp"), "Normal/desired machines 2 (were 1) (1)");
	ck_assert_ptr_nonnull(
	    strstr(events_of(st, "cp"), "Normal NotReady 1 of 2 machines ready (1 exist)|"));

	/* an error that cleared is gone (a null removes the field), not an empty string */
	rz_report_status(st, "Machine", "t", "cp-0", json_pack("{s:s}", "lastError", "gone"));
	ck_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(GET(mk, "t", "cp-0", m), "status"), "lastError")),
	                 "gone");
	rz_report_status(st, "Machine", "t", "cp-0", json_pack("{s:n}", "lastError"));
	ck_assert_ptr_null(
	    json_object_get(json_object_get(GET(mk, "t", "cp-0", m), "status"), "lastError"));
	ck_assert(json_is_true(json_object_get(json_object_get(m, "status"), "ready")));
	/* the tenant's last run says why only when it failed */
	rz_report_run(st, "t", "run-1", "apply", "Failed", "tofu apply failed", 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(GET(tk, NULL, "t", t), "status"), "lastRun"),
	        "error")),
	    "tofu apply failed");
	rz_report_run(st, "t", "run-2", "apply", "Succeeded", "", 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(GET(tk, NULL, "t", t), "status"), "lastRun"),
	        "id")),
	    "run-2");
	ck_assert_ptr_null(
	    json_object_get(json_object_get(json_object_get(t, "status"), "lastRun"), "error"));

	/* back to 1 wanted, the machine ready, then rebooting or upgrading (as in an
	 * upgrade): planned, so the tenant stays Ready-or-Provisioning, never Degraded */
	ck_assert_ptr_nonnull(GET(nk, "t", "cp", ng));
	json_object_set_new(json_object_get(ng, "spec"), "count", json_integer(1));
	out = NULL;
	ck_assert_int_eq(
	    rz_store_update(st, nk, "t", "cp", ng, 0, RZ_UPDATE_SPEC, NULL, &out, NULL, &err), 0);
	json_decref(out);
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(GET(tk, NULL, "t", t), "status"), "phase")),
	                 "Ready");
	rz_report_status(st, "Machine", "t", "cp-0",
	                 json_pack("{s:b, s:s}", "ready", 0, "stage", "Rebooting"));
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(ready_of(GET(tk, NULL, "t", t), &since),
	                 "False/Provisioning/0 of 1 machines ready; 1 rebooting or upgrading, "
	                 "as told");
	rz_report_status(st, "Machine", "t", "cp-0",
	                 json_pack("{s:b, s:s}", "ready", 0, "stage", "Upgrading"));
	rz_report_status(st, "Tenant", NULL, "t",
	                 json_pack("{s:{s:b}}", "controlPlane", "healthy", 0));
	rz_report_counts(st, "t", 0);
	ck_assert_str_eq(ready_of(GET(tk, NULL, "t", t), &since),
	                 "False/Provisioning/0 of 1 machines ready; 1 rebooting or upgrading, "
	                 "as told");
#undef GET

	json_decref(t);
	json_decref(ng);
	json_decref(m);
	rz_store_free(st);
	rz_bus_free(bus);
	rz_db_close(db);
	rzt_rmrf(tmp);
	free(tmp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("phase");

	tcase_add_loop_test(tc, test_phase_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_messages);
	suite_add_tcase(s, tc);
	tc = tcase_create("machines");
	tcase_add_test(tc, test_machines_scoped);
	tcase_add_test(tc, test_inputs_stale);
	tcase_add_test(tc, test_ready_conditions);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
