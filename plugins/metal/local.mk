# The metal infra plugin: built like a third-party plugin, against the SDK headers only.
plugins_LTLIBRARIES += plugins/metal.la
plugins_metal_la_SOURCES = plugins/metal/metal.c plugins/kit/kit.c plugins/kit/kit.h
plugins_metal_la_CPPFLAGS = -I$(top_srcdir)/sdk/include
plugins_metal_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_metal_la_LDFLAGS = $(PLUGIN_LDFLAGS)
