/* tests/unit/check_oidc.c - single sign-on: ID tokens made here with OpenSSL keys checked by
 * rz_oidc_verify (each refusal), the provider's keys fetched again when a token names an
 * unknown kid (from an HTTP server of the test), and the identity taken from claims. */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <event2/event.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "core/auth/jws.h"
#include "core/auth/oidc.h"
#include "core/auth/sso.h"
#include "core/base/config.h"
#include "core/http/http.h"
#include "tests/unit/testutil.h"

#define ISS "https://id.example.com"

static EVP_PKEY *rsa_a, *rsa_b, *ec_c;

static void b64(const unsigned char *in, size_t len, char *out, size_t size)
{
	ck_assert_int_eq(rz_b64url_encode(in, len, out, size), 0);
}

/* The public JWK of key, with kid. Caller owns. */
static json_t *jwk(EVP_PKEY *key, const char *kid)
{
	unsigned char buf[1024];
	char n[1400], e[64];
	size_t len = 0;
	BIGNUM *bn = NULL;

	if (EVP_PKEY_is_a(key, "EC")) {
		ck_assert(EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, buf,
		                                          sizeof(buf), &len));
		ck_assert_uint_eq(len, 65);
		b64(buf + 1, 32, n, sizeof(n));
		b64(buf + 33, 32, e, sizeof(e));
		return json_pack("{s:s, s:s, s:s, s:s, s:s}", "kty", "EC", "crv", "P-256", "kid",
		                 kid, "x", n, "y", e);
	}
	ck_assert(EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &bn));
	len = (size_t)BN_bn2bin(bn, buf);
	b64(buf, len, n, sizeof(n));
	BN_free(bn);
	bn = NULL;
	ck_assert(EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &bn));
	len = (size_t)BN_bn2bin(bn, buf);
	b64(buf, len, e, sizeof(e));
	BN_free(bn);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "kty", "RSA", "kid", kid, "use", "sig", "n",
	                 n, "e", e);
}

/* header.payload signed with key (alg from the key): a compact JWS. Caller frees. */
static char *sign(EVP_PKEY *key, json_t *header, json_t *payload)
{
	char *h = json_dumps(header, JSON_COMPACT), *p = json_dumps(payload, JSON_COMPACT);
	char hb[1024], pb[40000], sb[700];
	unsigned char sig[600], raw[64];
	size_t slen = sizeof(sig);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *out = NULL;
	int n;

	b64((unsigned char *)h, strlen(h), hb, sizeof(hb));
	b64((unsigned char *)p, strlen(p), pb, sizeof(pb));
	n = asprintf(&out, "%s.%s", hb, pb);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key), 1);
	ck_assert_int_eq(EVP_DigestSign(md, sig, &slen, (unsigned char *)out, strlen(out)), 1);
	EVP_MD_CTX_free(md);
	if (EVP_PKEY_is_a(key, "EC")) { /* DER to R||S */
		const unsigned char *q = sig;
		ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &q, (long)slen);
		ck_assert_ptr_nonnull(es);
		BN_bn2binpad(ECDSA_SIG_get0_r(es), raw, 32);
		BN_bn2binpad(ECDSA_SIG_get0_s(es), raw + 32, 32);
		ECDSA_SIG_free(es);
		b64(raw, 64, sb, sizeof(sb));
	} else {
		b64(sig, slen, sb, sizeof(sb));
	}
	free(h);
	free(p);
	h = out;
	ck_assert_int_gt(asprintf(&out, "%s.%s", h, sb), 0);
	free(h);
	json_decref(header);
	json_decref(payload);
	return out;
}

/* Claims good for the client "web" now, nonce "n-1". Caller owns. */
static json_t *claims(void)
{
	json_int_t now = (json_int_t)time(NULL);

	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:[s,s]}", "iss", ISS, "sub", "u-1",
	                 "aud", "web", "iat", now - 5, "exp", now + 300, "nonce", "n-1",
	                 "preferred_username", "alice", "groups", "team-a", "platform-admins");
}

static json_t *rs(const char *kid)
{
	return json_pack("{s:s, s:s}", "alg", "RS256", "kid", kid);
}

static json_t *keyset(json_t *k1, json_t *k2)
{
	json_t *keys = json_array();

	json_array_append_new(keys, k1);
	if (k2 != NULL) {
		json_array_append_new(keys, k2);
	}
	return json_pack("{s:o}", "keys", keys);
}

/* rz_oidc_verify of token against the set {A (kid a), C (kid c)}, for "web" and "cli". */
static int verify(char *token, const char *nonce, char *why, size_t size)
{
	json_t *set = keyset(jwk(rsa_a, "a"), jwk(ec_c, "c")), *got = NULL;
	rz_oidc_expect_t x = { .issuer = ISS,
		               .audiences = { "web", "cli" },
		               .nonce = nonce,
		               .now = (int64_t)time(NULL) };
	rz_err_t err = { 0 };
	int rc = rz_oidc_verify(token, set, &x, &got, &err);

	snprintf(why, size, "%s", err.msg);
	if (rc == 0) {
		ck_assert_str_eq(json_string_value(json_object_get(got, "sub")), "u-1");
	} else {
		ck_assert_ptr_null(got);
	}
	json_decref(got);
	json_decref(set);
	free(token);
	return rc;
}

/* Keys made once for these tests (openssl genpkey): generating them in each test took most
 * of the file's time under valgrind. Test keys only, signing nothing else. */
static const char pem_rsa_a[] = "-----BEGIN PRIVATE KEY-----\n"
                                "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDPe74tDeKDEUqt\n"
                                "optzRfytEiVd5GJWSmXbCg5237sbA7YmsR6p1rx7dkMRennKrHcdmgKDsxHMxXPw\n"
                                "WFckvqK4uCB7F6pijxFHUvenL7ENPAeVrRPFi+Rvew8TbUs1/nGCU88zvgskr7QG\n"
                                "/c/7HQRYy671iYWf5dTtLUx5+hVdP83Cete8iP/knx7QHDI7nV0huUV3nGRd22+I\n"
                                "K1dRQ66pYBhj6JcbauRR/c3WsXGGHrtJQwg5sbQlLIBvsr9cHonerX672zCRWtFJ\n"
                                "vEXB++NaxAehgYqr1jJ5z5qnjAJHC1od8l6g+0pDDGScEgoJjDUrKNOP2gFOYbfZ\n"
                                "HJhhgZZzAgMBAAECggEAGIV97PI6ppXpFwtkRuPrIINIAkhHLP6e+hu+qOL5SJCQ\n"
                                "OxNs1dLItOi9tXedpEvsygVVLb6AqIxfjvTJ29BiB+XPBO0/mGVjO+Q827gBu1gw\n"
                                "Z0qszwihB2HqXrfojymSvb3s+6cGxx+y7a6aoYmE5X+xHljR/5tYpm1XoATj+ICm\n"
                                "7xL7yWSW/tFlglOjVqJYXOzYlN73rJBPBPRZW4DwOybHEyxizAiF5iSf+2dUebWn\n"
                                "FoUM0bAraC8ToOOdv8blTTO+UXxRkpNkNqHiOrDq8EFhBThGkZaXjlROk5wP1qXv\n"
                                "QocNN127sJrsZ4HQFGGbNrgeanrlC04u3lk9a4xJ/QKBgQDtbEF/U5S7c51ykYIS\n"
                                "MrETqYbtr7354lLr0tCvRxOrRVTZv+W8y7kNrHVhq3dFYIAS6GRsOIDx/mIYSKij\n"
                                "EnO79RlzVORTMX+I72x49bMPnU6r1D1LHCDv2q63247K9rJlj93mdSYahfKj7eof\n"
                                "n/jAbRo5y0M5YpX951DwWl/P3wKBgQDft8cws+cEdPWyiJD7H7jxEIHhiDGOLVWH\n"
                                "pjzIu4gnWQmZ5bf+AnFftJqDmfSvjuaiSo4mpcl8avW138XBapTnuOzR70fOSjnA\n"
                                "KdrmzpfdiLsaxROagcWETCQLonjQTVStnH8iiaJq5/buwZ21StT+cMWRqsP6XhSI\n"
                                "brGA99J77QKBgATavcwYrWXXy1RYXUx59NzuDnA1s7C0S/W+bb3nuiM6W63IGq5t\n"
                                "i+8Xo57HnrywaG36inMcBKbuCJtugOQ0sGEbddXB2plI3c6y9ojSnUKoeL9Sq54p\n"
                                "iRLeacwglR7ZRHSHKIZZxtmr+3YWmz7iSnfEw1CDM3Cs71wtqp3/ew4JAoGAbmuL\n"
                                "8jrpbGa6GnuTa491ve4S3RlWtEEl9QUU/VKqWhl1RrN+g+36vW0r0oa7oacbqMC5\n"
                                "ttOfRjyYuEMRnWyYwGKi6N98hpJWPMWr2L3hcSOajhT1nw4sSic2p1Ny5AU3JVWX\n"
                                "3pkmRDPnymJgD+o2hLtumH47qqii49AW5nvrNOUCgYEAmEdDaBny6mka/pgAz4ps\n"
                                "2FAtpJuJUybL0KwomT6bwVJsoh2ARizVkoX8TKlFWYWxSMxsNc6Da/O7iOk8A5Ur\n"
                                "FXQti/+De31NP7vW7WpUhRKTyL/VubvU63t82a7w//7fVxoDRL/iCpybza9+Tchn\n"
                                "mRgnTgXKds1kKBCJ5zPEYO4=\n"
                                "-----END PRIVATE KEY-----\n";
static const char pem_rsa_b[] = "-----BEGIN PRIVATE KEY-----\n"
                                "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQChP8DlcujGJtNI\n"
                                "5ES0xVYLjMBzBRhgFfldjbmbnYaUDyleN2OJo45cKvSXovTqRlHw1Y/EglROZKK9\n"
                                "T0LdDNMKo88nHq1ICpyIPf9ObvtPIUCAto+0gKGP5bw28ocLxmy0BtHvyG+OTc/0\n"
                                "Km727vC7zC6GHNwNkaIVDNpNT4MOAtH98mxAFMyyDkfQBDdGf6a2uTx36e5q7S0Q\n"
                                "hQsni5luyPVstbTVo7xdo1rDfKCktMX0iqTSiuL/KL2y+STb2Sy3R6cnrrJ0rKrm\n"
                                "t1UF3saf0SdJicHu5Ay6eKygZZJ34Qg+OhrTBWlHHYT0IODtPcucduFgMOD93a3S\n"
                                "mMEAWbn5AgMBAAECggEACzq5YEFEXKhPhn//GOe1OlCvBlOQgwCEwTMhfejWenEj\n"
                                "3F/XGrq9K0YCipzamYYUJsV4oaLB5EO14aEncuV1vQPzZTIJtz6l8AcBRKEN91DF\n"
                                "gTE1iMh8d9zz4o+5P+StpUvkSuKWgj6BAOwDlkbFlQ5/Hu/bk0ZVF0ox2bhz1AHZ\n"
                                "+PJU35Z9LMPumtqLc2vGj1akHCs0SSDr8j2d1Z3zcba3sHZN/M6VyJhI6jeMT8TU\n"
                                "PK6kBdN/mGZBaRNUh6Gby5AcpLQ82Pl4MedMVvjEtvfT0PECi6c1GXFL6JDO4DNn\n"
                                "8vyXgiAsQb8IP1ENCnnlqC14GuBKVAuE+RabvJfvQQKBgQDNqMH68xfu3te6cDwT\n"
                                "4iyJ8rBZmen3Ea9rTG0pEW0ARgO1130OIT3CX2MXtdacH1uhdZ9hTFDKS2SEJKNi\n"
                                "SBda29+5m2Ee4p4QNTytMvua1g+KhDLidb2X4IzLiyquVdJK0mWf/MVCTGHZMy+R\n"
                                "cS4KdPRxZSgQ62zgMzG1gsqFVQKBgQDIuB3xTiU1l+szeNicqbJbMFXfyvejpFXt\n"
                                "kGba8yF0m0yvljs0xv0NjxMUeDIajAPiOTRd+SDjTyW4zukT2vwvzNPV8aqZyOV6\n"
                                "3mFmoXcLfpBSA6qW916BYRQwZ06qo5zBGegVfv2bUSdBDHsM3/aeQu5XR/gkahBE\n"
                                "81aet+miFQKBgQCpOryka3S+MtEBsWk+U1ajDPjgQi6sB/l5KaKJsLUpDHPxJijZ\n"
                                "f7D6SNOZpx+5yHP2IHvN7KZuUCueMSfgr8HIGjW23YzFhWTboXMUcmdnuc2ABdh5\n"
                                "ULl6SGSS+Sld23D38Ll/NNh8/a1mtR/nZmKkaCjdRof5pEArHPVCjyVnIQKBgQCb\n"
                                "l/ZGH5DCmdCOpwgrcXS8MZzwDZOoO/UMYlsJMV3m2Zg5qNiekf6KKzXcMUyNvaop\n"
                                "DLUmf7/Z1XnlaCfP53qEx2ATQfJAojYZ6BdTCqmQtHzFxufPfVS6MHoJB5w4tPoH\n"
                                "ysBZIYcQhnlKeJVOprKzfijqafTWrY2NFaE5ClJG/QKBgAob5lghUY/Wu0gfNGmy\n"
                                "If21bo7+bNy2AwsPTynGZcCYdDQeHZqKzokJhqH2MXl+j8h6W1E/XqsDSLVIUAYE\n"
                                "Uwu4ydkgbcqa3moAmFYU8G4A38HP4Z/Qyt/XrhSExOSYrkMlLYztnX1pzNi3ap0d\n"
                                "m8cCxcN+76SNmA7U1CgHeSUw\n"
                                "-----END PRIVATE KEY-----\n";
static const char pem_ec_c[] = "-----BEGIN PRIVATE KEY-----\n"
                               "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmjHKP+0hf5AnPVMc\n"
                               "FgIjff57v38Yvsn0RY4ZzgQLYRShRANCAARsxDUPtEgBkdYHGF1XDvKwP6R012Bi\n"
                               "XrREm/tO/LRdufW8GaZICnvgfvg1wB6IJXm68WwpgrszDbXWtlYVs2nT\n"
                               "-----END PRIVATE KEY-----\n";

static EVP_PKEY *load_key(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *key = bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	return key;
}

static void setup(void)
{
	rsa_a = load_key(pem_rsa_a);
	rsa_b = load_key(pem_rsa_b);
	ec_c = load_key(pem_ec_c);
	ck_assert(rsa_a != NULL && rsa_b != NULL && ec_c != NULL);
}

static void teardown(void)
{
	EVP_PKEY_free(rsa_a);
	EVP_PKEY_free(rsa_b);
	EVP_PKEY_free(ec_c);
}

START_TEST(test_valid_tokens)
{
	char why[256];
	json_t *c = claims();

	ck_assert_int_eq(verify(sign(rsa_a, rs("a"), json_incref(c)), "n-1", why, sizeof(why)), 0);
	ck_assert_int_eq(
	    verify(sign(ec_c, json_pack("{s:s, s:s}", "alg", "ES256", "kid", "c"), json_incref(c)),
	           "n-1", why, sizeof(why)),
	    0);
	/* without a kid the key that fits is found; a CLI's token need not be asked its nonce */
	ck_assert_int_eq(verify(sign(rsa_a, json_pack("{s:s}", "alg", "RS256"), json_incref(c)),
	                        NULL, why, sizeof(why)),
	                 0);
	/* several audiences with an azp that is ours */
	json_object_set_new(c, "aud", json_pack("[s,s]", "other", "cli"));
	json_object_set_new(c, "azp", json_string("cli"));
	ck_assert_int_eq(verify(sign(rsa_a, rs("a"), json_incref(c)), "n-1", why, sizeof(why)), 0);
	json_decref(c);
}
END_TEST

/* One claim changed: refused with a reason naming it. */
static void refused(const char *claim, json_t *value, const char *reason)
{
	char why[256];
	json_t *c = claims();

	if (value != NULL) {
		json_object_set_new(c, claim, value);
	} else {
		json_object_del(c, claim);
	}
	ck_assert_int_eq(verify(sign(rsa_a, rs("a"), c), "n-1", why, sizeof(why)), RZ_EAUTH);
	ck_assert_msg(strstr(why, reason) != NULL, "%s: '%s' lacks '%s'", claim, why, reason);
}

START_TEST(test_claims_refused)
{
	json_int_t now = (json_int_t)time(NULL);

	refused("exp", json_integer(now - RZ_OIDC_SKEW_S - 5), "expired");
	refused("exp", NULL, "expired");
	refused("aud", json_string("someone-else"), "another client");
	refused("aud", json_pack("[s,s]", "web", "other"), "another client"); /* no azp */
	refused("azp", json_string("other"), "another client");
	refused("iss", json_string("https://evil.example.com"), "another issuer");
	refused("iss", json_string(ISS "/"), "another issuer");
	refused("nonce", json_string("n-2"), "nonce");
	refused("nonce", NULL, "nonce");
	refused("iat", json_integer(now + 3600), "iat");
	refused("iat", json_integer(now - 2 * 86400), "iat");
	refused("nbf", json_integer(now + 3600), "nbf");
	refused("sub", NULL, "subject");
}
END_TEST

START_TEST(test_signatures_refused)
{
	char why[256], *t;
	json_t *c = claims();

	/* signed with B but naming A's kid: forged */
	ck_assert_int_eq(verify(sign(rsa_b, rs("a"), json_incref(c)), "n-1", why, sizeof(why)),
	                 RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(why, "signature"));
	/* a flipped bit of a good signature */
	t = sign(rsa_a, rs("a"), json_incref(c));
	t[strlen(t) - 5] = t[strlen(t) - 5] == 'A' ? 'B' : 'A';
	ck_assert_int_eq(verify(t, "n-1", why, sizeof(why)), RZ_EAUTH);
	/* an RS256 header on the EC key's kid */
	ck_assert_int_eq(verify(sign(rsa_a, rs("c"), json_incref(c)), "n-1", why, sizeof(why)),
	                 RZ_EAUTH);
	/* alg none, and HS256 (the public key taken for an HMAC secret): refused before any key */
	{
		char h[64], p[4096], *none = NULL;
		char *pj = json_dumps(c, JSON_COMPACT);
		b64((const unsigned char *)"{\"alg\":\"none\"}", 14, h, sizeof(h));
		b64((unsigned char *)pj, strlen(pj), p, sizeof(p));
		ck_assert_int_gt(asprintf(&none, "%s.%s.", h, p), 0);
		ck_assert_int_eq(verify(none, "n-1", why, sizeof(why)), RZ_EAUTH);
		ck_assert_ptr_nonnull(strstr(why, "algorithm"));
		b64((const unsigned char *)"{\"alg\":\"HS256\",\"kid\":\"a\"}", 25, h, sizeof(h));
		ck_assert_int_gt(asprintf(&none, "%s.%s.c2lnbmF0dXJl", h, p), 0);
		ck_assert_int_eq(verify(none, "n-1", why, sizeof(why)), RZ_EAUTH);
		ck_assert_ptr_nonnull(strstr(why, "algorithm"));
		free(pj);
	}
	/* malformed: two parts, four parts, not base64url, not JSON */
	ck_assert_int_eq(verify(strdup("abc.def"), "n-1", why, sizeof(why)), RZ_EAUTH);
	ck_assert_int_eq(verify(strdup("a.b.c.d"), "n-1", why, sizeof(why)), RZ_EAUTH);
	ck_assert_int_eq(verify(strdup("!!.??.**"), "n-1", why, sizeof(why)), RZ_EAUTH);
	ck_assert_int_eq(verify(strdup("e30.bm90anNvbg.AA"), "n-1", why, sizeof(why)), RZ_EAUTH);
	json_decref(c);
}
END_TEST

START_TEST(test_oversized_and_weak)
{
	char why[256], *big = malloc(RZ_OIDC_TOKEN_MAX + 2), *pad;
	json_t *c = claims();
	EVP_PKEY *weak = EVP_RSA_gen(1024);

	memset(big, 'A', RZ_OIDC_TOKEN_MAX + 1);
	big[RZ_OIDC_TOKEN_MAX + 1] = '\0';
	ck_assert_int_eq(verify(big, "n-1", why, sizeof(why)), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(why, "longer"));
	/* a token signed right but padded past the limit with a claim */
	pad = calloc(1, RZ_OIDC_TOKEN_MAX);
	memset(pad, 'x', RZ_OIDC_TOKEN_MAX - 1);
	json_object_set_new(c, "pad", json_string(pad));
	ck_assert_int_eq(verify(sign(rsa_a, rs("a"), json_incref(c)), "n-1", why, sizeof(why)),
	                 RZ_EAUTH);
	free(pad);
	json_object_del(c, "pad");
	/* a 1024-bit RSA key is not taken */
	{
		json_t *set = keyset(jwk(weak, "w"), NULL), *got = NULL;
		rz_oidc_expect_t x = { .issuer = ISS, .audiences = { "web" }, .now = time(NULL) };
		rz_err_t err = { 0 };
		char *t = sign(weak, rs("w"), json_incref(c));
		ck_assert_int_eq(rz_oidc_verify(t, set, &x, &got, &err), RZ_EAUTH);
		free(t);
		json_decref(set);
	}
	EVP_PKEY_free(weak);
	json_decref(c);
}
END_TEST

START_TEST(test_unknown_kid)
{
	json_t *old = keyset(jwk(rsa_a, "a"), NULL),
	       *rotated = keyset(jwk(rsa_a, "a"), jwk(rsa_b, "b"));
	json_t *got = NULL;
	rz_oidc_expect_t x = { .issuer = ISS, .audiences = { "web" }, .now = time(NULL) };
	rz_err_t err = { 0 };
	char *t = sign(rsa_b, rs("b"), claims());

	ck_assert_int_eq(rz_oidc_verify(t, old, &x, &got, &err), RZ_ENOTFOUND);
	ck_assert_int_eq(rz_oidc_verify(t, rotated, &x, &got, &err), 0);
	json_decref(got);
	free(t);
	json_decref(old);
	json_decref(rotated);
}
END_TEST

/* ------------------------------------------------------------------ the provider, fetched */

static struct server {
	json_t *jwks;
	int discovery, keys; /* requests seen */
	char issuer[64];
} srv;

static void serve_discovery(rz_req_t *req, void *ctx)
{
	char uri[128];

	srv.discovery++;
	snprintf(uri, sizeof(uri), "%s/jwks", srv.issuer);
	rz_reply_json(req, 200,
	              json_pack("{s:s, s:s, s:s, s:s}", "issuer", srv.issuer, "jwks_uri", uri,
	                        "authorization_endpoint", uri, "token_endpoint", uri));
}

static void serve_jwks(rz_req_t *req, void *ctx)
{
	srv.keys++;
	rz_reply_json(req, 200, json_incref(srv.jwks));
}

struct outcome {
	struct event_base *base;
	int rc, calls;
	char msg[256];
};

static void on_checked(void *arg, const rz_oidc_result_t *r)
{
	struct outcome *o = arg;

	o->rc = r->rc;
	o->calls++;
	snprintf(o->msg, sizeof(o->msg), "%s", r->err.msg);
	event_base_loopbreak(o->base);
}

/* rz_oidc_check of token, the loop run until it answers. */
static int check_token(rz_oidc_t *o, struct event_base *base, char *token, const char *nonce)
{
	struct outcome out = { base, 0, 0, "" };

	ck_assert_int_eq(rz_oidc_check(o, token, nonce, on_checked, &out), 0);
	while (out.calls == 0) {
		event_base_loop(base, EVLOOP_ONCE);
	}
	free(token);
	return out.rc;
}

START_TEST(test_rotation_refetches)
{
	static const rz_route_t routes[] = {
		{ .methods = RZ_M_GET,
		  .pattern = "/.well-known/openid-configuration",
		  .fn = serve_discovery,
		  .role = RZ_ROLE_PUBLIC },
		{ .methods = RZ_M_GET,
		  .pattern = "/jwks",
		  .fn = serve_jwks,
		  .role = RZ_ROLE_PUBLIC },
	};
	struct event_base *base = event_base_new();
	rz_http_t *http = NULL;
	rz_workers_t *w = NULL;
	rz_oidc_t *o = NULL;
	rz_config_t cfg;
	rz_err_t err = { 0 };
	json_t *c;

	ck_assert_int_eq(rz_http_new(&http, base, NULL, &err), 0);
	ck_assert_int_eq(rz_http_add_routes(http, routes, 2, &err), 0);
	ck_assert_int_eq(rz_http_listen(http, "127.0.0.1:0", &err), 0);
	ck_assert_int_eq(rz_workers_new(&w, base, 1, &err), 0);
	snprintf(srv.issuer, sizeof(srv.issuer), "http://127.0.0.1:%d", rz_http_port(http));
	srv.jwks = keyset(jwk(rsa_a, "a"), NULL);
	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	ck_assert_int_eq(rz_config_set(&cfg, "auth.oidc.issuer", srv.issuer, "test", &err), 0);
	ck_assert_int_eq(rz_config_set(&cfg, "auth.oidc.client_id", "web", "test", &err), 0);
	ck_assert_int_eq(rz_oidc_new(&o, &cfg, w, base, &err), 0);

	c = claims();
	json_object_set_new(c, "iss", json_string(srv.issuer));
	/* the first check fetches discovery and keys */
	ck_assert_int_eq(check_token(o, base, sign(rsa_a, rs("a"), json_incref(c)), "n-1"), 0);
	ck_assert_int_eq(srv.discovery, 1);
	ck_assert_int_eq(srv.keys, 1);
	/* the provider rotates to B: a token of kid b has the keys fetched again, and passes */
	json_decref(srv.jwks);
	srv.jwks = keyset(jwk(rsa_b, "b"), NULL);
	ck_assert_int_eq(check_token(o, base, sign(rsa_b, rs("b"), json_incref(c)), "n-1"), 0);
	ck_assert_int_eq(srv.keys, 2);
	ck_assert_int_eq(srv.discovery, 1);
	/* another unknown kid right after: no fetch (at most one per RZ_OIDC_REFETCH_S), refused */
	ck_assert_int_eq(check_token(o, base, sign(rsa_a, rs("z"), json_incref(c)), "n-1"),
	                 RZ_EAUTH);
	ck_assert_int_eq(srv.keys, 2);
	/* the cached keys serve the next token without a fetch */
	ck_assert_int_eq(check_token(o, base, sign(rsa_b, rs("b"), json_incref(c)), "n-1"), 0);
	ck_assert_int_eq(srv.keys, 2);

	json_decref(c);
	rz_workers_free(w);
	rz_oidc_free(o);
	rz_http_free(http);
	rz_config_free(&cfg);
	json_decref(srv.jwks);
	event_base_free(base);
}
END_TEST

/* ------------------------------------------------------------------ identity */

START_TEST(test_identity)
{
	rz_config_t cfg;
	rz_err_t err = { 0 };
	rz_sso_identity_t id;
	json_t *c = claims();

	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	ck_assert_int_eq(rz_sso_identity(&cfg, c, &id, &err), 0);
	ck_assert_str_eq(id.user, "alice");
	ck_assert_str_eq(id.subject, "u-1");
	ck_assert_uint_eq(id.ngroups, 2);
	ck_assert_str_eq(id.groups[0], "oidc-team-a");
	ck_assert_str_eq(id.groups[1], "oidc-platform-admins");
	ck_assert_int_eq(id.role, RZ_ROLE_NONE);
	ck_assert(!id.mapped);

	ck_assert_int_eq(
	    rz_config_set(&cfg, "auth.oidc.roles", "team-a=view,platform-admins=admin", "t", &err),
	    0);
	json_object_set_new(c, "groups",
	                    json_pack("[s,s,s,s]", "team-a", "Team B", "platform-admins", "x"));
	ck_assert_int_eq(rz_sso_identity(&cfg, c, &id, &err), 0);
	ck_assert(id.mapped);
	ck_assert_int_eq(id.role, RZ_ROLE_ADMIN); /* the highest */
	ck_assert_uint_eq(id.ngroups, 3);         /* "Team B" makes no DNS label */
	ck_assert_uint_eq(id.dropped, 1);

	json_object_set_new(c, "preferred_username", json_string("Alice Smith"));
	ck_assert_int_eq(rz_sso_identity(&cfg, c, &id, &err), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a DNS label"));
	json_object_del(c, "preferred_username");
	ck_assert_int_eq(rz_sso_identity(&cfg, c, &id, &err), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(err.msg, "preferred_username"));
	ck_assert_int_eq(rz_config_set(&cfg, "auth.oidc.username_claim", "sub", "t", &err), 0);
	ck_assert_int_eq(rz_sso_identity(&cfg, c, &id, &err), 0);
	ck_assert_str_eq(id.user, "u-1");
	json_decref(c);
	rz_config_free(&cfg);
}
END_TEST

START_TEST(test_settings)
{
	rz_config_t cfg;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_config_defaults(&cfg), 0);
	ck_assert_int_eq(rz_config_validate(&cfg, &err), 0);
	rz_config_set(&cfg, "auth.oidc.issuer", "http://id.example.com", "t", &err);
	ck_assert_int_eq(rz_config_validate(&cfg, &err), REZUS_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "https"));
	rz_config_set(&cfg, "auth.oidc.issuer", "http://127.0.0.1:9000", "t", &err);
	ck_assert_int_eq(rz_config_validate(&cfg, &err), REZUS_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "client_id"));
	rz_config_set(&cfg, "auth.oidc.client_id", "web", "t", &err);
	ck_assert_int_eq(rz_config_validate(&cfg, &err), 0);
	rz_config_set(&cfg, "auth.oidc.roles", "ops=root", "t", &err);
	ck_assert_int_eq(rz_config_validate(&cfg, &err), REZUS_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "group=role"));
	rz_config_free(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("oidc");
	TCase *tc = tcase_create("oidc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_valid_tokens);
	tcase_add_test(tc, test_claims_refused);
	tcase_add_test(tc, test_signatures_refused);
	tcase_add_test(tc, test_oversized_and_weak);
	tcase_add_test(tc, test_unknown_kid);
	tcase_add_test(tc, test_rotation_refetches);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_settings);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
