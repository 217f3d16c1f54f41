/* core/api/read.c - reads of a kind: the current object, lists and their pages, watches. */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/api/api-int.h"
#include "core/auth/access.h"
#include "core/api/lists.h"

#define CONTINUE_MAX 256 /* a token's text: base64 of an owner and a name, 127 bytes */

/* ------------------------------------------------------------------ lists */

char *rz__continue_token(const rz_kind_t *k, const json_t *last)
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
	               "invalid value for the query parameter %s: '%s': use true or false", name,
	               ECHO(v));
	return false;
}

/* A resourceVersion as Kubernetes spells one: decimal digits only (no sign, no blanks),
 * within int64. */
bool rz__parse_rv(const char *s, int64_t *out)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && s[n] == '\0' && rz_parse_int(s, 0, INT64_MAX, out);
}

/* timeoutSeconds of a watch: decimal digits, 0 to RZ_WATCH_TIMEOUT_MAX; absent or empty is
 * 0 (no limit of the watch's own). Replies 400 naming it and returns false otherwise. */
static bool query_timeout(rz_req_t *req, int *out)
{
	const char *v = rz_req_query(req, "timeoutSeconds");
	int64_t n = 0;

	*out = 0;
	if (v == NULL || *v == '\0') {
		return true;
	}
	if (strspn(v, "0123456789") != strlen(v) || !rz_parse_int(v, 0, RZ_WATCH_TIMEOUT_MAX, &n)) {
		rz_reply_error(req, 400, NULL,
		               "invalid value for the query parameter timeoutSeconds: '%s': use 0 "
		               "to %d",
		               ECHO(v), RZ_WATCH_TIMEOUT_MAX);
		return false;
	}
	*out = (int)n;
	return true;
}

static void handle_watch(struct rctx *c, rz_req_t *req, const char *tenant, rz_selector_t *labels,
                         rz_selector_t *fields)
{
	const char *rv = rz_req_query(req, "resourceVersion");
	const char *match = rz_req_query(req, "resourceVersionMatch");
	rz_watch_opts_t o = {
		.kind = c->k, .tenant = tenant, .labels = labels, .fields = fields, .since = -1
	};

	if (rz_access_principal(req) != NULL) {
		/* the principal checked again at each event: a revoked token, a deleted user or a
		 * demotion ends the stream; the tenants it may see (when filtered, or once its
		 * role no longer shows them all) asked at each event */
		o.keep = rz_access_keep;
		o.keep_arg = req;
		o.valid = rz_access_recheck;
		o.valid_arg = req;
	}

	enum include inc = INCLUDE_METADATA;

	if (!query_bool(req, "allowWatchBookmarks", &o.bookmarks) ||
	    !query_timeout(req, &o.timeout_s) ||
	    (rz__wants_table(req) && !rz__include_object(req, &inc))) {
		rz_selector_free(labels);
		rz_selector_free(fields);
		return;
	}
	if (rz__wants_table(req)) {
		o.render = rz__table_render;
		o.render_flags = (unsigned)(rz__hide_tenant(req, tenant) ? 1 : 0) | (unsigned)inc
		                                                                        << 1;
	} else if (c->view != NULL) { /* the route's shape (core v1 Events) */
		o.render = c->view->render;
		o.api_version = c->view->api_version;
	}

	if (rv == NULL || *rv == '\0') {
		rv = rz_req_header(req, "Last-Event-ID");
	}
	if ((rv != NULL && *rv != '\0' && !rz__parse_rv(rv, &o.since)) ||
	    (match != NULL && *match != '\0' && strcmp(match, "NotOlderThan") != 0)) {
		rz_selector_free(labels);
		rz_selector_free(fields);
		if (match != NULL && *match != '\0' && strcmp(match, "NotOlderThan") != 0) {
			rz_reply_error(req, 400, NULL,
			               "resourceVersionMatch '%s' is not supported for watch: "
			               "supported values: \"NotOlderThan\"",
			               ECHO(match));
		} else {
			rz_reply_error(req, 400, NULL, "invalid resourceVersion '%s'", ECHO(rv));
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

	if (have && !rz__parse_rv(rv, &n)) {
		rz_reply_error(req, 400, NULL, "invalid resourceVersion '%s'", ECHO(rv));
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
			rz_reply_error(req, 400, NULL,
			               "resourceVersionMatch: Unsupported value: \"%s\": supported "
			               "values: \"Exact\", \"NotOlderThan\"",
			               ECHO(match));
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

void rz__handle_list(struct rctx *c, rz_req_t *req, const char *tenant)
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
	if (watch || c->form == FORM_WATCH) {
		handle_watch(c, req, tenant, labels, fields);
		return;
	}
	if (!list_rv_ok(req, rz_store_revision(c->api->store), cont)) {
		/* replied */
	} else if (limit != NULL && (strspn(limit, "0123456789") != strlen(limit) ||
	                             !rz_parse_int(limit, 0, LIST_LIMIT_MAX, &n))) {
		rz_reply_error(req, 400, NULL, "invalid limit '%s': use 1 to %d", ECHO(limit),
		               LIST_LIMIT_MAX);
	} else if (cont != NULL && *cont != '\0' &&
	           !parse_continue(cont, key, sizeof(key), &o.after_tenant, &o.after_name)) {
		rz_reply_error(req, 400, NULL, "invalid continue token");
	} else {
		o.labels = labels;
		o.fields = fields;
		labels = fields = NULL;
		o.limit = (size_t)n;
		if (c->view != NULL) {
			o.view = c->view->of;
			o.api_version = c->view->api_version;
		}
		if (rz__wants_table(req)) {
			rz__table_list(c, req, &o);
			rz_selector_free(o.labels);
			rz_selector_free(o.fields);
		} else if (rz_lists_send(req, c->api->store, &o, &err) != 0) {
			rz__reply_store_error(req, c->k, NULL, err.code, &err);
		}
	}
	rz_selector_free(labels);
	rz_selector_free(fields);
}

/* Load the current object, shared with the store's cache (rz_store_get_shared: never modified
 * here); replies 404 (or 500) and returns NULL when it cannot. */
json_t *rz__current(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	json_t *cur = NULL;
	rz_err_t err = { 0 };
	int rc = rz_store_get_shared(c->api->store, c->k, tenant, name, &cur, &err);

	if (rc != 0) {
		rz__reply_store_error(req, c->k, name, rc, &err);
		return NULL;
	}
	return cur;
}

bool rz__reply_stored(struct rctx *c, rz_req_t *req, const char *tenant, const char *name)
{
	char *text = NULL;
	size_t len = 0;
	rz_err_t err = { 0 };
	int rc = rz_store_get_text(c->api->store, c->k, tenant, name, &text, &len, &err);

	if (rc != 0) {
		rz__reply_store_error(req, c->k, name, rc, &err);
		return false;
	}
	text[len++] = '\n'; /* rz_store_get_text leaves room for it */
	text[len] = '\0';
	rz_reply(req, 200, "application/json", text, len);
	free(text);
	return true;
}

/* ------------------------------------------------------------------ continue tokens */

char *rz_api_continue_encode(const rz_kind_t *k, const json_t *last)
{
	return rz__continue_token(k, last);
}

bool rz_api_continue_decode(const char *token, char *key, size_t size, const char **tenant,
                            const char **name)
{
	return parse_continue(token, key, size, tenant, name);
}
