/*
 * core/base/settings.c - every configuration key (SPEC §2, rezus.conf(5)): its type, where
 * it lives in rz_config_t, its default, its limits, its environment alias and the checks
 * its values get. Adding a key is a line here and a field in rz_config_t.
 */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/settings.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ checks */

static int check_log_level(const struct rz__setting *s, const char *value, const char *origin,
                           rz_err_t *err)
{
	int level;

	if (rz_log_level_parse(value, &level) < 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid value '%s': use debug, info, notice, warning, "
		                  "err, crit, alert or emerg",
		                  origin, s->key, value);
	}
	return 0;
}

static int check_durability(const struct rz__setting *s, const char *value, const char *origin,
                            rz_err_t *err)
{
	if (strcmp(value, "normal") != 0 && strcmp(value, "full") != 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid value '%s': use normal or full", origin, s->key,
		                  value);
	}
	return 0;
}

static int check_etcd_target(const struct rz__setting *s, const char *value, const char *origin,
                             rz_err_t *err)
{
	if (strcmp(value, "local") != 0 && strcmp(value, "s3") != 0) {
		return rz_err_set(err, REZUS_ECONFIG, "%s: %s: invalid value '%s': use local or s3",
		                  origin, s->key, value);
	}
	return 0;
}

static int check_backup_target(const struct rz__setting *s, const char *value, const char *origin,
                               rz_err_t *err)
{
	return value[0] == '\0' ? 0 : check_etcd_target(s, value, origin, err);
}

static bool valid_port(const char *s)
{
	unsigned long port = 0;
	size_t n = strspn(s, "0123456789");

	if (n == 0 || n > 5 || s[n] != '\0') {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		port = port * 10 + (unsigned long)(s[i] - '0');
	}
	return port <= 65535;
}

static bool valid_host_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_';
}

/* "host:port" or "[v6]:port". */
static bool valid_listen(const char *addr)
{
	const char *colon = strchr(addr, ':');
	char host[INET6_ADDRSTRLEN];
	struct in6_addr a6;

	if (addr[0] == '[') {
		const char *end = strchr(addr, ']');
		size_t len = end != NULL ? (size_t)(end - addr - 1) : 0;

		if (end == NULL || end[1] != ':' || len == 0 || len >= sizeof(host)) {
			return false;
		}
		memcpy(host, addr + 1, len);
		host[len] = '\0';
		return inet_pton(AF_INET6, host, &a6) == 1 && valid_port(end + 2);
	}
	if (colon == NULL || colon == addr || strchr(colon + 1, ':') != NULL) {
		return false;
	}
	for (const char *p = addr; p < colon; p++) {
		if (!valid_host_char(*p)) {
			return false;
		}
	}
	return valid_port(colon + 1);
}

static int verify_listen(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	const char *addr = rz__setting_string(cfg, s);

	if (!valid_listen(addr)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: invalid address '%s' (use host:port, e.g. 127.0.0.1:8080)",
		                  s->key, addr);
	}
	return 0;
}

/* A body budget smaller than server.max_body would refuse the largest bodies for ever. */
static int verify_body_buffer(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	uint64_t v = s->offset == offsetof(rz_config_t, max_body_buffer)
	                 ? cfg->max_body_buffer
	                 : cfg->max_body_buffer_per_address;

	if (v < cfg->max_body) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %llu bytes is less than server.max_body (%llu bytes)",
		                  s->key, (unsigned long long)v, (unsigned long long)cfg->max_body);
	}
	return 0;
}

static bool set(const char *v)
{
	return v != NULL && v[0] != '\0';
}

/* A certificate goes with its key; self_signed makes both; client certificates need TLS. */
static int verify_tls(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	(void)s;
	if (set(cfg->tls_cert_file) != set(cfg->tls_key_file)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: server.tls.cert_file and server.tls.key_file go together",
		                  set(cfg->tls_cert_file) ? "server.tls.key_file"
		                                          : "server.tls.cert_file");
	}
	if (cfg->tls_self_signed && set(cfg->tls_cert_file)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "server.tls.self_signed: true makes its own certificate; leave "
		                  "server.tls.cert_file and server.tls.key_file unset");
	}
	if (set(cfg->tls_client_ca_file) && !cfg->tls_self_signed && !set(cfg->tls_cert_file)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "server.tls.client_ca_file: client certificates need TLS "
		                  "(server.tls.cert_file or server.tls.self_signed)");
	}
	return 0;
}

/* Names a certificate can carry: a DNS name or an IP address, RZ_TLS_HOSTS_MAX at most. */
static int verify_tls_hosts(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	size_t n = 0;

	for (char **h = cfg->tls_self_signed_hosts; h != NULL && *h != NULL; h++, n++) {
		const char *v = *h;
		size_t len = strlen(v);
		if (n >= RZ_TLS_HOSTS_MAX) {
			return rz_err_set(err, REZUS_ECONFIG, "%s: more than %d names", s->key,
			                  RZ_TLS_HOSTS_MAX);
		}
		if (len == 0 || len > 253 ||
		    strspn(v, "abcdefghijklmnopqrstuvwxyz"
		              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") != len) {
			return rz_err_set(err, REZUS_ECONFIG,
			                  "%s: '%.64s' is neither a DNS name nor an IP address",
			                  s->key, v);
		}
	}
	return 0;
}

/* A duration setting between lo and hi ms, range saying so in words. */
static int verify_between(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err,
                          int64_t lo, int64_t hi, const char *range)
{
	int64_t v = *FIELD(cfg, s, int64_t);

	if (v < lo || v > hi) {
		return rz_err_set(err, REZUS_ECONFIG, "%s: %lld ms is not between %s", s->key,
		                  (long long)v, range);
	}
	return 0;
}

/* runners.heartbeat_timeout, runner.heartbeat */
static int verify_second_to_hour(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	return verify_between(s, cfg, err, 1000, 3600 * 1000, "1s and 1h");
}

/* runner.pool_idle */
static int verify_second_to_week(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	return verify_between(s, cfg, err, 1000, 7LL * 86400 * 1000, "1s and 7d");
}

/* The credentials of a NATS connection: a user goes with a password file, a token file
 * stands alone; a URL is needed for any of them; the build must have libnats. */
static int verify_nats(const char *section, const char *url, const char *user,
                       const char *password_file, const char *token_file, const char *ca_file,
                       rz_err_t *err)
{
	if (!set(url)) {
		if (set(user) || set(password_file) || set(token_file) || set(ca_file)) {
			return rz_err_set(err, REZUS_ECONFIG,
			                  "%s.nats_url: NATS credentials are set but no URL",
			                  section);
		}
		return 0;
	}
#ifndef HAVE_LIBNATS
	return rz_err_set(err, REZUS_ECONFIG,
	                  "%s.nats_url: this rezuscloud was built without NATS (libnats); "
	                  "rebuild with --with-nats or leave %s.nats_url empty",
	                  section, section);
#else
	if (strncmp(url, "nats://", 7) != 0 && strncmp(url, "tls://", 6) != 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s.nats_url: invalid value '%.128s': use nats://host:port or "
		                  "tls://host:port",
		                  section, url);
	}
	if (strchr(url, '@') != NULL) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s.nats_url: no credentials in the URL (it is logged): use "
		                  "%s.nats_user and %s.nats_password_file, or %s.nats_token_file",
		                  section, section, section, section);
	}
	if (set(user) != set(password_file)) {
		return rz_err_set(
		    err, REZUS_ECONFIG, "%s.%s: %s.nats_user and %s.nats_password_file go together",
		    section, set(user) ? "nats_password_file" : "nats_user", section, section);
	}
	if (set(user) && set(token_file)) {
		return rz_err_set(
		    err, REZUS_ECONFIG,
		    "%s.nats_token_file: use a user and password or a token, not both", section);
	}
	return 0;
#endif
}

static int verify_runners_nats(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	(void)s;
	return verify_nats("runners", cfg->runners_nats_url, cfg->runners_nats_user,
	                   cfg->runners_nats_password_file, cfg->runners_nats_token_file,
	                   cfg->runners_nats_ca_file, err);
}

static int verify_runner_nats(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	(void)s;
	return verify_nats("runner", cfg->runner_nats_url, cfg->runner_nats_user,
	                   cfg->runner_nats_password_file, cfg->runner_nats_token_file,
	                   cfg->runner_nats_ca_file, err);
}

/* runner.name: a DNS label (RFC 1123), as object names are; "" = the host name. */
/* An http(s) base URL without a trailing slash, or empty. */
static int check_base_url(const struct rz__setting *s, const char *value, const char *origin,
                          rz_err_t *err)
{
	size_t len = strlen(value);
	bool ok = len == 0 ||
	          (len <= 256 &&
	           (strncmp(value, "https://", 8) == 0 || strncmp(value, "http://", 7) == 0) &&
	           strpbrk(value, " \t\r\n?#@") == NULL && value[len - 1] != '/');

	if (!ok) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid value '%.64s': an http(s)://host[:port] URL "
		                  "(256 bytes at most, no credentials, query or trailing '/')",
		                  origin, s->key, value);
	}
	return 0;
}

static int check_proc_name(const struct rz__setting *s, const char *value, const char *origin,
                           rz_err_t *err)
{
	size_t len = strlen(value);
	bool ok = len <= 63 && strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-") == len &&
	          (len == 0 || (value[0] != '-' && value[len - 1] != '-'));

	if (!ok) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid value '%.64s': a DNS label (lower-case letters, "
		                  "digits and '-', at most 63, not starting or ending with '-')",
		                  origin, s->key, value);
	}
	return 0;
}

/* runners.installation, runner.installation: empty, or 1 to 32 of [a-z0-9-] */
static int check_installation(const struct rz__setting *s, const char *value, const char *origin,
                              rz_err_t *err)
{
	size_t len = strlen(value);

	if (len > 32 || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-") != len) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s: %s: invalid value '%.64s': 1 to 32 of lower-case letters, "
		                  "digits and '-' (empty: %s)",
		                  origin, s->key, value,
		                  strcmp(s->key, "runner.installation") == 0
		                      ? "asked of the daemon"
		                      : "derived from the data dir");
	}
	return 0;
}

/* An OpenID issuer or the WebUI's callback URL: https://, or http:// to a loopback host
 * (a provider a test starts); no query, fragment or credentials. */
static bool oidc_url(const char *v)
{
	static const char *const loop[] = { "http://127.0.0.1", "http://localhost",
		                            "http://[::1]" };
	size_t len = strlen(v);
	bool ok = len > 8 && len <= 256 && strncmp(v, "https://", 8) == 0;

	for (size_t i = 0; !ok && i < ARRAY_SIZE(loop); i++) {
		size_t n = strlen(loop[i]);
		ok = strncmp(v, loop[i], n) == 0 && (v[n] == ':' || v[n] == '/' || v[n] == '\0');
	}
	return ok && strpbrk(v, " \t\r\n?#@") == NULL;
}

/* auth.oidc: an issuer needs a client id; URLs as oidc_url says; roles "group=role". */
static int verify_oidc(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err)
{
	static const char *const roles[] = { "none", "view", "edit", "admin" };

	(void)s;
	if (!set(cfg->oidc_issuer)) {
		return 0;
	}
	if (!oidc_url(cfg->oidc_issuer)) {
		return rz_err_set(
		    err, REZUS_ECONFIG,
		    "auth.oidc.issuer: '%.64s' is not an https:// URL (http:// only to "
		    "a loopback address)",
		    cfg->oidc_issuer);
	}
	if (!set(cfg->oidc_client_id)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "auth.oidc.client_id: required with an issuer");
	}
	if (set(cfg->oidc_redirect_url) && !oidc_url(cfg->oidc_redirect_url)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "auth.oidc.redirect_url: '%.64s' is not an https:// URL (http:// "
		                  "only to a loopback address)",
		                  cfg->oidc_redirect_url);
	}
	for (char **r = cfg->oidc_roles; r != NULL && *r != NULL; r++) {
		const char *eq = strrchr(*r, '=');
		bool ok = false;
		for (size_t i = 0; eq != NULL && eq != *r && i < ARRAY_SIZE(roles); i++) {
			ok |= strcmp(eq + 1, roles[i]) == 0;
		}
		if (!ok) {
			return rz_err_set(err, REZUS_ECONFIG,
			                  "auth.oidc.roles: '%.64s' is not group=role (role none, "
			                  "view, edit or admin)",
			                  *r);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ the schema */

#define AT(field) offsetof(rz_config_t, field)

const struct rz__setting rz__settings[] = {
	{ .key = "server", .kind = K_SECTION, .help = "the HTTP server" },
	{ .key = "server.listen",
	  .kind = K_STRING,
	  .offset = AT(listen),
	  .def = "127.0.0.1:8080",
	  .env_alias = "REZUSCLOUD_ADDR",
	  .verify = verify_listen,
	  .help = "address to listen on: host:port or [v6]:port" },
	{ .key = "server.data_dir",
	  .kind = K_STRING,
	  .offset = AT(data_dir),
	  .def = RZ_LOCALSTATEDIR "/lib/rezus",
	  .flags = F_NONEMPTY,
	  .env_alias = "REZUSCLOUD_DATA_DIR",
	  .help = "SQLite database, work directories, keys and backups" },
	{ .key = "server.storage_probe",
	  .kind = K_DURATION,
	  .offset = AT(storage_probe_ms),
	  .def = "5s",
	  .flags = F_NONZERO,
	  .help = "how often a 4 KiB write probes the data dir for /readyz" },
	{ .key = "server.external_url",
	  .kind = K_STRING,
	  .offset = AT(external_url),
	  .def = "",
	  .help = "base URL used in links and kubeconfig download names" },
	{ .key = "server.max_body",
	  .kind = K_SIZE,
	  .offset = AT(max_body),
	  .def = "16MiB",
	  .flags = F_NONZERO,
	  .help = "largest request body accepted" },
	{ .key = "server.max_connections",
	  .kind = K_INT,
	  .offset = AT(max_connections),
	  .def = "4096",
	  .min = 1,
	  .max = 1000000,
	  .help = "open connections at most; more are answered 503 and closed" },
	{ .key = "server.max_connections_per_address",
	  .kind = K_INT,
	  .offset = AT(max_connections_per_address),
	  .def = "256",
	  .min = 1,
	  .max = 1000000,
	  .help = "open connections from one peer address at most (a proxy is one address)" },
	{ .key = "server.header_timeout",
	  .kind = K_DURATION,
	  .offset = AT(header_timeout_ms),
	  .def = "10s",
	  .flags = F_NONZERO,
	  .help = "from a request's first byte to the end of its headers, however fast bytes "
	          "arrive; then 408" },
	{ .key = "server.body_timeout",
	  .kind = K_DURATION,
	  .offset = AT(body_timeout_ms),
	  .def = "60s",
	  .flags = F_NONZERO,
	  .help = "from the end of the headers to the end of the body, absolute; then 408" },
	{ .key = "server.max_body_unauthenticated",
	  .kind = K_SIZE,
	  .offset = AT(max_body_unauthenticated),
	  .def = "64KiB",
	  .flags = F_NONZERO,
	  .help = "largest body read before the credentials are known good; larger ones are "
	          "refused unread" },
	{ .key = "server.max_body_buffer",
	  .kind = K_SIZE,
	  .offset = AT(max_body_buffer),
	  .def = "256MiB",
	  .flags = F_NONZERO,
	  .verify = verify_body_buffer,
	  .help = "request bodies held in memory at once, in all; a request over it gets 503" },
	{ .key = "server.max_body_buffer_per_address",
	  .kind = K_SIZE,
	  .offset = AT(max_body_buffer_per_address),
	  .def = "64MiB",
	  .flags = F_NONZERO,
	  .verify = verify_body_buffer,
	  .help = "the same per peer address" },
	{ .key = "server.max_unsent",
	  .kind = K_SIZE,
	  .offset = AT(max_unsent),
	  .def = "1MiB",
	  .flags = F_NONZERO,
	  .help = "replies a connection's client has not taken yet; over it, no more of its "
	          "requests are read until they drain (a client pipelining requests and reading "
	          "no answer)" },
	{ .key = "server.max_unsent_per_address",
	  .kind = K_SIZE,
	  .offset = AT(max_unsent_per_address),
	  .def = "16MiB",
	  .flags = F_NONZERO,
	  .help = "the same for all the connections of one peer address together" },
	{ .key = "server.event_window",
	  .kind = K_INT,
	  .offset = AT(event_window),
	  .def = "10000",
	  .min = 100,
	  .max = 10000000,
	  .help = "changes kept in the event log, so watches can resume after a disconnect" },
	{ .key = "server.event_log_max",
	  .kind = K_SIZE,
	  .offset = AT(event_log_max),
	  .def = "256MiB",
	  .flags = F_NONZERO,
	  .help = "bytes of objects the event log keeps at most; beyond, its oldest changes go" },
	{ .key = "server.trusted_proxies",
	  .kind = K_LIST,
	  .offset = AT(trusted_proxies),
	  .def = "",
	  .help = "proxy addresses whose X-Forwarded-For names the client (audit source IP)" },
	{ .key = "server.tls", .kind = K_SECTION, .help = "TLS on the listen address" },
	{ .key = "server.tls.cert_file",
	  .kind = K_STRING,
	  .offset = AT(tls_cert_file),
	  .def = "",
	  .verify = verify_tls,
	  .help = "PEM certificate, then its chain; with key_file, the port speaks TLS only" },
	{ .key = "server.tls.key_file",
	  .kind = K_STRING,
	  .offset = AT(tls_key_file),
	  .def = "",
	  .help = "PEM private key of server.tls.cert_file" },
	{ .key = "server.tls.client_ca_file",
	  .kind = K_STRING,
	  .offset = AT(tls_client_ca_file),
	  .def = "",
	  .help = "PEM CAs: when set, clients must present a certificate they signed" },
	{ .key = "server.tls.self_signed",
	  .kind = K_BOOL,
	  .offset = AT(tls_self_signed),
	  .def = "false",
	  .help = "serve TLS with a self-signed certificate made into data_dir if absent" },
	{ .key = "server.tls.self_signed_hosts",
	  .kind = K_LIST,
	  .offset = AT(tls_self_signed_hosts),
	  .def = "",
	  .verify = verify_tls_hosts,
	  .help = "more DNS names and IP addresses the self-signed certificate names" },
	{ .key = "server.tls.allow_plain_http",
	  .kind = K_BOOL,
	  .offset = AT(tls_allow_plain_http),
	  .def = "false",
	  .help = "serve plain HTTP on an address that is not loopback (behind a TLS proxy)" },
	{ .key = "server.tls.hsts_max_age",
	  .kind = K_DURATION,
	  .offset = AT(hsts_max_age_ms),
	  .def = "365d",
	  .help = "replies over TLS carry Strict-Transport-Security with this max-age, so "
	          "browsers use https only; 0 = no such header" },
	{ .key = "auth", .kind = K_SECTION, .help = "users and sessions" },
	{ .key = "auth.admin_password_file",
	  .kind = K_STRING,
	  .offset = AT(admin_password_file),
	  .def = "",
	  .help = "password for user 'admin', created on first start only" },
	{ .key = "auth.jwt_secret_file",
	  .kind = K_STRING,
	  .offset = AT(jwt_secret_file),
	  .def = "",
	  .help = "session signing secret; generated into data_dir when empty" },
	{ .key = "auth.session_ttl",
	  .kind = K_DURATION,
	  .offset = AT(session_ttl_ms),
	  .def = "24h",
	  .flags = F_NONZERO,
	  .help = "lifetime of a login session" },
	{ .key = "auth.login_checks",
	  .kind = K_INT,
	  .offset = AT(login_checks),
	  .def = "2",
	  .min = 1,
	  .max = 64,
	  .help = "password checks (Argon2id, 64 MiB each) running at once" },
	{ .key = "auth.login_checks_per_address",
	  .kind = K_INT,
	  .offset = AT(login_checks_per_address),
	  .def = "2",
	  .min = 1,
	  .max = 64,
	  .help = "password checks from one address (IPv6: its /64), running or waiting; "
	          "more get 429" },
	{ .key = "auth.login_queue",
	  .kind = K_INT,
	  .offset = AT(login_queue),
	  .def = "64",
	  .min = 0,
	  .max = 10000,
	  .help = "password checks waiting for a turn; more get 429" },
	{ .key = "auth.oidc",
	  .kind = K_SECTION,
	  .help = "single sign-on with an OpenID Connect provider (docs/security.md)" },
	{ .key = "auth.oidc.issuer",
	  .kind = K_STRING,
	  .offset = AT(oidc_issuer),
	  .def = "",
	  .verify = verify_oidc,
	  .help = "the provider's issuer URL, exactly as its ID tokens name it (https://; "
	          "http:// only to a loopback address); empty = no single sign-on" },
	{ .key = "auth.oidc.client_id",
	  .kind = K_STRING,
	  .offset = AT(oidc_client_id),
	  .def = "",
	  .help = "the WebUI's client id at the provider" },
	{ .key = "auth.oidc.client_secret_file",
	  .kind = K_STRING,
	  .offset = AT(oidc_client_secret_file),
	  .def = "",
	  .help = "a file (no group or other access) whose first line is the client secret, "
	          "sent as client_secret_post; empty = a public client (PKCE alone)" },
	{ .key = "auth.oidc.cli_client_id",
	  .kind = K_STRING,
	  .offset = AT(oidc_cli_client_id),
	  .def = "",
	  .help = "the client id rezusctl signs in with (a public client); empty = client_id" },
	{ .key = "auth.oidc.scopes",
	  .kind = K_STRING,
	  .offset = AT(oidc_scopes),
	  .def = "openid profile email groups",
	  .flags = F_NONEMPTY,
	  .help = "the scopes asked for, space-separated" },
	{ .key = "auth.oidc.username_claim",
	  .kind = K_STRING,
	  .offset = AT(oidc_username_claim),
	  .def = "preferred_username",
	  .flags = F_NONEMPTY,
	  .help = "the ID token's claim naming the user (a DNS label; no fallback: a token "
	          "without it is refused)" },
	{ .key = "auth.oidc.groups_claim",
	  .kind = K_STRING,
	  .offset = AT(oidc_groups_claim),
	  .def = "groups",
	  .help = "the claim listing the user's groups; empty = none taken" },
	{ .key = "auth.oidc.groups_prefix",
	  .kind = K_STRING,
	  .offset = AT(oidc_groups_prefix),
	  .def = "oidc-",
	  .help = "put before each group's name in User.spec.groups, so that AccessBindings "
	          "name {kind: Group, name: oidc-team-a}" },
	{ .key = "auth.oidc.roles",
	  .kind = K_LIST,
	  .offset = AT(oidc_roles),
	  .def = "",
	  .help = "group=role (the provider's group name, role none, view, edit or admin): the "
	          "highest of a user's sets its role at each login; empty = new users get none "
	          "and keep what an admin gives" },
	{ .key = "auth.oidc.ca_file",
	  .kind = K_STRING,
	  .offset = AT(oidc_ca_file),
	  .def = "",
	  .help = "PEM CAs the provider's certificate is checked against; empty = the system's" },
	{ .key = "auth.oidc.redirect_url",
	  .kind = K_STRING,
	  .offset = AT(oidc_redirect_url),
	  .def = "",
	  .help = "the WebUI's callback as the browser reaches it (https://host/login/oidc/"
	          "callback); empty = server.external_url's, else the request's host" },
	{ .key = "auth.oidc.display_name",
	  .kind = K_STRING,
	  .offset = AT(oidc_display_name),
	  .def = "",
	  .help = "the login page's button says \"Sign in with\" this; empty = single sign-on" },
	{ .key = "tofu", .kind = K_SECTION, .help = "the tofu run pool" },
	{ .key = "tofu.binary",
	  .kind = K_STRING,
	  .offset = AT(tofu_binary),
	  .def = "tofu",
	  .flags = F_NONEMPTY,
	  .help =
	      "tofu or terraform: a path or a name on PATH (the default falls back to terraform)" },
	{ .key = "tofu.workers",
	  .kind = K_INT,
	  .offset = AT(tofu_workers),
	  .def = "4",
	  .min = 1,
	  .max = 256,
	  .help = "concurrent tofu processes" },
	{ .key = "tofu.debounce",
	  .kind = K_DURATION,
	  .offset = AT(tofu_debounce_ms),
	  .def = "5s",
	  .help = "trailing debounce per tenant" },
	{ .key = "tofu.resync",
	  .kind = K_DURATION,
	  .offset = AT(tofu_resync_ms),
	  .def = "5m",
	  .help = "re-enqueue every tenant this often; 0 = off" },
	{ .key = "tofu.timeout",
	  .kind = K_DURATION,
	  .offset = AT(tofu_timeout_ms),
	  .def = "30m",
	  .flags = F_NONZERO,
	  .help = "limit per tofu command, then SIGINT" },
	{ .key = "tofu.kill_grace",
	  .kind = K_DURATION,
	  .offset = AT(tofu_kill_grace_ms),
	  .def = "30s",
	  .help = "SIGKILL this long after SIGINT" },
	{ .key = "tofu.plugin_cache_dir",
	  .kind = K_STRING,
	  .offset = AT(tofu_plugin_cache_dir),
	  .def = "",
	  .help = "shared TF_PLUGIN_CACHE_DIR" },
	{ .key = "tofu.env_passthrough",
	  .kind = K_LIST,
	  .offset = AT(tofu_env_passthrough),
	  .def = "",
	  .help = "extra environment names or globs handed to tofu" },
	{ .key = "tofu.state_history",
	  .kind = K_INT,
	  .offset = AT(tofu_state_history),
	  .def = "20",
	  .min = 0,
	  .max = 10000,
	  .help = "previous state versions kept per tenant" },
	{ .key = "tofu.run_history",
	  .kind = K_INT,
	  .offset = AT(tofu_run_history),
	  .def = "50",
	  .min = 1,
	  .max = 100000,
	  .help = "Runs kept per tenant, newest first (failed ones younger than "
	          "tofu.run_retention besides)" },
	{ .key = "tofu.run_retention",
	  .kind = K_DURATION,
	  .offset = AT(tofu_run_retention_ms),
	  .def = "30d",
	  .flags = F_NONZERO,
	  .help = "how long a failed Run is kept beyond tofu.run_history" },
	{ .key = "tofu.destroy_approval",
	  .kind = K_BOOL,
	  .offset = AT(tofu_destroy_approval),
	  .def = "true",
	  .help = "a plan that deletes resources waits for approval" },
	{ .key = "tofu.max_run_log",
	  .kind = K_SIZE,
	  .offset = AT(tofu_max_run_log),
	  .def = "64MiB",
	  .flags = F_NONZERO,
	  .help = "largest run log; beyond, its head and tail are kept around a marker" },
	{ .key = "observe", .kind = K_SECTION, .help = "observation of machines and clusters" },
	{ .key = "observe.interval",
	  .kind = K_DURATION,
	  .offset = AT(observe_interval_ms),
	  .def = "30s",
	  .flags = F_NONZERO,
	  .help = "time between observations of a settled tenant" },
	{ .key = "observe.fast_interval",
	  .kind = K_DURATION,
	  .offset = AT(observe_fast_interval_ms),
	  .def = "5s",
	  .flags = F_NONZERO,
	  .help = "time between observations while a tenant provisions or upgrades" },
	{ .key = "observe.stable_interval",
	  .kind = K_DURATION,
	  .offset = AT(observe_stable_interval_ms),
	  .def = "2m",
	  .flags = F_NONZERO,
	  .help = "the longest observe.interval grows to, doubling, while a settled tenant's "
	          "observations find nothing new" },
	{ .key = "observe.workers",
	  .kind = K_INT,
	  .offset = AT(observe_workers),
	  .def = "4",
	  .min = 1,
	  .max = 256,
	  .help = "probes running at once (besides the tofu pool)" },
	{ .key = "observe.probe_timeout",
	  .kind = K_DURATION,
	  .offset = AT(observe_probe_timeout_ms),
	  .def = "30s",
	  .flags = F_NONZERO,
	  .help = "the longest a probe may run; a plugin's longer timeout is cut to it" },
	{ .key = "observe.provision_timeout",
	  .kind = K_DURATION,
	  .offset = AT(observe_provision_timeout_ms),
	  .def = "30m",
	  .flags = F_NONZERO,
	  .help = "a tenant still provisioning this long after its apply is Failed" },
	{ .key = "talos", .kind = K_SECTION, .help = "the talosctl tool" },
	{ .key = "talos.binary",
	  .kind = K_STRING,
	  .offset = AT(talos_binary),
	  .def = "talosctl",
	  .flags = F_NONEMPTY,
	  .help = "talosctl: a path or a name on PATH" },
	{ .key = "upgrade", .kind = K_SECTION, .help = "rolling upgrades" },
	{ .key = "upgrade.machine_timeout",
	  .kind = K_DURATION,
	  .offset = AT(upgrade_machine_timeout_ms),
	  .def = "20m",
	  .flags = F_NONZERO,
	  .help = "the longest one machine's upgrade and health gate may take before it is "
	          "rolled back" },
	{ .key = "kubectl", .kind = K_SECTION, .help = "the kubectl tool" },
	{ .key = "kubectl.binary",
	  .kind = K_STRING,
	  .offset = AT(kubectl_binary),
	  .def = "kubectl",
	  .flags = F_NONEMPTY,
	  .help = "kubectl: a path or a name on PATH" },
	{ .key = "events", .kind = K_SECTION, .help = "Events" },
	{ .key = "events.retention",
	  .kind = K_DURATION,
	  .offset = AT(events_retention_ms),
	  .def = "24h",
	  .flags = F_NONZERO,
	  .help = "how long an Event is kept after it last happened" },
	{ .key = "events.max_per_tenant",
	  .kind = K_INT,
	  .offset = AT(events_max_per_tenant),
	  .def = "1000",
	  .min = 10,
	  .max = 100000,
	  .help = "Events kept per tenant; the oldest go first" },
	{ .key = "audit", .kind = K_SECTION, .help = "the audit log" },
	{ .key = "audit.retention",
	  .kind = K_DURATION,
	  .offset = AT(audit_retention_ms),
	  .def = "90d",
	  .flags = F_NONZERO,
	  .help = "how long audit entries are kept" },
	{ .key = "audit.refused_full",
	  .kind = K_INT,
	  .offset = AT(audit_refused_full),
	  .def = "10",
	  .min = 1,
	  .max = 100000,
	  .help = "refused requests (401, 403, 429) per address and interval recorded in full" },
	{ .key = "audit.refused_interval",
	  .kind = K_DURATION,
	  .offset = AT(audit_refused_interval_ms),
	  .def = "1m",
	  .flags = F_NONZERO,
	  .help = "the interval; the refusals beyond make one row per address" },
	{ .key = "backup", .kind = K_SECTION, .help = "backups of the database" },
	{ .key = "backup.dir",
	  .kind = K_STRING,
	  .offset = AT(backup_dir),
	  .def = "",
	  .help = "where backups go, on a schedule; empty = none scheduled, on demand into "
	          "data_dir/backups" },
	{ .key = "backup.interval",
	  .kind = K_DURATION,
	  .offset = AT(backup_interval_ms),
	  .def = "24h",
	  .flags = F_NONZERO,
	  .help = "time between backups" },
	{ .key = "backup.keep",
	  .kind = K_INT,
	  .offset = AT(backup_keep),
	  .def = "7",
	  .min = 1,
	  .max = 1000,
	  .help = "backups kept" },
	{ .key = "backup.passphrase_file",
	  .kind = K_STRING,
	  .offset = AT(backup_passphrase_file),
	  .def = "",
	  .help = "a file whose first line seals the state key into every backup; empty = "
	          "backups hold no state key" },
	{ .key = "backup.target",
	  .kind = K_STRING,
	  .offset = AT(backup_target),
	  .def = "",
	  .check = check_backup_target,
	  .help = "also store each backup, sealed, in etcd_backup's local or s3 target; empty = "
	          "none" },
	{ .key = "etcd_backup",
	  .kind = K_SECTION,
	  .help = "snapshots of the tenants' etcd; a tenant's spec.etcdBackup overrides interval, "
	          "keep and target" },
	{ .key = "etcd_backup.interval",
	  .kind = K_DURATION,
	  .offset = AT(etcd_backup_interval_ms),
	  .def = "6h",
	  .help = "time between a tenant's snapshots; 0 = none scheduled" },
	{ .key = "etcd_backup.keep",
	  .kind = K_INT,
	  .offset = AT(etcd_backup_keep),
	  .def = "7",
	  .min = 1,
	  .max = 1000,
	  .help = "succeeded snapshots kept per tenant" },
	{ .key = "etcd_backup.target",
	  .kind = K_STRING,
	  .offset = AT(etcd_backup_target),
	  .def = "local",
	  .check = check_etcd_target,
	  .help = "where snapshots go: local (etcd_backup.dir) or s3 (etcd_backup.s3)" },
	{ .key = "etcd_backup.dir",
	  .kind = K_STRING,
	  .offset = AT(etcd_backup_dir),
	  .def = "",
	  .help = "the local target's directory; empty = data_dir/etcd-backups" },
	{ .key = "etcd_backup.key_file",
	  .kind = K_STRING,
	  .offset = AT(etcd_backup_key_file),
	  .def = "",
	  .help = "the keys snapshots are encrypted with (made when missing, 0600; rezuscloud "
	          "etcd-key rotate adds one); empty = data_dir/etcd-backup.key" },
	{ .key = "etcd_backup.timeout",
	  .kind = K_DURATION,
	  .offset = AT(etcd_backup_timeout_ms),
	  .def = "10m",
	  .flags = F_NONZERO,
	  .help = "how long one snapshot's or restore's commands may take" },
	{ .key = "etcd_backup.s3", .kind = K_SECTION, .help = "the S3-compatible target" },
	{ .key = "etcd_backup.s3.endpoint",
	  .kind = K_STRING,
	  .offset = AT(etcd_s3_endpoint),
	  .def = "",
	  .help = "https://HOST[:PORT] of the S3-compatible service" },
	{ .key = "etcd_backup.s3.bucket",
	  .kind = K_STRING,
	  .offset = AT(etcd_s3_bucket),
	  .def = "",
	  .help = "the bucket" },
	{ .key = "etcd_backup.s3.prefix",
	  .kind = K_STRING,
	  .offset = AT(etcd_s3_prefix),
	  .def = "rezus/etcd/",
	  .help = "put before every object's key" },
	{ .key = "etcd_backup.s3.region",
	  .kind = K_STRING,
	  .offset = AT(etcd_s3_region),
	  .def = "us-east-1",
	  .help = "the region requests are signed for (SigV4)" },
	{ .key = "etcd_backup.s3.credentials_file",
	  .kind = K_STRING,
	  .offset = AT(etcd_s3_credentials_file),
	  .def = "",
	  .help = "a file with the access key and the secret key (docs/backups.md)" },
	{ .key = "etcd_backup.s3.ca_file",
	  .kind = K_STRING,
	  .offset = AT(etcd_s3_ca_file),
	  .def = "",
	  .help = "CA certificates to verify the endpoint with; empty = the system's" },
	{ .key = "etcd_backup.s3.path_style",
	  .kind = K_BOOL,
	  .offset = AT(etcd_s3_path_style),
	  .def = "false",
	  .help = "address the bucket in the path (https://HOST/BUCKET/KEY) rather than the host "
	          "name (https://BUCKET.HOST/KEY)" },
	{ .key = "store", .kind = K_SECTION, .help = "the database" },
	{ .key = "store.durability",
	  .kind = K_STRING,
	  .offset = AT(store_durability),
	  .def = "normal",
	  .check = check_durability,
	  .help = "normal: a write is acknowledged at its commit, before its fsync (a power "
	          "loss or kernel crash can lose the last writes, a process crash cannot); "
	          "full: after its commit is on the disk (group commit)" },
	{ .key = "web", .kind = K_SECTION, .help = "the WebUI" },
	{ .key = "web.dir",
	  .kind = K_STRING,
	  .offset = AT(web_dir),
	  .def = "",
	  .help = "read the WebUI's templates from this folder (web/templates of a source "
	          "tree) at start instead of those built in; for development" },
	{ .key = "runners",
	  .kind = K_SECTION,
	  .help = "remote runners over NATS (docs/runners.md)" },
	{ .key = "runners.nats_url",
	  .kind = K_STRING,
	  .offset = AT(runners_nats_url),
	  .def = "",
	  .verify = verify_runners_nats,
	  .help = "NATS server(s), nats://host:port or tls://host:port, comma-separated; empty = "
	          "the local pool only, nothing NATS" },
	{ .key = "runners.nats_user",
	  .kind = K_STRING,
	  .offset = AT(runners_nats_user),
	  .def = "",
	  .help = "the daemon's NATS user (with runners.nats_password_file)" },
	{ .key = "runners.nats_password_file",
	  .kind = K_STRING,
	  .offset = AT(runners_nats_password_file),
	  .def = "",
	  .help = "a file (no group or other access) whose first line is the NATS user's "
	          "password" },
	{ .key = "runners.nats_token_file",
	  .kind = K_STRING,
	  .offset = AT(runners_nats_token_file),
	  .def = "",
	  .help = "a file (no group or other access) whose first line is a NATS token, instead "
	          "of a user" },
	{ .key = "runners.nats_ca_file",
	  .kind = K_STRING,
	  .offset = AT(runners_nats_ca_file),
	  .def = "",
	  .help = "PEM CAs the NATS server's certificate is checked against; set, the "
	          "connection is TLS" },
	{ .key = "runners.heartbeat_timeout",
	  .kind = K_DURATION,
	  .offset = AT(runners_heartbeat_timeout_ms),
	  .def = "30s",
	  .verify = verify_second_to_hour,
	  .help = "a Runner whose last heartbeat is older is Lost (1s to 1h)" },
	{ .key = "runners.claim_timeout",
	  .kind = K_DURATION,
	  .offset = AT(runners_claim_timeout_ms),
	  .def = "2m",
	  .verify = verify_second_to_hour,
	  .help = "a step's job no runner claimed this long while a Ready runner serves its "
	          "pool is published again; after three tries the run fails saying so "
	          "(1s to 1h)" },
	{ .key = "runners.installation",
	  .kind = K_STRING,
	  .offset = AT(runners_installation),
	  .def = "",
	  .check = check_installation,
	  .help = "the name of this installation on NATS, in every subject and stream name "
	          "(rezus.<it>.jobs..., REZUS_<IT>_JOBS), so that daemons sharing a NATS share "
	          "nothing; empty = derived from the data dir (its JWT secret)" },
	{ .key = "runners.public_url",
	  .kind = K_STRING,
	  .offset = AT(runners_public_url),
	  .def = "",
	  .check = check_base_url,
	  .help = "the daemon as remote runners reach it, https://host:port: in their jobs and "
	          "as their runs' state backend; empty = the listen address" },
	{ .key = "runner", .kind = K_SECTION, .help = "rezuscloud runner: a remote runner" },
	{ .key = "runner.name",
	  .kind = K_STRING,
	  .offset = AT(runner_name),
	  .def = "",
	  .check = check_proc_name,
	  .help = "the Runner's name, a DNS label; empty = the host name" },
	{ .key = "runner.installation",
	  .kind = K_STRING,
	  .offset = AT(runner_installation),
	  .def = "",
	  .check = check_installation,
	  .help = "the daemon's runners.installation; empty = asked of runner.daemon_url at "
	          "start (required without it)" },
	{ .key = "runner.labels",
	  .kind = K_LIST,
	  .offset = AT(runner_labels),
	  .def = "",
	  .help = "key=value labels (label syntax) that route runs to this runner, e.g. "
	          "region=eu-frankfurt; 32 at most" },
	{ .key = "runner.concurrency",
	  .kind = K_INT,
	  .offset = AT(runner_concurrency),
	  .def = "1",
	  .min = 1,
	  .max = 64,
	  .help = "runs this runner takes at once" },
	{ .key = "runner.heartbeat",
	  .kind = K_DURATION,
	  .offset = AT(runner_heartbeat_ms),
	  .def = "5s",
	  .verify = verify_second_to_hour,
	  .help = "time between heartbeats (1s to 1h; keep it well under the daemon's "
	          "runners.heartbeat_timeout)" },
	{ .key = "runner.pool_idle",
	  .kind = K_DURATION,
	  .offset = AT(runner_pool_idle_ms),
	  .def = "1h",
	  .verify = verify_second_to_week,
	  .help = "how long a pool's JetStream consumer outlives the last pull of any runner "
	          "(1s to 7d): NATS then removes it; a runner that pulls again creates it again" },
	{ .key = "runner.work_dir",
	  .kind = K_STRING,
	  .offset = AT(runner_work_dir),
	  .def = RZ_LOCALSTATEDIR "/lib/rezus-runner",
	  .flags = F_NONEMPTY,
	  .help = "where the runner keeps its runs' working directories" },
	{ .key = "runner.nats_url",
	  .kind = K_STRING,
	  .offset = AT(runner_nats_url),
	  .def = "",
	  .verify = verify_runner_nats,
	  .help = "NATS server(s) the runner connects to (required by rezuscloud runner)" },
	{ .key = "runner.nats_user",
	  .kind = K_STRING,
	  .offset = AT(runner_nats_user),
	  .def = "",
	  .help = "the runner's NATS user (with runner.nats_password_file)" },
	{ .key = "runner.nats_password_file",
	  .kind = K_STRING,
	  .offset = AT(runner_nats_password_file),
	  .def = "",
	  .help = "a file (no group or other access) whose first line is the runner user's "
	          "password" },
	{ .key = "runner.nats_token_file",
	  .kind = K_STRING,
	  .offset = AT(runner_nats_token_file),
	  .def = "",
	  .help = "a file (no group or other access) whose first line is a NATS token" },
	{ .key = "runner.nats_ca_file",
	  .kind = K_STRING,
	  .offset = AT(runner_nats_ca_file),
	  .def = "",
	  .help = "PEM CAs for the NATS server's certificate; set, the connection is TLS" },
	{ .key = "runner.daemon_url",
	  .kind = K_STRING,
	  .offset = AT(runner_daemon_url),
	  .def = "",
	  .check = check_base_url,
	  .help = "the daemon this runner claims jobs from (its runners.public_url); a job "
	          "naming another is dropped; empty = no jobs taken" },
	{ .key = "runner.token_file",
	  .kind = K_STRING,
	  .offset = AT(runner_token_file),
	  .def = "",
	  .help = "a file (no group or other access) whose first line is the runner's API "
	          "token (an APIToken with spec.scope runner)" },
	{ .key = "runner.daemon_ca_file",
	  .kind = K_STRING,
	  .offset = AT(runner_daemon_ca_file),
	  .def = "",
	  .help = "PEM CAs the daemon's certificate is checked against; empty = the system's" },
	{ .key = "log", .kind = K_SECTION, .help = "logging" },
	{ .key = "log.level",
	  .kind = K_STRING,
	  .offset = AT(log_level),
	  .def = "info",
	  .check = check_log_level,
	  .help = "debug, info, notice, warning, err, crit, alert or emerg" },
	{ .key = "log.file",
	  .kind = K_STRING,
	  .offset = AT(log_file),
	  .def = "",
	  .help = "log file, reopened on SIGHUP; empty = stderr" },
	{ .key = "log.access_per_address",
	  .kind = K_INT,
	  .offset = AT(log_access_per_address),
	  .def = "100",
	  .min = 0,
	  .max = 1000000,
	  .help = "lines about requests (request lines, refused credentials and logins) logged "
	          "per peer address in 10 s; the rest are counted into one \"N more\" line (a "
	          "flood does not fill the disk); 0 = every one" },
	{ .key = "plugin_dir",
	  .kind = K_STRING,
	  .offset = AT(plugin_dir),
	  .def = RZ_PLUGIN_DIR,
	  .help = "where plugins are loaded from" },
	{ .key = "plugins", .kind = K_PLUGINS, .help = "plugin name -> the plugin's own settings" },
};

const size_t rz__settings_n = ARRAY_SIZE(rz__settings);

_Static_assert(ARRAY_SIZE(rz__settings) <= RZ__SETTINGS_MAX, "raise RZ__SETTINGS_MAX");
