/* core/model/kinds.c - the resource kinds (SPEC §4): the table, metadata, what several kinds
 * share, and the functions of kinds.h. Each kind's field schemas: schema-*.c (kinds-int.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/model/kinds.h"
#include "core/model/kinds-int.h"
#include "core/model/managed.h"

/* ------------------------------------------------------------------ shared pieces */

static const char *const condition_status[] = { "True", "False", "Unknown", NULL };

const rz_field_t rz__schema_condition_fields[] = {
	{ .name = "type",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 316,
	  .doc = "The condition's type, UpperCamelCase, unique in the list: Ready, Reconciled, "
	         "MachinesReady, ControlPlaneReady or Drifted on a Tenant, Ready on a NodeGroup, "
	         "Scheduled on a Run." },
	{ .name = "status",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = condition_status,
	  .doc = "True, False or Unknown: whether the condition holds; Unknown while the daemon "
	         "cannot tell." },
	{ .name = "reason",
	  .type = RZ_F_STRING,
	  .max_len = 1024,
	  .doc = "Why the condition has its status, one UpperCamelCase word for programs "
	         "(ApplySucceeded, NoRunner, ...); at most 1024 characters." },
	{ .name = "message",
	  .type = RZ_F_STRING,
	  .max_len = 32768,
	  .doc = "The same for people: what happened, with detail such as an error's text; at most "
	         "32768 characters." },
	{ .name = "lastTransitionTime",
	  .type = RZ_F_TIME,
	  .doc = "When status last changed (RFC 3339, UTC); a write that keeps the status keeps "
	         "the time." },
	{ .name = "observedGeneration",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 0,
	  .max = INT64_MAX,
	  .doc = "The object's metadata.generation the condition was set for: older than "
	         "metadata.generation, it may not reflect the latest spec." },
	F_END,
};

/* ------------------------------------------------------------------ metadata */

static const rz_field_t metadata_fields[] = {
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "The object's name: a DNS-1123 label (lower-case letters, digits and '-', at most "
	         "63 characters), unique among the objects of its kind (in its tenant, for "
	         "tenant-scoped kinds). Set at creation; cannot change." },
	{ .name = "generateName",
	  .type = RZ_F_STRING,
	  .max_len = 58,
	  .doc = "On create without a name: a prefix (at most 58 characters) to which the server "
	         "appends five random characters to make the name." },
	{ .name = "user",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "The user who owns the object (APIToken): the {user} of its path; set by the "
	         "server." },
	{ .name = "tenant",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "The tenant the object belongs to (tenant-scoped kinds): the {tenant} of its "
	         "path; set by the server." },
	{ .name = "namespace",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "The tenant again, as Kubernetes clients name it (tenant-scoped kinds): the "
	         "{namespace} of the group path; set by the server." },
	{ .name = "uid",
	  .type = RZ_F_STRING,
	  .max_len = 36,
	  .doc = "A UUID the server gives the object at creation, never reused: tells it from a "
	         "later object of the same name. Read-only." },
	{ .name = "resourceVersion",
	  .type = RZ_F_STRING,
	  .max_len = 20,
	  .doc = "The store's revision at the object's last write, opaque (decimal digits): a "
	         "write that carries it is refused with 409 Conflict when the object changed "
	         "since; a watch resumes after it. Set by the server." },
	{ .name = "generation",
	  .type = RZ_F_INT,
	  .doc = "A counter of changes to spec, from 1; writes of status or metadata leave it. Set "
	         "by the server; status.observedGeneration says which one the daemon acted on." },
	{ .name = "creationTimestamp",
	  .type = RZ_F_TIME,
	  .doc = "When the object was created (RFC 3339, UTC). Set by the server." },
	{ .name = "deletionTimestamp",
	  .type = RZ_F_TIME,
	  .doc = "When its deletion was asked for (RFC 3339, UTC), while finalizers still hold the "
	         "object (a Tenant during its destroy run). Set by the server." },
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = 64,
	  .doc = "Key-value pairs that selectors match (labelSelector, AccessBinding tenant "
	         "selectors): Kubernetes label syntax, keys an optional DNS prefix and '/' then at "
	         "most 63 characters, values at most 63; at most 64 labels." },
	{ .name = "annotations",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .max_len = 64,
	  .max_bytes = RZ_ANNOTATIONS_MAX,
	  .doc = "Key-value pairs for tools and people, not matched by selectors: Kubernetes "
	         "annotation keys, at most 64 annotations and 256 KiB together." },
	{ .name = "finalizers",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_qualified_name,
	  .unique = true,
	  .max_len = 32,
	  .doc = "Qualified names of what must finish before the object is removed (a Tenant gets "
	         "rezuscloud.io/teardown: its destroy run); a deleted object stays, with "
	         "metadata.deletionTimestamp, until the list is empty. At most 32." },
	{ .name = "managedFields",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = rz_managed_entry_fields,
	  .doc = "Who owns which fields (server-side apply): an entry per field manager, "
	         "operation and subresource. Written by the server; a write of [] clears them." },
	F_END,
};

const rz_field_t *rz_kind_metadata_fields(void)
{
	return metadata_fields;
}
/* ------------------------------------------------------------------ runner selectors */

/* Into merged: sel's pairs (sel of who: "the tenant", "node group 'x'"), each key's first
 * source kept in from. A key another source gave another value: false, why filled. */
static bool merge_selector(json_t *merged, json_t *from, const json_t *sel, const char *who,
                           char *why, size_t size)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)sel, key, v)
	{
		json_t *have = json_object_get(merged, key);
		if (have == NULL) {
			json_object_set(merged, key, v);
			json_object_set_new(from, key, json_string(who));
		} else if (!json_equal(have, v)) {
			snprintf(
			    why, size,
			    "%s and %s conflict on runnerSelector key '%s' ('%s' against '%s'): "
			    "no runner can match both",
			    json_string_value(json_object_get(from, key)), who, key,
			    json_string_value(have) ?: "", json_string_value(v) ?: "");
			return false;
		}
	}
	return true;
}

json_t *rz_kind_runner_serves(const json_t *runner)
{
	const json_t *granted = json_object_get(json_object_get(runner, "spec"), "labels");
	const json_t *said = json_object_get(json_object_get(runner, "status"), "labels");
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)said, key, v)
	{
		if (json_is_string(v) && json_equal(json_object_get(granted, key), v)) {
			json_object_set(out, key, v);
		}
	}
	return out;
}

int rz_kind_runner_selector(const json_t *tenant, const json_t *nodegroups, json_t **out,
                            rz_err_t *err)
{
	json_t *merged = json_object(), *from = json_object(), *ng;
	char why[REZUS_ERR_MSG_MAX] = "", who[96];
	bool ok = merged != NULL && from != NULL;
	size_t i;

	*out = NULL;
	ok =
	    ok && merge_selector(merged, from,
	                         json_object_get(json_object_get(tenant, "spec"), "runnerSelector"),
	                         "the tenant", why, sizeof(why));
	json_array_foreach(nodegroups, i, ng)
	{
		if (!ok) {
			break;
		}
		snprintf(who, sizeof(who), "node group '%.64s'",
		         json_string_value(json_object_get(json_object_get(ng, "metadata"), "name"))
		             ?: "");
		ok = merge_selector(merged, from,
		                    json_object_get(json_object_get(ng, "spec"), "runnerSelector"),
		                    who, why, sizeof(why));
	}
	if (ok && json_object_size(merged) > RZ__SELECTOR_MAX) {
		snprintf(why, sizeof(why),
		         "the runnerSelectors of the tenant and its node groups make %zu labels "
		         "together: at most %d",
		         json_object_size(merged), RZ__SELECTOR_MAX);
		ok = false;
	}
	json_decref(from);
	if (!ok) {
		json_decref(merged);
		return rz_err_set(err, why[0] != '\0' ? REZUS_EINVALID : -ENOMEM, "%s",
		                  why[0] != '\0' ? why : "out of memory");
	}
	*out = merged;
	return 0;
}

/* ------------------------------------------------------------------ the table */

static const char *const tenant_short[] = { "tn", NULL };
static const char *const tenant_finalizers[] = { "rezuscloud.io/teardown", NULL };
static const char *const nodegroup_short[] = { "ng", NULL };
static const char *const configpatch_short[] = { "cp", NULL };
static const char *const machine_short[] = { "mc", NULL };
static const char *const upgrade_short[] = { "up", NULL };
static const char *const etcdbackup_short[] = { "eb", NULL };
static const char *const etcdbackup_finalizers[] = { "rezuscloud.io/stored-snapshot", NULL };
static const char *const etcdrestore_short[] = { "er", NULL };
static const char *const event_short[] = { "ev", NULL };
static const char *const event_selectable[] = { "involvedObject.kind",
	                                        "involvedObject.name",
	                                        "involvedObject.namespace",
	                                        "involvedObject.uid",
	                                        "involvedObject.apiVersion",
	                                        "reason",
	                                        "type",
	                                        NULL };
static const char *const provider_short[] = { "pv", NULL };
static const char *const runner_short[] = { "rn", NULL };
static const char *const binding_short[] = { "ab", NULL };
static const char *const no_short[] = { NULL };

/* Everyone reads, editors write, only controllers (admins) write status. */
#define STD_ROLES                                                                                  \
	.read_role = RZ_ROLE_VIEW, .write_role = RZ_ROLE_EDIT, .status_role = RZ_ROLE_ADMIN

static const rz_kind_t kinds[] = {
	{ .kind = "Tenant",
	  .plural = "tenants",
	  .singular = "tenant",
	  .short_names = tenant_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL,
	  .doc = "a Kubernetes cluster on Talos Linux",
	  .spec = rz__schema_tenant_spec,
	  .status = rz__schema_tenant_status,
	  .finalizers = tenant_finalizers,
	  .check = rz__schema_tenant_check,
	  .initial_status = "{\"phase\": \"Pending\"}",
	  STD_ROLES },
	{ .kind = "NodeGroup",
	  .plural = "nodegroups",
	  .singular = "nodegroup",
	  .short_names = nodegroup_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_ALL,
	  .doc = "a set of machines of one role on one provider",
	  .spec = rz__schema_nodegroup_spec,
	  .status = rz__schema_nodegroup_status,
	  .check = rz__schema_nodegroup_check,
	  STD_ROLES },
	{ .kind = "ConfigPatch",
	  .plural = "configpatches",
	  .singular = "configpatch",
	  .short_names = configpatch_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a Talos machine config overlay",
	  .spec = rz__schema_configpatch_spec,
	  .status = NULL,
	  STD_ROLES },
	{ .kind = "Machine",
	  .plural = "machines",
	  .singular = "machine",
	  .short_names = machine_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_STATUS,
	  .doc = "a node, projected from the tenant's TF state",
	  .spec = rz__schema_machine_spec,
	  .status = rz__schema_machine_status,
	  STD_ROLES },
	{ .kind = "Run",
	  .plural = "runs",
	  .singular = "run",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_STATUS,
	  .doc = "one tofu execution",
	  .spec = rz__schema_run_spec,
	  .status = rz__schema_run_status,
	  .name_prefix = "run-",
	  .check = rz__schema_run_check,
	  .initial_status = "{\"phase\": \"Queued\"}",
	  STD_ROLES },
	{ .kind = "UpgradeRun",
	  .plural = "upgrades",
	  .singular = "upgrade",
	  .short_names = upgrade_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_DELETE | RZ_VERB_STATUS,
	  .doc = "a rolling Talos or Kubernetes upgrade",
	  .spec = rz__schema_upgrade_spec,
	  .status = rz__schema_upgrade_status,
	  .name_prefix = "upgrade-",
	  .check = rz__schema_upgrade_check,
	  .initial_status = "{\"phase\": \"Pending\"}",
	  STD_ROLES },
	{ .kind = "EtcdBackup",
	  .plural = "etcdbackups",
	  .singular = "etcdbackup",
	  .short_names = etcdbackup_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_DELETE | RZ_VERB_STATUS,
	  .doc = "a snapshot of a tenant's etcd, encrypted and stored off the host: create "
	         "one to snapshot now; deleting one deletes its stored file",
	  .spec = rz__schema_etcd_backup_spec,
	  .status = rz__schema_etcd_backup_status,
	  .name_prefix = "etcd-",
	  .finalizers = etcdbackup_finalizers,
	  .check = rz__schema_etcd_backup_check,
	  .initial_status = "{\"phase\": \"Pending\"}",
	  STD_ROLES },
	{ .kind = "EtcdRestore",
	  .plural = "etcdrestores",
	  .singular = "etcdrestore",
	  .short_names = etcdrestore_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_DELETE | RZ_VERB_STATUS,
	  .doc = "the restore of an EtcdBackup onto a tenant whose control plane is lost, step "
	         "by step (or its dry run)",
	  .spec = rz__schema_etcd_restore_spec,
	  .status = rz__schema_etcd_restore_status,
	  .name_prefix = "restore-",
	  .check = rz__schema_etcd_restore_check,
	  .initial_status = "{\"phase\": \"Pending\"}",
	  .read_role = RZ_ROLE_VIEW,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN },
	{ .kind = "Event",
	  .plural = "events",
	  .singular = "event",
	  .short_names = event_short,
	  .scope = RZ_SCOPE_TENANT,
	  .verbs = RZ_VERBS_READ,
	  .doc = "what the engine or the observer noticed about an "
	         "object, counted",
	  .top = rz__schema_event_fields,
	  .selectable = event_selectable,
	  STD_ROLES },
	{ .kind = "Provider",
	  .plural = "providers",
	  .singular = "provider",
	  .short_names = provider_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_READ,
	  .doc = "a loaded provider plugin",
	  .spec = rz__schema_provider_spec,
	  .status = rz__schema_provider_status,
	  STD_ROLES },
	{ .kind = "Runner",
	  .plural = "runners",
	  .singular = "runner",
	  .short_names = runner_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a remote runner (rezuscloud runner): the labels an admin grants it (spec), "
	         "and what the daemon keeps from its NATS heartbeats (status)",
	  .spec = rz__schema_runner_spec,
	  .status = rz__schema_runner_status, /* the daemon's only */
	  .read_role = RZ_ROLE_VIEW,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN },
	{ .kind = "AccessBinding",
	  .plural = "accessbindings",
	  .singular = "accessbinding",
	  .short_names = binding_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a role (view, edit, admin) on some tenants, granted to users and groups "
	         "beside their role on the whole installation (docs/security.md, \"Access per "
	         "tenant\")",
	  .spec = rz__schema_binding_spec,
	  .check = rz__schema_binding_check,
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN },
	{ .kind = "User",
	  .plural = "users",
	  .singular = "user",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERBS_ALL & ~RZ_VERB_STATUS,
	  .doc = "a person or robot who signs in",
	  .spec = rz__schema_user_spec,
	  .status = rz__schema_user_status,
	  .check = rz__schema_user_check,
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN,
	  .secret_field = "password" },
	{ .kind = "APIToken",
	  .plural = "tokens",
	  .singular = "token",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_USER,
	  .verbs = RZ_VERBS_READ | RZ_VERB_CREATE | RZ_VERB_DELETE,
	  .doc = "a bearer token acting for its user",
	  .spec = rz__schema_token_spec,
	  .status = rz__schema_token_status,
	  .check = rz__schema_token_check,
	  .name_prefix = "tok-",
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN,
	  .owner_may = true },
	{ .kind = "Backup",
	  .plural = "backups",
	  .singular = "backup",
	  .short_names = no_short,
	  .scope = RZ_SCOPE_GLOBAL,
	  .verbs = RZ_VERB_GET | RZ_VERB_LIST | RZ_VERB_CREATE | RZ_VERB_DELETE,
	  .doc = "a backup of the management plane: the database with "
	         "every TF state version, the state key sealed or "
	         "left out (core/api/backups.c)",
	  .spec = rz__schema_backup_spec,
	  .status = rz__schema_backup_status,
	  .name_prefix = "backup-",
	  .read_role = RZ_ROLE_ADMIN,
	  .write_role = RZ_ROLE_ADMIN,
	  .status_role = RZ_ROLE_ADMIN,
	  .outside_store = true }
};

const rz_kind_t *rz_kinds(size_t *count)
{
	*count = sizeof(kinds) / sizeof(kinds[0]);
	return kinds;
}

size_t rz_kind_validate_top(const rz_kind_t *k, const json_t *obj, json_t *causes)
{
	json_t *sub; /* the members alone; shared with obj, and only read */
	size_t n;

	if (k->top == NULL) {
		return 0;
	}
	if ((sub = json_object()) == NULL) {
		rz_fields_cause(causes, "", RZ_CAUSE_INVALID, "out of memory");
		return 1;
	}
	for (const rz_field_t *f = k->top; f->name != NULL; f++) {
		if (json_object_get(obj, f->name) != NULL) {
			json_object_set(sub, f->name, json_object_get(obj, f->name));
		}
	}
	n = (size_t)rz_fields_validate(sub, k->top, "", false, causes);
	json_decref(sub);
	return n;
}

const rz_kind_t *rz_kind_by_plural(const char *plural)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].plural, plural) == 0) {
			return &kinds[i];
		}
	}
	return NULL;
}

const rz_kind_t *rz_kind_by_name(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].kind, kind) == 0) {
			return &kinds[i];
		}
	}
	return NULL;
}

const char *rz_kind_owner_field(const rz_kind_t *k)
{
	switch (k->scope) {
	case RZ_SCOPE_TENANT:
		return "tenant";
	case RZ_SCOPE_USER:
		return "user";
	default:
		return NULL;
	}
}

const rz_kind_t *rz_kind_owner(const rz_kind_t *k)
{
	switch (k->scope) {
	case RZ_SCOPE_TENANT:
		return rz_kind_by_name("Tenant");
	case RZ_SCOPE_USER:
		return rz_kind_by_name("User");
	default:
		return NULL;
	}
}

bool rz_kind_tenanted(const rz_kind_t *k)
{
	return k->scope == RZ_SCOPE_TENANT || strcmp(k->kind, "Tenant") == 0;
}

int rz_kind_role(const rz_kind_t *k, unsigned verb)
{
	if (verb & RZ_VERBS_READ) {
		return k->read_role;
	}
	return verb == RZ_VERB_STATUS ? k->status_role : k->write_role;
}

const char *rz_verb_name(unsigned verb)
{
	static const char *const names[] = { "get",    "list",  "watch",  "create",
		                             "update", "patch", "delete", "update status" };
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (verb == (1u << i)) {
			return names[i];
		}
	}
	return "unknown";
}

/* apiVersion and kind, when given, are this kind's; no member but the known ones. */
static void check_top(const rz_kind_t *k, json_t *obj, json_t *causes)
{
	static const char *const top[] = { "apiVersion", "kind", "metadata", "spec", "status" };
	const char *key;
	json_t *v;
	json_t *api = json_object_get(obj, "apiVersion");
	json_t *kind = json_object_get(obj, "kind");

	if (api != NULL &&
	    (!json_is_string(api) || (strcmp(json_string_value(api), RZ_API_VERSION) != 0 &&
	                              strcmp(json_string_value(api), "v1") != 0))) {
		rz_fields_cause(causes, "apiVersion", RZ_CAUSE_NOT_SUPPORTED,
		                "supported values: \"%s\", \"v1\"", RZ_API_VERSION);
	}
	if (kind != NULL && (!json_is_string(kind) || strcmp(json_string_value(kind), k->kind))) {
		rz_fields_cause(causes, "kind", RZ_CAUSE_NOT_SUPPORTED, "supported values: \"%s\"",
		                k->kind);
	}
	json_object_foreach(obj, key, v)
	{
		bool known = false;
		for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
			known = known || strcmp(key, top[i]) == 0;
		}
		for (const rz_field_t *f = k->top; f != NULL && f->name != NULL; f++) {
			known = known || strcmp(key, f->name) == 0;
		}
		if (!known) {
			rz_fields_cause(causes, key, RZ_CAUSE_INVALID, "unknown field");
		}
	}
}

size_t rz_kind_drop_unknown(const rz_kind_t *k, json_t *obj, bool status, json_t *dropped)
{
	static const char *const kept[] = { "apiVersion", "kind", "metadata", "spec", "status" };
	const char *key;
	json_t *v;
	void *tmp;
	size_t n = 0;

	json_object_foreach_safe(obj, tmp, key, v)
	{
		const rz_field_t *f = k->top;
		bool known = false;

		for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
			known = known || strcmp(key, kept[i]) == 0;
		}
		while (f != NULL && f->name != NULL && strcmp(f->name, key) != 0) {
			f++;
		}
		if (strcmp(key, "metadata") == 0) {
			n += rz_fields_drop_unknown(v, rz_kind_metadata_fields(), key, dropped);
		} else if (strcmp(key, "spec") == 0 && !status) {
			n += rz_fields_drop_unknown(v, k->spec, key, dropped);
		} else if (strcmp(key, "status") == 0 && status) {
			n += rz_fields_drop_unknown(v, k->status, key, dropped);
		} else if (f != NULL && f->name != NULL) {
			n += rz_fields_drop_unknown_member(v, f, key, dropped);
		} else if (!known) {
			if (dropped != NULL) {
				json_array_append_new(dropped, json_string(key));
			}
			json_object_del(obj, key);
			n++;
		}
	}
	return n;
}

size_t rz_kind_validate_spec_write(const rz_kind_t *k, json_t *obj, const json_t *old,
                                   json_t *causes)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *spec = json_object_get(obj, "spec");

	check_top(k, obj, causes);
	if (meta == NULL || json_is_null(meta)) {
		json_object_set_new(obj, "metadata", json_object());
	} else if (!json_is_object(meta)) {
		rz_fields_cause(causes, "metadata", RZ_CAUSE_INVALID, "expected an object");
	} else {
		rz_fields_validate(meta, rz_kind_metadata_fields(), "metadata", false, causes);
	}
	if (spec == NULL || json_is_null(spec)) {
		spec = json_object();
		json_object_set_new(obj, "spec", spec);
	}
	if (!json_is_object(spec)) {
		rz_fields_cause(causes, "spec", RZ_CAUSE_INVALID, "expected an object");
	} else if (old == NULL || !json_equal(spec, json_object_get(old, "spec"))) {
		/* an unchanged spec (a write of labels, annotations or finalizers) passed when it
		 * was written: checking it again would only refuse old objects new rules reject */
		rz_fields_validate(spec, k->spec, "spec", true, causes);
	}
	if (json_array_size(causes) == 0 && k->check != NULL) {
		k->check(k, obj, old, causes);
	}
	return json_array_size(causes);
}

size_t rz_kind_validate_status_write(const rz_kind_t *k, json_t *obj, json_t *causes)
{
	json_t *status = json_object_get(obj, "status");

	check_top(k, obj, causes);
	rz_kind_validate_top(k, obj, causes);
	if (status == NULL || json_is_null(status)) {
		return json_array_size(causes);
	}
	if (!json_is_object(status)) {
		rz_fields_cause(causes, "status", RZ_CAUSE_INVALID, "expected an object");
	} else if (k->status == NULL) {
		rz_fields_cause(causes, "status", RZ_CAUSE_FORBIDDEN, "%s has no status", k->kind);
	} else {
		rz_fields_validate(status, k->status, "status", false, causes);
	}
	return json_array_size(causes);
}
