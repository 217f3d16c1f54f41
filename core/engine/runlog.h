/*
 * core/engine/runlog.h - a run's log: the file data_dir/work/<tenant>/<run>.log, which
 * keeps tofu's lines with the resource ids they show redacted (one may be a cluster's
 * secret, and nothing secret rests on disk in clear), and the log as served (`GET
 * …/runs/{name}/log`): human text by default (core/engine/tfui.h), the stored lines with
 * `?format=json`; with
 * `?follow=true` as server-sent events, one `data:` event per line, live while the run
 * goes, then an `end` event with the run's phase.
 */
#ifndef RZ_RUNLOG_H
#define RZ_RUNLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/http/http.h"

typedef struct rz_runlog rz_runlog_t;

/* The least tofu.max_run_log can be (a smaller one is raised to it), and the most of a
 * log's end kept in memory while the run goes. */
#define RZ_RUNLOG_MIN      ((uint64_t)64 << 10)
#define RZ_RUNLOG_TAIL_MAX ((size_t)1 << 20)

/* A new log written to path (truncated), of at most max bytes (tofu.max_run_log): when
 * the run prints more, the file keeps the head, then the line "… N bytes of output
 * dropped …", then the last lines (up to RZ_RUNLOG_TAIL_MAX, or half of max), written
 * when the log closes. Followers get every line live. When the file cannot be created the
 * log still serves its followers. NULL only when out of memory. */
rz_runlog_t *rz_runlog_open(const char *path, uint64_t max);

/* The same, for the log of a run a restarted daemon takes up again: what the file holds
 * stays, and counts toward max; the lines follow it. */
rz_runlog_t *rz_runlog_reopen(const char *path, uint64_t max);

/* One line (without its newline): into the file and to every follower. Accepts NULL. */
void rz_runlog_line(rz_runlog_t *l, const char *line, size_t len);

/* The run ended with phase: every follower gets the end event, the file is closed, the
 * log freed. Accepts NULL. */
void rz_runlog_close(rz_runlog_t *l, const char *phase);

/* Answer a request for the log at path, in the form its `format` query parameter asks
 * for ("text", the default, or "json"; anything else is a 400 Status naming the
 * parameter): the whole log, or with follow, the lines so far as events, then — while
 * live (the run's open log, or NULL once it ended) — live lines until rz_runlog_close,
 * else at once the end event with phase. req is answered (or streamed) in every case. */
void rz_runlog_serve(rz_req_t *req, const char *path, rz_runlog_t *live, const char *phase,
                     bool follow);

#endif /* RZ_RUNLOG_H */
