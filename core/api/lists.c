/* core/api/lists.c - list replies streamed from the store, page by page, with back-pressure. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "core/api/lists.h"
#include "core/api/textbuf.h"
#include "core/base/log.h"

#define KEY_MAX 512 /* an owner or a name, with room to spare: names are at most 253 bytes */

/* One list being streamed. */
struct lister {
	rz_req_t *req;
	rz_store_t *store;
	const rz_kind_t *kind;
	char tenant[KEY_MAX];
	bool all_tenants;
	rz_selector_t *labels, *fields;
	bool pretty;
	bool (*keep)(void *arg, const char *tenant, const char *name);
	void *keep_arg;
	json_t *(*view)(const json_t *obj);
	const char *api_version;
	char after_tenant[KEY_MAX], after_name[KEY_MAX]; /* the last key read */
	bool started;                                    /* a key has been read */
	char end_tenant[KEY_MAX], end_name[KEY_MAX];     /* the page's last key, if limited */
	bool bounded;
	size_t matched; /* the pre-scan of a limited list: matching objects seen */
	size_t limit;
	size_t items; /* objects written */
	size_t sent;  /* bytes written */
	size_t rows;  /* rows examined in this turn */
	bool stop, done;
	rz_textbuf_t b;
	struct event *resume;
	rz_err_t err;
};

char *rz_lists_continue(const char *owner, const char *name)
{
	char key[2 * KEY_MAX];
	size_t klen, olen;
	char *out;
	int n = snprintf(key, sizeof(key), "%s\n%s", owner ? owner : "", name ? name : "");

	if (n < 0 || (size_t)n >= sizeof(key)) {
		return NULL;
	}
	klen = (size_t)n;
	olen = sodium_base64_encoded_len(klen, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	out = malloc(olen);
	if (out != NULL) {
		sodium_bin2base64(out, olen, (const unsigned char *)key, klen,
		                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	}
	return out;
}

static bool set_key(char *t, char *n, const rz_store_row_t *row)
{
	return snprintf(t, KEY_MAX, "%s", row->tenant) < KEY_MAX &&
	       snprintf(n, KEY_MAX, "%s", row->name) < KEY_MAX;
}

/* Whether the row's key is past the page's last key. */
static bool past_end(const struct lister *l, const rz_store_row_t *row)
{
	int c;

	if (!l->bounded) {
		return false;
	}
	c = strcmp(row->tenant, l->end_tenant);
	return c > 0 || (c == 0 && strcmp(row->name, l->end_name) > 0);
}

/* The row as an object when a selector, ?pretty or a view needs one (*obj: caller decrefs);
 * false when a selector does not match it. */
static bool wanted(struct lister *l, const rz_store_row_t *row, json_t **obj)
{
	json_error_t jerr;
	const json_t *meta;

	*obj = NULL;
	if (l->keep != NULL && !l->keep(l->keep_arg, row->tenant, row->name)) {
		return false;
	}
	if (l->labels == NULL && l->fields == NULL && !l->pretty && l->view == NULL) {
		return true;
	}
	*obj = json_loadb(row->doc, row->len, 0, &jerr);
	if (*obj == NULL) {
		rz_err_set(&l->err, RZ_EDB, "store: stored object is not JSON: %s", jerr.text);
		return false;
	}
	meta = json_object_get(*obj, "metadata");
	if ((l->labels != NULL && !rz_selector_match(l->labels, json_object_get(meta, "labels"))) ||
	    (l->fields != NULL && !rz_selector_match_fields(l->fields, *obj))) {
		json_decref(*obj);
		*obj = NULL;
		return false;
	}
	return true;
}

/* Append one object: the stored text as it is, or as the view shows it, or indented at the
 * depth of a list's items (jansson writes no raw newline inside a string, so each newline
 * starts a line). */
static void add_item(struct lister *l, const rz_store_row_t *row, json_t *obj)
{
	json_t *shown;
	char *text, *p, *nl;

	if (!l->pretty && l->view == NULL) {
		rz_textbuf_add(&l->b, l->items ? "," : "", l->items ? 1 : 0);
		rz_textbuf_add(&l->b, row->doc, row->len);
		l->items++;
		return;
	}
	shown = l->view != NULL ? l->view(obj) : json_incref(obj);
	text = shown != NULL ? json_dumps(shown, l->pretty ? JSON_INDENT(2) : JSON_COMPACT) : NULL;
	json_decref(shown);
	if (text == NULL) {
		l->b.oom = true;
		return;
	}
	if (!l->pretty) {
		rz_textbuf_str(&l->b, l->items ? "," : "");
		rz_textbuf_str(&l->b, text);
	} else {
		rz_textbuf_str(&l->b, l->items ? ",\n    " : "\n    ");
		for (p = text; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
			rz_textbuf_add(&l->b, p, (size_t)(nl - p));
			rz_textbuf_str(&l->b, "\n    ");
		}
		rz_textbuf_str(&l->b, p);
	}
	free(text);
	l->items++;
}

static int on_row(void *arg, const rz_store_row_t *row)
{
	struct lister *l = arg;
	json_t *obj = NULL;

	if (past_end(l, row)) {
		l->done = true;
		return 1;
	}
	if (!set_key(l->after_tenant, l->after_name, row)) {
		return rz_err_set(&l->err, -ENAMETOOLONG, "store: key too long");
	}
	l->started = true;
	l->rows++;
	if (wanted(l, row, &obj)) {
		add_item(l, row, obj);
	} else if (l->err.code != 0) {
		return l->err.code;
	}
	json_decref(obj);
	if (l->b.oom) {
		return rz_err_set(&l->err, -ENOMEM, "out of memory");
	}
	l->stop = l->b.len >= RZ_LIST_PAGE_BYTES || l->rows >= RZ_LIST_TURN_ROWS;
	return l->stop ? 1 : 0;
}

/* Format the next page into l->b: rows until the page is full, the turn's row budget is
 * spent, or the list ends (l->done). */
static int fill(struct lister *l)
{
	l->rows = 0;
	l->stop = false;
	while (!l->stop && !l->done) {
		rz_scan_opts_t so = { .tenant = l->all_tenants ? NULL : l->tenant,
			              .after_tenant = l->started ? l->after_tenant : NULL,
			              .after_name = l->started ? l->after_name : NULL };
		int n = rz_store_scan(l->store, l->kind, &so, on_row, l, &l->err);
		if (n < 0) {
			return n;
		}
		if (!l->stop && n < RZ_SCAN_PAGE) {
			l->done = true;
		}
	}
	return 0;
}

/* The pre-scan of a limited list: the key of its limit-th matching object, and whether
 * another follows. */
static int count_row(void *arg, const rz_store_row_t *row)
{
	struct lister *l = arg;
	json_t *obj = NULL;
	bool pretty = l->pretty, match;

	if (!set_key(l->after_tenant, l->after_name, row)) {
		return rz_err_set(&l->err, -ENAMETOOLONG, "store: key too long");
	}
	l->started = true;
	l->pretty = false;
	match = wanted(l, row, &obj);
	l->pretty = pretty;
	json_decref(obj);
	if (!match) {
		return l->err.code != 0 ? l->err.code : 0;
	}
	if (++l->matched <= l->limit) {
		set_key(l->end_tenant, l->end_name, row);
		return 0;
	}
	l->bounded = true; /* one more matches: the page ends at the limit-th */
	return 1;
}

static int prescan(struct lister *l, const char *after_tenant, const char *after_name)
{
	for (;;) {
		rz_scan_opts_t so = { .tenant = l->all_tenants ? NULL : l->tenant,
			              .after_tenant = l->started ? l->after_tenant : after_tenant,
			              .after_name = l->started ? l->after_name : after_name };
		int n = rz_store_scan(l->store, l->kind, &so, count_row, l, &l->err);
		if (n < 0) {
			return n;
		}
		if (l->bounded || n < RZ_SCAN_PAGE) {
			return 0;
		}
	}
}

static void head(struct lister *l, int64_t rv, const char *token)
{
	char text[2 * 4 * KEY_MAX / 3 + 512]; /* a token of two keys in base64, and the rest */
	int n;

	if (l->pretty) {
		n = snprintf(
		    text, sizeof(text),
		    "{\n  \"apiVersion\": \"%s\",\n  \"kind\": \"%sList\",\n  \"metadata\": {\n"
		    "    \"resourceVersion\": \"%" PRId64 "\"%s%s%s\n  },\n  \"items\": [",
		    l->api_version, l->kind->kind, rv, token ? ",\n    \"continue\": \"" : "",
		    token ? token : "", token ? "\"" : "");
	} else {
		n = snprintf(
		    text, sizeof(text),
		    "{\"apiVersion\":\"%s\",\"kind\":\"%sList\",\"metadata\":{\"resourceVersion\":"
		    "\"%" PRId64 "\"%s%s%s},\"items\":[",
		    l->api_version, l->kind->kind, rv, token ? ",\"continue\":\"" : "",
		    token ? token : "", token ? "\"" : "");
	}
	if (n < 0 || (size_t)n >= sizeof(text)) {
		l->b.oom = true; /* cannot happen with keys of KEY_MAX: refuse rather than cut */
		return;
	}
	rz_textbuf_str(&l->b, text);
}

static void tail(struct lister *l)
{
	rz_textbuf_str(&l->b, !l->pretty ? "]}\n" : l->items ? "\n  ]\n}\n" : "]\n}\n");
}

static void lister_free(struct lister *l)
{
	bool large = l->sent > RZ_LIST_HIGH_WATER;

	if (l->resume != NULL) {
		event_free(l->resume);
	}
	rz_selector_free(l->labels);
	rz_selector_free(l->fields);
	free(l->b.p);
	free(l);
	if (large) {
		malloc_trim(0); /* the pages and the sent output: glibc would keep them */
	}
}

static void on_client_gone(rz_req_t *req, void *arg)
{
	struct lister *l = arg;

	rz_reply_end(req);
	lister_free(l);
}

/* Write what is formatted; at the end of the list, end the reply. false when the reply
 * has ended (l is freed). */
static bool flush(struct lister *l)
{
	if (l->done) {
		tail(l);
	}
	if (l->b.oom || rz_reply_write(l->req, l->b.p, l->b.len) != 0) {
		rz_reply_abort(l->req);
		lister_free(l);
		return false;
	}
	l->sent += l->b.len;
	l->b.len = 0;
	if (l->done) {
		rz_reply_end(l->req);
		lister_free(l);
		return false;
	}
	return true;
}

static void schedule(struct lister *l, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (evtimer_add(l->resume, &tv) < 0) {
		rz_reply_abort(l->req);
		lister_free(l);
	}
}

static void on_drained(rz_req_t *req, void *arg)
{
	schedule(arg, 0);
}

/* The next page, on a later turn of the loop, when the client has taken enough of the last
 * ones; else when it has read the backlog down to half the mark (the server's write
 * timeout drops a client that stops reading). */
static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct lister *l = arg;
	size_t cap = rz_reply_backlog_cap(l->req);
	size_t high = cap / 2 < RZ_LIST_HIGH_WATER ? cap / 2 : RZ_LIST_HIGH_WATER;

	if (rz_reply_backlog(l->req) > high) {
		rz_reply_on_drain(l->req, high / 2, on_drained, l);
		return;
	}
	if (fill(l) != 0) {
		rz_log_err("api", "list of %s failed after its head: %s", l->kind->plural,
		           l->err.msg);
		rz_reply_abort(l->req);
		lister_free(l);
		return;
	}
	if (flush(l)) {
		schedule(l, 0);
	}
}

static struct lister *lister_new(rz_req_t *req, rz_store_t *store, rz_lists_opts_t *o)
{
	struct lister *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		return NULL;
	}
	l->req = req;
	l->store = store;
	l->kind = o->kind;
	l->all_tenants = o->tenant == NULL;
	snprintf(l->tenant, sizeof(l->tenant), "%s", o->tenant ? o->tenant : "");
	/* an absent selector parses as an empty one, which would only cost a parse per row */
	l->labels = rz_selector_empty(o->labels) ? NULL : o->labels;
	l->fields = rz_selector_empty(o->fields) ? NULL : o->fields;
	if (l->labels == NULL) {
		rz_selector_free(o->labels);
	}
	if (l->fields == NULL) {
		rz_selector_free(o->fields);
	}
	o->labels = o->fields = NULL;
	l->pretty = o->pretty;
	l->keep = o->keep;
	l->keep_arg = o->keep_arg;
	l->view = o->view;
	l->api_version = o->api_version != NULL ? o->api_version : RZ_API_VERSION;
	l->limit = o->limit;
	return l;
}

int rz_lists_send(rz_req_t *req, rz_store_t *store, rz_lists_opts_t *o, rz_err_t *err)
{
	int64_t rv = rz_store_revision(store);
	struct lister *l = lister_new(req, store, o);
	char *token = NULL;
	int rc = 0;

	rz_selector_free(o->labels);
	rz_selector_free(o->fields);
	o->labels = o->fields = NULL;
	if (l == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	if (l->limit > 0 && (rc = prescan(l, o->after_tenant, o->after_name)) == 0 && l->bounded) {
		token = rz_lists_continue(l->end_tenant, l->end_name);
		rc = token == NULL ? rz_err_set(&l->err, -ENOMEM, "out of memory") : 0;
	}
	/* the rows after the request's key, to the page's last key when limited */
	l->started = o->after_tenant != NULL;
	snprintf(l->after_tenant, sizeof(l->after_tenant), "%s",
	         o->after_tenant ? o->after_tenant : "");
	snprintf(l->after_name, sizeof(l->after_name), "%s", o->after_name ? o->after_name : "");
	if (rc == 0) {
		head(l, rv, token);
		l->done =
		    strcmp(rz_req_method(req), "HEAD") == 0 || (l->limit > 0 && l->matched == 0);
		rc = l->done ? 0 : fill(l);
	}
	free(token);
	if (rc == 0 && l->b.oom) {
		rc = rz_err_set(&l->err, -ENOMEM, "out of memory");
	}
	if (rc != 0) {
		*err = l->err;
		lister_free(l);
		return rc;
	}
	if (rz_reply_begin(req, 200, "application/json") != 0) {
		rz_reply_end(req); /* the client has gone */
		lister_free(l);
		return 0;
	}
	if (!flush(l)) {
		return 0; /* the whole list fitted in its first page */
	}
	if ((l->resume = evtimer_new(rz_req_base(req), on_resume, l)) == NULL) {
		rz_reply_abort(req);
		lister_free(l);
		return 0;
	}
	rz_req_on_close(req, on_client_gone, l);
	schedule(l, 0);
	return 0;
}
