/* core/upgrade/upgrade.c - running UpgradeRuns: prechecks, machines one at a time, gates. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/report/report.h"
#include "core/http/status.h"
#include "core/model/fields.h"
#include "core/model/states.h"
#include "core/store/events.h"
#include "core/upgrade/compat.h"
#include "core/upgrade/upgrade.h"

#define DEFAULT_POLL_MS 1000
#define GATE_GRACE_MS   60000 /* the gate's least time after the commands ended */

enum state {
	S_WAIT,     /* Pending: behind a run, or behind an older upgrade */
	S_COMMANDS, /* a step's commands are running */
	S_GATE,     /* waiting for the observer to see the machine healthy */
	S_DONE,
};

enum action { A_UPGRADE, A_ROLLBACK };

struct up {
	rz_upgrader_t *u;
	char tenant[64], name[64];
	char component[16]; /* talos | kubernetes */
	char target[32], from[32];
	char plugin[64];
	char trigger[16];
	bool dry;
	bool cancel;      /* stop before the next machine */
	json_t *machines; /* status.machines, the plan and each machine's step */
	size_t idx;       /* the machine being worked on */
	enum state state;
	enum action action;
	json_t *commands; /* the step's commands */
	size_t next_cmd;
	rz_observer_cmd_t *running;
	int64_t deadline_ms; /* the gate's, wall clock */
	char error[512];     /* why the step failed, for the rollback's message */
	struct up *next;
};

struct rz_upgrader {
	struct event_base *base;
	rz_store_t *store;
	rz_bus_t *bus;
	rz_plugins_t *plugins;
	rz_engine_t *engine;
	rz_observer_t *observer;
	rz_upgrader_opts_t o;
	uint64_t sub;
	struct event *tick;
	struct up *ups;
	bool stopping;
};

static void step(struct up *up);

/* ------------------------------------------------------------------ helpers */

static const char *str(const json_t *obj, const char *a, const char *b)
{
	const json_t *v = json_object_get(obj, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

/* A machine's step in the plan (-1 when it has none we know). */
static int step_of(const json_t *m)
{
	return rz_upgrade_step_of(str(m, "phase", NULL));
}

static void now_text(char *buf, size_t size)
{
	rz_clock_format(rz_clock_now_ms(), buf, size);
}

static void up_event(struct up *up, const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void up_event(struct up *up, const char *type, const char *reason, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rz_events_record(up->u->store, up->tenant, "UpgradeRun", up->name, type, reason, msg,
	                 "upgrade");
}

static struct up *find(rz_upgrader_t *u, const char *tenant, const char *name)
{
	for (struct up *up = u->ups; up != NULL; up = up->next) {
		if (strcmp(up->tenant, tenant) == 0 && strcmp(up->name, name) == 0) {
			return up;
		}
	}
	return NULL;
}

static void up_free(struct up *up)
{
	rz_upgrader_t *u = up->u;

	for (struct up **pp = &u->ups; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == up) {
			*pp = up->next;
			break;
		}
	}
	rz_observer_exec_cancel(u->observer, up->running);
	json_decref(up->machines);
	json_decref(up->commands);
	free(up);
}

/* The machine being worked on. */
static json_t *cur(struct up *up)
{
	return json_array_get(up->machines, up->idx);
}

static void set_step(struct up *up, json_t *m, rz_upgrade_step_t step, const char *error)
{
	char now[32];

	now_text(now, sizeof(now));
	json_object_set_new(m, "phase", json_string(rz_upgrade_step_name(step)));
	if (step == RZ_UPSTEP_UPGRADING) {
		json_object_set_new(m, "startedAt", json_string(now));
		json_object_del(m, "finishedAt");
		json_object_del(m, "error");
	} else if (step != RZ_UPSTEP_VERIFYING && step != RZ_UPSTEP_ROLLING_BACK) {
		json_object_set_new(m, "finishedAt", json_string(now));
	}
	if (error != NULL) {
		json_object_set_new(m, "error", json_string(error));
	}
	(void)up;
}

/* Persist the plan and the step: status.machines and current. */
static void save(struct up *up, const char *phase)
{
	json_t *m = cur(up);
	json_t *fields =
	    json_pack("{s:O, s:s}", "machines", up->machines, "current",
	              m != NULL && up->state != S_DONE ? str(m, "name", NULL) ?: "" : "");

	if (phase != NULL) {
		json_object_set_new(fields, "phase", json_string(phase));
	}
	rz_report_status(up->u->store, "UpgradeRun", up->tenant, up->name, fields);
}

/* ------------------------------------------------------------------ prechecks and plan */

static int role_rank(const json_t *m)
{
	return strcmp(str(m, "spec", "role") ?: "", "controlplane") == 0 ? 0 : 1;
}

static int plan_order(const void *a, const void *b)
{
	const json_t *ma = *(const json_t *const *)a, *mb = *(const json_t *const *)b;
	int ra = role_rank(ma), rb = role_rank(mb);

	return ra != rb
	           ? ra - rb
	           : strcmp(str(ma, "metadata", "name") ?: "", str(mb, "metadata", "name") ?: "");
}

/* Give each of machines without spec.role its node group's, as the cluster plugin and
 * the observer read a machine's role. */
static void fill_roles(json_t *machines, const json_t *groups)
{
	json_t *m;
	const json_t *g;
	size_t i, j;

	json_array_foreach(machines, i, m)
	{
		json_t *spec = json_object_get(m, "spec");
		if (!json_is_object(spec) || str(m, "spec", "role") != NULL) {
			continue;
		}
		json_array_foreach(groups, j, g)
		{
			const char *role = str(g, "spec", "role");
			if (role != NULL && strcmp(str(g, "metadata", "name") ?: "",
			                           str(m, "spec", "nodeGroup") ?: "") == 0) {
				json_object_set_new(spec, "role", json_string(role));
			}
		}
	}
}

/* The tenant's Machines in upgrade order: control planes first, then by name. */
static json_t *ordered_machines(rz_store_t *st, const char *tenant)
{
	json_t *all = rz_store_list_all(st, "Machine", tenant), *out = json_array();
	json_t *groups = rz_store_list_all(st, "NodeGroup", tenant);
	size_t n = json_array_size(all);
	json_t **v = calloc(n ? n : 1, sizeof(*v));

	fill_roles(all, groups);
	json_decref(groups);
	for (size_t i = 0; v != NULL && i < n; i++) {
		v[i] = json_array_get(all, i);
	}
	if (v != NULL) {
		qsort(v, n, sizeof(*v), plan_order);
		for (size_t i = 0; i < n; i++) {
			json_array_append(out, v[i]);
		}
	}
	free(v);
	json_decref(all);
	return out;
}

/* The version of component the tenant's cluster runs: what the last apply or upgrade
 * recorded in its status, else its spec's. */
static const char *running_version(const json_t *tenant, const char *component)
{
	const char *key =
	    strcmp(component, "kubernetes") == 0 ? "kubernetesVersion" : "talosVersion";

	return str(json_object_get(tenant, "status"), key, NULL) ?: str(tenant, "spec", key);
}

struct prechecks {
	json_t *list;       /* [{name, passed, message}] */
	const char *failed; /* the first that failed */
	char why[512];
};

static void check(struct prechecks *pc, const char *name, bool passed, const char *message)
{
	json_array_append_new(pc->list, json_pack("{s:s, s:b, s:s}", "name", name, "passed", passed,
	                                          "message", message ? message : ""));
	if (!passed && pc->failed == NULL) {
		pc->failed = name;
		snprintf(pc->why, sizeof(pc->why), "%s", message ? message : name);
	}
}

/* Every precheck of upgrading tenant's component to target. self: the UpgradeRun being
 * checked (not "another upgrade"), or NULL. machines: ordered. */
static void run_prechecks(rz_upgrader_t *u, const json_t *tenant, const char *component,
                          const char *target, const char *self, const json_t *machines,
                          struct prechecks *pc)
{
	const char *name = str(tenant, "metadata", "name") ?: "";
	const char *plugin = str(tenant, "spec", "clusterProvider") ?: "";
	const char *from = running_version(tenant, component);
	char why[512];
	const char *failed;
	json_t *other, *m;
	size_t i, notready = 0;

	pc->list = json_array();
	pc->failed = NULL;
	pc->why[0] = '\0';
	snprintf(why, sizeof(why), "the cluster plugin '%s' %s", plugin,
	         rz_plugins_upgrades(u->plugins, plugin)
	             ? "upgrades its clusters"
	             : "is not loaded or does not offer upgrades");
	check(pc, "Supported", rz_plugins_upgrades(u->plugins, plugin), why);

	failed = rz_compat_move(component, from, target, why, sizeof(why));
	if (failed == NULL || strcmp(failed, "NoDowngrade") != 0) {
		check(pc, "NoDowngrade", true, "");
	} else {
		check(pc, "NoDowngrade", false, why);
	}
	if (failed == NULL || strcmp(failed, "OneMinorAtATime") != 0) {
		check(pc, "OneMinorAtATime", true, "");
	} else {
		check(pc, "OneMinorAtATime", false, why);
	}
	if (strcmp(component, "talos") == 0) {
		const char *k8s = running_version(tenant, "kubernetes");
		bool ok = rz_compat_check(target, k8s, why, sizeof(why));
		check(pc, "Compatible", ok, ok ? "" : why);
	} else {
		const char *talos = running_version(tenant, "talos");
		bool ok = rz_compat_check(talos, target, why, sizeof(why));
		check(pc, "Compatible", ok, ok ? "" : why);
	}

	why[0] = '\0';
	json_array_foreach(machines, i, m)
	{
		const json_t *st = json_object_get(m, "status");
		if (strcmp(str(st, "stage", NULL) ?: "", "Running") != 0 ||
		    !json_is_true(json_object_get(st, "ready"))) {
			size_t len = strlen(why);
			if (notready++ < 8 && len + 80 < sizeof(why)) {
				snprintf(why + len, sizeof(why) - len, "%s%s is %s%s",
				         len ? "; " : "", str(m, "metadata", "name") ?: "?",
				         str(st, "stage", NULL) ?: "not observed",
				         json_is_true(json_object_get(st, "ready"))
				             ? ""
				             : ", not ready");
			}
		}
	}
	if (json_array_size(machines) == 0) {
		check(pc, "MachinesReady", false, "the tenant has no machines to upgrade");
	} else if (notready > 0) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%zu of %zu machines are not Running and ready: %s",
		         notready, json_array_size(machines), why);
		check(pc, "MachinesReady", false, msg);
	} else {
		check(pc, "MachinesReady", true, "");
	}

	other = rz_report_active_upgrade(u->store, name);
	if (other != NULL &&
	    (self == NULL || strcmp(str(other, "metadata", "name") ?: "", self) != 0)) {
		snprintf(why, sizeof(why), "upgrade %s is in progress",
		         str(other, "metadata", "name"));
		check(pc, "NothingInProgress", false, why);
	} else if (rz_engine_busy(u->engine, name, why, sizeof(why))) {
		check(pc, "NothingInProgress", false, why);
	} else {
		check(pc, "NothingInProgress", true, "");
	}
	json_decref(other);
}

/* The plan: the machines in order, each Pending from its version to the target, both
 * written as the API writes versions (a Machine reports Talos' "v1.12.0": "1.12.0"). */
static json_t *make_plan(const json_t *machines, const char *component, const char *from,
                         const char *target)
{
	json_t *plan = json_array(), *m;
	size_t i;

	json_array_foreach(machines, i, m)
	{
		const json_t *st = json_object_get(m, "status");
		const char *was = strcmp(component, "talos") == 0
		                      ? str(st, "talosVersion", NULL)
		                      : str(st, "kubernetesVersion", NULL);
		json_array_append_new(plan, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "name",
		                                      str(m, "metadata", "name") ?: "", "role",
		                                      str(m, "spec", "role") ?: "", "address",
		                                      str(m, "spec", "address") ?: "", "from",
		                                      rz_version_bare(was ? was : from), "to",
		                                      rz_version_bare(target), "phase",
		                                      rz_upgrade_step_name(RZ_UPSTEP_PENDING)));
	}
	return plan;
}

/* ------------------------------------------------------------------ admission */

static void cause(json_t *causes, const char *field, const char *type, const char *check,
                  const char *why)
{
	rz_fields_cause(causes, field, type, "precheck %s: %s", check, why);
}

void rz_upgrader_admit(void *arg, const rz_kind_t *k, const json_t *obj, const json_t *old,
                       json_t *causes)
{
	rz_upgrader_t *u = arg;
	json_t *tenant = NULL, *machines;
	rz_err_t err = { 0 };

	if (strcmp(k->kind, "UpgradeRun") == 0 && old == NULL) {
		const char *tname = str(obj, "metadata", "tenant") ?: "";
		struct prechecks pc;
		json_t *c;
		size_t i;

		if (json_is_true(json_object_get(json_object_get(obj, "spec"), "dryRun")) ||
		    rz_store_get(u->store, rz_kind_by_name("Tenant"), NULL, tname, &tenant, &err) !=
		        0) {
			return; /* a dry run reports; a missing tenant is the store's 404 */
		}
		machines = ordered_machines(u->store, tname);
		run_prechecks(u, tenant, str(obj, "spec", "component") ?: "",
		              str(obj, "spec", "targetVersion") ?: "", NULL, machines, &pc);
		json_array_foreach(pc.list, i, c)
		{
			const char *name = str(c, "name", NULL);
			if (json_is_true(json_object_get(c, "passed"))) {
				continue;
			}
			cause(causes,
			      strcmp(name, "Supported") == 0 ? "spec.component"
			      : strcmp(name, "MachinesReady") == 0 ||
			              strcmp(name, "NothingInProgress") == 0
			          ? "metadata.tenant"
			          : "spec.targetVersion",
			      strcmp(name, "MachinesReady") == 0 ||
			              strcmp(name, "NothingInProgress") == 0
			          ? RZ_CAUSE_FORBIDDEN
			          : RZ_CAUSE_INVALID,
			      name, str(c, "message", NULL));
		}
		json_decref(pc.list);
		json_decref(machines);
		json_decref(tenant);
		return;
	}
	if (strcmp(k->kind, "Tenant") == 0 && old != NULL) {
		static const char *const components[] = { "talos", "kubernetes" };
		const char *tname = str(obj, "metadata", "name") ?: "";
		const json_t *ostatus = json_object_get(old, "status");
		json_t *active;
		bool moved = false;

		for (size_t i = 0; i < 2; i++) {
			char key[32];
			snprintf(key, sizeof(key), "%sVersion", components[i]);
			moved |=
			    strcmp(str(obj, "spec", key) ?: "", str(old, "spec", key) ?: "") != 0;
		}
		if (!moved) {
			return; /* most writes: no version changes, nothing to read */
		}
		machines = rz_store_list_all(u->store, "Machine", tname);
		if (json_array_size(machines) == 0) {
			json_decref(machines);
			return; /* nothing runs yet: new machines boot what the spec says */
		}
		json_decref(machines);
		active = rz_report_active_upgrade(u->store, tname);
		for (size_t i = 0; i < 2; i++) {
			char key[32], field[48], why[256];
			const char *check_name, *to, *from;
			snprintf(key, sizeof(key), "%sVersion", components[i]);
			snprintf(field, sizeof(field), "spec.%s", key);
			to = str(obj, "spec", key);
			from = str(ostatus, key, NULL);
			if (to == NULL || from == NULL ||
			    strcmp(to, str(old, "spec", key) ?: "") == 0) {
				continue; /* unchanged, or the cluster's version not known yet */
			}
			if (active != NULL) {
				snprintf(why, sizeof(why),
				         "upgrade %s is in progress; change %s after it",
				         str(active, "metadata", "name"), field);
				cause(causes, field, RZ_CAUSE_FORBIDDEN, "NothingInProgress", why);
				continue;
			}
			if (strcmp(to, from) == 0) {
				continue; /* back to what runs: nothing to upgrade */
			}
			if ((check_name = rz_compat_move(components[i], from, to, why,
			                                 sizeof(why))) != NULL) {
				cause(causes, field, RZ_CAUSE_INVALID, check_name, why);
			} else if (i == 0 &&
			           !rz_compat_check(to,
			                            str(ostatus, "kubernetesVersion", NULL)
			                                ?: str(obj, "spec", "kubernetesVersion"),
			                            why, sizeof(why))) {
				cause(causes, field, RZ_CAUSE_INVALID, "Compatible", why);
			} else if (i == 1 && !rz_compat_check(str(obj, "spec", "talosVersion"), to,
			                                      why, sizeof(why))) {
				cause(causes, field, RZ_CAUSE_INVALID, "Compatible", why);
			}
		}
		json_decref(active);
	}
}

/* ------------------------------------------------------------------ ending */

/* Set the tenant's version of up's component to version: status (what runs) then, when
 * asked, spec (what is wanted). */
static void set_tenant_version(struct up *up, const char *version, bool status, bool spec)
{
	rz_store_t *st = up->u->store;
	const char *key =
	    strcmp(up->component, "kubernetes") == 0 ? "kubernetesVersion" : "talosVersion";
	json_t *t = NULL, *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;

	if (status) {
		rz_report_status(st, "Tenant", NULL, up->tenant, json_pack("{s:s}", key, version));
	}
	if (!spec || rz_store_get(st, rz_kind_by_name("Tenant"), NULL, up->tenant, &t, &err) != 0) {
		return;
	}
	if (strcmp(str(t, "spec", key) ?: "", version) != 0 &&
	    json_object_get(json_object_get(t, "metadata"), "deletionTimestamp") == NULL) {
		json_object_set_new(json_object_get(t, "spec"), key, json_string(version));
		if (rz_store_update(st, rz_kind_by_name("Tenant"), NULL, up->tenant, t, 0,
		                    RZ_UPDATE_SPEC, NULL, &out, &gone, &err) != 0) {
			rz_logkv(RZ_LOG_ERR, "upgrade", "cannot set the tenant's version", "tenant",
			         up->tenant, "upgrade", up->name, "error", err.msg, NULL);
		}
	}
	json_decref(out);
	json_decref(t);
}

/* The UpgradeRun ends in phase, in one status write (the engine releases the tenant's runs
 * when it sees it). */
static void finish(struct up *up, rz_upgrade_phase_t end, const char *message)
{
	const char *phase = rz_upgrade_phase_name(end);
	char now[32];
	bool ok = end == RZ_UPG_SUCCEEDED;

	up->state = S_DONE;
	now_text(now, sizeof(now));
	if (!up->dry && ok) {
		set_tenant_version(up, up->target, true, true);
	} else if (!up->dry && strcmp(up->trigger, "spec") == 0) {
		/* the change that asked for it did not happen: the spec says what runs again */
		json_t *t = NULL;
		rz_err_t err = { 0 };
		if (up->from[0] == '\0' && rz_store_get(up->u->store, rz_kind_by_name("Tenant"),
		                                        NULL, up->tenant, &t, &err) == 0) {
			snprintf(up->from, sizeof(up->from), "%s",
			         str(json_object_get(t, "status"),
			             strcmp(up->component, "kubernetes") == 0 ? "kubernetesVersion"
			                                                      : "talosVersion",
			             NULL)
			             ?: "");
		}
		json_decref(t);
		if (up->from[0] != '\0') {
			set_tenant_version(up, up->from, false, true);
		}
	}
	/* machines is NULL for an upgrade that ends before its plan is made (canceled while
	 * it waited): json_pack's "O" would fail on it and no status would be written. */
	rz_report_status(up->u->store, "UpgradeRun", up->tenant, up->name,
	                 json_pack("{s:s, s:O*, s:s, s:s, s:s}", "phase", phase, "machines",
	                           up->machines, "current", "", "finishedAt", now, "message",
	                           message ? message : ""));
	if (!up->dry) {
		static const struct {
			rz_upgrade_phase_t end;
			const char *type, *reason;
		} reasons[] = {
			{ RZ_UPG_SUCCEEDED, "Normal", "UpgradeSucceeded" },
			{ RZ_UPG_FAILED, "Warning", "UpgradeFailed" },
			{ RZ_UPG_CANCELED, "Normal", "UpgradeCanceled" },
			{ RZ_UPG_ROLLED_BACK, "Warning", "UpgradeRolledBack" },
		};
		for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
			if (end == reasons[i].end) {
				up_event(up, reasons[i].type, reasons[i].reason, "%s %s → %s: %s",
				         up->component, up->from, up->target,
				         message && message[0] ? message : phase);
			}
		}
	}
	rz_logkv(ok ? RZ_LOG_INFO : RZ_LOG_WARNING, "upgrade", "upgrade ended", "tenant",
	         up->tenant, "upgrade", up->name, "phase", phase, "message", message ? message : "",
	         NULL);
	up_free(up);
}

/* ------------------------------------------------------------------ commands */

static void run_commands(struct up *up);

static void command_done(void *arg, int status, bool timed_out, const char *out, const char *err)
{
	struct up *up = arg;
	json_t *c = json_array_get(up->commands, up->next_cmd - 1);

	(void)out;
	up->running = NULL;
	if (status != 0 || timed_out) {
		const char *tail = err;
		size_t n = strlen(err);
		while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' ')) {
			n--;
		}
		tail = n > 300 ? err + n - 300 : err;
		snprintf(up->error, sizeof(up->error), "%s %s %s: %.*s",
		         str(c, "tool", NULL) ?: "command", str(c, "id", NULL) ?: "",
		         timed_out ? "timed out" : "failed", (int)(n - (size_t)(tail - err)), tail);
		json_decref(up->commands);
		up->commands = NULL;
		step(up); /* the step failed */
		return;
	}
	run_commands(up);
}

/* Run the step's next command; when none is left, go on. */
static void run_commands(struct up *up)
{
	rz_upgrader_t *u = up->u;
	rz_err_t err = { 0 };

	while (up->commands != NULL && up->next_cmd < json_array_size(up->commands)) {
		json_t *c = json_array_get(up->commands, up->next_cmd++);
		if (!json_is_string(json_object_get(c, "tool"))) {
			continue; /* nothing runs: a simulated cluster */
		}
		if (rz_observer_exec(u->observer, up->tenant, c, command_done, up, &up->running,
		                     &err) != 0) {
			snprintf(up->error, sizeof(up->error), "%s %s cannot start: %s",
			         str(c, "tool", NULL), str(c, "id", NULL) ?: "", err.msg);
			json_decref(up->commands);
			up->commands = NULL;
			step(up);
			return;
		}
		return; /* command_done goes on */
	}
	json_decref(up->commands);
	up->commands = NULL;
	up->error[0] = '\0';
	step(up);
}

/* Ask the plugin for the commands of the current step and start them. */
static void start_commands(struct up *up, enum action action)
{
	rz_upgrader_t *u = up->u;
	json_t *tenant = NULL, *ctx, *cmds = NULL;
	rz_err_t err = { 0 };

	up->action = action;
	up->state = S_COMMANDS;
	up->error[0] = '\0';
	if (rz_store_get(u->store, rz_kind_by_name("Tenant"), NULL, up->tenant, &tenant, &err) !=
	    0) {
		snprintf(up->error, sizeof(up->error), "the tenant is gone: %s", err.msg);
		step(up);
		return;
	}
	{
		json_t *m = NULL;
		const char *mname = str(cur(up), "name", NULL) ?: "";
		rz_store_get(u->store, rz_kind_by_name("Machine"), up->tenant, mname, &m, &err);
		ctx = json_pack("{s:o, s:o, s:o, s:s, s:s, s:s, s:s, s:o, s:I}", "tenant", tenant,
		                "machines", rz_store_list_all(u->store, "Machine", up->tenant),
		                "nodeGroups", rz_store_list_all(u->store, "NodeGroup", up->tenant),
		                "action", action == A_UPGRADE ? "upgrade" : "rollback", "component",
		                up->component, "fromVersion", up->from, "targetVersion", up->target,
		                "machine", m ? m : json_null(), "timeout",
		                (json_int_t)u->o.machine_timeout_ms);
	}
	if (rz_plugins_upgrade_commands(u->plugins, up->plugin, ctx, &cmds, &err) != 0) {
		snprintf(up->error, sizeof(up->error), "%s", err.msg);
		json_decref(ctx);
		step(up);
		return;
	}
	json_decref(ctx);
	json_decref(up->commands);
	up->commands = cmds;
	up->next_cmd = 0;
	run_commands(up);
}

/* ------------------------------------------------------------------ the machine's gate */

/* Whether the current machine is healthy at the target; why it is not in why. */
static bool gate_passed(struct up *up, char *why, size_t size)
{
	rz_store_t *st = up->u->store;
	json_t *m = NULL, *t = NULL;
	rz_err_t err = { 0 };
	const char *mname = str(cur(up), "name", NULL) ?: "";
	bool ok = false;

	if (strcmp(up->component, "kubernetes") == 0) {
		json_t *all = rz_store_list_all(st, "Machine", up->tenant), *x, *pm;
		size_t i, j, behind = 0;
		why[0] = '\0';
		json_array_foreach(up->machines, j, pm)
		{
			json_array_foreach(all, i, x)
			{
				const json_t *xs = json_object_get(x, "status");
				if (strcmp(str(x, "metadata", "name") ?: "",
				           str(pm, "name", NULL) ?: "") != 0) {
					continue;
				}
				if (rz_version_same(str(xs, "kubernetesVersion", NULL),
				                    up->target) &&
				    !json_is_false(json_object_get(xs, "nodeReady")) &&
				    json_is_true(json_object_get(xs, "ready"))) {
					if (step_of(pm) != RZ_UPSTEP_SUCCEEDED) {
						set_step(up, pm, RZ_UPSTEP_SUCCEEDED, NULL);
					}
				} else if (behind++ == 0) {
					snprintf(why, size, "%s reports Kubernetes %s%s",
					         str(x, "metadata", "name"),
					         str(xs, "kubernetesVersion", NULL) ?: "(unknown)",
					         json_is_false(json_object_get(xs, "nodeReady"))
					             ? ", node not Ready"
					             : "");
				}
			}
		}
		json_decref(all);
		return behind == 0;
	}
	if (rz_store_get(st, rz_kind_by_name("Machine"), up->tenant, mname, &m, &err) != 0) {
		snprintf(why, size, "machine %s is gone", mname);
		return false;
	}
	{
		const json_t *s = json_object_get(m, "status");
		const char *stage = str(s, "stage", NULL) ?: "not observed";
		const char *version = str(s, "talosVersion", NULL) ?: "(unknown)";
		bool ready = json_is_true(json_object_get(s, "ready"));
		bool node = !json_is_false(json_object_get(s, "nodeReady"));
		const char *role = str(cur(up), "role", NULL); /* the plan's: from the node group */
		bool cp = strcmp(role && role[0] ? role : str(m, "spec", "role") ?: "",
		                 "controlplane") == 0;
		bool etcd = true;

		if (cp &&
		    rz_store_get(st, rz_kind_by_name("Tenant"), NULL, up->tenant, &t, &err) == 0) {
			etcd = json_is_true(json_object_get(
			    json_object_get(json_object_get(t, "status"), "controlPlane"),
			    "healthy"));
		}
		ok = strcmp(stage, "Running") == 0 && ready && node && etcd &&
		     rz_version_same(version, up->target);
		snprintf(why, size, "machine %s is %s, %sready, running Talos %s%s%s", mname, stage,
		         ready ? "" : "not ", version, node ? "" : ", its node not Ready",
		         etcd ? "" : ", the control plane (etcd) not healthy");
	}
	json_decref(m);
	json_decref(t);
	return ok;
}

/* ------------------------------------------------------------------ the steps */

static void next_machine(struct up *up);

/* The current step ended (its commands done, failed, or the gate decided): go on. */
static void step(struct up *up)
{
	json_t *m = cur(up), *x;
	char why[700];
	size_t i;

	if (up->state == S_COMMANDS && up->action == A_ROLLBACK) {
		bool ok = up->error[0] == '\0';
		snprintf(why, sizeof(why), "%s; %s", str(m, "error", NULL) ?: "the upgrade failed",
		         ok ? "rolled back" : up->error);
		set_step(up, m, ok ? RZ_UPSTEP_ROLLED_BACK : RZ_UPSTEP_FAILED, NULL);
		finish(up, ok ? RZ_UPG_ROLLED_BACK : RZ_UPG_FAILED, why);
		return;
	}
	if (up->state == S_COMMANDS && up->error[0] != '\0') {
		snprintf(why, sizeof(why), "%s", up->error);
		goto failed;
	}
	if (up->state == S_COMMANDS) { /* the commands did their part: the gate decides */
		/* at least a while after the commands, however long they took: the observer
		 * must get to see the machine */
		int64_t grace = up->u->o.machine_timeout_ms < GATE_GRACE_MS
		                    ? up->u->o.machine_timeout_ms
		                    : GATE_GRACE_MS;
		if (up->deadline_ms < rz_clock_now_ms() + grace) {
			up->deadline_ms = rz_clock_now_ms() + grace;
		}
		up->state = S_GATE;
		set_step(up, m, RZ_UPSTEP_VERIFYING, NULL);
		save(up, NULL);
		rz_observer_kick(up->u->observer, up->tenant);
		return;
	}
	if (up->state == S_GATE) {
		if (gate_passed(up, why, sizeof(why))) {
			set_step(up, m, RZ_UPSTEP_SUCCEEDED, NULL);
			if (strcmp(up->component, "talos") == 0) {
				up_event(up, "Normal", "MachineUpgraded",
				         "machine %s runs Talos %s", str(m, "name", NULL),
				         up->target);
			}
			save(up, NULL);
			next_machine(up);
			return;
		}
		if (rz_clock_now_ms() < up->deadline_ms) {
			return; /* the next tick looks again */
		}
		{
			char tmp[600];
			memcpy(tmp, why, sizeof(tmp) - 1);
			tmp[sizeof(tmp) - 1] = '\0';
			snprintf(why, sizeof(why), "health gate: not healthy within %llds: %s",
			         (long long)(up->u->o.machine_timeout_ms / 1000), tmp);
		}
		goto failed;
	}
	return;

failed:
	if (strcmp(up->component, "talos") == 0) {
		set_step(up, m, RZ_UPSTEP_ROLLING_BACK, why);
		save(up, NULL);
		up_event(up, "Warning", "MachineUpgradeFailed", "machine %s: %s; rolling back",
		         str(m, "name", NULL), why);
		start_commands(up, A_ROLLBACK);
		return;
	}
	/* Kubernetes: one step for every machine; those its gate saw at the target stay
	 * Succeeded */
	json_array_foreach(up->machines, i, x)
	{
		if (step_of(x) != RZ_UPSTEP_SUCCEEDED) {
			set_step(up, x, RZ_UPSTEP_FAILED, why);
		}
	}
	finish(up, RZ_UPG_FAILED, why); /* Kubernetes has no rollback: talosctl upgrade-k8s again */
}

/* Start the next machine's upgrade, or end. */
static void next_machine(struct up *up)
{
	json_t *m;
	size_t i;

	if (strcmp(up->component, "kubernetes") == 0) {
		/* once, through the first control plane; the gate waits for every node */
		bool done = true, started = false;
		json_array_foreach(up->machines, i, m)
		{
			done = done && step_of(m) == RZ_UPSTEP_SUCCEEDED;
			started = started || step_of(m) != RZ_UPSTEP_PENDING;
		}
		if (done) {
			finish(up, RZ_UPG_SUCCEEDED, "");
			return;
		}
		if (up->cancel && !started) {
			finish(up, RZ_UPG_CANCELED,
			       "canceled before the Kubernetes upgrade started");
			return;
		}
		up->idx = 0;
		json_array_foreach(up->machines, i, m)
		{
			set_step(up, m, RZ_UPSTEP_UPGRADING, NULL);
		}
	} else {
		for (i = 0; i < json_array_size(up->machines); i++) {
			int p = step_of(json_array_get(up->machines, i));
			if (p != RZ_UPSTEP_SUCCEEDED && p != RZ_UPSTEP_SKIPPED) {
				break;
			}
		}
		if (i == json_array_size(up->machines)) {
			finish(up, RZ_UPG_SUCCEEDED, "");
			return;
		}
		/* a machine resumed after a restart (not Pending) finishes first, as it would
		 * have without the restart */
		if (up->cancel && step_of(json_array_get(up->machines, i)) == RZ_UPSTEP_PENDING) {
			finish(up, RZ_UPG_CANCELED, "canceled between machines");
			return;
		}
		up->idx = i;
		set_step(up, cur(up), RZ_UPSTEP_UPGRADING, NULL);
	}
	up->deadline_ms = rz_clock_now_ms() + up->u->o.machine_timeout_ms;
	up->state = S_COMMANDS;
	save(up, rz_upgrade_phase_name(RZ_UPG_UPGRADING));
	rz_logkv(RZ_LOG_INFO, "upgrade", "upgrading", "tenant", up->tenant, "upgrade", up->name,
	         "machine", str(cur(up), "name", NULL), "to", up->target, NULL);
	start_commands(up, A_UPGRADE);
}

/* A Pending upgrade: start it when it is its tenant's turn and no run is in progress. */
static void try_start(struct up *up)
{
	rz_upgrader_t *u = up->u;
	json_t *tenant = NULL, *machines, *first;
	struct prechecks pc;
	rz_err_t err = { 0 };
	char why[256], now[32];

	if (rz_store_get(u->store, rz_kind_by_name("Tenant"), NULL, up->tenant, &tenant, &err) !=
	    0) {
		up_free(up);
		return;
	}
	if (json_object_get(json_object_get(tenant, "metadata"), "deletionTimestamp") != NULL) {
		json_decref(tenant);
		finish(up, RZ_UPG_CANCELED, "the tenant is being deleted");
		return;
	}
	if (!up->dry) {
		first = rz_report_active_upgrade(u->store, up->tenant);
		bool turn =
		    first == NULL || strcmp(str(first, "metadata", "name") ?: "", up->name) == 0;
		json_decref(first);
		if (!turn || rz_engine_busy(u->engine, up->tenant, why, sizeof(why))) {
			json_decref(tenant);
			return; /* the next tick tries again */
		}
	}
	snprintf(up->plugin, sizeof(up->plugin), "%s",
	         str(tenant, "spec", "clusterProvider") ?: "");
	snprintf(up->from, sizeof(up->from), "%s", running_version(tenant, up->component) ?: "");
	now_text(now, sizeof(now));
	rz_report_status(u->store, "UpgradeRun", up->tenant, up->name,
	                 json_pack("{s:s, s:s, s:s}", "phase",
	                           rz_upgrade_phase_name(RZ_UPG_PRECHECKING), "startedAt", now,
	                           "fromVersion", up->from));
	machines = ordered_machines(u->store, up->tenant);
	run_prechecks(u, tenant, up->component, up->target, up->name, machines, &pc);
	json_decref(up->machines);
	up->machines = make_plan(machines, up->component, up->from, up->target);
	json_decref(machines);
	json_decref(tenant);
	rz_report_status(u->store, "UpgradeRun", up->tenant, up->name,
	                 json_pack("{s:o, s:O}", "prechecks", pc.list, "machines", up->machines));
	if (up->dry) {
		char msg[700];
		snprintf(msg, sizeof(msg), "dry run: %s%s", pc.failed ? "precheck failed: " : "",
		         pc.failed ? pc.why : "every precheck passed; nothing was changed");
		finish(up, pc.failed ? RZ_UPG_FAILED : RZ_UPG_SUCCEEDED, msg);
		return;
	}
	if (pc.failed != NULL) {
		char msg[700];
		snprintf(msg, sizeof(msg), "precheck %s failed: %s", pc.failed, pc.why);
		finish(up, RZ_UPG_FAILED, msg);
		return;
	}
	up_event(up, "Normal", "UpgradeStarted", "%s %s → %s, %zu machines, control planes first",
	         up->component, up->from, up->target, json_array_size(up->machines));
	next_machine(up);
}

/* ------------------------------------------------------------------ tracking */

/* Track the UpgradeRun obj (new, or left unfinished by the last daemon). */
static void adopt(rz_upgrader_t *u, const json_t *obj, bool restart)
{
	const json_t *spec = json_object_get(obj, "spec"), *status = json_object_get(obj, "status");
	const char *tenant = str(obj, "metadata", "tenant"), *name = str(obj, "metadata", "name");
	int phase = rz_upgrade_phase_of(str(status, "phase", NULL));
	struct up *up;
	size_t i;
	json_t *m;

	if (tenant == NULL || name == NULL || rz_upgrade_phase_over(phase) ||
	    find(u, tenant, name) != NULL || (up = calloc(1, sizeof(*up))) == NULL) {
		return;
	}
	up->u = u;
	snprintf(up->tenant, sizeof(up->tenant), "%s", tenant);
	snprintf(up->name, sizeof(up->name), "%s", name);
	snprintf(up->component, sizeof(up->component), "%s",
	         str(spec, "component", NULL) ?: "talos");
	snprintf(up->target, sizeof(up->target), "%s", str(spec, "targetVersion", NULL) ?: "");
	snprintf(up->trigger, sizeof(up->trigger), "%s", str(spec, "trigger", NULL) ?: "manual");
	snprintf(up->from, sizeof(up->from), "%s", str(status, "fromVersion", NULL) ?: "");
	up->dry = json_is_true(json_object_get(spec, "dryRun"));
	up->cancel = json_is_true(json_object_get(status, "cancelRequested"));
	up->state = S_WAIT;
	up->next = u->ups;
	u->ups = up;
	if (!restart || phase != RZ_UPG_UPGRADING) {
		return; /* Pending, or Prechecking again from the start: the tick starts it */
	}
	/* resume at the machine it was on */
	{
		json_t *tenant_obj = NULL;
		rz_err_t err = { 0 };
		if (rz_store_get(u->store, rz_kind_by_name("Tenant"), NULL, tenant, &tenant_obj,
		                 &err) == 0) {
			snprintf(up->plugin, sizeof(up->plugin), "%s",
			         str(tenant_obj, "spec", "clusterProvider") ?: "");
		}
		json_decref(tenant_obj);
	}
	up->machines = json_deep_copy(json_object_get(status, "machines"));
	if (!json_is_array(up->machines) || json_array_size(up->machines) == 0 ||
	    !rz_plugins_upgrades(u->plugins, up->plugin)) {
		json_decref(up->machines);
		up->machines = json_array();
		finish(up, RZ_UPG_FAILED,
		       rz_plugins_upgrades(u->plugins, up->plugin)
		           ? "the daemon restarted and the upgrade's progress was lost"
		           : "the daemon restarted and the cluster plugin is not loaded "
		             "or does not offer upgrades");
		return;
	}
	json_array_foreach(up->machines, i, m)
	{
		int p = step_of(m);
		if (p == RZ_UPSTEP_UPGRADING || p == RZ_UPSTEP_VERIFYING ||
		    p == RZ_UPSTEP_ROLLING_BACK) {
			break;
		}
	}
	if (i == json_array_size(up->machines)) {
		up_event(up, "Normal", "UpgradeResumed", "resumed after a daemon restart");
		next_machine(up);
		return;
	}
	up->idx = i;
	m = cur(up);
	{
		const char *p = str(m, "phase", NULL);
		char why[512];
		up_event(up, "Normal", "UpgradeResumed",
		         "resumed at machine %s (%s) after a daemon restart", str(m, "name", NULL),
		         p);
		if (step_of(m) == RZ_UPSTEP_ROLLING_BACK) {
			start_commands(up, A_ROLLBACK);
		} else if (strcmp(up->component, "talos") == 0 &&
		           gate_passed(up, why, sizeof(why))) {
			up->state = S_GATE; /* it made it while the daemon was away */
			step(up);
		} else {
			next_machine(up); /* its commands again, with a fresh timeout */
		}
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	rz_upgrader_t *u = arg;
	struct up *up, *next;

	(void)fd;
	(void)what;
	for (up = u->ups; up != NULL; up = next) {
		next = up->next; /* up may end here */
		if (up->state == S_WAIT) {
			try_start(up);
		} else if (up->state == S_GATE) {
			step(up);
		}
	}
}

static void on_event(const rz_event_t *ev, void *arg)
{
	rz_upgrader_t *u = arg;
	const char *k = ev->kind->kind;
	struct up *up, *next;

	if (strcmp(k, "UpgradeRun") == 0 && ev->type == RZ_EV_ADDED) {
		adopt(u, ev->object, false); /* the next tick starts it */
	} else if (strcmp(k, "UpgradeRun") == 0 && ev->type == RZ_EV_DELETED &&
	           (up = find(u, ev->tenant, ev->name)) != NULL) {
		rz_logkv(RZ_LOG_NOTICE, "upgrade", "upgrade deleted while in progress: stopped",
		         "tenant", up->tenant, "upgrade", up->name, NULL);
		up_free(up);
	} else if (strcmp(k, "Tenant") == 0 &&
	           (ev->type == RZ_EV_DELETED ||
	            json_object_get(json_object_get(ev->object, "metadata"),
	                            "deletionTimestamp"))) {
		for (up = u->ups; up != NULL; up = next) {
			next = up->next;
			if (strcmp(up->tenant, ev->name) == 0) {
				rz_observer_exec_cancel(u->observer, up->running);
				up->running = NULL;
				up->state =
				    S_WAIT; /* the next tick ends it: the tenant is being deleted */
			}
		}
	}
}

/* ------------------------------------------------------------------ cancel */

static void h_cancel(rz_req_t *req, void *ctx)
{
	rz_upgrader_t *u = ctx;
	const char *tenant = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");
	struct up *up = find(u, tenant, name);
	json_t *obj = NULL;
	rz_err_t err = { 0 };

	if (up == NULL) {
		if (rz_store_get(u->store, rz_kind_by_name("UpgradeRun"), tenant, name, &obj,
		                 &err) != 0) {
			rz_reply_error(req, 404, NULL, "upgrades \"%s\" not found", name);
		} else {
			rz_reply_error(req, 409, NULL, "upgrade %s already ended (%s)", name,
			               str(obj, "status", "phase") ?: "?");
		}
		json_decref(obj);
		return;
	}
	if (up->state == S_WAIT) {
		rz_reply_status(req, rz_status_new(200, "", "upgrade canceled"));
		finish(up, RZ_UPG_CANCELED, "canceled before it started");
		return;
	}
	up->cancel = true;
	rz_report_status(u->store, "UpgradeRun", up->tenant, up->name,
	                 json_pack("{s:b}", "cancelRequested", 1));
	rz_reply_status(req, rz_status_new(200, "",
	                                   "cancel requested: the upgrade stops before its next "
	                                   "machine"));
}

/* For the OpenAPI document (core/api/openapi.c). */
static const int cancel_errors[] = { 404, 409, 0 };
static const rz_route_doc_t cancel_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "cancelUpgradeRun",
	  .summary = "cancel an upgrade: a waiting one at once, a running one before its next "
	             "machine",
	  .response = "Status",
	  .errors = cancel_errors },
	{ 0 },
};

static const rz_route_t upgrade_routes[] = {
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/tenants/{tenant}/upgrades/{name}/cancel",
	  .fn = h_cancel,
	  .role = RZ_ROLE_EDIT,
	  .kind = "UpgradeRun",
	  .verb = "cancel",
	  .doc = cancel_doc },
};

int rz_upgrader_routes(rz_upgrader_t *u, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(upgrade_routes), u, err);
}

/* ------------------------------------------------------------------ module */

int rz_upgrader_new(rz_upgrader_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                    rz_plugins_t *plugins, rz_engine_t *engine, rz_observer_t *observer,
                    const rz_upgrader_opts_t *opts, rz_err_t *err)
{
	rz_upgrader_t *u = calloc(1, sizeof(*u));
	json_t *all, *obj;
	struct timeval tv;
	size_t i;

	*out = NULL;
	if (u == NULL) {
		return rz_err_set(err, -ENOMEM, "upgrade: out of memory");
	}
	u->base = base;
	u->store = store;
	u->bus = bus;
	u->plugins = plugins;
	u->engine = engine;
	u->observer = observer;
	u->o = *opts;
	if (u->o.poll_ms <= 0) {
		u->o.poll_ms = DEFAULT_POLL_MS;
	}
	tv.tv_sec = u->o.poll_ms / 1000;
	tv.tv_usec = (u->o.poll_ms % 1000) * 1000;
	u->tick = event_new(base, -1, EV_PERSIST, on_tick, u);
	u->sub = rz_bus_subscribe(bus, on_event, u);
	if (u->tick == NULL || event_add(u->tick, &tv) != 0 || u->sub == 0) {
		rz_upgrader_free(u);
		return rz_err_set(err, -ENOMEM, "upgrade: cannot start");
	}
	all = rz_store_list_all(store, "UpgradeRun", NULL);
	json_array_foreach(all, i, obj)
	{
		adopt(u, obj, true);
	}
	json_decref(all);
	*out = u;
	return 0;
}

size_t rz_upgrader_active(const rz_upgrader_t *u)
{
	size_t n = 0;

	for (const struct up *up = u ? u->ups : NULL; up != NULL; up = up->next) {
		n++;
	}
	return n;
}

void rz_upgrader_free(rz_upgrader_t *u)
{
	if (u == NULL) {
		return;
	}
	u->stopping = true;
	if (u->sub != 0) {
		rz_bus_unsubscribe(u->bus, u->sub);
	}
	if (u->tick != NULL) {
		event_free(u->tick);
	}
	while (u->ups != NULL) {
		up_free(u->ups); /* a running command is killed; the next start resumes */
	}
	free(u);
}
