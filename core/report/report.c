/* core/report/report.c - Machines from the state; node group and tenant status. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/model/conditions.h"
#include "core/model/states.h"
#include "core/report/report.h"
#include "core/store/events.h"
#include "core/plugin/host.h"

void rz_report_now(char *buf, size_t size)
{
	rz_clock_format(rz_clock_now_ms(), buf, size);
}

/* A null in fields removes that field: an optional field with nothing to say (an error
 * that cleared) is absent, as Kubernetes leaves it, not an empty string. */
static void strip_nulls(json_t *status, const json_t *fields)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)fields, key, v)
	{
		if (json_is_null(v)) {
			json_object_del(status, key);
		}
	}
}

int rz_report_status_try(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                         const json_t *fields)
{
	const rz_kind_t *k = rz_kind_by_name(kind);
	json_t *cur = NULL, *out = NULL, *status, *before = NULL;
	rz_err_t err = { 0 };
	int rc = rz_store_get(st, k, tenant, name, &cur, &err);

	if (rc == RZ_ENOTFOUND) {
		rc = 0;
	} else if (rc != 0) {
		rz_log_warn("engine", "status of %s %s/%s: %s", kind, tenant ? tenant : "", name,
		            err.msg);
	}
	if (rc == 0 && cur != NULL) {
		status = json_object_get(cur, "status");
		if (status == NULL) {
			status = json_object();
			json_object_set_new(cur, "status", status);
		}
		before = json_deep_copy(status);
		json_object_update(status, (json_t *)fields);
		strip_nulls(status, fields);
		if (json_equal(before, status)) {
			/* nothing changed: no write, no event, no new revision */
		} else if ((rc = rz_store_update(st, k, tenant, name, cur, 0, RZ_UPDATE_STATUS,
		                                 NULL, &out, NULL, &err)) != 0) {
			rz_log_warn("engine", "status of %s %s/%s: %s", kind, tenant ? tenant : "",
			            name, err.msg);
			rc = rc == RZ_ENOTFOUND ? 0 : rc;
		}
	}
	json_decref(before);
	json_decref(out);
	json_decref(cur);
	return rc;
}

void rz_report_status(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                      json_t *fields)
{
	rz_report_status_try(st, kind, tenant, name, fields);
	json_decref(fields);
}

/* The NodeGroup a projected object names: by name, or by the TF name the plugin derived
 * from it (resources are named after tf_name(group): "1st" becomes x_1st, projected as
 * "x-1st"). Borrowed from groups; NULL if none. */
static json_t *group_of(json_t *groups, const char *ng)
{
	json_t *g;
	size_t i;
	char tf[128];

	for (int pass = 0; ng != NULL && pass < 2; pass++) {
		json_array_foreach(groups, i, g)
		{
			const char *name = json_string_value(
			    json_object_get(json_object_get(g, "metadata"), "name"));
			if (name == NULL) {
				continue;
			}
			if (pass == 1) { /* as projection labels a TF name: '_' becomes '-' */
				rz_tf_name(name, tf, sizeof(tf));
				for (char *c = tf; *c != '\0'; c++) {
					*c = *c == '_' ? '-' : *c;
				}
				name = tf;
			}
			if (strcmp(name, ng) == 0) {
				return g;
			}
		}
	}
	return NULL;
}

static json_t *machine_object(const char *tenant, const char *plugin, json_t *p, json_t *groups)
{
	json_t *spec = json_deep_copy(json_object_get(p, "spec"));
	json_t *g = group_of(groups, json_string_value(json_object_get(p, "nodeGroup")));
	const char *ng =
	    g ? json_string_value(json_object_get(json_object_get(g, "metadata"), "name"))
	      : json_string_value(json_object_get(p, "nodeGroup"));
	const char *role =
	    g ? json_string_value(json_object_get(json_object_get(g, "spec"), "role")) : NULL;
	json_t *obj;

	json_object_set_new(spec, "nodeGroup", json_string(ng ? ng : ""));
	json_object_set_new(spec, "providerType", json_string(plugin));
	json_object_set(spec, "tfAddress", json_object_get(p, "tfAddress"));
	if (role != NULL) {
		json_object_set_new(spec, "role", json_string(role));
	}
	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:o}", "apiVersion",
	                RZ_API_VERSION, "kind", "Machine", "metadata", "name",
	                json_string_value(json_object_get(p, "name")), "tenant", tenant, "labels",
	                "rezuscloud.io/tenant", tenant, "rezuscloud.io/nodegroup", ng ? ng : "",
	                "rezuscloud.io/provider", plugin, "spec", spec);
	if (role != NULL) {
		json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"),
		                    "rezuscloud.io/role", json_string(role));
	}
	return obj;
}

void rz_report_machines(rz_store_t *st, rz_plugins_t *plugins, const char *tenant,
                        const json_t *state)
{
	const rz_kind_t *mk = rz_kind_by_name("Machine");
	json_t *want = json_object(), *have = rz_store_list_all(st, "Machine", tenant), *m, *out;
	json_t *groups = rz_store_list_all(st, "NodeGroup", tenant);
	const json_t *scope = rz_plugins_scope(plugins, tenant);
	size_t i;
	rz_err_t err = { 0 };
	bool gone;

	for (i = 0; i < rz_plugins_count(plugins); i++) {
		const rz_plugin_t *pl = rz_plugins_at(plugins, i);
		json_t *objs = NULL, *o;
		size_t j;
		if (!pl->loaded ||
		    rz_plugins_project(plugins, pl->name, state, scope, &objs, &err) != 0) {
			continue;
		}
		json_array_foreach(objs, j, o)
		{
			json_object_set_new(want, json_string_value(json_object_get(o, "name")),
			                    machine_object(tenant, pl->name, o, groups));
		}
		json_decref(objs);
	}
	json_array_foreach(have, i, m)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(m, "metadata"), "name"));
		if (json_object_get(want, name) == NULL) {
			out = NULL;
			rz_store_delete(st, mk, tenant, name, 0, NULL, &out, &gone, &err);
			json_decref(out);
		}
	}
	{
		const char *name;
		json_object_foreach(want, name, m)
		{
			out = NULL;
			if (rz_store_create(st, mk, m, NULL, &out, &err) == -EEXIST) {
				json_decref(out);
				out = NULL;
				rz_store_update(st, mk, tenant, name, m, 0, RZ_UPDATE_SPEC, NULL,
				                &out, &gone, &err);
			}
			json_decref(out);
		}
	}
	json_decref(want);
	json_decref(have);
	json_decref(groups);
}

/* ------------------------------------------------------------------ tenant status */

/* A machine that is not ready, and not merely on its way up: it was up, or failed. */
static bool machine_lost(const json_t *m)
{
	const json_t *status = json_object_get(m, "status");
	const char *stage = json_string_value(json_object_get(status, "stage"));
	int st = rz_machine_stage_of(stage);

	if (json_is_true(json_object_get(status, "ready")) || stage == NULL) {
		return false;
	}
	/* on its way up, or in a reboot or upgrade it was told to make (machine_planned) */
	return st != RZ_STAGE_PROVISIONING && st != RZ_STAGE_BOOTING && st != RZ_STAGE_INSTALLING &&
	       st != RZ_STAGE_REBOOTING && st != RZ_STAGE_UPGRADING;
}

/* Whether machine m is not ready because it reboots or upgrades: Talos enters these stages
 * only on request (an UpgradeRun, a reboot), so they are planned, not a loss. */
static bool machine_planned(const json_t *m)
{
	const json_t *status = json_object_get(m, "status");
	int st = rz_machine_stage_of(json_string_value(json_object_get(status, "stage")));

	return !json_is_true(json_object_get(status, "ready")) &&
	       (st == RZ_STAGE_REBOOTING || st == RZ_STAGE_UPGRADING);
}

/* The status of the condition of type in status (borrowed), or NULL. */
static const char *condition_status(const json_t *status, const char *type)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(status, "conditions"), i, c)
	{
		const char *ct = json_string_value(json_object_get(c, "type"));
		if (ct != NULL && strcmp(ct, type) == 0) {
			return json_string_value(json_object_get(c, "status"));
		}
	}
	return NULL;
}

/* What changed in a node group since its last status (old, borrowed; may be NULL), as
 * Events on it (kubectl describe shows them): its desired machines (spec.count, changed by
 * a patch or kubectl scale) and its Ready condition (msg why), a Warning when one of its
 * machines is lost (machine_lost), not while machines are still being made. */
static void nodegroup_events(rz_store_t *st, const char *tenant, const char *name,
                             const json_t *old, json_int_t want, bool ready, json_int_t lost,
                             const char *msg)
{
	const json_t *desired = json_object_get(old, "desired");
	const char *was = condition_status(old, "Ready");
	json_int_t had = json_integer_value(desired);
	char text[128];

	if (json_is_integer(desired) && had != want) {
		snprintf(text, sizeof(text), "desired machines %lld (were %lld)", (long long)want,
		         (long long)had);
		rz_events_record(st, tenant, "NodeGroup", name, "Normal",
		                 want > had ? "ScaledUp" : "ScaledDown", text, "engine");
	}
	if (was != NULL && strcmp(was, ready ? "True" : "False") != 0) {
		rz_events_record(st, tenant, "NodeGroup", name, lost > 0 ? "Warning" : "Normal",
		                 ready ? "Ready" : "NotReady", msg, "engine");
	}
}

/* Counts from the store into the node groups' status (desired from their specs, total and
 * ready from the Machines: ready is what observation reported; the Ready condition, True
 * when every desired machine exists and is ready) and into in. */
static void count_machines(rz_store_t *st, const char *tenant, rz_phase_in_t *in)
{
	json_t *groups = rz_store_list_all(st, "NodeGroup", tenant), *ng, *m;
	json_t *machines = rz_store_list_all(st, "Machine", tenant);
	size_t i, j;
	char now[32];

	rz_report_now(now, sizeof(now));

	json_array_foreach(groups, i, ng)
	{
		json_t *meta = json_object_get(ng, "metadata");
		const char *name = json_string_value(json_object_get(meta, "name"));
		const char *role =
		    json_string_value(json_object_get(json_object_get(ng, "spec"), "role"));
		json_int_t want =
		    json_integer_value(json_object_get(json_object_get(ng, "spec"), "count"));
		json_int_t have = 0, up = 0, lost = 0;
		json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
		json_t *conds;
		bool all;
		char msg[96];

		json_array_foreach(machines, j, m)
		{
			const char *of = json_string_value(
			    json_object_get(json_object_get(m, "spec"), "nodeGroup"));
			if (of != NULL && name != NULL && strcmp(of, name) == 0) {
				have++;
				up += json_is_true(
				    json_object_get(json_object_get(m, "status"), "ready"));
				lost += machine_lost(m);
			}
		}
		/* more than wanted: a scale-down not made yet (awaiting approval, or running) */
		if (have > want) {
			snprintf(msg, sizeof(msg), "%lld of %lld machines ready (%lld wanted)",
			         (long long)up, (long long)have, (long long)want);
		} else {
			snprintf(msg, sizeof(msg), "%lld of %lld machines ready (%lld exist)",
			         (long long)up, (long long)want, (long long)have);
		}
		conds =
		    json_deep_copy(json_object_get(json_object_get(ng, "status"), "conditions"));
		if (!json_is_array(conds)) {
			json_decref(conds);
			conds = json_array();
		}
		all = up == have && have >= want;
		rz_condition_set(conds, "Ready", all ? "True" : "False",
		                 all ? "AllReady" : "NotAllReady", msg, now, gen);
		nodegroup_events(st, tenant, name, json_object_get(ng, "status"), want, all, lost,
		                 msg);
		rz_report_status(st, "NodeGroup", tenant, name,
		                 json_pack("{s:I, s:I, s:I, s:I, s:o}", "desired", want, "total",
		                           have, "ready", up, "observedGeneration", gen,
		                           "conditions", conds));
		in->desired += want;
		in->has_controlplane =
		    in->has_controlplane ||
		    (role != NULL && strcmp(role, "controlplane") == 0 && want > 0);
	}
	json_array_foreach(machines, j, m)
	{
		in->total++;
		in->ready += json_is_true(json_object_get(json_object_get(m, "status"), "ready"));
		in->lost += machine_lost(m);
		in->planned += machine_planned(m);
	}
	json_decref(groups);
	json_decref(machines);
}

/* The Ready condition from the phase: what keeps the tenant from being Ready is its first
 * reason in the order the phase is decided in. */
static void ready_condition(const rz_phase_in_t *in, rz_phase_out_t *out)
{
	bool ready = strcmp(out->phase, "Ready") == 0;
	const char *why;

	out->ready = ready ? "True" : "False";
	out->ready_reason = out->phase;
	if (ready) {
		why = "the machines and the control plane are ready";
	} else if (in->deleting) {
		why = "the tenant is being deleted";
	} else if (in->run_failed) {
		why = "the last run failed";
	} else if (!in->applied) {
		why = "no apply has succeeded yet";
	} else if (strcmp(out->machines_ready, "True") != 0) {
		why = out->machines_message;
	} else {
		why = out->cp_message;
	}
	snprintf(out->ready_message, sizeof(out->ready_message), "%s", why);
}

void rz_report_phase(const rz_phase_in_t *in, rz_phase_out_t *out)
{
	/* every machine ready, and at least as many as wanted: more are a scale-down not
	 * made yet, which leaves the tenant as ready as it was */
	bool all = in->ready == in->total && in->total >= in->desired;
	bool was_up =
	    in->was != NULL && (strcmp(in->was, "Ready") == 0 || strcmp(in->was, "Degraded") == 0);

	memset(out, 0, sizeof(*out));
	out->machines_ready = all ? "True" : "False";
	out->machines_reason = all               ? "AllReady"
	                       : in->lost > 0    ? "MachinesLost"
	                       : in->planned > 0 ? "MachinesRestarting"
	                                         : "NotAllReady";
	if (in->total > in->desired) {
		snprintf(out->machines_message, sizeof(out->machines_message),
		         "%lld of %lld machines ready (%lld wanted: %lld to remove)",
		         (long long)in->ready, (long long)in->total, (long long)in->desired,
		         (long long)(in->total - in->desired));
	} else {
		snprintf(out->machines_message, sizeof(out->machines_message),
		         "%lld of %lld machines ready", (long long)in->ready,
		         (long long)in->desired);
	}
	if (!all && in->planned > 0) {
		size_t n = strlen(out->machines_message);
		snprintf(out->machines_message + n, sizeof(out->machines_message) - n,
		         "; %lld rebooting or upgrading, as told", (long long)in->planned);
	}
	if (!in->has_controlplane) {
		out->cp_ready = "False";
		out->cp_reason = "NoControlPlane";
		out->cp_message = "the tenant has no control-plane node group";
	} else if (!in->observed) {
		out->cp_ready = "Unknown";
		out->cp_reason = "NotObserved";
		out->cp_message = "the control plane has not been observed yet";
	} else {
		out->cp_ready = in->cp_healthy ? "True" : "False";
		out->cp_reason = in->cp_healthy ? "Healthy" : "Unhealthy";
		out->cp_message = in->cp_error != NULL && in->cp_error[0] != '\0' ? in->cp_error
		                  : in->cp_healthy ? "etcd and the control plane are healthy"
		                                   : "the control plane is not healthy";
	}
	if (in->deleting) {
		out->phase = "Deleting";
	} else if (in->run_failed) {
		out->phase = "Failed";
	} else if (!in->applied) {
		out->phase = "Pending";
	} else if (all && strcmp(out->cp_ready, "True") == 0) {
		out->phase = "Ready";
	} else if (was_up &&
	           (in->lost > 0 || (strcmp(out->cp_ready, "False") == 0 && in->planned == 0))) {
		/* a control plane down while its machines reboot as told is no degradation */
		out->phase = "Degraded";
	} else if (in->applied_ms > 0 && in->provision_timeout_ms > 0 && in->planned == 0 &&
	           in->now_ms - in->applied_ms > in->provision_timeout_ms) {
		/* machines rebooting or upgrading as told (an upgrade long after the apply) are
		 * not a provisioning that failed to converge */
		out->phase = "Failed";
		out->machines_reason = all ? out->machines_reason : "ProvisioningTimedOut";
		snprintf(
		    out->machines_message, sizeof(out->machines_message),
		    "%lld of %lld machines ready %llds after the apply (observe.provision_timeout)",
		    (long long)in->ready, (long long)in->desired,
		    (long long)((in->now_ms - in->applied_ms) / 1000));
	} else {
		out->phase = "Provisioning";
	}
	ready_condition(in, out);
}

/* A new phase, as an Event on the tenant (Degraded and Failed are Warnings). */
static void phase_event(rz_store_t *st, const char *tenant, const char *was,
                        const rz_phase_out_t *out)
{
	bool bad = strcmp(out->phase, "Degraded") == 0 || strcmp(out->phase, "Failed") == 0;
	char msg[400];

	rz_logkv(RZ_LOG_INFO, "engine", "tenant phase", "tenant", tenant, "was", was ? was : "",
	         "now", out->phase, NULL);
	snprintf(msg, sizeof(msg), "phase %s (was %s): %s; control plane: %s", out->phase,
	         was ? was : "none", out->machines_message, out->cp_message);
	rz_events_record(st, tenant, "Tenant", tenant, bad ? "Warning" : "Normal", out->phase, msg,
	                 "engine");
}

/* What changes a tenant's status besides its counts. */
struct change {
	const char *run, *operation, *phase, *error; /* a run ended */
	const char *awaiting;                        /* a run waits for approval: why */
	bool resynced;                               /* a resync found nothing to do */
};

/* The tenant's status from the store and the change c (may be NULL): counts, conditions,
 * phase; written only when any of it changed. */
static void derive(rz_store_t *st, const char *tenant, int64_t provision_timeout_ms,
                   const struct change *c)
{
	json_t *t = NULL, *status, *conds, *last, *cp, *fields;
	json_int_t gen;
	rz_phase_in_t in = { 0 };
	rz_phase_out_t out;
	rz_err_t err = { 0 };
	char now[32];

	if (rz_store_get(st, rz_kind_by_name("Tenant"), NULL, tenant, &t, &err) != 0) {
		return;
	}
	rz_report_now(now, sizeof(now));
	gen = json_integer_value(json_object_get(json_object_get(t, "metadata"), "generation"));
	status = json_object_get(t, "status");
	conds = json_deep_copy(json_object_get(status, "conditions"));
	if (!json_is_array(conds)) {
		json_decref(conds);
		conds = json_array();
	}
	fields = json_object();
	if (c != NULL && c->run != NULL) {
		bool ok = strcmp(c->phase, "Succeeded") == 0;
		const char *reason = ok                                     ? "Applied"
		                     : strcmp(c->phase, "Canceled") == 0    ? "RunCanceled"
		                     : strcmp(c->phase, "Interrupted") == 0 ? "RunInterrupted"
		                                                            : "RunFailed";
		rz_condition_set(conds, "Reconciled", ok ? "True" : "False", reason,
		                 ok ? "" : c->error, now, gen);
		json_object_set_new(fields, "observedGeneration", json_integer(gen));
		json_t *last_run = json_pack("{s:s, s:s, s:s, s:s}", "id", c->run, "operation",
		                             c->operation, "phase", c->phase, "finishedAt", now);
		if (c->error != NULL && c->error[0] != '\0') { /* absent when none */
			json_object_set_new(last_run, "error", json_string(c->error));
		}
		json_object_set_new(fields, "lastRun", last_run);
		if (ok && strcmp(c->operation, "apply") == 0) {
			json_object_set_new(fields, "lastApplied", json_string(now));
		}
	}
	if (c != NULL && c->resynced) {
		rz_condition_set(conds, "Reconciled", "True", "InSync",
		                 "the last resync's plan found nothing to change", now, gen);
		json_object_set_new(fields, "lastReconciled", json_string(now));
		json_object_set_new(fields, "observedGeneration", json_integer(gen));
	}
	if (c != NULL && c->awaiting != NULL) {
		rz_condition_set(conds, "Reconciled", "False", "AwaitingApproval", c->awaiting, now,
		                 gen);
	}
	last = json_object_get(fields, "lastRun") ?: json_object_get(status, "lastRun");
	cp = json_object_get(status, "controlPlane");
	in.deleting = json_object_get(json_object_get(t, "metadata"), "deletionTimestamp") != NULL;
	/* a failed run is history once a later resync found everything as it should be */
	in.run_failed =
	    strcmp(json_string_value(json_object_get(last, "phase")) ?: "", "Failed") == 0 &&
	    rz_clock_parse(json_string_value(json_object_get(fields, "lastReconciled"))
	                       ?: json_string_value(json_object_get(status, "lastReconciled"))) <
	        rz_clock_parse(json_string_value(json_object_get(last, "finishedAt")));
	in.applied_ms =
	    rz_clock_parse(json_string_value(json_object_get(fields, "lastApplied"))
	                       ?: json_string_value(json_object_get(status, "lastApplied")));
	in.applied =
	    in.applied_ms > 0 ||
	    (strcmp(json_string_value(json_object_get(last, "operation")) ?: "", "apply") == 0 &&
	     strcmp(json_string_value(json_object_get(last, "phase")) ?: "", "Succeeded") == 0);
	in.observed = cp != NULL;
	in.cp_healthy = json_is_true(json_object_get(cp, "healthy"));
	in.cp_error = json_string_value(json_object_get(cp, "error"));
	in.was = json_string_value(json_object_get(status, "phase"));
	in.now_ms = rz_clock_now_ms();
	in.provision_timeout_ms = provision_timeout_ms;
	count_machines(st, tenant, &in);
	rz_report_phase(&in, &out);
	rz_condition_set(conds, "MachinesReady", out.machines_ready, out.machines_reason,
	                 out.machines_message, now, gen);
	rz_condition_set(conds, "ControlPlaneReady", out.cp_ready, out.cp_reason, out.cp_message,
	                 now, gen);
	rz_condition_set(conds, "Ready", out.ready, out.ready_reason, out.ready_message, now, gen);
	json_object_set_new(fields, "phase", json_string(out.phase));
	json_object_set_new(fields, "machines",
	                    json_pack("{s:I, s:I, s:I}", "desired", (json_int_t)in.desired, "total",
	                              (json_int_t)in.total, "ready", (json_int_t)in.ready));
	json_object_set_new(fields, "conditions", conds);
	if (in.was == NULL || strcmp(in.was, out.phase) != 0) {
		phase_event(st, tenant, in.was, &out);
	}
	json_decref(t);
	rz_report_status(st, "Tenant", NULL, tenant, fields);
}

void rz_report_run(rz_store_t *st, const char *tenant, const char *run, const char *operation,
                   const char *phase, const char *error, int64_t provision_timeout_ms)
{
	struct change c = { run, operation, phase, error ? error : "", NULL, false };

	derive(st, tenant, provision_timeout_ms, &c);
}

void rz_report_awaiting(rz_store_t *st, const char *tenant, const char *why,
                        int64_t provision_timeout_ms)
{
	struct change c = { .awaiting = why };

	derive(st, tenant, provision_timeout_ms, &c);
}

void rz_report_resynced(rz_store_t *st, const char *tenant, int64_t provision_timeout_ms)
{
	struct change c = { .resynced = true };

	derive(st, tenant, provision_timeout_ms, &c);
}

void rz_report_counts(rz_store_t *st, const char *tenant, int64_t provision_timeout_ms)
{
	derive(st, tenant, provision_timeout_ms, NULL);
}

void rz_report_tenant_condition(rz_store_t *st, const char *tenant, const char *type,
                                const char *status, const char *reason, const char *message)
{
	json_t *t = NULL, *conds;
	json_int_t gen;
	rz_err_t err = { 0 };
	char now[32];

	if (rz_store_get(st, rz_kind_by_name("Tenant"), NULL, tenant, &t, &err) != 0) {
		return;
	}
	gen = json_integer_value(json_object_get(json_object_get(t, "metadata"), "generation"));
	conds = json_deep_copy(json_object_get(json_object_get(t, "status"), "conditions"));
	if (!json_is_array(conds)) {
		json_decref(conds);
		conds = json_array();
	}
	json_decref(t);
	rz_report_now(now, sizeof(now));
	rz_condition_set(conds, type, status, reason, message, now, gen);
	rz_report_status(st, "Tenant", NULL, tenant, json_pack("{s:o}", "conditions", conds));
}

void rz_report_drift(rz_store_t *st, const char *tenant, bool drifted, const char *reason,
                     const char *message)
{
	rz_report_tenant_condition(st, tenant, "Drifted", drifted ? "True" : "False", reason,
	                           message);
}

void rz_report_run_condition(rz_store_t *st, const char *tenant, const char *run, const char *type,
                             const char *status, const char *reason, const char *message,
                             json_t *also)
{
	json_t *r = NULL, *conds;
	rz_err_t err = { 0 };
	char now[32];

	if (rz_store_get(st, rz_kind_by_name("Run"), tenant, run, &r, &err) != 0) {
		json_decref(also);
		return;
	}
	conds = json_deep_copy(json_object_get(json_object_get(r, "status"), "conditions"));
	if (!json_is_array(conds)) {
		json_decref(conds);
		conds = json_array();
	}
	json_decref(r);
	rz_report_now(now, sizeof(now));
	rz_condition_set(conds, type, status, reason, message, now, 0);
	also = also != NULL ? also : json_object();
	json_object_set_new(also, "conditions", conds);
	rz_report_status(st, "Run", tenant, run, also);
}

/* Whether a was created before b (RFC 3339 times with milliseconds sort as text; then the
 * name). */
static bool created_before(const json_t *a, const json_t *b)
{
	const json_t *ma = json_object_get(a, "metadata"), *mb = json_object_get(b, "metadata");
	const char *ta = json_string_value(json_object_get(ma, "creationTimestamp"));
	const char *tb = json_string_value(json_object_get(mb, "creationTimestamp"));
	int c = strcmp(ta ? ta : "", tb ? tb : "");

	return c != 0 ? c < 0
	              : strcmp(json_string_value(json_object_get(ma, "name")) ?: "",
	                       json_string_value(json_object_get(mb, "name")) ?: "") < 0;
}

json_t *rz_report_active_upgrade(rz_store_t *st, const char *tenant)
{
	json_t *ups = rz_store_list_all(st, "UpgradeRun", tenant), *u, *best = NULL;
	size_t i;

	json_array_foreach(ups, i, u)
	{
		int phase = rz_upgrade_phase_of(
		    json_string_value(json_object_get(json_object_get(u, "status"), "phase")));
		if (json_is_true(json_object_get(json_object_get(u, "spec"), "dryRun")) ||
		    rz_upgrade_phase_over(phase)) {
			continue;
		}
		if (best == NULL || created_before(u, best)) {
			best = u;
		}
	}
	json_incref(best);
	json_decref(ups);
	return best;
}

void rz_report_inputs(const json_t *groups, const json_t *patches, char out[RZ_REPORT_INPUTS_LEN])
{
	const json_t *lists[2] = { groups, patches };
	unsigned char h[(RZ_REPORT_INPUTS_LEN - 1) / 2];
	crypto_generichash_state s;
	const json_t *o;
	size_t i;

	crypto_generichash_init(&s, NULL, 0, sizeof(h));
	for (size_t l = 0; l < 2; l++) {
		json_array_foreach(lists[l], i, o)
		{
			const json_t *meta = json_object_get(o, "metadata");
			char line[400];
			int n = snprintf(
			    line, sizeof(line), "%zu/%s/%s/%lld\n", l,
			    json_string_value(json_object_get(meta, "name")) ?: "",
			    json_string_value(json_object_get(meta, "uid")) ?: "",
			    (long long)json_integer_value(json_object_get(meta, "generation")));
			crypto_generichash_update(
			    &s, (const unsigned char *)line,
			    n > 0 && (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
		}
		crypto_generichash_update(&s, (const unsigned char *)"--\n", 3);
	}
	crypto_generichash_final(&s, h, sizeof(h));
	sodium_bin2hex(out, RZ_REPORT_INPUTS_LEN, h, sizeof(h));
}

bool rz_report_inputs_stale(rz_store_t *st, const json_t *tenant)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(tenant, "metadata"), "name"));
	const char *applied =
	    json_string_value(json_object_get(json_object_get(tenant, "status"), "appliedInputs"));
	char now[RZ_REPORT_INPUTS_LEN];
	json_t *groups, *patches;

	if (name == NULL || applied == NULL) {
		return false;
	}
	groups = rz_store_list_all(st, "NodeGroup", name);
	patches = rz_store_list_all(st, "ConfigPatch", name);
	rz_report_inputs(groups, patches, now);
	json_decref(groups);
	json_decref(patches);
	return strcmp(now, applied) != 0;
}
