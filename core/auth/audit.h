/*
 * core/auth/audit.h - the audit log (SPEC §4 AuditEvent, §5): one row per mutating request,
 * login, denied request, credential download and force-unlock. A successful change's row
 * is written in the change's own transaction; a refused or failed request gets a row of
 * its own. Rows never hold secrets. GET /api/v1/audit (admin) reads them; rows older than
 * audit.retention are pruned hourly.
 */
#ifndef RZ_AUDIT_H
#define RZ_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/store/db.h"
#include "core/base/errors.h"
#include "core/http/http.h"

struct event_base;

typedef struct rz_audit_entry {
	const char *user, *role, *source_ip, *request_id, *method, *path;
	const char *verb, *kind, *tenant, *name, *error;
	const char *detail; /* what the request said besides its path (an approval's reason) */
	int code;
} rz_audit_entry_t;

#define RZ_AUDIT_FIELD_MAX 1024 /* bytes of a row's path, user, name and other short fields */
#define RZ_AUDIT_TEXT_MAX  4096 /* bytes of its error and detail */

/* Insert one row (inside the caller's transaction, when there is one). NULL fields are
 * stored as ""; a field longer than its bound is cut, on a character boundary, and ends
 * in "…". */
int rz_audit_insert(rz_db_t *db, const rz_audit_entry_t *e, rz_err_t *err);

/* ---- refused requests: sampled, so that a flood cannot fill the disk ----
 *
 * Per source address (an IPv6 /64 counts as one) and interval, the first `full` refusals
 * (401, 403, 429) are written in full; the rest are counted, and when the interval ends one
 * row says how many ("1873 more refused requests from 203.0.113.9 between T1 and T2"). At
 * most RZ_AUDIT_REFUSED_ALL x full rows in full per interval in all; at most
 * RZ_AUDIT_REFUSED_ADDRESSES addresses are counted apart, the others together ("*"). */
#define RZ_AUDIT_REFUSED_ADDRESSES 64
#define RZ_AUDIT_REFUSED_ALL       10

typedef struct rz_audit_sampler rz_audit_sampler_t;

/* Caller owns *out; rz_audit_sampler_free(). */
int rz_audit_sampler_new(rz_audit_sampler_t **out, int full, int64_t interval_ms, rz_err_t *err);

/* Write the counts still held, then free. db may be NULL (nothing written). */
void rz_audit_sampler_free(rz_audit_sampler_t *s, rz_db_t *db);

/* A refused request: its row is written in full, or counted for its address. Also writes
 * the counts of intervals that have ended. */
int rz_audit_refused(rz_audit_sampler_t *s, rz_db_t *db, const rz_audit_entry_t *e, rz_err_t *err);

/* Write the counts of intervals that have ended (all of them when all). Cheap when none. */
void rz_audit_sampler_flush(rz_audit_sampler_t *s, rz_db_t *db, bool all);

typedef struct rz_audit rz_audit_t;

/* retention_ms: rows older than this are pruned (hourly, and once at start). */
int rz_audit_new(rz_audit_t **out, rz_db_t *db, struct event_base *base, int64_t retention_ms,
                 rz_err_t *err);
void rz_audit_free(rz_audit_t *a);

/* Delete rows older than the retention and expired revoked sessions; returns rows removed. */
int64_t rz_audit_prune(rz_audit_t *a);

/* Register GET /api/v1/audit (admin only). */
int rz_audit_routes(rz_audit_t *a, rz_http_t *http, rz_err_t *err);

#endif /* RZ_AUDIT_H */
