/* core/web/audit-pages.c - the WebUI's audit log (an admin's): the API's rows with its
 * filters as query parameters, paged with its limit and continue. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/web/page.h"

#define AUDIT_PAGE 50 /* audit rows a page shows, unless ?limit= (1 to AUDIT_MAX) says */
#define AUDIT_MAX  500
#define QUERY_MAX  900 /* the audit filters as a query string, at most */
#define STR_(x)    #x
#define STR(x)     STR_(x)

#define AUDIT_POLL_MS 1000 /* the audit log has no watch: its newest rows are read this often */
#define AUDIT_PART    "parts/audit-rows"

static void get_audit(rz_req_t *req, void *ctx);
static void get_live_audit(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/audit", get_audit),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/audit", get_live_audit),
};

/* ------------------------------------------------------------------ audit */

static const char *const audit_filters[] = { "user",    "verb",  "kind",  "tenant",
	                                     "outcome", "since", "until", "limit" };

/* A time of the filter form: RFC 3339 as given, or a browser's "YYYY-MM-DDTHH:MM[:SS]"
 * (taken as UTC) completed to one. */
static const char *filter_time(const char *v, char *buf, size_t size)
{
	size_t n = v ? strlen(v) : 0;

	if (n == 16 && v[10] == 'T') {
		snprintf(buf, size, "%s:00Z", v);
		return buf;
	}
	if (n == 19 && v[10] == 'T') {
		snprintf(buf, size, "%sZ", v);
		return buf;
	}
	return v;
}

/* The API's query for the page's filters (and continue when cont). */
static bool audit_query(rz__page_t *pg, char *q, size_t size, bool cont)
{
	bool fits = true;

	q[0] = '\0';
	for (size_t i = 0; i < sizeof(audit_filters) / sizeof(audit_filters[0]); i++) {
		char t[40];
		const char *v = rz_req_query(pg->req, audit_filters[i]);
		if (i == 5 || i == 6) {
			v = filter_time(v, t, sizeof(t));
		}
		fits = fits && rz__query_add(q, size, audit_filters[i], v);
	}
	if (cont) {
		fits =
		    fits && rz__query_add(q, size, "continue", rz_req_query(pg->req, "continue"));
	}
	return fits;
}

static void audit_rows(rz__page_t *pg, json_t *list, bool filtered);

/* Whether the page's query filters anything (limit does not). */
static bool audit_filtered(const rz__page_t *pg)
{
	for (size_t i = 0; i < 7; i++) {
		const char *v = rz_req_query(pg->req, audit_filters[i]);
		if (v != NULL && v[0] != '\0') {
			return true;
		}
	}
	return false;
}

static void audit_ready(rz__page_t *pg)
{
	json_t *list = rz__page_got(pg, 0), *values = json_object();
	bool filtered = audit_filtered(pg);
	size_t i;

	for (i = 0; i < sizeof(audit_filters) / sizeof(audit_filters[0]); i++) {
		const char *v = rz_req_query(pg->req, audit_filters[i]);
		json_object_set_new(values, audit_filters[i], json_string(v ? v : ""));
		if (i == 4) {
			json_object_set_new(values, "outcomeSuccess",
			                    json_boolean(v && strcmp(v, "success") == 0));
			json_object_set_new(values, "outcomeFailure",
			                    json_boolean(v && strcmp(v, "failure") == 0));
		}
	}
	json_object_set_new(pg->view, "form", json_pack("{s:o}", "values", values));
	rz__nav(pg, "navAudit", "Audit log");
	if (list == NULL && rz__page_code(pg, 0) == 400) {
		json_object_set_new(json_object_get(pg->view, "form"), "errors",
		                    json_pack("{s:s}", "filters",
		                              "A filter is not valid: times are RFC 3339 (such as "
		                              "2026-12-01T19:00:00Z) and the outcome is success or "
		                              "failure."));
		rz__page_toast(pg, false, "A filter is not valid.");
		pg->code = 422;
	} else if (rz__read_failed(pg, 0, "the audit log")) {
		return;
	}
	audit_rows(pg, list, filtered);
	if (rz_req_query(pg->req, "continue") == NULL) {
		/* the newest rows follow what is recorded (the stream's query: the filters of
		 * view.form.values); an older page stays as it is */
		json_object_set_new(pg->view, "live", json_true());
		rz__live_view_have(pg, AUDIT_PART, "liveHave");
	}
	rz__page_render(pg, "pages/audit", pg->code ? pg->code : 200);
}

/* view.rows and what goes with them (empty, filtered, the links to other pages) from list,
 * as the page and its live region show them. */
static void audit_rows(rz__page_t *pg, json_t *list, bool filtered)
{
	json_t *rows = json_array(), *it;
	const char *next = rz__str(list, "metadata.continue");
	char q[QUERY_MAX + 16], more[QUERY_MAX + 300];
	size_t i;

	json_array_foreach(rz__items(list), i, it)
	{
		json_int_t code = json_integer_value(json_object_get(it, "code"));
		const char *err = rz__str(it, "error");
		char ctext[16];
		snprintf(ctext, sizeof(ctext), "%lld", (long long)code);
		json_array_append_new(
		    rows,
		    json_pack("{s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:b, s:s}",
		              "when", rz__when(rz__str(it, "time")), "user", rz__str(it, "user"),
		              "role", rz__str(it, "role"), "sourceIP", rz__str(it, "sourceIP"),
		              "verb", rz__str(it, "verb"), "kind", rz__str(it, "kind"), "tenant",
		              rz__str(it, "tenant"), "name", rz__str(it, "name"), "code", "text",
		              ctext, "tone", code >= 400 ? "bad" : "ok", "failed", code >= 400,
		              "error", err));
	}
	json_object_set_new(pg->view, "empty", json_boolean(json_array_size(rows) == 0));
	json_object_set_new(pg->view, "rows", rows);
	json_object_set_new(pg->view, "filtered", json_boolean(filtered));
	if (next[0] != '\0' && audit_query(pg, q, QUERY_MAX, false) &&
	    rz__query_add(q, QUERY_MAX + 16, "continue", next)) {
		snprintf(more, sizeof(more), "/audit?%s", q);
		json_object_set_new(pg->view, "next", json_string(more));
	}
	if (rz_req_query(pg->req, "continue") != NULL && audit_query(pg, q, QUERY_MAX, false)) {
		snprintf(more, sizeof(more), "/audit%s%s", q[0] ? "?" : "", q);
		json_object_set_new(pg->view, "first", json_string(more));
	}
}

/* The API's path of the page's rows into path; NULL, or what is wrong with the query. */
static const char *audit_path(rz__page_t *pg, char *path, size_t size)
{
	const char *limit = rz_req_query(pg->req, "limit");
	char q[QUERY_MAX], *end = NULL;
	long n;

	if (limit != NULL && limit[0] == '\0') {
		limit = NULL; /* an empty field limits nothing */
	}
	n = limit ? strtol(limit, &end, 10) : AUDIT_PAGE;

	if (limit != NULL && (end == limit || *end != '\0' || n < 1 || n > AUDIT_MAX)) {
		return "limit is a number of rows from 1 to 500.";
	}
	/* empty filter fields come as "": they filter nothing */
	if (!audit_query(pg, q, sizeof(q), true)) {
		return "The filters are too long.";
	}
	snprintf(path, size, "/api/v1/audit%s%s%s", q[0] ? "?" : "", q,
	         limit ? "" : (q[0] ? "&limit=" STR(AUDIT_PAGE) : "?limit=" STR(AUDIT_PAGE)));
	return NULL;
}

static void audit_read(rz__page_t *pg)
{
	char path[QUERY_MAX + 64];
	const char *wrong = audit_path(pg, path, sizeof(path));

	if (wrong != NULL) {
		rz__page_error(pg, 400, wrong);
		return;
	}
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "%s", path);
	rz__page_release(pg);
}

static void get_audit(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req); /* NULL: answered, and req is gone */

	if (pg != NULL) {
		pg->ready = audit_ready;
		audit_read(pg);
	}
}

/* The live region's read: the page's (its query, checked when the stream began, is the
 * page's filters). */
static void live_read(rz__page_t *pg)
{
	char path[QUERY_MAX + 64];

	(void)audit_path(pg, path, sizeof(path));
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "%s", path);
	rz__page_release(pg);
}

static void live_build(rz__page_t *pg)
{
	json_t *list = rz__page_got(pg, 0);

	if (list == NULL) {
		rz__live_view_keep(pg);
		return;
	}
	audit_rows(pg, list, audit_filtered(pg));
	json_object_set_new(pg->view, "live", json_true());
	rz__live_view_send(pg);
}

/* The newest audit rows of the page's filters, live: read again every AUDIT_POLL_MS (the
 * audit log has no watch), sent when they change. Admins only, as the page. */
static void get_live_audit(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);
	const rz__live_view_spec_t spec = {
		.read = live_read,
		.build = live_build,
		.tpl = AUDIT_PART,
		.event = "rows",
		.poll_ms = AUDIT_POLL_MS,
	};

	if (pg == NULL) {
		return;
	}
	if (pg->p != NULL && !rz__may(pg, RZ_ROLE_ADMIN)) {
		rz__page_error(pg, 403, "The audit log is for admins.");
		return;
	}
	{
		char path[QUERY_MAX + 64];
		const char *wrong = audit_path(pg, path, sizeof(path));
		if (wrong != NULL) {
			rz__page_error(pg, 400, wrong);
			return;
		}
	}
	rz__page_free(pg);
	rz__live_view(ctx, req, &spec, NULL);
}

int rz__audit_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
