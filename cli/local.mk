# rezusctl, the command-line client (SPEC §10): libcurl for HTTP, jansson for JSON, libyaml
# for YAML (reading through core/base/yaml.c, which is linked from the core library).
bin_PROGRAMS += rezusctl
rezusctl_SOURCES = cli/rezusctl.h cli/main.c cli/http.c cli/conf.c cli/kinds.c cli/out.c \
	cli/objects.c cli/apply.c cli/runs.c cli/admin.c cli/oidc.c cli/boot.c cli/export.c
rezusctl_CPPFLAGS = $(AM_CPPFLAGS) -DRZ_DATADIR='"$(datadir)/rezus"'
rezusctl_CFLAGS = $(AM_CFLAGS) $(LIBCURL_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) \
	$(SODIUM_CFLAGS)
rezusctl_LDADD = core/librezus-core.la $(LIBCURL_LIBS) $(SODIUM_LIBS)

dist_man_MANS += man/rezusctl.1
deploydir = $(datadir)/rezus/deploy/kubernetes
dist_deploy_DATA = deploy/kubernetes/rezuscloud.yaml
