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

#define RZ_PLAN_LIST_MAX 2000 /* resource changes listed; the rest are counted in "more" */

/* What an approver reads: {"resources": [{"address", "action" (create, update, replace,
 * delete, read), "reason" (tofu's action_reason, when it gives one), "machine" (the
 * Machine whose spec.tfAddress is the address, among machines)}], "more": N}. Only
 * addresses and actions: no value of the plan, so nothing sensitive. Caller owns it. */
json_t *rz_plan_list(const json_t *plan, const json_t *machines);

#endif /* RZ_PLAN_H */
