/* core/model/kinds.c - the resource kinds and their field schemas (SPEC §4). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/model/kinds.h"
#include "core/base/clock.h"
#include "core/model/states.h"

/* ------------------------------------------------------------------ shared pieces */

static const char *const phases_tenant[] = { "Pending",  "Provisioning", "Ready", "Degraded",
	                                     "Deleting", "Failed",       NULL };
static const char *const roles[] = { "controlplane", "worker", NULL };
static const char *const condition_status[] = { "True", "False", "Unknown", NULL };
static const char *const taint_effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
static const char *const patch_formats[] = { "strategic", "json6902", NULL };
static const char *const patch_targets[] = { "all", "controlplane", "worker", NULL };
static const char *const severities[] = { "error", "warning", NULL };
static const char *const components[] = { "talos", "kubernetes", NULL };
static const char *const upgrade_triggers[] = { "manual", "spec", NULL };
static const char *const provider_kinds[] = { "infra", "cluster", NULL };
static const char *const event_types[] = { "Normal", "Warning", NULL };

#define F_END                                                                                      \
	{                                                                                          \
		.name = NULL                                                                       \
	}

static const rz_field_t condition_fields[] = {
	{ .name = "type",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 316,
	  .doc = "condition type, e.g. Reconciled" },
	{ .name = "status", .type = RZ_F_STRING, .required = true, .enums = condition_status },
	{ .name = "reason", .type = RZ_F_STRING, .max_len = 1024, .doc = "CamelCase reason" },
	{ .name = "message", .type = RZ_F_STRING, .max_len = 32768 },
	{ .name = "lastTransitionTime", .type = RZ_F_TIME },
	{ .name = "observedGeneration",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX },
	F_END,
};

/* ------------------------------------------------------------------ metadata */

static const rz_field_t metadata_fields[] = {
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "unique per kind (and tenant)" },
	{ .name = "generateName",
	  .type = RZ_F_STRING,
	  .max_len = 58,
	  .doc = "prefix for a server-generated name" },
	{ .name = "user",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "owning user (API tokens)" },
	{ .name = "tenant",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "owning tenant (tenant-scoped kinds)" },
	{ .name = "namespace",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "the tenant again, as Kubernetes clients name it (tenant-scoped kinds)" },
	{ .name = "uid", .type = RZ_F_STRING, .max_len = 36, .doc = "set by the server" },
	{ .name = "resourceVersion",
	  .type = RZ_F_STRING,
	  .max_len = 20,
	  .doc = "set by the server; opaque" },
	{ .name = "generation", .type = RZ_F_INT, .doc = "set by the server" },
	{ .name = "creationTimestamp", .type = RZ_F_TIME, .doc = "set by the server" },
	{ .name = "deletionTimestamp", .type = RZ_F_TIME, .doc = "set by the server" },
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = 64 },
	{ .name = "annotations",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .max_len = 64,
	  .max_bytes = RZ_ANNOTATIONS_MAX },
	{ .name = "finalizers",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_qualified_name,
	  .unique = true,
	  .max_len = 32 },
	F_END,
};

const rz_field_t *rz_kind_metadata_fields(void)
{
	return metadata_fields;
}

/* ------------------------------------------------------------------ Tenant */

/* RZ_DISPATCH_SELECTOR_MAX (core/remote/dispatch.h): a runner serves the pool of every set
 * of at most this many of its labels */
#define SELECTOR_MAX 3

static const rz_field_t tenant_spec[] = {
	{ .name = "clusterProvider",
	  .type = RZ_F_STRING,
	  .def = "\"talos\"",
	  .format = rz_format_dns1123_label,
	  .doc = "cluster plugin: talos, or sim" },
	{ .name = "kubernetesVersion",
	  .type = RZ_F_STRING,
	  .def = "\"1.35.0\"",
	  .format = rz_format_version,
	  .format_name = "version" },
	{ .name = "talosVersion",
	  .type = RZ_F_STRING,
	  .def = "\"1.12.0\"",
	  .format = rz_format_version,
	  .format_name = "version" },
	{ .name = "controlPlaneEndpoint",
	  .type = RZ_F_STRING,
	  .format = rz_format_url,
	  .format_name = "uri",
	  .doc = "Kubernetes API URL; derived from the first control plane when empty" },
	{ .name = "podSubnets",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_cidr,
	  .format_name = "cidr",
	  .unique = true,
	  .max_len = 2,
	  .def = "[\"10.244.0.0/16\"]" },
	{ .name = "serviceSubnets",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_cidr,
	  .format_name = "cidr",
	  .unique = true,
	  .max_len = 2,
	  .def = "[\"10.96.0.0/12\"]" },
	{ .name = "runnerSelector",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "with remote runners: the labels (at most 3) a runner needs to run this "
	         "tenant's tofu; empty: any runner (docs/runners.md)" },
	F_END,
};

static const rz_field_t last_run_fields[] = {
	{ .name = "id", .type = RZ_F_STRING },
	{ .name = "operation", .type = RZ_F_STRING, .enums = rz_run_op_names },
	{ .name = "phase", .type = RZ_F_STRING, .enums = rz_run_phase_names },
	{ .name = "finishedAt", .type = RZ_F_TIME },
	{ .name = "error", .type = RZ_F_STRING },
	F_END,
};

static const rz_field_t machine_counts[] = {
	{ .name = "desired", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "total", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "ready", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	F_END,
};

static const rz_field_t control_plane_fields[] = {
	{ .name = "healthy", .type = RZ_F_BOOL },
	{ .name = "etcdMembers", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "nodes", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "nodesReady", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "error", .type = RZ_F_STRING, .max_len = 4096 },
	F_END,
};

static const rz_field_t tenant_status[] = {
	{ .name = "phase", .type = RZ_F_STRING, .enums = phases_tenant },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = condition_fields },
	{ .name = "observedGeneration", .type = RZ_F_INT },
	{ .name = "lastRun", .type = RZ_F_OBJECT, .fields = last_run_fields },
	{ .name = "machines", .type = RZ_F_OBJECT, .fields = machine_counts },
	{ .name = "lastApplied", .type = RZ_F_TIME, .doc = "when an apply last succeeded" },
	{ .name = "lastReconciled",
	  .type = RZ_F_TIME,
	  .doc = "when a resync last found nothing to change (no Run is stored for it)" },
	{ .name = "appliedInputs",
	  .type = RZ_F_STRING,
	  .doc = "a digest of the node groups and config patches the last successful apply "
	         "composed (emptied when a run is interrupted): at start, a tenant whose inputs "
	         "differ runs again" },
	{ .name = "controlPlane",
	  .type = RZ_F_OBJECT,
	  .fields = control_plane_fields,
	  .doc = "the control plane as the cluster plugin last observed it" },
	{ .name = "talosVersion", .type = RZ_F_STRING },
	{ .name = "kubernetesVersion", .type = RZ_F_STRING },
	F_END,
};

/* The pod and service subnets must not overlap, and the first two must be of one family. */
static void tenant_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	json_t *spec = json_object_get(obj, "spec");
	json_t *sel = json_object_get(spec, "runnerSelector");

	if (json_is_object(sel) && json_object_size(sel) > SELECTOR_MAX) {
		rz_fields_cause(causes, "spec.runnerSelector", RZ_CAUSE_INVALID,
		                "at most %d labels", SELECTOR_MAX);
	}
	json_t *pods = json_object_get(spec, "podSubnets");
	json_t *svcs = json_object_get(spec, "serviceSubnets");
	size_t i, j;
	json_t *p, *s;

	json_array_foreach(pods, i, p)
	{
		json_array_foreach(svcs, j, s)
		{
			if (json_equal(p, s)) {
				char field[64];
				snprintf(field, sizeof(field), "spec.serviceSubnets[%zu]", j);
				rz_fields_cause(causes, field, RZ_CAUSE_INVALID,
				                "must not equal spec.podSubnets[%zu]", i);
			}
		}
	}
}

static const char *const tenant_short[] = { "tn", NULL };
static const char *const tenant_finalizers[] = { "rezuscloud.io/teardown", NULL };

/* ------------------------------------------------------------------ NodeGroup */

static const rz_field_t taint_fields[] = {
	{ .name = "key", .type = RZ_F_STRING, .required = true, .format = rz_format_label_key },
	{ .name = "value", .type = RZ_F_STRING, .format = rz_format_label_value },
	{ .name = "effect", .type = RZ_F_STRING, .required = true, .enums = taint_effects },
	F_END,
};

static bool provider_class_valid(const char *s, char *msg, size_t size)
{
	const char *colon = strchr(s, ':');
	char plugin[64];
	size_t len = colon ? (size_t)(colon - s) : strlen(s);

	if (len == 0 || len >= sizeof(plugin)) {
		snprintf(msg, size, "must be <plugin>[:<class>], e.g. oci:VM.Standard.A1.Flex");
		return false;
	}
	memcpy(plugin, s, len);
	plugin[len] = '\0';
	if (!rz_format_dns1123_label(plugin, msg, size)) {
		snprintf(msg, size, "plugin name '%s' must be a DNS-1123 label", plugin);
		return false;
	}
	if (colon != NULL && (colon[1] == '\0' || strlen(colon + 1) > 253 ||
	                      strpbrk(colon + 1, " \t\r\n\"'${}") != NULL)) {
		snprintf(msg, size,
		         "class after ':' must be 1 to 253 characters without spaces, "
		         "quotes or braces");
		return false;
	}
	return true;
}

static const rz_field_t nodegroup_spec[] = {
	{ .name = "role", .type = RZ_F_STRING, .required = true, .enums = roles },
	{ .name = "count", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000, .def = "1" },
	{ .name = "providerClass",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = provider_class_valid,
	  .format_name = "provider-class",
	  .doc = "<plugin>[:<class>], e.g. oci:VM.Standard.A1.Flex, metal, sim" },
	{ .name = "providerConfig",
	  .type = RZ_F_ANY,
	  .def = "{}",
	  .doc = "validated by the plugin named in providerClass" },
	{ .name = "talosVersion",
	  .type = RZ_F_STRING,
	  .format = rz_format_version,
	  .format_name = "version",
	  .doc = "overrides the tenant's Talos version" },
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = 64,
	  .doc = "Kubernetes node labels" },
	{ .name = "taints",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = taint_fields,
	  .max_len = 32,
	  .doc = "Kubernetes node taints" },
	{ .name = "runnerSelector",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = SELECTOR_MAX,
	  .doc = "with remote runners: labels a runner needs besides the tenant's "
	         "spec.runnerSelector (a run applies every node group: its runner matches "
	         "all of them, at most 3 labels together; docs/runners.md)" },
	F_END,
};

static const rz_field_t nodegroup_status[] = {
	{ .name = "desired", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000 },
	{ .name = "total", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "ready", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "observedGeneration", .type = RZ_F_INT },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = condition_fields },
	F_END,
};

/* A node group's role cannot change: machines would have to be rebuilt in another role. */
static void nodegroup_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const char *now = json_string_value(json_object_get(json_object_get(obj, "spec"), "role"));
	const char *was = json_string_value(json_object_get(json_object_get(old, "spec"), "role"));

	if (old != NULL && now != NULL && was != NULL && strcmp(now, was) != 0) {
		rz_fields_cause(causes, "spec.role", RZ_CAUSE_INVALID,
		                "field is immutable (was \"%s\")", was);
	}
}

static const char *const nodegroup_short[] = { "ng", NULL };

/* Into merged: sel's pairs (sel of who: "the tenant", "node group 'x'"), each key's first
 * source kept in from. A key another source gave another value: false, why filled. */
static bool merge_selector(json_t *merged, json_t *from, const json_t *sel, const char *who,
                           char *why, size_t size)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)sel, key, v)
	{
		json_t *have = json_object_get(merged, key);
		if (have == NULL) {
			json_object_set(merged, key, v);
			json_object_set_new(from, key, json_string(who));
		} else if (!json_equal(have, v)) {
			snprintf(
			    why, size,
			    "%s and %s conflict on runnerSelector key '%s' ('%s' against '%s'): "
			    "no runner can match both",
			    json_string_value(json_object_get(from, key)), who, key,
			    json_string_value(have) ?: "", json_string_value(v) ?: "");
			return false;
		}
	}
	return true;
}

json_t *rz_kind_runner_serves(const json_t *runner)
{
	const json_t *granted = json_object_get(json_object_get(runner, "spec"), "labels");
	const json_t *said = json_object_get(json_object_get(runner, "status"), "labels");
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)said, key, v)
	{
		if (json_is_string(v) && json_equal(json_object_get(granted, key), v)) {
			json_object_set(out, key, v);
		}
	}
	return out;
}

int rz_kind_runner_selector(const json_t *tenant, const json_t *nodegroups, json_t **out,
                            rz_err_t *err)
{
	json_t *merged = json_object(), *from = json_object(), *ng;
	char why[REZUS_ERR_MSG_MAX] = "", who[96];
	bool ok = merged != NULL && from != NULL;
	size_t i;

	*out = NULL;
	ok =
	    ok && merge_selector(merged, from,
	                         json_object_get(json_object_get(tenant, "spec"), "runnerSelector"),
	                         "the tenant", why, sizeof(why));
	json_array_foreach(nodegroups, i, ng)
	{
		if (!ok) {
			break;
		}
		snprintf(who, sizeof(who), "node group '%.64s'",
		         json_string_value(json_object_get(json_object_get(ng, "metadata"), "name"))
		             ?: "");
		ok = merge_selector(merged, from,
		                    json_object_get(json_object_get(ng, "spec"), "runnerSelector"),
		                    who, why, sizeof(why));
	}
	if (ok && json_object_size(merged) > SELECTOR_MAX) {
		snprintf(why, sizeof(why),
		         "the runnerSelectors of the tenant and its node groups make %zu labels "
		         "together: at most %d",
		         json_object_size(merged), SELECTOR_MAX);
		ok = false;
	}
	json_decref(from);
	if (!ok) {
		json_decref(merged);
		return rz_err_set(err, why[0] != '\0' ? REZUS_EINVALID : -ENOMEM, "%s",
		                  why[0] != '\0' ? why : "out of memory");
	}
	*out = merged;
	return 0;
}

/* ------------------------------------------------------------------ ConfigPatch */

static const rz_field_t configpatch_spec[] = {
	{ .name = "patch",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_yaml,
	  .format_name = "yaml",
	  .max_len = 262144,
	  .doc = "Talos machine config patch (YAML)" },
	{ .name = "format", .type = RZ_F_STRING, .enums = patch_formats, .def = "\"strategic\"" },
	{ .name = "targetRole", .type = RZ_F_STRING, .enums = patch_targets, .def = "\"all\"" },
	{ .name = "nodeGroups",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .unique = true,
	  .max_len = 64,
	  .doc = "restrict to these node groups" },
	{ .name = "enabled", .type = RZ_F_BOOL, .def = "true" },
	F_END,
};

static const char *const configpatch_short[] = { "cp", NULL };

/* ------------------------------------------------------------------ Machine */

static const rz_field_t machine_spec[] = {
	{ .name = "nodeGroup", .type = RZ_F_STRING, .format = rz_format_dns1123_label },
	{ .name = "role", .type = RZ_F_STRING, .enums = roles },
	{ .name = "providerId", .type = RZ_F_STRING, .max_len = 1024 },
	{ .name = "providerType", .type = RZ_F_STRING, .max_len = 253 },
	{ .name = "address", .type = RZ_F_STRING, .max_len = 253 },
	{ .name = "addresses", .type = RZ_F_ARRAY, .items = RZ_F_STRING, .max_len = 64 },
	{ .name = "hostname", .type = RZ_F_STRING, .max_len = 253 },
	{ .name = "shape", .type = RZ_F_STRING, .max_len = 253 },
	{ .name = "tfAddress", .type = RZ_F_STRING, .max_len = 1024 },
	F_END,
};

static const rz_field_t machine_status[] = {
	{ .name = "stage", .type = RZ_F_STRING, .enums = rz_machine_stage_names },
	{ .name = "ready", .type = RZ_F_BOOL },
	{ .name = "talosVersion", .type = RZ_F_STRING },
	{ .name = "kubernetesVersion", .type = RZ_F_STRING, .doc = "its kubelet's version" },
	{ .name = "nodeReady", .type = RZ_F_BOOL, .doc = "its Kubernetes node is Ready" },
	{ .name = "lastSeen", .type = RZ_F_TIME },
	{ .name = "lastError", .type = RZ_F_STRING },
	F_END,
};

static const char *const machine_short[] = { "mc", NULL };

/* ------------------------------------------------------------------ Run */

static const rz_field_t run_spec[] = {
	{ .name = "operation", .type = RZ_F_STRING, .required = true, .enums = rz_run_op_names },
	{ .name = "trigger",
	  .type = RZ_F_STRING,
	  .enums = rz_run_trigger_names,
	  .def = "\"manual\"" },
	{ .name = "generation",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX,
	  .doc = "tenant generation the run reconciles" },
	F_END,
};

static const rz_field_t run_changes[] = {
	{ .name = "add", .type = RZ_F_INT, .ranged = true, .min = 0, .max = INT64_MAX },
	{ .name = "change", .type = RZ_F_INT, .ranged = true, .min = 0, .max = INT64_MAX },
	{ .name = "destroy", .type = RZ_F_INT, .ranged = true, .min = 0, .max = INT64_MAX },
	F_END,
};

static const rz_field_t run_diagnostic[] = {
	{ .name = "severity", .type = RZ_F_STRING, .enums = severities },
	{ .name = "summary", .type = RZ_F_STRING },
	{ .name = "detail", .type = RZ_F_STRING },
	{ .name = "address", .type = RZ_F_STRING },
	F_END,
};

static const char *const plan_actions[] = { "create", "update", "replace", "delete", "read", NULL };

static const rz_field_t run_plan_change[] = {
	{ .name = "address", .type = RZ_F_STRING },
	{ .name = "action", .type = RZ_F_STRING, .enums = plan_actions },
	{ .name = "reason", .type = RZ_F_STRING, .doc = "why tofu replaces or deletes it" },
	{ .name = "machine", .type = RZ_F_STRING, .doc = "the Machine it is, if any" },
	F_END,
};

static const rz_field_t run_plan[] = {
	{ .name = "resources",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = run_plan_change },
	{ .name = "more", .type = RZ_F_INT, .doc = "changes beyond the 2000 listed" },
	F_END,
};

static const char *const run_steps[] = { "init", "plan", "show", "apply", NULL };

/* Run.status.stepRunners: a runner name per step. */
static const rz_field_t run_step_runners[] = {
	{ .name = "init", .type = RZ_F_STRING, .max_len = 63 },
	{ .name = "plan", .type = RZ_F_STRING, .max_len = 63 },
	{ .name = "show", .type = RZ_F_STRING, .max_len = 63 },
	{ .name = "apply", .type = RZ_F_STRING, .max_len = 63 },
	F_END,
};

static const rz_field_t run_status[] = {
	{ .name = "phase", .type = RZ_F_STRING, .enums = rz_run_phase_names },
	{ .name = "startedAt", .type = RZ_F_TIME },
	{ .name = "finishedAt", .type = RZ_F_TIME },
	{ .name = "exitCode", .type = RZ_F_INT },
	{ .name = "message", .type = RZ_F_STRING, .doc = "why it failed or was canceled" },
	{ .name = "changes", .type = RZ_F_OBJECT, .fields = run_changes },
	{ .name = "diagnostics",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = run_diagnostic },
	{ .name = "stateSerial", .type = RZ_F_INT },
	{ .name = "runner",
	  .type = RZ_F_STRING,
	  .max_len = 63,
	  .doc = "the remote runner that ran its last step; absent: the daemon's own pool" },
	{ .name = "plan",
	  .type = RZ_F_OBJECT,
	  .fields = run_plan,
	  .doc = "what the plan does, resource by resource (no values)" },
	{ .name = "approvedBy", .type = RZ_F_STRING },
	{ .name = "approvalReason", .type = RZ_F_STRING, .max_len = 1024 },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = condition_fields,
	  .doc = "with remote runners, Scheduled: False (NoRunner) while no Ready runner "
	         "serves the run's pool, True (Claimed) once a runner claimed its step" },
	{ .name = "step",
	  .type = RZ_F_STRING,
	  .enums = run_steps,
	  .doc = "with remote runners: the step whose job is out (init, plan, show, apply)" },
	{ .name = "inputs",
	  .type = RZ_F_STRING,
	  .max_len = 64,
	  .doc = "with remote runners: the digest of the node groups and config patches the run "
	         "composed (as the tenant's appliedInputs)" },
	{ .name = "claimedStep",
	  .type = RZ_F_STRING,
	  .enums = run_steps,
	  .doc = "with remote runners: the last step status.runner claimed; equal to step "
	         "while the runner runs it (a restarted daemon takes the run up again)" },
	{ .name = "stepRunners",
	  .type = RZ_F_OBJECT,
	  .fields = run_step_runners,
	  .doc = "with remote runners: the runner that claimed each step so far" },
	F_END,
};

/* Users start plan and apply runs; destroy runs belong to tenant deletion. */
static void run_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	json_t *spec = json_object_get(obj, "spec");
	const char *op = json_string_value(json_object_get(spec, "operation"));
	const char *trigger = json_string_value(json_object_get(spec, "trigger"));

	if (old == NULL && op != NULL && strcmp(op, "destroy") == 0) {
		rz_fields_cause(causes, "spec.operation", RZ_CAUSE_FORBIDDEN,
		                "destroy runs start when the tenant is deleted");
	}
	if (old == NULL && trigger != NULL && strcmp(trigger, "manual") != 0) {
		rz_fields_cause(causes, "spec.trigger", RZ_CAUSE_FORBIDDEN,
		                "runs created through the API are manual");
	}
	if (old != NULL && !json_equal(spec, json_object_get(old, "spec"))) {
		rz_fields_cause(causes, "spec", RZ_CAUSE_INVALID, "field is immutable");
	}
}

/* ------------------------------------------------------------------ UpgradeRun */

static const rz_field_t upgrade_spec[] = {
	{ .name = "component", .type = RZ_F_STRING, .required = true, .enums = components },
	{ .name = "targetVersion",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_version,
	  .format_name = "version" },
	{ .name = "dryRun",
	  .type = RZ_F_BOOL,
	  .def = "false",
	  .doc = "report the prechecks and the plan, change nothing" },
	{ .name = "trigger",
	  .type = RZ_F_STRING,
	  .enums = upgrade_triggers,
	  .def = "\"manual\"",
	  .doc = "manual, or spec: the tenant's version was changed" },
	F_END,
};

static const rz_field_t upgrade_machine[] = {
	{ .name = "name", .type = RZ_F_STRING },
	{ .name = "role", .type = RZ_F_STRING },
	{ .name = "address", .type = RZ_F_STRING },
	{ .name = "from", .type = RZ_F_STRING },
	{ .name = "to", .type = RZ_F_STRING },
	{ .name = "phase", .type = RZ_F_STRING, .enums = rz_upgrade_step_names },
	{ .name = "startedAt", .type = RZ_F_TIME },
	{ .name = "finishedAt", .type = RZ_F_TIME },
	{ .name = "error", .type = RZ_F_STRING },
	F_END,
};

static const rz_field_t upgrade_precheck[] = {
	{ .name = "name", .type = RZ_F_STRING },
	{ .name = "passed", .type = RZ_F_BOOL },
	{ .name = "message", .type = RZ_F_STRING },
	F_END,
};

static const rz_field_t upgrade_status[] = {
	{ .name = "phase", .type = RZ_F_STRING, .enums = rz_upgrade_phase_names },
	{ .name = "fromVersion", .type = RZ_F_STRING },
	{ .name = "prechecks",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = upgrade_precheck,
	  .doc = "each precheck, passed or with why not" },
	{ .name = "machines",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = upgrade_machine,
	  .doc = "the plan: machines in order, control planes first, and each one's step" },
	{ .name = "current", .type = RZ_F_STRING, .doc = "the machine being upgraded" },
	{ .name = "cancelRequested", .type = RZ_F_BOOL },
	{ .name = "message", .type = RZ_F_STRING },
	{ .name = "startedAt", .type = RZ_F_TIME },
	{ .name = "finishedAt", .type = RZ_F_TIME },
	F_END,
};

static void upgrade_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const char *trigger =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "trigger"));

	if (old == NULL && trigger != NULL && strcmp(trigger, "manual") != 0) {
		rz_fields_cause(causes, "spec.trigger", RZ_CAUSE_FORBIDDEN,
		                "upgrades created through the API are manual");
	}
	if (old != NULL &&
	    !json_equal(json_object_get(obj, "spec"), json_object_get(old, "spec"))) {
		rz_fields_cause(causes, "spec", RZ_CAUSE_INVALID, "field is immutable");
	}
}

static const char *const upgrade_short[] = { "up", NULL };

/* ------------------------------------------------------------------ Event */

/* Kubernetes core/v1 Event's fields, at the top level of the object as it has them (so
 * kubectl reads them where it looks). Written only by the daemon (core/store/events.c). */
/* UpperCamelCase, as kinds and Kubernetes' reasons are: NodeGroup, BackOff. */
static bool camel_case_valid(const char *s, char *msg, size_t size)
{
	bool ok = s[0] >= 'A' && s[0] <= 'Z';

	for (const char *p = s; ok && *p != '\0'; p++) {
		ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		     (*p >= '0' && *p <= '9');
	}
	if (!ok) {
		snprintf(msg, size, "must be UpperCamelCase: letters and digits, e.g. NodeGroup");
	}
	return ok;
}

static const rz_field_t event_object_fields[] = {
	{ .name = "kind",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 63,
	  .format = camel_case_valid,
	  .format_name = "camel-case",
	  .doc = "the object's kind, e.g. NodeGroup" },
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label" },
	{ .name = "uid", .type = RZ_F_STRING, .doc = "the object's metadata.uid when it happened" },
	{ .name = "namespace", .type = RZ_F_STRING, .doc = "its tenant; none for a Tenant" },
	{ .name = "apiVersion", .type = RZ_F_STRING, .doc = "rezuscloud.io/v1" },
	F_END,
};

static const rz_field_t event_source_fields[] = {
	{ .name = "component",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "what noticed it: engine, observer, ..." },
	F_END,
};

static const rz_field_t event_fields[] = {
	{ .name = "involvedObject",
	  .type = RZ_F_OBJECT,
	  .required = true,
	  .fields = event_object_fields,
	  .doc = "the object it is about, in the event's tenant" },
	{ .name = "reason",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 128,
	  .format = camel_case_valid,
	  .format_name = "camel-case",
	  .doc = "UpperCamelCase, for machines: BackOff, ScaledUp" },
	{ .name = "message", .type = RZ_F_STRING, .max_len = 1024, .doc = "for people" },
	{ .name = "type", .type = RZ_F_STRING, .required = true, .enums = event_types },
	{ .name = "count",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 1,
	  .max = INT64_MAX,
	  .doc = "how many times it happened" },
	{ .name = "firstTimestamp", .type = RZ_F_TIME, .doc = "when it first happened" },
	{ .name = "lastTimestamp", .type = RZ_F_TIME, .doc = "when it last happened" },
	{ .name = "source", .type = RZ_F_OBJECT, .fields = event_source_fields },
	F_END,
};

static const char *const event_short[] = { "ev", NULL };
static const char *const event_selectable[] = { "involvedObject.kind",
	                                        "involvedObject.name",
	                                        "involvedObject.namespace",
	                                        "involvedObject.uid",
	                                        "involvedObject.apiVersion",
	                                        "reason",
	                                        "type",
	                                        NULL };

/* ------------------------------------------------------------------ Provider */

static const rz_field_t provider_spec[] = {
	{ .name = "name", .type = RZ_F_STRING },
	{ .name = "version", .type = RZ_F_STRING },
	{ .name = "abiVersion", .type = RZ_F_STRING },
	{ .name = "description", .type = RZ_F_STRING },
	{ .name = "kinds", .type = RZ_F_ARRAY, .items = RZ_F_STRING, .enums = provider_kinds },
	{ .name = "configSchema", .type = RZ_F_ANY },
	{ .name = "providerConfigSchema", .type = RZ_F_ANY },
	F_END,
};

static const rz_field_t provider_status[] = {
	{ .name = "loaded", .type = RZ_F_BOOL },
	{ .name = "error", .type = RZ_F_STRING },
	F_END,
};

static const char *const provider_short[] = { "pv", NULL };

/* ------------------------------------------------------------------ User, APIToken */

/* "none": no role on the installation; what AccessBindings grant on tenants only */
static const char *const user_roles[] = { "none", "view", "edit", "admin", NULL };

static bool password_valid(const char *s, char *msg, size_t size)
{
	size_t len = strlen(s);

	if (len < 8 || len > 1024) {
		snprintf(msg, size, "must be 8 to 1024 characters");
		return false;
	}
	return true;
}

/* Set for a user single sign-on made: who it is at the provider. */
static const rz_field_t user_identity[] = {
	{ .name = "issuer",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 256,
	  .doc = "the OpenID provider's issuer" },
	{ .name = "subject",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 255,
	  .doc = "the user's subject (sub) there" },
	F_END,
};

static const rz_field_t user_spec[] = {
	{ .name = "role", .type = RZ_F_STRING, .required = true, .enums = user_roles },
	{ .name = "password",
	  .type = RZ_F_STRING,
	  .format = password_valid,
	  .format_name = "password",
	  .doc = "write-only; never returned" },
	{ .name = "disabled", .type = RZ_F_BOOL, .def = "false" },
	{ .name = "groups",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .max_len = RZ_USER_GROUPS_MAX,
	  .unique = true,
	  .doc = "the groups the user is in, which AccessBindings may name (subjects of kind "
	         "Group)" },
	{ .name = "identity",
	  .type = RZ_F_OBJECT,
	  .fields = user_identity,
	  .doc = "set by single sign-on when it made the user (at its first login), never "
	         "through the API: such a user has no password and signs in at its provider" },
	F_END,
};

static const rz_field_t user_status[] = {
	{ .name = "lastLogin", .type = RZ_F_TIME },
	{ .name = "mustChangePassword", .type = RZ_F_BOOL },
	F_END,
};

/* A new user needs a password; names are DNS labels like every object's. spec.identity is
 * single sign-on's: the API neither sets nor changes it, and a user with one has no
 * password. */
static void user_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *id = json_object_get(spec, "identity");
	const json_t *was = json_object_get(json_object_get(old, "spec"), "identity");

	(void)k;
	if (!(id == NULL && was == NULL) && !json_equal(id, was)) {
		rz_fields_cause(causes, "spec.identity", RZ_CAUSE_FORBIDDEN,
		                "set by single sign-on at the user's first login, never through "
		                "the API");
	} else if (id != NULL && json_object_get(spec, "password") != NULL) {
		rz_fields_cause(causes, "spec.password", RZ_CAUSE_FORBIDDEN,
		                "a user of single sign-on has no password");
	} else if (old == NULL && json_object_get(spec, "password") == NULL) {
		rz_fields_cause(causes, "spec.password", RZ_CAUSE_REQUIRED, "required");
	}
}

/* A token made already expired would be refused at its first use: say so at its making. */
static void token_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const char *at =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "expiresAt"));
	int64_t ms = at != NULL ? rz_clock_parse(at) : -1;

	const char *scope =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "scope"));
	bool runner = json_object_get(json_object_get(obj, "spec"), "runner") != NULL;

	(void)k;
	if (old == NULL && ms >= 0 && ms <= rz_clock_now_ms()) {
		rz_fields_cause(causes, "spec.expiresAt", RZ_CAUSE_INVALID,
		                "must be in the future (a token that has expired cannot be used)");
	}
	/* a runner token speaks for one runner: a claim under another runner's name is 403 */
	if (scope != NULL && strcmp(scope, "runner") == 0 && !runner) {
		rz_fields_cause(causes, "spec.runner", RZ_CAUSE_REQUIRED,
		                "required with spec.scope runner: the runner (runner.name) the "
		                "token belongs to");
	} else if ((scope == NULL || strcmp(scope, "runner") != 0) && runner) {
		rz_fields_cause(causes, "spec.runner", RZ_CAUSE_FORBIDDEN,
		                "only with spec.scope runner");
	}
}

static const char *const token_scopes[] = { "runner", NULL };

static const rz_field_t token_spec[] = {
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .enums = user_roles,
	  .doc = "at most the owner's role; the owner's role when absent" },
	{ .name = "scope",
	  .type = RZ_F_STRING,
	  .enums = token_scopes,
	  .doc = "runner: the token of a remote runner, good only to claim runs and report "
	         "their files (docs/runners.md); absent: every route its role allows" },
	{ .name = "runner",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "with spec.scope runner (and only then; required): the Runner the token "
	         "belongs to; it claims runs and reports files under that name only" },
	{ .name = "expiresAt", .type = RZ_F_TIME },
	{ .name = "description", .type = RZ_F_STRING, .max_len = 256 },
	F_END,
};

static const rz_field_t token_status[] = {
	{ .name = "lastUsed", .type = RZ_F_TIME },
	F_END,
};
static const char *const no_short[] = { NULL };

/* ------------------------------------------------------------------ Backup */

static const char *const backup_triggers[] = { "manual", "schedule", NULL };
static const char *const backup_phases[] = { "Running", "Completed", "Failed", "Damaged", NULL };

static const rz_field_t backup_spec[] = {
	{ .name = "trigger",
	  .type = RZ_F_STRING,
	  .enums = backup_triggers,
	  .def = "\"manual\"",
	  .doc = "asked for (manual) or backup.interval's (schedule)" },
	F_END,
};

static const rz_field_t backup_key_fields[] = {
	{ .name = "included",
	  .type = RZ_F_BOOL,
	  .doc = "the state key is in the file, sealed with backup.passphrase_file's passphrase" },
	{ .name = "fingerprint",
	  .type = RZ_F_STRING,
	  .doc = "names the state key (data_dir/state.key) the TF states are sealed with" },
	F_END,
};

static const rz_field_t backup_db_fields[] = {
	{ .name = "bytes", .type = RZ_F_INT, .doc = "the database, unpacked" },
	{ .name = "compression", .type = RZ_F_STRING },
	F_END,
};

static const rz_field_t backup_status[] = {
	{ .name = "phase", .type = RZ_F_STRING, .enums = backup_phases },
	{ .name = "message", .type = RZ_F_STRING, .doc = "why it failed, or what is damaged" },
	{ .name = "file", .type = RZ_F_STRING, .doc = "the file in the backup directory" },
	{ .name = "size", .type = RZ_F_INT, .doc = "the file's bytes" },
	{ .name = "rezuscloudVersion", .type = RZ_F_STRING },
	{ .name = "schemaVersion", .type = RZ_F_INT },
	{ .name = "revision",
	  .type = RZ_F_INT,
	  .doc = "the store's revision at the snapshot: every write up to it is in the backup" },
	{ .name = "objects", .type = RZ_F_ANY, .doc = "objects by kind" },
	{ .name = "stateVersions", .type = RZ_F_INT, .doc = "TF state versions" },
	{ .name = "stateTenants", .type = RZ_F_INT, .doc = "tenants with TF state" },
	{ .name = "sealedOutputs", .type = RZ_F_INT, .doc = "sensitive outputs kept sealed" },
	{ .name = "users", .type = RZ_F_INT },
	{ .name = "auditRows", .type = RZ_F_INT },
	{ .name = "database", .type = RZ_F_OBJECT, .fields = backup_db_fields },
	{ .name = "stateKey", .type = RZ_F_OBJECT, .fields = backup_key_fields },
	F_END,
};

/* ------------------------------------------------------------------ Runner */

static const char *const runner_phases[] = { "Ready", "Stopping", "Lost", "Offline", NULL };

static const rz_field_t runner_spec[] = {
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "the labels the runner is granted: runs are routed to it by those of its "
	         "runner.labels that are here, no others (an admin's; taken from its first "
	         "heartbeat when absent: docs/runners.md, \"Labels\")" },
	F_END,
};

static const rz_field_t runner_status[] = {
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "runner.labels, as its heartbeat says: those also in spec.labels route runs "
	         "to it" },
	{ .name = "refusedLabels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "the labels its heartbeat says that spec.labels does not grant: no run is "
	         "routed to it by them" },
	{ .name = "version", .type = RZ_F_STRING, .max_len = 64 },
	{ .name = "concurrency",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 1,
	  .max = 64,
	  .doc = "runs it takes at once (runner.concurrency)" },
	{ .name = "running",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .doc = "the runs in progress on it" },
	{ .name = "startedAt", .type = RZ_F_TIME, .doc = "when the runner process started" },
	{ .name = "lastHeartbeat", .type = RZ_F_TIME, .doc = "when its last heartbeat came" },
	{ .name = "phase", .type = RZ_F_STRING, .enums = runner_phases },
	F_END,
};

static const char *const runner_short[] = { "rn", NULL };

/* ------------------------------------------------------------------ AccessBinding */

static const char *const binding_roles[] = { "view", "edit", "admin", NULL };
static const char *const subject_kinds[] = { "User", "Group", NULL };

static const rz_field_t binding_subject[] = {
	{ .name = "kind", .type = RZ_F_STRING, .required = true, .enums = subject_kinds },
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_dns1123_label,
	  .doc = "the user's or the group's name" },
	F_END,
};

static const rz_field_t binding_tenants[] = {
	{ .name = "names",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .max_len = 256,
	  .unique = true,
	  .doc = "these tenants by name" },
	{ .name = "selector",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = 16,
	  .doc = "the tenants whose labels hold every pair (matchLabels; {} matches every "
	         "tenant)" },
	F_END,
};

static const rz_field_t binding_spec[] = {
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = binding_roles,
	  .doc = "what the subjects may do on the tenants: view reads them, edit changes them, "
	         "admin also does what needs the admin role on a tenant (its TF state's "
	         "rollback, say)" },
	{ .name = "subjects",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = binding_subject,
	  .required = true,
	  .max_len = 64,
	  .doc = "the users and groups granted the role" },
	{ .name = "tenants",
	  .type = RZ_F_OBJECT,
	  .fields = binding_tenants,
	  .required = true,
	  .doc = "the tenants it grants the role on: those named, and those the selector "
	         "matches" },
	F_END,
};

/* A binding grants something: a subject, and tenants by name or selector. */
static void binding_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *t = json_object_get(spec, "tenants");

	(void)k;
	(void)old;
	if (json_array_size(json_object_get(spec, "subjects")) == 0) {
		rz_fields_cause(causes, "spec.subjects", RZ_CAUSE_REQUIRED,
		                "names no user or group: the binding would grant nothing");
	}
	if (json_object_get(t, "names") == NULL && json_object_get(t, "selector") == NULL) {
		rz_fields_cause(causes, "spec.tenants", RZ_CAUSE_REQUIRED,
		                "needs names or a selector ({} for every tenant)");
	}
}

static const char *const binding_short[] = { "ab", NULL };

/* ------------------------------------------------------------------ the table */

/* Everyone reads, editors write, only controllers (admins) write status. */
#define STD_ROLES                                                                                  \
	.read_role = RZ_ROLE_VIEW, .write_role = RZ_ROLE_EDIT, .status_role = RZ_ROLE_ADMIN

static const rz_kind_t kinds[] = {
	{ .kind = "Tenant",
	  .plural = "tenants",
	  .singular = "tenant",
	  .short_names = tenant_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL,
	  .doc = "a Kubernetes cluster on Talos Linux",
	  .spec = tenant_spec,
	  .status = tenant_status,
	  .finalizers = tenant_finalizers,
	  .check = tenant_check,
	  .initial_status = "{\"phase\": \"Pending\"}",
	  STD_ROLES },
	{ .kind = "NodeGroup",
	  .plural = "nodegroups",
	  .singular = "nodegroup",
	  .short_names = nodegroup_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_ALL,
	  .doc = "a set of machines of one role on one provider",
	  .spec = nodegroup_spec,
	  .status = nodegroup_status,
	  .check = nodegroup_check,
	  STD_ROLES },
	{ .kind = "ConfigPatch",
	  .plural = "configpatches",
	  .singular = "configpatch",
	  .short_names = configpatch_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a Talos machine config overlay",
	  .spec = configpatch_spec,
	  .status = NULL,
	  STD_ROLES },
	{ .kind = "Machine",
	  .plural = "machines",
	  .singular = "machine",
	  .short_names = machine_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_STATUS,
	  .doc = "a node, projected from the tenant's TF state",
	  .spec = machine_spec,
	  .status = machine_status,
	  STD_ROLES },
	{ .kind = "Run",
	  .plural = "runs",
	  .singular = "run",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_STATUS,
	  .doc = "one tofu execution",
	  .spec = run_spec,
	  .status = run_status,
	  .name_prefix = "run-",
	  .check = run_check,
	  .initial_status = "{\"phase\": \"Queued\"}",
	  STD_ROLES },
	{ .kind = "UpgradeRun",
	  .plural = "upgrades",
	  .singular = "upgrade",
	  .short_names = upgrade_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_DELETE | RZ_VERB_STATUS,
	  .doc = "a rolling Talos or Kubernetes upgrade",
	  .spec = upgrade_spec,
	  .status = upgrade_status,
	  .name_prefix = "upgrade-",
	  .check = upgrade_check,
	  .initial_status = "{\"phase\": \"Pending\"}",
	  STD_ROLES },
	{ .kind = "Event",
	  .plural = "events",
	  .singular = "event",
	  .short_names = event_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ,
	  .doc = "what the engine or the observer noticed about an "
	         "object, counted",
	  .top = event_fields,
	  .selectable = event_selectable,
	  STD_ROLES },
	{ .kind = "Provider",
	  .plural = "providers",
	  .singular = "provider",
	  .short_names = provider_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_READ,
	  .doc = "a loaded provider plugin",
	  .spec = provider_spec,
	  .status = provider_status,
	  STD_ROLES },
	{ .kind = "Runner",
	  .plural = "runners",
	  .singular = "runner",
	  .short_names = runner_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a remote runner (rezuscloud runner): the labels an admin grants it (spec), "
	         "and what the daemon keeps from its NATS heartbeats (status)",
	  .spec = runner_spec,
	  .status = runner_status, /* the daemon's only */
	  .read_role = RZ_ROLE_VIEW,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN },
	{ .kind = "AccessBinding",
	  .plural = "accessbindings",
	  .singular = "accessbinding",
	  .short_names = binding_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a role (view, edit, admin) on some tenants, granted to users and groups "
	         "beside their role on the whole installation (docs/security.md, \"Access per "
	         "tenant\")",
	  .spec = binding_spec,
	  .check = binding_check,
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN },
	{ .kind = "User",
	  .plural = "users",
	  .singular = "user",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a person or robot who signs in",
	  .spec = user_spec,
	  .status = user_status,
	  .check = user_check,
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN,
	  .secret_field = "password" },
	{ .kind = "APIToken",
	  .plural = "tokens",
	  .singular = "token",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_USER,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_DELETE,
	  .doc = "a bearer token acting for its user",
	  .spec = token_spec,
	  .status = token_status,
	  .check = token_check,
	  .name_prefix = "tok-",
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN,
	  .owner_may = true },
	{ .kind = "Backup",
	  .plural = "backups",
	  .singular = "backup",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERB_GET | RZ_VERB_LIST | RZ_VERB_CREATE | RZ_VERB_DELETE,
	  .doc = "a backup of the management plane: the database with "
	         "every TF state version, the state key sealed or "
	         "left out (core/api/backups.c)",
	  .spec = backup_spec,
	  .status = backup_status,
	  .name_prefix = "backup-",
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN,
	  .outside_store = true }
};

const rz_kind_t *rz_kinds(size_t *count)
{
	*count = sizeof(kinds) / sizeof(kinds[0]);
	return kinds;
}

size_t rz_kind_validate_top(const rz_kind_t *k, const json_t *obj, json_t *causes)
{
	json_t *sub; /* the members alone; shared with obj, and only read */
	size_t n;

	if (k->top == NULL) {
		return 0;
	}
	if ((sub = json_object()) == NULL) {
		rz_fields_cause(causes, "", RZ_CAUSE_INVALID, "out of memory");
		return 1;
	}
	for (const rz_field_t *f = k->top; f->name != NULL; f++) {
		if (json_object_get(obj, f->name) != NULL) {
			json_object_set(sub, f->name, json_object_get(obj, f->name));
		}
	}
	n = (size_t)rz_fields_validate(sub, k->top, "", false, causes);
	json_decref(sub);
	return n;
}

const rz_kind_t *rz_kind_by_plural(const char *plural)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].plural, plural) == 0) {
			return &kinds[i];
		}
	}
	return NULL;
}

const rz_kind_t *rz_kind_by_name(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].kind, kind) == 0) {
			return &kinds[i];
		}
	}
	return NULL;
}

const char *rz_kind_owner_field(const rz_kind_t *k)
{
	switch (k->scope) {
	case RZ_SCOPE_TENANT:
		return "tenant";
	case RZ_SCOPE_USER:
		return "user";
	default:
		return NULL;
	}
}

const rz_kind_t *rz_kind_owner(const rz_kind_t *k)
{
	switch (k->scope) {
	case RZ_SCOPE_TENANT:
		return rz_kind_by_name("Tenant");
	case RZ_SCOPE_USER:
		return rz_kind_by_name("User");
	default:
		return NULL;
	}
}

bool rz_kind_tenanted(const rz_kind_t *k)
{
	return k->scope == RZ_SCOPE_TENANT || strcmp(k->kind, "Tenant") == 0;
}

int rz_kind_role(const rz_kind_t *k, unsigned verb)
{
	if (verb & RZ_VERBS_READ) {
		return k->read_role;
	}
	return verb == RZ_VERB_STATUS ? k->status_role : k->write_role;
}

const char *rz_verb_name(unsigned verb)
{
	static const char *const names[] = { "get",    "list",  "watch",  "create",
		                             "update", "patch", "delete", "update status" };
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (verb == (1u << i)) {
			return names[i];
		}
	}
	return "unknown";
}

/* apiVersion and kind, when given, are this kind's; no member but the known ones. */
static void check_top(const rz_kind_t *k, json_t *obj, json_t *causes)
{
	static const char *const top[] = { "apiVersion", "kind", "metadata", "spec", "status" };
	const char *key;
	json_t *v;
	json_t *api = json_object_get(obj, "apiVersion");
	json_t *kind = json_object_get(obj, "kind");

	if (api != NULL &&
	    (!json_is_string(api) || (strcmp(json_string_value(api), RZ_API_VERSION) != 0 &&
	                              strcmp(json_string_value(api), "v1") != 0))) {
		rz_fields_cause(causes, "apiVersion", RZ_CAUSE_NOT_SUPPORTED,
		                "supported values: \"%s\", \"v1\"", RZ_API_VERSION);
	}
	if (kind != NULL && (!json_is_string(kind) || strcmp(json_string_value(kind), k->kind))) {
		rz_fields_cause(causes, "kind", RZ_CAUSE_NOT_SUPPORTED, "supported values: \"%s\"",
		                k->kind);
	}
	json_object_foreach(obj, key, v)
	{
		bool known = false;
		for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
			known = known || strcmp(key, top[i]) == 0;
		}
		for (const rz_field_t *f = k->top; f != NULL && f->name != NULL; f++) {
			known = known || strcmp(key, f->name) == 0;
		}
		if (!known) {
			rz_fields_cause(causes, key, RZ_CAUSE_INVALID, "unknown field");
		}
	}
}

size_t rz_kind_validate_spec_write(const rz_kind_t *k, json_t *obj, const json_t *old,
                                   json_t *causes)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *spec = json_object_get(obj, "spec");

	check_top(k, obj, causes);
	if (meta == NULL || json_is_null(meta)) {
		json_object_set_new(obj, "metadata", json_object());
	} else if (!json_is_object(meta)) {
		rz_fields_cause(causes, "metadata", RZ_CAUSE_INVALID, "expected an object");
	} else {
		rz_fields_validate(meta, rz_kind_metadata_fields(), "metadata", false, causes);
	}
	if (spec == NULL || json_is_null(spec)) {
		spec = json_object();
		json_object_set_new(obj, "spec", spec);
	}
	if (!json_is_object(spec)) {
		rz_fields_cause(causes, "spec", RZ_CAUSE_INVALID, "expected an object");
	} else if (old == NULL || !json_equal(spec, json_object_get(old, "spec"))) {
		/* an unchanged spec (a write of labels, annotations or finalizers) passed when it
		 * was written: checking it again would only refuse old objects new rules reject */
		rz_fields_validate(spec, k->spec, "spec", true, causes);
	}
	if (json_array_size(causes) == 0 && k->check != NULL) {
		k->check(k, obj, old, causes);
	}
	return json_array_size(causes);
}

size_t rz_kind_validate_status_write(const rz_kind_t *k, json_t *obj, json_t *causes)
{
	json_t *status = json_object_get(obj, "status");

	check_top(k, obj, causes);
	rz_kind_validate_top(k, obj, causes);
	if (status == NULL || json_is_null(status)) {
		return json_array_size(causes);
	}
	if (!json_is_object(status)) {
		rz_fields_cause(causes, "status", RZ_CAUSE_INVALID, "expected an object");
	} else if (k->status == NULL) {
		rz_fields_cause(causes, "status", RZ_CAUSE_FORBIDDEN, "%s has no status", k->kind);
	} else {
		rz_fields_validate(status, k->status, "status", false, causes);
	}
	return json_array_size(causes);
}
