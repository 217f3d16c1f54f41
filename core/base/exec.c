/* core/base/exec.c - finding executables. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/exec.h"

int rz_exec_which(const char *name, const char *path, char *out, size_t size)
{
	const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin";

	if (strchr(name, '/') != NULL) {
		snprintf(out, size, "%s", name);
		return access(out, X_OK) == 0 ? 0 : -ENOENT;
	}
	while (*p != '\0') {
		size_t len = strcspn(p, ":");
		struct stat st;
		snprintf(out, size, "%.*s/%s", (int)len, p, name);
		if (len > 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0) {
			return 0;
		}
		p += len + (p[len] == ':');
	}
	return -ENOENT;
}
