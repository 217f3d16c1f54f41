#!/bin/sh
# Two daemons on one NATS (docs/runners.md, "Installations"): daemon a (runners.installation
# empty: derived from its data dir) and daemon b (runners.installation: second), each with
# one runner of its own (same name, same labels, both on the default pool; a's asks its
# daemon for the installation, b's is told it), run their tenants side by side: four
# streams, each daemon's runs on its own runner only, none dropped or stuck. Daemon a
# restarted keeps its installation (its durable consumer and runs are its own: with fixed
# names the restarted daemon took the other's consumer and its jobs were dropped by the
# other's runner, the run Running for good). A runner token of one daemon is refused by
# the other.
. "${top_srcdir:-.}/tests/integration/lib.sh"

if ! grep -q 'define HAVE_LIBNATS 1' "$top_builddir/config.h" 2>/dev/null; then
	echo "1..0 # SKIP built without libnats"
	exit 0
fi
TF=$(command -v terraform || command -v tofu || true)
[ -n "$TF" ] || { not_ok "terraform is installed (tools/install-deps)"; done_testing; exit 1; }
export HOME="$WORK/home"
mkdir -p "$HOME"
nats_prepare 5
umask 077
RA=""
RB=""
DA=""
DB=""
stop_all() {
	for p in $RA $RB $DA $DB $NATS_PID; do kill -KILL "$p" 2>/dev/null; done
	cleanup
}
trap stop_all EXIT
start_nats || not_ok "nats-server starts" "$(cat "$WORK/nats.log")"

for d in a b; do
	inst=""
	[ "$d" = b ] && inst="
  installation: second"
	cat >"$WORK/$d.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data-$d
tofu:
  binary: $TF
  debounce: 200ms
  resync: 0s
runners:
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: daemon
  nats_password_file: $WORK/daemon.pw
  heartbeat_timeout: 3s
  claim_timeout: 3s$inst
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
done

# start DAEMON: sets PORT_<d>, DAEMON_PID into D<d>
start() {
	REZUSCLOUD_ADMIN_PASSWORD=inst-test-pw start_daemon "$WORK/daemon-$1.log" -c "$WORK/$1.conf" ||
		not_ok "daemon $1 starts" "$(tail -n 5 "$WORK/daemon-$1.log")"
	eval "PORT_$1=\$PORT"
	eval "D$(echo "$1" | tr a-z A-Z)=\$DAEMON_PID"
}
start a
start b
api() { # DAEMON curl-args...: as that daemon's admin
	tok=$(cat "$WORK/token-$1" 2>/dev/null)
	shift
	curl -s -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' "$@"
}
url() { echo "http://127.0.0.1:$(eval "echo \$PORT_$1")/api/v1"; }
for d in a b; do
	curl -s -X POST "$(url $d)/auth/login" -H 'Content-Type: application/json' \
		-d '{"username":"admin","password":"inst-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p' >"$WORK/token-$d"
done
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }
installation() { # DAEMON: its installation, from /readyz?verbose once its streams are there
	for _ in $(seq 1 100); do
		line=$(curl -s "http://127.0.0.1:$(eval "echo \$PORT_$1")/readyz?verbose" | grep '_EVENTS present')
		[ -n "$line" ] && break
		sleep 0.1
	done
	echo "$line" | sed -n 's/.* as installation \([a-z0-9-]*\),.*/\1/p'
}
IA=$(installation a)
IB=$(installation b)
expect_match "daemon a's installation is derived from its data dir" '^[0-9a-f]{8}$' "$IA"
expect_eq "daemon b's is its runners.installation" "second" "$IB"
IAU=$(echo "$IA" | tr a-z A-Z)
jsz=$(curl -s "http://127.0.0.1:$MPORT/jsz?streams=true")
expect_eq "one NATS holds both installations' streams, four in all" \
	"REZUS_${IAU}_EVENTS REZUS_${IAU}_JOBS REZUS_SECOND_EVENTS REZUS_SECOND_JOBS" \
	"$(echo "$jsz" | js '" ".join(sorted(s["name"] for a in d.get("account_details", []) for s in a.get("stream_detail", [])))')"

# one runner per daemon, both named "r" with no labels: the default pool of each
for d in a b; do
	api $d -X POST "$(url $d)/users/admin/tokens" -d '{"spec":{"scope":"runner","runner":"r"}}' |
		js 'd["secret"]' >"$WORK/r-$d.token"
	cat >"$WORK/r-$d.conf" <<CONF
tofu:
  binary: $TF
runner:
  name: r
  heartbeat: 1s
  work_dir: $WORK/r-$d-work
  nats_url: nats://127.0.0.1:$NPORT
  nats_user: runner
  nats_password_file: $WORK/runner.pw
  daemon_url: http://127.0.0.1:$(eval "echo \$PORT_$d")
  token_file: $WORK/r-$d.token
CONF
done
printf '  installation: second\n' >>"$WORK/r-b.conf"
"$REZUSCLOUD" runner -c "$WORK/r-a.conf" >"$WORK/r-a.log" 2>&1 &
RA=$!
"$REZUSCLOUD" runner -c "$WORK/r-b.conf" >"$WORK/r-b.log" 2>&1 &
RB=$!
phase() { api "$1" "$(url "$1")/runners/r" | js 'd.get("status",{}).get("phase","")'; }
for _ in $(seq 1 100); do
	[ "$(phase a) $(phase b)" = "Ready Ready" ] && break
	sleep 0.1
done
expect_eq "each daemon sees its own runner r Ready" "Ready Ready" "$(phase a) $(phase b)"
expect_match "runner r of a asked daemon a for its installation" "pool.s. of REZUS_${IAU}_JOBS" "$(cat "$WORK/r-a.log")"

# A runner token of daemon a is refused by daemon b (and the other way round).
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$WORK/r-a.token")" "$(url b)/runners/r/assignment")
expect_eq "daemon a's runner token asks daemon b for its assignment: 401" "401" "$code"
expect_eq "its own daemon answers it" "$IA" \
	"$(curl -s -H "Authorization: Bearer $(cat "$WORK/r-a.token")" "$(url a)/runners/r/assignment" | js 'd["installation"]')"

# Three tenants on each daemon at once.
for d in a b; do
	for t in 1 2 3; do
		api $d -o /dev/null -X POST "$(url $d)/tenants" -d "{\"metadata\":{\"name\":\"$d$t\"},\"spec\":{\"clusterProvider\":\"sim\"}}"
		api $d -o /dev/null -X POST "$(url $d)/tenants/$d$t/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
	done
done
reconciled() {
	api "$1" "$(url "$1")/tenants" | js '" ".join(sorted(i["metadata"]["name"] for i in d["items"] if any(c.get("type") == "Reconciled" and c.get("status") == "True" for c in i["status"].get("conditions", []))))'
}
for _ in $(seq 1 240); do
	[ "$(reconciled a) $(reconciled b)" = "a1 a2 a3 b1 b2 b3" ] && break
	sleep 0.5
done
expect_eq "both daemons' tenants are Reconciled side by side" "a1 a2 a3 b1 b2 b3" "$(reconciled a) $(reconciled b)"
runs() { # DAEMON: every run's phase and runner, counted
	for t in 1 2 3; do
		api "$1" "$(url "$1")/tenants/$1$t/runs" | js '"\n".join("%s:%s" % (r["status"].get("phase"), r["status"].get("runner", "-")) for r in d["items"])'
	done | sort | uniq -c | awk '{ printf "%s%s", sep, $2; sep = " " }'
}
expect_eq "daemon a's runs all Succeeded on its runner" "Succeeded:r" "$(runs a)"
expect_eq "daemon b's likewise" "Succeeded:r" "$(runs b)"
expect_eq "no job of the other daemon reached a runner (no job dropped)" "0" \
	"$(grep -c -e 'dropped' -e 'not runner.daemon_url' "$WORK/r-a.log" "$WORK/r-b.log" | awk -F: '{ s += $2 } END { print s }')"

# Daemon a restarted: the same installation, and its next run goes through its runner
# while b's runs go on.
stop_proc "$DA" "daemon a"
DA=""
sed -i "s/listen: 127.0.0.1:0/listen: 127.0.0.1:$PORT_a/" "$WORK/a.conf" # its runner's daemon_url
start a
expect_eq "daemon a keeps its installation across a restart" "$IA" "$(installation a)"
for d in a b; do
	curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $(cat "$WORK/token-$d")" -H 'Content-Type: application/merge-patch+json' \
		"$(url $d)/tenants/${d}1/nodegroups/cp" -d '{"spec":{"count":2}}'
done
machines() { api "$1" "$(url "$1")/tenants/$2/machines" | js 'len(d["items"])'; }
for _ in $(seq 1 120); do
	[ "$(machines a a1) $(machines b b1)" = "2 2" ] && break
	sleep 0.5
done
expect_eq "after the restart, a1 and b1 scale to two machines, each through its own runner" "2 2" "$(machines a a1) $(machines b b1)"
expect_eq "every run of a Succeeded on its runner" "Succeeded:r" "$(runs a)"
expect_eq "and of b" "Succeeded:r" "$(runs b)"

for d in a b; do
	stop_proc "$(eval "echo \$D$(echo $d | tr a-z A-Z)")" "daemon $d"
done
DA=""
DB=""
expect_eq "no password or token in the logs" "0" \
	"$(cat "$WORK"/daemon-*.log "$WORK"/r-*.log | grep -c -e runner-nats-pw-5 -e daemon-nats-pw-5 -e "$(cat "$WORK/r-b.token")")"
done_testing
