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

/* Render one plugin for a tenant: ctx is the tenant context (borrowed), *out a new object
 * (caller owns) with the plugin's blocks. A plugin error, or output that breaks the
 * contract, is REZUS_ERENDER with the plugin's message. */
int rz_plugins_render(rz_plugins_t *p, const char *name, const json_t *ctx, json_t **out,
                      rz_err_t *err);

/* Observation (ABI 1.1; rezus/plugin.h "Observation"). The probes a cluster plugin asks for
 * a tenant: ctx is the observation context (borrowed), *probes a new array (caller owns). And
 * one probe's result read as facts: probe and result are borrowed, *facts a new object
 * (caller owns). A plugin that is not loaded or does not observe is RZ_ENOTFOUND; a plugin's
 * failure is its code with an error naming the plugin. */
int rz_plugins_observe_probes(rz_plugins_t *p, const char *name, const json_t *ctx, json_t **probes,
                              rz_err_t *err);
int rz_plugins_observe_parse(rz_plugins_t *p, const char *name, const json_t *probe,
                             const json_t *result, json_t **facts, rz_err_t *err);

/* Run a loaded plugin's projection rules over a state document (see core/plugin/projection.h).
 * *objects is a new array (caller owns). */
int rz_plugins_project(rz_plugins_t *p, const char *name, const json_t *state, json_t **objects,
                       rz_err_t *err);

#endif /* RZ_PLUGINS_H */
