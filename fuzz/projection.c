/*
 * fuzz/projection.c - projection rules (a plugin's static JSON) and state projection: the
 * rules run over a TF state v4 document after every apply.
 *
 * Input: the rules, "\n---8<---\n", the state (JSON). Invariants: refused rules say why;
 * objects come out sorted by name, each with a kind, a DNS-1123 label for a name, a TF
 * address and a spec of strings (addresses: an array of strings); an empty scope projects
 * nothing; the same run twice gives the same objects.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/model/fields.h"
#include "core/plugin/projection.h"

static void check_objects(const json_t *objs)
{
	const char *prev = NULL;
	size_t i;
	json_t *o;

	FZ_ASSERT(json_is_array(objs), "not an array");
	json_array_foreach(objs, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		json_t *spec = json_object_get(o, "spec"), *v;
		const char *key;
		char msg[256];

		FZ_ASSERT(json_is_string(json_object_get(o, "kind")), "object %zu has no kind", i);
		FZ_ASSERT(json_is_string(json_object_get(o, "tfAddress")), "no tfAddress");
		FZ_ASSERT(name != NULL && rz_format_dns1123_label(name, msg, sizeof(msg)),
		          "object %zu: name '%s': %s", i, name ? name : "(none)", msg);
		FZ_ASSERT(prev == NULL || strcmp(prev, name) <= 0, "not sorted: %s, %s", prev,
		          name);
		FZ_ASSERT(json_is_object(spec), "object %zu has no spec", i);
		json_object_foreach(spec, key, v)
		{
			FZ_ASSERT(json_is_string(v) ||
			              (strcmp(key, "addresses") == 0 && json_is_array(v)),
			          "spec.%s is not a string", key);
		}
		prev = name;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *rules, *text;
	rz_projection_t *p = NULL;
	rz_err_t err = { 0 };
	json_t *state, *objs = NULL, *again = NULL, *none = NULL, *empty, *warnings;

	fz_split(data, size, &rules, &text);
	if (rz_projection_parse(rules, &p, &err) != 0) {
		FZ_ASSERT(p == NULL && err.msg[0] != '\0', "a refusal without a reason");
		free(rules);
		free(text);
		return 0;
	}
	warnings = json_array();
	(void)rz_projection_lint(p, NULL, warnings);
	json_decref(warnings);
	state = json_loads(text, 0, NULL);
	if (state != NULL && rz_projection_run(p, state, NULL, &objs, &err) == 0) {
		check_objects(objs);
		FZ_ASSERT(rz_projection_run(p, state, NULL, &again, &err) == 0 &&
		              json_equal(objs, again),
		          "two runs differ");
		empty = json_array();
		FZ_ASSERT(rz_projection_run(p, state, empty, &none, &err) == 0 &&
		              json_array_size(none) == 0,
		          "an empty scope projected objects");
		json_decref(empty);
	}
	json_decref(none);
	json_decref(again);
	json_decref(objs);
	json_decref(state);
	rz_projection_free(p);
	free(rules);
	free(text);
	return 0;
}
