/* core/etcdbackup/etcdbackup.c - the tenants' etcd snapshots: schedules, the snapshot and
 * restore jobs, retention, and the deletion of stored files. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/config.h"
#include "core/base/log.h"
#include "core/etcdbackup/etcdbackup.h"
#include "core/model/states.h"
#include "core/offsite/seal.h"
#include "core/offsite/target.h"
#include "core/report/report.h"
#include "core/store/events.h"

#define COMPONENT    "etcd-backup"
#define FINALIZER    "rezuscloud.io/stored-snapshot"
#define DEFAULT_TICK 30000
#define WAIT_POLL_MS 2000
#define ERROR_MAX    2048
#define DIR_MAX      900 /* the work directory's path, at most */

static const char *const step_names[] = { "Precheck", "Download", "Verify", "Restore",
	                                  "WaitHealthy" };

struct job {
	rz_etcd_t *e;
	bool restore, dry;
	char tenant[64], name[254], plugin[64];
	char dir[DIR_MAX + 330]; /* private (0700), made for the job, removed with it */
	char clear[DIR_MAX + 360], sealed[DIR_MAX + 380];
	json_t *commands; /* the plugin's, while they run */
	size_t next_cmd;
	rz_observer_cmd_t *running;
	rz_target_t *target; /* borrowed from e */
	char key[512];
	char machine[254], talos[64], k8s[64];
	char checksum[80];
	int step; /* a restore's step (RZ_ERSTEP_*) */
	struct event *wait;
	int64_t deadline_ns;
	/* the worker's result */
	bool work_is_delete;
	int work_rc;
	char work_err[ERROR_MAX];
	uint64_t size;
	char sha[65];
	char error[ERROR_MAX];
};

struct rz_etcd {
	struct event_base *base;
	rz_store_t *store;
	rz_bus_t *bus;
	rz_plugins_t *plugins;
	rz_observer_t *observer;
	rz_workers_t *workers;
	int64_t interval_ms, timeout_ms, tick_ms;
	int keep;
	char target[8];
	char *work_dir;
	rz_seal_keys_t *keys;
	rz_target_t *local, *s3;
	struct event *tick, *kick;
	uint64_t sub;
	struct job *cur;      /* the snapshot or restore running, or NULL */
	struct job *deleting; /* a stored file being deleted, or NULL */
	bool stopping;        /* rz_etcd_stop: what the pool finishes goes no further */
};

static void job_next(struct job *j);
static void kick(rz_etcd_t *e);

/* ------------------------------------------------------------------ helpers */

static const char *str(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_string_value(b != NULL ? json_object_get(v, b) : v);
}

static void now_text(char *buf, size_t size)
{
	rz_report_now(buf, size);
}

static const rz_kind_t *K(const char *kind)
{
	return rz_kind_by_name(kind);
}

static void job_free(struct job *j)
{
	if (j == NULL) {
		return;
	}
	if (j->running != NULL) {
		rz_observer_exec_cancel(j->e->observer, j->running);
	}
	if (j->wait != NULL) {
		event_free(j->wait);
	}
	if (j->dir[0] != '\0') {
		char part[sizeof(j->clear) + 8];
		snprintf(part, sizeof(part), "%s.part", j->clear); /* talosctl's, when killed */
		unlink(part);
		unlink(j->clear);
		unlink(j->sealed);
		rmdir(j->dir);
	}
	json_decref(j->commands);
	free(j);
}

static struct job *job_new(rz_etcd_t *e, bool restore, const char *tenant, const char *name)
{
	struct job *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		return NULL;
	}
	j->e = e;
	j->restore = restore;
	snprintf(j->tenant, sizeof(j->tenant), "%s", tenant);
	snprintf(j->name, sizeof(j->name), "%s", name);
	snprintf(j->dir, sizeof(j->dir), "%s/%s.%s", e->work_dir, tenant, name);
	snprintf(j->clear, sizeof(j->clear), "%s/etcd.snapshot", j->dir);
	snprintf(j->sealed, sizeof(j->sealed), "%s/etcd.snapshot.sealed", j->dir);
	return j;
}

/* The job's private directory, made empty: a snapshot's path must not exist beforehand
 * (plugin ABI 1.3). 0, or -1 with j->error. */
static int job_dir(struct job *j)
{
	char part[sizeof(j->clear) + 8];

	snprintf(part, sizeof(part), "%s.part", j->clear);
	unlink(part);
	unlink(j->clear);
	unlink(j->sealed);
	if (mkdir(j->dir, 0700) != 0 && errno != EEXIST) {
		snprintf(j->error, sizeof(j->error), "cannot make %s: %s", j->dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* The target named name ("local" or "s3"), or NULL with why in err. */
static rz_target_t *target_named(rz_etcd_t *e, const char *name, char *err, size_t size)
{
	if (name != NULL && strcmp(name, "s3") == 0) {
		if (e->s3 == NULL) {
			snprintf(err, size, "the s3 target is not configured (etcd_backup.s3)");
		}
		return e->s3;
	}
	return e->local;
}

/* A tenant's settings: its spec.etcdBackup's members, else the defaults. */
static void tenant_settings(const rz_etcd_t *e, const json_t *t, int64_t *interval_ms, int *keep,
                            const char **target)
{
	const json_t *eb = json_object_get(json_object_get(t, "spec"), "etcdBackup");
	const char *iv = json_string_value(json_object_get(eb, "interval"));
	json_t *kv = json_object_get(eb, "keep");

	*interval_ms = e->interval_ms;
	if (iv != NULL && rz_parse_duration(iv, interval_ms) != 0) {
		*interval_ms = e->interval_ms;
	}
	*keep = json_is_integer(kv) ? (int)json_integer_value(kv) : e->keep;
	*target = json_string_value(json_object_get(eb, "target"));
	if (*target == NULL) {
		*target = e->target;
	}
}

/* Write status fields (stolen) of the job's object. */
static void status(struct job *j, json_t *fields)
{
	rz_report_status(j->e->store, j->restore ? "EtcdRestore" : "EtcdBackup", j->tenant, j->name,
	                 fields);
}

static void event(struct job *j, const char *type, const char *reason, const char *message)
{
	rz_events_record(j->e->store, j->tenant, j->restore ? "EtcdRestore" : "EtcdBackup", j->name,
	                 type, reason, message, COMPONENT);
}

/* A control-plane Machine of the tenant observed ready (a new reference), or NULL. */
static json_t *healthy_control_plane(rz_store_t *st, const char *tenant)
{
	json_t *all = rz_store_list_all(st, "Machine", tenant), *m, *pick = NULL;
	size_t i;

	json_array_foreach(all, i, m)
	{
		const char *role = str(m, "spec", "role");
		if (role != NULL && strcmp(role, "controlplane") == 0 &&
		    json_is_true(json_object_get(json_object_get(m, "status"), "ready"))) {
			pick = json_incref(m);
			break;
		}
	}
	json_decref(all);
	return pick;
}

/* Any control-plane Machine of the tenant, the first by name (a new reference), or NULL. */
static json_t *first_control_plane(rz_store_t *st, const char *tenant)
{
	json_t *all = rz_store_list_all(st, "Machine", tenant), *m, *pick = NULL;
	size_t i;

	json_array_foreach(all, i, m)
	{
		const char *role = str(m, "spec", "role");
		if (role != NULL && strcmp(role, "controlplane") == 0) {
			pick = json_incref(m);
			break;
		}
	}
	json_decref(all);
	return pick;
}

/* ------------------------------------------------------------------ commands */

static void command_done(void *arg, int status, bool timed_out, const char *out, const char *err)
{
	struct job *j = arg;
	json_t *c = json_array_get(j->commands, j->next_cmd - 1);
	size_t n = strlen(err);

	(void)out;
	j->running = NULL;
	if (status != 0 || timed_out) {
		const char *tail;
		while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' ')) {
			n--;
		}
		tail = n > 300 ? err + n - 300 : err;
		snprintf(j->error, sizeof(j->error), "%s %s %s: %.*s",
		         str(c, "tool", NULL) ? str(c, "tool", NULL) : "command",
		         str(c, "id", NULL) ? str(c, "id", NULL) : "",
		         timed_out ? "timed out" : "failed", (int)(n - (size_t)(tail - err)), tail);
	}
	job_next(j);
}

/* A simulated snapshot: what the plugin gave, written where the command would have. */
static int simulate(struct job *j, const json_t *c)
{
	const char *text = str(json_object_get(c, "simulate"), "write", NULL);
	int fd;
	ssize_t w;

	if (text == NULL) {
		return 0;
	}
	fd = open(j->clear, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(j->error, sizeof(j->error), "cannot write %s: %s", j->clear,
		         strerror(errno));
		return -1;
	}
	w = write(fd, text, strlen(text));
	if (w < 0 || (size_t)w != strlen(text) || close(fd) != 0) {
		snprintf(j->error, sizeof(j->error), "cannot write %s", j->clear);
		if (w >= 0) {
			close(fd);
		}
		return -1;
	}
	return 0;
}

/* Run the next command; false when none is left (or one failed to start: j->error). */
static bool run_next_command(struct job *j)
{
	rz_err_t err = { 0 };

	while (j->error[0] == '\0' && j->commands != NULL &&
	       j->next_cmd < json_array_size(j->commands)) {
		json_t *c = json_array_get(j->commands, j->next_cmd++);
		if (!json_is_string(json_object_get(c, "tool"))) {
			if (simulate(j, c) != 0) {
				return false;
			}
			continue;
		}
		if (rz_observer_exec(j->e->observer, j->tenant, c, command_done, j, &j->running,
		                     &err) != 0) {
			snprintf(j->error, sizeof(j->error), "%s cannot start: %s",
			         str(c, "tool", NULL), err.msg);
			return false;
		}
		return true;
	}
	return false;
}

/* Ask the plugin for the commands of action through machine, path the file. */
static int plugin_commands(struct job *j, const char *action, const json_t *tenant,
                           const json_t *machine, const char *path)
{
	rz_etcd_t *e = j->e;
	json_t *ctx =
	    json_pack("{s:O, s:o, s:s, s:O, s:s, s:I}", "tenant", tenant, "machines",
	              rz_store_list_all(e->store, "Machine", j->tenant), "action", action,
	              "machine", machine, "path", path, "timeout", (json_int_t)e->timeout_ms);
	rz_err_t err = { 0 };
	int rc;

	json_decref(j->commands);
	j->commands = NULL;
	j->next_cmd = 0;
	rc = ctx != NULL ? rz_plugins_etcd_commands(e->plugins, j->plugin, ctx, &j->commands, &err)
	                 : rz_err_set(&err, -ENOMEM, "out of memory");
	json_decref(ctx);
	if (rc != 0) {
		snprintf(j->error, sizeof(j->error), "%s", err.msg);
	}
	return rc;
}

/* ------------------------------------------------------------------ work off the loop */

/* A snapshot's file sealed and stored. */
static void work_store(void *arg)
{
	struct job *j = arg;
	rz_err_t err = { 0 };

	j->work_rc = rz_seal_file(j->e->keys, j->clear, j->sealed, &j->size, j->sha, &err);
	if (j->work_rc == 0) {
		j->work_rc = rz_target_put(j->target, j->key, j->sealed, &err);
	}
	snprintf(j->work_err, sizeof(j->work_err), "%s", j->work_rc != 0 ? err.msg : "");
	unlink(j->clear);
	unlink(j->sealed);
}

/* A restore's file fetched and opened. */
static void work_fetch(void *arg)
{
	struct job *j = arg;
	rz_err_t err = { 0 };

	if (j->step == RZ_ERSTEP_DOWNLOAD) {
		j->work_rc = rz_target_get(j->target, j->key, j->sealed, &err);
	} else {
		j->work_rc =
		    rz_unseal_file(j->e->keys, j->sealed, j->clear, &j->size, j->sha, &err);
		unlink(j->sealed);
	}
	snprintf(j->work_err, sizeof(j->work_err), "%s", j->work_rc != 0 ? err.msg : "");
}

static void work_done(void *arg, int canceled)
{
	struct job *j = arg;

	if (canceled || j->e->stopping) {
		if (j->e->cur == j) {
			j->e->cur = NULL;
		}
		job_free(j);
		return;
	}
	if (j->work_rc != 0) {
		snprintf(j->error, sizeof(j->error), "%s", j->work_err);
	}
	job_next(j);
}

/* ------------------------------------------------------------------ snapshots */

enum { SNAP_START = 100, SNAP_COMMANDS, SNAP_STORED };

static void finish(struct job *j)
{
	rz_etcd_t *e = j->e;

	if (e->cur == j) {
		e->cur = NULL;
	}
	job_free(j);
	kick(e);
}

/* The tenant's succeeded snapshots beyond keep, oldest first, are deleted. */
static void prune(rz_etcd_t *e, const char *tenant, int keep)
{
	json_t *all = rz_store_list_all(e->store, "EtcdBackup", tenant), *b;
	size_t i, n = 0, ok = 0;

	json_array_foreach(all, i, b)
	{
		ok += rz_etcd_backup_phase_of(str(b, "status", "phase")) == RZ_EB_SUCCEEDED &&
		      str(b, "metadata", "deletionTimestamp") == NULL;
	}
	/* rz_store_list_all lists by name; names are random: go by creation */
	while (ok > (size_t)keep && n++ < json_array_size(all)) {
		json_t *oldest = NULL, *out = NULL;
		rz_err_t err = { 0 };
		bool gone = false;
		json_array_foreach(all, i, b)
		{
			if (rz_etcd_backup_phase_of(str(b, "status", "phase")) != RZ_EB_SUCCEEDED ||
			    str(b, "metadata", "deletionTimestamp") != NULL ||
			    json_is_true(json_object_get(b, "pruned"))) {
				continue;
			}
			if (oldest == NULL ||
			    strcmp(str(b, "metadata", "creationTimestamp") ?: "",
			           str(oldest, "metadata", "creationTimestamp") ?: "") < 0) {
				oldest = b;
			}
		}
		if (oldest == NULL) {
			break;
		}
		json_object_set_new(oldest, "pruned", json_true()); /* our copy only */
		if (rz_store_delete(e->store, K("EtcdBackup"), tenant,
		                    str(oldest, "metadata", "name"), 0, NULL, &out, &gone,
		                    &err) != 0) {
			rz_log_warn("etcd-backup", "cannot prune %s/%s: %s", tenant,
			            str(oldest, "metadata", "name"), err.msg);
		}
		json_decref(out);
		ok--;
	}
	json_decref(all);
}

static void snapshot_over(struct job *j, int phase, const char *reason, const char *message)
{
	rz_etcd_t *e = j->e;
	char now[32];
	json_t *fields;

	now_text(now, sizeof(now));
	fields = json_pack("{s:s, s:s, s:s}", "phase", rz_etcd_backup_phase_name(phase),
	                   "finishedAt", now, "message", message != NULL ? message : "");
	if (phase == RZ_EB_SUCCEEDED) {
		char sum[80];
		snprintf(sum, sizeof(sum), "sha256:%s", j->sha);
		json_object_set_new(fields, "size", json_integer((json_int_t)j->size));
		json_object_set_new(fields, "checksum", json_string(sum));
		json_object_set_new(fields, "key", json_string(j->key));
		json_object_set_new(fields, "target", json_string(rz_target_where(j->target)));
		json_object_del(fields, "message");
	}
	status(j, fields);
	if (phase == RZ_EB_SUCCEEDED) {
		char msg[600];
		int64_t interval;
		int keep;
		const char *target;
		json_t *t = NULL;
		rz_err_t err = { 0 };
		snprintf(msg, sizeof(msg), "%s: %" PRIu64 " bytes, stored in %s", j->name, j->size,
		         rz_target_where(j->target));
		event(j, "Normal", "SnapshotStored", msg);
		rz_report_tenant_condition(e->store, j->tenant, "EtcdBackup", "True", "Succeeded",
		                           msg);
		if (rz_store_get(e->store, K("Tenant"), NULL, j->tenant, &t, &err) == 0) {
			tenant_settings(e, t, &interval, &keep, &target);
			prune(e, j->tenant, keep);
		}
		json_decref(t);
	} else {
		event(j, "Warning", reason, message);
		rz_report_tenant_condition(e->store, j->tenant, "EtcdBackup", "False", reason,
		                           message);
	}
	finish(j);
}

/* Start a snapshot: the tenant, its plugin, a healthy control plane; then the commands. */
static void snapshot_start(struct job *j)
{
	rz_etcd_t *e = j->e;
	json_t *t = NULL, *m;
	rz_err_t err = { 0 };
	int64_t interval;
	int keep;
	const char *target, *cp;
	char now[32], why[512] = "";

	if (rz_store_get(e->store, K("Tenant"), NULL, j->tenant, &t, &err) != 0) {
		snapshot_over(j, RZ_EB_FAILED, "TenantGone", "the tenant is gone");
		return;
	}
	tenant_settings(e, t, &interval, &keep, &target);
	cp = str(t, "spec", "clusterProvider");
	snprintf(j->plugin, sizeof(j->plugin), "%s", cp != NULL ? cp : "talos");
	snprintf(j->talos, sizeof(j->talos), "%s",
	         str(t, "status", "talosVersion") ?: str(t, "spec", "talosVersion") ?: "");
	snprintf(j->k8s, sizeof(j->k8s), "%s",
	         str(t, "status", "kubernetesVersion") ?: str(t, "spec", "kubernetesVersion") ?: "");
	j->target = target_named(e, target, why, sizeof(why));
	if (j->target == NULL) {
		json_decref(t);
		snapshot_over(j, RZ_EB_FAILED, "NoTarget", why);
		return;
	}
	if (!rz_plugins_has_etcd(e->plugins, j->plugin)) {
		snprintf(why, sizeof(why), "the cluster plugin %s cannot take etcd snapshots",
		         j->plugin);
		json_decref(t);
		snapshot_over(j, RZ_EB_SKIPPED, "NotSupported", why);
		return;
	}
	m = healthy_control_plane(e->store, j->tenant);
	if (m == NULL) {
		json_decref(t);
		snapshot_over(j, RZ_EB_SKIPPED, "NoHealthyControlPlane",
		              "no control-plane machine is observed ready: etcd cannot be read");
		return;
	}
	snprintf(j->machine, sizeof(j->machine), "%s", str(m, "metadata", "name") ?: "");
	snprintf(j->key, sizeof(j->key), "%s/%s.etcd.sealed", j->tenant, j->name);
	now_text(now, sizeof(now));
	status(j, json_pack("{s:s, s:s, s:s, s:s, s:s}", "phase", "Running", "startedAt", now,
	                    "machine", j->machine, "talosVersion", j->talos, "kubernetesVersion",
	                    j->k8s));
	j->step = SNAP_COMMANDS;
	if (job_dir(j) != 0) {
		json_decref(m);
		json_decref(t);
		snapshot_over(j, RZ_EB_FAILED, "SnapshotFailed", j->error);
		return;
	}
	if (plugin_commands(j, "snapshot", t, m, j->clear) != 0) {
		json_decref(m);
		json_decref(t);
		snapshot_over(j, RZ_EB_FAILED, "SnapshotFailed", j->error);
		return;
	}
	json_decref(m);
	json_decref(t);
	job_next(j);
}

static void snapshot_next(struct job *j)
{
	struct stat sb;

	if (j->step == SNAP_START) {
		snapshot_start(j);
		return;
	}
	if (j->error[0] != '\0') {
		snapshot_over(j, RZ_EB_FAILED, "SnapshotFailed", j->error);
		return;
	}
	if (j->step == SNAP_COMMANDS) {
		if (run_next_command(j)) {
			return; /* command_done goes on */
		}
		if (j->error[0] != '\0') {
			snapshot_over(j, RZ_EB_FAILED, "SnapshotFailed", j->error);
			return;
		}
		if (stat(j->clear, &sb) != 0 || sb.st_size == 0) {
			snapshot_over(j, RZ_EB_FAILED, "SnapshotFailed",
			              "the snapshot's commands left no snapshot");
			return;
		}
		j->step = SNAP_STORED;
		if (rz_workers_submit(j->e->workers, work_store, work_done, j) != 0) {
			snapshot_over(j, RZ_EB_FAILED, "SnapshotFailed", "cannot queue the upload");
		}
		return;
	}
	snapshot_over(j, RZ_EB_SUCCEEDED, "Succeeded", NULL);
}

/* ------------------------------------------------------------------ restores */

static void restore_steps(struct job *j, int upto, const char *phase, const char *message)
{
	json_t *r = NULL, *steps;
	rz_err_t err = { 0 };
	char now[32];

	if (rz_store_get(j->e->store, K("EtcdRestore"), j->tenant, j->name, &r, &err) != 0) {
		return;
	}
	steps = json_deep_copy(json_object_get(json_object_get(r, "status"), "steps"));
	json_decref(r);
	if (json_array_size(steps) != RZ_ERSTEP_COUNT) {
		json_decref(steps);
		steps = json_array();
		for (int i = 0; i < RZ_ERSTEP_COUNT; i++) {
			json_array_append_new(steps, json_pack("{s:s, s:s}", "name", step_names[i],
			                                       "phase", "Pending"));
		}
	}
	now_text(now, sizeof(now));
	{
		json_t *s = json_array_get(steps, (size_t)upto);
		if (strcmp(phase, "Running") == 0) {
			json_object_set_new(s, "startedAt", json_string(now));
		} else {
			json_object_set_new(s, "finishedAt", json_string(now));
		}
		json_object_set_new(s, "phase", json_string(phase));
		if (message != NULL) {
			json_object_set_new(s, "message", json_string(message));
		}
	}
	status(j, json_pack("{s:o}", "steps", steps));
}

static void restore_over(struct job *j, bool ok, const char *message)
{
	char now[32];

	now_text(now, sizeof(now));
	if (!ok && j->step < RZ_ERSTEP_COUNT) {
		restore_steps(j, j->step, "Failed", message);
	}
	status(j, json_pack("{s:s, s:s, s:s}", "phase", ok ? "Succeeded" : "Failed", "finishedAt",
	                    now, "message", message));
	event(j, ok ? "Normal" : "Warning", ok ? "RestoreSucceeded" : "RestoreFailed", message);
	finish(j);
}

static void wait_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	job_next(arg);
}

/* The tenant's control plane observed healthy: a ready control-plane Machine, and the
 * cluster plugin's word when it gave one. */
static bool control_plane_back(rz_etcd_t *e, const char *tenant)
{
	json_t *m = healthy_control_plane(e->store, tenant), *t = NULL;
	rz_err_t err = { 0 };
	bool ok = m != NULL;

	json_decref(m);
	if (ok && rz_store_get(e->store, K("Tenant"), NULL, tenant, &t, &err) == 0) {
		const json_t *h = json_object_get(
		    json_object_get(json_object_get(t, "status"), "controlPlane"), "healthy");
		ok = !json_is_false(h);
	}
	json_decref(t);
	return ok;
}

/* Precheck: the backup is this tenant's, Succeeded; the plugin restores; the control plane
 * is lost (a restore onto a healthy one would replace its data). */
static bool restore_precheck(struct job *j, char *why, size_t size)
{
	rz_etcd_t *e = j->e;
	json_t *r = NULL, *b = NULL, *t = NULL;
	rz_err_t err = { 0 };
	const char *bname, *cp, *tname;
	bool ok = false;

	if (rz_store_get(e->store, K("EtcdRestore"), j->tenant, j->name, &r, &err) != 0 ||
	    rz_store_get(e->store, K("Tenant"), NULL, j->tenant, &t, &err) != 0) {
		snprintf(why, size, "%s", err.msg);
		goto out;
	}
	j->dry = json_is_true(json_object_get(json_object_get(r, "spec"), "dryRun"));
	bname = str(r, "spec", "backup");
	if (rz_store_get(e->store, K("EtcdBackup"), j->tenant, bname ? bname : "", &b, &err) != 0) {
		snprintf(why, size, "etcdbackup %s: %s", bname ? bname : "", err.msg);
		goto out;
	}
	if (rz_etcd_backup_phase_of(str(b, "status", "phase")) != RZ_EB_SUCCEEDED ||
	    str(b, "status", "key") == NULL) {
		snprintf(why, size, "etcdbackup %s is %s, not Succeeded: nothing stored to restore",
		         bname, str(b, "status", "phase") ?: "Pending");
		goto out;
	}
	cp = str(t, "spec", "clusterProvider");
	snprintf(j->plugin, sizeof(j->plugin), "%s", cp != NULL ? cp : "talos");
	if (!rz_plugins_has_etcd(e->plugins, j->plugin)) {
		snprintf(why, size, "the cluster plugin %s cannot restore etcd", j->plugin);
		goto out;
	}
	snprintf(j->key, sizeof(j->key), "%s", str(b, "status", "key"));
	snprintf(j->checksum, sizeof(j->checksum), "%s", str(b, "status", "checksum") ?: "");
	tname = strncmp(str(b, "status", "target") ?: "", "s3://", 5) == 0 ? "s3" : "local";
	j->target = target_named(e, tname, why, size);
	if (j->target == NULL) {
		goto out;
	}
	if (!j->dry && control_plane_back(e, j->tenant)) {
		snprintf(
		    why, size,
		    "the control plane is healthy: a restore replaces etcd's data and is for a "
		    "control plane that is lost (a dry run shows what it would do)");
		goto out;
	}
	snprintf(j->talos, sizeof(j->talos), "%s", str(b, "status", "talosVersion") ?: "");
	snprintf(j->k8s, sizeof(j->k8s), "%s", str(b, "status", "kubernetesVersion") ?: "");
	ok = true;
out:
	json_decref(r);
	json_decref(b);
	json_decref(t);
	return ok;
}

static void restore_next(struct job *j)
{
	rz_etcd_t *e = j->e;
	char why[ERROR_MAX] = "", now[32];

	if (j->error[0] != '\0') {
		char msg[ERROR_MAX];
		snprintf(msg, sizeof(msg), "%s", j->error);
		restore_over(j, false, msg);
		return;
	}
	switch (j->step) {
	case -1: /* start */
		now_text(now, sizeof(now));
		status(j, json_pack("{s:s, s:s}", "phase", "Running", "startedAt", now));
		event(j, "Normal", "RestoreStarted", "the restore's prechecks begin");
		j->step = RZ_ERSTEP_PRECHECK;
		restore_steps(j, j->step, "Running", NULL);
		if (!restore_precheck(j, why, sizeof(why))) {
			restore_over(j, false, why);
			return;
		}
		restore_steps(j, j->step, "Succeeded", NULL);
		j->step = RZ_ERSTEP_DOWNLOAD;
		restore_steps(j, j->step, "Running", NULL);
		if (job_dir(j) != 0) {
			restore_over(j, false, j->error);
			return;
		}
		if (rz_workers_submit(e->workers, work_fetch, work_done, j) != 0) {
			restore_over(j, false, "cannot queue the download");
		}
		return;
	case RZ_ERSTEP_DOWNLOAD:
		restore_steps(j, j->step, "Succeeded", rz_target_where(j->target));
		j->step = RZ_ERSTEP_VERIFY;
		restore_steps(j, j->step, "Running", NULL);
		if (rz_workers_submit(e->workers, work_fetch, work_done, j) != 0) {
			restore_over(j, false, "cannot queue the decryption");
		}
		return;
	case RZ_ERSTEP_VERIFY: {
		char sum[80], msg[ERROR_MAX];
		json_t *t = NULL, *m;
		rz_err_t err = { 0 };
		snprintf(sum, sizeof(sum), "sha256:%s", j->sha);
		if (strcmp(sum, j->checksum) != 0) {
			snprintf(msg, sizeof(msg),
			         "the snapshot's checksum is %s, recorded %s: refused", sum,
			         j->checksum);
			restore_over(j, false, msg);
			return;
		}
		snprintf(msg, sizeof(msg), "%" PRIu64 " bytes, %s as recorded", j->size, sum);
		restore_steps(j, j->step, "Succeeded", msg);
		j->step = RZ_ERSTEP_RESTORE;
		if (rz_store_get(e->store, K("Tenant"), NULL, j->tenant, &t, &err) != 0 ||
		    (m = first_control_plane(e->store, j->tenant)) == NULL) {
			json_decref(t);
			restore_over(j, false,
			             "the tenant has no control-plane machine to restore onto");
			return;
		}
		snprintf(j->machine, sizeof(j->machine), "%s", str(m, "metadata", "name") ?: "");
		if (plugin_commands(j, "restore", t, m, j->clear) != 0) {
			json_decref(m);
			json_decref(t);
			restore_over(j, false, j->error);
			return;
		}
		json_decref(m);
		json_decref(t);
		if (j->dry) {
			char plan[ERROR_MAX];
			size_t n = 0, i;
			json_t *c;
			n += (size_t)snprintf(plan, sizeof(plan),
			                      "dry run: would restore %s (Talos %s, Kubernetes %s) "
			                      "through %s:",
			                      j->key, j->talos, j->k8s, j->machine);
			json_array_foreach(j->commands, i, c)
			{
				if (n < sizeof(plan)) {
					n += (size_t)snprintf(plan + n, sizeof(plan) - n, " %s %s;",
					                      str(c, "tool", NULL) ?: "(simulated)",
					                      str(c, "id", NULL) ?: "");
				}
			}
			restore_steps(j, RZ_ERSTEP_RESTORE, "Skipped", "dry run");
			restore_steps(j, RZ_ERSTEP_WAIT_HEALTHY, "Skipped", "dry run");
			j->step = RZ_ERSTEP_COUNT;
			restore_over(j, true, plan);
			return;
		}
		restore_steps(j, j->step, "Running", j->machine);
		event(j, "Normal", "RestoreRunning", "the cluster plugin's restore commands run");
	}
		/* fall through */
	case RZ_ERSTEP_RESTORE:
		if (run_next_command(j)) {
			return;
		}
		if (j->error[0] != '\0') {
			restore_next(j);
			return;
		}
		unlink(j->clear);
		restore_steps(j, j->step, "Succeeded", NULL);
		j->step = RZ_ERSTEP_WAIT_HEALTHY;
		restore_steps(j, j->step, "Running", NULL);
		j->deadline_ns = rz_clock_mono_ns() + e->timeout_ms * 1000000;
		/* fall through */
	case RZ_ERSTEP_WAIT_HEALTHY: {
		struct timeval tv = { WAIT_POLL_MS / 1000, (WAIT_POLL_MS % 1000) * 1000 };
		if (control_plane_back(e, j->tenant)) {
			restore_steps(j, j->step, "Succeeded", NULL);
			j->step = RZ_ERSTEP_COUNT;
			snprintf(why, sizeof(why), "restored %s; the control plane is healthy",
			         j->key);
			restore_over(j, true, why);
			return;
		}
		if (rz_clock_mono_ns() > j->deadline_ns) {
			restore_over(j, false,
			             "the control plane did not become healthy within "
			             "etcd_backup.timeout");
			return;
		}
		if (j->wait == NULL) {
			j->wait = evtimer_new(e->base, wait_tick, j);
		}
		if (j->wait == NULL || evtimer_add(j->wait, &tv) != 0) {
			restore_over(j, false, "out of memory");
		}
		return;
	}
	default:
		restore_over(j, false, "internal error: unknown step");
	}
}

static void job_next(struct job *j)
{
	if (j->restore) {
		restore_next(j);
	} else {
		snapshot_next(j);
	}
}

/* ------------------------------------------------------------------ deletions */

static void work_delete(void *arg)
{
	struct job *j = arg;
	rz_err_t err = { 0 };

	j->work_rc = rz_target_delete(j->target, j->key, &err);
	snprintf(j->work_err, sizeof(j->work_err), "%s", j->work_rc != 0 ? err.msg : "");
}

static void delete_done(void *arg, int canceled)
{
	struct job *j = arg;
	rz_etcd_t *e = j->e;

	if (!canceled && !e->stopping) {
		if (j->work_rc != 0) {
			rz_log_warn("etcd-backup",
			            "cannot delete %s's stored snapshot %s: %s (kept; "
			            "the deletion is tried again)",
			            j->name, j->key, j->work_err);
			event(j, "Warning", "DeleteFailed", j->work_err);
		} else {
			json_t *b = NULL, *out = NULL, *fin, *keep = json_array(), *f;
			rz_err_t err = { 0 };
			size_t i;
			if (rz_store_get(e->store, K("EtcdBackup"), j->tenant, j->name, &b, &err) ==
			    0) {
				fin = json_object_get(json_object_get(b, "metadata"), "finalizers");
				json_array_foreach(fin, i, f)
				{
					if (strcmp(json_string_value(f) ?: "", FINALIZER) != 0) {
						json_array_append(keep, f);
					}
				}
				json_object_set(json_object_get(b, "metadata"), "finalizers", keep);
				rz_store_update(e->store, K("EtcdBackup"), j->tenant, j->name, b, 0,
				                RZ_UPDATE_SPEC, NULL, &out, NULL, &err);
			}
			json_decref(keep);
			json_decref(out);
			json_decref(b);
		}
	}
	if (e->deleting == j) {
		e->deleting = NULL;
	}
	job_free(j);
	if (!canceled && !e->stopping) {
		kick(e);
	}
}

/* A deleted EtcdBackup (deletionTimestamp, our finalizer): its stored file goes, then the
 * finalizer. One at a time. True when one was started. */
static bool start_deletion(rz_etcd_t *e, const json_t *b)
{
	const char *key = str(b, "status", "key"), *tenant = str(b, "metadata", "tenant");
	char why[256];
	struct job *j;

	if (e->deleting != NULL ||
	    (e->cur != NULL && !e->cur->restore && strcmp(e->cur->tenant, tenant ?: "") == 0 &&
	     strcmp(e->cur->name, str(b, "metadata", "name") ?: "") == 0)) {
		return false; /* one at a time; and not under the snapshot still being stored */
	}
	j = job_new(e, false, tenant ? tenant : "", str(b, "metadata", "name") ?: "");
	if (j == NULL) {
		return false;
	}
	j->dir[0] = '\0'; /* no files of its own */
	snprintf(j->key, sizeof(j->key), "%s", key != NULL ? key : "");
	j->target = target_named(
	    e, strncmp(str(b, "status", "target") ?: "", "s3://", 5) == 0 ? "s3" : "local", why,
	    sizeof(why));
	j->work_is_delete = true;
	if (key == NULL || j->target == NULL) {
		j->work_rc = 0; /* nothing stored, or nowhere to reach it: only the finalizer */
		e->deleting = j;
		delete_done(j, 0);
		return true;
	}
	e->deleting = j;
	if (rz_workers_submit(e->workers, work_delete, delete_done, j) != 0) {
		e->deleting = NULL;
		job_free(j);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------ the loop */

static bool has_finalizer(const json_t *o)
{
	const json_t *fin = json_object_get(json_object_get(o, "metadata"), "finalizers"), *f;
	size_t i;

	json_array_foreach(fin, i, f)
	{
		if (strcmp(json_string_value(f) ?: "", FINALIZER) == 0) {
			return true;
		}
	}
	return false;
}

/* The oldest Pending object of kind in objs (borrowed), or NULL. */
static const json_t *oldest_pending(const json_t *objs)
{
	const json_t *o, *best = NULL;
	size_t i;

	json_array_foreach(objs, i, o)
	{
		if (strcmp(str(o, "status", "phase") ?: "Pending", "Pending") != 0 ||
		    str(o, "metadata", "deletionTimestamp") != NULL) {
			continue;
		}
		if (best == NULL || strcmp(str(o, "metadata", "creationTimestamp") ?: "",
		                           str(best, "metadata", "creationTimestamp") ?: "") < 0) {
			best = o;
		}
	}
	return best;
}

/* Start what waits: deletions, then a restore before any snapshot. */
static void work(evutil_socket_t fd, short what, void *arg)
{
	rz_etcd_t *e = arg;
	json_t *backups = rz_store_list_all(e->store, "EtcdBackup", NULL);
	json_t *restores = NULL;
	const json_t *b, *pick;
	size_t i;

	(void)fd;
	(void)what;
	json_array_foreach(backups, i, b)
	{
		if (str(b, "metadata", "deletionTimestamp") != NULL && has_finalizer(b) &&
		    start_deletion(e, b)) {
			break;
		}
	}
	if (e->cur == NULL) {
		restores = rz_store_list_all(e->store, "EtcdRestore", NULL);
		pick = oldest_pending(restores);
		if (pick != NULL) {
			e->cur = job_new(e, true, str(pick, "metadata", "tenant"),
			                 str(pick, "metadata", "name"));
			if (e->cur != NULL) {
				e->cur->step = -1;
			}
		} else if ((pick = oldest_pending(backups)) != NULL) {
			e->cur = job_new(e, false, str(pick, "metadata", "tenant"),
			                 str(pick, "metadata", "name"));
			if (e->cur != NULL) {
				e->cur->step = SNAP_START;
			}
		}
		if (e->cur != NULL) {
			job_next(e->cur);
		}
	}
	json_decref(restores);
	json_decref(backups);
}

static void kick(rz_etcd_t *e)
{
	event_active(e->kick, EV_TIMEOUT, 0);
}

/* Each tenant whose last snapshot is older than its interval gets a new one, Pending.
 * Returns in how many ms the next is due (e->tick_ms at most). */
static int64_t schedule(rz_etcd_t *e)
{
	int64_t next = e->tick_ms;
	json_t *tenants = rz_store_list_all(e->store, "Tenant", NULL);
	json_t *backups = rz_store_list_all(e->store, "EtcdBackup", NULL), *t, *b;
	int64_t now_ms = rz_clock_now_ms();
	size_t i, k;

	json_array_foreach(tenants, i, t)
	{
		const char *name = str(t, "metadata", "name"), *target, *cp;
		const char *newest = NULL;
		int64_t interval, then;
		int keep;
		bool waiting = false;
		tenant_settings(e, t, &interval, &keep, &target);
		cp = str(t, "spec", "clusterProvider");
		if (interval <= 0 || name == NULL ||
		    str(t, "metadata", "deletionTimestamp") != NULL ||
		    !rz_plugins_has_etcd(e->plugins, cp != NULL ? cp : "talos") ||
		    str(t, "status", "lastApplied") == NULL) {
			continue; /* off, going, unsupported, or nothing built yet */
		}
		json_array_foreach(backups, k, b)
		{
			const char *c = str(b, "metadata", "creationTimestamp");
			int phase = rz_etcd_backup_phase_of(str(b, "status", "phase"));
			if (strcmp(str(b, "metadata", "tenant") ?: "", name) != 0 || c == NULL) {
				continue;
			}
			waiting = waiting || phase == RZ_EB_PENDING || phase == RZ_EB_RUNNING;
			if (newest == NULL || strcmp(c, newest) > 0) {
				newest = c;
			}
		}
		if (waiting) {
			continue;
		}
		if (newest == NULL) { /* the first: one interval after the cluster was applied */
			newest = str(t, "status", "lastApplied");
		}
		if (newest != NULL && (then = rz_clock_parse(newest)) >= 0 &&
		    now_ms - then < interval) {
			next = then + interval - now_ms < next ? then + interval - now_ms : next;
			continue;
		}
		next = interval < next ? interval : next;
		{
			json_t *obj =
			    json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "generateName",
			              "etcd-", "tenant", name, "spec", "trigger", "schedule");
			json_t *out = NULL;
			rz_err_t err = { 0 };
			char gen[32];
			snprintf(gen, sizeof(gen), "etcd-%08" PRIx32, randombytes_random());
			json_object_set_new(json_object_get(obj, "metadata"), "name",
			                    json_string(gen));
			json_object_del(json_object_get(obj, "metadata"), "generateName");
			if (rz_store_create(e->store, K("EtcdBackup"), obj, NULL, &out, &err) !=
			    0) {
				rz_log_warn("etcd-backup", "cannot schedule %s's snapshot: %s",
				            name, err.msg);
			}
			json_decref(out);
			json_decref(obj);
		}
	}
	json_decref(backups);
	json_decref(tenants);
	return next;
}

/* Look at the schedules again in ms (at least 1 s apart). */
static void arm(rz_etcd_t *e, int64_t ms)
{
	struct timeval tv;

	ms = ms < 1000 ? 1000 : ms;
	tv = rz_clock_timer(ms);
	evtimer_add(e->tick, &tv);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	rz_etcd_t *e = arg;

	(void)fd;
	(void)what;
	arm(e, schedule(e));
	kick(e);
}

static void on_event(const rz_event_t *ev, void *arg)
{
	rz_etcd_t *e = arg;

	if (strcmp(ev->kind->kind, "EtcdBackup") == 0 ||
	    strcmp(ev->kind->kind, "EtcdRestore") == 0) {
		kick(e);
	} else if (ev->spec_changed && strcmp(ev->kind->kind, "Tenant") == 0) {
		struct timeval when, now;
		/* its schedule may have changed: look within a second (not later each time
		 * another change comes) */
		if (!event_pending(e->tick, EV_TIMEOUT, &when) ||
		    event_base_gettimeofday_cached(e->base, &now) != 0 ||
		    (when.tv_sec - now.tv_sec) * 1000 + (when.tv_usec - now.tv_usec) / 1000 >
		        1000) {
			arm(e, 1000);
		}
	}
}

/* What the last daemon left Running was cut off: Failed, saying so. */
static void fail_interrupted(rz_etcd_t *e)
{
	static const char *const kinds[] = { "EtcdBackup", "EtcdRestore" };

	for (size_t n = 0; n < 2; n++) {
		json_t *all = rz_store_list_all(e->store, kinds[n], NULL), *o;
		size_t i;
		json_array_foreach(all, i, o)
		{
			char now[32];
			if (strcmp(str(o, "status", "phase") ?: "", "Running") != 0) {
				continue;
			}
			now_text(now, sizeof(now));
			rz_report_status(
			    e->store, kinds[n], str(o, "metadata", "tenant"),
			    str(o, "metadata", "name"),
			    json_pack("{s:s, s:s, s:s}", "phase", "Failed", "finishedAt", now,
			              "message",
			              "interrupted by the daemon's stop; start another"));
		}
		json_decref(all);
	}
}

int rz_etcd_new(rz_etcd_t **out, struct event_base *base, rz_store_t *store, rz_bus_t *bus,
                rz_plugins_t *plugins, rz_observer_t *observer, rz_workers_t *workers,
                const rz_etcd_opts_t *o, rz_err_t *err)
{
	rz_etcd_t *e = calloc(1, sizeof(*e));
	int64_t tick = o->tick_ms > 0 ? o->tick_ms : DEFAULT_TICK;
	struct timeval tv = { 1, 0 }; /* the first look, once the daemon is up */
	json_t *local;
	int rc;

	*out = NULL;
	if (e == NULL) {
		return rz_err_set(err, -ENOMEM, "etcd-backup: out of memory");
	}
	e->base = base;
	e->store = store;
	e->bus = bus;
	e->plugins = plugins;
	e->observer = observer;
	e->workers = workers;
	e->interval_ms = o->interval_ms;
	e->keep = o->keep > 0 ? o->keep : 7;
	e->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 600000;
	e->tick_ms = tick;
	snprintf(e->target, sizeof(e->target), "%s", o->target != NULL ? o->target : "local");
	if (strlen(o->work_dir) > DIR_MAX) {
		rz_etcd_free(e);
		return rz_err_set(err, REZUS_ECONFIG,
		                  "etcd-backup: the data dir's path is too long");
	}
	e->work_dir = strdup(o->work_dir);
	if (e->work_dir == NULL) {
		rz_etcd_free(e);
		return rz_err_set(err, -ENOMEM, "etcd-backup: out of memory");
	}
	if (mkdir(e->work_dir, 0700) != 0 && errno != EEXIST) {
		rc = rz_err_set(err, -errno, "etcd-backup: cannot make %s: %s", e->work_dir,
		                strerror(errno));
		rz_etcd_free(e);
		return rc;
	}
	local = json_pack("{s:s, s:s}", "type", "local", "dir", o->dir);
	rc = rz_seal_keys_load(&e->keys, o->key_file, err);
	if (rc == 0) {
		rc = rz_target_open(&e->local, local, err);
	}
	json_decref(local);
	if (rc == 0 && o->s3 != NULL) {
		rc = rz_target_open(&e->s3, o->s3, err);
	}
	if (rc != 0) {
		rz_etcd_free(e);
		return rc;
	}
	fail_interrupted(e);
	e->tick = evtimer_new(base, on_tick, e);
	e->kick = event_new(base, -1, 0, work, e);
	e->sub = rz_bus_subscribe(bus, on_event, e);
	if (e->tick == NULL || e->kick == NULL || e->sub == 0 || evtimer_add(e->tick, &tv) != 0) {
		rz_etcd_free(e);
		return rz_err_set(err, -ENOMEM, "etcd-backup: cannot start");
	}
	kick(e);
	*out = e;
	return 0;
}

void rz_etcd_stop(rz_etcd_t *e)
{
	if (e == NULL || e->stopping) {
		return;
	}
	e->stopping = true;
	if (e->sub != 0) {
		rz_bus_unsubscribe(e->bus, e->sub);
		e->sub = 0;
	}
	if (e->tick != NULL) {
		event_del(e->tick);
	}
	if (e->kick != NULL) {
		event_del(e->kick);
	}
	if (e->cur != NULL && e->cur->running != NULL) {
		rz_observer_exec_cancel(e->observer, e->cur->running);
		e->cur->running = NULL;
	}
	if (e->cur != NULL && e->cur->wait != NULL) {
		event_del(e->cur->wait);
	}
}

void rz_etcd_free(rz_etcd_t *e)
{
	if (e == NULL) {
		return;
	}
	rz_etcd_stop(e);
	if (e->tick != NULL) {
		event_free(e->tick);
	}
	if (e->kick != NULL) {
		event_free(e->kick);
	}
	job_free(e->cur); /* not on the pool: rz_etcd_free comes after the pool's */
	rz_target_free(e->local);
	rz_target_free(e->s3);
	rz_seal_keys_free(e->keys);
	free(e->work_dir);
	free(e);
}

int rz_etcd_offload(rz_etcd_t *e, const char *target, const char *path, const char *name, int keep,
                    rz_err_t *err)
{
	char why[256] = "", sealed[DIR_MAX + 320], key[320];
	rz_target_t *t = target_named(e, target, why, sizeof(why));
	json_t *items = NULL;
	uint64_t size;
	char sha[65];
	int rc;

	if (t == NULL) {
		return rz_err_set(err, REZUS_ECONFIG, "%s", why);
	}
	snprintf(key, sizeof(key), "management/%s.sealed", name);
	snprintf(sealed, sizeof(sealed), "%s/management-%s.sealed", e->work_dir, name);
	rc = rz_seal_file(e->keys, path, sealed, &size, sha, err);
	if (rc == 0) {
		rc = rz_target_put(t, key, sealed, err);
	}
	unlink(sealed);
	if (rc == 0 && rz_target_list(t, "management/", &items, err) == 0) {
		/* names sort as the backups were taken: the first are the oldest */
		size_t n = json_array_size(items);
		for (size_t i = 0; keep > 0 && i + (size_t)keep < n; i++) {
			rz_err_t derr = { 0 };
			const char *k =
			    json_string_value(json_object_get(json_array_get(items, i), "key"));
			if (k != NULL && rz_target_delete(t, k, &derr) != 0) {
				rz_log_warn("backup", "cannot prune %s: %s", k, derr.msg);
			}
		}
		json_decref(items);
	}
	return rc;
}

size_t rz_etcd_busy(const rz_etcd_t *e)
{
	return (e->cur != NULL) + (e->deleting != NULL);
}
