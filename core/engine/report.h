/*
 * core/engine/report.h - what the engine reports into the store besides a Run's own
 * phase: the Machines a tenant's state describes, and the status of its node groups and
 * of the tenant (counts, phase, the Reconciled, MachinesReady and Drifted conditions).
 * Every write is a status write (or, for Machines, a projection), so none triggers a run.
 */
#ifndef RZ_REPORT_H
#define RZ_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/plugin/plugins.h"
#include "core/store/store.h"

/* The time now, RFC 3339 in UTC with milliseconds (runs of a few hundred ms must still
 * be ordered); size at least 32. */
void rz_report_now(char *buf, size_t size);

/* Merge fields (stolen) into the object's status. A failure is logged, not returned: a
 * status that could not be written is written again by the next run or observation. */
void rz_report_status(rz_store_t *st, const char *kind, const char *tenant, const char *name,
                      json_t *fields);

/* Machines to match the state: each loaded plugin's projection of it, created, updated
 * or deleted in the store, labelled with their tenant, node group, provider and role. */
void rz_report_machines(rz_store_t *st, rz_plugins_t *plugins, const char *tenant,
                        const json_t *state);

/* A run of the tenant ended (not a plan): its phase becomes Ready or Failed, Reconciled
 * says why, lastRun names the run; node group and tenant counts follow. */
void rz_report_run(rz_store_t *st, const char *tenant, const char *run, const char *operation,
                   const char *phase, const char *error);

/* A Machine's observed status changed: node group and tenant counts and MachinesReady
 * follow, with no run. */
void rz_report_counts(rz_store_t *st, const char *tenant);

/* A resync's verdict on the tenant: condition Drifted, with the reason and message. */
void rz_report_drift(rz_store_t *st, const char *tenant, bool drifted, const char *reason,
                     const char *message);

#endif /* RZ_REPORT_H */
