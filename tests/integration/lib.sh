# tests/integration/lib.sh - TAP helpers and daemon control for integration scripts.
# Scripts run from the build tree; top_builddir and top_srcdir come from the harness.

: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(pwd)}"
REZUSCLOUD="$top_builddir/rezuscloud"

tap_n=0
tap_failed=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rezus-it-XXXXXX")
# Debian's python3 (python3-kubernetes, python3-yaml): another one first on PATH (a pyenv
# shim starts in most of a second, and polling loops call it) is not the one meant. A link
# first on PATH, not a function: `python3 ... &` must leave python's own pid in $!.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$WORK/.python"
	ln -s /usr/bin/python3 "$WORK/.python/python3"
	PATH="$WORK/.python:$PATH"
	export PATH
fi
DAEMON_PID=""

# A script with a failed check leaves what its processes logged in its own log (the .log
# make check keeps): the last LOG_TAIL lines of each *.log under WORK, as TAP comments, so a
# failure seen once in CI can be read afterwards. The logs hold no secret (the scripts check
# that).
LOG_TAIL=${LOG_TAIL:-60}
cleanup() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -KILL "$DAEMON_PID" 2>/dev/null
	fi
	if [ "$tap_failed" -gt 0 ]; then
		find "$WORK" -maxdepth 2 -name '*.log*' -type f -size -64M 2>/dev/null | sort |
			while read -r f; do
				echo "# --- the last $LOG_TAIL lines of ${f#"$WORK"/}"
				tail -n "$LOG_TAIL" "$f" | sed 's/^/#   /'
			done
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() {
	tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1"
	shift
	for line in "$@"; do echo "# $line"; done
}

# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	desc=$1; shift
	if "$@" >"$WORK/check.out" 2>&1; then ok "$desc"; else not_ok "$desc" "$(cat "$WORK/check.out")"; fi
}

# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "actual:   $3"; fi
}

# expect_match DESCRIPTION REGEX TEXT
expect_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then ok "$1"; else not_ok "$1" "no match for: $2" "in: $3"; fi
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

# start_daemon LOG ARGS...: start rezuscloud in the background with stderr in LOG and
# stdout in LOG.stdout, wait for its ready line (in READY_LOG when set, else LOG), and set
# DAEMON_PID and PORT. Returns non-zero when it does not become ready in 10 s.
start_daemon() {
	log=$1; shift
	"$REZUSCLOUD" "$@" >"$log.stdout" 2>"$log" &
	DAEMON_PID=$!
	for _ in $(seq 1 200); do
		PORT=$(sed -n 's/.* msg=ready .* port=\([0-9]*\) .*/\1/p' "${READY_LOG:-$log}" 2>/dev/null | head -n 1)
		[ -n "$PORT" ] && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# wait_exit PID SECONDS: wait for the child PID to exit within SECONDS and set
# EXIT_STATUS to its exit status, or to "timeout". (Not in a subshell: only the parent
# shell can collect its child's status.)
wait_exit() {
	limit=$(($2 * 20))
	EXIT_STATUS=timeout
	for _ in $(seq 1 "$limit"); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			EXIT_STATUS=$?
			return
		fi
		sleep 0.05
	done
}

# stop_proc PID WHAT [SECONDS]: SIGTERM, then the process's exit within SECONDS (default
# 20). One that does not stop is a failed check ("WHAT stops on SIGTERM"), with its threads'
# stacks when gdb is there, and is then killed: a hang fails one check, it does not stall
# the suite.
stop_proc() {
	kill -TERM "$1" 2>/dev/null
	wait_exit "$1" "${3:-20}"
	if [ "$EXIT_STATUS" = timeout ]; then
		not_ok "$2 stops on SIGTERM within ${3:-20} s" \
			"$(command -v gdb >/dev/null 2>&1 &&
				gdb -p "$1" -batch -ex 'thread apply all bt' 2>/dev/null | grep '^#' | head -n 40)"
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
	fi
}

# --- browser tests (webui*.sh) -----------------------------------------------------------------

# browser_prereqs: NODE_DIR (build/node's modules), CHROMIUM and TF; without them the script
# is skipped, or fails when tools/install-deps ran (then they should be there).
browser_prereqs() {
	NODE_DIR="${NODE_TREE:-$top_srcdir/build/node}/node_modules"
	[ -d "$NODE_DIR/playwright-core" ] || NODE_DIR="$top_builddir/../node/node_modules"
	CHROMIUM=/usr/bin/chromium
	TF=$(command -v tofu || command -v terraform || true)
	if ! command -v node >/dev/null 2>&1 || [ ! -x "$CHROMIUM" ] || [ -z "$TF" ] ||
		[ ! -d "$NODE_DIR/playwright-core" ] || [ ! -d "$NODE_DIR/axe-core" ]; then
		if [ -f "${NODE_TREE:-$top_srcdir/build/node}/.installed" ]; then # tools/install-deps ran: a failure
			not_ok "node, $CHROMIUM, terraform, playwright-core and axe-core are installed"
			done_testing
			exit 1
		fi
		echo "1..0 # SKIP needs node, $CHROMIUM, terraform and playwright-core + axe-core in build/node (tools/install-deps)"
		exit 0
	fi
}

# start_webui_daemon: the daemon on $WORK/rezus.conf (an end of the script when it does not
# start); sets OTP, the one-time admin password its first start logs.
start_webui_daemon() {
	if start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
		ok "the daemon starts"
	else
		not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
		done_testing
		exit 1
	fi
	OTP=$(sed -n "s/.*first start: sign in as 'admin' with the one-time password \([^ ]*\) .*/\1/p" "$WORK/daemon.log" | head -n 1)
	expect_match "the first start logs a one-time admin password" '^[A-Za-z0-9_-]{16,}$' "$OTP"
}

# run_browser SCRIPT SECONDS [NAME=VALUE...]: tests/web/SCRIPT in chromium against the daemon
# (WEBUI_URL, WEBUI_OTP, WEBUI_SHOTS=$SHOTS and the pairs given), its "ok - " / "not ok - " /
# "# " lines turned into this TAP; a line "SECRET X" sets BROWSER_SECRET. Then the script's
# exit status and the CSP check.
run_browser() {
	script=$1
	secs=$2
	shift 2
	SHOTS="$top_builddir/webui-screenshots"
	mkdir -p "$SHOTS"
	BROWSER_SECRET=
	b_start=$(date +%s)
	env NODE_PATH="$NODE_DIR" WEBUI_URL="http://127.0.0.1:$PORT" WEBUI_OTP="$OTP" \
		WEBUI_SHOTS="$SHOTS" WEBUI_CHROMIUM="$CHROMIUM" "$@" \
		timeout "$secs" node "$top_srcdir/tests/web/$script" >"$WORK/node.out" 2>"$WORK/node.err"
	b_rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"# "*) echo "$line" ;;
		"SECRET "*) BROWSER_SECRET=${line#SECRET } ;;
		esac
	done <"$WORK/node.out"
	expect_eq "the browser script ends well" "0" "$b_rc"
	[ "$b_rc" -eq 0 ] || { echo "# stderr:"; sed 's/^/#   /' "$WORK/node.err" | tail -n 30; }
	echo "# browser run ($script): $(($(date +%s) - b_start)) s; screenshots: $(find "$SHOTS" -name '*.png' | wc -l) in $SHOTS"
	expect_eq "no page sent a CSP-violating resource to the log" "0" "$(grep -c 'Content Security Policy' "$WORK/node.err" || true)"
}

# --- NATS (runners.sh, dispatch*.sh, runners-scale.sh) --------------------------------------------

# free_port: a free TCP port on 127.0.0.1 (bound, then released).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# nats_prepare TAG: NATS_SERVER (missing, an end of the script: tools/install-deps installs
# it), the ports NPORT (clients) and MPORT (monitoring), the password files $WORK/daemon.pw
# and $WORK/runner.pw (daemon-nats-pw-TAG, runner-nats-pw-TAG; the scripts grep their logs
# for them) and $WORK/nats.conf: JetStream on loopback, the users daemon and runner with the
# permissions docs/security.md recommends.
nats_prepare() {
	NATS_SERVER=$(command -v nats-server || ls /usr/sbin/nats-server 2>/dev/null || true)
	if [ -z "$NATS_SERVER" ]; then
		not_ok "nats-server is installed (tools/install-deps installs it)"
		done_testing
		exit 1
	fi
	NPORT=$(free_port)
	MPORT=$(free_port)
	(
		umask 077
		printf 'daemon-nats-pw-%s\n' "$1" >"$WORK/daemon.pw"
		printf 'runner-nats-pw-%s\n' "$1" >"$WORK/runner.pw"
	)
	cat >"$WORK/nats.conf" <<CONF
listen: 127.0.0.1:$NPORT
http: 127.0.0.1:$MPORT
jetstream: enabled
authorization {
  users = [
    { user: daemon, password: "daemon-nats-pw-$1",
      permissions: { publish: ["\$JS.API.>", "\$JS.ACK.>", "rezus.*.jobs.>", "rezus.*.runners.*.cancel"],
                     subscribe: ["rezus.*.runners.*.heartbeat", "rezus.*.events.>", "_INBOX.>"] } }
    { user: runner, password: "runner-nats-pw-$1",
      permissions: { publish: ["rezus.*.runners.*.heartbeat", "rezus.*.events.>", "\$JS.API.>", "\$JS.ACK.>"],
                     subscribe: ["_RZ_INBOX.runner.*.>", "rezus.*.runners.*.cancel"] } }
  ]
}
CONF
	NATS_PID=""
}

# start_nats: nats-server on $WORK/nats.conf (store $WORK/js, log $WORK/nats.log) in
# NATS_PID; 0 once its monitoring port says healthy (5 s at most), else 1.
start_nats() {
	"$NATS_SERVER" -c "$WORK/nats.conf" -js -sd "$WORK/js" >>"$WORK/nats.log" 2>&1 &
	NATS_PID=$!
	for _ in $(seq 1 100); do
		curl -sf "http://127.0.0.1:$MPORT/healthz" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}
