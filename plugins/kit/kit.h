/*
 * plugins/kit/kit.h - small helpers the in-tree plugins share: building TF JSON through the
 * host's JSON handles, reading the render context, and validating providerConfig into
 * Kubernetes causes. Compiled into each plugin (a static copy per .so), built against the
 * SDK headers only, like any third-party plugin.
 */
#ifndef REZUS_KIT_H
#define REZUS_KIT_H

#include <stdbool.h>
#include <stdint.h>

#include <rezus/plugin.h>

/* The providers the in-tree plugins use, pinned the same way wherever two plugins declare
 * the same one (the host refuses two different declarations of a provider). */
#define KIT_TALOS_SOURCE      "siderolabs/talos"
#define KIT_TALOS_VERSION     "~> 0.11.0"
#define KIT_OCI_SOURCE        "oracle/oci"
#define KIT_OCI_VERSION       ">= 6.22.0, < 8.0.0"
#define KIT_RANDOM_SOURCE     "hashicorp/random"
#define KIT_RANDOM_VERSION    "~> 3.6"
#define KIT_OPENSTACK_SOURCE  "terraform-provider-openstack/openstack"
#define KIT_OPENSTACK_VERSION "~> 3.1"

/* ---- building ---- */

/* obj[key] = the string v (nothing when v is NULL). */
void kit_str(const rezus_host_t *h, rezus_json_t *obj, const char *key, const char *v);
void kit_int(const rezus_host_t *h, rezus_json_t *obj, const char *key, int64_t v);
void kit_bool(const rezus_host_t *h, rezus_json_t *obj, const char *key, bool v);
/* obj[key], created as an empty object when absent. Borrowed from obj. */
rezus_json_t *kit_child(const rezus_host_t *h, rezus_json_t *obj, const char *key);
/* out.resource[type][name] = body / out.data[type][name] = body (takes ownership). */
void kit_resource(const rezus_host_t *h, rezus_json_t *out, const char *type, const char *name,
                  rezus_json_t *body);
void kit_data(const rezus_host_t *h, rezus_json_t *out, const char *type, const char *name,
              rezus_json_t *body);
/* out.required_providers[name] = {source, version}. */
void kit_provider(const rezus_host_t *h, rezus_json_t *out, const char *name, const char *source,
                  const char *version);
/* A new array of the strings items[0..n) (caller owns). */
rezus_json_t *kit_strings(const rezus_host_t *h, const char *const *items, size_t n);

/* s as a JSON/YAML double-quoted string, quotes included (arena). */
char *kit_quote(const rezus_host_t *h, const char *s);

/* ---- reading ---- */

/* The string at a dotted path of v, or def. */
const char *kit_get_str(const rezus_host_t *h, const rezus_json_t *v, const char *path,
                        const char *def);
int64_t kit_get_int(const rezus_host_t *h, const rezus_json_t *v, const char *path, int64_t def);
bool kit_get_bool(const rezus_host_t *h, const rezus_json_t *v, const char *path, bool def);

/* The class after ':' in a node group's spec.providerClass, or NULL when there is none. */
const char *kit_class(const rezus_host_t *h, const rezus_json_t *ng);

/* The import "<plugin>.<name>" from ctx.imports, or NULL. */
const char *kit_import(const rezus_host_t *h, const rezus_json_t *ctx, const char *plugin,
                       const char *name);

/* Is this the first render pass, which only collects exports? */
bool kit_exports_only(const rezus_host_t *h, const rezus_json_t *ctx);

/* ---- plugin life, for plugins with no settings ---- */

/* The state of a plugin that keeps nothing but the host. */
typedef struct kit_plain {
	const rezus_host_t *h;
} kit_plain_t;

/* init (any config is refused by check_config), fini, and a check_config that accepts only
 * an empty section: "plugins.<name>.<key>: unknown key (<name> has no settings)". */
int kit_plain_init(const rezus_host_t *h, const rezus_json_t *config, void **state,
                   rezus_err_t *err);
void kit_plain_fini(void *state);
int kit_no_settings(const rezus_host_t *h, const rezus_json_t *config, const char *plugin,
                    rezus_err_t *err);

/* ---- what infra plugins export to the cluster plugin ---- */

/* A control-plane node group with machines? */
bool kit_is_controlplane(const rezus_host_t *h, const rezus_json_t *ng);

/* Fill out.exports with "controlplane_addresses" (the TF lists addresses(ng, tf) of every
 * control-plane group, concatenated) and "controlplane_endpoint" (endpoint(ng, tf) of the
 * first group that knows one in advance; endpoint may be NULL or return NULL). */
void kit_controlplane_exports(const rezus_host_t *h, const rezus_json_t *ctx, rezus_json_t *out,
                              const char *(*addresses)(const rezus_host_t *h,
                                                       const rezus_json_t *ng, const char *tf),
                              const char *(*endpoint)(const rezus_host_t *h, const rezus_json_t *ng,
                                                      const char *tf));

/* ---- validating providerConfig (fields are paths under spec.providerConfig) ---- */

void kit_cause(const rezus_host_t *h, rezus_json_t *causes, const char *field, const char *reason,
               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* One cause per key of pc not in known (NULL-terminated). */
void kit_known_keys(const rezus_host_t *h, const rezus_json_t *pc, const char *const *known,
                    rezus_json_t *causes);

/* The string pc[key], checked: a cause when it is missing and required, not a string, or
 * refused by ok (which fills why). Returns the string or NULL. */
const char *kit_want_str(const rezus_host_t *h, const rezus_json_t *pc, const char *key,
                         bool required, bool (*ok)(const char *s, char *why, size_t size),
                         rezus_json_t *causes);
/* An integer in [min, max]; returns it, or def when absent or wrong (with a cause). */
int64_t kit_want_int(const rezus_host_t *h, const rezus_json_t *pc, const char *key, int64_t min,
                     int64_t max, int64_t def, rezus_json_t *causes);
/* A boolean; def when absent. */
bool kit_want_bool(const rezus_host_t *h, const rezus_json_t *pc, const char *key, bool def,
                   rezus_json_t *causes);
/* An array of strings each accepted by ok (NULL: any non-empty string); returns its size (0
 * when absent or wrong). */
size_t kit_want_strs(const rezus_host_t *h, const rezus_json_t *pc, const char *key,
                     bool (*ok)(const char *s, char *why, size_t size), rezus_json_t *causes);

/* Formats for kit_want_*. */
bool kit_ipv4(const char *s, char *why, size_t size);
bool kit_cidr4(const char *s, char *why, size_t size);
bool kit_uuid(const char *s, char *why, size_t size);
/* An OCID of the given resource type prefix ("ocid1.subnet.") — see kit_ocid_of(). */
bool kit_ocid(const char *s, const char *type, char *why, size_t size);

#endif /* REZUS_KIT_H */
