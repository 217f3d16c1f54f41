/*
 * fuzz/tfstate.c - the TF http state backend's documents (core/tfstate/tfstate.c): lock
 * info (LOCK, UNLOCK) and state (POST), as tofu sends them, through the real handlers on a
 * real database.
 *
 * Input: byte 0 picks the request (LOCK, UNLOCK, POST state, POST state under a lock ID);
 * the rest is the body. Invariants: no document gets a 500; a lock taken is taken again by
 * the same info (a retry) and released by it; a state stored is served back byte for byte.
 */
#include <config.h>

#include "fuzz/env.h"
#include "fuzz/serve.h"
#include "core/base/log.h"
#include "core/tfstate/tfstate.h"

static struct event_base *base;
static rz_http_t *http;
static rz_tfstate_t *ts;
static char reply[1 << 20];

static int call(const char *method, const char *query, const void *body, size_t len,
                const char **rbody, size_t *rlen)
{
	size_t hlen = 256, n;
	char *raw = malloc(hlen + len);
	int head, code;

	FZ_ASSERT(raw != NULL, "out of memory");
	head = snprintf(raw, hlen,
	                "%s /tfstate/t1%s HTTP/1.1\r\nHost: fuzz\r\nContent-Length: %zu\r\n"
	                "Content-Type: application/json\r\n\r\n",
	                method, query, len);
	memcpy(raw + head, body, len);
	n = fz_exchange(base, http, raw, (size_t)head + len, reply, sizeof(reply));
	free(raw);
	code = fz_status(reply, n);
	FZ_ASSERT(code != 0, "%s: no reply", method);
	FZ_ASSERT(code != 500, "%s answered 500: %s", method, reply);
	if (rbody != NULL) {
		const char *end = strstr(reply, "\r\n\r\n");
		FZ_ASSERT(end != NULL, "no end of headers");
		*rbody = end + 4;
		*rlen = n - (size_t)(end + 4 - reply);
	}
	return code;
}

static void lock(const uint8_t *body, size_t len)
{
	int code = call("LOCK", "", body, len, NULL, NULL);

	FZ_ASSERT(code == 200 || code == 400, "LOCK: %d", code);
	if (code == 200) {
		FZ_ASSERT(call("LOCK", "", body, len, NULL, NULL) == 200, "a lock retry refused");
		code = call("UNLOCK", "", body, len, NULL, NULL);
		FZ_ASSERT(code == 200, "UNLOCK by the holder: %d", code);
	}
}

static void post(const uint8_t *body, size_t len, const char *query)
{
	const char *got;
	size_t glen;
	int code = call("POST", query, body, len, NULL, NULL);

	FZ_ASSERT(code == 200 || code == 400 || code == 409, "POST: %d", code);
	if (code == 200) {
		FZ_ASSERT(call("GET", "", "", 0, &got, &glen) == 200, "GET after POST");
		FZ_ASSERT(glen == len && memcmp(got, body, len) == 0,
		          "the state served back differs (%zu bytes sent, %zu served)", len, glen);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int code;

	if (size < 1) {
		return 0;
	}
	switch (data[0] % 4) {
	case 0:
		lock(data + 1, size - 1);
		break;
	case 1:
		code = call("UNLOCK", "", data + 1, size - 1, NULL, NULL);
		FZ_ASSERT(code == 200 || code == 400 || code == 403, "UNLOCK: %d", code);
		break;
	case 2:
		post(data + 1, size - 1, "");
		break;
	default:
		post(data + 1, size - 1, "?ID=fuzz-lock");
		break;
	}
	return 0;
}

static void cleanup(void)
{
	rz_http_free(http);
	rz_tfstate_free(ts);
	event_base_free(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	rz_http_opts_t opts = { .max_body = 1 << 20, .idle_timeout_s = 5 };
	rz_err_t err = { 0 };
	char key[4200];

	rz_log_set_level(RZ_LOG_EMERG);
	fz_env();
	fz_create("Tenant", "{\"metadata\":{\"name\":\"t1\"},\"spec\":{}}");
	snprintf(key, sizeof(key), "%s/state.key", fz_dir);
	base = event_base_new();
	FZ_ASSERT(base != NULL, "event_base_new");
	FZ_ASSERT(rz_http_new(&http, base, &opts, &err) == 0, "http: %s", err.msg);
	FZ_ASSERT(rz_tfstate_new(&ts, fz_db, fz_store, NULL, key, 3, &err) == 0, "tfstate: %s",
	          err.msg);
	FZ_ASSERT(rz_tfstate_routes(ts, http, &err) == 0, "routes: %s", err.msg);
	atexit(cleanup);
	return 0;
}
