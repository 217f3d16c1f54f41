/* core/web/dashboard-pages.c - the WebUI's dashboard: the installation at a glance, from the
 * API's summary (counts that link to what they count, the newest active and failed runs, the
 * latest warnings newest first) and, for an admin, the newest audit rows; live, its panels
 * read again when the API's watches report a change (core/web/live-view.c). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/web/page.h"

#define RECENT 10 /* rows of the dashboard's recent lists */

static void get_dashboard(rz_req_t *req, void *ctx);
static void get_live_dashboard(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/", get_dashboard),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/dashboard", get_live_dashboard),
};

static int by_last_desc(const void *a, const void *b)
{
	return strcmp(rz__str(*(json_t *const *)b, "last"), rz__str(*(json_t *const *)a, "last"));
}

/* A run of the dashboard's lists: its tenant and name, operation, phase (a badge), when it
 * was created and its message. */
static json_t *run_row(const json_t *r)
{
	const char *phase = rz__str(r, "status.phase");

	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:s}", "name", rz__str(r, "metadata.name"),
	                 "tenantName", rz__str(r, "metadata.tenant"), "operation",
	                 rz__str(r, "spec.operation"), "phase",
	                 rz__badge(phase[0] ? phase : "Queued"), "created",
	                 rz__when(rz__str(r, "metadata.creationTimestamp")), "message",
	                 rz__str(r, "status.message"));
}

/* A Warning Event of the summary: where, what, when it last happened (an Event that
 * happens again is new). */
static json_t *warning_row(const json_t *e)
{
	const char *last = rz__str(e, "lastTimestamp");

	if (last[0] == '\0') {
		last = rz__str(e, "metadata.creationTimestamp");
	}
	const char *tone = rz__tone_any(rz__str(e, "reason"));
	json_t *row = json_pack(
	    "{s:s, s:s, s:s, s:s, s:o, s:I, s:s}", "tenant", rz__str(e, "metadata.tenant"), "kind",
	    rz__str(e, "involvedObject.kind"), "object", rz__str(e, "involvedObject.name"), "last",
	    last, "when", rz__when(last), "count", json_integer_value(json_object_get(e, "count")),
	    /* a warning's colour is its meaning's, as everywhere ("Run awaiting approval" waits);
	     * one whose reason says nothing of it is bad news */
	    "tone", strcmp(tone, "neutral") == 0 || strcmp(tone, "ok") == 0 ? "bad" : tone);

	rz__event_words(e, row);
	return row;
}

/* [{name, count, tone}] from the API's summary of what (GET /api/v1/summary: {what: {total,
 * by}}), an object without a value counted as none; its total into *total. */
static json_t *summary_rows(const json_t *summary, const char *what, const char *none,
                            json_int_t *total)
{
	const json_t *counts = json_object_get(summary, what);
	json_t *out = json_array(), *v;
	const char *k;

	*total = json_integer_value(json_object_get(counts, "total"));
	json_object_foreach((json_t *)json_object_get(counts, "by"), k, v)
	{
		const char *name = strcmp(k, "Unknown") == 0 ? none : k;
		json_array_append_new(out, json_pack("{s:s, s:O, s:s}", "name", name, "count", v,
		                                     "tone", rz__tone(name)));
	}
	return out;
}

/* How many runs of the summary are in one of the phases. */
static json_int_t runs_in(const json_t *summary, const char *const *phases)
{
	const json_t *by = json_object_get(json_object_get(summary, "runs"), "by");
	json_int_t n = 0;

	for (size_t i = 0; phases[i] != NULL; i++) {
		n += json_integer_value(json_object_get(by, phases[i]));
	}
	return n;
}

/* view[key] the rows of runs, view[key + "More"] how many more there are than shown. */
static void run_list(json_t *v, const char *key, json_t *runs, json_int_t total)
{
	char more[64];
	json_int_t shown = (json_int_t)json_array_size(runs);
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach(runs, i, it)
	{
		json_array_append_new(out, run_row(it));
	}
	snprintf(more, sizeof(more), "%sMore", key);
	json_object_set_new(v, key, out);
	if (total > shown) {
		json_object_set_new(v, more,
		                    json_pack("{s:I, s:I}", "shown", shown, "total", total));
	}
}

/* The newest Warning Events, the one that last happened first. */
static json_t *warnings_view(const json_t *recent)
{
	const json_t *ws = json_object_get(recent, "warnings");
	size_t n = json_array_size(ws);
	json_t **v = calloc(n + 1, sizeof(*v)), *out = json_array();

	for (size_t i = 0; v != NULL && i < n; i++) {
		v[i] = warning_row(json_array_get(ws, i));
	}
	if (v != NULL) {
		qsort(v, n, sizeof(*v), by_last_desc);
		for (size_t i = 0; i < n; i++) {
			json_array_append_new(out, v[i]);
		}
	}
	free(v);
	return out;
}

static json_t *audit_view(json_t *list)
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach(rz__items(list), i, it)
	{
		json_int_t code = json_integer_value(json_object_get(it, "code"));
		const char *kind = rz__str(it, "kind"), *tenant = rz__str(it, "tenant");
		const char *name = rz__str(it, "name");
		char text[16], object[400];
		snprintf(text, sizeof(text), "%lld", (long long)code);
		/* "Run web1/run-1", "TFState web1", "User alice" */
		snprintf(object, sizeof(object), "%s%s%s%s%s", kind, kind[0] ? " " : "", tenant,
		         tenant[0] && name[0] ? "/" : "", name);
		/* what it was done to, as the Audit page says it (kind, tenant/name), not a path */
		json_array_append_new(out, json_pack("{s:o, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}}",
		                                     "when", rz__when(rz__str(it, "time")), "user",
		                                     rz__str(it, "user"), "verb",
		                                     rz__str(it, "verb"), "kind", kind, "tenant",
		                                     tenant, "object", object, "code", "text", text,
		                                     "tone", code >= 400 ? "bad" : "ok"));
	}
	return out;
}

/* The panels' view (parts/dashboard-panels): from the summary (slot 0) and, for an admin,
 * the newest audit rows (slot 1). */
static void panels_view(rz__page_t *pg)
{
	static const char *const going[] = { "Queued", "Running", "AwaitingApproval", NULL };
	static const char *const failed[] = { "Failed", NULL };
	static const char *const awaiting[] = { "AwaitingApproval", NULL };
	json_t *v = pg->view;
	const json_t *summary = rz__page_got(pg, 0);
	const json_t *recent = json_object_get(summary, "recent");
	json_int_t ntenants, nmachines;
	json_t *by_phase = summary_rows(summary, "tenants", "Pending", &ntenants);
	json_t *by_stage = summary_rows(summary, "machines", "Unknown", &nmachines);
	json_t *warnings = warnings_view(recent);

	json_object_set_new(v, "tenantCount", json_integer(ntenants));
	json_object_set_new(v, "tenantsByPhase", by_phase);
	json_object_set_new(v, "machineCount", json_integer(nmachines));
	json_object_set_new(v, "machinesByStage", by_stage);
	json_object_set_new(v, "activeCount", json_integer(runs_in(summary, going)));
	json_object_set_new(v, "failedCount", json_integer(runs_in(summary, failed)));
	json_object_set_new(v, "awaitingCount", json_integer(runs_in(summary, awaiting)));
	json_object_set_new(v, "warningCount", json_integer((json_int_t)json_array_size(warnings)));
	run_list(v, "runsRunning", json_object_get(recent, "activeRuns"), runs_in(summary, going));
	run_list(v, "runsFailed", json_object_get(recent, "failedRuns"), runs_in(summary, failed));
	json_object_set_new(v, "warnings", warnings);
	if (rz__may_all(pg, RZ_ROLE_ADMIN)) {
		json_object_set_new(v, "audit", audit_view(rz__page_got(pg, 1)));
		json_object_set_new(v, "showAudit", json_true());
	}
	if (summary == NULL) {
		json_object_set_new(v, "readError",
		                    json_pack("{s:i}", "code", rz__page_code(pg, 0)));
	}
}

static void dashboard_ready(rz__page_t *pg)
{
	panels_view(pg);
	json_object_set_new(pg->view, "title", json_string("Dashboard"));
	json_object_set_new(pg->view, "navDashboard", json_true());
	rz__page_read_error(pg, 0, "the counts of tenants, machines and runs");
	rz__page_render(pg, "pages/dashboard", 200);
}

static void live_ready(rz__page_t *pg)
{
	panels_view(pg);
	rz__live_view_send(pg);
}

/* The dashboard's reads: counts and the newest few, not the objects: a fleet's lists of
 * tenants, runs and Events would cost the page tens of ms to parse, more as they grow. */
static void read_dashboard(rz__page_t *pg)
{
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/summary?recent=%d", RECENT);
	if (rz__may_all(pg, RZ_ROLE_ADMIN)) {
		rz__page_fetch(pg, 1, "/api/v1/audit?limit=%d", RECENT);
	}
	rz__page_release(pg);
}

static void get_dashboard(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg)) {
		return;
	}
	pg->ready = dashboard_ready;
	read_dashboard(pg);
}

/* The panels, live: read again when a tenant, machine or run changes or a Warning Event is
 * recorded (the audit log has no watch: its rows come with those). */
static void get_live_dashboard(rz_req_t *req, void *ctx)
{
	static const rz__live_view_spec_t spec = {
		.watches = { "/api/v1/tenants", "/api/v1/machines", "/api/v1/runs",
		             "/api/v1/events?fieldSelector=type%3DWarning", NULL },
		.read = read_dashboard,
		.build = live_ready,
		.tpl = "parts/dashboard-panels",
		.event = "panels",
	};

	rz__live_view(ctx, req, &spec, NULL);
}

int rz__dashboard_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
