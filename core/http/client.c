/* core/http/client.c - one HTTP(S) request, waited for (core/http/client.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "core/http/client.h"

struct exchange {
	struct event_base *base;
	rz_fetched_t *out;
	enum evhttp_request_error error;
	bool timed_out, oom;
};

static void on_answer(struct evhttp_request *req, void *arg)
{
	struct exchange *x = arg;
	struct evbuffer *in;
	size_t n;

	event_base_loopbreak(x->base);
	if (req == NULL || evhttp_request_get_response_code(req) <= 0) {
		return; /* on_error said why */
	}
	in = evhttp_request_get_input_buffer(req);
	n = evbuffer_get_length(in);
	if ((x->out->body = malloc(n + 1)) == NULL) {
		x->oom = true;
		return;
	}
	evbuffer_remove(in, x->out->body, n);
	x->out->body[n] = '\0';
	x->out->len = n;
	x->out->code = evhttp_request_get_response_code(req);
}

static void on_error(enum evhttp_request_error error, void *arg)
{
	struct exchange *x = arg;

	x->error = error;
	x->out->too_long = error == EVREQ_HTTP_DATA_TOO_LONG;
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct exchange *x = arg;

	(void)fd;
	(void)what;
	x->timed_out = true;
	event_base_loopbreak(x->base);
}

static enum evhttp_cmd_type method_of(const char *m)
{
	static const struct {
		const char *name;
		enum evhttp_cmd_type type;
	} table[] = { { "GET", EVHTTP_REQ_GET },
		      { "POST", EVHTTP_REQ_POST },
		      { "PUT", EVHTTP_REQ_PUT },
		      { "PATCH", EVHTTP_REQ_PATCH },
		      { "DELETE", EVHTTP_REQ_DELETE } };

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(m, table[i].name) == 0) {
			return table[i].type;
		}
	}
	return 0;
}

static const char *why(const struct exchange *x)
{
	if (x->timed_out) {
		return "no answer in time";
	}
	switch (x->error) {
	case EVREQ_HTTP_TIMEOUT:
		return "timed out";
	case EVREQ_HTTP_EOF:
		return "the connection closed before an answer";
	case EVREQ_HTTP_INVALID_HEADER:
		return "a malformed answer";
	case EVREQ_HTTP_BUFFER_ERROR:
		return "could not connect";
	case EVREQ_HTTP_DATA_TOO_LONG:
		return "the answer is too long";
	default:
		return "no answer";
	}
}

int rz_http_fetch(const rz_fetch_t *f, rz_fetched_t *out, rz_err_t *err)
{
	struct evhttp_uri *uri = NULL;
	struct exchange x = { .out = out };
	struct evhttp_connection *conn = NULL;
	struct evhttp_request *req;
	struct event *deadline = NULL;
	struct bufferevent *bev = NULL; /* https: the connection's, conn's to free */
	struct timeval tv = { f->timeout_s > 0 ? f->timeout_s : 30, 0 };
	enum evhttp_cmd_type type = method_of(f->method);
	char host[256], hosthdr[300], target[2048], clen[32];
	const char *scheme, *h, *path, *query;
	bool https;
	int port, rc = 0;

	memset(out, 0, sizeof(*out));
	if (type == 0) {
		return rz_err_set(err, -EINVAL, "http: method %s not supported", f->method);
	}
	if ((uri = evhttp_uri_parse_with_flags(f->url, 0)) == NULL ||
	    (scheme = evhttp_uri_get_scheme(uri)) == NULL ||
	    (h = evhttp_uri_get_host(uri)) == NULL || h[0] == '\0' ||
	    (strcasecmp(scheme, "https") != 0 && strcasecmp(scheme, "http") != 0)) {
		rc = rz_err_set(err, -EINVAL, "http: '%s' is not an http(s) URL", f->url);
		goto out;
	}
	https = strcasecmp(scheme, "https") == 0;
	if (https && f->tls == NULL) {
		rc = rz_err_set(err, -EINVAL, "http: no TLS context for %s", f->url);
		goto out;
	}
	port = evhttp_uri_get_port(uri) > 0 ? evhttp_uri_get_port(uri) : https ? 443 : 80;
	/* "[::1]" in the URL and the Host header, "::1" to connect to and check the
	 * certificate for */
	snprintf(host, sizeof(host), "%.*s",
	         (int)(h[0] == '[' && strlen(h) > 1 ? strlen(h) - 2 : strlen(h)),
	         h[0] == '[' ? h + 1 : h);
	snprintf(hosthdr, sizeof(hosthdr), "%s:%d", h, port);
	path = evhttp_uri_get_path(uri);
	query = evhttp_uri_get_query(uri);
	if ((size_t)snprintf(target, sizeof(target), "%s%s%s", path && path[0] ? path : "/",
	                     query ? "?" : "", query ? query : "") >= sizeof(target)) {
		rc = rz_err_set(err, -EINVAL, "http: the URL is too long");
		goto out;
	}
	if ((x.base = event_base_new()) == NULL ||
	    (deadline = evtimer_new(x.base, on_deadline, &x)) == NULL) {
		rc = rz_err_set(err, -ENOMEM, "http: out of memory");
		goto out;
	}
	if (https) {
		bev = rz_tls_connect(f->tls, x.base, host);
		conn = bev != NULL ? evhttp_connection_base_bufferevent_new(x.base, NULL, bev, host,
		                                                            (unsigned short)port)
		                   : NULL;
		if (conn == NULL && bev != NULL) {
			bufferevent_free(bev);
			bev = NULL;
		}
	} else {
		conn = evhttp_connection_base_new(x.base, NULL, host, (unsigned short)port);
	}
	if (conn == NULL || (req = evhttp_request_new(on_answer, &x)) == NULL) {
		rc = rz_err_set(err, -ENOMEM, "http: out of memory");
		goto out;
	}
	/* the deadline below bounds the whole; libevent's own, per read or write, only later */
	evhttp_connection_set_timeout(conn, (int)tv.tv_sec + 1);
	evhttp_connection_set_retries(conn, 0);
	evhttp_connection_set_max_body_size(conn, (ev_ssize_t)f->max);
	evhttp_request_set_error_cb(req, on_error);
	{
		struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
		char auth[600];
		snprintf(clen, sizeof(clen), "%zu", f->len);
		evhttp_add_header(hd, "Host", hosthdr);
		evhttp_add_header(hd, "Connection", "close");
		if (f->bearer != NULL &&
		    (size_t)snprintf(auth, sizeof(auth), "Bearer %s", f->bearer) < sizeof(auth)) {
			evhttp_add_header(hd, "Authorization", auth);
		}
		explicit_bzero(auth, sizeof(auth));
		if (f->content_type != NULL) {
			evhttp_add_header(hd, "Content-Type", f->content_type);
		}
		if (type != EVHTTP_REQ_GET) {
			evhttp_add_header(hd, "Content-Length", clen);
		}
	}
	if (f->len > 0 &&
	    evbuffer_add(evhttp_request_get_output_buffer(req), f->body, f->len) != 0) {
		evhttp_request_free(req);
		rc = rz_err_set(err, -ENOMEM, "http: out of memory");
		goto out;
	}
	if (evhttp_make_request(conn, req, type, target) != 0) { /* it freed req */
		rc = rz_err_set(err, -EIO, "http: cannot send the request to %s", hosthdr);
		goto out;
	}
	evtimer_add(deadline, &tv);
	event_base_dispatch(x.base);
	if (x.oom) {
		rc = rz_err_set(err, -ENOMEM, "http: out of memory");
	} else if (out->code == 0) {
		char tls[200] = "";
		if (bev != NULL && !x.timed_out) {
			rz_tls_client_error(bev, tls, sizeof(tls));
		}
		rc = rz_err_set(err, x.timed_out ? -ETIMEDOUT : -EIO, "http: %s %s: %s%s",
		                f->method, f->url, tls[0] ? "the TLS handshake failed: " : "",
		                tls[0] ? tls : why(&x));
	}
out:
	if (conn != NULL) {
		evhttp_connection_free(conn); /* a request still out goes with it, unanswered */
	}
	if (deadline != NULL) {
		event_free(deadline);
	}
	if (x.base != NULL) {
		event_base_free(x.base);
	}
	if (uri != NULL) {
		evhttp_uri_free(uri);
	}
	if (rc != 0) {
		free(out->body);
		out->body = NULL;
		out->len = 0;
		out->code = 0;
	}
	return rc;
}
