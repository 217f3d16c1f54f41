/*
 * core/api/openapi.h - the OpenAPI 3 documents of the API, generated from the route table
 * (core/http: every route any module registered, with its rz_route_doc_t) and the kind
 * table (core/model/kinds.h), so that neither can drift from what the server answers.
 *
 * Served as Kubernetes serves them, so that kubectl validates against them: /openapi/v3 is
 * the index ({"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."},
 * "apis/rezuscloud.io/v1": ...}}), /openapi/v3/api/v1 the document of every route at its
 * own path (/api/v1/..., and the routes outside it) and /openapi/v3/apis/rezuscloud.io/v1
 * the group-version's: the kinds' routes at their group paths
 * (/apis/rezuscloud.io/v1/namespaces/{tenant}/...), each kind's schema and operations marked
 * with x-kubernetes-group-version-kind. Each document holds one form of each path, so that a
 * client generated from either has each operation once; the operationIds are the same in
 * both. A list's answer is the list; the stream of its changes is the watch operation of
 * Kubernetes' /watch/ path (the list's ?watch=true, which Kubernetes clients send, streams
 * the same).
 */
#ifndef RZ_OPENAPI_H
#define RZ_OPENAPI_H

#include <stdbool.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/http/http.h"

typedef struct rz_openapi rz_openapi_t;

/* Register /openapi/v3 and the documents it lists on http (borrowed; must outlive the
 * result). The documents are generated on each request from http's route table as it is
 * then. Caller owns *out; rz_openapi_free(). */
int rz_openapi_new(rz_openapi_t **out, rz_http_t *http, rz_err_t *err);

void rz_openapi_free(rz_openapi_t *o);

/* The document of http's routes (borrowed): every route at its own pattern when
 * group_version is false, else the group-version document (the routes of the kind table's
 * kinds, at their /apis/rezuscloud.io/v1 aliases). Caller owns the result; NULL on out of
 * memory. */
json_t *rz_openapi_document(const rz_http_t *http, bool group_version);

/* The index /openapi/v3 serves (caller owns; NULL on out of memory). */
json_t *rz_openapi_index(const rz_http_t *http);

/* True when the route (borrowed) is described by the document: its kind is a kind of the
 * table and its verb one the kind table explains, or it carries a doc entry for every
 * method it answers. */
bool rz_openapi_described(const rz_route_t *r);

#endif /* RZ_OPENAPI_H */
