/* core/web/etcd-pages.c - the WebUI's etcd snapshots tab of a tenant (docs/backups.md,
 * "Tenants' etcd"): its EtcdBackups newest first and live, "Snapshot now" (edit role), and
 * for a Succeeded one a restore (admin role) through a confirmation that names the snapshot,
 * a dry run first by default; a restore's page shows its steps live. Every read and write
 * goes through the API's own route. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/fields.h"
#include "core/web/page.h"

#define MAX_RESTORES 20 /* restores listed on the tab, newest first */

/* The routes of the tab (registered by rz_ui_routes with the UI as ctx). */
static void get_backups(rz_req_t *req, void *ctx);
static void post_backups(rz_req_t *req, void *ctx);
static void get_live_backups(rz_req_t *req, void *ctx);
static void get_confirm(rz_req_t *req, void *ctx);
static void post_restore(rz_req_t *req, void *ctx);
static void get_restore(rz_req_t *req, void *ctx);
static void get_live_restore(rz_req_t *req, void *ctx);
static void get_live_restores(rz_req_t *req, void *ctx);
static const rz_route_t routes[] = {
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/etcdbackups", get_backups),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/etcdbackups", post_backups),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/etcdbackups", get_live_backups),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/etcdbackups/{name}/restore", get_confirm),
	RZ__WEB_ROUTE(RZ_M_POST, "/tenants/{tenant}/etcdbackups/{name}/restore", post_restore),
	RZ__WEB_ROUTE(RZ_M_GET, "/tenants/{tenant}/etcdrestores/{name}", get_restore),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/etcdrestores/{name}", get_live_restore),
	RZ__WEB_ROUTE(RZ_M_GET, "/ui/live/tenants/{tenant}/etcdrestores", get_live_restores),
};

/* ------------------------------------------------------------------ helpers */

void rz_ui_bytes(char *buf, size_t size, int64_t n)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v;
	size_t u = 0;

	if (n < 1024) {
		snprintf(buf, size, "%" PRId64 " B", n > 0 ? n : 0);
		return;
	}
	/* 1023.5 KiB would print as "1024 KiB": it is 1.0 MiB */
	for (v = (double)n / 1024; v >= 1023.5 && u + 1 < sizeof(units) / sizeof(units[0]); u++) {
		v /= 1024;
	}
	snprintf(buf, size, v < 9.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static const char *tenant_of(const rz__page_t *pg)
{
	return rz_req_param(pg->req, "tenant");
}

/* Rows (json_t *) newest first: by created, descending. Two made in the same second (a
 * creationTimestamp has no finer part) by when they started (ms), one not started yet
 * first; then by name. */
static int newest_first(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *xs = rz__str(x, "started"), *ys = rz__str(y, "started");
	int c = strcmp(rz__str(y, "created"), rz__str(x, "created"));

	if (c == 0 && (xs[0] == '\0') != (ys[0] == '\0')) {
		c = xs[0] == '\0' ? -1 : 1;
	}
	c = c != 0 ? c : strcmp(ys, xs);
	return c != 0 ? c : strcmp(rz__str(y, "name"), rz__str(x, "name"));
}

/* The items through row, newest first, at most max (0: all). */
static json_t *sorted_rows(json_t *items, json_t *(*row)(const json_t *), size_t max)
{
	size_t n = json_array_size(items);
	json_t **v = calloc(n + 1, sizeof(*v)), *out = json_array();

	if (v == NULL || out == NULL) {
		free(v);
		return out;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = row(json_array_get(items, i));
	}
	qsort(v, n, sizeof(*v), newest_first);
	for (size_t i = 0; i < n; i++) {
		if (max == 0 || i < max) {
			json_array_append(out, v[i]);
		}
		json_decref(v[i]);
	}
	free(v);
	return out;
}

/* ------------------------------------------------------------------ the snapshots */

/* A snapshot's or a restore's phase as a badge: Running is work under way (busy), not a
 * running machine's health; Skipped waits for nothing. */
static json_t *phase_badge(const char *phase)
{
	json_t *b = rz__badge(phase);

	if (strcmp(phase, "Running") == 0) {
		json_object_set_new(b, "tone", json_string("busy"));
	} else if (strcmp(phase, "Skipped") == 0) { /* a dry run's step, nothing to wait for */
		json_object_set_new(b, "tone", json_string("neutral"));
	}
	return b;
}

/* A snapshot for the tab's rows (parts/etcdbackup-rows, live too) and the confirmation. */
static json_t *backup_row(const json_t *b)
{
	json_t *row;
	const char *phase = rz__str(b, "status.phase");
	const json_t *size = json_object_get(json_object_get(b, "status"), "size");
	bool over_badly;
	char human[32] = "";

	phase = phase[0] ? phase : "Pending";
	over_badly = strcmp(phase, "Failed") == 0 || strcmp(phase, "Skipped") == 0;
	if (json_is_integer(size)) {
		rz_ui_bytes(human, sizeof(human), json_integer_value(size));
	}
	row = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b}", "name",
	                rz__str(b, "metadata.name"), "phase", phase, "size", human, "talos",
	                rz__str(b, "status.talosVersion"), "kubernetes",
	                rz__str(b, "status.kubernetesVersion"), "created",
	                rz__str(b, "metadata.creationTimestamp"), "started",
	                rz__str(b, "status.startedAt"), "trigger", rz__str(b, "spec.trigger"),
	                "message", over_badly ? rz__str(b, "status.message") : "", "restorable",
	                strcmp(phase, "Succeeded") == 0);
	json_object_set_new(row, "badge", phase_badge(phase));
	json_object_set_new(row, "phase", rz__words(phase));
	json_object_set_new(row, "createdWhen", rz__when(rz__str(b, "metadata.creationTimestamp")));
	return row;
}

/* A restore step's name as people read it ("WaitHealthy": "Wait until healthy"). */
static json_t *step_label(const char *name)
{
	return strcmp(name, "WaitHealthy") == 0 ? json_string("Wait until healthy")
	                                        : rz__words(name);
}

/* A restore for the tab's table and its page's live region (parts/etcdrestore-live). */
static json_t *restore_row(const json_t *r)
{
	const char *phase = rz__str(r, "status.phase");
	bool dry = json_is_true(json_object_get(json_object_get(r, "spec"), "dryRun"));
	json_t *steps = json_array(), *s, *row;
	size_t i;

	phase = phase[0] ? phase : "Pending";
	json_array_foreach(json_object_get(json_object_get(r, "status"), "steps"), i, s)
	{
		const char *sp = rz__str(s, "phase");
		json_array_append_new(
		    steps,
		    json_pack("{s:s, s:o, s:s, s:o, s:s, s:b}", "name", rz__str(s, "name"), "label",
		              step_label(rz__str(s, "name")), "phase", sp[0] ? sp : "Pending",
		              "badge", phase_badge(sp[0] ? sp : "Pending"), "message",
		              rz__str(s, "message"), "failed", strcmp(sp, "Failed") == 0));
	}
	row = json_pack("{s:s, s:s, s:b, s:s, s:s, s:s, s:s, s:o, s:b, s:b}", "name",
	                rz__str(r, "metadata.name"), "backup", rz__str(r, "spec.backup"), "dryRun",
	                dry, "phase", phase, "message", rz__str(r, "status.message"), "created",
	                rz__str(r, "metadata.creationTimestamp"), "started",
	                rz__str(r, "status.startedAt"), "steps", steps, "noSteps",
	                json_array_size(steps) == 0, "canRestore",
	                dry && strcmp(phase, "Succeeded") == 0);
	json_object_set_new(row, "badge", phase_badge(phase));
	json_object_set_new(row, "phase", rz__words(phase));
	{
		/* "…(simulated) sim/etcd-restore;": a list's last separator ends nothing */
		const char *m = rz__str(r, "status.message");
		size_t n = strlen(m);
		while (n > 0 && (m[n - 1] == ';' || m[n - 1] == ' ')) {
			n--;
		}
		json_object_set_new(row, "message", json_stringn(m, n));
	}
	json_object_set_new(row, "createdWhen", rz__when(rz__str(r, "metadata.creationTimestamp")));
	return row;
}

static void backups_ready(rz__page_t *pg)
{
	json_t *v = pg->view, *restores;

	if (!rz__tenant_head(pg, "etcdbackups", "etcd snapshots")) {
		return;
	}
	json_object_set_new(v, "rows", sorted_rows(rz__items(rz__page_got(pg, 1)), backup_row, 0));
	rz__live_have_rows(pg, "parts/etcdbackup-rows");
	restores = sorted_rows(rz__items(rz__page_got(pg, 2)), restore_row, MAX_RESTORES);
	/* the restores' part reads rows, as the live stream sends them */
	json_object_set_new(v, "restores", json_pack("{s:o}", "rows", restores));
	rz__page_read_error(pg, 1, "the etcd snapshots");
	rz__page_read_error(pg, 2, "the restores");
	rz__page_render(pg, "pages/etcdbackups", pg->code ? pg->code : 200);
}

static void backups_page(rz__page_t *pg)
{
	pg->ready = backups_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/etcdbackups", tenant_of(pg));
	rz__page_fetch(pg, 2, "/api/v1/tenants/%s/etcdrestores", tenant_of(pg));
	rz__page_release(pg);
}

static void get_backups(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg)) {
		backups_page(pg);
	}
}

static void snapshot_asked(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[160];

	(void)r;
	if (rz__page_failed(pg, code, body, NULL)) {
		backups_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/etcdbackups", tenant_of(pg));
	rz__page_redirect(pg, path, "snapshot");
}

/* Snapshot now: an EtcdBackup, manual; the API names it (etcd-<random>). */
static void post_backups(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/etcdbackups", tenant_of(pg));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{}, s:{s:s}}", "apiVersion", "rezuscloud.io/v1",
	                       "kind", "EtcdBackup", "metadata", "spec", "trigger", "manual"),
	             snapshot_asked);
}

static void get_live_backups(rz_req_t *req, void *ctx)
{
	char target[160];

	snprintf(target, sizeof(target), "/api/v1/tenants/%s/etcdbackups?watch=true",
	         rz_req_param(req, "tenant"));
	rz__live_tenant_table(ctx, req, target, "parts/etcdbackup-rows", backup_row, newest_first,
	                      NULL);
}

/* ------------------------------------------------------------------ a restore */

static void get_live_restores(rz_req_t *req, void *ctx)
{
	char target[160];

	snprintf(target, sizeof(target), "/api/v1/tenants/%s/etcdrestores?watch=true",
	         rz_req_param(req, "tenant"));
	rz__live_table_ordered(ctx, req, target, "parts/etcdrestore-rows", restore_row,
	                       newest_first);
}

/* Restores are for admins (the API's role for EtcdRestore's create): the confirmation is
 * refused to others, as the state versions' rollback is. */
static bool admin_only(rz__page_t *pg)
{
	if (!rz__may(pg, RZ_ROLE_ADMIN)) {
		rz__page_error(pg, 403, "Restoring etcd is for administrators.");
		return false;
	}
	return true;
}

/* What the confirmation says of the snapshot, besides its row: its exact size, when it was
 * taken, through which machine, where it is stored. */
static json_t *snapshot_view(const json_t *b)
{
	json_t *row = backup_row(b);
	const char *taken = rz__str(b, "status.startedAt");
	char exact[64];

	snprintf(
	    exact, sizeof(exact), "%" PRId64,
	    (int64_t)json_integer_value(json_object_get(json_object_get(b, "status"), "size")));
	json_object_set_new(row, "bytes", json_string(exact));
	json_object_set_new(row, "taken", json_string(taken[0] ? taken : rz__str(row, "created")));
	json_object_set_new(row, "takenWhen", rz__when(rz__str(row, "taken")));
	json_object_set_new(row, "machine", json_string(rz__str(b, "status.machine")));
	json_object_set_new(row, "key", json_string(rz__str(b, "status.key")));
	json_object_set_new(row, "checksum", json_string(rz__str(b, "status.checksum")));
	return row;
}

static void confirm_ready(rz__page_t *pg)
{
	json_t *b = rz__page_got(pg, 1), *v = pg->view, *form;
	char msg[200];

	if (!rz__tenant_head(pg, "etcdbackups", "Restore etcd")) {
		return;
	}
	if (b == NULL) {
		rz__page_error(pg, rz__page_code(pg, 1) == 404 ? 404 : 502,
		               rz__page_code(pg, 1) == 404 ? "There is no such etcd snapshot."
		                                           : "The etcd snapshot cannot be read.");
		return;
	}
	if (strcmp(rz__str(b, "status.phase"), "Succeeded") != 0) {
		snprintf(msg, sizeof(msg), "Only a Succeeded snapshot can be restored; %s is %s.",
		         rz__str(b, "metadata.name"),
		         rz__str(b, "status.phase")[0] ? rz__str(b, "status.phase") : "Pending");
		rz__page_error(pg, 409, msg);
		return;
	}
	json_object_set_new(v, "snapshot", snapshot_view(b));
	form = json_object_get(v, "form");
	if (form == NULL) {
		form = json_object();
		json_object_set_new(v, "form", form);
	}
	/* a dry run first unless the posted form said otherwise */
	json_object_set_new(
	    form, "dryRun",
	    json_boolean(pg->form == NULL || strcmp(rz__form(pg, "dryRun"), "true") == 0));
	rz__page_render(pg, "pages/etcd-restore-confirm", pg->code ? pg->code : 200);
}

static void confirm_page(rz__page_t *pg)
{
	pg->ready = confirm_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/etcdbackups/%s", tenant_of(pg),
	               rz_req_param(pg->req, "name"));
	rz__page_release(pg);
}

static void get_confirm(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg != NULL && rz__page_need_login(pg) && rz__page_names_ok(pg) && admin_only(pg)) {
		confirm_page(pg);
	}
}

static void restore_created(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r)
{
	char path[200];

	(void)r;
	if (rz__page_failed(pg, code, body, "spec.")) {
		confirm_page(pg);
		return;
	}
	snprintf(path, sizeof(path), "/tenants/%s/etcdrestores/%s", tenant_of(pg),
	         rz__str(body, "metadata.name"));
	rz__page_redirect(pg, path,
	                  json_is_true(json_object_get(json_object_get(body, "spec"), "dryRun"))
	                      ? "restore-dry"
	                      : "restore");
}

/* The API decides who may (admin) and what may be restored (a Succeeded snapshot, a lost
 * control plane: its precheck). */
static void post_restore(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__post_page(ctx, req);
	char target[160];

	if (pg == NULL || !rz__page_names_ok(pg)) {
		return;
	}
	snprintf(target, sizeof(target), "/api/v1/tenants/%s/etcdrestores", tenant_of(pg));
	rz__page_act(pg, "POST", target, "application/json",
	             json_pack("{s:s, s:s, s:{}, s:{s:s, s:b}}", "apiVersion", "rezuscloud.io/v1",
	                       "kind", "EtcdRestore", "metadata", "spec", "backup",
	                       rz_req_param(req, "name"), "dryRun",
	                       strcmp(rz__form(pg, "dryRun"), "true") == 0),
	             restore_created);
}

static void restore_ready(rz__page_t *pg)
{
	json_t *r = rz__page_got(pg, 1), *v = pg->view;

	if (!rz__tenant_head(pg, "etcdbackups", "etcd restore")) {
		return;
	}
	if (r == NULL) {
		rz__page_error(pg, rz__page_code(pg, 1) == 404 ? 404 : 502,
		               rz__page_code(pg, 1) == 404 ? "There is no such restore."
		                                           : "The restore cannot be read.");
		return;
	}
	json_object_set_new(v, "restore", restore_row(r));
	json_object_set_new(v, "rows", json_pack("[O]", json_object_get(v, "restore")));
	rz__live_have_rows(pg, "parts/etcdrestore-live");
	rz__page_render(pg, "pages/etcd-restore", 200);
}

static void get_restore(rz_req_t *req, void *ctx)
{
	rz__page_t *pg = rz__page_new(ctx, req);

	if (pg == NULL || !rz__page_need_login(pg) || !rz__page_names_ok(pg)) {
		return;
	}
	pg->ready = restore_ready;
	rz__page_hold(pg);
	rz__page_fetch(pg, 0, "/api/v1/tenants/%s", tenant_of(pg));
	rz__page_fetch(pg, 1, "/api/v1/tenants/%s/etcdrestores/%s", tenant_of(pg),
	               rz_req_param(req, "name"));
	rz__page_release(pg);
}

static void get_live_restore(rz_req_t *req, void *ctx)
{
	const char *t = rz_req_param(req, "tenant"), *name = rz_req_param(req, "name");
	char target[320], msg[128];

	if (!rz_format_dns1123_label(t, msg, sizeof(msg)) ||
	    !rz_format_dns1123_label(name, msg, sizeof(msg))) {
		rz_reply_error(req, 404, NULL, "no such object");
		return;
	}
	snprintf(target, sizeof(target),
	         "/api/v1/tenants/%s/etcdrestores?watch=true&fieldSelector=metadata.name%%3D%s", t,
	         name);
	rz__live_tenant_table(ctx, req, target, "parts/etcdrestore-live", restore_row, NULL, NULL);
}

/* ------------------------------------------------------------------ routes */

int rz__etcd_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(routes), ui, err);
}
