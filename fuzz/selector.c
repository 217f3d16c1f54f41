/*
 * fuzz/selector.c - label selectors and field selectors (labelSelector, fieldSelector).
 *
 * Input: the selector text, optionally "\n---8<---\n" and a JSON object to match: labels
 * for a label selector, an object for a field selector (the fields a fieldSelector may name
 * on Events). Invariants: an error has a message naming the selector; a selector parses the
 * same way twice; an empty selector matches everything; matching never fails on any JSON.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/model/selector.h"

static const char *const allowed[] = { "metadata.name",       "metadata.tenant", "metadata.user",
	                               "involvedObject.name", "reason",          NULL };

static void one(const char *text, const json_t *target, bool fields)
{
	rz_selector_t *sel = NULL, *again = NULL;
	rz_err_t err = { 0 };
	int rc = fields ? rz_selector_parse_fields(text, allowed, &sel, &err)
	                : rz_selector_parse(text, &sel, &err);

	if (rc != 0) {
		FZ_ASSERT(sel == NULL, "an error with a selector");
		FZ_ASSERT(strstr(err.msg, "selector") != NULL, "message '%s' names no selector",
		          err.msg);
		return;
	}
	FZ_ASSERT(sel != NULL, "success without a selector");
	rc = fields ? rz_selector_parse_fields(text, allowed, &again, &err)
	            : rz_selector_parse(text, &again, &err);
	FZ_ASSERT(rc == 0, "parsed once, refused twice: %s", err.msg);
	if (fields) {
		bool m = rz_selector_match_fields(sel, target);
		FZ_ASSERT(m == rz_selector_match_fields(again, target), "two parses disagree");
		FZ_ASSERT(!rz_selector_empty(sel) || m, "an empty selector refused an object");
	} else {
		bool m = rz_selector_match(sel, target);
		FZ_ASSERT(m == rz_selector_match(again, target), "two parses disagree");
		FZ_ASSERT(!rz_selector_empty(sel) || m, "an empty selector refused labels");
		(void)rz_selector_match(sel, NULL);
	}
	rz_selector_free(again);
	rz_selector_free(sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *rest;
	json_t *target;

	fz_split(data, size, &text, &rest);
	target = json_loads(rest, 0, NULL);
	if (target == NULL) {
		target = json_pack("{s:s,s:s}", "app", "web", "example.com/tier", "front");
	}
	one(text, target, false);
	one(text, target, true);
	json_decref(target);
	free(text);
	free(rest);
	return 0;
}
