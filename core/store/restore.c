/*
 * core/store/restore.c - reading backups back (core/store/backup.h has the layout): the
 * head alone, or every byte with the checksum and the database unpacked; the state key
 * unsealed; what a restore would change; the restore of a database and a state key. The
 * only file besides backup.c that includes <zlib.h>.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include "core/store/backup.h"
#include "core/store/db.h"
#include "core/store/restore.h"

#define MANIFEST_MAX 65536
#define KEYLINE_MAX  4096

/* ------------------------------------------------------------------ the state key */

/* The key line's base64 member into exactly n bytes. */
static bool unb64(const json_t *o, const char *member, unsigned char *out, size_t n)
{
	const char *s = json_string_value(json_object_get(o, member));
	size_t len = 0;

	return s != NULL &&
	       sodium_base642bin(out, n, s, strlen(s), NULL, &len, NULL,
	                         sodium_base64_VARIANT_ORIGINAL) == 0 &&
	       len == n;
}

/* The key line's derivation parameters, checked without the passphrase: what a restore
 * would refuse, verify refuses too (limits out of Argon2id's range could make the
 * derivation take hours, or all memory). */
static bool keyline_valid(const json_t *line)
{
	unsigned char salt[crypto_pwhash_SALTBYTES];
	unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
	unsigned char sealed[RZ_BACKUP_KEY_SIZE + crypto_aead_xchacha20poly1305_ietf_ABYTES];
	json_int_t ops = json_integer_value(json_object_get(line, "opslimit"));
	json_int_t mem = json_integer_value(json_object_get(line, "memlimit"));
	const char *kdf = json_string_value(json_object_get(line, "kdf"));
	bool included = json_is_true(json_object_get(line, "included"));

	if (kdf == NULL) { /* an unkeyed file without the key: nothing derives */
		return !included;
	}
	return strcmp(kdf, "argon2id13") == 0 && ops >= (json_int_t)crypto_pwhash_OPSLIMIT_MIN &&
	       ops <= (json_int_t)crypto_pwhash_OPSLIMIT_SENSITIVE &&
	       mem >= (json_int_t)crypto_pwhash_MEMLIMIT_MIN &&
	       mem <= (json_int_t)crypto_pwhash_MEMLIMIT_SENSITIVE &&
	       unb64(line, "salt", salt, sizeof(salt)) &&
	       (!included || (unb64(line, "nonce", nonce, sizeof(nonce)) &&
	                      unb64(line, "sealed", sealed, sizeof(sealed))));
}

/* The key the passphrase derives with the key line's salt and limits (kek). */
static int derive(const json_t *line, const char *pass, unsigned char *kek, rz_err_t *err)
{
	unsigned char salt[crypto_pwhash_SALTBYTES];
	json_int_t ops = json_integer_value(json_object_get(line, "opslimit"));
	json_int_t mem = json_integer_value(json_object_get(line, "memlimit"));

	if (!unb64(line, "salt", salt, sizeof(salt))) { /* keyline_valid checked the rest */
		return rz_err_set(err, RZ_ECORRUPT, "the sealed state key is malformed");
	}
	if (crypto_pwhash(kek, crypto_aead_xchacha20poly1305_ietf_KEYBYTES, pass, strlen(pass),
	                  salt, (unsigned long long)ops, (size_t)mem,
	                  crypto_pwhash_ALG_ARGON2ID13) != 0) {
		return rz_err_set(err, -ENOMEM, "deriving a key from the passphrase failed");
	}
	return 0;
}

/* Open the sealed state key of the key line with kek. */
static int unseal(const json_t *line, const unsigned char *kek, const char *name,
                  unsigned char *key, rz_err_t *err)
{
	unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
	unsigned char sealed[RZ_BACKUP_KEY_SIZE + crypto_aead_xchacha20poly1305_ietf_ABYTES];
	unsigned long long klen = 0;
	char ad[128];

	if (!unb64(line, "nonce", nonce, sizeof(nonce)) ||
	    !unb64(line, "sealed", sealed, sizeof(sealed))) {
		return rz_err_set(err, RZ_ECORRUPT, "the sealed state key is malformed");
	}
	rz__backup_key_ad(name, ad, sizeof(ad));
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(key, &klen, NULL, sealed, sizeof(sealed),
	                                               (const unsigned char *)ad, strlen(ad), nonce,
	                                               kek) != 0 ||
	    klen != RZ_BACKUP_KEY_SIZE) {
		sodium_memzero(key, RZ_BACKUP_KEY_SIZE);
		return rz_err_set(
		    err, RZ_EAUTH,
		    "the passphrase does not unseal the state key (wrong passphrase)");
	}
	return 0;
}

/* ------------------------------------------------------------------ reading */

struct head {
	json_t *manifest, *keyline;
	uint64_t header;  /* bytes before the payload */
	uint64_t payload; /* the end marker's payload size */
	unsigned char sum[RZ__BACKUP_HASH_BYTES];
	int64_t size;
};

static void head_free(struct head *h)
{
	json_decref(h->manifest);
	json_decref(h->keyline);
	memset(h, 0, sizeof(*h));
}

/* One line of at most max bytes with its "\n" into buf (max + 1 bytes). 0; 1 at the end
 * of the file before a "\n"; 2 when the line is longer. */
static int read_line(FILE *f, char *buf, size_t max, size_t *len)
{
	int c = 0;

	*len = 0;
	while (*len < max && (c = getc(f)) != EOF) {
		buf[(*len)++] = (char)c;
		if (c == '\n') {
			buf[*len] = '\0';
			return 0;
		}
	}
	buf[*len] = '\0';
	return c == EOF ? 1 : 2;
}

static int head_line(FILE *f, const char *path, const char *what, size_t max, json_t **out,
                     crypto_generichash_state *hash, rz_err_t *err)
{
	char *buf = malloc(max + 1);
	json_error_t jerr;
	size_t len = 0;
	int r;

	if (buf == NULL) {
		return rz_err_set(err, -ENOMEM, "%s: out of memory", path);
	}
	r = read_line(f, buf, max, &len);
	if (r != 0) {
		free(buf);
		return r == 1 ? rz_err_set(err, RZ_ECORRUPT, "%s: truncated: the %s ends early",
		                           path, what)
		              : rz_err_set(err, RZ_ECORRUPT,
		                           "%s: damaged: the %s is longer than %zu "
		                           "bytes",
		                           path, what, max);
	}
	if (hash != NULL) {
		crypto_generichash_update(hash, (const unsigned char *)buf, len);
	}
	*out = json_loadb(buf, len - 1, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (*out == NULL || !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return rz_err_set(err, RZ_ECORRUPT, "%s: damaged: the %s is not a JSON object",
		                  path, what);
	}
	return 0;
}

static int head_magic(FILE *f, const char *path, crypto_generichash_state *hash, rz_err_t *err)
{
	char buf[40];
	size_t len = 0;
	int r = read_line(f, buf, sizeof(buf) - 1, &len);

	if (r == 0 &&
	    (strcmp(buf, RZ__BACKUP_MAGIC_1) == 0 || strcmp(buf, RZ__BACKUP_MAGIC_2) == 0)) {
		if (hash != NULL) {
			crypto_generichash_update(hash, (const unsigned char *)buf, len);
		}
		return 0;
	}
	if (r == 0 &&
	    strncmp(buf, RZ__BACKUP_MAGIC_PREFIX, sizeof(RZ__BACKUP_MAGIC_PREFIX) - 1) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		return rz_err_set(
		    err, RZ_EPARSE, "%s: backup format %s is newer than this rezuscloud reads (%d)",
		    path, buf + sizeof(RZ__BACKUP_MAGIC_PREFIX) - 1, RZ_BACKUP_FORMAT);
	}
	if (r == 1 && len < sizeof(RZ__BACKUP_MAGIC_1) - 1 &&
	    strncmp(buf, RZ__BACKUP_MAGIC_1, len) == 0) {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "%s: truncated: the file ends in its first line", path);
	}
	return rz_err_set(err, RZ_EPARSE, "%s: not a rezuscloud backup", path);
}

/* The end marker: the payload's size and the checksum. */
static int head_trailer(FILE *f, const char *path, struct head *h, rz_err_t *err)
{
	char t[RZ__BACKUP_END_LEN + 1];
	uint64_t n = 0;

	if ((uint64_t)h->size < h->header + RZ__BACKUP_END_LEN) {
		return rz_err_set(err, RZ_ECORRUPT, "%s: truncated: no end marker", path);
	}
	if (fseeko(f, (off_t)(h->size - RZ__BACKUP_END_LEN), SEEK_SET) != 0 ||
	    fread(t, 1, RZ__BACKUP_END_LEN, f) != RZ__BACKUP_END_LEN) {
		return rz_err_set(err, -EIO, "%s: cannot read the end marker", path);
	}
	t[RZ__BACKUP_END_LEN] = '\0';
	if (strncmp(t, RZ__BACKUP_END_PREFIX, 6) != 0 || t[26] != ' ' ||
	    t[RZ__BACKUP_END_LEN - 1] != '\n' || strspn(t + 6, "0123456789") != 20 ||
	    strspn(t + 27, "0123456789abcdef") != 64) {
		return rz_err_set(err, RZ_ECORRUPT, "%s: truncated: no end marker", path);
	}
	for (int i = 6; i < 26; i++) {
		if (n > (UINT64_MAX - 9) / 10) {
			return rz_err_set(err, RZ_ECORRUPT, "%s: damaged end marker", path);
		}
		n = n * 10 + (uint64_t)(t[i] - '0');
	}
	if (sodium_hex2bin(h->sum, sizeof(h->sum), t + 27, 64, NULL, NULL, NULL) != 0) {
		return rz_err_set(err, RZ_ECORRUPT, "%s: damaged end marker", path);
	}
	h->payload = n;
	if (h->header + n + RZ__BACKUP_END_LEN != (uint64_t)h->size) {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "%s: truncated or damaged: the end marker says %" PRIu64
		                  " bytes of payload, the file holds %" PRIu64,
		                  path, n, (uint64_t)h->size - RZ__BACKUP_END_LEN - h->header);
	}
	return 0;
}

/* The manifest's members this reader relies on. */
static int head_check(const char *path, const struct head *h, rz_err_t *err)
{
	const json_t *m = h->manifest;
	json_t *db = json_object_get(m, "database");
	json_t *format = json_object_get(m, "format");

	if (json_is_integer(format) && json_integer_value(format) > RZ_BACKUP_FORMAT) {
		return rz_err_set(err, RZ_EPARSE,
		                  "%s: backup format %" JSON_INTEGER_FORMAT
		                  " is newer than this rezuscloud reads (%d)",
		                  path, json_integer_value(format), RZ_BACKUP_FORMAT);
	}
	if (!json_is_integer(format) || json_integer_value(format) < RZ_BACKUP_UNKEYED ||
	    !rz__backup_valid_name(json_string_value(json_object_get(m, "name"))) ||
	    !json_is_integer(json_object_get(m, "schemaVersion")) ||
	    !json_is_integer(json_object_get(db, "bytes")) ||
	    json_integer_value(json_object_get(db, "bytes")) < 0 ||
	    !json_is_boolean(json_object_get(h->keyline, "included"))) {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "%s: damaged: the manifest lacks what it must say", path);
	}
	if ((json_integer_value(format) == RZ_BACKUP_FORMAT) !=
	    (json_string_value(json_object_get(h->keyline, "checksum")) != NULL &&
	     strcmp(json_string_value(json_object_get(h->keyline, "checksum")), RZ__BACKUP_KEYED) ==
	         0)) {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "%s: damaged: the format and the key line's checksum disagree",
		                  path);
	}
	if (!keyline_valid(h->keyline)) {
		return rz_err_set(err, RZ_ECORRUPT,
		                  "%s: damaged: the state key line is malformed (its key "
		                  "derivation's parameters are missing or out of range)",
		                  path);
	}
	return 0;
}

static int read_head(FILE *f, const char *path, struct head *h, crypto_generichash_state *hash,
                     rz_err_t *err)
{
	struct stat st;
	int rc;

	memset(h, 0, sizeof(*h));
	if (fstat(fileno(f), &st) < 0) {
		return rz_err_set(err, -errno, "%s: %s", path, strerror(errno));
	}
	h->size = (int64_t)st.st_size;
	rc = head_magic(f, path, hash, err);
	rc = rc == 0 ? head_line(f, path, "manifest", MANIFEST_MAX, &h->manifest, hash, err) : rc;
	rc = rc == 0 ? head_line(f, path, "state key line", KEYLINE_MAX, &h->keyline, hash, err)
	             : rc;
	if (rc == 0) {
		h->header = (uint64_t)ftello(f);
		rc = head_trailer(f, path, h, err);
	}
	rc = rc == 0 ? head_check(path, h, err) : rc;
	if (rc != 0) {
		head_free(h);
	}
	return rc;
}

int rz_restore_inspect(const char *path, json_t **manifest, int64_t *size, rz_err_t *err)
{
	FILE *f = fopen(path, "rbe");
	struct head h;
	int rc;

	*manifest = NULL;
	if (f == NULL) {
		return rz_err_set(err, errno == ENOENT ? RZ_ENOTFOUND : -errno, "%s: %s", path,
		                  strerror(errno));
	}
	rc = read_head(f, path, &h, NULL, err);
	fclose(f);
	if (rc == 0) {
		*manifest = json_incref(h.manifest);
		if (size != NULL) {
			*size = h.size;
		}
		head_free(&h);
	}
	return rc;
}

/* The payload through the checksum and gunzip, the database into fd (-1: nowhere). */
struct inflow {
	z_stream z;
	int fd;
	uint64_t want, got; /* the database's bytes: the manifest's, and so far */
	int zrc;
	bool bad; /* the gzip stream is broken, or too long, or data follows it */
	int werr; /* writing the database failed: -errno */
};

static void inflow_feed(struct inflow *in, unsigned char *data, size_t n, unsigned char *buf)
{
	in->z.next_in = data;
	in->z.avail_in = (uInt)n;
	while (!in->bad && in->z.avail_in > 0) {
		size_t out;
		if (in->zrc == Z_STREAM_END) {
			in->bad = true; /* bytes after the end of the stream */
			break;
		}
		in->z.next_out = buf;
		in->z.avail_out = RZ__BACKUP_CHUNK;
		in->zrc = inflate(&in->z, Z_NO_FLUSH);
		if (in->zrc != Z_OK && in->zrc != Z_STREAM_END) {
			in->bad = true;
			break;
		}
		out = RZ__BACKUP_CHUNK - in->z.avail_out;
		in->got += out;
		if (in->got > in->want) {
			in->bad = true;
			break;
		}
		if (in->fd >= 0 && in->werr == 0 && out > 0) {
			in->werr = rz__backup_write_all(in->fd, buf, out);
		}
	}
}

static int read_payload(FILE *f, const char *path, const struct head *h,
                        crypto_generichash_state *hash, int fd, rz_err_t *err)
{
	unsigned char *data = malloc(RZ__BACKUP_CHUNK), *buf = malloc(RZ__BACKUP_CHUNK),
	              sum[RZ__BACKUP_HASH_BYTES];
	struct inflow in = { .fd = fd, .zrc = Z_OK };
	uint64_t left = h->payload;
	int rc = 0;

	in.want = (uint64_t)json_integer_value(
	    json_object_get(json_object_get(h->manifest, "database"), "bytes"));
	if (data == NULL || buf == NULL || inflateInit2(&in.z, 15 + 16) != Z_OK) {
		free(data);
		free(buf);
		return rz_err_set(err, -ENOMEM, "%s: out of memory", path);
	}
	if (fseeko(f, (off_t)h->header, SEEK_SET) != 0) {
		rc = rz_err_set(err, -EIO, "%s: cannot seek", path);
	}
	while (rc == 0 && left > 0) {
		size_t n =
		    fread(data, 1, left < RZ__BACKUP_CHUNK ? (size_t)left : RZ__BACKUP_CHUNK, f);
		if (n == 0) {
			rc = rz_err_set(err, RZ_ECORRUPT, "%s: truncated while read", path);
			break;
		}
		crypto_generichash_update(hash, data, n);
		inflow_feed(&in, data, n, buf);
		left -= n;
	}
	inflateEnd(&in.z);
	free(data);
	free(buf);
	crypto_generichash_final(hash, sum, sizeof(sum));
	if (rc == 0 && sodium_memcmp(sum, h->sum, sizeof(sum)) != 0) {
		rc = rz_err_set(
		    err, RZ_ECORRUPT, "%s: checksum mismatch: the file is damaged%s", path,
		    json_integer_value(json_object_get(h->manifest, "format")) == RZ_BACKUP_FORMAT
		        ? ", or the passphrase is not the one it was made with"
		        : "");
	}
	if (rc == 0 && (in.bad || in.zrc != Z_STREAM_END || in.got != in.want)) {
		rc = rz_err_set(
		    err, RZ_ECORRUPT,
		    "%s: damaged: the compressed database does not unpack to the %" PRIu64
		    " bytes the manifest says",
		    path, in.want);
	}
	if (rc == 0 && in.werr != 0) {
		rc = rz_err_set(err, in.werr, "%s: writing the database failed: %s", path,
		                strerror(-in.werr));
	}
	return rc;
}

static int check_schema(const char *path, const json_t *m, rz_err_t *err)
{
	size_t known = 0;
	json_int_t v = json_integer_value(json_object_get(m, "schemaVersion"));

	rz_db_migrations(&known);
	if (v > (json_int_t)known) {
		return rz_err_set(err, RZ_ESCHEMA,
		                  "%s: the backup has schema version %" JSON_INTEGER_FORMAT
		                  ", newer than this rezuscloud supports (%zu); restore it with a "
		                  "newer rezuscloud",
		                  path, v, known);
	}
	return 0;
}

static int open_out(const char *db_out, rz_err_t *err)
{
	int fd;

	if (db_out == NULL) {
		return -1;
	}
	unlink(db_out);
	fd = open(db_out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rz_err_set(err, -errno, "cannot create '%s': %s", db_out, strerror(errno));
		return -2;
	}
	return fd;
}

/* The head's bytes (magic, manifest, key line) into the checksum. */
static int hash_head(FILE *f, const char *path, const struct head *h,
                     crypto_generichash_state *hash, rz_err_t *err)
{
	unsigned char buf[4096];
	uint64_t left = h->header;

	if (fseeko(f, 0, SEEK_SET) != 0) {
		return rz_err_set(err, -EIO, "%s: cannot seek", path);
	}
	while (left > 0) {
		size_t n = fread(buf, 1, left < sizeof(buf) ? (size_t)left : sizeof(buf), f);
		if (n == 0) {
			return rz_err_set(err, RZ_ECORRUPT, "%s: truncated while read", path);
		}
		crypto_generichash_update(hash, buf, n);
		left -= n;
	}
	return 0;
}

/* One derivation from the passphrase: the checksum's key into mac (NULL: not wanted), and
 * the state key unsealed into out when the file holds it. */
static int open_key(const char *path, const struct head *h, const char *passphrase,
                    unsigned char *mac, rz_restore_contents_t *out, rz_err_t *err)
{
	unsigned char kek[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
	int rc = derive(h->keyline, passphrase, kek, err);

	if (rc == 0 && mac != NULL) {
		rz__backup_mac_key(kek, mac);
	}
	if (rc == 0 && json_is_true(json_object_get(h->keyline, "included"))) {
		rc = unseal(h->keyline, kek,
		            json_string_value(json_object_get(h->manifest, "name")), out->key, err);
		out->key_unsealed = rc == 0;
	}
	sodium_memzero(kek, sizeof(kek));
	if (rc == RZ_EAUTH) {
		char msg[sizeof(err->msg)];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		rz_err_set(err, RZ_EAUTH, "%s: %s", path, msg);
	}
	return rc;
}

/* The checksum's state for the file: keyed with the passphrase (format 2; the state key
 * unsealed on the way, the derivation done once), or not (format 1, refused when a
 * passphrase is given unless flags has RZ_RESTORE_UNKEYED). */
static int checksum_start(const char *path, const struct head *h, const char *passphrase,
                          unsigned flags, crypto_generichash_state *hash,
                          rz_restore_contents_t *out, rz_err_t *err)
{
	unsigned char mac[RZ__BACKUP_HASH_BYTES];
	bool keyed = json_integer_value(json_object_get(h->manifest, "format")) == RZ_BACKUP_FORMAT;
	int rc;

	if (!keyed) {
		if (passphrase != NULL && !(flags & RZ_RESTORE_UNKEYED)) {
			return rz_err_set(
			    err, RZ_EAUTH,
			    "%s: its checksum is not keyed with the passphrase (format "
			    "1: made without one, or by an older rezuscloud), so anyone "
			    "could have written it; --unkeyed accepts it",
			    path);
		}
		crypto_generichash_init(hash, NULL, 0, RZ__BACKUP_HASH_BYTES);
		return 0;
	}
	if (passphrase == NULL) {
		return rz_err_set(
		    err, RZ_EAUTH,
		    "%s: its checksum is keyed with the backup passphrase: give it "
		    "(backup.passphrase_file, or --passphrase-file) to check the file",
		    path);
	}
	rc = open_key(path, h, passphrase, mac, out, err);
	if (rc == 0) {
		crypto_generichash_init(hash, mac, sizeof(mac), RZ__BACKUP_HASH_BYTES);
	}
	sodium_memzero(mac, sizeof(mac));
	return rc;
}

int rz_restore_read(const char *path, const char *db_out, const char *passphrase, unsigned flags,
                    rz_restore_contents_t *out, rz_err_t *err)
{
	FILE *f = fopen(path, "rbe");
	crypto_generichash_state hash;
	struct head h = { 0 };
	int fd = -1, rc = 0;

	memset(out, 0, sizeof(*out));
	if (f == NULL) {
		return rz_err_set(err, errno == ENOENT ? RZ_ENOTFOUND : -errno, "%s: %s", path,
		                  strerror(errno));
	}
	rc = read_head(f, path, &h, NULL, err);
	rc = rc == 0 ? checksum_start(path, &h, passphrase, flags, &hash, out, err) : rc;
	rc = rc == 0 ? hash_head(f, path, &h, &hash, err) : rc;
	if (rc == 0 && (fd = open_out(db_out, err)) == -2) {
		rc = err->code;
	}
	rc = rc == 0 ? read_payload(f, path, &h, &hash, fd, err) : rc;
	if (rc == 0 && fd >= 0 && fsync(fd) < 0) {
		rc = rz_err_set(err, -errno, "cannot sync '%s': %s", db_out, strerror(errno));
	}
	if (fd >= 0) {
		close(fd);
	}
	fclose(f);
	rc = rc == 0 ? check_schema(path, h.manifest, err) : rc;
	if (rc == 0) {
		out->key_included = json_is_true(json_object_get(h.keyline, "included"));
	}
	if (rc == 0 && out->key_included && !out->key_unsealed && passphrase != NULL) {
		rc = open_key(path, &h, passphrase, NULL, out, err); /* format 1 */
	}
	if (rc == 0) {
		out->manifest = json_incref(h.manifest);
	} else {
		sodium_memzero(out->key, sizeof(out->key));
		out->key_unsealed = false;
		if (fd >= 0) {
			unlink(db_out); /* ours: created above */
		}
	}
	head_free(&h);
	return rc;
}

/* ------------------------------------------------------------------ what a restore changes */

/* Rows (group, key, value) of both databases, ordered by key: one merge. */
struct side {
	rz_stmt_t *s;
	bool more;
};

static int side_next(struct side *sd, rz_err_t *err)
{
	int rc;

	if (sd->s == NULL) {
		sd->more = false;
		return 0;
	}
	rc = rz_stmt_step(sd->s, err);
	sd->more = rc == 1;
	return rc < 0 ? rc : 0;
}

typedef void (*merge_fn)(json_t *acc, const char *group, const char *key, int how);
enum { ONLY_CURRENT, ONLY_BACKUP, CHANGED, SAME };

static int merge(rz_db_t *cur, rz_db_t *bak, const char *sql, merge_fn fn, json_t *acc,
                 rz_err_t *err)
{
	struct side a = { cur ? rz_db_stmt(cur, sql, err) : NULL, false };
	struct side b = { rz_db_stmt(bak, sql, err), false };
	int rc = (cur != NULL && a.s == NULL) || b.s == NULL ? RZ_EDB : 0;

	rc = rc == 0 ? side_next(&a, err) : rc;
	rc = rc == 0 ? side_next(&b, err) : rc;
	while (rc == 0 && (a.more || b.more)) {
		int c = !a.more   ? 1
		        : !b.more ? -1
		                  : strcmp(rz_stmt_text(a.s, 1), rz_stmt_text(b.s, 1));
		if (c < 0) {
			fn(acc, rz_stmt_text(a.s, 0), rz_stmt_text(a.s, 1), ONLY_CURRENT);
			rc = side_next(&a, err);
		} else if (c > 0) {
			fn(acc, rz_stmt_text(b.s, 0), rz_stmt_text(b.s, 1), ONLY_BACKUP);
			rc = side_next(&b, err);
		} else {
			const char *va = rz_stmt_text(a.s, 2), *vb = rz_stmt_text(b.s, 2);
			fn(acc, rz_stmt_text(a.s, 0), rz_stmt_text(a.s, 1),
			   strcmp(va ? va : "", vb ? vb : "") == 0 ? SAME : CHANGED);
			rc = side_next(&a, err);
			rc = rc == 0 ? side_next(&b, err) : rc;
		}
	}
	rz_stmt_done(a.s);
	rz_stmt_done(b.s);
	return rc;
}

static void bump(json_t *o, const char *member)
{
	json_object_set_new(o, member,
	                    json_integer(json_integer_value(json_object_get(o, member)) + 1));
}

static const char *const how_names[] = { "removed", "added", "changed", "unchanged" };

static void on_object(json_t *acc, const char *kind, const char *key, int how)
{
	json_t *k = json_object_get(acc, kind);

	if (k == NULL) {
		k = json_pack("{s:i, s:i, s:i, s:i}", "added", 0, "removed", 0, "changed", 0,
		              "unchanged", 0);
		json_object_set_new(acc, kind, k);
	}
	bump(k, how_names[how]);
}

static void on_version(json_t *acc, const char *group, const char *key, int how)
{
	bump(acc, how_names[how]);
	if (how != ONLY_BACKUP) {
		bump(acc, "current");
	}
	if (how != ONLY_CURRENT) {
		bump(acc, "backup");
	}
}

#define NAMES_MAX 200 /* user names listed per side; "more" counts the rest */

static void on_user(json_t *acc, const char *group, const char *name, int how)
{
	json_t *list = how == ONLY_CURRENT  ? json_object_get(acc, "removed")
	               : how == ONLY_BACKUP ? json_object_get(acc, "added")
	                                    : NULL;

	if (how != ONLY_BACKUP) {
		bump(acc, "current");
	}
	if (how != ONLY_CURRENT) {
		bump(acc, "backup");
	}
	if (list != NULL && json_array_size(list) < NAMES_MAX) {
		json_array_append_new(list, json_string(name));
	} else if (list != NULL) {
		bump(acc, "more");
	}
}

static int diff_revision(rz_db_t *cur, rz_db_t *bak, json_t *report, rz_err_t *err)
{
	static const char sql[] = "SELECT rv FROM revision WHERE id = 1";
	int64_t a = 0, b = 0;
	int rc = cur != NULL ? rz_db_query_int(cur, sql, &a, err) : 0;

	rc = rc == 0 ? rz_db_query_int(bak, sql, &b, err) : rc;
	if (rc == 0) {
		json_object_set_new(
		    report, "revision",
		    json_pack("{s:I, s:I}", "current", (json_int_t)a, "backup", (json_int_t)b));
	}
	return rc;
}

int rz_restore_diff(const char *current_db, const char *backup_db, json_t **report, rz_err_t *err)
{
	static const char objects[] = "SELECT kind, kind || char(31) || tenant || char(31) || name,"
	                              " rv FROM objects ORDER BY 2";
	static const char versions[] = "SELECT '', tenant || char(31) || printf('%020d', version),"
	                               " md5 FROM tfstate_versions ORDER BY 2";
	static const char users[] = "SELECT '', name, '' FROM objects WHERE kind = 'User' AND"
	                            " tenant = '' ORDER BY 2";
	rz_db_t *cur = NULL, *bak = NULL;
	json_t *o = json_object(), *v, *u;
	int rc = 0;

	*report = NULL;
	v = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "current", 0, "backup", 0, "added", 0,
	              "removed", 0, "changed", 0, "unchanged", 0);
	u = json_pack("{s:i, s:i, s:[], s:[]}", "current", 0, "backup", 0, "added", "removed");
	if (current_db != NULL && access(current_db, F_OK) == 0) {
		rc = rz_db_open_readonly(&cur, current_db, err);
	}
	rc = rc == 0 ? rz_db_open_readonly(&bak, backup_db, err) : rc;
	rc = rc == 0 ? merge(cur, bak, objects, on_object, o, err) : rc;
	rc = rc == 0 ? merge(cur, bak, versions, on_version, v, err) : rc;
	rc = rc == 0 ? merge(cur, bak, users, on_user, u, err) : rc;
	if (rc == 0) {
		*report =
		    json_pack("{s:o, s:o, s:o}", "objects", o, "stateVersions", v, "users", u);
		rc = *report == NULL ? rz_err_set(err, -ENOMEM, "out of memory") : 0;
		o = v = u = NULL;
	}
	rc = rc == 0 ? diff_revision(cur, bak, *report, err) : rc;
	if (rc != 0) {
		json_decref(*report);
		*report = NULL;
	}
	json_decref(o);
	json_decref(v);
	json_decref(u);
	rz_db_close(cur);
	rz_db_close(bak);
	return rc;
}

int rz_restore_save_key(const char *path, const unsigned char key[RZ_BACKUP_KEY_SIZE],
                        rz_err_t *err)
{
	char tmp[PATH_MAX];
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		return rz_err_set(err, -ENAMETOOLONG, "backup: path '%s' too long", path);
	}
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || rz__backup_write_all(fd, key, RZ_BACKUP_KEY_SIZE) < 0 || fsync(fd) < 0) {
		rc = rz_err_set(err, -errno, "backup: cannot write the state key '%s': %s", tmp,
		                strerror(errno));
	}
	if (fd >= 0) {
		close(fd);
	}
	if (rc == 0 && rename(tmp, path) < 0) {
		rc =
		    rz_err_set(err, -errno, "backup: cannot rename '%s': %s", tmp, strerror(errno));
	}
	if (rc == 0) {
		rc = rz__backup_fsync_dir(path, err);
	}
	if (rc != 0) {
		unlink(tmp);
	}
	return rc;
}

int rz_restore_check_db(const char *path, rz_err_t *err)
{
	rz_db_t *db = NULL;
	rz_stmt_t *s = NULL;
	size_t known = 0;
	int rc = rz_db_open_readonly(&db, path, err), version = 0;

	if (rc == 0 && (s = rz_db_stmt(db, "PRAGMA quick_check", err)) == NULL) {
		rc = RZ_EDB;
	}
	if (rc == 0 && (rc = rz_stmt_step(s, err)) == 1) {
		const char *r = rz_stmt_text(s, 0);
		rc = r != NULL && strcmp(r, "ok") == 0
		         ? 0
		         : rz_err_set(err, RZ_ECORRUPT, "the database in the backup is damaged: %s",
		                      r ? r : "no answer");
	} else if (rc == 0) {
		rc = rz_err_set(err, RZ_ECORRUPT, "the database in the backup is damaged");
	}
	rz_stmt_done(s);
	if (rc == 0) {
		rz_db_migrations(&known);
		version = rz_db_schema_version(db);
		if (version < 0 || (size_t)version > known) {
			rc = version < 0
			         ? rz_err_set(err, RZ_ECORRUPT,
			                      "the backup holds no rezuscloud database")
			         : rz_err_set(err, RZ_ESCHEMA,
			                      "the database in the backup has schema version "
			                      "%d, newer than this rezuscloud supports (%zu)",
			                      version, known);
		}
	}
	rz_db_close(db);
	return rc;
}

int rz_restore_db(const char *from, const char *target, const char *keep, rz_err_t *err)
{
	int rc = 0;

	if (keep != NULL && access(target, F_OK) == 0) {
		int fd;
		unlink(keep);
		fd = open(keep, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			return rz_err_set(err, -errno, "cannot create '%s': %s", keep,
			                  strerror(errno));
		}
		close(fd);
		rc = rz_db_copy(target, keep, err);
	}
	if (rc == 0 && access(target, F_OK) != 0) {
		int fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			return rz_err_set(err, -errno, "cannot create '%s': %s", target,
			                  strerror(errno));
		}
		close(fd);
	}
	return rc == 0 ? rz_db_copy(from, target, err) : rc;
}
