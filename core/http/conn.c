/* core/http/conn.c - connections: accepted, read, kept alive, paused, timed out, closed. */
#include <config.h>

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "core/http/http-int.h"
#include "core/http/tls.h"
#include "core/base/log.h"

#define TRIM_CONNS        256 /* a peak of connections whose end trims the heap */
#define READ_HIGH_WATER   (256 * 1024)
#define LINGER_MS         2000  /* reading and discarding after a closing reply, at most */
#define RECHECK_UNSENT_MS 100   /* a connection paused for its address's unsent replies */
#define REFUSE_LOG_GAP_MS 10000 /* refused connections are logged at most this often */
#define MAX_WRITE                                                                                  \
	(256 * 1024) /* bytes handed to one writev(): libevent's 16 KiB                            \
	                default split every larger reply */

static void on_output_change(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg);

/* Cut a stream whose client does not read: drop what is queued, stop all I/O, and free
 * the connection at the next turn of the loop (never inside a caller's iteration). */
void rz__conn_cut(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	c->dead = true;
	if (c->req != NULL) {
		c->req->conn = NULL;
		c->req = NULL;
	}
	evbuffer_drain(out, evbuffer_get_length(out));
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	event_active(c->resume, EV_TIMEOUT, 0);
}

static void dispatch(struct conn *c)
{
	rz_req_t *req = c->req;
	struct timeval wtv = { c->h->opts.idle_timeout_s, 0 };

	c->handling = true;
	c->phase = P_BUSY;
	c->line_ok = false;
	evtimer_del(c->deadline);
	bufferevent_set_timeouts(c->bev, NULL, &wtv);
	rz__request_id(req);
	rz__req_handle(c->h, req);
}

void rz__conn_arm(struct conn *c, int phase, int64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	c->phase = phase;
	evtimer_add(c->deadline, &tv);
}

void rz__conn_free(struct conn *c)
{
	rz_http_t *h = c->h;

	rz_req_t *orphan = NULL;

	if (c->req != NULL) {
		if (c->handling) {
			c->req->conn = NULL; /* the reply will free it */
			orphan = c->req;
		} else {
			rz__req_free(c->req);
		}
	}
	if (c->prev != NULL) {
		c->prev->next = c->next;
	} else {
		h->conns = c->next;
	}
	if (c->next != NULL) {
		c->next->prev = c->prev;
	}
	h->nconns--;
	c->pe->conns--;
	c->pe->unsent -= c->unsent;
	c->unsent = 0;
	rz__peer_put(h, c->pe);
	event_free(c->resume);
	event_free(c->deadline);
	if (c->peek != NULL) {
		event_free(c->peek);
	}
	if (c->bev != NULL) {
		evbuffer_remove_cb(bufferevent_get_output(c->bev), on_output_change, c);
		bufferevent_free(c->bev);
	} else {
		evutil_closesocket(c->fd);
	}
	free(c);
	if (orphan != NULL && orphan->on_close != NULL) {
		void (*fn)(rz_req_t *, void *) = orphan->on_close;
		orphan->on_close = NULL;
		fn(orphan, orphan->on_close_arg);
	}
	/* once most of a crowd of connections (1,000 watchers) has gone, give their buffers
	 * back: glibc keeps freed memory scattered through the heap */
	if (h->peak_conns >= TRIM_CONNS && h->nconns <= h->peak_conns / 4) {
		malloc_trim(0);
		h->peak_conns = h->nconns;
	}
}

/* Refuse the request being received with code and msg, and close after the reply. */
static void conn_reject(struct conn *c, int code, const char *msg)
{
	if (c->req == NULL) {
		c->req = rz__req_new(c);
	}
	if (c->req == NULL) {
		c->closing = true;
		return;
	}
	rz__set_reject(c->req, code, "%s", msg);
	if (c->req->method[0] == '\0') {
		snprintf(c->req->method, sizeof(c->req->method), "-");
	}
	c->req->keep_alive = false;
	dispatch(c);
}

/* The parser failed: say why. */
static void conn_parse_error(struct conn *c, enum http_errno e)
{
	char msg[96];

	if (e == HPE_HEADER_OVERFLOW) {
		snprintf(msg, sizeof(msg), "request headers exceed the limit of %zu bytes",
		         c->h->opts.max_header);
		conn_reject(c, 431, msg);
		return;
	}
	conn_reject(c, 400, "malformed request");
}

/* Replies its client does not take: the next request is not read while the connection's
 * unsent replies are over max_unsent, or while it has some and its address's are over
 * max_unsent_per_address (a client pipelining requests and reading no answer would grow
 * them without bound; a connection with nothing unsent is not held for its neighbours',
 * such as slow watches through one proxy); reading stops, so the kernel's buffers and TCP
 * push back. The connection's own drain resumes it (on_write), a drain elsewhere at the
 * next check (RECHECK_UNSENT_MS); the write timeout ends a client that never reads. True
 * while paused. */
static bool out_pause(struct conn *c)
{
	rz_http_t *h = c->h;
	bool over = c->unsent > h->opts.max_unsent ||
	            (c->unsent > 0 && c->pe->unsent > h->opts.max_unsent_per_address);
	struct timeval recheck = { 0, RECHECK_UNSENT_MS * 1000 };

	if (over) {
		if (!c->out_paused) {
			c->out_paused = true;
			bufferevent_disable(c->bev, EV_READ);
		}
		event_add(c->resume, &recheck);
	} else if (c->out_paused) {
		c->out_paused = false;
		bufferevent_enable(c->bev, EV_READ);
	}
	return over;
}

/* The output buffer's changes, counted against the connection and its address. */
static void on_output_change(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;

	(void)buf;
	c->unsent += info->n_added;
	c->unsent -= info->n_deleted;
	c->pe->unsent += info->n_added;
	c->pe->unsent -= info->n_deleted;
}

/* Feed buffered input to the parser until it needs more data, a request is being handled,
 * or the connection is closing. The first byte of a request starts its header deadline. */
static void conn_process(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	c->in_process = true;
	while (!c->handling && !c->closing) {
		size_t len = evbuffer_get_length(in);
		const char *data;
		size_t n;
		enum http_errno e;

		if (len == 0) {
			break;
		}
		if (c->phase == P_IDLE && out_pause(c)) {
			break;
		}
		if (c->phase == P_IDLE) {
			rz__conn_arm(c, P_HEAD, c->h->opts.header_timeout_ms);
		}
		if (!c->line_ok) {
			int rc = rz__check_request_line(in);
			if (rc == 1) {
				break;
			}
			if (rc != 0) {
				conn_reject(c, rc,
				            rc == 414 ? "the request line exceeds the limit of "
				                        "16384 bytes"
				                      : "malformed request line");
				continue;
			}
			c->line_ok = true;
			len = evbuffer_get_length(in);
		}
		data = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
		n = http_parser_execute(&c->parser, &rz__parser_settings, data, len);
		evbuffer_drain(in, n);
		e = HTTP_PARSER_ERRNO(&c->parser);
		if (e == HPE_PAUSED) {
			dispatch(c);
		} else if (e != HPE_OK) {
			conn_parse_error(c, e);
		} else if (n == len) {
			break;
		}
	}
	c->in_process = false;
	if (c->closing) {
		bufferevent_disable(c->bev, EV_READ);
	}
}

void rz__conn_resume(struct conn *c)
{
	struct timeval idle = { c->h->opts.idle_timeout_s, 0 };

	c->phase = P_IDLE;
	http_parser_pause(&c->parser, 0);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	if (!c->in_process) {
		event_active(c->resume, EV_TIMEOUT, 0);
	}
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	if (c->dead) {
		rz__conn_free(c);
		return;
	}
	conn_process(c);
}

/* A deadline passed: the headers or the body did not arrive in time (408), or a lingering
 * close has lingered long enough. */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	char msg[96];

	if (c->dead) {
		return;
	}
	if (c->phase == P_LINGER || c->phase == P_HANDSHAKE) {
		/* a TLS handshake not done in header_timeout has nothing to answer */
		rz__conn_free(c);
		return;
	}
	if ((c->phase != P_HEAD && c->phase != P_BODY) || c->handling || c->closing) {
		return;
	}
	snprintf(msg, sizeof(msg), "the request %s did not arrive within %lld ms",
	         c->phase == P_HEAD ? "headers" : "body",
	         (long long)(c->phase == P_HEAD ? c->h->opts.header_timeout_ms
	                                        : c->h->opts.body_timeout_ms));
	conn_reject(c, 408, msg);
	if (c->closing) {
		bufferevent_disable(c->bev, EV_READ);
	}
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->closing) {
		evbuffer_drain(bufferevent_get_input(bev),
		               evbuffer_get_length(bufferevent_get_input(bev)));
		return;
	}
	conn_process(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct timeval linger = { LINGER_MS / 1000, 0 };

	if (c->req != NULL && c->req->on_drain != NULL &&
	    evbuffer_get_length(bufferevent_get_output(bev)) <= c->req->drain_below) {
		void (*fn)(rz_req_t *, void *) = c->req->on_drain;
		c->req->on_drain = NULL;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		fn(c->req, c->req->on_drain_arg); /* may end the request: c is not used after */
		return;
	}

	if (c->out_paused && !c->closing && !c->dead && !out_pause(c)) {
		event_active(c->resume, EV_TIMEOUT, 0); /* read the requests waiting */
	}
	if (!c->closing || evbuffer_get_length(bufferevent_get_output(bev)) > 0 ||
	    c->phase == P_LINGER) {
		return;
	}
	/* Lingering close: stop sending, then read and discard until the peer closes, so an
	 * unread request body does not turn our close into a reset that eats the reply; for
	 * LINGER_MS at most, however fast the peer keeps sending. */
	shutdown(bufferevent_getfd(bev), SHUT_WR);
	bufferevent_set_timeouts(bev, &linger, NULL);
	bufferevent_enable(bev, EV_READ);
	rz__conn_arm(c, P_LINGER, LINGER_MS);
}

/* Close after the queued output is sent (at once when nothing is queued). */
void rz__conn_close_after_output(struct conn *c)
{
	c->closing = true;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		on_write(c->bev, c);
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	if (what == BEV_EVENT_CONNECTED) { /* a TLS handshake completed */
		if (c->phase == P_HANDSHAKE) {
			evtimer_del(c->deadline);
			c->phase = P_IDLE; /* the first request's byte starts its header deadline */
		}
		return;
	}
	rz__conn_free(c);
}

/* Over a connection cap: answer 503 on the raw socket (it is new, its send buffer empty;
 * on a TLS port nothing) and close; say so at most every REFUSE_LOG_GAP_MS. */
static void refuse(rz_http_t *h, evutil_socket_t fd, const char *peer, const char *limit)
{
	char body[256], resp[512], discard[4096];
	int blen = snprintf(body, sizeof(body),
	                    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	                    "\"status\":\"Failure\",\"message\":\"too many connections (%s)\","
	                    "\"reason\":\"ServiceUnavailable\",\"code\":503}\n",
	                    limit);
	int len = snprintf(resp, sizeof(resp),
	                   "HTTP/1.1 503 Service Unavailable\r\nServer: %s\r\n"
	                   "Content-Type: application/json\r\nRetry-After: 1\r\n"
	                   "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
	                   h->opts.server_name, blen, body);
	int64_t now = rz__mono_ms();

	/* what the client has sent already (a little), read so that the close does not reset */
	for (int i = 0; i < 4 && recv(fd, discard, sizeof(discard), MSG_DONTWAIT) > 0; i++) {
	}
	/* a TLS port's client would read clear text as garbage, and a handshake is what an
	 * overloaded server should not spend: it is closed without an answer */
	if (h->tls == NULL && len > 0 && (size_t)len < sizeof(resp)) {
		(void)!send(fd, resp, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	evutil_closesocket(fd);
	h->refused++;
	if (h->refuse_logged_ms == 0 || now - h->refuse_logged_ms >= REFUSE_LOG_GAP_MS) {
		char n[24];
		snprintf(n, sizeof(n), "%llu", (unsigned long long)h->refused);
		rz_logkv(RZ_LOG_WARNING, "http", "connection refused: too many connections",
		         "limit", limit, "peer", peer, "refused", n, NULL);
		h->refuse_logged_ms = now;
		h->refused = 0;
	}
}

/* Serve c over bev (NULL when out of memory: c is closed, and false returned). */
static bool conn_start(struct conn *c, struct bufferevent *bev)
{
	struct timeval idle = { c->h->opts.idle_timeout_s, 0 };

	if (bev == NULL) {
		rz__conn_free(c);
		return false;
	}
	c->bev = bev;
	bufferevent_set_max_single_write(c->bev, MAX_WRITE);
	bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, READ_HIGH_WATER);
	evbuffer_add_cb(bufferevent_get_output(c->bev), on_output_change, c);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return true;
}

/* Plain HTTP on a TLS port: read what the client sent (a little, so that the close does not
 * reset), answer in clear text that it should speak TLS, and close. */
static void refuse_plain(struct conn *c)
{
	char discard[4096];
	size_t len;
	const char *resp = rz_tls_plain_refusal(&len);

	for (int i = 0; i < 4 && recv(c->fd, discard, sizeof(discard), MSG_DONTWAIT) > 0; i++) {
	}
	(void)!send(c->fd, resp, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(c->fd, SHUT_WR);
	rz_logkv(RZ_LOG_INFO, "http", "plain HTTP request on the TLS port refused", "peer", c->peer,
	         NULL);
	rz__conn_free(c);
}

/* A TLS port's connection sent its first byte (or did not within the header timeout):
 * a TLS handshake goes on to OpenSSL, plain HTTP gets its refusal, anything else a close. */
static void on_peek(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	unsigned char first[1];
	ssize_t n;
	struct timeval tv = { c->h->opts.header_timeout_ms / 1000,
		              (c->h->opts.header_timeout_ms % 1000) * 1000 };

	if (what & EV_TIMEOUT) {
		rz__conn_free(c);
		return;
	}
	n = recv(fd, first, sizeof(first), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		event_add(c->peek, &tv);
		return;
	}
	switch (rz_tls_classify(first, n > 0 ? (size_t)n : 0)) {
	case RZ_TLS_HELLO_TLS:
		event_free(c->peek);
		c->peek = NULL;
		c->tls = true;
		if (conn_start(c, rz_tls_accept(c->h->tls, c->h->base, c->fd))) {
			rz__conn_arm(c, P_HANDSHAKE,
			             c->h->opts.header_timeout_ms); /* the handshake's bound */
		}
		return;
	case RZ_TLS_HELLO_HTTP:
		refuse_plain(c);
		return;
	default: /* closed (0), failed, or not a protocol we speak */
		rz__conn_free(c);
		return;
	}
}

void rz__conn_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                     void *arg)
{
	rz_http_t *h = arg;
	struct conn *c;
	char peer[INET6_ADDRSTRLEN] = "";
	struct peer *pe;

	if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, peer, sizeof(peer));
	} else if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, peer, sizeof(peer));
	}
	pe = rz__peer_get(h, peer);
	if (pe == NULL) {
		evutil_closesocket(fd);
		return;
	}
	if (h->nconns >= h->opts.max_connections ||
	    pe->conns >= h->opts.max_connections_per_address) {
		refuse(h, fd, peer,
		       h->nconns >= h->opts.max_connections ? "server.max_connections"
		                                            : "server.max_connections_per_address");
		rz__peer_put(h, pe);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		evutil_closesocket(fd);
		rz__peer_put(h, pe);
		return;
	}
	c->h = h;
	c->fd = fd;
	c->resume = event_new(h->base, -1, 0, on_resume, c);
	c->deadline = evtimer_new(h->base, on_deadline, c);
	if (c->resume == NULL || c->deadline == NULL) {
		event_free(c->resume);
		event_free(c->deadline);
		evutil_closesocket(fd);
		free(c);
		rz__peer_put(h, pe);
		return;
	}
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->pe = pe;
	pe->conns++;
	h->nconns++;
	h->peak_conns = h->nconns > h->peak_conns ? h->nconns : h->peak_conns;
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->next = h->conns;
	if (h->conns != NULL) {
		h->conns->prev = c;
	}
	h->conns = c;
	/* a reply's pieces go out at once, not after the client's delayed ACK of the first;
	 * not a TCP socket (rz_http_serve_fd's socketpair): nothing to set */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	if (h->tls != NULL) {
		struct timeval tv = { h->opts.header_timeout_ms / 1000,
			              (h->opts.header_timeout_ms % 1000) * 1000 };
		c->peek = event_new(h->base, fd, EV_READ, on_peek, c);
		if (c->peek == NULL || event_add(c->peek, &tv) < 0) {
			rz__conn_free(c);
		}
		return;
	}
	conn_start(c, bufferevent_socket_new(h->base, fd, BEV_OPT_CLOSE_ON_FREE));
}
