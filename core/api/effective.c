/* core/api/effective.c - .../effectivepatches/{role}: the ConfigPatches a role gets. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api-int.h"
#include "core/store/store.h"

/* GET /api/v1/tenants/{tenant}/effectivepatches/{role}: the ConfigPatches a machine of role
 * gets, as the cluster plugin applies them (enabled, targetRole all or role, in name order),
 * and the YAML stream of their patches in that order. A patch restricted to node groups is
 * listed with them: it applies only to their machines. */
static const int effective_errors[] = { 404, 422, 0 };
const rz_route_doc_t rz__effective_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readEffectivePatch",
	  .summary = "the config patches a machine of a role (controlplane or worker) gets, in "
	             "the order they apply, and their YAML as one stream",
	  .response = "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\","
	              "\"description\":\"rezuscloud.io/v1\"},\"kind\":{\"type\":\"string\","
	              "\"description\":\"EffectivePatch\"},\"tenant\":{\"type\":\"string\","
	              "\"description\":\"The tenant\"},\"role\":{\"type\":\"string\","
	              "\"description\":\"The role the patches were composed for: controlplane or "
	              "worker\"},\"patch\":{\"type\":\"string\",\"description\":\"The enabled "
	              "patches for that role, in name order, as one YAML stream (a comment names "
	              "each)\"},\"items\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	              "\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"The "
	              "ConfigPatch's name\"},\"format\":{\"type\":\"string\","
	              "\"description\":\"strategic or json6902\"},"
	              "\"targetRole\":{\"type\":\"string\",\"description\":\"all, controlplane or "
	              "worker\"},\"nodeGroups\":{\"type\":\"array\","
	              "\"items\":{\"type\":\"string\"},\"description\":\"The node groups it is "
	              "restricted to, if any\"}}},\"description\":\"The ConfigPatches that apply, "
	              "in the order they apply\"}}}",
	  .errors = effective_errors },
	{ 0 },
};

static bool patch_targets_role(const json_t *p, const char *role)
{
	const json_t *spec = json_object_get(p, "spec");
	const char *target = json_string_value(json_object_get(spec, "targetRole"));
	const json_t *enabled = json_object_get(spec, "enabled");

	return (enabled == NULL || json_is_true(enabled)) &&
	       (target == NULL || strcmp(target, "all") == 0 || strcmp(target, role) == 0);
}

void rz__handle_effective(rz_req_t *req, void *ctx)
{
	rz_api_t *api = ((struct rctx *)ctx)->api;
	const char *tenant = rz_req_param(req, "tenant"), *role = rz_req_param(req, "role");
	json_t *t = NULL, *all, *items, *p;
	rz_err_t err = { 0 };
	size_t i, len = 0;
	char *yaml;
	int rc;

	if (strcmp(role, "controlplane") != 0 && strcmp(role, "worker") != 0) {
		json_t *st = rz_status_new(422, "Invalid", "role must be controlplane or worker");
		rz_status_add_cause(st, "role", RZ_CAUSE_NOT_SUPPORTED,
		                    "supported values: \"controlplane\", \"worker\"");
		rz_reply_status(req, st);
		return;
	}
	rc = rz_store_get(api->store, api->kinds.tenant, NULL, tenant, &t, &err);
	json_decref(t);
	if (rc != 0) {
		rz__reply_store_error(req, api->kinds.tenant, tenant, rc, &err);
		return;
	}
	all = rz_store_list_all(api->store, api->kinds.config_patch->kind, tenant);
	items = json_array();
	json_array_foreach(all, i, p)
	{
		const json_t *spec = json_object_get(p, "spec");
		const char *text = json_string_value(json_object_get(spec, "patch"));
		if (patch_targets_role(p, role)) {
			json_t *ngs = json_object_get(spec, "nodeGroups");
			json_array_append_new(
			    items,
			    json_pack(
			        "{s:s, s:s, s:s, s:o}", "name",
			        json_string_value(
			            json_object_get(json_object_get(p, "metadata"), "name"))
			            ?: "",
			        "format",
			        json_string_value(json_object_get(spec, "format")) ?: "strategic",
			        "targetRole",
			        json_string_value(json_object_get(spec, "targetRole")) ?: "all",
			        "nodeGroups", ngs ? json_incref(ngs) : json_array()));
			len += (text ? strlen(text) : 0) + 80;
		}
	}
	yaml = calloc(1, len + 1);
	if (yaml == NULL) {
		json_decref(all);
		json_decref(items);
		rz_reply_status(req, rz_status_new(500, "", "out of memory"));
		return;
	}
	len = 0;
	json_array_foreach(all, i, p)
	{
		const json_t *spec = json_object_get(p, "spec");
		const char *text = json_string_value(json_object_get(spec, "patch")) ?: "";
		size_t n = strlen(text);
		if (!patch_targets_role(p, role)) {
			continue;
		}
		len += (size_t)sprintf(
		    yaml + len, "%s# %.63s\n", len ? "---\n" : "",
		    json_string_value(json_object_get(json_object_get(p, "metadata"), "name"))
		        ?: "");
		memcpy(yaml + len, text, n);
		len += n;
		if (n > 0 && text[n - 1] != '\n') {
			yaml[len++] = '\n';
		}
	}
	json_decref(all);
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:s, s:s, s:o, s:s%}", "apiVersion", RZ_API_VERSION,
	                        "kind", "EffectivePatch", "tenant", tenant, "role", role, "items",
	                        items, "patch", yaml, len));
	free(yaml);
}
