/* core/web/upgrade-pages.c - the WebUI's upgrades tab of a tenant: the upgrades newest first,
 * a dry run from a form, an upgrade's page with its progress live, cancel. Every read and
 * write goes through the API's own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"
#include "core/web/tabs.h"

#define MAX_UPGRADES 50 /* upgrades listed, newest first */

static void get_upgrades(rz_req_t *req, void *ctx);
static void post_upgrades(rz_req_t *req, void *ctx);
static void get_upgrade(rz_req_t *req, void *ctx);
static void post_upgrade_cancel(rz_req_t *req, void *ctx);
static void get_live_upgrade(rz_req_t *req, void *ctx);
static void get_live_upgrades(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/upgrades", get_upgrades),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/upgrades", post_upgrades),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/upgrades/{name}", get_upgrade),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/upgrades/{name}/cancel", post_upgrade_cancel),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/upgrades/{name}", get_live_upgrade),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/upgrades", get_live_upgrades),
};

/* The form's fields of the API's (core/web/form.c); a precheck of the tenant (machines not
 * ready, another upgrade under way) is said above the form. */
static const rz__field_t upgrade_fields[] = {
	{ "spec.component", "component", "Component", "up-component" },
	{ "spec.targetVersion", "targetVersion", "Target version", "up-target" },
};

static const char *tenant_of(const rz__page_t *pg)
{
	return rz_req_param(pg->req, "tenant");
}

static int by_created_desc(const void *a, const void *b)
{
	const char *x = rz__str(*(json_t *const *)a, "metadata.creationTimestamp");
	const char *y = rz__str(*(json_t *const *)b, "metadata.creationTimestamp");
	int c = strcmp(y, x);

	return c != 0 ? c
	              : strcmp(rz__str(*(json_t *const *)b, "metadata.name"),
	                       rz__str(*(json_t *const *)a, "metadata.name"));
}

/* ------------------------------------------------------------------ upgrades */

static bool terminal(const char *phase)
{
	return strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0 ||
	       strcmp(phase, "Canceled") == 0 || strcmp(phase, "RolledBack") == 0;
}

/* The status message without the API's "dry run: " and "precheck failed: " (the page says
 * which it is and how it ended beside it). */
static const char *outcome(const json_t *u)
{
	const char *m = rz__str(u, "status.message");

	if (strncmp(m, "dry run: ", 9) == 0) {
		m += 9;
	}
	if (strncmp(m, "precheck failed: ", 17) == 0) {
		m += 17;
	}
	return m;
}

/* What an upgrade came to: every precheck that failed, named ("One minor at a time: …;
 * …"), when any did (the API's message names the first), else the message. */
static json_t *failed_checks(const json_t *checks, const char *message)
{
	char buf[1024];
	size_t o = 0, n = 0, i;
	const json_t *c;

	buf[0] = '\0';
	json_array_foreach(checks, i, c)
	{
		if (!json_is_true(json_object_get(c, "passed")) && o < sizeof(buf)) {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s: %s", n++ ? "; " : "",
			                      rz__str(c, "name"), rz__str(c, "message"));
		}
	}
	return json_string(n > 1 ? buf : message);
}

/* An upgrade for its page, its live region (parts/upgrade-live) and the list's rows
 * (parts/upgrade-rows). */
static json_t *upgrade_row(const json_t *u)
{
	const char *phase = rz__str(u, "status.phase");
	json_t *machines = json_array(), *checks = json_array(), *m;
	const json_t *st = json_object_get(u, "status");
	bool dry = json_is_true(json_object_get(json_object_get(u, "spec"), "dryRun"));
	json_t *row;
	size_t i;

	phase = phase[0] ? phase : "Pending";
	json_array_foreach(json_object_get(st, "machines"), i, m)
	{
		const char *mp = rz__str(m, "phase");
		/* a step that never began in an upgrade that is over will not begin: not pending */
		mp = (mp[0] == '\0' || strcmp(mp, "Pending") == 0) && terminal(phase) ? "NotStarted"
		     : mp[0]                                                          ? mp
		                                                                      : "Pending";
		json_array_append_new(
		    machines,
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:b}", "name",
		              rz__str(m, "name"), "role", rz__str(m, "role"), "address",
		              rz__str(m, "address"), "from", rz__str(m, "from"), "to",
		              rz__str(m, "to"), "phase", mp, "badge", rz__badge(mp), "error",
		              rz__str(m, "error"), "current",
		              strcmp(rz__str(u, "status.current"), rz__str(m, "name")) == 0));
	}
	json_array_foreach(json_object_get(st, "prechecks"), i, m)
	{
		bool passed = json_is_true(json_object_get(m, "passed"));
		json_array_append_new(
		    checks, json_pack("{s:o, s:b, s:{s:s, s:s}, s:s}", "name",
		                      rz__words(rz__str(m, "name")), "passed", passed, "badge",
		                      "text", passed ? "Passed" : "Failed", "tone",
		                      passed ? "ok" : "bad", "message", rz__str(m, "message")));
	}
	row = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:o, s:o, s:b, s:b, "
	    "s:b}",
	    "name", rz__str(u, "metadata.name"), "component", rz__str(u, "spec.component"),
	    "target", rz__str(u, "spec.targetVersion"), "from", rz__str(u, "status.fromVersion"),
	    "phase", phase, "message", rz__str(u, "status.message"), "created",
	    rz__str(u, "metadata.creationTimestamp"), "dryRun", dry, "active", !terminal(phase),
	    "cancelRequested", json_is_true(json_object_get(st, "cancelRequested")), "machines",
	    machines, "prechecks", checks, "noMachines", json_array_size(machines) == 0, "canStart",
	    dry && strcmp(phase, "Succeeded") == 0, "canCancel", !dry && !terminal(phase));
	/* what it came to, said as such: a dry run that found a problem is a failure */
	json_object_set_new(row, "badge", rz__badge(phase));
	json_object_set_new(row, "createdWhen", rz__when(rz__str(u, "metadata.creationTimestamp")));
	json_object_set_new(
	    row, "failed",
	    json_boolean(strcmp(phase, "Failed") == 0 || strcmp(phase, "RolledBack") == 0));
	json_object_set_new(row, "succeeded", json_boolean(strcmp(phase, "Succeeded") == 0));
	json_object_set_new(row, "outcome", failed_checks(checks, outcome(u)));
	json_object_set_new(row, "phase", rz__words(phase));
	return row;
}

/* Rows (json_t *) newest first, for the live list: by created, then name, descending. */
static int newest_first(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(rz__str(y, "created"), rz__str(x, "created"));

	return c != 0 ? c : strcmp(rz__str(y, "name"), rz__str(x, "name"));
}

static json_t *component_options(const char *want)
{
	static const char *const comps[] = { "talos", "kubernetes" };
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(comps) / sizeof(comps[0]); i++) {
		json_array_append_new(out, json_pack("{s:s, s:b}", "name", comps[i], "selected",
		                                     strcmp(comps[i], want) == 0));
	}
	return out;
}

static void upgrades_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *items = rz__items(rz__page_got(pg, 1)), *rows = json_array();
	size_t n = json_array_size(items);
	json_t **sorted = calloc(n + 1, sizeof(*sorted)), *form;

	if (!rz__tenant_head(pg, "upgrades", "Upgrades")) {
		free(sorted);
		json_decref(rows);
		return;
	}
	for (size_t i = 0; sorted != NULL && i < n; i++) {
		sorted[i] = json_array_get(items, i);
	}
	if (sorted != NULL) {
		qsort(sorted, n, sizeof(*sorted), by_created_desc);
		for (size_t i = 0; i < n && i < MAX_UPGRADES; i++) {
			json_array_append_new(rows, upgrade_row(sorted[i]));
		}
	}
	free(sorted);
	json_object_set_new(v, "rows", rows);
	rz__live_have_rows(pg, "parts/upgrade-rows");
	form = json_object_get(v, "form");
	if (form == NULL) {
		form = json_object();
		json_object_set_new(v, "form", form);
	}
	json_object_set_new(form, "components",
	                    component_options(pg->form ? rz__form(pg, "component") : "talos"));
	json_object_set_new(
	    form, "values",
	    json_pack("{s:s}", "targetVersion", pg->form ? rz__form(pg, "targetVersion") : ""));
	rz__page_read_error(pg, 1, "the upgrades");
	rz__page_render(pg, "pages/upgrades", pg->code ? pg->code : 200);
}

static void upgrades_page(rz__page_t *pg)
{
	pg->ready = upgrades_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/upgrades", tenant_of(pg));
	rz__page_release(pg);
}

static void get_upgrades(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg)) {
		upgrades_page(pg);
	}
}

static void upgrade_created(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__form_failed(pg, code, body, upgrade_fields,
	                    sizeof(upgrade_fields) / sizeof(upgrade_fields[0]))) {
		upgrades_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/upgrades/%s", tenant_of(pg),
	         rz__str(body, "metadata.name"));
	/* a dry run's page says what it found once it has: no toast of its start */
	rz__page_redirect(pg, path,
	                  json_is_true(json_object_get(json_object_get(body, "spec"), "dryRun"))
	                      ? NULL
	                      : "upgrade");
}

static void post_upgrades(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[200];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/upgrades", tenant_of(pg));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{s:s, s:s, s:b}}", "apiVersion", "rezuscloud.io/v1",
	                       "kind", "UpgradeRun", "spec", "component", rz__form(pg, "component"),
	                       "targetVersion", rz__form(pg, "targetVersion"), "dryRun",
	                       strcmp(rz__form(pg, "dryRun"), "true") == 0),
	             upgrade_created);
}

static void upgrade_ready(rz__page_t *pg)
{
	json_t *u = rz__page_got(pg, 1), *v = pg->view;

	if (!rz__tenant_head(pg, "upgrades", "Upgrade")) {
		return;
	}
	if (u == NULL) {
		rz__page_error(pg, 404, "There is no such upgrade.");
		return;
	}
	json_object_set_new(v, "upgrade", upgrade_row(u));
	json_object_set_new(v, "rows", json_pack("[O]", json_object_get(v, "upgrade")));
	rz__live_have_rows(pg, "parts/upgrade-live");
	rz__tab_toast(pg);
	rz__page_render(pg, "pages/upgrade", pg->code ? pg->code : 200);
}

static void upgrade_page(rz__page_t *pg)
{
	pg->ready = upgrade_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/upgrades/%s", tenant_of(pg),
	               rz_req_param(pg->req, "name"));
	rz__page_release(pg);
}

static void get_upgrade(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg)) {
		upgrade_page(pg);
	}
}

static void upgrade_canceled(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		upgrade_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/upgrades/%s", tenant_of(pg),
	         rz_req_param(pg->req, "name"));
	rz__page_redirect(pg, path, "canceled");
}

static void post_upgrade_cancel(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[240];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/upgrades/%s/cancel", tenant_of(pg),
	         rz_req_param(req, "name"));
	rz__page_act(pg, "POST", target, "application/json", json_object(), upgrade_canceled);
}

static void get_live_upgrade(rz_req_t *req, void *ctx)
{
	const char *t = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");
	char target[320], msg[128];

	if (!rz_format_dns1123_label(t, msg, sizeof(msg)) ||
	    !rz_format_dns1123_label(name, msg, sizeof(msg))) {
		rz_reply_error(req, 404, NULL, "no such object");
		return;
	}
	snprintf(target, sizeof(target),
	         "/api/v1/tenants/%s/upgrades?watch=true&fieldSelector=metadata.name%%3D%s", t,
	         name);
	rz__live_tenant_table(ctx, req, target, "parts/upgrade-live", upgrade_row, NULL, NULL);
}

static void get_live_upgrades(rz_req_t *req, void *ctx)
{
	const char *t = rz_req_param(req, "tenant");
	char target[200], msg[128];

	if (!rz_format_dns1123_label(t, msg, sizeof(msg))) {
		rz_reply_error(req, 404, NULL, "no such object");
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/upgrades?watch=true", t);
	rz__live_tenant_table(ctx, req, target, "parts/upgrade-rows", upgrade_row, newest_first,
	                      NULL);
}

/* ------------------------------------------------------------------ routes */

int rz__upgrade_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
