/* core/model/conditions.c - conditions, and those that follow from a phase. */
#include <config.h>

#include <string.h>

#include "core/model/conditions.h"
#include "core/model/states.h"

void rz_condition_set(json_t *conds, const char *type, const char *status, const char *reason,
                      const char *message, const char *now, json_int_t gen)
{
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
		json_t *keep = json_string(
		    old != NULL && since != NULL && strcmp(old, status) == 0 ? since : now);
		json_object_clear(was);
		json_object_set_new(was, "type", json_string(type));
		json_object_set_new(was, "status", json_string(status));
		json_object_set_new(was, "reason", json_string(reason));
		json_object_set_new(was, "message", json_string(message != NULL ? message : ""));
		json_object_set_new(was, "lastTransitionTime", keep);
		json_object_set_new(was, "observedGeneration", json_integer(gen));
	}
}

const json_t *rz_condition_get(const json_t *obj, const char *type)
{
	const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
	const json_t *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *ct = json_string_value(json_object_get(c, "type"));
		if (ct != NULL && strcmp(ct, type) == 0) {
			return c;
		}
	}
	return NULL;
}

/* What a phase says: over and well (Complete), over and not (Failed), or neither. */
enum outcome { GOING, COMPLETE, FAILED };

static enum outcome run_outcome(const char *phase)
{
	switch (rz_run_phase_of(phase)) {
	case RZ_RUN_SUCCEEDED:
		return COMPLETE;
	case RZ_RUN_FAILED:
	case RZ_RUN_CANCELED:
		return FAILED;
	default: /* Interrupted runs run again at the next start */
		return GOING;
	}
}

static enum outcome etcd_backup_outcome(const char *phase)
{
	switch (rz_etcd_backup_phase_of(phase)) {
	case RZ_EB_SUCCEEDED:
		return COMPLETE;
	case RZ_EB_FAILED:
	case RZ_EB_SKIPPED:
		return FAILED;
	default:
		return GOING;
	}
}

static enum outcome etcd_restore_outcome(const char *phase)
{
	switch (rz_etcd_restore_phase_of(phase)) {
	case RZ_ER_SUCCEEDED:
		return COMPLETE;
	case RZ_ER_FAILED:
		return FAILED;
	default:
		return GOING;
	}
}

static enum outcome upgrade_outcome(const char *phase)
{
	switch (rz_upgrade_phase_of(phase)) {
	case RZ_UPG_SUCCEEDED:
		return COMPLETE;
	case RZ_UPG_FAILED:
	case RZ_UPG_CANCELED:
	case RZ_UPG_ROLLED_BACK:
		return FAILED;
	default:
		return GOING;
	}
}

/* The status's conditions array, made when missing (NULL when status is not an object). */
static json_t *conditions_of(json_t *status)
{
	json_t *conds = json_object_get(status, "conditions");

	if (!json_is_object(status)) {
		return NULL;
	}
	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(status, "conditions", conds);
	}
	return conds;
}

/* Complete and Failed from the phase, as a Job has them: a finished Run or UpgradeRun has
 * one of them True, the reason its phase; before that both are False. */
static void derive_outcome(json_t *obj, enum outcome (*outcome)(const char *), const char *now,
                           json_int_t gen)
{
	json_t *status = json_object_get(obj, "status");
	const char *phase = json_string_value(json_object_get(status, "phase"));
	const char *message = json_string_value(json_object_get(status, "message"));
	json_t *conds;
	enum outcome o;

	if (phase == NULL || (conds = conditions_of(status)) == NULL) {
		return;
	}
	o = outcome(phase);
	rz_condition_set(conds, "Complete", o == COMPLETE ? "True" : "False", phase,
	                 o == COMPLETE ? message : NULL, now, gen);
	rz_condition_set(conds, "Failed", o == FAILED ? "True" : "False", phase,
	                 o == FAILED ? message : NULL, now, gen);
}

/* A Machine's Ready: what observation reported (status.ready), the stage as the reason. */
static void derive_machine(json_t *obj, const char *now, json_int_t gen)
{
	json_t *status = json_object_get(obj, "status");
	const char *stage = json_string_value(json_object_get(status, "stage"));
	bool ready = json_is_true(json_object_get(status, "ready"));
	json_t *conds;

	if ((stage == NULL && json_object_get(status, "ready") == NULL) ||
	    (conds = conditions_of(status)) == NULL) {
		return;
	}
	rz_condition_set(conds, "Ready", ready ? "True" : "False",
	                 stage != NULL ? stage
	                 : ready       ? "Ready"
	                               : "NotReady",
	                 ready ? NULL : json_string_value(json_object_get(status, "lastError")),
	                 now, gen);
}

void rz_conditions_derive(const rz_kind_t *k, json_t *obj, const char *now)
{
	json_int_t gen =
	    json_integer_value(json_object_get(json_object_get(obj, "metadata"), "generation"));

	if (strcmp(k->kind, "Run") == 0) {
		derive_outcome(obj, run_outcome, now, gen);
	} else if (strcmp(k->kind, "UpgradeRun") == 0) {
		derive_outcome(obj, upgrade_outcome, now, gen);
	} else if (strcmp(k->kind, "EtcdBackup") == 0) {
		derive_outcome(obj, etcd_backup_outcome, now, gen);
	} else if (strcmp(k->kind, "EtcdRestore") == 0) {
		derive_outcome(obj, etcd_restore_outcome, now, gen);
	} else if (strcmp(k->kind, "Machine") == 0) {
		derive_machine(obj, now, gen);
	}
}
