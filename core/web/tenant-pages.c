/* core/web/tenant-pages.c - what a tenant's tabs share (its header and tab bar), the
 * credentials tab (downloads) and the tenant's deletion; the other tabs are files of their
 * own (core/web/tabs.h), registered from here. Every read and write goes through the API's
 * own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"
#include "core/web/tabs.h"

static void get_credentials(rz_req_t *req, void *ctx);
static void get_credential(rz_req_t *req, void *ctx);
static void get_delete_tenant(rz_req_t *req, void *ctx);
static void post_delete_tenant(rz_req_t *req, void *ctx);
static void get_live_credentials(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/credentials", get_credentials),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/credentials", get_live_credentials),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/credentials/{which}", get_credential),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/delete", get_delete_tenant),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/delete", post_delete_tenant),
};

/* ------------------------------------------------------------------ helpers */

static const char *tenant_of(const rz__page_t *pg)
{
	return rz_req_param(pg->req, "tenant");
}

bool rz__tenant_head(rz__page_t *pg, const char *tab, const char *what)
{
	json_t *t = rz__page_got(pg, 0), *v = pg->view;
	char title[200];

	if (t == NULL) {
		rz__page_tenant_error(pg, rz__page_code(pg, 0));
		return false;
	}
	snprintf(title, sizeof(title), "%s of %s", what, tenant_of(pg));
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant", rz__tenant_row(t));
	json_object_set_new(v, "tabs", rz__tenant_tabs(pg, tenant_of(pg), tab));
	rz__live_have(pg, NULL, NULL); /* the header's stream starts from what the page shows */
	return true;
}

/* ------------------------------------------------------------------ credentials */

#define CREDENTIALS_PART "parts/credentials-state"

/* view.applied: the files are the last apply's outputs, none before the first */
static void credentials_state(rz__page_t *pg, const json_t *tenant)
{
	const char *applied = rz__str(tenant, "status.lastApplied");

	json_object_set_new(pg->view, "applied", applied[0] ? rz__when(applied) : json_null());
}

static void credentials_ready(rz__page_t *pg)
{
	if (!rz__tenant_head(pg, "credentials", "Credentials")) {
		return;
	}
	credentials_state(pg, rz__page_got(pg, 0));
	rz__live_view_have(pg, CREDENTIALS_PART, "liveHave");
	rz__page_render(pg, "pages/credentials", 200);
}

static void credentials_read(rz__page_t *pg)
{
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_release(pg);
}

static void credentials_build(rz__page_t *pg)
{
	const json_t *t = rz__page_got(pg, 0);

	if (t == NULL) {
		rz__live_view_keep(pg);
		return;
	}
	credentials_state(pg, t);
	rz__live_view_send(pg);
}

/* Whether the files are there, live: they come with the first apply. */
static void get_live_credentials(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);
	char path[200];
	rz__live_view_spec_t spec = {
		.read = credentials_read,
		.build = credentials_build,
		.tpl = CREDENTIALS_PART,
		.event = "rows",
	};

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return; /* answered */
	}
	snprintf(path, sizeof(path), "/api/v1/tenants?fieldSelector=metadata.name%%3D%s",
	         tenant_of(pg));
	rz__page_free(pg);
	spec.watches[0] = path; /* copied by rz__live_view */
	rz__live_view(ctx, req, &spec, NULL);
}

static void get_credentials(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	pg->ready = credentials_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_release(pg);
}

/* The API's answer as a file: never rendered into a page (or logged). */
static void credential_got(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	const char *which = rz_req_param(pg->req, "which");
	char disp[200];

	if (code != 200 || r->truncated) {
		const char *msg = rz__str(body, "message");
		rz__page_error(pg, code >= 400 ? code : 502,
		               msg[0] ? msg : "The credentials cannot be read.");
		return;
	}
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s-%s.yaml\"", tenant_of(pg), which);
	rz_req_add_header(pg->req, "Content-Disposition", disp);
	rz_req_add_header(pg->req, "Cache-Control", "no-store");
	rz_req_add_header(pg->req, "Content-Security-Policy", "default-src 'none'; sandbox");
	rz_reply(pg->req, 200, "application/yaml", r->body, r->len);
	rz__page_free(pg);
}

static void get_credential(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);
	const char *which = rz_req_param(req, "which");
	char target[200];

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	if (strcmp(which, "kubeconfig") != 0 && strcmp(which, "talosconfig") != 0) {
		rz__page_error(pg, 404, "There is no such page.");
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/%s", tenant_of(pg), which);
	rz__page_act(pg, "GET", target, NULL, NULL, credential_got);
}

/* ------------------------------------------------------------------ deleting the tenant */

static void delete_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *groups = json_array(), *g;
	size_t i, machines = json_array_size(rz__items(rz__page_got(pg, 2)));

	if (!rz__tenant_head(pg, "overview", "Delete the tenant")) {
		json_decref(groups);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, g)
	{
		json_array_append_new(
		    groups, json_pack("{s:s, s:s, s:I}", "name", rz__str(g, "metadata.name"),
		                      "role", rz__str(g, "spec.role"), "count",
		                      json_integer_value(
		                          json_object_get(json_object_get(g, "spec"), "count"))));
	}
	if (rz__page_got(pg, 1) == NULL || rz__page_got(pg, 2) == NULL) {
		json_decref(groups);
		rz__page_error(pg, 502, "What the tenant holds cannot be read: it is not deleted.");
		return;
	}
	json_object_set_new(v, "doomed",
	                    json_pack("{s:o, s:b, s:I, s:b}", "groups", groups, "noGroups",
	                              json_array_size(groups) == 0, "machines",
	                              (json_int_t)machines, "oneMachine", machines == 1));
	rz__page_render(pg, "pages/delete-tenant", pg->code ? pg->code : 200);
}

static void delete_page(rz__page_t *pg)
{
	pg->ready = delete_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/nodegroups", tenant_of(pg));
	rz__page_fetch(pg, 2, "/api/v1/tenants/%s/machines", tenant_of(pg));
	rz__page_release(pg);
}

static void get_delete_tenant(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg)) {
		delete_page(pg);
	}
}

static void tenant_deleted(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		delete_page(pg);
		return;
	}
	/* machines: how many the confirmation named (only the message depends on it) */
	rz__page_redirect(pg, "/tenants",
	                  strcmp(rz__form(pg, "machines"), "0") == 0 ? "tenantdeleted-empty"
	                                                             : "tenantdeleted");
}

static void post_delete_tenant(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_act(pg, "DELETE", target, NULL, NULL, tenant_deleted);
}

/* ------------------------------------------------------------------ routes */

int rz__tenant_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	int rc = rz_http_add_table(http, RZ_ROUTES(routes), ui, err);

	rc = rc == 0 ? rz__patch_pages_routes(ui, http, err) : rc;
	rc = rc == 0 ? rz__upgrade_pages_routes(ui, http, err) : rc;
	rc = rc == 0 ? rz__state_pages_routes(ui, http, err) : rc;
	return rc == 0 ? rz__edit_pages_routes(ui, http, err) : rc;
}
