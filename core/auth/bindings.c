/* core/auth/bindings.c - AccessBindings: a role on some tenants (core/auth/bindings.h). */
#include <config.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth/auth.h"
#include "core/auth/bindings.h"
#include "core/model/kinds.h"

#define LABELS_KEPT 4096 /* tenants whose labels are remembered, at most */

struct rz_bindings {
	rz_store_t *store;
	json_t *all;    /* the AccessBinding objects; NULL: to be read */
	json_t *labels; /* tenant name -> its labels ({} when none or gone), as last read */
};

int rz_bindings_new(rz_bindings_t **out, rz_store_t *store)
{
	rz_bindings_t *b = calloc(1, sizeof(*b));

	*out = b;
	if (b == NULL) {
		return -1;
	}
	b->store = store;
	if ((b->labels = json_object()) == NULL) {
		free(b);
		*out = NULL;
		return -1;
	}
	return 0;
}

void rz_bindings_free(rz_bindings_t *b)
{
	if (b != NULL) {
		json_decref(b->all);
		json_decref(b->labels);
		free(b);
	}
}

void rz_bindings_changed(rz_bindings_t *b)
{
	json_decref(b->all);
	b->all = NULL;
}

void rz_bindings_tenant_changed(rz_bindings_t *b, const char *tenant)
{
	json_object_del(b->labels, tenant);
}

/* The tenant's labels (borrowed), read once after each change of it: a list across tenants
 * asks for every row. */
static const json_t *tenant_labels(rz_bindings_t *b, const char *tenant)
{
	json_t *t = NULL, *l;
	rz_err_t err = { 0 };
	int rc;

	if ((l = json_object_get(b->labels, tenant)) != NULL) {
		return l;
	}
	rc = rz_store_get_shared(b->store, rz_kind_by_name("Tenant"), NULL, tenant, &t, &err);
	if (rc != 0 && rc != RZ_ENOTFOUND) {
		return NULL; /* not readable now: nothing granted, nothing remembered */
	}
	l = json_object_get(json_object_get(t, "metadata"), "labels");
	l = json_is_object(l) ? json_deep_copy(l) : json_object();
	json_decref(t);
	if (json_object_size(b->labels) >= LABELS_KEPT) {
		json_object_clear(b->labels);
	}
	json_object_set_new(b->labels, tenant, l);
	return json_object_get(b->labels, tenant);
}

/* Whether one of the binding's subjects is the user or one of its groups. */
static bool names_subject(const json_t *subjects, const char *user, const char (*groups)[64],
                          size_t ngroups)
{
	size_t i;
	json_t *s;

	json_array_foreach(subjects, i, s)
	{
		const char *kind = json_string_value(json_object_get(s, "kind"));
		const char *name = json_string_value(json_object_get(s, "name"));
		if (kind == NULL || name == NULL) {
			continue;
		}
		if (strcmp(kind, "User") == 0 && strcmp(name, user) == 0) {
			return true;
		}
		for (size_t g = 0; strcmp(kind, "Group") == 0 && g < ngroups; g++) {
			if (strcmp(name, groups[g]) == 0) {
				return true;
			}
		}
	}
	return false;
}

/* Whether the binding's tenants (names, selector) take this tenant. */
static bool takes_tenant(const json_t *tenants, const char *tenant, const json_t *labels)
{
	const json_t *sel = json_object_get(tenants, "selector");
	const char *key;
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(tenants, "names"), i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), tenant) == 0) {
			return true;
		}
	}
	if (!json_is_object(sel)) {
		return false;
	}
	json_object_foreach((json_t *)sel, key, v)
	{
		const json_t *have = json_object_get(labels, key);
		if (!json_is_string(have) || !json_is_string(v) ||
		    strcmp(json_string_value(have), json_string_value(v)) != 0) {
			return false;
		}
	}
	return true; /* {} takes every tenant */
}

int rz_bindings_role_of(const json_t *bindings, const char *user, const char (*groups)[64],
                        size_t ngroups, const char *tenant, const json_t *labels)
{
	int best = RZ_ROLE_NONE;
	size_t i;
	json_t *b;

	json_array_foreach(bindings, i, b)
	{
		const json_t *spec = json_object_get(b, "spec");
		int role = rz_role_parse(json_string_value(json_object_get(spec, "role")));
		/* a binding being deleted grants nothing more */
		if (json_object_get(json_object_get(b, "metadata"), "deletionTimestamp") != NULL ||
		    role <= best || role < RZ_ROLE_VIEW) {
			continue;
		}
		if (names_subject(json_object_get(spec, "subjects"), user, groups, ngroups) &&
		    takes_tenant(json_object_get(spec, "tenants"), tenant, labels)) {
			best = role;
		}
	}
	return best;
}

/* Whether the bindings are read (b->all), reading them when a change dropped them. */
static bool read_bindings(rz_bindings_t *b)
{
	rz_list_opts_t o = { 0 };
	rz_err_t err = { 0 };
	bool more;

	return b->all != NULL || rz_store_list(b->store, rz_kind_by_name("AccessBinding"), &o,
	                                       &b->all, &more, &err) == 0;
}

int rz_bindings_role(rz_bindings_t *b, const char *user, const char (*groups)[64], size_t ngroups,
                     const char *tenant)
{
	const json_t *labels;

	if (!read_bindings(b)) {
		return RZ_ROLE_NONE; /* not readable now: read again next time */
	}
	if (json_array_size(b->all) == 0 || (labels = tenant_labels(b, tenant)) == NULL) {
		return RZ_ROLE_NONE;
	}
	return rz_bindings_role_of(b->all, user, groups, ngroups, tenant, labels);
}

/* Whether some binding (not being deleted) grants user or its groups role or more somewhere. */
static bool grants_some(const json_t *bindings, const char *user, const char (*groups)[64],
                        size_t ngroups, int role)
{
	size_t i;
	json_t *b;

	json_array_foreach(bindings, i, b)
	{
		const json_t *spec = json_object_get(b, "spec");
		if (json_object_get(json_object_get(b, "metadata"), "deletionTimestamp") == NULL &&
		    rz_role_parse(json_string_value(json_object_get(spec, "role"))) >= role &&
		    names_subject(json_object_get(spec, "subjects"), user, groups, ngroups)) {
			return true;
		}
	}
	return false;
}

json_t *rz_bindings_tenants(rz_bindings_t *b, const char *user, const char (*groups)[64],
                            size_t ngroups, int role)
{
	rz_list_opts_t o = { 0 };
	json_t *tenants = NULL, *out = json_array(), *t;
	rz_err_t err = { 0 };
	bool more;
	size_t i;

	if (out == NULL || !read_bindings(b)) {
		json_decref(out);
		return NULL;
	}
	/* most principals asking hold no such binding: no tenant is read for them */
	if (!grants_some(b->all, user, groups, ngroups, role)) {
		return out;
	}
	if (rz_store_list(b->store, rz_kind_by_name("Tenant"), &o, &tenants, &more, &err) != 0) {
		json_decref(out);
		return NULL;
	}
	json_array_foreach(tenants, i, t)
	{
		const json_t *meta = json_object_get(t, "metadata");
		const char *name = json_string_value(json_object_get(meta, "name"));
		const json_t *labels = json_object_get(meta, "labels");
		if (name != NULL &&
		    rz_bindings_role_of(b->all, user, groups, ngroups, name,
		                        json_is_object(labels) ? labels : NULL) >= role &&
		    json_array_append_new(out, json_string(name)) != 0) {
			json_decref(out);
			out = NULL;
			break;
		}
	}
	json_decref(tenants);
	return out;
}
