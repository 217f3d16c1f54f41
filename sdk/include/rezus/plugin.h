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
 *
 * The render contract (SPEC §6.2). render() receives the tenant context, a borrowed object:
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
 *   "resource", "data", "provider", "locals", "output": TF JSON blocks (PROTOCOLS.md §3)
 *   "exports": {name: "<TF expression>"} for other plugins
 * Every TF name of a node group's resources starts with the group's tf_name(); every user
 * string embedded in a template goes through tf_escape(). Credentials never appear in the
 * output: list the environment variables the provider reads in env_allowlist.
 *
 * Projection rules (projection_rules()): static JSON text, a list of
 *   {"type": "<TF resource type>", "kind": "Machine",
 *    "fields": {"<Machine spec field>": ["<attribute path>", ...], ...}}
 * Each instance of the type becomes one object; a field takes the first non-empty attribute.
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
};

/* The size of the ABI 1.0 layout: the least struct_size the host accepts. */
#define REZUS_PLUGIN_SIZE_1_0                                                                      \
	(offsetof(rezus_plugin_t, env_allowlist) + sizeof(((rezus_plugin_t *)0)->env_allowlist))

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
