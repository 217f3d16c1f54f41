/* core/engine/settle.c - a run's end: its final status (written again), files, what follows. */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/proc.h"
#include "core/engine/engine-int.h"
#include "core/engine/plan.h"
#include "core/engine/runlog.h"
#include "core/report/report.h"

/* A Run's final status that could not be written (the database refused) is written again
 * after 1 s, 2 s, 4 s ... up to SETTLE_TRIES times, at most SETTLE_MAX of them at once;
 * what is still unwritten then is left to the sweep: every SWEEP_MS, a Run still Running
 * (or Queued, AwaitingApproval) with no run of the engine behind it becomes Interrupted. */
#define SETTLE_TRIES 6
#define SETTLE_MAX   256
#define SWEEP_MS     60000

/* ------------------------------------------------------------------ final statuses */

static void settle_arm(rz_engine_t *e)
{
	int64_t ms = e->sweep ? SWEEP_MS : 0;
	struct timeval tv;

	for (struct unsettled *u = e->unsettled; u != NULL; u = u->next) {
		int64_t d = (int64_t)1000 << (u->tries - 1);
		ms = ms == 0 || d < ms ? d : ms;
	}
	if (ms > 0 && e->settle != NULL) {
		tv = (struct timeval){ ms / 1000, (ms % 1000) * 1000 };
		evtimer_add(e->settle, &tv);
	}
}

/* A run's final status (fields, taken) into its Run; kept to be written again when the
 * database refuses it. */
static void settle(struct run *r, rz_run_phase_t phase, json_t *fields)
{
	rz_engine_t *e = r->e;
	struct unsettled *u;

	if (fields == NULL ||
	    rz_report_status_try(e->store, "Run", r->t->name, r->name, fields) == 0) {
		json_decref(fields);
		return;
	}
	if (e->n_unsettled >= SETTLE_MAX || (u = calloc(1, sizeof(*u))) == NULL) {
		rz_logkv(RZ_LOG_ERR, "engine", "final status not written: left to the sweep",
		         "tenant", r->t->name, "run", r->name, NULL);
		json_decref(fields);
		e->sweep = true;
		settle_arm(e);
		return;
	}
	snprintf(u->tenant, sizeof(u->tenant), "%s", r->t->name);
	snprintf(u->name, sizeof(u->name), "%s", r->name);
	u->op = r->op;
	u->phase = phase;
	snprintf(u->error, sizeof(u->error), "%s", r->error);
	u->report = r->op != RZ_OP_PLAN && (r->op != RZ_OP_DESTROY || phase != RZ_RUN_SUCCEEDED);
	u->fields = fields;
	u->tries = 1;
	u->next = e->unsettled;
	e->unsettled = u;
	e->n_unsettled++;
	rz_logkv(RZ_LOG_WARNING, "engine", "final status not written: retrying", "tenant",
	         u->tenant, "run", u->name, "phase", rz_run_phase_name(phase), NULL);
	settle_arm(e);
}

static bool unsettled_has(const rz_engine_t *e, const char *tenant, const char *name)
{
	for (const struct unsettled *u = e->unsettled; u != NULL; u = u->next) {
		if (strcmp(u->tenant, tenant) == 0 && strcmp(u->name, name) == 0) {
			return true;
		}
	}
	return false;
}

/* Runs the store says are going that no run of the engine is: their final status was
 * lost. They become Interrupted. Returns whether every one was written. */
static bool sweep(rz_engine_t *e)
{
	json_t *runs = rz_store_list_all(e->store, "Run", NULL), *run;
	bool all = runs != NULL;
	char now[32];
	size_t i;

	rz_report_now(now, sizeof(now));
	json_array_foreach(runs, i, run)
	{
		json_t *meta = json_object_get(run, "metadata");
		const char *tenant = json_string_value(json_object_get(meta, "tenant"));
		const char *name = json_string_value(json_object_get(meta, "name"));
		int phase = rz_run_phase_of(
		    json_string_value(json_object_get(json_object_get(run, "status"), "phase")));
		struct tenant *t = tenant ? rz__engine_tenant_of(e, tenant, false) : NULL;
		json_t *fields;

		if (tenant == NULL || name == NULL ||
		    (phase != RZ_RUN_RUNNING && phase != RZ_RUN_QUEUED &&
		     phase != RZ_RUN_AWAITING_APPROVAL) ||
		    (t != NULL && t->run != NULL && strcmp(t->run->name, name) == 0) ||
		    (t != NULL && strcmp(t->manual, name) == 0) || unsettled_has(e, tenant, name)) {
			continue;
		}
		fields = json_pack(
		    "{s:s, s:s, s:s}", "phase", rz_run_phase_name(RZ_RUN_INTERRUPTED), "finishedAt",
		    now, "message", "the run ended but its final status could not be written");
		if (rz_report_status_try(e->store, "Run", tenant, name, fields) != 0) {
			all = false;
		} else {
			rz_logkv(RZ_LOG_WARNING, "engine", "run left Running: now Interrupted",
			         "tenant", tenant, "run", name, NULL);
		}
		json_decref(fields);
	}
	json_decref(runs);
	return all;
}

/* The final statuses not written yet, again; those tried SETTLE_TRIES times are left to
 * the sweep. */
void rz__engine_on_settle(evutil_socket_t fd, short what, void *arg)
{
	rz_engine_t *e = arg;
	struct unsettled **pp = &e->unsettled, *u;

	(void)fd;
	(void)what;
	while ((u = *pp) != NULL) {
		struct tenant *t = rz__engine_tenant_of(e, u->tenant, false);
		bool done =
		    rz_report_status_try(e->store, "Run", u->tenant, u->name, u->fields) == 0;
		if (done && u->report && t != NULL && strcmp(t->finished, u->name) == 0) {
			/* its tenant's lastRun may have missed it as well */
			rz_report_run(e->store, u->tenant, u->name, rz_run_op_name(u->op),
			              rz_run_phase_name(u->phase), u->error,
			              e->o.provision_timeout_ms);
		}
		if (!done && ++u->tries <= SETTLE_TRIES) {
			pp = &u->next;
			continue;
		}
		if (!done) {
			rz_logkv(RZ_LOG_ERR, "engine",
			         "final status not written: left to the sweep", "tenant", u->tenant,
			         "run", u->name, NULL);
			e->sweep = true;
		}
		*pp = u->next;
		e->n_unsettled--;
		json_decref(u->fields);
		free(u);
	}
	if (e->sweep && e->unsettled == NULL && sweep(e)) {
		e->sweep = false;
	}
	settle_arm(e);
}

/* ------------------------------------------------------------------ finishing a run */

/* A deleted tenant whose state is destroyed: drop the finalizer, and it goes. */
void rz__engine_teardown_done(struct run *r)
{
	json_t *patch = json_pack("{s:{s:[]}}", "metadata", "finalizers"), *cur = NULL, *out = NULL;
	rz_err_t err = { 0 };
	bool gone;

	if (rz_store_get(r->e->store, r->e->k_tenant, NULL, r->t->name, &cur, &err) == 0) {
		json_object_set(json_object_get(cur, "metadata"), "finalizers",
		                json_object_get(json_object_get(patch, "metadata"), "finalizers"));
		rz_store_update(r->e->store, r->e->k_tenant, NULL, r->t->name, cur, 0,
		                RZ_UPDATE_SPEC, NULL, &out, &gone, &err);
	}
	json_decref(out);
	json_decref(cur);
	json_decref(patch);
	rz__engine_remove_workdir(r->e, r->t->name);
}

/* After the nth failure in a row: 10 s doubling, capped at the resync interval (or 5 min). */
int64_t rz__engine_backoff_ms(const rz_engine_t *e, int failures)
{
	int64_t cap = e->o.resync_ms > 0 ? e->o.resync_ms : 300000;
	int64_t d = (int64_t)10000 << (failures > 16 ? 15 : failures - 1);

	return d < cap ? d : cap;
}

/* Runs of tenant kept: the newest tofu.run_history, and failed ones younger than
 * tofu.run_retention; the others go, with their logs. Runs still going are never pruned. */
static int newest_first(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	const char *tx =
	    json_string_value(json_object_get(json_object_get(x, "metadata"), "creationTimestamp"));
	const char *ty =
	    json_string_value(json_object_get(json_object_get(y, "metadata"), "creationTimestamp"));
	const char *sx =
	    json_string_value(json_object_get(json_object_get(x, "status"), "startedAt"));
	const char *sy =
	    json_string_value(json_object_get(json_object_get(y, "status"), "startedAt"));
	int c = strcmp(ty ? ty : "", tx ? tx : "");

	return c != 0 ? c : strcmp(sy ? sy : "", sx ? sx : "");
}

static void prune_runs(rz_engine_t *e, const char *tenant, const char *current)
{
	json_t *runs = rz_store_list_all(e->store, "Run", tenant), *out;
	size_t n = json_array_size(runs), kept = 0;
	const json_t **v = n ? calloc(n, sizeof(*v)) : NULL;
	int64_t now = rz_clock_now_ms();
	char dir[PATH_MAX], path[PATH_MAX * 2];
	rz_err_t err = { 0 };
	bool gone;

	if (v == NULL) {
		json_decref(runs);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = json_array_get(runs, i);
	}
	qsort(v, n, sizeof(*v), newest_first);
	rz__engine_tenant_dir(e, tenant, dir, sizeof(dir));
	for (size_t i = 0; i < n; i++) {
		const json_t *st = json_object_get(v[i], "status");
		const char *name =
		    json_string_value(json_object_get(json_object_get(v[i], "metadata"), "name"));
		const char *phase = json_string_value(json_object_get(st, "phase"));
		const char *end = json_string_value(json_object_get(st, "finishedAt"));
		bool done = end != NULL && phase != NULL;
		bool young_failure = done && rz_run_phase_of(phase) == RZ_RUN_FAILED &&
		                     now - rz_clock_parse(end) < e->o.run_retention_ms;

		if (name == NULL || !done || strcmp(name, current) == 0 ||
		    kept < (size_t)e->o.run_history || young_failure) {
			kept++;
			continue;
		}
		out = NULL;
		if (rz_store_delete(e->store, e->k_run, tenant, name, 0, NULL, &out, &gone, &err) ==
		    0) {
			snprintf(path, sizeof(path), "%s/%s.log", dir, name);
			unlink(path);
		}
		json_decref(out);
	}
	free(v);
	json_decref(runs);
}

static void count_run(rz_engine_t *e, rz_run_op_t op, rz_run_phase_t phase)
{
	for (size_t o = 0; o < RZ_ENGINE_OPS; o++) {
		for (size_t p = 0; p < RZ_ENGINE_PHASES; p++) {
			if (strcmp(rz_run_op_name(op), rz_engine_ops[o]) == 0 &&
			    strcmp(rz_run_phase_name(phase), rz_engine_phases[p]) == 0) {
				e->stats.runs[o][p]++;
			}
		}
	}
}

/* What a run holds besides itself: its process, documents and secret (the show's output,
 * sensitive values in clear, and the secret wiped). */
void rz__engine_run_release(struct run *r)
{
	rz_proc_free(r->proc);
	json_decref(r->diagnostics);
	if (r->show.p != NULL) {
		sodium_memzero(r->show.p, r->show.len);
	}
	free(r->show.p);
	json_decref(r->plan);
	json_decref(r->listed);
	json_decref(r->selector);
	json_decref(r->changes);
	sodium_memzero(r->secret, sizeof(r->secret));
}

void rz__engine_finish(struct run *r, rz_run_phase_t phase, int exit_code)
{
	rz_engine_t *e = r->e;
	struct tenant *t = r->t;
	const char *phase_name = rz_run_phase_name(phase);
	bool ok = phase == RZ_RUN_SUCCEEDED;
	bool failed = phase == RZ_RUN_FAILED && r->op != RZ_OP_PLAN && !e->stopping;
	char now[32];
	json_t *state = NULL;
	rz_err_t err = { 0 };
	bool quiet;

	if (ok && r->op == RZ_OP_APPLY && r->talos[0] != '\0') {
		/* what the cluster runs from now on: a change of these later is an upgrade */
		rz_report_status(e->store, "Tenant", NULL, t->name,
		                 json_pack("{s:s, s:s}", "talosVersion", r->talos,
		                           "kubernetesVersion", r->kubernetes));
	}
	if (ok && r->op != RZ_OP_PLAN && rz_tfstate_get(e->tfstate, t->name, &state, &err) == 0) {
		rz_report_machines(e->store, e->plugins, t->name, state);
		if (rz_tfstate_keep_outputs(e->tfstate, t->name, r->name, state, &err) != 0) {
			rz_logkv(RZ_LOG_ERR, "engine", "cannot keep the sensitive outputs",
			         "tenant", t->name, "error", err.msg, NULL);
		}
	}
	json_decref(state);
	if (ok && r->op == RZ_OP_APPLY && r->inputs[0] != '\0') {
		/* what this apply covered: a start runs the tenant again when its node groups or
		 * config patches changed since, should the run that change asked for be lost */
		rz_report_status(e->store, "Tenant", NULL, t->name,
		                 json_pack("{s:s}", "appliedInputs", r->inputs));
	}
	if (phase == RZ_RUN_INTERRUPTED && r->op != RZ_OP_PLAN) {
		/* what it was to apply is not known to be applied, yet the tenant's generation is
		 * marked observed below: the next start sees its inputs as not applied and runs it
		 * again (as rz__engine_recover_runs does for a run a crash left) */
		rz_report_status(e->store, "Tenant", NULL, t->name,
		                 json_pack("{s:s}", "appliedInputs", ""));
	}
	if (!r->stored && !ok && !e->stopping) {
		rz__engine_store_run(r); /* a resync that failed is worth keeping */
	}
	quiet = !r->stored; /* a resync that found nothing to do: no Run, no Events */
	rz_report_now(now, sizeof(now));
	if (!quiet) {
		json_t *fields =
		    json_pack("{s:s, s:s, s:i, s:o, s:o, s:o}", "phase", phase_name, "finishedAt",
		              now, "exitCode", exit_code, "message",
		              r->error[0] != '\0' ? json_string(r->error) : json_null(), "changes",
		              r->plan == NULL && r->changes != NULL ? json_incref(r->changes)
		                                                    : rz_plan_counts(r->plan),
		              "diagnostics", rz__engine_diagnostics_of(r));
		if (fields != NULL && r->listed != NULL) {
			json_object_set(fields, "plan", r->listed);
		}
		settle(r, phase, fields);
		snprintf(t->finished, sizeof(t->finished), "%s", r->name);
	}
	if (r->op == RZ_OP_DESTROY && ok) {
		rz__engine_teardown_done(r);
	} else if (quiet) {
		rz_report_resynced(e->store, t->name, e->o.provision_timeout_ms);
	} else if (r->op != RZ_OP_PLAN) {
		rz_report_run(e->store, t->name, r->name, rz_run_op_name(r->op), phase_name,
		              r->error, e->o.provision_timeout_ms);
	}
	if (r->drifted && ok) {
		char msg[160];
		snprintf(msg, sizeof(msg), "run %s applied what the resync plan found", r->name);
		rz_report_drift(r->e->store, r->t->name, false, "Corrected", msg);
	}
	rz_logkv(RZ_LOG_INFO, "engine", "run finished", "tenant", t->name, "run", r->name,
	         "operation", rz_run_op_name(r->op), "phase", phase_name, "error", r->error, NULL);
	count_run(e, r->op, phase);
	if (!quiet && (r->op != RZ_OP_DESTROY || !ok)) {
		static const struct {
			rz_run_phase_t phase;
			const char *type, *reason;
		} reasons[] = {
			{ RZ_RUN_SUCCEEDED, "Normal", "RunSucceeded" },
			{ RZ_RUN_FAILED, "Warning", "RunFailed" },
			{ RZ_RUN_CANCELED, "Normal", "RunCanceled" },
			{ RZ_RUN_INTERRUPTED, "Warning", "RunInterrupted" },
		};
		for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
			if (phase == reasons[i].phase) {
				rz__engine_run_event(r, reasons[i].type, reasons[i].reason,
				                     r->error[0] != '\0' ? r->error : "succeeded");
			}
		}
	}
	rz_auth_ungrant(e->auth, r->name); /* a late write of a lost runner is refused */
	if (r->remote && e->exec != NULL) {
		e->exec->forget(e->exec->ctx, r->name);
	}
	rz_runlog_close(r->log, phase_name);
	{
		char dir[PATH_MAX], path[PATH_MAX * 2];
		rz__engine_tenant_dir(e, t->name, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s.plan", dir, r->name);
		unlink(path); /* the plan (the state in clear) lives as long as its run */
	}
	if (quiet) {
		char dir[PATH_MAX], path[PATH_MAX * 2];
		rz__engine_tenant_dir(e, t->name, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s.log", dir, r->name);
		unlink(path); /* nobody can ask for the log of a Run that was never stored */
	} else if (!e->stopping) {
		prune_runs(e, t->name, r->name);
	}
	rz__engine_run_release(r);
	if (r->slot) {
		e->running--;
	}
	if (t->queued) { /* approved, still waiting for a slot */
		rz__engine_unqueue(t);
	}
	free(r);
	t->run = NULL;
	t->failures = failed ? t->failures + 1 : ok ? 0 : t->failures;
	if (t->gone) { /* deleted meanwhile (its teardown): nothing follows */
		t->again = false;
		rz__engine_forget(e, t);
	} else if (t->again) {
		t->again = false;
		/* the follow-up keeps what asked for it: a resync stays a resync */
		rz__engine_poke(e, t->name, e->o.debounce_ms,
		                t->trigger >= 0 ? (rz_run_trigger_t)t->trigger : RZ_TRIG_UPDATE);
	} else if (failed) {
		int64_t delay = rz__engine_backoff_ms(e, t->failures);
		char in[32];
		snprintf(in, sizeof(in), "%llds", (long long)(delay / 1000));
		rz_logkv(RZ_LOG_NOTICE, "engine", "run failed: retrying", "tenant", t->name, "in",
		         in, NULL);
		rz__engine_poke(e, t->name, delay, RZ_TRIG_RESYNC);
	}
	rz__engine_start_next(e);
}
