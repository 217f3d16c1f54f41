/*
 * core/remote/heartbeat.h - a runner's heartbeat (docs/runners.md): the JSON a runner
 * publishes on rezus.<i>.runners.<name>.heartbeat every runner.heartbeat, built by the runner
 * and checked by the daemon. It carries no secret:
 *
 *   {"name": "eu-1", "labels": {"region": "eu-frankfurt"}, "version": "0.9.0",
 *    "concurrency": 2, "running": ["run-abc12"], "startedAt": "2026-12-01T20:00:00.000Z",
 *    "stopping": false}
 *
 * No libnats here: this is what the unit tests check.
 */
#ifndef RZ_HEARTBEAT_H
#define RZ_HEARTBEAT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define RZ_HEARTBEAT_MAX     (16u * 1024) /* bytes of a heartbeat at most; larger: dropped */
#define RZ_HEARTBEAT_LABELS  32           /* labels of a runner at most */
#define RZ_HEARTBEAT_RUNNING 64           /* runs in progress listed (runner.concurrency's max) */
#define RZ_SUBJECT_SUFFIX    ".heartbeat" /* after rezus.<i>.runners.<name> */

/* The runner's name out of a heartbeat subject "rezus.<i>.runners.<name>.heartbeat" into buf
 * (64 bytes at least), whatever the installation i; false when the subject has another form
 * or the name is no DNS label. */
bool rz_heartbeat_subject_name(const char *subject, char *buf, size_t size);

/* Check one heartbeat that arrived on subject: at most RZ_HEARTBEAT_MAX bytes, a JSON
 * object whose name is the subject's, labels valid label keys and values (at most
 * RZ_HEARTBEAT_LABELS), concurrency 1..64, running an array of at most
 * RZ_HEARTBEAT_RUNNING object names, version and startedAt strings (bounded), stopping a
 * boolean when present. Returns the object (caller owns) with only those members, or NULL
 * with why (for the log and tests) filled. */
json_t *rz_heartbeat_parse(const char *subject, const char *data, size_t len, char *why,
                           size_t why_size);

/* Validate "key=value" labels (runner.labels) into a JSON object (caller owns); NULL with
 * why naming the first bad one. labels is NULL-terminated or NULL. */
json_t *rz_heartbeat_labels(char *const *labels, char *why, size_t why_size);

#endif /* RZ_HEARTBEAT_H */
