/* core/web/binding-pages.c - the AccessBindings' page, an admin's: the bindings listed, one
 * made from a form (role, users and groups, tenants by name and by labels), one deleted.
 * Every read and write goes through the API's /api/v1/accessbindings. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/web/page.h"
#include "core/web/tabs.h"

#define LIST_MAX 1024 /* a list field of the form ("a1, a2"), at most */

static void get_bindings(rz_req_t *req, void *ctx);
static void post_bindings(rz_req_t *req, void *ctx);
static void post_delete_binding(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/access", get_bindings),
	RZ__WEB_ROUTE(RZ_M_POST, "/access", post_bindings),
	RZ__WEB_ROUTE(RZ_M_POST, "/access/{name}/delete", post_delete_binding),
};

static const char *const roles[] = { "view", "edit", "admin" };

/* ------------------------------------------------------------------ the list */

/* "a, b, c" of the strings of arr, into out. */
static void join(const json_t *arr, char *out, size_t size)
{
	const json_t *it;
	size_t i, n = 0;

	out[0] = '\0';
	json_array_foreach(arr, i, it)
	{
		const char *s = json_string_value(it);
		n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s", n ? ", " : "",
		                      s ? s : "");
		if (n >= size) {
			return;
		}
	}
}

/* What a binding grants on, in words: "a1, a2; labels team=a", or "every tenant". */
static void tenants_text(const json_t *tenants, char *out, size_t size)
{
	const json_t *names = json_object_get(tenants, "names");
	const json_t *sel = json_object_get(tenants, "selector"), *v;
	const char *k;
	size_t n;

	join(names, out, size);
	n = strlen(out);
	if (sel != NULL && json_object_size(sel) == 0) {
		snprintf(out + n, size - n, "%severy tenant", n ? "; " : "");
		return;
	}
	json_object_foreach((json_t *)sel, k, v)
	{
		n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s=%s",
		                      n == 0             ? "labels "
		                      : strchr(out, '=') ? ", "
		                                         : "; labels ",
		                      k, json_string_value(v) ? json_string_value(v) : "");
		if (n >= size) {
			return;
		}
	}
}

static json_t *binding_row(const json_t *b)
{
	const json_t *spec = json_object_get(b, "spec"), *s;
	json_t *users = json_array(), *groups = json_array();
	char u[LIST_MAX], g[LIST_MAX], t[LIST_MAX];
	size_t i;

	json_array_foreach(json_object_get(spec, "subjects"), i, s)
	{
		json_array_append_new(strcmp(rz__str(s, "kind"), "Group") == 0 ? groups : users,
		                      json_string(rz__str(s, "name")));
	}
	join(users, u, sizeof(u));
	join(groups, g, sizeof(g));
	json_decref(users);
	json_decref(groups);
	tenants_text(json_object_get(spec, "tenants"), t, sizeof(t));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "name", rz__str(b, "metadata.name"),
	                 "role", rz__str(b, "spec.role"), "users", u[0] ? u : "-", "groups",
	                 g[0] ? g : "-", "tenants", t, "created",
	                 rz__str(b, "metadata.creationTimestamp"), "createdWhen",
	                 rz__when(rz__str(b, "metadata.creationTimestamp")));
}

/* The API's causes beside the form's fields (core/web/form.c): spec.subjects[i]… beside the
 * users and groups, spec.tenants.names… beside the names, spec.tenants.selector… beside the
 * labels, a binding of no tenant beside the tenants. */
static const rz__field_t binding_fields[] = {
	{ "metadata.name", "name", "Name", "b-name" },
	{ "spec.role", "role", "Role on the tenants", "b-role" },
	{ "spec.subjects", "subjects", "Who", "b-users" },
	{ "spec.tenants.names", "tenantNames", "Tenants by name", "b-tenant-names" },
	{ "spec.tenants.selector", "labels", "Labels", "b-labels" },
	{ "spec.tenants", "tenants", "On which tenants", "b-tenant-names" },
};

static void bindings_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *rows = json_array(), *it, *f, *opts = json_array();
	const char *want = pg->form ? rz__form(pg, "role") : "view";
	size_t i;

	if (rz__page_got(pg, 0) == NULL) {
		json_decref(rows);
		json_decref(opts);
		rz__page_error(pg, rz__page_code(pg, 0) == 403 ? 403 : 502,
		               rz__page_code(pg, 0) == 403 ? "Access bindings are for admins."
		                                           : "The access bindings cannot be read.");
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 0)), i, it)
	{
		json_array_append_new(rows, binding_row(it));
	}
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		json_array_append_new(opts, json_pack("{s:s, s:b}", "name", roles[i], "selected",
		                                      strcmp(roles[i], want) == 0));
	}
	json_object_set_new(v, "title", json_string("Access bindings"));
	json_object_set_new(v, "navAccess", json_true());
	json_object_set_new(v, "bindings", rows);
	json_object_set_new(v, "empty", json_boolean(json_array_size(rows) == 0));
	if ((f = json_object_get(v, "form")) == NULL) {
		f = json_object();
		json_object_set_new(v, "form", f);
	}
	json_object_set_new(f, "values", pg->form ? json_incref(pg->form) : json_object());
	json_object_set_new(f, "roles", opts);
	json_object_set_new(f, "every", json_boolean(strcmp(rz__form(pg, "every"), "yes") == 0));
	rz__page_render(pg, "pages/bindings", pg->code ? pg->code : 200);
}

static void bindings_page(rz__page_t *pg)
{
	pg->ready = bindings_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/accessbindings");
	rz__page_release(pg);
}

static void get_bindings(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg)) {
		bindings_page(pg);
	}
}

/* ------------------------------------------------------------------ making one */

/* The items of a list field ("a1, a2" or "a1 a2"), as strings into arr. */
static void split(const char *s, json_t *arr)
{
	char buf[LIST_MAX];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ", \t\r\n", &save); t != NULL;
	     t = strtok_r(NULL, ", \t\r\n", &save)) {
		json_array_append_new(arr, json_string(t));
	}
}

/* The subjects of the form: users, then groups. */
static json_t *subjects(const rz__page_t *pg)
{
	json_t *out = json_array(), *names = json_array(), *it;
	static const char *const fields[] = { "users", "groups" }, *const kinds[] = { "User",
		                                                                      "Group" };
	size_t j;

	for (size_t i = 0; i < 2; i++) {
		json_array_clear(names);
		split(rz__form(pg, fields[i]), names);
		json_array_foreach(names, j, it)
		{
			json_array_append_new(
			    out, json_pack("{s:s, s:O}", "kind", kinds[i], "name", it));
		}
	}
	json_decref(names);
	return out;
}

/* spec.tenants of the form: names, and the labels "k=v, k2=v2" as the selector ({} for
 * every tenant). NULL, with the cause beside the labels field, when a pair has no "=". */
static json_t *tenants(rz__page_t *pg)
{
	json_t *t = json_object(), *names = json_array(), *pairs = json_array(), *sel, *it;
	size_t i;

	split(rz__form(pg, "tenantNames"), names);
	split(rz__form(pg, "labels"), pairs);
	if (json_array_size(names) > 0) {
		json_object_set(t, "names", names);
	}
	sel = json_object();
	json_array_foreach(pairs, i, it)
	{
		const char *p = json_string_value(it), *eq = strchr(p, '=');
		char key[256];
		if (eq == NULL || eq == p || (size_t)(eq - p) >= sizeof(key)) {
			json_decref(sel);
			json_decref(t);
			t = NULL;
			break;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - p), p);
		json_object_set_new(sel, key, json_string(eq + 1));
	}
	if (t != NULL && (json_object_size(sel) > 0 || strcmp(rz__form(pg, "every"), "yes") == 0)) {
		json_object_set_new(t, "selector", json_object_size(sel) > 0 ? sel : json_object());
		if (json_object_size(sel) == 0) {
			json_decref(sel);
		}
	} else if (t != NULL) {
		json_decref(sel);
	}
	json_decref(names);
	json_decref(pairs);
	return t;
}

static void binding_made(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__form_failed(pg, code, body, binding_fields,
	                    sizeof(binding_fields) / sizeof(binding_fields[0]))) {
		bindings_page(pg); /* what was typed stays in the form */
		return;
	}
	rz__page_redirect(pg, "/access", "bound");
}

static void post_bindings(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	json_t *t;

	if (pg == NULL) {
		return;
	}
	if ((t = tenants(pg)) == NULL) {
		rz__form_problem(pg, "labels", "Labels",
		                 "Each label is key=value, as team=a, separated by commas");
		bindings_page(pg);
		return;
	}
	rz__page_act(pg, "POST", "/api/v1/accessbindings", "application/json",
	             json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:o, s:o}}", "apiVersion",
	                       "rezuscloud.io/v1", "kind", "AccessBinding", "metadata", "name",
	                       rz__form(pg, "name"), "spec", "role", rz__form(pg, "role"),
	                       "subjects", subjects(pg), "tenants", t),
	             binding_made);
}

/* ------------------------------------------------------------------ deleting one */

static void binding_deleted(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		json_decref(pg->form); /* the create form keeps nothing of this one */
		pg->form = NULL;
		bindings_page(pg);
		return;
	}
	rz__page_redirect(pg, "/access", "deleted");
}

static void post_delete_binding(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/accessbindings/%s", rz_req_param(req, "name"));
	rz__page_act(pg, "DELETE", target, NULL, NULL, binding_deleted);
}

int rz__binding_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
