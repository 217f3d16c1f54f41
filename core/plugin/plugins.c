/* core/plugin/plugins.c - loading plugins, the refusal checks, calls into plugins, Providers. */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model/fields.h"
#include "core/plugin/host.h"
#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/plugin/plugins.h"
#include "core/plugin/probe.h"
#include "core/plugin/projection.h"

#define RENDER_MAX (8u << 20) /* serialized output of one plugin's render */

struct slot {
	rz_plugin_t pub;
	void *dl;
	void *state;
	bool started;
	rezus_host_t host;
	rz_host_priv_t priv;
	rz_projection_t *rules;
	json_t *config;
};

struct rz_plugins {
	struct slot *slots;
	size_t n;
	/* {tenant: {plugin: ["<type>.<name>", ...]}}: each tenant's last composition */
	json_t *scopes;
};

/* ------------------------------------------------------------------ calls */

/* Arena memory is only handed out inside a call, and freed when it returns. */
static void call_begin(struct slot *s)
{
	s->priv.in_call = true;
}

static void call_end(struct slot *s)
{
	s->priv.in_call = false;
	rz_host_arena_reset(&s->priv);
}

/* ------------------------------------------------------------------ checks */

static int refuse(struct slot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct slot *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->pub.error, sizeof(s->pub.error), fmt, ap);
	va_end(ap);
	s->pub.loaded = false;
	rz_logkv(RZ_LOG_ERR, "plugins", "plugin refused", "plugin", s->pub.name, "file",
	         s->pub.file, "reason", s->pub.error, NULL);
	return REZUS_EABI;
}

/* The file for a plugin: <dir>/<name>.so, or <dir>/.libs/<name>.so in a build tree. */
static void find_file(struct slot *s, const char *dir)
{
	snprintf(s->pub.file, sizeof(s->pub.file), "%s/%s.so", dir, s->pub.name);
	if (access(s->pub.file, F_OK) != 0) {
		char alt[sizeof(s->pub.file)];
		snprintf(alt, sizeof(alt), "%s/.libs/%s.so", dir, s->pub.name);
		if (access(alt, F_OK) == 0) {
			memcpy(s->pub.file, alt, sizeof(alt));
		}
	}
}

/* The ordered checks of SPEC §6.1 on the descriptor d. */
static int check_descriptor(rz_plugins_t *p, struct slot *s, const rezus_plugin_t *d)
{
	const rezus_plugin_header_t *h = &d->header;
	size_t copy;

	if (h->magic != REZUS_PLUGIN_MAGIC) {
		return refuse(s, "bad magic 0x%08x: not a RezusCloud plugin", h->magic);
	}
	snprintf(s->pub.abi, sizeof(s->pub.abi), "%u.%u", h->abi_major, h->abi_minor);
	if (h->abi_major != REZUS_ABI_MAJOR || h->abi_minor > REZUS_ABI_MINOR) {
		return refuse(s, "built for ABI %u.%u, host provides %d.%d", h->abi_major,
		              h->abi_minor, REZUS_ABI_MAJOR, REZUS_ABI_MINOR);
	}
	if (h->struct_size < REZUS_PLUGIN_SIZE_1_0) {
		return refuse(s, "descriptor is %u bytes, smaller than the ABI 1.0 layout (%zu)",
		              h->struct_size, (size_t)REZUS_PLUGIN_SIZE_1_0);
	}
	copy = h->struct_size < sizeof(s->pub.desc) ? h->struct_size : sizeof(s->pub.desc);
	memset(&s->pub.desc, 0, sizeof(s->pub.desc));
	memcpy(&s->pub.desc, d, copy); /* newer members of ours read as NULL */
	d = &s->pub.desc;
	if (d->name == NULL || d->name[0] == '\0') {
		return refuse(s, "empty name");
	}
	if (strcmp(d->name, s->pub.name) != 0) {
		return refuse(s, "name '%s' does not match the file '%s.so'", d->name, s->pub.name);
	}
	for (size_t i = 0; i < p->n; i++) {
		if (&p->slots[i] != s && p->slots[i].pub.loaded &&
		    strcmp(p->slots[i].pub.name, d->name) == 0) {
			return refuse(s, "a plugin named '%s' is already loaded", d->name);
		}
	}
	return 0;
}

static int check_entries(struct slot *s)
{
	const rezus_plugin_t *d = &s->pub.desc;
	const char *missing = d->init == NULL               ? "init"
	                      : d->fini == NULL             ? "fini"
	                      : d->render == NULL           ? "render"
	                      : d->projection_rules == NULL ? "projection_rules"
	                      : d->version == NULL          ? "version"
	                      : ((d->kinds & REZUS_PLUGIN_INFRA) && d->validate_nodegroup == NULL)
	                          ? "validate_nodegroup"
	                          : NULL;

	if (missing != NULL) {
		return refuse(s, "missing required entry '%s'", missing);
	}
	if ((d->kinds & (REZUS_PLUGIN_INFRA | REZUS_PLUGIN_CLUSTER)) == 0) {
		return refuse(s, "kinds names neither infra nor cluster");
	}
	if ((d->observe_probes == NULL) != (d->observe_parse == NULL)) {
		return refuse(s, "observe_probes and observe_parse come together: '%s' is missing",
		              d->observe_probes == NULL ? "observe_probes" : "observe_parse");
	}
	if (d->observe_probes != NULL && !(d->kinds & REZUS_PLUGIN_CLUSTER)) {
		return refuse(s, "observe_probes is for cluster plugins, and kinds has no cluster");
	}
	if (d->upgrade_commands != NULL && !(d->kinds & REZUS_PLUGIN_CLUSTER)) {
		return refuse(s,
		              "upgrade_commands is for cluster plugins, and kinds has no cluster");
	}
	if (d->etcd_commands != NULL && !(d->kinds & REZUS_PLUGIN_CLUSTER)) {
		return refuse(s, "etcd_commands is for cluster plugins, and kinds has no cluster");
	}
	return 0;
}

static int check_rules(struct slot *s)
{
	rz_err_t err = { 0 };
	const char *text;

	call_begin(s);
	text = s->pub.desc.projection_rules(s->state);
	call_end(s);
	if (rz_projection_parse(text ? text : "", &s->rules, &err) != 0) {
		return refuse(s, "bad projection rules: %s", err.msg);
	}
	return 0;
}

/* Open the file, get the descriptor, run every check; then init or check_config. */
static int load_one(rz_plugins_t *p, struct slot *s, bool start)
{
	rezus_plugin_entry_fn entry;
	const rezus_plugin_t *d;
	rz_err_t err = { 0 };
	int rc;

	s->dl = dlopen(s->pub.file, RTLD_NOW | RTLD_LOCAL);
	if (s->dl == NULL) {
		return refuse(s, "cannot load: %s", dlerror());
	}
	*(void **)&entry = dlsym(s->dl, REZUS_PLUGIN_ENTRY);
	if (entry == NULL) {
		return refuse(s, "no %s symbol", REZUS_PLUGIN_ENTRY);
	}
	d = entry();
	if (d == NULL) {
		return refuse(s, "%s returned NULL", REZUS_PLUGIN_ENTRY);
	}
	if ((rc = check_descriptor(p, s, d)) != 0 || (rc = check_entries(s)) != 0) {
		return rc;
	}
	rz_host_init(&s->host, &s->priv, s->pub.name);
	call_begin(s);
	if (!start) {
		rc = s->pub.desc.check_config
		         ? s->pub.desc.check_config(&s->host, (rezus_json_t *)s->config, &err)
		         : 0;
	} else {
		rc = s->pub.desc.init(&s->host, (rezus_json_t *)s->config, &s->state, &err);
	}
	call_end(s);
	if (rc != 0) {
		return refuse(s, "%s failed: %s", start ? "init" : "check_config",
		              err.msg[0] ? err.msg : rz_strerror(rc));
	}
	s->started = start;
	s->pub.loaded = true;
	return check_rules(s);
}

int rz_plugins_load(rz_plugins_t **out, const rz_config_t *cfg, bool start, rz_err_t *err)
{
	rz_plugins_t *p = calloc(1, sizeof(*p));
	int rc = 0;

	*out = p;
	if (p == NULL || (p->scopes = json_object()) == NULL ||
	    (cfg->n_plugins > 0 &&
	     (p->slots = calloc(cfg->n_plugins, sizeof(*p->slots))) == NULL)) {
		return rz_err_set(err, -ENOMEM, "plugins: out of memory");
	}
	for (size_t i = 0; i < cfg->n_plugins; i++) {
		const rz_config_plugin_t *c = &cfg->plugins[i];
		struct slot *s = &p->slots[p->n++];
		snprintf(s->pub.name, sizeof(s->pub.name), "%s", c->name);
		s->pub.required = c->required;
		s->config = json_incref(c->config);
		find_file(s, cfg->plugin_dir);
		if (load_one(p, s, start) != 0 && s->pub.required && rc == 0) {
			rc = rz_err_set(err, REZUS_ECONFIG, "required plugin '%s' (%s): %s",
			                s->pub.name, s->pub.file, s->pub.error);
		} else if (s->pub.loaded) {
			rz_logkv(RZ_LOG_INFO, "plugins",
			         start ? "plugin started" : "plugin checked", "plugin", s->pub.name,
			         "version", s->pub.desc.version, "abi", s->pub.abi, "file",
			         s->pub.file, NULL);
		}
	}
	return rc;
}

void rz_plugins_free(rz_plugins_t *p)
{
	if (p == NULL) {
		return;
	}
	for (size_t i = p->n; i-- > 0;) {
		struct slot *s = &p->slots[i];
		if (s->started && s->pub.desc.fini != NULL) {
			call_begin(s);
			s->pub.desc.fini(s->state);
			call_end(s);
		}
		rz_projection_free(s->rules);
		json_decref(s->config);
		if (s->dl != NULL) {
			dlclose(s->dl);
		}
	}
	free(p->slots);
	json_decref(p->scopes);
	free(p);
}

size_t rz_plugins_count(const rz_plugins_t *p)
{
	return p ? p->n : 0;
}

const rz_plugin_t *rz_plugins_at(const rz_plugins_t *p, size_t i)
{
	return p && i < p->n ? &p->slots[i].pub : NULL;
}

static struct slot *find(const rz_plugins_t *p, const char *name)
{
	for (size_t i = 0; p != NULL && i < p->n; i++) {
		if (p->slots[i].pub.loaded && strcmp(p->slots[i].pub.name, name) == 0) {
			return &p->slots[i];
		}
	}
	return NULL;
}

const rz_plugin_t *rz_plugins_find(const rz_plugins_t *p, const char *name)
{
	struct slot *s = find(p, name);

	return s ? &s->pub : NULL;
}

/* ------------------------------------------------------------------ Providers */

static json_t *provider_object(const struct slot *s)
{
	const rezus_plugin_t *d = &s->pub.desc;
	json_t *kinds = json_array();
	json_t *spec, *o;

	if (d->kinds & REZUS_PLUGIN_INFRA) {
		json_array_append_new(kinds, json_string("infra"));
	}
	if (d->kinds & REZUS_PLUGIN_CLUSTER) {
		json_array_append_new(kinds, json_string("cluster"));
	}
	spec = json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", s->pub.name, "version",
	                 d->version ? d->version : "", "abiVersion", s->pub.abi, "description",
	                 d->description ? d->description : "", "kinds", kinds);
	if (d->config_schema != NULL) {
		json_object_set_new(spec, "configSchema", json_loads(d->config_schema, 0, NULL));
	}
	if (d->provider_config_schema != NULL) {
		json_object_set_new(spec, "providerConfigSchema",
		                    json_loads(d->provider_config_schema, 0, NULL));
	}
	o = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", RZ_API_VERSION, "kind", "Provider",
	              "metadata", "name", s->pub.name, "spec", spec);
	json_object_set_new(o, "status", json_pack("{s:b}", "loaded", s->pub.loaded));
	if (!s->pub.loaded) {
		json_object_set_new(json_object_get(o, "status"), "error",
		                    json_string(s->pub.error));
	}
	return o;
}

/* Create or replace the Provider object, then its status. */
static int publish_one(rz_store_t *store, const struct slot *s, rz_err_t *err)
{
	const rz_kind_t *k = rz_kind_by_name("Provider");
	json_t *o = provider_object(s), *out = NULL;
	bool gone;
	int rc = rz_store_create(store, k, o, NULL, &out, err);

	if (rc == -EEXIST) {
		rc = rz_store_update(store, k, NULL, s->pub.name, o, 0, RZ_UPDATE_SPEC, NULL, &out,
		                     &gone, err);
	}
	json_decref(out);
	out = NULL;
	if (rc == 0) {
		rc = rz_store_update(store, k, NULL, s->pub.name, o, 0, RZ_UPDATE_STATUS, NULL,
		                     &out, &gone, err);
	}
	json_decref(out);
	json_decref(o);
	return rc;
}

int rz_plugins_publish(rz_plugins_t *p, rz_store_t *store, rz_err_t *err)
{
	const rz_kind_t *k = rz_kind_by_name("Provider");
	rz_list_opts_t o = { 0 };
	json_t *items = NULL, *it, *out;
	bool more, gone;
	size_t i;
	int rc = rz_store_list(store, k, &o, &items, &more, err);

	json_array_foreach(items, i, it)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
		bool listed = false;
		for (size_t j = 0; j < p->n; j++) {
			listed = listed || strcmp(p->slots[j].pub.name, name) == 0;
		}
		if (rc == 0 && !listed) {
			out = NULL;
			rc = rz_store_delete(store, k, NULL, name, 0, NULL, &out, &gone, err);
			json_decref(out);
		}
	}
	json_decref(items);
	for (i = 0; rc == 0 && i < p->n; i++) {
		rc = publish_one(store, &p->slots[i], err);
	}
	return rc;
}

/* ------------------------------------------------------------------ validation */

static void loaded_names(const rz_plugins_t *p, unsigned kinds, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; p != NULL && i < p->n; i++) {
		if (p->slots[i].pub.loaded && (p->slots[i].pub.desc.kinds & kinds)) {
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s",
			                      n ? ", " : "", p->slots[i].pub.name);
		}
	}
	if (buf[0] == '\0') {
		snprintf(buf, size, "none");
	}
}

/* Copy the plugin's causes into causes, with fields under spec.providerConfig. */
static void take_causes(json_t *causes, json_t *from)
{
	size_t i;
	json_t *c;

	json_array_foreach(from, i, c)
	{
		const char *f = json_string_value(json_object_get(c, "field"));
		const char *reason = json_string_value(json_object_get(c, "reason"));
		const char *msg = json_string_value(json_object_get(c, "message"));
		char field[512];
		snprintf(field, sizeof(field), "spec.providerConfig%s%s", f && *f ? "." : "",
		         f ? f : "");
		json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "field", field, "reason",
		                                        reason ? reason : "FieldValueInvalid",
		                                        "message", msg ? msg : "invalid value"));
	}
}

void rz_plugins_validate_nodegroup(rz_plugins_t *p, const json_t *ng, json_t *causes)
{
	const char *cls =
	    json_string_value(json_object_get(json_object_get(ng, "spec"), "providerClass"));
	char name[64], names[512];
	size_t len = cls ? strcspn(cls, ":") : 0;
	struct slot *s;
	json_t *found;

	if (cls == NULL || len == 0 || len >= sizeof(name)) {
		return; /* the field schema already reports it */
	}
	memcpy(name, cls, len);
	name[len] = '\0';
	s = find(p, name);
	if (s == NULL || !(s->pub.desc.kinds & REZUS_PLUGIN_INFRA)) {
		loaded_names(p, REZUS_PLUGIN_INFRA, names, sizeof(names));
		rz_fields_cause(causes, "spec.providerClass", RZ_CAUSE_NOT_SUPPORTED,
		                "no loaded infra plugin '%s' (loaded: %s)", name, names);
		return;
	}
	found = json_array();
	call_begin(s);
	if (s->pub.desc.validate_nodegroup(s->state, (const rezus_json_t *)ng,
	                                   (rezus_json_t *)found) < 0) {
		rz_fields_cause(causes, "spec.providerConfig", RZ_CAUSE_INVALID,
		                "plugin '%s' could not validate it", name);
	}
	call_end(s);
	take_causes(causes, found);
	json_decref(found);
}

void rz_plugins_validate_tenant(rz_plugins_t *p, const json_t *tenant, const json_t *old,
                                json_t *causes)
{
	const char *cp =
	    json_string_value(json_object_get(json_object_get(tenant, "spec"), "clusterProvider"));
	const char *was =
	    json_string_value(json_object_get(json_object_get(old, "spec"), "clusterProvider"));
	struct slot *s;
	char names[512];

	if (cp == NULL || (was != NULL && strcmp(cp, was) == 0)) {
		return; /* the field schema reports a missing one; an unchanged one stays valid */
	}
	s = find(p, cp);
	if (s == NULL || !(s->pub.desc.kinds & REZUS_PLUGIN_CLUSTER)) {
		loaded_names(p, REZUS_PLUGIN_CLUSTER, names, sizeof(names));
		rz_fields_cause(causes, "spec.clusterProvider", RZ_CAUSE_NOT_SUPPORTED,
		                "no loaded cluster plugin '%s' (loaded: %s)", cp, names);
	}
}

/* ------------------------------------------------------------------ render */

static const char *const render_keys[] = {
	"required_providers", "variables", "tfvars", "resource", "data",
	"provider",           "locals",    "output", "exports"
};

/* The output must be an object of known keys, each an object, and not too big. */
static int check_output(const char *name, json_t *out, rz_err_t *err)
{
	const char *key;
	json_t *v;
	size_t size;
	char *text;

	json_object_foreach(out, key, v)
	{
		bool known = false;
		for (size_t i = 0; i < sizeof(render_keys) / sizeof(render_keys[0]); i++) {
			known = known || strcmp(key, render_keys[i]) == 0;
		}
		if (!known || !json_is_object(v)) {
			return rz_err_set(err, REZUS_ERENDER,
			                  "plugin '%s': render output has %s key '%s'", name,
			                  known ? "a non-object value at" : "an unknown", key);
		}
	}
	text = json_dumps(out, JSON_COMPACT);
	size = text ? strlen(text) : 0;
	free(text);
	if (size > RENDER_MAX) {
		return rz_err_set(err, REZUS_ERENDER,
		                  "plugin '%s': render output is %zu bytes, over the %u limit",
		                  name, size, RENDER_MAX);
	}
	return 0;
}

int rz_plugins_render(rz_plugins_t *p, const char *name, const json_t *ctx, json_t **out,
                      rz_err_t *err)
{
	struct slot *s = find(p, name);
	rezus_err_t perr = { 0 };
	int rc;

	*out = NULL;
	if (s == NULL) {
		return rz_err_set(err, REZUS_ERENDER, "plugin '%s' is not loaded", name);
	}
	*out = json_object();
	call_begin(s);
	rc = s->pub.desc.render(s->state, (const rezus_json_t *)ctx, (rezus_json_t *)*out, &perr);
	call_end(s);
	if (rc == 0 && !json_is_object(*out)) {
		rc = REZUS_ERENDER;
	}
	if (rc != 0) {
		rz_err_set(err, REZUS_ERENDER, "plugin '%s': render failed: %s", name,
		           perr.msg[0] ? perr.msg : rz_strerror(rc));
	} else {
		rc = check_output(name, *out, err);
	}
	if (rc != 0) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int rz_plugins_set_scope(rz_plugins_t *p, const char *tenant, json_t *scope, rz_err_t *err)
{
	if (json_object_set_new(p->scopes, tenant, scope) != 0) {
		return rz_err_set(err, -ENOMEM, "plugins: out of memory");
	}
	return 0;
}

const json_t *rz_plugins_scope(const rz_plugins_t *p, const char *tenant)
{
	return p != NULL ? json_object_get(p->scopes, tenant) : NULL;
}

int rz_plugins_project(rz_plugins_t *p, const char *name, const json_t *state, const json_t *scope,
                       json_t **objects, rz_err_t *err)
{
	struct slot *s = find(p, name);
	const json_t *mine = scope != NULL ? json_object_get(scope, name) : NULL;

	*objects = NULL;
	if (s == NULL || s->rules == NULL) {
		return rz_err_set(err, RZ_ENOTFOUND, "plugin '%s' is not loaded", name);
	}
	if (scope != NULL && mine == NULL) { /* it rendered nothing for the tenant */
		*objects = json_array();
		return *objects != NULL ? 0 : rz_err_set(err, -ENOMEM, "plugins: out of memory");
	}
	return rz_projection_run(s->rules, state, mine, objects, err);
}

const rz_projection_t *rz_plugins_rules(const rz_plugins_t *p, const char *name)
{
	const struct slot *s = find(p, name);

	return s != NULL ? s->rules : NULL;
}

/* ------------------------------------------------------------------ observation */

bool rz_plugins_observes(const rz_plugins_t *p, const char *name)
{
	const struct slot *s = find(p, name);

	return s != NULL && s->pub.desc.observe_probes != NULL;
}

int rz_plugins_observe_probes(rz_plugins_t *p, const char *name, const json_t *ctx, json_t **probes,
                              rz_err_t *err)
{
	struct slot *s = find(p, name);
	rezus_err_t perr = { 0 };
	rz_err_t why = { 0 };
	int rc;

	*probes = NULL;
	if (s == NULL || s->pub.desc.observe_probes == NULL) {
		return rz_err_set(err, RZ_ENOTFOUND,
		                  "plugin '%s' is not loaded or does not observe", name);
	}
	if ((*probes = json_array()) == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	call_begin(s);
	rc = s->pub.desc.observe_probes(s->state, (const rezus_json_t *)ctx,
	                                (rezus_json_t *)*probes, &perr);
	call_end(s);
	if (rc != 0) {
		rz_err_set(err, rc < 0 ? rc : REZUS_EINTERNAL,
		           "plugin '%s': observe_probes failed: %s", name,
		           perr.msg[0] ? perr.msg : rz_strerror(rc));
	} else if ((rc = rz_probe_check(*probes, &why)) != 0) {
		rz_err_set(err, rc, "plugin '%s': observe_probes broke the contract: %s", name,
		           why.msg);
	}
	if (rc != 0) {
		json_decref(*probes);
		*probes = NULL;
	}
	return rc;
}

int rz_plugins_observe_parse(rz_plugins_t *p, const char *name, const json_t *probe,
                             const json_t *result, json_t **facts, rz_err_t *err)
{
	struct slot *s = find(p, name);
	rezus_err_t perr = { 0 };
	rz_err_t why = { 0 };
	int rc;

	*facts = NULL;
	if (s == NULL || s->pub.desc.observe_parse == NULL) {
		return rz_err_set(err, RZ_ENOTFOUND,
		                  "plugin '%s' is not loaded or does not observe", name);
	}
	if ((*facts = json_object()) == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	call_begin(s);
	rc = s->pub.desc.observe_parse(s->state, (const rezus_json_t *)probe,
	                               (const rezus_json_t *)result, (rezus_json_t *)*facts, &perr);
	call_end(s);
	if (rc != 0) {
		rz_err_set(err, rc < 0 ? rc : REZUS_EINTERNAL,
		           "plugin '%s': observe_parse failed: %s", name,
		           perr.msg[0] ? perr.msg : rz_strerror(rc));
	} else if ((rc = rz_probe_check_facts(*facts, &why)) != 0) {
		rz_err_set(err, rc, "plugin '%s': observe_parse broke the contract: %s", name,
		           why.msg);
	}
	if (rc != 0) {
		json_decref(*facts);
		*facts = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------------ upgrades */

bool rz_plugins_upgrades(const rz_plugins_t *p, const char *name)
{
	const struct slot *s = find(p, name);

	return s != NULL && s->pub.desc.upgrade_commands != NULL;
}

int rz_plugins_upgrade_commands(rz_plugins_t *p, const char *name, const json_t *ctx,
                                json_t **commands, rz_err_t *err)
{
	struct slot *s = find(p, name);
	rezus_err_t perr = { 0 };
	rz_err_t why = { 0 };
	int rc;

	*commands = NULL;
	if (s == NULL || s->pub.desc.upgrade_commands == NULL) {
		return rz_err_set(err, RZ_ENOTFOUND,
		                  "plugin '%s' is not loaded or does not upgrade", name);
	}
	if ((*commands = json_array()) == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	call_begin(s);
	rc = s->pub.desc.upgrade_commands(s->state, (const rezus_json_t *)ctx,
	                                  (rezus_json_t *)*commands, &perr);
	call_end(s);
	if (rc != 0) {
		rz_err_set(err, rc < 0 ? rc : REZUS_EINTERNAL,
		           "plugin '%s': upgrade_commands failed: %s", name,
		           perr.msg[0] ? perr.msg : rz_strerror(rc));
	} else if ((rc = rz_probe_check_commands(*commands, &why)) != 0) {
		rz_err_set(err, rc, "plugin '%s': upgrade_commands broke the contract: %s", name,
		           why.msg);
	}
	if (rc != 0) {
		json_decref(*commands);
		*commands = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------------ etcd snapshots */

bool rz_plugins_has_etcd(const rz_plugins_t *p, const char *name)
{
	const struct slot *s = find(p, name);

	return s != NULL && s->pub.desc.etcd_commands != NULL;
}

/* The caller's part of the contract: an action the plugin knows and an absolute path. */
static int check_etcd_ctx(const json_t *ctx, rz_err_t *err)
{
	const char *action = json_string_value(json_object_get(ctx, "action"));
	const json_t *path = json_object_get(ctx, "path");

	if (action == NULL || (strcmp(action, "snapshot") != 0 && strcmp(action, "restore") != 0)) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "etcd: ctx.action must be \"snapshot\" or \"restore\"");
	}
	if (!json_is_string(path) || json_string_value(path)[0] != '/' ||
	    json_string_length(path) >= 4096 ||
	    strlen(json_string_value(path)) != json_string_length(path)) {
		return rz_err_set(err, REZUS_EINVALID, "etcd: ctx.path must be an absolute path");
	}
	return 0;
}

int rz_plugins_etcd_commands(rz_plugins_t *p, const char *name, const json_t *ctx,
                             json_t **commands, rz_err_t *err)
{
	struct slot *s = find(p, name);
	rezus_err_t perr = { 0 };
	rz_err_t why = { 0 };
	int rc;

	*commands = NULL;
	if (s == NULL || s->pub.desc.etcd_commands == NULL) {
		return rz_err_set(err, RZ_ENOTFOUND,
		                  "plugin '%s' is not loaded or takes no etcd snapshots", name);
	}
	if ((rc = check_etcd_ctx(ctx, err)) != 0) {
		return rc;
	}
	if ((*commands = json_array()) == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	call_begin(s);
	rc = s->pub.desc.etcd_commands(s->state, (const rezus_json_t *)ctx,
	                               (rezus_json_t *)*commands, &perr);
	call_end(s);
	if (rc != 0) {
		rz_err_set(err, rc < 0 ? rc : REZUS_EINTERNAL,
		           "plugin '%s': etcd_commands failed: %s", name,
		           perr.msg[0] ? perr.msg : rz_strerror(rc));
	} else if ((rc = rz_probe_check_etcd_commands(
	                *commands, json_string_value(json_object_get(ctx, "action")), &why)) != 0) {
		rz_err_set(err, rc, "plugin '%s': etcd_commands broke the contract: %s", name,
		           why.msg);
	}
	if (rc != 0) {
		json_decref(*commands);
		*commands = NULL;
	}
	return rc;
}
