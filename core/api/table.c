/* core/api/table.c - Kubernetes Tables (as=Table) of a kind's objects for get, list and watch. */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/api/api-int.h"
#include "core/model/columns.h"

/* ------------------------------------------------------------------ tables */

/* Whether a Table leaves the TENANT column out: when the request names the tenant (as
 * rezusctl get -n does), or comes on the group path, whose Kubernetes clients print the
 * namespace themselves (kubectl get -A). */
bool rz__hide_tenant(const rz_req_t *req, const char *tenant)
{
	return tenant != NULL || rz__on_group_path(req);
}

/* Whether the client asks for a Kubernetes Table (Accept: application/json;as=Table;
 * g=meta.k8s.io;v=v1 — or v1beta1, answered as v1, which kubectl reads alike). */
bool rz__wants_table(const rz_req_t *req)
{
	static const char *const v1[] = { "as=Table", "g=meta.k8s.io", "v=v1", NULL };
	static const char *const v1beta1[] = { "as=Table", "g=meta.k8s.io", "v=v1beta1", NULL };

	return rz__accept_wants(req, v1) || rz__accept_wants(req, v1beta1);
}

/* includeObject: None, Metadata (the default) or Object; replies 400 on anything else. */
bool rz__include_object(rz_req_t *req, enum include *out)
{
	const char *v = rz_req_query(req, "includeObject");

	*out = INCLUDE_METADATA;
	if (v == NULL || *v == '\0' || strcmp(v, "Metadata") == 0) {
		return true;
	}
	if (strcmp(v, "None") == 0 || strcmp(v, "Object") == 0) {
		*out = v[0] == 'N' ? INCLUDE_NONE : INCLUDE_OBJECT;
		return true;
	}
	rz_reply_error(req, 400, NULL,
	               "includeObject: Unsupported value: \"%s\": supported values: \"None\", "
	               "\"Metadata\", \"Object\"",
	               ECHO(v));
	return false;
}

/* A column shown in a Table: all of rezusctl get's (the wide ones at priority 1), but
 * TENANT when hide (hide_tenant). */
static bool table_shows(const rz_column_t *col, bool hide)
{
	return !(hide && strcmp(col->header, "TENANT") == 0);
}

json_t *rz_api_table_new(const rz_kind_t *k, bool hide_tenant)
{
	const rz_column_t *cols = rz_columns_of(k->kind);
	json_t *defs = json_array();

	for (size_t j = 0; j < RZ_COLUMNS_MAX && cols[j].header != NULL; j++) {
		if (table_shows(&cols[j], hide_tenant)) {
			json_array_append_new(
			    defs,
			    json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", cols[j].header, "type",
			              "string", "format",
			              strcmp(cols[j].path, "metadata.name") == 0 ? "name" : "",
			              "description", rz_columns_describe(&cols[j]), "priority",
			              cols[j].wide ? 1 : 0));
		}
	}
	return json_pack("{s:s, s:s, s:{}, s:o, s:[]}", "kind", "Table", "apiVersion",
	                 "meta.k8s.io/v1", "metadata", "columnDefinitions", defs, "rows");
}

static const char *singular_of(const char *kind)
{
	const rz_kind_t *k = rz_kind_by_name(kind);

	return k != NULL ? k->singular : NULL;
}

void rz_api_table_add(json_t *table, const rz_kind_t *k, bool hide_tenant, const json_t *obj,
                      int include, time_t now)
{
	const rz_column_t *cols = rz_columns_of(k->kind);
	json_t *cells = json_array(), *row;
	char buf[RZ_CELL_MAX];

	for (size_t j = 0; j < RZ_COLUMNS_MAX && cols[j].header != NULL; j++) {
		if (table_shows(&cols[j], hide_tenant)) {
			json_array_append_new(
			    cells, json_string(rz_columns_cell(obj, cols[j].path, now, singular_of,
			                                       buf, sizeof(buf))));
		}
	}
	row = json_pack("{s:o}", "cells", cells);
	if (include == INCLUDE_OBJECT) {
		json_object_set_new(row, "object", json_deep_copy(obj));
	} else if (include == INCLUDE_METADATA) {
		json_object_set_new(row, "object",
		                    json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata",
		                              "apiVersion", "meta.k8s.io/v1", "metadata",
		                              json_object_get(obj, "metadata")));
	}
	json_array_append_new(json_object_get(table, "rows"), row);
}

/* A watch's object as a Table of one row (flags: bit 0 the request names the tenant or is a
 * Kubernetes client's, bits 1-2 the include mode). */
char *rz__table_render(unsigned flags, const rz_kind_t *k, const json_t *obj)
{
	json_t *t = rz_api_table_new(k, flags & 1);
	char *text;

	rz_api_table_add(t, k, flags & 1, obj, (int)(flags >> 1), time(NULL));
	text = json_dumps(t, JSON_COMPACT);
	json_decref(t);
	return text;
}

static void reply_table(rz_req_t *req, json_t *table)
{
	rz__reply_typed(req, 200, "application/json;as=Table;v=v1;g=meta.k8s.io", table);
}

/* GET of one object as a Table. */
void rz__table_get(struct rctx *c, rz_req_t *req, const char *tenant, json_t *cur)
{
	enum include inc;
	json_t *t;

	if (!rz__include_object(req, &inc)) {
		json_decref(cur);
		return;
	}
	t = rz_api_table_new(c->k, rz__hide_tenant(req, tenant));
	rz_api_table_add(t, c->k, rz__hide_tenant(req, tenant), cur, inc, time(NULL));
	json_object_set_new(json_object_get(t, "metadata"), "resourceVersion",
	                    json_sprintf("%" PRId64, rz_object_rv(cur)));
	json_decref(cur);
	reply_table(req, t);
}

/* A list as a Table: one page of at most limit (else LIST_LIMIT_MAX) rows, built whole,
 * with a continue token when more follow. o's selectors are borrowed. */
void rz__table_list(struct rctx *c, rz_req_t *req, const rz_lists_opts_t *o)
{
	rz_list_opts_t lo = { .tenant = o->tenant,
		              .labels = o->labels,
		              .fields = o->fields,
		              .limit = o->limit ? o->limit : LIST_LIMIT_MAX,
		              .after_tenant = o->after_tenant,
		              .after_name = o->after_name,
		              .keep = o->keep,
		              .keep_arg = o->keep_arg };
	int64_t rv = rz_store_revision(c->api->store);
	json_t *items = NULL, *t, *x, *meta;
	enum include inc;
	rz_err_t err = { 0 };
	time_t now = time(NULL);
	bool more = false;
	size_t i;

	if (!rz__include_object(req, &inc)) {
		return;
	}
	if (rz_store_list(c->api->store, c->k, &lo, &items, &more, &err) != 0) {
		rz__reply_store_error(req, c->k, NULL, err.code, &err);
		return;
	}
	t = rz_api_table_new(c->k, rz__hide_tenant(req, o->tenant));
	meta = json_object_get(t, "metadata");
	json_array_foreach(items, i, x)
	{
		rz_api_table_add(t, c->k, rz__hide_tenant(req, o->tenant), x, inc, now);
	}
	json_object_set_new(meta, "resourceVersion", json_sprintf("%" PRId64, rv));
	if (more && json_array_size(items) > 0) {
		char *token =
		    rz__continue_token(c->k, json_array_get(items, json_array_size(items) - 1));
		if (token != NULL) {
			json_object_set_new(meta, "continue", json_string(token));
		}
		free(token);
	}
	json_decref(items);
	reply_table(req, t);
}
