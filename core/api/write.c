/* core/api/api.c - the resource REST API, generated from the kind table. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "core/auth/access.h"
#include "core/api/api.h"
#include "core/api/lists.h"
#include "core/auth/auth.h"
#include "core/base/clock.h"
#include "core/base/columns.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/model/merge.h"
#include "core/plugin/plugins.h"
#include "core/base/version.h"
#include "core/base/yaml.h"

#define LIST_LIMIT_MAX    10000
#define CONTINUE_MAX      256 /* a token's text: base64 of an owner and a name, 127 bytes */
#define NAME_SUFFIX       5   /* after generateName, as Kubernetes has it */
#define PREFIX_BYTES      4  /* after a kind's own prefix: 8 hex digits, as the engine names runs */
#define ECHO_MAX          64 /* values are echoed in messages cut to this many bytes */
#define FIELD_MANAGER_MAX 128 /* as Kubernetes bounds a fieldManager */

enum form {
	FORM_COLLECTION, /* /api/v1/<plural> or /api/v1/tenants/{tenant}/<plural> */
	FORM_ITEM,       /* .../{name} */
	FORM_STATUS,     /* .../{name}/status */
	FORM_ALL,        /* /api/v1/<plural> for a tenant-scoped kind: every tenant */
};

struct rctx {
	rz_api_t *api;
	const rz_kind_t *k;
	enum form form;
};

struct rz_api {
	rz_store_t *store;
	rz_watch_hub_t *watches;
	rz_access_t *access;        /* NULL: no audit rows (tests) */
	struct rz_plugins *plugins; /* NULL: no plugin validation (tests) */
	rz_api_admit_fn admit;      /* NULL: none */
	void *admit_arg;
	rz_workers_t *workers; /* password hashing */
	rz_route_t *routes;
	struct rctx *ctxs;
	char **patterns;
	size_t n, npatterns;
};

static const char *scope_prefix(const rz_kind_t *k);
static bool on_group_path(const rz_req_t *req);
static bool accept_wants(const rz_req_t *req, const char *const *want);
static void reply_typed(rz_req_t *req, int code, const char *ctype, json_t *obj);
static bool wants_table(const rz_req_t *req);
enum include { INCLUDE_NONE, INCLUDE_METADATA, INCLUDE_OBJECT };
static bool include_object(rz_req_t *req, enum include *out);
static bool hide_tenant(const rz_req_t *req, const char *tenant);
static char *table_render(unsigned flags, const rz_kind_t *k, const json_t *obj);
struct rctx;
static void table_list(struct rctx *c, rz_req_t *req, const rz_lists_opts_t *o);

/* ------------------------------------------------------------------ replies */

static void reply_store_error(rz_req_t *req, const rz_kind_t *k, const char *name, int rc,
                              const rz_err_t *err)
{
	json_t *st;

	switch (rc) {
	case RZ_ENOTFOUND:
		st = rz_status_new(404, NULL, err->msg);
		break;
	case -EEXIST:
		st = rz_status_new(409, "AlreadyExists", err->msg);
		break;
	case RZ_ECONFLICT:
		st = rz_status_new(409, "Conflict", err->msg);
		break;
	case RZ_ETERMINATING:
		st = rz_status_new(403, "Forbidden", err->msg);
		break;
	case -E2BIG:
		st = rz_status_new(413, "RequestEntityTooLarge", err->msg);
		break;
	default:
		rz_log_err("api", "%s %s \"%s\": %s", rz_req_method(req), k->plural,
		           name ? name : "", err->msg);
		st = rz_status_storage(rc); /* a full or read-only disk says so */
		if (st == NULL) {
			st = rz_status_new(500, NULL, "internal error; see the server log");
		}
		break;
	}
	rz_status_set_target(st, k->plural, name);
	rz_reply_status(req, st);
}

/* A write's reply, held until its commit is durable: the loop turn's group commit, then
 * with store.durability: full the sync. */
struct held {
	rz_req_t *req;
	const rz_kind_t *k;
	int code;
	json_t *out;
	char *text; /* out as stored, or NULL */
};

static void held_reply(void *arg, int status)
{
	struct held *h = arg;
	int lost = rz_db_uncommitted(status);

	if (status == 0 && h->text != NULL) { /* the stored text: out need not be dumped */
		json_decref(h->out);
		rz_reply_json_text(h->req, h->code, h->text);
	} else if (status == 0) {
		rz_reply_json(h->req, h->code, h->out);
	} else if (lost != 0) { /* the commit failed: as if the write itself had */
		rz_err_t err = { 0 };
		const char *name =
		    json_string_value(json_object_get(json_object_get(h->out, "metadata"), "name"));

		rz_err_set(&err, lost, "committing the write failed: %s", strerror(-lost));
		reply_store_error(h->req, h->k, name, lost, &err);
		json_decref(h->out);
	} else {
		json_decref(h->out);
		rz_reply_error(
		    h->req, 503, NULL,
		    "the change was committed but syncing it to the disk failed (%s): it "
		    "may be lost; read it back before retrying",
		    strerror(-status));
	}
	free(h->text);
	free(h);
}

/* Reply code and out (taken) once the write is durable; text (taken, may be NULL) is out
 * serialised compactly, sent instead of dumping out again. */
static void reply_durable(rz_api_t *api, rz_req_t *req, const rz_kind_t *k, int code, json_t *out,
                          char *text)
{
	struct held *h = malloc(sizeof(*h));

	if (h == NULL) {
		json_decref(out);
		free(text);
		rz_reply_error(req, 503, NULL, "out of memory; the change may have been stored");
		return;
	}
	*h = (struct held){ req, k, code, out, text };
	rz_store_after_durable(api->store, held_reply, h);
}

static void reply_invalid(rz_req_t *req, const rz_kind_t *k, const char *name, json_t *causes)
{
	char msg[512];
	json_t *first = json_array_get(causes, 0);
	json_t *st;
	size_t i;
	json_t *c;

	snprintf(msg, sizeof(msg), "%s \"%s\" is invalid: %s: %s%s", k->kind, name ? name : "",
	         json_string_value(json_object_get(first, "field")),
	         json_string_value(json_object_get(first, "message")),
	         json_array_size(causes) > 1 ? " (and more; see details.causes)" : "");
	st = rz_status_new(422, "Invalid", msg);
	rz_status_set_target(st, k->kind, name);
	json_array_foreach(causes, i, c)
	{
		rz_status_add_cause(st, json_string_value(json_object_get(c, "field")),
		                    json_string_value(json_object_get(c, "reason")),
		                    json_string_value(json_object_get(c, "message")));
	}
	rz_reply_status(req, st);
}

/* ------------------------------------------------------------------ bodies */

static bool media_is(const char *ctype, const char *want)
{
	size_t n = strlen(want);

	return ctype != NULL && strncasecmp(ctype, want, n) == 0 &&
	       (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ');
}

/* The request body as a JSON object, or NULL after replying 400/415. */
/* A body sent as application/yaml: one document, a mapping. */
static json_t *read_yaml(rz_req_t *req, const char *body, size_t len)
{
	rz_err_t err = { 0 };
	json_t *docs = NULL, *obj;

	if (rz_yaml_load_all("body", body, len, &docs, &err) != 0) {
		rz_reply_error(req, 400, NULL, "malformed YAML: %s", err.msg);
		return NULL;
	}
	if (json_array_size(docs) != 1 || !json_is_object(json_array_get(docs, 0))) {
		rz_reply_error(req, 400, NULL,
		               "the request body must be one YAML document, a mapping "
		               "(got %zu documents)",
		               json_array_size(docs));
		json_decref(docs);
		return NULL;
	}
	obj = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	return obj;
}

static json_t *read_body(rz_req_t *req, bool merge_patch)
{
	const char *want = merge_patch ? "application/merge-patch+json" : "application/json";
	const char *ctype = rz_req_header(req, "Content-Type");
	json_error_t jerr;
	size_t len;
	const char *body = rz_req_body(req, &len);
	json_t *obj;

	if (len > RZ_REQUEST_MAX) { /* before parsing: no object this large can be stored */
		rz_reply_error(req, 413, "RequestEntityTooLarge",
		               "the request body is too large: %zu bytes (at most %u)", len,
		               RZ_REQUEST_MAX);
		return NULL;
	}
	if (!merge_patch && media_is(ctype, "application/yaml")) {
		return read_yaml(req, body, len);
	}
	if (!media_is(ctype, want)) {
		rz_reply_error(req, 415, NULL,
		               "unsupported media type %s%s%s: %s requests take %s%s",
		               ctype ? "'" : "", ctype ? ctype : "(none)", ctype ? "'" : "",
		               rz_req_method(req), want, merge_patch ? "" : " or application/yaml");
		return NULL;
	}
	obj = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (obj == NULL) {
		char *near = strstr(jerr.text, " near '");
		if (near != NULL) {
			*near = '\0'; /* it quotes the body, which may hold a password */
		}
		rz_reply_error(req, 400, NULL, "malformed JSON at line %d, column %d (byte %d): %s",
		               jerr.line, jerr.column, jerr.position, jerr.text);
		return NULL;
	}
	if (!json_is_object(obj)) {
		json_decref(obj);
		rz_reply_error(req, 400, NULL, "the request body must be a JSON object");
		return NULL;
	}
	return obj;
}

/* ------------------------------------------------------------------ validation */

/* Put apiVersion and kind first, then metadata, the kind's top-level members, spec, status
 * (the order clients print). */
static void canonical(const rz_kind_t *k, json_t *obj)
{
	static const char *const order[] = { "spec", "status" };
	json_t *copy = json_copy(obj);

	json_object_clear(obj);
	json_object_set_new(obj, "apiVersion", json_string(RZ_API_VERSION));
	json_object_set_new(obj, "kind", json_string(k->kind));
	if (json_object_get(copy, "metadata") != NULL) {
		json_object_set(obj, "metadata", json_object_get(copy, "metadata"));
	}
	for (const rz_field_t *f = k->top; f != NULL && f->name != NULL; f++) {
		if (json_object_get(copy, f->name) != NULL) {
			json_object_set(obj, f->name, json_object_get(copy, f->name));
		}
	}
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		json_t *v = json_object_get(copy, order[i]);
		if (v != NULL) {
			json_object_set(obj, order[i], v);
		}
	}
	json_decref(copy);
}

/* The kind's top-level members are the system's, like status: creates and spec writes
 * leave them as they are. */
static void drop_top(const rz_kind_t *k, json_t *obj)
{
	for (const rz_field_t *f = k->top; f != NULL && f->name != NULL; f++) {
		json_object_del(obj, f->name);
	}
}

/* Validate and normalise a spec write (create, replace, patch). old is the stored object
 * on updates. Returns the number of causes appended. */
static size_t validate_spec_write(const rz_kind_t *k, const rz_api_t *api, json_t *obj,
                                  const json_t *old, json_t *causes)
{
	struct rz_plugins *plugins = api->plugins;

	rz_kind_validate_spec_write(k, obj, old, causes);
	if (json_array_size(causes) == 0 && plugins != NULL && strcmp(k->kind, "NodeGroup") == 0) {
		rz_plugins_validate_nodegroup(plugins, obj, causes);
	}
	if (json_array_size(causes) == 0 && plugins != NULL && strcmp(k->kind, "Tenant") == 0) {
		rz_plugins_validate_tenant(plugins, obj, old, causes);
	}
	if (json_array_size(causes) == 0 && api->admit != NULL) {
		api->admit(api->admit_arg, k, obj, old, causes);
	}
	canonical(k, obj);
	return json_array_size(causes);
}

/* metadata.namespace, which Kubernetes clients send for the tenant: equal to metadata.tenant
 * when both are given (else a 400 naming it), taken for it when alone; a kind without
 * tenants has none (Kubernetes clears it on cluster-scoped objects). False after replying. */
static bool match_namespace(rz_req_t *req, const rz_kind_t *k, json_t *meta)
{
	json_t *nsv = json_object_get(meta, "namespace");
	const char *ns = json_string_value(nsv);
	const char *t = json_string_value(json_object_get(meta, "tenant"));

	if (k->scope != RZ_SCOPE_TENANT || nsv == NULL || json_is_null(nsv)) {
		json_object_del(meta, "namespace");
		return true;
	}
	if (ns == NULL) {
		rz_reply_error(req, 400, NULL, "metadata.namespace: must be a string (the tenant)");
		return false;
	}
	if (t != NULL && strcmp(t, ns) != 0) {
		rz_reply_error(req, 400, NULL,
		               "metadata.namespace (%.*s) does not match metadata.tenant (%.*s): "
		               "the namespace is the tenant",
		               ECHO_MAX, ns, ECHO_MAX, t);
		return false;
	}
	if (t == NULL) {
		json_object_set(meta, "tenant", nsv);
	}
	return true;
}

/* metadata.name and the owner field (metadata.tenant, metadata.user) against the URL.
 * Replies 400 and returns false on a mismatch; fills in the URL's values when absent, and
 * metadata.namespace beside metadata.tenant. */
static bool match_url(rz_req_t *req, const rz_kind_t *k, json_t *obj, const char *owner,
                      const char *name)
{
	const char *field = rz_kind_owner_field(k);
	json_t *meta = json_object_get(obj, "metadata");
	const char *o, *n;

	if (meta == NULL || json_is_null(meta)) {
		meta = json_object();
		json_object_set_new(obj, "metadata", meta);
	}
	if (json_is_object(meta) && !match_namespace(req, k, meta)) {
		return false;
	}
	o = field ? json_string_value(json_object_get(meta, field)) : NULL;
	n = json_string_value(json_object_get(meta, "name"));
	if (owner != NULL && o != NULL && strcmp(o, owner) != 0) {
		rz_reply_error(req, 400, NULL,
		               "the %s of the object (%s) does not match the %s on the URL (%s)",
		               field, o, field, owner);
		return false;
	}
	if (name != NULL && n != NULL && strcmp(n, name) != 0) {
		rz_reply_error(
		    req, 400, NULL,
		    "the name of the object (%s) does not match the name on the URL (%s)", n, name);
		return false;
	}
	if (owner != NULL && field != NULL) {
		json_object_set_new(meta, field, json_string(owner));
	}
	if (owner != NULL && k->scope == RZ_SCOPE_TENANT) {
		json_object_set_new(meta, "namespace", json_string(owner));
	}
	if (name != NULL) {
		json_object_set_new(meta, "name", json_string(name));
	}
	return true;
}

/* ------------------------------------------------------------------ names */

/* Give obj a name when it has none: metadata.generateName and five random characters, as
 * Kubernetes does, or the kind's prefix and eight random hex digits — the form the engine
 * gives the runs it makes ("run-%08x"), so every run is named alike. Returns false (with a
 * cause) when there is nothing to name it by. */
static bool assign_name(const rz_kind_t *k, json_t *obj, json_t *causes)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	json_t *meta = json_object_get(obj, "metadata");
	const char *prefix = json_string_value(json_object_get(meta, "generateName"));
	unsigned char raw[PREFIX_BYTES];
	char name[64], msg[256];
	size_t len;

	if (json_object_get(meta, "name") != NULL) {
		return true;
	}
	if (prefix == NULL && k->name_prefix == NULL) {
		rz_fields_cause(causes, "metadata.name", RZ_CAUSE_REQUIRED,
		                "name or generateName is required");
		return false;
	}
	len = strlen(prefix ? prefix : k->name_prefix);
	memcpy(name, prefix ? prefix : k->name_prefix, len);
	if (prefix != NULL) {
		for (size_t i = 0; i < NAME_SUFFIX; i++) {
			name[len + i] = alphabet[randombytes_uniform(sizeof(alphabet) - 1)];
		}
		name[len + NAME_SUFFIX] = '\0';
	} else {
		randombytes_buf(raw, sizeof(raw));
		sodium_bin2hex(name + len, sizeof(name) - len, raw, sizeof(raw));
	}
	if (!rz_format_dns1123_label(name, msg, sizeof(msg))) {
		rz_fields_cause(causes, "metadata.generateName", RZ_CAUSE_INVALID,
		                "gives the invalid name \"%s\": %s", name, msg);
		return false;
	}
	json_object_set_new(meta, "name", json_string(name));
	return true;
}

/* ------------------------------------------------------------------ lists */

static char *continue_token(const rz_kind_t *k, const json_t *last)
{
	const json_t *meta = json_object_get(last, "metadata");
	const char *field = rz_kind_owner_field(k);
	const char *t = field ? json_string_value(json_object_get(meta, field)) : NULL;

	return rz_lists_continue(t, json_string_value(json_object_get(meta, "name")));
}

/* Decode a continue token into tenant and name (within key). */
static bool parse_continue(const char *token, char *key, size_t size, const char **tenant,
                           const char **name)
{
	size_t len = 0;
	char *nl;

	if (strlen(token) > CONTINUE_MAX) {
		return false;
	}
	if (sodium_base642bin((unsigned char *)key, size - 1, token, strlen(token), NULL, &len,
	                      NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
		return false;
	}
	key[len] = '\0';
	nl = strchr(key, '\n');
	if (nl == NULL || strlen(key) != len || strchr(nl + 1, '\n') != NULL || nl[1] == '\0') {
		return false;
	}
	*nl = '\0';
	*tenant = key;
	*name = nl + 1;
	return true;
}

static const char *const field_selectable[] = { "metadata.name", "metadata.tenant",
	                                        "metadata.namespace", "metadata.user", NULL };

#define SELECTABLE_MAX 16

/* The field paths a fieldSelector on k may name: every kind's, then the kind's own. */
static void selectable(const rz_kind_t *k, const char **out)
{
	size_t n = 0;

	for (size_t i = 0; field_selectable[i] != NULL; i++) {
		out[n++] = field_selectable[i];
	}
	for (size_t i = 0; k->selectable != NULL && k->selectable[i] != NULL; i++) {
		if (n < SELECTABLE_MAX - 1) {
			out[n++] = k->selectable[i];
		}
	}
	out[n] = NULL;
}

/* Parse labelSelector and fieldSelector; replies 400 and returns false on error. */
static bool parse_selectors(rz_req_t *req, const rz_kind_t *k, rz_selector_t **labels,
                            rz_selector_t **fields)
{
	const char *allowed[SELECTABLE_MAX];
	rz_err_t err = { 0 };

	*labels = *fields = NULL;
	selectable(k, allowed);
	if (rz_selector_parse(rz_req_query(req, "labelSelector"), labels, &err) != 0 ||
	    rz_selector_parse_fields(rz_req_query(req, "fieldSelector"), allowed, fields, &err) !=
	        0) {
		rz_selector_free(*labels);
		*labels = NULL;
		rz_reply_error(req, 400, NULL, "%s", err.msg);
		return false;
	}
	return true;
}

/* A boolean query parameter, read as Go's strconv.ParseBool reads one (the Python client
 * sends watch=True); absent or empty is false. Replies 400 naming it and returns false on
 * any other value. */
static bool query_bool(rz_req_t *req, const char *name, bool *out)
{
	const char *v = rz_req_query(req, name);

	*out = false;
	if (v == NULL || *v == '\0' || rz_parse_bool(v, out)) {
		return true;
	}
	rz_reply_error(req, 400, NULL,
	               "invalid value for the query parameter %s: '%.*s': use true or false", name,
	               ECHO_MAX, v);
	return false;
}

/* A DELETE's propagationPolicy: Background and Foreground (a tenant's objects go with it
 * either way). Orphan cannot be honoured, so it is refused rather than ignored. Replies 400
 * and returns false when refused. */
static bool policy_ok(rz_req_t *req, const char *pp)
{
	if (pp == NULL || *pp == '\0' || strcmp(pp, "Background") == 0 ||
	    strcmp(pp, "Foreground") == 0) {
		return true;
	}
	if (strcmp(pp, "Orphan") == 0) {
		rz_reply_error(
		    req, 400, NULL,
		    "propagationPolicy: Unsupported value: \"Orphan\": a tenant's objects "
		    "are deleted with it; supported values: \"Background\", \"Foreground\"");
	} else {
		rz_reply_error(req, 400, NULL,
		               "propagationPolicy: Unsupported value: \"%.*s\": supported values: "
		               "\"Background\", \"Foreground\"",
		               ECHO_MAX, pp);
	}
	return false;
}

/* The write options Kubernetes clients send: dryRun (All: validate and answer without
 * storing), fieldManager (accepted; the server keeps no managed fields), and for deletes
 * propagationPolicy (policy_ok).
 * Replies 400 naming the parameter and returns false on a bad value. */
static bool write_options(rz_req_t *req, bool *dry)
{
	const char *d = rz_req_query(req, "dryRun");
	const char *fm = rz_req_query(req, "fieldManager");
	const char *pp = rz_req_query(req, "propagationPolicy");

	*dry = d != NULL && strcmp(d, "All") == 0;
	if (d != NULL && *d != '\0' && !*dry) {
		rz_reply_error(req, 400, NULL,
		               "dryRun: Unsupported value: \"%.*s\": supported values: \"All\"",
		               ECHO_MAX, d);
		return false;
	}
	if (fm != NULL && strlen(fm) > FIELD_MANAGER_MAX) {
		rz_reply_error(req, 400, NULL, "fieldManager: Too long: must be at most %d bytes",
		               FIELD_MANAGER_MAX);
		return false;
	}
	return policy_ok(req, pp);
}

/* A resourceVersion as Kubernetes spells one: decimal digits only (no sign, no blanks),
 * within int64. */
static bool parse_rv(const char *s, int64_t *out)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && s[n] == '\0' && rz_parse_int(s, 0, INT64_MAX, out);
}

static void handle_watch(struct rctx *c, rz_req_t *req, const char *tenant, rz_selector_t *labels,
                         rz_selector_t *fields)
{
	const char *rv = rz_req_query(req, "resourceVersion");
	const char *match = rz_req_query(req, "resourceVersionMatch");
	rz_watch_opts_t o = {
		.kind = c->k, .tenant = tenant, .labels = labels, .fields = fields, .since = -1
	};

	if (rz_access_filtered(req)) { /* the tenants the principal may see, at each event */
		o.keep = rz_access_keep;
		o.keep_arg = req;
	}

	enum include inc = INCLUDE_METADATA;

	if (!query_bool(req, "allowWatchBookmarks", &o.bookmarks) ||
	    (wants_table(req) && !include_object(req, &inc))) {
		rz_selector_free(labels);
		rz_selector_free(fields);
		return;
	}
	if (wants_table(req)) {
		o.render = table_render;
		o.render_flags = (unsigned)(hide_tenant(req, tenant) ? 1 : 0) | (unsigned)inc << 1;
	}

	if (rv == NULL || *rv == '\0') {
		rv = rz_req_header(req, "Last-Event-ID");
	}
	if ((rv != NULL && *rv != '\0' && !parse_rv(rv, &o.since)) ||
	    (match != NULL && *match != '\0' && strcmp(match, "NotOlderThan") != 0)) {
		rz_selector_free(labels);
		rz_selector_free(fields);
		if (match != NULL && *match != '\0' && strcmp(match, "NotOlderThan") != 0) {
			rz_reply_error(req, 400, NULL,
			               "resourceVersionMatch '%.*s' is not supported for watch: "
			               "supported values: \"NotOlderThan\"",
			               ECHO_MAX, match);
		} else {
			rz_reply_error(req, 400, NULL, "invalid resourceVersion '%.*s'", ECHO_MAX,
			               rv);
		}
		return;
	}
	if (o.since == 0) {
		o.since = -1; /* "0": any version, like Kubernetes: start from the current state */
	}
	rz_watch_start(c->api->watches, req, &o);
}

/* resourceVersion and resourceVersionMatch of a list, checked as Kubernetes checks them.
 * The store serves its newest state only: a revision beyond it, or an exact older one, is
 * 410 Expired (the client lists again without one). Replies and returns false on error. */
static bool list_rv_ok(rz_req_t *req, int64_t current, const char *cont)
{
	const char *rv = rz_req_query(req, "resourceVersion");
	const char *match = rz_req_query(req, "resourceVersionMatch");
	bool have = rv != NULL && *rv != '\0', exact;
	int64_t n = 0;

	if (have && !parse_rv(rv, &n)) {
		rz_reply_error(req, 400, NULL, "invalid resourceVersion '%.*s'", ECHO_MAX, rv);
		return false;
	}
	if (match != NULL && *match != '\0') {
		if (!have) {
			rz_reply_error(
			    req, 400, NULL,
			    "resourceVersionMatch is forbidden unless resourceVersion is "
			    "provided");
			return false;
		}
		if (strcmp(match, "Exact") != 0 && strcmp(match, "NotOlderThan") != 0) {
			rz_reply_error(
			    req, 400, NULL,
			    "resourceVersionMatch: Unsupported value: \"%.*s\": supported "
			    "values: \"Exact\", \"NotOlderThan\"",
			    ECHO_MAX, match);
			return false;
		}
	}
	exact = match != NULL && strcmp(match, "Exact") == 0;
	if (have && cont != NULL && *cont != '\0' && n != 0) {
		rz_reply_error(req, 400, NULL,
		               "specifying resource version is not allowed when using continue");
	} else if (exact && n == 0) {
		rz_reply_error(req, 400, NULL,
		               "resourceVersionMatch \"Exact\" is forbidden for resourceVersion "
		               "\"0\"");
	} else if (n > current) {
		rz_reply_error(req, 410, "Expired",
		               "too large resource version: %" PRId64 " (current %" PRId64 ")", n,
		               current);
	} else if (exact && n != current) {
		rz_reply_error(req, 410, "Expired",
		               "resourceVersion %" PRId64 " is no longer served (current %" PRId64
		               "): list without resourceVersion",
		               n, current);
	} else {
		return true;
	}
	return false;
}

static void handle_list(struct rctx *c, rz_req_t *req, const char *tenant)
{
	rz_lists_opts_t o = { .kind = c->k,
		              .tenant = c->k->scope != RZ_SCOPE_GLOBAL ? tenant : NULL };
	rz_selector_t *labels, *fields;
	const char *limit = rz_req_query(req, "limit");
	const char *cont = rz_req_query(req, "continue");
	char key[512];
	int64_t n = 0;
	rz_err_t err = { 0 };
	bool watch;

	if (!query_bool(req, "pretty", &o.pretty) || !query_bool(req, "watch", &watch) ||
	    !parse_selectors(req, c->k, &labels, &fields)) {
		return;
	}
	if (rz_access_filtered(req)) { /* the tenants the principal may see */
		o.keep = rz_access_keep;
		o.keep_arg = req;
	}
	if (watch) {
		handle_watch(c, req, tenant, labels, fields);
		return;
	}
	if (!list_rv_ok(req, rz_store_revision(c->api->store), cont)) {
		/* replied */
	} else if (limit != NULL && (strspn(limit, "0123456789") != strlen(limit) ||
	                             !rz_parse_int(limit, 0, LIST_LIMIT_MAX, &n))) {
		rz_reply_error(req, 400, NULL, "invalid limit '%.*s': use 1 to %d", ECHO_MAX, limit,
		               LIST_LIMIT_MAX);
	} else if (cont != NULL && *cont != '\0' &&
	           !parse_continue(cont, key, sizeof(key), &o.after_tenant, &o.after_name)) {
		rz_reply_error(req, 400, NULL, "invalid continue token");
	} else {
		o.labels = labels;
		o.fields = fields;
		labels = fields = NULL;
		o.limit = (size_t)n;
		if (wants_table(req)) {
			table_list(c, req, &o);
			rz_selector_free(o.labels);
			rz_selector_free(o.fields);
		} else if (rz_lists_send(req, c->api->store, &o, &err) != 0) {
			reply_store_error(req, c->k, NULL, err.code, &err);
		}
	}
	rz_selector_free(labels);
	rz_selector_free(fields);
}

/* ------------------------------------------------------------------ tables */

/* Whether a Table leaves the TENANT column out: when the request names the tenant (as
 * rezusctl get -n does), or comes on the group path, whose Kubernetes clients print the
 * namespace themselves (kubectl get -A). */
static bool hide_tenant(const rz_req_t *req, const char *tenant)
{
	return tenant != NULL || on_group_path(req);
}

/* Whether the client asks for a Kubernetes Table (Accept: application/json;as=Table;
 * g=meta.k8s.io;v=v1 — or v1beta1, answered as v1, which kubectl reads alike). */
static bool wants_table(const rz_req_t *req)
{
	static const char *const v1[] = { "as=Table", "g=meta.k8s.io", "v=v1", NULL };
	static const char *const v1beta1[] = { "as=Table", "g=meta.k8s.io", "v=v1beta1", NULL };

	return accept_wants(req, v1) || accept_wants(req, v1beta1);
}

/* includeObject: None, Metadata (the default) or Object; replies 400 on anything else. */
static bool include_object(rz_req_t *req, enum include *out)
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
	               "includeObject: Unsupported value: \"%.*s\": supported values: \"None\", "
	               "\"Metadata\", \"Object\"",
	               ECHO_MAX, v);
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
static char *table_render(unsigned flags, const rz_kind_t *k, const json_t *obj)
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
	reply_typed(req, 200, "application/json;as=Table;v=v1;g=meta.k8s.io", table);
}

/* GET of one object as a Table. */
static void table_get(struct rctx *c, rz_req_t *req, const char *tenant, json_t *cur)
{
	enum include inc;
	json_t *t;

	if (!include_object(req, &inc)) {
		json_decref(cur);
		return;
	}
	t = rz_api_table_new(c->k, hide_tenant(req, tenant));
	rz_api_table_add(t, c->k, hide_tenant(req, tenant), cur, inc, time(NULL));
	json_object_set_new(json_object_get(t, "metadata"), "resourceVersion",
	                    json_sprintf("%" PRId64, rz_object_rv(cur)));
	json_decref(cur);
	reply_table(req, t);
}

/* A list as a Table: one page of at most limit (else LIST_LIMIT_MAX) rows, built whole,
 * with a continue token when more follow. o's selectors are borrowed. */
static void table_list(struct rctx *c, rz_req_t *req, const rz_lists_opts_t *o)
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

	if (!include_object(req, &inc)) {
		return;
	}
	if (rz_store_list(c->api->store, c->k, &lo, &items, &more, &err) != 0) {
		reply_store_error(req, c->k, NULL, err.code, &err);
		return;
	}
	t = rz_api_table_new(c->k, hide_tenant(req, o->tenant));
	meta = json_object_get(t, "metadata");
	json_array_foreach(items, i, x)
	{
		rz_api_table_add(t, c->k, hide_tenant(req, o->tenant), x, inc, now);
	}
	json_object_set_new(meta, "resourceVersion", json_sprintf("%" PRId64, rv));
	if (more && json_array_size(items) > 0) {
		char *token =
		    continue_token(c->k, json_array_get(items, json_array_size(items) - 1));
		if (token != NULL) {
			json_object_set_new(meta, "continue", json_string(token));
		}
		free(token);
	}
	json_decref(items);
	reply_table(req, t);
}

/* ------------------------------------------------------------------ writes */

/* A validated write on its way to the store, possibly through the worker pool (password
 * hashing never runs on the loop). */
struct wr {
	struct rctx *c;
	rz_req_t *req;
	bool create;
	char *owner, *name;
	json_t *obj;
	int64_t expect_rv;
	rz_update_mode_t mode;
	int code;
	char *secret; /* a password in clear, until hashed */
	char hash[RZ_PASSWORD_HASH_LEN];
	bool hashed;
	char token[RZ_TOKEN_SECRET_LEN + 1]; /* a new API token's secret, returned once */
	bool dry;                            /* dryRun=All: answer, store nothing */
	json_t *cur;                         /* an update's current object, as read */
};

static void wr_free(struct wr *w)
{
	if (w->secret != NULL) {
		sodium_memzero(w->secret, strlen(w->secret));
		free(w->secret);
	}
	sodium_memzero(w->hash, sizeof(w->hash));
	sodium_memzero(w->token, sizeof(w->token));
	json_decref(w->obj);
	json_decref(w->cur);
	free(w->owner);
	free(w->name);
	free(w);
}

static struct wr *wr_new(struct rctx *c, rz_req_t *req, bool create, const char *owner,
                         const char *name, json_t *obj)
{
	struct wr *w = calloc(1, sizeof(*w));

	if (w == NULL || (owner && (w->owner = strdup(owner)) == NULL) ||
	    (name && (w->name = strdup(name)) == NULL)) {
		if (w != NULL) {
			wr_free(w);
		}
		json_decref(obj);
		rz_reply_error(req, 500, NULL, "out of memory");
		return NULL;
	}
	w->c = c;
	w->req = req;
	w->create = create;
	w->obj = obj;
	w->mode = RZ_UPDATE_SPEC;
	w->code = create ? 201 : 200;
	return w;
}

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/* kubectl apply keeps the manifest it applied in an annotation: a user's password would be
 * stored there in clear. Take field out of it too (a later apply then sets the password
 * again, which is what it asks for). */
static void scrub_last_applied(json_t *obj, const char *field)
{
	json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
	const char *text = json_string_value(json_object_get(ann, LAST_APPLIED));
	json_t *applied = text ? json_loads(text, 0, NULL) : NULL;
	char *clean;

	if (text != NULL && applied == NULL) {
		json_object_del(ann, LAST_APPLIED); /* not JSON: it could hold anything */
		return;
	}
	if (applied == NULL) {
		return;
	}
	json_object_del(json_object_get(applied, "spec"), field);
	clean = json_dumps(applied, JSON_COMPACT);
	if (clean != NULL) {
		json_object_set_new(ann, LAST_APPLIED, json_sprintf("%s\n", clean));
	} else {
		json_object_del(ann, LAST_APPLIED);
	}
	free(clean);
	json_decref(applied);
}

/* Take the kind's write-only field (a user's password) out of the object. */
static void take_secret(struct wr *w)
{
	const char *field = w->c->k->secret_field;
	json_t *spec = json_object_get(w->obj, "spec");
	const char *v = field ? json_string_value(json_object_get(spec, field)) : NULL;

	if (v != NULL) {
		w->secret = strdup(v);
	}
	if (field != NULL) {
		json_object_del(spec, field);
		scrub_last_applied(w->obj, field);
	}
}

static int credentials_hook(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone,
                            void *arg, rz_err_t *err)
{
	struct wr *w = arg;
	const char *user =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	const rz_principal_t *p = rz_access_principal(w->req);
	int rc = rz_auth_store_hash(db, user, w->hash, err);

	/* a new password ends the user's sessions, but the one setting it */
	return rc != 0 ? rc
	               : rz_auth_end_sessions(db, user,
	                                      p && strcmp(p->user, user) == 0 ? p->jti : NULL, err);
}

static int token_hook(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone, void *arg,
                      rz_err_t *err)
{
	static const char sql[] = "INSERT INTO token_secrets (user, id, hash) VALUES (?1, ?2, ?3)";
	struct wr *w = arg;
	const json_t *meta = json_object_get(obj, "metadata");
	char hash[RZ_HASH_HEX_LEN + 1];
	rz_stmt_t *s = rz_db_stmt(db, sql, err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_auth_token_hash(w->token, hash);
	rz_stmt_bind_text(s, 1, json_string_value(json_object_get(meta, "user")));
	rz_stmt_bind_text(s, 2, json_string_value(json_object_get(meta, "name")));
	rz_stmt_bind_text(s, 3, hash);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

/* A dry run's answer: the object as it would be written, stored nowhere (no uid, no
 * resourceVersion for a create, as nothing was written to give them). */
static void dry_reply(struct wr *w)
{
	json_t *out = w->obj;
	json_t *meta = json_object_get(out, "metadata");
	char now[40];

	if (w->create) {
		rz_time_now(now, sizeof(now));
		json_object_set_new(meta, "creationTimestamp", json_string(now));
		json_object_set_new(meta, "generation", json_integer(1));
		json_object_del(meta, "generateName");
	}
	w->obj = NULL;
	rz_reply_json(w->req, w->code, out);
	wr_free(w);
}

/* Store the write with its audit row (and credentials) in one transaction; reply. */
static void commit(struct wr *w)
{
	rz_write_hook_t cred = { credentials_hook, w, NULL }, tok = { token_hook, w, NULL };
	const rz_write_hook_t *chain = NULL;
	rz_access_hook_t audit;
	const char *name =
	    json_string_value(json_object_get(json_object_get(w->obj, "metadata"), "name"));
	json_t *out = NULL;
	char *text = NULL;
	rz_err_t err = { 0 };
	bool gone = false;
	int rc;

	if (w->dry) {
		dry_reply(w);
		return;
	}
	if (w->hashed) {
		chain = &cred;
	} else if (w->token[0] != '\0') {
		chain = &tok;
	}
	chain = rz_access_hook(w->c->api->access, w->req, w->code, NULL, chain, &audit);
	/* the reply waits for the group's commit, and is the stored text unless a token's
	 * secret goes with it or ?pretty asks for another layout */
	rz_store_next(w->c->api->store,
	              &(rz_write_opts_t){ .group = true,
	                                  .current = w->cur,
	                                  .text = w->token[0] == '\0' &&
	                                                  rz_req_query(w->req, "pretty") == NULL
	                                              ? &text
	                                              : NULL });
	rc = w->create ? rz_store_create(w->c->api->store, w->c->k, w->obj, chain, &out, &err)
	               : rz_store_update(w->c->api->store, w->c->k, w->owner, w->name, w->obj,
	                                 w->expect_rv, w->mode, chain, &out, &gone, &err);
	if (rc != 0) {
		json_decref(out);
		reply_store_error(w->req, w->c->k, name, rc, &err);
	} else {
		if (w->c->api->access != NULL) {
			rz_req_set_audited(w->req);
		}
		if (w->token[0] != '\0') {
			/* on the reply's own copy: the stored object is also the one its
			 * watchers get (a Table with includeObject shows it whole) */
			json_t *reply = json_copy(out);
			json_decref(out);
			out = reply;
			if (out == NULL ||
			    json_object_set_new(out, "secret", json_string(w->token)) != 0) {
				json_decref(out);
				rz_reply_error(w->req, 500, NULL, "out of memory");
				wr_free(w);
				return;
			}
		}
		reply_durable(w->c->api, w->req, w->c->k, w->code, out, text);
		text = NULL;
	}
	free(text);
	wr_free(w);
}

static void hash_work(void *arg)
{
	struct wr *w = arg;

	w->hashed = rz_auth_hash_password(w->secret, w->hash) == 0;
	sodium_memzero(w->secret, strlen(w->secret));
}

static void hash_done(void *arg, int canceled)
{
	struct wr *w = arg;

	if (canceled || !w->hashed) {
		rz_reply_error(w->req, canceled ? 503 : 500, NULL, "%s",
		               canceled ? "shutting down" : "password hashing failed");
		wr_free(w);
		return;
	}
	commit(w);
}

/* Commit now, or after hashing the password on the worker pool. */
static void submit(struct wr *w)
{
	take_secret(w);
	if (w->secret == NULL || w->dry) {
		commit(w);
	} else if (w->c->api->workers == NULL) {
		hash_work(w); /* no pool (tools and tests): hash here */
		hash_done(w, 0);
	} else if (rz_workers_submit(w->c->api->workers, hash_work, hash_done, w) != 0) {
		rz_reply_error(w->req, 503, NULL, "the server is busy; try again");
		wr_free(w);
	}
}

/* ------------------------------------------------------------------ users and tokens */

/* Enabled admins other than except. */
static size_t other_admins(rz_api_t *api, const char *except)
{
	rz_list_opts_t o = { 0 };
	json_t *items = NULL, *u;
	bool more;
	size_t i, n = 0;
	rz_err_t err = { 0 };

	if (rz_store_list(api->store, rz_kind_by_name("User"), &o, &items, &more, &err) != 0) {
		return 0;
	}
	json_array_foreach(items, i, u)
	{
		json_t *spec = json_object_get(u, "spec");
		const char *name =
		    json_string_value(json_object_get(json_object_get(u, "metadata"), "name"));
		const char *role = json_string_value(json_object_get(spec, "role"));
		n += role && strcmp(role, "admin") == 0 &&
		     !json_is_true(json_object_get(spec, "disabled")) && strcmp(name, except) != 0;
	}
	json_decref(items);
	return n;
}

static bool active_admin(const json_t *u)
{
	const json_t *spec = json_object_get(u, "spec");
	const char *role = json_string_value(json_object_get(spec, "role"));

	return u != NULL && role != NULL && strcmp(role, "admin") == 0 &&
	       !json_is_true(json_object_get(spec, "disabled"));
}

/* The last admin can neither be demoted, disabled nor deleted. next is NULL for a delete. */
static bool last_admin_kept(struct rctx *c, const json_t *old, const json_t *next, json_t *causes)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(old, "metadata"), "name"));

	if (strcmp(c->k->kind, "User") != 0 || !active_admin(old) || active_admin(next) ||
	    other_admins(c->api, name) > 0) {
		return true;
	}
	if (causes == NULL) {
		return false;
	} else if (next != NULL &&
	           !json_is_true(json_object_get(json_object_get(next, "spec"), "disabled"))) {
		rz_fields_cause(causes, "spec.role", RZ_CAUSE_FORBIDDEN,
		                "the last admin cannot be demoted");
	} else if (next != NULL) {
		rz_fields_cause(causes, "spec.disabled", RZ_CAUSE_FORBIDDEN,
		                "the last admin cannot be disabled");
	}
	return false;
}

/* A token's ceiling (rz_auth_mint_check): its owner's role and the credential making it. */
static void token_role(struct rctx *c, rz_req_t *req, json_t *obj, const char *owner,
                       json_t *causes)
{
	json_t *u = NULL;
	rz_err_t err = { 0 };
	int have;

	if (rz_store_get(c->api->store, rz_kind_by_name("User"), NULL, owner, &u, &err) != 0) {
		return; /* the store reports the missing user */
	}
	have =
	    rz_role_parse(json_string_value(json_object_get(json_object_get(u, "spec"), "role")));
	json_decref(u);
	rz_auth_mint_check(rz_access_principal(req), have, json_object_get(obj, "spec"), causes);
}

/* ------------------------------------------------------------------ writes */

static void handle_create(struct rctx *c, rz_req_t *req, const char *tenant)
{
	json_t *obj = NULL;
	json_t *causes = json_array();
	const char *name;
	struct wr *w;
	bool dry;

	if (!write_options(req, &dry) || (obj = read_body(req, false)) == NULL ||
	    !match_url(req, c->k, obj, tenant, NULL)) {
		goto out;
	}
	json_object_del(obj, "status"); /* create ignores status */
	drop_top(c->k, obj);
	if (validate_spec_write(c->k, c->api, obj, NULL, causes) == 0) {
		assign_name(c->k, obj, causes);
	}
	if (json_array_size(causes) == 0 && strcmp(c->k->kind, "APIToken") == 0) {
		token_role(c, req, obj, tenant, causes);
	}
	name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	if (json_array_size(causes) > 0) {
		reply_invalid(req, c->k, name, causes);
		goto out;
	}
	w = wr_new(c, req, true, tenant, NULL, obj);
	obj = NULL;
	if (w != NULL) {
		w->dry = dry;
		if (strcmp(c->k->kind, "APIToken") == 0 && !dry) {
			rz_auth_token_secret(w->token);
		}
		submit(w);
	}
out:
	json_decref(causes);
	json_decref(obj);
}

/* Load the current object, shared with the store's cache (rz_store_get_shared: never modified
 * here); replies 404 (or 500) and returns NULL when it cannot. */
static json_t *current(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	json_t *cur = NULL;
	rz_err_t err = { 0 };
	int rc = rz_store_get_shared(c->api->store, c->k, tenant, name, &cur, &err);

	if (rc != 0) {
		reply_store_error(req, c->k, name, rc, &err);
		return NULL;
	}
	return cur;
}

/* Validate an update (replace or patch) of obj over cur and send it on its way. */
static void update(struct rctx *c, rz_req_t *req, const char *tenant, const char *name, json_t *obj,
                   const json_t *cur, int64_t rv, json_t *causes, bool dry)
{
	rz_update_mode_t mode = c->form == FORM_STATUS ? RZ_UPDATE_STATUS : RZ_UPDATE_SPEC;
	struct wr *w;

	if (mode == RZ_UPDATE_STATUS) {
		rz_kind_validate_status_write(c->k, obj, causes);
	} else if (validate_spec_write(c->k, c->api, obj, cur, causes) == 0) {
		last_admin_kept(c, cur, obj, causes);
	}
	if (json_array_size(causes) > 0) {
		reply_invalid(req, c->k, name, causes);
		json_decref(obj);
		return;
	}
	w = wr_new(c, req, false, tenant, name, obj);
	if (w != NULL) {
		w->expect_rv = rv;
		w->mode = mode;
		w->dry = dry;
		w->cur = json_incref((json_t *)cur); /* the store need not read it again */
		if (mode == RZ_UPDATE_STATUS) {
			commit(w); /* status writes carry no secrets */
		} else {
			submit(w);
		}
	}
}

/* metadata.resourceVersion of a body: 0 when absent; a string that is no revision is a cause
 * (never taken for "no precondition"). */
static int64_t body_rv(const json_t *obj, json_t *causes)
{
	const char *s =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	int64_t rv = 0;

	if (s != NULL && *s != '\0' && (!parse_rv(s, &rv) || rv == 0)) {
		rz_fields_cause(causes, "metadata.resourceVersion", RZ_CAUSE_INVALID,
		                "must be a resourceVersion the server gave (decimal digits)");
		return 0;
	}
	return rv;
}

/* PUT of the object or of its status: resourceVersion is required. */
static void handle_replace(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	json_t *obj = NULL;
	json_t *causes = json_array();
	json_t *cur = NULL;
	int64_t rv;
	bool dry;

	if (!write_options(req, &dry) || (obj = read_body(req, false)) == NULL ||
	    !match_url(req, c->k, obj, tenant, name)) {
		goto out;
	}
	rv = body_rv(obj, causes);
	if (rv == 0 && json_array_size(causes) == 0) {
		rz_fields_cause(causes, "metadata.resourceVersion", RZ_CAUSE_REQUIRED,
		                "must be specified for an update");
	}
	cur = current(c, req, tenant, name);
	if (cur != NULL) {
		update(c, req, tenant, name, obj, cur, rv, causes, dry);
		obj = NULL;
	}
out:
	json_decref(cur);
	json_decref(causes);
	json_decref(obj);
}

/* PATCH (merge patch) of the object or of its status. A resourceVersion in the patch is a
 * precondition; without one the patch applies to the current version. */
static void handle_patch(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	json_t *patch = NULL;
	json_t *causes = json_array();
	json_t *cur = NULL, *next = NULL;
	int64_t rv;
	bool dry;

	if (!write_options(req, &dry) || (patch = read_body(req, true)) == NULL) {
		goto out;
	}
	cur = current(c, req, tenant, name);
	if (cur == NULL) {
		goto out;
	}
	rv = body_rv(patch, causes);
	rv = rv ? rv : rz_object_rv(cur);
	next = rz_merge_patch(cur, patch);
	if (next == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
	} else if (match_url(req, c->k, next, tenant, name)) {
		update(c, req, tenant, name, next, cur, rv, causes, dry);
		next = NULL;
	}
out:
	json_decref(next);
	json_decref(cur);
	json_decref(causes);
	json_decref(patch);
}

/* DELETE: 200 with the last state when the object is gone, 202 while finalizers hold it.
 * An optional body {"preconditions": {"resourceVersion": "N"}} guards against races. */
/* A DELETE's body, Kubernetes' DeleteOptions: preconditions.resourceVersion (into *rv),
 * dryRun ["All"] (sets *dry), propagationPolicy. Replies 400 and returns false when bad. */
static bool delete_options(rz_req_t *req, int64_t *rv, bool *dry)
{
	json_t *opts = read_body(req, false), *d, *x;
	const char *pre, *pp;
	size_t i;
	bool ok = true;

	if (opts == NULL) {
		return false;
	}
	pre = json_string_value(
	    json_object_get(json_object_get(opts, "preconditions"), "resourceVersion"));
	pp = json_string_value(json_object_get(opts, "propagationPolicy"));
	d = json_object_get(opts, "dryRun");
	if (pre != NULL && !rz_parse_int(pre, 1, INT64_MAX, rv)) {
		rz_reply_error(req, 400, NULL, "invalid preconditions.resourceVersion '%.*s'",
		               ECHO_MAX, pre);
		ok = false;
	} else if (!policy_ok(req, pp)) {
		ok = false;
	}
	json_array_foreach(d, i, x)
	{
		if (ok &&
		    (json_string_value(x) == NULL || strcmp(json_string_value(x), "All") != 0)) {
			rz_reply_error(req, 400, NULL,
			               "dryRun: Unsupported value: supported values: \"All\"");
			ok = false;
		}
		*dry = true;
	}
	json_decref(opts);
	return ok;
}

static void handle_delete(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	size_t len;
	int64_t rv = 0;
	json_t *out = NULL, *cur;
	rz_access_hook_t audit;
	bool gone = false, dry;
	rz_err_t err = { 0 };
	int rc;

	if (!write_options(req, &dry)) {
		return;
	}
	rz_req_body(req, &len);
	if (len > 0 && !delete_options(req, &rv, &dry)) {
		return;
	}
	cur = current(c, req, tenant, name);
	if (cur == NULL) {
		return;
	}
	if (!last_admin_kept(c, cur, NULL, NULL)) {
		json_decref(cur);
		rz_reply_error(req, 409, "Conflict",
		               "user \"%s\" is the last admin: it can neither be deleted, disabled "
		               "nor demoted",
		               name);
		return;
	}
	if (dry) {
		rz_reply_json(req, 200, cur);
		return;
	}
	json_decref(cur);
	rz_store_next(c->api->store, &(rz_write_opts_t){ .group = true });
	rc = rz_store_delete(c->api->store, c->k, tenant, name, rv,
	                     rz_access_hook(c->api->access, req, 0, NULL, NULL, &audit), &out,
	                     &gone, &err);
	if (rc != 0) {
		json_decref(out);
		reply_store_error(req, c->k, name, rc, &err);
		return;
	}
	if (c->api->access != NULL) {
		rz_req_set_audited(req);
	}
	reply_durable(c->api, req, c->k, gone ? 200 : 202, out, NULL);
}

/* ------------------------------------------------------------------ dispatch */

static void handle(rz_req_t *req, void *ctx)
{
	struct rctx *c = ctx;
	const char *field = rz_kind_owner_field(c->k);
	const char *tenant = field ? rz_req_param(req, field) : NULL;
	const char *name = rz_req_param(req, "name");
	unsigned m = rz_req_method_bit(req);
	json_t *cur;

	if (c->form == FORM_COLLECTION || c->form == FORM_ALL) {
		if (m == RZ_M_POST) {
			handle_create(c, req, tenant);
		} else {
			handle_list(c, req, tenant);
		}
	} else if (m == RZ_M_GET || m == RZ_M_HEAD) {
		cur = current(c, req, tenant, name);
		if (cur != NULL && wants_table(req)) {
			table_get(c, req, tenant, cur);
		} else if (cur != NULL) {
			rz_reply_json(req, 200, cur);
		}
	} else if (m == RZ_M_PUT) {
		handle_replace(c, req, tenant, name);
	} else if (m == RZ_M_PATCH) {
		handle_patch(c, req, tenant, name);
	} else {
		handle_delete(c, req, tenant, name);
	}
}

/* ------------------------------------------------------------------ discovery */

static json_t *verb_list(unsigned verbs)
{
	json_t *a = json_array();

	for (unsigned bit = 1; bit <= RZ_VERB_STATUS; bit <<= 1) {
		if ((verbs & bit) && bit != RZ_VERB_STATUS) {
			json_array_append_new(a, json_string(rz_verb_name(bit)));
		}
	}
	return a;
}

static json_t *short_names(const rz_kind_t *k)
{
	json_t *a = json_array();

	for (const char *const *s = k->short_names; s != NULL && *s != NULL; s++) {
		json_array_append_new(a, json_string(*s));
	}
	return a;
}

static const rz_route_doc_t discovery_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getAPIResources",
	  .summary = "the kinds, as Kubernetes' APIResourceList (rezusctl api-resources)",
	  .response = "{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"string\"},"
	              "\"groupVersion\":{\"type\":\"string\"},\"resources\":{\"type\":"
	              "\"array\",\"items\":{\"type\":\"object\",\"additionalProperties\":"
	              "true}}}}" },
	{ 0 },
};

/* GET /api/v1/tenants/{tenant}/effectivepatches/{role}: the ConfigPatches a machine of role
 * gets, as the cluster plugin applies them (enabled, targetRole all or role, in name order),
 * and the YAML stream of their patches in that order. A patch restricted to node groups is
 * listed with them: it applies only to their machines. */
static const int effective_errors[] = { 404, 422, 0 };
static const rz_route_doc_t effective_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readEffectivePatch",
	  .summary = "the config patches a machine of a role (controlplane or worker) gets, in "
	             "the order they apply, and their YAML as one stream",
	  .response = "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":"
	              "\"string\"},\"kind\":{\"type\":\"string\"},\"tenant\":{\"type\":"
	              "\"string\"},\"role\":{\"type\":\"string\"},\"patch\":{\"type\":"
	              "\"string\"},\"items\":{\"type\":\"array\",\"items\":{\"type\":"
	              "\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"format\":{"
	              "\"type\":\"string\"},\"targetRole\":{\"type\":\"string\"},"
	              "\"nodeGroups\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}}}}",
	  .errors = effective_errors },
	{ 0 },
};

static bool patch_targets_role(const json_t *p, const char *role)
{
	const json_t *spec = json_object_get(p, "spec");
	const char *target = json_string_value(json_object_get(spec, "targetRole"));
	const json_t *enabled = json_object_get(spec, "enabled");

	return (enabled == NULL || json_is_true(enabled)) &&
	       (target == NULL || strcmp(target, "all") == 0 || strcmp(target, role) == 0);
}

static void handle_effective(rz_req_t *req, void *ctx)
{
	rz_api_t *api = ((struct rctx *)ctx)->api;
	const char *tenant = rz_req_param(req, "tenant"), *role = rz_req_param(req, "role");
	json_t *t = NULL, *all, *items, *p;
	rz_err_t err = { 0 };
	size_t i, len = 0;
	char *yaml;
	int rc;

	if (strcmp(role, "controlplane") != 0 && strcmp(role, "worker") != 0) {
		json_t *st = rz_status_new(422, "Invalid", "role must be controlplane or worker");
		rz_status_add_cause(st, "role", RZ_CAUSE_NOT_SUPPORTED,
		                    "supported values: \"controlplane\", \"worker\"");
		rz_reply_status(req, st);
		return;
	}
	rc = rz_store_get(api->store, rz_kind_by_name("Tenant"), NULL, tenant, &t, &err);
	json_decref(t);
	if (rc != 0) {
		reply_store_error(req, rz_kind_by_name("Tenant"), tenant, rc, &err);
		return;
	}
	all = rz_store_list_all(api->store, "ConfigPatch", tenant);
	items = json_array();
	json_array_foreach(all, i, p)
	{
		const json_t *spec = json_object_get(p, "spec");
		const char *text = json_string_value(json_object_get(spec, "patch"));
		if (patch_targets_role(p, role)) {
			json_t *ngs = json_object_get(spec, "nodeGroups");
			json_array_append_new(
			    items,
			    json_pack(
			        "{s:s, s:s, s:s, s:o}", "name",
			        json_string_value(
			            json_object_get(json_object_get(p, "metadata"), "name"))
			            ?: "",
			        "format",
			        json_string_value(json_object_get(spec, "format")) ?: "strategic",
			        "targetRole",
			        json_string_value(json_object_get(spec, "targetRole")) ?: "all",
			        "nodeGroups", ngs ? json_incref(ngs) : json_array()));
			len += (text ? strlen(text) : 0) + 80;
		}
	}
	yaml = calloc(1, len + 1);
	if (yaml == NULL) {
		json_decref(all);
		json_decref(items);
		rz_reply_status(req, rz_status_new(500, "", "out of memory"));
		return;
	}
	len = 0;
	json_array_foreach(all, i, p)
	{
		const json_t *spec = json_object_get(p, "spec");
		const char *text = json_string_value(json_object_get(spec, "patch")) ?: "";
		size_t n = strlen(text);
		if (!patch_targets_role(p, role)) {
			continue;
		}
		len += (size_t)sprintf(
		    yaml + len, "%s# %.63s\n", len ? "---\n" : "",
		    json_string_value(json_object_get(json_object_get(p, "metadata"), "name"))
		        ?: "");
		memcpy(yaml + len, text, n);
		len += n;
		if (n > 0 && text[n - 1] != '\n') {
			yaml[len++] = '\n';
		}
	}
	json_decref(all);
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:s, s:s, s:o, s:s%}", "apiVersion", RZ_API_VERSION,
	                        "kind", "EffectivePatch", "tenant", tenant, "role", role, "items",
	                        items, "patch", yaml, len));
	free(yaml);
}

/* Whether the request is on the Kubernetes group path (/apis/rezuscloud.io/v1/...). */
static bool on_group_path(const rz_req_t *req)
{
	return strncmp(rz_req_path(req), RZ_API_GROUP_PATH, strlen(RZ_API_GROUP_PATH)) == 0;
}

/* A kind's resource name in discovery: its plural, or for a kind under users
 * (/users/{user}/tokens) "users/tokens" on the group path, where its path says so. */
static void resource_name(const rz_kind_t *k, bool group, char *buf, size_t size)
{
	const rz_kind_t *owner = rz_kind_owner(k);

	if (group && k->scope == RZ_SCOPE_USER && owner != NULL) {
		snprintf(buf, size, "%s/%s", owner->plural, k->plural);
	} else {
		snprintf(buf, size, "%s", k->plural);
	}
}

/* GET /api/v1 and /apis/rezuscloud.io/v1: the kinds, as Kubernetes' APIResourceList
 * (rezusctl api-resources, kubectl's discovery). */
static void handle_discovery(rz_req_t *req, void *ctx)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	json_t *list = json_array();
	bool group = on_group_path(req);

	for (size_t i = 0; i < n; i++) {
		const rz_kind_t *k = &kinds[i];
		char name[96];
		resource_name(k, group, name, sizeof(name));
		json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s, s:o, s:o}", "name",
		                                      name, "singularName", k->singular,
		                                      "namespaced", k->scope == RZ_SCOPE_TENANT,
		                                      "kind", k->kind, "verbs", verb_list(k->verbs),
		                                      "shortNames", short_names(k)));
		if (k->verbs & RZ_VERB_STATUS) {
			char sub[112];
			snprintf(sub, sizeof(sub), "%s/status", name);
			json_array_append_new(
			    list,
			    json_pack("{s:s, s:s, s:b, s:s, s:[s,s,s]}", "name", sub,
			              "singularName", "", "namespaced", k->scope == RZ_SCOPE_TENANT,
			              "kind", k->kind, "verbs", "get", "patch", "update"));
		}
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion",
	                        "v1", "groupVersion", RZ_API_VERSION, "resources", list));
}

/* Whether one media range of the Accept header has every parameter of want (each
 * "name=value"; NULL ends it). */
static bool accept_wants(const rz_req_t *req, const char *const *want)
{
	const char *accept = rz_req_header(req, "Accept");
	char buf[1024], *save = NULL;

	if (accept == NULL || strlen(accept) >= sizeof(buf)) {
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", accept);
	for (char *range = strtok_r(buf, ",", &save); range != NULL;
	     range = strtok_r(NULL, ",", &save)) {
		bool all = true;
		for (size_t i = 0; all && want[i] != NULL; i++) {
			char *p = range;
			size_t len = strlen(want[i]);
			all = false;
			while (!all && (p = strchr(p, ';')) != NULL) {
				p += 1 + strspn(p + 1, " ");
				all = strncmp(p, want[i], len) == 0 &&
				      (p[len] == '\0' || p[len] == ';' || p[len] == ' ');
			}
		}
		if (all) {
			return true;
		}
	}
	return false;
}

/* The apidiscovery.k8s.io version the client asks for first ("v2", "v2beta1"), or NULL. */
static const char *aggregated_version(const rz_req_t *req)
{
	static const char *const v2[] = { "g=apidiscovery.k8s.io", "v=v2",
		                          "as=APIGroupDiscoveryList", NULL };
	static const char *const v2beta1[] = { "g=apidiscovery.k8s.io", "v=v2beta1",
		                               "as=APIGroupDiscoveryList", NULL };

	return accept_wants(req, v2) ? "v2" : accept_wants(req, v2beta1) ? "v2beta1" : NULL;
}

static json_t *response_kind(const char *kind)
{
	return json_pack("{s:s, s:s, s:s}", "group", RZ_API_GROUP, "version", "v1", "kind", kind);
}

/* One kind as an APIResourceDiscovery; a kind under users becomes a subresource of users
 * (appended to users' entry later by the caller's walk, so it is returned apart). */
static json_t *resource_discovery(const rz_kind_t *k)
{
	json_t *r = json_pack("{s:s, s:o, s:s, s:s, s:o}", "resource", k->plural, "responseKind",
	                      response_kind(k->kind), "scope",
	                      k->scope == RZ_SCOPE_TENANT ? "Namespaced" : "Cluster",
	                      "singularResource", k->singular, "verbs", verb_list(k->verbs));
	json_t *subs = json_array();

	if (json_array_size(json_object_get(r, "verbs")) == 0) {
		json_object_set_new(r, "verbs", json_pack("[s]", "get"));
	}
	if (k->short_names != NULL && k->short_names[0] != NULL) {
		json_object_set_new(r, "shortNames", short_names(k));
	}
	if (k->verbs & RZ_VERB_STATUS) {
		json_array_append_new(subs,
		                      json_pack("{s:s, s:o, s:[s,s,s]}", "subresource", "status",
		                                "responseKind", response_kind(k->kind), "verbs",
		                                "get", "patch", "update"));
	}
	json_object_set_new(r, "subresources", subs);
	return r;
}

/* The group's APIGroupDiscovery: every kind, a kind under users as users' subresource. */
static json_t *group_discovery(void)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	json_t *resources = json_array();

	for (size_t i = 0; i < n; i++) {
		if (kinds[i].scope != RZ_SCOPE_USER) {
			json_array_append_new(resources, resource_discovery(&kinds[i]));
		}
	}
	for (size_t i = 0; i < n; i++) {
		const rz_kind_t *k = &kinds[i], *owner = rz_kind_owner(k);
		json_t *r;
		size_t j;
		if (k->scope != RZ_SCOPE_USER || owner == NULL) {
			continue;
		}
		json_array_foreach(resources, j, r)
		{
			if (strcmp(json_string_value(json_object_get(r, "resource")),
			           owner->plural) == 0) {
				json_array_append_new(json_object_get(r, "subresources"),
				                      json_pack("{s:s, s:o, s:o}", "subresource",
				                                k->plural, "responseKind",
				                                response_kind(k->kind), "verbs",
				                                verb_list(k->verbs)));
			}
		}
	}
	return json_pack("{s:{s:s}, s:[{s:s, s:o, s:s}]}", "metadata", "name", RZ_API_GROUP,
	                 "versions", "version", "v1", "resources", resources, "freshness",
	                 "Current");
}

/* Reply obj (taken) with a content type of the caller's. */
static void reply_typed(rz_req_t *req, int code, const char *ctype, json_t *obj)
{
	bool pretty = false;
	char *text;

	rz_parse_bool(rz_req_query(req, "pretty"), &pretty);
	text = json_dumps(obj, pretty ? JSON_INDENT(2) : JSON_COMPACT);
	json_decref(obj);
	if (text == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
		return;
	}
	rz_reply(req, code, ctype, text, strlen(text));
	free(text);
}

/* GET /api and /apis as aggregated discovery (apidiscovery.k8s.io, what kubectl asks for
 * first): /api has no group (the core group is Kubernetes', not ours), /apis has ours. */
static void reply_aggregated(rz_req_t *req, const char *version, bool groups)
{
	char av[64], ctype[128];

	snprintf(av, sizeof(av), "apidiscovery.k8s.io/%s", version);
	snprintf(ctype, sizeof(ctype),
	         "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList", version);
	reply_typed(req, 200, ctype,
	            json_pack("{s:s, s:s, s:{}, s:o}", "kind", "APIGroupDiscoveryList",
	                      "apiVersion", av, "metadata", "items",
	                      groups ? json_pack("[o]", group_discovery()) : json_array()));
}

static const rz_route_doc_t api_versions_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getAPIVersions",
	  .summary = "Kubernetes' APIVersions of the core group (kubectl's discovery)",
	  .response = "Object" },
	{ 0 },
};

static const rz_route_doc_t api_groups_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getAPIGroups",
	  .summary = "Kubernetes' APIGroupList, or the aggregated APIGroupDiscoveryList its "
	             "Accept asks for (kubectl's discovery)",
	  .response = "Object" },
	{ 0 },
};

#define COUNTS_SCHEMA                                                                              \
	"{\"type\":\"object\",\"properties\":{\"total\":{\"type\":\"integer\"},\"by\":{\"type\":"  \
	"\"object\",\"additionalProperties\":{\"type\":\"integer\"}}}}"
#define NEWEST_SCHEMA(kind)                                                                        \
	"{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/" kind "\"}}"
#define SUMMARY_RECENT_MAX 50
static const rz_route_param_t summary_query[] = {
	{ "recent", "integer",
	  "also the newest this many (1 to 50) runs that are Queued, Running or "
	  "AwaitingApproval (recent.activeRuns), that Failed (recent.failedRuns), and "
	  "Warning Events (recent.warnings), the last created first" },
	{ NULL, NULL, NULL },
};
static const int summary_errors[] = { 400, 0 };
static const rz_route_doc_t summary_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readSummary",
	  .summary = "how many tenants there are by status.phase, machines by status.stage and "
	             "runs by status.phase, counted by the store without reading the objects out; "
	             "with recent, the newest active and failed runs and Warning Events",
	  .query = summary_query,
	  .errors = summary_errors,
	  .response = "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":"
	              "\"string\"},\"kind\":{\"type\":\"string\"},\"tenants\":" COUNTS_SCHEMA
	              ",\"machines\":" COUNTS_SCHEMA ",\"runs\":" COUNTS_SCHEMA
	              ",\"recent\":{\"type\":\"object\",\"properties\":{"
	              "\"activeRuns\":" NEWEST_SCHEMA("Run") ",\"failedRuns\":" NEWEST_SCHEMA(
	                  "Run") ",\"warnings\":" NEWEST_SCHEMA("Event") "}}}}" },
	{ 0 },
};
#undef NEWEST_SCHEMA
#undef COUNTS_SCHEMA

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

/* {"total": N, "by": {value: n}} for kind's objects grouped by path; NULL after replying. */
static json_t *counts(struct rctx *c, rz_req_t *req, const char *kind, const char *path)
{
	struct tally t = { json_object(), 0 };
	rz_err_t err = { 0 };
	int rc;

	if (rz_access_filtered(req)) { /* the tenants the principal may see */
		rc = rz_store_count_kept(c->api->store, rz_kind_by_name(kind), path, rz_access_keep,
		                         req, tally, &t, &err);
	} else {
		rc = rz_store_count_by(c->api->store, rz_kind_by_name(kind), path, tally, &t, &err);
	}

	if (rc != 0) {
		json_decref(t.by);
		reply_store_error(req, rz_kind_by_name(kind), NULL, rc, &err);
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

/* The newest n objects of kind whose path is one of values, the last created first (none
 * when known counts say there is none); NULL after replying. */
static json_t *newest(struct rctx *c, rz_req_t *req, const char *kind, const char *path,
                      const char *const *values, const json_t *known, size_t n)
{
	json_t *out = json_array();
	struct newest_to to = { out, rz_access_filtered(req) ? req : NULL };
	rz_err_t err = { 0 };
	int rc = known != NULL && counted(known, values) == 0
	             ? 0
	             : rz_store_newest(c->api->store, rz_kind_by_name(kind), path, values, n,
	                               add_newest, &to, &err);

	if (rc < 0) {
		json_decref(out);
		reply_store_error(req, rz_kind_by_name(kind), NULL, rc, &err);
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
	json_t *active = newest(c, req, "Run", "$.status.phase", going, runs, n);
	json_t *failed = NULL, *warnings;

	if (active == NULL ||
	    (failed = newest(c, req, "Run", "$.status.phase", failed_phase, runs, n)) == NULL ||
	    (warnings = newest(c, req, "Event", "$.type", warning, NULL, n)) == NULL) {
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
static void handle_summary(rz_req_t *req, void *ctx)
{
	struct rctx *c = ctx;
	const char *want = rz_req_query(req, "recent");
	json_t *tenants, *machines = NULL, *runs = NULL, *last = NULL, *out;
	int64_t n = 0;

	if (want != NULL && (strspn(want, "0123456789") != strlen(want) ||
	                     !rz_parse_int(want, 1, SUMMARY_RECENT_MAX, &n))) {
		rz_reply_error(req, 400, NULL, "invalid recent '%.*s': use 1 to %d", ECHO_MAX, want,
		               SUMMARY_RECENT_MAX);
		return;
	}
	if (rz_access_principal(req) != NULL && rz_access_principal(req)->role < RZ_ROLE_VIEW) {
		rz_access_filter(req); /* role none: its tenants' counts only */
	}
	tenants = counts(c, req, "Tenant", "$.status.phase");
	if (tenants == NULL || (machines = counts(c, req, "Machine", "$.status.stage")) == NULL ||
	    (runs = counts(c, req, "Run", "$.status.phase")) == NULL ||
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

/* GET /api: APIVersions with no version, as the API has no Kubernetes core group; every
 * kind is in rezuscloud.io/v1 under /apis. */
static void handle_api_versions(rz_req_t *req, void *ctx)
{
	const char *agg = aggregated_version(req);

	if (agg != NULL) {
		reply_aggregated(req, agg, false);
		return;
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:[], s:[]}", "kind", "APIVersions", "apiVersion", "v1",
	                        "versions", "serverAddressByClientCIDRs"));
}

/* GET /apis: the APIGroupList with rezuscloud.io, v1 preferred. */
static void handle_api_groups(rz_req_t *req, void *ctx)
{
	const char *agg = aggregated_version(req);

	if (agg != NULL) {
		reply_aggregated(req, agg, true);
		return;
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:[{s:s, s:[{s:s, s:s}], s:{s:s, s:s}}]}", "kind",
	                        "APIGroupList", "apiVersion", "v1", "groups", "name", RZ_API_GROUP,
	                        "versions", "groupVersion", RZ_API_VERSION, "version", "v1",
	                        "preferredVersion", "groupVersion", RZ_API_VERSION, "version",
	                        "v1"));
}

/* ------------------------------------------------------------------ routes */

/* Which methods each form of route answers, as which verb. */
static const struct {
	enum form form;
	unsigned method;
	unsigned verb;
	const char *audit_verb;
} verb_table[] = {
	{ FORM_COLLECTION, RZ_M_GET, RZ_VERB_LIST, "list" },
	{ FORM_COLLECTION, RZ_M_POST, RZ_VERB_CREATE, "create" },
	{ FORM_ITEM, RZ_M_GET, RZ_VERB_GET, "get" },
	{ FORM_ITEM, RZ_M_PUT, RZ_VERB_UPDATE, "update" },
	{ FORM_ITEM, RZ_M_PATCH, RZ_VERB_PATCH, "patch" },
	{ FORM_ITEM, RZ_M_DELETE, RZ_VERB_DELETE, "delete" },
	{ FORM_STATUS, RZ_M_GET, RZ_VERB_GET, "get" },
	{ FORM_STATUS, RZ_M_PUT, RZ_VERB_STATUS, "update-status" },
	{ FORM_STATUS, RZ_M_PATCH, RZ_VERB_STATUS, "patch-status" },
	{ FORM_ALL, RZ_M_GET, RZ_VERB_LIST, "list" },
};

#define VERBS (sizeof(verb_table) / sizeof(verb_table[0]))

static int add_route(rz_api_t *api, const rz_kind_t *k, enum form f, const char *pattern,
                     rz_http_fn fn)
{
	char *copy = strdup(pattern);

	if (copy == NULL) {
		return -ENOMEM;
	}
	api->patterns[api->npatterns++] = copy;
	if (k == NULL) {
		api->ctxs[api->n] = (struct rctx){ api, NULL, f };
		api->routes[api->n] = (rz_route_t){ .methods = RZ_M_GET,
			                            .pattern = copy,
			                            .fn = fn,
			                            .ctx = &api->ctxs[api->n],
			                            .role = RZ_ROLE_VIEW,
			                            .verb = "get" };
		api->n++;
		return 0;
	}
	for (size_t v = 0; v < VERBS; v++) {
		unsigned verb = verb_table[v].verb;
		if (verb_table[v].form != f || (k->verbs & verb) == 0) {
			continue;
		}
		if (verb == RZ_VERB_LIST && (k->verbs & (RZ_VERB_LIST | RZ_VERB_WATCH)) == 0) {
			continue;
		}
		api->ctxs[api->n] = (struct rctx){ api, k, f };
		api->routes[api->n] = (rz_route_t){ .methods = verb_table[v].method,
			                            .pattern = copy,
			                            .fn = fn,
			                            .ctx = &api->ctxs[api->n],
			                            .role = rz_kind_role(k, verb),
			                            .kind = k->kind,
			                            .verb = verb_table[v].audit_verb };
		api->n++;
	}
	return 0;
}

/* "/api/v1", "/api/v1/tenants/{tenant}" or "/api/v1/users/{user}". */
static const char *scope_prefix(const rz_kind_t *k)
{
	switch (k->scope) {
	case RZ_SCOPE_TENANT:
		return "/api/v1/tenants/{tenant}";
	case RZ_SCOPE_USER:
		return "/api/v1/users/{user}";
	default:
		return "/api/v1";
	}
}

static int build_routes(rz_api_t *api)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	char p[192];
	int rc = 0;

	api->routes = calloc(n * VERBS + 6, sizeof(*api->routes));
	api->ctxs = calloc(n * VERBS + 6, sizeof(*api->ctxs));
	api->patterns = calloc(n * 4 + 5, sizeof(*api->patterns));
	if (api->routes == NULL || api->ctxs == NULL || api->patterns == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const rz_kind_t *k = &kinds[i];
		static const struct {
			enum form f;
			const char *suffix;
		} forms[] = { { FORM_COLLECTION, "" },
			      { FORM_ITEM, "/{name}" },
			      { FORM_STATUS, "/{name}/status" } };
		if (k->outside_store) {
			continue; /* its own module routes it (Backup: core/api/backups.c) */
		}
		for (size_t j = 0; rc == 0 && j < 3; j++) {
			snprintf(p, sizeof(p), "%s/%s%s", scope_prefix(k), k->plural,
			         forms[j].suffix);
			rc = add_route(api, k, forms[j].f, p, handle);
		}
		if (rc == 0 && k->scope != RZ_SCOPE_GLOBAL) {
			snprintf(p, sizeof(p), "/api/v1/%s", k->plural);
			rc = add_route(api, k, FORM_ALL, p, handle);
		}
	}
	/* discovery is the kind table, no tenant's data: any signed-in user reads it (one with
	 * no role on the installation too: kubectl asks it before a tenant's objects) */
	if (rc == 0) {
		rc = add_route(api, NULL, FORM_COLLECTION, "/api/v1", handle_discovery);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = discovery_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE;
		rc = add_route(api, NULL, FORM_COLLECTION, "/api", handle_api_versions);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = api_versions_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE;
		rc = add_route(api, NULL, FORM_COLLECTION, "/apis", handle_api_groups);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = api_groups_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE;
		rc =
		    add_route(api, NULL, FORM_ITEM,
		              "/api/v1/tenants/{tenant}/effectivepatches/{role}", handle_effective);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = effective_doc;
		api->routes[api->n - 1].kind = "ConfigPatch";
		rc = add_route(api, NULL, FORM_COLLECTION, "/api/v1/summary", handle_summary);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = summary_doc;
		api->routes[api->n - 1].role = RZ_ROLE_NONE; /* role none: its tenants' counts */
	}
	return rc;
}

int rz_api_new(rz_api_t **out, rz_http_t *http, rz_store_t *store, rz_watch_hub_t *watches,
               rz_access_t *access, rz_workers_t *workers, rz_err_t *err)
{
	rz_api_t *api = calloc(1, sizeof(*api));
	int rc;

	*out = NULL;
	if (api == NULL) {
		return rz_err_set(err, -ENOMEM, "api: out of memory");
	}
	api->store = store;
	api->watches = watches;
	api->access = access;
	api->workers = workers;
	rc = build_routes(api);
	if (rc != 0) {
		rz_api_free(api);
		return rz_err_set(err, rc, "api: out of memory");
	}
	rc = rz_http_add_routes(http, api->routes, api->n, err);
	if (rc != 0) {
		rz_api_free(api);
		return rc;
	}
	*out = api;
	return 0;
}

int rz_api_add_aliases(rz_http_t *http, rz_err_t *err)
{
	int rc = rz_http_add_alias(http, "/api/v1/tenants/{tenant}",
	                           RZ_API_GROUP_PATH "/namespaces/{tenant}", err);

	return rc != 0 ? rc : rz_http_add_alias(http, "/api/v1", RZ_API_GROUP_PATH, err);
}

void rz_api_set_admit(rz_api_t *api, rz_api_admit_fn fn, void *arg)
{
	api->admit = fn;
	api->admit_arg = arg;
}

void rz_api_set_plugins(rz_api_t *api, struct rz_plugins *plugins)
{
	api->plugins = plugins;
}

void rz_api_free(rz_api_t *api)
{
	if (api == NULL) {
		return;
	}
	for (size_t i = 0; i < api->npatterns; i++) {
		free(api->patterns[i]);
	}
	free(api->patterns);
	free(api->routes);
	free(api->ctxs);
	free(api);
}

/* ------------------------------------------------------------------ continue tokens */

char *rz_api_continue_encode(const rz_kind_t *k, const json_t *last)
{
	return continue_token(k, last);
}

bool rz_api_continue_decode(const char *token, char *key, size_t size, const char **tenant,
                            const char **name)
{
	return parse_continue(token, key, size, tenant, name);
}
