# Unit tests: one Check program per core module, linked against the same core library
# as the daemon. Every test speaks TAP (Check writes it when CK_TAP_LOG_FILE_NAME=-), so
# the harness counts test cases, not programs.
UNIT_TESTS = \
	tests/unit/check_upgrader \
	tests/unit/check_auth \
	tests/unit/check_access \
	tests/unit/check_oidc \
	tests/unit/check_api \
	tests/unit/check_apply \
	tests/unit/check_corev1 \
	tests/unit/check_scale \
	tests/unit/check_errors \
	tests/unit/check_text \
	tests/unit/check_log \
	tests/unit/check_exec \
	tests/unit/check_config \
	tests/unit/check_db \
	tests/unit/check_backup \
	tests/unit/check_http \
	tests/unit/check_workers \
	tests/unit/check_daemon \
	tests/unit/check_fields \
	tests/unit/check_selector \
	tests/unit/check_merge \
	tests/unit/check_jsonpatch \
	tests/unit/check_fieldset \
	tests/unit/check_managed \
	tests/unit/check_store \
	tests/unit/check_events \
	tests/unit/check_bus \
	tests/unit/check_plugins \
	tests/unit/check_projection \
	tests/unit/check_proc \
	tests/unit/check_remote \
	tests/unit/check_tfui \
	tests/unit/check_engine \
	tests/unit/check_tfstate \
	tests/unit/check_report \
	tests/unit/check_observe \
	tests/unit/check_observer \
	tests/unit/check_platforms \
	tests/unit/check_talos_observe \
	tests/unit/check_talos_etcd \
	tests/unit/check_openapi \
	tests/unit/check_static \
	tests/unit/check_template \
	tests/unit/check_web \
	tests/unit/check_offsite

# Longest first (as measured on the 2-core machine), so the parallel harness does not end
# on a long one while the other core idles; but the three that mostly wait (abuse.sh's
# timed floods, history.sh's and queue.sh's held runs: 40-60 % of a core) come right after
# packaging.sh, whose two package builds use both cores meanwhile.
INTEGRATION_TESTS = \
	tests/integration/webui-tenant.sh \
	tests/integration/packaging.sh \
	tests/integration/dispatch.sh \
	tests/integration/kubectl.sh \
	tests/integration/webui-admin.sh \
	tests/integration/abuse.sh \
	tests/integration/tofufaults.sh \
	tests/integration/killfault.sh \
	tests/integration/history.sh \
	tests/integration/queue.sh \
	tests/integration/runners-scale.sh \
	tests/integration/backup.sh \
	tests/integration/webui.sh \
	tests/integration/webui-tenancy.sh \
	tests/integration/oidc.sh \
	tests/integration/oidc-cli.sh \
	tests/integration/dispatch-restart.sh \
	tests/integration/upgrade.sh \
	tests/integration/etcdbackup.sh \
	tests/integration/engine.sh \
	tests/integration/openapi.sh \
	tests/integration/cli.sh \
	tests/integration/watchabuse.sh \
	tests/integration/runners.sh \
	tests/integration/natsperms.sh \
	tests/integration/installations.sh \
	tests/integration/tenancy.sh \
	tests/integration/tenancy-table.sh \
	tests/integration/tls.sh \
	tests/integration/crash.sh \
	tests/integration/runlog.sh \
	tests/integration/concurrency.sh \
	tests/integration/firsthour.sh \
	tests/integration/observe.sh \
	tests/integration/metrics.sh \
	tests/integration/diskfault.sh \
	tests/integration/lists.sh \
	tests/integration/sdk.sh \
	tests/integration/tfstate.sh \
	tests/integration/containerfiles.sh \
	tests/integration/pyclient.sh \
	tests/integration/daemon.sh \
	tests/integration/rollback.sh \
	tests/integration/plugins.sh \
	tests/integration/fdlimit.sh \
	tests/integration/showguard.sh \
	tests/integration/manpages.sh \
	tests/integration/standins.sh \
	tests/integration/webstatic.sh \
	tests/integration/platforms.sh \
	tests/integration/loginflood.sh \
	tests/integration/attacks.sh \
	tests/integration/offsite.sh \
	tests/integration/layers.sh \
	tests/integration/tplc.sh

include tests/fixtures/plugins/local.mk
EXTRA_DIST += tests/fixtures/plugins/local.mk \
	tests/fixtures/states/oci-instances.json tests/fixtures/states/tf-data-count.json \
	tests/fixtures/states/tf-data-for-each.json tests/fixtures/states/tf-data-module.json \
	tests/fixtures/states/tf-data-two-plugins.json \
	tests/fixtures/compose/sim/sim.tf.json tests/fixtures/compose/sim/terraform.tfvars.json \
	tests/fixtures/compose/sim/variables.tf.json tests/fixtures/compose/sim/versions.tf.json

if SANITIZE
# Unit tests run with leak detection; the daemon under test in integration scripts too.
# CK_FORK=no: each Check program runs its test cases in one process, as under valgrind (a
# sanitizer error or a leak still fails the program, reported as its ERROR). Forked, each
# case paid a fork and a leak scan at its exit: 46 ms a case on the 2-core machine,
# check_fields 11.5 s instead of 0.12 s, the unit tests a twentieth of the suite's CPU.
# rzt_run bounds a program that hangs (no per-case timeout without fork).
TESTS_SAN_ENV = CK_FORK=no ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1; export CK_FORK ASAN_OPTIONS UBSAN_OPTIONS
endif

check_PROGRAMS += $(UNIT_TESTS) tests/integration/rzabuse tests/integration/rzoffsite
# What `make check` runs: CHECK_INTEGRATION_TESTS= runs the unit tests alone.
CHECK_INTEGRATION_TESTS = $(INTEGRATION_TESTS)
TESTS += $(CHECK_INTEGRATION_TESTS) $(UNIT_TESTS)
# CHECK_VALGRIND=yes runs the unit tests under valgrind as part of `make check`
# (check-valgrind below): tools/test-all's `make distcheck TESTS= CHECK_VALGRIND=yes` runs
# them that way, and only that way, in the release tarball's -Werror build.
CHECK_VALGRIND =
check-local: $(CHECK_VALGRIND:yes=check-valgrind)
# (named here as well: with TESTS= the harness's own clean rule names none of them)
CLEANFILES += tests/valgrind-suite.log $(UNIT_TESTS:=.log) $(UNIT_TESTS:=.trs)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/web/lib.mjs tests/web/webui.mjs tests/web/webui-tenant.mjs tests/web/webui-tabs.mjs tests/web/tenant-console.mjs tests/web/webui-admin.mjs tests/web/webui-tenancy.mjs tests/web/oidc.mjs tests/web/oidc-cli.mjs tests/integration/lib.sh tests/integration/backup-craft.py tests/integration/k8sfront.sh build-aux/tap-driver.sh \
	tests/integration/openapi-client.ts tests/integration/openapi-heyapi.ts redocly.yaml \
	tests/plugins tests/stand-ins/talosctl tests/stand-ins/kubectl tests/stand-ins/oidc-provider.mjs
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
# PACKAGING_TEST=no (make check PACKAGING_TEST=no) leaves the slow packaging test out (the
# packages are built once, in tools/test-all's sanitizer build's suite).
# NODE_TREE is where tools/install-deps put the npm tools the browser, OpenAPI and asset
# tests use (the source tree's build/node; distcheck's copy of the tree has none, so
# tools/test-all names the original one).
NODE_TREE = $(abs_top_srcdir)/build/node
# CK_DEFAULT_TIMEOUT: a case's timeout guards against a hang, it does not time the case:
# Check's own 4 s failed cases that take 1 s on a loaded builder (make -j8 check beside
# other work); a case that sets its own keeps it.
AM_TESTS_ENVIRONMENT = \
	CK_TAP_LOG_FILE_NAME=- CK_VERBOSITY=silent CK_DEFAULT_TIMEOUT=120 \
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	PACKAGING_TEST='$(PACKAGING_TEST)' NODE_TREE='$(NODE_TREE)' \
	$(TESTS_SAN_ENV); export CK_TAP_LOG_FILE_NAME CK_VERBOSITY CK_DEFAULT_TIMEOUT top_builddir top_srcdir \
	PACKAGING_TEST NODE_TREE;

unit_test_files = $(UNIT_TESTS:=.c) tests/unit/testutil.h tests/unit/httpclient.h \
	tests/unit/apitest.h tests/unit/fakes3.h

TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS) $(JANSSON_CFLAGS)
TEST_LDADD = core/librezus-core.la $(CHECK_LIBS)

tests_unit_check_errors_SOURCES = tests/unit/check_errors.c tests/unit/testutil.h
tests_unit_check_errors_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_errors_LDADD = $(TEST_LDADD)
tests_unit_check_text_SOURCES = tests/unit/check_text.c tests/unit/testutil.h
tests_unit_check_text_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_text_LDADD = $(TEST_LDADD)
tests_unit_check_log_SOURCES = tests/unit/check_log.c tests/unit/testutil.h
tests_unit_check_log_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_log_LDADD = $(TEST_LDADD)
tests_unit_check_exec_SOURCES = tests/unit/check_exec.c tests/unit/testutil.h
tests_unit_check_exec_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_exec_LDADD = $(TEST_LDADD)
tests_unit_check_report_SOURCES = tests/unit/check_report.c tests/unit/testutil.h
tests_unit_check_report_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_report_LDADD = $(TEST_LDADD)
tests_unit_check_observe_SOURCES = tests/unit/check_observe.c tests/unit/testutil.h
tests_unit_check_observe_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_observe_LDADD = $(TEST_LDADD)
tests_unit_check_observer_SOURCES = tests/unit/check_observer.c tests/unit/testutil.h
tests_unit_check_observer_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_observer_LDADD = $(TEST_LDADD)
tests_unit_check_engine_SOURCES = tests/unit/check_engine.c tests/unit/testutil.h
tests_unit_check_engine_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_engine_LDADD = $(TEST_LDADD)
tests_unit_check_upgrader_SOURCES = tests/unit/check_upgrader.c tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_upgrader_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_upgrader_LDADD = $(TEST_LDADD)
tests_unit_check_config_SOURCES = tests/unit/check_config.c tests/unit/testutil.h
tests_unit_check_config_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_config_LDADD = $(TEST_LDADD)
tests_unit_check_db_SOURCES = tests/unit/check_db.c tests/unit/testutil.h
tests_unit_check_db_CFLAGS = $(TEST_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_check_db_LDADD = $(TEST_LDADD) $(SQLITE_LIBS) $(LIBEVENT_LIBS)
tests_unit_check_backup_SOURCES = tests/unit/check_backup.c tests/unit/testutil.h
tests_unit_check_backup_CFLAGS = $(TEST_CFLAGS) $(SODIUM_CFLAGS)
tests_unit_check_backup_LDADD = $(TEST_LDADD) $(SODIUM_LIBS)
tests_unit_check_openapi_SOURCES = tests/unit/check_openapi.c tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_openapi_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_openapi_LDADD = $(TEST_LDADD)
tests_unit_check_http_SOURCES = tests/unit/check_http.c tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_http_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_http_LDADD = $(TEST_LDADD)
tests_unit_check_workers_SOURCES = tests/unit/check_workers.c tests/unit/testutil.h
tests_unit_check_workers_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_workers_LDADD = $(TEST_LDADD)
tests_unit_check_daemon_SOURCES = tests/unit/check_daemon.c tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_daemon_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_daemon_LDADD = $(TEST_LDADD)
tests_unit_check_fields_SOURCES = tests/unit/check_fields.c tests/unit/testutil.h
tests_unit_check_fields_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_fields_LDADD = $(TEST_LDADD)
tests_unit_check_selector_SOURCES = tests/unit/check_selector.c tests/unit/testutil.h
tests_unit_check_selector_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_selector_LDADD = $(TEST_LDADD)
tests_unit_check_tfui_SOURCES = tests/unit/check_tfui.c tests/unit/testutil.h
tests_unit_check_tfui_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_tfui_LDADD = $(TEST_LDADD)
tests_unit_check_merge_SOURCES = tests/unit/check_merge.c tests/unit/testutil.h
tests_unit_check_merge_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_merge_LDADD = $(TEST_LDADD)
tests_unit_check_jsonpatch_SOURCES = tests/unit/check_jsonpatch.c tests/unit/testutil.h
tests_unit_check_jsonpatch_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_jsonpatch_LDADD = $(TEST_LDADD)
tests_unit_check_fieldset_SOURCES = tests/unit/check_fieldset.c tests/unit/testutil.h
tests_unit_check_fieldset_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_fieldset_LDADD = $(TEST_LDADD)
tests_unit_check_managed_SOURCES = tests/unit/check_managed.c tests/unit/testutil.h
tests_unit_check_managed_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_managed_LDADD = $(TEST_LDADD)
tests_unit_check_api_SOURCES = tests/unit/check_api.c tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_api_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_api_LDADD = $(TEST_LDADD)
tests_unit_check_apply_SOURCES = tests/unit/check_apply.c tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_apply_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_apply_LDADD = $(TEST_LDADD)
tests_unit_check_corev1_SOURCES = tests/unit/check_corev1.c tests/unit/apitest.h \
	tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_corev1_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_corev1_LDADD = $(TEST_LDADD)
tests_unit_check_scale_SOURCES = tests/unit/check_scale.c tests/unit/apitest.h \
	tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_scale_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_scale_LDADD = $(TEST_LDADD)
tests_unit_check_store_SOURCES = tests/unit/check_store.c tests/unit/testutil.h
tests_unit_check_store_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_store_LDADD = $(TEST_LDADD)
tests_unit_check_events_SOURCES = tests/unit/check_events.c tests/unit/testutil.h
tests_unit_check_events_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_events_LDADD = $(TEST_LDADD)
tests_unit_check_bus_SOURCES = tests/unit/check_bus.c tests/unit/testutil.h
tests_unit_check_bus_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_bus_LDADD = $(TEST_LDADD)
tests_unit_check_oidc_SOURCES = tests/unit/check_oidc.c tests/unit/testutil.h
tests_unit_check_oidc_CFLAGS = $(TEST_CFLAGS) $(OPENSSL_CFLAGS) $(SODIUM_CFLAGS)
tests_unit_check_oidc_LDADD = $(TEST_LDADD) $(OPENSSL_LIBS) $(SODIUM_LIBS)
tests_unit_check_auth_SOURCES = tests/unit/check_auth.c tests/unit/authtest.h tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_auth_CFLAGS = $(TEST_CFLAGS) $(LIBJWT_CFLAGS) $(SODIUM_CFLAGS)
tests_unit_check_auth_LDADD = $(TEST_LDADD) $(LIBJWT_LIBS) $(SODIUM_LIBS)
tests_unit_check_access_SOURCES = tests/unit/check_access.c tests/unit/authtest.h tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_access_CFLAGS = $(TEST_CFLAGS) $(SODIUM_CFLAGS)
tests_unit_check_access_LDADD = $(TEST_LDADD) $(SODIUM_LIBS)
tests_unit_check_plugins_SOURCES = tests/unit/check_plugins.c tests/unit/testutil.h
tests_unit_check_plugins_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_plugins_LDADD = $(TEST_LDADD)
tests_unit_check_projection_SOURCES = tests/unit/check_projection.c tests/unit/testutil.h
tests_unit_check_projection_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_projection_LDADD = $(TEST_LDADD)
tests_unit_check_proc_SOURCES = tests/unit/check_proc.c tests/unit/testutil.h
tests_unit_check_proc_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_proc_LDADD = $(TEST_LDADD)
tests_unit_check_remote_SOURCES = tests/unit/check_remote.c tests/unit/testutil.h
tests_unit_check_remote_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_remote_LDADD = $(TEST_LDADD)
tests_unit_check_tfstate_SOURCES = tests/unit/check_tfstate.c tests/unit/testutil.h
tests_unit_check_tfstate_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_tfstate_LDADD = $(TEST_LDADD)
tests_unit_check_platforms_SOURCES = tests/unit/check_platforms.c tests/unit/testutil.h \
	sdk/check/tfcheck.c sdk/check/tfcheck.h
tests_unit_check_platforms_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_platforms_LDADD = $(TEST_LDADD)
tests_unit_check_talos_observe_SOURCES = tests/unit/check_talos_observe.c tests/unit/testutil.h
tests_unit_check_talos_observe_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_talos_observe_LDADD = $(TEST_LDADD)
tests_unit_check_talos_etcd_SOURCES = tests/unit/check_talos_etcd.c tests/unit/testutil.h
tests_unit_check_talos_etcd_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_talos_etcd_LDADD = $(TEST_LDADD)
tests_unit_check_template_SOURCES = tests/unit/check_template.c tests/unit/testutil.h
tests_unit_check_template_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_template_LDADD = $(TEST_LDADD)
tests_unit_check_static_SOURCES = tests/unit/check_static.c tests/unit/testutil.h tests/unit/httpclient.h
tests_unit_check_static_CFLAGS = $(TEST_CFLAGS) $(SODIUM_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_check_static_LDADD = $(TEST_LDADD) $(SODIUM_LIBS) $(ZLIB_LIBS)
tests_unit_check_web_SOURCES = tests/unit/check_web.c tests/unit/testutil.h
tests_unit_check_web_CFLAGS = $(TEST_CFLAGS) $(SODIUM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_check_web_LDADD = $(TEST_LDADD) $(SODIUM_LIBS) $(LIBEVENT_LIBS)
tests_unit_check_offsite_SOURCES = tests/unit/check_offsite.c tests/unit/testutil.h tests/unit/fakes3.h
tests_unit_check_offsite_CFLAGS = $(TEST_CFLAGS) $(SODIUM_CFLAGS)
tests_unit_check_offsite_LDADD = $(TEST_LDADD) $(SODIUM_LIBS)

# abuse.sh's client: thousands of hostile connections from one small process.
tests_integration_rzabuse_SOURCES = tests/integration/rzabuse.c
# offsite.sh's driver of core/offsite (seal, and targets against a real S3 server).
tests_integration_rzoffsite_SOURCES = tests/integration/rzoffsite.c
tests_integration_rzoffsite_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_integration_rzoffsite_LDADD = core/librezus-core.la

# The fault tests at length (docs/hardening.md, "Fault tests"): 500 kill -9 points instead of
# the suite's 50, then the disk faults.
check-faults-long:
	REZUS_KILL_POINTS=500 $(MAKE) $(AM_MAKEFLAGS) check \
		TESTS='tests/integration/killfault.sh tests/integration/diskfault.sh'

# The abuse tests (docs/hardening.md, "Abuse tests"), with the misbehaving tofu printing
# 3 GB instead of the suite's 256 MB.
check-abuse-long:
	TOFUFAULTS_FLOOD=3G $(MAKE) $(AM_MAKEFLAGS) check \
		TESTS='tests/integration/abuse.sh tests/integration/watchabuse.sh \
		tests/integration/loginflood.sh tests/integration/tofufaults.sh'

.PHONY: check-faults-long check-abuse-long

# The unit tests under valgrind's memcheck (docs/hardening.md, "Valgrind"): every Check
# program through automake's LOG_COMPILER. CK_FORK=no: Check then runs all of a program's
# test cases in one process, so memcheck watches every one of them and checks for leaks
# once, at the end, instead of once per forked child (check_fields: 4 s instead of 150 s).
# A memcheck error or a definite leak makes the program exit 1, which the TAP driver
# reports as an ERROR of that program beside its test cases. The programs tests run (sh,
# the tofu stand-ins) are not traced. VALGRIND_TESTS narrows the run. RZT_VALGRIND=1 tells
# a test to take a smaller sample where its size is a matter of time only (check_api's
# streamed list: 3,001 objects instead of 10,000, every page bound still crossed; check_auth's
# role matrix: each route and method with three of the nine principals, every one crossed).
# Every unit test runs: check_auth too, since the unit tests hash passwords at Argon2id's
# minimum cost (27 s under memcheck, not six minutes). VALGRIND_SKIP leaves programs out.
VALGRIND_SKIP =
VALGRIND_TESTS = $(UNIT_TESTS)
VALGRIND_FLAGS = --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --num-callers=30 \
	--suppressions=$(abs_top_srcdir)/tests/valgrind.supp
EXTRA_DIST += tests/valgrind.supp

# CHECK_VALGRIND_AFTER=FILE: the unit tests wait until FILE exists (4 hours at most), so that a
# build started beside other work (tools/test-all's distcheck beside the suite) runs them
# alone: a starved valgrind misses the unit tests' timers.
CHECK_VALGRIND_AFTER =
check-valgrind:
	@if test -z "$(VALGRIND)"; then echo "check-valgrind: valgrind not found" >&2; exit 1; fi
	@if test -n "$(SANITIZE_CFLAGS)"; then \
		echo "check-valgrind: use a build without sanitizers" >&2; exit 1; fi
	@if test -n "$(CHECK_VALGRIND_AFTER)"; then \
		n=0; while test ! -e "$(CHECK_VALGRIND_AFTER)" && test $$n -lt 14400; do \
			sleep 1; n=`expr $$n + 1`; done; \
		echo "check-valgrind: waited $$n s for $(CHECK_VALGRIND_AFTER)"; fi
	list=; for t in $(VALGRIND_TESTS); do \
		case " $(VALGRIND_SKIP) " in *" $$t "*) ;; *) list="$$list $$t" ;; esac; \
	done; \
	CK_FORK=no RZT_VALGRIND=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS="$$list" CHECK_VALGRIND= \
		TEST_SUITE_LOG=tests/valgrind-suite.log LOG_COMPILER="$(VALGRIND) $(VALGRIND_FLAGS)"

.PHONY: check-valgrind

# The browser tests' screenshots (tests/integration/webui.sh).
clean-local: clean-webui
clean-webui:
	rm -rf webui-screenshots
.PHONY: clean-webui
