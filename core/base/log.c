/* core/base/log.c - the one logging sink: logfmt lines, syslog levels, redaction. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/base/log.h"

#define LINE_MAX_BYTES 8192

static const char *const level_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

static struct {
	pthread_mutex_t lock;
	int level;
	int fd;     /* 2 for stderr */
	char *path; /* NULL for stderr */
} sink = { PTHREAD_MUTEX_INITIALIZER, RZ_LOG_INFO, 2, NULL };

int rz_log_level_parse(const char *s, int *level)
{
	static const struct {
		const char *name;
		int level;
	} aliases[] = { { "warn", RZ_LOG_WARNING }, { "error", RZ_LOG_ERR } };

	if (s == NULL) {
		return -EINVAL;
	}
	for (int i = 0; i < (int)(sizeof(level_names) / sizeof(level_names[0])); i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*level = i;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strcasecmp(s, aliases[i].name) == 0) {
			*level = aliases[i].level;
			return 0;
		}
	}
	return -EINVAL;
}

const char *rz_log_level_name(int level)
{
	if (level < RZ_LOG_EMERG || level > RZ_LOG_DEBUG) {
		return "unknown";
	}
	return level_names[level];
}

void rz_log_set_level(int level)
{
	if (level < RZ_LOG_EMERG) {
		level = RZ_LOG_EMERG;
	} else if (level > RZ_LOG_DEBUG) {
		level = RZ_LOG_DEBUG;
	}
	__atomic_store_n(&sink.level, level, __ATOMIC_RELAXED);
}

int rz_log_get_level(void)
{
	return __atomic_load_n(&sink.level, __ATOMIC_RELAXED);
}

bool rz_log_enabled(int level)
{
	return level <= rz_log_get_level();
}

static int open_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	return fd < 0 ? -errno : fd;
}

int rz_log_open(const char *path, rz_err_t *err)
{
	int fd = 2;
	char *copy = NULL;

	if (path != NULL && path[0] != '\0') {
		fd = open_path(path);
		if (fd < 0) {
			return rz_err_set(err, fd, "log: open '%s' failed: %s", path,
			                  strerror(-fd));
		}
		copy = strdup(path);
		if (copy == NULL) {
			close(fd);
			return rz_err_set(err, -ENOMEM, "log: out of memory");
		}
	}
	pthread_mutex_lock(&sink.lock);
	if (sink.fd != 2) {
		close(sink.fd);
	}
	free(sink.path);
	sink.fd = fd;
	sink.path = copy;
	pthread_mutex_unlock(&sink.lock);
	return 0;
}

int rz_log_reopen(void)
{
	int rc = 0;

	pthread_mutex_lock(&sink.lock);
	if (sink.path != NULL) {
		int fd = open_path(sink.path);
		if (fd < 0) {
			rc = fd;
		} else {
			close(sink.fd);
			sink.fd = fd;
		}
	}
	pthread_mutex_unlock(&sink.lock);
	return rc;
}

void rz_log_close(void)
{
	pthread_mutex_lock(&sink.lock);
	if (sink.fd != 2) {
		close(sink.fd);
	}
	free(sink.path);
	sink.fd = 2;
	sink.path = NULL;
	pthread_mutex_unlock(&sink.lock);
}

static bool needs_quotes(const char *v)
{
	if (v[0] == '\0') {
		return true;
	}
	for (const unsigned char *p = (const unsigned char *)v; *p != '\0'; p++) {
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p == 0x7f) {
			return true;
		}
	}
	return false;
}

int rz_log_quote(char *buf, int size, const char *value)
{
	int n = 0;
	const char *v = value != NULL ? value : "";

#define PUT(c)                                                                                     \
	do {                                                                                       \
		if (n < size - 1) {                                                                \
			buf[n] = (c);                                                              \
		}                                                                                  \
		n++;                                                                               \
	} while (0)

	if (!needs_quotes(v)) {
		for (const char *p = v; *p != '\0'; p++) {
			PUT(*p);
		}
	} else {
		PUT('"');
		for (const unsigned char *p = (const unsigned char *)v; *p != '\0'; p++) {
			if (*p == '"' || *p == '\\') {
				PUT('\\');
				PUT((char)*p);
			} else if (*p == '\n') {
				PUT('\\');
				PUT('n');
			} else if (*p == '\r') {
				PUT('\\');
				PUT('r');
			} else if (*p == '\t') {
				PUT('\\');
				PUT('t');
			} else if (*p < ' ' || *p == 0x7f) {
				static const char hex[] = "0123456789abcdef";
				PUT('\\');
				PUT('x');
				PUT(hex[*p >> 4]);
				PUT(hex[*p & 15]);
			} else {
				PUT((char)*p);
			}
		}
		PUT('"');
	}
#undef PUT
	if (size > 0) {
		buf[n < size ? n : size - 1] = '\0';
	}
	return n;
}

bool rz_log_is_secret_key(const char *key)
{
	static const char *const words[] = {
		"password", "passwd",      "secret",  "token",      "authorization",
		"cookie",   "private_key", "api_key", "credential",
	};
	char lower[128];
	size_t n = 0;

	if (key == NULL) {
		return false;
	}
	for (; key[n] != '\0' && n < sizeof(lower) - 1; n++) {
		lower[n] = (char)tolower((unsigned char)key[n]);
	}
	lower[n] = '\0';
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strstr(lower, words[i]) != NULL) {
			return true;
		}
	}
	return false;
}

const char *rz_log_redact(const char *key, const char *value)
{
	return rz_log_is_secret_key(key) ? RZ_LOG_REDACTED : value;
}

/* Append text to the line buffer, never past its end. */
static void line_add(char *line, size_t *len, const char *text)
{
	size_t n = strlen(text);
	size_t room = LINE_MAX_BYTES - 2 - *len; /* *len never passes LINE_MAX_BYTES - 2 */
	if (n > room) {
		n = room;
	}
	memcpy(line + *len, text, n);
	*len += n;
}

static void line_add_value(char *line, size_t *len, const char *value)
{
	size_t room = LINE_MAX_BYTES - 1 - *len;
	int n = rz_log_quote(line + *len, (int)room, value);
	*len += (size_t)n < room ? (size_t)n : room - 1;
}

static void line_start(char *line, size_t *len, int level, const char *subsys)
{
	struct timeval tv;
	struct tm tm;
	char ts[96];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(ts, sizeof(ts),
	         "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000));
	*len = 0;
	line_add(line, len, ts);
	line_add(line, len, rz_log_level_name(level));
	line_add(line, len, " subsys=");
	line_add_value(line, len, subsys != NULL ? subsys : "main");
}

static void line_emit(char *line, size_t len)
{
	line[len++] = '\n';
	pthread_mutex_lock(&sink.lock);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(sink.fd, line + off, len - off);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			break;
		}
		off += (size_t)w;
	}
	pthread_mutex_unlock(&sink.lock);
}

void rz_log(int level, const char *subsys, const char *fmt, ...)
{
	char line[LINE_MAX_BYTES];
	char msg[LINE_MAX_BYTES / 2];
	size_t len;
	va_list ap;

	if (!rz_log_enabled(level)) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line_start(line, &len, level, subsys);
	line_add(line, &len, " msg=");
	line_add_value(line, &len, msg);
	line_emit(line, len);
}

void rz_logkv(int level, const char *subsys, const char *msg, ...)
{
	char line[LINE_MAX_BYTES];
	size_t len;
	va_list ap;
	const char *key;

	if (!rz_log_enabled(level)) {
		return;
	}
	line_start(line, &len, level, subsys);
	line_add(line, &len, " msg=");
	line_add_value(line, &len, msg);
	va_start(ap, msg);
	while ((key = va_arg(ap, const char *)) != NULL) {
		const char *value = va_arg(ap, const char *);
		line_add(line, &len, " ");
		line_add(line, &len, key);
		line_add(line, &len, "=");
		line_add_value(line, &len, rz_log_redact(key, value));
	}
	va_end(ap);
	line_emit(line, len);
}
