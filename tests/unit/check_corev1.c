/* tests/unit/check_corev1.c - Events where Kubernetes' core v1 has them (core/api/corev1.c):
 * /api/v1/namespaces/{tenant}/events and /api/v1/events in its shape (apiVersion v1) for
 * lists, gets and watches, kubectl describe's queries, and the native and group paths,
 * which keep ours. */
#include <config.h>

#include "core/store/events.h"
#include "tests/unit/apitest.h"

/* Two tenants with a node group "web" each, and their events: acme's node group scaled,
 * acme Ready, beta's node group scaled. Returns acme's node group's uid (static). */
static const char *events_fixture(void)
{
	static char uid[64];

	make_tenant("acme");
	make_tenant("beta");
	snprintf(uid, sizeof(uid), "%s", make_nodegroup("acme", "web", 1));
	make_nodegroup("beta", "web", 1);
	ck_assert_int_eq(rz_events_record(store, "acme", "NodeGroup", "web", "Normal", "ScaledUp",
	                                  "desired machines 2 (were 1)", "engine"),
	                 0);
	ck_assert_int_eq(rz_events_record(store, "acme", "Tenant", "acme", "Normal", "Ready",
	                                  "phase Ready", "engine"),
	                 0);
	ck_assert_int_eq(rz_events_record(store, "beta", "NodeGroup", "web", "Normal", "ScaledUp",
	                                  "desired machines 3 (were 1)", "engine"),
	                 0);
	return uid;
}

/* Every item of a list is a core v1 Event of tenant. */
static void all_core_v1(json_t *list, const char *tenant)
{
	size_t i;
	json_t *o;

	ck_assert_str_eq(at(list, "apiVersion"), "v1");
	ck_assert_str_eq(at(list, "kind"), "EventList");
	json_array_foreach(json_object_get(list, "items"), i, o)
	{
		ck_assert_str_eq(at(o, "apiVersion"), "v1");
		ck_assert_str_eq(at(o, "kind"), "Event");
		if (tenant != NULL) {
			ck_assert_str_eq(at(o, "metadata.namespace"), tenant);
		}
	}
}

/* The core v1 paths answer in its shape, with what its typed clients read; the native and
 * the group paths keep rezuscloud.io/v1. */
START_TEST(test_core_v1_paths)
{
	const char *uid = events_fixture();
	char path[256], name[128];
	json_t *j;

	ck_assert_int_eq(get("/api/v1/namespaces/acme/events", &j), 200);
	all_core_v1(j, "acme");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 2);
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/namespaces/acme/events?fieldSelector="
	                     "involvedObject.kind%3DNodeGroup",
	                     &j),
	                 200);
	all_core_v1(j, "acme");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	snprintf(name, sizeof(name), "%s", at(j, "items.0.metadata.name"));
	json_decref(j);

	snprintf(path, sizeof(path), "/api/v1/namespaces/acme/events/%s", name);
	ck_assert_int_eq(get(path, &j), 200);
	ck_assert_str_eq(at(j, "apiVersion"), "v1");
	ck_assert_str_eq(at(j, "kind"), "Event");
	ck_assert_str_eq(at(j, "metadata.namespace"), "acme");
	ck_assert_str_eq(at(j, "involvedObject.kind"), "NodeGroup");
	ck_assert_str_eq(at(j, "involvedObject.name"), "web");
	ck_assert_str_eq(at(j, "involvedObject.namespace"), "acme");
	ck_assert_str_eq(at(j, "involvedObject.apiVersion"), "rezuscloud.io/v1");
	ck_assert_str_eq(at(j, "involvedObject.uid"), uid);
	ck_assert_str_eq(at(j, "reason"), "ScaledUp");
	ck_assert_str_eq(at(j, "type"), "Normal");
	ck_assert_str_eq(at(j, "count"), "1");
	ck_assert_str_eq(at(j, "source.component"), "engine");
	ck_assert_ptr_nonnull(at(j, "firstTimestamp"));
	ck_assert_ptr_nonnull(at(j, "lastTimestamp"));
	json_decref(j);
	ck_assert_int_eq(get("/api/v1/namespaces/acme/events/nope.00000000", &j), 404);
	ck_assert_str_eq(at(j, "reason"), "NotFound");
	json_decref(j);

	/* every tenant's, at the core path: kubectl describe of a Tenant asks there */
	ck_assert_int_eq(get("/api/v1/events", &j), 200);
	all_core_v1(j, NULL);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 3);
	json_decref(j);
	/* indented, and a page with its continue token, in the same shape */
	ck_assert_int_eq(get("/api/v1/namespaces/acme/events?pretty=true&limit=1", &j), 200);
	all_core_v1(j, "acme");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	ck_assert_ptr_nonnull(at(j, "metadata.continue"));
	json_decref(j);

	/* ours elsewhere: the native paths and the group's */
	static const char *const ours[] = { "/api/v1/tenants/acme/events",
		                            "/apis/rezuscloud.io/v1/namespaces/acme/events",
		                            "/apis/rezuscloud.io/v1/events" };
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(get(ours[i], &j), 200);
		ck_assert_msg(strcmp(at(j, "apiVersion"), "rezuscloud.io/v1") == 0, "%s", ours[i]);
		ck_assert_str_eq(at(j, "items.0.apiVersion"), "rezuscloud.io/v1");
		json_decref(j);
	}
	snprintf(path, sizeof(path), "/api/v1/tenants/acme/events/%s", name);
	ck_assert_int_eq(get(path, &j), 200);
	ck_assert_str_eq(at(j, "apiVersion"), "rezuscloud.io/v1");
	json_decref(j);

	/* read-only there too */
	ck_assert_int_eq(post("/api/v1/namespaces/acme/events", "{\"reason\":\"Forged\"}", &j),
	                 405);
	json_decref(j);
}
END_TEST

/* kubectl describe's queries, as kubectl 1.32 sends them: name, namespace (empty for a
 * cluster-scoped Tenant), kind and uid. */
START_TEST(test_describe_queries)
{
	const char *ng_uid = events_fixture();
	char path[512], tenant_uid[64];
	json_t *j;

	ck_assert_int_eq(get("/api/v1/tenants/acme", &j), 200);
	snprintf(tenant_uid, sizeof(tenant_uid), "%s", at(j, "metadata.uid"));
	json_decref(j);

	snprintf(path, sizeof(path),
	         "/api/v1/events?fieldSelector=involvedObject.name%%3Dacme%%2C"
	         "involvedObject.namespace%%3D%%2CinvolvedObject.kind%%3DTenant%%2C"
	         "involvedObject.uid%%3D%s&limit=500",
	         tenant_uid);
	ck_assert_int_eq(get(path, &j), 200);
	all_core_v1(j, "acme");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	ck_assert_str_eq(at(j, "items.0.reason"), "Ready");
	json_decref(j);

	snprintf(path, sizeof(path),
	         "/api/v1/namespaces/acme/events?fieldSelector=involvedObject.name%%3Dweb%%2C"
	         "involvedObject.namespace%%3Dacme%%2CinvolvedObject.kind%%3DNodeGroup%%2C"
	         "involvedObject.uid%%3D%s&limit=500",
	         ng_uid);
	ck_assert_int_eq(get(path, &j), 200);
	all_core_v1(j, "acme");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	ck_assert_str_eq(at(j, "items.0.message"), "desired machines 2 (were 1)");
	json_decref(j);

	/* kubectl events --for nodegroup/web: kind, apiVersion and name */
	ck_assert_int_eq(get("/api/v1/namespaces/acme/events?fieldSelector=involvedObject.kind%3D"
	                     "NodeGroup%2CinvolvedObject.apiVersion%3Drezuscloud.io%2Fv1%2C"
	                     "involvedObject.name%3Dweb",
	                     &j),
	                 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);

	/* another object of the name (a node group made again) has another uid */
	ck_assert_int_eq(get("/api/v1/namespaces/acme/events?fieldSelector="
	                     "involvedObject.name%3Dweb,involvedObject.uid%3Dother",
	                     &j),
	                 200);
	ck_assert_str_eq(names(j), "");
	json_decref(j);
	/* a namespace selects across tenants too, at the core path */
	ck_assert_int_eq(get("/api/v1/events?fieldSelector=involvedObject.namespace%3Dbeta", &j),
	                 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	ck_assert_str_eq(at(j, "items.0.metadata.namespace"), "beta");
	json_decref(j);

	/* a field it cannot select by: 400, the message cut at a word, never mid-word */
	ck_assert_int_eq(get("/api/v1/events?fieldSelector=involvedObject.name%3Dacme%2C"
	                     "involvedObject.fieldPath%3Dx",
	                     &j),
	                 400);
	ck_assert_ptr_nonnull(strstr(at(j, "message"), "field 'involvedObject.fieldPath' is not "
	                                               "supported (use metadata.name, "));
	ck_assert_ptr_nonnull(strstr(at(j, "message"), ") at position 25"));
	json_decref(j);
}
END_TEST

/* A watch at the core path sends core v1 Events, and its bookmarks name that version. */
START_TEST(test_core_v1_watch)
{
	rzt_stream_t *s;

	events_fixture();
	s = rzt_stream_open(base, port,
	                    "GET /api/v1/namespaces/acme/events?watch=true&allowWatchBookmarks=true"
	                    "&fieldSelector=involvedObject.kind%3DNodeGroup HTTP/1.1\r\n"
	                    "Accept: application/json\r\n\r\n");
	ck_assert_int_eq(s->head.code, 200);
	ck_assert(rzt_stream_until(base, s, "}\n", 5));
	ck_assert_ptr_nonnull(strstr(
	    s->body, "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Event\""));
	ck_assert_int_eq(rz_events_record(store, "acme", "NodeGroup", "web", "Normal", "ScaledUp",
	                                  "desired machines 3 (were 2)", "engine"),
	                 0);
	ck_assert(rzt_stream_until(base, s, "\"type\":\"MODIFIED\"", 5));
	ck_assert_ptr_nonnull(
	    strstr(s->body,
	           "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Event\""));
	ck_assert(rzt_stream_until(base, s, "BOOKMARK", 5));
	ck_assert_ptr_nonnull(strstr(s->body, "\"kind\":\"Event\",\"apiVersion\":\"v1\""));
	ck_assert_int_eq(rzt_stream_count(s, "rezuscloud.io/v1\",\"kind\":\"Event\""), 0);
	rzt_stream_close(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("corev1");
	TCase *tc = tcase_create("corev1");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_core_v1_paths);
	tcase_add_test(tc, test_describe_queries);
	tcase_add_test(tc, test_core_v1_watch);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
