/* cli/apply.c - manifests (files, directories, stdin; YAML or JSON) and the verbs that
 * write them: apply and create, the whole set checked before any of it is written. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/rezusctl.h"
#include "core/base/yaml.h"

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

const char *rzc_manifest_tenant(const rzc_t *c, const json_t *objs)
{
	const char *name = NULL;
	const json_t *o;
	size_t i, n = 0;

	json_array_foreach(objs, i, o)
	{
		const char *kind = json_string_value(json_object_get(o, "kind"));
		if (kind != NULL && strcmp(kind, "Tenant") == 0) {
			name = rzc_meta(o, "name");
			n++;
		}
	}
	return n == 1 && !c->tenant_given ? name : NULL;
}

int rzc_identify(rzc_t *c, json_t *o, const char *set_tenant, const rzc_kind_t **k,
                 const char **tenant, const char **name)
{
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const char *mt = rzc_meta(o, "tenant"), *ns = rzc_meta(o, "namespace");

	*k = rzc_kind_of(kind);
	*name = rzc_meta(o, "name");
	if (*k == NULL) {
		/* the original RezusCloud's kinds, named as they are here (docs/migration.md) */
		const char *here = kind == NULL                   ? NULL
		                   : strcmp(kind, "Cluster") == 0 ? "a Tenant (and its NodeGroups)"
		                   : strcmp(kind, "Patch") == 0   ? "a ConfigPatch"
		                   : strcmp(kind, "MachineSet") == 0 ? "a NodeGroup"
		                                                     : NULL;
		return here != NULL
		           ? rzc_fail("kind \"%s\" is not one rezusctl knows: it is %s here "
		                      "(docs/migration.md)",
		                      kind, here)
		           : rzc_fail("kind \"%s\" is not one rezusctl knows", kind ? kind : "");
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
		*tenant = rzc_meta(o, "tenant");
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

char *rzc_dry_path(char *path, bool dry)
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

void rzc_said(const rzc_kind_t *k, const char *name, const char *what, int dry)
{
	printf("%s/%s %s%s\n", k->singular, name, what,
	       dry == RZC_DRY_SERVER   ? " (server dry run)"
	       : dry == RZC_DRY_CLIENT ? " (dry run)"
	                               : "");
}

/* Create or update one object. dry: RZC_DRY_SERVER only asks the server whether it would
 * (?dryRun=All); RZC_DRY_CLIENT reads what is there and sends no write. say: print what
 * was (or would be) done. */
static int apply_one(rzc_t *c, json_t *o, const char *set_tenant, bool create_only, int dry,
                     bool say)
{
	const rzc_kind_t *k;
	const char *tenant, *name;
	char *coll, *path, *wpath;
	int rc = rzc_identify(c, o, set_tenant, &k, &tenant, &name);
	const char *did = NULL;

	if (rc != RZC_OK) {
		return rc;
	}
	coll = rzc_dry_path(rzc_collection(c, k, tenant, c->user), dry == RZC_DRY_SERVER);
	path = rzc_object_path(c, k, tenant, name);
	wpath = rzc_dry_path(rzc_object_path(c, k, tenant, name), dry == RZC_DRY_SERVER);
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
		rzc_said(k, name, did, dry);
	}
	free(coll);
	free(path);
	free(wpath);
	return rc;
}

/* What the client checks of a document before any is sent: the kind, the name, the tenant
 * (identify), and a spec that is an object where the kind has one. */
static int check_local(rzc_t *c, json_t *o, const char *set_tenant)
{
	const rzc_kind_t *k;
	const char *tenant, *name;
	const json_t *spec = json_object_get(o, "spec");

	if (rzc_identify(c, o, set_tenant, &k, &tenant, &name) != RZC_OK) {
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
	const char *set_tenant = NULL;
	size_t i;
	int rc, worst = RZC_OK, passes;

	if (c->nfiles == 0) {
		json_decref(objs);
		return rzc_usage("%s: give -f FILE, DIR or -", create_only ? "create" : "apply");
	}
	read_sources = json_array();
	rc = rzc_read_manifests(c->files, c->nfiles, objs);
	if (rc == RZC_OK && json_array_size(objs) == 0) {
		/* kubectl too: "error: no objects passed to apply" */
		rc = rzc_fail("no objects passed to %s: %s%s holds no manifest",
		              create_only ? "create" : "apply", c->files[0],
		              c->nfiles > 1 ? " and the rest" : "");
	}
	if (rc == RZC_OK) {
		order(objs, read_sources);
		set_tenant = rzc_manifest_tenant(c, objs);
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
			one = pass == 0 ? check_local(c, o, set_tenant)
			                : apply_one(c, o, set_tenant, create_only, dry,
			                            pass == passes - 1);
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
