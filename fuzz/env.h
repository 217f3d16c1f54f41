/*
 * fuzz/env.h - the daemon pieces a target needs around the parser it feeds: a private data
 * directory, the database, the bus and the store. Made once per process (libFuzzer runs
 * every input in the same one) and removed at exit.
 */
#ifndef RZ_FUZZ_ENV_H
#define RZ_FUZZ_ENV_H

#include <unistd.h>

#include "fuzz/fuzz.h"
#include "core/base/errors.h"
#include "core/model/kinds.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"

static char fz_dir[4096];
static rz_db_t *fz_db;
static rz_bus_t *fz_bus;
static rz_store_t *fz_store;

static void fz_env_cleanup(void)
{
	char cmd[4200];

	rz_store_free(fz_store);
	rz_db_close(fz_db);
	rz_bus_free(fz_bus);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fz_dir);
	if (fz_dir[0] != '\0' && system(cmd) != 0) {
		fprintf(stderr, "cannot remove %s\n", fz_dir);
	}
}

static inline void fz_env(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[4200];

	if (tmp == NULL && access("/dev/shm", W_OK) == 0) {
		tmp = "/dev/shm"; /* SQLite's syncs cost nothing there */
	}
	rz_err_t err = { 0 };

	snprintf(fz_dir, sizeof(fz_dir), "%s/rezus-fuzz-XXXXXX", tmp ? tmp : "/tmp");
	FZ_ASSERT(mkdtemp(fz_dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/rezus.db", fz_dir);
	FZ_ASSERT(rz_bus_new(&fz_bus) == 0, "bus");
	FZ_ASSERT(rz_db_open(&fz_db, path, &err) == 0, "db: %s", err.msg);
	FZ_ASSERT(rz_store_new(&fz_store, fz_db, fz_bus, 100, &err) == 0, "store: %s", err.msg);
	atexit(fz_env_cleanup);
}

/* Create an object from JSON text. */
static inline void fz_create(const char *kind, const char *text)
{
	json_t *obj = json_loads(text, 0, NULL), *out = NULL;
	rz_err_t err = { 0 };

	FZ_ASSERT(obj != NULL, "bad fixture %s", text);
	FZ_ASSERT(rz_store_create(fz_store, rz_kind_by_name(kind), obj, NULL, &out, &err) == 0,
	          "create %s: %s", kind, err.msg);
	json_decref(out);
	json_decref(obj);
}

#endif /* RZ_FUZZ_ENV_H */
