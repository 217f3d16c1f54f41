/*
 * core/remote/nats.h - the NATS connection shared by the daemon (runners.*) and
 * `rezuscloud runner` (runner.*): options from the settings, credentials read from their
 * files, TLS when the URL is tls:// or a CA is given, libnats' reconnect. libnats' types
 * stay in core/remote/.
 *
 * Subjects (docs/runners.md), i the installation (rz_nats_names):
 * rezus.<i>.runners.<name>.heartbeat (core NATS, live only), rezus.<i>.jobs.> (stream
 * REZUS_<I>_JOBS, work queue) and rezus.<i>.events.> (stream REZUS_<I>_EVENTS).
 */
#ifndef RZ_NATS_H
#define RZ_NATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/config.h"
#include "core/base/errors.h"

#define RZ_NATS_SECRET_MAX       1024      /* bytes of a password or token */
#define RZ_NATS_RECONNECT_WAIT   1000      /* ms between reconnect attempts */
#define RZ_NATS_RECONNECT_BUF    (1 << 20) /* bytes published while reconnecting, at most */
#define RZ_NATS_CONNECT_TIMEOUT  2000      /* ms for one connect attempt */
#define RZ_NATS_RUNNER_RECONNECT 300       /* the runner's attempts (about 5 min); then exit */

#define RZ_STREAM_JOBS_MAX_MSGS    100000
#define RZ_STREAM_JOBS_MAX_BYTES   (1024LL * 1024 * 1024)       /* 1 GiB */
#define RZ_STREAM_JOBS_MAX_AGE_S   (7LL * 24 * 3600)            /* 7 days */
#define RZ_NATS_PULL_PREFIX        "$JS.API.CONSUMER.MSG.NEXT." /* <stream>.<consumer> */
#define RZ_NATS_RUNNER_INBOX       "_RZ_INBOX.runner."          /* <name>: a runner's replies */
#define RZ_STREAM_EVENTS_MAX_MSGS  1000000
#define RZ_STREAM_EVENTS_MAX_BYTES (1024LL * 1024 * 1024) /* 1 GiB */
#define RZ_STREAM_EVENTS_MAX_AGE_S (24LL * 3600)          /* 1 day */

/* The names one installation's daemon and runners use on NATS (docs/runners.md,
 * "Installations"), so that daemons sharing a NATS share nothing: the installation i
 * (runners.installation, by default derived from the daemon's data dir; runner.installation,
 * by default asked of the daemon) is in every subject and stream name. */
#define RZ_NATS_INSTALLATION_MAX 32
typedef struct rz_nats_names {
	char installation[RZ_NATS_INSTALLATION_MAX + 1];
	char jobs_stream[64];   /* REZUS_<I>_JOBS (i upper-cased) */
	char events_stream[64]; /* REZUS_<I>_EVENTS */
	char jobs[64];          /* rezus.<i>.jobs. (then the pool) */
	char events[64];        /* rezus.<i>.events. (then the run) */
	char runners[64];       /* rezus.<i>.runners. (then name.heartbeat, name.cancel) */
} rz_nats_names_t;

/* The names of installation i (1 to 32 of [a-z0-9-]); REZUS_EINVALID naming key otherwise. */
int rz_nats_names(const char *key, const char *i, rz_nats_names_t *out, rz_err_t *err);

/* What follows "rezus.<i>.<kind>." in subject, whatever the installation i (a subscription
 * chose it), or NULL when subject has another form; "" is returned as NULL too. */
const char *rz_nats_subject_rest(const char *subject, const char *kind);

/* Which settings a connection reads: the daemon's runners.* or the runner's runner.*. */
typedef struct rz_nats_conf {
	const char *section; /* "runners" or "runner", for messages */
	const char *url, *user, *password_file, *token_file, *ca_file;
	const char *name; /* the client's name the server shows */
	char inbox[96];   /* the inbox prefix of its replies ("": libnats' _INBOX) */
} rz_nats_conf_t;

void rz_nats_conf_daemon(const rz_config_t *cfg, rz_nats_conf_t *out);
void rz_nats_conf_runner(const rz_config_t *cfg, const char *name, rz_nats_conf_t *out);

/* The first line of a secret file into buf: refused when the file is not a regular file,
 * when its group or others have any access to it, when it is empty or longer than
 * RZ_NATS_SECRET_MAX. key names the setting in messages; the secret never does. */
int rz_nats_read_secret(const char *key, const char *path, char *buf, size_t size, rz_err_t *err);

/* Read both secret files a configuration names, to find problems at start (and in
 * --check-config) rather than at the first connect. */
int rz_nats_check_secrets(const rz_nats_conf_t *c, rz_err_t *err);

#ifdef HAVE_LIBNATS
#include <nats/nats.h>

/* Options for c: servers, credentials, TLS, the client's name, timeouts and reconnect
 * (max_reconnect: attempts, -1 for ever). Caller owns *out (natsOptions_Destroy). */
int rz_nats_options(natsOptions **out, const rz_nats_conf_t *c, int max_reconnect, rz_err_t *err);

/* The text of a libnats status and its last error, for messages. */
const char *rz_nats_error(natsStatus s);

/* Create the installation's two streams when absent (idempotent); existing ones are left as
 * they are. Blocking (JetStream requests): call from a worker thread. */
int rz_nats_ensure_streams(natsConnection *nc, const rz_nats_names_t *names, rz_err_t *err);
#endif

#endif /* RZ_NATS_H */
