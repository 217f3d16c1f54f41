/*
 * core/api/api.h - the resource REST API (SPEC §3, §4): routes generated from the kind table,
 * the verbs, validation, lists with selectors and pages, watches (its OpenAPI document:
 * core/api/openapi.h).
 */
#ifndef RZ_API_H
#define RZ_API_H

#include <stddef.h>
#include <time.h>

#include "core/auth/access.h"
#include "core/store/bus.h"
#include "core/base/errors.h"
#include "core/http/http.h"
#include "core/store/store.h"
#include "core/api/watch.h"
#include "core/base/workers.h"

typedef struct rz_api rz_api_t;

/* The Kubernetes API group the kinds belong to, and the path Kubernetes clients find it at. */
#define RZ_API_GROUP      "rezuscloud.io"
#define RZ_API_GROUP_PATH "/apis/rezuscloud.io/v1"

/* Serve every /api/v1 route also where Kubernetes clients look for it, by the same route
 * (rz_http_add_alias): /api/v1/tenants/{tenant}/... at RZ_API_GROUP_PATH/namespaces/{tenant}/...,
 * /api/v1/watch/tenants/{tenant}/... at RZ_API_GROUP_PATH/watch/namespaces/{tenant}/...
 * (the tenant is the namespace), the rest of /api/v1/... at RZ_API_GROUP_PATH/.... Call on
 * http before any route is added (the daemon does, before its own and every module's). */
int rz_api_add_aliases(rz_http_t *http, rz_err_t *err);

/* Register the resource routes and /api/v1 discovery on http. access (may be NULL: no audit
 * rows) and workers (may be NULL: passwords hashed inline) as well as everything else are
 * borrowed and must outlive the API. Caller owns *out; rz_api_free(). */
int rz_api_new(rz_api_t **out, rz_http_t *http, rz_store_t *store, rz_watch_hub_t *watches,
               rz_access_t *access, rz_workers_t *workers, rz_err_t *err);

void rz_api_free(rz_api_t *api);

/* The loaded plugins, whose validate_nodegroup runs on NodeGroup writes (borrowed; NULL:
 * no plugin checks). */
struct rz_plugins;
void rz_api_set_plugins(rz_api_t *api, struct rz_plugins *plugins);

/* A check of a spec write (create, replace, patch) against the state of things, after the
 * fields, the kind's own check and the plugins' passed: obj is the object to be written
 * (metadata.tenant set for tenant kinds), old the stored one on updates (else NULL); each
 * problem is a cause appended to causes, and makes the write a 422. It must not write. */
typedef void (*rz_api_admit_fn)(void *arg, const rz_kind_t *k, const json_t *obj, const json_t *old,
                                json_t *causes);
void rz_api_set_admit(rz_api_t *api, rz_api_admit_fn fn, void *arg);

/* A Kubernetes Table (meta.k8s.io/v1) of k with the columns rezusctl get prints
 * (core/model/columns.c), the wide ones at priority 1, no rows yet; TENANT left out when
 * hide_tenant (the request names the tenant, as rezusctl get -n leaves it out, or is a
 * Kubernetes client's, which prints the namespace). Caller owns the result. */
json_t *rz_api_table_new(const rz_kind_t *k, bool hide_tenant);

/* Append obj's row (borrowed) to table, cells as of now; include is 0 (no object), 1 (its
 * metadata as a PartialObjectMetadata, Kubernetes' default) or 2 (the whole object). */
void rz_api_table_add(json_t *table, const rz_kind_t *k, bool hide_tenant, const json_t *obj,
                      int include, time_t now);

/* The continue token a list page ending with last (borrowed) hands out: the owner and name
 * of last, base64url. Caller owns the result; free(). NULL on out of memory. */
char *rz_api_continue_encode(const rz_kind_t *k, const json_t *last);

/* Decode token (borrowed) into key (size bytes): *tenant and *name point into key. False
 * when the token is not one rz_api_continue_encode could have made. */
bool rz_api_continue_decode(const char *token, char *key, size_t size, const char **tenant,
                            const char **name);

#endif /* RZ_API_H */
