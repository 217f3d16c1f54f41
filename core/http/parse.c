/* core/http/parse.c - reading a request: its line, http-parser's callbacks, target, body bounds. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "core/http/http-int.h"
#include "core/base/text.h"

#define MAX_REQUEST_LINE 16384 /* method, target and version: more gets 414 */
#define MAX_HEADERS      100   /* header fields per request: more get 431 */

/* Append to the last item's name or value (headers arrive in pieces). */
static int kv_append(char **dst, const char *at, size_t len)
{
	size_t old = *dst ? strlen(*dst) : 0;
	char *p = realloc(*dst, old + len + 1);
	if (p == NULL) {
		return -ENOMEM;
	}
	memcpy(p + old, at, len);
	p[old + len] = '\0';
	*dst = p;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	c = tolower(c);
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	return -1;
}

/* Percent-decode src[0..len) into a new string; plus_space for query strings.
 * NULL for invalid escapes, an encoded NUL, or OOM. */
char *rz__pct_decode(const char *src, size_t len, bool plus_space)
{
	char *out = malloc(len + 1);
	size_t n = 0;

	if (out == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '%') {
			int hi = i + 2 < len ? hexval(src[i + 1]) : -1;
			int lo = i + 2 < len ? hexval(src[i + 2]) : -1;
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				return NULL;
			}
			out[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (plus_space && src[i] == '+') {
			out[n++] = ' ';
		} else {
			out[n++] = src[i];
		}
	}
	out[n] = '\0';
	return out;
}

unsigned rz__method_bit(const char *m)
{
	static const struct {
		const char *name;
		unsigned bit;
	} methods[] = {
		{ "GET", RZ_M_GET },         { "HEAD", RZ_M_HEAD },   { "POST", RZ_M_POST },
		{ "PUT", RZ_M_PUT },         { "PATCH", RZ_M_PATCH }, { "DELETE", RZ_M_DELETE },
		{ "OPTIONS", RZ_M_OPTIONS }, { "LOCK", RZ_M_LOCK },   { "UNLOCK", RZ_M_UNLOCK },
	};
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(methods[i].name, m) == 0) {
			return methods[i].bit;
		}
	}
	return 0;
}

/* A query parameter, decoded; -EINVAL (with req->reject_msg) when it is not valid UTF-8. */
static int add_query(rz_req_t *req, const char *p, size_t len)
{
	const char *eq = memchr(p, '=', len);
	size_t klen = eq ? (size_t)(eq - p) : len;
	char *k = rz__pct_decode(p, klen, true);
	char *v = eq ? rz__pct_decode(eq + 1, len - klen - 1, true) : strdup("");
	int rc = (k == NULL || v == NULL) ? -EINVAL : 0;

	if (rc == 0 && !rz_utf8_valid(k, strlen(k))) {
		snprintf(req->reject_msg, sizeof(req->reject_msg),
		         "a query parameter name is not valid UTF-8");
		rc = -EINVAL;
	} else if (rc == 0 && !rz_utf8_valid(v, strlen(v))) {
		snprintf(req->reject_msg, sizeof(req->reject_msg),
		         "query parameter '%s' is not valid UTF-8", RZ_ECHO(k, 64));
		rc = -EINVAL;
	}
	if (rc == 0 && klen > 0) {
		rc = rz__kv_add(&req->query, k, strlen(k), v, strlen(v));
	}
	free(k);
	free(v);
	return rc;
}

/* Split req->url into the decoded path and query. -EINVAL for a bad target; invalid UTF-8
 * says so in req->reject_msg, and req->path (for the log) has it replaced. */
int rz__parse_target(rz_req_t *req)
{
	const char *q = req->url ? memchr(req->url, '?', req->url_len) : NULL;
	size_t plen = q ? (size_t)(q - req->url) : req->url_len;

	if (req->url_len == 0 || req->url[0] != '/') {
		return -EINVAL;
	}
	req->path = rz__pct_decode(req->url, plen, false);
	if (req->path == NULL) {
		return -EINVAL;
	}
	if (!rz_utf8_valid(req->path, strlen(req->path))) {
		char *clean = rz_utf8_scrub(req->path);
		if (clean != NULL) {
			free(req->path);
			req->path = clean;
		}
		snprintf(req->reject_msg, sizeof(req->reject_msg),
		         "the request path is not valid UTF-8");
		return -EINVAL;
	}
	for (const char *p = q ? q + 1 : NULL; p != NULL && *p != '\0';) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int rc = add_query(req, p, len);
		if (rc < 0) {
			return rc;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int on_message_begin(http_parser *p)
{
	struct conn *c = p->data;

	rz__req_free(c->req);
	c->req = rz__req_new(c);
	return c->req == NULL ? -1 : 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;
	rz_req_t *req = c->req;

	if (kv_append(&req->url, at, len) < 0) {
		return -1;
	}
	req->url_len += len;
	return 0;
}

/* A token character (RFC 9110 §5.6.2): what method names and header field names are made of. */
static bool tchar(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

void rz__set_reject(rz_req_t *req, int code, const char *fmt, ...)
{
	va_list ap;

	if (req->reject != 0) {
		return;
	}
	req->reject = code;
	va_start(ap, fmt);
	vsnprintf(req->reject_msg, sizeof(req->reject_msg), fmt, ap);
	va_end(ap);
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	rz_req_t *req = ((struct conn *)p->data)->req;

	for (size_t i = 0; i < len; i++) {
		if (!tchar((unsigned char)at[i])) {
			rz__set_reject(req, 400, "malformed header field name");
			return -1;
		}
	}
	if (req->in_value || req->in.n == 0) {
		if (req->in.n == MAX_HEADERS) {
			rz__set_reject(req, 431, "more than %d header fields", MAX_HEADERS);
			return -1;
		}
		if (rz__kv_add(&req->in, "", 0, "", 0) < 0) {
			return -1;
		}
		req->in_value = false;
	}
	return kv_append(&req->in.items[req->in.n - 1].name, at, len) < 0 ? -1 : 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	rz_req_t *req = ((struct conn *)p->data)->req;

	req->in_value = true;
	if (req->in.n == 0) {
		return -1;
	}
	return kv_append(&req->in.items[req->in.n - 1].value, at, len) < 0 ? -1 : 0;
}

/* Whether req may send a body larger than max_body_unauthenticated: the authn hook says,
 * once per request. */
static bool authenticated(rz_req_t *req)
{
	rz_http_t *h = req->h;

	if (h->authn == NULL) {
		return true;
	}
	if (req->authn == 0) {
		req->authn = h->authn(h->authn_ctx, req) ? 1 : -1;
	}
	return req->authn > 0;
}

/* Room for need body bytes and a NUL, counted against the buffer budgets first (exactly
 * need when the length is known, else doubling). -1 with 503 when a budget is spent; -1
 * on OOM. */
static int body_grow(rz_req_t *req, uint64_t need, bool exact)
{
	uint64_t cap;
	char *b;

	if (need + 1 <= req->body_cap) {
		return 0;
	}
	cap = exact ? need + 1 : (req->body_cap ? req->body_cap : 1024);
	while (cap < need + 1) {
		cap *= 2;
	}
	if (cap > req->h->opts.max_body + 1) {
		cap = req->h->opts.max_body + 1;
	}
	if (!rz__body_reserve(req, cap - req->body_cap)) {
		rz__set_reject(req, 503, "too many request bodies at once");
		return -1;
	}
	b = realloc(req->body, (size_t)cap);
	if (b == NULL) {
		return -1;
	}
	req->body = b;
	req->body_cap = (size_t)cap;
	return 0;
}

/* Header values end up in logs, audit rows and JSON (a 415 quotes Content-Type): they must
 * be UTF-8. */
static int check_header_values(rz_req_t *req)
{
	for (size_t i = 0; i < req->in.n; i++) {
		const char *v = req->in.items[i].value;
		if (!rz_utf8_valid(v, strlen(v))) {
			rz__set_reject(req, 400, "header '%s' is not valid UTF-8",
			               RZ_ECHO(req->in.items[i].name, 64));
			return -1;
		}
	}
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct conn *c = p->data;
	rz_req_t *req = c->req;
	const rz_http_opts_t *o = &c->h->opts;
	bool length = (p->flags & F_CONTENTLENGTH) != 0;
	const char *expect;

	snprintf(req->method, sizeof(req->method), "%s", http_method_str(p->method));
	req->mbit = rz__method_bit(req->method);
	req->keep_alive = http_should_keep_alive(p) != 0;
	if (check_header_values(req) < 0) {
		return -1;
	}
	if (length && p->content_length > o->max_body) {
		req->reject = 413;
		return -1;
	}
	if (length && p->content_length > o->max_body_unauthenticated && !authenticated(req)) {
		req->reject = 401; /* routed without its body: the guard answers */
		return -1;
	}
	if (length && p->content_length > 0 && body_grow(req, p->content_length, true) < 0) {
		return -1;
	}
	if ((p->flags & F_CHUNKED) || (length && p->content_length > 0)) {
		rz__conn_arm(c, P_BODY, o->body_timeout_ms);
	}
	expect = rz_req_header(req, "Expect");
	if (expect != NULL && strcasecmp(expect, "100-continue") == 0 && p->http_minor >= 1) {
		evbuffer_add_printf(bufferevent_get_output(c->bev),
		                    "HTTP/1.1 100 Continue\r\n\r\n");
	}
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;
	rz_req_t *req = c->req;

	if (req->body_len + len > c->h->opts.max_body) {
		req->reject = 413;
		return -1;
	}
	if (req->body_len + len > c->h->opts.max_body_unauthenticated && !authenticated(req)) {
		req->reject = 401;
		return -1;
	}
	if (body_grow(req, req->body_len + len, false) < 0) {
		return -1;
	}
	memcpy(req->body + req->body_len, at, len);
	req->body_len += len;
	req->body[req->body_len] = '\0';
	return 0;
}

static int on_message_complete(http_parser *p)
{
	http_parser_pause(p, 1);
	return 0;
}

/* "METHOD SP request-target SP HTTP/1.x" and nothing else: single spaces, a token for
 * the method, visible ASCII for the target (RFC 9112 §3). http-parser is more lenient. */
static bool request_line_ok(const char *s, size_t n)
{
	size_t i = 0, start;

	while (i < n && tchar((unsigned char)s[i])) {
		i++;
	}
	if (i == 0 || i >= n || s[i] != ' ') {
		return false;
	}
	start = ++i;
	while (i < n && (unsigned char)s[i] > ' ' && (unsigned char)s[i] < 0x7F) {
		i++;
	}
	if (i == start || i >= n || s[i] != ' ') {
		return false;
	}
	i++;
	return n - i == 8 &&
	       (memcmp(s + i, "HTTP/1.1", 8) == 0 || memcmp(s + i, "HTTP/1.0", 8) == 0);
}

/* Check the request line at the head of in, after the blank lines a client may send between
 * requests (dropped): 0 when it is whole and well formed, 1 when more bytes are needed,
 * else the code to refuse the request with (400, 414). */
int rz__check_request_line(struct evbuffer *in)
{
	struct evbuffer_ptr eol;
	size_t len;
	const char *line;

	for (;;) {
		const char *first = (const char *)evbuffer_pullup(in, 1);
		if (first == NULL) {
			return 1;
		}
		if (*first != '\r' && *first != '\n') {
			break;
		}
		evbuffer_drain(in, 1);
	}
	eol = evbuffer_search(in, "\n", 1, NULL);
	if (eol.pos < 0) {
		return evbuffer_get_length(in) > MAX_REQUEST_LINE + 1 ? 414 : 1;
	}
	len = (size_t)eol.pos;
	if (len > MAX_REQUEST_LINE + 1) {
		return 414;
	}
	line = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
	if (len > 0 && line[len - 1] == '\r') {
		len--;
	}
	if (len > MAX_REQUEST_LINE) {
		return 414;
	}
	return request_line_ok(line, len) ? 0 : 400;
}

const http_parser_settings rz__parser_settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};
