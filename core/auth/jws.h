/*
 * core/auth/jws.h - JSON Web Signatures checked with JSON Web Keys (RFC 7515, 7517, 7518):
 * RS256 and ES256, the algorithms OpenID providers sign ID tokens with, and the base64url
 * of JOSE. The one file of core/auth that sees OpenSSL; nothing of it shows here.
 */
#ifndef RZ_JWS_H
#define RZ_JWS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/base/errors.h"

#define RZ_JWK_RSA_MIN_BITS 2048 /* a shorter RSA key is refused */
#define RZ_JWK_RSA_MAX_BITS 8192 /* and a longer one (a verification costs its size) */

/* Whether alg is one rz_jws_verify checks ("RS256", "ES256"). */
bool rz_jws_alg_supported(const char *alg);

/* Whether sig (siglen raw bytes: RSASSA-PKCS1-v1_5, or R||S for ES256) is alg's signature
 * of input (len bytes, the JWS signing input "b64(header).b64(payload)") under jwk (a JSON
 * object, borrowed): kty RSA with n and e for RS256, kty EC with crv P-256, x and y for
 * ES256; a key whose "use" is set must say "sig", and whose "alg" is set must be alg. 0 when
 * it is; RZ_EAUTH with err saying why otherwise (an algorithm not supported, a key of
 * another type, a malformed or weak key, a wrong signature). */
int rz_jws_verify(const json_t *jwk, const char *alg, const char *input, size_t len,
                  const unsigned char *sig, size_t siglen, rz_err_t *err);

/* base64url without padding (RFC 7515 §2) of len bytes of s into out (size bytes): 0 with
 * *outlen set, or -EINVAL for anything else (padding, other characters, too long). */
int rz_b64url_decode(const char *s, size_t len, unsigned char *out, size_t size, size_t *outlen);

/* The base64url without padding of len bytes into out (size at least len * 4 / 3 + 2,
 * NUL-terminated): -ENOSPC when it does not fit. */
int rz_b64url_encode(const unsigned char *in, size_t len, char *out, size_t size);

#endif /* RZ_JWS_H */
