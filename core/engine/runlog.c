/* core/engine/runlog.c - a run's log file, its live followers, and the log as served. */
#include <config.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/text.h"
#include "core/engine/runlog.h"
#include "core/engine/tfui.h"
#include "core/http/status.h"

/* A reader of the log: one request, the form it asked for, the ids it has been shown. */
struct follower {
	rz_req_t *req;
	bool json;     /* ?format=json: the lines as stored; else human text */
	rz_tfui_t *ui; /* the resource ids its lines carried, redacted wherever they recur */
	struct follower *next;
};

/* The last lines of a log whose head is full: a ring of whole lines. */
struct tail {
	char *buf;
	size_t cap, start, len;
};

struct rz_runlog {
	FILE *f;                    /* NULL when the file could not be created */
	rz_tfui_t *ids;             /* the resource ids its lines showed, kept out of the file */
	struct follower *followers; /* GET …/log?follow=true streams, live */
	uint64_t head_max;          /* bytes of the file's head; then lines go to the tail */
	uint64_t written;           /* bytes in the file */
	uint64_t dropped;           /* bytes of lines neither in the head nor in the tail */
	bool cutting;               /* the head is full */
	struct tail tail;
};

/* ------------------------------------------------------------------ the size bound */

/* Room for the marker line between head and tail. */
#define MARKER_MAX 96
/* The run log's stdio buffer, line-buffered: a longer line takes more than one write. */
#define RUNLOG_LINE_BUF (64 * 1024)

static void marker(char *out, size_t size, uint64_t dropped)
{
	snprintf(out, size, "… %" PRIu64 " bytes of output dropped …\n", dropped);
}

/* The ring's front line goes (counted as dropped). */
static void tail_drop_line(rz_runlog_t *l)
{
	struct tail *t = &l->tail;
	size_t first = t->cap - t->start < t->len ? t->cap - t->start : t->len;
	const char *nl = memchr(t->buf + t->start, '\n', first);
	size_t n;

	if (nl != NULL) {
		n = (size_t)(nl - (t->buf + t->start)) + 1;
	} else if ((nl = memchr(t->buf, '\n', t->len - first)) != NULL) {
		n = first + (size_t)(nl - t->buf) + 1; /* the line wraps around */
	} else {
		n = t->len;
	}
	t->start = (t->start + n) % t->cap;
	t->len -= n;
	l->dropped += n;
}

/* n bytes at the ring's end (there is room). */
static void tail_put(struct tail *t, const char *p, size_t n)
{
	size_t at = (t->start + t->len) % t->cap;
	size_t first = t->cap - at < n ? t->cap - at : n;

	memcpy(t->buf + at, p, first);
	memcpy(t->buf, p + first, n - first);
	t->len += n;
}

/* A line (and its newline) at the ring's end, whole lines leaving its front to make room;
 * a line longer than the ring keeps its end. */
static void tail_add(rz_runlog_t *l, const char *line, size_t len)
{
	struct tail *t = &l->tail;

	if (t->buf == NULL) {
		l->dropped += len + 1;
		return;
	}
	if (len + 1 > t->cap) {
		l->dropped += len + 1 - t->cap;
		line += len + 1 - t->cap;
		len = t->cap - 1;
	}
	while (t->len + len + 1 > t->cap) {
		tail_drop_line(l);
	}
	tail_put(t, line, len);
	tail_put(t, "\n", 1);
}

/* The marker and the tail, as they end the file once the run is over. Caller frees;
 * NULL when the head is not full (or out of memory). */
static char *rest(const rz_runlog_t *l, size_t *len)
{
	char *out;
	size_t m;

	*len = 0;
	if (!l->cutting || (out = malloc(MARKER_MAX + l->tail.len + 1)) == NULL) {
		return NULL;
	}
	marker(out, MARKER_MAX, l->dropped);
	m = strlen(out);
	for (size_t i = 0; i < l->tail.len; i++) {
		out[m + i] = l->tail.buf[(l->tail.start + i) % l->tail.cap];
	}
	*len = m + l->tail.len;
	out[*len] = '\0';
	return out;
}

/* One redacted line to the file while its head has room, else to the tail. */
static void store_line(rz_runlog_t *l, const char *line, size_t len)
{
	if (!l->cutting && l->written + len + 1 > l->head_max) {
		l->cutting = true;
	}
	if (l->cutting) {
		tail_add(l, line, len);
		return;
	}
	fwrite(line, 1, len, l->f);
	fputc('\n', l->f);
	l->written += len + 1;
}

/* A stored line as its reader asked for it — as stored, or as human text — with the
 * resource ids its reader has learned (this line's among them) redacted. Caller frees;
 * NULL when out of memory (the line is then not served: it might show an id). */
static char *served(const struct follower *f, const char *line, size_t len, size_t *out)
{
	char *human = NULL, *text;
	size_t n = 0;

	if (!f->json && (human = rz_tfui_human(line, len, &n)) == NULL) {
		return NULL;
	}
	text = rz_tfui_redact(f->ui, human ? human : line, human ? n : len, out);
	free(human);
	return text;
}

static void follower_free(struct follower *f)
{
	if (f != NULL) {
		rz_tfui_free(f->ui);
		free(f);
	}
}

/* Text of one or more lines as one server-sent event, a data: line each; a \r would end
 * an SSE line early, so it becomes a blank. */
static void sse_text(rz_req_t *req, const char *text, size_t len)
{
	size_t from = 0;

	rz_reply_write(req, "data: ", 6);
	for (size_t i = 0; i <= len; i++) {
		if (i < len && text[i] != '\n' && text[i] != '\r') {
			continue;
		}
		rz_reply_write(req, text + from, i - from);
		if (i < len) {
			rz_reply_write(req, text[i] == '\n' ? "\ndata: " : " ",
			               text[i] == '\n' ? 7 : 1);
		}
		from = i + 1;
	}
	rz_reply_write(req, "\n\n", 2);
}

/* One stored line to a follower, in the form it asked for (dropped when out of memory). */
static void sse_line(const struct follower *f, const char *line, size_t len)
{
	size_t n = 0;
	char *text = served(f, line, len, &n);

	if (text != NULL) {
		sse_text(f->req, text, n);
	}
	free(text);
}

/* The last event of a followed log: the run's phase. */
static void sse_end(rz_req_t *req, const char *phase)
{
	char end[96];
	int n = snprintf(end, sizeof(end), "event: end\ndata: %s\n\n", phase);

	rz_reply_write(req, end, (size_t)n);
	rz_reply_end(req);
}

static rz_runlog_t *open_log(const char *path, uint64_t max, bool append)
{
	rz_runlog_t *l = calloc(1, sizeof(*l));
	struct stat st;

	if (max < RZ_RUNLOG_MIN) {
		max = RZ_RUNLOG_MIN;
	}
	if (l != NULL) {
		l->tail.cap = max / 2 < RZ_RUNLOG_TAIL_MAX ? (size_t)(max / 2) : RZ_RUNLOG_TAIL_MAX;
		l->head_max = max - l->tail.cap - MARKER_MAX;
		l->tail.buf = malloc(l->tail.cap); /* NULL: the log keeps its head only */
		/* 0600: a run's output names resources and ids that are nobody else's business */
		int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_CLOEXEC,
		              0600);
		l->f = fd >= 0 ? fdopen(fd, append ? "a" : "w") : NULL;
		if (fd >= 0 && l->f == NULL) {
			close(fd);
		}
		if (l->f != NULL) {
			/* a line reaches the file when it is stored, in one write when it fits:
			 * a daemon killed mid-run loses no line it stored nor cuts one in two */
			(void)setvbuf(l->f, NULL, _IOLBF, RUNLOG_LINE_BUF);
		}
		if (append && l->f != NULL && fstat(fd, &st) == 0) {
			l->written = (uint64_t)st.st_size; /* the head so far: the bound holds */
		}
		l->ids = rz_tfui_new();
	}
	return l;
}

rz_runlog_t *rz_runlog_open(const char *path, uint64_t max)
{
	return open_log(path, max, false);
}

rz_runlog_t *rz_runlog_reopen(const char *path, uint64_t max)
{
	return open_log(path, max, true);
}

void rz_runlog_line(rz_runlog_t *l, const char *line, size_t len)
{
	if (l == NULL) {
		return;
	}
	if (l->f != NULL) {
		/* The file is redacted too, so that no id (a cluster's secret, for sim) rests in
		 * clear on disk; a line that cannot be redacted is not written. */
		size_t n = 0;
		char *safe = l->ids != NULL && rz_tfui_learn(l->ids, line, len) == 0
		                 ? rz_tfui_redact(l->ids, line, len, &n)
		                 : NULL;
		if (safe != NULL) {
			store_line(l, safe, n);
			free(safe);
		}
	}
	for (struct follower *f = l->followers; f != NULL; f = f->next) {
		if (rz_tfui_learn(f->ui, line, len) == 0) { /* else dropped: it might show an id */
			sse_line(f, line, len);
		}
	}
}

void rz_runlog_close(rz_runlog_t *l, const char *phase)
{
	if (l == NULL) {
		return;
	}
	while (l->followers != NULL) {
		struct follower *f = l->followers;
		l->followers = f->next;
		rz_req_on_close(f->req, NULL, NULL);
		sse_end(f->req, phase);
		follower_free(f);
	}
	if (l->f != NULL) {
		size_t n = 0;
		char *end = rest(l, &n);
		if (end != NULL) {
			fwrite(end, 1, n, l->f);
		}
		free(end);
		fclose(l->f);
	}
	rz_tfui_free(l->ids);
	free(l->tail.buf);
	free(l);
}

/* A follower's client went away (or the server stops): drop it. */
static void unfollow(rz_req_t *req, void *arg)
{
	rz_runlog_t *l = arg;

	for (struct follower **pp = &l->followers; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->req == req) {
			struct follower *f = *pp;
			*pp = f->next;
			follower_free(f);
			break;
		}
	}
	rz_reply_end(req);
}

/* The whole file at path into a new buffer (NULL when there is none). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r"), *mem;
	char buf[8192], *text = NULL;
	size_t n;

	*len = 0;
	if (f == NULL) {
		return NULL;
	}
	mem = open_memstream(&text, len);
	while (mem != NULL && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		fwrite(buf, 1, n, mem);
	}
	if (mem != NULL) {
		fclose(mem);
	}
	fclose(f);
	return text;
}

/* The next line of text[*at..len) (without its newline); false when there is none. */
static bool next_line(const char *text, size_t len, size_t *at, const char **line, size_t *n)
{
	const char *nl;

	if (text == NULL || *at >= len) {
		return false;
	}
	*line = text + *at;
	nl = memchr(*line, '\n', len - *at);
	*n = nl ? (size_t)(nl - *line) : len - *at;
	*at += *n + 1;
	return true;
}

/* Every id the log at text shows, learned by its reader before any line is served: an
 * id is redacted even where it appears before tofu prints it as one. */
static int learn_all(struct follower *r, const char *text, size_t len)
{
	const char *line;
	size_t at = 0, n;

	while (next_line(text, len, &at, &line, &n)) {
		if (rz_tfui_learn(r->ui, line, n) != 0) {
			return -1;
		}
	}
	return 0;
}

/* The whole log as reader r asked for it, a line each. Caller frees; NULL when out of
 * memory. */
static char *whole(const struct follower *r, const char *text, size_t len, size_t *out)
{
	char *all = NULL, *one;
	const char *line;
	size_t at = 0, n, m;
	bool failed = false;
	FILE *f = open_memstream(&all, out);

	if (f == NULL) {
		return NULL;
	}
	while (!failed && next_line(text, len, &at, &line, &n)) {
		if ((one = served(r, line, n, &m)) == NULL) {
			failed = true;
			break;
		}
		fwrite(one, 1, m, f);
		fputc('\n', f);
		free(one);
	}
	if (fclose(f) != 0 || failed) {
		free(all);
		return NULL;
	}
	return all;
}

/* ?format=: "text" (the default) or "json"; anything else is answered 400 here. */
static int format_of(rz_req_t *req, bool *json)
{
	const char *format = rz_req_query(req, "format");
	char msg[160];
	json_t *st;

	*json = format != NULL && strcmp(format, "json") == 0;
	if (format == NULL || *json || strcmp(format, "text") == 0) {
		return 0;
	}
	snprintf(msg, sizeof(msg), "invalid format '%s': use text or json", RZ_ECHO(format, 64));
	st = rz_status_new(400, NULL, msg);
	rz_status_add_cause(st, "format", "FieldValueNotSupported",
	                    "supported values: \"text\", \"json\"");
	rz_reply_status(req, st);
	return -1;
}

/* The whole log in one reply. */
static void reply_whole(rz_req_t *req, const struct follower *r, const char *text, size_t len)
{
	size_t n = 0;
	char *out = text != NULL ? whole(r, text, len, &n) : NULL;

	if (text != NULL && out == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
	} else {
		rz_reply(req, 200, "text/plain; charset=utf-8", out ? out : "", out ? n : 0);
	}
	free(out);
}

void rz_runlog_serve(rz_req_t *req, const char *path, rz_runlog_t *live, const char *phase,
                     bool follow)
{
	struct follower r = { req, false, NULL, NULL }, *fw;
	const char *line;
	size_t len = 0, at = 0, n;
	char *text = NULL;

	if (format_of(req, &r.json) != 0) {
		return;
	}
	if (live != NULL && live->f != NULL) {
		fflush(live->f); /* everything written so far, then live lines: none lost */
	}
	text = slurp(path, &len);
	if (live != NULL && live->cutting && text != NULL) { /* the head so far, then the tail */
		size_t m = 0;
		char *end = rest(live, &m), *all = end ? realloc(text, len + m + 1) : NULL;
		if (all != NULL) {
			memcpy(all + len, end, m + 1);
			text = all;
			len += m;
		}
		free(end);
	}
	if ((r.ui = rz_tfui_new()) == NULL || learn_all(&r, text, len) != 0) {
		rz_reply_error(req, 500, NULL, "out of memory");
		goto out;
	}
	if (!follow) {
		reply_whole(req, &r, text, len);
		goto out;
	}
	if (rz_reply_start(req, 200, "text/event-stream") != 0) {
		rz_reply_end(req);
		goto out;
	}
	while (next_line(text, len, &at, &line, &n)) {
		sse_line(&r, line, n);
	}
	if (live == NULL || (fw = malloc(sizeof(*fw))) == NULL) {
		sse_end(req, phase);
		goto out;
	}
	*fw = r;
	r.ui = NULL; /* the follower's now */
	fw->next = live->followers;
	live->followers = fw;
	rz_req_on_close(req, unfollow, live);
out:
	rz_tfui_free(r.ui);
	free(text);
}
