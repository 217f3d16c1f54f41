/* core/engine/engine.c - runs of tofu per tenant: triggers, the queue, the pool, the steps. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "core/plugin/compose.h"
#include "core/auth/access.h"
#include "core/engine/engine.h"
#include "core/plugin/host.h"
#include "core/base/log.h"
#include "core/base/exec.h"
#include "core/engine/executor.h"
#include "core/engine/plan.h"
#include "core/report/report.h"
#include "core/engine/runlog.h"
#include "core/base/clock.h"
#include "core/base/proc.h"
#include "core/engine/tfui.h"
#include "core/store/events.h"
#include "core/store/sweep.h"

#define MAX_ENV  64
#define TAIL_MAX 2048 /* bytes of a step's last text lines kept for a diagnostic */
/* Diagnostics kept in a Run's status; the rest are counted in one more. */
#define MAX_DIAGNOSTICS 100

enum step { STEP_INIT, STEP_PLAN, STEP_SHOW, STEP_APPLY, STEP_DONE };

/* A Run's final status that could not be written (the database refused) is written again
 * after 1 s, 2 s, 4 s ... up to SETTLE_TRIES times, at most SETTLE_MAX of them at once;
 * what is still unwritten then is left to the sweep: every SWEEP_MS, a Run still Running
 * (or Queued, AwaitingApproval) with no run of the engine behind it becomes Interrupted. */
#define SETTLE_TRIES 6
#define SETTLE_MAX   256
#define SWEEP_MS     60000

/* The most of `tofu show -json` kept: a plan larger than this is not applied. */
#define SHOW_MAX ((size_t)256 << 20)

/* The most of a working directory a claim hands a runner (base64 aside). */
#define RZ_ENGINE_CLAIM_MAX (64 << 20)

struct tenant;

struct run {
	rz_engine_t *e;
	struct tenant *t;
	char name[64];
	char operation[16]; /* plan | apply | destroy */
	char trigger[16];   /* create | update | resync | manual | delete */
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
	char waiting[64];    /* the Run stored for it meanwhile (Queued), taken up at its start */
	bool again;          /* changed while running: one follow-up */
	bool held;           /* its run waits for an upgrade to end */
	char upgraded[64];   /* the last UpgradeRun seen to succeed */
	int failures;        /* runs failed in a row: the backoff grows with them */
	const char *trigger; /* of the next run: "create", "update" or "resync" */
	char manual[64];     /* a Run created through the API, to start next */
	char finished[64];   /* the last of its runs to finish (its status.lastRun) */
	bool gone;           /* deleted while its run finished: forgotten after it */
	struct tenant *next, *qnext;
};

struct rz_engine {
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
	rz_route_t routes[3];
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
	rz_route_t runner_routes[2];
	int64_t waiting_logged_ms; /* the last "no runner Ready" line */
	json_t *adopt; /* at start: the Runs a previous daemon left on runners, to take up */
};

/* A Run's final status not written yet. */
struct unsettled {
	char tenant[64], name[64], operation[16], phase[16];
	char error[512];
	bool report; /* its tenant's lastRun is this run's too */
	json_t *fields;
	int tries;
	struct unsettled *next;
};

static void start_next(rz_engine_t *e);
static void step_done(void *arg, int status, bool timed_out, bool canceled);
static void on_observed(evutil_socket_t fd, short what, void *arg);

/* ------------------------------------------------------------------ tenants and the queue */

static int tenant_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tenant *)a)->name, ((const struct tenant *)b)->name);
}

/* The tenant of that name (created when asked): a tree lookup, since every event, status
 * write and start-up sweep asks, and a fleet has thousands. */
static struct tenant *tenant_of(rz_engine_t *e, const char *name, bool create)
{
	struct tenant key, *t, **found;

	if (snprintf(key.name, sizeof(key.name), "%s", name) >= (int)sizeof(key.name)) {
		return NULL; /* no tenant has a longer name */
	}
	found = tfind(&key, &e->by_name, tenant_cmp);
	if (found != NULL) {
		return *found;
	}
	if (!create || (t = calloc(1, sizeof(*t))) == NULL) {
		return NULL;
	}
	t->e = e;
	memcpy(t->name, key.name, sizeof(t->name));
	if (tsearch(t, &e->by_name, tenant_cmp) == NULL) {
		free(t);
		return NULL;
	}
	t->next = e->tenants;
	e->tenants = t;
	e->ntenants++;
	return t;
}

static void finish(struct run *r, const char *phase, int exit_code);

/* What happened to run r, as an Event on its tenant (repeats of a reason are counted). */
static void run_event(struct run *r, const char *type, const char *reason, const char *what)
{
	char msg[700];

	snprintf(msg, sizeof(msg), "run %s (%s, %s): %s", r->name, r->operation, r->trigger, what);
	rz_events_record(r->e->store, r->t->name, "Tenant", r->t->name, type, reason, msg,
	                 "engine");
}

/* The runnerSelector the tenant's next run has, with remote runners: the tenant's and its
 * node groups', merged, read now (NULL: none; or they conflict, and start_run fails the run
 * saying so). An approved run waiting for its slot has its own already. */
static void queued_selector(struct tenant *t)
{
	rz_engine_t *e = t->e;
	json_t *tenant = NULL, *groups, *sel = NULL, *old = t->sel;
	rz_err_t err = { 0 };

	t->sel = NULL;
	if (e->exec != NULL && e->exec->remote(e->exec->ctx)) {
		if (t->run != NULL) {
			t->sel = json_incref(t->run->selector);
		} else if (rz_store_get(e->store, rz_kind_by_name("Tenant"), NULL, t->name, &tenant,
		                        &err) == 0) {
			groups = rz_store_list_all(e->store, "NodeGroup", t->name);
			if (rz_kind_runner_selector(tenant, groups, &sel, &err) == 0 &&
			    json_object_size(sel) > 0) {
				t->sel = sel;
			} else {
				json_decref(sel);
			}
			json_decref(groups);
			json_decref(tenant);
		}
	}
	if (!(old == NULL ? t->sel == NULL : t->sel != NULL && json_equal(old, t->sel))) {
		t->unserved = false; /* another pool: said again if it is not served either */
	}
	json_decref(old);
}

/* Into the FIFO of tenants waiting for a pool slot (a new run, or an approved one). */
static void push(struct tenant *t)
{
	rz_engine_t *e = t->e;

	queued_selector(t);
	t->queued = true;
	t->qnext = NULL;
	if (e->qtail != NULL) {
		e->qtail->qnext = t;
	} else {
		e->qhead = t;
	}
	e->qtail = t;
	start_next(e);
}

/* Out of the FIFO (an approved run canceled before it got its slot). */
static void unqueue(struct tenant *t)
{
	rz_engine_t *e = t->e;
	struct tenant **pp, *prev = NULL;

	for (pp = &e->qhead; *pp != NULL; prev = *pp, pp = &(*pp)->qnext) {
		if (*pp == t) {
			*pp = t->qnext;
			if (e->qtail == t) {
				e->qtail = prev;
			}
			break;
		}
	}
	t->queued = false;
}

/* A deleted tenant's record goes once nothing of it runs or waits: a fleet's churn must
 * not grow the engine. A record still running is marked and forgotten when its run ends. */
static void forget(rz_engine_t *e, struct tenant *t)
{
	struct tenant **pp;

	if (t->run != NULL) {
		t->gone = true;
		return;
	}
	if (t->queued) {
		unqueue(t);
	}
	tdelete(t, &e->by_name, tenant_cmp);
	for (pp = &e->tenants; *pp != NULL && *pp != t; pp = &(*pp)->next) {
	}
	if (*pp == t) {
		*pp = t->next;
	}
	e->ntenants--;
	if (t->debounce != NULL) {
		event_free(t->debounce);
	}
	if (t->observed != NULL) {
		event_free(t->observed);
	}
	json_decref(t->sel);
	free(t);
}

static void enqueue(struct tenant *t)
{
	/* A change makes a waiting apply's plan stale; a manual run (a speculative plan, an
	 * apply asked for by hand) queues behind it and leaves it as it is. */
	if (t->run != NULL && t->run->awaiting && t->trigger != NULL &&
	    strcmp(t->trigger, "resync") != 0) {
		snprintf(t->run->error, sizeof(t->run->error), "superseded by a newer change");
		finish(t->run, "Canceled", -1);
	}
	if (t->queued || t->run != NULL) {
		t->again = t->run != NULL;
		if (t->queued && t->run == NULL) {
			queued_selector(t); /* a node group's selector may have changed */
			start_next(t->e);
		}
		return;
	}
	push(t);
}

static void on_debounce(evutil_socket_t fd, short what, void *arg)
{
	enqueue(arg);
}

/* A reason to run: restart the tenant's trailing debounce. A resync or a retry never
 * relabels a change already waiting, nor an update a creation. */
static void poke(rz_engine_t *e, const char *tenant, int64_t delay_ms, const char *trigger)
{
	struct tenant *t = tenant_of(e, tenant, true);

	if (t == NULL) {
		return;
	}
	if (strcmp(trigger, "resync") == 0 && t->run != NULL && t->run->awaiting) {
		return; /* a waiting approval is left alone until someone decides */
	}
	if (strcmp(trigger, "manual") != 0 && /* a manual Run is t->manual, not a change */
	    (t->trigger == NULL ||
	     (strcmp(trigger, "resync") != 0 &&
	      !(strcmp(t->trigger, "create") == 0 && strcmp(trigger, "update") == 0)))) {
		t->trigger = trigger; /* a new tenant's node groups still make its "create" run */
	}
	if (t->run != NULL && !t->run->awaiting) {
		t->again = true; /* exactly one follow-up, however many changes */
		return;
	}
	if (t->debounce == NULL) {
		t->debounce = evtimer_new(e->base, on_debounce, t);
	} else if (strcmp(trigger, "resync") == 0 && evtimer_pending(t->debounce, NULL)) {
		return; /* a resync never pushes back a change waiting out its debounce: with
		         * tofu.resync shorter than tofu.debounce the change would never run */
	}
	if (t->debounce != NULL) {
		struct timeval tv = rz_clock_timer(delay_ms); /* delay_ms, or a fake clock's */
		evtimer_add(t->debounce, &tv);
	}
}

/* The manual Run waiting to start ends Canceled, saying why; when nothing else asked for a
 * run, the tenant leaves the queue. */
static void drop_manual(struct tenant *t, const char *why)
{
	char now[32];

	rz_report_now(now, sizeof(now));
	rz_report_status(
	    t->e->store, "Run", t->name, t->manual,
	    json_pack("{s:s, s:s, s:s}", "phase", "Canceled", "finishedAt", now, "message", why));
	rz_logkv(RZ_LOG_NOTICE, "engine", "run canceled before it started", "tenant", t->name,
	         "run", t->manual, "why", why, NULL);
	t->manual[0] = '\0';
	if (t->trigger != NULL) {
		return; /* a change still waits: its run goes ahead */
	}
	if (t->queued && t->run == NULL) {
		unqueue(t);
	}
	if (t->debounce != NULL) {
		evtimer_del(t->debounce);
	}
	if (t->run != NULL) {
		t->again = false;
	}
}

/* Derive the tenant's status again after ms, on a turn of its own (once, however many
 * changes ask meanwhile). */
static void recount_soon(rz_engine_t *e, const char *tenant, long ms)
{
	struct tenant *t = tenant_of(e, tenant, true);
	struct timeval tv = { 0, ms * 1000 };

	if (t != NULL && t->observed == NULL) {
		t->observed = evtimer_new(e->base, on_observed, t);
	}
	if (t != NULL && t->observed != NULL && !evtimer_pending(t->observed, NULL)) {
		evtimer_add(t->observed, &tv);
	}
}

static void on_event(const rz_event_t *ev, void *arg)
{
	rz_engine_t *e = arg;
	const char *k = ev->kind->kind;

	if (strcmp(k, "Run") == 0 && ev->type == RZ_EV_ADDED) {
		const char *trigger = json_string_value(
		    json_object_get(json_object_get(ev->object, "spec"), "trigger"));
		struct tenant *t = tenant_of(e, ev->tenant, true);
		if (t != NULL && trigger != NULL && strcmp(trigger, "manual") == 0) {
			if (t->manual[0] != '\0') {
				char why[128];
				snprintf(why, sizeof(why), "superseded by run %s", ev->name);
				drop_manual(t, why);
			}
			snprintf(t->manual, sizeof(t->manual), "%s", ev->name);
			/* on its own turn of the loop, not inside delivery */
			poke(e, ev->tenant, 0, "manual");
		}
		return;
	}
	if (strcmp(k, "UpgradeRun") == 0 && ev->type != RZ_EV_ADDED && ev->tenant[0] != '\0') {
		const char *phase = json_string_value(
		    json_object_get(json_object_get(ev->object, "status"), "phase"));
		struct tenant *t = tenant_of(e, ev->tenant, true);
		bool ended = ev->type == RZ_EV_DELETED ||
		             (phase != NULL && strcmp(phase, "Pending") != 0 &&
		              strcmp(phase, "Prechecking") != 0 && strcmp(phase, "Upgrading") != 0);
		bool dry =
		    json_is_true(json_object_get(json_object_get(ev->object, "spec"), "dryRun"));
		if (t != NULL && ended && !dry && t->held) {
			t->held = false;
			poke(e, ev->tenant, 0, "upgrade"); /* what waited for it goes ahead */
		} else if (t != NULL && ended && !dry && phase != NULL &&
		           strcmp(phase, "Succeeded") == 0 && strcmp(t->upgraded, ev->name) != 0) {
			poke(e, ev->tenant, 0, "upgrade"); /* new machines boot the new version */
		}
		if (t != NULL && phase != NULL && strcmp(phase, "Succeeded") == 0) {
			snprintf(t->upgraded, sizeof(t->upgraded), "%s", ev->name);
		}
		return;
	}
	if (strcmp(k, "Machine") == 0 && ev->type == RZ_EV_MODIFIED && !ev->spec_changed &&
	    ev->tenant[0] != '\0') {
		recount_soon(e, ev->tenant, 100); /* observation: counts and phase follow, no run */
		return;
	}
	if (strcmp(k, "Tenant") == 0 && ev->type == RZ_EV_MODIFIED && ev->spec_changed &&
	    json_object_get(json_object_get(ev->object, "metadata"), "deletionTimestamp")) {
		recount_soon(e, ev->name, 0); /* its phase is Deleting from now on */
	}
	if (!ev->spec_changed) {
		return; /* status and metadata writes never trigger */
	}
	if (strcmp(k, "Tenant") == 0 && ev->type == RZ_EV_DELETED) {
		struct tenant *t = tenant_of(e, ev->name, false);
		if (t != NULL) {
			forget(e, t);
		}
	} else if (strcmp(k, "Tenant") == 0) {
		poke(e, ev->name, e->o.debounce_ms, ev->type == RZ_EV_ADDED ? "create" : "update");
	} else if ((strcmp(k, "NodeGroup") == 0 || strcmp(k, "ConfigPatch") == 0) &&
	           ev->tenant[0] != '\0') {
		poke(e, ev->tenant, e->o.debounce_ms, "update");
	}
}

/* The run's Run object: the manual one, or a new one for this trigger. */
/* The Run stored while the tenant waited for its pool's runners: this run, when it asks
 * for the same (operation, generation); else it is Canceled, superseded, and a new one is
 * made. */
static bool take_waiting(struct run *r, const json_t *tenant)
{
	rz_engine_t *e = r->e;
	struct tenant *t = r->t;
	json_t *m = NULL, *spec;
	rz_err_t err = { 0 };
	char now[32];
	bool same;

	snprintf(r->name, sizeof(r->name), "%s", t->waiting);
	t->waiting[0] = '\0';
	if (rz_store_get(e->store, rz_kind_by_name("Run"), t->name, r->name, &m, &err) != 0) {
		return false;
	}
	spec = json_object_get(m, "spec");
	same = strcmp(json_string_value(json_object_get(spec, "operation")) ?: "",
	              r->deleting ? "destroy" : "apply") == 0 &&
	       json_integer_value(json_object_get(spec, "generation")) ==
	           json_integer_value(
	               json_object_get(json_object_get(tenant, "metadata"), "generation"));
	if (same) {
		r->stored = true;
		snprintf(r->operation, sizeof(r->operation), "%s",
		         r->deleting ? "destroy" : "apply");
		snprintf(r->trigger, sizeof(r->trigger), "%s",
		         json_string_value(json_object_get(spec, "trigger")) ?: "update");
		r->generation = json_integer_value(json_object_get(spec, "generation"));
		t->trigger = NULL;
	} else {
		rz_report_now(now, sizeof(now));
		rz_report_status(e->store, "Run", t->name, r->name,
		                 json_pack("{s:s, s:s, s:s}", "phase", "Canceled", "finishedAt",
		                           now, "message", "superseded by a newer change"));
		r->name[0] = '\0';
	}
	json_decref(m);
	return same;
}

static int make_run(struct run *r, const json_t *tenant, rz_err_t *err)
{
	rz_engine_t *e = r->e;
	struct tenant *t = r->t;
	bool deleting = json_object_get(json_object_get(tenant, "metadata"), "deletionTimestamp");
	const char *trigger = t->trigger ? t->trigger : "update";
	json_t *obj, *out = NULL;
	unsigned char raw[4];
	int rc;

	r->deleting = deleting;
	if (t->manual[0] != '\0' && deleting) {
		drop_manual(t, "superseded by the tenant's deletion");
	}
	if (t->waiting[0] != '\0' && take_waiting(r, tenant)) {
		return 0;
	}
	if (t->manual[0] != '\0') {
		json_t *m = NULL;
		r->stored = true;
		snprintf(r->name, sizeof(r->name), "%s", t->manual);
		t->manual[0] = '\0';
		if (rz_store_get(e->store, rz_kind_by_name("Run"), t->name, r->name, &m, err) !=
		    0) {
			return err->code;
		}
		snprintf(
		    r->operation, sizeof(r->operation), "%s",
		    json_string_value(json_object_get(json_object_get(m, "spec"), "operation")));
		snprintf(r->trigger, sizeof(r->trigger), "manual");
		json_decref(m);
		if (strcmp(r->operation, "plan") == 0 && t->trigger != NULL) {
			t->again = true; /* a change waits too: it gets its apply after the plan */
		} else {
			t->trigger = NULL;
		}
		return 0;
	}
	t->trigger = NULL;
	randombytes_buf(raw, sizeof(raw));
	snprintf(r->name, sizeof(r->name), "run-%02x%02x%02x%02x", raw[0], raw[1], raw[2], raw[3]);
	snprintf(r->operation, sizeof(r->operation), "%s", deleting ? "destroy" : "apply");
	snprintf(r->trigger, sizeof(r->trigger), "%s", deleting ? "delete" : trigger);
	r->generation =
	    json_integer_value(json_object_get(json_object_get(tenant, "metadata"), "generation"));
	if (strcmp(r->trigger, "resync") == 0) {
		return 0; /* stored only when its plan finds something to do, or it fails */
	}
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:I}}", "metadata", "name", r->name, "tenant",
	                t->name, "spec", "operation", r->operation, "trigger", r->trigger,
	                "generation", r->generation);
	rc = rz_store_create(e->store, rz_kind_by_name("Run"), obj, NULL, &out, err);
	json_decref(obj);
	json_decref(out);
	r->stored = rc == 0;
	return rc;
}

/* A resync's Run, stored once it has something to tell: it found drift, or it failed. */
static void store_run(struct run *r)
{
	json_t *obj, *out = NULL;
	rz_err_t err = { 0 };

	if (r->stored) {
		return;
	}
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:I}}", "metadata", "name", r->name, "tenant",
	                r->t->name, "spec", "operation", r->operation, "trigger", r->trigger,
	                "generation", r->generation);
	if (rz_store_create(r->e->store, rz_kind_by_name("Run"), obj, NULL, &out, &err) == 0) {
		r->stored = true;
		rz_report_status(
		    r->e->store, "Run", r->t->name, r->name,
		    json_pack("{s:s, s:s}", "phase", "Running", "startedAt", r->started));
		run_event(r, "Normal", "RunStarted", "started");
	} else {
		rz_log_warn("engine", "tenant '%s': cannot store run %s: %s", r->t->name, r->name,
		            err.msg);
	}
	json_decref(obj);
	json_decref(out);
}

/* ------------------------------------------------------------------ the working directory */

static void tenant_dir(const rz_engine_t *e, const char *tenant, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", e->o.workdir, tenant);
}

/* Compose the tenant from the store into its directory, with the http backend. */
/* Resources the composed files declare. */
static size_t rendered_resources(const json_t *files)
{
	const char *name;
	json_t *doc, *types, *of;
	const char *type;
	size_t n = 0;

	json_object_foreach((json_t *)files, name, doc)
	{
		types = json_object_get(doc, "resource");
		json_object_foreach(types, type, of)
		{
			n += json_object_size(of);
		}
	}
	return n;
}

/* A render with no resources for a tenant whose state holds some is refused: a broken
 * plugin or a typo must never plan the whole cluster away. */
static int guard_empty(struct run *r, const json_t *files, rz_err_t *err)
{
	json_t *state = NULL;
	size_t held = 0;
	rz_err_t ignored = { 0 };

	if (rendered_resources(files) > 0 ||
	    rz_tfstate_get(r->e->tfstate, r->t->name, &state, &ignored) != 0) {
		return 0;
	}
	held = json_array_size(json_object_get(state, "resources"));
	json_decref(state);
	if (held == 0) {
		return 0;
	}
	return rz_err_set(err, RZ_ECONFLICT,
	                  "the render has no resources but the tenant's state holds %zu: refusing "
	                  "to plan them all away (check the tenant's clusterProvider and its node "
	                  "groups' providerClass; delete the tenant to destroy it)",
	                  held);
}

/* A destroy needs every plugin the tenant's resources came from: its cluster plugin and
 * each node group's. One that is not loaded blocks it, saying so (the state is kept). */
static int destroy_blocked(struct run *r, const json_t *tenant, const json_t *groups, rz_err_t *err)
{
	const char *need =
	    json_string_value(json_object_get(json_object_get(tenant, "spec"), "clusterProvider"));
	char name[64];
	json_t *g;
	size_t i = 0;

	for (;;) {
		if (need != NULL) {
			size_t len = strcspn(need, ":");
			snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), need);
			if (rz_plugins_find(r->e->plugins, name) == NULL) {
				return rz_err_set(
				    err, RZ_ECONFLICT,
				    "cannot destroy: plugin '%s' is not loaded (list it under "
				    "plugins: in rezus.conf); the tenant and its resources "
				    "stay until it is",
				    name);
			}
		}
		if ((g = json_array_get(groups, i++)) == NULL) {
			return 0;
		}
		need =
		    json_string_value(json_object_get(json_object_get(g, "spec"), "providerClass"));
	}
}

#define MAX_STATE_CA (64 * 1024) /* bytes of server.tls.cert_file handed to tofu */

/* An https backend: the daemon's certificate (and chain) as the backend's CA
 * (client_ca_certificate_pem), read now so that a reloaded certificate is the one given. */
static int backend_ca(rz_engine_t *e, json_t *backend, rz_err_t *err)
{
	char *pem;
	FILE *f;
	size_t n;
	int rc = 0;

	if (e->o.state_ca_file == NULL) {
		return 0;
	}
	pem = malloc(MAX_STATE_CA + 1);
	f = fopen(e->o.state_ca_file, "r");
	if (pem == NULL || f == NULL) {
		int errnum = f == NULL ? errno : ENOMEM;
		free(pem);
		if (f != NULL) {
			fclose(f);
		}
		return rz_err_set(err, -errnum,
		                  "engine: reading the TLS certificate '%s' failed: %s",
		                  e->o.state_ca_file, strerror(errnum));
	}
	n = fread(pem, 1, MAX_STATE_CA + 1, f);
	fclose(f);
	if (n == 0 || n > MAX_STATE_CA) {
		rc = rz_err_set(err, REZUS_ECONFIG,
		                "engine: the TLS certificate '%s' is empty or over %d bytes",
		                e->o.state_ca_file, MAX_STATE_CA);
	} else {
		pem[n] = '\0';
		json_object_set_new(backend, "client_ca_certificate_pem", json_string(pem));
	}
	free(pem);
	return rc;
}

/* The labels the run's runner needs: the tenant's runnerSelector and every node group's
 * (rz_kind_runner_selector). Selectors no runner can match fail the run before any job is
 * published, with a Warning Event on the tenant naming the node groups and the key. */
static int run_selector(struct run *r, const json_t *tenant, const json_t *groups, rz_err_t *err)
{
	json_t *sel = NULL;
	int rc = rz_kind_runner_selector(tenant, groups, &sel, err);

	if (rc != 0) {
		rz_events_record(r->e->store, r->t->name, "Tenant", r->t->name, "Warning",
		                 "RunnerSelectorConflict", err->msg, "engine");
		return rc;
	}
	json_decref(r->selector);
	r->selector = json_object_size(sel) > 0 ? sel : NULL;
	if (r->selector == NULL) {
		json_decref(sel);
	}
	return 0;
}

static int render(struct run *r, const json_t *tenant, rz_err_t *err)
{
	rz_engine_t *e = r->e;
	char url[512], dir[PATH_MAX];
	json_t *ctx =
	    json_pack("{s:O, s:o, s:o}", "tenant", (json_t *)tenant, "nodeGroups",
	              rz_store_list_all(e->store, "NodeGroup", r->t->name), "configPatches",
	              rz_store_list_all(e->store, "ConfigPatch", r->t->name));
	json_t *backend, *files = NULL;
	int rc;

	/* a remote run's tofu reaches the daemon at runners.public_url */
	snprintf(url, sizeof(url), "%s/tfstate/%s",
	         r->remote && e->o.public_url != NULL && e->o.public_url[0] != '\0'
	             ? e->o.public_url
	             : e->o.state_url,
	         r->t->name);
	backend = json_pack("{s:s, s:s, s:s, s:s}", "address", url, "lock_address", url,
	                    "unlock_address", url, "username", "rezus");
	if ((rc = backend_ca(e, backend, err)) != 0) {
		json_decref(backend);
		json_decref(ctx);
		return rc;
	}
	mkdir(e->o.workdir, 0700);
	tenant_dir(e, r->t->name, dir, sizeof(dir));
	if (r->deleting &&
	    (rc = destroy_blocked(r, tenant, json_object_get(ctx, "nodeGroups"), err)) != 0) {
		rz_events_record(e->store, r->t->name, "Tenant", r->t->name, "Warning",
		                 "DestroyBlocked", err->msg, "engine");
		json_decref(backend);
		json_decref(ctx);
		return rc;
	}
	if (r->remote &&
	    (rc = run_selector(r, tenant, json_object_get(ctx, "nodeGroups"), err)) != 0) {
		json_decref(backend);
		json_decref(ctx);
		return rc;
	}
	rz_report_inputs(json_object_get(ctx, "nodeGroups"), json_object_get(ctx, "configPatches"),
	                 r->inputs);
	rc = rz_compose(e->plugins, ctx, backend, &files, err);
	if (rc == 0 && !r->deleting) {
		rc = guard_empty(r, files, err);
	}
	if (rc == 0) {
		rc = rz_compose_write(files, dir, err);
	}
	json_decref(files);
	json_decref(backend);
	json_decref(ctx);
	return rc;
}

/* ------------------------------------------------------------------ steps */

/* A line of tofu's output: into the run's log; JSON UI lines also into the run's changes
 * and diagnostics; `show -json` output kept whole. */
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
static json_t *diagnostics_of(struct run *r)
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

static void on_line(void *arg, const char *line, size_t len, bool is_stderr)
{
	struct run *r = arg;
	/* a remote show's JSON comes by HTTPS (h_file), never as lines: its lines are the
	 * init before it */
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

static int64_t mono_ns(void)
{
	return rz_clock_mono_ns(); /* a test's fake clock may stand in */
}

static void on_lost(void *arg, const char *runner);

/* The environment of a step, but PATH and HOME (the runner's own). */
static void step_env(struct run *r, const char **env, size_t *n, char (*vars)[PATH_MAX + 64])
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

/* The step's job, to a runner: the claim (h_claim) hands it what to run. */
static void on_waiting(void *arg, const char *why);

static rz_exec_step_t exec_step(struct run *r)
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
	rz_exec_step_t s = exec_step(r);

	r->dispatched = true;
	r->claimed = false;
	r->step_started_ns = mono_ns();
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
	tenant_dir(e, r->t->name, dir, sizeof(dir));
	snprintf(home, sizeof(home), "%s", e->o.workdir);
	env_add(env, &n, vars[n], sizeof(vars[0]), "PATH", getenv("PATH"));
	env_add(env, &n, vars[n], sizeof(vars[0]), "HOME", home);
	step_env(r, env, &n, vars);
	o = (rz_proc_opts_t){ argv,    env,       dir, e->o.timeout_ms, e->o.kill_grace_ms,
		              on_line, step_done, r };
	r->step_started_ns = mono_ns();
	return rz_proc_start(&r->proc, e->base, &o, err);
}

/* ------------------------------------------------------------------ finishing a run */

/* A machine's observed status changed: recount, without a run. */
static void on_observed(evutil_socket_t fd, short what, void *arg)
{
	struct tenant *t = arg;

	(void)fd;
	(void)what;
	rz_report_counts(t->e->store, t->name, t->e->o.provision_timeout_ms);
}

void rz_engine_state_replaced(void *engine, const char *tenant, const json_t *state)
{
	rz_engine_t *e = engine;

	rz_logkv(RZ_LOG_NOTICE, "engine", "state replaced outside a run: projecting it", "tenant",
	         tenant, NULL);
	rz_report_machines(e->store, e->plugins, tenant, state);
	rz_report_counts(e->store, tenant, e->o.provision_timeout_ms);
}

/* A deleted tenant whose state is destroyed: drop the finalizer, and it goes. */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path); /* best effort: go on with the rest */
	return 0;
}

/* A tenant's working directory and run logs, gone with it. */
static void remove_workdir(rz_engine_t *e, const char *tenant)
{
	char dir[PATH_MAX];

	tenant_dir(e, tenant, dir, sizeof(dir));
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* At start: plans left by runs a crash interrupted hold states in clear; they go. Only
 * the plans directly in each tenant's directory are looked at, never .terraform/. */
static bool adopted(void *arg, const char *run);

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

static void teardown_done(struct run *r)
{
	json_t *patch = json_pack("{s:{s:[]}}", "metadata", "finalizers"), *cur = NULL, *out = NULL;
	rz_err_t err = { 0 };
	bool gone;

	if (rz_store_get(r->e->store, rz_kind_by_name("Tenant"), NULL, r->t->name, &cur, &err) ==
	    0) {
		json_object_set(json_object_get(cur, "metadata"), "finalizers",
		                json_object_get(json_object_get(patch, "metadata"), "finalizers"));
		rz_store_update(r->e->store, rz_kind_by_name("Tenant"), NULL, r->t->name, cur, 0,
		                RZ_UPDATE_SPEC, NULL, &out, &gone, &err);
	}
	json_decref(out);
	json_decref(cur);
	json_decref(patch);
	remove_workdir(r->e, r->t->name);
}

/* After the nth failure in a row: 10 s doubling, capped at the resync interval (or 5 min). */
static int64_t backoff_ms(const rz_engine_t *e, int failures)
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
	tenant_dir(e, tenant, dir, sizeof(dir));
	for (size_t i = 0; i < n; i++) {
		const json_t *st = json_object_get(v[i], "status");
		const char *name =
		    json_string_value(json_object_get(json_object_get(v[i], "metadata"), "name"));
		const char *phase = json_string_value(json_object_get(st, "phase"));
		const char *end = json_string_value(json_object_get(st, "finishedAt"));
		bool done = end != NULL && phase != NULL;
		bool young_failure = done && strcmp(phase, "Failed") == 0 &&
		                     now - rz_clock_parse(end) < e->o.run_retention_ms;

		if (name == NULL || !done || strcmp(name, current) == 0 ||
		    kept < (size_t)e->o.run_history || young_failure) {
			kept++;
			continue;
		}
		out = NULL;
		if (rz_store_delete(e->store, rz_kind_by_name("Run"), tenant, name, 0, NULL, &out,
		                    &gone, &err) == 0) {
			snprintf(path, sizeof(path), "%s/%s.log", dir, name);
			unlink(path);
		}
		json_decref(out);
	}
	free(v);
	json_decref(runs);
}

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
static void settle(struct run *r, const char *phase, json_t *fields)
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
	snprintf(u->operation, sizeof(u->operation), "%s", r->operation);
	snprintf(u->phase, sizeof(u->phase), "%s", phase);
	snprintf(u->error, sizeof(u->error), "%s", r->error);
	u->report = strcmp(r->operation, "plan") != 0 &&
	            (strcmp(r->operation, "destroy") != 0 || strcmp(phase, "Succeeded") != 0);
	u->fields = fields;
	u->tries = 1;
	u->next = e->unsettled;
	e->unsettled = u;
	e->n_unsettled++;
	rz_logkv(RZ_LOG_WARNING, "engine", "final status not written: retrying", "tenant",
	         u->tenant, "run", u->name, "phase", phase, NULL);
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
		const char *phase =
		    json_string_value(json_object_get(json_object_get(run, "status"), "phase"));
		struct tenant *t = tenant ? tenant_of(e, tenant, false) : NULL;
		json_t *fields;

		if (tenant == NULL || name == NULL || phase == NULL ||
		    (strcmp(phase, "Running") != 0 && strcmp(phase, "Queued") != 0 &&
		     strcmp(phase, "AwaitingApproval") != 0) ||
		    (t != NULL && t->run != NULL && strcmp(t->run->name, name) == 0) ||
		    (t != NULL && strcmp(t->manual, name) == 0) || unsettled_has(e, tenant, name)) {
			continue;
		}
		fields =
		    json_pack("{s:s, s:s, s:s}", "phase", "Interrupted", "finishedAt", now,
		              "message", "the run ended but its final status could not be written");
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
static void on_settle(evutil_socket_t fd, short what, void *arg)
{
	rz_engine_t *e = arg;
	struct unsettled **pp = &e->unsettled, *u;

	(void)fd;
	(void)what;
	while ((u = *pp) != NULL) {
		struct tenant *t = tenant_of(e, u->tenant, false);
		bool done =
		    rz_report_status_try(e->store, "Run", u->tenant, u->name, u->fields) == 0;
		if (done && u->report && t != NULL && strcmp(t->finished, u->name) == 0) {
			/* its tenant's lastRun may have missed it as well */
			rz_report_run(e->store, u->tenant, u->name, u->operation, u->phase,
			              u->error, e->o.provision_timeout_ms);
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

static void count_run(rz_engine_t *e, const char *operation, const char *phase)
{
	for (size_t o = 0; o < RZ_ENGINE_OPS; o++) {
		for (size_t p = 0; p < RZ_ENGINE_PHASES; p++) {
			if (strcmp(operation, rz_engine_ops[o]) == 0 &&
			    strcmp(phase, rz_engine_phases[p]) == 0) {
				e->stats.runs[o][p]++;
			}
		}
	}
}

/* What a run holds besides itself: its process, documents and secret (the show's output,
 * sensitive values in clear, and the secret wiped). */
static void run_release(struct run *r)
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

static void finish(struct run *r, const char *phase, int exit_code)
{
	rz_engine_t *e = r->e;
	struct tenant *t = r->t;
	bool failed =
	    strcmp(phase, "Failed") == 0 && strcmp(r->operation, "plan") != 0 && !e->stopping;
	char now[32];
	json_t *state = NULL;
	rz_err_t err = { 0 };
	bool quiet;

	if (strcmp(phase, "Succeeded") == 0 && strcmp(r->operation, "apply") == 0 &&
	    r->talos[0] != '\0') {
		/* what the cluster runs from now on: a change of these later is an upgrade */
		rz_report_status(e->store, "Tenant", NULL, t->name,
		                 json_pack("{s:s, s:s}", "talosVersion", r->talos,
		                           "kubernetesVersion", r->kubernetes));
	}
	if (strcmp(phase, "Succeeded") == 0 && strcmp(r->operation, "plan") != 0 &&
	    rz_tfstate_get(e->tfstate, t->name, &state, &err) == 0) {
		rz_report_machines(e->store, e->plugins, t->name, state);
		if (rz_tfstate_keep_outputs(e->tfstate, t->name, r->name, state, &err) != 0) {
			rz_logkv(RZ_LOG_ERR, "engine", "cannot keep the sensitive outputs",
			         "tenant", t->name, "error", err.msg, NULL);
		}
	}
	json_decref(state);
	if (strcmp(phase, "Succeeded") == 0 && strcmp(r->operation, "apply") == 0 &&
	    r->inputs[0] != '\0') {
		/* what this apply covered: a start runs the tenant again when its node groups or
		 * config patches changed since, should the run that change asked for be lost */
		rz_report_status(e->store, "Tenant", NULL, t->name,
		                 json_pack("{s:s}", "appliedInputs", r->inputs));
	}
	if (!r->stored && strcmp(phase, "Succeeded") != 0 && !e->stopping) {
		store_run(r); /* a resync that failed is worth keeping */
	}
	quiet = !r->stored; /* a resync that found nothing to do: no Run, no Events */
	rz_report_now(now, sizeof(now));
	if (!quiet) {
		json_t *fields =
		    json_pack("{s:s, s:s, s:i, s:s, s:o, s:o}", "phase", phase, "finishedAt", now,
		              "exitCode", exit_code, "message", r->error, "changes",
		              r->plan == NULL && r->changes != NULL ? json_incref(r->changes)
		                                                    : rz_plan_counts(r->plan),
		              "diagnostics", diagnostics_of(r));
		if (fields != NULL && r->listed != NULL) {
			json_object_set(fields, "plan", r->listed);
		}
		settle(r, phase, fields);
		snprintf(t->finished, sizeof(t->finished), "%s", r->name);
	}
	if (strcmp(r->operation, "destroy") == 0 && strcmp(phase, "Succeeded") == 0) {
		teardown_done(r);
	} else if (quiet) {
		rz_report_resynced(e->store, t->name, e->o.provision_timeout_ms);
	} else if (strcmp(r->operation, "plan") != 0) {
		rz_report_run(e->store, t->name, r->name, r->operation, phase, r->error,
		              e->o.provision_timeout_ms);
	}
	if (r->drifted && strcmp(phase, "Succeeded") == 0) {
		char msg[160];
		snprintf(msg, sizeof(msg), "run %s applied what the resync plan found", r->name);
		rz_report_drift(r->e->store, r->t->name, false, "Corrected", msg);
	}
	rz_logkv(RZ_LOG_INFO, "engine", "run finished", "tenant", t->name, "run", r->name,
	         "operation", r->operation, "phase", phase, "error", r->error, NULL);
	count_run(e, r->operation, phase);
	if (!quiet && (strcmp(r->operation, "destroy") != 0 || strcmp(phase, "Succeeded") != 0)) {
		static const char *const reasons[][3] = {
			{ "Succeeded", "Normal", "RunSucceeded" },
			{ "Failed", "Warning", "RunFailed" },
			{ "Canceled", "Normal", "RunCanceled" },
			{ "Interrupted", "Warning", "RunInterrupted" },
		};
		for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
			if (strcmp(phase, reasons[i][0]) == 0) {
				run_event(r, reasons[i][1], reasons[i][2],
				          r->error[0] != '\0' ? r->error : "succeeded");
			}
		}
	}
	rz_auth_ungrant(e->auth, r->name); /* a late write of a lost runner is refused */
	if (r->remote && e->exec != NULL) {
		e->exec->forget(e->exec->ctx, r->name);
	}
	rz_runlog_close(r->log, phase);
	{
		char dir[PATH_MAX], path[PATH_MAX * 2];
		tenant_dir(e, t->name, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s.plan", dir, r->name);
		unlink(path); /* the plan (the state in clear) lives as long as its run */
	}
	if (quiet) {
		char dir[PATH_MAX], path[PATH_MAX * 2];
		tenant_dir(e, t->name, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s.log", dir, r->name);
		unlink(path); /* nobody can ask for the log of a Run that was never stored */
	} else if (!e->stopping) {
		prune_runs(e, t->name, r->name);
	}
	run_release(r);
	if (r->slot) {
		e->running--;
	}
	if (t->queued) { /* approved, still waiting for a slot */
		unqueue(t);
	}
	free(r);
	t->run = NULL;
	t->failures = failed ? t->failures + 1 : strcmp(phase, "Succeeded") == 0 ? 0 : t->failures;
	if (t->gone) { /* deleted meanwhile (its teardown): nothing follows */
		t->again = false;
		forget(e, t);
	} else if (t->again) {
		t->again = false;
		/* the follow-up keeps what asked for it: a resync stays a resync */
		poke(e, t->name, e->o.debounce_ms, t->trigger ? t->trigger : "update");
	} else if (failed) {
		int64_t delay = backoff_ms(e, t->failures);
		char in[32];
		snprintf(in, sizeof(in), "%llds", (long long)(delay / 1000));
		rz_logkv(RZ_LOG_NOTICE, "engine", "run failed: retrying", "tenant", t->name, "in",
		         in, NULL);
		poke(e, t->name, delay, "resync");
	}
	start_next(e);
}

/* ------------------------------------------------------------------ running */

/* An apply whose plan destroys resources, while the tenant is not being deleted. */
static bool needs_approval(struct run *r)
{
	json_t *c;
	bool destroys;

	if (!r->e->o.destroy_approval || r->approved || r->deleting ||
	    strcmp(r->operation, "apply") != 0) {
		return false;
	}
	c = rz_plan_counts(r->plan);
	destroys = json_integer_value(json_object_get(c, "destroy")) > 0;
	json_decref(c);
	return destroys;
}

static int next_step(struct run *r, rz_err_t *err)
{
	const char *tofu = r->e->o.tofu;
	bool destroy = strcmp(r->operation, "destroy") == 0;
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
	if (r->step == STEP_APPLY && strcmp(r->operation, "plan") == 0) {
		r->step = STEP_DONE; /* a speculative plan changes nothing */
	}
	if (r->step == STEP_APPLY && strcmp(r->trigger, "resync") == 0) {
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
			store_run(r);
		}
	}
	if (r->step == STEP_APPLY && !rz_plan_changes(r->plan)) {
		r->step = STEP_DONE; /* nothing to apply: no tofu apply, no new state */
	}
	if (r->step == STEP_APPLY && needs_approval(r)) {
		r->awaiting = true;
		rz_report_status(r->e->store, "Run", r->t->name, r->name,
		                 json_pack("{s:s, s:o, s:o}", "phase", "AwaitingApproval",
		                           "changes", rz_plan_counts(r->plan), "plan",
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
		start_next(r->e);
		return 0;
	}
	if (r->step == STEP_DONE) {
		finish(r, "Succeeded", 0);
		return 0;
	}
	return run_step(r, argv[r->step], err);
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

const char *const rz_engine_steps[RZ_ENGINE_STEPS] = { "init", "plan", "show", "apply" };
const char *const rz_engine_ops[RZ_ENGINE_OPS] = { "plan", "apply", "destroy" };
const char *const rz_engine_phases[RZ_ENGINE_PHASES] = { "Succeeded", "Failed", "Canceled",
	                                                 "Interrupted" };
const double rz_engine_buckets[RZ_ENGINE_BUCKETS] = { 0.1, 0.25, 0.5, 1,   2.5, 5,
	                                              10,  30,   60,  120, 300, 600 };

/* The step that just ended, into its duration histogram. */
static void count_step(struct run *r)
{
	rz_engine_stats_t *st = &r->e->stats;
	double s = (double)(mono_ns() - r->step_started_ns) / 1e9;
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

static void step_done(void *arg, int status, bool timed_out, bool canceled)
{
	struct run *r = arg;
	static const char *const names[] = { "init", "plan", "show", "apply" };
	rz_err_t err = { 0 };

	count_step(r);
	if (timed_out) {
		snprintf(r->error, sizeof(r->error), "tofu %s timed out after %llds (tofu.timeout)",
		         names[r->step], (long long)(r->e->o.timeout_ms / 1000));
		finish(r, "Failed", status);
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
		finish(r, "Failed", status);
		return;
	}
	if (canceled || status != 0) {
		snprintf(r->error, sizeof(r->error), "tofu %s %s", names[r->step],
		         canceled ? "was canceled" : "failed (see the run's diagnostics and log)");
		finish(r, canceled ? "Canceled" : "Failed", status);
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
			finish(r, "Failed", 0);
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
	if (next_step(r, &err) != 0) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
		finish(r, "Failed", -1);
	}
}

/* A tenant being deleted whose state is absent or holds no resources: nothing for tofu to
 * destroy, so no plugin needs to run (it may not even be loaded any more). */
static bool nothing_to_destroy(rz_engine_t *e, const json_t *tenant)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(tenant, "metadata"), "name"));
	json_t *state = NULL;
	rz_err_t err = { 0 };
	bool empty;
	int rc;

	if (json_object_get(json_object_get(tenant, "metadata"), "deletionTimestamp") == NULL ||
	    name == NULL) {
		return false;
	}
	rc = rz_tfstate_get(e->tfstate, name, &state, &err);
	empty = rc == RZ_ENOTFOUND ||
	        (rc == 0 && json_array_size(json_object_get(state, "resources")) == 0);
	json_decref(state);
	return empty;
}

/* The UpgradeRun a change of the tenant's version asks for (trigger spec): Talos first; a
 * Kubernetes change waits for the run after it. */
static void create_upgrade(rz_engine_t *e, const char *tenant, const char *component,
                           const char *from, const char *to)
{
	unsigned char raw[4];
	char name[32];
	json_t *obj, *out = NULL;
	rz_err_t err = { 0 };

	randombytes_buf(raw, sizeof(raw));
	snprintf(name, sizeof(name), "upgrade-%02x%02x%02x%02x", raw[0], raw[1], raw[2], raw[3]);
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:b, s:s}}", "metadata", "name", name,
	                "tenant", tenant, "spec", "component", component, "targetVersion", to,
	                "dryRun", 0, "trigger", "spec");
	if (rz_store_create(e->store, rz_kind_by_name("UpgradeRun"), obj, NULL, &out, &err) != 0) {
		rz_logkv(RZ_LOG_ERR, "engine",
		         "cannot create the upgrade the version change asks for", "tenant", tenant,
		         "error", err.msg, NULL);
	} else {
		char msg[200];
		snprintf(msg, sizeof(msg), "spec.%sVersion changed from %s to %s: upgrade %s",
		         component, from, to, name);
		rz_events_record(e->store, tenant, "Tenant", tenant, "Normal", "UpgradeCreated",
		                 msg, "engine");
	}
	json_decref(obj);
	json_decref(out);
}

/* Whether the tenant's run must wait for an upgrade: one is in progress, or the spec's
 * Talos or Kubernetes version differs from what the cluster's machines run (then the
 * upgrade it needs is created here). A tenant being deleted never waits for a new one. */
static bool upgrade_holds(rz_engine_t *e, struct tenant *t, const json_t *tenant)
{
	const json_t *spec = json_object_get(tenant, "spec");
	const json_t *status = json_object_get(tenant, "status");
	static const char *const components[] = { "talos", "kubernetes" };
	json_t *up = rz_report_active_upgrade(e->store, t->name), *machines;
	bool machines_exist;

	if (up != NULL) {
		json_decref(up);
		return true;
	}
	if (json_object_get(json_object_get(tenant, "metadata"), "deletionTimestamp") != NULL) {
		return false;
	}
	machines = rz_store_list_all(e->store, "Machine", t->name);
	machines_exist = json_array_size(machines) > 0;
	json_decref(machines);
	for (size_t i = 0; machines_exist && i < 2; i++) {
		char key[32];
		snprintf(key, sizeof(key), "%sVersion", components[i]);
		const char *want = json_string_value(json_object_get(spec, key));
		const char *runs = json_string_value(json_object_get(status, key));
		if (want != NULL && runs != NULL && strcmp(want, runs) != 0) {
			create_upgrade(e, t->name, components[i], runs, want);
			return true;
		}
	}
	return false;
}

static void start_run(rz_engine_t *e, struct tenant *t)
{
	struct run *r = calloc(1, sizeof(*r));
	json_t *tenant = NULL;
	char dir[PATH_MAX], path[PATH_MAX * 2], now[32], manual[64] = "";
	const char *trigger = NULL; /* what asked for the run, should it have to ask again */
	rz_err_t err = { 0 };
	int rc;

	if (r == NULL) {
		return;
	}
	r->e = e;
	r->t = t;
	r->diagnostics = json_array();
	t->run = r;
	r->slot = true;
	e->running++;
	rc = rz_store_get(e->store, rz_kind_by_name("Tenant"), NULL, t->name, &tenant, &err);
	t->gone = t->gone || rc == RZ_ENOTFOUND; /* a child's deletion poked a deleted tenant */
	if (rc == 0 && upgrade_holds(e, t, tenant)) {
		t->held = true; /* the upgrade's end pokes the tenant again */
		rc = RZ_ENOTFOUND;
	} else if (rc == 0 && nothing_to_destroy(e, tenant)) {
		if (t->manual[0] != '\0') {
			drop_manual(t, "superseded by the tenant's deletion");
		}
		rz_logkv(RZ_LOG_NOTICE, "engine",
		         "tenant deleted with nothing to destroy: finalized without a run",
		         "tenant", t->name, NULL);
		teardown_done(r);
		rc = RZ_ENOTFOUND; /* no run: clean up below, quietly */
	} else if (rc == 0) {
		const json_t *spec = json_object_get(tenant, "spec");
		trigger = t->trigger;
		snprintf(manual, sizeof(manual), "%s", t->manual);
		snprintf(r->talos, sizeof(r->talos), "%s",
		         json_string_value(json_object_get(spec, "talosVersion")) ?: "");
		snprintf(r->kubernetes, sizeof(r->kubernetes), "%s",
		         json_string_value(json_object_get(spec, "kubernetesVersion")) ?: "");
		r->remote = e->exec != NULL && e->exec->remote(e->exec->ctx);
		rc = make_run(r, tenant, &err);
	}
	if (rc != 0) {
		if (rc != RZ_ENOTFOUND) { /* a tenant that is gone needs no run */
			rz_log_warn("engine", "tenant '%s': no run: %s", t->name, err.msg);
		}
		json_decref(tenant);
		if (rc != RZ_ENOTFOUND && !e->stopping) {
			/* the database refused the Run (or the tenant): what asked for it asks
			 * again later, with the backoff of a failure */
			int64_t delay = backoff_ms(e, ++t->failures);
			char in[32];
			if (t->trigger == NULL) {
				t->trigger = trigger;
			}
			if (t->manual[0] == '\0') {
				snprintf(t->manual, sizeof(t->manual), "%s", manual);
			}
			snprintf(in, sizeof(in), "%llds", (long long)(delay / 1000));
			rz_logkv(RZ_LOG_NOTICE, "engine", "no run: retrying", "tenant", t->name,
			         "in", in, NULL);
			json_decref(r->diagnostics);
			json_decref(r->selector);
			free(r);
			t->run = NULL;
			e->running--;
			poke(e, t->name, delay,
			     t->trigger     ? t->trigger
			     : t->manual[0] ? "manual"
			                    : "update");
			return;
		}
		json_decref(r->diagnostics);
		json_decref(r->selector);
		free(r);
		t->run = NULL;
		e->running--;
		if (t->gone) {
			forget(e, t);
		}
		return;
	}
	rz_report_now(now, sizeof(now));
	snprintf(r->started, sizeof(r->started), "%s", now);
	if (r->stored) {
		rz_report_status(e->store, "Run", t->name, r->name,
		                 json_pack("{s:s, s:s}", "phase", "Running", "startedAt", now));
		run_event(r, "Normal", "RunStarted", "started");
	}
	rz_auth_token_secret(r->secret);
	if (r->remote && r->stored) {
		rz_auth_grant_kept(e->auth, t->name, r->name, r->secret); /* a restart keeps it */
	} else {
		rz_auth_grant(e->auth, t->name, r->name, r->secret);
	}
	rc = render(r, tenant, &err);
	json_decref(tenant);
	tenant_dir(e, t->name, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.log", dir, r->name);
	r->log = rz_runlog_open(path, e->o.max_run_log);
	if (rc == 0) {
		r->step = STEP_INIT;
		rc = next_step(r, &err);
	}
	if (rc != 0) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
		finish(r, "Failed", -1);
	}
}

/* An approved run got its slot back: apply. */
static void resume(struct run *r)
{
	rz_err_t err = { 0 };

	r->slot = true;
	r->e->running++;
	rz_report_status(r->e->store, "Run", r->t->name, r->name,
	                 json_pack("{s:s}", "phase", "Running"));
	if (next_step(r, &err) != 0) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
		finish(r, "Failed", -1);
	}
}

/* Out of the queue, into a slot: a new run, or an approved one's apply. */
static void launch(rz_engine_t *e, struct tenant *t)
{
	t->queued = false;
	t->unserved = false;
	json_decref(t->sel);
	t->sel = NULL;
	if (t->run != NULL) {
		resume(t->run);
	} else {
		start_run(e, t);
	}
}

/* Whether selector inner has every label of outer: its runs go only to runners outer's
 * runs could use too. */
static bool within(const json_t *inner, const json_t *outer)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)outer, key, v)
	{
		if (!json_equal(json_object_get(inner, key), v)) {
			return false;
		}
	}
	return true;
}

/* A queued tenant whose pool no Ready runner serves has a Run to show it: its approved
 * run's, the one created through the API, or one stored now (Queued; not for a resync,
 * whose Run is stored only when its plan finds something), with the condition Scheduled
 * False, NoRunner, saying why. make_run takes a stored one up when the run starts. */
static void waiting_run(rz_engine_t *e, struct tenant *t, const char *why)
{
	const char *name = t->run != NULL && t->run->stored ? t->run->name
	                   : t->manual[0] != '\0'           ? t->manual
	                   : t->waiting[0] != '\0'          ? t->waiting
	                                                    : NULL;
	rz_err_t err = { 0 };

	if (name == NULL && t->run == NULL && t->trigger != NULL &&
	    strcmp(t->trigger, "resync") != 0) {
		json_t *tenant = NULL, *obj, *out = NULL;
		unsigned char raw[4];
		if (rz_store_get(e->store, rz_kind_by_name("Tenant"), NULL, t->name, &tenant,
		                 &err) != 0) {
			return;
		}
		bool deleting = json_object_get(json_object_get(tenant, "metadata"),
		                                "deletionTimestamp") != NULL;
		randombytes_buf(raw, sizeof(raw));
		snprintf(t->waiting, sizeof(t->waiting), "run-%02x%02x%02x%02x", raw[0], raw[1],
		         raw[2], raw[3]);
		obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:I}}", "metadata", "name", t->waiting,
		                "tenant", t->name, "spec", "operation",
		                deleting ? "destroy" : "apply", "trigger",
		                deleting ? "delete" : t->trigger, "generation",
		                json_integer_value(json_object_get(
		                    json_object_get(tenant, "metadata"), "generation")));
		if (rz_store_create(e->store, rz_kind_by_name("Run"), obj, NULL, &out, &err) == 0) {
			name = t->waiting;
		} else {
			t->waiting[0] = '\0';
		}
		json_decref(obj);
		json_decref(out);
		json_decref(tenant);
	}
	if (name != NULL) {
		rz_report_status(e->store, "Run", t->name, name,
		                 json_pack("{s:s}", "phase", "Queued"));
		rz_report_run_condition(e->store, t->name, name, "Scheduled", "False", "NoRunner",
		                        why, NULL);
	}
}

/* A queued tenant whose pool no Ready runner serves: a line (once a minute) and an Event
 * on the tenant (once while it waits). It holds no slot meanwhile. */
static void unserved(rz_engine_t *e, struct tenant *t)
{
	int64_t now = mono_ns() / 1000000;

	if (now - e->waiting_logged_ms >= 60000) {
		char sel[512], *text = t->sel != NULL
		                           ? json_dumps(t->sel, JSON_COMPACT | JSON_SORT_KEYS)
		                           : NULL;
		snprintf(sel, sizeof(sel), "%s", text != NULL ? text : "{}");
		free(text);
		e->waiting_logged_ms = now;
		rz_logkv(RZ_LOG_NOTICE, "engine", "runs wait: no Ready runner serves their pool",
		         "tenant", t->name, "runnerSelector", sel, NULL);
	}
	if (!t->unserved) {
		char why[1024], msg[1100];
		t->unserved = true;
		if (!e->exec->unserved(e->exec->ctx, t->sel, why, sizeof(why))) {
			snprintf(why, sizeof(why), "no Ready runner serves its pool");
		}
		snprintf(msg, sizeof(msg), "its run waits: %s", why);
		rz_events_record(e->store, t->name, "Tenant", t->name, "Warning", "NoRunnerForPool",
		                 msg, "engine");
		waiting_run(e, t, why);
	}
}

/* With remote runners, one queued run into a slot, if one may go: the first in the queue
 * whose pool has a free slot. A pool's slots are those of the Ready runners serving it
 * (capacity with its selector); the runs holding a slot within that pool (a selector with
 * every label of it) take them. Runs whose pool no Ready runner serves hold nothing others
 * need: they wait in the queue, and the runs that do hold a slot while their pool lost its
 * runners are not counted. In all, no more runs than every Ready runner's slots. */
static bool start_remote(rz_engine_t *e)
{
	const rz_executor_t *x = e->exec;
	size_t total = x->capacity(x->ctx, NULL), n = 0; /* n: the runs holding a slot that count */
	const json_t **held = calloc(e->running + 1, sizeof(*held));
	struct tenant *t, *prev = NULL;

	if (held == NULL) {
		return false;
	}
	for (t = e->tenants; t != NULL && n < e->running; t = t->next) {
		if (t->run != NULL && t->run->slot && x->capacity(x->ctx, t->run->selector) > 0) {
			held[n++] = t->run->selector;
		}
	}
	for (t = e->qhead; t != NULL && n < total; prev = t, t = t->qnext) {
		size_t cap = x->capacity(x->ctx, t->sel), mine = 0;
		for (size_t i = 0; i < n; i++) {
			mine += within(held[i], t->sel);
		}
		if (cap == 0) {
			unserved(e, t);
		}
		if (mine < cap) {
			if (prev != NULL) {
				prev->qnext = t->qnext;
			} else {
				e->qhead = t->qnext;
			}
			if (e->qtail == t) {
				e->qtail = prev;
			}
			free(held);
			launch(e, t);
			return true;
		}
	}
	if (e->qhead != NULL && total > 0 && n >= total) {
		int64_t now = mono_ns() / 1000000;
		if (now - e->waiting_logged_ms >= 60000) {
			e->waiting_logged_ms = now;
			rz_logkv(RZ_LOG_NOTICE, "engine", "runs wait: every Ready runner is busy",
			         "next", e->qhead->name, NULL);
		}
	} else if (e->qhead != NULL && total == 0) {
		for (t = e->qhead; t != NULL; t = t->qnext) {
			unserved(e, t);
		}
	}
	free(held);
	return false;
}

/* Queued runs into slots: tofu.workers of them here; with remote runners, by pool
 * (start_remote). */
static void start_next(rz_engine_t *e)
{
	if (e->exec != NULL && e->exec->remote(e->exec->ctx)) {
		while (start_remote(e)) {
		}
		return;
	}
	while (e->qhead != NULL && e->running < (size_t)e->o.workers) {
		struct tenant *t = e->qhead;
		e->qhead = t->qnext;
		if (e->qhead == NULL) {
			e->qtail = NULL;
		}
		launch(e, t);
	}
}

/* ------------------------------------------------------------------ approve and cancel */

/* The run named in the path, when it is the tenant's current one; otherwise a reply. */
static struct run *current_run(rz_engine_t *e, rz_req_t *req)
{
	const char *tenant = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");
	struct tenant *t = tenant_of(e, tenant, false);
	json_t *obj = NULL;
	rz_err_t err = { 0 };

	if (t != NULL && t->run != NULL && strcmp(t->run->name, name) == 0) {
		return t->run;
	}
	if (rz_store_get(e->store, rz_kind_by_name("Run"), tenant, name, &obj, &err) != 0) {
		rz_reply_error(req, 404, NULL, "runs \"%s\" not found in tenant \"%s\"", name,
		               tenant);
		return NULL;
	}
	rz_reply_error(req, 409, NULL,
	               "run \"%s\" is %s: only a pending or running run can be "
	               "approved or canceled",
	               name,
	               json_string_value(json_object_get(json_object_get(obj, "status"), "phase"))
	                   ?: "not started");
	json_decref(obj);
	return NULL;
}

/* The optional body of an approval: {"reason": "..."} (JSON, at most 1024 bytes). Replies
 * and returns -1 when it is not that. */
static int approval_reason(rz_req_t *req, char *out, size_t size)
{
	size_t len = 0;
	const char *body = rz_req_body(req, &len);
	json_t *j, *v;
	json_error_t je;
	json_t *st;

	out[0] = '\0';
	if (body == NULL || len == 0) {
		return 0;
	}
	j = json_loadb(body, len, 0, &je);
	v = json_object_get(j, "reason");
	if (!json_is_object(j) ||
	    (v != NULL && (!json_is_string(v) || json_string_length(v) >= size ||
	                   json_string_length(v) > 1024)) ||
	    json_object_size(j) > (v != NULL ? 1u : 0u)) {
		st = rz_status_new(422, NULL, "the body of an approval is {\"reason\": \"...\"}");
		rz_status_add_cause(st, "reason", "FieldValueInvalid",
		                    "an optional string of at most 1024 bytes, and nothing else");
		rz_reply_status(req, st);
		json_decref(j);
		return -1;
	}
	snprintf(out, size, "%s", v ? json_string_value(v) : "");
	json_decref(j);
	return 0;
}

static void h_approve(rz_req_t *req, void *ctx)
{
	struct run *r = current_run(ctx, req);
	const rz_principal_t *who;
	char reason[1100];

	if (r == NULL) {
		return;
	}
	if (!r->awaiting) {
		rz_reply_error(req, 409, NULL, "run \"%s\" is not awaiting approval", r->name);
		return;
	}
	if (approval_reason(req, reason, sizeof(reason)) != 0) {
		return; /* answered */
	}
	who = rz_access_principal(req);
	if (reason[0] != '\0') {
		char detail[1200];
		snprintf(detail, sizeof(detail), "reason: %s", reason);
		rz_access_set_detail(req, detail);
	}
	r->awaiting = false;
	r->approved = true;
	rz_report_status(r->e->store, "Run", r->t->name, r->name,
	                 json_pack("{s:s, s:s, s:s}", "phase", "Queued", "approvedBy",
	                           who ? who->user : "", "approvalReason", reason));
	rz_logkv(RZ_LOG_NOTICE, "engine", "run approved", "tenant", r->t->name, "run", r->name,
	         "by", who ? who->user : "", "reason", reason, NULL);
	rz_reply_status(
	    req, rz_status_new(200, "", "run approved: it applies on the next free pool slot"));
	push(r->t);
}

static void h_cancel(rz_req_t *req, void *ctx)
{
	struct tenant *t = tenant_of(ctx, rz_req_param(req, "tenant"), false);
	const char *name = rz_req_param(req, "name");
	struct run *r;

	if (t != NULL && strcmp(t->manual, name) == 0 &&
	    (t->run == NULL || strcmp(t->run->name, name) != 0)) {
		drop_manual(t, "canceled before it started");
		rz_reply_status(req, rz_status_new(200, "", "run canceled"));
		return;
	}
	if ((r = current_run(ctx, req)) == NULL) {
		return;
	}
	rz_reply_status(req, rz_status_new(200, "", "run canceled"));
	if (r->awaiting || !r->slot) {
		snprintf(r->error, sizeof(r->error), "canceled before its apply");
		finish(r, "Canceled", -1);
	} else if (r->remote && !r->claimed) {
		/* no runner holds it: its job, when a runner takes it, gets 409 at the claim */
		snprintf(r->error, sizeof(r->error), "canceled before a runner took its %s step",
		         rz_engine_steps[r->step]);
		finish(r, "Canceled", -1);
	} else if (r->remote) {
		r->e->exec->cancel(r->e->exec->ctx, r->name); /* the runner reports the exit */
	} else {
		rz_proc_cancel(r->proc); /* step_done finishes it as Canceled */
	}
}

/* GET …/runs/{name}/log: the run's tofu output as text; with ?follow=true as server-sent
 * events, one per line, live until the run ends (then an `end` event with its phase). */
static void h_log(rz_req_t *req, void *ctx)
{
	rz_engine_t *e = ctx;
	const char *tenant = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");
	const char *follow = rz_req_query(req, "follow");
	struct tenant *t = tenant_of(e, tenant, false);
	struct run *live = t && t->run && strcmp(t->run->name, name) == 0 ? t->run : NULL;
	char dir[PATH_MAX], path[PATH_MAX * 2];
	json_t *obj = NULL;
	rz_err_t err = { 0 };

	if (rz_store_get(e->store, rz_kind_by_name("Run"), tenant, name, &obj, &err) != 0) {
		rz_reply_error(req, 404, NULL, "runs \"%s\" not found in tenant \"%s\"", name,
		               tenant);
		return;
	}
	tenant_dir(e, tenant, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.log", dir, name);
	rz_runlog_serve(req, path, live ? live->log : NULL,
	                json_string_value(json_object_get(json_object_get(obj, "status"), "phase"))
	                    ?: "Queued",
	                follow != NULL && strcmp(follow, "true") == 0);
	json_decref(obj);
}

/* For the OpenAPI document (core/api/openapi.c). */
static const int run_errors[] = { 404, 409, 0 }, log_errors[] = { 400, 404, 0 };
static const rz_route_doc_t approve_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "approveRun",
	  .summary = "approve a run awaiting approval: it queues to apply",
	  .response = "Status",
	  .errors = run_errors },
	{ 0 },
};
static const rz_route_doc_t cancel_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "cancelRun",
	  .summary = "cancel a queued, waiting or running run",
	  .response = "Status",
	  .errors = run_errors },
	{ 0 },
};
static const rz_route_param_t log_query[] = {
	{ "format", "string", "json: the stored lines as tofu wrote them; otherwise human text" },
	{ "follow", "boolean", "stream the log as Server-Sent Events until the run ends" },
	{ NULL, NULL, NULL },
};
static const rz_route_doc_t log_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readRunLog",
	  .summary = "a run's log, its resource ids redacted",
	  .query = log_query,
	  .response = "{\"type\":\"string\"}",
	  .response_type = "text/plain",
	  .errors = log_errors },
	{ 0 },
};

/* ------------------------------------------------------------------ remote runners */

/* The runner holding a remote run's step was lost: the run is Interrupted, its lock
 * released, its secret revoked (finish), and its tenant runs again. */
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
		run_event(r, "Warning", "RunnerLost", what);
	}
	if (rz_tfstate_release_run_lock(e->tfstate, r->name, &err) < 0) {
		rz_logkv(RZ_LOG_ERR, "engine", "cannot release the lost run's state lock", "run",
		         r->name, "error", err.msg, NULL);
	}
	finish(r, "Interrupted", -1);
	if (!t->gone && !e->stopping) {
		poke(e, t->name, e->o.debounce_ms, "update"); /* as after a restart */
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

/* The run in progress named run, or NULL. */
static struct run *run_named(rz_engine_t *e, const char *run)
{
	for (struct tenant *t = e->tenants; run != NULL && t != NULL; t = t->next) {
		if (t->run != NULL && strcmp(t->run->name, run) == 0) {
			return t->run;
		}
	}
	return NULL;
}

/* The claim's argv of step, argv[0] "tofu": the runner runs its own tofu.binary. */
static json_t *step_argv(const struct run *r, enum step step)
{
	char out[96], file[80];
	bool destroy = strcmp(r->operation, "destroy") == 0;

	snprintf(file, sizeof(file), "%s.plan", r->name);
	snprintf(out, sizeof(out), "-out=%s", file);
	switch (step) {
	case STEP_INIT:
		return json_pack("[s, s, s, s, s]", "tofu", "init", "-input=false", "-no-color",
		                 "-reconfigure");
	case STEP_PLAN:
		return destroy ? json_pack("[s, s, s, s, s, s]", "tofu", "plan", "-input=false",
		                           "-json", out, "-destroy")
		               : json_pack("[s, s, s, s, s]", "tofu", "plan", "-input=false",
		                           "-json", out);
	case STEP_SHOW:
		return json_pack("[s, s, s, s]", "tofu", "show", "-json", file);
	case STEP_APPLY:
		return json_pack("[s, s, s, s, s]", "tofu", "apply", "-input=false", "-json", file);
	default:
		return NULL;
	}
}

/* The working directory a runner needs for the step, as {name: base64}: the tenant's
 * composed *.tf.json and terraform.tfvars.json, and for show and apply the run's plan. */
static int claim_files(struct run *r, json_t *files, rz_err_t *err)
{
	char dir[PATH_MAX], path[PATH_MAX * 2], plan[96];
	size_t total = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	tenant_dir(r->e, r->t->name, dir, sizeof(dir));
	snprintf(plan, sizeof(plan), "%s.plan", r->name);
	if ((d = opendir(dir)) == NULL) {
		return rz_err_set(err, -errno, "the run's directory: %s", strerror(errno));
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		bool tf = len > 8 && strcmp(de->d_name + len - 8, ".tf.json") == 0;
		bool want = tf || strcmp(de->d_name, "terraform.tfvars.json") == 0 ||
		            (r->step >= STEP_SHOW && strcmp(de->d_name, plan) == 0);
		struct stat st;
		unsigned char *buf;
		char *b64;
		FILE *f;
		if (!want) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			continue;
		}
		if ((total += (size_t)st.st_size) > RZ_ENGINE_CLAIM_MAX) {
			rc = rz_err_set(err, -EFBIG, "the working directory is over %d bytes",
			                RZ_ENGINE_CLAIM_MAX);
			break;
		}
		buf = malloc((size_t)st.st_size + 1);
		b64 = malloc(
		    sodium_base64_ENCODED_LEN((size_t)st.st_size, sodium_base64_VARIANT_ORIGINAL));
		f = fopen(path, "rb");
		if (buf == NULL || b64 == NULL || f == NULL ||
		    fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
			rc = rz_err_set(err, -EIO, "reading %s failed", de->d_name);
		} else {
			sodium_bin2base64(b64,
			                  sodium_base64_ENCODED_LEN((size_t)st.st_size,
			                                            sodium_base64_VARIANT_ORIGINAL),
			                  buf, (size_t)st.st_size, sodium_base64_VARIANT_ORIGINAL);
			json_object_set_new(files, de->d_name, json_string(b64));
		}
		if (f != NULL) {
			fclose(f);
		}
		if (buf != NULL) {
			sodium_memzero(buf,
			               (size_t)st.st_size); /* a plan holds the state in clear */
		}
		free(buf);
		free(b64);
	}
	closedir(d);
	return rc;
}

/* Whether the Runner name is Ready with labels matching the run's selector: the labels it
 * says it has and an admin granted it (rz_kind_runner_serves), not what it says alone. */
static bool runner_may(rz_engine_t *e, const char *name, const json_t *selector, char *why,
                       size_t size)
{
	json_t *obj = NULL, *labels, *v;
	rz_err_t err = { 0 };
	const char *key, *phase;
	bool ok = true;

	if (rz_store_get(e->store, rz_kind_by_name("Runner"), NULL, name, &obj, &err) != 0) {
		snprintf(why, size, "no Runner \"%s\" (it heartbeats first)", name);
		return false;
	}
	labels = rz_kind_runner_serves(obj);
	phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
	if (phase == NULL || strcmp(phase, "Ready") != 0) {
		snprintf(why, size, "Runner \"%s\" is %s, not Ready", name, phase ? phase : "new");
		ok = false;
	}
	json_object_foreach((json_t *)selector, key, v)
	{
		json_t *have = json_object_get(labels, key);
		if (ok && (!json_is_string(have) || !json_equal(have, v))) {
			snprintf(why, size,
			         "Runner \"%s\" is not granted the label %s=%s the run selects "
			         "(its spec.labels and its runner.labels must both have it)",
			         name, key, json_string_value(v) ?: "");
			ok = false;
		}
	}
	json_decref(labels);
	json_decref(obj);
	return ok;
}

/* The event key of a claim: the runner authenticates the step's events with it
 * (core/remote/dispatch.h). Derived from the daemon's secret and the claim (run, step,
 * runner): a restarted daemon derives it again for the step it takes up, and no other
 * runner can. */
static void event_key(const rz_engine_t *e, const char *run, const char *step, const char *runner,
                      unsigned char out[RZ_EXEC_KEY_LEN])
{
	unsigned char base[RZ_DERIVED_KEY_LEN];
	crypto_auth_hmacsha256_state st;

	rz_auth_derive_key(e->auth, "runner-events", base);
	crypto_auth_hmacsha256_init(&st, base, sizeof(base));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)run, strlen(run) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)step, strlen(step) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)runner, strlen(runner) + 1);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(base, sizeof(base));
}

/* Who claimed each of a remote run's steps so far, as status.stepRunners. */
static json_t *step_runners(const struct run *r)
{
	json_t *o = json_object();

	for (int k = 0; k < RZ_ENGINE_STEPS; k++) {
		if (r->step_runner[k][0] != '\0') {
			json_object_set_new(o, rz_engine_steps[k], json_string(r->step_runner[k]));
		}
	}
	return o;
}

/* A claim in the run's log, as a line of tofu's JSON UI (the name is a DNS label, the step
 * one of rz_engine_steps: nothing to escape). */
static void claim_logged(struct run *r, const char *runner, const char *step)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
	                 "{\"@level\":\"info\",\"@message\":\"runner %s claimed the %s step\","
	                 "\"@module\":\"rezuscloud\",\"type\":\"log\"}",
	                 runner, step);

	if (r->log != NULL && n > 0 && (size_t)n < sizeof(line)) {
		rz_runlog_line(r->log, line, (size_t)n);
	}
}

/* POST /api/v1/runners/{name}/claims {"run", "step"}: the step's argv, environment and
 * working directory to the runner that takes its job; 409 when the run is over or the step
 * is not the one waiting (a job delivered again: the runner acks and drops it), 403 when the
 * runner may not run the tenant. */
static void h_claim(rz_req_t *req, void *ctx)
{
	rz_engine_t *e = ctx;
	const rz_principal_t *p = rz_access_principal(req);
	const char *name = rz_req_param(req, "name");
	size_t len = 0;
	const char *body = rz_req_body(req, &len);
	json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL, *reply, *files, *env;
	const char *run = json_string_value(json_object_get(j, "run"));
	const char *jstep = json_string_value(json_object_get(j, "step"));
	char step[8] = "", key_hex[2 * RZ_EXEC_KEY_LEN + 1];
	unsigned char key[RZ_EXEC_KEY_LEN];
	static char vars[MAX_ENV][PATH_MAX + 64];
	const char *envv[MAX_ENV + 1] = { NULL };
	struct run *r;
	size_t n = 0;
	char why[256];
	rz_err_t err = { 0 };

	if (p == NULL || !p->runner_scope) {
		rz_reply_error(req, 403, NULL, "only a runner token claims runs");
		json_decref(j);
		return;
	}
	if (run == NULL || jstep == NULL || json_object_size(j) != 2 ||
	    strlen(jstep) >= sizeof(step)) {
		json_t *st =
		    rz_status_new(422, NULL, "a claim is {\"run\": \"...\", \"step\": \"...\"}");
		rz_status_add_cause(st, run == NULL ? "run" : "step", "FieldValueRequired",
		                    "a string");
		rz_reply_status(req, st);
		json_decref(j);
		return;
	}
	snprintf(step, sizeof(step), "%s", jstep);
	r = run_named(e, run);
	if (r == NULL || !r->remote || !r->dispatched || r->claimed || r->step >= STEP_DONE ||
	    strcmp(rz_engine_steps[r->step], step) != 0) {
		rz_reply_error(req, 409, NULL,
		               "run \"%s\" has no %s step waiting for a runner (finished, claimed, "
		               "or another step)",
		               run, step);
		json_decref(j);
		return;
	}
	json_decref(j);
	if (!runner_may(e, name, r->selector, why, sizeof(why))) {
		rz_reply_error(req, 403, NULL, "%s", why);
		return;
	}
	files = json_object();
	if (claim_files(r, files, &err) != 0) {
		json_decref(files);
		rz_reply_error(req, 500, NULL, "%s", err.msg);
		return;
	}
	env = json_object();
	step_env(r, envv, &n, vars);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(envv[i], '=');
		char k[128];
		snprintf(k, sizeof(k), "%.*s", (int)(eq - envv[i]), envv[i]);
		json_object_set_new(env, k, json_string(eq + 1));
		sodium_memzero(vars[i], sizeof(vars[i]));
	}
	event_key(e, r->name, step, name, key);
	sodium_bin2hex(key_hex, sizeof(key_hex), key, sizeof(key));
	reply = json_pack("{s:s, s:s, s:s, s:o, s:o*, s:o, s:I, s:I, s:o, s:o}", "run", r->name,
	                  "tenant", r->t->name, "step", step, "argv", step_argv(r, r->step), "init",
	                  r->step != STEP_INIT ? step_argv(r, STEP_INIT) : NULL, "env", env,
	                  "timeoutMs", (json_int_t)e->o.timeout_ms, "killGraceMs",
	                  (json_int_t)e->o.kill_grace_ms, "files", files, "upload",
	                  r->step == STEP_PLAN   ? json_pack("[s]", "plan")
	                  : r->step == STEP_SHOW ? json_pack("[s]", "show.json")
	                                         : json_array());
	r->claimed = true;
	snprintf(r->runner, sizeof(r->runner), "%s", name);
	snprintf(r->step_runner[r->step], sizeof(r->step_runner[r->step]), "%s", name);
	json_object_set_new(reply, "eventKey", json_string(key_hex));
	sodium_memzero(key_hex, sizeof(key_hex));
	e->exec->claimed(e->exec->ctx, r->name, name, key);
	sodium_memzero(key, sizeof(key));
	claim_logged(r, name, step);
	if (r->stored) {
		char msg[128];
		snprintf(msg, sizeof(msg), "claimed by runner %s", name);
		rz_report_run_condition(e->store, r->t->name, r->name, "Scheduled", "True",
		                        "Claimed", msg,
		                        json_pack("{s:s, s:s, s:o}", "runner", name, "claimedStep",
		                                  step, "stepRunners", step_runners(r)));
		r->scheduled = 2;
	}
	rz_logkv(RZ_LOG_INFO, "engine", "runner claimed a step", "run", r->name, "step", step,
	         "runner", name, NULL);
	rz_reply_json(req, 200, reply); /* the run's secret: over HTTPS, never over NATS */
}

/* PUT /api/v1/runners/{name}/claims/{run}/files/{file}: what the daemon keeps of a remote
 * step, from the runner that claimed it: "plan" (the plan step's plan file) and
 * "show.json" (show's output, the plan as JSON). */
static void h_file(rz_req_t *req, void *ctx)
{
	rz_engine_t *e = ctx;
	const rz_principal_t *p = rz_access_principal(req);
	const char *name = rz_req_param(req, "name"), *file = rz_req_param(req, "file");
	struct run *r = run_named(e, rz_req_param(req, "run"));
	size_t len = 0;
	const char *body = rz_req_body(req, &len);

	if (p == NULL || !p->runner_scope) {
		rz_reply_error(req, 403, NULL, "only a runner token reports a run's files");
		return;
	}
	if (r == NULL || !r->claimed || strcmp(r->runner, name) != 0) {
		rz_reply_error(req, 409, NULL, "runner \"%s\" holds no step of run \"%s\"", name,
		               rz_req_param(req, "run"));
		return;
	}
	if (strcmp(file, "plan") == 0 && r->step == STEP_PLAN) {
		char dir[PATH_MAX], path[PATH_MAX * 2];
		int fd;
		tenant_dir(e, r->t->name, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s.plan", dir, r->name);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || (len > 0 && write(fd, body, len) != (ssize_t)len) || close(fd) != 0) {
			rz_reply_error(req, 500, NULL, "cannot keep the plan: %s", strerror(errno));
			return;
		}
	} else if (strcmp(file, "show.json") == 0 && r->step == STEP_SHOW) {
		if (len > SHOW_MAX || (len > 0 && body == NULL)) {
			r->show.cut = true;
		} else {
			char *copy = malloc(len + 1);
			if (copy == NULL) {
				rz_reply_error(req, 503, NULL, "out of memory");
				return;
			}
			memcpy(copy, body, len);
			copy[len] = '\0';
			if (r->show.p != NULL) {
				sodium_memzero(r->show.p, r->show.len);
			}
			free(r->show.p);
			r->show.p = copy;
			r->show.len = len;
			r->show.cap = len + 1;
		}
	} else {
		rz_reply_error(req, 404, NULL, "no file \"%s\" for the %s step", file,
		               rz_engine_steps[r->step < STEP_DONE ? r->step : STEP_APPLY]);
		return;
	}
	rz_reply_status(req, rz_status_new(200, "", "kept"));
}

static void take_up_all(rz_engine_t *e);

void rz_engine_set_executor(rz_engine_t *e, const rz_executor_t *exec)
{
	e->exec = exec;
	take_up_all(e);
}

void rz_engine_kick(rz_engine_t *e)
{
	if (e != NULL && !e->stopping) {
		start_next(e);
	}
}

static const int claim_errors[] = { 409, 422, 0 }, file_errors[] = { 404, 409, 0 };
static const rz_route_doc_t claim_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "claimRunnerStep",
	  .summary = "a runner token claims a remote run's step: its argv, environment and "
	             "working directory (409: not waiting any more)",
	  .request = "{\"type\":\"object\",\"properties\":{\"run\":{\"type\":\"string\"},"
	             "\"step\":{\"type\":\"string\"}},\"required\":[\"run\",\"step\"]}",
	  .response = "{\"type\":\"object\",\"properties\":{\"run\":{\"type\":\"string\"},"
	              "\"tenant\":{\"type\":\"string\"},\"step\":{\"type\":\"string\"},"
	              "\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	              "\"init\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	              "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
	              "\"string\"}},\"timeoutMs\":{\"type\":\"integer\"},\"killGraceMs\":{"
	              "\"type\":\"integer\"},\"files\":{\"type\":\"object\","
	              "\"additionalProperties\":{\"type\":\"string\",\"format\":\"byte\"}},"
	              "\"upload\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}",
	  .errors = claim_errors },
	{ 0 },
};
static const rz_route_doc_t file_doc[] = {
	{ .method = RZ_M_PUT,
	  .id = "reportRunnerFile",
	  .summary = "a runner token reports a claimed step's file (plan, show.json)",
	  .request = "{\"type\":\"string\",\"format\":\"binary\"}",
	  .request_type = "application/octet-stream",
	  .response = "Status",
	  .errors = file_errors },
	{ 0 },
};

int rz_engine_runner_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err)
{
	e->runner_routes[0] = (rz_route_t){ .methods = RZ_M_POST,
		                            .pattern = "/api/v1/runners/{name}/claims",
		                            .fn = h_claim,
		                            .ctx = e,
		                            .role = RZ_ROLE_VIEW,
		                            .kind = "RunnerClaim",
		                            .verb = "claim",
		                            .doc = claim_doc };
	e->runner_routes[1] =
	    (rz_route_t){ .methods = RZ_M_PUT,
		          .pattern = "/api/v1/runners/{name}/claims/{run}/files/{file}",
		          .fn = h_file,
		          .ctx = e,
		          .role = RZ_ROLE_VIEW,
		          .kind = "RunnerClaim",
		          .verb = "report",
		          .doc = file_doc };
	return rz_http_add_routes(http, e->runner_routes, 2, err);
}

int rz_engine_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err)
{
	e->routes[0] = (rz_route_t){ .methods = RZ_M_POST,
		                     .pattern = "/api/v1/tenants/{tenant}/runs/{name}/approve",
		                     .fn = h_approve,
		                     .ctx = e,
		                     .role = RZ_ROLE_EDIT,
		                     .kind = "Run",
		                     .verb = "approve",
		                     .doc = approve_doc };
	e->routes[1] = (rz_route_t){ .methods = RZ_M_POST,
		                     .pattern = "/api/v1/tenants/{tenant}/runs/{name}/cancel",
		                     .fn = h_cancel,
		                     .ctx = e,
		                     .role = RZ_ROLE_EDIT,
		                     .kind = "Run",
		                     .verb = "cancel",
		                     .doc = cancel_doc };
	e->routes[2] = (rz_route_t){ .methods = RZ_M_GET,
		                     .pattern = "/api/v1/tenants/{tenant}/runs/{name}/log",
		                     .fn = h_log,
		                     .ctx = e,
		                     .role = RZ_ROLE_VIEW,
		                     .kind = "Run",
		                     .verb = "log",
		                     .doc = log_doc };
	return rz_http_add_routes(http, e->routes, 3, err);
}

/* ------------------------------------------------------------------ module */

/* A Run the last process left unfinished: Interrupted, and its tenant runs again. */
static void interrupt_left(rz_engine_t *e, const json_t *run, const char *now)
{
	json_t *meta = json_object_get(run, "metadata");
	const char *tenant = json_string_value(json_object_get(meta, "tenant"));
	const char *name = json_string_value(json_object_get(meta, "name"));

	rz_report_status(e->store, "Run", tenant, name,
	                 json_pack("{s:s, s:s, s:s}", "phase", "Interrupted", "finishedAt", now,
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
	poke(e, tenant, e->o.debounce_ms, "resync");
}

/* Whether a Run a previous daemon left is one its runner may still be running: remote
 * runners are on, it was Running with a step out (status.step) and its grant was kept. */
static bool adoptable(rz_engine_t *e, const json_t *run)
{
	const json_t *st = json_object_get(run, "status");
	const char *phase = json_string_value(json_object_get(st, "phase"));
	const char *name =
	    json_string_value(json_object_get(json_object_get(run, "metadata"), "name"));

	return e->o.remote && phase != NULL && strcmp(phase, "Running") == 0 &&
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

/* At start, before any run: runs the last process left unfinished become Interrupted, the
 * state locks they held are released, and their tenants run again; but with remote runners
 * the runs a runner may still be running are kept (e->adopt) for rz_engine_set_executor to
 * take up, with their locks, grants and plans. */
static void recover_runs(rz_engine_t *e)
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

		if (tenant == NULL || name == NULL ||
		    (phase != NULL && strcmp(phase, "Running") != 0 &&
		     strcmp(phase, "AwaitingApproval") != 0 && strcmp(phase, "Queued") != 0)) {
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
	struct tenant *t = tenant_of(e, tenant, true);
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
	    rz_store_get(e->store, rz_kind_by_name("Tenant"), NULL, tenant, &tobj, err) != 0) {
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
	snprintf(r->operation, sizeof(r->operation), "%s",
	         json_string_value(json_object_get(spec, "operation")) ?: "apply");
	snprintf(r->trigger, sizeof(r->trigger), "%s",
	         json_string_value(json_object_get(spec, "trigger")) ?: "update");
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
	r->step_started_ns = mono_ns();
	t->run = r;
	e->running++;
	rz_auth_token_secret(r->secret);
	rz_auth_grant_kept(e->auth, t->name, r->name, r->secret);
	tenant_dir(e, t->name, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.log", dir, r->name);
	r->log = rz_runlog_reopen(path, e->o.max_run_log);
	s = exec_step(r);
	if (r->claimed) {
		event_key(e, r->name, step, r->runner, key);
		s.event_key = key;
	}
	rc = e->exec->attach(e->exec->ctx, &s, r->claimed ? r->runner : NULL, err);
	sodium_memzero(key, sizeof(key));
	if (rc != 0) {
		snprintf(r->error, sizeof(r->error), "cannot take the run up again: %s", err->msg);
		finish(r, "Failed", -1);
		return 0;
	}
	{
		char what[256];
		snprintf(what, sizeof(what), "taken up again after a daemon restart: tofu %s %s%s",
		         step, r->claimed ? "on runner " : "(its job published again)",
		         r->claimed ? r->runner : "");
		run_event(r, "Normal", "RunTakenUp", what);
		rz_logkv(RZ_LOG_NOTICE, "engine", "run taken up again after a restart", "tenant",
		         t->name, "run", r->name, "step", step, "runner", r->runner, NULL);
	}
	return 0;
}

/* The Runs recover_runs kept: taken up with the executor, or (no remote executor after
 * all, or it fails) Interrupted as any other left unfinished. */
static void take_up_all(rz_engine_t *e)
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

/* At start: every tenant whose spec was not reconciled yet (or that is being deleted) gets
 * a run, so nothing a crash interrupted stays undone. */
/* At start, tenant by tenant (a sweep, a page per turn of the loop): one whose last apply is
 * not what it asks for now runs again. */
static void reconcile_pending(void *arg, json_t *t)
{
	rz_engine_t *e = arg;
	json_t *meta = json_object_get(t, "metadata");
	json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
	json_int_t seen =
	    json_integer_value(json_object_get(json_object_get(t, "status"), "observedGeneration"));
	const char *name = json_string_value(json_object_get(meta, "name"));

	struct tenant *tt = name != NULL ? tenant_of(e, name, false) : NULL;

	if (tt != NULL && tt->run != NULL && tt->run->generation == gen &&
	    tt->run->inputs[0] != '\0' && strcmp(tt->run->operation, "plan") != 0) {
		/* a run taken up after a restart covers this generation; only inputs that changed
		 * since it composed them ask for another */
		char now[RZ_REPORT_INPUTS_LEN];
		json_t *groups = rz_store_list_all(e->store, "NodeGroup", name);
		json_t *patches = rz_store_list_all(e->store, "ConfigPatch", name);
		rz_report_inputs(groups, patches, now);
		json_decref(groups);
		json_decref(patches);
		if (strcmp(now, tt->run->inputs) == 0 &&
		    json_object_get(meta, "deletionTimestamp") == NULL) {
			return;
		}
	}
	/* a node group's or config patch's change leaves the tenant's generation alone:
	 * what tells of those is the digest the last successful apply recorded */
	if (name != NULL && (gen != seen || json_object_get(meta, "deletionTimestamp") != NULL ||
	                     rz_report_inputs_stale(e->store, t))) {
		poke(e, name, e->o.debounce_ms, "update");
	}
}

/* Every tofu.resync: every tenant runs again (a sweep), so drift outside RezusCloud is
 * corrected. */
static void resync_one(void *arg, json_t *t)
{
	rz_engine_t *e = arg;
	const char *name =
	    json_string_value(json_object_get(json_object_get(t, "metadata"), "name"));

	if (name != NULL) {
		poke(e, name, e->o.debounce_ms, "resync");
	}
}

static void on_resync(evutil_socket_t fd, short what, void *arg)
{
	rz_engine_t *e = arg;

	(void)fd;
	(void)what;
	rz_sweep_start(e->resyncs);
}

int rz_engine_new(rz_engine_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                  rz_plugins_t *plugins, rz_auth_t *auth, rz_tfstate_t *tfstate,
                  const rz_engine_opts_t *opts, rz_err_t *err)
{
	rz_engine_t *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (e == NULL) {
		return rz_err_set(err, -ENOMEM, "engine: out of memory");
	}
	e->base = base;
	e->store = store;
	e->bus = bus;
	e->plugins = plugins;
	e->auth = auth;
	e->tfstate = tfstate;
	e->o = *opts;
	if (e->o.workers < 1) {
		e->o.workers = 1;
	}
	e->sub = rz_bus_subscribe(bus, on_event, e);
	if (e->sub == 0) {
		free(e);
		return rz_err_set(err, -ENOMEM, "engine: out of memory");
	}
	if (e->o.resync_ms > 0) {
		struct timeval tv = { e->o.resync_ms / 1000, (e->o.resync_ms % 1000) * 1000 };
		e->resync = event_new(base, -1, EV_PERSIST, on_resync, e);
		if (e->resync == NULL || event_add(e->resync, &tv) != 0) {
			rz_engine_free(e);
			return rz_err_set(err, -ENOMEM, "engine: cannot start the resync timer");
		}
	}
	if ((e->settle = evtimer_new(base, on_settle, e)) == NULL) {
		rz_engine_free(e);
		return rz_err_set(err, -ENOMEM, "engine: out of memory");
	}
	e->pending = rz_sweep_new(base, store, "Tenant", reconcile_pending, NULL, e);
	e->resyncs = rz_sweep_new(base, store, "Tenant", resync_one, NULL, e);
	if (e->pending == NULL || e->resyncs == NULL) {
		rz_engine_free(e);
		return rz_err_set(err, -ENOMEM, "engine: out of memory");
	}
	recover_runs(e);
	rz_sweep_start(e->pending);
	*out = e;
	return 0;
}

bool rz_engine_ready(const rz_engine_t *e, char *why, size_t size)
{
	char path[PATH_MAX];

	if (e == NULL || rz_exec_which(e->o.tofu, getenv("PATH"), path, sizeof(path)) == 0) {
		return true;
	}
	snprintf(why, size,
	         "tofu.binary '%s' is not an executable file (nor on PATH): no run "
	         "can start",
	         e->o.tofu);
	return false;
}

size_t rz_engine_running(const rz_engine_t *e)
{
	return e ? e->running : 0;
}

void rz_engine_stats(const rz_engine_t *e, rz_engine_stats_t *out)
{
	*out = e->stats;
	out->running = e->running;
	out->workers = (uint64_t)e->o.workers;
	out->queued = out->processes = 0;
	out->tenants = e->ntenants;
	for (const struct tenant *t = e->qhead; t != NULL; t = t->qnext) {
		out->queued++;
	}
	for (const struct tenant *t = e->tenants; t != NULL; t = t->next) {
		out->processes += t->run != NULL && t->run->proc != NULL;
	}
}

bool rz_engine_busy(const rz_engine_t *e, const char *tenant, char *why, size_t size)
{
	struct tenant *t = e ? tenant_of((rz_engine_t *)e, tenant, false) : NULL;

	if (t == NULL || (t->run == NULL && !t->queued)) {
		return false;
	}
	if (t->run != NULL) {
		snprintf(why, size, "run %s is %s", t->run->name,
		         t->run->awaiting ? "awaiting approval" : "in progress");
	} else {
		snprintf(why, size, "a run is queued");
	}
	return true;
}

static void keep_node(void *node)
{
	(void)node;
}

/* A stopping daemon leaves a remote run to its runner: its Run stays Running, its grant,
 * lock and plan stay, for the next start to take it up (recover_runs). Memory only. */
static void leave(struct run *r)
{
	rz_logkv(RZ_LOG_NOTICE, "engine", "run left to its runner; the next start takes it up",
	         "tenant", r->t->name, "run", r->name, NULL);
	rz_runlog_close(r->log, "Running");
	run_release(r);
	r->t->run = NULL;
	free(r);
}

void rz_engine_free(rz_engine_t *e)
{
	struct tenant *t;

	if (e == NULL) {
		return;
	}
	rz_bus_unsubscribe(e->bus, e->sub);
	e->stopping = true;
	if (e->resync != NULL) {
		event_free(e->resync);
	}
	rz_sweep_free(e->pending);
	rz_sweep_free(e->resyncs);
	e->qhead = NULL;
	tdestroy(e->by_name, keep_node); /* the nodes only: the list below frees them */
	e->by_name = NULL;
	for (t = e->tenants; t != NULL; t = t->next) {
		if (t->run != NULL) {
			rz_proc_cancel(t->run->proc);
		}
	}
	while ((t = e->tenants) != NULL) {
		e->tenants = t->next;
		if (t->run != NULL && t->run->remote && t->run->stored && t->run->dispatched &&
		    e->o.remote) {
			leave(t->run); /* its runner goes on: the next start takes it up */
		} else if (t->run != NULL) {
			t->next = NULL;
			snprintf(t->run->error, sizeof(t->run->error), "the daemon stopped");
			t->again = false;
			t->gone = false; /* finish would forget (free) a deleted one: freed below */
			finish(t->run, "Interrupted", -1);
		}
		if (t->debounce != NULL) {
			event_free(t->debounce);
		}
		if (t->observed != NULL) {
			event_free(t->observed);
		}
		json_decref(t->sel);
		free(t);
	}
	if (e->settle != NULL) {
		event_free(e->settle);
	}
	json_decref(e->adopt);
	while (e->unsettled != NULL) { /* the next start marks their Runs Interrupted */
		struct unsettled *u = e->unsettled;
		e->unsettled = u->next;
		json_decref(u->fields);
		free(u);
	}
	free(e);
}
