/*
 * core/auth/review.h - what the asking principal may do, as Kubernetes clients ask it
 * (docs/security.md, "Asking what one may do"): authorization.k8s.io/v1
 * SelfSubjectAccessReview (`kubectl auth can-i`) and SelfSubjectRulesReview (`can-i
 * --list`), authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`), answered
 * from the rules the guard applies: the roles of the kind table, the principal's role and
 * its AccessBindings on the tenant, its token's cap. Any signed-in user asks about itself.
 */
#ifndef RZ_REVIEW_H
#define RZ_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/auth/auth.h"
#include "core/base/errors.h"
#include "core/http/http.h"

typedef struct rz_review rz_review_t;

/* The three routes, registered on http; auth is borrowed and must outlive the server.
 * Caller owns *out (freed after the server). */
int rz_review_new(rz_review_t **out, rz_http_t *http, rz_auth_t *auth, rz_err_t *err);
void rz_review_free(rz_review_t *r);

/* Whether p may call verb ("get", "list", "watch", "create", "update", "patch", "delete")
 * on resource (a kind's plural; subresource "status" or "") in tenant (NULL or "": every
 * tenant, or a global kind), named name (a Tenant's name stands for its tenant; may be
 * NULL); why (a sentence) says why or why not. */
bool rz_review_may(rz_auth_t *auth, const rz_principal_t *p, const char *verb, const char *resource,
                   const char *subresource, const char *tenant, const char *name, char *why,
                   size_t why_size);

/* A review sent as Kubernetes protobuf ("k8s\0", a runtime.Unknown whose raw bytes are the
 * object) as the JSON object the handlers read: apiVersion, and the strings of spec that
 * kind (SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview) carries; NULL
 * when body is malformed or another kind. Reads only within body. Caller owns the result. */
json_t *rz_review_decode(const char *body, size_t len, const char *kind);

#endif /* RZ_REVIEW_H */
