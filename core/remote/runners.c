/* core/remote/runners.c - Runner objects from heartbeats (core/remote/runners.h). */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/remote/dispatch.h"
#include "core/remote/heartbeat.h"
#include "core/remote/nats.h"
#include "core/remote/roster.h"
#include "core/remote/runners.h"

/* A remote step in progress: its job is out, its events come back. */
struct step {
	char run[64], tenant[64], step[8], runner[64]; /* runner: "" until one claimed it */
	int attempt;
	bool unpublished;                /* its job is not out yet */
	char pool[RZ_DISPATCH_POOL_MAX]; /* where its job is */
	json_t *selector;                /* the tenant's runnerSelector, or NULL */
	int64_t next_seq;                /* the next event expected */
	int64_t held_ms;                 /* when a runner claimed it (or a restart took it up) */
	int64_t published_ms;            /* when its job went out (0: not by this daemon) */
	int tries;                       /* publications of its job no runner claimed */
	int64_t listed_ms;               /* its runner's last heartbeat that listed the run */
	bool told;                       /* on_waiting was called */
	rz_exec_step_t cb;               /* callbacks and arg; its strings are not kept */
	unsigned char key[RZ_DISPATCH_KEY_LEN]; /* its claim's event key */
	bool keyed;                             /* claimed: key is set */
	bool forged_told;                       /* an event without a valid MAC was logged */
};

struct rz_runners {
	struct event_base *base;
	rz_executor_t exec;
	struct step *steps;
	size_t nsteps;
	size_t unpublished; /* steps whose job is not out yet */
	bool was_down;      /* NATS was not connected at a sweep: no heartbeat could come */
	size_t last_capacity;
	void (*on_capacity)(void *arg);
	void *capacity_arg;
	uint64_t jobs, events_handled, events_dropped;
	uint64_t wait_hist[RZ_RUNNERS_WAIT_BUCKETS + 1], wait_count;
	double wait_seconds;
	const rz_config_t *cfg;
	rz_store_t *store;
	rz_workers_t *workers;
	struct event *tick;
	rz_roster_t roster;    /* the Runners */
	rz_nats_names_t names; /* this installation's subjects and streams */
	int64_t last_sweep_ms;
	bool enabled;
	char daemon_url[RZ_DISPATCH_URL_MAX + 1]; /* in every job */
#ifdef HAVE_LIBNATS
	natsConnection *nc;
	natsSubscription *sub;
	jsCtx *js;                /* publishes the jobs */
	natsSubscription *events; /* rezus.<i>.events.>, durable, explicit ack */
	natsSubscription *new_events;
	bool was_connected;
	int64_t retry_at_ms;      /* when to make a new connection after one was closed */
	int64_t streams_retry_ms; /* when to check the streams again after a failure */
	bool streams, streams_pending;
	char streams_why[256];
	rz_err_t streams_err;
#endif
};

/* ------------------------------------------------------------------ heartbeats */

#ifdef HAVE_LIBNATS

/* The steps runner x holds whose run its heartbeat lists: listed now. */
static void listed(rz_runners_t *r, const rz_roster_runner_t *x, int64_t now)
{
	const json_t *running = json_object_get(x->hb, "running"), *v;
	size_t k;

	for (size_t i = 0; i < r->nsteps; i++) {
		struct step *st = &r->steps[i];
		if (strcmp(st->runner, x->name) != 0) {
			continue;
		}
		json_array_foreach(running, k, v)
		{
			if (json_is_string(v) && strcmp(json_string_value(v), st->run) == 0) {
				st->listed_ms = now;
			}
		}
	}
}

#endif

static void lose_steps(rz_runners_t *r, const char *runner);

static struct step *step_of(rz_runners_t *r, const char *run)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		if (strcmp(r->steps[i].run, run) == 0) {
			return &r->steps[i];
		}
	}
	return NULL;
}

static void step_remove(rz_runners_t *r, struct step *st)
{
	json_decref(st->selector);
	r->unpublished -= st->unpublished;
	*st = r->steps[--r->nsteps];
}

static bool connected(const rz_runners_t *r);

/* Why a job of the pool (of selector) waits with no runner to take it, into why; false
 * when a Ready runner serves it and NATS is connected. step: the step's name, or NULL. */
static bool why_waiting(const rz_runners_t *r, const json_t *selector, const char *pool,
                        const char *step, char *why, size_t size)
{
	char sel[1024] = "";
	const char *key;
	json_t *v;

	if (!connected(r)) {
		snprintf(why, size, "NATS at %s is not connected: no runner can take the %s%s",
		         r->cfg->runners_nats_url, step ? step : "run's",
		         step ? " step" : " steps");
		return true;
	}
	if (rz_roster_served(&r->roster, selector)) {
		return false;
	}
	json_object_foreach((json_t *)selector, key, v)
	{
		size_t n = strlen(sel);
		snprintf(sel + n, sizeof(sel) - n, "%s%s=%s", n ? "," : "", key,
		         json_string_value(v) ?: "");
	}
	snprintf(why, size, "no Ready runner serves pool %s%s%s%s", pool,
	         sel[0] ? " (runnerSelector " : "", sel, sel[0] ? ")" : "");
	return true;
}

/* Steps whose job waits with no runner to take it: told once each (the Run's condition). */
static void tell_waiting(rz_runners_t *r)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		struct step *st = &r->steps[i];
		char why[RZ_DISPATCH_POOL_MAX + 1536];
		if (st->told || st->runner[0] != '\0' || st->cb.on_waiting == NULL) {
			continue;
		}
		if (!why_waiting(r, st->selector, st->pool, st->step, why, sizeof(why))) {
			continue;
		}
		st->told = true;
		st->cb.on_waiting(st->cb.arg, why); /* writes a condition: the table stays */
	}
}

/* Steps held by a runner that is not Ready nor Stopping a timeout after they were taken
 * up (a restart found its Runner Lost, or none): lost as well. */
static void lose_orphans(rz_runners_t *r, int64_t now)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		struct step *st = &r->steps[i];
		rz_roster_runner_t *x =
		    st->runner[0] != '\0' ? rz_roster_find(&r->roster, st->runner) : NULL;
		if (st->runner[0] != '\0' && (x == NULL || x->phase == RZ_RUNNER_LOST) &&
		    now - st->held_ms >= r->cfg->runners_heartbeat_timeout_ms) {
			char name[64];
			snprintf(name, sizeof(name), "%s", st->runner);
			lose_steps(r, name);
			i = (size_t)-1; /* the table changed */
		} else if (st->runner[0] != '\0' && x != NULL && x->phase == RZ_RUNNER_READY &&
		           now - (st->listed_ms > st->held_ms ? st->listed_ms : st->held_ms) >=
		               r->cfg->runners_heartbeat_timeout_ms) {
			/* alive, but not running it (its claim's answer never reached it, say):
			 * the step is lost, not the runner */
			rz_exec_step_t cb = st->cb;
			char name[64], run[64];
			snprintf(name, sizeof(name), "%s", st->runner);
			snprintf(run, sizeof(run), "%s", st->run);
			step_remove(r, st);
			rz_log_warn("remote",
			            "runner %s is Ready but has not listed run %s for %lld ms "
			            "(runners.heartbeat_timeout): its step is taken as lost",
			            name, run, (long long)r->cfg->runners_heartbeat_timeout_ms);
			cb.on_lost(cb.arg, name);
			i = (size_t)-1; /* the table changed */
		}
	}
}

/* The steps a runner holds end Interrupted: on_lost (which forgets them). */
static void lose_steps(rz_runners_t *r, const char *runner)
{
	for (size_t i = 0; i < r->nsteps;) {
		if (strcmp(r->steps[i].runner, runner) == 0) {
			rz_exec_step_t cb = r->steps[i].cb;
			char name[64], run[64];
			snprintf(name, sizeof(name), "%s", runner);
			snprintf(run, sizeof(run), "%s", r->steps[i].run);
			step_remove(r, &r->steps[i]);
			rz_log_warn("remote", "runner %s lost while it held a step of run %s", name,
			            run);
			cb.on_lost(cb.arg, name);
			i = 0; /* on_lost may have changed the table */
			continue;
		}
		i++;
	}
}

static void publish_jobs(rz_runners_t *r);

/* Steps whose job no runner claimed within runners.claim_timeout while a Ready runner
 * serves its pool (a runner of another daemon on the same NATS dropped it, or NATS lost it):
 * published again as a new attempt; after RZ_RUNNERS_CLAIM_TRIES the step fails, saying
 * why (the run's diagnostic). While nobody serves the pool the clock does not run. */
static void reclaim(rz_runners_t *r, int64_t now)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		struct step *st = &r->steps[i];
		char why[RZ_DISPATCH_POOL_MAX + 256];
		if (st->runner[0] != '\0' || st->unpublished || st->published_ms == 0) {
			continue;
		}
		if (!rz_roster_served(&r->roster, st->selector)) {
			st->published_ms = now; /* (waiting for a runner: on_waiting said so) */
			continue;
		}
		if (now - st->published_ms < r->cfg->runners_claim_timeout_ms) {
			continue;
		}
		if (st->tries < RZ_RUNNERS_CLAIM_TRIES) {
			rz_log_warn("remote",
			            "run %s: no runner claimed its %s job in %lld ms "
			            "(runners.claim_timeout): published again",
			            st->run, st->step, (long long)(now - st->published_ms));
			st->attempt++;
			st->unpublished = true;
			r->unpublished++;
			continue;
		}
		snprintf(why, sizeof(why),
		         "no runner claimed the %s step's job on pool %s in %d tries of %lld s "
		         "(runners.claim_timeout): is a runner of another daemon on the same NATS "
		         "taking its jobs?",
		         st->step, st->pool, st->tries,
		         (long long)(r->cfg->runners_claim_timeout_ms / 1000));
		rz_log_warn("remote", "run %s: %s", st->run, why);
		{
			rz_exec_step_t cb = st->cb;
			step_remove(r, st);
			if (cb.on_line != NULL) {
				cb.on_line(cb.arg, why, strlen(why), true);
			}
			cb.on_exit(cb.arg, 1, false, false);
		}
		i = (size_t)-1; /* the table changed */
	}
	publish_jobs(r);
}

/* Runner name went Lost or Offline: the steps it held are lost. */
static void gone(void *arg, const char *name)
{
	lose_steps(arg, name);
}

/* Runners without a heartbeat for runners.heartbeat_timeout: Lost (a Ready one) or Offline
 * (a Stopping one, which said goodbye), the steps they held lost. */
static void sweep(rz_runners_t *r, int64_t now)
{
	if (r->enabled && !connected(r)) {
		/* no heartbeat can come: nobody is lost for the daemon's own disconnection */
		r->was_down = true;
		tell_waiting(r);
		return;
	}
	if (r->was_down) {
		/* back: every runner gets a whole timeout to be heard again, as at a start */
		r->was_down = false;
		rz_roster_seen_all(&r->roster, now);
		for (size_t i = 0; i < r->nsteps; i++) {
			r->steps[i].held_ms = now;
		}
	}
	rz_roster_sweep(&r->roster, now, gone, r);
	lose_orphans(r, now);
	reclaim(r, now);
	tell_waiting(r);
}

/* ------------------------------------------------------------------ NATS */

#ifdef HAVE_LIBNATS

static atomic_llong last_async_log;

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *arg)
{
	long long now = (long long)rz_clock_now_ms();

	(void)nc;
	(void)sub;
	(void)arg;
	if (now - atomic_load(&last_async_log) >= 10000) { /* at most one line per 10 s */
		atomic_store(&last_async_log, now);
		rz_log_warn("remote", "NATS: %s", natsStatus_GetText(err));
	}
}

static void on_disconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_warn("remote", "NATS connection lost; reconnecting every %d ms",
	            RZ_NATS_RECONNECT_WAIT);
}

static void on_reconnected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_info("remote", "NATS connection back");
}

static void on_connected(natsConnection *nc, void *arg)
{
	(void)nc;
	(void)arg;
	rz_log_info("remote", "connected to NATS");
}

/* Where the events' consumer a previous daemon (or connection) left goes on: after the last
 * event it acked, or 0 (none left: only new events). Events it was handed but never acked
 * (its process or connection died with them) would come again only once their ack wait
 * ran out, after the later ones, and then be dropped as already past; so the consumer is
 * made again from there, and every event not acked comes at once and in order. */
static uint64_t events_resume_at(rz_runners_t *r)
{
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	uint64_t at;
	natsStatus s;

	s = js_GetConsumerInfo(&ci, r->js, r->names.events_stream, RZ_RUNNERS_EVENTS_DURABLE, NULL,
	                       &jerr);
	if (s != NATS_OK) {
		if (jerr != JSConsumerNotFoundErr) {
			rz_log_warn("remote", "NATS: no information on the consumer %s of %s: %s",
			            RZ_RUNNERS_EVENTS_DURABLE, r->names.events_stream,
			            rz_nats_error(s));
		}
		return 0;
	}
	at = ci->AckFloor.Stream + 1;
	if (ci->NumAckPending > 0) {
		rz_log_info("remote", "%lld events handed out but not acked come again from %llu",
		            (long long)ci->NumAckPending, (unsigned long long)at);
	}
	jsConsumerInfo_Destroy(ci);
	s = js_DeleteConsumer(r->js, r->names.events_stream, RZ_RUNNERS_EVENTS_DURABLE, NULL,
	                      &jerr);
	if (s != NATS_OK && jerr != JSConsumerNotFoundErr) {
		rz_log_warn("remote", "NATS: the consumer %s of %s stays as it was: %s",
		            RZ_RUNNERS_EVENTS_DURABLE, r->names.events_stream, rz_nats_error(s));
		return 0;
	}
	return at;
}

/* A worker thread: the streams, created when absent. */
static void streams_work(void *arg)
{
	rz_runners_t *r = arg;
	jsSubOptions so;
	jsErrCode jerr = 0;
	natsStatus s;
	char subject[96];

	memset(&r->streams_err, 0, sizeof(r->streams_err));
	r->new_events = NULL;
	if (rz_nats_ensure_streams(r->nc, &r->names, &r->streams_err) != 0 || r->events != NULL) {
		return;
	}
	/* the events of every run, in order per run, acked once handled; a durable consumer
	 * keeps its place across reconnects, and a new daemon (or connection) starts again
	 * after the last event acked */
	jsSubOptions_Init(&so);
	so.Stream = r->names.events_stream;
	so.ManualAck = true;
	so.Config.Durable = RZ_RUNNERS_EVENTS_DURABLE;
	so.Config.AckPolicy = js_AckExplicit;
	so.Config.DeliverPolicy = js_DeliverNew;
	so.Config.MaxAckPending = RZ_RUNNERS_PENDING;
	so.Config.OptStartSeq = events_resume_at(r);
	if (so.Config.OptStartSeq > 0) {
		so.Config.DeliverPolicy = js_DeliverByStartSequence;
	}
	snprintf(subject, sizeof(subject), "%s>", r->names.events);
	s = js_SubscribeSync(&r->new_events, r->js, subject, NULL, &so, &jerr);
	if (s == NATS_OK) {
		s = natsSubscription_SetPendingLimits(r->new_events, RZ_RUNNERS_PENDING,
		                                      RZ_RUNNERS_PENDING * RZ_DISPATCH_EVENT_MAX);
	}
	if (s != NATS_OK) {
		natsSubscription_Destroy(r->new_events);
		r->new_events = NULL;
		rz_err_set(&r->streams_err, -EIO,
		           "NATS: cannot consume %s: %s (JetStream error %d)",
		           r->names.events_stream, rz_nats_error(s), (int)jerr);
	}
}

static void streams_done(void *arg, int canceled)
{
	rz_runners_t *r = arg;

	r->streams_pending = false;
	if (r->new_events != NULL) {
		r->events = r->new_events;
		r->new_events = NULL;
	}
	if (canceled) {
		return;
	}
	r->streams = r->streams_err.code == 0;
	snprintf(r->streams_why, sizeof(r->streams_why), "%s", r->streams_err.msg);
	if (!r->streams) {
		rz_log_err("remote", "%s; tried again in %d ms", r->streams_why,
		           RZ_RUNNERS_RETRY_MS);
	}
}

/* Drop a connection NATS closed (refused credentials, say), to try again later. Not while
 * the stream check on the pool uses it. */
static void drop_connection(rz_runners_t *r, int64_t now)
{
	const char *why = NULL;

	if (r->streams_pending) {
		return;
	}
	if (r->nc != NULL) {
		(void)natsConnection_GetLastError(r->nc, &why);
	}
	rz_log_err("remote",
	           "NATS at %s closed the connection%s%s (refused runners.nats_user's "
	           "credentials, or out of reach); a new one in %d ms",
	           r->cfg->runners_nats_url, why != NULL && why[0] != '\0' ? ": " : "",
	           why != NULL ? why : "", RZ_RUNNERS_RETRY_MS);
	natsSubscription_Destroy(r->sub);
	r->sub = NULL;
	natsSubscription_Destroy(r->events);
	r->events = NULL;
	jsCtx_Destroy(r->js);
	r->js = NULL;
	if (r->nc != NULL) {
		natsConnection_Destroy(r->nc);
		r->nc = NULL;
	}
	r->was_connected = false;
	r->streams = false;
	r->retry_at_ms = now + RZ_RUNNERS_RETRY_MS;
}

/* A connection (libnats retries it until the server answers, and reconnects it after),
 * subscribed to the heartbeats. A failure is logged and tried again RZ_RUNNERS_RETRY_MS
 * later; only a configuration problem (a secret file unreadable) is returned. */
static int connect_nats(rz_runners_t *r, int64_t now, rz_err_t *err)
{
	natsOptions *o = NULL;
	rz_nats_conf_t c;
	natsStatus s;
	int rc;

	rz_nats_conf_daemon(r->cfg, &c);
	r->retry_at_ms = now + RZ_RUNNERS_RETRY_MS;
	rc = rz_nats_options(&o, &c, -1, err);
	if (rc != 0) {
		return rc;
	}
	natsOptions_SetErrorHandler(o, on_error, r);
	natsOptions_SetDisconnectedCB(o, on_disconnected, r);
	natsOptions_SetReconnectedCB(o, on_reconnected, r);
	s = natsOptions_SetRetryOnFailedConnect(o, true, on_connected, r);
	if (s == NATS_OK) {
		s = natsConnection_Connect(&r->nc, o);
	}
	natsOptions_Destroy(o);
	if (s == NATS_NOT_YET_CONNECTED) {
		rz_log_warn("remote", "NATS at %s not reachable yet; retrying every %d ms", c.url,
		            RZ_NATS_RECONNECT_WAIT);
	} else if (s != NATS_OK) {
		rz_log_err("remote", "NATS at %s: %s; a new connection in %d ms", c.url,
		           rz_nats_error(s), RZ_RUNNERS_RETRY_MS);
		natsConnection_Destroy(r->nc);
		r->nc = NULL;
		return 0;
	}
	{
		char hb[96];
		snprintf(hb, sizeof(hb), "%s*" RZ_SUBJECT_SUFFIX, r->names.runners);
		s = natsConnection_SubscribeSync(&r->sub, r->nc, hb);
	}
	if (s == NATS_OK) {
		s = natsConnection_JetStream(&r->js, r->nc, NULL);
	}
	if (s == NATS_OK) {
		s = natsSubscription_SetPendingLimits(r->sub, RZ_RUNNERS_PENDING,
		                                      RZ_RUNNERS_PENDING * RZ_HEARTBEAT_MAX);
	}
	if (s != NATS_OK) {
		drop_connection(r, now);
	}
	return 0;
}

/* One event of a remote step: a line, or its end, to the engine's callbacks, in order.
 * mac: its Rezus-Event-Mac header, or NULL. */
static void event(rz_runners_t *r, const char *subject, const char *data, size_t len,
                  const char *mac)
{
	rz_dispatch_event_t ev;
	char why[256];
	struct step *st;

	if (!rz_dispatch_event_parse(subject, data, len, &ev, why, sizeof(why))) {
		r->events_dropped++;
		rz_log_warn("remote", "event on '%.80s' dropped: %s", subject ? subject : "", why);
		return;
	}
	st = step_of(r, ev.run);
	if (st != NULL && strcmp(st->step, ev.step) == 0 &&
	    (!st->keyed || !rz_dispatch_event_mac_ok(st->key, subject, data, len, mac))) {
		/* not from the runner holding the step's claim: dropped, and said once per
		 * step (a flood of them must not flood the log; the count is the metric's) */
		r->events_dropped++;
		if (!st->forged_told) {
			st->forged_told = true;
			rz_log_warn("remote",
			            "run %s: an event of its %s step with %s dropped: not from "
			            "the runner holding its claim (%s); more such are dropped "
			            "without a line",
			            ev.run, ev.step, mac == NULL ? "no MAC" : "a wrong MAC",
			            st->runner[0] ? st->runner : "none yet");
		}
		rz_dispatch_event_clear(&ev);
		return;
	}
	if (st == NULL || strcmp(st->step, ev.step) != 0 || ev.seq < st->next_seq) {
		/* a run that ended, a step before this one, or one delivered again */
		r->events_dropped++;
		rz_dispatch_event_clear(&ev);
		return;
	}
	if (ev.seq > st->next_seq) {
		rz_log_warn("remote", "run %s: events %lld to %lld of its %s step are missing",
		            ev.run, (long long)st->next_seq, (long long)ev.seq - 1, ev.step);
	}
	st->next_seq = ev.seq + 1;
	r->events_handled++;
	if (!ev.is_exit) {
		st->cb.on_line(st->cb.arg, ev.line, ev.line_len, ev.is_stderr);
	} else {
		rz_exec_step_t cb = st->cb;
		st->runner[0] = '\0'; /* no longer held: a loss of the runner now is no matter */
		cb.on_exit(cb.arg, ev.status, ev.timed_out, ev.canceled); /* may start the next */
	}
	rz_dispatch_event_clear(&ev);
}

static void publish_jobs(rz_runners_t *r);

static void poll_nats(rz_runners_t *r, int64_t now)
{
	rz_err_t err = { 0 };
	bool up;
	natsMsg *m = NULL;

	if (r->nc == NULL) {
		if (now >= r->retry_at_ms && connect_nats(r, now, &err) != 0) {
			rz_log_err("remote", "%s; tried again in %d ms", err.msg,
			           RZ_RUNNERS_RETRY_MS);
		}
		return;
	}
	if (natsConnection_Status(r->nc) == NATS_CONN_STATUS_CLOSED) {
		drop_connection(r, now);
		return;
	}
	up = natsConnection_Status(r->nc) == NATS_CONN_STATUS_CONNECTED;
	if (up && (!r->was_connected || !r->streams) && !r->streams_pending &&
	    now >= r->streams_retry_ms) {
		r->streams_pending = true;
		r->streams_retry_ms = now + RZ_RUNNERS_RETRY_MS;
		if (rz_workers_submit(r->workers, streams_work, streams_done, r) != 0) {
			r->streams_pending = false;
		}
	}
	r->was_connected = up;
	publish_jobs(r);
	for (int i = 0; r->sub != NULL && i < RZ_RUNNERS_PER_TICK; i++) {
		if (natsSubscription_NextMsg(&m, r->sub, 0) != NATS_OK) {
			break;
		}
		rz_roster_runner_t *x =
		    rz_roster_heartbeat(&r->roster, natsMsg_GetSubject(m), natsMsg_GetData(m),
		                        (size_t)natsMsg_GetDataLength(m), now);
		if (x != NULL) {
			listed(r, x, now);
		}
		natsMsg_Destroy(m);
	}
	for (int i = 0; r->events != NULL && i < RZ_RUNNERS_PER_TICK; i++) {
		if (natsSubscription_NextMsg(&m, r->events, 0) != NATS_OK) {
			break;
		}
		{
			const char *mac = NULL;
			if (natsMsgHeader_Get(m, RZ_DISPATCH_MAC_HEADER, &mac) != NATS_OK) {
				mac = NULL;
			}
			event(r, natsMsg_GetSubject(m), natsMsg_GetData(m),
			      (size_t)natsMsg_GetDataLength(m), mac);
		}
		(void)natsMsg_Ack(m, NULL); /* handled (or refused): never again */
		natsMsg_Destroy(m);
	}
}

#endif /* HAVE_LIBNATS */

/* ------------------------------------------------------------------ the executor */

static bool ex_remote(void *ctx)
{
	return ((rz_runners_t *)ctx)->enabled;
}

/* Whether jobs go out and events come back now. */
static bool connected(const rz_runners_t *r)
{
#ifdef HAVE_LIBNATS
	return r->nc != NULL && natsConnection_Status(r->nc) == NATS_CONN_STATUS_CONNECTED &&
	       r->streams && r->events != NULL;
#else
	(void)r;
	return false;
#endif
}

/* The slots of the Ready runners that serve selector (NULL: of every Ready runner). */
static size_t capacity(rz_runners_t *r, const json_t *selector)
{
	return connected(r) ? rz_roster_capacity(&r->roster, selector) : 0;
}

static size_t ex_capacity(void *ctx, const json_t *selector)
{
	return capacity(ctx, selector);
}

static bool ex_unserved(void *ctx, const json_t *selector, char *why, size_t size)
{
	char pool[RZ_DISPATCH_POOL_MAX + 1], bad[256];

	if (!rz_dispatch_pool(selector, pool, sizeof(pool), bad, sizeof(bad))) {
		snprintf(why, size, "%s", bad);
		return true;
	}
	return why_waiting(ctx, selector, pool, NULL, why, size);
}

/* The jobs not out yet, when NATS is there: published and their store acknowledged
 * (with a message id, so that JetStream keeps one of a job published twice). A job that
 * cannot go out now goes at a later tick. */
static void publish_jobs(rz_runners_t *r)
{
#ifdef HAVE_LIBNATS
	for (size_t i = 0; i < r->nsteps && r->unpublished > 0 && connected(r); i++) {
		struct step *st = &r->steps[i];
		rz_dispatch_job_t job = { 0 };
		char subject[RZ_DISPATCH_POOL_MAX + 80], id[160], *text;
		jsPubOptions po;
		jsErrCode jerr = 0;
		natsStatus ns;
		if (!st->unpublished) {
			continue;
		}
		snprintf(job.run, sizeof(job.run), "%s", st->run);
		snprintf(job.tenant, sizeof(job.tenant), "%s", st->tenant);
		snprintf(job.step, sizeof(job.step), "%s", st->step);
		job.attempt = st->attempt;
		snprintf(job.daemon, sizeof(job.daemon), "%s", r->daemon_url);
		if ((text = rz_dispatch_job_build(&job)) == NULL) {
			return;
		}
		snprintf(subject, sizeof(subject), "%s%s", r->names.jobs, st->pool);
		snprintf(id, sizeof(id), "%s.%s.%d", st->run, st->step, st->attempt);
		jsPubOptions_Init(&po);
		po.MsgId = id;
		po.MaxWait = RZ_RUNNERS_PUBLISH_WAIT_MS;
		ns = js_Publish(NULL, r->js, subject, text, (int)strlen(text), &po, &jerr);
		free(text);
		if (ns != NATS_OK) {
			rz_log_warn("remote", "run %s: its %s job is not out yet (%s); again soon",
			            st->run, st->step, rz_nats_error(ns));
			return;
		}
		st->unpublished = false;
		st->published_ms = rz_clock_now_ms();
		st->tries++;
		r->unpublished--;
		r->jobs++;
		rz_log_debug("remote", "job of run %s, step %s, on %s", st->run, st->step, subject);
	}
#else
	(void)r;
#endif
}

/* The step into the table: held by runner (a restart took it up), or with its job to
 * publish (now, or once NATS is there). */
static int put_step(rz_runners_t *r, const rz_exec_step_t *s, const char *runner, rz_err_t *err)
{
	struct step *st = step_of(r, s->run);
	char pool[RZ_DISPATCH_POOL_MAX], why[256];

	if (!rz_dispatch_pool(s->selector, pool, sizeof(pool), why, sizeof(why))) {
		return rz_err_set(err, -EINVAL, "spec.runnerSelector: %s", why);
	}
	if (st == NULL) {
		if (r->nsteps >= RZ_RUNNERS_STEPS) {
			return rz_err_set(err, -ENOSPC, "%d remote steps in progress already",
			                  RZ_RUNNERS_STEPS);
		}
		st = &r->steps[r->nsteps++];
	} else {
		json_decref(st->selector);
		r->unpublished -= st->unpublished;
	}
	memset(st, 0, sizeof(*st));
	snprintf(st->run, sizeof(st->run), "%s", s->run);
	snprintf(st->tenant, sizeof(st->tenant), "%s", s->tenant);
	snprintf(st->step, sizeof(st->step), "%s", s->step);
	snprintf(st->pool, sizeof(st->pool), "%s", pool);
	snprintf(st->runner, sizeof(st->runner), "%s", runner ? runner : "");
	st->attempt = s->attempt;
	st->held_ms = rz_clock_now_ms();
	st->selector = s->selector != NULL ? json_deep_copy(s->selector) : NULL;
	st->next_seq = 1;
	st->cb = *s;
	st->cb.run = st->cb.tenant = st->cb.step = NULL;
	st->cb.selector = NULL;
	st->cb.event_key = NULL;
	if (runner != NULL && s->event_key != NULL) {
		memcpy(st->key, s->event_key, sizeof(st->key));
		st->keyed = true;
	}
	st->unpublished = runner == NULL;
	r->unpublished += st->unpublished;
	publish_jobs(r);
	return 0;
}

static int ex_start(void *ctx, const rz_exec_step_t *s, rz_err_t *err)
{
	return put_step(ctx, s, NULL, err);
}

static int ex_attach(void *ctx, const rz_exec_step_t *s, const char *runner, rz_err_t *err)
{
	rz_exec_step_t again = *s;

	if (runner != NULL && runner[0] != '\0') {
		rz_log_info("remote", "run %s: its %s step on runner %s taken up again", s->run,
		            s->step, runner);
		return put_step(ctx, s, runner, err);
	}
	/* no runner claimed it, or its job was not out when the daemon stopped: once more */
	again.attempt = s->attempt + 1;
	return put_step(ctx, &again, NULL, err);
}

const double rz_runners_wait_buckets[RZ_RUNNERS_WAIT_BUCKETS] = {
	0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

/* A claim's wait, from the job's publication, into the histogram. */
static void count_wait(rz_runners_t *r, int64_t ms)
{
	double s = (double)ms / 1000.0;
	size_t b = 0;

	while (b < RZ_RUNNERS_WAIT_BUCKETS && s > rz_runners_wait_buckets[b]) {
		b++;
	}
	r->wait_hist[b]++;
	r->wait_count++;
	r->wait_seconds += s;
}

static void ex_claimed(void *ctx, const char *run, const char *runner,
                       const unsigned char *event_key)
{
	rz_runners_t *r = ctx;
	struct step *st = step_of(r, run);

	if (st != NULL) {
		if (st->published_ms > 0 && st->runner[0] == '\0') {
			count_wait(r, rz_clock_now_ms() - st->published_ms);
		}
		memcpy(st->key, event_key, sizeof(st->key));
		st->keyed = true;
		/* its runner has a whole heartbeat timeout from now to list it, however long the
		 * job waited to be claimed */
		snprintf(st->runner, sizeof(st->runner), "%s", runner);
		st->held_ms = rz_clock_now_ms();
		st->listed_ms = 0;
	}
}

static void ex_cancel(void *ctx, const char *run)
{
	rz_runners_t *r = ctx;
	struct step *st = step_of(r, run);
	char subject[200], body[128];

	if (st == NULL || st->runner[0] == '\0') {
		return;
	}
	snprintf(subject, sizeof(subject), "%s%s.cancel", r->names.runners, st->runner);
	snprintf(body, sizeof(body), "{\"run\":\"%s\"}", run); /* a run name needs no escaping */
#ifdef HAVE_LIBNATS
	if (r->nc == NULL || natsConnection_PublishString(r->nc, subject, body) != NATS_OK) {
		rz_log_warn("remote", "cannot send the cancel of run %s to runner %s", run,
		            st->runner);
	}
#endif
	rz_log_info("remote", "cancel of run %s sent to runner %s", run, st->runner);
}

static void ex_forget(void *ctx, const char *run)
{
	rz_runners_t *r = ctx;
	struct step *st = step_of(r, run);

	if (st != NULL) {
		step_remove(r, st);
	}
}

const rz_executor_t *rz_runners_executor(rz_runners_t *r)
{
	return &r->exec;
}

void rz_runners_on_capacity(rz_runners_t *r, void (*fn)(void *arg), void *arg)
{
	r->on_capacity = fn;
	r->capacity_arg = arg;
}

/* ------------------------------------------------------------------ the loop */

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	rz_runners_t *r = arg;
	int64_t now = rz_clock_now_ms();

	(void)fd;
	(void)what;
#ifdef HAVE_LIBNATS
	poll_nats(r, now);
#endif
	if (now - r->last_sweep_ms >= 1000) {
		r->last_sweep_ms = now;
		sweep(r, now);
	}
	{
		size_t c = capacity(r, NULL);
		bool more = c > r->last_capacity;
		r->last_capacity = c;
		if (more && r->on_capacity != NULL) {
			r->on_capacity(r->capacity_arg); /* what waits starts */
		}
	}
}

int rz_runners_new(rz_runners_t **out, struct event_base *base, const rz_config_t *cfg,
                   rz_store_t *store, rz_workers_t *workers, const char *daemon_url,
                   const char *installation, rz_err_t *err)
{
	rz_runners_t *r = calloc(1, sizeof(*r));
	struct timeval tv = { 0, RZ_RUNNERS_TICK_MS * 1000 };
	int rc = 0;

	*out = NULL;
	if (r == NULL || rz_roster_init(&r->roster, store, cfg) != 0) {
		free(r);
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	r->exec = (rz_executor_t){ .ctx = r,
		                   .remote = ex_remote,
		                   .capacity = ex_capacity,
		                   .unserved = ex_unserved,
		                   .start = ex_start,
		                   .attach = ex_attach,
		                   .claimed = ex_claimed,
		                   .cancel = ex_cancel,
		                   .forget = ex_forget };
	snprintf(r->daemon_url, sizeof(r->daemon_url), "%s", daemon_url ? daemon_url : "");
	if ((rc = rz_nats_names("runners.installation", installation, &r->names, err)) != 0) {
		rz_runners_free(r);
		return rc;
	}
	r->base = base;
	r->cfg = cfg;
	r->store = store;
	r->workers = workers;
	r->enabled = cfg->runners_nats_url != NULL && cfg->runners_nats_url[0] != '\0';
	if (!r->enabled) {
		*out = r;
		return 0;
	}
	if ((r->steps = calloc(RZ_RUNNERS_STEPS, sizeof(*r->steps))) == NULL) {
		rz_runners_free(r);
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	rz_roster_load(&r->roster, rz_clock_now_ms());
#ifdef HAVE_LIBNATS
	rc = connect_nats(r, rz_clock_now_ms(), err);
#else
	rc = rz_err_set(err, REZUS_ECONFIG, "runners.nats_url: built without NATS (libnats)");
#endif
	if (rc == 0) {
		r->tick = event_new(base, -1, EV_PERSIST, on_tick, r);
		if (r->tick == NULL || event_add(r->tick, &tv) < 0) {
			rc = rz_err_set(err, -ENOMEM, "cannot schedule the runners' heartbeats");
		}
	}
	if (rc != 0) {
		rz_runners_free(r);
		return rc;
	}
	rz_log_info("remote", "remote runners on: heartbeats from NATS at %s, Lost after %lld ms",
	            cfg->runners_nats_url, (long long)cfg->runners_heartbeat_timeout_ms);
	*out = r;
	return 0;
}

void rz_runners_stats(const rz_runners_t *r, rz_runners_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	if (r == NULL) {
		return;
	}
	out->enabled = r->enabled;
	{
		uint64_t counts[RZ_RUNNER_OFFLINE + 1];
		rz_roster_count(&r->roster, counts);
		out->ready = counts[RZ_RUNNER_READY];
		out->stopping = counts[RZ_RUNNER_STOPPING];
		out->lost = counts[RZ_RUNNER_LOST];
		out->offline = counts[RZ_RUNNER_OFFLINE];
	}
	out->heartbeats = r->roster.heartbeats;
	out->dropped = r->roster.dropped;
	out->jobs = r->jobs;
	out->events = r->events_handled;
	out->events_dropped = r->events_dropped;
	out->steps = r->nsteps;
	memcpy(out->wait_hist, r->wait_hist, sizeof(out->wait_hist));
	out->wait_count = r->wait_count;
	out->wait_seconds = r->wait_seconds;
#ifdef HAVE_LIBNATS
	out->connected =
	    r->nc != NULL && natsConnection_Status(r->nc) == NATS_CONN_STATUS_CONNECTED;
	out->streams = r->streams;
#endif
}

/* GET /api/v1/runners/{name}/assignment: what a runner needs to find its jobs, asked at its
 * start with its runner token (runner.installation empty): {"installation": "..."}. */
static void h_assignment(rz_req_t *req, void *ctx)
{
	rz_runners_t *r = ctx;

	if (!r->enabled) {
		rz_reply_error(req, 404, NULL,
		               "this daemon takes no remote runners "
		               "(runners.nats_url is empty)");
		return;
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:s}", "installation", r->names.installation,
	                        "jobsStream", r->names.jobs_stream, "eventsStream",
	                        r->names.events_stream));
}

static const int assignment_errors[] = { 404, 0 };
static const rz_route_doc_t assignment_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getRunnerAssignment",
	  .summary = "a runner token reads what its runner needs to find its jobs: the "
	             "installation's name on NATS (runners.installation) and its streams",
	  .response = "{\"type\":\"object\",\"properties\":{\"installation\":{\"type\":\"string\","
	              "\"description\":\"The installation's name on NATS (runners.installation): "
	              "subjects and streams begin with it\"},\"jobsStream\":{\"type\":\"string\","
	              "\"description\":\"The JetStream stream the runner takes its jobs from\"},"
	              "\"eventsStream\":{\"type\":\"string\",\"description\":\"The JetStream "
	              "stream it reports to\"}}}",
	  .errors = assignment_errors },
	{ 0 },
};

static const rz_route_t runners_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/runners/{name}/assignment",
	  .fn = h_assignment,
	  .role = RZ_ROLE_VIEW,
	  .kind = "RunnerClaim",
	  .verb = "claim",
	  .doc = assignment_doc },
};

int rz_runners_routes(rz_runners_t *r, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(runners_routes), r, err);
}

bool rz_runners_describe(const rz_runners_t *r, char *buf, size_t size)
{
	rz_runners_stats_t st;

	rz_runners_stats(r, &st);
	if (!st.enabled) {
		return false;
	}
	snprintf(buf, size,
	         "%s %s as installation %s, streams %s and %s %s; runners: %llu Ready, %llu Lost",
	         st.connected ? "connected to" : "not connected (retrying) to",
	         r->cfg->runners_nats_url, r->names.installation, r->names.jobs_stream,
	         r->names.events_stream, st.streams ? "present" : "not checked yet",
	         (unsigned long long)st.ready, (unsigned long long)st.lost);
	return true;
}

void rz_runners_free(rz_runners_t *r)
{
	if (r == NULL) {
		return;
	}
	if (r->tick != NULL) {
		event_free(r->tick);
	}
#ifdef HAVE_LIBNATS
	if (r->nc != NULL) {
		/* closed first: libnats before 3.10 may deliver a message to a subscription
		 * destroyed meanwhile (a freed lock); a closed connection delivers nothing */
		natsConnection_Close(r->nc);
	}
	natsSubscription_Destroy(r->sub);
	natsSubscription_Destroy(r->events);
	jsCtx_Destroy(r->js);
	if (r->nc != NULL) {
		natsConnection_Destroy(r->nc);
	}
#endif
	rz_roster_free(&r->roster);
	for (size_t i = 0; r->steps != NULL && i < r->nsteps; i++) {
		json_decref(r->steps[i].selector);
	}
	free(r->steps);
	free(r);
}
