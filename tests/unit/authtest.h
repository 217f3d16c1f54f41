/*
 * tests/unit/authtest.h - the whole daemon in process on 127.0.0.1 port 0, with an admin, a
 * viewer and an editor signed in, and requests to it: the fixture of the Check programs of
 * authentication and authorization (check_auth, check_access).
 */
#ifndef RZ_AUTHTEST_H
#define RZ_AUTHTEST_H

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/base/log.h"
#include "core/daemon.h"
#include "tests/unit/httpclient.h"

#define ADMIN_PW "admin-secret-pw-1"
#define VIEW_PW  "viewer-secret-pw-2"
#define EDIT_PW  "editor-secret-pw-3"

static char *dir;
static char logpath[512];
static rz_config_t cfg;
static rz_daemon_t *d;
static struct event_base *base;
static int port;
static char admin_tok[1024], view_tok[1024], edit_tok[1024];
/* every secret the tests handle, to search the database and the log for */
static char secrets[32][1024];
static int nsecrets;

static inline void remember(const char *s)
{
	if (nsecrets < 32) {
		snprintf(secrets[nsecrets++], sizeof(secrets[0]), "%s", s);
	}
}

/* One request; returns the code, the body as JSON (when out) and a header (when hname). */
static inline int call_h(const char *method, const char *path, const char *token, const char *ctype,
                         const char *body, json_t **out, const char *hname, char *hval,
                         size_t hsize)
{
	char raw[16384], auth[2200] = "";
	rzt_response_t r;
	int code;

	if (token != NULL) { /* a bearer token, or "Basic ..." as it is */
		snprintf(auth, sizeof(auth), "Authorization: %s%s\r\n",
		         strncmp(token, "Basic ", 6) == 0 ? "" : "Bearer ", token);
	}
	snprintf(raw, sizeof(raw), "%s %s HTTP/1.1\r\n%s%s%s%sContent-Length: %zu\r\n\r\n%s",
	         method, path, auth, ctype ? "Content-Type: " : "", ctype ? ctype : "",
	         ctype ? "\r\n" : "", body ? strlen(body) : 0, body ? body : "");
	rzt_request(base, port, raw, &r);
	code = r.code;
	if (hname != NULL) {
		hval[0] = '\0';
		rzt_header(&r, hname, hval, hsize);
	}
	if (out != NULL) {
		*out = json_loads(r.body, 0, NULL);
		ck_assert_msg(*out != NULL, "not JSON (%d): %s", code, r.body);
	}
	rzt_response_free(&r);
	return code;
}

static inline int call(const char *method, const char *path, const char *token, const char *body,
                       json_t **out)
{
	const char *ctype = NULL;

	if (body != NULL) {
		ctype = strcmp(method, "PATCH") == 0 ? "application/merge-patch+json"
		                                     : "application/json";
	}
	return call_h(method, path, token, ctype, body, out, NULL, NULL, 0);
}

static inline const char *str(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

/* The message of the first cause of an Invalid Status. */
static inline const char *cause0(json_t *st)
{
	json_t *causes = json_object_get(json_object_get(st, "details"), "causes");

	return str(json_array_get(causes, 0), "message");
}

/* The field of the first cause of an Invalid Status. */
static inline const char *cause0_field(json_t *st)
{
	json_t *causes = json_object_get(json_object_get(st, "details"), "causes");

	return str(json_array_get(causes, 0), "field");
}

/* Log in; the session token goes into tok. Returns the code. */
static inline int login(const char *user, const char *pw, char *tok, size_t size)
{
	char body[256];
	json_t *j;
	int code;

	snprintf(body, sizeof(body), "{\"username\":\"%s\",\"password\":\"%s\"}", user, pw);
	code = call("POST", "/api/v1/auth/login", NULL, body, &j);
	if (code == 200 && tok != NULL) {
		snprintf(tok, size, "%s", str(j, "token"));
		remember(tok);
	}
	json_decref(j);
	return code;
}

static inline void make_user(const char *name, const char *role, const char *pw)
{
	char body[256];
	json_t *j;

	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"role\":\"%s\",\"password\":\"%s\"}}",
	         name, role, pw);
	ck_assert_int_eq(call("POST", "/api/v1/users", admin_tok, body, &j), 201);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "spec"), "password"));
	json_decref(j);
}

static inline void setup(void)
{
	char ddir[512], conf[600];
	char *argv[] = { "rezuscloud", "-c", conf, NULL };
	char *envp[] = { NULL };
	rz_cmdline_t cl;
	rz_err_t err = { 0 };

	dir = rzt_tmpdir();
	nsecrets = 0;
	snprintf(ddir, sizeof(ddir), "%s/data", dir);
	snprintf(conf, sizeof(conf), "%s/rezus.conf", dir);
	snprintf(logpath, sizeof(logpath), "%s/rezus.log", dir);
	{
		char text[2048];
		const char *top = getenv("top_builddir");
		/* sim is the cluster plugin tenants name (a loaded one is required) */
		snprintf(text, sizeof(text),
		         "server:\n  listen: 127.0.0.1:0\n  data_dir: %s\n  trusted_proxies: "
		         "[127.0.0.1]\nplugin_dir: %s/plugins\nplugins:\n  sim: {}\n"
		         "audit:\n  refused_interval: 1s\n",
		         ddir, top ? top : ".");
		rzt_write_file(conf, text);
	}
	setenv("REZUSCLOUD_ADMIN_PASSWORD", ADMIN_PW, 1);
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_daemon_configure(3, argv, envp, &cl, &cfg, &err), 0);
	ck_assert_int_eq(rz_log_open(logpath, &err), 0);
	rz_log_set_level(RZ_LOG_DEBUG);
	ck_assert_msg(rz_daemon_start(&d, &cfg, &err) == 0, "start: %s", err.msg);
	unsetenv("REZUSCLOUD_ADMIN_PASSWORD");
	base = rz_daemon_base(d);
	port = rz_daemon_port(d);
	remember(ADMIN_PW);
	remember(VIEW_PW);
	remember(EDIT_PW);
	ck_assert_int_eq(login("admin", ADMIN_PW, admin_tok, sizeof(admin_tok)), 200);
	make_user("viewer", "view", VIEW_PW);
	make_user("editor", "edit", EDIT_PW);
	ck_assert_int_eq(login("viewer", VIEW_PW, view_tok, sizeof(view_tok)), 200);
	ck_assert_int_eq(login("editor", EDIT_PW, edit_tok, sizeof(edit_tok)), 200);
}

static inline void teardown(void)
{
	rz_daemon_free(d);
	rz_config_free(&cfg);
	rz_log_close();
	rzt_rmrf(dir);
	free(dir);
}

/* A new token's secret (in the reply to its creation) into out. */
static inline void secret_of(const json_t *j, char *out, size_t size)
{
	const char *secret =
	    json_string_value(json_object_get(json_object_get(j, "status"), "secret"));

	if (secret == NULL) {
		secret = json_string_value(json_object_get(j, "secret"));
	}
	ck_assert_ptr_nonnull(secret);
	snprintf(out, size, "%s", secret);
}

/* A view token of user, made with the credential as: its secret into secret, and its path
 * (to revoke it) into path. */
static inline void new_token(const char *user, const char *as, char *secret, size_t ssize,
                             char *path, size_t psize)
{
	char coll[160];
	json_t *j;

	snprintf(coll, sizeof(coll), "/api/v1/users/%s/tokens", user);
	ck_assert_int_eq(call("POST", coll, as, "{\"spec\":{\"role\":\"view\"}}", &j), 201);
	secret_of(j, secret, ssize);
	ck_assert_int_lt(
	    snprintf(path, psize, "%s/%s", coll,
	             json_string_value(json_object_get(json_object_get(j, "metadata"), "name"))),
	    (int)psize);
	json_decref(j);
}

#endif /* RZ_AUTHTEST_H */
