/*
 * core/store/durable.c - when a commit is on the disk (core/store/db.h, rz_db_start): the
 * WAL hook counting commits, the sync thread (fdatasync of the WAL, or the injected sync for
 * tests) and the checkpoint thread on a connection of its own, the loop's callbacks once a
 * commit is durable, statistics, and stopping both threads.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "core/base/errors.h"
#include "core/base/log.h"
#include "core/store/db-int.h"

int rz_durability_parse(const char *s, rz_durability_t *out)
{
	if (s != NULL && strcmp(s, "normal") == 0) {
		*out = RZ_DURABILITY_NORMAL;
	} else if (s != NULL && strcmp(s, "full") == 0) {
		*out = RZ_DURABILITY_FULL;
	} else {
		return REZUS_EINVALID;
	}
	return 0;
}

/* The turn's grouped writes are committed once its callbacks have run (rz_db_tx_grouped). */
static void on_group(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rz_db_flush(arg);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Called by SQLite on the loop thread after every commit: count it, hand it to the sync
 * thread, and wake the checkpoint thread when enough pages have been committed. */
static int wal_hook(void *arg, sqlite3 *conn, const char *name, int nframes)
{
	rz_db_t *db = arg;

	(void)conn;
	(void)name;
	db->commit_seq++;
	if (!db->ckpt_running && !db->sync_running) {
		return SQLITE_OK;
	}
	pthread_mutex_lock(&db->lock);
	db->frames = nframes;
	db->stats.wal_frames = nframes;
	if (nframes < db->ckpt_mark) {
		db->ckpt_mark = 0; /* the WAL was restarted */
	}
	/* every RZ_DB_CHECKPOINT_FRAMES pages; and past the WAL's bound at any new page, or a
	 * WAL that a checkpoint left just under it and a few commits took over would stay over
	 * it until RZ_DB_CHECKPOINT_FRAMES more pages came */
	if (db->ckpt_running && !db->ckpt_wanted &&
	    (nframes - db->ckpt_mark >= RZ_DB_CHECKPOINT_FRAMES ||
	     (nframes > RZ_DB_WAL_MAX_FRAMES && nframes > db->ckpt_mark))) {
		db->ckpt_wanted = true;
		pthread_cond_signal(&db->ckpt_cond);
	}
	if (db->sync_running) {
		db->want_seq = db->commit_seq;
		pthread_cond_signal(&db->sync_cond);
	}
	pthread_mutex_unlock(&db->lock);
	return SQLITE_OK;
}

/* The loop's busy handler: while the checkpoint thread holds the write lock (a RESTART),
 * retry often rather than in SQLite's 1, 2, 5, 10 ... ms steps; give up after the busy
 * timeout. */
static int busy_fine(void *arg, int n)
{
	(void)arg;
	if ((int64_t)n * BUSY_STEP_US >= BUSY_MAX_US) {
		return 0;
	}
	usleep(BUSY_STEP_US);
	return 1;
}

static void *ckpt_main(void *arg)
{
	rz_db_t *db = arg;
	bool warned = false;

	/* Copying pages is CPU work on the loop's core too: the loop goes first. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CKPT_NICE);
	pthread_mutex_lock(&db->lock);
	for (;;) {
		int nlog = 0, nckpt = 0, src;
		bool restart;
		double t0;
		while (!db->ckpt_wanted && !db->stopping) {
			pthread_cond_wait(&db->ckpt_cond, &db->lock);
		}
		if (db->stopping) {
			break;
		}
		db->ckpt_wanted = false;
		db->ckpt_mark = db->frames;
		pthread_mutex_unlock(&db->lock);
		t0 = now_seconds();
		src = sqlite3_wal_checkpoint_v2(db->ckpt_conn, NULL, SQLITE_CHECKPOINT_PASSIVE,
		                                &nlog, &nckpt);
		restart = src == SQLITE_OK && nlog > RZ_DB_WAL_MAX_FRAMES;
		if (restart) { /* most pages are copied now: the RESTART holds writes briefly */
			src = sqlite3_wal_checkpoint_v2(db->ckpt_conn, NULL,
			                                SQLITE_CHECKPOINT_RESTART, &nlog, &nckpt);
		}
		if (src != SQLITE_OK && (src & 0xff) != SQLITE_BUSY && !warned) {
			rz_log_warn("db", "checkpoint of '%s' failed: %s", db->path,
			            sqlite3_errmsg(db->ckpt_conn));
			warned = true;
		}
		pthread_mutex_lock(&db->lock);
		db->stats.checkpoints++;
		db->stats.restarts += restart;
		db->stats.checkpoint_seconds += now_seconds() - t0;
		/* commits made while it copied took the WAL past its bound: one more round (a
		 * RESTART), rather than waiting for the next RZ_DB_CHECKPOINT_FRAMES pages */
		if (!restart && src == SQLITE_OK && db->frames > RZ_DB_WAL_MAX_FRAMES) {
			db->ckpt_wanted = true;
		}
	}
	pthread_mutex_unlock(&db->lock);
	return NULL;
}

static void *sync_main(void *arg)
{
	rz_db_t *db = arg;

	pthread_mutex_lock(&db->lock);
	for (;;) {
		uint64_t target;
		int rc;
		while (db->want_seq == db->sync_seq && !db->stopping) {
			pthread_cond_wait(&db->sync_cond, &db->lock);
		}
		if (db->want_seq == db->sync_seq) {
			break; /* stopping, and every commit is synced */
		}
		/* Every commit up to target has been written to the WAL (the hook runs after
		 * the write): one sync from now on makes them all durable. */
		target = db->want_seq;
		pthread_mutex_unlock(&db->lock);
		if (db->sync_fn != NULL) {
			rc = db->sync_fn(db->wal_fd, db->sync_arg);
		} else {
			rc = fdatasync(db->wal_fd) == 0 ? 0 : -errno;
		}
		pthread_mutex_lock(&db->lock);
		if (rc == 0) {
			db->stats.syncs++;
			db->stats.synced_commits += target - db->sync_seq;
			db->done_seq = target;
		} else {
			db->err_seq = target;
			db->err_code = rc;
		}
		db->sync_seq = target;
		while (write(db->pipe[1], "", 1) < 0 && errno == EINTR) {
		}
	}
	pthread_mutex_unlock(&db->lock);
	return NULL;
}

/* Run the callbacks whose commits are synced (or lost), oldest first. Loop thread. */
static void complete(rz_db_t *db)
{
	uint64_t done, errseq;
	int errc;

	pthread_mutex_lock(&db->lock);
	done = db->done_seq;
	errseq = db->err_seq;
	errc = db->err_code;
	pthread_mutex_unlock(&db->lock);
	if (errseq > db->err_seen) {
		/* After a failed fsync the kernel may have dropped the pages: every commit up
		 * to now is in doubt, even one a later sync reports as done. */
		db->err_seen = errseq;
		db->fail_upto = db->commit_seq;
		db->fail_code = errc == -ENOSPC || errc == -EDQUOT ? -ENOSPC
		                : errc == -EROFS                   ? -EROFS
		                                                   : -EIO;
		rz_log_err("db", "syncing the WAL of '%s' failed: %s", db->path, strerror(-errc));
		db->storage_code = db->fail_code;
		snprintf(db->storage_why, sizeof(db->storage_why), "syncing the WAL failed (%s)",
		         strerror(-errc));
	}
	while (db->wait_head != NULL &&
	       (db->wait_head->seq <= done || db->wait_head->seq <= db->fail_upto)) {
		struct waiter *w = db->wait_head;
		db->wait_head = w->next;
		if (db->wait_head == NULL) {
			db->wait_tail = NULL;
		}
		w->fn(w->arg, w->seq <= db->fail_upto ? db->fail_code : 0);
		free(w);
	}
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	char buf[256];

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0) {
	}
	complete(arg);
}

void rz_db_after_durable(rz_db_t *db, rz_db_durable_fn fn, void *arg)
{
	struct waiter *w;
	uint64_t done;
	int rc;

	if (valid(db) && db->group_open) {
		w = malloc(sizeof(*w));
		if (w == NULL) {
			rz_db_flush(db); /* cannot wait: commit the group now */
			rz_db_after_durable(db, fn, arg);
			return;
		}
		*w = (struct waiter){ NULL, 0, fn, arg };
		if (db->gwait_tail != NULL) {
			db->gwait_tail->next = w;
		} else {
			db->gwait_head = w;
		}
		db->gwait_tail = w;
		return;
	}
	if (!valid(db) || !db->sync_running) {
		fn(arg, 0);
		return;
	}
	if (db->commit_seq <= db->fail_upto) {
		fn(arg, db->fail_code);
		return;
	}
	pthread_mutex_lock(&db->lock);
	done = db->done_seq;
	pthread_mutex_unlock(&db->lock);
	if (db->commit_seq <= done) {
		fn(arg, 0);
		return;
	}
	w = malloc(sizeof(*w));
	if (w == NULL) { /* cannot wait: sync here */
		rc = db->sync_fn != NULL          ? db->sync_fn(db->wal_fd, db->sync_arg)
		     : fdatasync(db->wal_fd) == 0 ? 0
		                                  : -errno;
		fn(arg, rc);
		return;
	}
	*w = (struct waiter){ NULL, db->commit_seq, fn, arg };
	if (db->wait_tail != NULL) {
		db->wait_tail->next = w;
	} else {
		db->wait_head = w;
	}
	db->wait_tail = w;
}

void rz_db_set_sync_fn(rz_db_t *db, int (*fn)(int fd, void *arg), void *arg)
{
	if (valid(db)) {
		db->sync_fn = fn;
		db->sync_arg = arg;
	}
}

void rz_db_stats(rz_db_t *db, rz_db_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	if (valid(db)) {
		pthread_mutex_lock(&db->lock);
		*out = db->stats;
		pthread_mutex_unlock(&db->lock);
	}
}

void rz_db_stop(rz_db_t *db)
{
	if (!valid(db)) {
		return;
	}
	rz_db_flush(db);
	if (db->group_ev != NULL) {
		event_free(db->group_ev);
		db->group_ev = NULL;
	}
	if (db->ckpt_running) {
		rz_db_stats_t s;
		rz_db_stats(db, &s);
		rz_log(RZ_LOG_NOTICE, "db",
		       "%llu checkpoints (%llu restarts) took %.3f s; %llu WAL syncs for %llu "
		       "commits",
		       (unsigned long long)s.checkpoints, (unsigned long long)s.restarts,
		       s.checkpoint_seconds, (unsigned long long)s.syncs,
		       (unsigned long long)s.synced_commits);
	}
	pthread_mutex_lock(&db->lock);
	db->stopping = true;
	pthread_cond_broadcast(&db->ckpt_cond);
	pthread_cond_broadcast(&db->sync_cond);
	pthread_mutex_unlock(&db->lock);
	if (db->ckpt_running) {
		pthread_join(db->ckpt_thread, NULL);
		db->ckpt_running = false;
	}
	if (db->sync_running) {
		pthread_join(db->sync_thread, NULL); /* it syncs what was committed first */
		db->sync_running = false;
		complete(db);
		while (db->wait_head != NULL) { /* not reached: every commit was synced */
			struct waiter *w = db->wait_head;
			db->wait_head = w->next;
			w->fn(w->arg, -ESHUTDOWN);
			free(w);
		}
		db->wait_tail = NULL;
	}
	if (db->wake != NULL) {
		event_free(db->wake);
		db->wake = NULL;
	}
	for (int i = 0; i < 2; i++) {
		if (db->pipe[i] >= 0) {
			close(db->pipe[i]);
			db->pipe[i] = -1;
		}
	}
	if (db->wal_fd >= 0) {
		close(db->wal_fd);
		db->wal_fd = -1;
	}
	if (db->ckpt_conn != NULL) {
		sqlite3_close_v2(db->ckpt_conn);
		db->ckpt_conn = NULL;
	}
	db->stopping = false;
}

/* The checkpoint thread's connection: it only checkpoints (which syncs the WAL, then the
 * database, with synchronous = NORMAL). */
static int ckpt_open(rz_db_t *db, rz_err_t *err)
{
	int src = sqlite3_open_v2(db->path, &db->ckpt_conn,
	                          SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);

	if (src == SQLITE_OK) {
		src = sqlite3_busy_timeout(db->ckpt_conn, atoi(BUSY_TIMEOUT));
	}
	if (src == SQLITE_OK) {
		src = sqlite3_exec(db->ckpt_conn, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	}
	if (src == SQLITE_OK) {
		src = sqlite3_wal_autocheckpoint(db->ckpt_conn, 0);
	}
	if (src != SQLITE_OK) {
		return rz_err_set(
		    err, code_of(src), "db: opening '%s' for checkpoints failed: %s", db->path,
		    db->ckpt_conn != NULL ? sqlite3_errmsg(db->ckpt_conn) : sqlite3_errstr(src));
	}
	return 0;
}

static int bg_start(rz_db_t *db, struct event_base *base, rz_durability_t durability, rz_err_t *err)
{
	char wal[PATH_MAX];
	int rc = ckpt_open(db, err);

	if (rc < 0) {
		return rc;
	}
	if (durability == RZ_DURABILITY_FULL) {
		if (snprintf(wal, sizeof(wal), "%s-wal", db->path) >= (int)sizeof(wal)) {
			return rz_err_set(err, -ENAMETOOLONG, "db: '%s': path too long", db->path);
		}
		db->wal_fd = open(wal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (db->wal_fd < 0) {
			return rz_err_set(err, -errno, "db: opening '%s' failed: %s", wal,
			                  strerror(errno));
		}
		if (pipe2(db->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
			return rz_err_set(err, -errno, "db: pipe: %s", strerror(errno));
		}
		db->wake = event_new(base, db->pipe[0], EV_READ | EV_PERSIST, on_wake, db);
		if (db->wake == NULL || event_add(db->wake, NULL) != 0) {
			return rz_err_set(err, -ENOMEM, "db: out of memory");
		}
	}
	/* Commits write the WAL and return: the threads sync it. */
	if (sqlite3_exec(db->conn, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
		return rz_err_set(err, RZ_EDB, "db: '%s': synchronous = NORMAL failed: %s",
		                  db->path, sqlite3_errmsg(db->conn));
	}
	db->group_ev = event_new(base, -1, 0, on_group, db);
	if (db->group_ev == NULL) {
		return rz_err_set(err, -ENOMEM, "db: out of memory");
	}
	sqlite3_wal_autocheckpoint(db->conn, 0);
	sqlite3_wal_hook(db->conn, wal_hook, db);
	sqlite3_busy_handler(db->conn, busy_fine, db);
	db->want_seq = db->sync_seq = db->done_seq = db->commit_seq;
	if (pthread_create(&db->ckpt_thread, NULL, ckpt_main, db) != 0) {
		return rz_err_set(err, -EAGAIN, "db: cannot start the checkpoint thread");
	}
	db->ckpt_running = true;
	if (durability == RZ_DURABILITY_FULL) {
		if (pthread_create(&db->sync_thread, NULL, sync_main, db) != 0) {
			return rz_err_set(err, -EAGAIN, "db: cannot start the sync thread");
		}
		db->sync_running = true;
	}
	return 0;
}

int rz_db_start(rz_db_t *db, struct event_base *base, rz_durability_t durability, rz_err_t *err)
{
	int rc;

	if (!valid(db) || base == NULL || db->ckpt_conn != NULL || db->ckpt_running) {
		return rz_err_set(err, REZUS_EINVALID, "db: start: no database, no loop, or twice");
	}
	rc = bg_start(db, base, durability, err);
	if (rc < 0) {
		rz_db_stop(db);
		/* back to what rz_db_open gave */
		sqlite3_wal_hook(db->conn, NULL, NULL);
		sqlite3_wal_autocheckpoint(db->conn, 1000);
		sqlite3_busy_timeout(db->conn, atoi(BUSY_TIMEOUT));
		sqlite3_exec(db->conn, "PRAGMA synchronous = FULL", NULL, NULL, NULL);
	}
	return rc;
}
