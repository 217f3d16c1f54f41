/*
 * core/plugin/host.h - the host services table handed to plugins (rezus/host.h), implemented
 * over jansson: a rezus_json_t is a json_t. One table per plugin, so log lines carry the
 * plugin's name; arena memory lives until the vtable call that asked for it returns.
 */
#ifndef RZ_HOST_H
#define RZ_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include <rezus/host.h>

typedef struct rz_host_priv {
	char name[64];
	struct block *arena;
	bool in_call; /* arena allocation is allowed only inside a vtable call */
} rz_host_priv_t;

/* Fill h (and p, its private part) for the plugin called name. */
void rz_host_init(rezus_host_t *h, rz_host_priv_t *p, const char *name);

/* Arena allocation (NULL outside a call or when out of memory) and release. */
void *rz_host_alloc(rz_host_priv_t *p, size_t size);
void rz_host_arena_reset(rz_host_priv_t *p);

/* s with "${" and "%{" escaped for TF templates; memory from alloc(ctx, n). */
char *rz_tf_escape(const char *s, char *(*alloc)(void *ctx, size_t n), void *ctx);

/* s as a TF identifier into out (size ≥ 3): [a-z0-9_], "x_" first when s does not start
 * with a letter — the SDK's tf_name(). Returns the length written. */
size_t rz_tf_name(const char *s, char *out, size_t size);

#endif /* RZ_HOST_H */
