/* core/base/version.c - build identity for --version and /version. */
#include <config.h>

#include <rezus/version.h>

#include "core/base/version.h"

#define STR_(x) #x
#define STR(x)  STR_(x)

const char *rz_version(void)
{
	return PACKAGE_VERSION;
}

const char *rz_version_commit(void)
{
	return RZ_GIT_COMMIT;
}

const char *rz_version_abi(void)
{
	return STR(REZUS_ABI_MAJOR) "." STR(REZUS_ABI_MINOR);
}
