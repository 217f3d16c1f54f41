/*
 * core/web/page.h - what the WebUI's files share (not installed, not for other modules): the
 * page being answered, its reads and actions through the API's routes, and the rendering.
 */
#ifndef RZ_WEB_PAGE_H
#define RZ_WEB_PAGE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/web/template.h"
#include "core/web/ui.h"

#define RZ__PAGE_FETCHES 8 /* API reads one page makes, at most */

struct rz__live;

struct rz_ui {
	rz_http_t *http;
	rz_auth_t *auth;
	rz_access_t *access;
	struct event_base *base;
	rz_tpl_set_t *tpl;
	unsigned char csrf_key[RZ_DERIVED_KEY_LEN];
	struct rz__live *lives; /* open live streams */
	rz_oidc_t *oidc;        /* single sign-on's provider, or NULL */
	bool destroy_approval;  /* tofu.destroy_approval: a destroying plan waits */
};

typedef struct rz__page rz__page_t;
typedef void (*rz__page_fn)(rz__page_t *pg);
/* An action's reply: code, the body as JSON (NULL when it is not), the reply itself. */
typedef void (*rz__act_fn)(rz__page_t *pg, int code, json_t *body, const rz_inject_reply_t *r);

struct rz__page {
	rz_ui_t *ui;
	rz_req_t *req;
	const rz_principal_t *p; /* NULL: nobody is logged in */
	int role; /* the role that counts on this page: on a page of one tenant (a {tenant} in
	             its path) the principal's role there (its AccessBindings too), else its
	             role on the installation */
	bool ingress;
	char base[RZ_UI_PREFIX_MAX];   /* the ingress prefix, or "" */
	char authz[RZ_COOKIE_MAX + 8]; /* "Bearer <session token>" for the API */
	char csrf[RZ_CSRF_LEN + 1];
	json_t *view;
	json_t *form; /* the posted form, or NULL */
	int pending;
	rz__page_fn ready; /* once every read has answered */
	struct slot {
		rz__page_t *pg;
		int i;
		json_t *body;
		int code;
	} got[RZ__PAGE_FETCHES];
	int nfetch;
	rz__act_fn act;
	const char *tpl;
	int code;
	struct rz__live_view *live; /* the live region this page is a read of, or NULL */
};

/* The page for req: who is asking (from the guard), the ingress prefix, the CSRF token. NULL
 * when out of memory (answered 500). */
rz__page_t *rz__page_new(rz_ui_t *ui, rz_req_t *req);
void rz__page_free(rz__page_t *pg);

/* Read target (an API path) into slot i; ready runs once all reads issued between
 * rz__page_hold and rz__page_release have answered. */
void rz__page_hold(rz__page_t *pg);
void rz__page_fetch(rz__page_t *pg, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rz__page_release(rz__page_t *pg);
/* The JSON slot i got (NULL unless 2xx with a JSON body), and its code. Borrowed. */
json_t *rz__page_got(const rz__page_t *pg, int i);
int rz__page_code(const rz__page_t *pg, int i);

/* Act through the API: method target with body (taken; may be NULL) as content type ctype;
 * act runs with the reply. The request itself is then marked audited: the API's call carries
 * the audit row. */
void rz__page_act(rz__page_t *pg, const char *method, const char *target, const char *ctype,
                  json_t *body, rz__act_fn act);

/* Answer: the template tpl with pg->view (plus the common keys), code; frees pg. */
void rz__page_render(rz__page_t *pg, const char *tpl, int code);
/* view.me (and view.csrf) as every page has them at its render: who is signed in and what
 * the role may (canEdit, canAdmin on the page's tenant; hasRole, isAdmin installation-wide). */
void rz__page_me(rz__page_t *pg);
/* 303 to base + path (+ "?toast=KEY" when toast is not NULL); frees pg. */
void rz__page_redirect(rz__page_t *pg, const char *path, const char *toast);
/* An error page with message; frees pg. */
void rz__page_error(rz__page_t *pg, int code, const char *message);

/* Set view.toast {kind: "ok"|"error", message}. */
void rz__page_toast(rz__page_t *pg, bool ok, const char *message);

/* Put a failed action's Status into view.form: message, and each cause next to its field
 * (view.form.errors.<field with dots as _>); prefix is dropped from field names ("spec."). */
void rz__page_causes(rz__page_t *pg, const json_t *status, const char *prefix);

/* A failed action (code outside 2xx): the page's code becomes it (a 400 is the form's
 * fault: 422; a code below 400 is the API's: 502) and its causes go next to the fields
 * (rz__page_causes). True when it failed. */
bool rz__page_failed(rz__page_t *pg, int code, const json_t *body, const char *prefix);

/* A failed read of slot i: a toast saying so ("Cannot read WHAT (HTTP N).") unless the
 * page already has one. */
void rz__page_read_error(rz__page_t *pg, int i, const char *what);

/* A tenant's page whose read of the tenant failed with code (the API's): 404 "no such
 * tenant", 403 "you may not see it" (the API's refusal: no role there), else 502; frees pg. */
void rz__page_tenant_error(rz__page_t *pg, int code);

/* The path parameters that go into API paths (tenant, name, id) are DNS labels, as every
 * name is; else a 404 page (answered, pg freed) and false. */
bool rz__page_names_ok(rz__page_t *pg);

/* The page of a posted form of a logged-in user, after its CSRF check (a form field csrf or
 * the X-CSRF-Token header): NULL when refused (403), sent to /login or answered. */
rz__page_t *rz__post_page(rz_ui_t *ui, rz_req_t *req);

/* Require a login (redirects to /login: false) and a changed password (to /password). */
bool rz__page_need_login(rz__page_t *pg);

/* A form field of the posted form ("" when absent). Borrowed. */
const char *rz__form(const rz__page_t *pg, const char *name);

/* True when the page's role (pg->role: on a tenant's page, the principal's role on that
 * tenant) may: RZ_ROLE_EDIT etc. */
bool rz__may(const rz__page_t *pg, int role);
/* True when the principal's role on the whole installation may (daemon-wide pages). */
bool rz__may_all(const rz__page_t *pg, int role);

/* A row of a WebUI module's route table: a page is public to the guard (the page itself
 * asks for a login) and authenticated by the session cookie too. */
#define RZ__WEB_ROUTE(m, p, f)                                                                     \
	{                                                                                          \
		.methods = (m), .pattern = (p), .fn = (f), .role = RZ_ROLE_PUBLIC,                 \
		.verb = "webui", .cookie = true                                                    \
	}

/* Register the routes of the pages (core/web/pages.c) and of the live streams
 * (core/web/live.c) on http, with ui as their ctx. */
int rz__pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__live_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
void rz__live_close_all(rz_ui_t *ui);
/* The installation's pages: the dashboard (core/web/dashboard-pages.c), the Events
 * (core/web/event-pages.c), the remote runners (core/web/runner-pages.c). */
int rz__dashboard_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__event_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__runner_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
/* The daemon-wide pages: providers and backups (core/web/admin-pages.c), users and their
 * tokens (core/web/user-pages.c), the audit log (core/web/audit-pages.c); rz__admin_forget
 * (core/web/tokens.c) wipes the new tokens' secrets still waiting to be shown. */
int rz__admin_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__user_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__audit_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
void rz__admin_forget(void);

/* What the daemon-wide pages share (core/web/admin-pages.c). rz__admin_page: the page of a
 * logged-in user whose path's names are DNS labels, or NULL (answered, req gone).
 * rz__read_failed: a failed read of slot i answered as an error page saying why (403: the
 * role may not; 404: no such WHAT); true when it answered. rz__nav: the main navigation's
 * flag and the title. rz__form_view: view.form, made with values (the posted form) when
 * absent; borrowed. rz__confirm: the confirmation page (pages/confirm) of a destructive
 * action, posted to action, back to back. rz__query_add: name=value appended to a query
 * string, percent-encoded (nothing for an empty value); false when it does not fit. */
rz__page_t *rz__admin_page(rz_ui_t *ui, rz_req_t *req);
bool rz__read_failed(rz__page_t *pg, int i, const char *what);
void rz__nav(rz__page_t *pg, const char *flag, const char *title);
json_t *rz__form_view(rz__page_t *pg);
void rz__confirm(rz__page_t *pg, const char *title, const char *question, const char *what,
                 const char *action, const char *button, const char *back);
bool rz__query_add(char *q, size_t size, const char *name, const char *value);

/* API tokens (core/web/tokens.c), shared by a user's page (core/web/user-pages.c) and My
 * account (core/web/account-pages.c). A new token's secret is kept in memory for the session (jti)
 * that made it until that session's next page takes it (rz__token_shown_take: "" when none;
 * forgotten as it is read), or five minutes. */
void rz__token_shown_put(const char *jti, const char *user, const char *id, const char *secret);
void rz__token_shown_take(const char *jti, const char *user, const char *id,
                          char out[RZ_TOKEN_SECRET_LEN + 1]);
/* The form's expiry (expiresOn, a date, or expiresIn, a lifetime) into spec.expiresAt; false
 * when the form's value is refused here (its cause beside the field, pg->code 422). */
bool rz__token_expiry(rz__page_t *pg, json_t *spec);
/* A new token's spec from the posted form (tokenRole, description, expires): NULL, the
 * expiry's error set on the page, when the expiry cannot be read. Caller owns. */
json_t *rz__token_spec(rz__page_t *pg);
#define RZ__TOKEN_EXPIRY_DEFAULT "90d"
/* A failed creation of a token (code outside 2xx, status the API's): its causes beside the
 * token form's fields, in plain words (rz__form_failed); true when it failed. */
bool rz__token_failed(rz__page_t *pg, int code, const json_t *status);
/* The lifetimes offered [{value, label, selected}], want selected; a token's row {id, role,
 * description, created, expires, lastUsed}. Caller owns the results. */
json_t *rz__token_expiries(const char *want);
json_t *rz__token_row(const json_t *t);

/* My account (core/web/account-pages.c): who one is, one's API tokens, the password form;
 * the AccessBindings' pages (core/web/binding-pages.c), an admin's. */
int rz__account_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__binding_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);

/* Single sign-on's pages (core/web/sso-pages.c): GET /login/oidc begins a sign-in at the
 * provider, GET /login/oidc/callback finishes it; rz__sso_login_view adds the login page's
 * button (view.sso) when single sign-on is configured. */
int rz__sso_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
void rz__sso_login_view(rz__page_t *pg);

/* Whether the browser's connection is TLS (the page's cookies are Secure), and the path the
 * UI's cookies are set on (the ingress prefix, or "/"). */
bool rz__page_secure(const rz__page_t *pg);
const char *rz__page_cookie_path(const rz__page_t *pg);

/* The tenant's tabs (core/web/tenant-pages.c): configuration patches, upgrades, state
 * versions, credentials, the tenant's deletion; deleting a config patch. */
int rz__tenant_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);

/* A tenant's tab page's common parts (core/web/tenant-pages.c): the title "WHAT of TENANT",
 * the tenant's header (view.tenant) and its tabs with tab marked; false (answered, pg freed)
 * when the tenant, read into slot 0, could not be read. */
bool rz__tenant_head(rz__page_t *pg, const char *tab, const char *what);

/* A tenant's tabs and a machine's page (core/web/tenant-overview.c), its node groups'
 * actions (core/web/nodegroup-pages.c), its runs (core/web/run-pages.c); registered by
 * rz__pages_routes. */
int rz__tenant_overview_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__nodegroup_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__run_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
/* Answer with the tenant's tab named tab (overview, nodegroups, machines, runs) of pg's
 * {tenant}, with what pg's view holds (a failed form's errors); false when there is no
 * such tab (pg untouched). */
bool rz__tenant_tab_page(rz__page_t *pg, const char *tab);

/* The etcd snapshots tab (core/web/etcd-pages.c): a tenant's EtcdBackups live, "snapshot
 * now", a restore through a confirmation, and a restore's steps live. */
int rz__etcd_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);

/* The tenant's tab bar (parts/tabs) with the tab named current marked; tabs the role may not
 * use are left out. Caller owns the result. */
json_t *rz__tenant_tabs(const rz__page_t *pg, const char *tenant, const char *current);

/* Answer req with a live table: the objects of target (an API watch) rendered by tpl with
 * view.rows = each object through row, sorted by name (core/web/live.c); the view's me has
 * canEdit and canAdmin (the role on the page's tenant). rz__live_table_ordered sorts the
 * rows with order instead (a qsort comparator over json_t * rows). */
void rz__live_table(rz_ui_t *ui, rz_req_t *req, const char *target, const char *tpl,
                    json_t *(*row)(const json_t *));
void rz__live_table_ordered(rz_ui_t *ui, rz_req_t *req, const char *target, const char *tpl,
                            json_t *(*row)(const json_t *),
                            int (*order)(const void *, const void *));
/* The general form: target (an API watch), tpl, row, order (NULL: by name), and shape
 * (NULL: none) adding to the view what its rows add up to, on every render; head (NULL:
 * none), a second table on the same stream, sent as SSE event "head" (the first's are
 * "rows" unless event says otherwise): a page has one stream, as browsers open few
 * connections to a host. */
struct rz__live_spec {
	const char *target;
	const char *tpl;
	json_t *(*row)(const json_t *);
	int (*order)(const void *, const void *);
	void (*shape)(json_t *view);
	const struct rz__live_spec *head;
	const char *event;   /* the SSE event of its renders; NULL: "rows" */
	const char *current; /* the row of this name gets current: true (the page's); or NULL */
};
void rz__live_spec(rz_ui_t *ui, rz_req_t *req, const struct rz__live_spec *spec);
/* A live table of one of the tenant's lists (target, tpl, row, order: as spec's; current:
 * as spec's, or NULL) with the tenant's header on the same stream, as every tab of a tenant
 * shows it (?rows= and ?head= from rz__live_have). */
void rz__live_tenant_table(rz_ui_t *ui, rz_req_t *req, const char *target, const char *tpl,
                           json_t *(*row)(const json_t *), int (*order)(const void *, const void *),
                           const char *current);
/* The digest of tpl rendered with part (borrowed: a live view, {rows, ...}) as a live
 * table's stream renders it for pg, hex ("" when it cannot be rendered): a page passes it
 * in its stream's URL (?rows=HEX, ?head=HEX for the header) and the stream sends nothing
 * until what it renders differs. */
#define RZ__LIVE_DIGEST_HEX 65
void rz__live_digest(const rz__page_t *pg, const char *tpl, const json_t *part,
                     char out[RZ__LIVE_DIGEST_HEX]);
/* view.liveHead: the digest of the tenant's header (view.tenant), view.liveRows: of part
 * rendered by tpl ("" when tpl is NULL), for the page's stream URL. */
void rz__live_have(rz__page_t *pg, const char *tpl, const json_t *part);
/* rz__live_have with the page's own view.rows rendered by tpl. */
void rz__live_have_rows(rz__page_t *pg, const char *tpl);

/* A live region re-read on change (core/web/live-view.c): answer req with a stream of
 * events named event, each the template tpl rendered from a fresh read, sent when it renders
 * differently from the last one. The reads start once at the stream's start and again about
 * 250 ms after any of watches (API list paths, up to RZ__LIVE_WATCHES, NULL-terminated; each
 * watched from the stream's starting revision) reports a change, at most once a second: read
 * issues them on a page whose view starts as seed (taken; may be NULL) and whose ready is
 * build, which ends with rz__live_view_send(pg) (the page's view rendered and sent; pg
 * freed). A watch that ends ends the stream (the browser connects again); one the role may not
 * watch (403, 404) is left out. */
#define RZ__LIVE_WATCHES 4
typedef struct rz__live_view_spec {
	const char *watches[RZ__LIVE_WATCHES + 1];
	rz__page_fn read, build;
	const char *tpl, *event;
	/* what no API watch follows (the audit log, the daemon's own backups) is read again
	 * this long after the last read (and sent only when it renders differently); 0: only
	 * after a watch's change */
	int poll_ms;
} rz__live_view_spec_t;
void rz__live_view(rz_ui_t *ui, rz_req_t *req, const rz__live_view_spec_t *spec, json_t *seed);
void rz__live_view_send(rz__page_t *pg);
/* The end of a read that failed (rz__live_view_send's place): nothing is sent, the region
 * keeps what it shows until the next read; pg freed. */
void rz__live_view_keep(rz__page_t *pg);
/* view[key]: the digest of tpl rendered from pg's view as its live region renders it, for
 * the region's stream URL (?have=): the stream sends nothing until what it renders differs,
 * so the page's own HTML is not swapped in again (that would take the focus away). */
void rz__live_view_have(rz__page_t *pg, const char *tpl, const char *key);

/* The view models of a tenant's objects (core/web/rows.c), one per object, as its tables,
 * live regions and pages show it: a tenant (parts/tenant-rows, parts/tenant-head), a
 * machine (parts/machine-rows), a run (parts/run-rows, parts/run-head), a node group
 * (parts/nodegroup-rows), an Event, a condition. Caller owns the results. */
json_t *rz__tenant_row(const json_t *t);
json_t *rz__machine_row(const json_t *m);
json_t *rz__run_row(const json_t *r);
json_t *rz__nodegroup_row(const json_t *g);
json_t *rz__event_row(const json_t *e);
json_t *rz__condition_row(const json_t *c);
/* row.reason and row.message of the Event e as people read them: the reason in words ("Run
 * started"), the message without what repeats it ("started", "phase Ready "). */
void rz__event_words(const json_t *e, json_t *row);
/* A new array of row(each of items) (borrowed). Caller owns the result. */
json_t *rz__rows(json_t *items, json_t *(*row)(const json_t *));
/* A new array of items (borrowed) in the order of cmp. Caller owns the result. Orders (qsort
 * comparators over json_t *): objects newest first by creation, Events by lastTimestamp
 * newest first, rows (view models with "created") newest first. */
json_t *rz__sorted_by(json_t *items, int (*cmp)(const void *, const void *));
/* A page's view of a live region as its stream renders it: {rows} (taken) and what shape
 * adds from them (NULL: nothing). rz__machines_shape adds count {ready, total, word, tone}
 * and groups [{name, role, ready, machines}] (control planes first). Detail rows: a machine's
 * page (versions, addresses, times, conditions), a run's (its plan's resources). Callers own
 * the results. */
json_t *rz__live_part(json_t *rows, void (*shape)(json_t *view));
void rz__machines_shape(json_t *view);
json_t *rz__machine_detail_row(const json_t *m);
json_t *rz__run_detail_row(const json_t *r);
int rz__by_created_desc(const void *a, const void *b);
int rz__by_last_desc(const void *a, const void *b);
int rz__row_by_created_desc(const void *a, const void *b);

/* Forms (core/web/form.c), every form of the WebUI: a form's field for the API's fields: a cause of
 * api (or below it: "spec.labels.team") goes beside field, named label in the summary, which links
 * to the element anchor (NULL: "f-FIELD"). */
typedef struct rz__field {
	const char *api, *field, *label, *anchor;
} rz__field_t;

/* A problem with the posted form: beside field (NULL: the summary alone) as
 * view.form.errors.FIELD, and in view.form.problems [{field, label, message, linked}] for
 * parts/form-problems; the page's code becomes 422 unless it is an error already. */
void rz__form_problem(rz__page_t *pg, const char *field, const char *label, const char *message);
/* The same, the summary's link to the element anchor (NULL: "f-FIELD"). */
void rz__form_problem_at(rz__page_t *pg, const char *field, const char *anchor, const char *label,
                         const char *message);
/* A failed action (code outside 2xx, status its Status): its causes as problems of the
 * fields map names, in plain words, or its message when no cause has a field; pg->code as
 * rz__page_failed sets it. True when it failed. */
bool rz__form_failed(rz__page_t *pg, int code, const json_t *status, const rz__field_t *map,
                     size_t n);
/* "k=v" lines (or "k=v, k2=v2") as a JSON object (caller owns); NULL with msg when a line is
 * not key=value. rz__pairs_text: a map as such lines (caller owns the string). */
json_t *rz__form_pairs(const char *text, char *msg, size_t size);
json_t *rz__pairs_text(const json_t *map);

/* The visual language (core/web/view.c). rz__tone: a phase's, stage's or condition's tone,
 * its badge's colour class (badge-TONE): "ok", "busy" (on its way), "wait" (waits for
 * someone or something), "bad", "neutral" (anything else). rz__badge: {text, tone} for
 * parts/badge. rz__when: {iso, exact} for parts/when, a <time> that web/static/time.js shows
 * as "3 min ago" with the exact time on hover ("" when iso is NULL). Callers own results. */
const char *rz__tone(const char *word);
json_t *rz__badge(const char *word);
/* rz__tone_any: rz__tone, or for a word none of its lists has the tone of its last words
 * ("RunAwaitingApproval": "wait"), as an Event's reason. rz__words_into: a CamelCase word as
 * people read it ("AwaitingApproval": "Awaiting approval", "APIToken": "API token") into out
 * (size bytes, cut to fit); rz__words: the same as a new JSON string (caller owns). The
 * badge's text is the word's words, its tone rz__tone_any's. */
const char *rz__tone_any(const char *word);
void rz__words_into(const char *word, char *out, size_t size);
json_t *rz__words(const char *word);
json_t *rz__when(const char *iso);

/* Small helpers for view models. */
const char *rz__str(const json_t *obj, const char *path); /* "a.b.c": a string, or "" */
json_t *rz__items(json_t *list);                          /* list.items (borrowed), or NULL */

#endif /* RZ_WEB_PAGE_H */
