/*
 * example.c - the smallest useful RezusCloud infra plugin, built against the installed
 * SDK only (see Makefile). Each machine of a node group is a terraform_data resource, so
 * it plans and applies anywhere; a real plugin would declare its cloud's instances
 * instead, with its provider in required_providers.
 *
 * providerConfig: {"zone": "<string>"} (optional).
 */
#include <string.h>

#include <rezus/plugin.h>

static const rezus_host_t *host; /* valid from init to fini */

static int ex_init(const rezus_host_t *h, const rezus_json_t *config, void **state,
                   rezus_err_t *err)
{
	(void)config; /* the example takes no settings of its own */
	(void)err;
	host = h;
	*state = NULL;
	h->log(h, REZUS_LOG_INFO, "example plugin ready");
	return 0;
}

static void ex_fini(void *state)
{
	(void)state; /* init kept none */
}

static int ex_validate(void *state, const rezus_json_t *ng, rezus_json_t *causes)
{
	const rezus_host_t *h = host;

	(void)state;
	const rezus_json_t *pc = h->json_path(h, ng, "spec.providerConfig");

	for (size_t i = 0; i < h->json_size(h, pc); i++) {
		const char *key = h->json_key_at(h, pc, i);
		if (strcmp(key, "zone") != 0) {
			rezus_json_t *c = h->json_object(h);
			h->json_set(h, c, "field", h->json_string(h, key));
			h->json_set(h, c, "reason", h->json_string(h, "FieldValueInvalid"));
			h->json_set(h, c, "message", h->json_string(h, "unknown field (use zone)"));
			h->json_append(h, causes, c);
		}
	}
	return 0;
}

/* One terraform_data per machine, named after the node group (tf_name), user strings
 * escaped (tf_escape), marked "plugin": "example" for the projection rule's "when". */
static int ex_render(void *state, const rezus_json_t *ctx, rezus_json_t *out, rezus_err_t *err)
{
	const rezus_host_t *h = host;
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");
	rezus_json_t *resources = h->json_object(h), *td = h->json_object(h);

	(void)state;
	(void)err; /* nothing here fails but the host's allocations, which it reports */

	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		const rezus_json_t *ng = h->json_at(h, groups, i);
		const char *name = h->json_string_value(h, h->json_path(h, ng, "metadata.name"));
		const char *zone =
		    h->json_string_value(h, h->json_path(h, ng, "spec.providerConfig.zone"));
		rezus_json_t *r = h->json_object(h), *input = h->json_object(h);

		h->json_set(h, r, "count",
		            h->json_integer(
		                h, h->json_integer_value(h, h->json_path(h, ng, "spec.count"))));
		h->json_set(h, input, "plugin", h->json_string(h, "example"));
		h->json_set(h, input, "nodeGroup", h->json_string(h, h->tf_escape(h, name)));
		h->json_set(h, input, "zone",
		            h->json_string(h, h->tf_escape(h, zone ? zone : "any")));
		h->json_set(
		    h, input, "hostname",
		    h->json_string(h, h->printf(h, "%s-${count.index}", h->tf_escape(h, name))));
		h->json_set(h, r, "input", input);
		h->json_set(h, td, h->tf_name(h, name), r);
	}
	h->json_set(h, resources, "terraform_data", td);
	return h->json_set(h, out, "resource", resources);
}

/* terraform_data is built in: other plugins (sim) declare it too. The host runs these
 * rules on this plugin's own resources only, and "when" keeps them to the example's
 * machines wherever they run unscoped (rezus-plugin-check --project, older hosts). */
static const char *ex_rules(void *state)
{
	(void)state;
	return "[{\"type\":\"terraform_data\",\"kind\":\"Machine\","
	       "\"when\":{\"input.plugin\":\"example\"},\"nodeGroup\":[\"input.nodeGroup\"],"
	       "\"fields\":{\"providerId\":[\"id\"],\"hostname\":[\"input.hostname\"]}}]";
}

static const rezus_plugin_t example = {
	.header = REZUS_PLUGIN_HEADER_INIT,
	.name = "example",
	.version = "0.1.0",
	.description = "an example infra plugin built against the installed SDK",
	.kinds = REZUS_PLUGIN_INFRA,
	.init = ex_init,
	.fini = ex_fini,
	.validate_nodegroup = ex_validate,
	.render = ex_render,
	.projection_rules = ex_rules,
};

REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void)
{
	return &example;
}
