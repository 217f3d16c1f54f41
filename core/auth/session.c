/* core/auth/session.c - login, logout, whoami, password change; the first admin. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/auth/audit.h"
#include "core/auth/session.h"

#define BAD_LOGIN "invalid username or password"

struct check;

struct rz_session {
	rz_auth_t *auth;
	rz_access_t *access;
	rz_store_t *store;
	rz_db_t *db;
	rz_workers_t *workers;
	struct event_base *base;
	/* password checks admitted: running on the pool, or waiting for a turn (oldest first) */
	struct check *head, *tail;
	int running, waiting;
	uint64_t busy_refusals; /* 429: too many checks at once */
};

/* A password check on its way through the worker pool. */
struct check {
	rz_session_t *s;
	rz_req_t *req;
	rz_done_fn done;
	struct check *prev, *next; /* among the admitted */
	bool admitted, running;
	char user[64];
	char ip[48];                         /* the source address, for the limiter */
	char addr[RZ_ADDR_KEY_LEN];          /* what it counts as */
	char *password;                      /* to verify */
	char *new_password;                  /* password change: to hash */
	char hash[RZ_PASSWORD_HASH_LEN];     /* stored hash ("" when the user has none) */
	char new_hash[RZ_PASSWORD_HASH_LEN]; /* rehash or new password */
	bool ok, rehashed;
	int64_t delay_ms;
	struct event *timer;
	char keep_jti[40]; /* password change: the session that made it goes on */
};

static void wipe(char *p)
{
	if (p != NULL) {
		sodium_memzero(p, strlen(p));
		free(p);
	}
}

static void check_free(struct check *c)
{
	wipe(c->password);
	wipe(c->new_password);
	sodium_memzero(c->hash, sizeof(c->hash));
	sodium_memzero(c->new_hash, sizeof(c->new_hash));
	if (c->timer != NULL) {
		event_free(c->timer);
	}
	free(c);
}

/* The stored hash of user into out ("" when none). */
static void stored_hash(rz_db_t *db, const char *user, char out[RZ_PASSWORD_HASH_LEN])
{
	rz_err_t err = { 0 };
	rz_stmt_t *s = rz_db_stmt(db, "SELECT hash FROM credentials WHERE user = ?1", &err);

	out[0] = '\0';
	if (s == NULL) {
		return;
	}
	rz_stmt_bind_text(s, 1, user);
	if (rz_stmt_step(s, &err) == 1) {
		snprintf(out, RZ_PASSWORD_HASH_LEN, "%s", rz_stmt_text(s, 0));
	}
	rz_stmt_done(s);
}

/* A new password hash for the user's credentials; a changed password (not a rehash of the
 * same one) also ends the user's sessions but the one that changed it. */
struct new_hash {
	const char *hash;
	const char *keep_jti; /* NULL: a rehash, sessions stay */
};

static int credentials_hook(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone,
                            void *arg, rz_err_t *err)
{
	const struct new_hash *h = arg;
	const char *user =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	int rc = rz_auth_store_hash(db, user, h->hash, err);

	if (rc == 0 && h->keep_jti != NULL) {
		rc = rz_auth_end_sessions(db, user, h->keep_jti, err);
	}
	return rc;
}

/* Write the user's status (lastLogin, mustChangePassword) with the audit row and, when
 * given, a new password hash — one transaction. keep_jti: see struct new_hash. */
static int write_user(rz_session_t *s, rz_req_t *req, const char *user, bool login,
                      const char *new_hash, const char *keep_jti, rz_err_t *err)
{
	const rz_kind_t *k = rz_kind_by_name("User");
	struct new_hash h = { new_hash, keep_jti };
	rz_write_hook_t cred = { credentials_hook, &h, NULL };
	rz_access_hook_t audit;
	json_t *u = NULL, *status, *out = NULL;
	char now[32];
	int rc = rz_store_get(s->store, k, NULL, user, &u, err);

	if (rc != 0) {
		return rc;
	}
	status = json_object_get(u, "status");
	if (status == NULL) {
		status = json_object();
		json_object_set_new(u, "status", status);
	}
	if (login) {
		rz_time_now(now, sizeof(now));
		json_object_set_new(status, "lastLogin", json_string(now));
	} else {
		json_object_del(status, "mustChangePassword");
	}
	rc = rz_store_update(
	    s->store, k, NULL, user, u, 0, RZ_UPDATE_STATUS,
	    rz_access_hook(s->access, req, 200, user, new_hash ? &cred : NULL, &audit), &out, NULL,
	    err);
	if (rc == 0) {
		rz_req_set_audited(req);
	}
	json_decref(out);
	json_decref(u);
	return rc;
}

/* ------------------------------------------------------------------ worker side */

/* A hash to check against when the user has none, so that a missing user costs one
 * verification too and timing does not tell who exists. Made once, on a worker. */
static char dummy[RZ_PASSWORD_HASH_LEN];
static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;

static void make_dummy(void)
{
	char pw[33];
	unsigned char raw[16];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(pw, sizeof(pw), raw, sizeof(raw));
	if (rz_auth_hash_password(pw, dummy) != 0) {
		dummy[0] = '\0';
	}
}

static void check_work(void *arg)
{
	struct check *c = arg;

	pthread_once(&dummy_once, make_dummy);
	c->ok =
	    rz_auth_check_password(c->hash[0] ? c->hash : dummy, c->password) && c->hash[0] != '\0';
	if (c->ok && c->new_password != NULL) {
		c->rehashed = rz_auth_hash_password(c->new_password, c->new_hash) == 0;
	} else if (c->ok && rz_auth_needs_rehash(c->hash)) {
		c->rehashed = rz_auth_hash_password(c->password, c->new_hash) == 0;
	}
}

/* ------------------------------------------------------------------ the gate

 * Password checks cost 64 MiB and tens of milliseconds of a worker each. At most
 * auth.login_checks run at once; one address (an IPv6 /64) has at most
 * auth.login_checks_per_address running or waiting; at most auth.login_queue wait. When a
 * check ends, the next to run is the waiting one whose address has the fewest running,
 * oldest first: a flooding address cannot starve another. */

static int running_from(const rz_session_t *s, const char *addr, bool waiting_too)
{
	int n = 0;

	for (const struct check *c = s->head; c != NULL; c = c->next) {
		n += (c->running || waiting_too) && strcmp(c->addr, addr) == 0;
	}
	return n;
}

static void check_free(struct check *c);
static void gate_leave(struct check *c);

/* Put c on the pool; on failure answer 503 and let it go. */
static void gate_start(struct check *c)
{
	rz_session_t *s = c->s;

	c->running = true;
	s->running++;
	if (rz_workers_submit(s->workers, check_work, c->done, c) != 0) {
		gate_leave(c);
		rz_auth_login_abandoned(s->auth, c->user, c->ip);
		rz_reply_error(c->req, 503, NULL, "the server is busy; try again");
		check_free(c);
	}
}

/* c's check is over (or never ran): start the fairest waiting one. */
static void gate_leave(struct check *c)
{
	rz_session_t *s = c->s;
	const rz_login_limits_t *l = rz_auth_login_limits(s->auth);
	struct check *next = NULL;
	int best = INT_MAX;

	if (!c->admitted) {
		return;
	}
	*(c->prev ? &c->prev->next : &s->head) = c->next;
	*(c->next ? &c->next->prev : &s->tail) = c->prev;
	c->admitted = false;
	if (c->running) {
		s->running--;
	} else {
		s->waiting--;
	}
	if (s->running >= l->running || s->waiting == 0) {
		return;
	}
	for (struct check *w = s->head; w != NULL; w = w->next) {
		int n = w->running ? INT_MAX : running_from(s, w->addr, false);
		if (n < best) {
			best = n;
			next = w;
		}
	}
	if (next != NULL) {
		s->waiting--;
		gate_start(next);
	}
}

/* Admit c (run it now or let it wait), or answer 429 and free it: -EAGAIN. */
static int gate_enter(struct check *c)
{
	rz_session_t *s = c->s;
	const rz_login_limits_t *l = rz_auth_login_limits(s->auth);

	if (running_from(s, c->addr, true) >= l->per_address ||
	    (s->running >= l->running && s->waiting >= l->queue)) {
		rz_auth_login_abandoned(s->auth, c->user, c->ip);
		s->busy_refusals++;
		rz_req_add_header(c->req, "Retry-After", "1");
		rz_access_audit(s->access, c->req, 429, c->user, "too many password checks at once",
		                NULL, NULL);
		rz_req_set_audited(c->req);
		rz_reply_error(c->req, 429, NULL,
		               "too many password checks from %s at once; try again in 1 s",
		               c->addr);
		check_free(c);
		return -EAGAIN;
	}
	c->admitted = true;
	c->prev = s->tail;
	*(s->tail ? &s->tail->next : &s->head) = c;
	s->tail = c;
	if (s->running < l->running) {
		gate_start(c);
	} else {
		s->waiting++;
	}
	return 0;
}

/* ------------------------------------------------------------------ login */

/* Audit and answer a refused login (its failure is already counted). */
static void login_refused(struct check *c)
{
	rz_err_t err = { 0 };

	if (rz_access_audit(c->s->access, c->req, 401, c->user, BAD_LOGIN, NULL, &err) == 0) {
		rz_req_set_audited(c->req);
	}
	rz_req_add_header(c->req, "WWW-Authenticate", "Bearer realm=\"rezuscloud\"");
	rz_reply_error(c->req, 401, NULL, BAD_LOGIN);
	check_free(c);
}

static void on_delay(evutil_socket_t fd, short what, void *arg)
{
	login_refused(arg);
}

/* The Status of a write that failed (rc) because of the disk under the data dir (full: 507,
 * read-only or failing: 503), as the API's writes answer it; NULL for any other failure. */
static json_t *storage_status(rz_session_t *s, int rc)
{
	char why[256];
	json_t *st = rz_status_storage(rc);

	return st != NULL ? st : rz_status_storage(rz_db_storage_error(s->db, why, sizeof(why)));
}

static void login_granted(struct check *c)
{
	rz_principal_t p;
	rz_err_t err = { 0 };
	char *token = NULL;
	int wrc = 0;
	char exp[32];
	time_t t;
	struct tm tm;
	json_t *u = NULL;
	int role;

	if (rz_store_get(c->s->store, rz_kind_by_name("User"), NULL, c->user, &u, &err) != 0 ||
	    json_is_true(json_object_get(json_object_get(u, "spec"), "disabled"))) {
		json_decref(u);
		c->ok = false;
		rz_auth_login_failed(c->s->auth, c->user, c->ip);
		login_refused(c);
		return;
	}
	role =
	    rz_role_parse(json_string_value(json_object_get(json_object_get(u, "spec"), "role")));
	if (rz_auth_issue(c->s->auth, c->user, role, &token, &p, &err) == 0) {
		rz_access_set_principal(c->req, &p); /* the audit row names who logged in */
	}
	rz_auth_login_succeeded(c->s->auth, c->user, c->ip);
	if (token == NULL ||
	    (wrc = write_user(c->s, c->req, c->user, true, c->rehashed ? c->new_hash : NULL, NULL,
	                      &err)) != 0) {
		json_t *disk = storage_status(c->s, wrc); /* the session row too */
		rz_log_err("auth", "login of '%s' failed: %s", c->user, err.msg);
		if (disk != NULL) { /* a full or failing disk: what writes answer there too */
			rz_reply_status(c->req, disk);
		} else {
			rz_reply_error(c->req, 500, NULL, "internal error; see the server log");
		}
	} else {
		rz_logkv(RZ_LOG_INFO, "auth", "login", "user", c->user, "source", c->ip, NULL);
		t = (time_t)p.exp;
		gmtime_r(&t, &tm);
		strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		rz_reply_json(c->req, 200,
		              json_pack("{s:s, s:s, s:{s:s, s:s, s:b}}", "token", token,
		                        "expiresAt", exp, "user", "name", c->user, "role",
		                        rz_role_name(role), "mustChangePassword",
		                        json_is_true(json_object_get(json_object_get(u, "status"),
		                                                     "mustChangePassword"))));
	}
	if (token != NULL) {
		sodium_memzero(token, strlen(token));
		free(token);
	}
	json_decref(u);
	check_free(c);
}

static void login_done(void *arg, int canceled)
{
	struct check *c = arg;
	struct timeval tv;

	gate_leave(c); /* the next check may run */
	if (canceled) {
		rz_auth_login_abandoned(c->s->auth, c->user, c->ip);
		rz_reply_error(c->req, 503, NULL, "shutting down");
		check_free(c);
		return;
	}
	if (c->ok) {
		login_granted(c);
		return;
	}
	/* counted as soon as it is known, not after the delay */
	rz_auth_login_failed(c->s->auth, c->user, c->ip);
	if (rz_req_log_sample(c->req)) { /* sampled per address, like the request lines */
		rz_logkv(RZ_LOG_INFO, "auth", "login refused", "user", c->user, "source", c->ip,
		         NULL);
	}
	if (c->delay_ms > 0 && (c->timer = evtimer_new(c->s->base, on_delay, c)) != NULL) {
		tv.tv_sec = c->delay_ms / 1000;
		tv.tv_usec = (c->delay_ms % 1000) * 1000;
		evtimer_add(c->timer, &tv); /* a failure answers slower the more there were */
	} else {
		login_refused(c);
	}
}

/* A JSON object body; replies 400/415 (without quoting the body: it holds passwords). */
static json_t *credentials_body(rz_req_t *req)
{
	const char *ctype = rz_req_header(req, "Content-Type");
	size_t len;
	const char *body = rz_req_body(req, &len);
	json_t *j;

	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0) {
		rz_reply_error(req, 415, NULL, "%s requests take application/json",
		               rz_req_path(req));
		return NULL;
	}
	j = json_loadb(body, len, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		rz_reply_error(req, 400, NULL, "the body must be a JSON object");
		return NULL;
	}
	return j;
}

static struct check *check_new(rz_session_t *s, rz_req_t *req, const char *user,
                               const char *password)
{
	struct check *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->password = strdup(password)) == NULL) {
		free(c);
		rz_reply_error(req, 500, NULL, "out of memory");
		return NULL;
	}
	c->s = s;
	c->req = req;
	snprintf(c->user, sizeof(c->user), "%s", user);
	snprintf(c->ip, sizeof(c->ip), "%s", rz_access_source_ip(s->access, req));
	rz_auth_addr_key(c->ip, c->addr);
	stored_hash(s->db, c->user, c->hash);
	return c;
}

/* Reserve an attempt with the limiter, or answer 429: true when refused. */
static bool throttled(rz_session_t *s, rz_req_t *req, const char *user, int64_t *delay)
{
	int64_t retry = 0;
	char after[24];

	if (rz_auth_throttle(s->auth, user, rz_access_source_ip(s->access, req), delay, &retry) ==
	    0) {
		return false;
	}
	snprintf(after, sizeof(after), "%lld", (long long)retry);
	rz_req_add_header(req, "Retry-After", after);
	rz_access_audit(s->access, req, 429, user, "too many failed logins", NULL, NULL);
	rz_req_set_audited(req);
	rz_reply_error(req, 429, NULL, "too many failed logins; try again in %s s", after);
	return true;
}

static void handle_login(rz_req_t *req, void *ctx)
{
	rz_session_t *s = ctx;
	json_t *body = credentials_body(req);
	const char *user, *password;
	int64_t delay = 0;
	struct check *c;

	if (body == NULL) {
		return;
	}
	user = json_string_value(json_object_get(body, "username"));
	password = json_string_value(json_object_get(body, "password"));
	if (user == NULL || password == NULL || *user == '\0' || strlen(user) > 63) {
		json_decref(body);
		rz_reply_error(req, 400, NULL, "username and password are required");
		return;
	}
	if (throttled(s, req, user, &delay)) {
		json_decref(body);
		return;
	}
	c = check_new(s, req, user, password);
	json_decref(body);
	if (c == NULL) {
		rz_auth_login_abandoned(s->auth, user, rz_access_source_ip(s->access, req));
		return;
	}
	c->delay_ms = delay;
	c->done = login_done;
	gate_enter(c);
}

/* ------------------------------------------------------------------ logout, whoami */

struct logout {
	rz_session_t *s;
	rz_req_t *req;
	const rz_principal_t *p;
};

static int logout_tx(rz_db_t *db, void *arg, rz_err_t *err)
{
	struct logout *l = arg;
	int rc = rz_auth_revoke(l->s->auth, l->p->jti, l->p->exp, err);

	return rc != 0 ? rc : rz_access_audit(l->s->access, l->req, 200, NULL, NULL, NULL, err);
}

static void handle_logout(rz_req_t *req, void *ctx)
{
	rz_session_t *s = ctx;
	struct logout l = { s, req, rz_access_principal(req) };
	rz_err_t err = { 0 };

	if (l.p == NULL || l.p->jti[0] == '\0') {
		rz_reply_error(req, 400, NULL,
		               "logout ends sessions; revoke an API token with DELETE "
		               "/api/v1/users/{user}/tokens/{id}");
		return;
	}
	if (rz_db_tx(s->db, logout_tx, &l, &err) != 0) {
		rz_log_err("auth", "logout failed: %s", err.msg);
		rz_reply_error(req, 500, NULL, "internal error; see the server log");
		return;
	}
	rz_req_set_audited(req);
	rz_reply_status(req, rz_status_new(200, "", "logged out"));
}

static bool sso_user(rz_session_t *s, const char *user);

/* Who the credentials are: also the user's groups (what AccessBindings name) and whether it
 * signs in by single sign-on (then it has no password here). */
static void handle_whoami(rz_req_t *req, void *ctx)
{
	const rz_principal_t *p = rz_access_principal(req);
	json_t *groups = json_array();
	json_t *o;

	for (size_t i = 0; i < p->ngroups; i++) {
		json_array_append_new(groups, json_string(p->groups[i]));
	}
	o = json_pack("{s:s, s:s, s:b, s:o, s:b}", "user", p->user, "role", rz_role_name(p->role),
	              "mustChangePassword", p->must_change_password, "groups", groups,
	              "singleSignOn", sso_user(ctx, p->user));

	if (p->token_id[0] != '\0') {
		json_object_set_new(o, "tokenId", json_string(p->token_id));
	}
	if (p->exp > 0) {
		char exp[32];
		time_t t = (time_t)p->exp;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_object_set_new(o, "expiresAt", json_string(exp));
	}
	rz_reply_json(req, 200, o);
}

/* ------------------------------------------------------------------ password change */

static void password_done(void *arg, int canceled)
{
	struct check *c = arg;
	rz_err_t err = { 0 };
	int wrc;

	gate_leave(c);
	if (canceled) {
		rz_auth_login_abandoned(c->s->auth, c->user, c->ip);
		rz_reply_error(c->req, 503, NULL, "shutting down");
	} else if (!c->ok) {
		rz_auth_login_failed(c->s->auth, c->user, c->ip);
		rz_reply_error(c->req, 403, NULL, "the current password is not correct");
	} else if (rz_auth_login_abandoned(c->s->auth, c->user, c->ip), !c->rehashed) {
		rz_reply_error(c->req, 500, NULL, "password hashing failed");
	} else if ((wrc = write_user(c->s, c->req, c->user, false, c->new_hash, c->keep_jti,
	                             &err)) != 0) {
		json_t *disk = storage_status(c->s, wrc);
		rz_log_err("auth", "password change of '%s' failed: %s", c->user, err.msg);
		if (disk != NULL) {
			rz_reply_status(c->req, disk);
		} else {
			rz_reply_error(c->req, 500, NULL, "internal error; see the server log");
		}
	} else {
		rz_reply_status(
		    c->req,
		    rz_status_new(200, "", "password changed; the user's other sessions ended"));
	}
	check_free(c);
}

/* Whether user was made by single sign-on (User.spec.identity): it has no password. */
static bool sso_user(rz_session_t *s, const char *user)
{
	json_t *u = NULL;
	bool sso = rz_store_get(s->store, rz_kind_by_name("User"), NULL, user, &u, NULL) == 0 &&
	           json_object_get(json_object_get(u, "spec"), "identity") != NULL;

	json_decref(u);
	return sso;
}

static void handle_password(rz_req_t *req, void *ctx)
{
	rz_session_t *s = ctx;
	const rz_principal_t *p = rz_access_principal(req);
	json_t *body = credentials_body(req);
	const char *cur, *next;
	int64_t delay = 0;
	struct check *c;

	if (body == NULL) {
		return;
	}
	if (sso_user(s, p->user)) {
		json_decref(body);
		rz_reply_error(req, 403, NULL,
		               "'%s' signs in with single sign-on and has no password here: change "
		               "it at the sign-in provider",
		               p->user);
		return;
	}
	cur = json_string_value(json_object_get(body, "currentPassword"));
	next = json_string_value(json_object_get(body, "newPassword"));
	if (cur == NULL || next == NULL || strlen(next) < 8 || strlen(next) > 1024) {
		json_decref(body);
		rz_reply_error(
		    req, 422, "Invalid",
		    "currentPassword and newPassword (8 to 1024 characters) are required");
		return;
	}
	if (strcmp(cur, next) == 0) {
		/* a one-time password kept would stay valid for good */
		json_t *st =
		    rz_status_new(422, "Invalid",
		                  "newPassword: Invalid value: must differ from the current "
		                  "password");
		json_decref(body);
		rz_status_add_cause(st, "newPassword", "FieldValueInvalid",
		                    "must differ from the current password");
		rz_reply_status(req, st);
		return;
	}
	if (throttled(s, req, p->user, &delay)) {
		json_decref(body);
		return;
	}
	c = check_new(s, req, p->user, cur);
	if (c != NULL && (c->new_password = strdup(next)) == NULL) {
		check_free(c);
		c = NULL;
		rz_reply_error(req, 500, NULL, "out of memory");
	}
	json_decref(body);
	if (c == NULL) {
		rz_auth_login_abandoned(s->auth, p->user, rz_access_source_ip(s->access, req));
		return;
	}
	snprintf(c->keep_jti, sizeof(c->keep_jti), "%s", p->jti);
	c->done = password_done;
	gate_enter(c);
}

/* ------------------------------------------------------------------ module */

int rz_session_new(rz_session_t **out, rz_auth_t *auth, rz_access_t *access, rz_store_t *store,
                   rz_db_t *db, rz_workers_t *workers, struct event_base *base, rz_err_t *err)
{
	rz_session_t *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s == NULL) {
		return rz_err_set(err, -ENOMEM, "session: out of memory");
	}
	s->auth = auth;
	s->access = access;
	s->store = store;
	s->db = db;
	s->workers = workers;
	s->base = base;
	*out = s;
	return 0;
}

uint64_t rz_session_busy_refusals(const rz_session_t *s)
{
	return s != NULL ? s->busy_refusals : 0;
}

void rz_session_free(rz_session_t *s)
{
	if (s == NULL) {
		return;
	}
	while (s->head != NULL) { /* waiting checks; running ones ended with the pool */
		struct check *c = s->head;
		gate_leave(c);
		check_free(c);
	}
	free(s);
}

/* For the OpenAPI document (core/api/openapi.c). */
static const int login_errors[] = { 400, 401, 415, 429, 0 };
static const int password_errors[] = { 400, 403, 415, 422, 429, 0 };
static const rz_route_doc_t login_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "login",
	  .summary = "log in: a session token for a username and password",
	  .request = "{\"type\":\"object\",\"required\":[\"username\",\"password\"],"
	             "\"properties\":{\"username\":{\"type\":\"string\",\"maxLength\":63,"
	             "\"description\":\"The user's name\"},\"password\":{\"type\":\"string\","
	             "\"format\":\"password\",\"description\":\"The user's password\"}}}",
	  .response = "{\"type\":\"object\",\"required\":[\"token\",\"expiresAt\",\"user\"],"
	              "\"properties\":{\"token\":{\"type\":\"string\",\"description\":\"The "
	              "session token: send it as Authorization: Bearer <token> until expiresAt\"},"
	              "\"expiresAt\":{\"type\":\"string\",\"format\":\"date-time\","
	              "\"description\":\"When the session (or the token in use) expires (RFC 3339, "
	              "UTC); absent for a token that never expires\"},"
	              "\"user\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
	              "\"description\":\"The user's name\"},\"role\":{\"type\":\"string\","
	              "\"description\":\"The user's role on the installation: none, view, edit or "
	              "admin\"},\"mustChangePassword\":{\"type\":\"boolean\",\"description\":\"The "
	              "user must change the password (POST /api/v1/auth/password) before anything "
	              "else\"}},\"description\":\"Who signed in\"}}}",
	  .errors = login_errors },
	{ 0 },
};
static const rz_route_doc_t logout_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "logout",
	  .summary = "log out: the session ends",
	  .response = "Status" },
	{ 0 },
};
static const rz_route_doc_t whoami_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "whoami",
	  .summary = "who the credentials are: user, role, groups, single sign-on, token",
	  .response = "{\"type\":\"object\",\"properties\":{\"user\":{\"type\":\"string\","
	              "\"description\":\"Who signed in\"},\"role\":{\"type\":\"string\","
	              "\"description\":\"The role the request acts with: none, view, edit or admin "
	              "(a token's may be below its user's)\"},"
	              "\"mustChangePassword\":{\"type\":\"boolean\",\"description\":\"The user "
	              "must change the password before anything else\"},"
	              "\"groups\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	              "\"description\":\"The user's groups (spec.groups, or what single sign-on "
	              "said), which AccessBindings may name\"},"
	              "\"singleSignOn\":{\"type\":\"boolean\",\"description\":\"The user signed in "
	              "through single sign-on (has no password)\"},"
	              "\"tokenId\":{\"type\":\"string\",\"description\":\"The API token in use "
	              "(its name), when the request carries one rather than a session\"},"
	              "\"expiresAt\":{\"type\":\"string\",\"format\":\"date-time\","
	              "\"description\":\"When the session (or the token in use) expires (RFC 3339, "
	              "UTC); absent for a token that never expires\"}}}" },
	{ 0 },
};
static const rz_route_doc_t password_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "changePassword",
	  .summary = "change one's password; the user's other sessions end",
	  .request = "{\"type\":\"object\",\"required\":[\"currentPassword\",\"newPassword\"],"
	             "\"properties\":{\"currentPassword\":{\"type\":\"string\","
	             "\"format\":\"password\",\"description\":\"The password the user has now\"},"
	             "\"newPassword\":{\"type\":\"string\",\"format\":\"password\","
	             "\"minLength\":8,\"maxLength\":1024,\"description\":\"The new password, 8 to "
	             "1024 characters\"}}}",
	  .response = "Status",
	  .errors = password_errors },
	{ 0 },
};

static const rz_route_t session_routes[] = {
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/auth/login",
	  .fn = handle_login,
	  .role = RZ_ROLE_PUBLIC,
	  .verb = "login",
	  .doc = login_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/auth/logout",
	  .fn = handle_logout,
	  .role = RZ_ROLE_NONE,
	  .verb = "logout",
	  .doc = logout_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/auth/whoami",
	  .fn = handle_whoami,
	  .role = RZ_ROLE_NONE,
	  .verb = "whoami",
	  .doc = whoami_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/auth/password",
	  .fn = handle_password,
	  .role = RZ_ROLE_NONE,
	  .verb = "change-password",
	  .doc = password_doc },
};

int rz_session_routes(rz_session_t *s, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(session_routes), s, err);
}

/* ------------------------------------------------------------------ the first admin */

static bool any_user(rz_store_t *store)
{
	rz_list_opts_t o = { .limit = 1 };
	json_t *items = NULL;
	bool more, any;
	rz_err_t err = { 0 };

	if (rz_store_list(store, rz_kind_by_name("User"), &o, &items, &more, &err) != 0) {
		return true; /* cannot tell: create nobody */
	}
	any = json_array_size(items) > 0;
	json_decref(items);
	return any;
}

/* A one-time password: 128 random bits, URL-safe base64 (22 characters). */
static void one_time_password(char out[RZ_ONE_TIME_PASSWORD_SIZE])
{
	unsigned char raw[16];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(out, RZ_ONE_TIME_PASSWORD_SIZE, raw, sizeof(raw),
	                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
}

int rz_session_bootstrap(rz_store_t *store, rz_db_t *db, const char *password, char *generated,
                         size_t size, rz_err_t *err)
{
	const rz_kind_t *k = rz_kind_by_name("User");
	char hash[RZ_PASSWORD_HASH_LEN];
	struct new_hash h = { hash, NULL };
	rz_write_hook_t cred = { credentials_hook, &h, NULL };
	json_t *obj, *out = NULL;
	int rc;

	(void)db;
	if (size > 0) {
		generated[0] = '\0';
	}
	if (any_user(store)) {
		if (password != NULL) {
			rz_log(RZ_LOG_NOTICE, "auth",
			       "the configured admin password (REZUSCLOUD_ADMIN_PASSWORD or "
			       "auth.admin_password_file) is ignored: it sets the first admin's "
			       "password only, and users exist already (a signed-in user changes "
			       "a password with rezusctl password; rezuscloud admin reset-password "
			       "makes a new one-time password offline)");
		}
		return 0;
	}
	if (password == NULL) {
		if (size < RZ_ONE_TIME_PASSWORD_SIZE) {
			return rz_err_set(err, -EINVAL, "auth: no room for the one-time password");
		}
		one_time_password(generated);
	}
	if (rz_auth_hash_password(password ? password : generated, hash) != 0) {
		return rz_err_set(err, -ENOMEM, "auth: cannot hash the admin password");
	}
	obj =
	    json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:b}}", "apiVersion", RZ_API_VERSION, "kind",
	              "User", "metadata", "name", "admin", "spec", "role", "admin", "disabled", 0);
	rc = rz_store_create(store, k, obj, &cred, &out, err);
	json_decref(obj);
	if (rc == 0 && password == NULL) {
		json_object_set_new(out, "status", json_pack("{s:b}", "mustChangePassword", 1));
		rc = rz_store_update(store, k, NULL, "admin", out, 0, RZ_UPDATE_STATUS, NULL, &obj,
		                     NULL, err);
		json_decref(obj);
		if (rc == 0) { /* the password itself: in the daemon's ready lines */
			rz_log(
			    RZ_LOG_NOTICE, "auth",
			    "created user 'admin' with a generated password, shown once the daemon "
			    "is ready (it must be changed at the first login)");
		}
	} else if (rc == 0) {
		rz_log(RZ_LOG_NOTICE, "auth", "created user 'admin' with the configured password");
	}
	if (rc != 0 && size > 0) {
		sodium_memzero(generated, size);
	}
	json_decref(out);
	sodium_memzero(hash, sizeof(hash));
	return rc;
}

struct reset {
	struct new_hash h;
	const char *detail;
};

/* The new hash, the end of every session and the audit row of a reset: one transaction. */
static int reset_hook(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone, void *arg,
                      rz_err_t *err)
{
	const struct reset *r = arg;
	const char *user =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	const rz_audit_entry_t e = {
		.user = "rezuscloud admin reset-password",
		.role = "admin",
		.source_ip = "local",
		.method = "-",
		.path = "",
		.verb = "reset-password",
		.kind = "User",
		.name = user,
		.detail = r->detail,
		.code = 200,
	};
	int rc = credentials_hook(db, k, obj, gone, (void *)&r->h, err);

	if (rc == 0) {
		rc = rz_auth_end_sessions(db, user, "", err);
	}
	return rc == 0 ? rz_audit_insert(db, &e, err) : rc;
}

int rz_session_reset_password(rz_store_t *store, rz_db_t *db, const char *user, char *password,
                              size_t size, bool *enabled, rz_err_t *err)
{
	const rz_kind_t *k = rz_kind_by_name("User");
	char hash[RZ_PASSWORD_HASH_LEN];
	struct reset r = { { hash, NULL }, NULL };
	json_t *u = NULL, *spec, *status, *out = NULL;
	int rc;

	(void)db;
	*enabled = false;
	if (size < RZ_ONE_TIME_PASSWORD_SIZE) {
		return rz_err_set(err, -EINVAL, "auth: no room for the one-time password");
	}
	if ((rc = rz_store_get(store, k, NULL, user, &u, err)) != 0) {
		return rc;
	}
	spec = json_object_get(u, "spec");
	if (json_object_get(spec, "identity") != NULL) {
		json_decref(u);
		return rz_err_set(err, -EINVAL,
		                  "'%s' signs in with single sign-on and has no password here",
		                  user);
	}
	one_time_password(password);
	if (rz_auth_hash_password(password, hash) != 0) {
		json_decref(u);
		sodium_memzero(password, size);
		return rz_err_set(err, -ENOMEM, "auth: cannot hash the password");
	}
	if (json_is_true(json_object_get(spec, "disabled"))) {
		/* the reset is how an operator gets back in: a disabled user could not */
		json_object_set_new(spec, "disabled", json_false());
		rc = rz_store_update(store, k, NULL, user, u, 0, RZ_UPDATE_SPEC, NULL, &out, NULL,
		                     err);
		json_decref(u);
		u = out;
		out = NULL;
		*enabled = rc == 0;
	}
	if (rc == 0) {
		rz_write_hook_t hook = { reset_hook, &r, NULL };
		r.detail = *enabled ? "one-time password set; sessions ended; enabled again"
		                    : "one-time password set; sessions ended";
		status = json_object_get(u, "status");
		if (!json_is_object(status)) {
			status = json_object();
			json_object_set_new(u, "status", status);
		}
		json_object_set_new(status, "mustChangePassword", json_true());
		rc = rz_store_update(store, k, NULL, user, u, 0, RZ_UPDATE_STATUS, &hook, &out,
		                     NULL, err);
	}
	if (rc != 0) {
		sodium_memzero(password, size);
	}
	json_decref(out);
	json_decref(u);
	sodium_memzero(hash, sizeof(hash));
	return rc;
}
