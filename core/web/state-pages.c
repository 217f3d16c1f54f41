/* core/web/state-pages.c - the WebUI's state versions tab of a tenant (an admin's): the TF
 * state's versions, each one's download, a rollback through a confirmation naming the
 * version, and the lock held on the state with a force-unlock through a confirmation naming
 * its holder. Every read and write goes through the API's own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"
#include "core/web/tabs.h"

#define MAX_VERSIONS 100 /* state versions listed, newest first */

static void get_state(rz_req_t *req, void *ctx);
static void get_rollback(rz_req_t *req, void *ctx);
static void post_rollback(rz_req_t *req, void *ctx);
static void get_download(rz_req_t *req, void *ctx);
static void get_unlock(rz_req_t *req, void *ctx);
static void post_unlock(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/state", get_state),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/state/{version}/rollback", get_rollback),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/state/{version}/rollback", post_rollback),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/state/{version}/download", get_download),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/state/unlock", get_unlock),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/state/unlock", post_unlock),
};

static const char *tenant_of(const rz__page_t *pg)
{
	return rz_req_param(pg->req, "tenant");
}

/* ------------------------------------------------------------------ state versions */

/* A version number of the URL: 1 to 2^53, or 0. */
static long long version_param(const rz__page_t *pg)
{
	const char *s = rz_req_param(pg->req, "version");
	char *end = NULL;
	long long n;

	if (s == NULL || s[0] < '1' || s[0] > '9' || strlen(s) > 15) {
		return 0;
	}
	n = strtoll(s, &end, 10);
	return end != NULL && *end == '\0' ? n : 0;
}

static json_t *version_row(const json_t *it)
{
	json_t *serial = json_object_get(it, "serial");

	char human[32];

	const char *by = rz__str(it, "run");
	json_t *row;

	rz_ui_bytes(human, sizeof(human), json_integer_value(json_object_get(it, "size")));
	row = json_pack(
	    "{s:I, s:s, s:o, s:s, s:s, s:I, s:s, s:b, s:s}", "version",
	    json_integer_value(json_object_get(it, "version")), "time", rz__str(it, "time"), "when",
	    rz__when(rz__str(it, "time")), "lineage", rz__str(it, "lineage"), "run", by, "size",
	    json_integer_value(json_object_get(it, "size")), "human", human, "current",
	    json_is_true(json_object_get(it, "current")), "serial", serial ? "" : "none");
	/* "run/run-86e85c10": the run, a link to its page; another writer as its name */
	if (strncmp(by, "run/", 4) == 0 && by[4] != '\0') {
		json_object_set_new(row, "runId", json_string(by + 4));
	} else {
		json_object_set_new(row, "by",
		                    json_string(strchr(by, '/') ? strchr(by, '/') + 1 : by));
	}
	return row;
}

/* The lock on the state, as the list says ({id, who, operation, created, when}), or NULL. */
static json_t *lock_view(const json_t *list)
{
	const json_t *l = json_object_get(list, "lock");
	const char *op = rz__str(l, "operation");

	if (l == NULL) {
		return NULL;
	}
	/* tofu's "OperationTypeApply": "apply" */
	char lower[64];

	if (strncmp(op, "OperationType", 13) == 0 && op[13] != '\0') {
		op += 13;
	}
	/* "Apply": "apply", as runs' operations are said everywhere */
	snprintf(lower, sizeof(lower), "%s", op);
	for (char *c = lower; *c != '\0'; c++) {
		*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
	}
	return json_pack("{s:s, s:s, s:s, s:o}", "id", rz__str(l, "id"), "who",
	                 rz__str(l, "who")[0] ? rz__str(l, "who") : "someone", "operation", lower,
	                 "when", rz__when(rz__str(l, "created")[0] ? rz__str(l, "created") : NULL));
}

/* The versions of slot 1, each with its serial as text. */
static json_t *versions(rz__page_t *pg, long long only, json_t **found)
{
	json_t *rows = json_array(), *it;
	size_t i;

	*found = NULL;
	json_array_foreach(rz__items(rz__page_got(pg, 1)), i, it)
	{
		json_t *row;
		char serial[32];
		if (i >= MAX_VERSIONS && only == 0) {
			break;
		}
		row = version_row(it);
		if (json_object_get(it, "serial") != NULL) {
			snprintf(serial, sizeof(serial), "%lld",
			         (long long)json_integer_value(json_object_get(it, "serial")));
			json_object_set_new(row, "serial", json_string(serial));
		}
		if (only != 0 && json_integer_value(json_object_get(it, "version")) == only) {
			*found = json_incref(row);
		}
		json_array_append_new(rows, row);
	}
	return rows;
}

static void state_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *found, *rows;

	if (!rz__tenant_head(pg, "state", "State versions")) {
		return;
	}
	rows = versions(pg, 0, &found);
	json_object_set_new(v, "versions", rows);
	json_object_set_new(v, "lock", lock_view(rz__page_got(pg, 1)));
	rz__tab_toast(pg);
	json_object_set_new(v, "noVersions", json_boolean(json_array_size(rows) == 0));
	rz__page_read_error(pg, 1, "the state versions");
	rz__page_render(pg, "pages/state", pg->code ? pg->code : 200);
}

static void state_page(rz__page_t *pg)
{
	pg->ready = state_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/state", tenant_of(pg));
	rz__page_release(pg);
}

/* State versions are for admins: the API lets a viewer list them, but only an admin can roll
 * back, and the page offers nothing else. */
static bool admin_only(rz__page_t *pg)
{
	if (!rz__may(pg, RZ_ROLE_ADMIN)) {
		rz__page_error(pg, 403, "State versions are for administrators.");
		return false;
	}
	return true;
}

static void get_state(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg) && admin_only(pg)) {
		state_page(pg);
	}
}

static void rollback_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *found, *rows;

	if (!rz__tenant_head(pg, "state", "Roll back the state")) {
		return;
	}
	rows = versions(pg, version_param(pg), &found);
	json_decref(rows);
	if (found == NULL) {
		rz__page_error(pg, 404, "There is no such state version.");
		return;
	}
	json_object_set_new(v, "target", found);
	rz__page_render(pg, "pages/rollback-state", pg->code ? pg->code : 200);
}

static void get_rollback(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg) || !admin_only(pg)) {
		return;
	}
	if (version_param(pg) == 0) {
		rz__page_error(pg, 404, "There is no such state version.");
		return;
	}
	pg->ready = rollback_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/state", tenant_of(pg));
	rz__page_release(pg);
}

static void rolled_back(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		state_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/state", tenant_of(pg));
	rz__page_redirect(pg, path, "rolledback");
}

static void post_rollback(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[200];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	if (version_param(pg) == 0) {
		rz__page_error(pg, 404, "There is no such state version.");
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/state/rollback", tenant_of(pg));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:I}", "version", (json_int_t)version_param(pg)), rolled_back);
}

/* ------------------------------------------------------------------ a version's file */

/* The API's answer as a file: never rendered into a page (it holds secrets). */
static void version_got(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char disp[200];

	if (code != 200 || r->truncated) {
		rz__page_error(pg,
		               code == 404   ? 404
		               : code >= 400 ? code
		                             : 502,
		               code == 404 ? "There is no such state version."
		                           : "The state version cannot be read.");
		(void)body;
		return;
	}
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s-state-v%lld.json\"", tenant_of(pg),
	         version_param(pg));
	rz_req_add_header(pg->req, "Content-Disposition", disp);
	rz_req_add_header(pg->req, "Cache-Control", "no-store");
	rz_req_add_header(pg->req, "Content-Security-Policy", "default-src 'none'; sandbox");
	rz_reply(pg->req, 200, "application/json", r->body, r->len);
	rz__page_free(pg);
}

static void get_download(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);
	char target[200];

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg) || !admin_only(pg)) {
		return;
	}
	if (version_param(pg) == 0) {
		rz__page_error(pg, 404, "There is no such state version.");
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/state/%lld", tenant_of(pg),
	         version_param(pg));
	rz__page_act(pg, "GET", target, NULL, NULL, version_got);
}

/* ------------------------------------------------------------------ force-unlock */

static void unlock_ready(rz__page_t *pg)
{
	json_t *lock;

	if (!rz__tenant_head(pg, "state", "Force-unlock the state")) {
		return;
	}
	lock = lock_view(rz__page_got(pg, 1));
	if (rz__page_got(pg, 1) == NULL) {
		rz__page_error(pg, 502, "The state's lock cannot be read.");
		json_decref(lock);
		return;
	}
	json_object_set_new(pg->view, "lock", lock ? lock : json_null());
	json_object_set_new(pg->view, "free", json_boolean(lock == NULL));
	rz__page_render(pg, "pages/unlock-state", pg->code ? pg->code : 200);
}

static void unlock_page(rz__page_t *pg)
{
	pg->ready = unlock_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/state", tenant_of(pg));
	rz__page_release(pg);
}

static void get_unlock(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg) && admin_only(pg)) {
		unlock_page(pg);
	}
}

static void unlocked(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (code < 200 || code >= 300) {
		rz__page_toast(pg, false,
		               code == 403 ? "Only an administrator can force-unlock the state."
		               : rz__str(body, "message")[0] ? rz__str(body, "message")
		                                             : "The unlock failed.");
		pg->code = code >= 400 ? code : 502;
		unlock_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/state", tenant_of(pg));
	rz__page_redirect(pg, path, "unlocked");
}

/* The TF backend's UNLOCK without lock info: an admin's force-unlock, audited by the API. */
static void post_unlock(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/tfstate/%s", tenant_of(pg));
	rz__page_act(pg, "UNLOCK", target, NULL, NULL, unlocked);
}

/* ------------------------------------------------------------------ routes */

int rz__state_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
