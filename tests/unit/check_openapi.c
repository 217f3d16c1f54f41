/* tests/unit/check_openapi.c - the OpenAPI documents against the daemon's whole route table:
 * every route described and present, every error a Status with causes, operationIds
 * unique, path parameters declared, the group-version document and the index. */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/openapi.h"
#include "core/base/log.h"
#include "core/daemon.h"
#include "core/http/http.h"
#include "tests/unit/httpclient.h"

static char *dir;
static rz_config_t cfg;
static rz_daemon_t *d;

static void setup(void)
{
	char ddir[512], conf[600], text[2048];
	char *argv[] = { "rezuscloud", "-c", conf, NULL };
	char *envp[] = { NULL };
	const char *top = getenv("top_builddir");
	rz_cmdline_t cl;
	rz_err_t err = { 0 };

	dir = rzt_tmpdir();
	snprintf(ddir, sizeof(ddir), "%s/data", dir);
	snprintf(conf, sizeof(conf), "%s/rezus.conf", dir);
	snprintf(text, sizeof(text),
	         "server:\n  listen: 127.0.0.1:0\n  data_dir: %s\nplugin_dir: %s/plugins\n"
	         "plugins:\n  sim: {}\n",
	         ddir, top ? top : ".");
	rzt_write_file(conf, text);
	setenv("REZUSCLOUD_ADMIN_PASSWORD", "openapi-unit-pw", 1);
	memset(&cfg, 0, sizeof(cfg));
	rz_log_set_level(RZ_LOG_ERR);
	ck_assert_int_eq(rz_daemon_configure(3, argv, envp, &cl, &cfg, &err), 0);
	ck_assert_msg(rz_daemon_start(&d, &cfg, &err) == 0, "start: %s", err.msg);
	unsetenv("REZUSCLOUD_ADMIN_PASSWORD");
}

static void teardown(void)
{
	rz_daemon_free(d);
	rz_config_free(&cfg);
	rzt_rmrf(dir);
	free(dir);
}

/* The document's key for a route pattern: "{rest...}" is "{rest}". */
static void path_key(const char *pattern, char *out, size_t size)
{
	size_t o = 0;

	for (const char *p = pattern; *p != '\0' && o + 1 < size; p++) {
		if (strncmp(p, "...}", 4) == 0) {
			p += 2;
			continue;
		}
		out[o++] = *p;
	}
	out[o] = '\0';
}

static const char *method_key(unsigned bit)
{
	static const char *const names[] = { "get",    "head",    "post", "put",   "patch",
		                             "delete", "options", "LOCK", "UNLOCK" };

	for (unsigned i = 0; i < 9; i++) {
		if (bit == 1u << i) {
			return names[i];
		}
	}
	return "?";
}

static json_t *operation(json_t *doc, const char *key, unsigned bit)
{
	json_t *item = json_object_get(json_object_get(doc, "paths"), key);

	if (bit & (RZ_M_LOCK | RZ_M_UNLOCK)) {
		return json_object_get(json_object_get(item, "x-rezus-methods"), method_key(bit));
	}
	return json_object_get(item, method_key(bit));
}

/* Call fn on every operation of doc. */
static void each_op(json_t *doc, void (*fn)(const char *path, const char *m, json_t *op, void *),
                    void *arg)
{
	const char *path, *m;
	json_t *item, *op;

	json_object_foreach(json_object_get(doc, "paths"), path, item)
	{
		json_object_foreach(item, m, op)
		{
			if (strcmp(m, "parameters") == 0) {
				continue;
			}
			if (strcmp(m, "x-rezus-methods") == 0) {
				const char *lm;
				json_t *lop;
				json_object_foreach(op, lm, lop)
				{
					fn(path, lm, lop, arg);
				}
				continue;
			}
			fn(path, m, op, arg);
		}
	}
}

START_TEST(test_every_route_described_and_present)
{
	rz_http_t *h = rz_daemon_http(d);
	json_t *doc = rz_openapi_document(h, false);
	size_t n = rz_http_route_count(h), ops = 0, pages = 0;

	ck_assert_ptr_nonnull(doc);
	ck_assert_uint_gt(n, 50);
	for (size_t i = 0; i < n; i++) {
		const rz_route_t *r = rz_http_route_at(h, i);
		char key[256];
		path_key(rz_http_route_pattern(h, i), key, sizeof(key));
		if (strcmp(rz_http_route_pattern(h, i), r->pattern) != 0 ||
		    strncmp(r->pattern, "/apis/rezuscloud.io/", 20) == 0) {
			continue; /* the group form: test_one_path_form_each */
		}
		if (r->cookie) { /* the WebUI's pages are left out of the API's document */
			ck_assert_ptr_null(json_object_get(json_object_get(doc, "paths"), key));
			pages++;
			continue;
		}
		ck_assert_msg(rz_openapi_described(r),
		              "route %s (methods %#x) has no description: give it a rz_route_doc_t",
		              r->pattern, r->methods);
		for (unsigned bit = 1; bit <= RZ_M_UNLOCK; bit <<= 1) {
			json_t *op;
			if ((r->methods & bit) == 0 || bit == RZ_M_HEAD) {
				continue;
			}
			op = operation(doc, key, bit);
			ck_assert_msg(op != NULL, "%s %s is missing from the document",
			              method_key(bit), key);
			ck_assert_str_ne(json_string_value(json_object_get(op, "summary")),
			                 "(not described)");
			ops++;
		}
	}
	ck_assert_uint_gt(ops, 90);
	ck_assert_uint_gt(pages, 3);
	/* the routes the document used to miss */
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/auth/login", RZ_M_POST));
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/audit", RZ_M_GET));
	{ /* the audit read's filters, the WebUI's outcome among them */
		json_t *p;
		size_t i, found = 0;
		json_array_foreach(
		    json_object_get(operation(doc, "/api/v1/audit", RZ_M_GET), "parameters"), i, p)
		{
			const char *name = json_string_value(json_object_get(p, "name"));
			found += name != NULL &&
			         (strcmp(name, "outcome") == 0 || strcmp(name, "since") == 0 ||
			          strcmp(name, "user") == 0);
		}
		ck_assert_uint_eq(found, 3);
	}
	ck_assert_ptr_nonnull(
	    operation(doc, "/api/v1/tenants/{tenant}/runs/{name}/approve", RZ_M_POST));
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/tenants/{tenant}/runs/{name}/log", RZ_M_GET));
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/tenants/{tenant}/kubeconfig", RZ_M_GET));
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        operation(doc, "/api/v1/tenants/{tenant}/export", RZ_M_GET), "operationId")),
	    "exportTenant");
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/nodegroups", RZ_M_GET));
	ck_assert_ptr_nonnull(operation(doc, "/tfstate/{tenant}", RZ_M_LOCK));
	ck_assert_ptr_nonnull(operation(doc, "/readyz", RZ_M_GET));
	ck_assert_ptr_nonnull(
	    operation(doc, "/api/v1/tenants/{tenant}/upgrades/{name}/cancel", RZ_M_POST));
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/backups/{name}", RZ_M_DELETE));
	json_decref(doc);
}
END_TEST

START_TEST(test_undescribed_route_is_named)
{
	static const rz_route_t bare = { .methods = RZ_M_GET, .pattern = "/x", .role = 2 };
	static const rz_route_t verb = { .methods = RZ_M_POST,
		                         .pattern = "/x/{name}/poke",
		                         .role = 2,
		                         .kind = "Tenant",
		                         .verb = "poke" };
	static const rz_route_doc_t get_only[] = {
		{ .method = RZ_M_GET, .id = "a", .summary = "a" }, { 0 }
	};
	rz_route_t half = {
		.methods = RZ_M_GET | RZ_M_DELETE, .pattern = "/y", .role = 2, .doc = get_only
	};
	rz_route_t kinded = { .methods = RZ_M_GET,
		              .pattern = "/api/v1/tenants/{name}",
		              .role = 2,
		              .kind = "Tenant",
		              .verb = "get" };

	ck_assert(!rz_openapi_described(&bare));
	ck_assert(!rz_openapi_described(&verb));
	ck_assert(!rz_openapi_described(&half));
	half.methods = RZ_M_GET;
	ck_assert(rz_openapi_described(&half));
	ck_assert(rz_openapi_described(&kinded));
}
END_TEST

struct uniq {
	json_t *seen;
	int dups, missing;
};

static void collect_id(const char *path, const char *m, json_t *op, void *arg)
{
	struct uniq *u = arg;
	const char *id = json_string_value(json_object_get(op, "operationId"));

	if (id == NULL) {
		fprintf(stderr, "# %s %s: no operationId\n", m, path);
		u->missing++;
		return;
	}
	if (json_object_get(u->seen, id) != NULL) {
		fprintf(stderr, "# %s %s: operationId %s also at %s\n", m, path, id,
		        json_string_value(json_object_get(u->seen, id)));
		u->dups++;
	}
	json_object_set_new(u->seen, id, json_string(path));
}

START_TEST(test_operation_ids_unique)
{
	for (int gv = 0; gv < 2; gv++) {
		json_t *doc = rz_openapi_document(rz_daemon_http(d), gv);
		struct uniq u = { json_object(), 0, 0 };
		each_op(doc, collect_id, &u);
		ck_assert_int_eq(u.missing, 0);
		ck_assert_int_eq(u.dups, 0);
		ck_assert_uint_gt(json_object_size(u.seen), 50);
		/* stable names a client generator keeps */
		ck_assert_ptr_nonnull(json_object_get(u.seen, "patchTenant"));
		ck_assert_ptr_nonnull(json_object_get(u.seen, "listNodeGroup"));
		ck_assert_ptr_nonnull(json_object_get(u.seen, "watchNodeGroupList"));
		ck_assert_ptr_nonnull(json_object_get(u.seen, gv ? "listNodeGroupForAllNamespaces"
		                                                 : "listNodeGroupForAllTenants"));
		json_decref(u.seen);
		json_decref(doc);
	}
}
END_TEST

struct errs {
	const rz_http_t *h;
	int bad, errors;
};

/* The lock holder's info (tofu reads it) is the one error body that is no Status. */
static int other_code(const rz_http_t *h, const char *path, const char *m)
{
	for (size_t i = 0; i < rz_http_route_count(h); i++) {
		const rz_route_t *r = rz_http_route_at(h, i);
		char key[256];
		path_key(rz_http_route_pattern(h, i), key, sizeof(key));
		for (const rz_route_doc_t *doc = r->doc;
		     strcmp(key, path) == 0 && doc != NULL && doc->method != 0; doc++) {
			if (strcasecmp(method_key(doc->method), m) == 0) {
				return doc->other_code;
			}
		}
	}
	return 0;
}

static void check_errors(const char *path, const char *m, json_t *op, void *arg)
{
	struct errs *e = arg;
	const char *code;
	json_t *resp;

	json_object_foreach(json_object_get(op, "responses"), code, resp)
	{
		const char *schema = json_string_value(json_object_get(
		    json_object_get(
		        json_object_get(json_object_get(resp, "content"), "application/json"),
		        "schema"),
		    "$ref"));
		if (atoi(code) < 400) {
			continue;
		}
		e->errors++;
		if ((schema == NULL || strcmp(schema, "#/components/schemas/Status") != 0) &&
		    atoi(code) != other_code(e->h, path, m)) {
			fprintf(stderr, "# %s %s: %s is not a Status\n", m, path, code);
			e->bad++;
		}
	}
}

START_TEST(test_every_error_is_a_status_with_causes)
{
	json_t *doc = rz_openapi_document(rz_daemon_http(d), false);
	json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
	json_t *details = json_object_get(
	    json_object_get(json_object_get(schemas, "Status"), "properties"), "details");
	json_t *causes = json_object_get(
	    json_object_get(json_object_get(schemas, "StatusDetails"), "properties"), "causes");
	json_t *cause = json_object_get(json_object_get(schemas, "StatusCause"), "properties");
	struct errs e = { rz_daemon_http(d), 0, 0 };

	ck_assert_str_eq(json_string_value(json_object_get(details, "$ref")),
	                 "#/components/schemas/StatusDetails");
	ck_assert_str_eq(json_string_value(json_object_get(causes, "type")), "array");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(causes, "items"), "$ref")),
	    "#/components/schemas/StatusCause");
	ck_assert_ptr_nonnull(json_object_get(cause, "field"));
	ck_assert_ptr_nonnull(json_object_get(cause, "reason"));
	ck_assert_ptr_nonnull(json_object_get(cause, "message"));
	each_op(doc, check_errors, &e);
	ck_assert_int_eq(e.bad, 0);
	ck_assert_int_gt(e.errors, 300);
	{ /* a write refused for its fields: 422, and the guard's 401/403 */
		json_t *r = json_object_get(
		    operation(doc, "/api/v1/tenants/{tenant}/nodegroups", RZ_M_POST), "responses");
		ck_assert_ptr_nonnull(json_object_get(r, "201"));
		ck_assert_ptr_nonnull(json_object_get(r, "422"));
		ck_assert_ptr_nonnull(json_object_get(r, "401"));
		ck_assert_ptr_nonnull(json_object_get(r, "403"));
	}
	json_decref(doc);
}
END_TEST

START_TEST(test_what_the_server_really_answers)
{
	json_t *doc = rz_openapi_document(rz_daemon_http(d), false);
	json_t *del =
	    json_object_get(operation(doc, "/api/v1/tenants/{name}", RZ_M_DELETE), "responses");
	json_t *ng = json_object_get(json_object_get(json_object_get(doc, "components"), "schemas"),
	                             "NodeGroup");
	json_t *pc = json_object_get(
	    json_object_get(json_object_get(json_object_get(ng, "properties"), "spec"),
	                    "properties"),
	    "providerConfig");
	json_t *lock = operation(doc, "/tfstate/{tenant}", RZ_M_LOCK);
	json_t *login = operation(doc, "/api/v1/auth/login", RZ_M_POST);

	/* a tenant's delete starts its destroy run: 202; 200 once gone */
	ck_assert_ptr_nonnull(json_object_get(del, "202"));
	ck_assert_ptr_nonnull(json_object_get(del, "200"));
	ck_assert(json_is_true(json_object_get(pc, "additionalProperties")));
	/* security: bearer, basic for /tfstate, none for login and probes */
	ck_assert_ptr_nonnull(
	    json_object_get(json_array_get(json_object_get(lock, "security"), 0), "basic"));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(lock, "responses"), "423"));
	ck_assert_uint_eq(json_array_size(json_object_get(login, "security")), 0);
	ck_assert_ptr_nonnull(
	    json_object_get(json_array_get(json_object_get(doc, "security"), 0), "bearer"));
	ck_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(json_object_get(json_object_get(doc, "components"),
	                                                     "securitySchemes"),
	                                     "basic"),
	                     "scheme")),
	                 "basic");
	ck_assert_str_eq(json_string_value(json_object_get(
	                     json_array_get(json_object_get(doc, "servers"), 0), "url")),
	                 "/");
	json_decref(doc);
}
END_TEST

/* Every {x} of a path is a declared path parameter (openapi-typescript's "path?: never"). */
START_TEST(test_path_parameters_declared)
{
	json_t *doc = rz_openapi_document(rz_daemon_http(d), false);
	const char *path;
	json_t *item;
	int bad = 0, seen = 0;

	json_object_foreach(json_object_get(doc, "paths"), path, item)
	{
		json_t *params = json_object_get(item, "parameters");
		for (const char *p = strchr(path, '{'); p != NULL; p = strchr(p + 1, '{')) {
			const char *end = strchr(p, '}');
			bool found = false;
			size_t i;
			json_t *prm;
			json_array_foreach(params, i, prm)
			{
				const char *name = json_string_value(json_object_get(prm, "name"));
				found |= strlen(name) == (size_t)(end - p - 1) &&
				         strncmp(name, p + 1, (size_t)(end - p - 1)) == 0 &&
				         json_is_true(json_object_get(prm, "required")) &&
				         strcmp(json_string_value(json_object_get(prm, "in")),
				                "path") == 0;
			}
			if (!found) {
				fprintf(stderr, "# %s: %.*s not declared\n", path,
				        (int)(end - p + 1), p);
				bad++;
			}
			seen++;
		}
	}
	ck_assert_int_eq(bad, 0);
	ck_assert_int_gt(seen, 40);
	json_decref(doc);
}
END_TEST

START_TEST(test_group_version_document)
{
	json_t *doc = rz_openapi_document(rz_daemon_http(d), true);
	json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
	json_t *g = json_array_get(json_object_get(json_object_get(schemas, "NodeGroup"),
	                                           "x-kubernetes-group-version-kind"),
	                           0);
	json_t *patch = operation(
	    doc, "/apis/rezuscloud.io/v1/namespaces/{tenant}/nodegroups/{name}", RZ_M_PATCH);
	json_t *pg = json_object_get(patch, "x-kubernetes-group-version-kind");
	json_t *params = json_object_get(patch, "parameters"), *prm;
	bool field_validation = false;
	size_t i;

	ck_assert_str_eq(json_string_value(json_object_get(g, "group")), "rezuscloud.io");
	ck_assert_str_eq(json_string_value(json_object_get(g, "version")), "v1");
	ck_assert_str_eq(json_string_value(json_object_get(g, "kind")), "NodeGroup");
	ck_assert_str_eq(json_string_value(json_object_get(pg, "kind")), "NodeGroup");
	/* kubectl's server-side validation check: a fieldValidation parameter on the PATCH */
	json_array_foreach(params, i, prm)
	{
		field_validation |=
		    strcmp(json_string_value(json_object_get(prm, "name")), "fieldValidation") == 0;
	}
	ck_assert(field_validation);
	/* merge patch and JSON patch: kubectl must not send a strategic merge patch */
	ck_assert_ptr_nonnull(
	    json_object_get(json_object_get(json_object_get(patch, "requestBody"), "content"),
	                    "application/merge-patch+json"));
	ck_assert_ptr_nonnull(
	    json_object_get(json_object_get(json_object_get(patch, "requestBody"), "content"),
	                    "application/json-patch+json"));
	ck_assert_ptr_null(
	    json_object_get(json_object_get(json_object_get(patch, "requestBody"), "content"),
	                    "application/strategic-merge-patch+json"));
	/* only the kinds' routes */
	ck_assert_ptr_null(json_object_get(json_object_get(doc, "paths"), "/api/v1/auth/login"));
	ck_assert_ptr_null(json_object_get(json_object_get(doc, "paths"), "/readyz"));
	ck_assert_ptr_nonnull(operation(
	    doc, "/apis/rezuscloud.io/v1/namespaces/{tenant}/runs/{name}/approve", RZ_M_POST));
	json_decref(doc);
}
END_TEST

/* Each document holds one form of each path: the native /api/v1 form, or the group's. */
START_TEST(test_one_path_form_each)
{
	for (int gv = 0; gv < 2; gv++) {
		json_t *doc = rz_openapi_document(rz_daemon_http(d), gv);
		const char *path;
		json_t *item;
		int group = 0, native = 0;

		json_object_foreach(json_object_get(doc, "paths"), path, item)
		{
			group += strncmp(path, "/apis/rezuscloud.io/", 20) == 0;
			native += strncmp(path, "/api/v1", 7) == 0;
		}
		ck_assert_int_eq(gv ? native : group, 0);
		ck_assert_int_gt(gv ? group : native, 40);
		if (gv) { /* and nothing else: the kinds' routes */
			ck_assert_int_eq(group,
			                 (int)json_object_size(json_object_get(doc, "paths")));
		}
		json_decref(doc);
	}
}
END_TEST

/* A list's 200 is the list alone; the stream is the watch operation's, at Kubernetes' /watch/
 * path (test_watch_paths in check_api.c serves it). */
START_TEST(test_list_and_watch_apart)
{
	json_t *doc = rz_openapi_document(rz_daemon_http(d), false);
	json_t *list = json_object_get(
	    json_object_get(
	        json_object_get(operation(doc, "/api/v1/tenants/{tenant}/nodegroups", RZ_M_GET),
	                        "responses"),
	        "200"),
	    "content");
	json_t *watch = operation(doc, "/api/v1/watch/tenants/{tenant}/nodegroups", RZ_M_GET);
	json_t *wc =
	    json_object_get(json_object_get(json_object_get(watch, "responses"), "200"), "content");

	ck_assert_uint_eq(json_object_size(list), 1);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(list, "application/json"), "schema"), "$ref")),
	    "#/components/schemas/NodeGroupList");
	ck_assert_str_eq(json_string_value(json_object_get(watch, "operationId")),
	                 "watchNodeGroupList");
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(wc, "application/x-ndjson"), "schema"), "$ref")),
	    "#/components/schemas/WatchEvent");
	ck_assert_ptr_nonnull(json_object_get(wc, "text/event-stream"));
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/watch/nodegroups", RZ_M_GET));
	ck_assert_ptr_nonnull(operation(doc, "/api/v1/watch/tenants", RZ_M_GET));
	ck_assert_ptr_null(operation(doc, "/api/v1/watch/backups", RZ_M_GET));
	json_decref(doc);
}
END_TEST

START_TEST(test_index)
{
	json_t *idx = rz_openapi_index(rz_daemon_http(d));
	json_t *paths = json_object_get(idx, "paths");
	const char *all = json_string_value(
	    json_object_get(json_object_get(paths, "api/v1"), "serverRelativeURL"));
	const char *gv = json_string_value(
	    json_object_get(json_object_get(paths, "apis/rezuscloud.io/v1"), "serverRelativeURL"));

	ck_assert_uint_eq(json_object_size(paths), 2);
	ck_assert_ptr_nonnull(all);
	ck_assert_ptr_nonnull(gv);
	ck_assert_int_eq(strncmp(all, "/openapi/v3/api/v1?hash=", 24), 0);
	ck_assert_int_eq(strncmp(gv, "/openapi/v3/apis/rezuscloud.io/v1?hash=", 39), 0);
	ck_assert_uint_eq(strlen(gv + 39), 64);
	json_decref(idx);
}
END_TEST

/* ------------------------------------------------------------------ descriptions */

struct described {
	json_t *schemas; /* the document's components.schemas */
	int missing, seen;
};

static void walk_schema(struct described *w, json_t *s, const char *at);

/* A property is described by its own description, or, being a $ref, by the description
 * of the schema it names (OpenAPI 3.0 ignores a $ref's siblings). */
static bool has_description(struct described *w, json_t *s)
{
	const char *desc = json_string_value(json_object_get(s, "description"));
	const char *r = json_string_value(json_object_get(s, "$ref"));
	json_t *all = json_object_get(s, "allOf");

	if (desc != NULL && desc[0] != '\0') {
		return true;
	}
	if (r != NULL && strncmp(r, "#/components/schemas/", 21) == 0) {
		return has_description(w, json_object_get(w->schemas, r + 21));
	}
	return json_array_size(all) == 1 && has_description(w, json_array_get(all, 0));
}

static void walk_props(struct described *w, json_t *s, const char *at)
{
	const char *name;
	json_t *p;

	json_object_foreach(json_object_get(s, "properties"), name, p)
	{
		char sub[512];
		snprintf(sub, sizeof(sub), "%s.%s", at, name);
		w->seen++;
		if (!has_description(w, p)) {
			fprintf(stderr, "# %s: no description\n", sub);
			w->missing++;
		}
		walk_schema(w, p, sub);
	}
}

/* Every property under s, through items, additionalProperties and allOf/oneOf/anyOf. */
static void walk_schema(struct described *w, json_t *s, const char *at)
{
	static const char *const lists[] = { "allOf", "oneOf", "anyOf" };
	char sub[512];
	json_t *x;
	size_t i;

	if (!json_is_object(s)) {
		return;
	}
	walk_props(w, s, at);
	snprintf(sub, sizeof(sub), "%s[]", at);
	walk_schema(w, json_object_get(s, "items"), sub);
	snprintf(sub, sizeof(sub), "%s{}", at);
	walk_schema(w, json_object_get(s, "additionalProperties"), sub);
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		json_array_foreach(json_object_get(s, lists[l]), i, x)
		{
			walk_schema(w, x, at);
		}
	}
}

/* The schemas of an operation's parameters, request body and responses. */
static void walk_op(const char *path, const char *m, json_t *op, void *arg)
{
	struct described *w = arg;
	const char *key, *type;
	json_t *v, *media, *p;
	char at[512];
	size_t i;

	json_array_foreach(json_object_get(op, "parameters"), i, p)
	{
		const char *pd = json_string_value(json_object_get(p, "description"));
		w->seen++;
		if (pd == NULL || pd[0] == '\0') {
			fprintf(stderr, "# %s %s: parameter %s: no description\n", m, path,
			        json_string_value(json_object_get(p, "name")));
			w->missing++;
		}
	}
	json_object_foreach(json_object_get(json_object_get(op, "requestBody"), "content"), type,
	                    media)
	{
		snprintf(at, sizeof(at), "%s %s request %s", m, path, type);
		walk_schema(w, json_object_get(media, "schema"), at);
	}
	json_object_foreach(json_object_get(op, "responses"), key, v)
	{
		json_object_foreach(json_object_get(v, "content"), type, media)
		{
			snprintf(at, sizeof(at), "%s %s %s %s", m, path, key, type);
			walk_schema(w, json_object_get(media, "schema"), at);
		}
	}
}

/* kubectl explain shows each field's description: every property of every schema the
 * documents hold has one, the kinds' spec, status and metadata fields, nested ones and
 * conditions among them, and so do the schemas of the routes' bodies and parameters. */
START_TEST(test_every_property_described)
{
	for (int gv = 0; gv < 2; gv++) {
		json_t *doc = rz_openapi_document(rz_daemon_http(d), gv);
		struct described w = {
			json_object_get(json_object_get(doc, "components"), "schemas"), 0, 0
		};
		const char *name;
		json_t *s;

		json_object_foreach(w.schemas, name, s)
		{
			if (!has_description(&w, s)) {
				fprintf(stderr, "# schema %s: no description\n", name);
				w.missing++;
			}
			walk_schema(&w, s, name);
		}
		each_op(doc, walk_op, &w);
		ck_assert_int_eq(w.missing, 0);
		ck_assert_int_gt(w.seen, 600);
		json_decref(doc);
	}
}
END_TEST

/* The test above can fail: a property without a description is found and named. */
START_TEST(test_undescribed_property_found)
{
	struct described w = { json_pack("{s:{s:s}}", "Named", "description", "x"), 0, 0 };
	json_t *s = json_pack("{s:{s:{s:s}, s:{s:s, s:{s:{s:{s:s}}}}, s:{s:s}}}", "properties", "a",
	                      "description", "a", "b", "type", "array", "items", "properties", "c",
	                      "type", "string", "r", "$ref", "#/components/schemas/Named");

	walk_schema(&w, s, "S");
	ck_assert_int_eq(w.seen, 4);
	ck_assert_int_eq(w.missing, 2); /* b and b[].c; a has one, r its target's */
	json_decref(s);
	json_decref(w.schemas);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("openapi");
	TCase *tc = tcase_create("openapi");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_every_route_described_and_present);
	tcase_add_test(tc, test_undescribed_route_is_named);
	tcase_add_test(tc, test_operation_ids_unique);
	tcase_add_test(tc, test_every_error_is_a_status_with_causes);
	tcase_add_test(tc, test_what_the_server_really_answers);
	tcase_add_test(tc, test_path_parameters_declared);
	tcase_add_test(tc, test_group_version_document);
	tcase_add_test(tc, test_index);
	tcase_add_test(tc, test_one_path_form_each);
	tcase_add_test(tc, test_list_and_watch_apart);
	tcase_add_test(tc, test_every_property_described);
	tcase_add_test(tc, test_undescribed_property_found);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
