/* core/remote/work.c - a runner's jobs (core/remote/work.h). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/proc.h"
#include "core/http/client.h"
#include "core/http/tls.h"
#include "core/remote/dispatch.h"
#include "core/remote/heartbeat.h"
#include "core/remote/nats.h"
#include "core/remote/work.h"

#ifdef HAVE_LIBNATS

#define MAX_ENV  64
#define MAX_ARGV 16

struct slot {
	rz_work_t *w;
	bool used;
	char run[64], step[8], dir[PATH_MAX];
	rz_proc_t *proc;
	bool in_init;  /* running the init before the step */
	json_t *claim; /* the daemon's answer (its env holds the run's secret) */
	unsigned char key[RZ_DISPATCH_KEY_LEN]; /* the claim's event key */
	int64_t seq;                            /* the last event published */
	char *show;                             /* show's stdout, to report as show.json */
	size_t show_len;
	bool show_cut;
	/* the step ended: its files go to the daemon (again after a while when it does not
	 * answer), then its end is published */
	struct event *retry;
	int end_status, tries;
	bool end_timed_out, end_canceled;
	size_t reported; /* files of claim.upload the daemon kept */
};

/* A pool this runner serves: its consumer's pull requests go out one at a time, each
 * waiting at NATS (up to pull_ms) for a job, their answers on the pool's own inbox. */
struct pool {
	char name[RZ_DISPATCH_POOL_MAX + 1];
	char inbox[160];
	natsSubscription *sub;  /* the answers to its pull requests */
	bool asked;             /* a pull request waits at NATS */
	int64_t asked_until_ms; /* its answer is given up after then (a reconnection lost it) */
	int64_t quiet_until_ms; /* not asked again before then (an error answer) */
	bool lost_told;         /* its consumer's loss said once until it pulls again */
	int64_t checked_ms;     /* when its consumer was last seen */
};

struct rz_work {
	struct event_base *base;
	natsConnection *nc;
	jsCtx *js;
	const rz_config_t *cfg;
	char name[64];
	rz_nats_names_t names; /* the installation's subjects and streams */
	struct pool *pools;    /* RZ_DISPATCH_POOLS_MAX */
	size_t npools, next_pool;
	int64_t pull_ms;       /* how long a pull request waits at NATS */
	natsStatistics *stats; /* its reconnections: pull requests waiting are lost then */
	uint64_t reconnects;
	natsSubscription *cancel;
	char token[RZ_NATS_SECRET_MAX + 2];
	rz_tls_client_t *tls; /* runner.daemon_url's certificate checked (https) */
	char http_error[256]; /* why the last request got no answer */
	struct slot *slots;
	size_t nslots;
};

/* ------------------------------------------------------------------ HTTPS */

struct body {
	char *p;
	size_t len, max;
	bool cut;
};

/* One request to the daemon with the runner token: the status code (0 when no answer came:
 * w->http_error says why), the answer in *out (caller frees). */
static long request(rz_work_t *w, const char *method, const char *path, const char *ctype,
                    const char *data, size_t len, struct body *out)
{
	char url[1024];
	rz_fetched_t got;
	rz_err_t err = { 0 };
	rz_fetch_t f = { .method = method,
		         .url = url,
		         .bearer = w->token,
		         .content_type = ctype,
		         .body = data,
		         .len = len,
		         .max = out->max,
		         .timeout_s = RZ_WORK_HTTP_TIMEOUT,
		         .tls = w->tls };

	snprintf(url, sizeof(url), "%s%s", w->cfg->runner_daemon_url, path);
	if (rz_http_fetch(&f, &got, &err) != 0) {
		out->cut = got.too_long;
		snprintf(w->http_error, sizeof(w->http_error), "%s", err.msg);
		return 0;
	}
	out->p = got.body;
	out->len = got.len;
	return got.code;
}

/* ------------------------------------------------------------------ events */

static void publish_event(struct slot *s, char *text)
{
	char subject[200], mac[RZ_DISPATCH_MAC_HEX];
	natsMsg *m = NULL;
	natsStatus ns;

	if (text == NULL) {
		rz_log_err("runner", "run %s: out of memory for an event", s->run);
		return;
	}
	snprintf(subject, sizeof(subject), "%s%s", s->w->names.events, s->run);
	rz_dispatch_event_mac(s->key, subject, text, strlen(text), mac);
	ns = natsMsg_Create(&m, subject, NULL, text, (int)strlen(text));
	if (ns == NATS_OK) {
		ns = natsMsgHeader_Set(m, RZ_DISPATCH_MAC_HEADER, mac);
	}
	if (ns == NATS_OK) {
		ns = js_PublishMsgAsync(s->w->js, &m, NULL); /* takes m when it succeeds */
	}
	natsMsg_Destroy(m);
	if (ns != NATS_OK) {
		rz_log_warn("runner", "run %s: an event was not published: %s", s->run,
		            rz_nats_error(ns));
	}
	free(text);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static void remove_dir(const char *dir)
{
	if (dir[0] != '\0') {
		(void)nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
}

static void slot_free(struct slot *s)
{
	if (s->retry != NULL) {
		event_free(s->retry);
	}
	rz_proc_free(s->proc);
	remove_dir(s->dir); /* the working directory lives as long as its step */
	json_decref(s->claim);
	sodium_memzero(s->key, sizeof(s->key));
	if (s->show != NULL) {
		sodium_memzero(s->show, s->show_len);
	}
	free(s->show);
	memset(s, 0, sizeof(*s));
}

/* A file the daemon keeps, PUT: the status code (0: no answer). */
static long report(struct slot *s, const char *file, const char *data, size_t len)
{
	char path[256];
	struct body b = { NULL, 0, 64 * 1024, false };
	long code;

	snprintf(path, sizeof(path), "/api/v1/runners/%s/claims/%s/files/%s", s->w->name, s->run,
	         file);
	code = request(s->w, "PUT", path, "application/octet-stream", data, len, &b);
	free(b.p);
	if (code != 200) {
		rz_log_warn("runner", "run %s: the daemon did not keep %s (HTTP %ld)", s->run, file,
		            code);
	}
	return code;
}

/* The daemon was not there (no answer, or 502, 503, 504: a proxy before a restarting
 * daemon): worth another try. */
static bool unanswered(long code)
{
	return code == 0 || code == 502 || code == 503 || code == 504;
}

/* The plan file of the step's directory, PUT: the status code. */
static long report_plan(struct slot *s)
{
	char path[PATH_MAX + 80];
	struct stat st;
	char *buf = NULL;
	long code = 500;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s.plan", s->dir, s->run);
	fp = fopen(path, "rb");
	if (fp != NULL && fstat(fileno(fp), &st) == 0 &&
	    (buf = malloc((size_t)st.st_size + 1)) != NULL &&
	    fread(buf, 1, (size_t)st.st_size, fp) == (size_t)st.st_size) {
		code = report(s, "plan", buf, (size_t)st.st_size);
	}
	if (buf != NULL) {
		sodium_memzero(buf, (size_t)st.st_size);
	}
	free(buf);
	if (fp != NULL) {
		fclose(fp);
	}
	return code;
}

static void try_end(struct slot *s);

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	try_end(arg);
}

/* The step's files (those not kept yet), then its end. A daemon that does not answer gets
 * the file again RZ_WORK_REPORT_WAIT_MS later, RZ_WORK_REPORT_TRIES times: a restarted
 * daemon takes the run up again and wants it. */
static void try_end(struct slot *s)
{
	json_t *up = json_object_get(s->claim, "upload");
	int status = s->end_status;

	while (status == 0 && s->reported < json_array_size(up)) {
		const char *name = json_string_value(json_array_get(up, s->reported));
		long code = 200;
		if (name != NULL && strcmp(name, "show.json") == 0) {
			code = s->show_cut ? 413
			                   : report(s, name, s->show ? s->show : "", s->show_len);
		} else if (name != NULL && strcmp(name, "plan") == 0) {
			code = report_plan(s);
		}
		if (code == 200) {
			s->reported++;
			continue;
		}
		if (unanswered(code) && ++s->tries < RZ_WORK_REPORT_TRIES &&
		    (s->retry != NULL ||
		     (s->retry = evtimer_new(s->w->base, on_retry, s)) != NULL)) {
			struct timeval tv = { RZ_WORK_REPORT_WAIT_MS / 1000,
				              (RZ_WORK_REPORT_WAIT_MS % 1000) * 1000 };
			if (s->tries == 1) {
				rz_log_warn(
				    "runner",
				    "run %s: the daemon does not answer; %s again every %d ms",
				    s->run, name, RZ_WORK_REPORT_WAIT_MS);
			}
			evtimer_add(s->retry, &tv);
			return;
		}
		status = 1;
	}
	publish_event(s, rz_dispatch_event_exit(s->run, s->step, ++s->seq, status, s->end_timed_out,
	                                        s->end_canceled));
	rz_log_info("runner", "run %s: step %s ended with %d%s%s", s->run, s->step, status,
	            s->end_timed_out ? " (timed out)" : "", s->end_canceled ? " (canceled)" : "");
	slot_free(s);
}

static void step_end(struct slot *s, int status, bool timed_out, bool canceled)
{
	s->end_status = status;
	s->end_timed_out = timed_out;
	s->end_canceled = canceled;
	try_end(s);
}

static void on_line(void *arg, const char *line, size_t len, bool is_stderr)
{
	struct slot *s = arg;

	if (!s->in_init && strcmp(s->step, "show") == 0 && !is_stderr) {
		/* the plan as JSON holds sensitive values: over HTTPS only, never on NATS */
		char *p;
		if (s->show_cut || s->show_len + len + 1 > RZ_WORK_SHOW_MAX ||
		    (p = realloc(s->show, s->show_len + len + 2)) == NULL) {
			s->show_cut = true;
			return;
		}
		s->show = p;
		memcpy(s->show + s->show_len, line, len);
		s->show_len += len;
		s->show[s->show_len++] = '\n';
		s->show[s->show_len] = '\0';
		return;
	}
	publish_event(s, rz_dispatch_event_line(s->run, s->step, ++s->seq, line, len, is_stderr));
}

static int start(struct slot *s, const json_t *argv, rz_err_t *err);

static void on_exit_cb(void *arg, int status, bool timed_out, bool canceled)
{
	struct slot *s = arg;
	rz_err_t err = { 0 };

	if (s->in_init && status == 0 && !canceled && !timed_out) {
		s->in_init = false;
		rz_proc_free(s->proc);
		s->proc = NULL;
		if (start(s, json_object_get(s->claim, "argv"), &err) == 0) {
			return;
		}
		rz_log_err("runner", "run %s: %s", s->run, err.msg);
		status = 127;
	}
	step_end(s, status, timed_out, canceled);
}

static void env_add(const char **env, size_t *n, char *buf, size_t size, const char *name,
                    const char *value)
{
	if (value == NULL || *n + 1 >= MAX_ENV) {
		return;
	}
	snprintf(buf, size, "%s=%s", name, value);
	env[(*n)++] = buf;
	env[*n] = NULL;
}

/* Start argv (argv[0] "tofu": the runner's tofu.binary) with the claim's environment. */
static int start(struct slot *s, const json_t *argv, rz_err_t *err)
{
	static char vars[MAX_ENV][PATH_MAX + 64];
	const char *env[MAX_ENV + 1] = { NULL }, *av[MAX_ARGV + 1] = { NULL };
	const rz_config_t *cfg = s->w->cfg;
	json_t *v;
	const char *key;
	size_t n = 0, i;
	rz_proc_opts_t o;
	int rc;

	if (!json_is_array(argv) || json_array_size(argv) < 1 || json_array_size(argv) > MAX_ARGV) {
		return rz_err_set(err, -EINVAL, "the claim has no argv");
	}
	json_array_foreach(argv, i, v)
	{
		av[i] = i == 0 ? cfg->tofu_binary : json_string_value(v);
		if (av[i] == NULL) {
			return rz_err_set(err, -EINVAL, "argv[%zu]: not a string", i);
		}
	}
	env_add(env, &n, vars[n], sizeof(vars[0]), "PATH", getenv("PATH"));
	env_add(env, &n, vars[n], sizeof(vars[0]), "HOME", s->dir);
	json_object_foreach(json_object_get(s->claim, "env"), key, v)
	{
		if (json_is_string(v) && strcmp(key, "PATH") != 0 && strcmp(key, "HOME") != 0) {
			env_add(env, &n, vars[n], sizeof(vars[0]), key, json_string_value(v));
		}
	}
	if (cfg->tofu_plugin_cache_dir != NULL && cfg->tofu_plugin_cache_dir[0] != '\0') {
		env_add(env, &n, vars[n], sizeof(vars[0]), "TF_PLUGIN_CACHE_DIR",
		        cfg->tofu_plugin_cache_dir);
	}
	for (char **p = cfg->tofu_env_passthrough; p != NULL && *p != NULL; p++) {
		/* the clouds' credentials (OCI_*, OS_*) live here, on the runner */
		env_add(env, &n, vars[n], sizeof(vars[0]), *p, getenv(*p));
	}
	o = (rz_proc_opts_t){
		av,
		env,
		s->dir,
		json_integer_value(json_object_get(s->claim, "timeoutMs")),
		json_integer_value(json_object_get(s->claim, "killGraceMs")),
		on_line,
		on_exit_cb,
		s,
	};
	rc = rz_proc_start(&s->proc, s->w->base, &o, err);
	for (size_t k = 0; k < n; k++) {
		sodium_memzero(vars[k], sizeof(vars[k])); /* TF_HTTP_PASSWORD among them */
	}
	return rc;
}

/* The claim's files into a fresh s->dir. */
static int write_files(struct slot *s, rz_err_t *err)
{
	const char *name;
	json_t *v;

	remove_dir(s->dir);
	if (mkdir(s->dir, 0700) < 0) {
		return rz_err_set(err, -errno, "%s: %s", s->dir, strerror(errno));
	}
	json_object_foreach(json_object_get(s->claim, "files"), name, v)
	{
		const char *b64 = json_string_value(v);
		size_t cap = b64 ? strlen(b64) : 0, len = 0;
		unsigned char *raw = malloc(cap + 1);
		char path[PATH_MAX + 300];
		int fd = -1, rc = 0;
		if (strchr(name, '/') != NULL || name[0] == '.' || raw == NULL || b64 == NULL ||
		    sodium_base642bin(raw, cap + 1, b64, cap, NULL, &len, NULL,
		                      sodium_base64_VARIANT_ORIGINAL) != 0) {
			rc = rz_err_set(err, -EINVAL, "the claim's file '%.64s' is unusable", name);
		} else {
			snprintf(path, sizeof(path), "%s/%s", s->dir, name);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 || write(fd, raw, len) != (ssize_t)len) {
				rc = rz_err_set(err, -errno, "%s: %s", path, strerror(errno));
			}
		}
		if (fd >= 0) {
			close(fd);
		}
		if (raw != NULL) {
			sodium_memzero(raw, cap + 1);
		}
		free(raw);
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ jobs */

static struct slot *free_slot(rz_work_t *w)
{
	for (size_t i = 0; i < w->nslots; i++) {
		if (!w->slots[i].used) {
			return &w->slots[i];
		}
	}
	return NULL;
}

/* The answer to a job, on its reply subject: "+ACK", "+TERM", "-NAK" or "-NAK {delay}" (the
 * jobs come on plain subscriptions: libnats' natsMsg_Ack wants its own). */
static void job_answer(rz_work_t *w, natsMsg *m, const char *what)
{
	const char *reply = natsMsg_GetReply(m);
	natsStatus s;

	if (reply == NULL || reply[0] == '\0') {
		return;
	}
	s = natsConnection_PublishString(w->nc, reply, what);
	if (s != NATS_OK) {
		rz_log_warn("runner", "the answer %s to a job was not sent: %s", what,
		            rz_nats_error(s));
	}
}

/* One job: claimed, then run; acked when the daemon answered for it (200: ours; 409: over,
 * dropped), back to the stream otherwise. */
static void take(rz_work_t *w, natsMsg *m)
{
	rz_dispatch_job_t job;
	char why[256], path[160], body[256];
	struct body b = { NULL, 0, RZ_WORK_CLAIM_MAX, false };
	struct slot *s;
	rz_err_t err = { 0 };
	long code;

	if (!rz_dispatch_job_parse(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), &job, why,
	                           sizeof(why))) {
		rz_log_warn("runner", "job on %s dropped: %s", natsMsg_GetSubject(m), why);
		job_answer(w, m, "+TERM");
		return;
	}
	if (strcmp(job.daemon, w->cfg->runner_daemon_url) != 0) {
		/* the runner token goes to runner.daemon_url and nowhere else */
		rz_log_warn("runner",
		            "job of run %s names daemon %s, not runner.daemon_url: dropped",
		            job.run, job.daemon);
		job_answer(w, m, "+TERM");
		return;
	}
	snprintf(path, sizeof(path), "/api/v1/runners/%s/claims", w->name);
	snprintf(body, sizeof(body), "{\"run\":\"%s\",\"step\":\"%s\"}", job.run, job.step);
	code = request(w, "POST", path, "application/json", body, strlen(body), &b);
	if (code == 409) {
		rz_log_info("runner", "job of run %s (%s) is over: dropped", job.run, job.step);
		job_answer(w, m, "+ACK");
		free(b.p);
		return;
	}
	if (code != 200) {
		rz_log_warn("runner", "claim of run %s (%s): %s%ld%s%s; the job goes back", job.run,
		            job.step, code == 0 ? "no answer, " : "HTTP ", code,
		            code == 401 || code == 403 ? " (refused)" : "",
		            code == 0 ? w->http_error : "");
		job_answer(w, m, "-NAK {\"delay\":" RZ_WORK_NAK_DELAY_NS "}");
		free(b.p);
		return;
	}
	job_answer(w, m, "+ACK"); /* ours now: a loss of this runner makes it Interrupted */
	s = free_slot(w);
	memset(s, 0, sizeof(*s));
	s->w = w;
	s->used = true;
	snprintf(s->run, sizeof(s->run), "%s", job.run);
	snprintf(s->step, sizeof(s->step), "%s", job.step);
	snprintf(s->dir, sizeof(s->dir), "%s/%s", w->cfg->runner_work_dir, job.run);
	s->claim = json_loadb(b.p, b.len, 0, NULL);
	sodium_memzero(b.p, b.len);
	free(b.p);
	rz_log_info("runner", "run %s: step %s claimed", s->run, s->step);
	{ /* the claim's event key: every event of the step is authenticated with it */
		const char *hex = json_string_value(json_object_get(s->claim, "eventKey"));
		size_t n = 0;
		if (hex == NULL ||
		    sodium_hex2bin(s->key, sizeof(s->key), hex, strlen(hex), NULL, &n, NULL) != 0 ||
		    n != sizeof(s->key)) {
			rz_log_warn("runner",
			            "run %s: the claim has no event key (a daemon of another "
			            "version?): its events go unauthenticated",
			            s->run);
			sodium_memzero(s->key, sizeof(s->key));
		}
	}
	if (!json_is_object(s->claim) || write_files(s, &err) != 0) {
		rz_log_err("runner", "run %s: %s", s->run, err.msg[0] ? err.msg : "bad claim");
		step_end(s, 1, false, false);
		return;
	}
	s->in_init = json_is_array(json_object_get(s->claim, "init"));
	if (start(s, json_object_get(s->claim, s->in_init ? "init" : "argv"), &err) != 0) {
		rz_log_err("runner", "run %s: %s", s->run, err.msg);
		step_end(s, 127, false, false);
	}
}

/* Pool i's consumer, made or brought to this runner's runner.pool_idle (a runner configured
 * otherwise may have made it): one durable consumer per pool, shared by every runner that
 * serves it, each job going to one of them (the stream is a work queue). NATS removes the
 * consumer once nobody pulled from it for runner.pool_idle (a pool whose runners are gone
 * leaves nothing behind); the jobs wait in the stream meanwhile. -ENOENT when the stream
 * is not there yet (the daemon makes it). */
static int make_consumer(rz_work_t *w, size_t i, rz_err_t *err)
{
	char subject[RZ_DISPATCH_POOL_MAX + 80], durable[RZ_DISPATCH_POOL_MAX + 16];
	jsConsumerConfig cc;
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus s;

	snprintf(subject, sizeof(subject), "%s%s", w->names.jobs, w->pools[i].name);
	rz_dispatch_durable(durable, sizeof(durable), w->pools[i].name);
	w->pools[i].checked_ms = rz_clock_now_ms();
	jsConsumerConfig_Init(&cc);
	cc.Durable = durable;
	cc.FilterSubject = subject;
	cc.AckPolicy = js_AckExplicit;
	cc.AckWait = 60LL * 1000000000; /* a claim answered within a minute */
	cc.InactiveThreshold = w->cfg->runner_pool_idle_ms * 1000000; /* ns */
	s = js_UpdateConsumer(NULL, w->js, w->names.jobs_stream, &cc, NULL, &jerr);
	if (s != NATS_OK && jerr == JSConsumerNotFoundErr) {
		jerr = 0;
		s = js_AddConsumer(NULL, w->js, w->names.jobs_stream, &cc, NULL, &jerr);
	}
	if (s == NATS_OK) {
		return 0;
	}
	if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
		return rz_err_set(err, -ENOENT, "NATS: cannot pull %s: no such stream yet",
		                  subject);
	}
	/* not allowed to change it, say: pulled as it is, if it is there */
	if (js_GetConsumerInfo(&ci, w->js, w->names.jobs_stream, durable, NULL, NULL) == NATS_OK) {
		jsConsumerInfo_Destroy(ci);
		rz_log_warn("runner", "pool %s: consumer %s kept as it is: %s (JetStream error %d)",
		            w->pools[i].name, durable, rz_nats_error(s), (int)jerr);
		return 0;
	}
	return rz_err_set(err, -EIO, "NATS: cannot pull %s: %s (JetStream error %d)", subject,
	                  rz_nats_error(s), (int)jerr);
}

/* Pool i's consumer is gone (removed after runner.pool_idle while this runner was busy, or
 * by an operator): made again; said once until it pulls again. */
static void pool_lost(rz_work_t *w, size_t i, const char *why)
{
	rz_err_t err = { 0 };

	w->pools[i].asked = false;
	if (natsConnection_Status(w->nc) != NATS_CONN_STATUS_CONNECTED) {
		return; /* NATS is away: a request would wait out its timeout */
	}
	if (make_consumer(w, i, &err) == 0) {
		rz_log_info("runner", "pool %s: its consumer was gone (%s); pulling again",
		            w->pools[i].name, why);
		w->pools[i].lost_told = false;
	} else {
		if (!w->pools[i].lost_told) {
			rz_log_warn("runner", "pool %s: %s; trying again in a second",
			            w->pools[i].name, err.msg);
		}
		w->pools[i].lost_told = true;
		w->pools[i].quiet_until_ms = rz_clock_now_ms() + 1000;
	}
}

/* Whether pool i's consumer is there: asked of NATS at most every half runner.pool_idle
 * (a minute at most), since a pull request to a consumer NATS removed is answered by
 * nobody. */
static bool consumer_there(rz_work_t *w, size_t i)
{
	int64_t now = rz_clock_now_ms(), every = w->cfg->runner_pool_idle_ms / 2;
	char durable[RZ_DISPATCH_POOL_MAX + 16];
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus s;

	if (now - w->pools[i].checked_ms < (every < 60000 ? every : 60000)) {
		return true;
	}
	w->pools[i].checked_ms = now;
	rz_dispatch_durable(durable, sizeof(durable), w->pools[i].name);
	s = js_GetConsumerInfo(&ci, w->js, w->names.jobs_stream, durable, NULL, &jerr);
	if (ci != NULL) {
		jsConsumerInfo_Destroy(ci);
	}
	return s == NATS_OK || jerr != JSConsumerNotFoundErr; /* NATS away: asked later */
}

/* A pull request for one job of pool i, answered on its inbox within w->pull_ms: by the
 * job, or by a status (408 when it expired). */
static void ask(rz_work_t *w, size_t i)
{
	char subject[RZ_DISPATCH_POOL_MAX + 120], durable[RZ_DISPATCH_POOL_MAX + 16], body[64];
	struct pool *p = &w->pools[i];
	int64_t now = rz_clock_now_ms();
	natsStatus s;

	if (!consumer_there(w, i)) {
		pool_lost(w, i, "not found");
		return;
	}
	rz_dispatch_durable(durable, sizeof(durable), p->name);
	snprintf(subject, sizeof(subject), RZ_NATS_PULL_PREFIX "%s.%s", w->names.jobs_stream,
	         durable);
	snprintf(body, sizeof(body), "{\"batch\":1,\"expires\":%lld}",
	         (long long)w->pull_ms * 1000000); /* ns */
	s = natsConnection_PublishRequestString(w->nc, subject, p->inbox, body);
	if (s != NATS_OK) {
		p->quiet_until_ms = now + 1000;
		return;
	}
	p->asked = true;
	p->asked_until_ms = now + w->pull_ms + RZ_WORK_PULL_GRACE_MS;
}

/* An answer of pool i's pull request that is a status, not a job. */
static void pull_status(rz_work_t *w, size_t i, natsMsg *m, const char *status)
{
	const char *desc = NULL;

	w->pools[i].asked = false;
	if (strncmp(status, "100", 3) == 0) {
		w->pools[i].asked = true; /* a heartbeat: the request still waits */
		return;
	}
	if (strncmp(status, "404", 3) == 0 || strncmp(status, "408", 3) == 0) {
		return; /* no job (expired): asked again */
	}
	(void)natsMsgHeader_Get(m, "Description", &desc);
	if (desc != NULL && strstr(desc, "Consumer Deleted") != NULL) {
		pool_lost(w, i, desc);
		return;
	}
	/* too many waiting requests, a leader changing, ...: not again for a second */
	rz_log_debug("runner", "pool %s: pull answered %s %s", w->pools[i].name, status,
	             desc != NULL ? desc : "");
	w->pools[i].quiet_until_ms = rz_clock_now_ms() + 1000;
}

/* The answers pool i's pull requests got: a job is taken when a slot is free, else it goes
 * back at once (another runner may be waiting for it). */
static void pool_answers(rz_work_t *w, size_t i)
{
	natsMsg *m = NULL;
	natsStatus s;

	while ((s = natsSubscription_NextMsg(&m, w->pools[i].sub, 0)) == NATS_OK) {
		const char *status = NULL;
		if (natsMsgHeader_Get(m, "Status", &status) == NATS_OK && status != NULL) {
			pull_status(w, i, m, status);
		} else {
			w->pools[i].asked = false;
			w->pools[i].lost_told = false;
			if (free_slot(w) != NULL) {
				take(w, m);
			} else {
				job_answer(w, m, "-NAK");
			}
		}
		natsMsg_Destroy(m);
	}
	if (s == NATS_NO_RESPONDERS) {
		pool_lost(w, i, "no responders");
	}
}

void rz_work_tick(rz_work_t *w)
{
	natsMsg *m = NULL;
	int64_t now;
	uint64_t reconnects = 0;

	if (w == NULL) {
		return;
	}
	while (natsSubscription_NextMsg(&m, w->cancel, 0) == NATS_OK) {
		json_t *j =
		    json_loadb(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), 0, NULL);
		const char *run = json_string_value(json_object_get(j, "run"));
		for (size_t i = 0; run != NULL && i < w->nslots; i++) {
			if (w->slots[i].used && strcmp(w->slots[i].run, run) == 0) {
				rz_log_info("runner", "run %s: canceled by the daemon", run);
				rz_proc_cancel(w->slots[i].proc);
			}
		}
		json_decref(j);
		natsMsg_Destroy(m);
	}
	/* NATS forgets the pull requests of a connection it lost */
	if (natsConnection_GetStats(w->nc, w->stats) == NATS_OK &&
	    natsStatistics_GetCounts(w->stats, NULL, NULL, NULL, NULL, &reconnects) == NATS_OK &&
	    reconnects != w->reconnects) {
		w->reconnects = reconnects;
		for (size_t i = 0; i < w->npools; i++) {
			w->pools[i].asked = false;
		}
	}
	for (size_t k = 0; k < w->npools; k++) { /* from a rotating start: no pool first always */
		pool_answers(w, (w->next_pool + k) % w->npools);
	}
	w->next_pool = (w->next_pool + 1) % (w->npools ? w->npools : 1);
	/* a request waits in every pool while a slot is free: a busy runner holds no job it
	 * cannot start */
	now = rz_clock_now_ms();
	for (size_t i = 0; i < w->npools && free_slot(w) != NULL; i++) {
		struct pool *p = &w->pools[i];
		if ((!p->asked || now >= p->asked_until_ms) && now >= p->quiet_until_ms) {
			ask(w, i);
		}
	}
}

/* What a runner's requests to runner.daemon_url carry: the runner token (token:
 * RZ_NATS_SECRET_MAX + 2 bytes) and, for https, the client checking the daemon's certificate
 * (*tls; NULL for http). */
static int daemon_credentials(const rz_config_t *cfg, char *token, rz_tls_client_t **tls,
                              rz_err_t *err)
{
	int rc = rz_nats_read_secret("runner.token_file", cfg->runner_token_file, token,
	                             RZ_NATS_SECRET_MAX + 2, err);

	if (rc == 0 && strncmp(cfg->runner_daemon_url, "https://", 8) == 0) {
		rc = rz_tls_client_new(tls, cfg->runner_daemon_ca_file, err);
	}
	return rc;
}

int rz_work_installation(const rz_config_t *cfg, const char *name, char *out, rz_err_t *err)
{
	char token[RZ_NATS_SECRET_MAX + 2], url[1024], why[256];
	rz_tls_client_t *tls = NULL;
	rz_fetched_t got = { 0 };
	rz_fetch_t f = { .method = "GET",
		         .url = url,
		         .bearer = token,
		         .max = 4096,
		         .timeout_s = RZ_WORK_HTTP_TIMEOUT };
	rz_nats_names_t names;
	json_t *o = NULL;
	const char *i;
	int rc;

	rc = daemon_credentials(cfg, token, &tls, err);
	if (rc == 0) {
		snprintf(url, sizeof(url), "%s/api/v1/runners/%s/assignment",
		         cfg->runner_daemon_url, name);
		f.tls = tls;
		if (rz_http_fetch(&f, &got, err) != 0) {
			snprintf(why, sizeof(why), "%.200s", err->msg);
			rc = rz_err_set(err, -EAGAIN, "runner.daemon_url: no answer to %s: %s", url,
			                why);
		}
	}
	if (rc == 0 && got.code != 200) {
		o = json_loadb(got.body ? got.body : "", got.len, 0, NULL);
		rc = rz_err_set(err, got.code >= 500 ? -EAGAIN : -EACCES,
		                "runner.daemon_url: %s answered %ld: %.200s", url, got.code,
		                json_string_value(json_object_get(o, "message"))
		                    ? json_string_value(json_object_get(o, "message"))
		                    : "(no message)");
	} else if (rc == 0) {
		o = json_loadb(got.body, got.len, 0, NULL);
		i = json_string_value(json_object_get(o, "installation"));
		if ((rc = rz_nats_names("runner.daemon_url's assignment", i, &names, err)) == 0) {
			memcpy(out, names.installation, sizeof(names.installation));
		}
	}
	json_decref(o);
	free(got.body);
	rz_tls_client_free(tls);
	sodium_memzero(token, sizeof(token));
	return rc;
}

int rz_work_new(rz_work_t **out, struct event_base *base, natsConnection *nc,
                const rz_config_t *cfg, const rz_nats_names_t *names, const char *name,
                const json_t *labels, rz_err_t *err)
{
	rz_work_t *w = calloc(1, sizeof(*w));
	char why[256], subject[RZ_DISPATCH_POOL_MAX + 80];
	json_t *pools = NULL, *p;
	natsInbox *inbox = NULL;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (w == NULL ||
	    (w->slots = calloc((size_t)cfg->runner_concurrency, sizeof(*w->slots))) == NULL ||
	    (w->pools = calloc(RZ_DISPATCH_POOLS_MAX, sizeof(*w->pools))) == NULL ||
	    natsStatistics_Create(&w->stats) != NATS_OK || natsInbox_Create(&inbox) != NATS_OK) {
		rz_work_free(w);
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	/* a pull request waits this long, renewed well within runner.pool_idle */
	w->pull_ms = cfg->runner_pool_idle_ms / 2 < RZ_WORK_PULL_MS ? cfg->runner_pool_idle_ms / 2
	                                                            : RZ_WORK_PULL_MS;
	w->base = base;
	w->nc = nc;
	w->cfg = cfg;
	w->names = *names;
	w->nslots = (size_t)cfg->runner_concurrency;
	snprintf(w->name, sizeof(w->name), "%s", name);
	rc = daemon_credentials(cfg, w->token, &w->tls, err);
	if (rc == 0 && (pools = rz_dispatch_pools(labels, why, sizeof(why))) == NULL) {
		rc = rz_err_set(err, REZUS_ECONFIG, "runner.labels: %s", why);
	}
	if (rc == 0 && natsConnection_JetStream(&w->js, nc, NULL) != NATS_OK) {
		rc = rz_err_set(err, -EIO, "NATS: no JetStream context");
	}
	json_array_foreach(pools, i, p)
	{
		if (rc != 0) {
			break;
		}
		struct pool *pl = &w->pools[w->npools];
		snprintf(pl->name, sizeof(pl->name), "%s", json_string_value(p));
		/* under the runner's own inbox prefix (rz_nats_conf_runner), which its NATS
		 * user may subscribe to: _INBOX.<nuid> becomes <prefix>.<nuid>.<i> */
		snprintf(pl->inbox, sizeof(pl->inbox), RZ_NATS_RUNNER_INBOX "%s.%s.%zu", name,
		         strchr(inbox, '.') != NULL ? strchr(inbox, '.') + 1 : inbox, i);
		if ((rc = make_consumer(w, w->npools, err)) == 0 &&
		    natsConnection_SubscribeSync(&pl->sub, nc, pl->inbox) != NATS_OK) {
			rc = rz_err_set(err, -EIO, "NATS: cannot subscribe to %s", pl->inbox);
		}
		if (rc == 0) {
			w->npools++;
		}
	}
	if (rc == 0) {
		snprintf(subject, sizeof(subject), "%s%s.cancel", w->names.runners, name);
		if (natsConnection_SubscribeSync(&w->cancel, nc, subject) != NATS_OK) {
			rc = rz_err_set(err, -EIO, "NATS: cannot subscribe to %s", subject);
		}
	}
	json_decref(pools);
	natsInbox_Destroy(inbox);
	if (rc != 0) {
		rz_work_free(w);
		return rc;
	}
	rz_log_info("runner", "taking jobs from %zu pool(s) of %s, %zu at once, for %s", w->npools,
	            w->names.jobs_stream, w->nslots, cfg->runner_daemon_url);
	*out = w;
	return 0;
}

json_t *rz_work_running(const rz_work_t *w)
{
	json_t *a = json_array();

	for (size_t i = 0; w != NULL && i < w->nslots; i++) {
		if (w->slots[i].used) {
			json_array_append_new(a, json_string(w->slots[i].run));
		}
	}
	return a;
}

size_t rz_work_busy(const rz_work_t *w)
{
	size_t n = 0;

	for (size_t i = 0; w != NULL && i < w->nslots; i++) {
		n += w->slots[i].used;
	}
	return n;
}

void rz_work_stop(rz_work_t *w)
{
	natsMsg *m = NULL;

	for (size_t i = 0; w != NULL && i < w->nslots; i++) {
		if (w->slots[i].used) {
			slot_free(&w->slots[i]); /* kills what still runs */
		}
	}
	/* jobs that came for requests still waiting go back at once, not after their ack
	 * wait; no job comes for them any more */
	for (size_t i = 0; w != NULL && i < w->npools; i++) {
		while (natsSubscription_NextMsg(&m, w->pools[i].sub, 0) == NATS_OK) {
			const char *status = NULL;
			if (natsMsgHeader_Get(m, "Status", &status) != NATS_OK || status == NULL) {
				job_answer(w, m, "-NAK");
			}
			natsMsg_Destroy(m);
		}
		(void)natsSubscription_Unsubscribe(w->pools[i].sub);
	}
}

void rz_work_free(rz_work_t *w)
{
	if (w == NULL) {
		return;
	}
	rz_work_stop(w);
	for (size_t i = 0; w->pools != NULL && i < RZ_DISPATCH_POOLS_MAX; i++) {
		natsSubscription_Destroy(w->pools[i].sub);
	}
	free(w->pools);
	natsStatistics_Destroy(w->stats);
	natsSubscription_Destroy(w->cancel);
	jsCtx_Destroy(w->js);
	sodium_memzero(w->token, sizeof(w->token));
	rz_tls_client_free(w->tls);
	free(w->slots);
	free(w);
}

#else /* no NATS */

void rz_work_tick(rz_work_t *w)
{
	(void)w;
}

json_t *rz_work_running(const rz_work_t *w)
{
	(void)w;
	return json_array();
}

size_t rz_work_busy(const rz_work_t *w)
{
	(void)w;
	return 0;
}

void rz_work_stop(rz_work_t *w)
{
	(void)w;
}

void rz_work_free(rz_work_t *w)
{
	(void)w;
}

#endif
