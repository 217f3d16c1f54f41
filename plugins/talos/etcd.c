/*
 * plugins/talos/etcd.c - etcd snapshots of talos clusters (ABI 1.3, "Etcd snapshots" in
 * rezus/plugin.h): the talosctl command that takes a snapshot through a healthy control
 * plane, and the one that recovers etcd from it on a control plane waiting for bootstrap.
 * The host runs them with the tenant's talosconfig (TALOSCONFIG, "credentials":
 * "talosconfig", as for the upgrade commands).
 *
 * What talosctl does, from Talos's "Disaster Recovery" guide (talos.dev
 * /v1.x/advanced/disaster-recovery, docs.siderolabs.com/talos/v1.13/.../disaster-recovery)
 * and talosctl's source (cmd/talosctl/cmd/talos/etcd.go and bootstrap.go):
 *   snapshot  `talosctl -n <IP> etcd snapshot db.snapshot` may run against any healthy
 *             control plane ("all etcd instances contain exactly same data"). talosctl
 *             refuses several nodes, streams into <path>.part, checks the stream ends in
 *             its sha256 (size % 512 == 32), renames it to <path>, then prints
 *               etcd snapshot saved to "<path>" (<n> bytes)
 *               snapshot info: hash <hex>, revision <n>, total keys <n>, total size <n>
 *   restore   `talosctl -n <IP> bootstrap --recover-from=./db.snapshot` on one control plane
 *             whose etcd waits for bootstrap (service etcd "Preparing"); the others join.
 *             talosctl reads the snapshot's status first ("recovering from snapshot ..."),
 *             uploads it and bootstraps; a node whose etcd has data answers AlreadyExists
 *             ("etcd data directory is not empty") and nothing changes.
 * --recover-skip-hash-check is not passed: talosctl's reference says to use it "when
 * recovering from data directory copy" (a raw /var/lib/etcd/member/snap/db taken with
 * talosctl cp when etcd is down), and the guide adds it only for such a copy. A snapshot
 * from `etcd snapshot` carries its hash, so Talos checks it and a damaged file is refused
 * rather than restored.
 *
 * Both commands name the node as --nodes and --endpoints, so they reach it directly, not
 * through the talosconfig's endpoints, which may be the control planes that were lost.
 */
#include <string.h>

#include "../kit/kit.h"
#include "etcd.h"
#include "observe.h"

#define ETCD_TIMEOUT_DEF 300000               /* ms, when ctx has none */
#define ETCD_TIMEOUT_MIN 100                  /* ms, the host's least */
#define ETCD_TIMEOUT_MAX (24LL * 3600 * 1000) /* ms, the host's most */

int talos_etcd_commands(void *state, const rezus_json_t *ctx, rezus_json_t *commands,
                        rezus_err_t *err)
{
	kit_plain_t *s = state;
	const rezus_host_t *h = s->h;
	const char *action = kit_get_str(h, ctx, "action", "");
	const char *path = kit_get_str(h, ctx, "path", "");
	const rezus_json_t *m = h->json_get(h, ctx, "machine");
	const char *name = kit_get_str(h, m, "metadata.name", "?");
	const char *addr = talos_machine_address(h, m);
	int64_t timeout = h->json_integer_value(h, h->json_get(h, ctx, "timeout"));
	bool snapshot = strcmp(action, "snapshot") == 0;
	rezus_json_t *c;

	if (!snapshot && strcmp(action, "restore") != 0) {
		return h->error(h, err, REZUS_EINVALID, "unknown etcd action '%s'", action);
	}
	if (path[0] != '/') {
		return h->error(h, err, REZUS_EINVALID, "the snapshot path must be absolute");
	}
	if (addr == NULL || !talos_usable_address(addr)) {
		return h->error(h, err, REZUS_EINVALID,
		                "machine %s has no address to %s etcd through", name,
		                snapshot ? "snapshot" : "restore");
	}
	timeout = timeout <= 0 ? ETCD_TIMEOUT_DEF : timeout;
	timeout = timeout < ETCD_TIMEOUT_MIN ? ETCD_TIMEOUT_MIN : timeout;
	timeout = timeout > ETCD_TIMEOUT_MAX ? ETCD_TIMEOUT_MAX : timeout;
	c = h->json_object(h); /* after the checks: a handle never handed back would leak */
	if (snapshot) {
		const char *argv[] = { "--nodes", addr,       "--endpoints", addr,
			               "etcd",    "snapshot", path };
		kit_str(h, c, "id", "etcd-snapshot");
		h->json_set(h, c, "args", kit_strings(h, argv, 7));
	} else {
		const char *argv[] = { "--nodes",     addr,
			               "--endpoints", addr,
			               "bootstrap",   h->printf(h, "--recover-from=%s", path) };
		kit_str(h, c, "id", "etcd-recover");
		h->json_set(h, c, "args", kit_strings(h, argv, 6));
	}
	kit_str(h, c, "tool", "talosctl");
	kit_str(h, c, "credentials", "talosconfig");
	kit_str(h, c, "machine", name);
	kit_int(h, c, "timeout", timeout);
	h->json_append(h, commands, c);
	return 0;
}
