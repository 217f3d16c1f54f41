/* tests/unit/check_access.c - what a principal may see, decided once and remembered: a
 * revoked token, a deleted user, a demotion and a changed AccessBinding each take effect on
 * the next request and on the next event of an open watch, and one event is decided once
 * for every watcher of the same principal class. Against the real daemon wiring, in process
 * on 127.0.0.1 port 0. */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/auth/auth.h"
#include "core/auth/bindings.h"
#include "core/model/kinds.h"
#include "core/store/store.h"
#include "tests/unit/authtest.h"

#define WATCH_TENANTS "/api/v1/tenants?watch=true"

static void tenant(const char *name, const char *team)
{
	char body[256];

	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"team\":\"%s\"}},"
	         "\"spec\":{\"clusterProvider\":\"sim\"}}",
	         name, team);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", admin_tok, body, NULL), 201);
}

/* A merge patch of the tenant's metadata (labels, annotations) as the admin. */
static void touch(const char *name, const char *metadata)
{
	char path[128], body[256];

	snprintf(path, sizeof(path), "/api/v1/tenants/%s", name);
	snprintf(body, sizeof(body), "{\"metadata\":%s}", metadata);
	ck_assert_int_eq(call("PATCH", path, admin_tok, body, NULL), 200);
}

static void binding(const char *name, const char *role, const char *subject_kind,
                    const char *subject, const char *tenants)
{
	char body[512];

	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"role\":\"%s\","
	         "\"subjects\":[{\"kind\":\"%s\",\"name\":\"%s\"}],\"tenants\":%s}}",
	         name, role, subject_kind, subject, tenants);
	ck_assert_int_eq(call("POST", "/api/v1/accessbindings", admin_tok, body, NULL), 201);
}

static void user_in(const char *name, const char *role, const char *pw, const char *group)
{
	char body[256];

	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"role\":\"%s\",\"password\":\"%s\","
	         "\"groups\":[\"%s\"]}}",
	         name, role, pw, group);
	ck_assert_int_eq(call("POST", "/api/v1/users", admin_tok, body, NULL), 201);
}

/* Tenants a1 (team a) and b1 (team b), and carol, of role none, in group team-a, which a
 * binding lets view team a's tenants: signed in, her session into tok. */
static void carol(char *tok, size_t size)
{
	tenant("a1", "a");
	tenant("b1", "b");
	user_in("carol", "none", "carol-secret-pw-1", "team-a");
	binding("team-a-view", "view", "Group", "team-a", "{\"selector\":{\"team\":\"a\"}}");
	ck_assert_int_eq(login("carol", "carol-secret-pw-1", tok, size), 200);
}

/* A watch (newline-delimited JSON) of path with the bearer token. */
static rzt_stream_t *watch(const char *path, const char *token)
{
	char raw[1600];
	rzt_stream_t *s;

	snprintf(raw, sizeof(raw),
	         "GET %s HTTP/1.1\r\nAuthorization: Bearer %s\r\n"
	         "Accept: application/x-ndjson\r\n\r\n",
	         path, token);
	s = rzt_stream_open(base, port, raw);
	ck_assert_int_eq(s->head.code, 200);
	return s;
}

/* The stream was ended by the server with an ERROR event of code (its last chunk came). */
static void ended_with(rzt_stream_t *s, int code, const char *why)
{
	char needle[32];

	snprintf(needle, sizeof(needle), "\"code\":%d", code);
	ck_assert_msg(rzt_stream_until(base, s, needle, 5), "%s: no ERROR %d in: %s", why, code,
	              s->body ? s->body : "");
	ck_assert_ptr_nonnull(strstr(s->body, "\"type\":\"ERROR\""));
	rzt_stream_until(base, s, "never in a stream", 2);
	ck_assert_msg(s->closed, "%s: the stream goes on", why);
}

static int get_code(const char *path, const char *token)
{
	return call("GET", path, token, NULL, NULL);
}

/* A revoked token and a deleted user: the next request is refused (check_auth) and an open
 * watch ends at its next event with a 401, sending nothing of it. */
START_TEST(test_revocation_ends_watches)
{
	char tok[256], gone[1024], path[160];
	rzt_stream_t *by_token, *by_session;

	new_token("viewer", view_tok, tok, sizeof(tok), path, sizeof(path));
	make_user("gone", "view", "gone-secret-pw-1");
	ck_assert_int_eq(login("gone", "gone-secret-pw-1", gone, sizeof(gone)), 200);
	by_token = watch(WATCH_TENANTS, tok);
	by_session = watch(WATCH_TENANTS, gone);
	tenant("first", "a");
	ck_assert(rzt_stream_until(base, by_token, "\"name\":\"first\"", 5));
	ck_assert(rzt_stream_until(base, by_session, "\"name\":\"first\"", 5));

	ck_assert_int_eq(call("DELETE", path, admin_tok, NULL, NULL), 200);
	ck_assert_int_eq(call("DELETE", "/api/v1/users/gone", admin_tok, NULL, NULL), 200);
	tenant("second", "a");
	ended_with(by_token, 401, "a revoked token's watch");
	ended_with(by_session, 401, "a deleted user's watch");
	ck_assert_ptr_null(strstr(by_token->body, "\"name\":\"second\""));
	ck_assert_ptr_null(strstr(by_session->body, "\"name\":\"second\""));
	ck_assert_int_eq(get_code("/api/v1/tenants", tok), 401);
	ck_assert_int_eq(get_code("/api/v1/tenants", gone), 401);
	rzt_stream_close(by_token);
	rzt_stream_close(by_session);
}
END_TEST

/* A changed AccessBinding: the next request and the next event of an open watch follow it. */
START_TEST(test_binding_change_takes_effect)
{
	char tok[1024];
	rzt_stream_t *s;

	carol(tok, sizeof(tok));
	ck_assert_int_eq(get_code("/api/v1/tenants/a1", tok), 200);
	ck_assert_int_eq(get_code("/api/v1/tenants/b1", tok), 403);
	s = watch(WATCH_TENANTS, tok);
	ck_assert(rzt_stream_until(base, s, "\"name\":\"a1\"", 5));

	ck_assert_int_eq(call("PATCH", "/api/v1/accessbindings/team-a-view", admin_tok,
	                      "{\"spec\":{\"tenants\":{\"selector\":{\"team\":\"b\"}}}}", NULL),
	                 200);
	ck_assert_int_eq(get_code("/api/v1/tenants/a1", tok), 403);
	ck_assert_int_eq(get_code("/api/v1/tenants/b1", tok), 200);
	touch("a1", "{\"annotations\":{\"seen\":\"a1-after\"}}");
	touch("b1", "{\"annotations\":{\"seen\":\"b1-after\"}}");
	ck_assert_msg(rzt_stream_until(base, s, "b1-after", 5), "b1 not seen: %s", s->body);
	ck_assert_ptr_null(strstr(s->body, "a1-after"));
	rzt_stream_close(s);
}
END_TEST

/* A tenant's new labels decide who sees the event that changed them: it leaves a selector
 * binding's view without showing its new labels, and enters another's with that event. */
START_TEST(test_labels_decide_at_their_own_event)
{
	char tok[1024];
	rzt_stream_t *s;

	carol(tok, sizeof(tok));
	s = watch(WATCH_TENANTS, tok);
	ck_assert(rzt_stream_until(base, s, "\"name\":\"a1\"", 5));
	touch("a1", "{\"labels\":{\"team\":\"c\"}}");
	touch("b1", "{\"labels\":{\"team\":\"a\"}}");
	ck_assert_msg(rzt_stream_until(base, s, "\"name\":\"b1\"", 5), "b1 not seen: %s", s->body);
	ck_assert_ptr_null(strstr(s->body, "\"team\":\"c\""));
	ck_assert_ptr_null(strstr(s->body, "\"team\":\"b\""));
	rzt_stream_close(s);
}
END_TEST

/* An admin demoted to no role, with a binding on b1: its open watch of tenants shows b1's
 * changes only from the next event on, and its watch of users (admin only) ends with 403. */
START_TEST(test_demotion_takes_effect_on_open_watches)
{
	char tok[1024];
	rzt_stream_t *tenants, *users;

	tenant("a1", "a");
	tenant("b1", "b");
	make_user("dana", "admin", "dana-secret-pw-1");
	binding("dana-b1", "view", "User", "dana", "{\"names\":[\"b1\"]}");
	ck_assert_int_eq(login("dana", "dana-secret-pw-1", tok, sizeof(tok)), 200);
	tenants = watch(WATCH_TENANTS, tok);
	users = watch("/api/v1/users?watch=true", tok);
	ck_assert(rzt_stream_until(base, tenants, "\"name\":\"a1\"", 5));
	ck_assert(rzt_stream_until(base, users, "\"name\":\"dana\"", 5));

	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/dana", admin_tok, "{\"spec\":{\"role\":\"none\"}}", NULL),
	    200);
	ended_with(users, 403, "a demoted admin's watch of users");
	touch("a1", "{\"annotations\":{\"seen\":\"a1-after\"}}");
	touch("b1", "{\"annotations\":{\"seen\":\"b1-after\"}}");
	ck_assert_msg(rzt_stream_until(base, tenants, "b1-after", 5), "b1 not seen: %s",
	              tenants->body);
	ck_assert_ptr_null(strstr(tenants->body, "a1-after"));
	ck_assert_int_eq(get_code("/api/v1/tenants/a1", tok), 403);
	ck_assert_int_eq(get_code("/api/v1/tenants/b1", tok), 200);
	rzt_stream_close(tenants);
	rzt_stream_close(users);
}
END_TEST

#define WATCHERS 12

/* Twelve watchers of two users in one group, among thirty bindings of others: an event is
 * decided once for all of them (one principal class), and again only after a change. */
START_TEST(test_one_decision_per_event_and_class)
{
	rzt_stream_t *s[WATCHERS];
	rz_auth_stats_t before, after;
	char tok[2][1024];

	tenant("a1", "a");
	tenant("b1", "b");
	for (int i = 0; i < 30; i++) {
		char name[32], who[32];
		snprintf(name, sizeof(name), "other-%d", i);
		snprintf(who, sizeof(who), "someone-%d", i);
		binding(name, "edit", "User", who, "{\"names\":[\"a1\",\"b1\"]}");
	}
	binding("team-a-view", "view", "Group", "team-a", "{\"selector\":{\"team\":\"a\"}}");
	user_in("erin", "none", "erin-secret-pw-1", "team-a");
	user_in("frank", "none", "frank-secret-pw-1", "team-a");
	ck_assert_int_eq(login("erin", "erin-secret-pw-1", tok[0], sizeof(tok[0])), 200);
	ck_assert_int_eq(login("frank", "frank-secret-pw-1", tok[1], sizeof(tok[1])), 200);
	for (int i = 0; i < WATCHERS; i++) {
		s[i] = watch(WATCH_TENANTS, tok[i % 2]);
		ck_assert(rzt_stream_until(base, s[i], "\"name\":\"a1\"", 5));
	}
	rz_auth_stats(rz_daemon_auth(d), &before);
	touch("a1", "{\"annotations\":{\"seen\":\"once\"}}");
	for (int i = 0; i < WATCHERS; i++) {
		ck_assert(rzt_stream_until(base, s[i], "\"seen\":\"once\"", 5));
	}
	rz_auth_stats(rz_daemon_auth(d), &after);
	/* a1 changed (its labels may have): decided again, once, for the class */
	ck_assert_uint_eq(after.decisions_evaluated - before.decisions_evaluated, 1);
	ck_assert_uint_ge(after.decisions_remembered - before.decisions_remembered, WATCHERS - 1);
	/* b1's change is decided once too, and shown to nobody */
	touch("b1", "{\"annotations\":{\"seen\":\"none\"}}");
	touch("a1", "{\"annotations\":{\"seen\":\"twice\"}}");
	for (int i = 0; i < WATCHERS; i++) {
		ck_assert(rzt_stream_until(base, s[i], "\"seen\":\"twice\"", 5));
		ck_assert_ptr_null(strstr(s[i]->body, "\"seen\":\"none\""));
		rzt_stream_close(s[i]);
	}
	rz_auth_stats(rz_daemon_auth(d), &before);
	ck_assert_uint_eq(before.decisions_evaluated - after.decisions_evaluated, 2);
}
END_TEST

/* Past the classes remembered (1,024), a principal is decided each time, the same way: a
 * user named by the last of 1,030 bindings, each its own class, still gets its tenant. */
START_TEST(test_classes_bounded)
{
	rz_store_t *st = rz_daemon_store(d);
	const rz_kind_t *k = rz_kind_by_name("AccessBinding");
	rz_bindings_t *b;
	rz_bindings_stats_t stats;
	const char none[][64] = { "" };

	tenant("a1", "a");
	tenant("b1", "b");
	for (int i = 0; i < 1030; i++) {
		char text[384];
		json_t *obj, *out = NULL;
		rz_err_t err = { 0 };
		snprintf(text, sizeof(text),
		         "{\"metadata\":{\"name\":\"u-%d\"},\"spec\":{\"role\":\"%s\","
		         "\"subjects\":[{\"kind\":\"User\",\"name\":\"u%d\"}],"
		         "\"tenants\":{\"names\":[\"%s\"]}}}",
		         i, i % 2 ? "edit" : "view", i, i % 3 ? "a1" : "b1");
		obj = json_loads(text, 0, NULL);
		ck_assert_msg(rz_store_create(st, k, obj, NULL, &out, &err) == 0, "%s", err.msg);
		json_decref(obj);
		json_decref(out);
	}
	ck_assert_int_eq(rz_bindings_new(&b, st), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 1030; i++) {
			char user[16];
			snprintf(user, sizeof(user), "u%d", i);
			ck_assert_int_eq(rz_bindings_role(b, user, none, 0, i % 3 ? "a1" : "b1"),
			                 i % 2 ? RZ_ROLE_EDIT : RZ_ROLE_VIEW);
			ck_assert_int_eq(rz_bindings_role(b, user, none, 0, i % 3 ? "b1" : "a1"),
			                 RZ_ROLE_NONE);
		}
	}
	rz_bindings_stats(b, &stats);
	ck_assert_uint_eq(stats.classes, 1024);
	/* the first 1,024 decided once per tenant, the 6 beyond each time they are asked */
	ck_assert_uint_eq(stats.evaluated, 1024 * 2 + 6 * 2 * 2);
	ck_assert_uint_eq(stats.remembered, 1024 * 2);
	ck_assert_uint_le(stats.decisions, 1024 * 2);
	rz_bindings_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("access");
	TCase *tc = tcase_create("access");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_revocation_ends_watches);
	tcase_add_test(tc, test_binding_change_takes_effect);
	tcase_add_test(tc, test_labels_decide_at_their_own_event);
	tcase_add_test(tc, test_demotion_takes_effect_on_open_watches);
	tcase_add_test(tc, test_one_decision_per_event_and_class);
	tcase_add_test(tc, test_classes_bounded);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
