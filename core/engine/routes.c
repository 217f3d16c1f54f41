/* core/engine/routes.c - the engine's route table: runs approved, canceled, logs; claims. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/auth/access.h"
#include "core/base/log.h"
#include "core/base/proc.h"
#include "core/engine/engine-int.h"
#include "core/engine/runlog.h"
#include "core/report/report.h"

static void h_approve(rz_req_t *req, void *ctx);
static void h_cancel(rz_req_t *req, void *ctx);
static void h_log(rz_req_t *req, void *ctx);

/* For the OpenAPI document (core/api/openapi.c). */
static const int run_errors[] = { 404, 409, 0 }, log_errors[] = { 400, 404, 0 };
static const rz_route_doc_t approve_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "approveRun",
	  .summary = "approve a run awaiting approval: it queues to apply",
	  .response = "Status",
	  .errors = run_errors },
	{ 0 },
};
static const rz_route_doc_t cancel_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "cancelRun",
	  .summary = "cancel a queued, waiting or running run",
	  .response = "Status",
	  .errors = run_errors },
	{ 0 },
};
static const rz_route_param_t log_query[] = {
	{ "format", "string", "json: the stored lines as tofu wrote them; otherwise human text" },
	{ "follow", "boolean", "stream the log as Server-Sent Events until the run ends" },
	{ NULL, NULL, NULL },
};
static const rz_route_doc_t log_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readRunLog",
	  .summary = "a run's log, its resource ids redacted",
	  .query = log_query,
	  .response = "{\"type\":\"string\"}",
	  .response_type = "text/plain",
	  .errors = log_errors },
	{ 0 },
};

static const int claim_errors[] = { 409, 422, 0 }, file_errors[] = { 404, 409, 0 };
static const rz_route_doc_t claim_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "claimRunnerStep",
	  .summary = "a runner token claims a remote run's step: its argv, environment and "
	             "working directory (409: not waiting any more)",
	  .request = "{\"type\":\"object\",\"properties\":{\"run\":{\"type\":\"string\","
	             "\"description\":\"The run's name\"},\"step\":{\"type\":\"string\","
	             "\"description\":\"The step: init, plan, show or apply\"}},"
	             "\"required\":[\"run\",\"step\"]}",
	  .response = "{\"type\":\"object\",\"properties\":{\"run\":{\"type\":\"string\","
	              "\"description\":\"The run's name\"},\"tenant\":{\"type\":\"string\","
	              "\"description\":\"The run's tenant\"},\"step\":{\"type\":\"string\","
	              "\"description\":\"The step: init, plan, show or apply\"},"
	              "\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	              "\"description\":\"The command line the runner executes (tofu and its "
	              "arguments)\"},\"init\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	              "\"description\":\"Commands to run first in the working directory, each a "
	              "line\"},\"env\":{\"type\":\"object\","
	              "\"additionalProperties\":{\"type\":\"string\"},\"description\":\"The "
	              "environment of the command, by name\"},\"timeoutMs\":{\"type\":\"integer\","
	              "\"description\":\"How long the step may run, in milliseconds, before it is "
	              "killed\"},\"killGraceMs\":{\"type\":\"integer\",\"description\":\"After a "
	              "SIGTERM, how long to wait before SIGKILL, in milliseconds\"},"
	              "\"files\":{\"type\":\"object\","
	              "\"additionalProperties\":{\"type\":\"string\",\"format\":\"byte\"},"
	              "\"description\":\"The working directory's files, by relative path, "
	              "base64\"},\"upload\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	              "\"description\":\"The files to report back once the step ends, by relative "
	              "path\"}}}",
	  .errors = claim_errors },
	{ 0 },
};
static const rz_route_doc_t file_doc[] = {
	{ .method = RZ_M_PUT,
	  .id = "reportRunnerFile",
	  .summary = "a runner token reports a claimed step's file (plan, show.json)",
	  .request = "{\"type\":\"string\",\"format\":\"binary\"}",
	  .request_type = "application/octet-stream",
	  .response = "Status",
	  .errors = file_errors },
	{ 0 },
};

/* The engine's routes: those of a tenant's runs (rz_engine_routes) and a runner token's only
 * routes (rz_engine_runner_routes, docs/runners.md), each registered with the engine as ctx. */
static const rz_route_t run_routes[] = {
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/tenants/{tenant}/runs/{name}/approve",
	  .fn = h_approve,
	  .role = RZ_ROLE_EDIT,
	  .kind = "Run",
	  .verb = "approve",
	  .doc = approve_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/tenants/{tenant}/runs/{name}/cancel",
	  .fn = h_cancel,
	  .role = RZ_ROLE_EDIT,
	  .kind = "Run",
	  .verb = "cancel",
	  .doc = cancel_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/tenants/{tenant}/runs/{name}/log",
	  .fn = h_log,
	  .role = RZ_ROLE_VIEW,
	  .kind = "Run",
	  .verb = "log",
	  .doc = log_doc },
};
static const rz_route_t runner_routes[] = {
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/runners/{name}/claims",
	  .fn = rz__engine_h_claim,
	  .role = RZ_ROLE_VIEW,
	  .kind = "RunnerClaim",
	  .verb = "claim",
	  .doc = claim_doc },
	{ .methods = RZ_M_PUT,
	  .pattern = "/api/v1/runners/{name}/claims/{run}/files/{file}",
	  .fn = rz__engine_h_file,
	  .role = RZ_ROLE_VIEW,
	  .kind = "RunnerClaim",
	  .verb = "report",
	  .doc = file_doc },
};

/* The run named in the path, when it is the tenant's current one; otherwise a reply. */
static struct run *current_run(rz_engine_t *e, rz_req_t *req)
{
	const char *tenant = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");
	struct tenant *t = rz__engine_tenant_of(e, tenant, false);
	json_t *obj = NULL;
	rz_err_t err = { 0 };

	if (t != NULL && t->run != NULL && strcmp(t->run->name, name) == 0) {
		return t->run;
	}
	if (rz_store_get(e->store, e->k_run, tenant, name, &obj, &err) != 0) {
		rz_reply_error(req, 404, NULL, "runs \"%s\" not found in tenant \"%s\"", name,
		               tenant);
		return NULL;
	}
	rz_reply_error(req, 409, NULL,
	               "run \"%s\" is %s: only a pending or running run can be "
	               "approved or canceled",
	               name,
	               json_string_value(json_object_get(json_object_get(obj, "status"), "phase"))
	                   ?: "not started");
	json_decref(obj);
	return NULL;
}

/* The optional body of an approval: {"reason": "..."} (JSON, at most 1024 bytes). Replies
 * and returns -1 when it is not that. */
static int approval_reason(rz_req_t *req, char *out, size_t size)
{
	size_t len = 0;
	const char *body = rz_req_body(req, &len);
	json_t *j, *v;
	json_error_t je;
	json_t *st;

	out[0] = '\0';
	if (body == NULL || len == 0) {
		return 0;
	}
	j = json_loadb(body, len, 0, &je);
	v = json_object_get(j, "reason");
	if (!json_is_object(j) ||
	    (v != NULL && (!json_is_string(v) || json_string_length(v) >= size ||
	                   json_string_length(v) > 1024)) ||
	    json_object_size(j) > (v != NULL ? 1u : 0u)) {
		st = rz_status_new(422, NULL, "the body of an approval is {\"reason\": \"...\"}");
		rz_status_add_cause(st, "reason", "FieldValueInvalid",
		                    "an optional string of at most 1024 bytes, and nothing else");
		rz_reply_status(req, st);
		json_decref(j);
		return -1;
	}
	snprintf(out, size, "%s", v ? json_string_value(v) : "");
	json_decref(j);
	return 0;
}

static void h_approve(rz_req_t *req, void *ctx)
{
	struct run *r = current_run(ctx, req);
	const rz_principal_t *who;
	char reason[1100];

	if (r == NULL) {
		return;
	}
	if (!r->awaiting) {
		rz_reply_error(req, 409, NULL, "run \"%s\" is not awaiting approval", r->name);
		return;
	}
	if (approval_reason(req, reason, sizeof(reason)) != 0) {
		return; /* answered */
	}
	who = rz_access_principal(req);
	if (reason[0] != '\0') {
		char detail[1200];
		snprintf(detail, sizeof(detail), "reason: %s", reason);
		rz_access_set_detail(req, detail);
	}
	r->awaiting = false;
	r->approved = true;
	rz_report_status(r->e->store, "Run", r->t->name, r->name,
	                 json_pack("{s:s, s:s, s:s}", "phase", rz_run_phase_name(RZ_RUN_QUEUED),
	                           "approvedBy", who ? who->user : "", "approvalReason", reason));
	rz_logkv(RZ_LOG_NOTICE, "engine", "run approved", "tenant", r->t->name, "run", r->name,
	         "by", who ? who->user : "", "reason", reason, NULL);
	rz_reply_status(
	    req, rz_status_new(200, "", "run approved: it applies on the next free pool slot"));
	rz__engine_push(r->t);
}

static void h_cancel(rz_req_t *req, void *ctx)
{
	struct tenant *t = rz__engine_tenant_of(ctx, rz_req_param(req, "tenant"), false);
	const char *name = rz_req_param(req, "name");
	struct run *r;

	if (t != NULL && strcmp(t->manual, name) == 0 &&
	    (t->run == NULL || strcmp(t->run->name, name) != 0)) {
		rz__engine_drop_manual(t, "canceled before it started");
		rz_reply_status(req, rz_status_new(200, "", "run canceled"));
		return;
	}
	if ((r = current_run(ctx, req)) == NULL) {
		return;
	}
	rz_reply_status(req, rz_status_new(200, "", "run canceled"));
	if (r->awaiting || !r->slot) {
		snprintf(r->error, sizeof(r->error), "canceled before its apply");
		rz__engine_finish(r, RZ_RUN_CANCELED, -1);
	} else if (r->remote && !r->claimed) {
		/* no runner holds it: its job, when a runner takes it, gets 409 at the claim */
		snprintf(r->error, sizeof(r->error), "canceled before a runner took its %s step",
		         rz_engine_steps[r->step]);
		rz__engine_finish(r, RZ_RUN_CANCELED, -1);
	} else if (r->remote) {
		r->e->exec->cancel(r->e->exec->ctx, r->name); /* the runner reports the exit */
	} else {
		rz_proc_cancel(r->proc); /* step_done finishes it as Canceled */
	}
}

/* GET …/runs/{name}/log: the run's tofu output as text; with ?follow=true as server-sent
 * events, one per line, live until the run ends (then an `end` event with its phase). */
static void h_log(rz_req_t *req, void *ctx)
{
	rz_engine_t *e = ctx;
	const char *tenant = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");
	const char *follow = rz_req_query(req, "follow");
	struct tenant *t = rz__engine_tenant_of(e, tenant, false);
	struct run *live = t && t->run && strcmp(t->run->name, name) == 0 ? t->run : NULL;
	char dir[PATH_MAX], path[PATH_MAX * 2];
	json_t *obj = NULL;
	rz_err_t err = { 0 };

	if (rz_store_get(e->store, e->k_run, tenant, name, &obj, &err) != 0) {
		rz_reply_error(req, 404, NULL, "runs \"%s\" not found in tenant \"%s\"", name,
		               tenant);
		return;
	}
	rz__engine_tenant_dir(e, tenant, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.log", dir, name);
	rz_runlog_serve(req, path, live ? live->log : NULL,
	                json_string_value(json_object_get(json_object_get(obj, "status"), "phase"))
	                    ?: "Queued",
	                follow != NULL && strcmp(follow, "true") == 0);
	json_decref(obj);
}

int rz_engine_runner_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(runner_routes), e, err);
}

int rz_engine_routes(rz_engine_t *e, rz_http_t *http, rz_err_t *err)
{
	int rc = rz_http_add_table(http, RZ_ROUTES(run_routes), e, err);

	return rc == 0 ? rz__engine_export_routes(e, http, err) : rc;
}
