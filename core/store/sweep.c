/* core/store/sweep.c - a walk over every object of a kind, one page per turn of the loop. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/model/kinds.h"
#include "core/store/sweep.h"

#define KEY_MAX 512 /* an owner or a name, with room to spare: names are at most 253 bytes */

struct rz_sweep {
	struct event_base *base;
	rz_store_t *st;
	const rz_kind_t *kind;
	rz_sweep_fn fn;
	rz_sweep_done_fn done;
	void *arg;
	struct event *page;
	bool busy, again, started;
	char after_tenant[KEY_MAX], after_name[KEY_MAX];
	unsigned long long visited;
};

static int on_row(void *arg, const rz_store_row_t *row)
{
	rz_sweep_t *s = arg;
	json_t *obj = json_loadb(row->doc, row->len, 0, NULL);

	snprintf(s->after_tenant, sizeof(s->after_tenant), "%s", row->tenant);
	snprintf(s->after_name, sizeof(s->after_name), "%s", row->name);
	s->started = true;
	s->visited++;
	if (obj != NULL) {
		s->fn(s->arg, obj);
		json_decref(obj);
	}
	return 0;
}

/* On a later turn of the loop: a timer of no delay runs after the loop has polled the
 * sockets again (an event made active would run before that). */
static void next_page(rz_sweep_t *s)
{
	static const struct timeval now = { 0, 0 };

	evtimer_add(s->page, &now);
}

static void on_page(evutil_socket_t fd, short what, void *arg)
{
	rz_sweep_t *s = arg;
	rz_scan_opts_t so = { .after_tenant = s->started ? s->after_tenant : NULL,
		              .after_name = s->started ? s->after_name : NULL };
	rz_err_t err = { 0 };
	int n;

	(void)fd;
	(void)what;
	n = rz_store_scan(s->st, s->kind, &so, on_row, s, &err);
	if (n == RZ_SCAN_PAGE) {
		next_page(s);
		return;
	}
	if (n < 0) {
		rz_logkv(RZ_LOG_ERR, "store", "sweep stopped: cannot read", "kind", s->kind->kind,
		         "error", err.msg, NULL);
	}
	s->busy = false;
	s->started = false;
	if (s->done != NULL) {
		s->done(s->arg);
	}
	if (s->again) {
		s->again = false;
		rz_sweep_start(s);
	}
}

rz_sweep_t *rz_sweep_new(struct event_base *base, rz_store_t *st, const char *kind, rz_sweep_fn fn,
                         rz_sweep_done_fn done, void *arg)
{
	rz_sweep_t *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		return NULL;
	}
	s->base = base;
	s->st = st;
	s->kind = rz_kind_by_name(kind);
	s->fn = fn;
	s->done = done;
	s->arg = arg;
	s->page = evtimer_new(base, on_page, s);
	if (s->kind == NULL || s->page == NULL) {
		rz_sweep_free(s);
		return NULL;
	}
	return s;
}

void rz_sweep_start(rz_sweep_t *s)
{
	if (s->busy) {
		s->again = true;
		return;
	}
	s->busy = true;
	s->started = false;
	next_page(s);
}

bool rz_sweep_busy(const rz_sweep_t *s)
{
	return s->busy;
}

unsigned long long rz_sweep_visited(const rz_sweep_t *s)
{
	return s->visited;
}

void rz_sweep_free(rz_sweep_t *s)
{
	if (s == NULL) {
		return;
	}
	if (s->page != NULL) {
		event_free(s->page);
	}
	free(s);
}
