#!/bin/sh
# The destroy-approval guard cannot be skipped by a `tofu show -json` that prints
# something other than a plan: the engine once applied anyway, counting 0 destroys. A tofu
# wrapper prints garbage for `show` after the first apply; the scale-down that would
# destroy a machine must not be applied — the run fails before apply, saying why, and the
# machine is still there.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
mkdir -p "$WORK/bin"
cat >"$WORK/bin/tf" <<SH
#!/bin/sh
if [ "\$1" = show ] && [ -e "$WORK/garbage" ]; then
	printf '<html><body>502 Bad Gateway</body></html>\n'
	exit 0
fi
exec "$TF" "\$@"
SH
chmod +x "$WORK/bin/tf"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $WORK/bin/tf
  debounce: 1s
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=showguard-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"showguard-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
patch() { curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$@"; }
last_phase() { api "$API/tenants/g" | sed -n 's/.*"lastRun":{[^}]*"phase":"\([A-Za-z]*\)".*/\1/p'; }
last_run() { api "$API/tenants/g" | sed -n 's/.*"lastRun":{"id":"\([a-z0-9-]*\)".*/\1/p'; }
wait_last() { # RUN-NOT: until the tenant's last run is another one and ended
	for _ in $(seq 1 300); do
		r=$(last_run)
		case $(last_phase) in Succeeded | Failed | Canceled) [ "$r" != "$1" ] && return 0 ;; esac
		sleep 0.1
	done
	return 1
}

# (a debounce of 1 s takes the tenant and both node groups into the first run even on a
# loaded machine: with 200 ms the first run could start before "w" existed)
api -X POST "$API/tenants" -d '{"metadata":{"name":"g"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$API/tenants/g/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
api -X POST "$API/tenants/g/nodegroups" -d '{"metadata":{"name":"w"},"spec":{"role":"worker","count":2,"providerClass":"sim"}}' >/dev/null
wait_last ""
expect_eq "the first apply succeeds" "Succeeded" "$(last_phase)"
first=$(last_run)

touch "$WORK/garbage"
patch "$API/tenants/g/nodegroups/w" -d '{"spec":{"count":1}}'
wait_last "$first"
run=$(last_run)
r=$(api "$API/tenants/g/runs/$run")
expect_match "the scale-down's run fails instead of applying" '"phase":"Failed"' "$r"
expect_match "saying the plan could not be read" '"message":"tofu show -json printed no plan[^"]*: nothing was applied' "$r"
expect_eq "both workers are still there" "2" \
	"$(api "$API/tenants/g/machines" | grep -o '"nodeGroup":"w"' | wc -l | tr -d ' ')"
expect_eq "no apply ran after the garbage" "0" \
	"$(grep -c '"type":"apply_' "$WORK/data/work/g/$run.log" 2>/dev/null || true)"

kill "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
done_testing
