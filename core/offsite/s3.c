/* core/offsite/s3.c - the S3 target's requests: one libcurl easy handle per call, signed by
 * libcurl's own SigV4 (CURLOPT_AWS_SIGV4; no crypto of ours), answers bounded, failures said
 * plainly. The only file of the core that sees a CURL. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/offsite/offsite-int.h"

#define CONNECT_TIMEOUT 10 /* seconds, at most */
#define PAGE_KEYS       "1000"
#define PAGES_MAX       1000

/* One request and what came back. */
struct req {
	const rz__s3_t *s;
	CURL *c;
	const char *method; /* "GET", "PUT" or "DELETE" */
	char url[4096];
	int in;  /* PUT: the file sent */
	int out; /* GET: where a 200's body goes; -1: into body */
	char *body;
	size_t len, max;
	bool over;       /* the body was longer than max */
	int write_errno; /* writing out failed */
	long status;
	long os_errno;
	bool connected; /* a connection was made (a timeout after it is the transfer's) */
	CURLcode rc;
	char errbuf[CURL_ERROR_SIZE];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct req *r = ctx;
	size_t len = size * n, room;
	long status = 0;

	curl_easy_getinfo(r->c, CURLINFO_RESPONSE_CODE, &status);
	if (r->out >= 0 && status == 200) {
		int rc = rz__offsite_write_all(r->out, p, len);
		if (rc < 0) {
			r->write_errno = -rc;
			return 0; /* CURLE_WRITE_ERROR */
		}
		return len;
	}
	room = r->max - r->len;
	if (len > room) {
		r->over = true;
		len = room;
	}
	if (len > 0) {
		char *b = realloc(r->body, r->len + len + 1);
		if (b == NULL) {
			return 0;
		}
		r->body = b;
		memcpy(r->body + r->len, p, len);
		r->len += len;
		r->body[r->len] = '\0';
	}
	return size * n;
}

static size_t on_upload(char *p, size_t size, size_t n, void *ctx)
{
	struct req *r = ctx;
	ssize_t got = rz__offsite_read_full(r->in, p, size * n);

	return got < 0 ? CURL_READFUNC_ABORT : (size_t)got;
}

static int on_seek(void *ctx, curl_off_t offset, int origin)
{
	struct req *r = ctx;

	return lseek(r->in, (off_t)offset, origin) < 0 ? CURL_SEEKFUNC_FAIL : CURL_SEEKFUNC_OK;
}

static void set_method(struct req *r, uint64_t in_size)
{
	if (strcmp(r->method, "PUT") == 0) {
		curl_easy_setopt(r->c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(r->c, CURLOPT_READFUNCTION, on_upload);
		curl_easy_setopt(r->c, CURLOPT_READDATA, r);
		curl_easy_setopt(r->c, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(r->c, CURLOPT_SEEKDATA, r);
		curl_easy_setopt(r->c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)in_size);
	} else if (strcmp(r->method, "DELETE") == 0) {
		curl_easy_setopt(r->c, CURLOPT_CUSTOMREQUEST, "DELETE");
	}
}

/* Run r: 0 once an answer came (any status; r->status), -1 when none did (r->rc). */
static int perform(struct req *r, uint64_t in_size)
{
	const rz__s3_t *s = r->s;
	struct curl_slist *h = NULL;

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK || (r->c = curl_easy_init()) == NULL) {
		r->rc = CURLE_FAILED_INIT;
		return -1;
	}
	/* S3 wants the payload's hash signed; libcurl signs what this header says */
	h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	curl_easy_setopt(r->c, CURLOPT_URL, r->url);
	curl_easy_setopt(r->c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(r->c, CURLOPT_NOSIGNAL, 1L); /* worker threads */
	curl_easy_setopt(r->c, CURLOPT_USERAGENT, "rezuscloud/" PACKAGE_VERSION);
	curl_easy_setopt(r->c, CURLOPT_AWS_SIGV4, s->sigv4);
	curl_easy_setopt(r->c, CURLOPT_USERNAME, s->access_key);
	curl_easy_setopt(r->c, CURLOPT_PASSWORD, s->secret_key);
	curl_easy_setopt(r->c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(r->c, CURLOPT_TIMEOUT, s->timeout_s);
	curl_easy_setopt(r->c, CURLOPT_CONNECTTIMEOUT,
	                 s->timeout_s < CONNECT_TIMEOUT ? s->timeout_s : (long)CONNECT_TIMEOUT);
	curl_easy_setopt(r->c, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(r->c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(r->c, CURLOPT_WRITEDATA, r);
	if (s->ca_file[0] != '\0') {
		curl_easy_setopt(r->c, CURLOPT_CAINFO, s->ca_file);
	}
	set_method(r, in_size);
	r->rc = curl_easy_perform(r->c);
	curl_easy_getinfo(r->c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_getinfo(r->c, CURLINFO_OS_ERRNO, &r->os_errno);
	curl_off_t connect_us = 0;
	curl_easy_getinfo(r->c, CURLINFO_CONNECT_TIME_T, &connect_us);
	r->connected = connect_us > 0;
	curl_easy_cleanup(r->c);
	r->c = NULL;
	curl_slist_free_all(h);
	return r->rc == CURLE_OK ? 0 : -1;
}

static void req_init(struct req *r, const rz__s3_t *s, const char *method, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->method = method;
	r->in = -1;
	r->out = -1;
	r->max = max;
}

/* scheme://host[:port] of the URL r went to, for messages. */
static void origin(const struct req *r, char *buf, size_t size)
{
	const char *p = strstr(r->url, "://"), *slash = p != NULL ? strchr(p + 3, '/') : NULL;

	snprintf(buf, size, "%.*s", slash != NULL ? (int)(slash - r->url) : 200, r->url);
}

/* A request that got no answer: why, in the user's terms. */
static int no_answer(const struct req *r, const char *what, const char *path, rz_err_t *err)
{
	char o[300];

	origin(r, o, sizeof(o));
	switch (r->rc) {
	case CURLE_COULDNT_CONNECT:
		return rz_err_set(err, -ECONNREFUSED, "s3: cannot reach %s: %s", o,
		                  r->os_errno != 0 ? strerror((int)r->os_errno) : r->errbuf);
	case CURLE_COULDNT_RESOLVE_HOST:
		return rz_err_set(err, -EHOSTUNREACH, "s3: cannot reach %s: %s", o, r->errbuf);
	case CURLE_OPERATION_TIMEDOUT:
		if (!r->connected) {
			return rz_err_set(
			    err, -ETIMEDOUT, "s3: cannot reach %s: no connection within %ld s", o,
			    r->s->timeout_s < CONNECT_TIMEOUT ? r->s->timeout_s
			                                      : (long)CONNECT_TIMEOUT);
		}
		return rz_err_set(err, -ETIMEDOUT,
		                  "s3: %s timed out after %ld s (timeoutSeconds) at %s", what,
		                  r->s->timeout_s, o);
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CONNECT_ERROR:
		return rz_err_set(err, -EPROTO,
		                  "s3: TLS with %s failed: %s (caFile names a CA to trust)", o,
		                  r->errbuf);
	case CURLE_WRITE_ERROR:
		if (r->write_errno != 0) {
			return rz_err_set(err, -r->write_errno, "s3: cannot write '%s': %s", path,
			                  strerror(r->write_errno));
		}
		break;
	case CURLE_READ_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
		return rz_err_set(err, -EIO, "s3: cannot read '%s' to upload it", path);
	default:
		break;
	}
	return rz_err_set(err, -EIO, "s3: %s at %s failed: %s", what, o,
	                  r->errbuf[0] != '\0' ? r->errbuf : curl_easy_strerror(r->rc));
}

/* An answer other than success: S3's error code said plainly. */
static int refused(const struct req *r, const char *what, const char *key, rz_err_t *err)
{
	const rz__s3_t *s = r->s;
	char code[64], msg[128], o[300];

	rz__s3_parse_error(r->body != NULL ? r->body : "", r->len, code, sizeof(code), msg,
	                   sizeof(msg));
	origin(r, o, sizeof(o));
	if (r->status == 403 && (strcmp(code, "SignatureDoesNotMatch") == 0 ||
	                         strcmp(code, "InvalidAccessKeyId") == 0 || code[0] == '\0')) {
		return rz_err_set(err, RZ_EAUTH,
		                  "s3: access denied (403 %s): check credentialsFile '%s'",
		                  code[0] != '\0' ? code : "Forbidden", s->cred_file);
	}
	if (r->status == 403) {
		return rz_err_set(
		    err, RZ_EAUTH,
		    "s3: access denied (403 %s) to %s in bucket '%s': the credentials "
		    "lack the permission",
		    code, what, s->bucket);
	}
	if (strcmp(code, "NoSuchBucket") == 0) {
		return rz_err_set(err, RZ_ENOTFOUND, "s3: bucket '%s' does not exist at %s",
		                  s->bucket, o);
	}
	if (r->status == 404 && key != NULL) {
		return rz_err_set(err, RZ_ENOTFOUND, "s3: no object '%s' in s3://%s/%s", key,
		                  s->bucket, s->prefix);
	}
	if (strcmp(code, "PermanentRedirect") == 0 ||
	    strcmp(code, "AuthorizationHeaderMalformed") == 0 || r->status == 301) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "s3: bucket '%s' is not in region '%s' (%ld %s): set 'region'",
		                  s->bucket, s->region, r->status, code);
	}
	return rz_err_set(err, -EIO, "s3: %s: HTTP %ld%s%s%s%s", what, r->status,
	                  code[0] != '\0' ? " " : "", code, msg[0] != '\0' ? ": " : "", msg);
}

int rz__s3_put(const rz__s3_t *s, const char *key, const char *path, rz_err_t *err)
{
	struct req r;
	struct stat st;
	int rc;

	req_init(&r, s, "PUT", RZ__S3_ERROR_MAX);
	if (rz__s3_url(s, key, NULL, r.url, sizeof(r.url)) < 0) {
		return rz_err_set(err, REZUS_ETOOBIG, "s3: the URL of '%s' is too long", key);
	}
	r.in = open(path, O_RDONLY | O_CLOEXEC);
	if (r.in < 0) {
		return rz_err_set(err, -errno, "s3: cannot open '%s': %s", path, strerror(errno));
	}
	if (fstat(r.in, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = rz_err_set(err, REZUS_EINVALID, "s3: '%s' is not a regular file", path);
	} else if ((uint64_t)st.st_size > RZ__S3_PUT_MAX) {
		rc = rz_err_set(err, REZUS_ETOOBIG,
		                "s3: '%s' is over 5 GiB, S3's limit for one PUT", path);
	} else if (perform(&r, (uint64_t)st.st_size) < 0) {
		rc = no_answer(&r, "put", path, err);
	} else {
		rc = r.status == 200 ? 0 : refused(&r, "put", NULL, err);
	}
	close(r.in);
	free(r.body);
	return rc;
}

int rz__s3_get(const rz__s3_t *s, const char *key, const char *path, rz_err_t *err)
{
	char tmp[PATH_MAX];
	struct req r;
	int rc;

	req_init(&r, s, "GET", RZ__S3_ERROR_MAX);
	if (rz__s3_url(s, key, NULL, r.url, sizeof(r.url)) < 0) {
		return rz_err_set(err, REZUS_ETOOBIG, "s3: the URL of '%s' is too long", key);
	}
	rc = rz__offsite_tmp(path, tmp, sizeof(tmp), &r.out, err);
	if (rc < 0) {
		return rc;
	}
	if (perform(&r, 0) < 0) {
		rc = no_answer(&r, "get", path, err);
	} else if (r.status != 200) {
		rc = refused(&r, "get", key, err);
	}
	if (rc == 0) {
		rc = rz__offsite_commit(r.out, tmp, path, "s3", err);
	} else {
		rz__offsite_discard(r.out, tmp);
	}
	free(r.body);
	return rc;
}

int rz__s3_delete(const rz__s3_t *s, const char *key, rz_err_t *err)
{
	char code[64], msg[16];
	struct req r;
	int rc = 0;

	req_init(&r, s, "DELETE", RZ__S3_ERROR_MAX);
	if (rz__s3_url(s, key, NULL, r.url, sizeof(r.url)) < 0) {
		return rz_err_set(err, REZUS_ETOOBIG, "s3: the URL of '%s' is too long", key);
	}
	if (perform(&r, 0) < 0) {
		rc = no_answer(&r, "delete", key, err);
	} else if (r.status != 200 && r.status != 204) {
		rz__s3_parse_error(r.body != NULL ? r.body : "", r.len, code, sizeof(code), msg,
		                   sizeof(msg));
		/* absent is not an error (S3 itself answers 204 for it) */
		rc = r.status == 404 && strcmp(code, "NoSuchBucket") != 0
		         ? 0
		         : refused(&r, "delete", NULL, err);
	}
	free(r.body);
	return rc;
}

/* One page of the listing of full (the encoded prefix) after token ("" for the first). */
static int list_page(const rz__s3_t *s, const char *full, char *token, json_t *items, bool *more,
                     rz_err_t *err)
{
	char enc[3 * RZ__S3_TOKEN_MAX + 1], query[sizeof(enc) + 3 * 2 * RZ_TARGET_KEY_MAX + 96];
	char next[RZ__S3_TOKEN_MAX + 1];
	struct req r;
	int rc;

	req_init(&r, s, "GET", RZ__S3_PAGE_MAX);
	rz__s3_encode(token, false, enc, sizeof(enc));
	/* the query in SigV4's canonical order (sorted by name): libcurl signs it as it is */
	snprintf(query, sizeof(query), "%s%s%slist-type=2&max-keys=" PAGE_KEYS "%s%s",
	         token[0] != '\0' ? "continuation-token=" : "", enc, token[0] != '\0' ? "&" : "",
	         full[0] != '\0' ? "&prefix=" : "", full);
	if (rz__s3_url(s, NULL, query, r.url, sizeof(r.url)) < 0) {
		return rz_err_set(err, REZUS_ETOOBIG, "s3: the listing's URL is too long");
	}
	if (perform(&r, 0) < 0) {
		rc = no_answer(&r, "list", "", err);
	} else if (r.status != 200) {
		rc = refused(&r, "list", NULL, err);
	} else if (r.over) {
		rc = rz_err_set(err, REZUS_ETOOBIG, "s3: a page of the listing is over %u bytes",
		                RZ__S3_PAGE_MAX);
	} else {
		rc = rz__s3_parse_list(r.body != NULL ? r.body : "", r.len, s->prefix, items, more,
		                       next, sizeof(next), err);
	}
	free(r.body);
	if (rc == 0 && *more && strcmp(next, token) == 0) {
		rc = rz_err_set(err, RZ_EPARSE,
		                "s3: the listing gave the same continuation token twice");
	}
	if (rc == 0) {
		snprintf(token, RZ__S3_TOKEN_MAX + 1, "%s", next);
	}
	return rc;
}

int rz__s3_list(const rz__s3_t *s, const char *prefix, json_t *items, rz_err_t *err)
{
	char full[sizeof(s->prefix) + RZ_TARGET_KEY_MAX + 1], enc[3 * sizeof(full)];
	char token[RZ__S3_TOKEN_MAX + 1] = "";
	bool more = true;
	int rc = 0;

	snprintf(full, sizeof(full), "%s%s", s->prefix, prefix);
	rz__s3_encode(full, false, enc, sizeof(enc));
	for (int page = 0; rc == 0 && more; page++) {
		if (page == PAGES_MAX) {
			return rz_err_set(err, REZUS_ETOOBIG, "s3: the listing goes past %d pages",
			                  PAGES_MAX);
		}
		rc = list_page(s, enc, token, items, &more, err);
	}
	return rc;
}
