/* core/model/schema-access.c - the field schemas and checks of Provider, User, APIToken, Runner
 * and AccessBinding (SPEC §4), for the kind table (core/model/kinds.c). */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "core/model/kinds-int.h"
#include "core/base/clock.h"

static const char *const provider_kinds[] = { "infra", "cluster", NULL };

/* ------------------------------------------------------------------ Provider */

const rz_field_t rz__schema_provider_spec[] = {
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .doc = "The plugin's name, as providerClass and clusterProvider name it." },
	{ .name = "version", .type = RZ_F_STRING, .doc = "The plugin's own version." },
	{ .name = "abiVersion",
	  .type = RZ_F_STRING,
	  .doc = "The plugin ABI version it was built for, MAJOR.MINOR." },
	{ .name = "description", .type = RZ_F_STRING, .doc = "What it provides, in its words." },
	{ .name = "kinds",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .enums = provider_kinds,
	  .doc = "What it provides: infra (machines, named by a node group's providerClass) and/or "
	         "cluster (the Kubernetes made on them, named by a tenant's clusterProvider)." },
	{ .name = "configSchema",
	  .type = RZ_F_ANY,
	  .doc = "The JSON schema of its section of rezus.conf (plugins.<name>)." },
	{ .name = "providerConfigSchema",
	  .type = RZ_F_ANY,
	  .doc = "The JSON schema a node group's spec.providerConfig is validated against." },
	F_END,
};

const rz_field_t rz__schema_provider_status[] = {
	{ .name = "loaded",
	  .type = RZ_F_BOOL,
	  .doc = "Whether the daemon loaded and initialised it." },
	{ .name = "error", .type = RZ_F_STRING, .doc = "Why it failed to load or initialise." },
	F_END,
};

/* ------------------------------------------------------------------ User, APIToken */

/* "none": no role on the installation; what AccessBindings grant on tenants only */
static const char *const user_roles[] = { "none", "view", "edit", "admin", NULL };

static bool password_valid(const char *s, char *msg, size_t size)
{
	size_t len = strlen(s);

	if (len < 8 || len > 1024) {
		snprintf(msg, size, "must be 8 to 1024 characters");
		return false;
	}
	return true;
}

/* Set for a user single sign-on made: who it is at the provider. */
static const rz_field_t user_identity[] = {
	{ .name = "issuer",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 256,
	  .doc = "the OpenID provider's issuer" },
	{ .name = "subject",
	  .type = RZ_F_STRING,
	  .required = true,
	  .max_len = 255,
	  .doc = "the user's subject (sub) there" },
	F_END,
};

const rz_field_t rz__schema_user_spec[] = {
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = user_roles,
	  .doc = "The user's role on the whole installation: none (only what AccessBindings grant, "
	         "on some tenants), view (read), edit (read and write), admin (also users, tokens, "
	         "backups, bindings and status)." },
	{ .name = "password",
	  .type = RZ_F_STRING,
	  .format = password_valid,
	  .format_name = "password",
	  .doc =
	      "The password (8 to 1024 characters) on create and to set a new one: write-only, "
	      "stored as an Argon2id hash and never returned. A user of single sign-on has none." },
	{ .name = "disabled",
	  .type = RZ_F_BOOL,
	  .def = "false",
	  .doc = "true: the user cannot sign in and their tokens are refused (default false)." },
	{ .name = "groups",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .max_len = RZ_USER_GROUPS_MAX,
	  .unique = true,
	  .doc = "the groups the user is in, which AccessBindings may name (subjects of kind "
	         "Group)" },
	{ .name = "identity",
	  .type = RZ_F_OBJECT,
	  .fields = user_identity,
	  .doc = "set by single sign-on when it made the user (at its first login), never "
	         "through the API: such a user has no password and signs in at its provider" },
	F_END,
};

const rz_field_t rz__schema_user_status[] = {
	{ .name = "lastLogin",
	  .type = RZ_F_TIME,
	  .doc = "When the user last signed in (RFC 3339, UTC)." },
	{ .name = "mustChangePassword",
	  .type = RZ_F_BOOL,
	  .doc = "The user must change the password before anything else (the first admin's "
	         "generated one)." },
	F_END,
};

/* A new user needs a password; names are DNS labels like every object's. spec.identity is
 * single sign-on's: the API neither sets nor changes it, and a user with one has no
 * password. */
void rz__schema_user_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *id = json_object_get(spec, "identity");
	const json_t *was = json_object_get(json_object_get(old, "spec"), "identity");

	(void)k;
	if (!(id == NULL && was == NULL) && !json_equal(id, was)) {
		rz_fields_cause(causes, "spec.identity", RZ_CAUSE_FORBIDDEN,
		                "set by single sign-on at the user's first login, never through "
		                "the API");
	} else if (id != NULL && json_object_get(spec, "password") != NULL) {
		rz_fields_cause(causes, "spec.password", RZ_CAUSE_FORBIDDEN,
		                "a user of single sign-on has no password");
	} else if (old == NULL && json_object_get(spec, "password") == NULL) {
		rz_fields_cause(causes, "spec.password", RZ_CAUSE_REQUIRED, "required");
	}
}

/* A token made already expired would be refused at its first use: say so at its making. */
void rz__schema_token_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const char *at =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "expiresAt"));
	int64_t ms = at != NULL ? rz_clock_parse(at) : -1;

	const char *scope =
	    json_string_value(json_object_get(json_object_get(obj, "spec"), "scope"));
	bool runner = json_object_get(json_object_get(obj, "spec"), "runner") != NULL;

	(void)k;
	if (old == NULL && ms >= 0 && ms <= rz_clock_now_ms()) {
		rz_fields_cause(causes, "spec.expiresAt", RZ_CAUSE_INVALID,
		                "must be in the future (a token that has expired cannot be used)");
	}
	/* a runner token speaks for one runner: a claim under another runner's name is 403 */
	if (scope != NULL && strcmp(scope, "runner") == 0 && !runner) {
		rz_fields_cause(causes, "spec.runner", RZ_CAUSE_REQUIRED,
		                "required with spec.scope runner: the runner (runner.name) the "
		                "token belongs to");
	} else if ((scope == NULL || strcmp(scope, "runner") != 0) && runner) {
		rz_fields_cause(causes, "spec.runner", RZ_CAUSE_FORBIDDEN,
		                "only with spec.scope runner");
	}
}

static const char *const token_scopes[] = { "runner", NULL };

const rz_field_t rz__schema_token_spec[] = {
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .enums = user_roles,
	  .doc = "at most the owner's role; the owner's role when absent" },
	{ .name = "scope",
	  .type = RZ_F_STRING,
	  .enums = token_scopes,
	  .doc = "runner: the token of a remote runner, good only to claim runs and report "
	         "their files (docs/runners.md); absent: every route its role allows" },
	{ .name = "runner",
	  .type = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .format_name = "dns1123-label",
	  .doc = "with spec.scope runner (and only then; required): the Runner the token "
	         "belongs to; it claims runs and reports files under that name only" },
	{ .name = "expiresAt",
	  .type = RZ_F_TIME,
	  .doc = "When the token stops working (RFC 3339, UTC, in the future); absent: never." },
	{ .name = "description",
	  .type = RZ_F_STRING,
	  .max_len = 256,
	  .doc = "What the token is for, at most 256 characters." },
	F_END,
};

const rz_field_t rz__schema_token_status[] = {
	{ .name = "lastUsed",
	  .type = RZ_F_TIME,
	  .doc = "When the token was last used (RFC 3339, UTC)." },
	F_END,
};

/* ------------------------------------------------------------------ Runner */

static const char *const runner_phases[] = { "Ready", "Stopping", "Lost", "Offline", NULL };

const rz_field_t rz__schema_runner_spec[] = {
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "the labels the runner is granted: runs are routed to it by those of its "
	         "runner.labels that are here, no others (an admin's; taken from its first "
	         "heartbeat when absent: docs/runners.md, \"Labels\")" },
	F_END,
};

const rz_field_t rz__schema_runner_status[] = {
	{ .name = "labels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "runner.labels, as its heartbeat says: those also in spec.labels route runs "
	         "to it" },
	{ .name = "refusedLabels",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .doc = "the labels its heartbeat says that spec.labels does not grant: no run is "
	         "routed to it by them" },
	{ .name = "version",
	  .type = RZ_F_STRING,
	  .max_len = 64,
	  .doc = "The runner's version, as its heartbeat says." },
	{ .name = "concurrency",
	  .type = RZ_F_INT,
	  .ranged = true,
	  .min = 1,
	  .max = 64,
	  .doc = "runs it takes at once (runner.concurrency)" },
	{ .name = "running",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .doc = "the runs in progress on it" },
	{ .name = "startedAt", .type = RZ_F_TIME, .doc = "when the runner process started" },
	{ .name = "lastHeartbeat", .type = RZ_F_TIME, .doc = "when its last heartbeat came" },
	{ .name = "phase",
	  .type = RZ_F_STRING,
	  .enums = runner_phases,
	  .doc = "Ready (heartbeats come), Stopping (it said it stops), Lost (heartbeats stopped "
	         "coming), Offline (it stopped)." },
	F_END,
};

/* ------------------------------------------------------------------ AccessBinding */

static const char *const binding_roles[] = { "view", "edit", "admin", NULL };
static const char *const subject_kinds[] = { "User", "Group", NULL };

static const rz_field_t binding_subject[] = {
	{ .name = "kind",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = subject_kinds,
	  .doc = "User or Group (a name in users' spec.groups)." },
	{ .name = "name",
	  .type = RZ_F_STRING,
	  .required = true,
	  .format = rz_format_dns1123_label,
	  .doc = "the user's or the group's name" },
	F_END,
};

static const rz_field_t binding_tenants[] = {
	{ .name = "names",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_STRING,
	  .format = rz_format_dns1123_label,
	  .max_len = 256,
	  .unique = true,
	  .doc = "these tenants by name" },
	{ .name = "selector",
	  .type = RZ_F_MAP,
	  .key_format = rz_format_label_key,
	  .format = rz_format_label_value,
	  .max_len = 16,
	  .doc = "the tenants whose labels hold every pair (matchLabels; {} matches every "
	         "tenant)" },
	F_END,
};

const rz_field_t rz__schema_binding_spec[] = {
	{ .name = "role",
	  .type = RZ_F_STRING,
	  .required = true,
	  .enums = binding_roles,
	  .doc = "what the subjects may do on the tenants: view reads them, edit changes them, "
	         "admin also does what needs the admin role on a tenant (its TF state's "
	         "rollback, say)" },
	{ .name = "subjects",
	  .type = RZ_F_ARRAY,
	  .items = RZ_F_OBJECT,
	  .fields = binding_subject,
	  .required = true,
	  .max_len = 64,
	  .doc = "the users and groups granted the role" },
	{ .name = "tenants",
	  .type = RZ_F_OBJECT,
	  .fields = binding_tenants,
	  .required = true,
	  .doc = "the tenants it grants the role on: those named, and those the selector "
	         "matches" },
	F_END,
};

/* A binding grants something: a subject, and tenants by name or selector. */
void rz__schema_binding_check(const rz_kind_t *k, json_t *obj, const json_t *old, json_t *causes)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *t = json_object_get(spec, "tenants");

	(void)k;
	(void)old;
	if (json_array_size(json_object_get(spec, "subjects")) == 0) {
		rz_fields_cause(causes, "spec.subjects", RZ_CAUSE_REQUIRED,
		                "names no user or group: the binding would grant nothing");
	}
	if (json_object_get(t, "names") == NULL && json_object_get(t, "selector") == NULL) {
		rz_fields_cause(causes, "spec.tenants", RZ_CAUSE_REQUIRED,
		                "needs names or a selector ({} for every tenant)");
	}
}
