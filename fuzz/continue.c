/*
 * fuzz/continue.c - `continue` tokens of paged lists (?continue=...), which clients hand
 * back as they got them, or not.
 *
 * Invariants: a token decodes to an owner and a non-empty name without line feeds, both
 * inside the buffer; re-encoding them gives a token that decodes to the same pair.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/api/api.h"
#include "core/model/kinds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const rz_kind_t *k = rz_kind_by_name("NodeGroup");
	char *token = fz_cstr(data, size), key[160], key2[160];
	const char *tenant = NULL, *name = NULL, *t2 = NULL, *n2 = NULL;
	json_t *last;
	char *again;

	if (!rz_api_continue_decode(token, key, sizeof(key), &tenant, &name)) {
		free(token);
		return 0;
	}
	FZ_ASSERT(tenant >= key && name > tenant && name < key + sizeof(key), "outside the key");
	FZ_ASSERT(name[0] != '\0' && strchr(tenant, '\n') == NULL && strchr(name, '\n') == NULL,
	          "a decoded pair with a line feed or no name");
	last = json_pack("{s:{s:s,s:s}}", "metadata", "tenant", tenant, "name", name);
	if (last != NULL) { /* NULL: not UTF-8, which no stored name is */
		again = rz_api_continue_encode(k, last);
		FZ_ASSERT(again != NULL, "no token");
		FZ_ASSERT(rz_api_continue_decode(again, key2, sizeof(key2), &t2, &n2) &&
		              strcmp(t2, tenant) == 0 && strcmp(n2, name) == 0,
		          "'%s' re-encoded as '%s' does not decode the same", token, again);
		free(again);
		json_decref(last);
	}
	free(token);
	return 0;
}
