/* core/model/schema-tenant.c - the field schemas and checks of Tenant, NodeGroup, ConfigPatch
 * and Machine (SPEC §4), for the kind table (core/model/kinds.c). */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/model/kinds-int.h"
#include "core/model/states.h"

static const char *const phases_tenant[] = { "Pending",  "Provisioning", "Ready", "Degraded",
	                                     "Deleting", "Failed",       NULL };
static const char *const roles[] = { "controlplane", "worker", NULL };
static const char *const taint_effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
static const char *const patch_formats[] = { "strategic", "json6902", NULL };
static const char *const patch_targets[] = { "all", "controlplane", "worker", NULL };

/* ------------------------------------------------------------------ Tenant */

const rz_field_t rz__schema_tenant_spec[] = {
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

const rz_field_t rz__schema_tenant_status[] = {
	{ .name = "phase", .type = RZ_F_STRING, .enums = phases_tenant },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields },
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
void rz__schema_tenant_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	json_t *spec = json_object_get(obj, "spec");
	json_t *sel = json_object_get(spec, "runnerSelector");

	if (json_is_object(sel) && json_object_size(sel) > RZ__SELECTOR_MAX) {
		rz_fields_cause(causes, "spec.runnerSelector", RZ_CAUSE_INVALID,
		                "at most %d labels", RZ__SELECTOR_MAX);
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

const rz_field_t rz__schema_nodegroup_spec[] = {
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
	  .max_len = RZ__SELECTOR_MAX,
	  .doc = "with remote runners: labels a runner needs besides the tenant's "
	         "spec.runnerSelector (a run applies every node group: its runner matches "
	         "all of them, at most 3 labels together; docs/runners.md)" },
	F_END,
};

const rz_field_t rz__schema_nodegroup_status[] = {
	{ .name = "desired", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000 },
	{ .name = "total", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "ready", .type = RZ_F_INT, .ranged = true, .min = 0, .max = 1000000 },
	{ .name = "observedGeneration", .type = RZ_F_INT },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields },
	F_END,
};

/* A node group's role cannot change: machines would have to be rebuilt in another role. */
void rz__schema_nodegroup_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const char *now = json_string_value(json_object_get(json_object_get(obj, "spec"), "role"));
	const char *was = json_string_value(json_object_get(json_object_get(old, "spec"), "role"));

	if (old != NULL && now != NULL && was != NULL && strcmp(now, was) != 0) {
		rz_fields_cause(causes, "spec.role", RZ_CAUSE_INVALID,
		                "field is immutable (was \"%s\")", was);
	}
}

/* ------------------------------------------------------------------ ConfigPatch */

const rz_field_t rz__schema_configpatch_spec[] = {
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

/* ------------------------------------------------------------------ Machine */

const rz_field_t rz__schema_machine_spec[] = {
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

const rz_field_t rz__schema_machine_status[] = {
	{ .name = "stage", .type = RZ_F_STRING, .enums = rz_machine_stage_names },
	{ .name = "ready", .type = RZ_F_BOOL },
	{ .name = "talosVersion", .type = RZ_F_STRING },
	{ .name = "kubernetesVersion", .type = RZ_F_STRING, .doc = "its kubelet's version" },
	{ .name = "nodeReady", .type = RZ_F_BOOL, .doc = "its Kubernetes node is Ready" },
	{ .name = "lastSeen", .type = RZ_F_TIME },
	{ .name = "lastError", .type = RZ_F_STRING },
	F_END,
};
