/* core/web/edit-pages.c - editing a tenant's spec and labels, and a node group's labels,
 * provider config, runner selector and Talos version (edit role). A form is a JSON patch
 * that sets each field whole, made against the spec as the form showed it (its generation:
 * a change made meanwhile is refused, not overwritten); what was typed
 * stays on an error, each problem beside its field with a summary above (core/web/form.c).
 * Every read and write goes through the API's own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/yaml.h"
#include "core/web/page.h"
#include "core/web/tabs.h"

#define LIST_TEXT 512 /* a list of subnets as text, "a, b" */

static void get_edit_tenant(rz_req_t *req, void *ctx);
static void post_edit_tenant(rz_req_t *req, void *ctx);
static void get_edit_group(rz_req_t *req, void *ctx);
static void post_edit_group(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/edit", get_edit_tenant),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/edit", post_edit_tenant),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/nodegroups/{name}/edit", get_edit_group),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/nodegroups/{name}/edit", post_edit_group),
};

/* The form's fields of the API's: the causes' fields to the fields they go beside. */
static const rz__field_t tenant_fields[] = {
	{ "metadata.labels", "labels", "Labels", NULL },
	{ "spec.kubernetesVersion", "kubernetesVersion", "Kubernetes version", NULL },
	{ "spec.talosVersion", "talosVersion", "Talos version", NULL },
	{ "spec.controlPlaneEndpoint", "controlPlaneEndpoint", "Control plane endpoint", NULL },
	{ "spec.podSubnets", "podSubnets", "Pod subnets", NULL },
	{ "spec.serviceSubnets", "serviceSubnets", "Service subnets", NULL },
	{ "spec.runnerSelector", "runnerSelector", "Runner selector", NULL },
	{ "spec.etcdBackup", "etcdInterval", "etcd snapshots", NULL },
	{ "spec.etcdBackup.interval", "etcdInterval", "Time between etcd snapshots", NULL },
	{ "spec.etcdBackup.keep", "etcdKeep", "etcd snapshots kept", NULL },
	{ "spec.etcdBackup.target", "etcdTarget", "Where etcd snapshots go", NULL },
};
static const rz__field_t group_fields[] = {
	{ "spec.labels", "labels", "Node labels", NULL },
	{ "spec.providerConfig", "providerConfig", "Provider config", NULL },
	{ "spec.runnerSelector", "runnerSelector", "Runner selector", NULL },
	{ "spec.talosVersion", "talosVersion", "Talos version", NULL },
};
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static const char *tenant_of(const rz__page_t *pg)
{
	return rz_req_param(pg->req, "tenant");
}

/* Editing is the edit role's: others get a page that says so. */
static bool editor_only(rz__page_t *pg)
{
	if (!rz__may(pg, RZ_ROLE_EDIT)) {
		rz__page_error(pg, 403,
		               "Editing is for the edit role: ask an editor or an administrator.");
		return false;
	}
	return true;
}

/* A JSON patch's operation on member name of object at (path: "/spec"): value (taken) set
 * whole, or the member removed when value is NULL and the object has it. */
static void op(json_t *ops, const json_t *at, const char *path, const char *name, json_t *value)
{
	char ptr[128];

	snprintf(ptr, sizeof(ptr), "%s/%s", path, name);
	if (value != NULL) {
		json_array_append_new(
		    ops, json_pack("{s:s, s:s, s:o}", "op", "add", "path", ptr, "value", value));
	} else if (json_object_get(at, name) != NULL) {
		json_array_append_new(ops, json_pack("{s:s, s:s}", "op", "remove", "path", ptr));
	}
}

/* The patch's first operation: the spec is still the one the form showed (its generation;
 * a status the daemon writes meanwhile does not count), else nothing is changed
 * (core/web/form.c says so). */
static json_t *ops_new(const rz__page_t *pg)
{
	return json_pack("[{s:s, s:s, s:I}]", "op", "test", "path", "/metadata/generation", "value",
	                 (json_int_t)strtoll(rz__form(pg, "generation"), NULL, 10));
}

static bool has_problems(const rz__page_t *pg)
{
	return json_is_true(json_object_get(json_object_get(pg->view, "form"), "hasProblems"));
}

/* The key=value field name of the form as a map; NULL when empty, or, its problem beside
 * it, when a pair is not key=value (has_problems tells which). */
static json_t *form_map(rz__page_t *pg, const char *name, const char *label)
{
	char msg[200];
	json_t *m = rz__form_pairs(rz__form(pg, name), msg, sizeof(msg));

	if (m == NULL) {
		rz__form_problem(pg, name, label, msg);
	} else if (json_object_size(m) == 0) { /* emptied: the member goes */
		json_decref(m);
		m = NULL;
	}
	return m;
}

/* "a, b" (or one a line) as a list of strings; NULL when empty. */
static json_t *form_list(const rz__page_t *pg, const char *name)
{
	char buf[LIST_TEXT], *save = NULL;
	json_t *out = json_array();

	snprintf(buf, sizeof(buf), "%s", rz__form(pg, name));
	for (char *t = strtok_r(buf, ", \t\r\n", &save); t != NULL;
	     t = strtok_r(NULL, ", \t\r\n", &save)) {
		json_array_append_new(out, json_string(t));
	}
	if (json_array_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static json_t *list_text(const json_t *arr)
{
	char buf[LIST_TEXT];
	size_t i, n = 0;
	json_t *it;

	buf[0] = '\0';
	json_array_foreach(arr, i, it)
	{
		n += (size_t)snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, "%s%s",
		                      n ? ", " : "",
		                      json_string_value(it) ? json_string_value(it) : "");
	}
	return json_string(n < sizeof(buf) ? buf : "");
}

/* An object's metadata.generation as the form's text. */
static json_t *generation(const json_t *obj)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld",
	         (long long)json_integer_value(
	             json_object_get(json_object_get(obj, "metadata"), "generation")));
	return json_string(buf);
}

/* The form's values: the posted ones after an error, else the object's. */
static json_t *form_values(rz__page_t *pg, json_t *from_object)
{
	json_t *form = json_object_get(pg->view, "form");

	if (form == NULL) {
		form = json_object();
		json_object_set_new(pg->view, "form", form);
	}
	if (pg->form != NULL) {
		json_decref(from_object);
		json_object_set(form, "values", pg->form);
	} else {
		json_object_set_new(form, "values", from_object);
	}
	return form;
}

/* ------------------------------------------------------------------ a tenant */

static json_t *target_options(const char *want)
{
	static const char *const targets[][2] = { { "", "the daemon's default" },
		                                  { "local", "local" },
		                                  { "s3", "s3" } };
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "value", targets[i][0],
		                                     "label", targets[i][1], "selected",
		                                     strcmp(targets[i][0], want) == 0));
	}
	return out;
}

static json_t *tenant_values(const json_t *t)
{
	const json_t *spec = json_object_get(t, "spec");
	const json_t *keep = json_object_get(json_object_get(spec, "etcdBackup"), "keep");
	char keeps[32] = "";

	if (json_is_integer(keep)) {
		snprintf(keeps, sizeof(keeps), "%lld", (long long)json_integer_value(keep));
	}
	return json_pack("{s:o, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:s, s:s, s:s}", "generation",
	                 generation(t), "labels",
	                 rz__pairs_text(json_object_get(json_object_get(t, "metadata"), "labels")),
	                 "kubernetesVersion", rz__str(t, "spec.kubernetesVersion"), "talosVersion",
	                 rz__str(t, "spec.talosVersion"), "controlPlaneEndpoint",
	                 rz__str(t, "spec.controlPlaneEndpoint"), "podSubnets",
	                 list_text(json_object_get(spec, "podSubnets")), "serviceSubnets",
	                 list_text(json_object_get(spec, "serviceSubnets")), "runnerSelector",
	                 rz__pairs_text(json_object_get(spec, "runnerSelector")), "etcdInterval",
	                 rz__str(t, "spec.etcdBackup.interval"), "etcdKeep", keeps, "etcdTarget",
	                 rz__str(t, "spec.etcdBackup.target"));
}

static void edit_tenant_ready(rz__page_t *pg)
{
	json_t *t = rz__page_got(pg, 0), *form;

	if (!rz__tenant_head(pg, "overview", "Edit the tenant")) {
		return;
	}
	if (pg->form == NULL) {
		rz__tab_toast(pg);
	}
	form = form_values(pg, tenant_values(t));
	json_object_set_new(form, "targets", target_options(rz__str(form, "values.etcdTarget")));
	json_object_set_new(
	    pg->view, "running",
	    json_boolean(json_integer_value(json_object_get(
	                     json_object_get(json_object_get(t, "status"), "machines"), "total")) >
	                 0));
	rz__page_render(pg, "pages/edit-tenant", pg->code ? pg->code : 200);
}

static void edit_tenant_page(rz__page_t *pg)
{
	pg->ready = edit_tenant_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_release(pg);
}

static void get_edit_tenant(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg) && editor_only(pg)) {
		edit_tenant_page(pg);
	}
}

static void tenant_saved(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__form_failed(pg, code, body, tenant_fields, NFIELDS(tenant_fields))) {
		edit_tenant_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/edit", tenant_of(pg));
	rz__page_redirect(pg, path, "tenantsaved");
}

/* A required version: its problem beside it when the field is empty. */
static json_t *version_of(rz__page_t *pg, const char *name, const char *label)
{
	const char *v = rz__form(pg, name);

	if (v[0] == '\0') {
		rz__form_problem(pg, name, label, "Enter a version, such as 1.35.0");
		return NULL;
	}
	return json_string(v);
}

/* A field's text, or NULL when empty (the member goes: its default applies). */
static json_t *string_of(const rz__page_t *pg, const char *name)
{
	const char *v = rz__form(pg, name);

	return v[0] ? json_string(v) : NULL;
}

/* etcdBackup of the form, NULL when every member is empty (the daemon's defaults). */
static json_t *etcd_backup(rz__page_t *pg)
{
	const char *keep = rz__form(pg, "etcdKeep");
	json_t *out = json_object();
	char *end = NULL;
	long n = strtol(keep, &end, 10);

	if (string_of(pg, "etcdInterval") != NULL) {
		json_object_set_new(out, "interval", string_of(pg, "etcdInterval"));
	}
	if (string_of(pg, "etcdTarget") != NULL) {
		json_object_set_new(out, "target", string_of(pg, "etcdTarget"));
	}
	if (keep[0] != '\0' && (end == NULL || *end != '\0' || n < 1 || n > 1000)) {
		rz__form_problem(pg, "etcdKeep", "etcd snapshots kept",
		                 "Enter a whole number from 1 to 1000, or nothing for the default");
	} else if (keep[0] != '\0') {
		json_object_set_new(out, "keep", json_integer(n));
	}
	if (json_object_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* The tenant's JSON patch from the form: every field set whole (an emptied one removed, its
 * default applies), labels and selector with the keys the form dropped gone. */
static void edit_tenant_post_ready(rz__page_t *pg)
{
	json_t *t = rz__page_got(pg, 0), *spec, *ops, *labels, *sel, *kv, *tv, *etcd;
	char target[160];

	if (t == NULL) {
		rz__page_tenant_error(pg, rz__page_code(pg, 0));
		return;
	}
	spec = json_object_get(t, "spec");
	labels = form_map(pg, "labels", "Labels");
	kv = version_of(pg, "kubernetesVersion", "Kubernetes version");
	tv = version_of(pg, "talosVersion", "Talos version");
	sel = form_map(pg, "runnerSelector", "Runner selector");
	etcd = etcd_backup(pg);
	if (has_problems(pg)) {
		json_decref(labels);
		json_decref(kv);
		json_decref(tv);
		json_decref(sel);
		json_decref(etcd);
		edit_tenant_ready(pg);
		return;
	}
	ops = ops_new(pg);
	op(ops, json_object_get(t, "metadata"), "/metadata", "labels", labels);
	op(ops, spec, "/spec", "kubernetesVersion", kv);
	op(ops, spec, "/spec", "talosVersion", tv);
	op(ops, spec, "/spec", "controlPlaneEndpoint", string_of(pg, "controlPlaneEndpoint"));
	op(ops, spec, "/spec", "podSubnets", form_list(pg, "podSubnets"));
	op(ops, spec, "/spec", "serviceSubnets", form_list(pg, "serviceSubnets"));
	op(ops, spec, "/spec", "runnerSelector", sel);
	op(ops, spec, "/spec", "etcdBackup", etcd);
	snprintf(target, sizeof(target), "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_act(pg, "PATCH", target, "application/json-patch+json", ops, tenant_saved);
}

static void post_edit_tenant(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	/* the tenant as it is: a field the form emptied is removed only when it is there */
	pg->ready = edit_tenant_post_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_release(pg);
}

/* ------------------------------------------------------------------ a node group */

static json_t *group_values(const json_t *g)
{
	const json_t *spec = json_object_get(g, "spec");
	const json_t *pc = json_object_get(spec, "providerConfig");
	char *text = pc != NULL && json_object_size(pc) > 0
	                 ? json_dumps(pc, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
	                 : NULL;
	json_t *out = json_pack("{s:o, s:o, s:s, s:o, s:s}", "generation", generation(g), "labels",
	                        rz__pairs_text(json_object_get(spec, "labels")), "providerConfig",
	                        text ? text : "", "runnerSelector",
	                        rz__pairs_text(json_object_get(spec, "runnerSelector")),
	                        "talosVersion", rz__str(g, "spec.talosVersion"));

	free(text);
	return out;
}

static void edit_group_ready(rz__page_t *pg)
{
	json_t *g = rz__page_got(pg, 1);

	if (!rz__tenant_head(pg, "nodegroups", "Edit a node group")) {
		return;
	}
	if (g == NULL) {
		rz__page_error(pg, rz__page_code(pg, 1) == 404 ? 404 : 502,
		               rz__page_code(pg, 1) == 404 ? "There is no such node group."
		                                           : "The node group cannot be read.");
		return;
	}
	json_object_set_new(
	    pg->view, "group",
	    json_pack("{s:s, s:s, s:s, s:I, s:s}", "name", rz__str(g, "metadata.name"), "role",
	              rz__str(g, "spec.role"), "providerClass", rz__str(g, "spec.providerClass"),
	              "count",
	              json_integer_value(json_object_get(json_object_get(g, "spec"), "count")),
	              "tenantTalos", rz__str(rz__page_got(pg, 0), "spec.talosVersion")));
	if (pg->form == NULL) {
		rz__tab_toast(pg);
	}
	form_values(pg, group_values(g));
	rz__page_render(pg, "pages/edit-nodegroup", pg->code ? pg->code : 200);
}

static void edit_group_page(rz__page_t *pg)
{
	pg->ready = edit_group_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/nodegroups/%s", tenant_of(pg),
	               rz_req_param(pg->req, "name"));
	rz__page_release(pg);
}

static void get_edit_group(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg) && editor_only(pg)) {
		edit_group_page(pg);
	}
}

static void group_saved(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__form_failed(pg, code, body, group_fields, NFIELDS(group_fields))) {
		edit_group_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/nodegroups/%s/edit", tenant_of(pg),
	         rz_req_param(pg->req, "name"));
	rz__page_redirect(pg, path, "groupsaved");
}

/* The provider config field (YAML or JSON: JSON is YAML) as an object; NULL, its problem
 * beside it, when it is not one. Empty: {}. */
static json_t *provider_config(rz__page_t *pg)
{
	const char *text = rz__form(pg, "providerConfig");
	json_t *docs = NULL, *out = NULL;
	rz_err_t err = { 0 };
	char msg[320];
	unsigned line = 0, col = 0;
	const char *what;

	if (rz_yaml_load_all("-", text, strlen(text), &docs, &err) != 0) {
		/* "-:LINE:COL: YAML syntax error: WHAT" or "-:LINE: WHAT" */
		what = strchr(err.msg + 2, ' ') ? strchr(err.msg + 2, ' ') + 1 : err.msg;
		if (strncmp(what, "YAML syntax error: ", 19) == 0) {
			what += 19;
		}
		if (sscanf(err.msg, "-:%u:%u:", &line, &col) == 2) {
			snprintf(msg, sizeof(msg), "Line %u, column %u: %s", line, col, what);
		} else if (line > 0) {
			snprintf(msg, sizeof(msg), "Line %u: %s", line, what);
		} else {
			snprintf(msg, sizeof(msg), "%s", what);
		}
		rz__form_problem(pg, "providerConfig", "Provider config", msg);
	} else if (json_array_size(docs) > 1) {
		rz__form_problem(pg, "providerConfig", "Provider config",
		                 "Write one document: the settings as key: value lines, or one "
		                 "JSON object");
	} else if (json_array_size(docs) == 1 && !json_is_object(json_array_get(docs, 0))) {
		rz__form_problem(pg, "providerConfig", "Provider config",
		                 "Write the settings as key: value lines (or a JSON object), not a "
		                 "list or a single value");
	} else {
		out = json_array_size(docs) ? json_incref(json_array_get(docs, 0)) : json_object();
	}
	json_decref(docs);
	return out;
}

static void edit_group_post_ready(rz__page_t *pg)
{
	json_t *g = rz__page_got(pg, 1), *labels, *sel, *pc, *spec, *ops;
	char target[200];

	if (g == NULL) {
		edit_group_ready(pg); /* says why */
		return;
	}
	labels = form_map(pg, "labels", "Node labels");
	pc = provider_config(pg);
	sel = form_map(pg, "runnerSelector", "Runner selector");
	if (has_problems(pg)) {
		json_decref(labels);
		json_decref(pc);
		json_decref(sel);
		edit_group_ready(pg);
		return;
	}
	spec = json_object_get(g, "spec");
	ops = ops_new(pg);
	op(ops, spec, "/spec", "labels", labels);
	op(ops, spec, "/spec", "providerConfig", pc);
	op(ops, spec, "/spec", "runnerSelector", sel);
	op(ops, spec, "/spec", "talosVersion", string_of(pg, "talosVersion"));
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/nodegroups/%s", tenant_of(pg),
	         rz_req_param(pg->req, "name"));
	rz__page_act(pg, "PATCH", target, "application/json-patch+json", ops, group_saved);
}

static void post_edit_group(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	pg->ready = edit_group_post_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/nodegroups/%s", tenant_of(pg),
	               rz_req_param(req, "name"));
	rz__page_release(pg);
}

/* ------------------------------------------------------------------ routes */

int rz__edit_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
