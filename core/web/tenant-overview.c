/* core/web/tenant-overview.c - a tenant's console: its tabs (overview, node groups, machines,
 * runs) and a machine's page. The overview shows the cluster at a glance: its machines as
 * badges by node group, the current run and upgrade, the last etcd snapshot, endpoints and
 * versions, conditions and the newest Events. What changes is live: the overview as one
 * region re-read on change (core/web/live-view.c), the other tabs' header and tables
 * (core/web/live.c). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/web/page.h"

#define OVERVIEW_EVENTS 15 /* Events on the overview, newest first */
#define MACHINE_EVENTS  30 /* on a machine's page */

static void get_tenant(rz_req_t *req, void *ctx);
static void get_machine(rz_req_t *req, void *ctx);
static void get_live_overview(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/overview/{tenant}", get_live_overview),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}", get_tenant),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/{tab}", get_tenant),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/machines/{name}", get_machine),
};

enum tab { TAB_OVERVIEW, TAB_NODEGROUPS, TAB_MACHINES, TAB_RUNS };

/* A tab, the list it reads into slot 1, the flag its template section is under and its
 * live stream (core/web/live.c: /ui/live/tenants/{tenant}/LIVE, with the header). */
static const struct {
	const char *name, *label, *api, *flag, *live;
} tabs[] = {
	{ "overview", "Overview", "events", "tabOverview", "grid" },
	{ "nodegroups", "Node groups", "nodegroups", "tabNodegroups", "nodegroups" },
	{ "machines", "Machines", "machines", "tabMachines", "machines" },
	{ "runs", "Runs", "runs", "tabRuns", "runs" },
};

/* The tabs of core/web/tenant-pages.c and etcd-pages.c, after these, shown to the roles that
 * may use them. */
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

/* The overview's further reads, after the tenant (0) and its Events (1). */
enum { SLOT_GROUPS = 2, SLOT_MACHINES, SLOT_RUNS, SLOT_UPGRADES, SLOT_SNAPSHOTS };

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

/* ------------------------------------------------------------------ the overview */

/* {name, phase, tone, ...} of the newest of items (NULL when none) with what (borrowed):
 * the keys besides, each a path of the object. Caller owns the result. */
static json_t *newest(json_t *items, const char *none, const char *const *what)
{
	json_t *sorted = rz__sorted_by(items, rz__by_created_desc);
	const json_t *o = json_array_get(sorted, 0);
	const char *phase = rz__str(o, "status.phase");
	json_t *out = NULL;

	if (o != NULL) {
		out = json_pack("{s:s, s:s, s:s}", "name", rz__str(o, "metadata.name"), "phase",
		                phase[0] ? phase : none, "tone", rz__tone(phase[0] ? phase : none));
		json_object_set_new(out, "when",
		                    rz__when(rz__str(o, "metadata.creationTimestamp")));
		for (size_t i = 0; what[i] != NULL; i += 2) {
			json_object_set_new(out, what[i], json_string(rz__str(o, what[i + 1])));
		}
	}
	json_decref(sorted);
	return out;
}

/* The current run: the newest still going, else the newest. */
static json_t *current_run(json_t *runs)
{
	json_t *sorted = rz__sorted_by(runs, rz__by_created_desc), *r, *out = NULL;
	size_t i;

	json_array_foreach(sorted, i, r)
	{
		json_t *row = rz__run_row(r);
		if (json_is_true(json_object_get(row, "active"))) {
			out = row;
			break;
		}
		json_decref(row);
	}
	if (out == NULL && json_array_size(sorted) > 0) {
		out = rz__run_row(json_array_get(sorted, 0));
	}
	json_decref(sorted);
	return out;
}

static json_t *last_snapshot(json_t *snaps)
{
	static const char *const what[] = { "trigger", "spec.trigger", NULL };
	json_t *out = newest(snaps, "Pending", what);
	const json_t *size;
	char human[32] = "";

	if (out != NULL) {
		json_t *sorted = rz__sorted_by(snaps, rz__by_created_desc);
		size =
		    json_object_get(json_object_get(json_array_get(sorted, 0), "status"), "size");
		if (json_is_integer(size)) {
			rz_ui_bytes(human, sizeof(human), json_integer_value(size));
		}
		json_object_set_new(out, "size", json_string(human));
		json_decref(sorted);
	}
	return out;
}

/* The control plane's endpoint as the cluster has it: the tenant's, else (as the Talos
 * plugin makes it) https://ADDRESS:6443 of its first control plane machine; "" when neither
 * is known yet. *derived: whether it is the machine's. */
static void cp_endpoint(const json_t *t, json_t *machines, char *out, size_t size, bool *derived)
{
	const char *given = rz__str(t, "spec.controlPlaneEndpoint"), *best = NULL, *addr = "";
	const json_t *m;
	size_t i;

	*derived = false;
	snprintf(out, size, "%s", given);
	if (given[0] != '\0') {
		return;
	}
	json_array_foreach(machines, i, m)
	{
		const char *name = rz__str(m, "metadata.name");
		if (strcmp(rz__str(m, "spec.role"), "controlplane") == 0 &&
		    rz__str(m, "spec.address")[0] != '\0' &&
		    (best == NULL || strcmp(name, best) < 0)) {
			best = name;
			addr = rz__str(m, "spec.address");
		}
	}
	if (best != NULL) {
		snprintf(out, size, strchr(addr, ':') ? "https://[%s]:6443" : "https://%s:6443",
		         addr);
		*derived = true;
	}
}

static void overview(rz__page_t *pg, const json_t *t)
{
	static const char *const upgrade_what[] = { "component", "spec.component", "target",
		                                    "spec.targetVersion", NULL };
	json_t *events = rz__sorted_by(rz__items(rz__page_got(pg, 1)), rz__by_last_desc), *c;
	json_t *evs = json_array(), *o, *v = pg->view;
	size_t i;

	json_array_foreach(events, i, c)
	{
		if (i < OVERVIEW_EVENTS) {
			json_array_append_new(evs, rz__event_row(c));
		}
	}
	o = json_pack("{s:o, s:o, s:b, s:s, s:s, s:s, s:s, s:s, s:b}", "conditions",
	              rz__rows(json_object_get(json_object_get(t, "status"), "conditions"),
	                       rz__condition_row),
	              "events", evs, "noEvents", json_array_size(evs) == 0, "endpoint",
	              rz__str(t, "spec.controlPlaneEndpoint"), "talosWanted",
	              rz__str(t, "spec.talosVersion"), "kubernetesWanted",
	              rz__str(t, "spec.kubernetesVersion"), "talosRunning",
	              rz__str(t, "status.talosVersion"), "kubernetesRunning",
	              rz__str(t, "status.kubernetesVersion"), "moreEvents",
	              json_array_size(events) > OVERVIEW_EVENTS);
	json_decref(events);
	{
		char ep[300];
		bool derived;
		cp_endpoint(t, rz__items(rz__page_got(pg, SLOT_MACHINES)), ep, sizeof(ep),
		            &derived);
		json_object_set_new(o, "endpoint", json_string(ep));
		json_object_set_new(o, "endpointDerived", json_boolean(derived));
	}
	/* the running version said once when it is the one wanted */
	json_object_set_new(o, "talosSame",
	                    json_boolean(strcmp(rz__str(t, "spec.talosVersion"),
	                                        rz__str(t, "status.talosVersion")) == 0));
	json_object_set_new(o, "kubernetesSame",
	                    json_boolean(strcmp(rz__str(t, "spec.kubernetesVersion"),
	                                        rz__str(t, "status.kubernetesVersion")) == 0));
	json_object_set_new(o, "lastApplied",
	                    rz__when(rz__str(t, "status.lastApplied")[0]
	                                 ? rz__str(t, "status.lastApplied")
	                                 : NULL));
	json_object_set_new(o, "run", current_run(rz__items(rz__page_got(pg, SLOT_RUNS))));
	json_object_set_new(
	    o, "upgrade",
	    newest(rz__items(rz__page_got(pg, SLOT_UPGRADES)), "Pending", upgrade_what));
	json_object_set_new(o, "snapshot",
	                    last_snapshot(rz__items(rz__page_got(pg, SLOT_SNAPSHOTS))));
	json_object_set_new(o, "nodegroups",
	                    rz__rows(rz__items(rz__page_got(pg, SLOT_GROUPS)), rz__nodegroup_row));
	json_object_set_new(
	    o, "grid",
	    rz__live_part(rz__rows(rz__items(rz__page_got(pg, SLOT_MACHINES)), rz__machine_row),
	                  rz__machines_shape));
	json_object_set_new(v, "overview", o);
}

/* ------------------------------------------------------------------ the tabs */

/* The Add a node group form's values: the posted ones (kept after an error), else the
 * defaults; the role as options with the chosen one selected. */
static void nodegroup_form(rz__page_t *pg, const json_t *t)
{
	json_t *v = pg->view, *form = json_object_get(v, "form"), *values, *roles = json_array();
	static const char *const names[] = { "controlplane", "worker" };
	const char *want;

	if (form == NULL) {
		form = json_object();
		json_object_set_new(v, "form", form);
	}
	/* a scale's post failed: its error is beside its row, the form keeps its defaults */
	values = pg->form != NULL && strstr(rz_req_path(pg->req), "/scale") == NULL
	             ? json_incref(pg->form)
	             : json_pack("{s:s, s:s}", "count", "1", "providerClass",
	                         rz__str(t, "spec.clusterProvider"));
	want = json_string_value(json_object_get(values, "role"));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_array_append_new(roles,
		                      json_pack("{s:s, s:b}", "name", names[i], "selected",
		                                want != NULL && strcmp(want, names[i]) == 0));
	}
	json_object_set_new(values, "roles", roles);
	json_object_set_new(form, "values", values);
}

/* A scale's refused count: its message beside its row (view.rowError {name, message}). */
static void row_error(json_t *v)
{
	const json_t *e = json_object_get(v, "rowError");
	json_t *g;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(v, "groups"), "rows"), i, g)
	{
		if (e != NULL && strcmp(rz__str(g, "name"), rz__str(e, "name")) == 0) {
			json_object_set_new(g, "error", json_string(rz__str(e, "message")));
		}
	}
}

static void tenant_tab(rz__page_t *pg, enum tab tab, json_t *t, json_t *list)
{
	json_t *v = pg->view, *items = rz__items(list), *runs;

	switch (tab) {
	case TAB_OVERVIEW:
		overview(pg, t);
		break;
	case TAB_NODEGROUPS:
		json_object_set_new(v, "groups",
		                    rz__live_part(rz__rows(items, rz__nodegroup_row), NULL));
		row_error(v);
		nodegroup_form(pg, t);
		break;
	case TAB_MACHINES:
		json_object_set_new(
		    v, "machines",
		    rz__live_part(rz__rows(items, rz__machine_row), rz__machines_shape));
		break;
	case TAB_RUNS:
		runs = rz__sorted_by(items, rz__by_created_desc);
		json_object_set_new(v, "runs", rz__live_part(rz__rows(runs, rz__run_row), NULL));
		json_decref(runs);
		break;
	}
}

/* What the tab's stream would send first, that the page has already (rz__live_have). */
static void live_have(rz__page_t *pg, enum tab tab)
{
	static const struct {
		const char *tpl, *key, *sub;
	} parts[] = {
		[TAB_OVERVIEW] = { "parts/machine-grid", "overview", "grid" },
		[TAB_NODEGROUPS] = { "parts/nodegroup-rows", "groups", NULL },
		[TAB_MACHINES] = { "parts/machines-live", "machines", NULL },
		[TAB_RUNS] = { "parts/run-rows", "runs", NULL },
	};
	const json_t *part = json_object_get(pg->view, parts[tab].key);

	if (parts[tab].sub != NULL) {
		part = json_object_get(part, parts[tab].sub);
	}
	rz__live_have(pg, parts[tab].tpl, part);
}

/* The overview's reads beyond the tenant (0) and its Events (1). */
static void overview_reads(rz__page_t *pg, const char *name)
{
	rz__page_fetch(pg, SLOT_GROUPS, "/api/v1/tenants/%s/nodegroups", name);
	rz__page_fetch(pg, SLOT_MACHINES, "/api/v1/tenants/%s/machines", name);
	rz__page_fetch(pg, SLOT_RUNS, "/api/v1/tenants/%s/runs", name);
	rz__page_fetch(pg, SLOT_UPGRADES, "/api/v1/tenants/%s/upgrades", name);
	rz__page_fetch(pg, SLOT_SNAPSHOTS, "/api/v1/tenants/%s/etcdbackups", name);
}

/* ------------------------------------------------------------------ the overview, live */

#define OVERVIEW_PART "parts/overview-live"

/* The keys the overview's part reads besides the page's: as its live region renders it. */
static void overview_keys(const rz__page_t *pg, json_t *v)
{
	json_object_set_new(v, "base", json_string(pg->base));
	json_object_set_new(v, "csrf", json_string(pg->csrf));
	json_object_set_new(v, "me",
	                    json_pack("{s:b, s:b}", "canEdit", rz__may(pg, RZ_ROLE_EDIT),
	                              "canAdmin", rz__may(pg, RZ_ROLE_ADMIN)));
}

/* view.overviewHave: the digest of the overview's part as the page shows it, which its
 * stream starts from (?have=), so that its first read, the same, is not swapped in (that
 * would take the keyboard's focus away). */
static void overview_have(rz__page_t *pg)
{
	json_t *v = json_deep_copy(pg->view);
	unsigned char h[crypto_generichash_BYTES];
	char hex[2 * crypto_generichash_BYTES + 1] = "", *html = NULL;
	size_t len = 0;
	rz_err_t err = { 0 };

	if (v != NULL) {
		overview_keys(pg, v);
		if (rz_tpl_render(pg->ui->tpl, OVERVIEW_PART, v, &html, &len, &err) == 0) {
			crypto_generichash(h, sizeof(h), (const unsigned char *)html, len, NULL, 0);
			sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
		}
	}
	free(html);
	json_decref(v);
	json_object_set_new(pg->view, "overviewHave", json_string(hex));
}

static void overview_read(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "tenant");

	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", name);
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/events", name);
	overview_reads(pg, name);
	rz__page_release(pg);
}

static void overview_build(rz__page_t *pg)
{
	json_t *t = rz__page_got(pg, 0), *v = pg->view;
	const char *name = rz_req_param(pg->req, "tenant");

	overview_keys(pg, v);
	if (t == NULL) {
		json_object_set_new(v, "gone", json_boolean(rz__page_code(pg, 0) == 404));
	} else {
		json_object_set_new(v, "tenant", rz__tenant_row(t));
		json_object_set_new(v, "tabs", rz__tenant_tabs(pg, name, "overview"));
		json_object_set_new(v, "tabOverview", json_true());
		overview(pg, t);
	}
	rz__live_view_send(pg);
}

/* The overview as one live region: read again when the tenant, its machines, runs or Events
 * change (node groups, upgrades and snapshots record Events as they change), at most once a
 * second; one stream for the page, as browsers open few connections to a host. */
static void get_live_overview(rz_req_t *req, void *ctx)
{
	const char *name = rz_req_param(req, "tenant");
	rz__page_t *pg = rz__page_new(ctx, req);
	char paths[4][200];
	rz__live_view_spec_t spec = {
		.read = overview_read,
		.build = overview_build,
		.tpl = OVERVIEW_PART,
		.event = "overview",
	};

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return; /* answered */
	}
	rz__page_free(pg);
	snprintf(paths[0], sizeof(paths[0]), "/api/v1/tenants?fieldSelector=metadata.name%%3D%s",
	         name);
	snprintf(paths[1], sizeof(paths[1]), "/api/v1/tenants/%s/machines", name);
	snprintf(paths[2], sizeof(paths[2]), "/api/v1/tenants/%s/runs", name);
	snprintf(paths[3], sizeof(paths[3]), "/api/v1/tenants/%s/events", name);
	for (int i = 0; i < 4; i++) {
		spec.watches[i] = paths[i]; /* copied by rz__live_view */
	}
	rz__live_view(ctx, req, &spec, NULL);
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
	snprintf(title, sizeof(title), "%s of %s", tabs[tab].label, name);
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant", rz__tenant_row(t));
	json_object_set_new(v, "tabs", rz__tenant_tabs(pg, name, tabs[tab].name));
	json_object_set_new(v, tabs[tab].flag, json_true());
	json_object_set_new(v, "live", json_string(tabs[tab].live));
	tenant_tab(pg, tab, t, rz__page_got(pg, 1));
	if (tab == TAB_OVERVIEW) {
		overview_have(pg);
	} else {
		live_have(pg, tab);
	}
	rz__page_read_error(pg, 1, tabs[tab].label);
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
	if (tab == TAB_OVERVIEW) {
		overview_reads(pg, name);
	}
	rz__page_release(pg);
}

bool rz__tenant_tab_page(rz__page_t *pg, const char *tab)
{
	for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++) {
		if (strcmp(tabs[i].name, tab) == 0) {
			tenant_page(pg, (enum tab)i);
			return true;
		}
	}
	return false;
}

static void get_tenant(rz_req_t *req, void *ctx)
{
	const char *tab = rz_req_param(req, "tab");
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	if (!rz__tenant_tab_page(pg, tab != NULL ? tab : "overview")) {
		rz__page_error(pg, 404, "There is no such page.");
	}
}

/* ------------------------------------------------------------------ a machine */

/* A machine's page: what its row shows, and its versions, addresses, last error and the
 * times, plus its Events (slot 2), newest first. */
static void machine_ready(rz__page_t *pg)
{
	json_t *t = rz__page_got(pg, 0), *m = rz__page_got(pg, 1), *v = pg->view, *row, *evs, *e;
	json_t *sorted;
	const char *name = rz_req_param(pg->req, "name");
	char title[200];
	size_t i;

	if (t == NULL) {
		rz__page_tenant_error(pg, rz__page_code(pg, 0));
		return;
	}
	if (m == NULL) {
		rz__page_error(pg, rz__page_code(pg, 1) == 404 ? 404 : 502,
		               "There is no such machine: it may have been removed.");
		return;
	}
	snprintf(title, sizeof(title), "Machine %s of %s", name, rz_req_param(pg->req, "tenant"));
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant", rz__tenant_row(t));
	json_object_set_new(v, "tabs",
	                    rz__tenant_tabs(pg, rz_req_param(pg->req, "tenant"), "machines"));
	row = rz__machine_detail_row(m);
	json_object_set_new(v, "machine", json_pack("{s:[o]}", "rows", row));
	json_object_set_new(v, "machineName", json_string(name));
	evs = json_array();
	sorted = rz__sorted_by(rz__items(rz__page_got(pg, 2)), rz__by_last_desc);
	json_array_foreach(sorted, i, e)
	{
		if (i < MACHINE_EVENTS) {
			json_array_append_new(evs, rz__event_row(e));
		}
	}
	json_decref(sorted);
	json_object_set_new(v, "events", evs);
	rz__live_have(pg, "parts/machine-head", json_object_get(v, "machine"));
	rz__page_read_error(pg, 2, "the machine's Events");
	rz__page_render(pg, "pages/machine", 200);
}

static void get_machine(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);
	const char *tenant = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	pg->ready = machine_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant);
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/machines/%s", tenant, name);
	rz__page_fetch(pg, 2,
	               "/api/v1/tenants/%s/events?fieldSelector=involvedObject.kind%%3DMachine,"
	               "involvedObject.name%%3D%s",
	               tenant, name);
	rz__page_release(pg);
}

int rz__tenant_overview_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
