/*
 * core/web/mkstatic.c - the build-time generator of the embedded static assets.
 *
 * Usage: mkstatic OUT.c SRCDIR FILE...
 * Reads SRCDIR/FILE for every FILE (web/static/app.css, ...) and writes OUT.c: each file's
 * bytes, a gzip copy made here with zlib (kept only when smaller), its Content-Type from
 * its extension, its logical name (the file's base name) and its URL path
 * /static/<stem>.<hash8>.<ext>, hash8 being the first 8 hex digits of the SHA-256 of the
 * bytes (sha256sum gives the same). A base name with characters
 * outside [A-Za-z0-9._-], an unknown extension, a file above MKSTATIC_MAX or a duplicate
 * fails the build. Runs on the build machine only; nothing of it is in the daemon.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <zlib.h>

#define MKSTATIC_MAX (8u << 20) /* a file larger than this is not an asset */

static const struct {
	const char *ext;
	const char *type;
} types[] = {
	{ "css", "text/css; charset=utf-8" },
	{ "js", "text/javascript; charset=utf-8" },
	{ "svg", "image/svg+xml" },
	{ "png", "image/png" },
	{ "ico", "image/x-icon" },
	{ "woff2", "font/woff2" },
	{ "txt", "text/plain; charset=utf-8" },
	{ "json", "application/json" },
	{ "", "text/plain; charset=utf-8" }, /* LICENSES */
};

static int fail(const char *what, const char *arg)
{
	fprintf(stderr, "mkstatic: %s '%s'%s%s\n", what, arg, errno != 0 ? ": " : "",
	        errno != 0 ? strerror(errno) : "");
	return 1;
}

static const char *type_of(const char *name, const char **ext)
{
	const char *dot = strrchr(name, '.');

	*ext = dot != NULL ? dot + 1 : "";
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(types[i].ext, *ext) == 0) {
			return types[i].type;
		}
	}
	return NULL;
}

static bool name_ok(const char *name)
{
	return name[0] != '\0' && name[0] != '.' && strlen(name) < 128 &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
	           strlen(name);
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0;

	if (f == NULL) {
		return NULL;
	}
	buf = malloc(MKSTATIC_MAX + 1);
	if (buf != NULL) {
		n = fread(buf, 1, MKSTATIC_MAX + 1, f);
	}
	if (buf == NULL || ferror(f) || n > MKSTATIC_MAX) {
		errno = buf == NULL ? ENOMEM : ferror(f) ? EIO : EFBIG;
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* gzip of in (deterministic: no name, mtime 0); NULL on failure. */
static unsigned char *gzip(const unsigned char *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	uLong cap;
	unsigned char *out;

	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
		return NULL;
	}
	cap = deflateBound(&z, (uLong)len) + 32;
	out = malloc(cap);
	if (out == NULL) {
		deflateEnd(&z);
		return NULL;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

static void write_bytes(FILE *out, const char *var, const unsigned char *b, size_t n)
{
	fprintf(out, "static const unsigned char %s[] = {", var);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s0x%02x,", i % 16 == 0 ? "\n\t" : " ", b[i]);
	}
	fprintf(out, "%s};\n", n == 0 ? "0" : "\n");
}

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

struct entry {
	char path[192];
	const char *name;
	const char *type;
	size_t len, gz_len;
};

static int one(FILE *out, const char *srcdir, const char *arg, size_t i, struct entry *e)
{
	const char *name = base(arg);
	char file[4096], var[32], hex[2 * crypto_hash_sha256_BYTES + 1];
	unsigned char hash[crypto_hash_sha256_BYTES];
	unsigned char *data, *gz = NULL;
	const char *ext;
	int stem;

	errno = 0;
	e->name = name;
	e->type = type_of(name, &ext);
	if (!name_ok(name) || e->type == NULL) {
		return fail("not an asset name with a known extension", name);
	}
	snprintf(file, sizeof(file), "%s/%s", srcdir, arg);
	data = read_all(file, &e->len);
	if (data == NULL) {
		return fail("cannot read", file);
	}
	crypto_hash_sha256(hash, data, e->len);
	sodium_bin2hex(hex, sizeof(hex), hash, sizeof(hash));
	stem = ext[0] != '\0' ? (int)(ext - name - 1) : (int)strlen(name);
	snprintf(e->path, sizeof(e->path), "/static/%.*s.%.8s%s%s", stem, name, hex,
	         ext[0] != '\0' ? "." : "", ext);
	snprintf(var, sizeof(var), "data%zu", i);
	write_bytes(out, var, data, e->len);
	gz = e->len > 0 ? gzip(data, e->len, &e->gz_len) : NULL;
	if (gz == NULL || e->gz_len >= e->len) {
		e->gz_len = 0; /* not smaller: served as it is */
	} else {
		snprintf(var, sizeof(var), "gz%zu", i);
		write_bytes(out, var, gz, e->gz_len);
	}
	free(gz);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	struct entry *e;
	FILE *out;
	int rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: mkstatic OUT.c SRCDIR FILE...\n");
		return 2;
	}
	if (sodium_init() < 0 || (e = calloc((size_t)argc, sizeof(*e))) == NULL) {
		return fail("cannot start", argv[0]);
	}
	out = fopen(argv[1], "w");
	if (out == NULL) {
		free(e);
		return fail("cannot write", argv[1]);
	}
	fprintf(out, "/* Generated by core/web/mkstatic from web/static: do not edit. */\n"
	             "#include \"core/web/static.h\"\n\n");
	for (int i = 3; i < argc && rc == 0; i++) {
		for (int j = 3; j < i; j++) {
			if (strcmp(base(argv[i]), base(argv[j])) == 0) {
				errno = 0;
				rc = fail("named twice", argv[i]);
			}
		}
		rc = rc != 0 ? rc : one(out, argv[2], argv[i], (size_t)(i - 3), &e[i - 3]);
	}
	fprintf(out, "\nconst rz_asset_t rz__static_assets[] = {\n");
	for (int i = 0; i < argc - 3 && rc == 0; i++) {
		fprintf(out, "\t{ \"%s\", \"%s\", \"%s\", data%d, %zu, ", e[i].path, e[i].name,
		        e[i].type, i, e[i].len);
		if (e[i].gz_len > 0) {
			fprintf(out, "gz%d, %zu },\n", i, e[i].gz_len);
		} else {
			fprintf(out, "NULL, 0 },\n");
		}
	}
	fprintf(out, "};\nconst size_t rz__static_count = %d;\n", argc - 3);
	if (fclose(out) != 0 && rc == 0) {
		rc = fail("cannot write", argv[1]);
	}
	if (rc != 0) {
		remove(argv[1]);
	}
	free(e);
	return rc;
}
