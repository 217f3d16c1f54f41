/*
 * core/remote/dispatch.h - the messages of job dispatch to remote runners (docs/runners.md,
 * "Dispatch"), built and checked here; no libnats, no I/O: this is what the unit tests check.
 *
 * A job, on JetStream subject rezus.<i>.jobs.<pool> (stream REZUS_<I>_JOBS, work queue; i the
 * installation: core/remote/nats.h), carries no secret:
 *
 *   {"run": "run-abc12", "tenant": "acme", "step": "plan", "attempt": 1,
 *    "daemon": "https://rezus.example:8443"}
 *
 * An event, on rezus.<i>.events.<run> (stream REZUS_<I>_EVENTS), one line of a step's output or its
 * end, in order (seq counts from 1 per run and step):
 *
 *   {"run": "run-abc12", "step": "plan", "seq": 7, "line": "...", "stderr": false}
 *   {"run": "run-abc12", "step": "plan", "seq": 8,
 *    "exit": {"status": 0, "timed_out": false, "canceled": false}}
 *
 * Pools. A run's runnerSelector (the tenant's merged with its node groups': core/model/kinds.h,
 * rz_kind_runner_selector; label key -> value) names the pool its jobs go to:
 * "default" when it is empty, else its pairs sorted by key, each written key "_" value, the
 * pairs joined by "+", where in keys and values the characters [A-Za-z0-9-] stand for
 * themselves and every other one ('.', '/', '_') is written "%" and two upper-case hex
 * digits: {region: eu-frankfurt} -> "region_eu-frankfurt", {a.b/c: x_y, tier: gold} ->
 * "a%2Eb%2Fc_x%5Fy+tier_gold". No non-empty selector gives "default" (it has a "_"). A
 * runner serves "default" and every pool of at most RZ_DISPATCH_SELECTOR_MAX of its labels.
 */
#ifndef RZ_DISPATCH_H
#define RZ_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/remote/nats.h"

#define RZ_DISPATCH_POOL_DEFAULT "default"
#define RZ_DISPATCH_SELECTOR_MAX 3                 /* pairs in a runnerSelector at most */
#define RZ_DISPATCH_POOL_MAX     4096              /* bytes of a pool token, at most */
#define RZ_DISPATCH_POOLS_MAX    64                /* pools one runner serves, at most */
#define RZ_DISPATCH_JOB_MAX      2048              /* bytes of a job message at most */
#define RZ_DISPATCH_EVENT_MAX    (64 * 1024)       /* bytes of an event message at most */
#define RZ_DISPATCH_LINE_MAX     (32 * 1024)       /* bytes of one log line in an event */
#define RZ_DISPATCH_URL_MAX      512               /* bytes of the daemon's URL in a job */
#define RZ_DISPATCH_MAC_HEADER   "Rezus-Event-Mac" /* an event's MAC, as a NATS header */
#define RZ_DISPATCH_KEY_LEN      32                /* bytes of a claim's event key */
#define RZ_DISPATCH_MAC_HEX      65                /* a MAC in hex, with its NUL */

typedef struct rz_dispatch_job {
	char run[64], tenant[64], step[8];
	int64_t attempt;
	char daemon[RZ_DISPATCH_URL_MAX + 1];
} rz_dispatch_job_t;

typedef struct rz_dispatch_event {
	char run[64], step[8];
	int64_t seq;
	bool is_exit;
	/* a line (is_exit false): not NUL-free necessarily; line points into the parsed JSON,
	 * valid until rz_dispatch_event_clear */
	const char *line;
	size_t line_len;
	bool is_stderr;
	/* the exit (is_exit true) */
	int status;
	bool timed_out, canceled;
	json_t *json; /* owns line */
} rz_dispatch_event_t;

/* Events are authenticated: the daemon answers a claim with an event key of that claim
 * (run, step, runner; "eventKey", hex, over HTTPS), and the runner publishes each event of
 * the step with the header Rezus-Event-Mac: HMAC-SHA256 under that key of the subject, a
 * newline and the message, in hex. The daemon drops an event without a valid MAC: whoever
 * may publish on rezus.<i>.events.* cannot end or write into another runner's step. */

/* The MAC of an event on subject into mac (hex, NUL-terminated). */
void rz_dispatch_event_mac(const unsigned char key[RZ_DISPATCH_KEY_LEN], const char *subject,
                           const char *data, size_t len, char mac[RZ_DISPATCH_MAC_HEX]);

/* Whether mac (NULL: none) is the event's MAC under key; compared in constant time. */
bool rz_dispatch_event_mac_ok(const unsigned char key[RZ_DISPATCH_KEY_LEN], const char *subject,
                              const char *data, size_t len, const char *mac);

/* Whether step is one of init, plan, show, apply. */
bool rz_dispatch_step_valid(const char *step);

/* Check a runnerSelector (NULL or an object): at most RZ_DISPATCH_SELECTOR_MAX pairs of
 * label keys and values. false with why (naming the key at fault) filled. */
bool rz_dispatch_selector_check(const json_t *selector, char *why, size_t why_size);

/* The pool token of a selector (NULL or empty: "default") into buf; false with why when the
 * selector is invalid or the token longer than size - 1. */
bool rz_dispatch_pool(const json_t *selector, char *buf, size_t size, char *why, size_t why_size);

/* The pools a runner with these labels (an object) serves: "default" first, then the pool of
 * every non-empty subset of at most RZ_DISPATCH_SELECTOR_MAX labels. A JSON array of strings
 * (caller owns), or NULL with why when there would be more than RZ_DISPATCH_POOLS_MAX. */
json_t *rz_dispatch_pools(const json_t *labels, char *why, size_t why_size);

/* The durable consumer's name of a pool into out: "pool-" and the pool, '%' written '~' and
 * '+' written '=' (consumer names have neither). */
void rz_dispatch_durable(char *out, size_t size, const char *pool);

/* The NATS permissions of runner name with these labels in installation names (docs/runners.md,
 * "NATS permissions"): publish its own heartbeat, events (rezus.<i>.events.*: each
 * authenticated by its MAC), and, for each pool it serves only, the creation, info, pull
 * requests and acks of the pool's consumer; subscribe its own inbox prefix
 * (RZ_NATS_RUNNER_INBOX<name>) and its cancels. Nothing else: no other runner's subjects, no stream
 * or message of JetStream's API.
 * {"publish": {"allow": [...]}, "subscribe": {"allow": [...]}} (caller owns), or NULL with why
 * as rz_dispatch_pools. */
json_t *rz_dispatch_permissions(const rz_nats_names_t *names, const char *name,
                                const json_t *labels, char *why, size_t why_size);

/* Whether a runner's labels satisfy a selector: every pair present with the same value. */
bool rz_dispatch_matches(const json_t *labels, const json_t *selector);

/* A job as JSON (caller frees with free()); NULL when a field is out of bounds. */
char *rz_dispatch_job_build(const rz_dispatch_job_t *job);

/* Check a job message: at most RZ_DISPATCH_JOB_MAX bytes, run and tenant object names, a
 * known step, attempt >= 1, daemon an http(s) URL. false with why filled. */
bool rz_dispatch_job_parse(const char *data, size_t len, rz_dispatch_job_t *out, char *why,
                           size_t why_size);

/* Events as JSON (caller frees); a line longer than RZ_DISPATCH_LINE_MAX is cut there. */
char *rz_dispatch_event_line(const char *run, const char *step, int64_t seq, const char *line,
                             size_t len, bool is_stderr);
char *rz_dispatch_event_exit(const char *run, const char *step, int64_t seq, int status,
                             bool timed_out, bool canceled);

/* Check an event that arrived on subject (rezus.<i>.events.<run>, naming the same run): bounded,
 * a known step, seq >= 1, either a string line or an exit object with an integer status
 * 0..255 and booleans. false with why filled; on success clear out with
 * rz_dispatch_event_clear. */
bool rz_dispatch_event_parse(const char *subject, const char *data, size_t len,
                             rz_dispatch_event_t *out, char *why, size_t why_size);
void rz_dispatch_event_clear(rz_dispatch_event_t *ev);

#endif /* RZ_DISPATCH_H */
