/*
 * fuzz/s3xml.c - what an S3 endpoint answers and core/offsite reads: a page of a
 * ListObjectsV2 listing and an <Error> (core/offsite/s3xml.c), from a server the operator
 * configured but that may be anything.
 *
 * Invariants: the same input reads the same way twice; a page read is a list of at most
 * RZ_TARGET_LIST_MAX items, each a valid key, a size ≥ 0 and an RFC 3339 time, with a
 * continuation token when truncated; a page refused says why, as "s3: ..."; an error's code
 * and message are printable ASCII that fit their buffers.
 */
#include <config.h>

#include "fuzz/fuzz.h"
#include "core/base/clock.h"
#include "core/offsite/offsite-int.h"

static void check_items(const json_t *items, bool more, const char *next)
{
	size_t i;
	json_t *it;

	FZ_ASSERT(json_array_size(items) <= RZ_TARGET_LIST_MAX, "%zu items",
	          json_array_size(items));
	FZ_ASSERT(!more || (next[0] != '\0' && strlen(next) < RZ__S3_TOKEN_MAX),
	          "truncated without a token");
	json_array_foreach(items, i, it)
	{
		const char *key = json_string_value(json_object_get(it, "key"));
		const char *mod = json_string_value(json_object_get(it, "modified"));
		json_t *size = json_object_get(it, "size");
		FZ_ASSERT(key != NULL && rz_target_check_key(key, NULL) == 0, "item %zu: a bad key",
		          i);
		FZ_ASSERT(json_is_integer(size) && json_integer_value(size) >= 0, "item %zu: size",
		          i);
		FZ_ASSERT(mod != NULL && rz_clock_parse(mod) >= 0, "item %zu: modified", i);
	}
}

static void check_printable(const char *s, size_t size)
{
	FZ_ASSERT(strlen(s) < size, "'%s' does not fit %zu bytes", s, size);
	for (; *s != '\0'; s++) {
		FZ_ASSERT(*s >= ' ' && *s <= '~', "a byte 0x%02x that is not printable",
		          (unsigned char)*s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *xml = (const char *)data, *strip = size > 0 && data[0] == '<' ? "" : "rezus/";
	json_t *a = json_array(), *b = json_array();
	char next_a[RZ__S3_TOKEN_MAX + 1], next_b[RZ__S3_TOKEN_MAX + 1];
	char code[64], msg[128], code2[64], msg2[128];
	rz_err_t ea = { 0 }, eb = { 0 };
	bool more_a, more_b;
	int ra, rb;

	ra = rz__s3_parse_list(xml, size, strip, a, &more_a, next_a, sizeof(next_a), &ea);
	rb = rz__s3_parse_list(xml, size, strip, b, &more_b, next_b, sizeof(next_b), &eb);
	FZ_ASSERT(ra == rb && (ra < 0 || (json_equal(a, b) && more_a == more_b &&
	                                  strcmp(next_a, next_b) == 0)),
	          "two reads differ");
	if (ra == 0) {
		check_items(a, more_a, next_a);
	} else {
		FZ_ASSERT(strncmp(ea.msg, "s3: ", 4) == 0, "a refusal '%s'", ea.msg);
	}
	rz__s3_parse_error(xml, size, code, sizeof(code), msg, sizeof(msg));
	check_printable(code, sizeof(code));
	check_printable(msg, sizeof(msg));
	rz__s3_parse_error(xml, size, code2, sizeof(code2), msg2, sizeof(msg2));
	FZ_ASSERT(strcmp(code, code2) == 0 && strcmp(msg, msg2) == 0, "two error reads differ");
	json_decref(a);
	json_decref(b);
	return 0;
}
