/*
 * plugins/sim/sim.c - the simulated provider (SPEC §6.3): machines and cluster secrets as
 * terraform_data resources, which tofu/terraform have built in, so the whole pipeline runs
 * with no cloud account and no download. Built only against the installed SDK headers.
 *
 * providerConfig of a sim node group:
 *   addressPrefix  three octets, e.g. "10.20.0"; machines get <prefix>.<10 + index>
 *                  (without it, a /22 of the plugin's prefix chosen by the group's name:
 *                  stable while groups come and go)
 *   failOn         index of a machine whose apply fails (to exercise failures)
 *   brokenOn       index of a machine that never comes up: it ends in stage Failed
 *   notReadyOn     index of a machine that goes NotReady notReadyAfter ms after Running
 *   notReadyAfter  milliseconds (default 5000)
 *   upgradeFailsOn index of a machine that never comes back from a Talos upgrade
 *
 * Observation (ABI 1.1): machines go Provisioning -> Booting -> Installing -> Running and
 * become ready, one stage every stageMs milliseconds after they were created (the plugin's
 * rezus.conf section: stageMs, default 2000). Nothing runs: every probe has tool null, and
 * the facts follow from the Machine's age. A tenant's control plane is healthy when it has
 * control-plane machines and all of them are Running and ready.
 *
 * Upgrades (ABI 1.2): nothing runs (the commands have tool null); observation simulates
 * them from the UpgradeRun the host puts in the context: a machine whose Talos upgrade
 * started goes Upgrading, then Rebooting, one stageMs each, then Running and ready with the
 * target version (a machine named by upgradeFailsOn stays Rebooting); a rolled back one
 * runs its old version again at once. A Kubernetes upgrade shows on every node one stageMs
 * after it started. Machines run the versions the tenant's status records (what the last
 * apply or upgrade left), else its spec's.
 *
 * Etcd snapshots (ABI 1.3): nothing runs. A snapshot is a command with tool null whose
 * simulate.write the host writes to the snapshot's path: a text that starts with the line
 * "rezus-sim-etcd-snapshot v1" and names the tenant, its versions, the control plane it
 * was taken through and each machine (name, role, address, Talos and Kubernetes
 * versions), the same for the same context. A restore is a command with tool null: it
 * changes nothing, the simulated machines go on as observation says.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rezus/plugin.h>

#define DEFAULT_PREFIX   "10.99.0"
#define DEFAULT_STAGE_MS 2000

struct sim {
	const rezus_host_t *h;
	const char *prefix; /* default addressPrefix (from rezus.conf: addressPrefix) */
	char prefix_buf[64];
	int64_t stage_ms; /* rezus.conf stageMs: the time each observed stage lasts */
};

static int sim_init(const rezus_host_t *h, const rezus_json_t *config, void **state,
                    rezus_err_t *err)
{
	struct sim *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		return h->error(h, err, REZUS_EINTERNAL, "out of memory");
	}
	s->h = h;
	snprintf(s->prefix_buf, sizeof(s->prefix_buf), "%s",
	         h->config_string(h, config, "addressPrefix", DEFAULT_PREFIX));
	s->prefix = s->prefix_buf;
	s->stage_ms = h->config_int(h, config, "stageMs", DEFAULT_STAGE_MS);
	*state = s;
	return 0;
}

static void sim_fini(void *state)
{
	free(state);
}

/* "a.b.c": three decimal octets. */
static int prefix_valid(const char *p)
{
	unsigned a, b, c;
	char tail;

	return p != NULL && sscanf(p, "%u.%u.%u%c", &a, &b, &c, &tail) == 3 && a < 256 && b < 256 &&
	       c < 256;
}

static int sim_check_config(const rezus_host_t *h, const rezus_json_t *config, rezus_err_t *err)
{
	for (size_t i = 0; i < h->json_size(h, config); i++) {
		const char *key = h->json_key_at(h, config, i);
		if (strcmp(key, "addressPrefix") != 0 && strcmp(key, "stageMs") != 0) {
			return h->error(h, err, REZUS_ECONFIG, "plugins.sim.%s: unknown key", key);
		}
	}
	if (h->config_int(h, config, "stageMs", DEFAULT_STAGE_MS) < 1 ||
	    h->config_int(h, config, "stageMs", DEFAULT_STAGE_MS) > 3600000) {
		return h->error(h, err, REZUS_ECONFIG,
		                "plugins.sim.stageMs: milliseconds from 1 to 3600000");
	}
	if (!prefix_valid(h->config_string(h, config, "addressPrefix", DEFAULT_PREFIX))) {
		return h->error(h, err, REZUS_ECONFIG,
		                "plugins.sim.addressPrefix: use three octets such as 10.99.0");
	}
	return 0;
}

static void cause(const rezus_host_t *h, rezus_json_t *causes, const char *field,
                  const char *reason, const char *message)
{
	rezus_json_t *c = h->json_object(h);

	h->json_set(h, c, "field", h->json_string(h, field));
	h->json_set(h, c, "reason", h->json_string(h, reason));
	h->json_set(h, c, "message", h->json_string(h, message));
	h->json_append(h, causes, c);
}

static int sim_validate(void *state, const rezus_json_t *ng, rezus_json_t *causes)
{
	struct sim *s = state;
	const rezus_host_t *h = s->h;
	const rezus_json_t *pc = h->json_path(h, ng, "spec.providerConfig");
	const rezus_json_t *v;

	for (size_t i = 0; i < h->json_size(h, pc); i++) {
		const char *key = h->json_key_at(h, pc, i);
		if (strcmp(key, "addressPrefix") != 0 && strcmp(key, "failOn") != 0 &&
		    strcmp(key, "brokenOn") != 0 && strcmp(key, "notReadyOn") != 0 &&
		    strcmp(key, "notReadyAfter") != 0 && strcmp(key, "upgradeFailsOn") != 0) {
			cause(h, causes, key, "FieldValueInvalid", "unknown field");
		}
	}
	for (size_t i = 0; i < 4; i++) {
		static const char *const indices[] = { "brokenOn", "notReadyOn", "upgradeFailsOn",
			                               "notReadyAfter" };
		v = h->json_get(h, pc, indices[i]);
		if (v != NULL &&
		    (h->json_type(h, v) != REZUS_JSON_INTEGER || h->json_integer_value(h, v) < 0)) {
			cause(h, causes, indices[i], "FieldValueInvalid",
			      i < 3 ? "must be the index (0, 1, ...) of a machine"
			            : "must be milliseconds (0 or more)");
		}
	}
	v = h->json_get(h, pc, "addressPrefix");
	if (v != NULL && !prefix_valid(h->json_string_value(h, v))) {
		cause(h, causes, "addressPrefix", "FieldValueInvalid",
		      "must be three octets such as 10.20.0");
	}
	v = h->json_get(h, pc, "failOn");
	if (v != NULL &&
	    (h->json_type(h, v) != REZUS_JSON_INTEGER || h->json_integer_value(h, v) < 0)) {
		cause(h, causes, "failOn", "FieldValueInvalid",
		      "must be the index (0, 1, ...) of the machine to fail");
	}
	return 0;
}

/* ------------------------------------------------------------------ render */

static void set_str(const rezus_host_t *h, rezus_json_t *o, const char *key, const char *v)
{
	h->json_set(h, o, key, h->json_string(h, v));
}

/* obj[key], created as an object when absent. Borrowed from obj. */
static rezus_json_t *child(const rezus_host_t *h, rezus_json_t *obj, const char *key)
{
	const rezus_json_t *c = h->json_get(h, obj, key);

	if (c == NULL) {
		h->json_set(h, obj, key, h->json_object(h));
		c = h->json_get(h, obj, key);
	}
	return (rezus_json_t *)c;
}

#define SLOTS 64 /* the /22s of the default prefix's /16 a group's machines may take */

static uint32_t fnv1a(const char *s)
{
	uint32_t x = 2166136261u;

	while (s != NULL && *s != '\0') {
		x = (x ^ (unsigned char)*s++) * 16777619u;
	}
	return x;
}

/* Whether node group a was made before b (then by name): the order slots are claimed in. */
static bool made_before(const rezus_host_t *h, const rezus_json_t *a, const rezus_json_t *b)
{
	const char *ta = h->json_string_value(h, h->json_path(h, a, "metadata.creationTimestamp"));
	const char *tb = h->json_string_value(h, h->json_path(h, b, "metadata.creationTimestamp"));
	int c = strcmp(ta ? ta : "", tb ? tb : "");

	if (c == 0) {
		const char *na = h->json_string_value(h, h->json_path(h, a, "metadata.name"));
		const char *nb = h->json_string_value(h, h->json_path(h, b, "metadata.name"));
		c = strcmp(na ? na : "", nb ? nb : "");
	}
	return c < 0;
}

/* Each group's /22 of the default prefix (slot[i], for groups without an addressPrefix of
 * their own): the one its name hashes to, or the next free one after the groups made
 * before it. So a machine's address is stable for its life: adding a group, or removing
 * one, moves no other group's machines (unless more than SLOTS groups share the prefix).
 * 0 or -1 (out of memory). */
static int assign_slots(const rezus_host_t *h, const rezus_json_t *groups, size_t n, unsigned *slot)
{
	bool used[SLOTS] = { false };
	size_t *order = calloc(n + 1, sizeof(*order));

	if (order == NULL) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) { /* insertion sort: a tenant has few groups */
		size_t j = i;
		while (j > 0 && made_before(h, h->json_at(h, groups, i),
		                            h->json_at(h, groups, order[j - 1]))) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (size_t k = 0; k < n; k++) {
		const rezus_json_t *ng = h->json_at(h, groups, order[k]);
		unsigned v =
		    fnv1a(h->json_string_value(h, h->json_path(h, ng, "metadata.name"))) % SLOTS;
		if (h->json_path(h, ng, "spec.providerConfig.addressPrefix") != NULL) {
			slot[order[k]] = 0;
			continue;
		}
		for (unsigned tries = 0; used[v] && tries < SLOTS; tries++) {
			v = (v + 1) % SLOTS;
		}
		used[v] = true;
		slot[order[k]] = v;
	}
	free(order);
	return 0;
}

/* One terraform_data per machine of a sim node group. Machines get <prefix>.<10 + index>;
 * with the default prefix each group in its own /22 (slot, from assign_slots) so that
 * groups never share an address. */
static void render_group(struct sim *s, const char *tenant, const rezus_json_t *ng, unsigned slot,
                         rezus_json_t *resources, const char **cp_name)
{
	const rezus_host_t *h = s->h;
	const char *name = h->json_string_value(h, h->json_path(h, ng, "metadata.name"));
	const char *role = h->json_string_value(h, h->json_path(h, ng, "spec.role"));
	const char *prefix =
	    h->json_string_value(h, h->json_path(h, ng, "spec.providerConfig.addressPrefix"));
	const rezus_json_t *fail = h->json_path(h, ng, "spec.providerConfig.failOn");
	const char *tfname = h->tf_name(h, name);
	rezus_json_t *r = h->json_object(h), *input = h->json_object(h);
	unsigned a = 10, b = 99, c = 0;

	sscanf(prefix ? prefix : s->prefix, "%u.%u.%u", &a, &b, &c);
	if (prefix == NULL) {
		c += slot * 4;
	}
	h->json_set(
	    h, r, "count",
	    h->json_integer(h, h->json_integer_value(h, h->json_path(h, ng, "spec.count"))));
	set_str(h, input, "role", "machine");
	set_str(h, input, "nodeGroup", h->tf_escape(h, name));
	set_str(h, input, "machineRole", role ? role : "worker");
	set_str(
	    h, input, "hostname",
	    h->printf(h, "%s-%s-${count.index}", h->tf_escape(h, tenant), h->tf_escape(h, name)));
	set_str(h, input, "address",
	        h->printf(
	            h, "%u.%u.${floor((count.index + 10) / 256) + %u}.${(count.index + 10) %% 256}",
	            a, b, c));
	h->json_set(h, r, "input", input);
	if (fail != NULL) {
		rezus_json_t *pre = h->json_object(h), *list = h->json_array(h),
		             *lc = h->json_object(h);
		set_str(h, pre, "condition",
		        h->printf(h, "${count.index != %lld}",
		                  (long long)h->json_integer_value(h, fail)));
		set_str(h, pre, "error_message",
		        h->printf(h, "sim: machine %s-%lld fails, as providerConfig.failOn asks",
		                  h->tf_escape(h, name),
		                  (long long)h->json_integer_value(h, fail)));
		h->json_append(h, list, pre);
		h->json_set(h, lc, "precondition", list);
		h->json_set(h, r, "lifecycle", lc);
	}
	h->json_set(h, child(h, resources, "terraform_data"), tfname, r);
	if (role != NULL && strcmp(role, "controlplane") == 0 && *cp_name == NULL) {
		*cp_name = tfname;
	}
}

static const char *kubeconfig(const rezus_host_t *h, const char *t, const char *server)
{
	return h->printf(h,
	                 "apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n  cluster:\n"
	                 "    server: %s\n    insecure-skip-tls-verify: true\ncontexts:\n"
	                 "- name: admin@%s\n  context:\n    cluster: %s\n    user: admin@%s\n"
	                 "current-context: admin@%s\nusers:\n- name: admin@%s\n  user:\n"
	                 "    token: ${terraform_data.cluster_secrets.id}\n",
	                 t, server, t, t, t, t, t);
}

static const char *talosconfig(const rezus_host_t *h, const char *t, const char *endpoint)
{
	return h->printf(h,
	                 "context: %s\ncontexts:\n  %s:\n    endpoints:\n    - %s\n"
	                 "    ca: ${base64encode(terraform_data.cluster_secrets.id)}\n"
	                 "    crt: ${base64encode(\"crt-${terraform_data.cluster_secrets.id}\")}\n"
	                 "    key: ${base64encode(\"key-${terraform_data.cluster_secrets.id}\")}\n",
	                 t, t, endpoint);
}

/* The cluster side: a secrets resource and the credentials outputs. */
static void render_cluster(struct sim *s, const rezus_json_t *ctx, const char *t,
                           const char *cp_name, rezus_json_t *out)
{
	const rezus_host_t *h = s->h;
	const char *given =
	    h->json_string_value(h, h->json_path(h, ctx, "tenant.spec.controlPlaneEndpoint"));
	const char *addr =
	    cp_name ? h->printf(h, "${terraform_data.%s[0].input.address}", cp_name) : "127.0.0.1";
	const char *server = given ? h->tf_escape(h, given) : h->printf(h, "https://%s:6443", addr);
	rezus_json_t *secrets = h->json_object(h), *input = h->json_object(h);
	rezus_json_t *outputs = child(h, out, "output");
	rezus_json_t *kc = h->json_object(h), *tc = h->json_object(h);

	set_str(h, input, "role", "secrets");
	set_str(h, input, "cluster", t);
	h->json_set(h, secrets, "input", input);
	h->json_set(h, child(h, child(h, out, "resource"), "terraform_data"), "cluster_secrets",
	            secrets);
	set_str(h, kc, "value", kubeconfig(h, t, server));
	h->json_set(h, kc, "sensitive", h->json_bool(h, 1));
	set_str(h, tc, "value", talosconfig(h, t, addr));
	h->json_set(h, tc, "sensitive", h->json_bool(h, 1));
	h->json_set(h, outputs, "kubeconfig", kc);
	h->json_set(h, outputs, "talosconfig", tc);
}

static int sim_render(void *state, const rezus_json_t *ctx, rezus_json_t *out, rezus_err_t *err)
{
	struct sim *s = state;
	const rezus_host_t *h = s->h;
	const char *tenant = h->json_string_value(h, h->json_path(h, ctx, "tenant.metadata.name"));
	const char *cluster =
	    h->json_string_value(h, h->json_path(h, ctx, "tenant.spec.clusterProvider"));
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");
	const char *cp_name = NULL;
	unsigned *slot;
	size_t n;

	if (tenant == NULL) {
		return h->error(h, err, REZUS_EINVALID, "the context names no tenant");
	}
	tenant = h->tf_escape(h, tenant);
	n = h->json_size(h, groups);
	if ((slot = calloc(n + 1, sizeof(*slot))) == NULL ||
	    assign_slots(h, groups, n, slot) != 0) {
		free(slot);
		return h->error(h, err, REZUS_EINTERNAL, "sim: out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		render_group(s, tenant, h->json_at(h, groups, i), slot[i],
		             child(h, out, "resource"), &cp_name);
	}
	free(slot);
	if (cp_name != NULL) {
		set_str(h, child(h, out, "exports"), "controlplane_addresses",
		        h->printf(h, "${terraform_data.%s[*].input.address}", cp_name));
	}
	if (cluster != NULL && strcmp(cluster, "sim") == 0) {
		render_cluster(s, ctx, tenant, cp_name, out);
	}
	return 0;
}

/* ------------------------------------------------------------------ observation */

/* An RFC 3339 UTC time ("2026-12-01T07:00:00Z", fractions ignored) in ms; -1 if not one. */
static int64_t time_ms(const char *t)
{
	struct tm tm = { 0 };
	int n = 0, ms = 0;

	if (t == NULL || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
	                        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6) {
		return -1;
	}
	if (t[n] == '.') { /* "….123Z": an upgrade step's times have milliseconds */
		for (int i = 1, scale = 100; i <= 3 && t[n + i] >= '0' && t[n + i] <= '9'; i++) {
			ms += (t[n + i] - '0') * scale;
			scale /= 10;
		}
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}

/* The index of a machine from its TF address ("terraform_data.workers[1]"); -1 if none. */
static int64_t machine_index(const char *addr)
{
	const char *b = addr ? strrchr(addr, '[') : NULL;
	long long i;

	return b != NULL && sscanf(b, "[%lld]", &i) == 1 ? (int64_t)i : -1;
}

/* The node group named name among groups; NULL if none. */
static const rezus_json_t *group_named(const rezus_host_t *h, const rezus_json_t *groups,
                                       const char *name)
{
	for (size_t i = 0; name != NULL && i < h->json_size(h, groups); i++) {
		const rezus_json_t *g = h->json_at(h, groups, i);
		const char *n = h->json_string_value(h, h->json_path(h, g, "metadata.name"));
		if (n != NULL && strcmp(n, name) == 0) {
			return g;
		}
	}
	return NULL;
}

/* providerConfig.key of g when it names machine index, else 0. */
static int picks(const rezus_host_t *h, const rezus_json_t *g, const char *key, int64_t index)
{
	const rezus_json_t *v = h->json_path(h, h->json_path(h, g, "spec.providerConfig"), key);

	return v != NULL && index >= 0 && h->json_integer_value(h, v) == index;
}

static void set_int(const rezus_host_t *h, rezus_json_t *o, const char *key, int64_t v)
{
	h->json_set(h, o, key, h->json_integer(h, v));
}

/* The machine's entry in the context's UpgradeRun (status.machines[]), or NULL. */
static const rezus_json_t *upgrade_step(const rezus_host_t *h, const rezus_json_t *up,
                                        const char *name)
{
	const rezus_json_t *ms = h->json_path(h, up, "status.machines");

	for (size_t i = 0; name != NULL && i < h->json_size(h, ms); i++) {
		const rezus_json_t *m = h->json_at(h, ms, i);
		const char *n = h->json_string_value(h, h->json_get(h, m, "name"));
		if (n != NULL && strcmp(n, name) == 0) {
			return m;
		}
	}
	return NULL;
}

static int phase_is(const rezus_host_t *h, const rezus_json_t *step, const char *a, const char *b)
{
	const char *p = h->json_string_value(h, h->json_get(h, step, "phase"));

	return p != NULL && (strcmp(p, a) == 0 || (b != NULL && strcmp(p, b) == 0));
}

/* What a machine's observation needs, from the context: kept in its probe's data. */
static rezus_json_t *machine_data(struct sim *s, const rezus_json_t *ctx, const rezus_json_t *m)
{
	const rezus_host_t *h = s->h;
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");
	const rezus_json_t *up = h->json_get(h, ctx, "upgrade");
	const char *name = h->json_string_value(h, h->json_path(h, m, "metadata.name"));
	const rezus_json_t *g =
	    group_named(h, groups, h->json_string_value(h, h->json_path(h, m, "spec.nodeGroup")));
	int64_t index =
	    machine_index(h->json_string_value(h, h->json_path(h, m, "spec.tfAddress")));
	const rezus_json_t *after = h->json_path(h, g, "spec.providerConfig.notReadyAfter");
	const char *talos =
	    h->json_string_value(h, h->json_path(h, ctx, "tenant.status.talosVersion"));
	const char *k8s =
	    h->json_string_value(h, h->json_path(h, ctx, "tenant.status.kubernetesVersion"));
	const char *component = h->json_string_value(h, h->json_path(h, up, "spec.component"));
	const char *target = h->json_string_value(h, h->json_path(h, up, "spec.targetVersion"));
	const rezus_json_t *step = upgrade_step(h, up, name);
	rezus_json_t *data = h->json_object(h);

	if (talos == NULL) {
		talos = h->json_string_value(h, h->json_path(h, g, "spec.talosVersion"))
		            ?: h->json_string_value(
		                   h, h->json_path(h, ctx, "tenant.spec.talosVersion"));
	}
	if (k8s == NULL) {
		k8s =
		    h->json_string_value(h, h->json_path(h, ctx, "tenant.spec.kubernetesVersion"));
	}
	set_int(h, data, "since",
	        time_ms(h->json_string_value(h, h->json_path(h, m, "metadata.creationTimestamp"))));
	set_int(h, data, "stageMs", s->stage_ms);
	h->json_set(h, data, "broken", h->json_bool(h, picks(h, g, "brokenOn", index)));
	set_int(h, data, "notReadyAfter",
	        picks(h, g, "notReadyOn", index)
	            ? (after != NULL ? h->json_integer_value(h, after) : 5000)
	            : -1);
	set_int(h, data, "upgradeSince", -1);
	if (step != NULL && target != NULL && component != NULL &&
	    strcmp(component, "talos") == 0) {
		if (phase_is(h, step, "Succeeded", NULL)) {
			talos = target;
		} else if (phase_is(h, step, "Upgrading", "Verifying")) {
			set_int(
			    h, data, "upgradeSince",
			    time_ms(h->json_string_value(h, h->json_get(h, step, "startedAt"))));
			set_str(h, data, "upgradeTo", h->printf(h, "v%s", target));
			h->json_set(h, data, "upgradeFails",
			            h->json_bool(h, picks(h, g, "upgradeFailsOn", index)));
		}
	}
	if (step != NULL && target != NULL && component != NULL &&
	    strcmp(component, "kubernetes") == 0) {
		if (phase_is(h, step, "Succeeded", NULL)) {
			k8s = target;
		} else if (phase_is(h, step, "Upgrading", "Verifying") &&
		           time_ms(h->json_string_value(h, h->json_get(h, step, "startedAt"))) >=
		               0) {
			set_int(
			    h, data, "k8sSince",
			    time_ms(h->json_string_value(h, h->json_get(h, step, "startedAt"))));
			set_str(h, data, "k8sTo", h->printf(h, "v%s", target));
		}
	}
	set_str(h, data, "version", h->printf(h, "v%s", talos ? talos : "1.12.0"));
	set_str(h, data, "kubernetes", h->printf(h, "v%s", k8s ? k8s : "1.35.0"));
	return data;
}

/* One probe per machine, then one for the cluster, which carries its control planes' data.
 * Nothing runs: every probe has tool null. */
static int sim_probes(void *state, const rezus_json_t *ctx, rezus_json_t *probes, rezus_err_t *err)
{
	struct sim *s = state;
	const rezus_host_t *h = s->h;
	const rezus_json_t *machines = h->json_get(h, ctx, "machines");
	rezus_json_t *cps = h->json_array(h), *all = h->json_array(h);
	rezus_json_t *cluster = h->json_object(h), *cdata;

	(void)err;
	for (size_t i = 0; i < h->json_size(h, machines); i++) {
		const rezus_json_t *m = h->json_at(h, machines, i);
		const char *name = h->json_string_value(h, h->json_path(h, m, "metadata.name"));
		const char *role = h->json_string_value(h, h->json_path(h, m, "spec.role"));
		rezus_json_t *p;

		if (name == NULL) {
			continue;
		}
		p = h->json_object(h);
		set_str(h, p, "id", h->printf(h, "machine/%s", name));
		h->json_set(h, p, "tool", h->json_null(h));
		set_str(h, p, "machine", name);
		h->json_set(h, p, "data", machine_data(s, ctx, m));
		h->json_append(h, probes, p);
		if (role != NULL && strcmp(role, "controlplane") == 0) {
			h->json_append(h, cps, machine_data(s, ctx, m));
		}
		h->json_append(h, all, machine_data(s, ctx, m));
	}
	cdata = h->json_object(h);
	h->json_set(h, cdata, "controlPlanes", cps);
	h->json_set(h, cdata, "machines", all);
	set_str(h, cluster, "id", "cluster");
	h->json_set(h, cluster, "tool", h->json_null(h));
	h->json_set(h, cluster, "data", cdata);
	h->json_append(h, probes, cluster);
	return 0;
}

/* A simulated machine's stage now: one stage per stageMs since it was created. */
static const char *sim_stage(const rezus_host_t *h, const rezus_json_t *data, int64_t now,
                             int *ready, const char **error)
{
	int64_t since = h->json_integer_value(h, h->json_get(h, data, "since"));
	int64_t step = h->json_integer_value(h, h->json_get(h, data, "stageMs"));
	int64_t after = h->json_integer_value(h, h->json_get(h, data, "notReadyAfter"));
	int64_t age = now - since;
	static const char *const early[] = { "Provisioning", "Booting", "Installing" };

	*ready = 0;
	*error = NULL;
	if (since < 0 || step < 1) {
		*error = "sim: the machine has no creation time";
		return "Unknown";
	}
	if (age < 3 * step) {
		return early[age < 0 ? 0 : age / step];
	}
	if (h->json_bool_value(h, h->json_get(h, data, "broken"))) {
		*error = "sim: the machine never comes up, as providerConfig.brokenOn asks";
		return "Failed";
	}
	if (after >= 0 && age >= 3 * step + after) {
		*error = "sim: the machine went NotReady, as providerConfig.notReadyOn asks";
		return "Running";
	}
	{
		int64_t up = h->json_integer_value(h, h->json_get(h, data, "upgradeSince"));
		if (up >= 0 && now - up < step) {
			return "Upgrading";
		}
		if (up >= 0 && (now - up < 2 * step ||
		                h->json_bool_value(h, h->json_get(h, data, "upgradeFails")))) {
			return "Rebooting";
		}
	}
	*ready = 1;
	return "Running";
}

/* The versions a simulated machine reports now: its Talos (the upgrade's target once the
 * machine is back) and its kubelet's. */
static const char *sim_version(const rezus_host_t *h, const rezus_json_t *data, int64_t now,
                               const char **kubernetes)
{
	int64_t up = h->json_integer_value(h, h->json_get(h, data, "upgradeSince"));
	int64_t step = h->json_integer_value(h, h->json_get(h, data, "stageMs"));
	const rezus_json_t *k8s_since = h->json_get(h, data, "k8sSince");

	*kubernetes = h->json_string_value(h, h->json_get(h, data, "kubernetes"));
	if (k8s_since != NULL && now - h->json_integer_value(h, k8s_since) >= step) {
		*kubernetes = h->json_string_value(h, h->json_get(h, data, "k8sTo"));
	}
	if (up >= 0 && now - up >= 2 * step &&
	    !h->json_bool_value(h, h->json_get(h, data, "upgradeFails"))) {
		return h->json_string_value(h, h->json_get(h, data, "upgradeTo"));
	}
	return h->json_string_value(h, h->json_get(h, data, "version"));
}

static int sim_parse(void *state, const rezus_json_t *probe, const rezus_json_t *result,
                     rezus_json_t *facts, rezus_err_t *err)
{
	struct sim *s = state;
	const rezus_host_t *h = s->h;
	const rezus_json_t *data = h->json_get(h, probe, "data");
	const char *machine = h->json_string_value(h, h->json_get(h, probe, "machine"));
	int64_t now = h->json_integer_value(h, h->json_get(h, result, "now"));
	const char *error;
	int ready;

	(void)err;
	if (machine != NULL) {
		rezus_json_t *ms = h->json_object(h), *m = h->json_object(h);
		set_str(h, m, "stage", sim_stage(h, data, now, &ready, &error));
		h->json_set(h, m, "ready", h->json_bool(h, ready));
		h->json_set(h, m, "nodeReady", h->json_bool(h, ready));
		set_str(h, m, "error", error ? error : "");
		if (ready || error == NULL) {
			const char *k8s;
			set_str(h, m, "talosVersion", sim_version(h, data, now, &k8s));
			set_str(h, m, "kubernetesVersion", k8s);
		}
		h->json_set(h, ms, machine, m);
		h->json_set(h, facts, "machines", ms);
		return 0;
	}
	{
		const rezus_json_t *cps = h->json_get(h, data, "controlPlanes");
		size_t n = h->json_size(h, cps), up = 0;
		rezus_json_t *t = h->json_object(h);
		for (size_t i = 0; i < n; i++) {
			sim_stage(h, h->json_at(h, cps, i), now, &ready, &error);
			up += ready != 0;
		}
		const rezus_json_t *all = h->json_get(h, data, "machines");
		size_t nodes = h->json_size(h, all), nready = 0;
		for (size_t i = 0; i < nodes; i++) {
			sim_stage(h, h->json_at(h, all, i), now, &ready, &error);
			nready += ready != 0;
		}
		h->json_set(h, t, "controlPlaneHealthy", h->json_bool(h, n > 0 && up == n));
		set_int(h, t, "etcdMembers", (int64_t)up);
		set_int(h, t, "nodes", (int64_t)nodes);
		set_int(h, t, "nodesReady", (int64_t)nready);
		set_str(h, t, "error", n == 0 ? "sim: the tenant has no control plane" : "");
		h->json_set(h, facts, "tenant", t);
	}
	return 0;
}

static const char *sim_rules(void *state)
{
	return "[{\"type\":\"terraform_data\",\"kind\":\"Machine\","
	       "\"when\":{\"input.role\":\"machine\"},\"nodeGroup\":[\"input.nodeGroup\"],"
	       "\"fields\":{\"providerId\":[\"id\"],\"address\":[\"input.address\"],"
	       "\"hostname\":[\"input.hostname\"],\"role\":[\"input.machineRole\"]}}]";
}

/* Upgrades are simulated by observation (above): nothing runs. */
static int sim_upgrade(void *state, const rezus_json_t *ctx, rezus_json_t *commands,
                       rezus_err_t *err)
{
	struct sim *s = state;
	const rezus_host_t *h = s->h;
	const char *action = h->json_string_value(h, h->json_get(h, ctx, "action"));
	rezus_json_t *c = h->json_object(h);

	(void)err;
	set_str(h, c, "id", h->printf(h, "sim/%s", action ? action : "upgrade"));
	h->json_set(h, c, "tool", h->json_null(h));
	h->json_append(h, commands, c);
	return 0;
}

/* ------------------------------------------------------------------ etcd snapshots */

#define SNAPSHOT_MACHINES_MAX 1000 /* listed in a simulated snapshot: it stays far below 1 MiB */

/* A string member for a snapshot line: "-" when missing, at most 253 bytes. */
static const char *field(const rezus_host_t *h, const rezus_json_t *o, const char *path)
{
	const char *v = h->json_string_value(h, h->json_path(h, o, path));

	return v != NULL && v[0] != '\0' ? h->printf(h, "%.253s", v) : "-";
}

/* A simulated snapshot: text that depends on the context alone (the same tenant and
 * machines give the same bytes), what a real one would hold of them. Arena memory; NULL
 * when out of it. */
static const char *snapshot_text(const rezus_host_t *h, const rezus_json_t *ctx)
{
	const rezus_json_t *t = h->json_get(h, ctx, "tenant");
	const rezus_json_t *ms = h->json_get(h, ctx, "machines");
	size_t n = h->json_size(h, ms), len, at;
	size_t lines = n < SNAPSHOT_MACHINES_MAX ? n : SNAPSHOT_MACHINES_MAX;
	const char *talos = h->json_string_value(h, h->json_path(h, t, "status.talosVersion"));
	const char *k8s = h->json_string_value(h, h->json_path(h, t, "status.kubernetesVersion"));
	const char **line = h->alloc(h, (lines + 1) * sizeof(*line));
	char *text;

	if (line == NULL) {
		return NULL;
	}
	line[0] = h->printf(h,
	                    "rezus-sim-etcd-snapshot v1\ntenant: %s\ntalosVersion: %s\n"
	                    "kubernetesVersion: %s\nthrough: %s\nmachines: %zu\n",
	                    field(h, t, "metadata.name"),
	                    talos ? talos : field(h, t, "spec.talosVersion"),
	                    k8s ? k8s : field(h, t, "spec.kubernetesVersion"),
	                    field(h, h->json_get(h, ctx, "machine"), "metadata.name"), n);
	len = line[0] ? strlen(line[0]) : 0;
	for (size_t i = 0; i < lines; i++) { /* one line each, joined once: no quadratic copy */
		const rezus_json_t *m = h->json_at(h, ms, i);
		line[i + 1] = h->printf(
		    h, "machine: %s %s %s %s %s\n", field(h, m, "metadata.name"),
		    field(h, m, "spec.role"), field(h, m, "spec.address"),
		    field(h, m, "status.talosVersion"), field(h, m, "status.kubernetesVersion"));
		len += line[i + 1] ? strlen(line[i + 1]) : 0;
	}
	if ((text = h->alloc(h, len + 1)) == NULL) {
		return NULL;
	}
	at = 0;
	for (size_t i = 0; i <= lines; i++) {
		size_t l = line[i] ? strlen(line[i]) : 0;
		memcpy(text + at, line[i] ? line[i] : "", l);
		at += l;
	}
	text[at] = '\0';
	return text;
}

/* Snapshots are simulated: the host writes the text above to ctx.path. A restore runs
 * nothing; the machines go on as observation says. */
static int sim_etcd(void *state, const rezus_json_t *ctx, rezus_json_t *commands, rezus_err_t *err)
{
	struct sim *s = state;
	const rezus_host_t *h = s->h;
	const char *action = h->json_string_value(h, h->json_get(h, ctx, "action"));
	bool snapshot = action != NULL && strcmp(action, "snapshot") == 0;
	const char *text = snapshot ? snapshot_text(h, ctx) : NULL;
	rezus_json_t *c, *sim;

	if (!snapshot && (action == NULL || strcmp(action, "restore") != 0)) {
		return h->error(h, err, REZUS_EINVALID, "unknown etcd action '%s'",
		                action ? action : "");
	}
	if (snapshot && text == NULL) {
		return h->error(h, err, REZUS_EINTERNAL, "out of memory");
	}
	c = h->json_object(h);
	set_str(h, c, "id", h->printf(h, "sim/etcd-%s", action));
	h->json_set(h, c, "tool", h->json_null(h));
	if (snapshot) {
		sim = h->json_object(h);
		set_str(h, sim, "write", text);
		h->json_set(h, c, "simulate", sim);
	}
	h->json_append(h, commands, c);
	return 0;
}

static const rezus_plugin_t sim = {
	.header = REZUS_PLUGIN_HEADER_INIT,
	.name = "sim",
	.version = "1.0.0",
	.description = "simulated machines and clusters (terraform_data): no cloud needed",
	.kinds = REZUS_PLUGIN_INFRA | REZUS_PLUGIN_CLUSTER,
	.config_schema = "{\"type\":\"object\",\"properties\":{\"addressPrefix\":{\"type\":"
	                 "\"string\"},\"stageMs\":{\"type\":\"integer\",\"minimum\":1}},"
	                 "\"additionalProperties\":false}",
	.provider_config_schema =
	    "{\"type\":\"object\",\"properties\":{\"addressPrefix\":{\"type\":\"string\"},"
	    "\"failOn\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"brokenOn\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"notReadyOn\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"notReadyAfter\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"upgradeFailsOn\":{\"type\":\"integer\",\"minimum\":0}},"
	    "\"additionalProperties\":false}",
	.init = sim_init,
	.fini = sim_fini,
	.check_config = sim_check_config,
	.validate_nodegroup = sim_validate,
	.render = sim_render,
	.projection_rules = sim_rules,
	.env_allowlist = NULL,
	.observe_probes = sim_probes,
	.observe_parse = sim_parse,
	.upgrade_commands = sim_upgrade,
	.etcd_commands = sim_etcd,
};

REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void)
{
	return &sim;
}
