/* core/http/inproc.c - in-process requests (rz_http_inject): routed as any, reply captured. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/http/http-int.h"

/* Append to the captured body, up to its cap: false (and truncated) beyond it. */
bool rz__inject_capture(rz_req_t *req, const char *ctype, const void *data, size_t len)
{
	struct inject *in = req->inj;

	if (ctype != NULL && in->ctype == NULL) {
		in->ctype = strdup(ctype);
	}
	if (len == 0) {
		return true;
	}
	if (in->len + len > in->max) {
		in->truncated = true;
		return false;
	}
	if (in->len + len + 1 > in->cap) {
		size_t cap = in->cap ? in->cap : 4096;
		char *p;
		while (cap < in->len + len + 1) {
			cap *= 2;
		}
		p = realloc(in->body, cap);
		if (p == NULL) {
			in->truncated = true;
			return false;
		}
		in->body = p;
		in->cap = cap;
	}
	memcpy(in->body + in->len, data, len);
	in->len += len;
	in->body[in->len] = '\0';
	return true;
}

/* Hand the captured reply to its caller (unless canceled) and free the request. */
void rz__inject_finish(rz_req_t *req, int code)
{
	struct inject *in = req->inj;
	rz_inject_reply_t r = { .code = code,
		                .content_type = in->ctype,
		                .body = in->body ? in->body : "",
		                .len = in->len,
		                .truncated = in->truncated,
		                .req = req };

	if (in->done != NULL && !in->canceled) {
		in->done(in->arg, &r);
	}
	rz__req_free(req);
}

int rz__inject_write(rz_req_t *req, const void *data, size_t len)
{
	struct inject *in = req->inj;

	if (in->canceled) {
		return -EPIPE;
	}
	req->stream_bytes += len;
	if (len == 0 || req->head_only) {
		return 0;
	}
	if (in->data != NULL) {
		return in->data(in->arg, data, len) < 0 ? -EPIPE : 0;
	}
	return rz__inject_capture(req, NULL, data, len) ? 0 : -ENOBUFS;
}

static int inject_headers(rz_req_t *req, const rz_req_t *parent, const rz_inject_t *in)
{
	static const char *const copied[] = { "X-Forwarded-For", "User-Agent" };
	int rc = 0;

	for (size_t i = 0; parent != NULL && rc == 0 && i < sizeof(copied) / sizeof(copied[0]);
	     i++) {
		const char *v = rz__kv_get(&parent->in, copied[i], true);
		if (v != NULL) {
			rc = rz__kv_add(&req->in, copied[i], strlen(copied[i]), v, strlen(v));
		}
	}
	if (rc == 0 && in->authorization != NULL) {
		rc = rz__kv_add(&req->in, "Authorization", 13, in->authorization,
		                strlen(in->authorization));
	}
	if (rc == 0 && in->accept != NULL) {
		rc = rz__kv_add(&req->in, "Accept", 6, in->accept, strlen(in->accept));
	}
	if (rc == 0 && in->content_type != NULL) {
		rc = rz__kv_add(&req->in, "Content-Type", 12, in->content_type,
		                strlen(in->content_type));
	}
	return rc;
}

static rz_req_t *inject_new(rz_http_t *h, const rz_req_t *parent, const rz_inject_t *in)
{
	rz_req_t *req = calloc(1, sizeof(*req));

	if (req == NULL || (req->inj = calloc(1, sizeof(*req->inj))) == NULL ||
	    (req->url = strdup(in->target)) == NULL || (req->body = malloc(in->len + 1)) == NULL ||
	    inject_headers(req, parent, in) != 0) {
		rz__req_free(req);
		return NULL;
	}
	req->h = h;
	req->url_len = strlen(req->url);
	snprintf(req->method, sizeof(req->method), "%s", in->method);
	req->mbit = rz__method_bit(req->method);
	if (in->len > 0) {
		memcpy(req->body, in->body, in->len);
	}
	req->body[in->len] = '\0';
	req->body_len = in->len;
	req->tls = parent != NULL && parent->tls;
	snprintf(req->peer, sizeof(req->peer), "%s", parent ? parent->peer : "127.0.0.1");
	if (parent != NULL) {
		snprintf(req->id, sizeof(req->id), "%s", parent->id);
	} else {
		rz__request_id(req);
	}
	clock_gettime(CLOCK_MONOTONIC, &req->start);
	req->inj->done = in->done;
	req->inj->data = in->data;
	req->inj->arg = in->arg;
	req->inj->max = in->max_reply ? in->max_reply : h->opts.max_stream_backlog;
	return req;
}

int rz_http_inject(rz_http_t *h, const rz_req_t *parent, const rz_inject_t *in, rz_req_t **handle,
                   rz_err_t *err)
{
	rz_req_t *req;

	if (in->method == NULL || in->target == NULL || in->target[0] != '/' ||
	    strlen(in->method) >= sizeof(req->method) || (in->body == NULL && in->len > 0)) {
		return rz_err_set(err, -EINVAL, "http: a malformed in-process request");
	}
	if (in->len > h->opts.max_body) {
		return rz_err_set(err, -E2BIG, "http: request body exceeds the limit of %llu bytes",
		                  (unsigned long long)h->opts.max_body);
	}
	if (h->draining) {
		return rz_err_set(err, -ESHUTDOWN, "http: the server is shutting down");
	}
	req = inject_new(h, parent, in);
	if (req == NULL) {
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	if (handle != NULL) {
		*handle = req;
	}
	rz__req_handle(h, req);
	return 0;
}

void rz_http_inject_cancel(rz_req_t *req)
{
	if (req == NULL || req->inj == NULL || req->inj->canceled) {
		return;
	}
	req->inj->canceled = true;
	if (req->on_close != NULL) {
		void (*fn)(rz_req_t *, void *) = req->on_close;
		req->on_close = NULL;
		fn(req, req->on_close_arg);
	}
}
