/* core/base/clock.c - wall-clock time as the API writes it. */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"

int64_t rz_clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

int64_t rz_clock_parse(const char *text)
{
	struct tm tm = { 0 };
	int n = 0, ms = 0, digits = 0;
	const char *p;

	if (text == NULL ||
	    sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19) {
		return -1;
	}
	p = text + 19;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (digits < 3) {
				ms = ms * 10 + (*p - '0');
			}
		}
		for (; digits > 0 && digits < 3; digits++) {
			ms *= 10;
		}
	}
	if (strcmp(p, "Z") != 0 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) {
		return -1;
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}
