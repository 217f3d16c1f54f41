/* core/offsite/s3conf.c - an S3 target's settings, its credentials file, and the URLs of its
 * objects. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/offsite/offsite-int.h"

#define CRED_MAX    4096
#define PREFIX_MAX  256 /* so that prefix and key stay well within S3's 1024 bytes */
#define TIMEOUT_DEF 300

static const char *const settings[] = { "type",      "endpoint",       "bucket",
	                                "prefix",    "region",         "credentialsFile",
	                                "pathStyle", "timeoutSeconds", "caFile" };

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int known_settings(const json_t *conf, rz_err_t *err)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)conf, k, v)
	{
		size_t i = 0;
		while (i < sizeof(settings) / sizeof(settings[0]) && strcmp(settings[i], k) != 0) {
			i++;
		}
		if (i == sizeof(settings) / sizeof(settings[0])) {
			return rz_err_set(err, REZUS_ECONFIG,
			                  "target: '%.64s' is not a setting of an s3 target", k);
		}
	}
	return 0;
}

/* host[:port] of an endpoint, after its scheme. */
static int parse_host(rz__s3_t *s, const char *p, rz_err_t *err)
{
	static const char bad[] = "target: 'endpoint' must be http(s)://HOST[:PORT], without a "
	                          "path, query or credentials";
	size_t h;

	if (*p == '[') {
		h = strspn(p + 1, "0123456789abcdefABCDEF:.");
		if (p[1 + h] != ']' || h == 0) {
			return rz_err_set(err, REZUS_ECONFIG, "%s", bad);
		}
		h += 2;
	} else {
		h = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
	}
	if (h == 0 || h >= sizeof(s->host) - 64 || p[0] == '.' || p[0] == '-') {
		return rz_err_set(err, REZUS_ECONFIG, "%s", bad);
	}
	snprintf(s->host, sizeof(s->host), "%.*s", (int)h, p);
	p += h;
	if (*p == ':') {
		char *end;
		long port = strtol(p + 1, &end, 10);
		if (end == p + 1 || port < 1 || port > 65535 || end - p - 1 > 5) {
			return rz_err_set(err, REZUS_ECONFIG,
			                  "target: 'endpoint' has a port that is not 1 to 65535");
		}
		snprintf(s->port, sizeof(s->port), "%ld", port);
		p = end;
	}
	if (strcmp(p, "") != 0 && strcmp(p, "/") != 0) {
		return rz_err_set(err, REZUS_ECONFIG, "%s", bad);
	}
	return 0;
}

static int parse_endpoint(rz__s3_t *s, const json_t *conf, rz_err_t *err)
{
	const char *ep = json_string_value(json_object_get(conf, "endpoint"));

	if (ep == NULL) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: 'endpoint' is required (https://HOST[:PORT])");
	}
	if (strchr(ep, '@') != NULL) { /* credentials belong in credentialsFile */
		return rz_err_set(
		    err, REZUS_ECONFIG,
		    "target: 'endpoint' must be http(s)://HOST[:PORT], without a path, "
		    "query or credentials");
	}
	if (strncmp(ep, "https://", 8) == 0) {
		snprintf(s->scheme, sizeof(s->scheme), "https");
		return parse_host(s, ep + 8, err);
	}
	if (strncmp(ep, "http://", 7) == 0) {
		snprintf(s->scheme, sizeof(s->scheme), "http");
		return parse_host(s, ep + 7, err);
	}
	return rz_err_set(err, REZUS_ECONFIG,
	                  "target: 'endpoint' must start with https:// or http://");
}

static bool ip_host(const char *host)
{
	return host[0] == '[' || strspn(host, "0123456789.") == strlen(host);
}

static int parse_bucket(rz__s3_t *s, const json_t *conf, rz_err_t *err)
{
	const char *b = json_string_value(json_object_get(conf, "bucket"));
	size_t n = b != NULL ? strlen(b) : 0;

	if (n < 3 || n > 63 || strspn(b, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n ||
	    !is_alnum(b[0]) || !is_alnum(b[n - 1]) || strstr(b, "..") != NULL) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: 'bucket' must be 3 to 63 lowercase letters, digits, '.' "
		                  "and '-', starting and ending with a letter or digit");
	}
	snprintf(s->bucket, sizeof(s->bucket), "%s", b);
	return 0;
}

static int parse_prefix(rz__s3_t *s, const json_t *conf, rz_err_t *err)
{
	json_t *v = json_object_get(conf, "prefix");
	const char *p = json_string_value(v);
	size_t n;

	if (v == NULL) {
		s->prefix[0] = '\0';
		return 0;
	}
	if (p == NULL || strlen(p) > PREFIX_MAX || rz__offsite_check_key(p, true, NULL) < 0) {
		return rz_err_set(
		    err, REZUS_ECONFIG,
		    "target: 'prefix' must be at most %d bytes of letters, digits and "
		    "\"._-+=@,\" in parts separated by '/' (no leading '/', no '..')",
		    PREFIX_MAX);
	}
	n = strlen(p);
	snprintf(s->prefix, sizeof(s->prefix), "%s%s", p, n > 0 && p[n - 1] != '/' ? "/" : "");
	return 0;
}

static int parse_misc(rz__s3_t *s, const json_t *conf, rz_err_t *err)
{
	json_t *v;
	const char *r, *f;

	v = json_object_get(conf, "region");
	r = v == NULL ? "us-east-1" : json_string_value(v);
	if (r == NULL || r[0] == '\0' || strlen(r) > 63 ||
	    strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
	        strlen(r)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: 'region' must be 1 to 63 letters, digits, '-' and '_'");
	}
	snprintf(s->region, sizeof(s->region), "%s", r);
	snprintf(s->sigv4, sizeof(s->sigv4), "aws:amz:%s:s3", r);
	v = json_object_get(conf, "pathStyle");
	if (v != NULL && !json_is_boolean(v)) {
		return rz_err_set(err, REZUS_ECONFIG, "target: 'pathStyle' must be true or false");
	}
	s->path_style = json_is_true(v);
	if (!s->path_style && ip_host(s->host)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: 'pathStyle' must be true for an endpoint given by IP "
		                  "address (virtual-host addressing puts the bucket in the name)");
	}
	v = json_object_get(conf, "timeoutSeconds");
	if (v != NULL &&
	    (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 86400)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: 'timeoutSeconds' must be an integer from 1 to 86400");
	}
	s->timeout_s = v != NULL ? (long)json_integer_value(v) : TIMEOUT_DEF;
	v = json_object_get(conf, "caFile");
	f = json_string_value(v);
	if (v != NULL && (f == NULL || f[0] != '/' || strlen(f) >= sizeof(s->ca_file))) {
		return rz_err_set(err, REZUS_ECONFIG, "target: 'caFile' must be an absolute path");
	}
	snprintf(s->ca_file, sizeof(s->ca_file), "%s", f != NULL ? f : "");
	return 0;
}

/* ------------------------------------------------------------------ credentials */

static char *trim(char *s)
{
	char *end;

	s += strspn(s, " \t");
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) {
		*--end = '\0';
	}
	return s;
}

/* A credential's value: printable ASCII without spaces, 1 to max bytes. */
static bool good_value(const char *v, size_t max)
{
	size_t n = strlen(v);

	if (n == 0 || n > max) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i] <= ' ' || v[i] > '~') {
			return false;
		}
	}
	return true;
}

/* One "name = value" line of the credentials file (never quoted in a message: the value is
 * a secret, and so may be a misplaced line). */
static int cred_line(rz__s3_t *s, char *line, int lineno, int *sections, rz_err_t *err)
{
	const char *f = s->cred_file;
	char *eq, *name, *value, *dst;
	size_t max;

	if (line[0] == '[') {
		return ++*sections > 1 ? rz_err_set(err, REZUS_ECONFIG,
		                                    "target: credentialsFile '%s' holds more "
		                                    "than one [section]",
		                                    f)
		                       : 0;
	}
	eq = strchr(line, '=');
	if (eq == NULL) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: credentialsFile '%s', line %d: expected NAME = VALUE", f,
		                  lineno);
	}
	*eq = '\0';
	name = trim(line);
	value = trim(eq + 1);
	if (strcmp(name, "aws_access_key_id") == 0) {
		dst = s->access_key;
		max = sizeof(s->access_key) - 1;
	} else if (strcmp(name, "aws_secret_access_key") == 0) {
		dst = s->secret_key;
		max = sizeof(s->secret_key) - 1;
	} else {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: credentialsFile '%s', line %d: '%.40s' is not "
		                  "aws_access_key_id or aws_secret_access_key",
		                  f, lineno, good_value(name, 40) ? name : "?");
	}
	if (dst[0] != '\0' || !good_value(value, max)) {
		return rz_err_set(
		    err, REZUS_ECONFIG, "target: credentialsFile '%s', line %d: %s is %s", f,
		    lineno, name,
		    dst[0] != '\0' ? "set twice" : "empty, too long or not printable");
	}
	memcpy(dst, value, strlen(value) + 1);
	return 0;
}

static int parse_credentials(rz__s3_t *s, char *text, rz_err_t *err)
{
	int lineno = 0, sections = 0, rc = 0;

	for (char *line = text; rc == 0 && line != NULL && *line != '\0';) {
		char *nl = strchr(line, '\n'), *l;
		if (nl != NULL) {
			*nl = '\0';
		}
		lineno++;
		l = trim(line);
		if (l[0] != '\0' && l[0] != '#' && l[0] != ';') {
			rc = cred_line(s, l, lineno, &sections, err);
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	if (rc == 0 && (s->access_key[0] == '\0' || s->secret_key[0] == '\0')) {
		rc = rz_err_set(err, REZUS_ECONFIG,
		                "target: credentialsFile '%s' must set aws_access_key_id and "
		                "aws_secret_access_key",
		                s->cred_file);
	}
	return rc;
}

static int read_credentials(rz__s3_t *s, const json_t *conf, rz_err_t *err)
{
	const char *f = json_string_value(json_object_get(conf, "credentialsFile"));
	char *text = NULL;
	struct stat st;
	ssize_t n;
	int fd, rc;

	if (f == NULL || f[0] != '/' || strlen(f) >= sizeof(s->cred_file)) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: 'credentialsFile' is required: an absolute path");
	}
	snprintf(s->cred_file, sizeof(s->cred_file), "%s", f);
	fd = open(f, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "target: cannot read credentialsFile '%s': %s", f,
		                  strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CRED_MAX) {
		rc = rz_err_set(err, REZUS_ECONFIG,
		                "target: credentialsFile '%s' is not a regular file of at most %d "
		                "bytes",
		                f, CRED_MAX);
	} else if ((st.st_mode & 0007) != 0) {
		rc = rz_err_set(err, REZUS_ECONFIG,
		                "target: credentialsFile '%s' is open to others (mode %04o): chmod "
		                "600 it",
		                f, (unsigned)(st.st_mode & 07777));
	} else if ((text = sodium_malloc(CRED_MAX + 1)) == NULL) {
		rc = rz_err_set(err, -ENOMEM, "target: out of memory");
	} else if ((n = rz__offsite_read_full(fd, text, CRED_MAX)) < 0) {
		rc = rz_err_set(err, REZUS_ECONFIG, "target: cannot read credentialsFile '%s': %s",
		                f, strerror((int)-n));
	} else {
		text[n] = '\0';
		rc = parse_credentials(s, text, err);
	}
	close(fd);
	if (text != NULL) {
		sodium_free(text); /* wipes */
	}
	return rc;
}

int rz__s3_conf(rz__s3_t *s, const json_t *conf, rz_err_t *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	rc = known_settings(conf, err);
	if (rc == 0) {
		rc = parse_endpoint(s, conf, err);
	}
	if (rc == 0) {
		rc = parse_bucket(s, conf, err);
	}
	if (rc == 0) {
		rc = parse_prefix(s, conf, err);
	}
	if (rc == 0) {
		rc = parse_misc(s, conf, err);
	}
	if (rc == 0) {
		rc = read_credentials(s, conf, err);
	}
	if (rc < 0) {
		rz__s3_wipe(s);
	}
	return rc;
}

void rz__s3_wipe(rz__s3_t *s)
{
	sodium_memzero(s->access_key, sizeof(s->access_key));
	sodium_memzero(s->secret_key, sizeof(s->secret_key));
}

/* ------------------------------------------------------------------ URLs */

size_t rz__s3_encode(const char *in, bool keep_slash, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	bool cut = false;

	for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
		bool keep =
		    is_alnum((char)*p) || strchr("-._~", *p) != NULL || (keep_slash && *p == '/');
		size_t w = keep ? 1 : 3;
		if (!cut && n + w < size) {
			if (keep) {
				out[n] = (char)*p;
			} else {
				out[n] = '%';
				out[n + 1] = hex[*p >> 4];
				out[n + 2] = hex[*p & 15];
			}
		} else if (!cut) {
			cut = true;
			if (size > 0) {
				out[n < size ? n : size - 1] = '\0';
			}
		}
		n += w;
	}
	if (!cut && size > 0) {
		out[n] = '\0';
	}
	return n;
}

void rz__s3_endpoint(const rz__s3_t *s, char *buf, size_t size)
{
	snprintf(buf, size, "%s://%s%s%s", s->scheme, s->host, s->port[0] != '\0' ? ":" : "",
	         s->port);
}

int rz__s3_url(const rz__s3_t *s, const char *key, const char *query, char *buf, size_t size)
{
	char full[sizeof(s->prefix) + RZ_TARGET_KEY_MAX + 1], path[3 * sizeof(full)];
	const char *colon = s->port[0] != '\0' ? ":" : "", *q = query != NULL ? "?" : "";
	int n;

	snprintf(full, sizeof(full), "%s%s", key != NULL ? s->prefix : "", key != NULL ? key : "");
	if (rz__s3_encode(full, true, path, sizeof(path)) >= sizeof(path)) {
		return REZUS_ETOOBIG;
	}
	if (s->path_style) {
		n = snprintf(buf, size, "%s://%s%s%s/%s%s%s%s%s", s->scheme, s->host, colon,
		             s->port, s->bucket, key != NULL ? "/" : "", path, q,
		             query != NULL ? query : "");
	} else {
		n = snprintf(buf, size, "%s://%s.%s%s%s/%s%s%s", s->scheme, s->bucket, s->host,
		             colon, s->port, path, q, query != NULL ? query : "");
	}
	return n < 0 || (size_t)n >= size ? REZUS_ETOOBIG : 0;
}
