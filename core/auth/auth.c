/* core/auth/auth.c - sessions (HS256 JWT), API tokens and run grants: who a request is.
 * Password hashes and login throttling are core/auth/login.c. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <jwt.h>

#include "core/auth/auth-int.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/model/fields.h"

/* Bumped whenever sessions end (logout, a password change, a user's deletion): every
 * memo of a live session is read again. One counter for the process: the sessions table
 * is the database's, whoever ends them. */
static uint64_t sessions_gen = 1;

static int64_t now_s(void)
{
	return rz__auth_now_s();
}

/* ------------------------------------------------------------------ derived keys */

void rz_auth_derive_key(const rz_auth_t *a, const char *purpose,
                        unsigned char out[RZ_DERIVED_KEY_LEN])
{
	crypto_generichash_state st;
	unsigned char key[crypto_generichash_KEYBYTES];

	/* the signing secret is never used as it is for anything but JWTs: hash it down first */
	crypto_generichash(key, sizeof(key), a->secret, a->secret_len, NULL, 0);
	crypto_generichash_init(&st, key, sizeof(key), RZ_DERIVED_KEY_LEN);
	crypto_generichash_update(&st, (const unsigned char *)"rezuscloud derived key\0", 23);
	crypto_generichash_update(&st, (const unsigned char *)purpose, strlen(purpose));
	crypto_generichash_final(&st, out, RZ_DERIVED_KEY_LEN);
	sodium_memzero(key, sizeof(key));
}

/* ------------------------------------------------------------------ roles */

int rz_role_parse(const char *s)
{
	if (s == NULL) {
		return 0;
	}
	if (strcmp(s, "none") == 0) {
		return RZ_ROLE_NONE;
	}
	if (strcmp(s, "view") == 0) {
		return RZ_ROLE_VIEW;
	}
	if (strcmp(s, "edit") == 0) {
		return RZ_ROLE_EDIT;
	}
	return strcmp(s, "admin") == 0 ? RZ_ROLE_ADMIN : 0;
}

const char *rz_role_name(int role)
{
	switch (role) {
	case RZ_ROLE_VIEW:
		return "view";
	case RZ_ROLE_EDIT:
		return "edit";
	case RZ_ROLE_ADMIN:
		return "admin";
	case RZ_ROLE_PUBLIC:
		return "anonymous";
	case RZ_ROLE_NONE:
		return "none";
	}
	return "unset";
}

/* ------------------------------------------------------------------ minting */

/* The most a credential of a user with this role may be given: the role, or for a user with
 * none on the installation admin (what it may do is still what its AccessBindings grant). */
static int mint_ceiling(int role)
{
	return role == RZ_ROLE_NONE ? RZ_ROLE_ADMIN : role;
}

void rz_auth_mint_check(const rz_principal_t *maker, int owner_role, json_t *spec, json_t *causes)
{
	const char *scope = json_string_value(json_object_get(spec, "scope"));
	const char *at = json_string_value(json_object_get(spec, "expiresAt"));
	int ceiling = mint_ceiling(owner_role);
	int want = rz_role_parse(json_string_value(json_object_get(spec, "role")));
	bool global_admin =
	    owner_role >= RZ_ROLE_ADMIN && (maker == NULL || maker->role >= RZ_ROLE_ADMIN);

	owner_role = ceiling;
	if (maker != NULL) {
		int m = mint_ceiling(maker->role);
		m = maker->cap != 0 && maker->cap < m ? maker->cap : m;
		ceiling = m < ceiling ? m : ceiling;
	}
	if (scope != NULL && strcmp(scope, "runner") == 0) {
		/* a runner's claims hand out any tenant's state: only an admin's token may */
		if (ceiling < RZ_ROLE_ADMIN || !global_admin) {
			rz_fields_cause(
			    causes, "spec.scope", RZ_CAUSE_FORBIDDEN,
			    "a runner token is an admin's: its owner and the credential "
			    "making it need the admin role (here: %s)",
			    rz_role_name(global_admin || ceiling < RZ_ROLE_ADMIN ? ceiling
			                                                         : RZ_ROLE_NONE));
		} else if (want != 0 && want != RZ_ROLE_ADMIN) {
			rz_fields_cause(causes, "spec.role", RZ_CAUSE_FORBIDDEN,
			                "a runner token has the admin role");
		}
	}
	if (want == 0) {
		json_object_set_new(spec, "role", json_string(rz_role_name(ceiling)));
	} else if (want > owner_role) {
		rz_fields_cause(causes, "spec.role", RZ_CAUSE_FORBIDDEN,
		                "must not exceed the owner's role (%s)", rz_role_name(owner_role));
	} else if (want > ceiling) {
		rz_fields_cause(causes, "spec.role", RZ_CAUSE_FORBIDDEN,
		                "must not exceed the role of the credential making it (%s)",
		                rz_role_name(ceiling));
	}
	if (maker == NULL || maker->token_id[0] == '\0' || maker->exp <= 0) {
		return;
	}
	if (at == NULL) {
		char buf[40];
		rz_clock_format(maker->exp * 1000, buf, sizeof(buf));
		json_object_set_new(spec, "expiresAt", json_string(buf));
	} else if (rz_clock_parse(at) > maker->exp * 1000) {
		char buf[40];
		rz_clock_format(maker->exp * 1000, buf, sizeof(buf));
		rz_fields_cause(causes, "spec.expiresAt", RZ_CAUSE_FORBIDDEN,
		                "must not be later than the expiry of the token making it (%s)",
		                buf);
	}
}

/* ------------------------------------------------------------------ the JWT secret */

static int read_secret(rz_auth_t *a, const char *path, rz_err_t *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		return rz_err_set(err, -errno, "auth: cannot read JWT secret '%s': %s", path,
		                  strerror(errno));
	}
	n = read(fd, a->secret, sizeof(a->secret));
	close(fd);
	if (n < 0) {
		return rz_err_set(err, -errno, "auth: cannot read JWT secret '%s'", path);
	}
	while (n > 0 && (a->secret[n - 1] == '\n' || a->secret[n - 1] == '\r')) {
		n--;
	}
	if (n < SECRET_MIN || n == (ssize_t)sizeof(a->secret)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "auth: JWT secret '%s' must hold %d to %d bytes (has %zd)", path,
		                  SECRET_MIN, SECRET_MAX - 1, n);
	}
	a->secret_len = (size_t)n;
	return 0;
}

/* Generate data_dir/jwt.secret on first start; reuse it afterwards. */
static int generated_secret(rz_auth_t *a, const char *data_dir, rz_err_t *err)
{
	char path[PATH_MAX];
	unsigned char raw[SECRET_GENERATED];
	char hex[SECRET_GENERATED * 2 + 2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", data_dir, SECRET_FILE);
	if (access(path, F_OK) == 0) {
		return read_secret(a, path, err);
	}
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(hex, sizeof(hex) - 1, raw, sizeof(raw));
	sodium_memzero(raw, sizeof(raw));
	strcat(hex, "\n");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex) || fsync(fd) < 0) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		sodium_memzero(hex, sizeof(hex));
		return rz_err_set(err, -e, "auth: cannot write JWT secret '%s': %s", path,
		                  strerror(e));
	}
	close(fd);
	sodium_memzero(hex, sizeof(hex));
	rz_log_info("auth", "generated a JWT signing secret in '%s'", path);
	return read_secret(a, path, err);
}

static void on_event(const rz_event_t *ev, void *arg)
{
	rz_auth_t *a = arg;

	if (strcmp(ev->kind->kind, "User") == 0) {
		a->user_gen++;
	} else if (strcmp(ev->kind->kind, "APIToken") == 0 && ev->spec_changed) {
		/* made, changed, being deleted or gone; its use (status.lastUsed, once a minute)
		 * changes nothing a request or an open watch decides by */
		a->token_gen++;
	} else if (strcmp(ev->kind->kind, "AccessBinding") == 0) {
		rz_bindings_changed(a->bindings);
	} else if (strcmp(ev->kind->kind, "Tenant") == 0) {
		rz_bindings_tenant_changed(a->bindings, ev->name);
	}
}

/* The grants a previous process kept (remote runs): their runners still hold the secrets. */
static int load_grants(rz_auth_t *a, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(a->db, "SELECT run, tenant, hash FROM run_grants", err);
	size_t i = 0;
	int rc;

	if (s == NULL) {
		return err->code;
	}
	while ((rc = rz_stmt_step(s, err)) == 1 && i < RUN_GRANTS) {
		struct grant *g = &a->grants[i++];
		snprintf(g->run, sizeof(g->run), "%s", rz_stmt_text(s, 0));
		snprintf(g->tenant, sizeof(g->tenant), "%s", rz_stmt_text(s, 1));
		snprintf(g->hash, sizeof(g->hash), "%s", rz_stmt_text(s, 2));
		g->kept = true;
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

int rz_auth_new(rz_auth_t **out, const rz_config_t *cfg, rz_db_t *db, rz_store_t *store,
                rz_bus_t *bus, rz_err_t *err)
{
	rz_auth_t *a;
	int rc;

	*out = NULL;
	if (sodium_init() < 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "auth: libsodium failed to initialise");
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		return rz_err_set(err, -ENOMEM, "auth: out of memory");
	}
	a->db = db;
	a->store = store;
	a->bus = bus;
	a->user_gen = 1;
	a->ttl_s = cfg->session_ttl_ms / 1000;
	a->limits =
	    (rz_login_limits_t){ cfg->login_checks > 0 ? cfg->login_checks : 2,
		                 cfg->login_checks_per_address > 0 ? cfg->login_checks_per_address
		                                                   : 2,
		                 cfg->login_queue >= 0 ? cfg->login_queue : 64 };
	if (cfg->jwt_secret_file != NULL && cfg->jwt_secret_file[0] != '\0') {
		rc = read_secret(a, cfg->jwt_secret_file, err);
	} else {
		rc = generated_secret(a, cfg->data_dir, err);
	}
	if (rc == 0) {
		rc = load_grants(a, err);
	}
	if (rc == 0 && rz_bindings_new(&a->bindings, store) != 0) {
		rc = rz_err_set(err, -ENOMEM, "auth: out of memory");
	}
	/* first: the watch hub asks who may see an event while it hands it on */
	if (rc == 0 && bus != NULL && (a->sub = rz_bus_subscribe_first(bus, on_event, a)) == 0) {
		rc = rz_err_set(err, -ENOMEM, "auth: out of memory");
	}
	if (rc != 0) {
		rz_auth_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void rz_auth_free(rz_auth_t *a)
{
	if (a != NULL) {
		if (a->sub != 0) {
			rz_bus_unsubscribe(a->bus, a->sub);
		}
		sodium_memzero(a->secret, sizeof(a->secret));
		sodium_memzero(a->verified, sizeof(a->verified));
		rz_bindings_free(a->bindings);
		free(a);
	}
}

int rz_auth_tenant_role(rz_auth_t *a, const rz_principal_t *p, const char *tenant)
{
	int bound;

	if (p->tenant_scope[0] != '\0' || p->runner_scope || a->bindings == NULL) {
		return RZ_ROLE_NONE;
	}
	bound = rz_bindings_role(a->bindings, p->user, (const char(*)[64])p->groups, p->ngroups,
	                         tenant);
	bound = p->cap != 0 && p->cap < bound ? p->cap : bound;
	return bound > p->role ? bound : p->role;
}

json_t *rz_auth_tenants(rz_auth_t *a, const rz_principal_t *p, int role)
{
	if (p->tenant_scope[0] != '\0' || p->runner_scope || a->bindings == NULL ||
	    (p->cap != 0 && p->cap < role)) {
		return json_array();
	}
	return rz_bindings_tenants(a->bindings, p->user, (const char(*)[64])p->groups, p->ngroups,
	                           role);
}

/* ------------------------------------------------------------------ sessions */

static struct known_user *known(rz_auth_t *a, const char *name, rz_err_t *err);

/* Record a session as the user's — by uid, not name: a user created later with the same
 * name is someone else. Deleting the user deletes the row. */
static int session_row(rz_auth_t *a, const rz_principal_t *p, rz_err_t *err)
{
	static const char sql[] =
	    "INSERT INTO sessions (user, uid, jti, exp) VALUES (?1, ?2, ?3, ?4)";
	struct known_user *k = known(a, p->user, err);
	rz_stmt_t *s;
	int rc;

	if (k == NULL) {
		return rz_err_set(err, RZ_EAUTH, "user '%s' does not exist", p->user);
	}
	if ((s = rz_db_stmt(a->db, sql, err)) == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, p->user);
	rz_stmt_bind_text(s, 2, k->uid);
	rz_stmt_bind_text(s, 3, p->jti);
	rz_stmt_bind_int64(s, 4, p->exp);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

int rz_auth_issue(rz_auth_t *a, const char *user, int role, char **token, rz_principal_t *p,
                  rz_err_t *err)
{
	jwt_t *jwt = NULL;
	unsigned char raw[16];
	int64_t now = now_s();
	char *enc = NULL;
	int rc = 0;

	*token = NULL;
	memset(p, 0, sizeof(*p));
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(p->jti, sizeof(p->jti), raw, sizeof(raw));
	snprintf(p->user, sizeof(p->user), "%s", user);
	p->role = role;
	p->cap = RZ_ROLE_ADMIN;
	p->exp = now + a->ttl_s;
	if (jwt_new(&jwt) != 0 || jwt_add_grant(jwt, "iss", RZ_JWT_ISSUER) != 0 ||
	    jwt_add_grant(jwt, "sub", user) != 0 ||
	    jwt_add_grant(jwt, "role", rz_role_name(role)) != 0 ||
	    jwt_add_grant_int(jwt, "iat", (long)now) != 0 ||
	    jwt_add_grant_int(jwt, "nbf", (long)now) != 0 ||
	    jwt_add_grant_int(jwt, "exp", (long)p->exp) != 0 ||
	    jwt_add_grant(jwt, "jti", p->jti) != 0 ||
	    jwt_set_alg(jwt, JWT_ALG_HS256, a->secret, (int)a->secret_len) != 0 ||
	    (enc = jwt_encode_str(jwt)) == NULL || (*token = strdup(enc)) == NULL) {
		rc = rz_err_set(err, -ENOMEM, "auth: cannot sign a session");
	}
	free(enc); /* libjwt 1.x allocates with the C allocator */
	jwt_free(jwt);
	if (rc == 0 && (rc = session_row(a, p, err)) != 0) {
		sodium_memzero(*token, strlen(*token));
		free(*token);
		*token = NULL;
	}
	return rc;
}

/* The header must say HS256 before the signature is even looked at: no "none", no other
 * algorithm, no key confusion. */
static bool header_is_hs256(const char *token)
{
	const char *dot = strchr(token, '.');
	unsigned char raw[512];
	size_t len = 0;
	json_t *h;
	bool ok;

	if (dot == NULL || dot == token ||
	    sodium_base642bin(raw, sizeof(raw) - 1, token, (size_t)(dot - token), NULL, &len, NULL,
	                      sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
		return false;
	}
	h = json_loadb((const char *)raw, len, 0, NULL);
	ok = h != NULL && json_is_string(json_object_get(h, "alg")) &&
	     strcmp(json_string_value(json_object_get(h, "alg")), "HS256") == 0;
	json_decref(h);
	return ok;
}

static int claims_check(jwt_t *jwt, rz_principal_t *p, rz_err_t *err)
{
	const char *iss = jwt_get_grant(jwt, "iss");
	const char *sub = jwt_get_grant(jwt, "sub");
	const char *jti = jwt_get_grant(jwt, "jti");
	long exp = jwt_get_grant_int(jwt, "exp");
	long nbf = jwt_get_grant_int(jwt, "nbf");
	int64_t now = now_s();

	if (iss == NULL || strcmp(iss, RZ_JWT_ISSUER) != 0) {
		return rz_err_set(err, RZ_EAUTH, "session: wrong issuer");
	}
	if (sub == NULL || *sub == '\0' || strlen(sub) >= sizeof(p->user) || jti == NULL ||
	    *jti == '\0' || strlen(jti) >= sizeof(p->jti) || jwt_get_grant_int(jwt, "iat") <= 0) {
		return rz_err_set(err, RZ_EAUTH, "session: missing claims");
	}
	if (exp <= 0 || exp <= now) {
		return rz_err_set(err, RZ_EAUTH, "session: expired");
	}
	if (nbf <= 0 || nbf > now) {
		return rz_err_set(err, RZ_EAUTH, "session: not valid yet");
	}
	snprintf(p->user, sizeof(p->user), "%s", sub);
	snprintf(p->jti, sizeof(p->jti), "%s", jti);
	p->exp = exp;
	return 0;
}

/* Is the session live: not logged out, not ended by a password change, and issued to the
 * user who holds the name now? Fails closed. */
static bool live(rz_auth_t *a, const char *jti, const char *user)
{
	rz_err_t err = { 0 };
	rz_stmt_t *s = rz_db_stmt(a->db, "SELECT user, uid FROM sessions WHERE jti = ?1", &err);
	struct known_user *k;
	bool ok = false;

	if (s == NULL) {
		return false;
	}
	rz_stmt_bind_text(s, 1, jti);
	if (rz_stmt_step(s, &err) == 1 && strcmp(rz_stmt_text(s, 0), user) == 0 &&
	    (k = known(a, user, &err)) != NULL) {
		ok = k->uid[0] != '\0' && strcmp(rz_stmt_text(s, 1), k->uid) == 0;
	}
	rz_stmt_done(s);
	return ok;
}

static int verify_jwt(rz_auth_t *a, const char *token, rz_principal_t *p, rz_err_t *err)
{
	jwt_t *jwt = NULL;
	unsigned char key[16];
	struct verified *v;
	int rc;

	crypto_generichash(key, sizeof(key), (const unsigned char *)token, strlen(token), NULL, 0);
	v = &a->verified[(key[0] | key[1] << 8) % VERIFIED_SLOTS];
	if (sodium_memcmp(v->key, key, sizeof(key)) == 0 && v->exp > now_s()) {
		snprintf(p->user, sizeof(p->user), "%s", v->user);
		snprintf(p->jti, sizeof(p->jti), "%s", v->jti);
		p->exp = v->exp;
		if (v->live_sessions == sessions_gen && v->live_users == a->user_gen) {
			return 0;
		}
		if (!live(a, p->jti, p->user)) {
			v->live_sessions = 0;
			return rz_err_set(err, RZ_EAUTH, "session: ended");
		}
		v->live_sessions = sessions_gen;
		v->live_users = a->user_gen;
		return 0;
	}
	if (!header_is_hs256(token)) {
		return rz_err_set(err, RZ_EAUTH, "session: not an HS256 token");
	}
	if (jwt_decode(&jwt, token, a->secret, (int)a->secret_len) != 0 || jwt == NULL ||
	    jwt_get_alg(jwt) != JWT_ALG_HS256) {
		jwt_free(jwt);
		return rz_err_set(err, RZ_EAUTH, "session: bad signature or format");
	}
	rc = claims_check(jwt, p, err);
	jwt_free(jwt);
	if (rc == 0 && !live(a, p->jti, p->user)) {
		rc = rz_err_set(err, RZ_EAUTH, "session: ended");
	}
	if (rc == 0 && p->exp > now_s() + 1) {
		memcpy(v->key, key, sizeof(key));
		snprintf(v->user, sizeof(v->user), "%s", p->user);
		snprintf(v->jti, sizeof(v->jti), "%s", p->jti);
		v->exp = p->exp;
		v->live_sessions = sessions_gen;
		v->live_users = a->user_gen;
	}
	return rc;
}

int rz_auth_revoke(rz_auth_t *a, const char *jti, int64_t exp, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(a->db, "DELETE FROM sessions WHERE jti = ?1", err);
	int rc;

	(void)exp;
	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, jti);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	sessions_gen++;
	return rc < 0 ? rc : 0;
}

int rz_auth_end_sessions(rz_db_t *db, const char *user, const char *keep_jti, rz_err_t *err)
{
	rz_stmt_t *s =
	    rz_db_stmt(db, "DELETE FROM sessions WHERE user = ?1 AND jti IS NOT ?2", err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, user);
	rz_stmt_bind_text(s, 2, keep_jti != NULL && keep_jti[0] != '\0' ? keep_jti : NULL);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	sessions_gen++;
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ users and tokens */

/* The user's current role and state from the store. */
/* The user as stored now (from the cache while no user has changed). */
static struct known_user *known(rz_auth_t *a, const char *name, rz_err_t *err)
{
	unsigned char h[2];
	struct known_user *k;
	json_t *u = NULL, *spec;

	crypto_generichash(h, sizeof(h), (const unsigned char *)name, strlen(name), NULL, 0);
	k = &a->users[(h[0] | h[1] << 8) % USER_SLOTS];
	if (k->gen == a->user_gen && strcmp(k->name, name) == 0) {
		return k;
	}
	if (rz_store_get(a->store, rz_kind_by_name("User"), NULL, name, &u, err) != 0) {
		return NULL;
	}
	spec = json_object_get(u, "spec");
	snprintf(k->name, sizeof(k->name), "%s", name);
	snprintf(k->uid, sizeof(k->uid), "%s",
	         json_string_value(json_object_get(json_object_get(u, "metadata"), "uid")) ?: "");
	k->gen = a->user_gen;
	k->role = rz_role_parse(json_string_value(json_object_get(spec, "role")));
	k->disabled = json_is_true(json_object_get(spec, "disabled"));
	k->ngroups = 0;
	for (size_t i = 0; i < json_array_size(json_object_get(spec, "groups")) &&
	                   k->ngroups < RZ_USER_GROUPS_MAX;
	     i++) {
		const char *g =
		    json_string_value(json_array_get(json_object_get(spec, "groups"), i));
		if (g != NULL && strlen(g) < sizeof(k->groups[0])) {
			snprintf(k->groups[k->ngroups++], sizeof(k->groups[0]), "%s", g);
		}
	}
	k->must_change =
	    json_is_true(json_object_get(json_object_get(u, "status"), "mustChangePassword"));
	json_decref(u);
	return k;
}

static int load_user(rz_auth_t *a, rz_principal_t *p, rz_err_t *err)
{
	struct known_user *k = known(a, p->user, err);

	if (k == NULL) {
		return rz_err_set(err, RZ_EAUTH, "user '%s' does not exist", p->user);
	}
	if (k->disabled) {
		return rz_err_set(err, RZ_EAUTH, "user '%s' is disabled", p->user);
	}
	p->role = k->role;
	p->cap = p->cap != 0 ? p->cap : RZ_ROLE_ADMIN;
	memcpy(p->groups, k->groups, sizeof(p->groups));
	p->ngroups = k->ngroups;
	p->must_change_password = k->must_change;
	return p->role != 0 ? 0 : rz_err_set(err, RZ_EAUTH, "user '%s' has no role", p->user);
}

/* Record lastUsed at most once a minute, so tokens do not turn reads into writes. */
static void touch_token(rz_auth_t *a, json_t *tok, const char *user, const char *id)
{
	const char *last =
	    json_string_value(json_object_get(json_object_get(tok, "status"), "lastUsed"));
	char now[32];
	json_t *upd, *out = NULL;
	rz_err_t err = { 0 };

	if (last != NULL && rz_time_parse(last) > now_s() - 60) {
		return;
	}
	rz_time_now(now, sizeof(now));
	upd = json_pack("{s:{s:s}}", "status", "lastUsed", now);
	if (rz_store_update(a->store, rz_kind_by_name("APIToken"), user, id, upd, 0,
	                    RZ_UPDATE_STATUS, NULL, &out, NULL, &err) != 0) {
		rz_log_warn("auth", "recording use of token '%s' failed: %s", id, err.msg);
	}
	json_decref(out);
	json_decref(upd);
}

static int find_token(rz_auth_t *a, const char *secret, char *user, size_t usize, char *id,
                      size_t isize, rz_err_t *err)
{
	char hash[RZ_HASH_HEX_LEN + 1];
	rz_stmt_t *s = rz_db_stmt(a->db, "SELECT user, id FROM token_secrets WHERE hash = ?1", err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_auth_token_hash(secret, hash);
	rz_stmt_bind_text(s, 1, hash);
	rc = rz_stmt_step(s, err);
	if (rc == 1) {
		snprintf(user, usize, "%s", rz_stmt_text(s, 0));
		snprintf(id, isize, "%s", rz_stmt_text(s, 1));
	}
	rz_stmt_done(s);
	return rc == 1 ? 0 : rz_err_set(err, RZ_EAUTH, "token: unknown or revoked");
}

static int verify_token_read(rz_auth_t *a, const char *secret, rz_principal_t *p, rz_err_t *err);

static int verify_token(rz_auth_t *a, const char *secret, rz_principal_t *p, rz_err_t *err)
{
	unsigned char key[16];
	struct token_memo *m;
	int64_t now = now_s();
	int rc;

	crypto_generichash(key, sizeof(key), (const unsigned char *)secret, strlen(secret), NULL,
	                   0);
	m = &a->tokens[(key[0] | key[1] << 8) % TOKEN_SLOTS];
	if (sodium_memcmp(m->key, key, sizeof(key)) == 0 && m->tokens == a->token_gen &&
	    m->users == a->user_gen && m->since + TOKEN_MEMO_S > now &&
	    (m->p.exp == 0 || m->p.exp > now)) {
		*p = m->p;
		return 0;
	}
	rc = verify_token_read(a, secret, p, err);
	if (rc == 0) {
		memcpy(m->key, key, sizeof(key));
		m->tokens = a->token_gen; /* after its lastUsed write, if it made one */
		m->users = a->user_gen;
		m->since = now;
		m->p = *p;
	} else if (sodium_memcmp(m->key, key, sizeof(key)) == 0) {
		sodium_memzero(m->key, sizeof(m->key));
	}
	return rc;
}

/* The principal of the API token p->token_id of p->user as they are now; touch: record its
 * use (a request, not a watch's recheck). */
static int token_principal(rz_auth_t *a, rz_principal_t *p, bool touch, rz_err_t *err)
{
	json_t *tok = NULL;
	const char *expires;
	int cap, rc;

	/* the shared parse (read only here): no JSON parse per request for a token in use */
	if (rz_store_get_shared(a->store, rz_kind_by_name("APIToken"), p->user, p->token_id, &tok,
	                        err)) {
		return rz_err_set(err, RZ_EAUTH, "token: '%s' is gone", p->token_id);
	}
	expires = json_string_value(json_object_get(json_object_get(tok, "spec"), "expiresAt"));
	cap =
	    rz_role_parse(json_string_value(json_object_get(json_object_get(tok, "spec"), "role")));
	if (expires != NULL && rz_time_parse(expires) <= now_s()) {
		rc = rz_err_set(err, RZ_EAUTH, "token: '%s' expired", p->token_id);
	} else {
		rc = load_user(a, p, err);
	}
	if (rc == 0) {
		const char *scope =
		    json_string_value(json_object_get(json_object_get(tok, "spec"), "scope"));
		p->runner_scope = scope != NULL && strcmp(scope, "runner") == 0;
		snprintf(p->runner, sizeof(p->runner), "%s",
		         p->runner_scope ? json_string_value(json_object_get(
		                               json_object_get(tok, "spec"), "runner"))
		                               ?: ""
		                         : "");
		p->role = cap < p->role ? cap : p->role;
		p->cap = cap;
		p->exp = expires ? rz_time_parse(expires) : 0;
		if (p->runner_scope && p->role < RZ_ROLE_ADMIN) {
			/* made before minting one needed admin, or its owner lost the role */
			rc = rz_err_set(err, RZ_EAUTH,
			                "token: '%s' is a runner token without the admin role",
			                p->token_id);
		} else if (touch) {
			touch_token(a, tok, p->user, p->token_id);
		}
	}
	json_decref(tok);
	return rc;
}

static int verify_token_read(rz_auth_t *a, const char *secret, rz_principal_t *p, rz_err_t *err)
{
	int rc =
	    find_token(a, secret, p->user, sizeof(p->user), p->token_id, sizeof(p->token_id), err);

	return rc != 0 ? rc : token_principal(a, p, true, err);
}

uint64_t rz_auth_generation(const rz_auth_t *a, const rz_principal_t *p)
{
	/* each only grows; a session does not depend on tokens, nor a token on sessions */
	return a->user_gen + (p->token_id[0] != '\0' ? a->token_gen : sessions_gen);
}

int rz_auth_recheck(rz_auth_t *a, rz_principal_t *p, uint64_t *seen, rz_err_t *err)
{
	uint64_t gen = rz_auth_generation(a, p);
	rz_principal_t q = *p;
	int rc = 0;

	if (p->exp != 0 && p->exp <= now_s()) {
		return rz_err_set(err, RZ_EAUTH, "%s: expired",
		                  p->jti[0] != '\0' ? "session" : "token");
	}
	if (*seen == gen || p->tenant_scope[0] != '\0') {
		return 0; /* nothing changed; a run's secret lasts as long as its run */
	}
	if (p->token_id[0] != '\0') {
		q.cap = 0;
		rc = token_principal(a, &q, false, err);
	} else if (p->jti[0] != '\0') {
		rc = live(a, p->jti, p->user) ? load_user(a, &q, err)
		                              : rz_err_set(err, RZ_EAUTH, "session: ended");
	}
	if (rc == 0) {
		*p = q;
		*seen = gen;
	}
	return rc;
}

/* A run's secret, granted for one tenant's state while the run lasts. */
static int run_grant(rz_auth_t *a, const char *secret, rz_principal_t *p, rz_err_t *err)
{
	char hash[RZ_HASH_HEX_LEN + 1];

	rz_auth_token_hash(secret, hash);
	for (size_t i = 0; i < RUN_GRANTS; i++) {
		struct grant *g = &a->grants[i];
		if (g->hash[0] != '\0' && sodium_memcmp(g->hash, hash, RZ_HASH_HEX_LEN) == 0) {
			snprintf(p->user, sizeof(p->user), "run/%s", g->run);
			snprintf(p->tenant_scope, sizeof(p->tenant_scope), "%s", g->tenant);
			p->role = RZ_ROLE_EDIT;
			p->cap = RZ_ROLE_EDIT;
			return 0;
		}
	}
	return rz_err_set(err, RZ_EAUTH, "basic: unknown password");
}

/* HTTP basic, as tofu's http backend sends it: the password is an API token or a run's
 * secret; the user name is not used. */
static int basic(rz_auth_t *a, const char *b64, rz_principal_t *p, rz_err_t *err)
{
	unsigned char raw[512];
	size_t len = 0;
	char *colon;
	int rc;

	while (*b64 == ' ') {
		b64++;
	}
	if (sodium_base642bin(raw, sizeof(raw) - 1, b64, strlen(b64), NULL, &len, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) != 0) {
		return rz_err_set(err, RZ_EAUTH, "basic: not base64");
	}
	raw[len] = '\0';
	colon = strchr((char *)raw, ':');
	if (colon == NULL || colon[1] == '\0') {
		sodium_memzero(raw, sizeof(raw));
		return rz_err_set(err, RZ_EAUTH, "basic: no password");
	}
	rc = run_grant(a, colon + 1, p, err);
	if (rc != 0 && strncmp(colon + 1, RZ_TOKEN_PREFIX, strlen(RZ_TOKEN_PREFIX)) == 0) {
		rc = verify_token(a, colon + 1, p, err);
	}
	sodium_memzero(raw, sizeof(raw));
	return rc;
}

static int grant(rz_auth_t *a, const char *tenant, const char *run, const char *secret, bool keep)
{
	rz_err_t err = { 0 };

	for (size_t i = 0; i < RUN_GRANTS; i++) {
		struct grant *g = &a->grants[i];
		rz_stmt_t *s;
		int rc;
		if (g->hash[0] != '\0') {
			continue;
		}
		rz_auth_token_hash(secret, g->hash);
		snprintf(g->tenant, sizeof(g->tenant), "%s", tenant);
		snprintf(g->run, sizeof(g->run), "%s", run);
		if (!keep) {
			return 0;
		}
		/* the hash only: the secret itself is never on disk */
		s = rz_db_stmt(a->db,
		               "INSERT OR REPLACE INTO run_grants (run, tenant, hash) VALUES (?1, "
		               "?2, ?3)",
		               &err);
		rc = s == NULL ? err.code : 0;
		if (rc == 0) {
			rz_stmt_bind_text(s, 1, run);
			rz_stmt_bind_text(s, 2, tenant);
			rz_stmt_bind_text(s, 3, g->hash);
			rc = rz_stmt_step(s, &err) < 0 ? err.code : 0;
			rz_stmt_done(s);
		}
		if (rc != 0) {
			rz_log_warn("auth", "run %s: cannot keep its grant: %s", run, err.msg);
		}
		g->kept = rc == 0;
		return 0;
	}
	return -ENOSPC;
}

int rz_auth_grant(rz_auth_t *a, const char *tenant, const char *run, const char *secret)
{
	return grant(a, tenant, run, secret, false);
}

int rz_auth_grant_kept(rz_auth_t *a, const char *tenant, const char *run, const char *secret)
{
	return grant(a, tenant, run, secret, true);
}

bool rz_auth_granted(const rz_auth_t *a, const char *run)
{
	for (size_t i = 0; i < RUN_GRANTS; i++) {
		if (a->grants[i].hash[0] != '\0' && strcmp(a->grants[i].run, run) == 0) {
			return true;
		}
	}
	return false;
}

void rz_auth_ungrant(rz_auth_t *a, const char *run)
{
	bool kept = false;
	rz_err_t err = { 0 };
	rz_stmt_t *s;

	for (size_t i = 0; i < RUN_GRANTS; i++) {
		if (strcmp(a->grants[i].run, run) == 0) {
			kept = kept || a->grants[i].kept;
			sodium_memzero(&a->grants[i], sizeof(a->grants[i]));
		}
	}
	if (kept &&
	    (s = rz_db_stmt(a->db, "DELETE FROM run_grants WHERE run = ?1", &err)) != NULL) {
		rz_stmt_bind_text(s, 1, run);
		if (rz_stmt_step(s, &err) < 0) {
			rz_log_warn("auth", "run %s: its kept grant stays: %s", run, err.msg);
		}
		rz_stmt_done(s);
	}
}

void rz_auth_ungrant_except(rz_auth_t *a, bool (*keep)(void *arg, const char *run), void *arg)
{
	for (size_t i = 0; i < RUN_GRANTS; i++) {
		char run[64];
		if (a->grants[i].hash[0] == '\0' || keep(arg, a->grants[i].run)) {
			continue;
		}
		snprintf(run, sizeof(run), "%s", a->grants[i].run);
		rz_auth_ungrant(a, run);
	}
}

int rz_auth_authenticate(rz_auth_t *a, const char *header, rz_principal_t *p, rz_err_t *err)
{
	const char *cred;
	int rc;

	memset(p, 0, sizeof(*p));
	if (header == NULL || *header == '\0') {
		return rz_err_set(err, RZ_ENOAUTH, "no credentials");
	}
	if (strncasecmp(header, "Basic ", 6) == 0) {
		return basic(a, header + 6, p, err);
	}
	if (strncasecmp(header, "Bearer ", 7) != 0) {
		return rz_err_set(err, RZ_EAUTH, "not a bearer credential");
	}
	cred = header + 7;
	while (*cred == ' ') {
		cred++;
	}
	if (strncmp(cred, RZ_TOKEN_PREFIX, strlen(RZ_TOKEN_PREFIX)) == 0) {
		return verify_token(a, cred, p, err);
	}
	rc = verify_jwt(a, cred, p, err);
	return rc == 0 ? load_user(a, p, err) : rc;
}

void rz_auth_token_secret(char out[RZ_TOKEN_SECRET_LEN + 1])
{
	unsigned char raw[32];

	randombytes_buf(raw, sizeof(raw));
	memcpy(out, RZ_TOKEN_PREFIX, strlen(RZ_TOKEN_PREFIX));
	sodium_bin2base64(out + strlen(RZ_TOKEN_PREFIX),
	                  RZ_TOKEN_SECRET_LEN + 1 - strlen(RZ_TOKEN_PREFIX), raw, sizeof(raw),
	                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
}

void rz_auth_token_hash(const char *secret, char out[RZ_HASH_HEX_LEN + 1])
{
	unsigned char h[32];

	crypto_generichash(h, sizeof(h), (const unsigned char *)secret, strlen(secret), NULL, 0);
	sodium_bin2hex(out, RZ_HASH_HEX_LEN + 1, h, sizeof(h));
}
