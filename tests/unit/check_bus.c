/*
 * tests/unit/check_bus.c - the in-process event bus (SPEC §9): delivery in subscription
 * order, unsubscribing (also from inside a callback, for itself or another subscriber),
 * subscribing during a publish, nested publishes, counts and event type names.
 */
#include <config.h>

#include "tests/unit/testutil.h"

#include <stdint.h>

#include "core/store/bus.h"
#include "core/model/kinds.h"

#define MAX_LOG  512
#define MAX_SUBS 64

/* Every delivery as "<subscriber><event rv>", e.g. "a1", in order. */
static char delivered[MAX_LOG * 8];

static rz_bus_t *bus;

/* A subscriber: its letter, id, and what it does when called. */
struct sub {
	char name;
	uint64_t id;
	int calls;
	const rz_event_t *last;
	/* actions, each on the event with this rv (0 = never) */
	int64_t unsub_self_on;
	int64_t unsub_other_on;
	struct sub *other;
	int64_t subscribe_on;
	struct sub *add;    /* subscribed on subscribe_on */
	size_t add_count;   /* how many of add[] */
	int64_t publish_on; /* publish rv publish_rv from the callback */
	int64_t publish_rv;
	size_t live_seen; /* rz_bus_subscribers() during the last call */
};

static struct sub subs[MAX_SUBS];
static const char names[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-";

static void note(char name, int64_t rv)
{
	char entry[24];

	snprintf(entry, sizeof(entry), "%s%c%lld", delivered[0] ? " " : "", name, (long long)rv);
	ck_assert_uint_lt(strlen(delivered) + strlen(entry), sizeof(delivered));
	strcat(delivered, entry);
}

static void publish(int64_t rv)
{
	rz_event_t ev = { .rv = rv,
		          .type = RZ_EV_MODIFIED,
		          .kind = rz_kind_by_name("Tenant"),
		          .tenant = "",
		          .name = "x",
		          .json = "{}" };

	rz_bus_publish(bus, &ev);
}

static void on_event(const rz_event_t *ev, void *arg)
{
	struct sub *s = arg;

	s->calls++;
	s->last = ev;
	note(s->name, ev->rv);
	if (s->unsub_self_on == ev->rv) {
		rz_bus_unsubscribe(bus, s->id);
	}
	if (s->unsub_other_on == ev->rv) {
		rz_bus_unsubscribe(bus, s->other->id);
	}
	if (s->subscribe_on == ev->rv) {
		for (size_t i = 0; i < s->add_count; i++) {
			s->add[i].id = rz_bus_subscribe(bus, on_event, &s->add[i]);
			ck_assert_uint_gt(s->add[i].id, 0);
		}
	}
	if (s->publish_on == ev->rv) {
		publish(s->publish_rv);
	}
	s->live_seen = rz_bus_subscribers(bus);
}

/* Subscribe the subscribers named by the lower-case letters in which ("abc"). */
static void subscribe_all(const char *which)
{
	for (size_t i = 0; which[i] != '\0'; i++) {
		struct sub *s = &subs[which[i] - 'a'];
		s->id = rz_bus_subscribe(bus, on_event, s);
		ck_assert_uint_gt(s->id, 0);
	}
}

static struct sub *S(char name)
{
	return &subs[name - 'a'];
}

static void setup(void)
{
	memset(subs, 0, sizeof(subs));
	ck_assert_uint_eq(sizeof(names) - 1, MAX_SUBS);
	for (size_t i = 0; i < MAX_SUBS; i++) {
		subs[i].name = names[i];
	}
	delivered[0] = '\0';
	ck_assert_int_eq(rz_bus_new(&bus), 0);
	ck_assert_ptr_nonnull(bus);
}

static void teardown(void)
{
	rz_bus_free(bus);
	bus = NULL;
}

START_TEST(test_empty)
{
	ck_assert_uint_eq(rz_bus_subscribers(bus), 0);
	publish(1);
	ck_assert_str_eq(delivered, "");
	/* Unknown ids are ignored. */
	rz_bus_unsubscribe(bus, 42);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 0);
	rz_bus_free(NULL);
}
END_TEST

START_TEST(test_order_and_ids)
{
	rz_event_t ev = { .rv = 9, .type = RZ_EV_ADDED, .tenant = "t", .name = "n", .json = "{}" };

	subscribe_all("abc");
	ck_assert_uint_eq(rz_bus_subscribers(bus), 3);
	ck_assert_uint_ne(S('a')->id, S('b')->id);
	ck_assert_uint_ne(S('b')->id, S('c')->id);
	ck_assert_uint_ne(S('a')->id, S('c')->id);

	publish(1);
	publish(2);
	ck_assert_str_eq(delivered, "a1 b1 c1 a2 b2 c2");
	ck_assert_int_eq(S('a')->calls, 2);

	/* The event reaches each subscriber as given, with its own argument. */
	rz_bus_publish(bus, &ev);
	ck_assert_ptr_eq(S('a')->last, &ev);
	ck_assert_ptr_eq(S('c')->last, &ev);
	ck_assert_int_eq(S('c')->calls, 3);
}
END_TEST

/* A subscriber added first hears every event before those added the usual way, even those
 * subscribed earlier; several come in their own order; unsubscribing one keeps the rest. */
START_TEST(test_subscribe_first)
{
	subscribe_all("ab");
	S('c')->id = rz_bus_subscribe_first(bus, on_event, S('c'));
	S('d')->id = rz_bus_subscribe_first(bus, on_event, S('d'));
	ck_assert_uint_gt(S('c')->id, 0);
	ck_assert_uint_gt(S('d')->id, 0);
	subscribe_all("e");
	publish(1);
	ck_assert_str_eq(delivered, "c1 d1 a1 b1 e1");
	rz_bus_unsubscribe(bus, S('c')->id);
	S('f')->id = rz_bus_subscribe_first(bus, on_event, S('f'));
	publish(2);
	ck_assert_str_eq(delivered, "c1 d1 a1 b1 e1 d2 f2 a2 b2 e2");
}
END_TEST

START_TEST(test_unsubscribe)
{
	uint64_t b;

	subscribe_all("abc");
	b = S('b')->id;
	rz_bus_unsubscribe(bus, b);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);
	publish(1);
	ck_assert_str_eq(delivered, "a1 c1");
	/* Twice, or an unknown id: no effect. */
	rz_bus_unsubscribe(bus, b);
	rz_bus_unsubscribe(bus, 9999);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);
	publish(2);
	ck_assert_str_eq(delivered, "a1 c1 a2 c2");

	/* Ids are not reused: a new subscriber gets a fresh one and comes last. */
	subscribe_all("d");
	ck_assert_uint_ne(S('d')->id, b);
	ck_assert_uint_ne(S('d')->id, S('a')->id);
	ck_assert_uint_ne(S('d')->id, S('c')->id);
	publish(3);
	ck_assert_str_eq(delivered, "a1 c1 a2 c2 a3 c3 d3");

	rz_bus_unsubscribe(bus, S('a')->id);
	rz_bus_unsubscribe(bus, S('c')->id);
	rz_bus_unsubscribe(bus, S('d')->id);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 0);
	publish(4);
	ck_assert_str_eq(delivered, "a1 c1 a2 c2 a3 c3 d3");
}
END_TEST

START_TEST(test_unsubscribe_self_in_callback)
{
	subscribe_all("abc");
	S('b')->unsub_self_on = 1;
	publish(1);
	ck_assert_str_eq(delivered, "a1 b1 c1");
	/* The count drops at once, also while the publish is running. */
	ck_assert_uint_eq(S('b')->live_seen, 2);
	ck_assert_uint_eq(S('c')->live_seen, 2);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);
	publish(2);
	ck_assert_str_eq(delivered, "a1 b1 c1 a2 c2");
	ck_assert_int_eq(S('b')->calls, 1);
}
END_TEST

START_TEST(test_unsubscribe_later_in_callback)
{
	/* a removes c before c's turn: c is not called for this event either. */
	subscribe_all("abc");
	S('a')->unsub_other_on = 1;
	S('a')->other = S('c');
	publish(1);
	ck_assert_str_eq(delivered, "a1 b1");
	ck_assert_int_eq(S('c')->calls, 0);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);
	publish(2);
	ck_assert_str_eq(delivered, "a1 b1 a2 b2");
}
END_TEST

START_TEST(test_unsubscribe_earlier_in_callback)
{
	/* c removes a, which was already called: from the next event on. */
	subscribe_all("abc");
	S('c')->unsub_other_on = 1;
	S('c')->other = S('a');
	publish(1);
	ck_assert_str_eq(delivered, "a1 b1 c1");
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);
	publish(2);
	ck_assert_str_eq(delivered, "a1 b1 c1 b2 c2");
}
END_TEST

START_TEST(test_unsubscribe_all_in_callback)
{
	/* b removes everyone, itself included; then a new subscriber works normally. */
	subscribe_all("abc");
	S('a')->unsub_self_on = 1;
	S('b')->unsub_self_on = 1;
	S('b')->unsub_other_on = 1;
	S('b')->other = S('c');
	publish(1);
	ck_assert_str_eq(delivered, "a1 b1");
	ck_assert_uint_eq(rz_bus_subscribers(bus), 0);
	publish(2);
	ck_assert_str_eq(delivered, "a1 b1");
	subscribe_all("d");
	ck_assert_uint_eq(rz_bus_subscribers(bus), 1);
	publish(3);
	ck_assert_str_eq(delivered, "a1 b1 d3");
}
END_TEST

START_TEST(test_subscribe_during_publish)
{
	subscribe_all("ab");
	S('a')->subscribe_on = 1;
	S('a')->add = S('d');
	S('a')->add_count = 1;
	publish(1);
	/* d joined during event 1: it sees only the next one. */
	ck_assert_str_eq(delivered, "a1 b1");
	ck_assert_uint_eq(S('a')->live_seen, 3);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 3);
	publish(2);
	ck_assert_str_eq(delivered, "a1 b1 a2 b2 d2");
}
END_TEST

/* Enough subscriptions during a publish to grow the table (the loop must not keep a pointer
 * into the old one), then unsubscribing one of the newcomers in the same publish. */
START_TEST(test_subscribe_many_during_publish)
{
	char want[MAX_LOG * 8] = "a1 b1";
	size_t n = 40;

	subscribe_all("ab");
	S('a')->subscribe_on = 1;
	S('a')->add = &subs[2]; /* c, d, ... */
	S('a')->add_count = n;
	S('b')->unsub_other_on = 1;
	S('b')->other = &subs[5]; /* f */
	publish(1);
	ck_assert_str_eq(delivered, want);
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2 + n - 1);

	publish(2);
	strcat(want, " a2 b2");
	for (size_t i = 2; i < 2 + n; i++) {
		char entry[8];
		if (i == 5) {
			continue;
		}
		snprintf(entry, sizeof(entry), " %c2", subs[i].name);
		strcat(want, entry);
	}
	ck_assert_str_eq(delivered, want);
	ck_assert_int_eq(subs[5].calls, 0);
}
END_TEST

START_TEST(test_nested_publish)
{
	/* a publishes event 2 from inside event 1; b leaves during event 2. The outer delivery
	 * must go on with the remaining subscribers, each exactly once. */
	subscribe_all("abc");
	S('a')->publish_on = 1;
	S('a')->publish_rv = 2;
	S('b')->unsub_self_on = 2;
	publish(1);
	ck_assert_str_eq(delivered, "a1 a2 b2 c2 c1");
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);
	publish(3);
	ck_assert_str_eq(delivered, "a1 a2 b2 c2 c1 a3 c3");
}
END_TEST

START_TEST(test_nested_publish_unsubscribe_earlier)
{
	/* c removes a during the inner publish, after a's outer call began: a gets nothing
	 * more, b and c finish the outer event once each. */
	subscribe_all("abc");
	S('a')->publish_on = 1;
	S('a')->publish_rv = 2;
	S('c')->unsub_other_on = 2;
	S('c')->other = S('a');
	publish(1);
	ck_assert_str_eq(delivered, "a1 a2 b2 c2 b1 c1");
	ck_assert_uint_eq(rz_bus_subscribers(bus), 2);
	publish(3);
	ck_assert_str_eq(delivered, "a1 a2 b2 c2 b1 c1 b3 c3");
}
END_TEST

START_TEST(test_event_type_name)
{
	ck_assert_str_eq(rz_event_type_name(RZ_EV_ADDED), "ADDED");
	ck_assert_str_eq(rz_event_type_name(RZ_EV_MODIFIED), "MODIFIED");
	ck_assert_str_eq(rz_event_type_name(RZ_EV_DELETED), "DELETED");
	ck_assert_str_eq(rz_event_type_name((rz_event_type_t)0), "UNKNOWN");
	ck_assert_str_eq(rz_event_type_name((rz_event_type_t)99), "UNKNOWN");
}
END_TEST

static Suite *bus_suite(void)
{
	Suite *s = suite_create("bus");
	TCase *tc = tcase_create("bus");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_order_and_ids);
	tcase_add_test(tc, test_subscribe_first);
	tcase_add_test(tc, test_unsubscribe);
	tcase_add_test(tc, test_unsubscribe_self_in_callback);
	tcase_add_test(tc, test_unsubscribe_later_in_callback);
	tcase_add_test(tc, test_unsubscribe_earlier_in_callback);
	tcase_add_test(tc, test_unsubscribe_all_in_callback);
	tcase_add_test(tc, test_subscribe_during_publish);
	tcase_add_test(tc, test_subscribe_many_during_publish);
	tcase_add_test(tc, test_nested_publish);
	tcase_add_test(tc, test_nested_publish_unsubscribe_earlier);
	tcase_add_test(tc, test_event_type_name);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return rzt_run(bus_suite());
}
