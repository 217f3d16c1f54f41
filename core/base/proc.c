/* core/base/proc.c - child processes on the event loop: pipes, SIGCHLD, timeouts. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/base/exec.h"
#include "core/base/log.h"
#include "core/base/proc.h"

#define LINE_MAX_LEN (1u << 20) /* a longer line is delivered in pieces */
/* Once the child exited, how long what is left of its process group may keep its pipes
 * open before it is killed and the pipes are closed. */
#define LINGER_MS 1000
/* The most read from a pipe after the kill: what the group wrote before it (a pipe holds
 * 64 KiB unless resized), not a stream of a process that escaped the group. */
#define LAST_READ_MAX ((size_t)4 << 20)

struct rz_proc {
	pid_t pid;
	struct event_base *base;
	struct bufferevent *out, *err;
	struct event *timer;
	rz_proc_opts_t o;
	int64_t grace_ms;
	bool exited, out_eof, err_eof, reported;
	bool timed_out, canceled, killing;
	bool group_killed; /* SIGKILL sent to the whole process group */
	int status;
	struct rz_proc *next;
};

/* Every running child of this process, for the SIGCHLD handler. */
static struct rz_proc *children;
static struct event *sigchld;

/* ------------------------------------------------------------------ finishing */

static void maybe_report(rz_proc_t *p)
{
	if (p->reported || !p->exited || !p->out_eof || !p->err_eof) {
		return;
	}
	p->reported = true;
	if (p->timer != NULL) {
		event_del(p->timer);
	}
	if (!p->group_killed) {
		/* what the child left in its group without holding its pipes goes with it;
		 * the group's id is not reused while a member lives */
		kill(-p->pid, SIGKILL);
		p->group_killed = true;
	}
	if (p->o.on_exit != NULL) {
		p->o.on_exit(p->o.arg, p->status, p->timed_out, p->canceled);
	}
}

static void unlink_child(rz_proc_t *p)
{
	for (struct rz_proc **pp = &children; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			return;
		}
	}
}

static void child_exited(rz_proc_t *p);

static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (rz_proc_t *p = children; p != NULL; p = p->next) {
			if (p->pid == pid) {
				p->exited = true;
				p->status = WIFEXITED(status) ? WEXITSTATUS(status)
				                              : 128 + WTERMSIG(status);
				unlink_child(p);
				child_exited(p);
				break;
			}
		}
	}
}

/* ------------------------------------------------------------------ output */

static void drain(rz_proc_t *p, struct bufferevent *bev, bool is_err, bool eof)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;
	char *line;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		if (p->o.on_line != NULL) {
			p->o.on_line(p->o.arg, line, len, is_err);
		}
		free(line);
	}
	len = evbuffer_get_length(in);
	if (len > 0 && (eof || len >= LINE_MAX_LEN)) {
		line = malloc(len + 1);
		if (line != NULL) {
			evbuffer_remove(in, line, len);
			line[len] = '\0';
			if (p->o.on_line != NULL) {
				p->o.on_line(p->o.arg, line, len, is_err);
			}
			free(line);
		}
	}
}

static void on_read(struct bufferevent *bev, void *arg)
{
	rz_proc_t *p = arg;

	drain(p, bev, bev == p->err, false);
}

static void on_pipe_event(struct bufferevent *bev, short what, void *arg)
{
	rz_proc_t *p = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		drain(p, bev, bev == p->err, true);
		bufferevent_disable(bev, EV_READ);
		if (bev == p->out) {
			p->out_eof = true;
		} else {
			p->err_eof = true;
		}
		maybe_report(p);
	}
}

/* ------------------------------------------------------------------ stopping */

/* The child leads its own process group (setsid in child()): a signal to the group reaches
 * what it started too, even after the child itself exited. */
static void signal_group(rz_proc_t *p, int sig)
{
	if (p->reported) {
		return; /* the group is gone: its id may be someone else's by now */
	}
	kill(-p->pid, sig);
	if (sig == SIGKILL) {
		p->group_killed = true;
	}
}

/* After the kill: what the pipe holds is read (up to LAST_READ_MAX), then the read end is
 * closed — a process that escaped the group cannot keep the step open. */
static void close_pipe(rz_proc_t *p, struct bufferevent *bev)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	evutil_socket_t fd = bufferevent_getfd(bev);
	size_t total = 0;
	int n;

	if (bev == p->out ? p->out_eof : p->err_eof) {
		return;
	}
	/* a socket bufferevent keeps the end of its input frozen (only its own reads add to
	 * it): evbuffer_read would fail at once and what the pipe holds would be lost */
	evbuffer_unfreeze(in, 0);
	while (fd >= 0 && total < LAST_READ_MAX && (n = evbuffer_read(in, fd, 65536)) > 0) {
		total += (size_t)n;
		drain(p, bev, bev == p->err, false);
	}
	evbuffer_freeze(in, 0);
	drain(p, bev, bev == p->err, true);
	bufferevent_disable(bev, EV_READ);
	if (fd >= 0) {
		bufferevent_setfd(bev, -1);
		close(fd);
	}
	if (bev == p->out) {
		p->out_eof = true;
	} else {
		p->err_eof = true;
	}
}

/* The child is gone: whatever is left of its group is killed, its pipes closed, and the
 * step reported. */
static void kill_rest(rz_proc_t *p)
{
	signal_group(p, SIGKILL);
	close_pipe(p, p->out);
	close_pipe(p, p->err);
	maybe_report(p);
}

/* The child exited: reported once its pipes are at their end — at once when its group was
 * killed already, else after LINGER_MS at most (a background process it left holding
 * them is then killed). */
static void child_exited(rz_proc_t *p)
{
	struct timeval tv = { LINGER_MS / 1000, (LINGER_MS % 1000) * 1000 };

	if (p->out_eof && p->err_eof) {
		maybe_report(p);
	} else if (p->group_killed || p->timer == NULL) {
		kill_rest(p);
	} else {
		event_del(p->timer);
		evtimer_add(p->timer, &tv);
	}
}

/* The timeout (SIGINT to the group, then the grace), the grace (SIGKILL), or the linger
 * after the child's exit. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	rz_proc_t *p = arg;
	struct timeval tv = { p->grace_ms / 1000, (p->grace_ms % 1000) * 1000 };

	if (p->exited) {
		kill_rest(p);
		return;
	}
	if (p->killing) {
		signal_group(p, SIGKILL); /* the child's exit (SIGCHLD) closes the pipes */
		return;
	}
	p->timed_out = !p->canceled;
	p->killing = true;
	signal_group(p, SIGINT);
	evtimer_add(p->timer, &tv);
}

void rz_proc_cancel(rz_proc_t *p)
{
	if (p == NULL || p->reported) {
		return;
	}
	if (p->exited) { /* it ended on its own; what it left is not waited for */
		kill_rest(p);
		return;
	}
	if (p->killing) {
		return;
	}
	p->canceled = true;
	event_del(p->timer);
	on_timer(-1, 0, p);
}

int rz_proc_pid(const rz_proc_t *p)
{
	return p->pid;
}

/* ------------------------------------------------------------------ starting */

static const char *env_get(const char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env != NULL && *env != NULL; env++) {
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') {
			return *env + n + 1;
		}
	}
	return NULL;
}

/* In the child, between vfork and exec: only system calls, no write to memory the daemon
 * reads (the child borrows the daemon's memory and stack until it execs), and no
 * AddressSanitizer redzones on this frame (they would be left in the shadow of the daemon's
 * stack). */
__attribute__((no_sanitize("address"))) static void child(const char *path, const rz_proc_opts_t *o,
                                                          int out, int err, pid_t parent)
{
	sigset_t none;

	setsid();
	/* Should the daemon die, tofu is interrupted (it releases its lock and saves what
	 * it applied) rather than left running against a backend that restarts. */
	prctl(PR_SET_PDEATHSIG, SIGINT);
	if (getppid() != parent) {
		_exit(125); /* the daemon is already gone */
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL); /* ignored in the daemon; exec would keep that */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (dup2(out, 1) < 0 || dup2(err, 2) < 0) {
		_exit(127);
	}
	/* every other descriptor, however high (LimitNOFILE is 65536); one call */
	if (close_range(3, ~0u, 0) != 0) {
		for (int fd = 3; fd < 65536; fd++) {
			close(fd);
		}
	}
	if (o->cwd != NULL && chdir(o->cwd) != 0) {
		_exit(126);
	}
	umask(077); /* what a child writes (tofu's plans, probes' caches) is the daemon's alone */
	execve(path, (char *const *)o->argv, (char *const *)o->env);
	_exit(127);
}

static struct bufferevent *reader(rz_proc_t *p, int fd)
{
	struct bufferevent *b = bufferevent_socket_new(p->base, fd, BEV_OPT_CLOSE_ON_FREE);

	if (b != NULL) {
		bufferevent_setcb(b, on_read, NULL, on_pipe_event, p);
		bufferevent_enable(b, EV_READ);
	}
	return b;
}

static int install_sigchld(struct event_base *base)
{
	if (sigchld != NULL) {
		return 0;
	}
	sigchld = evsignal_new(base, SIGCHLD, on_sigchld, NULL);
	return sigchld != NULL && evsignal_add(sigchld, NULL) == 0 ? 0 : -ENOMEM;
}

int rz_proc_start(rz_proc_t **out, struct event_base *base, const rz_proc_opts_t *o, rz_err_t *err)
{
	char path[PATH_MAX];
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	pid_t parent;
	rz_proc_t *p;

	*out = NULL;
	if (rz_exec_which(o->argv[0], env_get(o->env, "PATH"), path, sizeof(path)) != 0) {
		return rz_err_set(err, -ENOENT, "runner: '%s' not found (PATH=%s)", o->argv[0],
		                  env_get(o->env, "PATH") ? env_get(o->env, "PATH") : "");
	}
	if (install_sigchld(base) != 0 || (p = calloc(1, sizeof(*p))) == NULL) {
		return rz_err_set(err, -ENOMEM, "runner: out of memory");
	}
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		int e = errno;
		close(po[0]);
		close(po[1]);
		free(p);
		return rz_err_set(err, -e, "runner: pipe failed: %s", strerror(e));
	}
	p->base = base;
	p->o = *o;
	p->grace_ms = o->kill_grace_ms > 0 ? o->kill_grace_ms : 30000;
	parent = getpid();
	/* vfork, not fork: the daemon is suspended until the child execs instead of having its
	 * page tables copied and every page it then writes faulted in again (what fork costs
	 * grows with the daemon's memory: a tenth of the CPU of a run's steps under
	 * AddressSanitizer's shadow). Under valgrind vfork is a fork. */
	p->pid = vfork();
	if (p->pid == 0) {
		child(path, o, po[1], pe[1], parent);
	}
	close(po[1]);
	close(pe[1]);
	if (p->pid < 0) {
		int e = errno;
		close(po[0]);
		close(pe[0]);
		free(p);
		return rz_err_set(err, -e, "runner: fork failed: %s", strerror(e));
	}
	evutil_make_socket_nonblocking(po[0]);
	evutil_make_socket_nonblocking(pe[0]);
	p->out = reader(p, po[0]);
	p->err = reader(p, pe[0]);
	p->timer = evtimer_new(base, on_timer, p);
	p->next = children;
	children = p;
	/* from now, not from when the loop last woke: a callback that blocked (a write
	 * waiting for the database) must not eat the child's time */
	event_base_update_cache_time(base);
	if (o->timeout_ms > 0 && p->timer != NULL) {
		struct timeval tv = { o->timeout_ms / 1000, (o->timeout_ms % 1000) * 1000 };
		evtimer_add(p->timer, &tv);
	}
	*out = p;
	return 0;
}

void rz_proc_free(rz_proc_t *p)
{
	if (p == NULL) {
		return;
	}
	if (!p->reported) {
		kill(-p->pid, SIGKILL);
	}
	if (!p->exited) {
		waitpid(p->pid, NULL, 0); /* SIGKILL: at once */
		unlink_child(p);
	}
	if (p->timer != NULL) {
		event_free(p->timer);
	}
	bufferevent_free(p->out);
	bufferevent_free(p->err);
	free(p);
}

void rz_proc_shutdown(void)
{
	if (sigchld != NULL) {
		event_free(sigchld);
		sigchld = NULL;
	}
}
