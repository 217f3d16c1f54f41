/*
 * core/web/static.c - serving the embedded static assets (core/web/static.h).
 */
#include <config.h>

#include "core/web/static.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/model/kinds.h"

#define ASSET_PATH_MAX 256 /* longer request paths are no asset's */

/* The policy for pages. Nothing leaves for another host; Alpine.js is its CSP build
 * (@alpinejs/csp: expressions are parsed, never eval'd), so script-src needs no
 * 'unsafe-eval'; htmx runs with allowEval and includeIndicatorStyles off
 * (web/templates/partials/htmx-config.html), so neither eval nor inline styles are needed.
 * data: images allow small SVG icons inlined in the stylesheet. */
#define CSP_COMMON                                                                                 \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "          \
	"connect-src 'self'; form-action 'self'; base-uri 'none'"

const char *rz_web_csp(bool ingress)
{
	/* In Home Assistant's ingress the UI is framed by Home Assistant's own page. */
	return ingress ? CSP_COMMON : CSP_COMMON "; frame-ancestors 'none'";
}

const rz_asset_t *rz_asset_at(size_t i)
{
	return i < rz__static_count ? &rz__static_assets[i] : NULL;
}

size_t rz_asset_count(void)
{
	return rz__static_count;
}

const rz_asset_t *rz_asset_by_path(const char *path)
{
	if (path == NULL || strlen(path) > ASSET_PATH_MAX) {
		return NULL;
	}
	for (size_t i = 0; i < rz__static_count; i++) {
		if (strcmp(rz__static_assets[i].path, path) == 0) {
			return &rz__static_assets[i];
		}
	}
	return NULL;
}

const rz_asset_t *rz_asset_by_name(const char *logical)
{
	if (logical == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < rz__static_count; i++) {
		if (strcmp(rz__static_assets[i].logical, logical) == 0) {
			return &rz__static_assets[i];
		}
	}
	return NULL;
}

/* The q value of one Accept-Encoding element's parameters (";q=0.5"); 1 when absent. */
static double qvalue(const char *params, size_t n)
{
	char buf[32];
	const char *q;

	if (n >= sizeof(buf)) {
		return 0;
	}
	memcpy(buf, params, n);
	buf[n] = '\0';
	q = strstr(buf, "q=");
	if (q == NULL) {
		q = strstr(buf, "Q=");
	}
	return q != NULL ? strtod(q + 2, NULL) : 1.0;
}

/* Whether Accept-Encoding allows gzip: "gzip" (or "x-gzip") with a q above 0, or else "*"
 * with a q above 0 (RFC 9110 §12.5.3). Absent: identity only. */
static bool accepts_gzip(const char *ae)
{
	double gz = -1, star = -1;

	while (ae != NULL && *ae != '\0') {
		size_t len, tok;

		ae += strspn(ae, " \t");
		len = strcspn(ae, ",");
		tok = strcspn(ae, " \t;,");
		if ((tok == 4 && strncasecmp(ae, "gzip", 4) == 0) ||
		    (tok == 6 && strncasecmp(ae, "x-gzip", 6) == 0)) {
			gz = qvalue(ae + tok, len - tok);
		} else if (tok == 1 && ae[0] == '*') {
			star = qvalue(ae + tok, len - tok);
		}
		ae += len;
		ae += *ae == ',' ? 1 : 0;
	}
	return gz > 0 || (gz < 0 && star > 0);
}

/* The strong ETag of a's identity or gzip representation: "<hash8>" or "<hash8>-gzip". */
static void etag_of(const rz_asset_t *a, bool gz, char *buf, size_t cap)
{
	const char *dot = strrchr(a->logical, '.');
	size_t ext = dot != NULL ? strlen(dot) : 0; /* ".css", or 0 for LICENSES */
	size_t plen = strlen(a->path);
	const char *hash = plen >= ext + 8 ? a->path + plen - ext - 8 : a->path;

	snprintf(buf, cap, "\"%.8s%s\"", hash, gz ? "-gzip" : "");
}

/* Whether If-None-Match names tag (weak comparison, RFC 9110 §13.1.2), or is "*". */
static bool none_match(const char *inm, const char *tag)
{
	size_t tlen = strlen(tag);

	while (inm != NULL && *inm != '\0') {
		size_t len;

		inm += strspn(inm, " \t,");
		len = strcspn(inm, ",");
		while (len > 0 && (inm[len - 1] == ' ' || inm[len - 1] == '\t')) {
			len--;
		}
		if (len == 1 && inm[0] == '*') {
			return true;
		}
		if (len > 2 && strncmp(inm, "W/", 2) == 0) {
			inm += 2;
			len -= 2;
		}
		if (len == tlen && strncmp(inm, tag, len) == 0) {
			return true;
		}
		inm += len;
		inm += strcspn(inm, ",");
	}
	return false;
}

static void handle_static(rz_req_t *req, void *ctx)
{
	const rz_asset_t *a = rz_asset_by_path(rz_req_path(req));
	const char *inm = rz_req_header(req, "If-None-Match");
	char tag[32], other[32];
	bool gz;
	int rc = 0;

	(void)ctx;
	if (a == NULL) {
		rz_reply_error(req, 404, NULL, "no such asset: static paths come from the pages");
		return;
	}
	gz = a->gz != NULL && accepts_gzip(rz_req_header(req, "Accept-Encoding"));
	etag_of(a, gz, tag, sizeof(tag));
	etag_of(a, !gz, other, sizeof(other));
	rc |= rz_req_add_header(req, "Cache-Control", "public, max-age=31536000, immutable");
	rc |= rz_req_add_header(req, "ETag", tag);
	rc |= rz_req_add_header(req, "Vary", "Accept-Encoding");
	if (gz) {
		rc |= rz_req_add_header(req, "Content-Encoding", "gzip");
	}
	if (rc != 0) {
		rz_reply_error(req, 500, NULL, "out of memory");
		return;
	}
	/* The URL names the bytes: a client holding either encoding holds the current asset. */
	if (inm != NULL && (none_match(inm, tag) || none_match(inm, other))) {
		rz_reply(req, 304, a->content_type, gz ? a->gz : a->data, gz ? a->gz_len : a->len);
		return;
	}
	rz_reply(req, 200, a->content_type, gz ? a->gz : a->data, gz ? a->gz_len : a->len);
}

/* For the OpenAPI document (core/api/openapi.c). */
static const int static_errors[] = { 404, 0 };
static const rz_route_doc_t static_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getStaticAsset",
	  .summary = "a WebUI asset, named by its content (cached for good; gzip when accepted)",
	  .response = "{\"type\":\"string\",\"format\":\"binary\"}",
	  .response_type = "application/octet-stream",
	  .errors = static_errors,
	  .other_code = 304 },
	{ 0 },
};

static const rz_route_t static_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/static/{name}",
	  .fn = handle_static,
	  .role = RZ_ROLE_PUBLIC,
	  .doc = static_doc },
};

int rz_web_static_routes(rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(static_routes), NULL, err);
}
