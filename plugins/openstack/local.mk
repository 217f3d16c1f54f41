# The openstack infra plugin: built like a third-party plugin, against the SDK headers only.
plugins_LTLIBRARIES += plugins/openstack.la
plugins_openstack_la_SOURCES = plugins/openstack/openstack.c plugins/kit/kit.c plugins/kit/kit.h
plugins_openstack_la_CPPFLAGS = -I$(top_srcdir)/sdk/include
plugins_openstack_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_openstack_la_LDFLAGS = $(PLUGIN_LDFLAGS)
