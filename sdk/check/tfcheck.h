/*
 * sdk/check/tfcheck.h - static checks of composed TF JSON (PROTOCOLS.md §3) for
 * rezus-plugin-check: root keys, the single terraform block, bare meta-arguments, escaped
 * user strings, and every ${...} reference resolving to a declared resource, data source,
 * variable or local.
 */
#ifndef RZ_TFCHECK_H
#define RZ_TFCHECK_H

#include <stdarg.h>
#include <stdbool.h>

#include <jansson.h>

#define TFCHECK_MAX 64

struct tfcheck {
	const char *hostile; /* a user string planted in the input that must come out escaped */
	json_t *decl;
	int n; /* problems found (may exceed TFCHECK_MAX) */
	char problems[TFCHECK_MAX][512];
};

/* Check files ({name: document}); returns the number of problems (listed in c). */
int tfcheck_run(struct tfcheck *c, const json_t *files);

#endif /* RZ_TFCHECK_H */
