/* core/offsite/local.c - the local target: a directory on this host (or a mount of another),
 * one file per key, directories for the parts of keys. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/offsite/offsite-int.h"

#define COPY_CHUNK 65536

/* dir/key into buf; open_local left room for every valid key. */
static void key_path(char *buf, size_t size, const rz_target_t *t, const char *key)
{
	if (snprintf(buf, size, "%s/%s", t->dir, key) >= (int)size) {
		buf[0] = '\0';
	}
}

/* mkdir -p of path's directories from the first missing one (0700); the last part of path
 * is created too when last is true. */
static int mkdirs(char *path, bool last, rz_err_t *err)
{
	size_t len = strlen(path);

	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && !(i == len && last)) {
			continue;
		}
		char c = path[i];
		path[i] = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			int e = errno;
			path[i] = c;
			return rz_err_set(err, -e, "target: cannot create directory for '%s': %s",
			                  path, strerror(e));
		}
		path[i] = c;
	}
	return 0;
}

/* Copy the open in to a temporary beside dst, then put it in place. */
static int copy_to(int in, const char *dst, rz_err_t *err)
{
	char tmp[PATH_MAX];
	char *buf = malloc(COPY_CHUNK);
	int out = -1, rc;
	ssize_t n;

	if (buf == NULL) {
		return rz_err_set(err, -ENOMEM, "target: out of memory");
	}
	rc = rz__offsite_tmp(dst, tmp, sizeof(tmp), &out, err);
	while (rc == 0 && (n = rz__offsite_read_full(in, buf, COPY_CHUNK)) != 0) {
		if (n < 0) {
			rc = rz_err_set(err, (int)n, "target: cannot read: %s", strerror((int)-n));
			break;
		}
		rc = rz__offsite_write_all(out, buf, (size_t)n);
		if (rc < 0) {
			rz_err_set(err, rc, "target: cannot write '%s': %s", dst, strerror(-rc));
		}
	}
	free(buf);
	if (rc < 0) {
		rz__offsite_discard(out, tmp);
		return rc;
	}
	return rz__offsite_commit(out, tmp, dst, "target", err);
}

int rz__local_put(rz_target_t *t, const char *key, const char *path, rz_err_t *err)
{
	char dst[PATH_MAX];
	struct stat st;
	int in, rc;

	key_path(dst, sizeof(dst), t, key);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		return rz_err_set(err, -errno, "target: cannot open '%s': %s", path,
		                  strerror(errno));
	}
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return rz_err_set(err, REZUS_EINVALID, "target: '%s' is not a regular file", path);
	}
	rc = mkdirs(dst, false, err);
	if (rc == 0) {
		rc = copy_to(in, dst, err);
	}
	close(in);
	return rc;
}

int rz__local_get(rz_target_t *t, const char *key, const char *path, rz_err_t *err)
{
	char src[PATH_MAX];
	int in, rc;

	key_path(src, sizeof(src), t, key);
	in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		return rz_err_set(err, RZ_ENOTFOUND, "target: no object '%s' in %s", key, t->where);
	}
	if (in < 0) {
		return rz_err_set(err, -errno, "target: cannot read '%s' in %s: %s", key, t->where,
		                  strerror(errno));
	}
	rc = copy_to(in, path, err);
	close(in);
	return rc;
}

static int add_item(json_t *items, const char *key, const struct stat *st, rz_err_t *err)
{
	char when[32];
	int64_t ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;

	if (json_array_size(items) >= RZ_TARGET_LIST_MAX) {
		return rz_err_set(
		    err, REZUS_ETOOBIG,
		    "target: more than %d objects to list: narrow the prefix or prune",
		    RZ_TARGET_LIST_MAX);
	}
	rz_clock_format(ms, when, sizeof(when));
	if (json_array_append_new(items, json_pack("{s:s,s:I,s:s}", "key", key, "size",
	                                           (json_int_t)st->st_size, "modified", when)) <
	    0) {
		return rz_err_set(err, -ENOMEM, "target: out of memory");
	}
	return 0;
}

/* Whether the directory rel ("a/b/") may hold keys starting with prefix. */
static bool may_hold(const char *rel, const char *prefix)
{
	size_t r = strlen(rel), p = strlen(prefix);

	return strncmp(rel, prefix, r < p ? r : p) == 0;
}

/* The files under root/rel (rel "" or "a/b/") whose keys start with prefix, depth parts
 * deep so far. */
static int walk(const char *root, const char *rel, int depth, const char *prefix, json_t *items,
                rz_err_t *err)
{
	char path[PATH_MAX], child[RZ_TARGET_KEY_MAX + 2];
	struct dirent *e;
	struct stat st;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	d = opendir(path);
	if (d == NULL) {
		return errno == ENOENT || errno == ENOTDIR
		           ? 0
		           : rz_err_set(err, -errno, "target: cannot list '%s': %s", path,
		                        strerror(errno));
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		int n = snprintf(child, sizeof(child), "%s%s", rel, e->d_name);
		/* temporaries and anything hidden are no objects; nor are names too long */
		if (e->d_name[0] == '.' || n < 0 || (size_t)n > RZ_TARGET_KEY_MAX ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth + 1 < RZ_TARGET_KEY_PARTS) {
			strcat(child, "/");
			if (may_hold(child, prefix)) {
				rc = walk(root, child, depth + 1, prefix, items, err);
			}
		} else if (S_ISREG(st.st_mode) && strncmp(child, prefix, strlen(prefix)) == 0 &&
		           rz__offsite_check_key(child, false, NULL) == 0) {
			rc = add_item(items, child, &st, err);
		}
	}
	closedir(d);
	return rc;
}

int rz__local_list(rz_target_t *t, const char *prefix, json_t *items, rz_err_t *err)
{
	return walk(t->dir, "", 0, prefix, items, err);
}

int rz__local_delete(rz_target_t *t, const char *key, rz_err_t *err)
{
	char path[PATH_MAX];
	size_t root = strlen(t->dir);
	char *slash;

	key_path(path, sizeof(path), t, key);
	if (unlink(path) < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			return 0;
		}
		return rz_err_set(err, -errno, "target: cannot delete '%s' in %s: %s", key,
		                  t->where, strerror(errno));
	}
	rz__offsite_fsync_dir(path);
	/* the directories it leaves empty, up to the target's own */
	while ((slash = strrchr(path, '/')) != NULL && (size_t)(slash - path) > root) {
		*slash = '\0';
		if (rmdir(path) < 0) {
			break;
		}
	}
	return 0;
}
