/* core/remote/runners.c - Runner objects from heartbeats (core/remote/runners.h). */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/remote/dispatch.h"
#include "core/remote/heartbeat.h"
#include "core/remote/nats.h"
#include "core/remote/runners.h"

/* Helpers only the NATS build calls. */
#ifdef HAVE_LIBNATS
#define NATS_ONLY
#else
#define NATS_ONLY __attribute__((unused))
#endif

enum phase { P_READY, P_STOPPING, P_LOST, P_OFFLINE };
static const char *const phase_names[] = { "Ready", "Stopping", "Lost", "Offline" };

struct runner {
	char name[64];
	json_t *hb;         /* the last heartbeat, checked */
	int64_t seen_ms;    /* when it came (the daemon's clock) */
	int64_t written_ms; /* when lastHeartbeat was last written */
	enum phase phase;
	bool in_store;
	json_t *granted; /* its Runner's spec.labels (NULL: not read yet) */
	json_t *serving; /* the labels of its heartbeat that are granted: what it serves by */
	bool pin;        /* granted came from a heartbeat (trust on first use): to write */
};

/* A remote step in progress: its job is out, its events come back. */
struct step {
	char run[64], tenant[64], step[8], runner[64]; /* runner: "" until one claimed it */
	int attempt;
	bool unpublished;                /* its job is not out yet */
	char pool[RZ_DISPATCH_POOL_MAX]; /* where its job is */
	json_t *selector;                /* the tenant's runnerSelector, or NULL */
	int64_t next_seq;                /* the next event expected */
	int64_t held_ms;                 /* when a runner claimed it (or a restart took it up) */
	int64_t published_ms;            /* when its job went out (0: not by this daemon) */
	int64_t listed_ms;               /* its runner's last heartbeat that listed the run */
	bool told;                       /* on_waiting was called */
	rz_exec_step_t cb;               /* callbacks and arg; its strings are not kept */
	unsigned char key[RZ_DISPATCH_KEY_LEN]; /* its claim's event key */
	bool keyed;                             /* claimed: key is set */
	bool forged_told;                       /* an event without a valid MAC was logged */
};

struct rz_runners {
	struct event_base *base;
	rz_executor_t exec;
	struct step *steps;
	size_t nsteps;
	size_t unpublished; /* steps whose job is not out yet */
	bool was_down;      /* NATS was not connected at a sweep: no heartbeat could come */
	size_t last_capacity;
	void (*on_capacity)(void *arg);
	void *capacity_arg;
	uint64_t jobs, events_handled, events_dropped;
	uint64_t wait_hist[RZ_RUNNERS_WAIT_BUCKETS + 1], wait_count;
	double wait_seconds;
	const rz_config_t *cfg;
	rz_store_t *store;
	rz_workers_t *workers;
	struct event *tick;
	struct runner *v;
	size_t n;
	int64_t last_sweep_ms;
	uint64_t heartbeats, dropped;
	bool enabled;
	char daemon_url[RZ_DISPATCH_URL_MAX + 1]; /* in every job */
#ifdef HAVE_LIBNATS
	natsConnection *nc;
	natsSubscription *sub;
	jsCtx *js;                /* publishes the jobs */
	natsSubscription *events; /* rezus.events.>, durable, explicit ack */
	natsSubscription *new_events;
	bool was_connected;
	int64_t retry_at_ms;      /* when to make a new connection after one was closed */
	int64_t streams_retry_ms; /* when to check the streams again after a failure */
	bool streams, streams_pending;
	char streams_why[256];
	rz_err_t streams_err;
#endif
};

/* ------------------------------------------------------------------ the store */

/* The labels of its heartbeat that x's spec.labels does not grant (caller owns). */
static json_t *refused(const struct runner *x)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach(json_object_get(x->hb, "labels"), key, v)
	{
		if (json_object_get(x->serving, key) == NULL) {
			json_object_set(out, key, v);
		}
	}
	return out;
}

static json_t *runner_object(const struct runner *x)
{
	char last[40];
	const json_t *hb = x->hb;

	rz_clock_format(x->seen_ms, last, sizeof(last));
	return json_pack(
	    "{s:s, s:s, s:{s:s}, s:{s:O}, s:{s:O, s:o, s:O, s:O, s:O, s:O, s:s, s:s}}",
	    "apiVersion", RZ_API_VERSION, "kind", "Runner", "metadata", "name", x->name, "spec",
	    "labels", x->granted != NULL ? x->granted : json_object_get(hb, "labels"), "status",
	    "labels", json_object_get(hb, "labels"), "refusedLabels", refused(x), "version",
	    json_object_get(hb, "version"), "concurrency", json_object_get(hb, "concurrency"),
	    "running", json_object_get(hb, "running"), "startedAt",
	    json_object_get(hb, "startedAt"), "lastHeartbeat", last, "phase",
	    phase_names[x->phase]);
}

/* x->serving from its heartbeat and its grant (rz_kind_runner_serves). */
static void set_serving(struct runner *x)
{
	json_t *o = json_pack("{s:{s:O*}, s:{s:O*}}", "spec", "labels", x->granted, "status",
	                      "labels", json_object_get(x->hb, "labels"));

	json_decref(x->serving);
	x->serving = o != NULL ? rz_kind_runner_serves(o) : json_object();
	json_decref(o);
}

/* Write the grant taken on trust (x->pin) into its Runner's spec.labels, keeping the rest
 * of its spec and metadata. */
static void pin(rz_runners_t *r, struct runner *x)
{
	const rz_kind_t *k = rz_kind_by_name("Runner");
	json_t *obj = NULL, *out = NULL, *spec;
	rz_err_t err = { 0 };
	bool gone = false;

	if (rz_store_get(r->store, k, NULL, x->name, &obj, &err) != 0) {
		return; /* created with it, or deleted meanwhile: the next heartbeat sees */
	}
	spec = json_object_get(obj, "spec");
	if (!json_is_object(spec)) {
		json_object_set_new(obj, "spec", spec = json_object());
	}
	json_object_set(spec, "labels", x->granted);
	if (rz_store_update(r->store, k, NULL, x->name, obj, 0, RZ_UPDATE_SPEC, NULL, &out, &gone,
	                    &err) == 0) {
		x->pin = false;
	} else {
		rz_log_warn("remote", "Runner %s: cannot write its spec.labels: %s", x->name,
		            err.msg);
	}
	json_decref(out);
	json_decref(obj);
}

/* Create or update the Runner's status. */
static void write_runner(rz_runners_t *r, struct runner *x, int64_t now)
{
	const rz_kind_t *k = rz_kind_by_name("Runner");
	json_t *o = runner_object(x), *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;
	int rc = -ENOENT;

	if (o == NULL) {
		return;
	}
	if (!x->in_store) {
		rc = rz_store_create(r->store, k, o, NULL, &out, &err);
		json_decref(out);
		out = NULL;
		x->in_store = rc == 0 || rc == -EEXIST;
	}
	if (x->in_store) {
		rc = rz_store_update(r->store, k, NULL, x->name, o, 0, RZ_UPDATE_STATUS, NULL, &out,
		                     &gone, &err);
		json_decref(out);
	}
	if (rc == RZ_ENOTFOUND) {
		x->in_store = false; /* deleted meanwhile: created again next time */
	} else if (rc != 0) {
		rz_log_warn("remote", "Runner %s: cannot write its status: %s", x->name, err.msg);
	} else if (x->pin) {
		pin(r, x);
	}
	x->written_ms = now;
	json_decref(o);
}

/* Forget x in the table (its Runner stays in the store). */
static void forget(rz_runners_t *r, struct runner *x)
{
	json_decref(x->hb);
	json_decref(x->granted);
	json_decref(x->serving);
	*x = r->v[--r->n];
}

NATS_ONLY static struct runner *find(rz_runners_t *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->v[i].name, name) == 0) {
			return &r->v[i];
		}
	}
	return NULL;
}

/* Whether what a Runner shows differs between two heartbeats (lastHeartbeat aside). */
NATS_ONLY static bool differs(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "labels",  "version",   "concurrency",
		                            "running", "startedAt", "stopping" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!json_equal(json_object_get(a, keys[i]), json_object_get(b, keys[i]))) {
			return true;
		}
	}
	return false;
}

/* ------------------------------------------------------------------ heartbeats */

#ifdef HAVE_LIBNATS

/* The steps runner x holds whose run its heartbeat lists: listed now. */
static void listed(rz_runners_t *r, const struct runner *x, int64_t now)
{
	const json_t *running = json_object_get(x->hb, "running"), *v;
	size_t k;

	for (size_t i = 0; i < r->nsteps; i++) {
		struct step *st = &r->steps[i];
		if (strcmp(st->runner, x->name) != 0) {
			continue;
		}
		json_array_foreach(running, k, v)
		{
			if (json_is_string(v) && strcmp(json_string_value(v), st->run) == 0) {
				st->listed_ms = now;
			}
		}
	}
}

/* What runner x is granted: its Runner's spec.labels, read at every heartbeat (an admin's
 * change counts from the next one). A Runner without them (a new runner, or one from a
 * version before) is granted the labels of this heartbeat (trust on first use), written to
 * its spec.labels; from then on a heartbeat saying other labels routes nothing more to it
 * (status.refusedLabels shows them). */
static void grant(rz_runners_t *r, struct runner *x)
{
	json_t *obj = NULL, *labels = NULL;
	rz_err_t err = { 0 };
	char said[512];

	if (rz_store_get(r->store, rz_kind_by_name("Runner"), NULL, x->name, &obj, &err) == 0) {
		labels = json_object_get(json_object_get(obj, "spec"), "labels");
	}
	json_decref(x->granted);
	x->pin = !json_is_object(labels);
	x->granted =
	    x->pin ? json_deep_copy(json_object_get(x->hb, "labels")) : json_incref(labels);
	if (x->granted == NULL) {
		x->granted = json_object();
	}
	json_decref(obj);
	set_serving(x);
	if (x->pin) {
		char *t = json_dumps(x->granted, JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(said, sizeof(said), "%s", t ? t : "{}");
		free(t);
		rz_log(
		    RZ_LOG_NOTICE, "remote",
		    "runner %s: its Runner grants no labels yet: granted those of its heartbeat, "
		    "%s (change them with its spec.labels)",
		    x->name, said);
	} else if (json_object_size(x->serving) <
	           json_object_size(json_object_get(x->hb, "labels"))) {
		json_t *no = refused(x);
		char *t = json_dumps(no, JSON_COMPACT | JSON_SORT_KEYS);
		rz_log_debug("remote", "runner %s: labels not granted: %s", x->name, t ? t : "");
		free(t);
		json_decref(no);
	}
}

static void heartbeat(rz_runners_t *r, const char *subject, const char *data, size_t len,
                      int64_t now)
{
	char why[256];
	json_t *hb = rz_heartbeat_parse(subject, data, len, why, sizeof(why));
	const char *name;
	struct runner *x;
	enum phase phase;
	bool changed;

	if (hb == NULL) {
		r->dropped++;
		rz_log_warn("remote", "heartbeat on '%.80s' dropped: %s", subject ? subject : "",
		            why);
		return;
	}
	name = json_string_value(json_object_get(hb, "name"));
	x = find(r, name);
	for (size_t i = 0; x == NULL && r->n >= RZ_RUNNERS_MAX && i < r->n; i++) {
		if (r->v[i].phase == P_OFFLINE) {
			forget(r, &r->v[i]); /* (its Runner stays: known again at its heartbeat) */
		}
	}
	if (x == NULL) {
		if (r->n >= RZ_RUNNERS_MAX) {
			r->dropped++;
			rz_log_warn("remote",
			            "heartbeat of runner %s dropped: %d runners known "
			            "already",
			            name, RZ_RUNNERS_MAX);
			json_decref(hb);
			return;
		}
		x = &r->v[r->n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", name);
		rz_log_info("remote", "runner %s joined", name);
	}
	r->heartbeats++;
	phase = json_is_true(json_object_get(hb, "stopping")) ? P_STOPPING : P_READY;
	changed = x->hb == NULL || differs(x->hb, hb) || x->phase != phase || !x->in_store;
	if (x->phase == P_LOST && phase == P_READY) {
		rz_log_info("remote", "runner %s is back", name);
	}
	if (phase == P_STOPPING && x->phase != P_STOPPING) {
		rz_log_info("remote", "runner %s is stopping", name);
	}
	json_decref(x->hb);
	x->hb = hb;
	x->seen_ms = now;
	x->phase = phase;
	{
		json_t *before = x->serving != NULL ? json_incref(x->serving) : NULL;
		grant(r, x);
		changed = changed || before == NULL || !json_equal(before, x->serving);
		json_decref(before);
	}
	listed(r, x, now);
	if (changed || now - x->written_ms >= r->cfg->runners_heartbeat_timeout_ms / 3) {
		write_runner(r, x, now);
	}
}

#endif

static void lose_steps(rz_runners_t *r, const char *runner);

static struct step *step_of(rz_runners_t *r, const char *run)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		if (strcmp(r->steps[i].run, run) == 0) {
			return &r->steps[i];
		}
	}
	return NULL;
}

static void step_remove(rz_runners_t *r, struct step *st)
{
	json_decref(st->selector);
	r->unpublished -= st->unpublished;
	*st = r->steps[--r->nsteps];
}

/* Whether runner i is Ready with every label of selector (NULL: any Ready runner). */
static bool serves(const rz_runners_t *r, size_t i, const json_t *selector)
{
	const json_t *labels = r->v[i].serving; /* granted, not merely said */
	const char *key;
	json_t *v;
	bool all = r->v[i].phase == P_READY;

	json_object_foreach((json_t *)selector, key, v)
	{
		all = all && json_equal(json_object_get(labels, key), v);
	}
	return all;
}

/* Whether a Ready runner has every label of selector. */
static bool served(const rz_runners_t *r, const json_t *selector)
{
	for (size_t i = 0; i < r->n; i++) {
		if (serves(r, i, selector)) {
			return true;
		}
	}
	return false;
}

static bool connected(const rz_runners_t *r);

/* Why a job of the pool (of selector) waits with no runner to take it, into why; false
 * when a Ready runner serves it and NATS is connected. step: the step's name, or NULL. */
static bool why_waiting(const rz_runners_t *r, const json_t *selector, const char *pool,
                        const char *step, char *why, size_t size)
{
	char sel[1024] = "";
	const char *key;
	json_t *v;

	if (!connected(r)) {
		snprintf(why, size, "NATS at %s is not connected: no runner can take the %s%s",
		         r->cfg->runners_nats_url, step ? step : "run's",
		         step ? " step" : " steps");
		return true;
	}
	if (served(r, selector)) {
		return false;
	}
	json_object_foreach((json_t *)selector, key, v)
	{
		size_t n = strlen(sel);
		snprintf(sel + n, sizeof(sel) - n, "%s%s=%s", n ? "," : "", key,
		         json_string_value(v) ?: "");
	}
	snprintf(why, size, "no Ready runner serves pool %s%s%s%s", pool,
	         sel[0] ? " (runnerSelector " : "", sel, sel[0] ? ")" : "");
	return true;
}

/* Steps whose job waits with no runner to take it: told once each (the Run's condition). */
static void tell_waiting(rz_runners_t *r)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		struct step *st = &r->steps[i];
		char why[RZ_DISPATCH_POOL_MAX + 1536];
		if (st->told || st->runner[0] != '\0' || st->cb.on_waiting == NULL) {
			continue;
		}
		if (!why_waiting(r, st->selector, st->pool, st->step, why, sizeof(why))) {
			continue;
		}
		st->told = true;
		st->cb.on_waiting(st->cb.arg, why); /* writes a condition: the table stays */
	}
}

/* Steps held by a runner that is not Ready nor Stopping a timeout after they were taken
 * up (a restart found its Runner Lost, or none): lost as well. */
static void lose_orphans(rz_runners_t *r, int64_t now)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		struct step *st = &r->steps[i];
		struct runner *x = NULL;
		for (size_t k = 0; k < r->n && st->runner[0] != '\0'; k++) {
			if (strcmp(r->v[k].name, st->runner) == 0) {
				x = &r->v[k];
			}
		}
		if (st->runner[0] != '\0' && (x == NULL || x->phase == P_LOST) &&
		    now - st->held_ms >= r->cfg->runners_heartbeat_timeout_ms) {
			char name[64];
			snprintf(name, sizeof(name), "%s", st->runner);
			lose_steps(r, name);
			i = (size_t)-1; /* the table changed */
		} else if (st->runner[0] != '\0' && x != NULL && x->phase == P_READY &&
		           now - (st->listed_ms > st->held_ms ? st->listed_ms : st->held_ms) >=
		               r->cfg->runners_heartbeat_timeout_ms) {
			/* alive, but not running it (its claim's answer never reached it, say):
			 * the step is lost, not the runner */
			rz_exec_step_t cb = st->cb;
			char name[64], run[64];
			snprintf(name, sizeof(name), "%s", st->runner);
			snprintf(run, sizeof(run), "%s", st->run);
			step_remove(r, st);
			rz_log_warn("remote",
			            "runner %s is Ready but has not listed run %s for %lld ms "
			            "(runners.heartbeat_timeout): its step is taken as lost",
			            name, run, (long long)r->cfg->runners_heartbeat_timeout_ms);
			cb.on_lost(cb.arg, name);
			i = (size_t)-1; /* the table changed */
		}
	}
}

/* The steps a runner holds end Interrupted: on_lost (which forgets them). */
static void lose_steps(rz_runners_t *r, const char *runner)
{
	for (size_t i = 0; i < r->nsteps;) {
		if (strcmp(r->steps[i].runner, runner) == 0) {
			rz_exec_step_t cb = r->steps[i].cb;
			char name[64], run[64];
			snprintf(name, sizeof(name), "%s", runner);
			snprintf(run, sizeof(run), "%s", r->steps[i].run);
			step_remove(r, &r->steps[i]);
			rz_log_warn("remote", "runner %s lost while it held a step of run %s", name,
			            run);
			cb.on_lost(cb.arg, name);
			i = 0; /* on_lost may have changed the table */
			continue;
		}
		i++;
	}
}

/* Runners without a heartbeat for runners.heartbeat_timeout: Lost (a Ready one) or gone
 * (a Stopping one, which said goodbye). */
static void sweep(rz_runners_t *r, int64_t now)
{
	if (r->enabled && !connected(r)) {
		/* no heartbeat can come: nobody is lost for the daemon's own disconnection */
		r->was_down = true;
		tell_waiting(r);
		return;
	}
	if (r->was_down) {
		/* back: every runner gets a whole timeout to be heard again, as at a start */
		r->was_down = false;
		for (size_t i = 0; i < r->n; i++) {
			r->v[i].seen_ms = r->v[i].seen_ms > now ? r->v[i].seen_ms : now;
		}
		for (size_t i = 0; i < r->nsteps; i++) {
			r->steps[i].held_ms = now;
		}
	}
	for (size_t i = 0; i < r->n;) {
		struct runner *x = &r->v[i];
		if (now - x->seen_ms < r->cfg->runners_heartbeat_timeout_ms || x->phase == P_LOST ||
		    x->phase == P_OFFLINE) {
			i++;
			continue;
		}
		if (x->phase == P_STOPPING) {
			char name[64];
			rz_log_info("remote", "runner %s stopped; its Runner is Offline", x->name);
			x->phase = P_OFFLINE;
			write_runner(r, x, now);
			snprintf(name, sizeof(name), "%s", x->name);
			lose_steps(r, name);
			i++;
			continue;
		}
		x->phase = P_LOST;
		rz_log_warn("remote",
		            "runner %s lost: no heartbeat for %lld ms (runners.heartbeat_"
		            "timeout)",
		            x->name, (long long)(now - x->seen_ms));
		write_runner(r, x, now);
		{
			char name[64];
			snprintf(name, sizeof(name), "%s", x->name);
			lose_steps(r, name); /* x may move: the name is kept */
		}
		i++;
	}
	lose_orphans(r, now);
	tell_waiting(r);
}

/* The Runners a previous daemon left: known again, as seen now (a runner that is alive
 * heartbeats within the timeout; one that is not becomes Lost after it). */
static void load(rz_runners_t *r, int64_t now)
{
	json_t *items = rz_store_list_all(r->store, "Runner", NULL), *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
		json_t *st = json_object_get(it, "status");
		struct runner *x;
		if (name == NULL || r->n >= RZ_RUNNERS_MAX) {
			continue;
		}
		x = &r->v[r->n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", name);
		x->hb = json_pack("{s:s, s:O, s:O, s:O, s:O, s:O, s:b}", "name", name, "labels",
		                  json_object_get(st, "labels"), "version",
		                  json_object_get(st, "version"), "concurrency",
		                  json_object_get(st, "concurrency"), "running",
		                  json_object_get(st, "running"), "startedAt",
		                  json_object_get(st, "startedAt"), "stopping", 0);
		if (x->hb == NULL) { /* a status without every member: a fresh start */
			r->n--;
			continue;
		}
		x->in_store = true;
		x->seen_ms = now;
		x->written_ms = now;
		{
			json_t *g = json_object_get(json_object_get(it, "spec"), "labels");
			x->granted = json_is_object(g) ? json_incref(g) : json_object();
			x->pin = !json_is_object(g);
			set_serving(x);
		}
		const char *ph = json_string_value(json_object_get(st, "phase"));
		x->phase = ph != NULL && strcmp(ph, "Lost") == 0       ? P_LOST
		           : ph != NULL && strcmp(ph, "Stopping") == 0 ? P_STOPPING
		           : ph != NULL && strcmp(ph, "Offline") == 0  ? P_OFFLINE
		                                                       : P_READY;
	}
	json_decref(items);
}

/* ------------------------------------------------------------------ NATS */

#ifdef HAVE_LIBNATS

static atomic_llong last_async_log;

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *arg)
{
	long long now = (long long)rz_clock_now_ms();

	(void)nc;
	(void)sub;
	(void)arg;
	if (now - atomic_load(&last_async_log) >= 10000) { /* at most one line per 10 s */
		atomic_store(&last_async_log, now);
		rz_log_warn("remote", "NATS: %s", natsStatus_GetText(err));
	}
}

static void on_disconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_warn("remote", "NATS connection lost; reconnecting every %d ms",
	            RZ_NATS_RECONNECT_WAIT);
}

static void on_reconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_info("remote", "NATS connection back");
}

static void on_connected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_info("remote", "connected to NATS");
}

/* A worker thread: the streams, created when absent. */
static void streams_work(void *arg)
{
	rz_runners_t *r = arg;
	jsSubOptions so;
	jsErrCode jerr = 0;
	natsStatus s;

	memset(&r->streams_err, 0, sizeof(r->streams_err));
	r->new_events = NULL;
	if (rz_nats_ensure_streams(r->nc, &r->streams_err) != 0 || r->events != NULL) {
		return;
	}
	/* the events of every run, in order per run, acked once handled; a durable consumer
	 * keeps its place across reconnects (and restarts) */
	jsSubOptions_Init(&so);
	so.Stream = RZ_STREAM_EVENTS;
	so.ManualAck = true;
	so.Config.Durable = RZ_RUNNERS_EVENTS_DURABLE;
	so.Config.AckPolicy = js_AckExplicit;
	so.Config.DeliverPolicy = js_DeliverNew;
	so.Config.MaxAckPending = RZ_RUNNERS_PENDING;
	s = js_SubscribeSync(&r->new_events, r->js, RZ_STREAM_EVENTS_SUBJECTS, NULL, &so, &jerr);
	if (s == NATS_OK) {
		s = natsSubscription_SetPendingLimits(r->new_events, RZ_RUNNERS_PENDING,
		                                      RZ_RUNNERS_PENDING * RZ_DISPATCH_EVENT_MAX);
	}
	if (s != NATS_OK) {
		natsSubscription_Destroy(r->new_events);
		r->new_events = NULL;
		rz_err_set(&r->streams_err, -EIO,
		           "NATS: cannot consume %s: %s (JetStream error %d)", RZ_STREAM_EVENTS,
		           rz_nats_error(s), (int)jerr);
	}
}

static void streams_done(void *arg, int canceled)
{
	rz_runners_t *r = arg;

	r->streams_pending = false;
	if (r->new_events != NULL) {
		r->events = r->new_events;
		r->new_events = NULL;
	}
	if (canceled) {
		return;
	}
	r->streams = r->streams_err.code == 0;
	snprintf(r->streams_why, sizeof(r->streams_why), "%s", r->streams_err.msg);
	if (!r->streams) {
		rz_log_err("remote", "%s; tried again in %d ms", r->streams_why,
		           RZ_RUNNERS_RETRY_MS);
	}
}

/* Drop a connection NATS closed (refused credentials, say), to try again later. Not while
 * the stream check on the pool uses it. */
static void drop_connection(rz_runners_t *r, int64_t now)
{
	const char *why = NULL;

	if (r->streams_pending) {
		return;
	}
	if (r->nc != NULL) {
		(void)natsConnection_GetLastError(r->nc, &why);
	}
	rz_log_err("remote",
	           "NATS at %s closed the connection%s%s (refused runners.nats_user's "
	           "credentials, or out of reach); a new one in %d ms",
	           r->cfg->runners_nats_url, why != NULL && why[0] != '\0' ? ": " : "",
	           why != NULL ? why : "", RZ_RUNNERS_RETRY_MS);
	natsSubscription_Destroy(r->sub);
	r->sub = NULL;
	natsSubscription_Destroy(r->events);
	r->events = NULL;
	jsCtx_Destroy(r->js);
	r->js = NULL;
	if (r->nc != NULL) {
		natsConnection_Destroy(r->nc);
		r->nc = NULL;
	}
	r->was_connected = false;
	r->streams = false;
	r->retry_at_ms = now + RZ_RUNNERS_RETRY_MS;
}

/* A connection (libnats retries it until the server answers, and reconnects it after),
 * subscribed to the heartbeats. A failure is logged and tried again RZ_RUNNERS_RETRY_MS
 * later; only a configuration problem (a secret file unreadable) is returned. */
static int connect_nats(rz_runners_t *r, int64_t now, rz_err_t *err)
{
	natsOptions *o = NULL;
	rz_nats_conf_t c;
	natsStatus s;
	int rc;

	rz_nats_conf_daemon(r->cfg, &c);
	r->retry_at_ms = now + RZ_RUNNERS_RETRY_MS;
	rc = rz_nats_options(&o, &c, -1, err);
	if (rc != 0) {
		return rc;
	}
	natsOptions_SetErrorHandler(o, on_error, r);
	natsOptions_SetDisconnectedCB(o, on_disconnected, r);
	natsOptions_SetReconnectedCB(o, on_reconnected, r);
	s = natsOptions_SetRetryOnFailedConnect(o, true, on_connected, r);
	if (s == NATS_OK) {
		s = natsConnection_Connect(&r->nc, o);
	}
	natsOptions_Destroy(o);
	if (s == NATS_NOT_YET_CONNECTED) {
		rz_log_warn("remote", "NATS at %s not reachable yet; retrying every %d ms", c.url,
		            RZ_NATS_RECONNECT_WAIT);
	} else if (s != NATS_OK) {
		rz_log_err("remote", "NATS at %s: %s; a new connection in %d ms", c.url,
		           rz_nats_error(s), RZ_RUNNERS_RETRY_MS);
		natsConnection_Destroy(r->nc);
		r->nc = NULL;
		return 0;
	}
	s = natsConnection_SubscribeSync(&r->sub, r->nc, RZ_SUBJECT_PREFIX "*" RZ_SUBJECT_SUFFIX);
	if (s == NATS_OK) {
		s = natsConnection_JetStream(&r->js, r->nc, NULL);
	}
	if (s == NATS_OK) {
		s = natsSubscription_SetPendingLimits(r->sub, RZ_RUNNERS_PENDING,
		                                      RZ_RUNNERS_PENDING * RZ_HEARTBEAT_MAX);
	}
	if (s != NATS_OK) {
		drop_connection(r, now);
	}
	return 0;
}

/* One event of a remote step: a line, or its end, to the engine's callbacks, in order.
 * mac: its Rezus-Event-Mac header, or NULL. */
static void event(rz_runners_t *r, const char *subject, const char *data, size_t len,
                  const char *mac)
{
	rz_dispatch_event_t ev;
	char why[256];
	struct step *st;

	if (!rz_dispatch_event_parse(subject, data, len, &ev, why, sizeof(why))) {
		r->events_dropped++;
		rz_log_warn("remote", "event on '%.80s' dropped: %s", subject ? subject : "", why);
		return;
	}
	st = step_of(r, ev.run);
	if (st != NULL && strcmp(st->step, ev.step) == 0 &&
	    (!st->keyed || !rz_dispatch_event_mac_ok(st->key, subject, data, len, mac))) {
		/* not from the runner holding the step's claim: dropped, and said once per
		 * step (a flood of them must not flood the log; the count is the metric's) */
		r->events_dropped++;
		if (!st->forged_told) {
			st->forged_told = true;
			rz_log_warn("remote",
			            "run %s: an event of its %s step with %s dropped: not from "
			            "the runner holding its claim (%s); more such are dropped "
			            "without a line",
			            ev.run, ev.step, mac == NULL ? "no MAC" : "a wrong MAC",
			            st->runner[0] ? st->runner : "none yet");
		}
		rz_dispatch_event_clear(&ev);
		return;
	}
	if (st == NULL || strcmp(st->step, ev.step) != 0 || ev.seq < st->next_seq) {
		/* a run that ended, a step before this one, or one delivered again */
		r->events_dropped++;
		rz_dispatch_event_clear(&ev);
		return;
	}
	if (ev.seq > st->next_seq) {
		rz_log_warn("remote", "run %s: events %lld to %lld of its %s step are missing",
		            ev.run, (long long)st->next_seq, (long long)ev.seq - 1, ev.step);
	}
	st->next_seq = ev.seq + 1;
	r->events_handled++;
	if (!ev.is_exit) {
		st->cb.on_line(st->cb.arg, ev.line, ev.line_len, ev.is_stderr);
	} else {
		rz_exec_step_t cb = st->cb;
		st->runner[0] = '\0'; /* no longer held: a loss of the runner now is no matter */
		cb.on_exit(cb.arg, ev.status, ev.timed_out, ev.canceled); /* may start the next */
	}
	rz_dispatch_event_clear(&ev);
}

static void publish_jobs(rz_runners_t *r);

static void poll_nats(rz_runners_t *r, int64_t now)
{
	rz_err_t err = { 0 };
	bool up;
	natsMsg *m = NULL;

	if (r->nc == NULL) {
		if (now >= r->retry_at_ms && connect_nats(r, now, &err) != 0) {
			rz_log_err("remote", "%s; tried again in %d ms", err.msg,
			           RZ_RUNNERS_RETRY_MS);
		}
		return;
	}
	if (natsConnection_Status(r->nc) == NATS_CONN_STATUS_CLOSED) {
		drop_connection(r, now);
		return;
	}
	up = natsConnection_Status(r->nc) == NATS_CONN_STATUS_CONNECTED;
	if (up && (!r->was_connected || !r->streams) && !r->streams_pending &&
	    now >= r->streams_retry_ms) {
		r->streams_pending = true;
		r->streams_retry_ms = now + RZ_RUNNERS_RETRY_MS;
		if (rz_workers_submit(r->workers, streams_work, streams_done, r) != 0) {
			r->streams_pending = false;
		}
	}
	r->was_connected = up;
	publish_jobs(r);
	for (int i = 0; r->sub != NULL && i < RZ_RUNNERS_PER_TICK; i++) {
		if (natsSubscription_NextMsg(&m, r->sub, 0) != NATS_OK) {
			break;
		}
		heartbeat(r, natsMsg_GetSubject(m), natsMsg_GetData(m),
		          (size_t)natsMsg_GetDataLength(m), now);
		natsMsg_Destroy(m);
	}
	for (int i = 0; r->events != NULL && i < RZ_RUNNERS_PER_TICK; i++) {
		if (natsSubscription_NextMsg(&m, r->events, 0) != NATS_OK) {
			break;
		}
		{
			const char *mac = NULL;
			if (natsMsgHeader_Get(m, RZ_DISPATCH_MAC_HEADER, &mac) != NATS_OK) {
				mac = NULL;
			}
			event(r, natsMsg_GetSubject(m), natsMsg_GetData(m),
			      (size_t)natsMsg_GetDataLength(m), mac);
		}
		(void)natsMsg_Ack(m, NULL); /* handled (or refused): never again */
		natsMsg_Destroy(m);
	}
}

#endif /* HAVE_LIBNATS */

/* ------------------------------------------------------------------ the executor */

static bool ex_remote(void *ctx)
{
	return ((rz_runners_t *)ctx)->enabled;
}

/* Whether jobs go out and events come back now. */
static bool connected(const rz_runners_t *r)
{
#ifdef HAVE_LIBNATS
	return r->nc != NULL && natsConnection_Status(r->nc) == NATS_CONN_STATUS_CONNECTED &&
	       r->streams && r->events != NULL;
#else
	(void)r;
	return false;
#endif
}

/* The slots of the Ready runners that serve selector (NULL: of every Ready runner). */
static size_t capacity(rz_runners_t *r, const json_t *selector)
{
	size_t n = 0;

#ifdef HAVE_LIBNATS
	if (!connected(r)) {
		return 0;
	}
#endif
	for (size_t i = 0; i < r->n; i++) {
		if (serves(r, i, selector)) {
			n += (size_t)json_integer_value(json_object_get(r->v[i].hb, "concurrency"));
		}
	}
	return n;
}

static size_t ex_capacity(void *ctx, const json_t *selector)
{
	return capacity(ctx, selector);
}

static bool ex_unserved(void *ctx, const json_t *selector, char *why, size_t size)
{
	char pool[RZ_DISPATCH_POOL_MAX + 1], bad[256];

	if (!rz_dispatch_pool(selector, pool, sizeof(pool), bad, sizeof(bad))) {
		snprintf(why, size, "%s", bad);
		return true;
	}
	return why_waiting(ctx, selector, pool, NULL, why, size);
}

/* The jobs not out yet, when NATS is there: published and their store acknowledged
 * (with a message id, so that JetStream keeps one of a job published twice). A job that
 * cannot go out now goes at a later tick. */
static void publish_jobs(rz_runners_t *r)
{
#ifdef HAVE_LIBNATS
	for (size_t i = 0; i < r->nsteps && r->unpublished > 0 && connected(r); i++) {
		struct step *st = &r->steps[i];
		rz_dispatch_job_t job = { 0 };
		char subject[RZ_DISPATCH_POOL_MAX + 32], id[160], *text;
		jsPubOptions po;
		jsErrCode jerr = 0;
		natsStatus ns;
		if (!st->unpublished) {
			continue;
		}
		snprintf(job.run, sizeof(job.run), "%s", st->run);
		snprintf(job.tenant, sizeof(job.tenant), "%s", st->tenant);
		snprintf(job.step, sizeof(job.step), "%s", st->step);
		job.attempt = st->attempt;
		snprintf(job.daemon, sizeof(job.daemon), "%s", r->daemon_url);
		if ((text = rz_dispatch_job_build(&job)) == NULL) {
			return;
		}
		snprintf(subject, sizeof(subject), RZ_DISPATCH_JOBS_PREFIX "%s", st->pool);
		snprintf(id, sizeof(id), "%s.%s.%d", st->run, st->step, st->attempt);
		jsPubOptions_Init(&po);
		po.MsgId = id;
		po.MaxWait = RZ_RUNNERS_PUBLISH_WAIT_MS;
		ns = js_Publish(NULL, r->js, subject, text, (int)strlen(text), &po, &jerr);
		free(text);
		if (ns != NATS_OK) {
			rz_log_warn("remote", "run %s: its %s job is not out yet (%s); again soon",
			            st->run, st->step, rz_nats_error(ns));
			return;
		}
		st->unpublished = false;
		st->published_ms = rz_clock_now_ms();
		r->unpublished--;
		r->jobs++;
		rz_log_debug("remote", "job of run %s, step %s, on %s", st->run, st->step, subject);
	}
#else
	(void)r;
#endif
}

/* The step into the table: held by runner (a restart took it up), or with its job to
 * publish (now, or once NATS is there). */
static int put_step(rz_runners_t *r, const rz_exec_step_t *s, const char *runner, rz_err_t *err)
{
	struct step *st = step_of(r, s->run);
	char pool[RZ_DISPATCH_POOL_MAX], why[256];

	if (!rz_dispatch_pool(s->selector, pool, sizeof(pool), why, sizeof(why))) {
		return rz_err_set(err, -EINVAL, "spec.runnerSelector: %s", why);
	}
	if (st == NULL) {
		if (r->nsteps >= RZ_RUNNERS_STEPS) {
			return rz_err_set(err, -ENOSPC, "%d remote steps in progress already",
			                  RZ_RUNNERS_STEPS);
		}
		st = &r->steps[r->nsteps++];
	} else {
		json_decref(st->selector);
		r->unpublished -= st->unpublished;
	}
	memset(st, 0, sizeof(*st));
	snprintf(st->run, sizeof(st->run), "%s", s->run);
	snprintf(st->tenant, sizeof(st->tenant), "%s", s->tenant);
	snprintf(st->step, sizeof(st->step), "%s", s->step);
	snprintf(st->pool, sizeof(st->pool), "%s", pool);
	snprintf(st->runner, sizeof(st->runner), "%s", runner ? runner : "");
	st->attempt = s->attempt;
	st->held_ms = rz_clock_now_ms();
	st->selector = s->selector != NULL ? json_deep_copy(s->selector) : NULL;
	st->next_seq = 1;
	st->cb = *s;
	st->cb.run = st->cb.tenant = st->cb.step = NULL;
	st->cb.selector = NULL;
	st->cb.event_key = NULL;
	if (runner != NULL && s->event_key != NULL) {
		memcpy(st->key, s->event_key, sizeof(st->key));
		st->keyed = true;
	}
	st->unpublished = runner == NULL;
	r->unpublished += st->unpublished;
	publish_jobs(r);
	return 0;
}

static int ex_start(void *ctx, const rz_exec_step_t *s, rz_err_t *err)
{
	return put_step(ctx, s, NULL, err);
}

static int ex_attach(void *ctx, const rz_exec_step_t *s, const char *runner, rz_err_t *err)
{
	rz_exec_step_t again = *s;

	if (runner != NULL && runner[0] != '\0') {
		rz_log_info("remote", "run %s: its %s step on runner %s taken up again", s->run,
		            s->step, runner);
		return put_step(ctx, s, runner, err);
	}
	/* no runner claimed it, or its job was not out when the daemon stopped: once more */
	again.attempt = s->attempt + 1;
	return put_step(ctx, &again, NULL, err);
}

const double rz_runners_wait_buckets[RZ_RUNNERS_WAIT_BUCKETS] = {
	0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

/* A claim's wait, from the job's publication, into the histogram. */
static void count_wait(rz_runners_t *r, int64_t ms)
{
	double s = (double)ms / 1000.0;
	size_t b = 0;

	while (b < RZ_RUNNERS_WAIT_BUCKETS && s > rz_runners_wait_buckets[b]) {
		b++;
	}
	r->wait_hist[b]++;
	r->wait_count++;
	r->wait_seconds += s;
}

static void ex_claimed(void *ctx, const char *run, const char *runner,
                       const unsigned char *event_key)
{
	rz_runners_t *r = ctx;
	struct step *st = step_of(r, run);

	if (st != NULL) {
		if (st->published_ms > 0 && st->runner[0] == '\0') {
			count_wait(r, rz_clock_now_ms() - st->published_ms);
		}
		memcpy(st->key, event_key, sizeof(st->key));
		st->keyed = true;
		/* its runner has a whole heartbeat timeout from now to list it, however long the
		 * job waited to be claimed */
		snprintf(st->runner, sizeof(st->runner), "%s", runner);
		st->held_ms = rz_clock_now_ms();
		st->listed_ms = 0;
	}
}

static void ex_cancel(void *ctx, const char *run)
{
	rz_runners_t *r = ctx;
	struct step *st = step_of(r, run);
	char subject[128], body[128];

	if (st == NULL || st->runner[0] == '\0') {
		return;
	}
	snprintf(subject, sizeof(subject), RZ_SUBJECT_PREFIX "%s.cancel", st->runner);
	snprintf(body, sizeof(body), "{\"run\":\"%s\"}", run); /* a run name needs no escaping */
#ifdef HAVE_LIBNATS
	if (r->nc == NULL || natsConnection_PublishString(r->nc, subject, body) != NATS_OK) {
		rz_log_warn("remote", "cannot send the cancel of run %s to runner %s", run,
		            st->runner);
	}
#endif
	rz_log_info("remote", "cancel of run %s sent to runner %s", run, st->runner);
}

static void ex_forget(void *ctx, const char *run)
{
	rz_runners_t *r = ctx;
	struct step *st = step_of(r, run);

	if (st != NULL) {
		step_remove(r, st);
	}
}

const rz_executor_t *rz_runners_executor(rz_runners_t *r)
{
	return &r->exec;
}

void rz_runners_on_capacity(rz_runners_t *r, void (*fn)(void *arg), void *arg)
{
	r->on_capacity = fn;
	r->capacity_arg = arg;
}

/* ------------------------------------------------------------------ the loop */

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	rz_runners_t *r = arg;
	int64_t now = rz_clock_now_ms();

	(void)fd;
	(void)what;
#ifdef HAVE_LIBNATS
	poll_nats(r, now);
#endif
	if (now - r->last_sweep_ms >= 1000) {
		r->last_sweep_ms = now;
		sweep(r, now);
	}
	{
		size_t c = capacity(r, NULL);
		bool more = c > r->last_capacity;
		r->last_capacity = c;
		if (more && r->on_capacity != NULL) {
			r->on_capacity(r->capacity_arg); /* what waits starts */
		}
	}
}

int rz_runners_new(rz_runners_t **out, struct event_base *base, const rz_config_t *cfg,
                   rz_store_t *store, rz_workers_t *workers, const char *daemon_url, rz_err_t *err)
{
	rz_runners_t *r = calloc(1, sizeof(*r));
	struct timeval tv = { 0, RZ_RUNNERS_TICK_MS * 1000 };
	int rc = 0;

	*out = NULL;
	if (r == NULL || (r->v = calloc(RZ_RUNNERS_MAX, sizeof(*r->v))) == NULL) {
		free(r);
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	r->exec = (rz_executor_t){ .ctx = r,
		                   .remote = ex_remote,
		                   .capacity = ex_capacity,
		                   .unserved = ex_unserved,
		                   .start = ex_start,
		                   .attach = ex_attach,
		                   .claimed = ex_claimed,
		                   .cancel = ex_cancel,
		                   .forget = ex_forget };
	snprintf(r->daemon_url, sizeof(r->daemon_url), "%s", daemon_url ? daemon_url : "");
	r->base = base;
	r->cfg = cfg;
	r->store = store;
	r->workers = workers;
	r->enabled = cfg->runners_nats_url != NULL && cfg->runners_nats_url[0] != '\0';
	if (!r->enabled) {
		*out = r;
		return 0;
	}
	if ((r->steps = calloc(RZ_RUNNERS_STEPS, sizeof(*r->steps))) == NULL) {
		rz_runners_free(r);
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	load(r, rz_clock_now_ms());
#ifdef HAVE_LIBNATS
	rc = connect_nats(r, rz_clock_now_ms(), err);
#else
	rc = rz_err_set(err, REZUS_ECONFIG, "runners.nats_url: built without NATS (libnats)");
#endif
	if (rc == 0) {
		r->tick = event_new(base, -1, EV_PERSIST, on_tick, r);
		if (r->tick == NULL || event_add(r->tick, &tv) < 0) {
			rc = rz_err_set(err, -ENOMEM, "cannot schedule the runners' heartbeats");
		}
	}
	if (rc != 0) {
		rz_runners_free(r);
		return rc;
	}
	rz_log_info("remote", "remote runners on: heartbeats from NATS at %s, Lost after %lld ms",
	            cfg->runners_nats_url, (long long)cfg->runners_heartbeat_timeout_ms);
	*out = r;
	return 0;
}

void rz_runners_stats(const rz_runners_t *r, rz_runners_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	if (r == NULL) {
		return;
	}
	out->enabled = r->enabled;
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].phase == P_READY) {
			out->ready++;
		} else if (r->v[i].phase == P_STOPPING) {
			out->stopping++;
		} else if (r->v[i].phase == P_OFFLINE) {
			out->offline++;
		} else {
			out->lost++;
		}
	}
	out->heartbeats = r->heartbeats;
	out->dropped = r->dropped;
	out->jobs = r->jobs;
	out->events = r->events_handled;
	out->events_dropped = r->events_dropped;
	out->steps = r->nsteps;
	memcpy(out->wait_hist, r->wait_hist, sizeof(out->wait_hist));
	out->wait_count = r->wait_count;
	out->wait_seconds = r->wait_seconds;
#ifdef HAVE_LIBNATS
	out->connected =
	    r->nc != NULL && natsConnection_Status(r->nc) == NATS_CONN_STATUS_CONNECTED;
	out->streams = r->streams;
#endif
}

bool rz_runners_describe(const rz_runners_t *r, char *buf, size_t size)
{
	rz_runners_stats_t st;

	rz_runners_stats(r, &st);
	if (!st.enabled) {
		return false;
	}
	snprintf(buf, size, "%s %s, streams %s and %s %s; runners: %llu Ready, %llu Lost",
	         st.connected ? "connected to" : "not connected (retrying) to",
	         r->cfg->runners_nats_url, RZ_STREAM_JOBS, RZ_STREAM_EVENTS,
	         st.streams ? "present" : "not checked yet", (unsigned long long)st.ready,
	         (unsigned long long)st.lost);
	return true;
}

void rz_runners_free(rz_runners_t *r)
{
	if (r == NULL) {
		return;
	}
	if (r->tick != NULL) {
		event_free(r->tick);
	}
#ifdef HAVE_LIBNATS
	if (r->nc != NULL) {
		/* closed first: libnats before 3.10 may deliver a message to a subscription
		 * destroyed meanwhile (a freed lock); a closed connection delivers nothing */
		natsConnection_Close(r->nc);
	}
	natsSubscription_Destroy(r->sub);
	natsSubscription_Destroy(r->events);
	jsCtx_Destroy(r->js);
	if (r->nc != NULL) {
		natsConnection_Destroy(r->nc);
	}
#endif
	for (size_t i = 0; i < r->n; i++) {
		json_decref(r->v[i].hb);
		json_decref(r->v[i].granted);
		json_decref(r->v[i].serving);
	}
	free(r->v);
	for (size_t i = 0; r->steps != NULL && i < r->nsteps; i++) {
		json_decref(r->steps[i].selector);
	}
	free(r->steps);
	free(r);
}
