/*
 * fuzz/serve.h - raw bytes through the HTTP server: one end of a socketpair is handed to the
 * server (rz_http_serve_fd), the target writes the input into the other and collects what
 * comes back, running the loop until the exchange goes quiet.
 */
#ifndef RZ_FUZZ_SERVE_H
#define RZ_FUZZ_SERVE_H

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "fuzz/fuzz.h"
#include "core/http/http.h"

/* Loop turns without progress after which the exchange is over. */
#define FZ_QUIET_TURNS 16

/* Send data as one connection's bytes; the reply (at most cap - 1 bytes, NUL-terminated; the
 * rest is read and dropped) goes to out. Returns the number of reply bytes. */
static inline size_t fz_exchange(struct event_base *base, rz_http_t *h, const void *data,
                                 size_t size, char *out, size_t cap)
{
	int sv[2];
	size_t sent = 0, got = 0;
	int quiet = 0;
	bool closed = false;

	FZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair: %s", strerror(errno));
	FZ_ASSERT(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	rz_http_serve_fd(h, sv[1]);
	while (!closed && quiet < FZ_QUIET_TURNS) {
		bool progress = false;
		char buf[16384];
		ssize_t n;

		if (sent < size) {
			n = write(sv[0], (const char *)data + sent, size - sent);
			if (n > 0) {
				sent += (size_t)n;
				progress = true;
			}
		}
		event_base_loop(base, EVLOOP_NONBLOCK);
		while ((n = read(sv[0], buf, sizeof(buf))) > 0) {
			size_t keep = got + (size_t)n < cap - 1 ? (size_t)n : cap - 1 - got;
			memcpy(out + got, buf, keep);
			got += keep;
			progress = true;
		}
		closed = n == 0;
		quiet = progress ? 0 : quiet + 1;
	}
	close(sv[0]);
	for (int i = 0; i < 4; i++) { /* let the server see the close and free the connection */
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	out[got] = '\0';
	return got;
}

/* The status code of the first response in out, or 0 when out is empty. A reply that is
 * not an HTTP/1.1 status line breaks the invariant. */
static inline int fz_status(const char *out, size_t len)
{
	if (len == 0) {
		return 0;
	}
	FZ_ASSERT(len >= 13 && strncmp(out, "HTTP/1.1 ", 9) == 0 && out[12] == ' ', "reply '%.40s'",
	          out);
	FZ_ASSERT(out[9] >= '1' && out[9] <= '5' && out[10] >= '0' && out[10] <= '9' &&
	              out[11] >= '0' && out[11] <= '9',
	          "reply '%.40s'", out);
	return (out[9] - '0') * 100 + (out[10] - '0') * 10 + (out[11] - '0');
}

#endif /* RZ_FUZZ_SERVE_H */
