/* cli/http.c - requests to the server through libcurl. */
#include <config.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/rezusctl.h"

/* The file or object an error is about, put before rzc_fail's and rzc_print_status's
 * messages; NULL for none. */
const char *rzc_err_where;

struct buf {
	char *p;
	size_t len;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t add = size * n;
	char *p = realloc(b->p, b->len + add + 1);

	if (p == NULL) {
		return 0;
	}
	memcpy(p + b->len, data, add);
	b->p = p;
	b->len += add;
	b->p[b->len] = '\0';
	return add;
}

static CURL *handle(rzc_t *c, const char *path, struct curl_slist **headers)
{
	CURL *h = curl_easy_init();
	char *url = NULL;

	if (h == NULL) {
		return NULL;
	}
	if (asprintf(&url, "%s%s", c->server, path) < 0) {
		curl_easy_cleanup(h);
		return NULL;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "rezusctl/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->ca_file != NULL && c->ca_file[0] != '\0') {
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	}
	if (c->token != NULL && c->token[0] != '\0') {
		char *auth = NULL;
		if (asprintf(&auth, "Authorization: Bearer %s", c->token) > 0) {
			*headers = curl_slist_append(*headers, auth);
			free(auth);
		}
	}
	return h;
}

/* One line: the server is not there, or TLS failed. */
static void unreachable(rzc_t *c, CURLcode rc, const char *detail)
{
	if (c->quiet) {
		return;
	}
	fprintf(stderr, "error: cannot reach the server at %s: %s\n", c->server,
	        detail[0] ? detail : curl_easy_strerror(rc));
}

/* The last request was a login (whose 401 is a wrong password, not a stale token). */
static bool last_was_login;

int rzc_request(rzc_t *c, const char *method, const char *path, const char *ctype, const char *body,
                size_t len, rzc_resp_t *r)
{
	struct curl_slist *headers = NULL;
	struct buf b = { NULL, 0 };
	char errbuf[CURL_ERROR_SIZE] = "", *ct = NULL;
	CURL *h = handle(c, path, &headers);
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	last_was_login =
	    strcmp(path, "/api/v1/auth/login") == 0 || strcmp(path, "/api/v1/auth/oidc/token") == 0;
	if (h == NULL) {
		fprintf(stderr, "error: out of memory\n");
		return -1;
	}
	if (ctype != NULL) {
		char *line = NULL;
		if (asprintf(&line, "Content-Type: %s", ctype) > 0) {
			headers = curl_slist_append(headers, line);
			free(line);
		}
	}
	headers = curl_slist_append(headers, "Accept: application/json");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
	rc = curl_easy_perform(h);
	curl_slist_free_all(headers);
	if (rc != CURLE_OK) {
		unreachable(c, rc, errbuf);
		free(b.p);
		curl_easy_cleanup(h);
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	r->ctype = ct ? strdup(ct) : NULL;
	r->body = b.p ? b.p : strdup("");
	r->len = b.len;
	curl_easy_cleanup(h);
	return 0;
}

/* An answer kept up to its cap: more fails the transfer. */
struct capped {
	struct buf b;
	size_t max;
	bool over;
};

static size_t on_capped(char *data, size_t size, size_t n, void *arg)
{
	struct capped *c = arg;

	if (c->b.len + size * n > c->max) {
		c->over = true;
		return 0;
	}
	return on_body(data, size, n, &c->b);
}

int rzc_request_url(const char *url, const char *form, size_t max, long timeout, rzc_resp_t *r,
                    char *why, size_t size)
{
	struct curl_slist *headers = NULL;
	struct capped cap = { { NULL, 0 }, max, false };
	char errbuf[CURL_ERROR_SIZE] = "", *ct = NULL;
	CURL *h = curl_easy_init();
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (h == NULL) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	headers = curl_slist_append(headers, "Accept: application/json");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "rezusctl/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	if (form != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, form);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(form));
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_capped);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &cap);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	rc = curl_easy_perform(h);
	curl_slist_free_all(headers);
	if (rc != CURLE_OK) {
		snprintf(why, size, "%s",
		         cap.over ? "the answer is too large"
		                  : (errbuf[0] ? errbuf : curl_easy_strerror(rc)));
		free(cap.b.p);
		curl_easy_cleanup(h);
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	r->ctype = ct ? strdup(ct) : NULL;
	r->body = cap.b.p ? cap.b.p : strdup("");
	r->len = cap.b.len;
	curl_easy_cleanup(h);
	return 0;
}

void rzc_resp_free(rzc_resp_t *r)
{
	free(r->body);
	free(r->ctype);
	memset(r, 0, sizeof(*r));
}

struct stream {
	int (*fn)(const char *line, void *arg);
	void *arg;
	int stopped;
	struct buf pending; /* the start of a line not yet complete */
};

/* Pieces as they arrive, handed on a whole line at a time (without the newline). */
static size_t on_piece(char *data, size_t size, size_t n, void *arg)
{
	struct stream *s = arg;
	char *nl, *line;

	if (on_body(data, size, n, &s->pending) != size * n) {
		return 0;
	}
	line = s->pending.p;
	while ((nl = memchr(line, '\n', s->pending.len - (size_t)(line - s->pending.p))) != NULL) {
		*nl = '\0';
		if (s->fn(line, s->arg) != 0) {
			s->stopped = 1;
			return 0;
		}
		line = nl + 1;
	}
	s->pending.len -= (size_t)(line - s->pending.p);
	memmove(s->pending.p, line, s->pending.len + 1);
	return size * n;
}

int rzc_stream(rzc_t *c, const char *path, const char *accept,
               int (*fn)(const char *line, void *arg), void *arg, long *code)
{
	struct curl_slist *headers = NULL;
	struct stream s = { fn, arg, 0, { NULL, 0 } };
	char errbuf[CURL_ERROR_SIZE] = "", *line = NULL;
	CURL *h = handle(c, path, &headers);
	CURLcode rc;

	*code = 0;
	last_was_login = false;
	if (h == NULL) {
		return -1;
	}
	if (asprintf(&line, "Accept: %s", accept) > 0) {
		headers = curl_slist_append(headers, line);
		free(line);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_piece);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	rc = curl_easy_perform(h);
	curl_slist_free_all(headers);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
	curl_easy_cleanup(h);
	free(s.pending.p);
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && s.stopped)) {
		if (*code == 0) {
			unreachable(c, rc, errbuf);
		}
		return -1;
	}
	return 0;
}

void rzc_print_status(const rzc_resp_t *r)
{
	json_t *st = r->body ? json_loadb(r->body, r->len, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(st, "message"));
	json_t *causes = json_object_get(json_object_get(st, "details"), "causes"), *cause;
	size_t i;

	const char *where = rzc_err_where ? rzc_err_where : "", *sep = rzc_err_where ? ": " : "";

	if (msg != NULL) {
		fprintf(stderr, "error: %s%s%s\n", where, sep, msg);
	} else {
		fprintf(stderr, "error: %s%sthe server answered %ld%s%.*s\n", where, sep, r->code,
		        r->len ? ": " : "", (int)(r->len > 200 ? 200 : r->len),
		        r->body ? r->body : "");
	}
	json_array_foreach(causes, i, cause)
	{
		const char *cm = json_string_value(json_object_get(cause, "message"));
		if (msg == NULL || cm == NULL || strstr(msg, cm) == NULL ||
		    json_array_size(causes) > 1) {
			fprintf(stderr, "  %s: %s\n",
			        json_string_value(json_object_get(cause, "field")), cm ? cm : "");
		}
	}
	rzc_hint_login(r->code);
	json_decref(st);
}

void rzc_hint_login(long code)
{
	if (code == 401 && !last_was_login) {
		fprintf(stderr, "hint: the token is missing, expired or revoked: run `rezusctl "
		                "login`\n");
	}
}

int rzc_json(rzc_t *c, const char *method, const char *path, const json_t *in, json_t **out)
{
	char *body = in ? json_dumps(in, JSON_COMPACT) : NULL;
	rzc_resp_t r;
	int rc;

	if (out != NULL) {
		*out = NULL;
	}
	rc = rzc_request(c, method, path, in ? "application/json" : NULL, body,
	                 body ? strlen(body) : 0, &r);
	free(body);
	if (rc < 0) {
		return RZC_ERR;
	}
	if (r.code < 200 || r.code > 299) {
		rzc_print_status(&r);
		rzc_resp_free(&r);
		return RZC_ERR;
	}
	if (out != NULL) {
		*out = json_loadb(r.body, r.len, 0, NULL);
		if (*out == NULL) {
			*out = json_object();
		}
	}
	rzc_resp_free(&r);
	return RZC_OK;
}

char *rzc_escape(const char *s)
{
	char *e = curl_easy_escape(NULL, s, 0), *out = e ? strdup(e) : NULL;

	curl_free(e); /* libcurl's memory goes back to libcurl */
	return out;
}

char *rzc_path(const char *fmt, ...)
{
	va_list ap;
	char *out = NULL;

	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0) {
		out = NULL;
	}
	va_end(ap);
	return out;
}
