/* core/http/accesslog.c - the access log: a line per request, sampled per address. */
#include <config.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "core/http/http-int.h"
#include "core/base/log.h"

#define LOG_WINDOW_MS 10000 /* the access log's sampling window per address */

/* The requests of pe the access log did not show, in one line. */
void rz__log_unsaid(struct peer *pe)
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
	t = rz__mono_ms();
	if (t - pe->log_since >= LOG_WINDOW_MS) {
		rz__log_unsaid(pe);
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

void rz__access_log(rz_req_t *req, int code, size_t bytes)
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
