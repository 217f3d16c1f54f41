/*
 * plugins/openstack/openstack.c - OpenStack machines (SPEC §6.3), for the
 * terraform-provider-openstack/openstack provider. Per node group: a security group with its
 * rules (the Talos API and, for control planes, the Kubernetes API from allowedCidrs; all
 * traffic between the tenant's OpenStack groups), one port per machine (so the address is
 * known before the machine exists), a boot volume per machine made from the Talos image, an
 * optional data volume, and an instance booted from the volume with config_drive and the
 * group's machine configuration as user_data. Changes of the machine configuration or the
 * image never recreate a machine (ignore_changes): Talos applies config and upgrades in
 * place. Credentials come only from the OS_* environment. Built against the SDK headers only.
 *
 * providerConfig (see README.md): image, flavor (or the class of providerClass
 * "openstack:<flavor>"), network, subnet, fixedIps, bootVolumeGb, volumeType, dataVolumeGb,
 * availabilityZone, allowedCidrs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/kit.h"

static int os_check_config(const rezus_host_t *h, const rezus_json_t *config, rezus_err_t *err)
{
	return kit_no_settings(h, config, "openstack", err);
}

/* ------------------------------------------------------------------ validation */

/* A flavor name: no spaces, quotes or template characters. */
static bool flavor_ok(const char *s, char *why, size_t size)
{
	if (strpbrk(s, " \t\"'${}") == NULL && strlen(s) <= 255) {
		return true;
	}
	snprintf(why, size, "'%s' is not a flavor name such as SCS-4V-8-50", s);
	return false;
}

static const char *const pc_keys[] = { "image",
	                               "flavor",
	                               "network",
	                               "subnet",
	                               "fixedIps",
	                               "bootVolumeGb",
	                               "volumeType",
	                               "dataVolumeGb",
	                               "availabilityZone",
	                               "allowedCidrs",
	                               NULL };

static int os_validate(void *state, const rezus_json_t *ng, rezus_json_t *causes)
{
	kit_plain_t *o = state;
	const rezus_host_t *h = o->h;
	const rezus_json_t *pc = h->json_path(h, ng, "spec.providerConfig");
	const char *cls = kit_class(h, ng), *flavor;
	int64_t count = kit_get_int(h, ng, "spec.count", 1);
	size_t ips;

	if (pc != NULL && h->json_type(h, pc) != REZUS_JSON_OBJECT) {
		kit_cause(h, causes, "", "FieldValueInvalid", "providerConfig must be an object");
		return 0;
	}
	kit_known_keys(h, pc, pc_keys, causes);
	kit_want_str(h, pc, "image", true, kit_uuid, causes);
	kit_want_str(h, pc, "network", true, kit_uuid, causes);
	flavor = kit_want_str(h, pc, "flavor", false, flavor_ok, causes);
	if (flavor != NULL && cls != NULL && strcmp(flavor, cls) != 0) {
		kit_cause(h, causes, "flavor", "FieldValueInvalid",
		          "'%s' contradicts providerClass openstack:%s: name the flavor once",
		          flavor, cls);
	} else if (flavor == NULL && cls == NULL && h->json_get(h, pc, "flavor") == NULL) {
		kit_cause(h, causes, "flavor", "FieldValueRequired",
		          "name the flavor in providerClass (openstack:SCS-4V-8-50) or here");
	}
	ips = kit_want_strs(h, pc, "fixedIps", kit_ipv4, causes);
	if (h->json_get(h, pc, "fixedIps") != NULL && ips > 0) {
		if ((int64_t)ips < count) {
			kit_cause(h, causes, "fixedIps", "FieldValueInvalid",
			          "lists %zu addresses for %lld machines: give one per machine",
			          ips, (long long)count);
		}
		if (h->json_get(h, pc, "subnet") == NULL) {
			kit_cause(h, causes, "subnet", "FieldValueRequired",
			          "fixedIps need the subnet they belong to");
		}
	}
	kit_want_str(h, pc, "subnet", false, kit_uuid, causes);
	kit_want_int(h, pc, "bootVolumeGb", 10, 16384, 20, causes);
	kit_want_str(h, pc, "volumeType", false, flavor_ok, causes);
	kit_want_int(h, pc, "dataVolumeGb", 1, 65536, 0, causes);
	kit_want_str(h, pc, "availabilityZone", false, flavor_ok, causes);
	kit_want_strs(h, pc, "allowedCidrs", kit_cidr4, causes);
	return 0;
}

/* ------------------------------------------------------------------ render */

static rezus_json_t *rule(const rezus_host_t *h, const char *tf, int port, const char *from)
{
	rezus_json_t *r = h->json_object(h);

	kit_str(h, r, "direction", "ingress");
	kit_str(h, r, "ethertype", "IPv4");
	kit_str(h, r, "security_group_id",
	        h->printf(h, "${openstack_networking_secgroup_v2.%s.id}", tf));
	if (port > 0) {
		kit_str(h, r, "protocol", "tcp");
		kit_int(h, r, "port_range_min", port);
		kit_int(h, r, "port_range_max", port);
	}
	if (from != NULL) {
		kit_str(h, r, "remote_ip_prefix", from);
	}
	return r;
}

/* The security group of a node group and its rules; their addresses, for depends_on. */
static size_t security_group(kit_plain_t *o, const rezus_json_t *ctx, const rezus_json_t *ng,
                             rezus_json_t *out, const char **deps, size_t max)
{
	const rezus_host_t *h = o->h;
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");
	const rezus_json_t *cidrs = h->json_path(h, ng, "spec.providerConfig.allowedCidrs");
	const char *tenant = kit_get_str(h, ctx, "tenant.metadata.name", "");
	const char *name = kit_get_str(h, ng, "metadata.name", "");
	const char *tf = h->tf_name(h, name);
	bool cp = strcmp(kit_get_str(h, ng, "spec.role", ""), "controlplane") == 0;
	rezus_json_t *sg = h->json_object(h), *r;
	size_t n = 0, ncidr = h->json_size(h, cidrs);

	kit_str(h, sg, "name", h->tf_escape(h, h->printf(h, "%s-%s", tenant, name)));
	kit_str(h, sg, "description",
	        h->tf_escape(h, h->printf(h, "RezusCloud tenant %s, node group %s", tenant, name)));
	kit_resource(h, out, "openstack_networking_secgroup_v2", tf, sg);

	/* the cluster's own traffic: from every OpenStack group of the tenant */
	for (size_t i = 0; i < h->json_size(h, groups) && n < max; i++) {
		const char *other =
		    h->tf_name(h, kit_get_str(h, h->json_at(h, groups, i), "metadata.name", ""));
		const char *rn = h->printf(h, "%s_from_%s", tf, other);
		r = rule(h, tf, 0, NULL);
		kit_str(h, r, "remote_group_id",
		        h->printf(h, "${openstack_networking_secgroup_v2.%s.id}", other));
		kit_resource(h, out, "openstack_networking_secgroup_rule_v2", rn, r);
		deps[n++] = h->printf(h, "openstack_networking_secgroup_rule_v2.%s", rn);
	}
	/* the Talos API (apid), and the Kubernetes API on control planes, from allowedCidrs */
	for (int port = 0; port < 2 && n < max; port++) {
		const char *rn = h->printf(h, "%s_%s", tf, port == 0 ? "talos_api" : "kube_api");
		if (port == 1 && !cp) {
			break;
		}
		r = rule(h, tf, port == 0 ? 50000 : 6443, NULL);
		if (ncidr > 0) {
			kit_int(h, r, "count", (int64_t)ncidr);
			kit_str(h, r, "remote_ip_prefix",
			        h->printf(h, "${local.%s_allowed_cidrs[count.index]}", tf));
		} else {
			kit_str(h, r, "remote_ip_prefix", "0.0.0.0/0");
		}
		kit_resource(h, out, "openstack_networking_secgroup_rule_v2", rn, r);
		deps[n++] = h->printf(h, "openstack_networking_secgroup_rule_v2.%s", rn);
	}
	if (ncidr > 0) {
		rezus_json_t *a = h->json_array(h);
		for (size_t i = 0; i < ncidr; i++) {
			const char *c = h->json_string_value(h, h->json_at(h, cidrs, i));
			h->json_append(h, a, h->json_string(h, h->tf_escape(h, c ? c : "")));
		}
		h->json_set(h, kit_child(h, out, "locals"), h->printf(h, "%s_allowed_cidrs", tf),
		            a);
	}
	return n;
}

static rezus_json_t *volume(const rezus_host_t *h, const rezus_json_t *pc, int64_t count,
                            const char *name, int64_t size)
{
	rezus_json_t *v = h->json_object(h);
	const char *type = kit_get_str(h, pc, "volumeType", NULL);
	const char *zone = kit_get_str(h, pc, "availabilityZone", NULL);

	kit_int(h, v, "count", count);
	kit_str(h, v, "name", name);
	kit_int(h, v, "size", size);
	kit_str(h, v, "volume_type", type ? h->tf_escape(h, type) : NULL);
	kit_str(h, v, "availability_zone", zone ? h->tf_escape(h, zone) : NULL);
	return v;
}

static void render_group(kit_plain_t *o, const rezus_json_t *ctx, const rezus_json_t *ng,
                         rezus_json_t *out)
{
	const rezus_host_t *h = o->h;
	const rezus_json_t *pc = h->json_path(h, ng, "spec.providerConfig");
	const char *tenant = h->tf_escape(h, kit_get_str(h, ctx, "tenant.metadata.name", ""));
	const char *cluster = kit_get_str(h, ctx, "tenant.spec.clusterProvider", "talos");
	const char *name = kit_get_str(h, ng, "metadata.name", "");
	const char *ename = h->tf_escape(h, name);
	const char *tf = h->tf_name(h, name);
	const char *flavor = kit_get_str(h, pc, "flavor", kit_class(h, ng));
	const char *zone = kit_get_str(h, pc, "availabilityZone", NULL);
	const char *config = kit_import(h, ctx, cluster, h->printf(h, "machine_config.%s", name));
	int64_t count = kit_get_int(h, ng, "spec.count", 1);
	int64_t data = kit_get_int(h, pc, "dataVolumeGb", 0);
	const rezus_json_t *ips = h->json_get(h, pc, "fixedIps");
	const char *deps[64];
	size_t ndeps = security_group(o, ctx, ng, out, deps, 60);
	rezus_json_t *port = h->json_object(h), *boot, *vm = h->json_object(h);
	rezus_json_t *bd = h->json_object(h), *net = h->json_object(h), *meta = h->json_object(h);
	rezus_json_t *lc = h->json_object(h), *sgs = h->json_array(h);
	const char *vm_ignore[] = { "user_data" }, *vol_ignore[] = { "image_id" };

	/* the port first: its address exists before the machine (no cycle with the config) */
	kit_int(h, port, "count", count);
	kit_str(h, port, "name", h->printf(h, "%s-%s-${count.index}", tenant, ename));
	kit_str(h, port, "network_id", h->tf_escape(h, kit_get_str(h, pc, "network", "")));
	kit_bool(h, port, "admin_state_up", true);
	h->json_append(
	    h, sgs,
	    h->json_string(h, h->printf(h, "${openstack_networking_secgroup_v2.%s.id}", tf)));
	h->json_set(h, port, "security_group_ids", sgs);
	if (h->json_size(h, ips) > 0) {
		rezus_json_t *fixed = h->json_object(h), *a = h->json_array(h);
		for (size_t i = 0; i < h->json_size(h, ips); i++) {
			const char *s = h->json_string_value(h, h->json_at(h, ips, i));
			h->json_append(h, a, h->json_string(h, h->tf_escape(h, s ? s : "")));
		}
		h->json_set(h, kit_child(h, out, "locals"), h->printf(h, "%s_fixed_ips", tf), a);
		kit_str(h, fixed, "subnet_id", h->tf_escape(h, kit_get_str(h, pc, "subnet", "")));
		kit_str(h, fixed, "ip_address",
		        h->printf(h, "${local.%s_fixed_ips[count.index]}", tf));
		h->json_set(h, port, "fixed_ip", fixed);
	}
	kit_resource(h, out, "openstack_networking_port_v2", tf, port);

	boot = volume(h, pc, count, h->printf(h, "%s-%s-${count.index}-boot", tenant, ename),
	              kit_get_int(h, pc, "bootVolumeGb", 20));
	kit_str(h, boot, "image_id", h->tf_escape(h, kit_get_str(h, pc, "image", "")));
	h->json_set(h, lc, "ignore_changes", kit_strings(h, vol_ignore, 1));
	h->json_set(h, boot, "lifecycle", lc);
	kit_resource(h, out, "openstack_blockstorage_volume_v3", h->printf(h, "%s_boot", tf), boot);

	kit_int(h, vm, "count", count);
	kit_str(h, vm, "name", h->printf(h, "%s-%s-${count.index}", tenant, ename));
	kit_str(h, vm, "flavor_name", h->tf_escape(h, flavor ? flavor : ""));
	kit_bool(h, vm, "config_drive", true);
	kit_str(h, vm, "user_data", config ? h->printf(h, "${%s}", config) : "");
	kit_str(h, vm, "availability_zone", zone ? h->tf_escape(h, zone) : NULL);
	kit_str(h, bd, "uuid",
	        h->printf(h, "${openstack_blockstorage_volume_v3.%s_boot[count.index].id}", tf));
	kit_str(h, bd, "source_type", "volume");
	kit_str(h, bd, "destination_type", "volume");
	kit_int(h, bd, "boot_index", 0);
	kit_bool(h, bd, "delete_on_termination", true);
	h->json_set(h, vm, "block_device", bd);
	kit_str(h, net, "port",
	        h->printf(h, "${openstack_networking_port_v2.%s[count.index].id}", tf));
	h->json_set(h, vm, "network", net);
	kit_str(h, meta, "rezus-tenant", tenant);
	kit_str(h, meta, "rezus-nodegroup", ename);
	kit_str(h, meta, "rezus-role", kit_get_str(h, ng, "spec.role", "worker"));
	h->json_set(h, vm, "metadata", meta);
	lc = h->json_object(h);
	h->json_set(h, lc, "ignore_changes", kit_strings(h, vm_ignore, 1));
	h->json_set(h, vm, "lifecycle", lc);
	h->json_set(h, vm, "depends_on", kit_strings(h, deps, ndeps));
	kit_resource(h, out, "openstack_compute_instance_v2", tf, vm);

	if (data > 0) {
		rezus_json_t *attach = h->json_object(h);
		kit_resource(
		    h, out, "openstack_blockstorage_volume_v3", h->printf(h, "%s_data", tf),
		    volume(h, pc, count, h->printf(h, "%s-%s-${count.index}-data", tenant, ename),
		           data));
		kit_int(h, attach, "count", count);
		kit_str(h, attach, "instance_id",
		        h->printf(h, "${openstack_compute_instance_v2.%s[count.index].id}", tf));
		kit_str(h, attach, "volume_id",
		        h->printf(h, "${openstack_blockstorage_volume_v3.%s_data[count.index].id}",
		                  tf));
		kit_resource(h, out, "openstack_compute_volume_attach_v2",
		             h->printf(h, "%s_data", tf), attach);
	}
}

static const char *cp_addresses(const rezus_host_t *h, const rezus_json_t *ng, const char *tf)
{
	(void)ng;
	return h->printf(h, "openstack_compute_instance_v2.%s[*].access_ip_v4", tf);
}

/* The first port's address: the port exists before the machine that boots with it. */
static const char *cp_endpoint(const rezus_host_t *h, const rezus_json_t *ng, const char *tf)
{
	(void)ng;
	return h->printf(h, "openstack_networking_port_v2.%s[0].all_fixed_ips[0]", tf);
}

static int os_render(void *state, const rezus_json_t *ctx, rezus_json_t *out, rezus_err_t *err)
{
	kit_plain_t *o = state;
	const rezus_host_t *h = o->h;
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");

	(void)err;
	kit_controlplane_exports(h, ctx, out, cp_addresses, cp_endpoint);
	if (kit_exports_only(h, ctx)) {
		return 0;
	}
	kit_provider(h, out, "openstack", KIT_OPENSTACK_SOURCE, KIT_OPENSTACK_VERSION);
	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		render_group(o, ctx, h->json_at(h, groups, i), out);
	}
	return 0;
}

static const char *os_rules(void *state)
{
	(void)state;
	return "[{\"type\": \"openstack_compute_instance_v2\", \"kind\": \"Machine\","
	       " \"nodeGroup\": [\"metadata.rezus-nodegroup\"],"
	       " \"fields\": {\"providerId\": [\"id\"], \"address\": [\"access_ip_v4\"],"
	       " \"hostname\": [\"name\"], \"shape\": [\"flavor_name\"]}}]";
}

static const char *const *os_env(void *state)
{
	static const char *const env[] = { "OS_*", NULL };

	(void)state;
	return env;
}

static const rezus_plugin_t openstack = {
	.header = REZUS_PLUGIN_HEADER_INIT,
	.name = "openstack",
	.version = "1.0.0",
	.description = "OpenStack instances booted from a volume of the Talos image",
	.kinds = REZUS_PLUGIN_INFRA,
	.config_schema = "{\"type\": \"object\", \"additionalProperties\": false}",
	.provider_config_schema =
	    "{\"type\": \"object\", \"additionalProperties\": false,"
	    " \"required\": [\"image\", \"network\"], \"properties\": {"
	    "\"image\": {\"type\": \"string\", \"description\": \"Talos image UUID\"},"
	    " \"flavor\": {\"type\": \"string\", \"description\": \"default: the class of "
	    "providerClass\"},"
	    " \"network\": {\"type\": \"string\", \"description\": \"network UUID\"},"
	    " \"subnet\": {\"type\": \"string\", \"description\": \"subnet UUID (with fixedIps)\"},"
	    " \"fixedIps\": {\"type\": \"array\", \"items\": {\"type\": \"string\"},"
	    " \"description\": \"one fixed address per machine\"},"
	    " \"bootVolumeGb\": {\"type\": \"integer\", \"minimum\": 10, \"maximum\": 16384,"
	    " \"default\": 20},"
	    " \"volumeType\": {\"type\": \"string\"},"
	    " \"dataVolumeGb\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 65536,"
	    " \"description\": \"a second volume per machine\"},"
	    " \"availabilityZone\": {\"type\": \"string\"},"
	    " \"allowedCidrs\": {\"type\": \"array\", \"items\": {\"type\": \"string\"},"
	    " \"description\": \"who reaches the Talos and Kubernetes APIs; default: "
	    "0.0.0.0/0\"}}}",
	.init = kit_plain_init,
	.fini = kit_plain_fini,
	.check_config = os_check_config,
	.validate_nodegroup = os_validate,
	.render = os_render,
	.projection_rules = os_rules,
	.env_allowlist = os_env,
};

REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void)
{
	return &openstack;
}
