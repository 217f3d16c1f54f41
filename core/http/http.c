/* core/http/http.c - the HTTP/1.1 server: options, listener, hooks, shutdown and free. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <sodium.h>

#include "core/http/http-int.h"
#include "core/base/log.h"

#define LISTEN_BACKLOG    1024  /* connections the kernel completes before we accept them */
#define ACCEPT_PAUSE_MS   250   /* not accepting after accept() failed (no descriptor left) */
#define ACCEPT_LOG_GAP_MS 10000 /* accept failures are logged at most this often */

static void on_resume_accept(evutil_socket_t fd, short what, void *arg)
{
	rz_http_t *h = arg;

	if (h->listener != NULL && !h->draining) {
		evconnlistener_enable(h->listener);
	}
}

/* accept() failed for a reason a retry at once cannot cure — no descriptor left (EMFILE,
 * ENFILE), no memory: the socket stays readable, so retrying at once spins the loop and
 * floods the log. Stop accepting for a moment, and say so at most every ten seconds. */
static void on_accept_error(struct evconnlistener *l, void *arg)
{
	rz_http_t *h = arg;
	int e = EVUTIL_SOCKET_ERROR();
	struct timeval pause = { 0, ACCEPT_PAUSE_MS * 1000 };
	int64_t now = rz__mono_ms();

	h->accept_failures++;
	if (h->accept_logged_ms == 0 || now - h->accept_logged_ms >= ACCEPT_LOG_GAP_MS) {
		char n[24];
		snprintf(n, sizeof(n), "%llu", (unsigned long long)h->accept_failures);
		rz_logkv(RZ_LOG_WARNING, "http",
		         "accept failed: not accepting connections for a moment", "error",
		         evutil_socket_error_to_string(e), "failures", n, "pause_ms", "250", NULL);
		h->accept_logged_ms = now;
		h->accept_failures = 0;
	}
	evconnlistener_disable(l);
	if (h->resume_accept == NULL) {
		h->resume_accept = evtimer_new(h->base, on_resume_accept, h);
	}
	if (h->resume_accept != NULL) {
		evtimer_add(h->resume_accept, &pause);
	} else {
		evconnlistener_enable(l); /* no timer: better busy than deaf */
	}
}

int rz_http_new(rz_http_t **out, struct event_base *base, const rz_http_opts_t *opts, rz_err_t *err)
{
	rz_http_t *h;

	*out = NULL;
	if (sodium_init() < 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "http: libsodium failed to initialise");
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	if (opts != NULL) {
		h->opts = *opts;
	}
	if (h->opts.max_body == 0) {
		h->opts.max_body = 16u << 20;
	}
	if (h->opts.max_header == 0) {
		h->opts.max_header = 64u << 10;
	}
	if (h->opts.idle_timeout_s <= 0) {
		h->opts.idle_timeout_s = 60;
	}
	if (h->opts.server_name == NULL) {
		h->opts.server_name = "rezuscloud";
	}
	if (h->opts.max_stream_backlog == 0) {
		h->opts.max_stream_backlog = 4u << 20;
	}
	if (h->opts.max_connections == 0) {
		h->opts.max_connections = 4096;
	}
	if (h->opts.max_connections_per_address == 0) {
		h->opts.max_connections_per_address = 256;
	}
	if (h->opts.header_timeout_ms <= 0) {
		h->opts.header_timeout_ms = 10000;
	}
	if (h->opts.body_timeout_ms <= 0) {
		h->opts.body_timeout_ms = 60000;
	}
	if (h->opts.max_body_unauthenticated == 0) {
		h->opts.max_body_unauthenticated = 64u << 10;
	}
	if (h->opts.max_body_buffer == 0) {
		h->opts.max_body_buffer = 256u << 20;
	}
	if (h->opts.max_body_buffer_per_address == 0) {
		h->opts.max_body_buffer_per_address = 64u << 20;
	}
	if (h->opts.max_unsent == 0) {
		h->opts.max_unsent = 1u << 20;
	}
	if (h->opts.max_unsent_per_address == 0) {
		h->opts.max_unsent_per_address = 16u << 20;
	}
	http_parser_set_max_header_size((uint32_t)h->opts.max_header);
	h->base = base;
	h->port = -1;
	*out = h;
	return 0;
}

/* Split "host:port" / "[v6]:port" into a sockaddr. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, int *sslen)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	const char *h = addr;
	size_t hlen;
	char *end;
	long port;

	if (colon == NULL) {
		return -EINVAL;
	}
	hlen = (size_t)(colon - addr);
	if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') {
		h = addr + 1;
		hlen -= 2;
	}
	if (hlen == 0 || hlen >= sizeof(host)) {
		return -EINVAL;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 0 || port > 65535) {
		return -EINVAL;
	}
	if (strcmp(host, "localhost") == 0) {
		snprintf(host, sizeof(host), "127.0.0.1");
	}
	memset(ss, 0, sizeof(*ss));
	*sslen = sizeof(*ss);
	if (evutil_parse_sockaddr_port(host, (struct sockaddr *)ss, sslen) < 0) {
		return -EINVAL;
	}
	if (ss->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	} else {
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	}
	return 0;
}

int rz_http_listen(rz_http_t *h, const char *addr, rz_err_t *err)
{
	struct sockaddr_storage ss;
	int sslen;
	socklen_t len = sizeof(ss);

	if (parse_addr(addr, &ss, &sslen) < 0) {
		return rz_err_set(err, -EINVAL, "http: invalid listen address '%s'", addr);
	}
	h->listener = evconnlistener_new_bind(h->base, rz__conn_accept, h,
	                                      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
	                                          LEV_OPT_CLOSE_ON_EXEC,
	                                      LISTEN_BACKLOG, (struct sockaddr *)&ss, sslen);
	if (h->listener == NULL) {
		int e = errno ? errno : EADDRINUSE;
		return rz_err_set(err, -e, "http: listen on '%s' failed: %s", addr, strerror(e));
	}
	evconnlistener_set_error_cb(h->listener, on_accept_error);
	if (getsockname(evconnlistener_get_fd(h->listener), (struct sockaddr *)&ss, &len) == 0) {
		h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
		                                         : ((struct sockaddr_in *)&ss)->sin_port);
	}
	return 0;
}

int rz_http_port(const rz_http_t *h)
{
	return h->port;
}

void rz_http_shutdown(rz_http_t *h)
{
	struct conn *c = h->conns;

	h->draining = true;
	if (h->listener != NULL) {
		evconnlistener_free(h->listener);
		h->listener = NULL;
	}
	while (c != NULL) {
		struct conn *next = c->next;
		if ((!c->handling && !c->closing) || (c->req != NULL && c->req->live)) {
			/* may run on-close callbacks, which never free connections */
			rz__conn_free(c);
		}
		c = next;
	}
}

void rz_http_set_tls(rz_http_t *h, rz_tls_t *tls)
{
	h->tls = tls;
}

void rz_http_set_guard(rz_http_t *h, rz_http_guard_fn fn, void *ctx)
{
	h->guard = fn;
	h->guard_ctx = ctx;
}

void rz_http_set_fallback(rz_http_t *h, rz_http_take_fn take, const rz_route_t *route, void *ctx)
{
	h->fallback_take = take;
	h->fallback = route;
	h->fallback_ctx = ctx;
}

void rz_http_set_authn(rz_http_t *h, rz_http_authn_fn fn, void *ctx)
{
	h->authn = fn;
	h->authn_ctx = ctx;
}

void rz_http_set_observer(rz_http_t *h, rz_http_observer_fn fn, void *ctx)
{
	h->observer = fn;
	h->observer_ctx = ctx;
}

size_t rz_http_in_flight(const rz_http_t *h)
{
	return h->in_flight;
}

void rz_http_free(rz_http_t *h)
{
	if (h == NULL) {
		return;
	}
	if (h->listener != NULL) {
		evconnlistener_free(h->listener);
	}
	if (h->resume_accept != NULL) {
		event_free(h->resume_accept);
	}
	while (h->conns != NULL) {
		rz__conn_free(h->conns);
	}
	for (rz_req_t *req = h->flight; req != NULL; req = req->fnext) {
		req->h = NULL; /* a late reply only frees the request */
		req->pe = NULL;
	}
	for (size_t i = 0; i < h->nroutes; i++) {
		free(h->routes[i].storage);
		free(h->routes[i].text);
	}
	for (size_t i = 0; i < h->naliases; i++) {
		free(h->aliases[i].prefix);
		free(h->aliases[i].alias);
	}
	free(h->routes);
	free(h->by_bucket);
	for (size_t i = 0; i < PEER_BUCKETS; i++) {
		while (h->peers[i] != NULL) {
			struct peer *next = h->peers[i]->next;
			free(h->peers[i]);
			h->peers[i] = next;
		}
	}
	free(h);
}

void rz_http_serve_fd(rz_http_t *h, int fd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	evutil_make_socket_nonblocking(fd);
	rz__conn_accept(h->listener, fd, (struct sockaddr *)&sin, (int)sizeof(sin), h);
}
