# The daemon: a convenience library holding every core module, linked by the thin
# main and by every test, so both run the same objects.
noinst_LTLIBRARIES += core/librezus-core.la

# One folder a subsystem, listed from the bottom of the dependency order up
# (docs/architecture.md, "Layers"; tests/integration/layers.sh enforces it).
core_librezus_core_la_SOURCES = \
	core/base/errors.c core/base/errors.h \
	core/base/text.c core/base/text.h \
	core/base/log.c core/base/log.h \
	core/base/config.c core/base/config.h \
	core/base/settings.c core/base/settings.h \
	core/base/yaml.c core/base/yaml.h \
	core/base/exec.c core/base/exec.h \
	core/base/clock.c core/base/clock.h \
	core/base/proc.c core/base/proc.h \
	core/base/workers.c core/base/workers.h \
	core/base/version.c core/base/version.h \
	core/http/status.c core/http/status.h \
	core/http/http.c core/http/http.h core/http/http-int.h \
	core/http/conn.c core/http/peer.c core/http/parse.c core/http/request.c \
	core/http/route.c core/http/reply.c core/http/inproc.c core/http/accesslog.c \
	core/http/tls.c core/http/tls.h \
	core/http/client.c core/http/client.h \
	core/model/fields.c core/model/fields.h core/model/formats.c \
	core/model/selector.c core/model/selector.h \
	core/model/merge.c core/model/merge.h \
	core/model/jsonpatch.c core/model/jsonpatch.h \
	core/model/kinds.c core/model/kinds.h core/model/kinds-int.h \
	core/model/schema-tenant.c core/model/schema-runs.c core/model/schema-access.c core/model/schema-etcd.c \
	core/model/fieldset.c core/model/fieldset.h \
	core/model/managed.c core/model/managed.h \
	core/model/states.c core/model/states.h core/model/tbl/run_operations.h core/model/tbl/run_triggers.h \
	core/model/tbl/run_phases.h core/model/tbl/upgrade_phases.h core/model/tbl/upgrade_steps.h \
	core/model/tbl/machine_stages.h core/model/tbl/etcd_backup_phases.h \
	core/model/tbl/etcd_restore_phases.h core/model/tbl/etcd_restore_steps.h \
	core/model/columns.c core/model/columns.h \
	core/model/conditions.c core/model/conditions.h \
	core/store/db.c core/store/db.h core/store/db-int.h core/store/durable.c \
	core/store/schema.c \
	core/store/datadir.c core/store/datadir.h \
	core/store/bus.c core/store/bus.h \
	core/store/store.c core/store/store.h core/store/store-int.h core/store/read.c \
	core/store/sweep.c core/store/sweep.h \
	core/store/events.c core/store/events.h \
	core/store/backup.c core/store/backup.h \
	core/store/restore.c core/store/restore.h \
	core/auth/auth.c core/auth/auth.h core/auth/auth-int.h core/auth/login.c \
	core/auth/bindings.c core/auth/bindings.h \
	core/auth/review.c core/auth/review.h \
	core/auth/access.c core/auth/access.h \
	core/auth/audit.c core/auth/audit.h \
	core/auth/session.c core/auth/session.h \
	core/auth/jws.c core/auth/jws.h \
	core/auth/oidc.c core/auth/oidc.h \
	core/auth/sso.c core/auth/sso.h \
	core/plugin/host.c core/plugin/host.h \
	core/plugin/probe.c core/plugin/probe.h \
	core/plugin/plugins.c core/plugin/plugins.h \
	core/plugin/projection.c core/plugin/projection.h \
	core/plugin/compose.c core/plugin/compose.h \
	core/offsite/offsite-int.h core/offsite/files.c \
	core/offsite/seal.c core/offsite/seal.h \
	core/offsite/target.c core/offsite/target.h core/offsite/local.c \
	core/offsite/s3.c core/offsite/s3conf.c core/offsite/s3xml.c \
	core/tfstate/tfstate.c core/tfstate/tfstate.h core/tfstate/tfstate-int.h core/tfstate/outputs.c \
	core/tfstate/history.c \
	core/report/report.c core/report/report.h \
	core/api/watch.c core/api/watch.h \
	core/api/lists.c core/api/lists.h core/api/textbuf.h \
	core/api/api.c core/api/api.h core/api/api-int.h \
	core/api/reply.c core/api/validate.c core/api/read.c core/api/table.c \
	core/api/write.c core/api/apply.c core/api/kindhooks.c \
	core/api/discovery.c core/api/effective.c core/api/summary.c \
	core/api/corev1.c core/api/scale.c \
	core/api/openapi.c core/api/openapi.h \
	core/api/metrics.c core/api/metrics.h \
	core/api/backups.c core/api/backups.h \
	core/engine/plan.c core/engine/plan.h \
	core/engine/tfui.c core/engine/tfui.h \
	core/engine/runlog.c core/engine/runlog.h \
	core/engine/engine.c core/engine/engine.h core/engine/engine-int.h core/engine/executor.h \
	core/engine/queue.c core/engine/run.c core/engine/steps.c core/engine/workdir.c \
	core/engine/settle.c core/engine/recover.c core/engine/claim.c core/engine/routes.c \
	core/engine/export.c \
	core/remote/nats.c core/remote/nats.h \
	core/remote/heartbeat.c core/remote/heartbeat.h \
	core/remote/dispatch.c core/remote/dispatch.h \
	core/remote/roster.c core/remote/roster.h \
	core/remote/runners.c core/remote/runners.h \
	core/remote/agent.c core/remote/agent.h \
	core/remote/work.c core/remote/work.h \
	core/observe/observe.c core/observe/observe.h \
	core/upgrade/compat.c core/upgrade/compat.h \
	core/upgrade/upgrade.c core/upgrade/upgrade.h \
	core/etcdbackup/etcdbackup.c core/etcdbackup/etcdbackup.h \
	core/web/static.c core/web/static.h \
	core/web/template.c core/web/template.h \
	core/web/ui.c core/web/ui.h core/web/page.h core/web/pages.c core/web/live.c \
	core/web/tenant-pages.c core/web/tabs.h core/web/patch-pages.c \
	core/web/upgrade-pages.c core/web/state-pages.c core/web/edit-pages.c \
	core/web/form.c \
	core/web/tenant-overview.c core/web/nodegroup-pages.c core/web/run-pages.c \
	core/web/rows.c \
	core/web/view.c \
	core/web/etcd-pages.c \
	core/web/admin-pages.c \
	core/web/user-pages.c \
	core/web/audit-pages.c \
	core/web/tokens.c \
	core/web/dashboard-pages.c \
	core/web/live-view.c \
	core/web/event-pages.c \
	core/web/runner-pages.c \
	core/web/account-pages.c \
	core/web/binding-pages.c \
	core/web/sso-pages.c \
	core/daemon.c core/daemon.h core/daemon-int.h core/service.c core/cmdline.c \
	core/offline.c core/offline.h
# Generated in the build tree (web/local.mk: the embedded static assets).
nodist_core_librezus_core_la_SOURCES =
core_librezus_core_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBEVENT_OPENSSL_CFLAGS) \
	$(OPENSSL_CFLAGS) $(SQLITE_CFLAGS) \
	$(JANSSON_CFLAGS) $(LIBJWT_CFLAGS) $(SODIUM_CFLAGS) $(YAML_CFLAGS) $(NETTLE_CFLAGS) \
	$(ZLIB_CFLAGS) $(LIBSYSTEMD_CFLAGS) $(LIBNATS_CFLAGS) $(LIBCURL_CFLAGS)
core_librezus_core_la_LIBADD = $(LIBEVENT_LIBS) $(LIBEVENT_OPENSSL_LIBS) $(OPENSSL_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) \
	$(LIBJWT_LIBS) $(SODIUM_LIBS) $(YAML_LIBS) $(NETTLE_LIBS) $(ZLIB_LIBS) $(HTTP_PARSER_LIBS) $(PTHREAD_LIBS) $(DL_LIBS) \
	$(LIBSYSTEMD_LIBS) $(LIBNATS_LIBS) $(LIBCURL_LIBS)

sbin_PROGRAMS += rezuscloud
dist_man_MANS += man/rezuscloud.8 man/rezus.conf.5
rezuscloud_SOURCES = core/main.c
rezuscloud_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
rezuscloud_LDADD = core/librezus-core.la
