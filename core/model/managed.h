/*
 * core/model/managed.h - field managers (server-side apply): who owns which fields of an
 * object, kept in its metadata.managedFields as Kubernetes keeps them, and the two ways a
 * write changes that: an Update (create, replace, merge or JSON patch) takes the fields it
 * changes from everyone; an Apply makes its manager own exactly the fields of its
 * configuration, refuses to change a field another manager owns unless forced (a value equal
 * to the owner's is shared ownership, not a conflict), and removes the fields its manager
 * applied last time and no longer does, when nobody else owns them.
 *
 * Ownership covers an object's "view": what its writers set. A spec write's view is the
 * object less apiVersion, kind, status, the kind's top-level members, the metadata the server
 * sets (name, uid, resourceVersion, managedFields, ...) and the kind's write-only field (a
 * password is never compared nor recorded); a status write's view is its status. Pure jansson
 * over the sets of core/model/fieldset.h.
 */
#ifndef RZ_MANAGED_H
#define RZ_MANAGED_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"

#define RZ_FIELD_MANAGER_MAX    128 /* bytes of a manager's name, as Kubernetes bounds it */
#define RZ_MANAGED_MAX_UPDATERS 10  /* Update entries: the oldest merge into "ancient-changes" */
#define RZ_MANAGED_MAX_APPLIERS 16  /* Apply entries: one more is refused (-E2BIG) */
#define RZ_MANAGED_MAX_ENTRIES  (RZ_MANAGED_MAX_UPDATERS + RZ_MANAGED_MAX_APPLIERS)
#define RZ_MANAGED_MAX_BYTES    (256u * 1024)     /* metadata.managedFields, as JSON */
#define RZ_MANAGED_ANCIENT      "ancient-changes" /* as kube-apiserver names the merged entry */
#define RZ_MANAGED_TIME_MAX     40

typedef enum rz_managed_op { RZ_MANAGED_UPDATE, RZ_MANAGED_APPLY } rz_managed_op_t;

/* One entry of metadata.managedFields, decoded. */
typedef struct rz_managed_entry {
	char manager[RZ_FIELD_MANAGER_MAX + 1];
	rz_managed_op_t op;
	bool status;                    /* written through the status subresource */
	char time[RZ_MANAGED_TIME_MAX]; /* RFC 3339, as written; may be "" */
	json_t *set;                    /* the fields (a rz_fieldset); owned */
} rz_managed_entry_t;

/* An object's managers: one extra slot for an entry a write adds before the cap. */
typedef struct rz_managed {
	rz_managed_entry_t e[RZ_MANAGED_MAX_ENTRIES + 1];
	size_t n;
} rz_managed_t;

/* Who writes: the manager's name (borrowed), through the status subresource or not, and the
 * time to record (RFC 3339, borrowed). */
typedef struct rz_managed_who {
	const char *manager;
	bool status;
	const char *now;
} rz_managed_who_t;

/* The members of one entry, as metadata.managedFields[] is validated and documented. */
extern const rz_field_t rz_managed_entry_fields[];

void rz_managed_init(rz_managed_t *m);
/* Release m's sets; m is empty after (and may be used again). */
void rz_managed_fini(rz_managed_t *m);

/* metadata.managedFields (borrowed; NULL or absent: none) into m (initialised, empty). 0, or
 * RZ_EPARSE (err names the entry and what is wrong: a member missing or of the wrong type,
 * an operation other than Apply or Update, a fieldsType other than FieldsV1, a subresource
 * other than status, a manager longer than RZ_FIELD_MANAGER_MAX, two entries of one manager,
 * operation and subresource, more than RZ_MANAGED_MAX_ENTRIES), or -ENOMEM; m is empty on
 * failure. */
int rz_managed_decode(rz_managed_t *m, const json_t *fields, rz_err_t *err);

/* m as metadata.managedFields into *out (caller owns; json_decref()): Apply entries first,
 * then by time, manager and subresource, as kube-apiserver sorts them. 0, -E2BIG when longer
 * than RZ_MANAGED_MAX_BYTES as JSON (err says how long), -ENOMEM. */
int rz_managed_encode(const rz_managed_t *m, json_t **out, rz_err_t *err);

/* Record an Update by who from old to new (views; old NULL for a create): the fields it
 * changes leave every other manager and join who's Update entry (its time set to who->now),
 * the fields it removes leave everyone; entries left empty go, and beyond
 * RZ_MANAGED_MAX_UPDATERS Update entries the oldest merge into RZ_MANAGED_ANCIENT. 0 or
 * -ENOMEM (err filled; m as it was or with sets partly moved: drop it). */
int rz_managed_update(rz_managed_t *m, const rz_managed_who_t *who, const json_t *old,
                      const json_t *new, rz_err_t *err);

/* Apply config (a view, nulls counting as absent) over live (a view; {} or NULL for a
 * create) for who: *result (caller owns) is live with config merged in (objects member by
 * member, everything else replaced) less the fields who applied last time and no longer
 * does, that no other manager owns. A change to a field another manager owns is a conflict:
 * without force, returns RZ_ECONFLICT with a cause appended to conflicts (borrowed) for each
 * ({field ".spec.count", reason "FieldManagerConflict", message "conflict with \"m\" using
 * rezuscloud.io/v1"}, sorted by manager and field) and m unchanged; with force the fields
 * leave their owners. who's Apply entry then holds exactly config's fields (time set when
 * the view or the entry changes). -E2BIG when who would be an Apply manager beyond
 * RZ_MANAGED_MAX_APPLIERS; -ENOMEM. err says what failed. */
int rz_managed_apply(rz_managed_t *m, const rz_managed_who_t *who, bool force, const json_t *live,
                     const json_t *config, json_t **result, json_t *conflicts, rz_err_t *err);

/* Kubernetes' message for the conflicts rz_managed_apply appended to causes (not empty):
 * "Apply failed with 1 conflict: conflict with \"m\" using rezuscloud.io/v1: .spec.count", or
 * for more "Apply failed with N conflicts: conflicts with \"m\" using ...:\n- .spec.a\n-
 * .spec.b" grouped by manager. Into buf (size bytes, truncated with "..."). */
void rz_managed_conflict_message(const json_t *causes, char *buf, size_t size);

/* The view of obj (borrowed) that k's writers manage: its status for a status write, else the
 * object less what the server keeps (see above). Caller owns; NULL on out of memory. */
json_t *rz_managed_view(const json_t *obj, const rz_kind_t *k, bool status);

/* Replace the view of obj (modified) by view (borrowed): what rz_managed_view would take from
 * obj goes, view's members come in. 0 or -ENOMEM. */
int rz_managed_unview(json_t *obj, const json_t *view, const rz_kind_t *k, bool status);

#endif /* RZ_MANAGED_H */
