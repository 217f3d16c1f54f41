/* tests/unit/check_proc.c - child processes on the loop: output, exit codes, the
 * environment, timeouts with SIGINT then SIGKILL, cancel, a missing binary, and children
 * that leave background processes holding their pipes. */
#include <config.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/base/log.h"
#include "core/base/proc.h"
#include "tests/unit/testutil.h"

static struct event_base *base;

struct seen {
	char out[65536], err[4096];
	size_t out_len, lines;
	int status;
	bool done, timed_out, canceled;
};

/* A stdout line on which on_line blocks the loop for 1.5 s (NULL: none). */
static const char *stall_on;

static void on_line(void *arg, const char *line, size_t len, bool is_stderr)
{
	struct seen *s = arg;
	char *buf = is_stderr ? s->err : s->out;
	size_t size = is_stderr ? sizeof(s->err) : sizeof(s->out);
	size_t have = strlen(buf);

	s->lines++;
	if (!is_stderr && stall_on != NULL && len == strlen(stall_on) &&
	    memcmp(line, stall_on, len) == 0) {
		usleep(1500 *
		       1000); /* the loop is busy: a slow consumer, like one under valgrind */
	}
	if (!is_stderr) {
		s->out_len += len;
	}
	if (have + len + 2 < size) {
		memcpy(buf + have, line, len);
		buf[have + len] = '\n';
		buf[have + len + 1] = '\0';
	}
}

static void on_exit_cb(void *arg, int status, bool timed_out, bool canceled)
{
	struct seen *s = arg;

	s->status = status;
	s->timed_out = timed_out;
	s->canceled = canceled;
	s->done = true;
}

static const char *const env[] = { "PATH=/usr/bin:/bin", "FOO=bar", NULL };

static rz_proc_t *run(const char *script, struct seen *s, int64_t timeout_ms, int64_t grace_ms)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	rz_proc_opts_t o = { argv, env, NULL, timeout_ms, grace_ms, on_line, on_exit_cb, s };
	rz_proc_t *p = NULL;
	rz_err_t err = { 0 };

	memset(s, 0, sizeof(*s));
	ck_assert_msg(rz_proc_start(&p, base, &o, &err) == 0, "%s", err.msg);
	return p;
}

static void wait_done(struct seen *s, double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!s->done) {
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		clock_gettime(CLOCK_MONOTONIC, &t);
		ck_assert_msg((double)(t.tv_sec - t0.tv_sec) < seconds, "no exit in %.0f s",
		              seconds);
		usleep(1000);
	}
}

static void setup(void)
{
	rz_log_set_level(RZ_LOG_ERR);
	base = event_base_new();
}

static void teardown(void)
{
	rz_proc_shutdown();
	event_base_free(base);
}

START_TEST(test_output_and_status)
{
	struct seen s;
	rz_proc_t *p = run("echo one; echo two >&2; printf 'no newline'; exit 3", &s, 0, 0);

	wait_done(&s, 10);
	ck_assert_int_eq(s.status, 3);
	ck_assert_str_eq(s.out, "one\nno newline\n");
	ck_assert_str_eq(s.err, "two\n");
	ck_assert(!s.timed_out);
	rz_proc_free(p);
}
END_TEST

START_TEST(test_clean_environment_and_cwd)
{
	struct seen s;
	const char *argv[] = { "sh", "-c", "echo \"$FOO|$HOME|$(pwd)\"", NULL };
	rz_proc_opts_t o = { argv, env, "/tmp", 0, 0, on_line, on_exit_cb, &s };
	rz_proc_t *p = NULL;
	rz_err_t err = { 0 };

	memset(&s, 0, sizeof(s));
	setenv("HOME", "/should/not/leak", 1);
	ck_assert_int_eq(rz_proc_start(&p, base, &o, &err), 0);
	wait_done(&s, 10);
	ck_assert_str_eq(s.out, "bar||/tmp\n");
	rz_proc_free(p);
}
END_TEST

/* The child holds only its three standard descriptors, whatever the daemon has open (a
 * descriptor above 1024 and without close-on-exec included: LimitNOFILE is 65536), and
 * creates files for the daemon's user alone. */
START_TEST(test_only_standard_descriptors_and_private_umask)
{
	struct seen s;
	int high = fcntl(0, F_DUPFD, 2000);
	rz_proc_t *p;

	ck_assert_msg(high >= 2000, "F_DUPFD: %s", strerror(errno));
	p = run("ls /proc/self/fd | sort -n | tr '\\n' ' '; umask", &s, 0, 0);
	wait_done(&s, 10);
	close(high);
	ck_assert_int_eq(s.status, 0);
	/* ls's own descriptor of the directory it lists is 3 */
	ck_assert_str_eq(s.out, "0 1 2 3 0077\n");
	rz_proc_free(p);
}
END_TEST

START_TEST(test_lots_of_output_is_not_lost)
{
	struct seen s;
	rz_proc_t *p =
	    run("i=0; while [ $i -lt 20000 ]; do echo line-$i; i=$((i+1)); done", &s, 0, 0);

	wait_done(&s, 30);
	ck_assert_int_eq(s.status, 0);
	ck_assert_uint_eq(s.lines, 20000);
	rz_proc_free(p);
}
END_TEST

START_TEST(test_timeout_interrupts)
{
	struct seen s;
	rz_proc_t *p = run("exec sleep 20", &s, 200, 5000);

	wait_done(&s, 10);
	ck_assert(s.timed_out);
	ck_assert_int_eq(s.status, 128 + SIGINT);
	rz_proc_free(p);
}
END_TEST

START_TEST(test_sigkill_after_grace)
{
	struct seen s;
	rz_proc_t *p = run("trap '' INT; echo ready; while :; do sleep 1; done", &s, 300, 300);

	wait_done(&s, 10);
	ck_assert(s.timed_out);
	ck_assert_int_eq(s.status, 128 + SIGKILL);
	ck_assert_str_eq(s.out, "ready\n");
	rz_proc_free(p);
}
END_TEST

START_TEST(test_cancel)
{
	struct seen s;
	rz_proc_t *p = run("echo started; exec sleep 20", &s, 0, 1000);

	while (s.lines == 0) {
		event_base_loop(base, EVLOOP_ONCE);
	}
	rz_proc_cancel(p);
	wait_done(&s, 10);
	ck_assert(s.canceled);
	ck_assert(!s.timed_out);
	ck_assert_int_eq(s.status, 128 + SIGINT);
	rz_proc_free(p);
}
END_TEST

START_TEST(test_missing_binary)
{
	const char *argv[] = { "no-such-tofu", "version", NULL };
	rz_proc_opts_t o = { argv, env, NULL, 0, 0, NULL, NULL, NULL };
	rz_proc_t *p = NULL;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_proc_start(&p, base, &o, &err), -ENOENT);
	ck_assert_str_eq(err.msg, "runner: 'no-such-tofu' not found (PATH=/usr/bin:/bin)");
	ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_parallel_children)
{
	struct seen s[4];
	rz_proc_t *p[4];
	char script[64];

	for (int i = 0; i < 4; i++) {
		snprintf(script, sizeof(script), "sleep 0.%d; echo %d; exit %d", 4 - i, i, i);
		p[i] = run(script, &s[i], 0, 0);
	}
	for (int i = 0; i < 4; i++) {
		wait_done(&s[i], 10);
		ck_assert_int_eq(s[i].status, i);
		ck_assert_int_eq(atoi(s[i].out), i);
		rz_proc_free(p[i]);
	}
}
END_TEST

/* Whether a live process (not a zombie: a container's init may never reap) of process
 * group pgid is there, from /proc. */
static bool in_group(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	ck_assert_ptr_nonnull(d);
	while (!found && (e = readdir(d)) != NULL) {
		char path[300], buf[512], state = '?';
		const char *close_paren;
		long pgrp = 0;
		FILE *f;
		if (e->d_name[0] < '0' || e->d_name[0] > '9') {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL) {
			continue;
		}
		buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
		fclose(f);
		/* pid (comm) state ppid pgrp ...: comm may hold anything but ends at the last ')'
		 */
		if ((close_paren = strrchr(buf, ')')) != NULL &&
		    sscanf(close_paren + 1, " %c %*d %ld", &state, &pgrp) == 2) {
			found = pgrp == pgid && state != 'Z' && state != 'X';
		}
	}
	closedir(d);
	return found;
}

static bool group_alive(pid_t pgid)
{
	for (int i = 0; i < 100; i++) {
		if (!in_group(pgid)) {
			return false;
		}
		usleep(10000); /* SIGKILL is delivered at once, but dying takes a moment */
	}
	return true;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A background process of a non-interactive shell ignores SIGINT: after the timeout's
 * SIGINT the child exits, its `sleep 600` keeps the pipes open. The kill after the grace
 * must still reach it, and the step must end. */
START_TEST(test_timeout_kills_background_children)
{
	struct seen s;
	struct timespec t0;
	rz_proc_t *p;
	pid_t pgid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	p = run("sleep 600 & echo started; while :; do sleep 1; done", &s, 300, 300);
	pgid = rz_proc_pid(p);
	wait_done(&s, 10);
	fprintf(stderr, "# timeout with a background child ended after %.2f s\n", elapsed(&t0));
	ck_assert(s.timed_out);
	ck_assert_str_eq(s.out, "started\n");
	ck_assert_msg(!group_alive(pgid), "a process of the child's group survived");
	rz_proc_free(p);
}
END_TEST

START_TEST(test_cancel_kills_background_children)
{
	struct seen s;
	struct timespec t0;
	rz_proc_t *p =
	    run("sleep 600 & sleep 0.3; echo started; while :; do sleep 1; done", &s, 0, 300);
	pid_t pgid = rz_proc_pid(p);

	while (s.lines == 0) {
		event_base_loop(base, EVLOOP_ONCE);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rz_proc_cancel(p);
	wait_done(&s, 10);
	fprintf(stderr, "# cancel with a background child took %.2f s\n", elapsed(&t0));
	ck_assert(s.canceled);
	ck_assert(!s.timed_out);
	ck_assert_msg(!group_alive(pgid), "a process of the child's group survived");
	rz_proc_free(p);
}
END_TEST

/* A child that exits on its own, leaving a background process on its stdout: the step
 * ends (with the child's status) and the leftover goes. */
START_TEST(test_exit_with_background_child_holding_stdout)
{
	struct seen s;
	rz_proc_t *p = run("sleep 600 & echo bye; exit 4", &s, 0, 300);
	pid_t pgid = rz_proc_pid(p);

	wait_done(&s, 10);
	ck_assert_int_eq(s.status, 4);
	ck_assert(!s.timed_out);
	ck_assert(!s.canceled);
	ck_assert_str_eq(s.out, "bye\n");
	ck_assert_msg(!group_alive(pgid), "a process of the child's group survived");
	rz_proc_free(p);
}
END_TEST

/* A background process that does not hold the pipes goes too when the child exits. */
START_TEST(test_exit_kills_detached_background_child)
{
	struct seen s;
	rz_proc_t *p = run("sleep 600 >/dev/null 2>&1 & exit 0", &s, 0, 300);
	pid_t pgid = rz_proc_pid(p);

	wait_done(&s, 10);
	ck_assert_int_eq(s.status, 0);
	ck_assert_msg(!group_alive(pgid), "a process of the child's group survived");
	rz_proc_free(p);
}
END_TEST

/* The output of a child killed after its grace is not lost: what it printed before is
 * read to the end. */
START_TEST(test_output_before_kill_is_read)
{
	struct seen s;
	rz_proc_t *p = run("trap '' INT; i=0; while [ $i -lt 2000 ]; do echo line-$i; "
	                   "i=$((i+1)); done; sleep 600 & while :; do sleep 1; done",
	                   &s, 500, 300);

	wait_done(&s, 10);
	ck_assert(s.timed_out);
	ck_assert_uint_eq(s.lines, 2000);
	rz_proc_free(p);
}
END_TEST

/* What the pipe still holds when the group is killed after the child's exit is read: here
 * the child exits at once, a background process it left writes 39 KB (more than one read,
 * less than the pipe holds) and keeps the pipe open, and the loop is busy for longer than
 * the linger on its first line. */
START_TEST(test_output_in_the_pipe_at_the_linger_kill_is_read)
{
	struct seen s;
	rz_proc_t *p;

	stall_on = "1";
	p = run("(sleep 0.3; seq 1 8000; exec sleep 30) & echo first", &s, 0, 0);
	wait_done(&s, 20);
	stall_on = NULL;
	ck_assert_int_eq(s.status, 0);
	ck_assert_uint_eq(s.lines, 8001);
	rz_proc_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("runner");
	TCase *tc = tcase_create("runner");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_output_and_status);
	tcase_add_test(tc, test_clean_environment_and_cwd);
	tcase_add_test(tc, test_only_standard_descriptors_and_private_umask);
	tcase_add_test(tc, test_lots_of_output_is_not_lost);
	tcase_add_test(tc, test_timeout_interrupts);
	tcase_add_test(tc, test_sigkill_after_grace);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_missing_binary);
	tcase_add_test(tc, test_parallel_children);
	tcase_add_test(tc, test_timeout_kills_background_children);
	tcase_add_test(tc, test_cancel_kills_background_children);
	tcase_add_test(tc, test_exit_with_background_child_holding_stdout);
	tcase_add_test(tc, test_exit_kills_detached_background_child);
	tcase_add_test(tc, test_output_before_kill_is_read);
	tcase_add_test(tc, test_output_in_the_pipe_at_the_linger_kill_is_read);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
