/*
 * tests/unit/check_engine.c - the engine's queue and step machine (core/engine/engine.h)
 * in seconds, with no tofu: a real engine on a real store, bus, auth and the sim plugin,
 * whose steps go to a fake executor (core/engine/executor.h, "remote" on) and whose timers
 * ask a fake clock (core/base/clock.h) how long to wait.
 *
 * The fake executor records each step the engine starts (tenant, run, step) and ends it
 * with the exit status a test chooses, when the test chooses; the test claims the step as a
 * runner would, through the engine's own runner routes (in process: rz_http_inject), which
 * gives the step's argv and takes `tofu show -json`'s plan. A test guard stands in for
 * core/auth/access: runner routes see the runner r1, the others an admin (authorisation is
 * not what is tested here).
 *
 * The fake clock records the delay of every timer the engine arms through rz_clock_timer
 * (its debounce, its retries after failures) and waits a ten-thousandth of it, so that a
 * test checks which delay was asked for (10 s, 20 s, 40 s ...) and still sees the timer
 * fire in a millisecond. Its monotonic clock moves only when a test says (a step's
 * duration), its wall clock with it.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/auth/access.h"
#include "core/auth/auth.h"
#include "core/base/clock.h"
#include "core/base/config.h"
#include "core/base/log.h"
#include "core/engine/engine.h"
#include "core/engine/executor.h"
#include "core/http/http.h"
#include "core/plugin/plugins.h"
#include "core/report/report.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/store.h"
#include "core/tfstate/tfstate.h"
#include "tests/unit/testutil.h"

#define DEBOUNCE_MS 300   /* "300" in the delays asserted */
#define RESYNC_MS   40000 /* the backoff's cap; its own timer never fires within a test */
#define RUNNER      "r1"
#define MAX_STEPS   64
#define MAX_ASKED   64

/* Plans as `tofu show -json` prints them, as much of them as the engine reads. */
#define PLAN_ADD                                                                                   \
	"{\"format_version\":\"1.2\",\"resource_changes\":[{\"address\":\"terraform_data.a\","     \
	"\"type\":\"terraform_data\",\"name\":\"a\",\"change\":{\"actions\":[\"create\"]}}]}"
#define PLAN_NONE "{\"format_version\":\"1.2\",\"resource_changes\":[]}"
#define PLAN_DESTROY                                                                               \
	"{\"format_version\":\"1.2\",\"resource_changes\":[{\"address\":\"terraform_data.a\","     \
	"\"type\":\"terraform_data\",\"name\":\"a\",\"change\":{\"actions\":[\"delete\"]}}]}"

static char *dir;
static char workdir[1024];
static rz_config_t cfg;
static rz_plugins_t *plugins;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *st;
static rz_tfstate_t *ts;
static rz_auth_t *auth;
static struct event_base *base;
static rz_http_t *http;
static rz_engine_t *engine;
static rz_engine_opts_t opts;

/* ------------------------------------------------------------------ the fake clock */

static struct {
	int64_t wall0_ms; /* the wall clock when the mono clock read 0 */
	int64_t mono_ns;
	int64_t asked[MAX_ASKED]; /* the delays timers were armed with, in order */
	size_t n_asked;
} fclock;

static int64_t fake_now_ms(void *ctx)
{
	(void)ctx;
	return fclock.wall0_ms + fclock.mono_ns / 1000000;
}

static int64_t fake_mono_ns(void *ctx)
{
	(void)ctx;
	return fclock.mono_ns;
}

static int64_t fake_timer_us(void *ctx, int64_t ms)
{
	(void)ctx;
	ck_assert_uint_lt(fclock.n_asked, MAX_ASKED);
	fclock.asked[fclock.n_asked++] = ms;
	return ms / 10; /* ten thousand times faster: 10 s in 1 ms */
}

static const rz_clock_source_t fake_clock = { fake_now_ms, fake_mono_ns, fake_timer_us, NULL };

static void advance(int64_t ms)
{
	fclock.mono_ns += ms * 1000000;
}

/* The delays asked for since the last call, as "300 10000 ..." (for two-sided asserts). */
static const char *asked(void)
{
	static char out[1024];
	static size_t seen;
	size_t len = 0;

	out[0] = '\0';
	if (seen > fclock.n_asked) {
		seen = 0; /* a new test */
	}
	for (; seen < fclock.n_asked && len < sizeof(out) - 24; seen++) {
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%lld", len ? " " : "",
		                        (long long)fclock.asked[seen]);
	}
	return out;
}

/* ------------------------------------------------------------------ the fake executor */

struct step {
	char tenant[64], run[64], step[8], runner[64];
	int attempt;
	bool attached; /* taken up after a restart (attach), not started */
	bool claimed;  /* the executor was told a runner claimed it */
	bool ended;
	json_t *argv;     /* from the claim's reply */
	rz_exec_step_t s; /* the callbacks and their arg; its strings not kept */
};

static struct {
	struct step steps[MAX_STEPS];
	size_t n;
	size_t pool;     /* capacity: runs at once */
	size_t most;     /* the most runs that had a step out at once */
	int same_tenant; /* a step of a second run of a tenant while one had a step out */
	int two_steps;   /* a step of a run while its previous one was out */
	char canceled[8][64], forgotten[32][64];
	size_t n_canceled, n_forgotten;
} fx;

static bool fx_remote(void *ctx)
{
	(void)ctx;
	return true;
}

static size_t fx_capacity(void *ctx, const json_t *selector)
{
	(void)ctx;
	(void)selector;
	return fx.pool;
}

static bool fx_unserved(void *ctx, const json_t *selector, char *why, size_t size)
{
	(void)ctx;
	(void)selector;
	(void)why;
	(void)size;
	return false;
}

/* A step handed to the executor, kept; and, among the steps out at that moment (not
 * ended), whether its tenant has another run's (same_tenant), its run another (two_steps),
 * and how many runs have one, itself included (the most at once: the pool's use). */
static void record(const rz_exec_step_t *s, const char *runner, bool attached)
{
	struct step *p;
	size_t out = 1;

	ck_assert_uint_lt(fx.n, MAX_STEPS);
	for (size_t i = 0; i < fx.n; i++) {
		struct step *q = &fx.steps[i];
		bool counted = false;
		if (q->ended) {
			continue;
		}
		fx.same_tenant += strcmp(q->tenant, s->tenant) == 0 && strcmp(q->run, s->run) != 0;
		fx.two_steps += strcmp(q->run, s->run) == 0;
		for (size_t j = 0; j < i; j++) {
			counted =
			    counted || (!fx.steps[j].ended && strcmp(fx.steps[j].run, q->run) == 0);
		}
		out += !counted && strcmp(q->run, s->run) != 0;
	}
	fx.most = out > fx.most ? out : fx.most;
	p = &fx.steps[fx.n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->tenant, sizeof(p->tenant), "%s", s->tenant);
	snprintf(p->run, sizeof(p->run), "%s", s->run);
	snprintf(p->step, sizeof(p->step), "%s", s->step);
	snprintf(p->runner, sizeof(p->runner), "%s", runner ? runner : "");
	p->attempt = s->attempt;
	p->attached = attached;
	p->claimed = runner != NULL;
	p->s = *s;
	p->s.run = p->s.tenant = p->s.step = NULL;
	p->s.selector = NULL;
	p->s.event_key = NULL;
}

static int fx_start(void *ctx, const rz_exec_step_t *s, rz_err_t *err)
{
	(void)ctx;
	(void)err;
	record(s, NULL, false);
	return 0;
}

static int fx_attach(void *ctx, const rz_exec_step_t *s, const char *runner, rz_err_t *err)
{
	(void)ctx;
	(void)err;
	record(s, runner, true);
	return 0;
}

/* The step of run out now, or NULL. */
static struct step *out_step(const char *run)
{
	for (size_t i = fx.n; i-- > 0;) {
		if (!fx.steps[i].ended && strcmp(fx.steps[i].run, run) == 0) {
			return &fx.steps[i];
		}
	}
	return NULL;
}

static void fx_claimed(void *ctx, const char *run, const char *runner, const unsigned char *key)
{
	struct step *p = out_step(run);

	(void)ctx;
	(void)key;
	ck_assert_ptr_nonnull(p);
	p->claimed = true;
	snprintf(p->runner, sizeof(p->runner), "%s", runner);
}

static void fx_cancel(void *ctx, const char *run)
{
	(void)ctx;
	ck_assert_uint_lt(fx.n_canceled, 8);
	snprintf(fx.canceled[fx.n_canceled++], sizeof(fx.canceled[0]), "%s", run);
}

static void fx_forget(void *ctx, const char *run)
{
	(void)ctx;
	if (fx.n_forgotten < 32) {
		snprintf(fx.forgotten[fx.n_forgotten++], sizeof(fx.forgotten[0]), "%s", run);
	}
}

static const rz_executor_t fake_exec = { .remote = fx_remote,
	                                 .capacity = fx_capacity,
	                                 .unserved = fx_unserved,
	                                 .start = fx_start,
	                                 .attach = fx_attach,
	                                 .claimed = fx_claimed,
	                                 .cancel = fx_cancel,
	                                 .forget = fx_forget };

/* ------------------------------------------------------------------ the loop */

/* Turn the loop for ms of real time. */
static void spin(int ms)
{
	struct timeval tv = { 0, ms * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* Every timer the engine may have armed fires within this (40 s asked: 4 ms). */
static void quiet(void)
{
	spin(15);
}

/* Turn the loop until the executor has been asked n steps (20 s at most: a failure). */
static void wait_steps(size_t n)
{
	for (int i = 0; i < 20000 && fx.n < n; i++) {
		spin(1);
	}
	ck_assert_uint_ge(fx.n, n);
}

/* ------------------------------------------------------------------ the store */

static const json_t *at(const json_t *o, const char *path)
{
	char key[128];

	while (o != NULL && *path != '\0') {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = json_is_array(o) ? json_array_get(o, strtoul(key, NULL, 10))
		                     : json_object_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

static const char *sat(const json_t *o, const char *path)
{
	return json_string_value(at(o, path)) ?: "";
}

static void create(const char *kind, json_t *obj)
{
	json_t *out = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_create(st, rz_kind_by_name(kind), obj, NULL, &out, &err) == 0,
	              "create %s: %s", kind, err.msg);
	json_decref(out);
	json_decref(obj);
}

static void tenant(const char *name)
{
	create("Tenant", json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", name, "spec",
	                           "clusterProvider", "sim"));
}

static void nodegroup(const char *tenant, const char *name, int count)
{
	create("NodeGroup",
	       json_pack("{s:{s:s, s:s}, s:{s:s, s:i, s:s}}", "metadata", "name", name, "tenant",
	                 tenant, "spec", "role", "worker", "count", count, "providerClass", "sim"));
}

static json_t *get(const char *kind, const char *tenant, const char *name)
{
	json_t *o = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_get(st, rz_kind_by_name(kind), tenant, name, &o, &err) == 0,
	              "get %s %s: %s", kind, name, err.msg);
	return o;
}

/* A member of the Run (its status.phase ...), copied for a two-sided assert. */
static const char *run_at(const char *tenant, const char *run, const char *path)
{
	static char out[8][512];
	static int k;
	json_t *r = get("Run", tenant, run);

	k = (k + 1) % 8;
	snprintf(out[k], sizeof(out[k]), "%s", sat(r, path));
	json_decref(r);
	return out[k];
}

static json_int_t run_int(const char *tenant, const char *run, const char *path)
{
	json_t *r = get("Run", tenant, run);
	json_int_t v = json_integer_value(at(r, path));

	json_decref(r);
	return v;
}

static size_t runs_of(const char *tenant)
{
	json_t *all = rz_store_list_all(st, "Run", tenant);
	size_t n = json_array_size(all);

	json_decref(all);
	return n;
}

/* The tenant's Event of reason: its count, and its (last) message into msg. */
/* The count of the tenant's Event of reason about the Tenant itself (a run's are about
 * its Run too: run_event), its message into msg. */
static json_int_t event(const char *tenant, const char *reason, char *msg, size_t size)
{
	json_t *all = rz_store_list_all(st, "Event", tenant), *e;
	json_int_t count = 0;
	size_t i;

	if (msg != NULL) {
		msg[0] = '\0';
	}
	json_array_foreach(all, i, e)
	{
		if (strcmp(sat(e, "reason"), reason) == 0 &&
		    strcmp(sat(e, "involvedObject.kind"), "Tenant") == 0) {
			count = json_integer_value(json_object_get(e, "count"));
			if (msg != NULL) {
				snprintf(msg, size, "%s", sat(e, "message"));
			}
		}
	}
	json_decref(all);
	return count;
}

/* The message of the tenant's Event of reason about the Run run, or "" (kubectl describe
 * run shows it). */
static const char *run_event(const char *tenant, const char *run, const char *reason)
{
	static char msg[256];
	json_t *all = rz_store_list_all(st, "Event", tenant), *e;
	size_t i;

	msg[0] = '\0';
	json_array_foreach(all, i, e)
	{
		if (strcmp(sat(e, "reason"), reason) == 0 &&
		    strcmp(sat(e, "involvedObject.kind"), "Run") == 0 &&
		    strcmp(sat(e, "involvedObject.name"), run) == 0) {
			snprintf(msg, sizeof(msg), "%s", sat(e, "message"));
		}
	}
	json_decref(all);
	return msg;
}

/* ------------------------------------------------------------------ a runner, in process */

static struct reply {
	int code;
	char body[65536];
} reply;

static void on_reply(void *arg, const rz_inject_reply_t *r)
{
	(void)arg;
	reply.code = r->code;
	snprintf(reply.body, sizeof(reply.body), "%s", r->body);
}

static int request(const char *method, const char *target, const char *ctype, const char *body)
{
	rz_inject_t in = { .method = method,
		           .target = target,
		           .content_type = body ? ctype : NULL,
		           .body = body,
		           .len = body ? strlen(body) : 0,
		           .done = on_reply };
	rz_err_t err = { 0 };

	reply.code = 0;
	reply.body[0] = '\0';
	ck_assert_msg(rz_http_inject(http, NULL, &in, NULL, &err) == 0, "inject: %s", err.msg);
	ck_assert_int_ne(reply.code, 0); /* the engine's handlers answer at once */
	return reply.code;
}

/* Stands in for core/auth/access: the runner r1 on runner routes, an admin elsewhere. */
static bool guard(void *ctx, rz_req_t *req, const rz_route_t *route)
{
	rz_principal_t p = { 0 };

	(void)ctx;
	if (route->kind != NULL && strcmp(route->kind, "RunnerClaim") == 0) {
		snprintf(p.user, sizeof(p.user), "runner-" RUNNER);
		snprintf(p.runner, sizeof(p.runner), RUNNER);
		p.role = p.cap = RZ_ROLE_ADMIN;
		p.runner_scope = true;
	} else {
		snprintf(p.user, sizeof(p.user), "alice");
		p.role = p.cap = RZ_ROLE_ADMIN;
	}
	rz_access_set_principal(req, &p);
	return true;
}

/* The runner claims step i: its argv, as the claim's reply says. */
static void claim(struct step *p)
{
	char body[256];
	json_t *j;

	snprintf(body, sizeof(body), "{\"run\":\"%s\",\"step\":\"%s\"}", p->run, p->step);
	ck_assert_msg(
	    request("POST", "/api/v1/runners/" RUNNER "/claims", "application/json", body) == 200,
	    "claim %s %s: %d %s", p->run, p->step, reply.code, reply.body);
	ck_assert(p->claimed); /* the engine told the executor */
	ck_assert_str_eq(p->runner, RUNNER);
	ck_assert_ptr_nonnull(j = json_loads(reply.body, 0, NULL));
	ck_assert_str_eq(sat(j, "run"), p->run);
	ck_assert_str_eq(sat(j, "tenant"), p->tenant);
	p->argv = json_incref(json_object_get(j, "argv"));
	json_decref(j);
}

/* The step ends with status; a show that succeeds hands the runner's plan first. */
static void end_step(struct step *p, int status, const char *plan)
{
	char target[256];

	ck_assert(!p->ended);
	if (!p->claimed) {
		claim(p);
	}
	if (plan != NULL) {
		snprintf(target, sizeof(target),
		         "/api/v1/runners/" RUNNER "/claims/%s/files/show.json", p->run);
		ck_assert_int_eq(request("PUT", target, "application/octet-stream", plan), 200);
	}
	p->ended = true;
	p->s.on_exit(p->s.arg, status, false, status < 0);
}

/* The step of tenant out now (turning the loop until there is one): it is step. */
static struct step *out_of(const char *tenant, const char *step)
{
	for (int k = 0; k < 20000; k++) {
		for (size_t i = fx.n; i-- > 0;) {
			struct step *p = &fx.steps[i];
			if (!p->ended && strcmp(p->tenant, tenant) == 0) {
				ck_assert_str_eq(p->step, step);
				return p;
			}
		}
		spin(1);
	}
	ck_abort_msg("no step of %s is out", tenant);
	return NULL;
}

static bool has_out(const char *tenant)
{
	for (size_t i = 0; i < fx.n; i++) {
		if (!fx.steps[i].ended && strcmp(fx.steps[i].tenant, tenant) == 0) {
			return true;
		}
	}
	return false;
}

/* Run the tenant's run through init, plan and show (plan), and apply if one follows;
 * returns its name (static). */
static const char *drive(const char *tenant, const char *plan)
{
	static char run[64];
	struct step *p = out_of(tenant, "init");

	snprintf(run, sizeof(run), "%s", p->run);
	advance(2000); /* init takes 2 s of the fake clock */
	end_step(p, 0, NULL);
	end_step(out_of(tenant, "plan"), 0, NULL);
	end_step(out_of(tenant, "show"), 0, plan);
	if (has_out(tenant)) {
		end_step(out_of(tenant, "apply"), 0, NULL);
	}
	return run;
}

static const char *argv_of(const struct step *p)
{
	static char out[4][256];
	static int k;
	char *s = json_dumps(p->argv, JSON_COMPACT);

	k = (k + 1) % 4;
	snprintf(out[k], sizeof(out[k]), "%s", s ? s : "");
	free(s);
	return out[k];
}

/* ------------------------------------------------------------------ fixtures */

static void setup(void)
{
	const char *top = getenv("top_builddir");
	char path[2048];
	rz_err_t err = { 0 };
	struct timespec now;

	rz_log_set_level(RZ_LOG_CRIT);
	clock_gettime(CLOCK_REALTIME, &now);
	memset(&fclock, 0, sizeof(fclock));
	fclock.wall0_ms = (int64_t)now.tv_sec * 1000;
	asked(); /* forget the last test's */
	rz_clock_set_source(&fake_clock);
	memset(&fx, 0, sizeof(fx));
	fx.pool = 2;
	dir = rzt_tmpdir();
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	free(cfg.data_dir);
	cfg.data_dir = strdup(dir);
	snprintf(path, sizeof(path), "%s/plugins/.libs", top ? top : ".");
	free(cfg.plugin_dir);
	cfg.plugin_dir = strdup(path);
	cfg.plugins = calloc(1, sizeof(*cfg.plugins));
	cfg.n_plugins = 1;
	cfg.plugins[0].name = strdup("sim");
	cfg.plugins[0].config = json_object();
	cfg.plugins[0].required = true;
	cfg.plugins[0].source = strdup("test");
	ck_assert_msg(rz_plugins_load(&plugins, &cfg, true, &err) == 0, "load: %s", err.msg);
	snprintf(path, sizeof(path), "%s/rezus.db", dir);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_msg(rz_db_open(&db, path, &err) == 0, "db: %s", err.msg);
	/* commits without a sync each, as the daemon's (rz_db_start): a tenth of the time */
	ck_assert_int_eq(rz_db_exec(db, "PRAGMA synchronous = NORMAL", &err), 0);
	ck_assert_msg(rz_store_new(&st, db, bus, 1000, &err) == 0, "store: %s", err.msg);
	snprintf(path, sizeof(path), "%s/state.key", dir);
	ck_assert_msg(rz_tfstate_new(&ts, db, st, NULL, path, 3, &err) == 0, "tfstate: %s",
	              err.msg);
	ck_assert_msg(rz_auth_new(&auth, &cfg, db, st, bus, &err) == 0, "auth: %s", err.msg);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_int_eq(rz_http_new(&http, base, NULL, &err), 0);
	rz_http_set_guard(http, guard, NULL);
	snprintf(workdir, sizeof(workdir), "%s/work", dir);
	opts =
	    (rz_engine_opts_t){ .tofu = "tofu",
		                .workdir = workdir,
		                .state_url = "http://127.0.0.1:1",
		                .workers = 1, /* local runs only: the executor's capacity rules */
		                .debounce_ms = DEBOUNCE_MS,
		                .timeout_ms = 60000,
		                .kill_grace_ms = 1000,
		                .destroy_approval = true,
		                .resync_ms = RESYNC_MS,
		                .provision_timeout_ms = 600000,
		                .run_history = 50,
		                .run_retention_ms = 86400000,
		                .max_run_log = 1 << 20 };
	/* the Runner the claims come from */
	create("Runner",
	       json_pack("{s:{s:s}, s:{s:{}}}", "metadata", "name", RUNNER, "spec", "labels"));
	rz_report_status(st, "Runner", NULL, RUNNER, json_pack("{s:s}", "phase", "Ready"));
}

/* The engine as the daemon wires it: its routes, then the executor; with settle, the loop
 * turns until its start's sweep of the store is done (it pokes the tenants there are). */
static void start_engine(bool settle)
{
	rz_err_t err = { 0 };

	ck_assert_msg(rz_engine_new(&engine, base, st, bus, plugins, auth, ts, &opts, &err) == 0,
	              "engine: %s", err.msg);
	ck_assert_int_eq(rz_engine_routes(engine, http, &err), 0);
	ck_assert_int_eq(rz_engine_runner_routes(engine, http, &err), 0);
	rz_engine_set_executor(engine, &fake_exec);
	if (settle) {
		quiet();
	}
}

static void teardown(void)
{
	rz_engine_free(engine);
	engine = NULL;
	for (size_t i = 0; i < fx.n; i++) {
		json_decref(fx.steps[i].argv);
	}
	rz_http_free(http);
	http = NULL;
	event_base_free(base);
	rz_auth_free(auth);
	rz_tfstate_free(ts);
	rz_store_free(st);
	rz_db_close(db);
	rz_bus_free(bus);
	rz_plugins_free(plugins);
	rz_config_free(&cfg);
	rz_clock_set_source(NULL);
	rzt_rmrf(dir);
	free(dir);
}

/* ------------------------------------------------------------------ debounce */

/* Three spec changes within the debounce give one run, after it: the tenant's creation and
 * its two node groups, one "create" run through init, plan, show and apply. */
START_TEST(debounce_gives_one_run)
{
	char msg[1024], started[32];
	rz_engine_stats_t stats;
	const char *run;

	start_engine(true);
	ck_assert_str_eq(asked(), "");
	tenant("acme");
	nodegroup("acme", "cp", 1);
	nodegroup("acme", "workers", 2);
	ck_assert_uint_eq(fx.n, 0); /* nothing before the debounce ends */
	ck_assert_uint_eq(runs_of("acme"), 0);
	ck_assert_str_eq(asked(), "300 300 300"); /* each change restarts it */

	rz_clock_format(fake_now_ms(NULL), started, sizeof(started));
	run = drive("acme", PLAN_ADD);
	ck_assert_uint_eq(fx.n, 4);
	ck_assert_str_eq(fx.steps[0].step, "init");
	ck_assert_str_eq(fx.steps[1].step, "plan");
	ck_assert_str_eq(fx.steps[2].step, "show");
	ck_assert_str_eq(fx.steps[3].step, "apply");
	for (size_t i = 0; i < 4; i++) {
		ck_assert_str_eq(fx.steps[i].tenant, "acme");
		ck_assert_str_eq(fx.steps[i].run, run);
		ck_assert_int_eq(fx.steps[i].attempt, 1);
		ck_assert(!fx.steps[i].attached);
	}
	{
		char want[4][160];
		snprintf(want[0], sizeof(want[0]),
		         "[\"tofu\",\"init\",\"-input=false\",\"-no-color\",\"-reconfigure\"]");
		snprintf(want[1], sizeof(want[1]),
		         "[\"tofu\",\"plan\",\"-input=false\",\"-json\",\"-out=%s.plan\"]", run);
		snprintf(want[2], sizeof(want[2]), "[\"tofu\",\"show\",\"-json\",\"%s.plan\"]",
		         run);
		snprintf(want[3], sizeof(want[3]),
		         "[\"tofu\",\"apply\",\"-input=false\",\"-json\",\"%s.plan\"]", run);
		for (size_t i = 0; i < 4; i++) {
			ck_assert_str_eq(argv_of(&fx.steps[i]), want[i]);
		}
	}
	ck_assert_str_eq(run_at("acme", run, "status.phase"), "Succeeded");
	ck_assert_str_eq(run_at("acme", run, "spec.operation"), "apply");
	ck_assert_str_eq(run_at("acme", run, "spec.trigger"), "create"); /* not relabelled */
	ck_assert_int_eq(run_int("acme", run, "spec.generation"), 1);
	ck_assert_str_eq(run_at("acme", run, "status.startedAt"), started);
	ck_assert_int_eq(run_int("acme", run, "status.changes.add"), 1);
	ck_assert_int_eq(run_int("acme", run, "status.exitCode"), 0);
	ck_assert_str_eq(run_at("acme", run, "status.stepRunners.apply"), RUNNER);
	ck_assert_int_eq(event("acme", "RunStarted", msg, sizeof(msg)), 1);
	ck_assert_int_eq(event("acme", "RunSucceeded", msg, sizeof(msg)), 1);
	ck_assert_ptr_nonnull(strstr(msg, run));
	ck_assert_str_eq(run_event("acme", run, "RunSucceeded"), "succeeded"); /* its own */
	ck_assert_uint_eq(fx.n_forgotten, 1); /* the executor hears of its end */
	ck_assert_str_eq(fx.forgotten[0], run);

	quiet();
	ck_assert_uint_eq(fx.n, 4); /* no second run */
	ck_assert_uint_eq(runs_of("acme"), 1);
	ck_assert_str_eq(asked(), "");
	rz_engine_stats(engine, &stats);
	ck_assert_uint_eq(stats.runs[1][0], 1); /* apply, Succeeded */
	ck_assert_uint_eq(stats.step_count[0], 1);
	ck_assert_uint_eq(stats.step_hist[0][4], 1); /* init: 2 s of the fake clock, ≤ 2.5 */
	ck_assert(stats.step_seconds[0] == 2.0);
	ck_assert_uint_eq(stats.step_hist[1][0], 1); /* plan: no time at all */
	ck_assert_uint_eq(stats.running, 0);
}
END_TEST

/* ------------------------------------------------------------------ coalescing */

/* Changes during a run give exactly one follow-up run, after the run and a debounce. */
START_TEST(changes_during_a_run_give_one_follow_up)
{
	struct step *p;
	const char *first;
	char run1[64];

	start_engine(true);
	tenant("acme");
	p = out_of("acme", "init");
	snprintf(run1, sizeof(run1), "%s", p->run);
	ck_assert_str_eq(asked(), "300");
	nodegroup("acme", "a", 1);
	end_step(p, 0, NULL);
	nodegroup("acme", "b", 1);
	end_step(out_of("acme", "plan"), 0, NULL);
	nodegroup("acme", "c", 1);
	quiet();
	ck_assert_uint_eq(fx.n, 3);    /* the run goes on alone */
	ck_assert_str_eq(asked(), ""); /* a change during a run arms nothing */
	end_step(out_of("acme", "show"), 0, PLAN_ADD);
	end_step(out_of("acme", "apply"), 0, NULL);
	ck_assert_str_eq(run_at("acme", run1, "status.phase"), "Succeeded");
	ck_assert_str_eq(asked(), "300"); /* the follow-up's debounce */

	first = drive("acme", PLAN_ADD);
	ck_assert_str_ne(first, run1);
	ck_assert_str_eq(run_at("acme", first, "status.phase"), "Succeeded");
	ck_assert_str_eq(run_at("acme", first, "spec.trigger"), "update");
	quiet();
	ck_assert_uint_eq(fx.n, 8);
	ck_assert_uint_eq(runs_of("acme"), 2);
	ck_assert_str_eq(asked(), "");
	ck_assert_int_eq(fx.two_steps, 0);
}
END_TEST

/* ------------------------------------------------------------------ one run per tenant */

/* Three tenants and a pool of two: two run, the third waits for a slot; a tenant changed
 * during its run never has two at once, its follow-up queues behind the third. */
START_TEST(one_run_per_tenant_and_the_pool)
{
	char why[128];
	rz_engine_stats_t stats;
	struct step *a;

	start_engine(true);
	tenant("a");
	tenant("b");
	tenant("c");
	wait_steps(2);
	quiet();
	ck_assert_uint_eq(fx.n, 2);
	a = out_of("a", "init");
	out_of("b", "init");
	ck_assert(!has_out("c"));
	rz_engine_stats(engine, &stats);
	ck_assert_uint_eq(stats.running, 2);
	ck_assert_uint_eq(stats.queued, 1);
	ck_assert(rz_engine_busy(engine, "c", why, sizeof(why)));
	ck_assert_str_eq(why, "a run is queued");
	ck_assert(rz_engine_busy(engine, "a", why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "in progress"));

	nodegroup("a", "more", 1); /* a changes while it runs */
	end_step(a, 0, NULL);
	end_step(out_of("a", "plan"), 0, NULL);
	end_step(out_of("a", "show"), 0, PLAN_NONE); /* nothing to apply: a's run ends */
	/* its slot went to c at once; a's follow-up waits its debounce, then for a slot */
	ck_assert_str_eq(fx.steps[fx.n - 1].tenant, "c");
	quiet();
	ck_assert(!has_out("a"));
	rz_engine_stats(engine, &stats);
	ck_assert_uint_eq(stats.running, 2);
	ck_assert_uint_eq(stats.queued, 1);
	ck_assert(rz_engine_busy(engine, "a", why, sizeof(why)));
	ck_assert_str_eq(why, "a run is queued");

	drive("b", PLAN_NONE); /* b ends: a takes its slot */
	out_of("a", "init");
	drive("c", PLAN_ADD);
	drive("a", PLAN_ADD);
	quiet();
	ck_assert_int_eq(fx.same_tenant, 0);
	ck_assert_int_eq(fx.two_steps, 0);
	ck_assert_uint_eq(fx.most, 2);
	ck_assert_uint_eq(runs_of("a"), 2);
	ck_assert_uint_eq(runs_of("b"), 1);
	ck_assert_uint_eq(runs_of("c"), 1);
	rz_engine_stats(engine, &stats);
	ck_assert_uint_eq(stats.queued, 0);
	ck_assert_uint_eq(stats.running, 0);
	{ /* the order the runs started in: a, b, c, then a again */
		const char *order[4];
		size_t n = 0;
		for (size_t i = 0; i < fx.n && n < 4; i++) {
			if (strcmp(fx.steps[i].step, "init") == 0) {
				order[n++] = fx.steps[i].tenant;
			}
		}
		ck_assert_uint_eq(n, 4);
		ck_assert_str_eq(order[0], "a");
		ck_assert_str_eq(order[1], "b");
		ck_assert_str_eq(order[2], "c");
		ck_assert_str_eq(order[3], "a");
	}
}
END_TEST

/* ------------------------------------------------------------------ backoff */

static const char *fail_init(const char *tenant, const char *why)
{
	struct step *p = out_of(tenant, "init");

	p->s.on_line(p->s.arg, why, strlen(why), true);
	end_step(p, 1, NULL);
	return p->run;
}

/* Failed runs retry after 10 s, 20 s, 40 s, capped at tofu.resync (40 s here); a success
 * resets it: the next failure waits 10 s again. */
START_TEST(backoff_grows_is_capped_and_resets)
{
	char msg[1024], run[64];
	const char *retry;

	start_engine(true);
	tenant("acme");
	snprintf(run, sizeof(run), "%s", fail_init("acme", "Error: boom"));
	ck_assert_str_eq(run_at("acme", run, "status.phase"), "Failed");
	ck_assert_str_eq(run_at("acme", run, "status.message"),
	                 "tofu init failed (see the run's diagnostics and log)");
	ck_assert_int_eq(run_int("acme", run, "status.exitCode"), 1);
	ck_assert_str_eq(run_at("acme", run, "status.diagnostics.0.summary"), "tofu init failed");
	ck_assert_str_eq(run_at("acme", run, "status.diagnostics.0.detail"), "Error: boom");
	ck_assert_int_eq(event("acme", "RunFailed", msg, sizeof(msg)), 1);
	ck_assert_str_eq(asked(), "300 10000");

	retry = fail_init("acme", "Error: again");
	ck_assert_str_eq(asked(), "20000");
	/* a retry is a resync: stored because it failed */
	ck_assert_str_eq(run_at("acme", retry, "spec.trigger"), "resync");
	ck_assert_str_eq(run_at("acme", retry, "status.phase"), "Failed");
	fail_init("acme", "Error: again");
	ck_assert_str_eq(asked(), "40000");
	fail_init("acme", "Error: again");
	ck_assert_str_eq(asked(), "40000"); /* capped */
	ck_assert_int_eq(event("acme", "RunFailed", NULL, 0), 4);
	ck_assert_uint_eq(runs_of("acme"), 4);

	drive("acme", PLAN_NONE); /* the fifth succeeds: a resync with nothing to do */
	quiet();
	ck_assert_str_eq(asked(), ""); /* no retry */
	ck_assert_uint_eq(fx.n, 4 + 3);
	ck_assert_uint_eq(runs_of("acme"), 4); /* a resync that found nothing: no Run */

	nodegroup("acme", "cp", 1);
	fail_init("acme", "Error: once more");
	ck_assert_str_eq(asked(), "300 10000"); /* from the start again */
	ck_assert_uint_eq(runs_of("acme"), 5);
}
END_TEST

/* ------------------------------------------------------------------ approval */

/* A plan that destroys waits in AwaitingApproval, holding no slot, until approved; then it
 * applies. The next one is canceled while it waits: it ends there, and nothing follows. */
START_TEST(approval_waits_until_approved_or_canceled)
{
	char target[256], why[128], msg[1024], run1[64], run2[64];
	rz_engine_stats_t stats;
	struct step *p;

	start_engine(true);
	tenant("acme");
	p = out_of("acme", "init");
	snprintf(run1, sizeof(run1), "%s", p->run);
	end_step(p, 0, NULL);
	end_step(out_of("acme", "plan"), 0, NULL);
	end_step(out_of("acme", "show"), 0, PLAN_DESTROY);
	ck_assert_str_eq(run_at("acme", run1, "status.phase"), "AwaitingApproval");
	ck_assert_int_eq(run_int("acme", run1, "status.changes.destroy"), 1);
	ck_assert(!has_out("acme")); /* no apply */
	rz_engine_stats(engine, &stats);
	ck_assert_uint_eq(stats.running, 0); /* its slot given back */
	ck_assert(rz_engine_busy(engine, "acme", why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "awaiting approval"));
	ck_assert_int_eq(event("acme", "RunAwaitingApproval", msg, sizeof(msg)), 1);
	ck_assert_ptr_nonnull(strstr(msg, "destroys 1 resource"));
	advance(3600000);
	quiet();
	ck_assert_str_eq(run_at("acme", run1, "status.phase"), "AwaitingApproval"); /* waits */
	ck_assert_uint_eq(fx.n, 3);

	snprintf(target, sizeof(target), "/api/v1/tenants/acme/runs/%s/approve", run1);
	ck_assert_int_eq(request("POST", target, "application/json", "{\"reason\":\"planned\"}"),
	                 200);
	p = out_of("acme", "apply");
	ck_assert_str_eq(p->run, run1);
	ck_assert_str_eq(run_at("acme", run1, "status.phase"), "Running");
	ck_assert_str_eq(run_at("acme", run1, "status.approvedBy"), "alice");
	ck_assert_str_eq(run_at("acme", run1, "status.approvalReason"), "planned");
	end_step(p, 0, NULL);
	ck_assert_str_eq(run_at("acme", run1, "status.phase"), "Succeeded");
	ck_assert_int_eq(request("POST", target, "application/json", NULL), 409); /* over */

	nodegroup("acme", "cp", 1);
	p = out_of("acme", "init");
	snprintf(run2, sizeof(run2), "%s", p->run);
	end_step(p, 0, NULL);
	end_step(out_of("acme", "plan"), 0, NULL);
	end_step(out_of("acme", "show"), 0, PLAN_DESTROY);
	ck_assert_str_eq(run_at("acme", run2, "status.phase"), "AwaitingApproval");
	snprintf(target, sizeof(target), "/api/v1/tenants/acme/runs/%s/cancel", run2);
	ck_assert_int_eq(request("POST", target, NULL, NULL), 200);
	ck_assert_str_eq(run_at("acme", run2, "status.phase"), "Canceled");
	ck_assert_str_eq(run_at("acme", run2, "status.message"), "canceled before its apply");
	ck_assert_int_eq(event("acme", "RunCanceled", msg, sizeof(msg)), 1);
	ck_assert(!rz_engine_busy(engine, "acme", why, sizeof(why)));
	quiet();
	ck_assert_uint_eq(fx.n, 4 + 3); /* no apply, no run after it */
	ck_assert_uint_eq(runs_of("acme"), 2);
	ck_assert_uint_eq(fx.n_canceled, 0); /* nothing was out to cancel */
}
END_TEST

/* A tenant removed with no teardown (its finalizer dropped, then deleted: how an exported
 * tenant leaves) while its run awaits approval: the run ends and the tenant is forgotten,
 * once, its working directory removed (its node groups' deletion, which pokes it, used to
 * find it freed); a new tenant of that name starts afresh. */
START_TEST(a_tenant_deleted_while_its_run_awaits_approval)
{
	json_t *cur, *out = NULL;
	rz_err_t err = { 0 };
	char why[128], run1[64], path[PATH_MAX + 16];
	struct step *p;
	bool gone = false;

	start_engine(true);
	tenant("acme");
	nodegroup("acme", "cp", 1);
	p = out_of("acme", "init");
	snprintf(run1, sizeof(run1), "%s", p->run);
	end_step(p, 0, NULL);
	end_step(out_of("acme", "plan"), 0, NULL);
	end_step(out_of("acme", "show"), 0, PLAN_DESTROY);
	ck_assert(rz_engine_busy(engine, "acme", why, sizeof(why)));
	snprintf(path, sizeof(path), "%s/acme", workdir);
	ck_assert_int_eq(access(path, F_OK), 0);
	cur = get("Tenant", NULL, "acme");
	json_object_set_new(json_object_get(cur, "metadata"), "finalizers", json_array());
	ck_assert_int_eq(rz_store_update(st, rz_kind_by_name("Tenant"), NULL, "acme", cur, 0,
	                                 RZ_UPDATE_SPEC, NULL, &out, &gone, &err),
	                 0);
	json_decref(out);
	json_decref(cur);
	ck_assert_int_eq(rz_store_delete(st, rz_kind_by_name("Tenant"), NULL, "acme", 0, NULL, &out,
	                                 &gone, &err),
	                 0);
	json_decref(out);
	ck_assert(gone); /* at once: no finalizer, no destroy run */
	quiet();
	ck_assert(!rz_engine_busy(engine, "acme", why, sizeof(why)));
	ck_assert_uint_eq(fx.n, 3);               /* no apply, no destroy */
	ck_assert_int_eq(access(path, F_OK), -1); /* its working directory went with it */
	tenant("acme");
	p = out_of("acme", "init");
	ck_assert_str_ne(p->run, run1);
}
END_TEST

/* Canceling a run whose step a runner holds asks the executor to cancel it; the step's end
 * ends the run Canceled. */
START_TEST(cancel_a_running_step)
{
	char target[256];
	struct step *p;

	start_engine(true);
	tenant("acme");
	end_step(out_of("acme", "init"), 0, NULL);
	p = out_of("acme", "plan");
	claim(p);
	snprintf(target, sizeof(target), "/api/v1/tenants/acme/runs/%s/cancel", p->run);
	ck_assert_int_eq(request("POST", target, NULL, NULL), 200);
	ck_assert_uint_eq(fx.n_canceled, 1);
	ck_assert_str_eq(fx.canceled[0], p->run);
	ck_assert_str_eq(run_at("acme", p->run, "status.phase"), "Running"); /* until it ends */
	end_step(p, -1, NULL);
	ck_assert_str_eq(run_at("acme", p->run, "status.phase"), "Canceled");
	ck_assert_str_eq(run_at("acme", p->run, "status.message"), "tofu plan was canceled");
	quiet();
	ck_assert_uint_eq(fx.n, 2); /* no retry: a cancel is no failure */
	ck_assert_str_eq(asked(), "300");
}
END_TEST

/* ------------------------------------------------------------------ recovery */

static void left_run(const char *tenant, const char *name, json_t *status)
{
	create("Run", json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:i}}", "metadata", "name", name,
	                        "tenant", tenant, "spec", "operation", "apply", "trigger", "update",
	                        "generation", 1));
	rz_report_status(st, "Run", tenant, name, status);
}

/* Runs a previous daemon left Running or Queued become Interrupted at start, and their
 * tenant runs again; finished ones stay as they are. */
START_TEST(recovery_interrupts_what_was_left)
{
	struct step *p;

	tenant("acme");
	left_run("acme", "run-left",
	         json_pack("{s:s, s:s}", "phase", "Running", "startedAt", "2026-01-01T00:00:00Z"));
	left_run("acme", "run-queued", json_pack("{s:s}", "phase", "Queued"));
	left_run(
	    "acme", "run-done",
	    json_pack("{s:s, s:s}", "phase", "Succeeded", "finishedAt", "2026-01-01T00:01:00Z"));
	rz_report_status(st, "Tenant", NULL, "acme", json_pack("{s:s}", "appliedInputs", "x"));

	start_engine(false);
	/* at once, before any turn of the loop */
	ck_assert_str_eq(run_at("acme", "run-left", "status.phase"), "Interrupted");
	ck_assert_str_eq(run_at("acme", "run-left", "status.message"),
	                 "the daemon stopped before the run finished");
	ck_assert_str_ne(run_at("acme", "run-left", "status.finishedAt"), "");
	ck_assert_str_eq(run_at("acme", "run-queued", "status.phase"), "Interrupted");
	ck_assert_str_eq(run_at("acme", "run-queued", "status.message"),
	                 "the daemon stopped before the run started");
	ck_assert_str_eq(run_at("acme", "run-done", "status.phase"), "Succeeded");
	{
		json_t *t = get("Tenant", NULL, "acme");
		ck_assert_str_eq(sat(t, "status.appliedInputs"), ""); /* not known to be applied */
		json_decref(t);
	}
	/* acme runs again after the debounce (the second Run's poke, a resync, never pushes
	 * a waiting debounce back: it arms nothing) */
	ck_assert_str_eq(asked(), "300");
	ck_assert_uint_eq(fx.n, 0);
	p = out_of("acme", "init"); /* a new run */
	ck_assert_str_ne(p->run, "run-left");
	ck_assert(!p->attached);
}
END_TEST

/* A run the daemon's stop interrupts (SIGINT, SIGTERM) ends Interrupted, and the next start
 * runs its tenant again: even a first apply, which recorded no inputs yet and whose tenant's
 * generation the interrupted run marked observed. */
START_TEST(a_stop_interrupts_and_the_next_start_runs_again)
{
	rz_err_t err = { 0 };
	char first[64];
	struct step *p;

	start_engine(true);
	tenant("acme");
	nodegroup("acme", "cp", 1);
	end_step(out_of("acme", "init"), 0, NULL);
	p = out_of("acme", "plan");
	snprintf(first, sizeof(first), "%s", p->run);
	ck_assert_str_eq(run_at("acme", first, "status.phase"), "Running");
	rz_engine_free(engine); /* the daemon stops */
	engine = NULL;
	rz_http_free(http); /* its routes went with it: the next start adds its own */
	ck_assert_int_eq(rz_http_new(&http, base, NULL, &err), 0);
	rz_http_set_guard(http, guard, NULL);
	for (size_t i = 0; i < fx.n; i++) {
		fx.steps[i].ended = true; /* gone with the process */
	}
	ck_assert_str_eq(run_at("acme", first, "status.phase"), "Interrupted");
	ck_assert_str_eq(run_at("acme", first, "status.message"), "the daemon stopped");
	{
		json_t *t = get("Tenant", NULL, "acme");
		/* not known to be applied: emptied, not merely never recorded */
		ck_assert(json_is_string(at(t, "status.appliedInputs")));
		ck_assert_str_eq(sat(t, "status.appliedInputs"), "");
		json_decref(t);
	}

	start_engine(true); /* the next start, on the same store */
	ck_assert_str_eq(run_at("acme", first, "status.phase"), "Interrupted"); /* as it was */
	quiet();
	ck_assert_msg(has_out("acme"), "the next start does not run acme again");
	p = out_of("acme", "init");
	ck_assert_str_ne(p->run, first); /* a new run */
	ck_assert_str_eq(drive("acme", PLAN_ADD), p->run);
	ck_assert_str_eq(run_at("acme", p->run, "status.phase"), "Succeeded");
	quiet();
	ck_assert(!has_out("acme")); /* once applied, nothing more */
}
END_TEST

/* With remote runners, a Run left Running with a step out and its grant kept is taken up:
 * its step attached to the runner that claimed it, and it goes on to the end; one left
 * without a grant is Interrupted. The tenant is not run again meanwhile. */
START_TEST(recovery_takes_up_a_remote_run)
{
	char inputs[RZ_REPORT_INPUTS_LEN], secret[RZ_TOKEN_SECRET_LEN + 1], msg[1024];
	char path[2048];
	json_t *none = json_array();
	rz_err_t err = { 0 };
	struct step *p;

	rz_report_inputs(none, none, inputs);
	json_decref(none);
	tenant("acme");
	tenant("beta");
	left_run("acme", "run-away",
	         json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "phase", "Running", "startedAt",
	                   "2026-01-01T00:00:00Z", "step", "plan", "runner", RUNNER, "claimedStep",
	                   "plan", "inputs", inputs));
	left_run("beta", "run-lost",
	         json_pack("{s:s, s:s, s:s}", "phase", "Running", "startedAt",
	                   "2026-01-01T00:00:00Z", "step", "init"));
	/* the previous daemon composed acme's working directory, and its auth kept the grant
	 * of acme's run: the new one reads it */
	snprintf(path, sizeof(path), "%s", workdir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/acme", workdir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/acme/main.tf.json", workdir);
	rzt_write_file(path, "{\"resource\":{\"terraform_data\":{\"a\":{}}}}");
	rz_auth_token_secret(secret);
	ck_assert_int_eq(rz_auth_grant_kept(auth, "acme", "run-away", secret), 0);
	rz_auth_free(auth);
	ck_assert_msg(rz_auth_new(&auth, &cfg, db, st, bus, &err) == 0, "auth: %s", err.msg);
	ck_assert(rz_auth_granted(auth, "run-away"));
	opts.remote = true;

	start_engine(false);
	ck_assert_str_eq(run_at("beta", "run-lost", "status.phase"), "Interrupted");
	ck_assert_uint_ge(fx.n, 1);
	p = &fx.steps[0];
	ck_assert(p->attached);
	ck_assert_str_eq(p->run, "run-away");
	ck_assert_str_eq(p->tenant, "acme");
	ck_assert_str_eq(p->step, "plan");
	ck_assert_str_eq(p->runner, RUNNER); /* held by the runner that claimed it */
	ck_assert_str_eq(run_at("acme", "run-away", "status.phase"), "Running");
	ck_assert_int_eq(event("acme", "RunTakenUp", msg, sizeof(msg)), 1);
	ck_assert_ptr_nonnull(strstr(msg, "tofu plan on runner " RUNNER));

	quiet(); /* the start's sweep: acme's run covers its generation and inputs */
	ck_assert_ptr_eq(out_of("acme", "plan"), p);
	p->ended = true;
	p->s.on_exit(p->s.arg, 0, false, false); /* the runner's tofu plan ends */
	end_step(out_of("acme", "show"), 0, PLAN_ADD);
	end_step(out_of("acme", "apply"), 0, NULL);
	ck_assert_str_eq(run_at("acme", "run-away", "status.phase"), "Succeeded");
	ck_assert_str_eq(run_at("acme", "run-away", "status.startedAt"), "2026-01-01T00:00:00Z");
	quiet();
	ck_assert(!has_out("acme"));
	for (size_t i = 0; i < fx.n; i++) {
		ck_assert_msg(strcmp(fx.steps[i].tenant, "beta") == 0 ||
		                  strcmp(fx.steps[i].run, "run-away") == 0,
		              "a second run of acme: %s", fx.steps[i].run);
	}
	ck_assert_uint_eq(runs_of("acme"), 1);
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("queue");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, debounce_gives_one_run);
	tcase_add_test(tc, changes_during_a_run_give_one_follow_up);
	tcase_add_test(tc, one_run_per_tenant_and_the_pool);
	tcase_add_test(tc, backoff_grows_is_capped_and_resets);
	tcase_add_test(tc, approval_waits_until_approved_or_canceled);
	tcase_add_test(tc, a_tenant_deleted_while_its_run_awaits_approval);
	tcase_add_test(tc, cancel_a_running_step);
	tcase_add_test(tc, recovery_interrupts_what_was_left);
	tcase_add_test(tc, recovery_takes_up_a_remote_run);
	tcase_add_test(tc, a_stop_interrupts_and_the_next_start_runs_again);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return rzt_run(engine_suite());
}
