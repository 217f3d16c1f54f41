/* tests/unit/check_plugins.c - the loader against fixture .so files (one per refusal), the
 * host table, the sim plugin's validation and render, and Provider objects. */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/store/bus.h"
#include "core/plugin/compose.h"
#include "core/base/config.h"
#include "core/store/db.h"
#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/plugin/plugins.h"
#include "core/plugin/probe.h"
#include "core/store/store.h"
#include "tests/unit/testutil.h"

static rz_config_t cfg;

/* A configuration listing one plugin, looked up in dir (relative to the build tree). */
static void config_for(const char *dir, const char *name, bool required, json_t *section)
{
	const char *top = getenv("top_builddir");
	char path[1024];

	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	snprintf(path, sizeof(path), "%s/%s", top ? top : ".", dir);
	free(cfg.plugin_dir);
	cfg.plugin_dir = strdup(path);
	cfg.plugins = calloc(1, sizeof(*cfg.plugins));
	cfg.n_plugins = 1;
	cfg.plugins[0].name = strdup(name);
	cfg.plugins[0].config = section ? section : json_object();
	cfg.plugins[0].required = required;
	cfg.plugins[0].source = strdup("test");
}

static void setup(void)
{
	rz_log_set_level(RZ_LOG_CRIT);
}

static void teardown(void)
{
	rz_config_free(&cfg);
}

/* Load fixture name (optional): its error, or "" when it loaded. */
static const char *refusal(const char *name)
{
	static char error[256];
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	const rz_plugin_t *pl;

	config_for("tests/fixtures/plugins", name, false, NULL);
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, true, &err), 0); /* optional: not fatal */
	pl = rz_plugins_at(p, 0);
	ck_assert_ptr_nonnull(pl);
	snprintf(error, sizeof(error), "%s", pl->loaded ? "" : pl->error);
	ck_assert_int_eq(pl->loaded, error[0] == '\0');
	rz_plugins_free(p);
	rz_config_free(&cfg);
	return error;
}

START_TEST(test_refusals_in_order)
{
	char want[512];

	ck_assert_str_eq(refusal("good"), "");
	ck_assert_str_eq(refusal("noentry"), "no rezus_plugin_entry symbol");
	ck_assert_str_eq(refusal("nulldesc"), "rezus_plugin_entry returned NULL");
	ck_assert_str_eq(refusal("badmagic"), "bad magic 0xdeadbeef: not a RezusCloud plugin");
	snprintf(want, sizeof(want), "built for ABI %d.0, host provides %d.%d", REZUS_ABI_MAJOR + 1,
	         REZUS_ABI_MAJOR, REZUS_ABI_MINOR);
	ck_assert_str_eq(refusal("major"), want);
	snprintf(want, sizeof(want), "built for ABI %d.%d, host provides %d.%d", REZUS_ABI_MAJOR,
	         REZUS_ABI_MINOR + 1, REZUS_ABI_MAJOR, REZUS_ABI_MINOR);
	ck_assert_str_eq(refusal("minor"), want);
	snprintf(want, sizeof(want),
	         "descriptor is 16 bytes, smaller than the ABI 1.0 layout (%zu)",
	         (size_t)REZUS_PLUGIN_SIZE_1_0);
	ck_assert_str_eq(refusal("short"), want);
	ck_assert_str_eq(refusal("noname"), "empty name");
	ck_assert_str_eq(refusal("othername"),
	                 "name 'someone-else' does not match the file 'othername.so'");
	ck_assert_str_eq(refusal("norender"), "missing required entry 'render'");
	ck_assert_str_eq(refusal("halfobserve"),
	                 "observe_probes and observe_parse come together: 'observe_parse' is "
	                 "missing");
	ck_assert_str_eq(refusal("etcdinfra"),
	                 "etcd_commands is for cluster plugins, and kinds has no cluster");
	ck_assert_str_eq(refusal("initfail"), "init failed: fixture refuses to start");
	ck_assert_int_eq(strncmp(refusal("badrules"), "bad projection rules: ", 22), 0);
	ck_assert_int_eq(strncmp(refusal("missing"), "cannot load: ", 13), 0);
}
END_TEST

/* A plugin built against the 1.0 header loads under 1.1, and what lies past its descriptor
 * (here: non-NULL bytes) never reads as an observation entry. */
START_TEST(test_abi_1_0_plugin_loads)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	const rz_plugin_t *pl;

	config_for("tests/fixtures/plugins", "abi10", true, NULL);
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, true, &err), 0);
	pl = rz_plugins_at(p, 0);
	ck_assert_msg(pl->loaded, "%s", pl->error);
	ck_assert_str_eq(pl->abi, "1.0");
	ck_assert_ptr_null(pl->desc.observe_probes);
	ck_assert_ptr_null(pl->desc.observe_parse);
	rz_plugins_free(p);
	rz_config_free(&cfg);
}
END_TEST

/* A plugin built against the 1.2 header (a descriptor that ends at upgrade_commands) loads
 * under 1.3 and upgrades, takes no etcd snapshots, and what lies past its descriptor (here
 * non-NULL bytes) is never called as etcd_commands. */
START_TEST(test_abi_1_2_plugin_loads)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	const rz_plugin_t *pl;
	json_t *ctx = json_pack("{s:s, s:s}", "action", "snapshot", "path", "/tmp/x/snapshot.db");
	json_t *cmds = NULL;

	config_for("tests/fixtures/plugins", "abi12", true, NULL);
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, true, &err), 0);
	pl = rz_plugins_at(p, 0);
	ck_assert_msg(pl->loaded, "%s", pl->error);
	ck_assert_str_eq(pl->abi, "1.2");
	ck_assert(rz_plugins_upgrades(p, "abi12"));
	ck_assert(!rz_plugins_has_etcd(p, "abi12"));
	ck_assert_ptr_null(pl->desc.etcd_commands);
	ck_assert_int_eq(rz_plugins_etcd_commands(p, "abi12", ctx, &cmds, &err), RZ_ENOTFOUND);
	ck_assert_str_eq(err.msg, "plugin 'abi12' is not loaded or takes no etcd snapshots");
	ck_assert_ptr_null(cmds);
	json_decref(ctx);
	rz_plugins_free(p);
	rz_config_free(&cfg);
}
END_TEST

START_TEST(test_required_plugin_stops_start)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	char want[2048];

	config_for("tests/fixtures/plugins", "initfail", true, NULL);
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, true, &err), REZUS_ECONFIG);
	snprintf(want, sizeof(want),
	         "required plugin 'initfail' (%s/.libs/initfail.so): init failed: "
	         "fixture refuses to start",
	         cfg.plugin_dir);
	ck_assert_str_eq(err.msg, want);
	rz_plugins_free(p);
}
END_TEST

START_TEST(test_check_config_does_not_start)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };

	/* initfail only fails in init: a check does not call it */
	config_for("tests/fixtures/plugins", "initfail", true, NULL);
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, false, &err), 0);
	ck_assert(rz_plugins_at(p, 0)->loaded);
	rz_plugins_free(p);
	rz_config_free(&cfg);
	/* sim's check_config refuses a bad section */
	config_for("plugins", "sim", true, json_pack("{s:s}", "addressPrefix", "300.1"));
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, false, &err), REZUS_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "check_config failed: plugins.sim.addressPrefix: use "
	                                      "three octets such as 10.99.0"));
	rz_plugins_free(p);
}
END_TEST

/* ------------------------------------------------------------------ sim */

static rz_plugins_t *load_sim(void)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };

	config_for("plugins", "sim", true, NULL);
	ck_assert_msg(rz_plugins_load(&p, &cfg, true, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(rz_plugins_find(p, "sim"));
	return p;
}

static char *causes_of(rz_plugins_t *p, const char *ng_json)
{
	static char buf[2048];
	json_t *ng = json_loads(ng_json, 0, NULL);
	json_t *causes = json_array();
	char *text;

	ck_assert_ptr_nonnull(ng);
	rz_plugins_validate_nodegroup(p, ng, causes);
	text = json_dumps(causes, JSON_COMPACT);
	snprintf(buf, sizeof(buf), "%s", text);
	free(text);
	json_decref(causes);
	json_decref(ng);
	return buf;
}

START_TEST(test_sim_validates_provider_config)
{
	rz_plugins_t *p = load_sim();

	ck_assert_str_eq(causes_of(p, "{\"spec\":{\"providerClass\":\"sim\",\"providerConfig\":"
	                              "{\"addressPrefix\":\"10.1.2\",\"failOn\":1}}}"),
	                 "[]");
	ck_assert_str_eq(
	    causes_of(p, "{\"spec\":{\"providerClass\":\"sim\",\"providerConfig\":"
	                 "{\"addressPrefix\":\"10.1\",\"failOn\":-1,\"colour\":\"red\"}}}"),
	    "[{\"field\":\"spec.providerConfig.colour\",\"reason\":\"FieldValueInvalid\","
	    "\"message\":\"unknown field\"},{\"field\":\"spec.providerConfig.addressPrefix\","
	    "\"reason\":\"FieldValueInvalid\",\"message\":\"must be three octets such as "
	    "10.20.0\"},{\"field\":\"spec.providerConfig.failOn\",\"reason\":"
	    "\"FieldValueInvalid\",\"message\":\"must be the index (0, 1, ...) of the machine "
	    "to fail\"}]");
	ck_assert_str_eq(causes_of(p, "{\"spec\":{\"providerClass\":\"oci:VM.Standard\"}}"),
	                 "[{\"field\":\"spec.providerClass\",\"reason\":\"FieldValueNotSupported\","
	                 "\"message\":\"no loaded infra plugin 'oci' (loaded: sim)\"}]");
	rz_plugins_free(p);
}
END_TEST

START_TEST(test_sim_renders)
{
	rz_plugins_t *p = load_sim();
	json_t *ctx = json_loads(
	    "{\"tenant\":{\"metadata\":{\"name\":\"acme\"},\"spec\":{\"clusterProvider\":\"sim\"}},"
	    "\"nodeGroups\":[{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"role\":\"controlplane\","
	    "\"count\":3,\"providerClass\":\"sim\",\"providerConfig\":{\"addressPrefix\":"
	    "\"10.1.2\",\"failOn\":2}}},{\"metadata\":{\"name\":\"Big_Workers\"},\"spec\":{"
	    "\"role\":"
	    "\"worker\",\"count\":2,\"providerClass\":\"sim\",\"providerConfig\":{}}}],"
	    "\"configPatches\":[],\"imports\":{}}",
	    0, NULL);
	json_t *out = NULL, *cp;
	rz_err_t err = { 0 };

	ck_assert_ptr_nonnull(ctx);
	ck_assert_msg(rz_plugins_render(p, "sim", ctx, &out, &err) == 0, "%s", err.msg);
	cp = json_object_get(json_object_get(json_object_get(out, "resource"), "terraform_data"),
	                     "cp");
	ck_assert_int_eq(json_integer_value(json_object_get(cp, "count")), 3);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(cp, "input"), "address")),
	    "10.1.${floor((count.index + 10) / 256) + 2}.${(count.index + 10) % 256}");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(cp, "input"), "hostname")),
	    "acme-cp-${count.index}");
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_array_get(json_object_get(json_object_get(cp, "lifecycle"), "precondition"),
	                       0),
	        "condition")),
	    "${count.index != 2}");
	/* names are TF identifiers; the group name itself stays as written */
	ck_assert_ptr_nonnull(json_object_get(
	    json_object_get(json_object_get(out, "resource"), "terraform_data"), "big_workers"));
	ck_assert_ptr_nonnull(
	    json_object_get(json_object_get(json_object_get(out, "resource"), "terraform_data"),
	                    "cluster_secrets"));
	ck_assert(json_is_true(json_object_get(
	    json_object_get(json_object_get(out, "output"), "kubeconfig"), "sensitive")));
	ck_assert_ptr_nonnull(
	    strstr(json_string_value(json_object_get(
	               json_object_get(json_object_get(out, "output"), "kubeconfig"), "value")),
	           "server: https://${terraform_data.cp[0].input.address}:6443\n"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(out, "exports"),
	                                                   "controlplane_addresses")),
	                 "${terraform_data.cp[*].input.address}");
	json_decref(out);
	json_decref(ctx);
	/* a contract break is the tenant's error, not the daemon's */
	ck_assert_int_eq(rz_plugins_render(p, "nope", NULL, &out, &err), REZUS_ERENDER);
	ck_assert_str_eq(err.msg, "plugin 'nope' is not loaded");
	rz_plugins_free(p);
}
END_TEST

/* The address of the machines of group name in the sim's render of groups (a JSON array). */
static char *sim_address(rz_plugins_t *p, const char *groups, const char *name)
{
	size_t size = strlen(groups) + 256;
	char *text = malloc(size);
	json_t *ctx, *out = NULL;
	rz_err_t err = { 0 };
	const char *v;
	char *a;

	snprintf(text, size,
	         "{\"tenant\":{\"metadata\":{\"name\":\"acme\"},\"spec\":{\"clusterProvider\":"
	         "\"sim\"}},\"nodeGroups\":%s,\"configPatches\":[],\"imports\":{}}",
	         groups);
	ctx = json_loads(text, 0, NULL);
	free(text);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_msg(rz_plugins_render(p, "sim", ctx, &out, &err) == 0, "%s", err.msg);
	v = json_string_value(json_object_get(
	    json_object_get(
	        json_object_get(json_object_get(json_object_get(out, "resource"), "terraform_data"),
	                        name),
	        "input"),
	    "address"));
	ck_assert_msg(v != NULL, "no address for %s", name);
	a = strdup(v);
	json_decref(ctx);
	json_decref(out);
	return a;
}

#define SIM_NG(name, created)                                                                      \
	"{\"metadata\":{\"name\":\"" name "\",\"creationTimestamp\":\"" created "\"},"             \
	"\"spec\":{\"role\":\"worker\",\"count\":2,\"providerClass\":\"sim\","                     \
	"\"providerConfig\":{}}}"

/* A machine's simulated address is stable for its life: adding a group (whose name sorts
 * first, or hashes to a taken /22) or removing one moves no other group's machines. */
START_TEST(test_sim_addresses_stable)
{
	rz_plugins_t *p = load_sim();
	char *cp = sim_address(p,
	                       "[" SIM_NG("cp", "2026-01-01T00:00:00Z") "," SIM_NG(
	                           "workers", "2026-01-02T00:00:00Z") "]",
	                       "cp");
	char *wk = sim_address(p,
	                       "[" SIM_NG("cp", "2026-01-01T00:00:00Z") "," SIM_NG(
	                           "workers", "2026-01-02T00:00:00Z") "]",
	                       "workers");
	char *a, *b;

	ck_assert_str_ne(cp, wk);
	ck_assert_ptr_nonnull(strstr(cp, "10.99."));
	/* a group named to sort before both, made last */
	a = sim_address(
	    p,
	    "[" SIM_NG("aaa", "2026-01-03T00:00:00Z") "," SIM_NG(
	        "cp", "2026-01-01T00:00:00Z") "," SIM_NG("workers", "2026-01-02T00:00:00Z") "]",
	    "cp");
	b = sim_address(
	    p,
	    "[" SIM_NG("aaa", "2026-01-03T00:00:00Z") "," SIM_NG(
	        "cp", "2026-01-01T00:00:00Z") "," SIM_NG("workers", "2026-01-02T00:00:00Z") "]",
	    "workers");
	ck_assert_str_eq(a, cp);
	ck_assert_str_eq(b, wk);
	free(a);
	free(b);
	/* the first group removed */
	b = sim_address(p, "[" SIM_NG("workers", "2026-01-02T00:00:00Z") "]", "workers");
	ck_assert_str_eq(b, wk);
	free(b);
	/* many groups: still one /22 each */
	{
		char groups[8192] = "[", name[16], *seen[40];
		for (int i = 0; i < 40; i++) {
			size_t n = strlen(groups);
			snprintf(name, sizeof(name), "g%d", i);
			snprintf(
			    groups + n, sizeof(groups) - n,
			    "%s{\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"2026-01-"
			    "01T00:00:%02dZ\"},"
			    "\"spec\":{\"role\":\"worker\",\"count\":1,\"providerClass\":\"sim\","
			    "\"providerConfig\":{}}}",
			    i ? "," : "", name, i);
		}
		strcat(groups, "]");
		for (int i = 0; i < 40; i++) {
			snprintf(name, sizeof(name), "g%d", i);
			seen[i] = sim_address(p, groups, name);
			for (int j = 0; j < i; j++) {
				ck_assert_str_ne(seen[i], seen[j]);
			}
		}
		for (int i = 0; i < 40; i++) {
			free(seen[i]);
		}
	}
	free(cp);
	free(wk);
	rz_plugins_free(p);
}
END_TEST
#undef SIM_NG

START_TEST(test_providers_published)
{
	char *dir = rzt_tmpdir();
	char path[600];
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_store_t *st = NULL;
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	json_t *o = NULL;

	snprintf(path, sizeof(path), "%s/rezus.db", dir);
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_int_eq(rz_store_new(&st, db, bus, 100, &err), 0);
	config_for("tests/fixtures/plugins", "initfail", false, NULL);
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, true, &err), 0);
	ck_assert_int_eq(rz_plugins_publish(p, st, &err), 0);
	ck_assert_int_eq(rz_store_get(st, rz_kind_by_name("Provider"), NULL, "initfail", &o, &err),
	                 0);
	ck_assert(json_is_false(json_object_get(json_object_get(o, "status"), "loaded")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "status"), "error")),
	                 "init failed: fixture refuses to start");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(o, "spec"), "abiVersion")), "1.3");
	json_decref(o);
	rz_plugins_free(p);
	rz_config_free(&cfg);
	/* a plugin no longer listed disappears; a listed one shows what it is */
	config_for("plugins", "sim", true, NULL);
	ck_assert_int_eq(rz_plugins_load(&p, &cfg, true, &err), 0);
	ck_assert_int_eq(rz_plugins_publish(p, st, &err), 0);
	ck_assert_int_eq(rz_store_get(st, rz_kind_by_name("Provider"), NULL, "initfail", &o, &err),
	                 RZ_ENOTFOUND);
	ck_assert_int_eq(rz_store_get(st, rz_kind_by_name("Provider"), NULL, "sim", &o, &err), 0);
	ck_assert(json_is_true(json_object_get(json_object_get(o, "status"), "loaded")));
	ck_assert_str_eq(json_string_value(json_array_get(
	                     json_object_get(json_object_get(o, "spec"), "kinds"), 1)),
	                 "cluster");
	json_decref(o);
	rz_plugins_free(p);
	rz_store_free(st);
	rz_bus_free(bus);
	rz_db_close(db);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

/* ------------------------------------------------------------------ etcd snapshots */

/* What etcdecho answers (a JSON list of commands) for action, checked by the host: NULL
 * when accepted, else the error. */
static const struct {
	const char *action, *reply, *error;
} etcd_cases[] = {
	{ "snapshot",
	  "[{\"id\":\"s\",\"tool\":\"talosctl\",\"args\":[\"etcd\",\"snapshot\",\"/x\"]}]", NULL },
	{ "snapshot", "[{\"id\":\"s\",\"tool\":null,\"simulate\":{\"write\":\"hello\"}}]", NULL },
	{ "snapshot", "[{\"id\":\"s\",\"simulate\":{\"write\":\"\"}}]", NULL },
	{ "snapshot",
	  "[{\"id\":\"a\",\"tool\":null},{\"id\":\"b\",\"simulate\":{\"write\":\"x\"}}]", NULL },
	{ "restore", "[]", NULL },
	{ "restore", "[{\"id\":\"r\",\"tool\":\"talosctl\",\"credentials\":\"talosconfig\"}]",
	  NULL },
	{ "snapshot", "[]",
	  "a snapshot needs a command that writes the file: one with a tool, or one with "
	  "simulate.write" },
	{ "snapshot", "[{\"id\":\"s\",\"tool\":null}]",
	  "a snapshot needs a command that writes the file: one with a tool, or one with "
	  "simulate.write" },
	{ "restore", "[{\"id\":\"r\",\"tool\":null,\"simulate\":{\"write\":\"x\"}}]",
	  "command 0 ('r'): simulate is only for a snapshot" },
	{ "snapshot", "[{\"id\":\"s\",\"tool\":\"talosctl\",\"simulate\":{\"write\":\"x\"}}]",
	  "command 0 ('s'): simulate goes with tool null: nothing else runs" },
	{ "snapshot", "[{\"id\":\"s\",\"simulate\":\"x\"}]",
	  "command 0 ('s'): simulate must be {\"write\": \"<text>\"}" },
	{ "snapshot", "[{\"id\":\"s\",\"simulate\":{\"write\":\"x\",\"mode\":\"0644\"}}]",
	  "command 0 ('s'): simulate must be {\"write\": \"<text>\"}" },
	{ "snapshot", "[{\"id\":\"s\",\"simulate\":{\"write\":5}}]",
	  "command 0 ('s'): simulate must be {\"write\": \"<text>\"}" },
	{ "snapshot",
	  "[{\"id\":\"a\",\"simulate\":{\"write\":\"x\"}},{\"id\":\"b\",\"simulate\":{\"write\":"
	  "\"y\"}}]",
	  "command 1 ('b'): only one command of a snapshot may simulate it" },
	{ "snapshot", "[{\"id\":\"s\",\"tool\":\"sh\",\"args\":[\"-c\",\"cp /x /y\"]}]",
	  "command 0 ('s'): tool must be \"talosctl\", \"kubectl\" or null" },
	{ "snapshot", "[{\"id\":\"s\",\"tool\":\"talosctl\",\"timeout\":86400001}]",
	  "command 0 ('s'): timeout must be milliseconds from 100 to 86400000" },
	{ "snapshot", "[{\"id\":\"s\",\"tool\":\"talosctl\",\"env\":{}}]",
	  "command 0: unknown member 'env'" },
	{ "restore", "[{\"id\":\"r\",\"tool\":\"talosctl\"},{\"id\":\"r\",\"tool\":\"talosctl\"}]",
	  "command 1 ('r'): id is not unique" },
};

/* A context for etcdecho (caller owns): it answers the commands of reply (a JSON list). */
static json_t *etcd_ctx(const char *action, const char *reply)
{
	json_t *list = json_loads(reply, 0, NULL), *texts = json_array(), *c;
	size_t i;

	ck_assert_ptr_nonnull(list);
	json_array_foreach(list, i, c)
	{
		char *text = json_dumps(c, JSON_COMPACT);
		json_array_append_new(texts, json_string(text));
		free(text);
	}
	json_decref(list);
	return json_pack("{s:{s:{s:s}}, s:[], s:s, s:{s:{s:s}}, s:s, s:i, s:o}", "tenant",
	                 "metadata", "name", "t", "machines", "action", action, "machine",
	                 "metadata", "name", "cp-0", "path", "/run/rezus/etcd/t/snapshot.db",
	                 "timeout", 60000, "reply", texts);
}
START_TEST(test_etcd_contract)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	json_t *ctx = etcd_ctx(etcd_cases[_i].action, etcd_cases[_i].reply), *cmds = NULL;
	char want[512];
	int rc;

	config_for("tests/fixtures/plugins", "etcdecho", true, NULL);
	ck_assert_msg(rz_plugins_load(&p, &cfg, true, &err) == 0, "%s", err.msg);
	ck_assert(rz_plugins_has_etcd(p, "etcdecho"));
	rc = rz_plugins_etcd_commands(p, "etcdecho", ctx, &cmds, &err);
	if (etcd_cases[_i].error == NULL) {
		ck_assert_msg(rc == 0, "%s", err.msg);
		ck_assert_uint_eq(json_array_size(cmds),
		                  json_array_size(json_object_get(ctx, "reply")));
	} else {
		snprintf(want, sizeof(want),
		         "plugin 'etcdecho': etcd_commands broke the contract: %s",
		         etcd_cases[_i].error);
		ck_assert_int_eq(rc, REZUS_EINVALID);
		ck_assert_str_eq(err.msg, want);
		ck_assert_ptr_null(cmds);
	}
	json_decref(cmds);
	json_decref(ctx);
	rz_plugins_free(p);
	rz_config_free(&cfg);
}
END_TEST

/* The defaults filled in, the plugin's own error, a context the host got wrong, and the
 * bounds of simulate.write, checked where the limits live (core/plugin/probe.c). */
START_TEST(test_etcd_calls)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	json_t *ctx, *cmds = NULL, *c;
	char *big;

	config_for("tests/fixtures/plugins", "etcdecho", true, NULL);
	ck_assert_msg(rz_plugins_load(&p, &cfg, true, &err) == 0, "%s", err.msg);
	ctx = etcd_ctx("snapshot", "[{\"id\":\"s\",\"tool\":\"talosctl\"}]");
	ck_assert_int_eq(rz_plugins_etcd_commands(p, "etcdecho", ctx, &cmds, &err), 0);
	c = json_array_get(cmds, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "credentials")), "none");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "timeout")), RZ_PROBE_TIMEOUT_DEF);
	ck_assert(json_is_array(json_object_get(c, "args")));
	json_decref(cmds);
	/* the plugin's own refusal keeps its message */
	json_object_set_new(ctx, "fail", json_string("no healthy control plane"));
	ck_assert_int_eq(rz_plugins_etcd_commands(p, "etcdecho", ctx, &cmds, &err), REZUS_EINVALID);
	ck_assert_str_eq(err.msg,
	                 "plugin 'etcdecho': etcd_commands failed: no healthy control plane");
	json_object_del(ctx, "fail");
	/* the caller's half: an action the contract knows, an absolute path */
	json_object_set_new(ctx, "action", json_string("delete"));
	ck_assert_int_eq(rz_plugins_etcd_commands(p, "etcdecho", ctx, &cmds, &err), REZUS_EINVALID);
	ck_assert_str_eq(err.msg, "etcd: ctx.action must be \"snapshot\" or \"restore\"");
	json_object_set_new(ctx, "action", json_string("restore"));
	json_object_set_new(ctx, "path", json_string("snapshot.db"));
	ck_assert_int_eq(rz_plugins_etcd_commands(p, "etcdecho", ctx, &cmds, &err), REZUS_EINVALID);
	ck_assert_str_eq(err.msg, "etcd: ctx.path must be an absolute path");
	ck_assert_ptr_null(cmds);
	ck_assert_int_eq(rz_plugins_etcd_commands(p, "nope", ctx, &cmds, &err), RZ_ENOTFOUND);
	json_decref(ctx);
	rz_plugins_free(p);

	/* simulate.write: 1 MiB is the most, NUL is refused; 16 commands at most */
	big = malloc(RZ_ETCD_SIMULATE_MAX + 2);
	memset(big, 'x', RZ_ETCD_SIMULATE_MAX + 1);
	big[RZ_ETCD_SIMULATE_MAX + 1] = '\0';
	cmds = json_pack("[{s:s, s:{s:s%}}]", "id", "s", "simulate", "write", big,
	                 (size_t)RZ_ETCD_SIMULATE_MAX);
	ck_assert_int_eq(rz_probe_check_etcd_commands(cmds, "snapshot", &err), 0);
	json_decref(cmds);
	cmds = json_pack("[{s:s, s:{s:s}}]", "id", "s", "simulate", "write", big);
	ck_assert_int_eq(rz_probe_check_etcd_commands(cmds, "snapshot", &err), REZUS_EINVALID);
	ck_assert_str_eq(
	    err.msg, "command 0 ('s'): simulate.write must be text of at most 1 MiB, without NUL");
	json_decref(cmds);
	free(big);
	cmds = json_pack("[{s:s, s:{s:s#}}]", "id", "s", "simulate", "write", "a\0b", (size_t)3);
	ck_assert_int_eq(rz_probe_check_etcd_commands(cmds, "snapshot", &err), REZUS_EINVALID);
	json_decref(cmds);
	cmds = json_array();
	for (int i = 0; i <= RZ_ETCD_COMMANDS_MAX; i++) {
		char id[16];
		snprintf(id, sizeof(id), "c%d", i);
		json_array_append_new(cmds, json_pack("{s:s, s:s}", "id", id, "tool", "talosctl"));
	}
	ck_assert_int_eq(rz_probe_check_etcd_commands(cmds, "snapshot", &err), REZUS_EINVALID);
	ck_assert_str_eq(err.msg, "commands must be a list of at most 16");
	json_decref(cmds);
	/* an upgrade command has no simulate member */
	cmds = json_pack("[{s:s, s:{s:s}}]", "id", "u", "simulate", "write", "x");
	ck_assert_int_eq(rz_probe_check_commands(cmds, &err), REZUS_EINVALID);
	ck_assert_str_eq(err.msg, "command 0: unknown member 'simulate'");
	json_decref(cmds);
}
END_TEST

/* sim simulates a snapshot: one command with tool null whose simulate.write is a text that
 * names the tenant, its versions and machines, the same for the same context; a restore
 * runs nothing. */
START_TEST(test_sim_etcd)
{
	rz_plugins_t *p = load_sim();
	rz_err_t err = { 0 };
	json_t *ctx = json_loads(
	    "{\"tenant\":{\"metadata\":{\"name\":\"acme\"},\"spec\":{\"talosVersion\":"
	    "\"1.12.0\",\"kubernetesVersion\":\"1.35.0\"},\"status\":{\"talosVersion\":"
	    "\"1.12.1\"}},\"machines\":[{\"metadata\":{\"name\":\"cp-0\"},\"spec\":{\"role\":"
	    "\"controlplane\",\"address\":\"10.99.0.10\"},\"status\":{\"talosVersion\":"
	    "\"v1.12.1\",\"kubernetesVersion\":\"v1.35.0\"}},{\"metadata\":{\"name\":\"w-0\"},"
	    "\"spec\":{\"role\":\"worker\"}}],\"action\":\"snapshot\",\"machine\":{"
	    "\"metadata\":{\"name\":\"cp-0\"}},\"path\":\"/run/rezus/etcd/acme/snapshot.db\","
	    "\"timeout\":60000}",
	    0, NULL);
	json_t *cmds = NULL, *again = NULL, *c;

	ck_assert_ptr_nonnull(ctx);
	ck_assert(rz_plugins_has_etcd(p, "sim"));
	ck_assert_msg(rz_plugins_etcd_commands(p, "sim", ctx, &cmds, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(json_array_size(cmds), 1);
	c = json_array_get(cmds, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "id")), "sim/etcd-snapshot");
	ck_assert(json_is_null(json_object_get(c, "tool")));
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(c, "simulate"), "write")),
	    "rezus-sim-etcd-snapshot v1\n"
	    "tenant: acme\n"
	    "talosVersion: 1.12.1\n"
	    "kubernetesVersion: 1.35.0\n"
	    "through: cp-0\n"
	    "machines: 2\n"
	    "machine: cp-0 controlplane 10.99.0.10 v1.12.1 v1.35.0\n"
	    "machine: w-0 worker - - -\n");
	ck_assert_msg(rz_plugins_etcd_commands(p, "sim", ctx, &again, &err) == 0, "%s", err.msg);
	ck_assert(json_equal(cmds, again));
	json_decref(again);
	json_decref(cmds);
	json_object_set_new(ctx, "action", json_string("restore"));
	ck_assert_msg(rz_plugins_etcd_commands(p, "sim", ctx, &cmds, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(json_array_size(cmds), 1);
	c = json_array_get(cmds, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "id")), "sim/etcd-restore");
	ck_assert(json_is_null(json_object_get(c, "tool")));
	ck_assert_ptr_null(json_object_get(c, "simulate"));
	json_decref(cmds);
	json_decref(ctx);
	rz_plugins_free(p);
}
END_TEST

/* A plugin dir of symlinks to the built sim and some fixtures, listing them all. */
static char *mixed_dir(const char *const *names, size_t n)
{
	const char *top = getenv("top_builddir");
	char *dir = rzt_tmpdir();
	char from[1024], to[1024];

	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	free(cfg.plugin_dir);
	cfg.plugin_dir = strdup(dir);
	cfg.plugins = calloc(n, sizeof(*cfg.plugins));
	cfg.n_plugins = n;
	for (size_t i = 0; i < n; i++) {
		snprintf(from, sizeof(from), "%s/%s/.libs/%s.so", top ? top : ".",
		         strcmp(names[i], "sim") == 0 ? "plugins" : "tests/fixtures/plugins",
		         names[i]);
		snprintf(to, sizeof(to), "%s/%s.so", dir, names[i]);
		ck_assert_int_eq(symlink(from, to), 0);
		cfg.plugins[i] =
		    (rz_config_plugin_t){ strdup(names[i]), json_object(), true, strdup("test") };
	}
	return dir;
}

START_TEST(test_render_contract_and_merge_conflicts)
{
	const char *names[] = { "randomv1", "randomv2", "renderbig", "renderfail", "sim" };
	char *dir = mixed_dir(names, 5);
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	json_t *ctx, *files = NULL, *out = NULL;

	ck_assert_msg(rz_plugins_load(&p, &cfg, true, &err) == 0, "%s", err.msg);
	ctx = json_loads("{\"tenant\":{\"metadata\":{\"name\":\"t\"},\"spec\":{\"clusterProvider\":"
	                 "\"sim\"}},\"nodeGroups\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{"
	                 "\"role\":\"worker\",\"count\":1,\"providerClass\":\"randomv1\"}},{"
	                 "\"metadata\":{\"name\":\"b\"},\"spec\":{\"role\":\"worker\",\"count\":1,"
	                 "\"providerClass\":\"randomv2:x\"}}],\"configPatches\":[]}",
	                 0, NULL);
	/* two plugins asking for different versions of one provider: an error naming both */
	ck_assert_int_eq(rz_compose(p, ctx, NULL, &files, &err), REZUS_ERENDER);
	ck_assert_str_eq(err.msg, "compose: plugins 'randomv1' and 'randomv2' disagree on the "
	                          "required provider 'random'");
	ck_assert_ptr_null(files);
	/* one of them alone merges into the single terraform block */
	json_array_remove(json_object_get(ctx, "nodeGroups"), 1);
	ck_assert_int_eq(rz_compose(p, ctx, NULL, &files, &err), 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(
	            json_object_get(
	                json_object_get(json_object_get(files, "versions.tf.json"), "terraform"),
	                "required_providers"),
	            "random"),
	        "version")),
	    "~> 3.6");
	json_decref(files);
	/* a plugin's error return and oversized output fail the render, not the process */
	ck_assert_int_eq(rz_plugins_render(p, "renderfail", ctx, &out, &err), REZUS_ERENDER);
	ck_assert_str_eq(err.msg,
	                 "plugin 'renderfail': render failed: fixture cannot render this tenant");
	ck_assert_int_eq(rz_plugins_render(p, "renderbig", ctx, &out, &err), REZUS_ERENDER);
	ck_assert_int_eq(strncmp(err.msg, "plugin 'renderbig': render output is ", 37), 0);
	ck_assert_ptr_null(out);
	json_decref(ctx);
	rz_plugins_free(p);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

/* A tenant of sim (cluster and control plane) and loose (a worker group), with an extra
 * loose group named extra when not NULL. Caller owns. */
static json_t *two_plugin_tenant(const char *extra)
{
	json_t *ctx = json_loads(
	    "{\"tenant\":{\"metadata\":{\"name\":\"t\"},\"spec\":{\"clusterProvider\":\"sim\"}},"
	    "\"nodeGroups\":[{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"role\":\"controlplane\","
	    "\"count\":1,\"providerClass\":\"sim\"}},{\"metadata\":{\"name\":\"l\"},\"spec\":{"
	    "\"role\":\"worker\",\"count\":2,\"providerClass\":\"loose\"}}],\"configPatches\":[]}",
	    0, NULL);

	if (extra != NULL) {
		json_array_append_new(json_object_get(ctx, "nodeGroups"),
		                      json_pack("{s:{s:s}, s:{s:s, s:i, s:s}}", "metadata", "name",
		                                extra, "spec", "role", "worker", "count", 1,
		                                "providerClass", "loose"));
	}
	return ctx;
}

/* The names a plugin projects from the state, joined by ' '. */
static const char *projected_names(rz_plugins_t *p, const char *plugin, const json_t *state,
                                   const json_t *scope)
{
	static char buf[256];
	json_t *objects = NULL, *o;
	rz_err_t err = { 0 };
	size_t i;

	ck_assert_msg(rz_plugins_project(p, plugin, state, scope, &objects, &err) == 0, "%s",
	              err.msg);
	buf[0] = '\0';
	json_array_foreach(objects, i, o)
	{
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "",
		         json_string_value(json_object_get(o, "name")));
	}
	json_decref(objects);
	return buf;
}

START_TEST(test_composition_scopes_projection)
{
	const char *names[] = { "loose", "sim" };
	char *dir = mixed_dir(names, 2);
	char path[1024];
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	json_t *ctx = two_plugin_tenant(NULL), *files = NULL, *want, *state;
	const json_t *scope;

	snprintf(path, sizeof(path), "%s/tests/fixtures/states/tf-data-two-plugins.json",
	         getenv("top_srcdir") ? getenv("top_srcdir") : ".");
	state = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(state);
	ck_assert_msg(rz_plugins_load(&p, &cfg, true, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(rz_plugins_scope(p, "t")); /* nothing composed yet */
	/* no record: every rule sees the whole state, the loose one takes sim's secrets too */
	ck_assert_str_eq(projected_names(p, "loose", state, NULL), "cluster-secrets cp-0 l-0 l-1");
	ck_assert_str_eq(projected_names(p, "sim", state, NULL), "cp-0");

	ck_assert_msg(rz_compose(p, ctx, NULL, &files, &err) == 0, "%s", err.msg);
	json_decref(files);
	want = json_loads("{\"sim\":[\"terraform_data.cp\",\"terraform_data.cluster_secrets\"],"
	                  "\"loose\":[\"terraform_data.l\"]}",
	                  0, NULL);
	scope = rz_plugins_scope(p, "t");
	ck_assert_msg(json_equal(scope, want), "scope: %s", json_dumps(scope, JSON_COMPACT));
	json_decref(want);
	ck_assert_ptr_null(rz_plugins_scope(p, "other"));
	/* with the record each plugin projects what it rendered */
	ck_assert_str_eq(projected_names(p, "loose", state, scope), "l-0 l-1");
	ck_assert_str_eq(projected_names(p, "sim", state, scope), "cp-0");
	/* a plugin the tenant's composition did not render projects nothing */
	want = json_pack("{s:[s]}", "sim", "terraform_data.cp");
	ck_assert_str_eq(projected_names(p, "loose", state, want), "");
	json_decref(want);

	/* two plugins rendering one address: refused, naming both; the record stays */
	json_decref(ctx);
	ctx = two_plugin_tenant("cluster-secrets");
	ck_assert_int_eq(rz_compose(p, ctx, NULL, &files, &err), REZUS_ERENDER);
	ck_assert_str_eq(err.msg, "compose: plugins 'sim' and 'loose' both render "
	                          "terraform_data.cluster_secrets");
	ck_assert_ptr_null(files);
	ck_assert_str_eq(projected_names(p, "loose", state, rz_plugins_scope(p, "t")), "l-0 l-1");

	/* the next composition replaces the record: the loose group gone, nothing of loose's */
	json_array_remove(json_object_get(ctx, "nodeGroups"), 2);
	json_array_remove(json_object_get(ctx, "nodeGroups"), 1);
	ck_assert_msg(rz_compose(p, ctx, NULL, &files, &err) == 0, "%s", err.msg);
	json_decref(files);
	ck_assert_ptr_null(json_object_get(rz_plugins_scope(p, "t"), "loose"));
	ck_assert_str_eq(projected_names(p, "loose", state, rz_plugins_scope(p, "t")), "");
	json_decref(ctx);
	json_decref(state);
	rz_plugins_free(p);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

/* An export's composition: the run's files, its record of whose each resource is left as the
 * run's composition made it; the daemon's http backend replaced by the one asked for. */
START_TEST(test_detached_composition_and_backend)
{
	const char *names[] = { "loose", "sim" };
	char *dir = mixed_dir(names, 2);
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	json_t *ctx = two_plugin_tenant(NULL), *http = json_pack("{s:s}", "address", "http://x/t");
	json_t *files = NULL, *run = NULL, *local = json_pack("{s:s}", "path", "terraform.tfstate");
	json_t *want;
	char *text;

	ck_assert_msg(rz_plugins_load(&p, &cfg, true, &err) == 0, "%s", err.msg);
	ck_assert_msg(rz_compose_detached(p, ctx, &files, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(rz_plugins_scope(p, "t")); /* nothing recorded */
	ck_assert_msg(rz_compose(p, ctx, http, &run, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(rz_plugins_scope(p, "t"));
	/* the same files as the run's but the backend: none at all */
	ck_assert_ptr_null(json_object_get(
	    json_object_get(json_object_get(files, "versions.tf.json"), "terraform"), "backend"));
	ck_assert_int_eq(rz_compose_set_backend(run, "local", local, &err), 0);
	ck_assert_int_eq(rz_compose_set_backend(files, "local", local, &err), 0);
	ck_assert(json_equal(files, run));
	want = json_pack("{s:{s:s}}", "local", "path", "terraform.tfstate");
	ck_assert(
	    json_equal(json_object_get(
	                   json_object_get(json_object_get(files, "versions.tf.json"), "terraform"),
	                   "backend"),
	               want));
	json_decref(want);
	/* the http block is gone whole: no address, no username left behind */
	text = json_dumps(json_object_get(run, "versions.tf.json"), 0);
	ck_assert_msg(strstr(text, "http") == NULL, "%s", text);
	free(text);
	/* a named backend without settings: an empty block, tofu init -backend-config fills it */
	ck_assert_int_eq(rz_compose_set_backend(files, "s3", NULL, &err), 0);
	want = json_pack("{s:{}}", "s3");
	ck_assert(
	    json_equal(json_object_get(
	                   json_object_get(json_object_get(files, "versions.tf.json"), "terraform"),
	                   "backend"),
	               want));
	json_decref(want);
	/* no terraform block, no type: refused */
	ck_assert_int_eq(rz_compose_set_backend(files, "", NULL, &err), REZUS_EINVALID);
	json_object_del(files, "versions.tf.json");
	ck_assert_int_eq(rz_compose_set_backend(files, "local", local, &err), REZUS_EINVALID);
	json_decref(files);
	json_decref(run);
	json_decref(http);
	json_decref(local);
	json_decref(ctx);
	rz_plugins_free(p);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plugins");
	TCase *tc = tcase_create("plugins");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_refusals_in_order);
	tcase_add_test(tc, test_abi_1_0_plugin_loads);
	tcase_add_test(tc, test_abi_1_2_plugin_loads);
	tcase_add_test(tc, test_required_plugin_stops_start);
	tcase_add_test(tc, test_check_config_does_not_start);
	tcase_add_test(tc, test_sim_validates_provider_config);
	tcase_add_test(tc, test_sim_renders);
	tcase_add_test(tc, test_sim_addresses_stable);
	tcase_add_test(tc, test_providers_published);
	tcase_add_test(tc, test_render_contract_and_merge_conflicts);
	tcase_add_test(tc, test_composition_scopes_projection);
	tcase_add_test(tc, test_detached_composition_and_backend);
	tcase_add_loop_test(tc, test_etcd_contract, 0,
	                    (int)(sizeof(etcd_cases) / sizeof(etcd_cases[0])));
	tcase_add_test(tc, test_etcd_calls);
	tcase_add_test(tc, test_sim_etcd);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
