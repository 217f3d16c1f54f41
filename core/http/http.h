/*
 * core/http/http.h - the HTTP/1.1 server: listener, connections, routing, replies.
 *
 * Runs on the libevent loop (evconnlistener + bufferevents); requests are parsed by
 * http-parser, so any method — including the TF state backend's LOCK and UNLOCK — reaches
 * the route table. One request per connection is handled at a time; keep-alive and
 * pipelining follow HTTP/1.1. Every response carries X-Request-ID; errors are Kubernetes
 * Status objects; each finished request writes one access log line.
 *
 * A handler must reply exactly once, either before it returns or later from the loop
 * thread (after work on the worker pool). If the client goes away first, the reply is
 * discarded and the request freed then.
 */
#ifndef RZ_HTTP_H
#define RZ_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/http/status.h"

struct event_base;
struct rz_tls;

typedef struct rz_http rz_http_t;
typedef struct rz_req rz_req_t;

/* Method bits for route tables. */
enum {
	RZ_M_GET = 1u << 0,
	RZ_M_HEAD = 1u << 1,
	RZ_M_POST = 1u << 2,
	RZ_M_PUT = 1u << 3,
	RZ_M_PATCH = 1u << 4,
	RZ_M_DELETE = 1u << 5,
	RZ_M_OPTIONS = 1u << 6,
	RZ_M_LOCK = 1u << 7,
	RZ_M_UNLOCK = 1u << 8,
};

typedef void (*rz_http_fn)(rz_req_t *req, void *ctx);

/* A query parameter a route reads, for the OpenAPI document. */
typedef struct rz_route_param {
	const char *name; /* NULL ends a list */
	const char *type; /* "string", "integer" or "boolean" */
	const char *doc;
} rz_route_param_t;

/* What one method of a route does, for the OpenAPI document (core/api/openapi.c), which is
 * generated from the route table: a route the document cannot describe from its kind (kind
 * in the kind table, verb NULL or one of the kind verbs: list, create, get, update, patch,
 * delete, update-status, patch-status) carries one entry per method it answers, and
 * tests/unit/check_openapi.c fails for a route without. A schema is the name of one of the
 * document's schemas ("Tenant", "Status") or an inline JSON schema ("{\"type\":...}"). */
typedef struct rz_route_doc {
	unsigned method;               /* the RZ_M_* bit described; 0 ends a list */
	const char *id;                /* operationId: unique and stable */
	const char *summary;           /* one line */
	const rz_route_param_t *query; /* the query parameters it reads, or NULL */
	const char *request;           /* the request body's schema, or NULL: no body */
	const char *request_type;      /* its media type; NULL = application/json */
	const char *response;          /* the success reply's schema, or NULL: empty */
	const char *response_type;     /* its media type; NULL = application/json */
	int code;                      /* the success code; 0 = 200 */
	const int *errors;             /* the error codes it answers (a Status), 0-terminated,
	                                  besides those of the server and the guard (400, 401,
	                                  403, 413, 500, 503), which the document adds */
	int other_code;                /* one more answer whose body is no Status, or 0 */
	const char *other;             /* its schema (a lock's holder on 423), or NULL: none
	                                  (304) */
} rz_route_doc_t;

/* One route. pattern is an absolute path whose segments are literals or "{name}"
 * (one non-empty segment); the last may be "{name...}" (the rest of the path).
 * Literal segments win over parameters. Borrowed — the table must outlive the server. */
typedef struct rz_route {
	unsigned methods; /* RZ_M_* bits; GET routes answer HEAD too */
	const char *pattern;
	rz_http_fn fn;
	void *ctx;
	int role;         /* enum rz_role (core/model/kinds.h): who may call it; 0 = nobody */
	const char *kind; /* for authorisation and audit: the resource kind, or NULL */
	const char *verb; /* for audit: "create", "login", ...; NULL = from the method */
	bool audit;       /* audit every call, not only mutating ones (credential downloads) */
	bool basic_auth;  /* a 401 asks for HTTP basic credentials (tofu's http backend speaks
	                     nothing else), not a bearer token */
	const rz_route_doc_t *doc; /* for the OpenAPI document, or NULL (see rz_route_doc_t) */
	bool cookie;     /* the WebUI's pages: the session cookie authenticates too (never for
	                    /api: a cookie rides along on forged cross-site requests) */
	bool per_tenant; /* a route naming no tenant (the audit log) that a principal below its
	                    role reaches too when AccessBindings grant it that role on some
	                    tenants: the handler then shows those tenants' data only */
	bool no_alias;   /* served at its pattern only, under no alias (rz_http_add_alias):
	                    Kubernetes' core v1 paths, whose group path twin is another route */
} rz_route_t;

typedef struct rz_http_opts {
	uint64_t max_body;                  /* request bodies above this get 413; 0 = 16 MiB */
	size_t max_header;                  /* request line + headers; 0 = 64 KiB */
	int idle_timeout_s;                 /* keep-alive idle timeout (no request begun); 0 = 60 */
	const char *server_name;            /* Server header; NULL = "rezuscloud" */
	size_t max_stream_backlog;          /* a streamed reply whose client leaves more than this
	                                       unread is cut off; 0 = 4 MiB */
	size_t max_connections;             /* open connections; more are answered 503; 0 = 4096 */
	size_t max_connections_per_address; /* the same per peer address; 0 = 256 */
	int64_t header_timeout_ms;         /* from a request's first byte to the end of its headers,
	                                      absolute (bytes arriving do not extend it); 0 = 10 s */
	int64_t body_timeout_ms;           /* from the end of the headers to the end of the body,
	                                      absolute; 0 = 60 s */
	uint64_t max_body_unauthenticated; /* the largest body of a request the authn hook does
	                                      not accept, or before it is asked; 0 = 64 KiB */
	uint64_t max_body_buffer; /* request bodies held in memory at once, in all; a request
	                             that would go over gets 503; 0 = 256 MiB */
	uint64_t max_body_buffer_per_address; /* the same per peer address; 0 = 64 MiB */
	uint64_t max_unsent; /* a connection's replies its client has not taken: over it, no more
	                        of its requests are read until they drain; 0 = 1 MiB */
	uint64_t max_unsent_per_address; /* the same for all of one address's connections;
	                                    0 = 16 MiB */
	int64_t hsts_max_age_s;          /* replies over TLS carry Strict-Transport-Security
	                                    with it; 0 = none */
	int access_log_per_address;      /* log lines about requests per address in 10 s
	                                    (rz_req_log_sample); the rest counted into one
	                                    line; 0 = all */
} rz_http_opts_t;

/* Create a server on base. opts may be NULL (defaults). Caller owns *out; rz_http_free(). */
int rz_http_new(rz_http_t **out, struct event_base *base, const rz_http_opts_t *opts,
                rz_err_t *err);

/* Add routes (borrowed). Returns 0 or -EINVAL for a malformed pattern (err filled). */
int rz_http_add_routes(rz_http_t *h, const rz_route_t *routes, size_t n, rz_err_t *err);

/* Add a module's static table of routes (borrowed), whose handlers all get ctx: a row's own
 * ctx is not read. A module declares its table `static const` at its top and registers it
 * with its count: rz_http_add_table(http, RZ_ROUTES(table), module, err). Returns as
 * rz_http_add_routes. */
int rz_http_add_table(rz_http_t *h, const rz_route_t *table, size_t n, void *ctx, rz_err_t *err);
#define RZ_ROUTES(table) (table), (sizeof(table) / sizeof((table)[0]))

/* Serve every route whose pattern starts with prefix (whole segments: "/api/v1" covers
 * "/api/v1" and "/api/v1/x", not "/api/v1x") also under alias in its place, by the same
 * route: the same handler, role, kind and pattern for the observer (metrics count both
 * paths as one route). The first alias whose prefix matches applies, so register the longer
 * prefix first; a route with no_alias has none. Call before adding routes: -EINVAL after,
 * or beyond RZ_HTTP_ALIASES_MAX. prefix and alias are copied. */
#define RZ_HTTP_ALIASES_MAX 4
int rz_http_add_alias(rz_http_t *h, const char *prefix, const char *alias, rz_err_t *err);

/* Listen on "host:port" or "[v6]:port" (port 0 = ephemeral). */
int rz_http_listen(rz_http_t *h, const char *addr, rz_err_t *err);

/* Serve TLS (core/http/tls.h) on every connection accepted from now on; NULL: plain HTTP.
 * On a TLS port the first byte a client sends decides: a TLS handshake goes on, plain HTTP
 * is answered "400 Client sent an HTTP request to an HTTPS server." in clear text and
 * closed, anything else is closed; no first byte within header_timeout_ms: closed.
 * Borrowed — tls must outlive the server. */
void rz_http_set_tls(rz_http_t *h, struct rz_tls *tls);

/* The bound port, or -1 when not listening. */
int rz_http_port(const rz_http_t *h);

/* Stop accepting; close idle connections; cut off live streamed replies (rz_reply_start:
 * their on-close callbacks run); other requests in flight, lists streamed with
 * rz_reply_begin among them, finish and their connections close after the reply. */
void rz_http_shutdown(rz_http_t *h);

/* Called once per finished request (after the reply or the end of a stream) with the
 * matched route's pattern (NULL when none matched) and the time taken. */
typedef void (*rz_http_observer_fn)(void *ctx, rz_req_t *req, const char *route, const char *method,
                                    int code, double seconds, bool streamed);
void rz_http_set_observer(rz_http_t *h, rz_http_observer_fn fn, void *ctx);

/* Called before every handler: returns true to let the request through, or replies (401,
 * 403, ...) itself and returns false. Without a guard every route is open. */
typedef bool (*rz_http_guard_fn)(void *ctx, rz_req_t *req, const rz_route_t *route);
void rz_http_set_guard(rz_http_t *h, rz_http_guard_fn fn, void *ctx);

/* A request no route matches (and no route of another method) is answered 404 with a
 * Status, unless take (may be NULL) says the fallback wants it: then it goes to route (its
 * guard first, as for any route) with ctx, as the WebUI's HTML "not found" page for a
 * browser. take decides from the request alone (its method, path, headers) and replies
 * nothing. route is borrowed: it must outlive h. */
typedef bool (*rz_http_take_fn)(const rz_req_t *req);
void rz_http_set_fallback(rz_http_t *h, rz_http_take_fn take, const rz_route_t *route, void *ctx);

/* Called on the loop when a request's headers are complete and its body may be larger than
 * max_body_unauthenticated (by its Content-Length, or a chunked body growing past it):
 * true when the headers carry valid credentials. It must decide from the headers alone,
 * cheaply (no password hashing), and must not reply; the body is not there yet. When it
 * says no, the body is not read: the request is routed and its guard answers (401), or a
 * route the guard lets through gets 413. Without a hook every request counts as
 * authenticated and only max_body applies. */
typedef bool (*rz_http_authn_fn)(void *ctx, const rz_req_t *req);
void rz_http_set_authn(rz_http_t *h, rz_http_authn_fn fn, void *ctx);

/* Every route, in registration order (for tests and documentation). Borrowed. */
const rz_route_t *rz_http_route_at(const rz_http_t *h, size_t i);
size_t rz_http_route_count(const rz_http_t *h);
/* The pattern entry i of the table is served at (the OpenAPI document's path), NULL past
 * the end: its route's pattern, or for an entry that serves a route under another path,
 * that path. Borrowed. */
const char *rz_http_route_pattern(const rz_http_t *h, size_t i);

/* Requests received and not yet fully replied. */
size_t rz_http_in_flight(const rz_http_t *h);

/* Close every connection and free the server. Accepts NULL. */
void rz_http_free(rz_http_t *h);

/* ---- the request; every pointer returned is borrowed — valid until the reply ---- */

const char *rz_req_method(const rz_req_t *req);                  /* "GET", "LOCK", ... */
unsigned rz_req_method_bit(const rz_req_t *req);                 /* RZ_M_* or 0 */
const char *rz_req_path(const rz_req_t *req);                    /* decoded path, no query */
const char *rz_req_param(const rz_req_t *req, const char *name); /* path parameter */
const char *rz_req_query(const rz_req_t *req, const char *name); /* decoded; NULL if absent */
/* A boolean as Go's strconv.ParseBool reads one (1 t T TRUE true True, 0 f F FALSE false
 * False): true and *out, or false for anything else (NULL included). */
bool rz_parse_bool(const char *s, bool *out);
/* A query or header value as a decimal integer in [min, max] (digits, a leading minus at
 * most): true and *out, or false. */
bool rz_parse_int(const char *s, int64_t min, int64_t max, int64_t *out);
const char *rz_req_header(const rz_req_t *req, const char *name); /* case-insensitive */
const char *rz_req_body(const rz_req_t *req, size_t *len);        /* NUL-terminated */
const char *rz_req_id(const rz_req_t *req);
/* Whether a log line about req may be written: each peer address has
 * access_log_per_address of them in 10 s (the request line, a refusal's reason); beyond,
 * false, and the line is counted into one "requests not logged one by one … more=N" line,
 * written when the address's window ends or its last connection closes. Always true for
 * in-process requests, requests whose client has gone, and without a budget. */
bool rz_req_log_sample(rz_req_t *req);
const char *rz_req_peer(const rz_req_t *req); /* peer IP address text */

/* The route that matched (NULL before routing or when none did). Borrowed. */
const rz_route_t *rz_req_route(const rz_req_t *req);

/* One pointer of the caller's per request, freed with free_fn (may be NULL) with it. */
void rz_req_set_data(rz_req_t *req, void *data, void (*free_fn)(void *));
void *rz_req_data(const rz_req_t *req);

/* The message of the error Status this request was answered with ("" otherwise). */
const char *rz_req_error(const rz_req_t *req);

/* Mark the request as already audited (its row was written with the change). */
void rz_req_set_audited(rz_req_t *req);
bool rz_req_audited(const rz_req_t *req);

/* Add a response header (copied). Call before replying. 0 or -ENOMEM/-EINVAL. */
int rz_req_add_header(rz_req_t *req, const char *name, const char *value);

/* ---- replies: each ends the request ---- */

/* Body is copied; ctype may be NULL when len is 0. */
void rz_reply(rz_req_t *req, int code, const char *ctype, const void *body, size_t len);

/* JSON body (takes ownership of obj); compact, indented with ?pretty=true. */
void rz_reply_json(rz_req_t *req, int code, json_t *obj);
/* The same for JSON already serialised compactly (text, borrowed; a newline is added). */
void rz_reply_json_text(rz_req_t *req, int code, const char *text);

/* A Kubernetes Status for code with reason (NULL = the one for code) and message. */
void rz_reply_error(rz_req_t *req, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- streamed replies (watches, live logs, lists) ---- */

/* Send the status line and headers now and the body in pieces: chunked for HTTP/1.1,
 * close-delimited for HTTP/1.0. A live stream: no caching, no proxy buffering, and not
 * counted in the observer's latency (streamed is true). 0 or -EPIPE when the client has
 * already gone (the request must still be ended with rz_reply_end). For HEAD the headers
 * are sent and the body written is counted but not sent. */
int rz_reply_start(rz_req_t *req, int code, const char *ctype);

/* The same for a reply that is finite but too large to build whole (a list): streamed
 * like rz_reply_start, without the live stream's headers, and timed like any reply. */
int rz_reply_begin(rz_req_t *req, int code, const char *ctype);

/* Append to a started stream. data is copied. Returns 0; -EPIPE when the client has gone;
 * -ENOBUFS when the client has left more than max_stream_backlog unread, in which case
 * the connection is cut off. After an error, only rz_reply_end remains to be called. */
int rz_reply_write(rz_req_t *req, const void *data, size_t len);

/* Bytes written to the stream and not yet taken by the client (0 once it has gone). */
size_t rz_reply_backlog(const rz_req_t *req);

/* fn(req, arg) runs once, on the loop, when the client has taken enough of a started
 * stream that at most below bytes are left unread; call it when the backlog is above that.
 * Not called once the client has gone (the on-close callback is). Replaces an earlier one. */
void rz_reply_on_drain(rz_req_t *req, size_t below, void (*fn)(rz_req_t *req, void *arg),
                       void *arg);

/* The backlog above which rz_reply_write cuts a stream off (max_stream_backlog). */
size_t rz_reply_backlog_cap(const rz_req_t *req);

/* The loop the request is served on, for the timers of a reply sent in pieces (NULL once
 * the server is freed). Borrowed. */
struct event_base *rz_req_base(const rz_req_t *req);

/* End the stream (or drop it when the client has gone) and free the request. */
void rz_reply_end(rz_req_t *req);

/* End a started stream that cannot be finished (an error after the head was sent): the
 * connection is closed without the last chunk, so that the client sees a cut reply, not a
 * complete one; the request is freed. */
void rz_reply_abort(rz_req_t *req);

/* fn(req, arg) runs once when the client disconnects, or the server shuts down or is
 * freed, while req is outstanding — the owner then calls rz_reply_end (or a reply) to
 * free it, possibly from within fn. Not called for errors that rz_reply_write returns. */
void rz_req_on_close(rz_req_t *req, void (*fn)(rz_req_t *req, void *arg), void *arg);

/* Reply with status (takes ownership); the HTTP code is status.code. */
void rz_reply_status(rz_req_t *req, json_t *status);

/* ---- in-process requests: the WebUI acts through the API's own routes ---- */

/* The captured reply to an in-process request. Borrowed — valid during the callback. */
typedef struct rz_inject_reply {
	int code;
	const char *content_type; /* NULL when none was given */
	const char *body;         /* NUL-terminated; "" when empty; for a live stream with a
	                             data callback, "" (the pieces went there) */
	size_t len;
	bool truncated;      /* the reply was longer than max_reply, or cut off */
	const rz_req_t *req; /* the request, for rz_req_reply_header() */
} rz_inject_reply_t;

/* Called once with the reply, from within rz_http_inject when the handler answers at once
 * or later on the loop; not after rz_http_inject_cancel. The request is freed after it
 * returns: forget the handle there. */
typedef void (*rz_inject_done_fn)(void *arg, const rz_inject_reply_t *reply);
/* A streamed reply's pieces as they are written (data borrowed); < 0 ends the stream as if
 * its client had gone. */
typedef int (*rz_inject_data_fn)(void *arg, const char *data, size_t len);

typedef struct rz_inject {
	const char *method;        /* "GET", "POST", ... */
	const char *target;        /* path and query, percent-encoded as on the wire */
	const char *authorization; /* its Authorization header, or NULL */
	const char *accept;        /* its Accept header, or NULL */
	const char *content_type;  /* NULL when there is no body */
	const char *body;          /* copied; may be NULL when len is 0 */
	size_t len;                /* at most max_body */
	size_t max_reply;          /* a captured body longer than this is cut (truncated);
	                              0 = max_stream_backlog */
	rz_inject_done_fn done;
	rz_inject_data_fn data; /* NULL: the body is captured for done */
	void *arg;
} rz_inject_t;

/* Dispatch a request in process through the route table, the guard and the observer (so it
 * is authorised, audited and counted like one from the network), with parent's peer
 * address, X-Forwarded-For, User-Agent, TLS and request id (parent may be NULL); its reply
 * goes to in->done instead of a socket. *handle (may be NULL) is set to the request before
 * it is dispatched: valid until done runs. 0, or -EINVAL/-E2BIG/-ESHUTDOWN/-ENOMEM (done is
 * then not called). */
int rz_http_inject(rz_http_t *h, const rz_req_t *parent, const rz_inject_t *in, rz_req_t **handle,
                   rz_err_t *err);

/* Give up on an in-process request still outstanding, as if its client had gone: its
 * on-close callback runs (a live stream ends), done is not called. */
void rz_http_inject_cancel(rz_req_t *req);

/* A response header set on req (rz_req_add_header), or NULL. Borrowed. */
const char *rz_req_reply_header(const rz_req_t *req, const char *name);

/* True when req came over TLS (or, in process, its parent did). */
bool rz_req_tls(const rz_req_t *req);

/* Serve a connection that is already open, as if it had been accepted from 127.0.0.1: the
 * request parser's fuzz target (fuzz/http_request.c) feeds raw bytes through one end of a
 * socketpair. Takes ownership of fd (closed with the connection). */
void rz_http_serve_fd(rz_http_t *h, int fd);

#endif /* RZ_HTTP_H */
