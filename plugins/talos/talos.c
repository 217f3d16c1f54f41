/*
 * plugins/talos/talos.c - the Talos cluster plugin (SPEC §6.3), for the siderolabs/talos
 * provider: the cluster's secrets, one machine configuration per node group (the tenant's
 * versions, cluster endpoint and networks, the group's node labels and taints, and the
 * enabled ConfigPatches that target it, in name order), the client configuration, the
 * bootstrap of the first control plane, the kubeconfig, and the sensitive outputs
 * "kubeconfig" and "talosconfig". Built against the SDK headers only.
 *
 * Exports, for the infra plugins: "machine_config.<node group>" and "client_configuration".
 * Imports, from them: "<plugin>.controlplane_addresses" (lists, concatenated in plugin name
 * order) and "<plugin>.controlplane_endpoint" (the first control plane's address known
 * before it exists; the cluster endpoint when spec.controlPlaneEndpoint is empty).
 *
 * Observation (ABI 1.1): observe.c says which talosctl and kubectl probes watch a tenant's
 * Machines and reads their output into facts. Etcd snapshots (ABI 1.3): etcd.c says which
 * talosctl command takes a snapshot and which one recovers from it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/kit.h"
#include "etcd.h"
#include "observe.h"

static int talos_check_config(const rezus_host_t *h, const rezus_json_t *config, rezus_err_t *err)
{
	return kit_no_settings(h, config, "talos", err);
}

/* ------------------------------------------------------------------ machine configuration */

/* "1.12.0" -> "v1.12.0" (Talos versions are written with the v). */
static const char *vversion(const rezus_host_t *h, const char *v)
{
	return v[0] == 'v' ? v : h->printf(h, "v%s", v);
}

/* A JSON list of quoted strings from a JSON array of strings (arena). */
static const char *quoted_list(const rezus_host_t *h, const rezus_json_t *arr)
{
	const char *s = "[";

	for (size_t i = 0; i < h->json_size(h, arr); i++) {
		const char *v = h->json_string_value(h, h->json_at(h, arr, i));
		s = h->printf(h, "%s%s%s", s, i ? ", " : "", kit_quote(h, v ? v : ""));
	}
	return h->printf(h, "%s]", s);
}

/* The patch every node group gets: the tenant's pod and service networks. */
static const char *network_patch(const rezus_host_t *h, const rezus_json_t *tenant)
{
	return h->printf(h,
	                 "{\"cluster\": {\"network\": {\"podSubnets\": %s, \"serviceSubnets\": "
	                 "%s}}}",
	                 quoted_list(h, h->json_path(h, tenant, "spec.podSubnets")),
	                 quoted_list(h, h->json_path(h, tenant, "spec.serviceSubnets")));
}

/* The group's node labels and taints as a machine patch, or NULL when it has none. Talos
 * writes a taint as nodeTaints: {key: "value:Effect"}. */
static const char *node_patch(const rezus_host_t *h, const rezus_json_t *ng)
{
	const rezus_json_t *labels = h->json_path(h, ng, "spec.labels");
	const rezus_json_t *taints = h->json_path(h, ng, "spec.taints");
	const char *l = "", *t = "";

	for (size_t i = 0; i < h->json_size(h, labels); i++) {
		const char *k = h->json_key_at(h, labels, i);
		const char *v = h->json_string_value(h, h->json_get(h, labels, k));
		l = h->printf(h, "%s%s%s: %s", l, i ? ", " : "", kit_quote(h, k),
		              kit_quote(h, v ? v : ""));
	}
	for (size_t i = 0; i < h->json_size(h, taints); i++) {
		const rezus_json_t *x = h->json_at(h, taints, i);
		t = h->printf(h, "%s%s%s: %s", t, i ? ", " : "",
		              kit_quote(h, kit_get_str(h, x, "key", "")),
		              kit_quote(h, h->printf(h, "%s:%s", kit_get_str(h, x, "value", ""),
		                                     kit_get_str(h, x, "effect", "NoSchedule"))));
	}
	if (l[0] == '\0' && t[0] == '\0') {
		return NULL;
	}
	return h->printf(h, "{\"machine\": {%s%s%s%s%s%s%s}}", l[0] ? "\"nodeLabels\": {" : "", l,
	                 l[0] ? "}" : "", l[0] && t[0] ? ", " : "", t[0] ? "\"nodeTaints\": {" : "",
	                 t, t[0] ? "}" : "");
}

/* Does the ConfigPatch apply to node group name of role? */
static bool patch_applies(const rezus_host_t *h, const rezus_json_t *p, const char *name,
                          const char *role)
{
	const char *target = kit_get_str(h, p, "spec.targetRole", "all");
	const rezus_json_t *only = h->json_path(h, p, "spec.nodeGroups");
	bool listed = h->json_size(h, only) == 0;

	if (!kit_get_bool(h, p, "spec.enabled", true) ||
	    (strcmp(target, "all") != 0 && strcmp(target, role) != 0)) {
		return false;
	}
	for (size_t i = 0; !listed && i < h->json_size(h, only); i++) {
		const char *n = h->json_string_value(h, h->json_at(h, only, i));
		listed = n != NULL && strcmp(n, name) == 0;
	}
	return listed;
}

static void machine_configuration(kit_plain_t *s, const rezus_json_t *ctx, const rezus_json_t *ng,
                                  rezus_json_t *out)
{
	const rezus_host_t *h = s->h;
	const rezus_json_t *tenant = h->json_get(h, ctx, "tenant");
	const rezus_json_t *patches = h->json_get(h, ctx, "configPatches");
	const char *name = kit_get_str(h, ng, "metadata.name", "");
	const char *role = kit_get_str(h, ng, "spec.role", "worker");
	const char *talos = kit_get_str(h, ng, "spec.talosVersion",
	                                kit_get_str(h, tenant, "spec.talosVersion", "1.12.0"));
	const char *nodes = node_patch(h, ng);
	rezus_json_t *d = h->json_object(h), *list = h->json_array(h);

	kit_str(h, d, "cluster_name", h->tf_escape(h, kit_get_str(h, tenant, "metadata.name", "")));
	kit_str(h, d, "cluster_endpoint", "${local.cluster_endpoint}");
	kit_str(h, d, "machine_type", role);
	kit_str(h, d, "machine_secrets", "${talos_machine_secrets.this.machine_secrets}");
	kit_str(h, d, "talos_version", h->tf_escape(h, vversion(h, talos)));
	kit_str(h, d, "kubernetes_version",
	        h->tf_escape(h, kit_get_str(h, tenant, "spec.kubernetesVersion", "1.35.0")));
	kit_bool(h, d, "docs", false);
	kit_bool(h, d, "examples", false);
	h->json_append(h, list, h->json_string(h, h->tf_escape(h, network_patch(h, tenant))));
	if (nodes != NULL) {
		h->json_append(h, list, h->json_string(h, h->tf_escape(h, nodes)));
	}
	for (size_t i = 0; i < h->json_size(h, patches); i++) {
		const rezus_json_t *p = h->json_at(h, patches, i);
		if (patch_applies(h, p, name, role)) {
			h->json_append(
			    h, list,
			    h->json_string(h,
			                   h->tf_escape(h, kit_get_str(h, p, "spec.patch", ""))));
		}
	}
	h->json_set(h, d, "config_patches", list);
	kit_data(h, out, "talos_machine_configuration", h->tf_name(h, name), d);
}

/* ------------------------------------------------------------------ the cluster */

/* The imports of every infra plugin named name, in key order (arena array). */
static size_t imports_named(const rezus_host_t *h, const rezus_json_t *ctx, const char *name,
                            const char **found, size_t max)
{
	const rezus_json_t *imports = h->json_get(h, ctx, "imports");
	size_t n = 0, len = strlen(name);

	for (size_t i = 0; i < h->json_size(h, imports) && n < max; i++) {
		const char *key = h->json_key_at(h, imports, i);
		const char *dot = strchr(key, '.');
		if (dot != NULL && strlen(dot + 1) == len && strcmp(dot + 1, name) == 0) {
			found[n++] = h->json_string_value(h, h->json_get(h, imports, key));
		}
	}
	return n;
}

static bool has_controlplane(const rezus_host_t *h, const rezus_json_t *groups)
{
	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		if (kit_is_controlplane(h, h->json_at(h, groups, i))) {
			return true;
		}
	}
	return false;
}

static bool literal(const char *e)
{
	size_t n = strlen(e);

	return n >= 2 && e[0] == '"' && e[n - 1] == '"' && strcspn(e + 1, "\"\\") == n - 2;
}

static int cluster_endpoint(kit_plain_t *s, const rezus_json_t *ctx, rezus_json_t *locals,
                            rezus_err_t *err)
{
	const rezus_host_t *h = s->h;
	const char *given = kit_get_str(h, ctx, "tenant.spec.controlPlaneEndpoint", "");
	const char *first[16], *lists[16], *all = "";
	size_t nf = imports_named(h, ctx, "controlplane_endpoint", first, 16);
	size_t nl = imports_named(h, ctx, "controlplane_addresses", lists, 16);

	for (size_t i = 0; i < nl; i++) {
		all = h->printf(h, "%s%s%s", all, i ? ", " : "", lists[i]);
	}
	if (nl == 0) {
		h->json_set(h, locals, "controlplane_addresses", h->json_array(h));
	} else {
		kit_str(h, locals, "controlplane_addresses",
		        h->printf(h, nl == 1 ? "${%s}" : "${concat(%s)}", all));
	}
	if (given[0] != '\0') {
		kit_str(h, locals, "cluster_endpoint", h->tf_escape(h, given));
		return 0;
	}
	if (nf > 0 && literal(first[0])) { /* "10.0.0.5": already escaped by its plugin */
		kit_str(h, locals, "cluster_endpoint",
		        h->printf(h, "https://%.*s:6443", (int)strlen(first[0]) - 2, first[0] + 1));
		return 0;
	}
	if (nf > 0) {
		kit_str(h, locals, "cluster_endpoint",
		        h->printf(h, "https://${%s}:6443", first[0]));
		return 0;
	}
	kit_str(h, locals, "cluster_endpoint", "");
	if (kit_exports_only(h, ctx)) {
		return 0;
	}
	return h->error(h, err, REZUS_ERENDER,
	                "spec.controlPlaneEndpoint is empty and no node group can tell the first "
	                "control plane's address before it exists: set spec.controlPlaneEndpoint "
	                "(a load balancer or a reserved address)");
}

static int talos_render(void *state, const rezus_json_t *ctx, rezus_json_t *out, rezus_err_t *err)
{
	kit_plain_t *s = state;
	const rezus_host_t *h = s->h;
	const rezus_json_t *groups = h->json_get(h, ctx, "allNodeGroups");
	const char *tenant = h->tf_escape(h, kit_get_str(h, ctx, "tenant.metadata.name", ""));
	rezus_json_t *exports = kit_child(h, out, "exports");
	rezus_json_t *secrets, *locals = kit_child(h, out, "locals");
	bool cp = has_controlplane(h, groups);
	int rc;

	kit_str(h, exports, "client_configuration",
	        "talos_machine_secrets.this.client_configuration");
	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		const char *name = kit_get_str(h, h->json_at(h, groups, i), "metadata.name", "");
		kit_str(h, exports, h->printf(h, "machine_config.%s", name),
		        h->printf(h, "data.talos_machine_configuration.%s.machine_configuration",
		                  h->tf_name(h, name)));
	}
	if ((rc = cluster_endpoint(s, ctx, locals, err)) != 0 || kit_exports_only(h, ctx)) {
		return rc;
	}
	kit_provider(h, out, "talos", KIT_TALOS_SOURCE, KIT_TALOS_VERSION);
	secrets = h->json_object(h);
	kit_str(h, secrets, "talos_version",
	        h->tf_escape(
	            h, vversion(h, kit_get_str(h, ctx, "tenant.spec.talosVersion", "1.12.0"))));
	kit_resource(h, out, "talos_machine_secrets", "this", secrets);
	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		machine_configuration(s, ctx, h->json_at(h, groups, i), out);
	}
	{
		rezus_json_t *c = h->json_object(h);
		kit_str(h, c, "cluster_name", tenant);
		kit_str(h, c, "client_configuration",
		        "${talos_machine_secrets.this.client_configuration}");
		kit_str(h, c, "endpoints", "${local.controlplane_addresses}");
		kit_str(h, c, "nodes", "${local.controlplane_addresses}");
		kit_data(h, out, "talos_client_configuration", "this", c);
	}
	if (cp) {
		rezus_json_t *b = h->json_object(h), *k = h->json_object(h);
		rezus_json_t *outputs = kit_child(h, out, "output");
		rezus_json_t *kc = h->json_object(h), *tc = h->json_object(h);
		const char *dep[] = { "talos_machine_bootstrap.this" };

		kit_str(h, b, "node", "${local.controlplane_addresses[0]}");
		kit_str(h, b, "endpoint", "${local.controlplane_addresses[0]}");
		kit_str(h, b, "client_configuration",
		        "${talos_machine_secrets.this.client_configuration}");
		kit_resource(h, out, "talos_machine_bootstrap", "this", b);
		kit_str(h, k, "node", "${local.controlplane_addresses[0]}");
		kit_str(h, k, "endpoint", "${local.controlplane_addresses[0]}");
		kit_str(h, k, "client_configuration",
		        "${talos_machine_secrets.this.client_configuration}");
		h->json_set(h, k, "depends_on", kit_strings(h, dep, 1));
		kit_resource(h, out, "talos_cluster_kubeconfig", "this", k);
		kit_str(h, kc, "value", "${talos_cluster_kubeconfig.this.kubeconfig_raw}");
		kit_bool(h, kc, "sensitive", true);
		h->json_set(h, outputs, "kubeconfig", kc);
		kit_str(h, tc, "value", "${data.talos_client_configuration.this.talos_config}");
		kit_bool(h, tc, "sensitive", true);
		h->json_set(h, outputs, "talosconfig", tc);
	}
	return 0;
}

static const char *talos_rules(void *state)
{
	(void)state;
	return "[]"; /* machines come from the infra plugins */
}

/* ------------------------------------------------------------------ upgrades (ABI 1.2) */

/* An Image Factory schematic ID for machine m: its node group's providerConfig.schematic,
 * or (metal) the schematic of the providerConfig.machines[] entry with m's address. */
static const char *schematic_of(const rezus_host_t *h, const rezus_json_t *ctx,
                                const rezus_json_t *m)
{
	const char *group = kit_get_str(h, m, "spec.nodeGroup", "");
	const char *addr = kit_get_str(h, m, "spec.address", "");
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");

	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		const rezus_json_t *g = h->json_at(h, groups, i);
		const rezus_json_t *list = h->json_path(h, g, "spec.providerConfig.machines");
		if (strcmp(kit_get_str(h, g, "metadata.name", ""), group) != 0) {
			continue;
		}
		for (size_t j = 0; addr[0] != '\0' && j < h->json_size(h, list); j++) {
			const rezus_json_t *x = h->json_at(h, list, j);
			if (strcmp(kit_get_str(h, x, "address", ""), addr) == 0 &&
			    kit_get_str(h, x, "schematic", "")[0] != '\0') {
				return kit_get_str(h, x, "schematic", "");
			}
		}
		return kit_get_str(h, g, "spec.providerConfig.schematic", "")[0] != '\0'
		           ? kit_get_str(h, g, "spec.providerConfig.schematic", "")
		           : NULL;
	}
	return NULL;
}

static rezus_json_t *strings(const rezus_host_t *h, const char *const *v)
{
	rezus_json_t *a = h->json_array(h);

	for (; *v != NULL; v++) {
		h->json_append(h, a, h->json_string(h, *v));
	}
	return a;
}

/* talosctl upgrade --wait, talosctl rollback, or talosctl upgrade-k8s, with the tenant's
 * talosconfig, against the machine's address. */
static int talos_upgrade(void *state, const rezus_json_t *ctx, rezus_json_t *commands,
                         rezus_err_t *err)
{
	kit_plain_t *s = state;
	const rezus_host_t *h = s->h;
	const char *action = kit_get_str(h, ctx, "action", "upgrade");
	const char *component = kit_get_str(h, ctx, "component", "talos");
	const char *target = kit_get_str(h, ctx, "targetVersion", "");
	const rezus_json_t *m = h->json_get(h, ctx, "machine");
	const char *addr = kit_get_str(h, m, "spec.address", "");
	int64_t timeout = h->json_integer_value(h, h->json_get(h, ctx, "timeout"));
	rezus_json_t *c;

	if (addr[0] == '\0') {
		return h->error(h, err, REZUS_EINVALID,
		                "machine %s has no address to upgrade through",
		                kit_get_str(h, m, "metadata.name", "?"));
	}
	c = h->json_object(h); /* after the checks: a handle never handed back would leak */
	if (timeout < 60000) {
		timeout = 60000;
	}
	kit_str(h, c, "tool", "talosctl");
	kit_str(h, c, "credentials", "talosconfig");
	if (strcmp(component, "kubernetes") == 0) {
		const char *argv[] = { "upgrade-k8s", "--nodes", addr, "--to", target, NULL };
		kit_str(h, c, "id", "upgrade-k8s");
		h->json_set(h, c, "args", strings(h, argv));
	} else if (strcmp(action, "rollback") == 0) {
		const char *argv[] = { "rollback", "--nodes", addr, NULL };
		kit_str(h, c, "id", "rollback");
		h->json_set(h, c, "args", strings(h, argv));
		timeout = timeout < 600000 ? timeout : 600000;
	} else {
		const char *schematic = schematic_of(h, ctx, m);
		const char *image =
		    schematic != NULL
		        ? h->printf(h, "factory.talos.dev/installer/%s:%s", schematic,
		                    vversion(h, target))
		        : h->printf(h, "ghcr.io/siderolabs/installer:%s", vversion(h, target));
		const char *argv[] = {
			"upgrade",   "--nodes",
			addr,        "--image",
			image,       "--wait",
			"--timeout", h->printf(h, "%llds", (long long)(timeout / 1000)),
			NULL
		};
		kit_str(h, c, "id", "upgrade");
		h->json_set(h, c, "args", strings(h, argv));
	}
	h->json_set(h, c, "timeout", h->json_integer(h, timeout + 30000));
	h->json_append(h, commands, c);
	return 0;
}

static const rezus_plugin_t talos = {
	.header = REZUS_PLUGIN_HEADER_INIT,
	.name = "talos",
	.version = "1.1.0",
	.description = "Talos Linux clusters: secrets, machine configs, bootstrap, kubeconfig",
	.kinds = REZUS_PLUGIN_CLUSTER,
	.config_schema = "{\"type\": \"object\", \"additionalProperties\": false}",
	.provider_config_schema = NULL,
	.init = kit_plain_init,
	.fini = kit_plain_fini,
	.check_config = talos_check_config,
	.validate_nodegroup = NULL,
	.render = talos_render,
	.projection_rules = talos_rules,
	.env_allowlist = NULL,
	.observe_probes = talos_observe_probes,
	.observe_parse = talos_observe_parse,
	.upgrade_commands = talos_upgrade,
	.etcd_commands = talos_etcd_commands,
};

REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void)
{
	return &talos;
}
