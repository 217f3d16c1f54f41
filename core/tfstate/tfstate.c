/* core/tfstate/tfstate.c - the TF HTTP state backend: versions sealed at rest, locks, history;
 * the outputs kept for the credentials endpoints are in core/tfstate/outputs.c. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <nettle/md5.h>
#include <sodium.h>

#include "core/model/kinds.h"
#include "core/base/log.h"
#include "core/store/events.h"
#include "core/store/store.h"
#include "core/tfstate/tfstate.h"
#include "core/tfstate/tfstate-int.h"
#include "core/http/status.h"

/* One stored version, decrypted. */
struct version {
	int64_t version, serial;
	char lineage[64], md5[40];
	unsigned char *plain;
	size_t len;
};

/* ------------------------------------------------------------------ the key */

static int load_key(rz_tfstate_t *ts, const char *path, rz_err_t *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 && errno == ENOENT) {
		randombytes_buf(ts->key, sizeof(ts->key));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, ts->key, sizeof(ts->key)) != (ssize_t)sizeof(ts->key) ||
		    fsync(fd) < 0) {
			int e = errno;
			if (fd >= 0) {
				close(fd);
			}
			return rz_err_set(err, -e, "tfstate: cannot write key '%s': %s", path,
			                  strerror(e));
		}
		close(fd);
		rz_log_info("tfstate", "generated the state encryption key '%s'", path);
		return 0;
	}
	if (fd < 0) {
		return rz_err_set(err, -errno, "tfstate: cannot read key '%s': %s", path,
		                  strerror(errno));
	}
	n = read(fd, ts->key, sizeof(ts->key));
	close(fd);
	if (n != (ssize_t)sizeof(ts->key)) {
		return rz_err_set(err, REZUS_ECONFIG, "tfstate: key '%s' must hold %zu bytes", path,
		                  sizeof(ts->key));
	}
	return 0;
}

/* Additional data binding a state version's ciphertext to its tenant and version. */
static size_t ad_for(char *ad, size_t size, const char *tenant, int64_t version)
{
	return (size_t)snprintf(ad, size, "%s\n%" PRId64, tenant, version);
}

/* Additional data binding a kept output's ciphertext to its tenant and name. */
size_t rz__tfstate_ad_output(char *ad, size_t size, const char *tenant, const char *name)
{
	return (size_t)snprintf(ad, size, "%s\noutput\n%s", tenant, name);
}

/* nonce || ciphertext || tag of plain, bound to ad; the caller frees it. */
unsigned char *rz__tfstate_seal_ad(rz_tfstate_t *ts, const char *ad, size_t adlen,
                                   const void *plain, size_t len, size_t *out_len)
{
	unsigned char *blob = malloc(NONCE + len + TAG);
	unsigned long long clen;

	if (blob == NULL) {
		return NULL;
	}
	randombytes_buf(blob, NONCE);
	crypto_aead_xchacha20poly1305_ietf_encrypt(
	    blob + NONCE, &clen, plain, len, (const unsigned char *)ad, adlen, NULL, blob, ts->key);
	*out_len = NONCE + (size_t)clen;
	return blob;
}

/* The plain text of a sealed blob (NUL-terminated, the caller frees it); NULL when it does
 * not decrypt (another key, another ad, or damaged). */
unsigned char *rz__tfstate_open_ad(rz_tfstate_t *ts, const char *ad, size_t adlen,
                                   const unsigned char *blob, size_t len, size_t *out_len)
{
	unsigned char *plain;
	unsigned long long plen;

	if (len < NONCE + TAG || (plain = malloc(len - NONCE - TAG + 1)) == NULL) {
		return NULL;
	}
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL, blob + NONCE,
	                                               len - NONCE, (const unsigned char *)ad,
	                                               adlen, blob, ts->key) != 0) {
		free(plain);
		return NULL;
	}
	plain[plen] = '\0';
	*out_len = (size_t)plen;
	return plain;
}

static unsigned char *seal(rz_tfstate_t *ts, const char *tenant, int64_t version, const void *plain,
                           size_t len, size_t *out_len)
{
	char ad[128];

	return rz__tfstate_seal_ad(ts, ad, ad_for(ad, sizeof(ad), tenant, version), plain, len,
	                           out_len);
}

unsigned char *rz__tfstate_open_version(rz_tfstate_t *ts, const char *tenant, int64_t version,
                                        const unsigned char *blob, size_t len, size_t *out_len)
{
	char ad[128];

	return rz__tfstate_open_ad(ts, ad, ad_for(ad, sizeof(ad), tenant, version), blob, len,
	                           out_len);
}

static void md5_base64(const void *data, size_t len, char out[40])
{
	struct md5_ctx ctx;
	uint8_t digest[MD5_DIGEST_SIZE];

	md5_init(&ctx);
	md5_update(&ctx, len, data);
	md5_digest(&ctx, sizeof(digest), digest);
	sodium_bin2base64(out, 40, digest, sizeof(digest), sodium_base64_VARIANT_ORIGINAL);
}

/* ------------------------------------------------------------------ storage */

/* The newest version of tenant (with: decrypted); 1 when found, 0 when none, < 0 on error.
 * v->plain is the caller's to free. */
static int current(rz_tfstate_t *ts, const char *tenant, struct version *v, bool with,
                   rz_err_t *err)
{
	static const char sql[] = "SELECT version, serial, lineage, md5, blob FROM tfstate_versions"
	                          " WHERE tenant = ?1 ORDER BY version DESC LIMIT 1";
	rz_stmt_t *s = rz_db_stmt(ts->db, sql, err);
	int rc;

	memset(v, 0, sizeof(*v));
	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, tenant);
	rc = rz_stmt_step(s, err);
	if (rc == 1) {
		size_t blen;
		const unsigned char *blob = rz_stmt_blob(s, 4, &blen);
		v->version = rz_stmt_int64(s, 0);
		v->serial = rz_stmt_is_null(s, 1) ? -1 : rz_stmt_int64(s, 1);
		snprintf(v->lineage, sizeof(v->lineage), "%s",
		         rz_stmt_text(s, 2) ? rz_stmt_text(s, 2) : "");
		snprintf(v->md5, sizeof(v->md5), "%s", rz_stmt_text(s, 3));
		if (with && (v->plain = rz__tfstate_open_version(ts, tenant, v->version, blob, blen,
		                                                 &v->len)) == NULL) {
			rc = rz_err_set(err, RZ_EDB,
			                "tfstate: version %" PRId64 " of '%s' does not "
			                "decrypt (wrong key or damaged)",
			                v->version, tenant);
		}
	}
	rz_stmt_done(s);
	return rc;
}

/* How many resource instances doc holds (the addresses `tofu state list` prints); -1 when
 * it does not say (OpenTofu-encrypted state keeps them inside encrypted_data). */
static int64_t count_instances(const json_t *doc)
{
	json_t *resources = json_object_get(doc, "resources"), *r;
	int64_t n = 0;
	size_t i;

	if (!json_is_array(resources)) {
		return -1;
	}
	json_array_foreach(resources, i, r)
	{
		json_t *instances = json_object_get(r, "instances");
		n += json_is_array(instances) ? (int64_t)json_array_size(instances) : 0;
	}
	return n;
}

struct put {
	rz_tfstate_t *ts;
	const char *tenant, *run, *md5;
	const unsigned char *body;
	size_t len;
	int64_t version, serial, resources;
	const char *lineage;
};

static int put_tx(rz_db_t *db, void *arg, rz_err_t *err)
{
	static const char ins[] = "INSERT INTO tfstate_versions (tenant, version, serial, lineage,"
	                          " md5, time, run, size, blob, resources) VALUES (?1, ?2, ?3, ?4,"
	                          " ?5, ?6, ?7, ?8, ?9, ?10)";
	static const char prune[] =
	    "DELETE FROM tfstate_versions WHERE tenant = ?1 AND version <= ?2";
	struct put *p = arg;
	size_t blen = 0;
	unsigned char *blob = seal(p->ts, p->tenant, p->version, p->body, p->len, &blen);
	char now[32];
	rz_stmt_t *s = blob ? rz_db_stmt(db, ins, err) : NULL;
	int rc;

	if (s == NULL) {
		free(blob);
		return blob ? err->code : rz_err_set(err, -ENOMEM, "tfstate: out of memory");
	}
	rz_time_now(now, sizeof(now));
	rz_stmt_bind_text(s, 1, p->tenant);
	rz_stmt_bind_int64(s, 2, p->version);
	if (p->serial >= 0) {
		rz_stmt_bind_int64(s, 3, p->serial);
	}
	rz_stmt_bind_text(s, 4, p->lineage);
	rz_stmt_bind_text(s, 5, p->md5);
	rz_stmt_bind_text(s, 6, now);
	rz_stmt_bind_text(s, 7, p->run);
	rz_stmt_bind_int64(s, 8, (int64_t)p->len);
	rz_stmt_bind_blob(s, 9, blob, blen);
	if (p->resources >= 0) {
		rz_stmt_bind_int64(s, 10, p->resources);
	}
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	free(blob);
	if (rc < 0 || (s = rz_db_stmt(db, prune, err)) == NULL) {
		return rc < 0 ? rc : err->code;
	}
	rz_stmt_bind_text(s, 1, p->tenant);
	rz_stmt_bind_int64(s, 2, p->version - p->ts->history);
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

/* Store body as the tenant's next version (nothing when it equals the current one). */
static int put(rz_tfstate_t *ts, const char *tenant, const char *run, const void *body, size_t len,
               const json_t *doc, rz_err_t *err)
{
	struct version cur;
	char md5[40];
	json_t *serial = json_object_get(doc, "serial");
	struct put p = { ts,
		         tenant,
		         run,
		         md5,
		         body,
		         len,
		         1,
		         json_is_integer(serial) ? json_integer_value(serial) : -1,
		         count_instances(doc),
		         json_string_value(json_object_get(doc, "lineage")) };
	int rc = current(ts, tenant, &cur, false, err);

	if (rc < 0) {
		return rc;
	}
	md5_base64(body, len, md5);
	if (rc == 1 && strcmp(cur.md5, md5) == 0) {
		return 0; /* a retry of the same write */
	}
	p.version = rc == 1 ? cur.version + 1 : 1;
	return rz_db_tx(ts->db, put_tx, &p, err);
}

/* ------------------------------------------------------------------ locks */

#define LOCK_ID_MAX RZ__TFSTATE_LOCK_ID_MAX

int rz__tfstate_lock_of(rz_tfstate_t *ts, const char *tenant, char *id, size_t size, char **info,
                        rz_err_t *err)
{
	rz_stmt_t *s =
	    rz_db_stmt(ts->db, "SELECT id, info FROM tfstate_locks WHERE tenant = ?1", err);
	int rc;

	if (info != NULL) {
		*info = NULL;
	}
	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, tenant);
	rc = rz_stmt_step(s, err);
	if (rc == 1) {
		snprintf(id, size, "%s", rz_stmt_text(s, 0));
		if (info != NULL) {
			*info = strdup(rz_stmt_text(s, 1));
		}
	}
	rz_stmt_done(s);
	return rc;
}

/* Take (info != NULL) or release the lock; holder is the principal taking it. */
static int lock_set(rz_tfstate_t *ts, const char *tenant, const char *id, const char *info,
                    const char *holder, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(
	    ts->db,
	    info ? "INSERT INTO tfstate_locks (tenant, id, info, holder) VALUES (?1, ?2, ?3, ?4)"
	         : "DELETE FROM tfstate_locks WHERE tenant = ?1",
	    err);
	int rc;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, tenant);
	if (info != NULL) {
		rz_stmt_bind_text(s, 2, id);
		rz_stmt_bind_text(s, 3, info);
		rz_stmt_bind_text(s, 4, holder);
	}
	rc = rz_stmt_step(s, err);
	rz_stmt_done(s);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ handlers */

void rz__tfstate_internal(rz_req_t *req, const rz_err_t *err)
{
	json_t *st = rz_status_storage(err->code); /* a full or read-only disk says so */

	rz_log_err("tfstate", "%s %s: %s", rz_req_method(req), rz_req_path(req), err->msg);
	if (st != NULL) {
		rz_reply_status(req, st);
		return;
	}
	rz_reply_error(req, 500, NULL, "internal error; see the server log");
}

/* The tenant must exist; replies 404 and returns false when it does not. */
bool rz__tfstate_tenant_exists(rz_tfstate_t *ts, rz_req_t *req, const char *tenant)
{
	json_t *t = NULL;
	rz_err_t err = { 0 };

	if (rz_store_get(ts->store, rz_kind_by_name("Tenant"), NULL, tenant, &t, &err) != 0) {
		rz_reply_error(req, 404, NULL, "tenants \"%s\" not found", tenant);
		return false;
	}
	json_decref(t);
	return true;
}

static void h_get(rz_req_t *req, void *ctx)
{
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant");
	struct version v;
	rz_err_t err = { 0 };
	int rc;

	if (!rz__tfstate_tenant_exists(ts, req, tenant)) {
		return;
	}
	rc = current(ts, tenant, &v, true, &err);
	if (rc < 0) {
		rz__tfstate_internal(req, &err);
	} else if (rc == 0) {
		rz_reply_error(req, 404, NULL, "tenant \"%s\" has no state yet", tenant);
	} else {
		rz_reply(req, 200, "application/json", v.plain, v.len);
	}
	sodium_memzero(v.plain, v.len);
	free(v.plain);
}

/* A lock ID longer than LOCK_ID_MAX is refused with 400 (true): it would not fit where the
 * held lock's ID is read back, and a retry or the UNLOCK would then not match. */
static bool id_too_long(rz_req_t *req, const char *id)
{
	if (id == NULL || strlen(id) <= LOCK_ID_MAX) {
		return false;
	}
	rz_reply_error(req, 400, NULL, "the lock info's ID is longer than %d bytes", LOCK_ID_MAX);
	return true;
}

/* Lock info as the client sent it: a JSON object with a string ID. */
static json_t *lock_info(rz_req_t *req, const char **id)
{
	size_t len;
	const char *body = rz_req_body(req, &len);
	json_t *info = len ? json_loadb(body, len, 0, NULL) : NULL;

	*id = json_string_value(json_object_get(info, "ID"));
	if (info != NULL && (*id == NULL || **id == '\0')) {
		json_decref(info);
		info = NULL;
	}
	return info;
}

static void reply_holder(rz_req_t *req, int code, const char *info)
{
	rz_reply(req, code, "application/json", info, strlen(info));
}

/* A write's empty 200 once it is durable: with store.durability full, after the sync of
 * the WAL that holds it (tofu takes a 200 for "the state is safe"); at once otherwise. A
 * failed sync answers 503, and tofu retries. */
static void written_done(void *arg, int status)
{
	rz_req_t *req = arg;

	if (status == 0) {
		rz_reply(req, 200, NULL, NULL, 0);
	} else {
		rz_reply_error(
		    req, 503, NULL,
		    "the change was committed but syncing it to the disk failed (%s): it "
		    "may be lost",
		    strerror(-status));
	}
}

static void reply_written(rz_tfstate_t *ts, rz_req_t *req)
{
	rz_db_after_durable(ts->db, written_done, req);
}

static void h_post(rz_req_t *req, void *ctx)
{
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant");
	const char *given = rz_req_header(req, "Content-MD5");
	const char *id = rz_req_query(req, "ID");
	const rz_principal_t *p = rz_access_principal(req);
	size_t len;
	const char *body = rz_req_body(req, &len);
	char md5[40], held[LOCK_ID_MAX + 1];
	char *info = NULL;
	rz_err_t err = { 0 };
	json_t *doc;
	int rc;

	if (!rz__tfstate_tenant_exists(ts, req, tenant)) {
		return;
	}
	md5_base64(body, len, md5);
	if (given != NULL && strcmp(given, md5) != 0) {
		rz_reply_error(req, 400, NULL, "Content-MD5 does not match the body");
		return;
	}
	doc = json_loadb(body, len, 0, NULL);
	if (!json_is_object(doc)) {
		json_decref(doc);
		rz_reply_error(req, 400, NULL, "the state must be a JSON object");
		return;
	}
	rc = rz__tfstate_lock_of(ts, tenant, held, sizeof(held), &info, &err);
	if (rc == 1 && (id == NULL || strcmp(id, held) != 0)) {
		reply_holder(req, 409, info); /* the lock is someone else's */
	} else if (rc < 0 || put(ts, tenant, p ? p->user : "", body, len, doc, &err) != 0) {
		rz__tfstate_internal(req, &err);
	} else {
		reply_written(ts, req);
	}
	free(info);
	json_decref(doc);
}

/* Whether someone holds tenant's lock, replying 409 when so (a state replaced under them
 * would be undone by their next write): the holder's lock info, as tofu reads it, or with
 * as_status a Status naming them. A lock that cannot be read is a 500 (and true). */
bool rz__tfstate_locked(rz_tfstate_t *ts, rz_req_t *req, const char *tenant, bool as_status)
{
	char held[LOCK_ID_MAX + 1], *info = NULL;
	rz_err_t err = { 0 };
	int rc = rz__tfstate_lock_of(ts, tenant, held, sizeof(held), &info, &err);

	if (rc < 0) {
		rz__tfstate_internal(req, &err);
	} else if (rc == 1 && !as_status) {
		reply_holder(req, 409, info);
	} else if (rc == 1) {
		json_t *li = info ? json_loads(info, 0, NULL) : NULL;
		const char *whom = json_string_value(json_object_get(li, "Who"));
		rz_reply_error(req, 409, NULL,
		               "the state of tenant \"%s\" is locked by %s (lock %s): wait for it "
		               "to be released, or force-unlock it first",
		               tenant, whom && *whom ? whom : "someone", held);
		json_decref(li);
	}
	free(info);
	return rc != 0;
}

/* Who is asking, for the history and Events: the user, "" when anonymous. */
const char *rz__tfstate_who(const rz_req_t *req)
{
	const rz_principal_t *p = rz_access_principal(req);

	return p != NULL ? p->user : "";
}

/* A current state made here rather than by tofu (an admin's DELETE, a rollback): the new
 * version, the outputs kept for the credentials endpoints and the request's audit row, in one
 * transaction. */
struct replace {
	rz_tfstate_t *ts;
	rz_req_t *req;
	const char *tenant, *who;
	const void *body;
	size_t len;
	const json_t *doc;
};

static int replace_tx(rz_db_t *db, void *arg, rz_err_t *err)
{
	struct replace *r = arg;
	int rc = put(r->ts, r->tenant, r->who, r->body, r->len, r->doc, err);

	(void)db;
	if (rc == 0) {
		rc = rz_tfstate_keep_outputs(r->ts, r->tenant, r->who, r->doc, err);
	}
	if (rc == 0 && r->ts->access != NULL) {
		rc = rz_access_audit(r->ts->access, r->req, 200, NULL, NULL, NULL, err);
	}
	return rc;
}

/* Store doc (body parsed) as tenant's current state on behalf of req, then tell the tenant
 * in an Event (type, reason, message) and the listener, so the Machines follow before the
 * reply. */
int rz__tfstate_replace(rz_tfstate_t *ts, rz_req_t *req, const char *tenant, const void *body,
                        size_t len, const json_t *doc, const char *type, const char *reason,
                        const char *message, rz_err_t *err)
{
	struct replace r = { ts, req, tenant, rz__tfstate_who(req), body, len, doc };
	int rc = rz_db_tx(ts->db, replace_tx, &r, err);

	if (rc != 0) {
		return rc;
	}
	if (ts->access != NULL) {
		rz_req_set_audited(req);
	}
	rz_events_record(ts->store, tenant, "Tenant", tenant, type, reason, message, "tfstate");
	if (ts->replaced != NULL) {
		ts->replaced(ts->replaced_arg, tenant, doc);
	}
	return 0;
}

/* The state tofu would read after a delete: no resources, no outputs, the next serial and
 * the same lineage, so it continues cur's history. NULL when cur is empty already. */
static char *emptied(const struct version *cur, const json_t *doc)
{
	json_t *resources = json_object_get(doc, "resources");
	json_t *outputs = json_object_get(doc, "outputs");
	const char *tv = json_string_value(json_object_get(doc, "terraform_version"));
	json_t *empty;
	char *text;

	if (json_is_array(resources) && json_array_size(resources) == 0 &&
	    (outputs == NULL || json_object_size(outputs) == 0)) {
		return NULL;
	}
	empty = json_pack("{s:i, s:s, s:I, s:s, s:{}, s:[], s:n}", "version", 4,
	                  "terraform_version", tv ? tv : "1.0.0", "serial",
	                  (json_int_t)(cur->serial >= 0 ? cur->serial + 1 : 1), "lineage",
	                  cur->lineage, "outputs", "resources", "check_results");
	text = empty ? json_dumps(empty, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(empty);
	return text;
}

/* DELETE (admin; tofu's http backend never sends it) empties the state without losing it:
 * a new version with nothing in it, which a rollback undoes. An empty state stays as it is. */
static void h_delete(rz_req_t *req, void *ctx)
{
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant");
	struct version cur;
	rz_err_t err = { 0 };
	json_t *doc = NULL, *next = NULL;
	char *text = NULL, msg[256];
	int rc;

	if (!rz__tfstate_tenant_exists(ts, req, tenant) ||
	    rz__tfstate_locked(ts, req, tenant, false)) {
		return;
	}
	rc = current(ts, tenant, &cur, true, &err);
	if (rc == 1) {
		doc = json_loadb((char *)cur.plain, cur.len, 0, NULL);
		text = emptied(&cur, doc);
		if (text != NULL && (next = json_loads(text, 0, NULL)) == NULL) {
			rc = rz_err_set(&err, -ENOMEM, "tfstate: out of memory");
		}
	}
	snprintf(msg, sizeof(msg),
	         "state emptied by %s (DELETE /tfstate/%s); roll back to version %" PRId64
	         " to undo",
	         rz__tfstate_who(req), tenant, cur.version);
	if (rc < 0 ||
	    (text != NULL && rz__tfstate_replace(ts, req, tenant, text, strlen(text), next,
	                                         "Warning", "StateDeleted", msg, &err) != 0)) {
		rz__tfstate_internal(req, &err);
	} else {
		reply_written(ts, req); /* or no state, or an empty one: nothing to do */
	}
	if (cur.plain != NULL) {
		sodium_memzero(cur.plain, cur.len);
		free(cur.plain);
	}
	free(text);
	json_decref(next);
	json_decref(doc);
}

static void h_lock(rz_req_t *req, void *ctx)
{
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant");
	const char *id;
	json_t *info = lock_info(req, &id);
	char held[LOCK_ID_MAX + 1], *text = NULL, *holder = NULL;
	const rz_principal_t *p = rz_access_principal(req);
	rz_err_t err = { 0 };
	int rc;

	if (!rz__tfstate_tenant_exists(ts, req, tenant)) {
		json_decref(info);
		return;
	}
	if (info == NULL) {
		rz_reply_error(req, 400, NULL, "the lock info must be a JSON object with an ID");
		return;
	}
	if (id_too_long(req, id)) {
		json_decref(info);
		return;
	}
	rc = rz__tfstate_lock_of(ts, tenant, held, sizeof(held), &holder, &err);
	if (rc == 1 && strcmp(held, id) == 0) {
		rz_reply(req, 200, NULL, NULL, 0); /* a retry of our own lock */
	} else if (rc == 1) {
		reply_holder(req, 423, holder);
	} else if (rc < 0 || (text = json_dumps(info, JSON_COMPACT)) == NULL ||
	           lock_set(ts, tenant, id, text, p ? p->user : "", &err) != 0) {
		rz__tfstate_internal(req, &err);
	} else {
		reply_written(ts, req);
	}
	free(text);
	free(holder);
	json_decref(info);
}

/* UNLOCK with the holder's info releases; with an empty body it is an admin's force-unlock,
 * audited as such. */
static void h_unlock(rz_req_t *req, void *ctx)
{
	rz_tfstate_t *ts = ctx;
	const char *tenant = rz_req_param(req, "tenant");
	const rz_principal_t *p = rz_access_principal(req);
	size_t len;
	const char *id;
	json_t *info;
	char held[LOCK_ID_MAX + 1], *holder = NULL;
	rz_err_t err = { 0 };
	int rc;

	if (!rz__tfstate_tenant_exists(ts, req, tenant)) {
		return;
	}
	rz_req_body(req, &len);
	info = lock_info(req, &id);
	if (len == 0 && (p == NULL || p->role < RZ_ROLE_ADMIN || p->tenant_scope[0] != '\0')) {
		rz_reply_error(req, 403, "Forbidden",
		               "a force-unlock (UNLOCK without lock info) needs "
		               "the admin role");
		return;
	}
	if (len > 0 && info == NULL) {
		rz_reply_error(req, 400, NULL, "the lock info must be a JSON object with an ID");
		return;
	}
	if (id_too_long(req, id)) {
		json_decref(info);
		return;
	}
	rc = rz__tfstate_lock_of(ts, tenant, held, sizeof(held), &holder, &err);
	if (rc == 1 && len > 0 && strcmp(held, id) != 0) {
		reply_holder(req, 409, holder);
	} else if (rc < 0 || (rc == 1 && lock_set(ts, tenant, held, NULL, NULL, &err) != 0)) {
		rz__tfstate_internal(req, &err);
	} else {
		if (len == 0 &&
		    rz_access_audit(ts->access, req, 200, NULL, NULL, "force-unlock", &err) == 0) {
			rz_req_set_audited(req);
		}
		reply_written(ts, req);
	}
	free(holder);
	json_decref(info);
}

int rz_tfstate_release_run_locks(rz_tfstate_t *ts, bool (*keep)(void *arg, const char *run),
                                 void *arg, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(ts->db,
	                          "SELECT tenant, holder FROM tfstate_locks WHERE holder LIKE "
	                          "'run/%'",
	                          err);
	json_t *held = json_array(), *h;
	size_t i;
	int rc, n = 0;

	if (s == NULL || held == NULL) {
		json_decref(held);
		return s == NULL ? err->code : -ENOMEM;
	}
	while ((rc = rz_stmt_step(s, err)) == 1) {
		const char *holder = rz_stmt_text(s, 1);
		if (keep == NULL || !keep(arg, holder + 4)) {
			json_array_append_new(held,
			                      json_pack("[s, s]", rz_stmt_text(s, 0), holder));
		}
	}
	rz_stmt_done(s);
	json_array_foreach(held, i, h)
	{
		if (rc < 0 || (s = rz_db_stmt(ts->db,
		                              "DELETE FROM tfstate_locks WHERE tenant = ?1 AND "
		                              "holder = ?2",
		                              err)) == NULL) {
			rc = rc < 0 ? rc : err->code;
			break;
		}
		rz_stmt_bind_text(s, 1, json_string_value(json_array_get(h, 0)));
		rz_stmt_bind_text(s, 2, json_string_value(json_array_get(h, 1)));
		rc = rz_stmt_step(s, err);
		rz_stmt_done(s);
		if (rc >= 0) {
			rz_logkv(RZ_LOG_WARNING, "tfstate",
			         "released a lock an interrupted run held", "tenant",
			         json_string_value(json_array_get(h, 0)), "holder",
			         json_string_value(json_array_get(h, 1)), NULL);
			n++;
		}
	}
	json_decref(held);
	return rc < 0 ? rc : n;
}

int rz_tfstate_release_run_lock(rz_tfstate_t *ts, const char *run, rz_err_t *err)
{
	rz_stmt_t *s = rz_db_stmt(ts->db,
	                          "DELETE FROM tfstate_locks WHERE holder = 'run/' || ?1 "
	                          "RETURNING tenant",
	                          err);
	int rc, n = 0;

	if (s == NULL) {
		return err->code;
	}
	rz_stmt_bind_text(s, 1, run);
	while ((rc = rz_stmt_step(s, err)) == 1) {
		rz_logkv(RZ_LOG_WARNING, "tfstate",
		         "released the lock of a run whose runner was lost", "tenant",
		         rz_stmt_text(s, 0), "run", run, NULL);
		n++;
	}
	rz_stmt_done(s);
	return rc < 0 ? rc : n;
}

/* ------------------------------------------------------------------ module */

int rz_tfstate_get(rz_tfstate_t *ts, const char *tenant, json_t **state, rz_err_t *err)
{
	struct version v;
	int rc = current(ts, tenant, &v, true, err);

	*state = NULL;
	if (rc == 1) {
		*state = json_loadb((char *)v.plain, v.len, 0, NULL);
		sodium_memzero(v.plain, v.len);
		free(v.plain);
		rc = *state ? 0 : rz_err_set(err, RZ_EPARSE, "tfstate: the state is not JSON");
	} else if (rc == 0) {
		rc = rz_err_set(err, RZ_ENOTFOUND, "tenant \"%s\" has no state", tenant);
	}
	return rc;
}

int rz_tfstate_new(rz_tfstate_t **out, rz_db_t *db, rz_store_t *store, rz_access_t *access,
                   const char *key_path, int history, rz_err_t *err)
{
	rz_tfstate_t *ts;
	int rc;

	*out = NULL;
	if (sodium_init() < 0 || (ts = calloc(1, sizeof(*ts))) == NULL) {
		return rz_err_set(err, -ENOMEM, "tfstate: cannot initialise");
	}
	ts->db = db;
	ts->store = store;
	ts->access = access;
	ts->history = history > 0 ? history : 1;
	rc = load_key(ts, key_path, err);
	if (rc != 0) {
		rz_tfstate_free(ts);
		return rc;
	}
	*out = ts;
	return 0;
}

void rz_tfstate_on_replaced(rz_tfstate_t *ts, rz_tfstate_replaced_fn fn, void *arg)
{
	if (ts != NULL) {
		ts->replaced = fn;
		ts->replaced_arg = arg;
	}
}

void rz_tfstate_free(rz_tfstate_t *ts)
{
	if (ts != NULL) {
		sodium_memzero(ts->key, sizeof(ts->key));
		free(ts);
	}
}

/* For the OpenAPI document (core/api/openapi.c). */
#define LOCK_SCHEMA                                                                                \
	"{\"type\":\"object\",\"description\":\"tofu's lock info\","                               \
	"\"properties\":{\"ID\":{\"type\":\"string\",\"description\":\"The lock's id,"             \
	" which an unlock must name\"},\"Operation\":{\"type\":\"string\","                        \
	"\"description\":\"What tofu was doing, e.g. OperationTypeApply\"},"                       \
	"\"Who\":{\"type\":\"string\",\"description\":\"Who holds the lock: "                      \
	"user@host of the tofu process\"},\"Version\":{\"type\":\"string\","                       \
	"\"description\":\"The tofu version that took it\"},"                                      \
	"\"Created\":{\"type\":\"string\",\"description\":\"When the lock was taken "              \
	"(RFC 3339)\"},\"Path\":{\"type\":\"string\",\"description\":\"The state's "               \
	"path (empty for the http backend)\"},\"Info\":{\"type\":\"string\","                      \
	"\"description\":\"Anything else tofu said\"}},\"additionalProperties\":true}"
static const int get_errors[] = { 404, 0 }, post_errors[] = { 400, 404, 0 },
                 delete_errors[] = { 404, 409, 0 }, lock_errors[] = { 400, 404, 0 },
                 unlock_errors[] = { 400, 404, 0 }, rollback_errors[] = { 404, 409, 422, 0 },
                 creds_errors[] = { 404, 409, 0 };
static const rz_route_param_t post_query[] = {
	{ "ID", "string", "the lock the writer holds" },
	{ NULL, NULL, NULL },
};
static const rz_route_doc_t tfstate_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "getTFState",
	  .summary = "the TF http backend: the tenant's current state",
	  .response = "Object",
	  .errors = get_errors },
	{ .method = RZ_M_POST,
	  .id = "writeTFState",
	  .summary = "the TF http backend: store a new state version",
	  .query = post_query,
	  .request = "Object",
	  .errors = post_errors,
	  .other_code = 409,
	  .other = LOCK_SCHEMA },
	{ .method = RZ_M_DELETE,
	  .id = "deleteTFState",
	  .summary = "empty the state, as a new version (history kept)",
	  .errors = delete_errors },
	{ .method = RZ_M_LOCK,
	  .id = "lockTFState",
	  .summary = "the TF http backend: take the state's lock",
	  .request = LOCK_SCHEMA,
	  .errors = lock_errors,
	  .other_code = 423,
	  .other = LOCK_SCHEMA },
	{ .method = RZ_M_UNLOCK,
	  .id = "unlockTFState",
	  .summary = "the TF http backend: release the lock (no body: force-unlock, admin)",
	  .request = LOCK_SCHEMA,
	  .errors = unlock_errors,
	  .other_code = 409,
	  .other = LOCK_SCHEMA },
	{ 0 },
};
static const rz_route_doc_t history_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "listStateVersions",
	  .summary = "the tenant's state versions, newest first",
	  .response = "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\","
	              "\"description\":\"rezuscloud.io/v1\"},\"kind\":{\"type\":\"string\","
	              "\"description\":\"StateVersionList\"},\"tenant\":{\"type\":\"string\","
	              "\"description\":\"The tenant\"},\"items\":{\"type\":\"array\","
	              "\"items\":{\"type\":\"object\","
	              "\"properties\":{\"version\":{\"type\":\"integer\",\"description\":\"The "
	              "version's number (what a rollback names)\"},"
	              "\"serial\":{\"type\":\"integer\",\"description\":\"The state's serial in "
	              "it\"},\"lineage\":{\"type\":\"string\",\"description\":\"The state's "
	              "lineage (the same for every version of one state)\"},"
	              "\"time\":{\"type\":\"string\",\"description\":\"When it was written (RFC "
	              "3339, UTC)\"},\"run\":{\"type\":\"string\",\"description\":\"The run that "
	              "wrote it\"},\"size\":{\"type\":\"integer\",\"description\":\"Its size, in "
	              "bytes\"},\"resources\":{\"type\":\"integer\",\"description\":\"How many "
	              "resources it holds\"},\"current\":{\"type\":\"boolean\","
	              "\"description\":\"Whether it is the current version\"}}},"
	              "\"description\":\"The tenant's TF state versions, newest first\"},"
	              "\"lock\":{\"type\":\"object\",\"description\":\"The lock held on the "
	              "state, absent when it is free (an admin's force-unlock: UNLOCK "
	              "/tfstate/{tenant} without a body)\",\"properties\":{\"id\":{\"type\":"
	              "\"string\",\"description\":\"The lock's ID\"},\"who\":{\"type\":"
	              "\"string\",\"description\":\"Who holds it, as tofu says: user@host\"},"
	              "\"operation\":{\"type\":\"string\",\"description\":\"What the holder is "
	              "doing, as OperationTypeApply\"},\"created\":{\"type\":\"string\","
	              "\"description\":\"When it was taken (RFC 3339)\"}}}}}",
	  .errors = get_errors },
	{ 0 },
};
static const rz_route_doc_t version_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readStateVersion",
	  .summary = "one state version, as tofu wrote it (admin, audited: it holds secrets)",
	  .response = "Object",
	  .errors = get_errors },
	{ 0 },
};
static const rz_route_doc_t rollback_doc[] = {
	{ .method = RZ_M_POST,
	  .id = "rollbackState",
	  .summary = "make an old state version current again, as a new version",
	  .request = "{\"type\":\"object\",\"required\":[\"version\"],\"properties\":{"
	             "\"version\":{\"type\":\"integer\",\"minimum\":1,"
	             "\"description\":\"The state version to make current again (a copy of it "
	             "becomes the newest)\"}}}",
	  .response = "Status",
	  .errors = rollback_errors },
	{ 0 },
};
static const rz_route_doc_t kubeconfig_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readTenantKubeconfig",
	  .summary = "the cluster's kubeconfig (audited; 409 before an apply produced it)",
	  .response = "{\"type\":\"string\"}",
	  .response_type = "application/yaml",
	  .errors = creds_errors },
	{ 0 },
};
static const rz_route_doc_t talosconfig_doc[] = {
	{ .method = RZ_M_GET,
	  .id = "readTenantTalosconfig",
	  .summary = "the cluster's talosconfig (audited; 409 before an apply produced it)",
	  .response = "{\"type\":\"string\"}",
	  .response_type = "application/yaml",
	  .errors = creds_errors },
	{ 0 },
};

/* The backend's routes: tofu's http backend at /tfstate, the history and rollback, and the
 * credentials downloads, which are the Tenant's (a run's own credentials never reach them)
 * and audited at every call. Registered with the backend as ctx. */
static const rz_route_t tfstate_routes[] = {
	{ .methods = RZ_M_GET,
	  .pattern = "/tfstate/{tenant}",
	  .fn = h_get,
	  .role = RZ_ROLE_EDIT,
	  .kind = "TFState",
	  .verb = "get-state",
	  .basic_auth = true, /* /tfstate: tofu sends basic auth */
	  .doc = tfstate_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/tfstate/{tenant}",
	  .fn = h_post,
	  .role = RZ_ROLE_EDIT,
	  .kind = "TFState",
	  .verb = "write-state",
	  .basic_auth = true, /* /tfstate: tofu sends basic auth */
	  .doc = tfstate_doc },
	{ .methods = RZ_M_DELETE,
	  .pattern = "/tfstate/{tenant}",
	  .fn = h_delete,
	  .role = RZ_ROLE_ADMIN,
	  .kind = "TFState",
	  .verb = "delete-state",
	  .basic_auth = true, /* /tfstate: tofu sends basic auth */
	  .doc = tfstate_doc },
	{ .methods = RZ_M_LOCK,
	  .pattern = "/tfstate/{tenant}",
	  .fn = h_lock,
	  .role = RZ_ROLE_EDIT,
	  .kind = "TFState",
	  .verb = "lock",
	  .basic_auth = true, /* /tfstate: tofu sends basic auth */
	  .doc = tfstate_doc },
	{ .methods = RZ_M_UNLOCK,
	  .pattern = "/tfstate/{tenant}",
	  .fn = h_unlock,
	  .role = RZ_ROLE_EDIT,
	  .kind = "TFState",
	  .verb = "unlock",
	  .basic_auth = true, /* /tfstate: tofu sends basic auth */
	  .doc = tfstate_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/tenants/{tenant}/state",
	  .fn = rz__tfstate_h_history,
	  .role = RZ_ROLE_VIEW,
	  .kind = "TFState",
	  .verb = "list",
	  .doc = history_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/tenants/{tenant}/state/{version}",
	  .fn = rz__tfstate_h_version,
	  .role = RZ_ROLE_ADMIN,
	  .kind = "TFState",
	  .verb = "get-version",
	  .audit = true,
	  .doc = version_doc },
	{ .methods = RZ_M_POST,
	  .pattern = "/api/v1/tenants/{tenant}/state/rollback",
	  .fn = rz__tfstate_h_rollback,
	  .role = RZ_ROLE_ADMIN,
	  .kind = "TFState",
	  .verb = "rollback",
	  .doc = rollback_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/tenants/{tenant}/kubeconfig",
	  .fn = rz__tfstate_h_kubeconfig,
	  .role = RZ_ROLE_EDIT,
	  .kind = "Tenant",
	  .verb = "download-credentials",
	  .audit = true,
	  .doc = kubeconfig_doc },
	{ .methods = RZ_M_GET,
	  .pattern = "/api/v1/tenants/{tenant}/talosconfig",
	  .fn = rz__tfstate_h_talosconfig,
	  .role = RZ_ROLE_EDIT,
	  .kind = "Tenant",
	  .verb = "download-credentials",
	  .audit = true,
	  .doc = talosconfig_doc },
};

int rz_tfstate_routes(rz_tfstate_t *ts, rz_http_t *http, rz_err_t *err)
{
	return rz_http_add_table(http, RZ_ROUTES(tfstate_routes), ts, err);
}
