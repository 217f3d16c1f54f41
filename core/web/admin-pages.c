/* core/web/admin-pages.c - the WebUI's daemon-wide pages: providers and backups, and what the
 * daemon-wide pages share (core/web/page.h: rz__admin_page, rz__confirm, ...). Every read and
 * write goes through the API's own route. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/web/page.h"

/* The routes of providers and backups (registered by rz_ui_routes with the UI as ctx). */
static void get_providers(rz_req_t *req, void *ctx);
static void get_backups(rz_req_t *req, void *ctx);
static void get_live_backups(rz_req_t *req, void *ctx);
static void post_backups(rz_req_t *req, void *ctx);
static void get_manifest(rz_req_t *req, void *ctx);
static void get_delete_backup(rz_req_t *req, void *ctx);
static void post_delete_backup(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/providers", get_providers),
	RZ__WEB_ROUTE(RZ_M_GET, "/backups", get_backups),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/backups", get_live_backups),
	RZ__WEB_ROUTE(RZ_M_POST, "/backups", post_backups),
	RZ__WEB_ROUTE(RZ_M_GET, "/backups/{name}/manifest", get_manifest),
	RZ__WEB_ROUTE(RZ_M_GET, "/backups/{name}/delete", get_delete_backup),
	RZ__WEB_ROUTE(RZ_M_POST, "/backups/{name}/delete", post_delete_backup),
};

/* ------------------------------------------------------------------ helpers */

/* A page of a logged-in user, or NULL (answered). */
rz__page_t *rz__admin_page(rz_ui_t *ui, rz_req_t *req)
{
	rz__page_t *pg = rz__page_new(ui, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return NULL;
	}
	return pg;
}

/* A failed read: the page says why (403: the role may not). True when it answered. */
bool rz__read_failed(rz__page_t *pg, int i, const char *what)
{
	char msg[200];
	int code = rz__page_code(pg, i);

	if (rz__page_got(pg, i) != NULL) {
		return false;
	}
	if (code == 403) {
		snprintf(msg, sizeof(msg), "Your role (%s) may not read %s: it is for admins.",
		         rz_role_name(pg->p->role), what);
	} else if (code == 404) {
		snprintf(msg, sizeof(msg), "There is no such %s.", what);
	} else {
		snprintf(msg, sizeof(msg), "Cannot read %s (HTTP %d).", what, code);
	}
	rz__page_error(pg, code == 403 || code == 404 ? code : 502, msg);
	return true;
}

void rz__nav(rz__page_t *pg, const char *flag, const char *title)
{
	json_object_set_new(pg->view, flag, json_true());
	json_object_set_new(pg->view, "title", json_string(title));
}

json_t *rz__form_view(rz__page_t *pg)
{
	json_t *f = json_object_get(pg->view, "form");

	if (f == NULL) {
		f = json_object();
		json_object_set_new(pg->view, "form", f);
	}
	if (json_object_get(f, "values") == NULL) {
		json_object_set_new(f, "values", pg->form ? json_incref(pg->form) : json_object());
	}
	return f;
}

/* Append name=value to a query string, percent-encoded; false when it does not fit. */
bool rz__query_add(char *q, size_t size, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(q);

	if (value == NULL || value[0] == '\0') {
		return true;
	}
	n += (size_t)snprintf(q + n, n < size ? size - n : 0, "%s%s=", n ? "&" : "", name);
	for (const unsigned char *s = (const unsigned char *)value; *s != '\0' && n + 4 < size;
	     s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-_.~", *s) != NULL) {
			q[n++] = (char)*s;
		} else {
			q[n++] = '%';
			q[n++] = hex[*s >> 4];
			q[n++] = hex[*s & 15];
		}
		q[n] = '\0';
	}
	return n + 4 < size;
}

/* ------------------------------------------------------------------ confirmations */

/* The confirmation page: what is destroyed, the form that does it, where to go back. */
void rz__confirm(rz__page_t *pg, const char *title, const char *question, const char *what,
                 const char *action, const char *button, const char *back)
{
	rz__nav(pg, strncmp(action, "/backups", 8) == 0 ? "navBackups" : "navUsers", title);
	json_object_set_new(pg->view, "confirm",
	                    json_pack("{s:s, s:s, s:s, s:s, s:s}", "question", question, "what",
	                              what, "action", action, "button", button, "back", back));
	rz__page_render(pg, "pages/confirm", pg->code ? pg->code : 200);
}

/* ------------------------------------------------------------------ providers */

static void providers_ready(rz__page_t *pg)
{
	json_t *rows = json_array(), *it;
	size_t i;

	if (rz__read_failed(pg, 0, "the providers")) {
		json_decref(rows);
		return;
	}
	json_array_foreach(rz__items(rz__page_got(pg, 0)), i, it)
	{
		const json_t *spec = json_object_get(it, "spec");
		char kinds[64] = "";
		size_t j;
		json_t *k;
		json_array_foreach(json_object_get(spec, "kinds"), j, k)
		{
			size_t n = strlen(kinds);
			snprintf(kinds + n, sizeof(kinds) - n, "%s%s", n ? ", " : "",
			         json_string_value(k) ? json_string_value(k) : "");
		}
		json_array_append_new(
		    rows,
		    json_pack(
		        "{s:s, s:s, s:s, s:s, s:s, s:b, s:s}", "name", rz__str(it, "metadata.name"),
		        "version", rz__str(it, "spec.version"), "abi",
		        rz__str(it, "spec.abiVersion"), "kinds", kinds, "description",
		        rz__str(it, "spec.description"), "loaded",
		        json_is_true(json_object_get(json_object_get(it, "status"), "loaded")),
		        "error", rz__str(it, "status.error")));
	}
	rz__nav(pg, "navProviders", "Providers");
	json_object_set_new(pg->view, "empty", json_boolean(json_array_size(rows) == 0));
	json_object_set_new(pg->view, "providers", rows);
	rz__page_render(pg, "pages/providers", 200);
}

static void get_providers(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		pg->ready = providers_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/providers");
		rz__page_release(pg);
	}
}

/* ------------------------------------------------------------------ backups */

#define BACKUPS_PART    "parts/backup-list"
#define BACKUPS_POLL_MS 1000 /* the daemon's backups have no watch: read again this often */

/* view.backups (and empty) from list, as the page and its live region show them. */
static void backup_rows(rz__page_t *pg, json_t *list)
{
	json_t *rows = json_array(), *it;
	size_t i;

	json_array_foreach(rz__items(list), i, it)
	{
		const char *phase = rz__str(it, "status.phase");
		char size[32];
		rz_ui_bytes(
		    size, sizeof(size),
		    json_integer_value(json_object_get(json_object_get(it, "status"), "size")));
		json_array_append_new(rows,
		                      json_pack("{s:s, s:o, s:s, s:o, s:s, s:s, s:b}", "name",
		                                rz__str(it, "metadata.name"), "created",
		                                rz__when(rz__str(it, "metadata.creationTimestamp")),
		                                "trigger", rz__str(it, "spec.trigger"), "phase",
		                                rz__badge(phase[0] ? phase : "Pending"), "size",
		                                size, "message", rz__str(it, "status.message"),
		                                "completed", strcmp(phase, "Completed") == 0));
	}
	json_object_set_new(pg->view, "empty", json_boolean(json_array_size(rows) == 0));
	json_object_set_new(pg->view, "backups", rows);
}

static void backups_ready(rz__page_t *pg)
{
	if (rz__read_failed(pg, 0, "the backups")) {
		return;
	}
	backup_rows(pg, rz__page_got(pg, 0));
	rz__live_view_have(pg, BACKUPS_PART, "liveHave");
	rz__nav(pg, "navBackups", "Backups");
	rz__form_view(pg);
	rz__page_render(pg, "pages/backups", pg->code ? pg->code : 200);
}

static void backups_page(rz__page_t *pg)
{
	pg->ready = backups_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/backups");
	rz__page_release(pg);
}

static void get_backups(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		backups_page(pg);
	}
}

static void live_backups_read(rz__page_t *pg)
{
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/backups");
	rz__page_release(pg);
}

static void live_backups_build(rz__page_t *pg)
{
	json_t *list = rz__page_got(pg, 0);

	if (list == NULL) {
		rz__live_view_keep(pg);
		return;
	}
	backup_rows(pg, list);
	rz__live_view_send(pg);
}

/* The backups, live: read again every BACKUPS_POLL_MS, sent when they change (a backup's
 * phase as it completes, one scheduled or made elsewhere). */
static void get_live_backups(rz_req_t *req, void *ctx)
{
	const rz__live_view_spec_t spec = {
		.read = live_backups_read,
		.build = live_backups_build,
		.tpl = BACKUPS_PART,
		.event = "rows",
		.poll_ms = BACKUPS_POLL_MS,
	};

	rz__live_view(ctx, req, &spec, NULL);
}

static void backup_started(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		backups_page(pg);
		return;
	}
	rz__page_redirect(pg, "/backups", "backup");
}

static void post_backups(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	json_t *body;

	if (pg == NULL) {
		return;
	}
	body = json_pack("{s:s, s:s, s:{}, s:{s:s}}", "apiVersion", "rezuscloud.io/v1", "kind",
	                 "Backup", "metadata", "spec", "trigger", "manual");
	if (rz__form(pg, "name")[0] != '\0') {
		json_object_set_new(json_object_get(body, "metadata"), "name",
		                    json_string(rz__form(pg, "name")));
	}
	rz__page_act(pg, "POST", "/api/v1/backups", "application/json", body, backup_started);
}

/* The manifest as a file download: the API's Backup object. */
static void manifest_ready(rz__page_t *pg)
{
	json_t *b = rz__page_got(pg, 0);
	char disp[200], *text;

	if (rz__read_failed(pg, 0, "backup")) {
		return;
	}
	text = json_dumps(b, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (text == NULL) {
		rz__page_error(pg, 500, "out of memory");
		return;
	}
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s.manifest.json\"",
	         rz_req_param(pg->req, "name"));
	rz_req_add_header(pg->req, "Content-Disposition", disp);
	rz_req_add_header(pg->req, "Cache-Control", "no-store");
	rz_req_add_header(pg->req, "Content-Security-Policy", "default-src 'none'");
	rz_reply(pg->req, 200, "application/json", text, strlen(text));
	free(text);
	rz__page_free(pg);
}

static void get_manifest(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		pg->ready = manifest_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/backups/%s", rz_req_param(req, "name"));
		rz__page_release(pg);
	}
}

static void delete_backup_ready(rz__page_t *pg)
{
	const char *name = rz_req_param(pg->req, "name");
	char q[160], what[300], action[160], button[160];

	if (rz__read_failed(pg, 0, "backup")) {
		return;
	}
	snprintf(q, sizeof(q), "Delete the backup %s?", name);
	snprintf(what, sizeof(what),
	         "Its file %s is removed from the backup folder: the management plane can no "
	         "longer be restored to it.",
	         rz__str(rz__page_got(pg, 0), "status.file"));
	snprintf(action, sizeof(action), "/backups/%s/delete", name);
	snprintf(button, sizeof(button), "Delete %s", name);
	rz__confirm(pg, "Delete a backup", q, what, action, button, "/backups");
}

static void get_delete_backup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__admin_page(ctx, req);

	if (pg != NULL) {
		pg->ready = delete_backup_ready;
		rz__page_hold(pg);
		rz__page_fetch(pg, 0, "/api/v1/backups/%s", rz_req_param(req, "name"));
		rz__page_release(pg);
	}
}

static void backup_deleted(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		backups_page(pg);
		return;
	}
	rz__page_redirect(pg, "/backups", "deleted");
}

static void post_delete_backup(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/backups/%s", rz_req_param(req, "name"));
	rz__page_act(pg, "DELETE", target, NULL, NULL, backup_deleted);
}

/* ------------------------------------------------------------------ routes */

int rz__admin_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
