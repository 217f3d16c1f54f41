/* core/remote/agent.c - `rezuscloud runner`, the process on a runner host (core/remote/agent.h). */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/version.h"
#include "core/remote/dispatch.h"
#include "core/remote/heartbeat.h"
#include "core/remote/nats.h"
#include "core/remote/agent.h"
#include "core/remote/work.h"
#include "core/base/proc.h"

#include <event2/event.h>

/* Helpers only the NATS build calls. */
#ifdef HAVE_LIBNATS
#define NATS_ONLY
#else
#define NATS_ONLY __attribute__((unused))
#endif

enum { OPT_CHECK = 256, OPT_LOG_LEVEL, OPT_PERMISSIONS };

static const struct option runner_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "check-config", no_argument, NULL, OPT_CHECK },
	{ "nats-permissions", no_argument, NULL, OPT_PERMISSIONS },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: rezuscloud runner [-c FILE] [--check-config] [--nats-permissions]\n"
	        "                         [--log-level LEVEL]\n"
	        "Run a remote runner: connect to NATS (runner.nats_url), publish this\n"
	        "runner's heartbeat (name, labels, concurrency, runs in progress) every\n"
	        "runner.heartbeat, and take the jobs of the pools its labels serve: claim\n"
	        "each step from runner.daemon_url with runner.token_file's token, run tofu\n"
	        "in runner.work_dir and send its log and result back; until SIGTERM or\n"
	        "SIGINT (docs/runners.md). With runner.daemon_url empty: heartbeats only\n"
	        "(runner.installation then required; else asked of the daemon).\n"
	        "\n"
	        "  -c, --config FILE     read FILE (default %s; when it does not\n"
	        "                        exist, the defaults and REZUSCLOUD_RUNNER_* only)\n"
	        "      --check-config    validate the configuration and its secret files, exit\n"
	        "      --nats-permissions\n"
	        "                        print the permissions of this runner's NATS user (its\n"
	        "                        name, labels and installation) for nats-server, and\n"
	        "                        exit\n"
	        "      --log-level LEVEL debug, info, notice, warning, err, crit, alert, emerg\n"
	        "  -h, --help            show this help and exit\n"
	        "\n"
	        "Settings: the runner section of rezus.conf(5), then REZUSCLOUD_RUNNER_*\n"
	        "environment variables. Exit status: 0 when stopped by a signal, 1 when NATS\n"
	        "refuses the credentials or stays out of reach, 2 for a bad command line or\n"
	        "configuration.\n",
	        RZ_RUNNER_CONFIG_DEFAULT_PATH);
}

/* The host name's first label, lower-cased, for runner.name's default. */
static int default_name(char *buf, size_t size)
{
	char host[HOST_NAME_MAX + 1] = "";

	if (gethostname(host, sizeof(host) - 1) < 0) {
		return -errno;
	}
	host[strcspn(host, ".")] = '\0';
	for (char *p = host; *p != '\0'; p++) {
		*p = (char)tolower((unsigned char)*p);
	}
	snprintf(buf, size, "%s", host);
	return 0;
}

static bool dns_label(const char *s)
{
	size_t len = strlen(s);

	return len > 0 && len <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == len &&
	       s[0] != '-' && s[len - 1] != '-';
}

NATS_ONLY static int make_dir(const char *path, rz_err_t *err)
{
	char buf[PATH_MAX];
	struct stat st;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		return rz_err_set(err, -ENAMETOOLONG, "runner.work_dir '%s': too long", path);
	}
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			(void)mkdir(buf, 0755);
			*p = '/';
		}
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
		return rz_err_set(err, -errno, "runner.work_dir '%s': %s", path, strerror(errno));
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		return rz_err_set(err, -ENOTDIR, "runner.work_dir '%s': not a directory", path);
	}
	return 0;
}

struct runner {
	rz_work_t *work; /* NULL: runner.daemon_url unset, heartbeats only */
	rz_config_t cfg;
	char name[64];
	rz_nats_names_t names; /* the installation's subjects and streams (assignment) */
	char subject[200];     /* its heartbeat's */
	char started[40];
	json_t *labels;
};

/* The runner's configuration: 0, or 2 with a message printed. */
NATS_ONLY static int configure(struct runner *r, const char *path, const char *level,
                               char *const *envp)
{
	rz_err_t err = { 0 };
	char why[256];
	int rc;

	if (rz_config_defaults(&r->cfg) < 0) {
		fprintf(stderr, "rezuscloud runner: out of memory\n");
		return 1;
	}
	if (path == NULL && access(RZ_RUNNER_CONFIG_DEFAULT_PATH, F_OK) == 0) {
		path = RZ_RUNNER_CONFIG_DEFAULT_PATH;
	}
	rc = path != NULL ? rz_config_load_file(&r->cfg, path, &err) : 0;
	if (rc == 0) {
		rc = rz_config_apply_env(&r->cfg, envp, &err);
	}
	if (rc == 0 && level != NULL) {
		rc = rz_config_set(&r->cfg, "log.level", level, "--log-level", &err);
	}
	if (rc == 0) {
		rc = rz_config_validate(&r->cfg, &err);
	}
	if (rc != 0) {
		fprintf(stderr, "rezuscloud runner: %s\n", err.msg);
		return 2;
	}
	if (r->cfg.runner_name[0] != '\0') {
		snprintf(r->name, sizeof(r->name), "%s", r->cfg.runner_name);
	} else if (default_name(r->name, sizeof(r->name)) < 0 || !dns_label(r->name)) {
		fprintf(stderr,
		        "rezuscloud runner: runner.name: the host name '%s' is no DNS label; set "
		        "runner.name\n",
		        r->name);
		return 2;
	}
	r->labels = rz_heartbeat_labels(r->cfg.runner_labels, why, sizeof(why));
	if (r->labels == NULL) {
		fprintf(stderr, "rezuscloud runner: %s\n", why);
		return 2;
	}
	if (r->cfg.runner_nats_url[0] == '\0') {
		fprintf(stderr, "rezuscloud runner: runner.nats_url: required (nats://host:port "
		                "or tls://host:port)\n");
		return 2;
	}
	if (r->cfg.runner_installation[0] == '\0' && r->cfg.runner_daemon_url[0] == '\0') {
		fprintf(stderr, "rezuscloud runner: runner.installation: required without "
		                "runner.daemon_url (the daemon's runners.installation)\n");
		return 2;
	}
	return 0;
}

#ifdef HAVE_LIBNATS

/* --nats-permissions: the runner's NATS permissions (rz_dispatch_permissions) as JSON, the
 * value of its user's "permissions" in nats-server's configuration (which reads JSON). */
static int print_permissions(const struct runner *r)
{
	char why[256], *text = NULL;
	json_t *p = rz_dispatch_permissions(&r->names, r->name, r->labels, why, sizeof(why));

	if (p == NULL || (text = json_dumps(p, JSON_INDENT(2))) == NULL) {
		fprintf(stderr, "rezuscloud runner: runner.labels: %s\n",
		        p ? "out of memory" : why);
		json_decref(p);
		return 2;
	}
	printf("%s\n", text);
	free(text);
	json_decref(p);
	return 0;
}

/* The heartbeat as JSON text (caller frees), or NULL. */
static char *heartbeat(const struct runner *r, bool stopping)
{
	json_t *o =
	    json_pack("{s:s, s:O, s:s, s:i, s:o, s:s, s:b}", "name", r->name, "labels", r->labels,
	              "version", rz_version(), "concurrency", r->cfg.runner_concurrency, "running",
	              rz_work_running(r->work), "startedAt", r->started, "stopping", stopping);
	char *text = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return text;
}

static void publish(natsConnection *nc, const struct runner *r, bool stopping)
{
	char *text = heartbeat(r, stopping);
	natsStatus s;

	if (text == NULL) {
		rz_log_err("runner", "out of memory for a heartbeat");
		return;
	}
	s = natsConnection_PublishString(nc, r->subject, text);
	if (s != NATS_OK) {
		rz_log_warn("runner", "heartbeat not sent: %s", rz_nats_error(s));
	}
	free(text);
}

static void on_disconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_warn("runner", "NATS connection lost; reconnecting every %d ms",
	            RZ_NATS_RECONNECT_WAIT);
}

static void on_reconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_info("runner", "NATS connection back");
}

static bool refused(natsStatus s)
{
	const char *last = nats_GetLastError(NULL);

	return s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED ||
	       (last != NULL && strstr(last, "Authorization") != NULL);
}

/* Wait up to ms for SIGTERM or SIGINT; the signal, or 0. */
static int wait_signal(const sigset_t *set, int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	int sig;

	if (ms == 0) {
		ts.tv_nsec = 0;
	}
	do {
		sig = sigtimedwait(set, NULL, &ts);
	} while (sig < 0 && errno == EINTR);
	return sig > 0 ? sig : 0;
}

struct looper {
	struct runner *r;
	natsConnection *nc;
	const sigset_t *set;
	struct event_base *base;
	int64_t next_beat;
	int sig, rc;
};

/* Every RUNNER_TICK_MS: a signal, the connection, the heartbeat, cancels and the jobs that
 * came (rz_work_tick). */
#define RUNNER_TICK_MS 20

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct looper *l = arg;
	int64_t now = rz_clock_now_ms();

	(void)fd;
	(void)what;
	l->sig = wait_signal(l->set, 0);
	if (l->sig != 0) {
		event_base_loopbreak(l->base);
		return;
	}
	if (natsConnection_Status(l->nc) == NATS_CONN_STATUS_CLOSED) {
		rz_log_err("runner", "NATS connection closed for good after %d reconnect attempts",
		           RZ_NATS_RUNNER_RECONNECT);
		l->rc = 1;
		event_base_loopbreak(l->base);
		return;
	}
	if (now >= l->next_beat) {
		publish(l->nc, l->r, false);
		l->next_beat = now + l->r->cfg.runner_heartbeat_ms;
	}
	if (natsConnection_Status(l->nc) == NATS_CONN_STATUS_CONNECTED) {
		rz_work_tick(l->r->work);
	}
}

/* The runner's jobs (rz_work_new); while the daemon has not made the job stream yet (a
 * runner started first), tried again every second for RZ_WORK_STREAM_WAIT_S, a signal
 * ending the wait (l->sig). */
static int work_new(struct looper *l, rz_err_t *err)
{
	struct runner *r = l->r;
	int rc;

	for (int waited = 0;; waited++) {
		rc = rz_work_new(&r->work, l->base, l->nc, &r->cfg, &r->names, r->name, r->labels,
		                 err);
		if (rc != -ENOENT || waited >= RZ_WORK_STREAM_WAIT_S) {
			return rc;
		}
		if (waited == 0) {
			rz_log(RZ_LOG_NOTICE, "runner",
			       "%s: waiting for the daemon to create its streams (up to %d s)",
			       err->msg, RZ_WORK_STREAM_WAIT_S);
		}
		*err = (rz_err_t){ 0 };
		if ((l->sig = wait_signal(l->set, 1000)) != 0) {
			return -EINTR;
		}
	}
}

/* The runner's loop: heartbeats, and jobs when runner.daemon_url is set. */
static int loop(struct runner *r, natsConnection *nc, const sigset_t *set)
{
	struct looper l = { r, nc, set, event_base_new(), 0, 0, 0 };
	struct timeval tv = { 0, RUNNER_TICK_MS * 1000 };
	struct event *tick = NULL;
	rz_err_t err = { 0 };

	if (l.base == NULL || (tick = event_new(l.base, -1, EV_PERSIST, on_tick, &l)) == NULL ||
	    event_add(tick, &tv) < 0) {
		rz_log_err("runner", "out of memory for the event loop");
		l.rc = 1;
	} else if (r->cfg.runner_daemon_url[0] != '\0' && work_new(&l, &err) != 0) {
		if (l.sig == 0) {
			rz_log_err("runner", "%s", err.msg);
			l.rc = 1;
		}
	} else {
		if (r->work == NULL) {
			rz_log(RZ_LOG_NOTICE, "runner",
			       "runner.daemon_url is empty: heartbeats only, no jobs");
		}
		publish(nc, r, false);
		l.next_beat = rz_clock_now_ms() + r->cfg.runner_heartbeat_ms;
		event_base_dispatch(l.base);
	}
	if (l.sig != 0) {
		rz_log_info("runner", "signal %d: stopping", l.sig);
	}
	rz_work_stop(r->work); /* steps still running are killed */
	publish(nc, r, true);
	(void)natsConnection_FlushTimeout(nc, 2000);
	natsConnection_Close(nc); /* first: no message reaches a subscription freed below */
	rz_work_free(r->work);
	r->work = NULL;
	natsConnection_Destroy(nc);
	if (tick != NULL) {
		event_free(tick);
	}
	rz_proc_shutdown();
	if (l.base != NULL) {
		event_base_free(l.base);
	}
	return l.rc;
}

/* r->names and r->subject: of runner.installation, or of the installation the daemon names
 * (rz_work_installation), asked again every 2 s while it does not answer, up to
 * RZ_WORK_STREAM_WAIT_S, a signal in set ending the wait (-EINTR; set NULL: asked once).
 * 0, or 1 with the reason logged (2 with it printed when set is NULL). */
static int assignment(struct runner *r, const sigset_t *set)
{
	char inst[RZ_NATS_INSTALLATION_MAX + 1];
	rz_err_t err = { 0 };
	int rc = 0;

	if (r->cfg.runner_installation[0] != '\0') {
		snprintf(inst, sizeof(inst), "%s", r->cfg.runner_installation);
	} else {
		for (int waited = 0;; waited += 2) {
			rc = rz_work_installation(&r->cfg, r->name, inst, &err);
			if (rc != -EAGAIN || set == NULL || waited >= RZ_WORK_STREAM_WAIT_S) {
				break;
			}
			if (waited == 0) {
				rz_log_warn("runner", "%s; asking again every 2 s (up to %d s)",
				            err.msg, RZ_WORK_STREAM_WAIT_S);
			}
			err = (rz_err_t){ 0 };
			if ((rc = wait_signal(set, 2000)) != 0) {
				rz_log_info("runner",
				            "stopped by signal %d before the daemon answered", rc);
				return -EINTR;
			}
		}
	}
	if (rc == 0) {
		rc = rz_nats_names("runner.installation", inst, &r->names, &err);
	}
	if (rc != 0) {
		if (set == NULL) {
			fprintf(stderr, "rezuscloud runner: %s\n", err.msg);
			return 2;
		}
		rz_log_err("runner", "%s", err.msg);
		return 1;
	}
	snprintf(r->subject, sizeof(r->subject), "%s%s" RZ_SUBJECT_SUFFIX, r->names.runners,
	         r->name);
	return 0;
}

static int run(struct runner *r, const sigset_t *set)
{
	natsConnection *nc = NULL;
	natsOptions *o = NULL;
	rz_nats_conf_t c;
	rz_err_t err = { 0 };
	natsStatus s = NATS_ERR;
	int sig = 0;

	rz_nats_conf_runner(&r->cfg, r->name, &c);
	if (rz_nats_options(&o, &c, RZ_NATS_RUNNER_RECONNECT, &err) != 0) {
		rz_log_err("runner", "%s", err.msg);
		return 2;
	}
	if ((sig = assignment(r, set)) != 0) {
		natsOptions_Destroy(o);
		return sig == -EINTR ? 0 : 1;
	}
	natsOptions_SetDisconnectedCB(o, on_disconnected, NULL);
	natsOptions_SetReconnectedCB(o, on_reconnected, NULL);
	for (int attempt = 1; sig == 0; attempt++) {
		s = natsConnection_Connect(&nc, o);
		if (s == NATS_OK) {
			break;
		}
		if (refused(s)) {
			rz_log_err("runner",
			           "NATS at %s refused runner '%s': %s; check runner.nats_user and "
			           "runner.nats_password_file (or runner.nats_token_file)",
			           c.url, r->name, rz_nats_error(s));
			natsOptions_Destroy(o);
			return 1;
		}
		if (attempt >= RZ_NATS_RUNNER_RECONNECT) {
			rz_log_err("runner", "NATS at %s out of reach after %d attempts: %s", c.url,
			           attempt, rz_nats_error(s));
			natsOptions_Destroy(o);
			return 1;
		}
		if (attempt == 1) {
			rz_log_warn("runner", "NATS at %s: %s; retrying every %d ms", c.url,
			            rz_nats_error(s), RZ_NATS_RECONNECT_WAIT);
		}
		sig = wait_signal(set, RZ_NATS_RECONNECT_WAIT);
	}
	natsOptions_Destroy(o);
	if (sig != 0) {
		rz_log_info("runner", "stopped by signal %d before NATS answered", sig);
		return 0;
	}
	rz_log_info("runner", "runner '%s' connected to NATS at %s; heartbeat every %lld ms",
	            r->name, c.url, (long long)r->cfg.runner_heartbeat_ms);
	return loop(r, nc, set);
}

#endif /* HAVE_LIBNATS */

int rz_agent_main(int argc, char **argv, char *const *envp)
{
	const char *path = NULL, *level = NULL;
	bool check = false, permissions = false;
	struct runner r = { 0 };
	rz_err_t err = { 0 };
	rz_nats_conf_t c;
	int opt, rc, lv;

	/* a daemon that closes a connection mid-request is an error of that request, not the
	 * runner's end (its children get SIGPIPE back: core/base/proc.c) */
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":c:h", runner_options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case OPT_CHECK:
			check = true;
			break;
		case OPT_PERMISSIONS:
			permissions = true;
			break;
		case OPT_LOG_LEVEL:
			level = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "rezuscloud runner: option '%s' needs a value\n",
			        argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "rezuscloud runner: unknown option '%s' (see --help)\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rezuscloud runner: unexpected argument '%s' (see --help)\n",
		        argv[optind]);
		return 2;
	}
#ifndef HAVE_LIBNATS
	(void)envp;
	(void)r;
	(void)err;
	(void)c;
	(void)rc;
	(void)lv;
	(void)path;
	(void)level;
	(void)check;
	(void)permissions;
	fprintf(stderr, "rezuscloud runner: this rezuscloud was built without NATS (libnats); "
	                "rebuild it with --with-nats\n");
	return 1;
#else
	rc = configure(&r, path, level, envp);
	if (rc == 0 && permissions) {
		rc = assignment(&r, NULL);
		rc = rc == 0 ? print_permissions(&r) : rc;
		json_decref(r.labels);
		rz_config_free(&r.cfg);
		return rc;
	}
	if (rc == 0) {
		rz_nats_conf_runner(&r.cfg, r.name, &c);
		if (rz_nats_check_secrets(&c, &err) != 0) {
			fprintf(stderr, "rezuscloud runner: %s\n", err.msg);
			rc = 2;
		}
	}
	if (rc == 0 && check) {
		printf("rezuscloud runner: configuration OK (runner '%s')\n", r.name);
	} else if (rc == 0) {
		sigset_t set;

		if (rz_log_level_parse(r.cfg.log_level, &lv) == 0) {
			rz_log_set_level(lv);
		}
		if (r.cfg.log_file[0] != '\0' && rz_log_open(r.cfg.log_file, &err) < 0) {
			fprintf(stderr, "rezuscloud runner: %s\n", err.msg);
			rc = 1;
		} else if (make_dir(r.cfg.runner_work_dir, &err) < 0) {
			rz_log_err("runner", "%s", err.msg);
			rc = 1;
		} else {
			/* Before libnats starts its threads, so that they inherit the mask and the
			 * signals wait for sigtimedwait. */
			sigemptyset(&set);
			sigaddset(&set, SIGTERM);
			sigaddset(&set, SIGINT);
			pthread_sigmask(SIG_BLOCK, &set, NULL);
			rz_clock_format(rz_clock_now_ms(), r.started, sizeof(r.started));
			rc = run(&r, &set);
		}
	}
	json_decref(r.labels);
	rz_config_free(&r.cfg);
	return rc;
#endif
}
