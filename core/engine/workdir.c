/* core/engine/workdir.c - a tenant's working directory: composed for a run, and guarded. */
#include <config.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "core/engine/engine-int.h"
#include "core/plugin/compose.h"
#include "core/report/report.h"
#include "core/store/events.h"

void rz__engine_tenant_dir(const rz_engine_t *e, const char *tenant, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", e->o.workdir, tenant);
}

/* Resources the composed files declare. */
static size_t rendered_resources(const json_t *files)
{
	const char *name;
	json_t *doc, *types, *of;
	const char *type;
	size_t n = 0;

	json_object_foreach((json_t *)files, name, doc)
	{
		types = json_object_get(doc, "resource");
		json_object_foreach(types, type, of)
		{
			n += json_object_size(of);
		}
	}
	return n;
}

/* A render with no resources for a tenant whose state holds some is refused: a broken
 * plugin or a typo must never plan the whole cluster away. */
static int guard_empty(struct run *r, const json_t *files, rz_err_t *err)
{
	json_t *state = NULL;
	size_t held = 0;
	rz_err_t ignored = { 0 };

	if (rendered_resources(files) > 0 ||
	    rz_tfstate_get(r->e->tfstate, r->t->name, &state, &ignored) != 0) {
		return 0;
	}
	held = json_array_size(json_object_get(state, "resources"));
	json_decref(state);
	if (held == 0) {
		return 0;
	}
	return rz_err_set(err, RZ_ECONFLICT,
	                  "the render has no resources but the tenant's state holds %zu: refusing "
	                  "to plan them all away (check the tenant's clusterProvider and its node "
	                  "groups' providerClass; delete the tenant to destroy it)",
	                  held);
}

/* A destroy needs every plugin the tenant's resources came from: its cluster plugin and
 * each node group's. One that is not loaded blocks it, saying so (the state is kept). */
static int destroy_blocked(struct run *r, const json_t *tenant, const json_t *groups, rz_err_t *err)
{
	const char *need =
	    json_string_value(json_object_get(json_object_get(tenant, "spec"), "clusterProvider"));
	char name[64];
	json_t *g;
	size_t i = 0;

	for (;;) {
		if (need != NULL) {
			size_t len = strcspn(need, ":");
			snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), need);
			if (rz_plugins_find(r->e->plugins, name) == NULL) {
				return rz_err_set(
				    err, RZ_ECONFLICT,
				    "cannot destroy: plugin '%s' is not loaded (list it under "
				    "plugins: in rezus.conf); the tenant and its resources "
				    "stay until it is",
				    name);
			}
		}
		if ((g = json_array_get(groups, i++)) == NULL) {
			return 0;
		}
		need =
		    json_string_value(json_object_get(json_object_get(g, "spec"), "providerClass"));
	}
}

#define MAX_STATE_CA (64 * 1024) /* bytes of server.tls.cert_file handed to tofu */

/* An https backend: the daemon's certificate (and chain) as the backend's CA
 * (client_ca_certificate_pem), read now so that a reloaded certificate is the one given. */
static int backend_ca(rz_engine_t *e, json_t *backend, rz_err_t *err)
{
	char *pem;
	FILE *f;
	size_t n;
	int rc = 0;

	if (e->o.state_ca_file == NULL) {
		return 0;
	}
	pem = malloc(MAX_STATE_CA + 1);
	f = fopen(e->o.state_ca_file, "r");
	if (pem == NULL || f == NULL) {
		int errnum = f == NULL ? errno : ENOMEM;
		free(pem);
		if (f != NULL) {
			fclose(f);
		}
		return rz_err_set(err, -errnum,
		                  "engine: reading the TLS certificate '%s' failed: %s",
		                  e->o.state_ca_file, strerror(errnum));
	}
	n = fread(pem, 1, MAX_STATE_CA + 1, f);
	fclose(f);
	if (n == 0 || n > MAX_STATE_CA) {
		rc = rz_err_set(err, REZUS_ECONFIG,
		                "engine: the TLS certificate '%s' is empty or over %d bytes",
		                e->o.state_ca_file, MAX_STATE_CA);
	} else {
		pem[n] = '\0';
		json_object_set_new(backend, "client_ca_certificate_pem", json_string(pem));
	}
	free(pem);
	return rc;
}

/* The labels the run's runner needs: the tenant's runnerSelector and every node group's
 * (rz_kind_runner_selector). Selectors no runner can match fail the run before any job is
 * published, with a Warning Event on the tenant naming the node groups and the key. */
static int run_selector(struct run *r, const json_t *tenant, const json_t *groups, rz_err_t *err)
{
	json_t *sel = NULL;
	int rc = rz_kind_runner_selector(tenant, groups, &sel, err);

	if (rc != 0) {
		rz_events_record(r->e->store, r->t->name, "Tenant", r->t->name, "Warning",
		                 "RunnerSelectorConflict", err->msg, "engine");
		return rc;
	}
	json_decref(r->selector);
	r->selector = json_object_size(sel) > 0 ? sel : NULL;
	if (r->selector == NULL) {
		json_decref(sel);
	}
	return 0;
}

/* Compose the tenant from the store into its directory, with the http backend. */
int rz__engine_render(struct run *r, const json_t *tenant, rz_err_t *err)
{
	rz_engine_t *e = r->e;
	char url[512], dir[PATH_MAX];
	json_t *ctx =
	    json_pack("{s:O, s:o, s:o}", "tenant", (json_t *)tenant, "nodeGroups",
	              rz_store_list_all(e->store, "NodeGroup", r->t->name), "configPatches",
	              rz_store_list_all(e->store, "ConfigPatch", r->t->name));
	json_t *backend, *files = NULL;
	int rc;

	/* a remote run's tofu reaches the daemon at runners.public_url */
	snprintf(url, sizeof(url), "%s/tfstate/%s",
	         r->remote && e->o.public_url != NULL && e->o.public_url[0] != '\0'
	             ? e->o.public_url
	             : e->o.state_url,
	         r->t->name);
	backend = json_pack("{s:s, s:s, s:s, s:s}", "address", url, "lock_address", url,
	                    "unlock_address", url, "username", "rezus");
	if ((rc = backend_ca(e, backend, err)) != 0) {
		json_decref(backend);
		json_decref(ctx);
		return rc;
	}
	mkdir(e->o.workdir, 0700);
	rz__engine_tenant_dir(e, r->t->name, dir, sizeof(dir));
	if (r->deleting &&
	    (rc = destroy_blocked(r, tenant, json_object_get(ctx, "nodeGroups"), err)) != 0) {
		rz_events_record(e->store, r->t->name, "Tenant", r->t->name, "Warning",
		                 "DestroyBlocked", err->msg, "engine");
		json_decref(backend);
		json_decref(ctx);
		return rc;
	}
	if (r->remote &&
	    (rc = run_selector(r, tenant, json_object_get(ctx, "nodeGroups"), err)) != 0) {
		json_decref(backend);
		json_decref(ctx);
		return rc;
	}
	rz_report_inputs(json_object_get(ctx, "nodeGroups"), json_object_get(ctx, "configPatches"),
	                 r->inputs);
	rc = rz_compose(e->plugins, ctx, backend, &files, err);
	if (rc == 0 && !r->deleting) {
		rc = guard_empty(r, files, err);
	}
	if (rc == 0) {
		rc = rz_compose_write(files, dir, err);
	}
	json_decref(files);
	json_decref(backend);
	json_decref(ctx);
	return rc;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path); /* best effort: go on with the rest */
	return 0;
}

/* A tenant's working directory and run logs, gone with it. */
void rz__engine_remove_workdir(rz_engine_t *e, const char *tenant)
{
	char dir[PATH_MAX];

	rz__engine_tenant_dir(e, tenant, dir, sizeof(dir));
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
