/*
 * core/api/api-int.h - what the files of the resource REST API share (private to core/api;
 * the public API is core/api/api.h): the API object, its route contexts, and the helpers
 * the verbs, the tables and discovery call across files.
 */
#ifndef RZ_API_INT_H
#define RZ_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/api/api.h"
#include "core/api/lists.h"
#include "core/auth/auth.h"
#include "core/base/text.h"
#include "core/model/kinds.h"
#include "core/plugin/plugins.h"

#define LIST_LIMIT_MAX 10000
#define ECHO_MAX       64 /* values are echoed in messages cut to this many bytes */

/* A value of the request (borrowed) quoted in a message, for "%s": at most ECHO_MAX bytes,
 * cut at a value or word boundary with "...", valid UTF-8 (rz_echo). The text lives in a
 * compound literal: until the end of the enclosing block. */
#define ECHO(v) RZ_ECHO((v), ECHO_MAX)

enum form {
	FORM_COLLECTION, /* /api/v1/<plural> or /api/v1/tenants/{tenant}/<plural> */
	FORM_ITEM,       /* .../{name} */
	FORM_STATUS,     /* .../{name}/status */
	FORM_ALL,        /* /api/v1/<plural> for a tenant-scoped kind: every tenant */
	FORM_WATCH, /* /api/v1/watch/... of the collection or every tenant: a list's ?watch=true */
	FORM_SCALE, /* .../{name}/scale: a node group's autoscaling/v1 Scale (scale.c) */
};

struct rctx;

/* How a route shows its kind's objects when not as stored: Kubernetes' core v1 Events
 * (corev1.c), a node group's Scale (scale.c). */
typedef struct rz__view {
	const char *api_version;          /* of its lists and its watches' BOOKMARKs */
	json_t *(*of)(const json_t *obj); /* obj (borrowed) as shown: a new object (caller
	                                     owns; json_decref()), NULL on out of memory */
	rz_watch_render_fn render;        /* its watches' objects; NULL: no watches */
} rz__view_t;

/* What a kind's autoscaling/v1 Scale is made of (scale.c): the spec field its spec.replicas
 * reads and writes, the status field its status.replicas reads (what was counted), and the
 * label whose value, the object's name, its status.selector selects by. */
typedef struct rz__scale {
	const char *spec, *status, *label;
} rz__scale_t;

/* The routes of a kind Kubernetes' core v1 has too (Event): their documents (corev1.c). */
typedef struct rz__core_v1 {
	const rz_route_doc_t *list; /* /api/v1/namespaces/{tenant}/<plural> */
	const rz_route_doc_t *get;  /* /api/v1/namespaces/{tenant}/<plural>/{name} */
	const rz_route_doc_t *all;  /* /api/v1/<plural> */
} rz__core_v1_t;

/* What a kind adds to the generic verbs beside its row of the kind table
 * (core/model/kinds.h): the checks and steps that need what the model layer cannot see
 * (the store, the plugins, the request's principal, the credentials). kindhooks.c keeps one
 * row for each kind that has any, keyed by the kind's name; a route finds its kind's row
 * once, when the routes are made. A member left NULL (false) adds nothing. */
typedef struct rz__kind_hooks {
	const char *kind;
	/* The plugins' check of a spec write (create, replace, patch), once the kind's own
	 * checks found nothing: obj the object to be written, old the stored one on updates
	 * (else NULL); each problem a cause appended to causes. Not called without plugins. */
	void (*plugins_check)(rz_plugins_t *plugins, const json_t *obj, const json_t *old,
	                      json_t *causes);
	/* A create's check, once the object is valid and named: owner the URL's (borrowed). */
	void (*create_check)(const struct rctx *c, rz_req_t *req, json_t *obj, const char *owner,
	                     json_t *causes);
	/* A spec update's check, once it is valid: old the stored object, next the new one. */
	void (*update_check)(const struct rctx *c, const json_t *old, const json_t *next,
	                     json_t *causes);
	/* Whether cur, the stored object, may be deleted: replies and returns false if not. */
	bool (*delete_check)(const struct rctx *c, rz_req_t *req, const json_t *cur,
	                     const char *name);
	/* A create mints a secret (rz_auth_token_secret) that its reply shows once. */
	bool mints_secret;
	/* In the write's transaction, after the object (rz_write_hook_t's fn, arg the struct
	 * wr): what becomes of the write's secret, the one its secret_field held (hashed) or
	 * the one it minted. Called only for a write that has one; a kind with a secret_field
	 * or mints_secret needs it. */
	int (*stored)(rz_db_t *db, const rz_kind_t *k, const json_t *obj, bool gone, void *arg,
	              rz_err_t *err);
	/* Kubernetes' core v1 has the kind too: it is served in that shape (rz__core_v1_view)
	 * at /api/v1/namespaces/{tenant}/<plural> and at /api/v1/<plural>, where its clients
	 * look (the group path keeps ours); NULL: not. */
	const rz__core_v1_t *core_v1;
	/* The kind's .../{name}/scale (scale.c); NULL: none. */
	const struct rz__scale *scale;
} rz__kind_hooks_t;

/* A route's context: the API, the kind (NULL for routes of no kind), the form, and what is
 * looked up once for the kind: its owner's kind (rz_kind_owner; NULL for global kinds) and
 * its hooks (NULL for routes of no kind); how it shows the kind's objects (NULL: as
 * stored), in its replies to reads and writes. */
struct rctx {
	rz_api_t *api;
	const rz_kind_t *k;
	enum form form;
	const rz_kind_t *owner;
	const rz__kind_hooks_t *hooks;
	const rz__view_t *view;
};

/* The kinds the routes of no kind read (effective.c, summary.c), looked up once, when the
 * API is made (rz__kinds_find). */
typedef struct rz__kinds {
	const rz_kind_t *tenant, *machine, *run, *event, *config_patch;
} rz__kinds_t;

struct rz_api {
	rz_store_t *store;
	rz_watch_hub_t *watches;
	rz_access_t *access;        /* NULL: no audit rows (tests) */
	struct rz_plugins *plugins; /* NULL: no plugin validation (tests) */
	rz_api_admit_fn admit;      /* NULL: none */
	void *admit_arg;
	rz_workers_t *workers; /* password hashing */
	rz_route_t *routes;
	struct rctx *ctxs;
	char **patterns;
	size_t n, npatterns;
	rz__kinds_t kinds;
};

/* includeObject of a Table (rz_api_table_add's include). */
enum include { INCLUDE_NONE, INCLUDE_METADATA, INCLUDE_OBJECT };

/* ------------------------------------------------------------------ replies (reply.c) */

/* Reply the Status for the store's error rc on k's object name (may be NULL); err
 * borrowed. A failure of the store itself is logged and answered 500 (or the disk's
 * trouble, rz_status_storage). */
void rz__reply_store_error(rz_req_t *req, const rz_kind_t *k, const char *name, int rc,
                           const rz_err_t *err);

/* Reply code and out (takes ownership) once the write is durable; text (takes ownership,
 * may be NULL) is out serialised compactly, sent instead of dumping out again. */
void rz__reply_durable(rz_api_t *api, rz_req_t *req, const rz_kind_t *k, int code, json_t *out,
                       char *text);

/* Reply 422 Invalid for k's object name (may be NULL) with causes (borrowed, not empty). */
void rz__reply_invalid(rz_req_t *req, const rz_kind_t *k, const char *name, json_t *causes);

/* Reply obj (takes ownership) with the content type ctype (borrowed); ?pretty indents. */
void rz__reply_typed(rz_req_t *req, int code, const char *ctype, json_t *obj);

/* Whether one media range of the request's Accept header has every parameter of want
 * (each "name=value"; NULL ends it; borrowed). */
bool rz__accept_wants(const rz_req_t *req, const char *const *want);

/* ------------------------------------------------------------------ bodies (validate.c) */

/* The request body as a JSON object, sent as application/json or application/yaml (caller
 * owns the result; json_decref()), or NULL after replying 400/413/415. */
json_t *rz__read_body(rz_req_t *req);

/* The same, a body sent with no Content-Type read as JSON, as the Kubernetes API server
 * reads one: client-go's scale client sends its PUT so (elsewhere a write must name its
 * type). */
json_t *rz__read_body_untyped(rz_req_t *req);

/* The kinds of PATCH, by Content-Type. */
enum rz__patch_type {
	RZ_PATCH_NONE,
	RZ_PATCH_MERGE, /* application/merge-patch+json (RFC 7386): an object */
	RZ_PATCH_JSON,  /* application/json-patch+json (RFC 6902): an array of operations */
	RZ_PATCH_APPLY, /* application/apply-patch+yaml: server-side apply of an object, YAML or
	                   JSON */
};

/* The PATCH's type by its Content-Type, or RZ_PATCH_NONE after replying 415. */
enum rz__patch_type rz__patch_type(rz_req_t *req);

/* A PATCH's body of that type (caller owns the result; json_decref()), or NULL after
 * replying 400/413. */
json_t *rz__read_patch(rz_req_t *req, enum rz__patch_type type);

/* Drop k's top-level members from obj (borrowed): creates and spec writes leave them. */
void rz__drop_top(const rz_kind_t *k, json_t *obj);

/* Validate and normalise a spec write (create, replace, patch) of obj (borrowed, adjusted):
 * the kind's own checks, its plugins' (rz__kind_hooks_t), the admission check, after the
 * request's fieldValidation (rz__drop_unknown). old is the stored object on updates (else
 * NULL). Returns the number of causes appended to causes. */
size_t rz__validate_spec_write(const struct rctx *c, rz_req_t *req, json_t *obj, const json_t *old,
                               json_t *causes);

/* Whether the request's fieldValidation is Strict (or absent: the default here), Warn or
 * Ignore; replies 400 naming it and returns false otherwise. */
bool rz__field_validation_ok(rz_req_t *req);

/* With fieldValidation Warn or Ignore, drop from obj (borrowed, adjusted) what k's schema
 * does not declare (rz_kind_drop_unknown; status: a status write), Warn adding a Warning
 * header for each (at most 16, then one for the rest); with Strict, nothing: the
 * validation refuses them. rz__validate_spec_write calls it. */
void rz__drop_unknown(rz_req_t *req, const rz_kind_t *k, json_t *obj, bool status);

/* Add a Warning header (`299 - "text"`, as Kubernetes sends them; kubectl prints each as
 * "Warning: text"). */
void rz__warn(rz_req_t *req, const char *text);

/* metadata.name and the owner field (metadata.tenant, metadata.user) of obj (borrowed,
 * adjusted) against the URL's owner and name (may be NULL). Replies 400 and returns false
 * on a mismatch; fills in the URL's values when absent, and metadata.namespace beside
 * metadata.tenant. */
bool rz__match_url(rz_req_t *req, const rz_kind_t *k, json_t *obj, const char *owner,
                   const char *name);

/* Give obj (borrowed) a name when it has none; false, with a cause, when nothing names it. */
bool rz__assign_name(const rz_kind_t *k, json_t *obj, json_t *causes);

/* ------------------------------------------------------------------ reads (read.c) */

/* A resourceVersion as Kubernetes spells one (decimal digits only) into *out. */
bool rz__parse_rv(const char *s, int64_t *out);

/* The continue token of a page ending with last (borrowed). Caller owns the result;
 * free(). NULL on out of memory. */
char *rz__continue_token(const rz_kind_t *k, const json_t *last);

/* The current object, shared with the store's cache (never modified; caller owns a
 * reference; json_decref()); replies 404 (or 500) and returns NULL when it cannot. */
json_t *rz__current(struct rctx *c, rz_req_t *req, const char *tenant, const char *name);
/* A GET of one object shown as it is stored (no view, no table, no ?pretty): its stored
 * text is the reply, neither parsed nor dumped again. False when it answered an error. */
bool rz__reply_stored(struct rctx *c, rz_req_t *req, const char *tenant, const char *name);

/* GET of a collection: a list (JSON or Table) or, with ?watch, a watch. tenant borrowed. */
void rz__handle_list(struct rctx *c, rz_req_t *req, const char *tenant);

/* ------------------------------------------------------------------ tables (table.c) */

/* Whether the client asks for a Kubernetes Table (Accept: ...;as=Table;g=meta.k8s.io). */
bool rz__wants_table(const rz_req_t *req);

/* includeObject into *out; replies 400 and returns false on an unknown value. */
bool rz__include_object(rz_req_t *req, enum include *out);

/* Whether a Table leaves the TENANT column out (tenant: the URL's, may be NULL). */
bool rz__hide_tenant(const rz_req_t *req, const char *tenant);

/* A watch's object (borrowed) as a Table of one row (flags: bit 0 hide the tenant, bits
 * 1-2 the include mode). Caller owns the result; free(). */
char *rz__table_render(unsigned flags, const rz_kind_t *k, const json_t *obj);

/* Reply cur (takes ownership) as a Table of one row. */
void rz__table_get(struct rctx *c, rz_req_t *req, const char *tenant, json_t *cur);

/* Reply a list page as a Table; o's selectors are borrowed. */
void rz__table_list(struct rctx *c, rz_req_t *req, const rz_lists_opts_t *o);

/* ------------------------------------------------------------------ writes (write.c) */

/* A validated write on its way to the store, possibly through the worker pool (password
 * hashing never runs on the loop). */
struct wr {
	struct rctx *c;
	rz_req_t *req;
	bool create;
	char *owner, *name;
	json_t *obj;
	int64_t expect_rv;
	rz_update_mode_t mode;
	int code;
	char *secret; /* a password in clear, until hashed */
	char hash[RZ_PASSWORD_HASH_LEN];
	bool hashed;
	char token[RZ_TOKEN_SECRET_LEN + 1]; /* a new API token's secret, returned once */
	bool dry;                            /* dryRun=All: answer, store nothing */
	json_t *cur;                         /* an update's current object, as read */
};

/* An update of an object (replace, patch, apply), validated and sent on its way by
 * rz__update. */
struct rz__update {
	const char *tenant, *name; /* the URL's; borrowed */
	json_t *obj;               /* the object to write; taken */
	const json_t *cur;         /* the stored object it replaces; borrowed */
	int64_t rv;                /* the revision it must still be */
	bool dry;                  /* dryRun=All */
	json_t *managed;           /* its metadata.managedFields (taken), or NULL: record the
	                              write as an Update by the request's manager */
};

/* Validate a create of obj (taken) and send it on its way, replying 201 (or why not);
 * managed as in struct rz__update. */
void rz__create(struct rctx *c, rz_req_t *req, const char *tenant, json_t *obj, bool dry,
                json_t *managed);

/* Validate an update and send it on its way, replying 200 (or why not); causes (borrowed)
 * holds the problems found so far. u's members taken are released. */
void rz__update(struct rctx *c, rz_req_t *req, struct rz__update *u, json_t *causes);

/* metadata.resourceVersion of a body: 0 when absent; a string that is no revision is a
 * cause (never taken for "no precondition"). */
int64_t rz__body_rv(const json_t *obj, json_t *causes);

/* POST, PUT, PATCH and DELETE of c's kind; tenant (the owner) and name borrowed. */
void rz__handle_create(struct rctx *c, rz_req_t *req, const char *tenant);
void rz__handle_replace(struct rctx *c, rz_req_t *req, const char *tenant, const char *name);
void rz__handle_patch(struct rctx *c, rz_req_t *req, const char *tenant, const char *name);
void rz__handle_delete(struct rctx *c, rz_req_t *req, const char *tenant, const char *name);

/* ------------------------------------------------------------------ managers (apply.c) */

/* PatchOptions: fieldManager required for an apply, force only with one (both 422 Invalid,
 * as kube-apiserver); force as ParseBool reads it into *force (else 400); a PATCH other
 * than an apply on a kind that takes PATCH only to apply is 405. False after replying. */
bool rz__patch_options(const struct rctx *c, rz_req_t *req, enum rz__patch_type type, bool *force);

/* Take metadata.managedFields out of a written object (borrowed, adjusted): a client writes
 * them only by apply; true when they asked to clear them ([] or [{}], as Kubernetes). */
bool rz__managed_strip(json_t *obj);

/* Record a write of obj (borrowed; metadata.managedFields set) over cur (NULL for a create)
 * as an Update by the request's manager: fieldManager, else the User-Agent up to its first
 * '/', else "unknown"; reset: start from no managers. 0; -E2BIG with a cause appended when
 * metadata.managedFields would grow too long; -ENOMEM. */
int rz__managed_record(const struct rctx *c, rz_req_t *req, const json_t *cur, json_t *obj,
                       bool reset, json_t *causes);

/* Whether a fieldManager is one Kubernetes takes: at most RZ_FIELD_MANAGER_MAX bytes of
 * UTF-8, no control characters. */
bool rz__manager_ok(const char *fm);

/* Set obj's metadata.managedFields (obj borrowed; its metadata made an object): managed
 * (taken), an apply's, or else the write recorded as an Update over cur (NULL for a create,
 * rz__managed_record). False after replying 500; a cause appended when they would grow too
 * long. */
bool rz__managed_set(const struct rctx *c, rz_req_t *req, const json_t *cur, json_t *obj,
                     bool reset, json_t *managed, json_t *causes);

/* PATCH with application/apply-patch+yaml: server-side apply of config (taken) to the
 * object name, created when it does not exist (201) where the kind may be created. */
void rz__handle_apply(struct rctx *c, rz_req_t *req, const char *tenant, const char *name,
                      json_t *config, bool dry, bool force);

/* What another route's writes (scale.c) share with these: the write options (dryRun into
 * *dry; replies 400 and returns false when bad); a JSON patch of cur (borrowed) into *next
 * (caller owns), or the reply why not; and a spec update of c's kind to obj (takes
 * ownership) over cur (borrowed) with the precondition rv, validated, admitted, audited,
 * stored and replied (as c's view shows it) as a replace or patch is. */
bool rz__write_options(rz_req_t *req, bool *dry);
bool rz__apply_json_patch(struct rctx *c, rz_req_t *req, const char *name, const json_t *cur,
                          const json_t *patch, json_t **next);
void rz__update_spec(struct rctx *c, rz_req_t *req, const char *tenant, const char *name,
                     json_t *obj, const json_t *cur, int64_t rv, bool dry);

/* ------------------------------------------------------------------ kinds (kindhooks.c) */

/* k's hooks: its row of the table, or a row adding nothing (k NULL too). Borrowed —
 * static. */
const rz__kind_hooks_t *rz__kind_hooks_of(const rz_kind_t *k);

/* Look up the kinds of rz__kinds_t into *out; false when the kind table lacks one. */
bool rz__kinds_find(rz__kinds_t *out);

/* ------------------------------------------------------------------ routes of no kind */

/* Whether the request is on the Kubernetes group path (/apis/rezuscloud.io/v1/...). */
bool rz__on_group_path(const rz_req_t *req);

/* GET /api/v1 (and the group path), /api and /apis: discovery (discovery.c). */
void rz__handle_discovery(rz_req_t *req, void *ctx);
void rz__handle_api_versions(rz_req_t *req, void *ctx);
void rz__handle_api_groups(rz_req_t *req, void *ctx);
extern const rz_route_doc_t rz__discovery_doc[];
extern const rz_route_doc_t rz__api_versions_doc[];
extern const rz_route_doc_t rz__api_groups_doc[];

/* GET /api/v1/tenants/{tenant}/effectivepatches/{role} (effective.c). */
void rz__handle_effective(rz_req_t *req, void *ctx);
extern const rz_route_doc_t rz__effective_doc[];

/* GET /api/v1/summary (summary.c). */
void rz__handle_summary(rz_req_t *req, void *ctx);
extern const rz_route_doc_t rz__summary_doc[];

/* ------------------------------------------------------------------ other shapes */

/* Kubernetes' core v1 shape (corev1.c), and the Event kind's routes in it. */
extern const rz__view_t rz__core_v1_view;
extern const rz__core_v1_t rz__core_v1_events;

/* GET, PUT and PATCH of .../{name}/scale: the object's autoscaling/v1 Scale, its hooks'
 * scale_field as spec.replicas (scale.c); rz__scale_view shows an object so. */
void rz__handle_scale(rz_req_t *req, void *ctx);
extern const rz__view_t rz__scale_view;
extern const rz_route_doc_t rz__scale_doc[];

#endif /* RZ_API_INT_H */
