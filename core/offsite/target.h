/*
 * core/offsite/target.h - where snapshots are kept off the host (docs/backups.md,
 * "Targets"): a local directory, or a bucket of an S3-compatible object store reached with
 * libcurl and signed with its SigV4. A target stores files under keys and knows nothing of
 * what they hold: callers seal them first (core/offsite/seal.h), so nothing leaves the host
 * in clear.
 *
 * Every call but rz_target_where blocks (files, the network): run them on a worker thread,
 * never on the event loop. A target does not change after rz_target_open, so several
 * threads may use one at once.
 *
 * Keys name objects under the target's own place (its dir, or its bucket and prefix):
 * 1 to RZ_TARGET_KEY_MAX bytes of letters, digits and "._-+=@,", in at most
 * RZ_TARGET_KEY_PARTS parts separated by single "/", none empty, none starting with "."
 * (so no ".." and no leading "/"), each at most 255 bytes.
 */
#ifndef RZ_TARGET_H
#define RZ_TARGET_H

#include <jansson.h>

#include "core/base/errors.h"

#define RZ_TARGET_KEY_MAX   512   /* bytes of a key */
#define RZ_TARGET_KEY_PARTS 16    /* "/"-separated parts of a key */
#define RZ_TARGET_LIST_MAX  10000 /* items a listing returns at most */

typedef struct rz_target rz_target_t;

/* Open the target conf describes (borrowed — valid until the call returns):
 *   {"type": "local", "dir": "/var/lib/rezus/etcd-backups"}
 *   {"type": "s3", "endpoint": "https://s3.example.com", "bucket": "b", "prefix": "rezus/",
 *    "region": "us-east-1", "credentialsFile": "/etc/rezus/s3.credentials",
 *    "pathStyle": true, "timeoutSeconds": 300, "caFile": "/etc/rezus/s3-ca.pem"}
 * Only type, dir (local), endpoint, bucket and credentialsFile (s3) are required: prefix
 * defaults to "" (a "/" is added to one without), region to us-east-1, pathStyle to false
 * (virtual-host: https://BUCKET.ENDPOINT/KEY), timeoutSeconds to 300 (1 to 86400; for a
 * whole transfer; connecting gets at most 10 s of it), caFile to the system's CAs.
 * The credentials file holds "aws_access_key_id = ..." and "aws_secret_access_key = ..."
 * lines ("#" comments, blank lines and one "[section]" line allowed: an AWS credentials
 * file with one profile); readable by its owner (and group) only. Reads nothing but that
 * file: the directory is created by the first put, the endpoint is not contacted.
 * A setting that is wrong is REZUS_ECONFIG with a message naming it; the secret key never
 * appears in a message. *out: caller owns the result; release with rz_target_free(). */
int rz_target_open(rz_target_t **out, const json_t *conf, rz_err_t *err);

/* Release t (NULL is fine), wiping the credentials it holds. */
void rz_target_free(rz_target_t *t);

/* Where t stores, for messages and status fields: "file:///var/lib/rezus/etcd-backups" or
 * "s3://bucket/prefix/" (never a credential). Borrowed — valid until rz_target_free(t). */
const char *rz_target_where(const rz_target_t *t);

/* 0 when key is a valid key (above), else REZUS_EINVALID with a message saying why. */
int rz_target_check_key(const char *key, rz_err_t *err);

/* Store the file at path (borrowed) as key, replacing an object of that key. A reader
 * never sees a half-written object: local, a hidden temporary in the same directory,
 * fsynced, renamed, the directory fsynced (objects are 0600, directories 0700); S3, one
 * PUT (at most 5 GiB), which the store applies whole or not at all. On failure nothing
 * new is listed. */
int rz_target_put(rz_target_t *t, const char *key, const char *path, rz_err_t *err);

/* Fetch key into path (borrowed): written to a temporary beside path (0600), fsynced and
 * renamed only once whole. RZ_ENOTFOUND when there is no such object. */
int rz_target_get(rz_target_t *t, const char *key, const char *path, rz_err_t *err);

/* The objects whose keys start with prefix ("" for all; a prefix is a key's start, so
 * "tenant-a/" or "tenant-a/snap-2026"), sorted by key: an array of {"key", "size"
 * (bytes), "modified" (RFC 3339, UTC, milliseconds)}. Bounded: more than
 * RZ_TARGET_LIST_MAX objects is REZUS_ETOOBIG (narrow the prefix, or prune); S3 lists with
 * ListObjectsV2 in pages of 1000 keys, following the continuation token, each page's
 * answer at most 4 MiB. Objects whose names are not valid keys (another tool's, a local
 * temporary) are left out. *items: caller owns the result; release with json_decref(). */
int rz_target_list(rz_target_t *t, const char *prefix, json_t **items, rz_err_t *err);

/* Delete key; an absent object is not an error. Locally, directories left empty by it
 * are removed up to the target's dir. */
int rz_target_delete(rz_target_t *t, const char *key, rz_err_t *err);

#endif /* RZ_TARGET_H */
