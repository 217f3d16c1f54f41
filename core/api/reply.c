/* core/api/reply.c - the API's replies: store errors, replies held until durable, 422, Accept. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api-int.h"
#include "core/base/log.h"

/* ------------------------------------------------------------------ replies */

void rz__reply_store_error(rz_req_t *req, const rz_kind_t *k, const char *name, int rc,
                           const rz_err_t *err)
{
	json_t *st;

	switch (rc) {
	case RZ_ENOTFOUND:
		st = rz_status_new(404, NULL, err->msg);
		break;
	case -EEXIST:
		st = rz_status_new(409, "AlreadyExists", err->msg);
		break;
	case RZ_ECONFLICT:
		st = rz_status_new(409, "Conflict", err->msg);
		break;
	case RZ_ETERMINATING:
		st = rz_status_new(403, "Forbidden", err->msg);
		break;
	case -E2BIG:
		st = rz_status_new(413, "RequestEntityTooLarge", err->msg);
		break;
	default:
		rz_log_err("api", "%s %s \"%s\": %s", rz_req_method(req), k->plural,
		           name ? name : "", err->msg);
		st = rz_status_storage(rc); /* a full or read-only disk says so */
		if (st == NULL) {
			st = rz_status_new(500, NULL, "internal error; see the server log");
		}
		break;
	}
	rz_status_set_target(st, k->plural, name);
	rz_reply_status(req, st);
}

/* A write's reply, held until its commit is durable: the loop turn's group commit, then
 * with store.durability: full the sync. */
struct held {
	rz_req_t *req;
	const rz_kind_t *k;
	int code;
	json_t *out;
	char *text; /* out as stored, or NULL */
};

static void held_reply(void *arg, int status)
{
	struct held *h = arg;
	int lost = rz_db_uncommitted(status);

	if (status == 0 && h->text != NULL) { /* the stored text: out need not be dumped */
		json_decref(h->out);
		rz_reply_json_text(h->req, h->code, h->text);
	} else if (status == 0) {
		rz_reply_json(h->req, h->code, h->out);
	} else if (lost != 0) { /* the commit failed: as if the write itself had */
		rz_err_t err = { 0 };
		const char *name =
		    json_string_value(json_object_get(json_object_get(h->out, "metadata"), "name"));

		rz_err_set(&err, lost, "committing the write failed: %s", strerror(-lost));
		rz__reply_store_error(h->req, h->k, name, lost, &err);
		json_decref(h->out);
	} else {
		json_decref(h->out);
		rz_reply_error(
		    h->req, 503, NULL,
		    "the change was committed but syncing it to the disk failed (%s): it "
		    "may be lost; read it back before retrying",
		    strerror(-status));
	}
	free(h->text);
	free(h);
}

/* Reply code and out (taken) once the write is durable; text (taken, may be NULL) is out
 * serialised compactly, sent instead of dumping out again. */
void rz__reply_durable(rz_api_t *api, rz_req_t *req, const rz_kind_t *k, int code, json_t *out,
                       char *text)
{
	struct held *h = malloc(sizeof(*h));

	if (h == NULL) {
		json_decref(out);
		free(text);
		rz_reply_error(req, 503, NULL, "out of memory; the change may have been stored");
		return;
	}
	*h = (struct held){ req, k, code, out, text };
	rz_store_after_durable(api->store, held_reply, h);
}

void rz__reply_invalid(rz_req_t *req, const rz_kind_t *k, const char *name, json_t *causes)
{
	char msg[512];
	json_t *first = json_array_get(causes, 0);
	json_t *st;
	size_t i;
	json_t *c;

	snprintf(msg, sizeof(msg), "%s \"%s\" is invalid: %s: %s%s", k->kind, name ? name : "",
	         json_string_value(json_object_get(first, "field")),
	         json_string_value(json_object_get(first, "message")),
	         json_array_size(causes) > 1 ? " (and more; see details.causes)" : "");
	st = rz_status_new(422, "Invalid", msg);
	rz_status_set_target(st, k->kind, name);
	json_array_foreach(causes, i, c)
	{
		rz_status_add_cause(st, json_string_value(json_object_get(c, "field")),
		                    json_string_value(json_object_get(c, "reason")),
		                    json_string_value(json_object_get(c, "message")));
	}
	rz_reply_status(req, st);
}

/* Whether one media range of the Accept header has every parameter of want (each
 * "name=value"; NULL ends it). */
bool rz__accept_wants(const rz_req_t *req, const char *const *want)
{
	const char *accept = rz_req_header(req, "Accept");
	char buf[1024], *save = NULL;

	if (accept == NULL || strlen(accept) >= sizeof(buf)) {
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", accept);
	for (char *range = strtok_r(buf, ",", &save); range != NULL;
	     range = strtok_r(NULL, ",", &save)) {
		bool all = true;
		for (size_t i = 0; all && want[i] != NULL; i++) {
			char *p = range;
			size_t len = strlen(want[i]);
			all = false;
			while (!all && (p = strchr(p, ';')) != NULL) {
				p += 1 + strspn(p + 1, " ");
				all = strncmp(p, want[i], len) == 0 &&
				      (p[len] == '\0' || p[len] == ';' || p[len] == ' ');
			}
		}
		if (all) {
			return true;
		}
	}
	return false;
}

/* Reply obj (taken) with a content type of the caller's. */
void rz__reply_typed(rz_req_t *req, int code, const char *ctype, json_t *obj)
{
	bool pretty = false;
	char *text;

	rz_parse_bool(rz_req_query(req, "pretty"), &pretty);
	text = json_dumps(obj, pretty ? JSON_INDENT(2) : JSON_COMPACT);
	json_decref(obj);
	if (text == NULL) {
		rz_reply_error(req, 500, NULL, "out of memory");
		return;
	}
	rz_reply(req, code, ctype, text, strlen(text));
	free(text);
}
