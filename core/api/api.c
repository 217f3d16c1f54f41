/* core/api/api.c - the resource REST API: routes from the kind table, dispatched to the verbs. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api-int.h"
#include "core/model/kinds.h"

/* ------------------------------------------------------------------ dispatch */

static void handle(rz_req_t *req, void *ctx)
{
	struct rctx *c = ctx;
	const char *field = rz_kind_owner_field(c->k);
	const char *tenant = field ? rz_req_param(req, field) : NULL;
	const char *name = rz_req_param(req, "name");
	unsigned m = rz_req_method_bit(req);
	json_t *cur;

	if (c->form == FORM_COLLECTION || c->form == FORM_ALL || c->form == FORM_WATCH) {
		if (m == RZ_M_POST) {
			rz__handle_create(c, req, tenant);
		} else {
			rz__handle_list(c, req, tenant);
		}
	} else if ((m == RZ_M_GET || m == RZ_M_HEAD) && c->view == NULL &&
	           rz_req_query(req, "pretty") == NULL && !rz__wants_table(req)) {
		(void)rz__reply_stored(c, req, tenant, name);
	} else if (m == RZ_M_GET || m == RZ_M_HEAD) {
		cur = rz__current(c, req, tenant, name);
		if (cur != NULL && rz__wants_table(req)) {
			rz__table_get(c, req, tenant, cur);
		} else if (cur != NULL && c->view != NULL) {
			json_t *shown = c->view->of(cur);
			json_decref(cur);
			if (shown == NULL) {
				rz_reply_error(req, 500, NULL, "out of memory");
			} else {
				rz_reply_json(req, 200, shown);
			}
		} else if (cur != NULL) {
			rz_reply_json(req, 200, cur);
		}
	} else if (m == RZ_M_PUT) {
		rz__handle_replace(c, req, tenant, name);
	} else if (m == RZ_M_PATCH) {
		rz__handle_patch(c, req, tenant, name);
	} else {
		rz__handle_delete(c, req, tenant, name);
	}
}

/* ------------------------------------------------------------------ routes */

/* Which methods each form of route answers, as which verb. */
static const struct {
	enum form form;
	unsigned method;
	unsigned verb;
	const char *audit_verb;
} verb_table[] = {
	{ FORM_COLLECTION, RZ_M_GET, RZ_VERB_LIST, "list" },
	{ FORM_COLLECTION, RZ_M_POST, RZ_VERB_CREATE, "create" },
	{ FORM_ITEM, RZ_M_GET, RZ_VERB_GET, "get" },
	{ FORM_ITEM, RZ_M_PUT, RZ_VERB_UPDATE, "update" },
	{ FORM_ITEM, RZ_M_PATCH, RZ_VERB_PATCH, "patch" },
	{ FORM_ITEM, RZ_M_PATCH, RZ_VERB_CREATE, "patch" }, /* apply_creates: the apply only */
	{ FORM_ITEM, RZ_M_DELETE, RZ_VERB_DELETE, "delete" },
	{ FORM_STATUS, RZ_M_GET, RZ_VERB_GET, "get" },
	{ FORM_STATUS, RZ_M_PUT, RZ_VERB_STATUS, "update-status" },
	{ FORM_STATUS, RZ_M_PATCH, RZ_VERB_STATUS, "patch-status" },
	{ FORM_ALL, RZ_M_GET, RZ_VERB_LIST, "list" },
	/* audited and guarded as the list it streams, as a list's ?watch=true is */
	{ FORM_WATCH, RZ_M_GET, RZ_VERB_WATCH, "list" },
	{ FORM_SCALE, RZ_M_GET, RZ_VERB_GET, "get-scale" },
	{ FORM_SCALE, RZ_M_PUT, RZ_VERB_UPDATE, "update-scale" },
	{ FORM_SCALE, RZ_M_PATCH, RZ_VERB_PATCH, "patch-scale" },
};

#define VERBS (sizeof(verb_table) / sizeof(verb_table[0]))

/* Whether k's items take a PATCH only to create one by server-side apply (apply.c): a kind
 * created but never patched (Run, UpgradeRun), unless its create mints a secret that its
 * reply shows once, which kubectl apply would not show. */
static bool apply_creates(const rz_kind_t *k)
{
	return (k->verbs & RZ_VERB_PATCH) == 0 && !rz__kind_hooks_of(k)->mints_secret;
}

static int add_route(rz_api_t *api, const rz_kind_t *k, enum form f, const char *pattern,
                     rz_http_fn fn)
{
	char *copy = strdup(pattern);

	if (copy == NULL) {
		return -ENOMEM;
	}
	api->patterns[api->npatterns++] = copy;
	if (k == NULL) {
		api->ctxs[api->n] = (struct rctx){ api, NULL, f, NULL, NULL, NULL };
		api->routes[api->n] = (rz_route_t){ .methods = RZ_M_GET,
			                            .pattern = copy,
			                            .fn = fn,
			                            .ctx = &api->ctxs[api->n],
			                            .role = RZ_ROLE_VIEW,
			                            .verb = "get" };
		api->n++;
		return 0;
	}
	for (size_t v = 0; v < VERBS; v++) {
		unsigned verb = verb_table[v].verb;
		if (verb_table[v].form != f || (k->verbs & verb) == 0) {
			continue;
		}
		if (verb == RZ_VERB_LIST && (k->verbs & (RZ_VERB_LIST | RZ_VERB_WATCH)) == 0) {
			continue;
		}
		if (f == FORM_ITEM && verb == RZ_VERB_CREATE && !apply_creates(k)) {
			continue;
		}
		api->ctxs[api->n] =
		    (struct rctx){ api, k, f, rz_kind_owner(k), rz__kind_hooks_of(k), NULL };
		api->routes[api->n] = (rz_route_t){ .methods = verb_table[v].method,
			                            .pattern = copy,
			                            .fn = fn,
			                            .ctx = &api->ctxs[api->n],
			                            .role = rz_kind_role(k, verb),
			                            .kind = k->kind,
			                            .verb = verb_table[v].audit_verb };
		api->n++;
	}
	return 0;
}

/* "/api/v1", "/api/v1/tenants/{tenant}" or "/api/v1/users/{user}". */
static const char *scope_prefix(const rz_kind_t *k)
{
	switch (k->scope) {
	case RZ_SCOPE_TENANT:
		return "/api/v1/tenants/{tenant}";
	case RZ_SCOPE_USER:
		return "/api/v1/users/{user}";
	default:
		return "/api/v1";
	}
}

/* Kubernetes' /watch/ paths: /api/v1/watch/tenants/{tenant}/<plural> (and /api/v1/watch/<plural>
 * for every tenant), /api/v1/watch/<plural> for a global kind. They stream what the list's
 * ?watch=true streams, so that the OpenAPI document can describe the stream as an operation
 * of its own and the list's answer as the list alone. */
static int add_watch_routes(rz_api_t *api, const rz_kind_t *k)
{
	char p[192];
	int rc;

	if ((k->verbs & RZ_VERB_WATCH) == 0) {
		return 0;
	}
	snprintf(p, sizeof(p), "/api/v1/watch%s/%s", scope_prefix(k) + strlen("/api/v1"),
	         k->plural);
	rc = add_route(api, k, FORM_WATCH, p, handle);
	if (rc == 0 && k->scope == RZ_SCOPE_TENANT) {
		snprintf(p, sizeof(p), "/api/v1/watch/%s", k->plural);
		rc = add_route(api, k, FORM_WATCH, p, handle);
	}
	return rc;
}

/* Give the routes from first on a view, and a document; a view's routes are served at
 * their own paths only (Kubernetes' core v1 paths have no twin under the group path). */
static void set_view(rz_api_t *api, size_t first, const rz__view_t *view, const rz_route_doc_t *doc)
{
	for (size_t i = first; i < api->n; i++) {
		api->ctxs[i].view = view;
		api->routes[i].doc = doc;
		api->routes[i].no_alias = view == &rz__core_v1_view;
	}
}

/* The routes of every tenant's objects: /api/v1/<plural> (in core v1's shape for a kind it
 * has too, and then the group path's own), /api/v1/namespaces/{tenant}/<plural>[/{name}]
 * for such a kind. */
static int add_tenants_routes(rz_api_t *api, const rz_kind_t *k)
{
	const rz__core_v1_t *v1 = rz__kind_hooks_of(k)->core_v1;
	size_t first = api->n;
	char p[192];
	int rc;

	snprintf(p, sizeof(p), "/api/v1/%s", k->plural);
	rc = add_route(api, k, FORM_ALL, p, handle);
	if (rc != 0 || v1 == NULL) {
		return rc;
	}
	set_view(api, first, &rz__core_v1_view, v1->all);
	snprintf(p, sizeof(p), RZ_API_GROUP_PATH "/%s", k->plural);
	rc = add_route(api, k, FORM_ALL, p, handle);
	first = api->n;
	snprintf(p, sizeof(p), "/api/v1/namespaces/{tenant}/%s", k->plural);
	if (rc == 0 && (rc = add_route(api, k, FORM_COLLECTION, p, handle)) == 0) {
		set_view(api, first, &rz__core_v1_view, v1->list);
		first = api->n;
		snprintf(p, sizeof(p), "/api/v1/namespaces/{tenant}/%s/{name}", k->plural);
		rc = add_route(api, k, FORM_ITEM, p, handle);
		set_view(api, first, &rz__core_v1_view, v1->get);
	}
	return rc;
}

/* .../{name}/scale of a kind whose hooks name a scale field. */
static int add_scale_routes(rz_api_t *api, const rz_kind_t *k)
{
	size_t first = api->n;
	char p[192];
	int rc;

	if (rz__kind_hooks_of(k)->scale == NULL) {
		return 0;
	}
	snprintf(p, sizeof(p), "%s/%s/{name}/scale", scope_prefix(k), k->plural);
	rc = add_route(api, k, FORM_SCALE, p, rz__handle_scale);
	set_view(api, first, &rz__scale_view, rz__scale_doc);
	return rc;
}

#define EXTRA_ROUTES 8 /* routes besides the kinds' */
#define KIND_PATTERNS                                                                              \
	10 /* patterns of one kind at most: 3 forms, 4 of every tenant, scale, 2 watches */
#define KIND_V1_ROUTES 3 /* a core v1 kind's routes besides its verbs' */

static int build_routes(rz_api_t *api)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	char p[192];
	int rc = 0;

	/* a row of verb_table each, a second FORM_WATCH (every tenant's), a core v1 kind's
	 * own; some of no kind */
	api->routes = calloc(n * (VERBS + KIND_V1_ROUTES + 1) + EXTRA_ROUTES, sizeof(*api->routes));
	api->ctxs = calloc(n * (VERBS + KIND_V1_ROUTES + 1) + EXTRA_ROUTES, sizeof(*api->ctxs));
	api->patterns = calloc(n * KIND_PATTERNS + EXTRA_ROUTES, sizeof(*api->patterns));
	if (api->routes == NULL || api->ctxs == NULL || api->patterns == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const rz_kind_t *k = &kinds[i];
		static const struct {
			enum form f;
			const char *suffix;
		} forms[] = { { FORM_COLLECTION, "" },
			      { FORM_ITEM, "/{name}" },
			      { FORM_STATUS, "/{name}/status" } };
		if (k->outside_store) {
			continue; /* its own module routes it (Backup: core/api/backups.c) */
		}
		for (size_t j = 0; rc == 0 && j < 3; j++) {
			snprintf(p, sizeof(p), "%s/%s%s", scope_prefix(k), k->plural,
			         forms[j].suffix);
			rc = add_route(api, k, forms[j].f, p, handle);
		}
		if (rc == 0 && k->scope != RZ_SCOPE_GLOBAL) {
			rc = add_tenants_routes(api, k);
		}
		if (rc == 0) {
			rc = add_scale_routes(api, k);
		}
		rc = rc != 0 ? rc : add_watch_routes(api, k);
	}
	/* discovery is the kind table, no tenant's data: any signed-in user reads it (one with
	 * no role on the installation too: kubectl asks it before a tenant's objects) */
	if (rc == 0) {
		rc = add_route(api, NULL, FORM_COLLECTION, "/api/v1", rz__handle_discovery);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = rz__discovery_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE;
		rc = add_route(api, NULL, FORM_COLLECTION, "/api", rz__handle_api_versions);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = rz__api_versions_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE;
		rc = add_route(api, NULL, FORM_COLLECTION, "/apis", rz__handle_api_groups);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = rz__api_groups_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE;
		rc = add_route(api, NULL, FORM_ITEM,
		               "/api/v1/tenants/{tenant}/effectivepatches/{role}",
		               rz__handle_effective);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = rz__effective_doc;
		api->routes[api->n - 1].kind = api->kinds.config_patch->kind;
		rc = add_route(api, NULL, FORM_COLLECTION, "/api/v1/summary", rz__handle_summary);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = rz__summary_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE; /* role none: its tenants' counts */
	}
	return rc;
}

int rz_api_new(rz_api_t **out, rz_http_t *http, rz_store_t *store, rz_watch_hub_t *watches,
               rz_access_t *access, rz_workers_t *workers, rz_err_t *err)
{
	rz_api_t *api = calloc(1, sizeof(*api));
	int rc;

	*out = NULL;
	if (api == NULL) {
		return rz_err_set(err, -ENOMEM, "api: out of memory");
	}
	api->store = store;
	api->watches = watches;
	api->access = access;
	api->workers = workers;
	if (!rz__kinds_find(&api->kinds)) {
		rz_api_free(api);
		return rz_err_set(err, -ENOENT, "api: the kind table lacks a kind the API reads");
	}
	rc = build_routes(api);
	if (rc != 0) {
		rz_api_free(api);
		return rz_err_set(err, rc, "api: out of memory");
	}
	rc = rz_http_add_routes(http, api->routes, api->n, err);
	if (rc != 0) {
		rz_api_free(api);
		return rc;
	}
	*out = api;
	return 0;
}

int rz_api_add_aliases(rz_http_t *http, rz_err_t *err)
{
	int rc = rz_http_add_alias(http, "/api/v1/tenants/{tenant}",
	                           RZ_API_GROUP_PATH "/namespaces/{tenant}", err);

	rc = rc != 0 ? rc
	             : rz_http_add_alias(http, "/api/v1/watch/tenants/{tenant}",
	                                 RZ_API_GROUP_PATH "/watch/namespaces/{tenant}", err);
	return rc != 0 ? rc : rz_http_add_alias(http, "/api/v1", RZ_API_GROUP_PATH, err);
}

void rz_api_set_admit(rz_api_t *api, rz_api_admit_fn fn, void *arg)
{
	api->admit = fn;
	api->admit_arg = arg;
}

void rz_api_set_plugins(rz_api_t *api, struct rz_plugins *plugins)
{
	api->plugins = plugins;
}

void rz_api_free(rz_api_t *api)
{
	if (api == NULL) {
		return;
	}
	for (size_t i = 0; i < api->npatterns; i++) {
		free(api->patterns[i]);
	}
	free(api->patterns);
	free(api->routes);
	free(api->ctxs);
	free(api);
}
