/*
 * core/base/proc.h - child processes driven by the event loop (SPEC §7.3): no blocking wait,
 * no thread. Output arrives line by line through pipes read as bufferevents; SIGCHLD is
 * handled in the loop; a timeout sends SIGINT to the child's process group, then SIGKILL
 * after the grace period; cancel does the same at once. The child leads its own process
 * group, and the group is what is stopped: a background process the child started (a
 * provider, a `sleep &`) is killed with it, and once the child exited, what is left of
 * its group gets 1 s to close the pipes before it is killed and the pipes are closed —
 * a step always ends. When the child is reported, nothing of its group survives.
 */
#ifndef RZ_PROC_H
#define RZ_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/errors.h"

struct event_base;

typedef struct rz_proc rz_proc_t;

typedef struct rz_proc_opts {
	const char *const *argv; /* argv[0]: a path, or a name looked up in env's PATH */
	const char *const *env;  /* the child's whole environment, NULL-terminated */
	const char *cwd;         /* NULL: the daemon's */
	int64_t timeout_ms;      /* 0: none */
	int64_t kill_grace_ms;   /* after SIGINT, before SIGKILL; 0: 30 s */
	/* One line of output (without its newline; a last line without one too). */
	void (*on_line)(void *arg, const char *line, size_t len, bool is_stderr);
	/* Once, after the child exited and all its output was read (or its group was
	 * killed and its pipes closed): the exit code, or 128 + the signal that ended it. */
	void (*on_exit)(void *arg, int status, bool timed_out, bool canceled);
	void *arg;
} rz_proc_opts_t;

/* Start a child. Everything in o is copied or used before returning, except arg. -ENOENT
 * (err names the binary) when argv[0] cannot be found or executed; then no child exists.
 * Caller owns *out; free it with rz_proc_free() from on_exit or later. */
int rz_proc_start(rz_proc_t **out, struct event_base *base, const rz_proc_opts_t *o, rz_err_t *err);

/* Ask the child to stop: SIGINT to its process group now, SIGKILL after the grace. */
void rz_proc_cancel(rz_proc_t *p);

/* The child's pid. */
int rz_proc_pid(const rz_proc_t *p);

/* Release a finished process (or kill and release a running one, without on_exit).
 * Accepts NULL. */
void rz_proc_free(rz_proc_t *p);

/* Drop the SIGCHLD handler installed on the loop by the first rz_proc_start; call before
 * freeing that event_base. */
void rz_proc_shutdown(void);

#endif /* RZ_PROC_H */
