/*
 * plugins/metal/metal.c - machines that already exist (SPEC §6.3), for the siderolabs/talos
 * provider: each machine of a metal node group is listed by its management address and
 * booted into Talos maintenance mode; a talos_machine_configuration_apply per machine pushes
 * the group's machine configuration with patches (valid Talos YAML, written as JSON) for
 * its hostname, install disk, install image (the Image Factory installer when a schematic is given)
 * and network interface, and resets the machine when it leaves (on_destroy). Built against the SDK
 * headers only.
 *
 * providerConfig (see README.md): machines: [{address, installDisk, hostname, schematic,
 * interface}], one per machine of spec.count.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/kit.h"

static int metal_check_config(const rezus_host_t *h, const rezus_json_t *config, rezus_err_t *err)
{
	return kit_no_settings(h, config, "metal", err);
}

/* ------------------------------------------------------------------ validation */

/* An IPv4 address or a DNS name. */
static bool address_ok(const char *s, char *why, size_t size)
{
	bool ok = kit_ipv4(s, why, size) || (isalpha((unsigned char)s[0]) && strlen(s) <= 253);

	for (const char *p = s; ok && *p != '\0'; p++) {
		ok = isalnum((unsigned char)*p) || *p == '.' || *p == '-';
	}
	if (!ok) {
		snprintf(why, size, "'%s' is not an IPv4 address or a DNS name", s);
	}
	return ok;
}

static bool disk_ok(const char *s, char *why, size_t size)
{
	bool ok = strncmp(s, "/dev/", 5) == 0 && s[5] != '\0';

	for (const char *p = s; ok && *p != '\0'; p++) {
		ok = isalnum((unsigned char)*p) || strchr("/-_.:", *p) != NULL;
	}
	if (!ok) {
		snprintf(why, size, "'%s' is not a disk such as /dev/sda or /dev/nvme0n1", s);
	}
	return ok;
}

/* A DNS-1123 label. */
static bool hostname_ok(const char *s, char *why, size_t size)
{
	size_t n = strlen(s);
	bool ok =
	    n > 0 && n <= 63 && isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);

	for (const char *p = s; ok && *p != '\0'; p++) {
		ok = (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-');
	}
	if (!ok) {
		snprintf(why, size, "'%s' is not a host name (lower case letters, digits, '-')", s);
	}
	return ok;
}

/* An Image Factory schematic ID: 64 hexadecimal digits. */
static bool schematic_ok(const char *s, char *why, size_t size)
{
	size_t n = 0;

	while (isxdigit((unsigned char)s[n]) && !isupper((unsigned char)s[n])) {
		n++;
	}
	if (n == 64 && s[n] == '\0') {
		return true;
	}
	snprintf(why, size, "'%s' is not an Image Factory schematic ID (64 hex digits)", s);
	return false;
}

static bool interface_ok(const char *s, char *why, size_t size)
{
	bool ok = strlen(s) <= 15;

	for (const char *p = s; ok && *p != '\0'; p++) {
		ok = isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.';
	}
	if (!ok) {
		snprintf(why, size, "'%s' is not a network interface name such as eth0", s);
	}
	return ok;
}

static const char *const pc_keys[] = { "machines", NULL };
static const char *const machine_keys[] = { "address",   "installDisk", "hostname",
	                                    "schematic", "interface",   NULL };

static int metal_validate(void *state, const rezus_json_t *ng, rezus_json_t *causes)
{
	kit_plain_t *m = state;
	const rezus_host_t *h = m->h;
	const rezus_json_t *pc = h->json_path(h, ng, "spec.providerConfig");
	const rezus_json_t *list = h->json_get(h, pc, "machines");
	int64_t count = kit_get_int(h, ng, "spec.count", 1);
	size_t n = h->json_size(h, list);

	if (pc != NULL && h->json_type(h, pc) != REZUS_JSON_OBJECT) {
		kit_cause(h, causes, "", "FieldValueInvalid", "providerConfig must be an object");
		return 0;
	}
	kit_known_keys(h, pc, pc_keys, causes);
	if (list == NULL) {
		kit_cause(h, causes, "machines", "FieldValueRequired",
		          "list the machines: [{address, installDisk}, ...]");
		return 0;
	}
	if (h->json_type(h, list) != REZUS_JSON_ARRAY) {
		kit_cause(h, causes, "machines", "FieldValueInvalid", "must be a list of machines");
		return 0;
	}
	if ((int64_t)n != count) {
		kit_cause(h, causes, "machines", "FieldValueInvalid",
		          "lists %zu machines but spec.count is %lld: they must agree", n,
		          (long long)count);
	}
	for (size_t i = 0; i < n; i++) {
		const rezus_json_t *x = h->json_at(h, list, i);
		const char *addr;
		rezus_json_t *mine = h->json_array(h);

		if (h->json_type(h, x) != REZUS_JSON_OBJECT) {
			kit_cause(h, causes, h->printf(h, "machines[%zu]", i), "FieldValueInvalid",
			          "must be an object {address, installDisk, ...}");
			h->json_free(h, mine);
			continue;
		}
		/* validate into mine, then prefix each field with machines[i]. */
		kit_known_keys(h, x, machine_keys, mine);
		addr = kit_want_str(h, x, "address", true, address_ok, mine);
		kit_want_str(h, x, "installDisk", true, disk_ok, mine);
		kit_want_str(h, x, "hostname", false, hostname_ok, mine);
		kit_want_str(h, x, "schematic", false, schematic_ok, mine);
		kit_want_str(h, x, "interface", false, interface_ok, mine);
		for (size_t j = 0; addr != NULL && j < i; j++) {
			const char *other = kit_get_str(h, h->json_at(h, list, j), "address", "");
			if (strcmp(other, addr) == 0) {
				kit_cause(h, mine, "address", "FieldValueDuplicate",
				          "'%s' is also machines[%zu]", addr, j);
			}
		}
		for (size_t j = 0; j < h->json_size(h, mine); j++) {
			const rezus_json_t *c = h->json_at(h, mine, j);
			kit_cause(
			    h, causes,
			    h->printf(h, "machines[%zu].%s", i, kit_get_str(h, c, "field", "")),
			    kit_get_str(h, c, "reason", ""), "%s",
			    kit_get_str(h, c, "message", ""));
		}
		h->json_free(h, mine);
	}
	return 0;
}

/* ------------------------------------------------------------------ render */

static const char *installer(const rezus_host_t *h, const char *schematic, const char *talos)
{
	const char *v = talos[0] == 'v' ? talos : h->printf(h, "v%s", talos);

	return schematic ? h->printf(h, "factory.talos.dev/installer/%s:%s", schematic, v)
	                 : h->printf(h, "ghcr.io/siderolabs/installer:%s", v);
}

static void render_group(kit_plain_t *m, const rezus_json_t *ctx, const rezus_json_t *ng,
                         rezus_json_t *out)
{
	const rezus_host_t *h = m->h;
	const rezus_json_t *list = h->json_path(h, ng, "spec.providerConfig.machines");
	const char *tenant = kit_get_str(h, ctx, "tenant.metadata.name", "");
	const char *cluster = kit_get_str(h, ctx, "tenant.spec.clusterProvider", "talos");
	const char *name = kit_get_str(h, ng, "metadata.name", "");
	const char *tf = h->tf_name(h, name);
	const char *talos = kit_get_str(h, ng, "spec.talosVersion",
	                                kit_get_str(h, ctx, "tenant.spec.talosVersion", "1.12.0"));
	const char *config = kit_import(h, ctx, cluster, h->printf(h, "machine_config.%s", name));
	const char *client = kit_import(h, ctx, cluster, "client_configuration");
	rezus_json_t *machines = h->json_object(h), *apply = h->json_object(h);
	rezus_json_t *destroy = h->json_object(h);
	int64_t count = kit_get_int(h, ng, "spec.count", 1);

	for (size_t i = 0; i < h->json_size(h, list) && (int64_t)i < count; i++) {
		const rezus_json_t *x = h->json_at(h, list, i);
		const char *addr = kit_get_str(h, x, "address", "");
		const char *host = kit_get_str(h, x, "hostname", NULL);
		const char *ifname = kit_get_str(h, x, "interface", "");
		rezus_json_t *one = h->json_object(h), *list_p = h->json_array(h);
		const char *base = h->printf(
		    h,
		    "{\"machine\": {\"network\": {\"hostname\": %s}, \"install\": {\"disk\": %s, "
		    "\"image\": %s}}}",
		    kit_quote(h, host ? host : h->printf(h, "%s-%s-%zu", tenant, name, i)),
		    kit_quote(h, kit_get_str(h, x, "installDisk", "")),
		    kit_quote(h, installer(h, kit_get_str(h, x, "schematic", NULL), talos)));

		h->json_append(h, list_p, h->json_string(h, h->tf_escape(h, base)));
		if (ifname[0] != '\0') {
			h->json_append(
			    h, list_p,
			    h->json_string(
			        h, h->tf_escape(
			               h, h->printf(h,
			                            "{\"machine\": {\"network\": {\"interfaces\": "
			                            "[{\"interface\": %s, \"dhcp\": true}]}}}",
			                            kit_quote(h, ifname)))));
		}
		h->json_set(h, one, "patches", list_p);
		h->json_set(h, machines, h->tf_escape(h, addr), one);
	}
	h->json_set(h, kit_child(h, out, "locals"), h->printf(h, "%s_machines", tf), machines);

	kit_str(h, apply, "for_each", h->printf(h, "${local.%s_machines}", tf));
	kit_str(h, apply, "client_configuration", client ? h->printf(h, "${%s}", client) : "");
	kit_str(h, apply, "machine_configuration_input",
	        config ? h->printf(h, "${%s}", config) : "");
	kit_str(h, apply, "node", "${each.key}");
	kit_str(h, apply, "endpoint", "${each.key}");
	kit_str(h, apply, "config_patches", "${each.value.patches}");
	kit_bool(h, destroy, "graceful", false);
	kit_bool(h, destroy, "reset", true);
	kit_bool(h, destroy, "reboot", true);
	h->json_set(h, apply, "on_destroy", destroy);
	kit_resource(h, out, "talos_machine_configuration_apply", tf, apply);
}

/* The addresses of a control-plane group's config applies (so the bootstrap waits for
 * them). */
static const char *cp_addresses(const rezus_host_t *h, const rezus_json_t *ng, const char *tf)
{
	(void)ng;
	return h->printf(h, "values(talos_machine_configuration_apply.%s)[*].node", tf);
}

/* Its first listed machine: known before anything is applied. */
static const char *cp_endpoint(const rezus_host_t *h, const rezus_json_t *ng, const char *tf)
{
	const char *first =
	    kit_get_str(h, h->json_at(h, h->json_path(h, ng, "spec.providerConfig.machines"), 0),
	                "address", NULL);

	(void)tf;
	return first ? kit_quote(h, h->tf_escape(h, first)) : NULL;
}

static int metal_render(void *state, const rezus_json_t *ctx, rezus_json_t *out, rezus_err_t *err)
{
	kit_plain_t *m = state;
	const rezus_host_t *h = m->h;
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");

	(void)err;
	kit_controlplane_exports(h, ctx, out, cp_addresses, cp_endpoint);
	if (kit_exports_only(h, ctx)) {
		return 0;
	}
	kit_provider(h, out, "talos", KIT_TALOS_SOURCE, KIT_TALOS_VERSION);
	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		render_group(m, ctx, h->json_at(h, groups, i), out);
	}
	return 0;
}

static const char *metal_rules(void *state)
{
	(void)state;
	return "[{\"type\": \"talos_machine_configuration_apply\", \"kind\": \"Machine\","
	       " \"fields\": {\"address\": [\"node\"], \"providerId\": [\"node\"]}}]";
}

static const rezus_plugin_t metal = {
	.header = REZUS_PLUGIN_HEADER_INIT,
	.name = "metal",
	.version = "1.0.0",
	.description = "Machines you have: Talos configuration pushed to each by its address",
	.kinds = REZUS_PLUGIN_INFRA,
	.config_schema = "{\"type\": \"object\", \"additionalProperties\": false}",
	.provider_config_schema =
	    "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"machines\"],"
	    " \"properties\": {\"machines\": {\"type\": \"array\", \"items\": {\"type\": "
	    "\"object\","
	    " \"additionalProperties\": false, \"required\": [\"address\", \"installDisk\"],"
	    " \"properties\": {"
	    "\"address\": {\"type\": \"string\", \"description\": \"management address (Talos API, "
	    "maintenance mode)\"},"
	    " \"installDisk\": {\"type\": \"string\", \"description\": \"e.g. /dev/sda\"},"
	    " \"hostname\": {\"type\": \"string\"},"
	    " \"schematic\": {\"type\": \"string\", \"description\": \"Image Factory schematic "
	    "ID\"},"
	    " \"interface\": {\"type\": \"string\", \"description\": \"configure this interface "
	    "with DHCP\"}}}}}}",
	.init = kit_plain_init,
	.fini = kit_plain_fini,
	.check_config = metal_check_config,
	.validate_nodegroup = metal_validate,
	.render = metal_render,
	.projection_rules = metal_rules,
	.env_allowlist = NULL,
};

REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void)
{
	return &metal;
}
