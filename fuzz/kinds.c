/*
 * fuzz/kinds.c - request bodies of every kind: decoded as the API decodes them (JSON, or one
 * YAML document) and validated against the kind table (metadata, spec with defaults, the
 * kind's cross-field check; or the status and top-level members of a status write).
 *
 * Input: byte 0 picks the kind (modulo the table's size, so every kind is reached), bit 0
 * of byte 1 YAML instead of JSON, bit 1 a status write; the rest is the body.
 * Invariants: every cause is complete; a spec write that validates validates again, and
 * unchanged (defaults and checks are idempotent); the schema's OpenAPI form exists.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/base/yaml.h"
#include "core/model/fields.h"
#include "core/model/kinds.h"

static json_t *decode(const char *body, size_t len, int yaml)
{
	json_t *docs = NULL, *obj = NULL;
	rz_err_t err = { 0 };

	if (!yaml) {
		obj = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	} else if (rz_yaml_load_all("body", body, len, &docs, &err) == 0) {
		FZ_ASSERT(fz_json_depth(docs) <= RZ_YAML_MAX_DEPTH + 1,
		          "YAML deeper than the limit");
		if (json_array_size(docs) == 1) {
			obj = json_incref(json_array_get(docs, 0));
		}
		json_decref(docs);
	} else {
		FZ_ASSERT(err.msg[0] != '\0', "a YAML error without a message");
	}
	if (obj != NULL && !json_is_object(obj)) {
		json_decref(obj);
		obj = NULL;
	}
	return obj;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;
	const rz_kind_t *kinds = rz_kinds(&n), *k;
	json_t *obj, *causes;

	if (size < 2) {
		return 0;
	}
	k = &kinds[data[0] % n];
	obj = decode((const char *)data + 2, size - 2, data[1] & 1);
	if (obj == NULL) {
		return 0;
	}
	causes = json_array();
	if (data[1] & 2) {
		rz_kind_validate_status_write(k, obj, causes);
		fz_check_causes(causes);
	} else if (rz_kind_validate_spec_write(k, obj, NULL, causes) == 0) {
		json_t *again = json_deep_copy(obj), *more = json_array();
		FZ_ASSERT(rz_kind_validate_spec_write(k, again, NULL, more) == 0,
		          "%s: valid once, invalid twice", k->kind);
		FZ_ASSERT(json_equal(obj, again), "%s: a second validation changed the object",
		          k->kind);
		json_decref(again);
		json_decref(more);
	} else {
		fz_check_causes(causes);
	}
	json_decref(causes);
	json_decref(obj);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t n = 0;
	const rz_kind_t *kinds = rz_kinds(&n);

	for (size_t i = 0; i < n; i++) {
		json_t *schema = kinds[i].spec ? rz_fields_openapi(kinds[i].spec) : json_object();
		FZ_ASSERT(schema != NULL, "%s: no OpenAPI schema", kinds[i].kind);
		json_decref(schema);
	}
	return 0;
}
