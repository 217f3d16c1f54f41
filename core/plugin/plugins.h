/*
 * core/plugin/plugins.h - the plugin host (SPEC §6.1): loading, the ordered refusal checks, the
 * host services table, calling into plugins, and the Provider objects that show them.
 */
#ifndef RZ_PLUGINS_H
#define RZ_PLUGINS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <rezus/plugin.h>

#include "core/base/config.h"
#include "core/base/errors.h"
#include "core/plugin/projection.h"
#include "core/store/store.h"

typedef struct rz_plugins rz_plugins_t;

/* One plugin listed under plugins:, loaded or refused. */
typedef struct rz_plugin {
	char name[64];
	char file[4096]; /* the path tried */
	bool loaded;     /* checks passed (and init succeeded, when started) */
	bool required;
	char error[256];     /* why it was refused, when it was */
	rezus_plugin_t desc; /* the descriptor, zero-extended to this host's layout */
	char abi[16];        /* "1.0" as the plugin declared it */
} rz_plugin_t;

/* Load every plugin cfg lists from cfg->plugin_dir (<dir>/<name>.so, or in a build tree
 * <dir>/.libs/<name>.so). With start, call each one's init with its own config subtree;
 * without, call check_config instead (--check-config). A refusal is logged once (plugin,
 * file, reason) and kept for /api/v1/providers. Returns REZUS_ECONFIG with err naming the
 * first required plugin that failed; optional ones are only disabled. *out is set either
 * way (caller owns; rz_plugins_free()). */
int rz_plugins_load(rz_plugins_t **out, const rz_config_t *cfg, bool start, rz_err_t *err);

/* fini every started plugin, unload. Accepts NULL. */
void rz_plugins_free(rz_plugins_t *p);

size_t rz_plugins_count(const rz_plugins_t *p);
const rz_plugin_t *rz_plugins_at(const rz_plugins_t *p, size_t i);

/* A loaded plugin by name; NULL when none. Borrowed. */
const rz_plugin_t *rz_plugins_find(const rz_plugins_t *p, const char *name);

/* Write one Provider object per listed plugin (loaded or refused) to the store, and remove
 * Provider objects of plugins no longer listed. */
int rz_plugins_publish(rz_plugins_t *p, rz_store_t *store, rz_err_t *err);

/* The NodeGroup validation hook: route node group ng (borrowed) by its providerClass to
 * the owning plugin and append its causes (fields prefixed "spec.providerConfig.") to
 * causes. An unknown or refused plugin is a cause on spec.providerClass. */
void rz_plugins_validate_nodegroup(rz_plugins_t *p, const json_t *ng, json_t *causes);

/* The Tenant validation hook: spec.clusterProvider must name a loaded cluster plugin, on
 * create and whenever it changes (old: the stored tenant, or NULL). */
void rz_plugins_validate_tenant(rz_plugins_t *p, const json_t *tenant, const json_t *old,
                                json_t *causes);

/* Render one plugin for a tenant: ctx is the tenant context (borrowed), *out a new object
 * (caller owns) with the plugin's blocks. A plugin error, or output that breaks the
 * contract, is REZUS_ERENDER with the plugin's message. */
int rz_plugins_render(rz_plugins_t *p, const char *name, const json_t *ctx, json_t **out,
                      rz_err_t *err);

/* Remember which resources each plugin rendered for tenant: scope is
 * {"<plugin>": ["<type>.<name>", ...], ...} (takes ownership, also on failure), replacing
 * what the tenant's last composition left. rz_compose() calls it. */
int rz_plugins_set_scope(rz_plugins_t *p, const char *tenant, json_t *scope, rz_err_t *err);

/* What the tenant's last composition in this process rendered, per plugin (borrowed, valid
 * until the next composition of the tenant), or NULL when there is no record. */
const json_t *rz_plugins_scope(const rz_plugins_t *p, const char *tenant);

/* Run a loaded plugin's projection rules over a state document (see core/plugin/projection.h)
 * on the resources it rendered: scope (borrowed) is a tenant's record as rz_plugins_scope()
 * gives it, the plugin's own list taken from it (none listed: nothing projected); NULL
 * projects every resource of the state. *objects is a new array (caller owns). */
int rz_plugins_project(rz_plugins_t *p, const char *name, const json_t *state, const json_t *scope,
                       json_t **objects, rz_err_t *err);

/* A loaded plugin's parsed projection rules (borrowed, valid while loaded); NULL when it
 * is not loaded. */
const rz_projection_t *rz_plugins_rules(const rz_plugins_t *p, const char *name);

/* Observation (ABI 1.1, rezus/plugin.h "Observation"). True when the loaded plugin name
 * observes its tenants. */
bool rz_plugins_observes(const rz_plugins_t *p, const char *name);

/* The probes plugin name asks for, for the context ctx (borrowed), checked against the
 * contract with its defaults filled in: *probes is a new array (caller owns). A plugin
 * error or a broken contract is an error naming the plugin. */
int rz_plugins_observe_probes(rz_plugins_t *p, const char *name, const json_t *ctx, json_t **probes,
                              rz_err_t *err);

/* What one probe's result shows: *facts is a new object (caller owns), checked against
 * the contract. */
int rz_plugins_observe_parse(rz_plugins_t *p, const char *name, const json_t *probe,
                             const json_t *result, json_t **facts, rz_err_t *err);

/* Upgrades (ABI 1.2): whether plugin name (a cluster plugin) offers upgrades. */
bool rz_plugins_upgrades(const rz_plugins_t *p, const char *name);

/* The commands of one upgrade step, checked against the contract (rezus/plugin.h,
 * "Upgrades"); ctx borrowed, caller owns *commands. 0, RZ_ENOTFOUND (not loaded, or no
 * upgrades), or the plugin's code / REZUS_EINVALID with err saying why. */
int rz_plugins_upgrade_commands(rz_plugins_t *p, const char *name, const json_t *ctx,
                                json_t **commands, rz_err_t *err);

/* Etcd snapshots (ABI 1.3): whether plugin name (a cluster plugin) takes and restores etcd
 * snapshots. False for a plugin built against an older ABI. */
bool rz_plugins_has_etcd(const rz_plugins_t *p, const char *name);

/* The commands that take (ctx.action "snapshot") or restore ("restore") an etcd snapshot,
 * checked against the contract (rezus/plugin.h, "Etcd snapshots"); ctx borrowed, caller
 * owns *commands. Run them in order like upgrade commands: one with tool null runs nothing,
 * and for its "simulate": {"write": text} the host writes text to ctx.path instead (1 MiB
 * at most). 0, RZ_ENOTFOUND (not loaded, or no etcd snapshots), REZUS_EINVALID for a ctx
 * without a known action or an absolute path, or the plugin's code / REZUS_EINVALID with
 * err saying why. */
int rz_plugins_etcd_commands(rz_plugins_t *p, const char *name, const json_t *ctx,
                             json_t **commands, rz_err_t *err);

#endif /* RZ_PLUGINS_H */
