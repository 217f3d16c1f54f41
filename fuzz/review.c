/*
 * fuzz/review.c - kubectl's reviews sent as Kubernetes protobuf (POST
 * /apis/authorization.k8s.io/v1/selfsubjectaccessreviews and the like): the few strings
 * read out of the wire format.
 *
 * Invariants: no read outside the input (ASan); a decoded review is an object whose spec
 * members are strings; decoding the same input twice gives the same object.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/auth/review.h"

static const char *const kinds[] = { "SelfSubjectAccessReview", "SelfSubjectRulesReview",
	                             "SelfSubjectReview" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_t *o = rz_review_decode((const char *)data, size, kinds[i]);
		json_t *again = rz_review_decode((const char *)data, size, kinds[i]);
		json_t *ra = json_object_get(json_object_get(o, "spec"), "resourceAttributes");
		const char *key;
		json_t *v;

		FZ_ASSERT((o == NULL) == (again == NULL) && (o == NULL || json_equal(o, again)),
		          "two decodings differ");
		FZ_ASSERT(o == NULL || json_is_object(o), "not an object");
		json_object_foreach(ra, key, v)
		{
			FZ_ASSERT(json_is_string(v) || json_is_null(v), "%s is no string", key);
		}
		json_decref(o);
		json_decref(again);
	}
	return 0;
}
