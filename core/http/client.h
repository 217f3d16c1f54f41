/*
 * core/http/client.h - one HTTP(S) request, waited for: libevent's HTTP client on an event
 * base of its own (over core/http/tls.h's client bufferevents for https), for a caller that
 * blocks on the answer (a remote runner's claims and reports to the daemon).
 *
 * Bounded: the whole exchange by timeout_s (connect, request, answer), the answer's body by
 * max bytes (a longer one is refused, not cut and kept). No redirect is followed, no retry
 * made, no cookie kept.
 */
#ifndef RZ_HTTP_CLIENT_H
#define RZ_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/http/tls.h"

typedef struct rz_fetch {
	const char *method;       /* GET, POST, PUT, PATCH or DELETE */
	const char *url;          /* http:// or https://host[:port]/path[?query] */
	const char *bearer;       /* NULL, or the token for "Authorization: Bearer" */
	const char *content_type; /* NULL: none sent */
	const char *body;         /* NULL: empty */
	size_t len;
	size_t max;           /* the answer's body at most, bytes */
	int timeout_s;        /* the whole exchange at most */
	rz_tls_client_t *tls; /* required for https:// */
} rz_fetch_t;

typedef struct rz_fetched {
	long code;  /* the answer's status, 0 when none came (err says why) */
	char *body; /* malloc'd, NUL-terminated (the caller frees); NULL without an answer */
	size_t len;
	bool too_long; /* the answer's body was longer than max */
} rz_fetched_t;

/* Make the request and wait for its answer. 0 with out->code set when an answer came (any
 * status), else a negative errno with err set (out->code 0). */
int rz_http_fetch(const rz_fetch_t *f, rz_fetched_t *out, rz_err_t *err);

#endif /* RZ_HTTP_CLIENT_H */
