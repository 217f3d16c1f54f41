/* core/observe/observe.c - observing tenants through their cluster plugin's probes. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/report/report.h"
#include "core/base/proc.h"
#include "core/model/states.h"
#include "core/observe/observe.h"
#include "core/plugin/probe.h"
#include "core/store/events.h"
#include "core/store/sweep.h"

#define LASTSEEN_EVERY 10 /* intervals between refreshes of an unchanged lastSeen */

enum outcome { OUT_OK, OUT_FAILED, OUT_TIMEOUT, OUT_ERROR };

const char *const rz_observer_outcomes[4] = { "ok", "failed", "timeout", "error" };

struct buf {
	char *p;
	size_t len, cap, max;
	bool cut; /* more arrived than max */
};

struct otenant;

/* One probe to run (or running), or a command run for another module (rz_observer_exec). */
struct job {
	rz_observer_t *o;
	struct otenant *t; /* a probe's tenant; NULL for a command */
	char tenant[64];
	rz_observer_done_fn done; /* a command's: called instead of the plugin's parse */
	void *done_arg;
	json_t *probe; /* a reference */
	rz_proc_t *proc;
	char cred[PATH_MAX]; /* the credentials file, "" when none */
	struct buf out, err;
	int64_t started_ms;
	struct job *next;
};

struct otenant {
	rz_observer_t *o;
	char name[64];
	char plugin[64];
	struct event *timer;
	bool busy;        /* an observation is in progress */
	bool gone;        /* deleted meanwhile: freed when the observation ends */
	bool again;       /* kicked during an observation: another one right after */
	bool running;     /* a run of it is under way: observed at the fast interval */
	int64_t quiet_ms; /* its settled interval so far (rz_observer_next_wait) */
	size_t pending;   /* its probes not finished yet */
	json_t *facts;    /* merged from its probes */
	struct otenant *next, *prev;
};

struct rz_observer {
	struct event_base *base;
	rz_store_t *store;
	rz_bus_t *bus;
	rz_plugins_t *plugins;
	rz_tfstate_t *tfstate;
	rz_observer_opts_t o;
	uint64_t sub;
	struct otenant *tenants;   /* every tenant observed, and those gone but still busy */
	void *by_name;             /* those not gone, a tsearch(3) tree by name */
	rz_sweep_t *tracking;      /* at start: every tenant, a page per turn of the loop */
	struct job *qhead, *qtail; /* probes waiting for a slot */
	struct job *running;       /* probes running */
	struct job *commands;      /* commands running (rz_observer_exec), outside the slots */
	size_t nrunning, nqueued;
	rz_observer_stats_t stats;
	bool stopping;
};

static void observe(struct otenant *t);
static void pump(rz_observer_t *o);

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ tenants and timers */

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	observe(arg);
}

/* Observe t again in about ms (±10 %, so tenants spread out). */
static void schedule(struct otenant *t, int64_t ms)
{
	int64_t spread = ms / 10, d;
	struct timeval tv;

	if (t->timer == NULL) {
		t->timer = evtimer_new(t->o->base, on_timer, t);
	}
	if (t->timer == NULL) {
		return;
	}
	d = ms - spread + (spread > 0 ? (int64_t)randombytes_uniform((uint32_t)(2 * spread)) : 0);
	tv.tv_sec = d / 1000;
	tv.tv_usec = (d % 1000) * 1000;
	evtimer_add(t->timer, &tv);
}

int64_t rz_observer_next_wait(const rz_observer_opts_t *o, bool settled, bool changed,
                              int64_t *quiet_ms)
{
	int64_t top =
	    o->stable_interval_ms > o->interval_ms ? o->stable_interval_ms : o->interval_ms;

	if (!settled) {
		*quiet_ms = 0;
		return o->fast_interval_ms;
	}
	if (changed || *quiet_ms <= 0) {
		*quiet_ms = o->interval_ms;
	} else {
		*quiet_ms = *quiet_ms > top / 2 ? top : 2 * *quiet_ms;
	}
	return *quiet_ms;
}

static int tenant_cmp(const void *a, const void *b)
{
	return strcmp(((const struct otenant *)a)->name, ((const struct otenant *)b)->name);
}

/* The tenant of that name (created when asked): a tree lookup, since a fleet has thousands
 * and every change of a Machine asks. */
static struct otenant *tenant_of(rz_observer_t *o, const char *name, bool create)
{
	struct otenant key, *t, **found;

	if (snprintf(key.name, sizeof(key.name), "%s", name) >= (int)sizeof(key.name)) {
		return NULL;
	}
	found = tfind(&key, &o->by_name, tenant_cmp);
	if (found != NULL) {
		return *found;
	}
	if (!create || (t = calloc(1, sizeof(*t))) == NULL) {
		return NULL;
	}
	t->o = o;
	memcpy(t->name, key.name, sizeof(t->name));
	if (tsearch(t, &o->by_name, tenant_cmp) == NULL) {
		free(t);
		return NULL;
	}
	t->next = o->tenants;
	if (o->tenants != NULL) {
		o->tenants->prev = t;
	}
	o->tenants = t;
	return t;
}

/* Out of the tree: a tenant of the same name made meanwhile is a new one. */
static void tenant_gone(struct otenant *t)
{
	if (!t->gone) {
		tdelete(t, &t->o->by_name, tenant_cmp);
		t->gone = true;
	}
}

static void tenant_free(struct otenant *t)
{
	rz_observer_t *o = t->o;

	tenant_gone(t);
	if (t->prev != NULL) {
		t->prev->next = t->next;
	} else {
		o->tenants = t->next;
	}
	if (t->next != NULL) {
		t->next->prev = t->prev;
	}
	if (t->timer != NULL) {
		event_free(t->timer);
	}
	json_decref(t->facts);
	free(t);
}

/* A tenant deleted or being deleted is no longer observed. */
static void forget(rz_observer_t *o, const char *name)
{
	struct otenant *t = tenant_of(o, name, false);

	if (t == NULL) {
		return;
	}
	if (t->timer != NULL) {
		evtimer_del(t->timer);
	}
	if (t->busy) {
		tenant_gone(t); /* its probes end first */
	} else {
		tenant_free(t);
	}
}

/* Whether t's next observation is due within ms (or one is under way). */
static bool due_within(const struct otenant *t, int64_t ms)
{
	struct timeval at, now;

	if (t->busy) {
		return true;
	}
	if (t->timer == NULL || !evtimer_pending(t->timer, &at)) {
		return false;
	}
	evutil_gettimeofday(&now, NULL);
	return (int64_t)(at.tv_sec - now.tv_sec) * 1000 + (at.tv_usec - now.tv_usec) / 1000 <= ms;
}

/* A run of a tenant observed: while one runs (tofu may be changing the cluster) the tenant
 * is observed at the fast interval, and once one succeeded it is looked at soon; either way
 * its interval starts again from observe.interval. A run's own writes (its log, its steps)
 * do not put the next observation off. */
static void run_seen(rz_observer_t *o, const rz_event_t *ev)
{
	struct otenant *t = tenant_of(o, ev->tenant, false);
	const char *phase =
	    json_string_value(json_object_get(json_object_get(ev->object, "status"), "phase"));
	bool running = ev->type != RZ_EV_DELETED && phase != NULL && strcmp(phase, "Running") == 0;
	bool succeeded =
	    ev->type != RZ_EV_DELETED && phase != NULL && strcmp(phase, "Succeeded") == 0;

	if (t == NULL || t->gone) {
		return; /* not observed (no machines yet, or being deleted) */
	}
	if (running || (succeeded && t->running)) {
		t->quiet_ms = 0;
		if (!due_within(t, o->o.fast_interval_ms)) {
			schedule(t, o->o.fast_interval_ms);
		}
	}
	t->running = running;
}

static void on_event(const rz_event_t *ev, void *arg)
{
	rz_observer_t *o = arg;
	const char *k = ev->kind->kind;

	if (strcmp(k, "Tenant") == 0 &&
	    (ev->type == RZ_EV_DELETED ||
	     json_object_get(json_object_get(ev->object, "metadata"), "deletionTimestamp"))) {
		forget(o, ev->name);
	} else if (strcmp(k, "Run") == 0 && ev->tenant[0] != '\0') {
		run_seen(o, ev);
	} else if (strcmp(k, "Machine") == 0 && ev->type == RZ_EV_ADDED && ev->tenant[0] != '\0') {
		/* new machines: look soon, and keep looking often while they come up */
		struct otenant *t = tenant_of(o, ev->tenant, true);
		if (t != NULL && !t->busy &&
		    (t->timer == NULL || !evtimer_pending(t->timer, NULL))) {
			schedule(t, o->o.fast_interval_ms);
		}
	}
}

/* ------------------------------------------------------------------ probes */

static void buf_add(struct buf *b, const char *line, size_t len)
{
	size_t want = b->len + len + 1;

	if (b->cut || want > b->max) {
		b->cut = true;
		return;
	}
	if (want + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;
		while (cap < want + 1) {
			cap *= 2;
		}
		if ((p = realloc(b->p, cap)) == NULL) {
			b->cut = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, line, len);
	b->len += len;
	b->p[b->len++] = '\n';
	b->p[b->len] = '\0';
}

static void on_line(void *arg, const char *line, size_t len, bool is_stderr)
{
	struct job *j = arg;

	buf_add(is_stderr ? &j->err : &j->out, line, len);
}

static void job_free(struct job *j)
{
	if (j->cred[0] != '\0') {
		unlink(j->cred);
	}
	rz_proc_free(j->proc);
	json_decref(j->probe);
	free(j->out.p);
	free(j->err.p);
	free(j);
}

/* Write the tenant's credential output name into a private file; its path in j->cred. */
static int write_cred(struct job *j, const char *name, rz_err_t *err)
{
	rz_observer_t *o = j->o;
	char *value = NULL;
	size_t len = 0;
	int fd, rc;

	rc = rz_tfstate_output(o->tfstate, j->tenant, name, &value, &len, err);
	if (rc != 0) {
		return rc == RZ_ENOTFOUND
		           ? rz_err_set(err, rc, "the tenant has no %s yet (no successful apply)",
		                        name)
		           : rc;
	}
	snprintf(j->cred, sizeof(j->cred), "%s/%s-XXXXXX", o->o.tmpdir, name);
	fd = mkstemp(j->cred); /* 0600, in a 0700 directory */
	if (fd < 0 || write(fd, value, len) != (ssize_t)len) {
		rc = rz_err_set(err, -errno, "cannot write a %s file in %s: %s", name, o->o.tmpdir,
		                strerror(errno));
	}
	if (fd >= 0) {
		close(fd);
	}
	sodium_memzero(value, len);
	free(value);
	return rc;
}

static void tenant_done(struct otenant *t);

/* The probe's result to the plugin, its facts into the tenant's. */
static void finish_job(struct job *j, int status, bool timed_out, const char *error)
{
	rz_observer_t *o = j->o;
	struct otenant *t = j->t;
	json_t *result, *facts = NULL;
	rz_err_t err = { 0 };
	enum outcome oc = timed_out ? OUT_TIMEOUT : status == 0 ? OUT_OK : OUT_FAILED;

	if (j->done != NULL) { /* a command: its owner reads the result */
		j->done(j->done_arg, status, timed_out, j->out.p ? j->out.p : "",
		        error      ? error
		        : j->err.p ? j->err.p
		                   : "");
		job_free(j);
		return;
	}
	result = json_pack("{s:i, s:b, s:s, s:s, s:I}", "exitStatus", status, "timedOut", timed_out,
	                   "stdout", j->out.p ? j->out.p : "", "stderr",
	                   error      ? error
	                   : j->err.p ? j->err.p
	                              : "",
	                   "now", (json_int_t)rz_clock_now_ms());
	if (rz_plugins_observe_parse(o->plugins, t->plugin, j->probe, result, &facts, &err) != 0) {
		oc = OUT_ERROR;
		rz_logkv(RZ_LOG_WARNING, "observe", "probe result not understood", "tenant",
		         t->name, "probe", json_string_value(json_object_get(j->probe, "id")),
		         "error", err.msg, NULL);
	} else {
		rz_probe_merge(t->facts, facts);
	}
	o->stats.probes[oc]++;
	o->stats.seconds[oc] += (double)(mono_ms() - j->started_ms) / 1000.0;
	json_decref(facts);
	json_decref(result);
	job_free(j);
	if (--t->pending == 0) {
		tenant_done(t);
	}
}

static void unlink_job(struct job **list, struct job *j)
{
	for (struct job **pp = list; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	}
}

static void on_exit_job(void *arg, int status, bool timed_out, bool canceled)
{
	struct job *j = arg;
	rz_observer_t *o = j->o;

	(void)canceled;
	if (j->done != NULL) {
		unlink_job(&o->commands, j);
		finish_job(j, status, timed_out, NULL);
		return;
	}
	unlink_job(&o->running, j);
	o->nrunning--;
	finish_job(j, status, timed_out, NULL);
	pump(o);
}

/* Start j's process: 0, or why it cannot start (then nothing runs and j is untouched but
 * for its credentials file, removed with it). */
static int spawn(rz_observer_t *o, struct job *j, rz_err_t *err)
{
	const char *tool = json_string_value(json_object_get(j->probe, "tool"));
	const char *cred = json_string_value(json_object_get(j->probe, "credentials"));
	const char *bin = strcmp(tool, "talosctl") == 0 ? o->o.talosctl : o->o.kubectl;
	json_t *args = json_object_get(j->probe, "args");
	const char *argv[RZ_PROBE_ARGS_MAX + 2];
	char path_env[PATH_MAX + 8], home_env[PATH_MAX + 8], cred_env[PATH_MAX + 32];
	const char *env[4] = { path_env, home_env, NULL, NULL };
	rz_proc_opts_t po;
	size_t i, n = 0;
	json_t *a;

	argv[n++] = bin;
	json_array_foreach(args, i, a)
	{
		argv[n++] = json_string_value(a);
	}
	argv[n] = NULL;
	snprintf(path_env, sizeof(path_env), "PATH=%s",
	         getenv("PATH") ? getenv("PATH") : "/usr/local/bin:/usr/bin:/bin");
	snprintf(home_env, sizeof(home_env), "HOME=%s", o->o.tmpdir);
	if (strcmp(cred, "none") != 0) {
		if (write_cred(j, cred, err) != 0) {
			return err->code;
		}
		snprintf(cred_env, sizeof(cred_env), "%s=%s",
		         strcmp(cred, "talosconfig") == 0 ? "TALOSCONFIG" : "KUBECONFIG", j->cred);
		env[2] = cred_env;
	}
	if (j->done == NULL && o->o.probe_timeout_ms > 0 &&
	    json_integer_value(json_object_get(j->probe, "timeout")) > o->o.probe_timeout_ms) {
		/* the plugin reads the timeout back from the probe: it must be the one applied */
		json_object_set_new(j->probe, "timeout", json_integer(o->o.probe_timeout_ms));
	}
	po = (rz_proc_opts_t){ .argv = argv,
		               .env = env,
		               .cwd = o->o.tmpdir,
		               .timeout_ms =
		                   json_integer_value(json_object_get(j->probe, "timeout")),
		               .kill_grace_ms = 1000,
		               .on_line = on_line,
		               .on_exit = on_exit_job,
		               .arg = j };
	j->started_ms = mono_ms();
	return rz_proc_start(&j->proc, o->base, &po, err);
}

/* Start the probe j, or finish it at once with the reason it cannot start. */
static void start_job(rz_observer_t *o, struct job *j)
{
	rz_err_t err = { 0 };

	if (spawn(o, j, &err) != 0) {
		finish_job(j, 127, false, err.msg);
		return;
	}
	j->next = o->running;
	o->running = j;
	o->nrunning++;
}

/* Start waiting probes while slots are free. */
static void pump(rz_observer_t *o)
{
	while (!o->stopping && o->qhead != NULL && o->nrunning < (size_t)o->o.workers) {
		struct job *j = o->qhead;
		o->qhead = j->next;
		if (o->qhead == NULL) {
			o->qtail = NULL;
		}
		o->nqueued--;
		j->next = NULL;
		start_job(o, j);
	}
}

static void enqueue(rz_observer_t *o, struct job *j)
{
	j->next = NULL;
	if (o->qtail != NULL) {
		o->qtail->next = j;
	} else {
		o->qhead = j;
	}
	o->qtail = j;
	o->nqueued++;
}

/* ------------------------------------------------------------------ writing what was seen */

static const char *str_or(const json_t *v, const char *def)
{
	return json_is_string(v) ? json_string_value(v) : def;
}

/* A Machine's transitions as Events: ready, not ready (after it was), unreachable. */
static void machine_events(rz_observer_t *o, const char *tenant, const char *name,
                           const json_t *old, bool ready, const char *stage, const char *error)
{
	bool was = json_is_true(json_object_get(old, "ready"));
	const char *was_stage = json_string_value(json_object_get(old, "stage"));
	char msg[600];

	if (rz_machine_stage_of(stage) == RZ_STAGE_UNKNOWN &&
	    rz_machine_stage_of(was_stage) != RZ_STAGE_UNKNOWN) {
		snprintf(msg, sizeof(msg), "the machine cannot be observed: %s", error);
		rz_events_record(o->store, tenant, "Machine", name, "Warning", "MachineUnreachable",
		                 msg, "observer");
	} else if (ready && !was) {
		snprintf(msg, sizeof(msg), "the machine is %s and ready", stage ? stage : "up");
		rz_events_record(o->store, tenant, "Machine", name, "Normal", "MachineReady", msg,
		                 "observer");
	} else if (!ready && was &&
	           (rz_machine_stage_of(stage) == RZ_STAGE_REBOOTING ||
	            rz_machine_stage_of(stage) == RZ_STAGE_UPGRADING)) {
		/* Talos enters these only on request (an upgrade, a reboot): not a warning */
		snprintf(msg, sizeof(msg), "the machine is %s: not ready until it is back",
		         rz_machine_stage_of(stage) == RZ_STAGE_REBOOTING ? "rebooting"
		                                                          : "upgrading");
		rz_events_record(o->store, tenant, "Machine", name, "Normal",
		                 rz_machine_stage_of(stage) == RZ_STAGE_REBOOTING
		                     ? "MachineRebooting"
		                     : "MachineUpgrading",
		                 msg, "observer");
	} else if (!ready && was) {
		snprintf(msg, sizeof(msg), "the machine is no longer ready (stage %s)%s%s",
		         stage ? stage : "unknown", error[0] ? ": " : "", error);
		rz_events_record(o->store, tenant, "Machine", name, "Warning", "MachineNotReady",
		                 msg, "observer");
	}
}

/* What write_machine did: nothing, lastSeen kept fresh only, or something new written. */
enum { WROTE_NOTHING = 0, WROTE_SEEN = 1, WROTE_NEW = 2 };

/* Machine m's status as the facts f (may be NULL) show it; written when it changed, or its
 * lastSeen when that grew old. */
static int write_machine(rz_observer_t *o, const char *tenant, const json_t *m, const json_t *f,
                         const char *now, int64_t now_ms)
{
	const json_t *old = json_object_get(m, "status");
	const char *name =
	    json_string_value(json_object_get(json_object_get(m, "metadata"), "name"));
	const char *error = str_or(json_object_get(f, "error"), "");
	const json_t *nready = json_object_get(f, "nodeReady");
	bool ready = json_is_true(json_object_get(f, "ready")) && !json_is_false(nready);
	const char *stage =
	    str_or(json_object_get(f, "stage"),
	           error[0] != '\0' ? rz_machine_stage_name(RZ_STAGE_UNKNOWN) : NULL);
	const char *seen = json_string_value(json_object_get(old, "lastSeen"));
	json_t *fields;
	bool changed, refresh;

	if (f == NULL || name == NULL) {
		return WROTE_NOTHING; /* the plugin said nothing of it */
	}
	/* no error: the field goes (null removes it), not an empty string */
	fields = json_pack("{s:b, s:o}", "ready", ready, "lastError",
	                   error[0] != '\0' ? json_string(error) : json_null());
	if (stage != NULL) {
		json_object_set_new(fields, "stage", json_string(stage));
	}
	if (json_is_string(json_object_get(f, "talosVersion"))) {
		json_object_set(fields, "talosVersion", json_object_get(f, "talosVersion"));
	}
	if (json_is_string(json_object_get(f, "kubernetesVersion"))) {
		json_object_set(fields, "kubernetesVersion",
		                json_object_get(f, "kubernetesVersion"));
	}
	if (json_is_boolean(nready)) {
		json_object_set(fields, "nodeReady", (json_t *)nready);
	}
	changed = false;
	{
		const char *key;
		json_t *v;
		json_object_foreach(fields, key, v)
		{
			const json_t *was = json_object_get(old, key);
			changed = changed || (json_is_null(v) ? was != NULL : !json_equal(v, was));
		}
	}
	refresh = error[0] == '\0' && (seen == NULL || now_ms - rz_clock_parse(seen) >=
	                                                   LASTSEEN_EVERY * o->o.interval_ms);
	if (!changed && !refresh) {
		json_decref(fields);
		return WROTE_NOTHING;
	}
	if (error[0] == '\0') {
		json_object_set_new(fields, "lastSeen", json_string(now));
	}
	machine_events(o, tenant, name, old, ready, stage, error);
	rz_report_status(o->store, "Machine", tenant, name, fields);
	return changed ? WROTE_NEW : WROTE_SEEN;
}

/* Tenant.status.controlPlane from the tenant facts; written when it changed. */
static bool write_control_plane(rz_observer_t *o, const char *tenant, const json_t *tf,
                                const json_t *old)
{
	json_t *cp;
	bool changed;

	if (tf == NULL) {
		return false;
	}
	cp = json_pack("{s:b, s:I, s:I, s:I}", "healthy",
	               json_is_true(json_object_get(tf, "controlPlaneHealthy")), "etcdMembers",
	               json_integer_value(json_object_get(tf, "etcdMembers")), "nodes",
	               json_integer_value(json_object_get(tf, "nodes")), "nodesReady",
	               json_integer_value(json_object_get(tf, "nodesReady")));
	if (str_or(json_object_get(tf, "error"), "")[0] != '\0') { /* absent when none */
		json_object_set(cp, "error", json_object_get(tf, "error"));
	}
	changed = !json_equal(cp, old);
	if (changed) {
		rz_report_status(o->store, "Tenant", NULL, tenant,
		                 json_pack("{s:o}", "controlPlane", cp));
	} else {
		json_decref(cp);
	}
	return changed;
}

/* Every probe of t's observation ended: write what changed, derive, schedule the next. */
static void tenant_done(struct otenant *t)
{
	rz_observer_t *o = t->o;
	json_t *machines, *tobj = NULL, *m;
	const char *phase;
	char now[32];
	int64_t now_ms;
	rz_err_t err = { 0 };
	bool changed = false;
	size_t i;

	if (t->gone || o->stopping) {
		t->busy = false;
		if (t->gone) {
			tenant_free(t);
		}
		return;
	}
	o->stats.observations++;
	now_ms = rz_clock_now_ms();
	rz_clock_format(now_ms, now, sizeof(now));
	machines = rz_store_list_all(o->store, "Machine", t->name);
	json_array_foreach(machines, i, m)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(m, "metadata"), "name"));
		const json_t *f =
		    name ? json_object_get(json_object_get(t->facts, "machines"), name) : NULL;
		int w = write_machine(o, t->name, m, f, now, now_ms);
		o->stats.writes += w != 0;
		changed = changed || w == WROTE_NEW;
	}
	json_decref(machines);
	if (rz_store_get(o->store, rz_kind_by_name("Tenant"), NULL, t->name, &tobj, &err) == 0) {
		bool cp = write_control_plane(
		    o, t->name, json_object_get(t->facts, "tenant"),
		    json_object_get(json_object_get(tobj, "status"), "controlPlane"));
		o->stats.writes += cp;
		changed = changed || cp;
		json_decref(tobj);
	}
	rz_report_counts(o->store, t->name, o->o.provision_timeout_ms);
	json_decref(t->facts);
	t->facts = NULL;
	tobj = NULL;
	phase = "";
	if (rz_store_get(o->store, rz_kind_by_name("Tenant"), NULL, t->name, &tobj, &err) == 0) {
		phase = json_string_value(json_object_get(json_object_get(tobj, "status"), "phase"))
		            ?: "";
	}
	t->busy = false; /* the writes above may have told us it is being deleted */
	if (t->gone) {
		tenant_free(t);
	} else if (t->again) { /* kicked meanwhile: what this one saw may be from before */
		t->again = false;
		schedule(t, 0);
	} else {
		json_t *up = rz_report_active_upgrade(o->store, t->name);
		bool settled = up == NULL && !t->running &&
		               (strcmp(phase, "Ready") == 0 || strcmp(phase, "Failed") == 0);
		schedule(t, rz_observer_next_wait(&o->o, settled, changed, &t->quiet_ms));
		json_decref(up);
	}
	json_decref(tobj);
}

/* ------------------------------------------------------------------ an observation */

/* The probes for t, or NULL when there is nothing to observe (then t is rescheduled or
 * forgotten). */
static json_t *probes_for(struct otenant *t)
{
	rz_observer_t *o = t->o;
	json_t *tenant = NULL, *ctx, *probes = NULL;
	rz_err_t err = { 0 };
	const char *plugin;

	if (rz_store_get(o->store, rz_kind_by_name("Tenant"), NULL, t->name, &tenant, &err) != 0 ||
	    json_object_get(json_object_get(tenant, "metadata"), "deletionTimestamp") != NULL) {
		json_decref(tenant);
		forget(o, t->name);
		return NULL;
	}
	plugin =
	    json_string_value(json_object_get(json_object_get(tenant, "spec"), "clusterProvider"));
	snprintf(t->plugin, sizeof(t->plugin), "%s", plugin ? plugin : "");
	ctx = json_pack("{s:O, s:o, s:o, s:I}", "tenant", tenant, "machines",
	                rz_store_list_all(o->store, "Machine", t->name), "nodeGroups",
	                rz_store_list_all(o->store, "NodeGroup", t->name), "now",
	                (json_int_t)rz_clock_now_ms());
	json_decref(tenant);
	{
		json_t *up = rz_report_active_upgrade(o->store, t->name);
		if (up != NULL) {
			json_object_set_new(ctx, "upgrade", up);
		}
	}
	if (json_array_size(json_object_get(ctx, "machines")) == 0 ||
	    !rz_plugins_observes(o->plugins, t->plugin)) {
		json_decref(ctx);
		schedule(t, o->o.interval_ms);
		return NULL;
	}
	if (rz_plugins_observe_probes(o->plugins, t->plugin, ctx, &probes, &err) != 0) {
		rz_logkv(RZ_LOG_WARNING, "observe", "no probes", "tenant", t->name, "error",
		         err.msg, NULL);
		schedule(t, o->o.interval_ms);
	}
	json_decref(ctx);
	return probes;
}

static void observe(struct otenant *t)
{
	rz_observer_t *o = t->o;
	json_t *probes, *p;
	size_t i, n;

	if (t->busy || o->stopping) {
		return;
	}
	if ((probes = probes_for(t)) == NULL) {
		return;
	}
	t->busy = true;
	t->facts = json_object();
	n = json_array_size(probes);
	t->pending = n + 1; /* held until every probe is handed out */
	json_array_foreach(probes, i, p)
	{
		struct job *j = calloc(1, sizeof(*j));
		if (j == NULL) {
			t->pending--;
			continue;
		}
		j->o = o;
		j->t = t;
		snprintf(j->tenant, sizeof(j->tenant), "%s", t->name);
		j->probe = json_incref(p);
		j->out.max = RZ_PROBE_STDOUT_MAX;
		j->err.max = RZ_PROBE_STDERR_MAX;
		j->started_ms = mono_ms();
		if (json_is_string(json_object_get(p, "tool"))) {
			enqueue(o, j);
		} else {
			finish_job(j, 0, false, NULL); /* nothing to run */
		}
	}
	json_decref(probes);
	pump(o);
	if (--t->pending == 0) {
		tenant_done(t);
	}
}

/* ------------------------------------------------------------------ module */

/* At start, tenant by tenant (a sweep, a page per turn of the loop): each is observed at a
 * random moment of one interval. */
static void track_one(void *arg, json_t *t)
{
	rz_observer_t *o = arg;
	json_t *meta = json_object_get(t, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	struct otenant *ot;
	struct timeval tv;
	uint32_t d;

	if (name == NULL || json_object_get(meta, "deletionTimestamp") != NULL ||
	    (ot = tenant_of(o, name, true)) == NULL || ot->timer != NULL) {
		return; /* one a change made known meanwhile has its timer */
	}
	ot->timer = evtimer_new(o->base, on_timer, ot);
	d = randombytes_uniform((uint32_t)(o->o.interval_ms > 0 ? o->o.interval_ms : 1));
	tv.tv_sec = d / 1000;
	tv.tv_usec = (d % 1000) * 1000;
	if (ot->timer != NULL) {
		evtimer_add(ot->timer, &tv);
	}
}

int rz_observer_new(rz_observer_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                    rz_plugins_t *plugins, rz_tfstate_t *tfstate, const rz_observer_opts_t *opts,
                    rz_err_t *err)
{
	rz_observer_t *o = calloc(1, sizeof(*o));

	*out = NULL;
	if (o == NULL) {
		return rz_err_set(err, -ENOMEM, "observe: out of memory");
	}
	o->base = base;
	o->store = store;
	o->bus = bus;
	o->plugins = plugins;
	o->tfstate = tfstate;
	o->o = *opts;
	if (o->o.workers < 1) {
		o->o.workers = 1;
	}
	if (mkdir(o->o.tmpdir, 0700) != 0 && errno != EEXIST) {
		int e = errno;
		free(o);
		return rz_err_set(err, -e, "observe: cannot create %s: %s", opts->tmpdir,
		                  strerror(e));
	}
	chmod(o->o.tmpdir, 0700);
	o->sub = rz_bus_subscribe(bus, on_event, o);
	if (o->sub == 0) {
		free(o);
		return rz_err_set(err, -ENOMEM, "observe: out of memory");
	}
	if ((o->tracking = rz_sweep_new(base, store, "Tenant", track_one, NULL, o)) == NULL) {
		rz_bus_unsubscribe(bus, o->sub);
		free(o);
		return rz_err_set(err, -ENOMEM, "observe: out of memory");
	}
	rz_sweep_start(o->tracking);
	*out = o;
	return 0;
}

void rz_observer_kick(rz_observer_t *o, const char *tenant)
{
	struct otenant *t = o ? tenant_of(o, tenant, true) : NULL;

	if (t != NULL) {
		t->quiet_ms = 0; /* something happens to it: back to the interval */
	}
	if (t != NULL && t->busy) {
		t->again = true;
	} else if (t != NULL) {
		schedule(t, 0);
	}
}

int rz_observer_exec(rz_observer_t *o, const char *tenant, const json_t *command,
                     rz_observer_done_fn done, void *arg, rz_observer_cmd_t **out, rz_err_t *err)
{
	struct job *j;
	int rc;

	*out = NULL;
	if (!json_is_string(json_object_get(command, "tool"))) {
		return rz_err_set(err, REZUS_EINVALID, "the command has no tool to run");
	}
	if (o->stopping || (j = calloc(1, sizeof(*j))) == NULL) {
		return rz_err_set(err, -ENOMEM, "observe: cannot run a command now");
	}
	j->o = o;
	snprintf(j->tenant, sizeof(j->tenant), "%s", tenant);
	j->done = done;
	j->done_arg = arg;
	j->probe = json_deep_copy(command);
	j->out.max = RZ_PROBE_STDOUT_MAX;
	j->err.max = RZ_PROBE_STDERR_MAX;
	if ((rc = spawn(o, j, err)) != 0) {
		job_free(j);
		return rc;
	}
	j->next = o->commands;
	o->commands = j;
	*out = (rz_observer_cmd_t *)j;
	return 0;
}

void rz_observer_exec_cancel(rz_observer_t *o, rz_observer_cmd_t *cmd)
{
	struct job *j = (struct job *)cmd;

	if (o == NULL || j == NULL) {
		return;
	}
	unlink_job(&o->commands, j);
	job_free(j); /* kills its process group, removes its credentials */
}

void rz_observer_stats(const rz_observer_t *o, rz_observer_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	if (o != NULL) {
		*out = o->stats;
		out->running = o->nrunning;
		out->queued = o->nqueued;
	}
}

void rz_observer_free(rz_observer_t *o)
{
	if (o == NULL) {
		return;
	}
	o->stopping = true;
	rz_bus_unsubscribe(o->bus, o->sub);
	rz_sweep_free(o->tracking);
	while (o->qhead != NULL) {
		struct job *j = o->qhead;
		o->qhead = j->next;
		job_free(j);
	}
	while (o->running != NULL) {
		struct job *j = o->running;
		o->running = j->next;
		job_free(j); /* kills the probe, removes its credentials */
	}
	while (o->commands != NULL) {
		struct job *j = o->commands;
		o->commands = j->next;
		job_free(j);
	}
	while (o->tenants != NULL) {
		tenant_free(o->tenants);
	}
	free(o);
}
