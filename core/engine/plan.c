/* core/engine/plan.c - what a saved plan would do. */
#include <config.h>

#include <string.h>

#include "core/engine/plan.h"

json_t *rz_plan_counts(const json_t *plan)
{
	json_int_t add = 0, change = 0, destroy = 0;
	size_t i;
	json_t *rc;

	json_array_foreach(json_object_get(plan, "resource_changes"), i, rc)
	{
		json_t *actions = json_object_get(json_object_get(rc, "change"), "actions");
		size_t j;
		json_t *a;
		bool c = false, d = false, u = false;
		json_array_foreach(actions, j, a)
		{
			const char *s = json_string_value(a);
			c = c || (s && strcmp(s, "create") == 0);
			d = d || (s && strcmp(s, "delete") == 0);
			u = u || (s && strcmp(s, "update") == 0);
		}
		add += c;
		destroy += d;
		change += u;
	}
	return json_pack("{s:I, s:I, s:I}", "add", add, "change", change, "destroy", destroy);
}

bool rz_plan_changes(const json_t *plan)
{
	json_t *rc, *oc, *a;
	const char *name;
	bool any = plan == NULL; /* unreadable: apply, to be safe */
	size_t i, j;

	json_array_foreach(json_object_get(plan, "resource_changes"), i, rc)
	{
		json_array_foreach(json_object_get(json_object_get(rc, "change"), "actions"), j, a)
		{
			const char *s = json_string_value(a);
			any =
			    any || (s != NULL && strcmp(s, "no-op") != 0 && strcmp(s, "read") != 0);
		}
	}
	json_object_foreach(json_object_get(plan, "output_changes"), name, oc)
	{
		json_array_foreach(json_object_get(oc, "actions"), j, a)
		{
			const char *s = json_string_value(a);
			any = any || (s != NULL && strcmp(s, "no-op") != 0);
		}
	}
	return any;
}

/* The action of one resource change, as an approver says it. */
static const char *action_of(const json_t *actions)
{
	bool c = false, d = false, u = false, r = false;
	size_t i;
	json_t *a;

	json_array_foreach(actions, i, a)
	{
		const char *s = json_string_value(a);
		c = c || (s && strcmp(s, "create") == 0);
		d = d || (s && strcmp(s, "delete") == 0);
		u = u || (s && strcmp(s, "update") == 0);
		r = r || (s && strcmp(s, "read") == 0);
	}
	return c && d ? "replace" : c ? "create" : d ? "delete" : u ? "update" : r ? "read" : NULL;
}

json_t *rz_plan_list(const json_t *plan, const json_t *machines)
{
	json_t *out = json_object(), *list = json_array(), *rc, *m;
	size_t i, j, n = 0;

	json_array_foreach(json_object_get(plan, "resource_changes"), i, rc)
	{
		const char *address = json_string_value(json_object_get(rc, "address"));
		const char *action =
		    action_of(json_object_get(json_object_get(rc, "change"), "actions"));
		const char *reason = json_string_value(json_object_get(rc, "action_reason"));
		json_t *entry;

		if (address == NULL || action == NULL) {
			continue; /* no-op */
		}
		if (++n > RZ_PLAN_LIST_MAX) {
			continue;
		}
		entry = json_pack("{s:s, s:s}", "address", address, "action", action);
		if (reason != NULL) {
			json_object_set_new(entry, "reason", json_string(reason));
		}
		json_array_foreach((json_t *)machines, j, m)
		{
			const char *tf = json_string_value(
			    json_object_get(json_object_get(m, "spec"), "tfAddress"));
			if (tf != NULL && strcmp(tf, address) == 0) {
				json_object_set(
				    entry, "machine",
				    json_object_get(json_object_get(m, "metadata"), "name"));
				break;
			}
		}
		json_array_append_new(list, entry);
	}
	json_object_set_new(out, "resources", list);
	if (n > RZ_PLAN_LIST_MAX) {
		json_object_set_new(out, "more", json_integer((json_int_t)(n - RZ_PLAN_LIST_MAX)));
	}
	return out;
}
