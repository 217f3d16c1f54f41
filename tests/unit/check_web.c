/* tests/unit/check_web.c - the WebUI's parts: CSRF tokens, cookie attributes, the ingress
 * prefix, form decoding, the session cookie's reading, in-process requests, and sizes as
 * people read them, and words and tones as badges show them. */
#include <config.h>

#include <check.h>
#include <string.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/auth/access.h"
#include "core/http/http.h"
#include "core/web/page.h"
#include "core/web/ui.h"
#include "testutil.h"

static const unsigned char key_a[RZ_DERIVED_KEY_LEN] = "0123456789abcdef0123456789abcdef";
static const unsigned char key_b[RZ_DERIVED_KEY_LEN] = "fedcba9876543210fedcba9876543210";

START_TEST(csrf_token)
{
	char t1[RZ_CSRF_LEN + 1], t2[RZ_CSRF_LEN + 1], t3[RZ_CSRF_LEN + 1];

	rz_ui_csrf(key_a, "jti-1", t1);
	rz_ui_csrf(key_a, "jti-1", t2);
	ck_assert_uint_eq(strlen(t1), RZ_CSRF_LEN);
	ck_assert_uint_eq(strspn(t1, "0123456789abcdef"), RZ_CSRF_LEN);
	ck_assert_str_eq(t1, t2); /* stable for a session */
	rz_ui_csrf(key_a, "jti-2", t3);
	ck_assert_str_ne(t1, t3); /* another session, another token */
	rz_ui_csrf(key_b, "jti-1", t3);
	ck_assert_str_ne(t1, t3); /* another daemon key, another token */
	ck_assert(rz_ui_csrf_ok(key_a, "jti-1", t1));
	ck_assert(!rz_ui_csrf_ok(key_a, "jti-2", t1));
	ck_assert(!rz_ui_csrf_ok(key_b, "jti-1", t1));
	ck_assert(!rz_ui_csrf_ok(key_a, "jti-1", NULL));
	ck_assert(!rz_ui_csrf_ok(key_a, "jti-1", ""));
	t2[RZ_CSRF_LEN - 1] = '\0';
	ck_assert(!rz_ui_csrf_ok(key_a, "jti-1", t2)); /* a prefix is not the token */
	rz_ui_csrf(key_a, "jti-1", t2);
	t2[0] = t2[0] == 'a' ? 'b' : 'a';
	ck_assert(!rz_ui_csrf_ok(key_a, "jti-1", t2));
	ck_assert(!rz_ui_csrf_ok(key_a, "", t1)); /* no session, no token */
}
END_TEST

START_TEST(cookie_attributes)
{
	char buf[512];

	ck_assert_int_eq(
	    rz_ui_cookie(buf, sizeof(buf), RZ_SESSION_COOKIE, "tok", "/", 3600, false, false), 0);
	ck_assert_str_eq(buf, "rezus_session=tok; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax");
	ck_assert_int_eq(rz_ui_cookie(buf, sizeof(buf), RZ_SESSION_COOKIE, "tok",
	                              "/api/hassio_ingress/x", 60, true, false),
	                 0);
	ck_assert_str_eq(buf,
	                 "rezus_session=tok; Path=/api/hassio_ingress/x; Max-Age=60; HttpOnly; "
	                 "SameSite=Lax; Secure");
	ck_assert_int_eq(rz_ui_cookie(buf, sizeof(buf), RZ_SESSION_COOKIE, "", "", 0, false, false),
	                 0);
	ck_assert_str_eq(buf, "rezus_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax");
	ck_assert_int_eq(rz_ui_cookie(buf, sizeof(buf), RZ_LOGIN_COOKIE, "s", "/", -5, false, true),
	                 0);
	ck_assert_str_eq(buf, "rezus_login=s; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
	ck_assert_int_eq(rz_ui_cookie(buf, 20, RZ_SESSION_COOKIE, "tok", "/", 1, false, false),
	                 -ENOSPC);
}
END_TEST

START_TEST(cookie_reading)
{
	char v[16];

	ck_assert(rz_cookie_get("a=1; rezus_session=abc; b=2", "rezus_session", v, sizeof(v)));
	ck_assert_str_eq(v, "abc");
	ck_assert(rz_cookie_get("rezus_session=xyz", "rezus_session", v, sizeof(v)));
	ck_assert_str_eq(v, "xyz");
	ck_assert(!rz_cookie_get("xrezus_session=abc", "rezus_session", v, sizeof(v)));
	ck_assert(!rz_cookie_get("rezus_sessionx=abc", "rezus_session", v, sizeof(v)));
	ck_assert(!rz_cookie_get("rezus_session=", "rezus_session", v, sizeof(v)));
	ck_assert(!rz_cookie_get(NULL, "rezus_session", v, sizeof(v)));
	ck_assert(!rz_cookie_get("rezus_session=0123456789abcdefX", "rezus_session", v, sizeof(v)));
}
END_TEST

START_TEST(ingress_prefix)
{
	char p[RZ_UI_PREFIX_MAX], url[600], big[RZ_UI_PREFIX_MAX + 8];

	ck_assert(rz_ui_ingress_prefix("/api/hassio_ingress/Ab-9_x.~", p));
	ck_assert_str_eq(p, "/api/hassio_ingress/Ab-9_x.~");
	ck_assert_int_eq(rz_ui_url(url, sizeof(url), p, "/tenants/acme"), 0);
	ck_assert_str_eq(url, "/api/hassio_ingress/Ab-9_x.~/tenants/acme");
	ck_assert_int_eq(rz_ui_url(url, sizeof(url), "", "/tenants"), 0);
	ck_assert_str_eq(url, "/tenants");
	ck_assert_int_eq(rz_ui_url(url, 8, p, "/x"), -ENOSPC);
	/* refused: not a path, a scheme or host, traversal, quotes, tags, trailing slash */
	static const char *const bad[] = {
		"",        "/",      "api/x", "//evil.example/x", "https://evil.example",
		"/a/../b", "/a/./b", "/a/",   "/a\"onload=x",     "/a<script>",
		"/a b",    "/a?x=1", "/a#f",  "/a%2e%2e",         NULL
	};
	for (int i = 0; bad[i] != NULL; i++) {
		strcpy(p, "junk");
		ck_assert_msg(!rz_ui_ingress_prefix(bad[i], p), "accepted '%s'", bad[i]);
		ck_assert_str_eq(p, "");
	}
	ck_assert(!rz_ui_ingress_prefix(NULL, p));
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	ck_assert(!rz_ui_ingress_prefix(big, p));
}
END_TEST

START_TEST(form_decoding)
{
	const char *enc = "name=acme&count=3&msg=a+b%26c%3D&empty=&flag";
	json_t *f = rz_ui_form(enc, strlen(enc));

	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(json_string_value(json_object_get(f, "name")), "acme");
	ck_assert_str_eq(json_string_value(json_object_get(f, "count")), "3");
	ck_assert_str_eq(json_string_value(json_object_get(f, "msg")), "a b&c=");
	ck_assert_str_eq(json_string_value(json_object_get(f, "empty")), "");
	ck_assert_str_eq(json_string_value(json_object_get(f, "flag")), "");
	json_decref(f);
	f = rz_ui_form("", 0);
	ck_assert_uint_eq(json_object_size(f), 0);
	json_decref(f);
	ck_assert_ptr_null(rz_ui_form("a=%zz", 5));    /* bad escape */
	ck_assert_ptr_null(rz_ui_form("a=%4", 4));     /* cut escape */
	ck_assert_ptr_null(rz_ui_form("a=%00", 5));    /* NUL */
	ck_assert_ptr_null(rz_ui_form("a=%ff%fe", 8)); /* not UTF-8 */
	{
		char many[RZ_UI_FORM_MAX * 4 + 8] = "";
		for (int i = 0; i <= RZ_UI_FORM_MAX; i++) {
			strcat(many, "a=1&");
		}
		ck_assert_ptr_null(rz_ui_form(many, strlen(many)));
	}
}
END_TEST

/* ---- in-process requests ---- */

static void h_echo(rz_req_t *req, void *ctx)
{
	size_t len;
	const char *body = rz_req_body(req, &len);
	json_t *o = json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:s}", "method", rz_req_method(req),
	                      "path", rz_req_path(req), "auth", rz_req_header(req, "Authorization"),
	                      "q", rz_req_query(req, "q"), "body", body, "peer", rz_req_peer(req));

	(void)ctx;
	rz_req_add_header(req, "X-Test", "yes");
	rz_reply_json(req, 201, o);
}

static rz_req_t *held; /* a streaming request, for the cancel test */
static int closed;

static void on_close(rz_req_t *req, void *arg)
{
	(void)arg;
	closed++;
	held = NULL;
	rz_reply_end(req);
}

static void h_stream(rz_req_t *req, void *ctx)
{
	(void)ctx;
	ck_assert_int_eq(rz_reply_start(req, 200, "text/event-stream"), 0);
	ck_assert_int_eq(rz_reply_write(req, "one\n", 4), 0);
	(void)rz_reply_write(req, "two\n", 4); /* -ENOBUFS past max_reply */
	if (rz_req_query(req, "hold") != NULL) {
		held = req;
		rz_req_on_close(req, on_close, NULL);
		return;
	}
	rz_reply_end(req);
}

static const rz_route_t routes[] = {
	{ .methods = RZ_M_GET | RZ_M_POST, .pattern = "/echo", .fn = h_echo },
	{ .methods = RZ_M_GET, .pattern = "/stream", .fn = h_stream },
};

struct got {
	int calls, code;
	char body[1024], ctype[64], xtest[16], data[64];
	bool truncated;
};

static void got_done(void *arg, const rz_inject_reply_t *r)
{
	struct got *g = arg;
	const char *x = rz_req_reply_header(r->req, "X-Test");

	g->calls++;
	g->code = r->code;
	g->truncated = r->truncated;
	snprintf(g->body, sizeof(g->body), "%s", r->body);
	snprintf(g->ctype, sizeof(g->ctype), "%s", r->content_type ? r->content_type : "");
	snprintf(g->xtest, sizeof(g->xtest), "%s", x ? x : "");
}

static int got_data(void *arg, const char *data, size_t len)
{
	struct got *g = arg;

	strncat(g->data, data, len);
	return 0;
}

START_TEST(inject_requests)
{
	struct event_base *base = event_base_new();
	rz_http_t *h = NULL;
	rz_err_t err = { 0 };
	struct got g = { 0 };
	rz_req_t *handle = NULL;

	ck_assert_int_eq(rz_http_new(&h, base, NULL, &err), 0);
	ck_assert_int_eq(rz_http_add_routes(h, routes, 2, &err), 0);

	rz_inject_t in = { .method = "POST",
		           .target = "/echo?q=a%20b",
		           .authorization = "Bearer x",
		           .content_type = "application/json",
		           .body = "{\"k\":1}",
		           .len = 7,
		           .done = got_done,
		           .arg = &g };
	ck_assert_int_eq(rz_http_inject(h, NULL, &in, NULL, &err), 0);
	ck_assert_int_eq(g.calls, 1);
	ck_assert_int_eq(g.code, 201);
	ck_assert_str_eq(g.ctype, "application/json");
	ck_assert_str_eq(g.xtest, "yes");
	ck_assert_ptr_nonnull(strstr(g.body, "\"auth\":\"Bearer x\""));
	ck_assert_ptr_nonnull(strstr(g.body, "\"q\":\"a b\""));
	ck_assert_ptr_nonnull(strstr(g.body, "\"body\":\"{\\\"k\\\":1}\""));
	ck_assert_ptr_nonnull(strstr(g.body, "\"peer\":\"127.0.0.1\""));
	ck_assert_uint_eq(rz_http_in_flight(h), 0);

	memset(&g, 0, sizeof(g)); /* no route: the 404 Status comes back, not a crash */
	in = (rz_inject_t){ .method = "GET", .target = "/nowhere", .done = got_done, .arg = &g };
	ck_assert_int_eq(rz_http_inject(h, NULL, &in, NULL, &err), 0);
	ck_assert_int_eq(g.code, 404);
	ck_assert_ptr_nonnull(strstr(g.body, "\"kind\":\"Status\""));

	memset(&g, 0, sizeof(g)); /* a streamed reply is captured whole */
	in = (rz_inject_t){ .method = "GET", .target = "/stream", .done = got_done, .arg = &g };
	ck_assert_int_eq(rz_http_inject(h, NULL, &in, NULL, &err), 0);
	ck_assert_int_eq(g.code, 200);
	ck_assert_str_eq(g.body, "one\ntwo\n");

	memset(&g, 0, sizeof(g)); /* over max_reply: cut and said so */
	in = (rz_inject_t){
		.method = "GET", .target = "/stream", .max_reply = 5, .done = got_done, .arg = &g
	};
	ck_assert_int_eq(rz_http_inject(h, NULL, &in, NULL, &err), 0);
	ck_assert(g.truncated);
	ck_assert_str_eq(g.body, "one\n");

	memset(&g, 0, sizeof(g)); /* a live stream: pieces to data, cancel ends it, no done */
	in = (rz_inject_t){ .method = "GET",
		            .target = "/stream?hold=1",
		            .done = got_done,
		            .data = got_data,
		            .arg = &g };
	ck_assert_int_eq(rz_http_inject(h, NULL, &in, &handle, &err), 0);
	ck_assert_ptr_eq(handle, held);
	ck_assert_str_eq(g.data, "one\ntwo\n");
	ck_assert_int_eq(g.calls, 0);
	ck_assert_uint_eq(rz_http_in_flight(h), 1);
	rz_http_inject_cancel(handle);
	ck_assert_int_eq(closed, 1);
	ck_assert_int_eq(g.calls, 0);
	ck_assert_uint_eq(rz_http_in_flight(h), 0);

	in = (rz_inject_t){ .method = "GET", .target = "no-slash", .done = got_done, .arg = &g };
	ck_assert_int_eq(rz_http_inject(h, NULL, &in, NULL, &err), -EINVAL);
	rz_http_free(h);
	event_base_free(base);
}
END_TEST

/* A size in binary units: one decimal below 10, none from 10, the next unit from 1023.5 on
 * (never "1024 KiB"); the buffer's bound holds. */
START_TEST(byte_sizes)
{
	static const struct {
		int64_t n;
		const char *want;
	} cases[] = {
		{ 0, "0 B" },
		{ -5, "0 B" },
		{ 1, "1 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.0 KiB" },
		{ 1536, "1.5 KiB" },
		{ 10188, "9.9 KiB" }, /* 9.949 */
		{ 10189, "10 KiB" },  /* 9.950: not "10.0" */
		{ 10240, "10 KiB" },
		{ 1047552, "1023 KiB" }, /* 1023.0 */
		{ 1048064, "1.0 MiB" },  /* 1023.5 KiB */
		{ 1048576, "1.0 MiB" },
		{ 5 * 1048576 + 300000, "5.3 MiB" },
		{ 734003200, "700 MiB" },
		{ 3LL << 30, "3.0 GiB" },
		{ 5LL << 40, "5.0 TiB" },
		{ INT64_MAX, "8.0 EiB" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rz_ui_bytes(buf, sizeof(buf), cases[i].n);
		ck_assert_msg(strcmp(buf, cases[i].want) == 0, "%lld: got '%s', want '%s'",
		              (long long)cases[i].n, buf, cases[i].want);
	}
	memset(buf, 'x', sizeof(buf));
	rz_ui_bytes(buf, 4, 1536); /* cut, still a string */
	ck_assert_str_eq(buf, "1.5");
}
END_TEST

/* A CamelCase word as people read it: capitals made small but the first word's, an acronym
 * kept, one capital alone small; the buffer's bound holds. */
START_TEST(words)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "AwaitingApproval", "Awaiting approval" },
		{ "RunAwaitingApproval", "Run awaiting approval" },
		{ "ControlPlaneReady", "Control plane ready" },
		{ "OneMinorAtATime", "One minor at a time" },
		{ "APIToken", "API token" },
		{ "Succeeded", "Succeeded" },
		{ "Never seen", "Never seen" },
		{ "etcd", "etcd" },
		{ "", "" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rz__words_into(cases[i].in, buf, sizeof(buf));
		ck_assert_msg(strcmp(buf, cases[i].want) == 0, "%s: got '%s', want '%s'",
		              cases[i].in, buf, cases[i].want);
	}
	rz__words_into("AwaitingApproval", buf, 6);
	ck_assert_str_eq(buf, "Await");
	/* one meaning, one tone: an Event's reason as the phase it names */
	ck_assert_str_eq(rz__tone_any("RunAwaitingApproval"), rz__tone("AwaitingApproval"));
	ck_assert_str_eq(rz__tone_any("MachineUpgradeFailed"), "bad");
	ck_assert_str_eq(rz__tone_any("RunStarted"), "neutral");
	ck_assert_str_eq(rz__tone_any("Succeeded"), "ok");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("web");
	TCase *tc = tcase_create("ui");
	SRunner *sr;
	int failed;

	if (sodium_init() < 0) {
		return 1;
	}
	tcase_add_test(tc, csrf_token);
	tcase_add_test(tc, cookie_attributes);
	tcase_add_test(tc, cookie_reading);
	tcase_add_test(tc, ingress_prefix);
	tcase_add_test(tc, form_decoding);
	tcase_add_test(tc, inject_requests);
	tcase_add_test(tc, byte_sizes);
	tcase_add_test(tc, words);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
