/* core/web/patch-pages.c - the WebUI's config patches tab of a tenant: the patches listed,
 * an editor (YAML errors at their line), the effective patch per role, a patch's deletion
 * through a confirmation. Every read and write goes through the API's own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"
#include "core/web/tabs.h"

#define ERROR_CONTEXT 3 /* lines shown each side of a YAML error's line (rezus.conf(5)) */

/* A patch's node groups as text: the API's 64 names of 63 characters, ", " between. */
#define GROUPS_TEXT (64 * (63 + 2) + 1)

static void get_patches(rz_req_t *req, void *ctx);
static void get_live_patches(rz_req_t *req, void *ctx);
static void get_live_effective(rz_req_t *req, void *ctx);
static void post_patches(rz_req_t *req, void *ctx);
static void get_delete_patch(rz_req_t *req, void *ctx);
static void post_delete_patch(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/configpatches", get_patches),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/configpatches", get_live_patches),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/effectivepatches", get_live_effective),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/configpatches", post_patches),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/configpatches/{name}", get_patches),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/configpatches/{name}", post_patches),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/configpatches/{name}/delete", get_delete_patch),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/configpatches/{name}/delete",
	              post_delete_patch),
};

/* The editor's fields of the API's (core/web/form.c). */
static const rz__field_t patch_fields[] = {
	{ "metadata.name", "metadata_name", "Name", "cp-name" },
	{ "spec.patch", "patch", "Patch", "cp-patch" },
	{ "spec.targetRole", "targetRole", "Target role", "cp-role" },
	{ "spec.format", "format", "Format", "cp-format" },
	{ "spec.nodeGroups", "nodeGroups", "Node groups", "cp-groups" },
	{ "spec.enabled", "enabled", "Enabled", "cp-enabled" },
};

static const char *tenant_of(const rz__page_t *pg)
{
	return rz_req_param(pg->req, "tenant");
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

/* A YAML cause's message without its place ("... at line 3, column 2") and the API's
 * "not valid YAML: " (both said beside it). */
static json_t *yaml_what(const char *msg)
{
	const char *at = strstr(msg, " at line "), *what = msg;

	if (strncmp(what, "Not valid YAML: ", 16) == 0 ||
	    strncmp(what, "not valid YAML: ", 16) == 0) {
		what += 16;
	}
	return json_stringn(what, at != NULL && at > what ? (size_t)(at - what) : strlen(what));
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

/* A patch's row: its enabled flag as a badge (a disabled patch is not a fault: neutral),
 * its node groups or "every node group". */
static json_t *patch_row(const json_t *it, const char *editing)
{
	const json_t *en = json_object_get(json_object_get(it, "spec"), "enabled");
	const char *format = rz__str(it, "spec.format"), *role = rz__str(it, "spec.targetRole");
	bool on = en == NULL || json_is_true(en);
	char groups[GROUPS_TEXT];

	group_list(json_object_get(json_object_get(it, "spec"), "nodeGroups"), groups,
	           sizeof(groups));
	return json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s}, s:s, s:b, s:b}", "name",
	                 rz__str(it, "metadata.name"), "targetRole", role[0] ? role : "all",
	                 "format", format[0] ? format : "strategic", "enabled", on, "badge", "text",
	                 on ? "Enabled" : "Disabled", "tone", on ? "ok" : "neutral", "nodeGroups",
	                 groups, "limited", groups[0] != '\0', "current",
	                 editing != NULL && strcmp(editing, rz__str(it, "metadata.name")) == 0);
}

/* A patch's row as the live table renders it (which marks the page's own: ?current=). */
static json_t *live_row(const json_t *it)
{
	return patch_row(it, NULL);
}

/* The patches, live (with the tenant's header); ?current= names the patch being edited. */
static void get_live_patches(rz_req_t *req, void *ctx)
{
	const char *t = rz_req_param(req, "tenant"), *current = rz_req_query(req, "current");
	char target[200], msg[128];

	if (!rz_format_dns1123_label(t, msg, sizeof(msg))) {
		rz_reply_error(req, 404, NULL, "no such object");
		return;
	}
	if (current != NULL && current[0] != '\0' &&
	    !rz_format_dns1123_subdomain(current, msg, sizeof(msg))) {
		current = NULL;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/configpatches?watch=true", t);
	rz__live_tenant_table(ctx, req, target, "parts/patch-rows", live_row, NULL, current);
}

#define EFFECTIVE_PART "parts/effective-patches"

static void effective_read(rz__page_t *pg)
{
	const char *t = tenant_of(pg);

	rz__page_hold(pg);
	rz__page_fetch(pg, 2, "/api/v1/tenants/%s/effectivepatches/controlplane", t);
	rz__page_fetch(pg, 3, "/api/v1/tenants/%s/effectivepatches/worker", t);
	rz__page_release(pg);
}

static void effective_build(rz__page_t *pg)
{
	if (rz__page_got(pg, 2) == NULL || rz__page_got(pg, 3) == NULL) {
		rz__live_view_keep(pg);
		return;
	}
	json_object_set_new(pg->view, "effective",
	                    json_pack("[o, o]", effective(rz__page_got(pg, 2), "controlplane"),
	                              effective(rz__page_got(pg, 3), "worker")));
	rz__live_view_send(pg);
}

/* The effective patch per role, live: read again when a patch or a node group changes. */
static void get_live_effective(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);
	char paths[2][200];
	rz__live_view_spec_t spec = {
		.read = effective_read,
		.build = effective_build,
		.tpl = EFFECTIVE_PART,
		.event = "effective",
	};

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return; /* answered */
	}
	snprintf(paths[0], sizeof(paths[0]), "/api/v1/tenants/%s/configpatches", tenant_of(pg));
	snprintf(paths[1], sizeof(paths[1]), "/api/v1/tenants/%s/nodegroups", tenant_of(pg));
	rz__page_free(pg);
	spec.watches[0] = paths[0]; /* copied by rz__live_view */
	spec.watches[1] = paths[1];
	rz__live_view(ctx, req, &spec, NULL);
}

static json_t *format_options(const char *want)
{
	static const char *const formats[][2] = {
		{ "strategic", "strategic merge patch (YAML of the parts to change)" },
		{ "json6902", "JSON patch (RFC 6902: a list of operations, in YAML)" },
	};
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		json_array_append_new(
		    out, json_pack("{s:s, s:s, s:b}", "name", formats[i][0], "label", formats[i][1],
		                   "selected",
		                   strcmp(formats[i][0], want[0] ? want : "strategic") == 0));
	}
	return out;
}

/* The node groups the patch may be limited to: the tenant's (slot 5), and any the patch
 * names that is gone; checked those chosen. */
static json_t *group_options(rz__page_t *pg, const json_t *chosen)
{
	json_t *out = json_array(), *g;
	size_t i, j;

	json_array_foreach(rz__items(rz__page_got(pg, 5)), i, g)
	{
		const char *name = rz__str(g, "metadata.name");
		bool on = false;
		json_t *c;
		json_array_foreach(chosen, j, c)
		{
			on = on ||
			     strcmp(json_string_value(c) ? json_string_value(c) : "", name) == 0;
		}
		json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "name", name, "role",
		                                     rz__str(g, "spec.role"), "checked", on));
	}
	json_array_foreach(chosen, j, g)
	{
		bool known = false;
		json_t *o;
		json_array_foreach(out, i, o)
		{
			known =
			    known || strcmp(rz__str(o, "name"), json_string_value(g) ?: "") == 0;
		}
		if (!known && json_string_value(g) != NULL) {
			json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "name",
			                                     json_string_value(g), "role", "gone",
			                                     "checked", true));
		}
	}
	return out;
}

/* The node groups the posted form chose: a checkbox "ng.NAME" each (a form's field name is
 * one value here). */
static json_t *form_groups(const rz__page_t *pg)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach(pg->form, k, v)
	{
		if (strncmp(k, "ng.", 3) == 0 && k[3] != '\0' &&
		    strcmp(json_string_value(v) ?: "", "true") == 0) {
			json_array_append_new(out, json_string(k + 3));
		}
	}
	return out;
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
		json_array_append_new(rows, patch_row(it, editing));
	}
	json_object_set_new(v, "rows", rows);
	json_object_set_new(v, "currentPatch", json_string(editing ? editing : ""));
	rz__live_have_rows(pg, "parts/patch-rows");
	json_object_set_new(v, "effective",
	                    json_pack("[o, o]", effective(rz__page_got(pg, 2), "controlplane"),
	                              effective(rz__page_got(pg, 3), "worker")));
	rz__live_view_have(pg, EFFECTIVE_PART, "effectiveHave");
	form = json_object_get(v, "form");
	if (form == NULL) {
		form = json_object();
		json_object_set_new(v, "form", form);
	}
	if (pg->form != NULL) {
		values = json_pack("{s:s, s:s, s:s, s:s, s:b, s:o}", "name",
		                   editing ? editing : rz__form(pg, "name"), "patch",
		                   rz__form(pg, "patch"), "targetRole", rz__form(pg, "targetRole"),
		                   "format", rz__form(pg, "format"), "enabled",
		                   strcmp(rz__form(pg, "enabled"), "true") == 0, "nodeGroups",
		                   form_groups(pg));
	} else if (one != NULL) {
		const json_t *en = json_object_get(json_object_get(one, "spec"), "enabled");
		values = json_pack("{s:s, s:s, s:s, s:s, s:b, s:O*}", "name", editing, "patch",
		                   rz__str(one, "spec.patch"), "targetRole",
		                   rz__str(one, "spec.targetRole"), "format",
		                   rz__str(one, "spec.format"), "enabled",
		                   en == NULL || json_is_true(en), "nodeGroups",
		                   json_object_get(json_object_get(one, "spec"), "nodeGroups"));
	} else {
		values = json_pack("{s:s, s:s, s:s, s:s, s:b}", "name", "", "patch", "",
		                   "targetRole", "all", "format", "strategic", "enabled", true);
	}
	json_object_set_new(form, "roles", role_options(rz__str(values, "targetRole")));
	json_object_set_new(form, "formats", format_options(rz__str(values, "format")));
	json_object_set_new(form, "groups",
	                    group_options(pg, json_object_get(values, "nodeGroups")));
	json_object_set_new(form, "noGroups",
	                    json_boolean(json_array_size(json_object_get(form, "groups")) == 0));
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
			    json_pack(
			        "{s:I, s:I, s:o, s:o}", "line", (json_int_t)line, "column",
			        (json_int_t)col, "lines", excerpt(rz__str(values, "patch"), line),
			        "message",
			        yaml_what(json_string_value(json_object_get(errs, "patch")))));
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
	rz__page_fetch(pg, 5, "/api/v1/tenants/%s/nodegroups", t);
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
	if (rz__form_failed(pg, code, body, patch_fields,
	                    sizeof(patch_fields) / sizeof(patch_fields[0]))) {
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
	/* the node groups whole (none: every group of the role); enabled unchecked: false */
	spec =
	    json_pack("{s:s, s:b, s:o}", "patch", rz__form(pg, "patch"), "enabled",
	              strcmp(rz__form(pg, "enabled"), "true") == 0, "nodeGroups", form_groups(pg));
	if (rz__form(pg, "targetRole")[0] != '\0') {
		json_object_set_new(spec, "targetRole", json_string(rz__form(pg, "targetRole")));
	}
	if (rz__form(pg, "format")[0] != '\0') {
		json_object_set_new(spec, "format", json_string(rz__form(pg, "format")));
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

/* ------------------------------------------------------------------ routes */

int rz__patch_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
