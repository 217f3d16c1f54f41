/* core/api/backups.c - the Backup resource and the backup schedule. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "core/api/backups.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"
#include "core/store/backup.h"
#include "core/store/restore.h"

#define BACKUP_REQUEST_MAX 4096 /* bytes of a POST body: {kind, metadata: {name}, spec} */

#define LIST_MAX   10000 /* backups a list reads */
#define MIN_WAIT_S 1     /* the schedule's shortest wait */

struct job {
	rz_backups_t *b;
	rz_req_t *req; /* NULL for a scheduled backup */
	char name[64];
	const char *trigger;
	json_t *manifest;
	int64_t size;
	rz_err_t err;
	int rc, pruned;
	double started;
};

struct rz_backups {
	struct event_base *base;
	rz_workers_t *workers;
	rz_access_t *access;
	char *db_path, *key_path, *dir, *passphrase_file;
	bool scheduled;
	int64_t interval_ms;
	int keep;
	int (*offload)(void *arg, const char *path, const char *name, int keep, rz_err_t *err);
	void *offload_arg;
	struct event *timer;
	struct job *running; /* the one backup being written, or NULL */
	rz_route_t routes[2];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ objects */

static json_t *backup_object(const char *name, const char *created, json_t *spec, json_t *status)
{
	json_t *meta = json_pack("{s:s}", "name", name);

	if (created != NULL) {
		json_object_set_new(meta, "creationTimestamp", json_string(created));
	}
	return json_pack("{s:s, s:s, s:o, s:o, s:o}", "apiVersion", RZ_API_VERSION, "kind",
	                 "Backup", "metadata", meta, "spec", spec, "status", status);
}

/* A Backup from a manifest and its file's size. */
static json_t *from_manifest(const json_t *m, int64_t size)
{
	static const char *const head[] = { "format", "name", "createdAt", "trigger" };
	const char *name = json_string_value(json_object_get(m, "name"));
	const char *trigger = json_string_value(json_object_get(m, "trigger"));
	json_t *status = json_deep_copy(m);
	char file[128];

	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++) {
		json_object_del(status, head[i]);
	}
	snprintf(file, sizeof(file), "%s%s", name ? name : "", RZ_BACKUP_SUFFIX);
	json_object_set_new(status, "phase", json_string("Completed"));
	json_object_set_new(status, "file", json_string(file));
	json_object_set_new(status, "size", json_integer(size));
	return backup_object(name ? name : "", json_string_value(json_object_get(m, "createdAt")),
	                     json_pack("{s:s}", "trigger", trigger ? trigger : "manual"), status);
}

/* A Backup from an entry of rz_backup_list. */
static json_t *from_entry(const json_t *e)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	json_int_t size = json_integer_value(json_object_get(e, "size"));
	char file[128];

	if (json_object_get(e, "manifest") != NULL) {
		return from_manifest(json_object_get(e, "manifest"), size);
	}
	snprintf(file, sizeof(file), "%s%s", name, RZ_BACKUP_SUFFIX);
	return backup_object(name, NULL, json_object(),
	                     json_pack("{s:s, s:s, s:s, s:I}", "phase", "Damaged", "message",
	                               json_string_value(json_object_get(e, "error")), "file", file,
	                               "size", size));
}

static json_t *running_object(const struct job *j)
{
	return backup_object(j->name, NULL, json_pack("{s:s}", "trigger", j->trigger),
	                     json_pack("{s:s}", "phase", "Running"));
}

static void reply_not_found(rz_req_t *req, const char *name)
{
	char msg[160];
	json_t *st;

	snprintf(msg, sizeof(msg), "backups \"%s\" not found", name);
	st = rz_status_new(404, NULL, msg);
	rz_status_set_target(st, "backups", name);
	rz_reply_status(req, st);
}

/* ------------------------------------------------------------------ writing one */

static void job_work(void *arg)
{
	struct job *j = arg;
	rz_backups_t *b = j->b;
	rz_backup_opts_t o = { b->db_path, b->key_path, b->dir,
		               j->name,    j->trigger,  b->passphrase_file };
	rz_err_t perr = { 0 };
	char path[PATH_MAX];
	struct stat st;

	j->rc = rz_backup_create(&o, &j->manifest, &j->err);
	if (j->rc != 0) {
		return;
	}
	snprintf(path, sizeof(path), "%s/%s%s", b->dir, j->name, RZ_BACKUP_SUFFIX);
	j->size = stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
	j->pruned = rz_backup_prune(b->dir, b->keep, &perr);
	if (j->pruned < 0) {
		rz_log_warn("backup", "pruning '%s' failed: %s", b->dir, perr.msg);
	}
	if (b->offload != NULL) {
		rz_err_t oerr = { 0 };
		if (b->offload(b->offload_arg, path, j->name, b->keep, &oerr) != 0) {
			rz_log_warn("backup",
			            "backup '%s' was written but not stored off the host "
			            "(backup.target): %s",
			            j->name, oerr.msg);
		}
	}
}

static void arm(rz_backups_t *b, int64_t wait_ms);

static void job_reply(struct job *j, int canceled)
{
	json_t *st;

	if (canceled) {
		rz_reply_error(j->req, 503, NULL, "shutting down: the backup was not written");
	} else if (j->rc == 0) {
		rz_reply_json(j->req, 201, from_manifest(j->manifest, j->size));
	} else {
		st = rz_status_new(j->rc == -EEXIST ? 409 : 500,
		                   j->rc == -EEXIST ? "AlreadyExists" : NULL, j->err.msg);
		rz_status_set_target(st, "backups", j->name);
		rz_reply_status(j->req, st);
	}
}

static void job_done(void *arg, int canceled)
{
	struct job *j = arg;
	rz_backups_t *b = j->b;

	b->running = NULL;
	if (!canceled && j->rc == 0) {
		char size[24], ms[24], rev[24];
		snprintf(size, sizeof(size), "%" PRId64, j->size);
		snprintf(ms, sizeof(ms), "%.0f", (now_s() - j->started) * 1000);
		snprintf(rev, sizeof(rev), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(j->manifest, "revision")));
		rz_logkv(RZ_LOG_INFO, "backup", "backup written", "name", j->name, "trigger",
		         j->trigger, "bytes", size, "revision", rev, "dur_ms", ms, "dir", b->dir,
		         NULL);
	} else if (!canceled) {
		rz_log_err("backup", "backup '%s' failed: %s", j->name, j->err.msg);
	}
	if (j->req != NULL) {
		job_reply(j, canceled);
	} else if (!canceled && b->scheduled) {
		arm(b, b->interval_ms);
	}
	json_decref(j->manifest);
	free(j);
}

/* backup-<UTC date>-<time>-<4 hex digits>: names sort as the backups were taken. */
static void new_name(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, size, "backup-%04d%02d%02d-%02d%02d%02d-%04x", tm.tm_year + 1900,
	         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	         (unsigned)randombytes_uniform(0x10000));
}

/* Start one backup; name NULL: a new one. 0, or -EBUSY while one is being written. */
static int start(rz_backups_t *b, rz_req_t *req, const char *name, const char *trigger)
{
	struct job *j;

	if (b->running != NULL) {
		return -EBUSY;
	}
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		return -ENOMEM;
	}
	j->b = b;
	j->req = req;
	j->trigger = trigger;
	j->started = now_s();
	if (name != NULL) {
		snprintf(j->name, sizeof(j->name), "%s", name);
	} else {
		new_name(j->name, sizeof(j->name));
	}
	if (rz_workers_submit(b->workers, job_work, job_done, j) != 0) {
		free(j);
		return -ESHUTDOWN;
	}
	b->running = j;
	return 0;
}

/* ------------------------------------------------------------------ the schedule */

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	rz_backups_t *b = arg;
	int rc = start(b, NULL, NULL, "schedule");

	if (rc == -EBUSY) { /* one asked for is being written: the next turn comes later */
		arm(b, b->interval_ms);
	} else if (rc != 0) {
		rz_log_err("backup", "cannot start the scheduled backup: %s", rz_strerror(rc));
		arm(b, b->interval_ms);
	}
}

static void arm(rz_backups_t *b, int64_t wait_ms)
{
	struct timeval tv = { (time_t)(wait_ms / 1000), (suseconds_t)(wait_ms % 1000) * 1000 };

	if (b->timer != NULL) {
		event_add(b->timer, &tv);
	}
}

/* The first turn: an interval after the newest backup in the directory (at least a
 * second from now), or an interval from now when there is none. */
static int64_t first_wait(rz_backups_t *b)
{
	json_t *list = NULL;
	rz_err_t err = { 0 };
	const char *newest = NULL;
	int64_t wait = b->interval_ms, at;
	size_t i;
	json_t *e;

	if (rz_backup_list(b->dir, LIST_MAX, &list, &err) != 0) {
		return wait;
	}
	json_array_foreach(list, i, e)
	{
		newest =
		    json_string_value(json_object_get(json_object_get(e, "manifest"), "createdAt"));
		if (newest != NULL) {
			break;
		}
	}
	if (newest != NULL && (at = rz_time_parse(newest)) >= 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		wait = at + b->interval_ms - ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
		wait = wait < MIN_WAIT_S * 1000 ? MIN_WAIT_S * 1000
		       : wait > b->interval_ms  ? b->interval_ms
		                                : wait;
	}
	json_decref(list);
	return wait;
}

/* ------------------------------------------------------------------ routes */

static void handle_list(rz_backups_t *b, rz_req_t *req)
{
	json_t *list = NULL, *items = json_array();
	rz_err_t err = { 0 };
	size_t i;

	if (rz_backup_list(b->dir, LIST_MAX, &list, &err) != 0) {
		json_decref(items);
		rz_log_err("backup", "%s", err.msg);
		rz_reply_error(req, 500, NULL,
		               "cannot read the backup directory; see the server log");
		return;
	}
	for (i = json_array_size(list); i > 0; i--) { /* sorted by name: oldest first */
		json_array_append_new(items, from_entry(json_array_get(list, i - 1)));
	}
	if (b->running != NULL) {
		json_array_append_new(items, running_object(b->running));
	}
	json_decref(list);
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:{}, s:o}", "apiVersion", RZ_API_VERSION, "kind",
	                        "BackupList", "metadata", "items", items));
}

/* The optional body of a POST: {apiVersion, kind, metadata: {name}, spec: {trigger:
 * manual}}. Returns false after replying. */
static bool read_request(rz_req_t *req, char *name, size_t size)
{
	static const char *const top[] = { "apiVersion", "kind", "metadata", "spec" };
	size_t len = 0;
	const char *body = rz_req_body(req, &len);
	json_t *obj, *causes = json_array(), *v, *meta, *spec;
	json_error_t jerr;
	const char *key, *s;
	char msg[256];

	name[0] = '\0';
	if (len == 0) {
		json_decref(causes);
		return true;
	}
	if (len > BACKUP_REQUEST_MAX) { /* it names a backup, no more */
		json_decref(causes);
		rz_reply_error(req, 413, "RequestEntityTooLarge",
		               "the request body is too large: %zu bytes (at most %d)", len,
		               BACKUP_REQUEST_MAX);
		return false;
	}
	obj = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(obj)) {
		json_decref(obj);
		json_decref(causes);
		rz_reply_error(req, 400, NULL, "the request body must be a JSON object (a Backup)");
		return false;
	}
	json_object_foreach(obj, key, v)
	{
		bool known = false;
		for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
			known = known || strcmp(key, top[i]) == 0;
		}
		if (!known) {
			rz_fields_cause(causes, key, RZ_CAUSE_NOT_SUPPORTED, "unknown field");
		}
	}
	s = json_string_value(json_object_get(obj, "kind"));
	if (json_object_get(obj, "kind") != NULL && (s == NULL || strcmp(s, "Backup") != 0)) {
		rz_fields_cause(causes, "kind", RZ_CAUSE_NOT_SUPPORTED,
		                "supported values: \"Backup\"");
	}
	s = json_string_value(json_object_get(obj, "apiVersion"));
	if (json_object_get(obj, "apiVersion") != NULL &&
	    (s == NULL || (strcmp(s, RZ_API_VERSION) != 0 && strcmp(s, "v1") != 0))) {
		rz_fields_cause(causes, "apiVersion", RZ_CAUSE_NOT_SUPPORTED,
		                "supported values: \"%s\", \"v1\"", RZ_API_VERSION);
	}
	meta = json_object_get(obj, "metadata");
	json_object_foreach(meta, key, v)
	{
		if (strcmp(key, "name") != 0) {
			rz_fields_cause(
			    causes,
			    strcmp(key, "generateName") == 0 ? "metadata.generateName" : "metadata",
			    RZ_CAUSE_NOT_SUPPORTED,
			    "a backup takes only metadata.name; without one it is named "
			    "backup-<time>-<4 hex digits>");
		}
	}
	s = json_string_value(json_object_get(meta, "name"));
	if (json_object_get(meta, "name") != NULL &&
	    (s == NULL || !rz_format_dns1123_label(s, msg, sizeof(msg)))) {
		rz_fields_cause(causes, "metadata.name", RZ_CAUSE_INVALID, "%s",
		                s == NULL ? "must be a string" : msg);
	}
	spec = json_object_get(obj, "spec");
	json_object_foreach(spec, key, v)
	{
		s = json_string_value(v);
		if (strcmp(key, "trigger") != 0 || s == NULL || strcmp(s, "manual") != 0) {
			rz_fields_cause(causes,
			                strcmp(key, "trigger") == 0 ? "spec.trigger" : "spec",
			                RZ_CAUSE_NOT_SUPPORTED,
			                "a backup asked for is manual; spec takes nothing else");
		}
	}
	if (json_array_size(causes) > 0) {
		json_t *st, *first = json_array_get(causes, 0), *c;
		size_t i;
		snprintf(msg, sizeof(msg), "Backup is invalid: %s: %s",
		         json_string_value(json_object_get(first, "field")),
		         json_string_value(json_object_get(first, "message")));
		st = rz_status_new(422, "Invalid", msg);
		rz_status_set_target(st, "Backup",
		                     json_string_value(json_object_get(meta, "name")));
		json_array_foreach(causes, i, c)
		{
			rz_status_add_cause(st, json_string_value(json_object_get(c, "field")),
			                    json_string_value(json_object_get(c, "reason")),
			                    json_string_value(json_object_get(c, "message")));
		}
		rz_reply_status(req, st);
	} else if (json_string_value(json_object_get(meta, "name")) != NULL) {
		snprintf(name, size, "%s", json_string_value(json_object_get(meta, "name")));
	}
	len = json_array_size(causes);
	json_decref(causes);
	json_decref(obj);
	return len == 0;
}

static void handle_create(rz_backups_t *b, rz_req_t *req)
{
	const char *ctype = rz_req_header(req, "Content-Type");
	char name[64];
	size_t len = 0;
	int rc;

	rz_req_body(req, &len);
	if (len > 0 && (ctype == NULL || strncmp(ctype, "application/json", 16) != 0)) {
		rz_reply_error(req, 415, NULL,
		               "unsupported media type: POST %s takes application/json",
		               rz_req_path(req));
		return;
	}
	if (!read_request(req, name, sizeof(name))) {
		return;
	}
	rc = start(b, req, name[0] ? name : NULL, "manual");
	if (rc == 0) {
		rz_access_set_detail(req, b->running->name); /* the audit row names it */
	} else if (rc == -EBUSY) {
		json_t *st;
		char msg[200];
		snprintf(msg, sizeof(msg),
		         "backup \"%s\" is being written; ask again when it is done",
		         b->running->name);
		st = rz_status_new(409, "Conflict", msg);
		rz_status_set_target(st, "backups", b->running->name);
		rz_reply_status(req, st);
	} else {
		rz_reply_error(req, 503, NULL, "cannot start a backup: %s", rz_strerror(rc));
	}
}

static void handle_get(rz_backups_t *b, rz_req_t *req, const char *name)
{
	char path[PATH_MAX];
	rz_err_t err = { 0 };
	json_t *m = NULL;
	int64_t size = 0;
	char msg[128];
	int rc;

	if (!rz_format_dns1123_label(name, msg, sizeof(msg))) {
		reply_not_found(req, name);
		return;
	}
	if (b->running != NULL && strcmp(b->running->name, name) == 0) {
		rz_reply_json(req, 200, running_object(b->running));
		return;
	}
	snprintf(path, sizeof(path), "%s/%s%s", b->dir, name, RZ_BACKUP_SUFFIX);
	rc = rz_restore_inspect(path, &m, &size, &err);
	if (rc == RZ_ENOTFOUND) {
		reply_not_found(req, name);
	} else if (rc != 0) {
		json_t *e = json_pack("{s:s, s:I, s:s}", "name", name, "size", (json_int_t)size,
		                      "error", err.msg);
		rz_reply_json(req, 200, from_entry(e));
		json_decref(e);
	} else {
		rz_reply_json(req, 200, from_manifest(m, size));
		json_decref(m);
	}
}

static void handle_delete(rz_backups_t *b, rz_req_t *req, const char *name)
{
	rz_err_t err = { 0 };
	int rc;

	if (b->running != NULL && strcmp(b->running->name, name) == 0) {
		rz_reply_error(req, 409, "Conflict", "backup \"%s\" is being written", name);
		return;
	}
	rc = rz_backup_remove(b->dir, name, &err);
	if (rc == RZ_ENOTFOUND || rc == REZUS_EINVALID) {
		reply_not_found(req, name);
	} else if (rc != 0) {
		rz_log_err("backup", "%s", err.msg);
		rz_reply_error(req, 500, NULL, "cannot remove the backup; see the server log");
	} else {
		json_t *st;
		char msg[160];
		rz_logkv(RZ_LOG_INFO, "backup", "backup deleted", "name", name, NULL);
		snprintf(msg, sizeof(msg), "backup \"%s\" deleted", name);
		st = rz_status_new(200, NULL, msg);
		rz_status_set_target(st, "backups", name);
		rz_reply_status(req, st);
	}
}

static void handle_collection(rz_req_t *req, void *ctx)
{
	if (rz_req_method_bit(req) == RZ_M_POST) {
		handle_create(ctx, req);
	} else {
		handle_list(ctx, req);
	}
}

static void handle_item(rz_req_t *req, void *ctx)
{
	const char *name = rz_req_param(req, "name");

	if (rz_req_method_bit(req) == RZ_M_DELETE) {
		handle_delete(ctx, req, name);
	} else {
		handle_get(ctx, req, name);
	}
}

int rz_backups_routes(rz_backups_t *b, rz_http_t *http, rz_err_t *err)
{
	const rz_kind_t *k = rz_kind_by_name("Backup");

	/* Every call is audited: the role is the kind table's (admin). */
	b->routes[0] = (rz_route_t){ .methods = RZ_M_GET | RZ_M_POST,
		                     .pattern = "/api/v1/backups",
		                     .fn = handle_collection,
		                     .ctx = b,
		                     .role = rz_kind_role(k, RZ_VERB_CREATE),
		                     .kind = "Backup",
		                     .audit = true };
	b->routes[1] = (rz_route_t){ .methods = RZ_M_GET | RZ_M_DELETE,
		                     .pattern = "/api/v1/backups/{name}",
		                     .fn = handle_item,
		                     .ctx = b,
		                     .role = rz_kind_role(k, RZ_VERB_DELETE),
		                     .kind = "Backup",
		                     .audit = true };
	if (rz_kind_role(k, RZ_VERB_GET) > b->routes[0].role) {
		b->routes[0].role = b->routes[1].role = rz_kind_role(k, RZ_VERB_GET);
	}
	return rz_http_add_routes(http, b->routes, 2, err);
}

/* ------------------------------------------------------------------ life */

static char *dup_or_empty(const char *s)
{
	return strdup(s != NULL ? s : "");
}

int rz_backups_new(rz_backups_t **out, struct event_base *base, rz_workers_t *workers,
                   rz_access_t *access, const rz_backups_opts_t *o, rz_err_t *err)
{
	rz_backups_t *b = calloc(1, sizeof(*b));
	char dir[PATH_MAX], pass[1100];
	int rc = 0;

	*out = NULL;
	if (b == NULL) {
		return rz_err_set(err, -ENOMEM, "backup: out of memory");
	}
	b->scheduled = o->dir != NULL && o->dir[0] != '\0';
	snprintf(dir, sizeof(dir), "%s/backups", o->data_dir);
	b->base = base;
	b->workers = workers;
	b->access = access;
	b->interval_ms = o->interval_ms;
	b->keep = o->keep;
	b->offload = o->offload;
	b->offload_arg = o->offload_arg;
	b->db_path = dup_or_empty(o->db_path);
	b->key_path = dup_or_empty(o->key_path);
	b->dir = dup_or_empty(b->scheduled ? o->dir : dir);
	b->passphrase_file = dup_or_empty(o->passphrase_file);
	if (b->db_path == NULL || b->key_path == NULL || b->dir == NULL ||
	    b->passphrase_file == NULL) {
		rc = rz_err_set(err, -ENOMEM, "backup: out of memory");
	}
	if (rc == 0 && b->passphrase_file[0] != '\0') {
		rc = rz_backup_passphrase(b->passphrase_file, pass, sizeof(pass), err);
		sodium_memzero(pass, sizeof(pass));
	}
	if (rc == 0 && b->scheduled) {
		b->timer = event_new(base, -1, 0, on_timer, b);
		if (b->timer == NULL) {
			rc = rz_err_set(err, -ENOMEM, "backup: out of memory");
		}
	}
	if (rc != 0) {
		rz_backups_free(b);
		return rc;
	}
	rz_backup_clean(b->dir);
	if (b->scheduled) {
		int64_t wait = first_wait(b);
		char every[32], first[32], keep[16];
		snprintf(every, sizeof(every), "%" PRId64 "ms", b->interval_ms);
		snprintf(first, sizeof(first), "%" PRId64 "ms", wait);
		snprintf(keep, sizeof(keep), "%d", b->keep);
		rz_logkv(RZ_LOG_INFO, "backup", "backups scheduled", "dir", b->dir, "interval",
		         every, "first_in", first, "keep", keep, NULL);
		arm(b, wait);
	}
	*out = b;
	return 0;
}

const char *rz_backups_dir(const rz_backups_t *b)
{
	return b->dir;
}

void rz_backups_free(rz_backups_t *b)
{
	if (b == NULL) {
		return;
	}
	if (b->timer != NULL) {
		event_free(b->timer);
	}
	free(b->db_path);
	free(b->key_path);
	free(b->dir);
	free(b->passphrase_file);
	free(b);
}
