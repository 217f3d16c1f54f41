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

/* The toast of the tabs' own actions (?toast=KEY after a redirect), beside ui.c's. */
void rz__tab_toast(rz__page_t *pg);

#endif /* RZ_WEB_TABS_H */
