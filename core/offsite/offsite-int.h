/*
 * core/offsite/offsite-int.h - what the files of core/offsite share: the target's struct,
 * the file helpers (files.c), the local target (local.c), the S3 settings (s3conf.c), its
 * requests (s3.c) and the parser of its XML answers (s3xml.c). No other folder includes it;
 * the unit tests and the fuzz target do, to reach the S3 pieces without a network.
 */
#ifndef RZ_OFFSITE_INT_H
#define RZ_OFFSITE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base/errors.h"
#include "core/offsite/target.h"

#define RZ__TARGET_MAGIC 0x525a5447u /* "RZTG" */

/* The longest answer read into memory: a page of a listing, or an error's XML. */
#define RZ__S3_PAGE_MAX  (4u << 20)
#define RZ__S3_ERROR_MAX 65536u
#define RZ__S3_PUT_MAX   (5ull << 30) /* S3's limit for one PUT */
#define RZ__S3_TOKEN_MAX 1024         /* a continuation token */

/* An S3 target's settings (s3conf.c), fixed once opened. */
typedef struct rz__s3 {
	char scheme[8];                     /* "https" or "http" */
	char host[256];                     /* as in the URL: a name, an IPv4 or [IPv6] */
	char port[8];                       /* "" or digits */
	char bucket[64];                    /* S3's bucket naming rules */
	char prefix[RZ_TARGET_KEY_MAX + 2]; /* "" or ending in "/" */
	char region[64];                    /* letters, digits and "-" */
	char sigv4[96];                     /* "aws:amz:REGION:s3" for CURLOPT_AWS_SIGV4 */
	char cred_file[PATH_MAX];           /* for messages: "check credentialsFile …" */
	char ca_file[PATH_MAX];             /* "" for the system's */
	char access_key[129];               /* the access key id */
	char secret_key[257];               /* wiped by rz__s3_wipe */
	bool path_style;
	long timeout_s;
} rz__s3_t;

struct rz_target {
	uint32_t magic;
	bool s3;
	char where[PATH_MAX + 16];
	char dir[PATH_MAX]; /* local */
	rz__s3_t *conf;     /* s3; sodium_malloc'd */
};

/* ---- files.c */

/* key as a key (RZ_TARGET_KEY_MAX…), or with prefix as a listing's prefix: "" allowed, a
 * trailing "/" and a partial last part too. 0 or REZUS_EINVALID, saying why. */
int rz__offsite_check_key(const char *key, bool prefix, rz_err_t *err);

/* A temporary beside path ("<dir>/.<leaf>.tmp-XXXXXX", 0600) into tmp, its fd into *fd. */
int rz__offsite_tmp(const char *path, char *tmp, size_t size, int *fd, rz_err_t *err);

/* fsync and close fd, rename tmp to path, fsync path's directory; on any failure tmp is
 * removed. what names the caller in messages ("seal", "target"). */
int rz__offsite_commit(int fd, const char *tmp, const char *path, const char *what, rz_err_t *err);

/* Close fd (when ≥ 0) and remove tmp (when not empty): a temporary given up. */
void rz__offsite_discard(int fd, const char *tmp);

/* Write all n bytes of p to fd: 0 or -errno. */
int rz__offsite_write_all(int fd, const void *p, size_t n);

/* Read up to n bytes into p, retrying short reads: the count (< n only at the end) or
 * -errno. */
ssize_t rz__offsite_read_full(int fd, void *p, size_t n);

/* fsync the directory that holds path: 0 or -errno. */
int rz__offsite_fsync_dir(const char *path);

/* ---- local.c */
int rz__local_put(rz_target_t *t, const char *key, const char *path, rz_err_t *err);
int rz__local_get(rz_target_t *t, const char *key, const char *path, rz_err_t *err);
int rz__local_list(rz_target_t *t, const char *prefix, json_t *items, rz_err_t *err);
int rz__local_delete(rz_target_t *t, const char *key, rz_err_t *err);

/* ---- s3conf.c */

/* Read conf (type "s3") into s, the credentials file included. REZUS_ECONFIG naming the
 * setting at fault. */
int rz__s3_conf(rz__s3_t *s, const json_t *conf, rz_err_t *err);

/* Wipe the credentials in s. */
void rz__s3_wipe(rz__s3_t *s);

/* in percent-encoded as SigV4 wants it (RFC 3986 unreserved bytes kept, "/" kept when
 * keep_slash, every other byte %XX in upper case) into out. Returns the length it needs
 * (without the NUL): ≥ size means out was too small (and holds a cut, NUL-terminated). */
size_t rz__s3_encode(const char *in, bool keep_slash, char *out, size_t size);

/* The URL of an object (key not NULL: the prefix is put before it) or of the bucket (key
 * NULL), with query (NULL or already canonical: sorted by name, encoded) after "?".
 * Path-style: scheme://host[:port]/bucket/prefix+key; virtual-host:
 * scheme://bucket.host[:port]/prefix+key. 0, or REZUS_ETOOBIG when it does not fit. */
int rz__s3_url(const rz__s3_t *s, const char *key, const char *query, char *buf, size_t size);

/* The endpoint as given (scheme://host[:port]), for messages. */
void rz__s3_endpoint(const rz__s3_t *s, char *buf, size_t size);

/* ---- s3.c */
int rz__s3_put(const rz__s3_t *s, const char *key, const char *path, rz_err_t *err);
int rz__s3_get(const rz__s3_t *s, const char *key, const char *path, rz_err_t *err);
int rz__s3_list(const rz__s3_t *s, const char *prefix, json_t *items, rz_err_t *err);
int rz__s3_delete(const rz__s3_t *s, const char *key, rz_err_t *err);

/* ---- s3xml.c */

/* One page of a ListObjectsV2 answer (len bytes of xml, which need not end in NUL): each
 * <Contents> whose <Key> starts with strip and is, without it, a valid key becomes
 * {"key", "size", "modified"} appended to items (other keys are left out); *truncated
 * and next (the <NextContinuationToken>, "" when none) tell whether more follow. 0, or
 * RZ_EPARSE for XML that is malformed, nested deeper than 8, or not a ListBucketResult,
 * an entry without a valid Key, Size or LastModified, a token past RZ__S3_TOKEN_MAX or
 * not printable ASCII, or
 * a truncated page without a token; REZUS_ETOOBIG past RZ_TARGET_LIST_MAX items. */
int rz__s3_parse_list(const char *xml, size_t len, const char *strip, json_t *items,
                      bool *truncated, char *next, size_t next_size, rz_err_t *err);

/* An S3 <Error>'s <Code> and <Message> from len bytes of xml into code and message (both
 * "" when absent or not parsed), reduced to printable ASCII, cut to fit. */
void rz__s3_parse_error(const char *xml, size_t len, char *code, size_t code_size, char *message,
                        size_t message_size);

#endif /* RZ_OFFSITE_INT_H */
