/*
 * cli/rezusctl.h - rezusctl, the command-line client (SPEC §10): shared state and the
 * modules' interfaces. HTTP through libcurl, JSON through jansson, YAML in and out through
 * libyaml (core/base/yaml.c reads; out.c writes).
 */
#ifndef RZC_REZUSCTL_H
#define RZC_REZUSCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Exit statuses. */
enum { RZC_OK = 0, RZC_ERR = 1, RZC_USAGE = 2 };

/* --dry-run: none (write), server (?dryRun=All: the server checks, stores nothing), client
 * (nothing is sent that writes). */
enum { RZC_DRY_NONE = 0, RZC_DRY_SERVER, RZC_DRY_CLIENT };

/* One resource type as the CLI knows it. */
typedef struct rzc_kind {
	const char *kind;     /* "NodeGroup" */
	const char *plural;   /* "nodegroups" */
	const char *singular; /* "nodegroup" */
	const char *shorts;   /* "ng" (space separated), or "" */
	bool tenant_scoped;
	bool user_scoped; /* tokens: under /users/{user} */
} rzc_kind_t;

/* The global options and the context in use. */
typedef struct rzc {
	const char *config_path;
	const char *context; /* --context */
	char *server;        /* from flag, env or context; never NULL after rzc_resolve() */
	char *token;         /* idem; may be NULL (not logged in) */
	char *tenant;        /* -t, or the context's default */
	char *user;          /* the context's user (tokens) */
	char *ca_file;       /* --certificate-authority */
	bool insecure;       /* --insecure-skip-tls-verify */
	bool server_given, tenant_given; /* on the command line (config set-context) */
	bool quiet;                      /* no message when the server cannot be reached */
	const char *output;              /* -o: table | wide | json | yaml | name (NULL: table) */
	const char *selector;            /* -l */
	const char *field_selector;      /* --field-selector */
	bool all_tenants;                /* -A */
	bool watch;                      /* -w */
	bool follow;                     /* -f for logs */
	bool raw;                        /* --raw for logs: tofu's JSON lines */
	const char *reason;              /* --reason for approve */
	bool yes;                        /* -y, --yes for approve: ask nothing */
	json_t *config;                  /* the config file, parsed ({} when none) */
	/* command flags */
	const char *files[64]; /* -f FILE|DIR|- (apply, create, delete) */
	size_t nfiles;
	long replicas; /* --replicas (-1: not given) */
	bool password_stdin;
	const char *username;    /* --username (login) */
	bool merge;              /* --merge (kubeconfig) */
	const char *out_file;    /* --file (kubeconfig, talosconfig) */
	const char *talos;       /* --talos V (upgrade) */
	const char *kubernetes;  /* --kubernetes V (upgrade) */
	int dry_run;             /* --dry-run[=server|client|none]: an RZC_DRY_* */
	const char *role;        /* --role (user, token) */
	const char *description; /* --description (token) */
	const char *expires;     /* --expires (token) */
	const char *platform;    /* --platform (boot) */
	const char *data_dir;    /* --data-dir (boot) */
	const char *listen;      /* --listen (boot) */
	const char *binary;      /* --rezuscloud (boot): the daemon to start */
	long limit;              /* --limit (audit) */
	bool oidc;               /* --oidc (login): single sign-on */
	bool device;             /* --device (login --oidc): the device authorization grant */
	bool no_browser;         /* --no-browser (login --oidc): print the URL, open nothing */
	long listen_port;        /* --listen-port (login --oidc): 0 = any free port */
	long timeout;            /* --timeout (login --oidc): seconds to wait for the sign-in */
	bool force;              /* --force (export): write into a directory that is not empty */
	const char *backend;     /* --backend NAME (export): the TF backend to name */
} rzc_t;

/* ---- http.c ---- */

typedef struct rzc_resp {
	long code; /* HTTP status; 0 when the server could not be reached */
	char *body;
	size_t len;
	char *ctype;
} rzc_resp_t;

/* A request to path (relative to the server, "/api/v1/..."). body may be NULL. Returns 0
 * when a response arrived (any status), -1 when the server could not be reached (one line
 * on stderr says why). */
int rzc_request(rzc_t *c, const char *method, const char *path, const char *ctype, const char *body,
                size_t len, rzc_resp_t *r);
void rzc_resp_free(rzc_resp_t *r);

/* A request to an absolute url away from the server (an OpenID provider): no token, the
 * system's CAs, no redirects followed, http and https only, at most timeout seconds and an
 * answer of at most max bytes. form (application/x-www-form-urlencoded, borrowed) makes it
 * a POST, NULL a GET. 0 when an answer came (any status; release r with rzc_resp_free),
 * -1 with why filled. */
int rzc_request_url(const char *url, const char *form, size_t max, long timeout, rzc_resp_t *r,
                    char *why, size_t size);

/* Stream a GET: fn(line, arg) for each line as it arrives (without its newline); nonzero
 * from fn stops. */
int rzc_stream(rzc_t *c, const char *path, const char *accept,
               int (*fn)(const char *line, void *arg), void *arg, long *code);

/* GET/POST/... with JSON in and out: *out the parsed body (caller owns) on 2xx; otherwise
 * the server's Status printed on stderr (message and causes) and RZC_ERR. */
int rzc_json(rzc_t *c, const char *method, const char *path, const json_t *in, json_t **out);

/* Print an error response (a Status, or the body) on stderr. */
void rzc_print_status(const rzc_resp_t *r);
/* After a 401 (but a login's: a wrong password): the hint to run rezusctl login, on
 * stderr. Every path that reports a status prints it (rzc_print_status does). */
void rzc_hint_login(long code);

/* "/api/v1/..." path pieces, percent-encoded. Caller frees. */
char *rzc_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *rzc_escape(const char *s);

/* ---- conf.c ---- */

/* The config file: path (default ~/.config/rezus/config), load, save (0600). */
const char *rzc_config_default_path(void);
int rzc_config_load(rzc_t *c);
int rzc_config_save(rzc_t *c);
/* Everything f holds (NUL-terminated; caller frees), or NULL when out of memory. */
char *rzc_read_all(FILE *f, size_t *len);
/* v as YAML into path, atomically, mode 0600, its directories made 0700. */
int rzc_save_yaml(const char *path, const json_t *v);
/* The context named name (or the current one when NULL), borrowed; NULL when none. */
json_t *rzc_context(rzc_t *c, const char *name);
/* Resolve server/token/tenant from flags, environment and context. */
void rzc_resolve(rzc_t *c);

/* ---- kinds.c ---- */

const rzc_kind_t *rzc_kind_find(const char *word); /* by plural, singular, short or Kind */
const rzc_kind_t *rzc_kind_of(const char *kind);   /* by Kind */
const rzc_kind_t *rzc_kinds(size_t *n);
/* The name word gives to an object of kind (a Kind, "Run"): "NAME", or "TYPE/NAME" with
 * TYPE any name of that kind — plural, singular, short name or Kind — as `-o name` prints
 * it. Borrowed — points into word. NULL, after a usage message on stderr that names verb,
 * when TYPE is another kind or none, or NAME is empty. */
const char *rzc_name_arg(const char *word, const char *kind, const char *verb);
/* The collection path of k in tenant (or all tenants when tenant is NULL and k allows). */
char *rzc_collection(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *user);

/* ---- out.c ---- */

/* Print objects (an array) in c->output's format. kind may be NULL (mixed). A bad
 * jsonpath or custom-columns template sets rzc_print_rc (else it stays RZC_OK). */
void rzc_print_list(rzc_t *c, const rzc_kind_t *k, json_t *items, bool headers);
extern int rzc_print_rc;
/* The one table printer: heads[ncols], cells[nrows * ncols] (row-major; NULL prints
 * empty), columns aligned three blanks apart, each line after indent. Borrowed; nothing is
 * freed. */
void rzc_table(const char *indent, const char *const *heads, size_t ncols, char *const *cells,
               size_t nrows, bool headers);
/* A table filled a row at a time, then printed by rzc_table. */
typedef struct rzc_rows {
	const char *const *heads; /* borrowed */
	size_t ncols, nrows;
	char **cells; /* owned copies */
} rzc_rows_t;
void rzc_rows_init(rzc_rows_t *t, const char *const *heads, size_t ncols);
/* One row: ncols strings after t (copied; NULL is empty). */
void rzc_rows_add(rzc_rows_t *t, ...);
void rzc_rows_print(const rzc_rows_t *t, const char *indent);
void rzc_rows_fprint(FILE *f, const rzc_rows_t *t, const char *indent); /* to f */
void rzc_rows_free(rzc_rows_t *t);
/* kubectl's JSONPath template tmpl applied to data, to f; RZC_USAGE for a bad template. */
int rzc_jsonpath(FILE *f, const json_t *data, const char *tmpl);
void rzc_print_object(rzc_t *c, const rzc_kind_t *k, json_t *obj);
/* YAML of v to f (libyaml emitter). */
int rzc_yaml_write(FILE *f, const json_t *v);
/* Sort items (an array of objects) in place by cmp, which compares two json_t **. */
void rzc_sort(json_t *items, int (*cmp)(const void *, const void *));
/* Runs newest first: by metadata.creationTimestamp (seconds), then status.startedAt
 * (milliseconds; a run not started yet counts as the newer), then name. The API lists
 * them by name, and their names are random. */
void rzc_sort_runs(json_t *items);
/* "5s", "3m", "2h", "4d" since an RFC 3339 time ("<unknown>" when not one). */
const char *rzc_age(const char *rfc3339, char *buf, size_t size);

/* ---- manifests (apply.c) ---- */

/* Objects from files, directories (*.yaml, *.yml, *.json) or "-" (stdin); YAML or JSON,
 * multi-document. Appends to objs; RZC_OK or RZC_ERR with a message on stderr. */
int rzc_read_manifests(const char *const *paths, size_t n, json_t *objs);

/* The name of the one Tenant in objs (borrowed) when there is exactly one and -t was not
 * given, else NULL: what the set's objects that name no tenant belong to. */
const char *rzc_manifest_tenant(const rzc_t *c, const json_t *objs);

/* The kind, tenant and name of a manifest object o, checked (RZC_ERR with a message). Its
 * tenant: metadata.tenant, or metadata.namespace as Kubernetes clients write it (both must
 * agree), or -t, or set_tenant (rzc_manifest_tenant; may be NULL), or the context's; set
 * into o's metadata.tenant. */
int rzc_identify(rzc_t *c, json_t *o, const char *set_tenant, const rzc_kind_t **k,
                 const char **tenant, const char **name);

/* A write's path: with ?dryRun=All on a dry run (the server validates, stores nothing).
 * Takes path (may be NULL) and returns a malloc'ed one (NULL on failure). */
char *rzc_dry_path(char *path, bool dry);

/* What a write says of one object, kubectl's way: "tenant/demo created", and on a dry run
 * " (server dry run)" or " (dry run)" after it. */
void rzc_said(const rzc_kind_t *k, const char *name, const char *what, int dry);

/* ---- objects (objects.c) ---- */

/* metadata.<key> of o as a string, or NULL. Borrowed. */
const char *rzc_meta(const json_t *o, const char *key);

/* The path of object name of kind k in tenant: /api/v1/.../name. Caller frees. */
char *rzc_object_path(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *name);

/* ---- commands ---- */

typedef int (*rzc_cmd_fn)(rzc_t *c, int argc, char **argv);

int rzc_cmd_get(rzc_t *c, int argc, char **argv);
int rzc_cmd_describe(rzc_t *c, int argc, char **argv);
int rzc_cmd_delete(rzc_t *c, int argc, char **argv);
int rzc_cmd_apply(rzc_t *c, int argc, char **argv);
int rzc_cmd_create(rzc_t *c, int argc, char **argv);
int rzc_cmd_edit(rzc_t *c, int argc, char **argv);
int rzc_cmd_scale(rzc_t *c, int argc, char **argv);
int rzc_cmd_runs(rzc_t *c, int argc, char **argv);
int rzc_cmd_logs(rzc_t *c, int argc, char **argv);
/* A Run's status.plan as a table to f: ACTION ADDRESS MACHINE REASON. */
void rzc_print_plan(FILE *f, const json_t *plan, const char *indent);
int rzc_cmd_state(rzc_t *c, int argc, char **argv);
/* rezusctl export TENANT DIR (export.c): the tenant's configuration, state and credentials
 * for plain tofu, into DIR (0700, files 0600). */
int rzc_cmd_export(rzc_t *c, int argc, char **argv);
int rzc_cmd_plan(rzc_t *c, int argc, char **argv);
int rzc_cmd_reconcile(rzc_t *c, int argc, char **argv);
int rzc_cmd_approve(rzc_t *c, int argc, char **argv);
int rzc_cmd_cancel(rzc_t *c, int argc, char **argv);
int rzc_cmd_kubeconfig(rzc_t *c, int argc, char **argv);
int rzc_cmd_talosconfig(rzc_t *c, int argc, char **argv);
int rzc_cmd_upgrade(rzc_t *c, int argc, char **argv);
int rzc_cmd_login(rzc_t *c, int argc, char **argv);
/* After a login: c->token is a session of user's; mint an API token with it, end the
 * session, and keep the API token in the context (made current); prints "Logged in ...".
 * user is borrowed. RZC_OK or RZC_ERR with a message on stderr. */
int rzc_login_keep(rzc_t *c, const char *user);
/* login --oidc (oidc.c): single sign-on at the server's OpenID provider, by the loopback
 * redirect or the device authorization grant; then as rzc_login_keep. */
int rzc_login_oidc(rzc_t *c);
int rzc_cmd_logout(rzc_t *c, int argc, char **argv);
int rzc_cmd_config(rzc_t *c, int argc, char **argv);
int rzc_cmd_user(rzc_t *c, int argc, char **argv);
int rzc_cmd_token(rzc_t *c, int argc, char **argv);
/* rezusctl password: change one's own password (POST /api/v1/auth/password). */
int rzc_cmd_password(rzc_t *c, int argc, char **argv);
int rzc_cmd_audit(rzc_t *c, int argc, char **argv);
int rzc_cmd_backup(rzc_t *c, int argc, char **argv);
int rzc_cmd_api_resources(rzc_t *c, int argc, char **argv);
int rzc_cmd_version(rzc_t *c, int argc, char **argv);
int rzc_cmd_completion(rzc_t *c, int argc, char **argv);
int rzc_cmd_boot(rzc_t *c, int argc, char **argv);

/* Usage error: one line on stderr, then RZC_USAGE. */
int rzc_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Error: one line on stderr, then RZC_ERR. */
int rzc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* When set, what rzc_fail and rzc_print_status name before their message ("FILE"). */
extern const char *rzc_err_where;

#endif /* RZC_REZUSCTL_H */
