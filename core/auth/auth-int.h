/* core/auth/auth-int.h - what the files of the auth module share: the state of rz_auth_t
 * (sessions and tokens remembered, users known, run grants, login throttling). Not for other
 * modules: core/auth/auth.h is their interface. */
#ifndef RZ_AUTH_INT_H
#define RZ_AUTH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/auth/auth.h"
#include "core/auth/bindings.h"

#define SECRET_FILE      "jwt.secret"
#define SECRET_MIN       32
#define SECRET_GENERATED 64
#define SECRET_MAX       4096
#define THROTTLE_SLOTS   RZ_LOGIN_PAIRS
#define ADDR_SLOTS       RZ_LOGIN_ADDRESSES
#define FREE_FAILURES    3 /* failures answered without delay */
#define LOCK_AFTER       6 /* failures after which attempts get 429 */
#define LOCK_MAX_S       900

struct throttle {
	char key[160]; /* user \n ip, or an address key; "" = free slot */
	int failures;
	int pending;          /* password checks under way, counted as failures until done */
	int64_t last;         /* seconds */
	int64_t locked_until; /* seconds */
};

/* Sessions whose signature and claims were verified, so the next request with the same
 * token skips the cryptography (revocation and the user are still checked each time). */
struct verified {
	unsigned char key[16]; /* BLAKE2b of the token */
	char user[64];
	char jti[40];
	int64_t exp;
	/* the session found live while no session ended and no user changed since (the two
	 * generations then): no database read per request of a session in use */
	uint64_t live_sessions, live_users;
};

/* Users as last read from the store; gen invalidates them on any change of a user. */
struct known_user {
	char name[64];
	char uid[64]; /* metadata.uid: who the name belongs to now */
	uint64_t gen;
	int role;
	bool disabled, must_change;
	char groups[RZ_USER_GROUPS_MAX][64];
	size_t ngroups;
};

#define VERIFIED_SLOTS 512
#define TOKEN_SLOTS    64 /* API tokens in use remembered, by the hash of their secret */
#define TOKEN_MEMO_S   60 /* ... for at most this long: lastUsed is recorded a minute apart */

/* An API token found good, with the principal it makes: used again while no token and no
 * user changed (the generations then) and for at most TOKEN_MEMO_S, so that a token in use
 * costs no database read per request. */
struct token_memo {
	unsigned char key[16]; /* BLAKE2b of the secret */
	uint64_t tokens, users;
	int64_t since;
	rz_principal_t p;
};
#define RUN_GRANTS 256

/* A run's secret: lets tofu reach one tenant's state while the run lasts. */
struct grant {
	char hash[RZ_HASH_HEX_LEN + 1];
	char tenant[64];
	char run[64];
	bool kept; /* its hash is in run_grants too: it outlives a restart */
};
#define USER_SLOTS 256

struct rz_auth {
	rz_db_t *db;
	rz_store_t *store;
	rz_bus_t *bus;
	rz_bindings_t *bindings; /* AccessBindings: roles on some tenants */
	uint64_t sub;
	uint64_t user_gen;
	uint64_t token_gen; /* bumped when an APIToken is made, changed or revoked (not used) */
	struct verified verified[VERIFIED_SLOTS];
	struct token_memo tokens[TOKEN_SLOTS];
	struct known_user users[USER_SLOTS];
	struct grant grants[RUN_GRANTS];
	unsigned char secret[SECRET_MAX];
	size_t secret_len;
	int64_t ttl_s;
	rz_login_limits_t limits;
	struct throttle slots[THROTTLE_SLOTS];
	struct throttle addrs[ADDR_SLOTS]; /* per address, when slots is full of locks */
	rz_auth_stats_t stats;
};

static inline int64_t rz__auth_now_s(void)
{
	return (int64_t)time(NULL);
}

#endif /* RZ_AUTH_INT_H */
