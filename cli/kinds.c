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
	{ "Event", "events", "event", "ev", true, false },
	{ "Provider", "providers", "provider", "pv", false, false },
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
