/*
 * tests/unit/check_events.c - Events (SPEC §4 Event): a record creates an Event named after
 * its object, a repeat counts it up (watchers see MODIFIED), another reason, type or object
 * is another Event, a hash collision takes the next name, bad arguments are refused with
 * one log line and nothing written, a tenant that is gone records nothing (one being
 * deleted still does) and takes its Events along when it goes; pruning by age and by count
 * per tenant
 * keeps the newest.
 *
 * Every test works on a database file in a fresh private directory, a bus with a recorder
 * that copies each published Event change, and the log in a file.
 */
#include <config.h>

#include "tests/unit/testutil.h"

#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/base/log.h"
#include "core/model/kinds.h"
#include "core/store/bus.h"
#include "core/store/db.h"
#include "core/store/events.h"
#include "core/store/store.h"

#define MAX_SEEN 64

/* ------------------------------------------------------------------ fixture */

struct seen {
	rz_event_type_t type;
	bool spec_changed;
	char name[96];
	json_int_t count;
};

static char *dir, *dbpath, *logpath;
static rz_db_t *db;
static rz_bus_t *bus;
static rz_store_t *st;
static struct seen seen[MAX_SEEN];
static size_t nseen;

static void on_change(const rz_event_t *ev, void *arg)
{
	(void)arg;
	if (strcmp(ev->kind->kind, "Event") != 0) {
		return;
	}
	ck_assert_uint_lt(nseen, MAX_SEEN);
	seen[nseen].type = ev->type;
	seen[nseen].spec_changed = ev->spec_changed;
	snprintf(seen[nseen].name, sizeof(seen[nseen].name), "%s", ev->name);
	seen[nseen].count = json_integer_value(json_object_get(ev->object, "count"));
	nseen++;
}

static void setup(void)
{
	rz_err_t err = { 0 };

	dir = rzt_tmpdir();
	ck_assert_int_gt(asprintf(&dbpath, "%s/rezus.db", dir), 0);
	ck_assert_int_gt(asprintf(&logpath, "%s/rezus.log", dir), 0);
	ck_assert_int_eq(rz_log_open(logpath, NULL), 0);
	rz_log_set_level(RZ_LOG_INFO);
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_uint_gt(rz_bus_subscribe(bus, on_change, NULL), 0);
	ck_assert_msg(rz_db_open(&db, dbpath, &err) == 0, "db: %s", err.msg);
	ck_assert_msg(rz_store_new(&st, db, bus, 1000, &err) == 0, "store: %s", err.msg);
	nseen = 0;
}

static void teardown(void)
{
	rz_store_free(st);
	rz_db_close(db);
	rz_bus_free(bus);
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

	ck_assert_ptr_nonnull(k);
	return k;
}

static json_t *create(const char *kind, const char *tenant, const char *name, const char *spec)
{
	json_t *m = json_pack("{s:{s:s}, s:o}", "metadata", "name", name, "spec",
	                      json_loads(spec, 0, NULL));
	json_t *out = NULL;
	rz_err_t err = { 0 };

	if (tenant != NULL) {
		json_object_set_new(json_object_get(m, "metadata"), "tenant", json_string(tenant));
	}
	ck_assert_msg(rz_store_create(st, K(kind), m, NULL, &out, &err) == 0, "create %s: %s", name,
	              err.msg);
	json_decref(m);
	return out;
}

static void tenant(const char *name)
{
	json_decref(create("Tenant", NULL, name, "{\"clusterProvider\":\"sim\"}"));
}

/* Every Event of tenant (NULL: all), sorted by (tenant, name). Caller owns. */
static json_t *events_of(const char *t)
{
	json_t *items = rz_store_list_all(st, "Event", t);

	ck_assert_ptr_nonnull(items);
	return items;
}

static size_t n_events(const char *t)
{
	json_t *items = events_of(t);
	size_t n = json_array_size(items);

	json_decref(items);
	return n;
}

static const char *str(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

static json_int_t count_of(const json_t *ev)
{
	return json_integer_value(json_object_get(ev, "count"));
}

/* The one Event of tenant about kind/name with reason and type (NULL kind or type: any);
 * fails when there is not exactly one. Caller owns. */
static json_t *find_key(const char *t, const char *kind, const char *name, const char *reason,
                        const char *type)
{
	json_t *items = events_of(t), *ev, *found = NULL;
	size_t i, n = 0;

	json_array_foreach(items, i, ev)
	{
		if ((kind == NULL || strcmp(str(ev, "involvedObject", "kind"), kind) == 0) &&
		    strcmp(str(ev, "involvedObject", "name"), name) == 0 &&
		    strcmp(str(ev, "reason", NULL), reason) == 0 &&
		    (type == NULL || strcmp(str(ev, "type", NULL), type) == 0)) {
			found = ev;
			n++;
		}
	}
	ck_assert_msg(n == 1, "%zu events about %s/%s for %s", n, t, name, reason);
	json_incref(found);
	json_decref(items);
	return found;
}

static json_t *find(const char *t, const char *name, const char *reason)
{
	return find_key(t, NULL, name, reason, NULL);
}

static bool matches(const char *re, const char *s)
{
	regex_t r;
	bool ok;

	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	ok = s != NULL && regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Lines of the log holding needle. */
static int log_lines(const char *needle)
{
	FILE *f = fopen(logpath, "r");
	char line[4096];
	int n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		n += strstr(line, needle) != NULL;
	}
	fclose(f);
	return n;
}

/* Make a stored Event look as if it last happened at when (RFC 3339). */
static void age(const char *t, const char *name, const char *reason, const char *when)
{
	json_t *ev = find(t, name, reason), *out = NULL;
	rz_err_t err = { 0 };

	json_object_set_new(ev, "lastTimestamp", json_string(when));
	ck_assert_int_eq(rz_store_update(st, K("Event"), t, str(ev, "metadata", "name"), ev, 0,
	                                 RZ_UPDATE_STATUS, NULL, &out, NULL, &err),
	                 0);
	ck_assert_str_eq(str(out, "lastTimestamp", NULL), when);
	json_decref(out);
	json_decref(ev);
}

#define RECORD(t, kind, name, type, reason, msg)                                                   \
	ck_assert_int_eq(rz_events_record(st, t, kind, name, type, reason, msg, "engine"), 0)

/* ------------------------------------------------------------------ recording */

START_TEST(test_record_creates)
{
	json_t *ng, *items, *ev, *v;
	const char *key;
	const char *order[] = { "apiVersion", "kind", "metadata", "involvedObject" };
	size_t i = 0;

	tenant("acme");
	ng = create("NodeGroup", "acme", "web", "{\"role\":\"worker\"}");
	nseen = 0;
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", "scaled to 3 machines");
	items = events_of("acme");
	ck_assert_uint_eq(json_array_size(items), 1);
	ev = json_array_get(items, 0);
	ck_assert_str_eq(str(ev, "apiVersion", NULL), "rezuscloud.io/v1");
	ck_assert_str_eq(str(ev, "kind", NULL), "Event");
	ck_assert(matches("^web\\.[0-9a-f]{8}$", str(ev, "metadata", "name")));
	ck_assert_str_eq(str(ev, "metadata", "tenant"), "acme");
	ck_assert_str_eq(str(ev, "involvedObject", "kind"), "NodeGroup");
	ck_assert_str_eq(str(ev, "involvedObject", "name"), "web");
	ck_assert_str_eq(str(ev, "involvedObject", "uid"), str(ng, "metadata", "uid"));
	/* where Kubernetes clients look for it (kubectl describe's field selector) */
	ck_assert_str_eq(str(ev, "involvedObject", "namespace"), "acme");
	ck_assert_str_eq(str(ev, "involvedObject", "apiVersion"), "rezuscloud.io/v1");
	ck_assert_str_eq(str(ev, "reason", NULL), "ScaledUp");
	ck_assert_str_eq(str(ev, "message", NULL), "scaled to 3 machines");
	ck_assert_str_eq(str(ev, "type", NULL), "Normal");
	ck_assert_int_eq(count_of(ev), 1);
	ck_assert(matches("^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
	                  str(ev, "firstTimestamp", NULL)));
	ck_assert_str_eq(str(ev, "lastTimestamp", NULL), str(ev, "firstTimestamp", NULL));
	ck_assert_str_eq(str(ev, "source", "component"), "engine");
	ck_assert_ptr_null(json_object_get(ev, "spec"));
	ck_assert_ptr_null(json_object_get(ev, "status"));
	json_object_foreach(ev, key, v)
	{
		if (i < sizeof(order) / sizeof(order[0])) {
			ck_assert_str_eq(key, order[i++]); /* printed as Kubernetes prints it */
		}
	}
	ck_assert_uint_eq(nseen, 1);
	ck_assert_int_eq(seen[0].type, RZ_EV_ADDED);
	ck_assert_str_eq(seen[0].name, str(ev, "metadata", "name"));
	/* an object the store does not hold (yet) has no uid */
	RECORD("acme", "Machine", "web-0", "Warning", "Unreachable", "no answer on :50000");
	ev = find("acme", "web-0", "Unreachable");
	ck_assert_ptr_null(json_object_get(json_object_get(ev, "involvedObject"), "uid"));
	json_decref(ev);
	/* a Tenant is cluster-scoped: its events name no namespace */
	RECORD("acme", "Tenant", "acme", "Normal", "Ready", "phase Ready");
	ev = find("acme", "acme", "Ready");
	ck_assert_str_eq(str(ev, "involvedObject", "kind"), "Tenant");
	ck_assert_ptr_nonnull(json_object_get(json_object_get(ev, "involvedObject"), "uid"));
	ck_assert_ptr_null(json_object_get(json_object_get(ev, "involvedObject"), "namespace"));
	json_decref(ev);
	json_decref(items);
	json_decref(ng);
}
END_TEST

START_TEST(test_repeat_counts)
{
	json_t *first, *again, *items;

	tenant("acme");
	RECORD("acme", "Tenant", "acme", "Warning", "ApplyFailed", "first try");
	first = find("acme", "acme", "ApplyFailed");
	sleep_ms(20);
	nseen = 0;
	RECORD("acme", "Tenant", "acme", "Warning", "ApplyFailed", "second try");
	again = find("acme", "acme", "ApplyFailed");
	items = events_of("acme");
	ck_assert_uint_eq(json_array_size(items), 1);
	json_decref(items);
	ck_assert_str_eq(str(again, "metadata", "name"), str(first, "metadata", "name"));
	ck_assert_str_eq(str(again, "metadata", "uid"), str(first, "metadata", "uid"));
	ck_assert_int_eq(count_of(again), 2);
	ck_assert_str_eq(str(again, "message", NULL), "second try");
	ck_assert_str_eq(str(again, "firstTimestamp", NULL), str(first, "firstTimestamp", NULL));
	ck_assert_str_gt(str(again, "lastTimestamp", NULL), str(first, "lastTimestamp", NULL));
	ck_assert_int_gt(rz_object_rv(again), rz_object_rv(first));
	ck_assert_str_eq(str(again, "involvedObject", "uid"), str(first, "involvedObject", "uid"));
	ck_assert_uint_eq(nseen, 1);
	ck_assert_int_eq(seen[0].type, RZ_EV_MODIFIED);
	ck_assert(!seen[0].spec_changed); /* a status write: the engine does not react */
	ck_assert_int_eq(seen[0].count, 2);
	RECORD("acme", "Tenant", "acme", "Warning", "ApplyFailed", "third try");
	json_decref(again);
	again = find("acme", "acme", "ApplyFailed");
	ck_assert_int_eq(count_of(again), 3);
	json_decref(again);
	json_decref(first);
}
END_TEST

START_TEST(test_other_key_is_another_event)
{
	json_t *items, *ev;
	size_t i;

	tenant("acme");
	tenant("beta");
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", "");
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledDown", "");    /* reason */
	RECORD("acme", "NodeGroup", "web", "Warning", "ScaledUp", "");     /* type */
	RECORD("acme", "Machine", "web", "Normal", "ScaledUp", "");        /* kind */
	RECORD("acme", "NodeGroup", "db", "Normal", "ScaledUp", "");       /* name */
	RECORD("beta", "NodeGroup", "web", "Normal", "ScaledUp", "");      /* tenant */
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", "again"); /* a repeat */
	items = events_of(NULL);
	ck_assert_uint_eq(json_array_size(items), 6);
	json_array_foreach(items, i, ev)
	{
		bool repeat = strcmp(str(ev, "metadata", "tenant"), "acme") == 0 &&
		              strcmp(str(ev, "involvedObject", "kind"), "NodeGroup") == 0 &&
		              strcmp(str(ev, "involvedObject", "name"), "web") == 0 &&
		              strcmp(str(ev, "reason", NULL), "ScaledUp") == 0 &&
		              strcmp(str(ev, "type", NULL), "Normal") == 0;
		ck_assert_int_eq(count_of(ev), repeat ? 2 : 1);
		if (i > 0 && strcmp(str(ev, "metadata", "tenant"),
		                    str(json_array_get(items, i - 1), "metadata", "tenant")) == 0) {
			ck_assert_str_ne(str(ev, "metadata", "name"),
			                 str(json_array_get(items, i - 1), "metadata", "name"));
		}
	}
	/* the same key in another tenant has the same name there */
	ev = find_key("acme", "NodeGroup", "web", "ScaledUp", "Normal");
	ck_assert_str_eq(str(json_array_get(items, 5), "metadata", "name"),
	                 str(ev, "metadata", "name"));
	json_decref(ev);
	json_decref(items);
}
END_TEST

/* A name held by an Event of another key (a 32-bit hash collision) is left alone: the
 * record takes the next name. */
START_TEST(test_collision_takes_next_name)
{
	json_t *ev, *out = NULL, *items;
	rz_err_t err = { 0 };
	char name[96];

	tenant("acme");
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", "");
	ev = find("acme", "web", "ScaledUp");
	snprintf(name, sizeof(name), "%s", str(ev, "metadata", "name"));
	json_object_set_new(ev, "reason", json_string("SomethingElse"));
	ck_assert_int_eq(rz_store_update(st, K("Event"), "acme", name, ev, 0, RZ_UPDATE_STATUS,
	                                 NULL, &out, NULL, &err),
	                 0);
	json_decref(out);
	json_decref(ev);
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", "");
	items = events_of("acme");
	ck_assert_uint_eq(json_array_size(items), 2);
	ev = find("acme", "web", "ScaledUp");
	ck_assert_str_ne(str(ev, "metadata", "name"), name);
	ck_assert(matches("^web\\.[0-9a-f]{8}$", str(ev, "metadata", "name")));
	ck_assert_int_eq(count_of(ev), 1);
	json_decref(ev);
	ev = find("acme", "web", "SomethingElse");
	ck_assert_str_eq(str(ev, "metadata", "name"), name);
	ck_assert_int_eq(count_of(ev), 1);
	json_decref(ev);
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", ""); /* and finds it again */
	ev = find("acme", "web", "ScaledUp");
	ck_assert_int_eq(count_of(ev), 2);
	json_decref(ev);
	json_decref(items);
}
END_TEST

START_TEST(test_bad_arguments)
{
	static const struct {
		const char *kind, *name, *type, *reason, *component, *field;
	} cases[] = {
		{ "NodeGroup", "web", "Info", "ScaledUp", "engine", "type" },
		{ "NodeGroup", "Web_1", "Normal", "ScaledUp", "engine", "involvedObject.name" },
		{ "NodeGroup", "web", "Normal", "scaled up", "engine", "reason" },
		{ "NodeGroup", "web", "Normal", "", "engine", "reason" },
		{ "", "web", "Normal", "ScaledUp", "engine", "involvedObject.kind" },
		{ "NodeGroup", "web", "Normal", "ScaledUp", "The Engine", "source.component" },
	};
	char big[3000];

	tenant("acme");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[128];
		int before = log_lines("subsys=events");
		ck_assert_msg(rz_events_record(st, "acme", cases[i].kind, cases[i].name,
		                               cases[i].type, cases[i].reason, "m",
		                               cases[i].component) == REZUS_EINVALID,
		              "case %zu", i);
		ck_assert_int_eq(log_lines("subsys=events"), before + 1); /* once per call */
		snprintf(want, sizeof(want), "failed: %s: ", cases[i].field);
		ck_assert_msg(log_lines(want) >= 1, "case %zu: no log line with '%s'", i, want);
	}
	ck_assert_int_eq(
	    rz_events_record(st, "acme", "NodeGroup", NULL, "Normal", "ScaledUp", "m", "engine"),
	    REZUS_EINVALID);
	ck_assert_int_eq(
	    rz_events_record(NULL, "acme", "NodeGroup", "web", "Normal", "ScaledUp", "m", "engine"),
	    REZUS_EINVALID);
	ck_assert_int_eq(rz_events_record(st, "acme", "NodeGroup", "web", "Normal", "ScaledUp",
	                                  "\xff\xfe not UTF-8", "engine"),
	                 REZUS_EINVALID);
	ck_assert_uint_eq(n_events(NULL), 0);
	ck_assert_uint_eq(nseen, 0);

	/* a long message is cut to 1024 bytes, never inside a character */
	memset(big, 'x', sizeof(big));
	for (size_t i = 1021; i + 1 < sizeof(big); i += 2) {
		big[i] = '\xc3'; /* "é" from here on: 1021 is the first byte of one, 1023 too */
		big[i + 1] = '\xa9';
	}
	big[sizeof(big) - 1] = '\0';
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", big);
	{
		json_t *ev = find("acme", "web", "ScaledUp");
		ck_assert_uint_eq(strlen(str(ev, "message", NULL)), 1023);
		ck_assert_int_eq(strncmp(str(ev, "message", NULL), big, 1023), 0);
		json_decref(ev);
	}
	/* NULL message: an empty one */
	RECORD("acme", "NodeGroup", "db", "Normal", "ScaledUp", NULL);
	{
		json_t *ev = find("acme", "db", "ScaledUp");
		ck_assert_str_eq(str(ev, "message", NULL), "");
		json_decref(ev);
	}
}
END_TEST

START_TEST(test_gone_tenant_is_dropped)
{
	json_t *out = NULL, *ev;
	rz_err_t err = { 0 };
	bool gone = true;
	int before;

	tenant("acme");
	RECORD("acme", "Tenant", "acme", "Normal", "Created", "");
	before = log_lines("subsys=events");
	RECORD("nope", "Tenant", "nope", "Normal", "Created", ""); /* never was */
	ck_assert_uint_eq(n_events("nope"), 0);
	/* being deleted: its finalizer holds it, and its teardown still has events to tell */
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "acme", 0, NULL, &out, &gone, &err),
	                 0);
	ck_assert(!gone);
	json_decref(out);
	RECORD("acme", "Tenant", "acme", "Normal", "Created", "again");
	RECORD("acme", "Tenant", "acme", "Warning", "DestroyBlocked", "");
	ev = find("acme", "acme", "Created");
	ck_assert_int_eq(count_of(ev), 2);
	ck_assert_uint_eq(n_events("acme"), 2);
	json_decref(ev);
	ck_assert_int_eq(log_lines("subsys=events"), before); /* quietly */
}
END_TEST

/* The store's tenant cascade takes the tenant's Events, each with its DELETED. */
START_TEST(test_tenant_deletion_removes_events)
{
	json_t *out = NULL, *t;
	rz_err_t err = { 0 };
	bool gone = false;
	size_t deleted = 0;

	tenant("acme");
	tenant("beta");
	RECORD("acme", "Tenant", "acme", "Normal", "Created", "");
	RECORD("acme", "NodeGroup", "web", "Normal", "ScaledUp", "");
	RECORD("beta", "Tenant", "beta", "Normal", "Created", "");
	ck_assert_int_eq(rz_store_delete(st, K("Tenant"), NULL, "acme", 0, NULL, &out, &gone, &err),
	                 0);
	json_decref(out);
	ck_assert_int_eq(rz_store_get(st, K("Tenant"), NULL, "acme", &t, &err), 0);
	json_object_set_new(json_object_get(t, "metadata"), "finalizers", json_array());
	nseen = 0;
	ck_assert_int_eq(rz_store_update(st, K("Tenant"), NULL, "acme", t, 0, RZ_UPDATE_SPEC, NULL,
	                                 &out, &gone, &err),
	                 0);
	ck_assert(gone);
	json_decref(out);
	json_decref(t);
	for (size_t i = 0; i < nseen; i++) {
		deleted += seen[i].type == RZ_EV_DELETED;
	}
	ck_assert_uint_eq(deleted, 2);
	ck_assert_uint_eq(n_events("acme"), 0);
	ck_assert_uint_eq(n_events("beta"), 1);
}
END_TEST

/* ------------------------------------------------------------------ pruning */

START_TEST(test_prune_by_age)
{
	json_t *ev;
	int64_t now = ms_now();

	tenant("acme");
	RECORD("acme", "NodeGroup", "old", "Normal", "ScaledUp", "");
	RECORD("acme", "NodeGroup", "new", "Normal", "ScaledUp", "");
	RECORD("acme", "NodeGroup", "edge", "Normal", "ScaledUp", "");
	age("acme", "old", "ScaledUp", "2020-01-01T00:00:00Z");
	{ /* exactly at the limit is kept */
		char when[40];
		time_t sec = (time_t)((now - 3600 * 1000) / 1000);
		struct tm tm;
		gmtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%03dZ",
		         (int)((now - 3600 * 1000) % 1000));
		age("acme", "edge", "ScaledUp", when);
	}
	nseen = 0;
	ck_assert_int_eq(rz_events_prune(st, 3600 * 1000, 1000, now), 1);
	ck_assert_uint_eq(n_events("acme"), 2);
	ck_assert_uint_eq(nseen, 1);
	ck_assert_int_eq(seen[0].type, RZ_EV_DELETED);
	ck_assert(matches("^old\\.", seen[0].name));
	ev = find("acme", "new", "ScaledUp");
	json_decref(ev);
	/* a day later, by the caller's clock, both are old */
	ck_assert_int_eq(rz_events_prune(st, 3600 * 1000, 1000, now + 86400 * 1000), 2);
	ck_assert_uint_eq(n_events("acme"), 0);
	/* retention 0 turns the rule off; an empty store prunes nothing */
	ck_assert_int_eq(rz_events_prune(st, 0, 0, now), 0);
	ck_assert_int_eq(log_lines("subsys=events msg=\"pruned 1 of 3 events\""), 1);
}
END_TEST

START_TEST(test_prune_max_per_tenant_keeps_newest)
{
	static const char *const reasons[] = { "R1", "R2", "R3", "R4", "R5" };
	json_t *items;

	tenant("acme");
	tenant("beta");
	for (size_t i = 0; i < 5; i++) {
		RECORD("acme", "NodeGroup", "web", "Normal", reasons[i], "");
	}
	RECORD("beta", "NodeGroup", "web", "Normal", "R1", "");
	RECORD("beta", "NodeGroup", "web", "Normal", "R2", "");
	age("acme", "web", "R4", "2020-01-01T00:00:00Z"); /* the oldest now, though recorded late */
	RECORD("acme", "NodeGroup", "web", "Normal", "R1", "again"); /* R1 is the newest again */
	ck_assert_int_eq(rz_events_prune(st, 0, 3, ms_now()), 2);
	items = events_of("acme");
	ck_assert_uint_eq(json_array_size(items), 3);
	json_decref(find("acme", "web", "R1"));
	json_decref(find("acme", "web", "R3"));
	json_decref(find("acme", "web", "R5"));
	json_decref(items);
	ck_assert_uint_eq(n_events("beta"), 2); /* under the limit: all kept */
	/* both rules at once */
	ck_assert_int_eq(rz_events_prune(st, 3600 * 1000, 1, ms_now()), 3);
	ck_assert_uint_eq(n_events(NULL), 2);
	json_decref(find("acme", "web", "R1"));
	json_decref(find("beta", "web", "R2"));
}
END_TEST

static Suite *events_suite(void)
{
	Suite *s = suite_create("events");
	TCase *tc = tcase_create("events");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_record_creates);
	tcase_add_test(tc, test_repeat_counts);
	tcase_add_test(tc, test_other_key_is_another_event);
	tcase_add_test(tc, test_collision_takes_next_name);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_gone_tenant_is_dropped);
	tcase_add_test(tc, test_tenant_deletion_removes_events);
	tcase_add_test(tc, test_prune_by_age);
	tcase_add_test(tc, test_prune_max_per_tenant_keeps_newest);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return rzt_run(events_suite());
}
