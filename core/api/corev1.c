/* core/api/corev1.c - Events where Kubernetes' core v1 has them: /api/v1/events and
 * /api/v1/namespaces/{tenant}/events, in its shape (apiVersion "v1"), for kubectl describe
 * and the client libraries' typed clients, which decode nothing else there. */
#include <config.h>

#include <stdlib.h>

#include "core/api/api-int.h"

#define CORE_V1 "v1"

/* The object as a core v1 client decodes it: the same members, apiVersion "v1". Fields
 * stay as stored (the selectors look at them so): Events record involvedObject's
 * namespace, uid and apiVersion for these clients (core/store/events.c). */
static json_t *core_v1_of(const json_t *obj)
{
	json_t *out = json_copy((json_t *)obj); /* shallow: its members are shared, unchanged */

	if (out != NULL && json_object_set_new(out, "apiVersion", json_string(CORE_V1)) != 0) {
		json_decref(out);
		out = NULL;
	}
	return out;
}

/* A watch's object in that shape (rz_watch_render_fn). */
static char *core_v1_render(unsigned flags, const rz_kind_t *k, const json_t *obj)
{
	json_t *shown = core_v1_of(obj);
	char *text = shown != NULL ? json_dumps(shown, JSON_COMPACT) : NULL;

	json_decref(shown);
	return text;
}

const rz__view_t rz__core_v1_view = {
	.api_version = CORE_V1,
	.of = core_v1_of,
	.render = core_v1_render,
};

/* ------------------------------------------------------------------ the Events' routes */

static const rz_route_param_t list_query[] = {
	{ "fieldSelector", "string",
	  "involvedObject.kind, .name, .namespace, .uid, reason, type, metadata.name (=, ==, "
	  "!=)" },
	{ "labelSelector", "string", "only events whose labels match" },
	{ "limit", "integer", "at most this many items (1 to 10000); the rest by continue" },
	{ "continue", "string", "the continue token of the previous page" },
	{ "resourceVersion", "string", "a list or watch from this revision" },
	{ "resourceVersionMatch", "string", "NotOlderThan or Exact" },
	{ "watch", "boolean", "stream the changes" },
	{ "allowWatchBookmarks", "boolean", "a watch sends BOOKMARK events" },
	{ "timeoutSeconds", "integer", "a watch ends cleanly after so many seconds" },
	{ "pretty", "boolean", "indent the JSON" },
	{ NULL, NULL, NULL },
};

static const int list_errors[] = { 400, 410, 0 }, get_errors[] = { 404, 0 };

static const rz_route_doc_t namespaced_list_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "listCoreV1NamespacedEvent",
	  .summary = "list or watch a tenant's events as Kubernetes' core v1 Events (apiVersion "
	             "v1), where kubectl describe and typed clients look for them",
	  .query = list_query,
	  .response = "EventList",
	  .errors = list_errors },
	{ 0 },
};

static const rz_route_doc_t namespaced_get_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readCoreV1NamespacedEvent",
	  .summary = "read a tenant's event as a Kubernetes core v1 Event (apiVersion v1)",
	  .query = list_query + 9, /* pretty */
	  .response = "Event",
	  .errors = get_errors },
	{ 0 },
};

static const rz_route_doc_t all_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "listCoreV1EventForAllNamespaces",
	  .summary = "list or watch every tenant's events as Kubernetes' core v1 Events "
	             "(apiVersion v1; kubectl describe of a Tenant asks here)",
	  .query = list_query,
	  .response = "EventList",
	  .errors = list_errors },
	{ 0 },
};

const rz__core_v1_t rz__core_v1_events = {
	.list = namespaced_list_doc,
	.get = namespaced_get_doc,
	.all = all_doc,
};
