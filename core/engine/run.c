/* core/engine/run.c - a run made and started: its Run object, what holds it, its slot. */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "core/base/log.h"
#include "core/engine/engine-int.h"
#include "core/engine/runlog.h"
#include "core/report/report.h"
#include "core/store/events.h"

/* ------------------------------------------------------------------ a run's Run object */

rz_run_trigger_t rz__engine_trigger_of(const json_t *spec)
{
	int v = rz_run_trigger_of(json_string_value(json_object_get(spec, "trigger")));

	return v >= 0 ? (rz_run_trigger_t)v : RZ_TRIG_UPDATE;
}

rz_run_op_t rz__engine_op_of(const json_t *spec)
{
	int v = rz_run_op_of(json_string_value(json_object_get(spec, "operation")));

	return v >= 0 ? (rz_run_op_t)v : RZ_OP_APPLY;
}

/* What happened to run r, as an Event on its tenant (repeats of a reason are counted) and
 * one on the Run itself (kubectl describe run shows its own). */
void rz__engine_run_event(struct run *r, const char *type, const char *reason, const char *what)
{
	char msg[700];

	snprintf(msg, sizeof(msg), "run %s (%s, %s): %s", r->name, rz_run_op_name(r->op),
	         rz_run_trigger_name(r->trigger), what);
	rz_events_record(r->e->store, r->t->name, "Tenant", r->t->name, type, reason, msg,
	                 "engine");
	rz_events_record(r->e->store, r->t->name, "Run", r->name, type, reason, what, "engine");
}

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
	if (rz_store_get(e->store, e->k_run, t->name, r->name, &m, &err) != 0) {
		return false;
	}
	spec = json_object_get(m, "spec");
	same = rz_run_op_of(json_string_value(json_object_get(spec, "operation"))) ==
	           (int)(r->deleting ? RZ_OP_DESTROY : RZ_OP_APPLY) &&
	       json_integer_value(json_object_get(spec, "generation")) ==
	           json_integer_value(
	               json_object_get(json_object_get(tenant, "metadata"), "generation"));
	if (same) {
		r->stored = true;
		r->op = r->deleting ? RZ_OP_DESTROY : RZ_OP_APPLY;
		r->trigger = rz__engine_trigger_of(spec);
		r->generation = json_integer_value(json_object_get(spec, "generation"));
		t->trigger = -1;
	} else {
		rz_report_now(now, sizeof(now));
		rz_report_status(e->store, "Run", t->name, r->name,
		                 json_pack("{s:s, s:s, s:s}", "phase",
		                           rz_run_phase_name(RZ_RUN_CANCELED), "finishedAt", now,
		                           "message", "superseded by a newer change"));
		r->name[0] = '\0';
	}
	json_decref(m);
	return same;
}

/* The run's Run object: the manual one, or a new one for this trigger. */
static int make_run(struct run *r, const json_t *tenant, rz_err_t *err)
{
	rz_engine_t *e = r->e;
	struct tenant *t = r->t;
	bool deleting = json_object_get(json_object_get(tenant, "metadata"), "deletionTimestamp");
	rz_run_trigger_t trigger = t->trigger >= 0 ? (rz_run_trigger_t)t->trigger : RZ_TRIG_UPDATE;
	json_t *obj, *out = NULL;
	unsigned char raw[4];
	int rc;

	r->deleting = deleting;
	if (t->manual[0] != '\0' && deleting) {
		rz__engine_drop_manual(t, "superseded by the tenant's deletion");
	}
	if (t->waiting[0] != '\0' && take_waiting(r, tenant)) {
		return 0;
	}
	if (t->manual[0] != '\0') {
		json_t *m = NULL;
		r->stored = true;
		snprintf(r->name, sizeof(r->name), "%s", t->manual);
		t->manual[0] = '\0';
		if (rz_store_get(e->store, e->k_run, t->name, r->name, &m, err) != 0) {
			return err->code;
		}
		r->op = rz__engine_op_of(json_object_get(m, "spec"));
		r->trigger = RZ_TRIG_MANUAL;
		json_decref(m);
		if (r->op == RZ_OP_PLAN && t->trigger >= 0) {
			t->again = true; /* a change waits too: it gets its apply after the plan */
		} else {
			t->trigger = -1;
		}
		return 0;
	}
	t->trigger = -1;
	randombytes_buf(raw, sizeof(raw));
	snprintf(r->name, sizeof(r->name), "run-%02x%02x%02x%02x", raw[0], raw[1], raw[2], raw[3]);
	r->op = deleting ? RZ_OP_DESTROY : RZ_OP_APPLY;
	r->trigger = deleting ? RZ_TRIG_DELETE : trigger;
	r->generation =
	    json_integer_value(json_object_get(json_object_get(tenant, "metadata"), "generation"));
	if (r->trigger == RZ_TRIG_RESYNC) {
		return 0; /* stored only when its plan finds something to do, or it fails */
	}
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:I}}", "metadata", "name", r->name, "tenant",
	                t->name, "spec", "operation", rz_run_op_name(r->op), "trigger",
	                rz_run_trigger_name(r->trigger), "generation", r->generation);
	rc = rz_store_create(e->store, e->k_run, obj, NULL, &out, err);
	json_decref(obj);
	json_decref(out);
	r->stored = rc == 0;
	return rc;
}

/* A resync's Run, stored once it has something to tell: it found drift, or it failed. */
void rz__engine_store_run(struct run *r)
{
	json_t *obj, *out = NULL;
	rz_err_t err = { 0 };

	if (r->stored) {
		return;
	}
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:I}}", "metadata", "name", r->name, "tenant",
	                r->t->name, "spec", "operation", rz_run_op_name(r->op), "trigger",
	                rz_run_trigger_name(r->trigger), "generation", r->generation);
	if (rz_store_create(r->e->store, r->e->k_run, obj, NULL, &out, &err) == 0) {
		r->stored = true;
		rz_report_status(r->e->store, "Run", r->t->name, r->name,
		                 json_pack("{s:s, s:s}", "phase", rz_run_phase_name(RZ_RUN_RUNNING),
		                           "startedAt", r->started));
		rz__engine_run_event(r, "Normal", "RunStarted", "started");
	} else {
		rz_log_warn("engine", "tenant '%s': cannot store run %s: %s", r->t->name, r->name,
		            err.msg);
	}
	json_decref(obj);
	json_decref(out);
}

/* ------------------------------------------------------------------ a run's start */

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
	if (rz_store_create(e->store, e->k_upgrade, obj, NULL, &out, &err) != 0) {
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
	int trigger = -1; /* what asked for the run, should it have to ask again */
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
	rc = rz_store_get(e->store, e->k_tenant, NULL, t->name, &tenant, &err);
	t->gone = t->gone || rc == RZ_ENOTFOUND; /* a child's deletion poked a deleted tenant */
	if (rc == 0 && upgrade_holds(e, t, tenant)) {
		t->held = true; /* the upgrade's end pokes the tenant again */
		rc = RZ_ENOTFOUND;
	} else if (rc == 0 && nothing_to_destroy(e, tenant)) {
		if (t->manual[0] != '\0') {
			rz__engine_drop_manual(t, "superseded by the tenant's deletion");
		}
		rz_logkv(RZ_LOG_NOTICE, "engine",
		         "tenant deleted with nothing to destroy: finalized without a run",
		         "tenant", t->name, NULL);
		rz__engine_teardown_done(r);
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
			int64_t delay = rz__engine_backoff_ms(e, ++t->failures);
			char in[32];
			if (t->trigger < 0) {
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
			rz__engine_poke(e, t->name, delay,
			                t->trigger >= 0 ? (rz_run_trigger_t)t->trigger
			                : t->manual[0]  ? RZ_TRIG_MANUAL
			                                : RZ_TRIG_UPDATE);
			return;
		}
		json_decref(r->diagnostics);
		json_decref(r->selector);
		free(r);
		t->run = NULL;
		e->running--;
		if (t->gone) {
			rz__engine_forget(e, t);
		}
		return;
	}
	rz_report_now(now, sizeof(now));
	snprintf(r->started, sizeof(r->started), "%s", now);
	if (r->stored) {
		rz_report_status(e->store, "Run", t->name, r->name,
		                 json_pack("{s:s, s:s}", "phase", rz_run_phase_name(RZ_RUN_RUNNING),
		                           "startedAt", now));
		rz__engine_run_event(r, "Normal", "RunStarted", "started");
	}
	rz_auth_token_secret(r->secret);
	if (r->remote && r->stored) {
		rz_auth_grant_kept(e->auth, t->name, r->name, r->secret); /* a restart keeps it */
	} else {
		rz_auth_grant(e->auth, t->name, r->name, r->secret);
	}
	rc = rz__engine_render(r, tenant, &err);
	json_decref(tenant);
	rz__engine_tenant_dir(e, t->name, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.log", dir, r->name);
	r->log = rz_runlog_open(path, e->o.max_run_log);
	if (rc == 0) {
		r->step = STEP_INIT;
		rc = rz__engine_next_step(r, &err);
	}
	if (rc != 0) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
		rz__engine_finish(r, RZ_RUN_FAILED, -1);
	}
}

/* An approved run got its slot back: apply. */
static void resume(struct run *r)
{
	rz_err_t err = { 0 };

	r->slot = true;
	r->e->running++;
	rz_report_status(r->e->store, "Run", r->t->name, r->name,
	                 json_pack("{s:s}", "phase", rz_run_phase_name(RZ_RUN_RUNNING)));
	if (rz__engine_next_step(r, &err) != 0) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
		rz__engine_finish(r, RZ_RUN_FAILED, -1);
	}
}

/* Out of the queue, into a slot: a new run, or an approved one's apply. */
void rz__engine_launch(rz_engine_t *e, struct tenant *t)
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
