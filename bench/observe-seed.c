/*
 * bench/observe-seed.c - seeds a data dir with N applied sim tenants, for bench/observe.
 *
 *   observe-seed DATA_DIR N
 *
 * Opens DATA_DIR's store the way the daemon does (the data dir 0700, its lock, rezus.db
 * with every migration) and creates N tenants o1 .. oN, each as a successful apply through
 * the engine would leave it, without running tofu:
 *   - Tenant oI, spec.clusterProvider sim (the API's defaults applied);
 *   - NodeGroups cp (controlplane, count 1) and workers (worker, count 2), providerClass sim;
 *   - the 3 Machines the engine projects from sim's state (core/report/report.c,
 *     machine_object): cp-0, workers-0, workers-1 with their labels, nodeGroup, role,
 *     providerType sim, tfAddress terraform_data.cp[0] ..., and the address and hostname
 *     sim renders (the first group in 10.99.0.x, the second in 10.99.4.x);
 *   - the tenant's status as after the apply, written by rz_report_run (lastApplied,
 *     lastRun apply Succeeded, observedGeneration = generation, Reconciled True, the node
 *     groups' counts, phase Provisioning and its Event), so the daemon starts no run.
 * lastRun.id names a Run the seed does not create, and the tenants have no TF state: the
 * sim plugin observes from the Machines' creationTimestamp alone. Writes go through the
 * store, one transaction each, like the daemon's. Prints the store's revision and the time
 * it took. Exit 0 when every object was created, 1 when one was not, 2 on a bad command
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/log.h"
#include "core/report/report.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"

#define TENANTS_MAX       100000
#define EVENT_WINDOW      10000000     /* as bench/observe runs the daemon: every write kept */
#define PROVISION_TIMEOUT (30 * 60000) /* observe.provision_timeout's default */

struct seed {
	rz_store_t *st;
	long created;
};

/* Validate obj's spec as the API does on create (defaults applied), then create it.
 * Takes ownership of obj. */
static int create(struct seed *s, const char *kind, json_t *obj)
{
	const rz_kind_t *k = rz_kind_by_name(kind);
	json_t *causes = json_array(), *out = NULL;
	rz_err_t err = { 0 };
	int rc = 0;

	if (k->spec != NULL) {
		rz_fields_validate(json_object_get(obj, "spec"), k->spec, "spec", true, causes);
	}
	if (json_array_size(causes) == 0 && k->check != NULL) {
		k->check(k, obj, NULL, causes);
	}
	if (json_array_size(causes) > 0) {
		char *text = json_dumps(causes, JSON_COMPACT);
		fprintf(stderr, "observe-seed: %s is invalid: %s\n", kind, text ? text : "?");
		free(text);
		rc = -EINVAL;
	} else if ((rc = rz_store_create(s->st, k, obj, NULL, &out, &err)) != 0) {
		fprintf(stderr, "observe-seed: creating a %s failed: %s\n", kind, err.msg);
	} else {
		s->created++;
	}
	json_decref(out);
	json_decref(causes);
	json_decref(obj);
	return rc;
}

static int nodegroup(struct seed *s, const char *tenant, const char *name, const char *role,
                     int count)
{
	return create(s, "NodeGroup",
	              json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s}}", "apiVersion",
	                        RZ_API_VERSION, "kind", "NodeGroup", "metadata", "name", name,
	                        "tenant", tenant, "spec", "role", role, "count", count,
	                        "providerClass", "sim"));
}

/* Machine <group>-<index> of tenant number ti, shaped as machine_object() projects it;
 * group gi is the group's place in the tenant's sorted node groups (sim's address block). */
static int machine(struct seed *s, long ti, const char *tenant, const char *group, const char *role,
                   int gi, int index)
{
	char name[80], host[160], addr[32], tf[96], id[40];
	json_t *obj;

	snprintf(name, sizeof(name), "%s-%d", group, index);
	snprintf(host, sizeof(host), "%s-%s-%d", tenant, group, index);
	snprintf(addr, sizeof(addr), "10.99.%d.%d", gi * 4 + (index + 10) / 256,
	         (index + 10) % 256);
	snprintf(tf, sizeof(tf), "terraform_data.%s[%d]", group, index);
	/* terraform_data ids are UUIDs; these are fixed ones, unique per machine */
	snprintf(id, sizeof(id), "%08lx-0000-4000-8000-%04x%08x", (unsigned long)ti, (unsigned)gi,
	         (unsigned)index);
	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s, s:s}}, "
	                "s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s}}",
	                "apiVersion", RZ_API_VERSION, "kind", "Machine", "metadata", "name", name,
	                "tenant", tenant, "labels", "rezuscloud.io/tenant", tenant,
	                "rezuscloud.io/nodegroup", group, "rezuscloud.io/provider", "sim",
	                "rezuscloud.io/role", role, "spec", "providerId", id, "address", addr,
	                "hostname", host, "role", role, "nodeGroup", group, "providerType", "sim",
	                "tfAddress", tf);
	return create(s, "Machine", obj);
}

static int tenant(struct seed *s, long ti)
{
	char name[32];
	int rc;

	snprintf(name, sizeof(name), "o%ld", ti);
	rc =
	    create(s, "Tenant",
	           json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", RZ_API_VERSION, "kind",
	                     "Tenant", "metadata", "name", name, "spec", "clusterProvider", "sim"));
	if (rc == 0) {
		rc = nodegroup(s, name, "cp", "controlplane", 1);
	}
	if (rc == 0) {
		rc = nodegroup(s, name, "workers", "worker", 2);
	}
	if (rc == 0) {
		rc = machine(s, ti, name, "cp", "controlplane", 0, 0);
	}
	for (int i = 0; rc == 0 && i < 2; i++) {
		rc = machine(s, ti, name, "workers", "worker", 1, i);
	}
	if (rc == 0) {
		rz_report_run(s->st, name, "run-seeded", "apply", "Succeeded", NULL,
		              PROVISION_TIMEOUT);
	}
	return rc;
}

/* The data dir as the daemon makes it (0700) and its lock, held until exit. */
static int lock_dir(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "observe-seed: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/rezuscloud.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		fprintf(stderr, "observe-seed: cannot lock %s: %s\n", path, strerror(errno));
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
	struct seed s = { NULL, 0 };
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_err_t err = { 0 };
	char path[PATH_MAX], *end = NULL;
	long n = argc == 3 ? strtol(argv[2], &end, 10) : 0;
	int lock = -1, rc = 2;
	double t0 = now_s();

	if (argc != 3 || end == NULL || *end != '\0' || n < 1 || n > TENANTS_MAX) {
		fprintf(stderr, "usage: observe-seed DATA_DIR N   (N from 1 to %d)\n", TENANTS_MAX);
		return 2;
	}
	rz_log_set_level(RZ_LOG_WARNING); /* no line per tenant phase */
	snprintf(path, sizeof(path), "%s/rezus.db", argv[1]);
	if ((lock = lock_dir(argv[1])) < 0) {
		goto out;
	}
	if (rz_db_open(&db, path, &err) != 0 || rz_bus_new(&bus) != 0 ||
	    rz_store_new(&s.st, db, bus, EVENT_WINDOW, &err) != 0) {
		fprintf(stderr, "observe-seed: cannot open the store in %s: %s\n", argv[1],
		        err.msg[0] ? err.msg : "out of memory");
		goto out;
	}
	rc = 0;
	for (long i = 1; rc == 0 && i <= n; i++) {
		rc = tenant(&s, i) != 0;
	}
	printf("seeded %ld tenants (%ld objects) in %.2f s; store revision %lld\n", rc == 0 ? n : 0,
	       s.created, now_s() - t0, (long long)rz_store_revision(s.st));
out:
	rz_store_free(s.st);
	rz_bus_free(bus);
	rz_db_close(db);
	if (lock >= 0) {
		close(lock);
	}
	return rc;
}
