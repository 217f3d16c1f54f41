/*
 * core/http/http-int.h - what the files of core/http's server share (not for other modules):
 * the server, connection and request structs, and the rz__ functions one file offers the
 * others. The public API is core/http/http.h.
 *
 *   http.c      the server: options, listener, hooks, shutdown, free
 *   conn.c      connections: accept, caps, keep-alive, pipelining, back-pressure, deadlines
 *   peer.c      per-address counters and the body buffer budgets
 *   parse.c     reading a request: request line, http-parser callbacks, target, body bounds
 *   request.c   a request: fields, accessors, headers, id, the requests in flight
 *   route.c     the route table: patterns, aliases, matching, the hand-over to a route
 *   reply.c     replies: status line and headers, whole, streamed, JSON, Status
 *   inproc.c    in-process requests (rz_http_inject)
 *   accesslog.c the access log
 */
#ifndef RZ_HTTP_INT_H
#define RZ_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/util.h>
#include <http_parser.h>

#include "core/http/http.h"
#include "core/http/tls.h"

struct bufferevent;
struct evbuffer;
struct event;
struct evconnlistener;

#define MAX_SEGMENTS   32
#define ROUTE_HASHES   64 /* literal buckets per path length in the route index */
#define ROUTE_BUCKETS  ((MAX_SEGMENTS + 1) * (ROUTE_HASHES + 1) + 1)
#define REQUEST_ID_MAX 128
#define PEER_BUCKETS   1024 /* hash buckets of the per-address counters */

struct seg {
	const char *lit; /* literal text, or NULL for a parameter */
	char *name;      /* parameter name */
	bool rest;       /* "{name...}": the rest of the path */
};

struct route {
	const rz_route_t *def;
	void *ctx; /* its handler's: def->ctx, or its table's (rz_http_add_table) */
	struct seg segs[MAX_SEGMENTS];
	char *storage; /* the pattern split into segments */
	char *text;    /* the pattern served: the route's, or under an alias the alias's */
	size_t nseg;
};

struct kv {
	char *name;
	char *value;
};

struct kvlist {
	struct kv *items;
	size_t n, cap;
};

/* Open connections and buffered body bytes of one peer address; freed when both are 0. */
struct peer {
	char addr[INET6_ADDRSTRLEN];
	size_t conns;
	uint64_t body;
	uint64_t unsent;     /* reply bytes its connections' clients have not taken yet */
	int64_t log_since;   /* the access log's window for it began (monotonic ms) */
	unsigned log_lines;  /* request lines logged in it */
	uint64_t log_unsaid; /* ... and not logged, to be said in one line */
	struct peer *next;
};

struct conn;

struct rz_req {
	struct conn *conn;       /* NULL once the client has gone */
	rz_http_t *h;            /* NULL once the server is freed */
	rz_req_t *fprev, *fnext; /* h->flight: dispatched, not yet replied */
	char method[16];
	unsigned mbit;
	char *url;
	size_t url_len;
	char *path;
	struct kvlist query, params, in, out;
	bool in_value; /* header parsing: the last callback was a value */
	char *body;
	size_t body_len, body_cap;
	char id[REQUEST_ID_MAX + 1];
	char peer[INET6_ADDRSTRLEN];
	struct timespec start;
	bool keep_alive;
	int reject;              /* HTTP code to answer without dispatching (400, 408, 413, ...) */
	char reject_msg[160];    /* its message; "" for the default */
	int authn;               /* the authn hook's answer: 0 not asked, 1 yes, -1 no */
	uint64_t reserved;       /* body bytes counted against the buffer budgets */
	struct peer *pe;         /* whom they are counted against (NULL once the server is freed) */
	const rz_route_t *route; /* the matched route (borrowed from the table) */
	void *data;
	void (*data_free)(void *);
	char *error; /* message of the error Status replied */
	bool audited;
	bool streaming, chunked;
	bool live;      /* a watch or a log: no caching, no proxy buffering, not timed */
	bool head_only; /* a HEAD request: a streamed body is counted, not sent */
	int stream_code;
	size_t stream_bytes;
	void (*on_close)(rz_req_t *req, void *arg);
	void *on_close_arg;
	void (*on_drain)(rz_req_t *req, void *arg); /* once the backlog is at most drain_below */
	void *on_drain_arg;
	size_t drain_below;
	bool tls;           /* it came over TLS */
	struct inject *inj; /* an in-process request (rz_http_inject): its reply is captured */
};

/* What an in-process request's reply is captured into. */
struct inject {
	rz_inject_done_fn done;
	rz_inject_data_fn data; /* live streams: each piece as it comes; NULL = buffer it */
	void *arg;
	char *ctype;
	char *body;
	size_t len, cap, max;
	bool truncated, canceled;
};

struct conn {
	rz_http_t *h;
	struct bufferevent *bev; /* NULL while a TLS port waits for the client's first byte */
	evutil_socket_t fd;
	struct event *peek; /* that wait (TLS ports only) */
	struct event *resume;
	http_parser parser;
	rz_req_t *req; /* being parsed, or being handled */
	bool handling; /* req dispatched, reply pending */
	bool closing;  /* close once the output drains */
	bool dead;     /* cut off: free at the next turn of the loop */
	bool in_process;
	bool out_paused; /* no request read while its unsent replies are over the bounds */
	size_t unsent;   /* reply bytes queued and not yet taken by the client */
	bool tls;        /* served over TLS */
	char peer[INET6_ADDRSTRLEN];
	struct peer *pe;        /* this address's counters */
	struct event *deadline; /* the header, body or linger deadline */
	enum { P_IDLE, P_HANDSHAKE, P_HEAD, P_BODY, P_BUSY, P_LINGER } phase;
	bool line_ok; /* the current request's request line was checked */
	struct conn *prev, *next;
};

struct rz_http {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *resume_accept; /* accept() failed: listen again after a pause */
	int64_t accept_logged_ms;    /* when the last accept failure was logged */
	uint64_t accept_failures;    /* since then */
	rz_http_opts_t opts;
	struct route *routes;
	size_t nroutes;
	/* the routes by their number of segments L and the literal of their segment
	 * min(L - 1, 2) (its hash, in ROUTE_HASHES; ROUTE_HASHES: a parameter there), each bucket
	 * in table order, and those ending in a rest parameter in the last: a request compares
	 * only the routes of its path's length whose literal there could be its segment, and the
	 * rest routes. Built when first needed after routes were added (indexed: nroutes then). */
	size_t *by_bucket;
	size_t bucket_start[ROUTE_BUCKETS + 1];
	size_t indexed;
	struct alias {
		char *prefix, *alias;
	} aliases[RZ_HTTP_ALIASES_MAX];
	size_t naliases;
	struct conn *conns;
	rz_req_t *flight;
	size_t in_flight;
	bool draining;
	int port;
	rz_tls_t *tls; /* NULL: plain HTTP */
	rz_http_observer_fn observer;
	void *observer_ctx;
	rz_http_guard_fn guard;
	void *guard_ctx;
	rz_http_take_fn fallback_take; /* rz_http_set_fallback */
	const rz_route_t *fallback;
	void *fallback_ctx;
	rz_http_authn_fn authn;
	void *authn_ctx;
	struct peer *peers[PEER_BUCKETS];
	size_t nconns;       /* open connections */
	size_t peak_conns;   /* the most open since the last trim */
	uint64_t body_bytes; /* request body bytes buffered, in all */
	uint64_t refused;    /* connections refused since the last log line */
	int64_t refuse_logged_ms;
};

/* Milliseconds of the monotonic clock. */
static inline int64_t rz__mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- conn.c */

/* A new connection on fd from sa (evconnlistener's callback; arg is the server): counted
 * against the connection caps, refused over them, else served. */
void rz__conn_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                     void *arg);
/* Close c and free it; a request being handled is orphaned (its reply frees it). */
void rz__conn_free(struct conn *c);
/* Set c's phase and (re)start its deadline ms from now. */
void rz__conn_arm(struct conn *c, int phase, int64_t ms);
/* After a reply on a connection kept open: read the next request. */
void rz__conn_resume(struct conn *c);
/* Close after the queued output is sent (at once when nothing is queued). */
void rz__conn_close_after_output(struct conn *c);
/* Cut off a connection whose client does not read; freed at the next turn of the loop. */
void rz__conn_cut(struct conn *c);

/* ---- peer.c */

/* The counters of addr, created when absent. NULL on OOM. Borrowed: until rz__peer_put()
 * finds them all 0. */
struct peer *rz__peer_get(rz_http_t *h, const char *addr);
/* Free pe once it counts nothing (no connection, body or unsent byte). */
void rz__peer_put(rz_http_t *h, struct peer *pe);
/* Count n more body bytes of req against the buffer budgets: false, and nothing counted,
 * when either would be exceeded. */
bool rz__body_reserve(rz_req_t *req, uint64_t n);
/* Give back what req counted against the budgets. */
void rz__body_release(rz_req_t *req);

/* ---- parse.c */

/* http-parser's callbacks, filling the connection's request. */
extern const http_parser_settings rz__parser_settings;
/* Percent-decode src[0..len); plus_space for query strings. NULL for invalid escapes, an
 * encoded NUL, or OOM. Caller owns the result; free(). */
char *rz__pct_decode(const char *src, size_t len, bool plus_space);
/* The RZ_M_* bit of method name m, or 0. */
unsigned rz__method_bit(const char *m);
/* Split req->url into the decoded path and query: -EINVAL for a bad target. */
int rz__parse_target(rz_req_t *req);
/* Refuse req with code and a message (the first refusal wins). */
void rz__set_reject(rz_req_t *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Check the request line at the head of in: 0 when whole and well formed, 1 when more
 * bytes are needed, else the code to refuse the request with (400, 414). */
int rz__check_request_line(struct evbuffer *in);

/* ---- request.c */

/* Add name=value (copied) to l: 0 or -ENOMEM. */
int rz__kv_add(struct kvlist *l, const char *name, size_t nlen, const char *value, size_t vlen);
/* The value of name in l (nocase: any case), or NULL. Borrowed from l. */
const char *rz__kv_get(const struct kvlist *l, const char *name, bool nocase);
/* A new request on c; NULL on OOM. Caller owns the result; release with rz__req_free(). */
rz_req_t *rz__req_new(struct conn *c);
/* Free req and all it holds (NULL is ignored). */
void rz__req_free(rz_req_t *req);
/* req's id: the client's X-Request-ID when it is sane, else a random one. */
void rz__request_id(rz_req_t *req);
/* Count req among h's requests in flight: handed over, not yet replied. */
void rz__flight_link(rz_http_t *h, rz_req_t *req);
/* ... and no longer, once replied. */
void rz__flight_unlink(rz_http_t *h, rz_req_t *req);

/* ---- route.c */

/* Count req in flight and answer it: a refusal, 400 for a bad target, or its route. */
void rz__req_handle(rz_http_t *h, rz_req_t *req);

/* ---- reply.c */

/* Answer a request refused before routing; the connection closes after the reply. */
void rz__reply_rejected(rz_req_t *req);

/* ---- inproc.c */

/* Append to an in-process request's captured reply, up to its cap: false (and truncated)
 * beyond it. */
bool rz__inject_capture(rz_req_t *req, const char *ctype, const void *data, size_t len);
/* Hand the captured reply to its caller (unless canceled) and free the request. */
void rz__inject_finish(rz_req_t *req, int code);
/* A streamed piece of an in-process request's reply: to its data callback, or captured. */
int rz__inject_write(rz_req_t *req, const void *data, size_t len);

/* ---- accesslog.c */

/* The requests of pe the access log did not show, in one line. */
void rz__log_unsaid(struct peer *pe);
/* Report a finished request to the observer and write its access log line (sampled). */
void rz__access_log(rz_req_t *req, int code, size_t bytes);

#endif
