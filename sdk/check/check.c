/*
 * sdk/check/check.c - rezus-plugin-check: the conformance checker for plugin vendors.
 *
 *   rezus-plugin-check [--render-dir DIR] [--project STATE] FILE.so
 *
 * Loads FILE.so through the daemon's own loader (every refusal check), prints the
 * descriptor, renders a built-in fixture tenant, checks the TF JSON (rezus-plugin(7)) and
 * the projection rules; and, for what the plugin offers, its observation probes, upgrade
 * commands and etcd snapshot commands. Exit 0 only when everything passes; 1 when a check
 * fails; 2 for a bad command line. WARN lines say what a vendor should fix that does not
 * fail the check: a projection rule that would take other plugins' resources where rules
 * run unscoped (the daemon scopes them to the plugin's own; --project here does not).
 */
#include <config.h>

#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/plugin/compose.h"
#include "core/base/config.h"
#include "core/base/log.h"
#include "core/plugin/plugins.h"
#include "sdk/check/tfcheck.h"

#define HOSTILE   "${hostile}"
#define ETCD_PATH "/var/lib/rezuscloud/etcd/check/snapshot.db" /* never written: nothing runs */

static int failures, warnings;

static void result(bool ok, const char *what, const char *detail)
{
	printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what, detail ? ": " : "", detail ? detail : "");
	failures += !ok;
}

/* Something a vendor should fix that does not make the plugin wrong here. */
static void warn(const char *what, const char *detail)
{
	printf("WARN %s: %s\n", what, detail);
	warnings++;
}

/* The fixture tenant: one control plane and one worker group of the plugin (when it is an
 * infra plugin), the plugin as cluster provider (when it is one), a hostile string where a
 * plugin must escape what users write. */
static json_t *fixture(const char *plugin, const rezus_plugin_t *d)
{
	const char *cluster = (d->kinds & REZUS_PLUGIN_CLUSTER) ? plugin : "none";
	json_t *ctx = json_pack(
	    "{s:{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s, s:s, s:[s], s:[s]}}, s:[], s:[{s:{s:s}, "
	    "s:{s:s, s:s, s:s, s:[], s:b}}]}",
	    "tenant", "apiVersion", "rezuscloud.io/v1", "kind", "Tenant", "metadata", "name",
	    "check", "spec", "clusterProvider", cluster, "kubernetesVersion", "1.35.0",
	    "talosVersion", "1.12.0", "controlPlaneEndpoint", "https://" HOSTILE ":6443",
	    "podSubnets", "10.244.0.0/16", "serviceSubnets", "10.96.0.0/12", "nodeGroups",
	    "configPatches", "metadata", "name", "p1", "spec", "patch",
	    "machine:\n  install:\n    extraKernelArgs: [\"" HOSTILE "\"]\n", "format", "strategic",
	    "targetRole", "all", "nodeGroups", "enabled", 1);
	const char *roles[] = { "controlplane", "worker" };
	const char *names[] = { "cp", "workers" };

	for (int i = 0; (d->kinds & REZUS_PLUGIN_INFRA) && i < 2; i++) {
		json_array_append_new(
		    json_object_get(ctx, "nodeGroups"),
		    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s, s:{}, s:{s:s}}}",
		              "apiVersion", "rezuscloud.io/v1", "kind", "NodeGroup", "metadata",
		              "name", names[i], "tenant", "check", "spec", "role", roles[i],
		              "count", i + 1, "providerClass", plugin, "providerConfig", "labels",
		              "example.com/tier", names[i]));
	}
	return ctx;
}

static void describe(const rz_plugin_t *pl)
{
	const rezus_plugin_t *d = &pl->desc;

	printf("plugin:      %s %s (ABI %s)\n", d->name, d->version, pl->abi);
	printf("file:        %s\n", pl->file);
	printf("description: %s\n", d->description ? d->description : "");
	printf("kinds:      %s%s\n", (d->kinds & REZUS_PLUGIN_INFRA) ? " infra" : "",
	       (d->kinds & REZUS_PLUGIN_CLUSTER) ? " cluster" : "");
	printf("entries:     init fini render projection_rules%s%s%s%s%s%s\n",
	       d->check_config ? " check_config" : "",
	       d->validate_nodegroup ? " validate_nodegroup" : "",
	       d->env_allowlist ? " env_allowlist" : "",
	       d->observe_probes ? " observe_probes observe_parse" : "",
	       d->upgrade_commands ? " upgrade_commands" : "",
	       d->etcd_commands ? " etcd_commands" : "");
	if (d->kinds & REZUS_PLUGIN_CLUSTER) {
		printf("etcd:        %s\n", d->etcd_commands ? "snapshots and restores (ABI 1.3)"
		                                             : "no snapshots (no etcd_commands)");
	}
}

/* The fixture tenant's Machines, as the host projects them after an apply. */
static json_t *fixture_machines(void)
{
	return json_pack("[{s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}},"
	                 " {s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}}]",
	                 "metadata", "name", "cp-0", "tenant", "check", "creationTimestamp",
	                 "2026-01-01T00:00:00Z", "spec", "nodeGroup", "cp", "role", "controlplane",
	                 "address", "10.0.0.10", "hostname", "check-cp-0", "tfAddress", "x.cp[0]",
	                 "metadata", "name", "workers-0", "tenant", "check", "creationTimestamp",
	                 "2026-01-01T00:00:00Z", "spec", "nodeGroup", "workers", "role", "worker",
	                 "address", "10.0.0.11", "hostname", "check-workers-0", "tfAddress",
	                 "x.workers[0]");
}

/* Results every observe_parse must take in its stride: 0 back, and facts that keep the
 * contract. */
static json_t *hostile_results(void)
{
	json_t *r = json_array();
	char *big = malloc(1u << 20);

	json_array_append_new(r, json_pack("{s:i, s:b, s:s, s:s}", "exitStatus", 0, "timedOut", 0,
	                                   "stdout", "", "stderr", ""));
	json_array_append_new(r, json_pack("{s:i, s:b, s:s, s:s}", "exitStatus", 1, "timedOut", 0,
	                                   "stdout", "", "stderr", "error: connection refused\n"));
	json_array_append_new(r, json_pack("{s:i, s:b, s:s, s:s}", "exitStatus", 130, "timedOut", 1,
	                                   "stdout", "{\"node\": \"10.0.0.10\",", "stderr", ""));
	json_array_append_new(r, json_pack("{s:i, s:b, s:s, s:s}", "exitStatus", 0, "timedOut", 0,
	                                   "stdout", "{not json\n\x01\x02]]]", "stderr", ""));
	json_array_append_new(r,
	                      json_pack("{s:i, s:b, s:s, s:s}", "exitStatus", 0, "timedOut", 0,
	                                "stdout", "[1, \"two\", {\"spec\": null}]", "stderr", ""));
	if (big != NULL) {
		memset(big, '{', (1u << 20) - 1);
		big[(1u << 20) - 1] = '\0';
		json_array_append_new(r, json_pack("{s:i, s:b, s:s, s:s}", "exitStatus", 0,
		                                   "timedOut", 0, "stdout", big, "stderr", ""));
		free(big);
	}
	return r;
}

/* Observation (ABI 1.1): the probes keep the contract, and parse survives bad output. */
static void observe(rz_plugins_t *p, const char *name, json_t *ctx)
{
	json_t *octx, *probes = NULL, *results, *probe, *res;
	rz_err_t err = { 0 };
	char detail[600];
	size_t i, j, n = 0;
	bool ok = true;

	octx = json_pack("{s:O, s:o, s:O, s:I}", "tenant", json_object_get(ctx, "tenant"),
	                 "machines", fixture_machines(), "nodeGroups",
	                 json_object_get(ctx, "nodeGroups"), "now", (json_int_t)1767225600000);
	if (rz_plugins_observe_probes(p, name, octx, &probes, &err) != 0) {
		result(false, "observe_probes keeps the contract", err.msg);
		json_decref(octx);
		return;
	}
	snprintf(detail, sizeof(detail), "%zu probes", json_array_size(probes));
	result(true, "observe_probes keeps the contract", detail);
	results = hostile_results();
	json_array_foreach(probes, i, probe)
	{
		json_array_foreach(results, j, res)
		{
			json_t *facts = NULL;
			json_object_set_new(res, "now", json_integer(1767225600000));
			if (ok &&
			    rz_plugins_observe_parse(p, name, probe, res, &facts, &err) != 0) {
				snprintf(detail, sizeof(detail), "probe '%s', result %zu: %s",
				         json_string_value(json_object_get(probe, "id")), j,
				         err.msg);
				ok = false;
			}
			n += ok;
			json_decref(facts);
		}
	}
	snprintf(detail, sizeof(detail),
	         "%zu results: success, failure, timeout, garbage, "
	         "wrong shape, 1 MiB",
	         n);
	result(ok, "observe_parse takes failed, timed-out and garbage output", detail);
	json_decref(results);
	json_decref(probes);
	json_decref(octx);
}

/* Upgrades (ABI 1.2): every step's commands keep the contract, for each component and
 * action, and a machine without an address is an error rather than a crash. */
static void upgrades(rz_plugins_t *p, const char *name, json_t *ctx)
{
	static const char *const steps[][2] = {
		{ "talos", "upgrade" },
		{ "talos", "rollback" },
		{ "kubernetes", "upgrade" },
	};
	json_t *machines = fixture_machines(), *noaddr;
	char detail[700] = "";
	size_t n = 0;
	bool ok = true;

	for (size_t i = 0; ok && i < sizeof(steps) / sizeof(steps[0]); i++) {
		json_t *uctx = json_pack(
		    "{s:O, s:O, s:O, s:s, s:s, s:s, s:s, s:O, s:I}", "tenant",
		    json_object_get(ctx, "tenant"), "machines", machines, "nodeGroups",
		    json_object_get(ctx, "nodeGroups"), "action", steps[i][1], "component",
		    steps[i][0], "fromVersion", steps[i][0][0] == 't' ? "1.11.5" : "1.34.1",
		    "targetVersion", steps[i][0][0] == 't' ? "1.12.0" : "1.35.0", "machine",
		    json_array_get(machines, 0), "timeout", (json_int_t)1200000);
		json_t *cmds = NULL;
		rz_err_t err = { 0 };
		if (rz_plugins_upgrade_commands(p, name, uctx, &cmds, &err) != 0) {
			snprintf(detail, sizeof(detail), "%s %s: %s", steps[i][0], steps[i][1],
			         err.msg);
			ok = false;
		}
		n += json_array_size(cmds);
		json_decref(cmds);
		json_decref(uctx);
	}
	if (ok) {
		snprintf(detail, sizeof(detail),
		         "%zu commands for talos upgrade, rollback and "
		         "kubernetes upgrade",
		         n);
	}
	result(ok, "upgrade_commands keeps the contract", detail);
	noaddr =
	    json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "bare", "spec", "role", "worker");
	{
		json_t *uctx =
		    json_pack("{s:O, s:O, s:O, s:s, s:s, s:s, s:s, s:o, s:I}", "tenant",
		              json_object_get(ctx, "tenant"), "machines", machines, "nodeGroups",
		              json_object_get(ctx, "nodeGroups"), "action", "upgrade", "component",
		              "talos", "fromVersion", "1.11.5", "targetVersion", "1.12.0",
		              "machine", noaddr, "timeout", (json_int_t)1200000);
		json_t *cmds = NULL;
		rz_err_t err = { 0 };
		int rc = rz_plugins_upgrade_commands(p, name, uctx, &cmds, &err);
		/* refusing with an error, or commands that keep the contract, are both answers */
		result(rc == 0 || strstr(err.msg, "broke the contract") == NULL,
		       "upgrade_commands takes a machine without an address",
		       rc != 0 ? err.msg : "commands that keep the contract");
		json_decref(cmds);
		json_decref(uctx);
	}
	json_decref(machines);
}

/* One etcd_commands call for the fixture tenant: 0 with *cmds, or the error in detail. */
static int etcd_call(rz_plugins_t *p, const char *name, json_t *ctx, json_t *machines,
                     const char *action, json_t *machine, json_t **cmds, char *detail, size_t size)
{
	json_t *ectx =
	    json_pack("{s:O, s:O, s:s, s:O, s:s, s:I}", "tenant", json_object_get(ctx, "tenant"),
	              "machines", machines, "action", action, "machine", machine, "path", ETCD_PATH,
	              "timeout", (json_int_t)600000);
	rz_err_t err = { 0 };
	int rc = rz_plugins_etcd_commands(p, name, ectx, cmds, &err);

	if (rc != 0) {
		snprintf(detail, size, "%s: %s", action, err.msg);
	}
	json_decref(ectx);
	return rc;
}

/* Etcd snapshots (ABI 1.3): the commands of a snapshot and of a restore keep the contract
 * (a snapshot's simulate.write too), and a machine without an address is an error rather
 * than a crash. */
static void etcd(rz_plugins_t *p, const char *name, json_t *ctx)
{
	static const char *const actions[] = { "snapshot", "restore" };
	json_t *machines = fixture_machines(), *cmds = NULL, *c, *noaddr;
	char detail[700] = "", part[2][160];
	bool ok = true;
	size_t j;

	for (size_t i = 0; ok && i < 2; i++) {
		size_t simulated = 0;
		ok = etcd_call(p, name, ctx, machines, actions[i], json_array_get(machines, 0),
		               &cmds, detail, sizeof(detail)) == 0;
		json_array_foreach(cmds, j, c)
		{
			const json_t *w = json_object_get(json_object_get(c, "simulate"), "write");
			simulated += w ? json_string_length(w) : 0;
		}
		snprintf(part[i], sizeof(part[i]), "%s %zu command%s", actions[i],
		         json_array_size(cmds), json_array_size(cmds) == 1 ? "" : "s");
		if (simulated > 0) {
			snprintf(part[i] + strlen(part[i]), sizeof(part[i]) - strlen(part[i]),
			         " (simulated: %zu bytes written)", simulated);
		}
		json_decref(cmds);
		cmds = NULL;
	}
	if (ok) {
		snprintf(detail, sizeof(detail), "%s, %s", part[0], part[1]);
	}
	result(ok, "etcd_commands keeps the contract", detail);
	noaddr = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "bare", "spec", "role",
	                   "controlplane");
	{
		int rc = etcd_call(p, name, ctx, machines, "snapshot", noaddr, &cmds, detail,
		                   sizeof(detail));
		/* refusing with an error, or commands that keep the contract, are both answers */
		result(rc == 0 || strstr(detail, "broke the contract") == NULL,
		       "etcd_commands takes a machine without an address",
		       rc != 0 ? detail : "commands that keep the contract");
	}
	json_decref(cmds);
	json_decref(noaddr);
	json_decref(machines);
}

/* Render the fixture: composed when the plugin is a cluster plugin, else its own file.
 * *providers (caller owns) gets the required_providers it declared. */
static json_t *render(rz_plugins_t *p, const char *name, const rezus_plugin_t *d, json_t *ctx,
                      json_t **providers)
{
	json_t *files = NULL, *out = NULL;
	rz_err_t err = { 0 };
	char file[300];

	if (d->kinds & REZUS_PLUGIN_CLUSTER) {
		if (rz_compose(p, ctx, NULL, &files, &err) != 0) {
			result(false, "render the fixture tenant", err.msg);
			return NULL;
		}
		result(true, "render the fixture tenant", NULL);
		*providers = json_incref(json_object_get(
		    json_object_get(json_object_get(files, "versions.tf.json"), "terraform"),
		    "required_providers"));
		return files;
	}
	json_object_set_new(ctx, "imports", json_object());
	if (rz_plugins_render(p, name, ctx, &out, &err) != 0) {
		result(false, "render the fixture tenant", err.msg);
		return NULL;
	}
	result(true, "render the fixture tenant", NULL);
	*providers = json_incref(json_object_get(out, "required_providers"));
	snprintf(file, sizeof(file), "%s.tf.json", name);
	json_object_del(out, "exports");
	json_object_del(out, "required_providers");
	json_object_del(out, "variables");
	json_object_del(out, "tfvars");
	files = json_pack("{s:o}", file, out);
	return files;
}

static void check_tf(json_t *files)
{
	static struct tfcheck c;
	char summary[64];

	c.hostile = HOSTILE;
	tfcheck_run(&c, files);
	for (int i = 0; i < c.n && i < TFCHECK_MAX; i++) {
		printf("  %s\n", c.problems[i]);
	}
	snprintf(summary, sizeof(summary), "%d problem%s", c.n, c.n == 1 ? "" : "s");
	result(c.n == 0, "TF JSON (rezus-plugin(7), RENDERING)", c.n ? summary : NULL);
}

/* Rules that would take other plugins' resources where rules run unscoped: a warning
 * each, not a failure; the daemon runs a plugin's rules on the resources it rendered. */
static void lint_rules(rz_plugins_t *p, const char *name, const json_t *providers)
{
	json_t *found = json_array(), *w;
	size_t i;

	rz_projection_lint(rz_plugins_rules(p, name), providers, found);
	json_array_foreach(found, i, w)
	{
		warn("projection rule could match other plugins' resources", json_string_value(w));
	}
	json_decref(found);
}

static void project(rz_plugins_t *p, const char *name, const char *state_path)
{
	json_error_t jerr;
	json_t *state = json_load_file(state_path, 0, &jerr), *objects = NULL;
	rz_err_t err = { 0 };
	char *text;

	if (state == NULL) {
		result(false, "read the state", jerr.text);
		return;
	}
	if (rz_plugins_project(p, name, state, NULL, &objects, &err) != 0) {
		result(false, "project the state", err.msg);
	} else {
		text = json_dumps(objects, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("%s\n", text ? text : "[]");
		free(text);
		result(true, "project the state", NULL);
	}
	json_decref(objects);
	json_decref(state);
}

static int usage(FILE *out, int code)
{
	fprintf(out,
	        "Usage: rezus-plugin-check [--render-dir DIR] [--project STATE] FILE.so\n"
	        "Load a RezusCloud plugin the way rezuscloud does, render a fixture tenant,\n"
	        "check the TF JSON and the projection rules, and, for a plugin that observes,\n"
	        "its probes and how it reads failed, timed-out and garbage output; for a\n"
	        "plugin that upgrades or takes etcd snapshots, the commands it gives.\n"
	        "Exit 0 when all checks pass; warnings (WARN) do not fail it.\n"
	        "See rezus-plugin-check(1) and rezus-plugin(7).\n"
	        "  --render-dir DIR  also write the rendered files into DIR\n"
	        "  --project STATE   run the projection rules over every resource of a state\n"
	        "                    file (unscoped) and print the objects\n"
	        "  -h, --help        this help\n");
	return code;
}

/* Load FILE.so as the daemon would: dir and name from the path. */
static int load(const char *file, rz_config_t *cfg, rz_plugins_t **p, char *name, size_t size)
{
	char a[PATH_MAX], b[PATH_MAX];
	rz_err_t err = { 0 };
	char *base, *dot;

	snprintf(a, sizeof(a), "%s", file);
	snprintf(b, sizeof(b), "%s", file);
	base = basename(a);
	dot = strstr(base, ".so");
	if (dot == NULL || dot[3] != '\0') {
		fprintf(stderr, "rezus-plugin-check: '%s' is not a .so file\n", file);
		return 2;
	}
	*dot = '\0';
	snprintf(name, size, "%s", base);
	if (rz_config_defaults(cfg) != 0 ||
	    (cfg->plugins = calloc(1, sizeof(*cfg->plugins))) == NULL) {
		return 1;
	}
	free(cfg->plugin_dir);
	cfg->plugin_dir = strdup(dirname(b));
	cfg->n_plugins = 1;
	cfg->plugins[0] =
	    (rz_config_plugin_t){ strdup(name), json_object(), true, strdup("check") };
	rz_plugins_load(p, cfg, true, &err);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "render-dir", required_argument, NULL, 'r' },
		                              { "project", required_argument, NULL, 'p' },
		                              { "help", no_argument, NULL, 'h' },
		                              { NULL, 0, NULL, 0 } };
	const char *dir = NULL, *state = NULL;
	rz_config_t cfg = { 0 };
	rz_plugins_t *p = NULL;
	const rz_plugin_t *pl;
	char name[256];
	json_t *files = NULL, *ctx, *providers = NULL;
	rz_err_t err = { 0 };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'r') {
			dir = optarg;
		} else if (opt == 'p') {
			state = optarg;
		} else {
			return usage(opt == 'h' ? stdout : stderr, opt == 'h' ? 0 : 2);
		}
	}
	if (optind + 1 != argc) {
		return usage(stderr, 2);
	}
	rz_log_set_level(RZ_LOG_WARNING);
	rc = load(argv[optind], &cfg, &p, name, sizeof(name));
	pl = rz_plugins_at(p, 0);
	if (rc != 0 || pl == NULL || !pl->loaded) {
		result(false, "load", pl ? pl->error : "cannot load");
		rz_plugins_free(p);
		rz_config_free(&cfg);
		return rc ? rc : 1;
	}
	describe(pl);
	result(true, "load (magic, ABI, layout, name, required entries, init)", NULL);
	result(true, "projection rules parse", NULL);
	ctx = fixture(name, &pl->desc);
	files = render(p, name, &pl->desc, ctx, &providers);
	if (files != NULL) {
		lint_rules(p, name, providers);
		check_tf(files);
		if (dir != NULL) {
			result(rz_compose_write(files, dir, &err) == 0, "write the files",
			       err.msg[0] ? err.msg : dir);
		}
	}
	if (pl->desc.observe_probes != NULL) {
		observe(p, name, ctx);
	}
	if (pl->desc.upgrade_commands != NULL) {
		upgrades(p, name, ctx);
	}
	if (pl->desc.etcd_commands != NULL) {
		etcd(p, name, ctx);
	}
	if (state != NULL) {
		project(p, name, state);
	}
	json_decref(files);
	json_decref(providers);
	json_decref(ctx);
	rz_plugins_free(p);
	rz_config_free(&cfg);
	printf("%s: %d check%s failed, %d warning%s\n", failures ? "FAILED" : "OK", failures,
	       failures == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
	return failures ? 1 : 0;
}
