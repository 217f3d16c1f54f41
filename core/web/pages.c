/* core/web/pages.c - the WebUI's tenants list. The dashboard is in core/web/dashboard-pages.c,
 * a tenant's tabs in core/web/tenant-overview.c, its node groups' actions in
 * core/web/nodegroup-pages.c, its runs in core/web/run-pages.c. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"

/* The routes of the tenants (registered by rz_ui_routes with the UI as ctx). */
static void get_tenants(rz_req_t *req, void *ctx);
static void post_tenants(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants", get_tenants),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants", post_tenants),
};

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
	json_object_set_new(v, "rows", rz__rows(items, rz__tenant_row));
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

/* The Create a tenant form's fields (core/web/form.c: each problem beside its field and in
 * the summary above the form). */
static const rz__field_t create_fields[] = {
	{ "metadata.name", "metadata_name", "Name", "t-name" },
	{ "spec.clusterProvider", "spec_clusterProvider", "Cluster provider", "t-provider" },
	{ "spec.kubernetesVersion", "spec_kubernetesVersion", "Kubernetes version", "t-k8s" },
};

static void tenant_created(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__form_failed(pg, code, body, create_fields,
	                    sizeof(create_fields) / sizeof(create_fields[0]))) {
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
