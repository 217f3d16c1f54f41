/*
 * rezus/plugin.h - the RezusCloud provider plugin ABI.
 *
 * A plugin is a shared object that exports exactly one symbol:
 *
 *     REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void);
 *
 * a pure getter returning a static descriptor (it allocates nothing and logs nothing). Build
 * with -fvisibility=hidden so nothing else is exported. The host loads a plugin only when,
 * in this order: the magic matches; abi_major equals the host's; abi_minor is not newer than
 * the host's; struct_size covers at least the ABI 1.0 layout; the name is non-empty, equal
 * to the file's name (name.so) and not taken; and the required entries (init, fini, render,
 * projection_rules; validate_nodegroup for infra plugins) are present.
 *
 * ABI changelog (append-only: a new member goes at the end and bumps the minor; anything
 * else bumps the major):
 *   1.0  first layout: header, name, version, description, kinds, config_schema,
 *        provider_config_schema, init, fini, check_config, validate_nodegroup, render,
 *        projection_rules, env_allowlist.
 *   1.1  observation: observe_probes, observe_parse (optional; both or neither).
 *   1.2  upgrades: upgrade_commands (optional, cluster plugins).
 *   1.3  etcd snapshots: etcd_commands (optional, cluster plugins).
 *
 * The render contract (rezus-plugin(7)). render() receives the tenant context, a borrowed object:
 *   {"tenant": <Tenant object>, "nodeGroups": [<this plugin's NodeGroups>],
 *    "allNodeGroups": [<every NodeGroup of the tenant>],
 *    "configPatches": [<enabled ConfigPatches, in name order>],
 *    "imports": {"<plugin>.<export>": "<TF expression>", ...},
 *    "exportsOnly": true}
 * The host renders twice: first with "exportsOnly": true and no imports, keeping only each
 * plugin's "exports"; then with every plugin's exports as "imports", keeping the rest. A
 * plugin must not fail for a missing import in the first pass. Exports a cluster plugin
 * gives infra plugins: "machine_config.<node group>" (the machine config a group's machines
 * boot with); exports an infra plugin gives the cluster plugin: "controlplane_addresses"
 * (a list of the control planes' Talos API addresses, created by its resources) and
 * optionally "controlplane_endpoint" (an address of the first control plane known before
 * any machine exists, for the cluster endpoint).
 * and fills out (an empty object it does not own) with any of:
 *   "required_providers": {name: {"source", "version"}}
 *   "variables": {name: {"type", "sensitive", "default"}}, "tfvars": {name: value}
 *   "resource", "data", "provider", "locals", "output": TF JSON blocks (rezus-plugin(7))
 *   "exports": {name: "<TF expression>"} for other plugins
 * Every TF name of a node group's resources starts with the group's tf_name(); every user
 * string embedded in a template goes through tf_escape(). Credentials never appear in the
 * output: list the environment variables the provider reads in env_allowlist.
 *
 * Projection rules (projection_rules()): static JSON text, a list of
 *   {"type": "<TF resource type>", "kind": "Machine",
 *    "when": {"<attribute path>": "<value>", ...},   optional: instances whose attributes
 *                                                    have these values
 *    "nodeGroup": ["<attribute path>", ...],        optional; default: the resource's name
 *    "fields": {"<Machine spec field>": ["<attribute path>", ...], ...}}
 * Each instance of the type becomes one object; a field takes the first non-empty attribute.
 * A plugin's rules apply only to the resources it rendered: the host records, for each
 * tenant's composition, the type and name of every "resource" block each plugin returned,
 * and after the apply runs a plugin's rules on those alone (managed, in the root module).
 * This is the host's behaviour, not a change of the ABI: no member or layout changed, and
 * a state the host has no such record for is projected as before, every rule over every
 * resource. A rule on a type others render too (terraform_data, or a provider shared with
 * other plugins) should still say "when", with a value only its own resources carry, so
 * that it is right wherever it runs unscoped; rezus-plugin-check warns (a warning, not a
 * failure) about a rule with no "when" on a built-in type or on a type of a provider the
 * plugin does not declare in required_providers.
 *
 * Observation (ABI 1.1; optional, for cluster plugins). The host observes every tenant that
 * has Machines on an interval, through the tenant's cluster plugin, which says how; the host
 * runs what it asks for. A plugin still never spawns a process nor touches a file.
 *
 * observe_probes(state, ctx, probes, err): ctx (borrowed) is
 *   {"tenant": <Tenant object>, "machines": [<its Machines>], "nodeGroups": [<its NodeGroups>],
 *    "now": <milliseconds since the epoch>}
 * Append one object per probe to probes (an empty array, borrowed); none is fine:
 *   "id"          a name unique within this call (required)
 *   "tool"        "talosctl" or "kubectl": a logical tool the host resolves from rezus.conf
 *                 (talos.binary, kubectl.binary); or null: nothing runs, and observe_parse is
 *                 called at once with exitStatus 0 and empty output (for plugins whose facts
 *                 follow from the context alone, such as sim)
 *   "args"        the arguments after the tool, strings (at most 64)
 *   "timeout"     milliseconds, 100 to 120000 (default 10000); the probe is then killed
 *   "credentials" "talosconfig", "kubeconfig" or "none" (default): the host writes that
 *                 sealed output of the tenant's last apply to a private 0600 file, points
 *                 TALOSCONFIG or KUBECONFIG at it for this probe alone, and removes it after;
 *                 a tenant without it gets the probe's result as a failure, without a run
 *   "machine"     the Machine the probe is about (optional)
 *   "data"        any JSON, handed back with the probe (optional)
 * The host runs probes with a clean environment (PATH, HOME and the credentials variable),
 * a bounded number at a time, never on the tofu pool's slots.
 *
 * observe_parse(state, probe, result, facts, err): probe (borrowed) is one object from
 * observe_probes; result (borrowed) is
 *   {"exitStatus": <exit code, or 128 + the signal that ended it>, "timedOut": <bool>,
 *    "stdout": "<at most 4 MiB>", "stderr": "<at most 64 KiB>", "now": <ms since the epoch>}
 * Fill facts (an empty object, borrowed) with what the result shows:
 *   "machines": {"<Machine name>": {
 *       "stage":        "Provisioning" | "Booting" | "Installing" | "Maintenance" |
 *                       "Running" | "Rebooting" | "ShuttingDown" | "Resetting" |
 *                       "Upgrading" | "Removing" | "Failed" | "Unknown",
 *       "ready":        <bool: the machine reports itself ready>,
 *       "talosVersion": "<the running version, e.g. v1.12.1>",
 *       "nodeReady":    <bool: its Kubernetes node is Ready>,
 *       "kubernetesVersion": "<its kubelet's version, e.g. v1.35.0>",
 *       "error":        "<why it could not be observed; stage Unknown with it>"}}
 *   "tenant": {"controlPlaneHealthy": <bool>, "etcdMembers": <n>, "nodes": <n>,
 *              "nodesReady": <n>, "error": "<why the cluster could not be observed>"}
 * Members left out are not known from this probe: the facts of one observation's probes
 * are merged, later probes adding to earlier ones. A failed, timed-out or unreadable probe
 * is a fact too ("error"), returned with 0; a negative return is a plugin fault, logged.
 * While the tenant has an upgrade in progress, ctx also has "upgrade": <its UpgradeRun
 * object> (status.machines[] says which machine is at which step, and since when), so a
 * plugin that simulates its machines can simulate the upgrade too.
 *
 * Upgrades (ABI 1.2; optional, for cluster plugins). The host runs a tenant's UpgradeRun:
 * prechecks, then one machine at a time (control planes first), each followed by a health
 * gate on what observation reports. The plugin says which commands do each step; the host
 * runs them, one after the other, exactly as it runs probes (a clean environment, the
 * credentials in a private file, the timeout, then a kill of the process group).
 *
 * upgrade_commands(state, ctx, commands, err): ctx (borrowed) is
 *   {"tenant": <Tenant>, "machines": [<its Machines>], "nodeGroups": [<its NodeGroups>],
 *    "action": "upgrade" | "rollback", "component": "talos" | "kubernetes",
 *    "fromVersion": "1.12.0", "targetVersion": "1.12.1",
 *    "machine": <the Machine this step is about: the one to upgrade or roll back (talos),
 *                the control plane to run the upgrade through (kubernetes)>,
 *    "timeout": <milliseconds the step may take, from upgrade.machine_timeout>}
 * Append the commands to run, in order, to commands (an empty array, borrowed), each an
 * object as a probe is ("id", "tool", "args", "timeout" — here up to 24 hours —
 * "credentials"); a command with tool null runs nothing (a simulated cluster). None is
 * fine: the step is the health gate alone. A command that exits non-zero fails the step
 * (a failed upgrade is rolled back; a failed rollback fails the UpgradeRun). Without
 * upgrade_commands the host refuses upgrades of the plugin's tenants (precheck
 * "Supported").
 *
 * Etcd snapshots (ABI 1.3; optional, for cluster plugins). The host takes snapshots of a
 * tenant's etcd (on its schedule, or when asked) and restores one onto a tenant whose
 * control plane was lost. The plugin says which commands do it; the host runs them, one
 * after the other, exactly as it runs upgrade commands (a clean environment, the
 * credentials in a private file, the timeout, then a kill of the process group). A command
 * that exits non-zero, or is killed, fails the snapshot or the restore. A plugin still
 * never spawns a process nor touches a file: the commands do, or the host (simulate).
 *
 * etcd_commands(state, ctx, commands, err): ctx (borrowed) is
 *   {"tenant": <Tenant>, "machines": [<its Machines>],
 *    "action": "snapshot" | "restore",
 *    "machine": <the control-plane Machine to run it through: for "snapshot" one the host
 *                saw healthy; for "restore" the one to recover etcd on, re-created with
 *                the cluster's configuration and waiting to be bootstrapped>,
 *    "path": "<absolute path of a local file: where the snapshot is to be written
 *              (snapshot), or where it is (restore)>",
 *    "timeout": <milliseconds the whole operation may take>}
 * Append the commands to run, in order, to commands (an empty array, borrowed), each an
 * object as an upgrade command is ("id", "tool", "args", "timeout" up to 24 hours,
 * "credentials"), at most 16. A command with tool null runs nothing (a simulated
 * cluster); for a snapshot it may carry
 *   "simulate": {"write": "<text, at most 1 MiB, no NUL>"}
 * and the host then writes that text to path in its place (at most one such command; only
 * with tool null; refused for a restore). A snapshot needs at least one command that
 * writes path: one with a tool, or one with simulate.write.
 * What the host does around them:
 *   snapshot  before: path does not exist; its directory is the host's, private (0700),
 *             and removed afterwards with whatever else the commands left in it (talosctl
 *             writes <path>.part and renames it). After every command exited 0: path must
 *             be a non-empty regular file, else the snapshot failed; the host records its
 *             size and checksum, encrypts it and stores it in the tenant's backup target.
 *             The plaintext never leaves that directory.
 *   restore   before: the host has fetched the chosen snapshot, checked its checksum
 *             against the one recorded when it was taken, and decrypted it to path (0600,
 *             in a private directory); the commands only read it. After: the host removes
 *             it, and observation says whether the control plane came back.
 * Without etcd_commands the host takes no snapshots of the plugin's tenants (they are
 * skipped with that reason) and refuses to restore them.
 */
#ifndef REZUS_PLUGIN_H
#define REZUS_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <rezus/errors.h>
#include <rezus/host.h>
#include <rezus/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REZUS_PLUGIN_MAGIC 0x525a504cu /* "RZPL" */

#if defined(__GNUC__)
#define REZUS_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define REZUS_PLUGIN_EXPORT
#endif

/* What a plugin provides: machines for node groups, a cluster, or both. */
enum {
	REZUS_PLUGIN_INFRA = 1u << 0,
	REZUS_PLUGIN_CLUSTER = 1u << 1,
};

/* Frozen: never changes in any ABI version. */
typedef struct rezus_plugin_header {
	uint32_t magic;
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t struct_size;
	uint32_t flags; /* reserved, 0 */
} rezus_plugin_header_t;

typedef struct rezus_plugin rezus_plugin_t;

struct rezus_plugin {
	rezus_plugin_header_t header; /* REZUS_PLUGIN_HEADER_INIT */

	const char *name;          /* [a-z0-9_-], the file's name without ".so" */
	const char *version;       /* the plugin's own version, e.g. "1.2.0" */
	const char *description;   /* one line */
	uint32_t kinds;            /* REZUS_PLUGIN_INFRA and/or REZUS_PLUGIN_CLUSTER */
	const char *config_schema; /* JSON Schema text of its rezus.conf section, or NULL */
	const char *provider_config_schema; /* JSON Schema text of providerConfig, or NULL */

	/* Start: config is the plugin's own section of rezus.conf (borrowed; "required" already
	 * removed). Store what you need in *state (yours; released in fini). host stays valid
	 * until fini returns. 0, or a negative code with err filled. Required. */
	int (*init)(const rezus_host_t *host, const rezus_json_t *config, void **state,
	            rezus_err_t *err);

	/* Stop: release state. Required. */
	void (*fini)(void *state);

	/* Validate the config section without starting (rezuscloud --check-config). config is
	 * borrowed. 0, or a negative code with err filled. Optional. */
	int (*check_config)(const rezus_host_t *host, const rezus_json_t *config, rezus_err_t *err);

	/* Validate a NodeGroup (borrowed, the whole object). Append one cause per problem to
	 * causes (borrowed array): {"field": path under spec.providerConfig, e.g. "shape" or
	 * "volumes[0].size", "reason": a Kubernetes cause type, "message"}. Return 0 (even with
	 * causes), or a negative code when validation itself failed. Required for infra. */
	int (*validate_nodegroup)(void *state, const rezus_json_t *nodegroup, rezus_json_t *causes);

	/* Render the tenant (see the contract above). tenant_ctx is borrowed; out is an empty
	 * object (borrowed) to fill. 0, or a negative code with err filled. Required. */
	int (*render)(void *state, const rezus_json_t *tenant_ctx, rezus_json_t *out,
	              rezus_err_t *err);

	/* The projection rules as JSON text. Borrowed — static, valid while loaded. Required. */
	const char *(*projection_rules)(void *state);

	/* NULL-terminated names or globs of environment variables the TF provider needs
	 * ("OCI_*"). Borrowed — static. Optional. */
	const char *const *(*env_allowlist)(void *state);

	/* --- ABI 1.1 --- */

	/* The probes that observe a tenant (see "Observation" above). ctx is borrowed; probes an
	 * empty array (borrowed) to fill. 0, or a negative code with err filled. Optional
	 * (cluster plugins); with observe_parse. */
	int (*observe_probes)(void *state, const rezus_json_t *ctx, rezus_json_t *probes,
	                      rezus_err_t *err);

	/* One probe's result as facts (see "Observation" above). probe and result are
	 * borrowed; facts an empty object (borrowed) to fill. 0, or a negative code with err
	 * filled. Optional; with observe_probes. */
	int (*observe_parse)(void *state, const rezus_json_t *probe, const rezus_json_t *result,
	                     rezus_json_t *facts, rezus_err_t *err);

	/* --- ABI 1.2 --- */

	/* The commands of one upgrade step (see "Upgrades" above). ctx is borrowed; commands
	 * an empty array (borrowed) to fill. 0, or a negative code with err filled. Optional
	 * (cluster plugins). */
	int (*upgrade_commands)(void *state, const rezus_json_t *ctx, rezus_json_t *commands,
	                        rezus_err_t *err);

	/* --- ABI 1.3 --- */

	/* The commands that take or restore an etcd snapshot (see "Etcd snapshots" above).
	 * ctx is borrowed; commands an empty array (borrowed) to fill. 0, or a negative code
	 * with err filled. Optional (cluster plugins). */
	int (*etcd_commands)(void *state, const rezus_json_t *ctx, rezus_json_t *commands,
	                     rezus_err_t *err);
};

/* The size of the ABI 1.0 layout: the least struct_size the host accepts. */
#define REZUS_PLUGIN_SIZE_1_0                                                                      \
	(offsetof(rezus_plugin_t, env_allowlist) + sizeof(((rezus_plugin_t *)0)->env_allowlist))

/* The size of the ABI 1.1 layout (with observation). */
#define REZUS_PLUGIN_SIZE_1_1                                                                      \
	(offsetof(rezus_plugin_t, observe_parse) + sizeof(((rezus_plugin_t *)0)->observe_parse))

/* The size of the ABI 1.2 layout (with upgrades). */
#define REZUS_PLUGIN_SIZE_1_2                                                                      \
	(offsetof(rezus_plugin_t, upgrade_commands) +                                              \
	 sizeof(((rezus_plugin_t *)0)->upgrade_commands))

/* The size of the ABI 1.3 layout (with etcd snapshots). */
#define REZUS_PLUGIN_SIZE_1_3                                                                      \
	(offsetof(rezus_plugin_t, etcd_commands) + sizeof(((rezus_plugin_t *)0)->etcd_commands))

#define REZUS_PLUGIN_HEADER_INIT                                                                   \
	{                                                                                          \
		REZUS_PLUGIN_MAGIC, REZUS_ABI_MAJOR, REZUS_ABI_MINOR,                              \
		    (uint32_t)sizeof(rezus_plugin_t), 0                                            \
	}

/* The one symbol a plugin exports (defined by the plugin, looked up by the host). */
REZUS_PLUGIN_EXPORT const rezus_plugin_t *rezus_plugin_entry(void);
typedef const rezus_plugin_t *(*rezus_plugin_entry_fn)(void);
#define REZUS_PLUGIN_ENTRY "rezus_plugin_entry"

#ifdef __cplusplus
}
#endif

#endif /* REZUS_PLUGIN_H */
