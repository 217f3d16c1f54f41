/* cli/oidc.c - login --oidc: single sign-on by the loopback redirect or the device grant. */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/rezusctl.h"
#include "core/base/exec.h"

#define ANSWER_MAX   (256 * 1024) /* a provider's answer */
#define HEAD_MAX     8192         /* a callback's request head */
#define READ_S       10           /* to read one callback's request */
#define FETCH_S      30           /* one request to the provider */
#define TIMEOUT_S    300          /* the sign-in, unless --timeout */
#define TEXT_LEN     64           /* 32 random bytes as base64url (43) and its NUL, rounded */
#define DEVICE_GRANT "urn:ietf:params:oauth:grant-type:device_code"

/* What a step returns besides RZC_OK and RZC_ERR. */
enum {
	WAIT_ON = -1, /* a callback refused: the wait goes on */
	REFUSED = -2, /* the token endpoint answered an OAuth error */
};

/* What the server and its provider's discovery document say: borrowed from info and disc. */
typedef struct sso {
	json_t *info, *disc;
	const char *issuer, *client_id, *scopes;
	const char *authorize, *token, *device; /* device: NULL when not offered */
} sso_t;

/* One loopback sign-in: its secrets (verifier) and what binds the answer to it. */
typedef struct signin {
	char verifier[TEXT_LEN], challenge[TEXT_LEN], state[TEXT_LEN], nonce[TEXT_LEN];
	char redirect[TEXT_LEN];
	time_t deadline;
} signin_t;

/* ------------------------------------------------------------------ small helpers */

/* An issuer or endpoint rezusctl talks to: https://, or http:// to a loopback host (a
 * provider a test starts), as the daemon allows; no blanks, no credentials. */
static bool provider_url(const char *u)
{
	static const char *const loop[] = { "http://127.0.0.1", "http://localhost",
		                            "http://[::1]" };
	bool ok = u != NULL && strlen(u) > 8 && strncmp(u, "https://", 8) == 0;

	for (size_t i = 0; u != NULL && !ok && i < sizeof(loop) / sizeof(loop[0]); i++) {
		size_t n = strlen(loop[i]);
		ok = strncmp(u, loop[i], n) == 0 && (u[n] == ':' || u[n] == '/' || u[n] == '\0');
	}
	return ok && strlen(u) <= 2048 && strpbrk(u, " \t\r\n@") == NULL;
}

/* s with anything unprintable as '?': text from elsewhere, fit for a terminal. */
static const char *shown(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s != NULL && s[i] != '\0' && i + 1 < size; i++) {
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	}
	buf[i] = '\0';
	return buf;
}

/* 32 random bytes as base64url without padding. */
static void random_text(char out[TEXT_LEN])
{
	unsigned char b[32];

	randombytes_buf(b, sizeof(b));
	sodium_bin2base64(out, TEXT_LEN, b, sizeof(b), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(b, sizeof(b));
}

/* The PKCE challenge of a verifier: base64url(SHA-256(verifier)) (S256). */
static void s256(const char *verifier, char out[TEXT_LEN])
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)verifier, strlen(verifier));
	sodium_bin2base64(out, TEXT_LEN, h, sizeof(h), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static void wipe_free(char *s)
{
	if (s != NULL) {
		sodium_memzero(s, strlen(s));
		free(s);
	}
}

/* "k1=v1&k2=v2..." from NULL-ended pairs, the values percent-encoded; the caller wipes and
 * frees it (it may hold a code or a verifier). NULL when out of memory. */
static char *form(const char *key, ...)
{
	va_list ap;
	char *out = strdup(""), *next;
	const char *k = key;

	va_start(ap, key);
	while (k != NULL && out != NULL) {
		char *v = rzc_escape(va_arg(ap, const char *));
		next = NULL;
		if (v == NULL || asprintf(&next, "%s%s%s=%s", out, out[0] ? "&" : "", k, v) < 0) {
			next = NULL;
		}
		wipe_free(v);
		wipe_free(out);
		out = next;
		k = va_arg(ap, const char *);
	}
	va_end(ap);
	return out;
}

/* A JSON answer of the provider's (any status), or NULL with why filled. The answer's
 * bytes are wiped: it may hold tokens. */
static json_t *provider_json(const char *url, const char *body, long *code, char *why, size_t size)
{
	rzc_resp_t r;
	json_t *j;

	if (rzc_request_url(url, body, ANSWER_MAX, FETCH_S, &r, why, size) != 0) {
		return NULL;
	}
	*code = r.code;
	j = json_loadb(r.body, r.len, 0, NULL);
	sodium_memzero(r.body, r.len);
	rzc_resp_free(&r);
	if (!json_is_object(j)) {
		snprintf(why, size, "the provider answered %ld without a JSON object", *code);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* A string member of j, wiped in place (before j is released). */
static void wipe_member(json_t *j, const char *key)
{
	const char *v = json_string_value(json_object_get(j, key));

	if (v != NULL) {
		sodium_memzero((char *)v, strlen(v));
	}
}

/* ------------------------------------------------------------------ the server, the provider */

/* GET /api/v1/auth/oidc: the issuer, the CLI's client id and the scopes. */
static int server_info(rzc_t *c, sso_t *s)
{
	rzc_resp_t r;
	json_t *st;

	if (rzc_request(c, "GET", "/api/v1/auth/oidc", NULL, NULL, 0, &r) != 0) {
		return RZC_ERR;
	}
	if (r.code == 404) {
		st = json_loadb(r.body, r.len, 0, NULL);
		fprintf(stderr, "error: the server at %s offers no single sign-on%s%s\n", c->server,
		        json_string_value(json_object_get(st, "message")) ? ": " : "",
		        json_string_value(json_object_get(st, "message"))
		            ? json_string_value(json_object_get(st, "message"))
		            : "");
		json_decref(st);
		rzc_resp_free(&r);
		return RZC_ERR;
	}
	if (r.code != 200) {
		rzc_print_status(&r);
		rzc_resp_free(&r);
		return RZC_ERR;
	}
	s->info = json_loadb(r.body, r.len, 0, NULL);
	rzc_resp_free(&r);
	s->issuer = json_string_value(json_object_get(s->info, "issuer"));
	s->client_id = json_string_value(json_object_get(s->info, "clientID"));
	s->scopes = json_string_value(json_object_get(s->info, "scopes"));
	if (s->issuer == NULL || s->client_id == NULL || s->client_id[0] == '\0' ||
	    s->scopes == NULL) {
		return rzc_fail("the server's /api/v1/auth/oidc names no issuer, client id or "
		                "scopes");
	}
	if (!provider_url(s->issuer)) {
		return rzc_fail("the issuer %s is not https:// (nor http:// to a loopback address)",
		                s->issuer);
	}
	return RZC_OK;
}

/* The issuer's discovery document: its endpoints, each checked as the issuer. */
static int discover(sso_t *s)
{
	char url[2200], why[256];
	size_t n = strlen(s->issuer);
	const char *iss;
	long code = 0;

	n -= n > 0 && s->issuer[n - 1] == '/';
	snprintf(url, sizeof(url), "%.*s/.well-known/openid-configuration", (int)n, s->issuer);
	if ((s->disc = provider_json(url, NULL, &code, why, sizeof(why))) != NULL && code != 200) {
		snprintf(why, sizeof(why), "it answered %ld", code);
	}
	if (s->disc == NULL || code != 200) {
		return rzc_fail("cannot read the provider's discovery document %s: %s", url, why);
	}
	iss = json_string_value(json_object_get(s->disc, "issuer"));
	s->authorize = json_string_value(json_object_get(s->disc, "authorization_endpoint"));
	s->token = json_string_value(json_object_get(s->disc, "token_endpoint"));
	s->device = json_string_value(json_object_get(s->disc, "device_authorization_endpoint"));
	if (iss == NULL || strcmp(iss, s->issuer) != 0) {
		return rzc_fail("the discovery document at %s names another issuer", url);
	}
	if (!provider_url(s->authorize) || !provider_url(s->token) ||
	    (s->device != NULL && !provider_url(s->device))) {
		return rzc_fail("the discovery document at %s lacks an endpoint, or names one "
		                "that is not https://",
		                url);
	}
	return RZC_OK;
}

/* POST to the token endpoint: RZC_OK with *id_token (the caller wipes and frees it),
 * REFUSED with the provider's OAuth error code in oauth (and its description in desc),
 * RZC_ERR after a message when the provider could not be asked. */
static int redeem(const sso_t *s, const char *body, char **id_token, char *oauth, size_t osize,
                  char *desc, size_t dsize)
{
	char why[256];
	long code = 0;
	json_t *j = provider_json(s->token, body, &code, why, sizeof(why));
	const char *t = json_string_value(json_object_get(j, "id_token"));
	const char *e = json_string_value(json_object_get(j, "error"));

	*id_token = NULL;
	if (j == NULL) {
		return rzc_fail("the provider's token endpoint: %s", why);
	}
	if (code == 200 && t != NULL) {
		*id_token = strdup(t);
	} else {
		shown(e ? e : "no ID token", oauth, osize);
		shown(json_string_value(json_object_get(j, "error_description")), desc, dsize);
	}
	wipe_member(j, "id_token");
	wipe_member(j, "access_token");
	wipe_member(j, "refresh_token");
	json_decref(j);
	return *id_token != NULL ? RZC_OK : REFUSED;
}

/* POST /api/v1/auth/oidc/token: a session for the ID token, then kept as a password
 * login keeps its. */
static int exchange(rzc_t *c, const char *id_token, const char *nonce)
{
	json_t *body = nonce != NULL ? json_pack("{s:s, s:s}", "idToken", id_token, "nonce", nonce)
	                             : json_pack("{s:s}", "idToken", id_token);
	json_t *out = NULL;
	const char *session, *user;
	int rc;

	free(c->token);
	c->token = NULL;
	rc = rzc_json(c, "POST", "/api/v1/auth/oidc/token", body, &out);
	wipe_member(body, "idToken");
	json_decref(body);
	if (rc != RZC_OK) {
		return rc;
	}
	session = json_string_value(json_object_get(out, "token"));
	user = json_string_value(json_object_get(json_object_get(out, "user"), "name"));
	if (session == NULL || user == NULL) {
		rc = rzc_fail("the server's answer to the sign-in holds no session");
	} else if ((c->token = strdup(session)) == NULL) {
		rc = rzc_fail("out of memory");
	} else {
		rc = rzc_login_keep(c, user);
		wipe_free(c->token); /* the session ended; the context holds the API token */
		c->token = NULL;
	}
	wipe_member(out, "token");
	json_decref(out);
	return rc;
}

/* ------------------------------------------------------------------ a browser */

/* A browser to open: a display and xdg-open. */
static bool have_browser(void)
{
	const char *x = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
	char path[4096];

	return ((x != NULL && x[0] != '\0') || (w != NULL && w[0] != '\0')) &&
	       rz_exec_which("xdg-open", getenv("PATH"), path, sizeof(path)) == 0;
}

/* xdg-open url, detached (it may wait for the browser), its output to /dev/null. */
static void open_browser(const char *url)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		if (fork() == 0) {
			execlp("xdg-open", "xdg-open", url, (char *)NULL);
		}
		_exit(0);
	}
	if (pid > 0) {
		waitpid(pid, NULL, 0);
	}
}

/* ------------------------------------------------------------------ the loopback redirect */

/* Listen on 127.0.0.1:port (0: any free one); the redirect URI names the port. */
static int listen_loopback(long port, int *fd, signin_t *si)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t len = sizeof(a);
	int one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(*fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(*fd, 8) != 0 ||
	    getsockname(*fd, (struct sockaddr *)&a, &len) != 0) {
		return rzc_fail("cannot listen on 127.0.0.1:%ld for the provider's redirect: %s",
		                port, strerror(errno));
	}
	snprintf(si->redirect, sizeof(si->redirect), "http://127.0.0.1:%u/callback",
	         (unsigned)ntohs(a.sin_port));
	return RZC_OK;
}

/* The request head on fd, up to its blank line, in buf: 0, or -1 when it is too long,
 * slow (READ_S, or past the deadline) or cut. */
static int read_head(int fd, char *buf, size_t size, time_t deadline)
{
	size_t n = 0;
	time_t until = time(NULL) + READ_S < deadline ? time(NULL) + READ_S : deadline;

	buf[0] = '\0';
	while (strstr(buf, "\r\n\r\n") == NULL) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = (long)(until - time(NULL));
		ssize_t got;
		if (n + 1 >= size || left <= 0 || poll(&p, 1, (int)(left * 1000)) <= 0 ||
		    (got = recv(fd, buf + n, size - n - 1, 0)) <= 0) {
			return -1;
		}
		n += (size_t)got;
		buf[n] = '\0';
	}
	return 0;
}

/* The query parameter name's value, percent-decoded ("+" a blank), in out; "" when absent
 * or longer than out. */
static void param(const char *query, const char *name, char *out, size_t size)
{
	size_t len = strlen(name), o = 0;

	out[0] = '\0';
	for (const char *p = query; p != NULL && *p != '\0';
	     p = strchr(p, '&'), p = p ? p + 1 : p) {
		if (strncmp(p, name, len) != 0 || p[len] != '=') {
			continue;
		}
		for (p += len + 1; *p != '\0' && *p != '&' && o + 1 < size; p++) {
			char hex[3] = { p[0] == '%' ? p[1] : 0, p[1] != 0 ? p[2] : 0, 0 };
			if (isxdigit((unsigned char)hex[0]) && isxdigit((unsigned char)hex[1]) &&
			    strtol(hex, NULL, 16) != 0) {
				out[o++] = (char)strtol(hex, NULL, 16);
				p += 2;
			} else {
				out[o++] = *p == '+' ? ' ' : *p;
			}
		}
		out[o] = '\0';
		if (*p != '\0' && *p != '&') {
			out[0] = '\0'; /* too long: taken as absent */
		}
		return;
	}
}

/* A small page to the browser, the connection closed after it. text is ours or checked. */
static void page(int fd, int status, const char *text)
{
	char head[512], body[1024];
	int n = snprintf(body, sizeof(body),
	                 "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
	                 "<title>rezusctl</title></head><body><p>%s</p></body></html>\n",
	                 text);
	int h = snprintf(head, sizeof(head),
	                 "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
	                 "Content-Length: %d\r\nCache-Control: no-store\r\n"
	                 "Referrer-Policy: no-referrer\r\n"
	                 "Content-Security-Policy: default-src 'none'\r\nConnection: close\r\n\r\n",
	                 status,
	                 status == 200   ? "OK"
	                 : status == 404 ? "Not Found"
	                 : status == 405 ? "Method Not Allowed"
	                                 : "Bad Request",
	                 n);

	send(fd, head, (size_t)h, MSG_NOSIGNAL);
	send(fd, body, (size_t)n, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
}

/* An OAuth error code fit for a page: its letters, digits and '_', else "error". */
static const char *error_code(const char *e)
{
	return e[0] != '\0' && strspn(e, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(e)
	           ? e
	           : "error";
}

/* One request on the loopback: RZC_OK with the code, WAIT_ON when it was refused and the
 * wait goes on, RZC_ERR when the sign-in ended in an error (said on stderr). */
static int callback(int fd, const sso_t *s, const signin_t *si, char *code, size_t size)
{
	char head[HEAD_MAX], state[TEXT_LEN + 1], err[128], desc[256], iss[512], text[256];
	char *target, *end;

	if (read_head(fd, head, sizeof(head), si->deadline) != 0) {
		return WAIT_ON;
	}
	if (strncmp(head, "GET ", 4) != 0) {
		page(fd, 405, "rezusctl waits for the provider's redirect only.");
		return WAIT_ON;
	}
	target = head + 4;
	end = strpbrk(target, " \r\n");
	*end = '\0';
	if (strncmp(target, "/callback?", 10) != 0) {
		page(fd, 404, "Not found.");
		return WAIT_ON;
	}
	param(target + 10, "state", state, sizeof(state));
	if (strlen(state) != strlen(si->state) ||
	    sodium_memcmp(state, si->state, strlen(si->state)) != 0) {
		page(fd, 400, "This sign-in was not begun by this rezusctl (its state differs).");
		fprintf(stderr, "warning: refused a callback whose state is not this sign-in's; "
		                "still waiting\n");
		return WAIT_ON;
	}
	param(target + 10, "iss", iss, sizeof(iss));
	param(target + 10, "error", err, sizeof(err));
	param(target + 10, "error_description", desc, sizeof(desc));
	param(target + 10, "code", code, size);
	if (iss[0] != '\0' && strcmp(iss, s->issuer) != 0) {
		page(fd, 400, "The answer comes from another issuer: refused.");
		return rzc_fail("the provider's answer names another issuer: refused");
	}
	if (err[0] != '\0' || code[0] == '\0') {
		snprintf(text, sizeof(text), "The provider refused the sign-in: %s.",
		         error_code(err[0] ? err : "no_code"));
		page(fd, 400, text);
		return rzc_fail("the provider refused the sign-in: %s%s%s%s",
		                shown(err[0] ? err : "no code in its answer", text, sizeof(text)),
		                desc[0] ? " (" : "", shown(desc, desc, sizeof(desc)),
		                desc[0] ? ")" : "");
	}
	page(fd, 200, "Signed in. You can close this tab and go back to rezusctl.");
	return RZC_OK;
}

/* Requests on the listening socket until one brings the code or the deadline passes. */
static int await_code(int lfd, const sso_t *s, const signin_t *si, char *code, size_t size)
{
	int rc = WAIT_ON;

	while (rc == WAIT_ON) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		long left = (long)(si->deadline - time(NULL));
		int fd;
		if (left <= 0) {
			return rzc_fail("no sign-in within the time allowed (--timeout)");
		}
		if (poll(&p, 1, (int)(left > 60 ? 60000 : left * 1000)) <= 0) {
			continue;
		}
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0) {
			continue;
		}
		rc = callback(fd, s, si, code, size);
		close(fd);
	}
	return rc;
}

/* The authorization URL of a sign-in (caller frees). */
static char *authorize_url(const sso_t *s, const signin_t *si)
{
	char *q = form("response_type", "code", "client_id", s->client_id, "redirect_uri",
	               si->redirect, "scope", s->scopes, "state", si->state, "nonce", si->nonce,
	               "code_challenge", si->challenge, "code_challenge_method", "S256", NULL);
	char *url = NULL;

	if (q != NULL &&
	    asprintf(&url, "%s%s%s", s->authorize, strchr(s->authorize, '?') ? "&" : "?", q) < 0) {
		url = NULL;
	}
	free(q);
	return url;
}

/* The authorization code flow with PKCE through a redirect to 127.0.0.1. */
static int loopback(rzc_t *c, const sso_t *s, signin_t *si, char **id_token)
{
	char code[4096], oauth[128], desc[256], *url = NULL, *body = NULL;
	int fd = -1, rc;

	random_text(si->verifier);
	random_text(si->state);
	random_text(si->nonce);
	s256(si->verifier, si->challenge);
	if ((rc = listen_loopback(c->listen_port, &fd, si)) != RZC_OK) {
		goto out;
	}
	if ((url = authorize_url(s, si)) == NULL) {
		rc = rzc_fail("out of memory");
		goto out;
	}
	fprintf(stderr, "Open this URL to sign in: %s\n", url);
	if (!c->no_browser && have_browser()) {
		open_browser(url);
	}
	rc = await_code(fd, s, si, code, sizeof(code));
	close(fd);
	fd = -1;
	if (rc != RZC_OK) {
		goto out;
	}
	body = form("grant_type", "authorization_code", "code", code, "redirect_uri", si->redirect,
	            "client_id", s->client_id, "code_verifier", si->verifier, NULL);
	sodium_memzero(code, sizeof(code));
	rc = body == NULL ? rzc_fail("out of memory")
	                  : redeem(s, body, id_token, oauth, sizeof(oauth), desc, sizeof(desc));
	if (rc == REFUSED) {
		rc = rzc_fail("the provider did not take the code: %s%s%s%s", oauth,
		              desc[0] ? " (" : "", desc, desc[0] ? ")" : "");
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	wipe_free(body);
	free(url);
	sodium_memzero(si->verifier, sizeof(si->verifier));
	return rc;
}

/* ------------------------------------------------------------------ the device grant */

/* Ask the token endpoint until the person signs in, refuses, or time runs out. */
static int poll_device(const sso_t *s, const char *body, long interval, time_t deadline,
                       char **id_token)
{
	char oauth[128], desc[256];
	int rc;

	for (;;) {
		if (time(NULL) + interval > deadline) {
			return rzc_fail("no sign-in within the time allowed (the code expired, or "
			                "--timeout)");
		}
		sleep((unsigned)interval);
		rc = redeem(s, body, id_token, oauth, sizeof(oauth), desc, sizeof(desc));
		if (rc != REFUSED) {
			return rc;
		}
		if (strcmp(oauth, "authorization_pending") == 0) {
			continue;
		}
		if (strcmp(oauth, "slow_down") == 0) {
			interval += 5;
			continue;
		}
		if (strcmp(oauth, "access_denied") == 0) {
			return rzc_fail("the sign-in was refused at the provider (access_denied)");
		}
		if (strcmp(oauth, "expired_token") == 0) {
			return rzc_fail("the code expired before the sign-in: run login again");
		}
		return rzc_fail("the provider refused the sign-in: %s%s%s%s", oauth,
		                desc[0] ? " (" : "", desc, desc[0] ? ")" : "");
	}
}

/* The device authorization grant (RFC 8628): a code to enter at the provider, elsewhere. */
static int device(rzc_t *c, const sso_t *s, char **id_token)
{
	char why[256], a[2100], b[2100], u[64];
	char *req = form("client_id", s->client_id, "scope", s->scopes, NULL), *body = NULL;
	long code = 0, interval, expires;
	json_t *j = req ? provider_json(s->device, req, &code, why, sizeof(why)) : NULL;
	const char *dc = json_string_value(json_object_get(j, "device_code"));
	const char *uc = json_string_value(json_object_get(j, "user_code"));
	const char *uri = json_string_value(json_object_get(j, "verification_uri"));
	const char *full = json_string_value(json_object_get(j, "verification_uri_complete"));
	int rc;

	free(req);
	if (j != NULL && json_string_value(json_object_get(j, "error")) != NULL) {
		shown(json_string_value(json_object_get(j, "error")), why, sizeof(why));
	} else if (j != NULL) {
		snprintf(why, sizeof(why), "no device code, user code or verification URI");
	}
	if (j == NULL || code != 200 || dc == NULL || uc == NULL || !provider_url(uri)) {
		rc = rzc_fail("the provider's device authorization endpoint: %s", why);
		goto out;
	}
	interval = json_integer_value(json_object_get(j, "interval"));
	interval = interval > 0 && interval <= 60 ? interval : 5;
	expires = json_integer_value(json_object_get(j, "expires_in"));
	expires = expires > 0 && expires < c->timeout ? expires : c->timeout;
	fprintf(stderr, "To sign in, open %s and enter the code %s\n", shown(uri, a, sizeof(a)),
	        shown(uc, u, sizeof(u)));
	if (provider_url(full)) {
		fprintf(stderr, "(or open %s)\n", shown(full, b, sizeof(b)));
	}
	if (!c->no_browser && have_browser()) {
		open_browser(provider_url(full) ? full : uri);
	}
	body = form("grant_type", DEVICE_GRANT, "device_code", dc, "client_id", s->client_id, NULL);
	rc = body == NULL ? rzc_fail("out of memory")
	                  : poll_device(s, body, interval, time(NULL) + expires, id_token);
out:
	wipe_free(body);
	wipe_member(j, "device_code");
	json_decref(j);
	return rc;
}

/* ------------------------------------------------------------------ login --oidc */

int rzc_login_oidc(rzc_t *c)
{
	sso_t s = { 0 };
	signin_t si = { 0 };
	char *id_token = NULL;
	bool by_device = c->device;
	int rc;

	c->timeout = c->timeout > 0 ? c->timeout : TIMEOUT_S;
	if (sodium_init() < 0) {
		return rzc_fail("cannot set up libsodium (random numbers)");
	}
	if ((rc = server_info(c, &s)) != RZC_OK || (rc = discover(&s)) != RZC_OK) {
		goto out;
	}
	if (by_device && s.device == NULL) {
		rc = rzc_fail("the provider offers no device authorization grant (its discovery "
		              "document names no device_authorization_endpoint)");
		goto out;
	}
	if (!by_device && !c->no_browser && s.device != NULL && !have_browser()) {
		fprintf(stderr, "No browser here: signing in with a code instead "
		                "(--no-browser keeps the loopback redirect)\n");
		by_device = true;
	}
	si.deadline = time(NULL) + c->timeout;
	rc = by_device ? device(c, &s, &id_token) : loopback(c, &s, &si, &id_token);
	if (rc == RZC_OK) {
		rc = exchange(c, id_token, by_device ? NULL : si.nonce);
	}
out:
	wipe_free(id_token);
	json_decref(s.info);
	json_decref(s.disc);
	return rc;
}
