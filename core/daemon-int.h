/*
 * core/daemon-int.h - the daemon's structure, shared by core/daemon.c (start-up, loop,
 * shutdown) and core/service.c (the service endpoints and the /metrics gauges).
 */
#ifndef RZ_DAEMON_INT_H
#define RZ_DAEMON_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

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
#include "core/etcdbackup/etcdbackup.h"
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

#define WORKER_THREADS 2
#define HEARTBEAT_MS   15000
#define DRAIN_POLL_MS  50
#define DB_FILE        "rezus.db"
#define LOCK_FILE      "rezuscloud.lock"
#define STATE_KEY_FILE "state.key"
#define TLS_CERT_FILE  "tls-cert.pem" /* server.tls.self_signed: the certificate made */
#define TLS_KEY_FILE   "tls-key.pem"  /* and its key */
#define EVENTS_PRUNE_S 3600           /* Events are pruned hourly, like the audit log */

struct rz_daemon {
	const rz_config_t *cfg;
	struct event_base *base;
	struct event *sig_term, *sig_int, *sig_hup, *drain, *events_prune, *storage_probe;
	rz_db_t *db;
	rz_bus_t *bus;
	rz_review_t *review; /* kubectl auth can-i, whoami */
	rz_store_t *store;
	rz_watch_hub_t *watches;
	rz_api_t *api;
	rz_openapi_t *openapi;
	rz_metrics_t *metrics;
	rz_auth_t *auth;
	rz_access_t *access;
	rz_audit_t *audit;
	rz_session_t *session;
	rz_oidc_t *oidc; /* NULL: no single sign-on */
	rz_sso_t *sso;
	rz_plugins_t *plugins;
	rz_tfstate_t *tfstate;
	rz_engine_t *engine;
	rz_observer_t *observer;
	rz_upgrader_t *upgrader;
	rz_etcd_t *etcd;
	rz_runners_t *runners; /* remote runners over NATS (runners.nats_url) */
	rz_backups_t *backups;
	rz_ui_t *ui;
	char observe_dir[PATH_MAX];
	char state_url[300];
	char workdir[PATH_MAX];
	char db_path[PATH_MAX];  /* for /metrics: the database's size and its WAL's */
	char storage_why[256];   /* the write probe's failure, "" while the data dir takes writes */
	const char *tofu_binary; /* tofu.binary, or terraform in its place (pick_tofu) */
	rz_http_t *http;
	rz_tls_t *tls;           /* NULL: plain HTTP */
	char tls_cert[PATH_MAX]; /* the files it is (re)loaded from */
	char tls_key[PATH_MAX];
	rz_workers_t *workers;
	int lock_fd;
	char one_time[RZ_ONE_TIME_PASSWORD_SIZE]; /* the first admin's, until the ready lines */
	bool stopping;
	int64_t drain_left_ms;
	int exit_code;
};

/* Register /healthz, /readyz and /version (core/service.c) on d->http. */
int rz__daemon_service_routes(rz_daemon_t *d, rz_err_t *err);
/* Make d->metrics with the daemon's gauges, register /metrics and observe every request. */
int rz__daemon_start_metrics(rz_daemon_t *d, rz_err_t *err);

#endif /* RZ_DAEMON_INT_H */
