#!/bin/sh
# A tenant's remaining tabs in a real browser (Debian's chromium driven by playwright-core from
# build/node, tests/web/webui-tenant.mjs) against the daemon with the sim plugin and a real
# terraform: a config patch with a YAML error shows the error at its line, fixed it is saved
# and the effective patch per role shows it; an upgrade's dry run shows what changes per
# machine, the upgrade's progress arrives without a reload, another is canceled; an admin
# rolls the TF state back through a confirmation naming the version (view and edit users are
# offered no rollback and refused it); the kubeconfig downloads as a file, its token in no
# page and not in the daemon's log; the tenant is deleted through a confirmation naming its
# node groups and machines. The etcd snapshots tab: Snapshot now shows the snapshot Succeeded
# with its size in human units, another arrives live above it, a failed one's message shows
# as text; a restore's confirmation names the snapshot, a dry run (the default) shows its
# steps, the restore itself fails at its precheck on a healthy control plane; view and edit
# users are offered no restore and refused it, a viewer no Snapshot now. The effective patch
# lists in order the patches Talos applies, with the node groups a patch is limited to; a
# patch is deleted through a confirmation naming the machines that lose it (a view user has
# no control, its forged post is refused; nor on an upgrade's pages or the state versions
# page). An htmx POST carries the page's CSRF token
# (web/static/csrf.js) and is accepted, without the header it is refused; scaling a node group
# down first names the machine that goes, Cancel changes nothing, Confirm scales. Every tab
# behind a Home Assistant style ingress proxy keeps its URLs under the prefix, allows framing,
# and a dry run and a patch's save work through it. axe-core on every new page; screenshots
# at 1280 and 360 pixels under $top_builddir/webui-screenshots.
. "${top_srcdir:-.}/tests/integration/lib.sh"

browser_prereqs
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  trusted_proxies: [127.0.0.1]
tofu:
  binary: $TF
  debounce: 200ms
  workers: 2
observe:
  interval: 300ms
  fast_interval: 150ms
  stable_interval: 300ms
upgrade:
  machine_timeout: 5s
etcd_backup:
  interval: 0
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 500}
CONF
start_webui_daemon

run_browser webui-tenant.mjs 300
if [ -n "$BROWSER_SECRET" ]; then
	expect_eq "the downloaded kubeconfig's token is not in the daemon's log" "0" "$(grep -c -F "$BROWSER_SECRET" "$WORK/daemon.log" || true)"
else
	not_ok "the downloaded kubeconfig's token is not in the daemon's log" "no token was downloaded"
fi
# the edit pages and the tabs' other actions, on a tenant of their own (tests/web/webui-tabs.mjs)
run_browser webui-tabs.mjs 300
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly with live streams open" "0" "$EXIT_STATUS"
expect_eq "its log shows no sanitizer report" "0" "$(grep -c 'runtime error:\|Sanitizer' "$WORK/daemon.log" || true)"
done_testing
