/* core/api/scale.c - .../{name}/scale: an object's autoscaling/v1 Scale (a node group's),
 * for kubectl scale and the tools that scale what HPA scales.
 *
 * The Scale is a window on the object, never stored: its spec.replicas is the kind's scale
 * field (a NodeGroup's spec.count), its status what was counted and the label selector
 * that counts it. A PUT or a PATCH (merge or JSON patch, of the Scale) changes that one
 * field and writes the object as a spec update (write.c): the same validation, admission,
 * audit, resourceVersion precondition and role; the reply is the Scale after the write. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/api/api-int.h"
#include "core/model/fields.h"
#include "core/model/merge.h"

#define SCALE_API_VERSION "autoscaling/v1"
#define SCALE_KIND        "Scale"
#define SELECTOR_MAX      320 /* a label key (at most 317 bytes), '=' and a DNS label */

/* ------------------------------------------------------------------ the view */

static const rz__scale_t *scale_of_kind(const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const rz_kind_t *k = kind != NULL ? rz_kind_by_name(kind) : NULL;

	return k != NULL ? rz__kind_hooks_of(k)->scale : NULL;
}

/* obj's Scale (rz__scale_view's of). */
static json_t *scale_of(const json_t *obj)
{
	static const char *const copied[] = { "name", "namespace", "uid", "resourceVersion",
		                              "creationTimestamp" };
	const rz__scale_t *sc = scale_of_kind(obj);
	const json_t *meta = json_object_get(obj, "metadata");
	json_t *m = json_object(), *out;
	char selector[SELECTOR_MAX];

	if (sc == NULL || m == NULL) {
		json_decref(m);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		json_t *v = json_object_get(meta, copied[i]);
		if (v != NULL) {
			json_object_set(m, copied[i], v);
		}
	}
	snprintf(selector, sizeof(selector), "%s=%s", sc->label,
	         json_string_value(json_object_get(meta, "name")) ?: "");
	out = json_pack(
	    "{s:s, s:s, s:o, s:{s:I}, s:{s:I, s:s}}", "apiVersion", SCALE_API_VERSION, "kind",
	    SCALE_KIND, "metadata", m, "spec", "replicas",
	    (json_int_t)json_integer_value(json_object_get(json_object_get(obj, "spec"), sc->spec)),
	    "status", "replicas",
	    (json_int_t)json_integer_value(
	        json_object_get(json_object_get(obj, "status"), sc->status)),
	    "selector", selector);
	return out;
}

const rz__view_t rz__scale_view = { .api_version = SCALE_API_VERSION, .of = scale_of };

/* ------------------------------------------------------------------ its document */

static const rz_route_param_t read_query[] = {
	{ "pretty", "boolean", "indent the JSON" },
	{ NULL, NULL, NULL },
};

static const rz_route_param_t write_query[] = {
	{ "pretty", "boolean", "indent the JSON" },
	{ "dryRun", "string", "All: validate and answer as the write would, storing nothing" },
	{ "fieldManager", "string", "accepted for Kubernetes clients; not recorded" },
	{ NULL, NULL, NULL },
};

static const int get_errors[] = { 404, 0 };
static const int write_errors[] = { 404, 409, 415, 422, 507, 0 };

const rz_route_doc_t rz__scale_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readNodeGroupScale",
	  .summary = "read a node group's autoscaling/v1 Scale: spec.replicas its spec.count, "
	             "status.replicas its machines, status.selector the label selecting them",
	  .query = read_query,
	  .response = "Scale",
	  .errors = get_errors },
	{ .method = RZ_M_PUT,
	  .id = "replaceNodeGroupScale",
	  .summary = "set a node group's spec.count from a Scale's spec.replicas (required); "
	             "metadata.resourceVersion, when given, must be current",
	  .query = write_query,
	  .request = "Scale",
	  .response = "Scale",
	  .errors = write_errors },
	{ .method = RZ_M_PATCH,
	  .id = "patchNodeGroupScale",
	  .summary = "patch a node group's Scale (merge patch, or JSON patch as "
	             "application/json-patch+json): its spec.replicas is the spec.count written",
	  .query = write_query,
	  .request = "Patch",
	  .request_type = "application/merge-patch+json",
	  .response = "Scale",
	  .errors = write_errors },
	{ 0 },
};

/* ------------------------------------------------------------------ writes */

/* The schema row of the kind's scale field: its bounds. */
static const rz_field_t *spec_field(const rz_kind_t *k, const char *name)
{
	for (const rz_field_t *f = k->spec; f != NULL && f->name != NULL; f++) {
		if (strcmp(f->name, name) == 0) {
			return f;
		}
	}
	return NULL;
}

/* What a Scale (borrowed) asks for: its spec.replicas into *replicas and its
 * metadata.resourceVersion into *rv (0: none given). Each problem a cause naming the
 * Scale's field; apiVersion and kind, when given, must be the Scale's (400 and false). */
static bool read_scale(struct rctx *c, rz_req_t *req, const json_t *scale, json_int_t *replicas,
                       int64_t *rv, json_t *causes)
{
	const char *av = json_string_value(json_object_get(scale, "apiVersion"));
	const char *kind = json_string_value(json_object_get(scale, "kind"));
	const char *srv = json_string_value(
	    json_object_get(json_object_get(scale, "metadata"), "resourceVersion"));
	const json_t *n = json_object_get(json_object_get(scale, "spec"), "replicas");
	const rz_field_t *f = spec_field(c->k, c->hooks->scale->spec);

	if ((av != NULL && strcmp(av, SCALE_API_VERSION) != 0) ||
	    (kind != NULL && strcmp(kind, SCALE_KIND) != 0)) {
		rz_reply_error(req, 400, NULL,
		               "the body must be an autoscaling/v1 Scale, not %s %s",
		               av ? ECHO(av) : "(no apiVersion)", kind ? ECHO(kind) : "(no kind)");
		return false;
	}
	*rv = 0;
	if (srv != NULL && *srv != '\0' && (!rz__parse_rv(srv, rv) || *rv == 0)) {
		rz_fields_cause(causes, "metadata.resourceVersion", RZ_CAUSE_INVALID,
		                "must be a resourceVersion the server gave (decimal digits)");
	}
	if (n == NULL || json_is_null(n)) {
		rz_fields_cause(causes, "spec.replicas", RZ_CAUSE_REQUIRED,
		                "the number of %s wanted is required", c->k->plural);
	} else if (!json_is_integer(n)) {
		rz_fields_cause(causes, "spec.replicas", RZ_CAUSE_INVALID, "must be an integer");
	} else if (f != NULL && f->ranged &&
	           (json_integer_value(n) < f->min || json_integer_value(n) > f->max)) {
		rz_fields_cause(causes, "spec.replicas", RZ_CAUSE_INVALID,
		                "must be between %lld and %lld, inclusive", (long long)f->min,
		                (long long)f->max);
	} else {
		*replicas = json_integer_value(n);
	}
	return true;
}

/* The Scale the request asks for (caller owns), or NULL after replying: a PUT's body, or
 * the current Scale (borrowed) patched by the PATCH's. */
static json_t *wanted_scale(struct rctx *c, rz_req_t *req, const char *name, const json_t *now)
{
	json_t *body, *next = NULL;
	enum rz__patch_type type;

	if (rz_req_method_bit(req) == RZ_M_PUT) {
		return rz__read_body_untyped(req); /* client-go's scale client names no type */
	}
	if ((type = rz__patch_type(req)) == RZ_PATCH_NONE) {
		return NULL;
	}
	if (type == RZ_PATCH_APPLY) {
		rz_reply_error(req, 415, NULL,
		               "a Scale takes application/merge-patch+json or "
		               "application/json-patch+json; apply the node group itself");
		return NULL;
	}
	if ((body = rz__read_patch(req, type)) == NULL) {
		return NULL;
	}
	if (type == RZ_PATCH_MERGE) {
		next = rz_merge_patch(now, body);
		if (next == NULL) {
			rz_reply_error(req, 500, NULL, "out of memory");
		}
	} else if (!rz__apply_json_patch(c, req, name, now, body, &next)) {
		next = NULL; /* replied */
	}
	json_decref(body);
	if (next != NULL && !json_is_object(next)) {
		rz_reply_error(req, 400, NULL, "the patched document must be a JSON object");
		json_decref(next);
		next = NULL;
	}
	return next;
}

/* A PUT or PATCH of cur's (borrowed) Scale: the object with the Scale's replicas, written. */
static void scale_write(struct rctx *c, rz_req_t *req, const char *tenant, const char *name,
                        const json_t *cur)
{
	json_t *now = scale_of(cur), *scale = NULL, *causes = json_array(), *next;
	json_int_t replicas = 0;
	int64_t rv = 0;
	bool dry;

	if (now == NULL || causes == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
	} else if (rz__write_options(req, &dry) &&
	           (scale = wanted_scale(c, req, name, now)) != NULL &&
	           rz__match_url(req, c->k, scale, tenant, name) &&
	           read_scale(c, req, scale, &replicas, &rv, causes)) {
		if (json_array_size(causes) > 0) {
			rz__reply_invalid(req, c->k, name, causes);
		} else if ((next = json_deep_copy(cur)) == NULL) {
			rz_reply_error(req, 500, NULL, "out of memory");
		} else {
			json_object_set_new(json_object_get(next, "spec"), c->hooks->scale->spec,
			                    json_integer(replicas));
			rz__update_spec(c, req, tenant, name, next, cur,
			                rv ? rv : rz_object_rv(cur), dry);
		}
	}
	json_decref(scale);
	json_decref(causes);
	json_decref(now);
}

void rz__handle_scale(rz_req_t *req, void *ctx)
{
	struct rctx *c = ctx;
	const char *field = rz_kind_owner_field(c->k);
	const char *tenant = field ? rz_req_param(req, field) : NULL;
	const char *name = rz_req_param(req, "name");
	unsigned m = rz_req_method_bit(req);
	json_t *cur = rz__current(c, req, tenant, name), *scale;

	if (cur == NULL) {
		return; /* replied */
	}
	if (m == RZ_M_GET || m == RZ_M_HEAD) {
		scale = scale_of(cur);
		if (scale == NULL) {
			rz_reply_error(req, 500, NULL, "out of memory");
		} else {
			rz_reply_json(req, 200, scale);
		}
	} else {
		scale_write(c, req, tenant, name, cur);
	}
	json_decref(cur);
}
