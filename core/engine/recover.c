/* core/engine/recover.c - at start, runs a stopped daemon left: interrupted or taken up. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "core/base/log.h"
#include "core/engine/engine-int.h"
#include "core/engine/executor.h"
#include "core/engine/runlog.h"
#include "core/report/report.h"

/* A Run the last process left unfinished: Interrupted, and its tenant runs again. */
static void interrupt_left(rz_engine_t *e, const json_t *run, const char *now)
{
	json_t *meta = json_object_get(run, "metadata");
	const char *tenant = json_string_value(json_object_get(meta, "tenant"));
	const char *name = json_string_value(json_object_get(meta, "name"));

	rz_report_status(e->store, "Run", tenant, name,
	                 json_pack("{s:s, s:s, s:s}", "phase",
	                           rz_run_phase_name(RZ_RUN_INTERRUPTED), "finishedAt", now,
	                           "message",
	                           json_object_get(json_object_get(run, "status"), "startedAt")
	                               ? "the daemon stopped before the run finished"
	                               : "the daemon stopped before the run started"));
	/* what it was to apply is not known to be applied: should the run poked here be lost
	 * as well (a resync is stored only once it finds something), the next start sees the
	 * tenant's inputs as not applied and runs it again */
	rz_report_status(e->store, "Tenant", NULL, tenant, json_pack("{s:s}", "appliedInputs", ""));
	rz_logkv(RZ_LOG_WARNING, "engine", "run interrupted by a daemon stop; running again",
	         "tenant", tenant, "run", name, NULL);
	rz__engine_poke(e, tenant, e->o.debounce_ms, RZ_TRIG_RESYNC);
}

/* Whether a Run a previous daemon left is one its runner may still be running: remote
 * runners are on, it was Running with a step out (status.step) and its grant was kept. */
static bool adoptable(rz_engine_t *e, const json_t *run)
{
	const json_t *st = json_object_get(run, "status");
	int phase = rz_run_phase_of(json_string_value(json_object_get(st, "phase")));
	const char *name =
	    json_string_value(json_object_get(json_object_get(run, "metadata"), "name"));

	return e->o.remote && phase == RZ_RUN_RUNNING &&
	       json_is_string(json_object_get(st, "step")) && name != NULL &&
	       rz_auth_granted(e->auth, name);
}

/* Whether the run named is one to take up (e->adopt). */
static bool adopted(void *arg, const char *run)
{
	rz_engine_t *e = arg;
	json_t *it;
	size_t i;

	json_array_foreach(e->adopt, i, it)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
		if (name != NULL && strcmp(name, run) == 0) {
			return true;
		}
	}
	return false;
}

/* At start: plans left by runs a crash interrupted hold states in clear; they go. Only
 * the plans directly in each tenant's directory are looked at, never .terraform/. */
static void remove_stale_plans(rz_engine_t *e)
{
	DIR *top = opendir(e->o.workdir), *d;
	struct dirent *t, *f;
	char dir[PATH_MAX], path[PATH_MAX * 2];

	while (top != NULL && (t = readdir(top)) != NULL) {
		if (t->d_name[0] == '.') {
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", e->o.workdir, t->d_name);
		for (d = opendir(dir); d != NULL && (f = readdir(d)) != NULL;) {
			size_t n = strlen(f->d_name);
			char run[64];
			if (n > 5 && strcmp(f->d_name + n - 5, ".plan") == 0) {
				snprintf(run, sizeof(run), "%.*s", (int)(n - 5), f->d_name);
				if (adopted(e, run)) {
					continue; /* its runner may still need it: taken up */
				}
				snprintf(path, sizeof(path), "%s/%s", dir, f->d_name);
				unlink(path);
			}
		}
		if (d != NULL) {
			closedir(d);
		}
	}
	if (top != NULL) {
		closedir(top);
	}
}

/* At start, before any run: runs the last process left unfinished become Interrupted, the
 * state locks they held are released, and their tenants run again; but with remote runners
 * the runs a runner may still be running are kept (e->adopt) for rz_engine_set_executor to
 * take up, with their locks, grants and plans. */
void rz__engine_recover_runs(rz_engine_t *e)
{
	json_t *runs = rz_store_list_all(e->store, "Run", NULL), *run;
	char now[32];
	rz_err_t err = { 0 };
	size_t i;

	e->adopt = json_array();
	rz_report_now(now, sizeof(now));
	json_array_foreach(runs, i, run)
	{
		json_t *meta = json_object_get(run, "metadata");
		const char *tenant = json_string_value(json_object_get(meta, "tenant"));
		const char *name = json_string_value(json_object_get(meta, "name"));
		const char *phase =
		    json_string_value(json_object_get(json_object_get(run, "status"), "phase"));

		int p = rz_run_phase_of(phase);
		if (tenant == NULL || name == NULL ||
		    (phase != NULL && p != RZ_RUN_RUNNING && p != RZ_RUN_AWAITING_APPROVAL &&
		     p != RZ_RUN_QUEUED)) {
			continue;
		}
		if (adoptable(e, run)) {
			json_array_append(e->adopt, run);
			continue;
		}
		interrupt_left(e, run, now);
	}
	json_decref(runs);
	rz_auth_ungrant_except(e->auth, adopted, e);
	remove_stale_plans(e);
	if (rz_tfstate_release_run_locks(e->tfstate, adopted, e, &err) < 0) {
		rz_log_warn("engine", "cannot release the locks of interrupted runs: %s", err.msg);
	}
}

/* A Run a previous daemon left on a runner, taken up: its struct run again, its log
 * reopened, a new secret for its next steps (the runner keeps the old one, still granted),
 * and its step to the executor, held by the runner that claimed it or published again. */
static int take_up(rz_engine_t *e, const json_t *run, rz_err_t *err)
{
	const json_t *meta = json_object_get(run, "metadata"), *spec = json_object_get(run, "spec");
	const json_t *st = json_object_get(run, "status");
	const char *tenant = json_string_value(json_object_get(meta, "tenant"));
	const char *step = json_string_value(json_object_get(st, "step"));
	const char *runner = json_string_value(json_object_get(st, "runner"));
	const char *claimed = json_string_value(json_object_get(st, "claimedStep"));
	struct tenant *t = rz__engine_tenant_of(e, tenant, true);
	json_t *tobj = NULL;
	char dir[PATH_MAX], path[PATH_MAX * 2];
	unsigned char key[RZ_EXEC_KEY_LEN];
	rz_exec_step_t s;
	struct run *r;
	int rc;
	int k;

	for (k = 0; k < RZ_ENGINE_STEPS && strcmp(rz_engine_steps[k], step) != 0; k++) {
	}
	if (t == NULL || t->run != NULL || k == RZ_ENGINE_STEPS ||
	    rz_store_get(e->store, e->k_tenant, NULL, tenant, &tobj, err) != 0) {
		return rz_err_set(err, -EINVAL, "its tenant or step is gone");
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		json_decref(tobj);
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	r->e = e;
	r->t = t;
	r->diagnostics = json_array();
	snprintf(r->name, sizeof(r->name), "%s", json_string_value(json_object_get(meta, "name")));
	r->op = rz__engine_op_of(spec);
	r->trigger = rz__engine_trigger_of(spec);
	r->generation = json_integer_value(json_object_get(spec, "generation"));
	for (int i = 0; i < RZ_ENGINE_STEPS; i++) {
		const char *who = json_string_value(
		    json_object_get(json_object_get(st, "stepRunners"), rz_engine_steps[i]));
		snprintf(r->step_runner[i], sizeof(r->step_runner[i]), "%s", who ? who : "");
	}
	snprintf(r->started, sizeof(r->started), "%s",
	         json_string_value(json_object_get(st, "startedAt")) ?: "");
	r->deleting = json_object_get(json_object_get(tobj, "metadata"), "deletionTimestamp");
	snprintf(r->talos, sizeof(r->talos), "%s",
	         json_string_value(json_object_get(json_object_get(tobj, "spec"), "talosVersion"))
	             ?: "");
	snprintf(
	    r->kubernetes, sizeof(r->kubernetes), "%s",
	    json_string_value(json_object_get(json_object_get(tobj, "spec"), "kubernetesVersion"))
	        ?: "");
	{ /* the selectors merged as run_selector does; the tenant's alone if they conflict now */
		json_t *groups = rz_store_list_all(e->store, "NodeGroup", tenant), *sel = NULL;
		rz_err_t serr = { 0 };

		if (rz_kind_runner_selector(tobj, groups, &sel, &serr) != 0) {
			json_decref(sel);
			sel = json_deep_copy(
			    json_object_get(json_object_get(tobj, "spec"), "runnerSelector"));
		}
		if (json_object_size(sel) > 0) {
			r->selector = sel;
		} else {
			json_decref(sel);
		}
		json_decref(groups);
	}
	json_decref(tobj);
	/* what it composed, as its first step's dispatch recorded it */
	snprintf(r->inputs, sizeof(r->inputs), "%s",
	         json_string_value(json_object_get(st, "inputs")) ?: "");
	r->stored = r->remote = r->slot = r->dispatched = true;
	r->step = (enum step)k;
	r->claimed = runner != NULL && claimed != NULL && strcmp(claimed, step) == 0;
	r->scheduled = r->claimed ? 2 : 0;
	snprintf(r->runner, sizeof(r->runner), "%s", runner ? runner : "");
	if (r->step == STEP_APPLY) {
		r->changes = json_incref(json_object_get(st, "changes"));
		r->listed = json_incref(json_object_get(st, "plan"));
	}
	r->step_started_ns = rz__engine_mono_ns();
	t->run = r;
	e->running++;
	rz_auth_token_secret(r->secret);
	rz_auth_grant_kept(e->auth, t->name, r->name, r->secret);
	rz__engine_tenant_dir(e, t->name, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.log", dir, r->name);
	r->log = rz_runlog_reopen(path, e->o.max_run_log);
	s = rz__engine_exec_step(r);
	if (r->claimed) {
		rz__engine_event_key(e, r->name, step, r->runner, key);
		s.event_key = key;
	}
	rc = e->exec->attach(e->exec->ctx, &s, r->claimed ? r->runner : NULL, err);
	sodium_memzero(key, sizeof(key));
	if (rc != 0) {
		snprintf(r->error, sizeof(r->error), "cannot take the run up again: %s", err->msg);
		rz__engine_finish(r, RZ_RUN_FAILED, -1);
		return 0;
	}
	{
		char what[256];
		snprintf(what, sizeof(what), "taken up again after a daemon restart: tofu %s %s%s",
		         step, r->claimed ? "on runner " : "(its job published again)",
		         r->claimed ? r->runner : "");
		rz__engine_run_event(r, "Normal", "RunTakenUp", what);
		rz_logkv(RZ_LOG_NOTICE, "engine", "run taken up again after a restart", "tenant",
		         t->name, "run", r->name, "step", step, "runner", r->runner, NULL);
	}
	return 0;
}

/* The Runs rz__engine_recover_runs kept: taken up with the executor, or (no remote executor
 * after all, or it fails) Interrupted as any other left unfinished. */
void rz__engine_take_up_all(rz_engine_t *e)
{
	json_t *run;
	char now[32];
	size_t i;

	rz_report_now(now, sizeof(now));
	json_array_foreach(e->adopt, i, run)
	{
		rz_err_t err = { 0 };
		const char *name =
		    json_string_value(json_object_get(json_object_get(run, "metadata"), "name"));
		if (e->exec != NULL && e->exec->remote(e->exec->ctx) &&
		    take_up(e, run, &err) == 0) {
			continue;
		}
		rz_logkv(RZ_LOG_WARNING, "engine", "a run left on a runner is not taken up", "run",
		         name, "error", err.msg, NULL);
		rz_auth_ungrant(e->auth, name);
		(void)rz_tfstate_release_run_lock(e->tfstate, name, &err);
		interrupt_left(e, run, now);
	}
	json_decref(e->adopt);
	e->adopt = NULL;
}
