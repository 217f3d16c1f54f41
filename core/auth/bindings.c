/* core/auth/bindings.c - AccessBindings: a role on some tenants (core/auth/bindings.h).
 *
 * What a principal may do on a tenant depends only on which bindings name it (by user or by
 * group): principals named by the same bindings form one class, and a decision is made once
 * per class and tenant, then remembered until the bindings or that tenant change. A watch
 * event seen by a thousand watchers of a few classes is decided a few times, not a thousand. */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth/auth.h"
#include "core/auth/bindings.h"
#include "core/model/kinds.h"

#define LABELS_KEPT    4096  /* tenants whose labels are remembered, at most */
#define CLASSES_MAX    1024  /* principal classes remembered; past it, decided each time */
#define PRINCIPALS_MAX 4096  /* principals remembered with their class */
#define DECISIONS_MAX  65536 /* decisions remembered over all classes */

/* The principals named by the same bindings: those bindings, and what was decided for them. */
struct pclass {
	size_t *bindings; /* indexes into all */
	size_t n;
	json_t *roles; /* tenant name -> the role decided there (integer) */
};

struct rz_bindings {
	rz_store_t *store;
	json_t *all;    /* the AccessBinding objects; NULL: to be read */
	json_t *labels; /* tenant name -> its labels ({} when none or gone), as last read */
	/* classes of the bindings read (all); index 0 is never used: a principal no binding
	 * names is class 0 and has no role anywhere by bindings */
	struct pclass *classes;
	size_t nclasses;
	json_t *by_set;     /* the bindings of a class ("3,17,42") -> its index */
	json_t *principals; /* a principal's key (user and groups) -> its class */
	size_t decisions;   /* remembered, over all classes */
	rz_bindings_stats_t stats;
};

static void forget_classes(rz_bindings_t *b)
{
	for (size_t i = 1; i < b->nclasses; i++) {
		free(b->classes[i].bindings);
		json_decref(b->classes[i].roles);
	}
	free(b->classes);
	b->classes = NULL;
	b->nclasses = 0;
	b->decisions = 0;
	json_object_clear(b->by_set);
	json_object_clear(b->principals);
}

int rz_bindings_new(rz_bindings_t **out, rz_store_t *store)
{
	rz_bindings_t *b = calloc(1, sizeof(*b));

	*out = b;
	if (b == NULL) {
		return -1;
	}
	b->store = store;
	b->labels = json_object();
	b->by_set = json_object();
	b->principals = json_object();
	if (b->labels == NULL || b->by_set == NULL || b->principals == NULL) {
		rz_bindings_free(b);
		*out = NULL;
		return -1;
	}
	return 0;
}

void rz_bindings_free(rz_bindings_t *b)
{
	if (b != NULL) {
		forget_classes(b);
		json_decref(b->all);
		json_decref(b->labels);
		json_decref(b->by_set);
		json_decref(b->principals);
		free(b);
	}
}

void rz_bindings_changed(rz_bindings_t *b)
{
	json_decref(b->all);
	b->all = NULL;
	forget_classes(b);
}

void rz_bindings_tenant_changed(rz_bindings_t *b, const char *tenant)
{
	json_object_del(b->labels, tenant);
	for (size_t i = 1; i < b->nclasses; i++) {
		if (json_object_del(b->classes[i].roles, tenant) == 0) {
			b->decisions--;
		}
	}
}

void rz_bindings_stats(const rz_bindings_t *b, rz_bindings_stats_t *out)
{
	*out = b->stats;
	out->classes = b->nclasses > 0 ? b->nclasses - 1 : 0;
	out->decisions = b->decisions;
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

/* The role binding grants: none while it is being deleted or when its role is not one. */
static int granted_role(const json_t *binding)
{
	int role = rz_role_parse(
	    json_string_value(json_object_get(json_object_get(binding, "spec"), "role")));

	if (json_object_get(json_object_get(binding, "metadata"), "deletionTimestamp") != NULL) {
		return RZ_ROLE_NONE; /* a binding being deleted grants nothing more */
	}
	return role >= RZ_ROLE_VIEW ? role : RZ_ROLE_NONE;
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
		int role = granted_role(b);
		if (role > best &&
		    names_subject(json_object_get(spec, "subjects"), user, groups, ngroups) &&
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

	if (b->all != NULL) {
		return true;
	}
	forget_classes(b);
	return rz_store_list(b->store, rz_kind_by_name("AccessBinding"), &o, &b->all, &more,
	                     &err) == 0;
}

/* A principal's key: its user and groups, each length-prefixed so that no two principals
 * share one. False when it does not fit (then decided each time). */
static bool principal_key(char *out, size_t size, const char *user, const char (*groups)[64],
                          size_t ngroups)
{
	size_t len = 0;
	int n = snprintf(out, size, "%zu:%s", strlen(user), user);

	for (size_t g = 0; n >= 0 && (size_t)n < size - len && g < ngroups; g++) {
		len += (size_t)n;
		n = snprintf(out + len, size - len, "/%zu:%s", strlen(groups[g]), groups[g]);
	}
	return n >= 0 && (size_t)n < size - len;
}

/* The class of the principal (user, in groups): 0 when no binding names it; -1 when it
 * cannot be remembered (memory short, or too many classes): then decided each time. Its
 * bindings go into *set (caller frees) when it is not remembered. */
static long class_of(rz_bindings_t *b, const char *user, const char (*groups)[64], size_t ngroups,
                     size_t **set, size_t *nset)
{
	char key[(RZ_USER_GROUPS_MAX + 1) * 72];
	char *skey = NULL;
	bool keyed = principal_key(key, sizeof(key), user, groups, ngroups);
	json_t *known = keyed ? json_object_get(b->principals, key) : NULL, *v;
	size_t i, n = 0, *idx = NULL, cap = 0, slen = 0;
	long c = -1;

	*set = NULL;
	*nset = 0;
	if (known != NULL) {
		return (long)json_integer_value(known);
	}
	json_array_foreach(b->all, i, v)
	{
		const json_t *spec = json_object_get(v, "spec");
		if (granted_role(v) == RZ_ROLE_NONE ||
		    !names_subject(json_object_get(spec, "subjects"), user, groups, ngroups)) {
			continue;
		}
		if (n == cap) {
			size_t *more = realloc(idx, (cap = cap ? cap * 2 : 8) * sizeof(*idx));
			if (more == NULL) {
				free(idx);
				return -1;
			}
			idx = more;
		}
		idx[n++] = i;
	}
	if (n == 0) {
		c = 0;
	} else if ((skey = malloc(n * 21 + 1)) != NULL) {
		for (i = 0; i < n; i++) {
			slen += (size_t)sprintf(skey + slen, i ? ",%zu" : "%zu", idx[i]);
		}
		known = json_object_get(b->by_set, skey);
		c = known != NULL ? (long)json_integer_value(known) : -1;
	}
	if (c < 0 && skey != NULL && b->nclasses <= CLASSES_MAX) {
		/* a new class */
		size_t at = b->nclasses == 0 ? 1 : b->nclasses;
		struct pclass *more = realloc(b->classes, (at + 1) * sizeof(*more));
		if (more != NULL) {
			b->classes = more;
			more[at] = (struct pclass){ idx, n, json_object() };
			if (more[at].roles != NULL &&
			    json_object_set_new(b->by_set, skey, json_integer((json_int_t)at)) ==
			        0) {
				b->nclasses = at + 1;
				c = (long)at;
				idx = NULL; /* the class's now */
			} else {
				json_decref(more[at].roles);
			}
		}
	}
	free(skey);
	if (c >= 0 && keyed) {
		if (json_object_size(b->principals) >= PRINCIPALS_MAX) {
			json_object_clear(b->principals);
		}
		json_object_set_new(b->principals, key, json_integer(c));
	}
	if (c < 0) {
		*set = idx; /* decided each time over these */
		*nset = n;
	} else {
		free(idx);
	}
	return c;
}

/* The highest role the bindings set (indexes into all) grant on tenant of labels. */
static int set_role(const json_t *all, const size_t *set, size_t n, const char *tenant,
                    const json_t *labels)
{
	int best = RZ_ROLE_NONE;

	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(all, set[i]);
		int role = granted_role(v);
		if (role > best &&
		    takes_tenant(json_object_get(json_object_get(v, "spec"), "tenants"), tenant,
		                 labels)) {
			best = role;
		}
	}
	return best;
}

int rz_bindings_role(rz_bindings_t *b, const char *user, const char (*groups)[64], size_t ngroups,
                     const char *tenant)
{
	const json_t *labels, *known;
	struct pclass *cls;
	size_t *set, nset;
	long c;
	int role;

	if (!read_bindings(b)) {
		return RZ_ROLE_NONE; /* not readable now: read again next time */
	}
	if (json_array_size(b->all) == 0 ||
	    (c = class_of(b, user, groups, ngroups, &set, &nset)) == 0) {
		return RZ_ROLE_NONE;
	}
	cls = c > 0 ? &b->classes[c] : NULL;
	if (cls != NULL && (known = json_object_get(cls->roles, tenant)) != NULL) {
		b->stats.remembered++;
		return (int)json_integer_value(known);
	}
	b->stats.evaluated++;
	if ((labels = tenant_labels(b, tenant)) == NULL) {
		free(set);
		return RZ_ROLE_NONE; /* not readable now: nothing granted, nothing remembered */
	}
	if (cls == NULL) {
		role = set_role(b->all, set, nset, tenant, labels);
		free(set);
		return role;
	}
	role = set_role(b->all, cls->bindings, cls->n, tenant, labels);
	if (b->decisions >= DECISIONS_MAX) {
		for (size_t i = 1; i < b->nclasses; i++) {
			json_object_clear(b->classes[i].roles);
		}
		b->decisions = 0;
	}
	if (json_object_set_new(cls->roles, tenant, json_integer(role)) == 0) {
		b->decisions++;
	}
	return role;
}

json_t *rz_bindings_tenants(rz_bindings_t *b, const char *user, const char (*groups)[64],
                            size_t ngroups, int role)
{
	rz_list_opts_t o = { 0 };
	json_t *tenants = NULL, *out = json_array(), *t;
	rz_err_t err = { 0 };
	size_t *set = NULL, nset = 0, i;
	bool more;
	long c;

	if (out == NULL || !read_bindings(b)) {
		json_decref(out);
		return NULL;
	}
	/* most principals asking are named by no binding: no tenant is read for them */
	if ((c = class_of(b, user, groups, ngroups, &set, &nset)) == 0) {
		return out;
	}
	if (c > 0) {
		set = b->classes[c].bindings;
		nset = b->classes[c].n;
	}
	if (rz_store_list(b->store, rz_kind_by_name("Tenant"), &o, &tenants, &more, &err) != 0) {
		json_decref(out);
		out = NULL;
	}
	json_array_foreach(tenants, i, t)
	{
		const json_t *meta = json_object_get(t, "metadata");
		const char *name = json_string_value(json_object_get(meta, "name"));
		const json_t *labels = json_object_get(meta, "labels");
		if (name != NULL &&
		    set_role(b->all, set, nset, name, json_is_object(labels) ? labels : NULL) >=
		        role &&
		    json_array_append_new(out, json_string(name)) != 0) {
			json_decref(out);
			out = NULL;
			break;
		}
	}
	if (c < 0) {
		free(set);
	}
	json_decref(tenants);
	return out;
}
