/* core/http/tls.c - OpenSSL contexts and bufferevents for the HTTP server. */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/http/tls.h"

/* Mozilla's "intermediate" configuration (ssl-config.mozilla.org, version 5.7) for TLS 1.2;
 * TLS 1.3 keeps OpenSSL's suites, which are the same three. */
#define CIPHERS_TLS12                                                                              \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                               \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"                               \
	"DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305"
#define GROUPS       "X25519:prime256v1:secp384r1"
#define SELF_DAYS    365
#define MAX_SAN_TEXT 2048

struct rz_tls {
	char *cert_file, *key_file, *client_ca_file;
	SSL_CTX *ctx;
	char fingerprint[96];
};

static const char refusal[] = "HTTP/1.1 400 Bad Request\r\n"
                              "Content-Type: text/plain; charset=utf-8\r\n"
                              "Connection: close\r\n"
                              "Content-Length: 48\r\n"
                              "\r\n"
                              "Client sent an HTTP request to an HTTPS server.\n";

const char *rz_tls_plain_refusal(size_t *len)
{
	*len = sizeof(refusal) - 1;
	return refusal;
}

enum rz_tls_hello rz_tls_classify(const unsigned char *buf, size_t len)
{
	if (len == 0) {
		return RZ_TLS_HELLO_MORE;
	}
	if (buf[0] == 0x16) { /* ContentType handshake (RFC 8446 §5.1) */
		return RZ_TLS_HELLO_TLS;
	}
	if (buf[0] >= 'A' && buf[0] <= 'Z') { /* GET, POST, PUT, LOCK, ... */
		return RZ_TLS_HELLO_HTTP;
	}
	return RZ_TLS_HELLO_OTHER;
}

/* OpenSSL's last error into err, after prefix. */
static int ssl_fail(rz_err_t *err, const char *what, const char *path)
{
	unsigned long e = ERR_peek_last_error();
	char why[200] = "unknown error";

	if (e != 0) {
		const char *reason = ERR_reason_error_string(e);
		snprintf(why, sizeof(why), "%s", reason != NULL ? reason : "unknown error");
	}
	ERR_clear_error();
	return rz_err_set(err, REZUS_ECONFIG, "tls: %s '%s' failed: %s", what, path ? path : "",
	                  why);
}

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char ours[] = "\x08http/1.1";
	unsigned char *sel = NULL;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, ours, sizeof(ours) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED) {
		return SSL_TLSEXT_ERR_NOACK; /* h2 only: go on without ALPN, HTTP/1.1 it is */
	}
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

static int set_fingerprint(rz_tls_t *t, SSL_CTX *ctx, char *out, size_t size, rz_err_t *err)
{
	X509 *x = SSL_CTX_get0_certificate(ctx);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (x == NULL || X509_digest(x, EVP_sha256(), md, &n) != 1 || n * 3 > size) {
		return ssl_fail(err, "fingerprinting", t->cert_file);
	}
	for (unsigned int i = 0; i < n; i++) {
		snprintf(out + i * 3, 4, "%02X%s", md[i], i + 1 < n ? ":" : "");
	}
	return 0;
}

static int load_client_ca(SSL_CTX *ctx, const char *file, rz_err_t *err)
{
	STACK_OF(X509_NAME) * names;

	if (SSL_CTX_load_verify_locations(ctx, file, NULL) != 1) {
		return ssl_fail(err, "loading the client CA file", file);
	}
	names = SSL_load_client_CA_file(file);
	if (names == NULL) {
		return ssl_fail(err, "reading the client CA names of", file);
	}
	SSL_CTX_set_client_CA_list(ctx, names);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	return 0;
}

/* A new context from t's files, with its certificate's fingerprint. */
static int build(rz_tls_t *t, SSL_CTX **out, char *fp, size_t fpsize, rz_err_t *err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	int rc = 0;

	*out = NULL;
	if (ctx == NULL) {
		return rz_err_set(err, -ENOMEM, "tls: out of memory");
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_dh_auto(ctx, 1);
	SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
	if (SSL_CTX_set_cipher_list(ctx, CIPHERS_TLS12) != 1 ||
	    SSL_CTX_set1_groups_list(ctx, GROUPS) != 1) {
		rc = ssl_fail(err, "setting the cipher list", "");
	} else if (SSL_CTX_use_certificate_chain_file(ctx, t->cert_file) != 1) {
		rc = ssl_fail(err, "loading the certificate", t->cert_file);
	} else if (SSL_CTX_use_PrivateKey_file(ctx, t->key_file, SSL_FILETYPE_PEM) != 1) {
		rc = ssl_fail(err, "loading the private key", t->key_file);
	} else if (SSL_CTX_check_private_key(ctx) != 1) {
		rc = ssl_fail(err, "matching the private key to the certificate", t->key_file);
	} else if (t->client_ca_file != NULL) {
		rc = load_client_ca(ctx, t->client_ca_file, err);
	}
	if (rc == 0) {
		rc = set_fingerprint(t, ctx, fp, fpsize, err);
	}
	if (rc != 0) {
		SSL_CTX_free(ctx);
		return rc;
	}
	*out = ctx;
	return 0;
}

int rz_tls_new(rz_tls_t **out, const rz_tls_opts_t *opts, rz_err_t *err)
{
	rz_tls_t *t = calloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	if (t == NULL) {
		return rz_err_set(err, -ENOMEM, "tls: out of memory");
	}
	t->cert_file = strdup(opts->cert_file ? opts->cert_file : "");
	t->key_file = strdup(opts->key_file ? opts->key_file : "");
	if (opts->client_ca_file != NULL && opts->client_ca_file[0] != '\0') {
		t->client_ca_file = strdup(opts->client_ca_file);
		if (t->client_ca_file == NULL) {
			rz_tls_free(t);
			return rz_err_set(err, -ENOMEM, "tls: out of memory");
		}
	}
	if (t->cert_file == NULL || t->key_file == NULL) {
		rz_tls_free(t);
		return rz_err_set(err, -ENOMEM, "tls: out of memory");
	}
	rc = build(t, &t->ctx, t->fingerprint, sizeof(t->fingerprint), err);
	if (rc != 0) {
		rz_tls_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int rz_tls_reload(rz_tls_t *t, rz_err_t *err)
{
	SSL_CTX *ctx;
	char fp[sizeof(t->fingerprint)];
	int rc = build(t, &ctx, fp, sizeof(fp), err);

	if (rc != 0) {
		return rc;
	}
	SSL_CTX_free(t->ctx); /* each open connection's SSL holds a reference of its own */
	t->ctx = ctx;
	memcpy(t->fingerprint, fp, sizeof(fp));
	return 0;
}

const char *rz_tls_fingerprint(const rz_tls_t *t)
{
	return t->fingerprint;
}

struct bufferevent *rz_tls_accept(rz_tls_t *t, struct event_base *base, int fd)
{
	SSL *ssl = SSL_new(t->ctx);
	struct bufferevent *bev;

	if (ssl == NULL) {
		return NULL;
	}
	bev = bufferevent_openssl_socket_new(base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
	                                     BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		SSL_free(ssl); /* libevent leaves it to the caller on failure */
		return NULL;
	}
	/* a client that closes without close_notify ends its connection like any other */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

void rz_tls_free(rz_tls_t *t)
{
	if (t == NULL) {
		return;
	}
	SSL_CTX_free(t->ctx);
	free(t->cert_file);
	free(t->key_file);
	free(t->client_ca_file);
	free(t);
}

/* ------------------------------------------------------------------ client */

struct rz_tls_client {
	SSL_CTX *ctx;
};

int rz_tls_client_new(rz_tls_client_t **out, const char *ca_file, rz_err_t *err)
{
	rz_tls_client_t *c = calloc(1, sizeof(*c));
	int rc = 0;

	*out = NULL;
	if (c == NULL || (c->ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		free(c);
		return rz_err_set(err, -ENOMEM, "tls: out of memory");
	}
	SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(c->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_set_cipher_list(c->ctx, CIPHERS_TLS12) != 1 ||
	    SSL_CTX_set1_groups_list(c->ctx, GROUPS) != 1) {
		rc = ssl_fail(err, "setting the cipher list", "");
	} else if (ca_file != NULL && ca_file[0] != '\0') {
		if (SSL_CTX_load_verify_locations(c->ctx, ca_file, NULL) != 1) {
			rc = ssl_fail(err, "loading the CA file", ca_file);
		}
	} else if (SSL_CTX_set_default_verify_paths(c->ctx) != 1) {
		rc = ssl_fail(err, "loading the system's CAs", "");
	}
	if (rc != 0) {
		rz_tls_client_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

struct bufferevent *rz_tls_connect(rz_tls_client_t *c, struct event_base *base, const char *host)
{
	SSL *ssl = SSL_new(c->ctx);
	unsigned char addr[sizeof(struct in6_addr)];
	bool ip = inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
	struct bufferevent *bev;

	if (ssl == NULL) {
		return NULL;
	}
	/* the certificate must name host: an IP address in its IP SANs, a name in its DNS
	 * ones (wildcards as RFC 6125 has them); SNI for names only (RFC 6066 §3) */
	if ((ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
	        : SSL_set1_host(ssl, host)) != 1 ||
	    (!ip && SSL_set_tlsext_host_name(ssl, host) != 1)) {
		SSL_free(ssl);
		return NULL;
	}
	bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
	                                     BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		SSL_free(ssl); /* libevent leaves it to the caller on failure */
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

void rz_tls_client_error(struct bufferevent *bev, char *buf, size_t size)
{
	SSL *ssl = bev != NULL ? bufferevent_openssl_get_ssl(bev) : NULL;
	long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	unsigned long e = bev != NULL ? bufferevent_get_openssl_error(bev) : 0;

	buf[0] = '\0';
	if (v != X509_V_OK) {
		snprintf(buf, size, "the server's certificate: %s",
		         X509_verify_cert_error_string(v));
	} else if (e != 0) {
		ERR_error_string_n(e, buf, size);
	}
}

void rz_tls_client_free(rz_tls_client_t *c)
{
	if (c == NULL) {
		return;
	}
	SSL_CTX_free(c->ctx);
	free(c);
}

/* ------------------------------------------------------------------ self-signed */

/* "DNS:localhost,IP:127.0.0.1,IP:::1" and each host once, wildcards left out. */
static int san_text(char *buf, size_t size, const char *const *hosts)
{
	size_t n = (size_t)snprintf(buf, size, "DNS:localhost,IP:127.0.0.1,IP:::1");

	for (; hosts != NULL && *hosts != NULL; hosts++) {
		const char *h = *hosts;
		unsigned char addr[16];
		bool ip = inet_pton(AF_INET, h, addr) == 1 || inet_pton(AF_INET6, h, addr) == 1;
		if (h[0] == '\0' || strcmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 ||
		    strcmp(h, "::1") == 0 || strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 ||
		    strpbrk(h, ", \t\r\n") != NULL) {
			continue;
		}
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, ",%s:%s", ip ? "IP" : "DNS",
		                      h);
	}
	return n < size ? 0 : -ENAMETOOLONG;
}

static int add_ext(X509 *x, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL) {
		return -1;
	}
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : -1;
}

static X509 *make_cert(EVP_PKEY *key, const char *san)
{
	X509 *x = X509_new();
	X509_NAME *name = NULL;
	BIGNUM *serial = BN_new();
	bool ok = x != NULL && serial != NULL;

	ok = ok && X509_set_version(x, 2) == 1 &&
	     BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1;
	ok = ok && BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) != NULL;
	ok = ok && X509_gmtime_adj(X509_getm_notBefore(x), -3600) != NULL &&
	     X509_gmtime_adj(X509_getm_notAfter(x), (long)SELF_DAYS * 86400) != NULL;
	ok = ok && X509_set_pubkey(x, key) == 1 && (name = X509_get_subject_name(x)) != NULL &&
	     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                                (const unsigned char *)"rezuscloud", -1, -1, 0) == 1 &&
	     X509_set_issuer_name(x, name) == 1;
	ok = ok && add_ext(x, NID_basic_constraints, "critical,CA:FALSE") == 0 &&
	     add_ext(x, NID_key_usage, "critical,digitalSignature") == 0 &&
	     add_ext(x, NID_ext_key_usage, "serverAuth") == 0 &&
	     add_ext(x, NID_subject_key_identifier, "hash") == 0 &&
	     add_ext(x, NID_subject_alt_name, san) == 0;
	ok = ok && X509_sign(x, key, EVP_sha256()) > 0;
	BN_free(serial);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Write a PEM file at path through path.tmp (0600) and a rename. */
static int write_pem(const char *path, EVP_PKEY *key, X509 *x, rz_err_t *err)
{
	char tmp[4096];
	FILE *f;
	int fd, ok;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		return rz_err_set(err, -ENAMETOOLONG, "tls: path too long: '%s'", path);
	}
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		return rz_err_set(err, -e, "tls: creating '%s' failed: %s", tmp, strerror(e));
	}
	ok = key != NULL ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)
	                 : PEM_write_X509(f, x);
	ok = ok == 1 && fflush(f) == 0 && fsync(fileno(f)) == 0;
	if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
		int e = errno ? errno : EIO;
		unlink(tmp);
		return rz_err_set(err, -e, "tls: writing '%s' failed: %s", path, strerror(e));
	}
	return 0;
}

/* Does the certificate in cert_file name every one of hosts (a file that does not read
 * names none: it is made again)? */
static bool names_all(const char *cert_file, const char *const *hosts)
{
	FILE *f = fopen(cert_file, "r");
	X509 *x = f != NULL ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	bool ok = x != NULL;

	if (f != NULL) {
		fclose(f);
	}
	for (; ok && hosts != NULL && *hosts != NULL; hosts++) {
		const char *h = *hosts;
		unsigned char addr[16];
		if (h[0] == '\0' || strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 ||
		    strpbrk(h, ", \t\r\n") != NULL) {
			continue; /* san_text leaves these out too */
		}
		ok = inet_pton(AF_INET, h, addr) == 1 || inet_pton(AF_INET6, h, addr) == 1
		         ? X509_check_ip_asc(x, h, 0) == 1
		         : X509_check_host(x, h, 0, X509_CHECK_FLAG_NO_WILDCARDS, NULL) == 1;
	}
	X509_free(x);
	return ok;
}

int rz_tls_self_signed(const char *cert_file, const char *key_file, const char *const *hosts,
                       bool *created, rz_err_t *err)
{
	char san[MAX_SAN_TEXT];
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	int rc;

	*created = false;
	if (access(cert_file, F_OK) == 0 && access(key_file, F_OK) == 0 &&
	    names_all(cert_file, hosts)) {
		return 0;
	}
	if (san_text(san, sizeof(san), hosts) != 0) {
		return rz_err_set(err, -ENAMETOOLONG,
		                  "tls: too many host names for the certificate");
	}
	key = EVP_EC_gen("P-256");
	x = key != NULL ? make_cert(key, san) : NULL;
	if (x == NULL) {
		rc = ssl_fail(err, "making a self-signed certificate for", cert_file);
	} else {
		rc = write_pem(key_file, key, NULL, err);
	}
	if (rc == 0) {
		rc = write_pem(cert_file, NULL, x, err);
	}
	X509_free(x);
	EVP_PKEY_free(key);
	*created = rc == 0;
	return rc;
}
