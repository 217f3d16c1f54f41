/* core/model/schema-runs.c - the field schemas and checks of Run, UpgradeRun, Event and Backup
 * (SPEC §4), for the kind table (core/model/kinds.c). */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/model/kinds-int.h"
#include "core/model/states.h"

static const char *const severities[] = { "error", "warning", NULL };
static const char *const components[] = { "talos", "kubernetes", NULL };
static const char *const upgrade_triggers[] = { "manual", "spec", NULL };
static const char *const event_types[] = { "Normal", "Warning", NULL };

/* ------------------------------------------------------------------ Run */

const rz_field_t rz__schema_run_spec[] = {
	{ .name = "operation",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = rz_run_op_names,
	  .doc = "What tofu does: plan (show what would change, apply nothing), apply, or destroy "
	         "(only the tenant's deletion starts one)." },
	{ .name = "trigger",
	  .type = RZ_F_STRING,
	  .enums = rz_run_trigger_names,
	  .def = "\"manual\"",
	  .doc = "What started it: manual (through the API; the only value a create may give, and "
	         "the default), or the engine's create, update, resync, delete or upgrade." },
	{ .name = "generation",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX,
	  .doc = "The tenant's metadata.generation the run reconciles; set by the engine." },
	F_END,
};

static const rz_field_t run_changes[] = {
	{ .name = "add",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX,
	  .doc = "Resources the plan adds." },
	{ .name = "change",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX,
	  .doc = "Resources it changes in place." },
	{ .name = "destroy",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX,
	  .doc = "Resources it destroys (a replacement counts here and in add)." },
	F_END,
};

static const rz_field_t run_diagnostic[] = {
	{ .name = "severity",
	  .type = RZ_F_STRING,
	  .enums = severities,
	  .doc = "error or warning." },
	{ .name = "summary", .type = RZ_F_STRING, .doc = "tofu's one-line summary." },
	{ .name = "detail", .type = RZ_F_STRING, .doc = "tofu's detail, several lines perhaps." },
	{ .name = "address",
	  .type = RZ_F_STRING,
	  .doc = "The resource it is about, when tofu names one." },
	F_END,
};

static const char *const plan_actions[] = { "create", "update", "replace", "delete", "read", NULL };

static const rz_field_t run_plan_change[] = {
	{ .name = "address",
	  .type = RZ_F_STRING,
	  .doc = "The resource instance's address in the configuration." },
	{ .name = "action",
	  .type = RZ_F_STRING,
	  .enums = plan_actions,
	  .doc = "What the plan does to it: create, update, replace, delete or read." },
	{ .name = "reason", .type = RZ_F_STRING, .doc = "why tofu replaces or deletes it" },
	{ .name = "machine", .type = RZ_F_STRING, .doc = "the Machine it is, if any" },
	F_END,
};

static const rz_field_t run_plan[] = {
	{ .name = "resources",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = run_plan_change,
	  .doc = "The resources the plan changes, in tofu's order, at most 2000." },
	{ .name = "more", .type = RZ_F_INT, .doc = "changes beyond the 2000 listed" },
	F_END,
};

static const char *const run_steps[] = { "init", "plan", "show", "apply", NULL };

/* Run.status.stepRunners: a runner name per step. */
static const rz_field_t run_step_runners[] = {
	{ .name = "init",
	  .type = RZ_F_STRING,
	  .max_len = 63,
	  .doc = "The runner that claimed the init step." },
	{ .name = "plan",
	  .type = RZ_F_STRING,
	  .max_len = 63,
	  .doc = "The runner that claimed the plan step." },
	{ .name = "show",
	  .type = RZ_F_STRING,
	  .max_len = 63,
	  .doc = "The runner that claimed the show step." },
	{ .name = "apply",
	  .type = RZ_F_STRING,
	  .max_len = 63,
	  .doc = "The runner that claimed the apply step." },
	F_END,
};

const rz_field_t rz__schema_run_status[] = {
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = rz_run_phase_names,
	  .doc = "Queued (waiting for a slot or a runner), Running, AwaitingApproval (a plan that "
	         "destroys waits for an editor to approve or cancel it), Succeeded, Failed, "
	         "Canceled, or Interrupted (the daemon stopped while it ran)." },
	{ .name = "startedAt", .type = RZ_F_TIME, .doc = "When tofu started (RFC 3339, UTC)." },
	{ .name = "finishedAt", .type = RZ_F_TIME, .doc = "When the run ended (RFC 3339, UTC)." },
	{ .name = "exitCode", .type = RZ_F_INT, .doc = "tofu's exit status of its last command." },
	{ .name = "message", .type = RZ_F_STRING, .doc = "why it failed or was canceled" },
	{ .name = "changes",
	  .type = RZ_F_OBJECT,
	  .fields = run_changes,
	  .doc = "What the plan adds, changes and destroys, counted." },
	{ .name = "diagnostics",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = run_diagnostic,
	  .doc = "tofu's errors and warnings." },
	{ .name = "stateSerial",
	  .type = RZ_F_INT,
	  .doc = "The serial of the TF state the run left (the state version, under the tenant's "
	         "state)." },
	{ .name = "runner",
	  .type = RZ_F_STRING,
	  .max_len = 63,
	  .doc = "the remote runner that ran its last step; absent: the daemon's own pool" },
	{ .name = "plan",
	  .type = RZ_F_OBJECT,
	  .fields = run_plan,
	  .doc = "what the plan does, resource by resource (no values)" },
	{ .name = "approvedBy",
	  .type = RZ_F_STRING,
	  .doc = "The user who approved the run while it was AwaitingApproval." },
	{ .name = "approvalReason",
	  .type = RZ_F_STRING,
	  .max_len = 1024,
	  .doc = "What the approver said, at most 1024 characters." },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields,
	  .doc = "Complete and Failed, as a Job has them: one is True once the run is over, "
	         "the reason its phase (set by the server); with remote runners, Scheduled: "
	         "False (NoRunner) while no Ready runner serves the run's pool, True (Claimed) "
	         "once a runner claimed its step." },
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
void rz__schema_run_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
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

const rz_field_t rz__schema_upgrade_spec[] = {
	{ .name = "component",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = components,
	  .doc = "What to upgrade: talos (the machines' Talos Linux, one machine at a time) or "
	         "kubernetes (the cluster's Kubernetes)." },
	{ .name = "targetVersion",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_version,
	  .format_name = "version",
	  .doc = "The version to upgrade to, MAJOR.MINOR.PATCH: no downgrade, Kubernetes one minor "
	         "version at a time." },
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
	{ .name = "name", .type = RZ_F_STRING, .doc = "The Machine's name." },
	{ .name = "role", .type = RZ_F_STRING, .doc = "controlplane or worker." },
	{ .name = "address", .type = RZ_F_STRING, .doc = "The address talosctl reaches it at." },
	{ .name = "from",
	  .type = RZ_F_STRING,
	  .doc =
	      "The version it ran before, as fromVersion writes it (1.12.0, without Talos' v)." },
	{ .name = "to",
	  .type = RZ_F_STRING,
	  .doc = "The version it is upgraded to, in the same form (1.12.1)." },
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = rz_upgrade_step_names,
	  .doc = "Its step: Pending, Upgrading, Verifying (waiting for its health gate), "
	         "Succeeded, RollingBack, RolledBack, Failed or Skipped." },
	{ .name = "startedAt",
	  .type = RZ_F_TIME,
	  .doc = "When its upgrade started (RFC 3339, UTC)." },
	{ .name = "finishedAt", .type = RZ_F_TIME, .doc = "When it ended (RFC 3339, UTC)." },
	{ .name = "error", .type = RZ_F_STRING, .doc = "Why its upgrade failed." },
	F_END,
};

static const rz_field_t upgrade_precheck[] = {
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .doc = "The check, e.g. no downgrade, one minor version, all machines reachable." },
	{ .name = "passed", .type = RZ_F_BOOL, .doc = "Whether it passed." },
	{ .name = "message", .type = RZ_F_STRING, .doc = "Why it did not, or what it found." },
	F_END,
};

const rz_field_t rz__schema_upgrade_status[] = {
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = rz_upgrade_phase_names,
	  .doc = "Pending, Prechecking, Upgrading, Succeeded, Failed, Canceled or RolledBack." },
	{ .name = "fromVersion",
	  .type = RZ_F_STRING,
	  .doc = "The tenant's version before the upgrade." },
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
	{ .name = "cancelRequested",
	  .type = RZ_F_BOOL,
	  .doc = "A cancel was asked for: the upgrade stops before the next machine." },
	{ .name = "message",
	  .type = RZ_F_STRING,
	  .doc = "What the upgrade is doing, or why it stopped." },
	{ .name = "startedAt", .type = RZ_F_TIME, .doc = "When it started (RFC 3339, UTC)." },
	{ .name = "finishedAt", .type = RZ_F_TIME, .doc = "When it ended (RFC 3339, UTC)." },
	{ .name = "conditions",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz__schema_condition_fields,
	  .doc = "Complete and Failed, as a Job has them: one is True once the upgrade is over, "
	         "the reason its phase (set by the server)." },
	F_END,
};

void rz__schema_upgrade_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
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
	  .format_name = "dns1123-label",
	  .doc = "The object's name." },
	{ .name = "uid", .type = RZ_F_STRING, .doc = "the object's metadata.uid when it happened" },
	{ .name = "namespace",
	  .type = RZ_F_STRING,
	  .doc = "The object's tenant, as Kubernetes clients name it; none for a Tenant." },
	{ .name = "apiVersion",
	  .type = RZ_F_STRING,
	  .doc = "The object's API version: rezuscloud.io/v1." },
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

const rz_field_t rz__schema_event_fields[] = {
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
	{ .name = "type",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = event_types,
	  .doc = "Normal, or Warning for something that needs a look." },
	{ .name = "count",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 1,
	  .max = INT64_MAX,
	  .doc = "how many times it happened" },
	{ .name = "firstTimestamp", .type = RZ_F_TIME, .doc = "when it first happened" },
	{ .name = "lastTimestamp", .type = RZ_F_TIME, .doc = "when it last happened" },
	{ .name = "source",
	  .type = RZ_F_OBJECT,
	  .fields = event_source_fields,
	  .doc = "Which part of the daemon reported it." },
	F_END,
};

/* ------------------------------------------------------------------ Backup */

static const char *const backup_triggers[] = { "manual", "schedule", NULL };
static const char *const backup_phases[] = { "Running", "Completed", "Failed", "Damaged", NULL };

const rz_field_t rz__schema_backup_spec[] = {
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
	{ .name = "compression",
	  .type = RZ_F_STRING,
	  .doc = "How the database is compressed in the file." },
	F_END,
};

const rz_field_t rz__schema_backup_status[] = {
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = backup_phases,
	  .doc = "Running, Completed, Failed, or Damaged (the file fails its checks)." },
	{ .name = "message", .type = RZ_F_STRING, .doc = "why it failed, or what is damaged" },
	{ .name = "file", .type = RZ_F_STRING, .doc = "the file in the backup directory" },
	{ .name = "size", .type = RZ_F_INT, .doc = "The file's size, in bytes." },
	{ .name = "rezuscloudVersion",
	  .type = RZ_F_STRING,
	  .doc = "The version of the daemon that made it." },
	{ .name = "schemaVersion",
	  .type = RZ_F_INT,
	  .doc = "The database schema version in it: restore migrates an older one." },
	{ .name = "revision",
	  .type = RZ_F_INT,
	  .doc = "the store's revision at the snapshot: every write up to it is in the backup" },
	{ .name = "objects",
	  .type = RZ_F_ANY,
	  .doc = "How many objects of each kind it holds, by kind: {\"Tenant\": 3, ...}." },
	{ .name = "stateVersions", .type = RZ_F_INT, .doc = "TF state versions" },
	{ .name = "stateTenants", .type = RZ_F_INT, .doc = "tenants with TF state" },
	{ .name = "sealedOutputs", .type = RZ_F_INT, .doc = "sensitive outputs kept sealed" },
	{ .name = "users", .type = RZ_F_INT, .doc = "How many users it holds." },
	{ .name = "auditRows", .type = RZ_F_INT, .doc = "How many audit rows it holds." },
	{ .name = "database",
	  .type = RZ_F_OBJECT,
	  .fields = backup_db_fields,
	  .doc = "The database in the file." },
	{ .name = "stateKey",
	  .type = RZ_F_OBJECT,
	  .fields = backup_key_fields,
	  .doc = "Whether the key that seals the TF states is in the file." },
	F_END,
};
