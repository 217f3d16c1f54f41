/* core/web/tenant-pages.c - the WebUI's remaining tabs of a tenant: its config patches (an
 * editor, YAML errors at their line, the effective patch per role), upgrades (dry run, live
 * progress, cancel), TF state versions (rollback), credentials (downloads) and the tenant's
 * deletion. Every read and write goes through the API's own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"

#define ERROR_CONTEXT 3   /* lines shown each side of a YAML error's line (rezus.conf(5)) */
#define MAX_UPGRADES  50  /* upgrades listed, newest first */
#define MAX_VERSIONS  100 /* state versions listed, newest first */

/* The routes of the tenant's tabs (registered by rz_ui_routes with the UI as ctx). */
static void get_patches(rz_req_t *req, void *ctx);
static void post_patches(rz_req_t *req, void *ctx);
static void get_delete_patch(rz_req_t *req, void *ctx);
static void post_delete_patch(rz_req_t *req, void *ctx);
static void get_upgrades(rz_req_t *req, void *ctx);
static void post_upgrades(rz_req_t *req, void *ctx);
static void get_upgrade(rz_req_t *req, void *ctx);
static void post_upgrade_cancel(rz_req_t *req, void *ctx);
static void get_live_upgrade(rz_req_t *req, void *ctx);
static void get_state(rz_req_t *req, void *ctx);
static void get_rollback(rz_req_t *req, void *ctx);
static void post_rollback(rz_req_t *req, void *ctx);
static void get_credentials(rz_req_t *req, void *ctx);
static void get_credential(rz_req_t *req, void *ctx);
static void get_delete_tenant(rz_req_t *req, void *ctx);
static void post_delete_tenant(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/configpatches", get_patches),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/configpatches", post_patches),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/configpatches/{name}", get_patches),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/configpatches/{name}", post_patches),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/configpatches/{name}/delete", get_delete_patch),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/configpatches/{name}/delete",
	              post_delete_patch),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/upgrades", get_upgrades),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/upgrades", post_upgrades),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/upgrades/{name}", get_upgrade),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/upgrades/{name}/cancel", post_upgrade_cancel),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/upgrades/{name}", get_live_upgrade),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/state", get_state),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/state/{version}/rollback", get_rollback),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/state/{version}/rollback", post_rollback),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/credentials", get_credentials),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/credentials/{which}", get_credential),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/delete", get_delete_tenant),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/delete", post_delete_tenant),
};

/* A patch's node groups as text: the API's 64 names of 63 characters, ", " between. */
#define GROUPS_TEXT (64 * (63 + 2) + 1)

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
	return true;
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

/* ------------------------------------------------------------------ config patches */

/* The line and column a YAML cause names ("... at line 3, column 2"), or 0. */
static size_t yaml_line(const char *msg, size_t *col)
{
	const char *at = msg ? strstr(msg, "at line ") : NULL;
	unsigned long line = 0, c = 0;

	*col = 0;
	if (at == NULL || sscanf(at, "at line %lu, column %lu", &line, &c) < 1) {
		return 0;
	}
	*col = (size_t)c;
	return (size_t)line;
}

/* The lines of text around line (1-based): [{n, text, bad}]. */
static json_t *excerpt(const char *text, size_t line)
{
	json_t *out = json_array();
	size_t n = 1;

	for (const char *s = text; s != NULL && *s != '\0' && n <= line + ERROR_CONTEXT; n++) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		if (n + ERROR_CONTEXT >= line) {
			json_array_append_new(out, json_pack("{s:I, s:s%, s:b}", "n", (json_int_t)n,
			                                     "text", s, len, "bad", n == line));
		}
		s = nl ? nl + 1 : NULL;
	}
	if (json_array_size(out) == 0 || n <= line) { /* the end of the text: an empty line */
		json_array_append_new(out, json_pack("{s:I, s:s, s:b}", "n", (json_int_t)line,
		                                     "text", "", "bad", true));
	}
	return out;
}

static json_t *role_options(const char *want)
{
	static const char *const roles[] = { "all", "controlplane", "worker" };
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		json_array_append_new(out,
		                      json_pack("{s:s, s:b}", "name", roles[i], "selected",
		                                strcmp(roles[i], want[0] ? want : "all") == 0));
	}
	return out;
}

/* The node groups of a patch (a JSON array of names) as "a, b", or "" when it has none. */
static void group_list(const json_t *ngs, char *out, size_t size)
{
	json_t *g;
	size_t i, n = 0;

	out[0] = '\0';
	json_array_foreach(ngs, i, g)
	{
		if (n + 1 >= size) {
			break;
		}
		n += (size_t)snprintf(out + n, size - n, "%s%s", n ? ", " : "",
		                      json_string_value(g) ? json_string_value(g) : "");
	}
}

/* The effective patch of a role: the ordered list of the patches Talos applies one after
 * another (each with the node groups it is limited to), and their YAML stream. */
static json_t *effective(const json_t *e, const char *role)
{
	json_t *items = json_array(), *it;
	size_t i;

	json_array_foreach(json_object_get(e, "items"), i, it)
	{
		char groups[GROUPS_TEXT];
		group_list(json_object_get(it, "nodeGroups"), groups, sizeof(groups));
		json_array_append_new(
		    items, json_pack("{s:I, s:s, s:s, s:s, s:s, s:b}", "n", (json_int_t)(i + 1),
		                     "name", rz__str(it, "name"), "targetRole",
		                     rz__str(it, "targetRole"), "format", rz__str(it, "format"),
		                     "nodeGroups", groups, "limited", groups[0] != '\0'));
	}
	return json_pack("{s:s, s:s, s:o, s:b, s:b, s:b}", "role", role, "patch",
	                 rz__str(e, "patch"), "items", items, "none", json_array_size(items) == 0,
	                 "unknown", e == NULL, "many", json_array_size(items) > 1);
}

static void patches_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *rows = json_array(), *it, *form, *values;
	const char *editing = rz_req_param(pg->req, "name");
	json_t *one = rz__page_got(pg, 4);
	json_t *errs;
	size_t i;

	if (!rz__tenant_head(pg, "configpatches", "Config patches")) {
		json_decref(rows);
		return;
	}
	if (editing != NULL && one == NULL && pg->form == NULL) {
		json_decref(rows);
		rz__page_error(pg, rz__page_code(pg, 4) == 404 ? 404 : 502,
		               "There is no such config patch.");
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, it)
	{
		const json_t *en = json_object_get(json_object_get(it, "spec"), "enabled");
		json_array_append_new(
		    rows,
		    json_pack("{s:s, s:s, s:s, s:b, s:b}", "name", rz__str(it, "metadata.name"),
		              "targetRole", rz__str(it, "spec.targetRole"), "format",
		              rz__str(it, "spec.format"), "enabled", en == NULL || json_is_true(en),
		              "current",
		              editing != NULL &&
		                  strcmp(editing, rz__str(it, "metadata.name")) == 0));
	}
	json_object_set_new(v, "patches", rows);
	json_object_set_new(v, "noPatches", json_boolean(json_array_size(rows) == 0));
	json_object_set_new(v, "effective",
	                    json_pack("[o, o]", effective(rz__page_got(pg, 2), "controlplane"),
	                              effective(rz__page_got(pg, 3), "worker")));
	form = json_object_get(v, "form");
	if (form == NULL) {
		form = json_object();
		json_object_set_new(v, "form", form);
	}
	values =
	    pg->form ? json_pack("{s:s, s:s, s:s}", "name",
	                         editing ? editing : rz__form(pg, "name"), "patch",
	                         rz__form(pg, "patch"), "targetRole", rz__form(pg, "targetRole"))
	    : one
	        ? json_pack("{s:s, s:s, s:s}", "name", editing, "patch", rz__str(one, "spec.patch"),
	                    "targetRole", rz__str(one, "spec.targetRole"))
	        : json_pack("{s:s, s:s, s:s}", "name", "", "patch", "", "targetRole", "all");
	json_object_set_new(form, "roles", role_options(rz__str(values, "targetRole")));
	json_object_set_new(form, "values", values);
	json_object_set_new(form, "editing", json_boolean(editing != NULL));
	if (editing != NULL) {
		json_object_set_new(form, "name", json_string(editing));
	}
	errs = json_object_get(form, "errors");
	if (json_string_value(json_object_get(errs, "patch")) != NULL) {
		size_t col,
		    line = yaml_line(json_string_value(json_object_get(errs, "patch")), &col);
		if (line > 0) {
			json_object_set_new(
			    form, "yamlError",
			    json_pack("{s:I, s:I, s:o, s:s}", "line", (json_int_t)line, "column",
			              (json_int_t)col, "lines",
			              excerpt(rz__str(values, "patch"), line), "message",
			              json_string_value(json_object_get(errs, "patch"))));
		}
	}
	rz__page_read_error(pg, 1, "the config patches");
	rz__page_render(pg, "pages/configpatches", pg->code ? pg->code : 200);
}

static void patches_page(rz__page_t *pg)
{
	const char *t = tenant_of(pg), *name = rz_req_param(pg->req, "name");

	pg->ready = patches_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", t);
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/configpatches", t);
	rz__page_fetch(pg, 2, "/api/v1/tenants/%s/effectivepatches/controlplane", t);
	rz__page_fetch(pg, 3, "/api/v1/tenants/%s/effectivepatches/worker", t);
	if (name != NULL) {
		rz__page_fetch(pg, 4, "/api/v1/tenants/%s/configpatches/%s", t, name);
	}
	rz__page_release(pg);
}

static void get_patches(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg)) {
		patches_page(pg);
	}
}

static void patch_saved(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__page_failed(pg, code, body, "spec.")) {
		patches_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/configpatches/%s", tenant_of(pg),
	         rz__str(body, "metadata.name"));
	rz__page_redirect(pg, path, "saved");
}

static void post_patches(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	const char *name;
	char target[200];
	json_t *spec;

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	name = rz_req_param(req, "name");
	spec = json_pack("{s:s}", "patch", rz__form(pg, "patch"));
	if (rz__form(pg, "targetRole")[0] != '\0') {
		json_object_set_new(spec, "targetRole", json_string(rz__form(pg, "targetRole")));
	}
	if (name != NULL) { /* an edit: the fields of the form, the rest kept */
		snprintf(target, sizeof(target), "/api/v1/tenants/%s/configpatches/%s",
		         tenant_of(pg), name);
		rz__page_act(pg, "PATCH", target, "application/merge-patch+json",
		             json_pack("{s:o}", "spec", spec), patch_saved);
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/configpatches", tenant_of(pg));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "rezuscloud.io/v1", "kind",
	                       "ConfigPatch", "metadata", "name", rz__form(pg, "name"), "spec",
	                       spec),
	             patch_saved);
}

/* Deleting a config patch: a confirmation naming the patch and the machines that lose it. */
static void delete_patch_ready(rz__page_t *pg)
{
	json_t *p = rz__page_got(pg, 1), *en;
	const char *role;
	char groups[GROUPS_TEXT];

	if (!rz__tenant_head(pg, "configpatches", "Delete a config patch")) {
		return;
	}
	if (p == NULL) {
		rz__page_error(pg, rz__page_code(pg, 1) == 404 ? 404 : 502,
		               rz__page_code(pg, 1) == 404 ? "There is no such config patch."
		                                           : "The config patch cannot be read.");
		return;
	}
	role = rz__str(p, "spec.targetRole");
	en = json_object_get(json_object_get(p, "spec"), "enabled");
	group_list(json_object_get(json_object_get(p, "spec"), "nodeGroups"), groups,
	           sizeof(groups));
	json_object_set_new(pg->view, "doomed",
	                    json_pack("{s:s, s:s, s:b, s:s, s:b, s:b}", "name",
	                              rz__str(p, "metadata.name"), "roles",
	                              strcmp(role, "controlplane") == 0 ? "control plane"
	                              : strcmp(role, "worker") == 0     ? "worker"
	                                                            : "control plane and worker",
	                              "bothRoles", role[0] == '\0' || strcmp(role, "all") == 0,
	                              "nodeGroups", groups, "limited", groups[0] != '\0',
	                              "disabled", en != NULL && !json_is_true(en)));
	rz__page_render(pg, "pages/delete-configpatch", pg->code ? pg->code : 200);
}

static void delete_patch_page(rz__page_t *pg)
{
	pg->ready = delete_patch_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/configpatches/%s", tenant_of(pg),
	               rz_req_param(pg->req, "name"));
	rz__page_release(pg);
}

static void get_delete_patch(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg)) {
		delete_patch_page(pg);
	}
}

static void patch_deleted(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		delete_patch_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/configpatches", tenant_of(pg));
	rz__page_redirect(pg, path, "patchdeleted");
}

static void post_delete_patch(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[200];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/configpatches/%s", tenant_of(pg),
	         rz_req_param(req, "name"));
	rz__page_act(pg, "DELETE", target, NULL, NULL, patch_deleted);
}

/* ------------------------------------------------------------------ upgrades */

static bool terminal(const char *phase)
{
	return strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0 ||
	       strcmp(phase, "Canceled") == 0 || strcmp(phase, "RolledBack") == 0;
}

/* An upgrade for its page and its live region (parts/upgrade-live). */
static json_t *upgrade_row(const json_t *u)
{
	const char *phase = rz__str(u, "status.phase");
	json_t *machines = json_array(), *checks = json_array(), *m;
	const json_t *st = json_object_get(u, "status");
	bool dry = json_is_true(json_object_get(json_object_get(u, "spec"), "dryRun"));
	size_t i;

	phase = phase[0] ? phase : "Pending";
	json_array_foreach(json_object_get(st, "machines"), i, m)
	{
		const char *mp = rz__str(m, "phase");
		json_array_append_new(
		    machines,
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b}", "name",
		              rz__str(m, "name"), "role", rz__str(m, "role"), "address",
		              rz__str(m, "address"), "from", rz__str(m, "from"), "to",
		              rz__str(m, "to"), "phase", mp[0] ? mp : "Pending", "error",
		              rz__str(m, "error"), "current",
		              strcmp(rz__str(u, "status.current"), rz__str(m, "name")) == 0));
	}
	json_array_foreach(json_object_get(st, "prechecks"), i, m)
	{
		json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name",
		                                        rz__str(m, "name"), "passed",
		                                        json_is_true(json_object_get(m, "passed")),
		                                        "message", rz__str(m, "message")));
	}
	return json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:o, s:o, s:b, s:b, "
	    "s:b}",
	    "name", rz__str(u, "metadata.name"), "component", rz__str(u, "spec.component"),
	    "target", rz__str(u, "spec.targetVersion"), "from", rz__str(u, "status.fromVersion"),
	    "phase", phase, "message", rz__str(u, "status.message"), "created",
	    rz__str(u, "metadata.creationTimestamp"), "dryRun", dry, "active", !terminal(phase),
	    "cancelRequested", json_is_true(json_object_get(st, "cancelRequested")), "machines",
	    machines, "prechecks", checks, "noMachines", json_array_size(machines) == 0, "canStart",
	    dry && strcmp(phase, "Succeeded") == 0, "canCancel", !dry && !terminal(phase));
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
	json_object_set_new(v, "upgrades", rows);
	json_object_set_new(v, "noUpgrades", json_boolean(json_array_size(rows) == 0));
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
	if (rz__page_failed(pg, code, body, "spec.")) {
		upgrades_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/upgrades/%s", tenant_of(pg),
	         rz__str(body, "metadata.name"));
	rz__page_redirect(pg, path, "created");
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
	rz__live_table(ctx, req, target, "parts/upgrade-live", upgrade_row);
}

/* ------------------------------------------------------------------ state versions */

/* A version number of the URL: 1 to 2^53, or 0. */
static long long version_param(const rz__page_t *pg)
{
	const char *s = rz_req_param(pg->req, "version");
	char *end = NULL;
	long long n;

	if (s == NULL || s[0] < '1' || s[0] > '9' || strlen(s) > 15) {
		return 0;
	}
	n = strtoll(s, &end, 10);
	return end != NULL && *end == '\0' ? n : 0;
}

static json_t *version_row(const json_t *it)
{
	json_t *serial = json_object_get(it, "serial");

	return json_pack(
	    "{s:I, s:s, s:s, s:s, s:I, s:b, s:s}", "version",
	    json_integer_value(json_object_get(it, "version")), "time", rz__str(it, "time"),
	    "lineage", rz__str(it, "lineage"), "run", rz__str(it, "run"), "size",
	    json_integer_value(json_object_get(it, "size")), "current",
	    json_is_true(json_object_get(it, "current")), "serial", serial ? "" : "none");
}

/* The versions of slot 1, each with its serial as text. */
static json_t *versions(rz__page_t *pg, long long only, json_t **found)
{
	json_t *rows = json_array(), *it;
	size_t i;

	*found = NULL;
	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, it)
	{
		json_t *row;
		char serial[32];
		if (i >= MAX_VERSIONS && only == 0) {
			break;
		}
		row = version_row(it);
		if (json_object_get(it, "serial") != NULL) {
			snprintf(serial, sizeof(serial), "%lld",
			         (long long)json_integer_value(json_object_get(it, "serial")));
			json_object_set_new(row, "serial", json_string(serial));
		}
		if (only != 0 && json_integer_value(json_object_get(it, "version")) == only) {
			*found = json_incref(row);
		}
		json_array_append_new(rows, row);
	}
	return rows;
}

static void state_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *found, *rows;

	if (!rz__tenant_head(pg, "state", "State versions")) {
		return;
	}
	rows = versions(pg, 0, &found);
	json_object_set_new(v, "versions", rows);
	json_object_set_new(v, "noVersions", json_boolean(json_array_size(rows) == 0));
	rz__page_read_error(pg, 1, "the state versions");
	rz__page_render(pg, "pages/state", pg->code ? pg->code : 200);
}

static void state_page(rz__page_t *pg)
{
	pg->ready = state_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/state", tenant_of(pg));
	rz__page_release(pg);
}

/* State versions are for admins: the API lets a viewer list them, but only an admin can roll
 * back, and the page offers nothing else. */
static bool admin_only(rz__page_t *pg)
{
	if (!rz__may(pg, RZ_ROLE_ADMIN)) {
		rz__page_error(pg, 403, "State versions are for administrators.");
		return false;
	}
	return true;
}

static void get_state(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg) && admin_only(pg)) {
		state_page(pg);
	}
}

static void rollback_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *found, *rows;

	if (!rz__tenant_head(pg, "state", "Roll back the state")) {
		return;
	}
	rows = versions(pg, version_param(pg), &found);
	json_decref(rows);
	if (found == NULL) {
		rz__page_error(pg, 404, "There is no such state version.");
		return;
	}
	json_object_set_new(v, "target", found);
	rz__page_render(pg, "pages/rollback-state", pg->code ? pg->code : 200);
}

static void get_rollback(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg) || !admin_only(pg)) {
		return;
	}
	if (version_param(pg) == 0) {
		rz__page_error(pg, 404, "There is no such state version.");
		return;
	}
	pg->ready = rollback_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/state", tenant_of(pg));
	rz__page_release(pg);
}

static void rolled_back(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		state_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/state", tenant_of(pg));
	rz__page_redirect(pg, path, "rolledback");
}

static void post_rollback(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[200];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	if (version_param(pg) == 0) {
		rz__page_error(pg, 404, "There is no such state version.");
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/state/rollback", tenant_of(pg));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:I}", "version", (json_int_t)version_param(pg)), rolled_back);
}

/* ------------------------------------------------------------------ credentials */

static void credentials_ready(rz__page_t *pg)
{
	if (!rz__tenant_head(pg, "credentials", "Credentials")) {
		return;
	}
	rz__page_render(pg, "pages/credentials", 200);
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
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
