/* core/api/openapi.c - the OpenAPI 3 documents, generated from the route and kind tables. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/api/api.h"
#include "core/api/openapi.h"
#include "core/base/version.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"

#define GV_KEY    "apis/" RZ_API_VERSION /* "apis/rezuscloud.io/v1" */
#define ALL_KEY   "api/v1"
#define INDEX     "/openapi/v3"
#define PATH_MAX_ 256

struct rz_openapi {
	rz_http_t *http;
};

/* ------------------------------------------------------------------ schemas */

static json_t *ref(const char *name)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "#/components/schemas/%s", name);
	return json_pack("{s:s}", "$ref", buf);
}

/* A descriptor's schema: inline JSON text or the name of a component. */
static json_t *schema_of(const char *text)
{
	json_error_t jerr;

	if (text[0] == '{') {
		json_t *s = json_loads(text, 0, &jerr);
		return s != NULL ? s : json_pack("{s:s}", "type", "object");
	}
	return ref(text);
}

static json_t *gvk(const char *kind)
{
	return json_pack("{s:s, s:s, s:s}", "group", RZ_API_GROUP, "version", "v1", "kind", kind);
}

/* The schema of fields, described (an object's own description: kubectl explain shows it). */
static json_t *described(const rz_field_t *fields, const char *before, const char *kind,
                         const char *after)
{
	json_t *s = rz_fields_openapi(fields);
	char text[512];

	snprintf(text, sizeof(text), "%s%s%s", before, kind, after);
	json_object_set_new(s, "description", json_string(text));
	return s;
}

static json_t *kind_schema(const rz_kind_t *k)
{
	json_t *props = json_pack(
	    "{s:{s:s, s:s}, s:{s:s, s:s}, s:o}", "apiVersion", "type", "string", "description",
	    "rezuscloud.io/v1 (v1 is accepted on writes): the group and version of the object's "
	    "schema",
	    "kind", "type", "string", "description",
	    "The object's kind, in UpperCamelCase; optional "
	    "on writes, where it must be this kind",
	    "metadata",
	    described(rz_kind_metadata_fields(), "Standard object metadata: the ", k->kind,
	              "'s name, its tenant (namespace) or owner, labels, annotations, finalizers "
	              "and what the server sets (uid, resourceVersion, generation, timestamps)"));
	json_t *top = k->top ? rz_fields_openapi(k->top) : NULL, *schema;

	/* the top-level members' own schemas, beside metadata */
	json_object_update(props, json_object_get(top, "properties"));
	if (k->spec != NULL) {
		json_object_set_new(props, "spec",
		                    described(k->spec, "What the ", k->kind,
		                              " should be, as its users write it: validated "
		                              "strictly on every write (an unknown field is "
		                              "refused), defaults filled in"));
	}
	if (k->status != NULL) {
		json_object_set_new(props, "status",
		                    described(k->status, "What the ", k->kind,
		                              " is, as the daemon last observed it: written by "
		                              "the daemon (or an admin, through /status), never "
		                              "by a spec write"));
	}
	schema = json_pack("{s:s, s:s, s:o, s:[o]}", "type", "object", "description", k->doc,
	                   "properties", props, "x-kubernetes-group-version-kind", gvk(k->kind));
	if (json_object_get(top, "required") != NULL) {
		json_object_set(schema, "required", json_object_get(top, "required"));
	}
	json_decref(top);
	return schema;
}

static json_t *list_schema(const rz_kind_t *k)
{
	char list[96], desc[160], kind_desc[160], items_desc[160];

	snprintf(list, sizeof(list), "%sList", k->kind);
	snprintf(desc, sizeof(desc), "A page of %s, in name order (tenant, then name)", k->plural);
	snprintf(kind_desc, sizeof(kind_desc), "%s", list);
	snprintf(items_desc, sizeof(items_desc), "The %s of the page", k->plural);
	return json_pack(
	    "{s:s, s:s, s:[s], s:{s:{s:s, s:s}, s:{s:s, s:s}, s:o, s:{s:s, s:s, s:o}}, s:[o]}",
	    "type", "object", "description", desc, "required", "items", "properties", "apiVersion",
	    "type", "string", "description", "rezuscloud.io/v1", "kind", "type", "string",
	    "description", kind_desc, "metadata", ref("ListMeta"), "items", "type", "array",
	    "description", items_desc, "items", ref(k->kind), "x-kubernetes-group-version-kind",
	    gvk(list));
}

/* The schemas every document shares, besides the kinds'. */
static const struct {
	const char *name, *json;
} common[] = {
	{ "Status",
	  "{\"type\":\"object\",\"description\":\"A Kubernetes Status: the answer to every fail"
	  "ed request (and to some successful ones, such as a delete)\",\"required\":[\"kind\","
	  "\"status\",\"code\"],\"properties\":{\"kind\":{\"type\":\"string\",\"description\":"
	  "\"Status\",\"enum\":[\"Status\"]},\"apiVersion\":{\"type\":\"string\",\"description"
	  "\":\"v1\"},\"metadata\":{\"$ref\":\"#/components/schemas/ListMeta\"},\"status\":{\"t"
	  "ype\":\"string\",\"description\":\"Success or Failure\",\"enum\":[\"Success\",\"Fail"
	  "ure\"]},\"message\":{\"type\":\"string\",\"description\":\"What happened, for people"
	  "\"},\"reason\":{\"type\":\"string\",\"description\":\"Why, one word for programs: No"
	  "tFound, AlreadyExists, Conflict, Invalid, Forbidden, Unauthorized, BadRequest, Expir"
	  "ed, TooManyRequests, ...\"},\"details\":{\"$ref\":\"#/components/schemas/StatusDetai"
	  "ls\"},\"code\":{\"type\":\"integer\",\"description\":\"The HTTP status code, again\""
	  "}}}" },
	{ "StatusDetails",
	  "{\"type\":\"object\",\"description\":\"What a Status is about: the object, and for a"
	  " refused write each field at fault\",\"properties\":{\"name\":{\"type\":\"string\","
	  "\"description\":\"The object's name\"},\"group\":{\"type\":\"string\",\"description"
	  "\":\"Its API group: rezuscloud.io\"},\"kind\":{\"type\":\"string\",\"description\":"
	  "\"Its kind's plural, e.g. nodegroups\"},\"uid\":{\"type\":\"string\",\"description\""
	  ":\"Its metadata.uid, when known\"},\"retryAfterSeconds\":{\"type\":\"integer\",\"des"
	  "cription\":\"When to try again, in seconds (a 429 or 503)\"},\"causes\":{\"type\":\""
	  "array\",\"description\":\"One per field at fault\",\"items\":{\"$ref\":\"#/component"
	  "s/schemas/StatusCause\"}}}}" },
	{ "StatusCause",
	  "{\"type\":\"object\",\"description\":\"One field at fault in a refused write\",\"pro"
	  "perties\":{\"field\":{\"type\":\"string\",\"description\":\"The field at fault, e.g."
	  " spec.count or spec.podSubnets[1]\"},\"reason\":{\"type\":\"string\",\"description\""
	  ":\"FieldValueRequired, FieldValueInvalid, FieldValueNotSupported, FieldValueTooLong,"
	  " FieldValueTooMany, FieldValueDuplicate or FieldValueForbidden\"},\"message\":{\"typ"
	  "e\":\"string\",\"description\":\"What is wrong with it, e.g. supported values: \\\"c"
	  "ontrolplane\\\", \\\"worker\\\"\"}}}" },
	{ "ListMeta",
	  "{\"type\":\"object\",\"description\":\"A list's metadata\",\"properties\":{\"resourc"
	  "eVersion\":{\"type\":\"string\",\"description\":\"The store's revision the list was "
	  "read at: a watch from it sees every later change\"},\"continue\":{\"type\":\"string"
	  "\",\"description\":\"Set when there are more items: pass it as ?continue= for the ne"
	  "xt page (with the same selectors)\"},\"remainingItemCount\":{\"type\":\"integer\",\""
	  "description\":\"How many items are left after this page\"}}}" },
	{ "WatchEvent",
	  "{\"type\":\"object\",\"description\":\"One change a watch sends\",\"required\":[\"ty"
	  "pe\",\"object\"],\"properties\":{\"type\":{\"type\":\"string\",\"description\":\"ADD"
	  "ED, MODIFIED or DELETED (the object as it was last), BOOKMARK (only metadata.resourc"
	  "eVersion: nothing changed up to it), ERROR (the object is a Status; a 410 Expired on"
	  "e: list again)\",\"enum\":[\"ADDED\",\"MODIFIED\",\"DELETED\",\"BOOKMARK\",\"ERROR\""
	  "]},\"object\":{\"$ref\":\"#/components/schemas/Object\"}}}" },
	{ "Patch",
	  "{\"type\":\"object\",\"description\":\"A JSON merge patch (RFC 7386) of the object: "
	  "members to set, null to remove one\",\"additionalProperties\":true}" },
	{ "JsonPatch",
	  "{\"type\":\"array\",\"description\":\"A JSON patch (RFC 6902) of the object: at most"
	  " 10000 operations, applied in order, all or none\",\"maxItems\":10000,\"items\":{\"t"
	  "ype\":\"object\",\"required\":[\"op\",\"path\"],\"properties\":{\"op\":{\"type\":\"s"
	  "tring\",\"description\":\"The operation\",\"enum\":[\"add\",\"remove\",\"replace\","
	  "\"move\",\"copy\",\"test\"]},\"path\":{\"type\":\"string\",\"description\":\"A JSON "
	  "Pointer (RFC 6901) to the member it acts on: ~1 for '/', ~0 for '~'\"},\"from\":{\"t"
	  "ype\":\"string\",\"description\":\"move and copy: the JSON Pointer of the member to "
	  "take\"},\"value\":{\"description\":\"add, replace and test: the value\"}}}}" },
	{ "DeleteOptions",
	  "{\"type\":\"object\",\"description\":\"Options of a delete, as Kubernetes clients se"
	  "nd them (all optional)\",\"properties\":{\"apiVersion\":{\"type\":\"string\",\"descr"
	  "iption\":\"v1 or meta.k8s.io/v1\"},\"kind\":{\"type\":\"string\",\"description\":\"D"
	  "eleteOptions\"},\"preconditions\":{\"type\":\"object\",\"description\":\"The delete "
	  "happens only if these still hold\",\"properties\":{\"resourceVersion\":{\"type\":\"s"
	  "tring\",\"description\":\"The object's metadata.resourceVersion: 409 Conflict if it "
	  "changed since\"}}},\"dryRun\":{\"type\":\"array\",\"description\":\"[All]: answer as"
	  " the delete would, deleting nothing\",\"items\":{\"type\":\"string\",\"description\""
	  ":\"All\"}},\"propagationPolicy\":{\"type\":\"string\",\"description\":\"Background o"
	  "r Foreground: a tenant takes its objects with it; Orphan is refused\"}},\"additional"
	  "Properties\":true}" },
	{ "Object",
	  "{\"type\":\"object\",\"description\":\"A JSON object: one of this API's objects\",\""
	  "additionalProperties\":true}" },
	/* .../nodegroups/{name}/scale (core/api/scale.c) */
	{ "Scale", "{\"type\":\"object\",\"description\":\"Kubernetes' autoscaling/v1 Scale of a n"
	           "ode group\",\"properties\":{\"apiVersion\":{\"type\":\"string\",\"description"
	           "\":\"autoscaling/v1\"},\"kind\":{\"type\":\"string\",\"description\":\"Scale\"}"
	           ",\"metadata\":{\"type\":\"object\",\"description\":\"The node group's name, te"
	           "nant (as namespace), uid, resourceVersion and creation time.\",\"properties\":"
	           "{\"name\":{\"type\":\"string\",\"description\":\"The node group's name.\"},\"n"
	           "amespace\":{\"type\":\"string\",\"description\":\"The node group's tenant.\"},"
	           "\"uid\":{\"type\":\"string\",\"description\":\"The node group's uid.\"},\"reso"
	           "urceVersion\":{\"type\":\"string\",\"description\":\"The node group's resource"
	           "Version: a write that gives it must find it current.\"},\"creationTimestamp\":"
	           "{\"type\":\"string\",\"description\":\"When the node group was created (RFC 33"
	           "39, UTC).\"}}},\"spec\":{\"type\":\"object\",\"description\":\"What is wanted."
	           "\",\"properties\":{\"replicas\":{\"type\":\"integer\",\"description\":\"the no"
	           "de group's spec.count\"}}},\"status\":{\"type\":\"object\",\"description\":\"W"
	           "hat there is.\",\"properties\":{\"replicas\":{\"type\":\"integer\",\"descripti"
	           "on\":\"the machines there are\"},\"selector\":{\"type\":\"string\",\"descripti"
	           "on\":\"the label selector of its machines\"}}}},\"x-kubernetes-group-version-k"
	           "ind\":[{\"group\":\"autoscaling\",\"version\":\"v1\",\"kind\":\"Scale\"}]}" },
};

#define COMMON (sizeof(common) / sizeof(common[0]))

static json_t *schemas(void)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	json_t *s = json_object();
	json_error_t jerr;

	for (size_t i = 0; i < COMMON; i++) {
		json_object_set_new(s, common[i].name, json_loads(common[i].json, 0, &jerr));
	}
	for (size_t i = 0; i < n; i++) {
		char list[96];
		snprintf(list, sizeof(list), "%sList", kinds[i].kind);
		json_object_set_new(s, kinds[i].kind, kind_schema(&kinds[i]));
		json_object_set_new(s, list, list_schema(&kinds[i]));
	}
	return s;
}

/* ------------------------------------------------------------------ operations */

static const char *method_key(unsigned bit)
{
	static const char *const names[] = { "get",    "head",    "post", "put",   "patch",
		                             "delete", "options", "lock", "unlock" };

	for (unsigned i = 0; i < 9; i++) {
		if (bit == 1u << i) {
			return names[i];
		}
	}
	return "get";
}

static bool has_body(unsigned bit)
{
	return (bit & (RZ_M_POST | RZ_M_PUT | RZ_M_PATCH | RZ_M_LOCK | RZ_M_UNLOCK)) != 0;
}

static json_t *content(const char *type, json_t *schema)
{
	return json_pack("{s:{s:o}}", type, "schema", schema);
}

static void add_response(json_t *responses, int code, const char *desc, json_t *body)
{
	char key[8];

	snprintf(key, sizeof(key), "%d", code);
	if (json_object_get(responses, key) != NULL) {
		json_decref(body);
		return;
	}
	json_object_set_new(responses, key, json_pack("{s:s}", "description", desc));
	if (body != NULL) {
		json_object_set_new(json_object_get(responses, key), "content", body);
	}
}

static void add_error(json_t *responses, int code)
{
	add_response(responses, code, rz_status_reason(code),
	             content("application/json", ref("Status")));
}

/* What the server and the guard may answer on any route: a Status each. */
static void add_common(json_t *o, const rz_route_t *r, unsigned bit)
{
	json_t *responses = json_object_get(o, "responses");

	add_error(responses, 400); /* the server's own: a malformed request or path */
	if (r->role != RZ_ROLE_PUBLIC) {
		add_error(responses, 401);
		add_error(responses, 403);
	}
	if (has_body(bit) || bit == RZ_M_DELETE) {
		add_error(responses, 413);
	}
	add_error(responses, 500);
	add_error(responses, 503);
	if (r->role == RZ_ROLE_PUBLIC) {
		json_object_set_new(o, "security", json_array());
	} else {
		json_object_set_new(o, "security",
		                    json_pack("[{s:[]}]", r->basic_auth ? "basic" : "bearer"));
	}
}

static json_t *query_params(const rz_route_param_t *q)
{
	json_t *a = json_array();

	for (; q != NULL && q->name != NULL; q++) {
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:{s:s}}", "name", q->name,
		                                   "in", "query", "description", q->doc, "schema",
		                                   "type", q->type));
	}
	return a;
}

static json_t *doc_op(const rz_route_doc_t *d)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:{}}", "operationId", d->id, "summary", d->summary,
	                      "parameters", query_params(d->query), "responses");
	const char *rtype = d->response_type ? d->response_type : "application/json";

	if (d->request != NULL) {
		json_object_set_new(
		    o, "requestBody",
		    json_pack("{s:b, s:o}", "required", 1, "content",
		              content(d->request_type ? d->request_type : "application/json",
		                      schema_of(d->request))));
	}
	add_response(json_object_get(o, "responses"), d->code ? d->code : 200, "OK",
	             d->response ? content(rtype, schema_of(d->response)) : NULL);
	if (d->other_code != 0) {
		add_response(json_object_get(o, "responses"), d->other_code,
		             d->other_code == 304 ? "Not Modified: the client's copy is current"
		                                  : rz_status_reason(d->other_code),
		             d->other ? content("application/json", schema_of(d->other)) : NULL);
	}
	for (const int *c = d->errors; c != NULL && *c != 0; c++) {
		add_error(json_object_get(o, "responses"), *c);
	}
	return o;
}

/* ---- routes of a kind ---- */

/* KF_WATCH(_ALL): Kubernetes' /watch/ paths, the stream of a collection (of every tenant) */
enum kform { KF_COLLECTION, KF_ITEM, KF_STATUS, KF_ALL, KF_WATCH, KF_WATCH_ALL };

enum kverb { KV_LIST, KV_CREATE, KV_GET, KV_UPDATE, KV_PATCH, KV_DELETE, KV_WATCH, KV_NONE };

static bool scoped_all(const rz_kind_t *k, const char *pattern)
{
	return k->scope != RZ_SCOPE_GLOBAL && strchr(pattern, '{') == NULL;
}

static enum kform kind_form(const rz_kind_t *k, const char *pattern)
{
	size_t n = strlen(pattern);

	if (strstr(pattern, "/watch/") != NULL) {
		return scoped_all(k, pattern) ? KF_WATCH_ALL : KF_WATCH;
	}
	if (n > 7 && strcmp(pattern + n - 7, "/status") == 0) {
		return KF_STATUS;
	}
	if (n > 7 && strcmp(pattern + n - 7, "/{name}") == 0) {
		return KF_ITEM;
	}
	return scoped_all(k, pattern) ? KF_ALL : KF_COLLECTION;
}

/* The verb the route's verb or, without one, its method names in its form. */
static enum kverb kind_verb(const char *verb, unsigned bit, enum kform f)
{
	static const struct {
		const char *name;
		enum kverb v;
	} names[] = { { "list", KV_LIST },
		      { "create", KV_CREATE },
		      { "get", KV_GET },
		      { "update", KV_UPDATE },
		      { "patch", KV_PATCH },
		      { "delete", KV_DELETE },
		      { "update-status", KV_UPDATE },
		      { "patch-status", KV_PATCH } };

	if (f == KF_WATCH || f == KF_WATCH_ALL) {
		return bit == RZ_M_GET ? KV_WATCH : KV_NONE;
	}
	if (verb != NULL) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (strcmp(verb, names[i].name) == 0) {
				return names[i].v;
			}
		}
		return KV_NONE;
	}
	switch (bit) {
	case RZ_M_GET:
		return f == KF_COLLECTION || f == KF_ALL ? KV_LIST : KV_GET;
	case RZ_M_POST:
		return f == KF_COLLECTION ? KV_CREATE : KV_NONE;
	case RZ_M_PUT:
		return KV_UPDATE;
	case RZ_M_PATCH:
		return KV_PATCH;
	case RZ_M_DELETE:
		return KV_DELETE;
	default:
		return KV_NONE;
	}
}

static const rz_route_param_t list_query[] = {
	{ "labelSelector", "string",
	  "only objects whose labels match (a=b, a!=b, a in (b,c), !a)" },
	{ "fieldSelector", "string", "only objects whose fields match (metadata.name=x, ...)" },
	{ "limit", "integer", "at most this many items (1 to 10000); the rest by continue" },
	{ "continue", "string", "the continue token of the previous page" },
	{ "resourceVersion", "string", "a list or watch from this revision" },
	{ "resourceVersionMatch", "string", "NotOlderThan or Exact" },
	{ "watch", "boolean",
	  "true: no list, but the stream of its changes, as the watch operation of the same "
	  "collection (its /watch/ path) answers it; kept for Kubernetes clients (kubectl get "
	  "-w)" },
	{ "allowWatchBookmarks", "boolean", "with watch=true: as the watch operation's" },
	{ "timeoutSeconds", "integer", "with watch=true: as the watch operation's" },
	{ "pretty", "boolean", "indent the JSON" },
	{ NULL, NULL, NULL },
};

static const rz_route_param_t watch_query[] = {
	{ "labelSelector", "string",
	  "only objects whose labels match (a=b, a!=b, a in (b,c), !a); an object that stops "
	  "matching comes as DELETED" },
	{ "fieldSelector", "string", "only objects whose fields match (metadata.name=x, ...)" },
	{ "resourceVersion", "string",
	  "the changes after this revision (a list's metadata.resourceVersion); absent or 0: "
	  "ADDED for every object first, then the changes; older than the log keeps: an ERROR "
	  "event with a 410 Status (list again)" },
	{ "resourceVersionMatch", "string", "NotOlderThan, or absent" },
	{ "allowWatchBookmarks", "boolean",
	  "send BOOKMARK events (the object's metadata.resourceVersion only) while nothing "
	  "changes" },
	{ "timeoutSeconds", "integer",
	  "the stream ends cleanly after so many seconds (0 to 86400; 0: no limit of its own)" },
	{ NULL, NULL, NULL },
};

static const rz_route_param_t read_query[] = {
	{ "pretty", "boolean", "indent the JSON" },
	{ NULL, NULL, NULL },
};

static const rz_route_param_t write_query[] = {
	{ "pretty", "boolean", "indent the JSON" },
	{ "fieldValidation", "string",
	  "Strict (the default): an unknown or duplicate field is refused (422 naming it, 400 "
	  "for a duplicate); Warn: dropped, with a Warning header each; Ignore: dropped" },
	{ "fieldManager", "string",
	  "who the write's fields belong to in metadata.managedFields (at most 128 bytes); "
	  "required for a server-side apply, whose force=true takes fields from other managers" },
	{ "dryRun", "string", "All: validate and answer as the write would, storing nothing" },
	{ NULL, NULL, NULL },
};

static const rz_route_param_t delete_query[] = {
	{ "pretty", "boolean", "indent the JSON" },
	{ "dryRun", "string", "All: answer as the delete would, deleting nothing" },
	{ "propagationPolicy", "string",
	  "Background or Foreground: a tenant takes its objects with it; Orphan is refused" },
	{ NULL, NULL, NULL },
};

static json_t *kind_body(const rz_kind_t *k, enum kverb v)
{
	if (v == KV_PATCH) {
		json_t *c = content("application/merge-patch+json", ref("Patch"));
		json_object_set_new(c, "application/json-patch+json",
		                    json_pack("{s:o}", "schema", ref("JsonPatch")));
		json_object_set_new(c, "application/apply-patch+yaml",
		                    json_pack("{s:o}", "schema", ref("Patch")));
		return c;
	}
	return json_pack("{s:{s:o}, s:{s:o}}", "application/json", "schema", ref(k->kind),
	                 "application/yaml", "schema", ref(k->kind));
}

/* A watch's stream: WatchEvents one per line (Kubernetes' application/json stream, or
 * x-ndjson), or Server-Sent Events (the default, for browsers). */
static json_t *watch_content(void)
{
	json_t *c = content("application/json", ref("WatchEvent"));

	json_object_set_new(c, "application/x-ndjson",
	                    json_pack("{s:o}", "schema", ref("WatchEvent")));
	json_object_set_new(
	    c, "text/event-stream",
	    json_pack("{s:{s:s, s:s}}", "schema", "type", "string", "description",
	              "Server-Sent Events: each an event: line (the type), an id: line (the "
	              "resourceVersion, which Last-Event-ID resumes from) and a data: line (the "
	              "WatchEvent); a comment line as heartbeat"));
	return c;
}

static void kind_responses(json_t *o, const rz_kind_t *k, enum kverb v)
{
	static const int list_err[] = { 400, 410, 0 }, get_err[] = { 404, 0 },
	                 create_err[] = { 400, 404, 409, 415, 422, 507, 0 },
	                 write_err[] = { 400, 404, 409, 415, 422, 507, 0 },
	                 delete_err[] = { 400, 404, 409, 415, 507, 0 };
	const int *errs[] = { list_err,  create_err, get_err, write_err,
		              write_err, delete_err, list_err };
	json_t *r = json_object_get(o, "responses");
	char list[96];

	snprintf(list, sizeof(list), "%sList", k->kind);
	if (v == KV_LIST) {
		/* the list alone: a typed client reads one type (the stream: KV_WATCH) */
		add_response(r, 200, "the list", content("application/json", ref(list)));
	} else if (v == KV_WATCH) {
		add_response(r, 200, "the stream of changes, chosen by Accept", watch_content());
	} else if (v == KV_CREATE) {
		add_response(r, 201, "created", content("application/json", ref(k->kind)));
	} else if (v == KV_DELETE) {
		add_response(r, 200, "deleted: the object's last state",
		             content("application/json", ref(k->kind)));
		add_response(r, 202,
		             "accepted: finalizers hold the object, marked for deletion (a "
		             "Tenant's destroy run)",
		             content("application/json", ref(k->kind)));
	} else {
		add_response(r, 200, "OK", content("application/json", ref(k->kind)));
	}
	for (const int *c = errs[v]; *c != 0; c++) {
		add_error(r, *c);
	}
}

static json_t *kind_op(const rz_kind_t *k, enum kform f, enum kverb v, const char *pattern)
{
	static const char *const id_verbs[] = { "list",  "create", "read", "replace",
		                                "patch", "delete", "watch" };
	static const char *const actions[] = { "list",  "post",   "get",      "put",
		                               "patch", "delete", "watchlist" };
	static const char *const texts[] = { "list",  "create", "read", "replace",
		                             "patch", "delete", "watch" };
	const rz_route_param_t *q = v == KV_LIST     ? list_query
	                            : v == KV_WATCH  ? watch_query
	                            : v == KV_GET    ? read_query
	                            : v == KV_DELETE ? delete_query
	                                             : write_query;
	bool all = f == KF_ALL || f == KF_WATCH_ALL;
	/* each document holds one form of the paths: the ids are the same in both, the group
	 * form's tenants being namespaces */
	bool group = strncmp(pattern, "/apis/", 6) == 0;
	char id[160], summary[192];
	json_t *o;

	snprintf(id, sizeof(id), "%s%s%s%s", id_verbs[v], k->kind,
	         f == KF_STATUS  ? "Status"
	         : v == KV_WATCH ? "List"
	                         : "",
	         !all    ? ""
	         : group ? "ForAllNamespaces"
	                 : "ForAllTenants");
	snprintf(summary, sizeof(summary), "%s %s%s%s", texts[v],
	         v == KV_LIST || v == KV_WATCH ? k->plural : k->kind,
	         f == KF_STATUS ? " status" : "", all ? " of every tenant" : "");
	o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:{}}", "operationId", id, "summary", summary,
	              "x-kubernetes-action", actions[v], "x-kubernetes-group-version-kind",
	              gvk(k->kind), "parameters", query_params(q), "responses");
	if (v == KV_CREATE || v == KV_UPDATE || v == KV_PATCH) {
		json_object_set_new(
		    o, "requestBody",
		    json_pack("{s:b, s:o}", "required", 1, "content", kind_body(k, v)));
	} else if (v == KV_DELETE) {
		json_object_set_new(o, "requestBody",
		                    json_pack("{s:b, s:o}", "required", 0, "content",
		                              content("application/json", ref("DeleteOptions"))));
	}
	kind_responses(o, k, v);
	return o;
}

/* ---- which description a route's method gets ---- */

static const rz_route_doc_t *doc_for(const rz_route_t *r, unsigned bit)
{
	for (const rz_route_doc_t *d = r->doc; d != NULL && d->method != 0; d++) {
		if (d->method == bit) {
			return d;
		}
	}
	return NULL;
}

/* The method bits the document describes (HEAD goes with GET). */
static unsigned described_methods(const rz_route_t *r)
{
	return r->methods & ~(unsigned)RZ_M_HEAD;
}

static json_t *route_op(const rz_route_t *r, const char *pattern, unsigned bit, bool *kinded)
{
	const rz_route_doc_t *d = doc_for(r, bit);
	const rz_kind_t *k = r->kind != NULL ? rz_kind_by_name(r->kind) : NULL;
	json_t *o = NULL;

	*kinded = false;
	if (d != NULL) {
		o = doc_op(d);
		if (k != NULL && d->response != NULL && strcmp(d->response, "Scale") == 0) {
			/* a subresource of another kind, as Kubernetes marks .../scale: kubectl
			 * takes every operation marked with a kind for that kind's own */
			json_object_set_new(o, "x-kubernetes-group-version-kind",
			                    json_pack("{s:s, s:s, s:s}", "group", "autoscaling",
			                              "version", "v1", "kind", "Scale"));
			*kinded = true;
		} else if (k != NULL) {
			json_object_set_new(o, "x-kubernetes-group-version-kind", gvk(k->kind));
			*kinded = true;
		}
	} else if (k != NULL) {
		enum kform f = kind_form(k, pattern);
		enum kverb v = kind_verb(r->verb, bit, f);
		if (v != KV_NONE) {
			o = kind_op(k, f, v, pattern);
			*kinded = true;
		}
	}
	if (o != NULL) {
		add_common(o, r, bit);
	}
	return o;
}

bool rz_openapi_described(const rz_route_t *r)
{
	unsigned m = described_methods(r);

	for (unsigned bit = 1; bit <= RZ_M_UNLOCK; bit <<= 1) {
		bool kinded;
		json_t *o = (m & bit) ? route_op(r, r->pattern, bit, &kinded) : NULL;
		if ((m & bit) && o == NULL) {
			return false;
		}
		json_decref(o);
	}
	return true;
}

/* ------------------------------------------------------------------ paths */

/* The OpenAPI form of a pattern ("{rest...}" is "{rest}") and its path parameters. */
static json_t *path_item(const char *pattern, char *key, size_t size)
{
	json_t *params = json_array();
	size_t o = 0;

	for (const char *p = pattern; *p != '\0' && o + 1 < size; p++) {
		if (*p == '{') {
			const char *end = strchr(p, '}');
			size_t n = end != NULL ? (size_t)(end - p - 1) : 0;
			char name[64];
			if (n >= 3 && strncmp(p + 1 + n - 3, "...", 3) == 0) {
				n -= 3;
			}
			snprintf(name, sizeof(name), "%.*s", (int)n, p + 1);
			json_array_append_new(
			    params, json_pack("{s:s, s:s, s:b, s:s, s:{s:s}}", "name", name, "in",
			                      "path", "required", 1, "description",
			                      strcmp(name, "tenant") == 0 ? "the tenant's name"
			                      : strcmp(name, "user") == 0 ? "the user's name"
			                                                  : "a name",
			                      "schema", "type", "string"));
			o += (size_t)snprintf(key + o, size - o, "{%s}", name);
			p = end != NULL ? end : p + strlen(p) - 1;
			continue;
		}
		key[o++] = *p;
	}
	key[o < size ? o : size - 1] = '\0';
	return json_pack("{s:o}", "parameters", params);
}

/* An undocumented method still appears, so that a reader sees it and the unit test
 * (tests/unit/check_openapi.c, rz_openapi_described) names it. */
static json_t *undocumented(const char *pattern, unsigned bit)
{
	char id[PATH_MAX_ + 16];
	size_t o = 0;

	o = (size_t)snprintf(id, sizeof(id), "%s", method_key(bit));
	for (const char *p = pattern; *p != '\0' && o + 1 < sizeof(id); p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9')) {
			id[o++] = *p;
		}
	}
	id[o] = '\0';
	return json_pack("{s:s, s:s, s:{s:{s:s}}}", "operationId", id, "summary", "(not described)",
	                 "responses", "default", "description", "undocumented");
}

static void add_route(json_t *paths, const rz_route_t *r, const char *pattern, bool group_version)
{
	char key[PATH_MAX_];
	json_t *item = path_item(pattern, key, sizeof(key)), *have;
	unsigned m = described_methods(r);

	have = json_object_get(paths, key);
	if (have != NULL) {
		json_decref(item);
		item = have;
	}
	for (unsigned bit = 1; bit <= RZ_M_UNLOCK; bit <<= 1) {
		bool kinded = false;
		json_t *o;
		if ((m & bit) == 0) {
			continue;
		}
		o = route_op(r, pattern, bit, &kinded);
		if (o == NULL) {
			if (group_version) {
				continue;
			}
			o = undocumented(pattern, bit);
		}
		if (group_version && !kinded) {
			json_decref(o);
			continue;
		}
		if (bit & (RZ_M_LOCK | RZ_M_UNLOCK)) {
			/* not OpenAPI methods: described in an extension, in their own words */
			json_t *x = json_object_get(item, "x-rezus-methods");
			if (x == NULL) {
				x = json_object();
				json_object_set_new(item, "x-rezus-methods", x);
			}
			json_object_set_new(x, bit == RZ_M_LOCK ? "LOCK" : "UNLOCK", o);
		} else {
			json_object_set_new(item, method_key(bit), o);
		}
	}
	if (have == NULL) {
		if (json_object_size(item) > 1) {
			json_object_set_new(paths, key, item);
		} else {
			json_decref(item);
		}
	}
}

json_t *rz_openapi_document(const rz_http_t *http, bool group_version)
{
	json_t *paths = json_object();
	size_t n = rz_http_route_count(http);

	for (size_t i = 0; i < n; i++) {
		const rz_route_t *r = rz_http_route_at(http, i);
		const char *pattern = rz_http_route_pattern(http, i);
		if (r->cookie) {
			continue; /* the WebUI's pages: HTML for a browser, not the API */
		}
		/* one form of each path a document: a route served under an alias
		 * (/apis/rezuscloud.io/v1/...) is in the group-version document at the alias and
		 * in the other at its own pattern, so that a generated client has each
		 * operation once */
		if (group_version !=
		    (strcmp(pattern, r->pattern) != 0 ||
		     strncmp(pattern, RZ_API_GROUP_PATH "/", strlen(RZ_API_GROUP_PATH "/")) == 0)) {
			continue; /* (a route of its own at a group path: core v1 Events' twin) */
		}
		add_route(paths, r, pattern, group_version);
	}
	return json_pack(
	    "{s:s, s:{s:s, s:s, s:s, s:{s:s, s:s}}, s:[{s:s, s:s}], s:[{s:[]}], s:o, "
	    "s:{s:o, s:{s:{s:s, s:s, s:s, s:s}, s:{s:s, s:s, s:s}}}}",
	    "openapi", "3.0.3", "info", "title",
	    group_version ? "RezusCloud API, group rezuscloud.io/v1" : "RezusCloud API", "version",
	    rz_version(), "description",
	    "Generated from the daemon's route and kind tables. Errors are Kubernetes Status "
	    "objects; a refused write names each field at fault in details.causes.",
	    "license", "name", "MIT", "url", "https://opensource.org/license/mit", "servers", "url",
	    "/", "description", "the server this document was read from", "security", "bearer",
	    "paths", paths, "components", "schemas", schemas(), "securitySchemes", "bearer", "type",
	    "http", "scheme", "bearer", "bearerFormat",
	    "a session JWT (POST /api/v1/auth/login) or an API token (rzt_...)", "description",
	    "Authorization: Bearer <token>", "basic", "type", "http", "scheme", "basic",
	    "description",
	    "the TF http state backend: a run's secret or an API token as the password");
}

/* ------------------------------------------------------------------ serving */

static void hash_hex(const json_t *doc, char out[65])
{
	unsigned char h[32];
	char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);

	crypto_generichash(h, sizeof(h), (const unsigned char *)(text ? text : ""),
	                   text ? strlen(text) : 0, NULL, 0);
	free(text);
	sodium_bin2hex(out, 65, h, sizeof(h));
	for (char *p = out; *p != '\0'; p++) {
		*p = *p >= 'a' && *p <= 'f' ? (char)(*p - 'a' + 'A') : *p;
	}
}

json_t *rz_openapi_index(const rz_http_t *http)
{
	json_t *paths = json_object();
	static const struct {
		const char *key;
		bool gv;
	} docs[] = { { ALL_KEY, false }, { GV_KEY, true } };

	for (size_t i = 0; i < 2; i++) {
		json_t *doc = rz_openapi_document(http, docs[i].gv);
		char hex[65], url[160];
		if (doc == NULL) {
			json_decref(paths);
			return NULL;
		}
		hash_hex(doc, hex);
		json_decref(doc);
		snprintf(url, sizeof(url), INDEX "/%s?hash=%s", docs[i].key, hex);
		json_object_set_new(paths, docs[i].key,
		                    json_pack("{s:s}", "serverRelativeURL", url));
	}
	return json_pack("{s:o}", "paths", paths);
}

static void reply(rz_req_t *req, json_t *doc)
{
	if (doc == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
		return;
	}
	rz_reply_json(req, 200, doc);
}

static void handle_index(rz_req_t *req, void *ctx)
{
	rz_openapi_t *o = ctx;

	reply(req, rz_openapi_index(o->http));
}

static void handle_all(rz_req_t *req, void *ctx)
{
	rz_openapi_t *o = ctx;

	reply(req, rz_openapi_document(o->http, false));
}

static void handle_gv(rz_req_t *req, void *ctx)
{
	rz_openapi_t *o = ctx;

	reply(req, rz_openapi_document(o->http, true));
}

static const rz_route_param_t hash_query[] = {
	{ "hash", "string", "the document's hash, as the index gives it (any value is served)" },
	{ NULL, NULL, NULL },
};

static const rz_route_doc_t index_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getOpenAPIIndex",
	  .summary = "the index of the OpenAPI documents, as Kubernetes serves it",
	  .response = "{\"type\":\"object\",\"properties\":{\"paths\":{\"type\":\"object\","
	              "\"additionalProperties\":{\"type\":\"object\","
	              "\"properties\":{\"serverRelativeURL\":{\"type\":\"string\","
	              "\"description\":\"Where the document is, with a hash of its content\"}}},"
	              "\"description\":\"The documents, by their path under /openapi/v3: api/v1 "
	              "and apis/rezuscloud.io/v1\"}}}" },
	{ 0 },
};

static const rz_route_doc_t all_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getOpenAPIDocument",
	  .summary = "this document: every route",
	  .query = hash_query,
	  .response = "Object" },
	{ 0 },
};

static const rz_route_doc_t gv_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getOpenAPIGroupVersionDocument",
	  .summary = "the document of group rezuscloud.io/v1: its kinds and their routes",
	  .query = hash_query,
	  .response = "Object" },
	{ 0 },
};

/* The kinds' schemas: any signed-in user. */
static const rz_route_t openapi_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = INDEX,
	  .fn = handle_index,
	  .role = RZ_ROLE_NONE,
	  .verb = "get",
	  .doc = index_doc },
	{ .methods = RZ_M_GET,
	  .pattern = INDEX "/" ALL_KEY,
	  .fn = handle_all,
	  .role = RZ_ROLE_NONE,
	  .verb = "get",
	  .doc = all_doc },
	{ .methods = RZ_M_GET,
	  .pattern = INDEX "/" GV_KEY,
	  .fn = handle_gv,
	  .role = RZ_ROLE_NONE,
	  .verb = "get",
	  .doc = gv_doc },
};

int rz_openapi_new(rz_openapi_t **out, rz_http_t *http, rz_err_t *err)
{
	rz_openapi_t *o = calloc(1, sizeof(*o));
	int rc;

	*out = NULL;
	if (o == NULL) {
		return rz_err_set(err, -ENOMEM, "openapi: out of memory");
	}
	o->http = http;
	rc = rz_http_add_table(http, RZ_ROUTES(openapi_routes), o, err);
	if (rc != 0) {
		free(o);
		return rc;
	}
	*out = o;
	return 0;
}

void rz_openapi_free(rz_openapi_t *o)
{
	free(o);
}
