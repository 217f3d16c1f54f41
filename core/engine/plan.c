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
