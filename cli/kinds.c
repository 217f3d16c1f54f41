/* cli/kinds.c - the resource types rezusctl names (SPEC §10), and their paths. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/rezusctl.h"

static const rzc_kind_t kinds[] = {
	{ "Tenant", "tenants", "tenant", "tn", false, false },
	{ "NodeGroup", "nodegroups", "nodegroup", "ng", true, false },
	{ "Machine", "machines", "machine", "mc", true, false },
	{ "ConfigPatch", "configpatches", "configpatch", "cp", true, false },
	{ "Run", "runs", "run", "", true, false },
	{ "UpgradeRun", "upgrades", "upgrade", "up", true, false },
	{ "EtcdBackup", "etcdbackups", "etcdbackup", "eb", true, false },
	{ "EtcdRestore", "etcdrestores", "etcdrestore", "er", true, false },
	{ "Event", "events", "event", "ev", true, false },
	{ "Provider", "providers", "provider", "pv", false, false },
	{ "Runner", "runners", "runner", "rn", false, false },
	{ "AccessBinding", "accessbindings", "accessbinding", "ab", false, false },
	{ "User", "users", "user", "", false, false },
	{ "APIToken", "tokens", "token", "", false, true },
};

const rzc_kind_t *rzc_kinds(size_t *n)
{
	*n = sizeof(kinds) / sizeof(kinds[0]);
	return kinds;
}

const rzc_kind_t *rzc_kind_find(const char *word)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const rzc_kind_t *k = &kinds[i];
		if (strcasecmp(word, k->plural) == 0 || strcasecmp(word, k->singular) == 0 ||
		    strcasecmp(word, k->kind) == 0 ||
		    (k->shorts[0] && strcmp(word, k->shorts) == 0)) {
			return k;
		}
	}
	return NULL;
}

const rzc_kind_t *rzc_kind_of(const char *kind)
{
	for (size_t i = 0; kind != NULL && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].kind, kind) == 0) {
			return &kinds[i];
		}
	}
	return NULL;
}

const char *rzc_name_arg(const char *word, const char *kind, const char *verb)
{
	const char *slash = strchr(word, '/');
	const rzc_kind_t *want = rzc_kind_of(kind), *k;
	char type[64];

	if (slash == NULL && word[0] == '\0') {
		rzc_usage("%s: name the %s", verb, want->singular);
		return NULL;
	}
	if (slash == NULL) {
		return word;
	}
	snprintf(type, sizeof(type), "%.*s", (int)(slash - word), word);
	if ((k = rzc_kind_find(type)) == NULL) {
		rzc_usage("%s: \"%s\": unknown type \"%s\"", verb, word, type);
		return NULL;
	}
	if (k != want) {
		rzc_usage("%s: \"%s\" names %s %s; %s takes %s %s", verb, word,
		          strchr("aeiou", k->singular[0]) ? "an" : "a", k->singular, verb,
		          strchr("aeiou", want->singular[0]) ? "an" : "a", want->singular);
		return NULL;
	}
	if (slash[1] == '\0' || strchr(slash + 1, '/') != NULL) {
		rzc_usage("%s: \"%s\" names no %s", verb, word, want->singular);
		return NULL;
	}
	return slash + 1;
}

char *rzc_collection(rzc_t *c, const rzc_kind_t *k, const char *tenant, const char *user)
{
	char *t = NULL, *u = NULL, *out;

	(void)c;
	if (k->user_scoped) {
		u = rzc_escape(user ? user : "");
		out = rzc_path("/api/v1/users/%s/%s", u, k->plural);
	} else if (k->tenant_scoped && tenant != NULL) {
		t = rzc_escape(tenant);
		out = rzc_path("/api/v1/tenants/%s/%s", t, k->plural);
	} else {
		out = rzc_path("/api/v1/%s", k->plural);
	}
	free(t);
	free(u);
	return out;
}
