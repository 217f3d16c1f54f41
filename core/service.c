/* core/service.c - what the daemon serves about itself: /healthz, /readyz and /version, and
 * the gauges /metrics reads from the modules at scrape time (core/daemon-int.h). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/daemon-int.h"

/* ------------------------------------------------------------------ service endpoints */

static void handle_healthz(rz_req_t *req, void *ctx)
{
	rz_reply(req, 200, "text/plain; charset=utf-8", "ok\n", 3);
}

/* The loaded plugins' names, comma-separated, into buf; false when none is loaded. */
static bool loaded_plugins(const rz_daemon_t *d, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < rz_plugins_count(d->plugins); i++) {
		const rz_plugin_t *pl = rz_plugins_at(d->plugins, i);
		int n;
		if (!pl->loaded) {
			continue;
		}
		n = snprintf(buf + len, size - len, "%s%s", len > 0 ? ", " : "", pl->name);
		if (n < 0 || (size_t)n >= size - len) {
			break; /* the names that fit */
		}
		len += (size_t)n;
	}
	return len > 0;
}

/* GET /readyz: "ok", or a 503 naming the first check that fails; with ?verbose, one line
 * per check in Kubernetes' form ("[+]plugins ok: sim, talos", "[-]storage failed: ...")
 * and "readyz check passed" or "readyz check failed" last, as text either way. */
static void handle_readyz(rz_req_t *req, void *ctx)
{
	rz_daemon_t *d = ctx;
	char why[512], names[512], nats[512], body[3000], storage[600] = "", tofu[600] = "";
	char plugins[700] = "";
	bool db_ok = rz_db_ready(d->db), storage_ok = true, tofu_ok, plugins_ok;
	const char *first = NULL;
	size_t n = 0;

	if (d->storage_why[0] != '\0') {
		storage_ok = false;
		snprintf(storage, sizeof(storage), "%s", d->storage_why);
	} else if (rz_db_storage_error(d->db, why, sizeof(why)) != 0) {
		storage_ok = false;
		snprintf(storage, sizeof(storage), "database writes fail: %s", why);
	}
	tofu_ok = rz_engine_ready(d->engine, tofu, sizeof(tofu));
	plugins_ok = loaded_plugins(d, names, sizeof(names));
	if (!plugins_ok) {
		snprintf(
		    plugins, sizeof(plugins),
		    "no plugin is loaded: no tenant can be realised (list them under plugins: in "
		    "rezus.conf; they load from plugin_dir '%s')",
		    d->cfg->plugin_dir);
	}
	first = d->stopping   ? "shutting down"
	        : !db_ok      ? "database not ready"
	        : !storage_ok ? storage
	        : !tofu_ok    ? tofu
	        : !plugins_ok ? plugins
	                      : NULL;
	if (rz_req_query(req, "verbose") == NULL) {
		if (first != NULL) {
			rz_reply_error(req, 503, NULL, "%s", first);
		} else {
			rz_reply(req, 200, "text/plain; charset=utf-8", "ok\n", 3);
		}
		return;
	}
#define LINE(...)                                                                                  \
	do {                                                                                       \
		int w_ = snprintf(body + n, sizeof(body) - n, __VA_ARGS__);                        \
		n = w_ > 0 && (size_t)w_ < sizeof(body) - n ? n + (size_t)w_ : strlen(body);       \
	} while (0)
	if (d->stopping) {
		LINE("[-]shutdown failed: shutting down\n");
	}
	LINE(db_ok ? "[+]database ok\n" : "[-]database failed: not ready\n");
	if (storage_ok) {
		LINE("[+]storage ok\n");
	} else {
		LINE("[-]storage failed: %s\n", storage);
	}
	if (tofu_ok) {
		LINE("[+]tofu ok: %s\n", d->tofu_binary ? d->tofu_binary : d->cfg->tofu_binary);
	} else {
		LINE("[-]tofu failed: %s\n", tofu);
	}
	if (plugins_ok) {
		LINE("[+]plugins ok: %s\n", names);
	} else {
		LINE("[-]plugins failed: %s\n", plugins);
	}
	if (rz_runners_describe(d->runners, nats, sizeof(nats))) {
		/* informative: the local pool runs without NATS, readiness does not wait */
		LINE("[+]nats: %s\n", nats);
	}
	LINE("readyz check %s\n", first != NULL ? "failed" : "passed");
#undef LINE
	rz_reply(req, first != NULL ? 503 : 200, "text/plain; charset=utf-8", body, n);
}

/* GET /version: ours (version, commit, ABI) and, beside them, the fields of Kubernetes'
 * version.Info that kubectl version reads: major and minor of our version, gitVersion as
 * "v" and the version, the commit, the compiler in goVersion's place, the platform. */
static void handle_version(rz_req_t *req, void *ctx)
{
	char major[16] = "0", minor[16] = "0", git[80], platform[96] = "linux/unknown";
	struct utsname u;
	json_t *v;

	sscanf(rz_version(), "%15[0-9].%15[0-9]", major, minor);
	snprintf(git, sizeof(git), "v%s", rz_version());
	if (uname(&u) == 0) {
		const char *arch = strcmp(u.machine, "x86_64") == 0    ? "amd64"
		                   : strcmp(u.machine, "aarch64") == 0 ? "arm64"
		                                                       : u.machine;
		snprintf(platform, sizeof(platform), "linux/%s", arch);
	}
	v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "version",
	              rz_version(), "commit", rz_version_commit(), "abi", rz_version_abi(), "major",
	              major, "minor", minor, "gitVersion", git, "gitCommit", rz_version_commit(),
	              "gitTreeState", "", "buildDate", "", "goVersion", "", "compiler",
	              "gcc " __VERSION__, "platform", platform);
	rz_reply_json(req, 200, v);
}

static const rz_route_doc_t healthz_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getHealthz",
	  .summary = "liveness: the process answers",
	  .response = "{\"type\":\"string\"}",
	  .response_type = "text/plain" },
	{ 0 },
};

static const rz_route_param_t readyz_query[] = {
	{ "verbose", "boolean", "one line per check, naming the tofu binary and the plugins" },
	{ NULL },
};

static const rz_route_doc_t readyz_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getReadyz",
	  .summary = "readiness: the database, its disk, the plugins (at least one loaded) and the "
	             "pool are fit; a 503 says why not",
	  .query = readyz_query,
	  .response = "{\"type\":\"string\"}",
	  .response_type = "text/plain" },
	{ 0 },
};

static const rz_route_doc_t version_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getVersion",
	  .summary = "the daemon's version, commit and plugin ABI",
	  .response = "{\"type\":\"object\",\"additionalProperties\":true,"
	              "\"properties\":{\"version\":{\"type\":\"string\",\"description\":\"The "
	              "daemon's version\"},\"commit\":{\"type\":\"string\",\"description\":\"The "
	              "source commit it was built from\"},\"abi\":{\"type\":\"string\","
	              "\"description\":\"The plugin ABI version it loads, MAJOR.MINOR\"}}}" },
	{ 0 },
};

/* Open to anyone: probes and monitoring carry no credentials. Registered with the daemon as
 * ctx. */
static const rz_route_t service_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/healthz",
	  .fn = handle_healthz,
	  .role = RZ_ROLE_PUBLIC,
	  .doc = healthz_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/readyz",
	  .fn = handle_readyz,
	  .role = RZ_ROLE_PUBLIC,
	  .doc = readyz_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/version",
	  .fn = handle_version,
	  .role = RZ_ROLE_PUBLIC,
	  .doc = version_doc },
};

static size_t gauge_watches(void *ctx)
{
	return rz_watch_hub_count(((rz_daemon_t *)ctx)->watches);
}

static int64_t gauge_objects(void *ctx)
{
	return rz_store_count(((rz_daemon_t *)ctx)->store);
}

static int64_t gauge_revision(void *ctx)
{
	return rz_store_revision(((rz_daemon_t *)ctx)->store);
}

static void observe(void *ctx, rz_req_t *req, const char *route, const char *method, int code,
                    double seconds, bool streamed)
{
	rz_daemon_t *d = ctx;

	rz_metrics_observe(d->metrics, route, method, code, seconds, streamed);
	rz_access_observe(d->access, req, code);
}

static void gauge_probes(void *ctx, rz_metrics_probes_t *out)
{
	rz_observer_stats_t st;

	rz_observer_stats(((rz_daemon_t *)ctx)->observer, &st);
	for (size_t i = 0; i < 4; i++) {
		out->count[i] = st.probes[i];
		out->seconds[i] = st.seconds[i];
	}
	out->running = st.running;
	out->queued = st.queued;
	out->observations = st.observations;
	out->writes = st.writes;
}

/* The engine's counters, for /metrics (the API does not include the engine). */
_Static_assert(RZ_METRICS_RUN_OPS == RZ_ENGINE_OPS && RZ_METRICS_RUN_PHASES == RZ_ENGINE_PHASES &&
                   RZ_METRICS_RUN_STEPS == RZ_ENGINE_STEPS &&
                   RZ_METRICS_RUN_BUCKETS == RZ_ENGINE_BUCKETS,
               "metrics.h and engine.h disagree on the runs' series");
_Static_assert(RZ_METRICS_WAIT_BUCKETS == RZ_RUNNERS_WAIT_BUCKETS,
               "metrics.h and runners.h disagree on the claim waits' buckets");

static void gauge_runs(void *ctx, rz_metrics_runs_t *out)
{
	rz_daemon_t *d = ctx;
	rz_engine_stats_t st = { 0 };

	if (d->engine != NULL) {
		rz_engine_stats(d->engine, &st);
	}
	*out = (rz_metrics_runs_t){ .ops = rz_engine_ops,
		                    .phases = rz_engine_phases,
		                    .steps = rz_engine_steps,
		                    .bounds = rz_engine_buckets,
		                    .queued = st.queued,
		                    .running = st.running,
		                    .workers = st.workers,
		                    .processes = st.processes,
		                    .tenants = st.tenants };
	memcpy(out->runs, st.runs, sizeof(out->runs));
	memcpy(out->step_hist, st.step_hist, sizeof(out->step_hist));
	memcpy(out->step_count, st.step_count, sizeof(out->step_count));
	memcpy(out->step_seconds, st.step_seconds, sizeof(out->step_seconds));
}

static void gauge_checkpoints(void *ctx, rz_metrics_checkpoints_t *out)
{
	rz_daemon_t *d = ctx;
	rz_db_stats_t s;

	rz_db_stats(d->db, &s);
	*out = (rz_metrics_checkpoints_t){ .count = s.checkpoints,
		                           .seconds = s.checkpoint_seconds,
		                           .restarts = s.restarts,
		                           .syncs = s.syncs,
		                           .synced_commits = s.synced_commits };
}

static void gauge_runners(void *ctx, rz_metrics_runners_t *out)
{
	rz_runners_stats_t st;

	rz_runners_stats(((rz_daemon_t *)ctx)->runners, &st);
	*out = (rz_metrics_runners_t){ .ready = st.ready,
		                       .stopping = st.stopping,
		                       .lost = st.lost,
		                       .offline = st.offline,
		                       .heartbeats = st.heartbeats,
		                       .dropped = st.dropped,
		                       .connected = st.connected,
		                       .jobs = st.jobs,
		                       .events = st.events,
		                       .events_dropped = st.events_dropped,
		                       .steps = st.steps,
		                       .wait_bounds = rz_runners_wait_buckets,
		                       .wait_buckets = RZ_RUNNERS_WAIT_BUCKETS,
		                       .wait_count = st.wait_count,
		                       .wait_seconds = st.wait_seconds };
	memcpy(out->wait_hist, st.wait_hist, sizeof(out->wait_hist));
}

int rz__daemon_start_metrics(rz_daemon_t *d, rz_err_t *err)
{
	rz_metrics_gauges_t g = { .watches = gauge_watches,
		                  .objects = gauge_objects,
		                  .revision = gauge_revision,
		                  .probes = gauge_probes,
		                  .runs = gauge_runs,
		                  .checkpoints = gauge_checkpoints,
		                  .runners = gauge_runners,
		                  .store = d->store,
		                  .auth = d->auth,
		                  .session = d->session,
		                  .workers = d->workers,
		                  .db_path = d->db_path,
		                  .ctx = d };
	int rc;

	snprintf(d->db_path, sizeof(d->db_path), "%s/%s", d->cfg->data_dir, DB_FILE);
	rc = rz_metrics_new(&d->metrics, &g, err);
	if (rc == 0) {
		rc = rz_metrics_routes(d->metrics, d->http, err);
	}
	if (rc == 0) {
		rz_http_set_observer(d->http, observe, d);
	}
	return rc;
}

int rz__daemon_service_routes(rz_daemon_t *d, rz_err_t *err)
{
	return rz_http_add_table(d->http, RZ_ROUTES(service_routes), d, err);
}
