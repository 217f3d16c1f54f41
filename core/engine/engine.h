/*
 * core/engine/engine.h - the TF engine (SPEC §7.2–7.4): turns spec changes into runs of tofu
 * against the tenant's working directory, one run per tenant at a time, a bounded pool
 * across tenants, and projects the applied state back into the store.
 *
 * Triggers: spec changes of a tenant, its node groups or config patches (after a trailing
 * debounce; changes during a run give exactly one follow-up run), and Runs created through
 * the API (manual plan or apply). Status writes never trigger.
 */
#ifndef RZ_ENGINE_H
#define RZ_ENGINE_H

#include <stdint.h>

#include <jansson.h>

#include "core/auth/auth.h"
#include "core/store/bus.h"
#include "core/base/errors.h"
#include "core/http/http.h"
#include "core/plugin/plugins.h"
#include "core/store/store.h"
#include "core/tfstate/tfstate.h"

struct event_base;

typedef struct rz_engine_opts {
	const char *tofu;      /* binary name or path */
	const char *workdir;   /* per tenant: <workdir>/<tenant>/ */
	const char *state_url; /* "http[s]://127.0.0.1:8080": the backend's base */
	int workers;           /* runs at once */
	int64_t debounce_ms;
	int64_t timeout_ms; /* per tofu command */
	int64_t kill_grace_ms;
	const char *plugin_cache_dir; /* "" or NULL: none */
	char **env_passthrough;       /* NULL-terminated names handed to tofu when set */
	bool destroy_approval;        /* a plan that destroys waits in AwaitingApproval */
	int64_t resync_ms;            /* every tenant gets a run this often; 0: never */
	int64_t provision_timeout_ms; /* still provisioning this long after an apply: Failed */
	int run_history;              /* Runs kept per tenant (failed young ones besides) */
	int64_t run_retention_ms;     /* how long a failed Run is kept beyond run_history */
	uint64_t max_run_log;         /* bytes of a run's log file (rz_runlog_open) */
	const char *state_ca_file;    /* an https state_url: the PEM tofu verifies the daemon's
	                                 certificate with (read at each run); NULL for http */
	const char *public_url;       /* runners.public_url: the daemon as remote runners reach it
	                                 (the state backend of their runs); NULL or "": state_url */
	bool remote; /* runners.nats_url is set: runs a previous daemon left on runners are
	                taken up again (rz_engine_set_executor), not interrupted */
} rz_engine_opts_t;

typedef struct rz_engine rz_engine_t;

/* Everything borrowed (opts' strings too) and must outlive the engine. */
int rz_engine_new(rz_engine_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                  rz_plugins_t *plugins, rz_auth_t *auth, rz_tfstate_t *tfstate,
                  const rz_engine_opts_t *opts, rz_err_t *err);

/* For rz_tfstate_on_replaced(), with the engine as arg: tenant's state was replaced
 * outside a run (a rollback, an admin's DELETE). Its Machines are projected from state at
 * once, then its counts, conditions and phase follow. state borrowed. */
void rz_engine_state_replaced(void *engine, const char *tenant, const json_t *state);

/* Cancel running tofu processes (their runs become Canceled) and free. Accepts NULL. */
void rz_engine_free(rz_engine_t *e);

/* POST /api/v1/tenants/{tenant}/runs/{name}/approve and …/cancel (edit role), GET …/log
 * (view role; ?follow=true: server-sent events until the run ends), GET
 * /api/v1/tenants/{tenant}/export (edit role, audited: the configuration with a local or
 * named backend, the state, the credentials and a README, for plain tofu). */
int rz_engine_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err);

/* Hand the steps of runs started from now on to exec (borrowed; it outlives the engine)
 * when exec->remote() says so. */
struct rz_executor;
void rz_engine_set_executor(rz_engine_t *e, const struct rz_executor *exec);

/* The executor's capacity grew (a runner became Ready): start what waits. */
void rz_engine_kick(rz_engine_t *e);

/* POST /api/v1/runners/{name}/claims and PUT /api/v1/runners/{name}/claims/{run}/files/{file}
 * (a runner token's only routes; docs/runners.md). */
int rz_engine_runner_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err);

/* Whether runs can start (the tofu binary is there); when not, why (for /readyz). */
bool rz_engine_ready(const rz_engine_t *e, char *why, size_t size);

/* Whether tenant has a run in progress, awaiting approval or queued for a slot (an upgrade
 * waits for it to end); why says which. */
bool rz_engine_busy(const rz_engine_t *e, const char *tenant, char *why, size_t size);

/* Runs in progress (for shutdown and tests). */
size_t rz_engine_running(const rz_engine_t *e);

/* Counters and gauges for /metrics. Runs count by operation and final phase; each tofu
 * step's duration goes into a histogram of RZ_ENGINE_BUCKETS upper bounds (seconds). */
#define RZ_ENGINE_STEPS   4 /* init, plan, show, apply */
#define RZ_ENGINE_OPS     3 /* plan, apply, destroy */
#define RZ_ENGINE_PHASES  4 /* Succeeded, Failed, Canceled, Interrupted */
#define RZ_ENGINE_BUCKETS 12
extern const char *const rz_engine_steps[RZ_ENGINE_STEPS];
extern const char *const rz_engine_ops[RZ_ENGINE_OPS];
extern const char *const rz_engine_phases[RZ_ENGINE_PHASES];
extern const double rz_engine_buckets[RZ_ENGINE_BUCKETS];

typedef struct rz_engine_stats {
	uint64_t runs[RZ_ENGINE_OPS][RZ_ENGINE_PHASES]; /* runs finished */
	/* per step: observations by bucket (not cumulative; the last is above every bound) */
	uint64_t step_hist[RZ_ENGINE_STEPS][RZ_ENGINE_BUCKETS + 1];
	uint64_t step_count[RZ_ENGINE_STEPS];
	double step_seconds[RZ_ENGINE_STEPS];
	uint64_t queued;    /* tenants whose run waits for a pool slot */
	uint64_t running;   /* pool slots taken */
	uint64_t workers;   /* pool slots (tofu.workers) */
	uint64_t processes; /* tofu processes running now */
	uint64_t tenants;   /* tenants the engine keeps a record of (deleted ones are dropped) */
} rz_engine_stats_t;

void rz_engine_stats(const rz_engine_t *e, rz_engine_stats_t *out);

#endif /* RZ_ENGINE_H */
