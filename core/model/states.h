/*
 * core/model/states.h - the states the kinds name by strings in their objects (a Run's
 * operation, trigger and phase, an UpgradeRun's phase and its machines' steps, a Machine's
 * stage) as enums. Each is generated from one table in core/model/tbl/ (X-macros, one
 * RZ_STATE(ENUM, "Name") per value), which also gives its names and the enum list of its
 * field's schema (core/model/kinds.c), so the code, the schema and the OpenAPI document
 * cannot disagree. Objects keep the names; code reads them once with rz_<state>_of().
 */
#ifndef RZ_STATES_H
#define RZ_STATES_H

#include <stdbool.h>

/* The index of s in names (NULL-terminated), or -1 for NULL or a name not in it. */
int rz_state_of(const char *const *names, const char *s);

/* A Run's operation (core/model/tbl/run_operations.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_OP_##e,
#include "core/model/tbl/run_operations.h"
	RZ_OP_COUNT
} rz_run_op_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_run_op_names[];
/* The name of v ("" when out of range). */
const char *rz_run_op_name(rz_run_op_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_run_op_of(const char *s)
{
	return rz_state_of(rz_run_op_names, s);
}

/* A Run's trigger (core/model/tbl/run_triggers.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_TRIG_##e,
#include "core/model/tbl/run_triggers.h"
	RZ_TRIG_COUNT
} rz_run_trigger_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_run_trigger_names[];
/* The name of v ("" when out of range). */
const char *rz_run_trigger_name(rz_run_trigger_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_run_trigger_of(const char *s)
{
	return rz_state_of(rz_run_trigger_names, s);
}

/* A Run's phase (core/model/tbl/run_phases.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_RUN_##e,
#include "core/model/tbl/run_phases.h"
	RZ_RUN_COUNT
} rz_run_phase_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_run_phase_names[];
/* The name of v ("" when out of range). */
const char *rz_run_phase_name(rz_run_phase_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_run_phase_of(const char *s)
{
	return rz_state_of(rz_run_phase_names, s);
}

/* An UpgradeRun's phase (core/model/tbl/upgrade_phases.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_UPG_##e,
#include "core/model/tbl/upgrade_phases.h"
	RZ_UPG_COUNT
} rz_upgrade_phase_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_upgrade_phase_names[];
/* The name of v ("" when out of range). */
const char *rz_upgrade_phase_name(rz_upgrade_phase_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_upgrade_phase_of(const char *s)
{
	return rz_state_of(rz_upgrade_phase_names, s);
}

/* A machine's step in an upgrade (core/model/tbl/upgrade_steps.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_UPSTEP_##e,
#include "core/model/tbl/upgrade_steps.h"
	RZ_UPSTEP_COUNT
} rz_upgrade_step_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_upgrade_step_names[];
/* The name of v ("" when out of range). */
const char *rz_upgrade_step_name(rz_upgrade_step_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_upgrade_step_of(const char *s)
{
	return rz_state_of(rz_upgrade_step_names, s);
}

/* A Machine's stage (core/model/tbl/machine_stages.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_STAGE_##e,
#include "core/model/tbl/machine_stages.h"
	RZ_STAGE_COUNT
} rz_machine_stage_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_machine_stage_names[];
/* The name of v ("" when out of range). */
const char *rz_machine_stage_name(rz_machine_stage_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_machine_stage_of(const char *s)
{
	return rz_state_of(rz_machine_stage_names, s);
}

/* An EtcdBackup's phase (core/model/tbl/etcd_backup_phases.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_EB_##e,
#include "core/model/tbl/etcd_backup_phases.h"
	RZ_EB_COUNT
} rz_etcd_backup_phase_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_etcd_backup_phase_names[];
/* The name of v ("" when out of range). */
const char *rz_etcd_backup_phase_name(rz_etcd_backup_phase_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_etcd_backup_phase_of(const char *s)
{
	return rz_state_of(rz_etcd_backup_phase_names, s);
}

/* An EtcdRestore's phase (core/model/tbl/etcd_restore_phases.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_ER_##e,
#include "core/model/tbl/etcd_restore_phases.h"
	RZ_ER_COUNT
} rz_etcd_restore_phase_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_etcd_restore_phase_names[];
/* The name of v ("" when out of range). */
const char *rz_etcd_restore_phase_name(rz_etcd_restore_phase_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_etcd_restore_phase_of(const char *s)
{
	return rz_state_of(rz_etcd_restore_phase_names, s);
}

/* An EtcdRestore's step (core/model/tbl/etcd_restore_steps.h). */
typedef enum {
#define RZ_STATE(e, s) RZ_ERSTEP_##e,
#include "core/model/tbl/etcd_restore_steps.h"
	RZ_ERSTEP_COUNT
} rz_etcd_restore_step_t;
/* Its names in enum order, NULL-terminated (the schema's enum list). */
extern const char *const rz_etcd_restore_step_names[];
/* The name of v ("" when out of range). */
const char *rz_etcd_restore_step_name(rz_etcd_restore_step_t v);
/* The value named s, or -1 (NULL, or not a name of it). */
static inline int rz_etcd_restore_step_of(const char *s)
{
	return rz_state_of(rz_etcd_restore_step_names, s);
}

/* An UpgradeRun in this phase is over: the engine lets the tenant's runs go on, and the
 * upgrader keeps it no longer (-1, unknown, counts as not over). */
static inline bool rz_upgrade_phase_over(int p)
{
	return p >= 0 && p != RZ_UPG_PENDING && p != RZ_UPG_PRECHECKING && p != RZ_UPG_UPGRADING;
}

#endif /* RZ_STATES_H */
