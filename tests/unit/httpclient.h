/*
 * tests/unit/httpclient.h - a raw HTTP/1.1 client for in-process server tests.
 *
 * The server runs on the test's own event_base; the client drives that loop in
 * non-blocking steps while it writes the request and reads the reply, so one thread
 * plays both sides and every byte on the wire is under the test's control.
 */
#ifndef RZ_HTTPCLIENT_H
#define RZ_HTTPCLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/event.h>

#include "tests/unit/testutil.h"

typedef struct rzt_response {
	int code;
	char head[8192]; /* status line and headers, NUL-terminated */
	char *body;      /* NUL-terminated; free with rzt_response_free */
	size_t body_len;
} rzt_response_t;

static inline double rzt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run the loop briefly, letting the server make progress. */
static inline void rzt_spin(struct event_base *base)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
}

/* 0 when something accepts a connection on port, -1 when it is refused. */
static inline int rzt_connect_refused(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int rc;
	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc == 0 ? 0 : -1;
}

typedef struct rzt_conn {
	int fd;
	size_t have;
	char buf[1 << 20];
} rzt_conn_t;

static inline int rzt_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

static inline rzt_conn_t *rzt_open(int port)
{
	rzt_conn_t *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	c->fd = rzt_connect(port);
	return c;
}

static inline void rzt_close(rzt_conn_t *c)
{
	close(c->fd);
	free(c);
}

/* Send all of data, spinning the loop while the socket is full. */
static inline void rzt_send(struct event_base *base, int fd, const char *data, size_t len)
{
	double deadline = rzt_now() + 10;
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n > 0) {
			data += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			return; /* the server closed; the reply tells why */
		}
		ck_assert_msg(rzt_now() < deadline, "send timed out");
		rzt_spin(base);
	}
}

/* Header value from a response head, copied into out. */
static inline bool rzt_header(const rzt_response_t *r, const char *name, char *out, size_t size)
{
	const char *p = strchr(r->head, '\n');
	size_t nlen = strlen(name);
	while (p != NULL && p[1] != '\0') {
		p++;
		if (strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
			const char *v = p + nlen + 1;
			size_t len;
			while (*v == ' ') {
				v++;
			}
			len = strcspn(v, "\r\n");
			if (len >= size) {
				len = size - 1;
			}
			memcpy(out, v, len);
			out[len] = '\0';
			return true;
		}
		p = strchr(p, '\n');
	}
	return false;
}

static inline void rzt_response_free(rzt_response_t *r)
{
	free(r->body);
	r->body = NULL;
}

/* The length of a complete chunked body at p (n bytes), its decoded bytes copied to out
 * (may be NULL) and their count to *blen; 0 while it is incomplete. */
static inline size_t rzt_chunked(const char *p, size_t n, char *out, size_t *blen)
{
	size_t at = 0;

	*blen = 0;
	for (;;) {
		const char *crlf = memmem(p + at, n - at, "\r\n", 2);
		size_t size, head;
		if (crlf == NULL) {
			return 0;
		}
		size = strtoul(p + at, NULL, 16);
		head = (size_t)(crlf - (p + at)) + 2;
		if (n - at < head + size + 2) {
			return 0;
		}
		if (out != NULL) {
			memcpy(out + *blen, p + at + head, size);
		}
		*blen += size;
		at += head + size + 2;
		if (size == 0) {
			return at;
		}
	}
}

/* Read one response (Content-Length or chunked; HEAD responses have no body when
 * head_only). Returns false when the connection closed before a full response arrived. */
static inline bool rzt_recv(struct event_base *base, rzt_conn_t *c, rzt_response_t *r,
                            bool head_only)
{
	char *buf = c->buf;
	double deadline = rzt_now() + 10;
	bool closed = false;

	memset(r, 0, sizeof(*r));
	for (;;) {
		char *end = memmem(buf, c->have, "\r\n\r\n", 4);
		if (end != NULL) {
			size_t hlen = (size_t)(end - buf) + 4;
			char cl[32] = "0", te[32] = "";
			size_t blen;
			memcpy(r->head, buf, hlen < sizeof(r->head) ? hlen : sizeof(r->head) - 1);
			r->code = atoi(r->head + 9);
			if (r->code == 100) {
				memmove(buf, buf + hlen, c->have - hlen);
				c->have -= hlen;
				continue;
			}
			rzt_header(r, "Content-Length", cl, sizeof(cl));
			blen = head_only ? 0 : (size_t)strtoul(cl, NULL, 10);
			if (!head_only && rzt_header(r, "Transfer-Encoding", te, sizeof(te)) &&
			    strcmp(te, "chunked") == 0) {
				size_t dlen,
				    wire = rzt_chunked(buf + hlen, c->have - hlen, NULL, &dlen);
				if (wire > 0) {
					r->body = malloc(dlen + 1);
					rzt_chunked(buf + hlen, wire, r->body, &dlen);
					r->body[dlen] = '\0';
					r->body_len = dlen;
					memmove(buf, buf + hlen + wire, c->have - hlen - wire);
					c->have -= hlen + wire;
					return true;
				}
			} else if (c->have >= hlen + blen) {
				r->body = malloc(blen + 1);
				memcpy(r->body, buf + hlen, blen);
				r->body[blen] = '\0';
				r->body_len = blen;
				memmove(buf, buf + hlen + blen, c->have - hlen - blen);
				c->have -= hlen + blen;
				return true;
			}
		}
		if (closed) {
			c->have = 0;
			return false;
		}
		{
			ssize_t n = recv(c->fd, buf + c->have, sizeof(c->buf) - c->have, 0);
			if (n > 0) {
				c->have += (size_t)n;
				continue;
			}
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				closed = true;
				continue;
			}
		}
		ck_assert_msg(rzt_now() < deadline, "no response within 10 s");
		rzt_spin(base);
	}
}

/* True when the server has closed fd (reads EOF) within a few seconds. */
static inline bool rzt_closed(struct event_base *base, int fd)
{
	double deadline = rzt_now() + 5;
	char c;
	while (rzt_now() < deadline) {
		ssize_t n = recv(fd, &c, 1, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			return true;
		}
		rzt_spin(base);
	}
	return false;
}

/* One request on a fresh connection; the response is read, the socket closed. */
static inline void rzt_request(struct event_base *base, int port, const char *raw,
                               rzt_response_t *r)
{
	rzt_conn_t *c = rzt_open(port);
	rzt_send(base, c->fd, raw, strlen(raw));
	ck_assert_msg(rzt_recv(base, c, r, strncmp(raw, "HEAD ", 5) == 0),
	              "connection closed without a response");
	rzt_close(c);
}

/* A streamed response (chunked or close-delimited): the head and the decoded body so far. */
typedef struct rzt_stream {
	rzt_conn_t *c;
	rzt_response_t head;
	bool chunked, closed;
	char *body; /* decoded, NUL-terminated */
	size_t len, cap;
} rzt_stream_t;

static inline void rzt_stream_append(rzt_stream_t *s, const char *p, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->body = realloc(s->body, s->cap);
		ck_assert_ptr_nonnull(s->body);
	}
	memcpy(s->body + s->len, p, n);
	s->len += n;
	s->body[s->len] = '\0';
}

/* Move complete chunks (or, close-delimited, everything) from the raw buffer to body. */
static inline void rzt_stream_decode(rzt_stream_t *s)
{
	rzt_conn_t *c = s->c;
	for (;;) {
		char *crlf;
		size_t size;
		if (!s->chunked) {
			rzt_stream_append(s, c->buf, c->have);
			c->have = 0;
			return;
		}
		crlf = memmem(c->buf, c->have, "\r\n", 2);
		if (crlf == NULL) {
			return;
		}
		size = strtoul(c->buf, NULL, 16);
		if (size == 0) {
			s->closed = true; /* last chunk */
			return;
		}
		if (c->have < (size_t)(crlf - c->buf) + 2 + size + 2) {
			return;
		}
		rzt_stream_append(s, crlf + 2, size);
		memmove(c->buf, crlf + 2 + size + 2,
		        c->have - ((size_t)(crlf - c->buf) + 4 + size));
		c->have -= (size_t)(crlf - c->buf) + 4 + size;
	}
}

/* Send a request and read the response head of a stream. */
static inline rzt_stream_t *rzt_stream_open(struct event_base *base, int port, const char *raw)
{
	rzt_stream_t *s = calloc(1, sizeof(*s));
	char te[64] = "";
	char *end;
	double deadline = rzt_now() + 10;

	ck_assert_ptr_nonnull(s);
	s->c = rzt_open(port);
	rzt_send(base, s->c->fd, raw, strlen(raw));
	while ((end = memmem(s->c->buf, s->c->have, "\r\n\r\n", 4)) == NULL) {
		ssize_t n =
		    recv(s->c->fd, s->c->buf + s->c->have, sizeof(s->c->buf) - s->c->have, 0);
		if (n > 0) {
			s->c->have += (size_t)n;
			continue;
		}
		ck_assert_msg(n < 0 && errno == EAGAIN, "stream closed before its head");
		ck_assert_msg(rzt_now() < deadline, "no stream head within 10 s");
		rzt_spin(base);
	}
	memcpy(s->head.head, s->c->buf, (size_t)(end - s->c->buf) + 4);
	s->head.code = atoi(s->head.head + 9);
	rzt_header(&s->head, "Transfer-Encoding", te, sizeof(te));
	s->chunked = strcmp(te, "chunked") == 0;
	memmove(s->c->buf, end + 4, s->c->have - (size_t)(end + 4 - s->c->buf));
	s->c->have -= (size_t)(end + 4 - s->c->buf);
	rzt_stream_decode(s);
	return s;
}

/* Read until the decoded body contains needle (true) or seconds pass / the stream ends. */
static inline bool rzt_stream_until(struct event_base *base, rzt_stream_t *s, const char *needle,
                                    double seconds)
{
	double deadline = rzt_now() + seconds;
	while (s->body == NULL || strstr(s->body, needle) == NULL) {
		ssize_t n;
		if (s->closed || rzt_now() >= deadline) {
			return false;
		}
		n = recv(s->c->fd, s->c->buf + s->c->have, sizeof(s->c->buf) - s->c->have, 0);
		if (n > 0) {
			s->c->have += (size_t)n;
			rzt_stream_decode(s);
			continue;
		}
		if (n == 0 || errno != EAGAIN) {
			s->closed = true;
			continue;
		}
		rzt_spin(base);
	}
	return true;
}

/* Count occurrences of needle in the decoded body. */
static inline int rzt_stream_count(const rzt_stream_t *s, const char *needle)
{
	int n = 0;
	for (const char *p = s->body; p != NULL && (p = strstr(p, needle)) != NULL; p++) {
		n++;
	}
	return n;
}

static inline void rzt_stream_close(rzt_stream_t *s)
{
	rzt_close(s->c);
	free(s->body);
	free(s);
}

#endif /* RZ_HTTPCLIENT_H */
