/* tests/unit/check_offsite.c - core/offsite: sealed files and their keys, the local target,
 * keys and settings, and the S3 target's requests against a scripted server on loopback
 * whose signatures are checked by an independent SigV4 (tests/unit/fakes3.h). */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/offsite/offsite-int.h"
#include "core/offsite/seal.h"
#include "core/offsite/target.h"
#include "tests/unit/fakes3.h"
#include "tests/unit/testutil.h"

static char *dir;

static void setup(void)
{
	ck_assert_int_ge(sodium_init(), 0);
	dir = rzt_tmpdir();
}

static void teardown(void)
{
	rzt_rmrf(dir);
	free(dir);
}

/* dir/name into a static buffer of four (the tests hold a few paths at once). */
static const char *at(const char *name)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* n bytes of a pattern (not random: a failure reproduces) to path. */
static void write_pattern(const char *path, size_t n)
{
	unsigned char buf[4096];
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < n; i += sizeof(buf)) {
		size_t k = n - i < sizeof(buf) ? n - i : sizeof(buf);
		for (size_t j = 0; j < k; j++) {
			buf[j] = (unsigned char)(((i + j) * 7 + (i + j) / 65536) & 0xff);
		}
		ck_assert_uint_eq(fwrite(buf, 1, k, f), k);
	}
	ck_assert_int_eq(fclose(f), 0);
}

static void sha_of(const char *path, char hex[65])
{
	unsigned char buf[65536], d[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_state st;
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	crypto_hash_sha256_init(&st);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		crypto_hash_sha256_update(&st, buf, n);
	}
	fclose(f);
	crypto_hash_sha256_final(&st, d);
	sodium_bin2hex(hex, 65, d, sizeof(d));
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* How many entries of d start with "." and are not "." or "..": temporaries left. */
static int hidden_in(const char *d)
{
	DIR *h = opendir(d);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(h);
	while ((e = readdir(h)) != NULL) {
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 &&
		     strcmp(e->d_name, "..") != 0;
	}
	closedir(h);
	return n;
}

/* ------------------------------------------------------------------ sealing */

static void round_trip(size_t n)
{
	rz_seal_keys_t *k = NULL;
	rz_err_t err = { 0 };
	char plain_sha[65], s1[65], s2[65];
	uint64_t z1 = 0, z2 = 0;
	struct stat st;

	write_pattern(at("plain"), n);
	sha_of(at("plain"), plain_sha);
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), 0);
	ck_assert_int_eq(rz_seal_file(k, at("plain"), at("sealed"), &z1, s1, &err), 0);
	ck_assert_uint_eq(z1, n);
	ck_assert_str_eq(s1, plain_sha);
	ck_assert_int_eq(stat(at("sealed"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* header 56, then 17 bytes a chunk */
	ck_assert_int_eq(st.st_size, 56 + (n == 0 ? 1 : (n + 65535) / 65536) * 17 + n);
	ck_assert_int_eq(rz_unseal_file(k, at("sealed"), at("opened"), &z2, s2, &err), 0);
	ck_assert_uint_eq(z2, n);
	ck_assert_str_eq(s2, plain_sha);
	sha_of(at("opened"), s2);
	ck_assert_str_eq(s2, plain_sha);
	ck_assert_int_eq(hidden_in(dir), 0);
	rz_seal_keys_free(k);
}

START_TEST(test_seal_round_trip)
{
	/* several MB (under valgrind fewer: the size only costs time), a partial last chunk */
	round_trip((getenv("RZT_VALGRIND") != NULL ? 2 : 5) * 1024 * 1024 + 123);
	round_trip(2 * 65536); /* whole chunks only */
	round_trip(1);
	round_trip(0);
}
END_TEST

START_TEST(test_seal_keyfile)
{
	rz_seal_keys_t *k = NULL;
	rz_err_t err = { 0 };
	char id[RZ_SEAL_ID_HEX], text[1024];
	struct stat st;
	FILE *f;

	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), 0);
	ck_assert_int_eq(stat(at("keys"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	rz_seal_keys_newest_id(k, id);
	rz_seal_keys_free(k);
	/* one "<id> <created> <key>" line, the id matching */
	f = fopen(at("keys"), "r");
	ck_assert_ptr_nonnull(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, id));
	ck_assert_int_eq(strlen(strstr(text, id)), 32 + 1 + 20 + 1 + 44 + 1);

	/* loaded again, the same key */
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), 0);
	char id2[RZ_SEAL_ID_HEX];
	rz_seal_keys_newest_id(k, id2);
	ck_assert_str_eq(id, id2);
	rz_seal_keys_free(k);

	/* open to others: refused */
	ck_assert_int_eq(chmod(at("keys"), 0640), 0);
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), REZUS_ECONFIG);
	ck_assert_ptr_null(k);
	ck_assert_ptr_nonnull(strstr(err.msg, "chmod 600"));
	ck_assert_int_eq(chmod(at("keys"), 0600), 0);

	/* a key that does not match its id: damaged (a character inside the base64, whose six
	 * bits are all the key's: the last one before '=' holds padding bits a decoder may
	 * ignore, which made this test fail one time in sixteen) */
	text[strlen(text) - 20] = text[strlen(text) - 20] == 'A' ? 'B' : 'A';
	rzt_write_file(at("keys"), text);
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), RZ_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(err.msg, "does not match"));
	rzt_write_file(at("keys"), "# nothing\n");
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), RZ_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(err.msg, "holds no key"));
	rzt_write_file(at("keys"), "not a key line\n");
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), RZ_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(err.msg, "line 1"));
}
END_TEST

/* Seal a 200 KiB file, change the sealed copy with how, and open it: code and text. */
static void refused(void (*how)(const char *path), int code, const char *text)
{
	rz_seal_keys_t *k = NULL;
	rz_err_t err = { 0 };
	char sha[65];
	uint64_t n;

	write_pattern(at("plain"), 200 * 1024);
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), 0);
	ck_assert_int_eq(rz_seal_file(k, at("plain"), at("sealed"), &n, sha, &err), 0);
	how(at("sealed"));
	ck_assert_int_eq(rz_unseal_file(k, at("sealed"), at("opened"), &n, sha, &err), code);
	ck_assert_msg(strstr(err.msg, text) != NULL, "'%s' does not say '%s'", err.msg, text);
	ck_assert(!exists(at("opened")));
	ck_assert_int_eq(hidden_in(dir), 0);
	rz_seal_keys_free(k);
}

static void flip_at(const char *path, long off)
{
	FILE *f = fopen(path, "r+");
	int c;

	ck_assert_ptr_nonnull(f);
	fseek(f, off, off < 0 ? SEEK_END : SEEK_SET);
	c = fgetc(f);
	fseek(f, -1, SEEK_CUR);
	fputc(c ^ 0x20, f);
	fclose(f);
}

static void flip_chunk1(const char *p)
{
	flip_at(p, 56 + 65536 + 17 + 100);
}
static void flip_size(const char *p)
{
	flip_at(p, 31);
}
static void flip_version(const char *p)
{
	flip_at(p, 6);
}
static void flip_last(const char *p)
{
	flip_at(p, -1);
}
static void cut_middle(const char *p)
{
	ck_assert_int_eq(truncate(p, 100000), 0);
}
static void cut_chunk(const char *p)
{
	ck_assert_int_eq(truncate(p, 56 + 3 * (65536 + 17)), 0); /* the last chunk gone */
}
static void cut_head(const char *p)
{
	ck_assert_int_eq(truncate(p, 40), 0);
}
static void append_byte(const char *p)
{
	FILE *f = fopen(p, "a");
	fputc('x', f);
	fclose(f);
}
static void foreign(const char *p)
{
	rzt_write_file(p, "SQLite format 3\n");
}
static void other_key(const char *p)
{
	flip_at(p, 10); /* the key id */
}

START_TEST(test_seal_refusals)
{
	refused(flip_chunk1, RZ_ECORRUPT,
	        "is tampered: chunk 1 (at byte 65609) does not authenticate");
	/* the size in the header is bound to every chunk */
	refused(flip_size, RZ_ECORRUPT, "is tampered: chunk 0 (at byte 56) does not authenticate");
	refused(flip_last, RZ_ECORRUPT, "is tampered: chunk 3");
	refused(flip_version, REZUS_EINVALID, "format version");
	refused(cut_middle, RZ_ECORRUPT, "is truncated: 100000 of 204924 bytes");
	refused(cut_chunk, RZ_ECORRUPT, "is truncated");
	refused(cut_head, RZ_ECORRUPT, "its header is cut");
	refused(append_byte, RZ_ECORRUPT, "is tampered: bytes after its end");
	refused(foreign, RZ_EPARSE, "is not a sealed file (foreign)");
	refused(other_key, RZ_ENOTFOUND, "which key file");
}
END_TEST

START_TEST(test_seal_wrong_key)
{
	rz_seal_keys_t *a = NULL, *b = NULL;
	rz_err_t err = { 0 };
	char sha[65], ida[RZ_SEAL_ID_HEX];
	uint64_t n;

	write_pattern(at("plain"), 1000);
	ck_assert_int_eq(rz_seal_keys_load(&a, at("a.keys"), &err), 0);
	ck_assert_int_eq(rz_seal_keys_load(&b, at("b.keys"), &err), 0);
	ck_assert_int_eq(rz_seal_file(a, at("plain"), at("sealed"), &n, sha, &err), 0);
	ck_assert_int_eq(rz_unseal_file(b, at("sealed"), at("opened"), &n, sha, &err),
	                 RZ_ENOTFOUND);
	rz_seal_keys_newest_id(a, ida);
	ck_assert_ptr_nonnull(strstr(err.msg, ida));
	ck_assert_ptr_nonnull(strstr(err.msg, "b.keys' does not hold"));
	ck_assert(!exists(at("opened")));
	rz_seal_keys_free(a);
	rz_seal_keys_free(b);
}
END_TEST

START_TEST(test_seal_rotation)
{
	rz_seal_keys_t *k = NULL;
	rz_err_t err = { 0 };
	char sha[65], old_id[RZ_SEAL_ID_HEX], new_id[RZ_SEAL_ID_HEX], head[24];
	uint64_t n;
	struct stat st;
	FILE *f;

	write_pattern(at("plain"), 70000);
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), 0);
	rz_seal_keys_newest_id(k, old_id);
	ck_assert_int_eq(rz_seal_file(k, at("plain"), at("old"), &n, sha, &err), 0);
	rz_seal_keys_free(k);

	ck_assert_int_eq(rz_seal_keys_rotate(at("keys"), &err), 0);
	ck_assert_int_eq(stat(at("keys"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), 0);
	rz_seal_keys_newest_id(k, new_id);
	ck_assert_str_ne(old_id, new_id);
	ck_assert_int_eq(rz_seal_file(k, at("plain"), at("new"), &n, sha, &err), 0);
	/* the new file names the new key, and both open */
	f = fopen(at("new"), "r");
	ck_assert_uint_eq(fread(head, 1, sizeof(head), f), sizeof(head));
	fclose(f);
	char hex[RZ_SEAL_ID_HEX];
	sodium_bin2hex(hex, sizeof(hex), (unsigned char *)head + 8, 16);
	ck_assert_str_eq(hex, new_id);
	ck_assert_int_eq(rz_unseal_file(k, at("old"), at("o1"), &n, sha, &err), 0);
	ck_assert_int_eq(rz_unseal_file(k, at("new"), at("o2"), &n, sha, &err), 0);
	rz_seal_keys_free(k);
	ck_assert_int_eq(hidden_in(dir), 0);

	/* rotating a missing file creates it (one key), then adds one */
	ck_assert_int_eq(rz_seal_keys_rotate(at("fresh"), &err), 0);
	ck_assert_int_eq(rz_seal_keys_load(&k, at("fresh"), &err), 0);
	rz_seal_keys_free(k);
}
END_TEST

struct rotor {
	const char *path;
	int rc;
};

static void *rotate_5(void *arg)
{
	struct rotor *r = arg;
	rz_err_t err = { 0 };

	for (int i = 0; i < 5 && r->rc == 0; i++) {
		r->rc = rz_seal_keys_rotate(r->path, &err);
	}
	return NULL;
}

START_TEST(test_seal_rotation_races)
{
	struct rotor a = { at("keys"), 0 }, b = { at("keys"), 0 };
	pthread_t ta, tb;
	rz_seal_keys_t *k = NULL;
	rz_err_t err = { 0 };
	char line[256];
	int lines = 0;
	FILE *f;

	ck_assert_int_eq(rz_seal_keys_load(&k, at("keys"), &err), 0);
	rz_seal_keys_free(k);
	pthread_create(&ta, NULL, rotate_5, &a);
	pthread_create(&tb, NULL, rotate_5, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_int_eq(b.rc, 0);
	f = fopen(at("keys"), "r");
	while (fgets(line, sizeof(line), f) != NULL) {
		lines += line[0] != '#';
	}
	fclose(f);
	ck_assert_int_eq(lines, 11); /* none lost */
}
END_TEST

/* ------------------------------------------------------------------ keys and settings */

START_TEST(test_keys)
{
	static const char *const good[] = { "a", "tenant-a/snap-20261207.rzsnap", "a+b=c@d,e_f",
		                            "x/y/z" };
	static const char *const bad[] = { "",   "/a",  "a//b", "../x", "a/../b", "a/.hidden",
		                           "a/", "a b", "a\\b", "a\nb", "é" };
	char big[600], part[300];
	rz_err_t err = { 0 };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(rz_target_check_key(good[i], &err) == 0, "%s: %s", good[i], err.msg);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(rz_target_check_key(bad[i], &err) == REZUS_EINVALID, "%s", bad[i]);
	}
	memset(big, 'a', 513);
	big[513] = '\0';
	ck_assert_int_eq(rz_target_check_key(big, &err), REZUS_EINVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "at most 512"));
	memset(part, 'b', 256);
	part[256] = '\0';
	ck_assert_int_eq(rz_target_check_key(part, &err), REZUS_EINVALID);
	ck_assert_int_eq(rz_target_check_key("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p", &err), 0);
	ck_assert_int_eq(rz_target_check_key("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", &err),
	                 REZUS_EINVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "more than 16 parts"));
	/* prefixes: a key's start */
	ck_assert_int_eq(rz__offsite_check_key("", true, &err), 0);
	ck_assert_int_eq(rz__offsite_check_key("tenant-a/", true, &err), 0);
	ck_assert_int_eq(rz__offsite_check_key("tenant-a/snap-2026", true, &err), 0);
	ck_assert_int_eq(rz__offsite_check_key("/x", true, &err), REZUS_EINVALID);
	ck_assert_int_eq(rz__offsite_check_key("a/..", true, &err), REZUS_EINVALID);
}
END_TEST

/* rz_target_open on text: its code, and err.msg holding want. */
static void open_refused(const char *text, const char *want)
{
	json_t *conf = json_loads(text, 0, NULL);
	rz_target_t *t = NULL;
	rz_err_t err = { 0 };

	ck_assert_ptr_nonnull(conf);
	ck_assert_int_eq(rz_target_open(&t, conf, &err), REZUS_ECONFIG);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(err.msg, want) != NULL, "%s: '%s' does not say '%s'", text, err.msg,
	              want);
	ck_assert_msg(strstr(err.msg, "TOPSECRET") == NULL, "the secret in '%s'", err.msg);
	json_decref(conf);
}

static char *s3conf(const char *extra)
{
	char *s = NULL;

	ck_assert_int_gt(asprintf(&s,
	                          "{\"type\":\"s3\",\"endpoint\":\"https://s3.example.com\","
	                          "\"bucket\":\"snaps\",\"credentialsFile\":\"%s\"%s}",
	                          at("cred"), extra),
	                 0);
	return s;
}

START_TEST(test_settings)
{
	static const struct {
		const char *extra, *want;
	} cases[] = {
		{ ",\"bogus\":1", "'bogus' is not a setting of an s3 target" },
		{ ",\"pathStyle\":\"yes\"", "'pathStyle' must be true or false" },
		{ ",\"timeoutSeconds\":0", "'timeoutSeconds' must be an integer from 1 to 86400" },
		{ ",\"timeoutSeconds\":90000", "'timeoutSeconds'" },
		{ ",\"region\":\"us east\"", "'region'" },
		{ ",\"prefix\":\"/abs\"", "'prefix'" },
		{ ",\"prefix\":\"a/../b\"", "'prefix'" },
		{ ",\"caFile\":\"rel.pem\"", "'caFile' must be an absolute path" },
	};
	char *s;

	rzt_write_file(at("cred"), "aws_access_key_id = AK\naws_secret_access_key = TOPSECRET\n");
	open_refused("[]", "must be an object");
	open_refused("{\"dir\":\"/x\"}", "'type' must be \"local\" or \"s3\"");
	open_refused("{\"type\":\"ftp\"}", "'type'");
	open_refused("{\"type\":\"local\",\"dir\":\"rel\"}", "'dir' must be an absolute path");
	open_refused("{\"type\":\"local\",\"dir\":\"/x\",\"bucket\":\"b\"}",
	             "'bucket' is not a setting of a local target");
	open_refused("{\"type\":\"s3\",\"bucket\":\"b\"}", "'endpoint' is required");
	open_refused("{\"type\":\"s3\",\"endpoint\":\"ftp://h\",\"bucket\":\"bbb\"}",
	             "'endpoint' must start with https:// or http://");
	open_refused("{\"type\":\"s3\",\"endpoint\":\"https://h/path\",\"bucket\":\"bbb\"}",
	             "without a path");
	open_refused("{\"type\":\"s3\",\"endpoint\":\"https://u:p@h\",\"bucket\":\"bbb\"}",
	             "without a path, query or credentials");
	open_refused("{\"type\":\"s3\",\"endpoint\":\"https://h:99999\",\"bucket\":\"bbb\"}",
	             "port");
	open_refused("{\"type\":\"s3\",\"endpoint\":\"https://h\",\"bucket\":\"B_x\"}", "'bucket'");
	open_refused("{\"type\":\"s3\",\"endpoint\":\"https://10.0.0.1\",\"bucket\":\"bbb\","
	             "\"credentialsFile\":\"/x\"}",
	             "'pathStyle' must be true for an endpoint given by IP address");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = s3conf(cases[i].extra);
		open_refused(s, cases[i].want);
		free(s);
	}
	/* the credentials file */
	s = s3conf("");
	ck_assert_int_eq(chmod(at("cred"), 0644), 0);
	open_refused(s, "is open to others (mode 0644): chmod 600 it");
	ck_assert_int_eq(chmod(at("cred"), 0600), 0);
	rzt_write_file(at("cred"), "aws_access_key_id = AK\n");
	open_refused(s, "must set aws_access_key_id and aws_secret_access_key");
	rzt_write_file(at("cred"), "aws_access_key_id = AK\nTOPSECRET\n");
	open_refused(s, "line 2: expected NAME = VALUE");
	rzt_write_file(at("cred"), "aws_access_key_id = AK\nsecret = TOPSECRET\n");
	open_refused(s, "line 2: 'secret' is not aws_access_key_id or aws_secret_access_key");
	rzt_write_file(at("cred"), "[a]\naws_access_key_id = AK\n[b]\naws_secret_access_key = x\n");
	open_refused(s, "more than one [section]");
	rzt_write_file(at("cred"), "aws_access_key_id=AK\naws_access_key_id=AK2\n");
	open_refused(s, "aws_access_key_id is set twice");
	unlink(at("cred"));
	open_refused(s, "cannot read credentialsFile");
	free(s);
}
END_TEST

START_TEST(test_settings_accepted)
{
	json_t *conf;
	rz_target_t *t = NULL;
	rz_err_t err = { 0 };
	char *s;

	rzt_write_file(at("cred"), "# mine\n[default]\n  aws_access_key_id = AK \n"
	                           "aws_secret_access_key=TOPSECRET\r\n\n");
	s = s3conf(",\"prefix\":\"rezus\",\"region\":\"eu-west-3\",\"pathStyle\":false");
	conf = json_loads(s, 0, NULL);
	ck_assert_int_eq(rz_target_open(&t, conf, &err), 0);
	ck_assert_str_eq(rz_target_where(t), "s3://snaps/rezus/");
	ck_assert_str_eq(t->conf->access_key, "AK");
	ck_assert_str_eq(t->conf->secret_key, "TOPSECRET");
	ck_assert_str_eq(t->conf->sigv4, "aws:amz:eu-west-3:s3");
	ck_assert_int_eq(t->conf->timeout_s, 300);
	rz_target_free(t);
	json_decref(conf);
	free(s);

	conf = json_pack("{s:s,s:s}", "type", "local", "dir", "/var/lib/rezus/etcd-backups//");
	ck_assert_int_eq(rz_target_open(&t, conf, &err), 0);
	ck_assert_str_eq(rz_target_where(t), "file:///var/lib/rezus/etcd-backups");
	ck_assert(!exists("/var/lib/rezus/etcd-backups")); /* no I/O at open */
	rz_target_free(t);
	json_decref(conf);
}
END_TEST

/* ------------------------------------------------------------------ the local target */

static rz_target_t *local_target(void)
{
	json_t *conf = json_pack("{s:s,s:s}", "type", "local", "dir", at("target/sub"));
	rz_target_t *t = NULL;
	rz_err_t err = { 0 };

	ck_assert_int_eq(rz_target_open(&t, conf, &err), 0);
	json_decref(conf);
	return t;
}

START_TEST(test_local_round_trip)
{
	rz_target_t *t = local_target();
	rz_err_t err = { 0 };
	json_t *items = NULL;
	char a[65], b[65];
	struct stat st;

	write_pattern(at("plain"), 300000);
	ck_assert_int_eq(rz_target_put(t, "tenant-b/snap-1", at("plain"), &err), 0);
	ck_assert_int_eq(rz_target_put(t, "tenant-a/snap-2", at("plain"), &err), 0);
	ck_assert_int_eq(rz_target_put(t, "tenant-a/snap-1", at("plain"), &err), 0);
	ck_assert_int_eq(rz_target_put(t, "top", at("plain"), &err), 0);
	ck_assert_int_eq(stat(at("target/sub/tenant-a/snap-1"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(stat(at("target/sub/tenant-a"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);

	ck_assert_int_eq(rz_target_list(t, "", &items, &err), 0);
	ck_assert_int_eq(json_array_size(items), 4);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "key")),
	                 "tenant-a/snap-1");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 3), "key")),
	                 "top");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(items, 0), "size")),
	                 300000);
	ck_assert_int_gt(rz_clock_parse(json_string_value(
	                     json_object_get(json_array_get(items, 0), "modified"))),
	                 0);
	json_decref(items);
	ck_assert_int_eq(rz_target_list(t, "tenant-a/", &items, &err), 0);
	ck_assert_int_eq(json_array_size(items), 2);
	json_decref(items);
	ck_assert_int_eq(rz_target_list(t, "tenant-a/snap-2", &items, &err), 0);
	ck_assert_int_eq(json_array_size(items), 1);
	json_decref(items);
	ck_assert_int_eq(rz_target_list(t, "tenant-", &items, &err), 0);
	ck_assert_int_eq(json_array_size(items), 3);
	json_decref(items);
	ck_assert_int_eq(rz_target_list(t, "nobody/", &items, &err), 0);
	ck_assert_int_eq(json_array_size(items), 0);
	json_decref(items);

	ck_assert_int_eq(rz_target_get(t, "tenant-a/snap-2", at("back"), &err), 0);
	sha_of(at("plain"), a);
	sha_of(at("back"), b);
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(rz_target_get(t, "tenant-a/none", at("none"), &err), RZ_ENOTFOUND);
	ck_assert_ptr_eq(strstr(err.msg, "target: no object 'tenant-a/none' in file:///"), err.msg);
	ck_assert(!exists(at("none")));

	/* delete: the object, then directories it left empty; absent is fine */
	ck_assert_int_eq(rz_target_delete(t, "tenant-b/snap-1", &err), 0);
	ck_assert(!exists(at("target/sub/tenant-b")));
	ck_assert(exists(at("target/sub")));
	ck_assert_int_eq(rz_target_delete(t, "tenant-b/snap-1", &err), 0);
	ck_assert_int_eq(rz_target_delete(t, "top/x", &err), 0);
	ck_assert_int_eq(rz_target_list(t, "", &items, &err), 0);
	ck_assert_int_eq(json_array_size(items), 3);
	json_decref(items);
	/* bad keys never reach the disk */
	ck_assert_int_eq(rz_target_put(t, "../escape", at("plain"), &err), REZUS_EINVALID);
	ck_assert_int_eq(rz_target_get(t, "/etc/passwd", at("x"), &err), REZUS_EINVALID);
	ck_assert_int_eq(rz_target_list(t, "../", &items, &err), REZUS_EINVALID);
	ck_assert_int_eq(rz_target_delete(t, "a/../../b", &err), REZUS_EINVALID);
	rz_target_free(t);
}
END_TEST

START_TEST(test_local_atomic)
{
	rz_target_t *t = local_target();
	rz_err_t err = { 0 };
	json_t *items = NULL;

	write_pattern(at("plain"), 1000);
	ck_assert_int_eq(rz_target_put(t, "t/snap-1", at("plain"), &err), 0);
	/* what a put interrupted by a crash leaves, and other hidden or foreign entries */
	rzt_write_file(at("target/sub/t/.snap-2.tmp-abcdef"), "half");
	rzt_write_file(at("target/sub/.hidden"), "x");
	ck_assert_int_eq(symlink("/etc/passwd", at("target/sub/t/link")), 0);
	ck_assert_int_eq(rz_target_list(t, "", &items, &err), 0);
	ck_assert_int_eq(json_array_size(items), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "key")),
	                 "t/snap-1");
	json_decref(items);
	ck_assert_int_eq(rz_target_get(t, "t/link", at("x"), &err), -ELOOP);
	/* a failed put leaves nothing: no object, no temporary */
	ck_assert_int_eq(rz_target_put(t, "t/snap-3", at("missing"), &err), -ENOENT);
	ck_assert(!exists(at("target/sub/t/snap-3")));
	ck_assert_int_eq(hidden_in(at("target/sub/t")), 1); /* the crash's, nothing new */
	/* a put over an object replaces it whole */
	write_pattern(at("plain"), 5000);
	ck_assert_int_eq(rz_target_put(t, "t/snap-1", at("plain"), &err), 0);
	ck_assert_int_eq(rz_target_list(t, "t/", &items, &err), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(items, 0), "size")),
	                 5000);
	json_decref(items);
	rz_target_free(t);
}
END_TEST

/* ------------------------------------------------------------------ S3: URLs and XML */

START_TEST(test_s3_encode)
{
	char out[64];

	ck_assert_uint_eq(rz__s3_encode("a b/c~d", true, out, sizeof(out)), 9);
	ck_assert_str_eq(out, "a%20b/c~d");
	rz__s3_encode("a b/c~d", false, out, sizeof(out));
	ck_assert_str_eq(out, "a%20b%2Fc~d");
	rz__s3_encode("t/snap+1=@,_.-", true, out, sizeof(out));
	ck_assert_str_eq(out, "t/snap%2B1%3D%40%2C_.-");
	rz__s3_encode("\xc3\xbc\x01", false, out, sizeof(out));
	ck_assert_str_eq(out, "%C3%BC%01");
	/* too small: the length it needs, and a cut on a whole escape */
	ck_assert_uint_eq(rz__s3_encode("ab cd", false, out, 5), 7);
	ck_assert_str_eq(out, "ab");
}
END_TEST

START_TEST(test_s3_url)
{
	rz__s3_t s;
	char url[512];

	memset(&s, 0, sizeof(s));
	strcpy(s.scheme, "https");
	strcpy(s.host, "s3.example.com");
	strcpy(s.bucket, "snaps");
	strcpy(s.prefix, "rezus/");
	s.path_style = true;
	ck_assert_int_eq(rz__s3_url(&s, "t/snap+1", NULL, url, sizeof(url)), 0);
	ck_assert_str_eq(url, "https://s3.example.com/snaps/rezus/t/snap%2B1");
	ck_assert_int_eq(rz__s3_url(&s, NULL, "list-type=2", url, sizeof(url)), 0);
	ck_assert_str_eq(url, "https://s3.example.com/snaps?list-type=2");
	s.path_style = false;
	strcpy(s.port, "9000");
	ck_assert_int_eq(rz__s3_url(&s, "t/snap-1", NULL, url, sizeof(url)), 0);
	ck_assert_str_eq(url, "https://snaps.s3.example.com:9000/rezus/t/snap-1");
	ck_assert_int_eq(rz__s3_url(&s, NULL, "list-type=2", url, sizeof(url)), 0);
	ck_assert_str_eq(url, "https://snaps.s3.example.com:9000/?list-type=2");
	s.path_style = true;
	strcpy(s.host, "[::1]");
	s.prefix[0] = '\0';
	ck_assert_int_eq(rz__s3_url(&s, "k", NULL, url, sizeof(url)), 0);
	ck_assert_str_eq(url, "https://[::1]:9000/snaps/k");
	ck_assert_int_eq(rz__s3_url(&s, "k", NULL, url, 20), REZUS_ETOOBIG);
}
END_TEST

static const char page1[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>snaps</Name><Prefix>rezus/</Prefix><KeyCount>4</KeyCount><MaxKeys>1000</MaxKeys>"
    "<IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36"
    "Hy4vbOwM=</NextContinuationToken>"
    "<Contents><Key>rezus/t/snap-1</Key><LastModified>2026-12-01T04:00:00.000Z</LastModified>"
    "<ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>1234</Size>"
    "<StorageClass>STANDARD</StorageClass></Contents>"
    "<Contents><Key><![CDATA[rezus/t/snap+2]]></Key><LastModified>2026-12-02T04:00:00Z"
    "</LastModified><Size>0</Size></Contents>"
    "<Contents><Key>rezus/t/a&amp;b</Key><LastModified>2026-12-02T04:00:00Z</LastModified>"
    "<Size>5</Size></Contents>" /* not a key of ours: left out */
    "<Contents><Key>other/x</Key><LastModified>2026-12-02T04:00:00Z</LastModified>"
    "<Size>5</Size></Contents>" /* outside the prefix */
    "</ListBucketResult>";

START_TEST(test_s3_parse_list)
{
	json_t *items = json_array();
	rz_err_t err = { 0 };
	char next[RZ__S3_TOKEN_MAX + 1];
	bool more;

	ck_assert_int_eq(rz__s3_parse_list(page1, strlen(page1), "rezus/", items, &more, next,
	                                   sizeof(next), &err),
	                 0);
	ck_assert(more);
	ck_assert_str_eq(next, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
	ck_assert_int_eq(json_array_size(items), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "key")),
	                 "t/snap-1");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(items, 0), "size")),
	                 1234);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "modified")),
	                 "2026-12-01T04:00:00.000Z");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 1), "key")),
	                 "t/snap+2");
	json_decref(items);
}
END_TEST

START_TEST(test_s3_parse_list_refusals)
{
	static const struct {
		const char *xml, *want;
	} cases[] = {
		{ "<ListBucketResult><Contents><Key>a</Key>", "malformed" },
		{ "<ListBucketResult></Contents></ListBucketResult>", "malformed" },
		{ "<!DOCTYPE x [<!ENTITY e \"y\">]><ListBucketResult/>", "malformed" },
		{ "<Error><Code>x</Code></Error>", "not a ListBucketResult" },
		{ "<ListBucketResult/><ListBucketResult/>", "malformed" },
		{ "<ListBucketResult><Contents><Key>a&bogus;</Key></Contents></ListBucketResult>",
		  "malformed" },
		{ "<ListBucketResult><a><b><c><d><e><f><g><h>x</h></g></f></e></d></c></b></a>"
		  "</ListBucketResult>",
		  "malformed" },
		{ "<ListBucketResult><Contents><Size>1</Size><LastModified>2026-01-01T00:00:00Z"
		  "</LastModified></Contents></ListBucketResult>",
		  "no valid Key" },
		{ "<ListBucketResult><Contents><Key>a</Key><Size>-1</"
		  "Size><LastModified>2026-01-01T00:"
		  "00:00Z</LastModified></Contents></ListBucketResult>",
		  "no valid Size" },
		{ "<ListBucketResult><Contents><Key>a</Key><Size>1</Size><LastModified>yesterday"
		  "</LastModified></Contents></ListBucketResult>",
		  "LastModified" },
		{ "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
		  "no continuation token" },
		{ "<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>",
		  "not a boolean" },
		/* fuzz/corpus/s3xml/token-of-nuls: a token that reads as "" */
		{ "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>\x01"
		  "</NextContinuationToken></ListBucketResult>",
		  "not printable ASCII" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *items = json_array();
		rz_err_t err = { 0 };
		char next[64];
		bool more;
		int rc = rz__s3_parse_list(cases[i].xml, strlen(cases[i].xml), "", items, &more,
		                           next, sizeof(next), &err);
		ck_assert_msg(rc == RZ_EPARSE && strstr(err.msg, cases[i].want) != NULL,
		              "case %zu: %d '%s'", i, rc, err.msg);
		json_decref(items);
	}
}
END_TEST

START_TEST(test_s3_parse_error)
{
	static const char xml[] =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>"
	    "<Message>The request signature we calculated does not match &lt;x&gt;\x01</Message>"
	    "<StringToSign>AWS4-HMAC-SHA256</StringToSign></Error>";
	char code[32], msg[128];

	rz__s3_parse_error(xml, strlen(xml), code, sizeof(code), msg, sizeof(msg));
	ck_assert_str_eq(code, "SignatureDoesNotMatch");
	ck_assert_str_eq(msg, "The request signature we calculated does not match <x>?");
	rz__s3_parse_error("<html>502 Bad Gateway", 21, code, sizeof(code), msg, sizeof(msg));
	ck_assert_str_eq(code, "");
	ck_assert_str_eq(msg, "");
	rz__s3_parse_error(xml, strlen(xml), code, 6, msg, 4); /* cut to fit */
	ck_assert_str_eq(code, "Signa");
	ck_assert_str_eq(msg, "The");
}
END_TEST

/* ------------------------------------------------------------------ S3 against a server */

/* An s3 target on the fake server f (path-style unless vhost), prefix "rezus/". */
static rz_target_t *s3_target(const fakes3_t *f, long timeout)
{
	char text[1024];
	rz_target_t *t = NULL;
	rz_err_t err = { 0 };
	json_t *conf;

	rzt_write_file(at("cred"),
	               "aws_access_key_id = AKIDEXAMPLE\n"
	               "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n");
	snprintf(text, sizeof(text),
	         "{\"type\":\"s3\",\"endpoint\":\"http://127.0.0.1:%d\",\"bucket\":\"snaps\","
	         "\"prefix\":\"rezus\",\"region\":\"eu-central-1\",\"credentialsFile\":\"%s\","
	         "\"pathStyle\":true,\"timeoutSeconds\":%ld}",
	         f->port, at("cred"), timeout);
	conf = json_loads(text, 0, NULL);
	ck_assert_int_eq(rz_target_open(&t, conf, &err), 0);
	json_decref(conf);
	return t;
}

#define SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

START_TEST(test_sigv4_reference)
{
	/* AWS's example "GET Object" (Signature Version 4, header-based authentication) */
	static const char head[] =
	    "GET /test.txt HTTP/1.1\r\nHost: examplebucket.s3.amazonaws.com\r\n"
	    "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
	    "aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature="
	    "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41\r\n"
	    "Range: bytes=0-9\r\nx-amz-content-sha256: "
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\r\n"
	    "x-amz-date: 20130524T000000Z\r\n\r\n";
	char why[256];

	ck_assert_msg(
	    fakes3_sigv4_ok(head, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", why, sizeof(why)),
	    "%s", why);
	ck_assert(!fakes3_sigv4_ok(head, "another secret", why, sizeof(why)));
}
END_TEST

START_TEST(test_s3_requests_signed)
{
	static const char list1[] =
	    "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>tok/en+=1"
	    "</NextContinuationToken><Contents><Key>rezus/t/snap-2</Key><LastModified>2026-12-02T"
	    "04:00:00Z</LastModified><Size>7</Size></Contents></ListBucketResult>";
	static const char list2[] =
	    "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>rezus/t/snap-1</Key>"
	    "<LastModified>2026-12-01T04:00:00Z</LastModified><Size>3</Size></Contents>"
	    "</ListBucketResult>";
	fakes3_step_t steps[] = {
		{ 200, "" },        /* PUT */
		{ 200, "payload" }, /* GET */
		{ 200, list1 },     /* list, page 1 */
		{ 200, list2 },     /* list, page 2 */
		{ 204, "" },        /* DELETE */
	};
	fakes3_t *f = fakes3_start(steps, 5);
	rz_target_t *t = s3_target(f, 10);
	rz_err_t err = { 0 };
	json_t *items = NULL;
	char why[256], got[16];
	FILE *in;

	rzt_write_file(at("up"), "sealed bytes");
	ck_assert_int_eq(rz_target_put(t, "t/snap+1", at("up"), &err), 0);
	ck_assert_int_eq(rz_target_get(t, "t/snap-1", at("down"), &err), 0);
	in = fopen(at("down"), "r");
	got[fread(got, 1, sizeof(got) - 1, in)] = '\0';
	fclose(in);
	ck_assert_str_eq(got, "payload");
	ck_assert_int_eq(rz_target_list(t, "t/", &items, &err), 0);
	ck_assert_int_eq(rz_target_delete(t, "t/snap-1", &err), 0);
	fakes3_wait(f);

	ck_assert_int_eq(json_array_size(items), 2); /* both pages, sorted */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "key")),
	                 "t/snap-1");
	json_decref(items);
	ck_assert_str_eq(f->req[0].line, "PUT /snaps/rezus/t/snap%2B1 HTTP/1.1");
	ck_assert_str_eq(f->req[0].body, "sealed bytes");
	ck_assert_str_eq(f->req[1].line, "GET /snaps/rezus/t/snap-1 HTTP/1.1");
	/* the query in canonical order, the token encoded */
	ck_assert_str_eq(f->req[2].line,
	                 "GET /snaps?list-type=2&max-keys=1000&prefix=rezus%2Ft%2F HTTP/1.1");
	ck_assert_str_eq(f->req[3].line, "GET /snaps?continuation-token=tok%2Fen%2B%3D1&list-type=2"
	                                 "&max-keys=1000&prefix=rezus%2Ft%2F HTTP/1.1");
	ck_assert_str_eq(f->req[4].line, "DELETE /snaps/rezus/t/snap-1 HTTP/1.1");
	for (int i = 0; i < 5; i++) {
		ck_assert_msg(strstr(f->req[i].head, "x-amz-content-sha256: UNSIGNED-PAYLOAD") !=
		                  NULL,
		              "request %d", i);
		ck_assert_msg(strstr(f->req[i].head, "/eu-central-1/s3/aws4_request") != NULL,
		              "request %d", i);
		ck_assert_msg(fakes3_sigv4_ok(f->req[i].head, SECRET, why, sizeof(why)),
		              "request %d: %s", i, why);
		ck_assert_msg(strstr(f->req[i].head, SECRET) == NULL, "request %d", i);
	}
	fakes3_free(f);
	rz_target_free(t);
}
END_TEST

/* One request answered with status and body: what the call returned, and err. */
static int answered(int status, const char *body, int (*call)(rz_target_t *, rz_err_t *),
                    rz_err_t *err)
{
	fakes3_step_t step = { status, body };
	fakes3_t *f = fakes3_start(&step, 1);
	rz_target_t *t = s3_target(f, 5);
	int rc = call(t, err);

	fakes3_wait(f);
	fakes3_free(f);
	rz_target_free(t);
	return rc;
}

static int do_put(rz_target_t *t, rz_err_t *err)
{
	rzt_write_file(at("up"), "x");
	return rz_target_put(t, "t/snap-1", at("up"), err);
}
static int do_get(rz_target_t *t, rz_err_t *err)
{
	return rz_target_get(t, "t/snap-1", at("down"), err);
}
static int do_list(rz_target_t *t, rz_err_t *err)
{
	json_t *items = NULL;
	int rc = rz_target_list(t, "", &items, err);

	json_decref(items);
	return rc;
}
static int do_delete(rz_target_t *t, rz_err_t *err)
{
	return rz_target_delete(t, "t/snap-1", err);
}

#define S3ERR(code) "<Error><Code>" code "</Code><Message>m</Message></Error>"

START_TEST(test_s3_errors)
{
	rz_err_t err = { 0 };
	char *big;

	ck_assert_int_eq(answered(403, S3ERR("SignatureDoesNotMatch"), do_put, &err), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(err.msg,
	                             "s3: access denied (403 SignatureDoesNotMatch): check "
	                             "credentialsFile '"));
	ck_assert_int_eq(answered(403, S3ERR("InvalidAccessKeyId"), do_list, &err), RZ_EAUTH);
	ck_assert_ptr_nonnull(strstr(err.msg, "(403 InvalidAccessKeyId): check credentialsFile"));
	ck_assert_int_eq(answered(403, S3ERR("AccessDenied"), do_delete, &err), RZ_EAUTH);
	ck_assert_str_eq(err.msg,
	                 "s3: access denied (403 AccessDenied) to delete in bucket 'snaps': "
	                 "the credentials lack the permission");
	ck_assert_int_eq(answered(404, S3ERR("NoSuchBucket"), do_put, &err), RZ_ENOTFOUND);
	ck_assert_ptr_nonnull(
	    strstr(err.msg, "s3: bucket 'snaps' does not exist at http://127.0.0.1:"));
	ck_assert_int_eq(answered(404, S3ERR("NoSuchKey"), do_get, &err), RZ_ENOTFOUND);
	ck_assert_str_eq(err.msg, "s3: no object 't/snap-1' in s3://snaps/rezus/");
	ck_assert(!exists(at("down")));
	ck_assert_int_eq(hidden_in(dir), 0);
	ck_assert_int_eq(answered(404, S3ERR("NoSuchKey"), do_delete, &err), 0);
	ck_assert_int_eq(answered(404, S3ERR("NoSuchBucket"), do_delete, &err), RZ_ENOTFOUND);
	ck_assert_int_eq(answered(301, S3ERR("PermanentRedirect"), do_list, &err), REZUS_ECONFIG);
	ck_assert_str_eq(err.msg, "s3: bucket 'snaps' is not in region 'eu-central-1' (301 "
	                          "PermanentRedirect): set 'region'");
	ck_assert_int_eq(answered(500, S3ERR("InternalError"), do_put, &err), -EIO);
	ck_assert_str_eq(err.msg, "s3: put: HTTP 500 InternalError: m");
	/* answers are bounded: a 5 MiB listing page is refused, not read whole */
	big = malloc(5u << 20);
	memset(big, ' ', 5u << 20);
	big[(5u << 20) - 1] = '\0';
	ck_assert_int_eq(answered(200, big, do_list, &err), REZUS_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "a page of the listing is over 4194304 bytes"));
	ck_assert_int_eq(answered(500, big + (5u << 20) - 100000, do_put, &err),
	                 -EIO); /* > 64 KiB */
	free(big);
}
END_TEST

START_TEST(test_s3_unreachable)
{
	fakes3_step_t step = { FAKES3_HANG, "" };
	fakes3_t *f;
	rz_target_t *t;
	rz_err_t err = { 0 };
	int port;
	char want[128];

	/* nobody listening */
	f = fakes3_start(&step, 0);
	port = f->port;
	t = s3_target(f, 5);
	fakes3_free(f); /* closes the port */
	ck_assert_int_eq(do_list(t, &err), -ECONNREFUSED);
	snprintf(want, sizeof(want), "s3: cannot reach http://127.0.0.1:%d: Connection refused",
	         port);
	ck_assert_str_eq(err.msg, want);
	rz_target_free(t);

	/* a server whose backlog is full: the connection is never made */
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), filler[4];
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(lfd, 0), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	for (int i = 0; i < 4; i++) { /* never accepted */
		filler[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(filler[i], (struct sockaddr *)&a, sizeof(a));
	}
	usleep(100000);
	f = fakes3_start(&step, 0);
	f->port = ntohs(a.sin_port);
	t = s3_target(f, 1);
	ck_assert_int_eq(do_list(t, &err), -ETIMEDOUT);
	snprintf(want, sizeof(want),
	         "s3: cannot reach http://127.0.0.1:%d: no connection within 1 s", f->port);
	ck_assert_str_eq(err.msg, want);
	rz_target_free(t);
	fakes3_free(f);
	for (int i = 0; i < 4; i++) {
		close(filler[i]);
	}
	close(lfd);

	/* a server that never answers */
	f = fakes3_start(&step, 1);
	t = s3_target(f, 1);
	ck_assert_int_eq(do_get(t, &err), -ETIMEDOUT);
	snprintf(want, sizeof(want),
	         "s3: get timed out after 1 s (timeoutSeconds) at http://127.0.0.1:%d", f->port);
	ck_assert_str_eq(err.msg, want);
	ck_assert(!exists(at("down")));
	ck_assert_int_eq(hidden_in(dir), 0);
	fakes3_wait(f);
	fakes3_free(f);
	rz_target_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("offsite");
	TCase *seal = tcase_create("seal"), *target = tcase_create("target");
	TCase *s3 = tcase_create("s3");

	tcase_add_checked_fixture(seal, setup, teardown);
	tcase_set_timeout(seal, 60);
	tcase_add_test(seal, test_seal_round_trip);
	tcase_add_test(seal, test_seal_keyfile);
	tcase_add_test(seal, test_seal_refusals);
	tcase_add_test(seal, test_seal_wrong_key);
	tcase_add_test(seal, test_seal_rotation);
	tcase_add_test(seal, test_seal_rotation_races);
	suite_add_tcase(s, seal);
	tcase_add_checked_fixture(target, setup, teardown);
	tcase_add_test(target, test_keys);
	tcase_add_test(target, test_settings);
	tcase_add_test(target, test_settings_accepted);
	tcase_add_test(target, test_local_round_trip);
	tcase_add_test(target, test_local_atomic);
	suite_add_tcase(s, target);
	tcase_add_checked_fixture(s3, setup, teardown);
	tcase_set_timeout(s3, 60);
	tcase_add_test(s3, test_s3_encode);
	tcase_add_test(s3, test_s3_url);
	tcase_add_test(s3, test_s3_parse_list);
	tcase_add_test(s3, test_s3_parse_list_refusals);
	tcase_add_test(s3, test_s3_parse_error);
	tcase_add_test(s3, test_sigv4_reference);
	tcase_add_test(s3, test_s3_requests_signed);
	tcase_add_test(s3, test_s3_errors);
	tcase_add_test(s3, test_s3_unreachable);
	suite_add_tcase(s, s3);
	return rzt_run(s);
}
