/*
 * core/base/clock.h - wall-clock time as the API writes it: RFC 3339 in UTC, with
 * milliseconds, and back.
 */
#ifndef RZ_CLOCK_H
#define RZ_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Seconds since the epoch for an RFC 3339 time ("2026-11-30T04:31:11Z", fractions and
 * offsets allowed); -1 when it does not parse. */
int64_t rz_time_parse(const char *s);

/* The current time as RFC 3339 UTC ("2026-11-30T04:31:11Z") into buf (≥ 21 bytes). */
void rz_time_now(char *buf, size_t size);

/* Milliseconds since the epoch, now. */
int64_t rz_clock_now_ms(void);

/* ms as "2026-12-01T07:00:00.123Z" into buf (size at least 32). */
void rz_clock_format(int64_t ms, char *buf, size_t size);

/* An RFC 3339 UTC time ("…Z", fractions optional) as milliseconds; -1 if it is not one
 * (rz_time_parse, and the fraction's first three digits). */
int64_t rz_clock_parse(const char *text);

#endif /* RZ_CLOCK_H */
