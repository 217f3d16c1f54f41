/* tests/unit/check_daemon.c - command line, configuration precedence, start-up, lock,
 * service endpoints and graceful stop, in process. */
#include <config.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>

#include "core/daemon.h"
#include "core/store/db.h"
#include "core/store/events.h"
#include "core/store/store.h"
#include "core/base/log.h"
#include "core/base/version.h"
#include "tests/unit/httpclient.h"

static char *dir;

static void setup(void)
{
	dir = rzt_tmpdir();
	rz_log_set_level(RZ_LOG_WARNING);
}

static void teardown(void)
{
	rzt_rmrf(dir);
	free(dir);
}

static int configure(char **argv, char *const *envp, rz_cmdline_t *cl, rz_config_t *cfg,
                     rz_err_t *err)
{
	int argc = 0;

	while (argv[argc] != NULL) {
		argc++;
	}
	memset(cfg, 0, sizeof(*cfg));
	return rz_daemon_configure(argc, argv, envp, cl, cfg, err);
}

START_TEST(test_precedence_file_env_flag)
{
	char conf[512], ddir[512];
	char *argv[] = { "rezuscloud", "-c", conf, "--listen", "127.0.0.1:7003", NULL };
	char *envp[] = { "REZUSCLOUD_ADDR=127.0.0.1:7002", "REZUSCLOUD_TOFU_WORKERS=9", NULL };
	rz_cmdline_t cl;
	rz_config_t cfg;
	rz_err_t err = { 0 };

	snprintf(conf, sizeof(conf), "%s/rezus.conf", dir);
	snprintf(ddir, sizeof(ddir),
	         "server:\n  listen: 127.0.0.1:7001\n  data_dir: %s/d\n"
	         "tofu:\n  workers: 3\n  debounce: 2s\n",
	         dir);
	rzt_write_file(conf, ddir);
	ck_assert_int_eq(configure(argv, envp, &cl, &cfg, &err), 0);
	ck_assert_str_eq(cfg.listen, "127.0.0.1:7003");    /* flag beats env beats file */
	ck_assert_int_eq(cfg.tofu_workers, 9);             /* env beats file */
	ck_assert_int_eq(cfg.tofu_debounce_ms, 2000);      /* file beats default */
	ck_assert_int_eq(cfg.tofu_timeout_ms, 30 * 60000); /* default */
	ck_assert_str_eq(cfg.source, conf);
	rz_config_free(&cfg);
}
END_TEST

START_TEST(test_bad_config_is_usage_error)
{
	char conf[512];
	char *argv[] = { "rezuscloud", "-c", conf, "--check-config", NULL };
	char *envp[] = { NULL };
	char expect[600];
	rz_cmdline_t cl;
	rz_config_t cfg;
	rz_err_t err = { 0 };

	snprintf(conf, sizeof(conf), "%s/rezus.conf", dir);
	rzt_write_file(conf, "server:\n  listen: 127.0.0.1:8080\n  listn: x\n");
	ck_assert_int_eq(configure(argv, envp, &cl, &cfg, &err), RZ_EXIT_USAGE);
	ck_assert(cl.check_config);
	snprintf(expect, sizeof(expect), "%s:3: unknown key 'server.listn'", conf);
	ck_assert_str_eq(err.msg, expect);
	rz_config_free(&cfg);
}
END_TEST

START_TEST(test_command_line_errors)
{
	char *unknown[] = { "rezuscloud", "--frobnicate", NULL };
	char *missing[] = { "rezuscloud", "--log-level", NULL };
	char *extra[] = { "rezuscloud", "serve", NULL };
	char *badlevel[] = { "rezuscloud", "--log-level", "loud", NULL };
	char *help[] = { "rezuscloud", "--help", NULL };
	char *envp[] = { NULL };
	rz_cmdline_t cl;
	rz_config_t cfg;
	rz_err_t err = { 0 };

	ck_assert_int_eq(configure(unknown, envp, &cl, &cfg, &err), RZ_EXIT_USAGE);
	ck_assert_str_eq(err.msg, "unknown option '--frobnicate' (see --help)");
	ck_assert_int_eq(configure(missing, envp, &cl, &cfg, &err), RZ_EXIT_USAGE);
	ck_assert_str_eq(err.msg, "option '--log-level' needs a value");
	ck_assert_int_eq(configure(extra, envp, &cl, &cfg, &err), RZ_EXIT_USAGE);
	ck_assert_str_eq(err.msg, "unexpected argument 'serve' (see --help)");
	ck_assert_int_eq(configure(badlevel, envp, &cl, &cfg, &err), RZ_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--log-level: log.level: invalid value 'loud'"));
	rz_config_free(&cfg);
	ck_assert_int_eq(configure(help, envp, &cl, &cfg, &err), 0);
	ck_assert(cl.help);
}
END_TEST

/* A daemon on port 0 in the temp dir with conf_text as its file; caller frees both. */
static rz_daemon_t *start_with(rz_config_t *cfg, const char *sub, const char *conf_text)
{
	char ddir[512], *argv[] = { "rezuscloud", "--listen", "127.0.0.1:0", "--data-dir",
		                    ddir,         "-c",       NULL,          NULL };
	char conf[512];
	char *envp[] = { NULL };
	rz_cmdline_t cl;
	rz_daemon_t *d = NULL;
	rz_err_t err = { 0 };

	snprintf(ddir, sizeof(ddir), "%s/%s", dir, sub);
	snprintf(conf, sizeof(conf), "%s/empty.conf", dir);
	rzt_write_file(conf, conf_text);
	argv[6] = conf;
	ck_assert_int_eq(configure(argv, envp, &cl, cfg, &err), 0);
	ck_assert_msg(rz_daemon_start(&d, cfg, &err) == 0, "start failed: %s", err.msg);
	return d;
}

/* ... with a tofu.binary that exists (/bin/sh stands in: nothing runs it here) and the
 * sim plugin (a daemon with no plugin is not ready). */
static rz_daemon_t *start(rz_config_t *cfg, const char *sub)
{
	static char text[1024];
	const char *top = getenv("top_builddir");

	snprintf(text, sizeof(text),
	         "tofu:\n  binary: /bin/sh\nplugin_dir: %s/plugins\nplugins:\n  sim: {}\n",
	         top ? top : ".");
	return start_with(cfg, sub, text);
}

START_TEST(test_start_serves_and_stops)
{
	rz_config_t cfg;
	rz_daemon_t *d = start(&cfg, "data/nested");
	struct event_base *base = rz_daemon_base(d);
	int port = rz_daemon_port(d);
	char path[600];
	struct stat st;
	rzt_response_t r;
	json_t *j;

	snprintf(path, sizeof(path), "%s/data/nested", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/data/nested/rezus.db", dir);
	ck_assert_int_eq(stat(path, &st), 0);

	rzt_request(base, port, "GET /healthz HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	ck_assert_str_eq(r.body, "ok\n");
	rzt_response_free(&r);
	rzt_request(base, port, "GET /readyz HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rzt_request(base, port, "GET /version HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	j = json_loads(r.body, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "version")), rz_version());
	ck_assert_str_eq(json_string_value(json_object_get(j, "commit")), rz_version_commit());
	ck_assert_str_eq(json_string_value(json_object_get(j, "abi")), "1.3");
	json_decref(j);
	rzt_response_free(&r);

	rz_daemon_stop(d);
	ck_assert_int_eq(rz_daemon_run(d), RZ_EXIT_OK); /* drains and returns */
	ck_assert_int_lt(rzt_connect_refused(port), 0);
	rz_daemon_free(d);
	rz_config_free(&cfg);
}
END_TEST

/* No tofu, no runs: /readyz says so (and names the setting), the rest still serves. */
START_TEST(test_missing_tofu_not_ready)
{
	rz_config_t cfg;
	rz_daemon_t *d = start_with(&cfg, "data/notofu", "tofu:\n  binary: /nonexistent/tofu\n");
	rzt_response_t r;

	rzt_request(rz_daemon_base(d), rz_daemon_port(d), "GET /readyz HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 503);
	ck_assert_ptr_nonnull(
	    strstr(r.body, "tofu.binary '/nonexistent/tofu' is not an executable file"));
	rzt_response_free(&r);
	rzt_request(rz_daemon_base(d), rz_daemon_port(d), "GET /healthz HTTP/1.1\r\n\r\n", &r);
	ck_assert_int_eq(r.code, 200);
	rzt_response_free(&r);
	rz_daemon_stop(d);
	ck_assert_int_eq(rz_daemon_run(d), RZ_EXIT_OK);
	rz_daemon_free(d);
	rz_config_free(&cfg);
}
END_TEST

START_TEST(test_second_instance_refused)
{
	rz_config_t cfg, cfg2;
	rz_daemon_t *d = start(&cfg, "shared");
	rz_daemon_t *d2 = NULL;
	rz_err_t err = { 0 };
	char expect[700];

	cfg2 = cfg; /* the same data dir */
	ck_assert_int_eq(rz_daemon_start(&d2, &cfg2, &err), RZ_ELOCKED);
	ck_assert_ptr_null(d2);
	snprintf(expect, sizeof(expect),
	         "data dir '%s/shared' is in use by another rezuscloud (pid %ld); "
	         "stop it or use another data dir",
	         dir, (long)getpid());
	ck_assert_str_eq(err.msg, expect);
	rz_daemon_free(d);
	/* once the first is gone the lock is free again */
	ck_assert_int_eq(rz_daemon_start(&d2, &cfg2, &err), 0);
	rz_daemon_free(d2);
	rz_config_free(&cfg);
}
END_TEST

START_TEST(test_newer_schema_refused)
{
	rz_config_t cfg;
	rz_daemon_t *d = start(&cfg, "schema");
	rz_db_t *db = NULL;
	rz_err_t err = { 0 };
	char path[600];

	rz_daemon_free(d);
	snprintf(path, sizeof(path), "%s/schema/rezus.db", dir);
	ck_assert_int_eq(rz_db_open(&db, path, &err), 0);
	ck_assert_int_eq(
	    rz_db_exec(db, "INSERT INTO schema_migrations VALUES (999, 'future', 'x')", &err), 0);
	rz_db_close(db);
	d = NULL;
	ck_assert_int_eq(rz_daemon_start(&d, &cfg, &err), RZ_ESCHEMA);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(
	    strstr(err.msg, "has schema version 999, newer than this rezuscloud"));
	rz_config_free(&cfg);
}
END_TEST

START_TEST(test_listen_conflict)
{
	rz_config_t cfg, cfg2;
	rz_daemon_t *d = start(&cfg, "a");
	rz_daemon_t *d2 = NULL;
	rz_err_t err = { 0 };
	char addr[64], expect[200];

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", rz_daemon_port(d));
	rz_daemon_free(start(&cfg2, "b")); /* a second config on its own data dir */
	ck_assert_int_eq(rz_config_set(&cfg2, "server.listen", addr, "test", &err), 0);
	ck_assert_int_eq(rz_daemon_start(&d2, &cfg2, &err), -EADDRINUSE);
	snprintf(expect, sizeof(expect), "http: listen on '%s' failed: Address already in use",
	         addr);
	ck_assert_str_eq(err.msg, expect);
	rz_daemon_free(d);
	rz_config_free(&cfg);
	rz_config_free(&cfg2);
}
END_TEST

/* Events beyond events.max_per_tenant (and past events.retention) go when the daemon
 * starts; it prunes them hourly after that. */
START_TEST(test_events_pruned_at_start)
{
	static const char conf[] = "tofu:\n  binary: /bin/sh\nevents:\n  max_per_tenant: 10\n";
	rz_config_t cfg;
	rz_daemon_t *d = start_with(&cfg, "events", conf);
	json_t *t = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "acme", "spec",
	                      "clusterProvider", "sim");
	json_t *out = NULL, *items;
	rz_err_t err = { 0 };
	char reason[16];

	ck_assert_int_eq(
	    rz_store_create(rz_daemon_store(d), rz_kind_by_name("Tenant"), t, NULL, &out, &err), 0);
	json_decref(out);
	json_decref(t);
	for (int i = 0; i < 12; i++) {
		snprintf(reason, sizeof(reason), "Step%02d", i);
		ck_assert_int_eq(rz_events_record(rz_daemon_store(d), "acme", "Tenant", "acme",
		                                  "Normal", reason, "", "engine"),
		                 0);
	}
	items = rz_store_list_all(rz_daemon_store(d), "Event", "acme");
	ck_assert_uint_eq(json_array_size(items), 12); /* nothing prunes while it runs */
	json_decref(items);
	rz_daemon_free(d);
	rz_config_free(&cfg);

	d = start_with(&cfg, "events", conf);
	items = rz_store_list_all(rz_daemon_store(d), "Event", "acme");
	ck_assert_uint_eq(json_array_size(items), 10);
	for (size_t i = 0; i < json_array_size(items); i++) { /* the two oldest went */
		const char *r =
		    json_string_value(json_object_get(json_array_get(items, i), "reason"));
		ck_assert_str_ne(r, "Step00");
		ck_assert_str_ne(r, "Step01");
	}
	json_decref(items);
	rz_daemon_free(d);
	rz_config_free(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = tcase_create("daemon");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_precedence_file_env_flag);
	tcase_add_test(tc, test_bad_config_is_usage_error);
	tcase_add_test(tc, test_command_line_errors);
	tcase_add_test(tc, test_start_serves_and_stops);
	tcase_add_test(tc, test_missing_tofu_not_ready);
	tcase_add_test(tc, test_second_instance_refused);
	tcase_add_test(tc, test_newer_schema_refused);
	tcase_add_test(tc, test_listen_conflict);
	tcase_add_test(tc, test_events_pruned_at_start);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
