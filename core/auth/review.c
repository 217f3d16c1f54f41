/* core/auth/review.c - SelfSubject{Access,Rules}Review and SelfSubjectReview
 * (core/auth/review.h). */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/auth/access.h"
#include "core/auth/review.h"
#include "core/base/text.h"
#include "core/model/kinds.h"

#define AUTHZ "authorization.k8s.io/v1"
#define AUTHN "authentication.k8s.io/v1"

struct rz_review {
	rz_auth_t *auth;
};

static const struct {
	const char *name;
	unsigned bit;
} verbs[] = {
	{ "get", RZ_VERB_GET },       { "list", RZ_VERB_LIST },     { "watch", RZ_VERB_WATCH },
	{ "create", RZ_VERB_CREATE }, { "update", RZ_VERB_UPDATE }, { "patch", RZ_VERB_PATCH },
	{ "delete", RZ_VERB_DELETE },
};

#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

/* The bit of verb on subresource ("status": writes are status writes), or 0. */
static unsigned verb_bit(const char *verb, const char *subresource)
{
	bool status = subresource != NULL && strcmp(subresource, "status") == 0;

	for (size_t i = 0; verb != NULL && i < NVERBS; i++) {
		if (strcmp(verb, verbs[i].name) == 0) {
			if (status &&
			    (verbs[i].bit == RZ_VERB_UPDATE || verbs[i].bit == RZ_VERB_PATCH)) {
				return RZ_VERB_STATUS;
			}
			return status && verbs[i].bit != RZ_VERB_GET ? 0 : verbs[i].bit;
		}
	}
	return 0;
}

bool rz_review_may(rz_auth_t *auth, const rz_principal_t *p, const char *verb, const char *resource,
                   const char *subresource, const char *tenant, const char *name, char *why,
                   size_t why_size)
{
	const rz_kind_t *k = NULL;
	unsigned bit = verb_bit(verb, subresource);
	char plural[64];
	int need, have;
	bool tenanted;

	/* "nodegroups", or "nodegroups.rezuscloud.io" as kubectl names it without discovery */
	if (resource != NULL && strlen(resource) < sizeof(plural)) {
		const char *dot = strchr(resource, '.');
		snprintf(plural, sizeof(plural), "%.*s",
		         dot != NULL && strcmp(dot + 1, RZ_API_GROUP) == 0 ? (int)(dot - resource)
		                                                           : (int)strlen(resource),
		         resource);
		k = rz_kind_by_plural(plural);
	}
	if (k == NULL) {
		snprintf(why, why_size, "this server has no resource '%s'", RZ_ECHO(resource, 64));
		return false;
	}
	if (bit == 0 || (k->verbs & bit) == 0) {
		snprintf(why, why_size, "%s does not take '%s%s%s'", resource, RZ_ECHO(verb, 32),
		         subresource && *subresource ? " " : "", RZ_ECHO(subresource, 32));
		return false;
	}
	need = rz_kind_role(k, bit);
	if (k->outside_store) { /* Backups: on the installation only */
		snprintf(why, why_size, "%s %s needs the %s role on the installation", verb,
		         resource, rz_role_name(need));
		return p->role >= need;
	}
	tenanted = rz_kind_tenanted(k);
	if (tenanted && strcmp(k->kind, "Tenant") == 0 && name != NULL && *name != '\0') {
		tenant = name; /* a Tenant is its own tenant */
	}
	if (tenanted && tenant != NULL && *tenant != '\0') {
		have = rz_auth_tenant_role(auth, p, tenant);
		snprintf(why, why_size, "%s %s in tenant %s needs the %s role there; you have %s",
		         verb, resource, tenant, rz_role_name(need), rz_role_name(have));
		return have >= need;
	}
	if (p->role >= need) {
		snprintf(why, why_size, "%s %s needs the %s role; you have %s on the installation",
		         verb, resource, rz_role_name(need), rz_role_name(p->role));
		return true;
	}
	if (tenanted && need == RZ_ROLE_VIEW && p->role == RZ_ROLE_NONE &&
	    (bit == RZ_VERB_LIST || bit == RZ_VERB_WATCH)) {
		snprintf(why, why_size,
		         "%s %s across tenants shows only the tenants your AccessBindings grant",
		         verb, resource);
		return true;
	}
	snprintf(why, why_size, "%s %s needs the %s role%s; you have %s", verb, resource,
	         rz_role_name(need), tenanted ? " on the installation" : "", rz_role_name(p->role));
	return false;
}

/* ------------------------------------------------------------------ protobuf requests */

/* kubectl sends these reviews as Kubernetes protobuf (Content-Type
 * application/vnd.kubernetes.protobuf: "k8s\0" and a runtime.Unknown whose raw bytes are the
 * object) and takes a JSON answer. The three requests carry a few strings; this reads the
 * wire format (varints and length-delimited fields, bounded by the body) for those alone. */
struct pb {
	const unsigned char *p;
	size_t len;
};

static bool pb_varint(struct pb *m, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && m->len > 0; shift += 7) {
		unsigned char c = *m->p++;
		m->len--;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (c < 0x80) {
			return true;
		}
	}
	return false;
}

/* The next field of m: its number, and for a length-delimited one its bytes in *val (other
 * wire types are skipped). false at the end or on malformed input (*bad set). */
static bool pb_next(struct pb *m, unsigned *field, struct pb *val, bool *bad)
{
	uint64_t key, n;

	while (m->len > 0) {
		if (!pb_varint(m, &key)) {
			break;
		}
		*field = (unsigned)(key >> 3);
		switch (key & 7) {
		case 0:
			if (!pb_varint(m, &n)) {
				*bad = true;
				return false;
			}
			continue;
		case 1:
		case 5:
			n = (key & 7) == 1 ? 8 : 4;
			if (m->len < n) {
				*bad = true;
				return false;
			}
			m->p += n;
			m->len -= n;
			continue;
		case 2:
			if (!pb_varint(m, &n) || n > m->len) {
				*bad = true;
				return false;
			}
			*val = (struct pb){ m->p, (size_t)n };
			m->p += n;
			m->len -= (size_t)n;
			return true;
		default:
			*bad = true;
			return false;
		}
	}
	*bad = m->len != 0;
	return false;
}

/* The length-delimited field number f of m (the last one), or {NULL, 0}. */
static struct pb pb_field(struct pb m, unsigned f, bool *bad)
{
	struct pb v, out = { NULL, 0 };
	unsigned field;

	while (pb_next(&m, &field, &v, bad)) {
		if (field == f) {
			out = v;
		}
	}
	return out;
}

/* Message m's string fields 1.. as members named by names (NULL-terminated) of a new
 * object; empty strings left out. */
static json_t *pb_strings(struct pb m, const char *const *names, bool *bad)
{
	json_t *o = json_object();
	struct pb v;
	unsigned field, n = 0;

	while (names[n] != NULL) {
		n++;
	}
	while (pb_next(&m, &field, &v, bad)) {
		if (field >= 1 && field <= n && v.len > 0 && v.len < 1024) {
			json_object_set_new(o, names[field - 1],
			                    json_stringn((const char *)v.p, v.len) ?: json_null());
		}
	}
	return o;
}

json_t *rz_review_decode(const char *body, size_t len, const char *kind)
{
	static const char *const resource[] = { "namespace", "verb",        "group", "version",
		                                "resource",  "subresource", "name",  NULL };
	static const char *const nonresource[] = { "path", "verb", NULL };
	static const char *const rules[] = { "namespace", NULL };
	struct pb m = { (const unsigned char *)body, len }, raw, tm, spec, x;
	bool bad = false;
	json_t *o, *k;

	if (len < 4 || memcmp(body, "k8s", 4) != 0) {
		return NULL;
	}
	m.p += 4;
	m.len -= 4;
	tm = pb_field(m, 1, &bad);
	raw = pb_field(m, 2, &bad);
	k = pb_strings(tm, (const char *const[]){ "apiVersion", "kind", NULL }, &bad);
	if (bad || raw.p == NULL || json_string_value(json_object_get(k, "kind")) == NULL ||
	    strcmp(json_string_value(json_object_get(k, "kind")), kind) != 0) {
		json_decref(k);
		return NULL;
	}
	o = json_pack("{s:o, s:{}}", "apiVersion", json_incref(json_object_get(k, "apiVersion")),
	              "metadata");
	json_decref(k);
	spec = pb_field(raw, 2, &bad);
	if (strcmp(kind, "SelfSubjectAccessReview") == 0) {
		json_t *js = json_object();
		if ((x = pb_field(spec, 1, &bad)).p != NULL) {
			json_object_set_new(js, "resourceAttributes",
			                    pb_strings(x, resource, &bad));
		}
		if ((x = pb_field(spec, 2, &bad)).p != NULL) {
			json_object_set_new(js, "nonResourceAttributes",
			                    pb_strings(x, nonresource, &bad));
		}
		json_object_set_new(o, "spec", js);
	} else if (strcmp(kind, "SelfSubjectRulesReview") == 0) {
		json_object_set_new(o, "spec", pb_strings(spec, rules, &bad));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The review's body, checked: an object of this kind and apiVersion. NULL after a reply. */
static json_t *read_review(rz_req_t *req, const char *kind, const char *version)
{
	size_t len = 0;
	const char *body = rz_req_body(req, &len);
	const char *ctype = rz_req_header(req, "Content-Type");
	json_t *o = body == NULL ? NULL
	            : ctype != NULL && strstr(ctype, "application/vnd.kubernetes.protobuf")
	                ? rz_review_decode(body, len, kind)
	                : json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	const char *k = json_string_value(json_object_get(o, "kind"));
	const char *v = json_string_value(json_object_get(o, "apiVersion"));

	if (!json_is_object(o)) {
		rz_reply_error(req, 400, "BadRequest", "the body is no JSON object: a %s", kind);
	} else if ((k != NULL && strcmp(k, kind) != 0) || (v != NULL && strcmp(v, version) != 0)) {
		rz_reply_error(req, 400, "BadRequest", "kind: expected %s of %s", kind, version);
	} else {
		json_object_set_new(o, "kind", json_string(kind));
		json_object_set_new(o, "apiVersion", json_string(version));
		if (!json_is_object(json_object_get(o, "metadata"))) {
			json_object_set_new(o, "metadata", json_object());
		}
		return o;
	}
	json_decref(o);
	return NULL;
}

/* Non-resource paths any signed-in user reads (discovery, schemas, health). */
static bool open_path(const char *path)
{
	static const char *const open[] = { "/api",     "/apis",   "/openapi/v3", "/version",
		                            "/healthz", "/readyz", "/livez" };

	for (size_t i = 0; path != NULL && i < sizeof(open) / sizeof(open[0]); i++) {
		size_t n = strlen(open[i]);
		if (strncmp(path, open[i], n) == 0 && (path[n] == '\0' || path[n] == '/')) {
			return true;
		}
	}
	return false;
}

/* POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews */
static void h_access(rz_req_t *req, void *ctx)
{
	rz_review_t *r = ctx;
	const rz_principal_t *p = rz_access_principal(req);
	json_t *o = read_review(req, "SelfSubjectAccessReview", AUTHZ), *spec, *ra, *nra;
	char why[256] = "";
	bool allowed = false;
	const char *group;

	if (o == NULL || p == NULL) {
		json_decref(o);
		return;
	}
	spec = json_object_get(o, "spec");
	ra = json_object_get(spec, "resourceAttributes");
	nra = json_object_get(spec, "nonResourceAttributes");
	group = json_string_value(json_object_get(ra, "group"));
	if (json_is_object(ra)) {
		if (group != NULL && *group != '\0' && strcmp(group, RZ_API_GROUP) != 0) {
			snprintf(why, sizeof(why), "this server has no API group '%s'",
			         RZ_ECHO(group, 64));
		} else {
			allowed = rz_review_may(
			    r->auth, p, json_string_value(json_object_get(ra, "verb")),
			    json_string_value(json_object_get(ra, "resource")),
			    json_string_value(json_object_get(ra, "subresource")),
			    json_string_value(json_object_get(ra, "namespace")),
			    json_string_value(json_object_get(ra, "name")), why, sizeof(why));
		}
	} else if (json_is_object(nra)) {
		const char *path = json_string_value(json_object_get(nra, "path"));
		const char *verb = json_string_value(json_object_get(nra, "verb"));
		allowed = verb != NULL && strcmp(verb, "get") == 0 &&
		          (open_path(path) || p->role >= RZ_ROLE_VIEW);
		snprintf(why, sizeof(why), "%s",
		         allowed ? "a path any signed-in user reads" : "not open to your role");
	} else {
		rz_reply_error(
		    req, 422, "Invalid",
		    "spec: one of resourceAttributes or nonResourceAttributes is required");
		json_decref(o);
		return;
	}
	json_object_set_new(
	    o, "status",
	    allowed ? json_pack("{s:b, s:s}", "allowed", 1, "reason", why)
	            : json_pack("{s:b, s:b, s:s}", "allowed", 0, "denied", 1, "reason", why));
	rz_reply_json(req, 201, o);
}

/* The rules of p in tenant (NULL: on the installation): per kind, the verbs it may call. */
static json_t *rules(rz_auth_t *auth, const rz_principal_t *p, const char *tenant)
{
	json_t *out = json_array();
	size_t n;
	const rz_kind_t *kinds = rz_kinds(&n);
	char why[256];

	for (size_t i = 0; i < n; i++) {
		const rz_kind_t *k = &kinds[i];
		json_t *v = json_array();
		if (k->scope == RZ_SCOPE_USER) {
			json_decref(v);
			continue;
		}
		for (size_t j = 0; j < NVERBS; j++) {
			if (rz_review_may(auth, p, verbs[j].name, k->plural, "", tenant, NULL, why,
			                  sizeof(why))) {
				json_array_append_new(v, json_string(verbs[j].name));
			}
		}
		if (json_array_size(v) == 0) {
			json_decref(v);
			continue;
		}
		json_array_append_new(out, json_pack("{s:o, s:[s], s:[s]}", "verbs", v, "apiGroups",
		                                     RZ_API_GROUP, "resources", k->plural));
	}
	return out;
}

/* POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews */
static void h_rules(rz_req_t *req, void *ctx)
{
	rz_review_t *r = ctx;
	const rz_principal_t *p = rz_access_principal(req);
	json_t *o = read_review(req, "SelfSubjectRulesReview", AUTHZ), *open;
	const char *ns;

	if (o == NULL || p == NULL) {
		json_decref(o);
		return;
	}
	ns = json_string_value(json_object_get(json_object_get(o, "spec"), "namespace"));
	open = json_pack("[{s:[s], s:[s,s,s,s,s,s,s,s,s]}]", "verbs", "get", "nonResourceURLs",
	                 "/api", "/api/*", "/apis", "/apis/*", "/openapi/v3", "/openapi/v3/*",
	                 "/version", "/healthz", "/readyz");
	json_object_set_new(o, "status",
	                    json_pack("{s:o, s:o, s:b}", "resourceRules",
	                              rules(r->auth, p, ns != NULL && *ns != '\0' ? ns : NULL),
	                              "nonResourceRules", open, "incomplete", 0));
	rz_reply_json(req, 201, o);
}

/* POST /apis/authentication.k8s.io/v1/selfsubjectreviews */
static void h_whoami(rz_req_t *req, void *ctx)
{
	const rz_principal_t *p = rz_access_principal(req);
	json_t *o = read_review(req, "SelfSubjectReview", AUTHN), *groups;

	(void)ctx;
	if (o == NULL || p == NULL) {
		json_decref(o);
		return;
	}
	groups = json_array();
	for (size_t i = 0; i < p->ngroups; i++) {
		json_array_append_new(groups, json_string(p->groups[i]));
	}
	json_array_append_new(groups, json_string("system:authenticated"));
	json_object_set_new(o, "status",
	                    json_pack("{s:{s:s, s:o, s:{s:[s]}}}", "userInfo", "username", p->user,
	                              "groups", groups, "extra", "rezuscloud.io/role",
	                              rz_role_name(p->role)));
	rz_reply_json(req, 201, o);
}

static const char review_schema[] =
    "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\","
    "\"description\":\"The review's group and version, e.g. "
    "authorization.k8s.io/v1\"},\"kind\":{\"type\":\"string\","
    "\"description\":\"SelfSubjectAccessReview, SelfSubjectRulesReview or "
    "SelfSubjectReview\"},\"spec\":{\"type\":\"object\","
    "\"additionalProperties\":true,\"description\":\"What to review, as "
    "Kubernetes has it (resourceAttributes, namespace, ...)\"},"
    "\"status\":{\"type\":\"object\",\"additionalProperties\":true,"
    "\"description\":\"The answer, filled in by the server (allowed, "
    "resourceRules, userInfo, ...)\"}}}";
static const int review_errors[] = { 422, 0 };
static const rz_route_doc_t access_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "createSelfSubjectAccessReview",
	  .summary = "whether the caller may do one thing (kubectl auth can-i): "
	             "spec.resourceAttributes (verb, resource, namespace = tenant, name) or "
	             "spec.nonResourceAttributes; status.allowed and reason",
	  .request = review_schema,
	  .response = review_schema,
	  .code = 201,
	  .errors = review_errors },
	{ 0 },
};
static const rz_route_doc_t rules_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "createSelfSubjectRulesReview",
	  .summary = "what the caller may do in a tenant (spec.namespace; kubectl auth can-i "
	             "--list): status.resourceRules per kind",
	  .request = review_schema,
	  .response = review_schema,
	  .code = 201 },
	{ 0 },
};
static const rz_route_doc_t whoami_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "createSelfSubjectReview",
	  .summary = "who the caller is (kubectl auth whoami): status.userInfo",
	  .request = review_schema,
	  .response = review_schema,
	  .code = 201 },
	{ 0 },
};

static const rz_route_t review_routes[] = {
	{ .methods = RZ_M_POST,
	  .pattern = "/apis/" AUTHZ "/selfsubjectaccessreviews",
	  .fn = h_access,
	  .role = RZ_ROLE_NONE,
	  .verb = "review",
	  .doc = access_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/apis/" AUTHZ "/selfsubjectrulesreviews",
	  .fn = h_rules,
	  .role = RZ_ROLE_NONE,
	  .verb = "review",
	  .doc = rules_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/apis/" AUTHN "/selfsubjectreviews",
	  .fn = h_whoami,
	  .role = RZ_ROLE_NONE,
	  .verb = "whoami",
	  .doc = whoami_doc },
};

int rz_review_new(rz_review_t **out, rz_http_t *http, rz_auth_t *auth, rz_err_t *err)
{
	rz_review_t *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL) {
		return rz_err_set(err, -ENOMEM, "review: out of memory");
	}
	r->auth = auth;
	rc = rz_http_add_table(http, RZ_ROUTES(review_routes), r, err);
	if (rc != 0) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void rz_review_free(rz_review_t *r)
{
	free(r);
}
