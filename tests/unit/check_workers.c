/* tests/unit/check_workers.c - the worker pool hands results back to the loop thread. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/base/workers.h"
#include "tests/unit/testutil.h"

struct item {
	int in, out;
	pthread_t worker, done_thread;
	int canceled, done_calls;
	int *finished;
};

static void square(void *arg)
{
	struct item *it = arg;
	usleep(1000);
	it->worker = pthread_self();
	it->out = it->in * it->in;
}

static void finished(void *arg, int canceled)
{
	struct item *it = arg;
	it->done_thread = pthread_self();
	it->canceled = canceled;
	it->done_calls++;
	(*it->finished)++;
}

START_TEST(test_results_on_loop_thread)
{
	struct event_base *base = event_base_new();
	rz_workers_t *w = NULL;
	rz_err_t err = { 0 };
	struct item items[50];
	int done = 0;

	ck_assert_int_eq(rz_workers_new(&w, base, 2, &err), 0);
	for (int i = 0; i < 50; i++) {
		items[i] = (struct item){ .in = i, .finished = &done };
		ck_assert_int_eq(rz_workers_submit(w, square, finished, &items[i]), 0);
	}
	ck_assert_uint_eq(rz_workers_pending(w), 50);
	while (done < 50) {
		event_base_loop(base, EVLOOP_ONCE);
	}
	ck_assert_uint_eq(rz_workers_pending(w), 0);
	for (int i = 0; i < 50; i++) {
		ck_assert_int_eq(items[i].out, i * i);
		ck_assert_int_eq(items[i].done_calls, 1);
		ck_assert_int_eq(items[i].canceled, 0);
		ck_assert(pthread_equal(items[i].done_thread, pthread_self()));
		ck_assert(!pthread_equal(items[i].worker, pthread_self()));
	}
	rz_workers_free(w);
	event_base_free(base);
}
END_TEST

START_TEST(test_free_cancels_queued)
{
	struct event_base *base = event_base_new();
	rz_workers_t *w = NULL;
	rz_err_t err = { 0 };
	struct item items[20];
	int done = 0, canceled = 0, ran = 0;

	ck_assert_int_eq(rz_workers_new(&w, base, 1, &err), 0);
	for (int i = 0; i < 20; i++) {
		items[i] = (struct item){ .in = i, .out = -1, .finished = &done };
		ck_assert_int_eq(rz_workers_submit(w, square, finished, &items[i]), 0);
	}
	rz_workers_free(w); /* without running the loop: every done() still runs, once */
	ck_assert_int_eq(done, 20);
	for (int i = 0; i < 20; i++) {
		ck_assert_int_eq(items[i].done_calls, 1);
		if (items[i].canceled) {
			canceled++;
			ck_assert_int_eq(items[i].out, -1);
		} else {
			ran++;
			ck_assert_int_eq(items[i].out, i * i);
		}
	}
	ck_assert_int_eq(canceled + ran, 20);
	ck_assert_int_gt(canceled, 0);
	event_base_free(base);
}
END_TEST

START_TEST(test_bad_thread_count)
{
	struct event_base *base = event_base_new();
	rz_workers_t *w = NULL;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_workers_new(&w, base, 0, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "workers: thread count 0 out of range 1..64");
	ck_assert_ptr_null(w);
	rz_workers_free(NULL);
	event_base_free(base);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workers");
	TCase *tc = tcase_create("pool");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_results_on_loop_thread);
	tcase_add_test(tc, test_free_cancels_queued);
	tcase_add_test(tc, test_bad_thread_count);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
