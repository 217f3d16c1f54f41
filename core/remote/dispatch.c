/* core/remote/dispatch.c - jobs, events and pools of remote dispatch (core/remote/dispatch.h). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/model/fields.h"
#include "core/remote/dispatch.h"
#include "core/remote/heartbeat.h"
#include "core/remote/nats.h"

static void event_mac_raw(const unsigned char key[RZ_DISPATCH_KEY_LEN], const char *subject,
                          const char *data, size_t len,
                          unsigned char out[crypto_auth_hmacsha256_BYTES])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, key, RZ_DISPATCH_KEY_LEN);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)subject, strlen(subject));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"\n", 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)data, len);
	crypto_auth_hmacsha256_final(&st, out);
}

void rz_dispatch_event_mac(const unsigned char key[RZ_DISPATCH_KEY_LEN], const char *subject,
                           const char *data, size_t len, char mac[RZ_DISPATCH_MAC_HEX])
{
	unsigned char raw[crypto_auth_hmacsha256_BYTES];

	event_mac_raw(key, subject, data, len, raw);
	sodium_bin2hex(mac, RZ_DISPATCH_MAC_HEX, raw, sizeof(raw));
}

bool rz_dispatch_event_mac_ok(const unsigned char key[RZ_DISPATCH_KEY_LEN], const char *subject,
                              const char *data, size_t len, const char *mac)
{
	unsigned char want[crypto_auth_hmacsha256_BYTES], got[crypto_auth_hmacsha256_BYTES];
	size_t n = 0;

	if (mac == NULL || strlen(mac) != 2 * sizeof(got) ||
	    sodium_hex2bin(got, sizeof(got), mac, strlen(mac), NULL, &n, NULL) != 0 ||
	    n != sizeof(got)) {
		return false;
	}
	event_mac_raw(key, subject, data, len, want);
	return sodium_memcmp(want, got, sizeof(got)) == 0;
}

static const char *const steps[] = { "init", "plan", "show", "apply" };

bool rz_dispatch_step_valid(const char *step)
{
	for (size_t i = 0; step != NULL && i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (strcmp(step, steps[i]) == 0) {
			return true;
		}
	}
	return false;
}

bool rz_dispatch_selector_check(const json_t *selector, char *why, size_t why_size)
{
	const char *key;
	json_t *v;
	char msg[160];

	if (selector == NULL || json_is_null(selector)) {
		return true;
	}
	if (!json_is_object(selector) || json_object_size(selector) > RZ_DISPATCH_SELECTOR_MAX) {
		snprintf(why, why_size, "not an object of at most %d labels",
		         RZ_DISPATCH_SELECTOR_MAX);
		return false;
	}
	json_object_foreach((json_t *)selector, key, v)
	{
		if (!rz_format_label_key(key, msg, sizeof(msg))) {
			snprintf(why, why_size, "key '%.64s': %s", key, msg);
			return false;
		}
		if (!json_is_string(v) ||
		    !rz_format_label_value(json_string_value(v), msg, sizeof(msg))) {
			snprintf(why, why_size, "%.64s: %s", key,
			         json_is_string(v) ? msg : "not a string");
			return false;
		}
	}
	return true;
}

/* Append s escaped; false when it does not fit. */
static bool put_escaped(char *buf, size_t size, size_t *n, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		             (c >= '0' && c <= '9') || c == '-';
		if (*n + (plain ? 1 : 3) >= size) {
			return false;
		}
		if (plain) {
			buf[(*n)++] = (char)c;
		} else {
			buf[(*n)++] = '%';
			buf[(*n)++] = hex[c >> 4];
			buf[(*n)++] = hex[c & 15];
		}
	}
	buf[*n] = '\0';
	return true;
}

static bool put_char(char *buf, size_t size, size_t *n, char c)
{
	if (*n + 1 >= size) {
		return false;
	}
	buf[(*n)++] = c;
	buf[*n] = '\0';
	return true;
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The token of the pairs keys[0..n) of obj (keys sorted). */
static bool token_of(const json_t *obj, const char **keys, size_t n, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0) {
		return false;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if ((i > 0 && !put_char(buf, size, &len, '+')) ||
		    !put_escaped(buf, size, &len, keys[i]) || !put_char(buf, size, &len, '_') ||
		    !put_escaped(buf, size, &len,
		                 json_string_value(json_object_get(obj, keys[i])) ?: "")) {
			return false;
		}
	}
	return true;
}

bool rz_dispatch_pool(const json_t *selector, char *buf, size_t size, char *why, size_t why_size)
{
	const char *keys[RZ_DISPATCH_SELECTOR_MAX], *key;
	size_t n = 0;
	json_t *v;

	if (!rz_dispatch_selector_check(selector, why, why_size)) {
		return false;
	}
	if (selector == NULL || !json_is_object(selector) || json_object_size(selector) == 0) {
		if (size <= strlen(RZ_DISPATCH_POOL_DEFAULT)) {
			snprintf(why, why_size, "no room for the pool's name");
			return false;
		}
		snprintf(buf, size, "%s", RZ_DISPATCH_POOL_DEFAULT);
		return true;
	}
	json_object_foreach((json_t *)selector, key, v)
	{
		keys[n++] = key;
	}
	qsort(keys, n, sizeof(keys[0]), key_cmp);
	if (!token_of(selector, keys, n, buf, size)) {
		snprintf(why, why_size, "the pool's name is longer than %zu bytes", size - 1);
		return false;
	}
	return true;
}

void rz_dispatch_durable(char *out, size_t size, const char *pool)
{
	snprintf(out, size, "pool-%s", pool);
	for (char *c = out; *c != '\0'; c++) {
		if (*c == '%' || *c == '+') {
			*c = *c == '%' ? '~' : '=';
		}
	}
}

json_t *rz_dispatch_permissions(const rz_nats_names_t *names, const char *name,
                                const json_t *labels, char *why, size_t why_size)
{
	json_t *pools = rz_dispatch_pools(labels, why, why_size), *p, *pub, *sub;
	char d[RZ_DISPATCH_POOL_MAX + 16], subject[RZ_DISPATCH_POOL_MAX + 128];
	size_t i;

	if (pools == NULL) {
		return NULL;
	}
#define ALLOW(a, ...)                                                                              \
	do {                                                                                       \
		snprintf(subject, sizeof(subject), __VA_ARGS__);                                   \
		json_array_append_new(a, json_string(subject));                                    \
	} while (0)
	pub = json_array();
	sub = json_array();
	ALLOW(pub, "%s%s" RZ_SUBJECT_SUFFIX, names->runners, name);
	ALLOW(pub, "%s*", names->events); /* each authenticated by its MAC */
	json_array_foreach(pools, i, p)
	{
		rz_dispatch_durable(d, sizeof(d), json_string_value(p));
		ALLOW(pub, "$JS.API.CONSUMER.DURABLE.CREATE.%s.%s", names->jobs_stream, d);
		ALLOW(pub, "$JS.API.CONSUMER.INFO.%s.%s", names->jobs_stream, d);
		ALLOW(pub, RZ_NATS_PULL_PREFIX "%s.%s", names->jobs_stream, d);
		ALLOW(pub, "$JS.ACK.%s.%s.>", names->jobs_stream, d);
	}
	ALLOW(sub, RZ_NATS_RUNNER_INBOX "%s.>", name);
	ALLOW(sub, "%s%s.cancel", names->runners, name);
#undef ALLOW
	json_decref(pools);
	return json_pack("{s:{s:o}, s:{s:o}}", "publish", "allow", pub, "subscribe", "allow", sub);
}

json_t *rz_dispatch_pools(const json_t *labels, char *why, size_t why_size)
{
	const char *keys[64], *key;
	size_t n = 0, total = 1;
	json_t *v, *out;
	char tok[RZ_DISPATCH_POOL_MAX];

	if (labels != NULL && !json_is_object(labels)) {
		snprintf(why, why_size, "labels: not an object");
		return NULL;
	}
	if (labels != NULL && json_object_size(labels) > sizeof(keys) / sizeof(keys[0])) {
		snprintf(why, why_size, "more than %zu labels", sizeof(keys) / sizeof(keys[0]));
		return NULL;
	}
	json_object_foreach((json_t *)labels, key, v)
	{
		keys[n++] = key;
	}
	qsort(keys, n, sizeof(keys[0]), key_cmp);
	/* subsets of 1, 2 and 3 labels */
	total += n + n * (n - (n > 0)) / 2 + (n >= 3 ? n * (n - 1) * (n - 2) / 6 : 0);
	if (total > RZ_DISPATCH_POOLS_MAX) {
		snprintf(why, why_size,
		         "%zu labels make %zu pools (every selector of at most %d of them): more "
		         "than %d",
		         n, total, RZ_DISPATCH_SELECTOR_MAX, RZ_DISPATCH_POOLS_MAX);
		return NULL;
	}
	out = json_array();
	json_array_append_new(out, json_string(RZ_DISPATCH_POOL_DEFAULT));
	for (size_t i = 0; i < n; i++) {
		const char *one[1] = { keys[i] };
		if (token_of(labels, one, 1, tok, sizeof(tok))) {
			json_array_append_new(out, json_string(tok));
		}
		for (size_t j = i + 1; j < n; j++) {
			const char *two[2] = { keys[i], keys[j] };
			if (token_of(labels, two, 2, tok, sizeof(tok))) {
				json_array_append_new(out, json_string(tok));
			}
			for (size_t k = j + 1; k < n; k++) {
				const char *three[3] = { keys[i], keys[j], keys[k] };
				if (token_of(labels, three, 3, tok, sizeof(tok))) {
					json_array_append_new(out, json_string(tok));
				}
			}
		}
	}
	return out;
}

bool rz_dispatch_matches(const json_t *labels, const json_t *selector)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)selector, key, v)
	{
		json_t *have = json_object_get(labels, key);
		if (!json_is_string(have) || !json_is_string(v) ||
		    strcmp(json_string_value(have), json_string_value(v)) != 0) {
			return false;
		}
	}
	return true;
}

static bool name_ok(const json_t *v, size_t max)
{
	char msg[128];

	return json_is_string(v) && json_string_length(v) <= max &&
	       rz_format_dns1123_subdomain(json_string_value(v), msg, sizeof(msg));
}

char *rz_dispatch_job_build(const rz_dispatch_job_t *job)
{
	json_t *o;
	char *s;

	if (!rz_dispatch_step_valid(job->step) || job->attempt < 1 ||
	    strlen(job->daemon) > RZ_DISPATCH_URL_MAX) {
		return NULL;
	}
	o = json_pack("{s:s, s:s, s:s, s:I, s:s}", "run", job->run, "tenant", job->tenant, "step",
	              job->step, "attempt", (json_int_t)job->attempt, "daemon", job->daemon);
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

bool rz_dispatch_job_parse(const char *data, size_t len, rz_dispatch_job_t *out, char *why,
                           size_t why_size)
{
	json_t *o, *v;
	char msg[160];
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (len > RZ_DISPATCH_JOB_MAX) {
		snprintf(why, why_size, "larger than %d bytes", RZ_DISPATCH_JOB_MAX);
		return false;
	}
	o = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o)) {
		snprintf(why, why_size, "not a JSON object");
		goto out;
	}
	if (!name_ok(json_object_get(o, "run"), sizeof(out->run) - 1)) {
		snprintf(why, why_size, "run: not a run name");
		goto out;
	}
	if (!name_ok(json_object_get(o, "tenant"), sizeof(out->tenant) - 1)) {
		snprintf(why, why_size, "tenant: not a tenant name");
		goto out;
	}
	v = json_object_get(o, "step");
	if (!json_is_string(v) || !rz_dispatch_step_valid(json_string_value(v))) {
		snprintf(why, why_size, "step: not one of init, plan, show, apply");
		goto out;
	}
	snprintf(out->step, sizeof(out->step), "%s", json_string_value(v));
	v = json_object_get(o, "attempt");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > 1000000000) {
		snprintf(why, why_size, "attempt: not an integer from 1");
		goto out;
	}
	out->attempt = json_integer_value(v);
	v = json_object_get(o, "daemon");
	if (!json_is_string(v) || json_string_length(v) > RZ_DISPATCH_URL_MAX ||
	    !rz_format_url(json_string_value(v), msg, sizeof(msg))) {
		snprintf(why, why_size, "daemon: not an http(s) URL");
		goto out;
	}
	snprintf(out->run, sizeof(out->run), "%s", json_string_value(json_object_get(o, "run")));
	snprintf(out->tenant, sizeof(out->tenant), "%s",
	         json_string_value(json_object_get(o, "tenant")));
	snprintf(out->daemon, sizeof(out->daemon), "%s", json_string_value(v));
	ok = true;
out:
	json_decref(o);
	return ok;
}

char *rz_dispatch_event_line(const char *run, const char *step, int64_t seq, const char *line,
                             size_t len, bool is_stderr)
{
	json_t *o;
	char *s;

	if (len > RZ_DISPATCH_LINE_MAX) {
		len = RZ_DISPATCH_LINE_MAX;
	}
	/* a line cut inside a UTF-8 sequence, or not UTF-8 at all, still travels */
	o = json_pack("{s:s, s:s, s:I, s:s%, s:b}", "run", run, "step", step, "seq",
	              (json_int_t)seq, "line", line, len, "stderr", is_stderr);
	if (o == NULL) {
		char *copy = malloc(len + 1);
		if (copy == NULL) {
			return NULL;
		}
		for (size_t i = 0; i < len; i++) {
			copy[i] = (unsigned char)line[i] < 0x80 ? line[i] : '?';
		}
		copy[len] = '\0';
		o = json_pack("{s:s, s:s, s:I, s:s, s:b}", "run", run, "step", step, "seq",
		              (json_int_t)seq, "line", copy, "stderr", is_stderr);
		free(copy);
	}
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

char *rz_dispatch_event_exit(const char *run, const char *step, int64_t seq, int status,
                             bool timed_out, bool canceled)
{
	json_t *o = json_pack("{s:s, s:s, s:I, s:{s:i, s:b, s:b}}", "run", run, "step", step, "seq",
	                      (json_int_t)seq, "exit", "status", status, "timed_out", timed_out,
	                      "canceled", canceled);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}

bool rz_dispatch_event_parse(const char *subject, const char *data, size_t len,
                             rz_dispatch_event_t *out, char *why, size_t why_size)
{
	const char *run = rz_nats_subject_rest(subject, "events");
	json_t *o, *v, *x;

	memset(out, 0, sizeof(*out));
	if (len > RZ_DISPATCH_EVENT_MAX) {
		snprintf(why, why_size, "larger than %d bytes", RZ_DISPATCH_EVENT_MAX);
		return false;
	}
	if (run == NULL) {
		snprintf(why, why_size, "subject '%.80s' is no event subject",
		         subject ? subject : "");
		return false;
	}
	o = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o)) {
		snprintf(why, why_size, "not a JSON object");
		goto bad;
	}
	v = json_object_get(o, "run");
	if (!name_ok(v, sizeof(out->run) - 1) || strcmp(json_string_value(v), run) != 0) {
		snprintf(why, why_size, "run: not the run of the subject");
		goto bad;
	}
	snprintf(out->run, sizeof(out->run), "%s", json_string_value(v));
	v = json_object_get(o, "step");
	if (!json_is_string(v) || !rz_dispatch_step_valid(json_string_value(v))) {
		snprintf(why, why_size, "step: not one of init, plan, show, apply");
		goto bad;
	}
	snprintf(out->step, sizeof(out->step), "%s", json_string_value(v));
	v = json_object_get(o, "seq");
	if (!json_is_integer(v) || json_integer_value(v) < 1) {
		snprintf(why, why_size, "seq: not an integer from 1");
		goto bad;
	}
	out->seq = json_integer_value(v);
	v = json_object_get(o, "line");
	x = json_object_get(o, "exit");
	if ((v != NULL) == (x != NULL)) {
		snprintf(why, why_size, "neither line nor exit, or both");
		goto bad;
	}
	if (v != NULL) {
		if (!json_is_string(v) || json_string_length(v) > RZ_DISPATCH_LINE_MAX) {
			snprintf(why, why_size, "line: not a string of at most %d bytes",
			         RZ_DISPATCH_LINE_MAX);
			goto bad;
		}
		out->line = json_string_value(v);
		out->line_len = json_string_length(v);
		v = json_object_get(o, "stderr");
		if (v != NULL && !json_is_boolean(v)) {
			snprintf(why, why_size, "stderr: not a boolean");
			goto bad;
		}
		out->is_stderr = json_is_true(v);
	} else {
		json_t *st = json_object_get(x, "status"), *to = json_object_get(x, "timed_out"),
		       *ca = json_object_get(x, "canceled");
		if (!json_is_object(x) || !json_is_integer(st) || json_integer_value(st) < 0 ||
		    json_integer_value(st) > 255 || !json_is_boolean(to) || !json_is_boolean(ca)) {
			snprintf(why, why_size,
			         "exit: not {status: 0..255, timed_out: bool, canceled: bool}");
			goto bad;
		}
		out->is_exit = true;
		out->status = (int)json_integer_value(st);
		out->timed_out = json_is_true(to);
		out->canceled = json_is_true(ca);
	}
	out->json = o;
	return true;
bad:
	json_decref(o);
	memset(out, 0, sizeof(*out));
	return false;
}

void rz_dispatch_event_clear(rz_dispatch_event_t *ev)
{
	json_decref(ev->json);
	memset(ev, 0, sizeof(*ev));
}
