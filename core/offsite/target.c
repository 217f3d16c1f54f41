/* core/offsite/target.c - targets opened from their settings, and each call handed to the
 * local directory (local.c) or the S3 bucket (s3.c). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/offsite/offsite-int.h"

static int open_local(rz_target_t *t, const json_t *conf, rz_err_t *err)
{
	const char *k, *dir;
	size_t len;
	json_t *v;

	json_object_foreach((json_t *)conf, k, v)
	{
		if (strcmp(k, "type") != 0 && strcmp(k, "dir") != 0) {
			return rz_err_set(
			    err, REZUS_ECONFIG,
			    "target: '%.64s' is not a setting of a local target (type, "
			    "dir)",
			    k);
		}
	}
	dir = json_string_value(json_object_get(conf, "dir"));
	if (dir == NULL || dir[0] != '/') {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: 'dir' must be an absolute path (a local target's "
		                  "directory)");
	}
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/') {
		len--;
	}
	/* room for a key and a temporary's name below it */
	if (len + RZ_TARGET_KEY_MAX + 32 >= sizeof(t->dir)) {
		return rz_err_set(err, REZUS_ECONFIG, "target: 'dir' is too long");
	}
	snprintf(t->dir, sizeof(t->dir), "%.*s", (int)len, dir);
	snprintf(t->where, sizeof(t->where), "file://%s", t->dir);
	return 0;
}

int rz_target_open(rz_target_t **out, const json_t *conf, rz_err_t *err)
{
	rz_target_t *t;
	const char *type;
	int rc;

	*out = NULL;
	if (!json_is_object(conf)) {
		return rz_err_set(err, REZUS_ECONFIG, "target: the settings must be an object");
	}
	type = json_string_value(json_object_get(conf, "type"));
	if (type == NULL || (strcmp(type, "local") != 0 && strcmp(type, "s3") != 0)) {
		return rz_err_set(err, REZUS_ECONFIG, "target: 'type' must be \"local\" or \"s3\"");
	}
	if (sodium_init() < 0 || (t = calloc(1, sizeof(*t))) == NULL) {
		return rz_err_set(err, -ENOMEM, "target: out of memory");
	}
	t->magic = RZ__TARGET_MAGIC;
	if (strcmp(type, "local") == 0) {
		rc = open_local(t, conf, err);
	} else {
		t->s3 = true;
		t->conf = sodium_malloc(sizeof(*t->conf)); /* holds the secret key */
		rc = t->conf == NULL ? rz_err_set(err, -ENOMEM, "target: out of memory")
		                     : rz__s3_conf(t->conf, conf, err);
		if (rc == 0) {
			snprintf(t->where, sizeof(t->where), "s3://%s/%s", t->conf->bucket,
			         t->conf->prefix);
		}
	}
	if (rc < 0) {
		rz_target_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void rz_target_free(rz_target_t *t)
{
	if (t == NULL) {
		return;
	}
	if (t->conf != NULL) {
		rz__s3_wipe(t->conf);
		sodium_free(t->conf);
	}
	t->magic = 0;
	free(t);
}

const char *rz_target_where(const rz_target_t *t)
{
	return t->where;
}

static int check(const rz_target_t *t, const char *key, bool prefix, rz_err_t *err)
{
	if (t == NULL || t->magic != RZ__TARGET_MAGIC) {
		return rz_err_set(err, REZUS_EINTERNAL, "target: not a target");
	}
	if (key == NULL) {
		return rz_err_set(err, REZUS_EINVALID, "target: no %s", prefix ? "prefix" : "key");
	}
	return rz__offsite_check_key(key, prefix, err);
}

int rz_target_put(rz_target_t *t, const char *key, const char *path, rz_err_t *err)
{
	int rc = check(t, key, false, err);

	if (rc < 0) {
		return rc;
	}
	return t->s3 ? rz__s3_put(t->conf, key, path, err) : rz__local_put(t, key, path, err);
}

int rz_target_get(rz_target_t *t, const char *key, const char *path, rz_err_t *err)
{
	int rc = check(t, key, false, err);

	if (rc < 0) {
		return rc;
	}
	return t->s3 ? rz__s3_get(t->conf, key, path, err) : rz__local_get(t, key, path, err);
}

static int by_key(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;

	return strcmp(json_string_value(json_object_get(x, "key")),
	              json_string_value(json_object_get(y, "key")));
}

/* items sorted by key, in place (a local directory is read in no order). */
static int sort_items(json_t *items)
{
	size_t n = json_array_size(items);
	json_t **v = malloc((n > 0 ? n : 1) * sizeof(*v));

	if (v == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = json_incref(json_array_get(items, i));
	}
	qsort(v, n, sizeof(*v), by_key);
	json_array_clear(items);
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(items, v[i]);
	}
	free(v);
	return 0;
}

int rz_target_list(rz_target_t *t, const char *prefix, json_t **items, rz_err_t *err)
{
	json_t *a;
	int rc = check(t, prefix, true, err);

	*items = NULL;
	if (rc < 0) {
		return rc;
	}
	if ((a = json_array()) == NULL) {
		return rz_err_set(err, -ENOMEM, "target: out of memory");
	}
	rc = t->s3 ? rz__s3_list(t->conf, prefix, a, err) : rz__local_list(t, prefix, a, err);
	if (rc == 0 && sort_items(a) < 0) {
		rc = rz_err_set(err, -ENOMEM, "target: out of memory");
	}
	if (rc < 0) {
		json_decref(a);
		return rc;
	}
	*items = a;
	return 0;
}

int rz_target_delete(rz_target_t *t, const char *key, rz_err_t *err)
{
	int rc = check(t, key, false, err);

	if (rc < 0) {
		return rc;
	}
	return t->s3 ? rz__s3_delete(t->conf, key, err) : rz__local_delete(t, key, err);
}
