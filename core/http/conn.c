/* core/http/http.c - HTTP/1.1 server on the libevent loop, parsed by http-parser. */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <http_parser.h>
#include <sodium.h>

#include "core/http/http.h"
#include "core/http/tls.h"
#include "core/base/log.h"

#define MAX_PARAMS        8
#define TRIM_CONNS        256 /* a peak of connections whose end trims the heap */
#define MAX_SEGMENTS      32
#define READ_HIGH_WATER   (256 * 1024)
#define REQUEST_ID_MAX    128
#define MAX_REQUEST_LINE  16384 /* method, target and version: more gets 414 */
#define MAX_HEADERS       100   /* header fields per request: more get 431 */
#define LINGER_MS         2000  /* reading and discarding after a closing reply, at most */
#define RECHECK_UNSENT_MS 100   /* a connection paused for its address's unsent replies */
#define LOG_WINDOW_MS     10000 /* the access log's sampling window per address */
#define PEER_BUCKETS      1024  /* hash buckets of the per-address counters */
#define REFUSE_LOG_GAP_MS 10000 /* refused connections are logged at most this often */
#define LISTEN_BACKLOG    1024  /* connections the kernel completes before we accept them */
#define MAX_WRITE                                                                                  \
	(256 * 1024) /* bytes handed to one writev(): libevent's 16 KiB                            \
	                default split every larger reply */

struct seg {
	const char *lit; /* literal text, or NULL for a parameter */
	char *name;      /* parameter name */
	bool rest;       /* "{name...}": the rest of the path */
};

struct route {
	const rz_route_t *def;
	struct seg segs[MAX_SEGMENTS];
	char *storage; /* the pattern split into segments */
	char *text;    /* the pattern served: the route's, or under an alias the alias's */
	size_t nseg;
};

struct kv {
	char *name;
	char *value;
};

struct kvlist {
	struct kv *items;
	size_t n, cap;
};

/* Open connections and buffered body bytes of one peer address; freed when both are 0. */
struct peer {
	char addr[INET6_ADDRSTRLEN];
	size_t conns;
	uint64_t body;
	uint64_t unsent;     /* reply bytes its connections' clients have not taken yet */
	int64_t log_since;   /* the access log's window for it began (monotonic ms) */
	unsigned log_lines;  /* request lines logged in it */
	uint64_t log_unsaid; /* ... and not logged, to be said in one line */
	struct peer *next;
};

struct conn;

struct rz_req {
	struct conn *conn;       /* NULL once the client has gone */
	rz_http_t *h;            /* NULL once the server is freed */
	rz_req_t *fprev, *fnext; /* h->flight: dispatched, not yet replied */
	char method[16];
	unsigned mbit;
	char *url;
	size_t url_len;
	char *path;
	struct kvlist query, params, in, out;
	bool in_value; /* header parsing: the last callback was a value */
	char *body;
	size_t body_len, body_cap;
	char id[REQUEST_ID_MAX + 1];
	char peer[INET6_ADDRSTRLEN];
	struct timespec start;
	bool keep_alive;
	int reject;              /* HTTP code to answer without dispatching (400, 408, 413, ...) */
	char reject_msg[160];    /* its message; "" for the default */
	int authn;               /* the authn hook's answer: 0 not asked, 1 yes, -1 no */
	uint64_t reserved;       /* body bytes counted against the buffer budgets */
	struct peer *pe;         /* whom they are counted against (NULL once the server is freed) */
	const rz_route_t *route; /* the matched route (borrowed from the table) */
	void *data;
	void (*data_free)(void *);
	char *error; /* message of the error Status replied */
	bool audited;
	bool streaming, chunked;
	bool live;      /* a watch or a log: no caching, no proxy buffering, not timed */
	bool head_only; /* a HEAD request: a streamed body is counted, not sent */
	int stream_code;
	size_t stream_bytes;
	void (*on_close)(rz_req_t *req, void *arg);
	void *on_close_arg;
	void (*on_drain)(rz_req_t *req, void *arg); /* once the backlog is at most drain_below */
	void *on_drain_arg;
	size_t drain_below;
	bool tls;           /* it came over TLS */
	struct inject *inj; /* an in-process request (rz_http_inject): its reply is captured */
};

/* What an in-process request's reply is captured into. */
struct inject {
	rz_inject_done_fn done;
	rz_inject_data_fn data; /* live streams: each piece as it comes; NULL = buffer it */
	void *arg;
	char *ctype;
	char *body;
	size_t len, cap, max;
	bool truncated, canceled;
};

struct conn {
	rz_http_t *h;
	struct bufferevent *bev; /* NULL while a TLS port waits for the client's first byte */
	evutil_socket_t fd;
	struct event *peek; /* that wait (TLS ports only) */
	struct event *resume;
	http_parser parser;
	rz_req_t *req; /* being parsed, or being handled */
	bool handling; /* req dispatched, reply pending */
	bool closing;  /* close once the output drains */
	bool dead;     /* cut off: free at the next turn of the loop */
	bool in_process;
	bool out_paused; /* no request read while its unsent replies are over the bounds */
	size_t unsent;   /* reply bytes queued and not yet taken by the client */
	bool tls;        /* served over TLS */
	char peer[INET6_ADDRSTRLEN];
	struct peer *pe;        /* this address's counters */
	struct event *deadline; /* the header, body or linger deadline */
	enum { P_IDLE, P_HANDSHAKE, P_HEAD, P_BODY, P_BUSY, P_LINGER } phase;
	bool line_ok; /* the current request's request line was checked */
	struct conn *prev, *next;
};

struct rz_http {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *resume_accept; /* accept() failed: listen again after a pause */
	int64_t accept_logged_ms;    /* when the last accept failure was logged */
	uint64_t accept_failures;    /* since then */
	rz_http_opts_t opts;
	struct route *routes;
	size_t nroutes;
	struct alias {
		char *prefix, *alias;
	} aliases[RZ_HTTP_ALIASES_MAX];
	size_t naliases;
	struct conn *conns;
	rz_req_t *flight;
	size_t in_flight;
	bool draining;
	int port;
	rz_tls_t *tls; /* NULL: plain HTTP */
	rz_http_observer_fn observer;
	void *observer_ctx;
	rz_http_guard_fn guard;
	void *guard_ctx;
	rz_http_authn_fn authn;
	void *authn_ctx;
	struct peer *peers[PEER_BUCKETS];
	size_t nconns;       /* open connections */
	size_t peak_conns;   /* the most open since the last trim */
	uint64_t body_bytes; /* request body bytes buffered, in all */
	uint64_t refused;    /* connections refused since the last log line */
	int64_t refuse_logged_ms;
};

static http_parser_settings parser_settings;

/* ------------------------------------------------------------------ small helpers */

static int kv_add(struct kvlist *l, const char *name, size_t nlen, const char *value, size_t vlen)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct kv *items = realloc(l->items, cap * sizeof(*items));
		if (items == NULL) {
			return -ENOMEM;
		}
		l->items = items;
		l->cap = cap;
	}
	l->items[l->n].name = strndup(name, nlen);
	l->items[l->n].value = strndup(value, vlen);
	if (l->items[l->n].name == NULL || l->items[l->n].value == NULL) {
		free(l->items[l->n].name);
		free(l->items[l->n].value);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

static void kv_free(struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].name);
		free(l->items[i].value);
	}
	free(l->items);
	memset(l, 0, sizeof(*l));
}

static const char *kv_get(const struct kvlist *l, const char *name, bool nocase)
{
	for (size_t i = 0; i < l->n; i++) {
		int c =
		    nocase ? strcasecmp(l->items[i].name, name) : strcmp(l->items[i].name, name);
		if (c == 0) {
			return l->items[i].value;
		}
	}
	return NULL;
}

/* Append to the last item's name or value (headers arrive in pieces). */
static int kv_append(char **dst, const char *at, size_t len)
{
	size_t old = *dst ? strlen(*dst) : 0;
	char *p = realloc(*dst, old + len + 1);
	if (p == NULL) {
		return -ENOMEM;
	}
	memcpy(p + old, at, len);
	p[old + len] = '\0';
	*dst = p;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	c = tolower(c);
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	return -1;
}

/* Percent-decode src[0..len) into a new string; plus_space for query strings.
 * NULL for invalid escapes, an encoded NUL, or OOM. */
static char *pct_decode(const char *src, size_t len, bool plus_space)
{
	char *out = malloc(len + 1);
	size_t n = 0;

	if (out == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '%') {
			int hi = i + 2 < len ? hexval(src[i + 1]) : -1;
			int lo = i + 2 < len ? hexval(src[i + 2]) : -1;
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				return NULL;
			}
			out[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (plus_space && src[i] == '+') {
			out[n++] = ' ';
		} else {
			out[n++] = src[i];
		}
	}
	out[n] = '\0';
	return out;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ per-address counters */

static size_t peer_hash(const char *addr)
{
	size_t v = 5381;

	for (; *addr != '\0'; addr++) {
		v = v * 33 + (unsigned char)*addr;
	}
	return v % PEER_BUCKETS;
}

/* The counters of addr, created when absent. NULL on OOM. */
static struct peer *peer_get(rz_http_t *h, const char *addr)
{
	struct peer **slot = &h->peers[peer_hash(addr)];
	struct peer *pe;

	for (pe = *slot; pe != NULL; pe = pe->next) {
		if (strcmp(pe->addr, addr) == 0) {
			return pe;
		}
	}
	pe = calloc(1, sizeof(*pe));
	if (pe == NULL) {
		return NULL;
	}
	snprintf(pe->addr, sizeof(pe->addr), "%s", addr);
	pe->next = *slot;
	*slot = pe;
	return pe;
}

/* The requests of pe the access log did not show, in one line. */
static void log_unsaid(struct peer *pe)
{
	char n[24];

	if (pe->log_unsaid == 0) {
		return;
	}
	snprintf(n, sizeof(n), "%" PRIu64, pe->log_unsaid);
	rz_logkv(RZ_LOG_INFO, "http", "requests not logged one by one", "peer", pe->addr, "more", n,
	         NULL);
	pe->log_unsaid = 0;
}

static void peer_put(rz_http_t *h, struct peer *pe)
{
	if (pe->conns > 0 || pe->body > 0 || pe->unsent > 0) {
		return;
	}
	log_unsaid(pe);
	for (struct peer **pp = &h->peers[peer_hash(pe->addr)]; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == pe) {
			*pp = pe->next;
			free(pe);
			return;
		}
	}
}

/* Count n more body bytes of req against max_body_buffer and max_body_buffer_per_address:
 * false, and nothing counted, when either would be exceeded. */
static bool body_reserve(rz_req_t *req, uint64_t n)
{
	rz_http_t *h = req->h;
	struct peer *pe = req->pe;

	if (h == NULL || pe == NULL) {
		return true;
	}
	if (h->body_bytes + n > h->opts.max_body_buffer ||
	    pe->body + n > h->opts.max_body_buffer_per_address) {
		return false;
	}
	h->body_bytes += n;
	pe->body += n;
	req->reserved += n;
	return true;
}

static void body_release(rz_req_t *req)
{
	if (req->h != NULL && req->pe != NULL && req->reserved > 0) {
		req->h->body_bytes -= req->reserved;
		req->pe->body -= req->reserved;
		peer_put(req->h, req->pe);
	}
	req->reserved = 0;
}

/* ------------------------------------------------------------------ routes */

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
static int route_add(rz_http_t *h, const rz_route_t *def, rz_err_t *err)
{
	char *alias = alias_of(h, def->pattern);
	int rc = route_compile(&h->routes[h->nroutes], def, def->pattern, err);

	if (rc < 0) {
		free(h->routes[h->nroutes].storage);
		free(h->routes[h->nroutes].text);
		free(alias);
		return rc;
	}
	h->nroutes++;
	if (alias != NULL) {
		rc = route_compile(&h->routes[h->nroutes], def, alias, err);
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

int rz_http_add_routes(rz_http_t *h, const rz_route_t *routes, size_t n, rz_err_t *err)
{
	struct route *grown = realloc(h->routes, (h->nroutes + 2 * n) * sizeof(*grown));

	if (grown == NULL) {
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	h->routes = grown;
	for (size_t i = 0; i < n; i++) {
		int rc = route_add(h, &routes[i], err);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
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
			if (strcmp(g->lit, segs[i]) != 0) {
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
		rc = kv_add(&req->params, g->name, strlen(g->name), value, strlen(value));
		free(value);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ requests */

static void req_free(rz_req_t *req)
{
	if (req == NULL) {
		return;
	}
	free(req->url);
	free(req->path);
	kv_free(&req->query);
	kv_free(&req->params);
	kv_free(&req->in);
	kv_free(&req->out);
	free(req->body);
	body_release(req);
	if (req->data_free != NULL) {
		req->data_free(req->data);
	}
	free(req->error);
	if (req->inj != NULL) {
		free(req->inj->ctype);
		free(req->inj->body);
		free(req->inj);
	}
	free(req);
}

static rz_req_t *req_new(struct conn *c)
{
	rz_req_t *req = calloc(1, sizeof(*req));

	if (req == NULL) {
		return NULL;
	}
	req->conn = c;
	req->h = c->h;
	req->pe = c->pe;
	req->tls = c->tls;
	snprintf(req->peer, sizeof(req->peer), "%s", c->peer);
	clock_gettime(CLOCK_MONOTONIC, &req->start);
	return req;
}

const char *rz_req_method(const rz_req_t *req)
{
	return req->method;
}

unsigned rz_req_method_bit(const rz_req_t *req)
{
	return req->mbit;
}

const char *rz_req_path(const rz_req_t *req)
{
	return req->path;
}

const char *rz_req_param(const rz_req_t *req, const char *name)
{
	return kv_get(&req->params, name, false);
}

const char *rz_req_query(const rz_req_t *req, const char *name)
{
	return kv_get(&req->query, name, false);
}

bool rz_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

	for (size_t i = 0; s != NULL && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
			*out = strcmp(s, yes[i]) == 0;
			return true;
		}
	}
	return false;
}

bool rz_parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	/* digits after a minus at most: strtoll alone would take spaces and a plus sign */
	const char *digits = s != NULL && s[0] == '-' ? s + 1 : s;
	char *end;
	long long v;

	if (digits == NULL || *digits < '0' || *digits > '9') {
		return false;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || errno != 0 || v < min || v > max) {
		return false;
	}
	*out = v;
	return true;
}

const char *rz_req_header(const rz_req_t *req, const char *name)
{
	return kv_get(&req->in, name, true);
}

const char *rz_req_body(const rz_req_t *req, size_t *len)
{
	if (len != NULL) {
		*len = req->body_len;
	}
	return req->body != NULL ? req->body : "";
}

const char *rz_req_id(const rz_req_t *req)
{
	return req->id;
}

const char *rz_req_peer(const rz_req_t *req)
{
	return req->peer;
}

const rz_route_t *rz_req_route(const rz_req_t *req)
{
	return req->route;
}

void rz_req_set_data(rz_req_t *req, void *data, void (*free_fn)(void *))
{
	if (req->data_free != NULL) {
		req->data_free(req->data);
	}
	req->data = data;
	req->data_free = free_fn;
}

void *rz_req_data(const rz_req_t *req)
{
	return req->data;
}

const char *rz_req_error(const rz_req_t *req)
{
	return req->error ? req->error : "";
}

void rz_req_set_audited(rz_req_t *req)
{
	req->audited = true;
}

bool rz_req_audited(const rz_req_t *req)
{
	return req->audited;
}

static bool header_token_ok(const char *s, bool value)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '\r' || ch == '\n' || (!value && (ch <= ' ' || ch == ':'))) {
			return false;
		}
	}
	return true;
}

int rz_req_add_header(rz_req_t *req, const char *name, const char *value)
{
	if (!header_token_ok(name, false) || !header_token_ok(value, true) || name[0] == '\0') {
		return -EINVAL;
	}
	return kv_add(&req->out, name, strlen(name), value, strlen(value));
}

static unsigned method_bit(const char *m)
{
	static const struct {
		const char *name;
		unsigned bit;
	} methods[] = {
		{ "GET", RZ_M_GET },         { "HEAD", RZ_M_HEAD },   { "POST", RZ_M_POST },
		{ "PUT", RZ_M_PUT },         { "PATCH", RZ_M_PATCH }, { "DELETE", RZ_M_DELETE },
		{ "OPTIONS", RZ_M_OPTIONS }, { "LOCK", RZ_M_LOCK },   { "UNLOCK", RZ_M_UNLOCK },
	};
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(methods[i].name, m) == 0) {
			return methods[i].bit;
		}
	}
	return 0;
}

static void request_id(rz_req_t *req)
{
	const char *given = rz_req_header(req, "X-Request-ID");
	unsigned char raw[16];

	if (given != NULL && given[0] != '\0' && strlen(given) <= REQUEST_ID_MAX &&
	    strspn(given,
	           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:/+=") ==
	        strlen(given)) {
		snprintf(req->id, sizeof(req->id), "%s", given);
		return;
	}
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(req->id, sizeof(req->id), raw, sizeof(raw));
}

/* A query parameter, decoded; -EINVAL (with req->reject_msg) when it is not valid UTF-8. */
static int add_query(rz_req_t *req, const char *p, size_t len)
{
	const char *eq = memchr(p, '=', len);
	size_t klen = eq ? (size_t)(eq - p) : len;
	char *k = pct_decode(p, klen, true);
	char *v = eq ? pct_decode(eq + 1, len - klen - 1, true) : strdup("");
	int rc = (k == NULL || v == NULL) ? -EINVAL : 0;

	if (rc == 0 && !rz_utf8_valid(k, strlen(k))) {
		snprintf(req->reject_msg, sizeof(req->reject_msg),
		         "a query parameter name is not valid UTF-8");
		rc = -EINVAL;
	} else if (rc == 0 && !rz_utf8_valid(v, strlen(v))) {
		snprintf(req->reject_msg, sizeof(req->reject_msg),
		         "query parameter '%.64s' is not valid UTF-8", k);
		rc = -EINVAL;
	}
	if (rc == 0 && klen > 0) {
		rc = kv_add(&req->query, k, strlen(k), v, strlen(v));
	}
	free(k);
	free(v);
	return rc;
}

/* Split req->url into the decoded path and query. -EINVAL for a bad target; invalid UTF-8
 * says so in req->reject_msg, and req->path (for the log) has it replaced. */
static int parse_target(rz_req_t *req)
{
	const char *q = req->url ? memchr(req->url, '?', req->url_len) : NULL;
	size_t plen = q ? (size_t)(q - req->url) : req->url_len;

	if (req->url_len == 0 || req->url[0] != '/') {
		return -EINVAL;
	}
	req->path = pct_decode(req->url, plen, false);
	if (req->path == NULL) {
		return -EINVAL;
	}
	if (!rz_utf8_valid(req->path, strlen(req->path))) {
		char *clean = rz_utf8_scrub(req->path);
		if (clean != NULL) {
			free(req->path);
			req->path = clean;
		}
		snprintf(req->reject_msg, sizeof(req->reject_msg),
		         "the request path is not valid UTF-8");
		return -EINVAL;
	}
	for (const char *p = q ? q + 1 : NULL; p != NULL && *p != '\0';) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int rc = add_query(req, p, len);
		if (rc < 0) {
			return rc;
		}
		p = end ? end + 1 : NULL;
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
		segs[*nseg] = pct_decode(p, (size_t)(stop - p), false);
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

/* ------------------------------------------------------------------ replies */

static void flight_unlink(rz_http_t *h, rz_req_t *req)
{
	if (req->fprev != NULL) {
		req->fprev->fnext = req->fnext;
	} else {
		h->flight = req->fnext;
	}
	if (req->fnext != NULL) {
		req->fnext->fprev = req->fprev;
	}
	h->in_flight--;
}

static void conn_resume(struct conn *c);
static void on_output_change(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg);
static void conn_close_after_output(struct conn *c);

bool rz_req_log_sample(rz_req_t *req)
{
	struct peer *pe = req->pe;
	int64_t t;

	/* pe lives while a connection of it does: a request whose client has gone (conn NULL)
	 * may outlive it, and is logged */
	if (pe == NULL || req->conn == NULL || req->h == NULL ||
	    req->h->opts.access_log_per_address <= 0) {
		return true;
	}
	t = mono_ms();
	if (t - pe->log_since >= LOG_WINDOW_MS) {
		log_unsaid(pe);
		pe->log_since = t;
		pe->log_lines = 0;
	}
	if (pe->log_lines >= (unsigned)req->h->opts.access_log_per_address) {
		pe->log_unsaid++;
		return false;
	}
	pe->log_lines++;
	return true;
}

static void access_log(rz_req_t *req, int code, size_t bytes)
{
	struct timespec now;
	char status[8], size[24], dur[32];
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (double)(now.tv_sec - req->start.tv_sec) * 1e3 +
	     (double)(now.tv_nsec - req->start.tv_nsec) / 1e6;
	if (req->h != NULL && req->h->observer != NULL) {
		req->h->observer(req->h->observer_ctx, req, req->route ? req->route->pattern : NULL,
		                 req->method, code, ms / 1e3, req->live);
	}
	if (!rz_log_enabled(RZ_LOG_INFO) || !rz_req_log_sample(req)) {
		return;
	}
	snprintf(status, sizeof(status), "%d", code);
	snprintf(size, sizeof(size), "%zu", bytes);
	snprintf(dur, sizeof(dur), "%.3f", ms);
	rz_logkv(RZ_LOG_INFO, "http", "request", "method", req->method, "path",
	         req->path ? req->path : "-", "status", status, "bytes", size, "dur_ms", dur,
	         "peer", req->peer, "request_id", req->id, NULL);
}

/* ------------------------------------------------------------------ in-process requests */

/* Append to the captured body, up to its cap: false (and truncated) beyond it. */
static bool inject_capture(rz_req_t *req, const char *ctype, const void *data, size_t len)
{
	struct inject *in = req->inj;

	if (ctype != NULL && in->ctype == NULL) {
		in->ctype = strdup(ctype);
	}
	if (len == 0) {
		return true;
	}
	if (in->len + len > in->max) {
		in->truncated = true;
		return false;
	}
	if (in->len + len + 1 > in->cap) {
		size_t cap = in->cap ? in->cap : 4096;
		char *p;
		while (cap < in->len + len + 1) {
			cap *= 2;
		}
		p = realloc(in->body, cap);
		if (p == NULL) {
			in->truncated = true;
			return false;
		}
		in->body = p;
		in->cap = cap;
	}
	memcpy(in->body + in->len, data, len);
	in->len += len;
	in->body[in->len] = '\0';
	return true;
}

/* Hand the captured reply to its caller (unless canceled) and free the request. */
static void inject_finish(rz_req_t *req, int code)
{
	struct inject *in = req->inj;
	rz_inject_reply_t r = { .code = code,
		                .content_type = in->ctype,
		                .body = in->body ? in->body : "",
		                .len = in->len,
		                .truncated = in->truncated,
		                .req = req };

	if (in->done != NULL && !in->canceled) {
		in->done(in->arg, &r);
	}
	req_free(req);
}

const char *rz_req_reply_header(const rz_req_t *req, const char *name)
{
	return kv_get(&req->out, name, true);
}

bool rz_req_tls(const rz_req_t *req)
{
	return req->tls;
}

/* The Date header's value, formatted once a second. */
static const char *http_date(void)
{
	static _Thread_local char date[64];
	static _Thread_local time_t at = (time_t)-1;
	time_t now = time(NULL);

	if (now != at) {
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		at = now;
	}
	return date;
}

static void add_str(struct evbuffer *out, const char *s)
{
	evbuffer_add(out, s, strlen(s));
}

/* "name: value\r\n" */
static void add_header(struct evbuffer *out, const char *name, const char *value)
{
	add_str(out, name);
	evbuffer_add(out, ": ", 2);
	add_str(out, value);
	evbuffer_add(out, "\r\n", 2);
}

/* The status line and headers, without printf: every reply writes them. */
static void write_head(struct evbuffer *out, const rz_req_t *req, int code, const char *ctype,
                       size_t len, bool close)
{
	const char *phrase = http_status_str((enum http_status)code);
	char num[24];

	snprintf(num, sizeof(num), "%d", code);
	evbuffer_add(out, "HTTP/1.1 ", 9);
	add_str(out, num);
	evbuffer_add(out, " ", 1);
	add_str(out, strcmp(phrase, "<unknown>") == 0 ? "Status" : phrase);
	evbuffer_add(out, "\r\n", 2);
	add_header(out, "Date", http_date());
	add_header(out, "Server", req->h->opts.server_name);
	add_header(out, "X-Request-ID", req->id);
	if (ctype != NULL) {
		add_header(out, "Content-Type", ctype);
		add_str(out, "X-Content-Type-Options: nosniff\r\n");
	}
	if (req->tls && req->h->opts.hsts_max_age_s > 0) {
		char hsts[48];
		snprintf(hsts, sizeof(hsts), "max-age=%" PRId64, req->h->opts.hsts_max_age_s);
		add_header(out, "Strict-Transport-Security", hsts);
	}
	if (len != SIZE_MAX) {
		char *p = num + sizeof(num);
		size_t v = len;

		*--p = '\0';
		do {
			*--p = (char)('0' + v % 10);
			v /= 10;
		} while (v > 0);
		add_header(out, "Content-Length", p);
	} else {
		if (req->live) {
			add_str(out, "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n");
		}
		if (req->chunked) {
			add_str(out, "Transfer-Encoding: chunked\r\n");
		}
	}
	if (close) {
		add_str(out, "Connection: close\r\n");
	} else if (req->conn->parser.http_minor == 0) {
		add_str(out, "Connection: keep-alive\r\n");
	}
	for (size_t i = 0; i < req->out.n; i++) {
		add_header(out, req->out.items[i].name, req->out.items[i].value);
	}
	evbuffer_add(out, "\r\n", 2);
}

void rz_reply(rz_req_t *req, int code, const char *ctype, const void *body, size_t len)
{
	struct conn *c = req->conn;
	rz_http_t *h = req->h;
	bool close;

	access_log(req, code, len);
	if (h != NULL) {
		flight_unlink(h, req);
	}
	if (req->inj != NULL) {
		inject_capture(req, ctype, body, len);
		inject_finish(req, code);
		return;
	}
	if (c == NULL) {
		req_free(req);
		return;
	}
	close = !req->keep_alive || h->draining || req->reject != 0;
	write_head(bufferevent_get_output(c->bev), req, code, ctype, len, close);
	if (len > 0 && strcmp(req->method, "HEAD") != 0 && code != 204 && code != 304) {
		evbuffer_add(bufferevent_get_output(c->bev), body, len);
	}
	req_free(req);
	c->req = NULL;
	c->handling = false;
	if (close) {
		c->closing = true;
		return;
	}
	conn_resume(c);
}

static int reply_begin(rz_req_t *req, int code, const char *ctype, bool live)
{
	struct conn *c = req->conn;

	req->streaming = true;
	req->live = live;
	req->stream_code = code;
	req->head_only = strcmp(req->method, "HEAD") == 0;
	if (req->inj != NULL) {
		inject_capture(req, ctype, NULL, 0);
		return req->inj->canceled ? -EPIPE : 0;
	}
	if (c == NULL) {
		return -EPIPE;
	}
	req->chunked = c->parser.http_minor >= 1;
	if (!req->chunked) {
		req->keep_alive = false;
	}
	write_head(bufferevent_get_output(c->bev), req, code, ctype, SIZE_MAX,
	           !req->keep_alive || req->h->draining);
	return 0;
}

int rz_reply_start(rz_req_t *req, int code, const char *ctype)
{
	return reply_begin(req, code, ctype, true);
}

int rz_reply_begin(rz_req_t *req, int code, const char *ctype)
{
	return reply_begin(req, code, ctype, false);
}

/* Cut a stream whose client does not read: drop what is queued, stop all I/O, and free
 * the connection at the next turn of the loop (never inside a caller's iteration). */
static void conn_cut(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	c->dead = true;
	if (c->req != NULL) {
		c->req->conn = NULL;
		c->req = NULL;
	}
	evbuffer_drain(out, evbuffer_get_length(out));
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	event_active(c->resume, EV_TIMEOUT, 0);
}

static int inject_write(rz_req_t *req, const void *data, size_t len)
{
	struct inject *in = req->inj;

	if (in->canceled) {
		return -EPIPE;
	}
	req->stream_bytes += len;
	if (len == 0 || req->head_only) {
		return 0;
	}
	if (in->data != NULL) {
		return in->data(in->arg, data, len) < 0 ? -EPIPE : 0;
	}
	return inject_capture(req, NULL, data, len) ? 0 : -ENOBUFS;
}

int rz_reply_write(rz_req_t *req, const void *data, size_t len)
{
	struct conn *c = req->conn;
	struct evbuffer *out;

	if (req->inj != NULL) {
		return inject_write(req, data, len);
	}
	if (c == NULL) {
		return -EPIPE;
	}
	out = bufferevent_get_output(c->bev);
	if (evbuffer_get_length(out) > req->h->opts.max_stream_backlog) {
		rz_logkv(RZ_LOG_WARNING, "http", "stream cut off: client is not reading", "path",
		         req->path, "peer", req->peer, "request_id", req->id, NULL);
		conn_cut(c);
		return -ENOBUFS;
	}
	req->stream_bytes += len;
	if (len == 0 || req->head_only) {
		return 0;
	}
	if (req->chunked) {
		evbuffer_add_printf(out, "%zx\r\n", len);
	}
	evbuffer_add(out, data, len);
	if (req->chunked) {
		evbuffer_add(out, "\r\n", 2);
	}
	return 0;
}

size_t rz_reply_backlog(const rz_req_t *req)
{
	return req->conn ? evbuffer_get_length(bufferevent_get_output(req->conn->bev)) : 0;
}

size_t rz_reply_backlog_cap(const rz_req_t *req)
{
	return req->h != NULL ? req->h->opts.max_stream_backlog : 0;
}

struct event_base *rz_req_base(const rz_req_t *req)
{
	return req->h != NULL ? req->h->base : NULL;
}

void rz_reply_end(rz_req_t *req)
{
	struct conn *c = req->conn;
	rz_http_t *h = req->h;
	bool close;

	access_log(req, req->stream_code, req->stream_bytes);
	if (h != NULL) {
		flight_unlink(h, req);
	}
	if (req->inj != NULL) {
		inject_finish(req, req->stream_code);
		return;
	}
	if (c == NULL) {
		req_free(req);
		return;
	}
	close = !req->keep_alive || h->draining;
	if (req->on_drain != NULL) {
		bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	}
	if (req->chunked && !req->head_only) {
		evbuffer_add(bufferevent_get_output(c->bev), "0\r\n\r\n", 5);
	}
	req_free(req);
	c->req = NULL;
	c->handling = false;
	if (close) {
		conn_close_after_output(c);
		return;
	}
	conn_resume(c);
}

void rz_reply_abort(rz_req_t *req)
{
	if (req->inj != NULL) {
		req->inj->truncated = true;
	}
	if (req->conn != NULL) {
		conn_cut(req->conn);
	}
	rz_reply_end(req);
}

void rz_reply_on_drain(rz_req_t *req, size_t below, void (*fn)(rz_req_t *req, void *arg), void *arg)
{
	req->on_drain = fn;
	req->on_drain_arg = arg;
	req->drain_below = below;
	if (req->conn != NULL) {
		bufferevent_setwatermark(req->conn->bev, EV_WRITE, below, 0);
	}
}

void rz_req_on_close(rz_req_t *req, void (*fn)(rz_req_t *req, void *arg), void *arg)
{
	req->on_close = fn;
	req->on_close_arg = arg;
}

void rz_reply_json(rz_req_t *req, int code, json_t *obj)
{
	const char *pretty = rz_req_query(req, "pretty");
	bool indent = false;

	if (pretty != NULL && !rz_parse_bool(pretty, &indent)) {
		indent = false; /* the handler names a bad value; the reply stays compact */
	}
	char *text = obj ? json_dumps(obj, indent ? JSON_INDENT(2) : JSON_COMPACT) : NULL;

	json_decref(obj);
	if (text == NULL) {
		static const char oom[] =
		    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		    "\"status\":\"Failure\",\"message\":\"out of memory\","
		    "\"reason\":\"InternalError\",\"code\":500}\n";
		rz_reply(req, 500, "application/json", oom, sizeof(oom) - 1);
		return;
	}
	{
		size_t len = strlen(text);
		char *withnl = realloc(text, len + 2);
		if (withnl != NULL) {
			text = withnl;
			text[len++] = '\n';
			text[len] = '\0';
		}
		rz_reply(req, code, "application/json", text, len);
	}
	free(text);
}

void rz_reply_json_text(rz_req_t *req, int code, const char *text)
{
	size_t len = strlen(text);
	char *withnl = malloc(len + 2);

	if (withnl == NULL) {
		rz_reply(req, code, "application/json", text, len);
		return;
	}
	memcpy(withnl, text, len);
	withnl[len] = '\n';
	withnl[len + 1] = '\0';
	rz_reply(req, code, "application/json", withnl, len + 1);
	free(withnl);
}

void rz_reply_status(rz_req_t *req, json_t *status)
{
	json_t *code = json_object_get(status, "code");
	const char *msg = json_string_value(json_object_get(status, "message"));

	if (msg != NULL && req->error == NULL && json_integer_value(code) >= 400) {
		req->error = strdup(msg);
	}

	rz_reply_json(req, code ? (int)json_integer_value(code) : 500, status);
}

void rz_reply_error(rz_req_t *req, int code, const char *reason, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rz_reply_status(req, rz_status_new(code, reason, msg));
}

/* ------------------------------------------------------------------ dispatch */

static const struct route *find_route(rz_http_t *h, rz_req_t *req, char **segs, size_t nseg,
                                      unsigned *allow)
{
	const struct route *best = NULL;
	int best_score[MAX_SEGMENTS] = { 0 };
	int score[MAX_SEGMENTS];
	unsigned bit = req->mbit;

	*allow = 0;
	for (size_t i = 0; i < h->nroutes; i++) {
		const struct route *r = &h->routes[i];
		unsigned m = r->def->methods;
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
				r->def->fn(req, r->def->ctx);
			}
		}
		return;
	} else if (allow != 0) {
		allow_header(req, allow);
		rz_reply_error(req, 405, NULL, "method %s is not allowed on %s", req->method,
		               req->path);
	} else {
		rz_reply_error(req, 404, NULL, "the server could not find the requested resource");
	}
	for (size_t i = 0; i < nseg; i++) {
		free(segs[i]);
	}
}

/* Answer a request refused before routing; the connection closes after the reply. */
static void reply_rejected(rz_req_t *req)
{
	rz_http_t *h = req->h;

	switch (req->reject) {
	case 413:
		rz_reply_error(req, 413, NULL, "request body exceeds the limit of %llu bytes",
		               (unsigned long long)h->opts.max_body);
		break;
	case 503:
		rz_req_add_header(req, "Retry-After", "1");
		rz_reply_error(req, 503, NULL,
		               "the server is receiving too many request bodies; retry later");
		break;
	default:
		rz_reply_error(req, req->reject, NULL, "%s",
		               req->reject_msg[0] ? req->reject_msg : "malformed request");
		break;
	}
}

static void dispatch(struct conn *c)
{
	rz_req_t *req = c->req;
	struct timeval wtv = { c->h->opts.idle_timeout_s, 0 };

	c->handling = true;
	c->phase = P_BUSY;
	c->line_ok = false;
	evtimer_del(c->deadline);
	req->fnext = c->h->flight;
	if (c->h->flight != NULL) {
		c->h->flight->fprev = req;
	}
	c->h->flight = req;
	c->h->in_flight++;
	bufferevent_set_timeouts(c->bev, NULL, &wtv);
	request_id(req);
	if (req->reject != 0 && req->reject != 401) {
		reply_rejected(req);
	} else if (parse_target(req) < 0) {
		req->reject = 400;
		reply_rejected(req);
	} else {
		route_request(c->h, req);
	}
}

/* ------------------------------------------------------------------ parser callbacks */

static int on_message_begin(http_parser *p)
{
	struct conn *c = p->data;

	req_free(c->req);
	c->req = req_new(c);
	return c->req == NULL ? -1 : 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;
	rz_req_t *req = c->req;

	if (kv_append(&req->url, at, len) < 0) {
		return -1;
	}
	req->url_len += len;
	return 0;
}

/* A token character (RFC 9110 §5.6.2): what method names and header field names are made of. */
static bool tchar(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static void set_reject(rz_req_t *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_reject(rz_req_t *req, int code, const char *fmt, ...)
{
	va_list ap;

	if (req->reject != 0) {
		return;
	}
	req->reject = code;
	va_start(ap, fmt);
	vsnprintf(req->reject_msg, sizeof(req->reject_msg), fmt, ap);
	va_end(ap);
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	rz_req_t *req = ((struct conn *)p->data)->req;

	for (size_t i = 0; i < len; i++) {
		if (!tchar((unsigned char)at[i])) {
			set_reject(req, 400, "malformed header field name");
			return -1;
		}
	}
	if (req->in_value || req->in.n == 0) {
		if (req->in.n == MAX_HEADERS) {
			set_reject(req, 431, "more than %d header fields", MAX_HEADERS);
			return -1;
		}
		if (kv_add(&req->in, "", 0, "", 0) < 0) {
			return -1;
		}
		req->in_value = false;
	}
	return kv_append(&req->in.items[req->in.n - 1].name, at, len) < 0 ? -1 : 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	rz_req_t *req = ((struct conn *)p->data)->req;

	req->in_value = true;
	if (req->in.n == 0) {
		return -1;
	}
	return kv_append(&req->in.items[req->in.n - 1].value, at, len) < 0 ? -1 : 0;
}

/* Whether req may send a body larger than max_body_unauthenticated: the authn hook says,
 * once per request. */
static bool authenticated(rz_req_t *req)
{
	rz_http_t *h = req->h;

	if (h->authn == NULL) {
		return true;
	}
	if (req->authn == 0) {
		req->authn = h->authn(h->authn_ctx, req) ? 1 : -1;
	}
	return req->authn > 0;
}

/* Room for need body bytes and a NUL, counted against the buffer budgets first (exactly
 * need when the length is known, else doubling). -1 with 503 when a budget is spent; -1
 * on OOM. */
static int body_grow(rz_req_t *req, uint64_t need, bool exact)
{
	uint64_t cap;
	char *b;

	if (need + 1 <= req->body_cap) {
		return 0;
	}
	cap = exact ? need + 1 : (req->body_cap ? req->body_cap : 1024);
	while (cap < need + 1) {
		cap *= 2;
	}
	if (cap > req->h->opts.max_body + 1) {
		cap = req->h->opts.max_body + 1;
	}
	if (!body_reserve(req, cap - req->body_cap)) {
		set_reject(req, 503, "too many request bodies at once");
		return -1;
	}
	b = realloc(req->body, (size_t)cap);
	if (b == NULL) {
		return -1;
	}
	req->body = b;
	req->body_cap = (size_t)cap;
	return 0;
}

static void arm(struct conn *c, int phase, int64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	c->phase = phase;
	evtimer_add(c->deadline, &tv);
}

/* Header values end up in logs, audit rows and JSON (a 415 quotes Content-Type): they must
 * be UTF-8. */
static int check_header_values(rz_req_t *req)
{
	for (size_t i = 0; i < req->in.n; i++) {
		const char *v = req->in.items[i].value;
		if (!rz_utf8_valid(v, strlen(v))) {
			set_reject(req, 400, "header '%.64s' is not valid UTF-8",
			           req->in.items[i].name);
			return -1;
		}
	}
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct conn *c = p->data;
	rz_req_t *req = c->req;
	const rz_http_opts_t *o = &c->h->opts;
	bool length = (p->flags & F_CONTENTLENGTH) != 0;
	const char *expect;

	snprintf(req->method, sizeof(req->method), "%s", http_method_str(p->method));
	req->mbit = method_bit(req->method);
	req->keep_alive = http_should_keep_alive(p) != 0;
	if (check_header_values(req) < 0) {
		return -1;
	}
	if (length && p->content_length > o->max_body) {
		req->reject = 413;
		return -1;
	}
	if (length && p->content_length > o->max_body_unauthenticated && !authenticated(req)) {
		req->reject = 401; /* routed without its body: the guard answers */
		return -1;
	}
	if (length && p->content_length > 0 && body_grow(req, p->content_length, true) < 0) {
		return -1;
	}
	if ((p->flags & F_CHUNKED) || (length && p->content_length > 0)) {
		arm(c, P_BODY, o->body_timeout_ms);
	}
	expect = rz_req_header(req, "Expect");
	if (expect != NULL && strcasecmp(expect, "100-continue") == 0 && p->http_minor >= 1) {
		evbuffer_add_printf(bufferevent_get_output(c->bev),
		                    "HTTP/1.1 100 Continue\r\n\r\n");
	}
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;
	rz_req_t *req = c->req;

	if (req->body_len + len > c->h->opts.max_body) {
		req->reject = 413;
		return -1;
	}
	if (req->body_len + len > c->h->opts.max_body_unauthenticated && !authenticated(req)) {
		req->reject = 401;
		return -1;
	}
	if (body_grow(req, req->body_len + len, false) < 0) {
		return -1;
	}
	memcpy(req->body + req->body_len, at, len);
	req->body_len += len;
	req->body[req->body_len] = '\0';
	return 0;
}

static int on_message_complete(http_parser *p)
{
	http_parser_pause(p, 1);
	return 0;
}

/* ------------------------------------------------------------------ connections */

static void conn_free(struct conn *c)
{
	rz_http_t *h = c->h;

	rz_req_t *orphan = NULL;

	if (c->req != NULL) {
		if (c->handling) {
			c->req->conn = NULL; /* the reply will free it */
			orphan = c->req;
		} else {
			req_free(c->req);
		}
	}
	if (c->prev != NULL) {
		c->prev->next = c->next;
	} else {
		h->conns = c->next;
	}
	if (c->next != NULL) {
		c->next->prev = c->prev;
	}
	h->nconns--;
	c->pe->conns--;
	c->pe->unsent -= c->unsent;
	c->unsent = 0;
	peer_put(h, c->pe);
	event_free(c->resume);
	event_free(c->deadline);
	if (c->peek != NULL) {
		event_free(c->peek);
	}
	if (c->bev != NULL) {
		evbuffer_remove_cb(bufferevent_get_output(c->bev), on_output_change, c);
		bufferevent_free(c->bev);
	} else {
		evutil_closesocket(c->fd);
	}
	free(c);
	if (orphan != NULL && orphan->on_close != NULL) {
		void (*fn)(rz_req_t *, void *) = orphan->on_close;
		orphan->on_close = NULL;
		fn(orphan, orphan->on_close_arg);
	}
	/* once most of a crowd of connections (1,000 watchers) has gone, give their buffers
	 * back: glibc keeps freed memory scattered through the heap */
	if (h->peak_conns >= TRIM_CONNS && h->nconns <= h->peak_conns / 4) {
		malloc_trim(0);
		h->peak_conns = h->nconns;
	}
}

/* Refuse the request being received with code and msg, and close after the reply. */
static void conn_reject(struct conn *c, int code, const char *msg)
{
	if (c->req == NULL) {
		c->req = req_new(c);
	}
	if (c->req == NULL) {
		c->closing = true;
		return;
	}
	set_reject(c->req, code, "%s", msg);
	if (c->req->method[0] == '\0') {
		snprintf(c->req->method, sizeof(c->req->method), "-");
	}
	c->req->keep_alive = false;
	dispatch(c);
}

/* "METHOD SP request-target SP HTTP/1.x" and nothing else: single spaces, a token for
 * the method, visible ASCII for the target (RFC 9112 §3). http-parser is more lenient. */
static bool request_line_ok(const char *s, size_t n)
{
	size_t i = 0, start;

	while (i < n && tchar((unsigned char)s[i])) {
		i++;
	}
	if (i == 0 || i >= n || s[i] != ' ') {
		return false;
	}
	start = ++i;
	while (i < n && (unsigned char)s[i] > ' ' && (unsigned char)s[i] < 0x7F) {
		i++;
	}
	if (i == start || i >= n || s[i] != ' ') {
		return false;
	}
	i++;
	return n - i == 8 &&
	       (memcmp(s + i, "HTTP/1.1", 8) == 0 || memcmp(s + i, "HTTP/1.0", 8) == 0);
}

/* Check the request line at the head of in, after the blank lines a client may send between
 * requests (dropped): 0 when it is whole and well formed, 1 when more bytes are needed,
 * else the code to refuse the request with (400, 414). */
static int check_request_line(struct evbuffer *in)
{
	struct evbuffer_ptr eol;
	size_t len;
	const char *line;

	for (;;) {
		const char *first = (const char *)evbuffer_pullup(in, 1);
		if (first == NULL) {
			return 1;
		}
		if (*first != '\r' && *first != '\n') {
			break;
		}
		evbuffer_drain(in, 1);
	}
	eol = evbuffer_search(in, "\n", 1, NULL);
	if (eol.pos < 0) {
		return evbuffer_get_length(in) > MAX_REQUEST_LINE + 1 ? 414 : 1;
	}
	len = (size_t)eol.pos;
	if (len > MAX_REQUEST_LINE + 1) {
		return 414;
	}
	line = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
	if (len > 0 && line[len - 1] == '\r') {
		len--;
	}
	if (len > MAX_REQUEST_LINE) {
		return 414;
	}
	return request_line_ok(line, len) ? 0 : 400;
}

/* The parser failed: say why. */
static void conn_parse_error(struct conn *c, enum http_errno e)
{
	char msg[96];

	if (e == HPE_HEADER_OVERFLOW) {
		snprintf(msg, sizeof(msg), "request headers exceed the limit of %zu bytes",
		         c->h->opts.max_header);
		conn_reject(c, 431, msg);
		return;
	}
	conn_reject(c, 400, "malformed request");
}

/* Replies its client does not take: the next request is not read while the connection's
 * unsent replies are over max_unsent, or while it has some and its address's are over
 * max_unsent_per_address (a client pipelining requests and reading no answer would grow
 * them without bound; a connection with nothing unsent is not held for its neighbours',
 * such as slow watches through one proxy); reading stops, so the kernel's buffers and TCP
 * push back. The connection's own drain resumes it (on_write), a drain elsewhere at the
 * next check (RECHECK_UNSENT_MS); the write timeout ends a client that never reads. True
 * while paused. */
static bool out_pause(struct conn *c)
{
	rz_http_t *h = c->h;
	bool over = c->unsent > h->opts.max_unsent ||
	            (c->unsent > 0 && c->pe->unsent > h->opts.max_unsent_per_address);
	struct timeval recheck = { 0, RECHECK_UNSENT_MS * 1000 };

	if (over) {
		if (!c->out_paused) {
			c->out_paused = true;
			bufferevent_disable(c->bev, EV_READ);
		}
		event_add(c->resume, &recheck);
	} else if (c->out_paused) {
		c->out_paused = false;
		bufferevent_enable(c->bev, EV_READ);
	}
	return over;
}

/* The output buffer's changes, counted against the connection and its address. */
static void on_output_change(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;

	(void)buf;
	c->unsent += info->n_added;
	c->unsent -= info->n_deleted;
	c->pe->unsent += info->n_added;
	c->pe->unsent -= info->n_deleted;
}

/* Feed buffered input to the parser until it needs more data, a request is being handled,
 * or the connection is closing. The first byte of a request starts its header deadline. */
static void conn_process(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	c->in_process = true;
	while (!c->handling && !c->closing) {
		size_t len = evbuffer_get_length(in);
		const char *data;
		size_t n;
		enum http_errno e;

		if (len == 0) {
			break;
		}
		if (c->phase == P_IDLE && out_pause(c)) {
			break;
		}
		if (c->phase == P_IDLE) {
			arm(c, P_HEAD, c->h->opts.header_timeout_ms);
		}
		if (!c->line_ok) {
			int rc = check_request_line(in);
			if (rc == 1) {
				break;
			}
			if (rc != 0) {
				conn_reject(c, rc,
				            rc == 414 ? "the request line exceeds the limit of "
				                        "16384 bytes"
				                      : "malformed request line");
				continue;
			}
			c->line_ok = true;
			len = evbuffer_get_length(in);
		}
		data = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
		n = http_parser_execute(&c->parser, &parser_settings, data, len);
		evbuffer_drain(in, n);
		e = HTTP_PARSER_ERRNO(&c->parser);
		if (e == HPE_PAUSED) {
			dispatch(c);
		} else if (e != HPE_OK) {
			conn_parse_error(c, e);
		} else if (n == len) {
			break;
		}
	}
	c->in_process = false;
	if (c->closing) {
		bufferevent_disable(c->bev, EV_READ);
	}
}

static void conn_resume(struct conn *c)
{
	struct timeval idle = { c->h->opts.idle_timeout_s, 0 };

	c->phase = P_IDLE;
	http_parser_pause(&c->parser, 0);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	if (!c->in_process) {
		event_active(c->resume, EV_TIMEOUT, 0);
	}
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	if (c->dead) {
		conn_free(c);
		return;
	}
	conn_process(c);
}

/* A deadline passed: the headers or the body did not arrive in time (408), or a lingering
 * close has lingered long enough. */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	char msg[96];

	if (c->dead) {
		return;
	}
	if (c->phase == P_LINGER || c->phase == P_HANDSHAKE) {
		conn_free(c); /* a TLS handshake not done in header_timeout has nothing to answer */
		return;
	}
	if ((c->phase != P_HEAD && c->phase != P_BODY) || c->handling || c->closing) {
		return;
	}
	snprintf(msg, sizeof(msg), "the request %s did not arrive within %lld ms",
	         c->phase == P_HEAD ? "headers" : "body",
	         (long long)(c->phase == P_HEAD ? c->h->opts.header_timeout_ms
	                                        : c->h->opts.body_timeout_ms));
	conn_reject(c, 408, msg);
	if (c->closing) {
		bufferevent_disable(c->bev, EV_READ);
	}
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->closing) {
		evbuffer_drain(bufferevent_get_input(bev),
		               evbuffer_get_length(bufferevent_get_input(bev)));
		return;
	}
	conn_process(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct timeval linger = { LINGER_MS / 1000, 0 };

	if (c->req != NULL && c->req->on_drain != NULL &&
	    evbuffer_get_length(bufferevent_get_output(bev)) <= c->req->drain_below) {
		void (*fn)(rz_req_t *, void *) = c->req->on_drain;
		c->req->on_drain = NULL;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		fn(c->req, c->req->on_drain_arg); /* may end the request: c is not used after */
		return;
	}

	if (c->out_paused && !c->closing && !c->dead && !out_pause(c)) {
		event_active(c->resume, EV_TIMEOUT, 0); /* read the requests waiting */
	}
	if (!c->closing || evbuffer_get_length(bufferevent_get_output(bev)) > 0 ||
	    c->phase == P_LINGER) {
		return;
	}
	/* Lingering close: stop sending, then read and discard until the peer closes, so an
	 * unread request body does not turn our close into a reset that eats the reply; for
	 * LINGER_MS at most, however fast the peer keeps sending. */
	shutdown(bufferevent_getfd(bev), SHUT_WR);
	bufferevent_set_timeouts(bev, &linger, NULL);
	bufferevent_enable(bev, EV_READ);
	arm(c, P_LINGER, LINGER_MS);
}

/* Close after the queued output is sent (at once when nothing is queued). */
static void conn_close_after_output(struct conn *c)
{
	c->closing = true;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		on_write(c->bev, c);
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	if (what == BEV_EVENT_CONNECTED) { /* a TLS handshake completed */
		if (c->phase == P_HANDSHAKE) {
			evtimer_del(c->deadline);
			c->phase = P_IDLE; /* the first request's byte starts its header deadline */
		}
		return;
	}
	conn_free(c);
}

/* Over a connection cap: answer 503 on the raw socket (it is new, its send buffer empty;
 * on a TLS port nothing) and close; say so at most every REFUSE_LOG_GAP_MS. */
static void refuse(rz_http_t *h, evutil_socket_t fd, const char *peer, const char *limit)
{
	char body[256], resp[512], discard[4096];
	int blen = snprintf(body, sizeof(body),
	                    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	                    "\"status\":\"Failure\",\"message\":\"too many connections (%s)\","
	                    "\"reason\":\"ServiceUnavailable\",\"code\":503}\n",
	                    limit);
	int len = snprintf(resp, sizeof(resp),
	                   "HTTP/1.1 503 Service Unavailable\r\nServer: %s\r\n"
	                   "Content-Type: application/json\r\nRetry-After: 1\r\n"
	                   "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
	                   h->opts.server_name, blen, body);
	int64_t now = mono_ms();

	/* what the client has sent already (a little), read so that the close does not reset */
	for (int i = 0; i < 4 && recv(fd, discard, sizeof(discard), MSG_DONTWAIT) > 0; i++) {
	}
	/* a TLS port's client would read clear text as garbage, and a handshake is what an
	 * overloaded server should not spend: it is closed without an answer */
	if (h->tls == NULL && len > 0 && (size_t)len < sizeof(resp)) {
		(void)!send(fd, resp, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	evutil_closesocket(fd);
	h->refused++;
	if (h->refuse_logged_ms == 0 || now - h->refuse_logged_ms >= REFUSE_LOG_GAP_MS) {
		char n[24];
		snprintf(n, sizeof(n), "%llu", (unsigned long long)h->refused);
		rz_logkv(RZ_LOG_WARNING, "http", "connection refused: too many connections",
		         "limit", limit, "peer", peer, "refused", n, NULL);
		h->refuse_logged_ms = now;
		h->refused = 0;
	}
}

/* Serve c over bev (NULL when out of memory: c is closed, and false returned). */
static bool conn_start(struct conn *c, struct bufferevent *bev)
{
	struct timeval idle = { c->h->opts.idle_timeout_s, 0 };

	if (bev == NULL) {
		conn_free(c);
		return false;
	}
	c->bev = bev;
	bufferevent_set_max_single_write(c->bev, MAX_WRITE);
	bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, READ_HIGH_WATER);
	evbuffer_add_cb(bufferevent_get_output(c->bev), on_output_change, c);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return true;
}

/* Plain HTTP on a TLS port: read what the client sent (a little, so that the close does not
 * reset), answer in clear text that it should speak TLS, and close. */
static void refuse_plain(struct conn *c)
{
	char discard[4096];
	size_t len;
	const char *resp = rz_tls_plain_refusal(&len);

	for (int i = 0; i < 4 && recv(c->fd, discard, sizeof(discard), MSG_DONTWAIT) > 0; i++) {
	}
	(void)!send(c->fd, resp, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(c->fd, SHUT_WR);
	rz_logkv(RZ_LOG_INFO, "http", "plain HTTP request on the TLS port refused", "peer", c->peer,
	         NULL);
	conn_free(c);
}

/* A TLS port's connection sent its first byte (or did not within the header timeout):
 * a TLS handshake goes on to OpenSSL, plain HTTP gets its refusal, anything else a close. */
static void on_peek(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	unsigned char first[1];
	ssize_t n;
	struct timeval tv = { c->h->opts.header_timeout_ms / 1000,
		              (c->h->opts.header_timeout_ms % 1000) * 1000 };

	if (what & EV_TIMEOUT) {
		conn_free(c);
		return;
	}
	n = recv(fd, first, sizeof(first), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		event_add(c->peek, &tv);
		return;
	}
	switch (rz_tls_classify(first, n > 0 ? (size_t)n : 0)) {
	case RZ_TLS_HELLO_TLS:
		event_free(c->peek);
		c->peek = NULL;
		c->tls = true;
		if (conn_start(c, rz_tls_accept(c->h->tls, c->h->base, c->fd))) {
			arm(c, P_HANDSHAKE,
			    c->h->opts.header_timeout_ms); /* the handshake's bound */
		}
		return;
	case RZ_TLS_HELLO_HTTP:
		refuse_plain(c);
		return;
	default: /* closed (0), failed, or not a protocol we speak */
		conn_free(c);
		return;
	}
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
	rz_http_t *h = arg;
	struct conn *c;
	char peer[INET6_ADDRSTRLEN] = "";
	struct peer *pe;

	if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, peer, sizeof(peer));
	} else if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, peer, sizeof(peer));
	}
	pe = peer_get(h, peer);
	if (pe == NULL) {
		evutil_closesocket(fd);
		return;
	}
	if (h->nconns >= h->opts.max_connections ||
	    pe->conns >= h->opts.max_connections_per_address) {
		refuse(h, fd, peer,
		       h->nconns >= h->opts.max_connections ? "server.max_connections"
		                                            : "server.max_connections_per_address");
		peer_put(h, pe);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		evutil_closesocket(fd);
		peer_put(h, pe);
		return;
	}
	c->h = h;
	c->fd = fd;
	c->resume = event_new(h->base, -1, 0, on_resume, c);
	c->deadline = evtimer_new(h->base, on_deadline, c);
	if (c->resume == NULL || c->deadline == NULL) {
		event_free(c->resume);
		event_free(c->deadline);
		evutil_closesocket(fd);
		free(c);
		peer_put(h, pe);
		return;
	}
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->pe = pe;
	pe->conns++;
	h->nconns++;
	h->peak_conns = h->nconns > h->peak_conns ? h->nconns : h->peak_conns;
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->next = h->conns;
	if (h->conns != NULL) {
		h->conns->prev = c;
	}
	h->conns = c;
	/* a reply's pieces go out at once, not after the client's delayed ACK of the first;
	 * not a TCP socket (rz_http_serve_fd's socketpair): nothing to set */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	if (h->tls != NULL) {
		struct timeval tv = { h->opts.header_timeout_ms / 1000,
			              (h->opts.header_timeout_ms % 1000) * 1000 };
		c->peek = event_new(h->base, fd, EV_READ, on_peek, c);
		if (c->peek == NULL || event_add(c->peek, &tv) < 0) {
			conn_free(c);
		}
		return;
	}
	conn_start(c, bufferevent_socket_new(h->base, fd, BEV_OPT_CLOSE_ON_FREE));
}

/* ------------------------------------------------------------------ the server */

#define ACCEPT_PAUSE_MS   250   /* not accepting after accept() failed (no descriptor left) */
#define ACCEPT_LOG_GAP_MS 10000 /* accept failures are logged at most this often */

static void on_resume_accept(evutil_socket_t fd, short what, void *arg)
{
	rz_http_t *h = arg;

	if (h->listener != NULL && !h->draining) {
		evconnlistener_enable(h->listener);
	}
}

/* accept() failed for a reason a retry at once cannot cure — no descriptor left (EMFILE,
 * ENFILE), no memory: the socket stays readable, so retrying at once spins the loop and
 * floods the log. Stop accepting for a moment, and say so at most every ten seconds. */
static void on_accept_error(struct evconnlistener *l, void *arg)
{
	rz_http_t *h = arg;
	int e = EVUTIL_SOCKET_ERROR();
	struct timeval pause = { 0, ACCEPT_PAUSE_MS * 1000 };
	int64_t now = mono_ms();

	h->accept_failures++;
	if (h->accept_logged_ms == 0 || now - h->accept_logged_ms >= ACCEPT_LOG_GAP_MS) {
		char n[24];
		snprintf(n, sizeof(n), "%llu", (unsigned long long)h->accept_failures);
		rz_logkv(RZ_LOG_WARNING, "http",
		         "accept failed: not accepting connections for a moment", "error",
		         evutil_socket_error_to_string(e), "failures", n, "pause_ms", "250", NULL);
		h->accept_logged_ms = now;
		h->accept_failures = 0;
	}
	evconnlistener_disable(l);
	if (h->resume_accept == NULL) {
		h->resume_accept = evtimer_new(h->base, on_resume_accept, h);
	}
	if (h->resume_accept != NULL) {
		evtimer_add(h->resume_accept, &pause);
	} else {
		evconnlistener_enable(l); /* no timer: better busy than deaf */
	}
}

int rz_http_new(rz_http_t **out, struct event_base *base, const rz_http_opts_t *opts, rz_err_t *err)
{
	rz_http_t *h;

	*out = NULL;
	if (sodium_init() < 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "http: libsodium failed to initialise");
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	if (opts != NULL) {
		h->opts = *opts;
	}
	if (h->opts.max_body == 0) {
		h->opts.max_body = 16u << 20;
	}
	if (h->opts.max_header == 0) {
		h->opts.max_header = 64u << 10;
	}
	if (h->opts.idle_timeout_s <= 0) {
		h->opts.idle_timeout_s = 60;
	}
	if (h->opts.server_name == NULL) {
		h->opts.server_name = "rezuscloud";
	}
	if (h->opts.max_stream_backlog == 0) {
		h->opts.max_stream_backlog = 4u << 20;
	}
	if (h->opts.max_connections == 0) {
		h->opts.max_connections = 4096;
	}
	if (h->opts.max_connections_per_address == 0) {
		h->opts.max_connections_per_address = 256;
	}
	if (h->opts.header_timeout_ms <= 0) {
		h->opts.header_timeout_ms = 10000;
	}
	if (h->opts.body_timeout_ms <= 0) {
		h->opts.body_timeout_ms = 60000;
	}
	if (h->opts.max_body_unauthenticated == 0) {
		h->opts.max_body_unauthenticated = 64u << 10;
	}
	if (h->opts.max_body_buffer == 0) {
		h->opts.max_body_buffer = 256u << 20;
	}
	if (h->opts.max_body_buffer_per_address == 0) {
		h->opts.max_body_buffer_per_address = 64u << 20;
	}
	if (h->opts.max_unsent == 0) {
		h->opts.max_unsent = 1u << 20;
	}
	if (h->opts.max_unsent_per_address == 0) {
		h->opts.max_unsent_per_address = 16u << 20;
	}
	http_parser_set_max_header_size((uint32_t)h->opts.max_header);
	parser_settings.on_message_begin = on_message_begin;
	parser_settings.on_url = on_url;
	parser_settings.on_header_field = on_header_field;
	parser_settings.on_header_value = on_header_value;
	parser_settings.on_headers_complete = on_headers_complete;
	parser_settings.on_body = on_body;
	parser_settings.on_message_complete = on_message_complete;
	h->base = base;
	h->port = -1;
	*out = h;
	return 0;
}

/* Split "host:port" / "[v6]:port" into a sockaddr. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, int *sslen)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	const char *h = addr;
	size_t hlen;
	char *end;
	long port;

	if (colon == NULL) {
		return -EINVAL;
	}
	hlen = (size_t)(colon - addr);
	if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') {
		h = addr + 1;
		hlen -= 2;
	}
	if (hlen == 0 || hlen >= sizeof(host)) {
		return -EINVAL;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 0 || port > 65535) {
		return -EINVAL;
	}
	if (strcmp(host, "localhost") == 0) {
		snprintf(host, sizeof(host), "127.0.0.1");
	}
	memset(ss, 0, sizeof(*ss));
	*sslen = sizeof(*ss);
	if (evutil_parse_sockaddr_port(host, (struct sockaddr *)ss, sslen) < 0) {
		return -EINVAL;
	}
	if (ss->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	} else {
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	}
	return 0;
}

int rz_http_listen(rz_http_t *h, const char *addr, rz_err_t *err)
{
	struct sockaddr_storage ss;
	int sslen;
	socklen_t len = sizeof(ss);

	if (parse_addr(addr, &ss, &sslen) < 0) {
		return rz_err_set(err, -EINVAL, "http: invalid listen address '%s'", addr);
	}
	h->listener = evconnlistener_new_bind(h->base, on_accept, h,
	                                      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
	                                          LEV_OPT_CLOSE_ON_EXEC,
	                                      LISTEN_BACKLOG, (struct sockaddr *)&ss, sslen);
	if (h->listener == NULL) {
		int e = errno ? errno : EADDRINUSE;
		return rz_err_set(err, -e, "http: listen on '%s' failed: %s", addr, strerror(e));
	}
	evconnlistener_set_error_cb(h->listener, on_accept_error);
	if (getsockname(evconnlistener_get_fd(h->listener), (struct sockaddr *)&ss, &len) == 0) {
		h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
		                                         : ((struct sockaddr_in *)&ss)->sin_port);
	}
	return 0;
}

int rz_http_port(const rz_http_t *h)
{
	return h->port;
}

void rz_http_shutdown(rz_http_t *h)
{
	struct conn *c = h->conns;

	h->draining = true;
	if (h->listener != NULL) {
		evconnlistener_free(h->listener);
		h->listener = NULL;
	}
	while (c != NULL) {
		struct conn *next = c->next;
		if ((!c->handling && !c->closing) || (c->req != NULL && c->req->live)) {
			conn_free(c); /* may run on-close callbacks, which never free connections */
		}
		c = next;
	}
}

void rz_http_set_tls(rz_http_t *h, rz_tls_t *tls)
{
	h->tls = tls;
}

void rz_http_set_guard(rz_http_t *h, rz_http_guard_fn fn, void *ctx)
{
	h->guard = fn;
	h->guard_ctx = ctx;
}

void rz_http_set_authn(rz_http_t *h, rz_http_authn_fn fn, void *ctx)
{
	h->authn = fn;
	h->authn_ctx = ctx;
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

void rz_http_set_observer(rz_http_t *h, rz_http_observer_fn fn, void *ctx)
{
	h->observer = fn;
	h->observer_ctx = ctx;
}

size_t rz_http_in_flight(const rz_http_t *h)
{
	return h->in_flight;
}

void rz_http_free(rz_http_t *h)
{
	if (h == NULL) {
		return;
	}
	if (h->listener != NULL) {
		evconnlistener_free(h->listener);
	}
	if (h->resume_accept != NULL) {
		event_free(h->resume_accept);
	}
	while (h->conns != NULL) {
		conn_free(h->conns);
	}
	for (rz_req_t *req = h->flight; req != NULL; req = req->fnext) {
		req->h = NULL; /* a late reply only frees the request */
		req->pe = NULL;
	}
	for (size_t i = 0; i < h->nroutes; i++) {
		free(h->routes[i].storage);
		free(h->routes[i].text);
	}
	for (size_t i = 0; i < h->naliases; i++) {
		free(h->aliases[i].prefix);
		free(h->aliases[i].alias);
	}
	free(h->routes);
	for (size_t i = 0; i < PEER_BUCKETS; i++) {
		while (h->peers[i] != NULL) {
			struct peer *next = h->peers[i]->next;
			free(h->peers[i]);
			h->peers[i] = next;
		}
	}
	free(h);
}

/* ------------------------------------------------------------------ in-process requests */

static int inject_headers(rz_req_t *req, const rz_req_t *parent, const rz_inject_t *in)
{
	static const char *const copied[] = { "X-Forwarded-For", "User-Agent" };
	int rc = 0;

	for (size_t i = 0; parent != NULL && rc == 0 && i < sizeof(copied) / sizeof(copied[0]);
	     i++) {
		const char *v = kv_get(&parent->in, copied[i], true);
		if (v != NULL) {
			rc = kv_add(&req->in, copied[i], strlen(copied[i]), v, strlen(v));
		}
	}
	if (rc == 0 && in->authorization != NULL) {
		rc = kv_add(&req->in, "Authorization", 13, in->authorization,
		            strlen(in->authorization));
	}
	if (rc == 0 && in->accept != NULL) {
		rc = kv_add(&req->in, "Accept", 6, in->accept, strlen(in->accept));
	}
	if (rc == 0 && in->content_type != NULL) {
		rc = kv_add(&req->in, "Content-Type", 12, in->content_type,
		            strlen(in->content_type));
	}
	return rc;
}

static rz_req_t *inject_new(rz_http_t *h, const rz_req_t *parent, const rz_inject_t *in)
{
	rz_req_t *req = calloc(1, sizeof(*req));

	if (req == NULL || (req->inj = calloc(1, sizeof(*req->inj))) == NULL ||
	    (req->url = strdup(in->target)) == NULL || (req->body = malloc(in->len + 1)) == NULL ||
	    inject_headers(req, parent, in) != 0) {
		req_free(req);
		return NULL;
	}
	req->h = h;
	req->url_len = strlen(req->url);
	snprintf(req->method, sizeof(req->method), "%s", in->method);
	req->mbit = method_bit(req->method);
	if (in->len > 0) {
		memcpy(req->body, in->body, in->len);
	}
	req->body[in->len] = '\0';
	req->body_len = in->len;
	req->tls = parent != NULL && parent->tls;
	snprintf(req->peer, sizeof(req->peer), "%s", parent ? parent->peer : "127.0.0.1");
	if (parent != NULL) {
		snprintf(req->id, sizeof(req->id), "%s", parent->id);
	} else {
		request_id(req);
	}
	clock_gettime(CLOCK_MONOTONIC, &req->start);
	req->inj->done = in->done;
	req->inj->data = in->data;
	req->inj->arg = in->arg;
	req->inj->max = in->max_reply ? in->max_reply : h->opts.max_stream_backlog;
	return req;
}

int rz_http_inject(rz_http_t *h, const rz_req_t *parent, const rz_inject_t *in, rz_req_t **handle,
                   rz_err_t *err)
{
	rz_req_t *req;

	if (in->method == NULL || in->target == NULL || in->target[0] != '/' ||
	    strlen(in->method) >= sizeof(req->method) || (in->body == NULL && in->len > 0)) {
		return rz_err_set(err, -EINVAL, "http: a malformed in-process request");
	}
	if (in->len > h->opts.max_body) {
		return rz_err_set(err, -E2BIG, "http: request body exceeds the limit of %llu bytes",
		                  (unsigned long long)h->opts.max_body);
	}
	if (h->draining) {
		return rz_err_set(err, -ESHUTDOWN, "http: the server is shutting down");
	}
	req = inject_new(h, parent, in);
	if (req == NULL) {
		return rz_err_set(err, -ENOMEM, "http: out of memory");
	}
	req->fnext = h->flight;
	if (h->flight != NULL) {
		h->flight->fprev = req;
	}
	h->flight = req;
	h->in_flight++;
	if (handle != NULL) {
		*handle = req;
	}
	if (parse_target(req) < 0) {
		rz_reply_error(req, 400, NULL, "%s",
		               req->reject_msg[0] ? req->reject_msg : "malformed request");
	} else {
		route_request(h, req);
	}
	return 0;
}

void rz_http_inject_cancel(rz_req_t *req)
{
	if (req == NULL || req->inj == NULL || req->inj->canceled) {
		return;
	}
	req->inj->canceled = true;
	if (req->on_close != NULL) {
		void (*fn)(rz_req_t *, void *) = req->on_close;
		req->on_close = NULL;
		fn(req, req->on_close_arg);
	}
}

/* ------------------------------------------------------------------ a given connection */

void rz_http_serve_fd(rz_http_t *h, int fd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	evutil_make_socket_nonblocking(fd);
	on_accept(h->listener, fd, (struct sockaddr *)&sin, (int)sizeof(sin), h);
}
