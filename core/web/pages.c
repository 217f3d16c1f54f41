/* core/web/pages.c - the WebUI's pages and forms: tenants, a tenant's tabs, runs. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"

/* The routes of the tenants, a tenant's overview, node groups and runs (registered by
 * rz_ui_routes with the UI as ctx). */
static void get_tenants(rz_req_t *req, void *ctx);
static void post_tenants(rz_req_t *req, void *ctx);
static void get_tenant(rz_req_t *req, void *ctx);
static void post_nodegroups(rz_req_t *req, void *ctx);
static void post_scale(rz_req_t *req, void *ctx);
static void get_delete_nodegroup(rz_req_t *req, void *ctx);
static void post_delete_nodegroup(rz_req_t *req, void *ctx);
static void get_run(rz_req_t *req, void *ctx);
static void post_run_action(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants", get_tenants),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants", post_tenants),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}", get_tenant),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/{tab}", get_tenant),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/nodegroups", post_nodegroups),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/nodegroups/{name}/scale", post_scale),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/nodegroups/{name}/delete", get_delete_nodegroup),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/nodegroups/{name}/delete",
	              post_delete_nodegroup),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/runs/{name}", get_run),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/runs/{name}/approve", post_run_action),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/runs/{name}/cancel", post_run_action),
};

/* ------------------------------------------------------------------ view helpers */

static int by_created_desc(const void *a, const void *b)
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
static int by_last_desc(const void *a, const void *b)
{
	const char *x = rz__str(*(json_t *const *)a, "lastTimestamp");
	const char *y = rz__str(*(json_t *const *)b, "lastTimestamp");
	int c = strcmp(y, x);

	return c != 0 ? c : by_created_desc(a, b);
}

/* A new array of items in the order of cmp (newest first). */
static json_t *sorted_by(json_t *items, int (*cmp)(const void *, const void *))
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

static json_t *tenant_row(const json_t *t)
{
	const json_t *m = json_object_get(json_object_get(t, "status"), "machines");
	const char *phase = rz__str(t, "status.phase")[0] ? rz__str(t, "status.phase") : "Pending";
	json_t *row =
	    json_pack("{s:s, s:s, s:s, s:I, s:I, s:s}", "name", rz__str(t, "metadata.name"),
	              "phase", phase, "provider", rz__str(t, "spec.clusterProvider"), "ready",
	              json_integer_value(json_object_get(m, "ready")), "total",
	              json_integer_value(json_object_get(m, "total")), "kubernetes",
	              rz__str(t, "spec.kubernetesVersion"));

	json_object_set_new(row, "phaseTone", json_string(rz__tone(phase)));
	return row;
}

static json_t *run_row(const json_t *r)
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
	    strcmp(phase, "AwaitingApproval") == 0, "active",
	    strcmp(phase, "Queued") == 0 || strcmp(phase, "Running") == 0 ||
	        strcmp(phase, "AwaitingApproval") == 0 || phase[0] == '\0');
	json_object_set_new(row, "phaseTone", json_string(rz__tone(phase[0] ? phase : "Queued")));
	json_object_set_new(row, "createdWhen", rz__when(rz__str(r, "metadata.creationTimestamp")));
	return row;
}

json_t *rz__machine_row(const json_t *m)
{
	const char *stage = rz__str(m, "status.stage");
	json_t *row;

	row =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:b}", "name", rz__str(m, "metadata.name"),
	              "nodeGroup", rz__str(m, "spec.nodeGroup"), "role", rz__str(m, "spec.role"),
	              "stage", stage[0] ? stage : "Unknown", "address", rz__str(m, "spec.address"),
	              "ready", json_is_true(json_object_get(json_object_get(m, "status"), "ready")),
	              "running", strcmp(stage, "Running") == 0);
	json_object_set_new(row, "stageTone", json_string(rz__tone(stage[0] ? stage : "Unknown")));
	json_object_set_new(
	    row, "readyTone",
	    json_string(rz__tone(
	        json_is_true(json_object_get(json_object_get(m, "status"), "ready")) ? "True"
	                                                                             : "False")));
	return row;
}

json_t *rz__tenant_row(const json_t *t)
{
	return tenant_row(t);
}

static json_t *rows(json_t *items, json_t *(*row)(const json_t *))
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		json_array_append_new(out, row(it));
	}
	return out;
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
	json_object_set_new(v, "rows", rows(items, tenant_row));
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

/* ------------------------------------------------------------------ a tenant */

enum tab { TAB_OVERVIEW, TAB_NODEGROUPS, TAB_MACHINES, TAB_RUNS, TAB_RUN, TAB_DELETE_NG };

static const struct {
	const char *name, *label, *api, *flag; /* api: the list read into slot 1 */
} tabs[] = {
	{ "overview", "Overview", "events", "tabOverview" },
	{ "nodegroups", "Node groups", "nodegroups", "tabNodegroups" },
	{ "machines", "Machines", "machines", "tabMachines" },
	{ "runs", "Runs", "runs", "tabRuns" },
};

/* The tabs of core/web/tenant-pages.c, after these, shown to the roles that may use them. */
static const struct {
	const char *name, *label;
	int role;
} more_tabs[] = {
	{ "configpatches", "Config patches", RZ_ROLE_VIEW },
	{ "upgrades", "Upgrades", RZ_ROLE_VIEW },
	{ "etcdbackups", "etcd snapshots", RZ_ROLE_VIEW },
	{ "state", "State versions", RZ_ROLE_ADMIN },
	{ "credentials", "Credentials", RZ_ROLE_EDIT },
};

json_t *rz__tenant_tabs(const rz__page_t *pg, const char *tenant, const char *current)
{
	json_t *out = json_array();
	char path[160];

	for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++) {
		snprintf(path, sizeof(path), "/tenants/%s%s%s", tenant, i ? "/" : "",
		         i ? tabs[i].name : "");
		json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "label", tabs[i].label,
		                                     "path", path, "current",
		                                     strcmp(tabs[i].name, current) == 0));
	}
	for (size_t i = 0; i < sizeof(more_tabs) / sizeof(more_tabs[0]); i++) {
		if (rz__may(pg, more_tabs[i].role)) {
			snprintf(path, sizeof(path), "/tenants/%s/%s", tenant, more_tabs[i].name);
			json_array_append_new(out,
			                      json_pack("{s:s, s:s, s:b}", "label",
			                                more_tabs[i].label, "path", path, "current",
			                                strcmp(more_tabs[i].name, current) == 0));
		}
	}
	return out;
}

static json_t *tab_nav(const rz__page_t *pg, const char *tenant, enum tab cur)
{
	return rz__tenant_tabs(pg, tenant,
	                       tabs[cur == TAB_RUN         ? TAB_RUNS
	                            : cur == TAB_DELETE_NG ? TAB_NODEGROUPS
	                                                   : cur]
	                           .name);
}

static json_t *overview(const json_t *t, json_t *events)
{
	json_t *conds = json_array(), *evs = json_array(), *c;
	size_t i;
	json_t *sorted = sorted_by(events, by_last_desc);

	json_array_foreach(json_object_get(json_object_get(t, "status"), "conditions"), i, c)
	{
		json_array_append_new(
		    conds, json_pack("{s:s, s:s, s:s, s:s, s:b}", "type", rz__str(c, "type"),
		                     "status", rz__str(c, "status"), "reason", rz__str(c, "reason"),
		                     "message", rz__str(c, "message"), "true",
		                     strcmp(rz__str(c, "status"), "True") == 0));
	}
	json_array_foreach(sorted, i, c)
	{
		if (i < 50) {
			json_array_append_new(
			    evs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "type",
			                   rz__str(c, "type"), "reason", rz__str(c, "reason"),
			                   "message", rz__str(c, "message"), "object",
			                   rz__str(c, "involvedObject.name"), "time",
			                   rz__str(c, "lastTimestamp"), "warning",
			                   strcmp(rz__str(c, "type"), "Warning") == 0));
		}
	}
	json_decref(sorted);
	return json_pack("{s:o, s:o, s:b, s:s, s:s, s:s, s:s, s:s}", "conditions", conds, "events",
	                 evs, "noEvents", json_array_size(evs) == 0, "endpoint",
	                 rz__str(t, "spec.controlPlaneEndpoint"), "talosWanted",
	                 rz__str(t, "spec.talosVersion"), "kubernetesWanted",
	                 rz__str(t, "spec.kubernetesVersion"), "talosRunning",
	                 rz__str(t, "status.talosVersion"), "kubernetesRunning",
	                 rz__str(t, "status.kubernetesVersion"));
}

static json_t *nodegroups(json_t *items)
{
	json_t *out = json_array(), *g;
	size_t i;

	json_array_foreach(items, i, g)
	{
		const json_t *st = json_object_get(g, "status");
		json_array_append_new(
		    out,
		    json_pack(
		        "{s:s, s:s, s:I, s:s, s:I, s:I}", "name", rz__str(g, "metadata.name"),
		        "role", rz__str(g, "spec.role"), "count",
		        json_integer_value(json_object_get(json_object_get(g, "spec"), "count")),
		        "providerClass", rz__str(g, "spec.providerClass"), "ready",
		        json_integer_value(json_object_get(st, "ready")), "total",
		        json_integer_value(json_object_get(st, "total"))));
	}
	return out;
}

static void tenant_tab(rz__page_t *pg, enum tab tab, json_t *t, json_t *list)
{
	json_t *v = pg->view, *items = rz__items(list), *runs;

	switch (tab) {
	case TAB_OVERVIEW:
		json_object_set_new(v, "overview", overview(t, items));
		break;
	case TAB_NODEGROUPS:
		json_object_set_new(v, "groups", nodegroups(items));
		json_object_set_new(v, "noNodegroups", json_boolean(json_array_size(items) == 0));
		if (json_object_get(v, "form") == NULL) {
			json_object_set_new(v, "form", json_object());
		}
		json_object_set_new(json_object_get(v, "form"), "values",
		                    pg->form
		                        ? json_incref(pg->form)
		                        : json_pack("{s:s, s:s}", "count", "1", "providerClass",
		                                    rz__str(t, "spec.clusterProvider")));
		break;
	case TAB_MACHINES:
		json_object_set_new(v, "rows", rows(items, rz__machine_row));
		json_object_set_new(v, "noMachines", json_boolean(json_array_size(items) == 0));
		break;
	case TAB_RUNS:
		runs = sorted_by(items, by_created_desc);
		json_object_set_new(v, "runs", rows(runs, run_row));
		json_object_set_new(v, "noRuns", json_boolean(json_array_size(runs) == 0));
		json_decref(runs);
		break;
	default:
		break;
	}
}

static void tenant_ready(rz__page_t *pg)
{
	json_t *t = rz__page_got(pg, 0), *v = pg->view;
	enum tab tab = (enum tab)json_integer_value(json_object_get(v, "tabIndex"));
	const char *name = rz_req_param(pg->req, "tenant");
	char title[160];

	if (t == NULL) {
		rz__page_tenant_error(pg, rz__page_code(pg, 0));
		return;
	}
	snprintf(title, sizeof(title), "Tenant %s", name);
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant", tenant_row(t));
	json_object_set_new(v, "tabs", tab_nav(pg, name, tab));
	json_object_set_new(v, tabs[tab].flag, json_true());
	tenant_tab(pg, tab, t, rz__page_got(pg, 1));
	rz__page_render(pg, "pages/tenant", pg->code ? pg->code : 200);
}

static void tenant_page(rz__page_t *pg, enum tab tab)
{
	const char *name = rz_req_param(pg->req, "tenant");

	json_object_set_new(pg->view, "tabIndex", json_integer(tab));
	pg->ready = tenant_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", name);
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/%s", name, tabs[tab].api);
	rz__page_release(pg);
}

static void get_tenant(rz_req_t *req, void *ctx)
{
	const char *tab = rz_req_param(req, "tab");
	rz__page_t *pg = rz__page_new(ctx, req);
	size_t i = 0;

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	for (i = 0; tab != NULL && i < sizeof(tabs) / sizeof(tabs[0]); i++) {
		if (strcmp(tabs[i].name, tab) == 0) {
			break;
		}
	}
	if (i == sizeof(tabs) / sizeof(tabs[0])) {
		rz__page_error(pg, 404, "There is no such page.");
		return;
	}
	tenant_page(pg, (enum tab)i);
}

/* ------------------------------------------------------------------ node groups */

static void nodegroup_done(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__page_failed(pg, code, body, "spec.")) {
		tenant_page(pg, TAB_NODEGROUPS);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/nodegroups", rz_req_param(pg->req, "tenant"));
	rz__page_redirect(pg, path,
	                  strcmp(rz_req_method(pg->req), "POST") == 0 &&
	                          rz_req_param(pg->req, "name") == NULL
	                      ? "created"
	                  : strstr(rz_req_path(pg->req), "/delete") ? "deleted"
	                                                            : "scaled");
}

/* A count field as a JSON integer, or the text itself (the API names what is wrong). */
static json_t *count_value(const char *s)
{
	char *end = NULL;
	long long n = strtoll(s, &end, 10);

	return s[0] != '\0' && end != NULL && *end == '\0' ? json_integer(n) : json_string(s);
}

static void post_nodegroups(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/nodegroups",
	         rz_req_param(req, "tenant"));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:o, s:s}}", "apiVersion",
	                       "rezuscloud.io/v1", "kind", "NodeGroup", "metadata", "name",
	                       rz__form(pg, "name"), "tenant", rz_req_param(req, "tenant"), "spec",
	                       "role", rz__form(pg, "role"), "count",
	                       count_value(rz__form(pg, "count")), "providerClass",
	                       rz__form(pg, "providerClass")),
	             nodegroup_done);
}

/* A write of the node group the URL names (method, and body taken, or NULL). */
static void nodegroup_write(rz__page_t *pg, const char *method, const char *ctype, json_t *body)
{
	char target[200];

	snprintf(target, sizeof(target), "/api/v1/tenants/%s/nodegroups/%s",
	         rz_req_param(pg->req, "tenant"), rz_req_param(pg->req, "name"));
	rz__page_act(pg, method, target, ctype, body, nodegroup_done);
}

static void scale_write(rz__page_t *pg)
{
	nodegroup_write(
	    pg, "PATCH", "application/merge-patch+json",
	    json_pack("{s:{s:o}}", "spec", "count", count_value(rz__form(pg, "count"))));
}

/* The confirmation of a node group's deletion or scale-down (pages/delete-nodegroup,
 * pages/scale-nodegroup): title, the tenant and its tabs, and view.nodegroup {name, count,
 * machines, none, one} naming the machines that go (doomed, taken), with the members of
 * extra (taken) besides. */
static void nodegroup_confirm(rz__page_t *pg, const char *title, json_t *doomed, json_t *extra)
{
	json_t *v = pg->view;
	size_t n = json_array_size(doomed);
	json_t *ng =
	    json_pack("{s:s, s:I, s:o, s:b, s:b}", "name", rz_req_param(pg->req, "name"), "count",
	              (json_int_t)n, "machines", doomed, "none", n == 0, "one", n == 1);

	json_object_update(ng, extra);
	json_decref(extra);
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant",
	                    json_pack("{s:s}", "name", rz_req_param(pg->req, "tenant")));
	json_object_set_new(v, "nodegroup", ng);
	json_object_set_new(v, "tabs", tab_nav(pg, rz_req_param(pg->req, "tenant"), TAB_DELETE_NG));
}

/* The instance index of a machine's resource: N of a tfAddress ending in "[N]" (a counted
 * resource), or -1 for another key (for_each) or none. */
static long long machine_index(const json_t *m)
{
	const char *tf = rz__str(m, "spec.tfAddress");
	const char *open = strrchr(tf, '[');
	size_t len = strlen(tf);
	char *end = NULL;
	long long n;

	if (open == NULL || len < 3 || tf[len - 1] != ']' || open[1] < '0' || open[1] > '9') {
		return -1;
	}
	n = strtoll(open + 1, &end, 10);
	return end == tf + len - 1 ? n : -1;
}

/* A confirmation's reads: the node group (0) and its tenant's machines (1), then ready. */
static void read_nodegroup_machines(rz__page_t *pg, void (*ready)(rz__page_t *pg))
{
	const char *tenant = rz_req_param(pg->req, "tenant");

	pg->ready = ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s/nodegroups/%s", tenant,
	               rz_req_param(pg->req, "name"));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/machines", tenant);
	rz__page_release(pg);
}

/* A count below the group's asks first, naming the machines that go: TF removes the
 * instances of a counted resource from the highest index down, so those whose index is at
 * or past the new count. A provider that keys its machines otherwise (for_each) decides
 * itself: the page says how many go and lists them all. Any other count is written. */
static void scale_ready(rz__page_t *pg)
{
	const json_t *ng = rz__page_got(pg, 0);
	json_int_t from = json_integer_value(json_object_get(json_object_get(ng, "spec"), "count"));
	json_int_t to = json_integer_value(json_object_get(pg->view, "scaleTo"));
	json_t *doomed = json_array(), *all = json_array(), *m;
	bool by_key = false;
	size_t i;

	json_object_del(pg->view, "scaleTo");
	if (ng == NULL || to >= from) {
		json_decref(doomed);
		json_decref(all);
		scale_write(pg); /* the API answers for a group that cannot be read */
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, m)
	{
		long long at = machine_index(m);
		if (strcmp(rz__str(m, "spec.nodeGroup"), rz_req_param(pg->req, "name")) != 0) {
			continue;
		}
		by_key = by_key || at < 0;
		json_array_append_new(all, rz__machine_row(m));
		if (at >= to) {
			json_array_append_new(doomed, rz__machine_row(m));
		}
	}
	if (by_key) {
		json_decref(doomed);
		doomed = all;
	} else {
		json_decref(all);
	}
	nodegroup_confirm(pg, "Scale a node group down", doomed,
	                  json_pack("{s:I, s:I, s:I, s:b}", "from", from, "to", to, "drop",
	                            from - to, "byKey", by_key));
	rz__page_render(pg, "pages/scale-nodegroup", 200);
}

/* A scale: a count below the group's current one is confirmed first (scale_ready); the
 * confirmation's own post (confirm=yes), a count that is no number and any other are
 * written at once. */
static void post_scale(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	json_t *count;

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	count = count_value(rz__form(pg, "count"));
	if (!json_is_integer(count) || json_integer_value(count) < 0 ||
	    strcmp(rz__form(pg, "confirm"), "yes") == 0) {
		json_decref(count);
		scale_write(pg);
		return;
	}
	json_object_set_new(pg->view, "scaleTo", count);
	read_nodegroup_machines(pg, scale_ready);
}

static void post_delete_nodegroup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);

	if (pg != NULL && rz__page_names_ok(pg)) {
		nodegroup_write(pg, "DELETE", NULL, NULL);
	}
}

/* The confirmation: what deleting the node group destroys, by name. */
static void delete_ready(rz__page_t *pg)
{
	json_t *doomed = json_array(), *m;
	const char *ng = rz_req_param(pg->req, "name");
	size_t i;

	if (rz__page_got(pg, 0) == NULL) {
		rz__page_error(pg, rz__page_code(pg, 0) == 404 ? 404 : 502,
		               "There is no such node group.");
		json_decref(doomed);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, m)
	{
		if (strcmp(rz__str(m, "spec.nodeGroup"), ng) == 0) {
			json_array_append_new(doomed, rz__machine_row(m));
		}
	}
	nodegroup_confirm(pg, "Delete a node group", doomed, json_object());
	rz__page_render(pg, "pages/delete-nodegroup", 200);
}

static void get_delete_nodegroup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	read_nodegroup_machines(pg, delete_ready);
}

/* ------------------------------------------------------------------ runs */

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
		    json_pack("{s:s, s:s, s:s, s:s, s:b}", "address", rz__str(r, "address"),
		              "action", action, "reason", rz__str(r, "reason"), "machine",
		              rz__str(r, "machine"), "destroys",
		              strcmp(action, "delete") == 0 || strcmp(action, "replace") == 0));
	}
	return out;
}

static void run_ready(rz__page_t *pg)
{
	json_t *run = rz__page_got(pg, 1), *v = pg->view, *res;
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
	res = plan_resources(run);
	snprintf(title, sizeof(title), "Run %s of %s", rz_req_param(pg->req, "name"), tenant);
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant", tenant_row(rz__page_got(pg, 0)));
	json_object_set_new(v, "tabs", tab_nav(pg, tenant, TAB_RUN));
	json_object_set_new(v, "run", run_row(run));
	json_object_set_new(v, "noResources", json_boolean(json_array_size(res) == 0));
	json_object_set_new(v, "resources", res);
	json_object_set_new(v, "more",
	                    json_integer(json_integer_value(json_object_get(
	                        json_object_get(json_object_get(run, "status"), "plan"), "more"))));
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

/* ------------------------------------------------------------------ routes */

int rz__pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
