/* core/web/rows.c - the view models of a tenant's objects as the WebUI's tables, live regions
 * and pages show them (a tenant, a node group, a machine, a run, an Event), and the orders
 * they are listed in. One place, so that a page and its live region render alike. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "core/web/page.h"

int rz__by_created_desc(const void *a, const void *b)
{
	const char *x = rz__str(*(json_t *const *)a, "metadata.creationTimestamp");
	const char *y = rz__str(*(json_t *const *)b, "metadata.creationTimestamp");
	int c = strcmp(y, x);

	return c != 0 ? c
	              : strcmp(rz__str(*(json_t *const *)b, "metadata.name"),
	                       rz__str(*(json_t *const *)a, "metadata.name"));
}

/* Events by when they last happened (a repeated Event keeps its creation time), latest
 * first. */
int rz__by_last_desc(const void *a, const void *b)
{
	const char *x = rz__str(*(json_t *const *)a, "lastTimestamp");
	const char *y = rz__str(*(json_t *const *)b, "lastTimestamp");
	int c = strcmp(y, x);

	return c != 0 ? c : rz__by_created_desc(a, b);
}

/* Rows (view models, not objects) by their "created" key, newest first: the live runs. */
int rz__row_by_created_desc(const void *a, const void *b)
{
	int c = strcmp(rz__str(*(json_t *const *)b, "created"),
	               rz__str(*(json_t *const *)a, "created"));

	return c != 0 ? c
	              : strcmp(rz__str(*(json_t *const *)b, "name"),
	                       rz__str(*(json_t *const *)a, "name"));
}

json_t *rz__sorted_by(json_t *items, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(items);
	json_t **v = calloc(n + 1, sizeof(*v));
	json_t *out = json_array();

	for (size_t i = 0; v != NULL && i < n; i++) {
		v[i] = json_array_get(items, i);
	}
	if (v != NULL) {
		qsort(v, n, sizeof(*v), cmp);
		for (size_t i = 0; i < n; i++) {
			json_array_append(out, v[i]);
		}
	}
	free(v);
	return out;
}

json_t *rz__rows(json_t *items, json_t *(*row)(const json_t *))
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		json_array_append_new(out, row(it));
	}
	return out;
}

static bool run_active(const char *phase)
{
	return phase[0] == '\0' || strcmp(phase, "Queued") == 0 || strcmp(phase, "Running") == 0 ||
	       strcmp(phase, "AwaitingApproval") == 0;
}

json_t *rz__tenant_row(const json_t *t)
{
	const json_t *st = json_object_get(t, "status");
	const json_t *m = json_object_get(st, "machines");
	const char *phase = rz__str(t, "status.phase")[0] ? rz__str(t, "status.phase") : "Pending";
	/* the machines wanted (the node groups' counts), as a node group's row says it, not
	 * those that exist yet; those that exist beyond them are said apart */
	json_int_t have = json_integer_value(json_object_get(m, "total"));
	json_int_t total = json_is_integer(json_object_get(m, "desired"))
	                       ? json_integer_value(json_object_get(m, "desired"))
	                       : have;
	const char *last = rz__str(t, "status.lastRun.phase");
	const json_t *c;
	size_t i;
	json_t *row =
	    json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s}", "name", rz__str(t, "metadata.name"),
	              "phase", phase, "provider", rz__str(t, "spec.clusterProvider"), "ready",
	              json_integer_value(json_object_get(m, "ready")), "total", total, "kubernetes",
	              rz__str(t, "spec.kubernetesVersion"), "machinesWord",
	              total == 1 ? "machine" : "machines");

	json_object_set_new(row, "phaseTone", json_string(rz__tone(phase)));
	json_object_set_new(row, "phase", rz__words(phase)); /* as people read it */
	json_object_set_new(row, "exist", json_integer(have));
	json_object_set_new(row, "extra", json_boolean(have > total));
	/* a run waiting for approval shows in the Reconciled condition, not in lastRun (the
	 * last one that ended) */
	json_array_foreach(json_object_get(st, "conditions"), i, c)
	{
		if (strcmp(rz__str(c, "type"), "Reconciled") == 0 &&
		    strcmp(rz__str(c, "reason"), "AwaitingApproval") == 0) {
			json_object_set_new(row, "awaiting",
			                    json_pack("{s:s}", "message", rz__str(c, "message")));
		}
	}
	if (rz__str(t, "status.lastRun.id")[0] != '\0') {
		json_object_set_new(row, "lastRun",
		                    json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "id",
		                              rz__str(t, "status.lastRun.id"), "operation",
		                              rz__str(t, "status.lastRun.operation"), "phase", "",
		                              "tone", rz__tone(last[0] ? last : "Queued"),
		                              "awaiting", strcmp(last, "AwaitingApproval") == 0,
		                              "active", run_active(last)));
		json_object_set_new(json_object_get(row, "lastRun"), "phase",
		                    rz__words(last[0] ? last : "Queued"));
	}
	return row;
}

json_t *rz__run_row(const json_t *r)
{
	const json_t *ch = json_object_get(json_object_get(r, "status"), "changes");
	const char *phase = rz__str(r, "status.phase");
	const char *runner = rz__str(r, "status.runner");
	json_t *row;

	/* runner "-": no remote runner ran it (the daemon's own pool), as rezusctl shows it */
	row = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:b, s:b}", "name",
	    rz__str(r, "metadata.name"), "tenantName", rz__str(r, "metadata.tenant"), "runner",
	    runner[0] ? runner : "-", "operation", rz__str(r, "spec.operation"), "trigger",
	    rz__str(r, "spec.trigger"), "phase", phase[0] ? phase : "Queued", "created",
	    rz__str(r, "metadata.creationTimestamp"), "message", rz__str(r, "status.message"),
	    "add", json_integer_value(json_object_get(ch, "add")), "change",
	    json_integer_value(json_object_get(ch, "change")), "destroy",
	    json_integer_value(json_object_get(ch, "destroy")), "awaiting",
	    strcmp(phase, "AwaitingApproval") == 0, "active", run_active(phase));
	json_object_set_new(row, "phaseTone", json_string(rz__tone(phase[0] ? phase : "Queued")));
	json_object_set_new(row, "phase", rz__words(phase[0] ? phase : "Queued"));
	json_object_set_new(row, "createdWhen", rz__when(rz__str(r, "metadata.creationTimestamp")));
	json_object_set_new(row, "failed", json_boolean(strcmp(phase, "Failed") == 0));
	return row;
}

json_t *rz__machine_row(const json_t *m)
{
	const char *stage = rz__str(m, "status.stage");
	bool ready = json_is_true(json_object_get(json_object_get(m, "status"), "ready"));
	json_t *row;

	row =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:b}", "name", rz__str(m, "metadata.name"),
	              "nodeGroup", rz__str(m, "spec.nodeGroup"), "role", rz__str(m, "spec.role"),
	              "stage", stage[0] ? stage : "Unknown", "address", rz__str(m, "spec.address"),
	              "ready", ready, "running", strcmp(stage, "Running") == 0);
	json_object_set_new(row, "stageTone", json_string(rz__tone(stage[0] ? stage : "Unknown")));
	json_object_set_new(row, "stage", rz__words(stage[0] ? stage : "Unknown"));
	json_object_set_new(row, "readyTone", json_string(rz__tone(ready ? "True" : "False")));
	return row;
}

json_t *rz__nodegroup_row(const json_t *g)
{
	const json_t *st = json_object_get(g, "status");
	json_int_t count = json_integer_value(json_object_get(json_object_get(g, "spec"), "count"));
	json_int_t ready = json_integer_value(json_object_get(st, "ready"));
	json_int_t total = json_integer_value(json_object_get(st, "total"));
	/* all there and ready: ok; none wanted: neutral; on its way otherwise */
	const char *tone = count == 0 && total == 0           ? "neutral"
	                   : ready == count && total == count ? "ok"
	                                                      : "busy";

	return json_pack("{s:s, s:s, s:I, s:s, s:I, s:I, s:s, s:b}", "name",
	                 rz__str(g, "metadata.name"), "role", rz__str(g, "spec.role"), "count",
	                 count, "providerClass", rz__str(g, "spec.providerClass"), "ready", ready,
	                 "total", total, "readyTone", tone, "extra", total > count);
}

void rz__event_words(const json_t *e, json_t *row)
{
	const char *reason = rz__str(e, "reason"), *m = rz__str(e, "message"), *last;
	char words[128], phase[160];

	rz__words_into(reason, words, sizeof(words));
	last = strrchr(words, ' ') ? strrchr(words, ' ') + 1 : words;
	/* "Ready: phase Ready (was Provisioning): …" says its reason twice */
	snprintf(phase, sizeof(phase), "phase %s ", reason);
	if (strncmp(m, phase, strlen(phase)) == 0) {
		m += strlen(phase);
	}
	/* "Run started: started", "Run succeeded: run x (apply): succeeded" */
	if (strcasecmp(m, last) == 0 || strcasecmp(m, words) == 0) {
		m = "";
	}
	json_object_set_new(row, "reason", json_string(words));
	{
		size_t n = strlen(m), l = strlen(last);
		if (l > 0 && n > l + 2 && strcasecmp(m + n - l, last) == 0 && m[n - l - 2] == ':' &&
		    m[n - l - 1] == ' ') {
			json_object_set_new(row, "message", json_stringn(m, n - l - 2));
		} else {
			json_object_set_new(row, "message", json_string(m));
		}
	}
}

json_t *rz__event_row(const json_t *e)
{
	const char *type = rz__str(e, "type");
	json_t *row = json_pack(
	    "{s:s, s:s, s:s, s:b}", "type", type, "object", rz__str(e, "involvedObject.name"),
	    "kind", rz__str(e, "involvedObject.kind"), "warning", strcmp(type, "Warning") == 0);

	rz__event_words(e, row);

	json_object_set_new(row, "when",
	                    rz__when(rz__str(e, "lastTimestamp")[0]
	                                 ? rz__str(e, "lastTimestamp")
	                                 : rz__str(e, "metadata.creationTimestamp")));
	json_object_set_new(row, "typeTone",
	                    json_string(strcmp(type, "Warning") == 0 ? "bad" : "neutral"));
	return row;
}

/* A condition as people read it: "Machines ready", "Control plane: not ready", "Not
 * reconciled", "Drifted"; its reason in words after it, unless it says the same. */
static void condition_words(const char *type, const char *status, char *text, size_t size)
{
	char words[96];
	size_t n;

	rz__words_into(type, words, sizeof(words));
	n = strlen(words);
	if (strcmp(status, "True") == 0) {
		snprintf(text, size, "%s", words);
	} else if (strcmp(status, "False") != 0) {
		snprintf(text, size, "%s: unknown", words);
	} else if (strcmp(words, "Ready") == 0) {
		snprintf(text, size, "Not ready");
	} else if (n > 6 && strcmp(words + n - 6, " ready") == 0) {
		snprintf(text, size, "%.*s: not ready", (int)(n - 6), words);
	} else if (strcmp(type, "Drifted") == 0) {
		snprintf(text, size, "No drift");
	} else {
		snprintf(text, size, "Not %c%s",
		         words[0] >= 'A' && words[0] <= 'Z' ? (char)(words[0] - 'A' + 'a')
		                                            : words[0],
		         words[0] ? words + 1 : "");
	}
}

json_t *rz__condition_row(const json_t *c)
{
	const char *type = rz__str(c, "type");
	const char *status = rz__str(c, "status");
	/* Drifted True is the bad news; for the others True is the good one */
	const char *tone = strcmp(type, "Drifted") == 0
	                       ? (strcmp(status, "True") == 0 ? "wait" : "ok")
	                       : rz__tone(status);
	json_t *row =
	    json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", status, "reason",
	              rz__str(c, "reason"), "message", rz__str(c, "message"), "tone", tone);

	char text[128], why[128];

	condition_words(type, status, text, sizeof(text));
	rz__words_into(rz__str(c, "reason"), why, sizeof(why));
	if (why[0] >= 'A' && why[0] <= 'Z' && !(why[1] >= 'A' && why[1] <= 'Z')) {
		why[0] = (char)(why[0] - 'A' + 'a'); /* "— no control plane", after the badge */
	}
	json_object_set_new(row, "text", json_string(text));
	/* a reason that repeats the badge ("Ready True Ready", "AllReady") says nothing more */
	json_object_set_new(row, "why",
	                    json_string(strcasecmp(why, text) == 0 ||
	                                        strcasecmp(rz__str(c, "reason"), type) == 0 ||
	                                        strcmp(rz__str(c, "reason"), "AllReady") == 0
	                                    ? ""
	                                    : why));
	json_object_set_new(row, "since",
	                    rz__when(rz__str(c, "lastTransitionTime")[0]
	                                 ? rz__str(c, "lastTransitionTime")
	                                 : NULL));
	return row;
}

json_t *rz__live_part(json_t *rows, void (*shape)(json_t *view))
{
	json_t *v = json_pack("{s:o}", "rows", rows);

	if (v != NULL && shape != NULL) {
		shape(v);
	}
	return v;
}

static int group_order(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	bool xc = strcmp(rz__str(x, "role"), "controlplane") == 0;
	bool yc = strcmp(rz__str(y, "role"), "controlplane") == 0;

	return xc != yc ? (xc ? -1 : 1) : strcmp(rz__str(x, "name"), rz__str(y, "name"));
}

void rz__machines_shape(json_t *view)
{
	json_t *rows = json_object_get(view, "rows"), *by = json_object(), *groups, *m, *g;
	json_int_t ready = 0, total = (json_int_t)json_array_size(rows);
	const char *k;
	size_t i;

	json_array_foreach(rows, i, m)
	{
		const char *ng = rz__str(m, "nodeGroup");
		ready += json_is_true(json_object_get(m, "ready"));
		g = json_object_get(by, ng);
		if (g == NULL) {
			g = json_pack("{s:s, s:s, s:[], s:I, s:I}", "name", ng, "role",
			              rz__str(m, "role"), "machines", "ready", (json_int_t)0,
			              "total", (json_int_t)0);
			json_object_set_new(by, ng, g);
		}
		json_array_append(json_object_get(g, "machines"), m);
		json_object_set_new(
		    g, "total",
		    json_integer((json_int_t)json_array_size(json_object_get(g, "machines"))));
		json_object_set_new(g, "ready",
		                    json_integer(json_integer_value(json_object_get(g, "ready")) +
		                                 json_is_true(json_object_get(m, "ready"))));
	}
	groups = json_array();
	json_object_foreach(by, k, g)
	{
		json_array_append(groups, g);
	}
	json_decref(by);
	{
		json_t *sorted = rz__sorted_by(groups, group_order);
		json_decref(groups);
		groups = sorted;
	}
	json_object_set_new(view, "groups", groups);
	json_object_set_new(view, "count",
	                    json_pack("{s:I, s:I, s:s, s:s}", "ready", ready, "total", total,
	                              "word", total == 1 ? "machine" : "machines", "tone",
	                              total == 0       ? "neutral"
	                              : ready == total ? "ok"
	                                               : "busy"));
}

json_t *rz__machine_detail_row(const json_t *m)
{
	json_t *row = rz__machine_row(m), *addrs = json_array(), *a;
	const json_t *st = json_object_get(m, "status");
	size_t i;

	json_array_foreach(json_object_get(json_object_get(m, "spec"), "addresses"), i, a)
	{
		if (json_is_string(a)) {
			json_array_append(addrs, a);
		}
	}
	json_object_update_new(
	    row, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:b, s:b}", "talos",
	                   rz__str(m, "status.talosVersion"), "kubernetesVersion",
	                   rz__str(m, "status.kubernetesVersion"), "lastError",
	                   rz__str(m, "status.lastError"), "hostname", rz__str(m, "spec.hostname"),
	                   "providerId", rz__str(m, "spec.providerId"), "providerType",
	                   rz__str(m, "spec.providerType"), "shape", rz__str(m, "spec.shape"),
	                   "tfAddress", rz__str(m, "spec.tfAddress"), "addresses", addrs,
	                   "nodeReady", json_is_true(json_object_get(st, "nodeReady")), "nodeKnown",
	                   json_object_get(st, "nodeReady") != NULL));
	json_object_set_new(
	    row, "lastSeen",
	    rz__when(rz__str(m, "status.lastSeen")[0] ? rz__str(m, "status.lastSeen") : NULL));
	json_object_set_new(row, "createdWhen", rz__when(rz__str(m, "metadata.creationTimestamp")));
	json_object_set_new(row, "conditions",
	                    rz__rows(json_object_get(st, "conditions"), rz__condition_row));
	json_object_set_new(row, "hasConditions",
	                    json_boolean(json_array_size(json_object_get(st, "conditions")) > 0));
	json_object_set_new(row, "hasAddresses",
	                    json_boolean(json_array_size(json_object_get(row, "addresses")) > 0));
	return row;
}

/* A plan's reason for an action (tofu's action_reason) as people read it. */
static json_t *plan_reason(const char *reason)
{
	static const struct {
		const char *tf, *words;
	} reasons[] = {
		{ "delete_because_no_resource_config", "no longer in the configuration" },
		{ "delete_because_no_module", "its module is no longer in the configuration" },
		{ "delete_because_wrong_repetition", "its count or for_each changed" },
		{ "delete_because_count_index", "beyond the count now" },
		{ "delete_because_each_key", "its for_each key is gone" },
		{ "delete_because_no_move_target", "the target it moved to is gone" },
		{ "replace_because_tainted", "it is tainted" },
		{ "replace_because_cannot_update", "it cannot be changed in place" },
		{ "replace_by_request", "a replacement was asked for" },
		{ "replace_by_triggers", "a replace trigger changed" },
		{ "read_because_config_unknown", "read once its configuration is known" },
		{ "read_because_dependency_pending", "read once what it depends on is done" },
		{ "read_because_check_nested", "read for a check" },
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (strcmp(reason, reasons[i].tf) == 0) {
			return json_string(reasons[i].words);
		}
	}
	snprintf(buf, sizeof(buf), "%s", reason); /* another one: its words, at least */
	for (char *c = buf; *c != '\0'; c++) {
		*c = *c == '_' ? ' ' : *c;
	}
	return json_string(buf);
}

/* What a run's plan changes: each resource with its action, destroying ones marked. */
static json_t *plan_resources(const json_t *run)
{
	json_t *out = json_array(), *r;
	const json_t *plan = json_object_get(json_object_get(run, "status"), "plan");
	size_t i;

	json_array_foreach(json_object_get(plan, "resources"), i, r)
	{
		const char *action = rz__str(r, "action");
		json_array_append_new(
		    out,
		    json_pack("{s:s, s:s, s:o, s:s, s:b}", "address", rz__str(r, "address"),
		              "action", action, "reason", plan_reason(rz__str(r, "reason")),
		              "machine", rz__str(r, "machine"), "destroys",
		              strcmp(action, "delete") == 0 || strcmp(action, "replace") == 0));
	}
	return out;
}

json_t *rz__run_detail_row(const json_t *r)
{
	json_t *row = rz__run_row(r), *res = plan_resources(r);
	const json_t *plan = json_object_get(json_object_get(r, "status"), "plan");

	json_object_set_new(row, "noResources", json_boolean(json_array_size(res) == 0));
	json_object_set_new(row, "resources", res);
	json_object_set_new(row, "more",
	                    json_integer(json_integer_value(json_object_get(plan, "more"))));
	json_object_set_new(
	    row, "started",
	    rz__when(rz__str(r, "status.startedAt")[0] ? rz__str(r, "status.startedAt") : NULL));
	json_object_set_new(
	    row, "finished",
	    rz__when(rz__str(r, "status.finishedAt")[0] ? rz__str(r, "status.finishedAt") : NULL));
	json_object_set_new(row, "finishedAt", json_string(rz__str(r, "status.finishedAt")));
	return row;
}
