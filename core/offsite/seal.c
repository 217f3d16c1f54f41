/* core/offsite/seal.c - files sealed with libsodium's secretstream, and their key file
 * (the format is core/offsite/seal.h's). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/offsite/offsite-int.h"
#include "core/offsite/seal.h"

#define KEYS_MAGIC 0x525a534bu /* "RZSK" */
#define MAGIC      "RZSEAL"
#define MAGIC_LEN  6
#define FORMAT     1
#define ID_BYTES   16
#define KEY_BYTES  crypto_secretstream_xchacha20poly1305_KEYBYTES
#define ABYTES     crypto_secretstream_xchacha20poly1305_ABYTES
#define AD_BYTES   32 /* magic, version, flags, key id, size: what every chunk binds */
#define HEAD_BYTES (AD_BYTES + crypto_secretstream_xchacha20poly1305_HEADERBYTES)
#define FILE_MAX   32768 /* the key file */
#define B64_LEN    sodium_base64_ENCODED_LEN(KEY_BYTES, sodium_base64_VARIANT_ORIGINAL)

static const char id_context[] = "rezuscloud offsite key id";
static const char file_head[] =
    "# rezuscloud sealing keys (docs/backups.md, \"Encryption\"): the last key seals, every\n"
    "# key opens what it sealed. Keep this file 0600, and a copy away from the backups.\n"
    "# <id> <created> <key>\n";

struct rz_seal_keys {
	uint32_t magic;
	size_t n;
	char path[PATH_MAX];
	struct {
		unsigned char id[ID_BYTES];
		unsigned char key[KEY_BYTES];
	} k[RZ_SEAL_KEYS_MAX];
};

static void key_id(const unsigned char key[KEY_BYTES], unsigned char id[ID_BYTES])
{
	crypto_generichash(id, ID_BYTES, (const unsigned char *)id_context, sizeof(id_context) - 1,
	                   key, KEY_BYTES);
}

/* ------------------------------------------------------------------ the key file */

/* Read the open key file fd (path for messages) into text (FILE_MAX + 1 bytes). */
static int read_keyfile(int fd, const char *path, char *text, size_t *len, rz_err_t *err)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0) {
		return rz_err_set(err, -errno, "seal: cannot read key file '%s': %s", path,
		                  strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		return rz_err_set(err, REZUS_ECONFIG, "seal: key file '%s' is not a regular file",
		                  path);
	}
	if ((st.st_mode & 077) != 0) {
		return rz_err_set(err, REZUS_ECONFIG,
		                  "seal: key file '%s' is open to group or others (mode %04o): "
		                  "chmod 600 it",
		                  path, (unsigned)(st.st_mode & 07777));
	}
	n = pread(fd, text, FILE_MAX + 1, 0);
	if (n < 0) {
		return rz_err_set(err, -errno, "seal: cannot read key file '%s': %s", path,
		                  strerror(errno));
	}
	if (n > FILE_MAX) {
		return rz_err_set(err, REZUS_ETOOBIG, "seal: key file '%s' is over %d bytes", path,
		                  FILE_MAX);
	}
	text[n] = '\0';
	*len = (size_t)n;
	return 0;
}

/* One "<id> <created> <key>" line into slot i of k. */
static int parse_line(rz_seal_keys_t *k, char *line, int lineno, const char *path, rz_err_t *err)
{
	char *save = NULL, *id = strtok_r(line, " \t", &save);
	char *created = strtok_r(NULL, " \t", &save), *b64 = strtok_r(NULL, " \t", &save);
	char hex[RZ_SEAL_ID_HEX];
	const char *end = NULL;
	size_t bin = 0;

	if (id == NULL || created == NULL || b64 == NULL || strtok_r(NULL, " \t", &save) != NULL) {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "seal: key file '%s', line %d: expected \"<id> <created> <key>\"",
		                  path, lineno);
	}
	if (k->n == RZ_SEAL_KEYS_MAX) {
		return rz_err_set(err, REZUS_ETOOBIG, "seal: key file '%s' holds more than %d keys",
		                  path, RZ_SEAL_KEYS_MAX);
	}
	if (sodium_base642bin(k->k[k->n].key, KEY_BYTES, b64, strlen(b64), NULL, &bin, &end,
	                      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    bin != KEY_BYTES || end == NULL || *end != '\0') {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "seal: key file '%s', line %d: the key is not %d bytes in base64",
		                  path, lineno, (int)KEY_BYTES);
	}
	key_id(k->k[k->n].key, k->k[k->n].id);
	sodium_bin2hex(hex, sizeof(hex), k->k[k->n].id, ID_BYTES);
	if (strcmp(hex, id) != 0) {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "seal: key file '%s', line %d: the id does not match the key "
		                  "(damaged?)",
		                  path, lineno);
	}
	k->n++;
	return 0;
}

static int parse_keyfile(rz_seal_keys_t *k, char *text, const char *path, rz_err_t *err)
{
	int lineno = 0, rc;

	k->n = 0;
	/* line by line, counting them for messages */
	for (char *line = text; line != NULL && *line != '\0';) {
		char *nl = strchr(line, '\n');
		if (nl != NULL) {
			*nl = '\0';
		}
		lineno++;
		if (line[strspn(line, " \t\r")] != '\0' && line[0] != '#') {
			line[strcspn(line, "\r")] = '\0';
			rc = parse_line(k, line, lineno, path, err);
			if (rc < 0) {
				return rc;
			}
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	if (k->n == 0) {
		return rz_err_set(err, RZ_ECORRUPT, "seal: key file '%s' holds no key", path);
	}
	return 0;
}

/* A new key's line ("<id> <created> <key>\n") into line (≥ 128 bytes). */
static void new_key_line(char *line, size_t size)
{
	unsigned char key[KEY_BYTES], id[ID_BYTES];
	char hex[RZ_SEAL_ID_HEX], b64[B64_LEN], now[32];

	randombytes_buf(key, sizeof(key));
	key_id(key, id);
	sodium_bin2hex(hex, sizeof(hex), id, ID_BYTES);
	sodium_bin2base64(b64, sizeof(b64), key, KEY_BYTES, sodium_base64_VARIANT_ORIGINAL);
	rz_time_now(now, sizeof(now));
	snprintf(line, size, "%s %s %s\n", hex, now, b64);
	sodium_memzero(key, sizeof(key));
	sodium_memzero(b64, sizeof(b64));
}

/* Write text to a temporary beside path (0600) and fsync it; *fd stays open. */
static int write_tmp(const char *path, const char *text, char *tmp, size_t size, int *fd,
                     rz_err_t *err)
{
	int rc = rz__offsite_tmp(path, tmp, size, fd, err);

	if (rc < 0) {
		return rc;
	}
	rc = rz__offsite_write_all(*fd, text, strlen(text));
	if (rc == 0 && fsync(*fd) < 0) {
		rc = -errno;
	}
	if (rc < 0) {
		rz__offsite_discard(*fd, tmp);
		*fd = -1;
		return rz_err_set(err, rc, "seal: cannot write key file '%s': %s", path,
		                  strerror(-rc));
	}
	return 0;
}

/* A key file with one fresh key at path, unless one appeared meanwhile (link, not rename:
 * never over another's). */
static int create_keyfile(const char *path, rz_err_t *err)
{
	char *text = sodium_malloc(sizeof(file_head) + 128), tmp[PATH_MAX];
	int fd = -1, rc, e;

	if (text == NULL) {
		return rz_err_set(err, -ENOMEM, "seal: out of memory");
	}
	memcpy(text, file_head, sizeof(file_head));
	new_key_line(text + strlen(text), 128);
	rc = write_tmp(path, text, tmp, sizeof(tmp), &fd, err);
	sodium_free(text);
	if (rc < 0) {
		return rc;
	}
	close(fd);
	e = link(tmp, path) < 0 ? errno : 0;
	unlink(tmp);
	if (e == EEXIST) {
		return 0;
	}
	if (e != 0) {
		return rz_err_set(err, -e, "seal: cannot create key file '%s': %s", path,
		                  strerror(e));
	}
	rz__offsite_fsync_dir(path);
	rz_log_info("offsite", "generated the sealing key file '%s'", path);
	return 0;
}

static int open_keyfile(const char *path, int flags, bool create, int *fd, rz_err_t *err)
{
	int rc;

	*fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
	if (*fd < 0 && errno == ENOENT && create) {
		rc = create_keyfile(path, err);
		if (rc < 0) {
			return rc;
		}
		*fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
	}
	if (*fd < 0) {
		return rz_err_set(err, -errno, "seal: cannot open key file '%s': %s", path,
		                  strerror(errno));
	}
	return 0;
}

int rz_seal_keys_load(rz_seal_keys_t **out, const char *path, rz_err_t *err)
{
	rz_seal_keys_t *k = NULL;
	char *text = NULL;
	size_t len;
	int fd = -1, rc;

	*out = NULL;
	if (sodium_init() < 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "seal: libsodium failed to initialise");
	}
	if (strlen(path) >= sizeof(k->path)) {
		return rz_err_set(err, -ENAMETOOLONG, "seal: key file path too long");
	}
	k = sodium_malloc(sizeof(*k));
	text = sodium_malloc(FILE_MAX + 1);
	if (k == NULL || text == NULL) {
		rc = rz_err_set(err, -ENOMEM, "seal: out of memory");
		goto out;
	}
	memset(k, 0, sizeof(*k));
	k->magic = KEYS_MAGIC;
	snprintf(k->path, sizeof(k->path), "%s", path);
	rc = open_keyfile(path, O_RDONLY, true, &fd, err);
	if (rc == 0) {
		rc = read_keyfile(fd, path, text, &len, err);
	}
	if (rc == 0) {
		rc = parse_keyfile(k, text, path, err);
	}
	if (rc == 0) {
		*out = k;
		k = NULL;
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	if (text != NULL) {
		sodium_free(text);
	}
	rz_seal_keys_free(k);
	return rc;
}

void rz_seal_keys_free(rz_seal_keys_t *k)
{
	if (k != NULL) {
		sodium_free(k); /* wipes */
	}
}

void rz_seal_keys_newest_id(const rz_seal_keys_t *k, char id[RZ_SEAL_ID_HEX])
{
	sodium_bin2hex(id, RZ_SEAL_ID_HEX, k->k[k->n - 1].id, ID_BYTES);
}

/* The key file open and locked as the file path names now (a rotation that renamed a new
 * one over the file we waited for: try again). */
static int lock_keyfile(const char *path, int *fd, rz_err_t *err)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat a, b;
		int rc = open_keyfile(path, O_RDONLY, true, fd, err);
		if (rc < 0) {
			return rc;
		}
		if (flock(*fd, LOCK_EX) < 0 || fstat(*fd, &a) < 0) {
			int e = errno;
			close(*fd);
			return rz_err_set(err, -e, "seal: cannot lock key file '%s': %s", path,
			                  strerror(e));
		}
		if (stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			return 0;
		}
		close(*fd);
	}
	return rz_err_set(err, -EAGAIN, "seal: key file '%s' keeps changing", path);
}

int rz_seal_keys_rotate(const char *path, rz_err_t *err)
{
	rz_seal_keys_t *k = NULL;
	char *text = NULL, tmp[PATH_MAX], id[RZ_SEAL_ID_HEX];
	int fd = -1, tfd = -1, rc;
	size_t len;

	if (sodium_init() < 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "seal: libsodium failed to initialise");
	}
	k = sodium_malloc(sizeof(*k));
	text = sodium_malloc(FILE_MAX + 130);
	if (k == NULL || text == NULL) {
		rc = rz_err_set(err, -ENOMEM, "seal: out of memory");
		goto out;
	}
	rc = lock_keyfile(path, &fd, err);
	if (rc == 0) {
		rc = read_keyfile(fd, path, text, &len, err);
	}
	if (rc == 0) {
		char *copy = strdup(text); /* parse_keyfile cuts lines: check a copy */
		rc = copy == NULL ? rz_err_set(err, -ENOMEM, "seal: out of memory")
		                  : parse_keyfile(k, copy, path, err);
		if (copy != NULL) {
			sodium_memzero(copy, len);
			free(copy);
		}
	}
	if (rc == 0 && k->n == RZ_SEAL_KEYS_MAX) {
		rc = rz_err_set(err, REZUS_ETOOBIG, "seal: key file '%s' holds %d keys already",
		                path, RZ_SEAL_KEYS_MAX);
	}
	if (rc == 0) {
		if (len > 0 && text[len - 1] != '\n') {
			text[len++] = '\n';
		}
		new_key_line(text + len, 128);
		memcpy(id, text + len, RZ_SEAL_ID_HEX - 1);
		id[RZ_SEAL_ID_HEX - 1] = '\0';
		rc = write_tmp(path, text, tmp, sizeof(tmp), &tfd, err);
	}
	if (rc == 0) {
		rc = rz__offsite_commit(tfd, tmp, path, "seal", err); /* still locked */
	}
	if (rc == 0) {
		rz_log_info("offsite", "added sealing key %s to '%s'", id, path);
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	if (text != NULL) {
		sodium_free(text);
	}
	if (k != NULL) {
		sodium_free(k);
	}
	return rc;
}

/* ------------------------------------------------------------------ sealed files */

static void put_be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
}

static uint64_t get_be64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

/* What seal and unseal hold: closed and wiped by done(). */
struct job {
	int in, out;
	char tmp[PATH_MAX];
	unsigned char *plain, *cipher;
	crypto_secretstream_xchacha20poly1305_state st;
	crypto_hash_sha256_state sha;
	unsigned char head[HEAD_BYTES];
};

static int begin(struct job *j, const char *in, const char *out, const char *what, rz_err_t *err)
{
	memset(j, 0, sizeof(*j));
	j->out = -1;
	j->in = open(in, O_RDONLY | O_CLOEXEC);
	if (j->in < 0) {
		return rz_err_set(err, -errno, "%s: cannot open '%s': %s", what, in,
		                  strerror(errno));
	}
	j->plain = malloc(RZ_SEAL_CHUNK);
	j->cipher = malloc(RZ_SEAL_CHUNK + ABYTES);
	if (j->plain == NULL || j->cipher == NULL) {
		return rz_err_set(err, -ENOMEM, "%s: out of memory", what);
	}
	crypto_hash_sha256_init(&j->sha);
	return rz__offsite_tmp(out, j->tmp, sizeof(j->tmp), &j->out, err);
}

/* Commit (rc == 0) or discard out; the digest into sha256_hex. */
static int done(struct job *j, int rc, const char *out, const char *what, char sha256_hex[65],
                rz_err_t *err)
{
	unsigned char digest[crypto_hash_sha256_BYTES];

	if (j->in >= 0) {
		close(j->in);
	}
	if (rc == 0) {
		rc = rz__offsite_commit(j->out, j->tmp, out, what, err);
	} else {
		rz__offsite_discard(j->out, j->tmp);
	}
	crypto_hash_sha256_final(&j->sha, digest);
	if (rc == 0) {
		sodium_bin2hex(sha256_hex, 65, digest, sizeof(digest));
	}
	if (j->plain != NULL) {
		sodium_memzero(j->plain, RZ_SEAL_CHUNK);
	}
	free(j->plain);
	free(j->cipher);
	sodium_memzero(&j->st, sizeof(j->st));
	return rc;
}

static int seal_chunks(struct job *j, uint64_t total, const char *in, rz_err_t *err)
{
	uint64_t left = total;
	unsigned long long clen;
	unsigned char tag;
	ssize_t got;
	int rc;

	do {
		size_t want = left < RZ_SEAL_CHUNK ? (size_t)left : RZ_SEAL_CHUNK;
		got = rz__offsite_read_full(j->in, j->plain, want);
		if (got < 0) {
			return rz_err_set(err, (int)got, "seal: cannot read '%s': %s", in,
			                  strerror((int)-got));
		}
		if ((size_t)got != want) {
			return rz_err_set(err, -EIO, "seal: '%s' shrank while being sealed", in);
		}
		left -= want;
		tag = left == 0 ? crypto_secretstream_xchacha20poly1305_TAG_FINAL : 0;
		crypto_hash_sha256_update(&j->sha, j->plain, want);
		crypto_secretstream_xchacha20poly1305_push(&j->st, j->cipher, &clen, j->plain, want,
		                                           j->head, AD_BYTES, tag);
		rc = rz__offsite_write_all(j->out, j->cipher, (size_t)clen);
		if (rc < 0) {
			return rz_err_set(err, rc, "seal: cannot write: %s", strerror(-rc));
		}
	} while (left > 0);
	if (rz__offsite_read_full(j->in, j->plain, 1) != 0) {
		return rz_err_set(err, -EIO, "seal: '%s' grew while being sealed", in);
	}
	return 0;
}

int rz_seal_file(const rz_seal_keys_t *k, const char *in, const char *out, uint64_t *size,
                 char sha256_hex[65], rz_err_t *err)
{
	struct job j;
	struct stat st;
	int rc;

	if (k == NULL || k->magic != KEYS_MAGIC || k->n == 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "seal: no keys");
	}
	rc = begin(&j, in, out, "seal", err);
	if (rc == 0 && (fstat(j.in, &st) < 0 || !S_ISREG(st.st_mode))) {
		rc = rz_err_set(err, REZUS_EINVALID, "seal: '%s' is not a regular file", in);
	}
	if (rc == 0) {
		memcpy(j.head, MAGIC, MAGIC_LEN);
		j.head[MAGIC_LEN] = FORMAT;
		j.head[MAGIC_LEN + 1] = 0;
		memcpy(j.head + 8, k->k[k->n - 1].id, ID_BYTES);
		put_be64(j.head + 8 + ID_BYTES, (uint64_t)st.st_size);
		crypto_secretstream_xchacha20poly1305_init_push(&j.st, j.head + AD_BYTES,
		                                                k->k[k->n - 1].key);
		rc = rz__offsite_write_all(j.out, j.head, HEAD_BYTES);
		if (rc < 0) {
			rz_err_set(err, rc, "seal: cannot write '%s': %s", out, strerror(-rc));
		}
	}
	if (rc == 0) {
		rc = seal_chunks(&j, (uint64_t)st.st_size, in, err);
	}
	rc = done(&j, rc, out, "seal", sha256_hex, err);
	if (rc == 0) {
		*size = (uint64_t)st.st_size;
	}
	return rc;
}

/* The header of a sealed file: checked, its key found, the stream ready to pull. */
static int open_head(struct job *j, const rz_seal_keys_t *k, const char *in, uint64_t *size,
                     rz_err_t *err)
{
	ssize_t got = rz__offsite_read_full(j->in, j->head, HEAD_BYTES);
	char hex[RZ_SEAL_ID_HEX];
	size_t i;

	if (got < 0) {
		return rz_err_set(err, (int)got, "unseal: cannot read '%s': %s", in,
		                  strerror((int)-got));
	}
	if (got < MAGIC_LEN || memcmp(j->head, MAGIC, MAGIC_LEN) != 0) {
		return rz_err_set(err, RZ_EPARSE, "unseal: '%s' is not a sealed file (foreign)",
		                  in);
	}
	if (got < HEAD_BYTES) {
		return rz_err_set(err, RZ_ECORRUPT, "unseal: '%s' is truncated: its header is cut",
		                  in);
	}
	if (j->head[MAGIC_LEN] != FORMAT || j->head[MAGIC_LEN + 1] != 0) {
		return rz_err_set(err, REZUS_EINVALID,
		                  "unseal: '%s' has format version %u.%u; this build reads %d.0",
		                  in, j->head[MAGIC_LEN], j->head[MAGIC_LEN + 1], FORMAT);
	}
	for (i = 0; i < k->n && sodium_memcmp(k->k[i].id, j->head + 8, ID_BYTES) != 0; i++) {
	}
	if (i == k->n) {
		sodium_bin2hex(hex, sizeof(hex), j->head + 8, ID_BYTES);
		return rz_err_set(
		    err, RZ_ENOTFOUND,
		    "unseal: '%s' is sealed with key %s, which key file '%s' does not "
		    "hold (foreign)",
		    in, hex, k->path);
	}
	*size = get_be64(j->head + 8 + ID_BYTES);
	if (crypto_secretstream_xchacha20poly1305_init_pull(&j->st, j->head + AD_BYTES,
	                                                    k->k[i].key) != 0) {
		return rz_err_set(err, RZ_ECORRUPT, "unseal: '%s' is tampered: a bad header", in);
	}
	return 0;
}

static int open_chunks(struct job *j, uint64_t size, const char *in, rz_err_t *err)
{
	uint64_t n = size == 0 ? 1 : (size - 1) / RZ_SEAL_CHUNK + 1, at = HEAD_BYTES;
	unsigned long long mlen;
	unsigned char tag;
	struct stat st;
	int rc;

	for (uint64_t i = 0; i < n; i++) {
		size_t plen = i + 1 < n ? RZ_SEAL_CHUNK : (size_t)(size - (n - 1) * RZ_SEAL_CHUNK);
		ssize_t got = rz__offsite_read_full(j->in, j->cipher, plen + ABYTES);
		if (got < 0) {
			return rz_err_set(err, (int)got, "unseal: cannot read '%s': %s", in,
			                  strerror((int)-got));
		}
		if ((size_t)got < plen + ABYTES) {
			fstat(j->in, &st);
			return rz_err_set(err, RZ_ECORRUPT,
			                  "unseal: '%s' is truncated: %lld of %llu bytes", in,
			                  (long long)st.st_size,
			                  (unsigned long long)(HEAD_BYTES + n * ABYTES + size));
		}
		if (crypto_secretstream_xchacha20poly1305_pull(&j->st, j->plain, &mlen, &tag,
		                                               j->cipher, plen + ABYTES, j->head,
		                                               AD_BYTES) != 0 ||
		    (tag == crypto_secretstream_xchacha20poly1305_TAG_FINAL) != (i + 1 == n)) {
			return rz_err_set(
			    err, RZ_ECORRUPT,
			    "unseal: '%s' is tampered: chunk %llu (at byte %llu) does not "
			    "authenticate",
			    in, (unsigned long long)i, (unsigned long long)at);
		}
		at += plen + ABYTES;
		crypto_hash_sha256_update(&j->sha, j->plain, (size_t)mlen);
		rc = rz__offsite_write_all(j->out, j->plain, (size_t)mlen);
		if (rc < 0) {
			return rz_err_set(err, rc, "unseal: cannot write: %s", strerror(-rc));
		}
	}
	if (rz__offsite_read_full(j->in, j->cipher, 1) != 0) {
		return rz_err_set(err, RZ_ECORRUPT, "unseal: '%s' is tampered: bytes after its end",
		                  in);
	}
	return 0;
}

int rz_unseal_file(const rz_seal_keys_t *k, const char *in, const char *out, uint64_t *size,
                   char sha256_hex[65], rz_err_t *err)
{
	struct job j;
	uint64_t total = 0;
	int rc;

	if (k == NULL || k->magic != KEYS_MAGIC || k->n == 0) {
		return rz_err_set(err, REZUS_EINTERNAL, "unseal: no keys");
	}
	rc = begin(&j, in, out, "unseal", err);
	if (rc == 0) {
		rc = open_head(&j, k, in, &total, err);
	}
	if (rc == 0) {
		rc = open_chunks(&j, total, in, err);
	}
	rc = done(&j, rc, out, "unseal", sha256_hex, err);
	if (rc == 0) {
		*size = total;
	}
	return rc;
}
