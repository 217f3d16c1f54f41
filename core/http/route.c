/* core/http/route.c - the route table: patterns, aliases, matching, the hand-over to a route. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/http/http-int.h"

static int route_compile(struct route *r, const rz_route_t *def, const char *pattern, rz_err_t *err)
{
	char *save = NULL;

	memset(r, 0, sizeof(*r));
	r->def = def;
	if (pattern == NULL || pattern[0] != '/' || def->fn == NULL) {
		return rz_err_set(err, -EINVAL,
		                  "http: route '%s' must start with '/' and have a handler",
		                  pattern ? pattern : "(null)");
	}
	r->storage = strdup(pattern);
	r->text = strdup(pattern);
	if (r->storage == NULL || r->text == NULL) {
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	for (char *s = strtok_r(r->storage, "/", &save); s != NULL;
	     s = strtok_r(NULL, "/", &save)) {
		struct seg *g = &r->segs[r->nseg];
		size_t len = strlen(s);
		if (r->nseg == MAX_SEGMENTS || (r->nseg > 0 && r->segs[r->nseg - 1].rest)) {
			return rz_err_set(err, -EINVAL,
			                  "http: route '%s': too many segments or "
			                  "segments after {name...}",
			                  pattern);
		}
		if (s[0] == '{' && len > 2 && s[len - 1] == '}') {
			s[len - 1] = '\0';
			g->name = s + 1;
			if (len > 5 && strcmp(s + len - 4, "...") == 0) {
				s[len - 4] = '\0';
				g->rest = true;
			}
		} else if (strpbrk(s, "{}") != NULL) {
			return rz_err_set(err, -EINVAL, "http: route '%s': bad segment '%s'",
			                  pattern, s);
		} else {
			g->lit = s;
		}
		r->nseg++;
	}
	return 0;
}

/* The pattern of def under the first alias whose prefix it starts with (whole segments),
 * or NULL (none, or out of memory). Caller owns the result; free(). */
static char *alias_of(const rz_http_t *h, const char *pattern)
{
	for (size_t i = 0; pattern != NULL && i < h->naliases; i++) {
		const struct alias *a = &h->aliases[i];
		size_t n = strlen(a->prefix);
		char *out;
		if (strncmp(pattern, a->prefix, n) != 0 ||
		    (pattern[n] != '\0' && pattern[n] != '/')) {
			continue;
		}
		out = malloc(strlen(a->alias) + strlen(pattern + n) + 1);
		if (out != NULL) {
			strcpy(out, a->alias);
			strcat(out, pattern + n);
		}
		return out;
	}
	return NULL;
}

/* Compile def into the next free slot (and its alias into the one after it). */
static int route_add(rz_http_t *h, const rz_route_t *def, void *ctx, rz_err_t *err)
{
	char *alias = def->no_alias ? NULL : alias_of(h, def->pattern);
	int rc = route_compile(&h->routes[h->nroutes], def, def->pattern, err);

	h->routes[h->nroutes].ctx = ctx;

	if (rc < 0) {
		free(h->routes[h->nroutes].storage);
		free(h->routes[h->nroutes].text);
		free(alias);
		return rc;
	}
	h->nroutes++;
	if (alias != NULL) {
		rc = route_compile(&h->routes[h->nroutes], def, alias, err);
		h->routes[h->nroutes].ctx = ctx;
		free(alias);
		if (rc < 0) {
			free(h->routes[h->nroutes].storage);
			free(h->routes[h->nroutes].text);
			return rc;
		}
		h->nroutes++;
	}
	return 0;
}

/* Add n routes, each with its own ctx (table_ctx false) or all with ctx. */
static int routes_add(rz_http_t *h, const rz_route_t *routes, size_t n, bool table_ctx, void *ctx,
                      rz_err_t *err)
{
	struct route *grown = realloc(h->routes, (h->nroutes + 2 * n) * sizeof(*grown));

	if (grown == NULL) {
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	h->routes = grown;
	for (size_t i = 0; i < n; i++) {
		int rc = route_add(h, &routes[i], table_ctx ? ctx : routes[i].ctx, err);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

int rz_http_add_routes(rz_http_t *h, const rz_route_t *routes, size_t n, rz_err_t *err)
{
	return routes_add(h, routes, n, false, NULL, err);
}

int rz_http_add_table(rz_http_t *h, const rz_route_t *table, size_t n, void *ctx, rz_err_t *err)
{
	return routes_add(h, table, n, true, ctx, err);
}

int rz_http_add_alias(rz_http_t *h, const char *prefix, const char *alias, rz_err_t *err)
{
	struct alias *a = &h->aliases[h->naliases];

	if (h->naliases == RZ_HTTP_ALIASES_MAX || h->nroutes > 0 || prefix[0] != '/' ||
	    alias[0] != '/') {
		return rz_err_set(err, -EINVAL,
		                  "http: alias '%s' of '%s': too many, after routes, or not "
		                  "absolute",
		                  alias, prefix);
	}
	a->prefix = strdup(prefix);
	a->alias = strdup(alias);
	if (a->prefix == NULL || a->alias == NULL) {
		free(a->prefix);
		free(a->alias);
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	h->naliases++;
	return 0;
}

/* Score of a match: per segment 2 for a literal, 1 for a parameter, 0 for the rest;
 * compared lexicographically so literals win. -1 when the route does not match. */
static int route_match(const struct route *r, char **segs, size_t nseg, int score[MAX_SEGMENTS])
{
	size_t i;

	/* most routes differ in length from the path: no segment compared (every request runs
	 * the whole table) */
	if (r->nseg != nseg && (r->nseg == 0 || !r->segs[r->nseg - 1].rest)) {
		return -1;
	}
	for (i = 0; i < r->nseg; i++) {
		const struct seg *g = &r->segs[i];
		if (g->rest) {
			if (i >= nseg) {
				return -1;
			}
			score[i] = 0;
			return 0;
		}
		if (i >= nseg) {
			return -1;
		}
		if (g->lit != NULL) {
			if (g->lit[0] != segs[i][0] || strcmp(g->lit, segs[i]) != 0) {
				return -1;
			}
			score[i] = 2;
		} else {
			/* an encoded '/' ("%2F") names nothing: no name may hold one */
			if (segs[i][0] == '\0' || strchr(segs[i], '/') != NULL) {
				return -1;
			}
			score[i] = 1;
		}
	}
	return i == nseg ? 0 : -1;
}

static bool score_better(const int *a, size_t na, const int *b, size_t nb)
{
	for (size_t i = 0; i < na && i < nb; i++) {
		if (a[i] != b[i]) {
			return a[i] > b[i];
		}
	}
	return na > nb;
}

/* Join segs[from..] with '/' for a rest parameter. */
static char *join_rest(char **segs, size_t from, size_t nseg)
{
	size_t len = 0;
	char *out, *p;

	for (size_t i = from; i < nseg; i++) {
		len += strlen(segs[i]) + 1;
	}
	out = malloc(len + 1);
	if (out == NULL) {
		return NULL;
	}
	p = out;
	for (size_t i = from; i < nseg; i++) {
		size_t l = strlen(segs[i]);
		if (i > from) {
			*p++ = '/';
		}
		memcpy(p, segs[i], l);
		p += l;
	}
	*p = '\0';
	return out;
}

static int bind_params(rz_req_t *req, const struct route *r, char **segs, size_t nseg)
{
	for (size_t i = 0; i < r->nseg; i++) {
		const struct seg *g = &r->segs[i];
		char *value;
		int rc;
		if (g->lit != NULL) {
			continue;
		}
		value = g->rest ? join_rest(segs, i, nseg) : strdup(segs[i]);
		if (value == NULL) {
			return -ENOMEM;
		}
		rc = rz__kv_add(&req->params, g->name, strlen(g->name), value, strlen(value));
		free(value);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

/* Path segments, percent-decoded one by one so "%2F" stays inside its segment (where a
 * parameter refuses it and a rest parameter keeps it). */
static int split_path(const rz_req_t *req, char **segs, size_t *nseg)
{
	const char *q = memchr(req->url, '?', req->url_len);
	const char *p = req->url + 1;
	const char *end = q ? q : req->url + req->url_len;

	*nseg = 0;
	if (p >= end) {
		return 0;
	}
	while (p <= end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *stop = slash ? slash : end;
		if (*nseg == MAX_SEGMENTS) {
			return -E2BIG;
		}
		segs[*nseg] = rz__pct_decode(p, (size_t)(stop - p), false);
		if (segs[*nseg] == NULL) {
			return -EINVAL;
		}
		(*nseg)++;
		p = stop + 1;
		if (slash == NULL) {
			break;
		}
	}
	return 0;
}

/* The segment of a path of nseg segments the index keys on. */
static size_t key_seg(size_t nseg)
{
	return nseg > 2 ? 2 : nseg - 1;
}

static size_t text_hash(const char *s)
{
	size_t h = 5381;

	while (*s != '\0') {
		h = h * 33 + (unsigned char)*s++;
	}
	return h % ROUTE_HASHES;
}

/* The bucket of a path of nseg segments whose key segment is lit (NULL: a parameter). */
static size_t bucket_of(size_t nseg, const char *lit)
{
	if (nseg == 0) {
		return 0;
	}
	return nseg * (ROUTE_HASHES + 1) + (lit != NULL ? text_hash(lit) : ROUTE_HASHES);
}

static size_t route_bucket(const struct route *r)
{
	if (r->nseg > 0 && r->segs[r->nseg - 1].rest) {
		return ROUTE_BUCKETS - 1;
	}
	return bucket_of(r->nseg, r->nseg > 0 ? r->segs[key_seg(r->nseg)].lit : NULL);
}

/* Index the routes (h->by_bucket); false when memory is short (then every route is
 * compared, as without the index). */
static bool index_routes(rz_http_t *h)
{
	size_t *by = realloc(h->by_bucket, (h->nroutes + 1) * sizeof(*by));
	size_t *fill = calloc(ROUTE_BUCKETS, sizeof(*fill));

	if (by == NULL || fill == NULL) {
		free(fill);
		h->by_bucket = by;
		return false;
	}
	h->by_bucket = by;
	memset(h->bucket_start, 0, sizeof(h->bucket_start));
	for (size_t i = 0; i < h->nroutes; i++) {
		h->bucket_start[route_bucket(&h->routes[i]) + 1]++;
	}
	for (size_t b = 1; b <= ROUTE_BUCKETS; b++) {
		h->bucket_start[b] += h->bucket_start[b - 1];
	}
	for (size_t i = 0; i < h->nroutes; i++) {
		size_t b = route_bucket(&h->routes[i]);
		by[h->bucket_start[b] + fill[b]++] = i;
	}
	free(fill);
	h->indexed = h->nroutes;
	return true;
}

static const struct route *find_route(rz_http_t *h, rz_req_t *req, char **segs, size_t nseg,
                                      unsigned *allow)
{
	const struct route *best = NULL;
	int best_score[MAX_SEGMENTS] = { 0 };
	int score[MAX_SEGMENTS];
	unsigned bit = req->mbit;
	bool all = h->indexed != h->nroutes && !index_routes(h);
	/* the candidates: the routes whose key segment is the path's, those with a parameter
	 * there, the rest routes; taken in table order (the first of equal matches wins) */
	size_t at[3] = { 0, 0, 0 }, end[3] = { 0, 0, 0 };

	if (all) {
		end[0] = h->nroutes;
	} else {
		size_t b[3] = { bucket_of(nseg, nseg > 0 ? segs[key_seg(nseg)] : NULL),
			        nseg > 0 ? bucket_of(nseg, NULL) : ROUTE_BUCKETS,
			        ROUTE_BUCKETS - 1 };
		for (int k = 0; k < 3; k++) {
			at[k] = b[k] < ROUTE_BUCKETS ? h->bucket_start[b[k]] : 0;
			end[k] = b[k] < ROUTE_BUCKETS ? h->bucket_start[b[k] + 1] : 0;
		}
	}
	*allow = 0;
	for (;;) {
		const struct route *r;
		size_t i = SIZE_MAX;
		int from = -1;
		unsigned m;
		for (int k = 0; k < 3; k++) {
			size_t j = at[k] < end[k] ? (all ? at[k] : h->by_bucket[at[k]]) : SIZE_MAX;
			if (j < i) {
				i = j;
				from = k;
			}
		}
		if (from < 0) {
			break;
		}
		at[from]++;
		r = &h->routes[i];
		m = r->def->methods;
		if (route_match(r, segs, nseg, score) < 0) {
			continue;
		}
		if (m & RZ_M_GET) {
			m |= RZ_M_HEAD;
		}
		*allow |= m;
		if ((m & bit) == 0) {
			continue;
		}
		if (best == NULL || score_better(score, r->nseg, best_score, best->nseg)) {
			best = r;
			memcpy(best_score, score, sizeof(score));
		}
	}
	return best;
}

/* The original RezusCloud's routes, and where they are here (docs/migration.md): a 404 for
 * one says so. NULL for any other path. */
static const char *moved_route(const char *path)
{
	static const struct {
		const char *prefix, *here;
	} moved[] = {
		{ "/health", "the daemon's health is /healthz, its readiness /readyz" },
		{ "/api/v1/node-groups", "node groups are /api/v1/tenants/{tenant}/nodegroups" },
		{ "/node-groups", "node groups are /api/v1/tenants/{tenant}/nodegroups" },
		{ "/api/v1/patches", "config patches are /api/v1/tenants/{tenant}/configpatches" },
		{ "/patches", "config patches are /api/v1/tenants/{tenant}/configpatches" },
		{ "/api/v1/clusters", "clusters are Tenants: /api/v1/tenants" },
	};

	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		size_t n = strlen(moved[i].prefix);
		if (strncmp(path, moved[i].prefix, n) == 0 && (path[n] == '\0' || path[n] == '/')) {
			return moved[i].here;
		}
	}
	return NULL;
}

static void allow_header(rz_req_t *req, unsigned allow)
{
	static const char *const names[] = { "GET",    "HEAD",    "POST", "PUT",   "PATCH",
		                             "DELETE", "OPTIONS", "LOCK", "UNLOCK" };
	char buf[128] = "";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (allow & (1u << i)) {
			if (buf[0] != '\0') {
				strcat(buf, ", ");
			}
			strcat(buf, names[i]);
		}
	}
	rz_req_add_header(req, "Allow", buf);
}

static void route_request(rz_http_t *h, rz_req_t *req)
{
	char *segs[MAX_SEGMENTS];
	size_t nseg = 0;
	unsigned allow;
	const struct route *r;
	int rc = split_path(req, segs, &nseg);

	if (rc < 0) {
		for (size_t i = 0; i < nseg; i++) {
			free(segs[i]);
		}
		rz_reply_error(req, rc == -E2BIG ? 404 : 400, NULL, "%s",
		               rc == -E2BIG ? "the server could not find the requested resource"
		                            : "malformed request path");
		return;
	}
	r = find_route(h, req, segs, nseg, &allow);
	if (r != NULL && bind_params(req, r, segs, nseg) < 0) {
		r = NULL;
		allow = 0;
		rz_reply_error(req, 500, NULL, "out of memory");
	} else if (r != NULL) {
		for (size_t i = 0; i < nseg; i++) {
			free(segs[i]);
		}
		req->route = r->def;
		if (h->guard == NULL || h->guard(h->guard_ctx, req, r->def)) {
			if (req->reject == 401) {
				/* the body was refused unread: no credentials for its size */
				rz_reply_error(
				    req, 413, NULL,
				    "request body exceeds the limit of %llu bytes for a "
				    "request without credentials",
				    (unsigned long long)h->opts.max_body_unauthenticated);
			} else {
				r->def->fn(req, r->ctx);
			}
		}
		return;
	} else if (allow != 0) {
		allow_header(req, allow);
		rz_reply_error(req, 405, NULL, "method %s is not allowed on %s", req->method,
		               req->path);
	} else if (h->fallback_take != NULL && h->fallback_take(req)) {
		req->route = h->fallback;
		if (h->guard == NULL || h->guard(h->guard_ctx, req, h->fallback)) {
			h->fallback->fn(req, h->fallback_ctx);
		}
	} else {
		const char *moved = moved_route(req->path);
		rz_reply_error(req, 404, NULL,
		               "the server could not find the requested resource%s%s",
		               moved != NULL ? ": " : "", moved != NULL ? moved : "");
	}
	for (size_t i = 0; i < nseg; i++) {
		free(segs[i]);
	}
}

/* Count req in flight and answer it, whether a connection's or an in-process one: the refusal
 * decided while it was read (but 401, which its route's guard answers), 400 for a malformed
 * target, or its route. */
void rz__req_handle(rz_http_t *h, rz_req_t *req)
{
	rz__flight_link(h, req);
	if (req->reject != 0 && req->reject != 401) {
		rz__reply_rejected(req);
	} else if (rz__parse_target(req) < 0) {
		req->reject = 400;
		rz__reply_rejected(req);
	} else {
		route_request(h, req);
	}
}

const rz_route_t *rz_http_route_at(const rz_http_t *h, size_t i)
{
	return i < h->nroutes ? h->routes[i].def : NULL;
}

const char *rz_http_route_pattern(const rz_http_t *h, size_t i)
{
	return i < h->nroutes ? h->routes[i].text : NULL;
}

size_t rz_http_route_count(const rz_http_t *h)
{
	return h->nroutes;
}
