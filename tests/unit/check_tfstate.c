/* tests/unit/check_tfstate.c - the sensitive outputs kept for the credentials endpoints. */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/store/store.h"
#include "core/tfstate/tfstate.h"
#include "core/http/http.h"
#include "testutil.h"
#include "httpclient.h"

static char *dir, *dbpath, *keypath;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *st;
static rz_tfstate_t *ts;

static void add_tenant(const char *name)
{
	json_t *t = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", name, "spec",
	                      "clusterProvider", "sim"),
	       *out = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_create(st, rz_kind_by_name("Tenant"), t, NULL, &out, &err) == 0,
	              "create: %s", err.msg);
	json_decref(out);
	json_decref(t);
}

static void setup(void)
{
	rz_err_t err = { 0 };

	dir = rzt_tmpdir();
	ck_assert_int_gt(asprintf(&dbpath, "%s/rezus.db", dir), 0);
	ck_assert_int_gt(asprintf(&keypath, "%s/state.key", dir), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_msg(rz_db_open(&db, dbpath, &err) == 0, "db: %s", err.msg);
	ck_assert_msg(rz_store_new(&st, db, bus, 100, &err) == 0, "store: %s", err.msg);
	ck_assert_msg(rz_tfstate_new(&ts, db, st, NULL, keypath, 3, &err) == 0, "tfstate: %s",
	              err.msg);
	add_tenant("acme");
	add_tenant("other");
}

static void teardown(void)
{
	rz_tfstate_free(ts);
	rz_store_free(st);
	rz_db_close(db);
	rz_bus_free(bus);
	rzt_rmrf(dir);
	free(dir);
	free(dbpath);
	free(keypath);
}

static json_t *state_with(const char *outputs)
{
	json_error_t je;
	json_t *o = json_loads(outputs, 0, &je), *s;

	ck_assert_msg(o != NULL, "%s", je.text);
	s = json_pack("{s:i, s:i, s:o, s:[]}", "version", 4, "serial", 1, "outputs", o,
	              "resources");
	return s;
}

static void keep(const char *tenant, const char *outputs)
{
	json_t *s = state_with(outputs);
	rz_err_t err = { 0 };

	ck_assert_msg(rz_tfstate_keep_outputs(ts, tenant, "run-1", s, &err) == 0, "keep: %s",
	              err.msg);
	json_decref(s);
}

/* The output's value, or NULL with *code set. */
static char *output(const char *tenant, const char *name, int *code)
{
	char *v = NULL;
	size_t len = 0;
	rz_err_t err = { 0 };

	*code = rz_tfstate_output(ts, tenant, name, &v, &len, &err);
	if (v != NULL) {
		ck_assert_uint_eq(len, strlen(v));
	}
	return v;
}

/* Does needle appear in the file at path (absent: no)? */
static bool in_file(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, len = strlen(needle);
	char *buf;
	bool found = false;

	if (f == NULL) {
		return false;
	}
	buf = malloc(1 << 22);
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, 1 << 22, f);
	fclose(f);
	for (size_t i = 0; i + len <= n && !found; i++) {
		found = memcmp(buf + i, needle, len) == 0;
	}
	free(buf);
	return found;
}

/* Does needle appear in the database or its write-ahead log? */
static bool in_db(const char *needle)
{
	char wal[512];

	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	return in_file(dbpath, needle) || in_file(wal, needle);
}

START_TEST(test_sensitive_kept_plain_not)
{
	int code;
	char *v;

	keep("acme", "{\"kubeconfig\": {\"value\": \"apiVersion: v1\\nkind: Config\\n\","
	             " \"type\": \"string\", \"sensitive\": true},"
	             " \"endpoint\": {\"value\": \"https://x\", \"type\": \"string\"}}");
	v = output("acme", "kubeconfig", &code);
	ck_assert_int_eq(code, 0);
	ck_assert_str_eq(v, "apiVersion: v1\nkind: Config\n");
	free(v);
	ck_assert_ptr_null(output("acme", "endpoint", &code));
	ck_assert_int_eq(code, RZ_ENOTFOUND);
	ck_assert_ptr_null(output("other", "kubeconfig", &code));
	ck_assert_int_eq(code, RZ_ENOTFOUND);
}
END_TEST

START_TEST(test_non_string_values_as_json)
{
	int code;
	char *v;

	keep("acme", "{\"endpoints\": {\"value\": [\"a\", \"b\"], \"sensitive\": true}}");
	v = output("acme", "endpoints", &code);
	ck_assert_int_eq(code, 0);
	ck_assert_str_eq(v, "[\"a\",\"b\"]");
	free(v);
}
END_TEST

START_TEST(test_replaced_and_emptied)
{
	int code;
	char *v;

	keep("acme", "{\"kubeconfig\": {\"value\": \"one\", \"sensitive\": true},"
	             " \"talosconfig\": {\"value\": \"two\", \"sensitive\": true}}");
	keep("acme", "{\"kubeconfig\": {\"value\": \"three\", \"sensitive\": true}}");
	v = output("acme", "kubeconfig", &code);
	ck_assert_str_eq(v, "three");
	free(v);
	ck_assert_ptr_null(output("acme", "talosconfig", &code));
	ck_assert_int_eq(code, RZ_ENOTFOUND);
	{
		json_t *destroyed = json_pack("{s:i, s:[]}", "version", 4, "resources");
		rz_err_t err = { 0 };
		ck_assert_int_eq(rz_tfstate_keep_outputs(ts, "acme", "run-2", destroyed, &err), 0);
		json_decref(destroyed);
	}
	ck_assert_ptr_null(output("acme", "kubeconfig", &code));
	ck_assert_int_eq(code, RZ_ENOTFOUND);
}
END_TEST

START_TEST(test_encrypted_at_rest)
{
	int code;
	char *v;

	keep("acme", "{\"kubeconfig\": {\"value\": \"token: s3cr3t-kubeconfig-token\", "
	             "\"sensitive\": true}}");
	ck_assert(in_db("run-1")); /* the search finds what is stored in clear */
	ck_assert(!in_db("s3cr3t-kubeconfig-token"));
	v = output("acme", "kubeconfig", &code);
	ck_assert_str_eq(v, "token: s3cr3t-kubeconfig-token");
	free(v);
}
END_TEST

/* A ciphertext is bound to its tenant and name: moved elsewhere, it does not open. */
START_TEST(test_bound_to_tenant_and_name)
{
	rz_err_t err = { 0 };
	int code;

	keep("acme", "{\"kubeconfig\": {\"value\": \"acme's\", \"sensitive\": true}}");
	keep("other", "{\"kubeconfig\": {\"value\": \"other's\", \"sensitive\": true}}");
	ck_assert_int_eq(rz_db_exec(db,
	                            "UPDATE tenant_outputs SET blob = (SELECT blob FROM "
	                            "tenant_outputs WHERE tenant = 'acme') WHERE tenant = 'other'",
	                            &err),
	                 0);
	ck_assert_ptr_null(output("other", "kubeconfig", &code));
	ck_assert_int_eq(code, RZ_EDB);
}
END_TEST

/* Deleting the tenant deletes what was kept for it. */
START_TEST(test_gone_with_the_tenant)
{
	json_t *out = NULL, *cur = NULL;
	bool gone = false;
	rz_err_t err = { 0 };
	int code;

	keep("other", "{\"kubeconfig\": {\"value\": \"x\", \"sensitive\": true}}");
	ck_assert_int_eq(rz_store_delete(st, rz_kind_by_name("Tenant"), NULL, "other", 0, NULL,
	                                 &out, &gone, &err),
	                 0);
	ck_assert(!gone); /* the teardown finalizer holds it */
	json_object_set_new(json_object_get(out, "metadata"), "finalizers", json_array());
	ck_assert_int_eq(rz_store_update(st, rz_kind_by_name("Tenant"), NULL, "other", out, 0,
	                                 RZ_UPDATE_SPEC, NULL, &cur, &gone, &err),
	                 0);
	json_decref(out);
	json_decref(cur);
	ck_assert(gone);
	ck_assert_ptr_null(output("other", "kubeconfig", &code));
	ck_assert_int_eq(code, RZ_ENOTFOUND);
}
END_TEST

/* ------------------------------------------------------------------ durability */

static atomic_int sync_open, sync_fail, sync_entered;

/* The WAL's sync, held until sync_open, failing with EIO while sync_fail. */
static int held_sync(int fd, void *arg)
{
	(void)fd;
	(void)arg;
	atomic_fetch_add(&sync_entered, 1);
	while (!atomic_load(&sync_open)) {
		usleep(1000);
	}
	return atomic_load(&sync_fail) ? -EIO : 0;
}

static bool replied(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* With store.durability full, tofu's state write, lock and unlock are answered only once the
 * sync that covers them has returned: a 200 is tofu's word that the state is safe. A sync
 * that fails answers 503. */
START_TEST(test_full_durability_holds_state_replies)
{
	static const char *const reqs[] = {
		"LOCK /tfstate/acme HTTP/1.1\r\nContent-Type: application/json\r\n"
		"Content-Length: 12\r\n\r\n{\"ID\":\"l-1\"}",
		"POST /tfstate/acme?ID=l-1 HTTP/1.1\r\nContent-Type: application/json\r\n"
		"Content-Length: 38\r\n\r\n{\"version\":4,\"serial\":1,\"lineage\":\"x\"}",
		"UNLOCK /tfstate/acme HTTP/1.1\r\nContent-Type: application/json\r\n"
		"Content-Length: 12\r\n\r\n{\"ID\":\"l-1\"}",
	};
	struct event_base *base = event_base_new();
	rz_http_opts_t opts = { .idle_timeout_s = 5 };
	rz_http_t *srv = NULL;
	rz_err_t err = { 0 };
	rzt_response_t r;
	int port;

	atomic_store(&sync_open, 0);
	atomic_store(&sync_fail, 0);
	atomic_store(&sync_entered, 0);
	rz_db_set_sync_fn(db, held_sync, NULL);
	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_FULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rz_http_new(&srv, base, &opts, &err), 0);
	ck_assert_msg(rz_tfstate_routes(ts, srv, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rz_http_listen(srv, "127.0.0.1:0", &err), 0);
	port = rz_http_port(srv);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		rzt_conn_t *c = rzt_open(port);
		atomic_store(&sync_open, 0);
		rzt_send(base, c->fd, reqs[i], strlen(reqs[i]));
		for (int t = 0; t < 200; t++) { /* 0.2 s of loop with the sync held */
			event_base_loop(base, EVLOOP_NONBLOCK);
			usleep(1000);
		}
		ck_assert_msg(!replied(c->fd), "%.20s answered before its sync", reqs[i]);
		ck_assert_int_ge(atomic_load(&sync_entered), 1);
		atomic_store(&sync_open, 1);
		ck_assert(rzt_recv(base, c, &r, false));
		ck_assert_msg(r.code == 200, "%.20s: %d %s", reqs[i], r.code, r.body);
		rzt_response_free(&r);
		rzt_close(c);
	}
	/* a new state whose sync fails: 503 */
	atomic_store(&sync_fail, 1);
	{
		static const char put2[] =
		    "POST /tfstate/acme HTTP/1.1\r\nContent-Type: application/json\r\n"
		    "Content-Length: 38\r\n\r\n{\"version\":4,\"serial\":2,\"lineage\":\"x\"}";
		rzt_conn_t *c = rzt_open(port);
		rzt_send(base, c->fd, put2, sizeof(put2) - 1);
		ck_assert(rzt_recv(base, c, &r, false));
		ck_assert_int_eq(r.code, 503);
		ck_assert_ptr_nonnull(strstr(r.body, "syncing it to the disk failed"));
		rzt_response_free(&r);
		rzt_close(c);
	}
	atomic_store(&sync_fail, 0);
	rz_http_free(srv);
	rz_db_stop(db);
	event_base_free(base);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tfstate");
	TCase *tc = tcase_create("outputs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sensitive_kept_plain_not);
	tcase_add_test(tc, test_non_string_values_as_json);
	tcase_add_test(tc, test_replaced_and_emptied);
	tcase_add_test(tc, test_encrypted_at_rest);
	tcase_add_test(tc, test_bound_to_tenant_and_name);
	tcase_add_test(tc, test_gone_with_the_tenant);
	tcase_add_test(tc, test_full_durability_holds_state_replies);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
