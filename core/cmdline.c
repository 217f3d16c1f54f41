/* core/cmdline.c - the rezuscloud command line: flags, the configuration they complete, usage,
 * and the subcommands (core/daemon.h: rz_daemon_main). */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/version.h"
#include "core/daemon.h"
#include "core/offline.h"
#include "core/plugin/plugins.h"
#include "core/remote/agent.h"

/* ------------------------------------------------------------------ command line */

enum { OPT_CHECK = 256, OPT_LOG_LEVEL, OPT_LISTEN, OPT_DATA_DIR };

static const struct option long_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "check-config", no_argument, NULL, OPT_CHECK },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "data-dir", required_argument, NULL, OPT_DATA_DIR },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* Flags that set a configuration key; applied after the file and the environment. */
static const struct {
	int opt;
	const char *flag;
	const char *key;
} flag_keys[] = {
	{ OPT_LOG_LEVEL, "--log-level", "log.level" },
	{ OPT_LISTEN, "--listen", "server.listen" },
	{ OPT_DATA_DIR, "--data-dir", "server.data_dir" },
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: rezuscloud [OPTION]...\n"
	    "       rezuscloud backup verify FILE [--passphrase-file F] [--unkeyed]\n"
	    "       rezuscloud restore FILE [--dry-run] [--data-dir DIR] [--passphrase-file F]\n"
	    "       rezuscloud etcd-key rotate [-c FILE] [--data-dir DIR]\n"
	    "       rezuscloud admin reset-password [USER] [-c FILE] [--data-dir DIR]\n"
	    "       rezuscloud runner [-c FILE] [--check-config] [--nats-permissions]\n"
	    "Run the RezusCloud tenant orchestrator: REST API, WebUI, TF state backend and\n"
	    "tofu run pool; or check a backup, or restore one into a data dir no daemon holds\n"
	    "(rezuscloud restore --help); or run a remote runner (rezuscloud runner --help).\n"
	    "\n"
	    "  -c, --config FILE     read FILE (default %s; when it does not exist,\n"
	    "                        start on the embedded default: data in ./rezus-data)\n"
	    "      --check-config    validate the configuration and exit\n"
	    "      --log-level LEVEL debug, info, notice, warning, err, crit, alert, emerg\n"
	    "      --listen ADDR     listen on ADDR (host:port), overriding server.listen\n"
	    "      --data-dir DIR    keep data in DIR, overriding server.data_dir\n"
	    "  -h, --help            show this help and exit\n"
	    "  -V, --version         show version information and exit\n"
	    "\n"
	    "Settings come from built-in defaults, then the file, then REZUSCLOUD_* environment\n"
	    "variables, then these options. See rezuscloud(8) and rezus.conf(5).\n"
	    "\n"
	    "Exit status: 0 on success, 1 when the daemon cannot start or fails, 2 for a bad\n"
	    "command line or configuration.\n",
	    RZ_CONFIG_DEFAULT_PATH);
}

static int parse_flags(int argc, char **argv, rz_cmdline_t *cl, int *pending, const char **values,
                       rz_err_t *err)
{
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":c:hV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			cl->config_path = optarg;
			break;
		case OPT_CHECK:
			cl->check_config = true;
			break;
		case 'h':
			cl->help = true;
			break;
		case 'V':
			cl->version = true;
			break;
		case ':':
			return rz_err_set(err, RZ_EXIT_USAGE, "option '%s' needs a value",
			                  argv[optind - 1]);
		case '?':
			return rz_err_set(err, RZ_EXIT_USAGE, "unknown option '%s' (see --help)",
			                  argv[optind - 1]);
		default:
			for (size_t i = 0; i < sizeof(flag_keys) / sizeof(flag_keys[0]); i++) {
				if (flag_keys[i].opt == opt) {
					pending[i] = 1;
					values[i] = optarg;
				}
			}
			break;
		}
	}
	if (optind < argc) {
		return rz_err_set(err, RZ_EXIT_USAGE, "unexpected argument '%s' (see --help)",
		                  argv[optind]);
	}
	return 0;
}

int rz_daemon_load_config(const char *config_path, char *const *envp, rz_config_t *cfg,
                          rz_err_t *err)
{
	const char *path = config_path;
	int rc;

	if (rz_config_defaults(cfg) < 0) {
		return rz_err_set(err, RZ_EXIT_FAILURE, "out of memory");
	}
	if (path == NULL && access(RZ_CONFIG_DEFAULT_PATH, F_OK) == 0) {
		path = RZ_CONFIG_DEFAULT_PATH;
	}
	if (path != NULL) {
		rc = rz_config_load_file(cfg, path, err);
	} else {
		rc = rz_config_embedded(cfg);
		if (rc < 0) {
			rz_err_set(err, rc, "out of memory");
		}
	}
	if (rc == 0) {
		rc = rz_config_apply_env(cfg, envp, err);
	}
	return rc == 0 ? 0 : RZ_EXIT_USAGE;
}

int rz_daemon_configure(int argc, char **argv, char *const *envp, rz_cmdline_t *cl,
                        rz_config_t *cfg, rz_err_t *err)
{
	enum { NFLAGS = sizeof(flag_keys) / sizeof(flag_keys[0]) };
	int pending[NFLAGS] = { 0 };
	const char *values[NFLAGS] = { NULL };
	int rc;

	memset(cl, 0, sizeof(*cl));
	rc = parse_flags(argc, argv, cl, pending, values, err);
	if (rc != 0 || cl->help || cl->version) {
		return rc;
	}
	rc = rz_daemon_load_config(cl->config_path, envp, cfg, err);
	if (rc == RZ_EXIT_FAILURE) {
		return rc;
	}
	for (size_t i = 0; rc == 0 && i < NFLAGS; i++) {
		if (pending[i]) {
			rc =
			    rz_config_set(cfg, flag_keys[i].key, values[i], flag_keys[i].flag, err);
		}
	}
	if (rc == 0) {
		rc = rz_config_validate(cfg, err);
	}
	return rc == 0 ? 0 : RZ_EXIT_USAGE;
}

/* ------------------------------------------------------------------ main */

static int apply_logging(const rz_config_t *cfg, rz_err_t *err)
{
	int level;

	if (rz_log_level_parse(cfg->log_level, &level) < 0) {
		return rz_err_set(err, REZUS_ECONFIG, "log.level: invalid value '%s'",
		                  cfg->log_level);
	}
	rz_log_set_level(level);
	return rz_log_open(cfg->log_file, err);
}

/* --check-config: every listed plugin loads and accepts its section. */
static int check_plugins(const rz_config_t *cfg)
{
	rz_plugins_t *p = NULL;
	rz_err_t err = { 0 };
	int rc = rz_plugins_load(&p, cfg, false, &err);

	for (size_t i = 0; i < rz_plugins_count(p); i++) {
		const rz_plugin_t *pl = rz_plugins_at(p, i);
		if (!pl->loaded && !pl->required) {
			rz_log_warn("config", "optional plugin '%s' would be disabled: %s",
			            pl->name, pl->error);
		}
	}
	if (rc != 0) {
		rz_log_err("config", "%s", err.msg);
	}
	rz_plugins_free(p);
	return rc == 0 ? RZ_EXIT_OK : RZ_EXIT_USAGE;
}

static int serve(const rz_config_t *cfg)
{
	rz_daemon_t *d = NULL;
	rz_err_t err = { 0 };
	int rc;

	if (cfg->source == NULL) {
		rz_log(RZ_LOG_NOTICE, "config",
		       "no configuration file (%s): starting on the embedded default, data in '%s'",
		       RZ_CONFIG_DEFAULT_PATH, cfg->data_dir);
	}
	if (rz_daemon_start(&d, cfg, &err) != 0) {
		rz_log_err("daemon", "cannot start: %s", err.msg);
		return err.code == REZUS_ECONFIG ? RZ_EXIT_USAGE : RZ_EXIT_FAILURE;
	}
	rc = rz_daemon_run(d);
	rz_daemon_free(d);
	return rc;
}

int rz_daemon_main(int argc, char **argv, char *const *envp)
{
	rz_cmdline_t cl;
	rz_config_t cfg = { 0 };
	rz_err_t err = { 0 };
	int rc;

	if (argc > 1 && strcmp(argv[1], "runner") == 0) {
		return rz_agent_main(argc - 1, argv + 1, envp); /* core/remote/agent.c */
	}
	if (argc > 1 && (strcmp(argv[1], "backup") == 0 || strcmp(argv[1], "restore") == 0 ||
	                 strcmp(argv[1], "etcd-key") == 0 || strcmp(argv[1], "admin") == 0)) {
		return rz_offline_main(argc, argv, envp); /* offline modes: core/offline.c */
	}
	rc = rz_daemon_configure(argc, argv, envp, &cl, &cfg, &err);

	if (rc == 0 && cl.help) {
		usage(stdout);
	} else if (rc == 0 && cl.version) {
		printf("rezuscloud %s (commit %s, plugin ABI %s)\n", rz_version(),
		       rz_version_commit(), rz_version_abi());
	} else if (rc != 0) {
		rz_log_err("config", "%s", err.msg);
	} else if (apply_logging(&cfg, &err) != 0) {
		rz_log_err("config", "%s", err.msg);
		rc = RZ_EXIT_USAGE;
	} else if (cl.check_config) {
		rc = check_plugins(&cfg);
		if (rc == 0) {
			rz_log(RZ_LOG_NOTICE, "config", "configuration %s is valid",
			       cfg.source ? cfg.source : "(embedded default)");
		}
	} else {
		rc = serve(&cfg);
	}
	rz_config_free(&cfg);
	rz_log_close();
	return rc;
}
