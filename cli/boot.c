/*
 * cli/boot.c - `rezusctl boot`: from nothing to a running RezusCloud and a logged-in
 * context. Each step is idempotent and recorded in a state file (DATA_DIR/boot.state), so a
 * re-run skips what is done and resumes what is not.
 *
 *   --platform local (default): data dir and config, an admin password (DATA_DIR/
 *     admin.password, 0600), rezuscloud started in the background (a systemd user unit when
 *     systemd runs for the user, else a daemonised process with DATA_DIR/rezuscloud.pid),
 *     /readyz awaited, then login.
 *   --platform docker|qemu: `talosctl cluster create` makes a Talos management cluster,
 *     `kubectl apply` deploys the shipped manifest (deploy/kubernetes/rezuscloud.yaml) with
 *     the admin password as a Secret, the rollout is awaited, then login at the service.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/rezusctl.h"
#include "core/base/exec.h"

struct boot {
	rzc_t *c;
	char dir[PATH_MAX];
	char state[PATH_MAX + 32];
	char password[64];
	const char *listen;
};

/* ------------------------------------------------------------------ the state file */

static bool done(struct boot *b, const char *step)
{
	FILE *f = fopen(b->state, "r");
	char line[128];
	bool found = false;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		found = found || strcmp(line, step) == 0;
	}
	if (f != NULL) {
		fclose(f);
	}
	return found;
}

static int mark(struct boot *b, const char *step)
{
	FILE *f = fopen(b->state, "a");

	if (f == NULL) {
		return rzc_fail("cannot write %s: %s", b->state, strerror(errno));
	}
	fprintf(f, "%s\n", step);
	fclose(f);
	return RZC_OK;
}

static void say(const char *step, const char *what)
{
	printf("%-10s %s\n", step, what);
	fflush(stdout);
}

/* ------------------------------------------------------------------ shared steps */

static int step_dir(struct boot *b)
{
	char *p = strdup(b->dir), *s;

	if (p == NULL) {
		return RZC_ERR;
	}
	for (s = strchr(p + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0700);
		*s = '/';
	}
	free(p);
	if (mkdir(b->dir, 0700) != 0 && errno != EEXIST) {
		return rzc_fail("cannot create %s: %s", b->dir, strerror(errno));
	}
	chmod(b->dir, 0700);
	return RZC_OK;
}

/* The admin password: kept in DATA_DIR/admin.password (0600), made once. */
static int step_password(struct boot *b)
{
	char path[PATH_MAX + 32];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/admin.password", b->dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, b->password, sizeof(b->password) - 1);
		close(fd);
		b->password[n > 0 ? n : 0] = '\0';
		b->password[strcspn(b->password, "\n")] = '\0';
		if (strlen(b->password) >= 12) {
			say("password", "kept");
			return RZC_OK;
		}
	}
	if (b->c->password_stdin) {
		char line[128];
		if (fgets(line, sizeof(line), stdin) == NULL || strlen(line) < 13) {
			return rzc_fail(
			    "--password-stdin: give a password of at least 12 characters");
		}
		line[strcspn(line, "\n")] = '\0';
		snprintf(b->password, sizeof(b->password), "%s", line);
	} else {
		static const char alphabet[] =
		    "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
		unsigned char raw[24];
		int ur = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		if (ur < 0 || read(ur, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
			if (ur >= 0) {
				close(ur);
			}
			return rzc_fail("cannot read /dev/urandom");
		}
		close(ur);
		for (size_t i = 0; i < sizeof(raw); i++) {
			b->password[i] = alphabet[raw[i] % (sizeof(alphabet) - 1)];
		}
		b->password[sizeof(raw)] = '\0';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, b->password, strlen(b->password)) < 0 || write(fd, "\n", 1) != 1) {
		if (fd >= 0) {
			close(fd);
		}
		return rzc_fail("cannot write %s: %s", path, strerror(errno));
	}
	close(fd);
	say("password", "made (admin.password, mode 0600)");
	return RZC_OK;
}

/* Log in as admin: a token in the context named after the platform. */
static int step_login(struct boot *b, const char *server, const char *context)
{
	rzc_t *c = b->c;
	json_t *ctx;
	int pipefd[2], saved = dup(STDIN_FILENO), rc;

	/* a context that still works is kept */
	if ((ctx = rzc_context(c, context)) != NULL && json_object_get(ctx, "token") != NULL) {
		rzc_resp_t r;
		char *was = c->token;
		c->token = (char *)json_string_value(json_object_get(ctx, "token"));
		rc = rzc_request(c, "GET", "/api/v1/tenants?limit=1", NULL, NULL, 0, &r);
		c->token = was;
		if (rc == 0 && r.code == 200) {
			rzc_resp_free(&r);
			close(saved);
			say("login", "kept (the context's token works)");
			return RZC_OK;
		}
		if (rc == 0) {
			rzc_resp_free(&r);
		}
	}
	if (pipe(pipefd) != 0) {
		close(saved);
		return rzc_fail("pipe: %s", strerror(errno));
	}
	if (write(pipefd[1], b->password, strlen(b->password)) < 0 ||
	    write(pipefd[1], "\n", 1) != 1) {
		close(pipefd[0]);
		close(pipefd[1]);
		close(saved);
		return rzc_fail("pipe: %s", strerror(errno));
	}
	close(pipefd[1]);
	dup2(pipefd[0], STDIN_FILENO);
	close(pipefd[0]);
	clearerr(stdin);
	c->username = "admin";
	c->password_stdin = true;
	c->context = context;
	free(c->server);
	c->server = strdup(server);
	{
		char *args[] = { NULL };
		rc = rzc_cmd_login(c, 0, args);
	}
	dup2(saved, STDIN_FILENO);
	close(saved);
	clearerr(stdin);
	return rc;
}

static int wait_ready(rzc_t *c, const char *server, int seconds)
{
	char *was = c->server;
	int rc = RZC_ERR;

	c->server = (char *)server;
	c->quiet = true; /* not there yet is expected while waiting */
	for (int i = 0; i < seconds * 10; i++) {
		rzc_resp_t r;
		if (rzc_request(c, "GET", "/readyz", NULL, NULL, 0, &r) == 0) {
			long code = r.code;
			rzc_resp_free(&r);
			if (code == 200) {
				rc = RZC_OK;
				break;
			}
		}
		usleep(100000);
	}
	c->quiet = false;
	if (rc != RZC_OK) {
		rzc_resp_t r;
		if (rzc_request(c, "GET", "/readyz", NULL, NULL, 0, &r) == 0) {
			fprintf(stderr, "rezuscloud at %s is not ready: %.*s\n", server,
			        (int)(r.len > 300 ? 300 : r.len), r.body);
			rzc_resp_free(&r);
		}
	}
	c->server = was;
	return rc;
}

/* ------------------------------------------------------------------ local */

static bool pid_alive(struct boot *b)
{
	char path[PATH_MAX + 32];
	FILE *f;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/rezuscloud.pid", b->dir);
	if ((f = fopen(path, "r")) == NULL) {
		return false;
	}
	if (fscanf(f, "%ld", &pid) != 1) {
		pid = 0;
	}
	fclose(f);
	return pid > 1 && kill((pid_t)pid, 0) == 0;
}

/* The rezuscloud to start: --rezuscloud, next to this rezusctl, or on PATH. */
static const char *daemon_binary(rzc_t *c, char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n;

	if (c->binary != NULL) {
		return c->binary;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 16);
	if (n > 0) {
		char *slash;
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL && (size_t)(slash - self) + 12 < size) {
			memcpy(buf, self, (size_t)(slash - self));
			memcpy(buf + (slash - self), "/rezuscloud", 12);
			if (access(buf, X_OK) == 0) {
				return buf;
			}
		}
	}
	return "rezuscloud";
}

static bool systemd_user(void)
{
	return getenv("REZUS_BOOT_NO_SYSTEMD") == NULL &&
	       system("systemctl --user show-environment >/dev/null 2>&1") == 0;
}

static int start_local(struct boot *b, const char *conf)
{
	char buf[PATH_MAX], log[PATH_MAX + 32], pidfile[PATH_MAX + 32];
	const char *bin = daemon_binary(b->c, buf, sizeof(buf));
	pid_t pid;

	if (pid_alive(b)) {
		say("start", "kept (already running)");
		return RZC_OK;
	}
	if (systemd_user()) {
		char unit[PATH_MAX], *cmd = NULL;
		const char *home = getenv("HOME");
		FILE *f;
		snprintf(unit, sizeof(unit), "%s/.config/systemd/user", home ? home : ".");
		if (asprintf(&cmd, "mkdir -p '%s'", unit) > 0) {
			if (system(cmd) != 0) {
				free(cmd);
				return rzc_fail("cannot create %s", unit);
			}
			free(cmd);
		}
		strncat(unit, "/rezuscloud.service", sizeof(unit) - strlen(unit) - 1);
		if ((f = fopen(unit, "w")) == NULL) {
			return rzc_fail("cannot write %s: %s", unit, strerror(errno));
		}
		fprintf(f,
		        "[Unit]\nDescription=RezusCloud (rezusctl boot)\n\n[Service]\n"
		        "ExecStart=%s -c %s\nRestart=on-failure\n\n[Install]\n"
		        "WantedBy=default.target\n",
		        bin, conf);
		fclose(f);
		if (system("systemctl --user daemon-reload && systemctl --user enable --now "
		           "rezuscloud.service") != 0) {
			return rzc_fail("systemctl --user enable --now rezuscloud.service failed");
		}
		say("start", "systemd user unit rezuscloud.service");
		return RZC_OK;
	}
	snprintf(log, sizeof(log), "%s/rezuscloud.log", b->dir);
	snprintf(pidfile, sizeof(pidfile), "%s/rezuscloud.pid", b->dir);
	pid = fork();
	if (pid < 0) {
		return rzc_fail("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int fd;
		setsid();
		if (fork() > 0) {
			_exit(
			    0); /* the grandchild is no session leader: it never gets a terminal */
		}
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
		}
		{
			FILE *p = fopen(pidfile, "w");
			if (p != NULL) {
				fprintf(p, "%ld\n", (long)getpid());
				fclose(p);
			}
		}
		execlp(bin, bin, "-c", conf, (char *)NULL);
		fprintf(stderr, "rezusctl boot: cannot start %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	say("start", "background process (rezuscloud.pid, rezuscloud.log)");
	return RZC_OK;
}

/* Is name an executable on PATH? (the engine's own lookup) */
static bool on_path(const char *name)
{
	char found[PATH_MAX];

	return rz_exec_which(name, getenv("PATH"), found, sizeof(found)) == 0;
}

/* The tools a platform needs, all on PATH, checked before boot writes anything: "" or
 * the missing ones, space-separated, in missing. */
static bool tools_present(const char *const *tools, char *missing, size_t size)
{
	size_t len = 0;

	missing[0] = '\0';
	for (; *tools != NULL; tools++) {
		if (!on_path(*tools)) {
			int n =
			    snprintf(missing + len, size - len, "%s%s", len ? ", " : "", *tools);
			len = n > 0 && (size_t)n < size - len ? len + (size_t)n : len;
		}
	}
	return missing[0] == '\0';
}

/* The plugin dir the daemon started by boot loads from: a build tree's (beside its
 * rezuscloud) when there is one, else the installed one. */
static void plugin_dir(const char *bin, char *buf, size_t size)
{
	const char *slash = strrchr(bin, '/');
	struct stat st;

	if (slash != NULL) {
		snprintf(buf, size, "%.*s/plugins", (int)(slash - bin), bin);
		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
			return;
		}
	}
	snprintf(buf, size, "%s", RZ_PLUGIN_DIR);
}

/* Appends to list (one "  name: {}\n" each) the plugins in dir: NAME.so, or .libs/NAME.so
 * in a build tree; returns how many. */
static int scan_plugins(const char *dir, char *list, size_t size)
{
	char sub[PATH_MAX + 8];
	int n = 0;

	for (int pass = 0; pass < 2; pass++) {
		DIR *d;
		struct dirent *e;
		snprintf(sub, sizeof(sub), pass == 0 ? "%s" : "%s/.libs", dir);
		if ((d = opendir(sub)) == NULL) {
			continue;
		}
		while ((e = readdir(d)) != NULL) {
			size_t len = strlen(e->d_name);
			char entry[300];
			if (len < 4 || len > 200 || strcmp(e->d_name + len - 3, ".so") != 0 ||
			    strspn(e->d_name, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
			        len - 3) {
				continue;
			}
			snprintf(entry, sizeof(entry), "  %.*s: {}\n", (int)(len - 3), e->d_name);
			if (strstr(list, entry) == NULL && strlen(list) + strlen(entry) < size) {
				strcat(list, entry);
				n++;
			}
		}
		closedir(d);
	}
	return n;
}

/* Is the host of a listen address loopback (where the daemon serves plain HTTP)? */
static bool loopback(const char *listen)
{
	return strncmp(listen, "127.", 4) == 0 || strncmp(listen, "localhost:", 10) == 0 ||
	       strncmp(listen, "[::1]:", 6) == 0;
}

/* The URL of the daemon listening on listen: plain HTTP on loopback, else TLS with the
 * self-signed certificate it makes, reached at 127.0.0.1 (or ::1) when it listens on every
 * address (the certificate names those). */
static void local_server(const struct boot *b, char *buf, size_t size)
{
	const char *colon = strrchr(b->listen, ':');
	const char *port = colon != NULL ? colon + 1 : "8080";

	if (loopback(b->listen)) {
		snprintf(buf, size, "http://%s", b->listen);
	} else if (strncmp(b->listen, "0.0.0.0:", 8) == 0 || b->listen[0] == ':') {
		snprintf(buf, size, "https://127.0.0.1:%s", port);
	} else if (strncmp(b->listen, "[::]:", 5) == 0) {
		snprintf(buf, size, "https://[::1]:%s", port);
	} else {
		snprintf(buf, size, "https://%s", b->listen);
	}
}

static int boot_local(struct boot *b)
{
	char conf[PATH_MAX + 32], server[300];
	bool tls = !loopback(b->listen);
	int rc;

	snprintf(conf, sizeof(conf), "%s/rezus.conf", b->dir);
	local_server(b, server, sizeof(server));
	/* what the daemon needs, before anything is written */
	const char *tofu = on_path("tofu") ? "tofu" : on_path("terraform") ? "terraform" : NULL;
	char bin_buf[PATH_MAX], pdir[PATH_MAX + 16], plugins[4096] = "";
	const char *bin = daemon_binary(b->c, bin_buf, sizeof(bin_buf));
	if (tofu == NULL) {
		return rzc_fail("boot: neither tofu nor terraform is on PATH: install one first");
	}
	if (strchr(bin, '/') != NULL ? access(bin, X_OK) != 0 : !on_path(bin)) {
		return rzc_fail("boot: no rezuscloud to start (%s): give --rezuscloud PATH", bin);
	}
	plugin_dir(bin, pdir, sizeof(pdir));
	if (!done(b, "config") && scan_plugins(pdir, plugins, sizeof(plugins)) == 0) {
		return rzc_fail("boot: no plugin in %s: the daemon could realise no tenant", pdir);
	}
	if ((rc = step_dir(b)) != RZC_OK) {
		return rc;
	}
	if (!done(b, "config")) {
		FILE *f = fopen(conf, "w");
		if (f == NULL) {
			return rzc_fail("cannot write %s: %s", conf, strerror(errno));
		}
		fprintf(f,
		        "# written by rezusctl boot\nserver:\n  listen: %s\n  data_dir: %s\n%s"
		        "auth:\n  admin_password_file: %s/admin.password\n"
		        "tofu:\n  binary: %s\nplugin_dir: %s\nplugins:\n%s",
		        b->listen, b->dir, tls ? "  tls:\n    self_signed: true\n" : "", b->dir,
		        tofu, pdir, plugins);
		fclose(f);
		chmod(conf, 0600);
		say("config", conf);
		mark(b, "config");
	} else {
		say("config", "kept");
	}
	if ((rc = step_password(b)) != RZC_OK || (rc = start_local(b, conf)) != RZC_OK) {
		return rc;
	}
	if (tls && b->c->ca_file == NULL && !b->c->insecure) {
		/* the certificate the daemon makes at its first start; the context keeps its path
		 */
		if (asprintf(&b->c->ca_file, "%s/tls-cert.pem", b->dir) < 0) {
			return rzc_fail("out of memory");
		}
	}
	if (wait_ready(b->c, server, 30) != RZC_OK) {
		return rzc_fail(
		    "rezuscloud did not become ready at %s within 30 s (see %s/rezuscloud.log)",
		    server, b->dir);
	}
	say("ready", server);
	if ((rc = step_login(b, server, "local")) == RZC_OK) {
		mark(b, "login");
	}
	return rc;
}

/* ------------------------------------------------------------------ docker, qemu */

static int run(const char *step, const char *cmd)
{
	int st;

	say(step, cmd);
	st = system(cmd);
	if (st != 0) {
		return rzc_fail("%s: `%s` failed (exit %d)", step, cmd,
		                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return RZC_OK;
}

/* Does path start with a PEM certificate? */
static bool is_certificate(const char *path)
{
	static const char head[] = "-----BEGIN CERTIFICATE-----";
	char buf[sizeof(head)] = "";
	FILE *f = fopen(path, "r");
	bool ok = f != NULL && fread(buf, 1, sizeof(head) - 1, f) == sizeof(head) - 1 &&
	          memcmp(buf, head, sizeof(head) - 1) == 0;

	if (f != NULL) {
		fclose(f);
	}
	return ok;
}

static int boot_cluster(struct boot *b, const char *platform)
{
	char kubeconfig[PATH_MAX + 32], ca[PATH_MAX + 32], *cmd = NULL, server[300];
	const char *manifest = getenv("REZUS_BOOT_MANIFEST");
	int rc;

	snprintf(kubeconfig, sizeof(kubeconfig), "%s/management.kubeconfig", b->dir);
	if (manifest == NULL) {
		manifest = RZ_DATADIR "/deploy/kubernetes/rezuscloud.yaml";
	}
	if (!done(b, "cluster")) { /* its tools, before anything is written */
		struct utsname u;
		char qemu[96], missing[256];
		const char *tools[] = { "talosctl", "kubectl", "docker", NULL };
		if (strcmp(platform, "qemu") == 0) {
			snprintf(qemu, sizeof(qemu), "qemu-system-%s",
			         uname(&u) == 0 ? u.machine : "x86_64");
			tools[2] = qemu;
		}
		if (!tools_present(tools, missing, sizeof(missing))) {
			return rzc_fail("boot --platform %s: %s not on PATH: install %s first",
			                platform, missing, strchr(missing, ',') ? "them" : "it");
		}
	}
	if ((rc = step_dir(b)) != RZC_OK || (rc = step_password(b)) != RZC_OK) {
		return rc;
	}
	if (!done(b, "cluster")) {
		if (asprintf(&cmd,
		             "talosctl cluster create --provisioner %s --name rezus-management "
		             "--workers 1",
		             platform) < 0 ||
		    (rc = run("cluster", cmd)) != RZC_OK) {
			free(cmd);
			return rc;
		}
		free(cmd);
		mark(b, "cluster");
	} else {
		say("cluster", "kept");
	}
	if (!done(b, "kubeconfig")) {
		if (asprintf(&cmd, "talosctl kubeconfig --nodes 10.5.0.2 --force '%s'",
		             kubeconfig) < 0 ||
		    (rc = run("kubeconfig", cmd)) != RZC_OK) {
			free(cmd);
			return rc;
		}
		free(cmd);
		mark(b, "kubeconfig");
	} else {
		say("kubeconfig", "kept");
	}
	if (!done(b, "deploy")) {
		if (asprintf(
		        &cmd,
		        "kubectl --kubeconfig '%s' apply -f '%s' && kubectl --kubeconfig '%s' -n "
		        "rezus create secret generic rezuscloud-admin --from-file=password='%s/"
		        "admin.password' --dry-run=client -o yaml | kubectl --kubeconfig '%s' "
		        "apply -f - && kubectl --kubeconfig '%s' -n rezus rollout status "
		        "deployment/rezuscloud --timeout=300s",
		        kubeconfig, manifest, kubeconfig, b->dir, kubeconfig, kubeconfig) < 0 ||
		    (rc = run("deploy", cmd)) != RZC_OK) {
			free(cmd);
			return rc;
		}
		free(cmd);
		mark(b, "deploy");
	} else {
		say("deploy", "kept");
	}
	/* the self-signed certificate the daemon made in its volume, trusted from now on */
	snprintf(ca, sizeof(ca), "%s/management-ca.pem", b->dir);
	if (!done(b, "certificate")) {
		if (asprintf(&cmd,
		             "kubectl --kubeconfig '%s' -n rezus exec deployment/rezuscloud -- cat "
		             "/var/lib/rezus/tls-cert.pem >'%s'",
		             kubeconfig, ca) < 0 ||
		    (rc = run("certificate", cmd)) != RZC_OK) {
			free(cmd);
			return rc;
		}
		free(cmd);
		if (!is_certificate(ca)) {
			unlink(ca);
			return rzc_fail(
			    "certificate: the daemon's tls-cert.pem is no PEM certificate");
		}
		chmod(ca, 0644);
		mark(b, "certificate");
	} else {
		say("certificate", "kept");
	}
	if (b->c->ca_file == NULL && !b->c->insecure && (b->c->ca_file = strdup(ca)) == NULL) {
		return rzc_fail("out of memory");
	}
	/* the manifest's NodePort service on the first node, which the certificate names */
	snprintf(server, sizeof(server), "%s",
	         getenv("REZUS_BOOT_SERVER") ? getenv("REZUS_BOOT_SERVER")
	                                     : "https://10.5.0.2:30080");
	if (wait_ready(b->c, server, 60) != RZC_OK) {
		return rzc_fail("rezuscloud did not become ready at %s", server);
	}
	say("ready", server);
	if ((rc = step_login(b, server, platform)) == RZC_OK) {
		mark(b, "login");
	}
	return rc;
}

int rzc_cmd_boot(rzc_t *c, int argc, char **argv)
{
	struct boot b;
	const char *platform = c->platform ? c->platform : "local";
	const char *home = getenv("HOME");

	(void)argv;
	if (argc > 0) {
		return rzc_usage(
		    "boot: [--platform local|docker|qemu] [--data-dir D] [--listen ADDR]");
	}
	memset(&b, 0, sizeof(b));
	b.c = c;
	b.listen = c->listen ? c->listen : "127.0.0.1:8080";
	if (c->data_dir != NULL) {
		snprintf(b.dir, sizeof(b.dir), "%s", c->data_dir);
	} else {
		snprintf(b.dir, sizeof(b.dir), "%s/.local/share/rezus", home ? home : ".");
	}
	if (b.dir[0] != '/') {
		char *abs = realpath(".", NULL), *joined = NULL;
		if (abs != NULL && asprintf(&joined, "%s/%s", abs, b.dir) > 0 &&
		    strlen(joined) < sizeof(b.dir)) {
			memcpy(b.dir, joined, strlen(joined) + 1);
		}
		free(joined);
		free(abs);
	}
	snprintf(b.state, sizeof(b.state), "%s/boot.state", b.dir);
	if (strcmp(platform, "local") == 0) {
		return boot_local(&b);
	}
	if (strcmp(platform, "docker") == 0 || strcmp(platform, "qemu") == 0) {
		return boot_cluster(&b, platform);
	}
	return rzc_usage("boot: --platform local, docker or qemu");
}
