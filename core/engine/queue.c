/* core/engine/queue.c - tenants, what asks them to run, and the queue of runs for a slot. */
#include <config.h>

#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/engine/engine-int.h"
#include "core/engine/executor.h"
#include "core/report/report.h"
#include "core/store/events.h"
#include "core/store/sweep.h"

/* ------------------------------------------------------------------ tenants and the queue */

static int tenant_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tenant *)a)->name, ((const struct tenant *)b)->name);
}

/* The tenant of that name (created when asked): a tree lookup, since every event, status
 * write and start-up sweep asks, and a fleet has thousands. */
struct tenant *rz__engine_tenant_of(rz_engine_t *e, const char *name, bool create)
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
	t->trigger = -1;
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
		} else if (rz_store_get(e->store, e->k_tenant, NULL, t->name, &tenant, &err) == 0) {
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
void rz__engine_push(struct tenant *t)
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
	rz__engine_start_next(e);
}

/* Out of the FIFO (an approved run canceled before it got its slot). */
void rz__engine_unqueue(struct tenant *t)
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
void rz__engine_forget(rz_engine_t *e, struct tenant *t)
{
	struct tenant **pp;

	if (t->run != NULL && t->run->awaiting) {
		/* removed with no teardown (no finalizer): the apply it waits for has no tenant
		 * left; its end forgets the tenant (t is freed) */
		t->gone = true;
		snprintf(t->run->error, sizeof(t->run->error), "its tenant was deleted");
		rz__engine_finish(t->run, RZ_RUN_CANCELED, -1);
		return;
	}
	if (t->run != NULL) {
		t->gone = true;
		return;
	}
	if (t->queued) {
		rz__engine_unqueue(t);
	}
	/* what its runs left here (configuration, logs, a waiting plan with the state in
	 * clear) goes with it, also when it went with no teardown */
	rz__engine_remove_workdir(e, t->name);
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
	if (t->run != NULL && t->run->awaiting && t->trigger >= 0 && t->trigger != RZ_TRIG_RESYNC) {
		bool gone = t->gone; /* then the run's end forgets the tenant: t is freed */
		snprintf(t->run->error, sizeof(t->run->error), "%s",
		         gone ? "its tenant was deleted" : "superseded by a newer change");
		rz__engine_finish(t->run, RZ_RUN_CANCELED, -1);
		if (gone) {
			return;
		}
	}
	if (t->queued || t->run != NULL) {
		t->again = t->run != NULL;
		if (t->queued && t->run == NULL) {
			queued_selector(t); /* a node group's selector may have changed */
			rz__engine_start_next(t->e);
		}
		return;
	}
	rz__engine_push(t);
}

static void on_debounce(evutil_socket_t fd, short what, void *arg)
{
	enqueue(arg);
}

/* A reason to run: restart the tenant's trailing debounce. A resync or a retry never
 * relabels a change already waiting, nor an update a creation. */
void rz__engine_poke(rz_engine_t *e, const char *tenant, int64_t delay_ms, rz_run_trigger_t trigger)
{
	struct tenant *t = rz__engine_tenant_of(e, tenant, true);

	if (t == NULL) {
		return;
	}
	if (trigger == RZ_TRIG_RESYNC && t->run != NULL && t->run->awaiting) {
		return; /* a waiting approval is left alone until someone decides */
	}
	if (trigger != RZ_TRIG_MANUAL && /* a manual Run is t->manual, not a change */
	    (t->trigger < 0 || (trigger != RZ_TRIG_RESYNC &&
	                        !(t->trigger == RZ_TRIG_CREATE && trigger == RZ_TRIG_UPDATE)))) {
		t->trigger = trigger; /* a new tenant's node groups still make its "create" run */
	}
	if (t->run != NULL && !t->run->awaiting) {
		t->again = true; /* exactly one follow-up, however many changes */
		return;
	}
	if (t->debounce == NULL) {
		t->debounce = evtimer_new(e->base, on_debounce, t);
	} else if (trigger == RZ_TRIG_RESYNC && evtimer_pending(t->debounce, NULL)) {
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
void rz__engine_drop_manual(struct tenant *t, const char *why)
{
	char now[32];

	rz_report_now(now, sizeof(now));
	rz_report_status(t->e->store, "Run", t->name, t->manual,
	                 json_pack("{s:s, s:s, s:s}", "phase", rz_run_phase_name(RZ_RUN_CANCELED),
	                           "finishedAt", now, "message", why));
	rz_logkv(RZ_LOG_NOTICE, "engine", "run canceled before it started", "tenant", t->name,
	         "run", t->manual, "why", why, NULL);
	t->manual[0] = '\0';
	if (t->trigger >= 0) {
		return; /* a change still waits: its run goes ahead */
	}
	if (t->queued && t->run == NULL) {
		rz__engine_unqueue(t);
	}
	if (t->debounce != NULL) {
		evtimer_del(t->debounce);
	}
	if (t->run != NULL) {
		t->again = false;
	}
}

/* A machine's observed status changed: recount, without a run. */
static void on_observed(evutil_socket_t fd, short what, void *arg)
{
	struct tenant *t = arg;

	(void)fd;
	(void)what;
	rz_report_counts(t->e->store, t->name, t->e->o.provision_timeout_ms);
}

/* Derive the tenant's status again after ms, on a turn of its own (once, however many
 * changes ask meanwhile). */
static void recount_soon(rz_engine_t *e, const char *tenant, long ms)
{
	struct tenant *t = rz__engine_tenant_of(e, tenant, true);
	struct timeval tv = { 0, ms * 1000 };

	if (t != NULL && t->observed == NULL) {
		t->observed = evtimer_new(e->base, on_observed, t);
	}
	if (t != NULL && t->observed != NULL && !evtimer_pending(t->observed, NULL)) {
		evtimer_add(t->observed, &tv);
	}
}

void rz__engine_on_event(const rz_event_t *ev, void *arg)
{
	rz_engine_t *e = arg;
	const rz_kind_t *k = ev->kind;

	if (k == e->k_run && ev->type == RZ_EV_ADDED) {
		int trigger = rz_run_trigger_of(json_string_value(
		    json_object_get(json_object_get(ev->object, "spec"), "trigger")));
		struct tenant *t = rz__engine_tenant_of(e, ev->tenant, true);
		if (t != NULL && trigger == RZ_TRIG_MANUAL) {
			if (t->manual[0] != '\0') {
				char why[128];
				snprintf(why, sizeof(why), "superseded by run %s", ev->name);
				rz__engine_drop_manual(t, why);
			}
			snprintf(t->manual, sizeof(t->manual), "%s", ev->name);
			/* on its own turn of the loop, not inside delivery */
			rz__engine_poke(e, ev->tenant, 0, RZ_TRIG_MANUAL);
		}
		return;
	}
	if (k == e->k_upgrade && ev->type != RZ_EV_ADDED && ev->tenant[0] != '\0') {
		int phase = rz_upgrade_phase_of(json_string_value(
		    json_object_get(json_object_get(ev->object, "status"), "phase")));
		struct tenant *t = rz__engine_tenant_of(e, ev->tenant, true);
		bool ended = ev->type == RZ_EV_DELETED || rz_upgrade_phase_over(phase);
		bool dry =
		    json_is_true(json_object_get(json_object_get(ev->object, "spec"), "dryRun"));
		if (t != NULL && ended && !dry && t->held) {
			t->held = false;
			rz__engine_poke(e, ev->tenant, 0,
			                RZ_TRIG_UPGRADE); /* what waited for it goes ahead */
		} else if (t != NULL && ended && !dry && phase == RZ_UPG_SUCCEEDED &&
		           strcmp(t->upgraded, ev->name) != 0) {
			rz__engine_poke(e, ev->tenant, 0,
			                RZ_TRIG_UPGRADE); /* new machines boot the new version */
		}
		if (t != NULL && phase == RZ_UPG_SUCCEEDED) {
			snprintf(t->upgraded, sizeof(t->upgraded), "%s", ev->name);
		}
		return;
	}
	if (k == e->k_machine && ev->type == RZ_EV_MODIFIED && !ev->spec_changed &&
	    ev->tenant[0] != '\0') {
		recount_soon(e, ev->tenant, 100); /* observation: counts and phase follow, no run */
		return;
	}
	if (k == e->k_tenant && ev->type == RZ_EV_MODIFIED && ev->spec_changed &&
	    json_object_get(json_object_get(ev->object, "metadata"), "deletionTimestamp")) {
		recount_soon(e, ev->name, 0); /* its phase is Deleting from now on */
	}
	if (!ev->spec_changed) {
		return; /* status and metadata writes never trigger */
	}
	if (k == e->k_tenant && ev->type == RZ_EV_DELETED) {
		struct tenant *t = rz__engine_tenant_of(e, ev->name, false);
		if (t != NULL) {
			rz__engine_forget(e, t);
		}
	} else if (k == e->k_tenant) {
		rz__engine_poke(e, ev->name, e->o.debounce_ms,
		                ev->type == RZ_EV_ADDED ? RZ_TRIG_CREATE : RZ_TRIG_UPDATE);
	} else if ((k == e->k_nodegroup || k == e->k_configpatch) && ev->tenant[0] != '\0') {
		rz__engine_poke(e, ev->tenant, e->o.debounce_ms, RZ_TRIG_UPDATE);
	}
}

/* ------------------------------------------------------------------ at start and every tofu.resync
 */

/* At start: every tenant whose spec was not reconciled yet (or that is being deleted) gets
 * a run, so nothing a crash interrupted stays undone. */
/* At start, tenant by tenant (a sweep, a page per turn of the loop): one whose last apply is
 * not what it asks for now runs again. */
void rz__engine_reconcile_pending(void *arg, json_t *t)
{
	rz_engine_t *e = arg;
	json_t *meta = json_object_get(t, "metadata");
	json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
	json_int_t seen =
	    json_integer_value(json_object_get(json_object_get(t, "status"), "observedGeneration"));
	const char *name = json_string_value(json_object_get(meta, "name"));

	struct tenant *tt = name != NULL ? rz__engine_tenant_of(e, name, false) : NULL;

	if (tt != NULL && tt->run != NULL && tt->run->generation == gen &&
	    tt->run->inputs[0] != '\0' && tt->run->op != RZ_OP_PLAN) {
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
		rz__engine_poke(e, name, e->o.debounce_ms, RZ_TRIG_UPDATE);
	}
}

/* Every tofu.resync: every tenant runs again (a sweep), so drift outside RezusCloud is
 * corrected. */
void rz__engine_resync_one(void *arg, json_t *t)
{
	rz_engine_t *e = arg;
	const char *name =
	    json_string_value(json_object_get(json_object_get(t, "metadata"), "name"));

	if (name != NULL) {
		rz__engine_poke(e, name, e->o.debounce_ms, RZ_TRIG_RESYNC);
	}
}

void rz__engine_on_resync(evutil_socket_t fd, short what, void *arg)
{
	rz_engine_t *e = arg;

	(void)fd;
	(void)what;
	rz_sweep_start(e->resyncs);
}

/* ------------------------------------------------------------------ the pool */

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

	if (name == NULL && t->run == NULL && t->trigger >= 0 && t->trigger != RZ_TRIG_RESYNC) {
		json_t *tenant = NULL, *obj, *out = NULL;
		unsigned char raw[4];
		if (rz_store_get(e->store, e->k_tenant, NULL, t->name, &tenant, &err) != 0) {
			return;
		}
		bool deleting = json_object_get(json_object_get(tenant, "metadata"),
		                                "deletionTimestamp") != NULL;
		randombytes_buf(raw, sizeof(raw));
		snprintf(t->waiting, sizeof(t->waiting), "run-%02x%02x%02x%02x", raw[0], raw[1],
		         raw[2], raw[3]);
		obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:I}}", "metadata", "name", t->waiting,
		                "tenant", t->name, "spec", "operation",
		                rz_run_op_name(deleting ? RZ_OP_DESTROY : RZ_OP_APPLY), "trigger",
		                rz_run_trigger_name(deleting ? RZ_TRIG_DELETE : t->trigger),
		                "generation",
		                json_integer_value(json_object_get(
		                    json_object_get(tenant, "metadata"), "generation")));
		if (rz_store_create(e->store, e->k_run, obj, NULL, &out, &err) == 0) {
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
		                 json_pack("{s:s}", "phase", rz_run_phase_name(RZ_RUN_QUEUED)));
		rz_report_run_condition(e->store, t->name, name, "Scheduled", "False", "NoRunner",
		                        why, NULL);
	}
}

/* A queued tenant whose pool no Ready runner serves: a line (once a minute) and an Event
 * on the tenant (once while it waits). It holds no slot meanwhile. */
static void unserved(rz_engine_t *e, struct tenant *t)
{
	int64_t now = rz__engine_mono_ns() / 1000000;

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
			rz__engine_launch(e, t);
			return true;
		}
	}
	if (e->qhead != NULL && total > 0 && n >= total) {
		int64_t now = rz__engine_mono_ns() / 1000000;
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
void rz__engine_start_next(rz_engine_t *e)
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
		rz__engine_launch(e, t);
	}
}
