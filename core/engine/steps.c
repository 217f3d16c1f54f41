/* core/engine/steps.c - a run's steps: tofu here or on a runner, its output, each end. */
#include <config.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/proc.h"
#include "core/engine/engine-int.h"
#include "core/engine/executor.h"
#include "core/engine/plan.h"
#include "core/engine/runlog.h"
#include "core/engine/tfui.h"
#include "core/report/report.h"
#include "core/store/events.h"

/* Diagnostics kept in a Run's status; the rest are counted in one more. */
#define MAX_DIAGNOSTICS 100

const char *const rz_engine_steps[RZ_ENGINE_STEPS] = { "init", "plan", "show", "apply" };
const char *const rz_engine_ops[RZ_ENGINE_OPS] = { "plan", "apply", "destroy" };
const char *const rz_engine_phases[RZ_ENGINE_PHASES] = { "Succeeded", "Failed", "Canceled",
	                                                 "Interrupted" };
const double rz_engine_buckets[RZ_ENGINE_BUCKETS] = { 0.1, 0.25, 0.5, 1,   2.5, 5,
	                                              10,  30,   60,  120, 300, 600 };

int64_t rz__engine_mono_ns(void)
{
	return rz_clock_mono_ns(); /* a test's fake clock may stand in */
}

/* ------------------------------------------------------------------ a step's output */

/* Keep line at the end of the step's text tail, dropping whole lines from its front. */
static void keep_tail(struct run *r, const char *raw, size_t raw_len)
{
	char line[TAIL_MAX / 2 + 1];
	size_t need, len;

	if (raw_len > TAIL_MAX / 2 - 8) { /* its end: a crash's last words */
		raw += raw_len - (TAIL_MAX / 2 - 8);
		raw_len = TAIL_MAX / 2 - 8;
	}
	/* valid UTF-8 without control characters: it goes into JSON and before people */
	len = rz_tfui_text(line, sizeof(line), raw, raw_len);
	if (len == 0 || strspn(line, " \t") == len) {
		return;
	}
	need = len + 1;
	while (r->tail_len + need + 1 > TAIL_MAX && r->tail_len > 0) {
		char *nl = memchr(r->tail, '\n', r->tail_len);
		size_t cut = nl ? (size_t)(nl - r->tail) + 1 : r->tail_len;
		memmove(r->tail, r->tail + cut, r->tail_len - cut);
		r->tail_len -= cut;
	}
	memcpy(r->tail + r->tail_len, line, len);
	r->tail_len += len;
	r->tail[r->tail_len++] = '\n';
	r->tail[r->tail_len] = '\0';
}

static bool is_error(const json_t *d)
{
	return strcmp(json_string_value(json_object_get(d, "severity")) ?: "", "error") == 0;
}

/* Into the run's diagnostics (takes d), at most MAX_DIAGNOSTICS of them: beyond, an error
 * takes the place of the first warning kept, and the rest are counted. */
static void add_diagnostic(struct run *r, json_t *d)
{
	size_t i;
	json_t *v;

	if (d == NULL) {
		return;
	}
	if (json_array_size(r->diagnostics) < MAX_DIAGNOSTICS) {
		json_array_append_new(r->diagnostics, d);
		return;
	}
	r->diagnostics_dropped++;
	json_array_foreach(r->diagnostics, i, v)
	{
		if (is_error(d) && !is_error(v)) {
			json_array_remove(r->diagnostics, i);
			json_array_append_new(r->diagnostics, d);
			return;
		}
	}
	json_decref(d);
}

/* The diagnostics as the Run's status has them: with how many more there were. */
json_t *rz__engine_diagnostics_of(struct run *r)
{
	json_t *all = json_copy(r->diagnostics);
	char summary[96];

	if (all != NULL && r->diagnostics_dropped > 0) {
		snprintf(summary, sizeof(summary), "%zu more diagnostics were not kept",
		         r->diagnostics_dropped);
		json_array_append_new(
		    all, json_pack("{s:s, s:s, s:s, s:s}", "severity", "warning", "summary",
		                   summary, "detail",
		                   "a Run keeps its first 100 diagnostics (errors before "
		                   "warnings); the run's log has the others",
		                   "address", ""));
	}
	return all ? all : json_array();
}

/* A line of tofu's output: into the run's log; JSON UI lines also into the run's changes
 * and diagnostics; `show -json` output kept whole. */
static void on_line(void *arg, const char *line, size_t len, bool is_stderr)
{
	struct run *r = arg;
	/* a remote show's JSON comes by HTTPS (rz__engine_h_file), never as lines: its lines are
	 * the init before it */
	bool plan_json = r->step == STEP_SHOW && !is_stderr && !r->remote;
	json_t *j;

	/* The plan as JSON holds sensitive values in clear: it stays in memory, out of the
	 * log and its followers. */
	if (!plan_json) {
		rz_runlog_line(r->log, line, len);
	}
	if (!plan_json && !rz_tfui_is_json(line, len)) {
		keep_tail(r, line, len);
	}
	if (plan_json) {
		if (r->show.cut || r->show.len + len + 1 > SHOW_MAX) {
			r->show.cut = true;
			return;
		}
		if (r->show.len + len + 1 > r->show.cap) {
			size_t cap = (r->show.len + len + 1) * 2;
			char *p = realloc(r->show.p, cap);
			if (p == NULL) {
				r->show.cut = true;
				return;
			}
			r->show.p = p;
			r->show.cap = cap;
		}
		memcpy(r->show.p + r->show.len, line, len);
		r->show.len += len;
		r->show.p[r->show.len] = '\0';
		return;
	}
	if (!rz_tfui_is_json(line, len) || (j = json_loadb(line, len, 0, NULL)) == NULL) {
		return;
	}
	if (strcmp(json_string_value(json_object_get(j, "type")) ?: "", "diagnostic") == 0) {
		json_t *d = json_object_get(j, "diagnostic");
		add_diagnostic(
		    r,
		    json_pack("{s:s, s:s, s:s, s:s}", "severity",
		              json_string_value(json_object_get(d, "severity")) ?: "error",
		              "summary", json_string_value(json_object_get(d, "summary")) ?: "",
		              "detail", json_string_value(json_object_get(d, "detail")) ?: "",
		              "address", json_string_value(json_object_get(d, "address")) ?: ""));
	}
	json_decref(j);
}

/* ------------------------------------------------------------------ a step's end */

/* The step that just ended, into its duration histogram. */
static void count_step(struct run *r)
{
	rz_engine_stats_t *st = &r->e->stats;
	double s = (double)(rz__engine_mono_ns() - r->step_started_ns) / 1e9;
	size_t b = 0;

	if (r->step >= RZ_ENGINE_STEPS) {
		return;
	}
	while (b < RZ_ENGINE_BUCKETS && s > rz_engine_buckets[b]) {
		b++;
	}
	st->step_hist[r->step][b]++;
	st->step_count[r->step]++;
	st->step_seconds[r->step] += s;
}

/* The name of a signal that ends a crashing or killed process. */
static const char *signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = { { SIGSEGV, "SIGSEGV" }, { SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" },
		      { SIGILL, "SIGILL" },   { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
		      { SIGTERM, "SIGTERM" }, { SIGINT, "SIGINT" },   { SIGPIPE, "SIGPIPE" },
		      { SIGQUIT, "SIGQUIT" }, { SIGHUP, "SIGHUP" } };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].sig == sig) {
			return names[i].name;
		}
	}
	return "a signal";
}

static void step_done(void *arg, int status, bool timed_out, bool canceled)
{
	struct run *r = arg;
	static const char *const names[] = { "init", "plan", "show", "apply" };
	rz_err_t err = { 0 };

	count_step(r);
	if (timed_out) {
		snprintf(r->error, sizeof(r->error), "tofu %s timed out after %llds (tofu.timeout)",
		         names[r->step], (long long)(r->e->o.timeout_ms / 1000));
		rz__engine_finish(r, RZ_RUN_FAILED, status);
		return;
	}
	if (!canceled && status != 0 && json_array_size(r->diagnostics) == 0) {
		/* tofu printed no JSON diagnostic (init never does): its last words are one */
		char summary[64];
		snprintf(summary, sizeof(summary), "tofu %s failed", names[r->step]);
		while (r->tail_len > 0 && r->tail[r->tail_len - 1] == '\n') {
			r->tail[--r->tail_len] = '\0';
		}
		add_diagnostic(r, json_pack("{s:s, s:s, s:s, s:s}", "severity", "error", "summary",
		                            summary, "detail",
		                            r->tail_len ? r->tail : "(no output)", "address", ""));
	}
	if (!canceled && status > 128 && status < 128 + 65) {
		snprintf(r->error, sizeof(r->error),
		         "tofu %s was killed by signal %d (%s): see the run's diagnostics and log",
		         names[r->step], status - 128, signal_name(status - 128));
		rz__engine_finish(r, RZ_RUN_FAILED, status);
		return;
	}
	if (canceled || status != 0) {
		snprintf(r->error, sizeof(r->error), "tofu %s %s", names[r->step],
		         canceled ? "was canceled" : "failed (see the run's diagnostics and log)");
		rz__engine_finish(r, canceled ? RZ_RUN_CANCELED : RZ_RUN_FAILED, status);
		return;
	}
	if (r->step == STEP_SHOW) {
		size_t shown = r->show.len;
		json_error_t jerr = { 0 };
		r->plan = r->show.p && !r->show.cut ? json_loads(r->show.p, 0, &jerr) : NULL;
		if (r->plan == NULL && r->show.p != NULL) {
			char at[32];
			snprintf(at, sizeof(at), "%d", jerr.position);
			rz_logkv(RZ_LOG_WARNING, "engine",
			         "the output of tofu show -json is no JSON", "run", r->name,
			         "error", jerr.text, "at", at, NULL);
		}
		if (r->show.p != NULL) {
			sodium_memzero(r->show.p, r->show.len);
		}
		if (!json_is_object(r->plan) ||
		    json_object_get(r->plan, "format_version") == NULL) {
			/* what the plan destroys is not known: the approval guard cannot decide, so
			 * nothing is applied */
			json_decref(r->plan);
			r->plan = NULL;
			snprintf(
			    r->error, sizeof(r->error),
			    "tofu show -json printed no plan (%s%zu bytes): nothing was applied",
			    r->show.cut ? "more than " : "", shown);
			add_diagnostic(r, json_pack("{s:s, s:s, s:s, s:s}", "severity", "error",
			                            "summary", "tofu show -json printed no plan",
			                            "detail", r->error, "address", ""));
			rz__engine_finish(r, RZ_RUN_FAILED, 0);
			return;
		}
		{ /* named before the apply moves the Machines */
			json_t *machines = rz_store_list_all(r->e->store, "Machine", r->t->name);
			r->listed = rz_plan_list(r->plan, machines);
			json_decref(machines);
		}
	}
	r->step++;
	r->tail_len = 0; /* a diagnostic speaks of the step that failed */
	if (rz__engine_next_step(r, &err) != 0) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
		rz__engine_finish(r, RZ_RUN_FAILED, -1);
	}
}

/* The runner holding a remote run's step was lost: the run is Interrupted, its lock
 * released, its secret revoked (rz__engine_finish), and its tenant runs again. */
static void on_lost(void *arg, const char *runner)
{
	struct run *r = arg;
	rz_engine_t *e = r->e;
	struct tenant *t = r->t;
	rz_err_t err = { 0 };

	count_step(r);
	r->lost = true;
	snprintf(r->error, sizeof(r->error),
	         "runner %s was lost (no heartbeat for runners.heartbeat_timeout) while it held "
	         "tofu %s",
	         runner, rz_engine_steps[r->step]);
	{ /* the tenant's owners see it among its Events, not only in the daemon's log */
		char what[256];
		snprintf(what, sizeof(what), "runner %s was lost while it held tofu %s", runner,
		         rz_engine_steps[r->step]);
		rz__engine_run_event(r, "Warning", "RunnerLost", what);
	}
	if (rz_tfstate_release_run_lock(e->tfstate, r->name, &err) < 0) {
		rz_logkv(RZ_LOG_ERR, "engine", "cannot release the lost run's state lock", "run",
		         r->name, "error", err.msg, NULL);
	}
	rz__engine_finish(r, RZ_RUN_INTERRUPTED, -1);
	if (!t->gone && !e->stopping) {
		rz__engine_poke(e, t->name, e->o.debounce_ms,
		                RZ_TRIG_UPDATE); /* as after a restart */
	}
}

/* The job of the run's step waits and no runner can take it: the Run says so, once. */
static void on_waiting(void *arg, const char *why)
{
	struct run *r = arg;

	if (r->stored && r->scheduled != 1) {
		rz_report_run_condition(r->e->store, r->t->name, r->name, "Scheduled", "False",
		                        "NoRunner", why, NULL);
		r->scheduled = 1;
	}
	rz_logkv(RZ_LOG_NOTICE, "engine", "run waits for a runner", "run", r->name, "why", why,
	         NULL);
}

/* ------------------------------------------------------------------ the next step */

static void env_add(const char **env, size_t *n, char *buf, size_t size, const char *name,
                    const char *value)
{
	if (value == NULL || *n + 1 >= MAX_ENV) {
		return;
	}
	snprintf(buf, size, "%s=%s", name, value);
	env[(*n)++] = buf;
	env[*n] = NULL;
}

/* The environment of a step, but PATH and HOME (the runner's own). */
void rz__engine_step_env(struct run *r, const char **env, size_t *n, char (*vars)[PATH_MAX + 64])
{
	rz_engine_t *e = r->e;

	env_add(env, n, vars[*n], sizeof(vars[0]), "TF_IN_AUTOMATION", "1");
	env_add(env, n, vars[*n], sizeof(vars[0]), "TF_INPUT", "0");
	env_add(env, n, vars[*n], sizeof(vars[0]), "CHECKPOINT_DISABLE", "1");
	env_add(env, n, vars[*n], sizeof(vars[0]), "TF_HTTP_PASSWORD", r->secret);
	if (!r->remote && e->o.plugin_cache_dir != NULL && e->o.plugin_cache_dir[0] != '\0') {
		env_add(env, n, vars[*n], sizeof(vars[0]), "TF_PLUGIN_CACHE_DIR",
		        e->o.plugin_cache_dir);
	}
	for (char **p = e->o.env_passthrough; !r->remote && p != NULL && *p != NULL; p++) {
		/* the daemon's own variables never leave it: a runner has its own */
		env_add(env, n, vars[*n], sizeof(vars[0]), *p, getenv(*p));
	}
}

/* The step's job, to a runner: the claim (rz__engine_h_claim) hands it what to run. */
rz_exec_step_t rz__engine_exec_step(struct run *r)
{
	return (rz_exec_step_t){ .run = r->name,
		                 .tenant = r->t->name,
		                 .step = rz_engine_steps[r->step],
		                 .selector = r->selector,
		                 .attempt = 1,
		                 .on_line = on_line,
		                 .on_exit = step_done,
		                 .on_lost = on_lost,
		                 .arg = r,
		                 .on_waiting = on_waiting };
}

static int run_remote(struct run *r, rz_err_t *err)
{
	rz_exec_step_t s = rz__engine_exec_step(r);

	r->dispatched = true;
	r->claimed = false;
	r->step_started_ns = rz__engine_mono_ns();
	if (r->stored) {
		/* what a restarted daemon takes up: the step whose job is out (and, for the
		 * apply, what the plan does, which it cannot read again) */
		json_t *f =
		    json_pack("{s:s, s:s}", "step", rz_engine_steps[r->step], "inputs", r->inputs);
		if (f != NULL && r->step == STEP_APPLY) {
			json_object_set_new(f, "changes", rz_plan_counts(r->plan));
			if (r->listed != NULL) {
				json_object_set(f, "plan", r->listed);
			}
		}
		rz_report_status(r->e->store, "Run", r->t->name, r->name, f);
	}
	return r->e->exec->start(r->e->exec->ctx, &s, err);
}

static int run_step(struct run *r, const char *const *argv, rz_err_t *err)
{
	rz_engine_t *e = r->e;
	static char vars[MAX_ENV][PATH_MAX + 64];
	const char *env[MAX_ENV + 1] = { NULL };
	char dir[PATH_MAX], home[PATH_MAX];
	size_t n = 0;
	rz_proc_opts_t o;

	if (r->remote) {
		return run_remote(r, err);
	}
	rz__engine_tenant_dir(e, r->t->name, dir, sizeof(dir));
	snprintf(home, sizeof(home), "%s", e->o.workdir);
	env_add(env, &n, vars[n], sizeof(vars[0]), "PATH", getenv("PATH"));
	env_add(env, &n, vars[n], sizeof(vars[0]), "HOME", home);
	rz__engine_step_env(r, env, &n, vars);
	o = (rz_proc_opts_t){ argv,    env,       dir, e->o.timeout_ms, e->o.kill_grace_ms,
		              on_line, step_done, r };
	r->step_started_ns = rz__engine_mono_ns();
	return rz_proc_start(&r->proc, e->base, &o, err);
}

/* An apply whose plan destroys resources, while the tenant is not being deleted. */
static bool needs_approval(struct run *r)
{
	json_t *c;
	bool destroys;

	if (!r->e->o.destroy_approval || r->approved || r->deleting || r->op != RZ_OP_APPLY) {
		return false;
	}
	c = rz_plan_counts(r->plan);
	destroys = json_integer_value(json_object_get(c, "destroy")) > 0;
	json_decref(c);
	return destroys;
}

int rz__engine_next_step(struct run *r, rz_err_t *err)
{
	const char *tofu = r->e->o.tofu;
	bool destroy = r->op == RZ_OP_DESTROY;
	/* -reconfigure: the backend address follows the daemon's listen address, and the
	 * state always lives in the daemon: there is never anything to migrate. */
	const char *init[] = { tofu, "init", "-input=false", "-no-color", "-reconfigure", NULL };
	char out[96], file[80];
	/* the plan holds the state in clear: a file of this run alone (0600: the runner's
	 * umask), removed when the run ends */
	snprintf(file, sizeof(file), "%s.plan", r->name);
	snprintf(out, sizeof(out), "-out=%s", file);
	const char *plan[] = { tofu,    "plan", "-input=false",
		               "-json", out,    destroy ? "-destroy" : NULL,
		               NULL };
	const char *show[] = { tofu, "show", "-json", file, NULL };
	const char *apply[] = { tofu, "apply", "-input=false", "-json", file, NULL };
	const char *const *argv[] = { init, plan, show, apply };

	rz_proc_free(r->proc);
	r->proc = NULL;
	if (r->step == STEP_APPLY && r->op == RZ_OP_PLAN) {
		r->step = STEP_DONE; /* a speculative plan changes nothing */
	}
	if (r->step == STEP_APPLY && r->trigger == RZ_TRIG_RESYNC) {
		/* drift detection: the resync's plan says whether reality left the spec */
		char msg[256];
		json_t *c = rz_plan_counts(r->plan);
		r->drifted = rz_plan_changes(r->plan);
		snprintf(msg, sizeof(msg), "the resync plan of run %s found %s (+%lld ~%lld -%lld)",
		         r->name, r->drifted ? "changes" : "none",
		         (long long)json_integer_value(json_object_get(c, "add")),
		         (long long)json_integer_value(json_object_get(c, "change")),
		         (long long)json_integer_value(json_object_get(c, "destroy")));
		json_decref(c);
		rz_report_drift(r->e->store, r->t->name, r->drifted,
		                r->drifted ? "DriftDetected" : "InSync", msg);
		if (r->drifted) {
			rz_logkv(RZ_LOG_NOTICE, "engine", "drift detected: applying", "tenant",
			         r->t->name, "run", r->name, NULL);
			rz__engine_store_run(r);
		}
	}
	if (r->step == STEP_APPLY && !rz_plan_changes(r->plan)) {
		r->step = STEP_DONE; /* nothing to apply: no tofu apply, no new state */
	}
	if (r->step == STEP_APPLY && needs_approval(r)) {
		r->awaiting = true;
		rz_report_status(r->e->store, "Run", r->t->name, r->name,
		                 json_pack("{s:s, s:o, s:o}", "phase",
		                           rz_run_phase_name(RZ_RUN_AWAITING_APPROVAL), "changes",
		                           rz_plan_counts(r->plan), "plan",
		                           r->listed ? json_incref(r->listed) : json_object()));
		{
			char why[256];
			json_t *c = rz_plan_counts(r->plan);
			json_int_t n = json_integer_value(json_object_get(c, "destroy"));
			snprintf(why, sizeof(why),
			         "run %s waits for approval: its plan destroys %lld resource%s",
			         r->name, (long long)n, n == 1 ? "" : "s");
			json_decref(c);
			rz_report_awaiting(r->e->store, r->t->name, why,
			                   r->e->o.provision_timeout_ms);
			rz_events_record(r->e->store, r->t->name, "Tenant", r->t->name, "Warning",
			                 "RunAwaitingApproval", why, "engine");
		}
		rz_logkv(RZ_LOG_NOTICE, "engine",
		         "run awaits approval: its plan destroys resources", "tenant", r->t->name,
		         "run", r->name, NULL);
		r->slot = false; /* nobody may decide for hours: other tenants run meanwhile */
		r->e->running--;
		rz__engine_start_next(r->e);
		return 0;
	}
	if (r->step == STEP_DONE) {
		rz__engine_finish(r, RZ_RUN_SUCCEEDED, 0);
		return 0;
	}
	return run_step(r, argv[r->step], err);
}
