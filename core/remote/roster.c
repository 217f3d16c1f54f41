/* core/remote/roster.c - the Runners the daemon knows (core/remote/roster.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/model/kinds.h"
#include "core/remote/heartbeat.h"
#include "core/remote/roster.h"

static const char *const phase_names[] = { "Ready", "Stopping", "Lost", "Offline" };

/* The labels of its heartbeat that x's spec.labels does not grant (caller owns). */
static json_t *refused(const rz_roster_runner_t *x)
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

static json_t *runner_object(const rz_roster_runner_t *x)
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
static void set_serving(rz_roster_runner_t *x)
{
	json_t *o = json_pack("{s:{s:O*}, s:{s:O*}}", "spec", "labels", x->granted, "status",
	                      "labels", json_object_get(x->hb, "labels"));

	json_decref(x->serving);
	x->serving = o != NULL ? rz_kind_runner_serves(o) : json_object();
	json_decref(o);
}

/* Write the grant taken on trust (x->pin) into its Runner's spec.labels, keeping the rest
 * of its spec and metadata. */
static void pin(rz_roster_t *ro, rz_roster_runner_t *x)
{
	const rz_kind_t *k = rz_kind_by_name("Runner");
	json_t *obj = NULL, *out = NULL, *spec;
	rz_err_t err = { 0 };
	bool gone = false;

	if (rz_store_get(ro->store, k, NULL, x->name, &obj, &err) != 0) {
		return; /* created with it, or deleted meanwhile: the next heartbeat sees */
	}
	spec = json_object_get(obj, "spec");
	if (!json_is_object(spec)) {
		json_object_set_new(obj, "spec", spec = json_object());
	}
	json_object_set(spec, "labels", x->granted);
	if (rz_store_update(ro->store, k, NULL, x->name, obj, 0, RZ_UPDATE_SPEC, NULL, &out, &gone,
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
static void write_runner(rz_roster_t *ro, rz_roster_runner_t *x, int64_t now)
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
		rc = rz_store_create(ro->store, k, o, NULL, &out, &err);
		json_decref(out);
		out = NULL;
		x->in_store = rc == 0 || rc == -EEXIST;
	}
	if (x->in_store) {
		rc = rz_store_update(ro->store, k, NULL, x->name, o, 0, RZ_UPDATE_STATUS, NULL,
		                     &out, &gone, &err);
		json_decref(out);
	}
	if (rc == RZ_ENOTFOUND) {
		x->in_store = false; /* deleted meanwhile: created again next time */
	} else if (rc != 0) {
		rz_log_warn("remote", "Runner %s: cannot write its status: %s", x->name, err.msg);
	} else if (x->pin) {
		pin(ro, x);
	}
	x->written_ms = now;
	json_decref(o);
}

/* Forget x in the table (its Runner stays in the store). */

/* Forget x in the table (its Runner stays in the store). */
static void forget(rz_roster_t *ro, rz_roster_runner_t *x)
{
	json_decref(x->hb);
	json_decref(x->granted);
	json_decref(x->serving);
	*x = ro->v[--ro->n];
}

rz_roster_runner_t *rz_roster_find(rz_roster_t *ro, const char *name)
{
	for (size_t i = 0; i < ro->n; i++) {
		if (strcmp(ro->v[i].name, name) == 0) {
			return &ro->v[i];
		}
	}
	return NULL;
}

/* Whether what a Runner shows differs between two heartbeats (lastHeartbeat aside). */
static bool differs(const json_t *a, const json_t *b)
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

/* What runner x is granted: its Runner's spec.labels, read at every heartbeat (an admin's
 * change counts from the next one). A Runner without them (a new runner, or one from a
 * version before) is granted the labels of this heartbeat (trust on first use), written to
 * its spec.labels; from then on a heartbeat saying other labels routes nothing more to it
 * (status.refusedLabels shows them). */
static void grant(rz_roster_t *ro, rz_roster_runner_t *x)
{
	json_t *obj = NULL, *labels = NULL;
	rz_err_t err = { 0 };
	char said[512];

	if (rz_store_get(ro->store, rz_kind_by_name("Runner"), NULL, x->name, &obj, &err) == 0) {
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

rz_roster_runner_t *rz_roster_heartbeat(rz_roster_t *ro, const char *subject, const char *data,
                                        size_t len, int64_t now)
{
	char why[256];
	json_t *hb = rz_heartbeat_parse(subject, data, len, why, sizeof(why)), *before;
	const char *name;
	rz_roster_runner_t *x;
	rz_runner_phase_t phase;
	bool changed;

	if (hb == NULL) {
		ro->dropped++;
		rz_log_warn("remote", "heartbeat on '%.80s' dropped: %s", subject ? subject : "",
		            why);
		return NULL;
	}
	name = json_string_value(json_object_get(hb, "name"));
	x = rz_roster_find(ro, name);
	for (size_t i = 0; x == NULL && ro->n >= RZ_ROSTER_MAX && i < ro->n; i++) {
		if (ro->v[i].phase == RZ_RUNNER_OFFLINE) {
			forget(ro,
			       &ro->v[i]); /* (its Runner stays: known again at its heartbeat) */
			break;
		}
	}
	if (x == NULL) {
		if (ro->n >= RZ_ROSTER_MAX) {
			ro->dropped++;
			rz_log_warn("remote",
			            "heartbeat of runner %s dropped: %d runners known already",
			            name, RZ_ROSTER_MAX);
			json_decref(hb);
			return NULL;
		}
		x = &ro->v[ro->n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", name);
		rz_log_info("remote", "runner %s joined", name);
	}
	ro->heartbeats++;
	phase =
	    json_is_true(json_object_get(hb, "stopping")) ? RZ_RUNNER_STOPPING : RZ_RUNNER_READY;
	changed = x->hb == NULL || differs(x->hb, hb) || x->phase != phase || !x->in_store;
	if ((x->phase == RZ_RUNNER_LOST || x->phase == RZ_RUNNER_OFFLINE) &&
	    phase == RZ_RUNNER_READY) {
		rz_log_info("remote", "runner %s is back", name);
	}
	if (phase == RZ_RUNNER_STOPPING && x->phase != RZ_RUNNER_STOPPING) {
		rz_log_info("remote", "runner %s is stopping", name);
	}
	json_decref(x->hb);
	x->hb = hb;
	x->seen_ms = now;
	x->phase = phase;
	before = x->serving != NULL ? json_incref(x->serving) : NULL;
	grant(ro, x);
	changed = changed || before == NULL || !json_equal(before, x->serving);
	json_decref(before);
	if (changed || now - x->written_ms >= ro->cfg->runners_heartbeat_timeout_ms / 3) {
		write_runner(ro, x, now);
	}
	return x;
}

bool rz_roster_serves(const rz_roster_runner_t *x, const json_t *selector)
{
	const char *key;
	json_t *v;
	bool all = x->phase == RZ_RUNNER_READY;

	json_object_foreach((json_t *)selector, key, v)
	{
		all =
		    all && json_equal(json_object_get(x->serving, key), v); /* granted, not said */
	}
	return all;
}

bool rz_roster_served(const rz_roster_t *ro, const json_t *selector)
{
	for (size_t i = 0; i < ro->n; i++) {
		if (rz_roster_serves(&ro->v[i], selector)) {
			return true;
		}
	}
	return false;
}

size_t rz_roster_capacity(const rz_roster_t *ro, const json_t *selector)
{
	size_t n = 0;

	for (size_t i = 0; i < ro->n; i++) {
		if (rz_roster_serves(&ro->v[i], selector)) {
			n +=
			    (size_t)json_integer_value(json_object_get(ro->v[i].hb, "concurrency"));
		}
	}
	return n;
}

void rz_roster_seen_all(rz_roster_t *ro, int64_t now)
{
	for (size_t i = 0; i < ro->n; i++) {
		ro->v[i].seen_ms = ro->v[i].seen_ms > now ? ro->v[i].seen_ms : now;
	}
}

void rz_roster_sweep(rz_roster_t *ro, int64_t now, void (*gone)(void *arg, const char *name),
                     void *arg)
{
	for (size_t i = 0; i < ro->n; i++) {
		rz_roster_runner_t *x = &ro->v[i];
		char name[64];
		if (now - x->seen_ms < ro->cfg->runners_heartbeat_timeout_ms ||
		    x->phase == RZ_RUNNER_LOST || x->phase == RZ_RUNNER_OFFLINE) {
			continue;
		}
		if (x->phase == RZ_RUNNER_STOPPING) {
			rz_log_info("remote", "runner %s stopped; its Runner is Offline", x->name);
			x->phase = RZ_RUNNER_OFFLINE;
		} else {
			x->phase = RZ_RUNNER_LOST;
			rz_log_warn("remote",
			            "runner %s lost: no heartbeat for %lld ms "
			            "(runners.heartbeat_timeout)",
			            x->name, (long long)(now - x->seen_ms));
		}
		write_runner(ro, x, now);
		snprintf(name, sizeof(name), "%s", x->name); /* (gone may not change the roster) */
		gone(arg, name);
	}
}

void rz_roster_count(const rz_roster_t *ro, uint64_t counts[RZ_RUNNER_OFFLINE + 1])
{
	memset(counts, 0, sizeof(uint64_t) * (RZ_RUNNER_OFFLINE + 1));
	for (size_t i = 0; i < ro->n; i++) {
		counts[ro->v[i].phase]++;
	}
}

int rz_roster_init(rz_roster_t *ro, rz_store_t *store, const rz_config_t *cfg)
{
	*ro = (rz_roster_t){ .store = store, .cfg = cfg };
	ro->v = calloc(RZ_ROSTER_MAX, sizeof(*ro->v));
	return ro->v != NULL ? 0 : -ENOMEM;
}

void rz_roster_free(rz_roster_t *ro)
{
	for (size_t i = 0; i < ro->n; i++) {
		json_decref(ro->v[i].hb);
		json_decref(ro->v[i].granted);
		json_decref(ro->v[i].serving);
	}
	free(ro->v);
	*ro = (rz_roster_t){ 0 };
}

void rz_roster_load(rz_roster_t *ro, int64_t now)
{
	json_t *items = rz_store_list_all(ro->store, "Runner", NULL), *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
		json_t *st = json_object_get(it, "status");
		rz_roster_runner_t *x;
		if (name == NULL || ro->n >= RZ_ROSTER_MAX) {
			continue;
		}
		x = &ro->v[ro->n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", name);
		x->hb = json_pack("{s:s, s:O, s:O, s:O, s:O, s:O, s:b}", "name", name, "labels",
		                  json_object_get(st, "labels"), "version",
		                  json_object_get(st, "version"), "concurrency",
		                  json_object_get(st, "concurrency"), "running",
		                  json_object_get(st, "running"), "startedAt",
		                  json_object_get(st, "startedAt"), "stopping", 0);
		if (x->hb == NULL) { /* a status without every member: a fresh start */
			ro->n--;
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
		x->phase = ph != NULL && strcmp(ph, "Lost") == 0       ? RZ_RUNNER_LOST
		           : ph != NULL && strcmp(ph, "Stopping") == 0 ? RZ_RUNNER_STOPPING
		           : ph != NULL && strcmp(ph, "Offline") == 0  ? RZ_RUNNER_OFFLINE
		                                                       : RZ_RUNNER_READY;
	}
	json_decref(items);
}
