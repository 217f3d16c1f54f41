/*
 * core/base/config.h - rezuscloud's configuration (SPEC §2).
 *
 * Precedence: built-in defaults < file < REZUSCLOUD_* environment < command-line flags.
 * The file is YAML read with libyaml. Every key is described once in the schema table in
 * config.c; parsing, environment names, validation and the documentation all come from it.
 * Errors name where the value came from and the dotted key, e.g.
 *   /etc/rezus/rezus.conf:12: tofu.workers: invalid value '0': must be between 1 and 256
 */
#ifndef RZ_CONFIG_H
#define RZ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"

/* Where things live when configure does not say (it passes -D for installed builds). */
#ifndef RZ_SYSCONFDIR
#define RZ_SYSCONFDIR "/etc"
#endif
#ifndef RZ_LOCALSTATEDIR
#define RZ_LOCALSTATEDIR "/var"
#endif
#ifndef RZ_PLUGIN_DIR
#define RZ_PLUGIN_DIR "/usr/lib/rezus/plugins"
#endif
#ifndef RZ_BUILD_PLUGIN_DIR
#define RZ_BUILD_PLUGIN_DIR "plugins"
#endif

/* Where rezuscloud looks when no -c is given. */
#define RZ_CONFIG_DEFAULT_PATH RZ_SYSCONFDIR "/rezus/rezus.conf"

#define RZ_TLS_HOSTS_MAX 16 /* server.tls.self_signed_hosts: names at most */

/* One entry under `plugins:`; the loader (a later module) reads these. */
typedef struct rz_config_plugin {
	char *name;     /* the key under plugins: */
	json_t *config; /* the plugin's own subtree as JSON (an object; {} when empty) */
	bool required;  /* `required:` from the subtree (default true); removed from config */
	char *source;   /* "file:line" where the section starts, or "default" */
} rz_config_plugin_t;

typedef struct rz_config {
	char *source; /* path of the file read, or NULL for the embedded default */

	/* server: */
	char *listen; /* host:port, [v6]:port */
	char *data_dir;
	int64_t storage_probe_ms; /* how often /readyz's write probe of the data dir runs */
	char *external_url;
	uint64_t max_body;                 /* bytes */
	int max_connections;               /* open connections at most */
	int max_connections_per_address;   /* the same per peer address */
	int64_t header_timeout_ms;         /* a request head, from its first byte */
	int64_t body_timeout_ms;           /* a request body, from the end of the head */
	uint64_t max_body_unauthenticated; /* bytes read before credentials are known good */
	uint64_t max_body_buffer;          /* request bodies in memory at once, in all */
	uint64_t max_body_buffer_per_address;
	uint64_t max_unsent;             /* a connection's replies not yet taken by its client */
	uint64_t max_unsent_per_address; /* the same for one address's connections */
	int64_t hsts_max_age_ms;         /* Strict-Transport-Security over TLS; 0 = none */
	int event_window;                /* changes kept in the event log for watch resumption */
	uint64_t event_log_max;          /* bytes of event documents kept at most */
	char **trusted_proxies;          /* NULL-terminated IPs whose X-Forwarded-For is believed */
	char *tls_cert_file;             /* "": no TLS (unless tls_self_signed) */
	char *tls_key_file;
	char *tls_client_ca_file;     /* "": no client certificates */
	bool tls_self_signed;         /* make and serve a certificate in data_dir */
	bool tls_allow_plain_http;    /* plain HTTP on a non-loopback address */
	char **tls_self_signed_hosts; /* NULL-terminated extra names of the self-signed cert */

	/* auth: */
	char *admin_password_file;
	char *jwt_secret_file;
	int64_t session_ttl_ms;
	int login_checks;             /* password checks (Argon2id) running at once */
	int login_checks_per_address; /* running or waiting, from one address (IPv6: /64) */
	int login_queue;              /* checks waiting for a turn, in total */

	/* auth.oidc: single sign-on with an OpenID provider; "" issuer = none */
	char *oidc_issuer;
	char *oidc_client_id;
	char *oidc_client_secret_file; /* "": a public client (PKCE alone) */
	char *oidc_cli_client_id;      /* "": the same as oidc_client_id */
	char *oidc_scopes;
	char *oidc_username_claim;
	char *oidc_groups_claim;
	char *oidc_groups_prefix;
	char **oidc_roles; /* NULL-terminated "group=role" */
	char *oidc_ca_file;
	char *oidc_redirect_url; /* "": derived from the request */
	char *oidc_display_name;

	/* tofu: */
	char *tofu_binary;
	int tofu_workers;
	int64_t tofu_debounce_ms;
	int64_t tofu_resync_ms; /* 0 = off */
	int64_t tofu_timeout_ms;
	int64_t tofu_kill_grace_ms;
	char *tofu_plugin_cache_dir;
	char **tofu_env_passthrough; /* NULL-terminated */
	int tofu_state_history;
	int tofu_run_history;          /* Runs kept per tenant */
	int64_t tofu_run_retention_ms; /* failed Runs beyond that are kept this long */
	bool tofu_destroy_approval;
	uint64_t tofu_max_run_log; /* bytes of a run's log file; then head, marker, tail */

	/* observe: */
	int64_t observe_interval_ms;          /* between observations of a settled tenant */
	int64_t observe_fast_interval_ms;     /* while a tenant is provisioning or upgrading */
	int64_t observe_stable_interval_ms;   /* the longest a quiet settled tenant's grows to */
	int observe_workers;                  /* probes running at once */
	int64_t observe_probe_timeout_ms;     /* the longest a probe may run */
	int64_t observe_provision_timeout_ms; /* provisioning longer than this: Failed */
	int64_t upgrade_machine_timeout_ms;   /* one machine's upgrade and health gate */

	/* talos: and kubectl: the tools probes run */
	char *talos_binary;
	char *kubectl_binary;

	/* events: */
	int64_t events_retention_ms;
	int events_max_per_tenant;

	/* audit: */
	int64_t audit_retention_ms;
	int audit_refused_full;            /* refused requests per address and interval in full */
	int64_t audit_refused_interval_ms; /* the interval; the rest make one row per address */

	/* backup: */
	char *backup_dir;
	int64_t backup_interval_ms;
	int backup_keep;
	char *backup_passphrase_file; /* "" = backups hold no state key */
	char *backup_target;          /* "" = none; "local" or "s3": etcd_backup's targets */
	/* etcd_backup: the tenants' etcd snapshots (defaults of a Tenant's spec.etcdBackup) */
	int64_t etcd_backup_interval_ms; /* 0 = none scheduled */
	int etcd_backup_keep;
	char *etcd_backup_target;   /* "local" or "s3" */
	char *etcd_backup_dir;      /* "" = data_dir/etcd-backups */
	char *etcd_backup_key_file; /* "" = data_dir/etcd-backup.key */
	int64_t etcd_backup_timeout_ms;
	char *etcd_s3_endpoint, *etcd_s3_bucket, *etcd_s3_prefix, *etcd_s3_region;
	char *etcd_s3_credentials_file, *etcd_s3_ca_file;
	bool etcd_s3_path_style;

	/* store: */
	char *store_durability; /* "normal" or "full" */

	/* web: */
	char *web_dir; /* "" = the templates compiled into the binary */

	/* runners: remote runners over NATS (docs/runners.md); "" nats_url = the local pool only */
	char *runners_nats_url;
	char *runners_nats_user;
	char *runners_nats_password_file;
	char *runners_nats_token_file;
	char *runners_nats_ca_file;
	int64_t runners_heartbeat_timeout_ms; /* a Runner without a heartbeat this long: Lost */
	int64_t runners_claim_timeout_ms;     /* a job unclaimed this long: published again */
	char *runners_public_url;   /* the daemon as runners reach it; "": the listen address */
	char *runners_installation; /* its name on NATS; "": derived from the data dir */

	/* runner: what `rezuscloud runner` reads */
	char *runner_name;         /* "": the host name */
	char *runner_installation; /* the daemon's runners.installation; "": asked of it */
	char **runner_labels;      /* NULL-terminated key=value */
	int runner_concurrency;
	int64_t runner_heartbeat_ms;
	int64_t runner_pool_idle_ms; /* a pool consumer nobody pulls from this long: removed */
	char *runner_work_dir;
	char *runner_nats_url;
	char *runner_nats_user;
	char *runner_nats_password_file;
	char *runner_nats_token_file;
	char *runner_nats_ca_file;
	char *runner_daemon_url;     /* "": takes no job */
	char *runner_token_file;     /* the runner's API token (scope runner) */
	char *runner_daemon_ca_file; /* "": the system's CAs */

	/* log: */
	char *log_level;            /* a name rz_log_level_parse accepts */
	char *log_file;             /* "" = stderr */
	int log_access_per_address; /* request lines per address per 10 s; 0 = all */

	char *plugin_dir;
	rz_config_plugin_t *plugins; /* sorted by name */
	size_t n_plugins;
} rz_config_t;

/* Fill cfg with the built-in defaults for a daemon reading a config file
 * (data_dir /var/lib/rezus, plugin_dir RZ_PLUGIN_DIR, no plugins).
 * Caller owns cfg's contents; release with rz_config_free(). Returns 0 or -ENOMEM. */
int rz_config_defaults(rz_config_t *cfg);

/* Switch cfg to the embedded default used when no config file exists at all (SPEC §2):
 * data_dir ./rezus-data, plugin_dir the build tree's plugins (RZ_BUILD_PLUGIN_DIR),
 * the sim plugin enabled. Call on a cfg fresh from rz_config_defaults(). */
int rz_config_embedded(rz_config_t *cfg);

/* Read YAML from path over cfg. Errors (RZ_EPARSE / REZUS_ECONFIG / -errno) name path:line
 * and the key in err->msg. On error cfg keeps a consistent (possibly partly updated) state
 * and still needs rz_config_free(). */
int rz_config_load_file(rz_config_t *cfg, const char *path, rz_err_t *err);

/* Same, from memory; name stands in for the path in messages. data is borrowed. */
int rz_config_load_string(rz_config_t *cfg, const char *name, const char *data, size_t len,
                          rz_err_t *err);

/* Apply REZUSCLOUD_* variables from envp (NULL-terminated, borrowed). Every scalar key has
 * one: REZUSCLOUD_<SECTION>_<KEY> upper-cased (REZUSCLOUD_TOFU_WORKERS,
 * REZUSCLOUD_SERVER_MAX_BODY, REZUSCLOUD_PLUGIN_DIR), plus the short aliases
 * REZUSCLOUD_ADDR (server.listen) and REZUSCLOUD_DATA_DIR (server.data_dir).
 * List keys take a comma-separated value. REZUSCLOUD_CONFIG, REZUSCLOUD_ADMIN_PASSWORD,
 * REZUSCLOUD_SERVER and REZUSCLOUD_TOKEN are not config keys and are skipped; any other
 * unknown REZUSCLOUD_* name is an error. Messages read "environment REZUSCLOUD_X: key: ...". */
int rz_config_apply_env(rz_config_t *cfg, char *const *envp, rz_err_t *err);

/* Set one scalar key from text, as a flag or env var would. origin names the source in
 * messages (e.g. "--log-level"). key is dotted: "server.listen", "log.level", "plugin_dir". */
int rz_config_set(rz_config_t *cfg, const char *key, const char *value, const char *origin,
                  rz_err_t *err);

/* Cross-field checks after all sources are applied (e.g. listen parses as host:port,
 * data_dir non-empty). Returns 0 or REZUS_ECONFIG with err filled. */
int rz_config_validate(const rz_config_t *cfg, rz_err_t *err);

/* Release everything cfg owns and zero it. Accepts a zeroed cfg. */
void rz_config_free(rz_config_t *cfg);

/* Look up a plugin section by name. Borrowed — valid while cfg lives; NULL when absent. */
const rz_config_plugin_t *rz_config_plugin(const rz_config_t *cfg, const char *name);

/* "500ms", "5s", "30m", "24h", "90d", and sums like "1h30m". "0" means zero.
 * Returns 0 and sets *ms, or -EINVAL (also on overflow, negatives, missing unit). */
int rz_parse_duration(const char *s, int64_t *ms);

/* "512", "64KiB", "16MiB", "1GiB", "10MB" (SI: 1000-based), "1K" (= KiB).
 * Returns 0 and sets *bytes, or -EINVAL (also on overflow). */
int rz_parse_size(const char *s, uint64_t *bytes);

#endif /* RZ_CONFIG_H */
