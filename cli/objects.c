/* cli/objects.c - get, describe, delete, apply, create, edit, scale, and manifests. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/rezusctl.h"
#include "core/base/yaml.h"

/* ------------------------------------------------------------------ naming */

static const char *meta(const json_t *o, const char *key)
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

/* The path of object name of kind k: /api/v1/.../name. */
static char *object_path(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *name)
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
	                : strcmp(meta(x, "name") ? meta(x, "name") : "",
	                         meta(y, "name") ? meta(y, "name") : "");
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
			char *path = n ? object_path(c, k, c->tenant, n) : NULL;
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
	path = object_path(c, k, c->tenant, name);
	rc = rzc_json(c, "GET", path, NULL, &obj);
	free(path);
	if (rc != RZC_OK) {
		return rc;
	}
	printf("Name:     %s\n", meta(obj, "name"));
	printf("Kind:     %s\n", k->kind);
	if (meta(obj, "tenant") != NULL && meta(obj, "tenant")[0] != '\0') {
		printf("Tenant:   %s\n", meta(obj, "tenant"));
	}
	printf("Created:  %s\n",
	       meta(obj, "creationTimestamp") ? meta(obj, "creationTimestamp") : "");
	if (meta(obj, "deletionTimestamp") != NULL) {
		printf("Deleting: since %s\n", meta(obj, "deletionTimestamp"));
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
			rzc_print_plan(json_object_get(json_object_get(obj, "status"), "plan"),
			               "  ");
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

/* ------------------------------------------------------------------ manifests */

static bool has_kind(const json_t *o)
{
	return json_is_object(o) && json_is_string(json_object_get(o, "kind"));
}

/* A List's items, each an object with a kind like a document of its own: what the verbs
 * after reading (ordering, apply) take for granted. */
static int add_items(const char *name, size_t doc, const json_t *items, json_t *objs)
{
	json_t *it;
	size_t i;

	if (items == NULL) {
		return RZC_OK; /* an empty List */
	}
	if (!json_is_array(items)) {
		return rzc_fail("%s: document %zu: items is not a list", name, doc);
	}
	json_array_foreach(items, i, it)
	{
		if (!has_kind(it)) {
			return rzc_fail("%s: document %zu: item %zu is not an object with a kind",
			                name, doc, i + 1);
		}
	}
	json_array_extend(objs, (json_t *)items);
	return RZC_OK;
}

static int add_docs(const char *name, const char *text, size_t len, json_t *objs)
{
	json_t *docs = NULL, *d;
	rz_err_t err = { 0 };
	size_t i;
	int rc = RZC_OK;

	if (rz_yaml_load_all(name, text, len, &docs, &err) != 0) {
		return rzc_fail("%s", err.msg);
	}
	json_array_foreach(docs, i, d)
	{
		const char *kind = json_string_value(json_object_get(d, "kind"));
		if (!has_kind(d)) {
			rc = rzc_fail("%s: document %zu is not an object with a kind", name, i + 1);
		} else if (strcmp(kind, "List") == 0 ||
		           (strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, "List") == 0 &&
		            json_is_array(json_object_get(d, "items")))) {
			rc = add_items(name, i + 1, json_object_get(d, "items"), objs);
		} else {
			json_array_append(objs, d);
		}
		if (rc != RZC_OK) {
			break;
		}
	}
	json_decref(docs);
	return rc;
}

/* While apply reads its manifests: the file each object came from, in step with objs
 * (what its errors name). NULL otherwise. */
static json_t *read_sources;

static int read_file(const char *path, json_t *objs)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t len, before = json_array_size(objs);
	char *text;
	int rc;

	if (f == NULL) {
		return rzc_fail("cannot read %s: %s", path, strerror(errno));
	}
	text = rzc_read_all(f, &len);
	if (f != stdin) {
		fclose(f);
	}
	if (text == NULL) {
		return rzc_fail("out of memory");
	}
	rc = add_docs(strcmp(path, "-") == 0 ? "(stdin)" : path, text, len, objs);
	free(text);
	for (size_t i = before; read_sources != NULL && i < json_array_size(objs); i++) {
		json_array_append_new(read_sources,
		                      json_string(strcmp(path, "-") == 0 ? "(stdin)" : path));
	}
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rzc_read_manifests(const char *const *paths, size_t n, json_t *objs)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;
		char *names[1024];
		size_t count = 0;
		int rc = RZC_OK;

		if (strcmp(paths[i], "-") == 0 || stat(paths[i], &st) != 0 ||
		    !S_ISDIR(st.st_mode)) {
			if ((rc = read_file(paths[i], objs)) != RZC_OK) {
				return rc;
			}
			continue;
		}
		if ((d = opendir(paths[i])) == NULL) {
			return rzc_fail("cannot read %s: %s", paths[i], strerror(errno));
		}
		while ((e = readdir(d)) != NULL && count < 1024) {
			size_t len = strlen(e->d_name);
			if (e->d_name[0] != '.' &&
			    ((len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) ||
			     (len > 4 && strcmp(e->d_name + len - 4, ".yml") == 0) ||
			     (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0))) {
				names[count++] = strdup(e->d_name);
			}
		}
		closedir(d);
		qsort(names, count, sizeof(names[0]), by_name);
		for (size_t j = 0; j < count; j++) {
			char *p = NULL;
			if (rc == RZC_OK && asprintf(&p, "%s/%s", paths[i], names[j]) > 0) {
				rc = read_file(p, objs);
			}
			free(p);
			free(names[j]);
		}
		if (rc != RZC_OK) {
			return rc;
		}
	}
	return RZC_OK;
}

/* Tenants first, then the rest in file order: what a manifest set needs to be created.
 * srcs (the objects' files, or NULL) follows the same order. */
static void order(json_t *objs, json_t *srcs)
{
	json_t *sorted = json_array(), *ssorted = json_array(), *o;
	size_t i;

	for (int pass = 0; pass < 2; pass++) {
		json_array_foreach(objs, i, o)
		{
			bool tenant =
			    strcmp(json_string_value(json_object_get(o, "kind")), "Tenant") == 0;
			if (tenant == (pass == 0)) {
				json_array_append(sorted, o);
				json_array_append(ssorted, json_array_get(srcs, i));
			}
		}
	}
	json_array_clear(objs);
	json_array_extend(objs, sorted);
	if (srcs != NULL) {
		json_array_clear(srcs);
		json_array_extend(srcs, ssorted);
	}
	json_decref(sorted);
	json_decref(ssorted);
}

/* While apply, create or delete -f work through a set of manifests: the one Tenant the set
 * holds (borrowed from the set), which its tenant-scoped objects that name none belong to
 * unless -t says otherwise. NULL otherwise. */
static const char *set_tenant;

/* The name of the one Tenant in objs when there is exactly one and -t was not given, else
 * NULL. */
static const char *the_sets_tenant(const rzc_t *c, const json_t *objs)
{
	const char *name = NULL;
	const json_t *o;
	size_t i, n = 0;

	json_array_foreach(objs, i, o)
	{
		const char *kind = json_string_value(json_object_get(o, "kind"));
		if (kind != NULL && strcmp(kind, "Tenant") == 0) {
			name = meta(o, "name");
			n++;
		}
	}
	return n == 1 && !c->tenant_given ? name : NULL;
}

/* The kind, tenant and name of a manifest object, checked. Its tenant: metadata.tenant, or
 * metadata.namespace as Kubernetes clients write it, or -t, or the set's one Tenant, or the
 * context's default tenant. */
static int identify(rzc_t *c, json_t *o, const rzc_kind_t **k, const char **tenant,
                    const char **name)
{
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const char *mt = meta(o, "tenant"), *ns = meta(o, "namespace");

	*k = rzc_kind_of(kind);
	*name = meta(o, "name");
	if (*k == NULL) {
		return rzc_fail("kind \"%s\" is not one rezusctl knows", kind ? kind : "");
	}
	if (*name == NULL || (*name)[0] == '\0') {
		return rzc_fail("a %s without metadata.name", kind);
	}
	if (!(*k)->tenant_scoped) {
		*tenant = mt != NULL ? mt : c->tenant;
		return RZC_OK;
	}
	if (mt != NULL && ns != NULL && strcmp(mt, ns) != 0) {
		return rzc_fail(
		    "%s/%s: metadata.namespace (%s) does not match metadata.tenant (%s): "
		    "the namespace is the tenant",
		    (*k)->singular, *name, ns, mt);
	}
	*tenant = mt != NULL                              ? mt
	          : ns != NULL                            ? ns
	          : c->tenant_given || set_tenant == NULL ? c->tenant
	                                                  : set_tenant;
	if (*tenant == NULL) {
		return rzc_fail("%s/%s: no tenant: set metadata.tenant (or metadata.namespace) or "
		                "give -t",
		                (*k)->singular, *name);
	}
	if (mt == NULL) {
		json_object_set_new(json_object_get(o, "metadata"), "tenant", json_string(*tenant));
		*tenant = meta(o, "tenant");
	}
	return RZC_OK;
}

/* What apply compares and carries: spec, labels, annotations. */
static bool same(const json_t *want, const json_t *have)
{
	const json_t *wm = json_object_get(want, "metadata"),
	             *hm = json_object_get(have, "metadata");
	const json_t *wl = json_object_get(wm, "labels"), *hl = json_object_get(hm, "labels");
	const json_t *wa = json_object_get(wm, "annotations"),
	             *ha = json_object_get(hm, "annotations");
	json_t *ws = json_object_get(want, "spec"), *hs = json_object_get(have, "spec");
	bool eq = true;

	if (ws != NULL) {
		/* compare only what the manifest says: defaults the server filled are not drift
		 * (a field dropped from the manifest is reset when something else changes) */
		const char *key;
		json_t *v;
		json_object_foreach(ws, key, v)
		{
			eq = eq && json_equal(v, json_object_get(hs, key));
		}
	}
	/* labels or annotations the manifest gives must be the server's, absent meaning {} */
	if (wl != NULL && !(hl ? json_equal(wl, hl) : json_object_size(wl) == 0)) {
		eq = false;
	}
	if (wa != NULL && !(ha ? json_equal(wa, ha) : json_object_size(wa) == 0)) {
		eq = false;
	}
	return eq;
}

/* have with want's spec, labels and annotations; the resourceVersion stays. */
static json_t *merged(const json_t *want, const json_t *have)
{
	json_t *out = json_deep_copy(have), *m = json_object_get(out, "metadata");
	const json_t *wm = json_object_get(want, "metadata");

	json_object_del(out, "status");
	if (json_object_get(want, "spec") != NULL) {
		json_object_set(out, "spec", json_object_get(want, "spec"));
	}
	if (json_object_get(wm, "labels") != NULL) {
		json_object_set(m, "labels", json_object_get(wm, "labels"));
	}
	if (json_object_get(wm, "annotations") != NULL) {
		json_object_set(m, "annotations", json_object_get(wm, "annotations"));
	}
	return out;
}

/* A write's path: with ?dryRun=All on a dry run (the server validates, stores nothing). */
static char *dry_path(char *path, bool dry)
{
	char *out = NULL;

	if (!dry || path == NULL) {
		return path;
	}
	if (asprintf(&out, "%s%sdryRun=All", path, strchr(path, '?') ? "&" : "?") < 0) {
		out = NULL;
	}
	free(path);
	return out;
}

/* What a write says of one object, kubectl's way: "tenant/demo created", and on a dry run
 * " (server dry run)" or " (dry run)" after it. */
static void said(const rzc_kind_t *k, const char *name, const char *what, int dry)
{
	printf("%s/%s %s%s\n", k->singular, name, what,
	       dry == RZC_DRY_SERVER   ? " (server dry run)"
	       : dry == RZC_DRY_CLIENT ? " (dry run)"
	                               : "");
}

/* Create or update one object. dry: RZC_DRY_SERVER only asks the server whether it would
 * (?dryRun=All); RZC_DRY_CLIENT reads what is there and sends no write. say: print what
 * was (or would be) done. */
static int apply_one(rzc_t *c, json_t *o, bool create_only, int dry, bool say)
{
	const rzc_kind_t *k;
	const char *tenant, *name;
	char *coll, *path, *wpath;
	int rc = identify(c, o, &k, &tenant, &name);
	const char *did = NULL;

	if (rc != RZC_OK) {
		return rc;
	}
	coll = dry_path(rzc_collection(c, k, tenant, c->user), dry == RZC_DRY_SERVER);
	path = object_path(c, k, tenant, name);
	wpath = dry_path(object_path(c, k, tenant, name), dry == RZC_DRY_SERVER);
	if (coll == NULL || path == NULL || wpath == NULL) {
		free(coll);
		free(path);
		free(wpath);
		return rzc_fail("out of memory");
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		rzc_resp_t r = { 0 };
		json_t *have, *put;
		char *body;

		if (!create_only) {
			if (rzc_request(c, "GET", path, NULL, NULL, 0, &r) < 0) {
				rc = RZC_ERR;
				break;
			}
			if (r.code != 200 && r.code != 404) {
				rzc_print_status(&r);
				rzc_resp_free(&r);
				rc = RZC_ERR;
				break;
			}
		}
		if (create_only || r.code == 404) {
			if (!create_only) {
				rzc_resp_free(&r);
			}
			rc = dry == RZC_DRY_CLIENT ? RZC_OK : rzc_json(c, "POST", coll, o, NULL);
			did = rc == RZC_OK ? "created" : NULL;
			break;
		}
		have = json_loadb(r.body, r.len, 0, NULL);
		rzc_resp_free(&r);
		if (same(o, have)) {
			json_decref(have);
			did = "unchanged";
			break;
		}
		put = merged(o, have);
		json_decref(have);
		if (dry == RZC_DRY_CLIENT) {
			json_decref(put);
			did = "configured";
			break;
		}
		body = json_dumps(put, JSON_COMPACT);
		json_decref(put);
		rc = rzc_request(c, "PUT", wpath, "application/json", body, strlen(body), &r) < 0
		         ? RZC_ERR
		         : RZC_OK;
		free(body);
		if (rc != RZC_OK) {
			break;
		}
		if (r.code == 409 && attempt == 0) {
			rzc_resp_free(&r); /* changed meanwhile: read it again and retry once */
			continue;
		}
		if (r.code != 200) {
			rzc_print_status(&r);
			rc = RZC_ERR;
		} else {
			did = "configured";
		}
		rzc_resp_free(&r);
		break;
	}
	if (did != NULL && say) {
		said(k, name, did, dry);
	}
	free(coll);
	free(path);
	free(wpath);
	return rc;
}

/* What the client checks of a document before any is sent: the kind, the name, the tenant
 * (identify), and a spec that is an object where the kind has one. */
static int check_local(rzc_t *c, json_t *o)
{
	const rzc_kind_t *k;
	const char *tenant, *name;
	const json_t *spec = json_object_get(o, "spec");

	if (identify(c, o, &k, &tenant, &name) != RZC_OK) {
		return RZC_ERR;
	}
	if (!json_is_object(json_object_get(o, "metadata"))) {
		return rzc_fail("%s/%s: metadata: must be an object", k->singular, name);
	}
	if ((strcmp(k->kind, "Tenant") == 0 || strcmp(k->kind, "NodeGroup") == 0) &&
	    !json_is_object(spec)) {
		return rzc_fail("%s/%s: spec: Required value: an object", k->singular, name);
	}
	return RZC_OK;
}

static int apply_files(rzc_t *c, bool create_only)
{
	json_t *objs = json_array(), *o;
	size_t i;
	int rc, worst = RZC_OK, passes;

	if (c->nfiles == 0) {
		json_decref(objs);
		return rzc_usage("%s: give -f FILE, DIR or -", create_only ? "create" : "apply");
	}
	read_sources = json_array();
	rc = rzc_read_manifests(c->files, c->nfiles, objs);
	if (rc == RZC_OK) {
		order(objs, read_sources);
		set_tenant = the_sets_tenant(c, objs);
	}
	/* every document checked, then dry-run by the server, before any is written: a
	 * set with a bad document is not half-applied; --dry-run stops after the second
	 * pass (the server's dry run, or with client, what the client can tell) */
	passes = c->dry_run == RZC_DRY_NONE ? 3 : 2;
	for (int pass = 0; rc == RZC_OK && pass < passes; pass++) {
		json_array_foreach(objs, i, o)
		{
			int one, dry = pass == 2                      ? RZC_DRY_NONE
			               : c->dry_run == RZC_DRY_CLIENT ? RZC_DRY_CLIENT
			                                              : RZC_DRY_SERVER;
			rzc_err_where = json_string_value(json_array_get(read_sources, i));
			one = pass == 0 ? check_local(c, o)
			                : apply_one(c, o, create_only, dry, pass == passes - 1);
			rzc_err_where = NULL;
			if (one != RZC_OK) {
				worst = RZC_ERR;
			}
		}
		if (pass < passes - 1 && worst != RZC_OK) {
			fprintf(stderr,
			        "error: nothing was applied: fix the documents above first\n");
			break;
		}
	}
	json_decref(read_sources);
	read_sources = NULL;
	set_tenant = NULL;
	json_decref(objs);
	return rc != RZC_OK ? rc : worst;
}

int rzc_cmd_apply(rzc_t *c, int argc, char **argv)
{
	(void)argv;
	return argc > 0 ? rzc_usage("apply: takes -f, not arguments") : apply_files(c, false);
}

int rzc_cmd_create(rzc_t *c, int argc, char **argv)
{
	(void)argv;
	return argc > 0 ? rzc_usage("create: takes -f, not arguments") : apply_files(c, true);
}

/* ------------------------------------------------------------------ delete */

/* Delete one object; a dry run asks the server (server) or only reads it (client). */
static int delete_one(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *name)
{
	char *path = dry_path(object_path(c, k, tenant, name), c->dry_run == RZC_DRY_SERVER);
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
		said(k, name, r.code == 202 ? "deletion started" : "deleted", c->dry_run);
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
		set_tenant = rc == RZC_OK ? the_sets_tenant(c, objs) : NULL;
		for (i = json_array_size(objs); rc == RZC_OK && i-- > 0;) {
			const char *tenant, *n;
			o = json_array_get(objs, i);
			if (identify(c, o, &k, &tenant, &n) != RZC_OK ||
			    delete_one(c, k, tenant, n) != RZC_OK) {
				worst = RZC_ERR;
			}
		}
		set_tenant = NULL;
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
	path = dry_path(object_path(c, k, c->tenant, name), c->dry_run == RZC_DRY_SERVER);
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
		said(k, name, "scaled", c->dry_run);
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

static int write_edit_file(const char *path, const json_t *obj, const char *problem)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		return -1;
	}
	fprintf(f, "# Edit the object below; save and quit to send it, or quit without changes\n"
	           "# to cancel. Lines starting with '#' are ignored.\n");
	if (problem != NULL) {
		fprintf(f, "#\n# The server refused it:\n");
		for (const char *p = problem; *p != '\0';) {
			const char *nl = strchr(p, '\n');
			int len = nl ? (int)(nl - p) : (int)strlen(p);
			fprintf(f, "#   %.*s\n", len, p);
			p += len + (nl != NULL);
		}
	}
	fprintf(f, "#\n");
	rzc_yaml_write(f, obj);
	return fclose(f);
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

int rzc_cmd_edit(rzc_t *c, int argc, char **argv)
{
	const char *name = NULL;
	const rzc_kind_t *k;
	char *path, tmp[] = "/tmp/rezusctl-edit-XXXXXX.yaml", *problem = NULL, *last = NULL;
	json_t *obj = NULL;
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
	path = object_path(c, k, c->tenant, name);
	if ((rc = rzc_json(c, "GET", path, NULL, &obj)) != RZC_OK) {
		free(path);
		return rc;
	}
	json_object_del(obj, "status");
	if ((fd = mkstemps(tmp, 5)) < 0) {
		free(path);
		json_decref(obj);
		return rzc_fail("cannot create a temporary file: %s", strerror(errno));
	}
	close(fd);
	for (;;) {
		FILE *f;
		char *text;
		size_t len;
		json_t *docs = NULL, *edited;
		rz_err_t err = { 0 };
		rzc_resp_t r;
		char *body;
		long code;

		if (write_edit_file(tmp, obj, problem) != 0 || run_editor(tmp) != 0) {
			rc = rzc_fail("the editor failed");
			break;
		}
		if ((f = fopen(tmp, "r")) == NULL || (text = rzc_read_all(f, &len)) == NULL) {
			if (f != NULL) {
				fclose(f);
			}
			rc = rzc_fail("cannot read %s back", tmp);
			break;
		}
		fclose(f);
		if (rz_yaml_load_all(tmp, text, len, &docs, &err) != 0) {
			free(problem);
			problem = strdup(err.msg);
			free(text);
			if (last != NULL && strcmp(last, problem) == 0) {
				rc = rzc_fail("%s", problem);
				break;
			}
			free(last);
			last = strdup(problem);
			continue;
		}
		free(text);
		edited = json_incref(json_array_get(docs, 0));
		json_decref(docs);
		if (edited == NULL || json_equal(edited, obj)) {
			json_decref(edited);
			if (problem != NULL) {
				rc = rzc_fail("edit abandoned: %s", problem);
			} else {
				printf("Edit cancelled, no changes made.\n");
				rc = RZC_OK;
			}
			break;
		}
		body = json_dumps(edited, JSON_COMPACT);
		rc = rzc_request(c, "PUT", path, "application/json", body, strlen(body), &r) < 0
		         ? RZC_ERR
		         : RZC_OK;
		free(body);
		if (rc != RZC_OK) {
			json_decref(edited);
			break;
		}
		if (r.code == 200) {
			printf("%s/%s edited\n", k->singular, name);
			rzc_resp_free(&r);
			json_decref(edited);
			break;
		}
		/* refused: reopen the file with the error above the edited object */
		free(problem);
		problem = refusal(&r);
		code = r.code;
		rzc_resp_free(&r);
		if (code == 409) {
			json_t *fresh = NULL; /* changed meanwhile: take the new resourceVersion */
			if (rzc_json(c, "GET", path, NULL, &fresh) == RZC_OK) {
				json_object_set(json_object_get(edited, "metadata"),
				                "resourceVersion",
				                json_object_get(json_object_get(fresh, "metadata"),
				                                "resourceVersion"));
			}
			json_decref(fresh);
		}
		json_decref(obj);
		obj = edited;
	}
	unlink(tmp);
	free(problem);
	free(last);
	free(path);
	json_decref(obj);
	return rc;
}
