/*
 * tests/unit/check_talos_observe.c - the talos plugin observes its clusters (ABI 1.1): for a
 * tenant of three Machines it asks for exactly the probes in
 * tests/plugins/observe/talos/probes.json, and it reads the recorded talosctl and kubectl
 * outputs beside it into facts on the right Machines and the tenant. Failed, timed-out,
 * empty, garbage, truncated, oversized and wrongly shaped output are "error" facts, and parse
 * still returns 0. The plugin is loaded through the core loader, called through
 * rz_plugins_observe_probes / rz_plugins_observe_parse.
 */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/config.h"
#include "core/base/log.h"
#include "core/plugin/plugins.h"
#include "tests/unit/testutil.h"

static rz_config_t cfg;
static rz_plugins_t *plugins;
static json_t *ctx, *probes;

static const char *srcdir(void)
{
	const char *s = getenv("top_srcdir");
	return s ? s : ".";
}

/* tests/plugins/observe/<rel> as text (caller frees). */
static char *text(const char *rel)
{
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/tests/plugins/observe/%s", srcdir(), rel);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static json_t *json_file(const char *rel)
{
	char *t = text(rel);
	json_error_t je;
	json_t *v = json_loads(t, 0, &je);

	ck_assert_msg(v != NULL, "%s:%d: %s", rel, je.line, je.text);
	free(t);
	return v;
}

static json_t *js(const char *s)
{
	json_error_t je;
	json_t *v = json_loads(s, 0, &je);

	ck_assert_msg(v != NULL, "bad test JSON: %s: %s", je.text, s);
	return v;
}

static void setup(void)
{
	static const char *const names[] = { "talos", "metal" };
	const char *top = getenv("top_builddir");
	char path[1024];
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_CRIT);
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	snprintf(path, sizeof(path), "%s/plugins/.libs", top ? top : ".");
	free(cfg.plugin_dir);
	cfg.plugin_dir = strdup(path);
	cfg.plugins = calloc(2, sizeof(*cfg.plugins));
	cfg.n_plugins = 2;
	for (size_t i = 0; i < 2; i++) {
		cfg.plugins[i].name = strdup(names[i]);
		cfg.plugins[i].config = json_object();
		cfg.plugins[i].required = true;
		cfg.plugins[i].source = strdup("test");
	}
	ck_assert_msg(rz_plugins_load(&plugins, &cfg, true, &err) == 0, "load: %s", err.msg);
	ctx = json_file("talos/context.json");
	ck_assert_msg(rz_plugins_observe_probes(plugins, "talos", ctx, &probes, &err) == 0,
	              "observe_probes: %s", err.msg);
}

static void teardown(void)
{
	json_decref(probes);
	json_decref(ctx);
	rz_plugins_free(plugins);
	plugins = NULL;
	rz_config_free(&cfg);
}

/* The probe with this id from the context's probes. Borrowed. */
static json_t *probe(const char *id)
{
	size_t i;
	json_t *p;

	json_array_foreach(probes, i, p)
	{
		if (strcmp(json_string_value(json_object_get(p, "id")), id) == 0) {
			return p;
		}
	}
	ck_abort_msg("no probe '%s'", id);
	return NULL;
}

static json_t *result(int exit_status, bool timed_out, const char *out, const char *err)
{
	return json_pack("{s:i, s:b, s:s, s:s, s:I}", "exitStatus", exit_status, "timedOut",
	                 timed_out, "stdout", out, "stderr", err, "now", (json_int_t)1796029260000);
}

/* Parse result r (taken) of probe p; the facts (caller owns). Parse must return 0. */
static json_t *parse(const json_t *p, json_t *r)
{
	rz_err_t err = { 0 };
	json_t *facts = NULL;
	int rc = rz_plugins_observe_parse(plugins, "talos", p, r, &facts, &err);

	ck_assert_msg(rc == 0, "observe_parse returned %d: %s", rc, err.msg);
	ck_assert_ptr_nonnull(facts);
	json_decref(r);
	return facts;
}

/* Parse the recorded file rel (exit 0) as the output of probe id. */
static json_t *parse_file(const char *id, const char *rel)
{
	char *out = text(rel);
	json_t *facts = parse(probe(id), result(0, false, out, ""));

	free(out);
	return facts;
}

/* facts (taken) must equal want exactly. */
static void expect(json_t *facts, const char *want)
{
	json_t *w = js(want);
	char *have = json_dumps(facts, JSON_SORT_KEYS);

	ck_assert_msg(json_equal(facts, w), "facts %s, want %s", have, want);
	free(have);
	json_decref(w);
	json_decref(facts);
}

/* facts (taken) must hold the error of Machine name, starting with prefix, stage Unknown. */
static void expect_machine_error(json_t *facts, const char *name, const char *prefix)
{
	json_t *m = json_object_get(json_object_get(facts, "machines"), name);
	const char *e = json_string_value(json_object_get(m, "error"));
	char *have = json_dumps(facts, JSON_SORT_KEYS);

	ck_assert_msg(e != NULL && strncmp(e, prefix, strlen(prefix)) == 0,
	              "facts %s, want error of %s starting '%s'", have, name, prefix);
	ck_assert_str_eq(json_string_value(json_object_get(m, "stage")), "Unknown");
	ck_assert(json_is_false(json_object_get(m, "ready")));
	ck_assert_uint_eq(json_object_size(json_object_get(facts, "machines")), 1);
	ck_assert_ptr_null(json_object_get(facts, "tenant"));
	free(have);
	json_decref(facts);
}

/* facts (taken) must be a tenant error starting with prefix and an unhealthy control plane. */
static void expect_tenant_error(json_t *facts, const char *prefix)
{
	json_t *t = json_object_get(facts, "tenant");
	const char *e = json_string_value(json_object_get(t, "error"));
	char *have = json_dumps(facts, JSON_SORT_KEYS);

	ck_assert_msg(e != NULL && strncmp(e, prefix, strlen(prefix)) == 0,
	              "facts %s, want a tenant error starting '%s'", have, prefix);
	ck_assert(json_is_false(json_object_get(t, "controlPlaneHealthy")));
	ck_assert_ptr_null(json_object_get(facts, "machines"));
	free(have);
	json_decref(facts);
}

/* ------------------------------------------------------------------ probes */

START_TEST(test_probes)
{
	json_t *want = json_file("talos/probes.json");
	char *have = json_dumps(probes, JSON_INDENT(1) | JSON_SORT_KEYS);

	ck_assert_msg(json_equal(probes, want), "probes differ from probes.json:\n%s", have);
	free(have);
	json_decref(want);
}
END_TEST

/* A Machine without an address gets no probe of its own but is still matched with the
 * nodes; one whose address talosctl would read as a flag is reported, not run; without a
 * control plane that has an address there is no etcd probe. */
START_TEST(test_probes_partial)
{
	json_t *c = json_deep_copy(ctx), *ps = NULL, *machines = json_object_get(c, "machines");
	json_t *bad, *facts;
	rz_err_t err = { 0 };

	json_object_del(json_object_get(json_array_get(machines, 0), "spec"), "address");
	json_object_set_new(json_object_get(json_array_get(machines, 0), "spec"), "addresses",
	                    json_array());
	json_object_set_new(json_object_get(json_array_get(machines, 2), "spec"), "address",
	                    json_string("--insecure"));
	ck_assert_int_eq(rz_plugins_observe_probes(plugins, "talos", c, &ps, &err), 0);
	ck_assert_uint_eq(json_array_size(ps), 4);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ps, 0), "id")),
	                 "machinestatus/w-0");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ps, 1), "id")),
	                 "version/w-0");
	bad = json_array_get(ps, 2);
	ck_assert_str_eq(json_string_value(json_object_get(bad, "id")), "address/w-1");
	ck_assert(json_is_null(json_object_get(bad, "tool")));
	ck_assert_uint_eq(json_array_size(json_object_get(bad, "args")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ps, 3), "id")), "nodes");
	ck_assert_uint_eq(json_array_size(json_object_get(
	                      json_object_get(json_array_get(ps, 3), "data"), "machines")),
	                  3);
	/* the host calls parse at once with exit 0 and no output */
	facts = parse(bad, result(0, false, "", ""));
	expect_machine_error(facts, "w-1", "talos: address '--insecure' is not one talosctl");
	json_decref(ps);

	json_array_clear(machines);
	ck_assert_int_eq(rz_plugins_observe_probes(plugins, "talos", c, &ps, &err), 0);
	ck_assert_uint_eq(json_array_size(ps), 0);
	json_decref(ps);
	json_decref(c);
}
END_TEST

/* ------------------------------------------------------------------ machinestatus */

START_TEST(test_machinestatus)
{
	expect(parse_file("machinestatus/cp-0", "talos/machinestatus-running.json"),
	       "{\"machines\": {\"cp-0\": {\"stage\": \"Running\", \"ready\": true}}}");
	expect(parse_file("machinestatus/w-0", "talos/machinestatus-booting.json"),
	       "{\"machines\": {\"w-0\": {\"stage\": \"Booting\", \"ready\": false}}}");
}
END_TEST

/* Every Talos stage maps to the contract's name (and the numeric form older output has). */
START_TEST(test_stages)
{
	static const char *const map[][2] = {
		{ "unknown", "Unknown" },
		{ "booting", "Booting" },
		{ "installing", "Installing" },
		{ "maintenance", "Maintenance" },
		{ "running", "Running" },
		{ "rebooting", "Rebooting" },
		{ "shutting down", "ShuttingDown" },
		{ "resetting", "Resetting" },
		{ "upgrading", "Upgrading" },
	};
	json_t *base = json_file("talos/machinestatus-running.json");

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		for (int numeric = 0; numeric < 2; numeric++) {
			json_t *o = json_deep_copy(base), *f, *m;
			char *out;
			json_object_set_new(json_object_get(o, "spec"), "stage",
			                    numeric ? json_integer((json_int_t)i)
			                            : json_string(map[i][0]));
			out = json_dumps(o, JSON_INDENT(4));
			f = parse(probe("machinestatus/cp-0"), result(0, false, out, ""));
			m = json_object_get(json_object_get(f, "machines"), "cp-0");
			ck_assert_str_eq(json_string_value(json_object_get(m, "stage")), map[i][1]);
			ck_assert_ptr_null(json_object_get(m, "error"));
			json_decref(f);
			free(out);
			json_decref(o);
		}
	}
	json_decref(base);
}
END_TEST

/* One stream from two nodes: each object lands on its own Machine. */
START_TEST(test_machinestatus_stream)
{
	json_t *two = js("{\"id\": \"machinestatus/workers\", \"tool\": \"talosctl\", \"data\": "
	                 "{\"probe\": \"machinestatus\", \"nodes\": {\"10.20.0.11\": \"w-0\", "
	                 "\"10.20.0.12\": \"w-1\"}}}");
	char *out = text("talos/machinestatus-two-nodes.json");

	expect(parse(two, result(0, false, out, "")),
	       "{\"machines\": {\"w-0\": {\"stage\": \"Running\", \"ready\": true}, "
	       "\"w-1\": {\"stage\": \"Rebooting\", \"ready\": false}}}");
	expect(parse(probe("machinestatus/w-1"), result(0, false, out, "")),
	       "{\"machines\": {\"w-1\": {\"stage\": \"Rebooting\", \"ready\": false}}}");
	expect_machine_error(parse(probe("machinestatus/cp-0"), result(0, false, out, "")), "cp-0",
	                     "talosctl get machinestatus: no MachineStatus of 10.20.0.10 in the "
	                     "output");
	/* one node failed: the other's object still counts, the failed one gets the reason */
	free(out);
	out = text("talos/machinestatus-booting.json");
	expect(
	    parse(two, result(1, false, out, "10.20.0.12: rpc error: code = DeadlineExceeded")),
	    "{\"machines\": {\"w-0\": {\"stage\": \"Booting\", \"ready\": false}, \"w-1\": "
	    "{\"stage\": \"Unknown\", \"ready\": false, \"error\": \"talosctl get machinestatus: "
	    "exit status 1: 10.20.0.12: rpc error: code = DeadlineExceeded\"}}}");
	free(out);
	json_decref(two);
}
END_TEST

START_TEST(test_machinestatus_bad)
{
	const char *id = "machinestatus/w-0";
	char *refused = text("talos/talosctl-refused.err"), *out;

	expect_machine_error(
	    parse(probe(id), result(1, false, "", refused)), "w-0",
	    "talosctl get machinestatus: exit status 1: * 10.20.0.11: rpc error: "
	    "code = Unavailable desc = connection error: desc = \"transport: Error "
	    "while dialing: dial tcp 10.20.0.11:50000: connect: connection "
	    "refused\"");
	expect_machine_error(parse(probe(id), result(137, true, "", "")), "w-0",
	                     "talosctl get machinestatus: timed out after 10000 ms");
	expect_machine_error(parse(probe(id), result(143, false, "", "")), "w-0",
	                     "talosctl get machinestatus: killed by signal 15");
	expect_machine_error(parse(probe(id), result(0, false, "", "")), "w-0",
	                     "talosctl get machinestatus: no output");
	expect_machine_error(parse(probe(id), result(0, false, " \n\t\n", "")), "w-0",
	                     "talosctl get machinestatus: no output");
	expect_machine_error(parse_file(id, "talos/garbage.txt"), "w-0",
	                     "talosctl get machinestatus: output is not JSON");
	expect_machine_error(parse_file(id, "talos/machinestatus-truncated.json"), "w-0",
	                     "talosctl get machinestatus: output ends inside a JSON object "
	                     "(truncated)");
	expect_machine_error(parse_file(id, "talos/machinestatus-wrong-shape.json"), "w-0",
	                     "talosctl get machinestatus: a MachineStatus without spec.stage");
	expect_machine_error(
	    parse_file("machinestatus/cp-0", "talos/machinestatus-unknown-stage.json"), "cp-0",
	    "talosctl get machinestatus: unknown stage 'hibernating'");
	expect_machine_error(parse(probe(id), result(0, false, "{\"a\": \"\\\"}\" ]", "")), "w-0",
	                     "talosctl get machinestatus: output is not valid JSON");
	expect_machine_error(parse(probe(id), result(0, false, "[1, 2]", "")), "w-0",
	                     "talosctl get machinestatus: output is not JSON");
	out = text("talos/machinestatus-booting.json");
	expect_machine_error(parse(probe(id), result(137, true, out, "")), "w-0",
	                     "talosctl get machinestatus: timed out after 10000 ms");
	free(out);
	expect_machine_error(parse(probe(id), json_object()), "w-0",
	                     "talosctl get machinestatus: the result has no exit status");
	free(refused);
}
END_TEST

/* Output at and past the host's bounds: never a crash, always an error fact. */
START_TEST(test_huge)
{
	size_t n = (4u << 20) + 16;
	char *big = malloc(n + 1);
	json_t *r;

	memset(big, '{', n); /* nesting that never closes */
	big[n] = '\0';
	expect_machine_error(parse(probe("machinestatus/w-0"), result(0, false, big, "")), "w-0",
	                     "talosctl get machinestatus: output is over 4 MiB");
	big[4u << 20] = '\0';
	expect_machine_error(parse(probe("machinestatus/w-0"), result(0, false, big, "")), "w-0",
	                     "talosctl get machinestatus: output ends inside a JSON object");
	memset(big, '[', 1u << 20);
	big[1u << 20] = '\0';
	expect_tenant_error(parse(probe("nodes"), result(0, false, big, "")),
	                    "kubectl get nodes: output is not valid JSON");
	for (size_t i = 0; i + 2 < (1u << 20); i += 2) {
		memcpy(big + i, "{}", 2); /* far more resources than any node has */
	}
	expect_machine_error(parse(probe("machinestatus/w-0"), result(0, false, big, "")), "w-0",
	                     "talosctl get machinestatus: output has more than 1024 resources");
	memset(big, '\n', 1u << 20);
	r = result(0, false, big, big);
	expect_machine_error(parse(probe("version/w-0"), r), "w-0", "talosctl version: no output");
	free(big);
}
END_TEST

/* ------------------------------------------------------------------ version */

START_TEST(test_version)
{
	char *out = text("talos/version.txt");
	char *other = strdup(out);

	expect(parse_file("version/cp-0", "talos/version.txt"),
	       "{\"machines\": {\"cp-0\": {\"talosVersion\": \"v1.12.1\"}}}");
	/* the server block names another node: not this Machine's version */
	expect_machine_error(parse(probe("version/w-0"), result(0, false, out, "")), "w-0",
	                     "talosctl version: no server version in the output");
	memcpy(strstr(other, "v1.12.1\n\tSHA"), "v1.12$1", 7);
	expect_machine_error(parse(probe("version/cp-0"), result(0, false, other, "")), "cp-0",
	                     "talosctl version: unreadable version 'v1.12$1'");
	expect_machine_error(parse(probe("version/cp-0"),
	                           result(1, false, "Client:\nTalos v1.12.1\nServer:\n",
	                                  "error getting version from node 10.20.0.10: rpc error: "
	                                  "code = Unavailable desc = connection refused\n")),
	                     "cp-0",
	                     "talosctl version: exit status 1: error getting version from node "
	                     "10.20.0.10");
	expect_machine_error(parse_file("version/cp-0", "talos/garbage.txt"), "cp-0",
	                     "talosctl version: no server version in the output");
	/* one node asked and the run failed: what it printed does not count */
	expect_machine_error(parse(probe("version/cp-0"), result(0, true, out, "")), "cp-0",
	                     "talosctl version: timed out after 10000 ms");
	expect_machine_error(parse(probe("version/cp-0"), result(1, false, out, "")), "cp-0",
	                     "talosctl version: exit status 1");
	free(other);
	free(out);
}
END_TEST

/* ------------------------------------------------------------------ etcd */

START_TEST(test_etcd)
{
	json_t *three = js("{\"id\": \"etcd\", \"tool\": \"talosctl\", \"timeout\": 15000, "
	                   "\"data\": {\"probe\": \"etcd\", \"controlPlanes\": 3, \"nodes\": "
	                   "{\"10.20.0.10\": \"cp-0\", \"10.20.0.13\": \"cp-1\", "
	                   "\"10.20.0.14\": \"cp-2\"}}}");
	char *out = text("talos/etcd-members-partial.txt");
	char *err = text("talos/etcd-members-partial.err");
	json_t *f;

	expect(parse_file("etcd", "talos/etcd-members.txt"),
	       "{\"tenant\": {\"etcdMembers\": 1, \"controlPlaneHealthy\": true}}");
	expect(parse_file("etcd", "talos/etcd-members-old.txt"),
	       "{\"tenant\": {\"etcdMembers\": 1, \"controlPlaneHealthy\": true}}");
	/* a learner that has not started yet: counted, and not healthy */
	expect(parse_file("etcd", "talos/etcd-members-learner.txt"),
	       "{\"tenant\": {\"etcdMembers\": 2, \"controlPlaneHealthy\": false}}");
	/* all three answer in time, but only two of the rows' nodes: not healthy */
	f = parse(three, result(0, false, out, ""));
	expect(f, "{\"tenant\": {\"etcdMembers\": 3, \"controlPlaneHealthy\": false}}");
	/* one of three control planes does not answer: what the others say counts */
	f = parse(three, result(1, false, out, err));
	ck_assert_int_eq(
	    json_integer_value(json_object_get(json_object_get(f, "tenant"), "etcdMembers")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(f, "tenant"), "error")),
	                 "talosctl etcd members: exit status 1: error from node 10.20.0.14: rpc "
	                 "error: code = Unavailable desc = connection error: desc = \"transport: "
	                 "Error while dialing: dial tcp 10.20.0.14:50000: connect: no route to "
	                 "host\"");
	json_object_del(json_object_get(f, "tenant"), "etcdMembers");
	expect_tenant_error(f, "talosctl etcd members: exit status 1");
	expect_tenant_error(parse(probe("etcd"), result(1, false, "", err)),
	                    "talosctl etcd members: exit status 1: error from node 10.20.0.14");
	expect_tenant_error(parse(probe("etcd"), result(137, true, "", "")),
	                    "talosctl etcd members: timed out after 15000 ms");
	expect_tenant_error(parse_file("etcd", "talos/garbage.txt"),
	                    "talosctl etcd members: no member table in the output");
	expect_tenant_error(parse(probe("etcd"), result(0, false, "", "")),
	                    "talosctl etcd members: no output");
	expect_tenant_error(parse(probe("etcd"), result(0, false,
	                                                "NODE   ID   HOSTNAME   PEER URLS   CLIENT "
	                                                "URLS   LEARNER\n",
	                                                "")),
	                    "talosctl etcd members: the member list is empty");
	free(err);
	free(out);
	json_decref(three);
}
END_TEST

/* ------------------------------------------------------------------ nodes */

/* cp-0 is matched by its node's name, w-0 by address only (its node is talos-7xk-2qp), w-1
 * by the kubernetes.io/hostname label only (name and address differ). */
START_TEST(test_nodes)
{
	expect(parse_file("nodes", "talos/nodes.json"),
	       "{\"tenant\": {\"nodes\": 3, \"nodesReady\": 3}, \"machines\": {"
	       "\"cp-0\": {\"nodeReady\": true, \"kubernetesVersion\": \"v1.35.0\"}, "
	       "\"w-0\": {\"nodeReady\": true, \"kubernetesVersion\": \"v1.35.0\"}, "
	       "\"w-1\": {\"nodeReady\": true, \"kubernetesVersion\": \"v1.35.0\"}}}");
	/* the control plane's kubelet is silent, w-1 NotReady, w-0 never registered (so no
	 * kubelet version either) */
	expect(parse_file("nodes", "talos/nodes-degraded.json"),
	       "{\"tenant\": {\"nodes\": 2, \"nodesReady\": 0, \"controlPlaneHealthy\": false}, "
	       "\"machines\": {\"cp-0\": {\"nodeReady\": false, \"kubernetesVersion\": "
	       "\"v1.35.0\"}, \"w-0\": {\"nodeReady\": false}, "
	       "\"w-1\": {\"nodeReady\": false, \"kubernetesVersion\": \"v1.35.0\"}}}");
}
END_TEST

START_TEST(test_nodes_bad)
{
	char *refused = text("talos/kubectl-refused.err");
	char *list = text("talos/nodes.json");

	expect_tenant_error(
	    parse(probe("nodes"), result(1, false, "", refused)),
	    "kubectl get nodes: exit status 1: The connection to the server "
	    "10.20.0.10:6443 was refused - did you specify the right host or port?");
	expect_tenant_error(parse(probe("nodes"), result(137, true, "", "")),
	                    "kubectl get nodes: timed out after 20000 ms");
	expect_tenant_error(parse(probe("nodes"), result(0, false, "", "")),
	                    "kubectl get nodes: no output");
	expect_tenant_error(parse_file("nodes", "talos/garbage.txt"),
	                    "kubectl get nodes: output is not valid JSON");
	expect_tenant_error(parse_file("nodes", "talos/nodes-wrong-shape.json"),
	                    "kubectl get nodes: output is not a list of nodes");
	list[strlen(list) / 2] = '\0';
	expect_tenant_error(parse(probe("nodes"), result(0, false, list, "")),
	                    "kubectl get nodes: output is not valid JSON");
	expect_tenant_error(parse(probe("nodes"), result(0, false, "{\"kind\": \"List\"}", "")),
	                    "kubectl get nodes: output is not a list of nodes");
	free(list);
	free(refused);
}
END_TEST

/* ------------------------------------------------------------------ the stand-in layout */

/* Where tests/stand-ins/talosctl and kubectl find a probe's recording in the layout. */
static char *recording(const json_t *p)
{
	const json_t *args = json_object_get(p, "args");
	const char *tool = json_string_value(json_object_get(p, "tool"));
	char rel[512];

	if (strcmp(tool, "kubectl") == 0) {
		snprintf(rel, sizeof(rel), "standin/kubectl/%s-%s.out",
		         json_string_value(json_array_get(args, 0)),
		         json_string_value(json_array_get(args, 1)));
	} else {
		snprintf(rel, sizeof(rel), "standin/talosctl/%s/%s%s%s.out",
		         json_string_value(json_array_get(args, 1)),
		         json_string_value(json_array_get(args, 4)),
		         strcmp(json_string_value(json_array_get(args, 4)), "version") ? "-" : "",
		         strcmp(json_string_value(json_array_get(args, 4)), "version")
		             ? json_string_value(json_array_get(args, 5))
		             : "");
	}
	return text(rel);
}

/* The layout tests/plugins/observe/standin/ (for the stand-ins) is a healthy tenant: every
 * probe reads, and the merged facts say so. */
START_TEST(test_standin_layout)
{
	json_t *all = json_object(), *p, *want;
	size_t i;

	json_array_foreach(probes, i, p)
	{
		char *out = recording(p);
		json_t *f = parse(p, result(0, false, out, "")), *m;
		const char *name;
		json_object_foreach(json_object_get(f, "machines"), name, m)
		{
			json_t *have = json_object_get(json_object_get(all, "machines"), name);
			if (json_object_get(all, "machines") == NULL) {
				json_object_set_new(all, "machines", json_object());
			}
			if (have == NULL) {
				json_object_set_new(json_object_get(all, "machines"), name,
				                    json_deep_copy(m));
			} else {
				json_object_update(have, m);
			}
		}
		if (json_object_get(all, "tenant") == NULL) {
			json_object_set_new(all, "tenant", json_object());
		}
		json_object_update(json_object_get(all, "tenant"), json_object_get(f, "tenant"));
		json_decref(f);
		free(out);
	}
	want = js("{\"tenant\": {\"etcdMembers\": 1, \"controlPlaneHealthy\": true, \"nodes\": 3, "
	          "\"nodesReady\": 3}, \"machines\": {"
	          "\"cp-0\": {\"stage\": \"Running\", \"ready\": true, \"talosVersion\": "
	          "\"v1.12.1\", \"nodeReady\": true, \"kubernetesVersion\": \"v1.35.0\"}, "
	          "\"w-0\": {\"stage\": \"Running\", \"ready\": true, \"talosVersion\": "
	          "\"v1.12.1\", \"nodeReady\": true, \"kubernetesVersion\": \"v1.35.0\"}, "
	          "\"w-1\": {\"stage\": \"Running\", \"ready\": true, \"talosVersion\": "
	          "\"v1.12.1\", \"nodeReady\": true, \"kubernetesVersion\": \"v1.35.0\"}}}");
	ck_assert_msg(json_equal(all, want), "merged facts %s",
	              json_dumps(all, JSON_SORT_KEYS | JSON_INDENT(1)));
	json_decref(want);
	json_decref(all);
}
END_TEST

/* ------------------------------------------------------------------ the host's wrappers */

START_TEST(test_wrappers)
{
	rz_err_t err = { 0 };
	json_t *out = NULL, *foreign = js("{\"id\": \"x\", \"data\": {\"probe\": \"y\"}}");
	json_t *r = result(0, false, "", "");

	ck_assert_int_eq(rz_plugins_observe_probes(plugins, "metal", ctx, &out, &err),
	                 RZ_ENOTFOUND);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(err.msg, "plugin 'metal' is not loaded or does not observe");
	ck_assert_int_eq(rz_plugins_observe_parse(plugins, "nope", foreign, r, &out, &err),
	                 RZ_ENOTFOUND);
	/* a probe the plugin never made is a plugin error, named */
	ck_assert_int_eq(rz_plugins_observe_parse(plugins, "talos", foreign, r, &out, &err),
	                 REZUS_EINVALID);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(err.msg, "plugin 'talos': observe_parse failed: probe 'x' is not one the "
	                          "talos plugin made");
	json_decref(r);
	json_decref(foreign);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("talos_observe");
	TCase *tc = tcase_create("observe");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_probes);
	tcase_add_test(tc, test_probes_partial);
	tcase_add_test(tc, test_machinestatus);
	tcase_add_test(tc, test_stages);
	tcase_add_test(tc, test_machinestatus_stream);
	tcase_add_test(tc, test_machinestatus_bad);
	tcase_add_test(tc, test_huge);
	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_etcd);
	tcase_add_test(tc, test_nodes);
	tcase_add_test(tc, test_nodes_bad);
	tcase_add_test(tc, test_standin_layout);
	tcase_add_test(tc, test_wrappers);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
