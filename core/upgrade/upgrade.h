/*
 * core/upgrade/upgrade.h - rolling upgrades (SPEC §8): an UpgradeRun's prechecks, then its
 * machines one at a time, control planes first, each through the commands the tenant's
 * cluster plugin gives (plugin ABI 1.2, "Upgrades": talosctl upgrade … --wait for talos)
 * and a health gate on what the observer reports (Running, ready, the target version, the
 * node Ready, for a control plane etcd healthy) within upgrade.machine_timeout; a machine
 * that fails is rolled back and the upgrade stops. Progress is persisted per machine in
 * status.machines, so a daemon restart resumes at the machine it was on. A tenant's runs
 * and upgrades never overlap: the engine holds runs while an upgrade is in progress
 * (core/report/report.h, rz_report_active_upgrade), and an upgrade waits for the run in
 * progress. On success the tenant's spec and status versions move to the target and a
 * reconcile run follows.
 */
#ifndef RZ_UPGRADE_H
#define RZ_UPGRADE_H

#include <jansson.h>

#include "core/base/errors.h"
#include "core/engine/engine.h"
#include "core/http/http.h"
#include "core/model/kinds.h"
#include "core/observe/observe.h"
#include "core/plugin/plugins.h"
#include "core/store/bus.h"
#include "core/store/store.h"

struct event_base;

typedef struct rz_upgrader_opts {
	int64_t machine_timeout_ms; /* one machine's commands and health gate */
	int64_t poll_ms;            /* how often a gate looks at the observed status; 0: 1 s */
} rz_upgrader_opts_t;

typedef struct rz_upgrader rz_upgrader_t;

/* Everything borrowed must outlive the upgrader. Picks up, at once, every UpgradeRun left
 * unfinished by the last daemon. */
int rz_upgrader_new(rz_upgrader_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                    rz_plugins_t *plugins, rz_engine_t *engine, rz_observer_t *observer,
                    const rz_upgrader_opts_t *opts, rz_err_t *err);

/* Kill the commands running (their upgrades resume at the next start) and free. Accepts
 * NULL. */
void rz_upgrader_free(rz_upgrader_t *u);

/* POST /api/v1/tenants/{tenant}/upgrades/{name}/cancel (edit role): a waiting upgrade ends
 * Canceled at once; a running one stops before its next machine. */
int rz_upgrader_routes(rz_upgrader_t *u, rz_http_t *http, rz_err_t *err);

/* The API's admission check (rz_api_set_admit, arg the upgrader): an UpgradeRun created
 * (not a dry run) whose prechecks fail now, and a Tenant update changing spec.talosVersion
 * or spec.kubernetesVersion of a cluster that has machines in a way an upgrade could not
 * make, are refused with a cause naming the precheck. */
void rz_upgrader_admit(void *arg, const rz_kind_t *k, const json_t *obj, const json_t *old,
                       json_t *causes);

/* UpgradeRuns in progress (for tests and shutdown). */
size_t rz_upgrader_active(const rz_upgrader_t *u);

#endif /* RZ_UPGRADE_H */
