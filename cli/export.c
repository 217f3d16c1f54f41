/* cli/export.c - rezusctl export TENANT DIR: the tenant as a directory plain tofu carries on
 * with (GET /api/v1/tenants/{tenant}/export), written 0700 with files 0600. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/rezusctl.h"

/* A name the server gave for a file: one plain entry of DIR, nothing above or below it. */
static bool plain_name(const char *name)
{
	return name[0] != '\0' && strlen(name) < 256 && strchr(name, '/') == NULL &&
	       strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Whether dir holds anything but . and .. (errno set and -1 when it cannot be read). */
static int dir_used(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int used = 0;

	if (d == NULL) {
		return -1;
	}
	while (!used && (e = readdir(d)) != NULL) {
		used = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	}
	closedir(d);
	return used;
}

/* Whether DIR may take the export: missing, or an empty directory, or with --force any
 * directory. Checked before the request too, so that a refusal here exports nothing. */
static int dir_ok(const char *dir, bool force)
{
	struct stat st;
	int used;

	if (lstat(dir, &st) != 0) {
		return errno == ENOENT ? RZC_OK
		                       : rzc_fail("cannot read %s: %s", dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode)) {
		return rzc_fail("%s exists and is not a directory", dir);
	}
	if ((used = dir_used(dir)) < 0) {
		return rzc_fail("cannot read %s: %s", dir, strerror(errno));
	}
	if (used && !force) {
		return rzc_fail("%s is not empty: give an empty or new directory, or --force to "
		                "write over the files of the same names there",
		                dir);
	}
	return RZC_OK;
}

/* DIR, opened: made 0700 when missing; an existing one dir_ok takes is made 0700 too,
 * since it holds secrets now. -1 after a message on stderr. */
static int open_dir(const char *dir, bool force)
{
	int fd;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rzc_fail("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	if (dir_ok(dir, force) != RZC_OK) {
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, 0700) != 0) {
		rzc_fail("cannot open %s: %s", dir, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	return fd;
}

/* One file of the export, 0600, in the directory dfd (never through a link). */
static int write_file(int dfd, const char *dir, const char *name, const char *text, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t off = 0;

	if (fd >= 0 && fchmod(fd, 0600) == 0) {
		while (off < len) {
			ssize_t n = write(fd, text + off, len - off);
			if (n <= 0) {
				break;
			}
			off += (size_t)n;
		}
	}
	if (fd < 0 || off < len || fsync(fd) != 0) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		return rzc_fail("cannot write %s/%s: %s", dir, name, strerror(e));
	}
	close(fd);
	return RZC_OK;
}

/* Every file of the export's files object, after checking each name. */
static int write_files(const json_t *files, const char *dir, bool force, size_t *n)
{
	const char *name;
	json_t *v;
	int dfd, rc = RZC_OK;

	json_object_foreach((json_t *)files, name, v)
	{
		if (!plain_name(name) || !json_is_string(v)) {
			return rzc_fail(
			    "the server's export names a file \"%s\" that is not a plain "
			    "file name with text: nothing written",
			    name);
		}
	}
	if ((dfd = open_dir(dir, force)) < 0) {
		return RZC_ERR;
	}
	*n = 0;
	json_object_foreach((json_t *)files, name, v)
	{
		if (rc == RZC_OK) {
			rc =
			    write_file(dfd, dir, name, json_string_value(v), json_string_length(v));
			*n += rc == RZC_OK;
		}
	}
	close(dfd);
	return rc;
}

int rzc_cmd_export(rzc_t *c, int argc, char **argv)
{
	const char *tenant;
	char *t, *b = NULL, *path;
	rzc_resp_t r;
	json_t *doc;
	size_t n = 0;
	int rc;

	if (argc != 2) {
		return rzc_usage("export: TENANT DIR [--backend NAME] [--force]");
	}
	if ((tenant = rzc_name_arg(argv[0], "Tenant", "export")) == NULL) {
		return RZC_USAGE;
	}
	if (dir_ok(argv[1], c->force) != RZC_OK) {
		return RZC_ERR;
	}
	t = rzc_escape(tenant);
	b = c->backend != NULL ? rzc_escape(c->backend) : NULL;
	path = rzc_path("/api/v1/tenants/%s/export%s%s", t, b ? "?backend=" : "", b ? b : "");
	free(t);
	free(b);
	rc = rzc_request(c, "GET", path, NULL, NULL, 0, &r) < 0 ? RZC_ERR : RZC_OK;
	free(path);
	if (rc != RZC_OK) {
		return rc;
	}
	if (r.code != 200) {
		rzc_print_status(&r);
		rzc_resp_free(&r);
		return RZC_ERR;
	}
	doc = json_loadb(r.body, r.len, 0, NULL);
	sodium_memzero(r.body, r.len); /* the state, the credentials */
	rzc_resp_free(&r);
	if (!json_is_object(json_object_get(doc, "files"))) {
		json_decref(doc);
		return rzc_fail("export: the server's answer is not an export");
	}
	rc = write_files(json_object_get(doc, "files"), argv[1], c->force, &n);
	if (rc == RZC_OK) {
		fprintf(stderr,
		        "warning: %s holds secrets (the TF state, kubeconfig, talosconfig): it is "
		        "0700, its files 0600; keep it private and out of version control\n",
		        argv[1]);
		if (!json_is_true(json_object_get(doc, "reconciled"))) {
			fprintf(stderr,
			        "warning: tenant %s is not reconciled: tofu plan there shows "
			        "the changes RezusCloud has not applied yet\n",
			        tenant);
		}
		const char *backend = json_string_value(json_object_get(doc, "backend")) ?: "local";
		bool local = strcmp(backend, "local") == 0;
		printf("tenant/%s exported to %s (%zu files, backend %s); see %s/README.md:\n"
		       "  cd %s && tofu init%s && tofu plan\n",
		       tenant, argv[1], n, backend, argv[1], argv[1],
		       local ? "" : " -backend-config=FILE && tofu state push terraform.tfstate");
	}
	json_decref(doc);
	return rc;
}
