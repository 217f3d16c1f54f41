/*
 * fuzz/configpatch.c - ConfigPatch spec.patch: the Talos machine-config patch a user writes
 * as YAML, checked on the loop when the object is written (rz_format_yaml, with its depth
 * limit) and escaped into the talos plugin's render.
 *
 * Input: the patch text. Invariants: a ConfigPatch that validates holds a patch libyaml
 * parses (no syntax error); nothing read from it nests deeper than the limit; its escaped
 * form starts no TF template.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/base/errors.h"
#include "core/base/yaml.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"
#include "core/plugin/host.h"

static char *plain_alloc(void *ctx, size_t n)
{
	return malloc(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const rz_kind_t *k = rz_kind_by_name("ConfigPatch");
	char *text = fz_cstr(data, size);
	json_t *patch = json_string(text), *spec, *causes, *docs = NULL;
	rz_err_t err = { 0 };
	char *escaped;
	int rc;

	if (patch == NULL) { /* not UTF-8: the JSON decoder refuses the body first */
		free(text);
		return 0;
	}
	spec = json_pack("{s:o,s:s}", "patch", patch, "targetRole", "worker");
	causes = json_array();
	if (rz_fields_validate(spec, k->spec, "spec", true, causes) == 0) {
		rc = rz_yaml_load_all("patch", text, strlen(text), &docs, &err);
		FZ_ASSERT(rc != RZ_EPARSE, "a valid patch that libyaml cannot parse: %s", err.msg);
		FZ_ASSERT(rc != 0 || fz_json_depth(docs) <= RZ_YAML_MAX_DEPTH + 1, "too deep");
		escaped = rz_tf_escape(text, plain_alloc, NULL);
		fz_check_tf_escaped(text, escaped);
		free(escaped);
		json_decref(docs);
	} else {
		fz_check_causes(causes);
	}
	json_decref(causes);
	json_decref(spec);
	free(text);
	return 0;
}
