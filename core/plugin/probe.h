/*
 * core/plugin/probe.h - the observation contract of plugin ABI 1.1 (rezus/plugin.h,
 * "Observation"), checked on the host's side: the probes a plugin asks for and the facts
 * it reads from their results; and the commands of upgrades (1.2) and etcd snapshots (1.3),
 * which are probes with their own limits. Used by the plugin host and rezus-plugin-check.
 */
#ifndef RZ_PROBE_H
#define RZ_PROBE_H

#include <jansson.h>

#include "core/base/errors.h"

#define RZ_PROBE_MAX         4096       /* probes per tenant and observation */
#define RZ_PROBE_ARGS_MAX    64         /* arguments after the tool */
#define RZ_PROBE_TIMEOUT_MIN 100        /* ms */
#define RZ_PROBE_TIMEOUT_MAX 120000     /* ms */
#define RZ_PROBE_TIMEOUT_DEF 10000      /* ms */
#define RZ_PROBE_STDOUT_MAX  (4u << 20) /* bytes of a probe's stdout handed to the plugin */
#define RZ_PROBE_STDERR_MAX  (64u << 10)

/* Check probes (a plugin's array, modified in place): every member as the contract says,
 * ids unique; fills the defaults (args [], timeout, credentials "none"). 0, or
 * REZUS_EINVALID with err naming the probe (by index and id) and the member at fault. */
int rz_probe_check(json_t *probes, rz_err_t *err);

#define RZ_UPGRADE_COMMANDS_MAX        16
#define RZ_UPGRADE_COMMAND_TIMEOUT_MAX (24LL * 3600 * 1000) /* ms */

/* Check the commands of an upgrade step (ABI 1.2, upgrade_commands) as probes are checked,
 * with their own limits (at most 16, timeouts up to 24 hours). */
int rz_probe_check_commands(json_t *commands, rz_err_t *err);

#define RZ_ETCD_COMMANDS_MAX        16
#define RZ_ETCD_COMMAND_TIMEOUT_MAX (24LL * 3600 * 1000) /* ms */
#define RZ_ETCD_SIMULATE_MAX        (1u << 20)           /* bytes of simulate.write */

/* Check the commands of an etcd snapshot or restore (ABI 1.3, etcd_commands; action is
 * ctx.action, "snapshot" or "restore") as upgrade commands are checked, and their
 * "simulate" member: {"write": text of at most 1 MiB without NUL}, only with tool null,
 * only for a snapshot, on one command at most. A snapshot needs a command that writes the
 * file (a tool, or simulate.write). 0, or REZUS_EINVALID with err naming the command. */
int rz_probe_check_etcd_commands(json_t *commands, const char *action, rz_err_t *err);

/* Check facts from observe_parse: only the contract's members, of their types; stages from
 * the contract's list. 0, or REZUS_EINVALID with err naming the member. */
int rz_probe_check_facts(const json_t *facts, rz_err_t *err);

/* Merge facts (checked) into into: per machine and for the tenant, later members win. */
void rz_probe_merge(json_t *into, const json_t *facts);

/* True when stage is one of the contract's stage names. */
int rz_probe_stage_known(const char *stage);

#endif /* RZ_PROBE_H */
