/*
 * fuzz/config.c - the rezus.conf parser (YAML over the settings table), and the duration
 * and size values its keys take.
 *
 * Invariants: an error names the file ("rezus.conf:..."); the same text loads the same way
 * twice; plugin sections come out sorted, unique, with an object config and a source; a
 * parsed duration or size is never negative or wrapped.
 */
#include <config.h>

#include <inttypes.h>

#include "fuzz/fuzz.h"
#include "core/base/config.h"

static int load(const uint8_t *data, size_t size, rz_config_t *cfg, rz_err_t *err)
{
	memset(cfg, 0, sizeof(*cfg));
	FZ_ASSERT(rz_config_defaults(cfg) == 0, "no defaults");
	return rz_config_load_string(cfg, "rezus.conf", (const char *)data, size, err);
}

static void values(const uint8_t *data, size_t size)
{
	char *s = fz_cstr(data, size < 64 ? size : 64);
	int64_t ms = 0;
	uint64_t bytes = 0;

	if (rz_parse_duration(s, &ms) == 0) {
		FZ_ASSERT(ms >= 0, "duration '%s' is %" PRId64 " ms", s, ms);
	}
	(void)rz_parse_size(s, &bytes);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rz_config_t a, b;
	rz_err_t ea = { 0 }, eb = { 0 };
	int ra = load(data, size, &a, &ea), rb = load(data, size, &b, &eb);

	FZ_ASSERT(ra == rb, "loaded twice: %d then %d", ra, rb);
	if (ra != 0) {
		FZ_ASSERT(strncmp(ea.msg, "rezus.conf", 10) == 0, "message '%s' names no file",
		          ea.msg);
		FZ_ASSERT(strcmp(ea.msg, eb.msg) == 0, "two messages: '%s', '%s'", ea.msg, eb.msg);
	} else {
		FZ_ASSERT(a.n_plugins == b.n_plugins, "plugin sections differ");
		for (size_t i = 0; i < a.n_plugins; i++) {
			FZ_ASSERT(json_is_object(a.plugins[i].config) &&
			              a.plugins[i].source != NULL,
			          "plugin section %zu is incomplete", i);
			FZ_ASSERT(i == 0 || strcmp(a.plugins[i - 1].name, a.plugins[i].name) < 0,
			          "plugin sections not sorted and unique");
		}
		(void)rz_config_validate(&a, &ea);
	}
	rz_config_free(&a);
	rz_config_free(&b);
	values(data, size);
	return 0;
}
