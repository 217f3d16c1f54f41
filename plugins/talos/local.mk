# The talos cluster plugin: built like a third-party plugin, against the SDK headers only.
plugins_LTLIBRARIES += plugins/talos.la
plugins_talos_la_SOURCES = plugins/talos/talos.c plugins/talos/observe.c \
	plugins/talos/observe.h plugins/talos/etcd.c plugins/talos/etcd.h \
	plugins/kit/kit.c plugins/kit/kit.h
plugins_talos_la_CPPFLAGS = -I$(top_srcdir)/sdk/include
plugins_talos_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_talos_la_LDFLAGS = $(PLUGIN_LDFLAGS)
