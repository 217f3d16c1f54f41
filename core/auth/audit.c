/* core/auth/audit.c - audit rows: writing, reading with filters, pruning. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/auth/access.h"
#include "core/auth/audit.h"
#include "core/auth/auth.h"
#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/store/store.h"

#define PRUNE_EVERY_S 3600
#define LIST_DEFAULT  500
#define LIST_MAX      5000

struct rz_audit {
	rz_db_t *db;
	struct event *timer;
	int64_t retention_ms;
};

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* s cut to at most max bytes — on a UTF-8 character's boundary, marked "…" — in buf (of
 * max + 4 bytes); s itself when it fits. */
static const char *bounded(const char *s, size_t max, char *buf)
{
	size_t n;

	if (s == NULL || strlen(s) <= max) {
		return nz(s);
	}
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) {
		n--; /* not inside a multi-byte character */
	}
	memcpy(buf, s, n);
	memcpy(buf + n, "\xe2\x80\xa6", 4); /* "…" and the NUL */
	return buf;
}

int rz_audit_insert(rz_db_t *db, const rz_audit_entry_t *e, rz_err_t *err)
{
	static const char sql[] =
	    "INSERT INTO audit (time, user, role, source_ip, request_id, method, path, verb,"
	    " kind, tenant, name, code, error, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
	    " ?9, ?10, ?11, ?12, ?13, ?14)";
	rz_stmt_t *s = rz_db_stmt(db, sql, err);
	const char *text[] = { e->user, e->role, e->source_ip, e->request_id, e->method,
		               e->path, e->verb, e->kind,      e->tenant,     e->name };
	char now[32];
	int rc;

	if (s == NULL) {
		return err->code;
	}
	/* a row's size is bounded whatever a request sends: a refused request with a 64 KiB
	 * path must not cost 64 KiB of disk for 90 days */
	char buf[10][RZ_AUDIT_FIELD_MAX + 4], ebuf[RZ_AUDIT_TEXT_MAX + 4],
	    dbuf[RZ_AUDIT_TEXT_MAX + 4];

	rz_time_now(now, sizeof(now));
	rz_stmt_bind_text(s, 1, now);
	for (int i = 0; i < 10; i++) {
		rz_stmt_bind_text(s, i + 2, bounded(text[i], RZ_AUDIT_FIELD_MAX, buf[i]));
	}
	rz_stmt_bind_int64(s, 12, e->code);
	rz_stmt_bind_text(s, 13, bounded(e->error, RZ_AUDIT_TEXT_MAX, ebuf));
	rz_stmt_bind_text(s, 14, bounded(e->detail, RZ_AUDIT_TEXT_MAX, dbuf));
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ refused requests */

struct tally {
	char addr[RZ_ADDR_KEY_LEN]; /* "" = free; "*" = addresses beyond the table */
	int64_t start_ms;           /* the interval began */
	int full;                   /* rows written in full in it */
	int64_t counted;            /* refusals counted instead */
	int64_t by_code[3];         /* of them: 401, 403, other (429) */
	char first[32], last[32];   /* when the counted ones came */
};

struct rz_audit_sampler {
	int full;
	int64_t interval_ms;
	int64_t all_start_ms;
	int all_full;
	int64_t next_due_ms; /* the earliest end of an interval holding counts; 0 = none */
	struct tally t[RZ_AUDIT_REFUSED_ADDRESSES + 1];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rz_audit_sampler_new(rz_audit_sampler_t **out, int full, int64_t interval_ms, rz_err_t *err)
{
	rz_audit_sampler_t *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s == NULL) {
		return rz_err_set(err, -ENOMEM, "audit: out of memory");
	}
	s->full = full > 0 ? full : 1;
	s->interval_ms = interval_ms > 0 ? interval_ms : 60000;
	*out = s;
	return 0;
}

/* Write t's counted refusals as one row, and start it over. */
static void write_tally(rz_audit_sampler_t *s, rz_db_t *db, struct tally *t, int64_t now)
{
	char msg[512];
	rz_audit_entry_t e = { .user = "", .role = "anonymous", .verb = "refused" };
	rz_err_t err = { 0 };

	if (t->counted > 0 && db != NULL) {
		snprintf(msg, sizeof(msg),
		         "%" PRId64
		         " more refused requests from %s between %s and %s (401: %" PRId64
		         ", 403: %" PRId64 ", 429: %" PRId64 ")",
		         t->counted, strcmp(t->addr, "*") == 0 ? "other addresses" : t->addr,
		         t->first, t->last, t->by_code[0], t->by_code[1], t->by_code[2]);
		e.source_ip = t->addr;
		e.error = msg;
		e.code = t->by_code[0] >= t->by_code[1] && t->by_code[0] >= t->by_code[2] ? 401
		         : t->by_code[1] >= t->by_code[2]                                 ? 403
		                                                                          : 429;
		if (rz_audit_insert(db, &e, &err) != 0) {
			rz_log_err("audit",
			           "cannot record %" PRId64 " refused requests from %s: %s",
			           t->counted, t->addr, err.msg);
		}
	}
	memset(t, 0, sizeof(*t));
	(void)s;
	(void)now;
}

void rz_audit_sampler_flush(rz_audit_sampler_t *s, rz_db_t *db, bool all)
{
	int64_t now = now_ms();

	if (s == NULL || (!all && (s->next_due_ms == 0 || now < s->next_due_ms))) {
		return;
	}
	s->next_due_ms = 0;
	for (size_t i = 0; i < sizeof(s->t) / sizeof(s->t[0]); i++) {
		struct tally *t = &s->t[i];
		if (t->addr[0] == '\0') {
			continue;
		}
		if (all || now >= t->start_ms + s->interval_ms) {
			write_tally(s, db, t, now);
		} else if (t->counted > 0 &&
		           (s->next_due_ms == 0 || t->start_ms + s->interval_ms < s->next_due_ms)) {
			s->next_due_ms = t->start_ms + s->interval_ms;
		}
	}
}

void rz_audit_sampler_free(rz_audit_sampler_t *s, rz_db_t *db)
{
	if (s != NULL) {
		rz_audit_sampler_flush(s, db, true);
		free(s);
	}
}

/* The tally of addr: its own, a free one, one whose interval ended, or the shared "*". */
static struct tally *tally_of(rz_audit_sampler_t *s, rz_db_t *db, const char *addr, int64_t now)
{
	struct tally *spare = NULL, *t;

	for (size_t i = 0; i < RZ_AUDIT_REFUSED_ADDRESSES; i++) {
		t = &s->t[i];
		if (strcmp(t->addr, addr) == 0) {
			return t;
		}
		if (spare == NULL && (t->addr[0] == '\0' || now >= t->start_ms + s->interval_ms)) {
			spare = t;
		}
	}
	t = spare != NULL ? spare : &s->t[RZ_AUDIT_REFUSED_ADDRESSES];
	if (spare != NULL || t->addr[0] == '\0') {
		write_tally(s, db, t, now);
		snprintf(t->addr, sizeof(t->addr), "%s", spare != NULL ? addr : "*");
		t->start_ms = now;
	}
	return t;
}

int rz_audit_refused(rz_audit_sampler_t *s, rz_db_t *db, const rz_audit_entry_t *e, rz_err_t *err)
{
	char addr[RZ_ADDR_KEY_LEN];
	int64_t now = now_ms();
	struct tally *t;

	rz_audit_sampler_flush(s, db, false);
	rz_auth_addr_key(e->source_ip, addr);
	t = tally_of(s, db, addr, now);
	if (now >= t->start_ms + s->interval_ms) { /* a new interval for the same tally */
		char keep[RZ_ADDR_KEY_LEN];
		snprintf(keep, sizeof(keep), "%s", t->addr);
		write_tally(s, db, t, now);
		snprintf(t->addr, sizeof(t->addr), "%s", keep);
		t->start_ms = now;
	}
	if (now >= s->all_start_ms + s->interval_ms) {
		s->all_start_ms = now;
		s->all_full = 0;
	}
	if (t->full < s->full && s->all_full < s->full * RZ_AUDIT_REFUSED_ALL) {
		t->full++;
		s->all_full++;
		return rz_audit_insert(db, e, err);
	}
	if (t->counted++ == 0) {
		rz_time_now(t->first, sizeof(t->first));
	}
	rz_time_now(t->last, sizeof(t->last));
	t->by_code[e->code == 401 ? 0 : e->code == 403 ? 1 : 2]++;
	if (s->next_due_ms == 0 || t->start_ms + s->interval_ms < s->next_due_ms) {
		s->next_due_ms = t->start_ms + s->interval_ms;
	}
	return 0;
}

/* ------------------------------------------------------------------ reading */

static json_t *row_object(rz_stmt_t *s)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, "
	                 "s:I}",
	                 "time", rz_stmt_text(s, 1), "user", rz_stmt_text(s, 2), "role",
	                 rz_stmt_text(s, 3), "sourceIP", rz_stmt_text(s, 4), "requestId",
	                 rz_stmt_text(s, 5), "method", rz_stmt_text(s, 6), "path",
	                 rz_stmt_text(s, 7), "verb", rz_stmt_text(s, 8), "kind", rz_stmt_text(s, 9),
	                 "tenant", rz_stmt_text(s, 10), "name", rz_stmt_text(s, 11), "code",
	                 (json_int_t)rz_stmt_int64(s, 12), "error", rz_stmt_text(s, 13), "detail",
	                 rz_stmt_text(s, 14), "id", (json_int_t)rz_stmt_int64(s, 0));
}

/* The tenants of a tenant's admin (rz_access_tenants) as ",a1,a2,", for the query's instr():
 * tenant names are DNS labels, which hold no comma. NULL for every row; "" when out of
 * memory (no row then). Caller owns a result other than NULL. */
static char *tenant_set(const rz_req_t *req)
{
	const json_t *tenants = rz_access_tenants(req), *t;
	size_t len = 2, i;
	char *set, *p;

	if (tenants == NULL) {
		return NULL;
	}
	json_array_foreach(tenants, i, t)
	{
		len += strlen(json_string_value(t)) + 1;
	}
	if ((set = malloc(len)) == NULL) {
		return strdup("");
	}
	p = set;
	*p++ = ',';
	json_array_foreach(tenants, i, t)
	{
		p += sprintf(p, "%s,", json_string_value(t));
	}
	*p = '\0';
	return set;
}

/* Newest first. Filters are exact matches; since/until are RFC 3339 times; outcome is success
 * (a code below 400) or failure. A tenant's admin (by AccessBindings) reads the rows of its
 * tenants only: those naming one (a Tenant's own rows name it as theirs). */
static void handle_list(rz_req_t *req, void *ctx)
{
	static const char sql[] =
	    "SELECT id, time, user, role, source_ip, request_id, method, path, verb, kind,"
	    " tenant, name, code, error, detail FROM audit WHERE"
	    " (?1 IS NULL OR user = ?1) AND (?2 IS NULL OR verb = ?2) AND"
	    " (?3 IS NULL OR kind = ?3) AND (?4 IS NULL OR tenant = ?4) AND"
	    " (?5 IS NULL OR time >= ?5) AND (?6 IS NULL OR time <= ?6) AND id < ?7 AND"
	    " (?9 IS NULL OR (?9 = 'success') = (code < 400)) AND"
	    " (?10 IS NULL OR instr(?10, ',' || (CASE WHEN kind = 'Tenant' AND tenant = ''"
	    " THEN name ELSE tenant END) || ',') > 0)"
	    " ORDER BY id DESC LIMIT ?8";
	rz_audit_t *a = ctx;
	const char *since = rz_req_query(req, "since"), *until = rz_req_query(req, "until");
	const char *limit = rz_req_query(req, "limit"), *cont = rz_req_query(req, "continue");
	const char *outcome = rz_req_query(req, "outcome");
	char *set;
	int64_t n = LIST_DEFAULT, before = INT64_MAX, last = 0;
	rz_err_t err = { 0 };
	json_t *items = json_array();
	rz_stmt_t *s;
	int rc;

	if ((since != NULL && rz_time_parse(since) < 0) ||
	    (until != NULL && rz_time_parse(until) < 0)) {
		json_decref(items);
		rz_reply_error(req, 400, NULL,
		               "since and until take RFC 3339 times such as "
		               "2026-11-30T04:31:11Z");
		return;
	}
	if (outcome != NULL && strcmp(outcome, "success") != 0 && strcmp(outcome, "failure") != 0) {
		json_decref(items);
		rz_reply_error(req, 400, NULL,
		               "outcome is success (a code below 400) or failure (400 and up)");
		return;
	}
	if ((limit != NULL && !rz_parse_int(limit, 1, LIST_MAX, &n)) ||
	    (cont != NULL && !rz_parse_int(cont, 1, INT64_MAX, &before))) {
		json_decref(items);
		rz_reply_error(req, 400, NULL, "invalid limit or continue (limit: 1 to %d)",
		               LIST_MAX);
		return;
	}
	s = rz_db_stmt(a->db, sql, &err);
	if (s == NULL) {
		json_decref(items);
		rz_reply_error(req, 500, NULL, "internal error; see the server log");
		return;
	}
	rz_stmt_bind_text(s, 1, rz_req_query(req, "user"));
	rz_stmt_bind_text(s, 2, rz_req_query(req, "verb"));
	rz_stmt_bind_text(s, 3, rz_req_query(req, "kind"));
	rz_stmt_bind_text(s, 4, rz_req_query(req, "tenant"));
	rz_stmt_bind_text(s, 5, since);
	rz_stmt_bind_text(s, 6, until);
	rz_stmt_bind_int64(s, 7, before);
	rz_stmt_bind_int64(s, 8, n + 1);
	rz_stmt_bind_text(s, 9, outcome);
	set = tenant_set(req);
	rz_stmt_bind_text(s, 10, set); /* copied */
	free(set);
	while ((rc = rz_stmt_step(s, &err)) == 1) {
		if ((int64_t)json_array_size(items) == n) {
			char tok[24];
			snprintf(tok, sizeof(tok), "%" PRId64, last);
			rz_stmt_done(s);
			rz_reply_json(req, 200,
			              json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion",
			                        RZ_API_VERSION, "kind", "AuditEventList",
			                        "metadata", "continue", tok, "items", items));
			return;
		}
		last = rz_stmt_int64(s, 0);
		json_array_append_new(items, row_object(s));
	}
	rz_stmt_done(s);
	if (rc < 0) {
		json_decref(items);
		rz_reply_error(req, 500, NULL, "internal error; see the server log");
		return;
	}
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:{}, s:o}", "apiVersion", RZ_API_VERSION, "kind",
	                        "AuditEventList", "metadata", "items", items));
}

/* ------------------------------------------------------------------ pruning */

int64_t rz_audit_prune(rz_audit_t *a)
{
	rz_err_t err = { 0 };
	time_t cut = time(NULL) - (time_t)(a->retention_ms / 1000);
	struct tm tm;
	char when[32];
	rz_stmt_t *s;
	int64_t removed = 0;

	gmtime_r(&cut, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	s = rz_db_stmt(a->db, "DELETE FROM audit WHERE time < ?1", &err);
	if (s != NULL) {
		rz_stmt_bind_text(s, 1, when);
		if (rz_stmt_step(s, &err) >= 0) {
			removed = rz_db_changes(a->db);
		}
		rz_stmt_done(s);
	}
	for (int i = 0; i < 2; i++) { /* expired sessions, and revocations from before them */
		s = rz_db_stmt(a->db,
		               i == 0 ? "DELETE FROM sessions WHERE exp < ?1"
		                      : "DELETE FROM revoked_sessions WHERE exp < ?1",
		               &err);
		if (s != NULL) {
			rz_stmt_bind_int64(s, 1, (int64_t)time(NULL));
			rz_stmt_step(s, &err);
			rz_stmt_done(s);
		}
	}
	if (err.code != 0) {
		rz_log_warn("audit", "pruning failed: %s", err.msg);
	} else if (removed > 0) {
		rz_log_info("audit", "pruned %" PRId64 " rows older than %s", removed, when);
	}
	return removed;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	rz_audit_prune(arg);
}

int rz_audit_new(rz_audit_t **out, rz_db_t *db, struct event_base *base, int64_t retention_ms,
                 rz_err_t *err)
{
	rz_audit_t *a = calloc(1, sizeof(*a));
	struct timeval tv = { PRUNE_EVERY_S, 0 };

	*out = NULL;
	if (a == NULL) {
		return rz_err_set(err, -ENOMEM, "audit: out of memory");
	}
	a->db = db;
	a->retention_ms = retention_ms;
	if (base != NULL) {
		a->timer = event_new(base, -1, EV_PERSIST, on_timer, a);
		if (a->timer == NULL || event_add(a->timer, &tv) < 0) {
			rz_audit_free(a);
			return rz_err_set(err, -ENOMEM, "audit: out of memory");
		}
	}
	rz_audit_prune(a);
	*out = a;
	return 0;
}

void rz_audit_free(rz_audit_t *a)
{
	if (a != NULL) {
		if (a->timer != NULL) {
			event_free(a->timer);
		}
		free(a);
	}
}

/* For the OpenAPI document (core/api/openapi.c). */
static const rz_route_param_t audit_query[] = {
	{ "user", "string", "only this user's rows" },
	{ "verb", "string", "only this verb (create, login, download-credentials, ...)" },
	{ "kind", "string", "only this kind" },
	{ "tenant", "string", "only this tenant" },
	{ "since", "string", "from this RFC 3339 time" },
	{ "until", "string", "up to this RFC 3339 time" },
	{ "outcome", "string", "success (a code below 400) or failure (400 and up)" },
	{ "limit", "integer", "at most this many rows" },
	{ "continue", "string", "the continue token of the previous page" },
	{ NULL, NULL, NULL },
};
static const int audit_errors[] = { 400, 0 };
static const rz_route_doc_t audit_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "listAuditEvents",
	  .summary = "the audit rows, newest first",
	  .query = audit_query,
	  .response = "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\","
	              "\"description\":\"rezuscloud.io/v1\"},\"kind\":{\"type\":\"string\","
	              "\"description\":\"AuditEventList\"},"
	              "\"metadata\":{\"$ref\":\"#/components/schemas/ListMeta\"},"
	              "\"items\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	              "\"additionalProperties\":true},\"description\":\"The audit rows, newest "
	              "first: time, user, role, sourceIP, requestId, method, path, verb, kind, "
	              "tenant, name, code, error\"}}}",
	  .errors = audit_errors },
	{ 0 },
};

static const rz_route_t audit_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/audit",
	  .fn = handle_list,
	  .role = RZ_ROLE_ADMIN,
	  .kind = "AuditEvent",
	  .verb = "list",
	  .doc = audit_doc,
	  .per_tenant = true },
};

int rz_audit_routes(rz_audit_t *a, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(audit_routes), a, err);
}
