/* tests/unit/check_apply.c - field managers over real HTTP, in process on 127.0.0.1 port 0:
 * server-side apply (PATCH with application/apply-patch+yaml) and the Update entries every
 * other write records in metadata.managedFields. */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/api/api.h"
#include "core/api/watch.h"
#include "core/base/log.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"
#include "tests/unit/httpclient.h"

#define APPLY "application/apply-patch+yaml"
#define NG    "/api/v1/tenants/acme/nodegroups/w"

static struct event_base *base;
static char *dir;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *store;
static rz_watch_hub_t *hub;
static rz_http_t *srv;
static rz_api_t *api;
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
	ck_assert_int_eq(rz_store_new(&store, db, bus, 20, &err), 0);
	ck_assert_int_eq(
	    rz_watch_hub_new(&hub, base, store, bus, 300, opts.max_stream_backlog, &err), 0);
	ck_assert_int_eq(rz_http_new(&srv, base, &opts, &err), 0);
	ck_assert_int_eq(rz_api_add_aliases(srv, &err), 0);
	ck_assert_int_eq(rz_api_new(&api, srv, store, hub, NULL, NULL, &err), 0);
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:0", &err), 0);
	port = rz_http_port(srv);
}

static void teardown(void)
{
	rz_watch_hub_free(hub);
	rz_http_free(srv);
	rz_api_free(api);
	rz_store_free(store);
	rz_bus_free(bus);
	rz_db_close(db);
	event_base_free(base);
	rzt_rmrf(dir);
	free(dir);
}

/* Extra request header lines of the next calls ("User-Agent: ...\r\n"). */
static const char *extra = "";

/* One request; returns the status code and the body as JSON into *out. */
static int call(const char *method, const char *path, const char *ctype, const char *body,
                json_t **out)
{
	size_t size = 4096 + strlen(path) + (body ? strlen(body) : 0);
	char *raw = malloc(size);
	rzt_response_t r;
	json_error_t jerr;
	int code;

	ck_assert_ptr_nonnull(raw);
	snprintf(raw, size, "%s %s HTTP/1.1\r\nHost: t\r\n%s%s%s%sContent-Length: %zu\r\n\r\n%s",
	         method, path, extra, ctype ? "Content-Type: " : "", ctype ? ctype : "",
	         ctype ? "\r\n" : "", body ? strlen(body) : 0, body ? body : "");
	rzt_request(base, port, raw, &r);
	free(raw);
	code = r.code;
	*out = json_loads(r.body, 0, &jerr);
	ck_assert_msg(*out != NULL, "not JSON (%d): %s", code, r.body);
	rzt_response_free(&r);
	return code;
}

/* A request whose reply is only its code. */
static int code_of(const char *method, const char *path, const char *ctype, const char *body)
{
	json_t *j;
	int code = call(method, path, ctype, body, &j);

	json_decref(j);
	return code;
}

/* A member at a dotted path ("metadata.name", "items.0.x"), or NULL. */
static json_t *at(json_t *j, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p && j; p = strtok_r(NULL, ".", &save)) {
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(p)) : json_object_get(j, p);
	}
	return j;
}

static const char *str(json_t *j, const char *path)
{
	return json_string_value(at(j, path));
}

/* metadata.managedFields as "manager/Operation[/status]:f:a.f:b,...;..." with each entry's
 * leaves (FieldsV1 keys joined by '.'), entries as the server ordered them. */
static void leaves(json_t *node, const char *prefix, char *buf, size_t size, size_t *n)
{
	const char *k;
	json_t *v;

	if (json_object_size(node) == 0) {
		*n += (size_t)snprintf(buf + *n, size - *n, "%s%s", buf[*n - 1] == ':' ? "" : ",",
		                       prefix);
		return;
	}
	json_object_foreach(node, k, v)
	{
		char p[256];
		if (strcmp(k, ".") != 0) {
			snprintf(p, sizeof(p), "%s%s%s", prefix, *prefix ? "." : "", k);
			leaves(v, p, buf, size, n);
		}
	}
}

static const char *managers(json_t *obj)
{
	static char buf[2048];
	size_t n = 0, i;
	json_t *e;

	buf[0] = '\0';
	json_array_foreach(at(obj, "metadata.managedFields"), i, e)
	{
		ck_assert_str_eq(str(e, "apiVersion"), "rezuscloud.io/v1");
		ck_assert_str_eq(str(e, "fieldsType"), "FieldsV1");
		ck_assert_ptr_nonnull(str(e, "time"));
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s/%s%s:", i ? ";" : "",
		                      str(e, "manager"), str(e, "operation"),
		                      str(e, "subresource") ? "/status" : "");
		leaves(json_object_get(e, "fieldsV1"), "", buf, sizeof(buf), &n);
	}
	return buf;
}

static void make_tenant(void)
{
	ck_assert_int_eq(code_of("POST", "/api/v1/tenants?fieldManager=setup", "application/json",
	                         "{\"metadata\":{\"name\":\"acme\"},\"spec\":{}}"),
	                 201);
}

static const char ng_cfg[] = "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
                             "\"metadata\":{\"name\":\"w\",\"labels\":{\"team\":\"a\"}},"
                             "\"spec\":{\"role\":\"worker\",\"count\":%d,"
                             "\"providerClass\":\"sim\"}}";

static int apply_ng(const char *query, int count, json_t **out)
{
	char path[256], body[512];

	snprintf(path, sizeof(path), NG "?%s", query);
	snprintf(body, sizeof(body), ng_cfg, count);
	return call("PATCH", path, APPLY, body, out);
}

/* ------------------------------------------------------------------ options */

START_TEST(test_patch_options)
{
	json_t *j;

	make_tenant();
	/* an apply names its manager: 422 as kube-apiserver, on PatchOptions */
	ck_assert_int_eq(apply_ng("", 1, &j), 422);
	ck_assert_str_eq(str(j, "reason"), "Invalid");
	ck_assert_str_eq(str(j, "message"), "PatchOptions.meta.k8s.io \"\" is invalid: "
	                                    "fieldManager: Required value: is required for apply "
	                                    "patch");
	ck_assert_str_eq(str(j, "details.group"), "meta.k8s.io");
	ck_assert_str_eq(str(j, "details.kind"), "PatchOptions");
	ck_assert_str_eq(str(j, "details.causes.0.field"), "fieldManager");
	ck_assert_str_eq(str(j, "details.causes.0.reason"), "FieldValueRequired");
	json_decref(j);
	/* force is for applies only, and a boolean */
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme?force=false",
	                      "application/merge-patch+json", "{}", &j),
	                 422);
	ck_assert_str_eq(str(j, "message"), "PatchOptions.meta.k8s.io \"\" is invalid: force: "
	                                    "Forbidden: may not be specified for non-apply patch");
	ck_assert_str_eq(str(j, "details.causes.0.reason"), "FieldValueForbidden");
	json_decref(j);
	ck_assert_int_eq(apply_ng("fieldManager=k&force=maybe", 1, &j), 400);
	ck_assert_str_eq(str(j, "message"),
	                 "force: Invalid value: \"maybe\": must be true or false");
	json_decref(j);
	/* a manager's name is printable */
	ck_assert_int_eq(apply_ng("fieldManager=a%01b", 1, &j), 400);
	ck_assert_ptr_nonnull(strstr(str(j, "message"), "fieldManager: Invalid value"));
	json_decref(j);
	/* the configuration: this kind, no managedFields, the URL's name */
	ck_assert_int_eq(call("PATCH", NG "?fieldManager=k", APPLY,
	                      "{\"metadata\":{\"name\":\"w\"},\"spec\":{}}", &j),
	                 400);
	ck_assert_ptr_nonnull(strstr(str(j, "message"), "must set apiVersion and kind"));
	json_decref(j);
	ck_assert_int_eq(code_of("PATCH", NG "?fieldManager=k", APPLY,
	                         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\"}"),
	                 400);
	ck_assert_int_eq(call("PATCH", NG "?fieldManager=k", APPLY,
	                      "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	                      "\"metadata\":{\"managedFields\":[{\"manager\":\"x\"}]}}",
	                      &j),
	                 400);
	ck_assert_str_eq(str(j, "message"), "metadata.managedFields must be nil");
	json_decref(j);
	ck_assert_int_eq(code_of("PATCH", NG "?fieldManager=k", APPLY,
	                         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	                         "\"metadata\":{\"name\":\"other\"}}"),
	                 400);
	ck_assert_int_eq(code_of("PATCH", NG "?fieldManager=k", APPLY, "kind: [unclosed"), 400);
}
END_TEST

/* ------------------------------------------------------------------ apply */

START_TEST(test_apply_create_update_noop)
{
	json_t *j;
	char rv[32];

	make_tenant();
	ck_assert_int_eq(apply_ng("fieldManager=k&dryRun=All", 2, &j), 201);
	ck_assert_str_eq(managers(j), "k/Apply:f:metadata.f:labels.f:team,f:spec.f:count,"
	                              "f:spec.f:providerClass,f:spec.f:role");
	json_decref(j);
	ck_assert_int_eq(code_of("GET", NG, NULL, NULL), 404); /* the dry run stored nothing */
	ck_assert_int_eq(apply_ng("fieldManager=k", 2, &j), 201);
	ck_assert_int_eq(json_integer_value(at(j, "spec.count")), 2);
	ck_assert_str_eq(str(j, "metadata.labels.team"), "a");
	ck_assert_str_eq(managers(j), "k/Apply:f:metadata.f:labels.f:team,f:spec.f:count,"
	                              "f:spec.f:providerClass,f:spec.f:role");
	snprintf(rv, sizeof(rv), "%s", str(j, "metadata.resourceVersion"));
	json_decref(j);
	/* the same again: 200 and nothing written */
	ck_assert_int_eq(apply_ng("fieldManager=k", 2, &j), 200);
	ck_assert_str_eq(str(j, "metadata.resourceVersion"), rv);
	json_decref(j);
	/* as YAML, a change */
	ck_assert_int_eq(
	    call("PATCH", NG "?fieldManager=k", APPLY,
	         "apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata:\n  name: w\n"
	         "  labels: {team: a}\nspec:\n  role: worker\n  count: 3\n"
	         "  providerClass: sim\n",
	         &j),
	    200);
	ck_assert_int_eq(json_integer_value(at(j, "spec.count")), 3);
	ck_assert_str_ne(str(j, "metadata.resourceVersion"), rv);
	json_decref(j);
	/* the same validation as any write */
	ck_assert_int_eq(call("PATCH", NG "?fieldManager=k", APPLY,
	                      "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	                      "\"spec\":{\"role\":\"boss\"}}",
	                      &j),
	                 422);
	ck_assert_str_eq(str(j, "details.causes.0.field"), "spec.role");
	json_decref(j);
	/* a stale resourceVersion is a precondition that fails */
	ck_assert_int_eq(
	    call("PATCH", NG "?fieldManager=k", APPLY,
	         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	         "\"metadata\":{\"resourceVersion\":\"1\",\"labels\":{\"team\":\"a\"}},"
	         "\"spec\":{\"role\":\"worker\",\"count\":4,\"providerClass\":\"sim\"}}",
	         &j),
	    409);
	json_decref(j);
}
END_TEST

START_TEST(test_apply_conflict_and_force)
{
	json_t *j;

	make_tenant();
	ck_assert_int_eq(apply_ng("fieldManager=k", 2, &j), 201);
	json_decref(j);
	/* another manager scales it by merge patch: the field is its now */
	ck_assert_int_eq(call("PATCH", NG "?fieldManager=scaler", "application/merge-patch+json",
	                      "{\"spec\":{\"count\":5}}", &j),
	                 200);
	ck_assert_str_eq(managers(j), "k/Apply:f:metadata.f:labels.f:team,f:spec.f:providerClass,"
	                              "f:spec.f:role;scaler/Update:f:spec.f:count");
	json_decref(j);
	/* the same value is shared ownership */
	ck_assert_int_eq(apply_ng("fieldManager=k", 5, &j), 200);
	ck_assert_str_eq(managers(j), "k/Apply:f:metadata.f:labels.f:team,f:spec.f:count,"
	                              "f:spec.f:providerClass,f:spec.f:role;"
	                              "scaler/Update:f:spec.f:count");
	json_decref(j);
	/* another value conflicts, as Kubernetes reports it */
	ck_assert_int_eq(apply_ng("fieldManager=k", 3, &j), 409);
	ck_assert_str_eq(str(j, "reason"), "Conflict");
	ck_assert_str_eq(str(j, "message"), "Apply failed with 1 conflict: conflict with "
	                                    "\"scaler\" using rezuscloud.io/v1: .spec.count");
	ck_assert_str_eq(str(j, "details.causes.0.reason"), "FieldManagerConflict");
	ck_assert_str_eq(str(j, "details.causes.0.field"), ".spec.count");
	ck_assert_str_eq(str(j, "details.causes.0.message"),
	                 "conflict with \"scaler\" using rezuscloud.io/v1");
	json_decref(j);
	ck_assert_int_eq(call("GET", NG, NULL, NULL, &j), 200);
	ck_assert_int_eq(json_integer_value(at(j, "spec.count")), 5);
	json_decref(j);
	/* force takes it */
	ck_assert_int_eq(apply_ng("fieldManager=k&force=true", 3, &j), 200);
	ck_assert_int_eq(json_integer_value(at(j, "spec.count")), 3);
	ck_assert_str_eq(managers(j), "k/Apply:f:metadata.f:labels.f:team,f:spec.f:count,"
	                              "f:spec.f:providerClass,f:spec.f:role");
	json_decref(j);
}
END_TEST

START_TEST(test_apply_removes_dropped_fields)
{
	json_t *j;

	make_tenant();
	ck_assert_int_eq(apply_ng("fieldManager=k", 2, &j), 201);
	json_decref(j);
	/* k no longer applies the label: it goes, with the labels it emptied */
	ck_assert_int_eq(
	    call("PATCH", NG "?fieldManager=k", APPLY,
	         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	         "\"spec\":{\"role\":\"worker\",\"count\":2,\"providerClass\":\"sim\"}}",
	         &j),
	    200);
	ck_assert_ptr_null(at(j, "metadata.labels"));
	json_decref(j);
	/* a label another manager also set stays when k drops it */
	ck_assert_int_eq(apply_ng("fieldManager=k", 2, &j), 200);
	json_decref(j);
	ck_assert_int_eq(code_of("PATCH", NG "?fieldManager=other", APPLY,
	                         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	                         "\"metadata\":{\"labels\":{\"team\":\"a\"}}}"),
	                 200);
	ck_assert_int_eq(
	    call("PATCH", NG "?fieldManager=k", APPLY,
	         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	         "\"spec\":{\"role\":\"worker\",\"count\":2,\"providerClass\":\"sim\"}}",
	         &j),
	    200);
	ck_assert_str_eq(str(j, "metadata.labels.team"), "a");
	json_decref(j);
	/* a required field no manager applies goes too, and validation says so */
	ck_assert_int_eq(call("PATCH", NG "?fieldManager=k", APPLY,
	                      "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"NodeGroup\","
	                      "\"spec\":{\"role\":\"worker\",\"count\":2}}",
	                      &j),
	                 422);
	ck_assert_str_eq(str(j, "details.causes.0.field"), "spec.providerClass");
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ updates */

START_TEST(test_updates_recorded)
{
	json_t *j;

	/* the manager from the User-Agent up to its '/', else "unknown" */
	extra = "User-Agent: kubectl-create/v1.32.4 (linux/amd64) kubernetes/abc\r\n";
	ck_assert_int_eq(call("POST", "/api/v1/tenants", "application/json",
	                      "{\"metadata\":{\"name\":\"acme\",\"labels\":{\"a\":\"1\"}},"
	                      "\"spec\":{\"clusterProvider\":\"sim\"}}",
	                      &j),
	                 201);
	ck_assert_ptr_nonnull(strstr(managers(j), "kubectl-create/Update:f:metadata.f:labels.f:a,"
	                                          "f:spec.f:clusterProvider"));
	json_decref(j);
	extra = "";
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme", "application/json-patch+json",
	                      "[{\"op\":\"add\",\"path\":\"/metadata/labels/b\",\"value\":\"2\"}]",
	                      &j),
	                 200);
	ck_assert_ptr_nonnull(strstr(managers(j), ";unknown/Update:f:metadata.f:labels.f:b"));
	json_decref(j);
	/* a status write is its own entry */
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/tenants/acme/status?fieldManager=ctl",
	         "application/merge-patch+json",
	         "{\"status\":{\"phase\":\"Ready\"},\"metadata\":{\"managedFields\":[]}}", &j),
	    200);
	ck_assert_ptr_nonnull(strstr(managers(j), "ctl/Update/status:f:status.f:phase"));
	ck_assert_ptr_nonnull(strstr(managers(j), "kubectl-create/Update")); /* not cleared */
	json_decref(j);
	/* a client cannot write them, but clears them with [] */
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme", "application/merge-patch+json",
	                      "{\"metadata\":{\"managedFields\":[{\"manager\":\"forged\","
	                      "\"operation\":\"Apply\",\"fieldsType\":\"FieldsV1\","
	                      "\"fieldsV1\":{\"f:spec\":{}}}]}}",
	                      &j),
	                 200);
	ck_assert_ptr_null(strstr(managers(j), "forged"));
	json_decref(j);
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme", "application/merge-patch+json",
	                      "{\"metadata\":{\"managedFields\":[]}}", &j),
	                 200);
	ck_assert_ptr_null(at(j, "metadata.managedFields"));
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/tenants/acme", NULL, NULL, &j), 200);
	ck_assert_ptr_null(at(j, "metadata.managedFields"));
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ kinds */

START_TEST(test_apply_user_keeps_no_password)
{
	json_t *j;
	char *text;

	ck_assert_int_eq(call("PATCH", "/api/v1/users/viewer?fieldManager=k", APPLY,
	                      "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"User\","
	                      "\"spec\":{\"role\":\"view\",\"password\":\"Sw0rdfish-apply-7\"}}",
	                      &j),
	                 201);
	text = json_dumps(j, JSON_COMPACT);
	ck_assert_ptr_null(strstr(text, "Sw0rdfish"));
	ck_assert_ptr_null(strstr(text, "password"));
	ck_assert_str_eq(managers(j), "k/Apply:f:spec.f:role");
	free(text);
	json_decref(j);
	/* applied again: no conflict with itself, nothing to remove */
	ck_assert_int_eq(call("PATCH", "/api/v1/users/viewer?fieldManager=k", APPLY,
	                      "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"User\","
	                      "\"spec\":{\"role\":\"edit\",\"password\":\"Sw0rdfish-apply-7\"}}",
	                      &j),
	                 200);
	ck_assert_str_eq(str(j, "spec.role"), "edit");
	json_decref(j);
}
END_TEST

START_TEST(test_apply_creates_runs_only)
{
	static const char run[] = "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Run\","
	                          "\"spec\":{\"operation\":\"%s\"}}";
	char body[256];
	json_t *j;

	make_tenant();
	snprintf(body, sizeof(body), run, "plan");
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/tenants/acme/runs/r1?fieldManager=k", APPLY, body, &j), 201);
	ck_assert_str_eq(str(j, "status.phase"), "Queued");
	json_decref(j);
	ck_assert_int_eq(
	    code_of("PATCH", "/api/v1/tenants/acme/runs/r1?fieldManager=k", APPLY, body), 200);
	snprintf(body, sizeof(body), run, "apply");
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/tenants/acme/runs/r1?fieldManager=k", APPLY, body, &j), 405);
	ck_assert_ptr_nonnull(strstr(str(j, "message"), "never changed"));
	json_decref(j);
	ck_assert_int_eq(
	    code_of("PATCH", "/api/v1/tenants/acme/runs/r1", "application/merge-patch+json", "{}"),
	    405);
	/* a kind whose create mints a secret is not created by apply */
	ck_assert_int_eq(code_of("PATCH", "/api/v1/users/u/tokens/t?fieldManager=k", APPLY,
	                         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"APIToken\"}"),
	                 405);
}
END_TEST

START_TEST(test_apply_status)
{
	json_t *j;

	make_tenant();
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme/status?fieldManager=ctl", APPLY,
	                      "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\","
	                      "\"status\":{\"phase\":\"Ready\"}}",
	                      &j),
	                 200);
	ck_assert_str_eq(str(j, "status.phase"), "Ready");
	ck_assert_ptr_nonnull(strstr(managers(j), "ctl/Apply/status:f:status.f:phase"));
	json_decref(j);
	ck_assert_int_eq(code_of("PATCH", "/api/v1/tenants/nope/status?fieldManager=ctl", APPLY,
	                         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\"}"),
	                 404);
}
END_TEST

/* Lists are atomic, but an apply keeps the finalizers the server gave the object. */
START_TEST(test_apply_keeps_server_finalizers)
{
	static const char with[] = "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\","
	                           "\"metadata\":{\"finalizers\":[\"example.com/x\"]},\"spec\":{}}";
	json_t *j;
	char rv[32];

	make_tenant();
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme?fieldManager=k", APPLY, with, &j),
	                 200);
	ck_assert_str_eq(str(j, "metadata.finalizers.0"), "example.com/x");
	ck_assert_str_eq(str(j, "metadata.finalizers.1"), "rezuscloud.io/teardown");
	snprintf(rv, sizeof(rv), "%s", str(j, "metadata.resourceVersion"));
	json_decref(j);
	ck_assert_int_eq(call("PATCH", "/api/v1/tenants/acme?fieldManager=k", APPLY, with, &j),
	                 200);
	ck_assert_str_eq(str(j, "metadata.resourceVersion"), rv);
	json_decref(j);
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/tenants/acme?fieldManager=k", APPLY,
	         "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\",\"spec\":{}}", &j),
	    200);
	ck_assert_int_eq(json_array_size(at(j, "metadata.finalizers")), 1);
	ck_assert_str_eq(str(j, "metadata.finalizers.0"), "rezuscloud.io/teardown");
	json_decref(j);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("apply");
	TCase *tc = tcase_create("apply");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_patch_options);
	tcase_add_test(tc, test_apply_create_update_noop);
	tcase_add_test(tc, test_apply_conflict_and_force);
	tcase_add_test(tc, test_apply_removes_dropped_fields);
	tcase_add_test(tc, test_updates_recorded);
	tcase_add_test(tc, test_apply_user_keeps_no_password);
	tcase_add_test(tc, test_apply_creates_runs_only);
	tcase_add_test(tc, test_apply_status);
	tcase_add_test(tc, test_apply_keeps_server_finalizers);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
