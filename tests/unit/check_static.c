/*
 * tests/unit/check_static.c - the embedded static assets (core/web/static.h): the table the
 * build made from web/static/, and the GET /static/{name} route served in process.
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>
#include <sodium.h>
#include <zlib.h>

#include "core/base/log.h"
#include "core/web/static.h"
#include "tests/unit/httpclient.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* hash8 of the path, checked against the SHA-256 of the bytes */
static void check_hash(const rz_asset_t *a)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char hex[2 * crypto_hash_sha256_BYTES + 1], want[192];
	const char *dot = strrchr(a->logical, '.');
	int stem = dot != NULL ? (int)(dot - a->logical) : (int)strlen(a->logical);

	crypto_hash_sha256(h, a->data, a->len);
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	snprintf(want, sizeof(want), "/static/%.*s.%.8s%s", stem, a->logical, hex,
	         dot != NULL ? dot : "");
	ck_assert_str_eq(a->path, want);
}

START_TEST(every_asset_by_path_and_name)
{
	const char *names[] = { "app.css", "htmx.min.js", "htmx-ext-sse.min.js", "alpine.min.js",
		                "LICENSES" };

	ck_assert_uint_ge(rz_asset_count(), 5);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ck_assert_msg(rz_asset_by_name(names[i]) != NULL, "%s is not embedded", names[i]);
	}
	for (size_t i = 0; i < rz_asset_count(); i++) {
		const rz_asset_t *a = rz_asset_at(i);
		ck_assert_ptr_eq(rz_asset_by_path(a->path), a);
		ck_assert_ptr_eq(rz_asset_by_name(a->logical), a);
		ck_assert_uint_gt(a->len, 0);
		check_hash(a);
	}
	ck_assert_ptr_null(rz_asset_at(rz_asset_count()));
	ck_assert_str_eq(rz_asset_by_name("app.css")->content_type, "text/css; charset=utf-8");
	ck_assert_str_eq(rz_asset_by_name("htmx.min.js")->content_type,
	                 "text/javascript; charset=utf-8");
	ck_assert_str_eq(rz_asset_by_name("LICENSES")->content_type, "text/plain; charset=utf-8");
	ck_assert_int_eq(strncmp(rz_asset_by_name("htmx.min.js")->path, "/static/htmx.min.", 17),
	                 0);
}
END_TEST

START_TEST(gzip_decodes_to_the_bytes)
{
	size_t zipped = 0;

	for (size_t i = 0; i < rz_asset_count(); i++) {
		const rz_asset_t *a = rz_asset_at(i);
		unsigned char *out;
		z_stream z = { 0 };

		if (a->gz == NULL) {
			ck_assert_uint_eq(a->gz_len, 0);
			continue;
		}
		zipped++;
		ck_assert_uint_lt(a->gz_len, a->len);
		out = malloc(a->len + 1);
		ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
		z.next_in = (Bytef *)(uintptr_t)a->gz;
		z.avail_in = (uInt)a->gz_len;
		z.next_out = out;
		z.avail_out = (uInt)a->len + 1;
		ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
		ck_assert_uint_eq(z.total_out, a->len);
		ck_assert_int_eq(memcmp(out, a->data, a->len), 0);
		inflateEnd(&z);
		free(out);
	}
	/* text compresses: every asset shipped today has a gzip copy */
	ck_assert_uint_eq(zipped, rz_asset_count());
}
END_TEST

/* Every file of web/static/ is embedded, byte for byte: none was left out of web/local.mk. */
START_TEST(every_file_of_web_static_is_embedded)
{
	const char *top = getenv("top_srcdir");
	char dir[4096], path[4096 + 512];
	DIR *d;
	struct dirent *e;
	size_t files = 0;

	snprintf(dir, sizeof(dir), "%s/web/static", top != NULL ? top : ".");
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((e = readdir(d)) != NULL) {
		const rz_asset_t *a;
		struct stat st;
		size_t len;
		char *bytes;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			continue;
		}
		files++;
		a = rz_asset_by_name(e->d_name);
		ck_assert_msg(a != NULL, "web/static/%s is not embedded (web/local.mk)", e->d_name);
		bytes = slurp(path, &len);
		ck_assert_uint_eq(len, a->len);
		ck_assert_int_eq(memcmp(bytes, a->data, len), 0);
		free(bytes);
	}
	closedir(d);
	ck_assert_uint_eq(files, rz_asset_count());
}
END_TEST

START_TEST(unknown_paths_are_null)
{
	const rz_asset_t *css = rz_asset_by_name("app.css");
	char path[256];

	ck_assert_ptr_null(rz_asset_by_path(NULL));
	ck_assert_ptr_null(rz_asset_by_path(""));
	ck_assert_ptr_null(rz_asset_by_path("/static/nope.css"));
	ck_assert_ptr_null(rz_asset_by_path("/static/app.css")); /* the name is not a path */
	ck_assert_ptr_null(rz_asset_by_path("/static/app.00000000.css"));
	snprintf(path, sizeof(path), "/static/../%s", css->path + 8);
	ck_assert_ptr_null(rz_asset_by_path(path));
	snprintf(path, sizeof(path), "%s/", css->path);
	ck_assert_ptr_null(rz_asset_by_path(path));
	ck_assert_ptr_null(rz_asset_by_path(css->path + 1));
	ck_assert_ptr_null(rz_asset_by_name(NULL));
	ck_assert_ptr_null(rz_asset_by_name("nope.css"));
	ck_assert_ptr_null(rz_asset_by_name(css->path));
}
END_TEST

START_TEST(csp_strings)
{
	ck_assert_str_eq(rz_web_csp(false),
	                 "default-src 'none'; script-src 'self'; style-src 'self'; "
	                 "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
	                 "base-uri 'none'; frame-ancestors 'none'");
	ck_assert_str_eq(rz_web_csp(true),
	                 "default-src 'none'; script-src 'self'; style-src 'self'; "
	                 "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
	                 "base-uri 'none'");
	ck_assert_ptr_null(strstr(rz_web_csp(false), "unsafe"));
}
END_TEST

/* ---- the route, in process ---- */

static struct event_base *base;
static rz_http_t *srv;
static int port;

static void setup(void)
{
	rz_err_t err = { 0 };

	rz_log_set_level(RZ_LOG_WARNING);
	base = event_base_new();
	ck_assert_int_eq(rz_http_new(&srv, base, NULL, &err), 0);
	ck_assert_int_eq(rz_web_static_routes(srv, &err), 0);
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:0", &err), 0);
	port = rz_http_port(srv);
}

static void teardown(void)
{
	rz_http_free(srv);
	event_base_free(base);
}

/* GET path with the extra header lines; the reply in *r. */
static void get(const char *method, const char *path, const char *extra, rzt_response_t *r)
{
	char raw[1024];

	rzt_conn_t *c;

	snprintf(raw, sizeof(raw), "%s %s HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n",
	         method, path, extra);
	c = rzt_open(port);
	rzt_send(base, c->fd, raw, strlen(raw));
	/* a 304, like a HEAD reply, has no body whatever its Content-Length says */
	ck_assert_msg(
	    rzt_recv(base, c, r,
	             strcmp(method, "HEAD") == 0 || strstr(extra, "If-None-Match") != NULL),
	    "connection closed without a response");
	rzt_close(c);
}

static void expect_header(const rzt_response_t *r, const char *name, const char *want)
{
	char v[256];

	ck_assert_msg(rzt_header(r, name, v, sizeof(v)), "no %s in %s", name, r->head);
	ck_assert_str_eq(v, want);
}

START_TEST(served_with_cache_headers)
{
	const rz_asset_t *a = rz_asset_by_name("htmx.min.js");
	rzt_response_t r;
	char tag[64], v[64];

	get("GET", a->path, "", &r);
	ck_assert_int_eq(r.code, 200);
	ck_assert_uint_eq(r.body_len, a->len);
	ck_assert_int_eq(memcmp(r.body, a->data, a->len), 0);
	expect_header(&r, "Content-Type", "text/javascript; charset=utf-8");
	expect_header(&r, "Cache-Control", "public, max-age=31536000, immutable");
	expect_header(&r, "Vary", "Accept-Encoding");
	expect_header(&r, "X-Content-Type-Options", "nosniff");
	ck_assert(!rzt_header(&r, "Content-Encoding", v, sizeof(v)));
	ck_assert(rzt_header(&r, "ETag", tag, sizeof(tag)));
	ck_assert_uint_eq(strlen(tag), 10); /* "<hash8>" */
	ck_assert_int_eq(strncmp(tag + 1, a->path + strlen("/static/htmx.min."), 8), 0);
	rzt_response_free(&r);
}
END_TEST

START_TEST(gzip_when_accepted)
{
	const rz_asset_t *a = rz_asset_by_name("app.css");
	const char *yes[] = { "Accept-Encoding: gzip\r\n", "Accept-Encoding: br, GZIP;q=0.5\r\n",
		              "Accept-Encoding: deflate, gzip, br\r\n", "Accept-Encoding: *\r\n",
		              "Accept-Encoding: x-gzip\r\n" };
	const char *no[] = { "",
		             "Accept-Encoding: identity\r\n",
		             "Accept-Encoding: gzip;q=0\r\n",
		             "Accept-Encoding: *;q=0.5, gzip;q=0\r\n",
		             "Accept-Encoding: br\r\n",
		             "Accept-Encoding: gzipx\r\n" };
	rzt_response_t r;
	char v[64];

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		get("GET", a->path, yes[i], &r);
		ck_assert_int_eq(r.code, 200);
		expect_header(&r, "Content-Encoding", "gzip");
		ck_assert_uint_eq(r.body_len, a->gz_len);
		ck_assert_int_eq(memcmp(r.body, a->gz, a->gz_len), 0);
		ck_assert(rzt_header(&r, "ETag", v, sizeof(v)));
		ck_assert_ptr_nonnull(strstr(v, "-gzip\""));
		rzt_response_free(&r);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		get("GET", a->path, no[i], &r);
		ck_assert_int_eq(r.code, 200);
		ck_assert_msg(!rzt_header(&r, "Content-Encoding", v, sizeof(v)), "gzip for %s",
		              no[i]);
		ck_assert_uint_eq(r.body_len, a->len);
		rzt_response_free(&r);
	}
}
END_TEST

START_TEST(not_modified_on_a_matching_etag)
{
	const rz_asset_t *a = rz_asset_by_name("app.css");
	rzt_response_t r;
	char tag[64], gztag[64], hdr[256];

	get("GET", a->path, "", &r);
	ck_assert(rzt_header(&r, "ETag", tag, sizeof(tag)));
	rzt_response_free(&r);
	get("GET", a->path, "Accept-Encoding: gzip\r\n", &r);
	ck_assert(rzt_header(&r, "ETag", gztag, sizeof(gztag)));
	rzt_response_free(&r);
	ck_assert_str_ne(tag, gztag);

	snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", tag);
	get("GET", a->path, hdr, &r);
	ck_assert_int_eq(r.code, 304);
	expect_header(&r, "ETag", tag);
	expect_header(&r, "Cache-Control", "public, max-age=31536000, immutable");
	rzt_response_free(&r);
	snprintf(hdr, sizeof(hdr), "Accept-Encoding: gzip\r\nIf-None-Match: \"x\", W/%s\r\n",
	         gztag);
	get("GET", a->path, hdr, &r);
	ck_assert_int_eq(r.code, 304);
	expect_header(&r, "ETag", gztag);
	rzt_response_free(&r);
	get("GET", a->path, "If-None-Match: *\r\n", &r);
	ck_assert_int_eq(r.code, 304);
	rzt_response_free(&r);
	get("GET", a->path, "If-None-Match: \"00000000\"\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
}
END_TEST

START_TEST(unknown_paths_404)
{
	const rz_asset_t *a = rz_asset_by_name("app.css");
	const char *paths[] = { "/static/nope.css", "/static/app.css", "/static/..%2Fetc%2Fpasswd",
		                "/static/app.00000000.css" };
	rzt_response_t r;
	char path[256];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		get("GET", paths[i], "", &r);
		ck_assert_int_eq(r.code, 404);
		rzt_response_free(&r);
	}
	snprintf(path, sizeof(path), "/static/../static/%s", a->path + 8);
	get("GET", path, "", &r);
	ck_assert_int_eq(r.code, 404);
	rzt_response_free(&r);
	get("HEAD", a->path, "", &r);
	ck_assert_int_eq(r.code, 200);
	ck_assert(rzt_header(&r, "Content-Length", path, sizeof(path)));
	ck_assert_uint_eq(strtoul(path, NULL, 10), a->len);
	rzt_response_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("static");
	TCase *t = tcase_create("table");
	TCase *h = tcase_create("route");

	tcase_add_test(t, every_asset_by_path_and_name);
	tcase_add_test(t, gzip_decodes_to_the_bytes);
	tcase_add_test(t, every_file_of_web_static_is_embedded);
	tcase_add_test(t, unknown_paths_are_null);
	tcase_add_test(t, csp_strings);
	suite_add_tcase(s, t);
	tcase_add_checked_fixture(h, setup, teardown);
	tcase_add_test(h, served_with_cache_headers);
	tcase_add_test(h, gzip_when_accepted);
	tcase_add_test(h, not_modified_on_a_matching_etag);
	tcase_add_test(h, unknown_paths_404);
	suite_add_tcase(s, h);
	return rzt_run(s);
}
