/*
 * bench/webui-seed.c - seeds a stopped daemon's data dir with runs and Events, for bench/webui.
 *
 *   webui-seed DATA_DIR RUNS_PER_TENANT
 *
 * Opens DATA_DIR's store the way the daemon does (its lock, rezus.db with every migration) and,
 * for every Tenant in it, creates RUNS_PER_TENANT finished Runs (spec as the engine stores
 * them, status set through rz_report_status as a run's end writes it) cycling through the
 * phases Succeeded, Failed, Succeeded, Canceled, and records the Events the engine would:
 * a Normal RunStarted per run, a Warning RunFailed per failed run, and one Warning
 * ProbeFailed per tenant (rz_events_record). No run is left Queued or Running, so the
 * daemon started on the dir afterwards starts none. Prints what it made and the time it
 * took. Exit 0 when everything was created, 1 when something was not, 2 on a bad command
 * line or a data dir that cannot be opened (or is in use).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/log.h"
#include "core/report/report.h"
#include "core/model/kinds.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/events.h"
#include "core/store/store.h"

#define RUNS_MAX     50       /* tofu.run_history's default: none is pruned at start */
#define EVENT_WINDOW 10000000 /* every write kept in the change log */

struct seed {
	rz_store_t *st;
	long runs, warnings, normals;
};

static const char *const phases[] = { "Succeeded", "Failed", "Succeeded", "Canceled" };

static int run(struct seed *s, const char *tenant, int i)
{
	const char *phase = phases[i % 4];
	char name[32], now[32];
	json_t *obj, *out = NULL;
	rz_err_t err = { 0 };
	int rc;

	snprintf(name, sizeof(name), "run-seed%04d", i);
	obj = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:i}}", "metadata", "name", name, "tenant",
	                tenant, "spec", "operation", "apply", "trigger", i ? "spec" : "create",
	                "generation", 1);
	rc = rz_store_create(s->st, rz_kind_by_name("Run"), obj, NULL, &out, &err);
	json_decref(obj);
	json_decref(out);
	if (rc != 0) {
		fprintf(stderr, "webui-seed: creating run %s/%s failed: %s\n", tenant, name,
		        err.msg);
		return rc;
	}
	rz_report_now(now, sizeof(now));
	rz_report_status(s->st, "Run", tenant, name,
	                 json_pack("{s:s, s:s, s:s, s:s}", "phase", phase, "startedAt", now,
	                           "finishedAt", now, "message",
	                           strcmp(phase, "Failed") == 0 ? "tofu apply exited with 1" : ""));
	s->runs++;
	rz_events_record(s->st, tenant, "Run", name, "Normal", "RunStarted", "started", "engine");
	s->normals++;
	if (strcmp(phase, "Failed") == 0) {
		rz_events_record(s->st, tenant, "Run", name, "Warning", "RunFailed",
		                 "tofu apply exited with 1", "engine");
		s->warnings++;
	}
	return 0;
}

static int tenant(struct seed *s, const char *name, int runs)
{
	int rc = 0;

	for (int i = 0; rc == 0 && i < runs; i++) {
		rc = run(s, name, i);
	}
	if (rc == 0) {
		rz_events_record(s->st, name, "Tenant", name, "Warning", "ProbeFailed",
		                 "the control plane endpoint did not answer", "observer");
		s->warnings++;
	}
	return rc;
}

static int lock_dir(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/rezuscloud.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		fprintf(stderr, "webui-seed: cannot lock %s (is the daemon still running?): %s\n",
		        path, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct seed s = { 0 };
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_err_t err = { 0 };
	char path[PATH_MAX], *end = NULL;
	long n = argc == 3 ? strtol(argv[2], &end, 10) : 0;
	json_t *tenants = NULL, *t;
	int lock = -1, rc = 2;
	double t0 = now_s();
	size_t i;

	if (argc != 3 || end == NULL || *end != '\0' || n < 1 || n > RUNS_MAX) {
		fprintf(stderr, "usage: webui-seed DATA_DIR RUNS_PER_TENANT   (1 to %d)\n",
		        RUNS_MAX);
		return 2;
	}
	rz_log_set_level(RZ_LOG_WARNING);
	snprintf(path, sizeof(path), "%s/rezus.db", argv[1]);
	if ((lock = lock_dir(argv[1])) < 0) {
		goto out;
	}
	if (rz_db_open(&db, path, &err) != 0 || rz_bus_new(&bus) != 0 ||
	    rz_store_new(&s.st, db, bus, EVENT_WINDOW, &err) != 0) {
		fprintf(stderr, "webui-seed: cannot open the store in %s: %s\n", argv[1],
		        err.msg[0] ? err.msg : "out of memory");
		goto out;
	}
	tenants = rz_store_list_all(s.st, "Tenant", NULL);
	rc = json_array_size(tenants) == 0;
	if (rc != 0) {
		fprintf(stderr, "webui-seed: %s holds no tenant\n", argv[1]);
	}
	json_array_foreach(tenants, i, t)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(t, "metadata"), "name"));
		if (rc == 0 && name != NULL) {
			rc = tenant(&s, name, (int)n) != 0;
		}
	}
	printf("seeded %zu tenants with %ld runs, %ld Warning and %ld Normal events in %.2f s; "
	       "store revision %lld\n",
	       json_array_size(tenants), s.runs, s.warnings, s.normals, now_s() - t0,
	       (long long)rz_store_revision(s.st));
out:
	json_decref(tenants);
	rz_store_free(s.st);
	rz_bus_free(bus);
	rz_db_close(db);
	if (lock >= 0) {
		close(lock);
	}
	return rc;
}
