/* core/remote/nats.c - the NATS connection's options and streams (core/remote/nats.h). */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/remote/nats.h"

static bool set(const char *s)
{
	return s != NULL && s[0] != '\0';
}

void rz_nats_conf_daemon(const rz_config_t *cfg, rz_nats_conf_t *out)
{
	*out = (rz_nats_conf_t){ .section = "runners",
		                 .url = cfg->runners_nats_url,
		                 .user = cfg->runners_nats_user,
		                 .password_file = cfg->runners_nats_password_file,
		                 .token_file = cfg->runners_nats_token_file,
		                 .ca_file = cfg->runners_nats_ca_file,
		                 .name = "rezuscloud" };
}

void rz_nats_conf_runner(const rz_config_t *cfg, const char *name, rz_nats_conf_t *out)
{
	*out = (rz_nats_conf_t){ .section = "runner",
		                 .url = cfg->runner_nats_url,
		                 .user = cfg->runner_nats_user,
		                 .password_file = cfg->runner_nats_password_file,
		                 .token_file = cfg->runner_nats_token_file,
		                 .ca_file = cfg->runner_nats_ca_file,
		                 .name = name };
	/* its own inbox prefix: its NATS user may then subscribe to its replies alone
	 * (docs/runners.md, "NATS permissions") */
	snprintf(out->inbox, sizeof(out->inbox), RZ_NATS_RUNNER_INBOX "%s", name);
}

int rz_nats_names(const char *key, const char *i, rz_nats_names_t *out, rz_err_t *err)
{
	size_t len = i != NULL ? strlen(i) : 0;
	char up[RZ_NATS_INSTALLATION_MAX + 1];

	if (len == 0 || len > RZ_NATS_INSTALLATION_MAX ||
	    strspn(i, "abcdefghijklmnopqrstuvwxyz0123456789-") != len) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "%s: '%.40s' is no installation name (1 to %d of a-z, 0-9, '-')",
		                  key, i ? i : "", RZ_NATS_INSTALLATION_MAX);
	}
	for (size_t k = 0; k <= len; k++) {
		up[k] = (char)toupper((unsigned char)i[k]);
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->installation, sizeof(out->installation), "%s", i);
	snprintf(out->jobs_stream, sizeof(out->jobs_stream), "REZUS_%s_JOBS", up);
	snprintf(out->events_stream, sizeof(out->events_stream), "REZUS_%s_EVENTS", up);
	snprintf(out->jobs, sizeof(out->jobs), "rezus.%s.jobs.", i);
	snprintf(out->events, sizeof(out->events), "rezus.%s.events.", i);
	snprintf(out->runners, sizeof(out->runners), "rezus.%s.runners.", i);
	return 0;
}

const char *rz_nats_subject_rest(const char *subject, const char *kind)
{
	const char *p, *dot;
	size_t klen = strlen(kind);

	if (subject == NULL || strncmp(subject, "rezus.", 6) != 0) {
		return NULL;
	}
	p = subject + 6;
	dot = strchr(p, '.');
	if (dot == NULL || dot == p || (size_t)(dot - p) > RZ_NATS_INSTALLATION_MAX ||
	    strncmp(dot + 1, kind, klen) != 0 || dot[1 + klen] != '.' || dot[2 + klen] == '\0') {
		return NULL;
	}
	return dot + 2 + klen;
}

int rz_nats_read_secret(const char *key, const char *path, char *buf, size_t size, rz_err_t *err)
{
	struct stat st;
	ssize_t n;
	size_t len;
	int fd, e;

	if (size < RZ_NATS_SECRET_MAX + 2) {
		return rz_err_set(err, REZUS_EINTERNAL, "%s: secret buffer too small", key);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return rz_err_set(err, -errno, "%s '%s': %s", key, path, strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return rz_err_set(err, REZUS_ECONFIG, "%s '%s': not a regular file", key, path);
	}
	if ((st.st_mode & 0077) != 0) {
		close(fd);
		return rz_err_set(err, REZUS_ECONFIG,
		                  "%s '%s': mode %04o lets its group or others at the secret; "
		                  "chmod 600 it",
		                  key, path, (unsigned)(st.st_mode & 07777));
	}
	n = read(fd, buf, RZ_NATS_SECRET_MAX + 1);
	e = errno;
	close(fd);
	if (n < 0) {
		return rz_err_set(err, -e, "%s '%s': %s", key, path, strerror(e));
	}
	buf[n] = '\0';
	len = strcspn(buf, "\r\n");
	if (len > RZ_NATS_SECRET_MAX) {
		memset(buf, 0, size);
		return rz_err_set(err, REZUS_ECONFIG, "%s '%s': the secret is longer than %d bytes",
		                  key, path, RZ_NATS_SECRET_MAX);
	}
	memset(buf + len, 0, (size_t)n - len);
	if (len == 0) {
		return rz_err_set(err, REZUS_ECONFIG, "%s '%s': the first line is empty", key,
		                  path);
	}
	return 0;
}

int rz_nats_check_secrets(const rz_nats_conf_t *c, rz_err_t *err)
{
	char buf[RZ_NATS_SECRET_MAX + 2], key[64];
	int rc = 0;

	if (set(c->password_file)) {
		snprintf(key, sizeof(key), "%s.nats_password_file", c->section);
		rc = rz_nats_read_secret(key, c->password_file, buf, sizeof(buf), err);
	}
	if (rc == 0 && set(c->token_file)) {
		snprintf(key, sizeof(key), "%s.nats_token_file", c->section);
		rc = rz_nats_read_secret(key, c->token_file, buf, sizeof(buf), err);
	}
	memset(buf, 0, sizeof(buf));
	return rc;
}

#ifdef HAVE_LIBNATS

const char *rz_nats_error(natsStatus s)
{
	const char *last = nats_GetLastError(NULL);

	return last != NULL && last[0] != '\0' ? last : natsStatus_GetText(s);
}

int rz_nats_options(natsOptions **out, const rz_nats_conf_t *c, int max_reconnect, rz_err_t *err)
{
	char secret[RZ_NATS_SECRET_MAX + 2], key[64];
	natsOptions *o = NULL;
	natsStatus s;
	int rc = 0;

	*out = NULL;
	s = natsOptions_Create(&o);
	if (s == NATS_OK) {
		s = natsOptions_SetURL(o, c->url);
	}
	if (s == NATS_OK) {
		s = natsOptions_SetName(o, c->name);
	}
	if (s == NATS_OK && c->inbox[0] != '\0') {
		s = natsOptions_SetCustomInboxPrefix(o, c->inbox);
	}
	if (s == NATS_OK) {
		s = natsOptions_SetTimeout(o, RZ_NATS_CONNECT_TIMEOUT);
	}
	if (s == NATS_OK) {
		s = natsOptions_SetMaxReconnect(o, max_reconnect);
	}
	if (s == NATS_OK) {
		s = natsOptions_SetReconnectWait(o, RZ_NATS_RECONNECT_WAIT);
	}
	if (s == NATS_OK) {
		s = natsOptions_SetReconnectBufSize(o, RZ_NATS_RECONNECT_BUF);
	}
	if (s != NATS_OK) {
		natsOptions_Destroy(o);
		return rz_err_set(err, REZUS_ECONFIG, "%s.nats_url '%s': %s", c->section, c->url,
		                  rz_nats_error(s));
	}
	if (set(c->user)) {
		snprintf(key, sizeof(key), "%s.nats_password_file", c->section);
		rc = rz_nats_read_secret(key, c->password_file, secret, sizeof(secret), err);
		if (rc == 0 && natsOptions_SetUserInfo(o, c->user, secret) != NATS_OK) {
			rc = rz_err_set(err, -ENOMEM, "%s.nats_user: out of memory", c->section);
		}
	} else if (set(c->token_file)) {
		snprintf(key, sizeof(key), "%s.nats_token_file", c->section);
		rc = rz_nats_read_secret(key, c->token_file, secret, sizeof(secret), err);
		if (rc == 0 && natsOptions_SetToken(o, secret) != NATS_OK) {
			rc = rz_err_set(err, -ENOMEM, "%s.nats_token_file: out of memory",
			                c->section);
		}
	}
	memset(secret, 0, sizeof(secret));
	if (rc == 0 && (strncmp(c->url, "tls://", 6) == 0 || set(c->ca_file))) {
		s = natsOptions_SetSecure(o, true);
		if (s == NATS_OK && set(c->ca_file)) {
			s = natsOptions_LoadCATrustedCertificates(o, c->ca_file);
		}
		if (s != NATS_OK) {
			rc = rz_err_set(err, REZUS_ECONFIG, "%s.nats_ca_file '%s': %s", c->section,
			                c->ca_file, rz_nats_error(s));
		}
	}
	if (rc != 0) {
		natsOptions_Destroy(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* One stream, created when it is absent. */
static int ensure_stream(jsCtx *js, const char *name, const char *subject,
                         jsRetentionPolicy retention, int64_t max_msgs, int64_t max_bytes,
                         int64_t max_age_s, rz_err_t *err)
{
	jsStreamInfo *si = NULL;
	jsStreamConfig sc;
	jsErrCode jerr = 0;
	const char *subjects[1] = { subject };
	natsStatus s = js_GetStreamInfo(&si, js, name, NULL, &jerr);

	if (s == NATS_OK) {
		jsStreamInfo_Destroy(si);
		return 0;
	}
	if (s != NATS_NOT_FOUND) {
		return rz_err_set(err, -EIO, "NATS: stream %s: %s", name, rz_nats_error(s));
	}
	jsStreamConfig_Init(&sc);
	sc.Name = name;
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Retention = retention;
	sc.Storage = js_FileStorage;
	sc.MaxMsgs = max_msgs;
	sc.MaxBytes = max_bytes;
	sc.MaxAge = max_age_s * 1000000000LL; /* nanoseconds */
	sc.Discard = js_DiscardOld;
	s = js_AddStream(&si, js, &sc, NULL, &jerr);
	if (s != NATS_OK) {
		return rz_err_set(err, -EIO,
		                  "NATS: cannot create stream %s: %s (JetStream error %d)", name,
		                  rz_nats_error(s), (int)jerr);
	}
	jsStreamInfo_Destroy(si);
	rz_log_info("remote", "created NATS stream %s (%s)", name, subject);
	return 0;
}

int rz_nats_ensure_streams(natsConnection *nc, const rz_nats_names_t *names, rz_err_t *err)
{
	char jobs[80], events[80];
	jsCtx *js = NULL;
	natsStatus s = natsConnection_JetStream(&js, nc, NULL);
	int rc;

	if (s != NATS_OK) {
		return rz_err_set(err, -EIO, "NATS: no JetStream context: %s", rz_nats_error(s));
	}
	snprintf(jobs, sizeof(jobs), "%s>", names->jobs);
	snprintf(events, sizeof(events), "%s>", names->events);
	rc =
	    ensure_stream(js, names->jobs_stream, jobs, js_WorkQueuePolicy, RZ_STREAM_JOBS_MAX_MSGS,
	                  RZ_STREAM_JOBS_MAX_BYTES, RZ_STREAM_JOBS_MAX_AGE_S, err);
	if (rc == 0) {
		rc = ensure_stream(js, names->events_stream, events, js_LimitsPolicy,
		                   RZ_STREAM_EVENTS_MAX_MSGS, RZ_STREAM_EVENTS_MAX_BYTES,
		                   RZ_STREAM_EVENTS_MAX_AGE_S, err);
	}
	jsCtx_Destroy(js);
	return rc;
}

#endif /* HAVE_LIBNATS */
