/* core/offsite/files.c - keys, and files written whole or not at all. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/offsite/offsite-int.h"

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("._-+=@,", c) != NULL;
}

int rz__offsite_check_key(const char *key, bool prefix, rz_err_t *err)
{
	const char *what = prefix ? "prefix" : "key";
	size_t len = strlen(key), part = 0, parts = 1;

	if (len == 0 && !prefix) {
		return rz_err_set(err, REZUS_EINVALID, "target: a key may not be empty");
	}
	if (len > RZ_TARGET_KEY_MAX) {
		return rz_err_set(err, REZUS_EINVALID, "target: a %s may hold at most %d bytes",
		                  what, RZ_TARGET_KEY_MAX);
	}
	for (size_t i = 0; i < len; i++) {
		char c = key[i];
		if (c == '/') {
			if (part == 0) {
				return rz_err_set(err, REZUS_EINVALID,
				                  "target: %s '%.64s' has an empty part (a leading "
				                  "or double '/')",
				                  what, key);
			}
			if (++parts > RZ_TARGET_KEY_PARTS) {
				return rz_err_set(err, REZUS_EINVALID,
				                  "target: %s '%.64s' has more than %d parts", what,
				                  key, RZ_TARGET_KEY_PARTS);
			}
			part = 0;
			continue;
		}
		if (part == 0 && c == '.') {
			return rz_err_set(
			    err, REZUS_EINVALID,
			    "target: %s '%.64s' has a part starting with '.' (such as "
			    "'..')",
			    what, key);
		}
		if (!key_char(c)) {
			return rz_err_set(
			    err, REZUS_EINVALID,
			    "target: %s '%.64s' holds a character other than letters, "
			    "digits and \"._-+=@,/\" (at byte %zu)",
			    what, key, i);
		}
		if (++part > 255) {
			return rz_err_set(err, REZUS_EINVALID,
			                  "target: %s '%.64s' has a part longer than 255 bytes",
			                  what, key);
		}
	}
	if (len > 0 && part == 0 && !prefix) {
		return rz_err_set(err, REZUS_EINVALID, "target: key '%.64s' ends in '/'", key);
	}
	return 0;
}

int rz_target_check_key(const char *key, rz_err_t *err)
{
	if (key == NULL) {
		return rz_err_set(err, REZUS_EINVALID, "target: no key");
	}
	return rz__offsite_check_key(key, false, err);
}

int rz__offsite_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w < 0) {
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t rz__offsite_read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			return -errno;
		}
		if (r == 0) {
			break;
		}
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int rz__offsite_fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, rc = 0;

	if (slash == NULL) {
		snprintf(dir, sizeof(dir), ".");
	} else if (slash == path) {
		snprintf(dir, sizeof(dir), "/");
	} else {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	if (fsync(fd) < 0) {
		rc = -errno;
	}
	close(fd);
	return rc;
}

int rz__offsite_tmp(const char *path, char *tmp, size_t size, int *fd, rz_err_t *err)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (slash == NULL) {
		n = snprintf(tmp, size, ".%s.tmp-XXXXXX", path);
	} else {
		n = snprintf(tmp, size, "%.*s.%s.tmp-XXXXXX", (int)(slash - path + 1), path,
		             slash + 1);
	}
	if (n < 0 || (size_t)n >= size) {
		tmp[0] = '\0';
		*fd = -1;
		return rz_err_set(err, -ENAMETOOLONG, "offsite: path '%.64s…' is too long", path);
	}
	*fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
	if (*fd < 0) {
		int e = errno;
		tmp[0] = '\0';
		return rz_err_set(err, -e, "offsite: cannot create a temporary beside '%s': %s",
		                  path, strerror(e));
	}
	return 0;
}

void rz__offsite_discard(int fd, const char *tmp)
{
	if (fd >= 0) {
		close(fd);
	}
	if (tmp != NULL && tmp[0] != '\0') {
		unlink(tmp);
	}
}

int rz__offsite_commit(int fd, const char *tmp, const char *path, const char *what, rz_err_t *err)
{
	int e;

	if (fsync(fd) < 0) {
		e = errno;
		rz__offsite_discard(fd, tmp);
		return rz_err_set(err, -e, "%s: cannot write '%s': %s", what, path, strerror(e));
	}
	if (close(fd) < 0) {
		e = errno;
		rz__offsite_discard(-1, tmp);
		return rz_err_set(err, -e, "%s: cannot write '%s': %s", what, path, strerror(e));
	}
	if (rename(tmp, path) < 0) {
		e = errno;
		rz__offsite_discard(-1, tmp);
		return rz_err_set(err, -e, "%s: cannot rename a temporary to '%s': %s", what, path,
		                  strerror(e));
	}
	e = rz__offsite_fsync_dir(path);
	if (e < 0) {
		return rz_err_set(err, e, "%s: cannot sync the directory of '%s': %s", what, path,
		                  strerror(-e));
	}
	return 0;
}
