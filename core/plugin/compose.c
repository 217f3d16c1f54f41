/* core/plugin/compose.c - a tenant's plugins rendered and merged into its TF working directory. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plugin/compose.h"

#define MAX_PLUGINS 16

/* The blocks of a render that go to <plugin>.tf.json, as TF JSON root keys. */
static const char *const own_blocks[] = { "resource", "data", "provider", "locals", "output" };

/* ------------------------------------------------------------------ which plugins */

static void add_name(const char **names, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp(names[i], name) == 0) {
			return;
		}
	}
	if (*n < MAX_PLUGINS) {
		names[(*n)++] = name;
	}
}

/* Plugin name of a providerClass ("oci:VM.Standard" -> "oci") into buf. */
static const char *class_plugin(const char *cls, char *buf, size_t size)
{
	size_t len = strcspn(cls, ":");

	if (len >= size) {
		len = size - 1;
	}
	memcpy(buf, cls, len);
	buf[len] = '\0';
	return buf;
}

/* The plugins to render and, per plugin, the context it sees (its own node groups). */
static int plan(const json_t *ctx, const char **names, size_t *n, char (*bufs)[64], rz_err_t *err)
{
	const char *cluster = json_string_value(json_object_get(
	    json_object_get(json_object_get(ctx, "tenant"), "spec"), "clusterProvider"));
	size_t i;
	json_t *ng;

	*n = 0;
	if (cluster == NULL) {
		return rz_err_set(err, REZUS_ERENDER,
		                  "compose: the tenant names no clusterProvider");
	}
	add_name(names, n, cluster);
	json_array_foreach(json_object_get(ctx, "nodeGroups"), i, ng)
	{
		const char *cls = json_string_value(
		    json_object_get(json_object_get(ng, "spec"), "providerClass"));
		if (cls != NULL && i < MAX_PLUGINS) {
			add_name(names, n, class_plugin(cls, bufs[i], sizeof(bufs[i])));
		}
	}
	return 0;
}

static json_t *context_for(const json_t *ctx, const char *plugin, json_t *imports,
                           bool exports_only)
{
	json_t *patches = json_object_get(ctx, "configPatches");
	json_t *all = json_object_get(ctx, "nodeGroups");
	json_t *c = json_object();
	size_t i;
	json_t *ng, *mine = json_array();

	json_object_set(c, "tenant", json_object_get(ctx, "tenant"));
	json_object_set_new(c, "nodeGroups", mine);
	json_object_set_new(c, "allNodeGroups", all ? json_incref(all) : json_array());
	json_object_set_new(c, "configPatches", patches ? json_incref(patches) : json_array());
	json_object_set(c, "imports", imports);
	if (exports_only) {
		json_object_set_new(c, "exportsOnly", json_true());
	}
	json_array_foreach(json_object_get(ctx, "nodeGroups"), i, ng)
	{
		const char *cls = json_string_value(
		    json_object_get(json_object_get(ng, "spec"), "providerClass"));
		char buf[64];
		if (cls != NULL && strcmp(class_plugin(cls, buf, sizeof(buf)), plugin) == 0) {
			json_array_append(mine, ng);
		}
	}
	return c;
}

/* ------------------------------------------------------------------ merging */

/* Merge from[*] into into[*]; a name two plugins define differently is an error naming
 * both. owners maps each name to the plugin that brought it. */
static int merge_named(json_t *into, json_t *owners, const json_t *from, const char *plugin,
                       const char *what, rz_err_t *err)
{
	const char *name;
	json_t *v;

	json_object_foreach((json_t *)from, name, v)
	{
		json_t *have = json_object_get(into, name);
		if (have != NULL && !json_equal(have, v)) {
			return rz_err_set(err, REZUS_ERENDER,
			                  "compose: plugins '%s' and '%s' disagree on %s '%s'",
			                  json_string_value(json_object_get(owners, name)), plugin,
			                  what, name);
		}
		json_object_set(into, name, v);
		if (have == NULL) {
			json_object_set_new(owners, name, json_string(plugin));
		}
	}
	return 0;
}

struct merged {
	json_t *providers, *variables, *tfvars;
	json_t *owners_p, *owners_v, *owners_t;
	json_t *files;
	json_t *scope;    /* {plugin: ["<type>.<name>", ...]}: what each plugin rendered */
	json_t *owners_r; /* {"<type>.<name>": plugin} */
};

/* Note the addresses of the plugin's resource blocks in m->scope; an address another
 * plugin rendered too is an error naming both (tofu would refuse the duplicate, and its
 * instances could not be told apart by whose rules project them). */
static int merge_resources(struct merged *m, const char *plugin, const json_t *resources,
                           rz_err_t *err)
{
	json_t *mine = json_array(), *of, *v;
	const char *type, *name;
	int rc = mine != NULL ? 0 : rz_err_set(err, -ENOMEM, "compose: out of memory");

	json_object_foreach((json_t *)resources, type, of)
	{
		json_object_foreach(of, name, v)
		{
			json_t *addr = json_sprintf("%s.%s", type, name);
			const char *had = json_string_value(
			    json_object_get(m->owners_r, json_string_value(addr)));
			if (rc == 0 && addr == NULL) {
				rc = rz_err_set(err, -ENOMEM, "compose: out of memory");
			} else if (rc == 0 && had != NULL) {
				rc = rz_err_set(err, REZUS_ERENDER,
				                "compose: plugins '%s' and '%s' both render %s",
				                had, plugin, json_string_value(addr));
			}
			if (rc == 0) {
				json_object_set_new(m->owners_r, json_string_value(addr),
				                    json_string(plugin));
				json_array_append(mine, addr);
			}
			json_decref(addr);
		}
	}
	json_object_set_new(m->scope, plugin, mine);
	return rc;
}

static int merge_render(struct merged *m, const char *plugin, json_t *out, rz_err_t *err)
{
	json_t *own = json_object();
	char file[96];
	int rc = merge_named(m->providers, m->owners_p, json_object_get(out, "required_providers"),
	                     plugin, "the required provider", err);

	if (rc == 0) {
		rc = merge_named(m->variables, m->owners_v, json_object_get(out, "variables"),
		                 plugin, "the variable", err);
	}
	if (rc == 0) {
		rc = merge_named(m->tfvars, m->owners_t, json_object_get(out, "tfvars"), plugin,
		                 "the value of variable", err);
	}
	if (rc == 0) {
		rc = merge_resources(m, plugin, json_object_get(out, "resource"), err);
	}
	for (size_t i = 0; i < sizeof(own_blocks) / sizeof(own_blocks[0]); i++) {
		json_t *b = json_object_get(out, own_blocks[i]);
		if (b != NULL && json_object_size(b) > 0) {
			json_object_set(own, own_blocks[i], b);
		}
	}
	snprintf(file, sizeof(file), "%s.tf.json", plugin);
	json_object_set_new(m->files, file, own);
	return rc;
}

/* Render every plugin with the given imports; collect exports when exports is not NULL. */
static int render_all(rz_plugins_t *p, const json_t *ctx, const char **names, size_t n,
                      json_t *imports, json_t *exports, struct merged *m, rz_err_t *err)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		json_t *c = context_for(ctx, names[i], imports, exports != NULL);
		json_t *out = NULL;
		const char *key;
		json_t *v;
		rc = rz_plugins_render(p, names[i], c, &out, err);
		json_decref(c);
		if (rc == 0 && exports != NULL) {
			json_object_foreach(json_object_get(out, "exports"), key, v)
			{
				char full[192];
				snprintf(full, sizeof(full), "%s.%s", names[i], key);
				json_object_set(exports, full, v);
			}
		} else if (rc == 0) {
			rc = merge_render(m, names[i], out, err);
		}
		json_decref(out);
	}
	return rc;
}

/* The composition; backend (borrowed, may be NULL) becomes terraform.backend.http; record:
 * whose each resource is, kept for the tenant (a run's composition, not an export's). */
static int compose(rz_plugins_t *p, const json_t *ctx, const json_t *backend, bool record,
                   json_t **files, rz_err_t *err)
{
	const char *names[MAX_PLUGINS];
	char bufs[MAX_PLUGINS][64];
	size_t n;
	json_t *none = json_object(), *exports = json_object();
	struct merged m = { json_object(), json_object(), json_object(),
		            json_object(), json_object(), json_object(),
		            json_object(), json_object(), json_object() };
	const char *tenant = json_string_value(
	    json_object_get(json_object_get(json_object_get(ctx, "tenant"), "metadata"), "name"));
	json_t *terraform;
	int rc = plan(ctx, names, &n, bufs, err);

	*files = NULL;
	if (rc == 0) {
		rc = render_all(p, ctx, names, n, none, exports, &m, err); /* pass 1: exports */
	}
	if (rc == 0) {
		rc = render_all(p, ctx, names, n, exports, NULL, &m, err); /* pass 2: the files */
	}
	if (rc == 0) {
		terraform = json_pack("{s:O}", "required_providers", m.providers);
		if (backend != NULL) {
			json_object_set_new(terraform, "backend",
			                    json_pack("{s:O}", "http", (json_t *)backend));
		}
		json_object_set_new(m.files, "versions.tf.json",
		                    json_pack("{s:o}", "terraform", terraform));
		json_object_set_new(m.files, "variables.tf.json",
		                    json_object_size(m.variables)
		                        ? json_pack("{s:O}", "variable", m.variables)
		                        : json_object());
		json_object_set(m.files, "terraform.tfvars.json", m.tfvars);
	}
	if (rc == 0 && record && tenant != NULL) { /* for the projection after the apply */
		rc = rz_plugins_set_scope(p, tenant, json_incref(m.scope), err);
	}
	if (rc == 0) {
		*files = json_incref(m.files);
	}
	json_decref(none);
	json_decref(exports);
	json_decref(m.providers);
	json_decref(m.variables);
	json_decref(m.tfvars);
	json_decref(m.owners_p);
	json_decref(m.owners_v);
	json_decref(m.owners_t);
	json_decref(m.files);
	json_decref(m.scope);
	json_decref(m.owners_r);
	return rc;
}

int rz_compose(rz_plugins_t *p, const json_t *ctx, const json_t *backend, json_t **files,
               rz_err_t *err)
{
	return compose(p, ctx, backend, true, files, err);
}

int rz_compose_detached(rz_plugins_t *p, const json_t *ctx, json_t **files, rz_err_t *err)
{
	return compose(p, ctx, NULL, false, files, err);
}

int rz_compose_set_backend(json_t *files, const char *type, const json_t *config, rz_err_t *err)
{
	json_t *terraform =
	    json_object_get(json_object_get(files, "versions.tf.json"), "terraform");
	json_t *backend = json_object();

	if (!json_is_object(terraform) || backend == NULL || type == NULL || type[0] == '\0') {
		json_decref(backend);
		return rz_err_set(err, REZUS_EINVALID,
		                  "compose: no versions.tf.json with a terraform block, or no "
		                  "backend type");
	}
	if (json_object_set_new(backend, type,
	                        config != NULL ? json_deep_copy(config) : json_object()) != 0 ||
	    json_object_set_new(terraform, "backend", backend) != 0) {
		return rz_err_set(err, -ENOMEM, "compose: out of memory");
	}
	return 0;
}

/* ------------------------------------------------------------------ writing */

static int write_atomic(const char *dir, const char *name, const json_t *v, mode_t mode,
                        rz_err_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	char *text = json_dumps(v, JSON_SORT_KEYS | JSON_INDENT(2));
	size_t len = text ? strlen(text) : 0;
	int fd = -1, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	if (text == NULL) {
		return rz_err_set(err, -ENOMEM, "compose: out of memory");
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || fchmod(fd, mode) < 0 || write(fd, text, len) != (ssize_t)len ||
	    write(fd, "\n", 1) != 1 || fsync(fd) < 0 || close(fd) < 0) {
		rc =
		    rz_err_set(err, -errno, "compose: cannot write '%s': %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		unlink(tmp);
	} else if (rename(tmp, path) < 0) {
		rc = rz_err_set(err, -errno, "compose: cannot rename to '%s': %s", path,
		                strerror(errno));
		unlink(tmp);
	}
	free(text);
	return rc;
}

/* *.tf.json files that this composition no longer has (a plugin that owns no node group
 * any more) would still be read by tofu: remove them. */
static void remove_stale(const json_t *files, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len > 8 && strcmp(e->d_name + len - 8, ".tf.json") == 0 &&
		    json_object_get(files, e->d_name) == NULL) {
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	if (d != NULL) {
		closedir(d);
	}
}

int rz_compose_write(const json_t *files, const char *dir, rz_err_t *err)
{
	const char *name;
	json_t *v;
	int rc = 0;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		return rz_err_set(err, -errno, "compose: cannot create '%s': %s", dir,
		                  strerror(errno));
	}
	json_object_foreach((json_t *)files, name, v)
	{
		if (rc == 0) { /* 0600 all: a working directory is the daemon's alone */
			rc = write_atomic(dir, name, v, 0600, err);
		}
	}
	if (rc == 0) {
		remove_stale(files, dir);
	}
	return rc;
}
