/*
 * tests/integration/rzabuse.c - many hostile HTTP connections at once, for abuse.sh.
 *
 *   rzabuse -p PORT -n CONNS -m MODE [-a ADDRS] [-b BASE] [-s SIZE] [-t TOKEN]
 *           [-d SECONDS] [-i INTERVAL_MS] [-P PID] [-u PATH]
 *
 * Opens CONNS connections to 127.0.0.1:PORT (from 127.0.0.BASE .. BASE+ADDRS-1, so caps
 * per source address can be exercised on loopback) and, by MODE:
 *   idle      sends nothing;
 *   slowhead  sends a request head one byte every INTERVAL_MS (slowloris);
 *   slowbody  sends a whole head with Content-Length SIZE, then one body byte every
 *             INTERVAL_MS;
 *   body      sends a POST to PATH with a SIZE-byte body as fast as the server takes it
 *             (with "Authorization: Bearer TOKEN" when -t is given);
 *   header    sends a GET whose one header is SIZE bytes long;
 *   pipeline  sends GET PATH 200 times per write, over and over, and never reads an
 *             answer (the connection counts as closed when the server ends it).
 * It runs until every connection is closed or answered, or SECONDS pass, sampling the
 * daemon's VmRSS (-P PID) as it goes, and prints one line:
 *   opened=N failed=N closed=N open=N answered=N codes=401:3,503:2 maxlife_ms=N
 *   rss_max_kb=N
 * closed counts connections the server closed; maxlife_ms is the longest time from
 * connect to that close; answered counts responses whose status line arrived.
 * Memory stays constant whatever SIZE is: bodies are sent from one small buffer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum mode { M_IDLE, M_SLOWHEAD, M_SLOWBODY, M_BODY, M_HEADER, M_PIPELINE };

struct conn {
	int fd;
	bool connected, done, closed;
	int code;
	char head[512];  /* the request head */
	size_t head_len; /* its length */
	uint64_t sent;   /* bytes of head + body sent */
	uint64_t total;  /* bytes to send in all */
	double opened, next_send;
	char resp[16];
	size_t resp_len;
};

static int port, nconn = 1, naddr = 1, addr_base = 1, interval_ms = 500, pid;
static double seconds = 10;
static uint64_t size;
static const char *token, *path = "/api/v1/tenants";
static enum mode mode = M_IDLE;
static char filler[65536];
static char batch[65536]; /* pipeline: 200 requests, sent as one write */
static size_t batch_len;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
	char name[64], line[256];
	long kb = 0;
	FILE *f;

	if (pid <= 0) {
		return 0;
	}
	snprintf(name, sizeof(name), "/proc/%d/status", pid);
	f = fopen(name, "r");
	if (f == NULL) {
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kb = strtol(line + 6, NULL, 10);
		}
	}
	fclose(f);
	return kb;
}

static void prepare(struct conn *c)
{
	const char *auth = token ? "Authorization: Bearer " : "";
	const char *crlf = token ? "\r\n" : "";

	switch (mode) {
	case M_IDLE:
		c->head_len = 0;
		break;
	case M_SLOWHEAD:
		c->head_len = (size_t)snprintf(c->head, sizeof(c->head),
		                               "GET /healthz HTTP/1.1\r\nHost: x\r\n"
		                               "X-Slow: %0400d\r\n\r\n",
		                               0);
		break;
	case M_SLOWBODY:
	case M_BODY:
		c->head_len = (size_t)snprintf(c->head, sizeof(c->head),
		                               "POST %s HTTP/1.1\r\nHost: x\r\n%s%s%s"
		                               "Content-Type: application/json\r\n"
		                               "Content-Length: %llu\r\n\r\n",
		                               path, auth, token ? token : "", crlf,
		                               (unsigned long long)size);
		c->total = c->head_len + size;
		return;
	case M_HEADER:
		c->head_len = (size_t)snprintf(c->head, sizeof(c->head),
		                               "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ");
		c->total = c->head_len + size + 4; /* the value, then "\r\n\r\n" */
		return;
	case M_PIPELINE:
		c->head_len = 0;
		c->total = UINT64_MAX;
		return;
	}
	c->total = c->head_len;
}

static int open_one(struct conn *c, int i)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	char ip[32];

	snprintf(ip, sizeof(ip), "127.0.0.%d", addr_base + i % naddr);
	inet_pton(AF_INET, ip, &src.sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		return -1;
	}
#ifdef IP_BIND_ADDRESS_NO_PORT
	{
		int one =
		    1; /* the port is picked at connect(): bind() with port 0 is slow with many */
		setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	}
#endif
	if (addr_base != 1 && bind(c->fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	c->opened = now();
	c->next_send = c->opened;
	prepare(c);
	return 0;
}

/* The next bytes to send from c, or 0 when nothing is due now. */
static size_t due(struct conn *c, const char **data, double t)
{
	bool slow = (mode == M_SLOWHEAD) || (mode == M_SLOWBODY && c->sent >= c->head_len);

	if (c->sent >= c->total) {
		return 0;
	}
	if (mode == M_PIPELINE) {
		*data = batch + c->sent % batch_len;
		return batch_len - c->sent % batch_len;
	}
	if (slow) {
		if (t < c->next_send) {
			return 0;
		}
		c->next_send = t + interval_ms / 1000.0;
	}
	if (c->sent < c->head_len) {
		*data = c->head + c->sent;
		return slow ? 1 : c->head_len - c->sent;
	}
	if (mode == M_HEADER && c->total - c->sent <= 4) {
		*data = &"\r\n\r\n"[4 - (c->total - c->sent)];
		return (size_t)(c->total - c->sent);
	}
	*data = filler;
	if (slow) {
		return 1;
	}
	{
		uint64_t left = c->total - c->sent - (mode == M_HEADER ? 4 : 0);
		return left < sizeof(filler) ? (size_t)left : sizeof(filler);
	}
}

static void on_readable(struct conn *c, double t, double *maxlife)
{
	char buf[4096];
	ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

	if (n > 0) {
		size_t room = sizeof(c->resp) - 1 - c->resp_len;
		size_t take = (size_t)n < room ? (size_t)n : room;
		memcpy(c->resp + c->resp_len, buf, take);
		c->resp_len += take;
		c->resp[c->resp_len] = '\0';
		if (c->code == 0 && c->resp_len >= 12 && strncmp(c->resp, "HTTP/1.", 7) == 0) {
			c->code = atoi(c->resp + 9);
		}
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		return;
	}
	c->closed = true;
	c->done = true;
	if (t - c->opened > *maxlife) {
		*maxlife = t - c->opened;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: rzabuse -p PORT -n CONNS -m "
	                "idle|slowhead|slowbody|body|header|pipeline "
	                "[-a ADDRS] [-b BASE] [-s SIZE] [-t TOKEN] [-d SECONDS] [-i MS] [-P PID] "
	                "[-u PATH]\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const char *const names[] = { "idle", "slowhead", "slowbody",
		                             "body", "header",   "pipeline" };
	int opt;

	while ((opt = getopt(argc, argv, "p:n:m:a:b:s:t:d:i:P:u:")) != -1) {
		switch (opt) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'n':
			nconn = atoi(optarg);
			break;
		case 'a':
			naddr = atoi(optarg);
			break;
		case 'b':
			addr_base = atoi(optarg);
			break;
		case 's':
			size = strtoull(optarg, NULL, 10);
			break;
		case 't':
			token = optarg;
			break;
		case 'd':
			seconds = atof(optarg);
			break;
		case 'i':
			interval_ms = atoi(optarg);
			break;
		case 'P':
			pid = atoi(optarg);
			break;
		case 'u':
			path = optarg;
			break;
		case 'm':
			mode = (enum mode) - 1;
			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
				if (strcmp(optarg, names[i]) == 0) {
					mode = (enum mode)i;
				}
			}
			if ((int)mode < 0) {
				usage();
			}
			break;
		default:
			usage();
		}
	}
	if (port <= 0 || nconn <= 0 || naddr <= 0) {
		usage();
	}
}

int main(int argc, char **argv)
{
	struct conn *conns;
	struct pollfd *pfd;
	int opened = 0, failed = 0, closed = 0, open = 0, answered = 0;
	int codes[600] = { 0 };
	double start, maxlife = 0;
	long rss_max = 0;

	parse_args(argc, argv);
	memset(filler, 'x', sizeof(filler));
	for (int i = 0; i < 200; i++) {
		batch_len += (size_t)snprintf(batch + batch_len, sizeof(batch) - batch_len,
		                              "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
	}
	conns = calloc((size_t)nconn, sizeof(*conns));
	pfd = calloc((size_t)nconn, sizeof(*pfd));
	if (conns == NULL || pfd == NULL) {
		return 1;
	}
	/* in batches of 64, each connected before the next starts: a burst of thousands of
	 * SYNs overflows the listen backlog, and the dropped ones come back only after the
	 * retransmission timeout */
	for (int i = 0; i < nconn; i += 64) {
		int end = i + 64 < nconn ? i + 64 : nconn;
		double until = now() + 5;
		for (int k = i; k < end; k++) {
			if (open_one(&conns[k], k) < 0) {
				conns[k].done = true;
				failed++;
			}
		}
		for (int k = i; k < end; k++) {
			struct pollfd p = { .fd = conns[k].fd, .events = POLLOUT };
			int e = 0;
			socklen_t elen = sizeof(e);
			if (conns[k].done) {
				continue;
			}
			while (poll(&p, 1, 100) == 0 && now() < until) {
			}
			if (getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0 || e != 0 ||
			    !(p.revents & POLLOUT)) {
				close(p.fd);
				conns[k].fd = -1;
				conns[k].done = true;
				failed++;
				continue;
			}
			opened++;
		}
	}
	start = now();
	for (;;) {
		double t = now();
		int live = 0, rc;
		long rss = rss_kb();

		rss_max = rss > rss_max ? rss : rss_max;
		for (int i = 0; i < nconn; i++) {
			struct conn *c = &conns[i];
			const char *data = NULL;
			size_t len;

			pfd[i].fd = c->done ? -1 : c->fd;
			pfd[i].events = mode == M_PIPELINE ? 0 : POLLIN; /* pipeline: never read */
			if (c->done) {
				continue;
			}
			live++;
			while (c->code == 0 && (len = due(c, &data, t)) > 0) {
				ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
				if (n <= 0) {
					if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
					    errno != ENOTCONN) {
						c->closed = c->done = true;
						if (t - c->opened > maxlife) {
							maxlife = t - c->opened;
						}
					} else if (n < 0) {
						pfd[i].events |= POLLOUT;
						if (mode == M_SLOWHEAD || mode == M_SLOWBODY) {
							c->next_send = 0;
						}
					}
					break;
				}
				c->sent += (uint64_t)n;
			}
		}
		if (live == 0 || t - start >= seconds) {
			break;
		}
		rc = poll(pfd, (nfds_t)nconn, 50);
		if (rc < 0 && errno != EINTR) {
			break;
		}
		t = now();
		for (int i = 0; i < nconn && rc > 0; i++) {
			if (conns[i].done || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				continue;
			}
			if (mode == M_PIPELINE) { /* ended by the server: not read */
				conns[i].closed = conns[i].done = true;
				maxlife =
				    t - conns[i].opened > maxlife ? t - conns[i].opened : maxlife;
			} else {
				on_readable(&conns[i], t, &maxlife);
			}
		}
	}
	printf("opened=%d failed=%d", opened, failed);
	for (int i = 0; i < nconn; i++) {
		struct conn *c = &conns[i];
		if (c->fd < 0) {
			continue;
		}
		closed += c->closed;
		open += !c->closed;
		if (c->code > 0 && c->code < 600) {
			answered++;
			codes[c->code]++;
		}
		close(c->fd);
	}
	printf(" closed=%d open=%d answered=%d codes=", closed, open, answered);
	{
		const char *sep = "";
		for (int k = 0; k < 600; k++) {
			if (codes[k] > 0) {
				printf("%s%d:%d", sep, k, codes[k]);
				sep = ",";
			}
		}
		if (*sep == '\0') {
			printf("-");
		}
	}
	printf(" maxlife_ms=%.0f rss_max_kb=%ld\n", maxlife * 1000, rss_max);
	free(conns);
	free(pfd);
	return 0;
}
