/* cli/runs.c - runs, logs, plan, reconcile, approve, cancel, credentials, upgrades, the state's
 * history. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/rezusctl.h"
#include "core/base/yaml.h"

/* The tenant of run name: -t, or looked up among every tenant's runs. Caller frees. */
static char *run_tenant(rzc_t *c, const char *name)
{
	json_t *list = NULL, *run;
	size_t i;
	char *found = NULL;

	if (c->tenant != NULL) {
		return strdup(c->tenant);
	}
	if (rzc_json(c, "GET", "/api/v1/runs", NULL, &list) != RZC_OK) {
		return NULL;
	}
	json_array_foreach(json_object_get(list, "items"), i, run)
	{
		json_t *m = json_object_get(run, "metadata");
		if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0) {
			found = strdup(json_string_value(json_object_get(m, "tenant")));
		}
	}
	json_decref(list);
	if (found == NULL) {
		rzc_fail("runs \"%s\" not found", name);
	}
	return found;
}

/* The tenant a command names, given as TENANT or tenant/TENANT (or -t when it names none);
 * NULL after a usage message. Borrowed. */
static const char *tenant_arg(rzc_t *c, int argc, char **argv, const char *verb)
{
	return argc == 1 ? rzc_name_arg(argv[0], "Tenant", verb) : c->tenant;
}

int rzc_cmd_runs(rzc_t *c, int argc, char **argv)
{
	const rzc_kind_t *k = rzc_kind_find("runs");
	char *saved = c->tenant;
	json_t *list = NULL, *items;
	char *coll;
	int rc;

	if (argc > 1) {
		return rzc_usage("runs: [TENANT]");
	}
	if (argc == 1 && (c->tenant = (char *)tenant_arg(c, argc, argv, "runs")) == NULL) {
		c->tenant = saved;
		return RZC_USAGE;
	}
	coll = rzc_collection(c, k, c->all_tenants ? NULL : c->tenant, NULL);
	rc = rzc_json(c, "GET", coll, NULL, &list);
	free(coll);
	if (rc == RZC_OK) {
		items = json_object_get(list, "items");
		rzc_sort_runs(items);
		rzc_print_list(c, k, items, true);
	}
	json_decref(list);
	c->tenant = saved;
	return rc;
}

struct follow {
	bool end_next; /* the last line was "event: end": its data is the phase */
	char *phase;
};

/* Server-sent events: print each data: line; remember the end event's phase. */
static int on_sse(const char *line, void *arg)
{
	struct follow *f = arg;

	if (strncmp(line, "event: end", 10) == 0) {
		f->end_next = true;
	} else if (strncmp(line, "data: ", 6) == 0 && f->end_next) {
		free(f->phase);
		f->phase = strdup(line + 6);
		f->end_next = false;
	} else if (strncmp(line, "data: ", 6) == 0) {
		printf("%s\n", line + 6);
		fflush(stdout);
	}
	return 0;
}

int rzc_cmd_logs(rzc_t *c, int argc, char **argv)
{
	const char *run;
	char *tenant, *t, *n, *path;
	int rc;

	if (argc != 1) {
		return rzc_usage("logs: RUN [-f] [--raw]");
	}
	if ((run = rzc_name_arg(argv[0], "Run", "logs")) == NULL) {
		return RZC_USAGE;
	}
	if ((tenant = run_tenant(c, run)) == NULL) {
		return RZC_ERR;
	}
	t = rzc_escape(tenant);
	n = rzc_escape(run);
	path = rzc_path("/api/v1/tenants/%s/runs/%s/log?format=%s%s", t, n,
	                c->raw ? "json" : "text", c->follow ? "&follow=true" : "");
	free(t);
	free(n);
	free(tenant);
	if (c->follow) {
		struct follow f = { false, NULL };
		long code = 0;
		rc = rzc_stream(c, path, "text/event-stream", on_sse, &f, &code) == 0 ? RZC_OK
		                                                                      : RZC_ERR;
		if (rc == RZC_OK && code != 200) {
			rc = rzc_fail("runs \"%s\": the server answered %ld", run, code);
			rzc_hint_login(code);
		} else if (rc == RZC_OK && f.phase != NULL) {
			fprintf(stderr, "run %s: %s\n", run, f.phase);
			rc = strcmp(f.phase, "Succeeded") == 0 ? RZC_OK : RZC_ERR;
		}
		free(f.phase);
	} else {
		rzc_resp_t r;
		rc = rzc_request(c, "GET", path, NULL, NULL, 0, &r) < 0 ? RZC_ERR : RZC_OK;
		if (rc == RZC_OK && r.code == 200) {
			fwrite(r.body, 1, r.len, stdout);
		} else if (rc == RZC_OK) {
			rzc_print_status(&r);
			rc = RZC_ERR;
		}
		if (rc == RZC_OK || r.body != NULL) {
			rzc_resp_free(&r);
		}
	}
	free(path);
	return rc;
}

/* plan and reconcile: a manual run of operation for the tenant; its name and how to follow
 * it are printed. */
static int start_run(rzc_t *c, int argc, char **argv, const char *verb, const char *operation)
{
	const char *tenant, *name;
	char *t, *path;
	json_t *run = NULL, *body;
	int rc;

	if (argc > 1 || (argc == 0 && c->tenant == NULL)) {
		return rzc_usage("%s: TENANT", verb);
	}
	if ((tenant = tenant_arg(c, argc, argv, verb)) == NULL) {
		return RZC_USAGE;
	}
	t = rzc_escape(tenant);
	path = rzc_path("/api/v1/tenants/%s/runs", t);
	free(t);
	body = json_pack("{s:{s:s}}", "spec", "operation", operation);
	rc = rzc_json(c, "POST", path, body, &run);
	if (rc == RZC_OK) {
		name = json_string_value(json_object_get(json_object_get(run, "metadata"), "name"));
		printf("run/%s created (%s; follow it with: rezusctl logs %s -f -t %s)\n", name,
		       operation, name, tenant);
	}
	json_decref(body);
	json_decref(run);
	free(path);
	return rc;
}

int rzc_cmd_plan(rzc_t *c, int argc, char **argv)
{
	return start_run(c, argc, argv, "plan", "plan");
}

int rzc_cmd_reconcile(rzc_t *c, int argc, char **argv)
{
	return start_run(c, argc, argv, "reconcile", "apply");
}

/* The run a command names (RUN or run/RUN), its tenant, and the path of its action
 * (action NULL: the run itself). 0, or an exit status after saying why. */
static int run_paths(rzc_t *c, int argc, char **argv, const char *verb, const char **run,
                     char **tenant)
{
	if (argc != 1) {
		return rzc_usage("%s: RUN", verb);
	}
	if ((*run = rzc_name_arg(argv[0], "Run", verb)) == NULL) {
		return RZC_USAGE;
	}
	if ((*tenant = run_tenant(c, *run)) == NULL) {
		return RZC_ERR;
	}
	return RZC_OK;
}

static char *action_path(const char *tenant, const char *run, const char *action)
{
	char *t = rzc_escape(tenant), *n = rzc_escape(run);
	char *path = action != NULL ? rzc_path("/api/v1/tenants/%s/runs/%s/%s", t, n, action)
	                            : rzc_path("/api/v1/tenants/%s/runs/%s", t, n);

	free(t);
	free(n);
	return path;
}

/* POST the action; print the server's message. body may be NULL (borrowed). */
static int post_action(rzc_t *c, const char *tenant, const char *run, const char *action,
                       json_t *body)
{
	char *path = action_path(tenant, run, action);
	json_t *st = NULL;
	int rc = rzc_json(c, "POST", path, body, &st);

	if (rc == RZC_OK) {
		printf("run/%s: %s\n", run, json_string_value(json_object_get(st, "message")));
	}
	json_decref(st);
	free(path);
	return rc;
}

void rzc_print_plan(FILE *f, const json_t *plan, const char *indent)
{
	static const char *const heads[] = { "ACTION", "ADDRESS", "MACHINE", "REASON" };
	const json_t *list = json_object_get(plan, "resources"), *e;
	size_t i;
	rzc_rows_t t;

	if (json_array_size(list) == 0) {
		fprintf(f, "%s(no resource changes)\n", indent);
		return;
	}
	rzc_rows_init(&t, heads, 4);
	json_array_foreach(list, i, e)
	{
		const char *m = json_string_value(json_object_get(e, "machine"));
		rzc_rows_add(&t, json_string_value(json_object_get(e, "action")),
		             json_string_value(json_object_get(e, "address")), m ? m : "-",
		             json_string_value(json_object_get(e, "reason")));
	}
	rzc_rows_fprint(f, &t, indent);
	rzc_rows_free(&t);
	if (json_integer_value(json_object_get(plan, "more")) > 0) {
		fprintf(f, "%s(and %lld more)\n", indent,
		        (long long)json_integer_value(json_object_get(plan, "more")));
	}
}

/* What approving run lets happen, as tofu counts it, then its plan's resources, to f. */
static void print_approval(FILE *f, const char *run, const char *tenant, const json_t *obj)
{
	const json_t *st = json_object_get(obj, "status");
	const json_t *ch = json_object_get(st, "changes");
	const char *op =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "operation"));

	fprintf(f, "run/%s (%s, tenant %s) would", run, op ? op : "apply", tenant);
	if (json_is_object(ch)) {
		fprintf(f, " add %lld, change %lld, destroy %lld",
		        (long long)json_integer_value(json_object_get(ch, "add")),
		        (long long)json_integer_value(json_object_get(ch, "change")),
		        (long long)json_integer_value(json_object_get(ch, "destroy")));
	}
	fprintf(f, ":\n");
	rzc_print_plan(f, json_object_get(st, "plan"), "  ");
}

/* Approve? [y/N] on the terminal: true for y or yes, whatever the case. */
static bool ask_approval(void)
{
	char line[64];
	size_t n;

	printf("Approve? [y/N] ");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL) {
		printf("\n");
		return false;
	}
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	return strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0;
}

/* approve RUN: the approver sees what the run would change first. At a terminal (stdin and
 * stdout) the summary is shown and approval asked for, unless -y; elsewhere (a script) it
 * approves at once and the summary goes to stderr, leaving stdout to the result. */
int rzc_cmd_approve(rzc_t *c, int argc, char **argv)
{
	const char *run = NULL;
	char *tenant = NULL, *path;
	json_t *obj = NULL, *body = NULL;
	bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	const char *phase;
	int rc;

	if ((rc = run_paths(c, argc, argv, "approve", &run, &tenant)) != RZC_OK) {
		return rc;
	}
	path = action_path(tenant, run, NULL);
	rc = rzc_json(c, "GET", path, NULL, &obj);
	free(path);
	phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
	/* a run that awaits nothing: the server says why it cannot be approved */
	if (rc == RZC_OK && phase != NULL && strcmp(phase, "AwaitingApproval") == 0) {
		print_approval(tty ? stdout : stderr, run, tenant, obj);
		if (tty && !c->yes && !ask_approval()) {
			fprintf(stderr, "run/%s not approved: it still awaits approval\n", run);
			rc = RZC_ERR;
		}
	}
	if (rc == RZC_OK) {
		if (c->reason != NULL) {
			body = json_pack("{s:s}", "reason", c->reason);
		}
		rc = post_action(c, tenant, run, "approve", body);
	}
	json_decref(body);
	json_decref(obj);
	free(tenant);
	return rc;
}

int rzc_cmd_cancel(rzc_t *c, int argc, char **argv)
{
	const char *run = NULL;
	char *tenant = NULL;
	int rc = run_paths(c, argc, argv, "cancel", &run, &tenant);

	if (rc == RZC_OK) {
		rc = post_action(c, tenant, run, "cancel", NULL);
	}
	free(tenant);
	return rc;
}

/* ------------------------------------------------------------------ credentials */

static int write_private(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || fchmod(fd, 0600) != 0 || write(fd, data, len) != (ssize_t)len) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		return rzc_fail("cannot write %s: %s", path, strerror(e));
	}
	close(fd);
	return RZC_OK;
}

/* Entries of list (clusters, users, contexts) by name: new ones replace old ones. */
static void merge_named(json_t *into, const json_t *from, const char *key)
{
	json_t *have = json_object_get(into, key), *x;
	size_t i;

	if (!json_is_array(have)) {
		have = json_array();
		json_object_set_new(into, key, have);
	}
	json_array_foreach(json_object_get(from, key), i, x)
	{
		const char *name = json_string_value(json_object_get(x, "name"));
		size_t j;
		json_t *y;
		bool replaced = false;
		json_array_foreach(have, j, y)
		{
			const char *n = json_string_value(json_object_get(y, "name"));
			if (name != NULL && n != NULL && strcmp(name, n) == 0) {
				json_array_set(have, j, x);
				replaced = true;
				break;
			}
		}
		if (!replaced) {
			json_array_append(have, x);
		}
	}
}

static int merge_kubeconfig(const char *text, size_t len)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char path[4096];
	json_t *docs = NULL, *fresh, *cur = NULL;
	rz_err_t err = { 0 };
	FILE *f;
	char *buf = NULL;
	size_t blen = 0;
	int rc;

	if (env != NULL && env[0] != '\0') {
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(env, ":"), env);
	} else {
		snprintf(path, sizeof(path), "%s/.kube/config", home ? home : ".");
	}
	if (rz_yaml_load_all("kubeconfig", text, len, &docs, &err) != 0) {
		return rzc_fail("the server's kubeconfig: %s", err.msg);
	}
	fresh = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	if ((f = fopen(path, "r")) != NULL) {
		buf = rzc_read_all(f, &blen);
		fclose(f);
		if (buf != NULL) {
			docs = NULL;
			if (rz_yaml_load_all(path, buf, blen, &docs, &err) != 0) {
				free(buf);
				json_decref(fresh);
				return rzc_fail("%s", err.msg);
			}
			cur = json_incref(json_array_get(docs, 0));
			json_decref(docs);
		}
		free(buf);
	}
	if (!json_is_object(cur)) {
		json_decref(cur);
		cur = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "Config");
	}
	merge_named(cur, fresh, "clusters");
	merge_named(cur, fresh, "users");
	merge_named(cur, fresh, "contexts");
	json_object_set(cur, "current-context", json_object_get(fresh, "current-context"));
	rc = rzc_save_yaml(path, cur);
	if (rc == RZC_OK) {
		printf("merged into %s; current context %s\n", path,
		       json_string_value(json_object_get(fresh, "current-context")));
	}
	json_decref(cur);
	json_decref(fresh);
	return rc;
}

static int credentials(rzc_t *c, int argc, char **argv, const char *what)
{
	const char *tenant;
	char *t, *path;
	rzc_resp_t r;
	int rc;

	if (argc > 1 || (argc == 0 && c->tenant == NULL)) {
		return rzc_usage("%s: TENANT [-o FILE]%s", what,
		                 strcmp(what, "kubeconfig") == 0 ? " [--merge]" : "");
	}
	if ((tenant = tenant_arg(c, argc, argv, what)) == NULL) {
		return RZC_USAGE;
	}
	if (c->out_file != NULL &&
	    (strcmp(c->out_file, "json") == 0 || strcmp(c->out_file, "yaml") == 0 ||
	     strcmp(c->out_file, "wide") == 0 || strcmp(c->out_file, "name") == 0)) {
		/* -o is the file here, not a format: a file named json is not what was meant */
		return rzc_usage(
		    "%s: -o names the FILE to write (YAML, as kubectl reads it), not a "
		    "format; to write a file of that name, give ./%s",
		    what, c->out_file);
	}
	t = rzc_escape(tenant);
	path = rzc_path("/api/v1/tenants/%s/%s", t, what);
	free(t);
	rc = rzc_request(c, "GET", path, NULL, NULL, 0, &r) < 0 ? RZC_ERR : RZC_OK;
	free(path);
	if (rc != RZC_OK) {
		return rc;
	}
	if (r.code != 200) {
		rzc_print_status(&r);
		rc = RZC_ERR;
	} else if (c->merge && strcmp(what, "kubeconfig") == 0) {
		rc = merge_kubeconfig(r.body, r.len);
	} else if (c->out_file != NULL) {
		rc = write_private(c->out_file, r.body, r.len);
		if (rc == RZC_OK) {
			fprintf(stderr, "wrote %s (mode 0600)\n", c->out_file);
		}
	} else {
		fwrite(r.body, 1, r.len, stdout);
	}
	rzc_resp_free(&r);
	return rc;
}

int rzc_cmd_kubeconfig(rzc_t *c, int argc, char **argv)
{
	return credentials(c, argc, argv, "kubeconfig");
}

int rzc_cmd_talosconfig(rzc_t *c, int argc, char **argv)
{
	return credentials(c, argc, argv, "talosconfig");
}

/* A dry run's verdict: its prechecks, then the plan, machines in order. */
static void print_dry_run(const json_t *up)
{
	static const char *const checks[] = { "PRECHECK", "PASSED", "MESSAGE" };
	static const char *const steps[] = { "STEP", "MACHINE", "ROLE", "FROM", "TO" };
	const json_t *st = json_object_get(up, "status"), *e;
	size_t i;
	rzc_rows_t t;

	printf("%s\n", json_string_value(json_object_get(st, "message")) ?: "");
	rzc_rows_init(&t, checks, 3);
	json_array_foreach(json_object_get(st, "prechecks"), i, e)
	{
		rzc_rows_add(&t, json_string_value(json_object_get(e, "name")),
		             json_is_true(json_object_get(e, "passed")) ? "yes" : "no",
		             json_string_value(json_object_get(e, "message")));
	}
	rzc_rows_print(&t, "  ");
	rzc_rows_free(&t);
	rzc_rows_init(&t, steps, 5);
	json_array_foreach(json_object_get(st, "machines"), i, e)
	{
		char step[24];
		snprintf(step, sizeof(step), "%zu", i + 1);
		rzc_rows_add(&t, step, json_string_value(json_object_get(e, "name")),
		             json_string_value(json_object_get(e, "role")),
		             json_string_value(json_object_get(e, "from")),
		             json_string_value(json_object_get(e, "to")));
	}
	rzc_rows_print(&t, "  ");
	rzc_rows_free(&t);
}

/* upgrade cancel TENANT UPGRADE */
static int upgrade_cancel(rzc_t *c, const char *tenant, const char *name)
{
	char *t = rzc_escape(tenant), *n = rzc_escape(name);
	char *path = rzc_path("/api/v1/tenants/%s/upgrades/%s/cancel", t, n);
	json_t *st = NULL;
	int rc = rzc_json(c, "POST", path, NULL, &st);

	if (rc == RZC_OK) {
		printf("upgrade/%s: %s\n", name, json_string_value(json_object_get(st, "message")));
	}
	json_decref(st);
	free(path);
	free(n);
	free(t);
	return rc;
}

int rzc_cmd_upgrade(rzc_t *c, int argc, char **argv)
{
	const char *tenant;
	char *t, *path;
	json_t *body, *out = NULL;
	int rc;

	if (argc == 3 && strcmp(argv[0], "cancel") == 0) {
		return upgrade_cancel(c, argv[1], argv[2]);
	}
	if (argc != 1 || (c->talos == NULL) == (c->kubernetes == NULL)) {
		return rzc_usage(
		    "upgrade: TENANT --talos VERSION | --kubernetes VERSION [--dry-run] | "
		    "cancel TENANT UPGRADE");
	}
	if (c->dry_run == RZC_DRY_CLIENT) {
		return rzc_usage("upgrade: the prechecks are the server's: use --dry-run "
		                 "(--dry-run=server)");
	}
	if ((tenant = tenant_arg(c, argc, argv, "upgrade")) == NULL) {
		return RZC_USAGE;
	}
	t = rzc_escape(tenant);
	path = rzc_path("/api/v1/tenants/%s/upgrades", t);
	body =
	    json_pack("{s:{s:s, s:s, s:b}}", "spec", "component", c->talos ? "talos" : "kubernetes",
	              "targetVersion", c->talos ? c->talos : c->kubernetes, "dryRun",
	              c->dry_run == RZC_DRY_SERVER);
	rc = rzc_json(c, "POST", path, body, &out);
	if (rc == RZC_OK && c->dry_run == RZC_DRY_SERVER) {
		const char *name =
		    json_string_value(json_object_get(json_object_get(out, "metadata"), "name"));
		char *n = rzc_escape(name ? name : ""), *get = rzc_path("%s/%s", path, n);
		for (int i = 0; i < 150; i++) { /* the daemon answers a dry run within a second */
			const char *phase;
			json_decref(out);
			out = NULL;
			if ((rc = rzc_json(c, "GET", get, NULL, &out)) != RZC_OK) {
				break;
			}
			phase = json_string_value(
			    json_object_get(json_object_get(out, "status"), "phase"));
			if (phase != NULL &&
			    (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) {
				print_dry_run(out);
				rc = strcmp(phase, "Succeeded") == 0 ? RZC_OK : RZC_ERR;
				break;
			}
			usleep(100000);
		}
		free(get);
		free(n);
	} else if (rc == RZC_OK) {
		printf("upgrade/%s created\n", json_string_value(json_object_get(
		                                   json_object_get(out, "metadata"), "name")));
	}
	json_decref(body);
	json_decref(out);
	free(path);
	free(t);
	return rc;
}

/* ------------------------------------------------------------------ the state's history */

/* state list TENANT: the versions GET /api/v1/tenants/{t}/state keeps, newest (current)
 * first; a field the server leaves out (serial, resources of an encrypted state) is "-". */
static int state_list(rzc_t *c, const char *tenant)
{
	char *t = rzc_escape(tenant), *path = rzc_path("/api/v1/tenants/%s/state", t);
	json_t *list = NULL, *v;
	size_t i;
	int rc = rzc_json(c, "GET", path, NULL, &list);

	free(t);
	free(path);
	if (rc == RZC_OK && c->output != NULL &&
	    (strcmp(c->output, "json") == 0 || strcmp(c->output, "yaml") == 0)) {
		rzc_print_object(c, NULL, list);
	} else if (rc == RZC_OK) {
		static const char *const heads[] = { "VERSION", "SERIAL", "LINEAGE", "CREATED",
			                             "RESOURCES" };
		rzc_rows_t rows;
		rzc_rows_init(&rows, heads, 5);
		json_array_foreach(json_object_get(list, "items"), i, v)
		{
			json_t *serial = json_object_get(v, "serial");
			json_t *res = json_object_get(v, "resources");
			const char *lineage = json_string_value(json_object_get(v, "lineage"));
			char vbuf[24], sbuf[24] = "-", rbuf[24] = "-";
			snprintf(vbuf, sizeof(vbuf), "%lld",
			         (long long)json_integer_value(json_object_get(v, "version")));
			if (json_is_integer(serial)) {
				snprintf(sbuf, sizeof(sbuf), "%lld",
				         (long long)json_integer_value(serial));
			}
			if (json_is_integer(res)) {
				snprintf(rbuf, sizeof(rbuf), "%lld",
				         (long long)json_integer_value(res));
			}
			rzc_rows_add(&rows, vbuf, sbuf, lineage && *lineage ? lineage : "-",
			             json_string_value(json_object_get(v, "time")), rbuf);
		}
		rzc_rows_print(&rows, "");
		rzc_rows_free(&rows);
	}
	json_decref(list);
	return rc;
}

/* state rollback TENANT VERSION (admin): the server makes that version current again,
 * as a new one, and the Machines follow it; its Status message is printed. */
static int state_rollback(rzc_t *c, const char *tenant, const char *version)
{
	char *end, *t, *path;
	long long want = strtoll(version, &end, 10);
	json_t *body, *st = NULL;
	int rc;

	if (*version == '\0' || *end != '\0' || want <= 0) {
		return rzc_usage("state rollback: VERSION must be a version number, not \"%s\"",
		                 version);
	}
	t = rzc_escape(tenant);
	path = rzc_path("/api/v1/tenants/%s/state/rollback", t);
	body = json_pack("{s:I}", "version", (json_int_t)want);
	rc = rzc_json(c, "POST", path, body, &st);
	if (rc == RZC_OK) {
		printf("%s\n", json_string_value(json_object_get(st, "message")));
	}
	json_decref(st);
	json_decref(body);
	free(t);
	free(path);
	return rc;
}

int rzc_cmd_state(rzc_t *c, int argc, char **argv)
{
	const char *verb = argc >= 1 ? argv[0] : "";
	bool list = strcmp(verb, "list") == 0;
	int n = argc - 1, need = list ? 1 : 2; /* words after the verb; TENANT may be -t's */
	const char *tenant = n == need ? argv[1] : c->tenant;

	if ((!list && strcmp(verb, "rollback") != 0) || n > need || n < need - 1 ||
	    tenant == NULL) {
		return rzc_usage("state: list TENANT | rollback TENANT VERSION");
	}
	return list ? state_list(c, tenant) : state_rollback(c, tenant, argv[n]);
}
