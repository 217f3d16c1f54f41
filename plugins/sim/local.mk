# The sim plugin: built exactly like a third-party plugin, against the SDK headers only.
plugins_LTLIBRARIES += plugins/sim.la
plugins_sim_la_SOURCES = plugins/sim/sim.c
plugins_sim_la_CPPFLAGS = -I$(top_srcdir)/sdk/include
plugins_sim_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_sim_la_LDFLAGS = $(PLUGIN_LDFLAGS)
