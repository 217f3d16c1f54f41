/*
 * plugins/talos/observe.c - how the talos plugin observes its clusters (ABI 1.1): the probes
 * the host runs for a tenant, and how their output becomes facts. The plugin only describes
 * and reads; the host runs talosctl and kubectl with the tenant's credentials.
 *
 * Probes, in this order (plugins/talos/README.md has the why):
 *   machinestatus/<machine>  talosctl --nodes A --endpoints A get machinestatus -o json
 *   version/<machine>        talosctl --nodes A --endpoints A version --short
 *   etcd                     talosctl --nodes CPs --endpoints CPs etcd members
 *   nodes                    kubectl get nodes -o json --request-timeout=15s
 * Each probe's "data" says which parser reads it ("probe") and which Machines it is about
 * ("nodes": {address: Machine name}, or "machines" for the node list).
 *
 * Output is untrusted: a failed, timed-out, empty, truncated, oversized or strangely shaped
 * result becomes an "error" fact and parse returns 0. Every loop is bounded by the size of
 * its input; memory comes from the host's arena and JSON handles only.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../kit/kit.h"
#include "observe.h"

#define TALOS_TIMEOUT 10000      /* ms, per-machine probes */
#define ETCD_TIMEOUT  15000      /* ms */
#define NODES_TIMEOUT 20000      /* ms; kubectl gives up after 15 s by itself */
#define OUT_MAX       (4u << 20) /* the host's bound on stdout */
#define RESOURCES_MAX 1024       /* objects in one talosctl get stream */
#define MEMBERS_MAX   256        /* etcd members (and answering nodes) counted */
#define ROWS_MAX      4096       /* rows of the etcd member table read */
#define REASON_MAX    200        /* bytes of outside text in an error */
#define MS_TYPE       "MachineStatuses.runtime.talos.dev"

/* Talos's machine stages (runtime.MachineStage, in its numeric order) and the contract's. */
static const struct stage {
	const char *talos, *stage;
} stages[] = {
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
#define NSTAGES (sizeof(stages) / sizeof(stages[0]))

/* ------------------------------------------------------------------ probes */

const char *talos_machine_address(const rezus_host_t *h, const rezus_json_t *m)
{
	const char *a = kit_get_str(h, m, "spec.address", "");
	const rezus_json_t *list = h->json_path(h, m, "spec.addresses");

	for (size_t i = 0; a[0] == '\0' && i < h->json_size(h, list); i++) {
		const char *s = h->json_string_value(h, h->json_at(h, list, i));
		a = s ? s : "";
	}
	return a[0] ? a : NULL;
}

bool talos_usable_address(const char *a)
{
	size_t n = strlen(a);

	return a[0] != '-' && n <= 253 &&
	       strspn(a, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.:-_[]%") ==
	           n;
}

/* Is Machine m a control plane? spec.role, else the role of its node group. */
static bool machine_controlplane(const rezus_host_t *h, const rezus_json_t *ctx,
                                 const rezus_json_t *m)
{
	const char *role = kit_get_str(h, m, "spec.role", NULL);
	const char *group = kit_get_str(h, m, "spec.nodeGroup", "");
	const rezus_json_t *groups = h->json_get(h, ctx, "nodeGroups");

	for (size_t i = 0; role == NULL && i < h->json_size(h, groups); i++) {
		const rezus_json_t *g = h->json_at(h, groups, i);
		if (strcmp(kit_get_str(h, g, "metadata.name", ""), group) == 0) {
			role = kit_get_str(h, g, "spec.role", NULL);
		}
	}
	return role != NULL && strcmp(role, "controlplane") == 0;
}

/* Append one probe (takes ownership of args and data). */
static void add_probe(const rezus_host_t *h, rezus_json_t *probes, const char *id, const char *tool,
                      rezus_json_t *args, int64_t timeout, const char *cred, const char *machine,
                      rezus_json_t *data)
{
	rezus_json_t *p = h->json_object(h);

	kit_str(h, p, "id", id);
	h->json_set(h, p, "tool", tool ? h->json_string(h, tool) : h->json_null(h));
	h->json_set(h, p, "args", args);
	kit_int(h, p, "timeout", timeout);
	kit_str(h, p, "credentials", cred);
	kit_str(h, p, "machine", machine);
	h->json_set(h, p, "data", data);
	h->json_append(h, probes, p);
}

/* data {"probe": kind, "nodes": {address: name}} (caller owns). */
static rezus_json_t *nodes_data(const rezus_host_t *h, const char *kind, const char *addr,
                                const char *name)
{
	rezus_json_t *d = h->json_object(h), *nodes = h->json_object(h);

	kit_str(h, d, "probe", kind);
	kit_str(h, nodes, addr, name);
	h->json_set(h, d, "nodes", nodes);
	return d;
}

/* talosctl --nodes N --endpoints N cmd... (caller owns). */
static rezus_json_t *talosctl_args(const rezus_host_t *h, const char *nodes, const char *const *cmd,
                                   size_t n)
{
	const char *head[] = { "--nodes", nodes, "--endpoints", nodes };
	rezus_json_t *a = kit_strings(h, head, 4);

	for (size_t i = 0; i < n; i++) {
		h->json_append(h, a, h->json_string(h, cmd[i]));
	}
	return a;
}

static void machine_probes(const rezus_host_t *h, rezus_json_t *probes, const char *name,
                           const char *addr)
{
	static const char *const status[] = { "get", "machinestatus", "-o", "json" };
	static const char *const version[] = { "version", "--short" };

	if (!talos_usable_address(addr)) { /* nothing runs; parse reports it on the Machine */
		rezus_json_t *d = nodes_data(h, "unusable", addr, name);
		add_probe(h, probes, h->printf(h, "address/%s", name), NULL, h->json_array(h),
		          TALOS_TIMEOUT, "none", name, d);
		return;
	}
	add_probe(h, probes, h->printf(h, "machinestatus/%s", name), "talosctl",
	          talosctl_args(h, addr, status, 4), TALOS_TIMEOUT, "talosconfig", name,
	          nodes_data(h, "machinestatus", addr, name));
	add_probe(h, probes, h->printf(h, "version/%s", name), "talosctl",
	          talosctl_args(h, addr, version, 2), TALOS_TIMEOUT, "talosconfig", name,
	          nodes_data(h, "version", addr, name));
}

/* The etcd probe asks every control plane for its view of the membership (takes ownership
 * of cps, {address: name}). */
static void etcd_probe(const rezus_host_t *h, rezus_json_t *probes, rezus_json_t *cps,
                       int64_t expected)
{
	static const char *const members[] = { "etcd", "members" };
	rezus_json_t *d = h->json_object(h);
	const char *list = "";

	for (size_t i = 0; i < h->json_size(h, cps); i++) {
		list = h->printf(h, "%s%s%s", list, i ? "," : "", h->json_key_at(h, cps, i));
	}
	kit_str(h, d, "probe", "etcd");
	h->json_set(h, d, "nodes", cps);
	kit_int(h, d, "controlPlanes", expected);
	add_probe(h, probes, "etcd", "talosctl", talosctl_args(h, list, members, 2), ETCD_TIMEOUT,
	          "talosconfig", NULL, d);
}

/* What the node list is matched with: {name, hostname, addresses, controlPlane}. */
static rezus_json_t *machine_entry(const rezus_host_t *h, const rezus_json_t *m, const char *name,
                                   bool cp)
{
	rezus_json_t *e = h->json_object(h), *addrs = h->json_array(h);
	const char *addr = kit_get_str(h, m, "spec.address", "");
	const rezus_json_t *list = h->json_path(h, m, "spec.addresses");

	if (addr[0] != '\0') {
		h->json_append(h, addrs, h->json_string(h, addr));
	}
	for (size_t i = 0; i < h->json_size(h, list); i++) {
		const char *s = h->json_string_value(h, h->json_at(h, list, i));
		if (s != NULL && s[0] != '\0' && strcmp(s, addr) != 0) {
			h->json_append(h, addrs, h->json_string(h, s));
		}
	}
	kit_str(h, e, "name", name);
	kit_str(h, e, "hostname", kit_get_str(h, m, "spec.hostname", ""));
	h->json_set(h, e, "addresses", addrs);
	kit_bool(h, e, "controlPlane", cp);
	return e;
}

int talos_observe_probes(void *state, const rezus_json_t *ctx, rezus_json_t *probes,
                         rezus_err_t *err)
{
	kit_plain_t *s = state;
	const rezus_host_t *h = s->h;
	const rezus_json_t *machines = h->json_get(h, ctx, "machines");
	static const char *const nodes[] = { "get", "nodes", "-o", "json",
		                             "--request-timeout=15s" };
	rezus_json_t *cps = h->json_object(h), *known = h->json_array(h), *d;
	int64_t expected = 0;

	(void)err;
	for (size_t i = 0; i < h->json_size(h, machines); i++) {
		const rezus_json_t *m = h->json_at(h, machines, i);
		const char *name = kit_get_str(h, m, "metadata.name", "");
		const char *addr = talos_machine_address(h, m);
		bool cp = machine_controlplane(h, ctx, m);

		if (name[0] == '\0') {
			continue;
		}
		expected += cp;
		h->json_append(h, known, machine_entry(h, m, name, cp));
		if (addr != NULL) {
			machine_probes(h, probes, name, addr);
		}
		if (addr != NULL && cp && talos_usable_address(addr)) {
			kit_str(h, cps, addr, name);
		}
	}
	if (h->json_size(h, cps) > 0) {
		etcd_probe(h, probes, cps, expected);
	} else {
		h->json_free(h, cps);
	}
	if (h->json_size(h, known) == 0) {
		h->json_free(h, known);
		return 0;
	}
	d = h->json_object(h);
	kit_str(h, d, "probe", "nodes");
	h->json_set(h, d, "machines", known);
	add_probe(h, probes, "nodes", "kubectl", kit_strings(h, nodes, 5), NODES_TIMEOUT,
	          "kubeconfig", NULL, d);
	return 0;
}

/* ------------------------------------------------------------------ reading results */

typedef struct pc {
	const rezus_host_t *h;
	const rezus_json_t *probe, *data;
	const char *what;    /* the probe in messages: "talosctl get machinestatus" */
	const char *out;     /* stdout, never NULL */
	const char *failure; /* why the run failed, or NULL when it exited 0 */
	rezus_json_t *facts;
} pc_t;

/* s[0..n) as printable ASCII (others '?'), at most REASON_MAX bytes (arena). */
static const char *clip(const rezus_host_t *h, const char *s, size_t n)
{
	size_t max = n > REASON_MAX ? REASON_MAX : n;
	char *d = h->alloc(h, max + 4);

	if (d == NULL) {
		return "";
	}
	for (size_t i = 0; i < max; i++) {
		unsigned char ch = (unsigned char)s[i];
		d[i] = ch == '\t' ? ' ' : (ch < 0x20 || ch >= 0x7f) ? '?' : (char)ch;
	}
	memcpy(d + max, n > max ? "..." : "", n > max ? 4 : 1);
	return d;
}

/* The last non-empty line of s, trimmed (arena), or NULL when s is blank. */
static const char *last_line(const rezus_host_t *h, const char *s)
{
	size_t end = strlen(s), start;

	while (end > 0 && isspace((unsigned char)s[end - 1])) {
		end--;
	}
	start = end;
	while (start > 0 && s[start - 1] != '\n') {
		start--;
	}
	while (start < end && isspace((unsigned char)s[start])) {
		start++;
	}
	return end > start ? clip(h, s + start, end - start) : NULL;
}

/* Why the run did not succeed (arena), or NULL when it exited 0 in time. */
static const char *run_failure(const pc_t *c, const rezus_json_t *result)
{
	const rezus_host_t *h = c->h;
	const rezus_json_t *st = h->json_get(h, result, "exitStatus");
	const char *err = last_line(h, kit_get_str(h, result, "stderr", ""));
	int64_t code = h->json_integer_value(h, st);

	if (kit_get_bool(h, result, "timedOut", false)) {
		return h->printf(h, "timed out after %lld ms",
		                 (long long)kit_get_int(h, c->probe, "timeout", 10000));
	}
	if (h->json_type(h, st) != REZUS_JSON_INTEGER) {
		return "the result has no exit status";
	}
	if (code == 0) {
		return NULL;
	}
	if (code > 128 && code < 128 + 65) {
		return h->printf(h, "killed by signal %lld%s%s", (long long)(code - 128),
		                 err ? ": " : "", err ? err : "");
	}
	return h->printf(h, "exit status %lld%s%s", (long long)code, err ? ": " : "",
	                 err ? err : "");
}

static rezus_json_t *machine_facts(const pc_t *c, const char *name)
{
	return kit_child(c->h, kit_child(c->h, c->facts, "machines"), name);
}

/* The Machine could not be observed: stage Unknown, not ready, and why. */
static void machine_error(const pc_t *c, const char *name, const char *why)
{
	rezus_json_t *m = machine_facts(c, name);

	kit_str(c->h, m, "stage", "Unknown");
	kit_bool(c->h, m, "ready", false);
	kit_str(c->h, m, "error", c->h->printf(c->h, "%s: %s", c->what, why));
}

/* The cluster could not be observed: its control plane is not known to be healthy. */
static void tenant_error(const pc_t *c, const char *why)
{
	rezus_json_t *t = kit_child(c->h, c->facts, "tenant");

	kit_bool(c->h, t, "controlPlaneHealthy", false);
	kit_str(c->h, t, "error", c->h->printf(c->h, "%s: %s", c->what, why));
}

/* The probe's Machines: data.nodes {address: name}. */
static const rezus_json_t *probe_nodes(const pc_t *c)
{
	return c->h->json_get(c->h, c->data, "nodes");
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

/* Does the output count? When the run failed, only for a probe of several nodes: talosctl
 * prints what the nodes that answered said, and the others are told by their absence. */
static bool trusted(const pc_t *c)
{
	return c->failure == NULL || c->h->json_size(c->h, probe_nodes(c)) > 1;
}

/* ---- a stream of JSON objects (talosctl get -o json prints one per resource) ---- */

/* The length of the JSON object or array at s[0..n), 0 when it does not end there. */
static size_t value_end(const char *s, size_t n)
{
	size_t depth = 0;
	bool str = false, esc = false;

	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (esc) {
			esc = false;
		} else if (str) {
			esc = ch == '\\';
			str = ch != '"';
		} else if (ch == '"') {
			str = true;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			if (depth <= 1) {
				return i + 1;
			}
			depth--;
		}
	}
	return 0;
}

/* Parse s[0..n) as one object and append it to list; NULL, or why not (arena). */
static const char *add_object(const pc_t *c, rezus_json_t *list, const char *s, size_t n)
{
	const rezus_host_t *h = c->h;
	char *text = h->alloc(h, n + 1);
	rezus_err_t perr = { 0 };
	rezus_json_t *v;

	if (text == NULL) {
		return "out of memory";
	}
	memcpy(text, s, n);
	text[n] = '\0';
	if ((v = h->json_parse(h, text, &perr)) == NULL) {
		return h->printf(h, "output is %s", clip(h, perr.msg, strlen(perr.msg)));
	}
	if (h->json_type(h, v) != REZUS_JSON_OBJECT) {
		h->json_free(h, v);
		return "output is not a stream of JSON objects";
	}
	return h->json_append(h, list, v) == 0 ? NULL : "out of memory";
}

/* The objects of c->out, a new array (caller owns; NULL when out of memory), and in *why
 * what made the rest unreadable (NULL when nothing did). */
static rezus_json_t *object_stream(const pc_t *c, const char **why)
{
	const rezus_host_t *h = c->h;
	const char *s = c->out;
	size_t n = strlen(s), i = 0;
	rezus_json_t *list = h->json_array(h);

	*why = list ? NULL : "out of memory";
	for (size_t k = 0; *why == NULL; k++) {
		size_t len;
		while (i < n && isspace((unsigned char)s[i])) {
			i++;
		}
		if (i == n) {
			break;
		}
		if (k == RESOURCES_MAX) {
			*why = "output has more than 1024 resources";
		} else if (s[i] != '{') {
			*why =
			    k ? "output goes on with text that is not JSON" : "output is not JSON";
		} else if ((len = value_end(s + i, n - i)) == 0) {
			*why = "output ends inside a JSON object (truncated)";
		} else {
			*why = add_object(c, list, s + i, len);
			i += len;
		}
	}
	if (*why == NULL && h->json_size(h, list) == 0) {
		*why = "no output";
	}
	return list;
}

/* The resource of node addr in list: the one whose "node" is addr, or the only one without a
 * node when the probe asked one node (older talosctl leave it empty for a direct connection). */
static const rezus_json_t *resource_of(const pc_t *c, const rezus_json_t *list, const char *addr,
                                       const char *type)
{
	const rezus_host_t *h = c->h;
	const rezus_json_t *only = NULL;
	size_t unnamed = 0;

	for (size_t i = 0; i < h->json_size(h, list); i++) {
		const rezus_json_t *o = h->json_at(h, list, i);
		const char *t = kit_get_str(h, o, "metadata.type", type);
		if (strcmp(t, type) != 0) {
			continue;
		}
		if (strcmp(kit_get_str(h, o, "node", ""), addr) == 0) {
			return o;
		}
		if (kit_get_str(h, o, "node", "")[0] == '\0') {
			only = o;
			unnamed++;
		}
	}
	return unnamed == 1 && h->json_size(h, probe_nodes(c)) == 1 ? only : NULL;
}

/* ---- talosctl get machinestatus ---- */

/* The contract's stage for Talos's (a name, or its number in older output); NULL if unknown. */
static const char *stage_of(const rezus_host_t *h, const rezus_json_t *v)
{
	const char *s = h->json_string_value(h, v);
	int64_t n = h->json_integer_value(h, v);

	for (size_t i = 0; i < NSTAGES; i++) {
		if (s != NULL ? strcasecmp(s, stages[i].talos) == 0
		              : h->json_type(h, v) == REZUS_JSON_INTEGER && n == (int64_t)i) {
			return stages[i].stage;
		}
	}
	return NULL;
}

static void machine_status(const pc_t *c, const char *name, const rezus_json_t *o)
{
	const rezus_host_t *h = c->h;
	const rezus_json_t *spec = h->json_get(h, o, "spec");
	const rezus_json_t *stage = h->json_get(h, spec, "stage");
	const rezus_json_t *ready = h->json_path(h, spec, "status.ready");
	const char *st = stage_of(h, stage);
	const char *raw = h->json_string_value(h, stage);
	rezus_json_t *m;

	if (stage == NULL || h->json_type(h, ready) != REZUS_JSON_BOOL) {
		machine_error(c, name, "a MachineStatus without spec.stage and spec.status.ready");
		return;
	}
	if (st == NULL) {
		machine_error(
		    c, name,
		    h->printf(h, "unknown stage '%s'", raw ? clip(h, raw, strlen(raw)) : "?"));
		return;
	}
	m = machine_facts(c, name);
	kit_str(h, m, "stage", st);
	kit_bool(h, m, "ready", h->json_bool_value(h, ready));
}

static int parse_machinestatus(const pc_t *c)
{
	const rezus_host_t *h = c->h;
	const rezus_json_t *nodes = probe_nodes(c);
	const char *why = NULL;
	rezus_json_t *list = object_stream(c, &why);

	for (size_t i = 0; i < h->json_size(h, nodes); i++) {
		const char *addr = h->json_key_at(h, nodes, i);
		const char *name = h->json_string_value(h, h->json_get(h, nodes, addr));
		const rezus_json_t *o =
		    list && trusted(c) ? resource_of(c, list, addr, MS_TYPE) : NULL;
		if (name == NULL) {
			continue;
		}
		if (o != NULL) {
			machine_status(c, name, o);
		} else if (c->failure != NULL || why != NULL) {
			machine_error(c, name, c->failure ? c->failure : why);
		} else {
			machine_error(c, name,
			              h->printf(h, "no MachineStatus of %s in the output",
			                        clip(h, addr, strlen(addr))));
		}
	}
	h->json_free(h, list);
	return 0;
}

/* ---- talosctl version ---- */

/* The value after "key" when line[0..n) is "<blanks>key<blanks>value" (arena), else NULL. */
static const char *line_value(const rezus_host_t *h, const char *line, size_t n, const char *key)
{
	size_t k = strlen(key), i = 0;

	while (i < n && isspace((unsigned char)line[i])) {
		i++;
	}
	if (n - i < k || strncmp(line + i, key, k) != 0) {
		return NULL;
	}
	for (i += k; i < n && isspace((unsigned char)line[i]); i++) {
	}
	while (n > i && isspace((unsigned char)line[n - 1])) {
		n--;
	}
	return clip(h, line + i, n - i);
}

/* The Tag: of node addr in the Server: part of `talosctl version` output (arena), or NULL.
 * With one node asked, a block without NODE: counts as that node's. */
static const char *server_tag(const pc_t *c, const char *addr)
{
	const rezus_host_t *h = c->h;
	const char *p = c->out, *node = "", *v, *only = NULL;
	bool server = false, single = h->json_size(h, probe_nodes(c)) == 1;
	size_t tags = 0;

	while (*p != '\0') {
		size_t len = strcspn(p, "\n");
		if (line_value(h, p, len, "Server:") != NULL) {
			server = true;
		} else if (server && (v = line_value(h, p, len, "NODE:")) != NULL) {
			node = v;
		} else if (server && (v = line_value(h, p, len, "Tag:")) != NULL) {
			if (strcmp(node, addr) == 0) {
				return v;
			}
			if (node[0] == '\0') {
				only = v;
				tags++;
			}
		}
		p += len + (p[len] == '\n');
	}
	return single && tags == 1 ? only : NULL;
}

/* A Talos version tag: v1.12.1, v1.13.0-beta.0, ... */
static bool version_tag(const char *v)
{
	size_t n = strlen(v);

	return n >= 2 && n <= 64 && (v[0] == 'v' || isdigit((unsigned char)v[0])) &&
	       strspn(v, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+-") == n;
}

static int parse_version(const pc_t *c)
{
	const rezus_host_t *h = c->h;
	const rezus_json_t *nodes = probe_nodes(c);

	for (size_t i = 0; i < h->json_size(h, nodes); i++) {
		const char *addr = h->json_key_at(h, nodes, i);
		const char *name = h->json_string_value(h, h->json_get(h, nodes, addr));
		const char *tag = trusted(c) ? server_tag(c, addr) : NULL;
		if (name == NULL) {
			continue;
		}
		if (tag != NULL && version_tag(tag)) {
			kit_str(h, machine_facts(c, name), "talosVersion",
			        tag[0] == 'v' ? tag : h->printf(h, "v%s", tag));
		} else if (c->failure != NULL) {
			machine_error(c, name, c->failure);
		} else if (tag != NULL) {
			machine_error(c, name, h->printf(h, "unreadable version '%s'", tag));
		} else if (blank(c->out)) {
			machine_error(c, name, "no output");
		} else {
			machine_error(c, name, "no server version in the output");
		}
	}
	return 0;
}

/* ---- talosctl etcd members ---- */

/* Split line[0..n) at blanks into at most max fields (arena copies); returns how many. */
static size_t fields(const rezus_host_t *h, const char *line, size_t n, const char **f, size_t max)
{
	size_t k = 0, i = 0;

	while (i < n && k < max) {
		size_t start;
		while (i < n && isspace((unsigned char)line[i])) {
			i++;
		}
		for (start = i; i < n && !isspace((unsigned char)line[i]); i++) {
		}
		if (i > start) {
			f[k++] = clip(h, line + start, i - start);
		}
	}
	return k;
}

/* Add s to the set (arena array of at most MEMBERS_MAX); false when it was there. */
static bool add_distinct(const char **set, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp(set[i], s) == 0) {
			return false;
		}
	}
	if (*n < MEMBERS_MAX) {
		set[(*n)++] = s;
	}
	return true;
}

typedef struct members {
	const char *ids[MEMBERS_MAX], *nodes[MEMBERS_MAX];
	size_t n, answered, learners, rows;
	bool table, has_node;
} members_t;

/* Does line[0..n), after blanks, start with word? */
static bool starts(const char *line, size_t n, const char *word)
{
	size_t i = 0, k = strlen(word);

	while (i < n && isspace((unsigned char)line[i])) {
		i++;
	}
	return n - i >= k && strncmp(line + i, word, k) == 0;
}

/* One line of the member table: the header (NODE ID HOSTNAME ... or ID HOSTNAME ...), or a
 * member row under it. Lines before the header and rows past ROWS_MAX are not read. */
static void member_line(const rezus_host_t *h, members_t *m, const char *line, size_t len)
{
	const char *f[8];
	size_t k, o = m->has_node ? 1 : 0;

	if (!m->table && !starts(line, len, "NODE") && !starts(line, len, "ID")) {
		return;
	}
	if (m->table && m->rows++ >= ROWS_MAX) {
		return;
	}
	k = fields(h, line, len, f, 8);
	if (k >= 2 && strcmp(f[0], "NODE") == 0 && strcmp(f[1], "ID") == 0) {
		m->table = m->has_node = true;
	} else if (k >= 2 && strcmp(f[0], "ID") == 0 && strcmp(f[1], "HOSTNAME") == 0) {
		m->table = true;
		m->has_node = false;
	} else if (m->table && k >= o + 2 && strspn(f[o], "0123456789abcdef") == strlen(f[o])) {
		/* an unstarted member has no hostname nor client URLs: fewer fields */
		if (add_distinct(m->ids, &m->n, f[o]) && strcmp(f[k - 1], "true") == 0) {
			m->learners++;
		}
		if (o == 1) {
			add_distinct(m->nodes, &m->answered, f[0]);
		}
	}
}

static int parse_etcd(const pc_t *c)
{
	const rezus_host_t *h = c->h;
	members_t *m = h->alloc(h, sizeof(*m));
	int64_t expected = kit_get_int(h, c->data, "controlPlanes", 0);
	size_t asked = h->json_size(h, probe_nodes(c));
	rezus_json_t *t;

	if (m == NULL) {
		tenant_error(c, "out of memory");
		return 0;
	}
	memset(m, 0, sizeof(*m));
	for (const char *p = c->out; *p != '\0';) {
		size_t len = strcspn(p, "\n");
		member_line(h, m, p, len);
		p += len + (p[len] == '\n');
	}
	if (m->n == 0 || c->failure != NULL) {
		tenant_error(c, c->failure       ? c->failure
		                : m->table       ? "the member list is empty"
		                : !blank(c->out) ? "no member table in the output"
		                                 : "no output");
	}
	t = kit_child(h, c->facts, "tenant");
	if (m->n > 0) {
		kit_int(h, t, "etcdMembers", (int64_t)m->n);
	}
	if (m->n > 0 && c->failure == NULL) {
		kit_bool(h, t, "controlPlaneHealthy",
		         m->learners == 0 && (expected <= 0 || (int64_t)m->n == expected) &&
		             (m->answered == 0 || m->answered >= asked));
	}
	return 0;
}

/* ---- kubectl get nodes ---- */

static bool node_ready(const rezus_host_t *h, const rezus_json_t *node)
{
	const rezus_json_t *conds = h->json_path(h, node, "status.conditions");

	for (size_t i = 0; i < h->json_size(h, conds); i++) {
		const rezus_json_t *x = h->json_at(h, conds, i);
		if (strcmp(kit_get_str(h, x, "type", ""), "Ready") == 0) {
			return strcmp(kit_get_str(h, x, "status", ""), "True") == 0;
		}
	}
	return false;
}

/* Is node the Machine e? By hostname (the node's name or its kubernetes.io/hostname label),
 * else by an address of the node's status.addresses. */
static bool node_is(const rezus_host_t *h, const rezus_json_t *node, const rezus_json_t *e)
{
	const char *host = kit_get_str(h, e, "hostname", "");
	const char *label = h->json_string_value(
	    h, h->json_get(h, h->json_path(h, node, "metadata.labels"), "kubernetes.io/hostname"));
	const rezus_json_t *mine = h->json_get(h, e, "addresses");
	const rezus_json_t *theirs = h->json_path(h, node, "status.addresses");

	if (host[0] != '\0' && (strcmp(kit_get_str(h, node, "metadata.name", ""), host) == 0 ||
	                        (label != NULL && strcmp(label, host) == 0))) {
		return true;
	}
	for (size_t i = 0; i < h->json_size(h, theirs); i++) {
		const char *a = kit_get_str(h, h->json_at(h, theirs, i), "address", "");
		for (size_t j = 0; a[0] != '\0' && j < h->json_size(h, mine); j++) {
			const char *b = h->json_string_value(h, h->json_at(h, mine, j));
			if (b != NULL && strcmp(a, b) == 0) {
				return true;
			}
		}
	}
	return false;
}

/* Each Machine's nodeReady; false when a control plane's node is not Ready. */
static void machines_ready(const pc_t *c, const rezus_json_t *items, rezus_json_t *t)
{
	const rezus_host_t *h = c->h;
	const rezus_json_t *machines = h->json_get(h, c->data, "machines");

	for (size_t i = 0; i < h->json_size(h, machines); i++) {
		const rezus_json_t *e = h->json_at(h, machines, i);
		const char *name = kit_get_str(h, e, "name", "");
		bool ready = false, found = false;
		const char *kubelet = NULL;
		for (size_t j = 0; !found && j < h->json_size(h, items); j++) {
			const rezus_json_t *node = h->json_at(h, items, j);
			found = node_is(h, node, e);
			ready = found && node_ready(h, node);
			if (found) {
				kubelet = h->json_string_value(
				    h, h->json_path(h, node, "status.nodeInfo.kubeletVersion"));
			}
		}
		if (name[0] == '\0') {
			continue;
		}
		kit_bool(h, machine_facts(c, name), "nodeReady", ready);
		if (kubelet != NULL && kubelet[0] != '\0') {
			kit_str(h, machine_facts(c, name), "kubernetesVersion", kubelet);
		}
		if (!ready && kit_get_bool(h, e, "controlPlane", false)) {
			kit_bool(h, t, "controlPlaneHealthy", false);
		}
	}
}

static int parse_nodes(const pc_t *c)
{
	const rezus_host_t *h = c->h;
	rezus_err_t perr = { 0 };
	rezus_json_t *list, *t;
	const rezus_json_t *items;
	const char *kind;
	int64_t ready = 0;

	if (c->failure != NULL || blank(c->out)) {
		tenant_error(c, c->failure ? c->failure : "no output");
		return 0;
	}
	if ((list = h->json_parse(h, c->out, &perr)) == NULL) {
		tenant_error(c, h->printf(h, "output is %s", clip(h, perr.msg, strlen(perr.msg))));
		return 0;
	}
	items = h->json_get(h, list, "items");
	kind = kit_get_str(h, list, "kind", "");
	if (h->json_type(h, items) != REZUS_JSON_ARRAY ||
	    (strcmp(kind, "List") != 0 && strcmp(kind, "NodeList") != 0)) {
		tenant_error(c, "output is not a list of nodes");
		h->json_free(h, list);
		return 0;
	}
	for (size_t i = 0; i < h->json_size(h, items); i++) {
		ready += node_ready(h, h->json_at(h, items, i));
	}
	t = kit_child(h, c->facts, "tenant");
	kit_int(h, t, "nodes", (int64_t)h->json_size(h, items));
	kit_int(h, t, "nodesReady", ready);
	machines_ready(c, items, t);
	h->json_free(h, list);
	return 0;
}

/* ---- the address could not be probed ---- */

static int parse_unusable(const pc_t *c)
{
	const rezus_host_t *h = c->h;
	const rezus_json_t *nodes = probe_nodes(c);

	for (size_t i = 0; i < h->json_size(h, nodes); i++) {
		const char *addr = h->json_key_at(h, nodes, i);
		const char *name = h->json_string_value(h, h->json_get(h, nodes, addr));
		if (name != NULL) {
			machine_error(c, name,
			              h->printf(h, "address '%s' is not one talosctl can be given",
			                        clip(h, addr, strlen(addr))));
		}
	}
	return 0;
}

static const struct parser {
	const char *probe, *what;
	int (*parse)(const pc_t *c);
} parsers[] = {
	{ "machinestatus", "talosctl get machinestatus", parse_machinestatus },
	{ "version", "talosctl version", parse_version },
	{ "etcd", "talosctl etcd members", parse_etcd },
	{ "nodes", "kubectl get nodes", parse_nodes },
	{ "unusable", "talos", parse_unusable },
};

int talos_observe_parse(void *state, const rezus_json_t *probe, const rezus_json_t *result,
                        rezus_json_t *facts, rezus_err_t *err)
{
	kit_plain_t *s = state;
	const rezus_host_t *h = s->h;
	const char *kind = kit_get_str(h, probe, "data.probe", "");
	const char *id = kit_get_str(h, probe, "id", "?");
	pc_t c = { .h = h, .probe = probe, .data = h->json_get(h, probe, "data"), .facts = facts };

	for (size_t i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++) {
		if (strcmp(kind, parsers[i].probe) != 0) {
			continue;
		}
		c.what = parsers[i].what;
		c.out = kit_get_str(h, result, "stdout", "");
		c.failure = run_failure(&c, result);
		if (c.failure == NULL && strlen(c.out) > OUT_MAX) {
			c.failure = "output is over 4 MiB";
		}
		if (c.failure != NULL && strlen(c.out) > OUT_MAX) {
			c.out = "";
		}
		return parsers[i].parse(&c);
	}
	return h->error(h, err, REZUS_EINVALID, "probe '%s' is not one the talos plugin made",
	                clip(h, id, strlen(id)));
}
