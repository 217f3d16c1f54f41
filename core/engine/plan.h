/*
 * core/engine/plan.h - what a saved plan would do: the parsed output of
 * `tofu show -json run.plan` read for counts and for whether applying changes anything.
 * The plan document holds sensitive values in clear; nothing here keeps or logs it.
 */
#ifndef RZ_PLAN_H
#define RZ_PLAN_H

#include <stdbool.h>

#include <jansson.h>

/* {"add": N, "change": N, "destroy": N} over the plan's resource changes (a replacement
 * counts as one add and one destroy). plan may be NULL (all zero). Caller owns it. */
json_t *rz_plan_counts(const json_t *plan);

/* Would applying the plan change anything: a resource, or an output? A NULL plan (it
 * could not be read) says yes, to be safe. */
bool rz_plan_changes(const json_t *plan);

#endif /* RZ_PLAN_H */
