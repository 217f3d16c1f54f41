/* core/web/nodegroup-pages.c - a tenant's node groups' actions: add one (its form keeps what
 * was typed after an error, each error beside its field with a summary above linking to
 * it), scale one (a scale-down first names the machines that go), delete one (a
 * confirmation naming its machines); each says afterwards what happens next. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/web/page.h"

static void post_nodegroups(rz_req_t *req, void *ctx);
static void post_scale(rz_req_t *req, void *ctx);
static void get_delete_nodegroup(rz_req_t *req, void *ctx);
static void post_delete_nodegroup(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/nodegroups", post_nodegroups),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/nodegroups/{name}/scale", post_scale),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/nodegroups/{name}/delete", get_delete_nodegroup),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/nodegroups/{name}/delete",
	              post_delete_nodegroup),
};

/* The Add a node group form's fields: the API's field, the view's key (errors.KEY beside
 * it), its label and its element (core/web/form.c puts each problem beside its field and in
 * the summary above the form, parts/form-problems). */
static const rz__field_t add_fields[] = {
	{ "metadata.name", "metadata_name", "Name", "ng-name" },
	{ "spec.role", "role", "Role", "ng-role" },
	{ "spec.count", "count", "Machines", "ng-count" },
	{ "spec.providerClass", "providerClass", "Provider class", "ng-class" },
};

/* ------------------------------------------------------------------ writes */

/* The toast after a node group's write: what happens next (a run, and whether it waits for
 * someone to approve its plan, as it does when it destroys machines and
 * tofu.destroy_approval is on). */
static const char *done_toast(rz__page_t *pg)
{
	json_int_t going = json_integer_value(json_object_get(pg->view, "destroys"));
	bool approval = pg->ui->destroy_approval;

	if (strcmp(rz_req_method(pg->req), "POST") == 0 && rz_req_param(pg->req, "name") == NULL) {
		return "created";
	}
	if (strstr(rz_req_path(pg->req), "/delete") != NULL) {
		return going == 0 ? "ngdeleted-empty"
		       : approval ? "ngdeleted-approve"
		                  : "ngdeleted";
	}
	return going == 0 ? "scaled" : approval ? "scaleddown-approve" : "scaleddown";
}

static void nodegroup_done(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz_req_param(pg->req, "name") == NULL &&
	    rz__form_failed(pg, code, body, add_fields,
	                    sizeof(add_fields) / sizeof(add_fields[0]))) {
		rz__tenant_tab_page(pg, "nodegroups");
		return;
	}
	if (rz__page_failed(pg, code, body, "spec.")) {
		if (rz_req_param(pg->req, "name") != NULL) {
			/* a scale's or a deletion's: the error beside its row (the Add form's
			 * fields are not at fault) */
			json_t *form = json_object_get(pg->view, "form");
			const char *msg = json_string_value(
			    json_object_get(json_object_get(form, "errors"), "count"));
			json_object_set_new(pg->view, "rowError",
			                    json_pack("{s:s, s:s}", "name",
			                              rz_req_param(pg->req, "name"), "message",
			                              msg != NULL ? msg : ""));
			json_object_del(form, "errors");
			if (msg != NULL) {
				json_object_del(pg->view, "toast");
			}
		}
		rz__tenant_tab_page(pg, "nodegroups");
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/nodegroups", rz_req_param(pg->req, "tenant"));
	rz__page_redirect(pg, path, done_toast(pg));
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

/* ------------------------------------------------------------------ confirmations */

/* The confirmation of a node group's deletion or scale-down (pages/delete-nodegroup,
 * pages/scale-nodegroup): title, the tenant (slot 2) and its tabs, and view.nodegroup {name,
 * count, machines, none, one} naming the machines that go (doomed, taken), with the members
 * of extra (taken) besides. False (answered) when the tenant cannot be read. */
static bool nodegroup_confirm(rz__page_t *pg, const char *title, json_t *doomed, json_t *extra)
{
	json_t *v = pg->view, *ng;
	size_t n = json_array_size(doomed);

	if (rz__page_got(pg, 2) == NULL) {
		json_decref(doomed);
		json_decref(extra);
		rz__page_tenant_error(pg, rz__page_code(pg, 2));
		return false;
	}
	ng = json_pack("{s:s, s:I, s:o, s:b, s:b, s:b}", "name", rz_req_param(pg->req, "name"),
	               "count", (json_int_t)n, "machines", doomed, "none", n == 0, "one", n == 1,
	               "approval", pg->ui->destroy_approval);
	json_object_update(ng, extra);
	json_decref(extra);
	json_object_set_new(v, "title", json_string(title));
	json_object_set_new(v, "navTenants", json_true());
	json_object_set_new(v, "tenant", rz__tenant_row(rz__page_got(pg, 2)));
	json_object_set_new(v, "nodegroup", ng);
	json_object_set_new(v, "tabs",
	                    rz__tenant_tabs(pg, rz_req_param(pg->req, "tenant"), "nodegroups"));
	rz__live_have(pg, NULL, NULL);
	return true;
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

/* A confirmation's reads: the node group (0), its tenant's machines (1) and the tenant (2),
 * then ready. */
static void read_nodegroup_machines(rz__page_t *pg, void (*ready)(rz__page_t *pg))
{
	const char *tenant = rz_req_param(pg->req, "tenant");

	pg->ready = ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s/nodegroups/%s", tenant,
	               rz_req_param(pg->req, "name"));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/machines", tenant);
	rz__page_fetch(pg, 2, "/api/v1/tenants/%s", tenant);
	rz__page_release(pg);
}

/* The machines of slot 1 in the node group the URL names. Caller owns the result. */
static json_t *group_machines(rz__page_t *pg)
{
	json_t *out = json_array(), *m;
	size_t i;

	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, m)
	{
		if (strcmp(rz__str(m, "spec.nodeGroup"), rz_req_param(pg->req, "name")) == 0) {
			json_array_append(out, m);
		}
	}
	return out;
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
	json_t *doomed = json_array(), *all = json_array(), *mine, *m;
	bool by_key = false;
	size_t i;

	json_object_del(pg->view, "scaleTo");
	if (ng == NULL || to >= from) {
		json_decref(doomed);
		json_decref(all);
		scale_write(pg); /* the API answers for a group that cannot be read */
		return;
	}
	mine = group_machines(pg);
	json_array_foreach(mine, i, m)
	{
		long long at = machine_index(m);
		by_key = by_key || at < 0;
		json_array_append_new(all, rz__machine_row(m));
		if (at >= to) {
			json_array_append_new(doomed, rz__machine_row(m));
		}
	}
	json_decref(mine);
	if (by_key) {
		json_decref(doomed);
		doomed = all;
	} else {
		json_decref(all);
	}
	/* how many machines the write destroys, for the message after it */
	i = by_key ? (size_t)(from - to) : json_array_size(doomed);
	if (nodegroup_confirm(pg, "Scale a node group down", doomed,
	                      json_pack("{s:I, s:I, s:I, s:b, s:I, s:b}", "from", from, "to", to,
	                                "drop", from - to, "byKey", by_key, "destroys",
	                                (json_int_t)i, "dropOne", from - to == 1))) {
		rz__page_render(pg, "pages/scale-nodegroup", 200);
	}
}

/* A scale: a count below the group's current one is confirmed first (scale_ready); the
 * confirmation's own post (confirm=yes, destroys: how many machines it named), a count that
 * is no number and any other are written at once. */
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
		json_object_set_new(pg->view, "destroys",
		                    json_integer(strtol(rz__form(pg, "destroys"), NULL, 10)));
		scale_write(pg);
		return;
	}
	json_object_set_new(pg->view, "scaleTo", count);
	read_nodegroup_machines(pg, scale_ready);
}

/* The deletion, once its machines are counted (for the message after it). */
static void delete_write(rz__page_t *pg)
{
	json_t *mine = group_machines(pg);

	json_object_set_new(pg->view, "destroys", json_integer((json_int_t)json_array_size(mine)));
	json_decref(mine);
	nodegroup_write(pg, "DELETE", NULL, NULL);
}

static void post_delete_nodegroup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);

	if (pg != NULL && rz__page_names_ok(pg)) {
		read_nodegroup_machines(pg, delete_write);
	}
}

/* The confirmation: what deleting the node group destroys, by name. */
static void delete_ready(rz__page_t *pg)
{
	json_t *doomed = json_array(), *mine, *m;
	size_t i;

	if (rz__page_got(pg, 0) == NULL) {
		rz__page_error(pg, rz__page_code(pg, 0) == 404 ? 404 : 502,
		               "There is no such node group.");
		json_decref(doomed);
		return;
	}
	mine = group_machines(pg);
	json_array_foreach(mine, i, m)
	{
		json_array_append_new(doomed, rz__machine_row(m));
	}
	json_decref(mine);
	if (nodegroup_confirm(pg, "Delete a node group", doomed, json_object())) {
		rz__page_render(pg, "pages/delete-nodegroup", 200);
	}
}

static void get_delete_nodegroup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	read_nodegroup_machines(pg, delete_ready);
}

int rz__nodegroup_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
