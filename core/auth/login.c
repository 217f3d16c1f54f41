/* core/auth/login.c - password hashes (Argon2id, libsodium) and login throttling: failures
 * per user and address, then per address when the pairs' table is full of locks. */
#include <config.h>

#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/auth/auth-int.h"
#include "core/base/log.h"

static int64_t now_s(void)
{
	return rz__auth_now_s();
}

/* ------------------------------------------------------------------ passwords */

/* The cost of new hashes: libsodium's interactive limits; the unit tests lower it. */
static unsigned long long pw_opslimit = crypto_pwhash_OPSLIMIT_INTERACTIVE;
static size_t pw_memlimit = crypto_pwhash_MEMLIMIT_INTERACTIVE;

void rz_auth_set_password_cost(unsigned long long opslimit, size_t memlimit)
{
	pw_opslimit = opslimit;
	pw_memlimit = memlimit;
}

int rz_auth_hash_password(const char *password, char out[RZ_PASSWORD_HASH_LEN])
{
	if (crypto_pwhash_str(out, password, strlen(password), pw_opslimit, pw_memlimit) != 0) {
		return -ENOMEM;
	}
	return 0;
}

bool rz_auth_check_password(const char *hash, const char *password)
{
	return hash != NULL && crypto_pwhash_str_verify(hash, password, strlen(password)) == 0;
}

int rz_auth_store_hash(rz_db_t *db, const char *user, const char *hash, rz_err_t *err)
{
	static const char sql[] = "INSERT INTO credentials (user, hash) VALUES (?1, ?2)"
	                          " ON CONFLICT (user) DO UPDATE SET hash = excluded.hash";
	rz_stmt_t *s = rz_db_stmt(db, sql, err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, user);
	rz_stmt_bind_text(s, 2, hash);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

bool rz_auth_needs_rehash(const char *hash)
{
	return crypto_pwhash_str_needs_rehash(hash, pw_opslimit, pw_memlimit) != 0;
}

/* ------------------------------------------------------------------ throttling */

const rz_login_limits_t *rz_auth_login_limits(const rz_auth_t *a)
{
	return &a->limits;
}

void rz_auth_addr_key(const char *ip, char out[RZ_ADDR_KEY_LEN])
{
	struct in6_addr a6;
	char text[INET6_ADDRSTRLEN];

	if (ip != NULL && strchr(ip, ':') != NULL && inet_pton(AF_INET6, ip, &a6) == 1 &&
	    !IN6_IS_ADDR_V4MAPPED(&a6)) {
		memset(a6.s6_addr + 8, 0, 8); /* one site holds a /64: it counts as one address */
		inet_ntop(AF_INET6, &a6, text, sizeof(text));
		snprintf(out, RZ_ADDR_KEY_LEN, "%s/64", text);
		return;
	}
	snprintf(out, RZ_ADDR_KEY_LEN, "%s", ip ? ip : "");
}

static bool locked(const struct throttle *t, int64_t now)
{
	return t->locked_until > now;
}

/* May the entry make room for another? Never while it is locked or has attempts under way:
 * a lock holds until it expires, whatever else fails meanwhile. */
static bool evictable(const struct throttle *t, int64_t now)
{
	return t->pending == 0 && !locked(t, now);
}

static struct throttle *find(struct throttle *tab, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (tab[i].key[0] != '\0' && strcmp(tab[i].key, key) == 0) {
			return &tab[i];
		}
	}
	return NULL;
}

/* A slot for key in tab: a free one, else the evictable one used longest ago; NULL when every
 * slot is locked or busy. *soonest gets the earliest time a lock ends. */
static struct throttle *claim(struct throttle *tab, size_t n, const char *key, int64_t now,
                              int64_t *soonest)
{
	struct throttle *pick = NULL;

	for (size_t i = 0; i < n; i++) {
		struct throttle *t = &tab[i];
		if (t->key[0] == '\0') {
			pick = t;
			break;
		}
		if (evictable(t, now) && (pick == NULL || t->last < pick->last)) {
			pick = t;
		}
		if (locked(t, now) && (*soonest == 0 || t->locked_until < *soonest)) {
			*soonest = t->locked_until;
		}
	}
	if (pick != NULL) {
		memset(pick, 0, sizeof(*pick));
		snprintf(pick->key, sizeof(pick->key), "%s", key);
	}
	return pick;
}

static void pair_key(char *key, size_t size, const char *user, const char *ip)
{
	snprintf(key, size, "%s\n%s", user ? user : "", ip ? ip : "");
}

/* The entry an attempt by (user, ip) was reserved on: its own, or — when the table could not
 * hold it — its address's. */
static struct throttle *entry_of(rz_auth_t *a, const char *user, const char *ip)
{
	char key[160], addr[RZ_ADDR_KEY_LEN];
	struct throttle *t, *at;

	pair_key(key, sizeof(key), user, ip);
	rz_auth_addr_key(ip, addr);
	t = find(a->slots, THROTTLE_SLOTS, key);
	at = find(a->addrs, ADDR_SLOTS, addr);
	if (t != NULL && t->pending > 0) {
		return t;
	}
	if (at != NULL && at->pending > 0) {
		return at;
	}
	return t != NULL ? t : at;
}

/* Refuse: locked (or a check under way would reach the lock). */
static int refuse(const struct throttle *t, int64_t now, int64_t *retry_after)
{
	*retry_after = locked(t, now) ? t->locked_until - now : 1;
	return -EAGAIN;
}

static int throttle(rz_auth_t *a, const char *user, const char *ip, int64_t *delay_ms,
                    int64_t *retry_after)
{
	char key[160], addr[RZ_ADDR_KEY_LEN];
	int64_t now = now_s(), soonest = 0;
	struct throttle *t, *at;

	*delay_ms = 0;
	*retry_after = 0;
	pair_key(key, sizeof(key), user, ip);
	rz_auth_addr_key(ip, addr);
	at = find(a->addrs, ADDR_SLOTS, addr);
	if (at != NULL && locked(at, now)) {
		return refuse(at, now, retry_after); /* the address is locked as a whole */
	}
	t = find(a->slots, THROTTLE_SLOTS, key);
	if (t == NULL && (t = claim(a->slots, THROTTLE_SLOTS, key, now, &soonest)) == NULL) {
		/* every slot holds a lock or a check: count against the address instead */
		t = at != NULL ? at : claim(a->addrs, ADDR_SLOTS, addr, now, &soonest);
	}
	if (t == NULL) { /* both tables full of locks: refuse unknown pairs until one ends */
		*retry_after = soonest > now ? soonest - now : 1;
		return -EAGAIN;
	}
	if (t->pending == 0 && !locked(t, now) && t->last < now - LOCK_MAX_S) {
		t->failures = 0; /* quiet for long enough: forgiven */
	}
	if (locked(t, now) || t->failures + t->pending >= LOCK_AFTER) {
		return refuse(t, now, retry_after);
	}
	if (t->failures > FREE_FAILURES) {
		int shift = t->failures - FREE_FAILURES;
		*delay_ms = shift >= 4 ? 4000 : 250LL << shift;
	}
	t->pending++; /* counted now, before the password is hashed */
	t->last = now;
	return 0;
}

int rz_auth_throttle(rz_auth_t *a, const char *user, const char *ip, int64_t *delay_ms,
                     int64_t *retry_after)
{
	int rc = throttle(a, user, ip, delay_ms, retry_after);

	a->stats.throttled += rc == -EAGAIN;
	return rc;
}

void rz_auth_stats(const rz_auth_t *a, rz_auth_stats_t *out)
{
	rz_bindings_stats_t b = { 0 };

	*out = a->stats;
	if (a->bindings != NULL) {
		rz_bindings_stats(a->bindings, &b);
	}
	out->decisions_evaluated = b.evaluated;
	out->decisions_remembered = b.remembered;
	out->classes = b.classes;
	out->decisions = b.decisions;
}

void rz_auth_login_failed(rz_auth_t *a, const char *user, const char *ip)
{
	struct throttle *t = entry_of(a, user, ip);
	int64_t now = now_s();

	a->stats.login_failures++;
	if (t == NULL) {
		return; /* not reserved with rz_auth_throttle() */
	}
	t->pending -= t->pending > 0;
	t->failures++;
	t->last = now;
	if (t->failures >= LOCK_AFTER) {
		int shift = t->failures - LOCK_AFTER;
		int64_t lock = shift >= 5 ? LOCK_MAX_S : 30LL << shift;
		t->locked_until = now + (lock > LOCK_MAX_S ? LOCK_MAX_S : lock);
	}
}

void rz_auth_login_succeeded(rz_auth_t *a, const char *user, const char *ip)
{
	struct throttle *t = entry_of(a, user, ip);

	if (t == NULL) {
		return;
	}
	t->pending -= t->pending > 0;
	if (strchr(t->key, '\n') == NULL) {
		return; /* an address's entry: one good password does not forgive the others */
	}
	t->failures = 0;
	t->locked_until = 0;
	if (t->pending == 0) {
		memset(t, 0, sizeof(*t));
	}
}

void rz_auth_login_abandoned(rz_auth_t *a, const char *user, const char *ip)
{
	struct throttle *t = entry_of(a, user, ip);

	if (t != NULL) {
		t->pending -= t->pending > 0;
	}
}
