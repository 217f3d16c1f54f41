/* core/web/event-pages.c - the installation's Events: every tenant's the user may see (the
 * API's /api/v1/events answers with those), or one tenant's, filtered by type, the involved
 * object's kind and the reason (GET query parameters, passed to the API as a fieldSelector),
 * the one that last happened first; live, read again when the API's watch of the same list
 * reports a change (core/web/live-view.c). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"

#define EVENTS_SHOWN 200 /* rows the page shows, the newest */
#define QUERY_MAX    600

static void get_events(rz_req_t *req, void *ctx);
static void get_live_events(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/events", get_events),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/events", get_live_events),
};

/* The kinds an Event is about (its involvedObject.kind), as the daemon records them. */
static const char *const kinds[] = { "Tenant",     "NodeGroup",  "Machine",    "Run",
	                             "UpgradeRun", "EtcdBackup", "EtcdRestore" };
static const char *const types[] = { "Normal", "Warning" };

/* ------------------------------------------------------------------ filters */

struct filters {
	const char *tenant, *type, *kind, *reason;
};

static const char *query(rz_req_t *req, const char *name)
{
	const char *v = rz_req_query(req, name);

	return v != NULL ? v : "";
}

static bool one_of(const char *v, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v, list[i]) == 0) {
			return true;
		}
	}
	return false;
}

/* The filters' errors, each beside its field ({} when every filter is valid). */
static json_t *filter_errors(const struct filters *f)
{
	json_t *e = json_object();
	char msg[128];
	size_t n = strlen(f->reason);

	if (f->tenant[0] != '\0' && !rz_format_dns1123_label(f->tenant, msg, sizeof(msg))) {
		json_object_set_new(e, "tenant", json_string("is not a tenant's name"));
	}
	if (f->type[0] != '\0' && !one_of(f->type, types, sizeof(types) / sizeof(types[0]))) {
		json_object_set_new(e, "type", json_string("is Normal or Warning"));
	}
	if (f->kind[0] != '\0' && !one_of(f->kind, kinds, sizeof(kinds) / sizeof(kinds[0]))) {
		json_object_set_new(e, "kind", json_string("is not a kind Events are about"));
	}
	for (size_t i = 0; i < n; i++) {
		char c = f->reason[i];
		if (n > 128 ||
		    !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			json_object_set_new(e, "reason",
			                    json_string("is a word of letters and digits, such as "
			                                "RunFailed"));
			break;
		}
	}
	return e;
}

/* The API's list path for valid filters: one tenant's Events or every tenant's, with a
 * fieldSelector for the others. False when it does not fit. */
static bool events_path(const struct filters *f, char *out, size_t size)
{
	char sel[QUERY_MAX] = "", q[QUERY_MAX + 32] = "";
	int n;

	if (f->type[0] != '\0') {
		snprintf(sel, sizeof(sel), "type=%s", f->type);
	}
	if (f->kind[0] != '\0') {
		size_t at = strlen(sel);
		snprintf(sel + at, sizeof(sel) - at, "%sinvolvedObject.kind=%s", at ? "," : "",
		         f->kind);
	}
	if (f->reason[0] != '\0') {
		size_t at = strlen(sel);
		snprintf(sel + at, sizeof(sel) - at, "%sreason=%s", at ? "," : "", f->reason);
	}
	if (!rz__query_add(q, sizeof(q), "fieldSelector", sel)) {
		return false;
	}
	if (f->tenant[0] != '\0') {
		n = snprintf(out, size, "/api/v1/tenants/%s/events%s%s", f->tenant, q[0] ? "?" : "",
		             q);
	} else {
		n = snprintf(out, size, "/api/v1/events%s%s", q[0] ? "?" : "", q);
	}
	return n > 0 && (size_t)n < size;
}

static void filters_of(rz_req_t *req, struct filters *f)
{
	f->tenant = query(req, "tenant");
	f->type = query(req, "type");
	f->kind = query(req, "kind");
	f->reason = query(req, "reason");
}

/* The filters as the view's form.values (and the choices with the current one selected). */
static json_t *filters_view(const struct filters *f)
{
	json_t *kv = json_array(), *tv = json_array();

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_array_append_new(kv, json_pack("{s:s, s:b}", "name", kinds[i], "selected",
		                                    strcmp(kinds[i], f->kind) == 0));
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		json_array_append_new(tv, json_pack("{s:s, s:b}", "name", types[i], "selected",
		                                    strcmp(types[i], f->type) == 0));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:b}", "tenant", f->tenant, "type",
	                 f->type, "kind", f->kind, "reason", f->reason, "kinds", kv, "types", tv,
	                 "filtered", f->tenant[0] || f->type[0] || f->kind[0] || f->reason[0]);
}

/* ------------------------------------------------------------------ rows */

static int by_last_desc(const void *a, const void *b)
{
	int c = strcmp(rz__str(*(json_t *const *)b, "last"), rz__str(*(json_t *const *)a, "last"));

	return c != 0
	           ? c
	           : strcmp(rz__str(*(json_t *const *)b, "id"), rz__str(*(json_t *const *)a, "id"));
}

static json_t *event_row(const json_t *e)
{
	const char *last = rz__str(e, "lastTimestamp"), *type = rz__str(e, "type");
	const char *tenant = rz__str(e, "metadata.tenant");

	if (last[0] == '\0') {
		last = rz__str(e, "metadata.creationTimestamp");
	}
	if (tenant[0] == '\0') {
		tenant = rz__str(e, "metadata.namespace");
	}
	json_t *row = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:b, s:{s:s, s:s}}", "id",
	    rz__str(e, "metadata.name"), "tenant", tenant, "kind",
	    rz__str(e, "involvedObject.kind"), "object", rz__str(e, "involvedObject.name"), "last",
	    last, "when", rz__when(last), "count", json_integer_value(json_object_get(e, "count")),
	    "repeated", json_integer_value(json_object_get(e, "count")) > 1, "type", "text",
	    type[0] ? type : "Normal", "tone", strcmp(type, "Warning") == 0 ? "bad" : "neutral");

	rz__event_words(e, row);
	return row;
}

/* view.rows: the newest EVENTS_SHOWN Events of the list in slot 0, the one that last
 * happened first; view.more when there are more. */
static void rows_view(rz__page_t *pg)
{
	json_t *items = rz__items(rz__page_got(pg, 0)), *rows = json_array();
	size_t n = json_array_size(items);
	json_t **v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v != NULL && i < n; i++) {
		v[i] = event_row(json_array_get(items, i));
	}
	if (v != NULL) {
		qsort(v, n, sizeof(*v), by_last_desc);
		for (size_t i = 0; i < n; i++) {
			if (i < EVENTS_SHOWN) {
				json_array_append_new(rows, v[i]);
			} else {
				json_decref(v[i]);
			}
		}
	}
	free(v);
	json_object_set_new(pg->view, "rows", rows);
	json_object_set_new(pg->view, "empty", json_boolean(n == 0));
	if (n > EVENTS_SHOWN) {
		json_object_set_new(
		    pg->view, "more",
		    json_pack("{s:i, s:I}", "shown", EVENTS_SHOWN, "total", (json_int_t)n));
	}
	if (rz__page_got(pg, 0) == NULL) {
		json_object_set_new(pg->view, "readError",
		                    json_pack("{s:i}", "code", rz__page_code(pg, 0)));
	}
}

/* ------------------------------------------------------------------ the page */

static void events_ready(rz__page_t *pg)
{
	rows_view(pg);
	rz__nav(pg, "navEvents", "Events");
	if (rz__page_code(pg, 0) == 404) {
		json_object_set_new(json_object_get(pg->view, "form"), "errors",
		                    json_pack("{s:s}", "tenant", "there is no such tenant"));
		pg->code = 404;
	}
	rz__page_render(pg, "pages/events", pg->code ? pg->code : 200);
}

/* The seed's filters (view.form.values) into the list's path and slot 0. */
static void read_events(rz__page_t *pg)
{
	const json_t *v = json_object_get(json_object_get(pg->view, "form"), "values");
	struct filters f = { rz__str(v, "tenant"), rz__str(v, "type"), rz__str(v, "kind"),
		             rz__str(v, "reason") };
	char path[QUERY_MAX + 200];

	rz__page_hold(pg);
	if (events_path(&f, path, sizeof(path))) {
		rz__page_fetch(pg, 0, "%s", path);
	}
	rz__page_release(pg);
}

static void get_events(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);
	struct filters f;
	json_t *errors;

	if (pg == NULL) {
		return;
	}
	filters_of(req, &f);
	errors = filter_errors(&f);
	json_object_set_new(pg->view, "form",
	                    json_pack("{s:o, s:o}", "values", filters_view(&f), "errors", errors));
	if (json_object_size(errors) > 0) {
		rz__nav(pg, "navEvents", "Events");
		json_object_set_new(pg->view, "rows", json_array());
		rz__page_toast(pg, false, "A filter is not valid: see beside it.");
		rz__page_render(pg, "pages/events", 422);
		return;
	}
	pg->ready = events_ready;
	read_events(pg);
}

/* ------------------------------------------------------------------ live */

static void live_ready(rz__page_t *pg)
{
	rows_view(pg);
	rz__live_view_send(pg);
}

static void get_live_events(rz_req_t *req, void *ctx)
{
	struct filters f;
	json_t *errors;
	char path[QUERY_MAX + 200];
	rz__live_view_spec_t spec = {
		.read = read_events, .build = live_ready, .tpl = "parts/event-rows", .event = "rows"
	};

	filters_of(req, &f);
	errors = filter_errors(&f);
	if (json_object_size(errors) > 0 || !events_path(&f, path, sizeof(path))) {
		json_decref(errors);
		rz_reply_error(req, 400, NULL, "a filter is not valid");
		return;
	}
	json_decref(errors);
	spec.watches[0] = path; /* copied by rz__live_view */
	rz__live_view(ctx, req, &spec, json_pack("{s:{s:o}}", "form", "values", filters_view(&f)));
}

int rz__event_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
