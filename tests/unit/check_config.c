/* tests/unit/check_config.c - configuration: file, environment, flags, validation. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/config.h"
#include "tests/unit/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define SECOND 1000LL
#define MINUTE (60 * SECOND)
#define HOUR   (60 * MINUTE)
#define DAY    (24 * HOUR)

static rz_config_t cfg;
static rz_err_t err;

static void setup(void)
{
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
}

static void teardown(void)
{
	rz_config_free(&cfg);
}

static int load(const char *yaml)
{
	return rz_config_load_string(&cfg, "t.conf", yaml, strlen(yaml), &err);
}

static size_t list_len(char **list)
{
	size_t n = 0;

	ck_assert_ptr_nonnull(list);
	while (list[n] != NULL) {
		n++;
	}
	return n;
}

/* The plugin's config as compact JSON with sorted keys. */
static void assert_json(const json_t *v, const char *want)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, want);
	free(text);
}

/* ------------------------------------------------------------------ defaults */

START_TEST(test_defaults)
{
	ck_assert_ptr_null(cfg.source);
	ck_assert_str_eq(cfg.listen, "127.0.0.1:8080");
	ck_assert_str_eq(cfg.data_dir, RZ_LOCALSTATEDIR "/lib/rezus");
	ck_assert_str_eq(cfg.external_url, "");
	ck_assert_uint_eq(cfg.max_body, 16u << 20);
	ck_assert_int_eq(cfg.event_window, 10000);
	ck_assert_str_eq(cfg.admin_password_file, "");
	ck_assert_str_eq(cfg.jwt_secret_file, "");
	ck_assert_int_eq(cfg.session_ttl_ms, 24 * HOUR);
	ck_assert_str_eq(cfg.tofu_binary, "tofu");
	ck_assert_int_eq(cfg.tofu_workers, 4);
	ck_assert_int_eq(cfg.tofu_debounce_ms, 5 * SECOND);
	ck_assert_int_eq(cfg.tofu_resync_ms, 5 * MINUTE);
	ck_assert_int_eq(cfg.tofu_timeout_ms, 30 * MINUTE);
	ck_assert_int_eq(cfg.tofu_kill_grace_ms, 30 * SECOND);
	ck_assert_str_eq(cfg.tofu_plugin_cache_dir, "");
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 0);
	ck_assert_int_eq(cfg.tofu_state_history, 20);
	ck_assert_int_eq(cfg.tofu_destroy_approval, true);
	ck_assert_int_eq(cfg.audit_retention_ms, 90 * DAY);
	ck_assert_str_eq(cfg.backup_dir, "");
	ck_assert_str_eq(cfg.web_dir, "");
	ck_assert_int_eq(cfg.backup_interval_ms, 24 * HOUR);
	ck_assert_int_eq(cfg.backup_keep, 7);
	ck_assert_str_eq(cfg.log_level, "info");
	ck_assert_str_eq(cfg.log_file, "");
	ck_assert_str_eq(cfg.plugin_dir, RZ_PLUGIN_DIR);
	ck_assert_uint_eq(cfg.n_plugins, 0);
	ck_assert_ptr_null(rz_config_plugin(&cfg, "sim"));
	ck_assert_int_eq(rz_config_validate(&cfg, &err), 0);
}
END_TEST

START_TEST(test_embedded)
{
	const rz_config_plugin_t *sim;

	ck_assert_int_eq(rz_config_embedded(&cfg), 0);
	ck_assert_ptr_null(cfg.source);
	ck_assert_str_eq(cfg.data_dir, "./rezus-data");
	ck_assert_str_eq(cfg.plugin_dir, RZ_BUILD_PLUGIN_DIR);
	ck_assert_str_eq(cfg.listen, "127.0.0.1:8080");
	ck_assert_uint_eq(cfg.n_plugins, 1);
	sim = rz_config_plugin(&cfg, "sim");
	ck_assert_ptr_eq(sim, &cfg.plugins[0]);
	ck_assert_str_eq(sim->name, "sim");
	ck_assert_int_eq(sim->required, false);
	ck_assert_str_eq(sim->source, "default");
	assert_json(sim->config, "{}");
	ck_assert_int_eq(rz_config_validate(&cfg, &err), 0);
}
END_TEST

START_TEST(test_free_zeroes)
{
	rz_config_t zero;

	memset(&zero, 0, sizeof(zero));
	ck_assert_int_eq(rz_config_embedded(&cfg), 0);
	rz_config_free(&cfg);
	ck_assert_int_eq(memcmp(&cfg, &zero, sizeof(cfg)), 0);
	rz_config_free(&cfg);
	ck_assert_int_eq(memcmp(&cfg, &zero, sizeof(cfg)), 0);
	rz_config_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------ a full file */

static const char full_file[] = "# every key\n"                                            /* 1 */
                                "server:\n"                                                /* 2 */
                                "  listen: 0.0.0.0:9090\n"                                 /* 3 */
                                "  data_dir: /srv/rezus\n"                                 /* 4 */
                                "  external_url: \"https://rz.example\"\n"                 /* 5 */
                                "  max_body: 1MiB\n"                                       /* 6 */
                                "auth:\n"                                                  /* 7 */
                                "  admin_password_file: /etc/rezus/pw\n"                   /* 8 */
                                "  jwt_secret_file: /etc/rezus/jwt\n"                      /* 9 */
                                "  session_ttl: 12h\n"                                     /* 10 */
                                "tofu:\n"                                                  /* 11 */
                                "  binary: /usr/bin/terraform\n"                           /* 12 */
                                "  workers: 8\n"                                           /* 13 */
                                "  debounce: 500ms\n"                                      /* 14 */
                                "  resync: 0\n"                                            /* 15 */
                                "  timeout: 1h30m\n"                                       /* 16 */
                                "  kill_grace: 10s\n"                                      /* 17 */
                                "  plugin_cache_dir: /var/cache/tf\n"                      /* 18 */
                                "  env_passthrough: [\"TF_VAR_*\", AWS_PROFILE]\n"         /* 19 */
                                "  state_history: 0\n"                                     /* 20 */
                                "  destroy_approval: no\n"                                 /* 21 */
                                "audit:\n"                                                 /* 22 */
                                "  retention: 30d\n"                                       /* 23 */
                                "backup:\n"                                                /* 24 */
                                "  dir: /backup\n"                                         /* 25 */
                                "  interval: 6h\n"                                         /* 26 */
                                "  keep: 1000\n"                                           /* 27 */
                                "log:\n"                                                   /* 28 */
                                "  level: debug\n"                                         /* 29 */
                                "  file: /var/log/rezus.log\n"                             /* 30 */
                                "plugin_dir: /opt/rezus/plugins\n"                         /* 31 */
                                "plugins:\n"                                               /* 32 */
                                "  talos: {}\n"                                            /* 33 */
                                "  oci:     { required: false, region: eu-frankfurt-1 }\n" /* 34 */
                                "  openstack:\n"                                           /* 35 */
                                "  metal:\n"                                               /* 36 */
                                "    required: yes\n"                                      /* 37 */
                                "    pools: [a, b]\n";                                     /* 38 */

static void assert_full_settings(void)
{
	ck_assert_str_eq(cfg.listen, "0.0.0.0:9090");
	ck_assert_str_eq(cfg.data_dir, "/srv/rezus");
	ck_assert_str_eq(cfg.external_url, "https://rz.example");
	ck_assert_uint_eq(cfg.max_body, 1u << 20);
	ck_assert_str_eq(cfg.admin_password_file, "/etc/rezus/pw");
	ck_assert_str_eq(cfg.jwt_secret_file, "/etc/rezus/jwt");
	ck_assert_int_eq(cfg.session_ttl_ms, 12 * HOUR);
	ck_assert_str_eq(cfg.tofu_binary, "/usr/bin/terraform");
	ck_assert_int_eq(cfg.tofu_workers, 8);
	ck_assert_int_eq(cfg.tofu_debounce_ms, 500);
	ck_assert_int_eq(cfg.tofu_resync_ms, 0);
	ck_assert_int_eq(cfg.tofu_timeout_ms, 90 * MINUTE);
	ck_assert_int_eq(cfg.tofu_kill_grace_ms, 10 * SECOND);
	ck_assert_str_eq(cfg.tofu_plugin_cache_dir, "/var/cache/tf");
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 2);
	ck_assert_str_eq(cfg.tofu_env_passthrough[0], "TF_VAR_*");
	ck_assert_str_eq(cfg.tofu_env_passthrough[1], "AWS_PROFILE");
	ck_assert_int_eq(cfg.tofu_state_history, 0);
	ck_assert_int_eq(cfg.tofu_destroy_approval, false);
	ck_assert_int_eq(cfg.audit_retention_ms, 30 * DAY);
	ck_assert_str_eq(cfg.backup_dir, "/backup");
	ck_assert_int_eq(cfg.backup_interval_ms, 6 * HOUR);
	ck_assert_int_eq(cfg.backup_keep, 1000);
	ck_assert_str_eq(cfg.log_level, "debug");
	ck_assert_str_eq(cfg.log_file, "/var/log/rezus.log");
	ck_assert_str_eq(cfg.plugin_dir, "/opt/rezus/plugins");
}

static void assert_full_plugins(const char *path)
{
	static const struct {
		const char *name;
		bool required;
		int line;
		const char *json;
	} want[] = {
		{ "metal", true, 36, "{\"pools\":[\"a\",\"b\"]}" },
		{ "oci", false, 34, "{\"region\":\"eu-frankfurt-1\"}" },
		{ "openstack", true, 35, "{}" },
		{ "talos", true, 33, "{}" },
	};

	ck_assert_uint_eq(cfg.n_plugins, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		char source[600];

		snprintf(source, sizeof(source), "%s:%d", path, want[i].line);
		ck_assert_str_eq(cfg.plugins[i].name, want[i].name);
		ck_assert_int_eq(cfg.plugins[i].required, want[i].required);
		ck_assert_str_eq(cfg.plugins[i].source, source);
		assert_json(cfg.plugins[i].config, want[i].json);
		ck_assert_ptr_eq(rz_config_plugin(&cfg, want[i].name), &cfg.plugins[i]);
	}
	ck_assert_ptr_null(rz_config_plugin(&cfg, "sim"));
	ck_assert_ptr_null(rz_config_plugin(&cfg, "zzz"));
}

START_TEST(test_full_file)
{
	char *dir = rzt_tmpdir();
	char path[512];

	snprintf(path, sizeof(path), "%s/rezus.conf", dir);
	rzt_write_file(path, full_file);
	ck_assert_int_eq(rz_config_load_file(&cfg, path, &err), 0);
	ck_assert_str_eq(cfg.source, path);
	assert_full_settings();
	assert_full_plugins(path);
	ck_assert_int_eq(rz_config_validate(&cfg, &err), 0);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

static const char *const no_change_inputs[] = {
	"",          "# only a comment\n",  "---\n",     "--- ~\n",
	"server:\n", "server: {}\nauth:\n", "\n\n   \n",
};

START_TEST(test_empty_input)
{
	ck_assert_int_eq(load(no_change_inputs[_i]), 0);
	ck_assert_str_eq(cfg.source, "t.conf");
	ck_assert_str_eq(cfg.listen, "127.0.0.1:8080");
	ck_assert_int_eq(cfg.tofu_workers, 4);
	ck_assert_uint_eq(cfg.n_plugins, 0);
}
END_TEST

START_TEST(test_null_strings)
{
	ck_assert_int_eq(rz_config_set(&cfg, "log.file", "/x", "t", &err), 0);
	ck_assert_int_eq(rz_config_set(&cfg, "server.external_url", "/y", "t", &err), 0);
	ck_assert_int_eq(rz_config_set(&cfg, "backup.dir", "/z", "t", &err), 0);
	ck_assert_int_eq(load("log:\n  file:\nserver:\n  external_url: ~\n"
	                      "backup:\n  dir: null\ntofu:\n  plugin_cache_dir: \"~\"\n"),
	                 0);
	ck_assert_str_eq(cfg.log_file, "");
	ck_assert_str_eq(cfg.external_url, "");
	ck_assert_str_eq(cfg.backup_dir, "");
	ck_assert_str_eq(cfg.tofu_plugin_cache_dir, "~");
}
END_TEST

START_TEST(test_lists)
{
	ck_assert_int_eq(load("tofu:\n  env_passthrough:\n    - A\n    - 'B C'\n    - \"*\"\n"), 0);
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 3);
	ck_assert_str_eq(cfg.tofu_env_passthrough[0], "A");
	ck_assert_str_eq(cfg.tofu_env_passthrough[1], "B C");
	ck_assert_str_eq(cfg.tofu_env_passthrough[2], "*");
	ck_assert_int_eq(load("tofu:\n  env_passthrough: []\n"), 0);
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 0);
	ck_assert_int_eq(load("tofu:\n  env_passthrough: [X]\n"), 0);
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 1);
	ck_assert_int_eq(load("tofu:\n  env_passthrough:\n"), 0);
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 0);
}
END_TEST

static const struct {
	const char *text;
	bool value;
} bool_words[] = {
	{ "true", true },   { "True", true },   { "YES", true }, { "on", true },
	{ "false", false }, { "FALSE", false }, { "no", false }, { "Off", false },
};

START_TEST(test_bool_words)
{
	char yaml[128];

	snprintf(yaml, sizeof(yaml), "tofu:\n  destroy_approval: %s\n", bool_words[_i].text);
	ck_assert_int_eq(rz_config_set(&cfg, "tofu.destroy_approval",
	                               bool_words[_i].value ? "false" : "true", "t", &err),
	                 0);
	ck_assert_int_eq(load(yaml), 0);
	ck_assert_int_eq(cfg.tofu_destroy_approval, bool_words[_i].value);
}
END_TEST

/* ------------------------------------------------------------------ errors in files */

static const struct {
	const char *yaml;
	int code;
	const char *msg;
} file_errors[] = {
	/* unknown keys */
	{ "bogus: 1\n", REZUS_ECONFIG, "t.conf:1: unknown key 'bogus'" },
	{ "server:\n  listen: a:1\n  listn: x\n", REZUS_ECONFIG,
	  "t.conf:3: unknown key 'server.listn'" },
	{ "server.listen: x\n", REZUS_ECONFIG, "t.conf:1: unknown key 'server.listen'" },
	{ "tofu:\n  server: {}\n", REZUS_ECONFIG, "t.conf:2: unknown key 'tofu.server'" },
	/* bad types */
	{ "tofu:\n  workers:\n    a: 1\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.workers: expected an integer, got a mapping" },
	{ "server:\n  listen: [a]\n", REZUS_ECONFIG,
	  "t.conf:2: server.listen: expected a string, got a list" },
	{ "tofu:\n  destroy_approval: [true]\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.destroy_approval: expected a boolean, got a list" },
	{ "tofu:\n  debounce: {a: 1}\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.debounce: expected a duration such as 5s, 30m, 24h, got a mapping" },
	{ "server:\n  max_body: [1]\n", REZUS_ECONFIG,
	  "t.conf:2: server.max_body: expected a size such as 16MiB, got a list" },
	{ "tofu:\n  env_passthrough: TF_VAR_x\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.env_passthrough: expected a list of strings, got a scalar" },
	{ "tofu:\n  env_passthrough:\n    - a\n    - {b: c}\n", REZUS_ECONFIG,
	  "t.conf:4: tofu.env_passthrough: expected a list of strings, got a mapping" },
	{ "tofu: 4\n", REZUS_ECONFIG, "t.conf:1: tofu: expected a mapping, got a scalar" },
	{ "log:\n  - level\n", REZUS_ECONFIG, "t.conf:1: log: expected a mapping, got a list" },
	{ "plugins: talos\n", REZUS_ECONFIG,
	  "t.conf:1: plugins: expected a mapping, got a scalar" },
	{ "plugins:\n  talos: [a]\n", REZUS_ECONFIG,
	  "t.conf:2: plugins.talos: expected a mapping, got a list" },
	{ "plugins:\n  oci: {required: [a]}\n", REZUS_ECONFIG,
	  "t.conf:2: plugins.oci.required: expected a boolean, got a list" },
	{ "? [a]\n: b\n", REZUS_ECONFIG, "t.conf:1: expected a string as key, got a list" },
	{ "plugins:\n  oci:\n    ? {a: 1}\n    : b\n", REZUS_ECONFIG,
	  "t.conf:3: expected a string as key, got a mapping" },
	/* bad values */
	{ "tofu:\n  workers: 0\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.workers: invalid value '0': must be between 1 and 256" },
	{ "tofu:\n  workers: 257\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.workers: invalid value '257': must be between 1 and 256" },
	{ "tofu:\n  workers: four\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.workers: invalid value 'four': expected an integer" },
	{ "tofu:\n  workers: 4.5\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.workers: invalid value '4.5': expected an integer" },
	{ "tofu:\n  workers: 0x10\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.workers: invalid value '0x10': expected an integer" },
	{ "tofu:\n  workers:\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.workers: invalid value '': expected an integer" },
	{ "tofu:\n  state_history: 99999999999999999999\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.state_history: invalid value '99999999999999999999': must be between 0 "
	  "and 10000" },
	{ "backup:\n  keep: -1\n", REZUS_ECONFIG,
	  "t.conf:2: backup.keep: invalid value '-1': must be between 1 and 1000" },
	{ "tofu:\n  debounce: soon\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.debounce: invalid duration 'soon' (use e.g. 5s, 30m, 24h)" },
	{ "tofu:\n  timeout: 0\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.timeout: invalid value '0': must be greater than zero" },
	{ "server:\n  max_body: 12XB\n", REZUS_ECONFIG,
	  "t.conf:2: server.max_body: invalid size '12XB' (use e.g. 512KiB, 16MiB)" },
	{ "server:\n  max_body: 0KiB\n", REZUS_ECONFIG,
	  "t.conf:2: server.max_body: invalid value '0KiB': must be greater than zero" },
	{ "tofu:\n  destroy_approval: maybe\n", REZUS_ECONFIG,
	  "t.conf:2: tofu.destroy_approval: invalid boolean 'maybe' (use true or false)" },
	{ "log:\n  level: loud\n", REZUS_ECONFIG,
	  "t.conf:2: log.level: invalid value 'loud': use debug, info, notice, warning, err, crit, "
	  "alert or emerg" },
	{ "server:\n  listen: \"a\\0b\"\n", REZUS_ECONFIG,
	  "t.conf:2: server.listen: invalid value: contains a NUL" },
	{ "plugins:\n  oci: {required: maybe}\n", REZUS_ECONFIG,
	  "t.conf:2: plugins.oci.required: invalid boolean 'maybe' (use true or false)" },
	{ "plugins:\n  oci: {n: 99999999999999999999}\n", REZUS_ECONFIG,
	  "t.conf:2: plugins.oci.n: invalid value '99999999999999999999': number out of range" },
	{ "plugins:\n  oci: {x: [1, 2e999]}\n", REZUS_ECONFIG,
	  "t.conf:2: plugins.oci.x[1]: invalid value '2e999': number out of range" },
	/* plugin names */
	{ "plugins:\n  Talos: {}\n", REZUS_ECONFIG,
	  "t.conf:2: plugins: invalid plugin name 'Talos' (use 1 to 63 of a-z, 0-9, _ and -)" },
	{ "plugins:\n  a.b: {}\n", REZUS_ECONFIG,
	  "t.conf:2: plugins: invalid plugin name 'a.b' (use 1 to 63 of a-z, 0-9, _ and -)" },
	{ "plugins:\n  \"\": {}\n", REZUS_ECONFIG,
	  "t.conf:2: plugins: invalid plugin name '' (use 1 to 63 of a-z, 0-9, _ and -)" },
	{ "plugins:\n  a234567890123456789012345678901234567890123456789012345678901234: {}\n",
	  REZUS_ECONFIG,
	  "t.conf:2: plugins: invalid plugin name "
	  "'a234567890123456789012345678901234567890123456789012345678901234' (use 1 to 63 of "
	  "a-z, 0-9, _ and -)" },
	/* duplicates */
	{ "server:\n  listen: a:1\n  listen: b:2\n", REZUS_ECONFIG,
	  "t.conf:3: duplicate key 'server.listen'" },
	{ "server: {}\nauth: {}\nserver: {}\n", REZUS_ECONFIG, "t.conf:3: duplicate key 'server'" },
	{ "plugins:\n  oci: {}\n  oci: {}\n", REZUS_ECONFIG,
	  "t.conf:3: duplicate key 'plugins.oci'" },
	{ "plugins:\n  oci:\n    a: {x: 1, x: 2}\n", REZUS_ECONFIG,
	  "t.conf:3: duplicate key 'plugins.oci.a.x'" },
	{ "plugins:\n  oci:\n    required: false\n    required: true\n", REZUS_ECONFIG,
	  "t.conf:4: duplicate key 'plugins.oci.required'" },
	/* YAML syntax */
	{ "server:\n  listen: a\n bad: 1\n", RZ_EPARSE,
	  "t.conf:3:2: YAML syntax error: did not find expected key" },
	{ "server: {listen: a\n", RZ_EPARSE,
	  "t.conf:2:1: YAML syntax error: did not find expected ',' or '}'" },
	{ "server:\n  listen: \"a\n", RZ_EPARSE,
	  "t.conf:3:1: YAML syntax error: found unexpected end of stream" },
	{ "server:\n  listen: \xff\n", RZ_EPARSE,
	  "t.conf:2:11: YAML syntax error: invalid leading UTF-8 octet" },
	/* document shape */
	{ "- a\n", REZUS_ECONFIG, "t.conf:1: expected a mapping at the top level, got a list" },
	{ "hello\n", REZUS_ECONFIG, "t.conf:1: expected a mapping at the top level, got a scalar" },
	{ "server: {}\n---\nauth: {}\n", REZUS_ECONFIG,
	  "t.conf:2: more than one YAML document (remove the '---')" },
	{ "server:\n  listen: &a 1.2.3.4:80\n  data_dir: *a\n", REZUS_ECONFIG,
	  "t.conf:3: YAML aliases are not supported" },
	{ "plugins:\n  a: &x {k: 1}\n  b: *x\n", REZUS_ECONFIG,
	  "t.conf:3: YAML aliases are not supported" },
	{ "plugins:\n  a: {k: &x [*x]}\n", REZUS_ECONFIG,
	  "t.conf:2: YAML aliases are not supported" },
};

START_TEST(test_file_errors)
{
	ck_assert_int_eq(load(file_errors[_i].yaml), file_errors[_i].code);
	ck_assert_int_eq(err.code, file_errors[_i].code);
	ck_assert_str_eq(err.msg, file_errors[_i].msg);
	ck_assert_ptr_null(cfg.source);
}
END_TEST

START_TEST(test_nesting_limit)
{
	char yaml[512];
	char want[512];
	int n = 0;
	int m = 0;

	n += snprintf(yaml + n, sizeof(yaml) - n, "plugins:\n  a: {k: ");
	m += snprintf(want + m, sizeof(want) - m, "t.conf:2: plugins.a.k");
	for (int i = 0; i < 70; i++) {
		n += snprintf(yaml + n, sizeof(yaml) - n, "[");
	}
	for (int i = 0; i < 70; i++) {
		n += snprintf(yaml + n, sizeof(yaml) - n, "]");
	}
	snprintf(yaml + n, sizeof(yaml) - n, "}\n");
	for (int i = 0; i < 63; i++) {
		m += snprintf(want + m, sizeof(want) - m, "[0]");
	}
	snprintf(want + m, sizeof(want) - m, ": nested more than 64 levels deep");
	ck_assert_int_eq(load(yaml), REZUS_ECONFIG);
	ck_assert_str_eq(err.msg, want);
}
END_TEST

START_TEST(test_missing_file)
{
	char *dir = rzt_tmpdir();
	char path[512];
	char want[600];

	snprintf(path, sizeof(path), "%s/nope.conf", dir);
	snprintf(want, sizeof(want), "%s: cannot read: No such file or directory", path);
	ck_assert_int_eq(rz_config_load_file(&cfg, path, &err), -ENOENT);
	ck_assert_int_eq(err.code, -ENOENT);
	ck_assert_str_eq(err.msg, want);

	snprintf(want, sizeof(want), "%s: cannot read: Is a directory", dir);
	ck_assert_int_eq(rz_config_load_file(&cfg, dir, &err), -EISDIR);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(cfg.source);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_file_error_with_path)
{
	char *dir = rzt_tmpdir();
	char path[512];
	char want[600];

	snprintf(path, sizeof(path), "%s/rezus.conf", dir);
	rzt_write_file(path, "# settings\ntofu:\n  workers: 0\n");
	snprintf(want, sizeof(want),
	         "%s:3: tofu.workers: invalid value '0': must be between 1 and 256", path);
	ck_assert_int_eq(rz_config_load_file(&cfg, path, &err), REZUS_ECONFIG);
	ck_assert_str_eq(err.msg, want);
	rzt_rmrf(dir);
	free(dir);
}
END_TEST

/* ------------------------------------------------------------------ plugins */

START_TEST(test_plugin_subtree)
{
	static const char yaml[] = "plugins:\n"
	                           "  oci:\n"
	                           "    required: false\n"
	                           "    region: eu-frankfurt-1\n"
	                           "    count: 3\n"
	                           "    negative: -7\n"
	                           "    ratio: 1.5\n"
	                           "    exp: 1e3\n"
	                           "    on: true\n"
	                           "    off: False\n"
	                           "    yes_is_text: yes\n"
	                           "    nothing: ~\n"
	                           "    empty:\n"
	                           "    quoted_int: '3'\n"
	                           "    quoted_bool: \"true\"\n"
	                           "    tagged: !!str 12\n"
	                           "    list: [1, a, {x: y}, [z]]\n"
	                           "    nested:\n"
	                           "      deeper:\n"
	                           "        required: true\n";
	const rz_config_plugin_t *oci;

	ck_assert_int_eq(load(yaml), 0);
	ck_assert_uint_eq(cfg.n_plugins, 1);
	oci = rz_config_plugin(&cfg, "oci");
	ck_assert_ptr_nonnull(oci);
	ck_assert_int_eq(oci->required, false);
	ck_assert_str_eq(oci->source, "t.conf:2");
	ck_assert_ptr_null(json_object_get(oci->config, "required"));
	assert_json(oci->config,
	            "{\"count\":3,\"empty\":null,\"exp\":1000.0,\"list\":[1,\"a\",{\"x\":"
	            "\"y\"},[\"z\"]],\"negative\":-7,\"nested\":{\"deeper\":{"
	            "\"required\":true}},\"nothing\":null,\"off\":false,\"on\":true,"
	            "\"quoted_bool\":\"true\",\"quoted_int\":\"3\",\"ratio\":1.5,"
	            "\"region\":\"eu-frankfurt-1\",\"tagged\":\"12\",\"yes_is_text\":"
	            "\"yes\"}");
}
END_TEST

START_TEST(test_plugins_replace)
{
	ck_assert_int_eq(rz_config_embedded(&cfg), 0);
	ck_assert_int_eq(load("tofu:\n  workers: 2\n"), 0);
	ck_assert_uint_eq(cfg.n_plugins, 1);
	ck_assert_str_eq(cfg.plugins[0].name, "sim");

	ck_assert_int_eq(load("plugins:\n  talos: {}\n  oci: {}\n  bad: [1]\n"), REZUS_ECONFIG);
	ck_assert_uint_eq(cfg.n_plugins, 1);
	ck_assert_str_eq(cfg.plugins[0].name, "sim");

	ck_assert_int_eq(load("plugins:\n  zeta: {}\n  talos: {}\n  alpha:\n"), 0);
	ck_assert_uint_eq(cfg.n_plugins, 3);
	ck_assert_str_eq(cfg.plugins[0].name, "alpha");
	ck_assert_str_eq(cfg.plugins[1].name, "talos");
	ck_assert_str_eq(cfg.plugins[2].name, "zeta");
	ck_assert_str_eq(cfg.plugins[0].source, "t.conf:4");
	ck_assert_int_eq(cfg.plugins[0].required, true);
	assert_json(cfg.plugins[0].config, "{}");
	ck_assert_ptr_null(rz_config_plugin(&cfg, "sim"));

	ck_assert_int_eq(load("plugins:\n"), 0);
	ck_assert_uint_eq(cfg.n_plugins, 0);
	ck_assert_ptr_null(rz_config_plugin(&cfg, "talos"));
}
END_TEST

/* ------------------------------------------------------------------ durations and sizes */

static const struct {
	const char *text;
	int64_t ms;
} durations[] = {
	{ "0", 0 },
	{ "0s", 0 },
	{ "500ms", 500 },
	{ "5s", 5 * SECOND },
	{ "30m", 30 * MINUTE },
	{ "24h", 24 * HOUR },
	{ "90d", 90 * DAY },
	{ "1h30m", 90 * MINUTE },
	{ "1d2h3m4s5ms", DAY + 2 * HOUR + 3 * MINUTE + 4 * SECOND + 5 },
	{ "1m1ms", MINUTE + 1 },
	{ "9223372036854775807ms", INT64_MAX },
	{ "106751991167d", 106751991167LL * DAY },
};

START_TEST(test_duration_valid)
{
	int64_t ms = -1;

	ck_assert_int_eq(rz_parse_duration(durations[_i].text, &ms), 0);
	ck_assert_int_eq(ms, durations[_i].ms);
}
END_TEST

static const char *const bad_durations[] = {
	"",
	"5",
	"00",
	"-5s",
	"+5s",
	"5 s",
	" 5s",
	"5s ",
	"5x",
	"5min",
	"1.5h",
	"s",
	"h5",
	"5S",
	"1h30",
	"9223372036854775808ms",
	"106751991168d",
	"99999999999999999999s",
	"9223372036854775807ms1ms",
	"soon",
};

START_TEST(test_duration_invalid)
{
	int64_t ms = 42;

	ck_assert_int_eq(rz_parse_duration(bad_durations[_i], &ms), -EINVAL);
	ck_assert_int_eq(ms, 42);
}
END_TEST

static const struct {
	const char *text;
	uint64_t bytes;
} sizes[] = {
	{ "0", 0 },
	{ "512", 512 },
	{ "512B", 512 },
	{ "64KiB", 64 << 10 },
	{ "16MiB", 16 << 20 },
	{ "1GiB", 1ull << 30 },
	{ "2TiB", 2ull << 40 },
	{ "10KB", 10000 },
	{ "10MB", 10000000 },
	{ "3GB", 3000000000ull },
	{ "1TB", 1000000000000ull },
	{ "1K", 1024 },
	{ "2M", 2 << 20 },
	{ "1G", 1ull << 30 },
	{ "18446744073709551615", UINT64_MAX },
	{ "16777215TiB", 16777215ull << 40 },
};

START_TEST(test_size_valid)
{
	uint64_t bytes = 1;

	ck_assert_int_eq(rz_parse_size(sizes[_i].text, &bytes), 0);
	ck_assert_uint_eq(bytes, sizes[_i].bytes);
}
END_TEST

static const char *const bad_sizes[] = {
	"",
	"KiB",
	"12XB",
	"-1",
	"+1",
	"1 MiB",
	" 1",
	"1.5MiB",
	"16mib",
	"16Mi",
	"1KiBB",
	"18446744073709551616",
	"16777216TiB",
	"99999999999999999999999",
	"18446744073709551615B1",
};

START_TEST(test_size_invalid)
{
	uint64_t bytes = 42;

	ck_assert_int_eq(rz_parse_size(bad_sizes[_i], &bytes), -EINVAL);
	ck_assert_uint_eq(bytes, 42);
}
END_TEST

/* ------------------------------------------------------------------ environment and flags */

START_TEST(test_precedence)
{
	char *env[] = { "REZUSCLOUD_TOFU_WORKERS=16", "REZUSCLOUD_LOG_LEVEL=notice", NULL };

	ck_assert_int_eq(load("tofu:\n  workers: 8\n  debounce: 1s\nlog:\n  level: debug\n"), 0);
	ck_assert_int_eq(cfg.tofu_workers, 8);
	ck_assert_int_eq(rz_config_apply_env(&cfg, env, &err), 0);
	ck_assert_int_eq(cfg.tofu_workers, 16);
	ck_assert_str_eq(cfg.log_level, "notice");
	ck_assert_int_eq(cfg.tofu_debounce_ms, SECOND);
	ck_assert_int_eq(rz_config_set(&cfg, "tofu.workers", "32", "--workers", &err), 0);
	ck_assert_int_eq(cfg.tofu_workers, 32);
	ck_assert_str_eq(cfg.log_level, "notice");
}
END_TEST

START_TEST(test_env_every_kind)
{
	char *env[] = {
		"REZUSCLOUD_SERVER_MAX_BODY=1MiB",
		"REZUSCLOUD_PLUGIN_DIR=/p",
		"REZUSCLOUD_AUTH_SESSION_TTL=1h",
		"REZUSCLOUD_TOFU_DESTROY_APPROVAL=off",
		"REZUSCLOUD_SERVER_EXTERNAL_URL=https://x.example:8443/a=b",
		"REZUSCLOUD_BACKUP_KEEP=3",
		NULL,
	};

	ck_assert_int_eq(rz_config_apply_env(&cfg, env, &err), 0);
	ck_assert_uint_eq(cfg.max_body, 1u << 20);
	ck_assert_str_eq(cfg.plugin_dir, "/p");
	ck_assert_int_eq(cfg.session_ttl_ms, HOUR);
	ck_assert_int_eq(cfg.tofu_destroy_approval, false);
	ck_assert_str_eq(cfg.external_url, "https://x.example:8443/a=b");
	ck_assert_int_eq(cfg.backup_keep, 3);
}
END_TEST

START_TEST(test_env_aliases)
{
	char *aliases[] = { "REZUSCLOUD_ADDR=0.0.0.0:80", "REZUSCLOUD_DATA_DIR=/d", NULL };
	char *both[] = { "REZUSCLOUD_SERVER_LISTEN=[::1]:1", "REZUSCLOUD_ADDR=10.0.0.1:2",
		         "REZUSCLOUD_DATA_DIR=/alias", "REZUSCLOUD_SERVER_DATA_DIR=/full", NULL };

	ck_assert_int_eq(rz_config_apply_env(&cfg, aliases, &err), 0);
	ck_assert_str_eq(cfg.listen, "0.0.0.0:80");
	ck_assert_str_eq(cfg.data_dir, "/d");
	ck_assert_int_eq(rz_config_apply_env(&cfg, both, &err), 0);
	ck_assert_str_eq(cfg.listen, "[::1]:1");
	ck_assert_str_eq(cfg.data_dir, "/full");
}
END_TEST

START_TEST(test_env_skipped)
{
	char *env[] = {
		"PATH=/usr/bin",
		"HOME=/root",
		"REZUSCLOUD_CONFIG=/etc/other.conf",
		"REZUSCLOUD_ADMIN_PASSWORD=hunter2",
		"REZUSCLOUD_SERVER=http://127.0.0.1:8080",
		"REZUSCLOUD_TOKEN=abc",
		"REZUSCLOUD_TOFU_WORKERS",
		"rezuscloud_tofu_workers=9",
		"XREZUSCLOUD_TOFU_WORKERS=9",
		NULL,
	};

	ck_assert_int_eq(rz_config_apply_env(&cfg, env, &err), 0);
	ck_assert_int_eq(cfg.tofu_workers, 4);
	ck_assert_str_eq(cfg.listen, "127.0.0.1:8080");
	ck_assert_int_eq(rz_config_apply_env(&cfg, NULL, &err), 0);
}
END_TEST

static const struct {
	char *entry;
	const char *msg;
} env_errors[] = {
	{ "REZUSCLOUD_BOGUS=1",
	  "environment REZUSCLOUD_BOGUS: unknown setting (see rezus.conf(5))" },
	{ "REZUSCLOUD_=1", "environment REZUSCLOUD_: unknown setting (see rezus.conf(5))" },
	{ "REZUSCLOUD_PLUGINS=a",
	  "environment REZUSCLOUD_PLUGINS: unknown setting (see rezus.conf(5))" },
	{ "REZUSCLOUD_TOFU=x", "environment REZUSCLOUD_TOFU: unknown setting (see rezus.conf(5))" },
	{ "REZUSCLOUD_tofu_workers=1",
	  "environment REZUSCLOUD_tofu_workers: unknown setting (see rezus.conf(5))" },
	{ "REZUSCLOUD_TOFU_WORKERS=x", "environment REZUSCLOUD_TOFU_WORKERS: tofu.workers: invalid "
	                               "value 'x': expected an integer" },
	{ "REZUSCLOUD_TOFU_WORKERS=", "environment REZUSCLOUD_TOFU_WORKERS: tofu.workers: invalid "
	                              "value '': expected an integer" },
	{ "REZUSCLOUD_TOFU_TIMEOUT=forever", "environment REZUSCLOUD_TOFU_TIMEOUT: tofu.timeout: "
	                                     "invalid duration 'forever' (use e.g. 5s, 30m, 24h)" },
	{ "REZUSCLOUD_LOG_LEVEL=loud",
	  "environment REZUSCLOUD_LOG_LEVEL: log.level: invalid value 'loud': use debug, info, "
	  "notice, warning, err, crit, alert or emerg" },
};

START_TEST(test_env_errors)
{
	char *env[] = { "REZUSCLOUD_BACKUP_KEEP=9", env_errors[_i].entry, NULL };

	ck_assert_int_eq(rz_config_apply_env(&cfg, env, &err), REZUS_ECONFIG);
	ck_assert_int_eq(err.code, REZUS_ECONFIG);
	ck_assert_str_eq(err.msg, env_errors[_i].msg);
}
END_TEST

START_TEST(test_env_list)
{
	char *env[] = { "REZUSCLOUD_TOFU_ENV_PASSTHROUGH= TF_VAR_* , AWS_PROFILE,,", NULL };
	char *empty[] = { "REZUSCLOUD_TOFU_ENV_PASSTHROUGH=", NULL };

	ck_assert_int_eq(load("tofu:\n  env_passthrough: [A, B, C]\n"), 0);
	ck_assert_int_eq(rz_config_apply_env(&cfg, env, &err), 0);
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 2);
	ck_assert_str_eq(cfg.tofu_env_passthrough[0], "TF_VAR_*");
	ck_assert_str_eq(cfg.tofu_env_passthrough[1], "AWS_PROFILE");
	ck_assert_int_eq(rz_config_apply_env(&cfg, empty, &err), 0);
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 0);
}
END_TEST

START_TEST(test_set)
{
	ck_assert_int_eq(rz_config_set(&cfg, "server.listen", "[::]:9000", "--listen", &err), 0);
	ck_assert_str_eq(cfg.listen, "[::]:9000");
	ck_assert_int_eq(rz_config_set(&cfg, "tofu.env_passthrough", "A,B", "--env", &err), 0);
	ck_assert_uint_eq(list_len(cfg.tofu_env_passthrough), 2);
	ck_assert_str_eq(cfg.tofu_env_passthrough[1], "B");
	ck_assert_int_eq(rz_config_set(&cfg, "log.level", "WARN", "--log-level", &err), 0);
	ck_assert_str_eq(cfg.log_level, "WARN");
	ck_assert_int_eq(rz_config_set(&cfg, "plugin_dir", "/pd", "--plugin-dir", &err), 0);
	ck_assert_str_eq(cfg.plugin_dir, "/pd");
}
END_TEST

static const struct {
	const char *key;
	const char *value;
	const char *msg;
} set_errors[] = {
	{ "server.listn", "x", "--set: unknown key 'server.listn'" },
	{ "server", "x", "--set: unknown key 'server'" },
	{ "plugins", "x", "--set: unknown key 'plugins'" },
	{ "listen", "x", "--set: unknown key 'listen'" },
	{ "log.level", "loud",
	  "--set: log.level: invalid value 'loud': use debug, info, notice, warning, err, crit, "
	  "alert "
	  "or emerg" },
	{ "tofu.workers", "300",
	  "--set: tofu.workers: invalid value '300': must be between 1 and 256" },
	{ "backup.interval", "0",
	  "--set: backup.interval: invalid value '0': must be greater than zero" },
	{ "tofu.destroy_approval", "1",
	  "--set: tofu.destroy_approval: invalid boolean '1' (use true or false)" },
};

START_TEST(test_set_errors)
{
	ck_assert_int_eq(
	    rz_config_set(&cfg, set_errors[_i].key, set_errors[_i].value, "--set", &err),
	    REZUS_ECONFIG);
	ck_assert_str_eq(err.msg, set_errors[_i].msg);
	ck_assert_str_eq(cfg.log_level, "info");
	ck_assert_int_eq(cfg.tofu_workers, 4);
}
END_TEST

/* ------------------------------------------------------------------ validation */

static const struct {
	const char *key;
	const char *value;
	const char *msg; /* NULL: valid */
} validations[] = {
	{ "server.tls.self_signed_hosts", "10.5.0.2,rezuscloud.rezus.svc,::1", NULL },
	{ "server.tls.self_signed_hosts", "rezus/x",
	  "server.tls.self_signed_hosts: 'rezus/x' is neither a DNS name nor an IP address" },
	{ "server.tls.self_signed_hosts", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q",
	  "server.tls.self_signed_hosts: more than 16 names" },
	{ "server.listen", "127.0.0.1:8080", NULL },
	{ "server.listen", "localhost:65535", NULL },
	{ "server.listen", "127.0.0.1:0", NULL },
	{ "server.listen", "[::1]:0", NULL },
	{ "server.listen", "[::]:443", NULL },
	{ "server.listen", "rezus-1.example.com:80", NULL },
	{ "server.listen", "foo",
	  "server.listen: invalid address 'foo' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "",
	  "server.listen: invalid address '' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen",
	  "foo:", "server.listen: invalid address 'foo:' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", ":80",
	  "server.listen: invalid address ':80' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "1.2.3.4:65536",
	  "server.listen: invalid address '1.2.3.4:65536' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "1.2.3.4:80x",
	  "server.listen: invalid address '1.2.3.4:80x' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "1.2.3.4:-1",
	  "server.listen: invalid address '1.2.3.4:-1' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "::1:80",
	  "server.listen: invalid address '::1:80' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "[::1]",
	  "server.listen: invalid address '[::1]' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "[]:80",
	  "server.listen: invalid address '[]:80' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "[zz]:80",
	  "server.listen: invalid address '[zz]:80' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.listen", "a b:80",
	  "server.listen: invalid address 'a b:80' (use host:port, e.g. 127.0.0.1:8080)" },
	{ "server.data_dir", "", "server.data_dir: must not be empty" },
	{ "tofu.binary", "", "tofu.binary: must not be empty" },
};

START_TEST(test_validate)
{
	ck_assert_int_eq(rz_config_set(&cfg, validations[_i].key, validations[_i].value, "t", &err),
	                 0);
	if (validations[_i].msg == NULL) {
		ck_assert_int_eq(rz_config_validate(&cfg, &err), 0);
	} else {
		ck_assert_int_eq(rz_config_validate(&cfg, &err), REZUS_ECONFIG);
		ck_assert_int_eq(err.code, REZUS_ECONFIG);
		ck_assert_str_eq(err.msg, validations[_i].msg);
	}
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("defaults");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_embedded);
	tcase_add_test(tc, test_free_zeroes);
	suite_add_tcase(s, tc);

	tc = tcase_create("file");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_full_file);
	tcase_add_loop_test(tc, test_empty_input, 0, ARRAY_SIZE(no_change_inputs));
	tcase_add_test(tc, test_null_strings);
	tcase_add_test(tc, test_lists);
	tcase_add_loop_test(tc, test_bool_words, 0, ARRAY_SIZE(bool_words));
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_file_error_with_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("file errors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_file_errors, 0, ARRAY_SIZE(file_errors));
	tcase_add_test(tc, test_nesting_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("plugins");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plugin_subtree);
	tcase_add_test(tc, test_plugins_replace);
	suite_add_tcase(s, tc);

	tc = tcase_create("units");
	tcase_add_loop_test(tc, test_duration_valid, 0, ARRAY_SIZE(durations));
	tcase_add_loop_test(tc, test_duration_invalid, 0, ARRAY_SIZE(bad_durations));
	tcase_add_loop_test(tc, test_size_valid, 0, ARRAY_SIZE(sizes));
	tcase_add_loop_test(tc, test_size_invalid, 0, ARRAY_SIZE(bad_sizes));
	suite_add_tcase(s, tc);

	tc = tcase_create("env and flags");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_precedence);
	tcase_add_test(tc, test_env_every_kind);
	tcase_add_test(tc, test_env_aliases);
	tcase_add_test(tc, test_env_skipped);
	tcase_add_loop_test(tc, test_env_errors, 0, ARRAY_SIZE(env_errors));
	tcase_add_test(tc, test_env_list);
	tcase_add_test(tc, test_set);
	tcase_add_loop_test(tc, test_set_errors, 0, ARRAY_SIZE(set_errors));
	suite_add_tcase(s, tc);

	tc = tcase_create("validate");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_validate, 0, ARRAY_SIZE(validations));
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return rzt_run(config_suite());
}
