/*
 * core/engine/engine-int.h - what the engine's files share (not for other modules): the
 * engine, a tenant's record and its place in the queue, a run and its steps, and the
 * functions one file of the engine calls in another. The public API is core/engine/engine.h.
 */
#ifndef RZ_ENGINE_INT_H
#define RZ_ENGINE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>
#include <jansson.h>

#include "core/auth/auth.h"
#include "core/base/errors.h"
#include "core/base/proc.h"
#include "core/engine/engine.h"
#include "core/model/states.h"
#include "core/engine/executor.h"
#include "core/engine/runlog.h"
#include "core/http/http.h"
#include "core/report/report.h"
#include "core/store/bus.h"
#include "core/store/sweep.h"

#define MAX_ENV  64
#define TAIL_MAX 2048 /* bytes of a step's last text lines kept for a diagnostic */

enum step { STEP_INIT, STEP_PLAN, STEP_SHOW, STEP_APPLY, STEP_DONE };

/* The most of `tofu show -json` kept: a plan larger than this is not applied. */
#define SHOW_MAX ((size_t)256 << 20)

struct tenant;

struct run {
	rz_engine_t *e;
	struct tenant *t;
	char name[64];
	rz_run_op_t op;           /* plan, apply or destroy */
	rz_run_trigger_t trigger; /* create, update, resync, manual, delete or upgrade */
	enum step step;
	rz_proc_t *proc;
	char secret[RZ_TOKEN_SECRET_LEN + 1];
	rz_runlog_t *log;
	int64_t step_started_ns; /* CLOCK_MONOTONIC, when the step's tofu started */
	struct sbuf {
		char *p;
		size_t len, cap;
		bool cut; /* more than SHOW_MAX, or out of memory: not a whole plan */
	} show;         /* stdout of `tofu show -json` while it runs (sensitive values in clear) */
	json_t *plan;   /* then parsed, once; the buffer is wiped */
	json_t *listed; /* what the plan does, resource by resource (rz_plan_list) */
	json_t *diagnostics;
	size_t diagnostics_dropped; /* beyond MAX_DIAGNOSTICS */
	char tail[TAIL_MAX];        /* the step's last lines of plain text (stderr, or non-JSON) */
	size_t tail_len;
	char error[512];
	bool deleting; /* the tenant is being deleted: no approval for a destroy */
	bool awaiting; /* AwaitingApproval: stopped before apply, its pool slot given back */
	bool approved; /* approved: queued for a slot to apply in */
	bool slot;     /* holds one of the pool's tofu.workers slots */
	bool drifted;  /* a resync whose plan found changes */
	bool stored;   /* its Run object exists: a resync's only once it has something to do */
	json_int_t generation;
	char started[32];
	char talos[32], kubernetes[32];    /* the tenant's versions this run renders */
	char inputs[RZ_REPORT_INPUTS_LEN]; /* the digest of what it composed (rz_report_inputs) */
	/* remote dispatch (e->exec): its steps run on runners, one job per step */
	bool remote;
	bool dispatched;                       /* the current step's job is out */
	bool claimed;                          /* a runner claimed the current step */
	bool lost;                             /* its runner was lost: ended Interrupted */
	char runner[64];                       /* the runner that claimed the current (last) step */
	char step_runner[RZ_ENGINE_STEPS][64]; /* who claimed each step ("": none) */
	json_t *selector; /* the runnerSelectors of the tenant and its node groups, merged */
	int scheduled;    /* its Scheduled condition as written: 0 none, 1 False, 2 True */
	json_t *changes;  /* taken up again at its apply: the plan's counts, from its status */
};

struct tenant {
	rz_engine_t *e;
	char name[64];
	struct event *debounce;
	struct event *observed; /* a Machine's status changed: recount soon, once */
	struct run *run;        /* running, or NULL */
	bool queued;            /* waiting for a pool slot */
	json_t *sel;            /* queued, remote: its runnerSelector as of its queuing */
	bool unserved;          /* queued for a pool no Ready runner serves: said once */
	char waiting[64];  /* the Run stored for it meanwhile (Queued), taken up at its start */
	bool again;        /* changed while running: one follow-up */
	bool held;         /* its run waits for an upgrade to end */
	char upgraded[64]; /* the last UpgradeRun seen to succeed */
	int failures;      /* runs failed in a row: the backoff grows with them */
	int trigger;       /* of the next run (rz_run_trigger_t), or -1: nothing asked */
	char manual[64];   /* a Run created through the API, to start next */
	char finished[64]; /* the last of its runs to finish (its status.lastRun) */
	bool gone;         /* deleted while its run finished: forgotten after it */
	struct tenant *next, *qnext;
};

struct rz_engine {
	/* the kinds it reads and writes, looked up once */
	const rz_kind_t *k_tenant, *k_run, *k_upgrade, *k_runner, *k_machine, *k_nodegroup,
	    *k_configpatch;
	struct event_base *base;
	rz_store_t *store;
	rz_bus_t *bus;
	rz_plugins_t *plugins;
	rz_auth_t *auth;
	rz_tfstate_t *tfstate;
	rz_engine_opts_t o;
	uint64_t sub;
	struct event *resync;
	rz_sweep_t *pending, *resyncs; /* at start; every tofu.resync */
	bool stopping;
	struct tenant *tenants; /* every tenant known and not deleted, for the sweeps */
	size_t ntenants;
	void *by_name;                /* the same tenants, a tsearch(3) tree by name */
	struct tenant *qhead, *qtail; /* FIFO of tenants waiting for a slot */
	size_t running;
	struct unsettled *unsettled; /* final statuses to write again */
	size_t n_unsettled;
	struct event *settle;      /* writes them again; the sweep */
	bool sweep;                /* a final status was given up: the sweep looks for its Run */
	rz_engine_stats_t stats;   /* the counters; the gauges are read when asked */
	const rz_executor_t *exec; /* remote runners, or NULL: every step runs here */
	int64_t waiting_logged_ms; /* the last "no runner Ready" line */
	json_t *adopt; /* at start: the Runs a previous daemon left on runners, to take up */
};

/* A Run's final status not written yet. */
struct unsettled {
	char tenant[64], name[64];
	rz_run_op_t op;
	rz_run_phase_t phase;
	char error[512];
	bool report; /* its tenant's lastRun is this run's too */
	json_t *fields;
	int tries;
	struct unsettled *next;
};

/* ------------------------------------------------------------------ queue.c */

/* The tenant of that name, created when create says so; NULL when it is not known (or out
 * of memory). Borrowed: valid until the tenant is forgotten. */
struct tenant *rz__engine_tenant_of(rz_engine_t *e, const char *name, bool create);

/* Into the FIFO of tenants waiting for a pool slot (a new run, or an approved one). */
void rz__engine_push(struct tenant *t);

/* Out of the FIFO (an approved run canceled before it got its slot). */
void rz__engine_unqueue(struct tenant *t);

/* A deleted tenant's record goes (freed), or once its run ends when one runs. */
void rz__engine_forget(rz_engine_t *e, struct tenant *t);

/* A reason to run (trigger: "create", "update", "resync", "manual", "upgrade"): restart the
 * tenant's trailing debounce of delay_ms. */
void rz__engine_poke(rz_engine_t *e, const char *tenant, int64_t delay_ms,
                     rz_run_trigger_t trigger);

/* The manual Run waiting to start ends Canceled, saying why (borrowed). */
void rz__engine_drop_manual(struct tenant *t, const char *why);

/* The bus subscriber (arg: the engine): spec changes and Runs created through the API. */
void rz__engine_on_event(const rz_event_t *ev, void *arg);

/* Sweep callbacks (arg: the engine; t borrowed): at start, a tenant not reconciled yet runs
 * again; every tofu.resync, every tenant does. */
void rz__engine_reconcile_pending(void *arg, json_t *t);
void rz__engine_resync_one(void *arg, json_t *t);

/* The tofu.resync timer (arg: the engine): starts the resync sweep. */
void rz__engine_on_resync(evutil_socket_t fd, short what, void *arg);

/* Queued runs into free slots: tofu.workers of them here; by runner pool with remote
 * runners. */
void rz__engine_start_next(rz_engine_t *e);

/* ------------------------------------------------------------------ run.c */

/* A stored Run's trigger (update when it names none) and operation (apply when it names
 * none), from its spec. */
rz_run_trigger_t rz__engine_trigger_of(const json_t *spec);
rz_run_op_t rz__engine_op_of(const json_t *spec);
/* What happened to run r, as an Event on its tenant (strings borrowed). */
void rz__engine_run_event(struct run *r, const char *type, const char *reason, const char *what);

/* A resync's Run, stored once it has something to tell (drift, or a failure). */
void rz__engine_store_run(struct run *r);

/* Out of the queue, into a slot: a new run for t, or its approved run's apply. */
void rz__engine_launch(rz_engine_t *e, struct tenant *t);

/* ------------------------------------------------------------------ export.c */

/* Register GET /api/v1/tenants/{tenant}/export (e as ctx): rz_engine_routes does. */
int rz__engine_export_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err);

/* ------------------------------------------------------------------ workdir.c */

/* The tenant's working directory, <tofu.workdir>/<tenant>, into out. */
void rz__engine_tenant_dir(const rz_engine_t *e, const char *tenant, char *out, size_t size);

/* Compose the tenant (borrowed) into the run's working directory, guarded; 0 or an error
 * (err filled). */
int rz__engine_render(struct run *r, const json_t *tenant, rz_err_t *err);

/* A tenant's working directory and run logs, gone with it. */
void rz__engine_remove_workdir(rz_engine_t *e, const char *tenant);

/* ------------------------------------------------------------------ steps.c */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t rz__engine_mono_ns(void);

/* The environment of a step, but PATH and HOME, appended to env (n entries so far, the
 * strings in vars); env stays NULL-terminated. */
void rz__engine_step_env(struct run *r, const char **env, size_t *n, char (*vars)[PATH_MAX + 64]);

/* The step's job for the executor, its callbacks the run's. */
rz_exec_step_t rz__engine_exec_step(struct run *r);

/* The run's next step (r->step): started here or dispatched, stopped for an approval, or
 * the run finished; an error when it cannot start (err filled). */
int rz__engine_next_step(struct run *r, rz_err_t *err);

/* The run's diagnostics as its status has them. Caller owns the result; json_decref(). */
json_t *rz__engine_diagnostics_of(struct run *r);

/* ------------------------------------------------------------------ settle.c */

/* A destroyed tenant: its finalizer dropped (it goes) and its working directory removed. */
void rz__engine_teardown_done(struct run *r);

/* The delay before a run again after the nth failure in a row. */
int64_t rz__engine_backoff_ms(const rz_engine_t *e, int failures);

/* The settle timer (arg: the engine): final statuses written again; the sweep. */
void rz__engine_on_settle(evutil_socket_t fd, short what, void *arg);

/* What a run holds besides itself, released (the secret and the plan wiped). */
void rz__engine_run_release(struct run *r);

/* The run ends in phase with exit_code: its final status, Events, counters and files, then
 * r is freed and what follows it (a follow-up, a retry, the next queued run) goes. */
void rz__engine_finish(struct run *r, rz_run_phase_t phase, int exit_code);

/* ------------------------------------------------------------------ recover.c */

/* At start: runs the last process left unfinished are Interrupted, or kept to be taken up
 * (with remote runners). */
void rz__engine_recover_runs(rz_engine_t *e);

/* The runs rz__engine_recover_runs kept: taken up with the executor, or Interrupted. */
void rz__engine_take_up_all(rz_engine_t *e);

/* ------------------------------------------------------------------ claim.c */

/* The event key of a claim of run's step by runner (core/remote/dispatch.h) into out. */
void rz__engine_event_key(const rz_engine_t *e, const char *run, const char *step,
                          const char *runner, unsigned char out[RZ_EXEC_KEY_LEN]);

/* POST /api/v1/runners/{name}/claims and PUT …/claims/{run}/files/{file} (ctx: the
 * engine). */
void rz__engine_h_claim(rz_req_t *req, void *ctx);
void rz__engine_h_file(rz_req_t *req, void *ctx);

#endif /* RZ_ENGINE_INT_H */
