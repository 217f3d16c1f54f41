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
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "core/bus.h"
#include "core/db.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/log.h"
#include "core/selector.h"
#include "core/store.h"

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

	ck_assert_msg(rz_store_create(st, k, m, &out, &err) == 0, "create %s: %s",
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
                  int64_t expect_rv, rz_update_mode_t mode, json_t **out, bool *gone,
                  rz_err_t *err)
{
	int rc = rz_store_update(st, K(kind), tenant, name, in, expect_rv, mode, out, gone, err);

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
			ck_assert_msg(isxdigit((unsigned char)s[i]) && !isupper((unsigned char)s[i]),
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

	ck_assert_int_eq(rz_store_create(st, K("Tenant"), in, &out, &err), 0);
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
	ck_assert_ptr_null(json_object_get(out, "status"));
	ck_assert(json_equal(json_object_get(out, "spec"), json_object_get(in, "spec")));
	ck_assert(json_equal(json_object_get(meta(out), "labels"), parse("{\"team\":\"a\"}")));
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
	ck_assert_int_eq(rz_store_create(st, K("Tenant"), in, &out, &err), -EEXIST);
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
	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, &out, &err), -EEXIST);
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

	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, &out, &err), RZ_ENOTFOUND);
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
	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, &out, &err), REZUS_EINTERNAL);
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
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "t", 0, &out, &gone, &err), 0);
	ck_assert(!gone);
	json_decref(out);
	ck_assert_int_eq(rz_store_revision(st), 2);

	in = manifest("NodeGroup", "t", "a", ng_spec);
	out = (json_t *)1;
	ck_assert_int_eq(rz_store_create(st, K("NodeGroup"), in, &out, &err), RZ_ETERMINATING);
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
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(meta(out), "labels"),
	                                                   "env")),
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
	ck_assert_ptr_null(json_object_get(out, "status"));
	ck_assert_int_eq(rz_store_revision(st), 3);
	ck_assert_uint_eq(nevents, 3);
	json_decref(out);

	/* An identical update: no new revision, no event. */
	ck_assert_int_eq(update("Tenant", NULL, "x", json_deep_copy(cur), 3, RZ_UPDATE_SPEC, &out,
	                        &gone, &err),
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
	ck_assert_int_eq(update("Tenant", NULL, "x", json_deep_copy(in), 2, RZ_UPDATE_SPEC, &out,
	                        &gone, &err),
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

START_TEST(test_update_status)
{
	json_t *cur, *in, *out = NULL, *status;
	rz_err_t err = { 0 };
	bool gone = true;

	create_tenant("x");
	cur = get_ok("Tenant", NULL, "x");

	/* Only status is taken: spec and labels in the input are ignored. */
	in = json_deep_copy(cur);
	json_object_set_new(json_object_get(in, "spec"), "kubernetesVersion",
	                    json_string("9.9.9"));
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
	ck_assert_int_eq(update("Tenant", NULL, "x", json_deep_copy(cur), 0, RZ_UPDATE_STATUS,
	                        &out, &gone, &err),
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
	ck_assert_int_eq(update("Tenant", NULL, "x", json_deep_copy(cur), 2, RZ_UPDATE_STATUS,
	                        &out, &gone, &err),
	                 RZ_ECONFLICT);
	ck_assert_str_eq(err.msg, CONFLICT_MSG("tenants", "x"));
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(nevents, 3);
	json_decref(cur);
}
END_TEST
