/*
 * core/base/clock.h - wall-clock time as the API writes it: RFC 3339 in UTC, with
 * milliseconds, and back.
 */
#ifndef RZ_CLOCK_H
#define RZ_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds since the epoch, now. */
int64_t rz_clock_now_ms(void);

/* ms as "2026-12-01T07:00:00.123Z" into buf (size at least 32). */
void rz_clock_format(int64_t ms, char *buf, size_t size);

/* An RFC 3339 UTC time ("…Z", fractions optional) as milliseconds; -1 if it is not one. */
int64_t rz_clock_parse(const char *text);

#endif /* RZ_CLOCK_H */
