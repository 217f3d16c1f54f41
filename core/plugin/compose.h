/*
 * core/plugin/compose.h - composition (SPEC §6.2, §7.2): a tenant's plugins rendered and merged
 * into the files of its TF working directory.
 *
 *   versions.tf.json        the one terraform block: merged required_providers and the backend
 *   variables.tf.json       every plugin's variables
 *   terraform.tfvars.json   every plugin's tfvars (written 0600)
 *   <plugin>.tf.json        each plugin's resource, data, provider, locals and output blocks
 *
 * Plugins: the tenant's cluster plugin (spec.clusterProvider) and every infra plugin named
 * by a node group's providerClass. Exports are resolved in two passes: every plugin renders
 * once without imports, then again with the others' exports as
 * imports {"<plugin>.<name>": "<expression>"}.
 *
 * A composition also says whose each resource is: the plugin host remembers, per tenant,
 * the "<type>.<name>" of every resource block each plugin rendered (rz_plugins_scope()),
 * and the projection after the apply runs a plugin's rules on its own resources only.
 */
#ifndef RZ_COMPOSE_H
#define RZ_COMPOSE_H

#include <jansson.h>

#include "core/base/errors.h"
#include "core/plugin/plugins.h"

/* Compose from a context (borrowed): {"tenant": {...}, "nodeGroups": [...],
 * "configPatches": [...]} — node groups of every plugin, patches in name order, enabled
 * ones only. backend (borrowed, may be NULL: local state) becomes
 * terraform.backend.http. *files (caller owns) maps file names to their JSON. On success,
 * which plugin rendered which resource is recorded for the tenant in p
 * (rz_plugins_set_scope()). Errors name the plugin: a render failure, two plugins that
 * disagree on a provider's source or version, or on a variable, or that render the same
 * resource. */
int rz_compose(rz_plugins_t *p, const json_t *ctx, const json_t *backend, json_t **files,
               rz_err_t *err);

/* The same composition for a copy that leaves the daemon (an export): no backend, and
 * nothing recorded for the tenant, so the projection of a run under way keeps the scope
 * its own composition recorded. *files: caller owns. */
int rz_compose_detached(rz_plugins_t *p, const json_t *ctx, json_t **files, rz_err_t *err);

/* Make the backend of a composition (files, as rz_compose gives them) {type: config},
 * in place of the one it has: terraform.backend of versions.tf.json, the one block tofu
 * reads a backend from. config is borrowed and copied; NULL is {} (a partial
 * configuration: tofu init -backend-config=... gives the rest). REZUS_EINVALID when files
 * has no versions.tf.json terraform block or type is empty. */
int rz_compose_set_backend(json_t *files, const char *type, const json_t *config, rz_err_t *err);

/* Write files into dir (created 0700 when missing): each file through a temporary and a
 * rename, sorted keys and two-space indents, terraform.tfvars.json 0600, other files
 * 0644; *.tf.json files of plugins no longer rendered are removed. */
int rz_compose_write(const json_t *files, const char *dir, rz_err_t *err);

#endif /* RZ_COMPOSE_H */
