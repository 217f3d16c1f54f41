/* core/api/validate.c - a write's body: read (JSON or YAML), matched with the URL, checked. */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "core/api/api-int.h"
#include "core/model/fields.h"
#include "core/base/yaml.h"

#define NAME_SUFFIX  5 /* after generateName, as Kubernetes has it */
#define PREFIX_BYTES 4 /* after a kind's own prefix: 8 hex digits, as the engine names runs */

static bool media_is(const char *ctype, const char *want)
{
	size_t n = strlen(want);

	return ctype != NULL && strncasecmp(ctype, want, n) == 0 &&
	       (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ');
}

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

/* ------------------------------------------------------------------ fieldValidation */

#define WARNINGS_MAX 16 /* Warning headers a reply carries at most; one more sums the rest */

/* What becomes of what the schema does not declare (fieldValidation, as Kubernetes has
 * it): refused (Strict, the default here), dropped with a Warning header each (Warn), or
 * dropped (Ignore). */
enum fieldval { FV_STRICT, FV_WARN, FV_IGNORE, FV_BAD };

static enum fieldval field_validation(const rz_req_t *req)
{
	const char *v = rz_req_query(req, "fieldValidation");

	if (v == NULL || *v == '\0' || strcmp(v, "Strict") == 0) {
		return FV_STRICT;
	}
	return strcmp(v, "Warn") == 0 ? FV_WARN : strcmp(v, "Ignore") == 0 ? FV_IGNORE : FV_BAD;
}

bool rz__field_validation_ok(rz_req_t *req)
{
	if (field_validation(req) != FV_BAD) {
		return true;
	}
	rz_reply_error(req, 400, NULL,
	               "fieldValidation: Unsupported value: \"%s\": supported values: "
	               "\"Ignore\", \"Strict\", \"Warn\"",
	               ECHO(rz_req_query(req, "fieldValidation")));
	return false;
}

void rz__warn(rz_req_t *req, const char *text)
{
	char buf[640];
	size_t n = 0;

	n += (size_t)snprintf(buf, sizeof(buf), "299 - \"");
	for (const char *p = text; *p != '\0' && n + 4 < sizeof(buf); p++) {
		if (*p == '"' || *p == '\\') {
			buf[n++] = '\\';
		}
		buf[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	(void)rz_req_add_header(req, "Warning", buf);
}

void rz__drop_unknown(rz_req_t *req, const rz_kind_t *k, json_t *obj, bool status)
{
	enum fieldval fv = field_validation(req);
	json_t *dropped, *path;
	size_t i;

	if (fv != FV_WARN && fv != FV_IGNORE) {
		return;
	}
	dropped = fv == FV_WARN ? json_array() : NULL;
	rz_kind_drop_unknown(k, obj, status, dropped);
	json_array_foreach(dropped, i, path)
	{
		char text[600];
		if (i == WARNINGS_MAX) {
			snprintf(text, sizeof(text), "%zu more unknown fields",
			         json_array_size(dropped) - i);
			rz__warn(req, text);
			break;
		}
		snprintf(text, sizeof(text), "unknown field \"%s\"", json_string_value(path));
		rz__warn(req, text);
	}
	json_decref(dropped);
}

/* ------------------------------------------------------------------ bodies */

/* The body parsed as JSON (an object or an array), or NULL after replying 400. A member
 * given twice is refused, unless fieldValidation says to warn (the last one counts, as
 * Kubernetes has it) or to ignore. */
static json_t *read_json(rz_req_t *req, const char *body, size_t len)
{
	json_error_t jerr;
	json_t *v = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	enum fieldval fv;

	if (v == NULL && json_error_code(&jerr) == json_error_duplicate_key &&
	    ((fv = field_validation(req)) == FV_WARN || fv == FV_IGNORE)) {
		char text[96];
		snprintf(text, sizeof(text), "duplicate field at line %d, column %d", jerr.line,
		         jerr.column);
		if (fv == FV_WARN) {
			rz__warn(req, text);
		}
		v = json_loadb(body, len, 0, &jerr);
	}
	if (v == NULL) {
		char *near = strstr(jerr.text, " near '");
		if (near != NULL) {
			*near = '\0'; /* it quotes the body, which may hold a password */
		}
		rz_reply_error(req, 400, NULL, "malformed JSON at line %d, column %d (byte %d): %s",
		               jerr.line, jerr.column, jerr.position, jerr.text);
	}
	return v;
}

/* The body's bytes into *body and *len, or false after replying 413. */
static bool body_bounded(rz_req_t *req, const char **body, size_t *len)
{
	*body = rz_req_body(req, len);
	if (*len > RZ_REQUEST_MAX) { /* before parsing: no object this large can be stored */
		rz_reply_error(req, 413, "RequestEntityTooLarge",
		               "the request body is too large: %zu bytes (at most %u)", *len,
		               RZ_REQUEST_MAX);
		return false;
	}
	return true;
}

/* Reply 415 for ctype (may be NULL): requests of this method take takes. */
static void unsupported(rz_req_t *req, const char *ctype, const char *takes)
{
	rz_reply_error(req, 415, NULL, "unsupported media type %s%s%s: %s requests take %s",
	               ctype ? "'" : "", ctype ? ctype : "(none)", ctype ? "'" : "",
	               rz_req_method(req), takes);
}

/* v (takes ownership) when it is what is wanted, else NULL after replying 400. */
static json_t *must_be(rz_req_t *req, json_t *v, bool array)
{
	if (v != NULL && (array ? !json_is_array(v) : !json_is_object(v))) {
		json_decref(v);
		rz_reply_error(req, 400, NULL, "%s",
		               array ? "a JSON patch must be an array of operations"
		                     : "the request body must be a JSON object");
		return NULL;
	}
	return v;
}

json_t *rz__read_body(rz_req_t *req)
{
	const char *ctype = rz_req_header(req, "Content-Type");
	const char *body;
	size_t len;

	if (!body_bounded(req, &body, &len)) {
		return NULL;
	}
	if (media_is(ctype, "application/yaml")) {
		return read_yaml(req, body, len);
	}
	if (!media_is(ctype, "application/json")) {
		unsupported(req, ctype, "application/json or application/yaml");
		return NULL;
	}
	return must_be(req, read_json(req, body, len), false);
}

json_t *rz__read_body_untyped(rz_req_t *req)
{
	const char *body;
	size_t len;

	if (rz_req_header(req, "Content-Type") != NULL) {
		return rz__read_body(req);
	}
	if (!body_bounded(req, &body, &len)) {
		return NULL;
	}
	return must_be(req, read_json(req, body, len), false);
}

enum rz__patch_type rz__patch_type(rz_req_t *req)
{
	static const struct {
		const char *media;
		enum rz__patch_type type;
	} types[] = {
		{ "application/merge-patch+json", RZ_PATCH_MERGE },
		{ "application/json-patch+json", RZ_PATCH_JSON },
		{ "application/apply-patch+yaml", RZ_PATCH_APPLY },
	};
	const char *ctype = rz_req_header(req, "Content-Type");

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (media_is(ctype, types[i].media)) {
			return types[i].type;
		}
	}
	unsupported(req, ctype,
	            "application/merge-patch+json, application/json-patch+json or "
	            "application/apply-patch+yaml");
	return RZ_PATCH_NONE;
}

/* An apply's configuration: YAML, which JSON is too; read as JSON when it looks like JSON
 * (what kubectl and the client libraries send), so its errors are JSON's. */
static json_t *read_apply(rz_req_t *req, const char *body, size_t len)
{
	size_t lead = strspn(body, " \t\r\n");

	if (lead < len && body[lead] == '{') {
		return must_be(req, read_json(req, body, len), false);
	}
	return read_yaml(req, body, len);
}

json_t *rz__read_patch(rz_req_t *req, enum rz__patch_type type)
{
	const char *body;
	size_t len;

	if (!body_bounded(req, &body, &len)) {
		return NULL;
	}
	if (type == RZ_PATCH_APPLY) {
		return read_apply(req, body, len);
	}
	return must_be(req, read_json(req, body, len), type == RZ_PATCH_JSON);
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
void rz__drop_top(const rz_kind_t *k, json_t *obj)
{
	for (const rz_field_t *f = k->top; f != NULL && f->name != NULL; f++) {
		json_object_del(obj, f->name);
	}
}

/* Validate and normalise a spec write (create, replace, patch). old is the stored object
 * on updates. Returns the number of causes appended. */
size_t rz__validate_spec_write(const struct rctx *c, rz_req_t *req, json_t *obj, const json_t *old,
                               json_t *causes)
{
	const rz_api_t *api = c->api;

	rz__drop_unknown(req, c->k, obj, false);
	rz_kind_validate_spec_write(c->k, obj, old, causes);
	if (json_array_size(causes) == 0 && api->plugins != NULL &&
	    c->hooks->plugins_check != NULL) {
		c->hooks->plugins_check(api->plugins, obj, old, causes);
	}
	if (json_array_size(causes) == 0 && api->admit != NULL) {
		api->admit(api->admit_arg, c->k, obj, old, causes);
	}
	canonical(c->k, obj);
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
		if (strcmp(ns, "default") == 0) { /* kubectl's, on an object that names none */
			rz_reply_error(
			    req, 400, NULL,
			    "metadata.namespace (default) does not match metadata.tenant "
			    "(%s): kubectl gives an object without a namespace its default "
			    "one; name the tenant as metadata.namespace, or give -n %s",
			    ECHO(t), ECHO(t));
			return false;
		}
		rz_reply_error(req, 400, NULL,
		               "metadata.namespace (%s) does not match metadata.tenant (%s): "
		               "the namespace is the tenant",
		               ECHO(ns), ECHO(t));
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
bool rz__match_url(rz_req_t *req, const rz_kind_t *k, json_t *obj, const char *owner,
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
bool rz__assign_name(const rz_kind_t *k, json_t *obj, json_t *causes)
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
