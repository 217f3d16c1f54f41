/* core/tfstate/outputs.c - a tenant's sensitive outputs (kubeconfig, talosconfig) kept sealed
 * after each apply, and the endpoints that download them (core/tfstate/tfstate.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "core/base/clock.h"
#include "core/http/status.h"
#include "core/tfstate/tfstate.h"
#include "core/tfstate/tfstate-int.h"

/* ------------------------------------------------------------------ sensitive outputs */

struct keep {
	rz_tfstate_t *ts;
	const char *tenant, *run;
	const json_t *outputs;
};

static int keep_tx(rz_db_t *db, void *arg, rz_err_t *err)
{
	static const char del[] = "DELETE FROM tenant_outputs WHERE tenant = ?1";
	static const char ins[] = "INSERT INTO tenant_outputs (tenant, name, time, run, blob)"
	                          " VALUES (?1, ?2, ?3, ?4, ?5)";
	struct keep *k = arg;
	const char *name;
	json_t *o;
	char now[32];
	rz_stmt_t *s = rz_db_stmt(db, del, err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, k->tenant);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	if (rc < 0) {
		return rc;
	}
	rz_time_now(now, sizeof(now));
	json_object_foreach((json_t *)k->outputs, name, o)
	{
		json_t *value = json_object_get(o, "value");
		char *dumped = NULL, ad[256];
		const char *plain;
		unsigned char *blob;
		size_t blen = 0, len;

		if (!json_is_true(json_object_get(o, "sensitive")) || value == NULL) {
			continue;
		}
		if (json_is_string(value)) {
			plain = json_string_value(value);
			len = json_string_length(value);
		} else if ((dumped = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY)) != NULL) {
			plain = dumped;
			len = strlen(dumped);
		} else {
			return rz_err_set(err, -ENOMEM, "tfstate: out of memory");
		}
		blob = rz__tfstate_seal_ad(k->ts, ad,
		                           rz__tfstate_ad_output(ad, sizeof(ad), k->tenant, name),
		                           plain, len, &blen);
		if (dumped != NULL) {
			sodium_memzero(dumped, len);
			free(dumped);
		}
		if (blob == NULL || (s = rz_db_stmt(db, ins, err)) == NULL) {
			free(blob);
			return blob ? err->code
			            : rz_err_set(err, -ENOMEM, "tfstate: out of memory");
		}
		rz_stmt_bind_text(s, 1, k->tenant);
		rz_stmt_bind_text(s, 2, name);
		rz_stmt_bind_text(s, 3, now);
		rz_stmt_bind_text(s, 4, k->run);
		rz_stmt_bind_blob(s, 5, blob, blen);
		rc = rz_stmt_step(s, err);
		rz_stmt_done(s);
		free(blob);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

int rz_tfstate_keep_outputs(rz_tfstate_t *ts, const char *tenant, const char *run,
                            const json_t *state, rz_err_t *err)
{
	json_t *none = json_object();
	const json_t *outputs = json_object_get(state, "outputs");
	struct keep k = { ts, tenant, run, json_is_object(outputs) ? outputs : none };
	int rc = rz_db_tx(ts->db, keep_tx, &k, err);

	json_decref(none);
	return rc;
}

int rz_tfstate_output(rz_tfstate_t *ts, const char *tenant, const char *name, char **value,
                      size_t *len, rz_err_t *err)
{
	static const char sql[] = "SELECT blob FROM tenant_outputs WHERE tenant = ?1 AND name = ?2";
	rz_stmt_t *s = rz_db_stmt(ts->db, sql, err);
	char ad[256];
	int rc;

	*value = NULL;
	*len = 0;
	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, tenant);
	rz_stmt_bind_text(s, 2, name);
	rc = rz_stmt_step(s, err);
	if (rc == 1) {
		size_t blen;
		const unsigned char *blob = rz_stmt_blob(s, 0, &blen);
		*value = (char *)rz__tfstate_open_ad(
		    ts, ad, rz__tfstate_ad_output(ad, sizeof(ad), tenant, name), blob, blen, len);
		rc = *value ? 0
		            : rz_err_set(err, RZ_EDB,
		                         "tfstate: output '%s' of '%s' does not decrypt (wrong key "
		                         "or damaged)",
		                         name, tenant);
	} else if (rc == 0) {
		rc = rz_err_set(err, RZ_ENOTFOUND, "tenant \"%s\" has no output \"%s\"", tenant,
		                name);
	}
	rz_stmt_done(s);
	return rc;
}

/* GET /api/v1/tenants/{t}/kubeconfig and /talosconfig: the output of that name, as a YAML
 * download. 409 until an apply has produced it. */
static void credentials(rz_req_t *req, rz_tfstate_t *ts, const char *name)
{
	const char *tenant = rz_req_param(req, "tenant");
	char *value = NULL, disposition[160];
	size_t len = 0;
	rz_err_t err = { 0 };
	int rc;

	if (!rz__tfstate_tenant_exists(ts, req, tenant)) {
		return;
	}
	rc = rz_tfstate_output(ts, tenant, name, &value, &len, &err);
	if (rc == RZ_ENOTFOUND) {
		rz_reply_error(req, 409, NULL,
		               "tenant \"%s\" has no %s yet: it is written by the first successful "
		               "apply",
		               tenant, name);
		return;
	}
	if (rc != 0) {
		rz__tfstate_internal(req, &err);
		return;
	}
	snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s-%s.yaml\"", tenant,
	         name);
	rz_req_add_header(req, "Content-Disposition", disposition);
	rz_req_add_header(req, "Cache-Control", "no-store");
	rz_reply(req, 200, "application/yaml", value, len);
	sodium_memzero(value, len);
	free(value);
}

void rz__tfstate_h_kubeconfig(rz_req_t *req, void *ctx)
{
	credentials(req, ctx, "kubeconfig");
}

void rz__tfstate_h_talosconfig(rz_req_t *req, void *ctx)
{
	credentials(req, ctx, "talosconfig");
}
