/*
 * plugins/oci/oci.c - Oracle Cloud Infrastructure machines (SPEC §6.3), for the oracle/oci
 * provider. Per node group: a random_pet per machine (a stable name, kept while the group
 * exists), an oci_core_instance per machine spread over the availability domains, booted
 * from the Talos image with the group's machine configuration as user_data. Changes of the
 * machine configuration or the image never recreate an instance (ignore_changes): Talos
 * applies config and upgrades in place. Credentials come only from the OCI_* environment.
 * Built against the SDK headers only.
 *
 * providerConfig (see README.md): compartment, subnet, image, shape (or the class of
 * providerClass "oci:<shape>"), ocpus and memoryGb (flexible shapes only), bootVolumeGb,
 * assignPublicIp, nsgIds, availabilityDomains, privateIps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/kit.h"

struct oci {
	const rezus_host_t *h;
	char region[64];
};

static const char *const config_keys[] = { "region", NULL };

static int oci_check_config(const rezus_host_t *h, const rezus_json_t *config, rezus_err_t *err)
{
	for (size_t i = 0; i < h->json_size(h, config); i++) {
		const char *key = h->json_key_at(h, config, i);
		if (strcmp(key, config_keys[0]) != 0) {
			return h->error(h, err, REZUS_ECONFIG, "plugins.oci.%s: unknown key", key);
		}
	}
	if (h->json_get(h, config, "region") != NULL &&
	    h->json_string_value(h, h->json_get(h, config, "region")) == NULL) {
		return h->error(h, err, REZUS_ECONFIG,
		                "plugins.oci.region: must be a region name such as eu-frankfurt-1");
	}
	return 0;
}

static int oci_init(const rezus_host_t *h, const rezus_json_t *config, void **state,
                    rezus_err_t *err)
{
	struct oci *o = calloc(1, sizeof(*o));

	if (o == NULL) {
		return h->error(h, err, REZUS_EINTERNAL, "out of memory");
	}
	o->h = h;
	snprintf(o->region, sizeof(o->region), "%s", h->config_string(h, config, "region", ""));
	*state = o;
	return 0;
}

static void oci_fini(void *state)
{
	free(state);
}

/* ------------------------------------------------------------------ validation */

static bool compartment_ok(const char *s, char *why, size_t size)
{
	return kit_ocid(s, "ocid1.compartment.", why, size) ||
	       kit_ocid(s, "ocid1.tenancy.", why, size);
}

static bool subnet_ok(const char *s, char *why, size_t size)
{
	return kit_ocid(s, "ocid1.subnet.", why, size);
}

static bool image_ok(const char *s, char *why, size_t size)
{
	return kit_ocid(s, "ocid1.image.", why, size);
}

static bool nsg_ok(const char *s, char *why, size_t size)
{
	return kit_ocid(s, "ocid1.networksecuritygroup.", why, size);
}

/* VM.Standard.E4.Flex, BM.Standard3.64: letters, digits and dots, starting VM. or BM. */
static bool shape_ok(const char *s, char *why, size_t size)
{
	bool ok = strncmp(s, "VM.", 3) == 0 || strncmp(s, "BM.", 3) == 0;

	for (const char *p = s; ok && *p != '\0'; p++) {
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		     (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
	}
	if (!ok) {
		snprintf(why, size, "'%s' is not an OCI shape such as VM.Standard.A1.Flex", s);
	}
	return ok;
}

static bool flexible(const char *shape)
{
	size_t n = strlen(shape);

	return n > 5 && strcmp(shape + n - 5, ".Flex") == 0;
}

static const char *const pc_keys[] = { "compartment",  "subnet",
	                               "image",        "shape",
	                               "ocpus",        "memoryGb",
	                               "bootVolumeGb", "assignPublicIp",
	                               "nsgIds",       "availabilityDomains",
	                               "privateIps",   NULL };

static int oci_validate(void *state, const rezus_json_t *ng, rezus_json_t *causes)
{
	struct oci *o = state;
	const rezus_host_t *h = o->h;
	const rezus_json_t *pc = h->json_path(h, ng, "spec.providerConfig");
	const char *cls = kit_class(h, ng), *shape;
	int64_t count = kit_get_int(h, ng, "spec.count", 1);
	size_t ips;

	if (pc != NULL && h->json_type(h, pc) != REZUS_JSON_OBJECT) {
		kit_cause(h, causes, "", "FieldValueInvalid", "providerConfig must be an object");
		return 0;
	}
	kit_known_keys(h, pc, pc_keys, causes);
	kit_want_str(h, pc, "compartment", true, compartment_ok, causes);
	kit_want_str(h, pc, "subnet", true, subnet_ok, causes);
	kit_want_str(h, pc, "image", true, image_ok, causes);
	shape = kit_want_str(h, pc, "shape", false, shape_ok, causes);
	if (shape != NULL && cls != NULL && strcmp(shape, cls) != 0) {
		kit_cause(h, causes, "shape", "FieldValueInvalid",
		          "'%s' contradicts providerClass oci:%s: name the shape once", shape, cls);
	}
	if (shape == NULL && cls != NULL) {
		char why[256];
		shape = shape_ok(cls, why, sizeof(why)) ? cls : NULL;
		if (shape == NULL) {
			kit_cause(h, causes, "shape", "FieldValueInvalid", "providerClass: %s",
			          why);
		}
	} else if (shape == NULL && h->json_get(h, pc, "shape") == NULL) {
		kit_cause(h, causes, "shape", "FieldValueRequired",
		          "name the shape in providerClass (oci:VM.Standard.A1.Flex) or here");
	}
	if (shape != NULL && flexible(shape)) {
		if (h->json_get(h, pc, "ocpus") == NULL) {
			kit_cause(h, causes, "ocpus", "FieldValueRequired",
			          "required for the flexible shape %s", shape);
		}
		if (h->json_get(h, pc, "memoryGb") == NULL) {
			kit_cause(h, causes, "memoryGb", "FieldValueRequired",
			          "required for the flexible shape %s", shape);
		}
	} else if (shape != NULL) {
		if (h->json_get(h, pc, "ocpus") != NULL) {
			kit_cause(h, causes, "ocpus", "FieldValueForbidden",
			          "only flexible shapes (*.Flex) take ocpus; %s is fixed", shape);
		}
		if (h->json_get(h, pc, "memoryGb") != NULL) {
			kit_cause(h, causes, "memoryGb", "FieldValueForbidden",
			          "only flexible shapes (*.Flex) take memoryGb; %s is fixed",
			          shape);
		}
	}
	kit_want_int(h, pc, "ocpus", 1, 128, 1, causes);
	kit_want_int(h, pc, "memoryGb", 1, 2048, 1, causes);
	kit_want_int(h, pc, "bootVolumeGb", 50, 32768, 50, causes);
	kit_want_bool(h, pc, "assignPublicIp", false, causes);
	kit_want_strs(h, pc, "nsgIds", nsg_ok, causes);
	kit_want_strs(h, pc, "availabilityDomains", NULL, causes);
	ips = kit_want_strs(h, pc, "privateIps", kit_ipv4, causes);
	if (h->json_get(h, pc, "privateIps") != NULL && ips > 0 && (int64_t)ips < count) {
		kit_cause(h, causes, "privateIps", "FieldValueInvalid",
		          "lists %zu addresses for %lld machines: give one per machine", ips,
		          (long long)count);
	}
	return 0;
}

/* ------------------------------------------------------------------ render */

/* A locals entry holding the JSON list pc[key] of strings, escaped; its reference. */
static const char *local_list(const rezus_host_t *h, const rezus_json_t *pc, const char *key,
                              const char *name, rezus_json_t *locals)
{
	const rezus_json_t *src = h->json_get(h, pc, key);
	rezus_json_t *a = h->json_array(h);

	for (size_t i = 0; i < h->json_size(h, src); i++) {
		const char *s = h->json_string_value(h, h->json_at(h, src, i));
		h->json_append(h, a, h->json_string(h, h->tf_escape(h, s ? s : "")));
	}
	h->json_set(h, locals, name, a);
	return h->printf(h, "local.%s", name);
}

static void render_group(struct oci *o, const rezus_json_t *ctx, const rezus_json_t *ng,
                         rezus_json_t *out)
{
	const rezus_host_t *h = o->h;
	const rezus_json_t *pc = h->json_path(h, ng, "spec.providerConfig");
	const char *tenant = kit_get_str(h, ctx, "tenant.metadata.name", "");
	const char *cluster = kit_get_str(h, ctx, "tenant.spec.clusterProvider", "talos");
	const char *name = kit_get_str(h, ng, "metadata.name", "");
	const char *role = kit_get_str(h, ng, "spec.role", "worker");
	const char *tf = h->tf_name(h, name);
	const char *shape = kit_get_str(h, pc, "shape", kit_class(h, ng));
	const char *config = kit_import(h, ctx, cluster, h->printf(h, "machine_config.%s", name));
	int64_t count = kit_get_int(h, ng, "spec.count", 1);
	rezus_json_t *locals = kit_child(h, out, "locals");
	rezus_json_t *pet = h->json_object(h), *keepers = h->json_object(h);
	rezus_json_t *vm = h->json_object(h), *src = h->json_object(h), *vnic = h->json_object(h);
	rezus_json_t *meta = h->json_object(h), *tags = h->json_object(h), *lc = h->json_object(h);
	const char *ignore[] = { "metadata[\"user_data\"]", "source_details[0].source_id" };
	const char *ad;

	/* a stable name per machine, kept while the group exists */
	kit_int(h, pet, "count", count);
	kit_str(h, keepers, "tenant", h->tf_escape(h, tenant));
	kit_str(h, keepers, "node_group", h->tf_escape(h, name));
	h->json_set(h, pet, "keepers", keepers);
	kit_int(h, pet, "length", 2);
	kit_resource(h, out, "random_pet", tf, pet);

	if (h->json_size(h, h->json_get(h, pc, "availabilityDomains")) > 0) {
		ad = h->printf(
		    h, "${element(%s, count.index)}",
		    local_list(h, pc, "availabilityDomains", h->printf(h, "%s_ads", tf), locals));
	} else {
		rezus_json_t *ads = h->json_object(h);
		const char *list = h->printf(
		    h, "data.oci_identity_availability_domains.%s.availability_domains", tf);
		kit_str(h, ads, "compartment_id",
		        h->tf_escape(h, kit_get_str(h, pc, "compartment", "")));
		kit_data(h, out, "oci_identity_availability_domains", tf, ads);
		ad = h->printf(h, "${%s[count.index %% length(%s)].name}", list, list);
	}
	kit_int(h, vm, "count", count);
	kit_str(h, vm, "availability_domain", ad);
	kit_str(h, vm, "compartment_id", h->tf_escape(h, kit_get_str(h, pc, "compartment", "")));
	kit_str(h, vm, "display_name",
	        h->printf(h, "%s-%s-${random_pet.%s[count.index].id}", h->tf_escape(h, tenant),
	                  h->tf_escape(h, name), tf));
	kit_str(h, vm, "shape", h->tf_escape(h, shape ? shape : ""));
	kit_bool(h, vm, "preserve_boot_volume", false); /* the provider's default has varied */
	if (shape != NULL && flexible(shape)) {
		rezus_json_t *sc = h->json_object(h);
		kit_int(h, sc, "ocpus", kit_get_int(h, pc, "ocpus", 1));
		kit_int(h, sc, "memory_in_gbs", kit_get_int(h, pc, "memoryGb", 6));
		h->json_set(h, vm, "shape_config", sc);
	}
	kit_str(h, src, "source_type", "image");
	kit_str(h, src, "source_id", h->tf_escape(h, kit_get_str(h, pc, "image", "")));
	kit_int(h, src, "boot_volume_size_in_gbs", kit_get_int(h, pc, "bootVolumeGb", 50));
	h->json_set(h, vm, "source_details", src);
	kit_str(h, vnic, "subnet_id", h->tf_escape(h, kit_get_str(h, pc, "subnet", "")));
	kit_bool(h, vnic, "assign_public_ip", kit_get_bool(h, pc, "assignPublicIp", false));
	if (h->json_size(h, h->json_get(h, pc, "nsgIds")) > 0) {
		h->json_set(
		    h, vnic, "nsg_ids",
		    h->json_string(h, h->printf(h, "${%s}",
		                                local_list(h, pc, "nsgIds",
		                                           h->printf(h, "%s_nsgs", tf), locals))));
	}
	if (h->json_size(h, h->json_get(h, pc, "privateIps")) > 0) {
		kit_str(
		    h, vnic, "private_ip",
		    h->printf(h, "${element(%s, count.index)}",
		              local_list(h, pc, "privateIps", h->printf(h, "%s_ips", tf), locals)));
	}
	h->json_set(h, vm, "create_vnic_details", vnic);
	kit_str(h, meta, "user_data", config ? h->printf(h, "${base64encode(%s)}", config) : "");
	h->json_set(h, vm, "metadata", meta);
	kit_str(h, tags, "rezus-tenant", h->tf_escape(h, tenant));
	kit_str(h, tags, "rezus-nodegroup", h->tf_escape(h, name));
	kit_str(h, tags, "rezus-role", role);
	h->json_set(h, vm, "freeform_tags", tags);
	h->json_set(h, lc, "ignore_changes", kit_strings(h, ignore, 2));
	h->json_set(h, vm, "lifecycle", lc);
	kit_resource(h, out, "oci_core_instance", tf, vm);
}

/* A control-plane group's Talos API addresses: public when it has them. */
static const char *cp_addresses(const rezus_host_t *h, const rezus_json_t *ng, const char *tf)
{
	return h->printf(h, "oci_core_instance.%s[*].%s", tf,
	                 kit_get_bool(h, ng, "spec.providerConfig.assignPublicIp", false)
	                     ? "public_ip"
	                     : "private_ip");
}

/* Its first machine's address, known in advance only with privateIps. */
static const char *cp_endpoint(const rezus_host_t *h, const rezus_json_t *ng, const char *tf)
{
	const char *ip = h->json_string_value(
	    h, h->json_at(h, h->json_path(h, ng, "spec.providerConfig.privateIps"), 0));

	(void)tf;
	return ip ? kit_quote(h, h->tf_escape(h, ip)) : NULL;
}

static int oci_render(void *state, const rezus_json_t *ctx, rezus_json_t *out, rezus_err_t *err)
{
	struct oci *o = state;
	const rezus_host_t *h = o->h;
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");

	(void)err;
	kit_controlplane_exports(h, ctx, out, cp_addresses, cp_endpoint);
	if (kit_exports_only(h, ctx)) {
		return 0;
	}
	kit_provider(h, out, "oci", KIT_OCI_SOURCE, KIT_OCI_VERSION);
	kit_provider(h, out, "random", KIT_RANDOM_SOURCE, KIT_RANDOM_VERSION);
	if (o->region[0] != '\0') {
		rezus_json_t *p = h->json_object(h);
		kit_str(h, p, "region", h->tf_escape(h, o->region));
		h->json_set(h, kit_child(h, out, "provider"), "oci", p);
	}
	for (size_t i = 0; i < h->json_size(h, groups); i++) {
		render_group(o, ctx, h->json_at(h, groups, i), out);
	}
	return 0;
}

static const char *oci_rules(void *state)
{
	(void)state;
	return "[{\"type\": \"oci_core_instance\", \"kind\": \"Machine\","
	       " \"nodeGroup\": [\"freeform_tags.rezus-nodegroup\"],"
	       " \"fields\": {\"providerId\": [\"id\"], \"address\": [\"public_ip\", "
	       "\"private_ip\"],"
	       " \"hostname\": [\"display_name\"], \"shape\": [\"shape\"]}}]";
}

static const char *const *oci_env(void *state)
{
	static const char *const env[] = { "OCI_*", NULL };

	(void)state;
	return env;
}

static const rezus_plugin_t oci = {
	.header = REZUS_PLUGIN_HEADER_INIT,
	.name = "oci",
	.version = "1.0.0",
	.description = "Oracle Cloud Infrastructure instances booted from the Talos image",
	.kinds = REZUS_PLUGIN_INFRA,
	.config_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\":"
	                 " {\"region\": {\"type\": \"string\", \"description\": \"OCI region; "
	                 "default: OCI_REGION or the OCI config file\"}}}",
	.provider_config_schema =
	    "{\"type\": \"object\", \"additionalProperties\": false,"
	    " \"required\": [\"compartment\", \"subnet\", \"image\"], \"properties\": {"
	    "\"compartment\": {\"type\": \"string\", \"description\": \"compartment (or tenancy) "
	    "OCID\"},"
	    " \"subnet\": {\"type\": \"string\", \"description\": \"subnet OCID\"},"
	    " \"image\": {\"type\": \"string\", \"description\": \"Talos image OCID\"},"
	    " \"shape\": {\"type\": \"string\", \"description\": \"instance shape; default: the "
	    "class of providerClass\"},"
	    " \"ocpus\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 128,"
	    " \"description\": \"flexible shapes only\"},"
	    " \"memoryGb\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 2048,"
	    " \"description\": \"flexible shapes only\"},"
	    " \"bootVolumeGb\": {\"type\": \"integer\", \"minimum\": 50, \"maximum\": 32768,"
	    " \"default\": 50},"
	    " \"assignPublicIp\": {\"type\": \"boolean\", \"default\": false},"
	    " \"nsgIds\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}},"
	    " \"availabilityDomains\": {\"type\": \"array\", \"items\": {\"type\": \"string\"},"
	    " \"description\": \"spread over these; default: every domain of the region\"},"
	    " \"privateIps\": {\"type\": \"array\", \"items\": {\"type\": \"string\"},"
	    " \"description\": \"one fixed private address per machine\"}}}",
	.init = oci_init,
	.fini = oci_fini,
	.check_config = oci_check_config,
	.validate_nodegroup = oci_validate,
	.render = oci_render,
	.projection_rules = oci_rules,
	.env_allowlist = oci_env,
};

REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void)
{
	return &oci;
}
