/* cli/conf.c - the config file: contexts (server, user, token, tenant, TLS), YAML, 0600. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/rezusctl.h"
#include "core/base/yaml.h"

#define DEFAULT_SERVER "http://127.0.0.1:8080"

const char *rzc_config_default_path(void)
{
	static char path[4096];
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg != NULL && xdg[0] == '/') {
		snprintf(path, sizeof(path), "%s/rezus/config", xdg);
	} else {
		snprintf(path, sizeof(path), "%s/.config/rezus/config", home ? home : ".");
	}
	return path;
}

char *rzc_read_all(FILE *f, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	do {
		char *p = realloc(buf, cap + 65536 + 1);
		if (p == NULL) {
			free(buf);
			return NULL;
		}
		buf = p;
		cap += 65536;
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0 && *len == cap);
	buf[*len] = '\0';
	return buf;
}

int rzc_config_load(rzc_t *c)
{
	FILE *f;
	char *text;
	size_t len;
	json_t *docs = NULL;
	rz_err_t err = { 0 };

	c->config = json_object();
	if ((f = fopen(c->config_path, "r")) == NULL) {
		return errno == ENOENT
		           ? RZC_OK
		           : rzc_fail("cannot read %s: %s", c->config_path, strerror(errno));
	}
	text = rzc_read_all(f, &len);
	fclose(f);
	if (text == NULL) {
		return rzc_fail("out of memory");
	}
	if (rz_yaml_load_all(c->config_path, text, len, &docs, &err) != 0) {
		free(text);
		return rzc_fail("%s", err.msg);
	}
	free(text);
	if (json_is_object(json_array_get(docs, 0))) {
		json_decref(c->config);
		c->config = json_incref(json_array_get(docs, 0));
	}
	json_decref(docs);
	return RZC_OK;
}

/* mkdir -p of the file's directory, 0700 for what it creates. */
static void make_dirs(const char *path)
{
	char *dir = strdup(path), *slash;

	if (dir == NULL) {
		return;
	}
	for (slash = strchr(dir + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0700);
		*slash = '/';
	}
	free(dir);
}

int rzc_save_yaml(const char *path, const json_t *v)
{
	char *tmp = NULL;
	int fd;
	FILE *f;
	int rc = RZC_OK;

	make_dirs(path);
	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		return rzc_fail("out of memory");
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		rc = rzc_fail("cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		free(tmp);
		return rc;
	}
	fchmod(fd, 0600);
	if (rzc_yaml_write(f, v) != 0 || fflush(f) != 0 || fsync(fd) != 0) {
		rc = rzc_fail("cannot write %s: %s", tmp, strerror(errno));
	}
	fclose(f);
	if (rc == RZC_OK && rename(tmp, path) != 0) {
		rc = rzc_fail("cannot write %s: %s", path, strerror(errno));
	}
	if (rc != RZC_OK) {
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

int rzc_config_save(rzc_t *c)
{
	return rzc_save_yaml(c->config_path, c->config);
}

json_t *rzc_context(rzc_t *c, const char *name)
{
	json_t *list = json_object_get(c->config, "contexts"), *ctx;
	size_t i;

	if (name == NULL) {
		name = json_string_value(json_object_get(c->config, "current-context"));
	}
	json_array_foreach(list, i, ctx)
	{
		const char *n = json_string_value(json_object_get(ctx, "name"));
		if (name != NULL && n != NULL && strcmp(n, name) == 0) {
			return ctx;
		}
	}
	return NULL;
}

static void pick(char **field, const char *flag, const char *env, const json_t *ctx,
                 const char *key, const char *def)
{
	const char *v = flag;

	if (v == NULL && env != NULL) {
		v = getenv(env);
		v = v && v[0] ? v : NULL;
	}
	if (v == NULL) {
		v = json_string_value(json_object_get(ctx, key));
		v = v && v[0] ? v : NULL;
	}
	if (v == NULL) {
		v = def;
	}
	{
		char *copy = v ? strdup(v) : NULL; /* v may be *field itself */
		free(*field);
		*field = copy;
	}
}

void rzc_resolve(rzc_t *c)
{
	json_t *ctx = rzc_context(c, c->context);
	size_t n;

	pick(&c->server, c->server, "REZUSCLOUD_SERVER", ctx, "server", DEFAULT_SERVER);
	pick(&c->token, c->token, "REZUSCLOUD_TOKEN", ctx, "token", NULL);
	pick(&c->tenant, c->tenant, NULL, ctx, "tenant", NULL);
	pick(&c->user, c->user, NULL, ctx, "user", NULL);
	pick(&c->ca_file, c->ca_file, NULL, ctx, "certificate-authority", NULL);
	c->insecure = c->insecure || json_is_true(json_object_get(ctx, "insecure-skip-tls-verify"));
	n = strlen(c->server);
	while (n > 0 && c->server[n - 1] == '/') {
		c->server[--n] = '\0';
	}
}
