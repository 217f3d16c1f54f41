/*
 * core/model/fieldset.h - sets of field paths, what a field manager owns (server-side apply),
 * read and written in Kubernetes' FieldsV1 form: {"f:spec": {"f:count": {}}} owns .spec.count;
 * a node that has children and is a member itself carries ".": {}. Lists are atomic (a list
 * is one field, never keyed), so the only other keys are "f:<member>".
 *
 * A set is a JSON object in this module's own form, made only by the functions below: every
 * member carries ".", no node is empty. A value nested deeper than RZ_FIELDSET_MAX_DEPTH is
 * one field, like a list, so every walk is bounded. Pure jansson: inputs are borrowed and
 * never modified (rz_fieldset_prune modifies its object, nothing else).
 */
#ifndef RZ_FIELDSET_H
#define RZ_FIELDSET_H

#include <stdbool.h>

#include <jansson.h>

#include "core/base/errors.h"

#define RZ_FIELDSET_MAX_DEPTH 32     /* levels of a path; deeper objects are one field */
#define RZ_FIELDSET_MAX_NODES 100000 /* nodes of one FieldsV1 read */

/* The fields of obj (an object; anything else has none): every leaf, a scalar, a list or an
 * empty object, is a member; an object with members is not, only its members are. Caller
 * owns the result; json_decref(). NULL on out of memory. */
json_t *rz_fieldset_of(const json_t *obj);

/* A FieldsV1 value (borrowed) as a set into *out (caller owns; json_decref()). 0, or
 * RZ_EPARSE (err names what is wrong: not an object, a key other than "." and "f:...", "."
 * not {}, deeper than RZ_FIELDSET_MAX_DEPTH, more than RZ_FIELDSET_MAX_NODES nodes), or
 * -ENOMEM. */
int rz_fieldset_parse(const json_t *fields_v1, json_t **out, rz_err_t *err);

/* set as FieldsV1, keys sorted (caller owns; json_decref()). NULL on out of memory. */
json_t *rz_fieldset_encode(const json_t *set);

/* a ∪ b, a − b, a ∩ b (caller owns; json_decref()). NULL on out of memory. */
json_t *rz_fieldset_union(const json_t *a, const json_t *b);
json_t *rz_fieldset_difference(const json_t *a, const json_t *b);
json_t *rz_fieldset_intersection(const json_t *a, const json_t *b);

bool rz_fieldset_empty(const json_t *set);

/* What changed from old to new (objects; NULL is {}): *changed the fields new adds or gives
 * another value (its leaves, as rz_fieldset_of), *removed the fields old had that new has not,
 * with everything under them. Caller owns both; 0 or -ENOMEM (both NULL). */
int rz_fieldset_compare(const json_t *old, const json_t *new, json_t **changed, json_t **removed);

/* The members of set as paths (".spec.count", ".metadata.labels.app"), sorted as a walk of
 * sorted keys, a parent before its children. Caller owns; NULL on out of memory. */
json_t *rz_fieldset_paths(const json_t *set);

/* Remove from obj (an object, modified) the members of gone, except where keep (may be
 * NULL) holds members under them; an object emptied by the removal goes too, unless keep
 * has it as a member. What apply does to the fields its manager stopped applying. */
void rz_fieldset_prune(json_t *obj, const json_t *gone, const json_t *keep);

#endif /* RZ_FIELDSET_H */
