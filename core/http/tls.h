/*
 * core/http/tls.h - TLS for the HTTP server and its client: OpenSSL contexts, libevent's
 * OpenSSL bufferevents, self-signed certificates and fingerprints.
 *
 * The only module that sees OpenSSL types. A context is built from a certificate chain, its
 * key and, optionally, a CA file that client certificates must chain to: TLS 1.2 at least,
 * Mozilla's "intermediate" cipher list for TLS 1.2 (TLS 1.3's suites as OpenSSL has them),
 * ALPN "http/1.1", no renegotiation. rz_tls_reload() builds a new context from the same
 * files; connections already open keep the context they were accepted with, and a context
 * that fails to build leaves the old one in place.
 */
#ifndef RZ_TLS_H
#define RZ_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/base/errors.h"

struct bufferevent;
struct event_base;

typedef struct rz_tls rz_tls_t;

/* Paths of PEM files. Copied by rz_tls_new. */
typedef struct rz_tls_opts {
	const char *cert_file;      /* the certificate, then its chain */
	const char *key_file;       /* its private key */
	const char *client_ca_file; /* NULL or "": no client certificates asked for; else one
	                               chaining to these CAs is required */
} rz_tls_opts_t;

/* Load the files into a context. Caller owns *out; rz_tls_free(). */
int rz_tls_new(rz_tls_t **out, const rz_tls_opts_t *opts, rz_err_t *err);

/* Build a new context from the same files and use it for connections accepted from now on.
 * On failure the old context stays and err says why. */
int rz_tls_reload(rz_tls_t *t, rz_err_t *err);

/* The SHA-256 fingerprint of the certificate in use: "AB:CD:..." (95 characters). Borrowed —
 * valid until the next rz_tls_reload or rz_tls_free. */
const char *rz_tls_fingerprint(const rz_tls_t *t);

/* A server-side TLS bufferevent on fd, handshake pending, closing fd when freed. NULL when
 * out of memory (fd is then the caller's to close). */
struct bufferevent *rz_tls_accept(rz_tls_t *t, struct event_base *base, int fd);

/* Accepts NULL. Connections open keep their context until they close. */
void rz_tls_free(rz_tls_t *t);

/* The client side (core/http/client.h's requests): a context that verifies the server's
 * certificate against ca_file (PEM CAs; NULL or "": the system's) and its name, TLS 1.2 at
 * least. Caller owns *out; rz_tls_client_free(). */
typedef struct rz_tls_client rz_tls_client_t;
int rz_tls_client_new(rz_tls_client_t **out, const char *ca_file, rz_err_t *err);

/* A client TLS bufferevent (no socket yet: libevent's HTTP client connects it), the
 * handshake to begin on connect, with SNI and the certificate checked for host (a DNS name
 * or an IP address). NULL when out of memory. */
struct bufferevent *rz_tls_connect(rz_tls_client_t *c, struct event_base *base, const char *host);

/* Why a client connection's TLS failed, into buf: the certificate check's result when it
 * failed, else OpenSSL's last error on bev; "" when neither says anything. */
void rz_tls_client_error(struct bufferevent *bev, char *buf, size_t size);

/* Accepts NULL. */
void rz_tls_client_free(rz_tls_client_t *c);

/* What the first bytes a client sent on a TLS port are. */
enum rz_tls_hello {
	RZ_TLS_HELLO_MORE,  /* nothing yet */
	RZ_TLS_HELLO_TLS,   /* a TLS handshake record */
	RZ_TLS_HELLO_HTTP,  /* plain HTTP: a request method's first letter */
	RZ_TLS_HELLO_OTHER, /* neither: close */
};
enum rz_tls_hello rz_tls_classify(const unsigned char *buf, size_t len);

/* The clear-text reply to plain HTTP on a TLS port (a complete HTTP/1.1 400 response,
 * Connection: close). Static. */
const char *rz_tls_plain_refusal(size_t *len);

/* Write a self-signed ECDSA P-256 certificate (valid 365 days, subjectAltName localhost,
 * 127.0.0.1, ::1 and each of hosts, a NULL-terminated list of names or IP addresses) and its
 * key into cert_file and key_file, mode 0600, unless both exist already and the certificate
 * names every one of hosts (a new name makes a new pair). *created says whether they were
 * written. */
int rz_tls_self_signed(const char *cert_file, const char *key_file, const char *const *hosts,
                       bool *created, rz_err_t *err);

#endif /* RZ_TLS_H */
