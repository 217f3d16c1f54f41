# The install layout (SPEC §12): the default configuration, the files for the service
# manager and the shells. packaging/debian and packaging/rpm build the packages from it.

# rezus.conf is written from the settings table, so it lists every key rezuscloud reads,
# with its default and help; it loads every platform plugin built here (sim stays
# commented: it simulates a platform, for trying RezusCloud without a cloud).
noinst_PROGRAMS += tools/mkconf
tools_mkconf_SOURCES = tools/mkconf.c
tools_mkconf_LDADD = core/librezus-core.la

rezusconfdir = $(sysconfdir)/rezus
rezusconf_DATA = packaging/rezus.conf
packaging/rezus.conf: tools/mkconf$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) packaging && \
	tools/mkconf$(EXEEXT) -o $@ $$(for p in $(plugins_LTLIBRARIES); do \
		n=$$(basename $$p .la); if [ "$$n" = sim ]; then echo "#$$n"; else echo "$$n"; fi; done)

systemdsystemunit_DATA = packaging/systemd/rezuscloud.service
packaging/systemd/rezuscloud.service: packaging/systemd/rezuscloud.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) packaging/systemd && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
		$(srcdir)/packaging/systemd/rezuscloud.service.in >$@

# The system user and its state directory, for systemd-sysusers and systemd-tmpfiles.
dist_sysusers_DATA = packaging/systemd/sysusers.d/rezus.conf
dist_tmpfiles_DATA = packaging/systemd/tmpfiles.d/rezus.conf

# Completion scripts: what `rezusctl completion SHELL` prints, so they follow the command
# table. bash looks for completions/rezusctl, zsh for _rezusctl on its fpath.
bashcompletion_DATA = packaging/completion/rezusctl
zshcompletion_DATA = packaging/completion/_rezusctl
packaging/completion/rezusctl: rezusctl$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) packaging/completion && ./rezusctl$(EXEEXT) completion bash >$@
packaging/completion/_rezusctl: rezusctl$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) packaging/completion && ./rezusctl$(EXEEXT) completion zsh >$@

CLEANFILES += packaging/rezus.conf packaging/systemd/rezuscloud.service \
	packaging/completion/rezusctl packaging/completion/_rezusctl
EXTRA_DIST += packaging/systemd/rezuscloud.service.in

# The distribution packages' sources travel in the tarball (tests/integration/packaging.sh
# builds both from it); rpmbuild -tb reads the spec configure wrote.
EXTRA_DIST += packaging/rpm/rezuscloud.spec.in packaging/rpm/rezuscloud.spec \
	packaging/rpm/rezuscloud.rpmlintrc \
	packaging/debian/changelog packaging/debian/control packaging/debian/copyright \
	packaging/debian/rules packaging/debian/source/format \
	packaging/debian/rezuscloud.install \
	packaging/debian/rezuscloud.postrm packaging/debian/rezusctl.install \
	packaging/debian/rezusctl.docs packaging/debian/rezuscloud-plugin-dev.install \
	packaging/debian/rezuscloud-plugin-dev.lintian-overrides \
	packaging/debian/rezuscloud.lintian-overrides

# The container image and the Home Assistant add-on built on it (`make container` in
# Makefile.am); tests/integration/containerfiles.sh checks them from the tarball too.
EXTRA_DIST += .dockerignore packaging/container/Containerfile \
	packaging/homeassistant/repository.yaml packaging/homeassistant/rezuscloud/config.yaml \
	packaging/homeassistant/rezuscloud/Dockerfile packaging/homeassistant/rezuscloud/run.sh \
	packaging/homeassistant/rezuscloud/DOCS.md packaging/homeassistant/rezuscloud/README.md \
	packaging/homeassistant/rezuscloud/build.yaml packaging/homeassistant/rezuscloud/CHANGELOG.md \
	packaging/homeassistant/rezuscloud/icon.png packaging/homeassistant/rezuscloud/logo.png \
	packaging/homeassistant/rezuscloud/translations/en.yaml
