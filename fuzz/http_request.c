/*
 * fuzz/http_request.c - the HTTP/1.1 request parser and router (core/http/parse.c, route.c): any
 * bytes a client may send, on one connection, pipelined or not.
 *
 * Invariants: every reply starts with an HTTP/1.1 status line; the parser never answers
 * 500 (bad input is the client's fault, 4xx); handlers see an absolute path, non-empty
 * parameters without '/', a NUL-terminated body of the announced length.
 */
#include <config.h>

#include "fuzz/serve.h"
#include "core/base/log.h"

static struct event_base *base;
static rz_http_t *http;
static char reply[1 << 16];

static void check_req(rz_req_t *req)
{
	size_t len = 0;
	const char *body = rz_req_body(req, &len);
	const char *path = rz_req_path(req);

	FZ_ASSERT(path != NULL && path[0] == '/', "path '%s'", path ? path : "(null)");
	FZ_ASSERT(body != NULL && body[len] == '\0', "body not NUL-terminated");
	FZ_ASSERT(rz_req_method(req) != NULL && rz_req_id(req) != NULL, "no method or id");
	(void)rz_req_header(req, "Content-Type");
	(void)rz_req_query(req, "labelSelector");
	(void)rz_req_query(req, "a");
}

static void h_hello(rz_req_t *req, void *ctx)
{
	check_req(req);
	rz_reply(req, 200, "text/plain", "hi\n", 3);
}

static void h_param(rz_req_t *req, void *ctx)
{
	const char *name = rz_req_param(req, "name");

	check_req(req);
	FZ_ASSERT(name != NULL && name[0] != '\0' && strchr(name, '/') == NULL, "param '%s'",
	          name ? name : "(null)");
	rz_reply_json(req, 200, json_pack("{s:s}", "name", name));
}

static void h_rest(rz_req_t *req, void *ctx)
{
	const char *rest = rz_req_param(req, "rest");

	check_req(req);
	FZ_ASSERT(rest != NULL, "no rest");
	rz_reply_error(req, 404, NULL, "nothing at %s", rest);
}

static const rz_route_t routes[] = {
	{ .methods = RZ_M_GET, .pattern = "/hello", .fn = h_hello, .role = 1 },
	{ .methods = RZ_M_POST | RZ_M_PUT | RZ_M_PATCH | RZ_M_DELETE | RZ_M_LOCK | RZ_M_UNLOCK,
	  .pattern = "/api/v1/things/{name}",
	  .fn = h_param,
	  .role = 1 },
	{ .methods = RZ_M_GET, .pattern = "/files/{rest...}", .fn = h_rest, .role = 1 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = fz_exchange(base, http, data, size, reply, sizeof(reply));
	int code = fz_status(reply, n);

	FZ_ASSERT(code != 500, "the parser answered 500 to:\n%.*s", (int)(size < 512 ? size : 512),
	          (const char *)data);
	return 0;
}

static void cleanup(void)
{
	rz_http_free(http);
	event_base_free(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	rz_http_opts_t opts = { .max_body = 65536, .max_header = 16384, .idle_timeout_s = 5 };
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_EMERG);
	base = event_base_new();
	FZ_ASSERT(base != NULL, "event_base_new");
	FZ_ASSERT(rz_http_new(&http, base, &opts, &err) == 0, "http: %s", err.msg);
	FZ_ASSERT(rz_http_add_routes(http, routes, sizeof(routes) / sizeof(routes[0]), &err) == 0,
	          "routes: %s", err.msg);
	atexit(cleanup);
	return 0;
}
