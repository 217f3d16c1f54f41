/*
 * core/web/ui.h - the WebUI's pages (SPEC §11): server-rendered HTML from jansson view models
 * and the templates of core/web/template.h, with HTMX swaps and Server-Sent Events for what
 * changes live.
 *
 * The UI does nothing the API cannot: every page reads, and every form acts, through an
 * in-process request to the API's own route (rz_http_inject), authorised by the guard as the
 * user of the session cookie and audited like any API call. The cookie (RZ_SESSION_COOKIE)
 * carries the token the API's login issues: HttpOnly, SameSite=Lax, Secure over TLS, on the
 * UI's routes only (never /api). Every non-GET request of the UI needs the session's CSRF
 * token (a form field or the X-CSRF-Token header): BLAKE2b keyed with a key derived from
 * the JWT secret over the session id. Behind Home Assistant's ingress (X-Ingress-Path from a
 * server.trusted_proxies peer) every URL the UI emits carries the prefix, and framing is
 * allowed.
 */
#ifndef RZ_UI_H
#define RZ_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/auth/access.h"
#include "core/auth/auth.h"
#include "core/auth/oidc.h"
#include "core/base/errors.h"
#include "core/http/http.h"

struct event_base;

#define RZ_CSRF_LEN        64            /* hex characters of a CSRF token */
#define RZ_UI_PREFIX_MAX   256           /* an X-Ingress-Path longer than this is ignored */
#define RZ_UI_FORM_MAX     64            /* fields of a posted form, at most */
#define RZ_UI_LIVE_OBJECTS 2000          /* objects a live table holds; more are left out */
#define RZ_LOGIN_COOKIE    "rezus_login" /* the login form's CSRF seed, before a session */
#define RZ_SSO_COOKIE      "rezus_oidc"  /* a single sign-on's state, while it goes on */

typedef struct rz_ui rz_ui_t;

/* http, auth and access are borrowed and must outlive the module; dir is web.dir (NULL:
 * the templates compiled in). */
int rz_ui_new(rz_ui_t **out, rz_http_t *http, rz_auth_t *auth, rz_access_t *access,
              struct event_base *base, const char *dir, rz_err_t *err);

/* Offer single sign-on at oidc (borrowed, must outlive ui; NULL: none) on the login page.
 * Call before rz_ui_routes. */
void rz_ui_set_oidc(rz_ui_t *ui, rz_oidc_t *oidc);

/* Whether a plan that destroys machines waits for approval (tofu.destroy_approval): the
 * pages say so after a scale-down or a deletion. */
void rz_ui_set_destroy_approval(rz_ui_t *ui, bool on);

/* GET /, /login, /password, /tenants, /tenants/{tenant}[/{tab}], ... and their forms. */
int rz_ui_routes(rz_ui_t *ui, rz_err_t *err);

/* End the live streams (shutdown). */
void rz_ui_close_all(rz_ui_t *ui);

/* Accepts NULL. */
void rz_ui_free(rz_ui_t *ui);

/* ---- the parts, for the tests ---- */

/* The CSRF token of session id jti (any string: the login form uses its seed) under key:
 * hex, NUL-terminated. */
void rz_ui_csrf(const unsigned char key[RZ_DERIVED_KEY_LEN], const char *jti,
                char out[RZ_CSRF_LEN + 1]);

/* Constant-time: is given the token of jti? NULL or a wrong length is false. */
bool rz_ui_csrf_ok(const unsigned char key[RZ_DERIVED_KEY_LEN], const char *jti, const char *given);

/* A Set-Cookie value for name=value with Path path ("" = "/"), Max-Age max_age (0: delete
 * it), HttpOnly, SameSite=Lax (strict: Strict), and Secure when secure. -ENOSPC when it does
 * not fit. */
int rz_ui_cookie(char *buf, size_t size, const char *name, const char *value, const char *path,
                 int64_t max_age, bool secure, bool strict);

/* The ingress prefix of an X-Ingress-Path value into out: true when header is a path
 * ("/" and then segments of A-Z a-z 0-9 - _ . ~, no "..", no trailing "/", shorter than
 * RZ_UI_PREFIX_MAX). Anything else is ignored (false, out ""). */
bool rz_ui_ingress_prefix(const char *header, char out[RZ_UI_PREFIX_MAX]);

/* prefix + path into buf (path starts with "/"). -ENOSPC when it does not fit. */
int rz_ui_url(char *buf, size_t size, const char *prefix, const char *path);

/* An application/x-www-form-urlencoded body as an object of strings (the last of repeated
 * names wins), at most RZ_UI_FORM_MAX fields. NULL when malformed (bad escapes, NUL, invalid
 * UTF-8, too many fields). Caller owns the result; json_decref(). */
json_t *rz_ui_form(const char *body, size_t len);

/* A size of n bytes as people read it, into buf (always NUL-terminated): "512 B", "1.5 KiB",
 * "12 KiB", "3.4 MiB" (binary units; one decimal below 10, none from 10; a negative n is
 * 0 B) (core/web/etcd-pages.c). */
void rz_ui_bytes(char *buf, size_t size, int64_t n);

#endif /* RZ_UI_H */
