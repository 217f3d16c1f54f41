/* core/web/pages.c - the WebUI's dashboard and tenants list; a tenant's tabs are in
 * core/web/tenant-overview.c, its node groups' actions in core/web/nodegroup-pages.c, its runs
 * in core/web/run-pages.c. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"

#define RECENT 10 /* rows of the dashboard's recent lists */

/* The routes of the dashboard and the tenants (registered by rz_ui_routes with the UI as
 * ctx). */
static void get_dashboard(rz_req_t *req, void *ctx);
static void get_tenants(rz_req_t *req, void *ctx);
static void post_tenants(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/", get_dashboard),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants", get_tenants),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants", post_tenants),
};

/* ------------------------------------------------------------------ view helpers */

/* [{name, count}] from the API's summary of what (GET /api/v1/summary: {what: {total, by}}),
 * an object without a value counted as none; its total into *total. */
static json_t *summary_rows(const json_t *summary, const char *what, const char *none,
                            json_int_t *total)
{
	const json_t *counts = json_object_get(summary, what);
	json_t *out = json_array(), *v;
	const char *k;

	*total = json_integer_value(json_object_get(counts, "total"));
	json_object_foreach((json_t *)json_object_get(counts, "by"), k, v)
	{
		json_array_append_new(out,
		                      json_pack("{s:s, s:O}", "name",
		                                strcmp(k, "Unknown") == 0 ? none : k, "count", v));
	}
	return out;
}

static json_t *run_row(const json_t *r)
{
	return rz__run_row(r);
}

static json_t *rows(json_t *items, json_t *(*row)(const json_t *))
{
	return rz__rows(items, row);
}

/* ------------------------------------------------------------------ dashboard */

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

	snprintf(more, sizeof(more), "%sMore", key);
	json_object_set_new(v, key, rows(runs, run_row));
	if (total > shown) {
		json_object_set_new(v, more,
		                    json_pack("{s:I, s:I}", "shown", shown, "total", total));
	}
}

static void dashboard_ready(rz__page_t *pg)
{
	static const char *const going[] = { "Queued", "Running", "AwaitingApproval", NULL };
	static const char *const failed[] = { "Failed", NULL };
	json_t *v = pg->view;
	const json_t *summary = rz__page_got(pg, 0);
	const json_t *recent = json_object_get(summary, "recent");
	json_int_t ntenants, nmachines;
	json_t *by_phase = summary_rows(summary, "tenants", "Pending", &ntenants);
	json_t *by_stage = summary_rows(summary, "machines", "Unknown", &nmachines);
	json_t *warnings = json_array(), *audit = json_array(), *it;
	size_t i;

	json_array_foreach(json_object_get(recent, "warnings"), i, it)
	{
		json_array_append_new(warnings, json_pack("{s:s, s:s, s:s, s:s, s:s}", "tenant",
		                                          rz__str(it, "metadata.tenant"), "reason",
		                                          rz__str(it, "reason"), "message",
		                                          rz__str(it, "message"), "object",
		                                          rz__str(it, "involvedObject.name"),
		                                          "time", rz__str(it, "lastTimestamp")));
	}
	json_array_foreach(rz__items(rz__page_got(pg, 4)), i, it)
	{
		json_array_append_new(
		    audit, json_pack("{s:s, s:s, s:s, s:s, s:I}", "time", rz__str(it, "time"),
		                     "user", rz__str(it, "user"), "verb", rz__str(it, "verb"),
		                     "path", rz__str(it, "path"), "code",
		                     json_integer_value(json_object_get(it, "code"))));
	}
	json_object_set_new(v, "title", json_string("Dashboard"));
	json_object_set_new(v, "navDashboard", json_true());
	json_object_set_new(v, "tenantCount", json_integer(ntenants));
	json_object_set_new(v, "tenantsByPhase", by_phase);
	json_object_set_new(v, "machineCount", json_integer(nmachines));
	json_object_set_new(v, "machinesByStage", by_stage);
	run_list(v, "runsRunning", json_object_get(recent, "activeRuns"), runs_in(summary, going));
	run_list(v, "runsFailed", json_object_get(recent, "failedRuns"), runs_in(summary, failed));
	json_object_set_new(v, "warnings", warnings);
	if (rz__may_all(pg, RZ_ROLE_ADMIN)) {
		json_object_set_new(v, "audit", audit);
		json_object_set_new(v, "showAudit", json_true());
	} else {
		json_decref(audit);
	}
	rz__page_read_error(pg, 0, "the counts of tenants, machines and runs");
	rz__page_render(pg, "pages/dashboard", 200);
}

static void get_dashboard(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg)) {
		return;
	}
	pg->ready = dashboard_ready;
	rz__page_hold(pg);
	/* counts and the newest few, not the objects: a fleet's lists of tenants, runs and
	 * Events would cost the page tens of ms to parse, more as they grow */
	rz__page_fetch(pg, 0, "/api/v1/summary?recent=%d", RECENT);
	if (rz__may_all(pg, RZ_ROLE_ADMIN)) {
		rz__page_fetch(pg, 4, "/api/v1/audit?limit=%d", RECENT);
	}
	rz__page_release(pg);
}

/* ------------------------------------------------------------------ tenants */

static void tenants_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *providers = json_array(), *it;
	json_t *items = rz__items(rz__page_got(pg, 0));
	size_t i;

	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, it)
	{
		if (json_is_true(json_object_get(json_object_get(it, "status"), "loaded"))) {
			const char *name = rz__str(it, "metadata.name");
			const char *want = pg->form ? rz__form(pg, "clusterProvider") : "";
			json_array_append_new(providers,
			                      json_pack("{s:s, s:b}", "name", name, "selected",
			                                strcmp(name, want) == 0));
		}
	}
	json_object_set_new(v, "title", json_string("Tenants"));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "rows", rows(items, rz__tenant_row));
	json_object_set_new(v, "empty", json_boolean(json_array_size(items) == 0));
	json_object_set_new(v, "providers", providers);
	if (json_object_get(v, "form") == NULL) {
		json_object_set_new(v, "form", json_object());
	}
	json_object_set_new(json_object_get(v, "form"), "values", json_incref(pg->form));
	rz__page_read_error(pg, 0, "the tenants");
	rz__page_render(pg, "pages/tenants", pg->code ? pg->code : 200);
}

static void tenants_page(rz__page_t *pg)
{
	pg->ready = tenants_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants");
	rz__page_fetch(pg, 1, "/api/v1/providers");
	rz__page_release(pg);
}

static void get_tenants(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg)) {
		tenants_page(pg);
	}
}

static void tenant_created(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		tenants_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s", rz__str(body, "metadata.name"));
	rz__page_redirect(pg, path, "created");
}

static void post_tenants(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	json_t *spec;

	if (pg == NULL) {
		return;
	}
	spec = json_pack("{s:s}", "clusterProvider", rz__form(pg, "clusterProvider"));
	if (rz__form(pg, "kubernetesVersion")[0] != '\0') {
		json_object_set_new(spec, "kubernetesVersion",
		                    json_string(rz__form(pg, "kubernetesVersion")));
	}
	if (rz__form(pg, "talosVersion")[0] != '\0') {
		json_object_set_new(spec, "talosVersion",
		                    json_string(rz__form(pg, "talosVersion")));
	}
	rz__page_act(pg, "POST", "/api/v1/tenants", "application/json",
	             json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "rezuscloud.io/v1", "kind",
	                       "Tenant", "metadata", "name", rz__form(pg, "name"), "spec", spec),
	             tenant_created);
}

/* ------------------------------------------------------------------ routes */

int rz__pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	int rc = rz_http_add_table(http, RZ_ROUTES(routes), ui, err);

	rc = rc == 0 ? rz__tenant_overview_routes(ui, http, err) : rc;
	rc = rc == 0 ? rz__nodegroup_pages_routes(ui, http, err) : rc;
	return rc == 0 ? rz__run_pages_routes(ui, http, err) : rc;
}
