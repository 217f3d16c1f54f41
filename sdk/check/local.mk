# rezus-plugin-check: the conformance checker shipped with the SDK.
bin_PROGRAMS += rezus-plugin-check
rezus_plugin_check_SOURCES = sdk/check/check.c sdk/check/tfcheck.c sdk/check/tfcheck.h
rezus_plugin_check_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
rezus_plugin_check_LDADD = core/librezus-core.la
dist_man_MANS += man/rezus-plugin-check.1 man/rezus-plugin.7
