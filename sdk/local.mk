# The plugin SDK: installed headers (the plugin ABI grows here; see rezus/plugin.h).
rezusincludedir = $(includedir)/rezus
rezusinclude_HEADERS = \
	sdk/include/rezus/errors.h \
	sdk/include/rezus/host.h \
	sdk/include/rezus/plugin.h \
	sdk/include/rezus/version.h

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = sdk/rezus-plugin.pc
EXTRA_DIST += sdk/rezus-plugin.pc.in

# The example plugin, for vendors to copy: built out of tree with only the installed SDK.
exampledir = $(docdir)/example
dist_example_DATA = sdk/example/Makefile sdk/example/example.c
