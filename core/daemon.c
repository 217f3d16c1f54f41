/* core/daemon.c - start-up, loop, signals and graceful shutdown; the command line and the
 * subcommands are in core/cmdline.c, what the daemon serves about itself in core/service.c. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <sodium.h>

#include "core/auth/access.h"
#include "core/auth/review.h"
#include "core/api/api.h"
#include "core/api/backups.h"
#include "core/auth/audit.h"
#include "core/auth/auth.h"
#include "core/store/bus.h"
#include "core/daemon.h"
#include "core/offline.h"
#include "core/engine/engine.h"
#include "core/base/proc.h"
#include "core/store/datadir.h"
#include "core/store/db.h"
#include "core/store/events.h"
#include "core/store/store.h"
#include "core/api/watch.h"
#include "core/http/http.h"
#include "core/http/tls.h"
#include "core/base/exec.h"
#include "core/base/log.h"
#include "core/api/metrics.h"
#include "core/api/openapi.h"
#include "core/plugin/plugins.h"
#include "core/auth/oidc.h"
#include "core/auth/session.h"
#include "core/auth/sso.h"
#include "core/tfstate/tfstate.h"
#include "core/observe/observe.h"
#include "core/remote/agent.h"
#include "core/remote/nats.h"
#include "core/remote/runners.h"
#include "core/upgrade/upgrade.h"
#include "core/base/version.h"
#include "core/base/workers.h"
#include "core/web/static.h"
#include "core/web/ui.h"

#include "core/daemon-int.h"

/* ------------------------------------------------------------------ data dir and lock */

int rz_daemon_make_dir(const char *path, rz_err_t *err)
{
	char buf[PATH_MAX];
	struct stat st;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		return rz_err_set(err, -ENAMETOOLONG, "data dir '%s': path too long", path);
	}
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
				return rz_err_set(err, -errno, "cannot create '%s': %s", buf,
				                  strerror(errno));
			}
			*p = '/';
		}
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
		return rz_err_set(err, -errno, "cannot create data dir '%s': %s", path,
		                  strerror(errno));
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		return rz_err_set(err, -ENOTDIR, "data dir '%s' is not a directory", path);
	}
	return 0; /* its mode: rz_datadir_secure */
}

int rz_daemon_lock(const char *data_dir, int *fd, rz_err_t *err)
{
	char path[PATH_MAX], pid[32] = "";
	int n;

	snprintf(path, sizeof(path), "%s/%s", data_dir, LOCK_FILE);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (*fd < 0) {
		return rz_err_set(err, -errno, "cannot open lock file '%s': %s", path,
		                  strerror(errno));
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		n = (int)read(*fd, pid, sizeof(pid) - 1);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(*fd);
		*fd = -1;
		if (e == EWOULDBLOCK) {
			return rz_err_set(err, RZ_ELOCKED,
			                  "data dir '%s' is in use by another rezuscloud (pid %s); "
			                  "stop it or use another data dir",
			                  data_dir, pid[0] ? pid : "unknown");
		}
		return rz_err_set(err, -e, "cannot lock '%s': %s", path, strerror(e));
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(*fd, 0) < 0 || pwrite(*fd, pid, (size_t)n, 0) != n) {
		rz_log_warn("daemon", "cannot record pid in '%s': %s", path, strerror(errno));
	}
	return 0;
}

static int take_lock(rz_daemon_t *d, rz_err_t *err)
{
	return rz_daemon_lock(d->cfg->data_dir, &d->lock_fd, err);
}

/* The write probe (server.storage_probe): a small file written in the data dir; when that
 * works again after the database's last write failed, a one-row write finds out whether the
 * database takes writes too. /readyz reads the outcome: no write per probe request. */
static void probe_storage(evutil_socket_t fd, short what, void *arg)
{
	rz_daemon_t *d = arg;
	rz_err_t err = { 0 };

	(void)fd;
	(void)what;
	if (rz_datadir_probe(d->cfg->data_dir, &err) < 0) {
		if (d->storage_why[0] == '\0') {
			rz_log_err("daemon", "%s: not ready until it can", err.msg);
		}
		snprintf(d->storage_why, sizeof(d->storage_why), "%s", err.msg);
		return;
	}
	if (d->storage_why[0] != '\0') {
		rz_log(RZ_LOG_NOTICE, "daemon", "data dir '%s' takes writes again",
		       d->cfg->data_dir);
		d->storage_why[0] = '\0';
	}
	if (rz_db_storage_error(d->db, NULL, 0) != 0) {
		(void)rz_db_probe(d->db, &err); /* success clears the database's failure */
	}
}

static int start_storage_probe(rz_daemon_t *d, rz_err_t *err)
{
	struct timeval tv = { d->cfg->storage_probe_ms / 1000,
		              (d->cfg->storage_probe_ms % 1000) * 1000 };

	d->storage_probe = event_new(d->base, -1, EV_PERSIST, probe_storage, d);
	if (d->storage_probe == NULL || event_add(d->storage_probe, &tv) < 0) {
		return rz_err_set(err, -ENOMEM, "cannot start the storage probe");
	}
	probe_storage(-1, EV_TIMEOUT, d);
	return 0;
}

/* ------------------------------------------------------------------ shutdown */

static void finish(rz_daemon_t *d)
{
	event_del(d->drain);
	event_base_loopexit(d->base, NULL);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	rz_daemon_t *d = arg;

	if (rz_http_in_flight(d->http) == 0 && rz_workers_pending(d->workers) == 0) {
		rz_log_info("daemon", "stopped cleanly");
		finish(d);
		return;
	}
	d->drain_left_ms -= DRAIN_POLL_MS;
	if (d->drain_left_ms <= 0) {
		rz_log_warn("daemon",
		            "shutdown grace of %d ms over with %zu request(s) and %zu job(s) "
		            "unfinished; exiting",
		            RZ_SHUTDOWN_GRACE_MS, rz_http_in_flight(d->http),
		            rz_workers_pending(d->workers));
		finish(d);
	}
}

void rz_daemon_stop(rz_daemon_t *d)
{
	struct timeval tv = { 0, DRAIN_POLL_MS * 1000 };

	if (d->stopping) {
		return;
	}
	d->stopping = true;
	d->drain_left_ms = RZ_SHUTDOWN_GRACE_MS;
	rz_ui_close_all(d->ui);
	rz_watch_hub_close_all(d->watches);
	rz_http_shutdown(d->http);
	event_add(d->drain, &tv);
	event_active(d->drain, EV_TIMEOUT, 0);
}

/* The names of the self-signed certificate: the listen host (into host), then
 * server.tls.self_signed_hosts; NULL-terminated. */
static void self_signed_hosts(const rz_config_t *cfg, char *host, size_t size, const char **hosts)
{
	const char *colon = strrchr(cfg->listen, ':');
	size_t n = 1;

	snprintf(host, size, "%.*s", colon ? (int)(colon - cfg->listen) : 0, cfg->listen);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	hosts[0] = host;
	for (char **h = cfg->tls_self_signed_hosts; h != NULL && *h != NULL; h++) {
		if (n < RZ_TLS_HOSTS_MAX + 1) {
			hosts[n++] = *h;
		}
	}
	hosts[n] = NULL;
}

/* SIGHUP: the certificate and key again, for the connections accepted from now on; a pair
 * that does not load leaves the one in use. */
static void reload_tls(rz_daemon_t *d)
{
	rz_err_t err = { 0 };
	bool created = false;
	int rc = 0;

	if (d->tls == NULL) {
		return;
	}
	if (d->cfg->tls_self_signed) {
		char host[256];
		const char *hosts[RZ_TLS_HOSTS_MAX + 2];
		self_signed_hosts(d->cfg, host, sizeof(host), hosts);
		rc = rz_tls_self_signed(d->tls_cert, d->tls_key, hosts, &created, &err);
	}
	if (rc == 0) {
		rc = rz_tls_reload(d->tls, &err);
	}
	if (rc != 0) {
		rz_logkv(RZ_LOG_ERR, "tls",
		         "reloading the certificate failed: keeping the one in use", "error",
		         err.msg, "fingerprint", rz_tls_fingerprint(d->tls), NULL);
		return;
	}
	rz_logkv(RZ_LOG_NOTICE, "tls", "certificate reloaded", "cert_file", d->tls_cert,
	         "fingerprint", rz_tls_fingerprint(d->tls), NULL);
}

/* The service manager's readiness protocol (systemd's Type=notify): a no-op when the
 * daemon was not started by one (no NOTIFY_SOCKET) or was built without libsystemd. */
static void notify(const char *state)
{
#ifdef HAVE_LIBSYSTEMD
	int rc = sd_notify(0, state);

	if (rc < 0) {
		rz_log_warn("daemon", "telling the service manager '%s' failed: %s", state,
		            strerror(-rc));
	}
#else
	(void)state;
#endif
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	rz_daemon_t *d = arg;

	if (sig == SIGHUP) {
		int rc = rz_log_reopen();
		if (rc < 0) {
			rz_log_err("daemon", "reopening the log failed: %s", strerror(-rc));
		} else {
			rz_log_info("daemon", "log reopened");
		}
		reload_tls(d);
		return;
	}
	if (d->stopping) {
		rz_log_warn("daemon", "second %s: exiting now",
		            sig == SIGINT ? "SIGINT" : "SIGTERM");
		finish(d);
		return;
	}
	rz_log_info("daemon", "%s received: draining requests (up to %d ms)",
	            sig == SIGINT ? "SIGINT" : "SIGTERM", RZ_SHUTDOWN_GRACE_MS);
	notify("STOPPING=1");
	rz_daemon_stop(d);
}

/* ------------------------------------------------------------------ start and run */

/* libevent's own warnings go through the one sink. */
static void on_libevent_log(int severity, const char *msg)
{
	int level = severity >= EVENT_LOG_ERR    ? RZ_LOG_ERR
	            : severity == EVENT_LOG_WARN ? RZ_LOG_WARNING
	                                         : RZ_LOG_DEBUG;
	rz_log(level, "libevent", "%s", msg);
}

static int start_loop(rz_daemon_t *d, rz_err_t *err)
{
	event_set_log_callback(on_libevent_log);
	d->base = event_base_new();
	if (d->base == NULL) {
		return rz_err_set(err, -ENOMEM, "cannot create the event loop");
	}
	d->sig_term = evsignal_new(d->base, SIGTERM, on_signal, d);
	d->sig_int = evsignal_new(d->base, SIGINT, on_signal, d);
	d->sig_hup = evsignal_new(d->base, SIGHUP, on_signal, d);
	d->drain = event_new(d->base, -1, EV_PERSIST, on_drain, d);
	if (d->sig_term == NULL || d->sig_int == NULL || d->sig_hup == NULL || d->drain == NULL ||
	    evsignal_add(d->sig_term, NULL) < 0 || evsignal_add(d->sig_int, NULL) < 0 ||
	    evsignal_add(d->sig_hup, NULL) < 0) {
		return rz_err_set(err, -ENOMEM, "cannot install signal handlers");
	}
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* backup.target: a backup written, sealed and stored off the host by the etcd snapshots'
 * module (its keys and targets); on the backup's worker thread. d->etcd is set before the
 * loop runs any backup. */
static int offload_backup(void *arg, const char *path, const char *name, int keep, rz_err_t *err)
{
	rz_daemon_t *d = arg;

	return d->etcd != NULL
	           ? rz_etcd_offload(d->etcd, d->cfg->backup_target, path, name, keep, err)
	           : rz_err_set(err, REZUS_EINTERNAL, "the etcd snapshots' targets are not set up");
}

/* Backups: on demand, and on a schedule when backup.dir is set (core/api/backups.h). */
static int start_backups(rz_daemon_t *d, rz_err_t *err)
{
	char db[PATH_MAX], key[PATH_MAX];
	rz_backups_opts_t o;
	int rc;

	snprintf(db, sizeof(db), "%s/%s", d->cfg->data_dir, DB_FILE);
	snprintf(key, sizeof(key), "%s/%s", d->cfg->data_dir, STATE_KEY_FILE);
	o = (rz_backups_opts_t){ db,
		                 key,
		                 d->cfg->data_dir,
		                 d->cfg->backup_dir,
		                 d->cfg->backup_interval_ms,
		                 d->cfg->backup_keep,
		                 d->cfg->backup_passphrase_file,
		                 d->cfg->backup_target[0] != '\0' ? offload_backup : NULL,
		                 d };
	rc = rz_backups_new(&d->backups, d->base, d->workers, d->access, &o, err);
	return rc != 0 ? rc : rz_backups_routes(d->backups, d->http, err);
}

/* May this request send a body larger than server.max_body_unauthenticated? The guard's own
 * check, from the headers alone: a JWT's signature and its user, or an API token's or a
 * run secret's BLAKE2b hash (HTTP basic carries only those, never a password), so it is
 * cheap and needs no worker. The guard decides again, with the route, once the body is in. */
static bool authn_headers(void *ctx, const rz_req_t *req)
{
	rz_daemon_t *d = ctx;
	rz_principal_t p;
	rz_err_t err = { 0 };

	return rz_auth_authenticate(d->auth, rz_req_header(req, "Authorization"), &p, &err) == 0;
}

/* Is the host of server.listen a loopback address (127.0.0.0/8, ::1, localhost)? */
static bool listen_loopback(const char *listen)
{
	const char *colon = strrchr(listen, ':');
	size_t len = colon != NULL ? (size_t)(colon - listen) : 0;

	return (len == 9 && strncmp(listen, "localhost", 9) == 0) ||
	       (len == 5 && strncmp(listen, "[::1]", 5) == 0) ||
	       (len >= 4 && strncmp(listen, "127.", 4) == 0);
}

/* TLS from server.tls.*, the self-signed pair made first when asked. Without TLS, only a
 * loopback address serves plain HTTP, unless server.tls.allow_plain_http says a proxy in
 * front speaks TLS. */
static int start_tls(rz_daemon_t *d, rz_err_t *err)
{
	const rz_config_t *cfg = d->cfg;
	rz_tls_opts_t o = { d->tls_cert, d->tls_key, cfg->tls_client_ca_file };
	char host[256];
	const char *hosts[RZ_TLS_HOSTS_MAX + 2];
	bool created = false;
	int rc;

	if (!cfg->tls_self_signed &&
	    (cfg->tls_cert_file == NULL || cfg->tls_cert_file[0] == '\0')) {
		if (!listen_loopback(cfg->listen) && !cfg->tls_allow_plain_http) {
			return rz_err_set(
			    err, REZUS_ECONFIG,
			    "server.listen: '%s' is not a loopback address, and plain "
			    "HTTP would carry passwords and tokens in clear: set "
			    "server.tls.cert_file and server.tls.key_file, or "
			    "server.tls.self_signed: true (or "
			    "server.tls.allow_plain_http: true behind a TLS proxy)",
			    cfg->listen);
		}
		return 0;
	}
	if (cfg->tls_self_signed) {
		snprintf(d->tls_cert, sizeof(d->tls_cert), "%s/%s", cfg->data_dir, TLS_CERT_FILE);
		snprintf(d->tls_key, sizeof(d->tls_key), "%s/%s", cfg->data_dir, TLS_KEY_FILE);
		self_signed_hosts(cfg, host, sizeof(host), hosts);
		rc = rz_tls_self_signed(d->tls_cert, d->tls_key, hosts, &created, err);
		if (rc != 0) {
			return rc;
		}
	} else {
		snprintf(d->tls_cert, sizeof(d->tls_cert), "%s", cfg->tls_cert_file);
		snprintf(d->tls_key, sizeof(d->tls_key), "%s", cfg->tls_key_file);
	}
	rc = rz_tls_new(&d->tls, &o, err);
	if (rc != 0) {
		return rc;
	}
	rz_logkv(RZ_LOG_NOTICE, "tls",
	         created ? "serving TLS with a new self-signed certificate" : "serving TLS",
	         "cert_file", d->tls_cert, "fingerprint", rz_tls_fingerprint(d->tls),
	         "client_certificates",
	         cfg->tls_client_ca_file != NULL && cfg->tls_client_ca_file[0] != '\0' ? "required"
	                                                                               : "no",
	         NULL);
	return 0;
}

static int start_http(rz_daemon_t *d, rz_err_t *err)
{
	const rz_config_t *cfg = d->cfg;
	rz_http_opts_t opts = {
		.max_body = cfg->max_body,
		.max_connections = (size_t)cfg->max_connections,
		.max_connections_per_address = (size_t)cfg->max_connections_per_address,
		.header_timeout_ms = cfg->header_timeout_ms,
		.body_timeout_ms = cfg->body_timeout_ms,
		.max_body_unauthenticated = cfg->max_body_unauthenticated,
		.max_body_buffer = cfg->max_body_buffer,
		.max_body_buffer_per_address = cfg->max_body_buffer_per_address,
		.max_unsent = cfg->max_unsent,
		.max_unsent_per_address = cfg->max_unsent_per_address,
		.hsts_max_age_s = cfg->hsts_max_age_ms / 1000,
		.access_log_per_address = cfg->log_access_per_address,
	};
	int rc;

	rc = rz_http_new(&d->http, d->base, &opts, err);
	if (rc == 0) {
		rz_http_set_guard(d->http, rz_access_guard, d->access);
		rz_http_set_authn(d->http, authn_headers, d);
		rc = rz_api_add_aliases(d->http, err);
	}
	if (rc == 0) {
		rc = rz__daemon_service_routes(d, err);
	}
	if (rc == 0) {
		rc = rz_api_new(&d->api, d->http, d->store, d->watches, d->access, d->workers, err);
	}
	if (rc == 0) {
		rz_api_set_plugins(d->api, d->plugins);
		rc = rz_openapi_new(&d->openapi, d->http, err);
	}
	if (rc == 0) {
		rc = rz_audit_routes(d->audit, d->http, err);
	}
	if (rc == 0) {
		rc = rz_session_routes(d->session, d->http, err);
	}
	if (rc == 0) {
		rc = rz_sso_routes(d->sso, d->http, err);
	}
	if (rc == 0) {
		rc = rz_review_new(&d->review, d->http, d->auth, err);
	}
	if (rc == 0) {
		rc = rz_tfstate_routes(d->tfstate, d->http, err);
	}
	if (rc == 0) {
		rc = rz_web_static_routes(d->http, err);
	}
	if (rc == 0) {
		rc = rz_ui_new(&d->ui, d->http, d->auth, d->access, d->base, d->cfg->web_dir, err);
	}
	if (rc == 0) {
		rz_ui_set_oidc(d->ui, d->oidc);
		rz_ui_set_destroy_approval(d->ui, d->cfg->tofu_destroy_approval);
		rc = rz_ui_routes(d->ui, err);
	}
	if (rc == 0) {
		rc = start_backups(d, err);
	}
	if (rc == 0) {
		rc = rz__daemon_start_metrics(d, err);
	}
	if (rc == 0) {
		rc = start_tls(d, err);
	}
	if (rc == 0) {
		rz_http_set_tls(d->http, d->tls);
		rc = rz_http_listen(d->http, d->cfg->listen, err);
	}
	return rc;
}

static int start_store(rz_daemon_t *d, rz_err_t *err)
{
	int rc = rz_bus_new(&d->bus);

	if (rc != 0) {
		return rz_err_set(err, rc, "out of memory");
	}
	rc = rz_store_new(&d->store, d->db, d->bus, d->cfg->event_window, err);
	if (rc == 0) {
		rz_store_set_log_max(d->store, d->cfg->event_log_max);
		/* 0: the HTTP server's default max_stream_backlog, which start_http leaves as is */
		rc = rz_watch_hub_new(&d->watches, d->base, d->store, d->bus, HEARTBEAT_MS, 0, err);
	}
	return rc;
}

/* Drop Events past events.retention and beyond events.max_per_tenant. */
static void prune_events(evutil_socket_t fd, short what, void *arg)
{
	rz_daemon_t *d = arg;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	rz_events_prune(d->store, d->cfg->events_retention_ms, d->cfg->events_max_per_tenant,
	                (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
}

/* Once now, then every EVENTS_PRUNE_S. */
static int start_events(rz_daemon_t *d, rz_err_t *err)
{
	struct timeval tv = { EVENTS_PRUNE_S, 0 };

	d->events_prune = event_new(d->base, -1, EV_PERSIST, prune_events, d);
	if (d->events_prune == NULL || event_add(d->events_prune, &tv) < 0) {
		return rz_err_set(err, -ENOMEM, "cannot schedule the pruning of events");
	}
	prune_events(-1, 0, d);
	return 0;
}

/* The admin password for the first start: REZUSCLOUD_ADMIN_PASSWORD, else
 * auth.admin_password_file, else none (a one-time password is generated). */
static int admin_password(const rz_config_t *cfg, char *buf, size_t size, const char **out,
                          rz_err_t *err)
{
	const char *env = getenv("REZUSCLOUD_ADMIN_PASSWORD");
	FILE *f;
	size_t n;

	*out = NULL;
	if (env != NULL && *env != '\0') {
		*out = env;
		return 0;
	}
	if (cfg->admin_password_file == NULL || cfg->admin_password_file[0] == '\0') {
		return 0;
	}
	f = fopen(cfg->admin_password_file, "r");
	if (f == NULL) {
		return rz_err_set(err, -errno, "auth.admin_password_file '%s': %s",
		                  cfg->admin_password_file, strerror(errno));
	}
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) < 8) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "auth.admin_password_file '%s': the password "
		                  "must have at least 8 characters",
		                  cfg->admin_password_file);
	}
	*out = buf;
	return 0;
}

static int start_auth(rz_daemon_t *d, rz_err_t *err)
{
	char buf[1100];
	const char *pw = NULL;
	int rc = rz_auth_new(&d->auth, d->cfg, d->db, d->store, d->bus, err);

	if (rc == 0) { /* read now, so that a bad file stops the start; used at its end */
		rc = admin_password(d->cfg, buf, sizeof(buf), &pw, err);
	}
	sodium_memzero(buf, sizeof(buf));
	if (rc == 0) {
		rc = rz_access_new(&d->access, d->auth, d->db, d->cfg, err);
	}
	if (rc == 0) {
		rc = rz_audit_new(&d->audit, d->db, d->base, d->cfg->audit_retention_ms, err);
	}
	if (rc == 0) {
		rc = rz_session_new(&d->session, d->auth, d->access, d->store, d->db, d->workers,
		                    d->base, err);
	}
	if (rc == 0) {
		rc = rz_oidc_new(&d->oidc, d->cfg, d->workers, d->base, err);
	}
	if (rc == 0) {
		rc = rz_sso_new(&d->sso, d->oidc, d->auth, d->access, d->store, d->cfg, err);
	}
	if (rc == 0) {
		char key[PATH_MAX];
		snprintf(key, sizeof(key), "%s/%s", d->cfg->data_dir, STATE_KEY_FILE);
		rc = rz_tfstate_new(&d->tfstate, d->db, d->store, d->access, key,
		                    d->cfg->tofu_state_history, err);
	}
	return rc;
}

/* Load and start the plugins before the listener binds; show them as Providers. */
static int start_plugins(rz_daemon_t *d, rz_err_t *err)
{
	int rc = rz_plugins_load(&d->plugins, d->cfg, true, err);

	if (rc == 0) {
		rc = rz_plugins_publish(d->plugins, d->store, err);
	}
	return rc;
}

/* tofu.binary defaults to tofu; on a machine with terraform on PATH and no tofu, the
 * default runs terraform. Which one runs is logged. */
static const char *pick_tofu(const rz_config_t *cfg)
{
	const char *path = getenv("PATH");
	char found[PATH_MAX];

	if (strcmp(cfg->tofu_binary, "tofu") == 0 &&
	    rz_exec_which("tofu", path, found, sizeof(found)) != 0 &&
	    rz_exec_which("terraform", path, found, sizeof(found)) == 0) {
		rz_log(RZ_LOG_NOTICE, "engine",
		       "tofu.binary: no 'tofu' on PATH, running 'terraform' (%s) instead", found);
		return "terraform";
	}
	if (rz_exec_which(cfg->tofu_binary, path, found, sizeof(found)) == 0) {
		rz_log(RZ_LOG_NOTICE, "engine", "tofu.binary: running '%s' (%s)", cfg->tofu_binary,
		       found);
	}
	return cfg->tofu_binary;
}

static void kick_engine(void *engine)
{
	rz_engine_kick(engine);
}

/* The TF engine, once the listener's port is known (tofu reaches the state backend there). */
/* This installation's name on NATS (runners.installation): set, or 8 hex digits derived from
 * the data dir's JWT secret, the same at every start. */
static void installation(const rz_daemon_t *d, char out[RZ_NATS_INSTALLATION_MAX + 1])
{
	unsigned char key[RZ_DERIVED_KEY_LEN];

	if (d->cfg->runners_installation[0] != '\0') {
		snprintf(out, RZ_NATS_INSTALLATION_MAX + 1, "%s", d->cfg->runners_installation);
		return;
	}
	rz_auth_derive_key(d->auth, "nats-installation", key);
	sodium_bin2hex(out, RZ_NATS_INSTALLATION_MAX + 1, key, 4);
	sodium_memzero(key, sizeof(key));
}

static int start_engine(rz_daemon_t *d, rz_err_t *err)
{
	char host[256];
	const char *colon = strrchr(d->cfg->listen, ':');
	size_t len = colon ? (size_t)(colon - d->cfg->listen) : 0;
	rz_engine_opts_t o;
	char why[512];
	int rc;

	snprintf(host, sizeof(host), "%.*s", (int)len, d->cfg->listen);
	if (strcmp(host, "0.0.0.0") == 0 || host[0] == '\0') {
		snprintf(host, sizeof(host), "127.0.0.1");
	} else if (strcmp(host, "[::]") == 0) {
		snprintf(host, sizeof(host), "[::1]");
	}
	snprintf(d->state_url, sizeof(d->state_url), "%s://%s:%d", d->tls ? "https" : "http", host,
	         rz_http_port(d->http));
	snprintf(d->workdir, sizeof(d->workdir), "%s/work", d->cfg->data_dir);
	d->tofu_binary = pick_tofu(d->cfg);
	o = (rz_engine_opts_t){ d->tofu_binary,
		                d->workdir,
		                d->state_url,
		                d->cfg->tofu_workers,
		                d->cfg->tofu_debounce_ms,
		                d->cfg->tofu_timeout_ms,
		                d->cfg->tofu_kill_grace_ms,
		                d->cfg->tofu_plugin_cache_dir,
		                d->cfg->tofu_env_passthrough,
		                d->cfg->tofu_destroy_approval,
		                d->cfg->tofu_resync_ms,
		                d->cfg->observe_provision_timeout_ms,
		                d->cfg->tofu_run_history,
		                d->cfg->tofu_run_retention_ms,
		                d->cfg->tofu_max_run_log,
		                d->tls != NULL ? d->tls_cert : NULL,
		                d->cfg->runners_public_url,
		                d->cfg->runners_nats_url != NULL &&
		                    d->cfg->runners_nats_url[0] != '\0' };
	rc = rz_engine_new(&d->engine, d->base, d->store, d->bus, d->plugins, d->auth, d->tfstate,
	                   &o, err);
	if (rc == 0) { /* a rollback or an admin's DELETE re-projects at once */
		rz_tfstate_on_replaced(d->tfstate, rz_engine_state_replaced, d->engine);
	}
	if (rc == 0 && !rz_engine_ready(d->engine, why, sizeof(why))) {
		rz_log_warn("engine", "%s", why); /* and /readyz says so */
	}
	if (rc == 0) {
		rc = rz_engine_routes(d->engine, d->http, err);
	}
	return rc != 0 ? rc : rz_engine_runner_routes(d->engine, d->http, err);
}

/* The observer: probes in a private directory under the data dir, off the tofu pool. */
static int start_observer(rz_daemon_t *d, rz_err_t *err)
{
	rz_observer_opts_t o = { .interval_ms = d->cfg->observe_interval_ms,
		                 .fast_interval_ms = d->cfg->observe_fast_interval_ms,
		                 .stable_interval_ms = d->cfg->observe_stable_interval_ms,
		                 .provision_timeout_ms = d->cfg->observe_provision_timeout_ms,
		                 .workers = d->cfg->observe_workers,
		                 .probe_timeout_ms = d->cfg->observe_probe_timeout_ms,
		                 .talosctl = d->cfg->talos_binary,
		                 .kubectl = d->cfg->kubectl_binary,
		                 .tmpdir = d->observe_dir };

	snprintf(d->observe_dir, sizeof(d->observe_dir), "%s/observe", d->cfg->data_dir);
	return rz_observer_new(&d->observer, d->base, d->store, d->bus, d->plugins, d->tfstate, &o,
	                       err);
}

/* Upgrades: on the engine (runs wait for them) and the observer (their health gates). */
static int start_upgrader(rz_daemon_t *d, rz_err_t *err)
{
	rz_upgrader_opts_t o = { d->cfg->upgrade_machine_timeout_ms, 0 };
	int rc;

	rc = rz_upgrader_new(&d->upgrader, d->base, d->store, d->bus, d->plugins, d->engine,
	                     d->observer, &o, err);
	if (rc == 0) {
		rz_api_set_admit(d->api, rz_upgrader_admit, d->upgrader);
		rc = rz_upgrader_routes(d->upgrader, d->http, err);
	}
	return rc;
}

/* The tenants' etcd snapshots: through the observer (commands) and the pool (sealing,
 * transfers). */
static int start_etcd(rz_daemon_t *d, rz_err_t *err)
{
	const rz_config_t *c = d->cfg;
	char data[PATH_MAX], dir[PATH_MAX + 16], key[PATH_MAX + 16], work[PATH_MAX + 16];
	json_t *s3 = NULL;
	rz_etcd_opts_t o;
	int rc;

	/* absolute: the plugins' commands and the local target take no relative path */
	if (realpath(c->data_dir, data) == NULL) {
		return rz_err_set(err, -errno, "etcd-backup: %s: %s", c->data_dir, strerror(errno));
	}
	snprintf(dir, sizeof(dir), "%s", c->etcd_backup_dir);
	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "%s/etcd-backups", data);
	}
	snprintf(key, sizeof(key), "%s", c->etcd_backup_key_file);
	if (key[0] == '\0') {
		snprintf(key, sizeof(key), "%s/etcd-backup.key", data);
	}
	snprintf(work, sizeof(work), "%s/etcd-work", data);
	if (c->etcd_s3_endpoint[0] != '\0') {
		s3 = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:I}", "type", "s3", "endpoint",
		               c->etcd_s3_endpoint, "bucket", c->etcd_s3_bucket, "prefix",
		               c->etcd_s3_prefix, "region", c->etcd_s3_region, "pathStyle",
		               c->etcd_s3_path_style, "timeoutSeconds",
		               (json_int_t)(c->etcd_backup_timeout_ms / 1000));
		if (s3 != NULL && c->etcd_s3_credentials_file[0] != '\0') {
			json_object_set_new(s3, "credentialsFile",
			                    json_string(c->etcd_s3_credentials_file));
		}
		if (s3 != NULL && c->etcd_s3_ca_file[0] != '\0') {
			json_object_set_new(s3, "caFile", json_string(c->etcd_s3_ca_file));
		}
	}
	o = (rz_etcd_opts_t){ .interval_ms = c->etcd_backup_interval_ms,
		              .keep = c->etcd_backup_keep,
		              .target = c->etcd_backup_target,
		              .dir = dir,
		              .key_file = key,
		              .work_dir = work,
		              .timeout_ms = c->etcd_backup_timeout_ms,
		              .s3 = s3 };
	rc = rz_etcd_new(&d->etcd, d->base, d->store, d->bus, d->plugins, d->observer, d->workers,
	                 &o, err);
	json_decref(s3);
	return rc;
}

/* Checkpoints off the loop thread, and the durability of acknowledged writes. */
static int start_db(rz_daemon_t *d, rz_err_t *err)
{
	rz_durability_t dur = RZ_DURABILITY_NORMAL;

	if (rz_durability_parse(d->cfg->store_durability, &dur) != 0) {
		return rz_err_set(err, REZUS_ECONFIG, "store.durability: invalid value '%s'",
		                  d->cfg->store_durability ? d->cfg->store_durability : "");
	}
	return rz_db_start(d->db, d->base, dur, err);
}

int rz_daemon_start(rz_daemon_t **out, const rz_config_t *cfg, rz_err_t *err)
{
	rz_daemon_t *d = calloc(1, sizeof(*d));
	char dbpath[PATH_MAX];
	int rc;

	*out = NULL;
	if (d == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	d->cfg = cfg;
	d->lock_fd = -1;
	rc = rz_daemon_make_dir(cfg->data_dir, err);
	if (rc == 0) {
		umask(077); /* whatever the daemon writes is its own: keys, state, logs */
		rc = take_lock(d, err);
	}
	if (rc == 0) {
		rc = rz_datadir_secure(cfg->data_dir, err) < 0 ? err->code : 0;
	}
	if (rc == 0) {
		snprintf(dbpath, sizeof(dbpath), "%s/%s", cfg->data_dir, DB_FILE);
		rc = rz_db_open(&d->db, dbpath, err);
	}
	if (rc == 0) {
		rc = start_loop(d, err);
	}
	if (rc == 0) {
		rc = start_db(d, err);
	}
	if (rc == 0) {
		rc = start_storage_probe(d, err);
	}
	if (rc == 0) {
		rc = rz_workers_new(&d->workers, d->base, WORKER_THREADS, err);
	}
	if (rc == 0) {
		rc = start_store(d, err);
	}
	if (rc == 0) {
		rc = start_events(d, err);
	}
	if (rc == 0) {
		rc = start_auth(d, err);
	}
	if (rc == 0) {
		rc = start_plugins(d, err);
	}
	if (rc == 0) {
		rc = start_http(d, err);
	}
	if (rc == 0) {
		rc = start_engine(d, err);
	}
	if (rc == 0) {
		rc = start_observer(d, err);
	}
	if (rc == 0) {
		rc = start_upgrader(d, err);
	}
	if (rc == 0) {
		rc = start_etcd(d, err);
	}
	if (rc == 0) {
		char inst[RZ_NATS_INSTALLATION_MAX + 1];
		installation(d, inst);
		rc = rz_runners_new(&d->runners, d->base, d->cfg, d->store, d->workers,
		                    d->cfg->runners_public_url[0] != '\0'
		                        ? d->cfg->runners_public_url
		                        : d->state_url,
		                    inst, err);
	}
	if (rc == 0) {
		rc = rz_runners_routes(d->runners, d->http, err);
	}
	if (rc == 0) { /* remote steps, when runners.nats_url is set */
		rz_engine_set_executor(d->engine, rz_runners_executor(d->runners));
		rz_runners_on_capacity(d->runners, kick_engine, d->engine);
	}
	if (rc == 0) {
		/* the first admin only once everything started and the listener is bound: a
		 * start that fails (the port taken) leaves no one-time password behind that
		 * the next start would not print again */
		char buf[1100];
		const char *pw = NULL;
		rc = admin_password(d->cfg, buf, sizeof(buf), &pw, err);
		if (rc == 0) {
			rc = rz_session_bootstrap(d->store, d->db, pw, d->one_time,
			                          sizeof(d->one_time), err);
		}
		sodium_memzero(buf, sizeof(buf));
	}
	if (rc != 0) {
		rz_daemon_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

/* The address people reach the daemon at: the listen address, or localhost for any. */
static void reach_url(const rz_daemon_t *d, const char *port, char *buf, size_t size)
{
	const char *l = d->cfg->listen, *colon = strrchr(l, ':');
	int n = colon != NULL ? (int)(colon - l) : 0;

	if (n >= 2 && l[0] == '[' && l[n - 1] == ']') {
		l++;
		n -= 2;
	}
	if (n == 0 || (n == 7 && strncmp(l, "0.0.0.0", 7) == 0) ||
	    (n == 2 && strncmp(l, "::", 2) == 0)) {
		l = "localhost";
		n = 9;
	}
	snprintf(buf, size, "%s://%s%.*s%s:%s", d->tls != NULL ? "https" : "http",
	         memchr(l, ':', (size_t)n) != NULL ? "[" : "", n, l,
	         memchr(l, ':', (size_t)n) != NULL ? "]" : "", port);
}

/* The first start: the one-time password and what to do with it, after the ready line so
 * that it is the last thing printed, not one line among the migrations'. Shown once. */
static void first_start_lines(rz_daemon_t *d, const char *port)
{
	char url[400];

	if (d->one_time[0] == '\0') {
		return;
	}
	reach_url(d, port, url, sizeof(url));
	rz_log(RZ_LOG_NOTICE, "auth",
	       "first start: sign in as 'admin' with the one-time password %s (you choose your "
	       "own at the first sign-in)",
	       d->one_time);
	rz_log(RZ_LOG_NOTICE, "auth",
	       "first start: %s%s/ in a browser, or: rezusctl login %s "
	       "--username admin",
	       d->ui != NULL ? "open " : "the API is at ", url, url);
	rz_log(RZ_LOG_NOTICE, "auth",
	       "first start: lost the password? rezuscloud admin reset-password (with the "
	       "daemon stopped) makes a new one");
	sodium_memzero(d->one_time, sizeof(d->one_time));
}

int rz_daemon_run(rz_daemon_t *d)
{
	char port[16], status[320];

	snprintf(port, sizeof(port), "%d", rz_http_port(d->http));
	rz_logkv(RZ_LOG_NOTICE, "daemon", "ready", "version", rz_version(), "listen",
	         d->cfg->listen, "port", port, "data_dir", d->cfg->data_dir, "scheme",
	         d->tls != NULL ? "https" : "http", NULL);
	first_start_lines(d, port);
	/* The listener is bound and the plugins are loaded (rz_daemon_start): ready. */
	snprintf(status, sizeof(status), "READY=1\nSTATUS=serving %s on port %s",
	         d->tls != NULL ? "https" : "http", port);
	notify(status);
	if (event_base_dispatch(d->base) < 0) {
		rz_log_err("daemon", "event loop failed");
		return RZ_EXIT_FAILURE;
	}
	return d->exit_code;
}

int rz_daemon_port(const rz_daemon_t *d)
{
	return rz_http_port(d->http);
}

struct event_base *rz_daemon_base(rz_daemon_t *d)
{
	return d->base;
}

struct rz_http *rz_daemon_http(rz_daemon_t *d)
{
	return d->http;
}

struct rz_db *rz_daemon_db(rz_daemon_t *d)
{
	return d->db;
}

struct rz_store *rz_daemon_store(rz_daemon_t *d)
{
	return d->store;
}

struct rz_auth *rz_daemon_auth(rz_daemon_t *d)
{
	return d->auth;
}

void rz_daemon_free(rz_daemon_t *d)
{
	if (d == NULL) {
		return;
	}
	sodium_memzero(d->one_time, sizeof(d->one_time));
	if (d->api != NULL) {
		rz_api_set_admit(d->api, NULL, NULL);
	}
	rz_upgrader_free(d->upgrader); /* commands killed: the next start resumes */
	rz_etcd_stop(d->etcd);         /* its command killed: marked Failed at the next start */
	rz_observer_free(d->observer); /* probes killed, their credential files removed */
	rz_tfstate_on_replaced(d->tfstate, NULL, NULL);
	rz_engine_free(d->engine); /* runs still going are marked Interrupted */
	rz_proc_shutdown();
	/* The pool first: its done() callbacks may still answer requests. Watches end before
	 * the server goes; the routes the API lent the server outlive it. */
	rz_workers_free(d->workers);
	rz_oidc_free(d->oidc);       /* after the pool: its fetches are over */
	rz_runners_free(d->runners); /* after the pool: its stream check uses the connection */
	rz_db_stop(d->db);           /* the last sync: the writes waiting for it are answered */
	rz_backups_free(d->backups); /* after the pool: a backup's done() uses it */
	rz_etcd_free(d->etcd);       /* after the pool: a snapshot's done() uses it */
	rz_ui_free(d->ui);           /* its live streams follow watches: before the hub */
	rz_watch_hub_free(d->watches);
	rz_http_free(d->http);
	rz_tls_free(d->tls); /* after the server: its connections hold their own references */
	rz_api_free(d->api);
	rz_review_free(d->review);
	rz_openapi_free(d->openapi);
	rz_metrics_free(d->metrics);
	rz_session_free(d->session);
	rz_sso_free(d->sso);
	rz_plugins_free(d->plugins);
	rz_tfstate_free(d->tfstate);
	rz_audit_free(d->audit);
	rz_access_free(d->access);
	rz_auth_free(d->auth);
	if (d->storage_probe != NULL) {
		event_free(d->storage_probe);
	}
	if (d->events_prune != NULL) {
		event_free(d->events_prune);
	}
	rz_store_free(d->store);
	rz_bus_free(d->bus);
	rz_db_close(d->db);
	if (d->sig_term != NULL) {
		event_free(d->sig_term);
	}
	if (d->sig_int != NULL) {
		event_free(d->sig_int);
	}
	if (d->sig_hup != NULL) {
		event_free(d->sig_hup);
	}
	if (d->drain != NULL) {
		event_free(d->drain);
	}
	if (d->base != NULL) {
		event_base_free(d->base);
	}
	if (d->lock_fd >= 0) {
		close(d->lock_fd); /* releases the flock */
	}
	free(d);
}
