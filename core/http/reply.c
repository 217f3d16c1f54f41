/* core/http/reply.c - replies: the status line and headers; whole, streamed, JSON, Status. */
#include <config.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/http/http-int.h"
#include "core/base/log.h"
#include "core/base/text.h"

/* The Date header's value, formatted once a second. */
static const char *http_date(void)
{
	static _Thread_local char date[64];
	static _Thread_local time_t at = (time_t)-1;
	time_t now = time(NULL);

	if (now != at) {
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		at = now;
	}
	return date;
}

/* A reply's head (and a small body) gathered before it goes to the connection's output in
 * one evbuffer_add: each add runs the buffer's callbacks. */
struct head {
	struct evbuffer *out;
	size_t len;
	char b[4096];
};

static void head_add(struct head *h, const char *s, size_t n)
{
	if (h->len + n > sizeof(h->b)) {
		evbuffer_add(h->out, h->b, h->len);
		h->len = 0;
		if (n > sizeof(h->b)) {
			evbuffer_add(h->out, s, n);
			return;
		}
	}
	memcpy(h->b + h->len, s, n);
	h->len += n;
}

static void head_flush(struct head *h)
{
	if (h->len > 0) {
		evbuffer_add(h->out, h->b, h->len);
		h->len = 0;
	}
}

/* The same for a whole reply of a plain connection with nothing queued before it: written to
 * the socket at once, so that a reply the kernel takes whole never enters the output buffer
 * (which would arm the write event and disarm it again: two epoll_ctl calls a request).
 * What the socket does not take, or all of it on an error, is queued as usual. */
static void head_send(struct head *h, evutil_socket_t fd)
{
	ssize_t n = evbuffer_get_length(h->out) == 0 && h->len > 0
	                ? send(fd, h->b, h->len, MSG_DONTWAIT | MSG_NOSIGNAL)
	                : -1;

	if (n > 0) {
		memmove(h->b, h->b + n, h->len - (size_t)n);
		h->len -= (size_t)n;
	}
	head_flush(h);
}

static void add_str(struct head *out, const char *s)
{
	head_add(out, s, strlen(s));
}

/* "name: value\r\n" */
static void add_header(struct head *out, const char *name, const char *value)
{
	add_str(out, name);
	head_add(out, ": ", 2);
	add_str(out, value);
	head_add(out, "\r\n", 2);
}

/* The status line and headers, without printf: every reply writes them. */
static void write_head(struct head *out, const rz_req_t *req, int code, const char *ctype,
                       size_t len, bool close)
{
	const char *phrase = http_status_str((enum http_status)code);
	char num[24];

	snprintf(num, sizeof(num), "%d", code);
	head_add(out, "HTTP/1.1 ", 9);
	add_str(out, num);
	head_add(out, " ", 1);
	add_str(out, strcmp(phrase, "<unknown>") == 0 ? "Status" : phrase);
	head_add(out, "\r\n", 2);
	add_header(out, "Date", http_date());
	add_header(out, "Server", req->h->opts.server_name);
	add_header(out, "X-Request-ID", req->id);
	if (ctype != NULL) {
		add_header(out, "Content-Type", ctype);
		add_str(out, "X-Content-Type-Options: nosniff\r\n");
	}
	if (req->tls && req->h->opts.hsts_max_age_s > 0) {
		char hsts[48];
		snprintf(hsts, sizeof(hsts), "max-age=%" PRId64, req->h->opts.hsts_max_age_s);
		add_header(out, "Strict-Transport-Security", hsts);
	}
	if (len != SIZE_MAX) {
		char *p = num + sizeof(num);
		size_t v = len;

		*--p = '\0';
		do {
			*--p = (char)('0' + v % 10);
			v /= 10;
		} while (v > 0);
		add_header(out, "Content-Length", p);
	} else {
		if (req->live) {
			add_str(out, "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n");
		}
		if (req->chunked) {
			add_str(out, "Transfer-Encoding: chunked\r\n");
		}
	}
	if (close) {
		add_str(out, "Connection: close\r\n");
	} else if (req->conn->parser.http_minor == 0) {
		add_str(out, "Connection: keep-alive\r\n");
	}
	for (size_t i = 0; i < req->out.n; i++) {
		add_header(out, req->out.items[i].name, req->out.items[i].value);
	}
	head_add(out, "\r\n", 2);
}

void rz_reply(rz_req_t *req, int code, const char *ctype, const void *body, size_t len)
{
	struct conn *c = req->conn;
	rz_http_t *h = req->h;
	struct head hd;
	bool close;

	rz__access_log(req, code, len);
	if (h != NULL) {
		rz__flight_unlink(h, req);
	}
	if (req->inj != NULL) {
		rz__inject_capture(req, ctype, body, len);
		rz__inject_finish(req, code);
		return;
	}
	if (c == NULL) {
		rz__req_free(req);
		return;
	}
	close = !req->keep_alive || h->draining || req->reject != 0;
	hd.out = bufferevent_get_output(c->bev);
	hd.len = 0;
	write_head(&hd, req, code, ctype, len, close);
	if (len > 0 && strcmp(req->method, "HEAD") != 0 && code != 204 && code != 304) {
		head_add(&hd, body, len); /* a small body goes with the head */
	}
	if (!c->tls && !close) {
		head_send(&hd, c->fd);
	} else {
		head_flush(&hd); /* a close waits for the output to drain (conn.c's on_write) */
	}
	rz__req_free(req);
	c->req = NULL;
	c->handling = false;
	if (close) {
		c->closing = true;
		return;
	}
	rz__conn_resume(c);
}

static int reply_begin(rz_req_t *req, int code, const char *ctype, bool live)
{
	struct conn *c = req->conn;
	struct head hd;

	req->streaming = true;
	req->live = live;
	req->stream_code = code;
	req->head_only = strcmp(req->method, "HEAD") == 0;
	if (req->inj != NULL) {
		rz__inject_capture(req, ctype, NULL, 0);
		return req->inj->canceled ? -EPIPE : 0;
	}
	if (c == NULL) {
		return -EPIPE;
	}
	req->chunked = c->parser.http_minor >= 1;
	if (!req->chunked) {
		req->keep_alive = false;
	}
	hd.out = bufferevent_get_output(c->bev);
	hd.len = 0;
	write_head(&hd, req, code, ctype, SIZE_MAX, !req->keep_alive || req->h->draining);
	head_flush(&hd);
	return 0;
}

int rz_reply_start(rz_req_t *req, int code, const char *ctype)
{
	return reply_begin(req, code, ctype, true);
}

int rz_reply_begin(rz_req_t *req, int code, const char *ctype)
{
	return reply_begin(req, code, ctype, false);
}

int rz_reply_write(rz_req_t *req, const void *data, size_t len)
{
	struct conn *c = req->conn;
	struct evbuffer *out;

	if (req->inj != NULL) {
		return rz__inject_write(req, data, len);
	}
	if (c == NULL) {
		return -EPIPE;
	}
	out = bufferevent_get_output(c->bev);
	if (evbuffer_get_length(out) > req->h->opts.max_stream_backlog) {
		rz_logkv(RZ_LOG_WARNING, "http", "stream cut off: client is not reading", "path",
		         req->path, "peer", req->peer, "request_id", req->id, NULL);
		rz__conn_cut(c);
		return -ENOBUFS;
	}
	req->stream_bytes += len;
	if (len == 0 || req->head_only) {
		return 0;
	}
	if (req->chunked) {
		evbuffer_add_printf(out, "%zx\r\n", len);
	}
	evbuffer_add(out, data, len);
	if (req->chunked) {
		evbuffer_add(out, "\r\n", 2);
	}
	return 0;
}

size_t rz_reply_backlog(const rz_req_t *req)
{
	return req->conn ? evbuffer_get_length(bufferevent_get_output(req->conn->bev)) : 0;
}

size_t rz_reply_backlog_cap(const rz_req_t *req)
{
	return req->h != NULL ? req->h->opts.max_stream_backlog : 0;
}

void rz_reply_end(rz_req_t *req)
{
	struct conn *c = req->conn;
	rz_http_t *h = req->h;
	bool close;

	rz__access_log(req, req->stream_code, req->stream_bytes);
	if (h != NULL) {
		rz__flight_unlink(h, req);
	}
	if (req->inj != NULL) {
		rz__inject_finish(req, req->stream_code);
		return;
	}
	if (c == NULL) {
		rz__req_free(req);
		return;
	}
	close = !req->keep_alive || h->draining;
	if (req->on_drain != NULL) {
		bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	}
	if (req->chunked && !req->head_only) {
		evbuffer_add(bufferevent_get_output(c->bev), "0\r\n\r\n", 5);
	}
	rz__req_free(req);
	c->req = NULL;
	c->handling = false;
	if (close) {
		rz__conn_close_after_output(c);
		return;
	}
	rz__conn_resume(c);
}

void rz_reply_abort(rz_req_t *req)
{
	if (req->inj != NULL) {
		req->inj->truncated = true;
	}
	if (req->conn != NULL) {
		rz__conn_cut(req->conn);
	}
	rz_reply_end(req);
}

void rz_reply_on_drain(rz_req_t *req, size_t below, void (*fn)(rz_req_t *req, void *arg), void *arg)
{
	req->on_drain = fn;
	req->on_drain_arg = arg;
	req->drain_below = below;
	if (req->conn != NULL) {
		bufferevent_setwatermark(req->conn->bev, EV_WRITE, below, 0);
	}
}

void rz_reply_json(rz_req_t *req, int code, json_t *obj)
{
	const char *pretty = rz_req_query(req, "pretty");
	bool indent = false;

	if (pretty != NULL && !rz_parse_bool(pretty, &indent)) {
		indent = false; /* the handler names a bad value; the reply stays compact */
	}
	char *text = obj ? json_dumps(obj, indent ? JSON_INDENT(2) : JSON_COMPACT) : NULL;

	json_decref(obj);
	if (text == NULL) {
		static const char oom[] =
		    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		    "\"status\":\"Failure\",\"message\":\"out of memory\","
		    "\"reason\":\"InternalError\",\"code\":500}\n";
		rz_reply(req, 500, "application/json", oom, sizeof(oom) - 1);
		return;
	}
	{
		size_t len = strlen(text);
		char *withnl = realloc(text, len + 2);
		if (withnl != NULL) {
			text = withnl;
			text[len++] = '\n';
			text[len] = '\0';
		}
		rz_reply(req, code, "application/json", text, len);
	}
	free(text);
}

void rz_reply_json_text(rz_req_t *req, int code, const char *text)
{
	size_t len = strlen(text);
	char *withnl = malloc(len + 2);

	if (withnl == NULL) {
		rz_reply(req, code, "application/json", text, len);
		return;
	}
	memcpy(withnl, text, len);
	withnl[len] = '\n';
	withnl[len + 1] = '\0';
	rz_reply(req, code, "application/json", withnl, len + 1);
	free(withnl);
}

void rz_reply_status(rz_req_t *req, json_t *status)
{
	json_t *code = json_object_get(status, "code");
	const char *msg = json_string_value(json_object_get(status, "message"));

	if (msg != NULL && req->error == NULL && json_integer_value(code) >= 400) {
		req->error = strdup(msg);
	}

	rz_reply_json(req, code ? (int)json_integer_value(code) : 500, status);
}

void rz_reply_error(rz_req_t *req, int code, const char *reason, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rz_text_fit(msg, sizeof(msg), n); /* too long: cut at a word, "..." */
	rz_reply_status(req, rz_status_new(code, reason, msg));
}

/* Answer a request refused before routing; the connection closes after the reply. */
void rz__reply_rejected(rz_req_t *req)
{
	rz_http_t *h = req->h;

	switch (req->reject) {
	case 413:
		rz_reply_error(req, 413, NULL, "request body exceeds the limit of %llu bytes",
		               (unsigned long long)h->opts.max_body);
		break;
	case 503:
		rz_req_add_header(req, "Retry-After", "1");
		rz_reply_error(req, 503, NULL,
		               "the server is receiving too many request bodies; retry later");
		break;
	default:
		rz_reply_error(req, req->reject, NULL, "%s",
		               req->reject_msg[0] ? req->reject_msg : "malformed request");
		break;
	}
}
