/*
 * core/observe/observe.h - the observer (SPEC §0, the status plane): every tenant that has
 * Machines is observed on an interval through its cluster plugin (plugin ABI 1.1,
 * "Observation"). The plugin says which probes to run; the observer runs them — a bounded
 * number at a time, never on the tofu pool's slots — with the tenant's talosconfig or
 * kubeconfig in a private 0600 file that is removed afterwards, hands each result back to
 * the plugin, and writes what changed: Machine.status (stage, ready, talosVersion,
 * nodeReady, lastSeen, lastError) and Tenant.status.controlPlane, as status writes that
 * never trigger a run. Then the tenant's counts, conditions and phase are derived again
 * (core/report/report.c). An idle fleet writes nothing: a status is written only when it
 * changed, and lastSeen is refreshed at most every ten intervals (as the kubelet reports an
 * unchanged node status every five minutes). Observation never touches TF state.
 */
#ifndef RZ_OBSERVE_H
#define RZ_OBSERVE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/tfstate/tfstate.h"
#include "core/plugin/plugins.h"
#include "core/store/bus.h"
#include "core/store/store.h"

struct event_base;

typedef struct rz_observer_opts {
	int64_t interval_ms;          /* a settled tenant */
	int64_t fast_interval_ms;     /* a tenant provisioning, degraded or upgrading */
	int64_t stable_interval_ms;   /* the longest a settled tenant's interval grows to while its
	                                 observations find nothing new (0: interval_ms) */
	int64_t provision_timeout_ms; /* handed to the phase derivation */
	int workers;                  /* probes running at once */
	int64_t probe_timeout_ms;     /* a probe's timeout is cut to this (0: none) */
	const char *talosctl;         /* the binaries of the logical tools */
	const char *kubectl;
	const char *tmpdir; /* private directory for credential files (created 0700) */
} rz_observer_opts_t;

typedef struct rz_observer rz_observer_t;

/* The wait before a tenant's next observation. settled: Ready or Failed, no upgrade under
 * way; changed: the observation wrote what it found new (a lastSeen kept fresh is not
 * new); *quiet_ms: the tenant's settled interval so far (0 at first), updated. A settled
 * tenant whose observations find nothing new is observed at interval_ms, then twice that,
 * and so on up to stable_interval_ms; anything new, a tenant not settled, or a kick brings
 * it back to interval_ms (fast_interval_ms while not settled). */
int64_t rz_observer_next_wait(const rz_observer_opts_t *o, bool settled, bool changed,
                              int64_t *quiet_ms);

/* Counters for /metrics. */
typedef struct rz_observer_stats {
	uint64_t probes[4];    /* by outcome: ok, failed, timeout, error (the plugin's) */
	double seconds[4];     /* summed duration by outcome */
	uint64_t observations; /* tenant observations completed */
	uint64_t writes;       /* status writes they caused */
	uint64_t running;      /* probes running now */
	uint64_t queued;       /* probes waiting for a slot */
} rz_observer_stats_t;

extern const char *const rz_observer_outcomes[4]; /* "ok", "failed", "timeout", "error" */

/* Everything borrowed (opts' strings too) must outlive the observer. Each tenant's first
 * observation comes at a random moment within one interval. */
int rz_observer_new(rz_observer_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                    rz_plugins_t *plugins, rz_tfstate_t *tfstate, const rz_observer_opts_t *opts,
                    rz_err_t *err);

/* Kill running probes, remove their credential files, free. Accepts NULL. */
void rz_observer_free(rz_observer_t *o);

void rz_observer_stats(const rz_observer_t *o, rz_observer_stats_t *out);

/* Observe tenant now (unless an observation of it is already going), e.g. when one of its
 * machines was just upgraded. */
void rz_observer_kick(rz_observer_t *o, const char *tenant);

/* A command run for another module (an upgrade step, rezus/plugin.h "Upgrades"): command
 * is an object as a probe is (tool, args, timeout, credentials; checked by the caller),
 * run at once — outside the probe slots — the way probes run: clean environment, the
 * tenant's credentials in a private file removed afterwards, the timeout, then a kill of
 * the process group. done gets the exit status (128 + signal), whether it timed out, and
 * the output kept (stdout up to 4 MiB, stderr up to 64 KiB), on the loop, once; never
 * before rz_observer_exec returned. 0 with *out a handle, or an error (nothing runs and
 * done is never called). */
typedef struct rz_observer_cmd rz_observer_cmd_t;
typedef void (*rz_observer_done_fn)(void *arg, int status, bool timed_out, const char *out,
                                    const char *err);
int rz_observer_exec(rz_observer_t *o, const char *tenant, const json_t *command,
                     rz_observer_done_fn done, void *arg, rz_observer_cmd_t **out, rz_err_t *err);

/* Kill a command still running and forget it: done is not called. */
void rz_observer_exec_cancel(rz_observer_t *o, rz_observer_cmd_t *cmd);

#endif /* RZ_OBSERVE_H */
