/* core/plugin/probe.c - the observation contract, checked on the host's side. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/model/kinds.h"
#include "core/model/states.h"
#include "core/plugin/probe.h"

static const char *const tools[] = { "talosctl", "kubectl", NULL };
static const char *const credentials[] = { "talosconfig", "kubeconfig", "none", NULL };

static bool one_of(const char *s, const char *const *list)
{
	for (; s != NULL && *list != NULL; list++) {
		if (strcmp(s, *list) == 0) {
			return true;
		}
	}
	return false;
}

int rz_probe_stage_known(const char *stage)
{
	return rz_machine_stage_of(stage) >= 0;
}

/* A probe id: 1 to 63 of [A-Za-z0-9._:/-]. */
static bool id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	return n > 0 && n < 64 &&
	       strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/-") ==
	           n;
}

/* noun: what the list being checked holds, "probe" or "command", for the messages. */
static int bad(rz_err_t *err, const char *noun, size_t i, const json_t *probe, const char *what)
{
	const char *id = json_string_value(json_object_get(probe, "id"));

	return rz_err_set(err, REZUS_EINVALID, "%s %zu%s%s%s: %s", noun, i, id ? " ('" : "",
	                  id ? id : "", id ? "')" : "", what);
}

static int check_args(json_t *probe, const char *noun, size_t i, rz_err_t *err)
{
	json_t *args = json_object_get(probe, "args"), *a;
	size_t j;

	if (args == NULL) {
		return json_object_set_new(probe, "args", json_array()) == 0
		           ? 0
		           : rz_err_set(err, -ENOMEM, "out of memory");
	}
	if (!json_is_array(args) || json_array_size(args) > RZ_PROBE_ARGS_MAX) {
		return bad(err, noun, i, probe, "args must be a list of at most 64 strings");
	}
	json_array_foreach(args, j, a)
	{
		if (!json_is_string(a) || json_string_length(a) > 4096 ||
		    strlen(json_string_value(a)) != json_string_length(a)) {
			return bad(err, noun, i, probe,
			           "args must be strings (no NUL, at most 4096 bytes)");
		}
	}
	return 0;
}

/* What a list holds and its limits: probes, upgrade commands or etcd commands. */
struct rules {
	const char *noun, *what; /* "probe", "probes" */
	size_t max;
	int64_t tmax;
	bool simulate; /* etcd commands: a "simulate" member is known */
};

static int check_one(json_t *probe, const struct rules *r, size_t i, json_t *seen, rz_err_t *err)
{
	static const char *const members[] = { "id",          "tool",    "args", "timeout",
		                               "credentials", "machine", "data", NULL };
	const char *key, *id, *noun = r->noun;
	int64_t tmax = r->tmax;
	json_t *v, *tool, *timeout, *cred, *machine;

	if (!json_is_object(probe)) {
		return bad(err, noun, i, probe, "must be an object");
	}
	json_object_foreach(probe, key, v)
	{
		if (!one_of(key, members) && !(r->simulate && strcmp(key, "simulate") == 0)) {
			return rz_err_set(err, REZUS_EINVALID, "%s %zu: unknown member '%s'", noun,
			                  i, key);
		}
	}
	id = json_string_value(json_object_get(probe, "id"));
	if (!id_ok(id)) {
		return bad(err, noun, i, probe, "id must be 1 to 63 of [A-Za-z0-9._:/-]");
	}
	if (json_object_get(seen, id) != NULL) {
		return bad(err, noun, i, probe, "id is not unique");
	}
	json_object_set_new(seen, id, json_true());
	tool = json_object_get(probe, "tool");
	if (tool != NULL && !json_is_null(tool) && !one_of(json_string_value(tool), tools)) {
		return bad(err, noun, i, probe, "tool must be \"talosctl\", \"kubectl\" or null");
	}
	timeout = json_object_get(probe, "timeout");
	if (timeout == NULL) {
		json_object_set_new(probe, "timeout", json_integer(RZ_PROBE_TIMEOUT_DEF));
	} else if (!json_is_integer(timeout) ||
	           json_integer_value(timeout) < RZ_PROBE_TIMEOUT_MIN ||
	           json_integer_value(timeout) > tmax) {
		char what[96];
		snprintf(what, sizeof(what), "timeout must be milliseconds from %d to %lld",
		         RZ_PROBE_TIMEOUT_MIN, (long long)tmax);
		return bad(err, noun, i, probe, what);
	}
	cred = json_object_get(probe, "credentials");
	if (cred == NULL) {
		json_object_set_new(probe, "credentials", json_string("none"));
	} else if (!one_of(json_string_value(cred), credentials)) {
		return bad(err, noun, i, probe,
		           "credentials must be \"talosconfig\", \"kubeconfig\" or \"none\"");
	}
	machine = json_object_get(probe, "machine");
	if (machine != NULL && (!json_is_string(machine) || json_string_length(machine) > 253)) {
		return bad(err, noun, i, probe, "machine must be a Machine's name");
	}
	return check_args(probe, noun, i, err);
}

static int check_list(json_t *probes, const struct rules *r, rz_err_t *err)
{
	json_t *seen, *p;
	size_t i;
	int rc = 0;

	if (!json_is_array(probes) || json_array_size(probes) > r->max) {
		return rz_err_set(err, REZUS_EINVALID, "%s must be a list of at most %zu", r->what,
		                  r->max);
	}
	if ((seen = json_object()) == NULL) {
		return rz_err_set(err, -ENOMEM, "out of memory");
	}
	json_array_foreach(probes, i, p)
	{
		if ((rc = check_one(p, r, i, seen, err)) != 0) {
			break;
		}
	}
	json_decref(seen);
	return rc;
}

int rz_probe_check(json_t *probes, rz_err_t *err)
{
	static const struct rules r = { "probe", "probes", RZ_PROBE_MAX, RZ_PROBE_TIMEOUT_MAX,
		                        false };

	return check_list(probes, &r, err);
}

int rz_probe_check_commands(json_t *commands, rz_err_t *err)
{
	static const struct rules r = { "command", "commands", RZ_UPGRADE_COMMANDS_MAX,
		                        RZ_UPGRADE_COMMAND_TIMEOUT_MAX, false };

	return check_list(commands, &r, err);
}

/* ------------------------------------------------------------------ etcd commands */

/* A command's "simulate" (present): {"write": text} with tool null, for a snapshot. */
static int check_simulate(const json_t *c, size_t i, bool snapshot, rz_err_t *err)
{
	const json_t *sim = json_object_get(c, "simulate");
	const json_t *write = json_object_get(sim, "write");
	const json_t *tool = json_object_get(c, "tool");

	if (!snapshot) {
		return bad(err, "command", i, c, "simulate is only for a snapshot");
	}
	if (tool != NULL && !json_is_null(tool)) {
		return bad(err, "command", i, c, "simulate goes with tool null: nothing else runs");
	}
	if (!json_is_object(sim) || json_object_size(sim) != 1 || !json_is_string(write)) {
		return bad(err, "command", i, c, "simulate must be {\"write\": \"<text>\"}");
	}
	if (json_string_length(write) > RZ_ETCD_SIMULATE_MAX ||
	    strlen(json_string_value(write)) != json_string_length(write)) {
		return bad(err, "command", i, c,
		           "simulate.write must be text of at most 1 MiB, without NUL");
	}
	return 0;
}

int rz_probe_check_etcd_commands(json_t *commands, const char *action, rz_err_t *err)
{
	static const struct rules r = { "command", "commands", RZ_ETCD_COMMANDS_MAX,
		                        RZ_ETCD_COMMAND_TIMEOUT_MAX, true };
	bool snapshot = action != NULL && strcmp(action, "snapshot") == 0;
	size_t i, simulated = 0, writers = 0;
	json_t *c;
	int rc;

	if (!snapshot && (action == NULL || strcmp(action, "restore") != 0)) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "action must be \"snapshot\" or \"restore\"");
	}
	if ((rc = check_list(commands, &r, err)) != 0) {
		return rc;
	}
	json_array_foreach(commands, i, c)
	{
		if (json_object_get(c, "simulate") != NULL) {
			if ((rc = check_simulate(c, i, snapshot, err)) != 0) {
				return rc;
			}
			if (simulated++ > 0) {
				return bad(err, "command", i, c,
				           "only one command of a snapshot may simulate it");
			}
		}
		writers += json_object_get(c, "simulate") != NULL ||
		           json_is_string(json_object_get(c, "tool"));
	}
	if (snapshot && writers == 0) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "a snapshot needs a command that writes the file: one with a "
		                  "tool, or one with simulate.write");
	}
	return 0;
}

/* ------------------------------------------------------------------ facts */

enum type { T_STRING, T_BOOL, T_COUNT };

struct member {
	const char *name;
	enum type type;
};

static const struct member machine_members[] = {
	{ "stage", T_STRING },   { "ready", T_BOOL },   { "talosVersion", T_STRING },
	{ "nodeReady", T_BOOL }, { "error", T_STRING }, { "kubernetesVersion", T_STRING },
	{ NULL, T_STRING },
};

static const struct member tenant_members[] = {
	{ "controlPlaneHealthy", T_BOOL }, { "etcdMembers", T_COUNT }, { "nodes", T_COUNT },
	{ "nodesReady", T_COUNT },         { "error", T_STRING },      { NULL, T_STRING },
};

static bool type_ok(const json_t *v, enum type t)
{
	switch (t) {
	case T_STRING:
		return json_is_string(v) && json_string_length(v) <= 4096;
	case T_BOOL:
		return json_is_boolean(v);
	case T_COUNT:
		return json_is_integer(v) && json_integer_value(v) >= 0 &&
		       json_integer_value(v) <= 1000000;
	}
	return false;
}

static int check_members(const json_t *obj, const struct member *ms, const char *where,
                         rz_err_t *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj)) {
		return rz_err_set(err, REZUS_EINVALID, "facts: %s must be an object", where);
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		const struct member *m = ms;
		while (m->name != NULL && strcmp(m->name, key) != 0) {
			m++;
		}
		if (m->name == NULL) {
			return rz_err_set(err, REZUS_EINVALID, "facts: %s: unknown member '%s'",
			                  where, key);
		}
		if (!type_ok(v, m->type)) {
			return rz_err_set(err, REZUS_EINVALID, "facts: %s.%s: wrong type", where,
			                  key);
		}
	}
	return 0;
}

int rz_probe_check_facts(const json_t *facts, rz_err_t *err)
{
	const char *key, *name;
	json_t *v, *m;
	char where[300];
	int rc;

	if (!json_is_object(facts)) {
		return rz_err_set(err, REZUS_EINVALID, "facts must be an object");
	}
	json_object_foreach((json_t *)facts, key, v)
	{
		if (strcmp(key, "tenant") == 0) {
			if ((rc = check_members(v, tenant_members, "tenant", err)) != 0) {
				return rc;
			}
		} else if (strcmp(key, "machines") == 0) {
			if (!json_is_object(v)) {
				return rz_err_set(err, REZUS_EINVALID,
				                  "facts: machines must be an object");
			}
			json_object_foreach(v, name, m)
			{
				snprintf(where, sizeof(where), "machines.%.253s", name);
				if ((rc = check_members(m, machine_members, where, err)) != 0) {
					return rc;
				}
				if (json_object_get(m, "stage") != NULL &&
				    !rz_probe_stage_known(
				        json_string_value(json_object_get(m, "stage")))) {
					return rz_err_set(
					    err, REZUS_EINVALID,
					    "facts: %s.stage: '%s' is not a stage", where,
					    json_string_value(json_object_get(m, "stage")));
				}
			}
		} else {
			return rz_err_set(err, REZUS_EINVALID,
			                  "facts: unknown member '%s' (machines, tenant)", key);
		}
	}
	return 0;
}

void rz_probe_merge(json_t *into, const json_t *facts)
{
	const char *name;
	json_t *m, *machines = json_object_get(facts, "machines");
	json_t *tenant = json_object_get(facts, "tenant");

	if (tenant != NULL) {
		if (json_object_get(into, "tenant") == NULL) {
			json_object_set_new(into, "tenant", json_object());
		}
		json_object_update(json_object_get(into, "tenant"), tenant);
	}
	if (machines == NULL) {
		return;
	}
	if (json_object_get(into, "machines") == NULL) {
		json_object_set_new(into, "machines", json_object());
	}
	json_object_foreach(machines, name, m)
	{
		json_t *all = json_object_get(into, "machines"), *have = json_object_get(all, name);
		if (have == NULL) {
			json_object_set_new(all, name, json_deep_copy(m));
		} else {
			json_object_update(have, m);
		}
	}
}
