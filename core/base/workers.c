/* core/base/workers.c - thread pool whose completions are delivered on the event loop. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/base/workers.h"

#define MAX_THREADS 64

struct job {
	rz_work_fn work;
	rz_done_fn done;
	void *arg;
	int canceled;
	struct job *next;
};

struct rz_workers {
	struct event_base *base;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *queue, *queue_tail; /* waiting for a thread */
	struct job *finished;           /* waiting for done() on the loop */
	pthread_t threads[MAX_THREADS];
	int nthreads;
	bool stopping;
	size_t pending;
	size_t busy, queued; /* jobs running on a thread, waiting for one (under lock) */
	int pipe[2];         /* threads write a byte when a job finishes */
	struct event *wake;
};

static void *thread_main(void *arg)
{
	rz_workers_t *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct job *j;
		while (w->queue == NULL && !w->stopping) {
			pthread_cond_wait(&w->cond, &w->lock);
		}
		if (w->queue == NULL) {
			break;
		}
		j = w->queue;
		w->queue = j->next;
		if (w->queue == NULL) {
			w->queue_tail = NULL;
		}
		w->queued--;
		w->busy++;
		pthread_mutex_unlock(&w->lock);
		j->work(j->arg);
		pthread_mutex_lock(&w->lock);
		w->busy--;
		j->next = w->finished;
		w->finished = j;
		while (write(w->pipe[1], "", 1) < 0 && errno == EINTR) {
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Run done() for every finished job, oldest first. */
static void drain_finished(rz_workers_t *w)
{
	struct job *list, *rev = NULL;
	char buf[256];

	while (read(w->pipe[0], buf, sizeof(buf)) > 0) {
	}
	pthread_mutex_lock(&w->lock);
	list = w->finished;
	w->finished = NULL;
	pthread_mutex_unlock(&w->lock);
	while (list != NULL) {
		struct job *next = list->next;
		list->next = rev;
		rev = list;
		list = next;
	}
	while (rev != NULL) {
		struct job *next = rev->next;
		w->pending--;
		if (rev->done != NULL) {
			rev->done(rev->arg, rev->canceled);
		}
		free(rev);
		rev = next;
	}
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	drain_finished(arg);
}

int rz_workers_new(rz_workers_t **out, struct event_base *base, int nthreads, rz_err_t *err)
{
	rz_workers_t *w;

	*out = NULL;
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		return rz_err_set(err, -EINVAL, "workers: thread count %d out of range 1..%d",
		                  nthreads, MAX_THREADS);
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		return rz_err_set(err, -ENOMEM, "workers: out of memory");
	}
	w->base = base;
	w->pipe[0] = w->pipe[1] = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pipe2(w->pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    (w->wake = event_new(base, w->pipe[0], EV_READ | EV_PERSIST, on_wake, w)) == NULL ||
	    event_add(w->wake, NULL) < 0) {
		int e = errno ? errno : ENOMEM;
		rz_workers_free(w);
		return rz_err_set(err, -e, "workers: cannot set up wake-up pipe: %s", strerror(e));
	}
	for (int i = 0; i < nthreads; i++) {
		int rc = pthread_create(&w->threads[i], NULL, thread_main, w);
		if (rc != 0) {
			rz_workers_free(w);
			return rz_err_set(err, -rc, "workers: cannot start thread: %s",
			                  strerror(rc));
		}
		w->nthreads++;
	}
	*out = w;
	return 0;
}

int rz_workers_submit(rz_workers_t *w, rz_work_fn work, rz_done_fn done, void *arg)
{
	struct job *j;

	if (w->stopping) {
		return -ESHUTDOWN;
	}
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		return -ENOMEM;
	}
	j->work = work;
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&w->lock);
	if (w->queue_tail != NULL) {
		w->queue_tail->next = j;
	} else {
		w->queue = j;
	}
	w->queue_tail = j;
	w->pending++;
	w->queued++;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

size_t rz_workers_pending(const rz_workers_t *w)
{
	return w->pending;
}

void rz_workers_stats(rz_workers_t *w, rz_workers_stats_t *out)
{
	pthread_mutex_lock(&w->lock);
	*out = (rz_workers_stats_t){ (size_t)w->nthreads, w->busy, w->queued };
	pthread_mutex_unlock(&w->lock);
}

void rz_workers_free(rz_workers_t *w)
{
	struct job *queued;

	if (w == NULL) {
		return;
	}
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	queued = w->queue;
	w->queue = w->queue_tail = NULL;
	w->queued = 0;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (int i = 0; i < w->nthreads; i++) {
		pthread_join(w->threads[i], NULL);
	}
	while (queued != NULL) {
		struct job *next = queued->next;
		queued->canceled = 1;
		queued->next = w->finished;
		w->finished = queued;
		queued = next;
	}
	if (w->pipe[0] >= 0) {
		drain_finished(w);
	}
	event_free(w->wake);
	if (w->pipe[0] >= 0) {
		close(w->pipe[0]);
		close(w->pipe[1]);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}
