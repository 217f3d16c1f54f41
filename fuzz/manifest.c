/*
 * fuzz/manifest.c - the CLI's manifests (rezusctl apply/create -f): YAML or JSON files of
 * one or more documents, List kinds unpacked, and the YAML the CLI writes (edit, -o yaml).
 *
 * Invariants: nothing nests deeper than the YAML limit; every object read is an object with a
 * kind; what rezusctl writes as YAML reads back as the same object.
 */
#include <config.h>

#include <stdarg.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "cli/rezusctl.h"
#include "core/base/yaml.h"

static char path[4096];

/* main.c's, which the target does not link: quiet, so the run's log stays readable. */
int rzc_usage(const char *fmt, ...)
{
	return RZC_USAGE;
}

int rzc_fail(const char *fmt, ...)
{
	return RZC_ERR;
}

int rzc_cmd_completion(rzc_t *c, int argc, char **argv)
{
	return RZC_ERR;
}

static void round_trip(const json_t *obj)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_t *docs = NULL;
	rz_err_t err = { 0 };

	FZ_ASSERT(f != NULL, "open_memstream");
	FZ_ASSERT(rzc_yaml_write(f, obj) == 0, "the CLI cannot write an object it read");
	fclose(f);
	FZ_ASSERT(rz_yaml_load_all("written", text, len, &docs, &err) == 0,
	          "the YAML the CLI wrote does not read back: %s\n%s", err.msg, text);
	FZ_ASSERT(json_array_size(docs) == 1 && json_equal(json_array_get(docs, 0), obj),
	          "the YAML the CLI wrote reads back differently:\n%s", text);
	json_decref(docs);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *paths[1] = { path };
	json_t *objs = json_array(), *o;
	FILE *f = fopen(path, "w");
	size_t i;

	FZ_ASSERT(f != NULL, "cannot write %s", path);
	FZ_ASSERT(fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
	if (rzc_read_manifests(paths, 1, objs) == RZC_OK) {
		FZ_ASSERT(fz_json_depth(objs) <= RZ_YAML_MAX_DEPTH + 1, "deeper than the limit");
		json_array_foreach(objs, i, o)
		{
			FZ_ASSERT(json_is_object(o) && json_is_string(json_object_get(o, "kind")),
			          "object %zu has no kind", i);
			round_trip(o);
		}
	}
	json_decref(objs);
	return 0;
}

static void cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/rezus-fuzz-manifest-%ld.yaml", tmp ? tmp : "/tmp",
	         (long)getpid());
	atexit(cleanup);
	return 0;
}
