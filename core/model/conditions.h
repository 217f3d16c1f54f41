/*
 * core/model/conditions.h - Kubernetes conditions (status.conditions: type, status, reason,
 * message, lastTransitionTime, observedGeneration), and the ones that follow from a kind's
 * phase alone: Complete and Failed on a Run, an UpgradeRun, an EtcdBackup and an EtcdRestore
 * (as a Job has them), Ready on a Machine. The store derives those on every write
 * (core/store/store.c), whoever writes, so they always agree with the phase and `kubectl wait
 * --for=condition=…` works.
 */
#ifndef RZ_CONDITIONS_H
#define RZ_CONDITIONS_H

#include <jansson.h>

#include "core/model/kinds.h"

/* Set condition type in conds (a condition list) in place; status is "True", "False" or
 * "Unknown"; message may be NULL (""). Its lastTransitionTime (now, RFC 3339) moves only
 * when its status does. */
void rz_condition_set(json_t *conds, const char *type, const char *status, const char *reason,
                      const char *message, const char *now, json_int_t gen);

/* The condition type of obj's status.conditions (borrowed), or NULL. */
const json_t *rz_condition_get(const json_t *obj, const char *type);

/* Set the conditions that follow from k's phase on obj (adjusted in place; a kind without
 * any, or an object without a phase or stage, is left alone). now is the time of the write. */
void rz_conditions_derive(const rz_kind_t *k, json_t *obj, const char *now);

#endif /* RZ_CONDITIONS_H */
