/* core/base/version.h - what this build is. */
#ifndef RZ_VERSION_H
#define RZ_VERSION_H

/* Package version, e.g. "0.1.0". Borrowed — static. */
const char *rz_version(void);

/* Commit the build comes from, or "unknown". Borrowed — static. */
const char *rz_version_commit(void);

/* Plugin ABI the host provides, "MAJOR.MINOR". Borrowed — static. */
const char *rz_version_abi(void);

#endif /* RZ_VERSION_H */
