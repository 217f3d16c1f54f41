/* core/engine/export.c - a way out: a tenant's configuration, state and credentials as a
 * directory plain tofu carries on with (GET /api/v1/tenants/{tenant}/export). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "core/auth/access.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/version.h"
#include "core/engine/engine-int.h"
#include "core/plugin/compose.h"

#define MAX_LOCK_FILE (1024 * 1024) /* bytes of .terraform.lock.hcl taken along */

/* The backends an export may name (?backend=): TF's own, as tofu and terraform know them.
 * local gets its path; every other an empty block, a partial configuration that
 * `tofu init -backend-config=...` completes, so no setting of ours is guessed. */
static const char *const backends[] = { "local",  "s3",         "gcs", "azurerm", "http",   "pg",
	                                "consul", "kubernetes", "oss", "cos",     "remote", NULL };

static const rz_route_param_t export_query[] = {
	{ "backend", "string",
	  "the backend the configuration names: local (the default; its state is "
	  "terraform.tfstate beside it), or s3, gcs, azurerm, http, pg, consul, kubernetes, oss, "
	  "cos, remote as an empty block that tofu init -backend-config completes" },
	{ NULL, NULL, NULL },
};
static const int export_errors[] = { 404, 409, 422, 0 };
static const rz_route_doc_t export_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "exportTenant",
	  .summary =
	      "the tenant's configuration (stock .tf.json with another backend), its current "
	      "state, kubeconfig, talosconfig and a README, for plain tofu to carry on with "
	      "(edit role; audited; holds secrets)",
	  .query = export_query,
	  .response =
	      "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\","
	      "\"description\":\"rezuscloud.io/v1\"},\"kind\":{\"type\":\"string\","
	      "\"description\":\"TenantExport\"},\"tenant\":{\"type\":\"string\","
	      "\"description\":\"The tenant\"},\"backend\":{\"type\":\"string\","
	      "\"description\":\"The backend the configuration names\"},"
	      "\"reconciled\":{\"type\":\"boolean\",\"description\":\"Whether the state is the "
	      "tenant's spec applied (its Reconciled condition): if not, tofu plan shows what "
	      "is left to do\"},\"files\":{\"type\":\"object\","
	      "\"additionalProperties\":{\"type\":\"string\"},\"description\":\"The directory's "
	      "files by name, each its whole text: versions.tf.json, variables.tf.json, "
	      "terraform.tfvars.json, one <plugin>.tf.json per plugin, terraform.tfstate, "
	      "kubeconfig and talosconfig when the state has them, .terraform.lock.hcl when a "
	      "run left one, README.md\"}}}",
	  .errors = export_errors },
	{ 0 },
};

static void h_export(rz_req_t *req, void *ctx);

static const rz_route_t export_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/tenants/{tenant}/export",
	  .fn = h_export,
	  .role = RZ_ROLE_EDIT, /* it carries the state and the credentials */
	  .kind = "Tenant",
	  .verb = "export",
	  .audit = true,
	  .doc = export_doc },
};

int rz__engine_export_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(export_routes), e, err);
}

/* ------------------------------------------------------------------ the files */

/* One JSON file as rz_compose_write writes it: sorted keys, two-space indents, a newline. */
static int add_json(json_t *files, const char *name, const json_t *v, size_t flags)
{
	char *text = json_dumps(v, flags | JSON_INDENT(2));
	json_t *s;
	int rc = -1;

	if (text != NULL && (s = json_sprintf("%s\n", text)) != NULL) {
		rc = json_object_set_new(files, name, s);
	}
	if (text != NULL) {
		sodium_memzero(text, strlen(text)); /* a state's secrets */
	}
	free(text);
	return rc;
}

/* A kept output (kubeconfig, talosconfig) as the file of that name; none is no file. */
static int add_output(rz_engine_t *e, const char *tenant, const char *name, json_t *files,
                      rz_err_t *err)
{
	char *value = NULL;
	size_t len = 0;
	int rc = rz_tfstate_output(e->tfstate, tenant, name, &value, &len, err);

	if (rc == RZ_ENOTFOUND) {
		return 0;
	}
	if (rc == 0 && json_object_set_new(files, name, json_stringn(value, len)) != 0) {
		rc = rz_err_set(err, -ENOMEM, "export: out of memory");
	}
	if (value != NULL) {
		sodium_memzero(value, len);
	}
	free(value);
	return rc;
}

/* The provider lock file the tenant's last init wrote, when there is one: the same
 * provider builds, checked by their hashes, for the tofu init that follows. */
static void add_lock_file(rz_engine_t *e, const char *tenant, json_t *files)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], *buf = NULL;
	int fd;
	ssize_t n;

	rz__engine_tenant_dir(e, tenant, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/.terraform.lock.hcl", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		return;
	}
	if ((buf = malloc(MAX_LOCK_FILE + 1)) != NULL &&
	    (n = read(fd, buf, MAX_LOCK_FILE + 1)) > 0 && n <= MAX_LOCK_FILE) {
		json_object_set_new(files, ".terraform.lock.hcl", json_stringn(buf, (size_t)n));
	}
	free(buf);
	close(fd);
}

/* ------------------------------------------------------------------ the README */

static void readme_providers(FILE *f, const json_t *files)
{
	const json_t *req = json_object_get(
	    json_object_get(json_object_get(files, "versions.tf.json"), "terraform"),
	    "required_providers");
	const char *name;
	json_t *p;

	if (json_object_size(req) == 0) {
		fprintf(f, "It needs no provider to download: everything in it is built into tofu\n"
		           "(`terraform_data`), so `tofu init` works offline.\n");
		return;
	}
	fprintf(f, "It needs these providers, which `tofu init` downloads from the registry (or "
	           "takes\nfrom your plugin cache or mirror)");
	fprintf(f, json_object_get(files, ".terraform.lock.hcl") != NULL
	               ? ", checked against `.terraform.lock.hcl`,\nthe builds RezusCloud ran:\n\n"
	               : ":\n\n");
	json_object_foreach((json_t *)req, name, p)
	{
		fprintf(f, "- `%s`: `%s` %s\n", name,
		        json_string_value(json_object_get(p, "source")) ?: name,
		        json_string_value(json_object_get(p, "version")) ?: "(any version)");
	}
	fprintf(f, "\nTheir credentials are not in these files: the providers read them from the\n"
	           "environment (`OCI_*`, `OS_*`, ...), as they did when RezusCloud ran tofu.\n");
}

static void readme_backend(FILE *f, const char *backend)
{
	if (strcmp(backend, "local") == 0) {
		fprintf(f, "The backend is `local`: the state is `terraform.tfstate`, here. Keep a "
		           "copy;\nto move it elsewhere, change the `backend` block in "
		           "`versions.tf.json` and\nrun `tofu init -migrate-state`.\n");
		return;
	}
	fprintf(f,
	        "The backend is `%s`, with no settings: give them to `tofu init`, then push the\n"
	        "state this directory holds into it:\n\n"
	        "    tofu init -backend-config=backend.hcl    # bucket, key, ... of your %s\n"
	        "    tofu state push terraform.tfstate\n",
	        backend, backend);
}

/* README.md: what the directory holds, how to carry on with tofu, what RezusCloud does
 * now. No secret goes in it. */
static int add_readme(json_t *files, const char *tenant, const char *backend, bool reconciled,
                      const char *who)
{
	char now[40], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (f == NULL) {
		return -1;
	}
	rz_time_now(now, sizeof(now));
	fprintf(
	    f,
	    "# Tenant %s, exported from RezusCloud\n\n"
	    "Exported %s by %s from RezusCloud %s. This directory holds the tenant's\n"
	    "OpenTofu configuration as RezusCloud generated it (stock `.tf.json`), its current\n"
	    "state and its cluster's credentials.\n\n"
	    "**It holds secrets.** `terraform.tfstate`, `terraform.tfvars.json`, `kubeconfig` "
	    "and\n`talosconfig` carry the cluster's keys and tokens in clear. Keep the "
	    "directory\nprivate (it was written 0700, its files 0600) and out of version "
	    "control.\n\n",
	    tenant, now, who, rz_version());
	fprintf(f, "## Carry on with plain tofu\n\n"
	           "    tofu init\n"
	           "    tofu plan     # No changes: the configuration matches the state\n\n");
	if (!reconciled) {
		fprintf(f,
		        "The tenant was not reconciled when it was exported (a change not yet "
		        "applied,\na failed run or one awaiting approval): `tofu plan` shows what "
		        "is left to do.\n\n");
	}
	readme_providers(f, files);
	fprintf(f, "\n");
	readme_backend(f, backend);
	fprintf(
	    f,
	    "\n`terraform` reads the same files (`terraform init`, `terraform plan`).\n\n"
	    "The cluster: `kubectl --kubeconfig kubeconfig get nodes`, `talosctl --talosconfig\n"
	    "talosconfig ...` (when the state had them, the files are here).\n\n"
	    "## RezusCloud no longer manages it\n\n"
	    "Nothing you do here reaches RezusCloud, and RezusCloud does not see this copy.\n"
	    "Until the tenant is removed there, RezusCloud still reconciles it from its own\n"
	    "copy of the state (changes, periodic resyncs): two copies of one state must not\n"
	    "both change the machines. Remove it from RezusCloud first.\n\n"
	    "Deleting the tenant in RezusCloud runs `tofu destroy` first (its finalizer\n"
	    "`rezuscloud.io/teardown`): that destroys the machines. To remove the tenant\n"
	    "without destroying anything, remove the finalizer, then delete it (edit role):\n\n"
	    "    rezusctl edit tenant %s     # delete the lines `finalizers:` and\n"
	    "                                #   `- rezuscloud.io/teardown`\n"
	    "    rezusctl delete tenant %s   # \"deleted\": at once, with no run\n\n"
	    "or, with kubectl pointed at RezusCloud, `kubectl patch tenant %s --type merge\n"
	    "-p '{\"metadata\":{\"finalizers\":null}}'` before the delete. The tenant's node\n"
	    "groups, machines, runs and state versions in RezusCloud go with it. Check first\n"
	    "with `rezusctl runs %s` that no run is under way, and export again if one\n"
	    "finished after this export.\n",
	    tenant, tenant, tenant, tenant);
	rc = fclose(f);
	if (rc == 0 && text != NULL) {
		rc = json_object_set_new(files, "README.md", json_stringn(text, len));
	}
	free(text);
	return rc == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ the route */

/* ?backend=: a name of the table, or a 422 naming the field. */
static const char *backend_of(rz_req_t *req)
{
	const char *b = rz_req_query(req, "backend");
	json_t *st;

	if (b == NULL || b[0] == '\0') {
		return "local";
	}
	for (const char *const *n = backends; *n != NULL; n++) {
		if (strcmp(*n, b) == 0) {
			return *n;
		}
	}
	st = rz_status_new(422, NULL, "backend: Unsupported value");
	rz_status_add_cause(st, "backend", "FieldValueNotSupported",
	                    "supported values: local, s3, gcs, azurerm, http, pg, consul, "
	                    "kubernetes, oss, cos, remote");
	rz_reply_status(req, st);
	return NULL;
}

/* Whether the tenant's spec is what its state holds: its Reconciled condition. */
static bool reconciled(const json_t *tenant)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(json_object_get(tenant, "status"), "conditions"), i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));
		if (type != NULL && strcmp(type, "Reconciled") == 0) {
			const char *s = json_string_value(json_object_get(c, "status"));
			return s != NULL && strcmp(s, "True") == 0;
		}
	}
	return false;
}

/* The configuration with the backend asked for, the state, the credentials, the lock file
 * and the README, into files. Errors are 409s: the tenant cannot be exported as it is. */
static int export_files(rz_engine_t *e, const json_t *tenant, const char *name, const char *backend,
                        json_t *files, rz_err_t *err)
{
	json_t *ctx = json_pack("{s:O, s:o, s:o}", "tenant", (json_t *)tenant, "nodeGroups",
	                        rz_store_list_all(e->store, "NodeGroup", name), "configPatches",
	                        rz_store_list_all(e->store, "ConfigPatch", name));
	json_t *config = NULL, *state = NULL, *local = NULL;
	const char *file;
	json_t *v;
	int rc = rz_tfstate_get(e->tfstate, name, &state, err);

	if (rc == RZ_ENOTFOUND) {
		rc = rz_err_set(err, RZ_ECONFLICT,
		                "tenant \"%s\" has no state yet: it is written by the first "
		                "successful apply",
		                name);
	}
	if (rc == 0) { /* the engine's own composition, but recording nothing */
		rc = rz_compose_detached(e->plugins, ctx, &config, err);
	}
	if (rc == 0) {
		local = strcmp(backend, "local") == 0
		            ? json_pack("{s:s}", "path", "terraform.tfstate")
		            : NULL;
		rc = rz_compose_set_backend(config, backend, local, err);
	}
	json_object_foreach(rc == 0 ? config : NULL, file, v)
	{
		if (add_json(files, file, v, JSON_SORT_KEYS) != 0) {
			rc = rz_err_set(err, -ENOMEM, "export: out of memory");
			break;
		}
	}
	if (rc == 0 && add_json(files, "terraform.tfstate", state, JSON_PRESERVE_ORDER) != 0) {
		rc = rz_err_set(err, -ENOMEM, "export: out of memory");
	}
	if (rc == 0) {
		rc = add_output(e, name, "kubeconfig", files, err);
	}
	if (rc == 0) {
		rc = add_output(e, name, "talosconfig", files, err);
	}
	if (rc == 0) {
		add_lock_file(e, name, files);
	}
	json_decref(local);
	json_decref(config);
	json_decref(state);
	json_decref(ctx);
	return rc;
}

/* The document as text, wiped once sent: it holds the state. */
static void reply_secret(rz_req_t *req, json_t *doc)
{
	const char *pretty = rz_req_query(req, "pretty");
	char *text = json_dumps(doc, pretty != NULL && strcmp(pretty, "true") == 0 ? JSON_INDENT(2)
	                                                                           : JSON_COMPACT);

	if (text == NULL) {
		rz_reply_error(req, 500, NULL, "export: out of memory");
		return;
	}
	rz_req_add_header(req, "Cache-Control", "no-store");
	rz_reply(req, 200, "application/json", text, strlen(text));
	sodium_memzero(text, strlen(text));
	free(text);
}

static void h_export(rz_req_t *req, void *ctx)
{
	rz_engine_t *e = ctx;
	const char *name = rz_req_param(req, "tenant"), *backend;
	const rz_principal_t *who = rz_access_principal(req);
	struct tenant *t = rz__engine_tenant_of(e, name, false);
	json_t *tenant = NULL, *files = NULL;
	rz_err_t err = { 0 };
	int rc;

	if ((backend = backend_of(req)) == NULL) {
		return; /* answered: req is gone */
	}
	if (rz_store_get(e->store, e->k_tenant, NULL, name, &tenant, &err) != 0) {
		rz_reply_error(req, 404, NULL, "tenants \"%s\" not found", name);
		return;
	}
	if (t != NULL && t->run != NULL && !t->run->awaiting && t->run->op != RZ_OP_PLAN) {
		/* its state may change under the copy: the copy would not be the state */
		rz_reply_error(req, 409, NULL,
		               "run \"%s\" of tenant \"%s\" is under way: export once it ends",
		               t->run->name, name);
		json_decref(tenant);
		return;
	}
	files = json_object();
	rc = export_files(e, tenant, name, backend, files, &err);
	if (rc == 0 &&
	    add_readme(files, name, backend, reconciled(tenant), who ? who->user : "?") != 0) {
		rc = rz_err_set(&err, -ENOMEM, "export: out of memory");
	}
	if (rc == 0) {
		json_t *doc =
		    json_pack("{s:s, s:s, s:s, s:s, s:b, s:O}", "apiVersion", "rezuscloud.io/v1",
		              "kind", "TenantExport", "tenant", name, "backend", backend,
		              "reconciled", reconciled(tenant), "files", files);
		rz_logkv(RZ_LOG_NOTICE, "engine", "tenant exported", "tenant", name, "backend",
		         backend, "by", who ? who->user : "", NULL);
		reply_secret(req, doc);
		json_decref(doc);
	} else if (rc == RZ_ECONFLICT || rc == REZUS_ERENDER) {
		rz_reply_error(req, 409, NULL, "%s", err.msg); /* no state yet; a plugin missing */
	} else {
		rz_logkv(RZ_LOG_ERR, "engine", "export failed", "tenant", name, "error", err.msg,
		         NULL);
		rz_reply_error(req, 500, NULL, "export of tenant \"%s\" failed: %s", name, err.msg);
	}
	json_decref(files);
	json_decref(tenant);
}
