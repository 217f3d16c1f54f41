/* core/model/schema-etcd.c - the field schemas and checks of EtcdBackup and EtcdRestore
 * (docs/backups.md, "Tenants' etcd"), for the kind table (core/model/kinds.c). */
#include <config.h>

#include <string.h>

#include "core/model/kinds-int.h"
#include "core/model/states.h"

static const char *const etcd_triggers[] = { "manual", "schedule", NULL };
static const char *const step_phases[] = { "Pending", "Running", "Succeeded",
	                                   "Failed",  "Skipped", NULL };

/* ------------------------------------------------------------------ EtcdBackup */

const rz_field_t rz__schema_etcd_backup_spec[] = {
	{ .name = "trigger",
	  .type = RZ_F_STRING,
	  .enums = etcd_triggers,
	  .def = "\"manual\"",
	  .doc = "What asked for it: manual (a person, through the API: \"snapshot now\"; the only "
	         "value a create may give, and the default) or schedule (the tenant's "
	         "spec.etcdBackup.interval)." },
	F_END,
};

const rz_field_t rz__schema_etcd_backup_status[] = {
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = rz_etcd_backup_phase_names,
	  .doc =
	      "Pending (waiting for its turn), Running, Succeeded (stored), Failed (message says "
	      "why; a Warning Event says it too), or Skipped (the tenant had no healthy control "
	      "plane; message says why)." },
	{ .name = "startedAt",
	  .type = RZ_F_TIME,
	  .doc = "When the snapshot began (RFC 3339, UTC)." },
	{ .name = "finishedAt",
	  .type = RZ_F_TIME,
	  .doc = "When it was stored, failed or skipped (RFC 3339, UTC)." },
	{ .name = "size",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX,
	  .doc = "The snapshot's size in bytes, before encryption." },
	{ .name = "checksum",
	  .type = RZ_F_STRING,
	  .max_len = 80,
	  .doc = "sha256:<hex> of the snapshot before encryption; a restore checks it." },
	{ .name = "talosVersion",
	  .type = RZ_F_STRING,
	  .max_len = 64,
	  .doc = "The tenant's Talos version when the snapshot was taken." },
	{ .name = "kubernetesVersion",
	  .type = RZ_F_STRING,
	  .max_len = 64,
	  .doc = "The tenant's Kubernetes version when the snapshot was taken." },
	{ .name = "machine",
	  .type = RZ_F_STRING,
	  .max_len = 253,
	  .doc = "The control-plane Machine it was taken through." },
	{ .name = "target",
	  .type = RZ_F_STRING,
	  .max_len = 1024,
	  .doc =
	      "Where it is stored: file:///<dir> or s3://<bucket>/<prefix> (never credentials)." },
	{ .name = "key",
	  .type = RZ_F_STRING,
	  .max_len = 1024,
	  .doc = "Its object's key in the target: <tenant>/<name>.etcd.sealed." },
	{ .name = "message",
	  .type = RZ_F_STRING,
	  .max_len = 4096,
	  .doc = "Why it failed or was skipped." },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields,
	  .doc = "Complete and Failed, as a Job has them: one is True once it is over (Skipped "
	         "counts as Failed), the reason its phase (set by the server)." },
	F_END,
};

void rz__schema_etcd_backup_check(const rz_kind_t *k, json_t *obj, const json_t *old,
                                  json_t *causes)
{
	const char *trigger =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "trigger"));

	(void)k;
	if (old == NULL && trigger != NULL && strcmp(trigger, "manual") != 0) {
		rz_fields_cause(causes, "spec.trigger", RZ_CAUSE_FORBIDDEN,
		                "snapshots asked for through the API are manual");
	}
	if (old != NULL &&
	    !json_equal(json_object_get(obj, "spec"), json_object_get(old, "spec"))) {
		rz_fields_cause(causes, "spec", RZ_CAUSE_INVALID, "field is immutable");
	}
}

/* ------------------------------------------------------------------ EtcdRestore */

const rz_field_t rz__schema_etcd_restore_spec[] = {
	{ .name = "backup",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_dns1123_subdomain,
	  .format_name = "dns1123-subdomain",
	  .doc = "The EtcdBackup (of this tenant, Succeeded) to restore." },
	{ .name = "dryRun",
	  .type = RZ_F_BOOL,
	  .def = "false",
	  .doc = "Check, download and verify the snapshot and say what the restore would do; run "
	         "nothing on the cluster." },
	F_END,
};

static const rz_field_t restore_step_fields[] = {
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .enums = rz_etcd_restore_step_names,
	  .doc = "Precheck (the backup is usable, the control plane is lost), Download, Verify "
	         "(decrypted, its checksum as recorded), Restore (the cluster plugin's commands: "
	         "talosctl bootstrap --recover-from for talos), WaitHealthy (the control plane is "
	         "observed healthy again)." },
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = step_phases,
	  .doc = "Pending, Running, Succeeded, Failed, or Skipped (a dry run's last steps)." },
	{ .name = "message", .type = RZ_F_STRING, .doc = "What it did, or why it failed." },
	{ .name = "startedAt", .type = RZ_F_TIME, .doc = "When the step began (RFC 3339, UTC)." },
	{ .name = "finishedAt", .type = RZ_F_TIME, .doc = "When the step ended (RFC 3339, UTC)." },
	F_END,
};

const rz_field_t rz__schema_etcd_restore_status[] = {
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = rz_etcd_restore_phase_names,
	  .doc = "Pending, Running, Succeeded or Failed." },
	{ .name = "steps",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = restore_step_fields,
	  .doc = "Each step, in order, with its phase." },
	{ .name = "message",
	  .type = RZ_F_STRING,
	  .doc = "What the restore did, would do (a dry run), or why it failed." },
	{ .name = "startedAt", .type = RZ_F_TIME, .doc = "When it started (RFC 3339, UTC)." },
	{ .name = "finishedAt", .type = RZ_F_TIME, .doc = "When it ended (RFC 3339, UTC)." },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields,
	  .doc = "Complete and Failed, as a Job has them (set by the server)." },
	F_END,
};

void rz__schema_etcd_restore_check(const rz_kind_t *k, json_t *obj, const json_t *old,
                                   json_t *causes)
{
	(void)k;
	if (old != NULL &&
	    !json_equal(json_object_get(obj, "spec"), json_object_get(old, "spec"))) {
		rz_fields_cause(causes, "spec", RZ_CAUSE_INVALID, "field is immutable");
	}
}
