/* core/engine/engine.c - the engine made and freed, its executor, what it says of itself. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/base/exec.h"
#include "core/base/log.h"
#include "core/base/proc.h"
#include "core/engine/engine-int.h"
#include "core/engine/executor.h"
#include "core/engine/runlog.h"
#include "core/report/report.h"
#include "core/store/sweep.h"

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
	e->k_tenant = rz_kind_by_name("Tenant");
	e->k_run = rz_kind_by_name("Run");
	e->k_upgrade = rz_kind_by_name("UpgradeRun");
	e->k_runner = rz_kind_by_name("Runner");
	e->k_machine = rz_kind_by_name("Machine");
	e->k_nodegroup = rz_kind_by_name("NodeGroup");
	e->k_configpatch = rz_kind_by_name("ConfigPatch");
	e->bus = bus;
	e->plugins = plugins;
	e->auth = auth;
	e->tfstate = tfstate;
	e->o = *opts;
	if (e->o.workers < 1) {
		e->o.workers = 1;
	}
	e->sub = rz_bus_subscribe(bus, rz__engine_on_event, e);
	if (e->sub == 0) {
		free(e);
		return rz_err_set(err, -ENOMEM, "engine: out of memory");
	}
	if (e->o.resync_ms > 0) {
		struct timeval tv = { e->o.resync_ms / 1000, (e->o.resync_ms % 1000) * 1000 };
		e->resync = event_new(base, -1, EV_PERSIST, rz__engine_on_resync, e);
		if (e->resync == NULL || event_add(e->resync, &tv) != 0) {
			rz_engine_free(e);
			return rz_err_set(err, -ENOMEM, "engine: cannot start the resync timer");
		}
	}
	if ((e->settle = evtimer_new(base, rz__engine_on_settle, e)) == NULL) {
		rz_engine_free(e);
		return rz_err_set(err, -ENOMEM, "engine: out of memory");
	}
	e->pending = rz_sweep_new(base, store, "Tenant", rz__engine_reconcile_pending, NULL, e);
	e->resyncs = rz_sweep_new(base, store, "Tenant", rz__engine_resync_one, NULL, e);
	if (e->pending == NULL || e->resyncs == NULL) {
		rz_engine_free(e);
		return rz_err_set(err, -ENOMEM, "engine: out of memory");
	}
	rz__engine_recover_runs(e);
	rz_sweep_start(e->pending);
	*out = e;
	return 0;
}

void rz_engine_state_replaced(void *engine, const char *tenant, const json_t *state)
{
	rz_engine_t *e = engine;

	rz_logkv(RZ_LOG_NOTICE, "engine", "state replaced outside a run: projecting it", "tenant",
	         tenant, NULL);
	rz_report_machines(e->store, e->plugins, tenant, state);
	rz_report_counts(e->store, tenant, e->o.provision_timeout_ms);
}

void rz_engine_set_executor(rz_engine_t *e, const rz_executor_t *exec)
{
	e->exec = exec;
	rz__engine_take_up_all(e);
}

void rz_engine_kick(rz_engine_t *e)
{
	if (e != NULL && !e->stopping) {
		rz__engine_start_next(e);
	}
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
	struct tenant *t = e ? rz__engine_tenant_of((rz_engine_t *)e, tenant, false) : NULL;

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
 * lock and plan stay, for the next start to take it up (rz__engine_recover_runs). Memory
 * only. */
static void leave(struct run *r)
{
	rz_logkv(RZ_LOG_NOTICE, "engine", "run left to its runner; the next start takes it up",
	         "tenant", r->t->name, "run", r->name, NULL);
	rz_runlog_close(r->log, rz_run_phase_name(RZ_RUN_RUNNING));
	rz__engine_run_release(r);
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
			/* rz__engine_finish would forget (free) a deleted one: freed below */
			t->gone = false;
			rz__engine_finish(t->run, RZ_RUN_INTERRUPTED, -1);
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
