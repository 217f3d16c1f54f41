/* core/http/peer.c - per-address counters: connections, body buffer budgets, unsent replies. */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http/http-int.h"

static size_t peer_hash(const char *addr)
{
	size_t v = 5381;

	for (; *addr != '\0'; addr++) {
		v = v * 33 + (unsigned char)*addr;
	}
	return v % PEER_BUCKETS;
}

/* The counters of addr, created when absent. NULL on OOM. */
struct peer *rz__peer_get(rz_http_t *h, const char *addr)
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

void rz__peer_put(rz_http_t *h, struct peer *pe)
{
	if (pe->conns > 0 || pe->body > 0 || pe->unsent > 0) {
		return;
	}
	rz__log_unsaid(pe);
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
bool rz__body_reserve(rz_req_t *req, uint64_t n)
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

void rz__body_release(rz_req_t *req)
{
	if (req->h != NULL && req->pe != NULL && req->reserved > 0) {
		req->h->body_bytes -= req->reserved;
		req->pe->body -= req->reserved;
		rz__peer_put(req->h, req->pe);
	}
	req->reserved = 0;
}
