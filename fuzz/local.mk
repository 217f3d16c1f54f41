# libFuzzer targets, one per input surface (docs/hardening.md, "Fuzzing"). Built with
# ./configure CC=clang --enable-fuzzing; `make fuzz-smoke` runs each for FUZZ_SECONDS over
# its seed corpus (fuzz/corpus/<target>) and fails on any crash; `make fuzz-long` runs them
# for FUZZ_LONG_SECONDS each.
FUZZ_TARGETS = \
	fuzz/fuzz_kinds \
	fuzz/fuzz_selector \
	fuzz/fuzz_merge \
	fuzz/fuzz_jsonpatch \
	fuzz/fuzz_fieldset \
	fuzz/fuzz_config \
	fuzz/fuzz_manifest \
	fuzz/fuzz_configpatch \
	fuzz/fuzz_tfstate \
	fuzz/fuzz_projection \
	fuzz/fuzz_template \
	fuzz/fuzz_jwt \
	fuzz/fuzz_continue \
	fuzz/fuzz_http_request \
	fuzz/fuzz_review \
	fuzz/fuzz_s3xml

FUZZ_SECONDS = 10
FUZZ_LONG_SECONDS = 1800

fuzz_sources = fuzz/kinds.c fuzz/selector.c fuzz/merge.c fuzz/jsonpatch.c fuzz/fieldset.c fuzz/config.c \
	fuzz/manifest.c fuzz/configpatch.c fuzz/tfstate.c fuzz/projection.c fuzz/template.c fuzz/jwt.c \
	fuzz/continue.c fuzz/http_request.c fuzz/review.c fuzz/s3xml.c fuzz/fuzz.h fuzz/env.h \
	fuzz/serve.h
EXTRA_DIST += $(fuzz_sources) fuzz/local.mk fuzz/run fuzz/corpus

if FUZZING
noinst_PROGRAMS += $(FUZZ_TARGETS)

FUZZ_TARGET_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) \
	$(LIBEVENT_CFLAGS)
FUZZ_TARGET_LDADD = core/librezus-core.la

fuzz_fuzz_kinds_SOURCES = fuzz/kinds.c fuzz/fuzz.h
fuzz_fuzz_selector_SOURCES = fuzz/selector.c fuzz/fuzz.h
fuzz_fuzz_merge_SOURCES = fuzz/merge.c fuzz/fuzz.h
fuzz_fuzz_jsonpatch_SOURCES = fuzz/jsonpatch.c fuzz/fuzz.h
fuzz_fuzz_fieldset_SOURCES = fuzz/fieldset.c fuzz/fuzz.h
fuzz_fuzz_config_SOURCES = fuzz/config.c fuzz/fuzz.h
fuzz_fuzz_configpatch_SOURCES = fuzz/configpatch.c fuzz/fuzz.h
fuzz_fuzz_tfstate_SOURCES = fuzz/tfstate.c fuzz/fuzz.h fuzz/env.h fuzz/serve.h
fuzz_fuzz_projection_SOURCES = fuzz/projection.c fuzz/fuzz.h
fuzz_fuzz_template_SOURCES = fuzz/template.c fuzz/fuzz.h
fuzz_fuzz_jwt_SOURCES = fuzz/jwt.c fuzz/fuzz.h fuzz/env.h
fuzz_fuzz_continue_SOURCES = fuzz/continue.c fuzz/fuzz.h
fuzz_fuzz_http_request_SOURCES = fuzz/http_request.c fuzz/fuzz.h fuzz/serve.h
fuzz_fuzz_review_SOURCES = fuzz/review.c fuzz/fuzz.h
fuzz_fuzz_s3xml_SOURCES = fuzz/s3xml.c fuzz/fuzz.h
# The CLI has no library: the target links its sources but main.c.
fuzz_fuzz_manifest_SOURCES = fuzz/manifest.c fuzz/fuzz.h cli/rezusctl.h cli/http.c cli/conf.c \
	cli/kinds.c cli/out.c cli/objects.c cli/apply.c cli/runs.c cli/admin.c cli/oidc.c cli/boot.c
fuzz_fuzz_manifest_CPPFLAGS = $(AM_CPPFLAGS) -DRZ_DATADIR='"$(datadir)/rezus"'
fuzz_fuzz_manifest_CFLAGS = $(FUZZ_TARGET_CFLAGS) $(LIBCURL_CFLAGS) $(SODIUM_CFLAGS)
fuzz_fuzz_manifest_LDADD = $(FUZZ_TARGET_LDADD) $(LIBCURL_LIBS) $(SODIUM_LIBS)
fuzz_fuzz_manifest_LDFLAGS = $(FUZZ_CFLAGS)

fuzz_fuzz_kinds_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_kinds_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_kinds_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_selector_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_selector_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_selector_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_merge_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_merge_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_merge_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_jsonpatch_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_jsonpatch_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_jsonpatch_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_fieldset_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_fieldset_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_fieldset_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_config_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_config_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_config_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_configpatch_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_configpatch_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_configpatch_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_tfstate_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_tfstate_LDADD = $(FUZZ_TARGET_LDADD) $(LIBEVENT_LIBS)
fuzz_fuzz_tfstate_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_projection_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_projection_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_projection_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_template_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_template_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_template_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_jwt_CFLAGS = $(FUZZ_TARGET_CFLAGS) $(LIBJWT_CFLAGS) $(SODIUM_CFLAGS)
fuzz_fuzz_jwt_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_jwt_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_continue_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_continue_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_continue_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_http_request_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_http_request_LDADD = $(FUZZ_TARGET_LDADD) $(LIBEVENT_LIBS)
fuzz_fuzz_http_request_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_review_CFLAGS = $(FUZZ_TARGET_CFLAGS) $(SODIUM_CFLAGS)
fuzz_fuzz_review_LDADD = $(FUZZ_TARGET_LDADD) $(LIBEVENT_LIBS)
fuzz_fuzz_review_LDFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_s3xml_CFLAGS = $(FUZZ_TARGET_CFLAGS)
fuzz_fuzz_s3xml_LDADD = $(FUZZ_TARGET_LDADD)
fuzz_fuzz_s3xml_LDFLAGS = $(FUZZ_CFLAGS)

fuzz-build: $(FUZZ_TARGETS)

fuzz-smoke: $(FUZZ_TARGETS)
	$(SHELL) $(srcdir)/fuzz/run $(FUZZ_SECONDS) $(srcdir) $(FUZZ_TARGETS)

fuzz-long: $(FUZZ_TARGETS)
	$(SHELL) $(srcdir)/fuzz/run $(FUZZ_LONG_SECONDS) $(srcdir) $(FUZZ_TARGETS)
else
fuzz-build fuzz-smoke fuzz-long:
	@echo "fuzz: configure with CC=clang --enable-fuzzing to build the fuzz targets" >&2; exit 1
endif

CLEANFILES += fuzz/*.log
clean-local: clean-fuzz
clean-fuzz:
	rm -rf fuzz/artifacts fuzz/found

.PHONY: fuzz-build fuzz-smoke fuzz-long clean-fuzz
