/*
 * bench/observe-seed.c - seeds a data dir with N applied tenants, for bench/observe.
 *
 *   observe-seed DATA_DIR N                                sim tenants
 *   observe-seed -t CONF -s STANDIN_DIR -m MANIFEST DATA_DIR N   talos tenants
 *   observe-seed -d         prints the shipped observe.interval, fast_interval and
 *                           stable_interval in ms (rz_config_defaults), one line
 *
 * Opens DATA_DIR's store the way the daemon does (the data dir 0700, its lock, rezus.db
 * with every migration) and creates N tenants o1 .. oN, each as a successful apply through
 * the engine would leave it, without running tofu. Writes go through the store, one
 * transaction each, like the daemon's.
 *
 * sim tenants:
 *   - Tenant oI, spec.clusterProvider sim (the API's defaults applied);
 *   - NodeGroups cp (controlplane, count 1) and workers (worker, count 2), providerClass sim;
 *   - the 3 Machines the engine projects from sim's state (core/report/report.c,
 *     machine_object): cp-0, workers-0, workers-1 with their labels, nodeGroup, role,
 *     providerType sim, tfAddress terraform_data.cp[0] ..., and the address and hostname
 *     sim renders (the first group in 10.99.0.x, the second in 10.99.4.x);
 *   - the tenant's status as after the apply, written by rz_report_run (lastApplied,
 *     lastRun apply Succeeded, observedGeneration = generation, Reconciled True, the node
 *     groups' counts, phase Provisioning and its Event), so the daemon starts no run.
 *   lastRun.id names a Run the seed does not create, and the tenants have no TF state: the
 *   sim plugin observes from the Machines' creationTimestamp alone.
 *
 * talos tenants (-t: the plugins metal and talos are loaded from CONF, the daemon's
 * rezus.conf, as the daemon loads them):
 *   - Tenant oI, spec.clusterProvider talos, talosVersion 1.12.1, kubernetesVersion 1.35.0
 *     (what the stand-in recordings report);
 *   - NodeGroups cp (controlplane, count 1) and workers (worker, count 2) of providerClass
 *     metal, their machines listed by address (installDisk /dev/sda); tenant I's addresses
 *     are 10.0.0.0/8's 8I+1 .. 8I+3 (o1: 10.0.0.9, 10.0.0.10, 10.0.0.11), so every machine
 *     of the fleet has its own;
 *   - what settle.c does after a successful apply, from a state document as metal renders
 *     it (one talos_machine_configuration_apply per group, for_each over the addresses)
 *     with the talos plugin's sensitive outputs talosconfig and kubeconfig:
 *     rz_report_machines projects the Machines through the loaded plugins' rules
 *     (cp-10-0-0-9, workers-10-0-0-10, ...: address and providerId the address, no
 *     hostname), rz_tfstate_keep_outputs keeps the outputs encrypted with DATA_DIR/state.key
 *     (where the observer reads the probes' credentials from), the tenant's
 *     status.talosVersion and kubernetesVersion are set, and rz_report_run writes the rest
 *     as for sim. The state document itself is not stored as a version: observation never
 *     reads it, and nothing else does while no run starts.
 *   The outputs are sized like Talos's (a talosconfig of about 1.9 KB, a kubeconfig of about
 *   2.9 KB, random base64 for the keys and certificates) and begin with a comment line
 *   "# stand-in: STANDIN_DIR/oI", which bench/observe's wrappers read to hand the test
 *   stand-ins that tenant's recordings (the daemon runs probes with a clean environment).
 *   MANIFEST gets one line per tenant: "oI CP_ADDRESS WORKER0_ADDRESS WORKER1_ADDRESS".
 *
 * Prints the store's revision and the time it took. Exit 0 when every object was created,
 * 1 when one was not, 2 on a bad command line, a data dir that cannot be opened (or is in
 * use), or plugins that cannot be loaded.
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
#include <sodium.h>

#include "core/base/config.h"
#include "core/base/log.h"
#include "core/report/report.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"
#include "core/plugin/plugins.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"
#include "core/tfstate/tfstate.h"

#define TENANTS_MAX       100000
#define EVENT_WINDOW      10000000     /* as bench/observe runs the daemon: every write kept */
#define PROVISION_TIMEOUT (30 * 60000) /* observe.provision_timeout's default */
#define TALOS_VERSION     "1.12.1"     /* what the stand-in recordings report */
#define K8S_VERSION       "1.35.0"

struct seed {
	rz_store_t *st;
	long created;
	/* talos tenants only */
	rz_plugins_t *plugins;
	rz_tfstate_t *ts;
	const char *standin; /* the stand-in data's directory, named in the credentials */
	FILE *manifest;
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
	char name[80], host[160], addr[32], tf[96], id[48];
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

/* ------------------------------------------------------------------ talos tenants */

/* Machine k (0: the control plane, 1 and 2: the workers) of tenant ti: 10.0.0.0/8's
 * 8·ti + k + 1. */
static void talos_address(long ti, int k, char *out, size_t size)
{
	long n = ti * 8 + k + 1;

	snprintf(out, size, "10.%ld.%ld.%ld", (n >> 16) & 255, (n >> 8) & 255, n & 255);
}

/* Random base64 standing for len bytes of DER (a key, a certificate): the credentials'
 * size is what costs, not their content (arena: caller frees). */
static char *fake_base64(size_t len)
{
	unsigned char *bin = malloc(len);
	size_t b64 = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	char *out = bin ? malloc(b64) : NULL;

	if (out != NULL) {
		randombytes_buf(bin, len);
		sodium_bin2base64(out, b64, bin, len, sodium_base64_VARIANT_ORIGINAL);
	}
	free(bin);
	return out;
}

/* The talos plugin's sensitive outputs for tenant name, sized like Talos's: a talosconfig
 * (ed25519: CA and client certificate of about 560 and 600 bytes, the key 160) and an admin
 * kubeconfig (ECDSA: CA and client certificate of about 770 and 800 bytes, the key 220).
 * The first line names the tenant's stand-in data for bench/observe's wrappers. */
static json_t *talos_outputs(const struct seed *s, const char *name, const char *cp)
{
	char *ca = fake_base64(560), *crt = fake_base64(600), *key = fake_base64(160);
	char *kca = fake_base64(770), *kcrt = fake_base64(800), *kkey = fake_base64(220);
	char *tc = NULL, *kc = NULL;
	json_t *out = NULL;

	if (ca && crt && key && kca && kcrt && kkey &&
	    asprintf(&tc,
	             "# stand-in: %s/%s\ncontext: %s\ncontexts:\n    %s:\n        endpoints:\n"
	             "            - %s\n        nodes:\n            - %s\n        ca: %s\n"
	             "        crt: %s\n        key: %s\n",
	             s->standin, name, name, name, cp, cp, ca, crt, key) > 0 &&
	    asprintf(&kc,
	             "# stand-in: %s/%s\napiVersion: v1\nkind: Config\nclusters:\n"
	             "    - name: %s\n      cluster:\n        server: https://%s:6443\n"
	             "        certificate-authority-data: %s\ncontexts:\n    - context:\n"
	             "        cluster: %s\n        namespace: default\n        user: admin@%s\n"
	             "      name: admin@%s\ncurrent-context: admin@%s\nusers:\n"
	             "    - name: admin@%s\n      user:\n        client-certificate-data: %s\n"
	             "        client-key-data: %s\n",
	             s->standin, name, name, cp, kca, name, name, name, name, name, kcrt,
	             kkey) > 0) {
		out = json_pack("{s:{s:s, s:s, s:b}, s:{s:s, s:s, s:b}}", "talosconfig", "value",
		                tc, "type", "string", "sensitive", 1, "kubeconfig", "value", kc,
		                "type", "string", "sensitive", 1);
	}
	free(tc);
	free(kc);
	free(ca);
	free(crt);
	free(key);
	free(kca);
	free(kcrt);
	free(kkey);
	return out;
}

/* One talos_machine_configuration_apply instance as the siderolabs/talos provider records
 * it (the sensitive configuration left out: nothing reads it). */
static json_t *apply_instance(const char *tenant, const char *group, int i, const char *addr)
{
	char patch[256];

	snprintf(patch, sizeof(patch),
	         "{\"machine\": {\"network\": {\"hostname\": \"%s-%s-%d\"}, \"install\": "
	         "{\"disk\": \"/dev/sda\", \"image\": \"ghcr.io/siderolabs/installer:v%s\"}}}",
	         tenant, group, i, TALOS_VERSION);
	return json_pack("{s:s, s:i, s:{s:s, s:[s], s:s, s:s, s:s, s:{s:b, s:b, s:b}}, "
	                 "s:b, s:[]}",
	                 "index_key", addr, "schema_version", 0, "attributes", "apply_mode", "auto",
	                 "config_patches", patch, "endpoint", addr, "id",
	                 "machine_configuration_apply", "node", addr, "on_destroy", "graceful", 0,
	                 "reset", 1, "reboot", 1, "sensitive_attributes", 0, "dependencies");
}

static json_t *apply_resource(const char *group)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:[]}", "mode", "managed", "type",
	                 "talos_machine_configuration_apply", "name", group, "provider",
	                 "provider[\"registry.opentofu.org/siderolabs/talos\"]", "instances");
}

/* A metal node group listing its machines by address. */
static int metal_group(struct seed *s, const char *tenant, const char *name, const char *role,
                       char addrs[][32], int count)
{
	json_t *machines = json_array();

	for (int i = 0; i < count; i++) {
		json_array_append_new(machines, json_pack("{s:s, s:s}", "address", addrs[i],
		                                          "installDisk", "/dev/sda"));
	}
	return create(s, "NodeGroup",
	              json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s, s:{s:o}}}",
	                        "apiVersion", RZ_API_VERSION, "kind", "NodeGroup", "metadata",
	                        "name", name, "tenant", tenant, "spec", "role", role, "count",
	                        count, "providerClass", "metal", "providerConfig", "machines",
	                        machines));
}

static int talos_tenant(struct seed *s, long ti)
{
	char name[32], addr[3][32];
	json_t *state = NULL, *cp, *workers, *outputs, *machines;
	rz_err_t err = { 0 };
	int rc;

	snprintf(name, sizeof(name), "o%ld", ti);
	for (int k = 0; k < 3; k++) {
		talos_address(ti, k, addr[k], sizeof(addr[k]));
	}
	rc = create(s, "Tenant",
	            json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s}}", "apiVersion",
	                      RZ_API_VERSION, "kind", "Tenant", "metadata", "name", name, "spec",
	                      "clusterProvider", "talos", "talosVersion", TALOS_VERSION,
	                      "kubernetesVersion", K8S_VERSION));
	if (rc == 0) {
		rc = metal_group(s, name, "cp", "controlplane", addr, 1);
	}
	if (rc == 0) {
		rc = metal_group(s, name, "workers", "worker", addr + 1, 2);
	}
	if (rc != 0) {
		return rc;
	}
	cp = apply_resource("cp");
	workers = apply_resource("workers");
	outputs = talos_outputs(s, name, addr[0]);
	if (cp == NULL || workers == NULL || outputs == NULL) {
		json_decref(cp);
		json_decref(workers);
		json_decref(outputs);
		fprintf(stderr, "observe-seed: out of memory\n");
		return -ENOMEM;
	}
	json_array_append_new(json_object_get(cp, "instances"),
	                      apply_instance(name, "cp", 0, addr[0]));
	for (int i = 0; i < 2; i++) {
		json_array_append_new(json_object_get(workers, "instances"),
		                      apply_instance(name, "workers", i, addr[1 + i]));
	}
	state = json_pack("{s:i, s:s, s:i, s:s, s:o, s:[o, o], s:[]}", "version", 4,
	                  "terraform_version", "1.10.6", "serial", 1, "lineage",
	                  "00000000-0000-4000-8000-000000000000", "outputs", outputs, "resources",
	                  cp, workers, "check_results");
	/* as settle.c after a successful apply: Machines from the state, its outputs kept */
	rz_report_machines(s->st, s->plugins, name, state);
	machines = rz_store_list_all(s->st, "Machine", name);
	if (json_array_size(machines) != 3) {
		fprintf(stderr, "observe-seed: %s: the state projects %zu Machines, not 3\n", name,
		        json_array_size(machines));
		rc = -EINVAL;
	} else {
		s->created += 3;
	}
	json_decref(machines);
	if (rc == 0 &&
	    (rc = rz_tfstate_keep_outputs(s->ts, name, "run-seeded", state, &err)) != 0) {
		fprintf(stderr, "observe-seed: %s: keeping the outputs failed: %s\n", name,
		        err.msg);
	}
	json_decref(state);
	if (rc == 0) {
		rz_report_status(s->st, "Tenant", NULL, name,
		                 json_pack("{s:s, s:s}", "talosVersion", TALOS_VERSION,
		                           "kubernetesVersion", K8S_VERSION));
		rz_report_run(s->st, name, "run-seeded", "apply", "Succeeded", NULL,
		              PROVISION_TIMEOUT);
		fprintf(s->manifest, "%s %s %s %s\n", name, addr[0], addr[1], addr[2]);
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

static int usage(void)
{
	fprintf(stderr,
	        "usage: observe-seed DATA_DIR N\n"
	        "       observe-seed -t CONF -s STANDIN_DIR -m MANIFEST DATA_DIR N\n"
	        "       observe-seed -d\n"
	        "  N from 1 to %d\n",
	        TENANTS_MAX);
	return 2;
}

/* -d: the shipped observation intervals, as the daemon starts with no observe settings. */
static int print_defaults(void)
{
	rz_config_t cfg;

	memset(&cfg, 0, sizeof(cfg));
	if (rz_config_defaults(&cfg) != 0) {
		fprintf(stderr, "observe-seed: out of memory\n");
		return 2;
	}
	printf("%lld %lld %lld\n", (long long)cfg.observe_interval_ms,
	       (long long)cfg.observe_fast_interval_ms, (long long)cfg.observe_stable_interval_ms);
	rz_config_free(&cfg);
	return 0;
}

/* -t: the plugins as the daemon loads them from its configuration, the state backend's
 * key where the daemon keeps it. */
static int open_talos(struct seed *s, rz_config_t *cfg, const char *conf, const char *dir,
                      rz_db_t *db)
{
	char key[PATH_MAX];
	rz_err_t err = { 0 };

	if (rz_config_defaults(cfg) != 0 || rz_config_load_file(cfg, conf, &err) != 0) {
		fprintf(stderr, "observe-seed: %s: %s\n", conf,
		        err.msg[0] ? err.msg : "out of memory");
		return -1;
	}
	if (rz_plugins_load(&s->plugins, cfg, true, &err) != 0) {
		fprintf(stderr, "observe-seed: cannot load the plugins: %s\n", err.msg);
		return -1;
	}
	if (!rz_plugins_observes(s->plugins, "talos")) {
		fprintf(stderr, "observe-seed: %s loads no talos plugin that observes\n", conf);
		return -1;
	}
	snprintf(key, sizeof(key), "%s/state.key", dir); /* the daemon's STATE_KEY_FILE */
	if (rz_tfstate_new(&s->ts, db, s->st, NULL, key, cfg->tofu_state_history, &err) != 0) {
		fprintf(stderr, "observe-seed: the state backend: %s\n", err.msg);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct seed s;
	rz_config_t cfg;
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_err_t err = { 0 };
	char path[PATH_MAX], *end = NULL;
	const char *conf = NULL, *manifest = NULL;
	long n;
	int lock = -1, rc = 2, opt;
	double t0 = now_s();

	memset(&s, 0, sizeof(s));
	memset(&cfg, 0, sizeof(cfg));
	while ((opt = getopt(argc, argv, "dt:s:m:")) != -1) {
		switch (opt) {
		case 'd':
			return optind == argc && argc == 2 ? print_defaults() : usage();
		case 't':
			conf = optarg;
			break;
		case 's':
			s.standin = optarg;
			break;
		case 'm':
			manifest = optarg;
			break;
		default:
			return usage();
		}
	}
	n = argc - optind == 2 ? strtol(argv[optind + 1], &end, 10) : 0;
	if (argc - optind != 2 || end == NULL || *end != '\0' || n < 1 || n > TENANTS_MAX ||
	    (conf != NULL) != (s.standin != NULL) || (conf != NULL) != (manifest != NULL)) {
		return usage();
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "observe-seed: libsodium does not initialise\n");
		return 2;
	}
	rz_log_set_level(RZ_LOG_WARNING); /* no line per tenant phase */
	snprintf(path, sizeof(path), "%s/rezus.db", argv[optind]);
	if ((lock = lock_dir(argv[optind])) < 0) {
		goto out;
	}
	if (rz_db_open(&db, path, &err) != 0 || rz_bus_new(&bus) != 0 ||
	    rz_store_new(&s.st, db, bus, EVENT_WINDOW, &err) != 0) {
		fprintf(stderr, "observe-seed: cannot open the store in %s: %s\n", argv[optind],
		        err.msg[0] ? err.msg : "out of memory");
		goto out;
	}
	if (conf != NULL && open_talos(&s, &cfg, conf, argv[optind], db) != 0) {
		goto out;
	}
	if (manifest != NULL && (s.manifest = fopen(manifest, "w")) == NULL) {
		fprintf(stderr, "observe-seed: cannot write %s: %s\n", manifest, strerror(errno));
		goto out;
	}
	rc = 0;
	for (long i = 1; rc == 0 && i <= n; i++) {
		rc = (conf != NULL ? talos_tenant(&s, i) : tenant(&s, i)) != 0;
	}
	if (s.manifest != NULL && fclose(s.manifest) != 0) {
		fprintf(stderr, "observe-seed: cannot write %s: %s\n", manifest, strerror(errno));
		rc = 1;
	}
	s.manifest = NULL;
	printf("seeded %ld %s tenants (%ld objects) in %.2f s; store revision %lld\n",
	       rc == 0 ? n : 0, conf != NULL ? "talos" : "sim", s.created, now_s() - t0,
	       (long long)rz_store_revision(s.st));
out:
	if (s.manifest != NULL) {
		fclose(s.manifest);
	}
	rz_tfstate_free(s.ts);
	rz_store_free(s.st);
	rz_plugins_free(s.plugins);
	rz_bus_free(bus);
	rz_db_close(db);
	rz_config_free(&cfg);
	if (lock >= 0) {
		close(lock);
	}
	return rc;
}
