/*
 * tests/unit/apitest.h - the resource API over real HTTP, in process on 127.0.0.1 port 0,
 * for the Check programs of its modules beside check_api (check_corev1, check_scale): a
 * store, a watch hub, the API and its OpenAPI document, and requests to them.
 */
#ifndef RZ_APITEST_H
#define RZ_APITEST_H

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/api/api.h"
#include "core/api/openapi.h"
#include "core/api/watch.h"
#include "core/base/log.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"
#include "tests/unit/httpclient.h"

static struct event_base *base;
static char *dir;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *store;
static rz_watch_hub_t *hub;
static rz_http_t *srv;
static rz_api_t *api;
static rz_openapi_t *openapi;
static int port;

static void setup(void)
{
	rz_http_opts_t opts = { .max_stream_backlog = 64 * 1024 };
	rz_err_t err = { 0 };
	char path[512];

	rz_log_set_level(RZ_LOG_ERR);
	dir = rzt_tmpdir();
	snprintf(path, sizeof(path), "%s/rezus.db", dir);
	base = event_base_new();
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_int_eq(rz_store_new(&store, db, bus, 20, &err), 0);
	ck_assert_int_eq(
	    rz_watch_hub_new(&hub, base, store, bus, 300, opts.max_stream_backlog, &err), 0);
	ck_assert_int_eq(rz_http_new(&srv, base, &opts, &err), 0);
	ck_assert_int_eq(rz_api_add_aliases(srv, &err), 0);
	ck_assert_int_eq(rz_api_new(&api, srv, store, hub, NULL, NULL, &err), 0);
	ck_assert_int_eq(rz_openapi_new(&openapi, srv, &err), 0);
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:0", &err), 0);
	port = rz_http_port(srv);
}

static void teardown(void)
{
	rz_watch_hub_free(hub);
	rz_http_free(srv);
	rz_api_free(api);
	rz_openapi_free(openapi);
	rz_store_free(store);
	rz_bus_free(bus);
	rz_db_close(db);
	event_base_free(base);
	rzt_rmrf(dir);
	free(dir);
}

/* One request (ctype NULL: no Content-Type); returns the status code and, when out is
 * given, the body as JSON. */
static inline int call(const char *method, const char *path, const char *ctype, const char *body,
                       json_t **out)
{
	size_t size = 4096 + strlen(path) + (body ? strlen(body) : 0);
	char *raw = malloc(size);
	rzt_response_t r;
	int code;

	ck_assert_ptr_nonnull(raw);
	snprintf(raw, size, "%s %s HTTP/1.1\r\nHost: t\r\n%s%s%sContent-Length: %zu\r\n\r\n%s",
	         method, path, ctype ? "Content-Type: " : "", ctype ? ctype : "",
	         ctype ? "\r\n" : "", body ? strlen(body) : 0, body ? body : "");
	rzt_request(base, port, raw, &r);
	free(raw);
	code = r.code;
	if (out != NULL) {
		json_error_t jerr;
		*out = json_loads(r.body, 0, &jerr);
		ck_assert_msg(*out != NULL, "not JSON (%d): %s", code, r.body);
	}
	rzt_response_free(&r);
	return code;
}

static inline int get(const char *path, json_t **out)
{
	return call("GET", path, NULL, NULL, out);
}

static inline int post(const char *path, const char *body, json_t **out)
{
	return call("POST", path, "application/json", body, out);
}

/* A string at a dotted path ("metadata.name", "items.0.metadata.name"); an integer as its
 * digits. NULL when absent. */
static inline const char *at(json_t *j, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p && j; p = strtok_r(NULL, ".", &save)) {
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(p)) : json_object_get(j, p);
	}
	if (json_is_integer(j)) {
		static char num[32];
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(j));
		return num;
	}
	return json_string_value(j);
}

/* The causes of an Invalid Status as "field|reason|message;..." */
static inline const char *causes_text(json_t *st)
{
	static char buf[4096];
	size_t i, n = 0;
	json_t *c;

	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(st, "details"), "causes"), i, c)
	{
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s|%s|%s", i ? ";" : "",
		                      at(c, "field"), at(c, "reason"), at(c, "message"));
	}
	return buf;
}

/* The items' names of a list: "a,b". */
static inline const char *names(json_t *list)
{
	static char buf[1024];
	size_t i, n = 0;
	json_t *o;

	buf[0] = '\0';
	json_array_foreach(json_object_get(list, "items"), i, o)
	{
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
		                      at(o, "metadata.name"));
	}
	return buf;
}

static inline void make_tenant(const char *name)
{
	char body[256];
	json_t *j;

	snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{}}", name);
	ck_assert_int_eq(post("/api/v1/tenants", body, &j), 201);
	json_decref(j);
}

/* A worker node group of count machines; returns its uid (static buffer). */
static inline const char *make_nodegroup(const char *tenant, const char *name, int count)
{
	static char uid[64];
	char path[128], body[512];
	json_t *j;

	snprintf(path, sizeof(path), "/api/v1/tenants/%s/nodegroups", tenant);
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"name\":\"%s\"},"
	         "\"spec\":{\"role\":\"worker\",\"count\":%d,\"providerClass\":\"sim\"}}",
	         name, count);
	ck_assert_int_eq(post(path, body, &j), 201);
	snprintf(uid, sizeof(uid), "%s", at(j, "metadata.uid"));
	json_decref(j);
	return uid;
}

#endif /* RZ_APITEST_H */
