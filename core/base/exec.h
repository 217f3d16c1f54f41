/*
 * core/base/exec.h - finding executables: the PATH lookup the runner uses for its
 * children and the CLI uses to see which tools a machine has.
 */
#ifndef RZ_EXEC_H
#define RZ_EXEC_H

#include <stddef.h>

/* Resolve name against a PATH-like search list (colons; empty entries skipped; NULL:
 * /usr/local/bin:/usr/bin:/bin). A name with '/' is taken as is. Only a regular file
 * this process may execute counts. Returns 0 and fills out, or -ENOENT. */
int rz_exec_which(const char *name, const char *path, char *out, size_t size);

#endif /* RZ_EXEC_H */
