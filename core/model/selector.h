/*
 * core/model/selector.h - Kubernetes label and field selectors (PROTOCOLS.md §6).
 *
 * Label selector grammar: requirements joined by ',' (AND):
 *   key=value  key==value  key!=value  key in (v1,v2)  key notin (v1,v2)  key  !key
 * Whitespace around tokens is allowed. Keys follow the label-key rules (checked with
 * rz_format_label_key from core/model/fields.h; values with rz_format_label_value): optional DNS
 * subdomain prefix ≤ 253 + '/' + name ≤ 63: alphanumeric at both ends, '-', '_', '.'
 * inside); values are ≤ 63 of the same characters and may be empty. '!=' and 'notin'
 * match objects that lack the key. An empty selector matches everything.
 *
 * Field selectors: the same '=', '==', '!=' operators over dotted field paths; the only
 * fields accepted are the ones the caller allows (e.g. "metadata.name").
 */
#ifndef RZ_SELECTOR_H
#define RZ_SELECTOR_H

#include <stdbool.h>

#include <jansson.h>

#include "core/base/errors.h"

typedef struct rz_selector rz_selector_t;

/* Parse a label selector. NULL or "" gives a selector that matches everything.
 * Caller owns *out; rz_selector_free(). On error returns REZUS_EINVALID with err->msg like
 *   "invalid label selector 'a in b': expected '(' after 'in' at position 5"
 * (position is 0-based into the text). */
int rz_selector_parse(const char *text, rz_selector_t **out, rz_err_t *err);

/* Parse a field selector; allowed is a NULL-terminated list of field paths that may be
 * used (borrowed). Unknown fields are an error:
 *   "invalid field selector 'spec.x=1': field 'spec.x' is not supported (use metadata.name)
 *    at position 0"
 * Set-based operators (in, notin, exists) are an error in field selectors. */
int rz_selector_parse_fields(const char *text, const char *const *allowed, rz_selector_t **out,
                             rz_err_t *err);

/* Label selectors: does the labels object (may be NULL = no labels) match?
 * Field selectors: does the object, looked up by dotted path (missing or non-string
 * = ""), match? Both kinds use rz_selector_match with the appropriate JSON. */
bool rz_selector_match(const rz_selector_t *sel, const json_t *labels);
bool rz_selector_match_fields(const rz_selector_t *sel, const json_t *object);

/* True when the selector has no requirements. */
bool rz_selector_empty(const rz_selector_t *sel);

/* Release. Accepts NULL. */
void rz_selector_free(rz_selector_t *sel);

#endif /* RZ_SELECTOR_H */
