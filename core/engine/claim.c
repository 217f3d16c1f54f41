/* core/engine/claim.c - a runner's claim of a remote step and the files it reports. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "core/auth/access.h"
#include "core/base/log.h"
#include "core/engine/engine-int.h"
#include "core/engine/executor.h"
#include "core/engine/runlog.h"
#include "core/report/report.h"

/* The most of a working directory a claim hands a runner (base64 aside). */
#define RZ_ENGINE_CLAIM_MAX (64 << 20)

/* The run in progress named run, or NULL. */
static struct run *run_named(rz_engine_t *e, const char *run)
{
	for (struct tenant *t = e->tenants; run != NULL && t != NULL; t = t->next) {
		if (t->run != NULL && strcmp(t->run->name, run) == 0) {
			return t->run;
		}
	}
	return NULL;
}

/* The claim's argv of step, argv[0] "tofu": the runner runs its own tofu.binary. */
static json_t *step_argv(const struct run *r, enum step step)
{
	char out[96], file[80];
	bool destroy = r->op == RZ_OP_DESTROY;

	snprintf(file, sizeof(file), "%s.plan", r->name);
	snprintf(out, sizeof(out), "-out=%s", file);
	switch (step) {
	case STEP_INIT:
		return json_pack("[s, s, s, s, s]", "tofu", "init", "-input=false", "-no-color",
		                 "-reconfigure");
	case STEP_PLAN:
		return destroy ? json_pack("[s, s, s, s, s, s]", "tofu", "plan", "-input=false",
		                           "-json", out, "-destroy")
		               : json_pack("[s, s, s, s, s]", "tofu", "plan", "-input=false",
		                           "-json", out);
	case STEP_SHOW:
		return json_pack("[s, s, s, s]", "tofu", "show", "-json", file);
	case STEP_APPLY:
		return json_pack("[s, s, s, s, s]", "tofu", "apply", "-input=false", "-json", file);
	default:
		return NULL;
	}
}

/* The working directory a runner needs for the step, as {name: base64}: the tenant's
 * composed *.tf.json and terraform.tfvars.json, and for show and apply the run's plan. */
static int claim_files(struct run *r, json_t *files, rz_err_t *err)
{
	char dir[PATH_MAX], path[PATH_MAX * 2], plan[96];
	size_t total = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	rz__engine_tenant_dir(r->e, r->t->name, dir, sizeof(dir));
	snprintf(plan, sizeof(plan), "%s.plan", r->name);
	if ((d = opendir(dir)) == NULL) {
		return rz_err_set(err, -errno, "the run's directory: %s", strerror(errno));
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		bool tf = len > 8 && strcmp(de->d_name + len - 8, ".tf.json") == 0;
		bool want = tf || strcmp(de->d_name, "terraform.tfvars.json") == 0 ||
		            (r->step >= STEP_SHOW && strcmp(de->d_name, plan) == 0);
		struct stat st;
		unsigned char *buf;
		char *b64;
		FILE *f;
		if (!want) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			continue;
		}
		if ((total += (size_t)st.st_size) > RZ_ENGINE_CLAIM_MAX) {
			rc = rz_err_set(err, -EFBIG, "the working directory is over %d bytes",
			                RZ_ENGINE_CLAIM_MAX);
			break;
		}
		buf = malloc((size_t)st.st_size + 1);
		b64 = malloc(
		    sodium_base64_ENCODED_LEN((size_t)st.st_size, sodium_base64_VARIANT_ORIGINAL));
		f = fopen(path, "rb");
		if (buf == NULL || b64 == NULL || f == NULL ||
		    fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
			rc = rz_err_set(err, -EIO, "reading %s failed", de->d_name);
		} else {
			sodium_bin2base64(b64,
			                  sodium_base64_ENCODED_LEN((size_t)st.st_size,
			                                            sodium_base64_VARIANT_ORIGINAL),
			                  buf, (size_t)st.st_size, sodium_base64_VARIANT_ORIGINAL);
			json_object_set_new(files, de->d_name, json_string(b64));
		}
		if (f != NULL) {
			fclose(f);
		}
		if (buf != NULL) {
			sodium_memzero(buf,
			               (size_t)st.st_size); /* a plan holds the state in clear */
		}
		free(buf);
		free(b64);
	}
	closedir(d);
	return rc;
}

/* Whether the Runner name is Ready with labels matching the run's selector: the labels it
 * says it has and an admin granted it (rz_kind_runner_serves), not what it says alone. */
static bool runner_may(rz_engine_t *e, const char *name, const json_t *selector, char *why,
                       size_t size)
{
	json_t *obj = NULL, *labels, *v;
	rz_err_t err = { 0 };
	const char *key, *phase;
	bool ok = true;

	if (rz_store_get(e->store, e->k_runner, NULL, name, &obj, &err) != 0) {
		snprintf(why, size, "no Runner \"%s\" (it heartbeats first)", name);
		return false;
	}
	labels = rz_kind_runner_serves(obj);
	phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
	if (phase == NULL || strcmp(phase, "Ready") != 0) {
		snprintf(why, size, "Runner \"%s\" is %s, not Ready", name, phase ? phase : "new");
		ok = false;
	}
	json_object_foreach((json_t *)selector, key, v)
	{
		json_t *have = json_object_get(labels, key);
		if (ok && (!json_is_string(have) || !json_equal(have, v))) {
			snprintf(why, size,
			         "Runner \"%s\" is not granted the label %s=%s the run selects "
			         "(its spec.labels and its runner.labels must both have it)",
			         name, key, json_string_value(v) ?: "");
			ok = false;
		}
	}
	json_decref(labels);
	json_decref(obj);
	return ok;
}

/* The event key of a claim: the runner authenticates the step's events with it
 * (core/remote/dispatch.h). Derived from the daemon's secret and the claim (run, step,
 * runner): a restarted daemon derives it again for the step it takes up, and no other
 * runner can. */
void rz__engine_event_key(const rz_engine_t *e, const char *run, const char *step,
                          const char *runner, unsigned char out[RZ_EXEC_KEY_LEN])
{
	unsigned char base[RZ_DERIVED_KEY_LEN];
	crypto_auth_hmacsha256_state st;

	rz_auth_derive_key(e->auth, "runner-events", base);
	crypto_auth_hmacsha256_init(&st, base, sizeof(base));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)run, strlen(run) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)step, strlen(step) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)runner, strlen(runner) + 1);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(base, sizeof(base));
}

/* Who claimed each of a remote run's steps so far, as status.stepRunners. */
static json_t *step_runners(const struct run *r)
{
	json_t *o = json_object();

	for (int k = 0; k < RZ_ENGINE_STEPS; k++) {
		if (r->step_runner[k][0] != '\0') {
			json_object_set_new(o, rz_engine_steps[k], json_string(r->step_runner[k]));
		}
	}
	return o;
}

/* A claim in the run's log, as a line of tofu's JSON UI (the name is a DNS label, the step
 * one of rz_engine_steps: nothing to escape). */
static void claim_logged(struct run *r, const char *runner, const char *step)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
	                 "{\"@level\":\"info\",\"@message\":\"runner %s claimed the %s step\","
	                 "\"@module\":\"rezuscloud\",\"type\":\"log\"}",
	                 runner, step);

	if (r->log != NULL && n > 0 && (size_t)n < sizeof(line)) {
		rz_runlog_line(r->log, line, (size_t)n);
	}
}

/* POST /api/v1/runners/{name}/claims {"run", "step"}: the step's argv, environment and
 * working directory to the runner that takes its job; 409 when the run is over or the step
 * is not the one waiting (a job delivered again: the runner acks and drops it), 403 when the
 * runner may not run the tenant. */
void rz__engine_h_claim(rz_req_t *req, void *ctx)
{
	rz_engine_t *e = ctx;
	const rz_principal_t *p = rz_access_principal(req);
	const char *name = rz_req_param(req, "name");
	size_t len = 0;
	const char *body = rz_req_body(req, &len);
	json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL, *reply, *files, *env;
	const char *run = json_string_value(json_object_get(j, "run"));
	const char *jstep = json_string_value(json_object_get(j, "step"));
	char step[8] = "", key_hex[2 * RZ_EXEC_KEY_LEN + 1];
	unsigned char key[RZ_EXEC_KEY_LEN];
	static char vars[MAX_ENV][PATH_MAX + 64];
	const char *envv[MAX_ENV + 1] = { NULL };
	struct run *r;
	size_t n = 0;
	char why[256];
	rz_err_t err = { 0 };

	if (p == NULL || !p->runner_scope) {
		rz_reply_error(req, 403, NULL, "only a runner token claims runs");
		json_decref(j);
		return;
	}
	if (run == NULL || jstep == NULL || json_object_size(j) != 2 ||
	    strlen(jstep) >= sizeof(step)) {
		json_t *st =
		    rz_status_new(422, NULL, "a claim is {\"run\": \"...\", \"step\": \"...\"}");
		rz_status_add_cause(st, run == NULL ? "run" : "step", "FieldValueRequired",
		                    "a string");
		rz_reply_status(req, st);
		json_decref(j);
		return;
	}
	snprintf(step, sizeof(step), "%s", jstep);
	r = run_named(e, run);
	if (r == NULL || !r->remote || !r->dispatched || r->claimed || r->step >= STEP_DONE ||
	    strcmp(rz_engine_steps[r->step], step) != 0) {
		rz_reply_error(req, 409, NULL,
		               "run \"%s\" has no %s step waiting for a runner (finished, claimed, "
		               "or another step)",
		               run, step);
		json_decref(j);
		return;
	}
	json_decref(j);
	if (!runner_may(e, name, r->selector, why, sizeof(why))) {
		rz_reply_error(req, 403, NULL, "%s", why);
		return;
	}
	files = json_object();
	if (claim_files(r, files, &err) != 0) {
		json_decref(files);
		rz_reply_error(req, 500, NULL, "%s", err.msg);
		return;
	}
	env = json_object();
	rz__engine_step_env(r, envv, &n, vars);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(envv[i], '=');
		char k[128];
		snprintf(k, sizeof(k), "%.*s", (int)(eq - envv[i]), envv[i]);
		json_object_set_new(env, k, json_string(eq + 1));
		sodium_memzero(vars[i], sizeof(vars[i]));
	}
	rz__engine_event_key(e, r->name, step, name, key);
	sodium_bin2hex(key_hex, sizeof(key_hex), key, sizeof(key));
	reply = json_pack("{s:s, s:s, s:s, s:o, s:o*, s:o, s:I, s:I, s:o, s:o}", "run", r->name,
	                  "tenant", r->t->name, "step", step, "argv", step_argv(r, r->step), "init",
	                  r->step != STEP_INIT ? step_argv(r, STEP_INIT) : NULL, "env", env,
	                  "timeoutMs", (json_int_t)e->o.timeout_ms, "killGraceMs",
	                  (json_int_t)e->o.kill_grace_ms, "files", files, "upload",
	                  r->step == STEP_PLAN   ? json_pack("[s]", "plan")
	                  : r->step == STEP_SHOW ? json_pack("[s]", "show.json")
	                                         : json_array());
	r->claimed = true;
	snprintf(r->runner, sizeof(r->runner), "%s", name);
	snprintf(r->step_runner[r->step], sizeof(r->step_runner[r->step]), "%s", name);
	json_object_set_new(reply, "eventKey", json_string(key_hex));
	sodium_memzero(key_hex, sizeof(key_hex));
	e->exec->claimed(e->exec->ctx, r->name, name, key);
	sodium_memzero(key, sizeof(key));
	claim_logged(r, name, step);
	if (r->stored) {
		char msg[128];
		snprintf(msg, sizeof(msg), "claimed by runner %s", name);
		rz_report_run_condition(e->store, r->t->name, r->name, "Scheduled", "True",
		                        "Claimed", msg,
		                        json_pack("{s:s, s:s, s:o}", "runner", name, "claimedStep",
		                                  step, "stepRunners", step_runners(r)));
		r->scheduled = 2;
	}
	rz_logkv(RZ_LOG_INFO, "engine", "runner claimed a step", "run", r->name, "step", step,
	         "runner", name, NULL);
	rz_reply_json(req, 200, reply); /* the run's secret: over HTTPS, never over NATS */
}

/* PUT /api/v1/runners/{name}/claims/{run}/files/{file}: what the daemon keeps of a remote
 * step, from the runner that claimed it: "plan" (the plan step's plan file) and
 * "show.json" (show's output, the plan as JSON). */
void rz__engine_h_file(rz_req_t *req, void *ctx)
{
	rz_engine_t *e = ctx;
	const rz_principal_t *p = rz_access_principal(req);
	const char *name = rz_req_param(req, "name"), *file = rz_req_param(req, "file");
	struct run *r = run_named(e, rz_req_param(req, "run"));
	size_t len = 0;
	const char *body = rz_req_body(req, &len);

	if (p == NULL || !p->runner_scope) {
		rz_reply_error(req, 403, NULL, "only a runner token reports a run's files");
		return;
	}
	if (r == NULL || !r->claimed || strcmp(r->runner, name) != 0) {
		rz_reply_error(req, 409, NULL, "runner \"%s\" holds no step of run \"%s\"", name,
		               rz_req_param(req, "run"));
		return;
	}
	if (strcmp(file, "plan") == 0 && r->step == STEP_PLAN) {
		char dir[PATH_MAX], path[PATH_MAX * 2];
		int fd;
		rz__engine_tenant_dir(e, r->t->name, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s.plan", dir, r->name);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || (len > 0 && write(fd, body, len) != (ssize_t)len) || close(fd) != 0) {
			rz_reply_error(req, 500, NULL, "cannot keep the plan: %s", strerror(errno));
			return;
		}
	} else if (strcmp(file, "show.json") == 0 && r->step == STEP_SHOW) {
		if (len > SHOW_MAX || (len > 0 && body == NULL)) {
			r->show.cut = true;
		} else {
			char *copy = malloc(len + 1);
			if (copy == NULL) {
				rz_reply_error(req, 503, NULL, "out of memory");
				return;
			}
			memcpy(copy, body, len);
			copy[len] = '\0';
			if (r->show.p != NULL) {
				sodium_memzero(r->show.p, r->show.len);
			}
			free(r->show.p);
			r->show.p = copy;
			r->show.len = len;
			r->show.cap = len + 1;
		}
	} else {
		rz_reply_error(req, 404, NULL, "no file \"%s\" for the %s step", file,
		               rz_engine_steps[r->step < STEP_DONE ? r->step : STEP_APPLY]);
		return;
	}
	rz_reply_status(req, rz_status_new(200, "", "kept"));
}
