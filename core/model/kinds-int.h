/*
 * core/model/kinds-int.h - what the kind table (kinds.c) and the field schemas of its kinds
 * share, private to core/model: the schemas live by area in schema-tenant.c (Tenant,
 * NodeGroup, ConfigPatch, Machine), schema-runs.c (Run, UpgradeRun, Event, Backup) and
 * schema-access.c (Provider, User, APIToken, Runner, AccessBinding); kinds.c keeps the
 * pieces several kinds use, metadata, the table and the functions of kinds.h.
 * Every array here is static data, NULL-name terminated: borrowed, never freed.
 */
#ifndef RZ_KINDS_INT_H
#define RZ_KINDS_INT_H

#include "core/model/fields.h"
#include "core/model/kinds.h"

/* The end of a field list. */
#define F_END                                                                                      \
	{                                                                                          \
		.name = NULL                                                                       \
	}

/* RZ_DISPATCH_SELECTOR_MAX (core/remote/dispatch.h): a runner serves the pool of every set
 * of at most this many of its labels */
#define RZ__SELECTOR_MAX 3

/* kinds.c: a Kubernetes condition (status.conditions[] of Tenant, NodeGroup, Run) */
extern const rz_field_t rz__schema_condition_fields[];

/* schema-tenant.c */
extern const rz_field_t rz__schema_tenant_spec[], rz__schema_tenant_status[];
extern const rz_field_t rz__schema_nodegroup_spec[], rz__schema_nodegroup_status[];
extern const rz_field_t rz__schema_configpatch_spec[];
extern const rz_field_t rz__schema_machine_spec[], rz__schema_machine_status[];
void rz__schema_tenant_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes);
void rz__schema_nodegroup_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes);

/* schema-runs.c */
extern const rz_field_t rz__schema_run_spec[], rz__schema_run_status[];
extern const rz_field_t rz__schema_upgrade_spec[], rz__schema_upgrade_status[];
extern const rz_field_t rz__schema_event_fields[]; /* at the top level, as Kubernetes' Event */
extern const rz_field_t rz__schema_backup_spec[], rz__schema_backup_status[];

void rz__schema_run_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes);
void rz__schema_upgrade_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes);

/* schema-etcd.c */
extern const rz_field_t rz__schema_etcd_backup_spec[], rz__schema_etcd_backup_status[];
extern const rz_field_t rz__schema_etcd_restore_spec[], rz__schema_etcd_restore_status[];
void rz__schema_etcd_backup_check(const rz_kind_t *k, json_t *obj, const json_t *old,
                                  json_t *causes);
void rz__schema_etcd_restore_check(const rz_kind_t *k, json_t *obj, const json_t *old,
                                   json_t *causes);

/* schema-access.c */
extern const rz_field_t rz__schema_provider_spec[], rz__schema_provider_status[];
extern const rz_field_t rz__schema_user_spec[], rz__schema_user_status[];
extern const rz_field_t rz__schema_token_spec[], rz__schema_token_status[];
extern const rz_field_t rz__schema_runner_spec[], rz__schema_runner_status[];
extern const rz_field_t rz__schema_binding_spec[];
void rz__schema_user_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes);
void rz__schema_token_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes);
void rz__schema_binding_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes);

#endif /* RZ_KINDS_INT_H */
