/*
 * core/base/clock.h - wall-clock time as the API writes it: RFC 3339 in UTC, with
 * milliseconds, and back; and the clocks the engine reads, which a test may replace.
 */
#ifndef RZ_CLOCK_H
#define RZ_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

/* Seconds since the epoch for an RFC 3339 time ("2026-11-30T04:31:11Z", fractions and
 * offsets allowed); -1 when it does not parse. */
int64_t rz_time_parse(const char *s);

/* The current time as RFC 3339 UTC ("2026-11-30T04:31:11Z") into buf (≥ 21 bytes). */
void rz_time_now(char *buf, size_t size);

/* Milliseconds since the epoch, now (the source's now_ms when one is set). */
int64_t rz_clock_now_ms(void);

/* Nanoseconds of the monotonic clock, now (the source's mono_ns when one is set): what the
 * engine times its steps with. */
int64_t rz_clock_mono_ns(void);

/* The timeval of a libevent timer asked to wait ms: ms itself, or the source's timer_us(ms)
 * microseconds when one is set. The engine arms its debounce and its retries after a
 * failure (the backoff) with it. */
struct timeval rz_clock_timer(int64_t ms);

/* Where the time comes from, for a test's fake clock: each member NULL keeps the system's.
 * now_ms: the wall clock (rz_clock_now_ms, hence rz_clock_format's "now" in the Runs'
 * startedAt and finishedAt); mono_ns: rz_clock_mono_ns; timer_us: how long a timer armed
 * with rz_clock_timer(ms) really waits (a test records the ms asked for and waits a
 * fraction of it). */
typedef struct rz_clock_source {
	int64_t (*now_ms)(void *ctx);
	int64_t (*mono_ns)(void *ctx);
	int64_t (*timer_us)(void *ctx, int64_t ms);
	void *ctx;
} rz_clock_source_t;

/* Read the time from src from now on (borrowed: it must outlive its use), or from the
 * system again with NULL. For tests: set it before anything reads the time, from the loop
 * thread, and never while other threads run. */
void rz_clock_set_source(const rz_clock_source_t *src);

/* ms as "2026-12-01T07:00:00.123Z" into buf (size at least 32). */
void rz_clock_format(int64_t ms, char *buf, size_t size);

/* An RFC 3339 UTC time ("…Z", fractions optional) as milliseconds; -1 if it is not one
 * (rz_time_parse, and the fraction's first three digits). */
int64_t rz_clock_parse(const char *text);

#endif /* RZ_CLOCK_H */
