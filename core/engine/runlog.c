/* core/engine/runlog.c - a run's log file and its live followers. */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/engine/runlog.h"

struct follower {
	rz_req_t *req;
	struct follower *next;
};

struct rz_runlog {
	FILE *f;                    /* NULL when the file could not be created */
	struct follower *followers; /* GET …/log?follow=true streams, live */
};

/* One log line as a server-sent event; \r in it would end the SSE line early. */
static void sse_line(rz_req_t *req, const char *line, size_t len)
{
	rz_reply_write(req, "data: ", 6);
	for (size_t i = 0; i < len; i++) {
		rz_reply_write(req, line[i] == '\r' ? " " : &line[i], 1);
	}
	rz_reply_write(req, "\n\n", 2);
}

/* The last event of a followed log: the run's phase. */
static void sse_end(rz_req_t *req, const char *phase)
{
	char end[96];
	int n = snprintf(end, sizeof(end), "event: end\ndata: %s\n\n", phase);

	rz_reply_write(req, end, (size_t)n);
	rz_reply_end(req);
}

rz_runlog_t *rz_runlog_open(const char *path)
{
	rz_runlog_t *l = calloc(1, sizeof(*l));

	if (l != NULL) {
		/* 0600: a run's output names resources and ids that are nobody else's business */
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		l->f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (fd >= 0 && l->f == NULL) {
			close(fd);
		}
	}
	return l;
}

void rz_runlog_line(rz_runlog_t *l, const char *line, size_t len)
{
	if (l == NULL) {
		return;
	}
	if (l->f != NULL) {
		fprintf(l->f, "%.*s\n", (int)len, line);
	}
	for (struct follower *f = l->followers; f != NULL; f = f->next) {
		sse_line(f->req, line, len);
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
		free(f);
	}
	if (l->f != NULL) {
		fclose(l->f);
	}
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
			free(f);
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

void rz_runlog_serve(rz_req_t *req, const char *path, rz_runlog_t *live, const char *phase,
                     bool follow)
{
	struct follower *fw;
	size_t len;
	char *text;

	if (live != NULL && live->f != NULL) {
		fflush(live->f); /* everything written so far, then live lines: none lost */
	}
	text = slurp(path, &len);
	if (!follow) {
		rz_reply(req, 200, "text/plain; charset=utf-8", text ? text : "", text ? len : 0);
		free(text);
		return;
	}
	if (rz_reply_start(req, 200, "text/event-stream") != 0) {
		rz_reply_end(req);
		free(text);
		return;
	}
	for (char *p = text, *nl; p != NULL && p < text + len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (nl == NULL) {
			nl = text + len;
		}
		sse_line(req, p, (size_t)(nl - p));
	}
	free(text);
	fw = live ? calloc(1, sizeof(*fw)) : NULL;
	if (fw == NULL) {
		sse_end(req, phase);
		return;
	}
	fw->req = req;
	fw->next = live->followers;
	live->followers = fw;
	rz_req_on_close(req, unfollow, live);
}
