/* core/tfstate/history.c - a tenant's state versions through the API: the list (with the
 * lock when one is held), one version's state (an admin's download, audited), and a
 * rollback to one (an admin's, audited). */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "core/model/kinds.h"
#include "core/store/db.h"
#include "core/tfstate/tfstate.h"
#include "core/tfstate/tfstate-int.h"
#include "core/http/status.h"

/* The lock held on tenant as list.lock {id, who, operation, created} (what tofu's lock info
 * says; an empty member when it does not); nothing when the state is free. < 0 on error. */
static int lock_view(rz_tfstate_t *ts, const char *tenant, json_t *list, rz_err_t *err)
{
	char id[RZ__TFSTATE_LOCK_ID_MAX + 1], *info = NULL;
	int rc = rz__tfstate_lock_of(ts, tenant, id, sizeof(id), &info, err);
	json_t *li;

	if (rc != 1) {
		return rc;
	}
	li = info ? json_loads(info, 0, NULL) : NULL;
	json_object_set_new(
	    list, "lock",
	    json_pack("{s:s, s:s, s:s, s:s}", "id", id, "who",
	              json_string_value(json_object_get(li, "Who")) ?: "", "operation",
	              json_string_value(json_object_get(li, "Operation")) ?: "", "created",
	              json_string_value(json_object_get(li, "Created")) ?: ""));
	json_decref(li);
	free(info);
	return 0;
}

/* ------------------------------------------------------------------ history */

void rz__tfstate_h_history(rz_req_t *req, void *ctx)
{
	static const char sql[] = "SELECT version, serial, lineage, time, run, size, resources"
	                          " FROM tfstate_versions WHERE tenant = ?1 ORDER BY version DESC";
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant");
	rz_err_t err = { 0 };
	json_t *items = json_array(), *list;
	rz_stmt_t *s;
	int rc;

	if (!rz__tfstate_tenant_exists(ts, req, tenant) ||
	    (s = rz_db_stmt(ts->db, sql, &err)) == NULL) {
		json_decref(items);
		if (err.code != 0) {
			rz__tfstate_internal(req, &err);
		}
		return;
	}
	rz_stmt_bind_text(s, 1, tenant);
	while ((rc = rz_stmt_step(s, &err)) == 1) {
		json_t *v = json_pack(
		    "{s:I, s:s, s:s, s:s, s:I, s:b}", "version", (json_int_t)rz_stmt_int64(s, 0),
		    "lineage", rz_stmt_text(s, 2) ? rz_stmt_text(s, 2) : "", "time",
		    rz_stmt_text(s, 3), "run", rz_stmt_text(s, 4), "size",
		    (json_int_t)rz_stmt_int64(s, 5), "current", json_array_size(items) == 0);
		if (!rz_stmt_is_null(s, 1)) {
			json_object_set_new(v, "serial", json_integer(rz_stmt_int64(s, 1)));
		}
		if (!rz_stmt_is_null(s, 6)) {
			json_object_set_new(v, "resources", json_integer(rz_stmt_int64(s, 6)));
		}
		json_array_append_new(items, v);
	}
	rz_stmt_done(s);
	if (rc < 0) {
		json_decref(items);
		rz__tfstate_internal(req, &err);
		return;
	}
	list = json_pack("{s:s, s:s, s:s, s:o}", "apiVersion", RZ_API_VERSION, "kind",
	                 "StateVersionList", "tenant", tenant, "items", items);
	if (lock_view(ts, tenant, list, &err) < 0) {
		json_decref(list);
		rz__tfstate_internal(req, &err);
		return;
	}
	rz_reply_json(req, 200, list);
}

/* Make an old version current again, as a new version (history keeps the way back). */
void rz__tfstate_h_rollback(rz_req_t *req, void *ctx)
{
	static const char sql[] =
	    "SELECT blob FROM tfstate_versions WHERE tenant = ?1 AND version = ?2";
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant");
	size_t len;
	const char *body = rz_req_body(req, &len);
	json_t *in = json_loadb(body, len, 0, NULL), *doc = NULL;
	json_int_t want = json_integer_value(json_object_get(in, "version"));
	unsigned char *plain = NULL;
	char msg[256];
	size_t plen = 0, blen;
	rz_err_t err = { 0 };
	rz_stmt_t *s;

	json_decref(in);
	if (!rz__tfstate_tenant_exists(ts, req, tenant) ||
	    rz__tfstate_locked(ts, req, tenant, true)) {
		return;
	}
	if (want <= 0) {
		rz_reply_error(req, 422, "Invalid",
		               "the body must name a version: {\"version\": N}");
		return;
	}
	s = rz_db_stmt(ts->db, sql, &err);
	if (s != NULL) {
		rz_stmt_bind_text(s, 1, tenant);
		rz_stmt_bind_int64(s, 2, want);
		if (rz_stmt_step(s, &err) == 1) {
			const unsigned char *blob = rz_stmt_blob(s, 0, &blen);
			plain = rz__tfstate_open_version(ts, tenant, want, blob, blen, &plen);
		}
		rz_stmt_done(s);
	}
	doc = plain ? json_loadb((char *)plain, plen, 0, NULL) : NULL;
	snprintf(msg, sizeof(msg), "state rolled back to version %lld by %s", (long long)want,
	         rz__tfstate_who(req));
	if (plain == NULL || doc == NULL) {
		rz_reply_error(req, 404, NULL, "tenant \"%s\" has no state version %lld", tenant,
		               (long long)want);
	} else if (rz__tfstate_replace(ts, req, tenant, plain, plen, doc, "Normal",
	                               "StateRolledBack", msg, &err) != 0) {
		rz__tfstate_internal(req, &err);
	} else {
		rz_reply_status(req, rz_status_new(200, "", msg));
	}
	if (plain != NULL) {
		sodium_memzero(plain, plen);
		free(plain);
	}
	json_decref(doc);
}

/* One version's state, as tofu wrote it: an admin's, audited (the state holds secrets). */
void rz__tfstate_h_version(rz_req_t *req, void *ctx)
{
	static const char sql[] =
	    "SELECT blob FROM tfstate_versions WHERE tenant = ?1 AND version = ?2";
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant"), *vs = rz_req_param(req, "version");
	char *end = NULL;
	long long want = vs ? strtoll(vs, &end, 10) : 0;
	unsigned char *plain = NULL;
	size_t plen = 0, blen;
	rz_err_t err = { 0 };
	rz_stmt_t *s;
	int rc = 0;

	if (!rz__tfstate_tenant_exists(ts, req, tenant)) {
		return;
	}
	if (end == NULL || *end != '\0' || want <= 0) {
		rz_reply_error(req, 404, NULL, "tenant \"%s\" has no state version %s", tenant,
		               vs ? vs : "");
		return;
	}
	if ((s = rz_db_stmt(ts->db, sql, &err)) != NULL) {
		rz_stmt_bind_text(s, 1, tenant);
		rz_stmt_bind_int64(s, 2, want);
		if ((rc = rz_stmt_step(s, &err)) == 1) {
			const unsigned char *blob = rz_stmt_blob(s, 0, &blen);
			plain = rz__tfstate_open_version(ts, tenant, want, blob, blen, &plen);
		}
		rz_stmt_done(s);
	}
	if (s == NULL || rc < 0) {
		rz__tfstate_internal(req, &err);
	} else if (plain == NULL) {
		rz_reply_error(req, 404, NULL, "tenant \"%s\" has no state version %lld", tenant,
		               want);
	} else {
		rz_req_add_header(req, "Cache-Control", "no-store");
		rz_reply(req, 200, "application/json", plain, plen);
	}
	if (plain != NULL) {
		sodium_memzero(plain, plen);
		free(plain);
	}
}
