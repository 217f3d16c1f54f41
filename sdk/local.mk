# The plugin SDK: installed headers (the plugin ABI grows here; see rezus/plugin.h).
rezusincludedir = $(includedir)/rezus
rezusinclude_HEADERS = \
	sdk/include/rezus/errors.h \
	sdk/include/rezus/host.h \
	sdk/include/rezus/plugin.h \
	sdk/include/rezus/version.h
