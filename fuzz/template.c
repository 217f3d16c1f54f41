/*
 * fuzz/template.c - the TF template escaping every user string goes through on its way into
 * a render (the host's tf_escape(), PROTOCOLS.md §3), and TF identifiers made from user
 * names (tf_name()).
 *
 * Invariants: the escaped text starts no template and reads back, under TF's rules, as the
 * input; a name is [a-z0-9_], starts with a letter, and fits its buffer.
 */
#include <config.h>

#include <ctype.h>

#include "fuzz/fuzz.h"
#include "core/plugin/host.h"

static char *plain_alloc(void *ctx, size_t n)
{
	return malloc(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_cstr(data, size), *out = rz_tf_escape(s, plain_alloc, NULL);
	char name[80];
	size_t len;

	FZ_ASSERT(out != NULL, "no escape");
	fz_check_tf_escaped(s, out);
	free(out);
	len = rz_tf_name(s, name, sizeof(name));
	FZ_ASSERT(len == strlen(name) && len < sizeof(name), "name length %zu", len);
	FZ_ASSERT(len >= 1 && islower((unsigned char)name[0]), "name '%s' starts badly", name);
	for (size_t i = 0; i < len; i++) {
		FZ_ASSERT(islower((unsigned char)name[i]) || isdigit((unsigned char)name[i]) ||
		              name[i] == '_',
		          "name '%s' has '%c'", name, name[i]);
	}
	free(s);
	return 0;
}
