# The WebUI's templates and vendored static assets are installed from this directory.

# Templates: compiled into the daemon. tools/tplc compiles each with the daemon's engine
# (a malformed one fails the build with its file:line:col) and writes the C table
# core/web/templates.gen.c, in the build tree. Every template under web/templates is listed
# here (tplc refuses one that is not), so the binary and the tarball hold the same ones.
web_templates = \
	web/templates/layout.html \
	web/templates/pages/hello.html
EXTRA_DIST += $(web_templates)

noinst_PROGRAMS += tools/tplc
tools_tplc_SOURCES = tools/tplc.c core/web/template.c core/web/template.h \
	core/base/errors.c core/base/errors.h
tools_tplc_CPPFLAGS = $(AM_CPPFLAGS) -DRZ_TPL_NO_EMBEDDED
tools_tplc_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tools_tplc_LDADD = $(JANSSON_LIBS)

nodist_core_librezus_core_la_SOURCES = core/web/templates.gen.c
CLEANFILES += core/web/templates.gen.c
core/web/templates.gen.c: tools/tplc$(EXEEXT) $(web_templates)
	@$(MKDIR_P) core/web
	$(AM_V_GEN)tools/tplc$(EXEEXT) -o $@ -C $(srcdir) -d web/templates $(web_templates)
