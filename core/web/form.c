/* core/web/form.c - a form's problems in one place (issue 36): each beside its field, in
 * plain words, and a summary above the form that links to the fields; a problem that is no
 * field's (a conflict, a refusal) is said in the summary alone. The API's own words for the
 * whole request ("Tenant \"a\" is invalid: …; see details.causes") are not shown. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/web/page.h"
#include "core/web/tabs.h"

#define MESSAGE_MAX 512
#define STALE                                                                                      \
	"Someone changed this while you edited it: reload the page to see their change, then "     \
	"make yours again."

/* The map's entry for an API field: the longest prefix that ends at a path's boundary. */
static const rz__field_t *field_of(const char *api, const rz__field_t *map, size_t n,
                                   const char **rest)
{
	const rz__field_t *best = NULL;
	size_t blen = 0;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(map[i].api);
		if (strncmp(api, map[i].api, l) == 0 && strchr(".[", api[l] ? api[l] : '.') &&
		    l > blen) {
			best = &map[i];
			blen = l;
		}
	}
	*rest = api + blen;
	return best;
}

/* The API's words for a value (its validators' and schema's) as people read them; the
 * first whose phrase the message has wins. */
static const struct {
	const char *phrase, *plain;
} plain_words[] = {
	{ "must consist of lower case alphanumeric characters or '-'",
	  "use lower-case letters, digits and '-', starting and ending with a letter or digit "
	  "(as my-name)" },
	{ "must consist of lower case alphanumeric characters, '-' or '.'",
	  "use lower-case letters, digits, '-' and '.', starting and ending with a letter or "
	  "digit (as example.com)" },
	{ "expected an integer, got", "must be a whole number, such as 3" },
	{ "expected a boolean, got", "must be yes or no" },
	{ "needs names or a selector", "choose the tenants: by name, by labels, or Every tenant" },
};

static const char *plain_of(const char *msg)
{
	for (size_t i = 0; i < sizeof(plain_words) / sizeof(plain_words[0]); i++) {
		if (strstr(msg, plain_words[i].phrase) != NULL) {
			return plain_words[i].plain;
		}
	}
	return msg;
}

/* The message of a cause in plain words: the part of the field below the form's field first
 * ("item 2: …", "team: …"), and every API path it names as the form's label. */
static void plain_cause(char *out, size_t size, const char *rest, const char *msg,
                        const rz__field_t *map, size_t n)
{
	char buf[MESSAGE_MAX];
	size_t o = 0, o0;

	buf[0] = '\0';
	if (rest[0] == '[') {
		o = (size_t)snprintf(buf, sizeof(buf),
		                     "item %ld: ", strtol(rest + 1, NULL, 10) + 1);
	} else if (rest[0] == '.' && rest[1] != '\0') {
		o = (size_t)snprintf(buf, sizeof(buf), "%s: ", rest + 1);
	}
	o0 = o;
	msg = plain_of(msg);
	for (const char *s = msg; *s != '\0' && o + 1 < sizeof(buf);) {
		const rz__field_t *f = NULL;
		const char *after = NULL;
		if (strncmp(s, "spec.", 5) == 0 || strncmp(s, "metadata.", 9) == 0) {
			f = field_of(s, map, n, &after);
		}
		if (f != NULL) {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s", f->label);
			if (after[0] == '[') {
				o +=
				    (size_t)snprintf(buf + o, o < sizeof(buf) ? sizeof(buf) - o : 0,
				                     " item %ld", strtol(after + 1, NULL, 10) + 1);
				after = strchr(after, ']') ? strchr(after, ']') + 1 : after + 1;
			}
			s = after;
			continue;
		}
		buf[o++] = *s++;
		buf[o] = '\0';
	}
	snprintf(out, size, "%s", buf);
	if (o0 == 0 && out[0] >= 'a' && out[0] <= 'z') { /* a sentence, not a key */
		out[0] = (char)(out[0] - 'a' + 'A');
	}
}

/* The API's message for a failure with no cause of a field, without its jargon. */
static void plain_message(char *out, size_t size, int code, const json_t *status)
{
	const char *msg = rz__str(status, "message");
	const char *colon = strstr(msg, " is invalid: ");
	char *see;

	if (code == 403) {
		snprintf(out, size, "Your role may not do this: an administrator can.");
		return;
	}
	if (code == 409 && strstr(msg, "the object has been modified") != NULL) {
		snprintf(out, size, "%s", STALE);
		return;
	}
	snprintf(out, size, "%s", colon != NULL ? colon + 13 : msg[0] ? msg : "It failed.");
	if ((see = strstr(out, " (and more; see details.causes)")) != NULL) {
		*see = '\0';
	}
	if (out[0] >= 'a' && out[0] <= 'z') {
		out[0] = (char)(out[0] - 'a' + 'A');
	}
}

/* A problem beside field, linked to the element anchor. */
static void problem_at(rz__page_t *pg, const char *field, const char *anchor, const char *label,
                       const char *message)
{
	char id[96];
	json_t *form = json_object_get(pg->view, "form"), *errors, *list;

	if (form == NULL) {
		form = json_object();
		json_object_set_new(pg->view, "form", form);
	}
	if ((errors = json_object_get(form, "errors")) == NULL) {
		errors = json_object();
		json_object_set_new(form, "errors", errors);
	}
	if ((list = json_object_get(form, "problems")) == NULL) {
		list = json_array();
		json_object_set_new(form, "problems", list);
	}
	if (field != NULL && json_object_get(errors, field) != NULL) {
		return; /* one problem per field: the first */
	}
	if (field != NULL) {
		json_object_set_new(errors, field, json_string(message));
	}
	if (anchor != NULL) {
		snprintf(id, sizeof(id), "%s", anchor);
	} else {
		snprintf(id, sizeof(id), "f-%s", field ? field : "");
	}
	json_array_append_new(list,
	                      json_pack("{s:s, s:s, s:s, s:s, s:b}", "field", field ? field : "",
	                                "anchor", id, "label", label ? label : "", "message",
	                                message, "linked", field != NULL));
	json_object_set_new(form, "hasProblems", json_true());
	json_object_set_new(form, "oneProblem", json_boolean(json_array_size(list) == 1));
	if (pg->code == 0 || pg->code < 400) {
		pg->code = 422;
	}
}

void rz__form_problem(rz__page_t *pg, const char *field, const char *label, const char *message)
{
	problem_at(pg, field, NULL, label, message);
}

void rz__form_problem_at(rz__page_t *pg, const char *field, const char *anchor, const char *label,
                         const char *message)
{
	problem_at(pg, field, anchor, label, message);
}

bool rz__form_failed(rz__page_t *pg, int code, const json_t *status, const rz__field_t *map,
                     size_t n)
{
	const json_t *causes = json_object_get(json_object_get(status, "details"), "causes"), *c;
	char msg[MESSAGE_MAX];
	size_t i, mapped = 0;

	if (code >= 200 && code < 300) {
		return false;
	}
	json_array_foreach(causes, i, c)
	{
		if (strcmp(rz__str(c, "field"), "/metadata/generation") == 0) {
			/* the edit form's test of the spec it showed (core/web/edit-pages.c) */
			code = 409;
			break;
		}
	}
	if (code == 409 && json_array_size(causes) > 0) {
		rz__form_problem(pg, NULL, NULL, STALE);
		pg->code = 409;
		return true;
	}
	/* in the form's order (the map's), then the causes of no field of it */
	for (size_t m = 0; m <= n; m++) {
		json_array_foreach(causes, i, c)
		{
			const char *rest;
			const rz__field_t *f = field_of(rz__str(c, "field"), map, n, &rest);
			if (f != (m < n ? &map[m] : NULL)) {
				continue;
			}
			plain_cause(msg, sizeof(msg), f ? rest : "", rz__str(c, "message"), map, n);
			problem_at(pg, f ? f->field : NULL, f ? f->anchor : NULL,
			           f ? f->label : NULL, msg);
			mapped++;
		}
	}
	if (mapped == 0) {
		plain_message(msg, sizeof(msg), code, status);
		rz__form_problem(pg, NULL, NULL, msg);
	}
	pg->code = code == 400 ? 422 : code >= 400 ? code : 502;
	return true;
}

/* ------------------------------------------------------------------ key=value lines */

json_t *rz__form_pairs(const char *text, char *msg, size_t size)
{
	json_t *out = json_object();

	/* a pair ends at a line's end or a comma (no label value has one) */
	for (const char *s = text; s != NULL && *s != '\0';) {
		const char *sep = strpbrk(s, "\r\n,"), *end = sep ? sep : s + strlen(s), *eq;
		const char *a = s, *b = end;
		while (a < b && (*a == ' ' || *a == '\t')) {
			a++;
		}
		while (b > a && (b[-1] == ' ' || b[-1] == '\t')) {
			b--;
		}
		eq = memchr(a, '=', (size_t)(b - a));
		if (a < b && (eq == NULL || eq == a)) {
			snprintf(msg, size, "\"%.*s\" is not of the form key=value, as team=a",
			         (int)(b - a > 60 ? 60 : b - a), a);
			json_decref(out);
			return NULL;
		}
		if (a < b) {
			char key[320];
			snprintf(key, sizeof(key), "%.*s", (int)(eq - a), a);
			json_object_set_new(out, key, json_stringn(eq + 1, (size_t)(b - eq - 1)));
		}
		s = sep == NULL ? NULL : sep + 1;
	}
	return out;
}

json_t *rz__pairs_text(const json_t *map)
{
	const char *k;
	json_t *v, *out;
	size_t len = 1;
	char *buf, *p;

	json_object_foreach((json_t *)map, k, v)
	{
		len += strlen(k) + strlen(json_string_value(v) ? json_string_value(v) : "") + 2;
	}
	if ((buf = malloc(len)) == NULL) {
		return json_string("");
	}
	p = buf;
	*p = '\0';
	json_object_foreach((json_t *)map, k, v)
	{
		p += sprintf(p, "%s=%s\n", k, json_string_value(v) ? json_string_value(v) : "");
	}
	out = json_string(buf);
	free(buf);
	return out;
}

/* ------------------------------------------------------------------ what an action did */

void rz__tab_toast(rz__page_t *pg)
{
	static const struct {
		const char *key, *message;
	} toasts[] = {
		{ "tenantsaved", "Tenant saved: the next run applies the change." },
		{ "groupsaved", "Node group saved: the next run applies the change." },
		{ "upgrade", "Upgrade started: its progress shows below." },
		{ "unlocked", "State unlocked: the next run can take the lock." },
	};
	const char *t = rz_req_query(pg->req, "toast");

	for (size_t i = 0; t != NULL && i < sizeof(toasts) / sizeof(toasts[0]); i++) {
		if (strcmp(t, toasts[i].key) == 0) {
			rz__page_toast(pg, true, toasts[i].message);
		}
	}
}
