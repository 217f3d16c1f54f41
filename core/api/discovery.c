/* core/api/discovery.c - /api/v1's APIResourceList, /api, /apis and aggregated discovery. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/api/api-int.h"

/* ------------------------------------------------------------------ discovery */

static json_t *verb_list(unsigned verbs)
{
	json_t *a = json_array();

	for (unsigned bit = 1; bit <= RZ_VERB_STATUS; bit <<= 1) {
		if ((verbs & bit) && bit != RZ_VERB_STATUS) {
			json_array_append_new(a, json_string(rz_verb_name(bit)));
		}
	}
	return a;
}

static json_t *short_names(const rz_kind_t *k)
{
	json_t *a = json_array();

	for (const char *const *s = k->short_names; s != NULL && *s != NULL; s++) {
		json_array_append_new(a, json_string(*s));
	}
	return a;
}

const rz_route_doc_t rz__discovery_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getAPIResources",
	  .summary = "the kinds, as Kubernetes' APIResourceList (rezusctl api-resources)",
	  .response = "{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"string\","
	              "\"description\":\"APIResourceList\"},\"groupVersion\":{\"type\":\"string\","
	              "\"description\":\"The group and version the resources are served at\"},"
	              "\"resources\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	              "\"additionalProperties\":true},\"description\":\"The kinds: each with name "
	              "(the plural), singularName, namespaced, kind, verbs and shortNames\"}}}" },
	{ 0 },
};

/* Whether the request is on the Kubernetes group path (/apis/rezuscloud.io/v1/...). */
bool rz__on_group_path(const rz_req_t *req)
{
	return strncmp(rz_req_path(req), RZ_API_GROUP_PATH, strlen(RZ_API_GROUP_PATH)) == 0;
}

/* A kind's resource name in discovery: its plural, or for a kind under users
 * (/users/{user}/tokens) "users/tokens" on the group path, where its path says so. */
static void resource_name(const rz_kind_t *k, bool group, char *buf, size_t size)
{
	const rz_kind_t *owner = rz_kind_owner(k);

	if (group && k->scope == RZ_SCOPE_USER && owner != NULL) {
		snprintf(buf, size, "%s/%s", owner->plural, k->plural);
	} else {
		snprintf(buf, size, "%s", k->plural);
	}
}

/* GET /api/v1 and /apis/rezuscloud.io/v1: the kinds, as Kubernetes' APIResourceList
 * (rezusctl api-resources, kubectl's discovery). */
void rz__handle_discovery(rz_req_t *req, void *ctx)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	json_t *list = json_array();
	bool group = rz__on_group_path(req);

	for (size_t i = 0; i < n; i++) {
		const rz_kind_t *k = &kinds[i];
		char name[96];
		resource_name(k, group, name, sizeof(name));
		json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s, s:o, s:o}", "name",
		                                      name, "singularName", k->singular,
		                                      "namespaced", k->scope == RZ_SCOPE_TENANT,
		                                      "kind", k->kind, "verbs", verb_list(k->verbs),
		                                      "shortNames", short_names(k)));
		if (k->verbs & RZ_VERB_STATUS) {
			char sub[112];
			snprintf(sub, sizeof(sub), "%s/status", name);
			json_array_append_new(
			    list,
			    json_pack("{s:s, s:s, s:b, s:s, s:[s,s,s]}", "name", sub,
			              "singularName", "", "namespaced", k->scope == RZ_SCOPE_TENANT,
			              "kind", k->kind, "verbs", "get", "patch", "update"));
		}
		if (rz__kind_hooks_of(k)->scale != NULL) { /* kubectl scale finds it here */
			char sub[112];
			snprintf(sub, sizeof(sub), "%s/scale", name);
			json_array_append_new(
			    list,
			    json_pack("{s:s, s:s, s:b, s:s, s:s, s:s, s:[s,s,s]}", "name", sub,
			              "singularName", "", "namespaced", k->scope == RZ_SCOPE_TENANT,
			              "group", "autoscaling", "version", "v1", "kind", "Scale",
			              "verbs", "get", "patch", "update"));
		}
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion",
	                        "v1", "groupVersion", RZ_API_VERSION, "resources", list));
}

/* The apidiscovery.k8s.io version the client asks for first ("v2", "v2beta1"), or NULL. */
static const char *aggregated_version(const rz_req_t *req)
{
	static const char *const v2[] = { "g=apidiscovery.k8s.io", "v=v2",
		                          "as=APIGroupDiscoveryList", NULL };
	static const char *const v2beta1[] = { "g=apidiscovery.k8s.io", "v=v2beta1",
		                               "as=APIGroupDiscoveryList", NULL };

	return rz__accept_wants(req, v2) ? "v2" : rz__accept_wants(req, v2beta1) ? "v2beta1" : NULL;
}

static json_t *response_kind(const char *kind)
{
	return json_pack("{s:s, s:s, s:s}", "group", RZ_API_GROUP, "version", "v1", "kind", kind);
}

/* One kind as an APIResourceDiscovery; a kind under users becomes a subresource of users
 * (appended to users' entry later by the caller's walk, so it is returned apart). */
static json_t *resource_discovery(const rz_kind_t *k)
{
	json_t *r = json_pack("{s:s, s:o, s:s, s:s, s:o}", "resource", k->plural, "responseKind",
	                      response_kind(k->kind), "scope",
	                      k->scope == RZ_SCOPE_TENANT ? "Namespaced" : "Cluster",
	                      "singularResource", k->singular, "verbs", verb_list(k->verbs));
	json_t *subs = json_array();

	if (json_array_size(json_object_get(r, "verbs")) == 0) {
		json_object_set_new(r, "verbs", json_pack("[s]", "get"));
	}
	if (k->short_names != NULL && k->short_names[0] != NULL) {
		json_object_set_new(r, "shortNames", short_names(k));
	}
	if (k->verbs & RZ_VERB_STATUS) {
		json_array_append_new(subs,
		                      json_pack("{s:s, s:o, s:[s,s,s]}", "subresource", "status",
		                                "responseKind", response_kind(k->kind), "verbs",
		                                "get", "patch", "update"));
	}
	if (rz__kind_hooks_of(k)->scale != NULL) {
		json_array_append_new(
		    subs, json_pack("{s:s, s:{s:s, s:s, s:s}, s:[s,s,s]}", "subresource", "scale",
		                    "responseKind", "group", "autoscaling", "version", "v1", "kind",
		                    "Scale", "verbs", "get", "patch", "update"));
	}
	json_object_set_new(r, "subresources", subs);
	return r;
}

/* The group's APIGroupDiscovery: every kind, a kind under users as users' subresource. */
static json_t *group_discovery(void)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	json_t *resources = json_array();

	for (size_t i = 0; i < n; i++) {
		if (kinds[i].scope != RZ_SCOPE_USER) {
			json_array_append_new(resources, resource_discovery(&kinds[i]));
		}
	}
	for (size_t i = 0; i < n; i++) {
		const rz_kind_t *k = &kinds[i], *owner = rz_kind_owner(k);
		json_t *r;
		size_t j;
		if (k->scope != RZ_SCOPE_USER || owner == NULL) {
			continue;
		}
		json_array_foreach(resources, j, r)
		{
			if (strcmp(json_string_value(json_object_get(r, "resource")),
			           owner->plural) == 0) {
				json_array_append_new(json_object_get(r, "subresources"),
				                      json_pack("{s:s, s:o, s:o}", "subresource",
				                                k->plural, "responseKind",
				                                response_kind(k->kind), "verbs",
				                                verb_list(k->verbs)));
			}
		}
	}
	return json_pack("{s:{s:s}, s:[{s:s, s:o, s:s}]}", "metadata", "name", RZ_API_GROUP,
	                 "versions", "version", "v1", "resources", resources, "freshness",
	                 "Current");
}

/* GET /api and /apis as aggregated discovery (apidiscovery.k8s.io, what kubectl asks for
 * first): /api has no group (the core group is Kubernetes', not ours), /apis has ours. */
static void reply_aggregated(rz_req_t *req, const char *version, bool groups)
{
	char av[64], ctype[128];

	snprintf(av, sizeof(av), "apidiscovery.k8s.io/%s", version);
	snprintf(ctype, sizeof(ctype),
	         "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList", version);
	rz__reply_typed(req, 200, ctype,
	                json_pack("{s:s, s:s, s:{}, s:o}", "kind", "APIGroupDiscoveryList",
	                          "apiVersion", av, "metadata", "items",
	                          groups ? json_pack("[o]", group_discovery()) : json_array()));
}

const rz_route_doc_t rz__api_versions_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getAPIVersions",
	  .summary = "Kubernetes' APIVersions of the core group (kubectl's discovery)",
	  .response = "Object" },
	{ 0 },
};

const rz_route_doc_t rz__api_groups_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getAPIGroups",
	  .summary = "Kubernetes' APIGroupList, or the aggregated APIGroupDiscoveryList its "
	             "Accept asks for (kubectl's discovery)",
	  .response = "Object" },
	{ 0 },
};

/* GET /api: APIVersions with no version, as the API has no Kubernetes core group; every
 * kind is in rezuscloud.io/v1 under /apis. */
void rz__handle_api_versions(rz_req_t *req, void *ctx)
{
	const char *agg = aggregated_version(req);

	if (agg != NULL) {
		reply_aggregated(req, agg, false);
		return;
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:[], s:[]}", "kind", "APIVersions", "apiVersion", "v1",
	                        "versions", "serverAddressByClientCIDRs"));
}

/* GET /apis: the APIGroupList with rezuscloud.io, v1 preferred. */
void rz__handle_api_groups(rz_req_t *req, void *ctx)
{
	const char *agg = aggregated_version(req);

	if (agg != NULL) {
		reply_aggregated(req, agg, true);
		return;
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:[{s:s, s:[{s:s, s:s}], s:{s:s, s:s}}]}", "kind",
	                        "APIGroupList", "apiVersion", "v1", "groups", "name", RZ_API_GROUP,
	                        "versions", "groupVersion", RZ_API_VERSION, "version", "v1",
	                        "preferredVersion", "groupVersion", RZ_API_VERSION, "version",
	                        "v1"));
}
