/*
 * tests/integration/rzoffsite.c - offsite.sh's driver of core/offsite: each command one call
 * of the module, as the backup pipeline makes them. Prints what the call returned on stdout
 * and its error on stderr (exit 1).
 *
 *   rzoffsite put CONF KEY FILE        rzoffsite seal KEYFILE IN OUT    (prints SIZE SHA256)
 *   rzoffsite get CONF KEY FILE        rzoffsite unseal KEYFILE IN OUT  (prints SIZE SHA256)
 *   rzoffsite list CONF [PREFIX]       rzoffsite rotate KEYFILE
 *   rzoffsite delete CONF KEY          rzoffsite where CONF
 *
 * CONF is the target's settings as JSON text.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "core/offsite/seal.h"
#include "core/offsite/target.h"

static int target_cmd(int argc, char **argv, rz_err_t *err)
{
	json_error_t jerr;
	json_t *conf = json_loads(argv[2], 0, &jerr), *items = NULL;
	rz_target_t *t = NULL;
	const char *cmd = argv[1];
	int rc;

	if (conf == NULL) {
		return rz_err_set(err, RZ_EPARSE, "CONF: %s", jerr.text);
	}
	rc = rz_target_open(&t, conf, err);
	json_decref(conf);
	if (rc < 0) {
		return rc;
	}
	if (strcmp(cmd, "where") == 0) {
		printf("%s\n", rz_target_where(t));
	} else if (strcmp(cmd, "put") == 0 && argc == 5) {
		rc = rz_target_put(t, argv[3], argv[4], err);
	} else if (strcmp(cmd, "get") == 0 && argc == 5) {
		rc = rz_target_get(t, argv[3], argv[4], err);
	} else if (strcmp(cmd, "delete") == 0 && argc == 4) {
		rc = rz_target_delete(t, argv[3], err);
	} else if (strcmp(cmd, "list") == 0 && argc <= 4) {
		rc = rz_target_list(t, argc == 4 ? argv[3] : "", &items, err);
		if (rc == 0) {
			json_dumpf(items, stdout, JSON_COMPACT);
			printf("\n");
			json_decref(items);
		}
	} else {
		rc = rz_err_set(err, REZUS_EINVALID, "usage: see tests/integration/rzoffsite.c");
	}
	rz_target_free(t);
	return rc;
}

static int seal_cmd(int argc, char **argv, rz_err_t *err)
{
	rz_seal_keys_t *k = NULL;
	char sha[65];
	uint64_t size = 0;
	int rc;

	if (strcmp(argv[1], "rotate") == 0) {
		return rz_seal_keys_rotate(argv[2], err);
	}
	if (argc != 5) {
		return rz_err_set(err, REZUS_EINVALID, "usage: see tests/integration/rzoffsite.c");
	}
	rc = rz_seal_keys_load(&k, argv[2], err);
	if (rc == 0) {
		rc = strcmp(argv[1], "seal") == 0
		         ? rz_seal_file(k, argv[3], argv[4], &size, sha, err)
		         : rz_unseal_file(k, argv[3], argv[4], &size, sha, err);
	}
	if (rc == 0) {
		printf("%" PRIu64 " %s\n", size, sha);
	}
	rz_seal_keys_free(k);
	return rc;
}

int main(int argc, char **argv)
{
	rz_err_t err = { 0 };
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: see tests/integration/rzoffsite.c\n");
		return 2;
	}
	if (strcmp(argv[1], "seal") == 0 || strcmp(argv[1], "unseal") == 0 ||
	    strcmp(argv[1], "rotate") == 0) {
		rc = seal_cmd(argc, argv, &err);
	} else {
		rc = target_cmd(argc, argv, &err);
	}
	if (rc < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	return 0;
}
