/* tests/unit/check_http.c - the HTTP server, in process on 127.0.0.1 port 0. */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/http/http.h"
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

static const rz_route_t routes[] = {
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
	{ .methods = RZ_M_POST, .pattern = "/invalid", .fn = invalid, .ctx = "invalid" },
	{ .methods = RZ_M_GET, .pattern = "/", .fn = echo, .ctx = "root" },
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
	            "GET /api/v1/tenants/acme/nodegroups/work%2Fers HTTP/1.1\r\nHost: x\r\n\r\n",
	            &r);
	ck_assert_int_eq(r.code, 200);
	j = body_json(&r);
	ck_assert_str_eq(jstr(j, "route"), "nodegroup");
	ck_assert_str_eq(jstr(j, "tenant"), "acme");
	ck_assert_str_eq(jstr(j, "name"), "work/ers");
	json_decref(j);
	rzt_response_free(&r);
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

int main(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("server");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_route_and_params);
	tcase_add_test(tc, test_literal_beats_param);
	tcase_add_test(tc, test_rest_param_and_root);
	tcase_add_test(tc, test_not_found_is_status);
	tcase_add_test(tc, test_method_not_allowed);
	tcase_add_test(tc, test_lock_unlock_methods);
	tcase_add_test(tc, test_body_limit_content_length);
	tcase_add_test(tc, test_body_limit_chunked);
	tcase_add_test(tc, test_body_at_limit_and_chunked_ok);
	tcase_add_test(tc, test_request_id);
	tcase_add_test(tc, test_keep_alive_pipelined);
	tcase_add_test(tc, test_head_has_no_body);
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
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
