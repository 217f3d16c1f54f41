/*
 * core/web/tabs.h - what the files of a tenant's tabs share (not installed, not for other
 * modules): each file's routes, registered by rz__tenant_pages_routes (core/web/tenant-pages.c).
 */
#ifndef RZ_WEB_TABS_H
#define RZ_WEB_TABS_H

#include "core/web/page.h"

/* Config patches (core/web/patch-pages.c), upgrades (core/web/upgrade-pages.c), state
 * versions (core/web/state-pages.c), editing a tenant's spec and labels and a node group's
 * (core/web/edit-pages.c). */
int rz__patch_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__upgrade_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__state_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);
int rz__edit_pages_routes(rz_ui_t *ui, rz_http_t *http, rz_err_t *err);

/* A form's field for the API's fields (core/web/form.c): a cause of api (or below it:
 * "spec.labels.team") goes beside field, named label in the summary, which links to the
 * element anchor (NULL: "f-FIELD"). */
typedef struct rz__field {
	const char *api, *field, *label, *anchor;
} rz__field_t;

/* A problem with the posted form: beside field (NULL: the summary alone) as
 * view.form.errors.FIELD, and in view.form.problems [{field, label, message, linked}] for
 * parts/form-problems; the page's code becomes 422 unless it is an error already. */
void rz__form_problem(rz__page_t *pg, const char *field, const char *label, const char *message);
/* A failed action (code outside 2xx, status its Status): its causes as problems of the
 * fields map names, in plain words, or its message when no cause has a field; pg->code as
 * rz__page_failed sets it. True when it failed. */
bool rz__form_failed(rz__page_t *pg, int code, const json_t *status, const rz__field_t *map,
                     size_t n);
/* "k=v" lines (or "k=v, k2=v2") as a JSON object (caller owns); NULL with msg when a line is
 * not key=value. rz__pairs_text: a map as such lines (caller owns the string). */
json_t *rz__form_pairs(const char *text, char *msg, size_t size);
json_t *rz__pairs_text(const json_t *map);

/* The toast of the tabs' own actions (?toast=KEY after a redirect), beside ui.c's. */
void rz__tab_toast(rz__page_t *pg);

#endif /* RZ_WEB_TABS_H */
