/* core/offline.c - rezuscloud backup verify, restore, etcd-key rotate, admin reset-password:
 * what runs without the daemon. */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "core/base/config.h"
#include "core/auth/session.h"
#include "core/base/log.h"
#include "core/daemon.h"
#include "core/offline.h"
#include "core/offsite/seal.h"
#include "core/store/backup.h"
#include "core/store/db.h"
#include "core/store/bus.h"
#include "core/store/restore.h"
#include "core/store/store.h"

#define DB_FILE  "rezus.db"
#define KEY_FILE "state.key"

typedef struct restore_opts {
	const char *file, *config, *data_dir, *passphrase_file;
	bool dry_run;
	unsigned flags; /* RZ_RESTORE_UNKEYED */
} restore_opts_t;

static int fail(const char *mode, const char *msg)
{
	fprintf(stderr, "rezuscloud %s: %s\n", mode, msg);
	return RZ_EXIT_FAILURE;
}

static int usage_error(const char *mode, const char *msg)
{
	fprintf(stderr, "rezuscloud %s: %s (see rezuscloud %s --help)\n", mode, msg, mode);
	return RZ_EXIT_USAGE;
}

static void usage(void)
{
	printf("Usage: rezuscloud backup verify FILE [--passphrase-file F] [--unkeyed] [-c CONF]\n"
	       "       rezuscloud restore FILE [--dry-run] [--data-dir DIR] [--passphrase-file F]\n"
	       "                          [--unkeyed] [-c CONF]\n"
	       "\n"
	       "backup verify reads every byte of a backup and makes every check restore makes\n"
	       "before it would write: the checksum (keyed with the passphrase when the backup\n"
	       "was made with one), the key line, the database unpacked and checked by SQLite,\n"
	       "its schema against this rezuscloud's; then says what it holds.\n"
	       "\n"
	       "restore puts a backup's database (objects, users, audit log, every TF state\n"
	       "version and sealed output) into the data dir, keeping the database it replaces\n"
	       "as rezus.db.pre-restore-TIME. No daemon may hold the data dir. The state key\n"
	       "comes back when the backup holds it sealed and the passphrase is given;\n"
	       "otherwise copy it into DIR/state.key, as restore says.\n"
	       "\n"
	       "  -c, --config FILE          read the data dir and backup.passphrase_file from\n"
	       "                             FILE (default %s, else the embedded\n"
	       "                             default)\n"
	       "      --data-dir DIR         restore into DIR, overriding server.data_dir\n"
	       "      --passphrase-file F    check the keyed checksum and unseal the state key\n"
	       "                             with F's first line, overriding\n"
	       "                             backup.passphrase_file\n"
	       "      --unkeyed              with a passphrase, accept a backup whose checksum\n"
	       "                             is not keyed (made without one, or by an older\n"
	       "                             rezuscloud): anyone could have written it\n"
	       "      --dry-run              change nothing: say what would change\n"
	       "  -h, --help                 show this help and exit\n"
	       "\n"
	       "Exit status: 0 on success, 1 when the backup is refused or the restore fails,\n"
	       "2 for a bad command line or configuration. See docs/backups.md.\n",
	       RZ_CONFIG_DEFAULT_PATH);
}

/* ------------------------------------------------------------------ what a backup holds */

static int64_t jint(const json_t *o, const char *member)
{
	return (int64_t)json_integer_value(json_object_get(o, member));
}

static const char *jstr(const json_t *o, const char *member)
{
	const char *s = json_string_value(json_object_get(o, member));

	return s != NULL ? s : "";
}

static void print_summary(const json_t *m)
{
	const json_t *objects = json_object_get(m, "objects"),
	             *key = json_object_get(m, "stateKey");
	const char *kind;
	json_t *n;
	int64_t total = 0;
	bool first = true;

	printf("backup %s, taken %s (%s) by rezuscloud %s\n", jstr(m, "name"), jstr(m, "createdAt"),
	       jstr(m, "trigger"), jstr(m, "rezuscloudVersion"));
	printf("schema version %lld, revision %lld\n", (long long)jint(m, "schemaVersion"),
	       (long long)jint(m, "revision"));
	printf("objects:");
	json_object_foreach((json_t *)objects, kind, n)
	{
		printf("%s %s %lld", first ? "" : ",", kind, (long long)json_integer_value(n));
		total += json_integer_value(n);
		first = false;
	}
	printf("%s (%lld in all)\n", first ? " none" : "", (long long)total);
	printf("state versions: %lld of %lld tenant(s); sealed outputs: %lld; users: %lld\n",
	       (long long)jint(m, "stateVersions"), (long long)jint(m, "stateTenants"),
	       (long long)jint(m, "sealedOutputs"), (long long)jint(m, "users"));
	if (json_is_true(json_object_get(key, "included"))) {
		printf("state key: included, sealed with a passphrase (fingerprint %s)\n",
		       jstr(key, "fingerprint"));
	} else if (json_string_value(json_object_get(key, "fingerprint")) != NULL) {
		printf("state key: not included; keep data_dir/state.key (fingerprint %s) with "
		       "the backup: the TF states cannot be read without it\n",
		       jstr(key, "fingerprint"));
	} else {
		printf("state key: none (no TF state had been stored)\n");
	}
}

/* ------------------------------------------------------------------ restore */

enum { OPT_DATA_DIR = 256, OPT_PASSPHRASE, OPT_DRY_RUN, OPT_UNKEYED };

/* The options of restore (mode "restore", from argv[2]) or of backup verify (mode "backup",
 * from argv[3]: verify takes neither --data-dir nor --dry-run). */
static int parse_restore(const char *mode, int argc, char **argv, restore_opts_t *o, bool *help)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "data-dir", required_argument, NULL, OPT_DATA_DIR },
		{ "passphrase-file", required_argument, NULL, OPT_PASSPHRASE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "unkeyed", no_argument, NULL, OPT_UNKEYED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool verify = strcmp(mode, "backup") == 0;
	char msg[300];
	int opt;

	opterr = 0;
	optind = verify ? 3 : 2;
	while ((opt = getopt_long(argc, argv, ":c:h", longs, NULL)) != -1) {
		switch (opt) {
		case 'c':
			o->config = optarg;
			break;
		case OPT_DATA_DIR:
			o->data_dir = optarg;
			break;
		case OPT_PASSPHRASE:
			o->passphrase_file = optarg;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_UNKEYED:
			o->flags |= RZ_RESTORE_UNKEYED;
			break;
		case 'h':
			*help = true;
			return 0;
		case ':':
			snprintf(msg, sizeof(msg), "option '%s' needs a value", argv[optind - 1]);
			return usage_error(mode, msg);
		default:
			snprintf(msg, sizeof(msg), "unknown option '%s'", argv[optind - 1]);
			return usage_error(mode, msg);
		}
	}
	if (verify && (o->data_dir != NULL || o->dry_run)) {
		return usage_error(mode, "backup verify changes nothing: it takes no --data-dir or "
		                         "--dry-run");
	}
	if (optind != argc - 1) {
		return usage_error(mode, optind >= argc ? "name the backup FILE"
		                                        : "give one backup FILE");
	}
	o->file = argv[optind];
	return 0;
}

/* The configuration's data dir and passphrase file, flags over them. */
static int configure(restore_opts_t *o, char *const *envp, rz_config_t *cfg, rz_err_t *err)
{
	int rc = rz_daemon_load_config(o->config, envp, cfg, err);

	if (rc == 0 && o->data_dir != NULL) {
		rc = rz_config_set(cfg, "server.data_dir", o->data_dir, "--data-dir", err) == 0
		         ? 0
		         : RZ_EXIT_USAGE;
	}
	if (rc == 0 && rz_config_validate(cfg, err) != 0) {
		rc = RZ_EXIT_USAGE;
	}
	if (rc == 0 && o->passphrase_file == NULL && cfg->backup_passphrase_file[0] != '\0') {
		o->passphrase_file = cfg->backup_passphrase_file;
	}
	o->data_dir = cfg->data_dir;
	return rc;
}

/* Options, configuration and passphrase of restore or backup verify (mode as in
 * parse_restore): 0 with *done false to go on (pass holds the passphrase when a file names
 * one; the caller wipes it), else the exit status with *done true (help shown, or a usage
 * error said). */
static int setup(const char *mode, int argc, char **argv, char *const *envp, restore_opts_t *o,
                 rz_config_t *cfg, char *pass, size_t size, bool *done, rz_err_t *err)
{
	bool help = false;
	int rc = parse_restore(mode, argc, argv, o, &help);

	*done = rc != 0 || help;
	if (*done) {
		if (help) {
			usage();
		}
		return rc;
	}
	if (configure(o, envp, cfg, err) != 0) {
		*done = true;
		return usage_error(mode, err->msg);
	}
	return o->passphrase_file != NULL
	           ? rz_backup_passphrase(o->passphrase_file, pass, size, err)
	           : 0;
}

/* Every check a restore makes before it writes: the backup read whole, its database
 * unpacked into a new file in dir (NULL: $TMPDIR, else /tmp), whose path goes to tmp, and
 * checked by SQLite. On error the file is gone; else the caller removes it. */
static int unpack(const restore_opts_t *o, const char *pass, const char *dir, char *tmp,
                  size_t size, rz_restore_contents_t *c, rz_err_t *err)
{
	const char *t = getenv("TMPDIR");
	int fd, rc;

	snprintf(tmp, size, "%s/%s",
	         dir != NULL       ? dir
	         : t != NULL && *t ? t
	                           : "/tmp",
	         dir != NULL ? ".restore-XXXXXX" : "rezus-restore-XXXXXX");
	if ((fd = mkstemp(tmp)) < 0) {
		return rz_err_set(err, -errno, "cannot create '%s': %s", tmp, strerror(errno));
	}
	close(fd);
	rc = rz_restore_read(o->file, tmp, pass, o->flags, c, err);
	rc = rc == 0 ? rz_restore_check_db(tmp, err) : rc;
	if (rc != 0) {
		unlink(tmp);
	}
	return rc;
}

/* backup verify: unpack's checks, the database removed again. */
static int verify(int argc, char **argv, char *const *envp)
{
	restore_opts_t o = { 0 };
	rz_restore_contents_t c = { 0 };
	rz_config_t cfg = { 0 };
	rz_err_t err = { 0 };
	char pass[1100], tmp[PATH_MAX];
	bool done;
	int rc;

	if (argc >= 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
		usage();
		return RZ_EXIT_OK;
	}
	if (argc < 3 || strcmp(argv[2], "verify") != 0) {
		return usage_error("backup", "usage: rezuscloud backup verify FILE");
	}
	rc = setup("backup", argc, argv, envp, &o, &cfg, pass, sizeof(pass), &done, &err);
	if (!done && rc == 0 &&
	    (rc = unpack(&o, o.passphrase_file != NULL ? pass : NULL, NULL, tmp, sizeof(tmp), &c,
	                 &err)) == 0) {
		unlink(tmp);
	}
	sodium_memzero(pass, sizeof(pass));
	sodium_memzero(c.key, sizeof(c.key));
	rz_config_free(&cfg);
	if (done) {
		return rc;
	}
	if (rc != 0) {
		json_decref(c.manifest);
		return fail("backup verify", err.msg);
	}
	printf("%s: intact (%s checksum, database and schema checked)\n", o.file,
	       jint(c.manifest, "format") == RZ_BACKUP_FORMAT ? "keyed" : "unkeyed");
	print_summary(c.manifest);
	json_decref(c.manifest);
	return RZ_EXIT_OK;
}

static void stamp(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y%m%dT%H%M%SZ", &tm);
}

static void print_objects(const json_t *objects)
{
	const char *kind;
	json_t *k;

	printf("objects by kind: %-12s %7s %7s %7s %9s\n", "", "added", "removed", "changed",
	       "unchanged");
	json_object_foreach((json_t *)objects, kind, k)
	{
		printf("  %-27s %7lld %7lld %7lld %9lld\n", kind, (long long)jint(k, "added"),
		       (long long)jint(k, "removed"), (long long)jint(k, "changed"),
		       (long long)jint(k, "unchanged"));
	}
	if (json_object_size(objects) == 0) {
		printf("  (none on either side)\n");
	}
}

static void print_names(const char *what, const json_t *names)
{
	size_t i;
	json_t *n;

	printf("; %s: ", what);
	if (json_array_size(names) == 0) {
		printf("none");
	}
	json_array_foreach((json_t *)names, i, n)
	{
		printf("%s%s", i ? ", " : "", json_string_value(n));
	}
}

static void print_diff(const json_t *d)
{
	const json_t *v = json_object_get(d, "stateVersions"), *u = json_object_get(d, "users");
	const json_t *r = json_object_get(d, "revision");

	print_objects(json_object_get(d, "objects"));
	printf("state versions: %lld in the backup, %lld now: %lld added, %lld removed, %lld "
	       "changed, %lld unchanged\n",
	       (long long)jint(v, "backup"), (long long)jint(v, "current"),
	       (long long)jint(v, "added"), (long long)jint(v, "removed"),
	       (long long)jint(v, "changed"), (long long)jint(v, "unchanged"));
	printf("users: %lld in the backup, %lld now", (long long)jint(u, "backup"),
	       (long long)jint(u, "current"));
	print_names("added", json_object_get(u, "added"));
	print_names("removed", json_object_get(u, "removed"));
	if (jint(u, "more") > 0) {
		printf(" (and %lld more)", (long long)jint(u, "more"));
	}
	printf("\nrevision: %lld in the backup, %lld now\n", (long long)jint(r, "backup"),
	       (long long)jint(r, "current"));
}

/* What becomes of the state key. */
enum key_plan { KEY_NONE, KEY_RESTORE, KEY_PRESENT, KEY_NEEDED };

static enum key_plan plan_key(const rz_restore_contents_t *c, const char *key_path, bool *replaces)
{
	const char *want = json_string_value(
	    json_object_get(json_object_get(c->manifest, "stateKey"), "fingerprint"));
	unsigned char cur[RZ_BACKUP_KEY_SIZE];
	char fp[33] = "";
	bool have = rz_backup_load_key(key_path, cur, NULL) == 0;

	if (have) {
		rz_backup_key_fingerprint(cur, fp);
		sodium_memzero(cur, sizeof(cur));
	}
	*replaces = have && want != NULL && strcmp(fp, want) != 0;
	if (want == NULL ||
	    (jint(c->manifest, "stateVersions") == 0 && jint(c->manifest, "sealedOutputs") == 0)) {
		*replaces = false;
		return KEY_NONE;
	}
	if (have && strcmp(fp, want) == 0) {
		return KEY_PRESENT;
	}
	return c->key_unsealed ? KEY_RESTORE : KEY_NEEDED;
}

static void print_key(enum key_plan p, const rz_restore_contents_t *c, const char *key_path,
                      bool replaces, bool done)
{
	const char *fp = json_string_value(
	    json_object_get(json_object_get(c->manifest, "stateKey"), "fingerprint"));

	switch (p) {
	case KEY_NONE:
		printf("state key: none needed (the backup holds no TF state)\n");
		break;
	case KEY_RESTORE:
		printf("state key: %s from the backup, unsealed with the passphrase, into %s%s\n",
		       done ? "restored" : "would be restored", key_path,
		       replaces ? " (the key there now is kept as state.key.pre-restore-TIME)"
		                : "");
		break;
	case KEY_PRESENT:
		printf("state key: %s is the key the backup's TF states are sealed with\n",
		       key_path);
		break;
	case KEY_NEEDED:
		printf("state key: NEEDED: the backup's TF states are sealed with the key of "
		       "fingerprint %s; copy that key to %s before starting rezuscloud%s\n",
		       fp, key_path,
		       c->key_included ? ", or restore again with --passphrase-file (the backup "
		                         "holds it sealed)"
		                       : " (the backup does not hold it)");
		break;
	}
}

/* Put the database and the key in place; the data dir is locked. */
static int apply(const char *tmp, const char *db, const char *key_path, enum key_plan plan,
                 bool replaces, const rz_restore_contents_t *c, rz_err_t *err)
{
	char keep[PATH_MAX + 64], when[32];
	int rc;

	stamp(when, sizeof(when));
	snprintf(keep, sizeof(keep), "%s.pre-restore-%s", db, when);
	rc = rz_restore_db(tmp, db, keep, err);
	if (rc == 0 && access(keep, F_OK) == 0) {
		printf("the database it replaced is kept as %s\n", keep);
	}
	if (rc == 0 && plan == KEY_RESTORE) {
		if (replaces) {
			snprintf(keep, sizeof(keep), "%s.pre-restore-%s", key_path, when);
			if (rename(key_path, keep) < 0) {
				return rz_err_set(err, -errno, "cannot keep '%s' as '%s': %s",
				                  key_path, keep, strerror(errno));
			}
		}
		rc = rz_restore_save_key(key_path, c->key, err);
	}
	return rc;
}

/* What restoring the database at backup changes in the one at db. db is read from a copy
 * taken with SQLite's backup API: a daemon may be writing to it (a dry run), and a reader
 * of a WAL database leaves its -wal and -shm files behind. */
static int compare(const char *db, const char *backup, json_t **diff, rz_err_t *err)
{
	char copy[PATH_MAX];
	int fd, rc;

	if (access(db, F_OK) != 0) {
		return rz_restore_diff(NULL, backup, diff, err);
	}
	snprintf(copy, sizeof(copy), "%s.current-XXXXXX", backup);
	if ((fd = mkstemp(copy)) < 0) {
		return rz_err_set(err, -errno, "cannot create '%s': %s", copy, strerror(errno));
	}
	close(fd);
	rc = rz_db_copy(db, copy, err);
	rc = rc == 0 ? rz_restore_diff(copy, backup, diff, err) : rc;
	unlink(copy);
	return rc;
}

/* Unpack, check, compare; then report, or restore. */
static int restore_into(const restore_opts_t *o, const char *pass, rz_err_t *err)
{
	char db[PATH_MAX - 64], key_path[PATH_MAX - 64], tmp[PATH_MAX - 64];
	rz_restore_contents_t c = { 0 };
	json_t *diff = NULL;
	enum key_plan plan = KEY_NONE;
	bool replaces = false, unpacked;
	int rc;

	snprintf(db, sizeof(db), "%s/%s", o->data_dir, DB_FILE);
	snprintf(key_path, sizeof(key_path), "%s/%s", o->data_dir, KEY_FILE);
	rc = unpack(o, pass, o->dry_run ? NULL : o->data_dir, tmp, sizeof(tmp), &c, err);
	unpacked = rc == 0;
	rc = rc == 0 ? compare(db, tmp, &diff, err) : rc;
	if (rc == 0) {
		plan = plan_key(&c, key_path, &replaces);
		printf("restore of backup %s (taken %s, revision %lld) into %s%s\n",
		       jstr(c.manifest, "name"), jstr(c.manifest, "createdAt"),
		       (long long)jint(c.manifest, "revision"), o->data_dir,
		       o->dry_run ? ": dry run, nothing is changed" : "");
		print_diff(diff);
	}
	if (rc == 0 && !o->dry_run) {
		rc = apply(tmp, db, key_path, plan, replaces, &c, err);
	}
	if (rc == 0) {
		print_key(plan, &c, key_path, replaces, !o->dry_run);
	}
	if (rc == 0 && !o->dry_run) {
		printf("restored: start rezuscloud on %s\n", o->data_dir);
	}
	if (unpacked) {
		unlink(tmp);
	}
	json_decref(diff);
	json_decref(c.manifest);
	sodium_memzero(c.key, sizeof(c.key));
	return rc;
}

static int restore(int argc, char **argv, char *const *envp)
{
	restore_opts_t o = { 0 };
	rz_config_t cfg = { 0 };
	rz_err_t err = { 0 };
	char pass[1100];
	bool done;
	int lock = -1,
	    rc = setup("restore", argc, argv, envp, &o, &cfg, pass, sizeof(pass), &done, &err);

	if (done) {
		rz_config_free(&cfg);
		return rc;
	}
	if (rc == 0 && !o.dry_run) {
		rc = rz_daemon_make_dir(o.data_dir, &err);
		rc = rc == 0 ? rz_daemon_lock(o.data_dir, &lock, &err) : rc;
	}
	rc = rc == 0 ? restore_into(&o, o.passphrase_file != NULL ? pass : NULL, &err) : rc;
	sodium_memzero(pass, sizeof(pass));
	if (lock >= 0) {
		close(lock);
	}
	rz_config_free(&cfg);
	if (rc != 0) {
		return fail("restore", err.msg);
	}
	return RZ_EXIT_OK;
}

/* The options of a subcommand that takes only the configuration (-c FILE, --data-dir DIR,
 * -h; from argv[3]) into o: -1 to go on (optind at the first operand), else the exit
 * status (help shown, or a usage error said). */
static int conf_options(const char *mode, const char *help, int argc, char **argv,
                        restore_opts_t *o)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "data-dir", required_argument, NULL, OPT_DATA_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	opterr = 0;
	optind = 3;
	while ((opt = getopt_long(argc, argv, ":c:h", longs, NULL)) != -1) {
		if (opt == 'c') {
			o->config = optarg;
		} else if (opt == OPT_DATA_DIR) {
			o->data_dir = optarg;
		} else if (opt == 'h') {
			printf("%s", help);
			return RZ_EXIT_OK;
		} else {
			return usage_error(mode, "unknown option or missing value");
		}
	}
	return -1;
}

/* rezuscloud etcd-key rotate [-c CONF] [--data-dir DIR]: a new newest key in the etcd
 * snapshots' key file (etcd_backup.key_file); the older keys stay, so that every snapshot
 * sealed with them still opens. Safe beside a running daemon (the file is rewritten
 * atomically under a lock); the daemon seals with the new key from its next start. */
static int rotate_etcd_key(int argc, char **argv, char *const *envp)
{
	restore_opts_t o = { 0 };
	rz_config_t cfg = { 0 };
	rz_seal_keys_t *keys = NULL;
	rz_err_t err = { 0 };
	char path[PATH_MAX + 32], id[RZ_SEAL_ID_HEX];
	int rc;

	if (argc < 3 || strcmp(argv[2], "rotate") != 0) {
		return usage_error("etcd-key", "usage: rezuscloud etcd-key rotate [-c FILE] "
		                               "[--data-dir DIR]");
	}
	if ((rc = conf_options("etcd-key",
	                       "usage: rezuscloud etcd-key rotate [-c FILE] [--data-dir DIR]\n",
	                       argc, argv, &o)) >= 0) {
		return rc;
	}
	if (optind != argc) {
		return usage_error("etcd-key", "rotate takes no arguments");
	}
	if (configure(&o, envp, &cfg, &err) != 0) {
		rz_config_free(&cfg);
		return usage_error("etcd-key", err.msg);
	}
	if (cfg.etcd_backup_key_file[0] != '\0') {
		snprintf(path, sizeof(path), "%s", cfg.etcd_backup_key_file);
	} else {
		snprintf(path, sizeof(path), "%s/etcd-backup.key", cfg.data_dir);
	}
	rc = rz_seal_keys_rotate(path, &err);
	if (rc == 0) {
		rc = rz_seal_keys_load(&keys, path, &err);
	}
	if (rc != 0) {
		rz_config_free(&cfg);
		return fail("etcd-key", err.msg);
	}
	rz_seal_keys_newest_id(keys, id);
	printf("%s: new key %s seals snapshots from the daemon's next start; the older keys "
	       "still open the snapshots they sealed\n",
	       path, id);
	rz_seal_keys_free(keys);
	rz_config_free(&cfg);
	return RZ_EXIT_OK;
}

/* rezuscloud admin reset-password [USER] [-c CONF] [--data-dir DIR]: a new one-time
 * password for USER (admin by default), printed once, when the printed one is lost or no
 * admin can sign in. Only with the daemon stopped (it holds the data dir's lock). */
static int reset_password(int argc, char **argv, char *const *envp)
{
	static const char use[] = "usage: rezuscloud admin reset-password [USER] [-c FILE] "
	                          "[--data-dir DIR]";
	static const char help[] =
	    "usage: rezuscloud admin reset-password [USER] [-c FILE] [--data-dir DIR]\n"
	    "Give USER (default admin) a new one-time password, printed once, that must be "
	    "changed\nat the next sign-in; end its sessions (its API tokens stay); enable it "
	    "when it\nwas disabled. Audited. Run it with the daemon stopped.\n";
	restore_opts_t o = { 0 };
	rz_config_t cfg = { 0 };
	rz_err_t err = { 0 };
	rz_db_t *db = NULL;
	rz_bus_t *bus = NULL;
	rz_store_t *store = NULL;
	char path[PATH_MAX + 32], pw[RZ_ONE_TIME_PASSWORD_SIZE];
	const char *user = "admin";
	bool enabled = false;
	int lock = -1, rc;

	if (argc < 3 || strcmp(argv[2], "reset-password") != 0) {
		return usage_error("admin", use);
	}
	if ((rc = conf_options("admin", help, argc, argv, &o)) >= 0) {
		return rc;
	}
	if (optind < argc) {
		user = argv[optind++];
	}
	if (optind != argc) {
		return usage_error("admin", use);
	}
	if (configure(&o, envp, &cfg, &err) != 0) {
		rz_config_free(&cfg);
		return usage_error("admin", err.msg);
	}
	snprintf(path, sizeof(path), "%s/%s", cfg.data_dir, DB_FILE);
	if (access(path, F_OK) != 0) {
		rz_err_set(&err, -ENOENT,
		           "no database in '%s': the daemon's first start there creates 'admin' "
		           "and prints its one-time password",
		           cfg.data_dir);
		rc = -1;
	} else {
		rc = rz_daemon_lock(cfg.data_dir, &lock, &err);
	}
	rc = rc == 0 ? rz_db_open(&db, path, &err) : rc;
	rc =
	    rc == 0 ? (rz_bus_new(&bus) == 0 ? 0 : rz_err_set(&err, -ENOMEM, "out of memory")) : rc;
	rc = rc == 0 ? rz_store_new(&store, db, bus, cfg.event_window, &err) : rc;
	rc = rc == 0 ? rz_session_reset_password(store, db, user, pw, sizeof(pw), &enabled, &err)
	             : rc;
	if (rc == 0) {
		printf("'%s' signs in with the one-time password %s (it must be changed at that "
		       "sign-in); its sessions ended%s\n",
		       user, pw, enabled ? "; it was disabled and is enabled again" : "");
	}
	sodium_memzero(pw, sizeof(pw));
	rz_store_free(store);
	rz_bus_free(bus);
	rz_db_close(db);
	if (lock >= 0) {
		close(lock);
	}
	rz_config_free(&cfg);
	return rc == 0 ? RZ_EXIT_OK : fail("admin", err.msg);
}

int rz_offline_main(int argc, char **argv, char *const *envp)
{
	int rc;

	rz_log_set_level(RZ_LOG_WARNING); /* the report is on stdout; problems on stderr */
	if (sodium_init() < 0) {
		return fail(argv[1], "libsodium cannot start");
	}
	rc = strcmp(argv[1], "backup") == 0     ? verify(argc, argv, envp)
	     : strcmp(argv[1], "etcd-key") == 0 ? rotate_etcd_key(argc, argv, envp)
	     : strcmp(argv[1], "admin") == 0    ? reset_password(argc, argv, envp)
	                                        : restore(argc, argv, envp);
	rz_log_close();
	return rc;
}
