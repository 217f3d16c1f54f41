/*
 * core/remote/work.h - the jobs a remote runner takes (docs/runners.md, "Dispatch"): one
 * durable pull consumer per pool it serves on REZUS_<I>_JOBS (i the installation: core/remote/
 * nats.h), a pull request waiting in each
 * while a slot of runner.concurrency is free (a job is there as soon as it is published,
 * whatever the number of pools); a job is claimed from the daemon over HTTPS with the runner
 * token, run with rz_proc in runner.work_dir/<run> (removed after the step), its lines and
 * end published on rezus.<i>.events.<run>, its files (plan, show.json) PUT to the daemon.
 * Cancels come on rezus.<i>.runners.<name>.cancel. Loop thread of the runner.
 */
#ifndef RZ_WORK_H
#define RZ_WORK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/base/config.h"
#include "core/base/errors.h"
#include "core/remote/nats.h"

#define RZ_WORK_CLAIM_MAX      (96u << 20)  /* bytes of a claim's answer at most */
#define RZ_WORK_SHOW_MAX       (16u << 20)  /* bytes of show -json kept to report */
#define RZ_WORK_HTTP_TIMEOUT   30           /* s for one claim or report */
#define RZ_WORK_NAK_DELAY_NS   "5000000000" /* a job that could not be claimed comes back after */
#define RZ_WORK_REPORT_TRIES   120          /* a file the daemon did not answer for: tried again */
#define RZ_WORK_REPORT_WAIT_MS 1000         /* this far apart (a daemon restarting, say) */
#define RZ_WORK_PULL_MS        30000        /* a pull request waits at NATS this long at most */
#define RZ_WORK_PULL_GRACE_MS  5000         /* and its answer this much longer */
#define RZ_WORK_STREAM_WAIT_S  300          /* s a runner waits for the daemon's streams */

struct event_base;
typedef struct rz_work rz_work_t;

#ifdef HAVE_LIBNATS
#include <nats/nats.h>

/* The daemon's runners.installation into out (RZ_NATS_INSTALLATION_MAX + 1 bytes), asked of
 * runner.daemon_url with the runner token: GET /api/v1/runners/<name>/assignment. Blocking:
 * at start. -EAGAIN when no answer came (the daemon not up yet: worth trying again), another
 * error when it answered with a refusal or nonsense. */
int rz_work_installation(const rz_config_t *cfg, const char *name, char *out, rz_err_t *err);

/* Set up the consumers of the pools labels make and the cancel subscription. Blocking
 * (JetStream requests): at start. Caller owns *out. -ENOENT when the job stream is not
 * there yet (the daemon creates it at its first connection): worth trying again. */
int rz_work_new(rz_work_t **out, struct event_base *base, natsConnection *nc,
                const rz_config_t *cfg, const rz_nats_names_t *names, const char *name,
                const json_t *labels, rz_err_t *err);
#endif

/* Take the jobs that came while a slot is free, ask for more, handle cancels: called every
 * tick. */
void rz_work_tick(rz_work_t *w);

/* The runs in progress, a JSON array (caller owns). */
json_t *rz_work_running(const rz_work_t *w);

/* Steps still running. */
size_t rz_work_busy(const rz_work_t *w);

/* Cancel every step still running (on stop): kills its tofu, removes its directory. The
 * subscriptions stay until rz_work_free. Accepts NULL. */
void rz_work_stop(rz_work_t *w);

/* Stop (rz_work_stop) and free. Accepts NULL. Call it after natsConnection_Close: libnats
 * before 3.10 may deliver a message to a subscription destroyed meanwhile (a freed lock:
 * the connection's reader hangs or crashes); a closed connection delivers nothing. */
void rz_work_free(rz_work_t *w);

#endif /* RZ_WORK_H */
