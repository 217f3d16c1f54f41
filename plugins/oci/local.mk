# The oci infra plugin: built like a third-party plugin, against the SDK headers only.
plugins_LTLIBRARIES += plugins/oci.la
plugins_oci_la_SOURCES = plugins/oci/oci.c plugins/kit/kit.c plugins/kit/kit.h
plugins_oci_la_CPPFLAGS = -I$(top_srcdir)/sdk/include
plugins_oci_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_oci_la_LDFLAGS = $(PLUGIN_LDFLAGS)
