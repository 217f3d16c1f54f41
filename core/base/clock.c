/* core/base/clock.c - wall-clock time as the API writes it; the clocks a test may replace. */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"

static const rz_clock_source_t *source; /* NULL: the system's clocks */

void rz_clock_set_source(const rz_clock_source_t *src)
{
	source = src;
}

int64_t rz_clock_now_ms(void)
{
	struct timespec ts;

	if (source != NULL && source->now_ms != NULL) {
		return source->now_ms(source->ctx);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t rz_clock_mono_ns(void)
{
	struct timespec ts;

	if (source != NULL && source->mono_ns != NULL) {
		return source->mono_ns(source->ctx);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timeval rz_clock_timer(int64_t ms)
{
	int64_t us = ms * 1000;

	if (source != NULL && source->timer_us != NULL) {
		us = source->timer_us(source->ctx, ms);
	}
	return (struct timeval){ .tv_sec = us / 1000000, .tv_usec = us % 1000000 };
}

void rz_clock_format(int64_t ms, char *buf, size_t size)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;
	char s[32];

	gmtime_r(&sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%.19s.%03dZ", s, (int)(ms % 1000));
}

int64_t rz_time_parse(const char *s)
{
	struct tm tm;
	const char *p;
	int64_t t;

	if (s == NULL) {
		return -1;
	}
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL) {
		return -1;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
		}
	}
	t = (int64_t)timegm(&tm);
	if (*p == 'Z' && p[1] == '\0') {
		return t;
	}
	if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
		int64_t off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
		              ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		return *p == '+' ? t - off : t + off;
	}
	return -1;
}

void rz_time_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t rz_clock_parse(const char *text)
{
	int64_t sec = rz_time_parse(text), ms = 0;
	size_t n = text ? strlen(text) : 0;
	const char *p = text + 19;

	if (sec < 0 || n < 20 || text[n - 1] != 'Z') {
		return -1; /* UTC only: what the API writes */
	}
	if (*p == '.') {
		for (int scale = 100; *++p >= '0' && *p <= '9'; scale /= 10) {
			ms += (*p - '0') * scale;
		}
	}
	return sec * 1000 + ms;
}
