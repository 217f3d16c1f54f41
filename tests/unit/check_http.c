/* tests/unit/check_http.c - the HTTP server, in process on 127.0.0.1 port 0. */
#include <config.h>

#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/http/client.h"
#include "core/http/http.h"
#include "core/http/tls.h"
#include "core/base/log.h"
#include "tests/unit/httpclient.h"

static struct event_base *base;
static rz_http_t *srv;
static int port;
static rz_req_t *parked; /* a request whose reply a test sends later */

static void echo(rz_req_t *req, void *ctx)
{
	json_t *o = json_object();
	const char *names[] = { "tenant", "name", "path", NULL };
	size_t len;
	const char *body = rz_req_body(req, &len);

	json_object_set_new(o, "route", json_string(ctx));
	json_object_set_new(o, "method", json_string(rz_req_method(req)));
	json_object_set_new(o, "path", json_string(rz_req_path(req)));
	for (int i = 0; names[i] != NULL; i++) {
		const char *v = rz_req_param(req, names[i]);
		if (v != NULL) {
			json_object_set_new(o, names[i], json_string(v));
		}
	}
	if (rz_req_query(req, "q") != NULL) {
		json_object_set_new(o, "q", json_string(rz_req_query(req, "q")));
	}
	json_object_set_new(o, "bodyLen", json_integer((json_int_t)len));
	json_object_set_new(o, "body", json_stringn(body, len));
	rz_reply_json(req, 200, o);
}

static void park(rz_req_t *req, void *ctx)
{
	parked = req;
}

static void invalid(rz_req_t *req, void *ctx)
{
	json_t *st = rz_status_new(422, NULL, "Tenant \"x\" is invalid");
	rz_status_set_target(st, "Tenant", "x");
	rz_status_add_cause(st, "spec.podSubnets[1]", "FieldValueInvalid", "not a CIDR");
	rz_req_add_header(req, "X-Extra", "yes");
	rz_reply_status(req, st);
}

static void quote_ctype(rz_req_t *req, void *ctx)
{
	const char *t = rz_req_header(req, "Content-Type");

	rz_reply_error(req, 415, NULL, "unsupported media type '%s'", t ? t : "");
}

/* A finite reply streamed in pieces (as lists are): 3 chunks of "piece n\n". */
static void pieces(rz_req_t *req, void *ctx)
{
	char buf[32];

	ck_assert_int_eq(rz_reply_begin(req, 200, "text/plain"), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(buf, sizeof(buf), "piece %d\n", i);
		ck_assert_int_eq(rz_reply_write(req, buf, strlen(buf)), 0);
	}
	rz_reply_end(req);
}

/* A stream that fails after its head: aborted. */
static void broken(rz_req_t *req, void *ctx)
{
	ck_assert_int_eq(rz_reply_begin(req, 200, "text/plain"), 0);
	ck_assert_int_eq(rz_reply_write(req, "half", 4), 0);
	rz_reply_abort(req);
}

static const rz_route_t routes[] = {
	{ .methods = RZ_M_GET, .pattern = "/pieces", .fn = pieces, .ctx = "pieces" },
	{ .methods = RZ_M_GET, .pattern = "/broken", .fn = broken, .ctx = "broken" },
	{ .methods = RZ_M_GET | RZ_M_POST, .pattern = "/things", .fn = echo, .ctx = "things" },
	{ .methods = RZ_M_GET | RZ_M_DELETE,
	  .pattern = "/api/v1/tenants/{tenant}/nodegroups/{name}",
	  .fn = echo,
	  .ctx = "nodegroup" },
	{ .methods = RZ_M_GET, .pattern = "/users/{name}", .fn = echo, .ctx = "user" },
	{ .methods = RZ_M_GET, .pattern = "/users/me", .fn = echo, .ctx = "me" },
	{ .methods = RZ_M_GET, .pattern = "/static/{path...}", .fn = echo, .ctx = "static" },
	{ .methods = RZ_M_LOCK, .pattern = "/tfstate/{tenant}", .fn = echo, .ctx = "lock" },
	{ .methods = RZ_M_UNLOCK, .pattern = "/tfstate/{tenant}", .fn = echo, .ctx = "unlock" },
	{ .methods = RZ_M_GET | RZ_M_POST, .pattern = "/slow", .fn = park, .ctx = "slow" },
	{ .methods = RZ_M_POST, .pattern = "/ctype", .fn = quote_ctype, .ctx = "ctype" },
	{ .methods = RZ_M_POST, .pattern = "/invalid", .fn = invalid, .ctx = "invalid" },
	{ .methods = RZ_M_GET, .pattern = "/", .fn = echo, .ctx = "root" },
};

/* A module's static table: its rows name no ctx (or another one), the table's is used. */
static const rz_route_t table[] = {
	{ .methods = RZ_M_GET, .pattern = "/table/one", .fn = echo },
	{ .methods = RZ_M_GET, .pattern = "/table/{name}", .fn = echo, .ctx = "row" },
};

static void setup(void)
{
	rz_http_opts_t opts = { .max_body = 1024, .idle_timeout_s = 5 };
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_WARNING);
	base = event_base_new();
	ck_assert_int_eq(rz_http_new(&srv, base, &opts, &err), 0);
	ck_assert_int_eq(rz_http_add_routes(srv, routes, sizeof(routes) / sizeof(routes[0]), &err),
	                 0);
	ck_assert_int_eq(rz_http_add_table(srv, RZ_ROUTES(table), "table", &err), 0);
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:0", &err), 0);
	port = rz_http_port(srv);
	ck_assert_int_gt(port, 0);
	parked = NULL;
}

static void teardown(void)
{
	rz_http_free(srv);
	event_base_free(base);
	rz_log_close();
}

static json_t *body_json(const rzt_response_t *r)
{
	json_error_t jerr;
	json_t *j = json_loads(r->body, 0, &jerr);
	ck_assert_msg(j != NULL, "body is not JSON: %s", r->body);
	return j;
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

START_TEST(test_route_and_params)
{
	rzt_response_t r;
	json_t *j;

	rzt_request(base, port,
	            "GET /api/v1/tenants/acme/nodegroups/work%65rs HTTP/1.1\r\nHost: x\r\n\r\n",
	            &r);
	ck_assert_int_eq(r.code, 200);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "nodegroup");
	ck_assert_str_eq(jstr(j, "tenant"), "acme");
	ck_assert_str_eq(jstr(j, "name"), "workers");
	json_decref(j);
	rzt_response_free(&r);
	/* an encoded '/' in a name segment matches no route (the fuzzer's invariant: handlers
	 * never see a parameter holding '/') */
	rzt_request(base, port,
	            "GET /api/v1/tenants/acme/nodegroups/work%2Fers HTTP/1.1\r\nHost: x\r\n\r\n",
	            &r);
	ck_assert_int_eq(r.code, 404);
	rzt_response_free(&r);
}
END_TEST

/* rz_http_add_table: every row's handler gets the table's ctx, never the row's. */
START_TEST(test_table_ctx)
{
	static const char *const paths[] = { "/table/one", "/table/two" };
	rzt_response_t r;
	json_t *j;

	for (size_t i = 0; i < 2; i++) {
		char req[64];
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\n\r\n", paths[i]);
		rzt_request(base, port, req, &r);
		ck_assert_int_eq(r.code, 200);
		j = body_json(&r);
		ck_assert_str_eq(jstr(j, "route"), "table");
		json_decref(j);
		rzt_response_free(&r);
	}
}
END_TEST

START_TEST(test_literal_beats_param)
{
	rzt_response_t r;
	json_t *j;

	rzt_request(base, port, "GET /users/me HTTP/1.1\r\n\r\n", &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "me");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /users/bob HTTP/1.1\r\n\r\n", &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "user");
	ck_assert_str_eq(jstr(j, "name"), "bob");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_rest_param_and_root)
{
	rzt_response_t r;
	json_t *j;

	rzt_request(base, port, "GET /static/css/app.css HTTP/1.1\r\n\r\n", &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "path"), "css/app.css");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /static HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 404);
	rzt_response_free(&r);
	rzt_request(base, port, "GET / HTTP/1.1\r\n\r\n", &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "root");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_not_found_is_status)
{
	rzt_response_t r;
	char ctype[64];
	json_t *j;

	rzt_request(base, port, "GET /nope HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 404);
	ck_assert(rzt_header(&r, "Content-Type", ctype, sizeof(ctype)));
	ck_assert_str_eq(ctype, "application/json");
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "kind"), "Status");
	ck_assert_str_eq(jstr(j, "apiVersion"), "v1");
	ck_assert_str_eq(jstr(j, "status"), "Failure");
	ck_assert_str_eq(jstr(j, "reason"), "NotFound");
	ck_assert_str_eq(jstr(j, "message"), "the server could not find the requested resource");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "code")), 404);
	json_decref(j);
	rzt_response_free(&r);
	/* a trailing slash is a different path */
	rzt_request(base, port, "GET /things/ HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 404);
	rzt_response_free(&r);
}
END_TEST

/* rz_http_set_fallback: a path no route has goes to the fallback when its take says so (the
 * WebUI's HTML 404 for a browser); anything else keeps the 404 Status, and a path with a
 * route of another method keeps its 405. */
static bool wants_html(const rz_req_t *req)
{
	const char *accept = rz_req_header(req, "Accept");

	return accept != NULL && strstr(accept, "text/html") != NULL;
}

START_TEST(test_fallback)
{
	static const rz_route_t fallback = { .methods = RZ_M_GET, .pattern = "/*", .fn = echo };
	rzt_response_t r;
	json_t *j;

	rz_http_set_fallback(srv, wants_html, &fallback, "fallback");
	rzt_request(base, port, "GET /nope HTTP/1.1\r\nAccept: text/html,*/*\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "fallback");
	ck_assert_str_eq(jstr(j, "path"), "/nope");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /nope HTTP/1.1\r\nAccept: application/json\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 404);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "kind"), "Status");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /things HTTP/1.1\r\nAccept: text/html\r\n\r\n", &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "things");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port,
	            "PUT /things HTTP/1.1\r\nAccept: text/html\r\nContent-Length: 0\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 405);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_method_not_allowed)
{
	rzt_response_t r;
	char allow[128];
	json_t *j;

	rzt_request(base, port, "PUT /things HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 405);
	ck_assert(rzt_header(&r, "Allow", allow, sizeof(allow)));
	ck_assert_str_eq(allow, "GET, HEAD, POST");
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "reason"), "MethodNotAllowed");
	ck_assert_str_eq(jstr(j, "message"), "method PUT is not allowed on /things");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_lock_unlock_methods)
{
	rzt_response_t r;
	json_t *j;

	rzt_request(base, port,
	            "LOCK /tfstate/acme HTTP/1.1\r\nContent-Type: application/json\r\n"
	            "Content-Length: 11\r\n\r\n{\"ID\":\"1\"}\n",
	            &r);
	ck_assert_int_eq(r.code, 200);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "lock");
	ck_assert_str_eq(jstr(j, "method"), "LOCK");
	ck_assert_str_eq(jstr(j, "body"), "{\"ID\":\"1\"}\n");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "UNLOCK /tfstate/acme HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "unlock");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_body_limit_content_length)
{
	rzt_response_t r;
	json_t *j;
	char conn[32];

	rzt_request(base, port, "POST /things HTTP/1.1\r\nContent-Length: 1025\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 413);
	ck_assert(rzt_header(&r, "Connection", conn, sizeof(conn)));
	ck_assert_str_eq(conn, "close");
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "reason"), "RequestEntityTooLarge");
	ck_assert_str_eq(jstr(j, "message"), "request body exceeds the limit of 1024 bytes");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_body_limit_chunked)
{
	char chunk[700];
	rzt_conn_t *c = rzt_open(port);
	rzt_response_t r;
	const char *head = "POST /things HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";

	memset(chunk, 'a', sizeof(chunk));
	rzt_send(base, c->fd, head, strlen(head));
	for (int i = 0; i < 2; i++) {
		rzt_send(base, c->fd, "2bc\r\n", 5);
		rzt_send(base, c->fd, chunk, sizeof(chunk));
		rzt_send(base, c->fd, "\r\n", 2);
	}
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 413);
	rzt_response_free(&r);
	ck_assert(rzt_closed(base, c->fd));
	rzt_close(c);
}
END_TEST

START_TEST(test_body_at_limit_and_chunked_ok)
{
	char raw[2048];
	char body[1025];
	rzt_response_t r;
	json_t *j;

	memset(body, 'b', 1024);
	body[1024] = '\0';
	snprintf(raw, sizeof(raw), "POST /things HTTP/1.1\r\nContent-Length: 1024\r\n\r\n%s", body);
	rzt_request(base, port, raw, &r);
	ck_assert_int_eq(r.code, 200);
	j = body_json(&r);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "bodyLen")), 1024);
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port,
	            "POST /things HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
	            "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
	            &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "body"), "abcde");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_request_id)
{
	rzt_response_t r;
	char id[200];

	rzt_request(base, port, "GET /things HTTP/1.1\r\nX-Request-ID: abc-123\r\n\r\n", &r);
	ck_assert(rzt_header(&r, "X-Request-ID", id, sizeof(id)));
	ck_assert_str_eq(id, "abc-123");
	rzt_response_free(&r);
	rzt_request(base, port, "GET /nope HTTP/1.1\r\n\r\n", &r);
	ck_assert(rzt_header(&r, "X-Request-ID", id, sizeof(id)));
	ck_assert_uint_eq(strlen(id), 32);
	ck_assert_uint_eq(strspn(id, "0123456789abcdef"), 32);
	rzt_response_free(&r);
	/* an unsafe id is replaced, never echoed */
	rzt_request(base, port, "GET /things HTTP/1.1\r\nX-Request-ID: a b<script>\r\n\r\n", &r);
	ck_assert(rzt_header(&r, "X-Request-ID", id, sizeof(id)));
	ck_assert_uint_eq(strlen(id), 32);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_keep_alive_pipelined)
{
	rzt_conn_t *c = rzt_open(port);
	rzt_response_t r;
	json_t *j;
	const char *two = "GET /users/a HTTP/1.1\r\n\r\nGET /users/b HTTP/1.1\r\n\r\n";

	rzt_send(base, c->fd, two, strlen(two));
	ck_assert(rzt_recv(base, c, &r, false));
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "name"), "a");
	json_decref(j);
	rzt_response_free(&r);
	ck_assert(rzt_recv(base, c, &r, false));
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "name"), "b");
	json_decref(j);
	rzt_response_free(&r);
	/* and the connection is still usable */
	rzt_send(base, c->fd, "GET /users/c HTTP/1.1\r\nConnection: close\r\n\r\n", 44);
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	ck_assert(rzt_closed(base, c->fd));
	rzt_close(c);
}
END_TEST

START_TEST(test_head_has_no_body)
{
	rzt_conn_t *c = rzt_open(port);
	rzt_response_t r;
	char len[32];

	rzt_send(base, c->fd, "HEAD /things HTTP/1.1\r\n\r\n", 25);
	ck_assert(rzt_recv(base, c, &r, true));
	ck_assert_int_eq(r.code, 200);
	ck_assert(rzt_header(&r, "Content-Length", len, sizeof(len)));
	ck_assert_int_gt(atoi(len), 0);
	rzt_response_free(&r);
	/* no body bytes follow: the next response starts right away */
	rzt_send(base, c->fd, "GET /nope HTTP/1.1\r\n\r\n", 22);
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 404);
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

/* Every accepted connection has TCP_NODELAY: without it the second 16 KiB piece of a reply
 * waited for the client's delayed ACK, 40 ms on every keep-alive reply of 17-65 KB. The
 * server is handed the accepted socket, which the test then inspects. */
START_TEST(test_accepted_socket_has_nodelay)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), cfd = socket(AF_INET, SOCK_STREAM, 0), sfd;
	int on = 0;
	socklen_t olen = sizeof(on);
	rzt_conn_t *c = calloc(1, sizeof(*c));
	rzt_response_t r;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &slen), 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	sfd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(sfd, 0);
	close(lfd);
	ck_assert_int_eq(getsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &on, &olen), 0);
	ck_assert_int_eq(on, 0); /* the kernel's default, so that the check below can fail */
	rz_http_serve_fd(srv, sfd);
	ck_assert_int_eq(getsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &on, &olen), 0);
	ck_assert_int_ne(on, 0);
	/* and the connection is served */
	ck_assert_ptr_nonnull(c);
	c->fd = cfd;
	ck_assert_int_eq(fcntl(cfd, F_SETFL, O_NONBLOCK), 0);
	rzt_send(base, cfd, "GET /things HTTP/1.1\r\n\r\n", 24);
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

/* A finite streamed reply: chunked, without the live stream's no-cache headers, and
 * for HEAD the head only, the connection kept for the next request. */
START_TEST(test_streamed_finite_reply)
{
	rzt_conn_t *c = rzt_open(port);
	rzt_response_t r;
	char v[64];

	rzt_send(base, c->fd, "GET /pieces HTTP/1.1\r\n\r\n", 24);
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 200);
	ck_assert(rzt_header(&r, "Transfer-Encoding", v, sizeof(v)));
	ck_assert_str_eq(v, "chunked");
	ck_assert(!rzt_header(&r, "X-Accel-Buffering", v, sizeof(v)));
	ck_assert(!rzt_header(&r, "Content-Length", v, sizeof(v)));
	ck_assert_str_eq(r.body, "piece 0\npiece 1\npiece 2\n");
	rzt_response_free(&r);
	rzt_send(base, c->fd, "HEAD /pieces HTTP/1.1\r\n\r\n", 25);
	ck_assert(rzt_recv(base, c, &r, true));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	/* no body bytes, no last chunk: the next response starts right away */
	rzt_send(base, c->fd, "GET /nope HTTP/1.1\r\n\r\n", 22);
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 404);
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

/* A stream aborted after its head ends without the last chunk: the client sees the
 * connection close on an incomplete body, not a complete reply. */
START_TEST(test_streamed_reply_abort)
{
	rzt_conn_t *c = rzt_open(port);
	rzt_response_t r;

	rzt_send(base, c->fd, "GET /broken HTTP/1.1\r\n\r\n", 24);
	ck_assert(!rzt_recv(base, c, &r, false));
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

START_TEST(test_malformed_request)
{
	rzt_response_t r;
	json_t *j;

	rzt_request(base, port, "GET /things HTTP/1.1\r\nBad Header\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 400);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "reason"), "BadRequest");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /a%zz HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 400);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /a%00b HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 400);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_query_and_pretty)
{
	rzt_response_t r;
	json_t *j;

	rzt_request(base, port, "GET /things?q=a+b%26c&x HTTP/1.1\r\n\r\n", &r);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "q"), "a b&c");
	ck_assert_str_eq(jstr(j, "path"), "/things");
	ck_assert_ptr_eq(strchr(r.body, '\n'), r.body + r.body_len - 1); /* compact: one line */
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /things?pretty=true HTTP/1.1\r\n\r\n", &r);
	ck_assert_ptr_nonnull(strstr(r.body, "{\n  \""));
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_status_with_causes)
{
	rzt_response_t r;
	char extra[16];
	json_t *j, *d, *cause;

	rzt_request(base, port, "POST /invalid HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 422);
	ck_assert(rzt_header(&r, "X-Extra", extra, sizeof(extra)));
	ck_assert_str_eq(extra, "yes");
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "reason"), "Invalid");
	d = json_object_get(j, "details");
	ck_assert_str_eq(jstr(d, "kind"), "Tenant");
	ck_assert_str_eq(jstr(d, "name"), "x");
	cause = json_array_get(json_object_get(d, "causes"), 0);
	ck_assert_str_eq(jstr(cause, "field"), "spec.podSubnets[1]");
	ck_assert_str_eq(jstr(cause, "reason"), "FieldValueInvalid");
	ck_assert_str_eq(jstr(cause, "message"), "not a CIDR");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_async_reply)
{
	rzt_conn_t *c = rzt_open(port);
	rzt_response_t r;
	double until = rzt_now() + 0.2;

	rzt_send(base, c->fd, "GET /slow HTTP/1.1\r\n\r\n", 22);
	while (parked == NULL || rzt_now() < until) {
		rzt_spin(base);
	}
	ck_assert_uint_eq(rz_http_in_flight(srv), 1);
	rz_reply(parked, 202, "text/plain", "later", 5);
	ck_assert_uint_eq(rz_http_in_flight(srv), 0);
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 202);
	ck_assert_str_eq(r.body, "later");
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

START_TEST(test_client_gone_before_reply)
{
	rzt_conn_t *c = rzt_open(port);
	double until = rzt_now() + 0.2;

	rzt_send(base, c->fd, "GET /slow HTTP/1.1\r\n\r\n", 22);
	while (parked == NULL) {
		rzt_spin(base);
	}
	rzt_close(c);
	while (rzt_now() < until) {
		rzt_spin(base);
	}
	/* the reply goes nowhere and frees the request (ASan checks the rest) */
	rz_reply(parked, 200, "text/plain", "x", 1);
	ck_assert_uint_eq(rz_http_in_flight(srv), 0);
}
END_TEST

START_TEST(test_reply_after_server_freed)
{
	rzt_conn_t *c = rzt_open(port);

	rzt_send(base, c->fd, "GET /slow HTTP/1.1\r\n\r\n", 22);
	while (parked == NULL) {
		rzt_spin(base);
	}
	ck_assert_uint_eq(rz_http_in_flight(srv), 1);
	rz_http_free(srv);
	srv = NULL;
	ck_assert(rzt_closed(base, c->fd));
	/* a late reply (say, from a worker job) only frees the request; ASan checks that */
	rz_reply(parked, 200, "text/plain", "late", 4);
	rzt_close(c);
}
END_TEST

START_TEST(test_shutdown_lets_in_flight_finish)
{
	rzt_conn_t *busy = rzt_open(port);
	rzt_conn_t *idle = rzt_open(port);
	rzt_response_t r;
	char conn[32];

	rzt_send(base, busy->fd, "GET /slow HTTP/1.1\r\n\r\n", 22);
	while (parked == NULL) {
		rzt_spin(base);
	}
	rz_http_shutdown(srv);
	ck_assert(rzt_closed(base, idle->fd));
	ck_assert_int_lt(rzt_connect_refused(port), 0);
	rz_reply(parked, 200, "text/plain", "done", 4);
	ck_assert(rzt_recv(base, busy, &r, false));
	ck_assert_int_eq(r.code, 200);
	ck_assert(rzt_header(&r, "Connection", conn, sizeof(conn)));
	ck_assert_str_eq(conn, "close");
	rzt_response_free(&r);
	ck_assert(rzt_closed(base, busy->fd));
	rzt_close(busy);
	rzt_close(idle);
}
END_TEST

START_TEST(test_access_log_line)
{
	char *dir = rzt_tmpdir();
	char path[512], buf[4096] = "";
	rzt_response_t r;
	rz_err_t err = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/access.log", dir);
	ck_assert_int_eq(rz_log_open(path, &err), 0);
	rz_log_set_level(RZ_LOG_INFO);
	rzt_request(base, port,
	            "GET /users/zed?token=s3cret HTTP/1.1\r\nX-Request-ID: rid-1\r\n\r\n", &r);
	rzt_response_free(&r);
	rz_log_close();
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "level=info subsys=http msg=request method=GET "
	                                  "path=/users/zed status=200 bytes="));
	ck_assert_ptr_nonnull(strstr(buf, "peer=127.0.0.1 request_id=rid-1\n"));
	ck_assert_ptr_null(strstr(buf, "s3cret"));
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_bad_patterns_and_addresses)
{
	rz_err_t err = { 0 };
	rz_route_t bad1[] = {
		{ .methods = RZ_M_GET, .pattern = "no-slash", .fn = echo, .ctx = NULL }
	};
	rz_route_t bad2[] = {
		{ .methods = RZ_M_GET, .pattern = "/a/{rest...}/b", .fn = echo, .ctx = NULL }
	};
	rz_route_t bad3[] = {
		{ .methods = RZ_M_GET, .pattern = "/a{b}", .fn = echo, .ctx = NULL }
	};

	ck_assert_int_eq(rz_http_add_routes(srv, bad1, 1, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "http: route 'no-slash' must start with '/' and have a handler");
	ck_assert_int_eq(rz_http_add_routes(srv, bad2, 1, &err), -EINVAL);
	ck_assert_int_eq(rz_http_add_routes(srv, bad3, 1, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "http: route '/a{b}': bad segment 'a{b}'");
	ck_assert_int_eq(rz_http_listen(srv, "nonsense", &err), -EINVAL);
	ck_assert_str_eq(err.msg, "http: invalid listen address 'nonsense'");
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:99999", &err), -EINVAL);
}
END_TEST

START_TEST(test_status_reasons)
{
	json_t *st = rz_status_new(409, "AlreadyExists", "tenants \"a\" already exists");

	ck_assert_str_eq(rz_status_reason(404), "NotFound");
	ck_assert_str_eq(rz_status_reason(413), "RequestEntityTooLarge");
	ck_assert_str_eq(rz_status_reason(415), "UnsupportedMediaType");
	ck_assert_str_eq(rz_status_reason(422), "Invalid");
	ck_assert_str_eq(rz_status_reason(429), "TooManyRequests");
	ck_assert_str_eq(rz_status_reason(503), "ServiceUnavailable");
	ck_assert_str_eq(rz_status_reason(502), "InternalError");
	ck_assert_str_eq(rz_status_reason(418), "BadRequest");
	ck_assert_str_eq(jstr(st, "reason"), "AlreadyExists");
	ck_assert_str_eq(jstr(st, "status"), "Failure");
	ck_assert_ptr_null(json_object_get(st, "details"));
	json_decref(st);
}
END_TEST

START_TEST(test_strict_request_line)
{
	static const char *const bad[] = {
		"GET /things  HTTP/1.1\r\n\r\n",               /* two spaces before the version */
		"GET  /things HTTP/1.1\r\n\r\n",               /* two spaces before the target */
		"GET /things HTTP/9.9\r\n\r\n",                /* no such version */
		"GET /things HTTP/2.0\r\n\r\n",                /* not over HTTP/1 framing */
		"GET /things HTTP/1.1 \r\n\r\n",               /* trailing space */
		"GET /things\r\n\r\n",                         /* HTTP/0.9 */
		"GET /things HTTP/1.1\r\nBad Name: x\r\n\r\n", /* a space in a header name */
		"GET /things HTTP/1.1\r\nBad\tName: x\r\n\r\n",
		"GET /th\x7fings HTTP/1.1\r\n\r\n", /* a control character in the target */
	};
	rzt_response_t r;
	json_t *j;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rzt_request(base, port, bad[i], &r);
		ck_assert_msg(r.code == 400, "%zu: %d for %s", i, r.code, bad[i]);
		j = body_json(&r);
		ck_assert_str_eq(jstr(j, "reason"), "BadRequest");
		json_decref(j);
		rzt_response_free(&r);
	}
	rzt_request(base, port, "GET /things HTTP/1.0\r\nX-Fine: 1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	/* blank lines before a request are tolerated (RFC 9112 §2.2) */
	rzt_request(base, port, "\r\nGET /things HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_request_line_and_header_limits)
{
	size_t n = 17 * 1024;
	char *raw = malloc(n + 64);
	char *p;
	rzt_response_t r;
	json_t *j;

	ck_assert_ptr_nonnull(raw);
	/* a request line over 16 KiB: 414 */
	p = raw + sprintf(raw, "GET /");
	memset(p, 'a', n);
	p += n;
	strcpy(p, " HTTP/1.1\r\n\r\n");
	rzt_request(base, port, raw, &r);
	ck_assert_int_eq(r.code, 414);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "message"), "the request line exceeds the limit of 16384 bytes");
	json_decref(j);
	rzt_response_free(&r);
	/* 101 header fields: 431 */
	p = raw + sprintf(raw, "GET /things HTTP/1.1\r\n");
	for (int i = 0; i < 101; i++) {
		p += sprintf(p, "X-%d: v\r\n", i);
	}
	strcpy(p, "\r\n");
	rzt_request(base, port, raw, &r);
	ck_assert_int_eq(r.code, 431);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "message"), "more than 100 header fields");
	json_decref(j);
	rzt_response_free(&r);
	free(raw);
}
END_TEST

START_TEST(test_invalid_utf8_path)
{
	rzt_response_t r;
	json_t *j;

	/* the 405 message quotes the path: jansson refused it, and the reply was a 500 */
	rzt_request(base, port, "DELETE /users/%C3%28 HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 400);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "reason"), "BadRequest");
	ck_assert_str_eq(jstr(j, "message"), "the request path is not valid UTF-8");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /users/%FF HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 400);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /things?q=%E0%80%AF HTTP/1.1\r\n\r\n", &r); /* overlong */
	ck_assert_int_eq(r.code, 400);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "message"), "query parameter 'q' is not valid UTF-8");
	json_decref(j);
	rzt_response_free(&r);
	/* valid UTF-8 passes */
	rzt_request(base, port, "GET /users/%C3%A9 HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "name"), "\xC3\xA9");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_invalid_utf8_header)
{
	rzt_response_t r;
	json_t *j;

	/* the handler quotes Content-Type in its 415, as the API does */
	rzt_request(base, port,
	            "POST /ctype HTTP/1.1\r\nContent-Type: text/plain; charset=\"\xff\xfe\"\r\n"
	            "Content-Length: 0\r\n\r\n",
	            &r);
	ck_assert_int_eq(r.code, 400);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "message"), "header 'Content-Type' is not valid UTF-8");
	json_decref(j);
	rzt_response_free(&r);
	rzt_request(base, port,
	            "POST /ctype HTTP/1.1\r\nContent-Type: text/plain; charset=\"\xC3\xA9\"\r\n"
	            "Content-Length: 0\r\n\r\n",
	            &r);
	ck_assert_int_eq(r.code, 415);
	rzt_response_free(&r);
}
END_TEST

/* Query and header integers are plain decimal: no sign but a minus where negatives are
 * allowed, no spaces, no exponent, no hex, within the range. */
START_TEST(test_parse_int_strict)
{
	int64_t v = 0;

	ck_assert(rz_parse_int("42", 0, 100, &v) && v == 42);
	ck_assert(rz_parse_int("0", 0, 100, &v) && v == 0);
	ck_assert(rz_parse_int("-5", -10, 10, &v) && v == -5);
	ck_assert(rz_parse_int("9223372036854775807", 0, INT64_MAX, &v) && v == INT64_MAX);
	ck_assert(!rz_parse_int("-5", 0, 10, &v));
	ck_assert(!rz_parse_int("+1", 0, 10, &v));
	ck_assert(!rz_parse_int(" 1", 0, 10, &v));
	ck_assert(!rz_parse_int("1 ", 0, 10, &v));
	ck_assert(!rz_parse_int("1e3", 0, 10000, &v));
	ck_assert(!rz_parse_int("0x10", 0, 100, &v));
	ck_assert(!rz_parse_int("-", -10, 10, &v));
	ck_assert(!rz_parse_int("", 0, 10, &v));
	ck_assert(!rz_parse_int("9223372036854775808", 0, INT64_MAX, &v));
	ck_assert(!rz_parse_int("101", 0, 100, &v));
}
END_TEST

START_TEST(test_status_scrubs_utf8)
{
	json_t *st = rz_status_new(400, NULL, "bad \xff\xC3(");
	json_t *d;

	ck_assert_ptr_nonnull(st);
	ck_assert_str_eq(jstr(st, "message"), "bad \xEF\xBF\xBD\xEF\xBF\xBD(");
	rz_status_set_target(st, "Tenant", "n\x80");
	rz_status_add_cause(st, "metadata.name", "FieldValueInvalid", "\xed\xa0\x80");
	d = json_object_get(st, "details");
	ck_assert_str_eq(jstr(d, "name"), "n\xEF\xBF\xBD");
	ck_assert_str_eq(jstr(json_array_get(json_object_get(d, "causes"), 0), "message"),
	                 "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	json_decref(st);
	ck_assert(rz_utf8_valid("\xF0\x9F\x98\x80", 4));
	ck_assert(!rz_utf8_valid("\xF4\x90\x80\x80", 4)); /* above U+10FFFF */
	ck_assert(!rz_utf8_valid("\xC0\xAF", 2));         /* overlong */
	ck_assert(!rz_utf8_valid("\xE2\x82", 2));         /* truncated */
}
END_TEST

/* ------------------------------------------------------------------ bounds */

static bool bounds_authn(void *ctx, const rz_req_t *req)
{
	const char *a = rz_req_header(req, "Authorization");

	(*(int *)ctx)++;
	return a != NULL && strcmp(a, "Bearer good") == 0;
}

/* role 1: open to anyone; else the credentials bounds_authn accepts. */
static bool bounds_guard(void *ctx, rz_req_t *req, const rz_route_t *route)
{
	const char *a = rz_req_header(req, "Authorization");

	if (route->role == 1 || (a != NULL && strcmp(a, "Bearer good") == 0)) {
		return true;
	}
	rz_reply_error(req, 401, NULL, "Unauthorized");
	return false;
}

static const rz_route_t bounds_routes[] = {
	{ .methods = RZ_M_GET | RZ_M_POST,
	  .pattern = "/things",
	  .fn = echo,
	  .ctx = "t",
	  .role = 2 },
	{ .methods = RZ_M_POST, .pattern = "/slow", .fn = park, .ctx = "slow", .role = 2 },
	{ .methods = RZ_M_POST, .pattern = "/public", .fn = echo, .ctx = "p", .role = 1 },
};

static int authn_calls;

static void bounds_setup(void)
{
	rz_http_opts_t opts = { .max_body = 4096,
		                .idle_timeout_s = 5,
		                .max_connections = 4,
		                .max_connections_per_address = 3,
		                .header_timeout_ms = 500,
		                .body_timeout_ms = 500,
		                .max_body_unauthenticated = 512,
		                .max_body_buffer = 6000,
		                .max_body_buffer_per_address = 5000 };
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_CRIT);
	base = event_base_new();
	ck_assert_int_eq(rz_http_new(&srv, base, &opts, &err), 0);
	ck_assert_int_eq(rz_http_add_routes(srv, bounds_routes,
	                                    sizeof(bounds_routes) / sizeof(bounds_routes[0]), &err),
	                 0);
	rz_http_set_guard(srv, bounds_guard, NULL);
	authn_calls = 0;
	rz_http_set_authn(srv, bounds_authn, &authn_calls);
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:0", &err), 0);
	port = rz_http_port(srv);
	parked = NULL;
}

/* A connection from source address src (any 127.0.0.0/8 address works on loopback). */
static rzt_conn_t *open_from(const char *src)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in from = { .sin_family = AF_INET };
	rzt_conn_t *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	inet_pton(AF_INET, src, &from.sin_addr);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(c->fd, 0);
	ck_assert_int_eq(bind(c->fd, (struct sockaddr *)&from, sizeof(from)), 0);
	ck_assert_int_eq(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(fcntl(c->fd, F_SETFL, O_NONBLOCK), 0);
	return c;
}

/* Send data one byte every 100 ms until the server answers or seconds pass; true when it
 * answered (into r) while bytes were still coming. */
static bool trickle(rzt_conn_t *c, const char *data, double seconds, rzt_response_t *r)
{
	double until = rzt_now() + seconds;

	for (size_t i = 0; data[i] != '\0' && rzt_now() < until; i++) {
		double next = rzt_now() + 0.1;
		char buf[1];
		rzt_send(base, c->fd, data + i, 1);
		while (rzt_now() < next) {
			rzt_spin(base);
			if (recv(c->fd, buf, 1, MSG_PEEK) == 1) {
				return rzt_recv(base, c, r, false);
			}
		}
	}
	return false;
}

START_TEST(test_header_deadline_is_absolute)
{
	rzt_conn_t *c = open_from("127.0.0.1");
	rzt_response_t r;
	json_t *j;

	/* a byte every 100 ms used to reset the timeout: the head never ended, nor the
	 * connection; now the head has 500 ms from its first byte */
	ck_assert(trickle(
	    c, "GET /things HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", 3, &r));
	ck_assert_int_eq(r.code, 408);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "reason"), "Timeout");
	ck_assert_str_eq(jstr(j, "message"), "the request headers did not arrive within 500 ms");
	json_decref(j);
	rzt_response_free(&r);
	ck_assert(rzt_closed(base, c->fd));
	rzt_close(c);
}
END_TEST

START_TEST(test_body_deadline_is_absolute)
{
	rzt_conn_t *c = open_from("127.0.0.1");
	const char *head = "POST /things HTTP/1.1\r\nContent-Length: 100\r\n\r\n";
	rzt_response_t r;
	json_t *j;

	rzt_send(base, c->fd, head, strlen(head));
	ck_assert(trickle(
	    c, "0123456789012345678901234567890123456789012345678901234567890123456789", 3, &r));
	ck_assert_int_eq(r.code, 408);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "message"), "the request body did not arrive within 500 ms");
	json_decref(j);
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

START_TEST(test_idle_connection_keeps_its_idle_timeout)
{
	rzt_conn_t *c = open_from("127.0.0.1");
	const char *get = "GET /things HTTP/1.1\r\nAuthorization: Bearer good\r\n\r\n";
	double until = rzt_now() + 1.0;
	rzt_response_t r;

	/* no byte yet: the header deadline has not started */
	while (rzt_now() < until) {
		rzt_spin(base);
	}
	rzt_send(base, c->fd, get, strlen(get));
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	/* and after a reply, again */
	until = rzt_now() + 1.0;
	while (rzt_now() < until) {
		rzt_spin(base);
	}
	rzt_send(base, c->fd, get, strlen(get));
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rzt_close(c);
}
END_TEST

static void expect_refused(rzt_conn_t *c, const char *limit)
{
	rzt_response_t r;
	char want[128];
	json_t *j;

	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 503);
	j = body_json(&r);
	snprintf(want, sizeof(want), "too many connections (%s)", limit);
	ck_assert_str_eq(jstr(j, "message"), want);
	ck_assert_str_eq(jstr(j, "reason"), "ServiceUnavailable");
	json_decref(j);
	rzt_response_free(&r);
	ck_assert(rzt_closed(base, c->fd));
}

START_TEST(test_connection_caps)
{
	rzt_conn_t *a[3], *b, *over;
	rzt_response_t r;
	const char *get = "GET /things HTTP/1.1\r\nAuthorization: Bearer good\r\n\r\n";

	for (int i = 0; i < 3; i++) {
		a[i] = open_from("127.0.0.1");
	}
	over = open_from("127.0.0.1"); /* a 4th from one address: max 3 */
	expect_refused(over, "server.max_connections_per_address");
	rzt_close(over);
	b = open_from("127.0.0.2"); /* the 4th in all is fine from elsewhere */
	over = open_from("127.0.0.3");
	expect_refused(over, "server.max_connections");
	rzt_close(over);
	/* those already open are served */
	rzt_send(base, a[0]->fd, get, strlen(get));
	ck_assert(rzt_recv(base, a[0], &r, false));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rzt_send(base, b->fd, get, strlen(get));
	ck_assert(rzt_recv(base, b, &r, false));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	/* a closed connection makes room */
	rzt_close(a[1]);
	rzt_close(b);
	b = open_from("127.0.0.1");
	rzt_send(base, b->fd, get, strlen(get));
	ck_assert(rzt_recv(base, b, &r, false));
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rzt_close(b);
	rzt_close(a[0]);
	rzt_close(a[2]);
}
END_TEST

START_TEST(test_unauthenticated_body_refused_unread)
{
	rzt_conn_t *c = open_from("127.0.0.1");
	const char *big = "POST /things HTTP/1.1\r\nContent-Length: 4000\r\n\r\n";
	char raw[8192], body[4001];
	rzt_response_t r;
	json_t *j;

	/* no body byte is sent: the 401 comes after the headers */
	rzt_send(base, c->fd, big, strlen(big));
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 401);
	rzt_response_free(&r);
	ck_assert(rzt_closed(base, c->fd));
	rzt_close(c);
	ck_assert_int_eq(authn_calls, 1);
	/* with credentials the same body is read */
	memset(body, 'x', 4000);
	body[4000] = '\0';
	snprintf(raw, sizeof(raw),
	         "POST /things HTTP/1.1\r\nAuthorization: Bearer good\r\nContent-Length: 4000\r\n"
	         "\r\n%s",
	         body);
	rzt_request(base, port, raw, &r);
	ck_assert_int_eq(r.code, 200);
	j = body_json(&r);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "bodyLen")), 4000);
	json_decref(j);
	rzt_response_free(&r);
	/* a small body is read before the guard decides, as always: no hook call */
	authn_calls = 0;
	rzt_request(base, port, "POST /things HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", &r);
	ck_assert_int_eq(r.code, 401);
	rzt_response_free(&r);
	ck_assert_int_eq(authn_calls, 0);
	/* an open route with a large anonymous body: 413, the body unread */
	rzt_request(base, port, "POST /public HTTP/1.1\r\nContent-Length: 4000\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 413);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "message"), "request body exceeds the limit of 512 bytes for a "
	                                     "request without credentials");
	json_decref(j);
	rzt_response_free(&r);
}
END_TEST

START_TEST(test_unauthenticated_chunked_body)
{
	char chunk[300];
	rzt_conn_t *c = open_from("127.0.0.1");
	rzt_response_t r;
	const char *head = "POST /things HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";

	memset(chunk, 'a', sizeof(chunk));
	rzt_send(base, c->fd, head, strlen(head));
	for (int i = 0; i < 2; i++) { /* 600 bytes: past 512 */
		rzt_send(base, c->fd, "12c\r\n", 5);
		rzt_send(base, c->fd, chunk, sizeof(chunk));
		rzt_send(base, c->fd, "\r\n", 2);
	}
	ck_assert(rzt_recv(base, c, &r, false));
	ck_assert_int_eq(r.code, 401);
	rzt_response_free(&r);
	ck_assert(rzt_closed(base, c->fd));
	rzt_close(c);
}
END_TEST

/* POST path with a body of n bytes and credentials, on a new connection from src. */
static rzt_conn_t *post_from(const char *src, const char *path, size_t n)
{
	rzt_conn_t *c = open_from(src);
	char head[256];
	char *body = malloc(n);

	ck_assert_ptr_nonnull(body);
	memset(body, 'y', n);
	snprintf(head, sizeof(head),
	         "POST %s HTTP/1.1\r\nAuthorization: Bearer good\r\nContent-Length: %zu\r\n\r\n",
	         path, n);
	rzt_send(base, c->fd, head, strlen(head));
	rzt_send(base, c->fd, body, n);
	free(body);
	return c;
}

static int answer(rzt_conn_t *c, char *retry, size_t size)
{
	rzt_response_t r;
	int code;

	ck_assert(rzt_recv(base, c, &r, false));
	code = r.code;
	if (retry != NULL && !rzt_header(&r, "Retry-After", retry, size)) {
		retry[0] = '\0';
	}
	rzt_response_free(&r);
	rzt_close(c);
	return code;
}

START_TEST(test_body_buffer_budgets)
{
	rzt_conn_t *held = post_from("127.0.0.1", "/slow", 3000);
	char retry[16];

	while (parked == NULL) {
		rzt_spin(base);
	}
	/* 3,001 bytes are held for 127.0.0.1 (5,000 allowed), 6,000 in all */
	ck_assert_int_eq(answer(post_from("127.0.0.1", "/things", 2000), retry, sizeof(retry)),
	                 503);
	ck_assert_str_eq(retry, "1");
	ck_assert_int_eq(answer(post_from("127.0.0.2", "/things", 2500), NULL, 0), 200);
	ck_assert_int_eq(answer(post_from("127.0.0.2", "/things", 3000), NULL, 0), 503);
	/* the held body goes with its reply */
	rz_reply(parked, 200, "text/plain", "ok", 2);
	ck_assert_int_eq(answer(held, NULL, 0), 200);
	ck_assert_int_eq(answer(post_from("127.0.0.1", "/things", 4000), NULL, 0), 200);
	ck_assert_int_eq(answer(post_from("127.0.0.2", "/things", 4000), NULL, 0), 200);
}
END_TEST

START_TEST(test_tls_classify)
{
	const unsigned char hello[] = { 0x16, 0x03, 0x01, 0x02, 0x00 };
	const unsigned char v2[] = { 0x80, 0x2e, 0x01 };
	size_t len;
	const char *r = rz_tls_plain_refusal(&len);

	ck_assert_int_eq(rz_tls_classify(hello, 0), RZ_TLS_HELLO_MORE);
	ck_assert_int_eq(rz_tls_classify(hello, 1), RZ_TLS_HELLO_TLS);
	ck_assert_int_eq(rz_tls_classify(hello, sizeof(hello)), RZ_TLS_HELLO_TLS);
	ck_assert_int_eq(rz_tls_classify((const unsigned char *)"GET / HTTP/1.1", 14),
	                 RZ_TLS_HELLO_HTTP);
	ck_assert_int_eq(rz_tls_classify((const unsigned char *)"LOCK", 4), RZ_TLS_HELLO_HTTP);
	ck_assert_int_eq(rz_tls_classify((const unsigned char *)"P", 1), RZ_TLS_HELLO_HTTP);
	ck_assert_int_eq(rz_tls_classify(v2, sizeof(v2)), RZ_TLS_HELLO_OTHER);
	ck_assert_int_eq(rz_tls_classify((const unsigned char *)"\r\n", 2), RZ_TLS_HELLO_OTHER);
	ck_assert_int_eq(rz_tls_classify((const unsigned char *)"get", 3), RZ_TLS_HELLO_OTHER);
	/* a complete response: its Content-Length is the body's */
	ck_assert_ptr_nonnull(strstr(r, "\r\nContent-Length: 48\r\n\r\n"));
	ck_assert_str_eq(strstr(r, "\r\n\r\n") + 4,
	                 "Client sent an HTTP request to an HTTPS server.\n");
	ck_assert_uint_eq(strlen(strstr(r, "\r\n\r\n") + 4), 48);
	ck_assert_uint_eq(len, strlen(r));
}
END_TEST

static char *tls_dir, tls_cert[4096], tls_key[4096];

/* A private dir for a certificate and its key (rzt_tmpdir: under TMPDIR like every test's). */
static void tls_files(void)
{
	tls_dir = rzt_tmpdir();
	snprintf(tls_cert, sizeof(tls_cert), "%s/cert.pem", tls_dir);
	snprintf(tls_key, sizeof(tls_key), "%s/key.pem", tls_dir);
}

static void tls_files_remove(void)
{
	rzt_rmrf(tls_dir);
	free(tls_dir);
	tls_dir = NULL;
}

START_TEST(test_tls_self_signed_files)
{
	const char *hosts[] = { "rezus.example", "10.1.2.3", "0.0.0.0", NULL };
	rz_err_t err = { 0 };
	rz_tls_t *tls = NULL;
	bool created = false;
	struct stat st;
	char fp[96];

	tls_files();
	ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, hosts, &created, &err), 0);
	ck_assert(created);
	ck_assert_int_eq(stat(tls_cert, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(stat(tls_key, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	/* present: kept as they are */
	ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, hosts, &created, &err), 0);
	ck_assert(!created);
	/* a name the certificate lacks (server.tls.self_signed_hosts grew): a new pair that
	 * names it and the others, kept from then on, for a subset too */
	{
		const char *more[] = { "rezus.example", "10.1.2.3", "10.5.0.2", "rezus.svc", NULL };
		ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, more, &created, &err), 0);
		ck_assert(created);
		ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, more, &created, &err), 0);
		ck_assert(!created);
		ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, hosts, &created, &err), 0);
		ck_assert(!created);
	}
	ck_assert_int_eq(rz_tls_new(&tls, &(rz_tls_opts_t){ tls_cert, tls_key, NULL }, &err), 0);
	ck_assert_uint_eq(strlen(rz_tls_fingerprint(tls)), 95);
	snprintf(fp, sizeof(fp), "%s", rz_tls_fingerprint(tls));
	/* a bad certificate at reload: refused, the one in use stays */
	FILE *f = fopen(tls_cert, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a certificate\n", f);
	fclose(f);
	ck_assert_int_ne(rz_tls_reload(tls, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "loading the certificate"));
	ck_assert_str_eq(rz_tls_fingerprint(tls), fp);
	/* a new pair: a new fingerprint */
	unlink(tls_cert);
	ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, NULL, &created, &err), 0);
	ck_assert(created);
	ck_assert_int_eq(rz_tls_reload(tls, &err), 0);
	ck_assert_str_ne(rz_tls_fingerprint(tls), fp);
	rz_tls_free(tls);
	/* a key that is not the certificate's: refused */
	char cert2[4200], key2[4200];
	snprintf(cert2, sizeof(cert2), "%s/cert2.pem", tls_dir);
	snprintf(key2, sizeof(key2), "%s/key2.pem", tls_dir);
	ck_assert_int_eq(rz_tls_self_signed(cert2, key2, NULL, &created, &err), 0);
	tls = NULL;
	ck_assert_int_ne(rz_tls_new(&tls, &(rz_tls_opts_t){ tls_cert, key2, NULL }, &err), 0);
	ck_assert_ptr_null(tls);
	ck_assert_ptr_nonnull(strstr(err.msg, "private key"));
	unlink(cert2);
	unlink(key2);
	tls_files_remove();
}
END_TEST

START_TEST(test_tls_port_refuses_plain_http)
{
	rz_err_t err = { 0 };
	rz_tls_t *tls = NULL;
	bool created = false;
	rzt_response_t r;

	tls_files();
	ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, NULL, &created, &err), 0);
	ck_assert_int_eq(rz_tls_new(&tls, &(rz_tls_opts_t){ tls_cert, tls_key, NULL }, &err), 0);
	rz_http_set_tls(srv, tls);
	rzt_request(base, port, "GET /things HTTP/1.1\r\nHost: x\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 400);
	ck_assert_str_eq(r.body, "Client sent an HTTP request to an HTTPS server.\n");
	ck_assert_ptr_nonnull(strstr(r.head, "Connection: close"));
	rzt_response_free(&r);
	/* the plain port it was before serves JSON; off again, it does once more */
	rz_http_set_tls(srv, NULL);
	rzt_request(base, port, "GET /things HTTP/1.1\r\nHost: x\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rz_tls_free(tls);
	tls_files_remove();
}
END_TEST

/* Over a connection cap on a TLS port, the connection is closed without an answer: a 503 in
 * clear text would be garbage to a TLS client. */
START_TEST(test_tls_port_over_cap_closes)
{
	rz_err_t err = { 0 };
	rz_tls_t *tls = NULL;
	bool created = false;
	rzt_conn_t *a[3], *over;
	ssize_t n = -1;
	char c;

	tls_files();
	ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, NULL, &created, &err), 0);
	ck_assert_int_eq(rz_tls_new(&tls, &(rz_tls_opts_t){ tls_cert, tls_key, NULL }, &err), 0);
	rz_http_set_tls(srv, tls);
	for (int i = 0; i < 3; i++) {
		a[i] = open_from("127.0.0.1");
	}
	over = open_from("127.0.0.1"); /* a 4th from one address: max 3 */
	for (int i = 0; i < 5000 && (n = recv(over->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT)) < 0; i++) {
		rzt_spin(base);
		usleep(1000);
	}
	ck_assert_int_eq(n, 0); /* closed, and not a byte was sent before */
	rzt_close(over);
	for (int i = 0; i < 3; i++) {
		rzt_close(a[i]);
	}
	rz_http_set_tls(srv, NULL);
	rz_tls_free(tls);
	tls_files_remove();
}
END_TEST

/* rz_http_fetch blocks: the server's loop turns in a thread of its own meanwhile. */
static volatile sig_atomic_t serving;

static void *serve(void *arg)
{
	(void)arg;
	while (serving) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(500);
	}
	return NULL;
}

static int fetch(const char *method, const char *url, const char *body, size_t max,
                 rz_tls_client_t *tls, rz_fetched_t *out, rz_err_t *err)
{
	rz_fetch_t f = { .method = method,
		         .url = url,
		         .bearer = "rzt_test-token",
		         .content_type = body != NULL ? "application/json" : NULL,
		         .body = body,
		         .len = body != NULL ? strlen(body) : 0,
		         .max = max,
		         .timeout_s = 2,
		         .tls = tls };

	memset(err, 0, sizeof(*err));
	return rz_http_fetch(&f, out, err);
}

START_TEST(test_fetch)
{
	rz_err_t err = { 0 };
	rz_tls_t *tls = NULL;
	rz_tls_client_t *trusting = NULL, *system = NULL;
	rz_fetched_t got;
	bool created = false;
	pthread_t th;
	char url[256];
	json_t *j;

	tls_files();
	ck_assert_int_eq(rz_tls_self_signed(tls_cert, tls_key, NULL, &created, &err), 0);
	ck_assert_int_eq(rz_tls_new(&tls, &(rz_tls_opts_t){ tls_cert, tls_key, NULL }, &err), 0);
	ck_assert_int_eq(rz_tls_client_new(&trusting, tls_cert, &err), 0);
	ck_assert_int_eq(rz_tls_client_new(&system, NULL, &err), 0);
	/* plain HTTP: the request's method, path, query and body arrive, the answer comes back */
	serving = 1;
	ck_assert_int_eq(pthread_create(&th, NULL, serve, NULL), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/things?q=1", port);
	ck_assert_int_eq(fetch("POST", url, "{\"a\":1}", 4096, NULL, &got, &err), 0);
	ck_assert_int_eq(got.code, 200);
	j = json_loads(got.body, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(jstr(j, "method"), "POST");
	ck_assert_str_eq(jstr(j, "q"), "1");
	ck_assert_str_eq(jstr(j, "body"), "{\"a\":1}");
	json_decref(j);
	free(got.body);
	/* a status that is not 200 is an answer too */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/nope", port);
	ck_assert_int_eq(fetch("GET", url, NULL, 4096, NULL, &got, &err), 0);
	ck_assert_int_eq(got.code, 404);
	free(got.body);
	/* an answer longer than max is refused, not cut and kept */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/things", port);
	ck_assert_int_lt(fetch("GET", url, NULL, 16, NULL, &got, &err), 0);
	ck_assert(got.too_long);
	ck_assert_int_eq(got.code, 0);
	ck_assert_ptr_null(got.body);
	ck_assert_ptr_nonnull(strstr(err.msg, "too long"));
	serving = 0;
	pthread_join(th, NULL);

	/* over TLS: the certificate checked against the CA file given and for the host */
	rz_http_set_tls(srv, tls);
	serving = 1;
	ck_assert_int_eq(pthread_create(&th, NULL, serve, NULL), 0);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/things", port);
	ck_assert_int_eq(fetch("POST", url, "{}", 4096, trusting, &got, &err), 0);
	ck_assert_int_eq(got.code, 200);
	free(got.body);
	snprintf(url, sizeof(url), "https://localhost:%d/things", port);
	ck_assert_int_eq(fetch("GET", url, NULL, 4096, trusting, &got, &err), 0);
	ck_assert_int_eq(got.code, 200);
	free(got.body);
	/* a client that does not trust it gets no answer, and says why */
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/things", port);
	ck_assert_int_lt(fetch("GET", url, NULL, 4096, system, &got, &err), 0);
	ck_assert_int_eq(got.code, 0);
	ck_assert_msg(strstr(err.msg, "the TLS handshake failed: the server's certificate: ") !=
	                  NULL,
	              "%s", err.msg);
	/* nor does a client speaking plain HTTP to it: the server's refusal is an answer */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/things", port);
	ck_assert_int_eq(fetch("GET", url, NULL, 4096, NULL, &got, &err), 0);
	ck_assert_int_eq(got.code, 400);
	free(got.body);
	serving = 0;
	pthread_join(th, NULL);
	rz_http_set_tls(srv, NULL);

	/* bad requests are refused before anything is sent */
	ck_assert_int_eq(fetch("GET", "ftp://127.0.0.1/x", NULL, 16, NULL, &got, &err), -EINVAL);
	ck_assert_int_eq(fetch("GET", "https://127.0.0.1:1/x", NULL, 16, NULL, &got, &err),
	                 -EINVAL);
	ck_assert_int_eq(fetch("TRACE", "http://127.0.0.1:1/x", NULL, 16, NULL, &got, &err),
	                 -EINVAL);
	/* nobody there: no answer, at once */
	ck_assert_int_lt(fetch("GET", "http://127.0.0.1:1/x", NULL, 16, NULL, &got, &err), 0);
	ck_assert_int_eq(got.code, 0);
	/* a server that never answers: no answer after timeout_s */
	{
		struct sockaddr_in sa = { .sin_family = AF_INET,
			                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t sl = sizeof(sa);
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		ck_assert_int_eq(listen(fd, 4), 0);
		ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", ntohs(sa.sin_port));
		ck_assert_int_eq(fetch("GET", url, NULL, 16, NULL, &got, &err), -ETIMEDOUT);
		ck_assert_ptr_nonnull(strstr(err.msg, "no answer in time"));
		close(fd);
	}
	rz_tls_client_free(trusting);
	rz_tls_client_free(system);
	rz_tls_free(tls);
	tls_files_remove();
}
END_TEST

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* as the daemon and the runner do */
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("server");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_route_and_params);
	tcase_add_test(tc, test_table_ctx);
	tcase_add_test(tc, test_literal_beats_param);
	tcase_add_test(tc, test_rest_param_and_root);
	tcase_add_test(tc, test_not_found_is_status);
	tcase_add_test(tc, test_fallback);
	tcase_add_test(tc, test_method_not_allowed);
	tcase_add_test(tc, test_lock_unlock_methods);
	tcase_add_test(tc, test_body_limit_content_length);
	tcase_add_test(tc, test_body_limit_chunked);
	tcase_add_test(tc, test_body_at_limit_and_chunked_ok);
	tcase_add_test(tc, test_request_id);
	tcase_add_test(tc, test_keep_alive_pipelined);
	tcase_add_test(tc, test_head_has_no_body);
	tcase_add_test(tc, test_accepted_socket_has_nodelay);
	tcase_add_test(tc, test_streamed_finite_reply);
	tcase_add_test(tc, test_streamed_reply_abort);
	tcase_add_test(tc, test_malformed_request);
	tcase_add_test(tc, test_query_and_pretty);
	tcase_add_test(tc, test_status_with_causes);
	tcase_add_test(tc, test_async_reply);
	tcase_add_test(tc, test_client_gone_before_reply);
	tcase_add_test(tc, test_reply_after_server_freed);
	tcase_add_test(tc, test_shutdown_lets_in_flight_finish);
	tcase_add_test(tc, test_access_log_line);
	tcase_add_test(tc, test_bad_patterns_and_addresses);
	tcase_add_test(tc, test_status_reasons);
	tcase_add_test(tc, test_strict_request_line);
	tcase_add_test(tc, test_request_line_and_header_limits);
	tcase_add_test(tc, test_invalid_utf8_path);
	tcase_add_test(tc, test_invalid_utf8_header);
	tcase_add_test(tc, test_status_scrubs_utf8);
	tcase_add_test(tc, test_parse_int_strict);
	tcase_add_test(tc, test_tls_classify);
	tcase_add_test(tc, test_tls_self_signed_files);
	tcase_add_test(tc, test_tls_port_refuses_plain_http);
	tcase_add_test(tc, test_fetch);
	suite_add_tcase(s, tc);
	tc = tcase_create("bounds");
	tcase_add_checked_fixture(tc, bounds_setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_header_deadline_is_absolute);
	tcase_add_test(tc, test_body_deadline_is_absolute);
	tcase_add_test(tc, test_idle_connection_keeps_its_idle_timeout);
	tcase_add_test(tc, test_connection_caps);
	tcase_add_test(tc, test_tls_port_over_cap_closes);
	tcase_add_test(tc, test_unauthenticated_body_refused_unread);
	tcase_add_test(tc, test_unauthenticated_chunked_body);
	tcase_add_test(tc, test_body_buffer_budgets);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
