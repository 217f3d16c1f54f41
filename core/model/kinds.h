/*
 * core/model/kinds.h - the resource kinds (SPEC §4): one table drives the router, validation,
 * defaulting, /openapi/v3, api-resources and (with the role table) authorisation.
 */
#ifndef RZ_KINDS_H
#define RZ_KINDS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/model/fields.h"

#define RZ_API_GROUP   "rezuscloud.io"
#define RZ_API_VERSION "rezuscloud.io/v1"

/* Bounds of every stored object, as Kubernetes and etcd have them (rezus.conf(5) "LIMITS"):
 * annotations together (keys and values) as Kubernetes' TotalAnnotationSizeLimitB; a whole
 * object as stored (compact JSON) as etcd's default request limit, so that the event log's
 * window holds at most that many copies of this size; a request body that writes one, as
 * the Kubernetes API server's 3 MiB. */
#define RZ_ANNOTATIONS_MAX (256u * 1024)
#define RZ_OBJECT_MAX      (1536u * 1024)
#define RZ_REQUEST_MAX     (3u * 1024 * 1024)
#define RZ_USER_GROUPS_MAX 16 /* User.spec.groups at most */

typedef enum rz_scope {
	RZ_SCOPE_GLOBAL = 1, /* /api/v1/<plural>/{name} */
	RZ_SCOPE_TENANT, /* /api/v1/tenants/{tenant}/<plural>/{name}, listed at /api/v1/<plural> */
	RZ_SCOPE_USER,   /* /api/v1/users/{user}/<plural>/{name} */
} rz_scope_t;

/* Roles (SPEC §5), ordered: a higher role may do everything a lower one may. */
enum rz_role {
	RZ_ROLE_UNSET = 0, /* a route nobody declared access for: always refused */
	RZ_ROLE_PUBLIC,    /* no credentials needed */
	RZ_ROLE_NONE, /* signed in, no role on the installation: AccessBindings' tenants only */
	RZ_ROLE_VIEW,
	RZ_ROLE_EDIT,
	RZ_ROLE_ADMIN,
};

/* Verbs users may call on a kind (internal writers such as projection bypass these). */
enum {
	RZ_VERB_GET = 1u << 0,
	RZ_VERB_LIST = 1u << 1,
	RZ_VERB_WATCH = 1u << 2,
	RZ_VERB_CREATE = 1u << 3,
	RZ_VERB_UPDATE = 1u << 4, /* PUT */
	RZ_VERB_PATCH = 1u << 5,  /* merge patch */
	RZ_VERB_DELETE = 1u << 6,
	RZ_VERB_STATUS = 1u << 7, /* PUT/PATCH .../status */
};

#define RZ_VERBS_READ (RZ_VERB_GET | RZ_VERB_LIST | RZ_VERB_WATCH)
#define RZ_VERBS_ALL                                                                               \
	(RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_UPDATE | RZ_VERB_PATCH | RZ_VERB_DELETE |        \
	 RZ_VERB_STATUS)

typedef struct rz_kind rz_kind_t;

/* Cross-field checks after the field schema passed: obj is the new object (defaults
 * applied; may be adjusted), old the stored one on update (NULL on create). Appends causes. */
typedef void (*rz_kind_check_fn)(const rz_kind_t *k, json_t *obj, const json_t *old,
                                 json_t *causes);

struct rz_kind {
	const char *kind;               /* "NodeGroup" */
	const char *plural;             /* "nodegroups" */
	const char *singular;           /* "nodegroup" */
	const char *const *short_names; /* NULL-terminated */
	rz_scope_t scope;
	unsigned verbs;
	const char *doc;
	const rz_field_t *spec;        /* validated on create/update/patch */
	const rz_field_t *status;      /* validated on status writes */
	const char *name_prefix;       /* generateName used when a create names nothing ("run-") */
	const char *const *finalizers; /* added on create, NULL-terminated */
	rz_kind_check_fn check;
	int read_role;   /* get, list, watch */
	int write_role;  /* create, update, patch, delete */
	int status_role; /* status writes (controllers) */
	bool owner_may;  /* USER scope: the owning user may also read and write (own tokens) */
	const char *secret_field;   /* a write-only spec field never stored in the object */
	const char *initial_status; /* JSON: the status a new object starts with, or NULL */
	/* Members at the top level of the object, beside metadata, or NULL: Kubernetes' Event
	 * keeps its fields there rather than under spec. They are written like status, by the
	 * system: the store takes them on create and on RZ_UPDATE_STATUS, a status write
	 * through the API validates them, and creates and spec writes through the API drop
	 * them. */
	const rz_field_t *top;
	/* Field paths a fieldSelector may name besides metadata.name, metadata.tenant and
	 * metadata.user ("involvedObject.name"); NULL-terminated, or NULL. At most 12: the
	 * API keeps the list on its stack (SELECTABLE_MAX in core/api/read.c). */
	const char *const *selectable;
	/* Objects kept outside the store (Backup: files in the backup directory): the module
	 * that keeps them registers their routes, with the roles above; the API lists the kind
	 * in discovery and /openapi/v3 and generates no routes of its own for it. */
	bool outside_store;
};

/* The table. Borrowed — static. */
const rz_kind_t *rz_kinds(size_t *count);

/* Lookups; NULL when unknown. Borrowed. */
const rz_kind_t *rz_kind_by_plural(const char *plural);
const rz_kind_t *rz_kind_by_name(const char *kind);

/* For scoped kinds: the metadata field and URL parameter naming the owner ("tenant",
 * "user"), and the owner's kind. NULL for global kinds. */
const char *rz_kind_owner_field(const rz_kind_t *k);
const rz_kind_t *rz_kind_owner(const rz_kind_t *k);

/* Whether k's objects belong to a tenant: a tenant-scoped kind, or the Tenant (its own). */
bool rz_kind_tenanted(const rz_kind_t *k);

/* The role a verb on k needs. */
int rz_kind_role(const rz_kind_t *k, unsigned verb);

/* The verb name for messages and audit ("get", "list", "watch", "create", "update",
 * "patch", "delete", "update status"). */
const char *rz_verb_name(unsigned verb);

/* Validate the kind's top-level members (k->top) that obj (borrowed) has, appending one
 * cause per problem (paths such as "involvedObject.name"); returns how many it added. A
 * member k->top marks required but obj lacks is a cause too. No defaults are applied. */
size_t rz_kind_validate_top(const rz_kind_t *k, const json_t *obj, json_t *causes);

/* Remove from obj (borrowed, adjusted) the members k's schema does not declare: at the top
 * level, in metadata, and in spec (status when status is true; the part the write takes),
 * appending each one's path to dropped (may be NULL). Returns how many were removed. What
 * fieldValidation=Ignore and Warn do before the validation, which then finds none. */
size_t rz_kind_drop_unknown(const rz_kind_t *k, json_t *obj, bool status, json_t *dropped);

/* Validate and normalise obj for a spec write (create, replace, patch) of kind k: its
 * apiVersion, kind and top-level members, metadata, spec (defaults applied; missing
 * metadata and spec become {}; an update's spec equal to old's passed when it was written
 * and is not checked again), then the kind's cross-field check when all else held. old
 * is the stored object on updates (NULL on create). Appends causes; returns how many
 * there are. What needs the plugins or the daemon (provider config, admission) is the
 * API's. */
size_t rz_kind_validate_spec_write(const rz_kind_t *k, json_t *obj, const json_t *old,
                                   json_t *causes);

/* The same for a status write: the top-level members and status (no defaults). */
size_t rz_kind_validate_status_write(const rz_kind_t *k, json_t *obj, json_t *causes);

/* The metadata schema shared by every kind (name, generateName, tenant, labels,
 * annotations, finalizers and the server-set fields). Borrowed — static. */
const rz_field_t *rz_kind_metadata_fields(void);

/* The labels a Runner object serves runs by: those of status.labels (what its heartbeat
 * says) that spec.labels (what an admin granted) holds with the same value (docs/runners.md,
 * "Labels"). A new object (caller owns); {} when either is absent. */
json_t *rz_kind_runner_serves(const json_t *runner);

/* The runnerSelector a tenant's runs need (docs/runners.md, "Pools"): the tenant's
 * spec.runnerSelector merged with every node group's (nodegroups: an array of NodeGroup
 * objects, borrowed), since a run applies every node group and its runner must match them
 * all. *out: the merged label key -> value object ({} when none selects); caller owns the
 * result; release with json_decref(). REZUS_EINVALID when two of them give one key different
 * values (err names both and the key) or when they make more than 3 labels together. */
int rz_kind_runner_selector(const json_t *tenant, const json_t *nodegroups, json_t **out,
                            rz_err_t *err);

#endif /* RZ_KINDS_H */
