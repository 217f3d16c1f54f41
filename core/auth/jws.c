/* core/auth/jws.c - JWS signatures (RS256, ES256) checked with JWKs, through OpenSSL. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <sodium.h>

#include "core/auth/jws.h"

#define MAX_KEY_BYTES (RZ_JWK_RSA_MAX_BITS / 8 + 1)
#define EC_COORD      32 /* P-256 */

bool rz_jws_alg_supported(const char *alg)
{
	return alg != NULL && (strcmp(alg, "RS256") == 0 || strcmp(alg, "ES256") == 0);
}

int rz_b64url_decode(const char *s, size_t len, unsigned char *out, size_t size, size_t *outlen)
{
	const char *end = NULL;

	*outlen = 0;
	if (len == 0) {
		return 0;
	}
	if (sodium_base642bin(out, size, s, len, NULL, outlen, &end,
	                      sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    end != s + len) {
		*outlen = 0;
		return -EINVAL;
	}
	return 0;
}

int rz_b64url_encode(const unsigned char *in, size_t len, char *out, size_t size)
{
	if (size < sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_URLSAFE_NO_PADDING)) {
		return -ENOSPC;
	}
	sodium_bin2base64(out, size, in, len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return 0;
}

/* A member of jwk decoded from base64url into out: its length, or 0 when absent or bad. */
static size_t member(const json_t *jwk, const char *name, unsigned char *out, size_t size)
{
	const char *v = json_string_value(json_object_get(jwk, name));
	size_t n = 0;

	if (v == NULL || rz_b64url_decode(v, strlen(v), out, size, &n) != 0) {
		return 0;
	}
	return n;
}

static EVP_PKEY *from_params(const char *type, OSSL_PARAM_BLD *b)
{
	OSSL_PARAM *params = b != NULL ? OSSL_PARAM_BLD_to_param(b) : NULL;
	EVP_PKEY_CTX *ctx = params != NULL ? EVP_PKEY_CTX_new_from_name(NULL, type, NULL) : NULL;
	EVP_PKEY *key = NULL;

	if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		key = NULL;
	}
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return key;
}

static EVP_PKEY *rsa_key(const json_t *jwk, rz_err_t *err)
{
	unsigned char *nb = NULL; /* n, then e at MAX_KEY_BYTES */
	size_t nlen, elen;
	BIGNUM *bn = NULL, *be = NULL;
	OSSL_PARAM_BLD *b = NULL;
	EVP_PKEY *key = NULL;

	if ((nb = malloc(MAX_KEY_BYTES + 16)) == NULL) {
		rz_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	nlen = member(jwk, "n", nb, MAX_KEY_BYTES);
	elen = member(jwk, "e", nb + MAX_KEY_BYTES, 16);
	while (nlen > 0 && nb[0] == 0) { /* a leading zero octet is not part of the size */
		memmove(nb, nb + 1, --nlen);
	}
	if (nlen * 8 < RZ_JWK_RSA_MIN_BITS || nlen * 8 > RZ_JWK_RSA_MAX_BITS || elen == 0) {
		rz_err_set(err, RZ_EAUTH, "the RSA key is malformed or not %d to %d bits",
		           RZ_JWK_RSA_MIN_BITS, RZ_JWK_RSA_MAX_BITS);
		goto out;
	}
	bn = BN_bin2bn(nb, (int)nlen, NULL);
	be = BN_bin2bn(nb + MAX_KEY_BYTES, (int)elen, NULL);
	b = OSSL_PARAM_BLD_new();
	if (bn == NULL || be == NULL || b == NULL ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, bn) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, be) ||
	    (key = from_params("RSA", b)) == NULL) {
		rz_err_set(err, RZ_EAUTH, "the RSA key cannot be read");
	}
out:
	OSSL_PARAM_BLD_free(b);
	BN_free(bn);
	BN_free(be);
	free(nb);
	return key;
}

static EVP_PKEY *ec_key(const json_t *jwk, rz_err_t *err)
{
	unsigned char point[1 + 2 * EC_COORD];
	OSSL_PARAM_BLD *b = NULL;
	EVP_PKEY *key = NULL;
	const char *crv = json_string_value(json_object_get(jwk, "crv"));

	point[0] = 0x04; /* uncompressed */
	if (crv == NULL || strcmp(crv, "P-256") != 0 ||
	    member(jwk, "x", point + 1, EC_COORD + 1) != EC_COORD ||
	    member(jwk, "y", point + 1 + EC_COORD, EC_COORD + 1) != EC_COORD) {
		rz_err_set(err, RZ_EAUTH, "the EC key is not a P-256 key");
		return NULL;
	}
	b = OSSL_PARAM_BLD_new();
	if (b == NULL ||
	    !OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point)) ||
	    (key = from_params("EC", b)) == NULL) {
		rz_err_set(err, RZ_EAUTH, "the EC key cannot be read (not on the curve?)");
	}
	OSSL_PARAM_BLD_free(b);
	return key;
}

/* R||S (JWS) as the DER ECDSA-Sig-Value OpenSSL verifies: its length, 0 on failure. */
static size_t ec_der(const unsigned char *sig, size_t siglen, unsigned char *der, size_t size)
{
	ECDSA_SIG *s;
	BIGNUM *r, *sv;
	unsigned char *p = der;
	int n = 0;

	if (siglen != 2 * EC_COORD) {
		return 0;
	}
	s = ECDSA_SIG_new();
	r = BN_bin2bn(sig, EC_COORD, NULL);
	sv = BN_bin2bn(sig + EC_COORD, EC_COORD, NULL);
	if (s != NULL && r != NULL && sv != NULL && ECDSA_SIG_set0(s, r, sv) == 1) {
		r = sv = NULL; /* s owns them */
		if (i2d_ECDSA_SIG(s, NULL) <= (int)size) {
			n = i2d_ECDSA_SIG(s, &p);
		}
	}
	BN_free(r);
	BN_free(sv);
	ECDSA_SIG_free(s);
	return n > 0 ? (size_t)n : 0;
}

/* The key's own restrictions: use "sig" and the same alg, when it names them. */
static bool key_allows(const json_t *jwk, const char *kty, const char *alg)
{
	const char *k = json_string_value(json_object_get(jwk, "kty"));
	const char *use = json_string_value(json_object_get(jwk, "use"));
	const char *a = json_string_value(json_object_get(jwk, "alg"));

	return k != NULL && strcmp(k, kty) == 0 && (use == NULL || strcmp(use, "sig") == 0) &&
	       (a == NULL || strcmp(a, alg) == 0);
}

int rz_jws_verify(const json_t *jwk, const char *alg, const char *input, size_t len,
                  const unsigned char *sig, size_t siglen, rz_err_t *err)
{
	bool ec = alg != NULL && strcmp(alg, "ES256") == 0;
	unsigned char der[2 * EC_COORD + 16];
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	int rc = RZ_EAUTH;

	if (!rz_jws_alg_supported(alg)) {
		return rz_err_set(err, RZ_EAUTH, "the algorithm '%.16s' is not accepted",
		                  alg ? alg : "(none)");
	}
	if (!key_allows(jwk, ec ? "EC" : "RSA", alg)) {
		return rz_err_set(err, RZ_EAUTH, "the key is not a %s signing key", alg);
	}
	key = ec ? ec_key(jwk, err) : rsa_key(jwk, err);
	if (key == NULL) {
		return RZ_EAUTH;
	}
	if (ec && (siglen = ec_der(sig, siglen, der, sizeof(der))) == 0) {
		rz_err_set(err, RZ_EAUTH, "the signature is malformed");
		goto out;
	}
	md = EVP_MD_CTX_new();
	if (md == NULL || EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) != 1) {
		rz_err_set(err, -ENOMEM, "cannot verify a signature");
		goto out;
	}
	if (EVP_DigestVerify(md, ec ? der : sig, siglen, (const unsigned char *)input, len) != 1) {
		rz_err_set(err, RZ_EAUTH, "the signature does not match the key");
		goto out;
	}
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	return rc;
}
