/*
 * core/plugin/projection.h - projection rules (SPEC §6.2, §7.4): which TF resources of a tenant's
 * state become which objects, and which attributes fill which fields. Plugins state rules
 * as static JSON; the core parses them at load time and runs them after every apply.
 * Pure functions: no store, no I/O.
 *
 * Rules document: a JSON array of
 *   {"type": "terraform_data",            TF resource type (managed resources only)
 *    "kind": "Machine",                   the object kind produced
 *    "when": {"input.role": "machine"},   optional: attribute path -> required string value
 *    "nodeGroup": ["input.nodeGroup"],    optional: attribute paths naming the node group;
 *                                         default: the TF resource name
 *    "fields": {"address": ["public_ip", "private_ip"], ...}}   spec field -> attribute paths
 * Attribute paths are dotted ("input.address", "network.0.ip"). A path matches terraform_data's
 * dynamically typed values in both shapes: {"input": {"value": {...}, "type": ...}} and the
 * plain {"input": {...}}.
 *
 * Scope: the host runs a plugin's rules only on the resources that plugin rendered (see
 * rz_plugins_scope()), so one plugin's rule on a shared type never claims another's.
 */
#ifndef RZ_PROJECTION_H
#define RZ_PROJECTION_H

#include <jansson.h>

#include "core/base/errors.h"

typedef struct rz_projection rz_projection_t;

/* Parse and check a rules document (text, borrowed). Errors (REZUS_EINVALID) name the rule
 * index and the problem: "rule 2: \"fields\" must be an object of arrays of strings".
 * Caller owns *out; rz_projection_free(). */
int rz_projection_parse(const char *text, rz_projection_t **out, rz_err_t *err);
void rz_projection_free(rz_projection_t *p);

/* Run the rules over a state v4 document (borrowed; PROTOCOLS.md §4), on the resources
 * in scope: scope (borrowed) is an array of "<type>.<name>" addresses of root-module
 * resources, the ones the plugin rendered; NULL puts every resource in scope (a state with
 * no record of who rendered it). Returns a new array (caller owns) of
 *   {"kind": "Machine", "name": "<nodegroup>-<index_key>" (sanitised to a DNS-1123 label),
 *    "nodeGroup": "...", "tfAddress": "<type>.<name>[<index>]" ("module.x." prefix when in a
 *    module), "spec": {<field>: <first non-empty attribute value, as a string>, ...}}
 * sorted by name. Instances without index_key are named after the node group alone. A
 * field whose paths are all empty or missing is left out. A value that is an array of
 * strings fills a field only when the spec field is "addresses" (kept as an array); other
 * non-scalar values are skipped. Data sources (mode "data") are ignored. An unparsable
 * state gives REZUS_EINVALID with a message. */
int rz_projection_run(const rz_projection_t *p, const json_t *state, const json_t *scope,
                      json_t **objects, rz_err_t *err);

/* The rules that could match another plugin's resources where they run unscoped: a rule
 * with no "when" on a type that is not the plugin's own, because it is built in
 * (terraform_data: provider "terraform") or because its provider (the type's first word,
 * "oci" of "oci_core_instance") is not among providers, the required_providers the plugin
 * declares (borrowed object; NULL: none). Appends one message per such rule to warnings
 * (borrowed array), e.g. "rule 0 (terraform_data): no \"when\" on a built-in type: ...".
 * Returns the number appended. */
size_t rz_projection_lint(const rz_projection_t *p, const json_t *providers, json_t *warnings);

#endif /* RZ_PROJECTION_H */
