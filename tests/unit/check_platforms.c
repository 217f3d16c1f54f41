/*
 * tests/unit/check_platforms.c - the platform plugins (talos, oci, openstack, metal) render
 * representative tenants (tests/plugins/fixtures/) into exactly the TF JSON kept in
 * tests/plugins/golden/; the composed files pass the static checks of rezus-plugin-check
 * (one terraform block, every ${...} reference declared, user strings escaped); every
 * resource type, argument, block and referenced attribute is one the provider documents
 * (tests/plugins/schemas/, each recording the provider version it was taken from); and
 * each plugin's validation gives one cause per bad providerConfig field.
 *
 * REZUS_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing (then review the diff).
 */
#include <config.h>

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/plugin/compose.h"
#include "core/base/config.h"
#include "core/base/log.h"
#include "core/plugin/plugins.h"
#include "sdk/check/tfcheck.h"
#include "tests/unit/testutil.h"

static const char *const platform_plugins[] = { "talos", "oci", "openstack", "metal" };
#define NPLUGINS (sizeof(platform_plugins) / sizeof(platform_plugins[0]))

static rz_config_t cfg;
static rz_plugins_t *plugins;
static json_t *schemas; /* {"resource": {type: schema}, "data": {type: schema}} */

static const char *srcdir(void)
{
	const char *s = getenv("top_srcdir");
	return s ? s : ".";
}

static void load_plugins(void)
{
	const char *top = getenv("top_builddir");
	char path[1024];
	rz_err_t err = { 0 };

	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	snprintf(path, sizeof(path), "%s/plugins/.libs", top ? top : ".");
	free(cfg.plugin_dir);
	cfg.plugin_dir = strdup(path);
	cfg.plugins = calloc(NPLUGINS, sizeof(*cfg.plugins));
	cfg.n_plugins = NPLUGINS;
	for (size_t i = 0; i < NPLUGINS; i++) {
		cfg.plugins[i].name = strdup(platform_plugins[i]);
		cfg.plugins[i].config = json_object();
		cfg.plugins[i].required = true;
		cfg.plugins[i].source = strdup("test");
	}
	ck_assert_msg(rz_plugins_load(&plugins, &cfg, true, &err) == 0, "load: %s", err.msg);
}

/* The documented schemas, merged by kind. */
static void load_schemas(void)
{
	static const char *const files[] = { "talos", "oci", "random", "openstack" };
	char path[1024];

	schemas = json_pack("{s:{}, s:{}}", "resource", "data");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		json_error_t je;
		json_t *s;
		snprintf(path, sizeof(path), "%s/tests/plugins/schemas/%s.json", srcdir(),
		         files[i]);
		s = json_load_file(path, 0, &je);
		ck_assert_msg(s != NULL, "%s: %s", path, je.text);
		ck_assert_msg(json_string_length(json_object_get(s, "version")) > 0,
		              "%s records no provider version", path);
		json_object_update(json_object_get(schemas, "resource"),
		                   json_object_get(s, "resources"));
		json_object_update(json_object_get(schemas, "data"), json_object_get(s, "data"));
		json_decref(s);
	}
	/* built into tofu/terraform */
	json_object_set_new(json_object_get(schemas, "resource"), "terraform_data",
	                    json_pack("{s:[s,s,s,s], s:{}}", "attributes", "id", "input", "output",
	                              "triggers_replace", "blocks"));
}

static void setup(void)
{
	rz_log_set_level(RZ_LOG_CRIT);
	load_plugins();
	load_schemas();
}

static void teardown(void)
{
	rz_plugins_free(plugins);
	plugins = NULL;
	rz_config_free(&cfg);
	json_decref(schemas);
}

static json_t *fixture(const char *name)
{
	char path[1024];
	json_error_t je;
	json_t *ctx;

	snprintf(path, sizeof(path), "%s/tests/plugins/fixtures/%s.json", srcdir(), name);
	ctx = json_load_file(path, 0, &je);
	ck_assert_msg(ctx != NULL, "%s:%d: %s", path, je.line, je.text);
	return ctx;
}

static json_t *compose(const char *name)
{
	json_t *ctx = fixture(name), *files = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_compose(plugins, ctx, NULL, &files, &err) == 0, "%s: %s", name, err.msg);
	json_decref(ctx);
	return files;
}

/* ------------------------------------------------------------------ golden files */

static char *text_of(const json_t *v)
{
	char *t = json_dumps(v, JSON_SORT_KEYS | JSON_INDENT(2));
	char *withnl = NULL;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_gt(asprintf(&withnl, "%s\n", t), 0);
	free(t);
	return withnl;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL) {
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void golden(const char *name, const json_t *files)
{
	bool update = getenv("REZUS_UPDATE_GOLDEN") != NULL;
	char dir[1024], path[1200];
	const char *file;
	json_t *doc;
	size_t count = 0;
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/tests/plugins/golden/%s", srcdir(), name);
	if (update) {
		mkdir(dir, 0755);
	}
	json_object_foreach((json_t *)files, file, doc)
	{
		char *want, *have = text_of(doc);
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		if (update) {
			rzt_write_file(path, have);
		}
		want = read_all(path);
		ck_assert_msg(want != NULL, "%s is missing (REZUS_UPDATE_GOLDEN=1 writes it)",
		              path);
		ck_assert_msg(strcmp(want, have) == 0, "%s differs from the render:\n%s", path,
		              have);
		free(want);
		free(have);
	}
	/* and no golden file the render no longer produces */
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.') {
			ck_assert_msg(json_object_get(files, e->d_name) != NULL,
			              "%s/%s is not rendered any more", dir, e->d_name);
			count++;
		}
	}
	closedir(d);
	ck_assert_uint_eq(count, json_object_size(files));
}

/* ------------------------------------------------------------------ documented names */

static bool listed(const json_t *list, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v)
	{
		if (strcmp(json_string_value(v), name) == 0) {
			return true;
		}
	}
	return false;
}

static const char *const meta_args[] = { "count", "for_each", "depends_on", "lifecycle",
	                                 "provider" };

static void check_body(const char *where, const json_t *body, const json_t *schema, bool top,
                       int *problems)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)body, key, v)
	{
		const json_t *block = json_object_get(json_object_get(schema, "blocks"), key);
		bool meta = false;
		for (size_t i = 0; top && i < sizeof(meta_args) / sizeof(meta_args[0]); i++) {
			meta = meta || strcmp(key, meta_args[i]) == 0;
		}
		if (meta || listed(json_object_get(schema, "attributes"), key)) {
			continue;
		}
		if (block == NULL) {
			fprintf(stderr, "%s: \"%s\" is not a documented argument or block\n", where,
			        key);
			(*problems)++;
			continue;
		}
		if (json_is_array(v)) {
			size_t i;
			json_t *item;
			json_array_foreach(v, i, item)
			{
				check_body(where, item, block, false, problems);
			}
		} else {
			check_body(where, v, block, false, problems);
		}
	}
}

/* The identifier chain at p ("a.b[0].c"), its parts into parts[] (indexes skipped). */
static size_t chain(const char *p, char parts[4][96], const char **end)
{
	size_t n = 0;

	while (n < 4) {
		size_t len = 0;
		while (isalnum((unsigned char)p[len]) || p[len] == '_' || p[len] == '-') {
			len++;
		}
		if (len == 0 || len >= 96) {
			break;
		}
		memcpy(parts[n], p, len);
		parts[n++][len] = '\0';
		p += len;
		while (*p == '[') {
			const char *close = strchr(p, ']');
			p = close ? close + 1 : p + strlen(p);
		}
		if (*p != '.') {
			break;
		}
		p++;
	}
	*end = p;
	return n;
}

/* Every type.name.attribute referenced in s names a documented attribute. */
static void check_refs(const char *where, const char *s, int *problems)
{
	for (const char *p = s; *p != '\0'; p++) {
		char parts[4][96];
		const char *end;
		size_t n;
		const json_t *schema;
		const char *attr;

		if (!(isalpha((unsigned char)*p) && (p == s || (!isalnum((unsigned char)p[-1]) &&
		                                                p[-1] != '_' && p[-1] != '.')))) {
			continue;
		}
		n = chain(p, parts, &end);
		p = end - 1 > p ? end - 1 : p;
		if (n >= 3 && strcmp(parts[0], "data") == 0) {
			schema = json_object_get(json_object_get(schemas, "data"), parts[1]);
			attr = n >= 4 ? parts[3] : NULL;
		} else {
			schema = json_object_get(json_object_get(schemas, "resource"), parts[0]);
			attr = n >= 3 ? parts[2] : NULL;
		}
		if (schema != NULL && attr != NULL &&
		    !listed(json_object_get(schema, "attributes"), attr) &&
		    json_object_get(json_object_get(schema, "blocks"), attr) == NULL) {
			fprintf(stderr, "%s: \"%s\" is not a documented attribute of %s\n", where,
			        attr, strcmp(parts[0], "data") == 0 ? parts[1] : parts[0]);
			(*problems)++;
		}
	}
}

static void walk_strings(const char *where, const json_t *v, int *problems)
{
	size_t i;
	const char *k;
	json_t *x;

	if (json_is_string(v)) {
		check_refs(where, json_string_value(v), problems);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			walk_strings(where, x, problems);
		}
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
		{
			walk_strings(where, x, problems);
		}
	}
}

static int documented(const json_t *files)
{
	const char *file, *kind, *type, *name;
	json_t *doc, *types, *bodies, *body;
	int problems = 0;

	json_object_foreach((json_t *)files, file, doc)
	{
		walk_strings(file, doc, &problems);
		for (int k = 0; k < 2; k++) {
			kind = k == 0 ? "resource" : "data";
			types = json_object_get(doc, kind);
			json_object_foreach(types, type, bodies)
			{
				const json_t *schema =
				    json_object_get(json_object_get(schemas, kind), type);
				if (schema == NULL) {
					fprintf(stderr, "%s: %s type %s is not documented\n", file,
					        kind, type);
					problems++;
					continue;
				}
				json_object_foreach(bodies, name, body)
				{
					char where[512];
					snprintf(where, sizeof(where), "%s: %s.%s.%s", file, kind,
					         type, name);
					check_body(where, body, schema, true, &problems);
				}
			}
		}
	}
	return problems;
}

/* ------------------------------------------------------------------ the tests */

static void render_and_check(const char *name)
{
	json_t *files = compose(name);
	static struct tfcheck c;
	json_t *providers = json_object_get(
	    json_object_get(json_object_get(files, "versions.tf.json"), "terraform"),
	    "required_providers");

	memset(&c, 0, sizeof(c));
	c.hostile = "${tty}";
	tfcheck_run(&c, files);
	for (int i = 0; i < c.n && i < TFCHECK_MAX; i++) {
		fprintf(stderr, "%s: %s\n", name, c.problems[i]);
	}
	ck_assert_msg(c.n == 0, "%s: %d TF JSON problems", name, c.n);
	json_decref(c.decl);
	ck_assert_msg(documented(files) == 0, "%s: undocumented names (see stderr)", name);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(providers, "talos"), "source")),
	    "siderolabs/talos");
	golden(name, files);
	json_decref(files);
}

START_TEST(test_talos_oci)
{
	render_and_check("talos-oci");
}
END_TEST

START_TEST(test_talos_openstack)
{
	render_and_check("talos-openstack");
}
END_TEST

START_TEST(test_talos_metal)
{
	render_and_check("talos-metal");
}
END_TEST

START_TEST(test_mixed)
{
	render_and_check("mixed");
}
END_TEST

/* The checks themselves catch what they should: an undocumented argument, an undocumented
 * attribute in a reference, an undocumented type. */
START_TEST(test_schema_check_catches)
{
	json_t *files =
	    json_pack("{s:{s:{s:{s:{s:s, s:s, s:{s:b}}}}}}", "bad.tf.json", "resource",
	              "oci_core_instance", "x", "shape", "VM.Standard2.1", "display_name",
	              "${random_pet.x.nickname}", "create_vnic_details", "assign_public_ipv4", 1);

	ck_assert_int_eq(documented(files), 2);
	json_object_set_new(json_object_get(json_object_get(files, "bad.tf.json"), "resource"),
	                    "oci_core_vm", json_pack("{s:{}}", "y"));
	ck_assert_int_eq(documented(files), 3);
	json_decref(files);
}
END_TEST

/* ------------------------------------------------------------------ validation */

/* The causes the plugin gives for providerConfig pc (a JSON text) of a node group. */
static json_t *causes_for(const char *cls, const char *role, int count, const char *pc)
{
	json_error_t je;
	json_t *config = json_loads(pc, 0, &je), *causes = json_array();
	json_t *ng;

	ck_assert_msg(config != NULL, "%s", je.text);
	ng = json_pack("{s:{s:s}, s:{s:s, s:i, s:s, s:o}}", "metadata", "name", "g", "spec", "role",
	               role, "count", count, "providerClass", cls, "providerConfig", config);
	rz_plugins_validate_nodegroup(plugins, ng, causes);
	json_decref(ng);
	return causes;
}

/* "field: reason" of each cause (fields under spec.providerConfig. without it), joined
 * with "; ". */
static char *summary(json_t *causes)
{
	static const char prefix[] = "spec.providerConfig.";
	static char buf[4096];
	size_t i, n = 0;
	json_t *c;

	buf[0] = '\0';
	json_array_foreach(causes, i, c)
	{
		const char *field = json_string_value(json_object_get(c, "field"));
		ck_assert_msg(strncmp(field, prefix, sizeof(prefix) - 1) == 0, "field %s", field);
		ck_assert_int_gt(json_string_length(json_object_get(c, "message")), 0);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s: %s", i ? "; " : "",
		                      field + sizeof(prefix) - 1,
		                      json_string_value(json_object_get(c, "reason")));
	}
	json_decref(causes);
	return buf;
}

#define OCI_OK                                                                                     \
	"\"compartment\": \"ocid1.compartment.oc1..aaaa\", \"subnet\": "                           \
	"\"ocid1.subnet.oc1.eu-frankfurt-1.aaaa\", \"image\": "                                    \
	"\"ocid1.image.oc1.eu-frankfurt-1.aaaa\""

START_TEST(test_oci_validation)
{
	ck_assert_str_eq(summary(causes_for("oci:VM.Standard2.1", "worker", 1, "{" OCI_OK "}")),
	                 "");
	ck_assert_str_eq(summary(causes_for("oci", "worker", 1, "{}")),
	                 "compartment: FieldValueRequired; subnet: FieldValueRequired; "
	                 "image: FieldValueRequired; shape: FieldValueRequired");
	ck_assert_str_eq(
	    summary(causes_for("oci:VM.Standard2.1", "worker", 3,
	                       "{\"compartment\": \"ocid1.vcn.oc1..x\", \"subnet\": 7, \"image\": "
	                       "\"ami-123\", \"color\": \"blue\", \"ocpus\": 2, \"bootVolumeGb\": "
	                       "10, \"assignPublicIp\": \"yes\", \"nsgIds\": [\"sg-1\"], "
	                       "\"privateIps\": [\"10.0.0.1\", \"10.0.0.300\"]}")),
	    "color: FieldValueNotSupported; compartment: FieldValueInvalid; subnet: "
	    "FieldValueInvalid; image: FieldValueInvalid; ocpus: FieldValueForbidden; "
	    "bootVolumeGb: FieldValueInvalid; assignPublicIp: FieldValueInvalid; nsgIds[0]: "
	    "FieldValueInvalid; privateIps[1]: FieldValueInvalid");
	ck_assert_str_eq(summary(causes_for("oci:VM.Standard.A1.Flex", "worker", 2,
	                                    "{" OCI_OK ", \"shape\": \"VM.Standard.E4.Flex\", "
	                                    "\"privateIps\": [\"10.0.0.1\"]}")),
	                 "shape: FieldValueInvalid; ocpus: FieldValueRequired; memoryGb: "
	                 "FieldValueRequired; privateIps: FieldValueInvalid");
	ck_assert_str_eq(summary(causes_for("oci:not a shape", "worker", 1, "{" OCI_OK "}")),
	                 "shape: FieldValueInvalid");
}
END_TEST

#define OS_OK                                                                                      \
	"\"image\": \"2f5f6a3e-5b8d-4c11-9a43-0d3f4c6a7b21\", \"network\": "                       \
	"\"8c7a2b1e-1f0d-4e9b-a6c5-3d2e1f0a9b8c\""

START_TEST(test_openstack_validation)
{
	ck_assert_str_eq(summary(causes_for("openstack:SCS-2V-4", "worker", 1, "{" OS_OK "}")), "");
	ck_assert_str_eq(summary(causes_for("openstack", "worker", 1, "{}")),
	                 "image: FieldValueRequired; network: FieldValueRequired; flavor: "
	                 "FieldValueRequired");
	ck_assert_str_eq(
	    summary(causes_for("openstack:SCS-2V-4", "worker", 2,
	                       "{\"image\": \"ubuntu\", \"network\": \"" /* not a UUID */
	                       "8c7a2b1e-1f0d-4e9b-a6c5\", \"flavor\": \"m1.small\", \"fixedIps\": "
	                       "[\"10.0.0.5\"], \"bootVolumeGb\": 5, \"dataVolumeGb\": -1, "
	                       "\"allowedCidrs\": [\"10.0.0.0/33\"], \"extra\": true}")),
	    "extra: FieldValueNotSupported; image: FieldValueInvalid; network: FieldValueInvalid; "
	    "flavor: FieldValueInvalid; fixedIps: FieldValueInvalid; subnet: FieldValueRequired; "
	    "bootVolumeGb: FieldValueInvalid; dataVolumeGb: FieldValueInvalid; allowedCidrs[0]: "
	    "FieldValueInvalid");
}
END_TEST

START_TEST(test_metal_validation)
{
	ck_assert_str_eq(summary(causes_for("metal", "worker", 1,
	                                    "{\"machines\": [{\"address\": \"10.0.0.1\", "
	                                    "\"installDisk\": \"/dev/sda\"}]}")),
	                 "");
	ck_assert_str_eq(summary(causes_for("metal", "worker", 1, "{}")),
	                 "machines: FieldValueRequired");
	ck_assert_str_eq(
	    summary(causes_for("metal", "worker", 3,
	                       "{\"machines\": [{\"address\": \"10.0.0.1\"}, {\"address\": "
	                       "\"10.0.0.1\", \"installDisk\": \"sda\", \"hostname\": \"Node_1\", "
	                       "\"schematic\": \"abc\", \"interface\": \"eth 0\", \"mac\": \"x\"}, "
	                       "7]}")),
	    "machines[0].installDisk: FieldValueRequired; machines[1].mac: FieldValueNotSupported; "
	    "machines[1].installDisk: FieldValueInvalid; machines[1].hostname: FieldValueInvalid; "
	    "machines[1].schematic: FieldValueInvalid; machines[1].interface: FieldValueInvalid; "
	    "machines[1].address: FieldValueDuplicate; machines[2]: FieldValueInvalid");
	ck_assert_str_eq(summary(causes_for("metal", "worker", 2,
	                                    "{\"machines\": [{\"address\": \"10.0.0.1\", "
	                                    "\"installDisk\": \"/dev/sda\"}]}")),
	                 "machines: FieldValueInvalid");
}
END_TEST

/* Without spec.controlPlaneEndpoint, an OCI control plane needs privateIps: otherwise the
 * cluster endpoint would depend on the machine that boots with it. */
START_TEST(test_endpoint_needed)
{
	json_t *ctx = fixture("talos-oci"), *files = NULL;
	json_t *cp = json_array_get(json_object_get(ctx, "nodeGroups"), 0);
	rz_err_t err = { 0 };

	json_object_del(json_object_get(json_object_get(cp, "spec"), "providerConfig"),
	                "privateIps");
	ck_assert_int_eq(rz_compose(plugins, ctx, NULL, &files, &err), REZUS_ERENDER);
	ck_assert_str_eq(err.msg, "plugin 'talos': render failed: spec.controlPlaneEndpoint is "
	                          "empty and no node group can tell "
	                          "the first control plane's address before it exists: set "
	                          "spec.controlPlaneEndpoint (a load balancer or a reserved "
	                          "address)");
	json_object_set_new(json_object_get(json_object_get(ctx, "tenant"), "spec"),
	                    "controlPlaneEndpoint", json_string("https://lb.acme.example:6443"));
	ck_assert_msg(rz_compose(plugins, ctx, NULL, &files, &err) == 0, "%s", err.msg);
	json_decref(files);
	json_decref(ctx);
}
END_TEST

/* ------------------------------------------------------------------ projection */

/* The plugin's projection of tests/plugins/states/<plugin>.json, compact, keys sorted. */
static char *projected(const char *plugin)
{
	char path[1024];
	json_error_t je;
	json_t *state, *objects = NULL;
	rz_err_t err = { 0 };
	char *text;

	snprintf(path, sizeof(path), "%s/tests/plugins/states/%s.json", srcdir(), plugin);
	state = json_load_file(path, 0, &je);
	ck_assert_msg(state != NULL, "%s: %s", path, je.text);
	ck_assert_msg(rz_plugins_project(plugins, plugin, state, NULL, &objects, &err) == 0, "%s",
	              err.msg);
	text = json_dumps(objects, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(objects);
	json_decref(state);
	return text;
}

START_TEST(test_projection)
{
	char *oci = projected("oci"), *os = projected("openstack"), *metal = projected("metal");

	ck_assert_str_eq(
	    oci,
	    "[{\"kind\":\"Machine\",\"name\":\"workers-arm-0\",\"nodeGroup\":\"workers-arm\","
	    "\"spec\":{\"address\":\"10.0.2.17\",\"hostname\":\"acme-workers-arm-brave-otter\","
	    "\"providerId\":\"ocid1.instance.oc1.eu-frankfurt-1.aaaa0\",\"shape\":\"VM.Standard.A1."
	    "Flex\"},\"tfAddress\":\"oci_core_instance.workers_arm[0]\"},{\"kind\":\"Machine\","
	    "\"name\":\"workers-arm-1\",\"nodeGroup\":\"workers-arm\",\"spec\":{\"address\":"
	    "\"129.159.2.18\",\"hostname\":\"acme-workers-arm-calm-heron\",\"providerId\":"
	    "\"ocid1.instance.oc1.eu-frankfurt-1.aaaa1\",\"shape\":\"VM.Standard.A1.Flex\"},"
	    "\"tfAddress\":\"oci_core_instance.workers_arm[1]\"}]");
	ck_assert_str_eq(
	    os, "[{\"kind\":\"Machine\",\"name\":\"control-plane-0\",\"nodeGroup\":\"control-"
	        "plane\",\"spec\":{\"address\":\"192.168.10.10\",\"hostname\":\"beta-control-"
	        "plane-0\",\"providerId\":\"5a1f0c3e-9d2b-4c8e-b7a6-1f2e3d4c5b6a\",\"shape\":\"SCS-"
	        "4V-8\"},\"tfAddress\":\"openstack_compute_instance_v2.control_plane[0]\"}]");
	/* metal: the group from the resource name (gpu_nodes, as a label), the machine from its
	 * address; the machine configuration stays out */
	ck_assert_str_eq(
	    metal,
	    "[{\"kind\":\"Machine\",\"name\":\"gpu-nodes-10-10-0-21\",\"nodeGroup\":\"gpu-"
	    "nodes\",\"spec\":{\"address\":\"10.10.0.21\",\"providerId\":\"10.10.0.21\"},"
	    "\"tfAddress\":\"talos_machine_configuration_apply.gpu_nodes[\\\"10.10.0.21\\\"]\"},"
	    "{\"kind\":\"Machine\",\"name\":\"gpu-nodes-10-10-0-22\",\"nodeGroup\":\"gpu-"
	    "nodes\",\"spec\":{\"address\":\"10.10.0.22\",\"providerId\":\"10.10.0.22\"},"
	    "\"tfAddress\":\"talos_machine_configuration_apply.gpu_nodes[\\\"10.10.0.22\\\"]\"}]");
	free(oci);
	free(os);
	free(metal);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("platforms");
	TCase *tc = tcase_create("render");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_talos_oci);
	tcase_add_test(tc, test_talos_openstack);
	tcase_add_test(tc, test_talos_metal);
	tcase_add_test(tc, test_mixed);
	tcase_add_test(tc, test_schema_check_catches);
	tcase_add_test(tc, test_oci_validation);
	tcase_add_test(tc, test_openstack_validation);
	tcase_add_test(tc, test_metal_validation);
	tcase_add_test(tc, test_endpoint_needed);
	tcase_add_test(tc, test_projection);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
