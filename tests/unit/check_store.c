/*
 * tests/unit/check_store.c - the object store (SPEC §3, §4, §7.7, §9; PROTOCOLS.md §6):
 * server-set metadata on create, spec and status updates, resourceVersion preconditions,
 * deletion with and without finalizers (a Tenant takes its objects with it), lists with
 * selectors and pages, the event log (replay, pruning, 410), persistence across a reopen,
 * transactional failure, and subscribers that write from inside their callback.
 *
 * Every test works on a database file in a fresh private directory, a bus with a recorder
 * that copies each published event, and a store whose event window is 5.
 */
#include <config.h>

#include "tests/unit/testutil.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/base/errors.h"
#include "core/model/kinds.h"
#include "core/model/conditions.h"
#include "core/base/log.h"
#include "core/model/selector.h"
#include "core/store/store.h"
#include "core/store/sweep.h"

#define WINDOW     5
#define MAX_EVENTS 128

#define CONFLICT_MSG(plural, name)                                                                 \
	"Operation cannot be fulfilled on " plural " \"" name "\": the object has been modified; " \
	"please apply your changes to the latest version and try again"

/* ------------------------------------------------------------------ fixture */

/* One published event, copied (the bus lends its pointers for the call only). */
struct rec {
	rz_event_type_t type;
	int64_t rv;
	char kind[32];
	char tenant[64];
	char name[64];
	bool spec_changed;
	int64_t obj_rv;   /* the object's metadata.resourceVersion */
	int64_t store_rv; /* rz_store_revision() while the event was delivered */
	json_t *obj;
};

static char *dir;
static char *dbpath;
static char *logpath;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *st;
static uint64_t rec_id;
static struct rec events[MAX_EVENTS];
static size_t nevents;

static void copy_str(char *dst, size_t size, const char *src)
{
	ck_assert_ptr_nonnull(src);
	ck_assert_uint_lt(strlen(src), size);
	snprintf(dst, size, "%s", src);
}

static void record(const rz_event_t *ev, void *arg)
{
	struct rec *r;
	json_t *parsed;

	ck_assert_ptr_eq(arg, &events);
	ck_assert_uint_lt(nevents, MAX_EVENTS);
	ck_assert_ptr_nonnull(ev->kind);
	ck_assert_ptr_nonnull(ev->object);
	ck_assert_ptr_nonnull(ev->json);
	r = &events[nevents++];
	r->type = ev->type;
	r->rv = ev->rv;
	copy_str(r->kind, sizeof(r->kind), ev->kind->kind);
	copy_str(r->tenant, sizeof(r->tenant), ev->tenant);
	copy_str(r->name, sizeof(r->name), ev->name);
	r->spec_changed = ev->spec_changed;
	r->obj_rv = rz_object_rv(ev->object);
	r->store_rv = st != NULL ? rz_store_revision(st) : -1;
	r->obj = json_deep_copy(ev->object);
	/* The serialized text is the same object. */
	parsed = json_loads(ev->json, 0, NULL);
	ck_assert_msg(parsed != NULL && json_equal(parsed, ev->object),
	              "event %" PRId64 ": json does not match object", ev->rv);
	json_decref(parsed);
}

static void clear_events(void)
{
	for (size_t i = 0; i < nevents; i++) {
		json_decref(events[i].obj);
		events[i].obj = NULL;
	}
	nevents = 0;
}

static void open_store(int64_t window)
{
	rz_err_t err = { 0 };

	ck_assert_msg(rz_db_open(&db, dbpath, &err) == 0, "db open: %s", err.msg);
	ck_assert_msg(rz_store_new(&st, db, bus, window, &err) == 0, "store: %s", err.msg);
	ck_assert_ptr_nonnull(st);
}

static void close_store(void)
{
	rz_store_free(st);
	st = NULL;
	rz_db_close(db);
	db = NULL;
}

static void setup(void)
{
	dir = rzt_tmpdir();
	ck_assert_int_gt(asprintf(&dbpath, "%s/rezus.db", dir), 0);
	ck_assert_int_gt(asprintf(&logpath, "%s/rezus.log", dir), 0);
	ck_assert_int_eq(rz_log_open(logpath, NULL), 0);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	rec_id = rz_bus_subscribe(bus, record, &events);
	ck_assert_uint_gt(rec_id, 0);
	open_store(WINDOW);
}

static void teardown(void)
{
	close_store();
	rz_bus_free(bus);
	bus = NULL;
	clear_events();
	rz_log_close();
	rzt_rmrf(dir);
	free(dir);
	free(dbpath);
	free(logpath);
}

/* ------------------------------------------------------------------ helpers */

static const rz_kind_t *K(const char *kind)
{
	const rz_kind_t *k = rz_kind_by_name(kind);

	ck_assert_msg(k != NULL, "no kind %s", kind);
	return k;
}

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);

	ck_assert_msg(v != NULL, "bad test JSON '%s': %s", text, jerr.text);
	return v;
}

/* A manifest as the API would hand it over. tenant NULL for global kinds. */
static json_t *manifest(const char *kind, const char *tenant, const char *name, const char *spec)
{
	json_t *m = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", RZ_API_VERSION, "kind",
	                      kind, "metadata", "name", name, "spec", parse(spec));

	ck_assert_ptr_nonnull(m);
	if (tenant != NULL) {
		json_object_set_new(json_object_get(m, "metadata"), "tenant", json_string(tenant));
	}
	return m;
}

static const char tenant_spec[] = "{\"clusterProvider\":\"sim\",\"kubernetesVersion\":\"1.35.0\"}";
static const char ng_spec[] = "{\"role\":\"worker\",\"count\":1,\"providerClass\":\"sim\"}";
static const char cp_spec[] = "{\"patch\":\"machine: {}\"}";

static json_t *meta(const json_t *obj)
{
	return json_object_get(obj, "metadata");
}

static const char *mstr(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(meta(obj), key));
}

static json_int_t generation(const json_t *obj)
{
	json_t *g = json_object_get(meta(obj), "generation");

	ck_assert_msg(json_is_integer(g), "generation is not an integer");
	return json_integer_value(g);
}

/* Create m (consumed) and return the stored object. */
static json_t *create_ok(json_t *m)
{
	const rz_kind_t *k = K(json_string_value(json_object_get(m, "kind")));
	rz_err_t err = { 0 };
	json_t *out = NULL;

	ck_assert_msg(rz_store_create(st, k, m, NULL, &out, &err) == 0, "create %s: %s",
	              mstr(m, "name"), err.msg);
	ck_assert_ptr_nonnull(out);
	json_decref(m);
	return out;
}

static void create_tenant(const char *name)
{
	json_decref(create_ok(manifest("Tenant", NULL, name, tenant_spec)));
}

static void create_in(const char *kind, const char *tenant, const char *name)
{
	json_decref(create_ok(
	    manifest(kind, tenant, name, strcmp(kind, "ConfigPatch") == 0 ? cp_spec : ng_spec)));
}

static json_t *get_ok(const char *kind, const char *tenant, const char *name)
{
	rz_err_t err = { 0 };
	json_t *out = NULL;

	ck_assert_msg(rz_store_get(st, K(kind), tenant, name, &out, &err) == 0, "get %s/%s: %s",
	              tenant ? tenant : "", name, err.msg);
	ck_assert_ptr_nonnull(out);
	return out;
}

static void assert_absent(const char *kind, const char *tenant, const char *name)
{
	const rz_kind_t *k = K(kind);
	rz_err_t err = { 0 };
	json_t *out = NULL;
	char want[128];

	ck_assert_int_eq(rz_store_get(st, k, tenant, name, &out, &err), RZ_ENOTFOUND);
	ck_assert_ptr_null(out);
	snprintf(want, sizeof(want), "%s \"%s\" not found", k->plural, name);
	ck_assert_str_eq(err.msg, want);
}

/* Update in spec or status mode; in (consumed) is the new object. */
static int update(const char *kind, const char *tenant, const char *name, json_t *in,
                  int64_t expect_rv, rz_update_mode_t mode, json_t **out, bool *gone, rz_err_t *err)
{
	int rc =
	    rz_store_update(st, K(kind), tenant, name, in, expect_rv, mode, NULL, out, gone, err);

	json_decref(in);
	return rc;
}

/* Set metadata.labels.<key> = value on the stored object and write it back (spec mode). */
static json_t *relabel(const char *kind, const char *tenant, const char *name, const char *key,
                       const char *value)
{
	json_t *cur = get_ok(kind, tenant, name);
	json_t *labels = json_object_get(meta(cur), "labels");
	rz_err_t err = { 0 };
	json_t *out = NULL;
	bool gone = true;

	if (labels == NULL) {
		labels = json_object();
		json_object_set_new(meta(cur), "labels", labels);
	}
	json_object_set_new(labels, key, json_string(value));
	ck_assert_msg(update(kind, tenant, name, cur, 0, RZ_UPDATE_SPEC, &out, &gone, &err) == 0,
	              "relabel: %s", err.msg);
	ck_assert(!gone);
	return out;
}

static void assert_uuid_v4(const char *s)
{
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), 36);
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			ck_assert_int_eq(s[i], '-');
		} else {
			ck_assert_msg(isxdigit((unsigned char)s[i]) &&
			                  !isupper((unsigned char)s[i]),
			              "uid '%s': bad character at %zu", s, i);
		}
	}
	ck_assert_int_eq(s[14], '4');
	ck_assert_ptr_nonnull(strchr("89ab", s[19]));
}

/* RFC 3339 UTC with seconds ("2026-11-30T04:31:11Z"), within the last minute. */
static void assert_recent_time(const char *ts)
{
	struct tm tm = { 0 };
	time_t now = time(NULL);
	const char *end;
	time_t t;

	ck_assert_ptr_nonnull(ts);
	ck_assert_uint_eq(strlen(ts), 20);
	for (size_t i = 0; i < 20; i++) {
		if (i == 4 || i == 7) {
			ck_assert_int_eq(ts[i], '-');
		} else if (i == 10) {
			ck_assert_int_eq(ts[i], 'T');
		} else if (i == 13 || i == 16) {
			ck_assert_int_eq(ts[i], ':');
		} else if (i == 19) {
			ck_assert_int_eq(ts[i], 'Z');
		} else {
			ck_assert_msg(isdigit((unsigned char)ts[i]), "time '%s' at %zu", ts, i);
		}
	}
	end = strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	ck_assert_ptr_nonnull(end);
	ck_assert_int_eq(*end, '\0');
	t = timegm(&tm);
	ck_assert_int_le(t, now);
	ck_assert_int_ge(t, now - 60);
}

static void assert_event(size_t i, rz_event_type_t type, int64_t rv, const char *kind,
                         const char *tenant, const char *name, bool spec_changed)
{
	ck_assert_msg(i < nevents, "event %zu missing (%zu recorded)", i, nevents);
	ck_assert_str_eq(rz_event_type_name(events[i].type), rz_event_type_name(type));
	ck_assert_int_eq(events[i].rv, rv);
	ck_assert_int_eq(events[i].obj_rv, rv);
	ck_assert_str_eq(events[i].kind, kind);
	ck_assert_str_eq(events[i].tenant, tenant);
	ck_assert_str_eq(events[i].name, name);
	ck_assert_int_eq(events[i].spec_changed, spec_changed);
	/* Published after the commit: the store's revision already includes it. */
	ck_assert_int_ge(events[i].store_rv, rv);
}

static int64_t query_int(const char *sql)
{
	rz_err_t err = { 0 };
	rz_stmt_t *s = rz_db_stmt(db, sql, &err);
	int64_t v;

	ck_assert_msg(s != NULL, "%s: %s", sql, err.msg);
	ck_assert_msg(rz_stmt_step(s, &err) == 1, "%s: %s", sql, err.msg);
	v = rz_stmt_int64(s, 0);
	rz_stmt_done(s);
	return v;
}

static void exec_ok(const char *sql)
{
	rz_err_t err = { 0 };

	ck_assert_msg(rz_db_exec(db, sql, &err) == 0, "%s: %s", sql, err.msg);
}

/* ------------------------------------------------------------------ create */

START_TEST(test_create_tenant)
{
	json_t *in = manifest("Tenant", NULL, "x", tenant_spec);
	json_t *m = meta(in);
	json_t *copy, *out, *again, *fin;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_store_revision(st), 0);
	json_object_set_new(m, "generateName", json_string("x-"));
	json_object_set_new(m, "tenant", json_string("ignored"));
	json_object_set_new(m, "uid", json_string("not-a-uid"));
	json_object_set_new(m, "resourceVersion", json_string("99"));
	json_object_set_new(m, "generation", json_integer(7));
	json_object_set_new(m, "creationTimestamp", json_string("2001-01-01T00:00:00Z"));
	json_object_set_new(m, "deletionTimestamp", json_string("2001-01-01T00:00:00Z"));
	json_object_set_new(m, "labels", parse("{\"team\":\"a\"}"));
	json_object_set_new(m, "finalizers", parse("[\"example.com/keep\"]"));
	json_object_set_new(in, "status", parse("{\"phase\":\"Ready\"}"));
	copy = json_deep_copy(in);

	ck_assert_int_eq(rz_store_create(st, K("Tenant"), in, NULL, &out, &err), 0);
	ck_assert_ptr_nonnull(out);
	/* The input is borrowed, not modified. */
	ck_assert(json_equal(in, copy));

	assert_uuid_v4(mstr(out, "uid"));
	ck_assert_str_eq(mstr(out, "name"), "x");
	ck_assert_str_eq(mstr(out, "resourceVersion"), "1");
	ck_assert_int_eq(rz_object_rv(out), 1);
	ck_assert_int_eq(generation(out), 1);
	assert_recent_time(mstr(out, "creationTimestamp"));
	ck_assert_ptr_null(json_object_get(meta(out), "deletionTimestamp"));
	ck_assert_ptr_null(json_object_get(meta(out), "generateName"));
	ck_assert_ptr_null(json_object_get(meta(out), "tenant"));
	/* a new tenant starts Pending (the kind's initial status) */
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(out, "status"), "phase")), "Pending");
	ck_assert(json_equal(json_object_get(out, "spec"), json_object_get(in, "spec")));
	fin = parse("{\"team\":\"a\"}");
	ck_assert(json_equal(json_object_get(meta(out), "labels"), fin));
	json_decref(fin);
	fin = parse("[\"example.com/keep\",\"rezuscloud.io/teardown\"]");
	ck_assert(json_equal(json_object_get(meta(out), "finalizers"), fin));
	json_decref(fin);
	ck_assert_str_eq(json_string_value(json_object_get(out, "kind")), "Tenant");
	ck_assert_str_eq(json_string_value(json_object_get(out, "apiVersion")), RZ_API_VERSION);

	ck_assert_int_eq(rz_store_revision(st), 1);
	ck_assert_int_eq(rz_store_count(st), 1);
	ck_assert_uint_eq(nevents, 1);
	assert_event(0, RZ_EV_ADDED, 1, "Tenant", "", "x", true);
	ck_assert(json_equal(events[0].obj, out));

	again = get_ok("Tenant", NULL, "x");
	ck_assert(json_equal(again, out));
	json_decref(again);
	/* The tenant argument is ignored for global kinds. */
	again = get_ok("Tenant", "whatever", "x");
	ck_assert(json_equal(again, out));
	json_decref(again);

	/* The next change gets the next revision and a different uid. */
	json_decref(copy);
	copy = create_ok(manifest("Tenant", NULL, "y", tenant_spec));
	ck_assert_str_eq(mstr(copy, "resourceVersion"), "2");
	ck_assert_str_ne(mstr(copy, "uid"), mstr(out, "uid"));
	fin = parse("[\"rezuscloud.io/teardown\"]");
	ck_assert(json_equal(json_object_get(meta(copy), "finalizers"), fin));
	json_decref(fin);
	ck_assert_int_eq(rz_store_revision(st), 2);
	ck_assert_uint_eq(nevents, 2);
	assert_event(1, RZ_EV_ADDED, 2, "Tenant", "", "y", true);

	json_decref(copy);
	json_decref(out);
	json_decref(in);
}
END_TEST

START_TEST(test_create_finalizer_not_duplicated)
{
	json_t *in = manifest("Tenant", NULL, "x", tenant_spec);
	json_t *out, *fin;

	json_object_set_new(meta(in), "finalizers", parse("[\"rezuscloud.io/teardown\"]"));
	out = create_ok(in);
	fin = parse("[\"rezuscloud.io/teardown\"]");
	ck_assert(json_equal(json_object_get(meta(out), "finalizers"), fin));
	json_decref(fin);
	json_decref(out);
}
END_TEST

START_TEST(test_create_tenant_scoped)
{
	json_t *in, *out, *again;

	create_tenant("t");
	in = manifest("NodeGroup", "t", "workers", ng_spec);
	json_object_set_new(in, "status", parse("{\"ready\":3}"));
	out = create_ok(in);

	ck_assert_str_eq(mstr(out, "tenant"), "t");
	ck_assert_str_eq(mstr(out, "name"), "workers");
	ck_assert_str_eq(mstr(out, "resourceVersion"), "2");
	ck_assert_int_eq(generation(out), 1);
	assert_uuid_v4(mstr(out, "uid"));
	assert_recent_time(mstr(out, "creationTimestamp"));
	ck_assert_ptr_null(json_object_get(out, "status"));
	/* NodeGroups have no finalizers of their own. */
	ck_assert_ptr_null(json_object_get(meta(out), "finalizers"));
	ck_assert_uint_eq(nevents, 2);
	assert_event(1, RZ_EV_ADDED, 2, "NodeGroup", "t", "workers", true);

	again = get_ok("NodeGroup", "t", "workers");
	ck_assert(json_equal(again, out));
	json_decref(again);
	/* Names are per tenant. */
	assert_absent("NodeGroup", "u", "workers");
	assert_absent("NodeGroup", NULL, "workers");
	json_decref(out);
}
END_TEST

START_TEST(test_create_duplicate)
{
	json_t *in = manifest("Tenant", NULL, "x", tenant_spec);
	json_t *out = (json_t *)1;
	rz_err_t err = { 0 };

	create_tenant("x");
	ck_assert_int_eq(rz_store_create(st, K("Tenant"), in, NULL, &out, &err), -EEXIST);
	ck_assert_int_eq(err.code, -EEXIST);
	ck_assert_str_eq(err.msg, "tenants \"x\" already exists");
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 1);
	ck_assert_uint_eq(nevents, 1);
	ck_assert_int_eq(query_int("SELECT count(*) FROM events"), 1);
	json_decref(in);

	/* Per tenant for tenant-scoped kinds. */
	create_tenant("t");
	create_tenant("u");
	create_in("NodeGroup", "t", "a");
	create_in("NodeGroup", "u", "a");
	ck_assert_int_eq(rz_store_revision(st), 5);
	in = manifest("NodeGroup", "t", "a", ng_spec);
	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, NULL, &out, &err), -EEXIST);
	ck_assert_str_eq(err.msg, "nodegroups \"a\" already exists");
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 5);
	ck_assert_uint_eq(nevents, 5);
	json_decref(in);
}
END_TEST

START_TEST(test_create_missing_tenant)
{
	json_t *in = manifest("NodeGroup", "nope", "a", ng_spec);
	json_t *out = (json_t *)1;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, NULL, &out, &err), RZ_ENOTFOUND);
	ck_assert_int_eq(err.code, RZ_ENOTFOUND);
	ck_assert_str_eq(err.msg, "tenants \"nope\" not found");
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 0);
	ck_assert_uint_eq(nevents, 0);
	ck_assert_int_eq(rz_store_count(st), 0);
	json_decref(in);

	/* A tenant-scoped object without metadata.tenant is refused. */
	in = manifest("NodeGroup", NULL, "a", ng_spec);
	out = (json_t *)1;
	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, NULL, &out, &err),
	                 REZUS_EINTERNAL);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(nevents, 0);
	json_decref(in);
}
END_TEST

START_TEST(test_create_in_terminating_tenant)
{
	json_t *in, *out = NULL;
	rz_err_t err = { 0 };
	bool gone = true;

	create_tenant("t");
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "t", 0, NULL, &out, &gone, &err),
	                 0);
	ck_assert(!gone);
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 2);

	in = manifest("NodeGroup", "t", "a", ng_spec);
	out = (json_t *)1;
	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, NULL, &out, &err),
	                 RZ_ETERMINATING);
	ck_assert_int_eq(err.code, RZ_ETERMINATING);
	ck_assert_str_eq(err.msg,
	                 "unable to create new content in tenant t because it is being deleted");
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 2);
	ck_assert_uint_eq(nevents, 2);
	assert_absent("NodeGroup", "t", "a");
	json_decref(in);
}
END_TEST

/* ------------------------------------------------------------------ update */

START_TEST(test_update_spec)
{
	json_t *cur, *in, *out = NULL;
	rz_err_t err = { 0 };
	bool gone = true;

	create_tenant("x");
	cur = get_ok("Tenant", NULL, "x");

	/* A spec change bumps generation. */
	in = json_deep_copy(cur);
	json_object_set_new(json_object_get(in, "spec"), "kubernetesVersion",
	                    json_string("1.35.1"));
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 1, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(!gone);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "2");
	ck_assert_int_eq(generation(out), 2);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(out, "spec"), "kubernetesVersion")),
	    "1.35.1");
	ck_assert_str_eq(mstr(out, "uid"), mstr(cur, "uid"));
	ck_assert_str_eq(mstr(out, "creationTimestamp"), mstr(cur, "creationTimestamp"));
	ck_assert_int_eq(rz_store_revision(st), 2);
	ck_assert_uint_eq(nevents, 2);
	assert_event(1, RZ_EV_MODIFIED, 2, "Tenant", "", "x", true);
	ck_assert(json_equal(events[1].obj, out));
	json_decref(cur);
	cur = out;

	/* Labels only: a new revision, the same generation. */
	in = json_deep_copy(cur);
	json_object_set_new(meta(in), "labels", parse("{\"env\":\"prod\"}"));
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "3");
	ck_assert_int_eq(generation(out), 2);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(meta(out), "labels"), "env")),
	    "prod");
	ck_assert_uint_eq(nevents, 3);
	assert_event(2, RZ_EV_MODIFIED, 3, "Tenant", "", "x", false);
	json_decref(cur);
	cur = out;

	/* Status (and server-set metadata) in the input are ignored: nothing changes, so no
	 * new revision and no event. */
	in = json_deep_copy(cur);
	json_object_set_new(in, "status", parse("{\"phase\":\"Ready\"}"));
	json_object_set_new(meta(in), "generation", json_integer(40));
	json_object_set_new(meta(in), "uid", json_string("other"));
	json_object_set_new(meta(in), "deletionTimestamp", json_string("2001-01-01T00:00:00Z"));
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(!gone);
	ck_assert(json_equal(out, cur));
	ck_assert(json_equal(json_object_get(out, "status"), json_object_get(cur, "status")));
	ck_assert_int_eq(rz_store_revision(st), 3);
	ck_assert_uint_eq(nevents, 3);
	json_decref(out);

	/* An identical update: no new revision, no event. */
	ck_assert_int_eq(
	    update("Tenant", NULL, "x", json_deep_copy(cur), 3, RZ_UPDATE_SPEC, &out, &gone, &err),
	    0);
	ck_assert(json_equal(out, cur));
	ck_assert_int_eq(rz_store_revision(st), 3);
	ck_assert_uint_eq(nevents, 3);
	ck_assert_int_eq(query_int("SELECT max(rv) FROM events"), 3);
	json_decref(out);

	/* A stale resourceVersion is a conflict; nothing is written. */
	in = json_deep_copy(cur);
	json_object_set_new(json_object_get(in, "spec"), "kubernetesVersion",
	                    json_string("1.36.0"));
	out = (json_t *)1;
	ck_assert_int_eq(
	    update("Tenant", NULL, "x", json_deep_copy(in), 2, RZ_UPDATE_SPEC, &out, &gone, &err),
	    RZ_ECONFLICT);
	ck_assert_int_eq(err.code, RZ_ECONFLICT);
	ck_assert_str_eq(err.msg, CONFLICT_MSG("tenants", "x"));
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 3);
	ck_assert_uint_eq(nevents, 3);
	out = get_ok("Tenant", NULL, "x");
	ck_assert(json_equal(out, cur));
	json_decref(out);

	/* The matching resourceVersion works. */
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 3, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "4");
	ck_assert_int_eq(generation(out), 3);
	ck_assert_uint_eq(nevents, 4);
	assert_event(3, RZ_EV_MODIFIED, 4, "Tenant", "", "x", true);
	json_decref(out);

	/* A missing object. */
	out = (json_t *)1;
	ck_assert_int_eq(update("Tenant", NULL, "nope", json_deep_copy(cur), 0, RZ_UPDATE_SPEC,
	                        &out, &gone, &err),
	                 RZ_ENOTFOUND);
	ck_assert_str_eq(err.msg, "tenants \"nope\" not found");
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 4);
	json_decref(cur);
}
END_TEST

/* Spec mode replaces labels, annotations and finalizers with the input's (PUT); none of them
 * is a spec change. */
START_TEST(test_update_spec_replaces_user_metadata)
{
	json_t *in = manifest("Tenant", NULL, "t", tenant_spec);
	json_t *cur, *out = NULL, *want;
	rz_err_t err = { 0 };
	bool gone = true;

	json_object_set_new(meta(in), "labels", parse("{\"k\":\"v\"}"));
	json_object_set_new(meta(in), "annotations", parse("{\"note\":\"x\"}"));
	cur = create_ok(in);

	in = json_deep_copy(cur);
	json_object_del(meta(in), "labels");
	json_object_set_new(meta(in), "annotations", json_null());
	ck_assert_int_eq(update("Tenant", NULL, "t", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert_ptr_null(json_object_get(meta(out), "labels"));
	ck_assert_ptr_null(json_object_get(meta(out), "annotations"));
	want = parse("[\"rezuscloud.io/teardown\"]");
	ck_assert(json_equal(json_object_get(meta(out), "finalizers"), want));
	json_decref(want);
	ck_assert_int_eq(generation(out), 1);
	ck_assert_uint_eq(nevents, 2);
	assert_event(1, RZ_EV_MODIFIED, 2, "Tenant", "", "t", false);
	json_decref(cur);
	cur = out;

	/* Dropping the finalizer of a live object just updates it. */
	in = json_deep_copy(cur);
	json_object_set_new(meta(in), "finalizers", json_array());
	ck_assert_int_eq(update("Tenant", NULL, "t", in, 2, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(!gone);
	ck_assert_uint_eq(json_array_size(json_object_get(meta(out), "finalizers")), 0);
	ck_assert_ptr_null(json_object_get(meta(out), "deletionTimestamp"));
	ck_assert_uint_eq(nevents, 3);
	assert_event(2, RZ_EV_MODIFIED, 3, "Tenant", "", "t", false);
	json_decref(out);
	json_decref(cur);
	cur = get_ok("Tenant", NULL, "t");
	ck_assert_str_eq(mstr(cur, "resourceVersion"), "3");
	json_decref(cur);
}
END_TEST

/* An update given the caller's copy of the current object uses it only while it is still
 * the stored revision; a stale copy is read again. */
START_TEST(test_update_with_current)
{
	json_t *cur, *in, *out = NULL, *now;
	rz_err_t err = { 0 };
	char *text = NULL;
	bool gone = true;

	create_tenant("x");
	cur = get_ok("Tenant", NULL, "x");
	in = json_deep_copy(cur);
	json_object_set_new(meta(in), "labels", parse("{\"a\":\"1\"}"));
	rz_store_next(st, &(rz_write_opts_t){ .current = cur, .text = &text });
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "2");
	now = get_ok("Tenant", NULL, "x");
	ck_assert(json_equal(now, out));
	ck_assert_ptr_nonnull(text);
	{
		char *dump = json_dumps(now, JSON_COMPACT);
		ck_assert_str_eq(text, dump);
		free(dump);
	}
	free(text);
	json_decref(now);
	json_decref(out);

	/* a status write moves the stored object on; cur (revision 1) is stale now */
	in = json_deep_copy(cur);
	json_object_set_new(in, "status", parse("{\"phase\":\"Ready\"}"));
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 0, RZ_UPDATE_STATUS, &out, &gone, &err),
	                 0);
	json_decref(out);
	in = json_deep_copy(cur);
	json_object_set_new(meta(in), "labels", parse("{\"b\":\"2\"}"));
	rz_store_next(st, &(rz_write_opts_t){ .current = cur });
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "4");
	/* built on the stored object: its status stays */
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(out, "status"), "phase")), "Ready");
	json_decref(out);
	/* the options were for one write only: the next one leaves text alone */
	rz_store_next(st, &(rz_write_opts_t){ .text = &text });
	json_decref(relabel("Tenant", NULL, "x", "c", "3"));
	ck_assert_ptr_nonnull(text);
	free(text);
	text = (char *)&gone; /* a sentinel no write may touch */
	json_decref(relabel("Tenant", NULL, "x", "c", "4"));
	ck_assert_ptr_eq(text, (char *)&gone);
	json_decref(cur);
}
END_TEST

static json_t *get_shared_ok(const char *kind, const char *tenant, const char *name)
{
	rz_err_t err = { 0 };
	json_t *out = NULL;

	ck_assert_msg(rz_store_get_shared(st, K(kind), tenant, name, &out, &err) == 0,
	              "get_shared %s/%s: %s", tenant ? tenant : "", name, err.msg);
	ck_assert_ptr_nonnull(out);
	return out;
}

/* rz_store_get_shared: the stored row decides, whatever the cache holds. */
START_TEST(test_get_shared)
{
	json_t *a, *b, *out = NULL, *fresh, *in;
	rz_err_t err = { 0 };
	bool gone = true;
	char big[9000];

	create_tenant("x");
	a = get_shared_ok("Tenant", NULL, "x");
	fresh = get_ok("Tenant", NULL, "x");
	ck_assert(json_equal(a, fresh));
	json_decref(fresh);
	/* the write kept its own copy: what its writer does with the returned object is not
	 * seen by the next reader */
	out = relabel("Tenant", NULL, "x", "a", "1");
	json_object_set_new(meta(out), "labels", parse("{\"scribbled\":\"yes\"}"));
	json_decref(out);
	b = get_shared_ok("Tenant", NULL, "x");
	ck_assert_ptr_ne(a, b);
	ck_assert_str_eq(mstr(b, "resourceVersion"), "2");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(meta(b), "labels"), "a")), "1");
	ck_assert_ptr_null(json_object_get(json_object_get(meta(b), "labels"), "scribbled"));
	json_decref(a);
	/* read again: the same parse, not another */
	a = get_shared_ok("Tenant", NULL, "x");
	ck_assert_ptr_eq(a, b);
	json_decref(a);
	json_decref(b);

	/* a row written behind the store's back (as a rolled-back group leaves it) wins: a
	 * different size at the same revision, then another revision */
	exec_ok("UPDATE objects SET doc = json_set(doc, '$.metadata.labels.a', '22')"
	        " WHERE kind = 'Tenant' AND name = 'x'");
	a = get_shared_ok("Tenant", NULL, "x");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(meta(a), "labels"), "a")), "22");
	json_decref(a);
	exec_ok("UPDATE objects SET rv = 7, doc = json_set(doc, '$.metadata.labels.a', '33',"
	        " '$.metadata.resourceVersion', '7') WHERE kind = 'Tenant' AND name = 'x'");
	a = get_shared_ok("Tenant", NULL, "x");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(meta(a), "labels"), "a")), "33");
	json_decref(a);

	/* a write that changes nothing hands its writer a copy it may change */
	a = get_shared_ok("Tenant", NULL, "x");
	in = json_deep_copy(a);
	rz_store_next(st, &(rz_write_opts_t){ .current = a });
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert_ptr_ne(out, a);
	ck_assert(json_equal(out, a));
	json_decref(out);
	json_decref(a);

	/* gone is gone */
	exec_ok("DELETE FROM objects WHERE kind = 'Tenant' AND name = 'x'");
	ck_assert_int_eq(rz_store_get_shared(st, K("Tenant"), NULL, "x", &a, &err), RZ_ENOTFOUND);
	ck_assert_ptr_null(a);

	/* an object above the cache's bound is read whole, every time */
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	create_tenant("y");
	in = get_ok("Tenant", NULL, "y");
	json_object_set_new(meta(in), "annotations", json_pack("{s:s}", "big", big));
	ck_assert_int_eq(update("Tenant", NULL, "y", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	json_decref(out);
	a = get_shared_ok("Tenant", NULL, "y");
	b = get_shared_ok("Tenant", NULL, "y");
	ck_assert_ptr_ne(a, b);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(meta(a), "annotations"), "big")),
	    big);
	json_decref(a);
	json_decref(b);
}
END_TEST

START_TEST(test_update_status)
{
	json_t *cur, *in, *out = NULL, *status;
	rz_err_t err = { 0 };
	bool gone = true;

	create_tenant("x");
	cur = get_ok("Tenant", NULL, "x");

	/* Only status is taken: spec and labels in the input are ignored. */
	in = json_deep_copy(cur);
	json_object_set_new(json_object_get(in, "spec"), "kubernetesVersion", json_string("9.9.9"));
	json_object_set_new(meta(in), "labels", parse("{\"a\":\"b\"}"));
	json_object_set_new(in, "status", parse("{\"phase\":\"Ready\",\"observedGeneration\":1}"));
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 1, RZ_UPDATE_STATUS, &out, &gone, &err),
	                 0);
	ck_assert(!gone);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "2");
	ck_assert_int_eq(generation(out), 1);
	ck_assert(json_equal(json_object_get(out, "spec"), json_object_get(cur, "spec")));
	ck_assert_ptr_null(json_object_get(meta(out), "labels"));
	status = parse("{\"phase\":\"Ready\",\"observedGeneration\":1}");
	ck_assert(json_equal(json_object_get(out, "status"), status));
	json_decref(status);
	ck_assert_uint_eq(nevents, 2);
	assert_event(1, RZ_EV_MODIFIED, 2, "Tenant", "", "x", false);
	json_decref(cur);
	cur = out;

	/* The same status again: nothing. */
	ck_assert_int_eq(update("Tenant", NULL, "x", json_deep_copy(cur), 0, RZ_UPDATE_STATUS, &out,
	                        &gone, &err),
	                 0);
	ck_assert(json_equal(out, cur));
	ck_assert_int_eq(rz_store_revision(st), 2);
	ck_assert_uint_eq(nevents, 2);
	json_decref(out);

	/* A spec update afterwards keeps the status. */
	in = json_deep_copy(cur);
	json_object_del(in, "status");
	json_object_set_new(json_object_get(in, "spec"), "talosVersion", json_string("1.12.1"));
	ck_assert_int_eq(update("Tenant", NULL, "x", in, 2, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(json_equal(json_object_get(out, "status"), json_object_get(cur, "status")));
	ck_assert_int_eq(generation(out), 2);
	json_decref(out);

	/* Status writes honour the precondition too. */
	out = (json_t *)1;
	ck_assert_int_eq(update("Tenant", NULL, "x", json_deep_copy(cur), 2, RZ_UPDATE_STATUS, &out,
	                        &gone, &err),
	                 RZ_ECONFLICT);
	ck_assert_str_eq(err.msg, CONFLICT_MSG("tenants", "x"));
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(nevents, 3);
	json_decref(cur);
}
END_TEST

/* The conditions that follow from a phase are the store's to set, on every write, whoever
 * writes: a Run's Complete and Failed, a Machine's Ready. */
static const char *cond(const json_t *obj, const char *type, const char *member)
{
	const json_t *c = rz_condition_get(obj, type);

	ck_assert_msg(c != NULL, "no %s condition", type);
	return json_string_value(json_object_get(c, member));
}

START_TEST(test_conditions_follow_the_phase)
{
	json_t *cur, *in, *out = NULL;
	rz_err_t err = { 0 };
	char since[64];

	create_tenant("x");
	cur = create_ok(manifest("Run", "x", "r1", "{\"operation\":\"apply\"}"));
	ck_assert_str_eq(cond(cur, "Complete", "status"), "False");
	ck_assert_str_eq(cond(cur, "Complete", "reason"), "Queued");
	ck_assert_str_eq(cond(cur, "Failed", "status"), "False");
	snprintf(since, sizeof(since), "%s", cond(cur, "Failed", "lastTransitionTime"));

	in = json_deep_copy(cur);
	json_object_set_new(in, "status", parse("{\"phase\":\"Failed\",\"message\":\"tofu: no\"}"));
	ck_assert_int_eq(update("Run", "x", "r1", in, 0, RZ_UPDATE_STATUS, &out, NULL, &err), 0);
	ck_assert_str_eq(cond(out, "Failed", "status"), "True");
	ck_assert_str_eq(cond(out, "Failed", "reason"), "Failed");
	ck_assert_str_eq(cond(out, "Failed", "message"), "tofu: no");
	ck_assert_str_eq(cond(out, "Complete", "status"), "False");
	ck_assert_str_eq(cond(out, "Complete", "reason"), "Failed");
	json_decref(cur);
	cur = out;

	/* A writer that drops the conditions gets them back unchanged: no new revision (also
	 * once the clock has moved on: their times are the stored ones, not now). */
	sleep(1);
	in = json_deep_copy(cur);
	json_object_del(json_object_get(in, "status"), "conditions");
	ck_assert_int_eq(update("Run", "x", "r1", in, 0, RZ_UPDATE_STATUS, &out, NULL, &err), 0);
	ck_assert(json_equal(out, cur));
	json_decref(out);
	json_decref(cur);

	/* A Machine: Ready as observation reported it, the stage as the reason. */
	cur =
	    create_ok(manifest("Machine", "x", "m1", "{\"nodeGroup\":\"w\",\"role\":\"worker\"}"));
	ck_assert_ptr_null(rz_condition_get(cur, "Ready"));
	in = json_deep_copy(cur);
	json_object_set_new(in, "status", parse("{\"stage\":\"Running\",\"ready\":true}"));
	ck_assert_int_eq(update("Machine", "x", "m1", in, 0, RZ_UPDATE_STATUS, &out, NULL, &err),
	                 0);
	ck_assert_str_eq(cond(out, "Ready", "status"), "True");
	ck_assert_str_eq(cond(out, "Ready", "reason"), "Running");
	json_decref(cur);
	cur = out;
	in = json_deep_copy(cur);
	json_object_set_new(
	    in, "status",
	    parse("{\"stage\":\"Rebooting\",\"ready\":false,\"lastError\":\"gone\"}"));
	ck_assert_int_eq(update("Machine", "x", "m1", in, 0, RZ_UPDATE_STATUS, &out, NULL, &err),
	                 0);
	ck_assert_str_eq(cond(out, "Ready", "status"), "False");
	ck_assert_str_eq(cond(out, "Ready", "reason"), "Rebooting");
	ck_assert_str_eq(cond(out, "Ready", "message"), "gone");
	json_decref(out);
	json_decref(cur);
}
END_TEST

/* metadata.managedFields: kept as created (none for []), taken from an update of either
 * mode that carries them ([] drops them), left as they were by one that does not. */
START_TEST(test_update_managed_fields)
{
	json_t *in = manifest("Tenant", NULL, "m", tenant_spec), *cur, *out = NULL, *mf;
	rz_err_t err = { 0 };
	bool gone;

	json_object_set_new(meta(in), "managedFields", json_array());
	cur = create_ok(in);
	ck_assert_ptr_null(json_object_get(meta(cur), "managedFields"));
	mf = parse("[{\"manager\":\"a\",\"operation\":\"Update\",\"fieldsType\":\"FieldsV1\","
	           "\"fieldsV1\":{\"f:spec\":{}}}]");
	in = json_deep_copy(cur);
	json_object_set(meta(in), "managedFields", mf);
	ck_assert_int_eq(update("Tenant", NULL, "m", in, 0, RZ_UPDATE_STATUS, &out, &gone, &err),
	                 0);
	ck_assert(json_equal(json_object_get(meta(out), "managedFields"), mf));
	json_decref(cur);
	cur = out;
	in = json_deep_copy(cur);
	json_object_del(meta(in), "managedFields");
	json_object_set_new(meta(in), "labels", parse("{\"x\":\"y\"}"));
	ck_assert_int_eq(update("Tenant", NULL, "m", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(json_equal(json_object_get(meta(out), "managedFields"), mf));
	json_decref(cur);
	cur = out;
	in = json_deep_copy(cur);
	json_object_set_new(meta(in), "managedFields", json_array());
	ck_assert_int_eq(update("Tenant", NULL, "m", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert_ptr_null(json_object_get(meta(out), "managedFields"));
	json_decref(out);
	json_decref(cur);
	json_decref(mf);
}
END_TEST

/* ------------------------------------------------------------------ delete */

START_TEST(test_delete_without_finalizers)
{
	json_t *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;

	create_tenant("t");
	create_in("NodeGroup", "t", "a");
	create_in("NodeGroup", "t", "b");
	ck_assert_int_eq(rz_store_revision(st), 3);

	/* A stale precondition refuses the delete. */
	out = (json_t *)1;
	ck_assert_int_eq(rz_store_delete(st, K("NodeGroup"), "t", "a", 3, NULL, &out, &gone, &err),
	                 RZ_ECONFLICT);
	ck_assert_str_eq(err.msg, CONFLICT_MSG("nodegroups", "a"));
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 3);
	json_decref(get_ok("NodeGroup", "t", "a"));

	ck_assert_int_eq(rz_store_delete(st, K("NodeGroup"), "t", "a", 2, NULL, &out, &gone, &err),
	                 0);
	ck_assert(gone);
	ck_assert_ptr_nonnull(out);
	ck_assert_str_eq(mstr(out, "name"), "a");
	ck_assert_str_eq(mstr(out, "resourceVersion"), "4");
	ck_assert_int_eq(rz_store_revision(st), 4);
	ck_assert_uint_eq(nevents, 4);
	assert_event(3, RZ_EV_DELETED, 4, "NodeGroup", "t", "a", true);
	ck_assert(json_equal(events[3].obj, out));
	json_decref(out);
	assert_absent("NodeGroup", "t", "a");
	json_decref(get_ok("NodeGroup", "t", "b"));
	ck_assert_int_eq(rz_store_count(st), 2);

	/* Deleting it again: not found, nothing published. */
	out = (json_t *)1;
	ck_assert_int_eq(rz_store_delete(st, K("NodeGroup"), "t", "a", 0, NULL, &out, &gone, &err),
	                 RZ_ENOTFOUND);
	ck_assert_str_eq(err.msg, "nodegroups \"a\" not found");
	ck_assert_ptr_null(out);
	ck_assert_int_eq(rz_store_revision(st), 4);
	ck_assert_uint_eq(nevents, 4);
}
END_TEST

static bool saw(size_t from, size_t to, const char *kind, const char *tenant, const char *name)
{
	for (size_t i = from; i < to; i++) {
		if (strcmp(events[i].kind, kind) == 0 && strcmp(events[i].tenant, tenant) == 0 &&
		    strcmp(events[i].name, name) == 0) {
			return true;
		}
	}
	return false;
}

START_TEST(test_delete_with_finalizers)
{
	json_t *in, *out = NULL, *cur, *want;
	rz_err_t err = { 0 };
	bool gone = true;
	char ts[32];

	create_tenant("t");
	create_tenant("u");
	create_in("NodeGroup", "t", "w");
	create_in("NodeGroup", "t", "c");
	create_in("ConfigPatch", "t", "p");
	create_in("NodeGroup", "u", "w");
	ck_assert_int_eq(rz_store_revision(st), 6);
	ck_assert_int_eq(rz_store_count(st), 6);
	/* A second finalizer, so removing the kind's one alone does not delete. */
	cur = relabel("Tenant", NULL, "t", "k", "v");
	in = json_deep_copy(cur);
	json_array_append_new(json_object_get(meta(in), "finalizers"),
	                      json_string("example.com/keep"));
	json_decref(cur);
	ck_assert_int_eq(update("Tenant", NULL, "t", in, 7, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 8);
	ck_assert_uint_eq(nevents, 8);

	/* 202 semantics: marked, kept, generation bumped, MODIFIED. */
	gone = true;
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "t", 8, NULL, &out, &gone, &err),
	                 0);
	ck_assert(!gone);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "9");
	ck_assert_int_eq(generation(out), 2);
	assert_recent_time(mstr(out, "deletionTimestamp"));
	ck_assert_uint_eq(json_array_size(json_object_get(meta(out), "finalizers")), 2);
	ck_assert_int_eq(rz_store_revision(st), 9);
	ck_assert_uint_eq(nevents, 9);
	assert_event(8, RZ_EV_MODIFIED, 9, "Tenant", "", "t", true);
	cur = get_ok("Tenant", NULL, "t");
	ck_assert(json_equal(cur, out));
	json_decref(out);
	copy_str(ts, sizeof(ts), mstr(cur, "deletionTimestamp"));
	json_decref(get_ok("NodeGroup", "t", "w"));

	/* A second delete changes nothing. */
	gone = true;
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "t", 0, NULL, &out, &gone, &err),
	                 0);
	ck_assert(!gone);
	ck_assert(json_equal(out, cur));
	ck_assert_str_eq(mstr(out, "deletionTimestamp"), ts);
	ck_assert_int_eq(rz_store_revision(st), 9);
	ck_assert_uint_eq(nevents, 9);
	json_decref(out);

	/* Removing one of two finalizers only updates it. */
	in = json_deep_copy(cur);
	want = parse("[\"example.com/keep\"]");
	json_object_set(meta(in), "finalizers", want);
	ck_assert_int_eq(update("Tenant", NULL, "t", in, 9, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(!gone);
	ck_assert(json_equal(json_object_get(meta(out), "finalizers"), want));
	ck_assert_str_eq(mstr(out, "deletionTimestamp"), ts);
	ck_assert_int_eq(generation(out), 2);
	ck_assert_uint_eq(nevents, 10);
	assert_event(9, RZ_EV_MODIFIED, 10, "Tenant", "", "t", false);
	json_decref(want);
	json_decref(cur);
	cur = out;

	/* Removing the last one deletes the tenant and everything in it, in one transaction:
	 * one DELETED event each, consecutive revisions, the tenant last. */
	in = json_deep_copy(cur);
	json_object_set_new(meta(in), "finalizers", json_array());
	gone = false;
	ck_assert_int_eq(update("Tenant", NULL, "t", in, 10, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(gone);
	ck_assert_ptr_nonnull(out);
	ck_assert_str_eq(mstr(out, "name"), "t");
	ck_assert_str_eq(mstr(out, "resourceVersion"), "14");
	ck_assert_str_eq(mstr(out, "deletionTimestamp"), ts);
	ck_assert_uint_eq(json_array_size(json_object_get(meta(out), "finalizers")), 0);
	ck_assert_int_eq(rz_store_revision(st), 14);
	ck_assert_uint_eq(nevents, 14);
	for (size_t i = 10; i < 14; i++) {
		ck_assert_int_eq(events[i].type, RZ_EV_DELETED);
		ck_assert_int_eq(events[i].rv, (int64_t)i + 1);
		ck_assert_int_eq(events[i].obj_rv, (int64_t)i + 1);
		ck_assert(events[i].spec_changed);
		ck_assert_int_eq(events[i].store_rv, 14);
	}
	ck_assert(saw(10, 13, "NodeGroup", "t", "w"));
	ck_assert(saw(10, 13, "NodeGroup", "t", "c"));
	ck_assert(saw(10, 13, "ConfigPatch", "t", "p"));
	assert_event(13, RZ_EV_DELETED, 14, "Tenant", "", "t", true);
	ck_assert(json_equal(events[13].obj, out));
	json_decref(out);
	json_decref(cur);

	assert_absent("Tenant", NULL, "t");
	assert_absent("NodeGroup", "t", "w");
	assert_absent("NodeGroup", "t", "c");
	assert_absent("ConfigPatch", "t", "p");
	json_decref(get_ok("Tenant", NULL, "u"));
	json_decref(get_ok("NodeGroup", "u", "w"));
	ck_assert_int_eq(rz_store_count(st), 2);
	ck_assert_int_eq(query_int("SELECT count(*) FROM objects WHERE tenant = 't'"), 0);
}
END_TEST

/* A tenant without finalizers goes at once, with its objects. */
START_TEST(test_delete_tenant_without_finalizers)
{
	json_t *in = manifest("Tenant", NULL, "t", tenant_spec);
	json_t *cur, *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;

	json_decref(create_ok(in));
	create_in("NodeGroup", "t", "a");
	cur = get_ok("Tenant", NULL, "t");
	json_object_set_new(meta(cur), "finalizers", json_array());
	ck_assert_int_eq(update("Tenant", NULL, "t", cur, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(!gone);
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 3);

	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "t", 0, NULL, &out, &gone, &err),
	                 0);
	ck_assert(gone);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "5");
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 5);
	ck_assert_uint_eq(nevents, 5);
	assert_event(3, RZ_EV_DELETED, 4, "NodeGroup", "t", "a", true);
	assert_event(4, RZ_EV_DELETED, 5, "Tenant", "", "t", true);
	assert_absent("Tenant", NULL, "t");
	assert_absent("NodeGroup", "t", "a");
	ck_assert_int_eq(rz_store_count(st), 0);
}
END_TEST

/* ------------------------------------------------------------------ list */

/* "tenant/name,..." (or "name,..." for global kinds) of a list result. */
static void keys_of(const json_t *items, char *buf, size_t size)
{
	size_t i, len = 0;
	json_t *it;

	buf[0] = '\0';
	json_array_foreach(items, i, it)
	{
		const char *t = mstr(it, "tenant");
		int n = snprintf(buf + len, size - len, "%s%s%s%s", i ? "," : "", t ? t : "",
		                 t ? "/" : "", mstr(it, "name"));
		ck_assert_int_gt(n, 0);
		ck_assert_uint_lt(len + (size_t)n, size);
		len += (size_t)n;
	}
}

static bool list_keys(const char *kind, const rz_list_opts_t *o, char *buf, size_t size)
{
	json_t *items = NULL;
	bool more = true;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_store_list(st, K(kind), o, &items, &more, &err) == 0, "list: %s", err.msg);
	ck_assert(json_is_array(items));
	keys_of(items, buf, size);
	json_decref(items);
	return more;
}

static void list_fixture(void)
{
	static const char *const ngs[][3] = {
		{ "b", "z", "worker" }, { "c", "a", NULL },           { "a", "y", "worker" },
		{ "b", "m", "cp" },     { "a", "k", "controlplane" },
	};

	create_tenant("c");
	create_tenant("a");
	create_tenant("b");
	for (size_t i = 0; i < sizeof(ngs) / sizeof(ngs[0]); i++) {
		json_t *m = manifest("NodeGroup", ngs[i][0], ngs[i][1], ng_spec);
		if (ngs[i][2] != NULL) {
			json_t *labels = json_pack("{s:s}", "role", ngs[i][2]);
			json_object_set_new(meta(m), "labels", labels);
		}
		json_decref(create_ok(m));
	}
	create_in("ConfigPatch", "a", "p");
}

START_TEST(test_list_sorted_and_filtered)
{
	rz_list_opts_t o = { 0 };
	char buf[512];

	list_fixture();
	ck_assert(!list_keys("NodeGroup", &o, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "a/k,a/y,b/m,b/z,c/a");
	ck_assert(!list_keys("Tenant", &o, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "a,b,c");
	ck_assert(!list_keys("ConfigPatch", &o, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "a/p");
	ck_assert(!list_keys("Machine", &o, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "");

	o.tenant = "b";
	ck_assert(!list_keys("NodeGroup", &o, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "b/m,b/z");
	o.tenant = "nope";
	ck_assert(!list_keys("NodeGroup", &o, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "");
	/* A tenant filter means nothing to a global kind. */
	ck_assert(!list_keys("Tenant", &o, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "a,b,c");
}
END_TEST

START_TEST(test_list_selectors)
{
	static const char *const allowed[] = { "metadata.name", NULL };
	static const struct {
		const char *labels, *fields, *tenant, *want;
	} cases[] = {
		{ "role=worker", NULL, NULL, "a/y,b/z" },
		{ "role!=worker", NULL, NULL, "a/k,b/m,c/a" },
		{ "role in (cp,controlplane)", NULL, NULL, "a/k,b/m" },
		{ "role", NULL, NULL, "a/k,a/y,b/m,b/z" },
		{ "!role", NULL, NULL, "c/a" },
		{ "role=worker", NULL, "b", "b/z" },
		{ "role=none", NULL, NULL, "" },
		{ NULL, "metadata.name=m", NULL, "b/m" },
		{ NULL, "metadata.name!=a", NULL, "a/k,a/y,b/m,b/z" },
		{ "role=worker", "metadata.name=y", NULL, "a/y" },
		{ "role=worker", "metadata.name=m", NULL, "" },
	};
	char buf[512];

	list_fixture();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rz_selector_t *ls = NULL, *fs = NULL;
		rz_list_opts_t o = { .tenant = cases[i].tenant };
		rz_err_t err = { 0 };
		if (cases[i].labels != NULL) {
			ck_assert_msg(rz_selector_parse(cases[i].labels, &ls, &err) == 0, "%s",
			              err.msg);
			o.labels = ls;
		}
		if (cases[i].fields != NULL) {
			ck_assert_msg(
			    rz_selector_parse_fields(cases[i].fields, allowed, &fs, &err) == 0,
			    "%s", err.msg);
			o.fields = fs;
		}
		ck_assert(!list_keys("NodeGroup", &o, buf, sizeof(buf)));
		ck_assert_msg(strcmp(buf, cases[i].want) == 0, "case %zu (%s | %s): got '%s'", i,
		              cases[i].labels, cases[i].fields, buf);
		rz_selector_free(ls);
		rz_selector_free(fs);
	}
}
END_TEST

/* Page through kind with the given page size and selector; every page but the last says
 * more. Returns the concatenated keys. */
static void paginate(const char *kind, const char *selector, size_t limit, char *out, size_t size,
                     size_t *pages)
{
	rz_selector_t *ls = NULL;
	rz_err_t err = { 0 };
	char *after_t = NULL, *after_n = NULL;
	bool more = true;

	ck_assert_int_eq(rz_selector_parse(selector, &ls, &err), 0);
	out[0] = '\0';
	*pages = 0;
	while (more) {
		rz_list_opts_t o = {
			.labels = ls, .limit = limit, .after_tenant = after_t, .after_name = after_n
		};
		json_t *items = NULL, *last;
		char buf[512];
		ck_assert_int_eq(rz_store_list(st, K(kind), &o, &items, &more, &err), 0);
		ck_assert_uint_le(json_array_size(items), limit);
		if (more) {
			ck_assert_uint_eq(json_array_size(items), limit);
		}
		(*pages)++;
		ck_assert_uint_lt(*pages, 20);
		keys_of(items, buf, sizeof(buf));
		if (buf[0] != '\0') {
			if (out[0] != '\0') {
				strncat(out, ",", size - strlen(out) - 1);
			}
			strncat(out, buf, size - strlen(out) - 1);
		}
		last = json_array_get(items, json_array_size(items) - 1);
		free(after_t);
		free(after_n);
		after_t = last && mstr(last, "tenant") ? strdup(mstr(last, "tenant")) : NULL;
		after_n = last ? strdup(mstr(last, "name")) : NULL;
		json_decref(items);
	}
	free(after_t);
	free(after_n);
	rz_selector_free(ls);
}

/* Scans read pages of rows in key order, each row the stored text: byte for byte what the
 * list's parse and compact dump of the object gives, for every object (so a streamed list
 * may copy it). A page stops at max rows or when the callback says so. */
struct scan_rec {
	char keys[512];
	size_t n, stop_at;
};

static int scan_row(void *arg, const rz_store_row_t *row)
{
	struct scan_rec *r = arg;
	json_error_t jerr;
	json_t *obj = json_loads(row->doc, 0, &jerr);
	char *again;
	size_t len = strlen(r->keys);

	ck_assert_ptr_nonnull(obj);
	again = json_dumps(obj, JSON_COMPACT);
	ck_assert_uint_eq(row->len, strlen(row->doc));
	ck_assert_str_eq(row->doc, again);
	free(again);
	json_decref(obj);
	snprintf(r->keys + len, sizeof(r->keys) - len, "%s%s%s%s", len ? "," : "", row->tenant,
	         *row->tenant ? "/" : "", row->name);
	return ++r->n == r->stop_at;
}

START_TEST(test_scan_pages_stored_text)
{
	struct scan_rec r = { 0 };
	rz_scan_opts_t o = { .max = 2 };
	rz_err_t err = { 0 };
	json_t *m;

	list_fixture();
	/* text the dump must escape, non-ASCII, numbers: stored as the dump writes them */
	m = manifest("NodeGroup", "c", "q\"\\\u00e9\u2603", ng_spec);
	json_object_set_new(meta(m), "annotations",
	                    json_pack("{s:s, s:s}", "a/b", "line\nbreak\ttab\x01", "x", "\u20ac/"));
	json_decref(create_ok(m));
	ck_assert_int_eq(rz_store_scan(st, K("NodeGroup"), &o, scan_row, &r, &err), 2);
	ck_assert_str_eq(r.keys, "a/k,a/y");
	o.after_tenant = "a";
	o.after_name = "y";
	o.max = 0;
	ck_assert_int_eq(rz_store_scan(st, K("NodeGroup"), &o, scan_row, &r, &err), 4);
	ck_assert_str_eq(r.keys, "a/k,a/y,b/m,b/z,c/a,c/q\"\\\u00e9\u2603");
	/* one tenant's, after a key of an earlier tenant; the callback stops the page */
	r = (struct scan_rec){ .stop_at = 1 };
	o = (rz_scan_opts_t){ .tenant = "b", .after_tenant = "a", .after_name = "z" };
	ck_assert_int_eq(rz_store_scan(st, K("NodeGroup"), &o, scan_row, &r, &err), 1);
	ck_assert_str_eq(r.keys, "b/m");
	r = (struct scan_rec){ 0 };
	o = (rz_scan_opts_t){ .tenant = "b", .after_tenant = "c", .after_name = "" };
	ck_assert_int_eq(rz_store_scan(st, K("NodeGroup"), &o, scan_row, &r, &err), 0);
	r = (struct scan_rec){ 0 };
	o = (rz_scan_opts_t){ 0 };
	ck_assert_int_eq(rz_store_scan(st, K("Tenant"), &o, scan_row, &r, &err), 3);
	ck_assert_str_eq(r.keys, "a,b,c");
}
END_TEST

/* ------------------------------------------------------------------ sweeps */

struct sweep_rec {
	int visited, done, ticks, ticks_at_done;
	char last[64];
	bool sorted;
	rz_store_t *create_at_first_page; /* creates tenant "zz-late" while the sweep runs */
	struct event *tick;
};

static void sweep_visit(void *arg, json_t *obj)
{
	struct sweep_rec *r = arg;
	const char *name = mstr(obj, "name");

	ck_assert_ptr_nonnull(name);
	if (r->visited > 0 && strcmp(r->last, name) >= 0) {
		r->sorted = false;
	}
	snprintf(r->last, sizeof(r->last), "%s", name);
	if (++r->visited == 1 && r->create_at_first_page != NULL) {
		clear_events();
		create_tenant("zz-late");
	}
}

static void sweep_done(void *arg)
{
	struct sweep_rec *r = arg;

	r->done++;
	r->ticks_at_done = r->ticks;
}

/* Another event of the loop, on every turn: counts the turns a sweep lets through. */
static void sweep_tick(evutil_socket_t fd, short what, void *arg)
{
	struct sweep_rec *r = arg;
	static const struct timeval now = { 0, 0 };

	(void)fd;
	(void)what;
	r->ticks++;
	evtimer_add(r->tick, &now);
}

static void sweep_run(struct event_base *base, rz_sweep_t *sw)
{
	for (int turns = 0; rz_sweep_busy(sw); turns++) {
		ck_assert_int_lt(turns, 1000);
		event_base_loop(base, EVLOOP_ONCE);
	}
}

/* A sweep visits every object once, in key order, a page per turn of the loop: with 600
 * tenants (three pages) the loop runs other events between pages, where reading them
 * whole held it for all of them. A start asked during a sweep makes one more sweep after
 * it, which sees what was created behind the first one's cursor. */
START_TEST(test_sweep_pages_between_turns)
{
	struct event_base *base = event_base_new();
	struct sweep_rec r = { .sorted = true };
	static const struct timeval now = { 0, 0 };
	rz_sweep_t *sw;
	char name[32];

	ck_assert_ptr_nonnull(base);
	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "t%04d", i);
		create_tenant(name);
		clear_events();
	}
	sw = rz_sweep_new(base, st, "Tenant", sweep_visit, sweep_done, &r);
	ck_assert_ptr_nonnull(sw);
	ck_assert_ptr_null(rz_sweep_new(base, st, "NoSuchKind", sweep_visit, NULL, &r));
	r.tick = evtimer_new(base, sweep_tick, &r);
	evtimer_add(r.tick, &now);
	ck_assert(!rz_sweep_busy(sw));
	rz_sweep_start(sw);
	ck_assert(rz_sweep_busy(sw));
	ck_assert_int_eq(r.visited, 0); /* nothing is read before the loop turns */
	sweep_run(base, sw);
	ck_assert_int_eq(r.visited, 600);
	ck_assert_int_eq(r.done, 1);
	ck_assert(r.sorted);
	ck_assert_str_eq(r.last, "t0599");
	ck_assert_int_ge(r.ticks_at_done, 2); /* other events ran between the three pages */
	ck_assert_uint_eq(rz_sweep_visited(sw), 600);

	/* asked again while under way (and a tenant created meanwhile, in front of the cursor
	 * of the first: "t0000" is read, "zz-late" sorts last, so both sweeps see it) */
	r = (struct sweep_rec){ .sorted = true, .create_at_first_page = st, .tick = r.tick };
	rz_sweep_start(sw);
	event_base_loop(base, EVLOOP_ONCE);
	rz_sweep_start(sw);
	rz_sweep_start(sw); /* still once more, not twice */
	while (r.done < 2 || rz_sweep_busy(sw)) {
		ck_assert_int_lt(r.ticks, 1000);
		event_base_loop(base, EVLOOP_ONCE);
	}
	ck_assert_int_eq(r.done, 2);
	ck_assert_int_eq(r.visited, 601 + 601);
	ck_assert_str_eq(r.last, "zz-late");

	/* freed in the middle: nothing is called after */
	r = (struct sweep_rec){ .sorted = true, .tick = r.tick };
	rz_sweep_start(sw);
	event_base_loop(base, EVLOOP_ONCE);
	ck_assert_int_gt(r.visited, 0);
	ck_assert_int_lt(r.visited, 601);
	rz_sweep_free(sw);
	for (int i = 0; i < 5; i++) {
		event_base_loop(base, EVLOOP_ONCE);
	}
	ck_assert_int_lt(r.visited, 601);
	ck_assert_int_eq(r.done, 0);
	event_free(r.tick);
	event_base_free(base);
}
END_TEST

/* A tenant's list searches the primary key by (kind, tenant), and the list of every tenant
 * by kind: "(?2 IS NULL OR tenant = ?2)" in one statement made SQLite search (kind) only,
 * so one tenant's list grew with the whole fleet. */
START_TEST(test_list_query_plans_use_the_key)
{
	char plan[1024];
	rz_err_t err = { 0 };

	list_fixture();
	ck_assert_int_eq(rz_store_scan_plan(st, true, plan, sizeof(plan), &err), 0);
	/* the key is the primary key's index (objects is a rowid table since migration 12) */
	ck_assert_msg(strstr(plan, "SEARCH objects USING INDEX sqlite_autoindex_objects_") !=
	                      NULL &&
	                  strstr(plan, " (kind=? AND tenant=? AND name>?)") != NULL,
	              "one tenant: %s", plan);
	ck_assert_msg(strstr(plan, "SCAN") == NULL && strstr(plan, "TEMP B-TREE") == NULL,
	              "one tenant: %s", plan);
	ck_assert_int_eq(rz_store_scan_plan(st, false, plan, sizeof(plan), &err), 0);
	ck_assert_msg(strstr(plan, "SEARCH objects USING INDEX sqlite_autoindex_objects_") !=
	                      NULL &&
	                  strstr(plan, " (kind=?") != NULL,
	              "every tenant: %s", plan);
	ck_assert_msg(strstr(plan, "SCAN") == NULL && strstr(plan, "TEMP B-TREE") == NULL,
	              "every tenant: %s", plan);
}
END_TEST

START_TEST(test_list_pages)
{
	char buf[512];
	size_t pages;
	bool more;

	list_fixture();
	paginate("NodeGroup", "", 1, buf, sizeof(buf), &pages);
	ck_assert_str_eq(buf, "a/k,a/y,b/m,b/z,c/a");
	ck_assert_uint_eq(pages, 5);
	paginate("NodeGroup", "", 2, buf, sizeof(buf), &pages);
	ck_assert_str_eq(buf, "a/k,a/y,b/m,b/z,c/a");
	ck_assert_uint_eq(pages, 3);
	/* A last page that is exactly full does not claim more. */
	paginate("NodeGroup", "", 5, buf, sizeof(buf), &pages);
	ck_assert_str_eq(buf, "a/k,a/y,b/m,b/z,c/a");
	ck_assert_uint_eq(pages, 1);
	/* "more" counts matching objects only. */
	paginate("NodeGroup", "role=worker", 1, buf, sizeof(buf), &pages);
	ck_assert_str_eq(buf, "a/y,b/z");
	ck_assert_uint_eq(pages, 2);
	paginate("NodeGroup", "role=worker", 2, buf, sizeof(buf), &pages);
	ck_assert_str_eq(buf, "a/y,b/z");
	ck_assert_uint_eq(pages, 1);
	/* Global kinds resume by name. */
	paginate("Tenant", "", 2, buf, sizeof(buf), &pages);
	ck_assert_str_eq(buf, "a,b,c");
	ck_assert_uint_eq(pages, 2);

	/* Resuming after a key that no longer exists continues after where it was. */
	{
		rz_list_opts_t o = { .after_tenant = "a", .after_name = "x", .limit = 2 };
		more = list_keys("NodeGroup", &o, buf, sizeof(buf));
		ck_assert_str_eq(buf, "a/y,b/m");
		ck_assert(more);
	}
}
END_TEST

/* ------------------------------------------------------------------ replay */

struct replayed {
	size_t n;
	size_t stop_at; /* return non-zero on this call (1-based); 0 = never */
	struct rec ev[MAX_EVENTS];
};

static int replay_fn(const rz_event_t *ev, void *arg)
{
	struct replayed *r = arg;
	struct rec *e;

	ck_assert_uint_lt(r->n, MAX_EVENTS);
	e = &r->ev[r->n++];
	e->type = ev->type;
	e->rv = ev->rv;
	copy_str(e->kind, sizeof(e->kind), ev->kind->kind);
	copy_str(e->tenant, sizeof(e->tenant), ev->tenant);
	copy_str(e->name, sizeof(e->name), ev->name);
	e->spec_changed = ev->spec_changed;
	e->obj_rv = rz_object_rv(ev->object);
	e->obj = json_deep_copy(ev->object);
	ck_assert_ptr_nonnull(ev->json);
	return r->n == r->stop_at ? 7 : 0;
}

static void replayed_free(struct replayed *r)
{
	for (size_t i = 0; i < r->n; i++) {
		json_decref(r->ev[i].obj);
	}
	free(r);
}

static struct replayed *replay_ok(int64_t after)
{
	struct replayed *r = calloc(1, sizeof(*r));
	rz_err_t err = { 0 };

	ck_assert_ptr_nonnull(r);
	ck_assert_msg(rz_store_replay(st, after, replay_fn, r, &err) == 0, "replay %" PRId64 ": %s",
	              after, err.msg);
	return r;
}

/* The result of a replay from after; the events are dropped. */
static int replay_rc(int64_t after, rz_err_t *err)
{
	struct replayed *r = calloc(1, sizeof(*r));
	int rc;

	ck_assert_ptr_nonnull(r);
	rc = rz_store_replay(st, after, replay_fn, r, err);
	replayed_free(r);
	return rc;
}

/* The replayed events equal what the bus delivered, event for event. */
static void assert_replay_matches(const struct replayed *r, size_t first)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct rec *a = &r->ev[i], *b = &events[first + i];
		ck_assert_uint_lt(first + i, nevents);
		ck_assert_int_eq(a->type, b->type);
		ck_assert_int_eq(a->rv, b->rv);
		ck_assert_int_eq(a->obj_rv, b->rv);
		ck_assert_str_eq(a->kind, b->kind);
		ck_assert_str_eq(a->tenant, b->tenant);
		ck_assert_str_eq(a->name, b->name);
		ck_assert_int_eq(a->spec_changed, b->spec_changed);
		ck_assert_msg(json_equal(a->obj, b->obj), "event %" PRId64 " object differs",
		              a->rv);
	}
}

START_TEST(test_replay)
{
	struct replayed *r;
	json_t *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;

	/* An empty log replays nothing from 0. */
	ck_assert_int_eq(rz_store_oldest(st), 1);
	r = replay_ok(0);
	ck_assert_uint_eq(r->n, 0);
	replayed_free(r);

	create_tenant("t");                                    /* 1 ADDED */
	create_in("NodeGroup", "t", "a");                      /* 2 ADDED */
	json_decref(relabel("NodeGroup", "t", "a", "k", "v")); /* 3 MODIFIED */
	ck_assert_int_eq(rz_store_delete(st, K("NodeGroup"), "t", "a", 0, NULL, &out, &gone, &err),
	                 0);
	json_decref(out); /* 4 DELETED */
	ck_assert_int_eq(rz_store_revision(st), 4);
	ck_assert_int_eq(rz_store_oldest(st), 1);

	r = replay_ok(1);
	ck_assert_uint_eq(r->n, 3);
	ck_assert_int_eq(r->ev[0].type, RZ_EV_ADDED);
	ck_assert_int_eq(r->ev[1].type, RZ_EV_MODIFIED);
	ck_assert_int_eq(r->ev[2].type, RZ_EV_DELETED);
	ck_assert_int_eq(r->ev[0].rv, 2);
	ck_assert_int_eq(r->ev[2].rv, 4);
	ck_assert_int_eq(r->ev[1].spec_changed, false);
	assert_replay_matches(r, 1);
	replayed_free(r);

	r = replay_ok(0);
	ck_assert_uint_eq(r->n, 4);
	assert_replay_matches(r, 0);
	ck_assert_str_eq(r->ev[0].kind, "Tenant");
	ck_assert_str_eq(r->ev[0].tenant, "");
	replayed_free(r);

	r = replay_ok(4);
	ck_assert_uint_eq(r->n, 0);
	replayed_free(r);
	/* From the future: nothing yet. */
	r = replay_ok(100);
	ck_assert_uint_eq(r->n, 0);
	replayed_free(r);
	r = replay_ok(INT64_MAX); /* no overflow: "after + 1" wrapped to INT64_MIN */
	ck_assert_uint_eq(r->n, 0);
	replayed_free(r);

	/* The callback's non-zero result stops the replay and is returned. */
	r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	r->stop_at = 2;
	ck_assert_int_eq(rz_store_replay(st, 0, replay_fn, r, &err), 7);
	ck_assert_uint_eq(r->n, 2);
	replayed_free(r);
}
END_TEST

START_TEST(test_replay_pruned)
{
	struct replayed *r;
	rz_err_t err = { 0 };

	create_tenant("t");
	for (int i = 0; i < 7; i++) {
		char v[8];
		snprintf(v, sizeof(v), "%d", i);
		json_decref(relabel("Tenant", NULL, "t", "n", v));
	}
	ck_assert_int_eq(rz_store_revision(st), 8);
	/* The window keeps the last 5 events: 4..8. */
	ck_assert_int_eq(query_int("SELECT count(*) FROM events"), WINDOW);
	ck_assert_int_eq(rz_store_oldest(st), 4);

	ck_assert_int_eq(replay_rc(0, &err), RZ_EGONE);
	ck_assert_int_eq(err.code, RZ_EGONE);
	ck_assert_str_eq(err.msg, "too old resource version: 0 (3)");
	ck_assert_int_eq(replay_rc(2, &err), RZ_EGONE);
	ck_assert_str_eq(err.msg, "too old resource version: 2 (3)");

	r = replay_ok(rz_store_oldest(st) - 1);
	ck_assert_uint_eq(r->n, 5);
	for (size_t i = 0; i < r->n; i++) {
		ck_assert_int_eq(r->ev[i].rv, (int64_t)i + 4);
	}
	assert_replay_matches(r, 3);
	replayed_free(r);
	r = replay_ok(6);
	ck_assert_uint_eq(r->n, 2);
	replayed_free(r);

	/* A no-op write keeps the window. */
	json_decref(relabel("Tenant", NULL, "t", "n", "6"));
	ck_assert_int_eq(rz_store_revision(st), 8);
	ck_assert_int_eq(rz_store_oldest(st), 4);
}
END_TEST

/* A window of 128 prunes by count a batch at a time (up to 128/64 = 2 changes more): the log
 * never holds fewer than the window nor more than the window and the batch, and a watch
 * resuming inside the window replays. */
/* A grouped write (the API's) is in the store at once, its event waits for the loop turn's
 * commit; when that commit fails, its events and revisions are forgotten. */
static int64_t create_grouped(const char *name)
{
	json_t *in = manifest("Tenant", NULL, name, tenant_spec), *out = NULL;
	rz_err_t err = { 0 };
	char *text = (char *)1, *dump;
	int64_t rv;

	rz_store_next(st, &(rz_write_opts_t){ .group = true, .text = &text });
	ck_assert_msg(rz_store_create(st, K("Tenant"), in, NULL, &out, &err) == 0, "%s", err.msg);
	rv = rz_object_rv(out);
	/* the stored text is out, as a reply would dump it */
	dump = json_dumps(out, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, dump);
	free(dump);
	free(text);
	json_decref(out);
	json_decref(in);
	return rv;
}

START_TEST(test_grouped_writes_publish_at_commit)
{
	struct event_base *base = event_base_new();
	rz_err_t err = { 0 };
	int64_t rv0;
	json_t *in;

	ck_assert_msg(rz_db_start(db, base, RZ_DURABILITY_NORMAL, &err) == 0, "%s", err.msg);
	rv0 = rz_store_revision(st);
	clear_events();
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof(name), "g%d", i);
		ck_assert_int_eq(create_grouped(name), rv0 + 1 + i);
	}
	ck_assert_uint_eq(nevents, 0); /* held for the commit */
	ck_assert_int_eq(rz_store_revision(st), rv0 + 3);
	json_decref(get_ok("Tenant", NULL, "g1")); /* readable here at once */
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(nevents, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(events[i].rv, rv0 + 1 + i);
		ck_assert_int_eq(events[i].type, RZ_EV_ADDED);
	}

	/* a write that is not grouped publishes the group's events first, then its own */
	ck_assert_int_eq(create_grouped("g3"), rv0 + 4);
	in = manifest("Tenant", NULL, "g4", tenant_spec);
	json_decref(create_ok(in));
	ck_assert_uint_eq(nevents, 5);
	ck_assert_str_eq(events[3].name, "g3");
	ck_assert_str_eq(events[4].name, "g4");

	/* the commit fails (a deferred constraint): nothing of the group stays or is told */
	exec_ok("CREATE TABLE p (id INTEGER PRIMARY KEY)");
	exec_ok("CREATE TABLE c (p_id INTEGER REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)");
	exec_ok("CREATE TRIGGER poison AFTER INSERT ON objects WHEN NEW.name = 'poison' BEGIN "
	        "INSERT INTO c (p_id) VALUES (42); END");
	ck_assert_int_eq(create_grouped("g5"), rv0 + 6);
	ck_assert_int_eq(create_grouped("poison"), rv0 + 7);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(nevents, 5);
	ck_assert_int_eq(rz_store_revision(st), rv0 + 5);
	assert_absent("Tenant", NULL, "g5");
	assert_absent("Tenant", NULL, "poison");
	/* and the revisions go on from the last committed one */
	ck_assert_int_eq(create_grouped("g6"), rv0 + 6);
	close_store(); /* commits g6 */
	event_base_free(base);
	open_store(WINDOW);
	json_decref(get_ok("Tenant", NULL, "g6"));
	ck_assert_int_eq(rz_store_revision(st), rv0 + 6);
}
END_TEST

START_TEST(test_window_pruned_in_batches)
{
	rz_err_t err = { 0 };
	int64_t n, least = 1000, most = 0;
	char v[16];

	rz_store_free(st);
	ck_assert_int_eq(rz_store_new(&st, db, bus, 128, &err), 0);
	create_tenant("t");
	for (int i = 0; i < 400; i++) {
		snprintf(v, sizeof(v), "%d", i);
		clear_events();
		json_decref(relabel("Tenant", NULL, "t", "n", v));
		if (i >= 200) {
			n = query_int("SELECT count(*) FROM events");
			least = n < least ? n : least;
			most = n > most ? n : most;
			ck_assert_int_eq(rz_store_oldest(st), rz_store_revision(st) - n + 1);
		}
	}
	ck_assert_int_eq(least, 128);
	ck_assert_int_eq(most, 130);
	ck_assert_int_eq(replay_rc(rz_store_revision(st) - 128, &err), 0);
	clear_events();
}
END_TEST

START_TEST(test_window_minimum)
{
	rz_err_t err = { 0 };

	rz_store_free(st);
	ck_assert_int_eq(rz_store_new(&st, db, bus, 0, &err), 0);
	create_tenant("a");
	create_tenant("b");
	create_tenant("c");
	ck_assert_int_eq(query_int("SELECT count(*) FROM events"), 1);
	ck_assert_int_eq(rz_store_oldest(st), 3);
	ck_assert_int_eq(replay_rc(1, &err), RZ_EGONE);
	ck_assert_str_eq(err.msg, "too old resource version: 1 (2)");
}
END_TEST

/* ------------------------------------------------------------------ persistence */

START_TEST(test_persistence)
{
	json_t *t, *a, *again, *out;
	struct replayed *r;

	create_tenant("t");
	create_in("NodeGroup", "t", "a");
	json_decref(relabel("NodeGroup", "t", "a", "k", "v"));
	t = get_ok("Tenant", NULL, "t");
	a = get_ok("NodeGroup", "t", "a");
	ck_assert_int_eq(rz_store_revision(st), 3);

	close_store();
	open_store(WINDOW);
	ck_assert_int_eq(rz_store_revision(st), 3);
	ck_assert_int_eq(rz_store_oldest(st), 1);
	ck_assert_int_eq(rz_store_count(st), 2);
	again = get_ok("Tenant", NULL, "t");
	ck_assert(json_equal(again, t));
	json_decref(again);
	again = get_ok("NodeGroup", "t", "a");
	ck_assert(json_equal(again, a));
	json_decref(again);
	r = replay_ok(0);
	ck_assert_uint_eq(r->n, 3);
	assert_replay_matches(r, 0);
	replayed_free(r);

	/* New writes continue after the old revision. */
	out = create_ok(manifest("Tenant", NULL, "u", tenant_spec));
	ck_assert_str_eq(mstr(out, "resourceVersion"), "4");
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 4);
	ck_assert_uint_eq(nevents, 4);
	assert_event(3, RZ_EV_ADDED, 4, "Tenant", "", "u", true);

	/* Updated objects too. */
	out = relabel("NodeGroup", "t", "a", "k", "w");
	ck_assert_str_eq(mstr(out, "resourceVersion"), "5");
	json_decref(out);
	json_decref(t);
	json_decref(a);

	/* Reopening with a smaller window prunes on the next write. */
	close_store();
	open_store(2);
	ck_assert_int_eq(rz_store_revision(st), 5);
	create_tenant("v");
	ck_assert_int_eq(rz_store_oldest(st), 5);
}
END_TEST

START_TEST(test_new_without_schema)
{
	size_t n = 0;
	const rz_migration_t *m = rz_db_migrations(&n);
	rz_store_t *other = (rz_store_t *)1;
	rz_db_t *old = NULL;
	rz_err_t err = { 0 };
	char *path = NULL;

	ck_assert_int_gt(asprintf(&path, "%s/old.db", dir), 0);
	ck_assert_int_eq(rz_db_open_with(&old, path, m, n, 1, &err), 0);
	ck_assert_int_eq(rz_store_new(&other, old, bus, WINDOW, &err), RZ_EDB);
	ck_assert_ptr_null(other);
	ck_assert_str_eq(err.msg, "store: cannot read the revision counter");
	rz_db_close(old);
	free(path);
}
END_TEST

/* ------------------------------------------------------------------ failure */

static void assert_untouched(int64_t rv, size_t n)
{
	ck_assert_int_eq(rz_store_revision(st), rv);
	ck_assert_uint_eq(nevents, n);
	ck_assert_int_eq(query_int("SELECT rv FROM revision"), rv);
	ck_assert_int_eq(query_int("SELECT max(rv) FROM events"), rv);
}

START_TEST(test_failed_write_changes_nothing)
{
	json_t *in, *out = NULL, *cur;
	rz_err_t err = { 0 };
	bool gone = true;

	create_tenant("t");
	create_in("NodeGroup", "t", "a");
	cur = get_ok("Tenant", NULL, "t");

	/* The event log refuses: create, update and delete all fail as a whole. */
	exec_ok("CREATE TRIGGER fail BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'boom'); "
	        "END");
	in = manifest("Tenant", NULL, "u", tenant_spec);
	out = (json_t *)1;
	ck_assert_int_eq(rz_store_create(st, K("Tenant"), in, NULL, &out, &err), RZ_EDB);
	ck_assert_int_eq(err.code, RZ_EDB);
	ck_assert_msg(strstr(err.msg, "boom") != NULL, "%s", err.msg);
	ck_assert_ptr_null(out);
	json_decref(in);
	assert_untouched(2, 2);
	assert_absent("Tenant", NULL, "u");

	in = json_deep_copy(cur);
	json_object_set_new(json_object_get(in, "spec"), "talosVersion", json_string("1.12.9"));
	out = (json_t *)1;
	ck_assert_int_eq(update("Tenant", NULL, "t", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err),
	                 RZ_EDB);
	ck_assert_ptr_null(out);
	assert_untouched(2, 2);
	out = get_ok("Tenant", NULL, "t");
	ck_assert(json_equal(out, cur));
	json_decref(out);

	out = (json_t *)1;
	ck_assert_int_eq(rz_store_delete(st, K("NodeGroup"), "t", "a", 0, NULL, &out, &gone, &err),
	                 RZ_EDB);
	ck_assert_ptr_null(out);
	assert_untouched(2, 2);
	json_decref(get_ok("NodeGroup", "t", "a"));

	/* The revision counter refuses (the last step of a write). */
	exec_ok("DROP TRIGGER fail");
	exec_ok(
	    "CREATE TRIGGER fail2 BEFORE UPDATE ON revision BEGIN SELECT RAISE(ABORT, 'boom2'); "
	    "END");
	in = manifest("Tenant", NULL, "u", tenant_spec);
	out = (json_t *)1;
	ck_assert_int_eq(rz_store_create(st, K("Tenant"), in, NULL, &out, &err), RZ_EDB);
	ck_assert_msg(strstr(err.msg, "boom2") != NULL, "%s", err.msg);
	ck_assert_ptr_null(out);
	assert_untouched(2, 2);
	assert_absent("Tenant", NULL, "u");
	exec_ok("DROP TRIGGER fail2");

	/* Writes work again and the revision continues without a gap. */
	out = create_ok(in);
	ck_assert_str_eq(mstr(out, "resourceVersion"), "3");
	json_decref(out);
	assert_untouched(3, 3);
	assert_event(2, RZ_EV_ADDED, 3, "Tenant", "", "u", true);
	ck_assert_int_eq(query_int("SELECT count(*) FROM events"), 3);
	json_decref(cur);
}
END_TEST

/* A tenant's teardown is one transaction: when removing the tenant row fails, its objects
 * stay too and nothing is published. */
START_TEST(test_failed_cascade_changes_nothing)
{
	json_t *in, *out = NULL, *cur;
	rz_err_t err = { 0 };
	bool gone = true;

	create_tenant("t");
	create_in("NodeGroup", "t", "a");
	create_in("ConfigPatch", "t", "p");
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "t", 0, NULL, &out, &gone, &err),
	                 0);
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 4);
	cur = get_ok("Tenant", NULL, "t");

	exec_ok("CREATE TRIGGER fail BEFORE DELETE ON objects WHEN old.kind = 'Tenant' "
	        "BEGIN SELECT RAISE(ABORT, 'boom'); END");
	in = json_deep_copy(cur);
	json_object_set_new(meta(in), "finalizers", json_array());
	out = (json_t *)1;
	gone = true;
	ck_assert_int_eq(
	    update("Tenant", NULL, "t", json_deep_copy(in), 0, RZ_UPDATE_SPEC, &out, &gone, &err),
	    RZ_EDB);
	ck_assert_ptr_null(out);
	assert_untouched(4, 4);
	out = get_ok("Tenant", NULL, "t");
	ck_assert(json_equal(out, cur));
	json_decref(out);
	json_decref(get_ok("NodeGroup", "t", "a"));
	json_decref(get_ok("ConfigPatch", "t", "p"));
	ck_assert_int_eq(rz_store_count(st), 3);

	exec_ok("DROP TRIGGER fail");
	ck_assert_int_eq(update("Tenant", NULL, "t", in, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	ck_assert(gone);
	json_decref(out);
	assert_untouched(7, 7);
	ck_assert_int_eq(rz_store_count(st), 0);
	json_decref(cur);
}
END_TEST

/* ------------------------------------------------------------------ nested writes */

/* A subscriber that, on the first event of kind/type, creates an object from its callback. */
struct writer {
	const char *on_kind;
	rz_event_type_t on_type;
	const char *kind, *tenant, *name; /* what to create */
	int fired;
	int rc;
	char msg[256];
	int64_t seen_rv;       /* the triggering event's rv */
	int64_t visible_rv;    /* the triggering object's rv as rz_store_get saw it, or -1 */
	int64_t revision_then; /* rz_store_revision() after the nested write */
};

static void write_on_event(const rz_event_t *ev, void *arg)
{
	struct writer *w = arg;
	rz_err_t err = { 0 };
	json_t *out = NULL, *cur = NULL;

	if (w->fired || ev->type != w->on_type || strcmp(ev->kind->kind, w->on_kind) != 0) {
		return;
	}
	w->fired = 1;
	w->seen_rv = ev->rv;
	w->visible_rv = -1;
	if (rz_store_get(st, ev->kind, ev->tenant, ev->name, &cur, &err) == 0) {
		w->visible_rv = rz_object_rv(cur);
	}
	json_decref(cur);
	cur = manifest(w->kind, w->tenant, w->name,
	               strcmp(w->kind, "Tenant") == 0 ? tenant_spec : ng_spec);
	w->rc = rz_store_create(st, K(w->kind), cur, NULL, &out, &err);
	json_decref(cur);
	snprintf(w->msg, sizeof(w->msg), "%s", err.msg);
	w->revision_then = rz_store_revision(st);
	json_decref(out);
}

static struct writer writer;

START_TEST(test_nested_write)
{
	uint64_t id;
	json_t *out;

	writer = (struct writer){ .on_kind = "Tenant",
		                  .on_type = RZ_EV_ADDED,
		                  .kind = "NodeGroup",
		                  .tenant = "t",
		                  .name = "auto" };
	id = rz_bus_subscribe(bus, write_on_event, &writer);
	ck_assert_uint_gt(id, 0);

	create_tenant("t");
	ck_assert_int_eq(writer.fired, 1);
	ck_assert_msg(writer.rc == 0, "nested create: %s", writer.msg);
	ck_assert_int_eq(writer.seen_rv, 1);
	/* The callback runs after the commit: the object is readable. */
	ck_assert_int_eq(writer.visible_rv, 1);
	ck_assert_int_eq(writer.revision_then, 2);

	ck_assert_int_eq(rz_store_revision(st), 2);
	ck_assert_uint_eq(nevents, 2);
	assert_event(0, RZ_EV_ADDED, 1, "Tenant", "", "t", true);
	assert_event(1, RZ_EV_ADDED, 2, "NodeGroup", "t", "auto", true);
	out = get_ok("NodeGroup", "t", "auto");
	ck_assert_str_eq(mstr(out, "resourceVersion"), "2");
	json_decref(out);
	ck_assert_int_eq(query_int("SELECT count(*) FROM events"), 2);

	/* Later writes go on normally. */
	create_tenant("u");
	ck_assert_int_eq(rz_store_revision(st), 3);
	ck_assert_uint_eq(nevents, 3);
	assert_event(2, RZ_EV_ADDED, 3, "Tenant", "", "u", true);
	rz_bus_unsubscribe(bus, id);
}
END_TEST

/* Every subscriber must see revisions in increasing order (a watch resumes from the last id
 * it saw): a nested write's event is delivered after the batch being delivered. */
static void assert_in_order(size_t n)
{
	ck_assert_uint_eq(nevents, n);
	for (size_t i = 0; i < nevents; i++) {
		ck_assert_msg(events[i].rv == (int64_t)i + 1,
		              "event %zu has rv %" PRId64 " (%s %s/%s), want %zu", i, events[i].rv,
		              rz_event_type_name(events[i].type), events[i].tenant, events[i].name,
		              i + 1);
	}
}

/* The events of a write made from inside a subscriber are delivered after the batch being
 * delivered, so every subscriber sees revisions in order (not 5, 8, 6, 7). */
START_TEST(test_nested_write_after_batch)
{
	json_t *cur, *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;
	uint64_t id;

	create_tenant("t");
	create_in("NodeGroup", "t", "a");
	create_in("NodeGroup", "t", "b");
	cur = get_ok("Tenant", NULL, "t");
	json_object_set_new(meta(cur), "finalizers", json_array());
	ck_assert_int_eq(update("Tenant", NULL, "t", cur, 0, RZ_UPDATE_SPEC, &out, &gone, &err), 0);
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 4);

	writer = (struct writer){
		.on_kind = "NodeGroup", .on_type = RZ_EV_DELETED, .kind = "Tenant", .name = "audit"
	};
	id = rz_bus_subscribe(bus, write_on_event, &writer);
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "t", 0, NULL, &out, &gone, &err),
	                 0);
	ck_assert(gone);
	json_decref(out);
	rz_bus_unsubscribe(bus, id);

	ck_assert_int_eq(writer.fired, 1);
	ck_assert_msg(writer.rc == 0, "nested create: %s", writer.msg);
	ck_assert_int_eq(writer.revision_then, 8);
	ck_assert_int_eq(rz_store_revision(st), 8);
	json_decref(get_ok("Tenant", NULL, "audit"));
	assert_in_order(8);
	assert_event(7, RZ_EV_ADDED, 8, "Tenant", "", "audit", true);
}
END_TEST

/* A subscriber registered after the writing one receives the event that caused the nested
 * write (rv 1) before the nested one (rv 2). */
START_TEST(test_nested_write_order_all_subscribers)
{
	uint64_t id;

	rz_bus_unsubscribe(bus, rec_id);
	writer = (struct writer){ .on_kind = "Tenant",
		                  .on_type = RZ_EV_ADDED,
		                  .kind = "NodeGroup",
		                  .tenant = "t",
		                  .name = "auto" };
	id = rz_bus_subscribe(bus, write_on_event, &writer);
	rec_id = rz_bus_subscribe(bus, record, &events);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);

	create_tenant("t");
	rz_bus_unsubscribe(bus, id);
	ck_assert_msg(writer.rc == 0, "nested create: %s", writer.msg);
	ck_assert_int_eq(rz_store_revision(st), 2);
	assert_in_order(2);
	assert_event(0, RZ_EV_ADDED, 1, "Tenant", "", "t", true);
	assert_event(1, RZ_EV_ADDED, 2, "NodeGroup", "t", "auto", true);
}
END_TEST

/* ------------------------------------------------------------------ small helpers */

/* No object above RZ_OBJECT_MAX is stored, by a create or an update, so the event log
 * cannot keep unbounded copies; one being deleted stays deletable. */
START_TEST(test_object_size_bound)
{
	size_t n = RZ_OBJECT_MAX;
	char *big = malloc(n + 1);
	json_t *m, *out = NULL, *cur;
	rz_err_t err = { 0 };
	bool gone = false;
	int64_t rv;

	ck_assert_ptr_nonnull(big);
	memset(big, 'x', n);
	big[n] = '\0';
	m = manifest("Tenant", NULL, "t", tenant_spec);
	json_object_set_new(json_object_get(m, "spec"), "blob", json_string(big));
	ck_assert_int_eq(rz_store_create(st, K("Tenant"), m, NULL, &out, &err), -E2BIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "the object is too large"));
	json_decref(m);
	ck_assert_int_eq(rz_store_revision(st), 0);
	ck_assert_int_eq(query_int("SELECT count(*) FROM events"), 0);
	create_tenant("t");
	rv = rz_store_revision(st);
	cur = get_ok("Tenant", NULL, "t");
	json_object_set_new(json_object_get(cur, "spec"), "blob", json_string(big));
	ck_assert_int_eq(rz_store_update(st, K("Tenant"), NULL, "t", cur, 0, RZ_UPDATE_SPEC, NULL,
	                                 &out, &gone, &err),
	                 -E2BIG);
	json_decref(cur);
	ck_assert_int_eq(rz_store_revision(st), rv);
	big[n - 4096] = '\0'; /* well under the bound: stored */
	cur = get_ok("Tenant", NULL, "t");
	json_object_set_new(json_object_get(cur, "spec"), "blob", json_string(big));
	ck_assert_int_eq(rz_store_update(st, K("Tenant"), NULL, "t", cur, 0, RZ_UPDATE_SPEC, NULL,
	                                 &out, &gone, &err),
	                 0);
	json_decref(out);
	json_decref(cur);
	free(big);
}
END_TEST

/* The event log keeps at most its byte bound of documents, oldest dropped first, never the
 * events of the write that passed it; its size is known again after a restart, and a failed
 * write leaves it as it was. */
START_TEST(test_event_log_byte_bound)
{
	char blob[50001];
	json_t *cur, *out = NULL;
	rz_err_t err = { 0 };
	bool gone = false;
	int64_t logged;

	memset(blob, 'y', sizeof(blob) - 1);
	blob[sizeof(blob) - 1] = '\0';
	rz_store_set_log_max(st, 200000);
	create_tenant("t");
	for (int i = 0; i < 20; i++) {
		cur = get_ok("Tenant", NULL, "t");
		blob[0] = (char)('a' + i);
		json_object_set_new(json_object_get(cur, "spec"), "blob", json_string(blob));
		ck_assert_int_eq(rz_store_update(st, K("Tenant"), NULL, "t", cur, 0, RZ_UPDATE_SPEC,
		                                 NULL, &out, &gone, &err),
		                 0);
		json_decref(out);
		json_decref(cur);
		logged = query_int("SELECT sum(length(CAST(doc AS BLOB))) FROM events");
		ck_assert_int_eq((int64_t)rz_store_log_bytes(st), logged);
		ck_assert_int_le(logged, 200000);
	}
	ck_assert_int_eq(rz_store_revision(st), 21);
	ck_assert_int_lt(query_int("SELECT count(*) FROM events"), 10);
	ck_assert_int_eq(query_int("SELECT max(rv) FROM events"), 21); /* the newest is kept */
	ck_assert_int_gt(rz_store_oldest(st), 2);
	ck_assert_int_eq(replay_rc(0, &err), RZ_EGONE);
	ck_assert_int_eq(replay_rc(rz_store_oldest(st) - 1, &err), 0);

	/* one write larger than the bound: its own event stays, every older one goes */
	rz_store_set_log_max(st, 1000);
	cur = get_ok("Tenant", NULL, "t");
	json_object_set_new(json_object_get(cur, "spec"), "blob", json_string("small"));
	ck_assert_int_eq(rz_store_update(st, K("Tenant"), NULL, "t", cur, 0, RZ_UPDATE_SPEC, NULL,
	                                 &out, &gone, &err),
	                 0);
	json_decref(out);
	json_decref(cur);
	ck_assert_int_eq(query_int("SELECT count(*) FROM events"), 1);
	ck_assert_int_eq(query_int("SELECT min(rv) FROM events"), 22);

	/* a write the store refuses changes nothing */
	logged = (int64_t)rz_store_log_bytes(st);
	cur = get_ok("Tenant", NULL, "t");
	ck_assert_int_eq(rz_store_update(st, K("Tenant"), NULL, "t", cur, 1, RZ_UPDATE_SPEC, NULL,
	                                 &out, &gone, &err),
	                 RZ_ECONFLICT);
	json_decref(cur);
	ck_assert_int_eq((int64_t)rz_store_log_bytes(st), logged);

	close_store();
	open_store(WINDOW);
	ck_assert_int_eq((int64_t)rz_store_log_bytes(st), logged);
}
END_TEST

START_TEST(test_object_rv)
{
	static const struct {
		const char *json;
		int64_t rv;
	} cases[] = {
		{ "{\"metadata\":{\"resourceVersion\":\"12\"}}", 12 },
		{ "{\"metadata\":{\"resourceVersion\":\"9223372036854775807\"}}", INT64_MAX },
		{ "{\"metadata\":{\"resourceVersion\":\"0\"}}", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"-3\"}}", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"12a\"}}", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"\"}}", 0 },
		{ "{\"metadata\":{\"resourceVersion\":12}}", 0 },
		{ "{\"metadata\":{}}", 0 },
		{ "{}", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = parse(cases[i].json);
		ck_assert_msg(rz_object_rv(o) == cases[i].rv, "%s", cases[i].json);
		json_decref(o);
	}
	ck_assert_int_eq(rz_object_rv(NULL), 0);
}
END_TEST

START_TEST(test_time_now)
{
	char buf[21];

	memset(buf, 'x', sizeof(buf));
	rz_time_now(buf, sizeof(buf));
	assert_recent_time(buf);
}
END_TEST

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_create_tenant);
	tcase_add_test(tc, test_create_finalizer_not_duplicated);
	tcase_add_test(tc, test_create_tenant_scoped);
	tcase_add_test(tc, test_create_duplicate);
	tcase_add_test(tc, test_create_missing_tenant);
	tcase_add_test(tc, test_create_in_terminating_tenant);
	tcase_add_test(tc, test_update_spec);
	tcase_add_test(tc, test_update_spec_replaces_user_metadata);
	tcase_add_test(tc, test_update_status);
	tcase_add_test(tc, test_conditions_follow_the_phase);
	tcase_add_test(tc, test_update_managed_fields);
	tcase_add_test(tc, test_delete_without_finalizers);
	tcase_add_test(tc, test_delete_with_finalizers);
	tcase_add_test(tc, test_delete_tenant_without_finalizers);
	tcase_add_test(tc, test_list_sorted_and_filtered);
	tcase_add_test(tc, test_list_selectors);
	tcase_add_test(tc, test_list_pages);
	tcase_add_test(tc, test_scan_pages_stored_text);
	tcase_add_test(tc, test_list_query_plans_use_the_key);
	tcase_add_test(tc, test_sweep_pages_between_turns);
	tcase_add_test(tc, test_replay);
	tcase_add_test(tc, test_replay_pruned);
	tcase_add_test(tc, test_window_minimum);
	tcase_add_test(tc, test_window_pruned_in_batches);
	tcase_add_test(tc, test_grouped_writes_publish_at_commit);
	tcase_add_test(tc, test_update_with_current);
	tcase_add_test(tc, test_get_shared);
	tcase_add_test(tc, test_persistence);
	tcase_add_test(tc, test_new_without_schema);
	tcase_add_test(tc, test_failed_write_changes_nothing);
	tcase_add_test(tc, test_failed_cascade_changes_nothing);
	tcase_add_test(tc, test_nested_write);
	tcase_add_test(tc, test_nested_write_after_batch);
	tcase_add_test(tc, test_nested_write_order_all_subscribers);
	tcase_add_test(tc, test_object_size_bound);
	tcase_add_test(tc, test_event_log_byte_bound);
	tcase_add_test(tc, test_object_rv);
	tcase_add_test(tc, test_time_now);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return rzt_run(store_suite());
}
