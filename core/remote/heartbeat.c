/* core/remote/heartbeat.c - a runner's heartbeat, checked (core/remote/heartbeat.h). */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/model/fields.h"
#include "core/remote/heartbeat.h"
#include "core/remote/nats.h"

#define NAME_MAX_LEN    63
#define VERSION_MAX_LEN 64
#define TIME_MAX_LEN    40

bool rz_heartbeat_subject_name(const char *subject, char *buf, size_t size)
{
	const char *rest = rz_nats_subject_rest(subject, "runners");
	size_t slen = strlen(RZ_SUBJECT_SUFFIX), len, n;
	char msg[128];

	if (rest == NULL || size < NAME_MAX_LEN + 1) {
		return false;
	}
	len = strlen(rest);
	if (len <= slen || strcmp(rest + len - slen, RZ_SUBJECT_SUFFIX) != 0) {
		return false;
	}
	n = len - slen;
	if (n > NAME_MAX_LEN) {
		return false;
	}
	memcpy(buf, rest, n);
	buf[n] = '\0';
	return rz_format_dns1123_label(buf, msg, sizeof(msg));
}

static bool bounded_string(const json_t *v, size_t max)
{
	return json_is_string(v) && json_string_length(v) <= max;
}

/* labels: {key: value}, valid and bounded. */
static bool labels_valid(const json_t *labels, char *why, size_t why_size)
{
	const char *key;
	json_t *v;
	char msg[160];

	if (!json_is_object(labels) || json_object_size(labels) > RZ_HEARTBEAT_LABELS) {
		snprintf(why, why_size, "labels: not an object of at most %d labels",
		         RZ_HEARTBEAT_LABELS);
		return false;
	}
	json_object_foreach((json_t *)labels, key, v)
	{
		if (!rz_format_label_key(key, msg, sizeof(msg))) {
			snprintf(why, why_size, "labels: key '%.64s': %s", key, msg);
			return false;
		}
		if (!json_is_string(v) ||
		    !rz_format_label_value(json_string_value(v), msg, sizeof(msg))) {
			snprintf(why, why_size, "labels.%.64s: %s", key,
			         json_is_string(v) ? msg : "not a string");
			return false;
		}
	}
	return true;
}

json_t *rz_heartbeat_parse(const char *subject, const char *data, size_t len, char *why,
                           size_t why_size)
{
	char name[NAME_MAX_LEN + 1], msg[160];
	json_error_t jerr;
	json_t *o, *v, *out, *running, *item;
	size_t i;

	if (!rz_heartbeat_subject_name(subject, name, sizeof(name))) {
		snprintf(why, why_size, "subject '%.80s' names no runner", subject ? subject : "");
		return NULL;
	}
	if (len > RZ_HEARTBEAT_MAX) {
		snprintf(why, why_size, "%zu bytes, more than %u", len, RZ_HEARTBEAT_MAX);
		return NULL;
	}
	o = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(o)) {
		snprintf(why, why_size, "not a JSON object%s%.100s", o == NULL ? ": " : "",
		         o == NULL ? jerr.text : "");
		json_decref(o);
		return NULL;
	}
	v = json_object_get(o, "name");
	if (!json_is_string(v) || strcmp(json_string_value(v), name) != 0) {
		snprintf(why, why_size, "name: not '%s', the runner of the subject", name);
		goto bad;
	}
	if (!labels_valid(json_object_get(o, "labels"), why, why_size)) {
		goto bad;
	}
	v = json_object_get(o, "concurrency");
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 64) {
		snprintf(why, why_size, "concurrency: not an integer from 1 to 64");
		goto bad;
	}
	if (!bounded_string(json_object_get(o, "version"), VERSION_MAX_LEN)) {
		snprintf(why, why_size, "version: not a string of at most %d bytes",
		         VERSION_MAX_LEN);
		goto bad;
	}
	if (!bounded_string(json_object_get(o, "startedAt"), TIME_MAX_LEN) ||
	    rz_clock_parse(json_string_value(json_object_get(o, "startedAt"))) < 0) {
		snprintf(why, why_size, "startedAt: not an RFC 3339 time");
		goto bad;
	}
	v = json_object_get(o, "stopping");
	if (v != NULL && !json_is_boolean(v)) {
		snprintf(why, why_size, "stopping: not a boolean");
		goto bad;
	}
	running = json_object_get(o, "running");
	if (!json_is_array(running) || json_array_size(running) > RZ_HEARTBEAT_RUNNING) {
		snprintf(why, why_size, "running: not an array of at most %d run names",
		         RZ_HEARTBEAT_RUNNING);
		goto bad;
	}
	json_array_foreach(running, i, item)
	{
		if (!json_is_string(item) ||
		    !rz_format_dns1123_subdomain(json_string_value(item), msg, sizeof(msg))) {
			snprintf(why, why_size, "running[%zu]: not a run name", i);
			goto bad;
		}
	}
	out = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:b}", "name", json_object_get(o, "name"),
	                "labels", json_object_get(o, "labels"), "version",
	                json_object_get(o, "version"), "concurrency",
	                json_object_get(o, "concurrency"), "running", running, "startedAt",
	                json_object_get(o, "startedAt"), "stopping", json_is_true(v));
	json_decref(o);
	if (out == NULL) {
		snprintf(why, why_size, "out of memory");
	}
	return out;
bad:
	json_decref(o);
	return NULL;
}

json_t *rz_heartbeat_labels(char *const *labels, char *why, size_t why_size)
{
	json_t *o = json_object();
	char key[320], msg[160];
	size_t n = 0;

	for (char *const *l = labels; o != NULL && l != NULL && *l != NULL; l++, n++) {
		const char *eq = strchr(*l, '=');
		size_t klen = eq != NULL ? (size_t)(eq - *l) : 0;

		if (n >= RZ_HEARTBEAT_LABELS) {
			snprintf(why, why_size, "runner.labels: more than %d labels",
			         RZ_HEARTBEAT_LABELS);
			goto bad;
		}
		if (eq == NULL || klen >= sizeof(key)) {
			snprintf(why, why_size, "runner.labels: '%.64s': use key=value", *l);
			goto bad;
		}
		memcpy(key, *l, klen);
		key[klen] = '\0';
		if (!rz_format_label_key(key, msg, sizeof(msg))) {
			snprintf(why, why_size, "runner.labels: key '%.64s': %s", key, msg);
			goto bad;
		}
		if (!rz_format_label_value(eq + 1, msg, sizeof(msg))) {
			snprintf(why, why_size, "runner.labels: %s: value '%.64s': %s", key, eq + 1,
			         msg);
			goto bad;
		}
		if (json_object_get(o, key) != NULL) {
			snprintf(why, why_size, "runner.labels: key '%s' given twice", key);
			goto bad;
		}
		json_object_set_new(o, key, json_string(eq + 1));
	}
	if (o == NULL) {
		snprintf(why, why_size, "out of memory");
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}
