/*
 * core/daemon.h - the rezuscloud process: command line, start-up, the event loop,
 * signals, graceful shutdown.
 */
#ifndef RZ_DAEMON_H
#define RZ_DAEMON_H

#include <stdbool.h>

#include "core/base/config.h"
#include "core/base/errors.h"

struct event_base;

/* Exit codes of the rezuscloud process. */
enum {
	RZ_EXIT_OK = 0,
	RZ_EXIT_FAILURE = 1, /* could not start or run */
	RZ_EXIT_USAGE = 2,   /* bad command line or configuration */
};

/* How long SIGTERM waits for in-flight requests and worker jobs before exiting anyway. */
#define RZ_SHUTDOWN_GRACE_MS 10000

typedef struct rz_cmdline {
	const char *config_path; /* -c; borrowed from argv */
	bool check_config;
	bool help;
	bool version;
} rz_cmdline_t;

/* Parse argv and build cfg from defaults < file < environment (envp) < flags.
 * The file is -c FILE, else RZ_CONFIG_DEFAULT_PATH when it exists, else the embedded
 * default. cfg must be zeroed; caller owns its contents (rz_config_free). Returns 0, or
 * RZ_EXIT_USAGE with err describing the problem. --help/--version only set cl. */
int rz_daemon_configure(int argc, char **argv, char *const *envp, rz_cmdline_t *cl,
                        rz_config_t *cfg, rz_err_t *err);

/* Build cfg from defaults < file < environment: the file is config_path, else
 * RZ_CONFIG_DEFAULT_PATH when it exists, else the embedded default. cfg must be zeroed;
 * caller owns its contents (rz_config_free). 0, RZ_EXIT_USAGE or RZ_EXIT_FAILURE with err
 * filled. No validation: the caller sets its flags first, then rz_config_validate(). */
int rz_daemon_load_config(const char *config_path, char *const *envp, rz_config_t *cfg,
                          rz_err_t *err);

/* Create the data dir (0700; its parents 0755). The daemon then makes what is under it
 * private (rz_datadir_secure). */
int rz_daemon_make_dir(const char *path, rz_err_t *err);

/* Take data_dir/rezuscloud.lock with flock, as a running daemon holds it: *fd is the
 * caller's to close (which releases it). RZ_ELOCKED, naming the holder's pid, when another
 * process holds it. */
int rz_daemon_lock(const char *data_dir, int *fd, rz_err_t *err);

/* The whole program: configure, then print help/version, check the config, or run.
 * Returns the process exit code. */
int rz_daemon_main(int argc, char **argv, char *const *envp);

typedef struct rz_daemon rz_daemon_t;

/* Create data_dir (0700), take its lock, open the store, start the worker pool and the
 * HTTP listener, install signal handlers. cfg is borrowed and must outlive the daemon.
 * Caller owns *out; rz_daemon_free(). */
int rz_daemon_start(rz_daemon_t **out, const rz_config_t *cfg, rz_err_t *err);

/* Run the loop until shutdown completes. Returns RZ_EXIT_OK or RZ_EXIT_FAILURE. */
int rz_daemon_run(rz_daemon_t *d);

/* Begin a graceful shutdown, as SIGTERM does. Loop thread only. */
void rz_daemon_stop(rz_daemon_t *d);

/* The HTTP port actually bound. */
int rz_daemon_port(const rz_daemon_t *d);

struct event_base *rz_daemon_base(rz_daemon_t *d);

/* The HTTP server, the store's database and the store (for tests and tools). Borrowed. */
struct rz_http *rz_daemon_http(rz_daemon_t *d);
struct rz_db *rz_daemon_db(rz_daemon_t *d);
struct rz_store *rz_daemon_store(rz_daemon_t *d);
struct rz_auth *rz_daemon_auth(rz_daemon_t *d); /* for tests: a run's grant */

/* Close everything and release the lock. Accepts NULL. */
void rz_daemon_free(rz_daemon_t *d);

#endif /* RZ_DAEMON_H */
