/*
 * core/auth/bindings.h - AccessBindings (docs/security.md, "Access per tenant"): a role (view,
 * edit, admin) on some tenants (by name, or by a label selector), granted to users and
 * groups beside their role on the whole installation. What a principal may do on a tenant is
 * the higher of its role and what the bindings grant it there, capped by its token's role.
 *
 * The bindings, and each tenant's labels, are read from the store when first needed after a
 * change (the auth module tells of changes from the bus, before any other subscriber hears
 * of it). A decision is made once for every principal named by the same bindings (a
 * principal class) and tenant, and remembered until the bindings or that tenant change.
 * Loop thread.
 */
#ifndef RZ_BINDINGS_H
#define RZ_BINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/store/store.h"

typedef struct rz_bindings rz_bindings_t;

/* store is borrowed and must outlive b. Caller owns *out. */
int rz_bindings_new(rz_bindings_t **out, rz_store_t *store);
void rz_bindings_free(rz_bindings_t *b);

/* An AccessBinding changed: read them again at the next question. */
void rz_bindings_changed(rz_bindings_t *b);
/* A Tenant changed (its labels may have): read them again when next asked. */
void rz_bindings_tenant_changed(rz_bindings_t *b, const char *tenant);

/* Decisions made and answered from memory, for /metrics and tests. */
typedef struct rz_bindings_stats {
	uint64_t evaluated;  /* decisions made (a class and a tenant, after a change) */
	uint64_t remembered; /* questions answered by a decision made before */
	size_t classes;      /* principal classes known now */
	size_t decisions;    /* decisions remembered now */
} rz_bindings_stats_t;

void rz_bindings_stats(const rz_bindings_t *b, rz_bindings_stats_t *out);

/* The highest role the bindings grant user (in groups, ngroups of them) on tenant, or
 * RZ_ROLE_NONE when none does (or the tenant does not exist). */
int rz_bindings_role(rz_bindings_t *b, const char *user, const char (*groups)[64], size_t ngroups,
                     const char *tenant);

/* The same over the AccessBinding objects bindings (an array, borrowed) for a tenant of
 * these labels (an object, borrowed; NULL: none): what rz_bindings_role decides with. */
int rz_bindings_role_of(const json_t *bindings, const char *user, const char (*groups)[64],
                        size_t ngroups, const char *tenant, const json_t *labels);

/* The names of the tenants (that exist now, in name order) on which the bindings grant user
 * (in groups, ngroups of them) role or more: a new array (caller owns; json_decref()), empty
 * when none does; NULL when the store cannot be read or memory is short. */
json_t *rz_bindings_tenants(rz_bindings_t *b, const char *user, const char (*groups)[64],
                            size_t ngroups, int role);

#endif /* RZ_BINDINGS_H */
