/* core/http/request.c - a request: its fields and accessors, headers, id, the ones in flight. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "core/http/http-int.h"

int rz__kv_add(struct kvlist *l, const char *name, size_t nlen, const char *value, size_t vlen)
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

const char *rz__kv_get(const struct kvlist *l, const char *name, bool nocase)
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

void rz__req_free(rz_req_t *req)
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
	rz__body_release(req);
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

rz_req_t *rz__req_new(struct conn *c)
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
	return rz__kv_get(&req->params, name, false);
}

const char *rz_req_query(const rz_req_t *req, const char *name)
{
	return rz__kv_get(&req->query, name, false);
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
	return rz__kv_get(&req->in, name, true);
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
	return rz__kv_add(&req->out, name, strlen(name), value, strlen(value));
}

const char *rz_req_reply_header(const rz_req_t *req, const char *name)
{
	return rz__kv_get(&req->out, name, true);
}

bool rz_req_tls(const rz_req_t *req)
{
	return req->tls;
}

struct event_base *rz_req_base(const rz_req_t *req)
{
	return req->h != NULL ? req->h->base : NULL;
}

void rz_req_on_close(rz_req_t *req, void (*fn)(rz_req_t *req, void *arg), void *arg)
{
	req->on_close = fn;
	req->on_close_arg = arg;
}

/* 16 random bytes for a request id, from a pool filled 256 ids at a time: one getrandom
 * call a request was a ninth of a request's system calls. */
static void random_id(unsigned char raw[16])
{
	static _Thread_local unsigned char pool[4096];
	static _Thread_local size_t used = sizeof(pool);

	if (used == sizeof(pool)) {
		randombytes_buf(pool, sizeof(pool));
		used = 0;
	}
	memcpy(raw, pool + used, 16);
	sodium_memzero(pool + used, 16);
	used += 16;
}

void rz__request_id(rz_req_t *req)
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
	random_id(raw);
	sodium_bin2hex(req->id, sizeof(req->id), raw, sizeof(raw));
}

void rz__flight_link(rz_http_t *h, rz_req_t *req)
{
	req->fnext = h->flight;
	if (h->flight != NULL) {
		h->flight->fprev = req;
	}
	h->flight = req;
	h->in_flight++;
}

void rz__flight_unlink(rz_http_t *h, rz_req_t *req)
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
