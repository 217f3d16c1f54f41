/*
 * core/report/report.h - what the engine reports into the store besides a Run's own
 * phase: the Machines a tenant's state describes, and the status of its node groups and
 * of the tenant (counts, phase, the Reconciled, MachinesReady, ControlPlaneReady, Ready and
 * Drifted conditions; a node group's Ready).
 * Every write is a status write (or, for Machines, a projection), so none triggers a run.
 */
#ifndef RZ_REPORT_H
#define RZ_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/plugin/plugins.h"
#include "core/store/store.h"

/* The time now, RFC 3339 in UTC with milliseconds (runs of a few hundred ms must still
 * be ordered); size at least 32. */
void rz_report_now(char *buf, size_t size);

/* Merge fields (stolen) into the object's status; a field whose value is null is removed
 * (an optional field is absent when empty, as in Kubernetes). A failure is logged, not
 * returned: a status that could not be written is written again by the next run or
 * observation. */
void rz_report_status(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                      json_t *fields);

/* The same, fields borrowed, and the failure returned: 0, or the store's error (logged
 * too) — for a status that must not be lost, which the caller writes again. An object
 * that is gone is no failure (0). */
int rz_report_status_try(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                         const json_t *fields);

/* Machines to match the state: each loaded plugin's projection of it, created, updated
 * or deleted in the store, labelled with their tenant, node group, provider and role. A
 * plugin's rules see only the resources it rendered in the tenant's last composition
 * (rz_plugins_scope()); with no record of one (none in this process) every plugin's rules
 * see the whole state, as before projection was scoped. */
void rz_report_machines(rz_store_t *st, rz_plugins_t *plugins, const char *tenant,
                        const json_t *state);

/* What a tenant's phase and its MachinesReady, ControlPlaneReady and Ready conditions are
 * derived from (SPEC §4, Tenant.status). */
typedef struct rz_phase_in {
	bool deleting;         /* metadata.deletionTimestamp is set */
	bool applied;          /* an apply has succeeded */
	bool run_failed;       /* the last run (not a plan) failed */
	bool has_controlplane; /* a control-plane node group wants machines */
	bool observed;         /* the cluster plugin's observation reported the control plane */
	bool cp_healthy;       /* ... as healthy */
	const char *cp_error;  /* ... or why not (may be NULL) */
	int64_t desired, total, ready;
	int64_t lost;       /* machines not ready that are not on their way up */
	int64_t planned;    /* machines not ready in a reboot or upgrade they were told to make */
	const char *was;    /* the phase so far (may be NULL) */
	int64_t applied_ms; /* when the last apply succeeded (-1 or 0: not known) */
	int64_t now_ms;
	int64_t provision_timeout_ms; /* 0: none */
} rz_phase_in_t;

typedef struct rz_phase_out {
	const char *phase; /* Pending, Provisioning, Ready, Degraded, Failed, Deleting */
	const char *machines_ready, *machines_reason;
	char machines_message[160];
	const char *cp_ready, *cp_reason, *cp_message; /* "True", "False" or "Unknown" */
	/* Ready: "True" exactly when the phase is Ready; the reason is the phase, the message
	 * what keeps the tenant from being Ready (or that nothing does) */
	const char *ready, *ready_reason;
	char ready_message[220];
} rz_phase_out_t;

/* The phase and conditions in follows from. Pure: a table of cases tests it. */
void rz_report_phase(const rz_phase_in_t *in, rz_phase_out_t *out);

/* A run of the tenant ended (not a plan): Reconciled says how, lastRun names the run
 * (lastApplied too, for a successful apply); then counts, conditions and phase follow. */
void rz_report_run(rz_store_t *st, const char *tenant, const char *run, const char *operation,
                   const char *phase, const char *error, int64_t provision_timeout_ms);

/* A resync's plan found nothing to change: lastReconciled moves, Reconciled is True
 * (InSync), and no Run is stored for it. */
void rz_report_resynced(rz_store_t *st, const char *tenant, int64_t provision_timeout_ms);

/* A run of the tenant waits for approval: Reconciled False, AwaitingApproval, why. */
void rz_report_awaiting(rz_store_t *st, const char *tenant, const char *why,
                        int64_t provision_timeout_ms);

/* Something observed changed (a Machine's status, the control plane): counts, conditions
 * and phase follow, with no run. Nothing is written when nothing changed. */
void rz_report_counts(rz_store_t *st, const char *tenant, int64_t provision_timeout_ms);

/* Set the tenant's condition type (rz_condition_set: lastTransitionTime moves only with the
 * status) and write it; a failure is logged (rz_report_status). */
void rz_report_tenant_condition(rz_store_t *st, const char *tenant, const char *type,
                                const char *status, const char *reason, const char *message);

/* A resync's verdict on the tenant: condition Drifted, with the reason and message. */
void rz_report_drift(rz_store_t *st, const char *tenant, bool drifted, const char *reason,
                     const char *message);

/* A condition of a Run (type Scheduled: where a remote run's step is), its
 * lastTransitionTime kept while its status stays, written with the status fields also
 * (taken; may be NULL). Nothing is written when nothing changed. */
void rz_report_run_condition(rz_store_t *st, const char *tenant, const char *run, const char *type,
                             const char *status, const char *reason, const char *message,
                             json_t *also);

/* The inputs a run of the tenant composes besides the Tenant itself — its node groups and
 * config patches, by name, uid and generation (the lists as rz_store_list_all gives them) —
 * as a digest of RZ_REPORT_INPUTS_LEN - 1 hex digits into out. A successful apply records
 * it as status.appliedInputs: a change whose run a crash lost shows as a difference. */
#define RZ_REPORT_INPUTS_LEN 33
void rz_report_inputs(const json_t *groups, const json_t *patches, char out[RZ_REPORT_INPUTS_LEN]);

/* Whether the tenant (an object from the store) has inputs that no successful apply
 * covered: its status.appliedInputs (written after a successful apply, emptied when a run
 * is interrupted) differs from the digest of its node groups and config patches now.
 * False for a tenant that never recorded any (nothing applied yet, or applied before the
 * field existed: the tenant's generation tells for those). */
bool rz_report_inputs_stale(rz_store_t *st, const json_t *tenant);

/* The tenant's UpgradeRun in progress — not a dry run, phase Pending, Prechecking or
 * Upgrading; the oldest when several wait — or NULL (caller owns). Runs wait behind it
 * (the engine), observation runs fast and hands it to the plugin (the observer). */
json_t *rz_report_active_upgrade(rz_store_t *st, const char *tenant);

#endif /* RZ_REPORT_H */
