/* cli/admin.c - login, logout, contexts, users, tokens, audit, backups, discovery, version. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <termios.h>
#include <unistd.h>

#include "cli/rezusctl.h"

/* ------------------------------------------------------------------ secrets from a person */

/* A line from stdin (no newline). Caller frees. */
static char *read_line(FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);

	if (n < 0) {
		free(line);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
		line[--n] = '\0';
	}
	return line;
}

/* Prompt on the terminal; without echo when secret. NULL when there is no terminal. */
static char *prompt(const char *what, bool secret)
{
	FILE *tty = fopen("/dev/tty", "r+");
	struct termios old, quiet;
	char *line;

	if (tty == NULL) {
		return NULL;
	}
	fprintf(tty, "%s", what);
	fflush(tty);
	if (secret && tcgetattr(fileno(tty), &old) == 0) {
		quiet = old;
		quiet.c_lflag &= (tcflag_t) ~(ECHO | ECHONL);
		tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
		line = read_line(tty);
		tcsetattr(fileno(tty), TCSAFLUSH, &old);
		fprintf(tty, "\n");
	} else {
		line = read_line(tty);
	}
	fclose(tty);
	return line;
}

static void wipe(char *s)
{
	if (s != NULL) {
		volatile char *p = s;
		while (*p != '\0') {
			*p++ = '\0';
		}
		free(s);
	}
}

/* ------------------------------------------------------------------ contexts */

/* The context to write: --context, the current one, or "default"; created when missing. */
static json_t *writable_context(rzc_t *c)
{
	const char *name = c->context
	                       ? c->context
	                       : json_string_value(json_object_get(c->config, "current-context"));
	json_t *ctx, *list = json_object_get(c->config, "contexts");

	if (name == NULL) {
		name = "default";
	}
	if ((ctx = rzc_context(c, name)) != NULL) {
		return ctx;
	}
	if (!json_is_array(list)) {
		list = json_array();
		json_object_set_new(c->config, "contexts", list);
	}
	ctx = json_pack("{s:s}", "name", name);
	json_array_append_new(list, ctx);
	return ctx;
}

int rzc_login_keep(rzc_t *c, const char *user)
{
	char host[256] = "", *u = rzc_escape(user), *path = rzc_path("/api/v1/users/%s/tokens", u);
	char *desc = NULL;
	json_t *body, *tok = NULL, *ctx;
	int rc;

	/* keep a revocable API token, never the password (nor the short session) */
	gethostname(host, sizeof(host) - 1);
	if (asprintf(&desc, "rezusctl on %s", host) < 0) {
		desc = NULL;
	}
	body = json_pack("{s:{s:s}}", "spec", "description", desc ? desc : "rezusctl");
	rc = rzc_json(c, "POST", path, body, &tok);
	json_decref(body);
	free(desc);
	free(u);
	free(path);
	rzc_json(c, "POST", "/api/v1/auth/logout", NULL, NULL);
	if (rc != RZC_OK) {
		json_decref(tok);
		return rc;
	}
	ctx = writable_context(c);
	json_object_set_new(ctx, "server", json_string(c->server));
	json_object_set_new(ctx, "user", json_string(user));
	json_object_set(ctx, "token", json_object_get(tok, "secret"));
	json_object_set(ctx, "tokenId", json_object_get(json_object_get(tok, "metadata"), "name"));
	if (c->insecure) {
		json_object_set_new(ctx, "insecure-skip-tls-verify", json_true());
	}
	if (c->ca_file != NULL) {
		json_object_set_new(ctx, "certificate-authority", json_string(c->ca_file));
	}
	json_object_set(c->config, "current-context", json_object_get(ctx, "name"));
	rc = rzc_config_save(c);
	if (rc == RZC_OK) {
		printf("Logged in to %s as %s (context %s)\n", c->server, user,
		       json_string_value(json_object_get(ctx, "name")));
	}
	json_decref(tok);
	return rc;
}

int rzc_cmd_login(rzc_t *c, int argc, char **argv)
{
	char *user = NULL, *password = NULL, *session = NULL;
	json_t *body, *out = NULL;
	int rc;

	if (argc > 1) {
		return rzc_usage("login: [SERVER] [--username U] [--password-stdin] | [SERVER] "
		                 "--oidc [--device] [--no-browser]");
	}
	if (argc == 1) {
		free(c->server);
		c->server = strdup(argv[0]);
	}
	if (c->oidc) {
		return c->username != NULL || c->password_stdin
		           ? rzc_usage("login: --oidc takes no --username or --password-stdin")
		           : rzc_login_oidc(c);
	}
	if (c->device || c->no_browser || c->listen_port > 0 || c->timeout > 0) {
		return rzc_usage("login: --device, --no-browser, --listen-port and --timeout go "
		                 "with --oidc");
	}
	user = c->username ? strdup(c->username) : NULL;
	if (user == NULL && (user = prompt("Username: ", false)) == NULL) {
		return rzc_usage("login: give --username (there is no terminal to ask on)");
	}
	password = c->password_stdin ? read_line(stdin) : prompt("Password: ", true);
	if (password == NULL) {
		free(user);
		return rzc_usage("login: give the password on stdin with --password-stdin");
	}
	body = json_pack("{s:s, s:s}", "username", user, "password", password);
	free(c->token);
	c->token = NULL;
	rc = rzc_json(c, "POST", "/api/v1/auth/login", body, &out);
	json_decref(body);
	if (rc != RZC_OK) {
		goto out;
	}
	session = strdup(json_string_value(json_object_get(out, "token")));
	c->token = strdup(session);
	if (json_is_true(json_object_get(json_object_get(out, "user"), "mustChangePassword"))) {
		char *fresh = prompt("The password must be changed. New password: ", true);
		char *again = fresh ? prompt("New password again: ", true) : NULL;
		if (fresh == NULL || again == NULL || strcmp(fresh, again) != 0) {
			rc = rzc_fail(fresh == NULL
			                  ? "the password must be changed first, at a terminal"
			                  : "the passwords differ");
		} else {
			json_t *pw = json_pack("{s:s, s:s}", "currentPassword", password,
			                       "newPassword", fresh);
			rc = rzc_json(c, "POST", "/api/v1/auth/password", pw, NULL);
			json_decref(pw);
		}
		wipe(fresh);
		wipe(again);
		if (rc != RZC_OK) {
			goto out;
		}
	}
	rc = rzc_login_keep(c, user);
out:
	wipe(password);
	wipe(session);
	free(user);
	json_decref(out);
	return rc;
}

int rzc_cmd_logout(rzc_t *c, int argc, char **argv)
{
	json_t *ctx = writable_context(c);
	const char *id = json_string_value(json_object_get(ctx, "tokenId"));
	const char *user = json_string_value(json_object_get(ctx, "user"));
	int rc = RZC_OK;

	(void)argv;
	if (argc > 0) {
		return rzc_usage("logout: takes no arguments");
	}
	if (json_object_get(ctx, "token") == NULL) {
		return rzc_fail("context %s is not logged in",
		                json_string_value(json_object_get(ctx, "name")));
	}
	if (id != NULL && user != NULL) {
		char *u = rzc_escape(user), *i = rzc_escape(id);
		char *path = rzc_path("/api/v1/users/%s/tokens/%s", u, i);
		rzc_resp_t r;
		if (rzc_request(c, "DELETE", path, NULL, NULL, 0, &r) == 0) {
			if (r.code != 200 && r.code != 202 && r.code != 404 && r.code != 401) {
				rzc_print_status(&r);
				rc = RZC_ERR;
			}
			rzc_resp_free(&r);
		} else {
			rc = RZC_ERR;
		}
		free(u);
		free(i);
		free(path);
	}
	if (rc == RZC_OK) {
		json_object_del(ctx, "token");
		json_object_del(ctx, "tokenId");
		rc = rzc_config_save(c);
		if (rc == RZC_OK) {
			printf("Logged out of %s\n", c->server);
		}
	}
	return rc;
}

int rzc_cmd_config(rzc_t *c, int argc, char **argv)
{
	const char *cur = json_string_value(json_object_get(c->config, "current-context"));
	json_t *ctx;
	size_t i;

	if (argc < 1) {
		return rzc_usage(
		    "config: get-contexts | use-context NAME | set-context NAME | view");
	}
	if (strcmp(argv[0], "get-contexts") == 0) {
		static const char *const heads[] = { "CURRENT", "NAME", "SERVER", "USER",
			                             "TENANT" };
		rzc_rows_t t;
		rzc_rows_init(&t, heads, 5);
		json_array_foreach(json_object_get(c->config, "contexts"), i, ctx)
		{
			const char *n = json_string_value(json_object_get(ctx, "name"));
			rzc_rows_add(&t, cur && n && strcmp(cur, n) == 0 ? "*" : "", n,
			             json_string_value(json_object_get(ctx, "server")),
			             json_string_value(json_object_get(ctx, "user")),
			             json_string_value(json_object_get(ctx, "tenant")));
		}
		rzc_rows_print(&t, "");
		rzc_rows_free(&t);
		return RZC_OK;
	}
	if (strcmp(argv[0], "use-context") == 0 && argc == 2) {
		if (rzc_context(c, argv[1]) == NULL) {
			return rzc_fail("no context \"%s\"", argv[1]);
		}
		json_object_set_new(c->config, "current-context", json_string(argv[1]));
		return rzc_config_save(c) == RZC_OK
		           ? (printf("Switched to context \"%s\".\n", argv[1]), RZC_OK)
		           : RZC_ERR;
	}
	if (strcmp(argv[0], "set-context") == 0 && argc == 2) {
		const char *saved = c->context;
		c->context = argv[1];
		ctx = writable_context(c);
		c->context = saved;
		if (c->server_given) {
			json_object_set_new(ctx, "server", json_string(c->server));
		}
		if (c->tenant_given) {
			json_object_set_new(ctx, "tenant", json_string(c->tenant));
		}
		if (c->insecure) {
			json_object_set_new(ctx, "insecure-skip-tls-verify", json_true());
		}
		if (c->ca_file != NULL) {
			json_object_set_new(ctx, "certificate-authority", json_string(c->ca_file));
		}
		if (json_object_get(c->config, "current-context") == NULL) {
			json_object_set_new(c->config, "current-context", json_string(argv[1]));
		}
		return rzc_config_save(c) == RZC_OK
		           ? (printf("Context \"%s\" set.\n", argv[1]), RZC_OK)
		           : RZC_ERR;
	}
	if (strcmp(argv[0], "view") == 0) {
		json_t *copy = json_deep_copy(c->config);
		json_array_foreach(json_object_get(copy, "contexts"), i, ctx)
		{
			if (json_object_get(ctx, "token") != NULL) {
				json_object_set_new(ctx, "token", json_string("REDACTED"));
			}
		}
		rzc_yaml_write(stdout, copy);
		json_decref(copy);
		return RZC_OK;
	}
	return rzc_usage("config: get-contexts | use-context NAME | set-context NAME | view");
}

/* ------------------------------------------------------------------ users and tokens */

static int list_of(rzc_t *c, const char *kind_word, const char *path)
{
	json_t *list = NULL;
	int rc = rzc_json(c, "GET", path, NULL, &list);

	if (rc == RZC_OK) {
		rzc_print_list(c, rzc_kind_find(kind_word), json_object_get(list, "items"), true);
	}
	json_decref(list);
	return rc;
}

int rzc_cmd_user(rzc_t *c, int argc, char **argv)
{
	const char *name;
	char *n, *path;
	int rc;

	if (argc < 1 || strcmp(argv[0], "list") == 0) {
		return list_of(c, "users", "/api/v1/users");
	}
	if (argc != 2) {
		return rzc_usage(
		    "user: list | create NAME --role R [--password-stdin] | delete NAME | "
		    "set-role NAME --role R");
	}
	if ((name = rzc_name_arg(argv[1], "User", "user")) == NULL) {
		return RZC_USAGE;
	}
	n = rzc_escape(name);
	if (strcmp(argv[0], "create") == 0) {
		char *password = c->password_stdin ? read_line(stdin) : prompt("Password: ", true);
		json_t *body;
		if (password == NULL) {
			free(n);
			return rzc_usage(
			    "user create: give the password on stdin with --password-stdin");
		}
		body = json_pack("{s:{s:s}, s:{s:s, s:s}}", "metadata", "name", name, "spec",
		                 "role", c->role ? c->role : "view", "password", password);
		rc = rzc_json(c, "POST", "/api/v1/users", body, NULL);
		json_decref(body);
		wipe(password);
		if (rc == RZC_OK) {
			printf("user/%s created\n", name);
		}
	} else if (strcmp(argv[0], "delete") == 0) {
		path = rzc_path("/api/v1/users/%s", n);
		rc = rzc_json(c, "DELETE", path, NULL, NULL);
		free(path);
		if (rc == RZC_OK) {
			printf("user/%s deleted\n", name);
		}
	} else if (strcmp(argv[0], "set-role") == 0 && c->role != NULL) {
		json_t *patch = json_pack("{s:{s:s}}", "spec", "role", c->role);
		char *body = json_dumps(patch, JSON_COMPACT);
		rzc_resp_t r;
		path = rzc_path("/api/v1/users/%s", n);
		rc = rzc_request(c, "PATCH", path, "application/merge-patch+json", body,
		                 strlen(body), &r) < 0
		         ? RZC_ERR
		         : RZC_OK;
		if (rc == RZC_OK && r.code == 200) {
			printf("user/%s is now %s\n", name, c->role);
		} else if (rc == RZC_OK) {
			rzc_print_status(&r);
			rc = RZC_ERR;
		}
		rzc_resp_free(&r);
		free(body);
		free(path);
		json_decref(patch);
	} else {
		rc = rzc_usage(
		    "user: list | create NAME --role R | delete NAME | set-role NAME --role R");
	}
	free(n);
	return rc;
}

/* --expires: a duration from now in Go's form with days (30s, 15m, 12h, 7d, 1h30m) as an
 * RFC 3339 UTC time, or an RFC 3339 time as given (the server checks it). -1 when it is
 * neither: digits with an unknown unit, or more than 100 years. */
static int expires_at(const char *text, char *out, size_t size)
{
	static const struct {
		char unit;
		long long seconds;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	const long long most = 100LL * 366 * 86400;
	long long total = 0;
	const char *p = text;
	time_t at;
	struct tm tm;

	if (strchr(text, '-') != NULL || strchr(text, ':') != NULL) {
		snprintf(out, size, "%s", text); /* a time: the server's to check */
		return strlen(text) < size ? 0 : -1;
	}
	while (*p != '\0') {
		long long n = 0;
		size_t u;
		if (*p < '0' || *p > '9') {
			return -1;
		}
		while (*p >= '0' && *p <= '9' && n <= most) {
			n = n * 10 + (*p++ - '0');
		}
		for (u = 0; u < sizeof(units) / sizeof(units[0]) && units[u].unit != *p; u++) {
		}
		if (u == sizeof(units) / sizeof(units[0]) || n > most) {
			return -1;
		}
		p++;
		total += n * units[u].seconds;
		if (total > most) {
			return -1;
		}
	}
	if (total == 0) {
		return -1;
	}
	at = time(NULL) + (time_t)total;
	if (gmtime_r(&at, &tm) == NULL || strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		return -1;
	}
	return 0;
}

int rzc_cmd_password(rzc_t *c, int argc, char **argv)
{
	char *cur = NULL, *next = NULL, *again = NULL;
	json_t *body;
	int rc;

	(void)argv;
	if (argc != 0) {
		return rzc_usage("password: takes no arguments ([--password-stdin])");
	}
	if (c->password_stdin) {
		cur = read_line(stdin);
		next = cur != NULL ? read_line(stdin) : NULL;
	} else if ((cur = prompt("Current password: ", true)) != NULL &&
	           (next = prompt("New password: ", true)) != NULL &&
	           ((again = prompt("New password again: ", true)) == NULL ||
	            strcmp(next, again) != 0)) {
		wipe(cur);
		wipe(next);
		wipe(again);
		fprintf(stderr,
		        "error: the new password was not repeated the same: nothing changed\n");
		return RZC_ERR;
	}
	wipe(again);
	if (cur == NULL || next == NULL) {
		wipe(cur);
		wipe(next);
		return rzc_usage("password: give the current and the new password on two lines of "
		                 "stdin with --password-stdin");
	}
	body = json_pack("{s:s, s:s}", "currentPassword", cur, "newPassword", next);
	rc = rzc_json(c, "POST", "/api/v1/auth/password", body, NULL);
	json_decref(body);
	wipe(cur);
	wipe(next);
	if (rc == RZC_OK) {
		printf("password changed\n");
	}
	return rc;
}

int rzc_cmd_token(rzc_t *c, int argc, char **argv)
{
	char *u, *coll;
	int rc;

	if (c->user == NULL) {
		return rzc_fail("log in first: tokens belong to the logged-in user");
	}
	u = rzc_escape(c->user);
	coll = rzc_path("/api/v1/users/%s/tokens", u);
	free(u);
	if (argc < 1 || strcmp(argv[0], "list") == 0) {
		rc = list_of(c, "tokens", coll);
	} else if (strcmp(argv[0], "create") == 0 && argc == 1) {
		json_t *spec = json_object(), *body, *out = NULL;
		if (c->role) {
			json_object_set_new(spec, "role", json_string(c->role));
		}
		if (c->description) {
			json_object_set_new(spec, "description", json_string(c->description));
		}
		if (c->expires) {
			char at[40];
			if (expires_at(c->expires, at, sizeof(at)) != 0) {
				json_decref(spec);
				free(coll);
				return rzc_usage(
				    "--expires %s: give a duration (30s, 15m, 12h, 7d, "
				    "1h30m) or an RFC 3339 time (2027-01-01T00:00:00Z)",
				    c->expires);
			}
			json_object_set_new(spec, "expiresAt", json_string(at));
		}
		body = json_pack("{s:o}", "spec", spec);
		rc = rzc_json(c, "POST", coll, body, &out);
		if (rc == RZC_OK) {
			printf("token/%s created; its secret, shown this once:\n%s\n",
			       json_string_value(
			           json_object_get(json_object_get(out, "metadata"), "name")),
			       json_string_value(json_object_get(out, "secret")));
		}
		json_decref(body);
		json_decref(out);
	} else if (strcmp(argv[0], "delete") == 0 && argc == 2) {
		const char *id = rzc_name_arg(argv[1], "APIToken", "token");
		char *i = id ? rzc_escape(id) : NULL, *path = i ? rzc_path("%s/%s", coll, i) : NULL;
		rc = id == NULL ? RZC_USAGE : rzc_json(c, "DELETE", path, NULL, NULL);
		if (rc == RZC_OK) {
			printf("token/%s deleted\n", id);
		}
		free(i);
		free(path);
	} else {
		rc = rzc_usage("token: list | create [--role R] [--description D] [--expires T] | "
		               "delete ID");
	}
	free(coll);
	return rc;
}

int rzc_cmd_audit(rzc_t *c, int argc, char **argv)
{
	char *path = rzc_path("/api/v1/audit?limit=%ld", c->limit);
	json_t *list = NULL, *e;
	size_t i;
	int rc;

	(void)argv;
	if (argc > 0) {
		free(path);
		return rzc_usage("audit: [--limit N]");
	}
	rc = rzc_json(c, "GET", path, NULL, &list);
	free(path);
	if (rc == RZC_OK && c->output != NULL &&
	    (strcmp(c->output, "json") == 0 || strcmp(c->output, "yaml") == 0)) {
		rzc_print_object(c, NULL, list);
	} else if (rc == RZC_OK) {
		static const char *const heads[] = { "TIME",   "USER", "VERB", "KIND",
			                             "TENANT", "NAME", "CODE" };
		rzc_rows_t t;
		rzc_rows_init(&t, heads, 7);
		json_array_foreach(json_object_get(list, "items"), i, e)
		{
			char code[24];
			snprintf(code, sizeof(code), "%lld",
			         (long long)json_integer_value(json_object_get(e, "code")));
#define S(k) json_string_value(json_object_get(e, k))
			rzc_rows_add(&t, S("time"), S("user"), S("verb"), S("kind"), S("tenant"),
			             S("name"), code);
#undef S
		}
		rzc_rows_print(&t, "");
		rzc_rows_free(&t);
	}
	json_decref(list);
	return rc;
}

static const char *const backup_heads[] = { "NAME", "TRIGGER",   "PHASE", "REVISION",
	                                    "SIZE", "STATE-KEY", "AGE" };

static void backup_row(rzc_rows_t *t, const json_t *b)
{
	const json_t *meta = json_object_get(b, "metadata"), *st = json_object_get(b, "status");
	const json_t *key = json_object_get(st, "stateKey");
	const char *phase = json_string_value(json_object_get(st, "phase"));
	const char *created = json_string_value(json_object_get(meta, "creationTimestamp"));
	const char *trigger =
	    json_string_value(json_object_get(json_object_get(b, "spec"), "trigger"));
	char age[32], rev[24] = "-", size[24] = "-";

	if (json_is_integer(json_object_get(st, "revision"))) {
		snprintf(rev, sizeof(rev), "%lld",
		         (long long)json_integer_value(json_object_get(st, "revision")));
	}
	if (json_is_integer(json_object_get(st, "size"))) {
		snprintf(size, sizeof(size), "%lld",
		         (long long)json_integer_value(json_object_get(st, "size")));
	}
	rzc_rows_add(t, json_string_value(json_object_get(meta, "name")), trigger ? trigger : "-",
	             phase ? phase : "-", rev, size,
	             key == NULL                                      ? "-"
	             : json_is_true(json_object_get(key, "included")) ? "sealed"
	                                                              : "separate",
	             created ? rzc_age(created, age, sizeof(age)) : "-");
}

static bool backup_structured(const rzc_t *c)
{
	return c->output != NULL &&
	       (strcmp(c->output, "json") == 0 || strcmp(c->output, "yaml") == 0);
}

/* GET or POST path; a 404 on the collection means the server has no backups. */
static int backup_call(rzc_t *c, const char *method, const char *path, json_t **out)
{
	rzc_resp_t r;
	json_error_t jerr;
	int rc;

	*out = NULL;
	if (rzc_request(c, method, path, strcmp(method, "POST") == 0 ? "application/json" : NULL,
	                strcmp(method, "POST") == 0 ? "{}" : NULL,
	                strcmp(method, "POST") == 0 ? 2 : 0, &r) < 0) {
		return RZC_ERR;
	}
	if (r.code == 404 && strcmp(path, "/api/v1/backups") == 0) {
		rc = rzc_fail("this server does not offer backups (no /api/v1/backups)");
	} else if (r.code < 200 || r.code > 299) {
		rzc_print_status(&r);
		rc = RZC_ERR;
	} else {
		*out = json_loadb(r.body, r.len, 0, &jerr);
		rc = *out != NULL ? RZC_OK : rzc_fail("the server's answer is not JSON");
	}
	rzc_resp_free(&r);
	return rc;
}

/* backup tenant T: a snapshot of T's etcd now (an EtcdBackup, manual), which the daemon
 * takes, encrypts and stores; `rezusctl get etcdbackups -t T` follows it. */
static int backup_tenant(rzc_t *c, const char *tenant)
{
	char *t = rzc_escape(tenant);
	char *path = rzc_path("/api/v1/tenants/%s/etcdbackups", t);
	const char *body = "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"EtcdBackup\","
	                   "\"metadata\":{},\"spec\":{\"trigger\":\"manual\"}}";
	rzc_resp_t r;
	int rc;

	free(t);
	rc = rzc_request(c, "POST", path, "application/json", body, strlen(body), &r) < 0 ? RZC_ERR
	                                                                                  : RZC_OK;
	free(path);
	if (rc != RZC_OK) {
		return rc;
	}
	if (r.code == 201) {
		json_t *o = json_loads(r.body, 0, NULL);
		printf(
		    "etcdbackup/%s created: the snapshot of %s's etcd is taken now (rezusctl get "
		    "etcdbackups -t %s)\n",
		    json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
		    tenant, tenant);
		json_decref(o);
	} else {
		rzc_print_status(&r);
		rc = RZC_ERR;
	}
	rzc_resp_free(&r);
	return rc;
}

int rzc_cmd_backup(rzc_t *c, int argc, char **argv)
{
	const char *verb = argc > 0 ? argv[0] : "list";
	json_t *out = NULL;
	char *path = NULL;
	size_t i;
	int rc;

	if (strcmp(verb, "list") == 0 && argc <= 1) {
		rc = backup_call(c, "GET", "/api/v1/backups", &out);
	} else if (strcmp(verb, "create") == 0 && argc == 1) {
		rc = backup_call(c, "POST", "/api/v1/backups", &out);
	} else if (strcmp(verb, "tenant") == 0 && argc == 2) {
		return backup_tenant(c, argv[1]);
	} else if (strcmp(verb, "get") == 0 && argc == 2) {
		const char *name = strncmp(argv[1], "backup/", 7) == 0 ? argv[1] + 7 : argv[1];
		char *n = rzc_escape(name);
		path = rzc_path("/api/v1/backups/%s", n);
		free(n);
		rc = backup_call(c, "GET", path, &out);
	} else {
		return rzc_usage("backup: list | create | get NAME | tenant TENANT");
	}
	if (rc == RZC_OK && backup_structured(c)) {
		rzc_print_object(c, NULL, out);
	} else if (rc == RZC_OK && strcmp(verb, "list") == 0) {
		rzc_rows_t t;
		rzc_rows_init(&t, backup_heads, 7);
		/* newest first, as the names sort */
		for (i = json_array_size(json_object_get(out, "items")); i > 0; i--) {
			backup_row(&t, json_array_get(json_object_get(out, "items"), i - 1));
		}
		rzc_rows_print(&t, "");
		rzc_rows_free(&t);
	} else if (rc == RZC_OK && strcmp(verb, "create") == 0) {
		printf("backup/%s created (revision %lld, %lld bytes)\n",
		       json_string_value(json_object_get(json_object_get(out, "metadata"), "name")),
		       (long long)json_integer_value(
		           json_object_get(json_object_get(out, "status"), "revision")),
		       (long long)json_integer_value(
		           json_object_get(json_object_get(out, "status"), "size")));
	} else if (rc == RZC_OK) {
		rzc_rows_t t;
		rzc_rows_init(&t, backup_heads, 7);
		backup_row(&t, out);
		rzc_rows_print(&t, "");
		rzc_rows_free(&t);
	}
	json_decref(out);
	free(path);
	return rc;
}

/* The strings of an array, comma-separated; caller frees. */
static char *joined(const json_t *arr)
{
	char buf[512] = "";
	size_t n = 0, j;
	json_t *v;

	json_array_foreach(arr, j, v)
	{
		int w = snprintf(buf + n, sizeof(buf) - n, "%s%s", j ? "," : "",
		                 json_string_value(v) ? json_string_value(v) : "");
		n = w > 0 && (size_t)w < sizeof(buf) - n ? n + (size_t)w : n;
	}
	return strdup(buf);
}

int rzc_cmd_api_resources(rzc_t *c, int argc, char **argv)
{
	json_t *list = NULL, *res;
	size_t i;
	int rc;

	(void)argv;
	if (argc > 0) {
		return rzc_usage("api-resources: takes no arguments");
	}
	rc = rzc_json(c, "GET", "/api/v1", NULL, &list);
	if (rc == RZC_OK && c->output != NULL &&
	    (strcmp(c->output, "json") == 0 || strcmp(c->output, "yaml") == 0)) {
		rzc_print_object(c, NULL, list);
	} else if (rc == RZC_OK) {
		static const char *const heads[] = { "NAME", "SHORTNAMES", "TENANT-SCOPED", "KIND",
			                             "VERBS" };
		json_t *all = json_object_get(list, "resources");
		size_t nrows = 0;
		char **cells = calloc(json_array_size(all) * 5 + 1, sizeof(*cells));
		json_array_foreach(all, i, res)
		{
			const char *name = json_string_value(json_object_get(res, "name"));
			char **row = cells + nrows * 5;
			if (cells == NULL || name == NULL || strchr(name, '/') != NULL) {
				continue;
			}
			row[0] = strdup(name);
			row[1] = joined(json_object_get(res, "shortNames"));
			row[2] = strdup(json_is_true(json_object_get(res, "namespaced")) ? "true"
			                                                                 : "false");
			row[3] = strdup(json_string_value(json_object_get(res, "kind"))
			                    ? json_string_value(json_object_get(res, "kind"))
			                    : "");
			row[4] = joined(json_object_get(res, "verbs"));
			nrows++;
		}
		rzc_table("", heads, 5, cells, nrows, true);
		for (size_t j = 0; cells != NULL && j < nrows * 5; j++) {
			free(cells[j]);
		}
		free(cells);
	}
	json_decref(list);
	return rc;
}

int rzc_cmd_version(rzc_t *c, int argc, char **argv)
{
	json_t *v = NULL;
	int rc;

	(void)argv;
	if (argc > 0) {
		return rzc_usage("version: takes no arguments");
	}
	printf("Client: rezusctl %s\n", PACKAGE_VERSION);
	rc = rzc_json(c, "GET", "/version", NULL, &v);
	if (rc == RZC_OK && json_string_value(json_object_get(v, "version")) == NULL) {
		rc = rzc_fail("%s does not answer /version like a RezusCloud server", c->server);
	} else if (rc == RZC_OK) {
		const char *commit = json_string_value(json_object_get(v, "commit"));
		const char *abi = json_string_value(json_object_get(v, "abi"));
		printf("Server: rezuscloud %s (commit %s, plugin ABI %s) at %s\n",
		       json_string_value(json_object_get(v, "version")), commit ? commit : "?",
		       abi ? abi : "?", c->server);
	}
	json_decref(v);
	return rc;
}
