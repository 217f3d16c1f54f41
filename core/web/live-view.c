/* core/web/live-view.c - live regions re-read on change: a region of a page (the dashboard's
 * panels, the Events list) is rendered again from fresh API reads whenever one of the API
 * watches it follows reports a change, and sent as one Server-Sent Event of HTML when it
 * renders differently from the last one sent. The watches start at the revision the stream
 * begins at, so that nothing already there is sent through them; the reads are the page's own
 * (counts, the newest few), never the objects the watches carry. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/base/log.h"
#include "core/web/page.h"

#define DEBOUNCE_MS 250  /* a change is read this long after it, with those that follow */
#define SPACING_MS  1000 /* reads start at most this often */
#define TARGET_MAX  1024 /* a watch's path, at most */

struct watch {
	struct rz__live_view *lv;
	rz_req_t *in; /* the API's watch, in process; NULL once it has ended */
	char target[TARGET_MAX];
};

struct rz__live_view {
	rz_ui_t *ui;
	rz_req_t *out; /* the browser's stream; NULL once it has gone */
	char authz[RZ_COOKIE_MAX + 8];
	struct watch w[RZ__LIVE_WATCHES];
	int nwatch;
	rz__page_fn read, build;
	const char *tpl, *event;
	int poll_ms;
	json_t *seed; /* the view's keys every read starts from (the page's filters) */
	struct event *timer;
	bool armed, reading, dirty, ending;
	int64_t last_ms;
	unsigned char sent[crypto_generichash_BYTES];
	bool have_sent;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void lv_free(struct rz__live_view *lv)
{
	if (lv->timer != NULL) {
		event_free(lv->timer);
	}
	json_decref(lv->seed);
	sodium_memzero(lv->authz, sizeof(lv->authz));
	free(lv);
}

/* End the browser's stream and the watches; lv is freed now, or by the read in flight. */
static void lv_end(struct rz__live_view *lv)
{
	rz_req_t *out = lv->out;

	lv->out = NULL;
	for (int i = 0; i < lv->nwatch; i++) {
		rz_req_t *in = lv->w[i].in;
		lv->w[i].in = NULL;
		if (in != NULL) {
			rz_http_inject_cancel(in);
		}
	}
	if (out != NULL) {
		rz_req_on_close(out, NULL, NULL);
		rz_reply_end(out);
	}
	if (!lv->reading) {
		lv_free(lv);
	}
}

static void on_out_close(rz_req_t *req, void *arg)
{
	(void)req;
	lv_end(arg);
}

/* A read in wait ms, or later to keep them SPACING_MS apart. */
static void arm_in(struct rz__live_view *lv, int64_t wait)
{
	int64_t since = now_ms() - lv->last_ms;
	struct timeval tv;

	if (lv->armed || lv->out == NULL) {
		return;
	}
	if (since < SPACING_MS && SPACING_MS - since > wait) {
		wait = SPACING_MS - since;
	}
	tv.tv_sec = (time_t)(wait / 1000);
	tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
	lv->armed = true;
	evtimer_add(lv->timer, &tv);
}

static void arm(struct rz__live_view *lv)
{
	arm_in(lv, DEBOUNCE_MS);
}

/* Any line of a watch is a change (no bookmarks are asked for). */
static int in_data(void *arg, const char *data, size_t len)
{
	struct rz__live_view *lv = ((struct watch *)arg)->lv;

	(void)data;
	if (lv->out == NULL) {
		return -1;
	}
	if (len > 0) {
		if (lv->reading) {
			lv->dirty = true;
		} else {
			arm(lv);
		}
	}
	return 0;
}

/* A watch that ends (expired, the server stopping) ends the stream: the browser's EventSource
 * connects again and the region starts over from a fresh revision. One refused is left out. */
static void in_done(void *arg, const rz_inject_reply_t *r)
{
	struct watch *w = arg;
	struct rz__live_view *lv = w->lv;

	w->in = NULL;
	if (r->code == 403 || r->code == 404) {
		/* the role may not watch this one (every tenant's Machines, for a user whose
		 * role is on some tenants only): the region follows the others */
		rz_logkv(RZ_LOG_INFO, "webui", "live region's watch refused", "path", w->target,
		         NULL);
		return;
	}
	if (lv->out != NULL && !lv->ending) {
		lv->ending = true;
		if (lv->armed) {
			evtimer_del(lv->timer);
		}
		lv->armed = true;
		event_active(lv->timer, EV_TIMEOUT, 0); /* not inside the API's handler */
	}
}

/* Send the region as one event when it differs from the last one sent. */
static bool send_region(struct rz__live_view *lv, const char *html, size_t len)
{
	unsigned char h[sizeof(lv->sent)];
	char head[64];
	int n;

	crypto_generichash(h, sizeof(h), (const unsigned char *)html, len, NULL, 0);
	if (lv->have_sent && memcmp(h, lv->sent, sizeof(h)) == 0) {
		return true;
	}
	memcpy(lv->sent, h, sizeof(h));
	lv->have_sent = true;
	n = snprintf(head, sizeof(head), "event: %s\n", lv->event);
	if (rz_reply_write(lv->out, head, (size_t)n) != 0) {
		return false;
	}
	for (size_t at = 0; at <= len;) {
		const char *nl = memchr(html + at, '\n', len - at);
		size_t piece = nl ? (size_t)(nl - (html + at)) : len - at;
		if (rz_reply_write(lv->out, "data: ", 6) != 0 ||
		    rz_reply_write(lv->out, html + at, piece) != 0 ||
		    rz_reply_write(lv->out, "\n", 1) != 0) {
			return false;
		}
		at += piece + 1;
	}
	return rz_reply_write(lv->out, "\n", 1) == 0;
}

void rz__live_view_have(rz__page_t *pg, const char *tpl, const char *key)
{
	unsigned char h[crypto_generichash_BYTES];
	char hex[2 * crypto_generichash_BYTES + 1] = "", *html = NULL;
	size_t len = 0;
	rz_err_t err = { 0 };

	json_object_set_new(pg->view, "base", json_string(pg->base));
	rz__page_me(pg);
	if (rz_tpl_render(pg->ui->tpl, tpl, pg->view, &html, &len, &err) == 0) {
		crypto_generichash(h, sizeof(h), (const unsigned char *)html, len, NULL, 0);
		sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	}
	free(html);
	json_object_set_new(pg->view, key, json_string(hex));
}

/* The read of pg is over: its view rendered and sent when send. */
static void read_over(rz__page_t *pg, bool send)
{
	struct rz__live_view *lv = pg->live;
	char *html = NULL;
	size_t len = 0;
	rz_err_t err = { 0 };
	bool ok = true;

	lv->reading = false;
	if (lv->out == NULL) {
		rz__page_free(pg);
		lv_free(lv); /* the browser went during the read */
		return;
	}
	json_object_set_new(pg->view, "base", json_string(pg->base));
	rz__page_me(pg);
	if (!send) {
		/* nothing to show instead */
	} else if (rz_tpl_render(lv->ui->tpl, lv->tpl, pg->view, &html, &len, &err) != 0) {
		rz_log_err("webui", "cannot render '%s': %s", lv->tpl, err.msg);
	} else {
		ok = send_region(lv, html, len);
	}
	free(html);
	rz__page_free(pg);
	if (!ok) {
		lv_end(lv);
	} else if (lv->dirty) {
		lv->dirty = false;
		arm(lv);
	} else if (lv->poll_ms > 0) {
		arm_in(lv, lv->poll_ms);
	}
}

void rz__live_view_send(rz__page_t *pg)
{
	read_over(pg, true);
}

void rz__live_view_keep(rz__page_t *pg)
{
	read_over(pg, false);
}

/* A fresh read of the region, as the browser's session: lv->read issues the reads, and
 * lv->build (their ready) ends with rz__live_view_send. */
static void read_region(struct rz__live_view *lv)
{
	rz__page_t *pg = rz__page_new(lv->ui, lv->out);

	if (pg == NULL) {
		return;
	}
	pg->live = lv;
	json_object_update(pg->view, lv->seed);
	lv->reading = true;
	lv->dirty = false;
	lv->last_ms = now_ms();
	pg->ready = lv->build;
	lv->read(pg);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct rz__live_view *lv = arg;

	(void)fd;
	(void)what;
	lv->armed = false;
	if (lv->ending) {
		lv_end(lv);
	} else if (lv->out != NULL && !lv->reading) {
		read_region(lv);
	}
}

static void start_watches(struct rz__live_view *lv, const char *rev)
{
	char target[TARGET_MAX + 96];
	rz_err_t err = { 0 };

	for (int i = 0; i < lv->nwatch && lv->out != NULL; i++) {
		struct watch *w = &lv->w[i];
		snprintf(target, sizeof(target), "%s%swatch=true&resourceVersion=%s", w->target,
		         strchr(w->target, '?') ? "&" : "?", rev);
		rz_inject_t in = { .method = "GET",
			           .target = target,
			           .authorization = lv->authz,
			           .accept = "application/x-ndjson",
			           .done = in_done,
			           .data = in_data,
			           .arg = w };
		if (rz_http_inject(lv->ui->http, lv->out, &in, &w->in, &err) != 0) {
			rz_log_err("webui", "cannot follow '%s': %s", target, err.msg);
			w->in = NULL;
		}
	}
}

/* The revision the stream starts at (a list's, read with one item), then the watches from
 * it and the first read. */
static void rev_done(void *arg, const rz_inject_reply_t *r)
{
	struct rz__live_view *lv = arg;
	json_t *list =
	    r->code == 200 && !r->truncated ? json_loadb(r->body, r->len, 0, NULL) : NULL;
	char rev[32];

	lv->reading = false;
	snprintf(rev, sizeof(rev), "%s", rz__str(list, "metadata.resourceVersion"));
	json_decref(list);
	if (lv->out == NULL) {
		lv_free(lv);
		return;
	}
	if (rev[0] == '\0' || strspn(rev, "0123456789") != strlen(rev)) {
		lv->ending = true; /* ends the stream; the browser tries again */
		lv->armed = true;
		event_active(lv->timer, EV_TIMEOUT, 0);
		return;
	}
	start_watches(lv, rev);
	lv->armed = true;
	event_active(lv->timer, EV_TIMEOUT, 0); /* the first read, after this reply */
}

void rz__live_view(rz_ui_t *ui, rz_req_t *req, const rz__live_view_spec_t *spec, json_t *seed)
{
	rz__page_t *pg = rz__page_new(ui, req);
	struct rz__live_view *lv = NULL;
	rz_err_t err = { 0 };

	if (pg == NULL) {
		json_decref(seed);
		return;
	}
	if (pg->p == NULL || pg->p->must_change_password) {
		rz_reply(req, 204, NULL, NULL, 0); /* an EventSource stops: the page logs in */
		json_decref(seed);
		rz__page_free(pg);
		return;
	}
	lv = calloc(1, sizeof(*lv));
	if (lv == NULL || (lv->timer = evtimer_new(ui->base, on_timer, lv)) == NULL) {
		free(lv);
		json_decref(seed);
		rz__page_error(pg, 500, "out of memory");
		return;
	}
	lv->ui = ui;
	lv->out = req;
	lv->read = spec->read;
	lv->build = spec->build;
	lv->tpl = spec->tpl;
	lv->event = spec->event;
	lv->poll_ms = spec->poll_ms;
	lv->seed = seed != NULL ? seed : json_object();
	{
		/* the page's digest of the region it shows (?have=): the first read, the same,
		 * is not sent (swapping it in would take the keyboard's focus away) */
		const char *have = rz_req_query(req, "have");
		if (have != NULL && strlen(have) == 2 * sizeof(lv->sent) &&
		    sodium_hex2bin(lv->sent, sizeof(lv->sent), have, strlen(have), NULL, NULL,
		                   NULL) == 0) {
			lv->have_sent = true;
		}
	}
	snprintf(lv->authz, sizeof(lv->authz), "%s", pg->authz);
	for (int i = 0; i < RZ__LIVE_WATCHES && spec->watches[i] != NULL; i++) {
		lv->w[i].lv = lv;
		snprintf(lv->w[i].target, sizeof(lv->w[i].target), "%s", spec->watches[i]);
		lv->nwatch++;
	}
	rz__page_free(pg);
	if (rz_reply_start(req, 200, "text/event-stream") != 0) {
		lv_end(lv);
		return;
	}
	rz_req_on_close(req, on_out_close, lv);
	(void)rz_reply_write(req, "retry: 3000\n\n", 13);
	lv->reading = true;
	rz_inject_t in = { .method = "GET",
		           .target = "/api/v1/tenants?limit=1",
		           .authorization = lv->authz,
		           .max_reply = 64 * 1024,
		           .done = rev_done,
		           .arg = lv };
	if (rz_http_inject(ui->http, req, &in, NULL, &err) != 0) {
		rz_log_err("webui", "cannot start a live region: %s", err.msg);
		lv->reading = false;
		lv_end(lv);
	}
}
