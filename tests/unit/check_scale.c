/* tests/unit/check_scale.c - a node group's autoscaling/v1 Scale (core/api/scale.c): read,
 * replaced and patched at the native and the group path as a spec write of the node group
 * (validation, admission, resourceVersion preconditions, dry runs), in discovery and in the
 * OpenAPI document. */
#include <config.h>

#include "core/model/kinds.h"
#include "tests/unit/apitest.h"

#define SCALE "/api/v1/tenants/acme/nodegroups/web/scale"
#define GROUP "/apis/rezuscloud.io/v1/namespaces/acme/nodegroups/web/scale"
#define NG    "/api/v1/tenants/acme/nodegroups/web"

/* The member at a dotted path of j (borrowed), an array's by index; NULL when absent. */
static json_t *node(json_t *j, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p && j; p = strtok_r(NULL, ".", &save)) {
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(p)) : json_object_get(j, p);
	}
	return j;
}

/* A field of the node group web of acme, as the API gives it. */
static const char *ng_at(const char *path)
{
	static char buf[128];
	json_t *j;

	ck_assert_int_eq(get(NG, &j), 200);
	snprintf(buf, sizeof(buf), "%s", at(j, path) ? at(j, path) : "(none)");
	json_decref(j);
	return buf;
}

/* A Scale for PUT: replicas, and a resourceVersion when rv is not NULL. */
static const char *scale_body(int replicas, const char *rv)
{
	static char buf[512];

	snprintf(buf, sizeof(buf),
	         "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":"
	         "\"web\",\"namespace\":\"acme\"%s%s%s},\"spec\":{\"replicas\":%d}}",
	         rv ? ",\"resourceVersion\":\"" : "", rv ? rv : "", rv ? "\"" : "", replicas);
	return buf;
}

START_TEST(test_get)
{
	const char *uid;
	json_t *j, *out = NULL;
	rz_err_t err = { 0 };

	make_tenant("acme");
	uid = make_nodegroup("acme", "web", 2);
	ck_assert_int_eq(get(SCALE, &j), 200);
	ck_assert_str_eq(at(j, "apiVersion"), "autoscaling/v1");
	ck_assert_str_eq(at(j, "kind"), "Scale");
	ck_assert_str_eq(at(j, "metadata.name"), "web");
	ck_assert_str_eq(at(j, "metadata.namespace"), "acme");
	ck_assert_str_eq(at(j, "metadata.uid"), uid);
	ck_assert_str_eq(at(j, "metadata.resourceVersion"), ng_at("metadata.resourceVersion"));
	ck_assert_ptr_nonnull(at(j, "metadata.creationTimestamp"));
	ck_assert_str_eq(at(j, "spec.replicas"), "2");
	ck_assert_str_eq(at(j, "status.replicas"), "0"); /* no machine counted yet */
	ck_assert_str_eq(at(j, "status.selector"), "rezuscloud.io/nodegroup=web");
	ck_assert_ptr_null(at(j, "spec.count")); /* the Scale's own fields only */
	json_decref(j);

	/* status.replicas is what was counted: the machines there are */
	j = json_pack("{s:{s:i, s:i}}", "status", "total", 3, "desired", 2);
	ck_assert_int_eq(rz_store_update(store, rz_kind_by_name("NodeGroup"), "acme", "web", j, 0,
	                                 RZ_UPDATE_STATUS, NULL, &out, NULL, &err),
	                 0);
	json_decref(out);
	json_decref(j);
	ck_assert_int_eq(get(GROUP, &j), 200); /* the group path, as kubectl asks */
	ck_assert_str_eq(at(j, "status.replicas"), "3");
	json_decref(j);

	ck_assert_int_eq(get("/api/v1/tenants/acme/nodegroups/nope/scale", &j), 404);
	ck_assert_str_eq(at(j, "reason"), "NotFound");
	json_decref(j);
	/* only a kind with a scale has one */
	ck_assert_int_eq(get("/api/v1/tenants/acme/scale", &j), 404);
	json_decref(j);
}
END_TEST

/* PUT: spec.replicas becomes spec.count; a given resourceVersion is a precondition (409
 * when stale), none applies to the current one; client-go's scale client sends no
 * Content-Type. */
START_TEST(test_put)
{
	char rv[32];
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "web", 2);
	snprintf(rv, sizeof(rv), "%s", ng_at("metadata.resourceVersion"));
	ck_assert_int_eq(call("PUT", SCALE, "application/json", scale_body(3, rv), &j), 200);
	ck_assert_str_eq(at(j, "kind"), "Scale");
	ck_assert_str_eq(at(j, "spec.replicas"), "3");
	ck_assert_str_ne(at(j, "metadata.resourceVersion"), rv);
	ck_assert_str_eq(at(j, "metadata.resourceVersion"), ng_at("metadata.resourceVersion"));
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "3");
	ck_assert_str_eq(ng_at("metadata.generation"), "2"); /* a spec write */

	/* stale: a conflict, nothing written */
	ck_assert_int_eq(call("PUT", GROUP, "application/json", scale_body(5, rv), &j), 409);
	ck_assert_str_eq(at(j, "reason"), "Conflict");
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "3");

	/* no resourceVersion, no Content-Type */
	ck_assert_int_eq(call("PUT", GROUP, NULL, scale_body(4, NULL), &j), 200);
	ck_assert_str_eq(at(j, "spec.replicas"), "4");
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "4");
	/* another type than JSON or YAML is still refused */
	ck_assert_int_eq(call("PUT", SCALE, "text/plain", scale_body(4, NULL), &j), 415);
	json_decref(j);
}
END_TEST

/* What a Scale must be: each problem named by the Scale's field, nothing written. */
START_TEST(test_put_invalid)
{
	static const struct {
		const char *body;
		int code;
		const char *want; /* in the causes, or the message of a 400 */
	} cases[] = {
		{ "{\"spec\":{}}", 422, "spec.replicas|FieldValueRequired|" },
		{ "{\"spec\":{\"replicas\":\"3\"}}", 422,
		  "spec.replicas|FieldValueInvalid|must be an "
		  "integer" },
		{ "{\"spec\":{\"replicas\":1001}}", 422,
		  "spec.replicas|FieldValueInvalid|must be between 0 and 1000, inclusive" },
		{ "{\"spec\":{\"replicas\":-1}}", 422, "spec.replicas|FieldValueInvalid|" },
		{ "{\"metadata\":{\"resourceVersion\":\"x1\"},\"spec\":{\"replicas\":1}}", 422,
		  "metadata.resourceVersion|FieldValueInvalid|" },
		{ "{\"kind\":\"Deployment\",\"spec\":{\"replicas\":1}}", 400,
		  "the body must be an autoscaling/v1 Scale" },
		{ "{\"apiVersion\":\"apps/v1\",\"spec\":{\"replicas\":1}}", 400,
		  "the body must be an autoscaling/v1 Scale" },
		{ "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"replicas\":1}}", 400,
		  "does not match the name on the URL" },
		{ "{\"metadata\":{\"namespace\":\"other\"},\"spec\":{\"replicas\":1}}", 400,
		  "does not match the tenant on the URL" },
		{ "[1]", 400, "must be a JSON object" },
	};
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "web", 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(call("PUT", SCALE, "application/json", cases[i].body, &j) ==
		                  cases[i].code,
		              "case %zu", i);
		ck_assert_msg(strstr(cases[i].code == 422 ? causes_text(j) : at(j, "message"),
		                     cases[i].want) != NULL,
		              "case %zu: %s", i, json_dumps(j, JSON_COMPACT));
		json_decref(j);
	}
	ck_assert_str_eq(ng_at("spec.count"), "2");
	ck_assert_str_eq(ng_at("metadata.generation"), "1");
}
END_TEST

/* PATCH of the Scale, merge or JSON patch; a resourceVersion in it is a precondition. */
START_TEST(test_patch)
{
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "web", 2);
	ck_assert_int_eq(
	    call("PATCH", GROUP, "application/merge-patch+json", "{\"spec\":{\"replicas\":3}}", &j),
	    200);
	ck_assert_str_eq(at(j, "apiVersion"), "autoscaling/v1");
	ck_assert_str_eq(at(j, "spec.replicas"), "3");
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "3");

	ck_assert_int_eq(call("PATCH", SCALE, "application/json-patch+json",
	                      "[{\"op\":\"test\",\"path\":\"/spec/replicas\",\"value\":3},"
	                      "{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":1}]",
	                      &j),
	                 200);
	ck_assert_str_eq(at(j, "spec.replicas"), "1");
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "1");
	/* a failed test: 422, nothing written */
	ck_assert_int_eq(call("PATCH", SCALE, "application/json-patch+json",
	                      "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":7},"
	                      "{\"op\":\"test\",\"path\":\"/spec/replicas\",\"value\":3}]",
	                      &j),
	                 422);
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "1");
	/* a stale resourceVersion: conflict */
	ck_assert_int_eq(
	    call("PATCH", SCALE, "application/merge-patch+json",
	         "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"replicas\":5}}", &j),
	    409);
	json_decref(j);
	/* no replicas left: invalid */
	ck_assert_int_eq(call("PATCH", SCALE, "application/merge-patch+json",
	                      "{\"spec\":{\"replicas\":null}}", &j),
	                 422);
	ck_assert_ptr_nonnull(strstr(causes_text(j), "spec.replicas|FieldValueRequired"));
	json_decref(j);
	ck_assert_int_eq(call("PATCH", SCALE, "application/json", "{}", &j), 415);
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "1");
}
END_TEST

/* dryRun=All answers the Scale the write would give and writes nothing. */
START_TEST(test_dry_run)
{
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "web", 2);
	ck_assert_int_eq(call("PATCH", SCALE "?dryRun=All", "application/merge-patch+json",
	                      "{\"spec\":{\"replicas\":6}}", &j),
	                 200);
	ck_assert_str_eq(at(j, "kind"), "Scale");
	ck_assert_str_eq(at(j, "spec.replicas"), "6");
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "2");
	ck_assert_int_eq(
	    call("PUT", SCALE "?dryRun=Some", "application/json", scale_body(6, NULL), &j), 400);
	json_decref(j);
}
END_TEST

/* The node group's own checks and the admission check hold for a Scale's write. */
static void no_more_than_five(void *arg, const rz_kind_t *k, const json_t *obj, const json_t *old,
                              json_t *causes)
{
	json_int_t n = json_integer_value(json_object_get(json_object_get(obj, "spec"), "count"));

	if (strcmp(k->kind, "NodeGroup") == 0 && n > 5) {
		json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "field", "spec.count",
		                                        "reason", "FieldValueForbidden", "message",
		                                        "at most 5 machines here"));
	}
}

START_TEST(test_admission)
{
	json_t *j;

	make_tenant("acme");
	make_nodegroup("acme", "web", 2);
	rz_api_set_admit(api, no_more_than_five, NULL);
	ck_assert_int_eq(call("PUT", SCALE, "application/json", scale_body(6, NULL), &j), 422);
	ck_assert_ptr_nonnull(strstr(causes_text(j), "spec.count|FieldValueForbidden|at most 5"));
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "2");
	ck_assert_int_eq(call("PUT", SCALE, "application/json", scale_body(5, NULL), &j), 200);
	json_decref(j);
	ck_assert_str_eq(ng_at("spec.count"), "5");
	rz_api_set_admit(api, NULL, NULL);
}
END_TEST

/* Discovery names nodegroups/scale as autoscaling/v1 Scale (kubectl scale resolves it
 * there), in the APIResourceList and the aggregated document; OpenAPI describes it. */
START_TEST(test_discovery_and_openapi)
{
	json_t *j, *r, *doc, *put, *paths;
	size_t i;
	bool found = false;

	ck_assert_int_eq(get("/apis/rezuscloud.io/v1", &j), 200);
	json_array_foreach(json_object_get(j, "resources"), i, r)
	{
		if (strcmp(at(r, "name"), "nodegroups/scale") == 0) {
			found = true;
			ck_assert_str_eq(at(r, "group"), "autoscaling");
			ck_assert_str_eq(at(r, "version"), "v1");
			ck_assert_str_eq(at(r, "kind"), "Scale");
			ck_assert(json_is_true(json_object_get(r, "namespaced")));
			ck_assert_str_eq(at(r, "verbs.0"), "get");
			ck_assert_str_eq(at(r, "verbs.1"), "patch");
			ck_assert_str_eq(at(r, "verbs.2"), "update");
		}
		ck_assert_str_ne(at(r, "name"), "tenants/scale");
	}
	ck_assert(found);
	json_decref(j);

	found = false;
	{
		rzt_response_t resp;
		json_t *res, *sub;
		size_t k;
		rzt_request(base, port,
		            "GET /apis HTTP/1.1\r\nHost: t\r\nAccept: application/json;"
		            "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList\r\n\r\n",
		            &resp);
		j = json_loads(resp.body, 0, NULL);
		rzt_response_free(&resp);
		ck_assert_ptr_nonnull(j);
		json_array_foreach(node(j, "items.0.versions.0.resources"), i, res)
		{
			json_array_foreach(json_object_get(res, "subresources"), k, sub)
			{
				if (strcmp(at(sub, "subresource"), "scale") == 0) {
					ck_assert_str_eq(at(res, "resource"), "nodegroups");
					ck_assert_str_eq(at(sub, "responseKind.group"),
					                 "autoscaling");
					ck_assert_str_eq(at(sub, "responseKind.version"), "v1");
					ck_assert_str_eq(at(sub, "responseKind.kind"), "Scale");
					found = true;
				}
			}
		}
		json_decref(j);
	}
	ck_assert(found);

	doc = rz_openapi_document(srv, false);
	paths = json_object_get(doc, "paths");
	put = json_object_get(
	    json_object_get(paths, "/api/v1/tenants/{tenant}/nodegroups/{name}/scale"), "put");
	ck_assert_ptr_nonnull(put);
	ck_assert_str_eq(at(put, "operationId"), "replaceNodeGroupScale");
	ck_assert_str_eq(at(put, "requestBody.content.application/json.schema.$ref"),
	                 "#/components/schemas/Scale");
	ck_assert_ptr_nonnull(node(doc, "components.schemas.Scale"));
	json_decref(doc);
	/* the group path is the group-version document's (one path form each) */
	doc = rz_openapi_document(srv, true);
	paths = json_object_get(doc, "paths");
	ck_assert_ptr_nonnull(json_object_get(
	    json_object_get(paths,
	                    "/apis/rezuscloud.io/v1/namespaces/{tenant}/nodegroups/{name}/scale"),
	    "patch"));
	json_decref(doc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scale");
	TCase *tc = tcase_create("scale");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_get);
	tcase_add_test(tc, test_put);
	tcase_add_test(tc, test_put_invalid);
	tcase_add_test(tc, test_patch);
	tcase_add_test(tc, test_dry_run);
	tcase_add_test(tc, test_admission);
	tcase_add_test(tc, test_discovery_and_openapi);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
