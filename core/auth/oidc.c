/* core/auth/oidc.c - the OpenID provider: discovery and keys cached, ID tokens verified, the
 * authorization code flow with PKCE and its token exchange. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/auth/jws.h"
#include "core/auth/oidc.h"
#include "core/base/log.h"
#include "core/http/client.h"
#include "core/http/tls.h"

#define HEADER_MAX 4096
#define SIG_MAX    1024
#define SECRET_MAX 1024
#define RAND_BYTES 32

/* ------------------------------------------------------------------ verification */

/* Part i (0..2) of a compact JWS decoded into a malloc'd buffer (NUL-terminated). */
static unsigned char *part(const char *token, int i, size_t max, size_t *len)
{
	const char *s = token;
	size_t n;
	unsigned char *out;

	for (int k = 0; k < i; k++) {
		s = strchr(s, '.') + 1;
	}
	n = strcspn(s, ".");
	if ((out = malloc(max + 1)) == NULL || rz_b64url_decode(s, n, out, max, len) != 0) {
		free(out);
		return NULL;
	}
	out[*len] = '\0';
	return out;
}

static json_t *json_part(const char *token, int i, size_t max)
{
	size_t len = 0;
	unsigned char *raw = part(token, i, max, &len);
	json_t *j =
	    raw != NULL ? json_loadb((const char *)raw, len, JSON_REJECT_DUPLICATES, NULL) : NULL;

	free(raw);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The signature over token's first two parts by one key of jwks: 0, RZ_ENOTFOUND when no
 * key has kid (or, without kid, none verifies), RZ_EAUTH when the key with kid does not. */
static int signed_by_set(const char *token, const json_t *header, const json_t *jwks, rz_err_t *err)
{
	const char *alg = json_string_value(json_object_get(header, "alg"));
	const char *kid = json_string_value(json_object_get(header, "kid"));
	const json_t *keys = json_object_get(jwks, "keys");
	size_t input = strrchr(token, '.') - token, siglen = 0;
	unsigned char *sig = part(token, 2, SIG_MAX, &siglen);
	int rc = RZ_ENOTFOUND;

	if (sig == NULL || siglen == 0) {
		free(sig);
		return rz_err_set(err, RZ_EAUTH, "the ID token's signature is malformed");
	}
	for (size_t i = 0; i < json_array_size(keys) && i < RZ_OIDC_KEYS_MAX; i++) {
		const json_t *k = json_array_get(keys, i);
		const char *kk = json_string_value(json_object_get(k, "kid"));
		if (kid != NULL && (kk == NULL || strcmp(kk, kid) != 0)) {
			continue;
		}
		rc = rz_jws_verify(k, alg, token, input, sig, siglen, err);
		if (rc == 0 || kid != NULL) {
			break; /* the key it names decides */
		}
		rc = RZ_ENOTFOUND;
	}
	free(sig);
	if (rc == RZ_ENOTFOUND) {
		rz_err_set(err, RZ_ENOTFOUND,
		           "the ID token is signed with a key the provider does not publish");
	} else if (rc != 0) {
		rz_err_set(err, RZ_EAUTH, "the ID token's signature is not valid");
	}
	return rc;
}

/* aud holds one of x's audiences; several need an azp, and an azp must be one of them. */
static bool audience_ok(const json_t *claims, const rz_oidc_expect_t *x)
{
	const json_t *aud = json_object_get(claims, "aud");
	const char *azp = json_string_value(json_object_get(claims, "azp"));
	size_t n = json_is_array(aud) ? json_array_size(aud) : 1;
	bool found = false;

	if (json_object_get(claims, "azp") != NULL && azp == NULL) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const char *a =
		    json_string_value(json_is_array(aud) ? json_array_get(aud, i) : aud);
		for (size_t k = 0; a != NULL && x->audiences[k] != NULL; k++) {
			found |= strcmp(a, x->audiences[k]) == 0;
		}
	}
	if (!found || (n > 1 && azp == NULL)) {
		return false;
	}
	for (size_t k = 0; azp != NULL && x->audiences[k] != NULL; k++) {
		if (strcmp(azp, x->audiences[k]) == 0) {
			return true;
		}
	}
	return azp == NULL;
}

/* A claim holding a time: its seconds, or -1 when absent or not a number. */
static int64_t seconds(const json_t *claims, const char *name)
{
	const json_t *v = json_object_get(claims, name);

	return json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) < 1e15
	           ? (int64_t)json_number_value(v)
	           : -1;
}

static int claims_check(const json_t *c, const rz_oidc_expect_t *x, rz_err_t *err)
{
	const char *iss = json_string_value(json_object_get(c, "iss"));
	const char *sub = json_string_value(json_object_get(c, "sub"));
	const char *nonce = json_string_value(json_object_get(c, "nonce"));
	int64_t exp = seconds(c, "exp"), iat = seconds(c, "iat"), nbf = seconds(c, "nbf");

	if (iss == NULL || strcmp(iss, x->issuer) != 0) {
		return rz_err_set(err, RZ_EAUTH, "the ID token is from another issuer");
	}
	if (!audience_ok(c, x)) {
		return rz_err_set(err, RZ_EAUTH, "the ID token is meant for another client (aud)");
	}
	if (sub == NULL || sub[0] == '\0' || strlen(sub) > 255) {
		return rz_err_set(err, RZ_EAUTH, "the ID token names no subject (sub)");
	}
	if (exp < 0 || x->now > exp + RZ_OIDC_SKEW_S) {
		return rz_err_set(err, RZ_EAUTH, "the ID token has expired");
	}
	if (iat < 0 || iat > x->now + RZ_OIDC_SKEW_S || iat < x->now - RZ_OIDC_IAT_MAX_S) {
		return rz_err_set(err, RZ_EAUTH,
		                  "the ID token's issue time (iat) is not believable");
	}
	if (json_object_get(c, "nbf") != NULL && (nbf < 0 || nbf > x->now + RZ_OIDC_SKEW_S)) {
		return rz_err_set(err, RZ_EAUTH, "the ID token is not valid yet (nbf)");
	}
	if (x->nonce != NULL && (nonce == NULL || strlen(nonce) != strlen(x->nonce) ||
	                         sodium_memcmp(nonce, x->nonce, strlen(nonce)) != 0)) {
		return rz_err_set(err, RZ_EAUTH,
		                  "the ID token's nonce is not the one of this sign-in");
	}
	return 0;
}

int rz_oidc_verify(const char *token, const json_t *jwks, const rz_oidc_expect_t *x,
                   json_t **claims, rz_err_t *err)
{
	size_t len = token != NULL ? strlen(token) : 0;
	const char *dot1 = len ? strchr(token, '.') : NULL;
	const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	json_t *header = NULL, *payload = NULL;
	int rc;

	*claims = NULL;
	if (len > RZ_OIDC_TOKEN_MAX) {
		return rz_err_set(err, RZ_EAUTH, "the ID token is longer than %d bytes",
		                  RZ_OIDC_TOKEN_MAX);
	}
	if (dot2 == NULL || strchr(dot2 + 1, '.') != NULL ||
	    (header = json_part(token, 0, HEADER_MAX)) == NULL ||
	    (payload = json_part(token, 1, RZ_OIDC_TOKEN_MAX)) == NULL) {
		json_decref(header);
		return rz_err_set(err, RZ_EAUTH, "the ID token is not a signed JWT");
	}
	if (!rz_jws_alg_supported(json_string_value(json_object_get(header, "alg"))) ||
	    json_object_get(header, "crit") != NULL) {
		rc = rz_err_set(err, RZ_EAUTH,
		                "the ID token's algorithm is not accepted (RS256 or ES256)");
	} else if ((rc = signed_by_set(token, header, jwks, err)) == 0) {
		rc = claims_check(payload, x, err);
	}
	json_decref(header);
	if (rc != 0) {
		json_decref(payload);
		return rc;
	}
	*claims = payload;
	return 0;
}

/* ------------------------------------------------------------------ the provider */

enum op_type { OP_CHECK, OP_BEGIN };

/* A call waiting for the discovery document and the keys. */
struct op {
	enum op_type type;
	rz_oidc_fn fn;
	void *arg;
	char *token;                       /* check */
	char nonce[RZ_OIDC_STATE_LEN + 1]; /* check: "" = not compared */
	bool has_nonce, refetched;         /* check: the set was fetched again for it */
	char *redirect_uri;                /* begin */
	struct op *next;
};

/* A sign-in begun: what its finish needs. */
struct pending {
	char state[RZ_OIDC_STATE_LEN + 1]; /* "" = free */
	char nonce[RZ_OIDC_STATE_LEN + 1];
	char verifier[RZ_OIDC_STATE_LEN + 1];
	char *redirect_uri;
	int64_t at;
};

struct rz_oidc {
	char issuer[RZ_OIDC_ISSUER_MAX + 1];
	char *client_id, *cli_client_id, *scopes, *display, *redirect_url;
	char secret[SECRET_MAX + 2]; /* "" = a public client */
	rz_tls_client_t *tls;
	rz_workers_t *workers;
	struct event_base *base;
	json_t *discovery, *jwks; /* NULL until fetched */
	int64_t fetched_at;       /* the last good fetch */
	int64_t forced_at;        /* the last fetch an unknown key caused */
	bool fetching;
	struct op *head, *tail; /* waiting for the fetch under way */
	size_t nwaiting;        /* how many: at most RZ_OIDC_WAITING_MAX */
	struct pending pending[RZ_OIDC_PENDING];
};

/* What a fetch job on the pool holds: copies only. */
struct fetch {
	rz_oidc_t *o;            /* not touched on the pool */
	char *issuer, *jwks_uri; /* jwks_uri NULL: discovery first */
	rz_tls_client_t *tls;
	json_t *discovery, *jwks;
	int rc;
	rz_err_t err;
};

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

static void op_free(struct op *op)
{
	if (op->token != NULL) {
		sodium_memzero(op->token, strlen(op->token));
		free(op->token);
	}
	free(op->redirect_uri);
	free(op);
}

/* GET url as JSON (an object) on the pool: NULL with err set on failure. */
static json_t *get_json(const char *url, rz_tls_client_t *tls, const char *what, rz_err_t *err)
{
	rz_fetch_t f = { .method = "GET",
		         .url = url,
		         .max = RZ_OIDC_DOC_MAX,
		         .timeout_s = RZ_OIDC_TIMEOUT_S,
		         .tls = tls };
	rz_fetched_t got = { 0 };
	json_t *j = NULL;
	rz_err_t e = { 0 };

	if (rz_http_fetch(&f, &got, &e) != 0) {
		rz_err_set(err, -EIO, "cannot fetch the provider's %s (%s): %s", what, url, e.msg);
	} else if (got.code != 200) {
		rz_err_set(err, -EIO, "the provider's %s (%s) answered %ld%s", what, url, got.code,
		           got.too_long ? " (too long)" : "");
	} else {
		/* json_is_object names its argument twice: a load inside it parsed twice and
		 * leaked the first document */
		j = json_loadb(got.body, got.len, 0, NULL);
		if (!json_is_object(j)) {
			json_decref(j);
			j = NULL;
			rz_err_set(err, -EIO, "the provider's %s (%s) is not a JSON object", what,
			           url);
		}
	}
	free(got.body);
	return j;
}

/* http:// only to a loopback host (a provider started by a test); https:// anywhere. */
static bool url_allowed(const char *url)
{
	static const char *const loop[] = { "http://127.0.0.1", "http://localhost",
		                            "http://[::1]" };

	if (url == NULL || strlen(url) > RZ_OIDC_URL_MAX || strpbrk(url, " \t\r\n@") != NULL) {
		return false; /* no user info: "http://localhost:@elsewhere/" */
	}
	if (strncmp(url, "https://", 8) == 0) {
		return true;
	}
	for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++) {
		size_t n = strlen(loop[i]);
		if (strncmp(url, loop[i], n) == 0 && strchr(":/", url[n]) != NULL) {
			return url[n] != '\0';
		}
	}
	return false;
}

static void fetch_work(void *arg)
{
	struct fetch *f = arg;
	char url[RZ_OIDC_ISSUER_MAX + 64];
	const char *jwks_uri = f->jwks_uri;
	const char *iss;

	if (jwks_uri == NULL) {
		snprintf(url, sizeof(url), "%s%s.well-known/openid-configuration", f->issuer,
		         f->issuer[strlen(f->issuer) - 1] == '/' ? "" : "/");
		if ((f->discovery = get_json(url, f->tls, "discovery document", &f->err)) == NULL) {
			f->rc = f->err.code;
			return;
		}
		iss = json_string_value(json_object_get(f->discovery, "issuer"));
		jwks_uri = json_string_value(json_object_get(f->discovery, "jwks_uri"));
		if (iss == NULL || strcmp(iss, f->issuer) != 0) {
			f->rc = rz_err_set(&f->err, -EIO,
			                   "the discovery document names another issuer ('%.128s')",
			                   iss ? iss : "");
			return;
		}
		if (!url_allowed(jwks_uri) ||
		    !url_allowed(json_string_value(
		        json_object_get(f->discovery, "authorization_endpoint"))) ||
		    !url_allowed(
		        json_string_value(json_object_get(f->discovery, "token_endpoint")))) {
			f->rc = rz_err_set(&f->err, -EIO,
			                   "the discovery document lacks https endpoints "
			                   "(jwks_uri, authorization_endpoint, token_endpoint)");
			return;
		}
	}
	f->jwks = get_json(jwks_uri, f->tls, "keys", &f->err);
	if (f->jwks == NULL || !json_is_array(json_object_get(f->jwks, "keys"))) {
		f->rc = f->err.code
		            ? f->err.code
		            : rz_err_set(&f->err, -EIO, "the provider's keys hold no \"keys\"");
	}
}

static void run_op(rz_oidc_t *o, struct op *op);

/* Fail every waiting call with err. */
static void fail_waiting(rz_oidc_t *o, const rz_err_t *err)
{
	while (o->head != NULL) {
		struct op *op = o->head;
		rz_oidc_result_t r = { .rc = err->code ? err->code : -EIO, .err = *err };
		o->head = op->next;
		o->nwaiting--;
		op->fn(op->arg, &r);
		op_free(op);
	}
	o->tail = NULL;
}

static void fetch_done(void *arg, int canceled)
{
	struct fetch *f = arg;
	rz_oidc_t *o = f->o;
	struct op *ops;

	o->fetching = false;
	if (canceled) {
		rz_err_set(&f->err, -ESHUTDOWN, "the server is stopping");
	} else if (f->rc != 0) {
		rz_log_warn("oidc", "fetching from '%s' failed: %s", o->issuer, f->err.msg);
	} else {
		if (f->discovery != NULL) {
			json_decref(o->discovery);
			o->discovery = json_incref(f->discovery);
		}
		json_decref(o->jwks);
		o->jwks = json_incref(f->jwks);
		o->fetched_at = now_s();
		rz_log_info("oidc", "fetched the keys of '%s': %zu", o->issuer,
		            json_array_size(json_object_get(o->jwks, "keys")));
	}
	if (o->discovery == NULL || o->jwks == NULL || canceled) {
		fail_waiting(o, &f->err);
	} else {
		ops = o->head; /* a failed fetch keeps the old copies: use them */
		o->head = o->tail = NULL;
		o->nwaiting = 0;
		while (ops != NULL) {
			struct op *op = ops;
			ops = op->next;
			run_op(o, op);
		}
	}
	json_decref(f->discovery);
	json_decref(f->jwks);
	free(f->issuer);
	free(f->jwks_uri);
	free(f);
}

/* Start a fetch (the keys only when the discovery document is fresh and keys_only). */
static void start_fetch(rz_oidc_t *o, bool keys_only)
{
	struct fetch *f;
	const char *uri = json_string_value(json_object_get(o->discovery, "jwks_uri"));
	rz_err_t err = { 0 };

	if (o->fetching) {
		return; /* the fetch under way serves every waiting call */
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL || (f->issuer = strdup(o->issuer)) == NULL ||
	    (keys_only && uri != NULL && (f->jwks_uri = strdup(uri)) == NULL)) {
		goto fail;
	}
	f->o = o;
	f->tls = o->tls;
	o->fetching = true;
	if (rz_workers_submit(o->workers, fetch_work, fetch_done, f) == 0) {
		return;
	}
	o->fetching = false;
fail:
	if (f != NULL) {
		free(f->issuer);
		free(f->jwks_uri);
		free(f);
	}
	rz_err_set(&err, -ENOMEM, "the server is busy; try again");
	fail_waiting(o, &err);
}

/* Run op now when the copies are fresh, else after a fetch. force: fetch the keys anyway. */
static void when_ready(rz_oidc_t *o, struct op *op, bool force)
{
	bool fresh =
	    o->discovery != NULL && o->jwks != NULL && now_s() - o->fetched_at < RZ_OIDC_CACHE_S;

	if (fresh && !force) {
		run_op(o, op);
		return;
	}
	if (o->nwaiting >= RZ_OIDC_WAITING_MAX) {
		rz_oidc_result_t r = { .rc = -EAGAIN };
		rz_err_set(&r.err, -EAGAIN, "too many sign-ins wait for the provider; try again");
		op->fn(op->arg, &r);
		op_free(op);
		return;
	}
	op->next = NULL;
	*(o->tail ? &o->tail->next : &o->head) = op;
	o->tail = op;
	o->nwaiting++;
	start_fetch(o, fresh);
}

static void run_check(rz_oidc_t *o, struct op *op)
{
	rz_oidc_expect_t x = { .issuer = o->issuer,
		               .audiences = { o->client_id, o->cli_client_id },
		               .nonce = op->has_nonce ? op->nonce : NULL,
		               .now = now_s() };
	rz_oidc_result_t r = { 0 };
	json_t *claims = NULL;

	r.rc = rz_oidc_verify(op->token, o->jwks, &x, &claims, &r.err);
	if (r.rc == RZ_ENOTFOUND && !op->refetched && now_s() - o->forced_at >= RZ_OIDC_REFETCH_S) {
		op->refetched = true; /* the provider may have rotated its keys */
		o->forced_at = now_s();
		when_ready(o, op, true);
		return;
	}
	if (r.rc == RZ_ENOTFOUND) {
		r.rc = RZ_EAUTH;
	}
	r.claims = claims;
	op->fn(op->arg, &r);
	json_decref(claims);
	op_free(op);
}

/* s percent-encoded (RFC 3986 unreserved kept) onto out; false when it does not fit. */
static bool append_enc(char *out, size_t size, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(out);

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		             (c >= '0' && c <= '9') || strchr("-._~", c) != NULL;
		if (n + 4 >= size) {
			return false;
		}
		if (plain) {
			out[n++] = (char)c;
		} else {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = '\0';
	return true;
}

/* "&name=value" (value encoded) onto out. */
static bool add_param(char *out, size_t size, const char *name, const char *value)
{
	size_t n = strlen(out);

	return snprintf(out + n, size - n, "%s%s=", n > 0 && !strchr("?", out[n - 1]) ? "&" : "",
	                name) < (int)(size - n) &&
	       append_enc(out, size, value);
}

static void random_text(char out[RZ_OIDC_STATE_LEN + 1])
{
	unsigned char raw[RAND_BYTES];

	randombytes_buf(raw, sizeof(raw));
	rz_b64url_encode(raw, sizeof(raw), out, RZ_OIDC_STATE_LEN + 1);
	sodium_memzero(raw, sizeof(raw));
}

/* A free slot for a new sign-in: a free or expired one, else the oldest. */
static struct pending *pending_slot(rz_oidc_t *o)
{
	struct pending *best = &o->pending[0];

	for (size_t i = 0; i < RZ_OIDC_PENDING; i++) {
		struct pending *p = &o->pending[i];
		if (p->state[0] == '\0' || now_s() - p->at > RZ_OIDC_PENDING_S) {
			best = p;
			break;
		}
		if (p->at < best->at) {
			best = p;
		}
	}
	free(best->redirect_uri);
	sodium_memzero(best, sizeof(*best));
	return best;
}

static void run_begin(rz_oidc_t *o, struct op *op)
{
	const char *ep = json_string_value(json_object_get(o->discovery, "authorization_endpoint"));
	struct pending *p = pending_slot(o);
	unsigned char hash[crypto_hash_sha256_BYTES];
	char challenge[RZ_OIDC_STATE_LEN + 1], url[RZ_OIDC_URL_MAX + 1];
	rz_oidc_result_t r = { 0 };

	random_text(p->state);
	random_text(p->nonce);
	random_text(p->verifier);
	p->at = now_s();
	p->redirect_uri = op->redirect_uri;
	op->redirect_uri = NULL;
	crypto_hash_sha256(hash, (const unsigned char *)p->verifier, strlen(p->verifier));
	rz_b64url_encode(hash, sizeof(hash), challenge, sizeof(challenge));
	snprintf(url, sizeof(url), "%s%s", ep, strchr(ep, '?') ? "&" : "?");
	if (strlen(ep) + 1 >= sizeof(url) ||
	    !add_param(url, sizeof(url), "response_type", "code") ||
	    !add_param(url, sizeof(url), "client_id", o->client_id) ||
	    !add_param(url, sizeof(url), "redirect_uri", p->redirect_uri) ||
	    !add_param(url, sizeof(url), "scope", o->scopes) ||
	    !add_param(url, sizeof(url), "state", p->state) ||
	    !add_param(url, sizeof(url), "nonce", p->nonce) ||
	    !add_param(url, sizeof(url), "code_challenge", challenge) ||
	    !add_param(url, sizeof(url), "code_challenge_method", "S256")) {
		r.rc = rz_err_set(&r.err, -ENAMETOOLONG, "the authorization URL is too long");
		free(p->redirect_uri);
		sodium_memzero(p, sizeof(*p));
	} else {
		r.url = url;
		r.state = p->state;
	}
	op->fn(op->arg, &r);
	op_free(op);
}

static void run_op(rz_oidc_t *o, struct op *op)
{
	if (op->type == OP_CHECK) {
		run_check(o, op);
	} else {
		run_begin(o, op);
	}
}

int rz_oidc_check(rz_oidc_t *o, const char *token, const char *nonce, rz_oidc_fn fn, void *arg)
{
	struct op *op = calloc(1, sizeof(*op));

	if (op == NULL || (op->token = strndup(token, RZ_OIDC_TOKEN_MAX + 1)) == NULL) {
		free(op);
		return -ENOMEM;
	}
	op->type = OP_CHECK;
	op->fn = fn;
	op->arg = arg;
	if (nonce != NULL) {
		op->has_nonce = true;
		snprintf(op->nonce, sizeof(op->nonce), "%s", nonce);
		if (strlen(nonce) >= sizeof(op->nonce)) {
			op->nonce[0] = '\0'; /* a nonce we never make: no token matches */
		}
	}
	when_ready(o, op, false);
	return 0;
}

int rz_oidc_begin(rz_oidc_t *o, const char *redirect_uri, rz_oidc_fn fn, void *arg)
{
	struct op *op = calloc(1, sizeof(*op));

	if (op == NULL || (op->redirect_uri = strdup(redirect_uri)) == NULL) {
		free(op);
		return -ENOMEM;
	}
	op->type = OP_BEGIN;
	op->fn = fn;
	op->arg = arg;
	when_ready(o, op, false);
	return 0;
}

/* ------------------------------------------------------------------ the code's exchange */

struct exchange {
	rz_oidc_fn fn;
	void *arg;
	char *url, *body; /* the token endpoint, the form */
	rz_tls_client_t *tls;
	char nonce[RZ_OIDC_STATE_LEN + 1];
	char *id_token;
	rz_err_t err;
};

static void exchange_free(struct exchange *x)
{
	if (x->body != NULL) {
		sodium_memzero(x->body, strlen(x->body));
	}
	if (x->id_token != NULL) {
		sodium_memzero(x->id_token, strlen(x->id_token));
	}
	free(x->url);
	free(x->body);
	free(x->id_token);
	free(x);
}

static void exchange_work(void *arg)
{
	struct exchange *x = arg;
	rz_fetch_t f = { .method = "POST",
		         .url = x->url,
		         .content_type = "application/x-www-form-urlencoded",
		         .body = x->body,
		         .len = strlen(x->body),
		         .max = RZ_OIDC_DOC_MAX,
		         .timeout_s = RZ_OIDC_TIMEOUT_S,
		         .tls = x->tls };
	rz_fetched_t got = { 0 };
	json_t *j = NULL;
	const char *tok, *e, *desc;
	rz_err_t err = { 0 };

	if (rz_http_fetch(&f, &got, &err) != 0) {
		rz_err_set(&x->err, -EIO, "cannot reach the provider's token endpoint: %s",
		           err.msg);
		goto out;
	}
	j = json_loadb(got.body, got.len, 0, NULL);
	tok = json_string_value(json_object_get(j, "id_token"));
	e = json_string_value(json_object_get(j, "error"));
	desc = json_string_value(json_object_get(j, "error_description"));
	if (got.code != 200 || tok == NULL) {
		rz_err_set(&x->err, RZ_EAUTH,
		           "the provider refused the code (HTTP %ld%s%.64s%s%.200s)", got.code,
		           e ? ": " : "", e ? e : "", desc ? ": " : "", desc ? desc : "");
	} else if (strlen(tok) > RZ_OIDC_TOKEN_MAX || (x->id_token = strdup(tok)) == NULL) {
		rz_err_set(&x->err, RZ_EAUTH, "the provider's ID token is too long");
	}
out:
	if (got.body != NULL) {
		sodium_memzero(got.body, got.len);
	}
	free(got.body);
	json_decref(j);
}

static void exchange_done(void *arg, int canceled)
{
	struct exchange *x = arg;
	rz_oidc_result_t r = { 0 };

	if (canceled) {
		rz_err_set(&x->err, -ESHUTDOWN, "the server is stopping");
	}
	if (canceled || x->id_token == NULL) {
		r.rc = x->err.code ? x->err.code : -EIO;
		r.err = x->err;
	} else {
		r.id_token = x->id_token;
		r.nonce = x->nonce;
	}
	x->fn(x->arg, &r);
	exchange_free(x);
}

/* The token request's form: the code, its verifier, the client (its secret in the form:
 * client_secret_post, since rz_http_fetch sends no other Authorization than a bearer). */
static char *exchange_form(const rz_oidc_t *o, const struct pending *p, const char *code)
{
	size_t size = strlen(code) * 3 + strlen(p->redirect_uri) * 3 + 3 * sizeof(o->secret) +
	              strlen(o->client_id) * 3 + 256;
	char *form = calloc(1, size);

	if (form != NULL &&
	    (!add_param(form, size, "grant_type", "authorization_code") ||
	     !add_param(form, size, "code", code) ||
	     !add_param(form, size, "redirect_uri", p->redirect_uri) ||
	     !add_param(form, size, "code_verifier", p->verifier) ||
	     !add_param(form, size, "client_id", o->client_id) ||
	     (o->secret[0] != '\0' && !add_param(form, size, "client_secret", o->secret)))) {
		free(form);
		form = NULL;
	}
	return form;
}

int rz_oidc_finish(rz_oidc_t *o, const char *state, const char *code, rz_oidc_fn fn, void *arg)
{
	struct pending *p = NULL;
	struct exchange *x;
	rz_oidc_result_t r = { 0 };
	const char *ep = json_string_value(json_object_get(o->discovery, "token_endpoint"));

	for (size_t i = 0;
	     state != NULL && strlen(state) == RZ_OIDC_STATE_LEN && i < RZ_OIDC_PENDING; i++) {
		if (o->pending[i].state[0] != '\0' &&
		    sodium_memcmp(o->pending[i].state, state, RZ_OIDC_STATE_LEN) == 0) {
			p = &o->pending[i];
		}
	}
	if (p == NULL || now_s() - p->at > RZ_OIDC_PENDING_S || ep == NULL || code == NULL ||
	    code[0] == '\0' || strlen(code) > 4096) {
		r.rc = rz_err_set(&r.err, RZ_EAUTH,
		                  p == NULL ? "this sign-in is unknown or already used: start again"
		                            : "this sign-in took too long: start again");
		goto out;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL || (x->url = strdup(ep)) == NULL ||
	    (x->body = exchange_form(o, p, code)) == NULL) {
		if (x != NULL) {
			exchange_free(x);
		}
		r.rc = rz_err_set(&r.err, -ENOMEM, "out of memory");
		goto out;
	}
	x->fn = fn;
	x->arg = arg;
	x->tls = o->tls;
	memcpy(x->nonce, p->nonce, sizeof(x->nonce));
	if (rz_workers_submit(o->workers, exchange_work, exchange_done, x) != 0) {
		exchange_free(x);
		r.rc = rz_err_set(&r.err, -EAGAIN, "the server is busy; try again");
		goto out;
	}
	r.rc = 1; /* answered later */
out:
	if (p != NULL) { /* used up, whatever happens */
		free(p->redirect_uri);
		sodium_memzero(p, sizeof(*p));
	}
	if (r.rc <= 0) {
		fn(arg, &r);
	}
	return 0;
}

/* ------------------------------------------------------------------ module */

/* The first line of a secret file no group or other may read. */
static int read_secret(const char *path, char *buf, size_t size, rz_err_t *err)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		return rz_err_set(err, -errno, "auth.oidc.client_secret_file '%s': %s", path,
		                  strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0077) != 0) {
		close(fd);
		return rz_err_set(err, REZUS_ECONFIG,
		                  "auth.oidc.client_secret_file '%s': not a regular file only its "
		                  "owner may read (chmod 600 it)",
		                  path);
	}
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (n <= 0 || buf[0] == '\0' || (size_t)n >= size - 1) {
		sodium_memzero(buf, size);
		return rz_err_set(err, REZUS_ECONFIG,
		                  "auth.oidc.client_secret_file '%s': the first line must hold the "
		                  "secret (1 to %zu bytes)",
		                  path, size - 2);
	}
	return 0;
}

static char *dup_or(const char *s, const char *def)
{
	return strdup(s != NULL && s[0] != '\0' ? s : def);
}

int rz_oidc_new(rz_oidc_t **out, const rz_config_t *cfg, rz_workers_t *workers,
                struct event_base *base, rz_err_t *err)
{
	rz_oidc_t *o;
	int rc = 0;

	*out = NULL;
	if (cfg->oidc_issuer == NULL || cfg->oidc_issuer[0] == '\0') {
		return 0;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		return rz_err_set(err, -ENOMEM, "oidc: out of memory");
	}
	o->workers = workers;
	o->base = base;
	snprintf(o->issuer, sizeof(o->issuer), "%s", cfg->oidc_issuer);
	o->client_id = dup_or(cfg->oidc_client_id, "");
	o->cli_client_id = dup_or(cfg->oidc_cli_client_id, cfg->oidc_client_id);
	o->scopes = dup_or(cfg->oidc_scopes, "openid");
	o->display = dup_or(cfg->oidc_display_name, "single sign-on");
	o->redirect_url = dup_or(cfg->oidc_redirect_url, "");
	if (o->redirect_url != NULL && o->redirect_url[0] == '\0' && cfg->external_url != NULL &&
	    cfg->external_url[0] != '\0') {
		free(o->redirect_url);
		size_t n = strlen(cfg->external_url);
		n -= cfg->external_url[n - 1] == '/';
		if (asprintf(&o->redirect_url, "%.*s/login/oidc/callback", (int)n,
		             cfg->external_url) < 0) {
			o->redirect_url = NULL;
		}
	}
	if (o->client_id == NULL || o->cli_client_id == NULL || o->scopes == NULL ||
	    o->display == NULL || o->redirect_url == NULL) {
		rc = rz_err_set(err, -ENOMEM, "oidc: out of memory");
	}
	if (rc == 0 && cfg->oidc_client_secret_file != NULL &&
	    cfg->oidc_client_secret_file[0] != '\0') {
		rc = read_secret(cfg->oidc_client_secret_file, o->secret, sizeof(o->secret), err);
	}
	if (rc == 0 && strncmp(o->issuer, "https://", 8) == 0) {
		rc = rz_tls_client_new(&o->tls, cfg->oidc_ca_file, err);
	}
	if (rc != 0) {
		rz_oidc_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

void rz_oidc_free(rz_oidc_t *o)
{
	rz_err_t err = { 0 };

	if (o == NULL) {
		return;
	}
	rz_err_set(&err, -ESHUTDOWN, "the server is stopping");
	fail_waiting(o, &err);
	for (size_t i = 0; i < RZ_OIDC_PENDING; i++) {
		free(o->pending[i].redirect_uri);
	}
	sodium_memzero(o->pending, sizeof(o->pending));
	sodium_memzero(o->secret, sizeof(o->secret));
	json_decref(o->discovery);
	json_decref(o->jwks);
	rz_tls_client_free(o->tls);
	free(o->client_id);
	free(o->cli_client_id);
	free(o->scopes);
	free(o->display);
	free(o->redirect_url);
	free(o);
}

const char *rz_oidc_issuer(const rz_oidc_t *o)
{
	return o->issuer;
}

const char *rz_oidc_cli_client_id(const rz_oidc_t *o)
{
	return o->cli_client_id;
}

const char *rz_oidc_scopes(const rz_oidc_t *o)
{
	return o->scopes;
}

const char *rz_oidc_display_name(const rz_oidc_t *o)
{
	return o->display;
}

const char *rz_oidc_redirect_url(const rz_oidc_t *o)
{
	return o->redirect_url;
}
