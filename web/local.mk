# The WebUI's templates and vendored static assets are installed from this directory.

# Templates: compiled into the daemon. tools/tplc compiles each with the daemon's engine
# (a malformed one fails the build with its file:line:col) and writes the C table
# core/web/templates.gen.c, in the build tree. Every template under web/templates is listed
# here (tplc refuses one that is not), so the binary and the tarball hold the same ones.
web_templates = \
	web/templates/layout.html \
	web/templates/pages/hello.html \
	web/templates/partials/htmx-config.html \
	web/templates/parts/top.html web/templates/parts/bottom.html \
	web/templates/parts/tabs.html web/templates/parts/tenant-rows.html \
	web/templates/parts/machine-rows.html web/templates/parts/nodegroups.html \
	web/templates/parts/runs.html \
	web/templates/pages/error.html web/templates/pages/login.html \
	web/templates/pages/password.html web/templates/pages/dashboard.html \
	web/templates/pages/tenants.html web/templates/pages/tenant.html \
	web/templates/pages/run.html web/templates/pages/delete-nodegroup.html \
	web/templates/pages/scale-nodegroup.html \
	web/templates/pages/configpatches.html web/templates/pages/upgrades.html \
	web/templates/pages/upgrade.html web/templates/parts/upgrade-live.html \
	web/templates/pages/state.html web/templates/pages/rollback-state.html \
	web/templates/pages/credentials.html web/templates/pages/delete-tenant.html \
	web/templates/pages/delete-configpatch.html \
	web/templates/pages/providers.html web/templates/pages/users.html \
	web/templates/pages/user.html web/templates/pages/token.html \
	web/templates/pages/confirm.html web/templates/pages/audit.html \
	web/templates/pages/backups.html web/templates/pages/account.html \
	web/templates/pages/bindings.html \
	web/templates/pages/etcdbackups.html web/templates/parts/etcdbackup-rows.html \
	web/templates/pages/etcd-restore-confirm.html web/templates/pages/etcd-restore.html \
	web/templates/parts/etcdrestore-live.html \
	web/templates/parts/badge.html web/templates/parts/when.html \
	web/templates/parts/dashboard-panels.html \
	web/templates/pages/events.html web/templates/parts/event-rows.html \
	web/templates/pages/runners.html web/templates/parts/runner-rows.html \
	web/templates/pages/edit-tenant.html web/templates/pages/edit-nodegroup.html \
	web/templates/parts/form-problems.html web/templates/parts/upgrade-rows.html \
	web/templates/pages/unlock-state.html web/templates/parts/etcdrestore-rows.html \
	web/templates/parts/tenant-header.html web/templates/parts/tenant-head.html \
	web/templates/parts/tenant-head-live.html web/templates/parts/machines-live.html \
	web/templates/parts/machine-grid.html web/templates/parts/nodegroup-rows.html \
	web/templates/parts/patch-rows.html web/templates/parts/audit-rows.html \
	web/templates/parts/backup-list.html web/templates/parts/user-rows.html \
	web/templates/parts/user-tokens.html web/templates/parts/account-tokens.html \
	web/templates/parts/token-head.html web/templates/parts/token-cells.html \
	web/templates/parts/credentials-state.html web/templates/parts/effective-patches.html \
	web/templates/parts/run-rows.html web/templates/parts/run-head.html \
	web/templates/parts/machine-head.html \
	web/templates/pages/machine.html web/templates/parts/overview-live.html
EXTRA_DIST += $(web_templates)

noinst_PROGRAMS += tools/tplc
tools_tplc_SOURCES = tools/tplc.c core/web/template.c core/web/template.h \
	core/base/errors.c core/base/errors.h core/base/text.c core/base/text.h
tools_tplc_CPPFLAGS = $(AM_CPPFLAGS) -DRZ_TPL_NO_EMBEDDED
tools_tplc_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tools_tplc_LDADD = $(JANSSON_LIBS)

nodist_core_librezus_core_la_SOURCES += core/web/templates.gen.c
CLEANFILES += core/web/templates.gen.c
core/web/templates.gen.c: tools/tplc$(EXEEXT) $(web_templates)
	@$(MKDIR_P) core/web
	$(AM_V_GEN)tools/tplc$(EXEEXT) -o $@ -C $(srcdir) -d web/templates $(web_templates)

# The WebUI's sources. web/static/ holds the vendored and built assets, committed so that
# building the daemon needs no Node: `make web-assets` regenerates them from the npm
# packages tools/install-deps puts into build/node (tools/web-assets). core/web/mkstatic
# embeds every file listed here into the daemon (core/web/static.h).
# A file added to web/static/ is served once it is named here (base names are unique).
web_static_files = web/static/LICENSES web/static/app.css web/static/htmx.min.js \
	web/static/htmx-ext-sse.min.js web/static/alpine.min.js web/static/csrf.js \
	web/static/time.js web/static/favicon.svg web/static/copy.js web/static/live.js

EXTRA_PROGRAMS += core/web/mkstatic
core_web_mkstatic_SOURCES = core/web/mkstatic.c
core_web_mkstatic_CFLAGS = $(AM_CFLAGS) $(SODIUM_CFLAGS) $(ZLIB_CFLAGS)
core_web_mkstatic_LDADD = $(SODIUM_LIBS) $(ZLIB_LIBS)

nodist_core_librezus_core_la_SOURCES += core/web/static-data.c
core/web/static-data.c: core/web/mkstatic$(EXEEXT) $(web_static_files)
	$(AM_V_GEN)$(MKDIR_P) core/web && \
	core/web/mkstatic$(EXEEXT) $@.tmp $(srcdir) $(web_static_files) && mv $@.tmp $@
CLEANFILES += core/web/static-data.c core/web/mkstatic$(EXEEXT)
EXTRA_DIST += $(web_static_files) web/styles/app.css tools/web-assets

web-assets:
	$(srcdir)/tools/web-assets

.PHONY: web-assets
