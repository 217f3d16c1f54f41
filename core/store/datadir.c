/*
 * core/store/datadir.c - private modes under the data dir and its write probe.
 *
 * The daemon sets umask 077 and creates its files 0600, so a data dir it made stays private;
 * rz_datadir_secure corrects what an older version, an operator or a restore left open.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/store/datadir.h"

#define PROBE_FILE  ".rezus-probe"
#define PROBE_BYTES 4096
#define WALK_FDS    16

/* nftw passes no argument: the walk's tally (the loop thread, at start only). */
static struct {
	int corrected;
	int failed;
	char first[PATH_MAX];
} walk;

static int secure_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if ((type != FTW_F && type != FTW_D && type != FTW_DP) || st->st_uid != geteuid() ||
	    (st->st_mode & 0077) == 0) {
		return 0;
	}
	if (chmod(p, st->st_mode & 07700) < 0) {
		if (walk.failed++ == 0) {
			rz_log_warn("datadir", "chmod '%s' failed: %s", p, strerror(errno));
		}
		return 0;
	}
	if (walk.corrected++ == 0) {
		snprintf(walk.first, sizeof(walk.first), "%s (was %03o)", p,
		         (unsigned)(st->st_mode & 0777));
	}
	return 0;
}

int rz_datadir_secure(const char *path, rz_err_t *err)
{
	walk.corrected = 0;
	walk.failed = 0;
	walk.first[0] = '\0';
	if (nftw(path, secure_one, WALK_FDS, FTW_PHYS) != 0) {
		return rz_err_set(err, -errno, "data dir '%s': cannot walk it: %s", path,
		                  strerror(errno));
	}
	if (walk.corrected > 0) {
		rz_log_warn("datadir",
		            "%d file(s) under '%s' were open to group or others, first %s: "
		            "made private (they hold keys and state)",
		            walk.corrected, path, walk.first);
	}
	return walk.corrected;
}

int rz_datadir_probe(const char *path, rz_err_t *err)
{
	char file[PATH_MAX], block[PROBE_BYTES];
	int fd, e = 0;

	if (snprintf(file, sizeof(file), "%s/%s", path, PROBE_FILE) >= (int)sizeof(file)) {
		return rz_err_set(err, -ENAMETOOLONG, "data dir '%s': path too long", path);
	}
	memset(block, 'p', sizeof(block));
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		e = errno;
	} else if ((errno = 0, write(fd, block, sizeof(block))) != (ssize_t)sizeof(block)) {
		e = errno != 0 ? errno : ENOSPC; /* a short write: no room for the rest */
	} else if (fsync(fd) < 0) {
		e = errno;
	}
	if (fd >= 0 && close(fd) < 0 && e == 0) {
		e = errno;
	}
	if (fd >= 0) {
		unlink(file);
	}
	if (e != 0) {
		return rz_err_set(err, -e, "data dir '%s' cannot be written: %s", path,
		                  strerror(e));
	}
	return 0;
}
