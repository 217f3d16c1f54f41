/* bench/api-load.c - a closed-loop HTTP/1.1 load generator for the API benchmark.
 *
 * N keep-alive connections to a loopback address each send one request at a time (no
 * pipelining), built from a template, for a bounded time and a bounded count; the latency
 * of every request is kept and the run ends with one JSON line on stdout:
 *
 *   {"method":"GET","path":"/x","connections":50,"requests":N,"seconds":S,"rps":R,
 *    "p50_ms":..,"p90_ms":..,"p99_ms":..,"max_ms":..,"errors":N,"timeouts":N,
 *    "reconnects":N,"connects":N,"rereads":N,"cpu_pct":C,"runq_ms":W,"status_counts":{"200":N}}
 *
 * requests counts the replies to requests started after the warm-up, whatever their status;
 * errors counts requests that got no reply (reset, early close, bad reply, timeout) and failed
 * reads of {rv}. cpu_pct is the CPU this process used over the run, warm-up included, in % of
 * one core (near 100: the load generator, not the server, may be the limit); runq_ms is how
 * long it waited, runnable, for a CPU (from /proc/thread-self/schedstat; -1 when unknown):
 * the mark of other work on the machine.
 *
 * Body placeholders: {n} is a counter, unique per request; {rv} is the resourceVersion last
 * seen on the connection: taken from the reply to its previous request, or, at the start and
 * after a 409, from a GET of the same path that is not counted (a "reread").
 *
 * -F FILE gives the connections different headers: FILE holds lines "Name: value" (at most
 * 1,000 lines of at most 1 KiB; empty lines and lines starting with '#' are skipped), and
 * connection i sends line i mod L besides the -H headers: with Authorization lines, the
 * connections speak for different principals. With -W, a line that starts with '!' (the
 * header after it) is a watcher that must NOT receive the marker: the rounds do not wait for
 * it, and "leaked" counts those that received it all the same (a filter that let through
 * what it should not). -E HEADER is a header of -W's change only (the -H headers go with it
 * too), such as the Authorization of a principal that may make the change.
 *
 * -s speaks HTTPS (OpenSSL, TLS 1.2 or later, ALPN http/1.1): each connection does one full
 * handshake (SSL_connect, bounded like the connect) when it is opened, then SSL_write/SSL_read
 * on the keep-alive connection; a reopened connection handshakes again, never resuming a
 * session. -A CAFILE checks the server's certificate against CAFILE and the target address
 * (without it the certificate is not checked); the JSON line then also says "tls":"VERSION
 * CIPHER" of the first handshake. -N opens a new connection for every request (the request
 * says "Connection: close", and the connection is reset after the reply so that no TIME_WAIT
 * piles up): latency then includes the TCP connect and, with -s, the handshake. connects
 * counts the connections opened; reconnects only those reopened after a server's close or a
 * failure, not -N's.
 *
 * Only 127.0.0.0/8 and ::1 are accepted as targets. Built by bench/build.sh.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX      16384
#define IN_FIRST     65536               /* a connection's reply buffer starts at this... */
#define IN_MAX       (16u * 1024 * 1024) /* ...and grows up to this (a 10,000-object list) */
#define WATCH_TAIL   64                  /* bytes kept between reads to find a split marker */
#define HDRS_MAX     4096
#define MAX_CONNS    1000
#define MAX_SECONDS  300.0
#define MAX_REQUESTS 100000000ULL
#define MAX_REPORTS  5
#define HFILE_MAX    (1024u * 1024) /* -F: the file's size at most... */
#define HLINE_MAX    1024           /* ...and a line's length */

enum cstate { C_IDLE, C_SEND, C_RECV, C_DEAD };

struct opts {
	const char *addr, *method, *path, *body;
	int port, conns, timeout_ms;
	double seconds, warmup;
	uint64_t max_requests;
	char hdrs[HDRS_MAX];
	size_t hdrs_len;
	/* -s: TLS, -A: its CA file; -N: a new connection for every request */
	bool tls, new_conn;
	const char *cafile;
	/* -r: wait for the server to be ready; -S: when it was started (CLOCK_REALTIME ns) */
	bool ready;
	double started_at;
	/* -W: watch mode; the change is -X METHOD -T PATH -B BODY with -C TYPE; -M what a
	 * watcher must receive; -k rounds, -i ms between them; -h seconds to hold afterwards */
	bool watch;
	const char *trig_method, *trig_path, *trig_body, *trig_type, *marker;
	int rounds, interval_ms;
	double hold;
	/* -F: a file of header lines, one per connection (modulo); -E: the change's headers */
	const char *hdr_file;
	char trig_hdrs[HDRS_MAX];
	size_t trig_hdrs_len;
};

struct conn {
	int fd;
	SSL *ssl; /* -s: the connection's TLS session, NULL for plain HTTP */
	enum cstate state;
	bool priming; /* the request in flight is the uncounted GET that reads {rv} */
	bool counted; /* the request in flight started after the warm-up */
	double t_start;
	char rv[32];
	char out[OUT_MAX];
	size_t out_len, out_off;
	char *in; /* allocated on first use, grown by doubling up to IN_MAX */
	size_t in_len, in_cap;
	double got;            /* watch mode: when this round's change arrived; < 0: not yet */
	char tail[WATCH_TAIL]; /* watch mode: the last bytes read */
	size_t tail_len;
	bool headed;     /* watch mode: the stream's reply head has arrived */
	const char *hdr; /* -F: this connection's own header line ("Name: value\r\n"), or "" */
	bool excluded;   /* -F with -W: a watcher that must not receive the marker */
	bool leaked;     /* ...and received it all the same */
};

struct reply {
	int status;
	const char *body;  /* chunked: the first chunk */
	size_t body_len;   /* chunked: the first chunk's length */
	size_t total_body; /* chunked: all chunks' */
	bool close;
};

struct stats {
	uint32_t *lat_us;
	size_t n, cap;
	uint64_t status[600];
	uint64_t errors, timeouts, reconnects, connects, rereads, reports;
	size_t body_bytes; /* the body length of the last counted reply */
};

struct bench {
	struct opts o;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char host[64];
	SSL_CTX *tls;       /* -s */
	char tls_desc[96];  /* the first handshake's version and cipher */
	char conn_err[256]; /* why the last open_conn failed */
	bool uses_rv;
	struct conn *conns;
	char *hfile;  /* -F: the file's lines, each ending in CRLF and a NUL */
	char **hline; /* -F: where each line starts in hfile */
	bool *hexcl;  /* -F: whether the line started with '!' */
	size_t nhline;
	struct stats st;
	uint64_t leaked; /* -W with '!' lines: watchers that received the marker all the same */
	uint64_t counter, started;
	double t_start, t_measure, t_stop, t_hard, t_end;
	double runq_start, cpu_start;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Milliseconds this thread has waited, runnable, for a CPU; -1 when the kernel does not say. */
static double runq_ms(void)
{
	unsigned long long run, wait;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n;

	if (f == NULL) {
		return -1;
	}
	n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? (double)wait / 1e6 : -1;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0) {
		return 0;
	}
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: api-load -p PORT [-a ADDR] [-c CONNS] [-d SECONDS] [-w WARMUP] [-n MAXREQ]\n"
	    "                [-t TIMEOUT_MS] [-m METHOD] [-u PATH] [-H 'Name: value']... [-b "
	    "BODY]\n"
	    "                [-F FILE] [-s [-A CAFILE]] [-N]\n"
	    "       api-load -p PORT -r [-S START_NS] [-d SECONDS] [-u PATH] [-H ...]\n"
	    "       api-load -p PORT -W -c WATCHERS -T PATH -X METHOD -B BODY -C TYPE -M MARKER\n"
	    "                [-k ROUNDS] [-i MS] [-h HOLD_SECONDS] [-m METHOD] [-u PATH] [-b "
	    "BODY]\n"
	    "                [-F FILE] [-E 'Name: value']...\n"
	    "  -F FILE: connection i also sends header line i mod L of FILE (-W: a line\n"
	    "  '!Name: value' is a watcher that must not receive the marker)\n"
	    "  ADDR must be a loopback address (127.0.0.0/8 or ::1); BODY may hold {n}, {b64n}\n"
	    "  and {rv}\n");
}

/* ------------------------------------------------------------------ options */

/* Append header h and its CRLF to buf (cap bytes, len used; kept NUL-terminated). */
static int add_header(char *buf, size_t cap, size_t *len, const char *h)
{
	size_t n = strlen(h);

	if (strpbrk(h, "\r\n") != NULL || strchr(h, ':') == NULL || h[0] == ':') {
		fprintf(stderr, "api-load: bad header '%.100s'\n", h);
		return -1;
	}
	if (*len + n + 3 > cap) {
		fprintf(stderr, "api-load: too many headers\n");
		return -1;
	}
	memcpy(buf + *len, h, n);
	memcpy(buf + *len + n, "\r\n", 3);
	*len += n + 2;
	return 0;
}

static int num_arg(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "api-load: '%s' is not a number in [%g, %g]\n", s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int set_watch_opt(struct opts *o, int ch, const char *arg)
{
	double v = 0;
	int rc = 0;

	switch (ch) {
	case 'W':
		o->watch = true;
		break;
	case 'X':
		o->trig_method = arg;
		break;
	case 'T':
		o->trig_path = arg;
		break;
	case 'B':
		o->trig_body = arg;
		break;
	case 'C':
		o->trig_type = arg;
		break;
	case 'M':
		o->marker = arg;
		break;
	case 'E':
		return add_header(o->trig_hdrs, sizeof(o->trig_hdrs), &o->trig_hdrs_len, arg);
	case 'k':
		rc = num_arg(arg, 1, 1000, &v);
		o->rounds = (int)v;
		break;
	case 'i':
		rc = num_arg(arg, 0, 60000, &v);
		o->interval_ms = (int)v;
		break;
	case 'h':
		rc = num_arg(arg, 0, MAX_SECONDS, &o->hold);
		break;
	default:
		return -1;
	}
	return rc;
}

static int set_opt(struct opts *o, int ch, const char *arg)
{
	double v = 0;
	int rc = 0;

	switch (ch) {
	case 'a':
		o->addr = arg;
		break;
	case 'm':
		o->method = arg;
		break;
	case 'u':
		o->path = arg;
		break;
	case 'b':
		o->body = arg;
		break;
	case 'H':
		return add_header(o->hdrs, sizeof(o->hdrs), &o->hdrs_len, arg);
	case 'F':
		o->hdr_file = arg;
		break;
	case 'p':
		rc = num_arg(arg, 1, 65535, &v);
		o->port = (int)v;
		break;
	case 'c':
		rc = num_arg(arg, 1, MAX_CONNS, &v);
		o->conns = (int)v;
		break;
	case 't':
		rc = num_arg(arg, 10, 60000, &v);
		o->timeout_ms = (int)v;
		break;
	case 'd':
		rc = num_arg(arg, 0.1, MAX_SECONDS, &o->seconds);
		break;
	case 'w':
		rc = num_arg(arg, 0, 60, &o->warmup);
		break;
	case 'n':
		rc = num_arg(arg, 1, (double)MAX_REQUESTS, &v);
		o->max_requests = (uint64_t)v;
		break;
	case 'r':
		o->ready = true;
		break;
	case 'S':
		rc = num_arg(arg, 1e18, 1e19, &v);
		o->started_at = v / 1e9;
		break;
	case 's':
		o->tls = true;
		break;
	case 'A':
		o->cafile = arg;
		break;
	case 'N':
		o->new_conn = true;
		break;
	default:
		return set_watch_opt(o, ch, arg);
	}
	return rc;
}

static int parse_opts(struct opts *o, int argc, char **argv)
{
	int ch;

	*o = (struct opts){ .addr = "127.0.0.1",
		            .method = "GET",
		            .path = "/",
		            .conns = 1,
		            .timeout_ms = 5000,
		            .seconds = 5,
		            .warmup = 0.5,
		            .max_requests = 10000000,
		            .trig_method = "PATCH",
		            .trig_type = "application/json",
		            .rounds = 5,
		            .interval_ms = 300 };
	while ((ch = getopt(argc, argv, "a:p:c:d:w:n:t:m:u:H:F:b:rS:sA:NWX:T:B:C:M:E:k:i:h:")) !=
	       -1) {
		if (set_opt(o, ch, optarg) != 0) {
			usage();
			return -1;
		}
	}
	if (optind != argc || o->port == 0 || strcmp(o->method, "HEAD") == 0 ||
	    strpbrk(o->method, " \r\n") != NULL || strpbrk(o->path, " \r\n") != NULL ||
	    o->path[0] != '/' || (o->cafile != NULL && !o->tls) || (o->new_conn && o->watch) ||
	    (o->trig_hdrs_len > 0 && !o->watch) || (o->hdr_file != NULL && o->ready) ||
	    (o->watch &&
	     (o->trig_path == NULL || o->trig_path[0] != '/' || o->marker == NULL ||
	      o->marker[0] == '\0' || strlen(o->marker) >= WATCH_TAIL ||
	      strpbrk(o->trig_path, " \r\n") != NULL || strpbrk(o->trig_method, " \r\n") != NULL ||
	      strpbrk(o->trig_type, "\r\n") != NULL))) {
		usage();
		return -1;
	}
	return 0;
}

/* -F: read the file of header lines into b->hfile (each line checked as -H checks its
 * header, a leading '!' noted in b->hexcl and dropped); -1 with a message when it cannot be
 * read, is too large, holds a bad line or no line at all, or '!' is used without -W. */
static int load_header_file(struct bench *b)
{
	FILE *f = fopen(b->o.hdr_file, "r");
	char line[HLINE_MAX + 2];
	size_t used = 0;
	int rc = -1;

	if (f == NULL) {
		fprintf(stderr, "api-load: cannot read '%s': %s\n", b->o.hdr_file, strerror(errno));
		return -1;
	}
	b->hfile = malloc(HFILE_MAX);
	b->hline = calloc(MAX_CONNS, sizeof(*b->hline));
	b->hexcl = calloc(MAX_CONNS, sizeof(*b->hexcl));
	if (b->hfile == NULL || b->hline == NULL || b->hexcl == NULL) {
		goto out;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t n = strcspn(line, "\r\n"), len = 0;
		bool excl = line[0] == '!';

		if (line[n] == '\0' && !feof(f)) {
			fprintf(stderr, "api-load: a line of '%s' is too long\n", b->o.hdr_file);
			goto out;
		}
		line[n] = '\0';
		if (n == 0 || line[0] == '#') {
			continue;
		}
		if (b->nhline == MAX_CONNS || used + n + 3 > HFILE_MAX) {
			fprintf(stderr, "api-load: '%s' has too many lines\n", b->o.hdr_file);
			goto out;
		}
		if (excl && !b->o.watch) {
			fprintf(stderr, "api-load: '!' lines are for -W only\n");
			goto out;
		}
		if (add_header(b->hfile + used, n + 3, &len, line + excl) != 0) {
			goto out;
		}
		b->hexcl[b->nhline] = excl;
		b->hline[b->nhline++] = b->hfile + used;
		used += len + 1;
	}
	if (ferror(f) || b->nhline == 0) {
		fprintf(stderr, "api-load: '%s' holds no header line\n", b->o.hdr_file);
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	return rc;
}

/* ------------------------------------------------------------------ target */

/* Fill b->addr from ADDR and PORT; refuse anything but loopback. */
static int resolve_loopback(struct bench *b)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&b->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&b->addr;

	memset(&b->addr, 0, sizeof(b->addr));
	if (inet_pton(AF_INET, b->o.addr, &in4->sin_addr) == 1 &&
	    (ntohl(in4->sin_addr.s_addr) >> 24) == 127) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)b->o.port);
		b->addr_len = sizeof(*in4);
		snprintf(b->host, sizeof(b->host), "%s:%d", b->o.addr, b->o.port);
		return 0;
	}
	if (inet_pton(AF_INET6, b->o.addr, &in6->sin6_addr) == 1 &&
	    IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)b->o.port);
		b->addr_len = sizeof(*in6);
		snprintf(b->host, sizeof(b->host), "[%s]:%d", b->o.addr, b->o.port);
		return 0;
	}
	fprintf(stderr, "api-load: '%s' is not a loopback address; refusing\n", b->o.addr);
	return -1;
}

/* -s: the client context: TLS 1.2 at least, ALPN http/1.1, no session resumption (every
 * handshake is a full one); with -A the certificate must chain to CAFILE and name ADDR. */
static int tls_init(struct bench *b)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (ctx == NULL) {
		fprintf(stderr, "api-load: SSL_CTX_new failed\n");
		return -1;
	}
	b->tls = ctx;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF);
	if (SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1) != 0) {
		fprintf(stderr, "api-load: setting ALPN failed\n");
		return -1;
	}
	if (b->o.cafile == NULL) {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
		return 0;
	}
	if (SSL_CTX_load_verify_locations(ctx, b->o.cafile, NULL) != 1 ||
	    X509_VERIFY_PARAM_set1_ip_asc(SSL_CTX_get0_param(ctx), b->o.addr) != 1) {
		fprintf(stderr, "api-load: loading CA file '%s' failed: %s\n", b->o.cafile,
		        ERR_reason_error_string(ERR_get_error()));
		return -1;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return 0;
}

/* The handshake on fd, still blocking (bounded by SO_SNDTIMEO and SO_RCVTIMEO); the session
 * in c->ssl, or -1 with the reason in b->conn_err. */
static int tls_handshake(struct bench *b, struct conn *c, int fd)
{
	SSL *ssl = SSL_new(b->tls);
	const char *why;
	long vr;

	errno = 0;
	if (ssl == NULL || SSL_set_fd(ssl, fd) != 1 || SSL_connect(ssl) != 1) {
		why = ERR_reason_error_string(ERR_get_error());
		vr = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
		snprintf(b->conn_err, sizeof(b->conn_err), "TLS handshake failed: %s%s%s",
		         why != NULL ? why : (errno != 0 ? strerror(errno) : "connection closed"),
		         vr != X509_V_OK ? ": " : "",
		         vr != X509_V_OK ? X509_verify_cert_error_string(vr) : "");
		ERR_clear_error();
		SSL_free(ssl);
		return -1;
	}
	if (b->tls_desc[0] == '\0') {
		snprintf(b->tls_desc, sizeof(b->tls_desc), "%s %s", SSL_get_version(ssl),
		         SSL_get_cipher_name(ssl));
	}
	c->ssl = ssl;
	return 0;
}

/* Open c: a blocking connect (bounded by SO_SNDTIMEO), with -s the handshake, then
 * non-blocking I/O. -1 with the reason in b->conn_err. */
static int open_conn(struct bench *b, struct conn *c)
{
	struct timeval tv = { .tv_sec = 2 };
	int one = 1;
	int fd = socket(b->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		snprintf(b->conn_err, sizeof(b->conn_err), "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&b->addr, b->addr_len) != 0) {
		snprintf(b->conn_err, sizeof(b->conn_err), "connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (b->tls != NULL && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	                       tls_handshake(b, c, fd) != 0)) {
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
		snprintf(b->conn_err, sizeof(b->conn_err), "fcntl: %s", strerror(errno));
		SSL_free(c->ssl);
		c->ssl = NULL;
		close(fd);
		return -1;
	}
	c->fd = fd;
	b->st.connects++;
	return 0;
}

/* Close c (when open). RESET: -N's close after a reply, with SO_LINGER 0 so that the port
 * goes back at once instead of waiting in TIME_WAIT (and no close_notify before it); else a
 * TLS connection says close_notify first, without waiting for the server's. */
static void conn_close(struct conn *c, bool reset)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (c->fd < 0) {
		return;
	}
	if (c->ssl != NULL) {
		if (!reset) {
			SSL_shutdown(c->ssl);
		}
		SSL_free(c->ssl);
		c->ssl = NULL;
		ERR_clear_error();
	}
	if (reset) {
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(c->fd);
	c->fd = -1;
}

/* An SSL_read/SSL_write result as send(2)/recv(2) would give it: > 0 bytes, 0 at the end of
 * the stream, -1 with errno EAGAIN (the record is not complete, or the socket is full) or
 * EPROTO. */
static ssize_t tls_result(struct conn *c, int rc)
{
	if (rc > 0) {
		return rc;
	}
	switch (SSL_get_error(c->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		return errno == 0 ? 0 : -1;
	default:
		ERR_clear_error();
		errno = EPROTO;
		return -1;
	}
}

static ssize_t io_send(struct conn *c, const char *p, size_t n)
{
	if (c->ssl == NULL) {
		return send(c->fd, p, n, MSG_NOSIGNAL);
	}
	errno = 0;
	return tls_result(c, SSL_write(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n));
}

static ssize_t io_recv(struct conn *c, char *p, size_t n)
{
	if (c->ssl == NULL) {
		return recv(c->fd, p, n, 0);
	}
	errno = 0;
	return tls_result(c, SSL_read(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n));
}

/* Decrypted bytes OpenSSL holds that poll(2) cannot see. */
static bool io_pending(const struct conn *c)
{
	return c->ssl != NULL && SSL_pending(c->ssl) > 0;
}

/* ------------------------------------------------------------------ requests */

/* {b64n}: the base64 of "k" and the counter in 11 digits: 12 bytes, so 16 characters and no
 * padding, and a base64 text that goes on after it stays valid (etcd's JSON API wants keys
 * and values in base64). */
static int b64_counter(char *buf, size_t cap, uint64_t v)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char raw[16];
	int j = 0;

	snprintf(raw, sizeof(raw), "k%011" PRIu64, v % UINT64_C(100000000000));
	if (cap < 17) {
		return -1;
	}
	for (int i = 0; i < 12; i += 3) {
		uint32_t w = (uint32_t)(unsigned char)raw[i] << 16 |
		             (uint32_t)(unsigned char)raw[i + 1] << 8 | (unsigned char)raw[i + 2];
		buf[j++] = tab[w >> 18 & 63];
		buf[j++] = tab[w >> 12 & 63];
		buf[j++] = tab[w >> 6 & 63];
		buf[j++] = tab[w & 63];
	}
	buf[j] = '\0';
	return j;
}

/* Expand a body template into buf; returns its length, or -1 when it does not fit. */
static int expand_body(struct bench *b, struct conn *c, const char *t, char *buf, size_t cap)
{
	size_t len = 0;
	int n;

	while (*t != '\0') {
		if (strncmp(t, "{n}", 3) == 0) {
			n = snprintf(buf + len, cap - len, "%" PRIu64, b->counter++);
			t += 3;
		} else if (strncmp(t, "{b64n}", 6) == 0) {
			n = b64_counter(buf + len, cap - len, b->counter++);
			t += 6;
		} else if (strncmp(t, "{rv}", 4) == 0) {
			n = snprintf(buf + len, cap - len, "%s", c->rv);
			t += 4;
		} else {
			n = snprintf(buf + len, cap - len, "%c", *t++);
		}
		if (n < 0 || (size_t)n >= cap - len) {
			return -1;
		}
		len += (size_t)n;
	}
	return (int)len;
}

/* Build a request from METHOD, PATH, the -H headers, EXTRA (one more header line, or "")
 * and the body template BODY (NULL: no body) into c->out. */
static int build_request_of(struct bench *b, struct conn *c, const char *method, const char *path,
                            const char *extra, const char *tmpl)
{
	char body[OUT_MAX / 2];
	int blen = -1;
	int n;

	if (tmpl != NULL) {
		blen = expand_body(b, c, tmpl, body, sizeof(body));
		if (blen < 0) {
			fprintf(stderr, "api-load: body too long\n");
			return -1;
		}
	}
	n = snprintf(c->out, sizeof(c->out), "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%s", method, path,
	             b->host, b->o.hdrs, c->hdr != NULL ? c->hdr : "", extra);
	if (blen >= 0 && n >= 0 && (size_t)n < sizeof(c->out)) {
		n += snprintf(c->out + n, sizeof(c->out) - (size_t)n, "Content-Length: %d\r\n",
		              blen);
	}
	if (n < 0 || (size_t)n + 2 + (size_t)(blen > 0 ? blen : 0) > sizeof(c->out)) {
		fprintf(stderr, "api-load: request too long\n");
		return -1;
	}
	memcpy(c->out + n, "\r\n", 2);
	if (blen > 0) {
		memcpy(c->out + n + 2, body, (size_t)blen);
	}
	c->out_len = (size_t)n + 2 + (size_t)(blen > 0 ? blen : 0);
	c->out_off = 0;
	return 0;
}

static int build_request(struct bench *b, struct conn *c, bool prime)
{
	return build_request_of(b, c, prime ? "GET" : b->o.method, b->o.path,
	                        b->o.new_conn ? "Connection: close\r\n" : "",
	                        prime ? NULL : b->o.body);
}

static void report(struct bench *b, const char *what, const char *detail, size_t len)
{
	if (b->st.reports++ >= MAX_REPORTS) {
		return;
	}
	fprintf(stderr, "api-load: %s%s%.*s\n", what, len > 0 ? ": " : "",
	        (int)(len > 300 ? 300 : len), detail);
}

/* The request in flight got no reply: count it, drop the connection (reopened on next use). */
static void conn_fail(struct bench *b, struct conn *c, const char *why)
{
	b->st.errors++;
	report(b, why, "", 0);
	conn_close(c, false);
	c->state = C_IDLE;
	c->in_len = 0;
	c->rv[0] = '\0';
}

/* Send what is left of the request; on failure the connection is dropped (conn_fail). */
static void do_send(struct bench *b, struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = io_send(c, c->out + c->out_off, c->out_len - c->out_off);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return;
		}
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			conn_fail(b, c, "send failed");
			return;
		}
		c->out_off += (size_t)n;
	}
	c->state = C_RECV;
}

/* Start the next request on an idle connection; -1 only when no request can be built. */
static int start_request(struct bench *b, struct conn *c, double now)
{
	bool prime = b->uses_rv && c->rv[0] == '\0';

	if (c->fd < 0) {
		if (open_conn(b, c) != 0) {
			b->st.errors++;
			report(b, "connect failed", b->conn_err, strlen(b->conn_err));
			c->state = C_DEAD;
			return 0;
		}
		b->st.reconnects += b->o.new_conn ? 0 : 1;
	}
	if (build_request(b, c, prime) != 0) {
		return -1;
	}
	c->priming = prime;
	c->counted = !prime && now >= b->t_measure;
	c->t_start = now;
	c->state = C_SEND;
	b->started += prime ? 0 : 1;
	do_send(b, c);
	return 0;
}

/* ------------------------------------------------------------------ replies */

/* Find header NAME in the head [h, h + len); its value, trimmed, in *val and *vlen. */
static bool find_header(const char *h, size_t len, const char *name, const char **val, size_t *vlen)
{
	size_t nlen = strlen(name);
	const char *p = memchr(h, '\n', len);
	const char *end = h + len;

	while (p != NULL && p + 1 < end) {
		const char *line = p + 1;
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		if (eol == NULL) {
			break;
		}
		if ((size_t)(eol - line) > nlen && strncasecmp(line, name, nlen) == 0 &&
		    line[nlen] == ':') {
			const char *v = line + nlen + 1;
			while (v < eol && (*v == ' ' || *v == '\t')) {
				v++;
			}
			*val = v;
			*vlen = (size_t)(eol - v) - (eol > v && eol[-1] == '\r' ? 1 : 0);
			return true;
		}
		p = eol;
	}
	return false;
}

/* A chunked body at p (avail bytes): 1 when it is complete (its length with the last chunk and
 * the empty trailer in *total; the first chunk in r->body), 0 when more is needed, -1 when it
 * is not chunked encoding. Trailers are not supported. */
static int parse_chunked(const char *p, size_t avail, size_t *total, struct reply *r)
{
	size_t off = 0;

	r->body = p;
	r->body_len = 0;
	r->total_body = 0;
	for (;;) {
		const char *eol = memmem(p + off, avail - off, "\r\n", 2);
		char *end;
		unsigned long long size;

		if (eol == NULL) {
			return avail - off > 32 ? -1 : 0;
		}
		errno = 0;
		size = strtoull(p + off, &end, 16);
		if (errno != 0 || end == p + off || (*end != '\r' && *end != ';') ||
		    size > IN_MAX) {
			return -1;
		}
		off = (size_t)(eol - p) + 2;
		if (size == 0) {
			if (avail - off < 2) {
				return 0;
			}
			if (memcmp(p + off, "\r\n", 2) != 0) {
				return -1;
			}
			*total = off + 2;
			return 1;
		}
		if (avail - off < size + 2) {
			return 0;
		}
		if (memcmp(p + off + size, "\r\n", 2) != 0) {
			return -1;
		}
		if (r->body_len == 0) {
			r->body = p + off;
			r->body_len = size;
		}
		r->total_body += size;
		off += size + 2;
	}
}

/* 1 when a whole reply is in c->in (described in *r), 0 when more is needed, -1 on error. */
static int parse_reply(struct conn *c, struct reply *r)
{
	const char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
	const char *v;
	size_t hlen, vlen, clen = 0;
	int rc;

	if (end == NULL) {
		return c->in_len >= IN_MAX ? -1 : 0;
	}
	hlen = (size_t)(end - c->in) + 4;
	if (hlen < 13 || memcmp(c->in, "HTTP/1.", 7) != 0 || c->in[8] != ' ') {
		return -1;
	}
	r->status = atoi(c->in + 9);
	if (r->status < 100 || r->status > 599) {
		return -1;
	}
	r->close = find_header(c->in, hlen, "Connection", &v, &vlen) && vlen == 5 &&
	           strncasecmp(v, "close", 5) == 0;
	if (find_header(c->in, hlen, "Transfer-Encoding", &v, &vlen) && vlen == 7 &&
	    strncasecmp(v, "chunked", 7) == 0) {
		rc = parse_chunked(c->in + hlen, c->in_len - hlen, &clen, r);
		if (rc <= 0) {
			return rc < 0 || c->in_len >= IN_MAX ? -1 : 0;
		}
		return c->in_len > hlen + clen ? -1 : 1; /* bytes nobody asked for */
	}
	if (find_header(c->in, hlen, "Content-Length", &v, &vlen)) {
		clen = strtoul(v, NULL, 10);
	} else if (r->status >= 200 && r->status != 204 && r->status != 304) {
		return -1; /* close-delimited bodies are not supported */
	}
	if (hlen + clen > IN_MAX || c->in_len > hlen + clen) {
		return -1; /* too large, or bytes nobody asked for */
	}
	if (c->in_len < hlen + clen) {
		return 0;
	}
	r->body = c->in + hlen;
	r->body_len = clen;
	r->total_body = clen;
	return 1;
}

static void take_rv(struct conn *c, const char *body, size_t len)
{
	static const char key[] = "\"resourceVersion\":\"";
	const char *p = memmem(body, len, key, sizeof(key) - 1);
	size_t i = 0;

	c->rv[0] = '\0';
	if (p == NULL) {
		return;
	}
	p += sizeof(key) - 1;
	while (p < body + len && *p != '"' && i + 1 < sizeof(c->rv)) {
		c->rv[i++] = *p++;
	}
	c->rv[p < body + len && *p == '"' ? i : 0] = '\0';
}

static int record_latency(struct stats *st, double seconds)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 65536;
		uint32_t *p = realloc(st->lat_us, cap * sizeof(*p));
		if (p == NULL) {
			return -1;
		}
		st->lat_us = p;
		st->cap = cap;
	}
	st->lat_us[st->n++] = (uint32_t)(seconds * 1e6 + 0.5);
	return 0;
}

static int on_reply(struct bench *b, struct conn *c, const struct reply *r, double now)
{
	if (c->priming) {
		b->st.rereads++;
		take_rv(c, r->body, r->body_len);
		if (r->status != 200 || c->rv[0] == '\0') {
			b->st.errors++;
			report(b, "reading resourceVersion failed", r->body, r->body_len);
			c->state = C_DEAD;
			return 0;
		}
	} else if (c->counted) {
		b->st.status[r->status]++;
		b->st.body_bytes = r->total_body;
		if (record_latency(&b->st, now - c->t_start) != 0) {
			return -1;
		}
	}
	if (!c->priming && (r->status < 200 || r->status > 299)) {
		report(b, "unexpected status", c->in + 9, 3);
		report(b, "its body", r->body, r->body_len);
	}
	if (b->uses_rv && !c->priming) {
		take_rv(c, r->body, r->body_len); /* a 409 Status has none: reread */
	}
	c->in_len = 0;
	c->state = C_IDLE;
	if (r->close || b->o.new_conn) {
		conn_close(c, b->o.new_conn);
	}
	return 0;
}

/* Room for at least some more bytes in c->in; -1 when it cannot grow. */
static int in_room(struct conn *c)
{
	size_t cap;
	char *p;

	if (c->in_len < c->in_cap) {
		return 0;
	}
	cap = c->in_cap == 0 ? IN_FIRST : c->in_cap * 2;
	if (cap > IN_MAX) {
		return -1;
	}
	p = realloc(c->in, cap);
	if (p == NULL) {
		return -1;
	}
	c->in = p;
	c->in_cap = cap;
	return 0;
}

/* Read what has come on c; with TLS, on until OpenSSL holds nothing poll(2) cannot see. */
static int do_recv(struct bench *b, struct conn *c)
{
	struct reply r;
	ssize_t n;
	int rc;

	do {
		if (in_room(c) != 0) {
			report(b, "reply too large", "", 0);
			conn_fail(b, c, "reply too large");
			return 0;
		}
		n = io_recv(c, c->in + c->in_len, c->in_cap - c->in_len);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			return 0;
		}
		if (n <= 0) {
			conn_fail(b, c,
			          n == 0 ? "connection closed before the reply" : "recv failed");
			return 0;
		}
		c->in_len += (size_t)n;
		rc = parse_reply(c, &r);
		if (rc < 0) {
			report(b, "bad reply", c->in, c->in_len);
			conn_fail(b, c, "bad reply");
			return 0;
		}
	} while (rc == 0 && io_pending(c));
	return rc == 0 ? 0 : on_reply(b, c, &r, now_s());
}

/* ------------------------------------------------------------------ the loop */

static int issue_idle(struct bench *b, double now)
{
	for (int i = 0; i < b->o.conns; i++) {
		struct conn *c = &b->conns[i];
		if (c->state != C_IDLE || now >= b->t_stop || b->started >= b->o.max_requests) {
			continue;
		}
		if (start_request(b, c, now) != 0) {
			return -1;
		}
	}
	return 0;
}

/* Give up on requests that have waited longer than the timeout. */
static void expire(struct bench *b, double now)
{
	for (int i = 0; i < b->o.conns; i++) {
		struct conn *c = &b->conns[i];
		if ((c->state == C_SEND || c->state == C_RECV) &&
		    now - c->t_start > b->o.timeout_ms / 1000.0) {
			b->st.timeouts++;
			conn_fail(b, c, "request timed out");
		}
	}
}

static int fill_pollfds(struct bench *b, struct pollfd *pfd, int *idx)
{
	int n = 0;

	for (int i = 0; i < b->o.conns; i++) {
		struct conn *c = &b->conns[i];
		if (c->state != C_SEND && c->state != C_RECV) {
			continue;
		}
		pfd[n] =
		    (struct pollfd){ .fd = c->fd, .events = c->state == C_SEND ? POLLOUT : POLLIN };
		idx[n++] = i;
	}
	return n;
}

static int run(struct bench *b, struct pollfd *pfd, int *idx)
{
	for (;;) {
		double now = now_s();
		int n;

		if (now >= b->t_hard) {
			report(b, "hard deadline reached", "", 0);
			break;
		}
		expire(b, now);
		if (issue_idle(b, now) != 0) {
			return -1;
		}
		n = fill_pollfds(b, pfd, idx);
		if (n == 0) {
			break; /* nothing in flight, nothing more to send */
		}
		if (poll(pfd, (nfds_t)n, 50) < 0 && errno != EINTR) {
			perror("api-load: poll");
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = &b->conns[idx[i]];
			if (pfd[i].revents == 0) {
				continue;
			}
			if (c->state == C_SEND) {
				do_send(b, c);
			}
			if (c->state == C_RECV && do_recv(b, c) != 0) {
				return -1;
			}
		}
	}
	b->t_end = now_s();
	return 0;
}

/* ------------------------------------------------------------------ results */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile, in milliseconds. */
static double pct_ms(const struct stats *st, double q)
{
	size_t k;

	if (st->n == 0) {
		return 0;
	}
	k = (size_t)(q * (double)st->n + 0.999999);
	k = k == 0 ? 1 : (k > st->n ? st->n : k);
	return st->lat_us[k - 1] / 1000.0;
}

static void print_json_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\') {
			putchar('\\');
		}
		putchar((unsigned char)*s < 0x20 ? '?' : *s);
	}
	putchar('"');
}

static void print_results(struct bench *b)
{
	struct stats *st = &b->st;
	double secs = b->t_end - b->t_measure;
	bool first = true;

	qsort(st->lat_us, st->n, sizeof(*st->lat_us), cmp_u32);
	printf("{\"method\":");
	print_json_str(b->o.method);
	printf(",\"path\":");
	print_json_str(b->o.path);
	printf(",\"connections\":%d,\"requests\":%zu,\"seconds\":%.3f,\"rps\":%.1f,", b->o.conns,
	       st->n, secs, secs > 0 ? (double)st->n / secs : 0.0);
	printf("\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,", pct_ms(st, 0.50),
	       pct_ms(st, 0.90), pct_ms(st, 0.99), pct_ms(st, 1.0));
	printf("\"errors\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"reconnects\":%" PRIu64
	       ",\"connects\":%" PRIu64 ",\"rereads\":%" PRIu64 ",",
	       st->errors, st->timeouts, st->reconnects, st->connects, st->rereads);
	if (b->tls != NULL) {
		printf("\"tls\":");
		print_json_str(b->tls_desc);
		putchar(',');
	}
	printf("\"body_bytes\":%zu,", st->body_bytes);
	printf("\"cpu_pct\":%.1f,\"runq_ms\":%.1f,\"status_counts\":{",
	       100.0 * (cpu_seconds() - b->cpu_start) / (b->t_end - b->t_start),
	       b->runq_start < 0 ? -1.0 : runq_ms() - b->runq_start);
	for (int s = 100; s < 600; s++) {
		if (st->status[s] != 0) {
			printf("%s\"%d\":%" PRIu64, first ? "" : ",", s, st->status[s]);
			first = false;
		}
	}
	printf("}}\n");
}

/* ------------------------------------------------------------------ one request at a time */

/* Send a request on c (connecting when needed), waiting at most until DEADLINE; -1 on failure
 * (the connection is then closed). */
static int exch_send(struct bench *b, struct conn *c, const char *method, const char *path,
                     const char *extra, const char *body, double deadline)
{
	if (c->fd < 0 && open_conn(b, c) != 0) {
		return -1;
	}
	if (build_request_of(b, c, method, path, extra, body) != 0) {
		goto fail;
	}
	c->in_len = 0;
	while (c->out_off < c->out_len) {
		struct pollfd p = { .fd = c->fd, .events = POLLOUT };
		ssize_t n = io_send(c, c->out + c->out_off, c->out_len - c->out_off);
		if (n > 0) {
			c->out_off += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR) && now_s() < deadline) {
			poll(&p, 1, 10);
		} else {
			goto fail;
		}
	}
	return 0;
fail:
	conn_close(c, false);
	return -1;
}

/* Wait for the whole reply on c until DEADLINE: its status, or -1 (the connection closed). */
static int exch_recv(struct conn *c, double deadline)
{
	struct reply r;
	int rc;

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		double left = deadline - now_s();
		ssize_t n;

		if (left <= 0 || (!io_pending(c) && poll(&p, 1, (int)(left * 1000) + 1) < 0) ||
		    in_room(c) != 0) {
			break;
		}
		n = io_recv(c, c->in + c->in_len, c->in_cap - c->in_len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		c->in_len += (size_t)n;
		rc = parse_reply(c, &r);
		if (rc < 0) {
			break;
		}
		if (rc == 1) {
			c->in_len = 0;
			if (r.close) {
				conn_close(c, false);
			}
			return r.status;
		}
	}
	conn_close(c, false);
	return -1;
}

/* -r: poll PATH every millisecond until it answers 2xx, for at most -d seconds; print how
 * long after -S (the server's start) that was. */
static int ready_mode(struct bench *b)
{
	struct conn c = { .fd = -1 };
	double deadline = now_s() + b->o.seconds;
	struct timespec pause = { 0, 1000000 }, rt;
	uint64_t attempts = 0;
	int status = -1;

	while (now_s() < deadline) {
		attempts++;
		if (exch_send(b, &c, b->o.method, b->o.path, "", b->o.body, deadline) == 0) {
			status = exch_recv(&c, deadline);
			if (status >= 200 && status <= 299) {
				break;
			}
		}
		nanosleep(&pause, NULL);
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	conn_close(&c, false);
	free(c.in);
	printf(
	    "{\"mode\":\"ready\",\"errors\":%d,\"ready\":%d,\"ready_ms\":%.1f,\"attempts\":%" PRIu64
	    ",\"status\":%d}\n",
	    !(status >= 200 && status <= 299), status >= 200 && status <= 299,
	    b->o.started_at > 0
	        ? ((double)rt.tv_sec + (double)rt.tv_nsec / 1e9 - b->o.started_at) * 1000
	        : 0.0,
	    attempts, status);
	return status >= 200 && status <= 299 ? 0 : 1;
}

/* ------------------------------------------------------------------ watch mode */

enum wwait { W_HEADS, W_QUIET, W_ROUND, W_HOLD };

/* Data on watcher c at time t: the reply head first (it must be a 200), then, in a round,
 * the marker. Returns 1 when the watcher is done for what is waited for. */
static int watch_data(struct bench *b, struct conn *c, char *buf, size_t n, bool round, double t0,
                      double t)
{
	const char *m = b->o.marker;
	char *p = buf + WATCH_TAIL - c->tail_len;

	if (!c->headed) {
		c->headed = true;
		if (n < 12 || memcmp(buf + WATCH_TAIL, "HTTP/1.", 7) != 0 ||
		    memcmp(buf + WATCH_TAIL + 9, "200", 3) != 0) {
			report(b, "watch refused", buf + WATCH_TAIL, n);
			conn_fail(b, c, "watch refused");
			c->state = C_DEAD;
			return 1;
		}
	}
	memcpy(p, c->tail, c->tail_len);
	if (c->excluded) {
		/* whenever it comes: the marker names what this watcher may not see */
		if (!c->leaked && memmem(p, c->tail_len + n, m, strlen(m)) != NULL) {
			c->leaked = true;
			b->leaked++;
		}
	} else if (round && c->got < 0 && memmem(p, c->tail_len + n, m, strlen(m)) != NULL) {
		c->got = t - t0;
		if (record_latency(&b->st, c->got) != 0) {
			return -1;
		}
	}
	c->tail_len = n + c->tail_len < WATCH_TAIL ? n + c->tail_len : WATCH_TAIL;
	memcpy(c->tail, buf + WATCH_TAIL + n - c->tail_len, c->tail_len);
	return 1;
}

/* Poll the watchers until what is waited for (every head, a quiet spell of 300 ms, every
 * watcher's change) has come, or until DEADLINE. Returns -1 on a local failure. */
static int watch_poll(struct bench *b, struct pollfd *pfd, int *idx, enum wwait what, double t0,
                      double deadline)
{
	static char buf[WATCH_TAIL + 65536];
	double quiet_since = now_s();

	for (;;) {
		double now = now_s();
		int n = 0, waiting = 0;

		for (int i = 0; i < b->o.conns; i++) {
			struct conn *c = &b->conns[i];
			if (c->state != C_RECV) {
				continue;
			}
			waiting += (what == W_HEADS && !c->headed) ||
			           (what == W_ROUND && c->got < 0 && !c->excluded);
			pfd[n] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
			idx[n++] = i;
		}
		if (now >= deadline || (what == W_QUIET && now - quiet_since >= 0.3) ||
		    ((what == W_HEADS || what == W_ROUND) && waiting == 0) || n == 0) {
			return 0;
		}
		if (poll(pfd, (nfds_t)n, 20) < 0 && errno != EINTR) {
			return -1;
		}
		now = now_s();
		for (int i = 0; i < n; i++) {
			struct conn *c = &b->conns[idx[i]];
			ssize_t got;
			if (pfd[i].revents == 0) {
				continue;
			}
			got = io_recv(c, buf + WATCH_TAIL, sizeof(buf) - WATCH_TAIL);
			if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
				continue;
			}
			if (got <= 0) {
				conn_fail(b, c, "watch stream closed");
				c->state = C_DEAD;
				continue;
			}
			quiet_since = now;
			if (watch_data(b, c, buf, (size_t)got, what == W_ROUND, t0, now) < 0) {
				return -1;
			}
		}
	}
}

/* -W: N watch streams, then ROUNDS changes: each one's delivery time to every watcher. */
static int watch_mode(struct bench *b, struct pollfd *pfd, int *idx)
{
	struct conn trig = { .fd = -1 };
	char ctype[300 + HDRS_MAX], rmax[8192];
	size_t rlen = 0;
	uint64_t missed = 0, excluded = 0, trig_errors = 0, trig_ok = 0;
	double worst = 0;
	int status;

	snprintf(ctype, sizeof(ctype), "Content-Type: %.200s\r\n%s", b->o.trig_type,
	         b->o.trig_hdrs);
	rmax[0] = '\0';
	for (int i = 0; i < b->o.conns; i++) {
		struct conn *c = &b->conns[i];
		if (build_request(b, c, false) != 0) {
			return -1;
		}
		c->state = C_SEND;
		do_send(b, c); /* a small request: one send */
		c->state = c->fd >= 0 ? C_RECV : C_DEAD;
	}
	if (watch_poll(b, pfd, idx, W_HEADS, 0, now_s() + b->o.timeout_ms / 1000.0) != 0) {
		return -1;
	}
	for (int r = 0; r < b->o.rounds; r++) {
		double t0, top = 0;

		if (watch_poll(b, pfd, idx, W_QUIET, 0, now_s() + 2 + b->o.interval_ms / 1000.0) !=
		    0) {
			return -1;
		}
		for (int i = 0; i < b->o.conns; i++) {
			b->conns[i].got = -1;
		}
		t0 = now_s();
		if (exch_send(b, &trig, b->o.trig_method, b->o.trig_path, ctype, b->o.trig_body,
		              t0 + b->o.timeout_ms / 1000.0) != 0) {
			trig_errors++;
			continue;
		}
		if (watch_poll(b, pfd, idx, W_ROUND, t0, t0 + b->o.timeout_ms / 1000.0) != 0) {
			return -1;
		}
		status = exch_recv(&trig, now_s() + b->o.timeout_ms / 1000.0);
		trig_ok += status >= 200 && status <= 299;
		trig_errors += !(status >= 200 && status <= 299);
		for (int i = 0; i < b->o.conns; i++) {
			struct conn *c = &b->conns[i];
			missed += c->got < 0 && !c->excluded;
			top = c->got > top ? c->got : top;
		}
		worst = top > worst ? top : worst;
		if (rlen < sizeof(rmax) - 16) {
			rlen += (size_t)snprintf(rmax + rlen, sizeof(rmax) - rlen, "%s%.1f",
			                         r ? " " : "", top * 1000);
		}
	}
	for (int i = 0; i < b->o.conns; i++) {
		excluded += b->conns[i].excluded;
	}
	/* a leak of the last round may come late: as long as the other rounds had to wait */
	if (excluded > 0 &&
	    watch_poll(b, pfd, idx, W_QUIET, 0, now_s() + 2 + b->o.interval_ms / 1000.0) != 0) {
		return -1;
	}
	if (b->o.hold > 0 && watch_poll(b, pfd, idx, W_HOLD, 0, now_s() + b->o.hold) != 0) {
		return -1;
	}
	qsort(b->st.lat_us, b->st.n, sizeof(*b->st.lat_us), cmp_u32);
	printf("{\"mode\":\"watch\",\"path\":");
	print_json_str(b->o.path);
	printf(",\"watchers\":%d,\"rounds\":%d,\"samples\":%zu,\"missed\":%" PRIu64
	       ",\"excluded\":%" PRIu64 ",\"leaked\":%" PRIu64
	       ",\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"round_max_ms\":\"%s\","
	       "\"changes_ok\":%" PRIu64 ",\"change_errors\":%" PRIu64 ",\"errors\":%" PRIu64 "}\n",
	       b->o.conns, b->o.rounds, b->st.n, missed, excluded, b->leaked, pct_ms(&b->st, 0.5),
	       pct_ms(&b->st, 0.99), worst * 1000, rmax, trig_ok, trig_errors, b->st.errors);
	conn_close(&trig, false);
	free(trig.in);
	return 0;
}

/* ------------------------------------------------------------------ main */

static int open_all(struct bench *b)
{
	for (int i = 0; i < b->o.conns; i++) {
		b->conns[i].fd = -1;
		if (open_conn(b, &b->conns[i]) != 0) {
			fprintf(stderr, "api-load: connect to %s failed: %s\n", b->host,
			        b->conn_err);
			return -1;
		}
	}
	for (int i = 0; b->o.new_conn && i < b->o.conns; i++) {
		conn_close(&b->conns[i], false); /* -N: every request opens its own */
	}
	return 0;
}

static void close_all(struct bench *b)
{
	for (int i = 0; i < b->o.conns; i++) {
		conn_close(&b->conns[i], false);
		free(b->conns[i].in);
	}
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct rlimit nofile;
	struct pollfd *pfd = NULL;
	int *idx = NULL;
	int rc = 2;

	signal(SIGPIPE, SIG_IGN);
	if (parse_opts(&b.o, argc, argv) != 0 || resolve_loopback(&b) != 0) {
		return 2;
	}
	if (b.o.tls && tls_init(&b) != 0) {
		SSL_CTX_free(b.tls);
		return 2;
	}
	if (b.o.ready) {
		rc = ready_mode(&b);
		SSL_CTX_free(b.tls);
		return rc;
	}
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max; /* 1,000 watchers need more than 1,024 */
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	b.uses_rv = b.o.body != NULL && strstr(b.o.body, "{rv}") != NULL;
	b.conns = calloc((size_t)b.o.conns, sizeof(*b.conns));
	pfd = calloc((size_t)b.o.conns, sizeof(*pfd));
	idx = calloc((size_t)b.o.conns, sizeof(*idx));
	if (b.conns == NULL || pfd == NULL || idx == NULL) {
		goto out;
	}
	if (b.o.hdr_file != NULL) {
		if (load_header_file(&b) != 0) {
			goto out;
		}
		for (int i = 0; i < b.o.conns; i++) {
			b.conns[i].hdr = b.hline[(size_t)i % b.nhline];
			b.conns[i].excluded = b.hexcl[(size_t)i % b.nhline];
		}
	}
	if (open_all(&b) != 0) {
		goto out;
	}
	if (b.o.watch) {
		rc = watch_mode(&b, pfd, idx) == 0 ? 0 : 1;
		close_all(&b);
		goto out;
	}
	b.runq_start = runq_ms();
	b.cpu_start = cpu_seconds();
	b.t_start = now_s();
	b.t_measure = b.t_start + b.o.warmup;
	b.t_stop = b.t_measure + b.o.seconds;
	b.t_hard = b.t_stop + b.o.timeout_ms / 1000.0 + 1.0;
	rc = run(&b, pfd, idx) == 0 ? 0 : 1;
	if (rc == 0) {
		print_results(&b);
	}
	close_all(&b);
out:
	SSL_CTX_free(b.tls);
	free(b.st.lat_us);
	free(b.hfile);
	free(b.hline);
	free(b.hexcl);
	free(b.conns);
	free(pfd);
	free(idx);
	return rc;
}
