# The daemon: a convenience library holding every core module, linked by the thin
# main and by every test, so both run the same objects.
noinst_LTLIBRARIES += core/librezus-core.la

core_librezus_core_la_SOURCES = \
	core/errors.c core/errors.h \
	core/log.c core/log.h \
	core/config.c core/config.h core/yaml.c core/yaml.h \
	core/db.c core/db.h core/schema.c \
	core/http.c core/http.h \
	core/workers.c core/workers.h \
	core/daemon.c core/daemon.h \
	core/version.c core/version.h \
	core/fields.c core/fields.h \
	core/selector.c core/selector.h \
	core/merge.c core/merge.h \
	core/kinds.c core/kinds.h \
	core/bus.c core/bus.h \
	core/store.c core/store.h \
	core/watch.c core/watch.h \
	core/api.c core/api.h \
	core/metrics.c core/metrics.h \
	core/auth.c core/auth.h \
	core/access.c core/access.h \
	core/audit.c core/audit.h \
	core/session.c core/session.h \
	core/host.c core/host.h \
	core/plugins.c core/plugins.h \
	core/projection.c core/projection.h \
	core/compose.c core/compose.h \
	core/tfstate.c core/tfstate.h \
	core/runner.c core/runner.h \
	core/engine.c core/engine.h
core_librezus_core_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(SQLITE_CFLAGS) \
	$(JANSSON_CFLAGS) $(LIBJWT_CFLAGS) $(SODIUM_CFLAGS) $(YAML_CFLAGS) $(NETTLE_CFLAGS)
core_librezus_core_la_LIBADD = $(LIBEVENT_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) \
	$(LIBJWT_LIBS) $(SODIUM_LIBS) $(YAML_LIBS) $(NETTLE_LIBS) $(HTTP_PARSER_LIBS) $(PTHREAD_LIBS) $(DL_LIBS)

sbin_PROGRAMS += rezuscloud
dist_man_MANS += man/rezuscloud.8 man/rezus.conf.5
rezuscloud_SOURCES = core/main.c
rezuscloud_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
rezuscloud_LDADD = core/librezus-core.la
