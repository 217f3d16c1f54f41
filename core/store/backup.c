/*
 * core/store/backup.c - writing backups: the snapshot, its counts, the sealed state key,
 * the file (core/store/backup.h has its layout), and the directory they live in.
 */
#include <config.h>

#include <dirent.h>
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

#include "core/base/clock.h"
#include "core/base/version.h"
#include "core/model/fields.h"
#include "core/store/backup.h"
#include "core/store/db.h"
#include "core/store/restore.h"

#define FP_BYTES   16
#define PASS_MIN   8
#define PASS_MAX   1024
#define FP_CONTEXT "rezuscloud state key fingerprint"
#define KEY_AD     "rezuscloud backup state key "

/* ------------------------------------------------------------------ small helpers */

static void hex(const unsigned char *in, size_t n, char *out)
{
	sodium_bin2hex(out, n * 2 + 1, in, n);
}

int rz__backup_fsync_dir(const char *path, rz_err_t *err)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, rc = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL) {
		snprintf(dir, sizeof(dir), ".");
	} else if (slash == dir) {
		dir[1] = '\0';
	} else {
		*slash = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		rc = rz_err_set(err, -errno, "backup: cannot sync directory '%s': %s", dir,
		                strerror(errno));
	}
	if (fd >= 0) {
		close(fd);
	}
	return rc;
}

int rz__backup_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return -(errno ? errno : EIO);
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

bool rz__backup_valid_name(const char *name)
{
	char msg[128];

	return name != NULL && rz_format_dns1123_label(name, msg, sizeof(msg));
}

/* dir/<prefix><name><suffix> into buf. */
static int path_of(char *buf, size_t size, const char *dir, const char *prefix, const char *name,
                   const char *suffix, rz_err_t *err)
{
	if (snprintf(buf, size, "%s/%s%s%s", dir, prefix, name, suffix) >= (int)size) {
		return rz_err_set(err, -ENAMETOOLONG, "backup: path in '%s' too long", dir);
	}
	return 0;
}

/* ------------------------------------------------------------------ the state key */

void rz_backup_key_fingerprint(const unsigned char key[RZ_BACKUP_KEY_SIZE], char *out)
{
	unsigned char fp[FP_BYTES];

	crypto_generichash(fp, sizeof(fp), key, RZ_BACKUP_KEY_SIZE,
	                   (const unsigned char *)FP_CONTEXT, sizeof(FP_CONTEXT) - 1);
	hex(fp, sizeof(fp), out);
}

int rz_backup_load_key(const char *path, unsigned char key[RZ_BACKUP_KEY_SIZE], rz_err_t *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 && errno == ENOENT) {
		return rz_err_set(err, RZ_ENOTFOUND, "backup: no state key at '%s'", path);
	}
	if (fd < 0) {
		return rz_err_set(err, -errno, "backup: cannot read the state key '%s': %s", path,
		                  strerror(errno));
	}
	n = read(fd, key, RZ_BACKUP_KEY_SIZE);
	close(fd);
	if (n != RZ_BACKUP_KEY_SIZE) {
		sodium_memzero(key, RZ_BACKUP_KEY_SIZE);
		return rz_err_set(err, REZUS_ECONFIG,
		                  "backup: the state key '%s' must hold %d bytes", path,
		                  RZ_BACKUP_KEY_SIZE);
	}
	return 0;
}

int rz_backup_passphrase(const char *path, char *buf, size_t size, rz_err_t *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;
	size_t len;

	if (size < PASS_MAX + 2) {
		return rz_err_set(err, REZUS_EINTERNAL, "backup: passphrase buffer too small");
	}
	if (fd >= 0) {
		n = read(fd, buf, PASS_MAX + 1);
		close(fd);
	}
	if (n < 0) {
		return rz_err_set(err, -errno, "backup.passphrase_file '%s': %s", path,
		                  strerror(errno));
	}
	buf[n] = '\0';
	len = strcspn(buf, "\r\n");
	if ((size_t)n > PASS_MAX && len == (size_t)n) {
		sodium_memzero(buf, size);
		return rz_err_set(err, REZUS_ECONFIG,
		                  "backup.passphrase_file '%s': the passphrase is longer than %d "
		                  "bytes",
		                  path, PASS_MAX);
	}
	buf[len] = '\0';
	if (len < PASS_MIN) {
		sodium_memzero(buf, size);
		return rz_err_set(err, REZUS_ECONFIG,
		                  "backup.passphrase_file '%s': the passphrase must have at least "
		                  "%d characters",
		                  path, PASS_MIN);
	}
	return 0;
}

static json_t *b64(const unsigned char *p, size_t n)
{
	size_t len = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
	char *s = malloc(len);
	json_t *j;

	if (s == NULL) {
		return NULL;
	}
	sodium_bin2base64(s, len, p, n, sodium_base64_VARIANT_ORIGINAL);
	j = json_string(s);
	free(s);
	return j;
}

void rz__backup_key_ad(const char *name, char *ad, size_t size)
{
	snprintf(ad, size, KEY_AD "%s", name);
}

void rz__backup_mac_key(const unsigned char kek[32], unsigned char mac[RZ__BACKUP_HASH_BYTES])
{
	static const char context[] = "rezuscloud backup checksum";

	crypto_generichash(mac, RZ__BACKUP_HASH_BYTES, (const unsigned char *)context,
	                   sizeof(context) - 1, kek, 32);
}

/* The cost of the key a passphrase derives: libsodium's moderate limits; the unit tests
 * lower it. */
static unsigned long long kdf_opslimit = crypto_pwhash_OPSLIMIT_MODERATE;
static size_t kdf_memlimit = crypto_pwhash_MEMLIMIT_MODERATE;

void rz_backup_set_kdf_cost(unsigned long long opslimit, size_t memlimit)
{
	kdf_opslimit = opslimit;
	kdf_memlimit = memlimit;
}

/* The key line of a backup made with a passphrase: the Argon2id parameters and salt of the
 * key it derives, the state key sealed with that key (key NULL: there is none yet), and the
 * checksum's key (mac) it gives. */
static json_t *keyed_line(const unsigned char *key, const char *pass, const char *name,
                          unsigned char mac[RZ__BACKUP_HASH_BYTES], rz_err_t *err)
{
	unsigned char salt[crypto_pwhash_SALTBYTES],
	    kek[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
	unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
	unsigned char sealed[RZ_BACKUP_KEY_SIZE + crypto_aead_xchacha20poly1305_ietf_ABYTES];
	unsigned long long slen = 0;
	char ad[128];
	json_t *line = NULL;

	randombytes_buf(salt, sizeof(salt));
	randombytes_buf(nonce, sizeof(nonce));
	rz__backup_key_ad(name, ad, sizeof(ad));
	if (crypto_pwhash(kek, sizeof(kek), pass, strlen(pass), salt, kdf_opslimit, kdf_memlimit,
	                  crypto_pwhash_ALG_ARGON2ID13) != 0) {
		rz_err_set(err, -ENOMEM, "backup: deriving a key from the passphrase failed");
		return NULL;
	}
	rz__backup_mac_key(kek, mac);
	if (key != NULL) {
		crypto_aead_xchacha20poly1305_ietf_encrypt(sealed, &slen, key, RZ_BACKUP_KEY_SIZE,
		                                           (const unsigned char *)ad, strlen(ad),
		                                           NULL, nonce, kek);
	}
	sodium_memzero(kek, sizeof(kek));
	line =
	    json_pack("{s:b, s:s, s:s, s:I, s:I, s:o?}", "included", key != NULL, "checksum",
	              RZ__BACKUP_KEYED, "kdf", "argon2id13", "opslimit", (json_int_t)kdf_opslimit,
	              "memlimit", (json_int_t)kdf_memlimit, "salt", b64(salt, sizeof(salt)));
	if (line != NULL && key != NULL) {
		json_object_set_new(line, "nonce", b64(nonce, sizeof(nonce)));
		json_object_set_new(line, "sealed", b64(sealed, (size_t)slen));
	}
	if (line == NULL || json_object_size(line) != (key != NULL ? 8u : 6u)) {
		json_decref(line);
		sodium_memzero(mac, RZ__BACKUP_HASH_BYTES);
		rz_err_set(err, -ENOMEM, "backup: out of memory");
		return NULL;
	}
	return line;
}

/* ------------------------------------------------------------------ the manifest */

/* What the snapshot at path holds, counted from the snapshot itself. */
static int count_snapshot(const char *path, json_t *m, rz_err_t *err)
{
	static const struct {
		const char *member, *sql;
	} counts[] = {
		{ "revision", "SELECT rv FROM revision WHERE id = 1" },
		{ "stateVersions", "SELECT count(*) FROM tfstate_versions" },
		{ "stateTenants", "SELECT count(DISTINCT tenant) FROM tfstate_versions" },
		{ "sealedOutputs", "SELECT count(*) FROM tenant_outputs" },
		{ "users", "SELECT count(*) FROM objects WHERE kind = 'User'" },
		{ "auditRows", "SELECT count(*) FROM audit" },
	};
	rz_db_t *db = NULL;
	json_t *objects = json_object();
	rz_stmt_t *s;
	int64_t v = 0;
	int rc = rz_db_open_readonly(&db, path, err);

	for (size_t i = 0; rc == 0 && i < sizeof(counts) / sizeof(counts[0]); i++) {
		rc = rz_db_query_int(db, counts[i].sql, &v, err);
		if (rc == 0) {
			json_object_set_new(m, counts[i].member, json_integer(v));
		}
	}
	s = rc == 0 ? rz_db_stmt(
	                  db, "SELECT kind, count(*) FROM objects GROUP BY kind ORDER BY kind", err)
	            : NULL;
	rc = rc == 0 && s == NULL ? err->code : rc;
	while (rc == 0 && (rc = rz_stmt_step(s, err)) == 1) {
		json_object_set_new(objects, rz_stmt_text(s, 0), json_integer(rz_stmt_int64(s, 1)));
		rc = 0;
	}
	rz_stmt_done(s);
	if (rc == 0) {
		json_object_set_new(m, "schemaVersion", json_integer(rz_db_schema_version(db)));
		json_object_set(m, "objects", objects);
	}
	json_decref(objects);
	rz_db_close(db);
	return rc;
}

/* ------------------------------------------------------------------ writing */

struct out {
	int fd;
	crypto_generichash_state hash;
	uint64_t payload; /* compressed bytes written */
};

static int out_write(struct out *o, const void *p, size_t n)
{
	crypto_generichash_update(&o->hash, p, n);
	return rz__backup_write_all(o->fd, p, n);
}

static int out_line(struct out *o, const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	int rc = s == NULL ? -ENOMEM : out_write(o, s, strlen(s));

	free(s);
	return rc == 0 ? out_write(o, "\n", 1) : rc;
}

/* The database at path, gzip-compressed, onto o. */
static int out_payload(struct out *o, const char *path, uint64_t *raw, rz_err_t *err)
{
	unsigned char *in = malloc(RZ__BACKUP_CHUNK), *buf = malloc(RZ__BACKUP_CHUNK);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	z_stream z = { 0 };
	int rc = 0, zrc = Z_OK, flush = Z_NO_FLUSH;
	bool zinit = false;

	*raw = 0;
	if (in == NULL || buf == NULL || fd < 0) {
		rc = rz_err_set(err, fd < 0 ? -errno : -ENOMEM,
		                "backup: reading the snapshot failed");
		goto out;
	}
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		rc = rz_err_set(err, -ENOMEM, "backup: gzip: out of memory");
		goto out;
	}
	zinit = true;
	while (rc == 0 && zrc != Z_STREAM_END) {
		ssize_t n = 0;
		if (flush == Z_NO_FLUSH) {
			n = read(fd, in, RZ__BACKUP_CHUNK);
			if (n < 0) {
				rc = rz_err_set(err, -errno,
				                "backup: reading the snapshot failed: %s",
				                strerror(errno));
				break;
			}
			flush = n == 0 ? Z_FINISH : Z_NO_FLUSH;
			*raw += (uint64_t)n;
		}
		z.next_in = in;
		z.avail_in = (uInt)n;
		do {
			z.next_out = buf;
			z.avail_out = RZ__BACKUP_CHUNK;
			zrc = deflate(&z, flush);
			if (zrc == Z_STREAM_ERROR) {
				rc = rz_err_set(err, RZ_EDB, "backup: gzip failed");
				break;
			}
			if (RZ__BACKUP_CHUNK - z.avail_out > 0) {
				int w = out_write(o, buf, RZ__BACKUP_CHUNK - z.avail_out);
				o->payload += RZ__BACKUP_CHUNK - z.avail_out;
				if (w < 0) {
					rc = rz_err_set(err, w, "backup: writing failed: %s",
					                strerror(-w));
					break;
				}
			}
		} while (z.avail_out == 0);
	}
out:
	if (zinit) {
		deflateEnd(&z);
	}
	if (fd >= 0) {
		close(fd);
	}
	free(in);
	free(buf);
	return rc;
}

static int out_trailer(struct out *o)
{
	unsigned char h[RZ__BACKUP_HASH_BYTES];
	char sum[RZ__BACKUP_HASH_BYTES * 2 + 1], line[RZ__BACKUP_END_LEN + 1];

	crypto_generichash_final(&o->hash, h, sizeof(h));
	hex(h, sizeof(h), sum);
	snprintf(line, sizeof(line), RZ__BACKUP_END_PREFIX "%020" PRIu64 " %s\n", o->payload, sum);
	return rz__backup_write_all(o->fd, line, RZ__BACKUP_END_LEN);
}

/* The manifest's head: what the file is, before the snapshot's counts. */
static json_t *manifest_new(const rz_backup_opts_t *o, const char *now, const char *fingerprint,
                            bool included, int format)
{
	return json_pack("{s:i, s:s, s:s, s:s, s:s, s:{s:b, s:s?}}", "format", format, "name",
	                 o->name, "createdAt", now, "trigger", o->trigger ? o->trigger : "manual",
	                 "rezuscloudVersion", rz_version(), "stateKey", "included", included,
	                 "fingerprint", fingerprint);
}

/* The state key line and the manifest's stateKey, as the options ask; with a passphrase,
 * the checksum's key in mac and *keyed set (format 2). */
static int key_line(const rz_backup_opts_t *o, json_t **line, char *fp, bool *included,
                    unsigned char mac[RZ__BACKUP_HASH_BYTES], bool *keyed, rz_err_t *err)
{
	unsigned char key[RZ_BACKUP_KEY_SIZE];
	char pass[PASS_MAX + 2];
	int rc = rz_backup_load_key(o->key_path, key, err);
	bool have = rc == 0;

	*line = NULL;
	*included = *keyed = false;
	fp[0] = '\0';
	if (rc != 0 && rc != RZ_ENOTFOUND) { /* RZ_ENOTFOUND: no state was ever stored */
		return rc;
	}
	if (have) {
		rz_backup_key_fingerprint(key, fp);
	}
	if (o->passphrase_file == NULL || o->passphrase_file[0] == '\0') {
		*line = json_pack("{s:b}", "included", 0);
		rc = 0;
	} else if ((rc = rz_backup_passphrase(o->passphrase_file, pass, sizeof(pass), err)) == 0) {
		*line = keyed_line(have ? key : NULL, pass, o->name, mac, err);
		*included = *line != NULL && have;
		*keyed = *line != NULL;
		rc = *line == NULL ? err->code : 0;
	}
	sodium_memzero(pass, sizeof(pass));
	sodium_memzero(key, sizeof(key));
	return rc;
}

/* Header, payload and trailer into the temporary at tmp. */
static int write_file(const char *tmp, const char *snap, json_t *m, const json_t *kl,
                      const unsigned char *mac, rz_err_t *err)
{
	struct out o = { .fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) };
	uint64_t raw = 0;
	int rc = 0, w;

	if (o.fd < 0) {
		return rz_err_set(err, -errno, "backup: cannot create '%s': %s", tmp,
		                  strerror(errno));
	}
	crypto_generichash_init(&o.hash, mac, mac != NULL ? RZ__BACKUP_HASH_BYTES : 0,
	                        RZ__BACKUP_HASH_BYTES);
	/* The database's size goes into the manifest before the payload is compressed. */
	{
		struct stat st;
		if (stat(snap, &st) == 0) {
			raw = (uint64_t)st.st_size;
		}
	}
	json_object_set_new(
	    m, "database",
	    json_pack("{s:I, s:s}", "bytes", (json_int_t)raw, "compression", "gzip"));
	w = mac != NULL ? out_write(&o, RZ__BACKUP_MAGIC_2, sizeof(RZ__BACKUP_MAGIC_2) - 1)
	                : out_write(&o, RZ__BACKUP_MAGIC_1, sizeof(RZ__BACKUP_MAGIC_1) - 1);
	w = w == 0 ? out_line(&o, m) : w;
	w = w == 0 ? out_line(&o, kl) : w;
	if (w < 0) {
		rc = rz_err_set(err, w, "backup: writing '%s' failed: %s", tmp, strerror(-w));
	}
	if (rc == 0) {
		uint64_t got = 0;
		rc = out_payload(&o, snap, &got, err);
		if (rc == 0 && got != raw) {
			rc = rz_err_set(err, RZ_EDB,
			                "backup: the snapshot changed while compressed");
		}
	}
	if (rc == 0 && ((w = out_trailer(&o)) < 0 || fsync(o.fd) < 0)) {
		rc = rz_err_set(err, w < 0 ? w : -errno, "backup: writing '%s' failed: %s", tmp,
		                strerror(w < 0 ? -w : errno));
	}
	close(o.fd);
	return rc;
}

/* The snapshot: an empty 0600 file first, so that SQLite's copy keeps that mode. */
static int snapshot(const rz_backup_opts_t *o, const char *snap, char *now, rz_err_t *err)
{
	int fd;

	rz_time_now(now, 40);
	unlink(snap);
	fd = open(snap, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		return rz_err_set(err, -errno, "backup: cannot create '%s': %s", snap,
		                  strerror(errno));
	}
	close(fd);
	return rz_db_copy(o->db_path, snap, err);
}

int rz_backup_create(const rz_backup_opts_t *o, json_t **manifest, rz_err_t *err)
{
	char snap[PATH_MAX], tmp[PATH_MAX], final[PATH_MAX], fp[FP_BYTES * 2 + 1], now[40];
	json_t *m = NULL, *kl = NULL;
	unsigned char mac[RZ__BACKUP_HASH_BYTES];
	bool included = false, keyed = false;
	int rc;

	*manifest = NULL;
	if (!rz__backup_valid_name(o->name)) {
		return rz_err_set(err, REZUS_EINVALID, "backup: '%s' is not a DNS-1123 label",
		                  o->name ? o->name : "");
	}
	if (mkdir(o->dir, 0700) < 0 && errno != EEXIST) {
		return rz_err_set(err, -errno, "backup: cannot create '%s': %s", o->dir,
		                  strerror(errno));
	}
	rc = path_of(snap, sizeof(snap), o->dir, ".", o->name, ".db.tmp", err);
	rc = rc == 0 ? path_of(tmp, sizeof(tmp), o->dir, ".", o->name, RZ_BACKUP_SUFFIX ".tmp", err)
	             : rc;
	rc = rc == 0 ? path_of(final, sizeof(final), o->dir, "", o->name, RZ_BACKUP_SUFFIX, err)
	             : rc;
	if (rc != 0) {
		return rc;
	}
	if (access(final, F_OK) == 0) {
		return rz_err_set(err, -EEXIST, "backup: '%s' exists", final);
	}
	/* The snapshot first: the backup is of the moment it was asked for, and its
	 * manifest says when that was. Sealing the key (Argon2id) comes after. */
	rc = snapshot(o, snap, now, err);
	rc = rc == 0 ? key_line(o, &kl, fp, &included, mac, &keyed, err) : rc;
	if (rc == 0 && (m = manifest_new(o, now, fp[0] ? fp : NULL, included,
	                                 keyed ? RZ_BACKUP_FORMAT : RZ_BACKUP_UNKEYED)) == NULL) {
		rc = rz_err_set(err, -ENOMEM, "backup: out of memory");
	}
	rc = rc == 0 ? count_snapshot(snap, m, err) : rc;
	rc = rc == 0 ? write_file(tmp, snap, m, kl, keyed ? mac : NULL, err) : rc;
	sodium_memzero(mac, sizeof(mac));
	if (rc == 0 && rename(tmp, final) < 0) {
		rc =
		    rz_err_set(err, -errno, "backup: cannot rename '%s': %s", tmp, strerror(errno));
	}
	rc = rc == 0 ? rz__backup_fsync_dir(final, err) : rc;
	unlink(snap);
	unlink(tmp);
	json_decref(kl);
	if (rc != 0) {
		json_decref(m);
		return rc;
	}
	*manifest = m;
	return 0;
}

/* ------------------------------------------------------------------ the directory */

static bool is_backup_file(const char *leaf, char *name, size_t size)
{
	size_t len = strlen(leaf), suf = sizeof(RZ_BACKUP_SUFFIX) - 1;

	if (leaf[0] == '.' || len <= suf || len - suf >= size ||
	    strcmp(leaf + len - suf, RZ_BACKUP_SUFFIX) != 0) {
		return false;
	}
	memcpy(name, leaf, len - suf);
	name[len - suf] = '\0';
	return rz__backup_valid_name(name);
}

/* Newest first: createdAt descending, then name descending; unreadable ones last. */
static int newest_first(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *tx =
	    json_string_value(json_object_get(json_object_get(x, "manifest"), "createdAt"));
	const char *ty =
	    json_string_value(json_object_get(json_object_get(y, "manifest"), "createdAt"));
	int c;

	if ((tx == NULL) != (ty == NULL)) {
		return tx == NULL ? 1 : -1;
	}
	c = tx != NULL ? strcmp(ty, tx) : 0;
	return c != 0 ? c
	              : strcmp(json_string_value(json_object_get(y, "name")),
	                       json_string_value(json_object_get(x, "name")));
}

static json_t *list_entry(const char *dir, const char *name)
{
	char path[PATH_MAX];
	rz_err_t err = { 0 };
	json_t *m = NULL;
	int64_t size = 0;
	struct stat st;

	if (path_of(path, sizeof(path), dir, "", name, RZ_BACKUP_SUFFIX, &err) != 0) {
		return NULL;
	}
	if (rz_restore_inspect(path, &m, &size, &err) != 0) {
		size = stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
		return json_pack("{s:s, s:I, s:s}", "name", name, "size", (json_int_t)size, "error",
		                 err.msg);
	}
	return json_pack("{s:s, s:I, s:o}", "name", name, "size", (json_int_t)size, "manifest", m);
}

int rz_backup_list(const char *dir, size_t max, json_t **list, rz_err_t *err)
{
	DIR *d = opendir(dir);
	json_t **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	char name[128];

	*list = NULL;
	if (d == NULL && errno == ENOENT) {
		*list = json_array();
		return *list != NULL ? 0 : -ENOMEM;
	}
	if (d == NULL) {
		return rz_err_set(err, -errno, "backup: cannot read '%s': %s", dir,
		                  strerror(errno));
	}
	while ((e = readdir(d)) != NULL && n < max) {
		json_t *entry;
		if (!is_backup_file(e->d_name, name, sizeof(name))) {
			continue;
		}
		if (n == cap) {
			json_t **nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			if (nv == NULL) {
				break;
			}
			v = nv;
		}
		if ((entry = list_entry(dir, name)) != NULL) {
			v[n++] = entry;
		}
	}
	closedir(d);
	if (n > 1) {
		qsort(v, n, sizeof(*v), newest_first);
	}
	*list = json_array();
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(*list, v[i]);
	}
	free(v);
	return *list != NULL ? 0 : rz_err_set(err, -ENOMEM, "backup: out of memory");
}

int rz_backup_remove(const char *dir, const char *name, rz_err_t *err)
{
	char path[PATH_MAX];
	int rc;

	if (!rz__backup_valid_name(name)) {
		return rz_err_set(err, REZUS_EINVALID, "backup name '%s' is not a DNS-1123 label",
		                  name ? name : "");
	}
	rc = path_of(path, sizeof(path), dir, "", name, RZ_BACKUP_SUFFIX, err);
	if (rc == 0 && unlink(path) < 0) {
		rc = errno == ENOENT
		         ? rz_err_set(err, RZ_ENOTFOUND, "backup \"%s\" not found", name)
		         : rz_err_set(err, -errno, "backup: cannot remove '%s': %s", path,
		                      strerror(errno));
	}
	return rc == 0 ? rz__backup_fsync_dir(path, err) : rc;
}

int rz_backup_prune(const char *dir, int keep, rz_err_t *err)
{
	json_t *list = NULL, *e;
	int kept = 0, removed = 0;
	size_t i;
	int rc = rz_backup_list(dir, SIZE_MAX, &list, err);

	json_array_foreach(list, i, e)
	{
		if (json_object_get(e, "manifest") == NULL) {
			continue; /* a file whose head cannot be read: the operator's to look at */
		}
		if (kept < keep) {
			kept++;
		} else if (rz_backup_remove(dir, json_string_value(json_object_get(e, "name")),
		                            err) == 0) {
			removed++;
		}
	}
	json_decref(list);
	return rc < 0 ? rc : removed;
}

void rz_backup_clean(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		bool tmp = len > 5 && strcmp(e->d_name + len - 4, ".tmp") == 0;
		bool journal = len > 12 && strcmp(e->d_name + len - 12, ".tmp-journal") == 0;
		if (e->d_name[0] == '.' && (tmp || journal) &&
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path)) {
			unlink(path);
		}
	}
	if (d != NULL) {
		closedir(d);
	}
}
