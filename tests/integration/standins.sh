#!/bin/sh
# tests/integration/standins.sh - the test stand-ins for talosctl and kubectl
# (tests/stand-ins/) replay the recorded layout of tests/plugins/observe/standin/: by node
# address and command, with .err, .exit and .sleep files, in each mode (hang, fail,
# garbage); a command's after/ tree changes what the nodes report (an upgrade, a rollback,
# upgrade-k8s); etcd snapshot writes its file as talosctl does (PATH.part, then PATH) and
# bootstrap --recover-from reads one; they insist on their credentials file and log every
# call to calls.log; and no product code names them.
. "$top_srcdir/tests/integration/lib.sh"

T="$top_srcdir/tests/stand-ins/talosctl"
K="$top_srcdir/tests/stand-ins/kubectl"
D="$WORK/standin"
cp -R "$top_srcdir/tests/plugins/observe/standin" "$D" && chmod -R u+w "$D"
printf 'context: tenant-a\n' >"$WORK/talosconfig"
printf 'apiVersion: v1\nkind: Config\n' >"$WORK/kubeconfig"
REZUS_STANDIN_DIR=$D
export REZUS_STANDIN_DIR

# talos ARGS...: run the talosctl stand-in with the credentials; stdout in $WORK/out,
# stderr in $WORK/err, the exit status in $rc.
talos() {
	TALOSCONFIG="$WORK/talosconfig" "$T" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
}
kube() {
	KUBECONFIG="$WORK/kubeconfig" "$K" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
}
rec() { cat "$D/$1"; }

check "the stand-ins are executable" test -x "$T" -a -x "$K"

talos --nodes 10.20.0.10 --endpoints 10.20.0.10 get machinestatus -o json
expect_eq "talosctl replays the node's recording of the command" \
	"0 $(rec talosctl/10.20.0.10/get-machinestatus.out)" "$rc $(cat "$WORK/out")"
talos -n 10.20.0.11 -e 10.20.0.11 version --short
expect_eq "-n and flags without a value select the same way" \
	"0 $(rec talosctl/10.20.0.11/version.out)" "$rc $(cat "$WORK/out")"
talos --nodes=10.20.0.10 --endpoints=10.20.0.10 etcd members
expect_eq "--nodes=ADDRESS and a two-word command" \
	"0 $(rec talosctl/10.20.0.10/etcd-members.out)" "$rc $(cat "$WORK/out")"
talos --nodes 10.20.0.11,10.20.0.12 --endpoints 10.20.0.11 get machinestatus -o json
expect_eq "a comma list of nodes is answered node by node" \
	"0 $(rec talosctl/10.20.0.11/get-machinestatus.out; rec talosctl/10.20.0.12/get-machinestatus.out)" \
	"$rc $(cat "$WORK/out")"

printf 'error getting version from node 10.20.0.11: rpc error: code = DeadlineExceeded\n' \
	>"$D/talosctl/10.20.0.11/version.err"
echo 3 >"$D/talosctl/10.20.0.11/version.exit"
talos --nodes 10.20.0.11 version --short
expect_eq ".err goes to stderr and .exit is the exit status" \
	"3 error getting version from node 10.20.0.11: rpc error: code = DeadlineExceeded" \
	"$rc $(cat "$WORK/err")"
rm "$D/talosctl/10.20.0.11/version.err" "$D/talosctl/10.20.0.11/version.exit"
talos --nodes 10.20.0.11 get members
expect_eq "a command without a recording fails and says which file is missing" \
	"1 talosctl stand-in: no recording $D/talosctl/10.20.0.11/get-members.out" \
	"$rc $(cat "$WORK/err")"

echo fail >"$D/talosctl/10.20.0.11/mode"
talos --nodes 10.20.0.11 get machinestatus -o json
expect_match "mode fail: a connection error for that node, exit 1, no output" \
	'^1 0 10\.20\.0\.11: rpc error: code = Unavailable .*dial tcp 10\.20\.0\.11:50000: connect: connection refused' \
	"$rc $(wc -c <"$WORK/out") $(cat "$WORK/err")"
talos --nodes 10.20.0.10,10.20.0.11 get machinestatus -o json
expect_eq "with several nodes the others still answer" \
	"1 $(rec talosctl/10.20.0.10/get-machinestatus.out)" "$rc $(cat "$WORK/out")"
rm "$D/talosctl/10.20.0.11/mode"

echo garbage >"$D/talosctl/10.20.0.12/mode"
talos --nodes 10.20.0.12 get machinestatus -o json
expect_eq "mode garbage: exit 0 with an HTML page instead of JSON" \
	"0 <html>" "$rc $(head -n 1 "$WORK/out" | tr -d '\r')"

echo hang >"$D/talosctl/10.20.0.12/mode"
start=$(date +%s)
TALOSCONFIG="$WORK/talosconfig" timeout 1 "$T" --nodes 10.20.0.12 version >"$WORK/out" 2>&1
rc=$?
took=$(($(date +%s) - start))
expect_eq "mode hang: it sleeps until the caller's timeout kills it" "124 yes" \
	"$rc $([ "$took" -lt 10 ] && echo yes || echo "no, $took s")"
rm "$D/talosctl/10.20.0.12/mode"

: >"$D/calls.log"
"$T" --nodes 10.20.0.10 version >"$WORK/out" 2>"$WORK/err"
expect_eq "without TALOSCONFIG it refuses, like talosctl" \
	"1 error: TALOSCONFIG is not set or names no readable file (talosctl stand-in)" \
	"$? $(cat "$WORK/err")"
TALOSCONFIG="$WORK/nothing" "$T" --nodes 10.20.0.10 version >"$WORK/out" 2>&1
expect_eq "TALOSCONFIG must name a file that exists" 1 "$?"
talos --nodes 10.20.0.10 --endpoints 10.20.0.10 get machinestatus -o json
expect_eq "calls.log records argv and whether the credentials file was there" \
	"talosctl credentials=no --nodes 10.20.0.10 version
talosctl credentials=no --nodes 10.20.0.10 version
talosctl credentials=yes --nodes 10.20.0.10 --endpoints 10.20.0.10 get machinestatus -o json" \
	"$(cat "$D/calls.log")"

: >"$D/calls.log"
kube get nodes -o json --request-timeout=15s
expect_eq "kubectl replays its recording of the command" \
	"0 $(rec kubectl/get-nodes.out)" "$rc $(cat "$WORK/out")"
"$K" get nodes -o json >"$WORK/out" 2>"$WORK/err"
expect_eq "without KUBECONFIG kubectl refuses" \
	"1 error: KUBECONFIG is not set or names no readable file (kubectl stand-in)" \
	"$? $(cat "$WORK/err")"
expect_eq "kubectl logs its calls too" \
	"kubectl credentials=yes get nodes -o json --request-timeout=15s
kubectl credentials=no get nodes -o json" "$(cat "$D/calls.log")"
echo fail >"$D/kubectl/mode"
kube get nodes -o json
expect_eq "kubectl mode fail: connection refused, exit 1" \
	"1 The connection to the server 10.20.0.10:6443 was refused - did you specify the right host or port?" \
	"$rc $(cat "$WORK/err")"
echo garbage >"$D/kubectl/mode"
kube get nodes -o json
expect_eq "kubectl mode garbage: an HTML page" "0 <html>" "$rc $(head -n 1 "$WORK/out" | tr -d '\r')"
echo hang >"$D/kubectl/mode"
KUBECONFIG="$WORK/kubeconfig" timeout 1 "$K" get nodes -o json >"$WORK/out" 2>&1
expect_eq "kubectl mode hang: killed by the caller's timeout" 124 "$?"
rm "$D/kubectl/mode"

# An upgrade played: the command's after/ tree changes what the node reports.
talos --nodes 10.20.0.11 upgrade --image ghcr.io/siderolabs/installer:v1.13.0 --wait --timeout 600s
expect_eq "upgrade: flags with values are no command words; progress on stderr, exit 0" \
	"0 $(rec talosctl/10.20.0.11/upgrade.err)" "$rc $(cat "$WORK/err")"
talos --nodes 10.20.0.11 version
expect_match "after/<address>/upgrade/: the node reports the new version" \
	"Tag: *v1\.13\.0" "$(cat "$WORK/out")"
talos --nodes 10.20.0.12 version
expect_match "the other nodes are untouched" "Tag: *v1\.12\.1" "$(cat "$WORK/out")"
talos --nodes 10.20.0.11 rollback
talos --nodes 10.20.0.11 version
expect_eq "after/<address>/rollback/: the old version again" \
	"0 $(rec talosctl/10.20.0.11/version.out)" "$rc $(cat "$WORK/out")"
echo 1 >"$D/talosctl/10.20.0.12/upgrade.exit"
talos --nodes 10.20.0.12 upgrade --image ghcr.io/siderolabs/installer:v1.13.0 --wait
talos --nodes 10.20.0.12 version
expect_eq "an upgrade that fails changes nothing" "0 $(rec talosctl/10.20.0.12/version.out)" \
	"$rc $(cat "$WORK/out")"
rm "$D/talosctl/10.20.0.12/upgrade.exit"
talos --nodes 10.20.0.10 upgrade-k8s --to 1.35.2
kube get nodes -o json
expect_eq "upgrade-k8s: every kubelet at the new version" "0 3" \
	"$rc $(grep -c '"kubeletVersion": "v1.35.2"' "$WORK/out")"
echo 0.5 >"$D/talosctl/10.20.0.10/version.sleep"
start=$(date +%s%N)
talos --nodes 10.20.0.10 version
took=$((($(date +%s%N) - start) / 1000000))
expect_eq "<command>.sleep: the answer comes that much later" "0 yes" \
	"$rc $([ "$took" -ge 500 ] && echo yes || echo "no, $took ms")"
rm "$D/talosctl/10.20.0.10/version.sleep"

# etcd snapshots: the node streams etcd-snapshot.db into PATH.part, renamed to PATH.
SNAP="$WORK/etcd/snapshot.db"
mkdir -p "$WORK/etcd"
talos --nodes 10.20.0.10 --endpoints 10.20.0.10 etcd snapshot "$SNAP"
expect_eq "etcd snapshot: the saved line with the caller's path, exit 0" \
	"0 etcd snapshot saved to \"$SNAP\" (1568 bytes)" "$rc $(head -n 1 "$WORK/out")"
expect_match "and talosctl's snapshot info line" \
	'^snapshot info: hash [0-9a-f]{8}, revision [0-9]+, total keys [0-9]+, total size [0-9]+$' \
	"$(sed -n 2p "$WORK/out")"
check "the file is the node's snapshot, byte for byte" \
	cmp "$SNAP" "$D/talosctl/10.20.0.10/etcd-snapshot.db"
expect_eq "and no PATH.part is left" "no" "$([ -e "$SNAP.part" ] && echo yes || echo no)"
expect_eq "its size is a snapshot's: 512 n + 32 bytes (talosctl checks the sha256 trailer)" \
	32 "$(($(wc -c <"$SNAP") % 512))"
talos --nodes 10.20.0.10,10.20.0.11 etcd snapshot "$WORK/etcd/two.db"
expect_eq "it refuses several nodes, as talosctl does" \
	"1 command \"etcd snapshot\" is not supported with multiple nodes no" \
	"$rc $(cat "$WORK/err") $([ -e "$WORK/etcd/two.db" ] && echo yes || echo no)"
talos --nodes 10.20.0.10 etcd snapshot
expect_eq "and a snapshot without a path" "1 accepts 1 arg(s), received 0" "$rc $(cat "$WORK/err")"
rm -f "$SNAP"
printf 'error reading file: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 10.20.0.10:50000: connect: connection refused"\n' \
	>"$D/talosctl/10.20.0.10/etcd-snapshot.err"
echo 1 >"$D/talosctl/10.20.0.10/etcd-snapshot.exit"
talos --nodes 10.20.0.10 --endpoints 10.20.0.10 etcd snapshot "$SNAP"
expect_match "a failed snapshot: the rpc error on stderr, exit 1, nothing on stdout" \
	'^1 0 error reading file: rpc error: code = Unavailable desc = .*connection refused"$' \
	"$rc $(wc -c <"$WORK/out") $(cat "$WORK/err")"
expect_eq "and neither PATH nor PATH.part" "no no" \
	"$([ -e "$SNAP" ] && echo yes || echo no) $([ -e "$SNAP.part" ] && echo yes || echo no)"
rm "$D/talosctl/10.20.0.10/etcd-snapshot.err" "$D/talosctl/10.20.0.10/etcd-snapshot.exit"
echo 30 >"$D/talosctl/10.20.0.10/etcd-snapshot.sleep"
TALOSCONFIG="$WORK/talosconfig" timeout 1 "$T" --nodes 10.20.0.10 etcd snapshot "$SNAP" \
	>"$WORK/out" 2>&1
expect_eq "a slow snapshot killed by the caller's timeout leaves PATH.part and no PATH" \
	"124 yes no" \
	"$? $([ -e "$SNAP.part" ] && echo yes || echo no) $([ -e "$SNAP" ] && echo yes || echo no)"
rm -f "$D/talosctl/10.20.0.10/etcd-snapshot.sleep" "$SNAP.part"

# A recovery reads its file first, then the node bootstraps from it.
talos --nodes 10.20.0.10 --endpoints 10.20.0.10 bootstrap --recover-from="$WORK/etcd/gone.db"
expect_eq "bootstrap --recover-from a file that is not there fails before anything is sent" \
	"1 stat $WORK/etcd/gone.db: no such file or directory no" \
	"$rc $(cat "$WORK/err") $([ -e "$D/recovered/10.20.0.10" ] && echo yes || echo no)"
cp "$D/talosctl/10.20.0.10/etcd-snapshot.db" "$SNAP"
talos --nodes 10.20.0.10 --endpoints 10.20.0.10 bootstrap --recover-from="$SNAP"
expect_eq "bootstrap --recover-from=PATH: talosctl's line naming the file, exit 0" \
	"0 recovering from snapshot \"$SNAP\": hash 8a3c1f07, revision 424, total keys 24, total size 1536" \
	"$rc $(cat "$WORK/out")"
check "the node got that file (recovered/<address>)" cmp "$SNAP" "$D/recovered/10.20.0.10"
rm -r "$D/recovered"
printf 'error executing bootstrap: rpc error: code = AlreadyExists desc = etcd data directory is not empty\n' \
	>"$D/talosctl/10.20.0.10/bootstrap.err"
echo 1 >"$D/talosctl/10.20.0.10/bootstrap.exit"
talos --nodes 10.20.0.10 --endpoints 10.20.0.10 bootstrap --recover-from "$SNAP"
expect_eq "a node whose etcd has data refuses the recovery (--recover-from PATH works too)" \
	"1 error executing bootstrap: rpc error: code = AlreadyExists desc = etcd data directory is not empty no" \
	"$rc $(cat "$WORK/err") $([ -e "$D/recovered/10.20.0.10" ] && echo yes || echo no)"
rm "$D/talosctl/10.20.0.10/bootstrap.err" "$D/talosctl/10.20.0.10/bootstrap.exit"

env -u REZUS_STANDIN_DIR TALOSCONFIG="$WORK/talosconfig" "$T" --nodes 10.20.0.10 version \
	>"$WORK/out" 2>&1
expect_eq "without REZUS_STANDIN_DIR there is nothing to replay" 2 "$?"

# Only tests may run the stand-ins: no product code or build file names them (documents may).
named=$(cd "$top_srcdir" && grep -rl --include='*.[ch]' --include='*.mk' --include='*.sh' \
	--include='*.in' --include='*.js' "stand-ins" core cli plugins sdk web deploy tools 2>/dev/null;
	grep -l "stand-ins" configure.ac Makefile.am 2>/dev/null)
expect_eq "no product code names the stand-ins" "" "$named"

done_testing
