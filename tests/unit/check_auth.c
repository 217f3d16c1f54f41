/* tests/unit/check_auth.c - sessions, tokens, roles on every route, brute force, audit and
 * secrets, against the real daemon wiring, in process on 127.0.0.1 port 0. */
#include <config.h>

#include <check.h>
#include <jansson.h>
#include <jwt.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/auth/audit.h"
#include "core/auth/auth.h"
#include "core/auth/bindings.h"
#include "core/base/clock.h"
#include "core/daemon.h"
#include "core/store/db.h"
#include "core/store/events.h"
#include "core/store/store.h"
#include "core/http/http.h"
#include "core/model/kinds.h"
#include "core/base/log.h"
#include "tests/unit/authtest.h"

/* ------------------------------------------------------------------ sessions */

/* Standard base64, as HTTP basic credentials are written. */
static char *b64std(const char *s)
{
	static char out[512];

	sodium_bin2base64(out, sizeof(out), (const unsigned char *)s, strlen(s),
	                  sodium_base64_VARIANT_ORIGINAL);
	return out;
}

static char *b64(const char *s)
{
	static char out[4][2048];
	static int n;
	char *o = out[n++ % 4];

	sodium_bin2base64(o, sizeof(out[0]), (const unsigned char *)s, strlen(s),
	                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return o;
}

/* A token signed with the daemon's own secret but claims of the test's choosing. */
static void forge(char *out, size_t size, jwt_alg_t alg, const char *iss, const char *sub, long iat,
                  long nbf, long exp)
{
	char path[600];
	unsigned char key[512];
	size_t len;
	FILE *f;
	jwt_t *jwt = NULL;
	char *enc;

	snprintf(path, sizeof(path), "%s/data/jwt.secret", dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	len = fread(key, 1, sizeof(key), f);
	fclose(f);
	while (len > 0 && key[len - 1] == '\n') {
		len--;
	}
	ck_assert_int_eq(jwt_new(&jwt), 0);
	jwt_add_grant(jwt, "iss", iss);
	jwt_add_grant(jwt, "sub", sub);
	jwt_add_grant(jwt, "role", "admin");
	jwt_add_grant(jwt, "jti", "0123456789abcdef0123456789abcdef");
	jwt_add_grant_int(jwt, "iat", iat);
	jwt_add_grant_int(jwt, "nbf", nbf);
	jwt_add_grant_int(jwt, "exp", exp);
	ck_assert_int_eq(jwt_set_alg(jwt, alg, key, (int)len), 0);
	enc = jwt_encode_str(jwt);
	snprintf(out, size, "%s", enc);
	free(enc);
	jwt_free(jwt);
}

static void expect_401(const char *token, const char *why)
{
	char www[128];
	int code = call_h("GET", "/api/v1/tenants", token, NULL, NULL, NULL, "WWW-Authenticate",
	                  www, sizeof(www));

	ck_assert_msg(code == 401, "%s: got %d", why, code);
	ck_assert_int_eq(strncmp(www, "Bearer realm=\"rezuscloud\"", 25), 0);
}

START_TEST(test_jwt_refusals)
{
	long now = (long)time(NULL);
	char tok[2048], bad[2048];
	char *dot1, *dot2;
	json_t *j;

	ck_assert_int_eq(call("GET", "/api/v1/tenants", admin_tok, NULL, NULL), 200);
	forge(tok, sizeof(tok), JWT_ALG_HS256, "rezuscloud", "admin", now, now, now + 600);
	expect_401(tok, "a signed token the daemon never issued (no session row)");
	{ /* the control: the same token once the daemon knows its session, as admin's */
		rz_err_t err = { 0 };
		ck_assert_int_eq(
		    rz_db_exec(rz_daemon_db(d),
		               "INSERT INTO sessions (user, uid, jti, exp) SELECT user,"
		               " uid, '0123456789abcdef0123456789abcdef', exp FROM"
		               " sessions WHERE user = 'admin' LIMIT 1",
		               &err),
		    0);
	}
	ck_assert_int_eq(call("GET", "/api/v1/tenants", tok, NULL, NULL), 200);
	expect_401(NULL, "no credentials");
	expect_401("garbage", "garbage");
	/* tampered payload: the same signature over another subject */
	snprintf(bad, sizeof(bad), "%s", admin_tok);
	dot1 = strchr(bad, '.');
	dot2 = strchr(dot1 + 1, '.');
	{
		char rest[1024];
		snprintf(rest, sizeof(rest), "%s", dot2);
		snprintf(dot1 + 1, sizeof(bad) - (size_t)(dot1 + 1 - bad), "%s%s",
		         b64("{\"iss\":\"rezuscloud\",\"sub\":\"editor\",\"role\":\"admin\","
		             "\"iat\":1,\"nbf\":1,\"exp\":99999999999,\"jti\":\"x\"}"),
		         rest);
	}
	expect_401(bad, "tampered");
	/* alg none */
	snprintf(bad, sizeof(bad), "%s.%s.", b64("{\"alg\":\"none\",\"typ\":\"JWT\"}"),
	         b64("{\"iss\":\"rezuscloud\",\"sub\":\"admin\",\"iat\":1,\"nbf\":1,"
	             "\"exp\":99999999999,\"jti\":\"x\"}"));
	expect_401(bad, "alg none");
	/* other algorithms, even with the right key */
	forge(bad, sizeof(bad), JWT_ALG_HS512, "rezuscloud", "admin", now, now, now + 600);
	expect_401(bad, "HS512");
	snprintf(bad, sizeof(bad), "%s.%s.%s", b64("{\"alg\":\"RS256\",\"typ\":\"JWT\"}"),
	         b64("{\"iss\":\"rezuscloud\",\"sub\":\"admin\",\"iat\":1,\"nbf\":1,"
	             "\"exp\":99999999999,\"jti\":\"x\"}"),
	         b64("not-a-signature"));
	expect_401(bad, "RS256");
	forge(bad, sizeof(bad), JWT_ALG_HS256, "someone-else", "admin", now, now, now + 600);
	expect_401(bad, "wrong issuer");
	forge(bad, sizeof(bad), JWT_ALG_HS256, "rezuscloud", "admin", now - 100, now - 100,
	      now - 1);
	expect_401(bad, "expired");
	forge(bad, sizeof(bad), JWT_ALG_HS256, "rezuscloud", "admin", now, now + 300, now + 600);
	expect_401(bad, "not yet valid");
	forge(bad, sizeof(bad), JWT_ALG_HS256, "rezuscloud", "ghost", now, now, now + 600);
	expect_401(bad, "unknown user");
	/* logout revokes the jti */
	ck_assert_int_eq(call("POST", "/api/v1/auth/logout", edit_tok, NULL, &j), 200);
	json_decref(j);
	expect_401(edit_tok, "revoked");
	/* a disabled user's session stops at once */
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/viewer", admin_tok, "{\"spec\":{\"disabled\":true}}", &j),
	    200);
	json_decref(j);
	expect_401(view_tok, "disabled");
}
END_TEST

START_TEST(test_whoami_and_demotion)
{
	json_t *j;

	ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", edit_tok, NULL, &j), 200);
	ck_assert_str_eq(str(j, "user"), "editor");
	ck_assert_str_eq(str(j, "role"), "edit");
	json_decref(j);
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", edit_tok,
	         "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"clusterProvider\":\"sim\"}}", &j),
	    201);
	json_decref(j);
	/* the role is read per request: a demotion acts on the next one */
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/editor", admin_tok, "{\"spec\":{\"role\":\"view\"}}", &j),
	    200);
	json_decref(j);
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", edit_tok,
	         "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"clusterProvider\":\"sim\"}}", &j),
	    403);
	ck_assert_str_eq(str(j, "reason"), "Forbidden");
	ck_assert_str_eq(str(j, "message"), "user \"editor\" with role view cannot create tenants");
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ the role matrix */

/* Fill a route pattern's parameters with names that exist (tenant) or not (objects), so
 * that no call changes anything it should not. */
static void concrete(const char *pattern, char *out, size_t size)
{
	const char *p = pattern;
	size_t n = 0;

	while (*p != '\0' && n + 16 < size) {
		if (*p == '{') {
			const char *end = strchr(p, '}');
			const char *val = strncmp(p, "{tenant}", 8) == 0 ? "acme"
			                  : strncmp(p, "{user}", 6) == 0 ? "nobody"
			                                                 : "nope";
			n += (size_t)snprintf(out + n, size - n, "%s", val);
			p = end + 1;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
}

static const char *method_name(unsigned m)
{
	static const char *const names[] = { "GET",    "HEAD",    "POST", "PUT",   "PATCH",
		                             "DELETE", "OPTIONS", "LOCK", "UNLOCK" };
	for (unsigned i = 0; i < 9; i++) {
		if (m == (1u << i)) {
			return names[i];
		}
	}
	return "GET";
}

/* Who asks, for the privilege table (docs/security.md, "Privileges"). */
enum who_kind { W_ANON, W_USER, W_RUNNER, W_RUN };
struct who {
	const char *name;
	enum who_kind kind;
	int role; /* W_USER: the role it acts with (a session's, or a token's cap) */
	char cred[1100];
};

/* What the table says who gets on route r (concrete path's tenant "acme", names "nope"):
 * 0 (reached: the handler answers), 401 or 403. */
static int privilege(const rz_route_t *r, const struct who *w)
{
	bool claim = r->kind != NULL && strcmp(r->kind, "RunnerClaim") == 0;
	bool state = r->kind != NULL && strcmp(r->kind, "TFState") == 0;

	if (r->role == RZ_ROLE_PUBLIC) {
		return 0;
	}
	switch (w->kind) {
	case W_ANON:
		return 401;
	case W_RUNNER: /* its own runner's claim routes, nothing else */
		return claim ? 0 : 403;
	case W_RUN: /* its tenant's state, as edit */
		return state && RZ_ROLE_EDIT >= r->role ? 0 : 403;
	case W_USER:
		return !claim && w->role >= r->role ? 0 : 403;
	}
	return 403;
}

/* Every route × every kind of principal against the privilege table: anonymous; view, edit
 * and admin sessions; an admin's tokens capped at view, edit and admin; a runner token; a
 * run's secret. */
START_TEST(test_role_matrix_from_route_table)
{
	rz_http_t *h = rz_daemon_http(d);
	struct who who[] = {
		{ "anonymous", W_ANON, 0, "" },
		{ "view session", W_USER, RZ_ROLE_VIEW, "" },
		{ "edit session", W_USER, RZ_ROLE_EDIT, "" },
		{ "admin session", W_USER, RZ_ROLE_ADMIN, "" },
		{ "view-capped token", W_USER, RZ_ROLE_VIEW, "" },
		{ "edit-capped token", W_USER, RZ_ROLE_EDIT, "" },
		{ "admin token", W_USER, RZ_ROLE_ADMIN, "" },
		{ "runner token", W_RUNNER, 0, "" },
		{ "run secret", W_RUN, 0, "" },
	};
	const size_t nwho = sizeof(who) / sizeof(who[0]);
	const char *caps[] = { "view", "edit", "admin" };
	char secret[64], basic[128];
	json_t *j;
	int checked = 0;
	/* Under memcheck (RZT_VALGRIND) a third of the matrix, a different third of the
	 * principals for each route and method, so every route and every principal is still
	 * crossed: the whole matrix is a matter of time there (29 s of the program's 57), and
	 * the ASan suite runs all of it. */
	const bool sample = getenv("RZT_VALGRIND") != NULL;

	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", admin_tok,
	         "{\"metadata\":{\"name\":\"acme\"},\"spec\":{\"clusterProvider\":\"sim\"}}", &j),
	    201);
	json_decref(j);
	snprintf(who[1].cred, sizeof(who[1].cred), "%s", view_tok);
	snprintf(who[2].cred, sizeof(who[2].cred), "%s", edit_tok);
	snprintf(who[3].cred, sizeof(who[3].cred), "%s", admin_tok);
	for (int i = 0; i < 3; i++) {
		char body[64];
		snprintf(body, sizeof(body), "{\"spec\":{\"role\":\"%s\"}}", caps[i]);
		ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok, body, &j),
		                 201);
		snprintf(who[4 + i].cred, sizeof(who[4 + i].cred), "%s", str(j, "secret"));
		json_decref(j);
	}
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok,
	                      "{\"spec\":{\"scope\":\"runner\",\"runner\":\"nope\"}}", &j),
	                 201);
	snprintf(who[7].cred, sizeof(who[7].cred), "%s", str(j, "secret"));
	json_decref(j);
	rz_auth_token_secret(secret);
	ck_assert_int_eq(rz_auth_grant(rz_daemon_auth(d), "acme", "run-matrix", secret), 0);
	snprintf(basic, sizeof(basic), "x:%s", secret);
	snprintf(who[8].cred, sizeof(who[8].cred), "Basic %s", b64std(basic));
	for (size_t w = 0; w < nwho; w++) {
		remember(who[w].cred);
	}
	for (size_t i = 0; i < rz_http_route_count(h); i++) {
		const rz_route_t *r = rz_http_route_at(h, i);
		char path[256];
		concrete(r->pattern, path, sizeof(path));
		if (strstr(path, "/watch/") != NULL) {
			/* a watch streams: from beyond the store's revision it ends at once, with
			 * its 410 event, once the guard let it through */
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s",
			         "?resourceVersion=9223372036854775807");
		}
		for (unsigned bit = 1; bit <= RZ_M_UNLOCK; bit <<= 1) {
			const char *m = method_name(bit);
			if ((r->methods & bit) == 0 || strcmp(path, "/api/v1/auth/logout") == 0) {
				continue;
			}
			for (size_t w = 0; w < nwho; w++) {
				if (sample && (w + i + bit) % 3 != 0) {
					continue;
				}
				/* lock calls carry lock info: an empty UNLOCK is a
				 * force-unlock, which needs admin whatever the route says */
				const char *body =
				    bit & (RZ_M_LOCK | RZ_M_UNLOCK) ? "{\"ID\":\"matrix\"}"
				    : bit & (RZ_M_POST | RZ_M_PUT | RZ_M_PATCH) ? "{}"
				                                                : NULL;
				int code = call(m, path, who[w].kind == W_ANON ? NULL : who[w].cred,
				                body, NULL);
				int want = privilege(r, &who[w]);
				if (want == 0) {
					ck_assert_msg(code != 401 && code != 403,
					              "%s %s as %s: %d, want access", m, path,
					              who[w].name, code);
				} else {
					ck_assert_msg(code == want, "%s %s as %s: %d, want %d", m,
					              path, who[w].name, code, want);
				}
				checked++;
			}
		}
	}
	ck_assert_int_gt(checked, sample ? 400 : 1000);
	/* the logout route last, so the sessions above stay valid */
	ck_assert_int_eq(call("POST", "/api/v1/auth/logout", NULL, NULL, NULL), 401);
	ck_assert_int_eq(call("POST", "/api/v1/auth/logout", view_tok, NULL, NULL), 200);
}
END_TEST

/* Events are read with the view role (get, list, watch, with a field selector), and no role
 * may write them. */
START_TEST(test_view_role_reads_events)
{
	const char *toks[] = { view_tok, edit_tok, admin_tok };
	char raw[1400], path[128];
	rzt_stream_t *s;
	json_t *j;

	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", admin_tok,
	         "{\"metadata\":{\"name\":\"acme\"},\"spec\":{\"clusterProvider\":\"sim\"}}", &j),
	    201);
	json_decref(j);
	ck_assert_int_eq(rz_events_record(rz_daemon_store(d), "acme", "Tenant", "acme", "Normal",
	                                  "Created", "made by the test", "engine"),
	                 0);
	ck_assert_int_eq(call("GET",
	                      "/api/v1/tenants/acme/events?fieldSelector="
	                      "involvedObject.name%3Dacme",
	                      view_tok, NULL, &j),
	                 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	snprintf(path, sizeof(path), "/api/v1/tenants/acme/events/%s",
	         json_string_value(json_object_get(
	             json_object_get(json_array_get(json_object_get(j, "items"), 0), "metadata"),
	             "name")));
	json_decref(j);
	ck_assert_int_eq(call("GET", path, view_tok, NULL, &j), 200);
	ck_assert_str_eq(str(j, "reason"), "Created");
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/events", view_tok, NULL, &j), 200);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/events", NULL, NULL, &j), 401);
	json_decref(j);
	snprintf(raw, sizeof(raw),
	         "GET /api/v1/tenants/acme/events?watch=true HTTP/1.1\r\n"
	         "Authorization: Bearer %s\r\nAccept: application/x-ndjson\r\n\r\n",
	         view_tok);
	s = rzt_stream_open(base, port, raw);
	ck_assert_int_eq(s->head.code, 200);
	ck_assert(rzt_stream_until(base, s, "\"type\":\"ADDED\"", 5));
	ck_assert_int_eq(rz_events_record(rz_daemon_store(d), "acme", "Tenant", "acme", "Normal",
	                                  "Created", "again", "engine"),
	                 0);
	ck_assert(rzt_stream_until(base, s, "\"type\":\"MODIFIED\"", 5));
	ck_assert_ptr_nonnull(strstr(s->body, "\"count\":2"));
	rzt_stream_close(s);
	for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++) {
		ck_assert_int_eq(call("POST", "/api/v1/tenants/acme/events", toks[i], "{}", &j),
		                 405);
		json_decref(j);
		ck_assert_int_eq(call("PATCH", path, toks[i], "{\"count\":9}", &j), 405);
		json_decref(j);
		ck_assert_int_eq(call("DELETE", path, toks[i], NULL, &j), 405);
		json_decref(j);
	}
}
END_TEST

/* ------------------------------------------------------------------ API tokens */

/* A runner token (spec.scope runner) claims runs, under its spec.runner's name only, and
 * does nothing else. */
START_TEST(test_runner_token_claims_only)
{
	json_t *j;
	char secret[128];

	/* spec.runner: required with the scope, refused without it, a DNS label */
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok,
	                      "{\"spec\":{\"scope\":\"runner\"}}", &j),
	                 422);
	ck_assert_str_eq(cause0_field(j), "spec.runner");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok,
	                      "{\"spec\":{\"runner\":\"r1\"}}", &j),
	                 422);
	ck_assert_str_eq(cause0_field(j), "spec.runner");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok,
	                      "{\"spec\":{\"scope\":\"runner\",\"runner\":\"Not_A_Name\"}}", &j),
	                 422);
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok,
	                      "{\"spec\":{\"scope\":\"runner\",\"runner\":\"r1\"}}", &j),
	                 201);
	snprintf(secret, sizeof(secret), "%s", str(j, "secret"));
	remember(secret);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/tenants", secret, NULL, &j), 403);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/runners", secret, NULL, &j), 403);
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", secret, "{\"spec\":{}}", &j),
	                 403);
	json_decref(j);
	/* its route: no run of that name waits, 409 (not 401 or 403) */
	ck_assert_int_eq(call("POST", "/api/v1/runners/r1/claims", secret,
	                      "{\"run\":\"run-00000000\",\"step\":\"init\"}", &j),
	                 409);
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/runners/r1/claims", secret, "{\"run\":1}", &j), 422);
	json_decref(j);
	/* under another runner's name: 403, for the claim and for a file */
	ck_assert_int_eq(call("POST", "/api/v1/runners/r2/claims", secret,
	                      "{\"run\":\"run-00000000\",\"step\":\"init\"}", &j),
	                 403);
	ck_assert_ptr_nonnull(strstr(str(j, "message"), "spec.runner"));
	json_decref(j);
	ck_assert_int_eq(call_h("PUT", "/api/v1/runners/r2/claims/run-00000000/files/plan", secret,
	                        "application/octet-stream", "x", &j, NULL, NULL, 0),
	                 403);
	json_decref(j);
	ck_assert_int_eq(call_h("PUT", "/api/v1/runners/r1/claims/run-00000000/files/plan", secret,
	                        "application/octet-stream", "x", &j, NULL, NULL, 0),
	                 409);
	json_decref(j);
	/* an unknown scope is refused */
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok,
	                      "{\"spec\":{\"scope\":\"everything\"}}", &j),
	                 422);
	json_decref(j);
}
END_TEST

/* The ceiling of a new token (rz_auth_mint_check), case by case: no credential makes one
 * stronger than itself (role, scope, expiry), nor than its owner. */
START_TEST(test_mint_rules)
{
	static const struct {
		const char *why;
		int maker_role; /* 0: no maker (the owner's role is the ceiling) */
		bool maker_token;
		int64_t maker_exp; /* seconds; 0: none */
		int owner;
		const char *spec;
		const char *fault;   /* the field of the one cause, or NULL */
		const char *role;    /* spec.role after the check, when no fault */
		const char *expires; /* spec.expiresAt after the check, or NULL (absent) */
	} cases[] = {
		{ "defaults to the owner's role", 0, false, 0, RZ_ROLE_EDIT, "{}", NULL, "edit",
		  NULL },
		{ "above the owner", 0, false, 0, RZ_ROLE_EDIT, "{\"role\":\"admin\"}", "spec.role",
		  NULL, NULL },
		{ "a view session's own token", RZ_ROLE_VIEW, false, 0, RZ_ROLE_VIEW, "{}", NULL,
		  "view", NULL },
		{ "a view-capped token of an admin, uncapped request", RZ_ROLE_VIEW, true, 0,
		  RZ_ROLE_ADMIN, "{}", NULL, "view", NULL },
		{ "a view-capped token asking for admin", RZ_ROLE_VIEW, true, 0, RZ_ROLE_ADMIN,
		  "{\"role\":\"admin\"}", "spec.role", NULL, NULL },
		{ "an edit-capped token asking for edit", RZ_ROLE_EDIT, true, 0, RZ_ROLE_ADMIN,
		  "{\"role\":\"edit\"}", NULL, "edit", NULL },
		{ "an admin for an edit user", RZ_ROLE_ADMIN, false, 0, RZ_ROLE_EDIT, "{}", NULL,
		  "edit", NULL },
		{ "a runner token from a view session", RZ_ROLE_VIEW, false, 0, RZ_ROLE_VIEW,
		  "{\"scope\":\"runner\",\"runner\":\"a\"}", "spec.scope", NULL, NULL },
		{ "a runner token from an edit-capped token of an admin", RZ_ROLE_EDIT, true, 0,
		  RZ_ROLE_ADMIN, "{\"scope\":\"runner\",\"runner\":\"a\"}", "spec.scope", NULL,
		  NULL },
		{ "a runner token for an edit user, by an admin", RZ_ROLE_ADMIN, false, 0,
		  RZ_ROLE_EDIT, "{\"scope\":\"runner\",\"runner\":\"a\"}", "spec.scope", NULL,
		  NULL },
		{ "a runner token below admin", RZ_ROLE_ADMIN, false, 0, RZ_ROLE_ADMIN,
		  "{\"scope\":\"runner\",\"runner\":\"a\",\"role\":\"view\"}", "spec.role", NULL,
		  NULL },
		{ "a runner token by an admin", RZ_ROLE_ADMIN, false, 0, RZ_ROLE_ADMIN,
		  "{\"scope\":\"runner\",\"runner\":\"a\"}", NULL, "admin", NULL },
		{ "a token made with an expiring token expires with it", RZ_ROLE_ADMIN, true,
		  4102444800, RZ_ROLE_ADMIN, "{}", NULL, "admin", "2100-01-01T00:00:00.000Z" },
		{ "no later than it", RZ_ROLE_ADMIN, true, 4102444800, RZ_ROLE_ADMIN,
		  "{\"expiresAt\":\"2100-01-01T00:00:01Z\"}", "spec.expiresAt", NULL, NULL },
		{ "earlier is fine", RZ_ROLE_ADMIN, true, 4102444800, RZ_ROLE_ADMIN,
		  "{\"expiresAt\":\"2099-01-01T00:00:00Z\"}", NULL, "admin",
		  "2099-01-01T00:00:00Z" },
		{ "a session's expiry does not bound its tokens", RZ_ROLE_ADMIN, false, 4102444800,
		  RZ_ROLE_ADMIN, "{}", NULL, "admin", NULL },
		/* role none: its bindings' rights are still capped by the token */
		{ "a user with role none: up to admin (its bindings decide)", 0, false, 0,
		  RZ_ROLE_NONE, "{}", NULL, "admin", NULL },
		{ "its own session asks for edit", RZ_ROLE_NONE, false, 0, RZ_ROLE_NONE,
		  "{\"role\":\"edit\"}", NULL, "edit", NULL },
		{ "no runner token for it, even by an admin", RZ_ROLE_ADMIN, false, 0, RZ_ROLE_NONE,
		  "{\"scope\":\"runner\",\"runner\":\"a\"}", "spec.scope", NULL, NULL },
		{ "nor from its own session", RZ_ROLE_NONE, false, 0, RZ_ROLE_NONE,
		  "{\"scope\":\"runner\",\"runner\":\"a\"}", "spec.scope", NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rz_principal_t maker = { .role = cases[i].maker_role, .exp = cases[i].maker_exp };
		json_t *spec = json_loads(cases[i].spec, 0, NULL);
		json_t *causes = json_array();

		snprintf(maker.user, sizeof(maker.user), "someone");
		if (cases[i].maker_token) {
			snprintf(maker.token_id, sizeof(maker.token_id), "tok-1");
		}
		rz_auth_mint_check(cases[i].maker_role ? &maker : NULL, cases[i].owner, spec,
		                   causes);
		if (cases[i].fault != NULL) {
			ck_assert_msg(json_array_size(causes) == 1, "%s: %zu causes", cases[i].why,
			              json_array_size(causes));
			ck_assert_msg(
			    strcmp(str(json_array_get(causes, 0), "field"), cases[i].fault) == 0,
			    "%s: cause at %s", cases[i].why,
			    str(json_array_get(causes, 0), "field"));
		} else {
			const char *at = str(spec, "expiresAt");
			ck_assert_msg(json_array_size(causes) == 0, "%s: refused (%s)",
			              cases[i].why, str(json_array_get(causes, 0), "message"));
			ck_assert_msg(strcmp(str(spec, "role"), cases[i].role) == 0, "%s: role %s",
			              cases[i].why, str(spec, "role"));
			ck_assert_msg(cases[i].expires == NULL
			                  ? at == NULL
			                  : at != NULL && strcmp(at, cases[i].expires) == 0,
			              "%s: expiresAt %s", cases[i].why, at ? at : "(none)");
		}
		json_decref(causes);
		json_decref(spec);
	}
}
END_TEST

/* A none user's view-capped token makes no edit token. */
START_TEST(test_mint_capped_none)
{
	rz_principal_t maker = { .role = RZ_ROLE_NONE, .cap = RZ_ROLE_VIEW };
	json_t *spec = json_loads("{\"role\":\"edit\"}", 0, NULL), *causes = json_array();

	snprintf(maker.token_id, sizeof(maker.token_id), "tok-1");
	rz_auth_mint_check(&maker, RZ_ROLE_NONE, spec, causes);
	ck_assert_int_eq(json_array_size(causes), 1);
	json_decref(spec);
	json_array_clear(causes);
	spec = json_loads("{}", 0, NULL);
	rz_auth_mint_check(&maker, RZ_ROLE_NONE, spec, causes);
	ck_assert_int_eq(json_array_size(causes), 0);
	ck_assert_str_eq(str(spec, "role"), "view");
	json_decref(spec);
	json_decref(causes);
	ck_assert_int_eq(rz_role_parse("none"), RZ_ROLE_NONE);
	ck_assert_str_eq(rz_role_name(RZ_ROLE_NONE), "none");
}
END_TEST

/* AccessBindings: the highest role granted, to the user or one of its groups, on tenants by
 * name or by selector; {} takes every tenant; a binding being deleted grants nothing. */
START_TEST(test_binding_rules)
{
	json_t *all = json_loads(
	    "[{\"metadata\":{\"name\":\"a-view\"},\"spec\":{\"role\":\"view\","
	    "\"subjects\":[{\"kind\":\"Group\",\"name\":\"team-a\"}],"
	    "\"tenants\":{\"selector\":{\"team\":\"a\"}}}},"
	    "{\"metadata\":{\"name\":\"alice-edit\"},\"spec\":{\"role\":\"edit\","
	    "\"subjects\":[{\"kind\":\"User\",\"name\":\"alice\"}],"
	    "\"tenants\":{\"names\":[\"a1\"]}}},"
	    "{\"metadata\":{\"name\":\"ops\"},\"spec\":{\"role\":\"admin\","
	    "\"subjects\":[{\"kind\":\"Group\",\"name\":\"ops\"}],"
	    "\"tenants\":{\"selector\":{}}}},"
	    "{\"metadata\":{\"name\":\"going\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
	    "\"spec\":{\"role\":\"admin\",\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}],"
	    "\"tenants\":{\"names\":[\"b1\"]}}}]",
	    0, NULL);
	json_t *a_labels = json_loads("{\"team\":\"a\",\"tier\":\"x\"}", 0, NULL);
	json_t *b_labels = json_loads("{\"team\":\"b\"}", 0, NULL);
	const char team_a[][64] = { "team-a" }, ops[][64] = { "other", "ops" };
	const char user_group[][64] = { "alice" };

	ck_assert_ptr_nonnull(all);
	/* alice, in team-a: edit on a1 by name, view on team=a's a2, nothing on b1 */
	ck_assert_int_eq(rz_bindings_role_of(all, "alice", team_a, 1, "a1", a_labels),
	                 RZ_ROLE_EDIT);
	ck_assert_int_eq(rz_bindings_role_of(all, "alice", team_a, 1, "a2", a_labels),
	                 RZ_ROLE_VIEW);
	ck_assert_int_eq(rz_bindings_role_of(all, "alice", team_a, 1, "b1", b_labels),
	                 RZ_ROLE_NONE);
	ck_assert_int_eq(rz_bindings_role_of(all, "alice", team_a, 1, "b1", NULL), RZ_ROLE_NONE);
	/* without the group, only the name */
	ck_assert_int_eq(rz_bindings_role_of(all, "alice", NULL, 0, "a2", a_labels), RZ_ROLE_NONE);
	/* a group named like a user is not that user */
	ck_assert_int_eq(rz_bindings_role_of(all, "carol", user_group, 1, "a1", a_labels),
	                 RZ_ROLE_NONE);
	/* {} takes every tenant */
	ck_assert_int_eq(rz_bindings_role_of(all, "dan", ops, 2, "b1", b_labels), RZ_ROLE_ADMIN);
	ck_assert_int_eq(rz_bindings_role_of(all, "dan", ops, 2, "zz", NULL), RZ_ROLE_ADMIN);
	/* being deleted: nothing */
	ck_assert_int_eq(rz_bindings_role_of(all, "bob", NULL, 0, "b1", b_labels), RZ_ROLE_NONE);
	ck_assert_int_eq(rz_bindings_role_of(NULL, "alice", team_a, 1, "a1", a_labels),
	                 RZ_ROLE_NONE);
	json_decref(all);
	json_decref(a_labels);
	json_decref(b_labels);
}
END_TEST

/* Over HTTP, as an attacker tries it: no credential climbs above itself. */
START_TEST(test_no_token_climbs)
{
	json_t *j;
	char capped[128], made[128], body[160], at[40], ops[1024];

	/* a viewer's own runner token, which would claim runs and read every tenant's state */
	ck_assert_int_eq(call("POST", "/api/v1/users/viewer/tokens", view_tok,
	                      "{\"spec\":{\"scope\":\"runner\",\"runner\":\"a\"}}", &j),
	                 422);
	ck_assert_str_eq(cause0_field(j), "spec.scope");
	json_decref(j);
	/* an admin's token capped at view makes only view tokens */
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok,
	                      "{\"spec\":{\"role\":\"view\"}}", &j),
	                 201);
	snprintf(capped, sizeof(capped), "%s", str(j, "secret"));
	remember(capped);
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", capped, "{\"spec\":{}}", &j),
	                 201);
	ck_assert_str_eq(str(json_object_get(j, "spec"), "role"), "view");
	snprintf(made, sizeof(made), "%s", str(j, "secret"));
	remember(made);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/users", made, NULL, NULL), 403);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", capped,
	                      "{\"spec\":{\"role\":\"admin\"}}", &j),
	                 422);
	ck_assert_str_eq(cause0_field(j), "spec.role");
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", capped,
	                      "{\"spec\":{\"scope\":\"runner\",\"runner\":\"a\"}}", &j),
	                 422);
	json_decref(j);
	/* a token that expires makes tokens that expire no later */
	rz_clock_format(rz_clock_now_ms() + 3600 * 1000, at, sizeof(at));
	snprintf(body, sizeof(body), "{\"spec\":{\"expiresAt\":\"%s\"}}", at);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", admin_tok, body, &j), 201);
	snprintf(capped, sizeof(capped), "%s", str(j, "secret"));
	remember(capped);
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", capped, "{\"spec\":{}}", &j),
	                 201);
	ck_assert_int_eq(rz_clock_parse(str(json_object_get(j, "spec"), "expiresAt")) / 1000,
	                 rz_clock_parse(at) / 1000);
	json_decref(j);
	rz_clock_format(rz_clock_now_ms() + 7200 * 1000, at, sizeof(at));
	snprintf(body, sizeof(body), "{\"spec\":{\"expiresAt\":\"%s\"}}", at);
	ck_assert_int_eq(call("POST", "/api/v1/users/admin/tokens", capped, body, &j), 422);
	ck_assert_str_eq(cause0_field(j), "spec.expiresAt");
	json_decref(j);
	/* a runner token whose owner is no longer an admin claims nothing */
	make_user("ops", "admin", "ops-secret-pw-4");
	ck_assert_int_eq(call("POST", "/api/v1/users/ops/tokens", admin_tok,
	                      "{\"spec\":{\"scope\":\"runner\",\"runner\":\"a\"}}", &j),
	                 201);
	snprintf(ops, sizeof(ops), "%s", str(j, "secret"));
	remember(ops);
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/runners/a/claims", ops,
	                      "{\"run\":\"run-00000000\",\"step\":\"init\"}", NULL),
	                 409);
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/ops", admin_tok, "{\"spec\":{\"role\":\"view\"}}", NULL),
	    200);
	ck_assert_int_eq(call("POST", "/api/v1/runners/a/claims", ops,
	                      "{\"run\":\"run-00000000\",\"step\":\"init\"}", NULL),
	                 401);
}
END_TEST

START_TEST(test_token_lifecycle)
{
	json_t *j;
	char secret[128], first[128], id[64], path[160];

	/* the owner creates one; the secret shows once */
	ck_assert_int_eq(call("POST", "/api/v1/users/editor/tokens", edit_tok,
	                      "{\"spec\":{\"description\":\"ci\"}}", &j),
	                 201);
	snprintf(secret, sizeof(secret), "%s", str(j, "secret"));
	snprintf(id, sizeof(id), "%s", str(json_object_get(j, "metadata"), "name"));
	ck_assert_str_eq(str(json_object_get(j, "spec"), "role"), "edit");
	snprintf(first, sizeof(first), "%s", secret);
	ck_assert_int_eq(strncmp(secret, "rzt_", 4), 0);
	ck_assert_uint_eq(strlen(secret), 47);
	ck_assert_ptr_null(strstr(id, secret + 4));
	remember(secret);
	json_decref(j);
	snprintf(path, sizeof(path), "/api/v1/users/editor/tokens/%s", id);
	ck_assert_int_eq(call("GET", path, edit_tok, NULL, &j), 200);
	ck_assert_ptr_null(json_object_get(j, "secret"));
	json_decref(j);
	/* it works, and records its use */
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", secret,
	         "{\"metadata\":{\"name\":\"t1\"},\"spec\":{\"clusterProvider\":\"sim\"}}", &j),
	    201);
	json_decref(j);
	ck_assert_int_eq(call("GET", path, secret, NULL, &j), 200);
	ck_assert_ptr_nonnull(str(json_object_get(j, "status"), "lastUsed"));
	json_decref(j);
	/* a role above the owner's is refused; another user's tokens are off limits */
	ck_assert_int_eq(call("POST", "/api/v1/users/editor/tokens", edit_tok,
	                      "{\"spec\":{\"role\":\"admin\"}}", &j),
	                 422);
	ck_assert_str_eq(cause0(j), "must not exceed the owner's role (edit)");
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/users/viewer/tokens", edit_tok, NULL, &j), 403);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/users/editor/tokens", admin_tok, NULL, &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);
	/* a view token of an edit user acts as view */
	ck_assert_int_eq(call("POST", "/api/v1/users/editor/tokens", edit_tok,
	                      "{\"spec\":{\"role\":\"view\"}}", &j),
	                 201);
	snprintf(secret, sizeof(secret), "%s", str(j, "secret"));
	remember(secret);
	json_decref(j);
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", secret,
	         "{\"metadata\":{\"name\":\"t2\"},\"spec\":{\"clusterProvider\":\"sim\"}}", NULL),
	    403);
	/* a token cannot be made expired; one that expires is refused from then on */
	ck_assert_int_eq(call("POST", "/api/v1/users/editor/tokens", edit_tok,
	                      "{\"spec\":{\"expiresAt\":\"2020-01-01T00:00:00Z\"}}", &j),
	                 422);
	{
		char *text = json_dumps(j, JSON_COMPACT);
		ck_assert_msg(text != NULL && strstr(text, "spec.expiresAt") != NULL, "%s", text);
		free(text);
	}
	json_decref(j);
	{
		char at[32], body[96];
		rz_clock_format(rz_clock_now_ms() + 1200, at, sizeof(at));
		snprintf(body, sizeof(body), "{\"spec\":{\"expiresAt\":\"%s\"}}", at);
		ck_assert_int_eq(call("POST", "/api/v1/users/editor/tokens", edit_tok, body, &j),
		                 201);
	}
	snprintf(secret, sizeof(secret), "%s", str(j, "secret"));
	remember(secret);
	json_decref(j);
	usleep(1500 * 1000);
	expect_401(secret, "expired token");
	/* revocation acts at once */
	ck_assert_int_eq(call("DELETE", path, edit_tok, NULL, &j), 200);
	json_decref(j);
	expect_401(first, "revoked token");
	/* deleting the user takes its tokens with it */
	ck_assert_int_eq(call("DELETE", "/api/v1/users/editor", admin_tok, NULL, &j), 200);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/tokens", admin_tok, NULL, &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ brute force */

START_TEST(test_brute_force_gets_429)
{
	char after[32];
	int code = 0, tries = 0;
	char body[128];

	snprintf(body, sizeof(body), "{\"username\":\"viewer\",\"password\":\"wrong\"}");
	while (tries < 20) {
		code = call_h("POST", "/api/v1/auth/login", NULL, "application/json", body, NULL,
		              "Retry-After", after, sizeof(after));
		tries++;
		if (code != 401) {
			break;
		}
	}
	ck_assert_int_eq(code, 429);
	ck_assert_int_eq(tries, 7); /* six failures, then refusal */
	ck_assert_int_gt(atoi(after), 0);
	/* even the right password waits now */
	ck_assert_int_eq(login("viewer", VIEW_PW, NULL, 0), 429);
	/* another user from the same address is not locked out */
	ck_assert_int_eq(login("editor", EDIT_PW, NULL, 0), 200);
}
END_TEST

START_TEST(test_success_resets_failures)
{
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 3; i++) {
			ck_assert_int_eq(login("viewer", "nope-nope", NULL, 0), 401);
		}
		ck_assert_int_eq(login("viewer", VIEW_PW, NULL, 0), 200);
	}
}
END_TEST

/* ------------------------------------------------------------------ users */

START_TEST(test_last_admin_is_kept)
{
	json_t *j;

	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/admin", admin_tok, "{\"spec\":{\"role\":\"edit\"}}", &j),
	    422);
	ck_assert_str_eq(cause0(j), "the last admin cannot be demoted");
	json_decref(j);
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/admin", admin_tok, "{\"spec\":{\"disabled\":true}}", &j),
	    422);
	json_decref(j);
	ck_assert_int_eq(call("DELETE", "/api/v1/users/admin", admin_tok, NULL, &j), 409);
	ck_assert_str_eq(str(j, "message"), "user \"admin\" is the last admin: it can neither be "
	                                    "deleted, disabled nor demoted");
	json_decref(j);
	/* with a second admin, the first may go */
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/editor", admin_tok, "{\"spec\":{\"role\":\"admin\"}}", &j),
	    200);
	json_decref(j);
	ck_assert_int_eq(
	    call("PATCH", "/api/v1/users/admin", admin_tok, "{\"spec\":{\"role\":\"view\"}}", &j),
	    200);
	json_decref(j);
	/* users never show a password, and a new user needs one */
	ck_assert_int_eq(call("GET", "/api/v1/users/viewer", edit_tok, NULL, &j), 200);
	ck_assert_ptr_null(json_object_get(json_object_get(j, "spec"), "password"));
	json_decref(j);
	ck_assert_int_eq(call("POST", "/api/v1/users", edit_tok,
	                      "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"role\":\"view\"}}", &j),
	                 422);
	json_decref(j);
	/* an admin sets a new password; the old one stops working */
	ck_assert_int_eq(call("PATCH", "/api/v1/users/viewer", edit_tok,
	                      "{\"spec\":{\"password\":\"another-view-pw\"}}", &j),
	                 200);
	remember("another-view-pw");
	json_decref(j);
	ck_assert_int_eq(login("viewer", VIEW_PW, NULL, 0), 401);
	ck_assert_int_eq(login("viewer", "another-view-pw", NULL, 0), 200);
}
END_TEST

START_TEST(test_password_change)
{
	json_t *j;

	/* the same password again is no change: a one-time password would stay valid */
	ck_assert_int_eq(
	    call("POST", "/api/v1/auth/password", view_tok,
	         "{\"currentPassword\":\"" VIEW_PW "\",\"newPassword\":\"" VIEW_PW "\"}", &j),
	    422);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_array_get(json_object_get(json_object_get(j, "details"), "causes"), 0),
	        "field")),
	    "newPassword");
	json_decref(j);
	ck_assert_int_eq(login("viewer", VIEW_PW, NULL, 0), 200);
	ck_assert_int_eq(
	    call("POST", "/api/v1/auth/password", view_tok,
	         "{\"currentPassword\":\"wrong-one\",\"newPassword\":\"new-view-pw-9\"}", &j),
	    403);
	json_decref(j);
	ck_assert_int_eq(
	    call("POST", "/api/v1/auth/password", view_tok,
	         "{\"currentPassword\":\"" VIEW_PW "\",\"newPassword\":\"new-view-pw-9\"}", &j),
	    200);
	json_decref(j);
	remember("new-view-pw-9");
	ck_assert_int_eq(login("viewer", VIEW_PW, NULL, 0), 401);
	ck_assert_int_eq(login("viewer", "new-view-pw-9", NULL, 0), 200);
}
END_TEST

/* ------------------------------------------------------------------ audit */

static json_t *audit(const char *query)
{
	char path[256];
	json_t *j;

	snprintf(path, sizeof(path), "/api/v1/audit%s", query);
	ck_assert_int_eq(call("GET", path, admin_tok, NULL, &j), 200);
	return j;
}

static int count_rows(json_t *list, const char *verb, const char *user, int code)
{
	size_t i;
	json_t *r;
	int n = 0;

	json_array_foreach(json_object_get(list, "items"), i, r)
	{
		n += strcmp(str(r, "verb"), verb) == 0 && strcmp(str(r, "user"), user) == 0 &&
		     json_integer_value(json_object_get(r, "code")) == code;
	}
	return n;
}

/* Does the file hold any of the secrets? */
static const char *leaked_in(const char *path)
{
	FILE *f = fopen(path, "rb");
	static char buf[8 << 20];
	size_t n;

	if (f == NULL) {
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	for (int i = 0; i < nsecrets; i++) {
		if (memmem(buf, n, secrets[i], strlen(secrets[i])) != NULL) {
			return secrets[i];
		}
	}
	return NULL;
}

START_TEST(test_audit_rows_and_no_secret_anywhere)
{
	json_t *j;
	char path[600];
	const char *leak;
	char raw[2048];
	rzt_response_t r;

	ck_assert_int_eq(login("viewer", "wrong-password-x", NULL, 0), 401);
	ck_assert_int_eq(call("GET", "/api/v1/tenants", NULL, NULL, NULL), 401);
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", view_tok,
	         "{\"metadata\":{\"name\":\"v\"},\"spec\":{\"clusterProvider\":\"sim\"}}", NULL),
	    403);
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", edit_tok,
	         "{\"metadata\":{\"name\":\"e\"},\"spec\":{\"clusterProvider\":\"sim\"}}", NULL),
	    201);
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants", edit_tok, "{\"metadata\":{\"name\":\"E\"}}", NULL),
	    422);
	ck_assert_int_eq(call("DELETE", "/api/v1/tenants/e", edit_tok, NULL, NULL), 202);
	/* a dry run's row says so, and names what it would have created */
	ck_assert_int_eq(
	    call("POST", "/api/v1/tenants?dryRun=All", edit_tok,
	         "{\"metadata\":{\"name\":\"dryone\"},\"spec\":{\"clusterProvider\":\"sim\"}}",
	         NULL),
	    201);
	j = audit("?verb=create&limit=1");
	ck_assert_str_eq(str(json_array_get(json_object_get(j, "items"), 0), "detail"),
	                 "dry run (dryRun=All), nothing stored: tenant dryone");
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/audit", edit_tok, NULL, NULL), 403);
	/* a trusted proxy's X-Forwarded-For names the client */
	snprintf(raw, sizeof(raw),
	         "POST /api/v1/tenants HTTP/1.1\r\nAuthorization: Bearer %s\r\nContent-Type: "
	         "application/json\r\nX-Forwarded-For: 203.0.113.7, 10.0.0.1\r\nX-Request-ID: "
	         "rid-xff\r\nContent-Length: "
	         "58\r\n\r\n{\"metadata\":{\"name\":\"f\"},\"spec\":{\"clusterProvider\":\"sim\"}}",
	         edit_tok);
	rzt_request(base, port, raw, &r);
	ck_assert_int_eq(r.code, 201);
	rzt_response_free(&r);

	j = audit("?limit=100");
	ck_assert_int_eq(count_rows(j, "login", "viewer", 401), 1);
	ck_assert_int_eq(count_rows(j, "login", "viewer", 200), 1);
	ck_assert_int_eq(count_rows(j, "list", "", 401), 1);
	ck_assert_int_eq(count_rows(j, "create", "viewer", 403), 1);
	ck_assert_int_eq(count_rows(j, "create", "editor", 201), 3); /* one a dry run */
	ck_assert_int_eq(count_rows(j, "create", "editor", 422), 1);
	ck_assert_int_eq(count_rows(j, "delete", "editor", 202), 1);
	ck_assert_int_eq(count_rows(j, "list", "editor", 403), 1);
	{
		json_t *first = json_array_get(json_object_get(j, "items"), 0);
		ck_assert_str_eq(str(first, "requestId"), "rid-xff");
		ck_assert_str_eq(str(first, "sourceIP"), "203.0.113.7");
		ck_assert_str_eq(str(first, "kind"), "Tenant");
		ck_assert_str_eq(str(first, "name"), "f");
		ck_assert_str_eq(str(first, "role"), "edit");
	}
	json_decref(j);
	/* filters and pages */
	j = audit("?user=editor&verb=create");
	ck_assert_int_eq(count_rows(j, "create", "editor", 201), 3); /* one a dry run */
	ck_assert_int_eq(count_rows(j, "login", "viewer", 200), 0);
	json_decref(j);
	/* the outcome: success is a code below 400, failure one from 400 (the WebUI's filter) */
	j = audit("?user=editor&outcome=failure");
	ck_assert_int_eq(count_rows(j, "create", "editor", 201), 0);
	ck_assert_int_eq(count_rows(j, "create", "editor", 422), 1);
	ck_assert_int_eq(count_rows(j, "list", "editor", 403), 1);
	json_decref(j);
	j = audit("?user=editor&outcome=success");
	ck_assert_int_eq(count_rows(j, "create", "editor", 201), 3); /* one a dry run */
	ck_assert_int_eq(count_rows(j, "create", "editor", 422), 0);
	ck_assert_int_eq(count_rows(j, "delete", "editor", 202), 1);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/audit?outcome=maybe", admin_tok, NULL, NULL), 400);
	j = audit("?limit=2");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 2);
	ck_assert_ptr_nonnull(str(json_object_get(j, "metadata"), "continue"));
	json_decref(j);

	/* nothing a test used as a secret is in the database, its journal or the log */
	snprintf(path, sizeof(path), "%s/data/rezus.db", dir);
	leak = leaked_in(path);
	ck_assert_msg(leak == NULL, "secret in the database: %s", leak);
	snprintf(path, sizeof(path), "%s/data/rezus.db-wal", dir);
	leak = leaked_in(path);
	ck_assert_msg(leak == NULL, "secret in the WAL: %s", leak);
	leak = leaked_in(logpath);
	ck_assert_msg(leak == NULL, "secret in the log: %s", leak);
	ck_assert_int_ge(nsecrets, 6);
}
END_TEST

/* A server-side apply creates only what a POST to the collection could: an AccessBinding on
 * a tenant's name lets its user change that tenant and create in it, not create the tenant. */
START_TEST(test_apply_creates_as_post_would)
{
	static const char tenant[] = "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"Tenant\","
	                             "\"spec\":{\"clusterProvider\":\"sim\"}}";
	char tok[1024];
	json_t *j;

	ck_assert_int_eq(call("POST", "/api/v1/tenants", admin_tok,
	                      "{\"metadata\":{\"name\":\"t1\"},\"spec\":{\"clusterProvider\":"
	                      "\"sim\"}}",
	                      NULL),
	                 201);
	make_user("ed", "none", "tenant-editor-pw-1");
	ck_assert_int_eq(call("POST", "/api/v1/accessbindings", admin_tok,
	                      "{\"metadata\":{\"name\":\"ed\"},\"spec\":{\"role\":\"edit\","
	                      "\"subjects\":[{\"kind\":\"User\",\"name\":\"ed\"}],"
	                      "\"tenants\":{\"names\":[\"t1\",\"t9\"]}}}",
	                      NULL),
	                 201);
	ck_assert_int_eq(login("ed", "tenant-editor-pw-1", tok, sizeof(tok)), 200);
	ck_assert_int_eq(call("POST", "/api/v1/tenants", tok,
	                      "{\"metadata\":{\"name\":\"t9\"},\"spec\":{}}", NULL),
	                 403);
	ck_assert_int_eq(call_h("PATCH", "/api/v1/tenants/t9?fieldManager=ed", tok,
	                        "application/apply-patch+yaml", tenant, &j, NULL, NULL, 0),
	                 403);
	ck_assert_ptr_nonnull(strstr(str(j, "message"), "role on the installation"));
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/tenants/t9", admin_tok, NULL, NULL), 404);
	ck_assert_int_eq(call_h("PATCH", "/api/v1/tenants/t1?fieldManager=ed", tok,
	                        "application/apply-patch+yaml", tenant, NULL, NULL, NULL, 0),
	                 200);
	ck_assert_int_eq(call_h("PATCH", "/api/v1/tenants/t1/configpatches/p?fieldManager=ed", tok,
	                        "application/apply-patch+yaml",
	                        "{\"apiVersion\":\"rezuscloud.io/v1\",\"kind\":\"ConfigPatch\","
	                        "\"spec\":{\"patch\":\"machine: {}\\n\"}}",
	                        NULL, NULL, NULL, 0),
	                 201);
}
END_TEST

/* A tenant's admin by AccessBindings reads the audit rows of its tenants, and only those,
 * page by page; a token capped below admin, and any other role below it, still gets 403. */
START_TEST(test_audit_of_ones_tenants)
{
	static const char *const tenants[] = { "t1", "t2" };
	char tok[1024], capped[128], path[160], cont[32] = "";
	const char *next;
	json_t *j, *r;
	size_t i;
	int pages = 0, rows = 0;

	for (int t = 0; t < 2; t++) {
		char body[160];
		snprintf(body, sizeof(body),
		         "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"clusterProvider\":\"sim\"}}",
		         tenants[t]);
		ck_assert_int_eq(call("POST", "/api/v1/tenants", admin_tok, body, NULL), 201);
		snprintf(path, sizeof(path), "/api/v1/tenants/%s/nodegroups", tenants[t]);
		ck_assert_int_eq(call("POST", path, admin_tok,
		                      "{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"role\":"
		                      "\"controlplane\",\"count\":1,\"providerClass\":\"sim\"}}",
		                      NULL),
		                 201);
	}
	make_user("ta", "none", "tenant-admin-pw-1");
	ck_assert_int_eq(call("POST", "/api/v1/accessbindings", admin_tok,
	                      "{\"metadata\":{\"name\":\"ta\"},\"spec\":{\"role\":\"admin\","
	                      "\"subjects\":[{\"kind\":\"User\",\"name\":\"ta\"}],"
	                      "\"tenants\":{\"names\":[\"t1\"]}}}",
	                      NULL),
	                 201);
	ck_assert_int_eq(call("POST", "/api/v1/accessbindings", admin_tok,
	                      "{\"metadata\":{\"name\":\"ta-edit\"},\"spec\":{\"role\":\"edit\","
	                      "\"subjects\":[{\"kind\":\"User\",\"name\":\"ta\"}],"
	                      "\"tenants\":{\"names\":[\"t2\"]}}}",
	                      NULL),
	                 201);
	ck_assert_int_eq(login("ta", "tenant-admin-pw-1", tok, sizeof(tok)), 200);
	ck_assert_int_eq(call("GET", "/api/v1/tenants/t2", tok, NULL, NULL), 200);
	/* t1's rows, page by page: nothing of t2 (edit only there), of users or of bindings */
	do {
		snprintf(path, sizeof(path), "/api/v1/audit?limit=1%s%s",
		         cont[0] ? "&continue=" : "", cont);
		ck_assert_int_eq(call("GET", path, tok, NULL, &j), 200);
		json_array_foreach(json_object_get(j, "items"), i, r)
		{
			ck_assert_msg(strcmp(str(r, "tenant"), "t1") == 0 ||
			                  (strcmp(str(r, "kind"), "Tenant") == 0 &&
			                   strcmp(str(r, "name"), "t1") == 0),
			              "a row of %s %s/%s", str(r, "kind"), str(r, "tenant"),
			              str(r, "name"));
			rows++;
		}
		next = str(json_object_get(j, "metadata"), "continue");
		snprintf(cont, sizeof(cont), "%s", next ? next : "");
		json_decref(j);
		pages++;
	} while (cont[0] != '\0' && pages < 10);
	ck_assert_int_eq(rows, 2); /* the tenant made, its node group made */
	ck_assert_int_eq(pages, 2);
	/* filters narrow it, never widen it */
	ck_assert_int_eq(call("GET", "/api/v1/audit?tenant=t2", tok, NULL, &j), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	/* the admin sees t2's rows as before */
	j = audit("?tenant=t2");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);
	/* her token capped at edit, and the installation's editor and viewer: 403 */
	ck_assert_int_eq(
	    call("POST", "/api/v1/users/ta/tokens", tok, "{\"spec\":{\"role\":\"edit\"}}", &j),
	    201);
	snprintf(capped, sizeof(capped), "%s", str(j, "secret"));
	remember(capped);
	json_decref(j);
	ck_assert_int_eq(call("GET", "/api/v1/audit", capped, NULL, NULL), 403);
	ck_assert_int_eq(call("GET", "/api/v1/audit", edit_tok, NULL, NULL), 403);
	ck_assert_int_eq(call("GET", "/api/v1/audit", view_tok, NULL, NULL), 403);
	/* the binding gone, so is the log */
	ck_assert_int_eq(call("DELETE", "/api/v1/accessbindings/ta", admin_tok, NULL, NULL), 200);
	ck_assert_int_eq(call("GET", "/api/v1/audit", tok, NULL, NULL), 403);
}
END_TEST

START_TEST(test_audit_retention)
{
	rz_db_t *db = rz_daemon_db(d);
	rz_audit_entry_t e = {
		.user = "u", .request_id = "old-row", .verb = "create", .code = 201
	};
	rz_audit_t *a = NULL;
	rz_err_t err = { 0 };
	rz_stmt_t *st;
	json_t *j;

	ck_assert_int_eq(rz_audit_insert(db, &e, &err), 0);
	ck_assert_int_eq(rz_db_exec(db,
	                            "UPDATE audit SET time = '2000-01-01T00:00:00Z' WHERE "
	                            "request_id = 'old-row'",
	                            &err),
	                 0);
	/* pruning runs when the module starts and hourly after */
	ck_assert_int_eq(rz_audit_new(&a, db, NULL, 90LL * 24 * 3600 * 1000, &err), 0);
	ck_assert_int_eq(rz_audit_prune(a), 0); /* the start already removed it */
	rz_audit_free(a);
	st = rz_db_stmt(db, "SELECT count(*) FROM audit WHERE request_id = 'old-row'", &err);
	ck_assert_int_eq(rz_stmt_step(st, &err), 1);
	ck_assert_int_eq(rz_stmt_int64(st, 0), 0);
	rz_stmt_done(st);
	j = audit("?verb=login");
	ck_assert_int_gt(json_array_size(json_object_get(j, "items")), 0); /* recent rows stay */
	json_decref(j);
}
END_TEST

/* A refused request with a 60 KiB path writes a row of bounded size: 2,000 of them once
 * added 228 MB. The cut keeps whole UTF-8 characters and says it cut. */
START_TEST(test_audit_fields_bounded)
{
	rz_db_t *db = rz_daemon_db(d);
	size_t n = 60 * 1024;
	char *path = malloc(n + 1), *err_text = malloc(n + 1);
	rz_audit_entry_t e = { .user = "", .request_id = "long-row", .code = 401 };
	rz_err_t err = { 0 };
	rz_stmt_t *st;
	const char *p;

	ck_assert_ptr_nonnull(path);
	ck_assert_ptr_nonnull(err_text);
	path[0] = '/';
	for (size_t i = 1; i + 1 < n; i += 2) { /* "é" over and over, one byte off */
		path[i] = (char)0xc3;
		path[i + 1] = (char)0xa9;
	}
	path[n - 1] = 'x';
	path[n] = '\0';
	memset(err_text, 'e', n);
	err_text[n] = '\0';
	e.path = path;
	e.error = err_text;
	ck_assert_int_eq(rz_audit_insert(db, &e, &err), 0);
	st = rz_db_stmt(db,
	                "SELECT path, length(CAST(path AS BLOB)), length(CAST(error AS BLOB))"
	                " FROM audit WHERE request_id = 'long-row'",
	                &err);
	ck_assert_int_eq(rz_stmt_step(st, &err), 1);
	ck_assert_int_le(rz_stmt_int64(st, 1), RZ_AUDIT_FIELD_MAX + 3);
	ck_assert_int_le(rz_stmt_int64(st, 2), RZ_AUDIT_TEXT_MAX + 3);
	p = rz_stmt_text(st, 0);
	ck_assert_msg(strncmp(p + strlen(p) - 3, "\xe2\x80\xa6", 3) == 0, "the cut is marked");
	/* whole characters only: "/" then pairs of bytes, then the mark */
	ck_assert_int_eq((strlen(p) - 1 - 3) % 2, 0);
	rz_stmt_done(st);
	free(path);
	free(err_text);
}
END_TEST

/* ------------------------------------------------------------------ the limiter itself */

/* A limiter of the test's own, on the daemon's database and store. */
static rz_auth_t *own_limiter(void)
{
	rz_auth_t *a = NULL;
	rz_err_t err = { 0 };

	ck_assert_msg(rz_auth_new(&a, &cfg, rz_daemon_db(d), rz_daemon_store(d), NULL, &err) == 0,
	              "auth: %s", err.msg);
	return a;
}

/* 40 attempts for one (user, address) at once: each is counted when it starts, so those
 * past the limit are refused before any password is hashed (all 40 were checked before). */
START_TEST(test_limiter_counts_before_hashing)
{
	rz_auth_t *a = own_limiter();
	int64_t delay, retry;
	int admitted = 0;

	for (int i = 0; i < 40; i++) {
		if (rz_auth_throttle(a, "viewer", "198.51.100.1", &delay, &retry) == 0) {
			admitted++;
		} else {
			ck_assert_int_gt(retry, 0);
		}
	}
	fprintf(stderr, "# 40 concurrent attempts: %d admitted to a password check\n", admitted);
	ck_assert_int_le(admitted, 6);
	ck_assert_int_gt(admitted, 0);
	rz_auth_free(a);
}
END_TEST

/* A locked (user, address) pair stays locked whatever else fails: failures under 5,000
 * other names and addresses once evicted it from the 1,024 slots, unlocking it. */
START_TEST(test_locked_pair_survives_a_flood)
{
	rz_auth_t *a = own_limiter();
	int64_t delay, retry;
	char user[32], ip[32];
	int refused_new = 0;

	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(rz_auth_throttle(a, "viewer", "198.51.100.7", &delay, &retry), 0);
		rz_auth_login_failed(a, "viewer", "198.51.100.7");
	}
	ck_assert_int_eq(rz_auth_throttle(a, "viewer", "198.51.100.7", &delay, &retry), -EAGAIN);
	/* single failures under other names, then enough to lock every slot */
	for (int i = 0; i < 5000; i++) {
		snprintf(user, sizeof(user), "junk%d", i);
		snprintf(ip, sizeof(ip), "203.0.113.%d", i % 250);
		if (rz_auth_throttle(a, user, ip, &delay, &retry) == 0) {
			rz_auth_login_failed(a, user, ip);
		}
	}
	ck_assert_int_eq(rz_auth_throttle(a, "viewer", "198.51.100.7", &delay, &retry), -EAGAIN);
	ck_assert_int_gt(retry, 0);
	for (int i = 0; i < 3000; i++) {
		snprintf(user, sizeof(user), "lock%d", i);
		snprintf(ip, sizeof(ip), "192.0.2.%d", i % 200);
		for (int k = 0; k < 6; k++) {
			if (rz_auth_throttle(a, user, ip, &delay, &retry) == 0) {
				rz_auth_login_failed(a, user, ip);
			} else {
				refused_new += k == 0;
				break;
			}
		}
	}
	fprintf(stderr, "# flood of 3,000 locked pairs: %d new pairs refused at the first try\n",
	        refused_new);
	ck_assert_int_eq(rz_auth_throttle(a, "viewer", "198.51.100.7", &delay, &retry), -EAGAIN);
	/* an address that took no part may still try */
	ck_assert_int_eq(rz_auth_throttle(a, "editor", "198.51.100.99", &delay, &retry), 0);
	rz_auth_login_succeeded(a, "editor", "198.51.100.99");
	rz_auth_free(a);
}
END_TEST

/* ------------------------------------------------------------------ sessions and identity */

START_TEST(test_session_bound_to_the_user)
{
	json_t *j;
	char again[1024];

	ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", view_tok, NULL, NULL), 200);
	ck_assert_int_eq(call("DELETE", "/api/v1/users/viewer", admin_tok, NULL, &j), 200);
	json_decref(j);
	expect_401(view_tok, "deleted user");
	/* a new user of the same name is someone else: the old session is not theirs */
	make_user("viewer", "admin", "someone-else-pw-1");
	remember("someone-else-pw-1");
	expect_401(view_tok, "a new user with the deleted user's name");
	ck_assert_int_eq(login("viewer", "someone-else-pw-1", again, sizeof(again)), 200);
	ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", again, NULL, NULL), 200);
}
END_TEST

/* A new password ends the user's other sessions; the one that changed it goes on. */
START_TEST(test_password_change_ends_other_sessions)
{
	char other[1024], third[1024];
	json_t *j;

	ck_assert_int_eq(login("viewer", VIEW_PW, other, sizeof(other)), 200);
	ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", other, NULL, NULL), 200);
	ck_assert_int_eq(
	    call("POST", "/api/v1/auth/password", view_tok,
	         "{\"currentPassword\":\"" VIEW_PW "\",\"newPassword\":\"new-view-pw-9\"}", &j),
	    200);
	json_decref(j);
	remember("new-view-pw-9");
	expect_401(other, "a session from before the password change");
	ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", view_tok, NULL, NULL), 200);
	/* an admin setting the password ends every session of the user */
	ck_assert_int_eq(login("viewer", "new-view-pw-9", third, sizeof(third)), 200);
	ck_assert_int_eq(call("PATCH", "/api/v1/users/viewer", admin_tok,
	                      "{\"spec\":{\"password\":\"admin-set-pw-7\"}}", &j),
	                 200);
	json_decref(j);
	remember("admin-set-pw-7");
	expect_401(view_tok, "after an admin set a new password");
	expect_401(third, "after an admin set a new password");
	ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", admin_tok, NULL, NULL), 200);
}
END_TEST

/* A session or token in use is known without a database read (core/auth/auth.c): what ends
 * it takes effect on the very next request all the same. */
START_TEST(test_known_credentials_end_at_once)
{
	char sess[1024], gone[1024];
	char tok[256];
	json_t *j;

	/* logout, after the session was used (and so memoised) */
	ck_assert_int_eq(login("viewer", VIEW_PW, sess, sizeof(sess)), 200);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", sess, NULL, NULL), 200);
	}
	ck_assert_int_eq(call("POST", "/api/v1/auth/logout", sess, NULL, NULL), 200);
	expect_401(sess, "a session used, then logged out");
	/* a deleted user's session and token, both used before */
	ck_assert_int_eq(call("POST", "/api/v1/users", admin_tok,
	                      "{\"metadata\":{\"name\":\"shortlived\"},\"spec\":{\"role\":"
	                      "\"view\",\"password\":\"short-lived-pw-1\"}}",
	                      &j),
	                 201);
	json_decref(j);
	ck_assert_int_eq(login("shortlived", "short-lived-pw-1", gone, sizeof(gone)), 200);
	ck_assert_int_eq(call("POST", "/api/v1/users/shortlived/tokens", gone,
	                      "{\"spec\":{\"role\":\"view\"}}", &j),
	                 201);
	secret_of(j, tok, sizeof(tok));
	json_decref(j);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", gone, NULL, NULL), 200);
		ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", tok, NULL, NULL), 200);
	}
	ck_assert_int_eq(call("DELETE", "/api/v1/users/shortlived", admin_tok, NULL, NULL), 200);
	expect_401(gone, "the session of a deleted user");
	expect_401(tok, "the API token of a deleted user");
	/* a revoked token, used before */
	new_token("admin", admin_tok, tok, sizeof(tok), gone, sizeof(gone));
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(call("GET", "/api/v1/auth/whoami", tok, NULL, NULL), 200);
	}
	ck_assert_int_eq(call("DELETE", gone, admin_tok, NULL, NULL), 200);
	expect_401(tok, "a token used, then revoked");
}
END_TEST

/* ------------------------------------------------------------------ refused requests */

static int64_t audit_figure(const char *sql)
{
	rz_err_t err = { 0 };
	rz_stmt_t *st = rz_db_stmt(rz_daemon_db(d), sql, &err);
	int64_t v;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(rz_stmt_step(st, &err), 1);
	v = rz_stmt_int64(st, 0);
	rz_stmt_done(st);
	return v;
}

#define AUDIT_BYTES                                                                                \
	"SELECT coalesce(sum(length(CAST(path AS BLOB)) + length(CAST(error AS BLOB)) +"           \
	" length(CAST(detail AS BLOB)) + length(user) + length(request_id) + 64), 0) FROM audit"

/* 2,000 refused requests from one address add a bounded number of rows: the first few in
 * full, the rest counted into one row per address and interval (it was one row each). */
START_TEST(test_refused_requests_sampled)
{
	char raw[1024], path[700];
	int64_t rows0 = audit_figure("SELECT count(*) FROM audit"),
	        bytes0 = audit_figure(AUDIT_BYTES);
	int64_t rows1, bytes1;
	rzt_response_t r;
	json_t *j;

	int64_t t0 = rz_clock_now_ms(), secs;

	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	for (int i = 0; i < 2000; i++) {
		snprintf(raw, sizeof(raw),
		         "GET /api/v1/tenants%s HTTP/1.1\r\nX-Forwarded-For: 203.0.113.9\r\n"
		         "Authorization: Bearer junk%d\r\nContent-Length: 0\r\n\r\n",
		         path, i);
		rzt_request(base, port, raw, &r);
		ck_assert_int_eq(r.code, 401);
		rzt_response_free(&r);
	}
	rows1 = audit_figure("SELECT count(*) FROM audit");
	bytes1 = audit_figure(AUDIT_BYTES);
	secs = (rz_clock_now_ms() - t0) / 1000 + 1;
	fprintf(stderr,
	        "# 2,000 refused requests in %lld s: audit rows %lld -> %lld, bytes %lld -> %lld\n",
	        (long long)secs, (long long)rows0, (long long)rows1, (long long)bytes0,
	        (long long)bytes1);
	/* per 1 s interval (audit.refused_interval): 10 rows in full (audit.refused_full) and
	 * one that counts the rest; however slow the machine, far below one row each */
	ck_assert_int_le(rows1 - rows0, (secs + 1) * 11);
	ck_assert_int_lt(rows1 - rows0, 2000 / 4);
	/* the interval ends: the rest show as one row that counts them */
	sleep(2);
	ck_assert_int_eq(call("GET", "/api/v1/tenants", NULL, NULL, NULL), 401);
	j = audit("?verb=refused");
	ck_assert_uint_ge(json_array_size(json_object_get(j, "items")), 1);
	{
		json_t *row = json_array_get(json_object_get(j, "items"), 0);
		ck_assert_str_eq(str(row, "sourceIP"), "203.0.113.9");
		ck_assert_msg(strstr(str(row, "error"), "more refused requests") != NULL, "%s",
		              str(row, "error"));
	}
	json_decref(j);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("auth");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_jwt_refusals);
	tcase_add_test(tc, test_whoami_and_demotion);
	tcase_add_test(tc, test_role_matrix_from_route_table);
	tcase_add_test(tc, test_runner_token_claims_only);
	tcase_add_test(tc, test_view_role_reads_events);
	tcase_add_test(tc, test_token_lifecycle);
	tcase_add_test(tc, test_no_token_climbs);
	tcase_add_test(tc, test_brute_force_gets_429);
	tcase_add_test(tc, test_success_resets_failures);
	tcase_add_test(tc, test_last_admin_is_kept);
	tcase_add_test(tc, test_password_change);
	tcase_add_test(tc, test_audit_rows_and_no_secret_anywhere);
	tcase_add_test(tc, test_apply_creates_as_post_would);
	tcase_add_test(tc, test_audit_of_ones_tenants);
	tcase_add_test(tc, test_audit_retention);
	tcase_add_test(tc, test_audit_fields_bounded);
	tcase_add_test(tc, test_limiter_counts_before_hashing);
	tcase_add_test(tc, test_locked_pair_survives_a_flood);
	tcase_add_test(tc, test_session_bound_to_the_user);
	tcase_add_test(tc, test_password_change_ends_other_sessions);
	tcase_add_test(tc, test_known_credentials_end_at_once);
	tcase_add_test(tc, test_refused_requests_sampled);
	suite_add_tcase(s, tc);
	tc = tcase_create("mint");
	tcase_add_test(tc, test_mint_rules);
	tcase_add_test(tc, test_mint_capped_none);
	tcase_add_test(tc, test_binding_rules);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
