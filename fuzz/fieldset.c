/*
 * fuzz/fieldset.c - FieldsV1 sets and metadata.managedFields, as stored objects carry them
 * (server-side apply; a restored backup brings whatever it holds).
 *
 * Input: a JSON document, "\n---8<---\n", a second (either may be missing). A list is read as
 * metadata.managedFields, an object as FieldsV1.
 * Invariants: inputs are not modified; a set comes with 0 and only with 0, errors are
 * RZ_EPARSE or -ENOMEM; a set encodes to FieldsV1 that parses back to itself, and managers
 * decoded encode to a list that decodes and encodes to itself; for two sets a and b:
 * (a − b) ∪ (a ∩ b) = a, (a − b) ∩ b = ∅, a − (a ∪ b) = ∅, and every path of a ∩ b is a path
 * of a.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "core/model/fieldset.h"
#include "core/model/managed.h"

/* in as a set, or NULL when it is none (checking how it failed). */
static json_t *parsed(const json_t *in)
{
	json_t *before = json_deep_copy(in), *set = NULL;
	rz_err_t err = { 0 };
	int rc = rz_fieldset_parse(in, &set, &err);

	FZ_ASSERT(json_equal(in, before), "input modified");
	FZ_ASSERT((rc == 0) == (set != NULL), "rc %d with%s a set", rc, set ? "" : "out");
	FZ_ASSERT(rc == 0 || rc == RZ_EPARSE || rc == -ENOMEM, "unexpected rc %d", rc);
	FZ_ASSERT(rc == 0 || err.msg[0] != '\0', "an error without a message");
	json_decref(before);
	return set;
}

static void round_trip(const json_t *set)
{
	json_t *enc = rz_fieldset_encode(set), *again;

	FZ_ASSERT(enc != NULL, "no encoding");
	again = parsed(enc);
	FZ_ASSERT(again != NULL && json_equal(again, set), "FieldsV1 does not parse back");
	json_decref(again);
	json_decref(enc);
}

static bool subset_paths(const json_t *small, const json_t *big)
{
	json_t *ps = rz_fieldset_paths(small), *pb = rz_fieldset_paths(big);
	size_t i, j;
	json_t *p, *q;
	bool all = ps != NULL && pb != NULL;

	json_array_foreach(ps, i, p)
	{
		bool found = false;
		json_array_foreach(pb, j, q)
		{
			found = found || json_equal(p, q);
		}
		all = all && found;
	}
	json_decref(ps);
	json_decref(pb);
	return all;
}

static void algebra(const json_t *a, const json_t *b)
{
	json_t *d = rz_fieldset_difference(a, b), *n = rz_fieldset_intersection(a, b);
	json_t *u = rz_fieldset_union(a, b);
	json_t *back = d && n ? rz_fieldset_union(d, n) : NULL;
	json_t *none = d ? rz_fieldset_intersection(d, b) : NULL;
	json_t *gone = u ? rz_fieldset_difference(a, u) : NULL;

	FZ_ASSERT(back != NULL && json_equal(back, a), "(a - b) | (a & b) is not a");
	FZ_ASSERT(none != NULL && rz_fieldset_empty(none), "(a - b) & b is not empty");
	FZ_ASSERT(gone != NULL && rz_fieldset_empty(gone), "a - (a | b) is not empty");
	FZ_ASSERT(subset_paths(n, a), "a path of a & b is not one of a");
	round_trip(u);
	json_decref(d);
	json_decref(n);
	json_decref(u);
	json_decref(back);
	json_decref(none);
	json_decref(gone);
}

static void managers(const json_t *in)
{
	json_t *before = json_deep_copy(in), *enc = NULL, *enc2 = NULL;
	rz_managed_t m, m2;
	rz_err_t err = { 0 };
	int rc = rz_managed_decode(&m, in, &err);

	FZ_ASSERT(json_equal(in, before), "input modified");
	FZ_ASSERT(rc == 0 || rc == RZ_EPARSE || rc == -ENOMEM, "unexpected rc %d", rc);
	FZ_ASSERT(rc == 0 || m.n == 0, "%zu entries after a failure", m.n);
	if (rc == 0 && rz_managed_encode(&m, &enc, &err) == 0) {
		FZ_ASSERT(rz_managed_decode(&m2, enc, &err) == 0,
		          "encoded managers do not decode: %s", err.msg);
		FZ_ASSERT(rz_managed_encode(&m2, &enc2, &err) == 0 && json_equal(enc, enc2),
		          "encoded managers do not encode to themselves");
		rz_managed_fini(&m2);
	}
	rz_managed_fini(&m);
	json_decref(enc);
	json_decref(enc2);
	json_decref(before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a, *b;
	json_t *ja, *jb, *sa = NULL, *sb = NULL;

	fz_split(data, size, &a, &b);
	ja = json_loads(a, JSON_DECODE_ANY, NULL);
	jb = b[0] ? json_loads(b, JSON_DECODE_ANY, NULL) : json_object();
	free(a);
	free(b);
	if (json_is_array(ja)) {
		managers(ja);
	} else if (ja != NULL) {
		sa = parsed(ja);
		sb = jb ? parsed(jb) : NULL;
	}
	if (sa != NULL) {
		round_trip(sa);
	}
	if (sa != NULL && sb != NULL) {
		algebra(sa, sb);
	}
	json_decref(sa);
	json_decref(sb);
	json_decref(ja);
	json_decref(jb);
	return 0;
}
