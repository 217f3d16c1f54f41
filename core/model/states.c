/* core/model/states.c - the names of the states of core/model/states.h, from their tables. */
#include <config.h>

#include <string.h>

#include "core/model/states.h"

int rz_state_of(const char *const *names, const char *s)
{
	if (s == NULL) {
		return -1;
	}
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(names[i], s) == 0) {
			return i;
		}
	}
	return -1;
}

const char *const rz_run_op_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/run_operations.h"
	NULL,
};

const char *rz_run_op_name(rz_run_op_t v)
{
	return (int)v >= 0 && v < RZ_OP_COUNT ? rz_run_op_names[v] : "";
}

const char *const rz_run_trigger_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/run_triggers.h"
	NULL,
};

const char *rz_run_trigger_name(rz_run_trigger_t v)
{
	return (int)v >= 0 && v < RZ_TRIG_COUNT ? rz_run_trigger_names[v] : "";
}

const char *const rz_run_phase_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/run_phases.h"
	NULL,
};

const char *rz_run_phase_name(rz_run_phase_t v)
{
	return (int)v >= 0 && v < RZ_RUN_COUNT ? rz_run_phase_names[v] : "";
}

const char *const rz_upgrade_phase_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/upgrade_phases.h"
	NULL,
};

const char *rz_upgrade_phase_name(rz_upgrade_phase_t v)
{
	return (int)v >= 0 && v < RZ_UPG_COUNT ? rz_upgrade_phase_names[v] : "";
}

const char *const rz_upgrade_step_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/upgrade_steps.h"
	NULL,
};

const char *rz_upgrade_step_name(rz_upgrade_step_t v)
{
	return (int)v >= 0 && v < RZ_UPSTEP_COUNT ? rz_upgrade_step_names[v] : "";
}

const char *const rz_machine_stage_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/machine_stages.h"
	NULL,
};

const char *rz_machine_stage_name(rz_machine_stage_t v)
{
	return (int)v >= 0 && v < RZ_STAGE_COUNT ? rz_machine_stage_names[v] : "";
}

const char *const rz_etcd_backup_phase_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/etcd_backup_phases.h"
	NULL,
};

const char *rz_etcd_backup_phase_name(rz_etcd_backup_phase_t v)
{
	return (int)v >= 0 && v < RZ_EB_COUNT ? rz_etcd_backup_phase_names[v] : "";
}

const char *const rz_etcd_restore_phase_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/etcd_restore_phases.h"
	NULL,
};

const char *rz_etcd_restore_phase_name(rz_etcd_restore_phase_t v)
{
	return (int)v >= 0 && v < RZ_ER_COUNT ? rz_etcd_restore_phase_names[v] : "";
}

const char *const rz_etcd_restore_step_names[] = {
#define RZ_STATE(e, s) s,
#include "core/model/tbl/etcd_restore_steps.h"
	NULL,
};

const char *rz_etcd_restore_step_name(rz_etcd_restore_step_t v)
{
	return (int)v >= 0 && v < RZ_ERSTEP_COUNT ? rz_etcd_restore_step_names[v] : "";
}
