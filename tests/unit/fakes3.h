/*
 * tests/unit/fakes3.h - for check_offsite: a scripted HTTP server on 127.0.0.1 (one
 * connection per step: it records the request and answers with the step's status and body,
 * or never, FAKES3_HANG), and an SigV4 check written from AWS's description of it, apart from
 * libcurl's signer: the canonical URI and query re-encoded from their decoded form and the
 * query sorted, the signed headers trimmed, the key derived and the signature compared.
 * libsodium's SHA-256 and HMAC-SHA-256 do the hashing.
 */
#ifndef RZ_FAKES3_H
#define RZ_FAKES3_H

#include <arpa/inet.h>
#include <check.h>
#include <ctype.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#define FAKES3_HANG (-1) /* a step's status: read the request, never answer */
#define FAKES3_MAX  8

typedef struct fakes3_step {
	int status;
	const char *body;
} fakes3_step_t;

typedef struct fakes3_req {
	char line[2048];  /* the request line */
	char head[16384]; /* the request line and headers, as sent */
	char body[4096];  /* the body's first bytes, NUL-terminated */
} fakes3_req_t;

typedef struct fakes3 {
	int fd, port, stop[2], n;
	bool running;
	pthread_t thread;
	const fakes3_step_t *steps;
	fakes3_req_t req[FAKES3_MAX];
} fakes3_t;

/* Read one request from c into r; the body is read whole, its start kept. */
static inline void fakes3_read(int c, fakes3_req_t *r)
{
	size_t len = 0, want = 0, got = 0;
	char *end = NULL, *cl, buf[65536];
	ssize_t n;

	while (end == NULL && len < sizeof(r->head) - 1 &&
	       (n = read(c, r->head + len, sizeof(r->head) - 1 - len)) > 0) {
		len += (size_t)n;
		r->head[len] = '\0';
		end = strstr(r->head, "\r\n\r\n");
	}
	if (end == NULL) {
		return;
	}
	got = len - (size_t)(end + 4 - r->head);
	memcpy(r->body, end + 4, got < sizeof(r->body) - 1 ? got : sizeof(r->body) - 1);
	end[4] = '\0';
	snprintf(r->line, sizeof(r->line), "%.*s", (int)strcspn(r->head, "\r"), r->head);
	cl = strcasestr(r->head, "\r\ncontent-length:");
	want = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0;
	if (strcasestr(r->head, "\r\nexpect: 100-continue") != NULL) {
		send(c, "HTTP/1.1 100 Continue\r\n\r\n", 25, MSG_NOSIGNAL);
	}
	while (got < want && (n = read(c, buf, sizeof(buf))) > 0) {
		if (got < sizeof(r->body) - 1) {
			size_t k = (size_t)n < sizeof(r->body) - 1 - got
			               ? (size_t)n
			               : sizeof(r->body) - 1 - got;
			memcpy(r->body + got, buf, k);
		}
		got += (size_t)n;
	}
}

static inline void *fakes3_run(void *arg)
{
	fakes3_t *f = arg;

	for (int i = 0; i < f->n; i++) {
		const fakes3_step_t *s = &f->steps[i];
		char head[256];
		int c = accept(f->fd, NULL, NULL);
		if (c < 0) {
			break;
		}
		fakes3_read(c, &f->req[i]);
		if (s->status == FAKES3_HANG) {
			struct pollfd p = { f->stop[0], POLLIN, 0 };
			poll(&p, 1, -1);
			close(c);
			break;
		}
		snprintf(head, sizeof(head),
		         "HTTP/1.1 %d Scripted\r\nContent-Type: application/xml\r\n"
		         "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		         s->status, strlen(s->body));
		send(c, head, strlen(head), MSG_NOSIGNAL);
		for (size_t off = 0, len = strlen(s->body); off < len;) {
			ssize_t w = send(c, s->body + off, len - off, MSG_NOSIGNAL);
			if (w <= 0) {
				break;
			}
			off += (size_t)w;
		}
		close(c);
	}
	return NULL;
}

/* Listen on 127.0.0.1 (f->port) and serve steps[0..n) in turn on a thread of its own. */
static inline fakes3_t *fakes3_start(const fakes3_step_t *steps, int n)
{
	fakes3_t *f = calloc(1, sizeof(*f));
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_le(n, FAKES3_MAX);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(f->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(f->fd, 8), 0);
	ck_assert_int_eq(getsockname(f->fd, (struct sockaddr *)&a, &alen), 0);
	ck_assert_int_eq(pipe(f->stop), 0);
	f->port = ntohs(a.sin_port);
	f->steps = steps;
	f->n = n;
	if (n > 0) {
		ck_assert_int_eq(pthread_create(&f->thread, NULL, fakes3_run, f), 0);
		f->running = true;
	}
	return f;
}

/* Release a hanging step and wait for the server's thread to end. */
static inline void fakes3_wait(fakes3_t *f)
{
	if (f->running) {
		ck_assert_int_eq(write(f->stop[1], "x", 1), 1);
		pthread_join(f->thread, NULL);
		f->running = false;
	}
}

static inline void fakes3_free(fakes3_t *f)
{
	fakes3_wait(f);
	close(f->fd);
	close(f->stop[0]);
	close(f->stop[1]);
	free(f);
}

/* ------------------------------------------------------------------ SigV4, by the book */

static inline void fakes3_hex(const unsigned char *p, size_t n, char *out)
{
	sodium_bin2hex(out, 2 * n + 1, p, n);
}

static inline void fakes3_hmac(const unsigned char *key, size_t klen, const char *msg,
                               unsigned char out[32])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, key, klen);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)msg, strlen(msg));
	crypto_auth_hmacsha256_final(&st, out);
}

/* s (n bytes) percent-decoded, then encoded as AWS's UriEncode does, appended to out. */
static inline void fakes3_uri(const char *s, size_t n, bool slash, char *out, size_t size)
{
	size_t len = strlen(out);

	for (size_t i = 0; i < n; i++) {
		unsigned c = (unsigned char)s[i];
		if (c == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char hx[3] = { s[i + 1], s[i + 2], 0 };
			c = (unsigned)strtoul(hx, NULL, 16);
			i += 2;
		}
		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
		    (slash && c == '/')) {
			len += (size_t)snprintf(out + len, size - len, "%c", c);
		} else {
			len += (size_t)snprintf(out + len, size - len, "%%%02X", c);
		}
	}
}

static inline int fakes3_param_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The canonical query of q (the part after "?"): each name and value re-encoded, sorted. */
static inline void fakes3_query(const char *q, char *out, size_t size)
{
	char *params[32], *copy = strdup(q), *save = NULL;
	int n = 0;

	for (char *p = strtok_r(copy, "&", &save); p != NULL && n < 32;
	     p = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(p, '='), *one = calloc(1, 2048);
		fakes3_uri(p, eq != NULL ? (size_t)(eq - p) : strlen(p), false, one, 2048);
		strcat(one, "=");
		if (eq != NULL) {
			fakes3_uri(eq + 1, strlen(eq + 1), false, one, 2048);
		}
		params[n++] = one;
	}
	qsort(params, (size_t)n, sizeof(params[0]), fakes3_param_cmp);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		snprintf(out + strlen(out), size - strlen(out), "%s%s", i > 0 ? "&" : "",
		         params[i]);
		free(params[i]);
	}
	free(copy);
}

/* The value of header name in head, trimmed, inner runs of spaces made one; "" if none. */
static inline void fakes3_header(const char *head, const char *name, char *out, size_t size)
{
	const char *p = head;
	size_t n = strlen(name), len = 0;

	out[0] = '\0';
	while ((p = strstr(p, "\r\n")) != NULL) {
		p += 2;
		if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
			const char *v = p + n + 1, *e = strstr(v, "\r\n");
			for (; v < e && len + 1 < size; v++) {
				if (*v == ' ' && (len == 0 || out[len - 1] == ' ')) {
					continue;
				}
				out[len++] = *v;
			}
			while (len > 0 && out[len - 1] == ' ') {
				len--;
			}
			out[len] = '\0';
			return;
		}
	}
}

/* Whether head's Authorization is the SigV4 signature of head under secret; why if not. */
static inline bool fakes3_sigv4_ok(const char *head, const char *secret, char *why, size_t wsize)
{
	char auth[1024], cred[256], signed_h[512], sig[80], date[32], sha[80], value[1024];
	char *creq = calloc(1, 65536), sts[512], hex[65], key[300], *save = NULL;
	char method[16], target[2048], *q, scope[256];
	unsigned char k[32], h[32];
	const char *p;
	bool ok = false;

	fakes3_header(head, "authorization", auth, sizeof(auth));
	fakes3_header(head, "x-amz-date", date, sizeof(date));
	fakes3_header(head, "x-amz-content-sha256", sha, sizeof(sha));
	if (sscanf(head, "%15s %2047s", method, target) != 2 ||
	    strncmp(auth, "AWS4-HMAC-SHA256 ", 17) != 0 ||
	    (p = strstr(auth, "Credential=")) == NULL || sscanf(p + 11, "%255[^,]", cred) != 1 ||
	    (p = strstr(auth, "SignedHeaders=")) == NULL ||
	    sscanf(p + 14, "%511[^,]", signed_h) != 1 || (p = strstr(auth, "Signature=")) == NULL ||
	    sscanf(p + 10, "%79s", sig) != 1 || date[0] == '\0' || sha[0] == '\0') {
		snprintf(why, wsize, "no SigV4 Authorization, x-amz-date or x-amz-content-sha256");
		free(creq);
		return false;
	}
	/* method, URI, query */
	q = strchr(target, '?');
	snprintf(creq, 65536, "%s\n", method);
	fakes3_uri(target, q != NULL ? (size_t)(q - target) : strlen(target), true, creq, 65536);
	strcat(creq, "\n");
	fakes3_query(q != NULL ? q + 1 : "", creq + strlen(creq), 65536 - strlen(creq));
	strcat(creq, "\n");
	/* the signed headers, then their names, then the payload's hash */
	char names[512];
	snprintf(names, sizeof(names), "%s", signed_h);
	for (char *n = strtok_r(names, ";", &save); n != NULL; n = strtok_r(NULL, ";", &save)) {
		fakes3_header(head, n, value, sizeof(value));
		snprintf(creq + strlen(creq), 65536 - strlen(creq), "%s:%s\n", n, value);
	}
	snprintf(creq + strlen(creq), 65536 - strlen(creq), "\n%s\n%s", signed_h, sha);
	/* the string to sign: its scope is the credential without the key id */
	snprintf(scope, sizeof(scope), "%s",
	         strchr(cred, '/') != NULL ? strchr(cred, '/') + 1 : "");
	crypto_hash_sha256(h, (unsigned char *)creq, strlen(creq));
	fakes3_hex(h, 32, hex);
	snprintf(sts, sizeof(sts), "AWS4-HMAC-SHA256\n%s\n%s\n%s", date, scope, hex);
	/* the key: "AWS4" + secret, then date, region, service, "aws4_request" */
	snprintf(key, sizeof(key), "AWS4%s", secret);
	size_t klen = strlen(key);
	const unsigned char *kp = (const unsigned char *)key;
	char parts[256];
	snprintf(parts, sizeof(parts), "%s", scope);
	save = NULL;
	for (char *part = strtok_r(parts, "/", &save); part != NULL;
	     part = strtok_r(NULL, "/", &save)) {
		fakes3_hmac(kp, klen, part, k);
		kp = k;
		klen = 32;
	}
	fakes3_hmac(k, 32, sts, h);
	fakes3_hex(h, 32, hex);
	ok = strcmp(hex, sig) == 0;
	if (!ok) {
		snprintf(why, wsize,
		         "signature %.16s…, by the book %.16s…; canonical request:\n%.120s", sig,
		         hex, creq);
	}
	free(creq);
	return ok;
}

#endif /* RZ_FAKES3_H */
