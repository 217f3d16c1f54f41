/* core/api/api.c - the resource REST API, generated from the kind table. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "core/auth/access.h"
#include "core/api/api.h"
#include "core/api/lists.h"
#include "core/auth/auth.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/model/merge.h"
#include "core/plugin/plugins.h"
#include "core/base/version.h"
#include "core/base/yaml.h"

#define LIST_LIMIT_MAX 10000
#define CONTINUE_MAX   256 /* a token's text: base64 of an owner and a name, 127 bytes */
#define NAME_SUFFIX    5   /* after generateName, as Kubernetes has it */
#define PREFIX_BYTES   4   /* after a kind's own prefix: 8 hex digits, as the engine names runs */

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

/* A write's reply, held until its commit is durable (store.durability: full). */
struct held {
	rz_req_t *req;
	int code;
	json_t *out;
};

static void held_reply(void *arg, int status)
{
	struct held *h = arg;

	if (status == 0) {
		rz_reply_json(h->req, h->code, h->out);
	} else {
		json_decref(h->out);
		rz_reply_error(
		    h->req, 503, NULL,
		    "the change was committed but syncing it to the disk failed (%s): it "
		    "may be lost; read it back before retrying",
		    strerror(-status));
	}
	free(h);
}

/* Reply code and out (taken) once the write is durable; at once with durability normal. */
static void reply_durable(rz_api_t *api, rz_req_t *req, int code, json_t *out)
{
	struct held *h = malloc(sizeof(*h));

	if (h == NULL) {
		json_decref(out);
		rz_reply_error(req, 503, NULL, "out of memory; the change may have been stored");
		return;
	}
	*h = (struct held){ req, code, out };
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

/* metadata.name and the owner field (metadata.tenant, metadata.user) against the URL.
 * Replies 400 and returns false on a mismatch; fills in the URL's values when absent. */
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

static const char *const field_selectable[] = { "metadata.name", "metadata.tenant", "metadata.user",
	                                        NULL };

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

static bool truthy(const char *v)
{
	return v != NULL && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

/* A resourceVersion as Kubernetes spells one: decimal digits only (no sign, no blanks),
 * within int64. */
static bool parse_rv(const char *s, int64_t *out)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && s[n] == '\0' && rz_parse_int(s, 0, INT64_MAX, out);
}

/* Values are echoed in messages cut to this many bytes (a query may be 64 KiB). */
#define ECHO_MAX 64

static void handle_watch(struct rctx *c, rz_req_t *req, const char *tenant, rz_selector_t *labels,
                         rz_selector_t *fields)
{
	const char *rv = rz_req_query(req, "resourceVersion");
	const char *match = rz_req_query(req, "resourceVersionMatch");
	rz_watch_opts_t o = { .kind = c->k,
		              .tenant = tenant,
		              .labels = labels,
		              .fields = fields,
		              .since = -1,
		              .bookmarks = truthy(rz_req_query(req, "allowWatchBookmarks")) };

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
		              .tenant = c->k->scope != RZ_SCOPE_GLOBAL ? tenant : NULL,
		              .pretty = truthy(rz_req_query(req, "pretty")) };
	rz_selector_t *labels, *fields;
	const char *limit = rz_req_query(req, "limit");
	const char *cont = rz_req_query(req, "continue");
	char key[512];
	int64_t n = 0;
	rz_err_t err = { 0 };

	if (!parse_selectors(req, c->k, &labels, &fields)) {
		return;
	}
	if (truthy(rz_req_query(req, "watch"))) {
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
		if (rz_lists_send(req, c->api->store, &o, &err) != 0) {
			reply_store_error(req, c->k, NULL, err.code, &err);
		}
	}
	rz_selector_free(labels);
	rz_selector_free(fields);
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

/* Store the write with its audit row (and credentials) in one transaction; reply. */
static void commit(struct wr *w)
{
	rz_write_hook_t cred = { credentials_hook, w, NULL }, tok = { token_hook, w, NULL };
	const rz_write_hook_t *chain = NULL;
	rz_access_hook_t audit;
	const char *name =
	    json_string_value(json_object_get(json_object_get(w->obj, "metadata"), "name"));
	json_t *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;
	int rc;

	if (w->hashed) {
		chain = &cred;
	} else if (w->token[0] != '\0') {
		chain = &tok;
	}
	chain = rz_access_hook(w->c->api->access, w->req, w->code, NULL, chain, &audit);
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
			json_object_set_new(out, "secret", json_string(w->token));
		}
		reply_durable(w->c->api, w->req, w->code, out);
	}
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
	if (w->secret == NULL) {
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

/* A token's role defaults to, and may not exceed, its owner's. */
static void token_role(struct rctx *c, json_t *obj, const char *owner, json_t *causes)
{
	json_t *spec = json_object_get(obj, "spec");
	json_t *u = NULL;
	rz_err_t err = { 0 };
	int want = rz_role_parse(json_string_value(json_object_get(spec, "role")));
	int have;

	if (rz_store_get(c->api->store, rz_kind_by_name("User"), NULL, owner, &u, &err) != 0) {
		return; /* the store reports the missing user */
	}
	have =
	    rz_role_parse(json_string_value(json_object_get(json_object_get(u, "spec"), "role")));
	json_decref(u);
	if (want == 0) {
		json_object_set_new(spec, "role", json_string(rz_role_name(have)));
	} else if (want > have) {
		rz_fields_cause(causes, "spec.role", RZ_CAUSE_FORBIDDEN,
		                "must not exceed the owner's role (%s)", rz_role_name(have));
	}
}

/* ------------------------------------------------------------------ writes */

static void handle_create(struct rctx *c, rz_req_t *req, const char *tenant)
{
	json_t *obj = read_body(req, false);
	json_t *causes = json_array();
	const char *name;
	struct wr *w;

	if (obj == NULL || !match_url(req, c->k, obj, tenant, NULL)) {
		goto out;
	}
	json_object_del(obj, "status"); /* create ignores status */
	drop_top(c->k, obj);
	if (validate_spec_write(c->k, c->api, obj, NULL, causes) == 0) {
		assign_name(c->k, obj, causes);
	}
	if (json_array_size(causes) == 0 && strcmp(c->k->kind, "APIToken") == 0) {
		token_role(c, obj, tenant, causes);
	}
	name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	if (json_array_size(causes) > 0) {
		reply_invalid(req, c->k, name, causes);
		goto out;
	}
	w = wr_new(c, req, true, tenant, NULL, obj);
	obj = NULL;
	if (w != NULL) {
		if (strcmp(c->k->kind, "APIToken") == 0) {
			rz_auth_token_secret(w->token);
		}
		submit(w);
	}
out:
	json_decref(causes);
	json_decref(obj);
}

/* Load the current object; replies 404 (or 500) and returns NULL when it cannot. */
static json_t *current(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	json_t *cur = NULL;
	rz_err_t err = { 0 };
	int rc = rz_store_get(c->api->store, c->k, tenant, name, &cur, &err);

	if (rc != 0) {
		reply_store_error(req, c->k, name, rc, &err);
		return NULL;
	}
	return cur;
}

/* Validate an update (replace or patch) of obj over cur and send it on its way. */
static void update(struct rctx *c, rz_req_t *req, const char *tenant, const char *name, json_t *obj,
                   const json_t *cur, int64_t rv, json_t *causes)
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
	json_t *obj = read_body(req, false);
	json_t *causes = json_array();
	json_t *cur = NULL;
	int64_t rv;

	if (obj == NULL || !match_url(req, c->k, obj, tenant, name)) {
		goto out;
	}
	rv = body_rv(obj, causes);
	if (rv == 0 && json_array_size(causes) == 0) {
		rz_fields_cause(causes, "metadata.resourceVersion", RZ_CAUSE_REQUIRED,
		                "must be specified for an update");
	}
	cur = current(c, req, tenant, name);
	if (cur != NULL) {
		update(c, req, tenant, name, obj, cur, rv, causes);
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
	json_t *patch = read_body(req, true);
	json_t *causes = json_array();
	json_t *cur = NULL, *next = NULL;
	int64_t rv;

	if (patch == NULL) {
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
		update(c, req, tenant, name, next, cur, rv, causes);
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
static void handle_delete(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	size_t len;
	int64_t rv = 0;
	json_t *out = NULL, *cur;
	rz_access_hook_t audit;
	bool gone = false;
	rz_err_t err = { 0 };
	int rc;

	rz_req_body(req, &len);
	if (len > 0) {
		json_t *opts = read_body(req, false);
		const char *pre;
		if (opts == NULL) {
			return;
		}
		pre = json_string_value(
		    json_object_get(json_object_get(opts, "preconditions"), "resourceVersion"));
		if (pre != NULL && !rz_parse_int(pre, 1, INT64_MAX, &rv)) {
			json_decref(opts);
			rz_reply_error(req, 400, NULL, "invalid preconditions.resourceVersion '%s'",
			               pre);
			return;
		}
		json_decref(opts);
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
	json_decref(cur);
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
	reply_durable(c->api, req, gone ? 200 : 202, out);
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
		if (cur != NULL) {
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

/* GET /api/v1: the kinds, like Kubernetes' APIResourceList (rezusctl api-resources). */
static void handle_discovery(rz_req_t *req, void *ctx)
{
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	json_t *list = json_array();

	for (size_t i = 0; i < n; i++) {
		const rz_kind_t *k = &kinds[i];
		json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s, s:o, s:o}", "name",
		                                      k->plural, "singularName", k->singular,
		                                      "namespaced", k->scope == RZ_SCOPE_TENANT,
		                                      "kind", k->kind, "verbs", verb_list(k->verbs),
		                                      "shortNames", short_names(k)));
		if (k->verbs & RZ_VERB_STATUS) {
			char sub[96];
			snprintf(sub, sizeof(sub), "%s/status", k->plural);
			json_array_append_new(
			    list,
			    json_pack("{s:s, s:s, s:b, s:s, s:[s,s,s]}", "name", sub,
			              "singularName", "", "namespaced", k->scope == RZ_SCOPE_TENANT,
			              "kind", k->kind, "verbs", "get", "patch", "update"));
		}
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:o}", "kind", "APIResourceList", "groupVersion",
	                        RZ_API_VERSION, "resources", list));
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

	api->routes = calloc(n * VERBS + 2, sizeof(*api->routes));
	api->ctxs = calloc(n * VERBS + 2, sizeof(*api->ctxs));
	api->patterns = calloc(n * 4 + 2, sizeof(*api->patterns));
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
	if (rc == 0) {
		rc = add_route(api, NULL, FORM_COLLECTION, "/api/v1", handle_discovery);
	}
	if (rc == 0) {
		api->routes[api->n - 1].doc = discovery_doc;
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
