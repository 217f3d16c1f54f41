/* core/engine/report.c - Machines from the state; node group and tenant status. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/base/log.h"
#include "core/engine/report.h"
#include "core/plugin/host.h"

void rz_report_now(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char sec[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%.19s.%03dZ", sec, (int)(ts.tv_nsec / 1000000));
}

void rz_report_status(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                      json_t *fields)
{
	const rz_kind_t *k = rz_kind_by_name(kind);
	json_t *cur = NULL, *out = NULL, *status;
	rz_err_t err = { 0 };

	if (rz_store_get(st, k, tenant, name, &cur, &err) == 0) {
		status = json_object_get(cur, "status");
		if (status == NULL) {
			status = json_object();
			json_object_set_new(cur, "status", status);
		}
		json_object_update(status, fields);
		if (rz_store_update(st, k, tenant, name, cur, 0, RZ_UPDATE_STATUS, NULL, &out, NULL,
		                    &err) != 0) {
			rz_log_warn("engine", "status of %s %s/%s: %s", kind, tenant ? tenant : "",
			            name, err.msg);
		}
	}
	json_decref(out);
	json_decref(cur);
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
	size_t i;
	rz_err_t err = { 0 };
	bool gone;

	for (i = 0; i < rz_plugins_count(plugins); i++) {
		const rz_plugin_t *pl = rz_plugins_at(plugins, i);
		json_t *objs = NULL, *o;
		size_t j;
		if (!pl->loaded || rz_plugins_project(plugins, pl->name, state, &objs, &err) != 0) {
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

/* Set condition type in conds (a Kubernetes condition list) in place. Its
 * lastTransitionTime moves only when its status does. */
static void set_condition(json_t *conds, const char *type, bool status, const char *reason,
                          const char *message, const char *now, json_int_t gen)
{
	const char *st = status ? "True" : "False";
	json_t *c, *was = NULL;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *ct = json_string_value(json_object_get(c, "type"));
		if (ct != NULL && strcmp(ct, type) == 0) {
			was = c;
			break;
		}
	}
	if (was == NULL) {
		was = json_object();
		json_array_append_new(conds, was);
	}
	{
		const char *old = json_string_value(json_object_get(was, "status"));
		const char *since = json_string_value(json_object_get(was, "lastTransitionTime"));
		json_t *keep =
		    json_string(old != NULL && since != NULL && strcmp(old, st) == 0 ? since : now);
		json_object_clear(was);
		json_object_set_new(was, "type", json_string(type));
		json_object_set_new(was, "status", json_string(st));
		json_object_set_new(was, "reason", json_string(reason));
		json_object_set_new(was, "message", json_string(message));
		json_object_set_new(was, "lastTransitionTime", keep);
		json_object_set_new(was, "observedGeneration", json_integer(gen));
	}
}

/* Counts from the store into the node groups' status (desired from their specs, total and
 * ready from the Machines: ready is what observation reported) and into fields, the
 * tenant's status to be: machines and the MachinesReady condition. */
static void count_machines(rz_store_t *st, const char *tenant, json_t *tstatus, json_t *conds,
                           json_int_t gen)
{
	char now[32], msg[128];
	json_t *groups = rz_store_list_all(st, "NodeGroup", tenant), *ng, *m;
	json_t *machines = rz_store_list_all(st, "Machine", tenant);
	json_int_t desired = 0, total = 0, ready = 0;
	size_t i, j;
	bool all;

	json_array_foreach(groups, i, ng)
	{
		json_t *meta = json_object_get(ng, "metadata");
		const char *name = json_string_value(json_object_get(meta, "name"));
		json_int_t want =
		    json_integer_value(json_object_get(json_object_get(ng, "spec"), "count"));
		json_int_t have = 0, up = 0;

		json_array_foreach(machines, j, m)
		{
			const char *of = json_string_value(
			    json_object_get(json_object_get(m, "spec"), "nodeGroup"));
			if (of != NULL && name != NULL && strcmp(of, name) == 0) {
				have++;
				up += json_is_true(
				    json_object_get(json_object_get(m, "status"), "ready"));
			}
		}
		rz_report_status(
		    st, "NodeGroup", tenant, name,
		    json_pack("{s:I, s:I, s:I, s:I}", "desired", want, "total", have, "ready", up,
		              "observedGeneration",
		              json_integer_value(json_object_get(meta, "generation"))));
		desired += want;
	}
	json_array_foreach(machines, j, m)
	{
		total++;
		ready += json_is_true(json_object_get(json_object_get(m, "status"), "ready"));
	}
	json_decref(groups);
	json_decref(machines);
	all = ready == desired && total == desired;
	snprintf(msg, sizeof(msg), "%lld of %lld machines ready", (long long)ready,
	         (long long)desired);
	rz_report_now(now, sizeof(now));
	json_object_set_new(
	    tstatus, "machines",
	    json_pack("{s:I, s:I, s:I}", "desired", desired, "total", total, "ready", ready));
	set_condition(conds, "MachinesReady", all, all ? "AllReady" : "NotAllReady", msg, now, gen);
}

/* The tenant's conditions as they are (a copy, the caller's) and its generation; NULL when
 * the tenant is gone. */
static json_t *conditions_of(rz_store_t *st, const char *tenant, json_int_t *gen)
{
	json_t *t = NULL, *conds;
	rz_err_t err = { 0 };

	if (rz_store_get(st, rz_kind_by_name("Tenant"), NULL, tenant, &t, &err) != 0) {
		return NULL;
	}
	*gen = json_integer_value(json_object_get(json_object_get(t, "metadata"), "generation"));
	conds = json_deep_copy(json_object_get(json_object_get(t, "status"), "conditions"));
	json_decref(t);
	return json_is_array(conds) ? conds : (json_decref(conds), json_array());
}

void rz_report_run(rz_store_t *st, const char *tenant, const char *run, const char *operation,
                   const char *phase, const char *error)
{
	char now[32];
	json_int_t gen = 0;
	json_t *conds = conditions_of(st, tenant, &gen), *fields;
	bool ok = strcmp(phase, "Succeeded") == 0;

	if (conds == NULL) {
		return;
	}
	rz_report_now(now, sizeof(now));
	set_condition(conds, "Reconciled", ok, ok ? "Applied" : "RunFailed", ok ? "" : error, now,
	              gen);
	fields =
	    json_pack("{s:s, s:I, s:{s:s, s:s, s:s, s:s, s:s}}", "phase", ok ? "Ready" : "Failed",
	              "observedGeneration", gen, "lastRun", "id", run, "operation", operation,
	              "phase", phase, "finishedAt", now, "error", error);
	count_machines(st, tenant, fields, conds, gen);
	json_object_set_new(fields, "conditions", conds);
	rz_report_status(st, "Tenant", NULL, tenant, fields);
}

void rz_report_counts(rz_store_t *st, const char *tenant)
{
	json_int_t gen = 0;
	json_t *conds = conditions_of(st, tenant, &gen), *fields;

	if (conds == NULL) {
		return;
	}
	fields = json_object();
	count_machines(st, tenant, fields, conds, gen);
	json_object_set_new(fields, "conditions", conds);
	rz_report_status(st, "Tenant", NULL, tenant, fields);
}

void rz_report_drift(rz_store_t *st, const char *tenant, bool drifted, const char *reason,
                     const char *message)
{
	char now[32];
	json_int_t gen = 0;
	json_t *conds = conditions_of(st, tenant, &gen);

	if (conds == NULL) {
		return;
	}
	rz_report_now(now, sizeof(now));
	set_condition(conds, "Drifted", drifted, reason, message, now, gen);
	rz_report_status(st, "Tenant", NULL, tenant, json_pack("{s:o}", "conditions", conds));
}
