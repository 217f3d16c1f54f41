/* core/web/runner-pages.c - the remote runners (docs/runners.md): each Runner's phase as a
 * badge, its granted labels and those refused, its version, capacity and runs, and when it
 * was last heard from; live through the API's watch of Runners (core/web/live.c). With none,
 * the page says how runs are served meanwhile and how to add one. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/web/page.h"

static void get_runners(rz_req_t *req, void *ctx);
static void get_live_runners(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/runners", get_runners),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/runners", get_live_runners),
};

/* "k=v, k=v" of a label object into buf ("" when none). */
static const char *labels_text(const json_t *labels, char *buf, size_t size)
{
	const char *k;
	json_t *v;

	buf[0] = '\0';
	json_object_foreach((json_t *)labels, k, v)
	{
		size_t n = strlen(buf);
		if (n + 1 >= size) {
			break;
		}
		snprintf(buf + n, size - n, "%s%s=%s", n ? ", " : "", k,
		         json_string_value(v) ? json_string_value(v) : "");
	}
	return buf;
}

/* A Runner's row: a Runner made by an admin before its first heartbeat has no phase yet. */
static json_t *runner_row(const json_t *r)
{
	const json_t *st = json_object_get(r, "status");
	const char *phase = rz__str(r, "status.phase");
	char granted[512], refused[512];
	json_int_t running = (json_int_t)json_array_size(json_object_get(st, "running"));
	json_t *row;

	row = json_pack(
	    "{s:s, s:o, s:s, s:s, s:s, s:I, s:I, s:o, s:b}", "name", rz__str(r, "metadata.name"),
	    "phase", rz__badge(phase[0] ? phase : "Never seen"), "labels",
	    labels_text(json_object_get(json_object_get(r, "spec"), "labels"), granted,
	                sizeof(granted)),
	    "refused", labels_text(json_object_get(st, "refusedLabels"), refused, sizeof(refused)),
	    "version", rz__str(r, "status.version"), "concurrency",
	    json_integer_value(json_object_get(st, "concurrency")), "running",
	    (json_int_t)json_array_size(json_object_get(st, "running")), "lastSeen",
	    rz__when(rz__str(r, "status.lastHeartbeat")[0] ? rz__str(r, "status.lastHeartbeat")
	                                                   : NULL),
	    "hasRefused", json_object_size(json_object_get(st, "refusedLabels")) > 0);
	/* a runner never seen has no heartbeat and no slots to say: its badge says it */
	json_object_set_new(row, "seen", json_boolean(rz__str(r, "status.lastHeartbeat")[0]));
	json_object_set_new(
	    row, "hasSlots",
	    json_boolean(json_integer_value(json_object_get(st, "concurrency")) > 0));
	json_object_set_new(row, "runsWord", json_string(running == 1 ? "run" : "runs"));
	return row;
}

static void runners_ready(rz__page_t *pg)
{
	json_t *rows = json_array(), *it;
	size_t i;

	if (rz__read_failed(pg, 0, "the runners")) {
		json_decref(rows);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 0)), i, it)
	{
		json_array_append_new(rows, runner_row(it));
	}
	rz__nav(pg, "navRunners", "Runners");
	json_object_set_new(pg->view, "rows", rows);
	rz__page_render(pg, "pages/runners", 200);
}

static void get_runners(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		pg->ready = runners_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/runners");
		rz__page_release(pg);
	}
}

static void get_live_runners(rz_req_t *req, void *ctx)
{
	rz__live_table(ctx, req, "/api/v1/runners?watch=true", "parts/runner-rows", runner_row);
}

int rz__runner_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
