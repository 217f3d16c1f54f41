/*
 * core/web/static.h - the WebUI's static assets (web/static/), embedded at build time.
 *
 * core/web/mkstatic turns every file of web/static/ into a table entry: its bytes, a gzip
 * copy (only when smaller) and a URL path carrying the first 8 hex digits of the SHA-256
 * of the bytes, /static/<stem>.<hash8>.<ext> ("htmx.min.js" is served at
 * /static/htmx.min.1a2b3c4d.js). A URL names one content forever, so the routes answer
 * with immutable cache headers; a new build with changed bytes has new URLs. Pages name
 * assets by their logical name (rz_asset_by_name(...)->path) and never build URLs by hand.
 */
#ifndef RZ_WEB_STATIC_H
#define RZ_WEB_STATIC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/base/errors.h"
#include "core/http/http.h"

/* One embedded asset; every member points into the program's read-only data. */
typedef struct rz_asset {
	const char *path;         /* hashed URL path: /static/<name>.<hash8>.<ext> */
	const char *logical;      /* "app.css", "htmx.min.js", "alpine.min.js", ... */
	const char *content_type; /* "text/css; charset=utf-8", ... */
	const unsigned char *data;
	size_t len; /* identity */
	const unsigned char *gz;
	size_t gz_len; /* gzip, made at build time; NULL and 0 when not smaller */
} rz_asset_t;

/* The embedded asset at a URL path such as "/static/app.3f2a9c1b.css", or NULL (NULL
 * included). Borrowed — valid for the life of the program. */
const rz_asset_t *rz_asset_by_path(const char *path);

/* The asset named logical ("app.css"), for templates' URLs, or NULL. Borrowed, likewise. */
const rz_asset_t *rz_asset_by_name(const char *logical);

/* The i-th asset (i < rz_asset_count()), in the order of web/local.mk. Borrowed. */
const rz_asset_t *rz_asset_at(size_t i);
size_t rz_asset_count(void);

/* Register GET (and HEAD) /static/{name}: open to anyone; the asset whose path is the
 * request's, gzip when Accept-Encoding allows it and a gzip copy exists, with
 * Cache-Control "public, max-age=31536000, immutable", a strong ETag per encoding (304 on
 * a matching If-None-Match), Vary: Accept-Encoding and X-Content-Type-Options: nosniff;
 * any other path 404. 0 or a negative error (err filled). */
int rz_web_static_routes(rz_http_t *http, rz_err_t *err);

/* The Content-Security-Policy the WebUI's pages send: nothing from another host, no inline
 * script or style, no eval; frame-ancestors 'none' unless ingress (Home Assistant shows
 * the UI in an iframe). Borrowed — a static string. */
const char *rz_web_csp(bool ingress);

/* Written by core/web/mkstatic into the build tree's core/web/static-data.c. */
extern const rz_asset_t rz__static_assets[];
extern const size_t rz__static_count;

#endif /* RZ_WEB_STATIC_H */
