/* core/web/live.c - the WebUI's live regions: Server-Sent Events whose data is HTML, made
 * from the API's own streams (a watch of a list, a run's log) read in process, so that the
 * pages need no client-side data handling: HTMX's SSE extension swaps the fragments in. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/base/log.h"
#include "core/web/page.h"

#define LINE_MAX_BYTES (1024 * 1024) /* a watch line or log line longer than this is dropped */
#define FLUSH_MS       150           /* changes are sent at most this often */
#define LOG_BATCH      (64 * 1024)   /* log HTML held before a flush, about */

/* The routes of the live streams (registered by rz_ui_routes with the UI as ctx). */
static void get_live_tenants(rz_req_t *req, void *ctx);
static void get_live_tenant(rz_req_t *req, void *ctx);
static void get_live_log(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants", get_live_tenants),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/{what}", get_live_tenant),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/{what}/{name}", get_live_tenant),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/runs/{name}/log", get_live_log),
};

/* A tenant's live regions, by the {what} of their path (and {name}: one object of the list,
 * by a fieldSelector): the list they watch, the part they render, its rows, their order,
 * their shape. */
static const struct {
	const char *what;
	bool one; /* with a {name} */
	const char *list, *tpl;
	json_t *(*row)(const json_t *);
	int (*order)(const void *, const void *);
	void (*shape)(json_t *view);
} tenant_lives[] = {
	{ "head", false, NULL, "parts/tenant-head-live", rz__tenant_row, NULL, NULL },
	{ "machines", false, "machines", "parts/machines-live", rz__machine_row, NULL,
	  rz__machines_shape },
	{ "grid", false, "machines", "parts/machine-grid", rz__machine_row, NULL,
	  rz__machines_shape },
	{ "nodegroups", false, "nodegroups", "parts/nodegroup-rows", rz__nodegroup_row, NULL,
	  NULL },
	{ "runs", false, "runs", "parts/run-rows", rz__run_row, rz__row_by_created_desc, NULL },
	{ "runs", true, "runs", "parts/run-head", rz__run_detail_row, NULL, NULL },
	{ "machines", true, "machines", "parts/machine-head", rz__machine_detail_row, NULL, NULL },
};

enum live_kind { LIVE_TABLE, LIVE_LOG };

struct rz__live {
	rz_ui_t *ui;
	rz_req_t *out; /* the browser's stream */
	rz_req_t *in;  /* the API's, in process */
	struct rz__live *prev, *next;
	/* a second table sent on the same stream under its own event name (a page's header
	 * beside its table: one connection per page, as browsers allow few per host); the
	 * first owns out, and either's end ends both */
	struct rz__live *twin;
	bool owns_out;
	const char *event_name; /* of a table's renders: "rows", the twin's "head" */
	enum live_kind kind;
	struct event *timer;
	bool armed, closing;
	/* a table: the objects by name, rendered whole with tpl */
	json_t *objs;
	json_t *view;
	const char *tpl;
	json_t *(*row)(const json_t *);
	int (*order)(const void *, const void *); /* of the rows */
	void (*shape)(json_t *view);              /* what the rows add up to, or NULL */
	char current[64];                         /* the name of the page's own row, or "" */
	/* what the browser has: the hash of the rows last sent (an object's change the
	 * table does not show, as a Machine's lastSeen, sends nothing) */
	unsigned char sent[crypto_generichash_BYTES];
	bool have_sent;
	/* the line being received */
	char *line;
	size_t len;
	bool overflow;
	/* a log: the SSE event being received, the HTML not yet sent */
	char event[32];
	char *html;
	size_t hlen;
	bool ended;
};

/* ------------------------------------------------------------------ ending */

static void live_free(struct rz__live *l)
{
	if (l->prev != NULL) {
		l->prev->next = l->next;
	} else if (l->ui->lives == l) {
		l->ui->lives = l->next;
	}
	if (l->next != NULL) {
		l->next->prev = l->prev;
	}
	if (l->timer != NULL) {
		event_free(l->timer);
	}
	json_decref(l->objs);
	json_decref(l->view);
	free(l->line);
	free(l->html);
	free(l);
}

/* End both streams and free l (and its twin). */
static void live_end(struct rz__live *l)
{
	rz_req_t *in = l->in, *out = l->out;
	struct rz__live *twin = l->twin;

	if (twin != NULL) {
		twin->twin = NULL;
		l->twin = NULL;
		live_end(twin);
	}
	l->in = NULL;
	l->out = NULL;
	if (in != NULL) {
		rz_http_inject_cancel(in);
	}
	if (out != NULL && l->owns_out) {
		rz_req_on_close(out, NULL, NULL);
		rz_reply_end(out);
	}
	live_free(l);
}

static void on_out_close(rz_req_t *req, void *arg)
{
	(void)req;
	live_end(arg);
}

static void in_done(void *arg, const rz_inject_reply_t *r)
{
	struct rz__live *l = arg;

	l->in = NULL;
	if (r->code != 200) {
		rz_logkv(RZ_LOG_INFO, "webui", "live stream refused", "path", rz_req_path(r->req),
		         "code",
		         r->code == 403   ? "403"
		         : r->code == 404 ? "404"
		                          : "other",
		         NULL);
	}
	l->closing = true;
	if (!l->armed) {
		event_active(l->timer, EV_TIMEOUT, 0); /* not inside the API's handler */
		l->armed = true;
	}
}

/* ------------------------------------------------------------------ sending */

/* Write one SSE event whose data is text (its lines each a data: line). false when the
 * browser has gone. */
static bool send_event(struct rz__live *l, const char *event, const char *text, size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "event: %s\n", event);

	if (rz_reply_write(l->out, head, (size_t)n) != 0) {
		return false;
	}
	for (size_t at = 0; at <= len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t piece = nl ? (size_t)(nl - (text + at)) : len - at;
		if (rz_reply_write(l->out, "data: ", 6) != 0 ||
		    rz_reply_write(l->out, text + at, piece) != 0 ||
		    rz_reply_write(l->out, "\n", 1) != 0) {
			return false;
		}
		at += piece + 1;
	}
	return rz_reply_write(l->out, "\n", 1) == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(rz__str(*(json_t *const *)a, "name"), rz__str(*(json_t *const *)b, "name"));
}

/* The digest of html as a table's stream keeps it (what the browser has). */
static void digest(const char *html, size_t len, unsigned char out[crypto_generichash_BYTES])
{
	crypto_generichash(out, crypto_generichash_BYTES, (const unsigned char *)html, len, NULL,
	                   0);
}

static bool flush_table(struct rz__live *l)
{
	json_t *rows = json_array(), *o;
	const char *k;
	char *html = NULL;
	size_t len = 0, n = json_object_size(l->objs), i = 0;
	json_t **v = calloc(n + 1, sizeof(*v));
	rz_err_t err = { 0 };
	bool ok = true;

	json_object_foreach(l->objs, k, o)
	{
		v[i++] = l->row(o);
	}
	qsort(v, n, sizeof(*v), l->order);
	for (i = 0; i < n; i++) {
		if (l->current[0] != '\0' && strcmp(rz__str(v[i], "name"), l->current) == 0) {
			json_object_set_new(v[i], "current", json_true());
		}
		json_array_append_new(rows, v[i]);
	}
	free(v);
	json_object_set_new(l->view, "rows", rows);
	if (l->shape != NULL) {
		l->shape(l->view);
	}
	if (rz_tpl_render(l->ui->tpl, l->tpl, l->view, &html, &len, &err) != 0) {
		rz_log_err("webui", "cannot render '%s': %s", l->tpl, err.msg);
	} else {
		unsigned char h[sizeof(l->sent)];
		digest(html, len, h);
		if (!l->have_sent || memcmp(h, l->sent, sizeof(h)) != 0) {
			ok = send_event(l, l->event_name, html, len);
			memcpy(l->sent, h, sizeof(h));
			l->have_sent = true;
		}
	}
	free(html);
	return ok;
}

static bool flush_log(struct rz__live *l)
{
	bool ok = true;

	if (l->hlen > 0) {
		ok = send_event(l, "line", l->html, l->hlen);
		l->hlen = 0;
	}
	return ok;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct rz__live *l = arg;
	bool ok;

	(void)fd;
	(void)what;
	l->armed = false;
	ok = l->kind == LIVE_TABLE ? flush_table(l) : flush_log(l);
	if (!ok || l->closing) {
		live_end(l);
	}
}

static void arm(struct rz__live *l)
{
	struct timeval tv = { 0, FLUSH_MS * 1000 };

	if (!l->armed) {
		l->armed = true;
		evtimer_add(l->timer, &tv);
	}
}

/* ------------------------------------------------------------------ reading the API's stream */

static void table_line(struct rz__live *l, const char *line, size_t len)
{
	json_t *ev = json_loadb(line, len, 0, NULL);
	const char *type = rz__str(ev, "type");
	json_t *obj = json_object_get(ev, "object");
	const char *name = rz__str(obj, "metadata.name");

	if (name[0] != '\0' && strcmp(type, "DELETED") == 0) {
		json_object_del(l->objs, name);
		arm(l);
	} else if (name[0] != '\0' &&
	           (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0) &&
	           (json_object_get(l->objs, name) != NULL ||
	            json_object_size(l->objs) < RZ_UI_LIVE_OBJECTS)) {
		json_object_set(l->objs, name, obj);
		arm(l);
	}
	json_decref(ev);
}

/* Appends s escaped for HTML inside <span class="CLASS">; the buffer holds it whole
 * (six bytes an escaped byte at most, and room for the tags). */
static void html_escape_append(struct rz__live *l, const char *cls, const char *s, size_t len)
{
	size_t need = l->hlen + len * 6 + 96;
	char *p = realloc(l->html, need);

	if (p == NULL) {
		return;
	}
	l->html = p;
	l->hlen += (size_t)sprintf(p + l->hlen, "<span class=\"%s\">", cls);
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':
			l->hlen += (size_t)sprintf(p + l->hlen, "&amp;");
			break;
		case '<':
			l->hlen += (size_t)sprintf(p + l->hlen, "&lt;");
			break;
		case '>':
			l->hlen += (size_t)sprintf(p + l->hlen, "&gt;");
			break;
		case '"':
			l->hlen += (size_t)sprintf(p + l->hlen, "&quot;");
			break;
		case '\'':
			l->hlen += (size_t)sprintf(p + l->hlen, "&#39;");
			break;
		default:
			p[l->hlen++] = s[i];
			break;
		}
	}
	l->hlen += (size_t)sprintf(p + l->hlen, "</span>");
}

/* The run log API's SSE: "data: text" lines; "event: end" then "data: PHASE". */
static void log_line(struct rz__live *l, const char *line, size_t len)
{
	if (len == 0) {
		l->event[0] = '\0';
		return;
	}
	if (len > 7 && strncmp(line, "event: ", 7) == 0) {
		snprintf(l->event, sizeof(l->event), "%.*s", (int)(len - 7), line + 7);
		return;
	}
	if (len < 5 || strncmp(line, "data:", 5) != 0) {
		return; /* comments, ids */
	}
	line += 5;
	len -= 5;
	if (len > 0 && line[0] == ' ') {
		line++;
		len--;
	}
	if (strcmp(l->event, "end") == 0) {
		char phase[64];
		size_t n = len < sizeof(phase) - 1 ? len : sizeof(phase) - 1;
		memcpy(phase, line, n);
		phase[n] = '\0';
		(void)flush_log(l);
		if (!l->ended) {
			/* the run's outcome as a badge, in the tone its phase has everywhere */
			char cls[48];

			snprintf(cls, sizeof(cls), "badge badge-%s", rz__tone(phase));
			html_escape_append(l, cls, phase, n);
			(void)send_event(l, "end", l->html, l->hlen);
			l->hlen = 0;
			l->ended = true;
		}
		return;
	}
	if (l->hlen > LOG_BATCH) {
		(void)flush_log(l); /* a fast log goes out in batches of about this size */
	}
	html_escape_append(l, "block", line, len);
	arm(l);
}

static int in_data(void *arg, const char *data, size_t len)
{
	struct rz__live *l = arg;

	if (l->closing) {
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n') {
			if (l->len + 1 >= LINE_MAX_BYTES) {
				l->overflow = true;
				continue;
			}
			if ((l->len & 4095) == 0) {
				char *p = realloc(l->line, l->len + 4096);
				if (p == NULL) {
					l->overflow = true;
					continue;
				}
				l->line = p;
			}
			l->line[l->len++] = data[i];
			continue;
		}
		if (!l->overflow && l->kind == LIVE_TABLE && l->len > 0) {
			table_line(l, l->line, l->len);
		} else if (!l->overflow && l->kind == LIVE_LOG) {
			if (l->len > 0 && l->line[l->len - 1] == '\r') {
				l->len--;
			}
			log_line(l, l->line, l->len);
		}
		l->len = 0;
		l->overflow = false;
	}
	return 0;
}

/* ------------------------------------------------------------------ starting */

static void live_view(const rz__page_t *pg, json_t *view);

static struct rz__live *live_new(rz__page_t *pg, enum live_kind kind)
{
	struct rz__live *l = calloc(1, sizeof(*l));

	if (l == NULL || (l->timer = evtimer_new(pg->ui->base, on_timer, l)) == NULL ||
	    (l->objs = json_object()) == NULL || (l->view = json_object()) == NULL) {
		if (l != NULL) {
			if (l->timer != NULL) {
				event_free(l->timer);
			}
			json_decref(l->objs);
			free(l);
		}
		return NULL;
	}
	l->ui = pg->ui;
	l->kind = kind;
	l->owns_out = true;
	l->event_name = "rows";
	live_view(pg, l->view);
	return l;
}

/* What a live table's view holds besides its rows, as the page around it has it. */
static void live_view(const rz__page_t *pg, json_t *view)
{
	json_object_set_new(view, "base", json_string(pg->base));
	json_object_set_new(view, "csrf", json_string(pg->csrf));
	/* as on the page around it (core/web/ui.c): the role on the page's tenant */
	json_object_set_new(view, "me",
	                    json_pack("{s:b, s:b}", "canEdit", rz__may(pg, RZ_ROLE_EDIT),
	                              "canAdmin", rz__may(pg, RZ_ROLE_ADMIN)));
	if (rz_req_param(pg->req, "tenant") != NULL) {
		json_object_set_new(view, "tenant",
		                    json_pack("{s:s}", "name", rz_req_param(pg->req, "tenant")));
	}
}

void rz__live_digest(const rz__page_t *pg, const char *tpl, const json_t *part,
                     char out[RZ__LIVE_DIGEST_HEX])
{
	json_t *v = json_object();
	char *html = NULL;
	size_t len = 0;
	rz_err_t err = { 0 };
	unsigned char h[crypto_generichash_BYTES];

	out[0] = '\0';
	if (v == NULL) {
		return;
	}
	live_view(pg, v);
	json_object_update(v, (json_t *)part);
	if (rz_tpl_render(pg->ui->tpl, tpl, v, &html, &len, &err) == 0) {
		digest(html, len, h);
		sodium_bin2hex(out, RZ__LIVE_DIGEST_HEX, h, sizeof(h));
	}
	free(html);
	json_decref(v);
}

void rz__live_have(rz__page_t *pg, const char *tpl, const json_t *part)
{
	char head[RZ__LIVE_DIGEST_HEX] = "", rows[RZ__LIVE_DIGEST_HEX] = "";
	json_t *hv = json_pack("{s:[O]}", "rows", json_object_get(pg->view, "tenant"));

	if (hv != NULL) {
		rz__live_digest(pg, "parts/tenant-head-live", hv, head);
	}
	json_decref(hv);
	if (tpl != NULL && part != NULL) {
		rz__live_digest(pg, tpl, part, rows);
	}
	json_object_set_new(pg->view, "liveHead", json_string(head));
	json_object_set_new(pg->view, "liveRows", json_string(rows));
}

void rz__live_have_rows(rz__page_t *pg, const char *tpl)
{
	json_t *part = json_pack("{s:O}", "rows", json_object_get(pg->view, "rows"));

	rz__live_have(pg, tpl, part);
	json_decref(part);
}

/* A table's stream starts from what the page has (the query parameter name: the digest
 * rz__live_digest made of it), so that its first render, the same, is not sent: swapping
 * the page's own HTML in again would take the focus away from where it is. */
static void live_have(struct rz__live *l, rz_req_t *req, const char *name)
{
	const char *hex = rz_req_query(req, name);

	if (hex != NULL && strlen(hex) == 2 * sizeof(l->sent) &&
	    sodium_hex2bin(l->sent, sizeof(l->sent), hex, strlen(hex), NULL, NULL, NULL) == 0) {
		l->have_sent = true;
	}
}

/* Follow target (an API stream) into l, whose out is set and which is listed. */
static void live_follow(struct rz__live *l, const char *authz, const char *target,
                        const char *accept)
{
	rz_err_t err = { 0 };
	rz_inject_t in = { .method = "GET",
		           .target = target,
		           .authorization = authz,
		           .accept = accept,
		           .done = in_done,
		           .data = in_data,
		           .arg = l };

	if (rz_http_inject(l->ui->http, l->out, &in, &l->in, &err) != 0) {
		rz_log_err("webui", "cannot follow '%s': %s", target, err.msg);
		l->closing = true;
		event_active(l->timer, EV_TIMEOUT, 0);
		l->armed = true;
	}
}

static void live_list(struct rz__live *l)
{
	l->next = l->ui->lives;
	if (l->next != NULL) {
		l->next->prev = l;
	}
	l->ui->lives = l;
}

/* Answer pg's request with the live stream of target (an API stream), and of l's twin's
 * (twin_target) when it has one. */
static void live_start(rz__page_t *pg, struct rz__live *l, const char *target, const char *accept,
                       const char *twin_target)
{
	struct rz__live *t = l->twin;

	l->out = pg->req;
	live_list(l);
	if (t != NULL) {
		t->out = pg->req;
		t->owns_out = false;
		live_list(t);
	}
	if (rz_reply_start(pg->req, 200, "text/event-stream") != 0) {
		live_end(l);
		pg->req = NULL;
		rz__page_free(pg);
		return;
	}
	rz_req_on_close(pg->req, on_out_close, l);
	(void)rz_reply_write(pg->req, "retry: 3000\n\n", 13);
	live_follow(l, pg->authz, target, accept);
	if (t != NULL) {
		live_follow(t, pg->authz, twin_target, accept);
	}
	pg->req = NULL;
	rz__page_free(pg);
}

/* A live stream needs a session; without one the answer is 204, which tells an EventSource
 * to stop (the page around it sends the browser to the login). */
static rz__page_t *live_page(rz_ui_t *ui, rz_req_t *req)
{
	rz__page_t *pg = rz__page_new(ui, req);
	char msg[128];

	if (pg == NULL) {
		return NULL;
	}
	if (pg->p == NULL || pg->p->must_change_password) {
		rz_reply(req, 204, NULL, NULL, 0);
		rz__page_free(pg);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		const char *v = rz_req_param(req, i == 0 ? "tenant" : "name");
		if (v != NULL && !rz_format_dns1123_label(v, msg, sizeof(msg))) {
			rz_reply_error(req, 404, NULL, "no such object");
			rz__page_free(pg);
			return NULL;
		}
	}
	return pg;
}

void rz__live_table(rz_ui_t *ui, rz_req_t *req, const char *target, const char *tpl,
                    json_t *(*row)(const json_t *))
{
	rz__live_table_ordered(ui, req, target, tpl, row, by_name);
}

void rz__live_table_ordered(rz_ui_t *ui, rz_req_t *req, const char *target, const char *tpl,
                            json_t *(*row)(const json_t *),
                            int (*order)(const void *, const void *))
{
	const struct rz__live_spec spec = {
		.target = target, .tpl = tpl, .row = row, .order = order
	};

	rz__live_spec(ui, req, &spec);
}

/* A live table of spec for pg's request, not started. NULL when out of memory. */
static struct rz__live *table_new(rz__page_t *pg, const struct rz__live_spec *spec)
{
	struct rz__live *l = live_new(pg, LIVE_TABLE);

	if (l == NULL) {
		return NULL;
	}
	l->tpl = spec->tpl;
	l->row = spec->row;
	l->order = spec->order != NULL ? spec->order : by_name;
	l->shape = spec->shape;
	l->event_name = spec->event != NULL ? spec->event : "rows";
	snprintf(l->current, sizeof(l->current), "%s", spec->current ? spec->current : "");
	live_have(l, pg->req, l->event_name);
	return l;
}

void rz__live_spec(rz_ui_t *ui, rz_req_t *req, const struct rz__live_spec *spec)
{
	rz__page_t *pg = live_page(ui, req);
	struct rz__live *l, *t = NULL;

	if (pg == NULL) {
		return;
	}
	l = table_new(pg, spec);
	if (l != NULL && spec->head != NULL && (t = table_new(pg, spec->head)) == NULL) {
		live_free(l);
		l = NULL;
	}
	if (l == NULL) {
		rz__page_error(pg, 500, "out of memory");
		return;
	}
	if (t != NULL) {
		l->twin = t;
		t->twin = l;
	}
	live_start(pg, l, spec->target, "application/x-ndjson",
	           spec->head != NULL ? spec->head->target : NULL);
}

static void get_live_tenants(rz_req_t *req, void *ctx)
{
	rz__live_table(ctx, req, "/api/v1/tenants?watch=true", "parts/tenant-rows", rz__tenant_row);
}

/* The tenant's header as a live table, on the stream of another (its twin) or alone:
 * head_target (size bytes) gets where it is watched from. */
static struct rz__live_spec tenant_head(const char *tenant, char *head_target, size_t size)
{
	snprintf(head_target, size, "/api/v1/tenants?watch=true&fieldSelector=metadata.name%%3D%s",
	         tenant);
	return (struct rz__live_spec){ .target = head_target,
		                       .tpl = "parts/tenant-head-live",
		                       .row = rz__tenant_row,
		                       .event = "head" };
}

void rz__live_tenant_table(rz_ui_t *ui, rz_req_t *req, const char *target, const char *tpl,
                           json_t *(*row)(const json_t *), int (*order)(const void *, const void *),
                           const char *current)
{
	char head_target[160];
	const struct rz__live_spec head =
	    tenant_head(rz_req_param(req, "tenant"), head_target, sizeof(head_target));

	rz__live_spec(ui, req,
	              &(struct rz__live_spec){ .target = target,
	                                       .tpl = tpl,
	                                       .row = row,
	                                       .order = order,
	                                       .head = &head,
	                                       .current = current });
}

static void get_live_tenant(rz_req_t *req, void *ctx)
{
	const char *tenant = rz_req_param(req, "tenant"), *what = rz_req_param(req, "what");
	const char *name = rz_req_param(req, "name");
	char target[256], head_target[160];
	struct rz__live_spec head = tenant_head(tenant, head_target, sizeof(head_target));
	size_t i;

	for (i = 0; i < sizeof(tenant_lives) / sizeof(tenant_lives[0]); i++) {
		if (strcmp(tenant_lives[i].what, what) == 0 &&
		    tenant_lives[i].one == (name != NULL)) {
			break;
		}
	}
	if (i == sizeof(tenant_lives) / sizeof(tenant_lives[0])) {
		rz_reply_error(req, 404, NULL, "no such live region");
		return;
	}
	/* the tenant's names are checked by live_page (404 unless DNS labels); every region
	 * comes with the tenant's header */
	if (tenant_lives[i].list == NULL) {
		rz__live_spec(ctx, req, &head);
		return;
	}
	if (name != NULL) {
		snprintf(target, sizeof(target),
		         "/api/v1/tenants/%s/%s?watch=true&fieldSelector=metadata.name%%3D%s",
		         tenant, tenant_lives[i].list, name);
	} else {
		snprintf(target, sizeof(target), "/api/v1/tenants/%s/%s?watch=true", tenant,
		         tenant_lives[i].list);
	}
	rz__live_spec(ctx, req,
	              &(struct rz__live_spec){ .target = target,
	                                       .tpl = tenant_lives[i].tpl,
	                                       .row = tenant_lives[i].row,
	                                       .order = tenant_lives[i].order,
	                                       .shape = tenant_lives[i].shape,
	                                       .head = &head });
}

static void get_live_log(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = live_page(ctx, req);
	struct rz__live *l;
	char target[200];

	if (pg == NULL) {
		return;
	}
	l = live_new(pg, LIVE_LOG);
	if (l == NULL) {
		rz__page_error(pg, 500, "out of memory");
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/runs/%s/log?follow=true",
	         rz_req_param(req, "tenant"), rz_req_param(req, "name"));
	live_start(pg, l, target, NULL, NULL);
}

int rz__live_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}

void rz__live_close_all(rz_ui_t *ui)
{
	while (ui->lives != NULL) {
		live_end(ui->lives);
	}
}
