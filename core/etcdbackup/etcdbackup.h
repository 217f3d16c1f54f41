/*
 * core/etcdbackup/etcdbackup.h - the tenants' etcd snapshots (docs/backups.md, "Tenants'
 * etcd"): taken on each tenant's schedule (spec.etcdBackup, defaults from rezus.conf's
 * etcd_backup) or when an EtcdBackup is created, through the tenant's cluster plugin (ABI
 * 1.3, etcd_commands: talosctl etcd snapshot against a healthy control plane), encrypted
 * (core/offsite/seal.h) and stored in the tenant's target (core/offsite/target.h); the
 * oldest beyond spec.etcdBackup.keep deleted with their files. An EtcdRestore brings one
 * back onto a tenant whose control plane is lost: Precheck, Download, Verify, Restore
 * (talosctl bootstrap --recover-from), WaitHealthy; a dry run stops after Verify.
 *
 * One snapshot or restore runs at a time; the rest wait, Pending. Commands run through the
 * observer (rz_observer_exec: the tenant's credentials, the timeout, a kill); encryption
 * and transfers run on the worker pool, never on the loop. A snapshot or restore found
 * Running at start was cut off by the daemon's stop: it is marked Failed, saying so.
 */
#ifndef RZ_ETCDBACKUP_H
#define RZ_ETCDBACKUP_H

#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/base/workers.h"
#include "core/observe/observe.h"
#include "core/plugin/plugins.h"
#include "core/store/bus.h"
#include "core/store/store.h"

struct event_base;

typedef struct rz_etcd_opts {
	int64_t interval_ms;  /* a tenant's default interval; 0: none scheduled */
	int keep;             /* a tenant's default number kept */
	const char *target;   /* a tenant's default target: "local" or "s3" */
	const char *dir;      /* the local target's directory */
	const char *key_file; /* the sealing keys (made when missing) */
	const char *work_dir; /* for snapshots in the clear while they are handled (0700) */
	int64_t timeout_ms;   /* one snapshot's or restore's commands; a restore's wait */
	const json_t *s3;     /* the s3 target's settings (rz_target_open), or NULL: none */
	int64_t tick_ms;      /* how often schedules are looked at; 0: 30 s */
} rz_etcd_opts_t;

typedef struct rz_etcd rz_etcd_t;

/* Everything borrowed must outlive it (opts' strings and s3 are copied). Fails when the
 * keys cannot be read or made, or a configured target is invalid. */
int rz_etcd_new(rz_etcd_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                rz_plugins_t *plugins, rz_observer_t *observer, rz_workers_t *workers,
                const rz_etcd_opts_t *opts, rz_err_t *err);

/* Kill the command running and start nothing more (what was Running is marked Failed at
 * the next start): before the observer goes. Accepts NULL. */
void rz_etcd_stop(rz_etcd_t *e);

/* Stop (if not yet) and free: after the worker pool is freed (its done() callbacks use
 * it). Accepts NULL. */
void rz_etcd_free(rz_etcd_t *e);

/* The management plane's backup file path (named name) sealed and stored in the target
 * named target ("local" or "s3") as management/<name>.sealed, the oldest there beyond keep
 * deleted. Blocking, safe on a worker thread (the backups' job; the keys and targets do not
 * change once made). 0, or an error in err. */
int rz_etcd_offload(rz_etcd_t *e, const char *target, const char *path, const char *name, int keep,
                    rz_err_t *err);

/* Snapshots and restores waiting or running (for tests and shutdown). */
size_t rz_etcd_busy(const rz_etcd_t *e);

#endif /* RZ_ETCDBACKUP_H */
