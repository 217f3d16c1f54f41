/* cli/objects.c - get, describe, delete, edit and scale (apply, create and manifests:
 * cli/apply.c). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/rezusctl.h"
#include "core/base/yaml.h"

/* ------------------------------------------------------------------ naming */

const char *rzc_meta(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), key));
}

/* TYPE, TYPE/NAME or TYPE NAME... : the kind, and the names after it. */
static const rzc_kind_t *kind_arg(const char *word, const char **name)
{
	char buf[128];
	const char *slash = strchr(word, '/');
	const rzc_kind_t *k;

	*name = NULL;
	if (slash != NULL && (size_t)(slash - word) < sizeof(buf)) {
		memcpy(buf, word, (size_t)(slash - word));
		buf[slash - word] = '\0';
		*name = slash + 1;
		k = rzc_kind_find(buf);
	} else {
		k = rzc_kind_find(word);
	}
	return k;
}

char *rzc_object_path(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *name)
{
	char *coll = rzc_collection(c, k, tenant, c->user), *n = rzc_escape(name);
	char *out = rzc_path("%s/%s", coll, n);

	free(coll);
	free(n);
	return out;
}

static int need_tenant(rzc_t *c, const rzc_kind_t *k)
{
	if (k->tenant_scoped && c->tenant == NULL) {
		return rzc_usage(
		    "%s belong to a tenant: give -t TENANT (or set one in the context)", k->plural);
	}
	if (k->user_scoped && c->user == NULL) {
		return rzc_usage("tokens belong to a user: log in first");
	}
	return RZC_OK;
}

/* ------------------------------------------------------------------ get */

/* Every item of a collection, following `continue`. */
static int list_all(rzc_t *c, const char *coll, json_t **items, const char **rv_out, char *rv,
                    size_t rvsize)
{
	char *cont = NULL;
	int rc = RZC_OK;

	*items = json_array();
	rv[0] = '\0';
	do {
		char *sel = c->selector ? rzc_escape(c->selector) : NULL;
		char *fsel = c->field_selector ? rzc_escape(c->field_selector) : NULL;
		char *path =
		    rzc_path("%s?limit=500%s%s%s%s%s%s", coll, sel ? "&labelSelector=" : "",
		             sel ? sel : "", fsel ? "&fieldSelector=" : "", fsel ? fsel : "",
		             cont ? "&continue=" : "", cont ? cont : "");
		json_t *page = NULL;
		free(sel);
		free(fsel);
		free(cont);
		cont = NULL;
		rc = rzc_json(c, "GET", path, NULL, &page);
		free(path);
		if (rc == RZC_OK) {
			const char *next = json_string_value(
			    json_object_get(json_object_get(page, "metadata"), "continue"));
			const char *v = json_string_value(
			    json_object_get(json_object_get(page, "metadata"), "resourceVersion"));
			json_array_extend(*items, json_object_get(page, "items"));
			cont = next && next[0] ? rzc_escape(next) : NULL;
			if (v != NULL) {
				snprintf(rv, rvsize, "%s", v);
			}
		}
		json_decref(page);
	} while (rc == RZC_OK && cont != NULL);
	free(cont);
	if (rv_out != NULL) {
		*rv_out = rv;
	}
	return rc;
}

struct watch {
	rzc_t *c;
	const rzc_kind_t *k;
};

/* One JSON event per line: print its object as a row (or the event, with -o json/yaml). */
static int on_event_line(const char *line, void *arg)
{
	struct watch *w = arg;
	json_t *ev = json_loads(line, 0, NULL);
	const char *type = json_string_value(json_object_get(ev, "type"));
	const char *o = w->c->output ? w->c->output : "table";

	if (json_is_object(json_object_get(ev, "object")) && type != NULL &&
	    strcmp(type, "BOOKMARK") != 0 && strcmp(type, "ERROR") != 0) {
		if (strcmp(o, "json") == 0 || strcmp(o, "yaml") == 0) {
			rzc_print_object(w->c, w->k, ev);
		} else {
			json_t *one = json_pack("[O]", json_object_get(ev, "object"));
			rzc_print_list(w->c, w->k, one, false);
			json_decref(one);
		}
		fflush(stdout);
	}
	json_decref(ev);
	return 0;
}

static int watch(rzc_t *c, const rzc_kind_t *k, const char *coll, const char *rv)
{
	struct watch w = { c, k };
	char *sel = c->selector ? rzc_escape(c->selector) : NULL;
	char *fsel = c->field_selector ? rzc_escape(c->field_selector) : NULL;
	char *path = rzc_path("%s?watch=true&resourceVersion=%s%s%s%s%s", coll, rv,
	                      sel ? "&labelSelector=" : "", sel ? sel : "",
	                      fsel ? "&fieldSelector=" : "", fsel ? fsel : "");
	long code = 0;
	int rc = rzc_stream(c, path, "application/json", on_event_line, &w, &code);

	free(sel);
	free(fsel);
	free(path);
	if (rc == 0 && code != 200) {
		rzc_fail("the watch ended: the server answered %ld", code);
		rzc_hint_login(code);
		return RZC_ERR;
	}
	return rc == 0 ? RZC_OK : RZC_ERR;
}

/* Events by lastTimestamp, oldest first (then by name): newest last, as kubectl shows
 * them. Their names are hashes, so the server's order says nothing. */
static int by_last_seen(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *tx = json_string_value(json_object_get(x, "lastTimestamp"));
	const char *ty = json_string_value(json_object_get(y, "lastTimestamp"));
	int cmp = strcmp(tx ? tx : "", ty ? ty : "");

	return cmp != 0 ? cmp
	                : strcmp(rzc_meta(x, "name") ? rzc_meta(x, "name") : "",
	                         rzc_meta(y, "name") ? rzc_meta(y, "name") : "");
}

static void sort_events(json_t *items)
{
	rzc_sort(items, by_last_seen);
}

int rzc_cmd_get(rzc_t *c, int argc, char **argv)
{
	const char *name = NULL;
	const rzc_kind_t *k;
	int rc;

	if (argc < 1) {
		return rzc_usage("get: name a type: tenants, nodegroups, machines, ...");
	}
	if ((k = kind_arg(argv[0], &name)) == NULL) {
		return rzc_usage("get: unknown type \"%s\" (see rezusctl api-resources)", argv[0]);
	}
	if (name == NULL && argc == 1) {
		const char *tenant = c->all_tenants ? NULL : c->tenant;
		char *coll, rv[64];
		json_t *items = NULL;
		if (k->user_scoped && (rc = need_tenant(c, k)) != RZC_OK) {
			return rc;
		}
		coll = rzc_collection(c, k, tenant, c->user);
		rc = list_all(c, coll, &items, NULL, rv, sizeof(rv));
		if (rc == RZC_OK && strcmp(k->kind, "Event") == 0) {
			sort_events(items);
		} else if (rc == RZC_OK && strcmp(k->kind, "Run") == 0) {
			rzc_sort_runs(items);
		}
		if (rc == RZC_OK) {
			rzc_print_list(c, k, items, true);
			fflush(stdout);
			if (c->watch) {
				rc = watch(c, k, coll, rv);
			}
		}
		json_decref(items);
		free(coll);
		return rc;
	}
	if ((rc = need_tenant(c, k)) != RZC_OK) {
		return rc;
	}
	{
		json_t *items = json_array();
		for (int i = name ? 0 : 1; rc == RZC_OK && i < argc; i++) {
			const char *n = i == 0 ? name : rzc_name_arg(argv[i], k->kind, "get");
			char *path = n ? rzc_object_path(c, k, c->tenant, n) : NULL;
			json_t *obj = NULL;
			rc = n == NULL ? RZC_USAGE : rzc_json(c, "GET", path, NULL, &obj);
			if (rc == RZC_OK) {
				json_array_append_new(items, obj);
			}
			free(path);
		}
		if (json_array_size(items) == 1 && c->output != NULL &&
		    (strcmp(c->output, "json") == 0 || strcmp(c->output, "yaml") == 0 ||
		     strncmp(c->output, "jsonpath=", 9) == 0)) {
			rzc_print_object(c, k, json_array_get(items, 0));
		} else if (json_array_size(items) > 0) {
			rzc_print_list(c, k, items, true);
		}
		json_decref(items);
	}
	return rc;
}

/* ------------------------------------------------------------------ describe */

static void describe_related(rzc_t *c, const char *title, const rzc_kind_t *k, const char *tenant,
                             const char *selector)
{
	char *coll = rzc_collection(c, k, tenant, NULL), rv[64];
	const char *saved_sel = c->selector, *saved_out = c->output;
	char *saved_tenant = c->tenant;
	json_t *items = NULL;

	c->selector = selector;
	c->output = NULL;
	c->tenant = (char *)tenant; /* no TENANT column */
	printf("\n%s:\n", title);
	if (list_all(c, coll, &items, NULL, rv, sizeof(rv)) == RZC_OK) {
		if (json_array_size(items) == 0) {
			printf("  <none>\n");
		} else {
			rzc_print_list(c, k, items, true);
		}
	}
	c->selector = saved_sel;
	c->output = saved_out;
	c->tenant = saved_tenant;
	json_decref(items);
	free(coll);
}

/* The tenant's five newest runs, newest first. */
static void describe_runs(rzc_t *c, const char *tenant)
{
	char *coll = rzc_collection(c, rzc_kind_find("runs"), tenant, NULL), rv[64];
	json_t *items = NULL, *recent = json_array();
	char *saved_tenant = c->tenant;
	size_t n;

	printf("\nRecent runs:\n");
	if (list_all(c, coll, &items, NULL, rv, sizeof(rv)) == RZC_OK) {
		rzc_sort_runs(items);
		n = json_array_size(items);
		for (size_t i = 0; i < n && i < 5; i++) {
			json_array_append(recent, json_array_get(items, i));
		}
		c->tenant = (char *)tenant;
		if (json_array_size(recent) == 0) {
			printf("  <none>\n");
		} else {
			rzc_print_list(c, rzc_kind_find("runs"), recent, true);
		}
		c->tenant = saved_tenant;
	}
	json_decref(items);
	json_decref(recent);
	free(coll);
}

/* The last lines of a run's log. */
static void describe_log(rzc_t *c, const char *tenant, const char *run)
{
	char *t = rzc_escape(tenant), *n = rzc_escape(run);
	char *path = rzc_path("/api/v1/tenants/%s/runs/%s/log", t, n);
	rzc_resp_t r;
	size_t lines = 0, from = 0;

	free(t);
	free(n);
	printf("\nLog (last lines; rezusctl logs %s for all):\n", run);
	if (rzc_request(c, "GET", path, NULL, NULL, 0, &r) == 0 && r.code == 200) {
		for (size_t i = r.len; i-- > 0;) {
			if (r.body[i] == '\n' && i + 1 < r.len && ++lines == 10) {
				from = i + 1;
				break;
			}
		}
		if (r.len == 0) {
			printf("  <empty>\n");
		}
		for (char *line = r.body + from, *nl; line < r.body + r.len; line = nl + 1) {
			nl = memchr(line, '\n', (size_t)(r.body + r.len - line));
			if (nl == NULL) {
				nl = r.body + r.len;
			}
			printf("  %.*s\n", (int)(nl - line), line);
		}
	} else {
		printf("  <none>\n");
	}
	rzc_resp_free(&r);
	free(path);
}

#define DESCRIBE_EVENTS_MAX 50

/* "5m", or "5m (x3 over 2h)" for an Event that happened more than once, as kubectl says. */
static void event_age(const json_t *ev, char *buf, size_t size)
{
	char last[32], first[32];
	json_int_t count = json_integer_value(json_object_get(ev, "count"));

	rzc_age(json_string_value(json_object_get(ev, "lastTimestamp")), last, sizeof(last));
	if (count > 1) {
		rzc_age(json_string_value(json_object_get(ev, "firstTimestamp")), first,
		        sizeof(first));
		snprintf(buf, size, "%s (x%lld over %s)", last, (long long)count, first);
	} else {
		snprintf(buf, size, "%s", last);
	}
}

/* An Event's cells in describe: TYPE, REASON, AGE, FROM, MESSAGE ("" for none; the message
 * on one line, in msg). */
static void event_cells(const json_t *ev, const char **v, char *age, size_t asize, char *msg,
                        size_t msize)
{
	const char *m = json_string_value(json_object_get(ev, "message"));

	event_age(ev, age, asize);
	snprintf(msg, msize, "%s", m ? m : "");
	for (char *p = msg; *p != '\0'; p++) {
		*p = *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : *p;
	}
	v[0] = json_string_value(json_object_get(ev, "type"));
	v[1] = json_string_value(json_object_get(ev, "reason"));
	v[2] = age;
	v[3] = json_string_value(json_object_get(json_object_get(ev, "source"), "component"));
	v[4] = msg;
	for (size_t j = 0; j < 5; j++) {
		v[j] = v[j] ? v[j] : "";
	}
}

/* items[from..] under a header, the columns aligned. */
static void print_events(const json_t *items, size_t from)
{
	static const char *const heads[] = { "TYPE", "REASON", "AGE", "FROM", "MESSAGE" };
	size_t n = json_array_size(items);
	const char *v[5];
	char age[96], msg[1100];
	rzc_rows_t t;

	rzc_rows_init(&t, heads, 5);
	for (size_t i = from; i < n; i++) {
		event_cells(json_array_get(items, i), v, age, sizeof(age), msg, sizeof(msg));
		rzc_rows_add(&t, v[0], v[1], v[2], v[3], v[4]);
	}
	rzc_rows_print(&t, "  ");
	rzc_rows_free(&t);
}

/* The object's Events, newest last (at most DESCRIBE_EVENTS_MAX): the end of describe, as
 * kubectl has it. They are fetched with a field selector on involvedObject. */
static void describe_events(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *name)
{
	char *coll = rzc_collection(c, rzc_kind_of("Event"), tenant, NULL), *sel = NULL, rv[64];
	const char *saved_sel = c->selector, *saved_fsel = c->field_selector;
	json_t *items = NULL;
	size_t n;

	printf("\nEvents:\n");
	if (coll != NULL &&
	    asprintf(&sel, "involvedObject.kind=%s,involvedObject.name=%s", k->kind, name) > 0) {
		c->selector = NULL;
		c->field_selector = sel;
		if (list_all(c, coll, &items, NULL, rv, sizeof(rv)) == RZC_OK) {
			sort_events(items);
			n = json_array_size(items);
			if (n == 0) {
				printf("  <none>\n");
			} else if (n > DESCRIBE_EVENTS_MAX) {
				printf("  (%zu older not shown)\n", n - DESCRIBE_EVENTS_MAX);
			}
			if (n > 0) {
				print_events(items,
				             n > DESCRIBE_EVENTS_MAX ? n - DESCRIBE_EVENTS_MAX : 0);
			}
		}
		c->selector = saved_sel;
		c->field_selector = saved_fsel;
	}
	json_decref(items);
	free(sel);
	free(coll);
}

/* v as YAML, two spaces in. */
static void indented(const json_t *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL) {
		return;
	}
	rzc_yaml_write(f, v);
	fclose(f);
	for (char *line = text, *nl; line != NULL && *line != '\0'; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		printf("  %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
	}
	free(text);
}

int rzc_cmd_describe(rzc_t *c, int argc, char **argv)
{
	const char *name = NULL;
	const rzc_kind_t *k;
	char *path;
	json_t *obj = NULL, *conds, *cond, *spec;
	size_t i;
	int rc;

	if (argc < 1 || (k = kind_arg(argv[0], &name)) == NULL) {
		return rzc_usage("describe: TYPE NAME");
	}
	if (name == NULL && argc > 1 &&
	    (name = rzc_name_arg(argv[1], k->kind, "describe")) == NULL) {
		return RZC_USAGE;
	}
	if (name == NULL) {
		return rzc_usage("describe: name the %s", k->singular);
	}
	if ((rc = need_tenant(c, k)) != RZC_OK) {
		return rc;
	}
	path = rzc_object_path(c, k, c->tenant, name);
	rc = rzc_json(c, "GET", path, NULL, &obj);
	free(path);
	if (rc != RZC_OK) {
		return rc;
	}
	printf("Name:     %s\n", rzc_meta(obj, "name"));
	printf("Kind:     %s\n", k->kind);
	if (rzc_meta(obj, "tenant") != NULL && rzc_meta(obj, "tenant")[0] != '\0') {
		printf("Tenant:   %s\n", rzc_meta(obj, "tenant"));
	}
	printf("Created:  %s\n",
	       rzc_meta(obj, "creationTimestamp") ? rzc_meta(obj, "creationTimestamp") : "");
	if (rzc_meta(obj, "deletionTimestamp") != NULL) {
		printf("Deleting: since %s\n", rzc_meta(obj, "deletionTimestamp"));
	}
	if (strcmp(k->kind, "Run") == 0) { /* where it ran; "-": the daemon's own pool */
		const char *runner =
		    json_string_value(json_object_get(json_object_get(obj, "status"), "runner"));
		printf("Runner:   %s\n", runner != NULL ? runner : "-");
	}
	{
		json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels"), *v;
		const char *key;
		printf("Labels:  ");
		if (json_object_size(labels) == 0) {
			printf(" <none>");
		}
		json_object_foreach(labels, key, v)
		{
			printf(" %s=%s", key, json_string_value(v));
		}
		printf("\n");
	}
	{ /* members beside metadata, spec and status (an Event's) */
		json_t *details = json_deep_copy(obj);
		static const char *const standard[] = { "apiVersion", "kind", "metadata", "spec",
			                                "status" };
		for (size_t j = 0; j < sizeof(standard) / sizeof(standard[0]); j++) {
			json_object_del(details, standard[j]);
		}
		if (json_object_size(details) > 0) {
			printf("Details:\n");
			indented(details);
		}
		json_decref(details);
	}
	spec = json_object_get(obj, "spec");
	if (json_object_size(spec) > 0) {
		printf("Spec:\n");
		indented(spec);
	}
	{
		json_t *status = json_deep_copy(json_object_get(obj, "status"));
		json_object_del(status, "conditions");
		json_object_del(status, "plan"); /* a table of its own, below */
		if (json_object_size(status) > 0) {
			printf("Status:\n");
			indented(status);
		}
		json_decref(status);
	}
	conds = json_object_get(json_object_get(obj, "status"), "conditions");
	if (json_array_size(conds) > 0) {
		static const char *const heads[] = { "TYPE", "STATUS", "REASON", "MESSAGE" };
		rzc_rows_t t;
		rzc_rows_init(&t, heads, 4);
		json_array_foreach(conds, i, cond)
		{
			rzc_rows_add(&t, json_string_value(json_object_get(cond, "type")),
			             json_string_value(json_object_get(cond, "status")),
			             json_string_value(json_object_get(cond, "reason")),
			             json_string_value(json_object_get(cond, "message")));
		}
		printf("Conditions:\n");
		rzc_rows_print(&t, "  ");
		rzc_rows_free(&t);
	}
	if (strcmp(k->kind, "Tenant") == 0) {
		describe_related(c, "Node groups", rzc_kind_find("nodegroups"), name, NULL);
		describe_related(c, "Machines", rzc_kind_find("machines"), name, NULL);
		describe_runs(c, name);
	} else if (strcmp(k->kind, "Run") == 0) {
		if (json_object_get(json_object_get(obj, "status"), "plan") != NULL) {
			printf("Plan:\n");
			rzc_print_plan(
			    stdout, json_object_get(json_object_get(obj, "status"), "plan"), "  ");
		}
		describe_log(c, c->tenant, name);
	} else if (strcmp(k->kind, "NodeGroup") == 0) {
		char *sel = NULL;
		if (asprintf(&sel, "rezuscloud.io/nodegroup=%s", name) > 0) {
			describe_related(c, "Machines", rzc_kind_find("machines"), c->tenant, sel);
			free(sel);
		}
	}
	if (strcmp(k->kind, "Event") != 0) {
		describe_events(c, k, strcmp(k->kind, "Tenant") == 0 ? name : c->tenant, name);
	}
	json_decref(obj);
	return RZC_OK;
}

/* ------------------------------------------------------------------ delete */

/* Delete one object; a dry run asks the server (server) or only reads it (client). */
static int delete_one(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *name)
{
	char *path =
	    rzc_dry_path(rzc_object_path(c, k, tenant, name), c->dry_run == RZC_DRY_SERVER);
	rzc_resp_t r;
	int rc = rzc_request(c, c->dry_run == RZC_DRY_CLIENT ? "GET" : "DELETE", path, NULL, NULL,
	                     0, &r) < 0
	             ? RZC_ERR
	             : RZC_OK;

	free(path);
	if (rc != RZC_OK) {
		return rc;
	}
	if (r.code == 200 || r.code == 202) {
		rzc_said(k, name, r.code == 202 ? "deletion started" : "deleted", c->dry_run);
	} else {
		rzc_print_status(&r);
		rc = RZC_ERR;
	}
	rzc_resp_free(&r);
	return rc;
}

int rzc_cmd_delete(rzc_t *c, int argc, char **argv)
{
	const char *name = NULL;
	const rzc_kind_t *k;
	int rc = RZC_OK, worst = RZC_OK;

	if (c->nfiles > 0) {
		json_t *objs = json_array(), *o;
		size_t i;
		rc = rzc_read_manifests(c->files, c->nfiles, objs);
		const char *set = rc == RZC_OK ? rzc_manifest_tenant(c, objs) : NULL;
		for (i = json_array_size(objs); rc == RZC_OK && i-- > 0;) {
			const char *tenant, *n;
			o = json_array_get(objs, i);
			if (rzc_identify(c, o, set, &k, &tenant, &n) != RZC_OK ||
			    delete_one(c, k, tenant, n) != RZC_OK) {
				worst = RZC_ERR;
			}
		}
		json_decref(objs);
		return rc != RZC_OK ? rc : worst;
	}
	if (argc < 1 || (k = kind_arg(argv[0], &name)) == NULL) {
		return rzc_usage("delete: TYPE NAME... or -f FILE");
	}
	if (name == NULL && argc < 2) {
		return rzc_usage("delete: name the %s to delete", k->singular);
	}
	if ((rc = need_tenant(c, k)) != RZC_OK) {
		return rc;
	}
	for (int i = name ? 0 : 1; i < argc; i++) {
		const char *n = i == 0 ? name : rzc_name_arg(argv[i], k->kind, "delete");
		if (n == NULL) {
			return RZC_USAGE;
		}
		if (delete_one(c, k, c->tenant, n) != RZC_OK) {
			worst = RZC_ERR;
		}
	}
	return worst;
}

/* ------------------------------------------------------------------ scale */

int rzc_cmd_scale(rzc_t *c, int argc, char **argv)
{
	const char *name = NULL;
	const rzc_kind_t *k;
	char *path, *body = NULL;
	rzc_resp_t r;
	int rc;

	if (argc < 1 || (k = kind_arg(argv[0], &name)) == NULL ||
	    strcmp(k->kind, "NodeGroup") != 0) {
		return rzc_usage("scale: nodegroup NAME --replicas N");
	}
	if (name == NULL && argc > 1 && (name = rzc_name_arg(argv[1], k->kind, "scale")) == NULL) {
		return RZC_USAGE;
	}
	if (name == NULL || c->replicas < 0) {
		return rzc_usage("scale: nodegroup NAME --replicas N");
	}
	if ((rc = need_tenant(c, k)) != RZC_OK) {
		return rc;
	}
	path = rzc_dry_path(rzc_object_path(c, k, c->tenant, name), c->dry_run == RZC_DRY_SERVER);
	if (path == NULL || asprintf(&body, "{\"spec\":{\"count\":%ld}}", c->replicas) < 0) {
		free(path);
		return RZC_ERR;
	}
	if (c->dry_run == RZC_DRY_CLIENT) { /* the node group must be there; nothing is sent */
		rc = rzc_request(c, "GET", path, NULL, NULL, 0, &r);
	} else {
		rc = rzc_request(c, "PATCH", path, "application/merge-patch+json", body,
		                 strlen(body), &r);
	}
	free(path);
	free(body);
	if (rc < 0) {
		return RZC_ERR;
	}
	if (r.code == 200) {
		rzc_said(k, name, "scaled", c->dry_run);
		rc = RZC_OK;
	} else {
		rzc_print_status(&r);
		rc = RZC_ERR;
	}
	rzc_resp_free(&r);
	return rc;
}

/* ------------------------------------------------------------------ edit */

/* Run $EDITOR (or vi) on path; 0 when it exited 0. */
static int run_editor(const char *path)
{
	const char *editor = getenv("REZUS_EDITOR");
	char *cmd = NULL;
	int st;

	if (editor == NULL || editor[0] == '\0') {
		editor = getenv("EDITOR");
	}
	if (editor == NULL || editor[0] == '\0') {
		editor = "vi";
	}
	if (asprintf(&cmd, "%s '%s'", editor, path) < 0) {
		return -1;
	}
	st = system(cmd);
	free(cmd);
	return st == 0 ? 0 : -1;
}

/* The file the editor opens: how to use it, problem (may be NULL) as '#' lines, then body
 * (YAML). */
static int write_edit_file(const char *path, const char *body, const char *problem)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		return -1;
	}
	fprintf(f, "# Edit the object below; save and quit to send it, or quit without changes\n"
	           "# to cancel. Lines starting with '#' are ignored.\n");
	if (problem != NULL) {
		fprintf(f, "#\n# The edit was refused:\n");
		for (const char *p = problem; *p != '\0';) {
			const char *nl = strchr(p, '\n');
			int len = nl ? (int)(nl - p) : (int)strlen(p);
			fprintf(f, "#   %.*s\n", len, p);
			p += len + (nl != NULL);
		}
	}
	fprintf(f, "#\n%s", body);
	return fclose(f);
}

/* obj as YAML. Caller frees; NULL when out of memory. */
static char *yaml_text(const json_t *obj)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL) {
		return NULL;
	}
	rzc_yaml_write(f, obj);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* text without its lines that start with '#': the header written above it, and the user's
 * own comments (a '#' inside a block scalar is indented, so it stays). Edited in place. */
static char *strip_comments(char *text)
{
	char *in = text, *out = text;

	while (*in != '\0') {
		size_t len = strcspn(in, "\n") + (in[strcspn(in, "\n")] == '\n');
		if (*in != '#') {
			memmove(out, in, len);
			out += len;
		}
		in += len;
	}
	*out = '\0';
	return text;
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

/* The server's refusal as text: message and causes. */
static char *refusal(const rzc_resp_t *r)
{
	json_t *st = json_loadb(r->body, r->len, 0, NULL), *cause;
	json_t *causes = json_object_get(json_object_get(st, "details"), "causes");
	char *out = NULL, *next;
	size_t i;

	if (asprintf(&out, "%s",
	             json_string_value(json_object_get(st, "message"))
	                 ? json_string_value(json_object_get(st, "message"))
	                 : "(no message)") < 0) {
		out = NULL;
	}
	json_array_foreach(causes, i, cause)
	{
		if (out != NULL &&
		    asprintf(&next, "%s\n%s: %s", out,
		             json_string_value(json_object_get(cause, "field")),
		             json_string_value(json_object_get(cause, "message"))) > 0) {
			free(out);
			out = next;
		}
	}
	json_decref(st);
	return out;
}

/* One editing session's state: what the editor is shown (the object's YAML, then the user's
 * own text after a refusal, as kubectl does) and why the last try failed. */
struct edit {
	const char *tmp;   /* the file the editor opens */
	char *offered;     /* the body it was last given (no '#' lines) */
	char *problem;     /* why the last try was refused, or NULL */
	json_t *obj;       /* the object as read (resourceVersion refreshed on a conflict) */
	const char *path;  /* its API path */
	const char *label; /* kind/name */
	bool kept;         /* the file stays: a copy of the changes given up on */
};

/* The user gave up on a refused edit (saved it unchanged, or empty): the file keeps the
 * last edited text and the reason, and says where, as kubectl does. */
static int edit_abandoned(struct edit *e)
{
	e->kept = write_edit_file(e->tmp, e->offered, e->problem) == 0;
	fprintf(stderr, "A copy of your changes has been stored to \"%s\"\n", e->tmp);
	return rzc_fail("edit abandoned: %s", e->problem);
}

/* Send edited; 1 when refused (e->problem says why, the editor opens again). */
static int edit_send(rzc_t *c, struct edit *e, json_t *edited, char *text)
{
	char *body = json_dumps(edited, JSON_COMPACT);
	rzc_resp_t r;
	long code;
	int rc = body == NULL || rzc_request(c, "PUT", e->path, "application/json", body,
	                                     strlen(body), &r) < 0
	             ? RZC_ERR
	             : RZC_OK;

	free(body);
	if (rc != RZC_OK) {
		return rc;
	}
	if (r.code == 200) {
		printf("%s edited\n", e->label);
		rzc_resp_free(&r);
		return RZC_OK;
	}
	free(e->problem);
	e->problem = refusal(&r);
	code = r.code;
	rzc_resp_free(&r);
	free(e->offered);
	if (code == 409) { /* changed meanwhile: the edit again, on the new resourceVersion */
		json_t *fresh = NULL;
		if (rzc_json(c, "GET", e->path, NULL, &fresh) == RZC_OK) {
			json_object_set(
			    json_object_get(edited, "metadata"), "resourceVersion",
			    json_object_get(json_object_get(fresh, "metadata"), "resourceVersion"));
			json_object_set(
			    json_object_get(e->obj, "metadata"), "resourceVersion",
			    json_object_get(json_object_get(fresh, "metadata"), "resourceVersion"));
		}
		json_decref(fresh);
		e->offered = yaml_text(edited);
	} else {
		e->offered = strdup(text);
	}
	return e->offered != NULL ? 1 : rzc_fail("out of memory");
}

/* Open the editor until the server takes the edit or the user gives up. */
static int edit_loop(rzc_t *c, struct edit *e)
{
	for (;;) {
		FILE *f;
		char *text;
		size_t len;
		json_t *docs = NULL, *edited;
		rz_err_t err = { 0 };
		int rc;

		if (write_edit_file(e->tmp, e->offered, e->problem) != 0 ||
		    run_editor(e->tmp) != 0) {
			return rzc_fail("the editor failed");
		}
		if ((f = fopen(e->tmp, "r")) == NULL || (text = rzc_read_all(f, &len)) == NULL) {
			if (f != NULL) {
				fclose(f);
			}
			return rzc_fail("cannot read %s back", e->tmp);
		}
		fclose(f);
		strip_comments(text);
		if (e->problem != NULL && (blank(text) || strcmp(text, e->offered) == 0)) {
			free(text);
			return edit_abandoned(e);
		}
		if (blank(text)) {
			free(text);
			printf("Edit cancelled, saved file was empty.\n");
			return RZC_OK;
		}
		if (rz_yaml_load_all(e->tmp, text, strlen(text), &docs, &err) != 0) {
			free(e->problem); /* the user's text again, with the parser's complaint */
			e->problem = strdup(err.msg);
			free(e->offered);
			e->offered = text;
			continue;
		}
		edited = json_incref(json_array_get(docs, 0));
		json_decref(docs);
		if (edited == NULL || json_equal(edited, e->obj)) {
			json_decref(edited);
			free(text);
			printf("Edit cancelled, no changes made.\n");
			return RZC_OK;
		}
		rc = edit_send(c, e, edited, text);
		json_decref(edited);
		free(text);
		if (rc != 1) {
			return rc;
		}
	}
}

int rzc_cmd_edit(rzc_t *c, int argc, char **argv)
{
	const char *name = NULL, *dir = getenv("TMPDIR");
	const rzc_kind_t *k;
	char *path, tmp[4096], label[256];
	struct edit e = { tmp, NULL, NULL, NULL, NULL, label, false };
	int rc, fd;

	if (argc < 1 || (k = kind_arg(argv[0], &name)) == NULL) {
		return rzc_usage("edit: TYPE NAME");
	}
	if (name == NULL && argc > 1 && (name = rzc_name_arg(argv[1], k->kind, "edit")) == NULL) {
		return RZC_USAGE;
	}
	if (name == NULL) {
		return rzc_usage("edit: name the %s", k->singular);
	}
	if ((rc = need_tenant(c, k)) != RZC_OK) {
		return rc;
	}
	snprintf(label, sizeof(label), "%s/%s", k->singular, name);
	snprintf(tmp, sizeof(tmp), "%s/rezusctl-edit-XXXXXX.yaml",
	         dir != NULL && dir[0] != '\0' ? dir : "/tmp");
	e.path = path = rzc_object_path(c, k, c->tenant, name);
	if ((rc = rzc_json(c, "GET", path, NULL, &e.obj)) != RZC_OK) {
		free(path);
		return rc;
	}
	json_object_del(e.obj, "status");
	if ((e.offered = yaml_text(e.obj)) == NULL || (fd = mkstemps(tmp, 5)) < 0) {
		rc = rzc_fail("cannot create a temporary file in %s: %s", tmp, strerror(errno));
	} else {
		close(fd);
		rc = edit_loop(c, &e);
		if (!e.kept) {
			unlink(tmp);
		}
	}
	free(e.offered);
	free(e.problem);
	free(path);
	json_decref(e.obj);
	return rc;
}
