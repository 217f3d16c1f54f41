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

static const char *const etcd_targets[] = { "local", "s3", NULL };

static const rz_field_t etcd_backup_fields[] = {
	{ .name = "interval",
	  .type = RZ_F_STRING,
	  .max_len = 32,
	  .format = rz_format_duration,
	  .format_name = "duration",
	  .doc = "Time between snapshots, e.g. 6h, 30m, 1d; 0 turns them off (default: "
	         "etcd_backup.interval)." },
	{ .name = "keep",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 1,
	  .max = 1000,
	  .doc = "How many succeeded snapshots are kept; the oldest beyond go, with their stored "
	         "files (default: etcd_backup.keep)." },
	{ .name = "target",
	  .type = RZ_F_STRING,
	  .enums = etcd_targets,
	  .doc = "Where snapshots go: local (etcd_backup.dir) or s3 (etcd_backup.s3); default: "
	         "etcd_backup.target." },
	F_END,
};

const rz_field_t rz__schema_tenant_spec[] = {
	{ .name = "clusterProvider",
	  .type = RZ_F_STRING,
	  .def = "\"talos\"",
	  .format = rz_format_dns1123_label,
	  .doc = "The cluster plugin that makes the tenant's Kubernetes: talos (the default) for "
	         "Talos Linux machines, sim for a simulated cluster; a DNS-1123 label naming a "
	         "loaded Provider of kind cluster." },
	{ .name = "kubernetesVersion",
	  .type = RZ_F_STRING,
	  .def = "\"1.35.0\"",
	  .format = rz_format_version,
	  .format_name = "version",
	  .doc = "The Kubernetes version to run, MAJOR.MINOR.PATCH (default 1.35.0). Changing it "
	         "on a running cluster starts an UpgradeRun of component kubernetes." },
	{ .name = "talosVersion",
	  .type = RZ_F_STRING,
	  .def = "\"1.12.0\"",
	  .format = rz_format_version,
	  .format_name = "version",
	  .doc = "The Talos Linux version new machines boot, MAJOR.MINOR.PATCH (default 1.12.0); a "
	         "node group may override it. Changing it on a running cluster starts an "
	         "UpgradeRun of component talos." },
	{ .name = "controlPlaneEndpoint",
	  .type = RZ_F_STRING,
	  .format = rz_format_url,
	  .format_name = "uri",
	  .doc =
	      "The URL of the cluster's Kubernetes API (https://HOST:6443), e.g. a load "
	      "balancer's; when empty the daemon uses the first control plane machine's address." },
	{ .name = "podSubnets",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_cidr,
	  .format_name = "cidr",
	  .unique = true,
	  .max_len = 2,
	  .def = "[\"10.244.0.0/16\"]",
	  .doc = "The CIDRs pods get addresses from (default [10.244.0.0/16]): one, or two of "
	         "different families for dual stack; none may equal a service subnet." },
	{ .name = "serviceSubnets",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_cidr,
	  .format_name = "cidr",
	  .unique = true,
	  .max_len = 2,
	  .def = "[\"10.96.0.0/12\"]",
	  .doc = "The CIDRs Kubernetes services get addresses from (default [10.96.0.0/12]): one, "
	         "or two of different families for dual stack; none may equal a pod subnet." },
	{ .name = "runnerSelector",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "With remote runners: the labels (at most 3) a runner needs to run this tenant's "
	         "tofu, merged with its node groups' (docs/runners.md); empty or absent: any "
	         "runner." },
	{ .name = "etcdBackup",
	  .type = RZ_F_OBJECT,
	  .fields = etcd_backup_fields,
	  .doc = "Scheduled snapshots of the cluster's etcd (docs/backups.md, \"Tenants' etcd\"); "
	         "each member left out takes rezus.conf's etcd_backup default." },
	F_END,
};

static const rz_field_t last_run_fields[] = {
	{ .name = "id",
	  .type = RZ_F_STRING,
	  .doc = "The run's name (run-...), under the tenant's runs." },
	{ .name = "operation",
	  .type = RZ_F_STRING,
	  .enums = rz_run_op_names,
	  .doc = "What it ran: plan, apply or destroy." },
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = rz_run_phase_names,
	  .doc = "Its phase when last seen: Queued, Running, AwaitingApproval, Succeeded, Failed, "
	         "Canceled or Interrupted." },
	{ .name = "finishedAt",
	  .type = RZ_F_TIME,
	  .doc = "When it ended (RFC 3339, UTC); absent while it runs." },
	{ .name = "error", .type = RZ_F_STRING, .doc = "Why it failed, when it did." },
	F_END,
};

static const rz_field_t machine_counts[] = {
	{ .name = "desired",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "Machines the node groups ask for: the sum of their spec.count." },
	{ .name = "total",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "Machines that exist: Machine objects projected from the TF state." },
	{ .name = "ready",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "Machines that are ready (status.ready of each Machine)." },
	F_END,
};

static const rz_field_t control_plane_fields[] = {
	{ .name = "healthy",
	  .type = RZ_F_BOOL,
	  .doc = "Whether the cluster plugin found the control plane healthy: etcd and the "
	         "Kubernetes API answering." },
	{ .name = "etcdMembers",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "How many etcd members it found." },
	{ .name = "nodes",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "How many Kubernetes nodes the API lists." },
	{ .name = "nodesReady",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "How many of those are Ready." },
	{ .name = "error",
	  .type = RZ_F_STRING,
	  .max_len = 4096,
	  .doc = "Why the last observation failed, or what is unhealthy; absent when healthy." },
	F_END,
};

const rz_field_t rz__schema_tenant_status[] = {
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = phases_tenant,
	  .doc = "Where the tenant is, derived by the daemon: Pending (nothing applied yet), "
	         "Provisioning (machines coming up), Ready, Degraded (something unhealthy), "
	         "Deleting (its destroy run), Failed (the last run failed)." },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields,
	  .doc = "Kubernetes conditions, one per type: Ready, Reconciled (the last apply "
	         "reconciled the spec), MachinesReady, ControlPlaneReady, Drifted (a resync found "
	         "changes). Written by the daemon." },
	{ .name = "observedGeneration",
	  .type = RZ_F_INT,
	  .doc = "The metadata.generation the last finished apply reconciled: less than "
	         "metadata.generation while a change waits or runs." },
	{ .name = "lastRun",
	  .type = RZ_F_OBJECT,
	  .fields = last_run_fields,
	  .doc = "The tenant's last run, as the engine last recorded it." },
	{ .name = "machines",
	  .type = RZ_F_OBJECT,
	  .fields = machine_counts,
	  .doc = "Counts of the tenant's machines over every node group, recomputed after every "
	         "apply and observation." },
	{ .name = "lastApplied",
	  .type = RZ_F_TIME,
	  .doc = "When an apply last succeeded (RFC 3339, UTC)." },
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
	{ .name = "talosVersion",
	  .type = RZ_F_STRING,
	  .doc = "The Talos version the machines run, as observed (one version: the oldest while "
	         "an upgrade is under way)." },
	{ .name = "kubernetesVersion",
	  .type = RZ_F_STRING,
	  .doc = "The Kubernetes version the control plane runs, as observed." },
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
	{ .name = "key",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_label_key,
	  .doc = "The taint's key: a Kubernetes label key." },
	{ .name = "value",
	  .type = RZ_F_STRING,
	  .format = rz_format_label_value,
	  .doc = "The taint's value: a Kubernetes label value; may be empty." },
	{ .name = "effect",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = taint_effects,
	  .doc = "What the taint does to pods that do not tolerate it: NoSchedule, "
	         "PreferNoSchedule or NoExecute." },
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
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = roles,
	  .doc = "controlplane (runs etcd and the Kubernetes control plane) or worker. Cannot "
	         "change after creation." },
	{ .name = "count",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000,
	  .def = "1",
	  .doc = "How many machines the group should have, 0 to 1000 (default 1). Changing it "
	         "starts an apply that adds or removes machines." },
	{ .name = "providerClass",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = provider_class_valid,
	  .format_name = "provider-class",
	  .doc = "Where the machines come from: <plugin>[:<class>], the infrastructure plugin and "
	         "its class of machine, e.g. oci:VM.Standard.A1.Flex, openstack:SCS-4V-8-50, "
	         "metal, sim." },
	{ .name = "providerConfig",
	  .type = RZ_F_ANY,
	  .def = "{}",
	  .doc = "The plugin's settings for these machines (image, network, sizes, ...): an object "
	         "the plugin named in providerClass validates against its Provider's "
	         "spec.providerConfigSchema (default {})." },
	{ .name = "talosVersion",
	  .type = RZ_F_STRING,
	  .format = rz_format_version,
	  .format_name = "version",
	  .doc = "The Talos version these machines boot, MAJOR.MINOR.PATCH, overriding the "
	         "tenant's spec.talosVersion; absent: the tenant's." },
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = 64,
	  .doc = "Kubernetes labels the group's nodes get (rendered into their Talos machine "
	         "config); at most 64." },
	{ .name = "taints",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = taint_fields,
	  .max_len = 32,
	  .doc = "Kubernetes taints the group's nodes get (rendered into their Talos machine "
	         "config); at most 32." },
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
	{ .name = "desired",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000,
	  .doc = "spec.count as the last apply saw it." },
	{ .name = "total",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "The group's machines that exist (Machine objects projected from the TF state)." },
	{ .name = "ready",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = 1000000,
	  .doc = "The group's machines that are ready." },
	{ .name = "observedGeneration",
	  .type = RZ_F_INT,
	  .doc = "The metadata.generation the last finished apply reconciled." },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields,
	  .doc = "Kubernetes conditions: Ready (every desired machine exists and is ready). "
	         "Written by the daemon." },
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
	  .doc = "The patch of the Talos machine config, as YAML (at most 256 KiB): a strategic "
	         "merge patch, or an RFC 6902 JSON patch in YAML form, as format says." },
	{ .name = "format",
	  .type = RZ_F_STRING,
	  .enums = patch_formats,
	  .def = "\"strategic\"",
	  .doc = "How patch applies: strategic (a Talos strategic merge patch; the default) or "
	         "json6902 (a list of JSON patch operations)." },
	{ .name = "targetRole",
	  .type = RZ_F_STRING,
	  .enums = patch_targets,
	  .def = "\"all\"",
	  .doc = "Which machines it applies to: all (the default), controlplane or worker." },
	{ .name = "nodeGroups",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .unique = true,
	  .max_len = 64,
	  .doc = "Restrict the patch to these node groups of the tenant (names; at most 64); "
	         "absent or empty: every group of targetRole." },
	{ .name = "enabled",
	  .type = RZ_F_BOOL,
	  .def = "true",
	  .doc = "false leaves the patch out of the machine configs without deleting it (default "
	         "true). Patches apply in name order." },
	F_END,
};

/* ------------------------------------------------------------------ Machine */

const rz_field_t rz__schema_machine_spec[] = {
	{ .name = "nodeGroup",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .doc = "The node group the machine belongs to. Written by projection from the TF state, "
	         "as is all of spec." },
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .enums = roles,
	  .doc = "controlplane or worker: its node group's role." },
	{ .name = "providerId",
	  .type = RZ_F_STRING,
	  .max_len = 1024,
	  .doc = "The machine's id at its provider (the cloud instance's id, the metal host's "
	         "name)." },
	{ .name = "providerType",
	  .type = RZ_F_STRING,
	  .max_len = 253,
	  .doc = "The TF resource type it was made by, e.g. oci_core_instance." },
	{ .name = "address",
	  .type = RZ_F_STRING,
	  .max_len = 253,
	  .doc = "The address the daemon reaches its Talos API at." },
	{ .name = "addresses",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .max_len = 64,
	  .doc = "Every address the provider reports for it." },
	{ .name = "hostname",
	  .type = RZ_F_STRING,
	  .max_len = 253,
	  .doc = "Its hostname, as the provider reports it." },
	{ .name = "shape",
	  .type = RZ_F_STRING,
	  .max_len = 253,
	  .doc = "Its size at the provider (the instance shape or flavor), when the provider has "
	         "one." },
	{ .name = "tfAddress",
	  .type = RZ_F_STRING,
	  .max_len = 1024,
	  .doc = "The address of its resource instance in the TF state, e.g. "
	         "module.ng_workers.oci_core_instance.this[\"0\"]." },
	F_END,
};

const rz_field_t rz__schema_machine_status[] = {
	{ .name = "stage",
	  .type = RZ_F_STRING,
	  .enums = rz_machine_stage_names,
	  .doc = "What the machine is doing, as observed: Provisioning, Booting, Installing, "
	         "Maintenance, Running, Rebooting, ShuttingDown, Resetting, Upgrading, Removing, "
	         "Failed or Unknown (not reachable)." },
	{ .name = "ready",
	  .type = RZ_F_BOOL,
	  .doc = "Whether the machine is up and serving: Talos running and, once the cluster "
	         "exists, its node Ready." },
	{ .name = "talosVersion",
	  .type = RZ_F_STRING,
	  .doc = "The Talos version the machine reports." },
	{ .name = "kubernetesVersion", .type = RZ_F_STRING, .doc = "its kubelet's version" },
	{ .name = "nodeReady", .type = RZ_F_BOOL, .doc = "its Kubernetes node is Ready" },
	{ .name = "lastSeen",
	  .type = RZ_F_TIME,
	  .doc = "When the observer last reached the machine (RFC 3339, UTC)." },
	{ .name = "lastError",
	  .type = RZ_F_STRING,
	  .doc = "What went wrong when the observer last could not read the machine, or what the "
	         "machine reported failing." },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields,
	  .doc = "Ready: status.ready, with the stage as its reason and, when not ready, the last "
	         "error as its message (set by the server on every write)." },
	F_END,
};
