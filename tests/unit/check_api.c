/* tests/unit/check_api.c - the resource REST API over real HTTP, in process on
 * 127.0.0.1 port 0: verbs, errors, lists, watches, concurrency, discovery, metrics. */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/api/api.h"
#include "core/model/columns.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/events.h"
#include "core/base/log.h"
#include "core/api/metrics.h"
#include "core/api/openapi.h"
#include "core/store/store.h"
#include "core/api/watch.h"
#include "tests/unit/httpclient.h"

#define WINDOW 20

/* obj as compact JSON, in a buffer reused by the next call. */
static const char *json_dumps_static(const json_t *obj)
{
	static char buf[1024];

	if (json_dumpb(obj, buf, sizeof(buf) - 1, JSON_COMPACT | JSON_SORT_KEYS) >=
	    sizeof(buf) - 1) {
		return "(too long)";
	}
	buf[json_dumpb(obj, buf, sizeof(buf) - 1, JSON_COMPACT | JSON_SORT_KEYS)] = '\0';
	return buf;
}

static struct event_base *base;
static char *dir;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *store;
static rz_watch_hub_t *hub;
static rz_http_t *srv;
static rz_api_t *api;
static rz_openapi_t *openapi;
static int port;

static void setup(void)
{
	rz_http_opts_t opts = { .max_stream_backlog = 64 * 1024 };
	rz_err_t err = { 0 };
	char path[512];

	rz_log_set_level(RZ_LOG_ERR);
	dir = rzt_tmpdir();
	snprintf(path, sizeof(path), "%s/rezus.db", dir);
	base = event_base_new();
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_int_eq(rz_store_new(&store, db, bus, WINDOW, &err), 0);
	ck_assert_int_eq(
	    rz_watch_hub_new(&hub, base, store, bus, 300, opts.max_stream_backlog, &err), 0);
	ck_assert_int_eq(rz_http_new(&srv, base, &opts, &err), 0);
	ck_assert_int_eq(rz_api_add_aliases(srv, &err), 0);
	ck_assert_int_eq(rz_api_new(&api, srv, store, hub, NULL, NULL, &err), 0);
	ck_assert_int_eq(rz_openapi_new(&openapi, srv, &err), 0);
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:0", &err), 0);
	port = rz_http_port(srv);
}

static void teardown(void)
{
	rz_watch_hub_free(hub);
	rz_http_free(srv);
	rz_api_free(api);
	rz_openapi_free(openapi);
	rz_store_free(store);
	rz_bus_free(bus);
	rz_db_close(db);
	event_base_free(base);
	rzt_rmrf(dir);
	free(dir);
}

/* Extra request header lines of the next calls ("Accept: ...\r\n"), and the last reply's
 * Content-Type. */
static const char *extra = "";
static char last_ctype[256];
static char last_head[8192]; /* the last reply's status line and headers */

/* One request; returns the status code and, when out is given, the body as JSON. */
static int call(const char *method, const char *path, const char *ctype, const char *body,
                json_t **out)
{
	size_t size = 4096 + strlen(path) + (body ? strlen(body) : 0);
	char *raw = malloc(size);
	rzt_response_t r;
	int code;

	ck_assert_ptr_nonnull(raw);
	snprintf(raw, size, "%s %s HTTP/1.1\r\nHost: t\r\n%s%s%s%sContent-Length: %zu\r\n\r\n%s",
	         method, path, extra, ctype ? "Content-Type: " : "", ctype ? ctype : "",
	         ctype ? "\r\n" : "", body ? strlen(body) : 0, body ? body : "");
	rzt_request(base, port, raw, &r);
	free(raw);
	code = r.code;
	last_ctype[0] = '\0';
	rzt_header(&r, "Content-Type", last_ctype, sizeof(last_ctype));
	snprintf(last_head, sizeof(last_head), "%s", r.head);
	if (out != NULL) {
		json_error_t jerr;
		*out = json_loads(r.body, 0, &jerr);
		ck_assert_msg(*out != NULL, "not JSON (%d): %s", code, r.body);
	}
	rzt_response_free(&r);
	return code;
}

static int post(const char *path, const char *body, json_t **out)
{
	return call("POST", path, "application/json", body, out);
}

static int put(const char *path, const char *body, json_t **out)
{
	return call("PUT", path, "application/json", body, out);
}

static int patch(const char *path, const char *body, json_t **out)
{
	return call("PATCH", path, "application/merge-patch+json", body, out);
}

static int json_patch(const char *path, const char *body, json_t **out)
{
	return call("PATCH", path, "application/json-patch+json", body, out);
}

static int get(const char *path, json_t **out)
{
	return call("GET", path, NULL, NULL, out);
}

/* A string at a dotted path ("metadata.name", "items.0.metadata.name"). */
static const char *at(json_t *j, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p && j; p = strtok_r(NULL, ".", &save)) {
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(p)) : json_object_get(j, p);
	}
	if (json_is_integer(j)) {
		static char num[32];
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(j));
		return num;
	}
	return json_string_value(j);
}

/* The causes of an Invalid Status as "field|reason|message;..." */
static char *causes_text(json_t *st)
{
	static char buf[4096];
	size_t i, n = 0;
	json_t *c;

	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(st, "details"), "causes"), i, c)
	{
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s|%s|%s", i ? ";" : "",
		                      at(c, "field"), at(c, "reason"), at(c, "message"));
	}
	return buf;
}

static void make_tenant(const char *name)
{
	char body[256];
	json_t *j;

	snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{}}", name);
	ck_assert_int_eq(post("/api/v1/tenants", body, &j), 201);
	json_decref(j);
}

static void make_nodegroup(const char *tenant, const char *name, const char *labels)
{
	char path[128], body[512];
	json_t *j;

	snprintf(path, sizeof(path), "/api/v1/tenants/%s/nodegroups", tenant);
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"name\":\"%s\",\"labels\":%s},"
	         "\"spec\":{\"role\":\"worker\",\"providerClass\":\"sim\"}}",
	         name, labels ? labels : "{}");
	ck_assert_int_eq(post(path, body, &j), 201);
	json_decref(j);
}

/* ------------------------------------------------------------------ create, get, list */

START_TEST(test_create_get_tenant)
{
	json_t *j;

	ck_assert_int_eq(
	    post("/api/v1/tenants",
	         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\","
	         "\"metadata\":{\"name\":\"acme\",\"labels\":{\"env\":\"prod\"}},"
	         "\"spec\":{\"clusterProvider\":\"sim\"},\"status\":{\"phase\":\"Ready\"}}",
	         &j),
	    201);
	ck_assert_str_eq(at(j, "apiVersion"), "rezuscloud.io/v1");
	ck_assert_str_eq(at(j, "kind"), "Tenant");
	ck_assert_str_eq(at(j, "metadata.resourceVersion"), "1");
	ck_assert_str_eq(at(j, "metadata.generation"), "1");
	ck_assert_uint_eq(strlen(at(j, "metadata.uid")), 36);
	ck_assert_str_eq(at(j, "metadata.finalizers.0"), "rezuscloud.io/teardown");
	ck_assert_str_eq(at(j, "spec.clusterProvider"), "sim");
	ck_assert_str_eq(at(j, "spec.kubernetesVersion"), "1.35.0"); /* defaults */
	ck_assert_str_eq(at(j, "spec.talosVersion"), "1.12.0");
	ck_assert_str_eq(at(j, "spec.podSubnets.0"), "10.244.0.0/16");
	/* create ignores a given status: a new tenant starts Pending */
	ck_assert_str_eq(json_dumps_static(json_object_get(j, "status")),
	                 "{\"phase\":\"Pending\"}");
	json_decref(j);

	ck_assert_int_eq(get("/api/v1/tenants/acme", &j), 200);
	ck_assert_str_eq(at(j, "metadata.name"), "acme");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/status", &j), 200);
	ck_assert_str_eq(at(j, "metadata.name"), "acme");
	json_decref(j);

	ck_assert_int_eq(post("/api/v1/tenants", "{\"metadata\":{\"name\":\"acme\"}}", &j), 409);
	ck_assert_str_eq(at(j, "reason"), "AlreadyExists");
	ck_assert_str_eq(at(j, "message"), "tenants \"acme\" already exists");
	json_decref(j);

	ck_assert_int_eq(get("/api/v1/tenants/nope", &j), 404);
	ck_assert_str_eq(at(j, "reason"), "NotFound");
	ck_assert_str_eq(at(j, "message"), "tenants \"nope\" not found");
	ck_assert_str_eq(at(j, "details.name"), "nope");
	json_decref(j);
}
END_TEST

START_TEST(test_tenant_validation)
{
	json_t *j;

	ck_assert_int_eq(post("/api/v1/tenants",
	                      "{\"metadata\":{\"name\":\"Bad_Name\",\"colour\":1},"
	                      "\"spec\":{\"podSubnets\":[\"10.244.0.0/16\",\"10.0.0.1/8\"],"
	                      "\"kubernetesVersion\":\"v1.35\",\"controlPlaneEndpoint\":7,"
	                      "\"flavour\":\"x\"},\"extra\":true}",
	                      &j),
	                 422);
	ck_assert_str_eq(at(j, "reason"), "Invalid");
	ck_assert_str_eq(at(j, "details.kind"), "Tenant");
	ck_assert_str_eq(
	    causes_text(j),
	    "extra|FieldValueInvalid|unknown field;"
	    "metadata.name|FieldValueInvalid|must consist of lower case alphanumeric "
	    "characters or '-', and must start and end with an alphanumeric character "
	    "(e.g. 'my-name' or '123-abc');"
	    "metadata.colour|FieldValueInvalid|unknown field;"
	    "spec.kubernetesVersion|FieldValueInvalid|must be a version such as 1.35.0;"
	    "spec.controlPlaneEndpoint|FieldValueInvalid|expected a string, got a number;"
	    "spec.podSubnets[1]|FieldValueInvalid|host bits must be zero (did you mean "
	    "10.0.0.0/8?);"
	    "spec.flavour|FieldValueInvalid|unknown field");
	json_decref(j);
	/* nothing was written */
	ck_assert_int_eq(rz_store_revision(store), 0);

	ck_assert_int_eq(
	    post("/api/v1/tenants",
	         "{\"metadata\":{\"name\":\"t\"},\"spec\":{\"podSubnets\":[\"10.96.0.0/12\"],"
	         "\"serviceSubnets\":[\"10.96.0.0/12\"]}}",
	         &j),
	    422);
	ck_assert_str_eq(causes_text(j), "spec.serviceSubnets[0]|FieldValueInvalid|must not equal "
	                                 "spec.podSubnets[0]");
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants", "{\"kind\":\"NodeGroup\",\"metadata\":{}}", &j),
	                 422);
	ck_assert_str_eq(causes_text(j),
	                 "kind|FieldValueNotSupported|supported values: \"Tenant\"");
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants", "{\"spec\":{}}", &j), 422);
	ck_assert_str_eq(causes_text(j),
	                 "metadata.name|FieldValueRequired|name or generateName is required");
	json_decref(j);
}
END_TEST

/* fieldValidation: Strict (the default) refuses what the schema does not declare, Warn drops
 * it with a Warning header each, Ignore drops it; anything else is a 400 naming it. */
START_TEST(test_field_validation)
{
	static const char body[] =
	    "{\"metadata\":{\"name\":\"%s\",\"colour\":1},"
	    "\"spec\":{\"flavour\":\"x\",\"podSubnets\":[\"10.244.0.0/16\"]},"
	    "\"extra\":true}";
	char text[512];
	json_t *j;

	snprintf(text, sizeof(text), body, "strict");
	ck_assert_int_eq(post("/api/v1/tenants?fieldValidation=Strict", text, &j), 422);
	ck_assert_str_eq(causes_text(j), "extra|FieldValueInvalid|unknown field;"
	                                 "metadata.colour|FieldValueInvalid|unknown field;"
	                                 "spec.flavour|FieldValueInvalid|unknown field");
	json_decref(j);
	ck_assert_ptr_null(strstr(last_head, "Warning:"));

	snprintf(text, sizeof(text), body, "warned");
	ck_assert_int_eq(post("/api/v1/tenants?fieldValidation=Warn", text, &j), 201);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "spec"), "flavour"));
	ck_assert_ptr_null(json_object_get(j, "extra"));
	json_decref(j);
	ck_assert_ptr_nonnull(
	    strstr(last_head, "Warning: 299 - \"unknown field \\\"extra\\\"\"\r\n"));
	ck_assert_ptr_nonnull(
	    strstr(last_head, "Warning: 299 - \"unknown field \\\"metadata.colour\\\"\"\r\n"));
	ck_assert_ptr_nonnull(
	    strstr(last_head, "Warning: 299 - \"unknown field \\\"spec.flavour\\\"\"\r\n"));

	snprintf(text, sizeof(text), body, "ignored");
	ck_assert_int_eq(post("/api/v1/tenants?fieldValidation=Ignore", text, &j), 201);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "metadata"), "colour"));
	json_decref(j);
	ck_assert_ptr_null(strstr(last_head, "Warning:"));

	/* a member given twice: refused, unless warned about (the last one counts) */
	ck_assert_int_eq(
	    post("/api/v1/tenants", "{\"metadata\":{\"name\":\"a\",\"name\":\"twice\"}}", NULL),
	    400);
	ck_assert_int_eq(post("/api/v1/tenants?fieldValidation=Warn",
	                      "{\"metadata\":{\"name\":\"a\",\"name\":\"twice\"}}", &j),
	                 201);
	ck_assert_str_eq(at(j, "metadata.name"), "twice");
	json_decref(j);
	ck_assert_ptr_nonnull(strstr(last_head, "Warning: 299 - \"duplicate field at line 1"));

	/* a status write takes it too; a patch's result is what is checked */
	ck_assert_int_eq(patch("/api/v1/tenants/warned?fieldValidation=Warn",
	                       "{\"spec\":{\"talosVersion\":\"1.12.1\",\"colour\":\"x\"}}", &j),
	                 200);
	ck_assert_str_eq(at(j, "spec.talosVersion"), "1.12.1");
	json_decref(j);
	ck_assert_ptr_nonnull(strstr(last_head, "unknown field \\\"spec.colour\\\""));
	ck_assert_int_eq(patch("/api/v1/tenants/warned/status?fieldValidation=Ignore",
	                       "{\"status\":{\"phase\":\"Ready\",\"shade\":1}}", &j),
	                 200);
	ck_assert_str_eq(at(j, "status.phase"), "Ready");
	ck_assert_ptr_null(json_object_get(json_object_get(j, "status"), "shade"));
	json_decref(j);

	ck_assert_int_eq(post("/api/v1/tenants?fieldValidation=Lenient", text, &j), 400);
	ck_assert_str_eq(at(j, "message"), "fieldValidation: Unsupported value: \"Lenient\": "
	                                   "supported values: \"Ignore\", \"Strict\", \"Warn\"");
	json_decref(j);
}
END_TEST

START_TEST(test_bad_bodies)
{
	json_t *j;

	ck_assert_int_eq(post("/api/v1/tenants", "{\"metadata\": {\"name\": }", &j), 400);
	ck_assert_str_eq(at(j, "reason"), "BadRequest");
	ck_assert_str_eq(at(j, "message"),
	                 "malformed JSON at line 1, column 23 (byte 23): unexpected token");
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants", "[1]", &j), 400);
	ck_assert_str_eq(at(j, "message"), "the request body must be a JSON object");
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants", "{\"a\":1,\"a\":2}", &j), 400);
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "text/yaml", "a: 1", &j), 415);
	ck_assert_str_eq(at(j, "reason"), "UnsupportedMediaType");
	ck_assert_str_eq(at(j, "message"),
	                 "unsupported media type 'text/yaml': POST requests take application/json "
	                 "or application/yaml");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", NULL, "{}", &j), 415);
	json_decref(j);
	make_tenant("acme");
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme", "application/json", "{}", &j), 415);
	ck_assert_str_eq(at(j, "message"), "unsupported media type 'application/json': PATCH "
	                                   "requests take application/merge-patch+json, "
	                                   "application/json-patch+json or "
	                                   "application/apply-patch+yaml");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/json; charset=utf-8",
	                      "{\"metadata\":{\"name\":\"b\"}}", &j),
	                 201);
	json_decref(j);
}
END_TEST

/* Bodies may be YAML, as kubectl sends them: one document, a mapping. */
START_TEST(test_yaml_bodies)
{
	json_t *j;

	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/yaml",
	                      "apiVersion: rezuscloud.io/v1\nkind: Tenant\nmetadata:\n  name: yam\n"
	                      "spec:\n  clusterProvider: sim\n  podSubnets: [10.244.0.0/16]\n",
	                      &j),
	                 201);
	ck_assert_str_eq(at(j, "metadata.name"), "yam");
	ck_assert_str_eq(json_string_value(json_array_get(
	                     json_object_get(json_object_get(j, "spec"), "podSubnets"), 0)),
	                 "10.244.0.0/16");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/yaml",
	                      "metadata:\n  name: [unclosed\n", &j),
	                 400);
	ck_assert_str_eq(at(j, "message"), "malformed YAML: body:3:1: YAML syntax error: did not "
	                                   "find expected ',' or ']'");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/yaml",
	                      "metadata: {name: a}\n---\nmetadata: {name: b}\n", &j),
	                 400);
	ck_assert_str_eq(at(j, "message"),
	                 "the request body must be one YAML document, a mapping (got 2 documents)");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/yaml",
	                      "metadata: {name: a}\nmetadata: {name: b}\n", &j),
	                 400);
	ck_assert_str_eq(at(j, "message"), "malformed YAML: body:2: duplicate key 'metadata'");
	json_decref(j);
	/* a typed value keeps its type: a quoted number is a string, and fails validation */
	ck_assert_int_eq(call("POST", "/api/v1/tenants/yam/nodegroups", "application/yaml",
	                      "metadata: {name: w}\nspec: {role: worker, count: \"2\", "
	                      "providerClass: sim}\n",
	                      &j),
	                 422);
	json_decref(j);
}
END_TEST

START_TEST(test_nodegroup_scoping_and_validation)
{
	json_t *j;

	ck_assert_int_eq(post("/api/v1/tenants/ghost/nodegroups",
	                      "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"role\":\"worker\","
	                      "\"providerClass\":\"sim\"}}",
	                      &j),
	                 404);
	ck_assert_str_eq(at(j, "message"), "tenants \"ghost\" not found");
	json_decref(j);
	make_tenant("acme");
	ck_assert_int_eq(post("/api/v1/tenants/acme/nodegroups",
	                      "{\"metadata\":{\"name\":\"w\",\"tenant\":\"other\"},\"spec\":{}}",
	                      &j),
	                 400);
	ck_assert_str_eq(
	    at(j, "message"),
	    "the tenant of the object (other) does not match the tenant on the URL (acme)");
	json_decref(j);
	ck_assert_int_eq(
	    post("/api/v1/tenants/acme/nodegroups",
	         "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"role\":\"boss\",\"count\":"
	         "1001,\"providerClass\":\":x\",\"labels\":{\"a b\":\"c\"},\"taints\":"
	         "[{\"key\":\"k\",\"effect\":\"Never\"}]}}",
	         &j),
	    422);
	ck_assert_str_eq(
	    causes_text(j),
	    "spec.role|FieldValueNotSupported|supported values: \"controlplane\", "
	    "\"worker\";"
	    "spec.count|FieldValueInvalid|must be between 0 and 1000;"
	    "spec.providerClass|FieldValueInvalid|must be <plugin>[:<class>], e.g. "
	    "oci:VM.Standard.A1.Flex;"
	    "spec.labels[a b]|FieldValueInvalid|name part must consist of alphanumeric "
	    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
	    "character;"
	    "spec.taints[0].effect|FieldValueNotSupported|supported values: "
	    "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/nodegroups",
	                      "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"role\":\"worker\","
	                      "\"providerClass\":\"oci:VM.Standard.A1.Flex\"}}",
	                      &j),
	                 201);
	ck_assert_str_eq(at(j, "metadata.tenant"), "acme");
	ck_assert_str_eq(at(j, "spec.count"), "1");
	json_decref(j);
	/* the role is immutable */
	ck_assert_int_eq(patch("/api/v1/tenants/acme/nodegroups/w",
	                       "{\"spec\":{\"role\":\"controlplane\"}}", &j),
	                 422);
	ck_assert_str_eq(causes_text(j),
	                 "spec.role|FieldValueInvalid|field is immutable (was \"worker\")");
	json_decref(j);
	/* cluster-wide list and per-tenant list */
	make_tenant("beta");
	make_nodegroup("beta", "a", NULL);
	ck_assert_int_eq(get("/api/v1/nodegroups", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "NodeGroupList");
	ck_assert_str_eq(at(j, "items.0.metadata.tenant"), "acme");
	ck_assert_str_eq(at(j, "items.1.metadata.tenant"), "beta");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/beta/nodegroups", &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ updates */

START_TEST(test_replace_and_status)
{
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "w", NULL);
	/* PUT needs a resourceVersion */
	ck_assert_int_eq(put("/api/v1/tenants/acme/nodegroups/w",
	                     "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"role\":\"worker\","
	                     "\"providerClass\":\"sim\",\"count\":2}}",
	                     &j),
	                 422);
	ck_assert_str_eq(causes_text(j), "metadata.resourceVersion|FieldValueRequired|must be "
	                                 "specified for an update");
	json_decref(j);
	/* a name that is not the URL's */
	ck_assert_int_eq(
	    put("/api/v1/tenants/acme/nodegroups/w",
	        "{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"2\"},\"spec\":{}}", &j),
	    400);
	ck_assert_str_eq(at(j, "message"),
	                 "the name of the object (x) does not match the name on the URL (w)");
	json_decref(j);
	/* PUT ignores status and bumps generation on a spec change */
	ck_assert_int_eq(put("/api/v1/tenants/acme/nodegroups/w",
	                     "{\"metadata\":{\"name\":\"w\",\"resourceVersion\":\"2\"},\"spec\":{"
	                     "\"role\":\"worker\",\"providerClass\":\"sim\",\"count\":2},"
	                     "\"status\":{\"total\":99}}",
	                     &j),
	                 200);
	ck_assert_str_eq(at(j, "spec.count"), "2");
	ck_assert_str_eq(at(j, "metadata.generation"), "2");
	ck_assert_str_eq(at(j, "metadata.resourceVersion"), "3");
	ck_assert_ptr_null(json_object_get(j, "status"));
	json_decref(j);
	/* a stale resourceVersion is a conflict */
	ck_assert_int_eq(put("/api/v1/tenants/acme/nodegroups/w",
	                     "{\"metadata\":{\"name\":\"w\",\"resourceVersion\":\"2\"},\"spec\":{"
	                     "\"role\":\"worker\",\"providerClass\":\"sim\",\"count\":3}}",
	                     &j),
	                 409);
	ck_assert_str_eq(at(j, "reason"), "Conflict");
	ck_assert_str_eq(at(j, "message"),
	                 "Operation cannot be fulfilled on nodegroups \"w\": the object has been "
	                 "modified; please apply your changes to the latest version and try again");
	json_decref(j);
	/* /status takes status and ignores spec */
	ck_assert_int_eq(put("/api/v1/tenants/acme/nodegroups/w/status",
	                     "{\"metadata\":{\"resourceVersion\":\"3\"},\"spec\":{\"count\":7},"
	                     "\"status\":{\"desired\":2,\"total\":1,\"ready\":1}}",
	                     &j),
	                 200);
	ck_assert_str_eq(at(j, "spec.count"), "2");
	ck_assert_str_eq(at(j, "status.total"), "1");
	ck_assert_str_eq(at(j, "metadata.generation"), "2");
	json_decref(j);
	ck_assert_int_eq(patch("/api/v1/tenants/acme/nodegroups/w/status",
	                       "{\"status\":{\"ready\":\"all\"}}", &j),
	                 422);
	ck_assert_str_eq(causes_text(j),
	                 "status.ready|FieldValueInvalid|expected an integer, got a string");
	json_decref(j);
	ck_assert_int_eq(
	    patch("/api/v1/tenants/acme/nodegroups/w/status", "{\"status\":{\"ready\":2}}", &j),
	    200);
	ck_assert_str_eq(at(j, "status.ready"), "2");
	ck_assert_str_eq(at(j, "status.total"), "1");
	json_decref(j);
}
END_TEST

/* JSON patch (RFC 6902) takes the way of a merge patch: validation, the resourceVersion,
 * the status subresource; a failed test is 422 Invalid, a malformed patch 400. */
START_TEST(test_json_patch)
{
	const char *ng = "/api/v1/tenants/acme/nodegroups/w";
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "w", "{\"tier\":\"a\"}");
	ck_assert_int_eq(
	    json_patch(ng,
	               "[{\"op\":\"test\",\"path\":\"/spec/role\",\"value\":\"worker\"},"
	               "{\"op\":\"replace\",\"path\":\"/spec/count\",\"value\":4},"
	               "{\"op\":\"add\",\"path\":\"/metadata/labels/example.com~1team\","
	               "\"value\":\"db\"},{\"op\":\"remove\",\"path\":\"/metadata/labels/tier\"}]",
	               &j),
	    200);
	ck_assert_str_eq(at(j, "spec.count"), "4");
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(j, "metadata"), "labels"), "example.com/team")),
	    "db");
	ck_assert_ptr_null(at(j, "metadata.labels.tier"));
	ck_assert_str_eq(at(j, "metadata.generation"), "2");
	json_decref(j);
	/* a failed test: 422, the cause on its path, nothing changed */
	ck_assert_int_eq(json_patch(ng,
	                            "[{\"op\":\"replace\",\"path\":\"/spec/count\",\"value\":5},"
	                            "{\"op\":\"test\",\"path\":\"/spec/count\",\"value\":3}]",
	                            &j),
	                 422);
	ck_assert_str_eq(at(j, "reason"), "Invalid");
	ck_assert_str_eq(causes_text(j), "/spec/count|FieldValueInvalid|operation 1 (test): test "
	                                 "failed: the value differs");
	json_decref(j);
	ck_assert_int_eq(get(ng, &j), 200);
	ck_assert_str_eq(at(j, "spec.count"), "4");
	json_decref(j);
	/* the result is validated as a merged document is */
	ck_assert_int_eq(
	    json_patch(ng, "[{\"op\":\"replace\",\"path\":\"/spec/count\",\"value\":\"x\"}]", &j),
	    422);
	ck_assert_str_eq(causes_text(j),
	                 "spec.count|FieldValueInvalid|expected an integer, got a string");
	json_decref(j);
	/* malformed: 400 naming the operation */
	ck_assert_int_eq(json_patch(ng, "{\"op\":\"add\"}", &j), 400);
	ck_assert_str_eq(at(j, "message"), "a JSON patch must be an array of operations");
	json_decref(j);
	ck_assert_int_eq(json_patch(ng,
	                            "[{\"op\":\"test\",\"path\":\"/spec\",\"value\":{}},"
	                            "{\"op\":\"merge\",\"path\":\"/spec\"}]",
	                            &j),
	                 400);
	ck_assert_str_eq(at(j, "message"), "invalid JSON patch: operation 1: \"op\" must be one of "
	                                   "add, remove, replace, move, copy, test");
	json_decref(j);
	/* a resourceVersion the patch leaves in the result is a precondition */
	ck_assert_int_eq(
	    json_patch(
	        ng,
	        "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\","
	        "\"value\":\"1\"},{\"op\":\"replace\",\"path\":\"/spec/count\",\"value\":6}]",
	        &j),
	    409);
	ck_assert_str_eq(at(j, "reason"), "Conflict");
	json_decref(j);
	/* the status subresource takes status only */
	ck_assert_int_eq(
	    json_patch("/api/v1/tenants/acme/nodegroups/w/status",
	               "[{\"op\":\"add\",\"path\":\"/status\",\"value\":{\"desired\":4,"
	               "\"total\":1,\"ready\":1}},{\"op\":\"replace\",\"path\":\"/spec/count\","
	               "\"value\":9}]",
	               &j),
	    200);
	ck_assert_str_eq(at(j, "status.total"), "1");
	ck_assert_str_eq(at(j, "spec.count"), "4");
	json_decref(j);
}
END_TEST

START_TEST(test_merge_patch)
{
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "w", "{\"tier\":\"a\",\"zone\":\"z1\"}");
	ck_assert_int_eq(patch("/api/v1/tenants/acme/nodegroups/w",
	                       "{\"metadata\":{\"labels\":{\"tier\":null}},\"spec\":{\"count\":4,"
	                       "\"labels\":{\"node\":\"x\"}}}",
	                       &j),
	                 200);
	ck_assert_ptr_null(at(j, "metadata.labels.tier"));
	ck_assert_str_eq(at(j, "metadata.labels.zone"), "z1");
	ck_assert_str_eq(at(j, "spec.count"), "4");
	ck_assert_str_eq(at(j, "spec.role"), "worker");
	ck_assert_str_eq(at(j, "metadata.generation"), "2");
	json_decref(j);
	/* labels only: no new generation */
	ck_assert_int_eq(patch("/api/v1/tenants/acme/nodegroups/w",
	                       "{\"metadata\":{\"labels\":{\"tier\":\"b\"}}}", &j),
	                 200);
	ck_assert_str_eq(at(j, "metadata.generation"), "2");
	json_decref(j);
	/* a resourceVersion in the patch is a precondition */
	ck_assert_int_eq(patch("/api/v1/tenants/acme/nodegroups/w",
	                       "{\"metadata\":{\"resourceVersion\":\"2\"},\"spec\":{\"count\":5}}",
	                       &j),
	                 409);
	json_decref(j);
	ck_assert_int_eq(patch("/api/v1/tenants/acme/nodegroups/nope", "{}", &j), 404);
	json_decref(j);
	ck_assert_int_eq(
	    patch("/api/v1/tenants/acme/nodegroups/w", "{\"spec\":{\"count\":-1}}", &j), 422);
	json_decref(j);
}
END_TEST

START_TEST(test_delete_finalizers_cascade)
{
	json_t *j;

	make_tenant("acme");
	make_tenant("keep");
	make_nodegroup("acme", "w", NULL);
	make_nodegroup("keep", "w", NULL);
	ck_assert_int_eq(
	    post("/api/v1/tenants/acme/configpatches",
	         "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"patch\":\"machine: {}\"}}", &j),
	    201);
	ck_assert_str_eq(at(j, "spec.targetRole"), "all");
	json_decref(j);
	/* a node group has no finalizer: gone at once */
	make_nodegroup("acme", "gone", NULL);
	ck_assert_int_eq(call("DELETE", "/api/v1/tenants/acme/nodegroups/gone", NULL, NULL, &j),
	                 200);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups/gone", &j), 404);
	json_decref(j);
	/* a tenant has one: 202, kept, marked */
	ck_assert_int_eq(call("DELETE", "/api/v1/tenants/acme", NULL, NULL, &j), 202);
	ck_assert_ptr_nonnull(at(j, "metadata.deletionTimestamp"));
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme", &j), 200);
	json_decref(j);
	/* no new content in a tenant being deleted */
	ck_assert_int_eq(post("/api/v1/tenants/acme/nodegroups",
	                      "{\"metadata\":{\"name\":\"late\"},\"spec\":{\"role\":\"worker\","
	                      "\"providerClass\":\"sim\"}}",
	                      &j),
	                 403);
	ck_assert_str_eq(at(j, "message"), "unable to create new content in tenant acme because it "
	                                   "is being deleted");
	json_decref(j);
	/* dropping the finalizer completes the delete, children included */
	ck_assert_int_eq(patch("/api/v1/tenants/acme", "{\"metadata\":{\"finalizers\":null}}", &j),
	                 200);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme", &j), 404);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/configpatches", &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups", &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	ck_assert_str_eq(at(j, "items.0.metadata.tenant"), "keep");
	json_decref(j);
	/* delete preconditions */
	ck_assert_int_eq(call("DELETE", "/api/v1/tenants/keep/nodegroups/w", "application/json",
	                      "{\"preconditions\":{\"resourceVersion\":\"1\"}}", &j),
	                 409);
	json_decref(j);
}
END_TEST

START_TEST(test_runs_and_generate_name)
{
	json_t *j;

	make_tenant("acme");
	ck_assert_int_eq(
	    post("/api/v1/tenants/acme/runs", "{\"spec\":{\"operation\":\"plan\"}}", &j), 201);
	/* named like the engine's runs: the kind's prefix and eight hex digits */
	ck_assert_int_eq(strncmp(at(j, "metadata.name"), "run-", 4), 0);
	ck_assert_uint_eq(strlen(at(j, "metadata.name")), 12);
	ck_assert_uint_eq(strspn(at(j, "metadata.name") + 4, "0123456789abcdef"), 8);
	ck_assert_str_eq(at(j, "spec.trigger"), "manual");
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/runs",
	                      "{\"spec\":{\"operation\":\"destroy\",\"trigger\":\"delete\"}}", &j),
	                 422);
	ck_assert_str_eq(
	    causes_text(j),
	    "spec.operation|FieldValueForbidden|destroy runs start when the tenant is "
	    "deleted;spec.trigger|FieldValueForbidden|runs created through the API are "
	    "manual");
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants", "{\"metadata\":{\"generateName\":\"dev-\"}}", &j),
	                 201);
	/* generateName: Kubernetes' five characters after it */
	ck_assert_int_eq(strncmp(at(j, "metadata.name"), "dev-", 4), 0);
	ck_assert_uint_eq(strlen(at(j, "metadata.name")), 9);
	ck_assert_uint_eq(strspn(at(j, "metadata.name") + 4, "bcdfghjklmnpqrstvwxz2456789"), 5);
	ck_assert_ptr_null(at(j, "metadata.generateName"));
	json_decref(j);
	/* verbs a kind does not offer are 405 */
	ck_assert_int_eq(call("PUT", "/api/v1/tenants/acme/runs/x", "application/json", "{}", &j),
	                 405);
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/machines", "{}", &j), 405);
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/providers", "{}", &j), 405);
	json_decref(j);
}
END_TEST

/* Every kind in the table: the collection lists, each verb the kind offers works and each
 * one it does not is 405, create validates, and status writes take status only. */
START_TEST(test_every_kind)
{
	static const struct {
		const char *plural, *create, *invalid, *status;
	} cases[] = {
		{ "tenants", "{\"spec\":{}}", "{\"spec\":{\"talosVersion\":\"x\"}}",
		  "{\"status\":{\"phase\":\"Ready\"}}" },
		{ "nodegroups", "{\"spec\":{\"role\":\"worker\",\"providerClass\":\"sim\"}}",
		  "{\"spec\":{\"role\":\"worker\"}}", "{\"status\":{\"ready\":1}}" },
		{ "configpatches", "{\"spec\":{\"patch\":\"a: 1\"}}",
		  "{\"spec\":{\"patch\":\"a: [\"}}", NULL },
		{ "machines", NULL, NULL, "{\"status\":{\"stage\":\"Running\"}}" },
		{ "runs", "{\"spec\":{\"operation\":\"apply\"}}",
		  "{\"spec\":{\"operation\":\"sing\"}}", "{\"status\":{\"phase\":\"Running\"}}" },
		{ "upgrades", "{\"spec\":{\"component\":\"talos\",\"targetVersion\":\"1.12.1\"}}",
		  "{\"spec\":{\"component\":\"talos\"}}", "{\"status\":{\"phase\":\"Pending\"}}" },
		{ "providers", NULL, NULL, NULL },
	};
	char coll[128], item[192], stat[208], body[512];
	json_t *j;

	make_tenant("acme");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const rz_kind_t *k = rz_kind_by_plural(cases[i].plural);
		const char *name = strcmp(cases[i].plural, "tenants") == 0 ? "t2" : "x";
		ck_assert_ptr_nonnull(k);
		if (k->scope == RZ_SCOPE_TENANT) {
			snprintf(coll, sizeof(coll), "/api/v1/tenants/acme/%s", k->plural);
		} else {
			snprintf(coll, sizeof(coll), "/api/v1/%s", k->plural);
		}
		snprintf(item, sizeof(item), "%s/%s", coll, name);
		snprintf(stat, sizeof(stat), "%s/status", item);
		ck_assert_int_eq(get(coll, &j), 200);
		json_decref(j);
		if (cases[i].create == NULL) {
			ck_assert_int_eq(post(coll, "{\"spec\":{}}", &j), 405);
			json_decref(j);
			ck_assert_int_eq(get(item, &j), 404);
			json_decref(j);
			if (cases[i].status != NULL) {
				/* written by the engine, not users: put one in the store directly
				 */
				rz_err_t err = { 0 };
				json_t *obj =
				    json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", name,
				              "tenant", "acme", "spec", "role", "worker");
				json_t *out = NULL;
				ck_assert_int_eq(rz_store_create(store, k, obj, NULL, &out, &err),
				                 0);
				json_decref(obj);
				json_decref(out);
				ck_assert_int_eq(patch(stat, cases[i].status, &j), 200);
				ck_assert_str_eq(at(j, "status.stage"), "Running");
				json_decref(j);
				ck_assert_int_eq(call("DELETE", item, NULL, NULL, &j), 405);
				json_decref(j);
			}
			continue;
		}
		ck_assert_msg(post(coll, cases[i].invalid, &j) == 422, "%s invalid", k->plural);
		json_decref(j);
		snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},%s", name,
		         cases[i].create + 1);
		ck_assert_msg(post(coll, body, &j) == 201, "%s create", k->plural);
		json_decref(j);
		ck_assert_int_eq(get(item, &j), 200);
		json_decref(j);
		if (cases[i].status != NULL) {
			ck_assert_msg(patch(stat, cases[i].status, &j) == 200, "%s status",
			              k->plural);
			ck_assert_ptr_nonnull(json_object_get(j, "status"));
			json_decref(j);
		} else {
			ck_assert_int_eq(patch(stat, "{\"status\":{}}", &j), 405);
			json_decref(j);
		}
		ck_assert_int_eq(patch(item, "{}", &j), (k->verbs & RZ_VERB_PATCH) ? 200 : 405);
		json_decref(j);
		ck_assert_int_eq(call("DELETE", item, NULL, NULL, &j),
		                 (k->verbs & RZ_VERB_DELETE) ? (k->finalizers ? 202 : 200) : 405);
		json_decref(j);
	}
}
END_TEST

/* ------------------------------------------------------------------ lists */

static char *names(json_t *list)
{
	static char buf[1024];
	size_t i, n = 0;
	json_t *o;

	buf[0] = '\0';
	json_array_foreach(json_object_get(list, "items"), i, o)
	{
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
		                      at(o, "metadata.name"));
	}
	return buf;
}

START_TEST(test_selectors)
{
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "a", "{\"tier\":\"web\",\"zone\":\"1\"}");
	make_nodegroup("acme", "b", "{\"tier\":\"db\"}");
	make_nodegroup("acme", "c", NULL);
	ck_assert_int_eq(get("/api/v1/nodegroups?labelSelector=tier%3Dweb", &j), 200);
	ck_assert_str_eq(names(j), "a");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?labelSelector=tier!%3Dweb", &j), 200);
	ck_assert_str_eq(names(j), "b,c"); /* != matches the object without the key */
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?labelSelector=tier%20notin%20(db)", &j), 200);
	ck_assert_str_eq(names(j), "a,c");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?labelSelector=tier%20in%20(db,web),!zone", &j),
	                 200);
	ck_assert_str_eq(names(j), "b");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?fieldSelector=metadata.name%3Dc", &j), 200);
	ck_assert_str_eq(names(j), "c");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?labelSelector=tier%20in%20web", &j), 400);
	ck_assert_str_eq(
	    at(j, "message"),
	    "invalid label selector 'tier in web': expected '(' after 'in' at position 8");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?fieldSelector=spec.role%3Dworker", &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "field 'spec.role' is not supported"));
	json_decref(j);
}
END_TEST

START_TEST(test_pagination)
{
	char path[512];
	char seen[1024] = "";
	const char *token = NULL;
	char tok[512] = "";
	json_t *j;
	int pages = 0;

	make_tenant("t1");
	make_tenant("t2");
	make_nodegroup("t1", "a", NULL);
	make_nodegroup("t1", "b", NULL);
	make_nodegroup("t2", "a", NULL);
	make_nodegroup("t2", "c", NULL);
	make_nodegroup("t2", "d", NULL);
	do {
		snprintf(path, sizeof(path), "/api/v1/nodegroups?limit=2%s%s",
		         tok[0] ? "&continue=" : "", tok);
		ck_assert_int_eq(get(path, &j), 200);
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s[%s]",
		         pages ? "" : "", names(j));
		token = at(j, "metadata.continue");
		snprintf(tok, sizeof(tok), "%s", token ? token : "");
		json_decref(j);
		pages++;
	} while (tok[0] != '\0' && pages < 10);
	ck_assert_str_eq(seen, "[a,b][a,c][d]");
	ck_assert_int_eq(get("/api/v1/nodegroups?limit=abc", &j), 400);
	ck_assert_str_eq(at(j, "message"), "invalid limit 'abc': use 1 to 10000");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?continue=%25%25%25", &j), 400);
	ck_assert_str_eq(at(j, "message"), "invalid continue token");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/nodegroups?limit=0", &j), 200); /* 0: no limit */
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 5);
	ck_assert_str_eq(at(j, "metadata.resourceVersion"), "7");
	json_decref(j);
}
END_TEST

START_TEST(test_pretty)
{
	rzt_response_t r;

	make_tenant("acme");
	rzt_request(base, port, "GET /api/v1/tenants/acme?pretty=true HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(strncmp(r.body,
	                         "{\n  \"apiVersion\": \"rezuscloud.io/v1\",\n  \"kind\": "
	                         "\"Tenant\",",
	                         50),
	                 0);
	rzt_response_free(&r);
}
END_TEST

/* ------------------------------------------------------------------ watches */

static void spin_for(double seconds)
{
	double until = rzt_now() + seconds;

	while (rzt_now() < until) {
		rzt_spin(base);
	}
}

START_TEST(test_watch_resume_with_last_event_id)
{
	rzt_stream_t *s;
	json_t *j;

	make_tenant("acme");
	s = rzt_stream_open(base, port, "GET /api/v1/tenants?watch=true HTTP/1.1\r\n\r\n");
	ck_assert_int_eq(s->head.code, 200);
	ck_assert(rzt_stream_until(base, s, "\n\n", 5));
	{
		static const char want[] =
		    "event: ADDED\nid: 1\ndata: {\"type\":\"ADDED\",\"object\":"
		    "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\"";
		ck_assert_int_eq(strncmp(s->body, want, sizeof(want) - 1), 0);
	}
	rzt_stream_close(s); /* the client goes away ... */
	spin_for(0.1);
	ck_assert_uint_eq(rz_watch_hub_count(hub), 0);
	make_tenant("b"); /* ... three writes happen ... */
	make_tenant("c");
	ck_assert_int_eq(
	    patch("/api/v1/tenants/acme", "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}", &j), 200);
	json_decref(j);
	/* ... and it comes back from where it was */
	s = rzt_stream_open(base, port,
	                    "GET /api/v1/tenants?watch=true HTTP/1.1\r\nLast-Event-ID: 1\r\n\r\n");
	ck_assert(rzt_stream_until(base, s, "id: 4\n", 5));
	spin_for(0.1);
	ck_assert_int_eq(rzt_stream_count(s, "event: "), 3);
	ck_assert_ptr_nonnull(strstr(s->body, "event: ADDED\nid: 2\n"));
	ck_assert(strstr(s->body, "id: 2\n") < strstr(s->body, "id: 3\n"));
	ck_assert_ptr_nonnull(strstr(s->body, "event: MODIFIED\nid: 4\n"));
	ck_assert_ptr_nonnull(strstr(s->body, "\"x\":\"y\""));
	/* and then live */
	make_tenant("d");
	ck_assert(rzt_stream_until(base, s, "id: 5\n", 5));
	ck_assert_int_eq(rzt_stream_count(s, "event: "), 4);
	ck_assert_uint_eq(rz_watch_hub_count(hub), 1);
	rzt_stream_close(s);
}
END_TEST

START_TEST(test_watch_too_old_is_410)
{
	rzt_stream_t *s;
	char name[16];

	for (int i = 0; i < WINDOW + 5; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		make_tenant(name);
	}
	s = rzt_stream_open(base, port,
	                    "GET /api/v1/tenants?watch=true&resourceVersion=2 HTTP/1.1\r\n\r\n");
	ck_assert_int_eq(s->head.code, 200);
	ck_assert(rzt_stream_until(base, s, "\n\n", 5));
	ck_assert_ptr_nonnull(strstr(s->body, "event: ERROR\n"));
	ck_assert_ptr_nonnull(strstr(s->body, "\"reason\":\"Expired\""));
	ck_assert_ptr_nonnull(strstr(s->body, "\"code\":410"));
	ck_assert_ptr_nonnull(strstr(s->body, "too old resource version: 2 (5)"));
	ck_assert(!rzt_stream_until(base, s, "never", 1)); /* the stream ends */
	ck_assert(s->closed);
	rzt_stream_close(s);
	/* within the window it resumes */
	s = rzt_stream_open(base, port,
	                    "GET /api/v1/tenants?watch=true&resourceVersion=24 HTTP/1.1\r\n\r\n");
	ck_assert(rzt_stream_until(base, s, "id: 25\n", 5));
	ck_assert_int_eq(rzt_stream_count(s, "event: "), 1);
	rzt_stream_close(s);
}
END_TEST

START_TEST(test_watch_selector_ndjson)
{
	rzt_stream_t *s;

	make_tenant("acme");
	s = rzt_stream_open(base, port,
	                    "GET /api/v1/tenants/acme/nodegroups?watch=1&labelSelector=tier%3Dweb "
	                    "HTTP/1.1\r\nAccept: application/x-ndjson\r\n\r\n");
	make_nodegroup("acme", "db", "{\"tier\":\"db\"}");
	make_nodegroup("acme", "web", "{\"tier\":\"web\"}");
	ck_assert(rzt_stream_until(base, s, "}\n", 5));
	spin_for(0.1);
	ck_assert_int_eq(strncmp(s->body, "{\"type\":\"ADDED\",\"object\":{", 26), 0);
	ck_assert_int_eq(rzt_stream_count(s, "\"type\":"), 1);
	ck_assert_ptr_nonnull(strstr(s->body, "\"name\":\"web\""));
	ck_assert_ptr_null(strstr(s->body, "\"name\":\"db\""));
	ck_assert(s->chunked);
	rzt_stream_close(s);
}
END_TEST

/* Kubernetes' /watch/ paths stream what a list's ?watch=true streams: one tenant's, every
 * tenant's, at the group path with the namespace, and a global kind's; no list is sent. */
START_TEST(test_watch_paths)
{
	static const char *const reqs[] = {
		"GET /api/v1/watch/tenants/acme/nodegroups HTTP/1.1\r\nAccept: "
		"application/x-ndjson\r\n\r\n",
		"GET /api/v1/watch/nodegroups?labelSelector=tier%3Dweb HTTP/1.1\r\nAccept: "
		"application/x-ndjson\r\n\r\n",
		"GET /apis/rezuscloud.io/v1/watch/namespaces/acme/nodegroups HTTP/1.1\r\nAccept: "
		"application/json\r\n\r\n",
		"GET /apis/rezuscloud.io/v1/watch/tenants HTTP/1.1\r\nAccept: "
		"application/json\r\n\r\n",
	};
	rzt_stream_t *s[4];

	make_tenant("acme");
	for (size_t i = 0; i < 4; i++) {
		s[i] = rzt_stream_open(base, port, reqs[i]);
		ck_assert_int_eq(s[i]->head.code, 200);
	}
	make_nodegroup("acme", "web", "{\"tier\":\"web\"}");
	for (size_t i = 0; i < 4; i++) {
		ck_assert_msg(rzt_stream_until(base, s[i], "}\n", 5), "%s", reqs[i]);
		ck_assert_int_eq(strncmp(s[i]->body, "{\"type\":\"ADDED\",\"object\":{", 26), 0);
		ck_assert_ptr_null(strstr(s[i]->body, "\"items\""));
		ck_assert_ptr_nonnull(
		    strstr(s[i]->body, i == 3 ? "\"name\":\"acme\"" : "\"name\":\"web\""));
		rzt_stream_close(s[i]);
	}
}
END_TEST

/* The "type" of each NDJSON event in body, with the object's name: "ADDED acme|...". */
static char *event_types(const char *body)
{
	static char out[512];
	size_t n = 0;

	out[0] = '\0';
	for (const char *p = strstr(body, "{\"type\":\""); p != NULL;
	     p = strstr(p + 1, "{\"type\":\"")) {
		const char *t = p + 9, *name = strstr(p, "\"name\":\"");
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%.*s %.*s|", (int)strcspn(t, "\""),
		                      t, name ? (int)strcspn(name + 8, "\"") : 0,
		                      name ? name + 8 : "");
	}
	return out;
}

/* A label change that moves an object into or out of a watch's selector is seen there as
 * ADDED or DELETED, live and when replayed. */
START_TEST(test_watch_label_transitions)
{
	static const char want[] = "ADDED acme|DELETED acme|ADDED acme|MODIFIED acme|DELETED acme|";
	rzt_stream_t *s, *r;
	json_t *j;

	make_tenant("acme");
	make_tenant("other"); /* revision 2 */
	s = rzt_stream_open(
	    base, port,
	    "GET /api/v1/tenants?watch=true&resourceVersion=2&labelSelector=env%3Dprod"
	    " HTTP/1.1\r\nAccept: application/x-ndjson\r\n\r\n");
	ck_assert_int_eq(s->head.code, 200);
#define PATCH(name, body)                                                                          \
	do {                                                                                       \
		ck_assert_int_eq(patch("/api/v1/tenants/" name, body, &j), 200);                   \
		json_decref(j);                                                                    \
	} while (0)
	PATCH("acme", "{\"metadata\":{\"labels\":{\"env\":\"prod\"}}}"); /* in */
	PATCH("other", "{\"metadata\":{\"labels\":{\"env\":\"dev\"}}}"); /* never in */
	PATCH("acme", "{\"metadata\":{\"labels\":{\"env\":\"dev\"}}}");  /* out */
	PATCH("acme", "{\"metadata\":{\"labels\":{\"env\":\"prod\"}}}"); /* in again */
	PATCH("acme", "{\"spec\":{\"kubernetesVersion\":\"1.35.1\"}}");  /* in, changed */
	PATCH("acme", "{\"metadata\":{\"labels\":null}}");               /* out */
#undef PATCH
	ck_assert(rzt_stream_until(base, s, "\"type\":\"DELETED\"", 5));
	for (int i = 0; i < 50 && rzt_stream_count(s, "{\"type\":") < 5; i++) {
		spin_for(0.05);
	}
	spin_for(0.1);
	ck_assert_str_eq(event_types(s->body), want);
	rzt_stream_close(s);
	/* replayed from the event log: the same */
	r = rzt_stream_open(
	    base, port,
	    "GET /api/v1/tenants?watch=true&resourceVersion=2&labelSelector=env%3Dprod"
	    " HTTP/1.1\r\nAccept: application/x-ndjson\r\n\r\n");
	for (int i = 0; i < 50 && rzt_stream_count(r, "{\"type\":") < 5; i++) {
		spin_for(0.05);
	}
	ck_assert_str_eq(event_types(r->body), want);
	rzt_stream_close(r);
}
END_TEST

START_TEST(test_watch_bookmarks_and_heartbeats)
{
	rzt_stream_t *s = rzt_stream_open(
	    base, port, "GET /api/v1/tenants?watch=true&allowWatchBookmarks=true HTTP/1.1\r\n\r\n");
	rzt_stream_t *h =
	    rzt_stream_open(base, port, "GET /api/v1/tenants?watch=true HTTP/1.1\r\n\r\n");

	make_tenant("acme");
	ck_assert(
	    rzt_stream_until(base, s,
	                     "event: BOOKMARK\nid: 1\ndata: {\"type\":\"BOOKMARK\",\"object\":{"
	                     "\"kind\":\"Tenant\",\"apiVersion\":\"rezuscloud.io/v1\",\"metadata\":"
	                     "{\"resourceVersion\":\"1\"}}}\n\n",
	                     3));
	ck_assert(rzt_stream_until(base, h, ": heartbeat\n\n", 3));
	ck_assert_ptr_null(strstr(h->body, "BOOKMARK"));
	rzt_stream_close(s);
	rzt_stream_close(h);
}
END_TEST

START_TEST(test_watch_slow_client_cut_off)
{
	rzt_conn_t *slow = rzt_open(port);
	char body[24000], filler[20001];
	json_t *j;

	memset(filler, 'x', sizeof(filler) - 1);
	filler[sizeof(filler) - 1] = '\0';
	make_tenant("acme");
	rzt_send(base, slow->fd, "GET /api/v1/tenants?watch=true HTTP/1.1\r\n\r\n", 43);
	spin_for(0.1);
	ck_assert_uint_eq(rz_watch_hub_count(hub), 1);
	/* never read from slow; write until the backlog limit cuts it off */
	for (int i = 0; i < 1000 && rz_watch_hub_count(hub) > 0; i++) {
		snprintf(body, sizeof(body), "{\"metadata\":{\"annotations\":{\"n\":\"%d%s\"}}}", i,
		         filler);
		ck_assert_int_eq(patch("/api/v1/tenants/acme", body, &j), 200);
		json_decref(j);
	}
	ck_assert_uint_eq(rz_watch_hub_count(hub), 0);
	/* the server carries on */
	ck_assert_int_eq(get("/api/v1/tenants/acme", &j), 200);
	json_decref(j);
	rzt_close(slow);
}
END_TEST

/* Each NDJSON event of body as "TYPE name rv" lines in out; returns how many. */
static int stream_events(const char *body, char (*out)[96], int max)
{
	int n = 0;

	for (const char *p = body; *p != '\0' && n < max;) {
		const char *nl = strchr(p, '\n');
		json_t *e = json_loadb(p, nl ? (size_t)(nl - p) : strlen(p), 0, NULL);
		if (e != NULL) {
			snprintf(out[n++], sizeof(out[0]), "%s %s %s", at(e, "type"),
			         at(e, "object.metadata.name"),
			         at(e, "object.metadata.resourceVersion"));
			json_decref(e);
		}
		if (nl == NULL) {
			break;
		}
		p = nl + 1;
	}
	return n;
}

/* A list or replay far larger than the stream backlog cap (64 KiB here) is sent in pages to
 * a client that reads: every object once, each object's changes in order, then live. */
START_TEST(test_watch_large_replay_paged)
{
	/* the list, and a replay of the last 15 changes (the window keeps 20) */
	static const char *const reqs[] = {
		"GET /api/v1/tenants?watch=true HTTP/1.1\r\nAccept: application/x-ndjson\r\n\r\n",
		"GET /api/v1/tenants?watch=true&resourceVersion=28 HTTP/1.1\r\n"
		"Accept: application/x-ndjson\r\n\r\n",
	};
	static char ev[128][96];
	char body[12000], filler[8001], name[16];
	json_t *j;

	memset(filler, 'x', sizeof(filler) - 1);
	filler[sizeof(filler) - 1] = '\0';
	for (int i = 0; i < 40; i++) {
		snprintf(body, sizeof(body),
		         "{\"metadata\":{\"name\":\"t%02d\",\"annotations\":{\"n\":\"%s\"}},"
		         "\"spec\":{}}",
		         i, filler);
		ck_assert_int_eq(post("/api/v1/tenants", body, &j), 201);
		json_decref(j);
	}
	for (size_t r = 0; r < 2; r++) {
		rzt_stream_t *s = rzt_stream_open(base, port, reqs[r]);
		int n, added = 0, mod = 0, del = 0;
		ck_assert_int_eq(s->head.code, 200);
		/* changes while it catches up: one to an object late in the list, one deletion */
		snprintf(name, sizeof(name), "%s", r == 0 ? "t38" : "t37");
		snprintf(body, sizeof(body), "/api/v1/tenants/%s", name);
		ck_assert_int_eq(patch(body, "{\"metadata\":{\"labels\":{\"late\":\"yes\"}}}", &j),
		                 200);
		json_decref(j);
		ck_assert_int_eq(
		    call("DELETE", r == 0 ? "/api/v1/tenants/t39" : "/api/v1/tenants/t36", NULL,
		         NULL, &j),
		    202); /* a finalizer holds it: MODIFIED with its deletionTimestamp */
		json_decref(j);
		make_tenant(r == 0 ? "zz" : "zy"); /* after the list: live */
		ck_assert(
		    rzt_stream_until(base, s, r == 0 ? "\"name\":\"zz\"" : "\"name\":\"zy\"", 10));
		n = stream_events(s->body, ev, 128);
		for (int i = 0; i < n; i++) {
			added += strncmp(ev[i], "ADDED ", 6) == 0;
			mod += strncmp(ev[i], "MODIFIED ", 9) == 0;
			del += strncmp(ev[i], "DELETED ", 8) == 0;
			/* no object is sent twice at the same revision */
			for (int k = 0; k < i; k++) {
				ck_assert_msg(strcmp(ev[i], ev[k]) != 0, "%s twice", ev[i]);
			}
		}
		ck_assert_int_eq(mod, r == 0 ? 2 : 4); /* the replay has the first round's too */
		ck_assert_int_eq(del, 0);
		/* the list: every object once, the changed ones perhaps through their events only;
		 * the replay: every ADDED after revision 28 (t28 to t39, zz, zy) */
		ck_assert_int_ge(added, r == 0 ? 40 - 2 + 1 : 14);
		ck_assert_int_le(added, r == 0 ? 40 + 1 : 14);
		ck_assert_ptr_nonnull(strstr(ev[n - 1], r == 0 ? "ADDED zz" : "ADDED zy"));
		rzt_stream_close(s);
	}
	spin_for(0.1);
	ck_assert_uint_eq(rz_watch_hub_count(hub), 0);
}
END_TEST

START_TEST(test_watch_bad_resource_version)
{
	json_t *j;

	ck_assert_int_eq(get("/api/v1/tenants?watch=true&resourceVersion=abc", &j), 400);
	ck_assert_str_eq(at(j, "message"), "invalid resourceVersion 'abc'");
	json_decref(j);
}
END_TEST

/* Revisions beyond the newest, or beyond int64, end a watch as Kubernetes does: 400 for
 * what is not a revision, an ERROR event with 410 for one that is not (yet) served. */
START_TEST(test_watch_resource_version_out_of_range)
{
	static const char *const bad[] = { "9223372036854775808", "-1", "1e3", "%2B1", "%201" };
	char req[256];
	rzt_stream_t *s;
	json_t *j;

	make_tenant("acme");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(req, sizeof(req), "/api/v1/tenants?watch=true&resourceVersion=%s", bad[i]);
		ck_assert_msg(get(req, &j) == 400, "%s", bad[i]);
		ck_assert_str_eq(at(j, "reason"), "BadRequest");
		json_decref(j);
	}
	s = rzt_stream_open(base, port,
	                    "GET /api/v1/tenants?watch=true&resourceVersion=9223372036854775807 "
	                    "HTTP/1.1\r\n\r\n");
	ck_assert_int_eq(s->head.code, 200);
	ck_assert(rzt_stream_until(base, s, "\n\n", 5));
	ck_assert_ptr_nonnull(strstr(s->body, "event: ERROR\n"));
	ck_assert_ptr_nonnull(strstr(s->body, "\"code\":410"));
	ck_assert_ptr_nonnull(
	    strstr(s->body, "too large resource version: 9223372036854775807 (current 1)"));
	ck_assert(!rzt_stream_until(base, s, "never", 1));
	ck_assert(s->closed);
	rzt_stream_close(s);
	s = rzt_stream_open(base, port,
	                    "GET /api/v1/tenants?watch=true HTTP/1.1\r\nLast-Event-ID: 7\r\n\r\n");
	ck_assert(rzt_stream_until(base, s, "\n\n", 5));
	ck_assert_ptr_nonnull(strstr(s->body, "too large resource version: 7 (current 1)"));
	rzt_stream_close(s);
	ck_assert_int_eq(
	    get("/api/v1/tenants?watch=true&resourceVersion=1&resourceVersionMatch=Exact", &j),
	    400);
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ streamed lists */

/* The whole decoded body of a GET (streamed or not), read to its end. */
static char *read_all(const char *path, size_t *len, char *head, size_t hsize)
{
	char raw[1024];
	rzt_stream_t *s;
	char *body;

	snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path);
	s = rzt_stream_open(base, port, raw);
	ck_assert_int_eq(s->head.code, 200);
	ck_assert(s->chunked);
	ck_assert(!rzt_stream_until(base, s, "\x01 never", 60));
	ck_assert_msg(s->closed, "the list did not end");
	snprintf(head, hsize, "%s", s->head.head);
	body = s->body ? s->body : strdup("");
	*len = s->len;
	s->body = NULL;
	rzt_stream_close(s);
	return body;
}

/* The list as the API rendered it before lists streamed: rz_store_list's objects in a
 * list object, dumped whole by jansson (compact, or indented for ?pretty), and a newline. */
static char *old_rendering(const char *kind, const rz_list_opts_t *o, bool pretty)
{
	const rz_kind_t *k = rz_kind_by_name(kind);
	json_t *items = NULL, *list;
	char lkind[96], rvs[24], *token = NULL, *text, *out;
	bool more = false;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_store_list(store, k, o, &items, &more, &err), 0);
	if (more) {
		token =
		    rz_api_continue_encode(k, json_array_get(items, json_array_size(items) - 1));
	}
	snprintf(lkind, sizeof(lkind), "%sList", k->kind);
	snprintf(rvs, sizeof(rvs), "%lld", (long long)rz_store_revision(store));
	list =
	    json_pack("{s:s, s:s, s:{s:s, s:s*}, s:o}", "apiVersion", RZ_API_VERSION, "kind", lkind,
	              "metadata", "resourceVersion", rvs, "continue", token, "items", items);
	text = json_dumps(list, pretty ? JSON_INDENT(2) : JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	out = malloc(strlen(text) + 2);
	sprintf(out, "%s\n", text);
	free(text);
	free(token);
	json_decref(list);
	return out;
}

static void expect_same(const char *path, const char *kind, const rz_list_opts_t *o, bool pretty)
{
	char head[8192];
	size_t len;
	char *got = read_all(path, &len, head, sizeof(head));
	char *want = old_rendering(kind, o, pretty);
	size_t i = 0;

	while (i < len && got[i] == want[i]) {
		i++;
	}
	ck_assert_msg(len == strlen(want) && i == len,
	              "%s: %zu bytes, want %zu; first difference at %zu: got '%.40s' want '%.40s'",
	              path, len, strlen(want), i, got + (i < len ? i : len), want + i);
	free(got);
	free(want);
}

/* A list of 10,000 objects (3,001 under valgrind, which takes a minute over the 10,000
 * commits alone: still many pages of every bound, RZ_LIST_PAGE_BYTES, RZ_LIST_TURN_ROWS and
 * RZ_SCAN_PAGE, and limits scaled with it) streams (chunked, in pages, the objects copied
 * as stored) and is
 * byte for byte the reply the API built whole before: compact and ?pretty, every tenant's
 * and one tenant's, with selectors, and limited pages with their continue tokens. */
START_TEST(test_large_list_streams_byte_identical)
{
	const rz_kind_t *ng = rz_kind_by_name("NodeGroup");
	rz_err_t err = { 0 };
	char path[1024], tok[512], url[512];
	json_t *j;
	const int n = getenv("RZT_VALGRIND") ? 3001 : 10000;
	const int page = n / 10, wpage = n * 3 / 100, t3 = (n + 1) / 3; /* t3: i % 3 == 2 */

	make_tenant("t1");
	make_tenant("t2");
	make_tenant("t3");
	/* n commits: without a sync each (the test is about reading them) */
	ck_assert_int_eq(rz_db_exec(db, "PRAGMA synchronous=OFF", &err), 0);
	for (int i = 0; i < n; i++) {
		char name[32], tenant[8];
		json_t *obj, *out = NULL;
		snprintf(name, sizeof(name), "ng-%05d", (i * 7919) % 10000);
		snprintf(tenant, sizeof(tenant), "t%d", 1 + i % 3);
		obj = json_pack("{s:{s:s, s:s, s:{s:s, s:s}, s:{s:s}}, s:{s:s, s:s, s:i, s:f}}",
		                "metadata", "name", name, "tenant", tenant, "labels", "tier",
		                i % 2 ? "web" : "db", "zone", i % 5 ? "a" : "b", "annotations",
		                "note", "caf\u00e9 \"quoted\" \\ / \u2603\n", "spec", "role",
		                "worker", "providerClass", "sim", "replicas", i % 7, "weight",
		                i / 3.0);
		ck_assert_int_eq(rz_store_create(store, ng, obj, NULL, &out, &err), 0);
		json_decref(obj);
		json_decref(out);
	}
	{
		rz_list_opts_t all = { 0 }, one = { .tenant = "t2" };
		rz_list_opts_t web = { .tenant = "t1" };
		rz_selector_t *sel = NULL;
		ck_assert_int_eq(rz_selector_parse("tier=web,zone!=b", &sel, &err), 0);
		web.labels = sel;
		expect_same("/api/v1/nodegroups", "NodeGroup", &all, false);
		expect_same("/api/v1/nodegroups?pretty=true", "NodeGroup", &all, true);
		expect_same("/api/v1/tenants/t2/nodegroups", "NodeGroup", &one, false);
		expect_same("/api/v1/tenants/t1/nodegroups?labelSelector=tier%3Dweb,zone!%3Db",
		            "NodeGroup", &web, false);
		/* pages: the continue token of each is the old one, and so is the next page */
		one.limit = page;
		snprintf(url, sizeof(url), "/api/v1/tenants/t2/nodegroups?limit=%d", page);
		expect_same(url, "NodeGroup", &one, false);
		ck_assert_int_eq(get(url, &j), 200);
		snprintf(tok, sizeof(tok), "%s", at(j, "metadata.continue"));
		json_decref(j);
		{
			char key[512];
			ck_assert(rz_api_continue_decode(tok, key, sizeof(key), &one.after_tenant,
			                                 &one.after_name));
			snprintf(path, sizeof(path),
			         "/api/v1/tenants/t2/nodegroups?limit=%d&continue=%s", page, tok);
			expect_same(path, "NodeGroup", &one, false);
			web.limit = wpage;
			snprintf(url, sizeof(url),
			         "/api/v1/tenants/t1/nodegroups?limit=%d&pretty=true"
			         "&labelSelector=tier%%3Dweb,zone!%%3Db",
			         wpage);
			expect_same(url, "NodeGroup", &web, true);
			web.after_tenant = one.after_tenant; /* a key from another tenant's page */
			web.after_name = one.after_name;
			snprintf(path, sizeof(path),
			         "/api/v1/tenants/t1/nodegroups?limit=%d&pretty=true&continue=%s"
			         "&labelSelector=tier%%3Dweb,zone!%%3Db",
			         wpage, tok);
			expect_same(path, "NodeGroup", &web, true);
		}
		/* a last page that is exactly full has no continue */
		one = (rz_list_opts_t){ .tenant = "t3", .limit = t3 };
		snprintf(url, sizeof(url), "/api/v1/tenants/t3/nodegroups?limit=%d", t3);
		expect_same(url, "NodeGroup", &one, false);
		/* empty lists */
		one = (rz_list_opts_t){ 0 };
		expect_same("/api/v1/configpatches", "ConfigPatch", &one, false);
		expect_same("/api/v1/configpatches?pretty=1", "ConfigPatch", &one, true);
		rz_selector_free(sel);
	}
}
END_TEST

/* The stored text goes out as it is, not parsed and dumped again (which the list did for
 * every object): a document stored with blanks jansson would not write comes back with
 * them, with a label selector too (the match parses, the copy does not); ?pretty re-renders. */
START_TEST(test_list_copies_stored_text)
{
	rz_err_t err = { 0 };
	json_t *j;
	rzt_response_t r;

	make_tenant("t1");
	ck_assert_int_eq(rz_db_exec(db,
	                            "UPDATE objects SET doc = replace(doc, '\"kind\":\"Tenant\"', "
	                            "'\"kind\" :  \"Tenant\"') WHERE kind = 'Tenant'",
	                            &err),
	                 0);
	rzt_request(base, port, "GET /api/v1/tenants HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "\"kind\" :  \"Tenant\""));
	rzt_response_free(&r);
	rzt_request(base, port,
	            "GET /api/v1/tenants?fieldSelector=metadata.name%3Dt1 HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "\"kind\" :  \"Tenant\""));
	rzt_response_free(&r);
	ck_assert_int_eq(get("/api/v1/tenants?pretty=true", &j), 200);
	ck_assert_str_eq(at(j, "items.0.kind"), "Tenant");
	json_decref(j);
}
END_TEST

/* HEAD of a list: the head of the streamed reply, no body, and the connection goes on. */
START_TEST(test_list_head)
{
	rzt_conn_t *c;
	rzt_response_t r;

	make_tenant("t1");
	c = rzt_open(port);
	rzt_send(base, c->fd, "HEAD /api/v1/tenants HTTP/1.1\r\n\r\n", 33);
	ck_assert(rzt_recv(base, c, &r, true));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rzt_send(base, c->fd, "GET /api/v1/tenants HTTP/1.1\r\n\r\n", 32);
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "\"name\":\"t1\""));
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

/* resourceVersion, resourceVersionMatch, limit and continue of a list, as Kubernetes checks
 * them; none may overflow or be ignored. */
START_TEST(test_list_parameters_out_of_range)
{
	static const struct {
		const char *query;
		int code;
		const char *message; /* a part of it */
	} cases[] = {
		{ "resourceVersion=abc", 400, "invalid resourceVersion 'abc'" },
		{ "resourceVersion=-1", 400, "invalid resourceVersion '-1'" },
		{ "resourceVersion=9223372036854775808", 400, "invalid resourceVersion" },
		{ "resourceVersion=9223372036854775807", 410,
		  "too large resource version: 9223372036854775807 (current 2)" },
		{ "resourceVersion=3", 410, "too large resource version: 3 (current 2)" },
		{ "resourceVersion=2&resourceVersionMatch=Exact", 200, NULL },
		{ "resourceVersion=1&resourceVersionMatch=Exact", 410,
		  "resourceVersion 1 is no longer served (current 2)" },
		{ "resourceVersion=0&resourceVersionMatch=Exact", 400,
		  "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"" },
		{ "resourceVersion=1&resourceVersionMatch=NotOlderThan", 200, NULL },
		{ "resourceVersion=0", 200, NULL },
		{ "resourceVersion=1&resourceVersionMatch=Newest", 400,
		  "supported values: \"Exact\", \"NotOlderThan\"" },
		{ "resourceVersionMatch=Exact", 400,
		  "resourceVersionMatch is forbidden unless resourceVersion is provided" },
		{ "limit=-1", 400, "invalid limit '-1'" },
		{ "limit=10001", 400, "invalid limit '10001'" },
		{ "limit=99999999999999999999", 400, "invalid limit" },
		{ "limit=18446744073709551617", 400, "invalid limit" },
		{ "continue=Cg", 400, "invalid continue token" },      /* "\n": no name */
		{ "continue=YWJj", 400, "invalid continue token" },    /* "abc": no '\n' */
		{ "continue=YQpiCmM", 400, "invalid continue token" }, /* "a\nb\nc" */
		{ "continue=YQBiCmM", 400, "invalid continue token" }, /* "a\0b\nc" */
		{ "continue=YQpi%3D", 400, "invalid continue token" }, /* padding */
		{ "continue=Cm5n&resourceVersion=2", 400,
		  "specifying resource version is not allowed when using continue" },
		{ "continue=Cm5n", 200, NULL }, /* "\nng" */
	};
	char path[512], big[1200];
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "a", NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(path, sizeof(path), "/api/v1/nodegroups?%s", cases[i].query);
		ck_assert_msg(get(path, &j) == cases[i].code, "%s", cases[i].query);
		if (cases[i].message != NULL) {
			ck_assert_msg(strstr(at(j, "message"), cases[i].message) != NULL, "%s: %s",
			              cases[i].query, at(j, "message"));
		}
		json_decref(j);
	}
	/* a token longer than any key is refused before it is decoded */
	memset(big, 'Q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(path, sizeof(path), "/api/v1/nodegroups?continue=%.480s", big);
	ck_assert_int_eq(get(path, &j), 400);
	json_decref(j);
}
END_TEST

/* A resourceVersion in a body that is not a revision is a 422 naming the field, never
 * silently taken for "no precondition". */
START_TEST(test_body_resource_version_malformed)
{
	json_t *j;

	make_tenant("acme");
	ck_assert_int_eq(
	    patch("/api/v1/tenants/acme",
	          "{\"metadata\":{\"resourceVersion\":\"abc\",\"labels\":{\"a\":\"b\"}}}", &j),
	    422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.resourceVersion");
	json_decref(j);
	ck_assert_int_eq(put("/api/v1/tenants/acme",
	                     "{\"metadata\":{\"resourceVersion\":\"99999999999999999999\"},"
	                     "\"spec\":{}}",
	                     &j),
	                 422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.resourceVersion");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme", &j), 200);
	ck_assert_ptr_null(at(j, "metadata.labels.a"));
	json_decref(j);
}
END_TEST

/* A body of about n bytes: {"metadata":{"annotations":{...}}, ...} with annotation a of
 * vlen bytes. Caller frees. */
static char *annotated(const char *prefix, size_t vlen, const char *suffix)
{
	size_t size = strlen(prefix) + vlen + strlen(suffix) + 64;
	char *b = malloc(size), *v = malloc(vlen + 1);

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(v);
	memset(v, 'x', vlen);
	v[vlen] = '\0';
	snprintf(b, size, "%s%s%s", prefix, v, suffix);
	free(v);
	return b;
}

/* Metadata is bounded as in Kubernetes: annotations 256 KiB together (keys and values),
 * label keys and values, names; through create, replace, merge patch and YAML alike. */
START_TEST(test_metadata_limits)
{
	char *b;
	json_t *j;

	/* "a" + 262143 bytes: exactly the limit */
	b = annotated("{\"metadata\":{\"name\":\"fits\",\"annotations\":{\"a\":\"", 262143,
	              "\"}},\"spec\":{}}");
	ck_assert_int_eq(post("/api/v1/tenants", b, &j), 201);
	json_decref(j);
	free(b);
	b = annotated("{\"metadata\":{\"name\":\"big\",\"annotations\":{\"a\":\"", 262144,
	              "\"}},\"spec\":{}}");
	ck_assert_int_eq(post("/api/v1/tenants", b, &j), 422);
	ck_assert_str_eq(causes_text(j), "metadata.annotations|FieldValueTooLong|must have at most "
	                                 "262144 bytes (keys and values together)");
	json_decref(j);
	free(b);
	/* the same through YAML */
	b = annotated("metadata:\n  name: big\n  annotations:\n    a: ", 262144, "\nspec: {}\n");
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/yaml", b, &j), 422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.annotations");
	json_decref(j);
	free(b);
	/* a merge patch adding to what is there: the total counts */
	ck_assert_int_eq(
	    patch("/api/v1/tenants/fits", "{\"metadata\":{\"annotations\":{\"b\":\"y\"}}}", &j),
	    422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.annotations");
	json_decref(j);
	/* a replace */
	b = annotated("{\"metadata\":{\"name\":\"fits\",\"resourceVersion\":\"1\",\"annotations\":"
	              "{\"a\":\"",
	              300000, "\"}},\"spec\":{}}");
	ck_assert_int_eq(put("/api/v1/tenants/fits", b, &j), 422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.annotations");
	json_decref(j);
	free(b);
	/* a 10 MiB annotation never gets that far: the body is over the request limit */
	b = annotated("{\"metadata\":{\"name\":\"huge\",\"annotations\":{\"a\":\"", 10u << 20,
	              "\"}},\"spec\":{}}");
	ck_assert_int_eq(post("/api/v1/tenants", b, &j), 413);
	ck_assert_str_eq(at(j, "reason"), "RequestEntityTooLarge");
	json_decref(j);
	free(b);
	/* labels and names, as Kubernetes has them */
	ck_assert_int_eq(
	    post("/api/v1/tenants",
	         "{\"metadata\":{\"name\":\"l\",\"labels\":{\"k\":"
	         "\"0123456789012345678901234567890123456789012345678901234567890123\"}"
	         "},\"spec\":{}}",
	         &j),
	    422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.labels[k]");
	json_decref(j);
	ck_assert_int_eq(
	    post("/api/v1/tenants",
	         "{\"metadata\":{\"name\":"
	         "\"n0123456789012345678901234567890123456789012345678901234567890123\""
	         "},\"spec\":{}}",
	         &j),
	    422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.name");
	json_decref(j);
	b = annotated("{\"metadata\":{\"name\":\"u\",\"uid\":\"", 1000, "\"},\"spec\":{}}");
	ck_assert_int_eq(post("/api/v1/tenants", b, &j), 422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "metadata.uid");
	json_decref(j);
	free(b);
	ck_assert_int_eq(get("/api/v1/tenants/fits", &j), 200);
	ck_assert_ptr_null(at(j, "metadata.annotations.b"));
	json_decref(j);
}
END_TEST

/* A YAML body is bounded in nodes as well as depth: 150,000 list items in 600 KB took
 * libyaml a quarter of a second on the loop before the object was even looked at. */
START_TEST(test_yaml_body_node_limit)
{
	size_t n = 150000, len = 0;
	char *b = malloc(64 + n * 6);
	json_t *j;

	ck_assert_ptr_nonnull(b);
	len += (size_t)sprintf(b, "metadata:\n  name: many\nspec:\n  blob:\n");
	for (size_t i = 0; i < n; i++) {
		memcpy(b + len, "  - 0\n", 6);
		len += 6;
	}
	b[len] = '\0';
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/yaml", b, &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "more than 100000 nodes"));
	json_decref(j);
	free(b);
}
END_TEST

/* ------------------------------------------------------------------ concurrency */

START_TEST(test_hundred_concurrent_puts_one_winner)
{
	enum { N = 100 };
	rzt_conn_t *c[N];
	int ok = 0, conflicts = 0, winner = -1;
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "w", NULL); /* resourceVersion 2 */
	for (int i = 0; i < N; i++) {
		c[i] = rzt_open(port);
	}
	for (int i = 0; i < N; i++) {
		char body[256], raw[512];
		snprintf(
		    body, sizeof(body),
		    "{\"metadata\":{\"name\":\"w\",\"resourceVersion\":\"2\"},\"spec\":{\"role\":"
		    "\"worker\",\"providerClass\":\"sim\",\"count\":%d}}",
		    i + 2); /* every one a real change: the stored count is 1 */
		snprintf(raw, sizeof(raw),
		         "PUT /api/v1/tenants/acme/nodegroups/w HTTP/1.1\r\nContent-Type: "
		         "application/json\r\nContent-Length: %zu\r\n\r\n%s",
		         strlen(body), body);
		rzt_send(base, c[i]->fd, raw, strlen(raw));
	}
	for (int i = 0; i < N; i++) {
		rzt_response_t r;
		ck_assert(rzt_recv(base, c[i], &r, false));
		if (r.code == 200) {
			ok++;
			winner = i + 2;
		} else if (r.code == 409 && strstr(r.body, "\"reason\":\"Conflict\"") != NULL) {
			conflicts++;
		}
		rzt_response_free(&r);
		rzt_close(c[i]);
	}
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(conflicts, N - 1);
	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups/w", &j), 200);
	ck_assert_int_eq(atoi(at(j, "spec.count")), winner);
	ck_assert_str_eq(at(j, "metadata.generation"), "2");
	ck_assert_str_eq(at(j, "metadata.resourceVersion"), "3");
	json_decref(j);
	ck_assert_int_eq(rz_store_revision(store), 3);
}
END_TEST

/* ------------------------------------------------------------------ discovery, OpenAPI */

/* ------------------------------------------------------------------ events */

/* An Event as the daemon writes it (users cannot): straight into the store. */
static void store_event(const char *tenant, const char *name, const char *kind, const char *obj,
                        const char *reason, const char *type)
{
	json_t *ev =
	    json_pack("{s:{s:s, s:s}, s:{s:s, s:s}, s:s, s:s, s:s, s:i, s:s, s:s, s:{s:s}}",
	              "metadata", "name", name, "tenant", tenant, "involvedObject", "kind", kind,
	              "name", obj, "reason", reason, "message", "it happened", "type", type,
	              "count", 1, "firstTimestamp", "2026-01-02T03:04:05.678Z", "lastTimestamp",
	              "2026-01-02T03:04:05.678Z", "source", "component", "engine");
	json_t *out = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_create(store, rz_kind_by_name("Event"), ev, NULL, &out, &err) == 0,
	              "event %s: %s", name, err.msg);
	json_decref(out);
	json_decref(ev);
}

/* Events are read through the API (get, list, every tenant's list) with their fields at
 * the top level, like Kubernetes'; every write is refused with a 405 Status. */
START_TEST(test_events_read_only)
{
	static const char *const writes[][3] = {
		{ "POST", "/api/v1/tenants/acme/events", "application/json" },
		{ "PUT", "/api/v1/tenants/acme/events/web.0a1b2c3d", "application/json" },
		{ "PATCH", "/api/v1/tenants/acme/events/web.0a1b2c3d",
		  "application/merge-patch+json" },
		{ "DELETE", "/api/v1/tenants/acme/events/web.0a1b2c3d", NULL },
		{ "PUT", "/api/v1/tenants/acme/events/web.0a1b2c3d/status", "application/json" },
	};
	json_t *j;

	make_tenant("acme");
	store_event("acme", "web.0a1b2c3d", "NodeGroup", "web", "ScaledUp", "Normal");
	ck_assert_int_eq(get("/api/v1/tenants/acme/events/web.0a1b2c3d", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "Event");
	ck_assert_str_eq(at(j, "metadata.tenant"), "acme");
	ck_assert_str_eq(at(j, "involvedObject.kind"), "NodeGroup");
	ck_assert_str_eq(at(j, "involvedObject.name"), "web");
	ck_assert_str_eq(at(j, "reason"), "ScaledUp");
	ck_assert_str_eq(at(j, "type"), "Normal");
	ck_assert_str_eq(at(j, "count"), "1");
	ck_assert_str_eq(at(j, "source.component"), "engine");
	ck_assert_ptr_null(json_object_get(j, "spec"));
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/events", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "EventList");
	ck_assert_str_eq(at(j, "items.0.reason"), "ScaledUp");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/events", &j), 200);
	ck_assert_str_eq(at(j, "items.0.metadata.name"), "web.0a1b2c3d");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/events/nope", &j), 404);
	ck_assert_str_eq(at(j, "reason"), "NotFound");
	json_decref(j);
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		ck_assert_msg(call(writes[i][0], writes[i][1], writes[i][2],
		                   writes[i][2] ? "{\"reason\":\"Forged\"}" : NULL, &j) == 405,
		              "%s %s", writes[i][0], writes[i][1]);
		ck_assert_str_eq(at(j, "kind"), "Status");
		ck_assert_str_eq(at(j, "reason"), "MethodNotAllowed");
		json_decref(j);
	}
	ck_assert_int_eq(get("/api/v1/tenants/acme/events/web.0a1b2c3d", &j), 200);
	ck_assert_str_eq(at(j, "reason"), "ScaledUp"); /* nothing was written */
	ck_assert_str_eq(at(j, "metadata.resourceVersion"), "2");
	json_decref(j);
}
END_TEST

/* describe's query: one object's events by involvedObject, reason and type, in lists and
 * watches; any other field is a 400 naming it. */
START_TEST(test_events_field_selectors)
{
	rzt_stream_t *s;
	json_t *j, *out = NULL, *ev = NULL;
	rz_err_t err = { 0 };

	make_tenant("acme");
	make_tenant("beta");
	store_event("acme", "web.00000001", "NodeGroup", "web", "ScaledUp", "Normal");
	store_event("acme", "web.00000002", "NodeGroup", "web", "RenderFailed", "Warning");
	store_event("acme", "web.00000003", "Machine", "web", "Rebooted", "Normal");
	store_event("acme", "db.00000004", "NodeGroup", "db", "ScaledUp", "Normal");
	store_event("beta", "web.00000005", "NodeGroup", "web", "ScaledUp", "Normal");
	ck_assert_int_eq(
	    get("/api/v1/tenants/acme/events?fieldSelector=involvedObject.name%3Dweb", &j), 200);
	ck_assert_str_eq(names(j), "web.00000001,web.00000002,web.00000003");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/events?fieldSelector=involvedObject.kind%3D"
	                     "NodeGroup,involvedObject.name%3Dweb",
	                     &j),
	                 200);
	ck_assert_str_eq(names(j), "web.00000001,web.00000002");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/events?fieldSelector=reason%3DScaledUp,type!%3DWarning", &j),
	                 200);
	ck_assert_str_eq(names(j), "db.00000004,web.00000001,web.00000005");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/events?fieldSelector=type%3DWarning", &j), 200);
	ck_assert_str_eq(names(j), "web.00000002");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/events?fieldSelector=message%3Dx", &j), 400);
	ck_assert_str_eq(at(j, "reason"), "BadRequest");
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "field 'message' is not supported"));
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "involvedObject.name"));
	json_decref(j);
	/* the kind's own fields select nothing elsewhere */
	ck_assert_int_eq(get("/api/v1/nodegroups?fieldSelector=involvedObject.name%3Dweb", &j),
	                 400);
	json_decref(j);

	s = rzt_stream_open(
	    base, port,
	    "GET /api/v1/tenants/acme/events?watch=true&fieldSelector="
	    "involvedObject.name%3Ddb HTTP/1.1\r\nAccept: application/x-ndjson\r\n\r\n");
	ck_assert_int_eq(s->head.code, 200);
	ck_assert(rzt_stream_until(base, s, "}\n", 5));
	ck_assert_int_eq(
	    rz_store_get(store, rz_kind_by_name("Event"), "acme", "db.00000004", &ev, &err), 0);
	json_object_set_new(ev, "count", json_integer(2));
	ck_assert_int_eq(rz_store_update(store, rz_kind_by_name("Event"), "acme", "db.00000004", ev,
	                                 0, RZ_UPDATE_STATUS, NULL, &out, NULL, &err),
	                 0);
	ck_assert_str_eq(at(out, "count"), "2"); /* top-level members go with status writes */
	json_decref(out);
	json_decref(ev);
	store_event("acme", "web.00000006", "NodeGroup", "web", "Other", "Normal");
	ck_assert(rzt_stream_until(base, s, "\"type\":\"MODIFIED\"", 5));
	spin_for(0.1);
	ck_assert_str_eq(event_types(s->body), "ADDED db.00000004|MODIFIED db.00000004|");
	rzt_stream_close(s);
}
END_TEST

/* Query booleans as Go's strconv.ParseBool reads them: the Python client's watch=True. */
START_TEST(test_parse_bool)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	static const char *const bad[] = { "", "yes", "TRue", "2", "on", " true", "true " };
	json_t *j;
	bool v;

	for (size_t i = 0; i < 6; i++) {
		v = false;
		ck_assert_msg(rz_parse_bool(yes[i], &v) && v, "%s", yes[i]);
		v = true;
		ck_assert_msg(rz_parse_bool(no[i], &v) && !v, "%s", no[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(!rz_parse_bool(bad[i], &v), "'%s'", bad[i]);
	}
	ck_assert(!rz_parse_bool(NULL, &v));
	ck_assert_int_eq(get("/api/v1/tenants?watch=yes", &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "query parameter watch"));
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants?pretty=maybe", &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "query parameter pretty"));
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants?watch=False&pretty=T", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "TenantList");
	json_decref(j);
}
END_TEST

/* metadata.namespace is the tenant: taken for it, checked against it, emitted beside it. */
START_TEST(test_namespace_is_tenant)
{
	json_t *j;

	ck_assert_int_eq(post("/apis/rezuscloud.io/v1/tenants",
	                      "{\"metadata\":{\"name\":\"acme\",\"namespace\":\"x\"}}", &j),
	                 201);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "metadata"), "namespace"));
	json_decref(j);
	ck_assert_int_eq(
	    post("/apis/rezuscloud.io/v1/namespaces/acme/nodegroups",
	         "{\"metadata\":{\"name\":\"w\",\"namespace\":\"acme\"},"
	         "\"spec\":{\"role\":\"worker\",\"count\":1,\"providerClass\":\"sim\"}}",
	         &j),
	    201);
	ck_assert_str_eq(at(j, "metadata.namespace"), "acme");
	ck_assert_str_eq(at(j, "metadata.tenant"), "acme");
	json_decref(j);
	/* a namespace other than the URL's, or than metadata.tenant, is refused naming it */
	ck_assert_int_eq(
	    post("/apis/rezuscloud.io/v1/namespaces/acme/nodegroups",
	         "{\"metadata\":{\"name\":\"v\",\"namespace\":\"other\"},"
	         "\"spec\":{\"role\":\"worker\",\"count\":1,\"providerClass\":\"sim\"}}",
	         &j),
	    400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "other"));
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/nodegroups",
	                      "{\"metadata\":{\"name\":\"v\",\"tenant\":\"acme\",\"namespace\":"
	                      "\"other\"},\"spec\":{\"role\":\"worker\",\"count\":1,"
	                      "\"providerClass\":\"sim\"}}",
	                      &j),
	                 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "metadata.namespace"));
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/nodegroups",
	                      "{\"metadata\":{\"name\":\"v\",\"namespace\":7},\"spec\":{\"role\":"
	                      "\"worker\",\"count\":1,\"providerClass\":\"sim\"}}",
	                      &j),
	                 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "metadata.namespace"));
	json_decref(j);
	/* every path serves it: the group's and /api/v1, items, lists, every tenant's */
	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups/w", &j), 200);
	ck_assert_str_eq(at(j, "metadata.namespace"), "acme");
	json_decref(j);
	ck_assert_int_eq(get("/apis/rezuscloud.io/v1/namespaces/acme/nodegroups", &j), 200);
	ck_assert_str_eq(at(j, "items.0.metadata.namespace"), "acme");
	json_decref(j);
	ck_assert_int_eq(get("/apis/rezuscloud.io/v1/nodegroups", &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);
	ck_assert_int_eq(
	    get("/apis/rezuscloud.io/v1/nodegroups?fieldSelector=metadata.namespace%3Dacme", &j),
	    200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);
	ck_assert_int_eq(patch("/apis/rezuscloud.io/v1/namespaces/acme/nodegroups/w/status",
	                       "{\"status\":{\"ready\":1}}", &j),
	                 200);
	ck_assert_str_eq(at(j, "metadata.namespace"), "acme");
	json_decref(j);
	ck_assert_int_eq(get("/apis/rezuscloud.io/v1/namespaces/nope/nodegroups/w", &j), 404);
	json_decref(j);
}
END_TEST

/* dryRun=All validates and answers without storing; other values are a 400. */
/* The patches a role's machines get, in the order they apply, and a YAML error's place. */
START_TEST(test_effective_patch)
{
	json_t *j;

	ck_assert_int_eq(get("/api/v1/tenants/acme/effectivepatches/worker", &j), 404);
	json_decref(j);
	make_tenant("acme");
	ck_assert_int_eq(get("/api/v1/tenants/acme/effectivepatches/worker", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "EffectivePatch");
	ck_assert_str_eq(at(j, "patch"), "");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/configpatches",
	                      "{\"metadata\":{\"name\":\"b-all\"},\"spec\":{\"patch\":\"machine:\\n"
	                      "  sysctls: {a: '1'}\"}}",
	                      &j),
	                 201);
	json_decref(j);
	ck_assert_int_eq(
	    post("/api/v1/tenants/acme/configpatches",
	         "{\"metadata\":{\"name\":\"a-cp\"},\"spec\":{\"patch\":\"cluster: {}\\n\","
	         "\"targetRole\":\"controlplane\"}}",
	         &j),
	    201);
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/configpatches",
	                      "{\"metadata\":{\"name\":\"c-off\"},\"spec\":{\"patch\":\"x: 1\","
	                      "\"enabled\":false}}",
	                      &j),
	                 201);
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/configpatches",
	                      "{\"metadata\":{\"name\":\"d-w\"},\"spec\":{\"patch\":\"y: 2\","
	                      "\"targetRole\":\"worker\",\"nodeGroups\":[\"big\"]}}",
	                      &j),
	                 201);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/effectivepatches/controlplane", &j), 200);
	ck_assert_str_eq(at(j, "role"), "controlplane");
	ck_assert_str_eq(at(j, "patch"), "# a-cp\ncluster: {}\n---\n# b-all\nmachine:\n"
	                                 "  sysctls: {a: '1'}\n");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 2);
	ck_assert_str_eq(at(j, "items.0.name"), "a-cp");
	ck_assert_str_eq(at(j, "items.1.targetRole"), "all");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/effectivepatches/worker", &j), 200);
	ck_assert_str_eq(at(j, "patch"),
	                 "# b-all\nmachine:\n  sysctls: {a: '1'}\n---\n# d-w\ny: 2\n");
	ck_assert_str_eq(at(j, "items.1.nodeGroups.0"), "big");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/effectivepatches/all", &j), 422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "role");
	json_decref(j);
	/* a YAML error names the field and the patch's line and column */
	ck_assert_int_eq(post("/api/v1/tenants/acme/configpatches",
	                      "{\"metadata\":{\"name\":\"bad\"},\"spec\":{\"patch\":\"machine:\\n"
	                      "  a: 1\\n b: [\"}}",
	                      &j),
	                 422);
	ck_assert_str_eq(at(j, "details.causes.0.field"), "spec.patch");
	ck_assert_ptr_nonnull(strstr(at(j, "details.causes.0.message"), "at line 3, column"));
	json_decref(j);
}
END_TEST

START_TEST(test_dry_run)
{
	json_t *j;

	ck_assert_int_eq(post("/api/v1/tenants?dryRun=All&fieldManager=kubectl-create",
	                      "{\"metadata\":{\"name\":\"dry\"}}", &j),
	                 201);
	ck_assert_str_eq(at(j, "metadata.name"), "dry");
	ck_assert_str_eq(at(j, "spec.kubernetesVersion"), "1.35.0"); /* defaulted */
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/dry", &j), 404);
	json_decref(j);
	ck_assert_int_eq(
	    post("/api/v1/tenants?dryRun=All", "{\"metadata\":{\"name\":\"-bad\"}}", &j),
	    422); /* still validated */
	json_decref(j);
	ck_assert_int_eq(
	    post("/api/v1/tenants?dryRun=Some", "{\"metadata\":{\"name\":\"dry\"}}", &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "dryRun"));
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants", "{\"metadata\":{\"name\":\"real\"}}", &j), 201);
	json_decref(j);
	ck_assert_int_eq(patch("/api/v1/tenants/real?dryRun=All",
	                       "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", &j),
	                 200);
	ck_assert_str_eq(at(j, "metadata.labels.a"), "b");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/real", &j), 200);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "metadata"), "labels"));
	json_decref(j);
	ck_assert_int_eq(call("DELETE", "/api/v1/tenants/real?dryRun=All", NULL, NULL, &j), 200);
	json_decref(j);
	ck_assert_int_eq(call("DELETE", "/api/v1/tenants/real", "application/json",
	                      "{\"kind\":\"DeleteOptions\",\"dryRun\":[\"All\"],"
	                      "\"propagationPolicy\":\"Background\"}",
	                      &j),
	                 200);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/real", &j), 200);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "metadata"), "deletionTimestamp"));
	json_decref(j);
	ck_assert_int_eq(
	    call("DELETE", "/api/v1/tenants/real?propagationPolicy=Sideways", NULL, NULL, &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "propagationPolicy"));
	json_decref(j);
	/* Orphan cannot be honoured (a tenant's objects go with it): refused, in the query and
	 * in DeleteOptions, and nothing is deleted */
	ck_assert_int_eq(
	    call("DELETE", "/api/v1/tenants/real?propagationPolicy=Orphan", NULL, NULL, &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "objects are deleted with it"));
	json_decref(j);
	ck_assert_int_eq(call("DELETE", "/api/v1/tenants/real", "application/json",
	                      "{\"propagationPolicy\":\"Orphan\"}", &j),
	                 400);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/real", &j), 200);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "metadata"), "deletionTimestamp"));
	json_decref(j);
	ck_assert_int_eq(
	    call("DELETE", "/api/v1/tenants/real?propagationPolicy=Foreground", NULL, NULL, &j),
	    202);
	json_decref(j);
}
END_TEST

#define TABLE_ACCEPT "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json\r\n"

/* as=Table: the columns rezusctl get prints (core/model/columns.c), cells, includeObject. */
START_TEST(test_table)
{
	const rz_column_t *cols = rz_columns_of("NodeGroup");
	json_t *j, *defs;
	size_t n = 0, shown = 0;

	ck_assert_int_eq(post("/api/v1/tenants", "{\"metadata\":{\"name\":\"acme\"}}", &j), 201);
	json_decref(j);
	ck_assert_int_eq(post("/api/v1/tenants/acme/nodegroups",
	                      "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"role\":\"worker\","
	                      "\"count\":3,\"providerClass\":\"sim\"}}",
	                      &j),
	                 201);
	json_decref(j);
	extra = TABLE_ACCEPT;
	ck_assert_int_eq(get("/apis/rezuscloud.io/v1/namespaces/acme/nodegroups", &j), 200);
	ck_assert_str_eq(last_ctype, "application/json;as=Table;v=v1;g=meta.k8s.io");
	ck_assert_str_eq(at(j, "kind"), "Table");
	ck_assert_str_eq(at(j, "apiVersion"), "meta.k8s.io/v1");
	defs = json_object_get(j, "columnDefinitions");
	for (n = 0; cols[n].header != NULL; n++) {
		if (strcmp(cols[n].header, "TENANT") != 0) { /* the request names the tenant */
			ck_assert_str_eq(
			    json_string_value(json_object_get(json_array_get(defs, shown), "name")),
			    cols[n].header);
			ck_assert_int_eq(json_integer_value(json_object_get(
			                     json_array_get(defs, shown), "priority")),
			                 cols[n].wide ? 1 : 0);
			shown++;
		}
	}
	ck_assert_uint_eq(json_array_size(defs), shown);
	ck_assert_str_eq(at(j, "columnDefinitions.0.name"), "NAME");
	ck_assert_str_eq(at(j, "rows.0.cells.0"), "w");
	ck_assert_str_eq(at(j, "rows.0.cells.1"), "worker");
	ck_assert_str_eq(at(j, "rows.0.cells.3"), "3");
	ck_assert_str_eq(at(j, "rows.0.object.kind"), "PartialObjectMetadata");
	ck_assert_str_eq(at(j, "rows.0.object.metadata.namespace"), "acme");
	ck_assert_ptr_null(json_object_get(
	    json_object_get(json_array_get(json_object_get(j, "rows"), 0), "object"), "spec"));
	json_decref(j);
	/* rezusctl's TENANT column where the request names no tenant, on /api/v1 */
	ck_assert_int_eq(get("/api/v1/nodegroups?includeObject=Object", &j), 200);
	ck_assert_str_eq(at(j, "columnDefinitions.1.name"), "TENANT");
	ck_assert_str_eq(at(j, "rows.0.cells.1"), "acme");
	ck_assert_str_eq(at(j, "rows.0.object.spec.providerClass"), "sim");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups/w?includeObject=None", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "Table");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "rows")), 1);
	ck_assert_ptr_null(
	    json_object_get(json_array_get(json_object_get(j, "rows"), 0), "object"));
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups?includeObject=All", &j), 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "includeObject"));
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups?limit=1", &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "rows")), 1);
	json_decref(j);
	extra = "";
	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "NodeGroupList");
	json_decref(j);
}
END_TEST

/* /api, /apis, /apis/rezuscloud.io/v1 and aggregated discovery, as kubectl reads them. */
START_TEST(test_discovery_groups)
{
	json_t *j, *r, *res;
	size_t i;
	bool tokens = false;

	ck_assert_int_eq(get("/api", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "APIVersions");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "versions")), 0);
	json_decref(j);
	ck_assert_int_eq(get("/apis", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "APIGroupList");
	ck_assert_str_eq(at(j, "groups.0.name"), "rezuscloud.io");
	ck_assert_str_eq(at(j, "groups.0.preferredVersion.groupVersion"), "rezuscloud.io/v1");
	json_decref(j);
	ck_assert_int_eq(get("/apis/rezuscloud.io/v1", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "APIResourceList");
	ck_assert_str_eq(at(j, "groupVersion"), "rezuscloud.io/v1");
	json_array_foreach(json_object_get(j, "resources"), i, r)
	{
		tokens = tokens || strcmp(at(r, "name"), "users/tokens") == 0;
		if (strcmp(at(r, "name"), "tenants") == 0) {
			ck_assert(json_is_false(json_object_get(r, "namespaced")));
			ck_assert_str_eq(at(r, "singularName"), "tenant");
		}
	}
	ck_assert(tokens); /* where its path says: /users/{user}/tokens */
	json_decref(j);
	extra = "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
	        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
	        "application/json\r\n";
	ck_assert_int_eq(get("/apis", &j), 200);
	ck_assert_str_eq(last_ctype,
	                 "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
	ck_assert_str_eq(at(j, "kind"), "APIGroupDiscoveryList");
	ck_assert_str_eq(at(j, "apiVersion"), "apidiscovery.k8s.io/v2");
	ck_assert_str_eq(at(j, "items.0.metadata.name"), "rezuscloud.io");
	ck_assert_str_eq(at(j, "items.0.versions.0.version"), "v1");
	res = json_object_get(
	    json_array_get(
	        json_object_get(json_array_get(json_object_get(j, "items"), 0), "versions"), 0),
	    "resources");
	ck_assert_uint_gt(json_array_size(res), 5);
	json_array_foreach(res, i, r)
	{
		if (strcmp(at(r, "resource"), "nodegroups") == 0) {
			ck_assert_str_eq(at(r, "scope"), "Namespaced");
			ck_assert_str_eq(at(r, "responseKind.kind"), "NodeGroup");
			ck_assert_str_eq(at(r, "subresources.0.subresource"), "status");
		}
		if (strcmp(at(r, "resource"), "users") == 0) {
			ck_assert_str_eq(at(r, "subresources.0.subresource"), "tokens");
		}
		ck_assert(strcmp(at(r, "resource"), "tokens") != 0);
	}
	json_decref(j);
	ck_assert_int_eq(get("/api", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "APIGroupDiscoveryList");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	extra =
	    "Accept: application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList\r\n";
	ck_assert_int_eq(get("/apis", &j), 200);
	ck_assert_str_eq(at(j, "apiVersion"), "apidiscovery.k8s.io/v2beta1");
	json_decref(j);
	extra = "";
}
END_TEST

START_TEST(test_discovery)
{
	json_t *j, *r;
	size_t i;
	bool found = false;

	ck_assert_int_eq(get("/api/v1", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "APIResourceList");
	ck_assert_str_eq(at(j, "groupVersion"), "rezuscloud.io/v1");
	json_array_foreach(json_object_get(j, "resources"), i, r)
	{
		if (strcmp(at(r, "name"), "nodegroups") == 0) {
			found = true;
			ck_assert_str_eq(at(r, "kind"), "NodeGroup");
			ck_assert(json_is_true(json_object_get(r, "namespaced")));
			ck_assert_str_eq(at(r, "shortNames.0"), "ng");
			ck_assert_str_eq(at(r, "verbs.0"), "get");
		}
	}
	ck_assert(found);
	found = false;
	json_array_foreach(json_object_get(j, "resources"), i, r)
	{
		if (strcmp(at(r, "name"), "events") == 0) {
			found = true;
			ck_assert_str_eq(at(r, "kind"), "Event");
			ck_assert(json_is_true(json_object_get(r, "namespaced")));
			ck_assert_str_eq(at(r, "shortNames.0"), "ev");
			ck_assert_uint_eq(json_array_size(json_object_get(r, "verbs")), 3);
			ck_assert_str_eq(at(r, "verbs.2"), "watch");
		}
		ck_assert_str_ne(at(r, "name"), "events/status");
	}
	ck_assert(found);
	json_decref(j);
}
END_TEST

START_TEST(test_openapi)
{
	json_t *j, *spec;

	ck_assert_int_eq(get("/openapi/v3/api/v1", &j), 200);
	ck_assert_str_eq(at(j, "openapi"), "3.0.3");
	ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "paths"), "/api/v1/tenants"));
	ck_assert_ptr_nonnull(
	    json_object_get(json_object_get(json_object_get(j, "paths"),
	                                    "/api/v1/tenants/{tenant}/nodegroups/{name}"),
	                    "patch"));
	/* runs cannot be replaced: no put in the document either */
	ck_assert_ptr_null(json_object_get(
	    json_object_get(json_object_get(j, "paths"), "/api/v1/tenants/{tenant}/runs/{name}"),
	    "put"));
	spec = json_object_get(
	    json_object_get(
	        json_object_get(json_object_get(json_object_get(j, "components"), "schemas"),
	                        "NodeGroup"),
	        "properties"),
	    "spec");
	ck_assert_str_eq(at(spec, "properties.count.maximum"), "1000");
	ck_assert_str_eq(at(spec, "properties.role.enum.1"), "worker");
	ck_assert_str_eq(at(spec, "required.0"), "role");
	{ /* Event: its fields at the top level, read-only paths */
		json_t *paths = json_object_get(j, "paths");
		json_t *ev = json_object_get(
		    json_object_get(json_object_get(j, "components"), "schemas"), "Event");
		ck_assert_ptr_nonnull(ev);
		ck_assert_str_eq(at(ev, "properties.involvedObject.required.1"), "name");
		ck_assert_str_eq(at(ev, "properties.type.enum.1"), "Warning");
		ck_assert_str_eq(at(ev, "properties.lastTimestamp.format"), "date-time");
		ck_assert_str_eq(at(ev, "properties.source.properties.component.type"), "string");
		ck_assert_str_eq(at(ev, "required.0"), "involvedObject");
		ck_assert_ptr_null(json_object_get(json_object_get(ev, "properties"), "spec"));
		ck_assert_ptr_nonnull(json_object_get(
		    json_object_get(paths, "/api/v1/tenants/{tenant}/events"), "get"));
		ck_assert_ptr_null(json_object_get(
		    json_object_get(paths, "/api/v1/tenants/{tenant}/events"), "post"));
		ck_assert_ptr_nonnull(json_object_get(
		    json_object_get(paths, "/api/v1/tenants/{tenant}/events/{name}"), "get"));
		for (size_t i = 0; i < 3; i++) {
			static const char *const verbs[] = { "put", "patch", "delete" };
			ck_assert_ptr_null(json_object_get(
			    json_object_get(paths, "/api/v1/tenants/{tenant}/events/{name}"),
			    verbs[i]));
		}
		ck_assert_ptr_nonnull(json_object_get(
		    json_object_get(json_object_get(j, "components"), "schemas"), "EventList"));
	}
	json_decref(j);
}
END_TEST

static void observe(void *ctx, rz_req_t *req, const char *route, const char *method, int code,
                    double seconds, bool streamed)
{
	rz_metrics_observe(ctx, route, method, code, seconds, streamed);
}

START_TEST(test_metrics_count_routes)
{
	rz_metrics_t *m = NULL;
	rz_metrics_gauges_t g = { 0 };
	rz_err_t err = { 0 };
	json_t *j;
	char *text;

	ck_assert_int_eq(rz_metrics_new(&m, &g, &err), 0);
	rz_http_set_observer(srv, observe, m);
	make_tenant("acme");
	ck_assert_int_eq(get("/api/v1/tenants/nope", &j), 404);
	json_decref(j);
	text = rz_metrics_render(m);
	ck_assert_ptr_nonnull(strstr(text,
	                             "rezuscloud_http_requests_total{route=\"/api/v1/tenants\","
	                             "method=\"POST\",code=\"201\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "rezuscloud_http_requests_total{route=\"/api/v1/tenants/"
	                                   "{name}\",method=\"GET\",code=\"404\"} 1\n"));
	/* latency by route pattern, never by the raw path */
	ck_assert_ptr_nonnull(strstr(text, "rezuscloud_http_request_duration_seconds_count{route="
	                                   "\"/api/v1/tenants/{name}\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "rezuscloud_http_request_duration_seconds_bucket{route="
	                                   "\"/api/v1/tenants\",le=\"+Inf\"} 1\n"));
	ck_assert_ptr_null(strstr(text, "nope"));
	ck_assert_ptr_nonnull(strstr(text, "rezuscloud_build_info{version=\""));
	free(text);
	rz_http_set_observer(srv, NULL, NULL);
	rz_metrics_free(m);
}
END_TEST

/* Label values stay bounded: unknown methods fold into "other", and series beyond
 * RZ_METRICS_SERIES_MAX are counted as unrecorded instead of growing the table. */
START_TEST(test_metrics_bounded)
{
	rz_metrics_t *m = NULL;
	rz_err_t err = { 0 };
	char route[32], *text;

	ck_assert_int_eq(rz_metrics_new(&m, NULL, &err), 0);
	rz_metrics_observe(m, "/x", "PROPFIND", 405, 0.001, false);
	rz_metrics_observe(m, "/x", "MKCOL", 405, 0.001, false);
	for (int i = 0; i < RZ_METRICS_SERIES_MAX + 10; i++) {
		snprintf(route, sizeof(route), "/r%d", i);
		rz_metrics_observe(m, route, "GET", 200, 0.001, false);
	}
	text = rz_metrics_render(m);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "rezuscloud_http_requests_total{route=\"/x\","
	                                   "method=\"other\",code=\"405\"} 2\n"));
	ck_assert_ptr_null(strstr(text, "PROPFIND"));
	ck_assert_ptr_nonnull(strstr(text, "rezuscloud_http_requests_unrecorded_total 11\n"));
	ck_assert_ptr_null(strstr(text, "route=\"/r4095\""));
	ck_assert_ptr_nonnull(strstr(text, "route=\"/r4094\""));
	free(text);
	rz_metrics_free(m);
}
END_TEST

/* A write that leaves the spec as stored does not check it again (validation ratchets): an
 * object stored under older rules keeps taking label writes; a spec change is checked. */
START_TEST(test_unchanged_spec_not_checked_again)
{
	json_t *j, *cur = NULL, *out = NULL;
	rz_err_t err = { 0 };
	bool gone;

	ck_assert_int_eq(
	    post("/api/v1/tenants",
	         "{\"metadata\":{\"name\":\"old\"},\"spec\":{\"clusterProvider\":\"sim\"}}", &j),
	    201);
	json_decref(j);
	/* what rules of another version let in: stored past the API */
	ck_assert_int_eq(rz_store_get(store, rz_kind_by_name("Tenant"), NULL, "old", &cur, &err),
	                 0);
	json_object_set_new(json_object_get(cur, "spec"), "kubernetesVersion",
	                    json_string("not-a-version"));
	ck_assert_int_eq(rz_store_update(store, rz_kind_by_name("Tenant"), NULL, "old", cur, 0,
	                                 RZ_UPDATE_SPEC, NULL, &out, &gone, &err),
	                 0);
	json_decref(out);
	json_decref(cur);
	ck_assert_int_eq(
	    patch("/api/v1/tenants/old", "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", &j), 200);
	ck_assert_str_eq(at(j, "metadata.labels.a"), "b");
	json_decref(j);
	ck_assert_int_eq(
	    patch("/api/v1/tenants/old", "{\"spec\":{\"talosVersion\":\"1.12.1\"}}", &j), 422);
	ck_assert_msg(strstr(causes_text(j), "spec.kubernetesVersion|") != NULL, "%s",
	              causes_text(j));
	json_decref(j);
}
END_TEST

/* GET /api/v1/summary counts without listing: tenants by phase, machines by stage, runs. */
START_TEST(test_summary_counts)
{
	json_t *j;

	ck_assert_int_eq(get("/api/v1/summary", &j), 200);
	ck_assert_str_eq(at(j, "kind"), "Summary");
	ck_assert_str_eq(at(j, "tenants.total"), "0");
	ck_assert_str_eq(json_dumps_static(json_object_get(json_object_get(j, "machines"), "by")),
	                 "{}");
	json_decref(j);
	for (int i = 0; i < 3; i++) {
		char body[160];
		snprintf(body, sizeof(body),
		         "{\"metadata\":{\"name\":\"s%d\"},\"spec\":{\"clusterProvider\":\"sim\"}}",
		         i);
		ck_assert_int_eq(post("/api/v1/tenants", body, &j), 201);
		json_decref(j);
	}
	ck_assert_int_eq(
	    patch("/api/v1/tenants/s1/status", "{\"status\":{\"phase\":\"Ready\"}}", &j), 200);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/summary", &j), 200);
	ck_assert_str_eq(at(j, "tenants.total"), "3");
	ck_assert_str_eq(at(j, "tenants.by.Pending"), "2");
	ck_assert_str_eq(at(j, "tenants.by.Ready"), "1");
	ck_assert_str_eq(at(j, "runs.total"), "0");
	json_decref(j);
}
END_TEST

/* GET /api/v1/summary?recent=N: the newest N runs going and failed and Warning Events, by
 * the store's query; other runs and Normal Events are not in them; a bad N is a 400. */
START_TEST(test_summary_recent)
{
	static const char *const runs[][2] = {
		{ "r0", "Failed" }, { "r1", "Running" }, { "r2", "Failed" }, { "r3", "Succeeded" }
	};
	static const char *const bad[] = { "0", "51", "x", "-1", "" };
	char path[160], body[160];
	json_t *j;

	ck_assert_int_eq(post("/api/v1/tenants",
	                      "{\"metadata\":{\"name\":\"s0\"},\"spec\":{\"clusterProvider\":"
	                      "\"sim\"}}",
	                      &j),
	                 201);
	json_decref(j);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		snprintf(body, sizeof(body),
		         "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"operation\":\"apply\"}}",
		         runs[i][0]);
		ck_assert_int_eq(post("/api/v1/tenants/s0/runs", body, &j), 201);
		json_decref(j);
		snprintf(path, sizeof(path), "/api/v1/tenants/s0/runs/%s/status", runs[i][0]);
		snprintf(body, sizeof(body), "{\"status\":{\"phase\":\"%s\"}}", runs[i][1]);
		ck_assert_int_eq(patch(path, body, &j), 200);
		json_decref(j);
	}
	rz_events_record(store, "s0", "Run", "r0", "Warning", "RunFailed", "one", "engine");
	rz_events_record(store, "s0", "Run", "r2", "Warning", "RunFailed", "two", "engine");
	rz_events_record(store, "s0", "Run", "r3", "Normal", "RunStarted", "three", "engine");

	ck_assert_int_eq(get("/api/v1/summary", &j), 200);
	ck_assert_ptr_null(json_object_get(j, "recent"));
	ck_assert_str_eq(at(j, "runs.by.Failed"), "2");
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/summary?recent=1", &j), 200);
	ck_assert_int_eq(
	    json_array_size(json_object_get(json_object_get(j, "recent"), "failedRuns")), 1);
	ck_assert_str_eq(at(j, "recent.failedRuns.0.metadata.name"), "r2"); /* the newest */
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(j, "recent"), "warnings")),
	                 1);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/summary?recent=50", &j), 200);
	ck_assert_int_eq(
	    json_array_size(json_object_get(json_object_get(j, "recent"), "activeRuns")), 1);
	ck_assert_str_eq(at(j, "recent.activeRuns.0.metadata.name"), "r1");
	ck_assert_int_eq(
	    json_array_size(json_object_get(json_object_get(j, "recent"), "failedRuns")), 2);
	ck_assert_str_eq(at(j, "recent.failedRuns.1.metadata.name"), "r0");
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(j, "recent"), "warnings")),
	                 2);
	ck_assert_str_eq(at(j, "recent.warnings.0.type"), "Warning");
	ck_assert_str_eq(at(j, "recent.warnings.1.type"), "Warning");
	ck_assert_str_eq(at(j, "recent.warnings.0.message"), "two");
	json_decref(j);
	/* an Event that happens again is the latest, though it was created first */
	usleep(5000);
	rz_events_record(store, "s0", "Run", "r0", "Warning", "RunFailed", "one", "engine");
	ck_assert_int_eq(get("/api/v1/summary?recent=1", &j), 200);
	ck_assert_str_eq(at(j, "recent.warnings.0.message"), "one");
	ck_assert_str_eq(at(j, "recent.warnings.0.count"), "2");
	json_decref(j);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "/api/v1/summary?recent=%s", bad[i]);
		ck_assert_int_eq(get(path, &j), 400);
		ck_assert_msg(strstr(at(j, "message"), "use 1 to 50") != NULL, "%s",
		              at(j, "message"));
		json_decref(j);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_create_get_tenant);
	tcase_add_test(tc, test_tenant_validation);
	tcase_add_test(tc, test_field_validation);
	tcase_add_test(tc, test_bad_bodies);
	tcase_add_test(tc, test_yaml_bodies);
	tcase_add_test(tc, test_nodegroup_scoping_and_validation);
	tcase_add_test(tc, test_replace_and_status);
	tcase_add_test(tc, test_merge_patch);
	tcase_add_test(tc, test_json_patch);
	tcase_add_test(tc, test_delete_finalizers_cascade);
	tcase_add_test(tc, test_runs_and_generate_name);
	tcase_add_test(tc, test_every_kind);
	tcase_add_test(tc, test_selectors);
	tcase_add_test(tc, test_pagination);
	tcase_add_test(tc, test_pretty);
	tcase_add_test(tc, test_watch_resume_with_last_event_id);
	tcase_add_test(tc, test_watch_too_old_is_410);
	tcase_add_test(tc, test_watch_selector_ndjson);
	tcase_add_test(tc, test_watch_paths);
	tcase_add_test(tc, test_watch_label_transitions);
	tcase_add_test(tc, test_watch_bookmarks_and_heartbeats);
	tcase_add_test(tc, test_watch_slow_client_cut_off);
	tcase_add_test(tc, test_watch_bad_resource_version);
	tcase_add_test(tc, test_watch_large_replay_paged);
	tcase_add_test(tc, test_watch_resource_version_out_of_range);
	tcase_add_test(tc, test_list_parameters_out_of_range);
	tcase_add_test(tc, test_large_list_streams_byte_identical);
	tcase_add_test(tc, test_list_head);
	tcase_add_test(tc, test_list_copies_stored_text);
	tcase_add_test(tc, test_body_resource_version_malformed);
	tcase_add_test(tc, test_metadata_limits);
	tcase_add_test(tc, test_yaml_body_node_limit);
	tcase_add_test(tc, test_hundred_concurrent_puts_one_winner);
	tcase_add_test(tc, test_events_read_only);
	tcase_add_test(tc, test_events_field_selectors);
	tcase_add_test(tc, test_discovery);
	tcase_add_test(tc, test_openapi);
	tcase_add_test(tc, test_parse_bool);
	tcase_add_test(tc, test_namespace_is_tenant);
	tcase_add_test(tc, test_dry_run);
	tcase_add_test(tc, test_effective_patch);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_discovery_groups);
	tcase_add_test(tc, test_metrics_count_routes);
	tcase_add_test(tc, test_metrics_bounded);
	tcase_add_test(tc, test_unchanged_spec_not_checked_again);
	tcase_add_test(tc, test_summary_counts);
	tcase_add_test(tc, test_summary_recent);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
