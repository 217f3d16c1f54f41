/* core/api/summary.c - /api/v1/summary: counts of tenants, machines, runs; the newest. */
#include <config.h>

#include <string.h>

#include "core/api/api-int.h"
#include "core/auth/access.h"

#define SUMMARY_RECENT_MAX 50
static const rz_route_param_t summary_query[] = {
	{ "recent", "integer",
	  "also the newest this many (1 to 50) runs that are Queued, Running or "
	  "AwaitingApproval (recent.activeRuns), that Failed (recent.failedRuns), and "
	  "Warning Events (recent.warnings), the last created first" },
	{ NULL, NULL, NULL },
};
static const int summary_errors[] = { 400, 0 };
const rz_route_doc_t rz__summary_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readSummary",
	  .summary = "how many tenants there are by status.phase, machines by status.stage and "
	             "runs by status.phase, counted by the store without reading the objects out; "
	             "with recent, the newest active and failed runs and Warning Events",
	  .query = summary_query,
	  .errors = summary_errors,
	  .response = "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\","
	              "\"description\":\"rezuscloud.io/v1\"},\"kind\":{\"type\":\"string\","
	              "\"description\":\"Summary\"},\"tenants\":{\"type\":\"object\","
	              "\"description\":\"The tenants the caller may see counted\","
	              "\"properties\":{\"total\":{\"type\":\"integer\",\"description\":\"How many "
	              "tenants the caller may see there are\"},\"by\":{\"type\":\"object\","
	              "\"description\":\"How many by status.phase (Unknown: none)\","
	              "\"additionalProperties\":{\"type\":\"integer\"}}}},"
	              "\"machines\":{\"type\":\"object\",\"description\":\"The machines of those "
	              "tenants counted\",\"properties\":{\"total\":{\"type\":\"integer\","
	              "\"description\":\"How many machines of those tenants there are\"},"
	              "\"by\":{\"type\":\"object\",\"description\":\"How many by status.stage "
	              "(Unknown: none)\",\"additionalProperties\":{\"type\":\"integer\"}}}},"
	              "\"runs\":{\"type\":\"object\",\"description\":\"The runs of those tenants "
	              "counted\",\"properties\":{\"total\":{\"type\":\"integer\","
	              "\"description\":\"How many runs of those tenants there are\"},"
	              "\"by\":{\"type\":\"object\",\"description\":\"How many by status.phase "
	              "(Unknown: none)\",\"additionalProperties\":{\"type\":\"integer\"}}}},"
	              "\"recent\":{\"type\":\"object\",\"description\":\"With ?recent: the "
	              "newest\",\"properties\":{\"activeRuns\":{\"type\":\"array\","
	              "\"description\":\"Runs Queued, Running or AwaitingApproval, the last "
	              "created first\",\"items\":{\"$ref\":\"#/components/schemas/Run\"}},"
	              "\"failedRuns\":{\"type\":\"array\",\"description\":\"Runs that Failed, the "
	              "last created first\",\"items\":{\"$ref\":\"#/components/schemas/Run\"}},"
	              "\"warnings\":{\"type\":\"array\",\"description\":\"Warning Events, the last "
	              "created first\",\"items\":{\"$ref\":\"#/components/schemas/Event\"}}}}}}" },
	{ 0 },
};

struct tally {
	json_t *by;
	json_int_t total;
};

static void tally(void *arg, const char *value, int64_t n)
{
	struct tally *t = arg;
	const char *key = value != NULL && value[0] != '\0' ? value : "Unknown";
	json_int_t had = json_integer_value(json_object_get(t->by, key));

	json_object_set_new(t->by, key, json_integer(had + (json_int_t)n));
	t->total += (json_int_t)n;
}

/* {"total": N, "by": {value: n}} for k's objects grouped by path; NULL after replying. */
static json_t *counts(struct rctx *c, rz_req_t *req, const rz_kind_t *k, const char *path)
{
	struct tally t = { json_object(), 0 };
	rz_err_t err = { 0 };
	int rc;

	if (rz_access_filtered(req)) { /* the tenants the principal may see */
		rc = rz_store_count_kept(c->api->store, k, path, rz_access_keep, req, tally, &t,
		                         &err);
	} else {
		rc = rz_store_count_by(c->api->store, k, path, tally, &t, &err);
	}

	if (rc != 0) {
		json_decref(t.by);
		rz__reply_store_error(req, k, NULL, rc, &err);
		return NULL;
	}
	return json_pack("{s:I, s:o}", "total", t.total, "by", t.by);
}

struct newest_to {
	json_t *out;
	rz_req_t *req; /* filtered: only the rows it keeps */
};

static int add_newest(void *arg, const rz_store_row_t *row)
{
	struct newest_to *to = arg;
	json_t *obj;

	if (to->req != NULL && !rz_access_keep(to->req, row->tenant, row->name)) {
		return 0;
	}
	obj = json_loadb(row->doc, row->len, 0, NULL);
	return obj == NULL || json_array_append_new(to->out, obj) != 0 ? RZ_EDB : 0;
}

/* How many objects the counts have with one of the values. */
static json_int_t counted(const json_t *counts, const char *const *values)
{
	json_int_t n = 0;

	for (size_t i = 0; values[i] != NULL; i++) {
		n += json_integer_value(json_object_get(json_object_get(counts, "by"), values[i]));
	}
	return n;
}

/* The newest n objects of k whose path is one of values, the last created first (or the
 * latest by the member order names; none when known counts say there is none); NULL after
 * replying. */
static json_t *newest(struct rctx *c, rz_req_t *req, const rz_kind_t *k, const char *path,
                      const char *const *values, const char *order, const json_t *known, size_t n)
{
	json_t *out = json_array();
	struct newest_to to = { out, rz_access_filtered(req) ? req : NULL };
	rz_err_t err = { 0 };
	int rc =
	    known != NULL && counted(known, values) == 0
	        ? 0
	        : rz_store_newest(c->api->store, k, path, values, order, n, add_newest, &to, &err);

	if (rc < 0) {
		json_decref(out);
		rz__reply_store_error(req, k, NULL, rc, &err);
		return NULL;
	}
	return out;
}

/* {activeRuns, failedRuns, warnings}: the newest n of each (runs: the runs' counts); NULL
 * after replying. */
static json_t *recent(struct rctx *c, rz_req_t *req, const json_t *runs, size_t n)
{
	static const char *const going[] = { "Queued", "Running", "AwaitingApproval", NULL };
	static const char *const failed_phase[] = { "Failed", NULL };
	static const char *const warning[] = { "Warning", NULL };
	json_t *active = newest(c, req, c->api->kinds.run, "$.status.phase", going, NULL, runs, n);
	json_t *failed = NULL, *warnings;

	if (active == NULL ||
	    (failed = newest(c, req, c->api->kinds.run, "$.status.phase", failed_phase, NULL, runs,
	                     n)) == NULL ||
	    (warnings = newest(c, req, c->api->kinds.event, "$.type", warning, "$.lastTimestamp",
	                       NULL, n)) == NULL) {
		json_decref(active);
		json_decref(failed);
		return NULL;
	}
	return json_pack("{s:o, s:o, s:o}", "activeRuns", active, "failedRuns", failed, "warnings",
	                 warnings);
}

/* GET /api/v1/summary: counts of tenants, machines and runs, for a dashboard that must not
 * read every object to show how many there are; ?recent=N adds the newest N runs going and
 * failed, and Warning Events, so that it need not read those lists either. */
void rz__handle_summary(rz_req_t *req, void *ctx)
{
	struct rctx *c = ctx;
	const char *want = rz_req_query(req, "recent");
	json_t *tenants, *machines = NULL, *runs = NULL, *last = NULL, *out;
	int64_t n = 0;

	if (want != NULL && (strspn(want, "0123456789") != strlen(want) ||
	                     !rz_parse_int(want, 1, SUMMARY_RECENT_MAX, &n))) {
		rz_reply_error(req, 400, NULL, "invalid recent '%s': use 1 to %d", ECHO(want),
		               SUMMARY_RECENT_MAX);
		return;
	}
	if (rz_access_principal(req) != NULL && rz_access_principal(req)->role < RZ_ROLE_VIEW) {
		rz_access_filter(req); /* role none: its tenants' counts only */
	}
	tenants = counts(c, req, c->api->kinds.tenant, "$.status.phase");
	if (tenants == NULL ||
	    (machines = counts(c, req, c->api->kinds.machine, "$.status.stage")) == NULL ||
	    (runs = counts(c, req, c->api->kinds.run, "$.status.phase")) == NULL ||
	    (n > 0 && (last = recent(c, req, runs, (size_t)n)) == NULL)) {
		json_decref(tenants);
		json_decref(machines);
		json_decref(runs);
		return;
	}
	out = json_pack("{s:s, s:s, s:o, s:o, s:o}", "apiVersion", RZ_API_VERSION, "kind",
	                "Summary", "tenants", tenants, "machines", machines, "runs", runs);
	if (last != NULL) {
		json_object_set_new(out, "recent", last);
	}
	rz_reply_json(req, 200, out);
}
