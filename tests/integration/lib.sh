# tests/integration/lib.sh - TAP helpers and daemon control for integration scripts.
# Scripts run from the build tree; top_builddir and top_srcdir come from the harness.

: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(pwd)}"
REZUSCLOUD="$top_builddir/rezuscloud"

tap_n=0
tap_failed=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rezus-it-XXXXXX")
DAEMON_PID=""

cleanup() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -KILL "$DAEMON_PID" 2>/dev/null
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
