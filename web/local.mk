# The WebUI's sources. web/static/ holds the vendored and built assets, committed so that
# building the daemon needs no Node: `make web-assets` regenerates them from the npm
# packages tools/install-deps puts into build/node (tools/web-assets). core/web/mkstatic
# embeds every file listed here into the daemon (core/web/static.h).
# A file added to web/static/ is served once it is named here (base names are unique).
web_static_files = web/static/LICENSES web/static/app.css web/static/htmx.min.js \
	web/static/htmx-ext-sse.min.js web/static/alpine.min.js

EXTRA_PROGRAMS += core/web/mkstatic
core_web_mkstatic_SOURCES = core/web/mkstatic.c
core_web_mkstatic_CFLAGS = $(AM_CFLAGS) $(SODIUM_CFLAGS) $(ZLIB_CFLAGS)
core_web_mkstatic_LDADD = $(SODIUM_LIBS) $(ZLIB_LIBS)

nodist_core_librezus_core_la_SOURCES += core/web/static-data.c
core/web/static-data.c: core/web/mkstatic$(EXEEXT) $(web_static_files)
	$(AM_V_GEN)$(MKDIR_P) core/web && \
	core/web/mkstatic$(EXEEXT) $@.tmp $(srcdir) $(web_static_files) && mv $@.tmp $@
CLEANFILES += core/web/static-data.c core/web/mkstatic$(EXEEXT)
EXTRA_DIST += $(web_static_files) web/styles/app.css tools/web-assets \
	web/templates/partials/htmx-config.html

web-assets:
	$(srcdir)/tools/web-assets

.PHONY: web-assets
