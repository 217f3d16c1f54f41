/*
 * fuzz/fuzz.h - helpers shared by the libFuzzer targets (built with ./configure
 * --enable-fuzzing, run by `make fuzz-smoke`; docs/hardening.md, "Fuzzing").
 *
 * Every target defines LLVMFuzzerTestOneInput and checks invariants with FZ_ASSERT: a broken
 * invariant aborts, which libFuzzer reports as a crash with the input that caused it.
 */
#ifndef RZ_FUZZ_H
#define RZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FZ_ASSERT(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__,       \
			        #cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* data as a NUL-terminated string (caller frees); embedded NULs end it early, as they would
 * for a C string read from a query or a header. */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL) {
		abort();
	}
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Split data at the first "\n---8<---\n" (the corpus files' separator for targets that take
 * two documents); *b is empty when there is none. */
static inline void fz_split(const uint8_t *data, size_t size, char **a, char **b)
{
	static const char sep[] = "\n---8<---\n";
	size_t n = sizeof(sep) - 1, at = size;

	for (size_t i = 0; i + n <= size; i++) {
		if (memcmp(data + i, sep, n) == 0) {
			at = i;
			break;
		}
	}
	*a = fz_cstr(data, at);
	*b = at < size ? fz_cstr(data + at + n, size - at - n) : fz_cstr(data, 0);
}

/* The nesting depth of a JSON value (a scalar is 0). */
static inline size_t fz_json_depth(const json_t *v)
{
	size_t best = 0, i;
	const char *k;
	json_t *c;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, c)
		{
			size_t d = fz_json_depth(c);
			best = d > best ? d : best;
		}
		return best + 1;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, c)
		{
			size_t d = fz_json_depth(c);
			best = d > best ? d : best;
		}
		return best + 1;
	}
	return 0;
}

/* Every cause in causes is {field, reason, message} with non-empty strings. */
static inline void fz_check_causes(const json_t *causes)
{
	size_t i;
	json_t *c;

	FZ_ASSERT(json_is_array(causes), "causes is not an array");
	json_array_foreach(causes, i, c)
	{
		const char *f = json_string_value(json_object_get(c, "field"));
		const char *r = json_string_value(json_object_get(c, "reason"));
		const char *m = json_string_value(json_object_get(c, "message"));
		FZ_ASSERT(f != NULL && r != NULL && r[0] != '\0' && m != NULL && m[0] != '\0',
		          "cause %zu is incomplete", i);
	}
}

/* out is in escaped for a TF template (PROTOCOLS.md §3): read the way TF reads a string,
 * it starts no template ("${", "%{"; "$${" and "%%{" are the literals "${" and "%{") and
 * its literal text is in. */
static inline void fz_check_tf_escaped(const char *in, const char *out)
{
	size_t n = strlen(out), j = 0;
	char *lit = malloc(n + 1);

	FZ_ASSERT(lit != NULL, "out of memory");
	for (size_t i = 0; i < n;) {
		if ((out[i] == '$' || out[i] == '%') && out[i + 1] == out[i] && out[i + 2] == '{') {
			lit[j++] = out[i];
			lit[j++] = '{';
			i += 3;
		} else {
			FZ_ASSERT(!((out[i] == '$' || out[i] == '%') && out[i + 1] == '{'),
			          "'%s' escaped as '%s' starts a template at %zu", in, out, i);
			lit[j++] = out[i++];
		}
	}
	lit[j] = '\0';
	FZ_ASSERT(strcmp(lit, in) == 0, "'%s' escaped as '%s' reads as '%s'", in, out, lit);
	free(lit);
}

#endif /* RZ_FUZZ_H */
