/* core/web/run-pages.c - a tenant's runs: a run's page (its phase, buttons and plan live,
 * parts/run-head; its log live), approving or canceling it, and starting a plan or an apply
 * run from the runs tab. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/web/page.h"

static void get_run(rz_req_t *req, void *ctx);
static void post_run_action(rz_req_t *req, void *ctx);
static void post_runs(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/runs/{name}", get_run),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/runs/{name}/approve", post_run_action),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/runs/{name}/cancel", post_run_action),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/runs", post_runs),
};

static void run_ready(rz__page_t *pg)
{
	json_t *run = rz__page_got(pg, 1), *v = pg->view;
	const char *tenant = rz_req_param(pg->req, "tenant");
	char title[200];

	if (rz__page_got(pg, 0) == NULL) {
		rz__page_tenant_error(pg, rz__page_code(pg, 0));
		return;
	}
	if (run == NULL) {
		rz__page_error(pg, 404, "There is no such run.");
		return;
	}
	snprintf(title, sizeof(title), "Run %s of %s", rz_req_param(pg->req, "name"), tenant);
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant", rz__tenant_row(rz__page_got(pg, 0)));
	json_object_set_new(v, "tabs", rz__tenant_tabs(pg, tenant, "runs"));
	json_object_set_new(v, "run", rz__run_row(run));
	json_object_set_new(v, "head",
	                    rz__live_part(json_pack("[o]", rz__run_detail_row(run)), NULL));
	rz__live_have(pg, "parts/run-head", json_object_get(v, "head"));
	rz__page_render(pg, "pages/run", pg->code ? pg->code : 200);
}

static void run_page(rz__page_t *pg)
{
	pg->ready = run_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", rz_req_param(pg->req, "tenant"));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/runs/%s", rz_req_param(pg->req, "tenant"),
	               rz_req_param(pg->req, "name"));
	rz__page_release(pg);
}

static void get_run(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg)) {
		run_page(pg);
	}
}

static void run_done(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		run_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/runs/%s", rz_req_param(pg->req, "tenant"),
	         rz_req_param(pg->req, "name"));
	rz__page_redirect(pg, path,
	                  strstr(rz_req_path(pg->req), "/approve") ? "approved" : "canceled");
}

static void post_run_action(rz_req_t *req, void *ctx)
{
	const char *what = strstr(rz_req_path(req), "/approve") ? "approve" : "cancel";
	rz__page_t *pg = rz__post_page(ctx, req); /* NULL: answered, req is gone */
	char target[240];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/runs/%s/%s",
	         rz_req_param(req, "tenant"), rz_req_param(req, "name"), what);
	rz__page_act(pg, "POST", target, "application/json",
	             strcmp(what, "approve") == 0 && rz__form(pg, "reason")[0] != '\0'
	                 ? json_pack("{s:s}", "reason", rz__form(pg, "reason"))
	                 : json_object(),
	             run_done);
}

/* ------------------------------------------------------------------ starting a run */

static void run_started(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		rz__tenant_tab_page(pg, "runs");
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/runs/%s", rz_req_param(pg->req, "tenant"),
	         rz__str(body, "metadata.name"));
	rz__page_redirect(pg, path,
	                  strcmp(rz__str(body, "spec.operation"), "plan") == 0 ? "planstarted"
	                                                                       : "applystarted");
}

/* Plan now / Apply now: a Run of the operation asked for (the API refuses any other), as
 * rezusctl plan and rezusctl reconcile start one. */
static void post_runs(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/runs", rz_req_param(req, "tenant"));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "rezuscloud.io/v1", "kind",
	                       "Run", "spec", "operation", rz__form(pg, "operation")),
	             run_started);
}

int rz__run_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
